//! Run events (`.agentxchain/events.jsonl`): the event types, what one event must carry, and
//! the order a run's events must keep.

use std::time::SystemTime;

use serde_json::{Value as Json, json};

/// Every event type a governed run writes, in the reference's order.
pub const EVENT_TYPES: [&str; 42] = [
    "run_started",
    "phase_entered",
    "intents_migrated",
    "intents_superseded",
    "intent_retired_by_phase_advance",
    "turn_dispatched",
    "turn_accepted",
    "turn_rejected",
    "turn_conflicted",
    "conflict_resolved",
    "acceptance_failed",
    "turn_reissued",
    "turn_stalled",
    "turn_start_failed",
    "runtime_spawn_failed",
    "stdout_attach_failed",
    "turn_checkpointed",
    "coordinator_retry",
    "coordinator_retry_projection_warning",
    "run_blocked",
    "run_completed",
    "escalation_raised",
    "escalation_resolved",
    "gate_pending",
    "gate_approved",
    "gate_failed",
    "phase_cleanup",
    "budget_exceeded_warn",
    "human_escalation_raised",
    "human_escalation_resolved",
    "dispatch_progress",
    "session_continuation",
    "auto_retried_ghost",
    "ghost_retry_exhausted",
    "auto_retried_productive_timeout",
    "productive_timeout_retry_exhausted",
    "retained_claude_auth_escalation_reclassified",
    "state_reconciled_operator_commits",
    "operator_commit_reconcile_refused",
    "charter_materialization_required",
    "artifact_type_auto_normalized",
    "staged_result_auto_normalized",
];

/// Events about one turn: they name it in `turn.turn_id`.
const TURN_SCOPED: [&str; 3] = ["turn_dispatched", "turn_accepted", "turn_rejected"];

/// The recovery classification the reference's event log adds to a recovery event's payload
/// (`recovery_classification`: domain, severity, outcome, mechanism), for the event types it
/// classifies; `None` for the others.
pub fn recovery_classification(event_type: &str, payload: &Json) -> Option<Json> {
    let (domain, severity, outcome, mechanism) = match event_type {
        "auto_retried_ghost" | "auto_retried_productive_timeout" => {
            ("ghost", "medium", "recovered", "auto_retry")
        }
        "ghost_retry_exhausted" if payload["exhaustion_reason"] == "same_signature_repeat" => {
            ("ghost", "critical", "exhausted", "auto_retry")
        }
        "ghost_retry_exhausted" | "productive_timeout_retry_exhausted" => {
            ("ghost", "high", "exhausted", "auto_retry")
        }
        "budget_exceeded_warn" => {
            let spent = payload["remaining_usd"].as_f64().is_some_and(|r| r <= 0.0);
            (
                "budget",
                if spent { "high" } else { "medium" },
                "pending",
                "config_change",
            )
        }
        "retained_claude_auth_escalation_reclassified" => {
            ("credential", "medium", "pending", "env_refresh")
        }
        "continuous_paused_active_run_recovered" | "session_failed_recovered_active_run" => {
            ("crash", "medium", "recovered", "loop_guard")
        }
        _ => return None,
    };
    Some(
        json!({"domain": domain, "severity": severity, "outcome": outcome, "mechanism": mechanism}),
    )
}

/// An ISO-8601 timestamp (`2026-01-02T03:04:05Z`; fractions, no zone or a `±HH:MM` offset).
pub fn timestamp(v: &Json) -> Option<SystemTime> {
    let s = v.as_str()?;
    if let Ok(t) = humantime::parse_rfc3339_weak(s) {
        return Some(t);
    }
    // `…+02:00` / `…-05:30`: the time without its offset, moved to UTC.
    let cut = s.len().checked_sub(6).filter(|c| s.is_char_boundary(*c))?;
    let (base, offset) = s.split_at(cut);
    let sign = match offset.as_bytes().first()? {
        b'+' => 1i64,
        b'-' => -1,
        _ => return None,
    };
    let (h, m) = offset[1..].split_once(':')?;
    let (h, m): (u64, u64) = (h.parse().ok()?, m.parse().ok()?);
    if h > 23 || m > 59 || !base.contains('T') {
        return None;
    }
    let local = humantime::parse_rfc3339_weak(base).ok()?;
    let shift = std::time::Duration::from_secs(h * 3600 + m * 60);
    if sign > 0 {
        local.checked_sub(shift)
    } else {
        local.checked_add(shift)
    }
}

/// What is wrong with one event (empty: nothing).
pub fn event_errors(event: &Json) -> Vec<String> {
    if !event.is_object() {
        return vec!["Event must be an object".to_owned()];
    }
    let mut errors = Vec::new();
    if event["event_id"]
        .as_str()
        .is_none_or(|s| s.trim().is_empty())
    {
        errors.push("event_id must be a non-empty string".to_owned());
    }
    let kind = event["event_type"].as_str();
    if !kind.is_some_and(|k| EVENT_TYPES.contains(&k)) {
        errors.push(format!(
            "event_type must be one of: {}",
            EVENT_TYPES.join(", ")
        ));
    }
    if timestamp(&event["timestamp"]).is_none() {
        errors.push("timestamp must be a valid ISO-8601 string".to_owned());
    }
    if let Some(k) = kind.filter(|k| TURN_SCOPED.contains(k))
        && event["turn"]["turn_id"]
            .as_str()
            .is_none_or(|s| s.trim().is_empty())
    {
        errors.push(format!("{k} requires a non-empty turn.turn_id"));
    }
    errors
}

/// What is wrong with the order of a run's events (empty: nothing): `run_started` first,
/// `run_completed` (when present) last, each turn dispatched before it is accepted, and
/// timestamps that never go back.
pub fn ordering_errors(events: &[Json]) -> Vec<String> {
    let mut errors = Vec::new();
    let kind = |e: &Json| e["event_type"].as_str().unwrap_or("").to_owned();
    match events.first() {
        None => return vec!["Events must be a non-empty array".to_owned()],
        Some(first) if kind(first) != "run_started" => {
            errors.push("First event must be run_started".to_owned())
        }
        Some(_) => {}
    }
    let completed = events.iter().any(|e| kind(e) == "run_completed");
    if completed && events.last().is_some_and(|e| kind(e) != "run_completed") {
        errors.push("run_completed must be the last event".to_owned());
    }
    let mut dispatched = std::collections::HashSet::new();
    for e in events {
        let Some(turn) = e["turn"]["turn_id"].as_str().filter(|t| !t.is_empty()) else {
            continue;
        };
        match kind(e).as_str() {
            "turn_dispatched" => {
                dispatched.insert(turn.to_owned());
            }
            "turn_accepted" if !dispatched.contains(turn) => errors.push(format!(
                "turn_accepted for {turn} without preceding turn_dispatched"
            )),
            _ => {}
        }
    }
    for (i, pair) in events.windows(2).enumerate() {
        if let (Some(a), Some(b)) = (
            timestamp(&pair[0]["timestamp"]),
            timestamp(&pair[1]["timestamp"]),
        ) && b < a
        {
            errors.push(format!("Event {} timestamp is before event {i}", i + 1));
        }
    }
    errors
}

#[cfg(test)]
mod tests {
    #[test]
    fn recovery_events_are_classified_as_the_reference_classifies_them() {
        let c = |t: &str, p: serde_json::Value| super::recovery_classification(t, &p);
        assert_eq!(c("turn_accepted", json!({})), None);
        assert_eq!(
            c("budget_exceeded_warn", json!({"remaining_usd": 0.5})).unwrap()["severity"],
            "medium"
        );
        assert_eq!(
            c("budget_exceeded_warn", json!({"remaining_usd": 0})).unwrap()["severity"],
            "high"
        );
        assert_eq!(
            c(
                "ghost_retry_exhausted",
                json!({"exhaustion_reason": "same_signature_repeat"})
            )
            .unwrap()["severity"],
            "critical"
        );
        assert_eq!(
            c("auto_retried_ghost", json!({})).unwrap(),
            json!({"domain": "ghost", "severity": "medium", "outcome": "recovered", "mechanism": "auto_retry"})
        );
    }

    use super::*;
    use serde_json::json;

    fn ev(kind: &str, at: &str, turn: Option<&str>) -> Json {
        let mut e = json!({"event_id": "evt_1", "event_type": kind, "timestamp": at});
        if let Some(t) = turn {
            e["turn"] = json!({"turn_id": t});
        }
        e
    }

    #[test]
    fn an_event_needs_an_id_a_known_type_a_time_and_its_turn() {
        assert!(event_errors(&ev("run_started", "2026-01-01T00:00:00Z", None)).is_empty());
        assert!(event_errors(&ev("run_started", "2026-01-01T00:00:00.123+02:00", None)).is_empty());
        assert_eq!(event_errors(&json!(3)), ["Event must be an object"]);
        assert_eq!(
            timestamp(&json!("Té12345")),
            None,
            "no panic on a multibyte time"
        );
        let bad = event_errors(&json!({"event_type": "nope", "timestamp": "yesterday"}));
        assert_eq!(bad.len(), 3, "{bad:?}");
        assert_eq!(
            event_errors(&ev("turn_accepted", "2026-01-01T00:00:00Z", None)),
            ["turn_accepted requires a non-empty turn.turn_id"]
        );
    }

    #[test]
    fn a_runs_events_keep_their_order() {
        let good = [
            ev("run_started", "2026-01-01T00:00:00Z", None),
            ev("turn_dispatched", "2026-01-01T00:00:01Z", Some("t1")),
            ev("turn_accepted", "2026-01-01T00:00:02Z", Some("t1")),
            ev("run_completed", "2026-01-01T00:00:02Z", None),
        ];
        assert!(ordering_errors(&good).is_empty());
        let mut late = good.to_vec();
        late.swap(2, 3);
        assert_eq!(
            ordering_errors(&late),
            ["run_completed must be the last event"]
        );
        let undispatched = [good[0].clone(), good[2].clone()];
        assert_eq!(
            ordering_errors(&undispatched),
            ["turn_accepted for t1 without preceding turn_dispatched"]
        );
        let back = [
            good[0].clone(),
            ev("phase_entered", "2025-12-31T00:00:00Z", None),
        ];
        assert_eq!(
            ordering_errors(&back),
            ["Event 1 timestamp is before event 0"]
        );
        assert_eq!(
            ordering_errors(&good[1..2]),
            ["First event must be run_started"]
        );
        assert_eq!(ordering_errors(&[]), ["Events must be a non-empty array"]);
    }
}
