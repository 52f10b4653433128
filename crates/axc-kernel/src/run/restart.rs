//! `restart`: a new session picks up a governed run from what is on disk alone (the state, the
//! session checkpoint, the bundles) — the command `status` recommends when nothing else is
//! pending. It refuses a run that is completed, failed, or blocked without a pending gate, and
//! a run whose active turns have lost their dispatch bundles (ghost turns); it reconnects to
//! active turns or a pending gate, or assigns and dispatches the next turn; and it writes
//! `.agentxchain/SESSION_RECOVERY.md` so the new session can orient itself.

use serde_json::{Value as Json, json};

use super::config as cfg;
use super::store::{HISTORY, LEDGER, SESSION, STATE, Store};
use super::{Refusal, assign, git, intake, now, session};
use crate::views::status;

/// Where the recovery report is written.
pub const REPORT: &str = ".agentxchain/SESSION_RECOVERY.md";

/// What `restart` did. `notes` are printed first, in order (each `(warning, text)`: a warning is
/// the reference's yellow line, else a dim one).
#[derive(Clone, Debug)]
pub struct Restarted {
    pub notes: Vec<(bool, String)>,
    pub outcome: Outcome,
    pub run_id: String,
    pub phase: String,
    /// The checkpoint read at the start: `(reason, at)`.
    pub checkpoint: Option<(String, String)>,
}

#[derive(Clone, Debug)]
pub enum Outcome {
    /// A gate awaits a person: nothing was assigned.
    Pending,
    /// The next turn was assigned and dispatched (bound to this intake intent, if any).
    Assigned {
        turn_id: String,
        role: String,
        intent: Option<String>,
    },
    /// Turns were active already: the session reconnects to them.
    Reconnected { turns: Vec<String> },
}

/// Why `restart` stopped: the lines the reference prints (the first in red), exit 1.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Stopped {
    /// Lines printed before the refusal, as `Restarted::notes`.
    pub notes: Vec<(bool, String)>,
    pub lines: Vec<String>,
}

impl From<Refusal> for Stopped {
    fn from(r: Refusal) -> Stopped {
        Stopped {
            notes: Vec::new(),
            lines: vec![r.message],
        }
    }
}

use crate::js::truthy_str as text;

/// `restart [--role r]`.
pub fn restart(store: &Store, role: Option<&str>) -> Result<Restarted, Stopped> {
    let config = cfg::load(store).map_err(|r| {
        if r.message.starts_with("The resume command") {
            Refusal::new("The restart command is only available for governed projects.")
        } else {
            r
        }
    })?;
    let lock = store.lock()?;
    let state = match store.read_json(STATE) {
        Ok(Some(s)) if s.is_object() => s,
        Ok(None) => {
            return Err(Refusal::new(
                "No governed run found. Use `agentxchain run` to start a governed run.",
            )
            .into());
        }
        _ => return Err(Refusal::new("No valid governed state.json found.").into()),
    };
    // A state naming a turn that is not a plain id is refused before any path is built from it.
    store.state()?;
    let checkpoint = store
        .read_json(SESSION)
        .ok()
        .flatten()
        .filter(Json::is_object);
    let run_id = text(&state["run_id"]).unwrap_or("").to_owned();
    let mut early = Vec::new();
    if let Some(cp) = &checkpoint
        && cp["run_id"] != state["run_id"]
    {
        early.push(format!(
            "Checkpoint run_id mismatch: session.json has {}, state.json has {}",
            js(&cp["run_id"]),
            js(&state["run_id"])
        ));
        early.push(
            "The checkpoint is stale. Proceeding with state.json as ground truth.".to_owned(),
        );
    }
    let early: Vec<(bool, String)> = early.into_iter().map(|l| (false, l)).collect();
    let stop = |lines: Vec<String>| Stopped {
        notes: early.clone(),
        lines,
    };
    let pending =
        !falsy(&state["pending_phase_transition"]) || !falsy(&state["pending_run_completion"]);
    match state["status"].as_str() {
        Some("completed") => {
            return Err(stop(vec![
                "Run is in terminal state: completed.".into(),
                format!(
                    "Run {} completed at {}.",
                    js(&state["run_id"]),
                    text(&state["completed_at"]).unwrap_or("unknown")
                ),
            ]));
        }
        Some("failed") => {
            return Err(stop(vec![
                "Run uses reserved status: failed.".into(),
                "Current governed writers do not emit run-level failed. Inspect state.json and recover manually.".into(),
            ]));
        }
        Some("blocked") if !pending => {
            let mut lines = vec!["Run is blocked. Resolve the blocker first.".to_owned()];
            let r = status::recovery(&state, &config);
            if r.is_object() {
                lines.push(format!("Reason: {}", js(&r["typed_reason"])));
                lines.push(format!("Owner: {}", js(&r["owner"])));
                lines.push(format!("Action: {}", js(&r["recovery_action"])));
                if !falsy(&r["detail"]) {
                    lines.push(format!("Detail: {}", js(&r["detail"])));
                }
            } else if !falsy(&state["blocked_reason"]) {
                lines.push(format!("Reason: {}", js(&state["blocked_reason"])));
            }
            return Err(stop(lines));
        }
        _ => {}
    }
    let active: Vec<(String, String)> = state["active_turns"]
        .as_object()
        .into_iter()
        .flatten()
        .map(|(id, t)| {
            (
                id.clone(),
                text(&t["assigned_role"]).unwrap_or("unknown").to_owned(),
            )
        })
        .collect();
    let ghosts: Vec<&(String, String)> = active
        .iter()
        .filter(|(id, _)| {
            store
                .path(&super::dispatch::bundle_rel(id))
                .map(|p| !p.exists())
                .unwrap_or(true)
        })
        .collect();
    if !ghosts.is_empty() {
        let mut lines = vec!["State/bundle integrity failure detected:".to_owned()];
        for (id, role) in &ghosts {
            lines.push(format!(
                "  Active turn {id} ({role}) has no dispatch bundle at .agentxchain/dispatch/turns/{id}"
            ));
        }
        lines.push(String::new());
        lines.push("This is a ghost turn — state references an active turn but the dispatch files are missing.".into());
        lines.push("Recovery options:".into());
        for (id, _) in &ghosts {
            lines.push(format!(
                "  agentxchain reissue-turn --turn {id} --reason \"missing dispatch bundle\""
            ));
        }
        lines.push(
            "  agentxchain reject-turn --reason \"ghost turn — missing dispatch bundle\"".into(),
        );
        lines.push(String::new());
        lines.push("Run `agentxchain doctor` for a full diagnostic.".into());
        return Err(stop(lines));
    }

    let mut notes = early;
    let drift = drift(store, checkpoint.as_ref());
    notes.extend(drift.iter().map(|w| (true, format!("⚠ {w}"))));
    let (_, command, _, detail) = status::recommended(&state);
    let command = js(&command);
    if let Some(pt) = state["pending_phase_transition"]
        .as_object()
        .filter(|_| !falsy(&state["pending_phase_transition"]))
    {
        notes.push((
            true,
            format!(
                "Pending phase transition: {} → {} (gate: {})",
                js(&pt["from"]),
                js(&pt["to"]),
                js(&pt["gate"])
            ),
        ));
        notes.push((false, format!("Run `{command}` next.")));
        if !falsy(&detail) {
            notes.push((false, format!("Detail: {}", js(&detail))));
        }
    }
    if !falsy(&state["pending_run_completion"]) {
        notes.push((
            true,
            format!(
                "Pending run completion (gate: {})",
                js(&state["pending_run_completion"]["gate"])
            ),
        ));
        notes.push((false, format!("Run `{command}` next.")));
        if !falsy(&detail) {
            notes.push((false, format!("Detail: {}", js(&detail))));
        }
    }
    let ids: Vec<String> = active.iter().map(|(id, _)| id.clone()).collect();
    if !active.is_empty() && state["status"] == "active" {
        notes.push((
            true,
            format!(
                "Warning: {} turn(s) were assigned but never completed: {}",
                active.len(),
                ids.join(", ")
            ),
        ));
        notes.push((
            false,
            "These turns will be available for the next agent to complete.".into(),
        ));
        if !drift.is_empty() {
            notes.push((
                true,
                "Active turns exist with repo drift since checkpoint. Reconnecting with warnings."
                    .into(),
            ));
            notes.push((false, String::new()));
            notes.push((false, "Recovery options:".into()));
            for (id, role) in &active {
                notes.push((false, format!("  agentxchain reissue-turn --turn {id} --reason \"baseline drift\"  — reissue {role} from current HEAD")));
            }
            notes.push((false, "  agentxchain reject-turn --reason \"baseline drift\"  — reject and retry with refreshed baseline".into()));
            notes.push((
                false,
                "  Continue as-is if the drift does not affect the retained turns.".into(),
            ));
        }
    }
    let phase = text(&state["phase"])
        .or(text(&state["current_phase"]))
        .unwrap_or("")
        .to_owned();
    let last = checkpoint
        .as_ref()
        .map(|c| (js(&c["checkpoint_reason"]), js(&c["last_checkpoint_at"])));
    let finish = |outcome: Outcome, notes: Vec<(bool, String)>| {
        Ok::<_, Stopped>(Restarted {
            notes,
            outcome,
            run_id: run_id.clone(),
            phase: phase.clone(),
            checkpoint: last.clone(),
        })
    };
    // The report is written first, from the state as found (as the reference's is), once every
    // check has passed: a report path that cannot be written (a link out of the project)
    // stops the restart before it has changed anything.
    let write_report = |state: &Json| {
        store
            .write_text(REPORT, &report(store, state, checkpoint.as_ref(), &drift))
            .map_err(Stopped::from)
    };
    if pending {
        write_report(&state)?;
        session::checkpoint(store, &state, "restart_reconnect", Default::default())?;
        return finish(Outcome::Pending, notes);
    }
    if state["status"] == "idle" {
        // The reference reactivates a paused run only; an idle one has no run to restart.
        return Err(Stopped {
            notes,
            lines: vec![
                "Failed to reactivate run: Cannot reactivate run: status is \"idle\", expected \"blocked\" or \"paused\".".into(),
            ],
        });
    }
    let Some(role) = role
        .map(str::to_owned)
        .or_else(|| text(&config["routing"][&phase]["entry_role"]).map(str::to_owned))
        .or_else(|| {
            config["roles"]
                .as_object()
                .and_then(|r| r.keys().next().cloned())
        })
    else {
        return Err(Stopped {
            notes,
            lines: vec!["Cannot determine which role to assign. Use --role to specify.".into()],
        });
    };
    if active.is_empty() && config["roles"].get(&role).is_none() {
        return Err(Stopped {
            notes,
            lines: vec![format!("Failed to assign turn: Unknown role: \"{role}\"")],
        });
    }
    write_report(&state)?;
    let mut state = state;
    if state["status"] == "paused" {
        // Paused (a status older writers left): active again, nothing else to resolve.
        for key in ["blocked_on", "blocked_reason", "escalation"] {
            state[key] = Json::Null;
        }
        state["status"] = json!("active");
        store.write_json(STATE, &state)?;
    }
    if !active.is_empty() {
        session::checkpoint(store, &state, "restart_reconnect", Default::default())?;
        return finish(Outcome::Reconnected { turns: ids }, notes);
    }
    // An approved intake intent is bound to the turn (as `resume`), else a plain turn: the
    // intake operation takes the lock itself.
    let lock_released = intake::next_dispatchable(store, state["run_id"].as_str()).is_some();
    if lock_released {
        drop(lock);
        if let Some(Ok(reply)) = intake::bind_next(store, &role, state["run_id"].as_str()) {
            let state = store.state()?;
            let turn_id = js(&reply["turn_id"]);
            let role = text(&state["active_turns"][&turn_id]["assigned_role"])
                .unwrap_or(&role)
                .to_owned();
            let intent = Some(js(&reply["intent"]["intent_id"]));
            return finish(
                Outcome::Assigned {
                    turn_id,
                    role,
                    intent,
                },
                notes,
            );
        }
    }
    // A plain turn (under the lock again when the intake bind let it go).
    let _relock = if lock_released {
        Some(store.lock()?)
    } else {
        None
    };
    let state = if lock_released { store.state()? } else { state };
    match assign_plain(store, &config, &state, &role) {
        Ok((_, turn_id)) => finish(
            Outcome::Assigned {
                turn_id,
                role,
                intent: None,
            },
            notes,
        ),
        Err(line) => Err(Stopped {
            notes,
            lines: vec![line],
        }),
    }
}

fn assign_plain(
    store: &Store,
    config: &Json,
    state: &Json,
    role: &str,
) -> Result<(Json, String), String> {
    match assign::assign_and_dispatch(store, config, state, role, None) {
        Ok((state, turn)) => Ok((state, js(&turn["turn_id"]))),
        Err(e) => Err(format!("Failed to assign turn: {e}")),
    }
}

/// What moved since the checkpoint's baseline: HEAD, branch, a clean tree turned dirty.
fn drift(store: &Store, checkpoint: Option<&Json>) -> Vec<String> {
    let mut warnings = Vec::new();
    let Some(base) = checkpoint.map(|c| &c["baseline_ref"]).filter(|b| !falsy(b)) else {
        return warnings;
    };
    let Some(now) = git::snapshot(store.root()) else {
        return warnings;
    };
    // Values from the checkpoint (an agent can write it) reach the terminal and the report
    // escaped.
    let short = |s: &str| axc_core::util::printable(&s.chars().take(8).collect::<String>());
    if let (Some(old), Some(new)) = (text(&base["git_head"]), now.head.as_deref())
        && old != new
    {
        warnings.push(format!(
            "Git HEAD has moved since checkpoint: {} → {}",
            short(old),
            short(new)
        ));
    }
    if let (Some(old), Some(new)) = (text(&base["git_branch"]), now.branch.as_deref())
        && old != new
    {
        warnings.push(format!(
            "Branch changed since checkpoint: {} → {}",
            axc_core::util::printable(old),
            axc_core::util::printable(new)
        ));
    }
    let dirty = now
        .changes
        .iter()
        .any(|p| !p.starts_with(".agentxchain/locks/"));
    if base["workspace_dirty"] == false && dirty {
        warnings.push("Workspace was clean at checkpoint but is now dirty".to_owned());
    }
    warnings
}

/// JavaScript's falsiness for what state fields hold.
fn falsy(v: &Json) -> bool {
    match v {
        Json::Null => true,
        Json::Bool(b) => !b,
        Json::String(s) => s.is_empty(),
        Json::Number(n) => n.as_f64() == Some(0.0),
        _ => false,
    }
}

/// A value as a template literal shows it (`null`, a string's text, a number, JSON otherwise).
fn js(v: &Json) -> String {
    match v {
        Json::String(s) => axc_core::util::printable(s),
        Json::Null => "null".into(),
        other => axc_core::util::printable(&other.to_string()),
    }
}

/// The JSON lines of `rel`, or `None` when any line is not JSON (the reference then leaves the
/// report's section out).
fn lines(store: &Store, rel: &str) -> Option<Vec<Json>> {
    let text = store.read_text(rel, super::store::MAX_LOG).ok()??;
    text.trim()
        .split('\n')
        .filter(|l| !l.is_empty())
        .map(|l| serde_json::from_str(l).ok())
        .collect()
}

/// `.agentxchain/SESSION_RECOVERY.md`, as the reference writes it.
fn report(store: &Store, state: &Json, checkpoint: Option<&Json>, drift: &[String]) -> String {
    let (restart, command, _, detail) = status::recommended(state);
    let command = text(&command).map(str::to_owned);
    let phase = text(&state["phase"])
        .or(text(&state["current_phase"]))
        .unwrap_or("unknown");
    let mut out = vec![
        "# Session Recovery Report".to_owned(),
        String::new(),
        format!("> Auto-generated by `agentxchain restart` at {}", now()),
        String::new(),
        "## Run Identity".into(),
        String::new(),
        format!("- **Run ID**: `{}`", js(&state["run_id"])),
        format!(
            "- **Project**: `{}`",
            text(&state["project_id"]).unwrap_or("unknown")
        ),
        format!("- **Status**: {}", js(&state["status"])),
        format!("- **Phase**: {phase}"),
        String::new(),
    ];
    if let Some(cp) = checkpoint {
        out.extend([
            "## Last Checkpoint".to_owned(),
            String::new(),
            format!("- **Session**: `{}`", js(&cp["session_id"])),
            format!(
                "- **Last turn**: `{}`",
                text(&cp["last_turn_id"]).unwrap_or("none")
            ),
            format!(
                "- **Last role**: {}",
                text(&cp["last_role"]).unwrap_or("unknown")
            ),
            format!("- **Reason**: {}", js(&cp["checkpoint_reason"])),
            format!("- **Time**: {}", js(&cp["last_checkpoint_at"])),
            String::new(),
        ]);
    }
    if let Some(entries) = lines(store, LEDGER) {
        let recent = &entries[entries.len().saturating_sub(5)..];
        if !recent.is_empty() {
            out.extend(["## Recent Decisions".to_owned(), String::new()]);
            for e in recent {
                let id = text(&e["decision_id"])
                    .or(text(&e["id"]))
                    .unwrap_or("unknown");
                let what = text(&e["summary"])
                    .or(text(&e["description"]))
                    .map(axc_core::util::printable)
                    .unwrap_or_else(|| {
                        axc_core::util::printable(
                            &e.to_string().chars().take(100).collect::<String>(),
                        )
                    });
                out.push(format!("- `{}`: {what}", axc_core::util::printable(id)));
            }
            out.push(String::new());
        }
    }
    if let Some(entries) = lines(store, HISTORY) {
        out.extend([
            "## Turn History".to_owned(),
            String::new(),
            format!("Total turns completed: {}", entries.len()),
            String::new(),
        ]);
        let recent = &entries[entries.len().saturating_sub(3)..];
        if !recent.is_empty() {
            out.extend(["### Last 3 Turns".to_owned(), String::new()]);
            for e in recent {
                out.push(format!(
                    "- **{}** ({}, phase: {}): {}",
                    js(&e["turn_id"]),
                    js(&e["role"]),
                    js(&e["phase"]),
                    js(&e["status"])
                ));
            }
            out.push(String::new());
        }
    }
    let action = format!(
        "- **Action**: Run `{}` to continue",
        command.as_deref().unwrap_or("null")
    );
    let pt = &state["pending_phase_transition"];
    if !falsy(pt) {
        out.extend([
            "## Pending Phase Transition".to_owned(),
            String::new(),
            format!("- **From**: {}", js(&pt["from"])),
            format!("- **To**: {}", js(&pt["to"])),
            format!("- **Gate**: {}", js(&pt["gate"])),
            format!(
                "- **Requested by**: {}",
                text(&pt["requested_by_turn"]).unwrap_or("unknown")
            ),
            action.clone(),
            String::new(),
        ]);
    }
    let pc = &state["pending_run_completion"];
    if !falsy(pc) {
        out.extend([
            "## Pending Run Completion".to_owned(),
            String::new(),
            format!("- **Gate**: {}", js(&pc["gate"])),
            format!(
                "- **Requested by**: {}",
                text(&pc["requested_by_turn"]).unwrap_or("unknown")
            ),
            action,
            String::new(),
        ]);
    }
    if checkpoint.is_some_and(|c| !falsy(&c["baseline_ref"])) && !drift.is_empty() {
        out.extend(["## Continuity Warnings".to_owned(), String::new()]);
        out.extend(drift.iter().map(|w| format!("- ⚠ {w}")));
        out.push(String::new());
    }
    out.extend(["## Next Steps".to_owned(), String::new()]);
    match command {
        Some(c) if !restart => {
            let detail = text(&detail)
                .map(|d| format!(" Detail: {d}."))
                .unwrap_or_default();
            out.push(format!("Run `{c}` next.{detail}"));
        }
        _ => out
            .push("The next turn has been assigned. Check the dispatch bundle for context.".into()),
    }
    out.push(String::new());
    out.join("\n")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn falsiness_is_javascripts() {
        for v in [json!(null), json!(false), json!(""), json!(0), json!(0.0)] {
            assert!(falsy(&v), "{v}");
        }
        for v in [json!(true), json!("x"), json!(1), json!({}), json!([])] {
            assert!(!falsy(&v), "{v}");
        }
    }

    #[test]
    fn values_print_as_a_template_literal_shows_them() {
        assert_eq!(js(&json!("a")), "a");
        assert_eq!(js(&json!(null)), "null");
        assert_eq!(js(&json!(3)), "3");
        assert_eq!(js(&json!({"a": 1})), "{\"a\":1}");
    }
}
