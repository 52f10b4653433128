//! A dispatched turn's life until its result is staged: `starting` (a runtime's process is
//! attached), `running` (it produced output), claimed for a dispatch again (`step --resume`,
//! `run`), and what a dispatch that fails does to the run — blocked on `dispatch:<why>` with a human escalation,
//! or the turn retained as `failed_start` (a process that never started). The fields, orders
//! and events are the reference's (`transitionActiveTurnLifecycle`, `markRunBlocked`,
//! `failTurnStartup`), so either tool can pick the run up after the other.

use serde_json::{Value as Json, json};

use super::store::{STATE, Store};
use super::{Refusal, escalate, event_turn, intent_of, now, session};

/// The recovery action a dispatch block asks for.
pub const DISPATCH_RECOVERY: &str =
    "Resolve the dispatch issue, then run agentxchain step --resume";

/// The fields of a turn's running process, cleared when the turn is dispatched again (the
/// reference's `dispatched` lifecycle): the new attempt's process is not the old one.
pub const PROCESS_FIELDS: [&str; 5] = [
    "started_at",
    "worker_attached_at",
    "worker_pid",
    "first_output_at",
    "first_output_stream",
];

/// The live process a turn records as its worker (`worker_pid`), if it still runs.
pub fn live_worker(turn: &Json) -> Option<i64> {
    let pid = turn["worker_pid"]
        .as_i64()
        .filter(|p| *p > 0 && *p <= i32::MAX as i64)?;
    // SAFETY: signal 0 only asks whether the process exists. EPERM: it exists, as another
    // user's process (alive all the same).
    let alive = unsafe { libc::kill(pid as i32, 0) } == 0
        || std::io::Error::last_os_error().raw_os_error() == Some(libc::EPERM);
    alive.then_some(pid)
}

/// Where a turn is in its life.
#[derive(Clone, Debug)]
pub enum Stage {
    /// A process is attached (its pid).
    Starting { pid: Option<u32> },
    /// It produced output on `stream` (`stdout`, `request`, `staged_result`).
    Running { stream: &'static str },
}

/// Moves the active turn `turn_id` to `stage` (under the lock, on the state as it is now: an
/// agent's own commands may have changed it meanwhile). `Ok(None)` when the turn is no longer
/// active.
pub fn mark(store: &Store, turn_id: &str, stage: Stage) -> Result<Option<Json>, Refusal> {
    let _lock = store.lock()?;
    let mut state = store.state()?;
    let Some(turn) = state["active_turns"].get_mut(turn_id) else {
        return Ok(None);
    };
    let Some(t) = turn.as_object_mut() else {
        return Ok(None);
    };
    let at = now();
    match stage {
        Stage::Starting { pid } => {
            t.insert("status".into(), json!("starting"));
            t.insert("started_at".into(), json!(at));
            t.insert("worker_attached_at".into(), json!(at));
            if let Some(pid) = pid {
                t.insert("worker_pid".into(), json!(pid));
            }
        }
        Stage::Running { stream } => {
            t.insert("status".into(), json!("running"));
            t.entry("started_at").or_insert_with(|| json!(at));
            if !t.get("first_output_at").is_some_and(Json::is_string) {
                t.insert("first_output_at".into(), json!(at));
            }
            if !t.get("first_output_stream").is_some_and(Json::is_string) {
                t.insert("first_output_stream".into(), json!(stream));
            }
        }
    }
    store.write_json(STATE, &state)?;
    Ok(Some(state))
}

/// Whether `deadline` is a time still ahead.
pub(crate) fn deadline_ahead(deadline: Option<&Json>) -> bool {
    deadline
        .and_then(crate::events::timestamp)
        .is_some_and(|d| d > std::time::SystemTime::now())
}

/// What a dispatch failure did to the run.
#[derive(Clone, Debug)]
pub struct Blocked {
    pub state: Json,
    /// The human escalation raised for the block (`None` when one was open already).
    pub escalation: Option<Json>,
}

/// Blocks the run on a failed dispatch of `turn_id` (`blocked_on` = `dispatch:<why>`,
/// category `dispatch_error`, the turn retained) and raises the human escalation a person
/// resolves: `markRunBlocked`'s effects. No `run_blocked` event, as the reference.
pub fn block_dispatch(
    store: &Store,
    turn_id: &str,
    why: &str,
    detail: &str,
) -> Result<Blocked, Refusal> {
    let _lock = store.lock()?;
    let state = store.state()?;
    // A turn accepted or rejected while its agent ran (the agent's own commands) leaves
    // nothing to block on.
    if state["active_turns"].get(turn_id).is_none() {
        return Err(Refusal::new(format!(
            "Turn {turn_id} is no longer active: it was accepted or rejected while its agent ran"
        )));
    }
    let recovery = json!({
        "typed_reason": "dispatch_error",
        "owner": "human",
        "recovery_action": DISPATCH_RECOVERY,
        "turn_retained": true,
        "detail": detail,
    });
    mark_blocked(
        store,
        state,
        Some(turn_id),
        &format!("dispatch:{why}"),
        "dispatch_error",
        recovery,
    )
}

/// Blocks the active run `state` on `blocked_on` for the retained turn `turn_id` (else the
/// run's first active turn, if any; category `category`, `recovery` the person's way on),
/// under the caller's lock: the state written, a `blocked` session checkpoint, the human
/// escalation unless one is open — the reference's `markRunBlocked`. No `run_blocked` event,
/// as the reference.
pub(crate) fn mark_blocked(
    store: &Store,
    mut state: Json,
    turn_id: Option<&str>,
    blocked_on: &str,
    category: &str,
    recovery: Json,
) -> Result<Blocked, Refusal> {
    let turn_id = turn_id.map(str::to_owned).or_else(|| {
        state["active_turns"]
            .as_object()
            .and_then(|m| m.keys().next().cloned())
    });
    let turn_id = turn_id.as_deref();
    state["status"] = json!("blocked");
    state["blocked_on"] = json!(blocked_on);
    state["blocked_reason"] = json!({
        "category": category,
        "recovery": recovery,
        "blocked_at": now(),
        "turn_id": turn_id,
    });
    if state.get("escalation").is_none() {
        state["escalation"] = Json::Null;
    }
    store.write_json(STATE, &state)?;
    let role = turn_id
        .and_then(|t| state["active_turns"][t]["assigned_role"].as_str())
        .map(str::to_owned);
    let _ = session::checkpoint(
        store,
        &state,
        "blocked",
        session::Extra {
            role: role.as_deref(),
            ..Default::default()
        },
    );
    let escalation = escalate::raise_unless_open(store, &state, turn_id, role.as_deref())?;
    Ok(Blocked { state, escalation })
}

/// How a turn's process failed to start.
#[derive(Clone, Debug)]
pub struct StartFailure {
    /// `runtime_spawn_failed`, `stdout_attach_failed` or `no_subprocess_output`.
    pub failure_type: &'static str,
    /// The startup watchdog's window.
    pub threshold_ms: u64,
}

/// Retains `turn_id` as `failed_start` and blocks the run on it (`turn:failed_start:<id>`,
/// category `ghost_turn`): the recovery is a reissue. Events `turn_start_failed`, the
/// failure's own (`runtime_spawn_failed`, `stdout_attach_failed`) and `run_blocked`.
pub fn fail_startup(store: &Store, turn_id: &str, f: &StartFailure) -> Result<Json, Refusal> {
    let _lock = store.lock()?;
    let mut state = store.state()?;
    let Some(turn) = state["active_turns"].get(turn_id).cloned() else {
        return Err(Refusal::new(format!(
            "Turn {turn_id} not found in active turns"
        )));
    };
    let previous = turn["status"].as_str().unwrap_or("").to_owned();
    if !["dispatched", "starting", "running", "retrying"].contains(&previous.as_str()) {
        return Err(Refusal::new(format!(
            "Turn {turn_id} is not eligible for startup failure transition"
        )));
    }
    // A process that attached but never wrote is a failed attach, not a failed spawn.
    let failure_type = match f.failure_type {
        "runtime_spawn_failed" | "stdout_attach_failed" => f.failure_type,
        _ if previous == "dispatched" => "runtime_spawn_failed",
        _ if previous == "starting"
            || !turn["worker_attached_at"].is_null()
            || !turn["worker_pid"].is_null() =>
        {
            "stdout_attach_failed"
        }
        other => other,
    };
    // How long it ran: from its start (a process that never attached has none: 0).
    let running_ms = turn["started_at"]
        .as_str()
        .and_then(|t| crate::events::timestamp(&json!(t)))
        .and_then(|t| std::time::SystemTime::now().duration_since(t).ok())
        .map_or(0, |d| d.as_millis() as u64);
    let command = format!("agentxchain reissue-turn --turn {turn_id} --reason ghost");
    let recommendation = format!(
        "Turn {turn_id} failed to start within the startup watchdog window. Run `{command}` to recover."
    );
    let at = now();
    let mut t = turn.clone();
    t["status"] = json!("failed_start");
    t["failed_start_at"] = json!(at);
    t["failed_start_reason"] = json!(failure_type);
    t["failed_start_previous_status"] = json!(previous);
    t["failed_start_threshold_ms"] = json!(f.threshold_ms);
    t["failed_start_running_ms"] = json!(running_ms);
    t["recovery_command"] = json!(command);
    state["active_turns"][turn_id] = t;
    if let Some(m) = state["budget_reservations"].as_object_mut() {
        m.remove(turn_id);
    }
    state["status"] = json!("blocked");
    state["blocked_on"] = json!(format!("turn:failed_start:{turn_id}"));
    state["blocked_reason"] = json!({
        "category": "ghost_turn",
        "blocked_at": at,
        "turn_id": turn_id,
        "recovery": {
            "typed_reason": "ghost_turn",
            "owner": "human",
            "recovery_action": recommendation,
            "turn_retained": true,
            "detail": recommendation,
        },
    });
    store.write_json(STATE, &state)?;
    let payload = json!({
        "running_ms": running_ms,
        "threshold_ms": f.threshold_ms,
        "runtime_id": turn["runtime_id"].as_str().unwrap_or("unknown"),
        "failure_type": failure_type,
        "recommendation": recommendation,
    });
    let et = event_turn(&turn);
    store.emit("turn_start_failed", &state, et.clone(), payload.clone())?;
    if failure_type != "no_subprocess_output" {
        store.emit(failure_type, &state, et.clone(), payload)?;
    }
    store.emit(
        "run_blocked",
        &state,
        et,
        json!({"category": "ghost_turn", "ghost_turn_ids": [turn_id], "stalled_turn_ids": []}),
    )?;
    Ok(state)
}

/// Claims the active turn `turn_id` for a new dispatch (`step --resume`), under the lock: its
/// bundle written again, `dispatched` (`turn_dispatched`), and `claimant` (this process)
/// recorded as its worker until the agent's own process replaces it — so a second resume at
/// the same moment finds a live worker and is refused. The turn, or the refusal.
pub fn claim(store: &Store, config: &Json, turn_id: &str, claimant: u32) -> Result<Json, Refusal> {
    let deadline = super::reject::deadline(config);
    let _lock = store.lock()?;
    let mut state = store.state()?;
    let Some(t) = state["active_turns"].get(turn_id).cloned() else {
        return Err(Refusal::new(format!(
            "No active turn found for --turn {turn_id}"
        )));
    };
    if let Some(pid) = live_worker(&t) {
        return Err(Refusal::new(format!(
            "Worker process (PID {pid}) is still alive.\nThe previous dispatch appears to still be running.\nWait for it to complete, or kill it first, then retry."
        )));
    }
    let hooks = super::hooked::trusted(store, config)?;
    if let Some(halted) = super::dispatch::write_hooked_bundle(store, config, hooks, &state, &t)? {
        return Err(Refusal::new(halted.error));
    }
    let at = now();
    let turn = {
        let Some(o) = state["active_turns"][turn_id].as_object_mut() else {
            return Err(Refusal::new(format!(
                "Turn {turn_id} not found in active turns"
            )));
        };
        o.insert("status".into(), json!("dispatched"));
        o.insert("dispatched_at".into(), json!(at));
        if !deadline_ahead(o.get("deadline_at")) {
            o.insert("deadline_at".into(), json!(deadline));
        }
        for k in PROCESS_FIELDS {
            o.remove(k);
        }
        o.insert("worker_pid".into(), json!(claimant));
        Json::Object(o.clone())
    };
    store.write_json(STATE, &state)?;
    store.emit_for(
        "turn_dispatched",
        &state,
        event_turn(&turn),
        intent_of(&turn),
        json!({}),
    )?;
    Ok(turn)
}
