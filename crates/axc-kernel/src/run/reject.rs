//! `reject-turn` (the staged result is archived and the same turn is dispatched again, or,
//! with its retries spent, the run is blocked) and `reissue-turn` (the turn is replaced by a
//! new one with a fresh baseline).

use serde_json::{Value as Json, json};

use super::config as cfg;
use super::store::{HISTORY, LEDGER, STATE, Store};
use super::{Refusal, dispatch, event_turn, git, intent_of, new_id, now, session};
use crate::turn_result;

/// What `reject-turn` did.
#[derive(Clone, Debug)]
pub struct Rejected {
    pub turn: Json,
    pub state: Json,
    pub failed_stage: String,
    pub errors: Vec<String>,
    /// Retries were spent: the run is blocked.
    pub escalated: bool,
    /// The human escalation raised for that block.
    pub escalation: Option<Json>,
}

pub(crate) fn deadline(config: &Json) -> String {
    let minutes = crate::transitions::turn_timeout_minutes(config).min(100 * 366 * 24 * 60);
    axc_core::util::iso_timestamp(
        std::time::SystemTime::now() + std::time::Duration::from_secs(minutes * 60),
    )
}

/// `reject-turn --reassign` on a turn with no file conflict: the baseline it was dispatched
/// from and HEAD now, when HEAD moved since — the reference then refuses and names
/// `reissue-turn` (a clean reissue from the current HEAD). `(turn id, from, to)`.
pub fn reassign_drift(
    store: &Store,
    turn: Option<&str>,
) -> Result<Option<(String, String, String)>, Refusal> {
    let state = store.state()?;
    let current = super::target_turn(&state, turn, "No active turns to reject.", "reject")?;
    if !current["conflict_state"].is_null() {
        return Ok(None);
    }
    let from = current["baseline"]["head_ref"]
        .as_str()
        .filter(|h| !h.is_empty())
        .map(str::to_owned);
    let to = git::head(store.root());
    Ok(match (from, to) {
        (Some(from), Some(to)) if from != to => Some((
            current["turn_id"].as_str().unwrap_or("").to_owned(),
            from,
            to,
        )),
        _ => None,
    })
}

/// `reject-turn [--turn id] [--reason text]`.
pub fn reject(
    store: &Store,
    turn: Option<&str>,
    reason: Option<&str>,
) -> Result<Rejected, Refusal> {
    reject_as(store, turn, reason, None)
}

/// [`reject`] with what failed given (`run`'s failed dispatch: stage `dispatch` and its
/// reason) instead of read from validating the staged result.
pub fn reject_as(
    store: &Store,
    turn: Option<&str>,
    reason: Option<&str>,
    failed: Option<(&str, Vec<String>)>,
) -> Result<Rejected, Refusal> {
    let config = cfg::load(store)?;
    let _lock = store.lock()?;
    let state = store.state()?;
    let current = super::target_turn(&state, turn, "No active turns to reject.", "reject")?;
    let turn_id = current["turn_id"].as_str().unwrap_or("").to_owned();
    let staging = dispatch::staging_rel(&turn_id);
    // The rejection names what the staged result fails, when there is one.
    let mut solo = state.clone();
    solo["active_turns"] = json!({ &turn_id: current.clone() });
    let conflicted = current["conflict_state"].is_object();
    let conflict_error = current["conflict_state"]["conflict_error"].clone();
    let (failed_stage, errors) = match failed {
        Some((stage, errors)) => (stage.to_owned(), errors),
        // A conflicted turn is rejected for its conflict, not for what its result says.
        None if conflicted => {
            let files: Vec<&str> = conflict_error["conflicting_files"]
                .as_array()
                .into_iter()
                .flatten()
                .filter_map(Json::as_str)
                .collect();
            let e = if files.is_empty() {
                "File conflict detected".to_owned()
            } else {
                format!("File conflict detected: {}", files.join(", "))
            };
            ("conflict".to_owned(), vec![e])
        }
        None => {
            let v = turn_result::validate_staged(store.root(), &solo, &config, &staging);
            (v.stage.unwrap_or("unknown").to_owned(), v.errors)
        }
    };
    let attempt = current["attempt"].as_u64().unwrap_or(1);
    let max = config["rules"]["max_turn_retries"].as_u64().unwrap_or(2);
    let can_retry = attempt < max;
    if can_retry && let Some(refusal) = super::settings::rebaseline_refusal(store, &current) {
        return Err(Refusal::new(refusal));
    }
    let staged = store.path(&staging)?;
    if let Ok(bytes) = fsread::read_inside(store.root(), std::path::Path::new(&staging), 16 << 20) {
        let stamp = now().replace([':', '.'], "-");
        store.write_text(
            &format!(".agentxchain/dispatch/rejected/{turn_id}-attempt-{attempt}-{stamp}.json"),
            &String::from_utf8_lossy(&bytes),
        )?;
    }
    let _ = std::fs::remove_file(&staged);
    let rejection = json!({
        "turn_id": turn_id,
        "attempt": attempt,
        "rejected_at": now(),
        "reason": reason.unwrap_or(if conflicted { "file_conflict" } else { "Validation failed" }),
        "validation_errors": errors,
        "failed_stage": failed_stage,
    });
    let mut next = state.clone();
    let mut t = current.clone();
    let mut rejection = rejection;
    t["last_rejection"] = rejection.clone();
    t["conflict_state"] = Json::Null;
    t["conflict_context"] = Json::Null;
    if conflicted {
        let ids = |v: &Json| -> Vec<Json> {
            v.as_array()
                .into_iter()
                .flatten()
                .map(|e| {
                    json!({"turn_id": e["turn_id"], "role": e["role"],
                    "files_changed": e["files_changed"].as_array().cloned().unwrap_or_default()})
                })
                .collect()
        };
        let list = |k: &str| conflict_error[k].as_array().cloned().unwrap_or_default();
        // What the retry is told: the files that conflicted, the turns that changed them, what
        // of its work did not conflict (the reference's `conflict_context`).
        t["conflict_context"] = json!({
            "prior_attempt_turn_id": turn_id, "prior_attempt_number": attempt,
            "conflict_type": conflict_error["type"].as_str().unwrap_or("file_conflict"),
            "conflicting_files": list("conflicting_files"),
            "accepted_turns_since": ids(&conflict_error["accepted_since"]),
            "forward_revision_files": list("forward_revision_files"),
            "forward_revision_turns_since": ids(&conflict_error["forward_revision_turns"]),
            "non_conflicting_files_preserved": list("non_conflicting_files"),
            "guidance": "Rebase the rejected work on top of the current workspace state and preserve non-conflicting changes.",
        });
        rejection["conflict_context"] = t["conflict_context"].clone();
        t["last_rejection"] = rejection.clone();
        store.append_jsonl(
            LEDGER,
            &json!({"timestamp": rejection["rejected_at"], "decision": "conflict_rejected",
                "turn_id": turn_id, "attempt": attempt, "role": current["assigned_role"],
                "phase": state["phase"], "conflict": super::conflict::summary(&conflict_error),
                "resolution_chosen": "reject_and_reassign", "operator_reason": reason}),
        )?;
    }
    let mut payload =
        json!({"attempt": attempt, "reason": rejection["reason"], "failed_stage": failed_stage});
    if !errors.is_empty() {
        payload["validation_errors"] = json!(errors);
    }
    if can_retry {
        t["attempt"] = json!(attempt + 1);
        t["status"] = json!("dispatched");
        t["baseline"] = git::capture_baseline(store.root(), &now());
        t["deadline_at"] = json!(deadline(&config));
        // The retry is a new attempt: no process of the last one is its worker.
        if let Some(o) = t.as_object_mut() {
            for k in super::lifecycle::PROCESS_FIELDS {
                o.remove(k);
            }
        }
        t["dispatched_at"] = json!(now());
        if conflicted {
            // The retry follows the turns it conflicted with.
            let seq = state["turn_sequence"]
                .as_u64()
                .unwrap_or(0)
                .max(current["assigned_sequence"].as_u64().unwrap_or(0));
            t["assigned_sequence"] = json!(seq);
            let others: Vec<Json> = state["active_turns"]
                .as_object()
                .into_iter()
                .flatten()
                .filter(|(k, _)| **k != turn_id)
                .map(|(k, _)| json!(k))
                .collect();
            t["concurrent_with"] = json!(others);
        }
        next["active_turns"][&turn_id] = t.clone();
        store.write_json(STATE, &next)?;
        let mut p = json!({"attempt": attempt, "retrying": true});
        for (k, v) in payload.as_object().into_iter().flatten() {
            p[k] = v.clone();
        }
        let intent = intent_of(&current);
        store.emit_for(
            "turn_rejected",
            &next,
            event_turn(&current),
            intent.clone(),
            p,
        )?;
        dispatch::write_bundle(store, &next, &config, &t)?;
        store.emit_for("turn_dispatched", &next, event_turn(&t), intent, json!({}))?;
        return Ok(Rejected {
            turn: t,
            state: next,
            failed_stage,
            errors,
            escalated: false,
            escalation: None,
        });
    }
    let role = current["assigned_role"].as_str().unwrap_or("");
    let blocked_on = format!("escalation:retries-exhausted:{role}");
    t["status"] = json!("failed");
    next["active_turns"][&turn_id] = t.clone();
    next["status"] = json!("blocked");
    next["blocked_on"] = json!(blocked_on);
    let action =
        if cfg::runtime_type(&config, current["runtime_id"].as_str().unwrap_or("")) == "manual" {
            "Resolve the escalation, then run agentxchain resume"
        } else {
            "Resolve the escalation, then run agentxchain step --resume"
        };
    next["blocked_reason"] = json!({
        "category": "retries_exhausted",
        "recovery": {"typed_reason": "retries_exhausted", "owner": "human", "recovery_action": action, "turn_retained": true, "detail": blocked_on},
        "blocked_at": now(),
        "turn_id": turn_id,
    });
    next["escalation"] = json!({
        "from_role": role, "from_turn_id": turn_id,
        "reason": format!("Turn rejected {attempt} times. Retries exhausted."),
        "validation_errors": errors, "escalated_at": now(),
    });
    store.write_json(STATE, &next)?;
    super::run_history::record_blocked(store, &next, &config)?;
    // A person resolves it: the escalation is raised as the block is written (the reference's
    // order: `human_escalation_raised`, `turn_rejected`, `run_blocked`).
    let escalation = Some(super::escalate::raise(
        store,
        &next,
        Some(&turn_id),
        Some(role),
    )?);
    let mut p = json!({"attempt": attempt, "retrying": false, "escalated": true});
    for (k, v) in payload.as_object().into_iter().flatten() {
        if k != "attempt" {
            p[k] = v.clone();
        }
    }
    store.emit_for(
        "turn_rejected",
        &next,
        event_turn(&current),
        intent_of(&current),
        p,
    )?;
    store.emit_for(
        "run_blocked",
        &next,
        Json::Null,
        intent_of(&current),
        json!({"category": "retries_exhausted"}),
    )?;
    let _ = session::checkpoint(
        store,
        &next,
        "blocked",
        session::Extra {
            role: Some(role),
            ..Default::default()
        },
    );
    super::hooked::on_escalation(
        store,
        &config,
        &json!({"blocked_reason": "retries_exhausted", "recovery_action": action,
            "failed_turn_id": turn_id, "failed_role": role, "attempt_count": attempt,
            "last_error": errors.first().map_or("retries_exhausted", String::as_str),
            "run_id": next["run_id"]}),
    );
    Ok(Rejected {
        turn: t,
        state: next,
        failed_stage,
        errors,
        escalated: true,
        escalation,
    })
}

/// What `reissue-turn` did.
#[derive(Clone, Debug)]
pub struct Reissued {
    pub old: Json,
    pub new: Json,
    pub state: Json,
    pub reason: String,
}

/// `reissue-turn [--turn id] [--role r] [--reason text]`.
pub fn reissue(
    store: &Store,
    turn: Option<&str>,
    role: Option<&str>,
    reason: Option<&str>,
) -> Result<Reissued, Refusal> {
    let config = cfg::load(store)?;
    let _lock = store.lock()?;
    let state = store.state()?;
    let old = super::target_turn(&state, turn, "No active turns to reissue.", "reissue")?;
    let old_id = old["turn_id"].as_str().unwrap_or("").to_owned();
    let old_role = old["assigned_role"].as_str().unwrap_or("").to_owned();
    let role = role.map(str::to_owned).unwrap_or_else(|| old_role.clone());
    if config["roles"].get(&role).is_none() {
        return Err(Refusal::new(format!(
            "Failed to reissue turn: Role \"{role}\" not found in config"
        )));
    }
    // One active turn per role, as assignment keeps it: a reissue under another role may not
    // make a second turn of a role that has one.
    if let Some((other, _)) = state["active_turns"]
        .as_object()
        .into_iter()
        .flatten()
        .find(|(id, t)| **id != old_id && t["assigned_role"] == role.as_str())
    {
        return Err(Refusal::new(format!(
            "Failed to reissue turn: Role \"{role}\" already has an active turn: {other}"
        )));
    }
    let runtime = cfg::runtime_id(&config, &role).to_owned();
    if config["runtimes"].get(&runtime).is_none() {
        return Err(Refusal::new(format!(
            "Failed to reissue turn: Runtime \"{runtime}\" not found in config for role \"{role}\""
        )));
    }
    if let Some(refusal) = super::settings::rebaseline_refusal(store, &old) {
        return Err(Refusal::new(format!("Failed to reissue turn: {refusal}")));
    }
    let reason = reason.unwrap_or("operator-initiated reissue").to_owned();
    let at = now();
    let new_baseline = git::capture_baseline(store.root(), &at);
    let old_baseline = &old["baseline"];
    store.append_jsonl(
        HISTORY,
        &json!({
            "turn_id": old_id, "run_id": state["run_id"], "role": old_role, "phase": state["phase"],
            "status": "reissued", "summary": format!("Turn reissued: {reason}"), "files_changed": [],
            "assigned_sequence": old["assigned_sequence"], "accepted_at": at, "duration_ms": 0,
            "reissue_reason": reason,
        }),
    )?;
    store.append_jsonl(
        LEDGER,
        &json!({
            "timestamp": at, "decision": "turn_reissued", "turn_id": old_id, "role": old_role,
            "new_role": role, "phase": state["phase"], "reason": reason,
            "old_baseline": {"head_ref": old_baseline["head_ref"], "clean": old_baseline["clean"]},
            "new_baseline": {"head_ref": new_baseline["head_ref"], "clean": new_baseline["clean"]},
        }),
    )?;
    let new_id = new_id("turn");
    let sequence = state["turn_sequence"].as_u64().unwrap_or(0) + 1;
    let others: Vec<String> = state["active_turns"]
        .as_object()
        .map(|m| m.keys().filter(|k| **k != old_id).cloned().collect())
        .unwrap_or_default();
    let mut new = json!({
        "turn_id": new_id, "assigned_role": role, "status": "dispatched",
        "attempt": old["attempt"].as_u64().unwrap_or(1) + 1, "assigned_at": at,
        "deadline_at": deadline(&config), "runtime_id": runtime, "baseline": new_baseline,
        "assigned_sequence": sequence, "concurrent_with": others, "reissued_from": old_id,
    });
    if !old["delegation_context"].is_null() {
        new["delegation_context"] = old["delegation_context"].clone();
    }
    // The intent the replaced turn served is the new turn's too (the reference drops it, and
    // the intent then waits for a turn that never comes).
    if !old["intake_context"].is_null() {
        new["intake_context"] = old["intake_context"].clone();
    }
    new["dispatched_at"] = json!(now());
    let mut next = state.clone();
    if let Some(m) = next["active_turns"].as_object_mut() {
        m.remove(&old_id);
        m.insert(new_id.clone(), new.clone());
    }
    if let Some(m) = next["budget_reservations"].as_object_mut() {
        m.remove(&old_id);
        if let Some(cost) = cfg::per_turn_budget(&config).filter(|c| *c > 0.0) {
            m.insert(
                new_id.clone(),
                json!({"reserved_usd": super::usd(cost), "role_id": role, "created_at": at, "reissued_from": old_id}),
            );
        }
    }
    next["turn_sequence"] = json!(sequence);
    store.write_json(STATE, &next)?;
    store.emit_for(
        "turn_reissued",
        &next,
        json!({"turn_id": new_id, "role_id": role}),
        intent_of(&old),
        json!({
            "old_turn_id": old_id, "reason": reason, "old_head": old_baseline["head_ref"],
            "new_head": new["baseline"]["head_ref"], "old_runtime": old["runtime_id"],
            "new_runtime": runtime, "old_role": old_role, "new_role": role,
        }),
    )?;
    store.remove_tree(&dispatch::bundle_rel(&old_id));
    dispatch::write_bundle(store, &next, &config, &new)?;
    store.emit_for(
        "turn_dispatched",
        &next,
        event_turn(&new),
        intent_of(&new),
        json!({}),
    )?;
    let _ = session::checkpoint(
        store,
        &next,
        "turn_reissued",
        session::Extra {
            role: Some(&role),
            turn_baseline: Some(&new["baseline"]),
            ..Default::default()
        },
    );
    Ok(Reissued {
        old,
        new,
        state: next,
        reason,
    })
}
