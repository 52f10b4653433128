//! A phase transition decided before the next dispatch (the reference's
//! `reconcilePhaseAdvanceBeforeDispatch`): when a turn asked to leave the phase and its exit
//! gate failed (`last_gate_failure`), or a request waited for parallel turns
//! (`queued_phase_transition`), or the last accepted turn asked and nothing decided it, the
//! gate is judged again before `resume` or `step` assigns a turn — so a person who fixed the
//! gate's files moves the run on, not into another turn of the phase it should have left.
//!
//! The gate is judged as `accept-turn` judges it, with the request of the turn that made it.
//! A passed gate that needs no person advances the run (`reconciled_before_dispatch`); one an
//! approval rule approves advances it with the rule in the ledger (`auto_approved`). A gate that
//! still fails changes nothing. The gate and the rules are the config's a person chose — the one
//! committed at HEAD, or the one a person's `config --set` wrote — read once, under the lock:
//! with any other agentxchain.json (an agent's edit, put back after the command) nothing is
//! decided, and the command says why. The turn's request is its one accepted history entry: a
//! copy of the line appended to the history (with another verification, say) leaves the request
//! undecided. **Departure from the reference:** a passed gate that needs a
//! person pauses the run on it (`pending_phase_transition`, as `accept-turn` does) for
//! `approve-transition`. The reference then approved it itself, recording `gate_approved` and a
//! `human_approved` phase entry that no person made — from `resume`, which an agent may run.

use serde_json::{Value as Json, json};

use super::approve::{self, Policy};
use super::config as cfg;
use super::store::{CONFIG, HISTORY, STATE, Store};
use super::{Refusal, now, session, settings};
use crate::gates::{self, Action};
use crate::js::truthy_str as text;

/// What deciding the pending request did.
#[derive(Clone, Debug, PartialEq)]
pub enum Reconciled {
    /// Nothing to decide: dispatch as before.
    Unchanged,
    /// The gate still fails, for these reasons: dispatch as before.
    GateFailed(Vec<String>),
    /// The run entered `to` (the reference's `Advanced phase before dispatch: from → to`),
    /// judged by `config` (read under the lock: the turn of the new phase is assigned by it).
    Advanced {
        from: String,
        to: String,
        config: Box<Json>,
    },
    /// The gate passed and needs a person: the run is paused on it.
    AwaitingApproval,
    /// Nothing was decided, for this reason (the command says it, then dispatches as before).
    NotJudged(String),
}

/// The newest history entry `keep` accepts, read from the end (at most what
/// [`axc_core::jsonl::MAX_SCAN`] reaches: the request of a turn accepted long before is not
/// looked for, as a 1 GB history must not make every `resume` read it).
fn newest(store: &Store, keep: impl Fn(&Json) -> bool) -> Option<Json> {
    axc_core::jsonl::read_last_where(store.root(), HISTORY, 1, keep)
        .ok()
        .and_then(|t| t.entries.into_iter().next())
}

/// Turn `id`'s accepted entries (a reissued turn's line aside), the newest first: one
/// normally; a second is a copy of the line appended later (an agent's, with another
/// verification, say), and then neither may be taken for the turn.
pub(crate) fn accepted_entries(store: &Store, id: &str) -> Vec<Json> {
    // Only the lines that name the turn are parsed: a 10,000-turn history is a byte scan here,
    // not 10 MB of JSON on every `resume` (measured: 120 ms → see docs/benchmarks.md).
    axc_core::jsonl::read_last_naming(store.root(), HISTORY, 2, id, |e| {
        e["turn_id"] == id && e["status"] != "reissued"
    })
    .map(|t| t.entries)
    .unwrap_or_default()
}

/// The accepted turn whose request is to be decided, with its `phase_transition_request`
/// (the reference's `resolvePhaseTransitionSource`): the turn the gate failure or the queued
/// request names, else the last accepted turn; when that turn's entry holds no request and a
/// failure or queued request says which transition, the newest turn that asked for it.
fn source(store: &Store, state: &Json) -> Option<Json> {
    let failure = state["last_gate_failure"].as_object();
    let queued = state["queued_phase_transition"].as_object();
    let turn = failure
        .and_then(|f| f.get("requested_by_turn").and_then(|t| text(t)))
        .or_else(|| queued.and_then(|q| q.get("requested_by_turn").and_then(|t| text(t))))
        .or_else(|| text(&state["last_completed_turn_id"]));
    let entries = turn
        .map(|id| accepted_entries(store, id))
        .unwrap_or_default();
    if entries.len() > 1 {
        return None;
    }
    let requested = entries.into_iter().next();
    if requested
        .as_ref()
        .is_some_and(|e| text(&e["phase_transition_request"]).is_some())
    {
        return requested;
    }
    // Without a failure or a queued request, only the last accepted turn's own request counts:
    // an older request anywhere in the history is not replayed.
    let (to, from) = match (failure, queued) {
        (Some(f), _) => (f.get("to_phase"), f.get("from_phase")),
        (None, Some(q)) => (q.get("to"), q.get("from")),
        (None, None) => return None,
    };
    let to = to.and_then(text).map(str::to_owned);
    let from = from.and_then(text).map(str::to_owned);
    newest(store, |e| {
        let Some(asked) = text(&e["phase_transition_request"]) else {
            return false;
        };
        to.as_deref().is_none_or(|t| asked == t)
            && from
                .as_deref()
                .is_none_or(|f| text(&e["phase"]).is_none_or(|p| p == f))
    })
}

/// An operator's `unblock` settling the run's standing exit gate ([`super::standing`]): the
/// gate is judged with the next phase asked for the turn `unblock` ends when no entry asks.
/// **Departure from the reference:** only with no turn active (the reference judged it with
/// retained turns too and dropped those of the phase's roles; a forged active turn then chose
/// which commit's config the gate was judged by, and a turn of another role was left to block
/// the next assignment). With a retained turn, `unblock` dispatches it again.
#[derive(Clone, Copy, Debug, Default)]
pub struct Standing<'a> {
    /// The turn the unblocked escalation names.
    pub turn: Option<&'a str>,
}

/// Whether a request of `gate_type` may be decided before a dispatch: the run is active, no
/// turn is, and no other kind of gate's failure stands (a failed completion is not a phase
/// transition's to decide, nor the reverse).
pub(crate) fn decidable(state: &Json, gate_type: &str) -> bool {
    let idle = state["active_turns"]
        .as_object()
        .is_none_or(|m| m.is_empty());
    state["status"] == "active"
        && idle
        && state["last_gate_failure"]
            .as_object()
            .is_none_or(|f| f.get("gate_type").and_then(Json::as_str) == Some(gate_type))
}

/// Decides the pending phase request of an active run with no active turn, before a turn is
/// assigned; `state` is the run's, read under the lock the caller holds, and is updated with
/// what was written. `standing`: an operator's unblock settles the standing gate.
pub fn before_dispatch(
    store: &Store,
    state: &mut Json,
    standing: Option<Standing>,
) -> Result<Reconciled, Refusal> {
    if !decidable(state, "phase_transition") {
        return Ok(Reconciled::Unchanged);
    }
    // The config is read only when something is to be decided: a `resume` that owes no
    // request reads the history's tail and nothing more.
    let owed = source(store, state);
    if owed.is_none() && standing.is_none() {
        return Ok(Reconciled::Unchanged);
    }
    let (config, config_text) = cfg::load_text(store)?;
    let Some(source) = owed.or_else(|| {
        standing.and_then(|s| {
            super::standing::source(state, &config, s.turn, super::standing::Wanted::Phase)
        })
    }) else {
        return Ok(Reconciled::Unchanged);
    };
    if !settings::chosen(store, &config_text) {
        return Ok(Reconciled::NotJudged(format!(
            "The phase request of turn {} was not decided before this dispatch: {CONFIG} differs from the one committed at HEAD, and agentxchain config --set did not write it. Commit it, or set the value with agentxchain config --set, to have the gate judged.",
            source["turn_id"].as_str().unwrap_or("?")
        )));
    }
    let chosen = config;
    let config = &chosen;
    let from = state["phase"].as_str().unwrap_or("").to_owned();
    let mut judged = state.clone();
    if gates::needs_history(config, &from) {
        judged["history"] = Json::Array(store.read_jsonl(HISTORY));
    }
    let g = gates::evaluate_phase_exit(&judged, config, &source, store.root());
    let gate = g.gate_id.clone().unwrap_or_default();
    let to = g.next_phase.clone().unwrap_or_default();
    let at = now();
    let trigger = match g.action {
        Action::Advance => "reconciled_before_dispatch",
        Action::AwaitingHumanApproval => {
            let history = approve::run_history(store, config, &state["run_id"]);
            let run = approve::Run {
                history: &history,
                phase: &from,
            };
            match approve::transition_policy(config, &from, &to, &gate, &run) {
                Policy::AutoApprove(rule) => {
                    approve::record_transition_rule(store, &rule, &from, &to, &gate, &at)?;
                    "auto_approved"
                }
                Policy::Open => "reconciled_before_dispatch",
                Policy::RequireHuman => {
                    let mut next = state.clone();
                    next["status"] = json!("paused");
                    next["blocked_on"] = json!(format!("human_approval:{gate}"));
                    next["blocked_reason"] = Json::Null;
                    next["pending_phase_transition"] = json!({
                        "from": from, "to": to, "gate": gate,
                        "requested_by_turn": source["turn_id"], "requested_at": at,
                    });
                    store.write_json(STATE, &next)?;
                    store.emit(
                        "gate_pending",
                        &next,
                        Json::Null,
                        json!({"gate_type": "phase_transition", "from": from, "to": to}),
                    )?;
                    let _ =
                        session::checkpoint(store, &next, "phase_reconciled", Default::default());
                    *state = next;
                    return Ok(Reconciled::AwaitingApproval);
                }
            }
        }
        _ => return Ok(Reconciled::GateFailed(g.reasons)),
    };
    let gate_key = if gate.is_empty() { "no_gate" } else { &gate };
    let gate_id = if gate.is_empty() {
        Json::Null
    } else {
        json!(gate)
    };
    let mut next = state.clone();
    next["phase"] = json!(to);
    next["phase_entered_at"] = json!(at);
    for key in [
        "blocked_on",
        "blocked_reason",
        "last_gate_failure",
        "pending_phase_transition",
        "queued_phase_transition",
    ] {
        next[key] = Json::Null;
    }
    next["phase_gate_status"][gate_key] = json!("passed");
    store.write_json(STATE, &next)?;
    let _ = session::checkpoint(store, &next, "phase_reconciled", Default::default());
    let turn = match text(&source["turn_id"]) {
        Some(t) => {
            let role = text(&source["role"]).or_else(|| text(&source["assigned_role"]));
            json!({"turn_id": t, "role_id": role})
        }
        None => Json::Null,
    };
    let retired = super::intake::retire_on_phase_advance(store, &next, &chosen, &from, &at)?;
    if !retired.is_empty() {
        store.emit(
            "intent_retired_by_phase_advance",
            &next,
            turn.clone(),
            json!({"exited_phase": from, "entered_phase": to,
                "retired_count": retired.len(), "retired_intent_ids": retired}),
        )?;
    }
    store.emit(
        "phase_entered",
        &next,
        turn.clone(),
        json!({"from": from, "to": to, "gate_id": gate_key, "trigger": trigger}),
    )?;
    // The reference's rule-approved path writes its cleanup event without the turn.
    let cleanup_turn = if trigger == "auto_approved" {
        Json::Null
    } else {
        turn
    };
    let mut cleanup = approve::cleanup_payload(&from, &to, &gate, trigger);
    cleanup["gate_id"] = gate_id;
    store.emit("phase_cleanup", &next, cleanup_turn, cleanup)?;
    *state = next;
    Ok(Reconciled::Advanced {
        from,
        to,
        config: Box::new(chosen),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn store_with(history: &[Json]) -> (tempfile::TempDir, Store) {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(dir.path().join(".agentxchain")).unwrap();
        let text: String = history.iter().map(|e| format!("{e}\n")).collect();
        std::fs::write(dir.path().join(HISTORY), text).unwrap();
        let store = Store::new(dir.path());
        (dir, store)
    }

    fn entry(turn: &str, phase: &str, request: Json) -> Json {
        json!({"turn_id": turn, "phase": phase, "phase_transition_request": request})
    }

    fn picked(history: &[Json], state: Json) -> Option<Json> {
        let (_dir, store) = store_with(history);
        source(&store, &state).map(|e| e["turn_id"].clone())
    }

    #[test]
    fn the_source_is_the_turn_named_else_the_newest_matching_request_only_when_one_is_owed() {
        let history = [
            entry("t_old", "planning", json!("implementation")),
            entry("t_qa", "implementation", json!("qa")),
            entry("t_named", "planning", Json::Null),
            entry("t_last", "planning", Json::Null),
        ];
        // The last accepted turn's own request, and nothing else, when no answer is owed.
        let last = |id: &str| json!({"last_completed_turn_id": id});
        assert_eq!(picked(&history, last("t_qa")), Some(json!("t_qa")));
        assert_eq!(picked(&history, last("t_last")), None);
        assert_eq!(picked(&history, last("t_missing")), None);
        // A failure names its turn; when that turn's entry holds no request, the newest entry
        // asking for the same transition from the same phase (t_qa asks for another one).
        let failed = |turn: &str, from: &str, to: &str| {
            json!({"last_completed_turn_id": "t_last", "last_gate_failure": {
                "gate_type": "phase_transition", "requested_by_turn": turn,
                "from_phase": from, "to_phase": to}})
        };
        assert_eq!(
            picked(&history, failed("t_qa", "planning", "implementation")),
            Some(json!("t_qa"))
        );
        assert_eq!(
            picked(&history, failed("t_named", "planning", "implementation")),
            Some(json!("t_old"))
        );
        assert_eq!(
            picked(
                &history,
                failed("t_named", "implementation", "implementation")
            ),
            None,
            "the phase must match too"
        );
        assert_eq!(
            picked(&history, failed("t_named", "planning", "qa")),
            None,
            "the target must match too"
        );
        // A queued request names its turn the same way.
        let queued = json!({"last_completed_turn_id": "t_last", "queued_phase_transition": {
            "from": "implementation", "to": "qa", "requested_by_turn": "t_named"}});
        assert_eq!(picked(&history, queued), Some(json!("t_qa")));
        // A turn's id twice in the history (a copy appended): neither is taken; a reissued
        // turn's line is not the turn's entry.
        let again = [
            entry("t_x", "planning", json!("implementation")),
            entry("t_x", "planning", json!("implementation")),
        ];
        assert_eq!(picked(&again, last("t_x")), None);
        let owed = json!({"last_gate_failure": {"gate_type": "phase_transition",
            "requested_by_turn": "t_x", "from_phase": "planning", "to_phase": "implementation"}});
        assert_eq!(picked(&again, owed), None, "and no other entry stands in");
        let mut reissued = entry("t_x", "planning", Json::Null);
        reissued["status"] = json!("reissued");
        let once = [entry("t_x", "planning", json!("implementation")), reissued];
        assert_eq!(picked(&once, last("t_x")), Some(json!("t_x")));
    }

    #[test]
    fn nothing_is_decided_for_a_run_with_a_turn_or_another_gates_failure() {
        let (_dir, store) = store_with(&[entry("t1", "planning", json!("implementation"))]);
        for state in [
            json!({"status": "active", "phase": "planning", "active_turns": {"t2": {}}, "last_completed_turn_id": "t1"}),
            json!({"status": "active", "phase": "planning", "active_turns": {}, "last_completed_turn_id": "t1",
                   "last_gate_failure": {"gate_type": "run_completion", "requested_by_turn": "t1"}}),
        ] {
            let mut s = state.clone();
            assert_eq!(
                before_dispatch(&store, &mut s, None).unwrap(),
                Reconciled::Unchanged
            );
            assert_eq!(s, state);
        }
    }
}
