//! `accept-turn`: the staged result of the active turn is validated (the five stages), then
//! recorded — history, decision ledger, `TALK.md`, budget — and its phase-transition or
//! run-completion request goes through the exit gate and the approval policy: the run
//! advances, completes, or pauses for a person. A result that fails validation leaves the turn
//! retained as `failed_acceptance`.

use serde_json::{Value as Json, json};

use super::approve::{self, Policy};
use super::config as cfg;
use super::conflict;
use super::store::{HISTORY, LEDGER, STATE, Store, TALK};
use super::{Refusal, dispatch, event_turn, git, intake, intent_of, now, repo_decisions, session};
use crate::gates::{self, Action};
use crate::turn_result;

/// What acceptance did.
#[derive(Clone, Debug)]
pub enum Accepted {
    /// Validation failed at `stage`; the turn is retained.
    Failed {
        stage: String,
        error_class: String,
        errors: Vec<String>,
        turn_id: String,
    },
    Done {
        entry: Json,
        state: Json,
        /// `Advanced(from, to, trigger)` / `Completed` / paused / the gate failed.
        outcome: Outcome,
        /// The turn cost more than it reserved, or `on_exceed: warn` let it pass the limit.
        budget_warning: Option<String>,
        /// The human escalation raised when the turn blocked the run (it asked for a person,
        /// or its cost spent the budget).
        escalation: Option<Json>,
    },
    /// A hook halted it (the run blocked on it): before the acceptance (the turn retained), or
    /// — `after_acceptance` — after it (the turn accepted, then the run blocked).
    Hook(Box<super::hooked::Halted>),
    /// A file the turn changed was changed by a turn accepted since it was assigned: the turn
    /// is retained `conflicted` (the run blocked on the third detection).
    Conflict {
        conflict: Json,
        state: Json,
        /// The human escalation raised when the conflict blocked the run.
        escalation: Option<Json>,
    },
}

#[derive(Clone, Debug, PartialEq)]
pub enum Outcome {
    Stayed,
    /// The turn asked for a person (`needs_human`): the run is blocked on it.
    Blocked {
        detail: String,
    },
    /// The non-progress guard blocked the run (`non_progress`).
    Stalled,
    /// The turn's cost spent the run's budget (`on_exceed: pause_and_escalate`): the run is
    /// blocked on `budget:exhausted` until a person raises the limit.
    BudgetExhausted {
        detail: String,
    },
    Advanced {
        from: String,
        to: String,
        gate: String,
        trigger: String,
    },
    Completed,
    PausedForTransition {
        gate: String,
        from: String,
        to: String,
    },
    PausedForCompletion {
        gate: String,
    },
    GateFailed {
        gate: Option<String>,
        reasons: Vec<String>,
    },
}

fn normalized_verification(config: &Json, turn: &Json, tr: &Json) -> Json {
    let manual = cfg::runtime_type(config, turn["runtime_id"].as_str().unwrap_or("")) == "manual";
    let v = &tr["verification"];
    match v["status"].as_str().unwrap_or("skipped") {
        "pass" if manual => {
            json!({"status": "attested_pass", "reason": "Manual runtime — human attested pass", "reproducible": false})
        }
        "pass" => {
            let evidence = v["machine_evidence"]
                .as_array()
                .cloned()
                .unwrap_or_default();
            if !evidence.is_empty() && evidence.iter().all(|e| e["exit_code"] == 0) {
                json!({"status": "pass", "reason": "Machine evidence confirms all commands passed", "reproducible": true})
            } else {
                json!({"status": "not_reproducible", "reason": "Pass declared without reproducible machine evidence", "reproducible": false})
            }
        }
        "fail" => {
            json!({"status": "fail", "reason": "Agent reported verification failure", "reproducible": false})
        }
        _ => json!({"status": "skipped", "reason": "Verification skipped", "reproducible": false}),
    }
}

fn talk_section(entry: &Json) -> String {
    let id = entry["turn_id"].as_str().unwrap_or("");
    let short = id.strip_prefix("turn_").unwrap_or(id);
    let short: String = short.chars().take(8).collect();
    let mut s = format!(
        "## Turn {short} — {} ({})\n\n- **Status:** {}\n- **Summary:** {}\n",
        entry["role"].as_str().unwrap_or(""),
        entry["phase"].as_str().unwrap_or(""),
        entry["status"].as_str().unwrap_or(""),
        entry["summary"].as_str().unwrap_or(""),
    );
    for d in entry["decisions"].as_array().into_iter().flatten() {
        s.push_str(&format!(
            "- **Decision {}:** {}\n",
            d["id"].as_str().unwrap_or(""),
            d["statement"].as_str().unwrap_or("")
        ));
    }
    for o in entry["objections"].as_array().into_iter().flatten() {
        s.push_str(&format!(
            "- **Objection {} ({}):** {}\n",
            o["id"].as_str().unwrap_or(""),
            o["severity"].as_str().unwrap_or(""),
            o["statement"].as_str().unwrap_or("")
        ));
    }
    if let Some(next) = entry["proposed_next_role"].as_str() {
        s.push_str(&format!("- **Proposed next:** {next}\n"));
    }
    s.push_str("\n---\n\n");
    s
}

fn append_talk(store: &Store, section: &str) -> Result<(), Refusal> {
    store.append_text(TALK, section)
}

/// Takes out of `observed` the files in the shared working tree that are a sibling turn's
/// (the reference's `attributeObservedChangesToTurn`), and returns them. The siblings are the
/// turn's `concurrent_with` and the active turns that name it; with none, nothing is
/// attributed. A file is a sibling's when a sibling accepted since the turn was assigned left it
/// as it is now, or when a sibling still active declares it in its own staged result (and the
/// turn does not).
fn attribute_to_siblings(
    store: &Store,
    state: &Json,
    turn: &Json,
    declared: &[String],
    observed: &mut Json,
) -> Vec<String> {
    let id = turn["turn_id"].as_str().unwrap_or("");
    let strs = |v: &Json| -> Vec<String> {
        v.as_array()
            .into_iter()
            .flatten()
            .filter_map(Json::as_str)
            .filter(|s| !s.is_empty())
            .map(str::to_owned)
            .collect()
    };
    let active = state["active_turns"].as_object();
    let mut siblings = strs(&turn["concurrent_with"]);
    for (other, t) in active.into_iter().flatten() {
        if other != id
            && t["concurrent_with"]
                .as_array()
                .is_some_and(|c| c.iter().any(|x| x == id))
            && !siblings.contains(other)
        {
            siblings.push(other.clone());
        }
    }
    if siblings.is_empty()
        || observed["files_changed"]
            .as_array()
            .is_none_or(Vec::is_empty)
    {
        return Vec::new();
    }
    let assigned = turn["assigned_sequence"].as_u64().unwrap_or(0);
    let history = accepted_since(store, assigned);
    let mut accepted: Vec<&Json> = history
        .iter()
        .filter(|e| {
            e["accepted_sequence"]
                .as_u64()
                .is_some_and(|s| s > assigned)
                && (e["turn_id"]
                    .as_str()
                    .is_some_and(|t| siblings.iter().any(|s| s == t))
                    || e["concurrent_with"]
                        .as_array()
                        .is_some_and(|c| c.iter().any(|x| x == id)))
        })
        .collect();
    accepted.sort_by_key(|e| e["accepted_sequence"].as_u64().unwrap_or(0));
    let mut markers: Vec<(String, String)> = Vec::new();
    for e in &accepted {
        let files = if e["observed_artifact"]["files_changed"].is_array() {
            strs(&e["observed_artifact"]["files_changed"])
        } else {
            strs(&e["files_changed"])
        };
        for f in files {
            if let Some(m) = e["observed_artifact"]["file_markers"][&f]
                .as_str()
                .filter(|m| !m.is_empty())
            {
                markers.retain(|(p, _)| *p != f);
                markers.push((f, m.to_owned()));
            }
        }
    }
    let mut pending: Vec<String> = Vec::new();
    for sib in &siblings {
        let is_active = active.is_some_and(|m| m.contains_key(sib));
        if !is_active || history.iter().any(|e| e["turn_id"] == sib.as_str()) {
            continue;
        }
        let staged = store
            .read_json(&dispatch::staging_rel(sib))
            .ok()
            .flatten()
            .unwrap_or(Json::Null);
        if staged["turn_id"] != sib.as_str() {
            continue;
        }
        for f in strs(&staged["files_changed"]) {
            if !declared.contains(&f) && !pending.contains(&f) {
                pending.push(f);
            }
        }
    }
    if markers.is_empty() && pending.is_empty() {
        return Vec::new();
    }
    let current = observed["file_markers"].clone();
    let mut kept = Vec::new();
    let mut attributed = Vec::new();
    for f in strs(&observed["files_changed"]) {
        let unchanged = markers
            .iter()
            .any(|(p, m)| *p == f && current[&f].as_str() == Some(m.as_str()));
        if unchanged || pending.contains(&f) {
            attributed.push(f);
        } else {
            kept.push(f);
        }
    }
    if attributed.is_empty() {
        return attributed;
    }
    observed["files_changed"] = json!(kept);
    if let Some(m) = observed["file_markers"].as_object_mut() {
        m.retain(|k, _| !attributed.contains(k));
    }
    attributed
}

/// A failed gate as the reference records it (`buildGateFailureRecord`, normalized).
fn gate_failure(
    kind: &str,
    g: &gates::GateResult,
    phase: &str,
    to: Json,
    by: &str,
    at: &str,
    queued: bool,
) -> Json {
    let phase = if phase.is_empty() { "unknown" } else { phase };
    json!({
        "gate_type": kind, "gate_id": g.gate_id.clone().filter(|g| !g.is_empty()),
        "phase": phase, "from_phase": phase, "to_phase": to,
        "requested_by_turn": if by.is_empty() { Json::Null } else { json!(by) },
        "failed_at": at, "queued_request": queued,
        "reasons": g.reasons.iter().filter(|r| !r.is_empty()).collect::<Vec<_>>(),
        "missing_files": g.missing_files.iter().filter(|f| !f.is_empty()).collect::<Vec<_>>(),
        "missing_verification": g.missing_verification,
    })
}

/// The run's record of a failed gate: `last_gate_failure`, the gate's status `failed`, a
/// `gate_failure` ledger line.
fn record_gate_failure(store: &Store, next: &mut Json, record: &Json) -> Result<(), Refusal> {
    next["last_gate_failure"] = record.clone();
    if let Some(g) = record["gate_id"].as_str() {
        next["phase_gate_status"][g] = json!("failed");
    }
    let mut line = json!({"type": "gate_failure"});
    for (k, v) in record.as_object().into_iter().flatten() {
        line[k] = v.clone();
    }
    store.append_jsonl(LEDGER, &line)
}

/// JavaScript's falsiness of a state field (absent, null, false).
fn falsy_json(v: &Json) -> bool {
    v.is_null() || *v == json!(false)
}

/// The accepted turn `turn_id`'s record, looked for from the end of the history.
fn history_entry(store: &Store, turn_id: &str) -> Option<Json> {
    let mut n = 16;
    loop {
        let tail = axc_core::jsonl::read_last(store.root(), HISTORY, n)
            .map(|t| t.entries)
            .unwrap_or_default();
        if let Some(e) = tail
            .iter()
            .rev()
            .find(|e| e["turn_id"] == turn_id && e["status"] != "reissued")
        {
            return Some(e.clone());
        }
        if tail.len() < n || n >= 1 << 16 {
            return None;
        }
        n *= 4;
    }
}

/// The accepted turns after sequence `assigned`, oldest first, read from the end of the
/// history (accepted in sequence order): none in a sequential run, whatever its length.
fn accepted_since(store: &Store, assigned: u64) -> Vec<Json> {
    let mut n = 16;
    loop {
        let tail = axc_core::jsonl::read_last(store.root(), HISTORY, n)
            .map(|t| t.entries)
            .unwrap_or_default();
        // Deep enough once the oldest entry that has a sequence was accepted before the turn
        // was assigned (a reissue's line has none: it says nothing about depth).
        let reached = tail.len() < n
            || tail
                .iter()
                .find_map(|e| e["accepted_sequence"].as_u64())
                .is_some_and(|seq| seq <= assigned);
        if reached || n >= 1 << 16 {
            return tail;
        }
        n *= 4;
    }
}

/// The result is refused at `stage`: the turn is retained as `failed_acceptance`.
fn fail(
    store: &Store,
    state: &Json,
    turn: &Json,
    stage: &str,
    error_class: &str,
    errors: Vec<String>,
) -> Result<Accepted, Refusal> {
    let reason = format!("Validation failed at stage {stage}: {}", errors.join("; "));
    let payload = json!({"reason": reason, "error_code": "validation_failed", "stage": stage, "errors": errors});
    fail_as(
        store,
        state,
        turn,
        (stage, error_class, errors),
        &reason,
        payload,
    )
}

/// [`fail`] with the failure's own reason and event payload (the intent stages').
fn fail_as(
    store: &Store,
    state: &Json,
    turn: &Json,
    (stage, error_class, errors): (&str, &str, Vec<String>),
    reason: &str,
    payload: Json,
) -> Result<Accepted, Refusal> {
    let turn_id = turn["turn_id"].as_str().unwrap_or("").to_owned();
    let mut next = state.clone();
    let t = &mut next["active_turns"][&turn_id];
    t["status"] = json!("failed_acceptance");
    t["failed_at"] = json!(now());
    t["failure_reason"] = json!(reason);
    store.write_json(STATE, &next)?;
    store.emit_for(
        "acceptance_failed",
        &next,
        event_turn(turn),
        intent_of(turn),
        payload,
    )?;
    let _ = session::checkpoint(
        store,
        &next,
        "acceptance_failed",
        session::Extra {
            role: turn["assigned_role"].as_str(),
            ..Default::default()
        },
    );
    Ok(Accepted::Failed {
        stage: stage.to_owned(),
        error_class: error_class.to_owned(),
        errors,
        turn_id,
    })
}

/// `(started_at, milliseconds from it to `at`)` of a turn that has a start time.
fn started_timing(turn: &Json, at: &str) -> Option<(String, i64)> {
    let started = turn["started_at"].as_str()?;
    let instant = |t: &str| crate::events::timestamp(&json!(t));
    let ms = match (instant(started), instant(at)) {
        (Some(a), Some(b)) => b.duration_since(a).map_or(0, |d| d.as_millis() as i64),
        _ => 0,
    };
    Some((started.to_owned(), ms))
}

/// A turn's cost is a finite number of dollars, not negative: a negative one would refill the
/// budget, an infinite one erase it.
fn cost_error(tr: &Json) -> Option<String> {
    match &tr["cost"]["usd"] {
        Json::Null => None,
        v => match v.as_f64() {
            Some(x) if (0.0..1e12).contains(&x) => None,
            _ => Some(format!(
                "cost.usd must be a number of dollars ≥ 0 (got {v})"
            )),
        },
    }
}

/// What git saw against what the turn declared, by its role's write authority (the
/// reference's rules): an authoritative turn declares every file it changed; a review-only
/// turn changes only planning files and reviews, and declares nothing it did not change. No
/// turn changes the governance config it is judged by.
pub fn declared_vs_observed(
    declared: &[String],
    observed: &[String],
    authority: &str,
) -> Vec<String> {
    let mut errors = Vec::new();
    if observed.iter().any(|f| f == super::store::CONFIG) {
        errors.push(format!(
            "{} changed during the turn: the gates and approval policy a turn is judged by are a person's to change (commit or revert it before accepting)",
            super::store::CONFIG
        ));
    }
    let undeclared: Vec<&str> = observed
        .iter()
        .filter(|f| !declared.contains(f))
        .map(String::as_str)
        .collect();
    let phantom: Vec<&str> = declared
        .iter()
        .filter(|f| !observed.contains(f))
        .map(String::as_str)
        .collect();
    match authority {
        "authoritative" if !undeclared.is_empty() => errors.push(format!(
            "Undeclared file changes detected (observed but not in files_changed): {}. If these files were changed by the operator (not the turn), add them to the dispatch baseline by committing or stashing them before dispatch.",
            undeclared.join(", ")
        )),
        "review_only" => {
            let product: Vec<&str> = observed
                .iter()
                .filter(|f| {
                    !(f.starts_with(".planning/")
                        || f.starts_with(".agentxchain/reviews/")
                        || super::paths::is_operational(f))
                })
                .map(String::as_str)
                .collect();
            if !product.is_empty() {
                errors.push(format!(
                    "review_only role modified product files (observed in actual diff): {}",
                    product.join(", ")
                ));
            }
            if !phantom.is_empty() {
                errors.push(format!(
                    "review_only role declared file changes that were not observed in the actual diff: {}",
                    phantom.join(", ")
                ));
            }
        }
        _ => {}
    }
    errors
}

/// `accept-turn [--turn id]`.
pub fn accept(store: &Store, turn: Option<&str>) -> Result<Accepted, Refusal> {
    accept_as(store, turn, false)
}

/// [`accept`]; `human_merge`: `--resolution human_merge`, a person merged a conflicted turn's
/// work by hand and its staged result is accepted as it stands (recorded as that resolution).
pub fn accept_as(
    store: &Store,
    turn: Option<&str>,
    human_merge: bool,
) -> Result<Accepted, Refusal> {
    // The config is read under the lock, once: the turn is judged by these bytes, and they are
    // the ones compared with the committed config below.
    let _lock = store.lock()?;
    let (config, config_text) = cfg::load_text(store)?;
    let hooks = super::hooked::trusted(store, &config)?;
    let state = store.state()?;
    let turn = super::target_turn(&state, turn, "No active turn to accept.", "accept")?;
    let turn_id = turn["turn_id"].as_str().unwrap_or("").to_owned();
    if human_merge && !turn["conflict_state"].is_object() {
        return Err(Refusal::new(
            "human_merge resolution requires a conflicted active turn.",
        ));
    }
    // The conflict a person resolved by hand, as the record keeps it.
    let resolution = human_merge.then(|| {
        let mut r = json!({"mode": "human_merge",
            "merge_strategy": "operator_authoritative_staged_result"});
        let summary = conflict::summary(&turn["conflict_state"]["conflict_error"]);
        for (k, v) in summary.as_object().into_iter().flatten() {
            r[k] = v.clone();
        }
        r
    });
    // Validation sees this turn as the one active turn.
    let mut solo = state.clone();
    solo["active_turns"] = json!({ &turn_id: turn.clone() });
    let rel = dispatch::staging_rel(&turn_id);
    // A phase's hooks, when they halted the acceptance.
    let halted = |phase: &str, payload: Json| {
        super::hooked::run(
            store,
            hooks,
            phase,
            &payload,
            &state["run_id"],
            Some(&turn_id),
            Vec::new(),
        )
        .filter(|r| !r.ok)
    };
    let halt = |run: &crate::hooks::HookRun, phase: &'static str| {
        let fallback = format!("{phase} hook \"{}\" halted acceptance", run.halting_hook());
        super::hooked::block(
            store,
            &state,
            &config,
            run,
            &super::hooked::Halt {
                phase,
                turn_id: Some(&turn_id),
                retained: true,
                fallback: &fallback,
            },
        )
        .map(|h| Accepted::Hook(Box::new(h)))
    };
    // The staged result as the validation hooks are told it, read once for both: parsed, or
    // why not (`parse_error`, `read_error`); `None` when there is none.
    let staged = std::cell::LazyCell::new(|| {
        match fsread::read_inside(store.root(), std::path::Path::new(&rel), 16 << 20) {
            Ok(bytes) => Some(
                serde_json::from_slice::<Json>(&bytes).map_err(|e| ("parse_error", e.to_string())),
            ),
            Err(fsread::ReadError::Io { source, .. })
                if source.kind() == std::io::ErrorKind::NotFound =>
            {
                None
            }
            Err(e) => Some(Err(("read_error", e.to_string()))),
        }
    });
    if crate::hooks::declares(hooks, "before_validation") {
        let mut payload = json!({"turn_id": turn_id, "role_id": turn["assigned_role"],
            "staging_path": rel, "turn_result": null});
        match &*staged {
            Some(Ok(tr)) => payload["turn_result"] = tr.clone(),
            Some(Err((key, e))) => payload[*key] = json!(e),
            None => {}
        }
        if let Some(run) = halted("before_validation", payload) {
            return halt(&run, "before_validation");
        }
    }
    let v = turn_result::validate_staged(store.root(), &solo, &config, &rel);
    if crate::hooks::declares(hooks, "after_validation") {
        let turn_result = v.turn_result.clone().unwrap_or_else(|| match &*staged {
            Some(Ok(tr)) => tr.clone(),
            _ => Json::Null,
        });
        let payload = json!({"turn_id": turn_id, "role_id": turn["assigned_role"],
            "validation_ok": v.ok(), "validation_stage": v.stage, "errors": v.errors,
            "warnings": v.warnings, "turn_result": turn_result});
        if let Some(run) = halted("after_validation", payload) {
            return halt(&run, "after_validation");
        }
    }
    if !v.ok() {
        let stage = v.stage.unwrap_or("schema");
        let class = v.error_class.unwrap_or("schema_error");
        return fail(store, &state, &turn, stage, class, v.errors);
    }
    // What normalization repaired is logged, as the reference logs it, once the result passed.
    if v.corrections
        .iter()
        .any(|c| c.contains(turn_result::ARTIFACT_AUTO_REVIEW))
    {
        store.emit_for(
            "artifact_type_auto_normalized",
            &state,
            super::event_turn(&turn),
            super::intent_of(&turn),
            json!({"original_artifact_type": "workspace", "normalized_artifact_type": "review",
                   "reason": "empty_files_changed_no_repo_mutation_declared", "staging_path": rel}),
        )?;
    }
    for e in &v.normalization_events {
        let mut payload = e.clone();
        payload["staging_path"] = json!(rel);
        store.emit_for(
            "staged_result_auto_normalized",
            &state,
            super::event_turn(&turn),
            super::intent_of(&turn),
            payload,
        )?;
    }
    let mut tr = v.turn_result.unwrap_or_default();
    if let Some(e) = cost_error(&tr) {
        return fail(store, &state, &turn, "schema", "schema_error", vec![e]);
    }
    // A decision that overrides a repo decision must name an active one, by an author with
    // the authority to replace it.
    let recorded_decisions = repo_decisions::all(store);
    for d in tr["decisions"].as_array().into_iter().flatten() {
        let mut d = d.clone();
        if d["role"].is_null() {
            d["role"] = tr["role"].clone();
        }
        if let Err(e) = repo_decisions::check_override(&recorded_decisions, &d, &config) {
            let reason = format!("Override validation failed: {e}");
            let payload = json!({"reason": reason, "error_code": "override_validation_failed", "stage": "override_validation"});
            return fail_as(
                store,
                &state,
                &turn,
                (
                    "override_validation",
                    "override_validation_failed",
                    vec![reason.clone()],
                ),
                &reason,
                payload,
            );
        }
    }
    // What git observed, and the config as committed when the turn started, read at once
    // (each is a git process of milliseconds).
    let base_head = turn["baseline"]["head_ref"].as_str().map(str::to_owned);
    let ((mut observed, snap), committed_config) = std::thread::scope(|sc| {
        let committed = sc.spawn(|| {
            base_head
                .as_deref()
                .and_then(|h| git::committed_text(store.root(), h, super::store::CONFIG))
        });
        let observed = git::observe_now(store.root(), &turn["baseline"]);
        (observed, committed.join().ok().flatten())
    });
    let declared: Vec<String> = tr["files_changed"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|f| f.as_str().map(str::to_owned))
        .collect();
    // Parallel turns share one working tree: what a sibling wrote is the sibling's. (What git
    // saw before that is kept: a file the turn declares that a sibling changed is still the
    // turn's to answer for, in the conflict check.)
    let raw_observed = observed.clone();
    let attributed = attribute_to_siblings(store, &state, &turn, &declared, &mut observed);
    let mut seen: Vec<String> = observed["files_changed"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|f| f.as_str().map(str::to_owned))
        .collect();
    // Whether the config is the one a person's `config --set` wrote: the ledger read back at
    // most once, and only when the config is in question.
    let person_set =
        std::cell::LazyCell::new(|| super::settings::set_by_person(store, &config_text));
    // A config a person set during the turn (`config --set`, say raising the budget while a
    // sibling turn runs) is not the turn's change.
    if seen.iter().any(|f| f == super::store::CONFIG) && *person_set {
        seen.retain(|f| f != super::store::CONFIG);
    }
    let authority = cfg::write_authority(&config, turn["assigned_role"].as_str().unwrap_or(""));
    let observable = observed["observation_available"] == true;
    let mut errors = if observable {
        declared_vs_observed(&declared, &seen, authority)
    } else {
        Vec::new()
    };
    // A turn dispatched from a git baseline (or in a repository git now refuses) is judged by
    // what git sees: when git cannot see, the turn is not accepted blind.
    if !observable && (base_head.is_some() || git::broken(store.root())) {
        errors.push(
            "the working tree cannot be observed: git fails in this repository (a broken HEAD or ref, a repository git refuses to read, a file it cannot open); repair the repository, then accept".to_owned(),
        );
    }
    // The config a turn is judged by is a person's: the one committed when it started,
    // compared from git's objects (an index flag such as skip-worktree, or an ignore file,
    // hides a change from `git status`, not from this), or the one a person's `config --set`
    // wrote (its digest is in the decision ledger; an agent's edit, made by hand, has none).
    // A config that was uncommitted at dispatch (a person's `config --set`) and is not the same
    // now was changed during the turn, even back to the committed one.
    let changed_since_dispatch = turn["baseline"]["dirty_snapshot"][super::store::CONFIG]
        .as_str()
        .is_some_and(|m| m != super::settings::digest(&config_text));
    if let Some(committed) = committed_config
        && (config_text != committed || changed_since_dispatch)
        && !errors.iter().any(|e| e.starts_with(super::store::CONFIG))
        && !*person_set
    {
        errors.push(format!(
            "{} differs from the one committed when the turn started: the gates and approval policy a turn is judged by are a person's to change (commit or revert it before accepting)",
            super::store::CONFIG
        ));
    }
    if !errors.is_empty() {
        // What git saw against what the turn declared: the reference's observation stage.
        let reason = format!("Observed artifact mismatch: {}", errors.join("; "));
        let payload = json!({"reason": reason, "error_code": "artifact_mismatch",
            "stage": "artifact_observation", "undeclared_files": errors, "warnings": []});
        return fail_as(
            store,
            &state,
            &turn,
            ("artifact_observation", "artifact_error", errors),
            &reason,
            payload,
        );
    }
    // The intent the turn serves, as it stands now (its contract may have changed since the
    // dispatch; a finished intent asks nothing more), and what of its contract the turn answers.
    let intake_ctx = match intake::live_context(store, &turn["intake_context"]) {
        Ok(ctx) => ctx,
        Err(error) => {
            let payload = json!({"reason": error, "error_code": "intent_reconciliation_failed", "stage": "intent_reconciliation", "intent_id": intent_of(&turn)});
            return fail_as(
                store,
                &state,
                &turn,
                (
                    "intent_reconciliation",
                    "intent_reconciliation_error",
                    vec![error.clone()],
                ),
                &error,
                payload,
            );
        }
    };
    if let Some(ctx) = intake_ctx.as_ref().filter(|c| {
        c["acceptance_contract"]
            .as_array()
            .is_some_and(|a| !a.is_empty())
    }) {
        let cov = crate::intent_coverage::evaluate(&tr, ctx, &state, &config);
        // Strict unless the config says lenient: the turn's stored context (agent-writable
        // state) has no say. (The reference reads a priority there that its writers never
        // put, so it is strict too.)
        let strict = config["intent_coverage_mode"] != "lenient";
        if !cov.unaddressed.is_empty() {
            if strict {
                let reason = format!(
                    "Intent coverage incomplete: {} acceptance item(s) not addressed: {}",
                    cov.unaddressed.len(),
                    cov.unaddressed.join("; ")
                );
                let payload = json!({"reason": reason, "error_code": "intent_coverage_incomplete", "stage": "intent_coverage", "intent_id": ctx["intent_id"], "addressed": cov.addressed, "unaddressed": cov.unaddressed});
                let errors = vec![format!(
                    "Unaddressed acceptance items: {}",
                    cov.unaddressed.join("; ")
                )];
                return fail_as(
                    store,
                    &state,
                    &turn,
                    ("intent_coverage", "intent_coverage_error", errors),
                    &reason,
                    payload,
                );
            }
            store.emit_for(
                "turn_incomplete_intent_coverage",
                &state,
                event_turn(&turn),
                intent_of(&turn),
                json!({"addressed": cov.addressed, "unaddressed": cov.unaddressed, "mode": "lenient"}),
            )?;
        }
    }
    // A phase request whose gate fails on files the turn did not touch: the agent did not do the
    // gate's work. In planning the request is dropped and the turn's work kept; later phases
    // refuse the turn (the reference's gate semantic coverage).
    let phase_now = state["phase"].as_str().unwrap_or("").to_owned();
    let history_for = |s: &Json| {
        let mut s = s.clone();
        if gates::needs_history(&config, &phase_now) {
            s["history"] = Json::Array(store.read_jsonl(HISTORY));
        }
        s
    };
    let new_intake = tr["idle_expansion_result"]["kind"] == "new_intake_intent";
    if tr["phase_transition_request"]
        .as_str()
        .is_some_and(|r| !r.is_empty())
        && !new_intake
    {
        let pre = gates::evaluate_phase_exit(&history_for(&state), &config, &tr, store.root());
        if pre.action == Action::GateFailed {
            let strip = |f: &str| f.strip_prefix("./").unwrap_or(f).to_owned();
            let mut declared: Vec<String> = Vec::new();
            for f in tr["files_changed"].as_array().into_iter().flatten() {
                let f = strip(f.as_str().unwrap_or(""));
                if !declared.contains(&f) {
                    declared.push(f);
                }
            }
            let mut uncovered: Vec<String> = Vec::new();
            for f in pre.failing_files.iter().map(|f| strip(f)) {
                if !declared.contains(&f) && !uncovered.contains(&f) {
                    uncovered.push(f);
                }
            }
            let gate_id = pre.gate_id.clone().unwrap_or_else(|| "unknown_gate".into());
            let strict = config["gate_semantic_coverage_mode"]
                .as_str()
                .filter(|m| !m.is_empty())
                .unwrap_or("strict")
                == "strict";
            if !uncovered.is_empty() && strict {
                if phase_now == "planning" {
                    store.emit(
                        "gate_transition_request_auto_stripped",
                        &state,
                        event_turn(&turn),
                        json!({"gate_id": gate_id, "uncovered_files": uncovered,
                               "declared_files": declared,
                               "rationale": "Turn did not modify gate-required files; phase transition stripped to preserve partial planning work"}),
                    )?;
                    if let Some(o) = tr.as_object_mut() {
                        o.shift_remove("phase_transition_request");
                    }
                } else {
                    let reason = format!(
                        "Gate \"{gate_id}\" is failing on {}. Your turn did not modify {}. Either edit the file(s) to satisfy the gate, or remove the phase transition request.",
                        uncovered.join(", "),
                        if uncovered.len() == 1 {
                            "that file"
                        } else {
                            "those files"
                        }
                    );
                    let errors = uncovered
                        .iter()
                        .map(|f| format!("Gate \"{gate_id}\" is failing on \"{f}\". Your turn did not modify that file."))
                        .collect();
                    let payload = json!({"reason": reason, "error_code": "gate_semantic_coverage",
                        "stage": "gate_semantic_coverage", "gate_id": gate_id,
                        "uncovered_files": uncovered, "declared_files": declared,
                        "gate_reasons": pre.reasons});
                    return fail_as(
                        store,
                        &state,
                        &turn,
                        ("gate_semantic_coverage", "gate_coverage_error", errors),
                        &reason,
                        payload,
                    );
                }
            }
        }
    }
    // Judged against the turns accepted since this one was assigned (parallel turns).
    let files = conflict::candidate_files(&raw_observed, &observed, &declared);
    let overlap = conflict::classify(
        &turn,
        &files,
        &accepted_since(store, turn["assigned_sequence"].as_u64().unwrap_or(0)),
        &config,
    );
    if let Some(c) = overlap.conflict.clone().filter(|_| !human_merge) {
        let at = now();
        let count = turn["conflict_state"]["detection_count"]
            .as_u64()
            .unwrap_or(0)
            + 1;
        let mut next = state.clone();
        let t = &mut next["active_turns"][&turn_id];
        t["status"] = json!("conflicted");
        t["conflict_state"] = json!({"detected_at": at, "detection_count": count,
            "status": "pending_operator", "conflict_error": c});
        if count >= 3 {
            next["status"] = json!("blocked");
            next["blocked_on"] = json!(format!("human:conflict_loop:{turn_id}"));
            next["blocked_reason"] = json!({
                "category": "conflict_loop",
                "recovery": {"typed_reason": "conflict_loop", "owner": "human",
                    "recovery_action": conflict::loop_recovery(&turn_id),
                    "turn_retained": true, "detail": conflict::detail(&c)},
                "blocked_at": at, "turn_id": turn_id,
            });
        }
        let summary = conflict::summary(&c);
        store.append_jsonl(
            LEDGER,
            &json!({"timestamp": at, "decision": "conflict_detected", "turn_id": turn_id,
                "attempt": turn["attempt"], "role": turn["assigned_role"], "phase": state["phase"],
                "conflict": summary}),
        )?;
        let mut payload = json!({"error_code": "conflict", "detection_count": count});
        for (k, v) in summary.as_object().into_iter().flatten() {
            payload[k] = v.clone();
        }
        store.emit("turn_conflicted", &next, event_turn(&turn), payload)?;
        store.write_json(STATE, &next)?;
        let mut escalation = None;
        if next["status"] == "blocked" {
            super::run_history::record_blocked(store, &next, &config)?;
            escalation = Some(super::escalate::raise(
                store,
                &next,
                Some(&turn_id),
                turn["assigned_role"].as_str(),
            )?);
        }
        return Ok(Accepted::Conflict {
            conflict: c,
            state: next,
            escalation,
        });
    }
    if crate::hooks::declares(hooks, "before_acceptance") {
        let files: Vec<String> = observed["files_changed"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(|f| f.as_str().map(str::to_owned))
            .collect();
        let payload = json!({"turn_id": turn_id, "role_id": turn["assigned_role"],
            "turn_result": tr,
            "observed_changes": git::classify_changes(store.root(), base_head.as_deref(), &files),
            "conflict_detected": false});
        if let Some(run) = halted("before_acceptance", payload) {
            return halt(&run, "before_acceptance");
        }
    }
    let at = now();
    let accepted_ref = observed["head_ref"]
        .as_str()
        .map(|h| format!("git:{h}"))
        .unwrap_or_else(|| "workspace:dirty".to_owned());
    let phase = state["phase"].as_str().unwrap_or("").to_owned();
    let sequence = state["turn_sequence"].as_u64().unwrap_or(0) + 1;
    let role = turn["assigned_role"].as_str().unwrap_or("").to_owned();
    let mut entry = json!({
        "turn_id": turn_id,
        "run_id": state["run_id"],
        "role": role,
        "phase": phase,
        "runtime_id": turn["runtime_id"],
        "status": tr["status"],
        "summary": tr["summary"],
        "decisions": tr["decisions"],
        "objections": tr["objections"],
        "files_changed": tr["files_changed"],
        "artifacts_created": tr["artifacts_created"],
        "verification": tr["verification"],
        "normalized_verification": normalized_verification(&config, &turn, &tr),
        "artifact": tr["artifact"],
        "intent_id": intent_of(&turn),
        "observed_artifact": {
            "derived_by": "orchestrator",
            "baseline_ref": turn["baseline"]["head_ref"].as_str().map(|h| format!("git:{h}")),
            "accepted_ref": accepted_ref,
            "files_changed": observed["files_changed"],
            "file_markers": observed["file_markers"],
            "diff_summary": observed["diff_summary"],
        },
        "proposed_next_role": tr["proposed_next_role"],
        "phase_transition_request": tr["phase_transition_request"],
        "run_completion_request": tr["run_completion_request"] == true,
        "assigned_sequence": turn["assigned_sequence"],
        "accepted_sequence": sequence,
        "concurrent_with": turn["concurrent_with"],
        // `turnResult.cost || {}`: a result without a cost records an empty one.
        "cost": if crate::js::truthy(&tr["cost"]) { tr["cost"].clone() } else { json!({}) },
    });
    if !attributed.is_empty() {
        entry["observed_artifact"]["attributed_to_concurrent_siblings"] = json!(attributed);
    }
    // A file this role revised forward (its own artifact, changed since by its own earlier
    // turn) is recorded with the turn, after `concurrent_with`, as the reference records it.
    if !overlap.forward_revision_files.is_empty()
        && let Some(o) = entry.as_object()
    {
        let ids: Vec<Json> = overlap
            .forward_revision_turns
            .iter()
            .map(|t| t["turn_id"].clone())
            .collect();
        let revision = json!({"files": overlap.forward_revision_files,
            "accepted_since_turn_ids": ids, "accepted_since": overlap.forward_revision_turns});
        let mut m = serde_json::Map::new();
        for (k, v) in o {
            m.insert(k.clone(), v.clone());
            if k == "concurrent_with" {
                m.insert("forward_revision".into(), revision.clone());
            }
        }
        entry = Json::Object(m);
    }
    if let Some(r) = &resolution
        && let Some(o) = entry.as_object()
    {
        let after = if o.contains_key("forward_revision") {
            "forward_revision"
        } else {
            "concurrent_with"
        };
        let mut m = serde_json::Map::new();
        for (k, v) in o {
            m.insert(k.clone(), v.clone());
            if k == after {
                m.insert("conflict_resolution".into(), r.clone());
            }
        }
        entry = Json::Object(m);
    }
    // A request the gate check dropped is absent from the record, as the reference's is.
    if tr.get("phase_transition_request").is_none()
        && let Some(o) = entry.as_object_mut()
    {
        o.shift_remove("phase_transition_request");
    }
    // A turn a runtime started (`step` marks it `starting`) carries its timing, as the
    // reference's: `started_at`, `accepted_at`, `duration_ms`, in that order.
    let timing = started_timing(&turn, &at);
    if let Some((started, _)) = &timing {
        entry["started_at"] = json!(started);
    }
    entry["accepted_at"] = json!(at);
    if let Some((_, ms)) = &timing {
        entry["duration_ms"] = json!(ms);
    }
    // The state after the turn, before its requests are decided.
    let mut next = state.clone();
    if let Some(m) = next["active_turns"].as_object_mut() {
        m.remove(&turn_id);
    }
    if let Some(m) = next["budget_reservations"].as_object_mut() {
        m.remove(&turn_id);
    }
    next["turn_sequence"] = json!(sequence);
    next["last_completed_turn_id"] = json!(turn_id);
    next["accepted_integration_ref"] = json!(accepted_ref);
    let recommended = tr["proposed_next_role"]
        .as_str()
        .filter(|r| *r != "human" && config["roles"].get(*r).is_some())
        .map(|r| json!(r))
        .unwrap_or(Json::Null);
    next["next_recommended_role"] = recommended;
    next["pending_delegation_review"] = Json::Null;
    // A run blocked on turns (a conflict loop, a failed start, a stall) is active again once
    // none of its remaining turns blocks it — as the reference's acceptance does.
    let blocking = next["active_turns"]
        .as_object()
        .into_iter()
        .flatten()
        .any(|(_, t)| {
            matches!(
                t["status"].as_str(),
                Some("failed" | "conflicted" | "failed_start" | "stalled")
            )
        });
    if next["status"] == "blocked" && !blocking {
        next["status"] = json!("active");
        next["blocked_on"] = Json::Null;
        next["blocked_reason"] = Json::Null;
        next["escalation"] = Json::Null;
    }

    // Records first: the history line, the decisions, the talk file.
    // A command killed after these appends and before the state was written leaves them
    // behind; accepting again does not record them twice.
    let recorded = store
        .last_jsonl(HISTORY)
        .is_some_and(|e| e["turn_id"] == json!(turn_id) && e["status"] != "reissued");
    if !recorded {
        store.append_jsonl(HISTORY, &entry)?;
    }
    let decisions = tr["decisions"].as_array().cloned().unwrap_or_default();
    let in_ledger: Vec<Json> = axc_core::jsonl::read_last(store.root(), LEDGER, decisions.len())
        .map(|t| t.entries)
        .unwrap_or_default();
    for d in &decisions {
        if recorded
            && in_ledger
                .iter()
                .any(|e| e["turn_id"] == json!(turn_id) && e["id"] == d["id"])
        {
            continue;
        }
        store.append_jsonl(
            LEDGER,
            &json!({
                "id": d["id"], "turn_id": turn_id, "role": role, "phase": phase,
                "runtime_id": turn["runtime_id"], "category": d["category"],
                "statement": d["statement"], "rationale": d["rationale"],
                "objections_against": [], "status": "accepted", "overridden_by": null,
                "created_at": at,
            }),
        )?;
    }
    if !recorded {
        let base = |decision: &str| {
            json!({"timestamp": at, "decision": decision, "turn_id": turn_id,
                "attempt": turn["attempt"], "role": turn["assigned_role"], "phase": state["phase"]})
        };
        if let Some(f) = entry.get("forward_revision") {
            let mut e = base("forward_revision_accepted");
            e["forward_revision"] = json!({"files": f["files"],
                "accepted_since_turn_ids": f["accepted_since_turn_ids"]});
            store.append_jsonl(LEDGER, &e)?;
        }
        if let Some(r) = &resolution {
            for decision in ["conflict_resolution_selected", "conflict_resolved"] {
                let mut e = base(decision);
                e["conflict"] = json!({"conflicting_files": r["conflicting_files"],
                    "accepted_since_turn_ids": r["accepted_since_turn_ids"],
                    "overlap_ratio": r["overlap_ratio"]});
                e["resolution_chosen"] = r["mode"].clone();
                e["merge_strategy"] = r["merge_strategy"].clone();
                store.append_jsonl(LEDGER, &e)?;
            }
        }
    }
    repo_decisions::record(store, &tr, &state, &phase, &at)?;
    let section = talk_section(&entry);
    if !(recorded && store.ends_with(TALK, &section)) {
        append_talk(store, &section)?;
    }

    // The request, through the gate and the policy.
    let mut outcome = Outcome::Stayed;
    let mut after: Vec<(&str, Json, Json)> = Vec::new();
    let mut before: Vec<(&str, Json, Json)> = Vec::new();
    if observed["baseline_unchanged"]
        .as_array()
        .is_some_and(|a| !a.is_empty())
    {
        // The reference writes this event's details beside its payload (an empty payload and
        // no status); here they are its payload.
        store.emit(
            "baseline_dirty_unchanged_excluded",
            &state,
            event_turn(&turn),
            json!({
                "excluded_files": observed["baseline_unchanged"],
                "rationale": "Files were dirty at dispatch baseline with matching SHA markers at acceptance time — inherited workspace state, not turn-attributed mutations.",
            }),
        )?;
    }
    let eval_state = {
        let mut s = history_for(&state);
        if let Some(h) = s["history"].as_array_mut()
            && !recorded
        {
            h.push(entry.clone());
        }
        s["turn_sequence"] = json!(sequence);
        s
    };
    let from = phase.clone();
    // The accepted turns a policy rule's conditions are judged by: this run's, this turn's
    // among them (its history line is written above); read only when a rule names them.
    let policy_history = || approve::run_history(store, &config, &state["run_id"]);
    let needs_human = tr["status"] == "needs_human";
    // The turn's cost, charged after the turn's own block (a turn asking for a person blocks
    // the run whatever the budget says) and before its requests: a run its budget blocks
    // decides no phase transition (the reference's DEC-BUDGET-ENFORCE-001).
    if needs_human {
        next["status"] = json!("blocked");
    }
    let cost = tr["cost"]["usd"].as_f64().unwrap_or(0.0);
    let charged = crate::budget::charge(&mut next, &state, &config, &turn_id, cost, &at);
    let budget_blocked = charged.blocked.is_some();
    // Parallel turns: while sibling turns remain active a request waits for them (queued, the
    // reference's `queued_phase_transition` / `queued_run_completion`); the turn that drains
    // the run decides its own request or the queued one, judged with the turn that made it.
    let remaining = next["active_turns"]
        .as_object()
        .is_some_and(|m| !m.is_empty());
    let mut request = entry.clone();
    if !needs_human && remaining {
        if entry["run_completion_request"] == true && falsy_json(&next["queued_run_completion"]) {
            next["queued_run_completion"] =
                json!({"requested_by_turn": turn_id, "requested_at": at});
        }
        if entry["phase_transition_request"].is_string()
            && falsy_json(&next["queued_phase_transition"])
            && !new_intake
        {
            next["queued_phase_transition"] = json!({"from": state["phase"],
                "to": entry["phase_transition_request"], "requested_by_turn": turn_id,
                "requested_at": at});
        }
        request["phase_transition_request"] = Json::Null;
        request["run_completion_request"] = json!(false);
    } else if !needs_human {
        for (key, field) in [
            ("queued_run_completion", "run_completion_request"),
            ("queued_phase_transition", "phase_transition_request"),
        ] {
            let asked = if field == "run_completion_request" {
                entry[field] == true
            } else {
                entry[field].is_string()
            };
            if !asked
                && let Some(by) = state[key]["requested_by_turn"].as_str()
                && let Some(source) = history_entry(store, by)
            {
                request = source;
            }
            // A queued transition waits out a budget block (the reference never reaches it).
            if !(budget_blocked && key == "queued_phase_transition") {
                next[key] = Json::Null;
            }
        }
    }
    let request_turn = request["turn_id"].as_str().unwrap_or(&turn_id).to_owned();
    if needs_human {
        // The turn asks for a person: the run blocks, whatever else it requested.
        let detail = tr["needs_human_reason"]
            .as_str()
            .filter(|r| !r.trim().is_empty())
            .unwrap_or("unspecified")
            .to_owned();
        next["status"] = json!("blocked");
        next["blocked_on"] = json!(format!("human:{detail}"));
        next["blocked_reason"] = json!({
            "category": "needs_human",
            "recovery": {
                "typed_reason": "needs_human", "owner": "human",
                "recovery_action": "Resolve the stated issue, then run agentxchain resume",
                "turn_retained": false, "detail": detail,
            },
            "blocked_at": at,
            "turn_id": turn_id,
        });
        next["escalation"] = Json::Null;
        outcome = Outcome::Blocked { detail };
    } else if let Some(detail) = charged.blocked.as_ref().filter(|_| {
        !request["phase_transition_request"].is_null() || request["run_completion_request"] != true
    }) {
        outcome = Outcome::BudgetExhausted {
            detail: detail.clone(),
        };
    } else if !request["phase_transition_request"].is_null() {
        let g = gates::evaluate_phase_exit(&eval_state, &config, &request, store.root());
        let gate_id = g.gate_id.clone().unwrap_or_default();
        let to = g.next_phase.clone().unwrap_or_default();
        match g.action {
            Action::Advance | Action::AwaitingHumanApproval => {
                let policy = if g.action == Action::Advance {
                    Policy::Open
                } else {
                    approve::transition_policy(
                        &config,
                        &from,
                        &to,
                        &gate_id,
                        &approve::Run {
                            history: &policy_history(),
                            phase: &from,
                        },
                    )
                };
                match policy {
                    Policy::Open | Policy::AutoApprove(_) => {
                        let trigger = if let Policy::AutoApprove(rule) = &policy {
                            approve::record_transition_rule(
                                store, rule, &from, &to, &gate_id, &at,
                            )?;
                            "auto_approved"
                        } else {
                            "auto"
                        };
                        approve::enter_phase(&mut next, &gate_id, &to);
                        let t = event_turn(&turn);
                        let retired =
                            intake::retire_on_phase_advance(store, &next, &config, &from, &at)?;
                        if !retired.is_empty() {
                            before.push((
                                "intent_retired_by_phase_advance",
                                t.clone(),
                                json!({"exited_phase": from, "entered_phase": to,
                                    "retired_count": retired.len(), "retired_intent_ids": retired}),
                            ));
                        }
                        before.push((
                            "phase_entered",
                            t.clone(),
                            json!({"from": from, "to": to, "gate_id": gate_id, "trigger": trigger}),
                        ));
                        before.push((
                            "phase_cleanup",
                            t,
                            approve::cleanup_payload(&from, &to, &gate_id, trigger),
                        ));
                        outcome = Outcome::Advanced {
                            from: from.clone(),
                            to,
                            gate: gate_id,
                            trigger: trigger.into(),
                        };
                    }
                    Policy::RequireHuman => {
                        next["status"] = json!("paused");
                        next["blocked_on"] = json!(format!("human_approval:{gate_id}"));
                        next["pending_phase_transition"] = json!({"from": from, "to": to, "gate": gate_id, "requested_by_turn": request_turn});
                        after.push((
                            "gate_pending",
                            Json::Null,
                            json!({"gate_type": "phase_transition", "from": from, "to": to}),
                        ));
                        outcome = Outcome::PausedForTransition {
                            gate: gate_id,
                            from: from.clone(),
                            to,
                        };
                    }
                }
            }
            // An unknown phase is no gate's failure (the reference records none).
            Action::NoRequest | Action::UnknownPhase => {}
            _ => {
                let to = request["phase_transition_request"]
                    .as_str()
                    .or(state["queued_phase_transition"]["to"].as_str())
                    .map_or(Json::Null, |t| json!(t));
                let queued = !falsy_json(&state["queued_phase_transition"])
                    && entry["phase_transition_request"].is_null();
                let record = gate_failure(
                    "phase_transition",
                    &g,
                    &from,
                    to.clone(),
                    &request_turn,
                    &at,
                    queued,
                );
                record_gate_failure(store, &mut next, &record)?;
                before.push((
                    "gate_failed",
                    event_turn(&turn),
                    json!({"gate_id": g.gate_id.clone().unwrap_or_else(|| "no_gate".into()),
                           "from_phase": from, "to_phase": to, "reasons": record["reasons"]}),
                ));
                outcome = Outcome::GateFailed {
                    gate: g.gate_id,
                    reasons: g.reasons,
                };
            }
        }
    } else if request["run_completion_request"] == true {
        let g = gates::evaluate_run_completion(&eval_state, &config, &request, store.root());
        let gate_id = g.gate_id.clone().unwrap_or_default();
        match g.action {
            Action::Complete | Action::AwaitingHumanApproval => {
                let policy = if g.action == Action::Complete {
                    Policy::Open
                } else {
                    approve::completion_policy(
                        &config,
                        &gate_id,
                        &approve::Run {
                            history: &policy_history(),
                            phase: &from,
                        },
                    )
                };
                match policy {
                    Policy::Open | Policy::AutoApprove(_) => {
                        if let Policy::AutoApprove(rule) = &policy {
                            approve::record_completion_rule(store, rule, &gate_id, &at)?;
                        }
                        approve::complete(&mut next, &gate_id, &at);
                        after.push(("run_completed", Json::Null, json!({"completed_at": at})));
                        outcome = Outcome::Completed;
                    }
                    Policy::RequireHuman => {
                        next["status"] = json!("paused");
                        next["blocked_on"] = json!(format!("human_approval:{gate_id}"));
                        next["pending_run_completion"] = json!({"gate": gate_id, "requested_by_turn": request_turn, "requested_at": at});
                        after.push((
                            "gate_pending",
                            Json::Null,
                            json!({"gate_type": "run_completion"}),
                        ));
                        outcome = Outcome::PausedForCompletion { gate: gate_id };
                    }
                }
            }
            // Completion asked outside the final phase is no gate's failure either.
            Action::NoRequest | Action::NotFinalPhase => {}
            _ => {
                let queued = !falsy_json(&state["queued_run_completion"])
                    && entry["run_completion_request"] != true;
                let record = gate_failure(
                    "run_completion",
                    &g,
                    &from,
                    Json::Null,
                    &request_turn,
                    &at,
                    queued,
                );
                record_gate_failure(store, &mut next, &record)?;
                outcome = Outcome::GateFailed {
                    gate: g.gate_id,
                    reasons: g.reasons,
                };
            }
        }
    }
    if budget_blocked && next["status"] != "blocked" {
        // The completion the turn asked for decided the run (the reference judges it under a
        // budget block too): it completed or waits for a person, and no block remains.
        next["blocked_reason"] = Json::Null;
    }
    if next["status"] == "active"
        && let Some(stalled) = non_progress(store, &config, &state, &mut next, &tr, &turn_id, &at)?
    {
        before.push(("run_stalled", event_turn(&turn), stalled));
        outcome = Outcome::Stalled;
    }
    store.write_json(STATE, &next)?;
    if next["status"] == "blocked" {
        super::run_history::record_blocked(store, &next, &config)?;
    }
    for (kind, t, payload) in before {
        store.emit(kind, &next, t, payload)?;
    }
    // The intent the turn served is done: accepted work is its answer.
    // Advisory, as in the reference: the turn is accepted whatever happens to the intent file
    // (`intake resolve` completes the intent from the run later).
    if let Ok(Some(intent)) = intake::satisfy(store, &turn, &next, &at) {
        store.emit_for(
            "intent_satisfied",
            &next,
            event_turn(&turn),
            intent,
            json!({"satisfying_turn": turn_id}),
        )?;
    }
    let timing_payload = match &timing {
        Some((started, ms)) => json!({"started_at": started, "duration_ms": ms}),
        None => json!({}),
    };
    store.emit_for(
        "turn_accepted",
        &next,
        event_turn(&turn),
        intent_of(&turn),
        timing_payload,
    )?;
    if let Some(r) = &resolution {
        store.emit_for(
            "conflict_resolved",
            &next,
            event_turn(&turn),
            intent_of(&turn),
            json!({"resolution": r["mode"], "merge_strategy": r["merge_strategy"],
                "conflicting_files": r["conflicting_files"],
                "accepted_since_turn_ids": r["accepted_since_turn_ids"],
                "overlap_ratio": r["overlap_ratio"]}),
        )?;
    }
    // The turn blocked the run for a person (it asked for one, or its cost spent the budget):
    // the human escalation and `run_blocked`, before what the request decided (nothing, then).
    let blocked_by = if needs_human {
        Some("needs_human")
    } else if budget_blocked && next["status"] == "blocked" {
        Some("budget_exhausted")
    } else {
        None
    };
    let mut escalation = None;
    if let Some(category) = blocked_by {
        escalation = Some(super::escalate::raise(
            store,
            &next,
            Some(&turn_id),
            Some(&role),
        )?);
        store.emit_for(
            "run_blocked",
            &next,
            event_turn(&turn),
            intent_of(&turn),
            json!({"category": category}),
        )?;
    }
    if let Some(payload) = &charged.warn_event {
        store.emit_for(
            "budget_exceeded_warn",
            &next,
            event_turn(&turn),
            Json::Null,
            payload.clone(),
        )?;
    }
    for (kind, t, payload) in after {
        store.emit(kind, &next, t, payload)?;
    }
    if outcome == Outcome::Stalled {
        store.emit_for(
            "run_blocked",
            &next,
            event_turn(&turn),
            intent_of(&turn),
            json!({"category": "non_progress"}),
        )?;
    }
    if outcome == Outcome::Completed {
        super::run_history::record_completed(store, &next, &config)?;
    }
    store.remove_tree(&format!(".agentxchain/staging/{turn_id}"));
    store.remove_tree(&dispatch::bundle_rel(&turn_id));
    let _ = session::checkpoint(
        store,
        &next,
        "turn_accepted",
        session::Extra {
            role: Some(&role),
            snapshot: snap.as_ref(),
            ..Default::default()
        },
    );
    // The after_acceptance hooks are told of the acceptance once it is whole; a blocking one
    // that blocks (or any that tampers) blocks the run, the turn accepted all the same.
    if crate::hooks::declares(hooks, "after_acceptance") {
        let payload = json!({"turn_id": turn_id, "role_id": role,
            "history_entry_index": sequence - 1, "accepted_integration_ref": accepted_ref,
            "decisions_count": tr["decisions"].as_array().map_or(0, Vec::len),
            "objections_count": tr["objections"].as_array().map_or(0, Vec::len),
            "run_status": next["status"], "phase": next["phase"]});
        if let Some(run) = halted("after_acceptance", payload) {
            let detail = match &run.tamper {
                Some(t) => t["message"].as_str().unwrap_or("").to_owned(),
                None => format!(
                    "after_acceptance hook \"{}\" failed after commit",
                    run.halting_hook()
                ),
            };
            let retained = next["active_turns"]
                .as_object()
                .is_some_and(|m| !m.is_empty());
            let mut halted = super::hooked::block(
                store,
                &next,
                &config,
                &run,
                &super::hooked::Halt {
                    phase: "after_acceptance",
                    turn_id: Some(&turn_id),
                    retained,
                    fallback: &detail,
                },
            )?;
            halted.error = format!("Turn accepted, but post-commit hook handling failed: {detail}");
            halted.role = Some(role.clone());
            return Ok(Accepted::Hook(Box::new(halted)));
        }
    }
    Ok(Accepted::Done {
        entry,
        state: next,
        outcome,
        budget_warning: charged.warning,
        escalation,
    })
}

/// The reference's non-progress guard (its BUG-38): every accepted turn of an active run probes
/// the phase's exit gate; a turn that leaves the same failure standing without touching the
/// failing files counts, and `run_loop.non_progress_threshold` (3) such turns in a row block the
/// run (`non_progress`, a `non_progress_block` ledger entry). The `run_stalled` payload when it
/// blocked.
///
/// As the reference does, the probe asks for the first routed phase other than the current one
/// (its config has no `phases` list), so only a phase whose next phase is routed first — the
/// first phase — is ever judged; a later phase's probe is an out-of-order request with no gate,
/// which resets the count.
fn non_progress(
    store: &Store,
    config: &Json,
    state: &Json,
    next: &mut Json,
    tr: &Json,
    turn_id: &str,
    at: &str,
) -> Result<Option<Json>, Refusal> {
    let phase = next["phase"].as_str().unwrap_or("").to_owned();
    let routing = &config["routing"][&phase];
    let probe_to = routing["exit_gate"]
        .as_str()
        .filter(|g| !g.is_empty())
        .and_then(|_| {
            routing
                .get("allowed_next_roles")
                .filter(|a| !a.is_null() && *a != false)
        })
        .and_then(|_| {
            config["routing"]
                .as_object()
                .and_then(|r| r.keys().find(|k| **k != phase).cloned())
        });
    let failure = probe_to.and_then(|to| {
        let mut probe = tr.clone();
        probe["phase_transition_request"] = json!(to);
        let g = gates::evaluate_phase_exit(next, config, &probe, store.root());
        (g.action == Action::GateFailed).then_some(g)
    });
    // Without a probe's failure, the run's recorded one (as the reference falls back to it).
    let recorded = &next["last_gate_failure"];
    let (gate_id, mut failing, mut reasons) = match failure {
        Some(g) if g.gate_id.is_some() => (
            g.gate_id.clone().unwrap_or_default(),
            g.missing_files.clone(),
            g.reasons.clone(),
        ),
        Some(_) => (String::new(), Vec::new(), Vec::new()),
        None if recorded.is_object()
            && (recorded["gate_id"].is_string() || recorded["gate_type"].is_string()) =>
        {
            let list = |v: &Json| -> Vec<String> {
                v.as_array()
                    .into_iter()
                    .flatten()
                    .filter_map(Json::as_str)
                    .map(str::to_owned)
                    .collect()
            };
            let files = if recorded["missing_files"].is_array() {
                list(&recorded["missing_files"])
            } else {
                list(&recorded["failing_files"])
            };
            (
                recorded["gate_id"]
                    .as_str()
                    .or(recorded["gate_type"].as_str())
                    .unwrap_or("unknown")
                    .to_owned(),
                files,
                list(&recorded["reasons"]),
            )
        }
        None => (String::new(), Vec::new(), Vec::new()),
    };
    if gate_id.is_empty() {
        next["non_progress_signature"] = Json::Null;
        next["non_progress_count"] = json!(0);
        return Ok(None);
    }
    failing.sort();
    reasons.sort();
    let signature = format!("{gate_id}::{}::{}", failing.join(","), reasons.join(","));
    let strip = |f: &str| f.strip_prefix("./").unwrap_or(f).to_owned();
    let declared: Vec<String> = tr["files_changed"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(Json::as_str)
        .map(strip)
        .collect();
    let touched = failing.iter().any(|f| declared.contains(&strip(f)));
    let previous = state["non_progress_signature"].as_str();
    if previous != Some(signature.as_str()) || touched {
        next["non_progress_signature"] = json!(signature);
        next["non_progress_count"] = json!(1);
        return Ok(None);
    }
    let count = state["non_progress_count"].as_u64().unwrap_or(0) + 1;
    next["non_progress_signature"] = json!(signature);
    next["non_progress_count"] = json!(count);
    let threshold = config["run_loop"]["non_progress_threshold"]
        .as_u64()
        .unwrap_or(3);
    if count < threshold {
        return Ok(None);
    }
    next["status"] = json!("blocked");
    next["blocked_on"] = json!("non_progress");
    next["blocked_reason"] = json!({
        "category": "non_progress",
        "recovery": {
            "typed_reason": format!("Non-progress detected: {count} accepted turns have not reduced gate failure \"{gate_id}\"."),
            "recovery_action": "agentxchain resume",
            "detail": format!("Gate \"{gate_id}\" has been failing on {} for {count} consecutive turns. The gated file(s) were never modified.", failing.join(", ")),
        },
        "blocked_at": at,
        "turn_id": turn_id,
    });
    store.append_jsonl(
        LEDGER,
        &json!({"type": "non_progress_block", "gate_id": gate_id, "consecutive_turns": count,
                "threshold": threshold, "failing_files": failing, "signature": signature,
                "timestamp": at}),
    )?;
    Ok(Some(json!({
        "consecutive_non_progress_turns": count, "threshold": threshold, "gate_id": gate_id,
        "failing_files": failing, "signature": signature,
    })))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn v(x: &[&str]) -> Vec<String> {
        x.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn declared_and_observed_files_follow_the_write_authority() {
        let ok = declared_vs_observed(
            &v(&[".planning/A.md"]),
            &v(&[".planning/A.md"]),
            "review_only",
        );
        assert!(ok.is_empty());
        let e = declared_vs_observed(
            &v(&[".planning/A.md"]),
            &v(&[".planning/A.md", "src/x.js"]),
            "review_only",
        );
        assert_eq!(
            e,
            ["review_only role modified product files (observed in actual diff): src/x.js"]
        );
        let e = declared_vs_observed(
            &v(&[".planning/A.md", ".planning/B.md"]),
            &v(&[".planning/A.md"]),
            "review_only",
        );
        assert!(
            e[0].starts_with("review_only role declared file changes that were not observed"),
            "{e:?}"
        );
        let e = declared_vs_observed(&v(&["a.sh"]), &v(&["a.sh", "b.sh"]), "authoritative");
        assert!(
            e[0].starts_with(
                "Undeclared file changes detected (observed but not in files_changed): b.sh."
            ),
            "{e:?}"
        );
        // Declared but unchanged is only a warning for an authoritative turn.
        assert!(
            declared_vs_observed(&v(&["a.sh", "c.sh"]), &v(&["a.sh"]), "authoritative").is_empty()
        );
        // The governance config is no turn's to change, declared or not.
        for authority in ["authoritative", "review_only", "proposed"] {
            let e = declared_vs_observed(
                &v(&["agentxchain.json"]),
                &v(&["agentxchain.json"]),
                authority,
            );
            assert!(
                e[0].starts_with("agentxchain.json changed during the turn"),
                "{authority}: {e:?}"
            );
        }
    }

    #[test]
    fn a_cost_is_finite_and_not_negative() {
        assert_eq!(cost_error(&json!({"cost": {"usd": 0.01}})), None);
        assert_eq!(cost_error(&json!({})), None);
        for bad in [json!(-1), json!(1e300), json!("1")] {
            assert!(
                cost_error(&json!({"cost": {"usd": bad}})).is_some(),
                "{bad}"
            );
        }
    }
}
