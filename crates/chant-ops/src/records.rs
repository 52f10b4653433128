//! Run records on the ledger: `<env>/runs__<op>.jsonl`, and the run status read back from them.

use gitledger::Ledger;
use serde_json::{Map, Value as Json, json};

/// Ledger path of an Op's run records in `env`.
pub fn runs_path(env: &str, op: &str) -> String {
    format!("{env}/runs__{op}.jsonl")
}

/// Why `v` is not a well-formed run record (`version` 1 with string `op`, `env`, `started`,
/// `ended`, `status`, and `phases` an array), or `None` when it is one.
fn invalid(v: &Json) -> Option<String> {
    let Some(o) = v.as_object() else {
        return Some("not a JSON object".into());
    };
    if o.get("version") != Some(&json!(1)) {
        return Some("version is not 1".into());
    }
    if let Some(k) = ["op", "env", "started", "ended", "status"]
        .iter()
        .find(|k| !o.get(**k).is_some_and(Json::is_string))
    {
        return Some(format!("{k} is missing or not a string"));
    }
    if !o.get("phases").is_some_and(Json::is_array) {
        return Some("phases is missing or not an array".into());
    }
    None
}

/// Parses run lines. A line that is not a run record costs that line only: it is skipped and
/// listed as `(line number, reason)`.
pub fn parse_runs(bytes: &[u8]) -> (Vec<Json>, Vec<(usize, String)>) {
    let mut out = Vec::new();
    let mut skipped = Vec::new();
    for line in gitledger::numbered(bytes) {
        let parsed = line
            .text
            .map_err(str::to_owned)
            .and_then(|t| serde_json::from_str::<Json>(t).map_err(|e| format!("not JSON ({e})")));
        match parsed {
            Ok(v) => match invalid(&v) {
                None => out.push(v),
                Some(reason) => skipped.push((line.number, reason)),
            },
            Err(reason) => skipped.push((line.number, reason)),
        }
    }
    (out, skipped)
}

/// An Op's run records across environments, newest first (by `started`), and the lines of
/// its ledger files that were skipped on the way.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct History {
    pub runs: Vec<Json>,
    pub skipped: Vec<Skipped>,
}

/// How many skipped lines a reply lists (`skippedTotal` counts them all): a ledger of bad
/// lines must not flood the reader's screen or a model's context.
pub const SKIPPED_SHOWN: usize = 100;

/// A value from a bad line, as a reason quotes it: JSON-escaped, at most 40 characters.
pub fn shown(v: &str) -> String {
    let mut cut: String = v.chars().take(40).collect();
    if cut.len() < v.len() {
        cut.push('…');
    }
    format!("{cut:?}")
}

/// A ledger line a reader skipped: the file on `chant/lifecycle`, its 1-based line, and why.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Skipped {
    pub file: String,
    pub line: usize,
    pub reason: String,
}

impl Skipped {
    pub fn list(file: &str, lines: Vec<(usize, String)>) -> Vec<Skipped> {
        lines
            .into_iter()
            .map(|(line, reason)| Skipped {
                file: file.to_owned(),
                line,
                reason,
            })
            .collect()
    }

    /// `{file, line, reason}`.
    pub fn to_json(&self) -> Json {
        json!({"file": self.file, "line": self.line, "reason": self.reason})
    }

    /// The `skipped` array of a reply: the first [`SKIPPED_SHOWN`].
    pub fn array(all: &[Skipped]) -> Json {
        Json::Array(
            all.iter()
                .take(SKIPPED_SHOWN)
                .map(Skipped::to_json)
                .collect(),
        )
    }
}

/// Every run record of `op` across environments, newest first (by `started`).
pub fn history(ledger: &Ledger, op: &str) -> History {
    histories(ledger, &[op]).pop().unwrap_or_default()
}

/// The [`history`] of each of `ops`, in order, from one snapshot of the ledger: a fixed
/// number of git processes however many Ops and environments there are.
pub fn histories(ledger: &Ledger, ops: &[&str]) -> Vec<History> {
    let Ok(snapshot) = ledger.snapshot() else {
        return vec![History::default(); ops.len()];
    };
    // `<env>/runs__<op>.jsonl`, env not starting with `_` (`_gates` and the like).
    let mut wanted: Vec<(usize, &str)> = Vec::new();
    for path in snapshot.paths() {
        let Some((env, file)) = path.split_once('/') else {
            continue;
        };
        if env.starts_with('_') || file.contains('/') {
            continue;
        }
        let Some(op) = file
            .strip_prefix("runs__")
            .and_then(|f| f.strip_suffix(".jsonl"))
        else {
            continue;
        };
        if let Some(i) = ops.iter().position(|o| *o == op) {
            wanted.push((i, path));
        }
    }
    let paths: Vec<&str> = wanted.iter().map(|(_, p)| *p).collect();
    let blobs = snapshot.read_many(&paths).unwrap_or_default();
    let mut out = vec![History::default(); ops.len()];
    for ((i, path), bytes) in wanted.iter().zip(blobs) {
        if let Some(bytes) = bytes {
            let (runs, skipped) = parse_runs(&bytes);
            out[*i].runs.extend(runs);
            out[*i].skipped.extend(Skipped::list(path, skipped));
        }
    }
    for h in &mut out {
        h.runs
            .sort_by(|a, b| b["started"].as_str().cmp(&a["started"].as_str()));
    }
    out
}

/// Run state of a record's status: `ok → completed`, `gated`, `waiting`, `cancelled`, else `failed`.
pub fn state_of(status: &str) -> &'static str {
    match status {
        "ok" => "completed",
        "gated" => "gated",
        "waiting" => "waiting",
        "cancelled" => "cancelled",
        _ => "failed",
    }
}

/// The step records of a run record, flattened in phase order.
pub fn step_records(record: &Json) -> Vec<Json> {
    record["phases"]
        .as_array()
        .map(|ps| {
            ps.iter()
                .flat_map(|p| p["steps"].as_array().cloned().unwrap_or_default())
                .collect()
        })
        .unwrap_or_default()
}

/// `{op, runtime, runId, state, startedAt, endedAt, records, gate}` for the newest record.
pub fn status(op: &str, runtime: &str, latest: Option<&Json>, standing_gate: Option<Json>) -> Json {
    let mut m = Map::new();
    m.insert("op".into(), json!(op));
    m.insert("runtime".into(), json!(runtime));
    match latest {
        Some(r) => {
            m.insert("runId".into(), r["id"].clone());
            m.insert(
                "state".into(),
                json!(state_of(r["status"].as_str().unwrap_or_default())),
            );
            m.insert("startedAt".into(), r["started"].clone());
            m.insert("endedAt".into(), r["ended"].clone());
            m.insert("records".into(), Json::Array(step_records(r)));
        }
        None => {
            for k in ["runId", "state", "startedAt", "endedAt"] {
                m.insert(k.into(), Json::Null);
            }
            m.insert("records".into(), json!([]));
        }
    }
    m.insert("gate".into(), standing_gate.unwrap_or(Json::Null));
    Json::Object(m)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_quoted_value_is_short_and_escaped() {
        assert_eq!(shown("zzzz"), "\"zzzz\"");
        let long = "x".repeat(5_000_000);
        assert_eq!(shown(&long), format!("\"{}…\"", "x".repeat(40)));
        assert_eq!(shown("a\nb\u{1b}"), "\"a\\nb\\u{1b}\"");
        let many: Vec<Skipped> = (0..250)
            .map(|i| Skipped {
                file: "f".into(),
                line: i,
                reason: "r".into(),
            })
            .collect();
        assert_eq!(
            Skipped::array(&many).as_array().unwrap().len(),
            SKIPPED_SHOWN
        );
    }

    #[test]
    fn a_bad_run_line_costs_that_line_and_says_why() {
        let good = r#"{"version":1,"id":"local-1","op":"o","env":"local","started":"a","ended":"b","status":"ok","phases":[]}"#;
        let text = format!(
            "{good}\n{{\"version\":1,\"op\":\"o\"}}\ngarbage\n\n{}",
            good.replace("\"ok\"", "\"fail\"")
        );
        let (runs, bad) = parse_runs(text.as_bytes());
        assert_eq!(runs.len(), 2);
        assert_eq!(
            bad,
            [
                (2, "env is missing or not a string".to_owned()),
                (3, "not JSON (expected value at line 1 column 1)".to_owned())
            ]
        );
        let mut bytes = good.as_bytes().to_vec();
        bytes.extend_from_slice(b"\n\xc3(\n");
        bytes.extend_from_slice(good.replace("\"phases\":[]", "\"phases\":1").as_bytes());
        let (runs, bad) = parse_runs(&bytes);
        assert_eq!(runs.len(), 1, "one bad byte cost its line only");
        assert_eq!(
            bad,
            [
                (2, "not UTF-8".to_owned()),
                (3, "phases is missing or not an array".to_owned())
            ]
        );
        assert_eq!(state_of("fail"), "failed");
        assert_eq!(state_of("ok"), "completed");
    }
}
