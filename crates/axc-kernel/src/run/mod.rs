//! The governed run on disk: the commands that change a run (`resume`, `accept-turn`,
//! `checkpoint-turn`, `approve-transition`, `approve-completion`, `escalate`, `unblock`) and
//! the scaffold `init --governed` writes, over the same files the JavaScript reference writes
//! (`state.json`, `session.json`, `history.jsonl`, `decision-ledger.jsonl`, `events.jsonl`,
//! `human-escalations.jsonl`, `TALK.md`, `HUMAN_TASKS.md`, dispatch bundles), so a run can
//! move between the two tools at any step.
//!
//! Every operation runs under [`Store::lock`] (an OS lock that a killed process releases, plus
//! the reference's `locks/accept-turn.lock` so a reference process sees it), reads the state
//! again under it, and writes whole files by write-then-rename and log lines whole in one
//! append: a crash leaves the previous state readable. Operations return data
//! ([`Refusal`] or an outcome struct); the command line shapes the texts.

pub mod accept;
pub mod approve;
pub mod assign;
pub mod checkpoint;
pub mod clean;
pub mod completion_reconcile;
pub mod config;
pub mod conflict;
pub mod dispatch;
pub mod escalate;
pub mod git;
pub mod hooked;
pub mod intake;
pub mod lifecycle;
pub mod local_cli;
pub mod paths;
pub mod phase_reconcile;
pub mod reconcile;
pub mod reject;
pub mod repo_decisions;
pub mod restart;
pub mod run_history;
pub mod scaffold;
pub mod session;
pub mod settings;
pub mod standing;
pub mod store;
pub mod watchdog;

use serde_json::{Value as Json, json};

pub use store::Store;

/// A refusal: the reference's text and the exit code it exits with, and the warning the
/// reference prints on stderr before it (what exactly was wrong), if any.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Refusal {
    pub message: String,
    pub exit_code: i32,
    pub warning: Option<String>,
}

impl Refusal {
    pub fn new(message: impl Into<String>) -> Refusal {
        Refusal {
            message: message.into(),
            exit_code: 1,
            warning: None,
        }
    }

    /// The same refusal, with `warning` printed on stderr before it.
    pub fn warning(self, warning: impl Into<String>) -> Refusal {
        Refusal {
            warning: Some(warning.into()),
            ..self
        }
    }
}

impl From<std::io::Error> for Refusal {
    fn from(e: std::io::Error) -> Refusal {
        Refusal::new(format!("Error: {e}"))
    }
}

/// The active turn a command acts on: the one `--turn` names, else the only one. `none` is
/// the command's text when no turn is active (the reference's texts differ per command);
/// `what` names the command in the several-turns refusal.
pub fn target_turn(
    state: &Json,
    turn: Option<&str>,
    none: &str,
    what: &str,
) -> Result<Json, Refusal> {
    let turns = state["active_turns"].as_object();
    match turn {
        Some(t) => turns
            .and_then(|m| m.get(t))
            .cloned()
            .ok_or_else(|| Refusal::new(format!("No active turn found for --turn {t}"))),
        None => match turns.map_or(0, |m| m.len()) {
            0 => Err(Refusal::new(none)),
            1 => Ok(turns
                .and_then(|m| m.values().next())
                .cloned()
                .unwrap_or_default()),
            _ => Err(Refusal::new(format!(
                "Multiple active turns exist. Use --turn <id> to specify which to {what}."
            ))),
        },
    }
}

/// `<prefix>_<16 hex>`.
pub fn new_id(prefix: &str) -> String {
    format!("{prefix}_{}", axc_core::util::random_hex(16))
}

/// `Date#toISOString()` of now.
pub fn now() -> String {
    axc_core::util::iso_timestamp(std::time::SystemTime::now())
}

/// The `turn` object of an event: `{turn_id, role_id}`.
pub fn event_turn(turn: &Json) -> Json {
    json!({"turn_id": turn["turn_id"], "role_id": turn["assigned_role"]})
}

/// The intake intent a turn serves (`intake_context.intent_id`), `null` when none: its events
/// name it.
pub fn intent_of(turn: &Json) -> Json {
    id_or_null(&turn["intake_context"]["intent_id"])
}

/// An id field as an event carries it: the string, else `null`.
pub fn id_or_null(v: &Json) -> Json {
    match v {
        Json::String(id) => json!(id),
        _ => Json::Null,
    }
}

/// Rounds a dollar amount as the reference does after each sum (two decimals kept exact
/// where JavaScript's sum drifts: `49.980000000000004` reads back as `49.98`).
pub fn usd(v: f64) -> Json {
    let r = (v * 1e6).round() / 1e6;
    if r.fract() == 0.0 && r.abs() < 1e15 {
        json!(r as i64)
    } else {
        json!(r)
    }
}

/// A kernel transition's refusal as a command's.
fn transitions_err(e: String) -> Refusal {
    Refusal::new(e)
}
