//! The standing exit gate an operator's `unblock` settles (the reference's BUG-52 path),
//! driven by this binary alone: the pm has the planning files in place, escalates to a person
//! *for the planning gate* (`needs_human`, proposing `human`) and the run blocks; the person's
//! `unblock` then judges the gate instead of dispatching the pm again. A gate a rule approves
//! (or none guards) moves the run on; one that needs a person waits for `approve-transition`
//! (`unblock` is never the gate's approval here); one that still fails blocks the run again.
//! In the last phase the same holds for the run's completion.

mod support;

use serde_json::{Value, json};
use support::project::{Project, git};

const SPEC: &str = "# System Spec\n\n## Purpose\n\nGreet.\n\n## Interface\n\n`hello.sh`\n\n## Behavior\n\nPrints hello.\n\n## Error Cases\n\nNone.\n\n## Acceptance Tests\n\n- [x] prints hello\n\n## Open Questions\n\n- None.\n";
const SIGNOFF: &str =
    "# PM Signoff\n\nApproved: YES\n\n## Discovery Checklist\n- [x] Target user defined\n";
const FOR_THE_GATE: &str = "The planning_signoff gate requires human approval.";

fn events_of(p: &Project, kind: &str) -> Vec<Value> {
    p.jsonl(".agentxchain/events.jsonl")
        .into_iter()
        .filter(|e| e["event_type"] == kind)
        .collect()
}

fn ledger_approvals(p: &Project) -> Vec<Value> {
    p.jsonl(".agentxchain/decision-ledger.jsonl")
        .into_iter()
        .filter(|l| l["type"] == "approval_policy")
        .collect()
}

fn commit(p: &Project, message: &str) {
    git(&p.root, &["add", "-A"]);
    git(&p.root, &["commit", "-q", "--allow-empty", "-m", message]);
}

/// A run blocked on the pm's escalation: `edit` shapes the config (committed), the person
/// writes the planning files (`spec`: the system spec filled in, else its scaffold stays) and
/// commits them, the pm's turn says `reason` with `result` over its fields; accepted and
/// committed. The open escalation's id and the turn's.
fn escalated(
    edit: impl FnOnce(&mut Value),
    spec: bool,
    reason: &str,
    result: Value,
) -> (Project, String, String) {
    let p = Project::new();
    p.config(edit);
    p.write(".planning/PM_SIGNOFF.md", SIGNOFF);
    if spec {
        p.write(".planning/SYSTEM_SPEC.md", SPEC);
    }
    commit(&p, "planning files");
    p.ok(&["resume"]);
    let mut asked = json!({
        "status": "needs_human", "proposed_next_role": "human", "summary": reason,
        "needs_human_reason": reason,
    });
    for (k, v) in result.as_object().unwrap() {
        asked[k] = v.clone();
    }
    let turn = p.agent_turn(&[], asked);
    p.ok(&["accept-turn"]);
    commit(&p, "turn accepted");
    let s = p.state();
    assert_eq!(s["status"], "blocked");
    assert_eq!(s["phase_gate_status"]["planning_signoff"], "pending");
    let id = p
        .jsonl(".agentxchain/human-escalations.jsonl")
        .last()
        .unwrap()["escalation_id"]
        .as_str()
        .unwrap()
        .to_owned();
    (p, id, turn)
}

/// The run dispatched the pm again in planning (the standing gate was not judged).
fn pm_again(p: &Project) {
    let s = p.state();
    assert_eq!(s["status"], "active");
    assert_eq!(s["phase"], "planning");
    assert_eq!(p.active_turn().1, "pm");
    assert!(events_of(p, "phase_entered").is_empty());
}

fn only_planning(c: &mut Value) {
    let planning = c["routing"]["planning"].clone();
    c["routing"] = json!({"planning": planning});
    c["approval_policy"]["phase_transitions"]["rules"] = json!([]);
}

#[test]
fn an_unblock_of_the_pms_escalation_for_the_gate_moves_the_run_on() {
    // The generic template's rule approves planning → implementation once the gate passes.
    let (p, id, turn) = escalated(|_| {}, true, FOR_THE_GATE, json!({}));
    let out = p.ok(&["unblock", &id]);
    assert!(out.contains("Resumed blocked run: "), "{out}");
    assert!(
        out.contains("Advanced phase before dispatch: planning → implementation"),
        "{out}"
    );
    let s = p.state();
    assert_eq!(s["phase"], "implementation");
    assert_eq!(s["status"], "active");
    assert_eq!(s["phase_gate_status"]["planning_signoff"], "passed");
    assert_eq!(p.active_turn().1, "dev");
    let entered = events_of(&p, "phase_entered");
    assert_eq!(entered.len(), 1);
    assert_eq!(entered[0]["payload"]["trigger"], "auto_approved");
    assert_eq!(entered[0]["turn"]["turn_id"], json!(turn));
    let approvals = ledger_approvals(&p);
    assert_eq!(approvals.len(), 1);
    assert_eq!(approvals[0]["gate_id"], "planning_signoff");
    // The escalation was resolved by the operator's unblock.
    let resolved = events_of(&p, "human_escalation_resolved");
    assert_eq!(resolved[0]["payload"]["escalation_id"], json!(id));
}

#[test]
fn a_gate_that_needs_a_person_waits_for_approve_transition_after_the_unblock() {
    let (p, id, turn) = escalated(
        |c| c["approval_policy"]["phase_transitions"]["rules"] = json!([]),
        true,
        FOR_THE_GATE,
        json!({}),
    );
    let out = p.fails(&["unblock", &id]);
    assert!(out.contains("Resumed blocked run: "), "{out}");
    assert!(out.contains("This run is awaiting approval."), "{out}");
    assert!(out.contains("agentxchain approve-transition"), "{out}");
    let s = p.state();
    assert_eq!(s["status"], "paused");
    assert_eq!(s["phase"], "planning");
    assert_eq!(s["pending_phase_transition"]["to"], "implementation");
    assert_eq!(
        s["pending_phase_transition"]["requested_by_turn"],
        json!(turn)
    );
    assert_eq!(s["phase_gate_status"]["planning_signoff"], "pending");
    // Nothing approved it: not the unblock, not a rule.
    assert!(events_of(&p, "gate_approved").is_empty());
    assert!(ledger_approvals(&p).is_empty());
    assert!(s["active_turns"].as_object().unwrap().is_empty());
    // The person approves it.
    let out = p.ok(&["approve-transition"]);
    assert!(out.contains("implementation"), "{out}");
    assert_eq!(p.state()["phase"], "implementation");
}

#[test]
fn an_unblock_whose_gate_still_fails_blocks_the_run_again() {
    // The system spec is still the scaffold: the gate fails.
    let (p, id, _) = escalated(|_| {}, false, FOR_THE_GATE, json!({}));
    let out = p.run(&["unblock", &id]);
    assert_eq!(out.status.code(), Some(1));
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        stdout.contains(
            "Unblock did not materialize a phase transition; leaving the run blocked for manual recovery."
        ),
        "{stdout}"
    );
    // What to fix is said.
    assert!(
        stdout.contains("  Gate: ") && stdout.contains("SYSTEM_SPEC.md"),
        "{stdout}"
    );
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("HUMAN ESCALATION RAISED"), "{stderr}");
    let s = p.state();
    assert_eq!(s["status"], "blocked");
    assert_eq!(s["phase"], "planning");
    assert_eq!(s["blocked_on"], "human:unblock_reconcile_failed");
    assert_eq!(s["blocked_reason"]["category"], "needs_human");
    assert_eq!(
        s["blocked_reason"]["recovery"]["recovery_action"],
        "agentxchain approve-transition or agentxchain gate show <gate>"
    );
    assert!(s["active_turns"].as_object().unwrap().is_empty());
    // A new escalation is open for the person, and it can be unblocked once the spec is
    // written.
    let open = p.jsonl(".agentxchain/human-escalations.jsonl");
    let next = open.last().unwrap()["escalation_id"]
        .as_str()
        .unwrap()
        .to_owned();
    assert_ne!(next, id);
    // The two ways on are said.
    assert!(
        stdout.contains(&format!("agentxchain unblock {next} judges it again"))
            && stdout.contains("agentxchain resume"),
        "{stdout}"
    );
    // The recovery's command runs, and says what fails.
    let shown = p.ok(&["gate", "show", "planning_signoff", "--evaluate"]);
    assert!(shown.contains("SYSTEM_SPEC.md"), "{shown}");
    p.write(".planning/SYSTEM_SPEC.md", SPEC);
    commit(&p, "spec written");
    let out = p.ok(&["unblock", &next]);
    assert!(out.contains("planning → implementation"), "{out}");
}

#[test]
fn an_escalation_that_is_not_for_the_gate_dispatches_the_phase_again() {
    // Every file is in place, but the pm escalated for something else.
    let (p, id, _) = escalated(
        |_| {},
        true,
        "Need the production database password before going on.",
        json!({"decisions": [{"id": "DEC-001", "category": "process", "statement": "wait", "rationale": "credentials"}]}),
    );
    let out = p.ok(&["unblock", &id]);
    assert!(!out.contains("Advanced phase"), "{out}");
    pm_again(&p);
}

#[test]
fn a_turn_that_is_not_the_entry_role_or_wrote_no_gate_file_settles_nothing() {
    // The eng_director escalated for the gate, proposed a person, wrote none of its files.
    let p = Project::new();
    p.write(".planning/PM_SIGNOFF.md", SIGNOFF);
    p.write(".planning/SYSTEM_SPEC.md", SPEC);
    commit(&p, "planning files");
    p.ok(&["resume", "--role", "eng_director"]);
    p.agent_turn(
        &[],
        json!({"status": "needs_human", "proposed_next_role": "human", "summary": FOR_THE_GATE, "needs_human_reason": FOR_THE_GATE}),
    );
    p.ok(&["accept-turn"]);
    commit(&p, "turn accepted");
    let id = p
        .jsonl(".agentxchain/human-escalations.jsonl")
        .last()
        .unwrap()["escalation_id"]
        .as_str()
        .unwrap()
        .to_owned();
    let out = p.ok(&["unblock", &id]);
    assert!(!out.contains("Advanced phase"), "{out}");
    assert_eq!(p.state()["phase"], "planning");
    assert!(events_of(&p, "phase_entered").is_empty());
}

#[test]
fn a_required_file_missing_settles_nothing() {
    let (p, id, _) = escalated(|_| {}, true, FOR_THE_GATE, json!({}));
    std::fs::remove_file(p.root.join(".planning/ROADMAP.md")).unwrap();
    commit(&p, "roadmap removed");
    let out = p.ok(&["unblock", &id]);
    assert!(!out.contains("Advanced phase"), "{out}");
    pm_again(&p);
}

#[test]
fn a_copy_of_the_turns_history_line_settles_nothing() {
    // An agent appends a second line for the turn (another summary): neither is taken.
    let (p, id, turn) = escalated(
        |_| {},
        true,
        "Need the production database password before going on.",
        json!({}),
    );
    let history = p.root.join(".agentxchain/history.jsonl");
    let mut lines = p.jsonl(".agentxchain/history.jsonl");
    let mut copy = lines
        .iter()
        .find(|e| e["turn_id"] == json!(turn))
        .unwrap()
        .clone();
    copy["summary"] = json!(FOR_THE_GATE);
    lines.push(copy);
    let text: String = lines.iter().map(|l| format!("{l}\n")).collect();
    std::fs::write(&history, text).unwrap();
    commit(&p, "history copied");
    let out = p.ok(&["unblock", &id]);
    assert!(!out.contains("Advanced phase"), "{out}");
    pm_again(&p);
}

#[test]
fn a_rule_an_agent_wrote_into_the_config_approves_nothing() {
    // The gate needs a person; an agent adds an approving rule to agentxchain.json, not
    // committed. The gate is not judged by it: the run is blocked again, nothing approved.
    let (p, id, _) = escalated(
        |c| c["approval_policy"]["phase_transitions"]["rules"] = json!([]),
        true,
        FOR_THE_GATE,
        json!({}),
    );
    p.edit_config(|c| {
        c["approval_policy"]["phase_transitions"]["rules"] = json!([{"from_phase": "planning", "to_phase": "implementation", "action": "auto_approve", "when": {"gate_passed": true}}]);
    });
    let out = p.run(&["unblock", &id]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("differs from the one committed at HEAD"),
        "{stderr}"
    );
    assert_eq!(out.status.code(), Some(1));
    let s = p.state();
    assert_eq!(s["status"], "blocked");
    assert_eq!(s["phase"], "planning");
    assert!(ledger_approvals(&p).is_empty());
    assert!(events_of(&p, "phase_entered").is_empty());
}

#[test]
fn in_the_last_phase_an_unblock_completes_the_run_by_its_rule() {
    // Planning is the only phase; the generic template's run_completion rule approves.
    let (p, id, turn) = escalated(only_planning, true, FOR_THE_GATE, json!({}));
    let out = p.ok(&["unblock", &id]);
    assert!(out.contains("Completed run before dispatch: "), "{out}");
    let s = p.state();
    assert_eq!(s["status"], "completed");
    assert_eq!(s["phase_gate_status"]["planning_signoff"], "passed");
    assert!(s["completed_at"].is_string());
    let approved = events_of(&p, "gate_approved");
    assert_eq!(approved.len(), 1);
    assert_eq!(approved[0]["payload"]["trigger"], "auto_approved");
    assert_eq!(approved[0]["payload"]["requested_by_turn"], json!(turn));
    assert_eq!(events_of(&p, "run_completed").len(), 1);
    let approvals = ledger_approvals(&p);
    assert_eq!(approvals.len(), 1);
    assert_eq!(approvals[0]["gate_type"], "run_completion");
    assert_eq!(
        p.jsonl(".agentxchain/run-history.jsonl").last().unwrap()["status"],
        "completed"
    );
}

#[test]
fn in_the_last_phase_a_gate_that_needs_a_person_waits_for_approve_completion() {
    let (p, id, turn) = escalated(
        |c| {
            only_planning(c);
            c["approval_policy"]
                .as_object_mut()
                .unwrap()
                .remove("run_completion");
        },
        true,
        FOR_THE_GATE,
        json!({}),
    );
    let out = p.fails(&["unblock", &id]);
    assert!(out.contains("This run is awaiting approval."), "{out}");
    assert!(out.contains("agentxchain approve-completion"), "{out}");
    let s = p.state();
    assert_eq!(s["status"], "paused");
    assert_eq!(s["pending_run_completion"]["gate"], "planning_signoff");
    assert_eq!(
        s["pending_run_completion"]["requested_by_turn"],
        json!(turn)
    );
    assert!(events_of(&p, "run_completed").is_empty());
    assert!(ledger_approvals(&p).is_empty());
    p.ok(&["approve-completion"]);
    assert_eq!(p.state()["status"], "completed");
}

#[test]
fn in_the_last_phase_a_failing_gate_blocks_the_run_again() {
    let (p, id, _) = escalated(only_planning, false, FOR_THE_GATE, json!({}));
    let out = p.fails(&["unblock", &id]);
    assert!(
        out.contains(
            "Unblock did not materialize run completion; leaving the run blocked for manual recovery."
        ),
        "{out}"
    );
    let s = p.state();
    assert_eq!(s["status"], "blocked");
    assert_eq!(s["blocked_on"], "human:unblock_completion_reconcile_failed");
    assert_eq!(
        s["blocked_reason"]["recovery"]["recovery_action"],
        "agentxchain approve-completion"
    );
}

#[test]
fn a_forged_retained_turn_and_an_agents_rule_approve_nothing() {
    // The review's attack: an agent adds a turn to state.json whose baseline names no commit
    // (so no committed config to compare with) and an approving rule to agentxchain.json.
    let (p, id, _) = escalated(
        |c| c["approval_policy"]["phase_transitions"]["rules"] = json!([]),
        true,
        FOR_THE_GATE,
        json!({}),
    );
    p.edit_config(|c| c["approval_policy"]["phase_transitions"]["default"] = json!("auto_approve"));
    let path = p.root.join(".agentxchain/state.json");
    let mut s = p.state();
    s["active_turns"]["turn_fake0001"] = json!({"turn_id": "turn_fake0001", "assigned_role": "pm",
        "status": "assigned", "runtime_id": "manual-pm", "attempt": 1,
        "baseline": {"kind": "git_worktree", "head_ref": "0000000000000000000000000000000000000000", "clean": true}});
    std::fs::write(&path, serde_json::to_string_pretty(&s).unwrap()).unwrap();
    let _ = p.run(&["unblock", &id]);
    let s = p.state();
    assert_eq!(s["phase"], "planning");
    assert!(ledger_approvals(&p).is_empty());
    assert!(events_of(&p, "phase_entered").is_empty());
    assert!(events_of(&p, "gate_approved").is_empty());
}
