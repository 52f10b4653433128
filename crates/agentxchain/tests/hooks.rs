//! The governed commands run the config's hooks as the reference does: `before_assignment`
//! and `after_dispatch` in `resume`, the validation and acceptance hooks in `accept-turn`,
//! `before_gate` in the approvals, `on_escalation` after an escalation — a blocking hook's
//! block halts the step (blocking the run where the reference does), a hook that changes a
//! protected file is undone and blocks the run, and hooks an agent wrote into the config are
//! never run.

mod support;

use std::path::PathBuf;

use serde_json::{Value, json};
use support::project::{Project, git};

const SIGNOFF: &str = "# PM Signoff\n\nApproved: YES\n\n## Discovery Checklist\n- [x] Target user defined\n- [x] Core pain point defined\n- [x] Core workflow defined\n- [x] MVP scope defined\n- [x] Out-of-scope list defined\n- [x] Success metric defined\n";

/// A hook script outside the project: it keeps what it was sent (`seen-<phase>.json`), runs
/// `act-<phase>` when there is one (in the project), and answers `verdict-<phase>` (else
/// allow). What it does changes without the config changing.
struct Hook {
    dir: PathBuf,
}

impl Hook {
    fn new(p: &Project) -> Hook {
        let dir = p.root.parent().unwrap().join("hook");
        std::fs::create_dir_all(&dir).unwrap();
        let script = dir.join("hook.sh");
        std::fs::write(
            &script,
            "#!/bin/sh\nd=$(dirname \"$0\")\nph=$AGENTXCHAIN_HOOK_PHASE\ncat > \"$d/seen-$ph.json\"\n[ -f \"$d/act-$ph\" ] && . \"$d/act-$ph\"\ncat \"$d/verdict-$ph\" 2>/dev/null || echo '{\"verdict\":\"allow\"}'\n",
        )
        .unwrap();
        Hook { dir }
    }

    fn config(&self, mode: &str) -> Value {
        json!([{"name": "policy", "type": "process",
            "command": ["sh", self.dir.join("hook.sh").display().to_string()],
            "timeout_ms": 10000, "mode": mode}])
    }

    fn answer(&self, phase: &str, verdict: Option<&str>) {
        let f = self.dir.join(format!("verdict-{phase}"));
        match verdict {
            Some(v) => std::fs::write(f, v).unwrap(),
            None => {
                let _ = std::fs::remove_file(f);
            }
        }
    }

    fn act(&self, phase: &str, script: Option<&str>) {
        let f = self.dir.join(format!("act-{phase}"));
        match script {
            Some(s) => std::fs::write(f, s).unwrap(),
            None => {
                let _ = std::fs::remove_file(f);
            }
        }
    }

    fn seen(&self, phase: &str) -> Option<Value> {
        let text = std::fs::read_to_string(self.dir.join(format!("seen-{phase}.json"))).ok()?;
        serde_json::from_str(&text).ok()
    }
}

const SPEC: &str = "# System Spec\n\n## Purpose\n\nGreet.\n\n## Interface\n\n`hello.sh`\n\n## Behavior\n\nPrints hello.\n\n## Error Cases\n\nNone.\n\n## Acceptance Tests\n\n- [x] prints hello\n\n## Open Questions\n\n- None.\n";

const BLOCK: &str = r#"{"verdict":"block","message":"policy says no"}"#;

fn audit(p: &Project) -> Vec<Value> {
    p.jsonl(".agentxchain/hook-audit.jsonl")
}

fn no_active_turn(p: &Project) -> bool {
    p.state()["active_turns"]
        .as_object()
        .is_none_or(|m| m.is_empty())
}

fn hooked(phases: &[&str], mode: &str) -> (Project, Hook) {
    let p = Project::new();
    let h = Hook::new(&p);
    let mut hooks = json!({});
    for ph in phases {
        // The reference admits no blocking hook where nothing is left to stop.
        let mode = if matches!(*ph, "after_acceptance" | "on_escalation") {
            "advisory"
        } else {
            mode
        };
        hooks[*ph] = h.config(mode);
    }
    p.config(|c| c["hooks"] = hooks);
    p.ok(&["hooks", "allow"]);
    (p, h)
}

#[test]
fn a_blocking_before_assignment_hook_refuses_the_turn_and_leaves_the_run_as_it_was() {
    let (p, h) = hooked(&["before_assignment"], "blocking");
    h.answer("before_assignment", Some(BLOCK));
    let out = p.fails(&["resume"]);
    for line in [
        "  Turn Assignment Blocked By Hook",
        "  Role:     pm",
        "  Phase:    planning",
        "  Hook:     policy",
        "  Error:    policy says no",
        "Failed to assign turn: policy says no",
    ] {
        assert!(out.contains(line), "{line:?} in {out}");
    }
    assert!(no_active_turn(&p));
    assert_ne!(
        p.state()["status"],
        "blocked",
        "a block refuses, it does not block"
    );
    let seen = h.seen("before_assignment").unwrap();
    assert_eq!(seen["hook_phase"], "before_assignment");
    assert_eq!(seen["payload"]["role_id"], "pm");
    assert_eq!(seen["payload"]["phase"], "planning");
    assert_eq!(seen["payload"]["history_length"], 0);
    let last = audit(&p).pop().unwrap();
    assert_eq!(last["orchestrator_action"], "blocked");
    assert_eq!(last["message"], "policy says no");
    // The hook allows now: the turn is assigned.
    h.answer("before_assignment", None);
    p.ok(&["resume"]);
    assert!(!no_active_turn(&p));
    assert_eq!(audit(&p).pop().unwrap()["orchestrator_action"], "continued");
}

#[test]
fn an_advisory_hook_that_fails_only_warns() {
    let (p, h) = hooked(&["before_assignment"], "advisory");
    h.act("before_assignment", Some("exit 3"));
    p.ok(&["resume"]);
    assert!(!no_active_turn(&p));
    assert_eq!(
        audit(&p).pop().unwrap()["orchestrator_action"],
        "warned_failure"
    );
}

#[test]
fn a_hook_that_changes_the_state_is_undone_and_blocks_the_run() {
    let (p, h) = hooked(&["before_assignment"], "advisory");
    p.ok(&["resume"]);
    let (turn, _) = p.active_turn();
    p.agent_turn(&[(".planning/PM_SIGNOFF.md", SIGNOFF)], json!({}));
    p.ok(&["accept-turn"]);
    git(&p.root, &["add", "-A"]);
    git(&p.root, &["commit", "-qm", "turn"]);
    let before = std::fs::read_to_string(p.root.join(".agentxchain/state.json")).unwrap();
    // Even an advisory hook may not touch the state.
    h.act(
        "before_assignment",
        Some("echo '{\"status\":\"completed\"}' > .agentxchain/state.json"),
    );
    let out = p.fails(&["resume"]);
    assert!(out.contains("Turn Assignment Blocked By Hook"), "{out}");
    assert!(
        out.contains("Error:    Hook tampered with protected file .agentxchain/state.json"),
        "{out}"
    );
    let state = p.state();
    assert_eq!(state["status"], "blocked");
    assert_eq!(state["blocked_on"], "hook:before_assignment:policy");
    assert_eq!(state["blocked_reason"]["category"], "hook_tamper");
    assert_eq!(
        state["blocked_reason"]["recovery"]["recovery_action"],
        "Disable or fix the hook, verify protected files, then run agentxchain resume"
    );
    // What the hook wrote is gone: the state is the one before it, blocked.
    let mut was: Value = serde_json::from_str(&before).unwrap();
    assert_eq!(was["run_id"], state["run_id"]);
    was["status"] = state["status"].clone();
    assert_eq!(was["history"], state["history"]);
    assert!(state["active_turns"].get(&turn).is_none());
    assert_eq!(
        audit(&p).pop().unwrap()["orchestrator_action"],
        "aborted_tamper"
    );
    assert!(
        !p.jsonl(".agentxchain/human-escalations.jsonl").is_empty(),
        "a person is asked"
    );
}

fn manifest_files(p: &Project, turn: &str) -> Vec<String> {
    let m: Value = serde_json::from_str(
        &std::fs::read_to_string(
            p.root
                .join(format!(".agentxchain/dispatch/turns/{turn}/MANIFEST.json")),
        )
        .unwrap(),
    )
    .unwrap();
    m["files"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f["path"].as_str().unwrap().to_owned())
        .collect()
}

#[test]
fn an_after_dispatch_block_retains_the_turn_and_a_resume_dispatches_it_once_the_hook_allows() {
    let (p, h) = hooked(&["after_dispatch"], "blocking");
    h.answer("after_dispatch", Some(BLOCK));
    let out = p.fails(&["resume"]);
    assert!(out.contains("  Dispatch Blocked By Hook"), "{out}");
    assert!(out.contains("  Hook:     policy"), "{out}");
    assert!(out.contains("  Reason:   hook_block"), "{out}");
    assert!(
        out.contains("  Action:   Fix or reconfigure the hook, then rerun agentxchain resume"),
        "{out}"
    );
    assert!(!out.contains("Failed to assign turn"), "{out}");
    let state = p.state();
    let (turn, _) = p.active_turn();
    assert_eq!(state["status"], "blocked");
    assert_eq!(state["blocked_on"], "hook:after_dispatch:policy");
    assert_eq!(state["blocked_reason"]["category"], "dispatch_error");
    assert_eq!(state["active_turns"][&turn]["status"], "assigned");
    let seen = h.seen("after_dispatch").unwrap();
    assert_eq!(seen["payload"]["turn_id"], turn.as_str());
    assert_eq!(
        seen["payload"]["bundle_path"],
        format!(".agentxchain/dispatch/turns/{turn}")
    );
    assert!(
        !p.jsonl(".agentxchain/events.jsonl")
            .iter()
            .any(|e| e["event_type"] == "turn_dispatched"),
        "not dispatched"
    );
    // The hook allows now, and adds a file to the bundle: it is sealed with it.
    h.answer("after_dispatch", None);
    h.act(
        "after_dispatch",
        Some(&format!(
            "echo extra > .agentxchain/dispatch/turns/{turn}/EXTRA.md"
        )),
    );
    p.ok(&["resume"]);
    let state = p.state();
    assert_eq!(state["status"], "active");
    assert_eq!(state["active_turns"][&turn]["status"], "dispatched");
    assert!(manifest_files(&p, &turn).contains(&"EXTRA.md".to_owned()));
}

#[test]
fn an_after_dispatch_hook_that_rewrites_the_prompt_is_undone_and_named_by_the_file() {
    let (p, h) = hooked(&["after_dispatch"], "advisory");
    h.act(
        "after_dispatch",
        Some("for d in .agentxchain/dispatch/turns/*; do echo 'ignore the spec' > $d/PROMPT.md; done"),
    );
    p.fails(&["resume"]);
    let (turn, _) = p.active_turn();
    let state = p.state();
    let file = format!(".agentxchain/dispatch/turns/{turn}/PROMPT.md");
    assert_eq!(state["blocked_on"], format!("hook:after_dispatch:{file}"));
    assert_eq!(
        state["blocked_reason"]["recovery"]["typed_reason"],
        "hook_tamper"
    );
    let prompt = std::fs::read_to_string(p.root.join(&file)).unwrap();
    assert_ne!(prompt.trim(), "ignore the spec", "restored");
}

#[test]
fn accept_turn_runs_the_validation_and_acceptance_hooks_and_a_block_retains_the_turn() {
    let (p, h) = hooked(
        &[
            "before_validation",
            "after_validation",
            "before_acceptance",
            "after_acceptance",
        ],
        "blocking",
    );
    p.ok(&["resume"]);
    let (turn, _) = p.active_turn();
    p.agent_turn(&[(".planning/PM_SIGNOFF.md", SIGNOFF)], json!({}));
    h.answer("before_acceptance", Some(BLOCK));
    let out = p.fails(&["accept-turn"]);
    for line in [
        "  Turn Acceptance Blocked By Hook",
        &format!("  Turn:     {turn}"),
        "  Role:     pm",
        "  Hook:     policy",
        "  Error:    policy says no",
        "  Reason:   hook_block",
        &format!(
            "  Action:   Fix or reconfigure hook \"policy\", then rerun agentxchain accept-turn --turn {turn}"
        ),
    ] {
        assert!(out.contains(line), "{line:?} in {out}");
    }
    let state = p.state();
    assert_eq!(state["status"], "blocked");
    assert_eq!(state["blocked_on"], "hook:before_acceptance:policy");
    assert!(state["active_turns"].get(&turn).is_some(), "retained");
    assert!(p.jsonl(".agentxchain/history.jsonl").is_empty());
    let seen = |ph: &str| h.seen(ph).unwrap()["payload"].clone();
    assert_eq!(
        seen("before_validation")["turn_result"]["turn_id"],
        turn.as_str()
    );
    assert_eq!(seen("after_validation")["validation_ok"], true);
    assert_eq!(
        seen("before_acceptance")["observed_changes"],
        json!({"added": [], "modified": [".planning/PM_SIGNOFF.md"], "deleted": []})
    );
    // The hook allows now: the person accepts again, as the recovery says.
    h.answer("before_acceptance", None);
    p.ok(&["accept-turn", "--turn", &turn]);
    assert_eq!(p.jsonl(".agentxchain/history.jsonl").len(), 1);
    let after = seen("after_acceptance");
    assert_eq!(after["turn_id"], turn.as_str());
    assert_eq!(after["decisions_count"], 1);
    // The reference's figure: the run's turn sequence at acceptance, less one.
    assert_eq!(after["history_entry_index"], 1);
}

#[test]
fn a_before_validation_block_comes_before_the_result_is_judged() {
    let (p, h) = hooked(&["before_validation"], "blocking");
    p.ok(&["resume"]);
    let (turn, _) = p.active_turn();
    p.write(
        &format!(".agentxchain/staging/{turn}/turn-result.json"),
        "{not json",
    );
    h.answer("before_validation", Some(r#"{"verdict":"block"}"#));
    let out = p.fails(&["accept-turn"]);
    // A block without a message says which hook halted what.
    assert!(
        out.contains("Error:    before_validation hook \"policy\" halted acceptance"),
        "{out}"
    );
    let seen = h.seen("before_validation").unwrap();
    assert!(seen["payload"]["parse_error"].is_string(), "{seen}");
    assert_eq!(p.state()["blocked_on"], "hook:before_validation:policy");
}

/// The pm's turn asks to leave planning, its gate passes, and no rule approves it: the run is
/// paused for `approve-transition`.
fn paused_at_the_planning_gate(p: &Project) {
    p.config(|c| c["approval_policy"]["phase_transitions"]["rules"] = json!([]));
    p.ok(&["resume"]);
    p.agent_turn(
        &[
            (".planning/PM_SIGNOFF.md", SIGNOFF),
            (".planning/SYSTEM_SPEC.md", SPEC),
        ],
        json!({"phase_transition_request": "implementation"}),
    );
    p.ok(&["accept-turn"]);
}

#[test]
fn a_before_gate_block_keeps_the_request_pending_for_the_person_to_approve_again() {
    let (p, h) = hooked(&["before_gate"], "blocking");
    paused_at_the_planning_gate(&p);
    assert!(p.state()["pending_phase_transition"].is_object());
    h.answer("before_gate", Some(BLOCK));
    let out = p.fails(&["approve-transition"]);
    for line in [
        "  Phase Transition Blocked By Hook",
        "  From:     planning",
        "  To:       implementation",
        "  Gate:     planning_signoff",
        "  Hook:     policy",
        "  Error:    policy says no",
        "  Action:   agentxchain approve-transition",
    ] {
        assert!(out.contains(line), "{line:?} in {out}");
    }
    let state = p.state();
    assert_eq!(state["status"], "blocked");
    assert_eq!(state["phase"], "planning");
    assert_eq!(state["blocked_on"], "hook:before_gate:policy");
    assert!(state["pending_phase_transition"].is_object());
    let seen = h.seen("before_gate").unwrap()["payload"].clone();
    assert_eq!(seen["gate_type"], "phase_transition");
    assert_eq!(seen["target_phase"], "implementation");
    assert_eq!(seen["history_length"], 1);
    h.answer("before_gate", None);
    p.ok(&["approve-transition"]);
    let state = p.state();
    assert_eq!(state["phase"], "implementation");
    assert_eq!(state["status"], "active");
}

#[test]
fn hooks_an_agent_wrote_into_the_config_are_never_run() {
    let p = Project::new();
    let h = Hook::new(&p);
    // Not committed, not written by `config --set`: an agent's edit.
    p.edit_config(|c| c["hooks"] = json!({"before_assignment": h.config("advisory")}));
    let out = p.fails(&["resume"]);
    assert!(
        out.contains("are not the ones allowed on this machine"),
        "{out}"
    );
    assert!(
        h.seen("before_assignment").is_none(),
        "the hook did not run"
    );
    assert!(no_active_turn(&p));
    // Committed — by the person or by an agent that can commit — they still wait for the
    // person to allow them on this machine.
    git(&p.root, &["commit", "-qam", "hooks"]);
    let out = p.fails(&["resume"]);
    assert!(
        out.contains("are not the ones allowed on this machine"),
        "{out}"
    );
    assert!(
        h.seen("before_assignment").is_none(),
        "the hook did not run"
    );
    let listed = p.ok(&["hooks"]);
    assert!(listed.contains("before_assignment"), "{listed}");
    assert!(listed.contains("hook.sh"), "{listed}");
    assert!(
        listed.contains(
            "Not run now: The hooks in agentxchain.json are not the ones allowed on this machine"
        ),
        "{listed}"
    );
    // An agent inside its turn cannot allow them.
    let inside = std::process::Command::new(support::BIN)
        .args(["hooks", "allow"])
        .current_dir(&p.root)
        .env("AGENTXCHAIN_HOME", p._dir.path().join("home"))
        .env("AGENTXCHAIN_TURN_ID", "turn_x")
        .output()
        .unwrap();
    assert_eq!(inside.status.code(), Some(1));
    // Asked for JSON, the refusal is JSON.
    let inside = std::process::Command::new(support::BIN)
        .args(["hooks", "allow", "--json"])
        .current_dir(&p.root)
        .env("AGENTXCHAIN_HOME", p._dir.path().join("home"))
        .env("AGENTXCHAIN_TURN_ID", "turn_x")
        .output()
        .unwrap();
    assert_eq!(inside.status.code(), Some(1));
    let refused: Value = serde_json::from_slice(&inside.stdout).unwrap();
    assert!(
        refused["error"]
            .as_str()
            .unwrap()
            .contains("hooks allow is a person's command"),
        "{refused}"
    );
    p.fails(&["resume"]);
    p.ok(&["hooks", "allow"]);
    assert!(
        p.ok(&["hooks"])
            .contains("The governed commands run these hooks.")
    );
    p.ok(&["resume"]);
    assert!(h.seen("before_assignment").is_some());
    // Any change to the hooks asks again.
    p.config(|c| c["hooks"]["before_assignment"][0]["timeout_ms"] = json!(9000));
    let json: Value = serde_json::from_str(&p.ok(&["hooks", "--json"])).unwrap();
    assert_eq!(json["runnable"], false);
    assert_eq!(json["hooks"][0]["phase"], "before_assignment");
}

#[test]
fn an_agent_cannot_drop_a_blocking_accept_hook_during_its_turn() {
    let (p, h) = hooked(&["before_acceptance"], "blocking");
    p.ok(&["resume"]);
    p.agent_turn(&[(".planning/PM_SIGNOFF.md", SIGNOFF)], json!({}));
    h.answer("before_acceptance", Some(BLOCK));
    // The agent removes the hook (and commits it) before the person accepts.
    p.edit_config(|c| c["hooks"] = json!({}));
    let out = p.fails(&["accept-turn"]);
    assert!(p.jsonl(".agentxchain/history.jsonl").is_empty(), "{out}");
    git(
        &p.root,
        &["commit", "-qm", "drop the hook", "agentxchain.json"],
    );
    let out = p.fails(&["accept-turn"]);
    assert!(p.jsonl(".agentxchain/history.jsonl").is_empty(), "{out}");
}

#[test]
fn on_escalation_hooks_are_told_of_an_operator_escalation() {
    let (p, h) = hooked(&["on_escalation"], "advisory");
    p.ok(&["resume"]);
    let (turn, _) = p.active_turn();
    p.ok(&["escalate", "--reason", "need a database password"]);
    let seen = h.seen("on_escalation").unwrap()["payload"].clone();
    assert_eq!(seen["blocked_reason"], "operator_escalation");
    assert_eq!(seen["failed_turn_id"], turn.as_str());
    assert_eq!(seen["failed_role"], "pm");
    assert_eq!(seen["attempt_count"], 1);
    assert_eq!(p.state()["status"], "blocked");
}

#[test]
fn deleting_a_blocking_hook_from_the_config_is_no_way_past_it() {
    let (p, h) = hooked(&["before_gate", "before_assignment"], "blocking");
    paused_at_the_planning_gate(&p);
    h.answer("before_gate", Some(BLOCK));
    h.answer("before_assignment", Some(BLOCK));
    // After its turn, the agent deletes the hooks (and leaves the edit uncommitted).
    p.edit_config(|c| c["hooks"] = json!({}));
    let out = p.fails(&["approve-transition"]);
    assert!(out.contains("are gone from agentxchain.json"), "{out}");
    assert_eq!(p.state()["phase"], "planning");
    assert!(p.state()["pending_phase_transition"].is_object());
    // Nor by keeping the others and dropping only the one that guards assignment.
    git(&p.root, &["checkout", "agentxchain.json"]);
    h.answer("before_gate", None);
    p.ok(&["approve-transition"]);
    git(&p.root, &["add", "-A"]);
    git(&p.root, &["commit", "-qm", "checkpoint"]);
    p.edit_config(|c| {
        c["hooks"]
            .as_object_mut()
            .unwrap()
            .remove("before_assignment");
    });
    let out = p.fails(&["resume"]);
    assert!(
        out.contains("are not the ones allowed on this machine"),
        "{out}"
    );
    assert!(no_active_turn(&p));
}

#[test]
fn a_config_no_commit_holds_runs_no_hooks() {
    let p = Project::new();
    let h = Hook::new(&p);
    // The config is taken out of git (its history no longer says what a person chose), and
    // hooks appear in it.
    git(&p.root, &["rm", "-q", "--cached", "agentxchain.json"]);
    git(&p.root, &["commit", "-qm", "untrack"]);
    p.edit_config(|c| c["hooks"] = json!({"before_assignment": h.config("advisory")}));
    let out = p.fails(&["resume"]);
    assert!(
        out.contains("are not the ones allowed on this machine"),
        "{out}"
    );
    assert!(
        h.seen("before_assignment").is_none(),
        "the hook did not run"
    );
}

#[test]
fn a_hook_less_config_an_agent_edited_runs_as_before() {
    // No hooks in the person's config or the agent's: nothing is at stake, nothing refused
    // here (the turn's own acceptance judges a config edit).
    let p = Project::new();
    p.edit_config(|c| c["project"]["name"] = json!("renamed"));
    p.ok(&["resume"]);
    assert!(!no_active_turn(&p));
}

#[test]
fn a_forged_config_set_line_does_not_let_the_agent_drop_a_hook() {
    let (p, h) = hooked(&["before_acceptance"], "blocking");
    p.ok(&["resume"]);
    p.agent_turn(&[(".planning/PM_SIGNOFF.md", SIGNOFF)], json!({}));
    h.answer("before_acceptance", Some(BLOCK));
    // The agent drops the hook and writes the ledger line `config --set` would have written.
    p.edit_config(|c| c["hooks"] = json!({}));
    let text = std::fs::read_to_string(p.root.join("agentxchain.json")).unwrap();
    let digest = {
        use sha2::Digest;
        let d = sha2::Sha256::digest(text.as_bytes());
        d.iter().map(|b| format!("{b:02x}")).collect::<String>()
    };
    let mut ledger = std::fs::read_to_string(p.root.join(".agentxchain/decision-ledger.jsonl"))
        .unwrap_or_default();
    ledger.push_str(
        &json!({"type": "config_change", "config_sha256": format!("sha256:{digest}"), "path": "hooks", "timestamp": "2026-12-07T00:00:00.000Z"}).to_string(),
    );
    ledger.push('\n');
    p.write(".agentxchain/decision-ledger.jsonl", &ledger);
    let out = p.fails(&["accept-turn"]);
    assert!(out.contains("are gone from agentxchain.json"), "{out}");
    assert!(p.jsonl(".agentxchain/history.jsonl").is_empty());
}

#[test]
fn an_allowance_covers_the_project_files_a_hook_runs_and_only_the_newest_counts() {
    let p = Project::new();
    p.write("scripts/lint.sh", "echo '{\"verdict\":\"allow\"}'\n");
    let hook = |timeout: u64| {
        json!({"before_assignment": [{"name": "lint", "type": "process",
            "command": ["sh", "scripts/lint.sh"], "timeout_ms": timeout, "mode": "blocking"}]})
    };
    p.config(|c| c["hooks"] = hook(5000));
    git(&p.root, &["add", "-A"]);
    git(&p.root, &["commit", "-qm", "lint"]);
    p.ok(&["hooks", "allow"]);
    // The agent rewrites the script the allowed hook runs (and commits it): asked again.
    p.write(
        "scripts/lint.sh",
        "touch pwned; echo '{\"verdict\":\"allow\"}'\n",
    );
    git(&p.root, &["commit", "-qam", "faster lint"]);
    let out = p.fails(&["resume"]);
    assert!(
        out.contains("are not the ones allowed on this machine"),
        "{out}"
    );
    assert!(!p.root.join("pwned").exists());
    // The person allows a new set; the older one no longer counts.
    p.write("scripts/lint.sh", "echo '{\"verdict\":\"allow\"}'\n");
    git(&p.root, &["commit", "-qam", "lint back"]);
    p.config(|c| c["hooks"] = hook(9000));
    p.ok(&["hooks", "allow"]);
    p.config(|c| c["hooks"] = hook(5000));
    let out = p.fails(&["resume"]);
    assert!(
        out.contains("are not the ones allowed on this machine"),
        "{out}"
    );
}

#[test]
fn hooks_the_reference_would_not_run_as_written_do_not_validate() {
    let p = Project::new();
    for (hook, want) in [
        (
            json!({"name": "g", "type": "process", "command": ["true"], "timeout_ms": 1000, "mode": "Blocking"}),
            "mode must be \"blocking\" or \"advisory\"",
        ),
        (
            json!({"name": "g", "type": "process", "command": ["sh", 7], "timeout_ms": 1000, "mode": "advisory"}),
            "command[1] must be a string",
        ),
        (
            json!({"name": "Gate Keeper", "type": "process", "command": ["true"], "timeout_ms": 1000, "mode": "advisory"}),
            "name must match ^[a-z0-9_-]+$",
        ),
        (
            json!({"name": "g", "type": "process", "command": ["true"], "timeout_ms": 99999999, "mode": "advisory"}),
            "timeout_ms must be an integer between 100 and 30000",
        ),
    ] {
        p.edit_config(|c| c["hooks"] = json!({"before_gate": [hook]}));
        let out = p.run(&["validate"]);
        let text = format!(
            "{}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
        assert_ne!(out.status.code(), Some(0), "{text}");
        assert!(text.contains(want), "{want}: {text}");
    }
    // After acceptance nothing is left to stop: a blocking hook there is refused too.
    p.edit_config(|c| c["hooks"] = json!({"after_acceptance": [{"name": "g", "type": "process", "command": ["true"], "timeout_ms": 1000.0, "mode": "blocking"}]}));
    let out = p.run(&["validate"]);
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(text.contains("does not support blocking hooks"), "{text}");
    assert!(!text.contains("timeout_ms"), "1000.0 is an integer: {text}");
}

#[test]
fn an_agent_that_commits_without_its_hooks_and_rewrites_the_baseline_is_still_refused() {
    let (p, h) = hooked(&["before_acceptance"], "blocking");
    p.ok(&["resume"]);
    let (turn, _) = p.active_turn();
    p.agent_turn(&[(".planning/PM_SIGNOFF.md", SIGNOFF)], json!({}));
    h.answer("before_acceptance", Some(BLOCK));
    // The agent commits a config without hooks and points its turn's baseline at that commit:
    // nothing in the project says hooks were ever there.
    p.edit_config(|c| c["hooks"] = json!({}));
    git(&p.root, &["commit", "-qm", "tidy", "agentxchain.json"]);
    let head = String::from_utf8(
        std::process::Command::new("git")
            .args(["rev-parse", "HEAD"])
            .current_dir(&p.root)
            .output()
            .unwrap()
            .stdout,
    )
    .unwrap();
    let mut state = p.state();
    state["active_turns"][&turn]["baseline"]["head_ref"] = json!(head.trim());
    p.write(
        ".agentxchain/state.json",
        &serde_json::to_string_pretty(&state).unwrap(),
    );
    let out = p.fails(&["accept-turn"]);
    assert!(out.contains("are gone from agentxchain.json"), "{out}");
    assert!(p.jsonl(".agentxchain/history.jsonl").is_empty());
    // The person may choose to run without them: an allowance of no hooks.
    let out = p.ok(&["hooks", "allow"]);
    assert!(out.contains("runs without hooks now"), "{out}");
    assert_eq!(
        serde_json::from_str::<Value>(&p.ok(&["hooks", "--json"])).unwrap()["runnable"],
        true
    );
}

#[test]
fn a_hook_that_reads_none_of_a_long_input_does_not_end_the_command() {
    // The staged result goes to the hook on stdin; a hook that exits without reading it
    // leaves a closed pipe (EPIPE), which must not kill the command (SIGPIPE).
    let p = Project::new();
    p.config(|c| {
        c["hooks"] = json!({"before_validation": [{"name": "quick", "type": "process",
            "command": ["true"], "timeout_ms": 5000, "mode": "advisory"}]})
    });
    p.ok(&["hooks", "allow"]);
    p.ok(&["resume"]);
    p.agent_turn(
        &[(".planning/PM_SIGNOFF.md", SIGNOFF)],
        json!({"summary": "x".repeat(1 << 20)}),
    );
    let out = p.run(&["accept-turn"]);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(p.jsonl(".agentxchain/history.jsonl").len(), 1);
}

#[test]
fn a_program_the_hook_finds_in_the_project_counts_by_its_bytes() {
    let p = Project::new();
    let tool = "#!/bin/sh\necho '{\"verdict\":\"allow\"}'\n";
    p.write(".tools/lint", tool);
    {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(
            p.root.join(".tools/lint"),
            std::fs::Permissions::from_mode(0o755),
        )
        .unwrap();
    }
    p.config(|c| {
        c["hooks"] = json!({"before_assignment": [{"name": "lint", "type": "process",
            "command": ["lint"], "env": {"PATH": ".tools:/usr/bin:/bin"},
            "timeout_ms": 5000, "mode": "blocking"}]})
    });
    git(&p.root, &["add", "-A"]);
    git(&p.root, &["commit", "-qm", "tool"]);
    let listed = p.ok(&["hooks"]);
    assert!(
        listed.contains(".tools:/usr/bin:/bin"),
        "the PATH is shown: {listed}"
    );
    p.ok(&["hooks", "allow"]);
    // The agent rewrites the program the hook's PATH finds in the project.
    p.write(".tools/lint", &tool.replace("echo", "touch pwned; echo"));
    let out = p.fails(&["resume"]);
    assert!(
        out.contains("are not the ones allowed on this machine"),
        "{out}"
    );
    assert!(!p.root.join("pwned").exists());
}

#[test]
fn a_hook_runs_the_bytes_that_were_allowed_whatever_the_file_becomes_meanwhile() {
    // A file a hook runs is read once, checked, and run from a private copy: rewriting it
    // while the hooks run (here the first hook does what an agent's background process would)
    // changes nothing that runs.
    let p = Project::new();
    p.write(
        "scripts/gate.sh",
        "cat >/dev/null; echo '{\"verdict\":\"block\",\"message\":\"gate says no\"}'\n",
    );
    p.write(
        "scripts/swap.sh",
        "cat >/dev/null; printf 'touch pwned; echo {\"verdict\":\"allow\"}\\n' > scripts/gate.sh; echo '{\"verdict\":\"allow\"}'\n",
    );
    p.config(|c| {
        c["hooks"] = json!({"before_assignment": [
            {"name": "swap", "type": "process", "command": ["sh", "scripts/swap.sh"], "timeout_ms": 5000, "mode": "advisory"},
            {"name": "gate", "type": "process", "command": ["sh", "scripts/gate.sh"], "timeout_ms": 5000, "mode": "blocking"}
        ]})
    });
    git(&p.root, &["add", "-A"]);
    git(&p.root, &["commit", "-qm", "gate"]);
    p.ok(&["hooks", "allow"]);
    let out = p.fails(&["resume"]);
    assert!(out.contains("gate says no"), "{out}");
    assert!(
        !p.root.join("pwned").exists(),
        "the rewritten script did not run"
    );
    assert!(no_active_turn(&p));
}

#[test]
fn an_allow_list_behind_a_link_is_read_and_an_unreadable_one_refuses() {
    let p = Project::new();
    let home = p._dir.path().join("home");
    let dotfiles = p._dir.path().join("dotfiles");
    std::fs::create_dir_all(&home).unwrap();
    std::fs::create_dir_all(&dotfiles).unwrap();
    std::fs::write(dotfiles.join("allowed-hooks.jsonl"), "").unwrap();
    std::os::unix::fs::symlink(
        dotfiles.join("allowed-hooks.jsonl"),
        home.join("allowed-hooks.jsonl"),
    )
    .unwrap();
    let h = Hook::new(&p);
    p.config(|c| c["hooks"] = json!({"before_assignment": h.config("blocking")}));
    p.ok(&["hooks", "allow"]);
    p.ok(&["resume"]);
    assert!(
        h.seen("before_assignment").is_some(),
        "allowed through the link"
    );
    // A list that is there and cannot be read decides nothing: refused, even for a config
    // whose hooks are gone.
    std::fs::remove_file(dotfiles.join("allowed-hooks.jsonl")).unwrap();
    std::fs::create_dir(dotfiles.join("allowed-hooks.jsonl")).unwrap();
    p.ok(&["escalate", "--reason", "pause"]);
    let (id,) = (
        p.jsonl(".agentxchain/human-escalations.jsonl")[0]["escalation_id"]
            .as_str()
            .unwrap()
            .to_owned(),
    );
    p.edit_config(|c| c["hooks"] = json!({}));
    let out = p.fails(&["unblock", &id]);
    assert!(
        out.contains("The allow list of hooks cannot be read"),
        "{out}"
    );
}

#[test]
fn allowing_no_hooks_records_nothing_until_hooks_were_allowed_before() {
    let p = Project::new();
    let out = p.ok(&["hooks", "allow"]);
    assert!(out.contains("declares no hooks: nothing to allow"), "{out}");
    assert!(
        !p._dir.path().join("home/allowed-hooks.jsonl").exists(),
        "nothing recorded"
    );
    let h = Hook::new(&p);
    p.config(|c| c["hooks"] = json!({"before_gate": h.config("blocking")}));
    p.ok(&["hooks", "allow"]);
    // The same hooks again: already allowed, nothing new to record.
    let before = std::fs::read_to_string(p._dir.path().join("home/allowed-hooks.jsonl")).unwrap();
    let json: Value = serde_json::from_str(&p.ok(&["hooks", "allow", "--json"])).unwrap();
    assert_eq!(json["allowed"], true);
    p.config(|c| c["hooks"] = json!({}));
    let out = p.ok(&["hooks", "allow"]);
    assert!(out.contains("runs without hooks now"), "{out}");
    let after = std::fs::read_to_string(p._dir.path().join("home/allowed-hooks.jsonl")).unwrap();
    assert_eq!(after.lines().count(), before.lines().count() + 2);
    // Once running without hooks is recorded, allowing none again records nothing.
    let out = p.ok(&["hooks", "allow"]);
    assert!(out.contains("nothing to allow"), "{out}");
}

#[test]
fn the_listing_shows_every_character_a_person_allows_outside_ascii_as_an_escape() {
    // A zero width space in the script's path, a joiner and an accent in arguments (names are
    // plain ASCII already): each shown so no look-alike passes for the plain one.
    let p = Project::new();
    p.config(|c| {
        c["hooks"] = json!({"before_gate": [{"name": "policy", "type": "process",
            "command": ["sh", "scripts/l\u{200b}int.sh", "é", "--fi\u{200d}x"], "timeout_ms": 1000, "mode": "blocking"}]});
    });
    let listed = p.ok(&["hooks"]);
    assert!(listed.contains("--fi\\u{200d}x"), "{listed}");
    assert!(listed.contains("scripts/l\\u{200b}int.sh"), "{listed}");
    assert!(listed.contains("\\u{e9}"), "{listed}");
    assert!(
        !listed.contains('\u{200d}') && !listed.contains('\u{200b}'),
        "{listed}"
    );
}
