//! `agentxchain run`: a whole governed run driven by `local_cli` agents (a shell script that
//! does each phase's work), its gates held or approved, and its stops — a manual role, a
//! failing agent, a credentialed gate, the turn limit.

mod support;

use std::path::Path;
use std::process::{Command, Stdio};

use serde_json::{Value, json};
use support::BIN;
use support::project::Project;

/// An agent that does its phase's work: planning signs off, implementation writes code, QA
/// gives the verdict and asks to complete. `fail` as its argument exits 3 without a result.
const AGENT: &str = r#"#!/bin/sh
cat > /dev/null
[ "$1" = fail ] && { echo "cannot work"; exit 3; }
run=$(sed -n 's/.*"run_id": "\(run_[0-9a-f]*\)".*/\1/p' .agentxchain/state.json | head -n 1)
t="$AGENTXCHAIN_TURN_ID"
phase=$(sed -n 's/^  "phase": "\([a-z_]*\)".*/\1/p' .agentxchain/state.json | head -n 1)
role=$(sed -n "/\"$t\"/,/assigned_role/p" .agentxchain/state.json | sed -n 's/.*"assigned_role": "\([a-z_]*\)".*/\1/p' | head -n 1)
echo "$role works on $phase"
case "$phase" in
planning)
printf '# PM Signoff\n\nApproved: YES\n\n## Discovery Checklist\n- [x] Target user defined\n- [x] Core pain point defined\n- [x] Core workflow defined\n- [x] MVP scope defined\n- [x] Out-of-scope list defined\n- [x] Success metric defined\n' > .planning/PM_SIGNOFF.md
printf '# System Spec\n\n## Purpose\n\nGreet.\n\n## Interface\n\n`hello.sh`\n\n## Behavior\n\nPrints hello.\n\n## Error Cases\n\nNone.\n\n## Acceptance Tests\n\n- [x] prints hello\n\n## Open Questions\n\n- None.\n' > .planning/SYSTEM_SPEC.md
files='".planning/PM_SIGNOFF.md",".planning/SYSTEM_SPEC.md"'; req='"phase_transition_request":"implementation","run_completion_request":null'; next=dev;;
implementation)
printf 'echo hello\n' > hello.sh
printf '# Implementation Notes\n\n## Changes\n\nAdded hello.sh.\n\n## Verification\n\nRan it.\n' > .planning/IMPLEMENTATION_NOTES.md
files='"hello.sh",".planning/IMPLEMENTATION_NOTES.md"'; req='"phase_transition_request":"qa","run_completion_request":null'; next=qa;;
*)
printf '# Acceptance Matrix\n\n| Req # | Requirement | Acceptance criteria | Test status | Last tested | Status |\n|-------|-------------|---------------------|-------------|-------------|--------|\n| 1 | greet | prints hello | pass | today | PASS |\n' > .planning/acceptance-matrix.md
printf '# Ship Verdict\n\n## Verdict: YES\n\n## QA Summary\n\nGood.\n\n## Open Blocking Issues\n\nNone.\n\n## Conditions\n\nNone.\n' > .planning/ship-verdict.md
printf '# Release Notes\n\n## User Impact\n\nA greeting.\n\n## Verification Summary\n\nRan it.\n' > .planning/RELEASE_NOTES.md
files='".planning/acceptance-matrix.md",".planning/ship-verdict.md",".planning/RELEASE_NOTES.md"'; req='"phase_transition_request":null,"run_completion_request":true'; next=human;;
esac
mkdir -p ".agentxchain/staging/$t"
cat > ".agentxchain/staging/$t/turn-result.json" <<JSON
{"schema_version":"1.0","run_id":"$run","turn_id":"$t","role":"$role","runtime_id":"local-all","status":"completed","summary":"$role did $phase","decisions":[{"id":"DEC-001","category":"scope","statement":"$role decided","rationale":"test"}],"objections":[{"id":"OBJ-001","severity":"low","statement":"nit","status":"raised"}],"files_changed":[$files],"verification":{"status":"pass","commands":["true"],"evidence_summary":"ran true","machine_evidence":[{"command":"true","exit_code":0}]},"artifact":{"type":"workspace","ref":null},"proposed_next_role":"$next",$req}
JSON
"#;

struct Run {
    p: Project,
    _agent: tempfile::TempDir,
}

/// Every role a code-writing `local_cli` agent (the script, with `mode` as its argument).
fn project(mode: &str) -> Run {
    project_with(AGENT, mode)
}

/// As `project`, with `script` as the agent.
fn project_with(script_text: &str, mode: &str) -> Run {
    let p = Project::new();
    let agent = tempfile::tempdir().unwrap();
    let script = agent.path().join("agent.sh");
    std::fs::write(&script, script_text).unwrap();
    let script = script.display().to_string();
    p.config(|c| {
        c["runtimes"]["local-all"] = json!({"type": "local_cli", "command": ["sh", script, mode], "prompt_transport": "stdin"});
        for role in c["roles"].as_object_mut().unwrap().values_mut() {
            role["runtime"] = json!("local-all");
            role["write_authority"] = json!("authoritative");
        }
    });
    Run { p, _agent: agent }
}

fn run(root: &Path, args: &[&str]) -> (i32, String, String) {
    let out = Command::new(BIN)
        .arg("run")
        .args(args)
        .current_dir(root)
        .stdin(Stdio::null())
        .env("GIT_AUTHOR_NAME", "t")
        .env("GIT_AUTHOR_EMAIL", "t@example.invalid")
        .env("GIT_COMMITTER_NAME", "t")
        .env("GIT_COMMITTER_EMAIL", "t@example.invalid")
        .output()
        .unwrap();
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

fn jsonl(root: &Path, rel: &str) -> Vec<Value> {
    std::fs::read_to_string(root.join(rel))
        .unwrap_or_default()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

fn commits(root: &Path) -> usize {
    let out = Command::new("git")
        .args(["rev-list", "--count", "HEAD"])
        .current_dir(root)
        .output()
        .unwrap();
    String::from_utf8_lossy(&out.stdout).trim().parse().unwrap()
}

#[test]
fn a_run_goes_from_planning_to_completed_with_its_agents() {
    let r = project("ok");
    let before = commits(&r.p.root);
    let (code, out, err) = run(&r.p.root, &["--auto-approve", "--auto-checkpoint"]);
    assert_eq!(code, 0, "{out}{err}");
    assert!(
        out.starts_with(
            "agentxchain run\n  Max turns: 50  Gate mode: auto-approve\n\nTurn assigned: turn_"
        ),
        "{out}"
    );
    for line in [
        " → pm\n  Dispatching to local CLI: sh ",
        "  transport: stdin\nTurn accepted: turn_",
        " → eng_director\n",
        " → qa\n",
        "Run completed\n\n─── Run Summary ───\n  Status:  completed\n  Turns:   3\n  Gates:   0 approved\n  Errors:  none\n",
    ] {
        assert!(out.contains(line), "{line:?} in {out}");
    }
    let state = r.p.state();
    assert_eq!(state["status"], "completed");
    let history = jsonl(&r.p.root, ".agentxchain/history.jsonl");
    let roles: Vec<&str> = history
        .iter()
        .map(|h| h["role"].as_str().unwrap())
        .collect();
    assert_eq!(roles, ["pm", "eng_director", "qa"]);
    // pm proposed "dev", which planning's routing does not allow: repaired, as the reference.
    assert_eq!(history[0]["proposed_next_role"], "eng_director");
    assert_eq!(commits(&r.p.root), before + 3, "each turn checkpointed");
    let events = jsonl(&r.p.root, ".agentxchain/events.jsonl");
    let progress: Vec<&str> = events
        .iter()
        .filter(|e| e["event_type"] == "dispatch_progress")
        .map(|e| e["payload"]["milestone"].as_str().unwrap())
        .collect();
    assert_eq!(progress, ["started", "completed"].repeat(3));
    let p = events
        .iter()
        .find(|e| e["event_type"] == "dispatch_progress")
        .unwrap();
    assert_eq!(p["turn"]["assigned_role"], "pm");
    assert_eq!(
        jsonl(&r.p.root, ".agentxchain/run-history.jsonl").len(),
        1,
        "the finished run is in the run history"
    );
    // Run again over the completed run: a fresh one starts at the first phase.
    let first = state["run_id"].clone();
    let (code, out, _) = run(&r.p.root, &["--max-turns", "0"]);
    assert_eq!(code, 0, "{out}");
    assert!(out.contains("  Status:  max_turns_reached\n"), "{out}");
    let state = r.p.state();
    assert_eq!(state["status"], "active");
    assert_eq!(state["phase"], "planning");
    assert_ne!(state["run_id"], first);
}

fn human_gates(r: &Run) {
    r.p.config(|c| {
        c["approval_policy"]["phase_transitions"]["rules"] = json!([]);
        c["approval_policy"]["run_completion"] = json!({"action": "require_human"});
    });
}

#[test]
fn a_gate_a_person_holds_stops_the_run_until_they_approve() {
    let r = project("ok");
    human_gates(&r);
    let (code, out, _) = run(&r.p.root, &["--auto-checkpoint"]);
    assert_eq!(code, 0, "{out}");
    assert!(
        out.contains("Gate paused: phase_transition\n  Gate pause: phase_transition — stdin is not a TTY, failing closed.\n  Use --auto-approve for non-interactive mode.\nGate held: phase_transition — run paused\n"),
        "{out}"
    );
    assert!(
        out.contains("  Status:  gate_held\n  Turns:   1\n"),
        "{out}"
    );
    let state = r.p.state();
    assert_eq!(state["status"], "paused");
    assert_eq!(state["phase"], "planning");
    // The person approves at the shell; the run goes on to the next gate.
    r.p.ok(&["approve-transition"]);
    let (code, out, _) = run(&r.p.root, &["--auto-checkpoint"]);
    assert_eq!(code, 0, "{out}");
    // Implementation's gate needs no person; the run's completion does.
    assert!(out.contains(" → eng_director\n"), "{out}");
    assert!(
        out.contains("Gate held: run_completion — run paused\n"),
        "{out}"
    );
    let state = r.p.state();
    assert_eq!(state["phase"], "qa");
    assert_eq!(state["status"], "paused");
    assert!(state["pending_run_completion"].is_object());
}

#[test]
fn a_credentialed_gate_is_never_auto_approved() {
    let r = project("ok");
    human_gates(&r);
    r.p.config(|c| c["gates"]["planning_signoff"]["credentialed"] = json!(true));
    let (code, out, _) = run(&r.p.root, &["--auto-approve", "--auto-checkpoint"]);
    assert_eq!(code, 0, "{out}");
    assert!(
        out.contains("  Gate \"planning_signoff\" is credentialed — auto-approval refused. A human must approve (lights-out without blind trust).\nGate held: phase_transition — run paused\n"),
        "{out}"
    );
    assert_eq!(r.p.state()["status"], "paused");
    // Without the credential, --auto-approve approves it.
    let r = project("ok");
    human_gates(&r);
    let (code, out, _) = run(&r.p.root, &["--auto-approve", "--auto-checkpoint"]);
    assert_eq!(code, 0, "{out}");
    assert!(
        out.contains("  Auto-approved phase_transition gate\nGate approved: phase_transition\n"),
        "{out}"
    );
    assert!(out.contains("  Gates:   2 approved\n"), "{out}");
    assert_eq!(r.p.state()["status"], "completed");
}

#[test]
fn a_manual_role_is_rejected_until_its_retries_are_spent() {
    let p = Project::new();
    let (code, out, err) = run(&p.root, &["--no-report"]);
    assert_eq!(code, 1, "{out}");
    let skip = "Skipping manual role \"pm\" — use agentxchain step for manual dispatch.\n";
    assert_eq!(out.matches(skip).count(), 2, "{out}");
    assert!(
        out.contains(
            "— manual adapter is not supported in run mode — use agentxchain step\nRun blocked\n"
        ),
        "{out}"
    );
    assert!(
        out.contains("  Status:  reject_exhausted\n  Turns:   0\n  Gates:   0 approved\n  Errors:  1\n    Turn rejected for pm, retries exhausted\n\n  Recovery: retries_exhausted\n  Action:   Resolve the escalation, then run agentxchain resume\n  Detail:   escalation:retries-exhausted:pm\n"),
        "{out}"
    );
    assert!(err.contains("HUMAN ESCALATION RAISED: hesc_"), "{err}");
    let state = p.state();
    assert_eq!(state["blocked_on"], "escalation:retries-exhausted:pm");
    let t = state["active_turns"]
        .as_object()
        .unwrap()
        .values()
        .next()
        .unwrap()
        .clone();
    assert_eq!(t["last_rejection"]["failed_stage"], "dispatch");
    let types: Vec<String> = jsonl(&p.root, ".agentxchain/events.jsonl")
        .iter()
        .map(|e| e["event_type"].as_str().unwrap().to_owned())
        .collect();
    assert_eq!(
        types,
        [
            "run_started",
            "turn_dispatched",
            "turn_rejected",
            "turn_dispatched",
            "human_escalation_raised",
            "turn_rejected",
            "run_blocked"
        ]
    );
    // The escalation it raised is the one `unblock` resolves.
    let esc = jsonl(&p.root, ".agentxchain/human-escalations.jsonl");
    let id = esc[0]["escalation_id"].as_str().unwrap().to_owned();
    p.ok(&["unblock", &id]);
    assert_eq!(p.state()["status"], "active");
}

#[test]
fn a_failing_agent_is_rejected_and_retried_then_the_run_blocks() {
    let r = project("fail");
    let (code, out, _) = run(&r.p.root, &[]);
    assert_eq!(code, 1, "{out}");
    assert_eq!(
        out.matches(" — Subprocess exited (code 3) without writing a staged turn result to .agentxchain/staging/turn_").count(),
        2,
        "{out}"
    );
    assert!(out.contains("  Status:  reject_exhausted\n"), "{out}");
    let progress: Vec<String> = jsonl(&r.p.root, ".agentxchain/events.jsonl")
        .iter()
        .filter(|e| e["event_type"] == "dispatch_progress")
        .map(|e| e["payload"]["milestone"].as_str().unwrap().to_owned())
        .collect();
    assert_eq!(progress, ["started", "failed", "started", "failed"]);
}

#[test]
fn the_turn_limit_stops_the_run_cleanly() {
    let r = project("ok");
    let (code, out, _) = run(&r.p.root, &["--max-turns", "1", "--auto-approve"]);
    assert_eq!(code, 0, "{out}");
    assert!(
        out.contains("  Max turns: 1  Gate mode: auto-approve\n"),
        "{out}"
    );
    assert!(
        out.contains("  Status:  max_turns_reached\n  Turns:   1\n"),
        "{out}"
    );
    assert_eq!(jsonl(&r.p.root, ".agentxchain/history.jsonl").len(), 1);
}

#[test]
fn a_dry_run_says_what_would_run_and_runs_nothing() {
    let p = Project::new();
    let (code, out, _) = run(&p.root, &["--dry-run"]);
    assert_eq!(code, 0, "{out}");
    assert!(
        out.starts_with("Dry run — no execution\n  First role:   pm\n  Max turns:    50\n  Gate mode:    interactive\n  ✗ pm → manual (not supported in run mode)\n"),
        "{out}"
    );
    assert!(
        out.contains("  ⚠ The current phase's first role (pm) is manual.\n"),
        "{out}"
    );
    assert_eq!(p.state()["status"], "idle");
    let (code, out, _) = run(&p.root, &["--role", "nobody"]);
    assert_eq!(code, 1);
    assert!(
        out.starts_with("Unknown role: \"nobody\"\nAvailable roles: "),
        "{out}"
    );
}

#[test]
fn a_turn_is_not_accepted_blind_when_the_agent_breaks_git() {
    // The agent drops the gates' protections from the config, then breaks HEAD so git cannot
    // show the change.
    let r = project("ok");
    human_gates(&r);
    r.p.config(|c| c["gates"]["planning_signoff"]["credentialed"] = json!(true));
    let script = r._agent.path().join("agent.sh");
    let text = std::fs::read_to_string(&script).unwrap();
    std::fs::write(
        &script,
        text.replace(
            "mkdir -p \".agentxchain/staging/$t\"",
            "sed -i 's/\"credentialed\": true/\"credentialed\": false/' agentxchain.json; echo garbage > .git/HEAD\nmkdir -p \".agentxchain/staging/$t\"",
        ),
    )
    .unwrap();
    let (code, out, _) = run(&r.p.root, &["--auto-approve"]);
    assert_eq!(code, 1, "{out}");
    assert!(
        out.contains("the working tree cannot be observed: git fails in this repository"),
        "{out}"
    );
    assert!(
        jsonl(&r.p.root, ".agentxchain/history.jsonl").is_empty(),
        "nothing accepted"
    );
    assert_ne!(r.p.state()["phase"], "implementation");
}

#[test]
fn a_marker_linked_to_a_project_file_is_removed_not_the_file() {
    let r = project("ok");
    std::fs::create_dir_all(r.p.root.join(".agentxchain/intake")).unwrap();
    std::os::unix::fs::symlink(
        "../../agentxchain.json",
        r.p.root.join(".agentxchain/intake/injected-priority.json"),
    )
    .unwrap();
    let (_, out, _) = run(&r.p.root, &["--max-turns", "1", "--auto-approve"]);
    assert!(
        r.p.root.join("agentxchain.json").exists(),
        "the config was deleted: {out}"
    );
}

#[test]
fn a_turn_left_by_an_interrupted_run_is_dispatched_afresh() {
    let r = project("ok");
    r.p.ok(&["resume"]);
    let (turn, _) = r.p.active_turn();
    // What an interrupted dispatch leaves in the bundle.
    std::fs::write(
        r.p.root
            .join(format!(".agentxchain/dispatch/turns/{turn}/stdout.log")),
        "earlier\n",
    )
    .unwrap();
    let (code, out, _) = run(&r.p.root, &["--max-turns", "1", "--auto-approve"]);
    assert_eq!(code, 0, "{out}");
    assert!(out.contains(&format!("Turn accepted: {turn}")), "{out}");
    assert!(!out.contains("manifest verification failed"), "{out}");
}

#[test]
fn a_config_no_role_can_satisfy_is_refused_before_the_run() {
    let r = project("ok");
    r.p.config(|c| {
        c["runtimes"]["api"] = json!({"type": "api_proxy", "provider": "ollama", "model": "m"});
        for role in ["pm", "eng_director"] {
            c["roles"][role]["runtime"] = json!("api");
            c["roles"][role]["write_authority"] = json!("review_only");
        }
    });
    let (code, out, _) = run(&r.p.root, &[]);
    assert_eq!(code, 1, "{out}");
    assert!(out.contains("  Status:  admission_rejected\n"), "{out}");
    assert!(
        out.contains(
            "    Admission control: ADM-001: Phase \"planning\" gate \"planning_signoff\""
        ),
        "{out}"
    );
    assert_eq!(r.p.state()["status"], "idle", "no run was started");
}

#[test]
fn a_chain_runs_continuations_that_inherit_until_its_limit() {
    let r = project("ok");
    let (code, out, err) = run(
        &r.p.root,
        &[
            "--auto-approve",
            "--auto-checkpoint",
            "--chain",
            "--max-chains",
            "1",
            "--chain-cooldown",
            "0",
        ],
    );
    assert_eq!(code, 0, "{out}{err}");
    assert!(
        out.starts_with("agentxchain run --chain\n  Chain mode: enabled (max 1 continuations, on: completed, cooldown: 0s)\n\n  ── Chain run 1/2 ──"),
        "{out}"
    );
    assert!(
        out.contains("  Chain: run completed → starting continuation (0 remaining)...\n"),
        "{out}"
    );
    assert!(out.contains("  ── Chain run 2/2 "), "{out}");
    let runs = jsonl(&r.p.root, ".agentxchain/run-history.jsonl");
    assert_eq!(runs.len(), 2, "{out}");
    let (first, second) = (&runs[0], &runs[1]);
    assert!(
        out.contains(&format!(
            "  Origin:    continuation from {}\n  Inherits: parent {} (completed) — ",
            first["run_id"].as_str().unwrap(),
            first["run_id"].as_str().unwrap()
        )),
        "{out}"
    );
    assert_eq!(second["provenance"]["trigger"], "continuation");
    assert_eq!(second["provenance"]["parent_run_id"], first["run_id"]);
    assert_eq!(second["parent_context"]["parent_status"], "completed");
    assert!(
        out.contains(
            "  ─── Chain Summary ───\n  Total runs:   2\n  Total turns:  6\n  Duration:     "
        ),
        "{out}"
    );
    assert!(
        out.ends_with("  Terminal:     chain_limit_reached\n"),
        "{out}"
    );
    // The chain's report.
    let reports: Vec<_> = std::fs::read_dir(r.p.root.join(".agentxchain/reports"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    assert_eq!(reports.len(), 1);
    let report: Value =
        serde_json::from_str(&std::fs::read_to_string(&reports[0]).unwrap()).unwrap();
    assert_eq!(report["terminal_reason"], "chain_limit_reached");
    assert_eq!(report["total_turns"], 6);
    assert_eq!(report["runs"][1]["provenance_trigger"], "continuation");
    assert_eq!(
        report["runs"][1]["inherited_context_summary"]["recent_accepted_turns_count"],
        3
    );
    // A run that does not end in a chainable status ends the chain.
    let r = project("fail");
    let (code, out, _) = run(&r.p.root, &["--chain", "--chain-cooldown", "0"]);
    assert_eq!(code, 1, "{out}");
    assert!(
        out.contains("  Terminal:     non_chainable_status\n"),
        "{out}"
    );
    assert!(!out.contains("Chain run 2/"), "{out}");
}

/// The planning phase takes two turns at once: the pm's and the eng_director's agents each wait
/// (up to 10 s) for the other to have started, so a loop that ran them one after the other
/// would see both fail. The eng_director writes a review file of its own and asks for nothing.
fn parallel_planning() -> Run {
    let script = AGENT
        .replace(
            "case \"$phase\" in\n",
            r#"if [ "$phase" = planning ]; then
  : > "$0.$role.started"
  other=pm; [ "$role" = pm ] && other=eng_director
  i=0
  while [ ! -e "$0.$other.started" ]; do
    i=$((i+1)); [ $i -gt 100 ] && { echo "$role ran alone"; exit 3; }
    sleep 0.1
  done
  [ "$role" = eng_director ] && phase=engineering_review
fi
case "$phase" in
"#,
        )
        .replace(
            "*)\nprintf '# Acceptance Matrix",
            "engineering_review)\nprintf '# Engineering Review\\n\\nSound.\\n' > .planning/ENG_REVIEW.md\nfiles='\".planning/ENG_REVIEW.md\"'; req='\"phase_transition_request\":null,\"run_completion_request\":null'; next=pm;;\n*)\nprintf '# Acceptance Matrix",
        );
    assert!(script.contains("engineering_review)\n"));
    let r = project_with(&script, "ok");
    r.p.config(|c| c["routing"]["planning"]["max_concurrent_turns"] = json!(2));
    r
}

#[test]
fn a_phase_with_room_for_two_turns_runs_both_agents_at_once() {
    let r = parallel_planning();
    let (code, out, err) = run(&r.p.root, &["--auto-approve", "--auto-checkpoint"]);
    assert_eq!(code, 0, "{out}{err}");
    // Both assigned, then both dispatched, before either is accepted.
    let first_accept = out.find("Turn accepted: ").unwrap();
    let head = &out[..first_accept];
    assert!(head.contains(" → pm\nTurn assigned: turn_"), "{out}");
    assert!(head.contains(" → eng_director\n"), "{out}");
    assert_eq!(
        head.matches("  Dispatching to local CLI: ").count(),
        2,
        "{out}"
    );
    assert!(out.contains("  Status:  completed\n"), "{out}");
    assert!(out.contains("  Errors:  none\n"), "{out}");
    let history = jsonl(&r.p.root, ".agentxchain/history.jsonl");
    let roles: Vec<&str> = history
        .iter()
        .map(|h| h["role"].as_str().unwrap())
        .collect();
    assert_eq!(&roles[..2], ["pm", "eng_director"], "{out}");
    // The second knew of the first: their files were told apart at acceptance.
    assert_eq!(
        history[1]["concurrent_with"],
        json!([history[0]["turn_id"]])
    );
    assert_eq!(
        history[1]["files_changed"],
        json!([".planning/ENG_REVIEW.md"])
    );
    assert_eq!(r.p.state()["status"], "completed");
    // Both agents started before either finished.
    let events = jsonl(&r.p.root, ".agentxchain/events.jsonl");
    let progress: Vec<&str> = events
        .iter()
        .filter(|e| e["event_type"] == "dispatch_progress")
        .map(|e| e["payload"]["milestone"].as_str().unwrap())
        .take(4)
        .collect();
    assert_eq!(progress, ["started", "started", "completed", "completed"]);
}

#[test]
fn a_conflict_between_parallel_turns_stops_the_run_for_a_person() {
    // Both planning agents write the same files: the second's acceptance conflicts, and the
    // pm's phase request waits behind it.
    let r = project("ok");
    r.p.config(|c| c["routing"]["planning"]["max_concurrent_turns"] = json!(2));
    let (code, out, err) = run(&r.p.root, &["--auto-approve", "--auto-checkpoint"]);
    assert_eq!(code, 1, "{out}{err}");
    assert!(out.contains("  Status:  blocked\n  Turns:   1\n"), "{out}");
    let s = r.p.state();
    let (id, turn) = s["active_turns"]
        .as_object()
        .unwrap()
        .iter()
        .next()
        .unwrap();
    assert_eq!(turn["status"], "conflicted");
    assert_eq!(s["queued_phase_transition"]["to"], "implementation");
    assert!(
        out.contains(&format!(
            "    Turn {id} is conflicted: resolve it (agentxchain accept-turn / reject-turn / reissue-turn), then run again\n"
        )),
        "{out}"
    );
    assert!(
        out.contains(&format!(
            "acceptTurn(eng_director): Acceptance conflict detected for turn {id}"
        )),
        "{out}"
    );
    // Run again: nothing new is started while the request waits for a person.
    let (code, out, _) = run(&r.p.root, &["--auto-approve"]);
    assert_eq!(code, 1, "{out}");
    assert!(!out.contains("Turn assigned"), "{out}");
    assert_eq!(jsonl(&r.p.root, ".agentxchain/history.jsonl").len(), 1);
}

#[test]
fn ctrl_c_lets_the_parallel_round_finish_and_starts_nothing_more() {
    let r = parallel_planning();
    r.p.config(|c| c["routing"]["implementation"]["max_concurrent_turns"] = json!(2));
    let child = Command::new(BIN)
        .args(["run", "--auto-approve"])
        .current_dir(&r.p.root)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // Both planning agents have started: interrupt the loop (not the agents).
    let started = |role: &str| {
        std::fs::read_dir(r._agent.path()).unwrap().any(|e| {
            e.unwrap()
                .file_name()
                .to_string_lossy()
                .ends_with(&format!(".{role}.started"))
        })
    };
    let t = std::time::Instant::now();
    while !(started("pm") && started("eng_director")) {
        assert!(t.elapsed().as_secs() < 20, "the agents never started");
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    let killed = Command::new("kill")
        .args(["-INT", &child.id().to_string()])
        .status()
        .unwrap();
    assert!(killed.success());
    let out = child.wait_with_output().unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(0), "{text}");
    assert!(
        text.contains("SIGINT received — finishing current turn, then stopping."),
        "{text}"
    );
    assert!(
        text.contains("Run stopped by caller\n\n─── Run Summary ───\n  Status:  caller_stopped\n  Turns:   2\n"),
        "{text}"
    );
    assert_eq!(text.matches("Turn assigned: ").count(), 2, "{text}");
    let s = r.p.state();
    assert_eq!(s["phase"], "implementation");
    assert!(s["active_turns"].as_object().unwrap().is_empty());
}

#[test]
fn a_tree_git_cannot_read_is_said_to_be_unknown_not_clean() {
    let r = project("ok");
    let (code, out, _) = run(
        &r.p.root,
        &["--auto-approve", "--auto-checkpoint", "--max-turns", "1"],
    );
    assert_eq!(code, 0, "{out}");
    // The checkpoint says the tree was clean at HEAD.
    let head = String::from_utf8(
        Command::new("git")
            .args(["rev-parse", "HEAD"])
            .current_dir(&r.p.root)
            .output()
            .unwrap()
            .stdout,
    )
    .unwrap();
    let session_path = r.p.root.join(".agentxchain/session.json");
    let mut session: Value =
        serde_json::from_str(&std::fs::read_to_string(&session_path).unwrap()).unwrap();
    session["baseline_ref"] =
        json!({"git_head": head.trim(), "git_branch": "main", "workspace_dirty": false});
    std::fs::write(&session_path, session.to_string()).unwrap();
    let continuity = || -> Value {
        let out = r.p.ok(&["status", "--json"]);
        serde_json::from_str::<Value>(&out).unwrap()["continuity"].clone()
    };
    let c = continuity();
    assert_eq!(c["drift_detected"], false, "{c}");
    assert_eq!(c["drift_warnings"], json!([]), "{c}");
    // An orphan branch (no commit yet): git reads it fine; the move is said, not a failure.
    support::project::git(&r.p.root, &["checkout", "-q", "--orphan", "ghost"]);
    let c = continuity();
    assert_eq!(c["drift_detected"], true, "{c}");
    let w = c["drift_warnings"].to_string();
    assert!(
        w.contains(&format!(
            "Git HEAD has moved since checkpoint: {} -> (no commit)",
            &head[..8]
        )),
        "{c}"
    );
    assert!(
        w.contains("Branch changed since checkpoint: main -> ghost"),
        "{c}"
    );
    assert!(!w.contains("could not be read"), "{c}");
    support::project::git(&r.p.root, &["checkout", "-q", "main"]);
    let c = continuity();
    assert_eq!(c["drift_detected"], false, "{c}");
    // git cannot read the repository now (a corrupt index): unknown, said so.
    std::fs::write(r.p.root.join(".git/index"), "garbage").unwrap();
    let c = continuity();
    assert_eq!(c["drift_detected"], Value::Null, "{c}");
    assert_eq!(
        c["drift_warnings"],
        json!([
            "Workspace state could not be read (git status failed or timed out): drift since checkpoint is unknown"
        ]),
        "{c}"
    );
}

#[test]
fn a_parallel_round_that_can_assign_nothing_says_why() {
    // Without checkpoints the accepted planning files stay uncommitted: the next code-writing
    // turn is refused, and the stop says so (not a missing entry role).
    let r = parallel_planning();
    r.p.config(|c| c["routing"]["implementation"]["max_concurrent_turns"] = json!(2));
    let (code, out, _) = run(&r.p.root, &["--auto-approve", "--max-turns", "6"]);
    assert_eq!(code, 1, "{out}");
    assert!(out.contains("  Status:  blocked\n"), "{out}");
    assert!(out.contains("    assignTurn("), "{out}");
    assert!(out.contains("uncommitted"), "{out}");
    assert!(!out.contains("No entry role"), "{out}");
}

#[test]
fn a_refused_automatic_rejection_blocks_the_run_with_the_refusal() {
    // The agent changes the config and fails: a retry would take its config as the one the
    // retry is judged by, so the rejection is refused, and the run blocks on that refusal.
    let script = "#!/bin/sh\ncat > /dev/null\nsed -i 's/\"max_turn_retries\": 2/\"max_turn_retries\": 9/' agentxchain.json\necho cannot work\nexit 3\n";
    let r = project_with(script, "x");
    let before = std::fs::read_to_string(r.p.root.join("agentxchain.json")).unwrap();
    assert!(before.contains("\"max_turn_retries\": 2"), "{before}");
    let (code, out, err) = run(&r.p.root, &[]);
    assert_eq!(code, 1, "{out}");
    let s = r.p.state();
    assert_eq!(s["status"], "blocked", "{out}");
    assert_eq!(s["blocked_on"], "dispatch:rejection_refused");
    let detail = s["blocked_reason"]["recovery"]["detail"].as_str().unwrap();
    assert!(
        detail.contains("agentxchain.json changed while turn"),
        "{detail}"
    );
    let turn = s["blocked_reason"]["turn_id"].as_str().unwrap();
    assert!(
        s["active_turns"].get(turn).is_some(),
        "the turn is retained"
    );
    assert!(err.contains("HUMAN ESCALATION RAISED"), "{err}");
    let status = r.p.ok(&["status"]);
    assert!(
        status.contains("agentxchain.json changed while turn"),
        "{status}"
    );
}
