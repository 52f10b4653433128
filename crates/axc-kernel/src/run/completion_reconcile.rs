//! A run completion decided before the next dispatch (the reference's
//! `reconcileRunCompletionBeforeDispatch`), which only an operator's `unblock` of a run in its
//! last phase asks for ([`super::standing`]): the turn it ends asked to complete the run, or
//! escalated to a person for the final gate with its files in place, and the gate still
//! stands `pending`. The gate is judged as `accept-turn` judges a completion request, by the
//! config a person chose (the one committed at HEAD, or one `config --set` wrote), read under
//! the lock. A gate that passes and needs no person completes the run
//! (`reconciled_before_dispatch`); one an approval rule approves completes it with the rule in
//! the ledger (`auto_approved`). **Departure from the reference:** a gate that needs a person
//! pauses the run on it (`pending_run_completion`) for `approve-completion`; the reference
//! approved it itself, taking the `unblock` for the gate's approval.

use serde_json::{Value as Json, json};

use super::approve::{self, Policy};
use super::config as cfg;
use super::phase_reconcile::Standing;
use super::store::{CONFIG, HISTORY, STATE, Store};
use super::{Refusal, now, session, settings};
use crate::gates::{self, Action};
use crate::js::truthy_str as text;

/// What deciding the run's completion did.
#[derive(Clone, Debug, PartialEq)]
pub enum Completion {
    /// Nothing to decide.
    Unchanged,
    /// The gate still fails, for these reasons.
    GateFailed(Vec<String>),
    /// The run completed.
    Completed,
    /// The gate passed and needs a person: the run is paused on it.
    AwaitingApproval,
    /// Nothing was decided, for this reason.
    NotJudged(String),
}

/// Decides the completion the turn `unblock` ends asked for, on the run's `state` (read under
/// the lock the caller holds, and updated with what was written).
pub fn before_dispatch(
    store: &Store,
    state: &mut Json,
    standing: Standing,
) -> Result<Completion, Refusal> {
    if !super::phase_reconcile::decidable(state, "run_completion") {
        return Ok(Completion::Unchanged);
    }
    let (config, config_text) = cfg::load_text(store)?;
    let asked = text(&state["last_gate_failure"]["requested_by_turn"])
        .or_else(|| text(&state["queued_run_completion"]["requested_by_turn"]))
        .or_else(|| text(&state["last_completed_turn_id"]));
    // The turn's one accepted entry, taken as asking (two — a copy appended later — decide
    // nothing); else the request the standing gate is judged with.
    let entry = asked.and_then(|id| {
        let [entry] = super::phase_reconcile::accepted_entries(store, id)
            .try_into()
            .ok()?;
        Some(entry)
    });
    let source = match entry {
        Some(mut e) => {
            e["run_completion_request"] = json!(true);
            e
        }
        None => match super::standing::source(
            state,
            &config,
            standing.turn,
            super::standing::Wanted::Completion,
        ) {
            Some(s) => s,
            None => return Ok(Completion::Unchanged),
        },
    };
    if !settings::chosen(store, &config_text) {
        return Ok(Completion::NotJudged(format!(
            "The run completion asked by turn {} was not decided: {CONFIG} differs from the one committed at HEAD, and agentxchain config --set did not write it. Commit it, or set the value with agentxchain config --set, to have the gate judged.",
            source["turn_id"].as_str().unwrap_or("?")
        )));
    }
    let phase = state["phase"].as_str().unwrap_or("").to_owned();
    let mut judged = state.clone();
    if gates::needs_history(&config, &phase) {
        judged["history"] = Json::Array(store.read_jsonl(HISTORY));
    }
    let g = gates::evaluate_run_completion(&judged, &config, &source, store.root());
    let gate = g.gate_id.clone().unwrap_or_default();
    let at = now();
    let trigger = match g.action {
        Action::Complete => "reconciled_before_dispatch",
        Action::AwaitingHumanApproval => {
            let history = approve::run_history(store, &config, &state["run_id"]);
            let run = approve::Run {
                history: &history,
                phase: &phase,
            };
            match approve::completion_policy(&config, &gate, &run) {
                Policy::AutoApprove(rule) => {
                    approve::record_completion_rule(store, &rule, &gate, &at)?;
                    "auto_approved"
                }
                Policy::Open => "reconciled_before_dispatch",
                Policy::RequireHuman => {
                    let mut next = state.clone();
                    next["status"] = json!("paused");
                    next["blocked_on"] = json!(format!("human_approval:{gate}"));
                    next["blocked_reason"] = Json::Null;
                    next["pending_run_completion"] = json!({
                        "gate": gate, "requested_by_turn": source["turn_id"], "requested_at": at,
                    });
                    next["queued_run_completion"] = Json::Null;
                    next["queued_phase_transition"] = Json::Null;
                    store.write_json(STATE, &next)?;
                    store.emit(
                        "gate_pending",
                        &next,
                        Json::Null,
                        json!({"gate_type": "run_completion"}),
                    )?;
                    // The checkpoint a decision before a dispatch writes (as the phase's).
                    let _ =
                        session::checkpoint(store, &next, "phase_reconciled", Default::default());
                    *state = next;
                    return Ok(Completion::AwaitingApproval);
                }
            }
        }
        _ => return Ok(Completion::GateFailed(g.reasons)),
    };
    let mut next = state.clone();
    next["status"] = json!("completed");
    next["completed_at"] = json!(at);
    for key in [
        "blocked_on",
        "blocked_reason",
        "last_gate_failure",
        "pending_run_completion",
        "queued_run_completion",
        "queued_phase_transition",
    ] {
        next[key] = Json::Null;
    }
    let gate_key = if gate.is_empty() { "no_gate" } else { &gate };
    next["phase_gate_status"][gate_key] = json!("passed");
    store.write_json(STATE, &next)?;
    let turn = match text(&source["turn_id"]) {
        Some(t) => {
            let role = text(&source["role"]).or_else(|| text(&source["assigned_role"]));
            json!({"turn_id": t, "role_id": role})
        }
        None => Json::Null,
    };
    store.emit(
        "gate_approved",
        &next,
        turn,
        json!({"gate_type": "run_completion",
               "gate_id": if gate.is_empty() { Json::Null } else { json!(gate) },
               "requested_by_turn": source["turn_id"], "trigger": trigger}),
    )?;
    approve::completed(store, &next, &config, &at)?;
    *state = next;
    Ok(Completion::Completed)
}
