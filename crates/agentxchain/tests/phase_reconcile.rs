//! A phase request decided before the next dispatch, driven by this binary alone: a turn asks
//! to leave planning and its gate fails; a person fixes the gate's files; the next `resume`
//! judges the gate again before it assigns a turn. It advances the run when the gate needs no
//! person or a rule approves it, changes nothing while the gate still fails, and pauses the
//! run for `approve-transition` when the gate needs a person — `resume` (which an agent may
//! run) never approves it.

mod support;

use serde_json::{Value, json};
use support::project::{Project, git};

const SPEC: &str = "# System Spec\n\n## Purpose\n\nGreet.\n\n## Interface\n\n`hello.sh`\n\n## Behavior\n\nPrints hello.\n\n## Error Cases\n\nNone.\n\n## Acceptance Tests\n\n- [x] prints hello\n\n## Open Questions\n\n- None.\n";
const SIGNOFF: &str =
    "# PM Signoff\n\nApproved: YES\n\n## Discovery Checklist\n- [x] Target user defined\n";

fn events(p: &Project) -> Vec<Value> {
    p.jsonl(".agentxchain/events.jsonl")
}

fn of_type(p: &Project, kind: &str) -> Vec<Value> {
    events(p)
        .into_iter()
        .filter(|e| e["event_type"] == kind)
        .collect()
}

/// A run whose first turn (the pm's) asked to leave planning and whose gate failed on the
/// files it touched: the sign-off not approved. `edit` shapes the config first.
fn failed_request(edit: impl FnOnce(&mut Value)) -> (Project, String) {
    let p = Project::new();
    p.config(edit);
    p.ok(&["resume"]);
    let roadmap = std::fs::read_to_string(p.root.join(".planning/ROADMAP.md")).unwrap();
    let turn = p.agent_turn(
        &[
            (
                ".planning/PM_SIGNOFF.md",
                &SIGNOFF.replace("Approved: YES", "Approved: NO"),
            ),
            (".planning/SYSTEM_SPEC.md", SPEC),
            (".planning/ROADMAP.md", &format!("{roadmap}\nmore\n")),
        ],
        json!({"phase_transition_request": "implementation", "proposed_next_role": "dev"}),
    );
    p.ok(&["accept-turn"]);
    let s = p.state();
    assert_eq!(s["phase"], "planning");
    assert_eq!(s["last_gate_failure"]["requested_by_turn"], json!(turn));
    assert_eq!(s["phase_gate_status"]["planning_signoff"], "failed");
    (p, turn)
}

/// The person approves the sign-off and commits it.
fn person_fixes_the_gate(p: &Project) {
    p.write(".planning/PM_SIGNOFF.md", SIGNOFF);
    git(&p.root, &["add", "-A"]);
    git(&p.root, &["commit", "-qm", "sign-off approved"]);
}

/// The run stayed in planning and no rule approved a transition.
fn undecided(p: &Project, case: &str) {
    assert_eq!(p.state()["phase"], "planning", "{case}");
    assert!(
        !p.jsonl(".agentxchain/decision-ledger.jsonl")
            .iter()
            .any(|l| l["type"] == "approval_policy"),
        "{case}"
    );
}

fn no_person(c: &mut Value) {
    c["gates"]["planning_signoff"]["requires_human_approval"] = json!(false);
}

#[test]
fn a_gate_a_person_fixed_advances_the_run_before_the_next_dispatch() {
    let (p, turn) = failed_request(no_person);
    person_fixes_the_gate(&p);
    let out = p.ok(&["resume"]);
    assert!(
        out.starts_with("Advanced phase before dispatch: planning → implementation\n"),
        "{out}"
    );
    assert!(out.contains("  Phase:    implementation\n"), "{out}");
    let s = p.state();
    assert_eq!(s["phase"], "implementation");
    assert_eq!(s["status"], "active");
    assert!(s["last_gate_failure"].is_null());
    assert_eq!(s["phase_gate_status"]["planning_signoff"], "passed");
    let (_, role) = p.active_turn();
    assert_ne!(role, "pm", "the new turn is the implementation phase's");
    let entered = of_type(&p, "phase_entered");
    assert_eq!(entered.len(), 1);
    assert_eq!(
        entered[0]["payload"],
        json!({"from": "planning", "to": "implementation", "gate_id": "planning_signoff", "trigger": "reconciled_before_dispatch"})
    );
    assert_eq!(
        entered[0]["turn"],
        json!({"turn_id": turn, "role_id": "pm"})
    );
    let cleanup = of_type(&p, "phase_cleanup");
    assert_eq!(
        cleanup[0]["turn"],
        json!({"turn_id": turn, "role_id": "pm"})
    );
    assert_eq!(
        cleanup[0]["payload"]["trigger"],
        "reconciled_before_dispatch"
    );
    // The phase was entered before the turn of the new phase was dispatched.
    let kinds: Vec<Value> = events(&p).iter().map(|e| e["event_type"].clone()).collect();
    let tail = &kinds[kinds.len() - 3..];
    assert_eq!(
        tail,
        [
            json!("phase_entered"),
            json!("phase_cleanup"),
            json!("turn_dispatched")
        ]
    );
}

#[test]
fn a_gate_that_still_fails_changes_nothing_before_the_dispatch() {
    let (p, turn) = failed_request(no_person);
    let before = std::fs::read_to_string(p.root.join(".agentxchain/events.jsonl")).unwrap();
    let out = p.ok(&["resume"]);
    assert!(!out.contains("Advanced phase"), "{out}");
    let s = p.state();
    assert_eq!(s["phase"], "planning");
    assert_eq!(s["last_gate_failure"]["requested_by_turn"], json!(turn));
    assert_eq!(s["phase_gate_status"]["planning_signoff"], "failed");
    // Only the new turn's dispatch was written.
    let after = std::fs::read_to_string(p.root.join(".agentxchain/events.jsonl")).unwrap();
    let added: Vec<Value> = after[before.len()..]
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(added.len(), 1);
    assert_eq!(added[0]["event_type"], "turn_dispatched");
}

#[test]
fn a_gate_a_rule_approves_advances_with_the_rule_in_the_ledger() {
    // The generic template's own policy approves planning → implementation once the gate
    // passes.
    let (p, turn) = failed_request(|_| {});
    person_fixes_the_gate(&p);
    let out = p.ok(&["resume"]);
    assert!(
        out.starts_with("Advanced phase before dispatch: planning → implementation\n"),
        "{out}"
    );
    let ledger = p.jsonl(".agentxchain/decision-ledger.jsonl");
    let rule = ledger
        .iter()
        .find(|l| l["type"] == "approval_policy")
        .expect("an approval_policy line");
    assert_eq!(rule["from_phase"], "planning");
    assert_eq!(rule["to_phase"], "implementation");
    assert_eq!(rule["gate_id"], "planning_signoff");
    let entered = of_type(&p, "phase_entered");
    assert_eq!(entered[0]["payload"]["trigger"], "auto_approved");
    assert_eq!(entered[0]["turn"]["turn_id"], json!(turn));
    assert!(of_type(&p, "gate_approved").is_empty());
}

#[test]
fn a_gate_needing_a_person_is_paused_for_approval_and_never_approved_by_resume() {
    let (p, turn) = failed_request(|c| {
        c.as_object_mut().unwrap().remove("approval_policy");
    });
    person_fixes_the_gate(&p);
    let before_events = events(&p).len();
    let out = p.fails(&["resume"]);
    assert!(out.starts_with("This run is awaiting approval.\n"), "{out}");
    assert!(
        out.contains("  Action:   agentxchain approve-transition\n"),
        "{out}"
    );
    let s = p.state();
    assert_eq!(s["status"], "paused");
    assert_eq!(s["phase"], "planning");
    assert_eq!(s["blocked_on"], "human_approval:planning_signoff");
    assert_eq!(s["pending_phase_transition"]["from"], "planning");
    assert_eq!(s["pending_phase_transition"]["to"], "implementation");
    assert_eq!(s["pending_phase_transition"]["gate"], "planning_signoff");
    assert_eq!(
        s["pending_phase_transition"]["requested_by_turn"],
        json!(turn)
    );
    assert!(s["active_turns"].as_object().unwrap().is_empty());
    // No approval and no phase entry was recorded for a person who made none.
    let added = &events(&p)[before_events..];
    assert_eq!(added.len(), 1, "{added:?}");
    assert_eq!(added[0]["event_type"], "gate_pending");
    assert!(of_type(&p, "gate_approved").is_empty());
    assert!(of_type(&p, "phase_entered").is_empty());
    // Running resume again (an agent's loop) changes nothing.
    let state = std::fs::read(p.root.join(".agentxchain/state.json")).unwrap();
    p.fails(&["resume"]);
    p.fails(&["step"]);
    assert_eq!(
        std::fs::read(p.root.join(".agentxchain/state.json")).unwrap(),
        state
    );
    // The person approves, and the next turn is the implementation phase's.
    p.ok(&["approve-transition"]);
    let s = p.state();
    assert_eq!(s["phase"], "implementation");
    assert_eq!(s["status"], "active");
    assert!(s["last_gate_failure"].is_null(), "{s}");
    let entered = of_type(&p, "phase_entered");
    assert_eq!(entered.len(), 1);
    assert_eq!(entered[0]["payload"]["trigger"], "human_approved");
    let out = p.ok(&["resume"]);
    assert!(!out.contains("Advanced phase"), "{out}");
    assert_eq!(p.state()["phase"], "implementation");
}

/// The run waits for a person at the sign-off: the committed config has no approval rule.
fn human_gate() -> (Project, String) {
    failed_request(|c| {
        c.as_object_mut().unwrap().remove("approval_policy");
    })
}

#[test]
fn an_agents_config_edit_put_back_after_resume_decides_nothing() {
    for edit in [
        // A rule that approves every transition, and a phase with no exit gate.
        r#"{"default": "auto_approve"}"#,
        "no exit gate",
    ] {
        let (p, _) = human_gate();
        person_fixes_the_gate(&p);
        let path = p.root.join("agentxchain.json");
        let committed = std::fs::read_to_string(&path).unwrap();
        let mut c: Value = serde_json::from_str(&committed).unwrap();
        if edit == "no exit gate" {
            c["routing"]["planning"]
                .as_object_mut()
                .unwrap()
                .remove("exit_gate");
        } else {
            c["approval_policy"] =
                json!({"phase_transitions": serde_json::from_str::<Value>(edit).unwrap()});
        }
        std::fs::write(&path, serde_json::to_string_pretty(&c).unwrap()).unwrap();
        let out = p.run(&["resume"]);
        std::fs::write(&path, &committed).unwrap();
        let stdout = String::from_utf8_lossy(&out.stdout);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(!stdout.contains("Advanced phase"), "{edit}: {stdout}");
        assert!(
            stderr.contains("was not decided before this dispatch: agentxchain.json differs from the one committed at HEAD"),
            "{edit}: {stderr}"
        );
        undecided(&p, edit);
        assert!(of_type(&p, "phase_entered").is_empty(), "{edit}");
    }
}

#[test]
fn a_persons_config_set_is_the_config_the_gate_is_judged_by() {
    let (p, _) = human_gate();
    person_fixes_the_gate(&p);
    // Uncommitted, but written by a person's `config --set`: judged by it.
    p.ok(&[
        "config",
        "--set",
        "gates.planning_signoff.requires_human_approval",
        "false",
    ]);
    let out = p.ok(&["resume"]);
    assert!(
        out.starts_with("Advanced phase before dispatch: planning → implementation\n"),
        "{out}"
    );
}

#[test]
fn a_copy_of_the_turns_history_line_decides_nothing() {
    let (p, _) = failed_request(no_person);
    person_fixes_the_gate(&p);
    let history = p.root.join(".agentxchain/history.jsonl");
    let text = std::fs::read_to_string(&history).unwrap();
    let last = text.lines().last().unwrap().to_owned();
    std::fs::write(&history, format!("{text}{last}\n")).unwrap();
    let out = p.ok(&["resume"]);
    assert!(!out.contains("Advanced phase"), "{out}");
    assert_eq!(p.state()["phase"], "planning");
    assert!(of_type(&p, "phase_entered").is_empty());
}

#[test]
fn git_failing_to_answer_is_no_leave_to_judge_by_an_agents_config() {
    for breakage in ["move .git away", "unborn HEAD", "broken index"] {
        let (p, _) = human_gate();
        person_fixes_the_gate(&p);
        let path = p.root.join("agentxchain.json");
        let committed = std::fs::read_to_string(&path).unwrap();
        let mut c: Value = serde_json::from_str(&committed).unwrap();
        c["approval_policy"] = json!({"phase_transitions": {"default": "auto_approve"}});
        std::fs::write(&path, serde_json::to_string_pretty(&c).unwrap()).unwrap();
        let git_dir = p.root.join(".git");
        let away = p.root.parent().unwrap().join("git-away");
        let head = std::fs::read(git_dir.join("HEAD")).unwrap();
        let index = std::fs::read(git_dir.join("index")).unwrap();
        match breakage {
            "move .git away" => std::fs::rename(&git_dir, &away).unwrap(),
            "unborn HEAD" => {
                std::fs::write(git_dir.join("HEAD"), "ref: refs/heads/nothing\n").unwrap()
            }
            _ => std::fs::write(git_dir.join("index"), "junk\n").unwrap(),
        }
        let out = p.run(&["resume"]);
        match breakage {
            "move .git away" => std::fs::rename(&away, &git_dir).unwrap(),
            _ => {
                std::fs::write(git_dir.join("HEAD"), &head).unwrap();
                std::fs::write(git_dir.join("index"), &index).unwrap();
            }
        }
        std::fs::write(&path, &committed).unwrap();
        let stdout = String::from_utf8_lossy(&out.stdout);
        assert!(!stdout.contains("Advanced phase"), "{breakage}: {stdout}");
        undecided(&p, breakage);
    }
}

#[test]
fn a_project_below_its_repositorys_top_is_held_to_its_committed_config() {
    // The project lives in a directory of a larger repository: its committed config is read
    // from there, not looked for at the repository's top (where it is not, which read as
    // "nothing committed" and let any config through).
    let dir = tempfile::tempdir().unwrap();
    let repo = dir.path().join("repo");
    let proj = repo.join("proj");
    std::fs::create_dir_all(&proj).unwrap();
    git(&repo, &["init", "-q", "-b", "main"]);
    let p = Project {
        _dir: dir,
        root: proj,
    };
    let out = std::process::Command::new(support::BIN)
        .args(["init", "--governed", "-y", "--dir", "proj"])
        .current_dir(&repo)
        .output()
        .unwrap();
    assert!(out.status.success(), "{out:?}");
    git(&repo, &["add", "-A"]);
    git(&repo, &["commit", "-qm", "scaffold"]);
    // An edit by hand, not by `config --set`: `config --set` will not take it as the person's.
    let path = p.root.join("agentxchain.json");
    let mut c: Value = serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
    c["approval_policy"] = json!({"phase_transitions": {"default": "auto_approve"}});
    std::fs::write(&path, serde_json::to_string_pretty(&c).unwrap()).unwrap();
    let out = p.fails(&["config", "--set", "budget.per_run_max_usd", "7"]);
    assert!(out.contains("agentxchain.json"), "{out}");
}

#[test]
fn an_advance_before_the_dispatch_retires_the_intents_the_left_phase_scoped() {
    let (p, turn) = failed_request(no_person);
    let id = p.approved_intent("planning_signoff gate passes");
    person_fixes_the_gate(&p);
    p.ok(&["resume"]);
    assert_eq!(p.state()["phase"], "implementation");
    let intent: Value = serde_json::from_str(
        &std::fs::read_to_string(
            p.root
                .join(format!(".agentxchain/intake/intents/{id}.json")),
        )
        .unwrap(),
    )
    .unwrap();
    assert_eq!(intent["status"], "satisfied");
    let retired = of_type(&p, "intent_retired_by_phase_advance");
    assert_eq!(retired.len(), 1);
    assert_eq!(retired[0]["payload"]["retired_intent_ids"], json!([id]));
    assert_eq!(retired[0]["turn"]["turn_id"], json!(turn));
}
