//! A governed run driven by this binary alone, as a person and an agent would: every
//! instruction the MCP server hands out is run; and the attacks on the commands that change a
//! run — concurrent acceptance, a reference process holding the lock, hostile declared paths,
//! reserved files, an agent approving its own gate.

mod support;

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use mcp_testkit::{ServerProcess, tool_text};
use serde_json::{Value, json};
use support::*;

struct Project {
    _dir: tempfile::TempDir,
    root: PathBuf,
}

fn git(root: &Path, args: &[&str]) {
    let out = Command::new("git")
        .args(args)
        .current_dir(root)
        .env("GIT_AUTHOR_NAME", "t")
        .env("GIT_AUTHOR_EMAIL", "t@example.invalid")
        .env("GIT_COMMITTER_NAME", "t")
        .env("GIT_COMMITTER_EMAIL", "t@example.invalid")
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "git {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
}

impl Project {
    /// `init --governed -y` in a fresh repository, committed.
    fn new() -> Project {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().join("demo");
        std::fs::create_dir_all(&root).unwrap();
        git(&root, &["init", "-q", "-b", "main"]);
        let p = Project { _dir: dir, root };
        p.ok(&["init", "--governed", "-y"]);
        git(&p.root, &["add", "-A"]);
        git(
            &p.root,
            &["commit", "-q", "-m", "initial governed scaffold"],
        );
        p
    }

    fn run(&self, args: &[&str]) -> Output {
        Command::new(BIN)
            .args(args)
            .current_dir(&self.root)
            .env("GIT_AUTHOR_NAME", "t")
            .env("GIT_AUTHOR_EMAIL", "t@example.invalid")
            .env("GIT_COMMITTER_NAME", "t")
            .env("GIT_COMMITTER_EMAIL", "t@example.invalid")
            .output()
            .unwrap()
    }

    fn ok(&self, args: &[&str]) -> String {
        let out = self.run(args);
        let text = String::from_utf8_lossy(&out.stdout).into_owned();
        assert!(
            out.status.success(),
            "{args:?}: {text}{}",
            String::from_utf8_lossy(&out.stderr)
        );
        text
    }

    fn fails(&self, args: &[&str]) -> String {
        let out = self.run(args);
        assert_eq!(out.status.code(), Some(1), "{args:?}");
        String::from_utf8_lossy(&out.stdout).into_owned()
    }

    fn state(&self) -> Value {
        serde_json::from_str(
            &std::fs::read_to_string(self.root.join(".agentxchain/state.json")).unwrap(),
        )
        .unwrap()
    }

    fn write(&self, rel: &str, text: &str) {
        let p = self.root.join(rel);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(p, text).unwrap();
    }

    fn config(&self, edit: impl FnOnce(&mut Value)) {
        let path = self.root.join("agentxchain.json");
        let mut c: Value = serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
        edit(&mut c);
        std::fs::write(&path, serde_json::to_string_pretty(&c).unwrap()).unwrap();
        git(&self.root, &["commit", "-qam", "config"]);
    }

    fn active_turn(&self) -> (String, String) {
        let s = self.state();
        let (id, t) = s["active_turns"]
            .as_object()
            .unwrap()
            .iter()
            .next()
            .unwrap();
        (id.clone(), t["assigned_role"].as_str().unwrap().to_owned())
    }

    /// The active turn's agent writes `files` and a completed result declaring them.
    fn agent_turn(&self, files: &[(&str, &str)], request: Value) -> String {
        let (turn, role) = self.active_turn();
        let s = self.state();
        for (rel, text) in files {
            self.write(rel, text);
        }
        let review = role != "dev";
        let mut result = json!({
            "schema_version": "1.0", "run_id": s["run_id"], "turn_id": turn, "role": role,
            "runtime_id": s["active_turns"][&turn]["runtime_id"], "status": "completed",
            "summary": format!("{role} turn done"),
            "decisions": [{"id": "DEC-001", "category": "process", "statement": format!("{role} decided"), "rationale": "test"}],
            "objections": [{"id": "OBJ-001", "severity": "low", "against_turn_id": turn, "statement": "nit", "status": "raised"}],
            "files_changed": files.iter().map(|(f, _)| f).collect::<Vec<_>>(),
            "artifacts_created": [],
            "verification": {"status": "pass", "commands": ["true"], "evidence_summary": "ran true", "machine_evidence": [{"command": "true", "exit_code": 0}]},
            "artifact": {"type": if review { "review" } else { "workspace" }, "ref": null},
            "proposed_next_role": if review { "human" } else { "qa" },
            "phase_transition_request": null, "run_completion_request": null, "needs_human_reason": null,
            "cost": {"input_tokens": 10, "output_tokens": 10, "usd": 0.01},
        });
        for (k, v) in request.as_object().unwrap() {
            result[k] = v.clone();
        }
        self.write(
            &format!(".agentxchain/staging/{turn}/turn-result.json"),
            &serde_json::to_string_pretty(&result).unwrap(),
        );
        turn
    }
}

const SIGNOFF: &str = "# PM Signoff\n\nApproved: YES\n\n## Discovery Checklist\n- [x] Target user defined\n- [x] Core pain point defined\n- [x] Core workflow defined\n- [x] MVP scope defined\n- [x] Out-of-scope list defined\n- [x] Success metric defined\n";
const SPEC: &str = "# System Spec\n\n## Purpose\n\nGreet.\n\n## Interface\n\n`hello.sh`\n\n## Behavior\n\nPrints hello.\n\n## Error Cases\n\nNone.\n\n## Acceptance Tests\n\n- [x] prints hello\n\n## Open Questions\n\n- None.\n";
const NOTES: &str =
    "# Implementation Notes\n\n## Changes\n\nAdded hello.sh.\n\n## Verification\n\nRan it.\n";
const MATRIX: &str = "# Acceptance Matrix\n\n| Req # | Requirement | Acceptance criteria | Test status | Last tested | Status |\n|-------|-------------|---------------------|-------------|-------------|--------|\n| 1 | greet | prints hello | pass | today | PASS |\n";
const VERDICT: &str = "# Ship Verdict\n\n## Verdict: YES\n\n## QA Summary\n\nGood.\n\n## Open Blocking Issues\n\nNone.\n\n## Conditions\n\nNone.\n";
const RELEASE: &str =
    "# Release Notes\n\n## User Impact\n\nA greeting.\n\n## Verification Summary\n\nRan it.\n";

fn mcp_call(s: &mut ServerProcess, id: i64, name: &str, args: Value) -> Value {
    let r = s.request(id, "tools/call", json!({"name": name, "arguments": args}));
    serde_json::from_str(tool_text(&r["result"])).unwrap()
}

/// The command inside an MCP instruction (`… Run "<command>" to …`).
fn quoted_command(instruction: &str) -> Vec<String> {
    let start = instruction.find("Run \"").expect("a Run \"…\" instruction") + 5;
    let end = start + instruction[start..].find('"').unwrap();
    instruction[start..end]
        .split(' ')
        .map(str::to_owned)
        .collect()
}

/// Runs the command an MCP instruction names, as the person it is addressed to.
fn run_instruction(p: &Project, instruction: &str) -> String {
    let argv = quoted_command(instruction);
    assert_eq!(argv[0], "agentxchain", "{instruction}");
    let args: Vec<&str> = argv[1..].iter().map(String::as_str).collect();
    p.ok(&args)
}

#[test]
fn a_whole_governed_run_with_human_gates_and_every_instruction_run() {
    let p = Project::new();
    p.config(|c| {
        c["approval_policy"]["phase_transitions"]["rules"] = json!([]);
        c["approval_policy"]["run_completion"] = json!({"action": "require_human"});
    });
    let out = p.ok(&["resume"]);
    assert!(out.contains("Initialized governed run: run_"), "{out}");
    let turn = p.agent_turn(
        &[
            (".planning/PM_SIGNOFF.md", SIGNOFF),
            (".planning/SYSTEM_SPEC.md", SPEC),
        ],
        json!({"phase_transition_request": "implementation"}),
    );
    p.ok(&["validate", "--mode", "turn"]);
    let out = p.ok(&["accept-turn"]);
    assert!(
        out.contains("Action:   agentxchain approve-transition"),
        "{out}"
    );
    let s = p.state();
    assert_eq!(s["status"], "paused");
    assert_eq!(
        s["pending_phase_transition"]["requested_by_turn"],
        json!(turn)
    );

    // The agent asks the MCP server; it inspects, never approves, and names the command.
    let mut server = serve(&p.root);
    let before = std::fs::read(p.root.join(".agentxchain/state.json")).unwrap();
    let r = mcp_call(
        &mut server,
        1,
        "agentxchain_approve_gate",
        json!({"gate_id": "planning_signoff"}),
    );
    assert_eq!(r["ok"], true);
    assert_eq!(
        std::fs::read(p.root.join(".agentxchain/state.json")).unwrap(),
        before
    );
    let out = run_instruction(&p, r["instruction"].as_str().unwrap());
    assert!(
        out.contains("✓ Phase advanced: planning → implementation"),
        "{out}"
    );
    assert!(
        out.contains("Next turn blocked until the workspace is checkpointed."),
        "{out}"
    );
    assert_eq!(p.state()["phase"], "implementation");
    assert_eq!(p.state()["status"], "active");

    // A code-writing turn waits for the checkpoint.
    let out = p.fails(&["resume"]);
    assert!(
        out.contains(&format!(
            "Failed to assign turn: Accepted turn {turn} is not checkpointed yet."
        )),
        "{out}"
    );
    let out = p.ok(&["checkpoint-turn"]);
    assert!(
        out.starts_with(&format!("Checkpointed {turn} at ")),
        "{out}"
    );
    p.ok(&["resume"]);
    p.agent_turn(
        &[
            (".planning/IMPLEMENTATION_NOTES.md", NOTES),
            ("hello.sh", "echo hello\n"),
        ],
        json!({"phase_transition_request": "qa"}),
    );
    p.ok(&["accept-turn"]);
    // implementation_complete needs no person: the run is in qa.
    assert_eq!(p.state()["phase"], "qa");
    p.ok(&["checkpoint-turn"]);
    p.ok(&["resume"]);
    p.agent_turn(
        &[
            (".planning/acceptance-matrix.md", MATRIX),
            (".planning/ship-verdict.md", VERDICT),
            (".planning/RELEASE_NOTES.md", RELEASE),
        ],
        json!({"run_completion_request": true}),
    );
    let out = p.ok(&["accept-turn"]);
    assert!(
        out.contains("Action:   agentxchain approve-completion"),
        "{out}"
    );
    assert_eq!(p.state()["status"], "paused");
    let r = mcp_call(
        &mut server,
        2,
        "agentxchain_approve_gate",
        json!({"gate_id": "qa_ship_verdict"}),
    );
    let out = run_instruction(&p, r["instruction"].as_str().unwrap());
    assert!(out.contains("✓ Run completed"), "{out}");
    let s = p.state();
    assert_eq!(s["status"], "completed");
    assert_eq!(
        s["phase_gate_status"],
        json!({"planning_signoff": "passed", "implementation_complete": "passed", "qa_ship_verdict": "passed"})
    );
    let runs = std::fs::read_to_string(p.root.join(".agentxchain/run-history.jsonl")).unwrap();
    let run: Value = serde_json::from_str(runs.lines().next().unwrap()).unwrap();
    assert_eq!(run["status"], "completed");
    assert_eq!(run["total_turns"], 3);
    // The MCP status reads the finished run.
    let r = mcp_call(&mut server, 3, "agentxchain_status", json!({}));
    assert_eq!(r["status"], "completed");
    // Nothing is left to approve.
    let out = p.fails(&["approve-completion"]);
    assert!(
        out.starts_with("No pending run completion to approve.\n  This run is already completed."),
        "{out}"
    );
}

#[test]
fn an_escalation_blocks_the_run_and_the_instruction_unblocks_it() {
    let p = Project::new();
    p.ok(&["resume"]);
    let (turn, _) = p.active_turn();
    let out = p.run(&["escalate", "--reason", "Need the GitHub token rotated"]);
    assert!(out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("HUMAN ESCALATION RAISED: hesc_"), "{err}");
    let s = p.state();
    assert_eq!(s["status"], "blocked");
    assert_eq!(
        s["blocked_on"],
        "escalation:operator:need-the-github-token-rotated"
    );
    // The CLI and MCP status name the escalation and the command that resolves it.
    let status = p.ok(&["status"]);
    let line = status
        .lines()
        .find(|l| l.starts_with("Resolve with:"))
        .expect(&status);
    let mut server = serve(&p.root);
    let r = mcp_call(&mut server, 1, "agentxchain_status", json!({}));
    let id = r["escalation"]["escalation_id"]
        .as_str()
        .unwrap()
        .to_owned();
    assert_eq!(r["escalation"]["type"], "needs_credential");
    assert_eq!(
        r["escalation"]["resolution_command"],
        json!(format!("agentxchain unblock {id}"))
    );
    assert_eq!(line, format!("Resolve with:  agentxchain unblock {id}"));
    // A wrong id is refused; the approve_gate instruction is the command that works.
    let out = p.fails(&["unblock", "hesc_0000000000000000"]);
    assert_eq!(
        out,
        "No open human escalation found for hesc_0000000000000000.\n"
    );
    let r = mcp_call(
        &mut server,
        2,
        "agentxchain_approve_gate",
        json!({"gate_id": id}),
    );
    let out = run_instruction(&p, r["instruction"].as_str().unwrap());
    assert!(
        out.contains(&format!("Re-dispatching blocked turn: {turn}")),
        "{out}"
    );
    let s = p.state();
    assert_eq!(s["status"], "active");
    assert!(s["blocked_on"].is_null());
    assert_eq!(s["active_turns"][&turn]["status"], "dispatched");
    let out = p.fails(&["unblock", &id]);
    assert_eq!(
        out,
        "Cannot unblock run: status is \"active\", expected \"blocked\".\n"
    );
    let r = mcp_call(&mut server, 3, "agentxchain_status", json!({}));
    assert!(r.get("escalation").is_none(), "{r}");
    let tasks = std::fs::read_to_string(p.root.join("HUMAN_TASKS.md")).unwrap();
    assert!(tasks.contains(&format!("### {id} — resolved")), "{tasks}");
}

#[test]
fn two_acceptances_at_once_record_the_turn_once() {
    let p = Project::new();
    p.ok(&["resume"]);
    let turn = p.agent_turn(&[(".planning/PM_SIGNOFF.md", SIGNOFF)], json!({}));
    let spawn = || {
        Command::new(BIN)
            .arg("accept-turn")
            .current_dir(&p.root)
            .output()
    };
    let (a, b) = std::thread::scope(|sc| {
        let a = sc.spawn(spawn);
        let b = sc.spawn(spawn);
        (a.join().unwrap().unwrap(), b.join().unwrap().unwrap())
    });
    let codes = [a.status.code(), b.status.code()];
    assert!(
        codes.contains(&Some(0)) && codes.contains(&Some(1)),
        "{codes:?}"
    );
    let loser = if a.status.success() { &b } else { &a };
    assert_eq!(
        String::from_utf8_lossy(&loser.stdout),
        "No active turn to accept.\n"
    );
    let history = std::fs::read_to_string(p.root.join(".agentxchain/history.jsonl")).unwrap();
    let lines: Vec<Value> = history
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(lines.len(), 1);
    assert_eq!(lines[0]["turn_id"], json!(turn));
    let ledger =
        std::fs::read_to_string(p.root.join(".agentxchain/decision-ledger.jsonl")).unwrap();
    assert_eq!(ledger.lines().count(), 1);
    // No lock is left behind.
    assert!(!p.root.join(".agentxchain/locks/accept-turn.lock").exists());
}

#[test]
fn a_reference_process_holding_the_lock_refuses_every_write() {
    let p = Project::new();
    let mut holder = Command::new("sleep").arg("30").spawn().unwrap();
    p.write(
        ".agentxchain/locks/accept-turn.lock",
        &json!({"owner_pid": holder.id(), "acquired_at": axc_core::util::iso_timestamp(std::time::SystemTime::now())}).to_string(),
    );
    let before = std::fs::read(p.root.join(".agentxchain/state.json")).unwrap();
    for args in [
        &["resume"][..],
        &["escalate", "--reason", "x"],
        &["approve-transition"],
    ] {
        let out = p.fails(args);
        assert_eq!(
            out,
            format!("Acceptance lock held by PID {}\n", holder.id()),
            "{args:?}"
        );
    }
    assert_eq!(
        std::fs::read(p.root.join(".agentxchain/state.json")).unwrap(),
        before
    );
    holder.kill().unwrap();
    holder.wait().unwrap();
    // Its owner gone, the lock is stale and taken.
    p.ok(&["resume"]);
}

#[test]
fn a_checkpoint_commits_only_paths_inside_the_repository() {
    let p = Project::new();
    p.ok(&["resume"]);
    p.agent_turn(&[(".planning/PM_SIGNOFF.md", SIGNOFF)], json!({}));
    p.ok(&["accept-turn"]);
    let head = |p: &Project| {
        String::from_utf8(
            Command::new("git")
                .args(["rev-parse", "HEAD"])
                .current_dir(&p.root)
                .output()
                .unwrap()
                .stdout,
        )
        .unwrap()
    };
    let before = head(&p);
    // A history line edited to declare paths outside the repository, or git options.
    let path = p.root.join(".agentxchain/history.jsonl");
    let mut entry: Value =
        serde_json::from_str(std::fs::read_to_string(&path).unwrap().trim()).unwrap();
    std::fs::write(p.root.parent().unwrap().join("outside.txt"), "x").unwrap();
    for bad in [
        "../outside.txt",
        "/etc/hostname",
        "--all",
        ":(top)*",
        "a/../../outside.txt",
    ] {
        entry["files_changed"] = json!([".planning/PM_SIGNOFF.md", bad]);
        std::fs::write(&path, serde_json::to_string(&entry).unwrap() + "\n").unwrap();
        let out = p.fails(&["checkpoint-turn"]);
        assert!(
            out.contains("not a path inside the repository; nothing was committed"),
            "{bad}: {out}"
        );
        assert_eq!(head(&p), before, "{bad}");
    }
    // The orchestrator's files are never committed, even when declared.
    entry["files_changed"] = json!([
        ".planning/PM_SIGNOFF.md",
        ".agentxchain/state.json",
        "TALK.md"
    ]);
    std::fs::write(&path, serde_json::to_string(&entry).unwrap() + "\n").unwrap();
    p.ok(&["checkpoint-turn"]);
    let files = String::from_utf8(
        Command::new("git")
            .args(["show", "--name-only", "--format=", "HEAD"])
            .current_dir(&p.root)
            .output()
            .unwrap()
            .stdout,
    )
    .unwrap();
    assert_eq!(files, ".planning/PM_SIGNOFF.md\n");
}

#[test]
fn a_result_that_claims_the_orchestrators_files_is_refused_and_the_turn_kept() {
    let p = Project::new();
    p.ok(&["resume"]);
    let turn = p.agent_turn(&[(".planning/PM_SIGNOFF.md", SIGNOFF)], json!({}));
    let path = p
        .root
        .join(format!(".agentxchain/staging/{turn}/turn-result.json"));
    let mut r: Value = serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
    r["files_changed"] = json!([".planning/PM_SIGNOFF.md", ".agentxchain/state.json"]);
    std::fs::write(&path, r.to_string()).unwrap();
    let out = p.fails(&["accept-turn"]);
    assert!(out.contains("Validation failed at stage artifact"), "{out}");
    assert!(out.contains(".agentxchain/state.json"), "{out}");
    let s = p.state();
    assert_eq!(s["active_turns"][&turn]["status"], "failed_acceptance");
    assert_eq!(
        std::fs::read_to_string(p.root.join(".agentxchain/history.jsonl")).unwrap(),
        ""
    );
}

#[test]
fn a_fixed_turn_result_is_accepted_after_a_rejection() {
    let p = Project::new();
    p.ok(&["resume"]);
    let turn = p.agent_turn(
        &[(".planning/PM_SIGNOFF.md", SIGNOFF)],
        json!({"artifact": {"type": "planning_review", "ref": null}}),
    );
    let out = p.fails(&["accept-turn"]);
    assert!(
        out.contains("artifact.type must be one of: workspace, patch, commit, review."),
        "{out}"
    );
    assert_eq!(
        p.state()["active_turns"][&turn]["status"],
        "failed_acceptance"
    );
    let out = p.ok(&["reject-turn", "--reason", "wrong type"]);
    assert!(out.contains("Attempt:      2"), "{out}");
    let rejected: Vec<_> = std::fs::read_dir(p.root.join(".agentxchain/dispatch/rejected"))
        .unwrap()
        .collect();
    assert_eq!(rejected.len(), 1);
    // The second rejection spends the retries (max_turn_retries 2): the run blocks.
    p.agent_turn(
        &[(".planning/PM_SIGNOFF.md", SIGNOFF)],
        json!({"artifact": {"type": "planning_review", "ref": null}}),
    );
    let out = p.ok(&["reject-turn"]);
    assert!(out.contains("Turn Rejected And Escalated"), "{out}");
    let s = p.state();
    assert_eq!(s["status"], "blocked");
    assert_eq!(s["blocked_on"], "escalation:retries-exhausted:pm");
    // Resume re-dispatches the retained turn; a valid result is then accepted.
    p.ok(&["resume"]);
    p.agent_turn(&[(".planning/PM_SIGNOFF.md", SIGNOFF)], json!({}));
    p.ok(&["accept-turn"]);
    assert!(p.state()["active_turns"].as_object().unwrap().is_empty());
}
