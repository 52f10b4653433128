//! The session checkpoint (`.agentxchain/session.json`): where the run was at its last
//! change, for status's continuity section and a later session's recovery.

use serde_json::{Value as Json, json};

use super::store::{SESSION, Store};
use super::{Refusal, git, new_id, now};

/// `{git_head, git_branch, workspace_dirty}` of the working tree now (the acceptance lock a
/// command holds while it writes is not the workspace's).
fn baseline_ref(snap: Option<&git::Snapshot>) -> Json {
    match snap {
        Some(s) if s.head.is_some() => {
            let dirty = s
                .changes
                .iter()
                .any(|p| !p.starts_with(".agentxchain/locks/"));
            json!({"git_head": s.head, "git_branch": s.branch, "workspace_dirty": dirty})
        }
        _ => json!({"git_head": null, "git_branch": null, "workspace_dirty": null}),
    }
}

/// Extra context of one checkpoint.
#[derive(Default)]
pub struct Extra<'a> {
    pub role: Option<&'a str>,
    pub dispatch_dir: Option<String>,
    /// The baseline just captured for a turn (its head and cleanliness are used).
    pub turn_baseline: Option<&'a Json>,
    /// The working tree as the command already read it (else it is read here).
    pub snapshot: Option<&'a git::Snapshot>,
}

/// Writes the checkpoint for `state` at `reason` (`turn_assigned`, `turn_accepted`,
/// `phase_approved`, `run_completed`, `blocked`, …), keeping the session id while the run is
/// the same.
pub fn checkpoint(store: &Store, state: &Json, reason: &str, extra: Extra) -> Result<(), Refusal> {
    let existing = store.read_json(SESSION).ok().flatten();
    let same_run = existing
        .as_ref()
        .is_some_and(|e| e["run_id"] == state["run_id"]);
    let session_id = match &existing {
        Some(e) if same_run && e["session_id"].is_string() => e["session_id"].clone(),
        _ => json!(new_id("session")),
    };
    let active: Vec<String> = state["active_turns"]
        .as_object()
        .map(|m| m.keys().cloned().collect())
        .unwrap_or_default();
    let last_turn = active
        .last()
        .map(|t| json!(t))
        .unwrap_or_else(|| state["last_completed_turn_id"].clone());
    let last_completed = if state["last_completed_turn_id"].is_null() {
        existing
            .as_ref()
            .map(|e| e["last_completed_turn_id"].clone())
            .unwrap_or(Json::Null)
    } else {
        state["last_completed_turn_id"].clone()
    };
    let snap = match extra.snapshot {
        Some(s) => Some(s.clone()),
        None => git::snapshot(store.root()),
    };
    let baseline = match extra.turn_baseline {
        Some(b) => json!({
            "git_head": b["head_ref"],
            "git_branch": snap.as_ref().and_then(|s| s.branch.clone()),
            "workspace_dirty": !b["clean"].as_bool().unwrap_or(true),
        }),
        None => baseline_ref(snap.as_ref()),
    };
    let started = existing
        .as_ref()
        .filter(|_| same_run)
        .and_then(|e| e["started_at"].as_str().map(str::to_owned))
        .or_else(|| {
            existing
                .as_ref()
                .and_then(|e| e["started_at"].as_str().map(str::to_owned))
        })
        .unwrap_or_else(now);
    let pending_gate = state["pending_phase_transition"]["gate"].clone();
    let pending_completion = if state["pending_run_completion"]["gate"].is_null() {
        Json::Null
    } else {
        json!(true)
    };
    let cp = json!({
        "session_id": session_id,
        "run_id": state["run_id"],
        "started_at": started,
        "last_checkpoint_at": now(),
        "checkpoint_reason": reason,
        "run_status": state["status"],
        "phase": state["phase"],
        "last_phase": state["phase"],
        "last_turn_id": last_turn,
        "last_completed_turn_id": last_completed,
        "active_turn_ids": active,
        "last_role": extra.role,
        "pending_gate": pending_gate,
        "pending_run_completion": pending_completion,
        "blocked": state["status"] == "blocked",
        "baseline_ref": baseline,
        "agent_context": {"adapter": null, "dispatch_dir": extra.dispatch_dir},
    });
    store.write_derived_json(SESSION, &cp)
}
