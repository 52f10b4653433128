//! `run` in a phase whose `max_concurrent_turns` is above 1, as the reference's run loop: each
//! round fills the free slots with new assignments, dispatches every dispatchable turn at once
//! (a thread each, waiting on its agent), then settles their results one by one in the order
//! they were dispatched (acceptance takes the project's lock, and attributes each turn's files
//! apart from its siblings').

use std::collections::BTreeSet;

use axc_core::util::printable as clean;
use axc_kernel::run::assign;
use serde_json::Value as Json;

use super::{Launched, Loop, Settled, Stop, dispatchable};
use crate::governed::{active_turns, s};

impl Loop<'_> {
    /// One round; `Some` when the loop stops.
    pub(super) fn parallel_round(&mut self, state: Json, max: u64) -> Option<Stop> {
        let active = active_turns(&state);
        // A phase or completion request queued behind a turn only a person can settle (a
        // conflicted one): further turns cannot move the run, so none is started.
        let queued = !state["queued_phase_transition"].is_null()
            || !state["queued_run_completion"].is_null();
        if queued && let Some(t) = active.iter().find(|t| !dispatchable(t)) {
            self.errors.push(waiting(t));
            return Some(Stop::Blocked);
        }
        if active.is_empty()
            && axc_kernel::run::intake::preemption(self.store)
                .is_some_and(|m| m["priority"] == "p0")
        {
            return Some(Stop::PriorityPreempted);
        }
        // Ctrl+C: the round that was running has finished; nothing more is dispatched.
        if self.stopping() {
            println!("Run stopped by caller");
            return Some(Stop::CallerStopped);
        }
        let mut to_dispatch: Vec<Json> =
            active.iter().filter(|t| dispatchable(t)).cloned().collect();
        let (new, refused) = self.fill(state, max);
        to_dispatch.extend(new);
        if to_dispatch.is_empty() {
            let state = self.store.state().unwrap_or(Json::Null);
            self.errors.push(
                match active_turns(&state).iter().find(|t| !dispatchable(t)) {
                    Some(t) => waiting(t),
                    // Why the last role could not be given a turn (uncommitted files, the
                    // budget, ...), as the one-at-a-time loop says it.
                    None => refused.unwrap_or_else(|| {
                        format!("No entry role for phase \"{}\"", s(&state["phase"]))
                    }),
                },
            );
            return Some(Stop::Blocked);
        }
        let this: &Self = self;
        let launched: Vec<Launched> = std::thread::scope(|scope| {
            let running: Vec<_> = to_dispatch
                .iter()
                .map(|turn| scope.spawn(move || this.launch(turn)))
                .collect();
            running
                .into_iter()
                .map(|r| {
                    r.join().unwrap_or_else(|_| {
                        Launched::Failed("a dispatch ended abnormally (its thread panicked)".into())
                    })
                })
                .collect()
        });
        let (mut accepted, mut conflicts) = (0usize, 0usize);
        for (turn, launched) in to_dispatch.iter().zip(launched) {
            match self.settle(turn, launched) {
                Settled::Accepted => accepted += 1,
                Settled::Rejected => {}
                Settled::Conflicted => {
                    conflicts += 1;
                    // The third conflict in a row blocks the run with an escalation.
                    if self.store.state().is_ok_and(|st| st["status"] == "blocked") {
                        println!("Run blocked");
                        return Some(Stop::ConflictLoop);
                    }
                }
                Settled::Stop(stop) => return Some(stop),
            }
        }
        if accepted == 0 {
            // Nothing moved: another round would dispatch the same turns again.
            let stop = if conflicts == to_dispatch.len() {
                Stop::ConflictStall
            } else {
                Stop::Blocked
            };
            self.errors.push(format!(
                "All parallel turns failed acceptance — {}",
                stop.as_str()
            ));
            return Some(stop);
        }
        None
    }

    /// New turns for the round's free slots: the routing's next role, then — when it has a
    /// turn or cannot take one — the phase's other allowed roles, until the phase is at
    /// capacity or no role is left. A delegation review is dispatched alone, and while
    /// delegations are pending no other role fills a slot.
    /// Also why the last role tried could not be assigned (`assignTurn(<role>): <refusal>`).
    fn fill(&mut self, mut state: Json, max: u64) -> (Vec<Json>, Option<String>) {
        let mut new = Vec::new();
        let mut refused = None;
        let mut tried = BTreeSet::new();
        while (active_turns(&state).len() as u64) < max {
            let Some(role) = self
                .pick
                .take()
                .or_else(|| assign::next_role(&state, self.config))
            else {
                break;
            };
            let turn = if tried.contains(&role) {
                if delegating(&state) {
                    break;
                }
                let phase = s(&state["phase"]);
                let alternates: Vec<String> = self.config["routing"][&phase]["allowed_next_roles"]
                    .as_array()
                    .into_iter()
                    .flatten()
                    .filter_map(Json::as_str)
                    .filter(|r| *r != "human" && self.config["roles"].get(*r).is_some())
                    .map(str::to_owned)
                    .collect();
                let found = alternates.into_iter().find_map(|alt| {
                    if !tried.insert(alt.clone()) {
                        return None;
                    }
                    self.assign_beside(&alt, &mut refused)
                });
                match found {
                    Some(t) => t,
                    None => break,
                }
            } else {
                tried.insert(role.clone());
                match self.assign_beside(&role, &mut refused) {
                    Some(t) => t,
                    None => continue,
                }
            };
            let review = turn["delegation_review"].as_bool() == Some(true)
                || turn["delegation_review"].is_object();
            new.push(turn);
            if review {
                break;
            }
            match self.store.state() {
                Ok(s) => state = s,
                Err(_) => break,
            }
        }
        (new, refused)
    }

    /// A turn of `role` beside the active ones (`None` when it cannot be assigned: the
    /// reference's loop then tries the phase's other roles; the refusal is kept in `refused`
    /// for the stop's error should no turn be started).
    fn assign_beside(&self, role: &str, refused: &mut Option<String>) -> Option<Json> {
        let (_, turn) = match assign::assign_parallel(self.store, self.config, Some(role)) {
            Ok(t) => t,
            Err(r) => {
                let why = r
                    .message
                    .strip_prefix("Failed to assign turn: ")
                    .unwrap_or(&r.message);
                *refused = Some(format!("assignTurn({}): {}", clean(role), why));
                return None;
            }
        };
        println!("Turn assigned: {} → {}", s(&turn["turn_id"]), clean(role));
        Some(turn)
    }
}

/// The stop's error for a turn that waits for a person.
pub(super) fn waiting(turn: &Json) -> String {
    format!(
        "Turn {} is {}: resolve it (agentxchain accept-turn / reject-turn / reissue-turn), then run again",
        s(&turn["turn_id"]),
        s(&turn["status"])
    )
}

/// Delegations are pending or await their review: their roles drive the phase.
fn delegating(state: &Json) -> bool {
    state["delegation_queue"].as_array().is_some_and(|q| {
        q.iter()
            .any(|d| d["status"] == "pending" || d["status"] == "active")
    }) || !state["pending_delegation_review"].is_null()
        && state["pending_delegation_review"] != false
}
