//! The standing exit gate an operator's `unblock` settles (the reference's path for its
//! BUG-52): a run blocked on a person whose phase exit gate still stands `pending`, after a
//! turn that wanted the run to go on past it — it asked for the next phase (or the run's
//! completion), it proposed another role than a person, or it escalated to a person *for that
//! gate* with the gate's files in place. Without this, `unblock` dispatched the phase's entry
//! role again, and the run looped in a phase its gate would let it leave.
//!
//! This module only says whether a turn wanted that ([`wanted`]) and builds the request the
//! gate is judged with when the turn's own history entry holds none ([`phase_source`]). The
//! gate itself is judged where every phase and completion request is judged before a
//! dispatch (`phase_reconcile`, `completion_reconcile`): by the config a person chose, and a
//! gate that needs a person still waits for `approve-transition` or `approve-completion` —
//! an `unblock` is never taken for a gate's approval here (the reference's departure is
//! documented there).

use serde_json::{Value as Json, json};

use super::store::Store;
use crate::js::truthy_str as text;

/// What the turn an `unblock` ends wanted of the standing gate.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Wanted {
    /// To leave the phase for the next one.
    Phase,
    /// To complete the run (the phase is the last).
    Completion,
}

/// The current phase's exit gate when it stands `pending`: its id and its config.
fn pending_exit_gate<'a>(state: &Json, config: &'a Json) -> Option<(&'a str, &'a Json)> {
    let phase = text(&state["phase"])?;
    let gate = text(&config["routing"][phase]["exit_gate"])?;
    (state["phase_gate_status"][gate] == "pending").then(|| (gate, &config["gates"][gate]))
}

/// Whether the current phase is the routing's last.
fn final_phase(state: &Json, config: &Json) -> bool {
    let last = config["routing"]
        .as_object()
        .and_then(|r| r.keys().next_back());
    last.is_some_and(|l| Some(l.as_str()) == text(&state["phase"]))
}

/// The turn an `unblock` ends: the one its escalation names, else the last accepted, else the
/// one the block names.
fn turn_of<'a>(state: &'a Json, turn: Option<&'a str>) -> Option<&'a str> {
    turn.filter(|t| !t.is_empty())
        .or_else(|| text(&state["last_completed_turn_id"]))
        .or_else(|| text(&state["blocked_reason"]["turn_id"]))
}

/// A gate that asks for a passed verification is met by the turn's own verification only.
fn verification_met(gate: &Json, entry: &Json) -> bool {
    gate["requires_verification_pass"] != true
        || matches!(
            entry["verification"]["status"].as_str(),
            Some("pass" | "attested_pass")
        )
}

/// Whether a turn that escalated to a person settled the phase's human-approval gate: every
/// file the gate requires is in place, and the turn wrote one of them, or it was the phase's
/// entry role re-verifying them and said it escalated for that gate (the gate's id, or "gate"
/// with "human approval" / "human-required", in its summary, reason, evidence, decisions or
/// the block's own words).
fn escalated_for_gate(store: &Store, state: &Json, config: &Json, entry: &Json) -> bool {
    let Some((gate_id, gate)) = pending_exit_gate(state, config) else {
        return false;
    };
    let phase = text(&state["phase"]).unwrap_or("");
    let required: Vec<&str> = gate["requires_files"]
        .as_array()
        .map(|a| {
            a.iter()
                .filter_map(Json::as_str)
                .filter(|p| !p.trim().is_empty())
                .collect()
        })
        .unwrap_or_default();
    if required.is_empty() || gate["requires_human_approval"] != true {
        return false;
    }
    if !required.iter().all(|p| store.exists(p)) {
        return false;
    }
    let changed = entry["files_changed"].as_array();
    if changed.is_some_and(|c| {
        c.iter()
            .any(|f| f.as_str().is_some_and(|f| required.contains(&f)))
    }) {
        return true;
    }
    let entry_role = text(&config["routing"][phase]["entry_role"]);
    let by_entry_role = entry_role.is_some_and(|r| {
        entry["role"].as_str() == Some(r) || entry["assigned_role"].as_str() == Some(r)
    });
    let mut said: Vec<&str> = vec![
        &entry["summary"],
        &entry["needs_human_reason"],
        &entry["verification"]["evidence_summary"],
        &state["blocked_on"],
        &state["blocked_reason"]["recovery"]["detail"],
    ]
    .into_iter()
    .filter_map(text)
    .collect();
    for d in entry["decisions"].as_array().into_iter().flatten() {
        said.extend(
            [&d["statement"], &d["rationale"]]
                .into_iter()
                .filter_map(text),
        );
    }
    let said = said.join("\n").to_lowercase();
    let names_gate = said.contains(&gate_id.to_lowercase())
        || (said.contains("gate")
            && (said.contains("human approval") || said.contains("human-required")));
    let proposed = entry["proposed_next_role"].as_str().map(str::trim);
    proposed == Some("human") && by_entry_role && names_gate
}

/// What the turn `unblock` ends (`turn`: the escalation's) wanted of the run's standing exit
/// gate, if the gate stands `pending` and the turn wanted to go on past it. The turn's one
/// accepted history entry decides (two — a copy appended later — decide nothing).
pub fn wanted(store: &Store, state: &Json, config: &Json, turn: Option<&str>) -> Option<Wanted> {
    let (_, gate) = pending_exit_gate(state, config)?;
    let turn = turn_of(state, turn)?;
    let [entry] = super::phase_reconcile::accepted_entries(store, turn)
        .try_into()
        .ok()?;
    let escalated = || {
        entry["status"] == "needs_human"
            && verification_met(gate, &entry)
            && escalated_for_gate(store, state, config, &entry)
    };
    if final_phase(state, config) {
        (entry["run_completion_request"] == true || escalated()).then_some(Wanted::Completion)
    } else {
        let proposed = entry["proposed_next_role"]
            .as_str()
            .map(str::trim)
            .filter(|p| !p.is_empty());
        let wants = if text(&entry["phase_transition_request"]).is_some() {
            true
        } else if proposed.is_some_and(|p| p != "human") {
            verification_met(gate, &entry)
        } else {
            escalated()
        };
        wants.then_some(Wanted::Phase)
    }
}

/// The request the standing gate is judged with when the turn's entry holds none: the next
/// phase (`Wanted::Phase`) or, in the last phase, the run's completion, asked by the turn
/// `unblock` ends, with a passed verification (the reference's synthetic source; [`wanted`]
/// has already held a gate that asks for one to the turn's own).
pub fn source(state: &Json, config: &Json, turn: Option<&str>, wanted: Wanted) -> Option<Json> {
    let (gate_id, _) = pending_exit_gate(state, config)?;
    let phase = text(&state["phase"])?;
    let next = crate::gates::next_phase(config, phase);
    let (key, asked, what) = match (wanted, next) {
        (Wanted::Phase, Some(next)) => ("phase_transition_request", json!(next), "transition"),
        (Wanted::Completion, None) => ("run_completion_request", json!(true), "completion"),
        _ => return None,
    };
    let mut source = json!({
        "turn_id": turn_of(state, turn),
        "run_id": state["run_id"],
        "role": null,
        "assigned_role": null,
        "phase": phase,
        "status": "completed",
    });
    source[key] = asked;
    source["summary"] = json!(format!(
        "Synthetic {gate_id} {what} source for operator-unblocked standing gate."
    ));
    source["verification"] = json!({"status": "pass"});
    Some(source)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::run::store::HISTORY;

    /// A project with `entry` as the history's one line and the gate's files (`files`) in place.
    fn store_with(entries: &[Json], files: &[&str]) -> (tempfile::TempDir, Store) {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(dir.path().join(".agentxchain")).unwrap();
        let text: String = entries.iter().map(|e| format!("{e}\n")).collect();
        std::fs::write(dir.path().join(HISTORY), text).unwrap();
        for f in files {
            let p = dir.path().join(f);
            std::fs::create_dir_all(p.parent().unwrap()).unwrap();
            std::fs::write(p, "x").unwrap();
        }
        let store = Store::new(dir.path());
        (dir, store)
    }

    fn config() -> Json {
        json!({
            "routing": {
                "planning": {"entry_role": "pm", "exit_gate": "g1"},
                "qa": {"entry_role": "qa", "exit_gate": "g2"},
            },
            "gates": {
                "g1": {"requires_files": ["a.md", "b.md"], "requires_human_approval": true},
                "g2": {"requires_files": ["c.md"], "requires_human_approval": true, "requires_verification_pass": true},
            },
        })
    }

    fn state(phase: &str) -> Json {
        json!({"phase": phase, "last_completed_turn_id": "t1",
               "phase_gate_status": {"g1": "pending", "g2": "pending"}})
    }

    /// The pm's escalation for the gate, with `edit` over it.
    fn escalation(edit: Json) -> Json {
        let mut e = json!({"turn_id": "t1", "role": "pm", "status": "needs_human",
            "proposed_next_role": "human", "summary": "waiting on g1",
            "verification": {"status": "pass"}, "files_changed": []});
        for (k, v) in edit.as_object().unwrap() {
            e[k] = v.clone();
        }
        e
    }

    fn wants(entry: Json, phase: &str, files: &[&str]) -> Option<Wanted> {
        let (_d, store) = store_with(&[entry], files);
        wanted(&store, &state(phase), &config(), None)
    }

    #[test]
    fn an_escalation_settles_the_gate_only_with_its_files_in_place_and_said_for_it() {
        let both = ["a.md", "b.md"];
        assert_eq!(
            wants(escalation(json!({})), "planning", &both),
            Some(Wanted::Phase)
        );
        // A file missing.
        assert_eq!(wants(escalation(json!({})), "planning", &["a.md"]), None);
        // Not said for the gate: then "gate" with "human approval" or "human-required" is.
        let other = json!({"summary": "need a password"});
        assert_eq!(wants(escalation(other), "planning", &both), None);
        for said in ["the gate needs human approval", "a human-required gate"] {
            let e = escalation(json!({"summary": said}));
            assert_eq!(wants(e, "planning", &both), Some(Wanted::Phase), "{said}");
        }
        let e = escalation(json!({"summary": "human approval needed"}));
        assert_eq!(wants(e, "planning", &both), None, "no gate named");
        // Said in a decision's rationale, in any case.
        let e = escalation(
            json!({"summary": "x", "decisions": [{"statement": "s", "rationale": "Ready for G1"}]}),
        );
        assert_eq!(wants(e, "planning", &both), Some(Wanted::Phase));
        // Another role than the entry one, unless it wrote a gate file.
        let e = escalation(json!({"role": "dev"}));
        assert_eq!(wants(e, "planning", &both), None);
        let e = escalation(json!({"role": "dev", "files_changed": ["b.md"], "summary": "x"}));
        assert_eq!(wants(e, "planning", &both), Some(Wanted::Phase));
        // Not an escalation to a person.
        let e = escalation(json!({"status": "completed"}));
        assert_eq!(wants(e, "planning", &both), None);
        let e = escalation(json!({"proposed_next_role": " human "}));
        assert_eq!(wants(e, "planning", &both), Some(Wanted::Phase), "trimmed");
        // A gate no person approves is settled by no escalation to a person.
        let (_d, store) = store_with(&[escalation(json!({}))], &both);
        let mut c = config();
        c["gates"]["g1"]["requires_human_approval"] = json!(false);
        assert_eq!(wanted(&store, &state("planning"), &c, None), None);
    }

    #[test]
    fn a_turn_that_asked_or_proposed_a_role_wants_the_next_phase_a_passed_gate_or_none() {
        let both = ["a.md", "b.md"];
        let asked =
            json!({"turn_id": "t1", "status": "completed", "phase_transition_request": "qa"});
        assert_eq!(wants(asked, "planning", &[]), Some(Wanted::Phase));
        let proposed = json!({"turn_id": "t1", "status": "completed", "proposed_next_role": "qa"});
        assert_eq!(wants(proposed, "planning", &[]), Some(Wanted::Phase));
        // The gate stands passed: nothing to settle.
        let (_d, store) = store_with(&[escalation(json!({}))], &both);
        let mut s = state("planning");
        s["phase_gate_status"]["g1"] = json!("passed");
        assert_eq!(wanted(&store, &s, &config(), None), None);
        // The turn named by the escalation, else the last accepted.
        let (_d, store) = store_with(&[escalation(json!({"turn_id": "t9"}))], &both);
        assert_eq!(wanted(&store, &state("planning"), &config(), None), None);
        assert_eq!(
            wanted(&store, &state("planning"), &config(), Some("t9")),
            Some(Wanted::Phase)
        );
    }

    #[test]
    fn in_the_last_phase_completion_is_wanted_with_the_verification_the_gate_asks() {
        let c = ["c.md"];
        let e = escalation(json!({"summary": "g2 needs a person", "role": "qa"}));
        assert_eq!(wants(e.clone(), "qa", &c), Some(Wanted::Completion));
        let failed =
            escalation(json!({"summary": "g2", "role": "qa", "verification": {"status": "fail"}}));
        assert_eq!(wants(failed, "qa", &c), None);
        let attested = escalation(
            json!({"summary": "g2", "role": "qa", "verification": {"status": "attested_pass"}}),
        );
        assert_eq!(wants(attested, "qa", &c), Some(Wanted::Completion));
        let asked = json!({"turn_id": "t1", "run_completion_request": true});
        assert_eq!(wants(asked, "qa", &[]), Some(Wanted::Completion));
        // Proposing a role is no completion request.
        let proposed = json!({"turn_id": "t1", "status": "completed", "proposed_next_role": "qa"});
        assert_eq!(wants(proposed, "qa", &c), None);
    }

    #[test]
    fn the_synthetic_requests_name_the_next_phase_or_the_completion() {
        let s = state("planning");
        let p = source(&s, &config(), Some("t7"), Wanted::Phase).unwrap();
        assert_eq!(p["phase_transition_request"], "qa");
        assert_eq!(p["turn_id"], "t7");
        assert_eq!(p["verification"]["status"], "pass");
        assert!(source(&s, &config(), None, Wanted::Completion).is_none());
        let q = source(&state("qa"), &config(), None, Wanted::Completion).unwrap();
        assert_eq!(q["run_completion_request"], true);
        assert_eq!(q["turn_id"], "t1");
        assert!(source(&state("qa"), &config(), None, Wanted::Phase).is_none());
        assert_eq!(
            p["summary"],
            "Synthetic g1 transition source for operator-unblocked standing gate."
        );
        assert_eq!(
            q["summary"],
            "Synthetic g2 completion source for operator-unblocked standing gate."
        );
    }
}
