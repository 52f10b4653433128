//! The stale-turn watchdog: a turn whose process died with the command that ran it (a killed
//! `step`, a closed terminal) stays `dispatched`/`starting`/`running` in the state forever.
//! `resume` and `step` look before they act, as the reference's do:
//!
//! - a **ghost turn** — no sign its process ever produced output (no `first_output_at` on a
//!   stdout/request/staged-result stream, no dispatch progress, no staged result) after the
//!   startup window (`startup_watchdog_ms`, 180 s) — becomes `failed_start`;
//! - a **stale turn** — `running` with no output, progress or turn event within
//!   `run_loop.stale_turn_threshold_ms` (10 min; 5 for `api_proxy`) and no staged result —
//!   becomes `stalled`;
//!
//! and either blocks the run (`turn:failed_start:<id>`, `turn:stalled:<id>`, or `turns:…` for
//! several) with the reissue command as its recovery. `status` shows the same verdicts without
//! writing them (reads are pure).
//!
//! Two departures from the reference, both to keep a live turn alive: only a `local_cli` turn
//! is judged (this build starts no process for `manual`, `api_proxy`, `mcp` or `remote_agent`
//! turns, which a person completes; the reference fails a person's turn after three minutes),
//! and never one whose recorded worker process still runs.

use std::time::SystemTime;

use serde_json::{Value as Json, json};

use super::store::{EVENTS, STATE, Store};
use super::{Refusal, dispatch, lifecycle, now};

const STARTUP_MS: u64 = 180 * 1000;
const STALE_LOCAL_MS: u64 = 10 * 60 * 1000;
const STALE_API_MS: u64 = 5 * 60 * 1000;
/// The streams whose first output proves a process started.
const PROOF_STREAMS: [&str; 3] = ["stdout", "request", "staged_result"];

/// One turn the watchdog judged.
#[derive(Clone, Debug, PartialEq)]
pub struct Verdict {
    pub turn_id: String,
    pub role: String,
    pub runtime_id: String,
    pub running_ms: u64,
    pub threshold_ms: u64,
    /// A ghost's failure type (`runtime_spawn_failed`, `stdout_attach_failed`,
    /// `no_subprocess_output`); `None` for a stale turn.
    pub failure_type: Option<&'static str>,
    pub recommendation: String,
}

impl Verdict {
    pub fn to_json(&self) -> Json {
        let mut v = json!({
            "turn_id": self.turn_id, "role": self.role, "runtime_id": self.runtime_id,
            "running_ms": self.running_ms, "threshold_ms": self.threshold_ms,
            "recommendation": self.recommendation,
        });
        if let Some(f) = self.failure_type {
            v["failure_type"] = json!(f);
        }
        v
    }
}

fn millis(v: &Json) -> Option<u64> {
    let t = crate::events::timestamp(v)?;
    t.duration_since(SystemTime::UNIX_EPOCH)
        .ok()
        .map(|d| d.as_millis() as u64)
}

fn positive(v: &Json) -> Option<u64> {
    v.as_f64().filter(|f| *f > 0.0).map(|f| f as u64)
}

/// Whether the turn's staged result says something (not absent, empty or `{}`).
fn staged(store: &Store, turn_id: &str) -> bool {
    store
        .read_text(&dispatch::staging_rel(turn_id), 1 << 20)
        .ok()
        .flatten()
        .is_some_and(|t| !matches!(t.trim(), "" | "{}"))
}

fn progress(store: &Store, turn_id: &str) -> Option<Json> {
    store
        .read_json(&format!(".agentxchain/dispatch-progress-{turn_id}.json"))
        .ok()
        .flatten()
}

/// Whether a turn event after `since` falls within `window` of `now` (the newest 200 events).
fn recent_event(store: &Store, turn_id: &str, since: u64, window: u64, now: u64) -> bool {
    let Ok(tail) = axc_core::jsonl::read_last(store.root(), EVENTS, 200) else {
        return false;
    };
    tail.entries.iter().rev().any(|e| {
        e["turn"]["turn_id"] == turn_id
            && !matches!(
                e["event_type"].as_str(),
                Some(
                    "turn_stalled"
                        | "turn_start_failed"
                        | "runtime_spawn_failed"
                        | "stdout_attach_failed"
                )
            )
            && millis(&e["timestamp"]).is_some_and(|t| t >= since && now.saturating_sub(t) < window)
    })
}

/// The ghost and stale turns of `state` at `now` (ms since the epoch), ghosts first.
pub fn detect(
    store: &Store,
    state: &Json,
    config: &Json,
    now: u64,
) -> (Vec<Verdict>, Vec<Verdict>) {
    let (mut ghosts, mut stale) = (Vec::new(), Vec::new());
    for (id, turn) in state["active_turns"].as_object().into_iter().flatten() {
        let status = turn["status"].as_str().unwrap_or("");
        let runtime_id = turn["runtime_id"].as_str().unwrap_or("unknown").to_owned();
        let runtime = &config["runtimes"][&runtime_id];
        let kind = runtime["type"].as_str().unwrap_or("");
        // Only a turn this build starts a process for: a person's manual turn, and the
        // api_proxy/mcp/remote_agent turns a person completes by hand here, have none to lose.
        if kind != "local_cli" || lifecycle::live_worker(turn).is_some() {
            continue;
        }
        let role = turn["assigned_role"]
            .as_str()
            .unwrap_or("unknown")
            .to_owned();
        // Ghost: never showed a sign of life within the startup window.
        if ["dispatched", "starting", "running", "retrying"].contains(&status) {
            let start = if status == "dispatched" {
                millis(&turn["dispatched_at"]).or_else(|| millis(&turn["assigned_at"]))
            } else {
                millis(&turn["started_at"])
                    .or_else(|| millis(&turn["dispatched_at"]))
                    .or_else(|| millis(&turn["assigned_at"]))
            };
            let threshold = if kind == "local_cli" {
                positive(&runtime["startup_watchdog_ms"])
            } else {
                None
            }
            .or_else(|| positive(&config["run_loop"]["startup_watchdog_ms"]))
            .unwrap_or(STARTUP_MS);
            if let Some(start) = start
                && now.saturating_sub(start) >= threshold
                && !staged(store, id)
            {
                let p = progress(store, id);
                let proof = (!turn["first_output_at"].is_null()
                    && (turn["first_output_stream"].is_null()
                        || PROOF_STREAMS
                            .contains(&turn["first_output_stream"].as_str().unwrap_or(""))))
                    || p.as_ref().is_some_and(|p| {
                        !p["first_output_at"].is_null()
                            && p["first_output_at"] != false
                            && p["first_output_at"] != ""
                            || p["output_lines"].as_f64().unwrap_or(0.0) > 0.0
                    });
                if !proof {
                    let attached = !turn["worker_attached_at"].is_null()
                        || !turn["worker_pid"].is_null()
                        || p.as_ref().is_some_and(|p| !p["pid"].is_null());
                    let failure_type = if status == "dispatched" {
                        "runtime_spawn_failed"
                    } else if status == "starting" || attached {
                        "stdout_attach_failed"
                    } else {
                        "no_subprocess_output"
                    };
                    let running = now.saturating_sub(start);
                    ghosts.push(Verdict {
                        turn_id: id.clone(),
                        role,
                        runtime_id,
                        running_ms: running,
                        threshold_ms: threshold,
                        failure_type: Some(failure_type),
                        recommendation: format!(
                            "Turn {id} has been dispatched for {}s with no subprocess output. The subprocess likely never started. Run `agentxchain reissue-turn --turn {id} --reason ghost` to recover.",
                            running / 1000
                        ),
                    });
                    continue;
                }
            }
        }
        // Stale: running, then silent past the threshold.
        if !matches!(status, "running" | "retrying") {
            continue;
        }
        let Some(started) = millis(&turn["started_at"]) else {
            continue;
        };
        let threshold = positive(&config["run_loop"]["stale_turn_threshold_ms"]).unwrap_or(
            if kind == "api_proxy" {
                STALE_API_MS
            } else {
                STALE_LOCAL_MS
            },
        );
        let running = now.saturating_sub(started);
        if running < threshold || staged(store, id) {
            continue;
        }
        let last = progress(store, id)
            .and_then(|p| millis(&p["last_activity_at"]))
            .unwrap_or(0);
        if last > 0 && now.saturating_sub(last) < threshold {
            continue;
        }
        if recent_event(store, id, started, threshold, now) {
            continue;
        }
        stale.push(Verdict {
            turn_id: id.clone(),
            role,
            runtime_id,
            running_ms: running,
            threshold_ms: threshold,
            failure_type: None,
            recommendation: format!(
                "Turn {id} has been running for {}m with no output. Run `agentxchain reissue-turn --turn {id} --reason stale` to recover.",
                running / 60000
            ),
        });
    }
    (ghosts, stale)
}

/// `state` with the verdicts applied at `at`: ghosts `failed_start`, stale turns `stalled`,
/// their budget reservations released, the run blocked on the first.
pub fn apply(state: &Json, ghosts: &[Verdict], stale: &[Verdict], at: &str) -> Json {
    let mut next = state.clone();
    for v in ghosts.iter().chain(stale) {
        let t = &mut next["active_turns"][&v.turn_id];
        let previous = t["status"].clone();
        match v.failure_type {
            Some(f) => {
                t["status"] = json!("failed_start");
                t["failed_start_at"] = json!(at);
                t["failed_start_reason"] = json!(f);
                t["failed_start_previous_status"] = previous;
                t["failed_start_threshold_ms"] = json!(v.threshold_ms);
                t["failed_start_running_ms"] = json!(v.running_ms);
                t["recovery_command"] = json!(format!(
                    "agentxchain reissue-turn --turn {} --reason ghost",
                    v.turn_id
                ));
            }
            None => {
                t["status"] = json!("stalled");
                t["stalled_at"] = json!(at);
                t["stalled_reason"] = json!("no_output_within_threshold");
                t["stalled_previous_status"] = previous;
                t["stalled_threshold_ms"] = json!(v.threshold_ms);
                t["stalled_running_ms"] = json!(v.running_ms);
                t["recovery_command"] = json!(format!(
                    "agentxchain reissue-turn --turn {} --reason stale",
                    v.turn_id
                ));
            }
        }
        if let Some(m) = next["budget_reservations"].as_object_mut() {
            m.remove(&v.turn_id);
        }
    }
    let Some(primary) = ghosts.first().or(stale.first()) else {
        return next;
    };
    let category = if ghosts.is_empty() {
        "stale_turn"
    } else {
        "ghost_turn"
    };
    let blocked_on = if ghosts.len() + stale.len() == 1 {
        let what = if primary.failure_type.is_some() {
            "failed_start"
        } else {
            "stalled"
        };
        format!("turn:{what}:{}", primary.turn_id)
    } else if ghosts.is_empty() {
        "turns:stalled".to_owned()
    } else {
        "turns:failed_start".to_owned()
    };
    next["status"] = json!("blocked");
    next["blocked_on"] = json!(blocked_on);
    next["blocked_reason"] = json!({
        "category": category, "blocked_at": at, "turn_id": primary.turn_id,
        "recovery": {
            "typed_reason": category, "owner": "human",
            "recovery_action": primary.recommendation, "turn_retained": true,
            "detail": primary.recommendation,
        },
    });
    next
}

/// The ghost and stale turns found, ghosts first.
pub type Found = (Vec<Verdict>, Vec<Verdict>);

/// Judges the active turns now and writes what it finds (under the lock): the events
/// (`turn_start_failed` and the failure's own, `turn_stalled`, then `run_blocked`) and the
/// blocked state. Both lists empty when every turn is alive.
pub fn reconcile(store: &Store, config: &Json) -> Result<Found, Refusal> {
    let _lock = store.lock()?;
    let Some(state) = store.read_json(STATE)?.filter(Json::is_object) else {
        return Ok((Vec::new(), Vec::new()));
    };
    let now_ms = SystemTime::now()
        .duration_since(SystemTime::UNIX_EPOCH)
        .map_or(0, |d| d.as_millis() as u64);
    let (ghosts, stale) = detect(store, &state, config, now_ms);
    if ghosts.is_empty() && stale.is_empty() {
        return Ok((ghosts, stale));
    }
    // A state naming a turn that is not a plain id is refused before anything is written.
    store.state()?;
    let at = now();
    let shown = json!({"run_id": state["run_id"], "phase": state["phase"], "status": "blocked"});
    let turn = |v: &Verdict| json!({"turn_id": v.turn_id, "role_id": v.role});
    for v in &ghosts {
        let payload = json!({"running_ms": v.running_ms, "threshold_ms": v.threshold_ms,
            "runtime_id": v.runtime_id, "failure_type": v.failure_type,
            "recommendation": v.recommendation});
        store.emit("turn_start_failed", &shown, turn(v), payload.clone())?;
        if let Some(f) = v.failure_type.filter(|f| *f != "no_subprocess_output") {
            store.emit(f, &shown, turn(v), payload)?;
        }
    }
    for v in &stale {
        store.emit(
            "turn_stalled",
            &shown,
            turn(v),
            json!({"running_ms": v.running_ms, "threshold_ms": v.threshold_ms,
                   "runtime_id": v.runtime_id, "recommendation": v.recommendation}),
        )?;
    }
    let next = apply(&state, &ghosts, &stale, &at);
    store.write_json(STATE, &next)?;
    let primary = ghosts.first().or(stale.first()).expect("one verdict");
    store.emit(
        "run_blocked",
        &next,
        turn(primary),
        json!({"category": if ghosts.is_empty() { "stale_turn" } else { "ghost_turn" },
               "ghost_turn_ids": ghosts.iter().map(|v| v.turn_id.clone()).collect::<Vec<_>>(),
               "stalled_turn_ids": stale.iter().map(|v| v.turn_id.clone()).collect::<Vec<_>>()}),
    )?;
    Ok((ghosts, stale))
}
