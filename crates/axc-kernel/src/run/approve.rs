//! Approvals: the approval policy that decides whether a passed gate needing a person may be
//! approved by rule (`approval_policy.phase_transitions.rules`, `approval_policy.run_completion`),
//! and the two commands a person runs — `approve-transition` and `approve-completion`.
//! Credentialed gates are never approved by rule.

use serde_json::{Value as Json, json};

use super::config as cfg;
use super::store::{STATE, Store};
use super::{Refusal, now, session, transitions_err};
use crate::transitions;

/// What the policy says of a passed gate.
#[derive(Clone, Debug, PartialEq)]
pub enum Policy {
    /// The gate needs no person: go on.
    Open,
    /// A rule approves it (the rule, as recorded in the ledger).
    AutoApprove(Json),
    RequireHuman,
}

fn credentialed(config: &Json, gate: &str) -> bool {
    config["gates"][gate]["credentialed"] == true
}

/// What a rule's `when` is judged against: the run's accepted turns (with the one being
/// accepted) and the phase it is in.
pub struct Run<'a> {
    pub history: &'a [Json],
    pub phase: &'a str,
}

/// Whether a rule's `when` holds for a passed `gate`: every condition it names must (the
/// reference's `checkConditions`). `roles_participated`: each role has an accepted turn in the
/// phase; `all_phases_visited`: every routed phase has one (the current phase counts);
/// `credentialed_gate` may only assert `false`.
fn when_holds(when: &Json, config: &Json, run: &Run) -> bool {
    let Some(w) = when.as_object() else {
        return true;
    };
    // The gate has passed when the policy is asked.
    if w.get("gate_passed").is_some_and(|v| v == false) {
        return false;
    }
    // `credentialed_gate` may only assert `false`: `true` never holds. (A credentialed gate
    // never reaches a rule: both policies need a person for it before asking.)
    if w.get("credentialed_gate") == Some(&json!(true)) {
        return false;
    }
    if let Some(roles) = w
        .get("roles_participated")
        .and_then(Json::as_array)
        .filter(|r| !r.is_empty())
    {
        let took_part = |role: &Json| {
            run.history
                .iter()
                .any(|t| t["phase"] == run.phase && t["role"] == *role)
        };
        if !roles.iter().all(took_part) {
            return false;
        }
    }
    if w.get("all_phases_visited") == Some(&json!(true)) {
        let visited = |ph: &str| ph == run.phase || run.history.iter().any(|t| t["phase"] == ph);
        if !cfg::phases(config).iter().all(|ph| visited(ph)) {
            return false;
        }
    }
    true
}

/// Whether judging the approval policy needs the run's accepted turns (a rule names
/// `roles_participated` or `all_phases_visited`).
pub fn needs_history(config: &Json) -> bool {
    let p = &config["approval_policy"];
    let names = |when: &Json| {
        when.get("roles_participated").is_some() || when.get("all_phases_visited").is_some()
    };
    p["phase_transitions"]["rules"]
        .as_array()
        .into_iter()
        .flatten()
        .any(|r| names(&r["when"]))
        || names(&p["run_completion"]["when"])
}

/// The policy for moving `from` → `to` through `gate`: the first rule naming the move decides
/// (one that requires a person, or approves only when its `when` holds — a rule whose
/// conditions fail needs a person, it does not fall through to the default), else the default.
pub fn transition_policy(config: &Json, from: &str, to: &str, gate: &str, run: &Run) -> Policy {
    let cred = credentialed(config, gate);
    if cred {
        return Policy::RequireHuman;
    }
    let p = &config["approval_policy"]["phase_transitions"];
    for rule in p["rules"].as_array().into_iter().flatten() {
        let from_ok = rule["from_phase"].as_str().is_none_or(|f| f == from);
        let to_ok = rule["to_phase"].as_str().is_none_or(|t| t == to);
        if !(from_ok && to_ok) {
            continue;
        }
        return if rule["action"] == "auto_approve" && when_holds(&rule["when"], config, run) {
            Policy::AutoApprove(rule.clone())
        } else {
            Policy::RequireHuman
        };
    }
    if p["default"] == "auto_approve" {
        Policy::AutoApprove(json!({"action": "auto_approve", "default": true}))
    } else {
        Policy::RequireHuman
    }
}

/// The policy for completing the run through `gate`.
pub fn completion_policy(config: &Json, gate: &str, run: &Run) -> Policy {
    let cred = credentialed(config, gate);
    let p = &config["approval_policy"]["run_completion"];
    if cred || p["action"] != "auto_approve" {
        return Policy::RequireHuman;
    }
    if when_holds(&p["when"], config, run) {
        Policy::AutoApprove(p.clone())
    } else {
        Policy::RequireHuman
    }
}

/// The accepted turns of run `run_id` a policy rule's conditions are judged by: read only when
/// a rule names them ([`needs_history`]).
pub fn run_history(store: &super::Store, config: &Json, run_id: &Json) -> Vec<Json> {
    if !needs_history(config) {
        return Vec::new();
    }
    store
        .read_jsonl(super::store::HISTORY)
        .into_iter()
        .filter(|e| e["run_id"] == *run_id)
        .collect()
}

/// The `approval_policy` ledger line of a phase transition a rule approved.
pub fn record_transition_rule(
    store: &super::Store,
    rule: &Json,
    from: &str,
    to: &str,
    gate: &str,
    at: &str,
) -> Result<(), Refusal> {
    store.append_jsonl(
        super::store::LEDGER,
        &json!({
            "type": "approval_policy", "gate_type": "phase_transition",
            "action": "auto_approve", "matched_rule": rule,
            "from_phase": from, "to_phase": to,
            "reason": format!("rule matched: {from} → {to} auto-approved"),
            "gate_id": gate, "timestamp": at,
        }),
    )
}

/// The ledger line of a run completion an approval rule approved (`approval_policy.run_completion`):
/// `accept-turn`'s and the completion decided before a dispatch.
pub fn record_completion_rule(
    store: &super::Store,
    rule: &Json,
    gate: &str,
    at: &str,
) -> Result<(), Refusal> {
    store.append_jsonl(
        super::store::LEDGER,
        &json!({
            "type": "approval_policy", "gate_type": "run_completion",
            "action": "auto_approve", "matched_rule": rule,
            "reason": "run_completion policy auto-approved",
            "gate_id": if gate.is_empty() { Json::Null } else { json!(gate) },
            "timestamp": at,
        }),
    )
}

/// The run enters `to` through `gate` (passed).
pub fn enter_phase(state: &mut Json, gate: &str, to: &str) {
    state["phase"] = json!(to);
    state["phase_entered_at"] = json!(now());
    if !gate.is_empty() {
        state["phase_gate_status"][gate] = json!("passed");
    }
    state["last_gate_failure"] = Json::Null;
}

pub fn cleanup_payload(from: &str, to: &str, gate: &str, trigger: &str) -> Json {
    json!({"from_phase": from, "removed_turn_ids": [], "cleared_budget_turn_ids": [], "removed_dispatch_turn_ids": [], "to_phase": to, "gate_id": gate, "trigger": trigger})
}

/// The run completes through `gate` (passed).
pub fn complete(state: &mut Json, gate: &str, at: &str) {
    state["status"] = json!("completed");
    state["completed_at"] = json!(at);
    state["blocked_on"] = Json::Null;
    if !gate.is_empty() {
        state["phase_gate_status"][gate] = json!("passed");
    }
}

/// What follows a run's completion once its state is written: the `run_completed` event, the
/// run history's `completed` line, the session checkpoint.
pub fn completed(store: &Store, state: &Json, config: &Json, at: &str) -> Result<(), Refusal> {
    store.emit(
        "run_completed",
        state,
        Json::Null,
        json!({"completed_at": at}),
    )?;
    super::run_history::record_completed(store, state, config)?;
    let _ = session::checkpoint(store, state, "run_completed", Default::default());
    Ok(())
}

/// What an approval did.
#[derive(Clone, Debug)]
pub struct Approved {
    pub pending: Json,
    pub state: Json,
}

fn pending_or(state: &Json, key: &str, missing: &str) -> Result<Json, Refusal> {
    match &state[key] {
        Json::Null => {
            let detail = if key == "pending_run_completion" && state["status"] == "completed" {
                "  This run is already completed.".to_owned()
            } else if key == "pending_run_completion" {
                format!(
                    "  Current phase: {}, status: {}",
                    state["phase"].as_str().unwrap_or(""),
                    state["status"].as_str().unwrap_or("")
                )
            } else {
                format!("  Current phase: {}", state["phase"].as_str().unwrap_or(""))
            };
            Err(Refusal::new(format!("{missing}\n{detail}")))
        }
        p => Ok(p.clone()),
    }
}

/// Why an approval was not given.
#[derive(Clone, Debug)]
pub enum NotApproved {
    Refused(Refusal),
    /// A `before_gate` hook halted it: the run is blocked, the request still pending.
    Hook(Box<super::hooked::Halted>),
}

impl From<Refusal> for NotApproved {
    fn from(r: Refusal) -> Self {
        NotApproved::Refused(r)
    }
}

impl std::fmt::Display for NotApproved {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            NotApproved::Refused(r) => f.write_str(&r.message),
            NotApproved::Hook(h) => h.fmt(f),
        }
    }
}

/// The `before_gate` hooks of an approval (the reference's `approvePhaseTransition` and
/// `approveRunCompletion`): a blocking one that blocks, or any that tampers, blocks the run
/// with the request still pending, for a person to approve again once the hook is fixed.
fn before_gate(
    store: &Store,
    config: &Json,
    state: &Json,
    payload: Json,
    pending: &Json,
    what: &str,
) -> Result<(), NotApproved> {
    let hooks = super::hooked::trusted(store, config)?;
    if !crate::hooks::declares(hooks, "before_gate") {
        return Ok(());
    }
    let mut payload = payload;
    payload["history_length"] = json!(store.count_jsonl(super::store::HISTORY));
    let run = super::hooked::run(
        store,
        hooks,
        "before_gate",
        &payload,
        &state["run_id"],
        None,
        Vec::new(),
    );
    let Some(run) = run.filter(|r| !r.ok) else {
        return Ok(());
    };
    let fallback = format!("before_gate hook \"{}\" blocked {what}", run.halting_hook());
    let halted = super::hooked::block(
        store,
        state,
        config,
        &run,
        &super::hooked::Halt {
            phase: "before_gate",
            turn_id: pending["requested_by_turn"].as_str(),
            retained: false,
            fallback: &fallback,
        },
    )?;
    Err(NotApproved::Hook(Box::new(halted)))
}

/// `approve-transition`: a person approves the pending phase transition.
pub fn approve_transition(store: &Store) -> Result<Approved, NotApproved> {
    let config = cfg::load(store)?;
    let _lock = store.lock()?;
    let state = store.state()?;
    let pending = pending_or(
        &state,
        "pending_phase_transition",
        "No pending phase transition to approve.",
    )?;
    // The status is checked before the hooks run, as the approval itself checks it.
    transitions::approve_transition(&state, &now()).map_err(transitions_err)?;
    before_gate(
        store,
        &config,
        &state,
        json!({"gate_type": "phase_transition", "current_phase": pending["from"],
            "target_phase": pending["to"], "gate_config": pending}),
        &pending,
        "phase transition",
    )?;
    let at = now();
    let next = transitions::approve_transition(&state, &at).map_err(transitions_err)?;
    let mut next = next;
    next["pending_phase_transition"] = Json::Null;
    store.write_json(STATE, &next)?;
    let from = pending["from"].clone();
    let to = pending["to"].clone();
    let gate = pending["gate"].clone();
    store.emit(
        "gate_approved",
        &next,
        json!({"turn_id": pending["requested_by_turn"], "role_id": null}),
        json!({"gate_id": gate, "gate_type": "phase_transition", "from": from, "to": to, "requested_by_turn": pending["requested_by_turn"]}),
    )?;
    store.emit(
        "phase_entered",
        &next,
        json!({"turn_id": pending["requested_by_turn"], "role_id": null}),
        json!({"from": from, "to": to, "gate_id": gate, "trigger": "human_approved", "requested_by_turn": pending["requested_by_turn"]}),
    )?;
    store.emit(
        "phase_cleanup",
        &next,
        Json::Null,
        cleanup_payload(
            from.as_str().unwrap_or(""),
            to.as_str().unwrap_or(""),
            gate.as_str().unwrap_or(""),
            "human_approved",
        ),
    )?;
    let _ = session::checkpoint(store, &next, "phase_approved", Default::default());
    Ok(Approved {
        pending,
        state: next,
    })
}

/// `approve-completion`: a person approves the pending run completion.
pub fn approve_completion(store: &Store) -> Result<Approved, NotApproved> {
    let config = cfg::load(store)?;
    let _lock = store.lock()?;
    let state = store.state()?;
    let pending = pending_or(
        &state,
        "pending_run_completion",
        "No pending run completion to approve.",
    )?;
    transitions::approve_completion(&state, &now()).map_err(transitions_err)?;
    before_gate(
        store,
        &config,
        &state,
        json!({"gate_type": "run_completion", "current_phase": state["phase"], "target_phase": null,
            "gate_config": pending}),
        &pending,
        "run completion",
    )?;
    let at = now();
    let next = transitions::approve_completion(&state, &at).map_err(transitions_err)?;
    store.write_json(STATE, &next)?;
    store.emit(
        "gate_approved",
        &next,
        Json::Null,
        json!({"gate_type": "run_completion"}),
    )?;
    completed(store, &next, &config, &at)?;
    Ok(Approved {
        pending,
        state: next,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn config() -> Json {
        json!({
            "routing": {"planning": {"exit_gate": "a"}, "implementation": {"exit_gate": "b"}},
            "gates": {"a": {"credentialed": false}, "b": {"credentialed": true}},
            "approval_policy": {
                "phase_transitions": {"default": "require_human", "rules": [
                    {"from_phase": "planning", "to_phase": "implementation", "action": "auto_approve", "when": {"gate_passed": true, "credentialed_gate": false}}
                ]},
                "run_completion": {"action": "auto_approve", "when": {"gate_passed": true, "all_phases_visited": true, "credentialed_gate": false}}
            }
        })
    }

    #[test]
    fn a_matching_rule_approves_and_anything_else_needs_a_person() {
        let c = config();
        let run = Run {
            history: &[],
            phase: "planning",
        };
        assert!(matches!(
            transition_policy(&c, "planning", "implementation", "a", &run),
            Policy::AutoApprove(_)
        ));
        assert_eq!(
            transition_policy(&c, "implementation", "qa", "a", &run),
            Policy::RequireHuman
        );
        // A credentialed gate is never approved by rule.
        assert_eq!(
            transition_policy(&c, "planning", "implementation", "b", &run),
            Policy::RequireHuman
        );
    }

    #[test]
    fn a_rule_whose_conditions_fail_needs_a_person_even_when_the_default_approves() {
        let mut c = config();
        c["approval_policy"]["phase_transitions"] = json!({"default": "auto_approve", "rules": [
            {"from_phase": "planning", "action": "auto_approve", "when": {"roles_participated": ["eng_director", "pm"]}}
        ]});
        let pm_only = [json!({"phase": "planning", "role": "pm"})];
        let run = Run {
            history: &pm_only,
            phase: "planning",
        };
        assert_eq!(
            transition_policy(&c, "planning", "implementation", "a", &run),
            Policy::RequireHuman
        );
        // The one role named took part: the rule approves.
        c["approval_policy"]["phase_transitions"]["rules"][0]["when"]["roles_participated"] =
            json!(["pm"]);
        assert!(matches!(
            transition_policy(&c, "planning", "implementation", "a", &run),
            Policy::AutoApprove(_)
        ));
        c["approval_policy"]["phase_transitions"]["rules"][0]["when"]["roles_participated"] =
            json!(["eng_director", "pm"]);
        // A turn of the role in another phase does not count.
        let elsewhere = [
            json!({"phase": "planning", "role": "pm"}),
            json!({"phase": "qa", "role": "eng_director"}),
        ];
        let run = Run {
            history: &elsewhere,
            phase: "planning",
        };
        assert_eq!(
            transition_policy(&c, "planning", "implementation", "a", &run),
            Policy::RequireHuman
        );
        let both = [
            json!({"phase": "planning", "role": "pm"}),
            json!({"phase": "planning", "role": "eng_director"}),
        ];
        let run = Run {
            history: &both,
            phase: "planning",
        };
        assert!(matches!(
            transition_policy(&c, "planning", "implementation", "a", &run),
            Policy::AutoApprove(_)
        ));
        // `credentialed_gate: true` never holds.
        c["approval_policy"]["phase_transitions"]["rules"][0]["when"] =
            json!({"credentialed_gate": true});
        assert_eq!(
            transition_policy(&c, "planning", "implementation", "a", &run),
            Policy::RequireHuman
        );
        // No rule names the move: the default decides.
        assert!(matches!(
            transition_policy(&c, "implementation", "qa", "a", &run),
            Policy::AutoApprove(_)
        ));
        assert!(needs_history(&config()));
    }

    #[test]
    fn completion_by_rule_needs_every_phase_visited() {
        let c = config();
        let one = vec![json!({"phase": "planning"})];
        let r = Run {
            history: &one,
            phase: "planning",
        };
        assert_eq!(completion_policy(&c, "a", &r), Policy::RequireHuman);
        // The current phase counts as visited.
        let r = Run {
            history: &one,
            phase: "implementation",
        };
        assert!(matches!(
            completion_policy(&c, "a", &r),
            Policy::AutoApprove(_)
        ));
        let both = vec![
            json!({"phase": "planning"}),
            json!({"phase": "implementation"}),
        ];
        let r = Run {
            history: &both,
            phase: "implementation",
        };
        assert!(matches!(
            completion_policy(&c, "a", &r),
            Policy::AutoApprove(_)
        ));
        assert_eq!(completion_policy(&c, "b", &r), Policy::RequireHuman);
        // A completion rule that requires a person does, whatever its conditions.
        let mut c = config();
        c["approval_policy"]["run_completion"]["action"] = json!("require_human");
        assert_eq!(completion_policy(&c, "a", &r), Policy::RequireHuman);
    }
}
