//! Intake: recording an external signal as an intake event plus a detected intent, with the
//! reference's validation texts and dedupe on source + signal. Files are written atomically.

use std::path::{Path, PathBuf};
use std::time::SystemTime;

use serde_json::{Map, Value, json};
use sha2::{Digest, Sha256};
use thiserror::Error;

use crate::read::INTAKE_SOURCES;
use crate::util::{epoch_millis, iso_timestamp, random_hex, write_atomic};

const EVIDENCE_TYPES: [&str; 3] = ["url", "file", "text"];

/// Why an intake event was not recorded.
#[derive(Debug, Error)]
pub enum IntakeError {
    /// The payload failed validation; the message joins every problem with `; `.
    #[error("{}", .0.join("; "))]
    Invalid(Vec<String>),
    #[error("cannot write {path}: {source}")]
    Write {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("cannot read {path}: {source}")]
    Read {
        path: PathBuf,
        source: std::io::Error,
    },
}

/// What `record` did.
#[derive(Debug, Clone, PartialEq)]
pub struct Recorded {
    pub event: Value,
    pub intent: Option<Value>,
    /// True when an event with the same source and signal already existed; nothing was written.
    pub deduplicated: bool,
}

impl Recorded {
    /// `{ok:true, event, intent, deduplicated}`, as `intake record --json` prints it.
    pub fn to_json(&self) -> Value {
        json!({"ok": true, "event": self.event, "intent": self.intent, "deduplicated": self.deduplicated})
    }
}

/// The reference's payload checks: source, a non-empty signal object, non-empty evidence of the
/// known types.
pub fn validate(payload: &Value) -> Vec<String> {
    let Some(p) = payload.as_object() else {
        return vec!["payload must be a JSON object".to_owned()];
    };
    let mut errors = Vec::new();
    if !p
        .get("source")
        .and_then(Value::as_str)
        .is_some_and(|s| INTAKE_SOURCES.contains(&s))
    {
        errors.push(format!(
            "source must be one of: {}",
            INTAKE_SOURCES.join(", ")
        ));
    }
    if p.get("signal")
        .and_then(Value::as_object)
        .is_none_or(|s| s.is_empty())
    {
        errors.push("signal must be a non-empty object".to_owned());
    }
    match p
        .get("evidence")
        .and_then(Value::as_array)
        .filter(|e| !e.is_empty())
    {
        None => errors.push("evidence must be a non-empty array".to_owned()),
        Some(items) => {
            for e in items {
                if !e.is_object() {
                    errors.push("each evidence entry must be an object".to_owned());
                    continue;
                }
                let ty = e.get("type");
                if !ty
                    .and_then(Value::as_str)
                    .is_some_and(|t| EVIDENCE_TYPES.contains(&t))
                {
                    let got = match ty {
                        None => "undefined".to_owned(),
                        Some(Value::String(s)) => s.clone(),
                        Some(v) => v.to_string(),
                    };
                    errors.push(format!(
                        "evidence type must be one of: url, file, text (got \"{got}\")"
                    ));
                }
                if e.get("value")
                    .and_then(Value::as_str)
                    .is_none_or(|v| v.trim().is_empty())
                {
                    errors.push("evidence value must be a non-empty string".to_owned());
                }
            }
        }
    }
    errors
}

/// `<source>:<first 16 hex of sha256(JSON.stringify(signal, sortedTopLevelKeys))>`.
///
/// JavaScript's replacer array both orders and filters keys, at every depth, to the signal's
/// sorted top-level keys; this reproduces it so dedupe keys match the reference's.
pub fn dedup_key(source: &str, signal: &Value) -> String {
    let mut keys: Vec<&str> = signal
        .as_object()
        .map(|m| m.keys().map(String::as_str).collect())
        .unwrap_or_default();
    keys.sort_unstable_by(|a, b| a.encode_utf16().cmp(b.encode_utf16()));
    keys.dedup();
    let mut text = String::new();
    write_filtered(&mut text, signal, &keys);
    let digest = Sha256::digest(text.as_bytes());
    let hex: String = digest.iter().take(8).map(|b| format!("{b:02x}")).collect();
    format!("{source}:{hex}")
}

fn write_filtered(out: &mut String, v: &Value, keys: &[&str]) {
    match v {
        Value::Object(m) => {
            out.push('{');
            let mut first = true;
            for k in keys {
                if let Some(child) = m.get(*k) {
                    if !first {
                        out.push(',');
                    }
                    first = false;
                    canon::write_string(out, k);
                    out.push(':');
                    write_filtered(out, child, keys);
                }
            }
            out.push('}');
        }
        Value::Array(items) => {
            out.push('[');
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                write_filtered(out, item, keys);
            }
            out.push(']');
        }
        scalar => canon::write_compact(out, scalar, canon::Integers::Js),
    }
}

fn dirs(root: &Path) -> (PathBuf, PathBuf) {
    let base = root.join(".agentxchain").join("intake");
    (base.join("events"), base.join("intents"))
}

/// The intake folders, and every folder above them up to the root, must really be inside
/// the project: a `.agentxchain/intake/intents` linked elsewhere is neither read nor written.
fn confined(root: &Path, dirs: &[&Path]) -> Result<(), IntakeError> {
    let outside = |path: &Path| IntakeError::Read {
        path: path.to_path_buf(),
        source: std::io::Error::other("leads outside the project"),
    };
    let real_root = root.canonicalize().map_err(|source| IntakeError::Read {
        path: root.to_path_buf(),
        source,
    })?;
    for dir in dirs {
        for d in dir
            .ancestors()
            .take_while(|d| d.starts_with(root) && *d != root)
        {
            if let Ok(real) = d.canonicalize()
                && !real.starts_with(&real_root)
            {
                return Err(outside(d));
            }
        }
    }
    Ok(())
}

fn read_json_dir(dir: &Path) -> Result<Vec<Value>, IntakeError> {
    let entries = match std::fs::read_dir(dir) {
        Ok(e) => e,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Vec::new()),
        Err(source) => {
            return Err(IntakeError::Read {
                path: dir.to_path_buf(),
                source,
            });
        }
    };
    let mut out = Vec::new();
    for entry in entries.flatten() {
        let name = entry.file_name();
        let name = name.to_string_lossy();
        if !name.ends_with(".json") || name.starts_with(".tmp-") {
            continue;
        }
        // Regular files only (not links: the folder itself was checked to be inside the
        // project, a link in it could lead anywhere), never waited on.
        if !entry.file_type().is_ok_and(|t| t.is_file()) {
            continue;
        }
        if let Ok(Ok(v)) = fsread::read_regular(&entry.path(), crate::util::MAX_STATE_BYTES)
            .map(|b| serde_json::from_slice::<Value>(&b))
        {
            out.push(v);
        }
    }
    Ok(out)
}

fn pretty_file(v: &Value) -> Vec<u8> {
    let mut s = canon::to_pretty(v);
    s.push('\n');
    s.into_bytes()
}

/// Records `payload` (`{source, signal, evidence, category?, repo?, ref?}`) under `root`:
/// an event file and a detected intent, or the existing pair when source + signal were seen.
pub fn record(root: &Path, payload: &Value, now: SystemTime) -> Result<Recorded, IntakeError> {
    let errors = validate(payload);
    if !errors.is_empty() {
        return Err(IntakeError::Invalid(errors));
    }
    let source = payload["source"].as_str().unwrap_or_default();
    let signal = &payload["signal"];
    let key = dedup_key(source, signal);
    let (events_dir, intents_dir) = dirs(root);
    confined(root, &[&events_dir, &intents_dir])?;
    if let Some(dup) = read_json_dir(&events_dir)?
        .into_iter()
        .find(|e| e.get("dedup_key").and_then(Value::as_str) == Some(&key))
    {
        let event_id = dup.get("event_id").cloned();
        // An event without an id pairs with no intent (not with every intent without one).
        let intent = event_id.as_ref().and_then(|id| {
            read_json_dir(&intents_dir)
                .ok()?
                .into_iter()
                .find(|i| i.get("event_id") == Some(id))
        });
        return Ok(Recorded {
            event: dup,
            intent,
            deduplicated: true,
        });
    }
    let at = iso_timestamp(now);
    let ms = epoch_millis(now);
    let event_id = format!("evt_{ms}_{}", random_hex(4));
    let opt = |k: &str| {
        payload
            .get(k)
            .filter(|v| v.as_str().is_some_and(|s| !s.is_empty()))
            .cloned()
            .unwrap_or(Value::Null)
    };
    let category = payload
        .get("category")
        .and_then(Value::as_str)
        .filter(|c| !c.is_empty())
        .map_or_else(|| format!("{source}_signal"), str::to_owned);
    let mut event = Map::new();
    event.insert("schema_version".into(), json!("1.0"));
    event.insert("event_id".into(), json!(event_id));
    event.insert("source".into(), json!(source));
    event.insert("category".into(), json!(category));
    event.insert("created_at".into(), json!(at));
    event.insert("repo".into(), opt("repo"));
    event.insert("ref".into(), opt("ref"));
    event.insert("signal".into(), signal.clone());
    event.insert("evidence".into(), payload["evidence"].clone());
    event.insert("dedup_key".into(), json!(key));
    let event = Value::Object(event);
    let intent_id = format!("intent_{ms}_{}", random_hex(4));
    let intent = json!({
        "schema_version": "1.0",
        "intent_id": intent_id,
        "event_id": event_id,
        "status": "detected",
        "priority": null,
        "template": null,
        "charter": null,
        "acceptance_contract": [],
        "phase_scope": null,
        "requires_human_start": true,
        "target_run": null,
        "created_at": at,
        "updated_at": at,
        "history": [{"from": null, "to": "detected", "at": at, "reason": "event ingested"}],
    });
    let event_path = events_dir.join(format!("{event_id}.json"));
    write_atomic(&event_path, &pretty_file(&event)).map_err(|source| IntakeError::Write {
        path: event_path,
        source,
    })?;
    let intent_path = intents_dir.join(format!("{intent_id}.json"));
    write_atomic(&intent_path, &pretty_file(&intent)).map_err(|source| IntakeError::Write {
        path: intent_path,
        source,
    })?;
    Ok(Recorded {
        event,
        intent: Some(intent),
        deduplicated: false,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn payload() -> Value {
        json!({"source": "manual", "signal": {"title": "Login page returns 500"}, "evidence": [{"type": "text", "value": "Users see 500"}]})
    }

    #[test]
    fn intake_folders_linked_out_of_the_project_are_neither_read_nor_written() {
        let root = tempfile::tempdir().unwrap();
        let outside = tempfile::tempdir().unwrap();
        std::fs::write(outside.path().join("secret.json"), r#"{"secret": "TOP"}"#).unwrap();
        let (events, intents) = dirs(root.path());
        std::fs::create_dir_all(&events).unwrap();
        std::os::unix::fs::symlink(outside.path(), &intents).unwrap();
        let now = SystemTime::UNIX_EPOCH + std::time::Duration::from_secs(1_800_000_000);
        let e = record(root.path(), &payload(), now).unwrap_err();
        assert!(e.to_string().contains("leads outside the project"), "{e}");
        assert_eq!(
            std::fs::read_dir(outside.path()).unwrap().count(),
            1,
            "nothing written there"
        );
        // An event file that is a link out is not read; an event without an id pairs with no
        // intent.
        std::fs::remove_file(&intents).unwrap();
        std::fs::create_dir_all(&intents).unwrap();
        std::os::unix::fs::symlink(outside.path().join("secret.json"), events.join("x.json"))
            .unwrap();
        let key = dedup_key("manual", &payload()["signal"]);
        std::fs::write(events.join("e.json"), format!(r#"{{"dedup_key":"{key}"}}"#)).unwrap();
        std::fs::write(intents.join("i.json"), r#"{"intent_id":"i"}"#).unwrap();
        let r = record(root.path(), &payload(), now).unwrap();
        assert!(r.deduplicated);
        assert_eq!(r.intent, None);
    }

    #[test]
    fn validation_texts() {
        assert_eq!(validate(&json!([])), ["payload must be a JSON object"]);
        let errors = validate(
            &json!({"source": "email", "signal": {}, "evidence": [{"type": "video", "value": " "}, 3]}),
        );
        assert_eq!(
            errors,
            [
                "source must be one of: manual, ci_failure, git_ref_change, schedule, vision_scan, vision_idle_expansion",
                "signal must be a non-empty object",
                "evidence type must be one of: url, file, text (got \"video\")",
                "evidence value must be a non-empty string",
                "each evidence entry must be an object",
            ]
        );
        assert_eq!(
            validate(&json!({"source": "manual", "signal": {"a": 1}})),
            ["evidence must be a non-empty array"]
        );
    }

    #[test]
    fn dedup_key_matches_javascript_replacer_semantics() {
        // JSON.stringify({b:1,a:{a:2,z:3}}, ["a","b"]) === '{"a":{"a":2},"b":1}'
        let k = dedup_key("manual", &json!({"b": 1, "a": {"a": 2, "z": 3}}));
        let expected = Sha256::digest(br#"{"a":{"a":2},"b":1}"#);
        let hex: String = expected
            .iter()
            .take(8)
            .map(|b| format!("{b:02x}"))
            .collect();
        assert_eq!(k, format!("manual:{hex}"));
        assert_eq!(
            dedup_key("manual", &json!({"x": 1, "y": 2})),
            dedup_key("manual", &json!({"y": 2, "x": 1}))
        );
    }

    #[test]
    fn record_writes_event_and_intent_then_dedupes() {
        let dir = tempfile::tempdir().unwrap();
        let now = SystemTime::now();
        let first = record(dir.path(), &payload(), now).unwrap();
        assert!(!first.deduplicated);
        let event_id = first.event["event_id"].as_str().unwrap().to_owned();
        assert!(event_id.starts_with("evt_") && event_id.len() == "evt_".len() + 13 + 5);
        assert_eq!(first.event["category"], "manual_signal");
        let intent = first.intent.clone().unwrap();
        assert_eq!(intent["status"], "detected");
        assert_eq!(intent["event_id"], json!(event_id));
        let (events, intents) = dirs(dir.path());
        assert_eq!(std::fs::read_dir(&events).unwrap().count(), 1);
        assert_eq!(std::fs::read_dir(&intents).unwrap().count(), 1);

        let again = record(dir.path(), &payload(), now).unwrap();
        assert!(again.deduplicated);
        assert_eq!(again.event["event_id"], json!(event_id));
        assert_eq!(again.intent.unwrap()["intent_id"], intent["intent_id"]);
        assert_eq!(std::fs::read_dir(&events).unwrap().count(), 1);
    }

    #[test]
    fn invalid_payloads_write_nothing() {
        let dir = tempfile::tempdir().unwrap();
        let err = record(dir.path(), &json!({"source": "manual"}), SystemTime::now()).unwrap_err();
        assert_eq!(
            err.to_string(),
            "signal must be a non-empty object; evidence must be a non-empty array"
        );
        assert!(!dir.path().join(".agentxchain").exists());
    }
}
