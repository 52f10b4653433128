//! Human escalations (`.agentxchain/human-escalations.jsonl`): an event-sourced log folded into
//! records, and the rule that picks the current blocker.

use std::path::Path;

use serde_json::{Map, Value};

use crate::jsonl;
use crate::state::{RunState, RunStatus};

pub const ESCALATIONS_FILE: &str = ".agentxchain/human-escalations.jsonl";

/// One escalation after folding its `raised` and `resolved` lines.
#[derive(Debug, Clone, PartialEq)]
pub struct Escalation {
    /// The `raised` line's fields.
    pub record: Map<String, Value>,
    pub open: bool,
    /// The `resolved` line that closed it (`resolved_at`, `resolved_via`, `resolution_notes`).
    pub resolution: Option<Map<String, Value>>,
}

impl Escalation {
    pub fn id(&self) -> &str {
        self.field("escalation_id").unwrap_or_default()
    }

    pub fn field(&self, key: &str) -> Option<&str> {
        self.record.get(key).and_then(Value::as_str)
    }
}

/// Folds the log: one record per raised id, resolved when a later `resolved` line names it
/// (a resolve without a raise is ignored), sorted by `created_at`, newest first.
pub fn fold(lines: &[Value]) -> Vec<Escalation> {
    let mut records: Vec<Escalation> = Vec::new();
    for line in lines {
        let Some(obj) = line.as_object() else {
            continue;
        };
        // An id that is not a plain one names no escalation (it would reach a printed
        // `agentxchain unblock <id>`).
        let Some(id) = obj
            .get("escalation_id")
            .and_then(Value::as_str)
            .filter(|id| crate::util::is_plain_id(id))
        else {
            continue;
        };
        match obj.get("kind").and_then(Value::as_str) {
            Some("raised") => {
                if let Some(existing) = records.iter_mut().find(|r| r.id() == id) {
                    existing.record = obj.clone();
                    existing.open = true;
                    existing.resolution = None;
                } else {
                    records.push(Escalation {
                        record: obj.clone(),
                        open: true,
                        resolution: None,
                    });
                }
            }
            Some("resolved") => {
                if let Some(existing) = records.iter_mut().find(|r| r.id() == id) {
                    existing.open = false;
                    existing.resolution = Some(obj.clone());
                }
            }
            _ => {}
        }
    }
    // Stable sort, newest first; ISO timestamps order as strings.
    records.sort_by(|a, b| b.field("created_at").cmp(&a.field("created_at")));
    records
}

/// Reads and folds the project's escalation log.
pub fn load(root: &Path) -> Result<Vec<Escalation>, fsread::ReadError> {
    Ok(fold(&jsonl::read_all(root, ESCALATIONS_FILE)?.entries))
}

/// The current blocker: the first open record (newest first) whose `run_id`, `blocked_on` and
/// `turn_id` equal the state's `run_id`, `blocked_on` and `blocked_reason.turn_id` (missing
/// values compare as null), and only while the run is `blocked`.
pub fn current_blocker<'a>(records: &'a [Escalation], state: &RunState) -> Option<&'a Escalation> {
    if state.run_status() != Some(RunStatus::Blocked) {
        return None;
    }
    // Values as written: a field of the wrong type matches only the same value, never an
    // escalation that lacks the field.
    let s = |v: Option<&Value>| v.cloned().unwrap_or(Value::Null);
    let run_id = state.raw("run_id");
    let blocked_on = state.raw("blocked_on");
    let turn_id = s(state
        .raw
        .get("blocked_reason")
        .and_then(|r| r.get("turn_id")));
    records.iter().find(|r| {
        r.open
            && s(r.record.get("run_id")) == run_id
            && s(r.record.get("blocked_on")) == blocked_on
            && s(r.record.get("turn_id")) == turn_id
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn raised(id: &str, at: &str, run: &str) -> Value {
        json!({"kind": "raised", "escalation_id": id, "created_at": at, "run_id": run, "blocked_on": "escalation:x", "turn_id": "t1", "type": "needs_decision"})
    }

    #[test]
    fn fold_and_current_blocker() {
        let lines = vec![
            raised("hesc_c", "2026-01-01T00:00:00.000Z", "run_old"),
            raised("hesc_a", "2026-01-02T00:00:00.000Z", "run_1"),
            json!({"kind": "resolved", "escalation_id": "hesc_a"}),
            json!({"kind": "resolved", "escalation_id": "hesc_ghost"}),
            raised("hesc_b", "2026-01-03T00:00:00.000Z", "run_1"),
            json!("garbage"),
        ];
        let records = fold(&lines);
        let ids: Vec<&str> = records.iter().map(Escalation::id).collect();
        assert_eq!(ids, ["hesc_b", "hesc_a", "hesc_c"]);
        assert!(!records[1].open);
        let state = RunState::from_value(
            json!({"status": "blocked", "run_id": "run_1", "blocked_on": "escalation:x", "blocked_reason": {"turn_id": "t1"}}),
        );
        assert_eq!(
            current_blocker(&records, &state).map(Escalation::id),
            Some("hesc_b")
        );
        let paused = RunState::from_value(
            json!({"status": "paused", "run_id": "run_1", "blocked_on": "escalation:x"}),
        );
        assert!(current_blocker(&records, &paused).is_none());
        // A turn id of the wrong type is not an absent one.
        let mut typed_wrong = records.clone();
        typed_wrong.push(Escalation {
            record: json!({"kind": "raised", "escalation_id": "hesc_z", "created_at": "2026-01-04T00:00:00.000Z", "run_id": "run_1", "blocked_on": "escalation:x"}).as_object().unwrap().clone(),
            open: true,
            resolution: None,
        });
        typed_wrong[0].record.insert("turn_id".into(), json!(7));
        let seven = RunState::from_value(
            json!({"status": "blocked", "run_id": "run_1", "blocked_on": "escalation:x", "blocked_reason": {"turn_id": 7}}),
        );
        assert_eq!(
            current_blocker(&typed_wrong, &seven).map(Escalation::id),
            Some("hesc_b")
        );
        let other_turn = RunState::from_value(
            json!({"status": "blocked", "run_id": "run_1", "blocked_on": "escalation:x", "blocked_reason": {"turn_id": "t2"}}),
        );
        assert!(current_blocker(&records, &other_turn).is_none());
    }
}
