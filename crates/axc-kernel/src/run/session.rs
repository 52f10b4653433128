//! The session checkpoint (`.agentxchain/session.json`): where the run was at its last
//! change, for status's continuity section and a later session's recovery.

use std::path::Path;
use std::process::{Command, Stdio};

use serde_json::{Value as Json, json};

use super::store::{SESSION, Store};
use super::{Refusal, git, new_id, now};

/// `{git_head, git_branch, workspace_dirty}` of the working tree now.
fn baseline_ref(root: &Path) -> Json {
    let dirty = Command::new("git")
        .arg("-C")
        .arg(root)
        .args(["status", "--porcelain"])
        .stdin(Stdio::null())
        .stderr(Stdio::null())
        .output()
        .ok()
        .filter(|o| o.status.success())
        // The acceptance lock a command holds while it writes is not the workspace's.
        .map(|o| {
            String::from_utf8_lossy(&o.stdout)
                .lines()
                .any(|l| l.len() > 3 && !l[3..].starts_with(".agentxchain/locks/"))
        });
    match (git::head(root), dirty) {
        (Some(h), Some(d)) => {
            json!({"git_head": h, "git_branch": git::branch(root), "workspace_dirty": d})
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
    let baseline = match extra.turn_baseline {
        Some(b) => json!({
            "git_head": b["head_ref"],
            "git_branch": git::branch(store.root()),
            "workspace_dirty": !b["clean"].as_bool().unwrap_or(true),
        }),
        None => baseline_ref(store.root()),
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
    store.write_json(SESSION, &cp)
}
