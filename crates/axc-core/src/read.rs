//! The governance read model: what `agentxchain status`, `events`, `history` and the MCP tools
//! report, as JSON values. Every function re-reads the disk; nothing here writes.

use std::path::{Path, PathBuf};

use serde_json::{Map, Value, json};

use crate::config::{self, Config};
use crate::escalations;
use crate::jsonl;
use crate::state::{self, PendingGate, RunState};
use crate::util::shell_quote;

pub const EVENTS_FILE: &str = ".agentxchain/events.jsonl";
pub const RUN_HISTORY_FILE: &str = ".agentxchain/run-history.jsonl";
pub const SESSION_FILE: &str = ".agentxchain/continuous-session.json";
pub const STATE_FILE: &str = ".agentxchain/state.json";

pub use crate::util::MAX_STATE_BYTES;

/// Default number of events returned.
pub const DEFAULT_EVENTS: usize = 50;
/// Default number of run-history entries returned.
pub const DEFAULT_HISTORY: usize = 20;

/// The intake sources the CLI accepts.
pub const INTAKE_SOURCES: [&str; 6] = [
    "manual",
    "ci_failure",
    "git_ref_change",
    "schedule",
    "vision_scan",
    "vision_idle_expansion",
];

/// A governed project found on disk, its config loaded and valid.
#[derive(Debug, Clone)]
pub struct Project {
    pub root: PathBuf,
    pub config: Config,
}

/// Finds the project at or above `start` and loads its config. Warnings for a config that is
/// present but unusable are pushed to `warnings` (each a whole stderr line); the project then
/// counts as absent.
pub fn open(start: &Path, warnings: &mut Vec<String>) -> Option<Project> {
    let root = config::find_root(start)?;
    match config::load(&root) {
        Ok(config) => Some(Project { root, config }),
        Err(e) => {
            warnings.push(format!("  Warning: {e}"));
            None
        }
    }
}

fn fail(error: impl Into<String>) -> Value {
    json!({"ok": false, "error": error.into()})
}

/// `{"ok":false,"error":"No governed project found at <root>"}`.
pub fn no_project(project_root: &Path) -> Value {
    fail(format!(
        "No governed project found at {}",
        project_root.display()
    ))
}

/// The run state, normalized, or `None` (with a warning when a file was set aside).
pub fn load_state(project: &Project, warnings: &mut Vec<String>) -> Option<RunState> {
    match state::load(&project.root, &project.config) {
        Ok(s) => s,
        Err(e) => {
            warnings.push(format!("  Warning: {e}"));
            None
        }
    }
}

/// `.agentxchain/continuous-session.json` when it exists and parses as an object.
pub fn load_session(root: &Path) -> Option<Value> {
    let bytes = fsread::read_inside(root, Path::new(SESSION_FILE), MAX_STATE_BYTES).ok()?;
    serde_json::from_slice::<Value>(&bytes)
        .ok()
        .filter(Value::is_object)
}

fn str_or_null(v: Option<&Value>) -> Value {
    match v {
        Some(Value::String(s)) if !s.is_empty() => Value::String(s.clone()),
        _ => Value::Null,
    }
}

/// The status report: project, run, active turns, pending gates, blocked state, session.
pub fn status(project: &Project, warnings: &mut Vec<String>) -> Value {
    let before = warnings.len();
    let state = load_state(project, warnings);
    // A state file that is there but cannot be used is said in the answer, not only on
    // stderr: a run that is blocked must not read as an idle one.
    let unusable: Vec<Value> = warnings[before..]
        .iter()
        .map(|w| json!(w.trim_start().trim_start_matches("Warning: ")))
        .collect();
    let s = state.unwrap_or_default();
    let text = |v: &Option<String>| match v.as_deref() {
        Some(t) if !t.is_empty() => json!(t),
        _ => Value::Null,
    };
    let mut m = Map::new();
    m.insert("ok".into(), json!(true));
    m.insert("project".into(), project.config.project.clone());
    m.insert("protocol_mode".into(), json!(project.config.mode.as_str()));
    let phase = text(&s.phase);
    m.insert("run_id".into(), text(&s.run_id));
    m.insert("phase".into(), phase.clone());
    m.insert("status".into(), text(&s.status));
    let turns: Vec<Value> = s
        .active_turns
        .iter()
        .map(|(id, turn)| {
            json!({
                "turn_id": turn.turn_id.as_deref().unwrap_or(id),
                "role": text(&turn.assigned_role),
                "status": text(&turn.status),
                "phase": turn.phase.as_ref().map_or_else(|| phase.clone(), |p| json!(p)),
            })
        })
        .collect();
    m.insert("active_turns".into(), Value::Array(turns));
    let gates: Vec<Value> = [&s.pending_phase_transition, &s.pending_run_completion]
        .into_iter()
        .filter_map(|p| Some(json!(p.as_ref()?.gate.as_ref()?)))
        .collect();
    m.insert(
        "pending_gates".into(),
        if gates.is_empty() {
            Value::Null
        } else {
            Value::Array(gates)
        },
    );
    m.insert(
        "blocked".into(),
        if unusable.is_empty() {
            json!(s.status.as_deref() == Some("blocked"))
        } else {
            Value::Null
        },
    );
    m.insert("blocked_on".into(), text(&s.blocked_on));
    // A blocked run names the human escalation that blocks it and the command that resolves
    // it (the reference's status does not; see docs/agentxchain.md).
    if let Ok(records) = escalations::load(&project.root)
        && let Some(current) = escalations::current_blocker(&records, &s)
    {
        m.insert(
            "escalation".into(),
            json!({
                "escalation_id": current.id(),
                "type": str_or_null(current.record.get("type")),
                "resolution_command": format!("agentxchain unblock {}", current.id()),
            }),
        );
    }
    if let Some(session) = load_session(&project.root) {
        let count = |k: &str| {
            session
                .get(k)
                .filter(|v| v.is_number())
                .cloned()
                .unwrap_or(json!(0))
        };
        m.insert(
            "continuous".into(),
            json!({
                "session_id": str_or_null(session.get("session_id")),
                "status": str_or_null(session.get("status")),
                "runs_completed": count("runs_completed"),
                "idle_cycles": count("idle_cycles"),
            }),
        );
    }
    if !unusable.is_empty() {
        m.insert("warnings".into(), Value::Array(unusable));
    }
    Value::Object(m)
}

/// How many entries a `limit` argument asks for: `floor(limit)` when it is a number ≥ 1,
/// else `default`.
pub fn limit_from(limit: Option<&Value>, default: usize) -> usize {
    match limit.and_then(Value::as_f64) {
        Some(f) if f >= 1.0 => f.floor().min(usize::MAX as f64) as usize,
        _ => default,
    }
}

/// The last `n` events, oldest first: `{ok, count, events}`, plus `skipped_lines` when lines
/// were passed over that are not events (not a JSON object, or over 16 MiB).
pub fn events(project_root: &Path, n: usize) -> Value {
    match jsonl::read_last(project_root, EVENTS_FILE, n) {
        Ok(tail) => with_skipped(
            json!({"ok": true, "count": tail.entries.len(), "events": tail.entries}),
            tail.skipped,
            tail.truncated,
        ),
        Err(e) => fail(format!("Cannot read {EVENTS_FILE}: {e}")),
    }
}

/// The newest `n` run summaries, newest first: `{ok, count, entries}` (and `skipped_lines`).
pub fn history(project_root: &Path, n: usize) -> Value {
    match jsonl::read_last(project_root, RUN_HISTORY_FILE, n) {
        Ok(mut tail) => {
            tail.entries.reverse();
            with_skipped(
                json!({"ok": true, "count": tail.entries.len(), "entries": tail.entries}),
                tail.skipped,
                tail.truncated,
            )
        }
        Err(e) => fail(format!("Cannot read {RUN_HISTORY_FILE}: {e}")),
    }
}

/// Adds `skipped_lines` (when not 0) and `truncated: true` (when the read stopped at the
/// last 64 MiB of the log or 32 MiB of entries).
fn with_skipped(mut v: Value, skipped: usize, truncated: bool) -> Value {
    if let Some(o) = v.as_object_mut() {
        if skipped > 0 {
            o.insert("skipped_lines".into(), json!(skipped));
        }
        if truncated {
            o.insert("truncated".into(), json!(true));
        }
    }
    v
}

/// Inspects a gate awaiting a person and names the CLI command that resolves it. Handles
/// `hesc_` escalations of a blocked run and the gates of a run paused for approval. Never writes.
pub fn approve_gate(project: &Project, gate_id: &str, warnings: &mut Vec<String>) -> Value {
    let Some(state) = load_state(project, warnings) else {
        return fail("No governed state found.");
    };
    let id = gate_id.trim();
    if id.is_empty() {
        return fail("gate_id is required.");
    }
    let status_text = match state.raw.get("status") {
        Some(Value::String(s)) => s.clone(),
        Some(other) => other.to_string(),
        None => "undefined".to_owned(),
    };
    if id.starts_with("hesc_") {
        if status_text != "blocked" {
            return fail(format!(
                "Run is not blocked (status: \"{status_text}\"). Nothing to approve."
            ));
        }
        let records = match escalations::load(&project.root) {
            Ok(r) => r,
            Err(e) => {
                return fail(format!(
                    "Cannot read {}: {e}",
                    escalations::ESCALATIONS_FILE
                ));
            }
        };
        let Some(record) = records.iter().find(|r| r.open && r.id() == id) else {
            return fail(format!("No open escalation found for {id}."));
        };
        if escalations::current_blocker(&records, &state).map(escalations::Escalation::id)
            != Some(id)
        {
            return fail(format!("{id} is not the current blocker for this run."));
        }
        return json!({
            "ok": true,
            "gate_id": id,
            "type": str_or_null(record.record.get("type")),
            "detail": str_or_null(record.record.get("detail")),
            "instruction": format!("Gate {id} is the current blocker. Run \"agentxchain unblock {id}\" to approve and resume."),
        });
    }
    if status_text != "paused" && status_text != "blocked" {
        return fail(format!(
            "Run is not awaiting approval (status: \"{status_text}\"). Nothing to approve."
        ));
    }
    let pending_gate = |p: &Option<PendingGate>| {
        p.as_ref()
            .filter(|p| p.gate.as_deref() == Some(id))
            .cloned()
    };
    if let Some(t) = pending_gate(&state.pending_phase_transition) {
        let from = t.from.as_deref().unwrap_or("?");
        let to = t.to.as_deref().unwrap_or("?");
        return json!({
            "ok": true,
            "gate_id": id,
            "type": "phase_transition",
            "detail": format!("{from} → {to}"),
            "instruction": format!("Gate {id} is awaiting human approval. Run \"agentxchain approve-transition\" to approve the transition from {from} to {to}."),
        });
    }
    if pending_gate(&state.pending_run_completion).is_some() {
        return json!({
            "ok": true,
            "gate_id": id,
            "type": "run_completion",
            "detail": null,
            "instruction": format!("Gate {id} is awaiting human approval. Run \"agentxchain approve-completion\" to approve completing the run."),
        });
    }
    fail(format!("No pending approval gate {id} for this run."))
}

/// Builds the `agentxchain intake record` command that records an event with this title,
/// description and priority; nothing is written.
pub fn intake_instruction(
    source: &str,
    title: &str,
    description: Option<&str>,
    priority: Option<&str>,
) -> Value {
    let source = source.trim();
    let title = title.trim();
    if source.is_empty() || title.is_empty() {
        return fail("Both source and title are required.");
    }
    if !INTAKE_SOURCES.contains(&source) {
        return fail(format!(
            "source must be one of: {}",
            INTAKE_SOURCES.join(", ")
        ));
    }
    let description = description.map(str::trim).filter(|d| !d.is_empty());
    let priority = priority.map(str::trim).filter(|p| !p.is_empty());
    let mut signal = Map::new();
    signal.insert("title".into(), json!(title));
    if let Some(d) = description {
        signal.insert("description".into(), json!(d));
    }
    if let Some(p) = priority {
        signal.insert("priority".into(), json!(p));
    }
    let evidence = json!({"type": "text", "value": description.unwrap_or(title)});
    let signal = compact(&Value::Object(signal));
    let evidence = compact(&evidence);
    let command = format!(
        "agentxchain intake record --source {} --signal {} --evidence {}",
        shell_quote(source),
        shell_quote(&signal),
        shell_quote(&evidence)
    );
    json!({
        "ok": true,
        "instruction": format!("Use \"{command}\" to record this event."),
        "command": command,
        "source": source,
        "title": title,
        "description": description,
        "priority": priority,
    })
}

fn compact(v: &Value) -> String {
    // serde_json's compact form equals JSON.stringify for strings and objects of strings.
    serde_json::to_string(v).expect("a JSON value serializes")
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A copy of the reference's paused-for-approval project, its state's status set to
    /// `status`.
    fn paused_project(status: &str) -> (tempfile::TempDir, Project) {
        let from = Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../../../shared/fixtures/agentxchain/scratch-paused-approval/project");
        let d = tempfile::tempdir().unwrap();
        for rel in ["agentxchain.json", ".agentxchain/state.json"] {
            let to = d.path().join(rel);
            std::fs::create_dir_all(to.parent().unwrap()).unwrap();
            std::fs::copy(from.join(rel), &to).unwrap();
        }
        let state = d.path().join(".agentxchain/state.json");
        let mut s: Value = serde_json::from_slice(&std::fs::read(&state).unwrap()).unwrap();
        s["status"] = json!(status);
        std::fs::write(&state, s.to_string()).unwrap();
        let mut warnings = Vec::new();
        let p = open(d.path(), &mut warnings).unwrap();
        (d, p)
    }

    #[test]
    fn only_a_paused_or_blocked_run_has_a_gate_to_approve() {
        let mut w = Vec::new();
        for status in ["paused", "blocked"] {
            let (_d, p) = paused_project(status);
            let r = approve_gate(&p, "planning_signoff", &mut w);
            assert_eq!(r["ok"], true, "{status}: {r}");
            assert_eq!(r["type"], "phase_transition");
            assert_eq!(r["detail"], "planning → implementation");
            let r = approve_gate(&p, "qa_ship_verdict", &mut w);
            assert_eq!(
                r["error"],
                "No pending approval gate qa_ship_verdict for this run."
            );
        }
        let (_d, p) = paused_project("active");
        assert_eq!(
            approve_gate(&p, "planning_signoff", &mut w)["error"],
            "Run is not awaiting approval (status: \"active\"). Nothing to approve."
        );
        assert_eq!(
            approve_gate(&p, "hesc_1", &mut w)["error"],
            "Run is not blocked (status: \"active\"). Nothing to approve."
        );
    }

    #[test]
    fn an_answer_says_skipped_lines_and_truncation_only_when_there_were_some() {
        assert_eq!(
            with_skipped(json!({"ok": true}), 0, false),
            json!({"ok": true})
        );
        assert_eq!(
            with_skipped(json!({"ok": true}), 1, true),
            json!({"ok": true, "skipped_lines": 1, "truncated": true})
        );
    }

    #[test]
    fn an_empty_or_non_text_field_reads_as_null() {
        assert_eq!(str_or_null(Some(&json!(""))), Value::Null);
        assert_eq!(str_or_null(Some(&json!(7))), Value::Null);
        assert_eq!(str_or_null(None), Value::Null);
        assert_eq!(str_or_null(Some(&json!("x"))), json!("x"));
    }

    #[test]
    fn an_intake_instruction_needs_both_a_source_and_a_title() {
        for (source, title) in [("", "t"), ("manual", " "), ("", "")] {
            assert_eq!(
                intake_instruction(source, title, None, None)["error"],
                "Both source and title are required.",
                "{source:?} {title:?}"
            );
        }
        assert_eq!(intake_instruction("manual", "t", None, None)["ok"], true);
    }
}
