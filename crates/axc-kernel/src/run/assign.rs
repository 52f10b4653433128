//! `resume` (and `step`'s first half): start the run when it is idle, reactivate it when it is
//! blocked (re-dispatching the retained turn), and assign the next turn with its baseline,
//! budget reservation and dispatch bundle.

use serde_json::{Value as Json, json};

use super::config as cfg;
use super::store::{STATE, Store};
use super::{Refusal, dispatch, escalate, event_turn, git, intent_of, new_id, now, paths, session};
use crate::transitions;

/// How `resume` was asked.
#[derive(Clone, Debug, Default)]
pub struct Options {
    /// `--role`: the role to assign instead of the routing's choice.
    pub role: Option<String>,
    /// `--turn`: the retained turn to re-dispatch.
    pub turn: Option<String>,
    /// Who resumes a blocked run (`operator_unblock` from `unblock`).
    pub via: Option<String>,
    /// Stop before assigning when an approved (or planned) intake intent waits, so the
    /// caller binds it to the turn (`resume` and `step`; see [`Resumed::bind`]).
    pub bind_intents: bool,
}

/// What `resume` did.
#[derive(Clone, Debug)]
pub struct Resumed {
    /// A new run was started with this id.
    pub initialized: Option<String>,
    /// A blocked run was reactivated.
    pub reactivated: bool,
    /// The human escalation that reactivation resolved (its record, with `resolved_via`).
    pub resolved: Option<Json>,
    /// The retained turn was dispatched again (not a new turn).
    pub redispatched: bool,
    /// The pending phase request was decided before the dispatch: the run went from the first
    /// phase to the second ([`super::phase_reconcile`]).
    pub advanced: Option<(String, String)>,
    /// Why the pending phase request was not decided, when it was not.
    pub undecided: Option<String>,
    /// The state the run context is printed from (before the turn was assigned).
    pub context: Json,
    pub turn: Json,
    pub state: Json,
    /// Nothing was assigned: this intent waits, for a turn of this role
    /// (`intake::bind_next`, with no lock held).
    pub bind: Option<(String, String)>,
}

/// Why `resume` stopped before assigning, with what the command line prints.
#[derive(Clone, Debug)]
pub enum Stop {
    Refused(Refusal),
    /// Turns are active already (the command lists them).
    TurnsActive(Vec<Json>, Json),
    /// A gate awaits a person.
    AwaitingApproval(Json),
    /// The assignment itself was refused (`Failed to assign turn: …`), after the run context.
    AssignFailed(Box<AssignFailed>),
    /// An operator's `unblock` settled the run's standing exit gate without a turn to assign
    /// ([`super::standing`]).
    Settled(Box<Settled>),
}

/// [`Stop::Settled`]: the escalation the reactivation resolved, and where the standing gate
/// left the run.
#[derive(Clone, Debug)]
pub struct Settled {
    pub resolved: Option<Json>,
    pub state: Json,
    pub outcome: SettledBy,
}

/// How the standing gate settled.
#[derive(Clone, Debug)]
pub enum SettledBy {
    /// The gate needs a person: the run is paused on it (`approve-transition`,
    /// `approve-completion`).
    AwaitingApproval,
    /// The run completed (`Completed run before dispatch`).
    Completed,
    /// The gate did not let the run go on: it is blocked again for a person
    /// (`human:unblock_reconcile_failed`, `human:unblock_completion_reconcile_failed`).
    Unsettled {
        /// The completion was asked (else the next phase).
        completion: bool,
        /// Why the gate was not judged, when it was not.
        undecided: Option<String>,
        /// Why the gate failed, when it was judged.
        reasons: Vec<String>,
        /// The human escalation raised for the new block.
        escalation: Option<Json>,
    },
}

/// [`Stop::AssignFailed`]: the run context, what happened before the assignment failed (as
/// [`Resumed`] says it), and why it failed.
#[derive(Clone, Debug)]
pub struct AssignFailed {
    pub context: Json,
    pub initialized: Option<String>,
    pub reactivated: bool,
    pub resolved: Option<Json>,
    pub advanced: Option<(String, String)>,
    pub undecided: Option<String>,
    pub error: String,
    /// The hook that halted it, when one did (`after_dispatch`: the run is blocked, the turn
    /// retained).
    pub hook: Option<Box<super::hooked::Halted>>,
}

impl From<Refusal> for Stop {
    fn from(r: Refusal) -> Stop {
        Stop::Refused(r)
    }
}

/// The role the routing assigns next: the recommended one, else the phase's entry role.
pub fn next_role(state: &Json, config: &Json) -> Option<String> {
    state["next_recommended_role"]
        .as_str()
        .filter(|r| config["roles"].get(*r).is_some())
        .or_else(|| cfg::entry_role(config, state["phase"].as_str().unwrap_or("")))
        .map(str::to_owned)
}

/// The clean-baseline rule for code-writing turns: dirty agent files refuse the assignment,
/// naming the accepted turn that must be checkpointed first when they are all its files.
pub fn clean_baseline_error(store: &Store, authority: &str) -> Option<String> {
    baseline_error(store, authority, true)
}

/// [`clean_baseline_error`] without naming the turn to checkpoint: the reference's
/// `checkCleanBaseline` reason, as `approve-transition` prints it about the next turn.
pub fn plain_baseline_error(store: &Store, authority: &str) -> Option<String> {
    baseline_error(store, authority, false)
}

fn baseline_error(store: &Store, authority: &str, checkpoint_hint: bool) -> Option<String> {
    if authority == "review_only" {
        return None;
    }
    if !git::is_repo(store.root()) {
        // No repository at all: nothing to keep clean. One git cannot read is not "clean".
        return git::broken(store.root()).then(|| {
            "the repository cannot be read by git (a broken HEAD or ref, or a repository git refuses): repair it before assigning a code-writing turn".to_owned()
        });
    }
    let Some(snap) = git::snapshot(store.root()) else {
        return Some("the repository cannot be read by git (a broken HEAD or ref, or a repository git refuses): repair it before assigning a code-writing turn".to_owned());
    };
    // A config a person set with `config --set` and has not committed yet is the config the
    // turn is judged by, not work in the way of its baseline.
    let set_by_person =
        |p: &str| p == super::store::CONFIG && super::settings::on_disk_set_by_person(store);
    let dirty: Vec<String> = snap
        .changes
        .into_iter()
        .filter(|p| !paths::is_baseline_exempt(p) && !set_by_person(p))
        .collect();
    if dirty.is_empty() {
        return None;
    }
    if let Some(last) = checkpoint_hint
        .then(|| store.last_jsonl(super::store::HISTORY))
        .flatten()
        .as_ref()
        .filter(|e| e["checkpoint_sha"].is_null())
    {
        let files: Vec<&str> = last["observed_artifact"]["files_changed"]
            .as_array()
            .or(last["files_changed"].as_array())
            .into_iter()
            .flatten()
            .filter_map(Json::as_str)
            .filter(|f| !paths::is_operational(f))
            .collect();
        let id = last["turn_id"].as_str().unwrap_or("");
        if !files.is_empty()
            && axc_core::util::is_plain_id(id)
            && dirty.iter().all(|d| files.contains(&d.as_str()))
        {
            return Some(format!(
                "Accepted turn {id} is not checkpointed yet. Run agentxchain checkpoint-turn --turn {id} before assigning the next code-writing turn."
            ));
        }
    }
    Some(format!(
        "Working tree has uncommitted changes in actor-owned files: {}. Authoritative/proposed turns require a clean baseline in v1. Commit or stash those changes before assigning the next code-writing turn.",
        dirty.join(", ")
    ))
}

/// Assigns a turn of `role` in the active `state` and dispatches it: the new state (written),
/// the turn.
///
/// `intake` is the intake context of the intent the turn serves (`intake start`): the turn
/// carries it, its bundle shows it, and its events name the intent.
pub fn assign_and_dispatch(
    store: &Store,
    config: &Json,
    state: &Json,
    role: &str,
    intake: Option<&Json>,
) -> Result<(Json, Json), NotAssigned> {
    let hooks = super::hooked::trusted(store, config).map_err(|r| r.message)?;
    let turn_id = new_id("turn");
    let assigned_at = now();
    // What remains of the budget is judged against the limit configured now (a person may
    // have raised it), and written so (the reference's `reconcileBudgetStatusWithConfig`).
    let state = &crate::budget::reconcile(state.clone(), config, Some(&assigned_at));
    let minutes = transitions::turn_timeout_minutes(config);
    let mut next = transitions::assign(state, config, role, &turn_id, &assigned_at, minutes)?;
    // Budget: the turn reserves the per-turn maximum out of what is left.
    let mut reservations = state["budget_reservations"]
        .as_object()
        .cloned()
        .unwrap_or_default();
    if let (Some(cost), Some(remaining)) = (
        cfg::per_turn_budget(config).filter(|c| *c > 0.0),
        state["budget_status"]["remaining_usd"].as_f64(),
    ) {
        let reserved: f64 = reservations
            .values()
            .filter_map(|r| r["reserved_usd"].as_f64())
            .sum();
        let available = remaining - reserved;
        if cost > available && !crate::budget::warns(config) {
            return Err(format!(
                "Cannot assign turn: estimated cost ${} exceeds available budget ${} (after reservations)",
                axc_core::util::to_fixed(cost, 2),
                axc_core::util::to_fixed(available, 2)
            )
            .into());
        }
        reservations.insert(
            turn_id.clone(),
            json!({"reserved_usd": super::usd(cost), "role_id": role, "created_at": now()}),
        );
    }
    if let Some(e) = clean_baseline_error(store, cfg::write_authority(config, role)) {
        return Err(e.into());
    }
    before_assignment(store, config, hooks, state, role)?;
    let snap = git::snapshot(store.root());
    // No turn, review-only ones included, is dispatched in a repository git cannot read (an
    // agent can break `.git/config` for a moment): its baseline would have no commit to
    // observe it by or hold its config to.
    if snap.is_none() && git::has_git_dir(store.root()) {
        return Err("the repository cannot be read by git (a broken HEAD or ref, or a repository git refuses): repair it before assigning a turn".to_owned().into());
    }
    let baseline = git::baseline_of(store.root(), snap.as_ref(), &now());
    let assigned = next["active_turns"][&turn_id].clone();
    let mut turn = json!({
        "turn_id": turn_id,
        "run_id": assigned["run_id"],
        "assigned_role": role,
        "status": "dispatched",
        "attempt": 1,
        "assigned_at": assigned_at,
        "deadline_at": assigned["deadline_at"],
        "runtime_id": assigned["runtime_id"],
        "baseline": baseline,
        "assigned_sequence": assigned["assigned_sequence"],
        "concurrent_with": assigned["concurrent_with"],
    });
    if let Some(ctx) = intake {
        turn["intake_context"] = ctx.clone();
    }
    turn["dispatched_at"] = json!(now());
    next["active_turns"][&turn_id] = turn.clone();
    next["budget_reservations"] = Json::Object(reservations);
    if next.get("delegation_queue").is_none() {
        next["delegation_queue"] = json!([]);
    }
    if let Some(halted) =
        dispatch::write_hooked_bundle(store, config, hooks, &next, &turn).map_err(|r| r.message)?
    {
        return Err(NotAssigned::Hook(Box::new(halted)));
    }
    store.write_json(STATE, &next).map_err(|r| r.message)?;
    let _ = session::checkpoint(
        store,
        &next,
        "turn_assigned",
        session::Extra {
            role: Some(role),
            dispatch_dir: Some(dispatch::bundle_rel(&turn_id)),
            turn_baseline: Some(&baseline),
            snapshot: snap.as_ref(),
        },
    );
    store
        .emit_for(
            "turn_dispatched",
            &next,
            event_turn(&turn),
            intent_of(&turn),
            json!({}),
        )
        .map_err(|r| r.message)?;
    Ok((next, turn))
}

/// Why a turn was not assigned or not dispatched.
#[derive(Clone, Debug)]
pub enum NotAssigned {
    /// The reference's `Failed to assign turn: …` text.
    Refused(String),
    /// A hook halted it: `before_assignment` (nothing assigned; the run blocked only on a
    /// tamper) or `after_dispatch` (the turn assigned and retained, the run blocked).
    Hook(Box<super::hooked::Halted>),
}

impl std::fmt::Display for NotAssigned {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            NotAssigned::Refused(m) => f.write_str(m),
            NotAssigned::Hook(h) => h.fmt(f),
        }
    }
}

impl From<String> for NotAssigned {
    fn from(m: String) -> Self {
        NotAssigned::Refused(m)
    }
}

impl From<NotAssigned> for String {
    fn from(e: NotAssigned) -> Self {
        e.to_string()
    }
}

/// The `before_assignment` hooks (the reference's `assignGovernedTurn`): a block refuses the
/// assignment and leaves the run as it is; a tamper blocks the run.
fn before_assignment(
    store: &Store,
    config: &Json,
    hooks: &Json,
    state: &Json,
    role: &str,
) -> Result<(), NotAssigned> {
    if !crate::hooks::declares(hooks, "before_assignment") {
        return Ok(());
    }
    let active: Vec<Json> = state["active_turns"]
        .as_object()
        .into_iter()
        .flat_map(|m| m.values())
        .map(|t| {
            json!({"turn_id": t["turn_id"], "role_id": t["assigned_role"], "status": t["status"],
                "attempt": t["attempt"]})
        })
        .collect();
    let payload = json!({
        "role_id": role, "role_config": config["roles"][role], "phase": state["phase"],
        "active_turns": active,
        "history_length": store.count_jsonl(super::store::HISTORY),
    });
    let Some(run) = super::hooked::run(
        store,
        hooks,
        "before_assignment",
        &payload,
        &state["run_id"],
        None,
        Vec::new(),
    )
    .filter(|r| !r.ok) else {
        return Ok(());
    };
    let fallback = format!(
        "before_assignment hook \"{}\" halted assignment",
        run.halting_hook()
    );
    let halted = if run.tamper.is_some() {
        super::hooked::block(
            store,
            state,
            config,
            &run,
            &super::hooked::Halt {
                phase: "before_assignment",
                turn_id: None,
                retained: !active.is_empty(),
                fallback: &fallback,
            },
        )
        .map_err(|r| r.message)
        .map(|mut h| {
            h.role = Some(role.to_owned());
            h
        })?
    } else {
        super::hooked::refused(state, &run, "before_assignment", role, &fallback)
    };
    Err(NotAssigned::Hook(Box::new(halted)))
}

/// Re-dispatches the retained `turn` of an active run (same id and attempt, a fresh bundle).
fn redispatch(
    store: &Store,
    config: &Json,
    state: &Json,
    turn_id: &str,
) -> Result<(Json, Json), NotAssigned> {
    let hooks = super::hooked::trusted(store, config).map_err(|r| r.message)?;
    let mut next = state.clone();
    let turn = &mut next["active_turns"][turn_id];
    turn["status"] = json!("dispatched");
    turn["dispatched_at"] = json!(now());
    if !super::lifecycle::deadline_ahead(turn.get("deadline_at")) {
        turn["deadline_at"] = json!(super::reject::deadline(config));
    }
    // The earlier attempt's process is gone: its fields go with it (the reference's
    // `dispatched` lifecycle).
    if let Some(t) = turn.as_object_mut() {
        for k in super::lifecycle::PROCESS_FIELDS {
            t.remove(k);
        }
    }
    let turn = turn.clone();
    if let Some(halted) =
        dispatch::write_hooked_bundle(store, config, hooks, &next, &turn).map_err(|r| r.message)?
    {
        return Err(NotAssigned::Hook(Box::new(halted)));
    }
    store.write_json(STATE, &next).map_err(|r| r.message)?;
    let role = turn["assigned_role"].as_str().unwrap_or("");
    let _ = session::checkpoint(
        store,
        &next,
        "turn_assigned",
        session::Extra {
            role: Some(role),
            dispatch_dir: Some(dispatch::bundle_rel(turn_id)),
            ..Default::default()
        },
    );
    store
        .emit_for(
            "turn_dispatched",
            &next,
            event_turn(&turn),
            intent_of(&turn),
            json!({}),
        )
        .map_err(|r| r.message)?;
    Ok((next, turn))
}

/// Reactivates a blocked run: active, nothing blocking, the open escalation resolved. A run
/// its budget blocks stays blocked, its escalation open, while the configured limit is still
/// spent ([`crate::budget::still_exhausted`]).
fn reactivate(
    store: &Store,
    config: &Json,
    state: &Json,
    via: &str,
) -> Result<(Json, Option<Json>), Refusal> {
    if let Some(refusal) = crate::budget::still_exhausted(state, config) {
        return Err(Refusal::new(refusal));
    }
    // A run its budget blocked resumes under a limit a person set: not one an agent wrote into
    // the working tree.
    if crate::budget::blocks(state) && !super::settings::person_chosen(store) {
        return Err(Refusal::new(format!(
            "Cannot resume: {} has changes not made with agentxchain config --set, and the budget a blocked run resumes under is a person's to set. Revert them (git diff {}), set the limit with agentxchain config --set budget.per_run_max_usd <usd>, then run agentxchain resume",
            super::store::CONFIG,
            super::store::CONFIG
        )));
    }
    // The budget as configured now (a person may have raised it), written with the run.
    let state = &crate::budget::reconcile(state.clone(), config, Some(&now()));
    let mut next = transitions::resume(state).map_err(Refusal::new)?;
    next["escalation"] = Json::Null;
    // A person resuming a run the non-progress guard stopped starts its count again.
    if state["blocked_on"] == "non_progress" {
        next["non_progress_signature"] = Json::Null;
        next["non_progress_count"] = json!(0);
    }
    store.write_json(STATE, &next)?;
    let resolved = escalate::resolve_current(store, state, via)?.map(|mut r| {
        r["resolved_via"] = json!(via);
        r
    });
    let was_escalation = state["blocked_on"]
        .as_str()
        .is_some_and(|b| b.starts_with("escalation:"));
    if was_escalation {
        let active = crate::turn_result::active_turn(state);
        let esc = &state["escalation"];
        let turn_id = if esc["from_turn_id"].is_null() {
            active.map(|t| t["turn_id"].clone()).unwrap_or(Json::Null)
        } else {
            esc["from_turn_id"].clone()
        };
        let role = if esc["from_role"].is_null() {
            active
                .map(|t| t["assigned_role"].clone())
                .unwrap_or(Json::Null)
        } else {
            esc["from_role"].clone()
        };
        store.append_jsonl(
            super::store::LEDGER,
            &json!({
                "timestamp": now(), "decision": "escalation_resolved",
                "run_id": state["run_id"], "phase": state["phase"], "resolved_via": via,
                "blocked_on": state["blocked_on"], "escalation": state["escalation"],
                "turn_id": turn_id, "role": role,
            }),
        )?;
        store.emit(
            "escalation_resolved",
            &next,
            Json::Null,
            json!({"resolved_via": via}),
        )?;
    }
    Ok((next, resolved))
}

/// A finished run's state made idle again for a new run (`buildFreshIdleStateForNewRun`):
/// the first phase, its gates pending, no turns, nothing blocking, the budget whole.
pub fn fresh_idle(state: &Json, config: &Json) -> Json {
    let first = cfg::phases(config).first().map(|p| (*p).to_owned());
    json!({
        "schema_version": state.get("schema_version").cloned().unwrap_or(json!("1.1")),
        "run_id": null,
        "project_id": if state["project_id"].is_null() { cfg::project_id(config) } else { state["project_id"].clone() },
        "status": "idle",
        "phase": first,
        "accepted_integration_ref": null,
        "active_turns": {},
        "turn_sequence": 0,
        "last_completed_turn_id": null,
        "blocked_on": null,
        "blocked_reason": null,
        "escalation": null,
        "pending_phase_transition": null,
        "pending_run_completion": null,
        "queued_phase_transition": null,
        "queued_run_completion": null,
        "last_gate_failure": null,
        "phase_gate_status": cfg::initial_gate_status(config),
        "budget_reservations": {},
        "budget_status": {"spent_usd": 0, "remaining_usd": config["budget"]["per_run_max_usd"].clone()},
    })
}

/// Starts a run from an idle `state` (written, with `run_started`): a new run id, the phase
/// gates pending, and `provenance` saying what started it.
pub fn start_run(
    store: &Store,
    config: &Json,
    state: &Json,
    provenance: Json,
) -> Result<Json, Refusal> {
    start_child_run(store, config, state, provenance, Json::Null)
}

/// [`start_run`] for a run that continues or recovers another: `inherited` is the parent's
/// summary it carries (`run --inherit-context`, else null), and a child with no accepted
/// integration ref takes HEAD as its baseline.
pub fn start_child_run(
    store: &Store,
    config: &Json,
    state: &Json,
    provenance: Json,
    inherited: Json,
) -> Result<Json, Refusal> {
    let run_id = new_id("run");
    let at = now();
    let mut next = transitions::initialize(state, config, &run_id, &at).map_err(Refusal::new)?;
    let child = matches!(
        provenance["trigger"].as_str(),
        Some("continuation" | "recovery")
    );
    next["provenance"] = provenance;
    next["inherited_context"] = inherited;
    if child
        && next["accepted_integration_ref"].is_null()
        && let Some(head) = git::head(store.root())
    {
        next["accepted_integration_ref"] = json!(format!("git:{head}"));
    }
    // The decisions earlier runs left binding, as the run starts.
    let binding = super::repo_decisions::active(store);
    next["repo_decisions"] = if binding.is_empty() {
        Json::Null
    } else {
        Json::Array(binding)
    };
    if next.get("phase_gate_status").is_none_or(|g| !g.is_object()) {
        next["phase_gate_status"] = cfg::initial_gate_status(config);
    }
    store.write_json(STATE, &next)?;
    super::intake::adopt_for_run(store, next["run_id"].as_str().unwrap_or(""))?;
    store.emit(
        "run_started",
        &next,
        Json::Null,
        json!({"provenance": next["provenance"]}),
    )?;
    Ok(next)
}

/// Assigns a turn beside the active ones (`step` under the phase's `max_concurrent_turns`):
/// `role`, else the routing's choice; the refusal when the phase is at capacity, the role has a
/// turn already or is unknown. `(state, turn)`.
pub fn assign_parallel(
    store: &Store,
    config: &Json,
    role: Option<&str>,
) -> Result<(Json, Json), Refusal> {
    let _lock = store.lock()?;
    let state = store.state()?;
    if state["status"] != "active" {
        return Err(Refusal::new(format!(
            "Cannot assign turn: status is \"{}\"",
            state["status"].as_str().unwrap_or("")
        )));
    }
    let role = match role
        .map(str::to_owned)
        .or_else(|| next_role(&state, config))
    {
        Some(r) if config["roles"].get(&r).is_some() => r,
        Some(r) => return Err(Refusal::new(format!("Unknown role: \"{r}\""))),
        None => {
            return Err(Refusal::new(format!(
                "No entry role for phase \"{}\"",
                state["phase"].as_str().unwrap_or("")
            )));
        }
    };
    assign_and_dispatch(store, config, &state, &role, None)
        .map_err(|e| Refusal::new(format!("Failed to assign turn: {e}")))
}

/// `resume`.
/// Judges the standing exit gate an operator's unblock settles, on the reactivated `state`:
/// the phase the run entered (with the config the gate was judged by), or where it stopped —
/// paused for a person, completed, or blocked again when the gate did not let it go on.
#[allow(clippy::type_complexity)]
fn settle(
    store: &Store,
    state: &mut Json,
    wanted: super::standing::Wanted,
    turn: Option<&str>,
) -> Result<Result<(String, String, Json), SettledBy>, Refusal> {
    use super::completion_reconcile::{self as completion, Completion};
    use super::phase_reconcile::{self as phase, Reconciled, Standing};
    let standing = Standing { turn };
    let completion = wanted == super::standing::Wanted::Completion;
    let (undecided, reasons) = if completion {
        match completion::before_dispatch(store, state, standing)? {
            Completion::Completed => return Ok(Err(SettledBy::Completed)),
            Completion::AwaitingApproval => return Ok(Err(SettledBy::AwaitingApproval)),
            Completion::NotJudged(why) => (Some(why), Vec::new()),
            Completion::GateFailed(reasons) => (None, reasons),
            Completion::Unchanged => (None, Vec::new()),
        }
    } else {
        match phase::before_dispatch(store, state, Some(standing))? {
            Reconciled::Advanced { from, to, config } => return Ok(Ok((from, to, *config))),
            Reconciled::AwaitingApproval => return Ok(Err(SettledBy::AwaitingApproval)),
            Reconciled::NotJudged(why) => (Some(why), Vec::new()),
            Reconciled::GateFailed(reasons) => (None, reasons),
            Reconciled::Unchanged => (None, Vec::new()),
        }
    };
    let (blocked_on, action, detail) = if completion {
        (
            "human:unblock_completion_reconcile_failed",
            "agentxchain approve-completion",
            "Operator unblock resolved the escalation, but no run completion could be materialized from the current gate state.",
        )
    } else {
        (
            "human:unblock_reconcile_failed",
            "agentxchain approve-transition or agentxchain gate show <gate>",
            "Operator unblock resolved the escalation, but no phase transition could be materialized from the current gate state.",
        )
    };
    let blocked_on = state["blocked_on"]
        .as_str()
        .filter(|b| !b.is_empty())
        .unwrap_or(blocked_on)
        .to_owned();
    let blocked = super::lifecycle::mark_blocked(
        store,
        state.clone(),
        turn,
        &blocked_on,
        "needs_human",
        json!({"typed_reason": "needs_human", "owner": "human", "recovery_action": action,
               "turn_retained": true, "detail": detail}),
    )?;
    *state = blocked.state;
    Ok(Err(SettledBy::Unsettled {
        completion,
        undecided,
        reasons,
        escalation: blocked.escalation,
    }))
}

pub fn resume(store: &Store, opts: &Options) -> Result<Resumed, Stop> {
    let mut config = cfg::load(store)?;
    let _lock = store.lock()?;
    let mut state = store.state()?;
    let active: Vec<Json> = state["active_turns"]
        .as_object()
        .map(|m| m.values().cloned().collect())
        .unwrap_or_default();
    let status = state["status"].as_str().unwrap_or("").to_owned();
    if !active.is_empty() && status != "blocked" {
        return Err(Stop::TurnsActive(active, state));
    }
    if !state["pending_phase_transition"].is_null() || !state["pending_run_completion"].is_null() {
        return Err(Stop::AwaitingApproval(state));
    }
    if status == "completed" {
        return Err(Stop::Refused(Refusal::new(
            "Cannot initialize run: this run is already completed. Start a new project or reset state.",
        )));
    }
    // Who resumed, as the reference records it (`resolved_via`): `resume`, or `resume --turn`
    // when a retained turn is dispatched again, unless the caller says (`unblock`, `step`).
    let via = |retained: bool| {
        opts.via
            .clone()
            .unwrap_or_else(|| if retained { "resume --turn" } else { "resume" }.to_owned())
    };
    let mut initialized = None;
    let mut reactivated = false;
    let mut resolved = None;
    let mut advanced = None;
    let mut undecided = None;
    // An operator's unblock whose turn wanted to go on past the phase's standing exit gate,
    // with no turn retained: the gate is judged now (the reference's BUG-52 path).
    let settling = match opts.via.as_deref() {
        Some("operator_unblock") if status == "blocked" && active.is_empty() => {
            super::standing::wanted(store, &state, &config, opts.turn.as_deref())
        }
        _ => None,
    };
    if let Some(wanted) = settling {
        (state, resolved) = reactivate(store, &config, &state, &via(false))?;
        reactivated = true;
        match settle(store, &mut state, wanted, opts.turn.as_deref())? {
            Ok((from, to, judged)) => {
                config = judged;
                advanced = Some((from, to));
            }
            Err(outcome) => {
                return Err(Stop::Settled(Box::new(Settled {
                    resolved,
                    state,
                    outcome,
                })));
            }
        }
    } else if status == "blocked" && !active.is_empty() {
        // A retained turn: reactivate and dispatch it again.
        let turn_id = match &opts.turn {
            Some(t) if state["active_turns"].get(t).is_some() => t.clone(),
            Some(t) => {
                return Err(Stop::Refused(Refusal::new(format!(
                    "No active turn found for --turn {t}"
                ))));
            }
            None if active.len() == 1 => active[0]["turn_id"].as_str().unwrap_or("").to_owned(),
            None => {
                return Err(Stop::Refused(Refusal::new(
                    "Multiple retained turns exist. Use --turn <id> to specify which to re-dispatch.",
                )));
            }
        };
        let (reactivated, resolved) = reactivate(store, &config, &state, &via(true))?;
        state = reactivated;
        let context = state.clone();
        let (state, turn) = match redispatch(store, &config, &state, &turn_id) {
            Ok(done) => done,
            Err(NotAssigned::Refused(m)) => return Err(Stop::Refused(Refusal::new(m))),
            Err(NotAssigned::Hook(h)) => {
                return Err(Stop::AssignFailed(Box::new(AssignFailed {
                    context,
                    initialized: None,
                    reactivated: true,
                    resolved,
                    advanced: None,
                    undecided: None,
                    error: h.error.clone(),
                    hook: Some(h),
                })));
            }
        };
        return Ok(Resumed {
            initialized: None,
            reactivated: true,
            resolved,
            redispatched: true,
            advanced: None,
            undecided: None,
            context,
            turn,
            state,
            bind: None,
        });
    }
    if settling.is_some() {
        // Reactivated and moved on above.
    } else if status == "idle" || (status == "blocked" && state["run_id"].is_null()) {
        let provenance = json!({"trigger": "manual", "parent_run_id": null, "trigger_reason": null, "intake_intent_id": null, "created_by": "operator"});
        state = start_run(store, &config, &state, provenance)?;
        initialized = state["run_id"].as_str().map(str::to_owned);
    } else if status == "blocked" {
        (state, resolved) = reactivate(store, &config, &state, &via(false))?;
        reactivated = true;
    } else if status != "active" {
        return Err(Stop::Refused(Refusal::new(format!(
            "Cannot resume: status is \"{status}\""
        ))));
    }
    // A phase request the run still owes an answer (a gate that failed, a queued request) is
    // decided before another turn of the phase is assigned.
    if advanced.is_none() {
        match super::phase_reconcile::before_dispatch(store, &mut state, None)? {
            super::phase_reconcile::Reconciled::Unchanged
            | super::phase_reconcile::Reconciled::GateFailed(_) => {}
            super::phase_reconcile::Reconciled::NotJudged(why) => undecided = Some(why),
            super::phase_reconcile::Reconciled::Advanced {
                from,
                to,
                config: judged,
            } => {
                // The new phase's turn is assigned by the config its gate was judged by.
                config = *judged;
                advanced = Some((from, to));
            }
            super::phase_reconcile::Reconciled::AwaitingApproval => {
                return Err(Stop::AwaitingApproval(state));
            }
        }
    }
    let context = state.clone();
    let role = match opts.role.clone().or_else(|| next_role(&state, &config)) {
        Some(r) if config["roles"].get(&r).is_some() => r,
        Some(r) => {
            return Err(Stop::Refused(Refusal::new(format!(
                "Unknown role: \"{r}\""
            ))));
        }
        None => {
            return Err(Stop::Refused(Refusal::new(format!(
                "No entry role for phase \"{}\"",
                state["phase"].as_str().unwrap_or("")
            ))));
        }
    };
    if opts.bind_intents
        && let Some(intent) = super::intake::next_dispatchable(store, state["run_id"].as_str())
    {
        return Ok(Resumed {
            initialized,
            reactivated,
            resolved: resolved.clone(),
            redispatched: false,
            advanced: advanced.clone(),
            undecided: undecided.clone(),
            context,
            turn: Json::Null,
            state,
            bind: Some((intent, role)),
        });
    }
    match assign_and_dispatch(store, &config, &state, &role, None) {
        Ok((state, turn)) => Ok(Resumed {
            initialized,
            reactivated,
            resolved: resolved.clone(),
            redispatched: false,
            advanced,
            undecided,
            context,
            turn,
            state,
            bind: None,
        }),
        Err(error) => Err(Stop::AssignFailed(Box::new(AssignFailed {
            context,
            initialized,
            reactivated,
            resolved,
            advanced,
            undecided,
            error: error.to_string(),
            hook: match error {
                NotAssigned::Hook(h) => Some(h),
                NotAssigned::Refused(_) => None,
            },
        }))),
    }
}
