//! The run state (`.agentxchain/state.json`): read, normalized in memory, never written back,
//! and handed to readers as a typed [`RunState`].

use std::path::Path;

use serde::de::DeserializeOwned;
use serde::{Deserialize, Deserializer, Serialize};
use serde_json::{Map, Value, json};
use thiserror::Error;

use crate::config::{Config, ProtocolMode};

const STATUSES: [&str; 6] = ["idle", "active", "paused", "blocked", "completed", "failed"];

/// What a run's `status` says (`failed` is tolerated on read, never written).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum RunStatus {
    Idle,
    Active,
    Paused,
    Blocked,
    Completed,
    Failed,
}

/// A run state as readers see it, after the in-memory normalizations and (governed) the
/// validation: the fields they read, typed, and everything else as written in `rest`.
///
/// A field of the wrong type reads as absent rather than failing the whole state: the
/// validation already refused what readers cannot do without, and a legacy project's state
/// is not validated at all.
#[derive(Clone, Debug, Default, PartialEq, Deserialize)]
pub struct RunState {
    /// As written: a governed state's is one of [`RunStatus`]; see [`RunState::run_status`].
    #[serde(default, deserialize_with = "lenient")]
    pub status: Option<String>,
    #[serde(default, deserialize_with = "lenient")]
    pub run_id: Option<String>,
    #[serde(default, deserialize_with = "lenient")]
    pub phase: Option<String>,
    /// Prefix-coded: `human:…`, `escalation:…`, `dispatch:…`, `policy:…`, `human_approval:<gate>`.
    #[serde(default, deserialize_with = "lenient")]
    pub blocked_on: Option<String>,
    #[serde(default, deserialize_with = "lenient")]
    pub blocked_reason: Option<BlockedReason>,
    /// Turn id → turn, in the file's order.
    #[serde(default, deserialize_with = "turns")]
    pub active_turns: Vec<(String, Turn)>,
    #[serde(default, deserialize_with = "lenient")]
    pub pending_phase_transition: Option<PendingGate>,
    #[serde(default, deserialize_with = "lenient")]
    pub pending_run_completion: Option<PendingGate>,
    #[serde(flatten)]
    pub rest: Map<String, Value>,
    /// The whole state as normalized, for the rules that compare values as written (a field
    /// of the wrong type must not read as one that is absent there).
    #[serde(skip)]
    pub raw: Map<String, Value>,
}

/// One of `active_turns`.
#[derive(Clone, Debug, Default, PartialEq, Deserialize)]
pub struct Turn {
    #[serde(default, deserialize_with = "lenient")]
    pub turn_id: Option<String>,
    #[serde(default, deserialize_with = "lenient")]
    pub assigned_role: Option<String>,
    #[serde(default, deserialize_with = "lenient")]
    pub status: Option<String>,
    /// Older writers put a phase on a turn; the run's phase applies otherwise.
    #[serde(default, deserialize_with = "lenient")]
    pub phase: Option<String>,
    #[serde(flatten)]
    pub rest: Map<String, Value>,
}

/// `blocked_reason`: `{category, recovery, turn_id, blocked_at}`.
#[derive(Clone, Debug, Default, PartialEq, Deserialize)]
pub struct BlockedReason {
    #[serde(default, deserialize_with = "lenient")]
    pub category: Option<String>,
    #[serde(default, deserialize_with = "lenient")]
    pub turn_id: Option<String>,
    #[serde(flatten)]
    pub rest: Map<String, Value>,
}

/// `pending_phase_transition` (`{from, to, gate, requested_by_turn}`) or
/// `pending_run_completion` (`{gate, requested_by_turn}`).
#[derive(Clone, Debug, Default, PartialEq, Deserialize)]
pub struct PendingGate {
    #[serde(default, deserialize_with = "lenient")]
    pub gate: Option<String>,
    #[serde(default, deserialize_with = "lenient")]
    pub from: Option<String>,
    #[serde(default, deserialize_with = "lenient")]
    pub to: Option<String>,
    #[serde(default, deserialize_with = "lenient")]
    pub requested_by_turn: Option<String>,
    #[serde(flatten)]
    pub rest: Map<String, Value>,
}

impl RunState {
    /// The typed view of a normalized state; a state that is not an object has no fields.
    pub fn from_value(state: Value) -> RunState {
        match state {
            Value::Object(raw) => {
                let mut typed: RunState =
                    serde_json::from_value(Value::Object(raw.clone())).unwrap_or_default();
                typed.raw = raw;
                typed
            }
            _ => RunState::default(),
        }
    }

    /// A field as written (`null` when absent).
    pub fn raw(&self, key: &str) -> Value {
        self.raw.get(key).cloned().unwrap_or(Value::Null)
    }

    /// The status, when it is one a governed run can have.
    pub fn run_status(&self) -> Option<RunStatus> {
        self.status
            .as_deref()
            .and_then(|s| serde_json::from_value(Value::String(s.to_owned())).ok())
    }
}

/// A value of type `T`, or `None` when the field holds something else (null included).
fn lenient<'de, D: Deserializer<'de>, T: DeserializeOwned>(d: D) -> Result<Option<T>, D::Error> {
    Ok(T::deserialize(Value::deserialize(d)?).ok())
}

/// `active_turns` in the file's order; a turn that is not an object has no fields, and a
/// value that is not a map has no turns.
fn turns<'de, D: Deserializer<'de>>(d: D) -> Result<Vec<(String, Turn)>, D::Error> {
    let Value::Object(map) = Value::deserialize(d)? else {
        return Ok(Vec::new());
    };
    Ok(map
        .into_iter()
        .map(|(id, turn)| {
            let turn = match turn {
                Value::Object(_) => serde_json::from_value(turn).unwrap_or_default(),
                _ => Turn::default(),
            };
            (id, turn)
        })
        .collect())
}

/// Why a state file was set aside. `Display` is the warning text after `  Warning: `.
#[derive(Debug, Error, Clone, PartialEq, Eq)]
pub enum StateError {
    #[error("{file} is invalid JSON: {message}")]
    InvalidJson { file: String, message: String },
    #[error("{file} has issues: {}", .errors.join(", "))]
    Issues { file: String, errors: Vec<String> },
    #[error("{file} could not be read: {message}")]
    Unreadable { file: String, message: String },
}

/// Reads the state for `config` under `root`. `Ok(None)` when there is no state file.
pub fn load(root: &Path, config: &Config) -> Result<Option<RunState>, StateError> {
    let file = config.state_file.clone();
    // A regular file inside the project, never waited on, at most 16 MiB.
    let bytes = match fsread::read_inside(root, Path::new(&file), crate::util::MAX_STATE_BYTES) {
        Ok(b) => b,
        Err(e) if e.is_missing() => return Ok(None),
        Err(e) => {
            return Err(StateError::Unreadable {
                file,
                message: e.to_string(),
            });
        }
    };
    let raw: Value = serde_json::from_slice(&bytes).map_err(|e| StateError::InvalidJson {
        file: file.clone(),
        message: e.to_string(),
    })?;
    let state = normalize(raw, config);
    if config.mode == ProtocolMode::Governed {
        let errors = validate(&state);
        if !errors.is_empty() {
            return Err(StateError::Issues { file, errors });
        }
    }
    Ok(Some(RunState::from_value(state)))
}

/// The reference's read-time normalizations, in memory only: v1.0 → v1.1 (`current_turn` folded
/// into `active_turns`), a legacy blocked approval wait read as `paused`, an inferred
/// `blocked_reason`, and `budget_status.remaining_usd` reconciled with the config.
pub fn normalize(raw: Value, config: &Config) -> Value {
    let Value::Object(mut s) = raw else {
        return raw;
    };
    if config.mode == ProtocolMode::Legacy {
        return Value::Object(s);
    }
    if !s.contains_key("schema_version") || s.contains_key("current_turn") {
        let current = s.shift_remove("current_turn").unwrap_or(Value::Null);
        if let Some(id) = current
            .get("turn_id")
            .and_then(Value::as_str)
            .map(str::to_owned)
        {
            let mut turns = s
                .get("active_turns")
                .and_then(Value::as_object)
                .cloned()
                .unwrap_or_default();
            turns.entry(id).or_insert(current);
            s.insert("active_turns".into(), Value::Object(turns));
        }
        s.entry("active_turns").or_insert_with(|| json!({}));
        s.entry("schema_version").or_insert_with(|| json!("1.1"));
        s.entry("turn_sequence").or_insert_with(|| json!(0));
        s.entry("budget_reservations").or_insert_with(|| json!({}));
        s.entry("queued_phase_transition").or_insert(Value::Null);
        s.entry("queued_run_completion").or_insert(Value::Null);
        s.entry("last_gate_failure").or_insert(Value::Null);
    }
    let blocked_on = s
        .get("blocked_on")
        .and_then(Value::as_str)
        .map(str::to_owned);
    let status = s.get("status").and_then(Value::as_str).map(str::to_owned);
    if status.as_deref() == Some("blocked")
        && let Some(gate) = blocked_on
            .as_deref()
            .and_then(|b| b.strip_prefix("human_approval:"))
    {
        let pending = s
            .get("pending_phase_transition")
            .is_some_and(|p| p.is_object())
            || s.get("pending_run_completion")
                .is_some_and(|p| p.is_object());
        if pending || !gate.is_empty() {
            s.insert("status".into(), json!("paused"));
            s.insert("blocked_reason".into(), Value::Null);
        }
    } else if status.as_deref() == Some("blocked")
        && s.get("blocked_reason").is_none_or(Value::is_null)
    {
        s.insert(
            "blocked_reason".into(),
            infer_blocked_reason(blocked_on.as_deref()),
        );
    }
    if let Some(Value::Object(budget)) = s.get_mut("budget_status") {
        let spent = budget
            .get("spent_usd")
            .and_then(Value::as_f64)
            .unwrap_or(0.0);
        let remaining = config
            .per_run_max_usd
            .map_or(Value::Null, |max| number(max - spent));
        budget.insert("remaining_usd".into(), remaining);
    }
    Value::Object(s)
}

fn number(f: f64) -> Value {
    serde_json::Number::from_f64(f).map_or(Value::Null, Value::Number)
}

fn infer_blocked_reason(blocked_on: Option<&str>) -> Value {
    let b = blocked_on.unwrap_or_default();
    let (category, owner) = if b.starts_with("human:") || b.starts_with("escalation:") {
        ("operator_escalation", "human")
    } else if b.starts_with("dispatch:") {
        ("dispatch_error", "human")
    } else if b.starts_with("policy:") {
        ("policy_violation", "human")
    } else if b == "non_progress" {
        ("non_progress", "human")
    } else {
        ("unknown_block", "human")
    };
    json!({
        "category": category,
        "recovery": {
            "typed_reason": category,
            "owner": owner,
            "recovery_action": "Resolve the blocker, then run agentxchain resume",
            "turn_retained": false,
            "detail": blocked_on,
        },
        "turn_id": null,
        "blocked_at": null,
    })
}

/// Checks the fields every reader relies on.
pub fn validate(state: &Value) -> Vec<String> {
    let Some(s) = state.as_object() else {
        return vec!["state must be a JSON object".to_owned()];
    };
    let mut errors = Vec::new();
    match s.get("status").and_then(Value::as_str) {
        Some(st) if STATUSES.contains(&st) => {}
        _ => errors.push(format!(
            "status must be one of: {}",
            STATUSES[..5].join(", ")
        )),
    }
    for key in ["run_id", "phase", "blocked_on"] {
        if !s.get(key).is_none_or(|v| v.is_null() || v.is_string()) {
            errors.push(format!("{key} must be a string or null"));
        }
    }
    if !s.get("active_turns").is_some_and(Value::is_object) {
        errors.push("active_turns must be an object keyed by turn id".to_owned());
    }
    for key in ["pending_phase_transition", "pending_run_completion"] {
        if !s.get(key).is_none_or(|v| v.is_null() || v.is_object()) {
            errors.push(format!("{key} must be an object or null"));
        }
    }
    errors
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config;

    fn cfg(budget: Option<f64>) -> Config {
        let mut raw = json!({
            "schema_version": 4,
            "project": {"id": "p", "name": "P"},
            "roles": {"dev": {"title": "Dev", "mandate": "m", "write_authority": "authoritative", "runtime": "m"}},
            "runtimes": {"m": {"type": "manual"}}
        });
        if let Some(b) = budget {
            raw["budget"] = json!({"per_run_max_usd": b});
        }
        config::from_value(raw).unwrap()
    }

    #[test]
    fn v1_0_states_become_v1_1_in_memory() {
        let raw = json!({"project_id": "p", "run_id": "r", "status": "active", "phase": "implementation",
            "current_turn": {"turn_id": "turn_1", "assigned_role": "dev", "status": "running"},
            "budget_status": {"spent_usd": 0, "remaining_usd": 50}});
        let s = normalize(raw, &cfg(None));
        assert_eq!(s["schema_version"], "1.1");
        assert!(s.get("current_turn").is_none());
        assert_eq!(s["active_turns"]["turn_1"]["assigned_role"], "dev");
        assert_eq!(s["budget_status"]["remaining_usd"], Value::Null);
        assert!(validate(&s).is_empty());
        let s = normalize(
            json!({"status": "idle", "current_turn": null, "budget_status": {"spent_usd": 5}}),
            &cfg(Some(50.0)),
        );
        assert_eq!(s["active_turns"], json!({}));
        assert_eq!(s["budget_status"]["remaining_usd"], 45.0);
    }

    #[test]
    fn a_blocked_approval_wait_reads_as_paused() {
        let raw = json!({"schema_version": "1.1", "status": "blocked", "blocked_on": "human_approval:planning_signoff",
            "active_turns": {}, "pending_phase_transition": {"from": "planning", "to": "implementation", "gate": "planning_signoff"}});
        assert_eq!(normalize(raw, &cfg(None))["status"], "paused");
    }

    #[test]
    fn a_missing_blocked_reason_is_inferred() {
        let raw = json!({"schema_version": "1.1", "status": "blocked", "blocked_on": "escalation:operator:x", "active_turns": {}});
        assert_eq!(
            normalize(raw, &cfg(None))["blocked_reason"]["recovery"]["owner"],
            "human"
        );
    }

    #[test]
    fn the_typed_view_keeps_order_and_unknown_fields_and_reads_wrong_types_as_absent() {
        let raw = json!({"schema_version": "1.1", "status": "paused", "run_id": "run_1", "phase": 7,
            "active_turns": {"turn_b": {"assigned_role": "qa", "attempt": 2}, "turn_a": "not a turn"},
            "pending_run_completion": {"gate": "ship", "requested_by_turn": "turn_b"},
            "pending_phase_transition": "nope", "future_field": {"x": 1}});
        let s = RunState::from_value(normalize(raw, &cfg(None)));
        assert_eq!(s.run_status(), Some(RunStatus::Paused));
        assert_eq!(
            (s.run_id.as_deref(), s.phase.as_deref()),
            (Some("run_1"), None)
        );
        let ids: Vec<&str> = s.active_turns.iter().map(|(id, _)| id.as_str()).collect();
        assert_eq!(ids, ["turn_b", "turn_a"]);
        assert_eq!(s.active_turns[0].1.assigned_role.as_deref(), Some("qa"));
        assert_eq!(s.active_turns[0].1.rest["attempt"], 2);
        assert_eq!(s.active_turns[1].1, Turn::default());
        assert_eq!(
            s.pending_run_completion
                .as_ref()
                .and_then(|p| p.gate.as_deref()),
            Some("ship")
        );
        assert_eq!(s.pending_phase_transition, None);
        assert_eq!(s.rest["future_field"], json!({"x": 1}));
        assert_eq!(s.rest["schema_version"], "1.1");
        // Statuses a governed run cannot have are kept as written but are no RunStatus.
        let odd = RunState::from_value(json!({"status": "dancing"}));
        assert_eq!(
            (odd.status.as_deref(), odd.run_status()),
            (Some("dancing"), None)
        );
        assert_eq!(RunState::from_value(json!([1])), RunState::default());
    }

    #[test]
    fn invalid_states_are_reported() {
        let errors = validate(&json!({"status": "dancing", "active_turns": [], "run_id": 5}));
        assert_eq!(
            errors,
            [
                "status must be one of: idle, active, paused, blocked, completed",
                "run_id must be a string or null",
                "active_turns must be an object keyed by turn id",
            ]
        );
    }
}
