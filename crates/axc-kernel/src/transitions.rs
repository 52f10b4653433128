//! The run state machine's transitions, as pure functions from one `state.json` value to the
//! next (or the reference's refusal text): initialize a run, assign a turn, pause for a phase
//! gate, approve a transition or the completion, block on an escalation, resume.
//!
//! Identifiers and times are the caller's (`run_id`, `turn_id`, `now`), so a replay is
//! deterministic. What surrounds a transition in the reference CLI — reading and writing the
//! state under a lock, events, hooks, gate actions, the clean-baseline check, budget
//! reservations — belongs to the layer that calls these; none of it is here.

use axc_core::util::to_fixed;
use serde_json::{Map, Value as Json, json};

type Next = Result<Json, String>;

fn object(state: &Json) -> Map<String, Json> {
    state.as_object().cloned().unwrap_or_default()
}

fn status(state: &Json) -> &str {
    state["status"].as_str().unwrap_or("")
}

fn active_turns(state: &Json) -> Map<String, Json> {
    state["active_turns"]
        .as_object()
        .cloned()
        .unwrap_or_default()
}

/// Starts a run: `idle` (or a pre-run `blocked` with no run and no turn) becomes `active` with
/// a new run id; a completed run cannot be started again.
pub fn initialize(state: &Json, config: &Json, run_id: &str, now: &str) -> Next {
    let st = status(state);
    if st == "completed" {
        return Err("Cannot initialize run: this run is already completed. Start a new project or reset state.".into());
    }
    let pre_run_blocked =
        st == "blocked" && state["run_id"].is_null() && active_turns(state).is_empty();
    if st != "idle" && !pre_run_blocked {
        return Err(format!(
            "Cannot initialize run: status is \"{st}\", expected \"idle\" or pre-run \"blocked\""
        ));
    }
    let mut s = object(state);
    s.insert("run_id".into(), json!(run_id));
    s.insert("created_at".into(), json!(now));
    s.insert("phase_entered_at".into(), json!(now));
    s.insert("status".into(), json!("active"));
    s.insert("blocked_on".into(), Json::Null);
    s.insert("blocked_reason".into(), Json::Null);
    s.insert(
        "budget_status".into(),
        json!({"spent_usd": 0, "remaining_usd": config["budget"]["per_run_max_usd"]}),
    );
    Ok(Json::Object(s))
}

/// How many turns may run at once in `phase` (`routing.<phase>.max_concurrent_turns`, 1 when
/// unset).
pub fn max_concurrent_turns(config: &Json, phase: &str) -> u64 {
    config["routing"][phase]["max_concurrent_turns"]
        .as_u64()
        .filter(|n| *n >= 1)
        .unwrap_or(1)
}

/// A turn's time (`timeouts.per_turn_minutes`, default 120).
pub fn turn_timeout_minutes(config: &Json) -> u64 {
    config["timeouts"]["per_turn_minutes"]
        .as_u64()
        .filter(|m| *m > 0)
        .unwrap_or(120)
}

/// Assigns a turn of `role` in an `active` run, within the phase's concurrency and the run's
/// budget; the new turn is `assigned` under `turn_id`, due `timeout_minutes` after `now`.
pub fn assign(
    state: &Json,
    config: &Json,
    role: &str,
    turn_id: &str,
    now: &str,
    timeout_minutes: u64,
) -> Next {
    let st = status(state);
    if st == "blocked" {
        return Err("Cannot assign turn: run is blocked. Resolve the blocked state before assigning new turns.".into());
    }
    if st != "active" {
        return Err(format!(
            "Cannot assign turn: status is \"{st}\", expected \"active\""
        ));
    }
    let Some(role_def) = config["roles"].get(role).filter(|r| r.is_object()) else {
        return Err(format!("Unknown role: \"{role}\""));
    };
    let Some(runtime) = role_def["runtime_id"]
        .as_str()
        .or(role_def["runtime"].as_str())
        .filter(|r| !r.is_empty())
    else {
        return Err(format!("Role \"{role}\" has no runtime identifier"));
    };
    let turns = active_turns(state);
    let phase = state["phase"].as_str().unwrap_or("");
    let max = max_concurrent_turns(config, phase);
    if max == 1
        && let Some(existing) = turns.values().next()
    {
        return Err(format!(
            "Turn already assigned: {} to {}",
            existing["turn_id"].as_str().unwrap_or(""),
            existing["assigned_role"].as_str().unwrap_or("")
        ));
    }
    if let Some(existing) = turns.values().find(|t| t["assigned_role"] == role) {
        return Err(format!(
            "Role \"{role}\" already has an active turn: {}",
            existing["turn_id"].as_str().unwrap_or("")
        ));
    }
    if turns.len() as u64 >= max {
        return Err(format!(
            "Cannot assign turn: {} active turn(s) already at capacity (max_concurrent_turns = {max})",
            turns.len()
        ));
    }
    let budget = &state["budget_status"];
    if let Some(remaining) = budget["remaining_usd"].as_f64()
        && remaining <= 0.0
        && !crate::budget::warns(config)
    {
        let spent = budget["spent_usd"].as_f64().unwrap_or(0.0);
        return Err(format!(
            "Cannot assign turn: run budget exhausted (spent ${} of ${} limit). {}",
            to_fixed(spent, 2),
            to_fixed(spent + remaining, 2),
            crate::budget::RAISE
        ));
    }
    let sequence = state["turn_sequence"].as_u64().unwrap_or(0) + 1;
    // At most a century: a deadline past year 9999 has no RFC 3339 form.
    let minutes = timeout_minutes.min(100 * 366 * 24 * 60);
    let deadline = humantime::parse_rfc3339_weak(now)
        .ok()
        .and_then(|t| t.checked_add(std::time::Duration::from_secs(minutes * 60)))
        .filter(|t| humantime::parse_rfc3339("9999-12-31T23:59:59Z").is_ok_and(|max| *t <= max))
        .map(|t| humantime::format_rfc3339_millis(t).to_string())
        .unwrap_or_default();
    let turn = json!({
        "turn_id": turn_id,
        "run_id": state["run_id"],
        "assigned_role": role,
        "status": "assigned",
        "attempt": 1,
        "assigned_at": now,
        "started_at": now,
        "deadline_at": deadline,
        "runtime_id": runtime,
        "assigned_sequence": sequence,
        "concurrent_with": turns.keys().collect::<Vec<_>>(),
    });
    let mut all = turns;
    all.insert(turn_id.to_owned(), turn);
    let mut s = object(state);
    s.insert("turn_sequence".into(), json!(sequence));
    s.insert("active_turns".into(), Json::Object(all));
    Ok(Json::Object(s))
}

/// An `active` run pauses for a phase gate a person must approve: `pending_phase_transition`
/// is `{gate, from, to, …}`.
pub fn pause_for_phase_gate(state: &Json, pending: &Json) -> Next {
    if status(state) != "active" {
        return Err(format!(
            "Cannot pause for a gate: status is \"{}\", expected \"active\"",
            status(state)
        ));
    }
    if !pending["to"].is_string() {
        return Err("a pending phase transition names the phase it goes to".into());
    }
    let mut s = object(state);
    s.insert("status".into(), json!("paused"));
    s.insert("pending_phase_transition".into(), pending.clone());
    Ok(Json::Object(s))
}

fn may_approve(state: &Json, what: &str) -> Result<(), String> {
    match status(state) {
        "paused" | "blocked" => Ok(()),
        st => Err(format!(
            "Cannot approve {what}: status is \"{st}\", expected \"paused\" or \"blocked\""
        )),
    }
}

fn gate_passed(state: &Json, gate: &Json) -> Json {
    let mut g = state["phase_gate_status"]
        .as_object()
        .cloned()
        .unwrap_or_default();
    if let Some(id) = gate.as_str() {
        g.insert(id.to_owned(), json!("passed"));
    }
    Json::Object(g)
}

/// A person approves the pending phase transition: the run enters the next phase, active.
pub fn approve_transition(state: &Json, now: &str) -> Next {
    let pending = &state["pending_phase_transition"];
    if pending.is_null() {
        return Err("No pending phase transition to approve".into());
    }
    may_approve(state, "transition")?;
    let mut s = object(state);
    s.insert("phase".into(), pending["to"].clone());
    s.insert("phase_entered_at".into(), json!(now));
    s.insert("status".into(), json!("active"));
    for k in [
        "blocked_on",
        "blocked_reason",
        "last_gate_failure",
        "pending_phase_transition",
    ] {
        s.insert(k.into(), Json::Null);
    }
    s.insert(
        "phase_gate_status".into(),
        gate_passed(state, &pending["gate"]),
    );
    Ok(Json::Object(s))
}

/// A person approves the pending run completion: the run is completed.
pub fn approve_completion(state: &Json, now: &str) -> Next {
    let pending = &state["pending_run_completion"];
    if pending.is_null() {
        return Err("No pending run completion to approve".into());
    }
    may_approve(state, "completion")?;
    let mut s = object(state);
    s.insert("status".into(), json!("completed"));
    s.insert("completed_at".into(), json!(now));
    for k in [
        "blocked_on",
        "blocked_reason",
        "last_gate_failure",
        "pending_run_completion",
    ] {
        s.insert(k.into(), Json::Null);
    }
    s.insert(
        "phase_gate_status".into(),
        gate_passed(state, &pending["gate"]),
    );
    Ok(Json::Object(s))
}

/// An escalation blocks an `active` run: `blocked_on` is `escalation:<reason>:<role>` (the
/// reason's `_` written `-`).
pub fn block_on_escalation(state: &Json, reason: &str, role: &str) -> Next {
    if status(state) != "active" {
        return Err(format!(
            "Cannot escalate: status is \"{}\", expected \"active\"",
            status(state)
        ));
    }
    let mut s = object(state);
    s.insert("status".into(), json!("blocked"));
    s.insert(
        "blocked_on".into(),
        json!(format!("escalation:{}:{role}", reason.replace('_', "-"))),
    );
    Ok(Json::Object(s))
}

/// A blocked run resumes: `active`, nothing blocking it.
pub fn resume(state: &Json) -> Next {
    if status(state) != "blocked" {
        return Err(format!(
            "Cannot resume: status is \"{}\", expected \"blocked\"",
            status(state)
        ));
    }
    let mut s = object(state);
    s.insert("status".into(), json!("active"));
    s.insert("blocked_on".into(), Json::Null);
    s.insert("blocked_reason".into(), Json::Null);
    Ok(Json::Object(s))
}

/// Fields no transition may change once set.
pub const IMMUTABLE: [&str; 2] = ["run_id", "project_id"];

/// The immutable field `candidate` would change in `state`, if any.
pub fn immutable_change<'a>(state: &Json, candidate: &'a Json) -> Option<&'a str> {
    IMMUTABLE.iter().copied().find(|k| {
        candidate
            .get(*k)
            .is_some_and(|v| !state[*k].is_null() && *v != state[*k])
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn config() -> Json {
        json!({"roles": {"dev": {"runtime": "manual"}, "qa": {"runtime": "manual"}}, "routing": {"planning": {}, "implementation": {"max_concurrent_turns": 2}}})
    }

    #[test]
    fn a_run_goes_from_idle_to_completed_through_its_gates() {
        let idle =
            json!({"status": "idle", "phase": "planning", "run_id": null, "active_turns": {}});
        let s = initialize(&idle, &config(), "run_1", "2026-01-01T00:00:00Z").unwrap();
        assert_eq!(
            (s["status"].clone(), s["run_id"].clone()),
            (json!("active"), json!("run_1"))
        );
        assert!(
            initialize(&s, &config(), "run_2", "x")
                .unwrap_err()
                .contains("status is \"active\"")
        );
        let s = assign(&s, &config(), "dev", "turn_1", "2026-01-01T00:00:00Z", 30).unwrap();
        assert_eq!(
            s["active_turns"]["turn_1"]["deadline_at"],
            "2026-01-01T00:30:00.000Z"
        );
        assert_eq!(
            assign(&s, &config(), "qa", "turn_2", "t", 30).unwrap_err(),
            "Turn already assigned: turn_1 to dev"
        );
        assert_eq!(
            assign(&s, &config(), "pm", "t", "t", 30).unwrap_err(),
            "Unknown role: \"pm\""
        );
        let mut s = s;
        s["active_turns"] = json!({});
        let s = pause_for_phase_gate(
            &s,
            &json!({"gate": "g1", "from": "planning", "to": "implementation"}),
        )
        .unwrap();
        assert!(
            assign(&s, &config(), "dev", "t", "t", 30).is_err(),
            "a paused run takes no turn"
        );
        let s = approve_transition(&s, "now").unwrap();
        assert_eq!(
            (
                s["phase"].clone(),
                s["status"].clone(),
                s["phase_gate_status"]["g1"].clone()
            ),
            (json!("implementation"), json!("active"), json!("passed"))
        );
        assert_eq!(
            approve_transition(&s, "now").unwrap_err(),
            "No pending phase transition to approve"
        );
        let mut done = s.clone();
        done["pending_run_completion"] = json!({"gate": "ship"});
        assert!(
            approve_completion(&done, "now")
                .unwrap_err()
                .starts_with("Cannot approve completion: status is \"active\"")
        );
        done["status"] = json!("paused");
        let c = approve_completion(&done, "now").unwrap();
        assert_eq!(
            (c["status"].clone(), c["completed_at"].clone()),
            (json!("completed"), json!("now"))
        );
        assert!(
            initialize(&c, &config(), "r", "n")
                .unwrap_err()
                .contains("already completed")
        );
    }

    #[test]
    fn escalations_block_and_resume_and_ids_stay() {
        let s = json!({"status": "active", "run_id": "run_1"});
        let b = block_on_escalation(&s, "retries_exhausted", "dev").unwrap();
        assert_eq!(b["blocked_on"], "escalation:retries-exhausted:dev");
        assert_eq!(resume(&b).unwrap()["status"], "active");
        assert!(resume(&s).is_err());
        assert_eq!(
            immutable_change(&s, &json!({"run_id": "run_2"})),
            Some("run_id")
        );
        assert_eq!(immutable_change(&s, &json!({"run_id": "run_1"})), None);
    }
}
