//! `agentxchain step`: one whole turn with a `local_cli` agent (a shell script run by the
//! binary) or a manual one (a result written while `step` waits) — and what a failing,
//! silent, hanging, missing or escaping agent does to the run.

mod support;

use std::io::Read;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use support::BIN;
use support::project::{Project, git};

/// A shell agent: saves its stdin, argv and environment, says something, and stages a result
/// for its turn (`$1` = `ok`, `fail`, `silent`, `quiet-ok`, `hang`).
const AGENT: &str = r#"#!/bin/sh
mode="$1"
cat > "$AGENT_OUT/stdin.txt"
printf '%s\n' "$@" > "$AGENT_OUT/argv.txt"
printf '%s' "$AGENTXCHAIN_TURN_ID" > "$AGENT_OUT/turn.txt"
pwd > "$AGENT_OUT/cwd.txt"
run=$(sed -n 's/.*"run_id": "\(run_[0-9a-f]*\)".*/\1/p' .agentxchain/state.json | head -n 1)
t="$AGENTXCHAIN_TURN_ID"
case "$mode" in
  fail) echo "working on $t"; echo "it broke" >&2; exit 3 ;;
  silent) exit 0 ;;
  hang) echo "started"; sleep 600 & echo $! > "$AGENT_OUT/child.pid"; wait; exit 0 ;;
  quiet-ok) ;;
  *) echo "working on $t"; echo "a warning" >&2 ;;
esac
mkdir -p ".agentxchain/staging/$t"
cat > ".agentxchain/staging/$t/turn-result.json" <<EOF
{"schema_version":"1.0","run_id":"$run","turn_id":"$t","role":"pm","runtime_id":"local-pm","status":"completed","summary":"planned by the script","decisions":[{"id":"DEC-001","category":"scope","statement":"keep it small","rationale":"test"}],"objections":[{"id":"OBJ-001","severity":"low","statement":"nit","status":"raised"}],"files_changed":[],"verification":{"status":"skipped","commands":[],"evidence_summary":"none"},"artifact":{"type":"review","ref":null},"proposed_next_role":"pm","phase_transition_request":null,"run_completion_request":null}
EOF
"#;

struct Agent {
    p: Project,
    out: tempfile::TempDir,
}

/// A project whose pm is a `local_cli` agent (the script above) with `transport`.
fn agent(mode: &str, transport: &str) -> Agent {
    let p = Project::new();
    let out = tempfile::tempdir().unwrap();
    let script = out.path().join("agent.sh");
    std::fs::write(&script, AGENT).unwrap();
    let script = script.display().to_string();
    let mut command = vec![json!("sh"), json!(script), json!(mode)];
    if transport == "argv" {
        command.push(json!("{prompt}"));
    }
    p.config(|c| {
        c["runtimes"]["local-pm"] =
            json!({"type": "local_cli", "command": command, "prompt_transport": transport});
        c["roles"]["pm"]["runtime"] = json!("local-pm");
        c["roles"]["pm"]["write_authority"] = json!("authoritative");
    });
    Agent { p, out }
}

impl Agent {
    fn step(&self, args: &[&str]) -> (i32, String, String) {
        let out = Command::new(BIN)
            .arg("step")
            .args(args)
            .current_dir(&self.p.root)
            .env("AGENT_OUT", self.out.path())
            .env("AXC", BIN)
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
    fn seen(&self, name: &str) -> String {
        std::fs::read_to_string(self.out.path().join(name)).unwrap_or_default()
    }
    /// The agent (outside the project, so the turn's baseline stays as it was) now behaves
    /// as `mode`.
    fn mode(&self, mode: &str) {
        let script = self.out.path().join("agent.sh");
        let text = std::fs::read_to_string(&script).unwrap();
        std::fs::write(
            &script,
            text.replace("mode=\"$1\"", &format!("mode={mode}")),
        )
        .unwrap();
    }
}

fn jsonl(root: &Path, rel: &str) -> Vec<Value> {
    std::fs::read_to_string(root.join(rel))
        .unwrap_or_default()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

fn event_types(root: &Path) -> Vec<String> {
    jsonl(root, ".agentxchain/events.jsonl")
        .iter()
        .map(|e| e["event_type"].as_str().unwrap().to_owned())
        .collect()
}

fn log_of(root: &Path, turn: &str) -> String {
    std::fs::read_to_string(root.join(format!(".agentxchain/dispatch/turns/{turn}/stdout.log")))
        .unwrap_or_default()
}

#[test]
fn a_local_cli_agent_gets_its_prompt_and_turn_and_its_result_is_accepted() {
    let a = agent("ok", "stdin");
    let (code, out, err) = a.step(&[]);
    assert_eq!(code, 0, "{out}{err}");
    for line in [
        "Initialized governed run: run_",
        "agentxchain step\n  Run:      run_",
        "  Gate:     planning_signoff (pending)\n  Files:    PM_SIGNOFF.md, ROADMAP.md, SYSTEM_SPEC.md\n  Needs:    human approval",
        "Dispatching to local CLI: sh ",
        "Transport: stdin\nLog: .agentxchain/dispatch/turns/turn_",
        "Press Ctrl+C to abort and leave the turn assigned.\n\nSubprocess completed. Staged result detected.\n",
        "  Turn Accepted\n  --------------------------------------------\n",
        "  Summary:  planned by the script\n  Proposed: pm\n\n  Next: agentxchain step --role pm\n",
    ] {
        assert!(out.contains(line), "{line:?} in {out}");
    }
    let turn = a.seen("turn.txt");
    assert!(turn.starts_with("turn_"), "AGENTXCHAIN_TURN_ID: {turn:?}");
    // The prompt on stdin: PROMPT.md, the separator, CONTEXT.md.
    let stdin = a.seen("stdin.txt");
    assert!(stdin.contains("\n---\n\n"), "{stdin}");
    assert!(stdin.contains(&turn), "the prompt names the turn");
    assert!(!a.seen("argv.txt").contains("---"), "no prompt in argv");
    let cwd = a.seen("cwd.txt");
    assert_eq!(
        Path::new(cwd.trim()).canonicalize().unwrap(),
        a.p.root.canonicalize().unwrap()
    );
    // Accepted with its timing, as the reference records a started turn.
    let history = jsonl(&a.p.root, ".agentxchain/history.jsonl");
    assert_eq!(history.len(), 1);
    let h = &history[0];
    assert_eq!(h["turn_id"], turn.as_str());
    assert!(
        h["started_at"].is_string() && h["duration_ms"].is_u64(),
        "{h}"
    );
    let keys: Vec<&str> = h.as_object().unwrap().keys().map(String::as_str).collect();
    let at = |k: &str| keys.iter().position(|x| *x == k).unwrap();
    assert!(at("cost") < at("started_at") && at("started_at") < at("accepted_at"));
    assert!(at("accepted_at") < at("duration_ms"));
    let events = jsonl(&a.p.root, ".agentxchain/events.jsonl");
    let accepted = events
        .iter()
        .find(|e| e["event_type"] == "turn_accepted")
        .unwrap();
    assert_eq!(accepted["payload"]["started_at"], h["started_at"]);
    assert_eq!(
        event_types(&a.p.root),
        ["run_started", "turn_dispatched", "turn_accepted"]
    );
    let state = a.p.state();
    assert_eq!(state["status"], "active");
    assert!(state["active_turns"].as_object().unwrap().is_empty());
}

#[test]
fn the_argv_transport_puts_the_prompt_in_place_of_its_placeholder() {
    let a = agent("ok", "argv");
    let (code, out, _) = a.step(&[]);
    assert_eq!(code, 0, "{out}");
    assert!(out.contains("Transport: argv"), "{out}");
    let argv = a.seen("argv.txt");
    assert!(argv.starts_with("ok\n"), "{argv}");
    assert!(
        argv.contains("\n---\n\n"),
        "the prompt is the last argument"
    );
    assert!(!argv.contains("{prompt}"));
    assert_eq!(a.seen("stdin.txt"), "", "nothing on stdin");
}

#[test]
fn an_agent_that_fails_blocks_the_run_until_a_person_resolves_it() {
    let a = agent("fail", "stdin");
    let (code, out, err) = a.step(&[]);
    assert_eq!(code, 1, "{out}");
    let turn = a.seen("turn.txt");
    let staged = format!(".agentxchain/staging/{turn}/turn-result.json");
    assert!(
        out.contains(&format!(
            "\nSubprocess failed: Subprocess exited (code 3) without writing a staged turn result to {staged}.\nExit code: 3\nThe turn remains assigned. You can:\n  - Fix and retry: agentxchain step --resume\n  - Reject: agentxchain reject-turn --reason \"subprocess failed\"\n"
        )),
        "{out}"
    );
    assert!(err.contains("HUMAN ESCALATION RAISED: hesc_"), "{err}");
    let state = a.p.state();
    assert_eq!(state["status"], "blocked");
    assert_eq!(state["blocked_on"], "dispatch:exit-3");
    let r = &state["blocked_reason"];
    assert_eq!(r["category"], "dispatch_error");
    assert_eq!(
        r["recovery"]["recovery_action"],
        "Resolve the dispatch issue, then run agentxchain step --resume"
    );
    assert_eq!(r["turn_id"], turn.as_str());
    let t = state["active_turns"][&turn].clone();
    assert_eq!(t["status"], "running");
    assert!(t["worker_pid"].is_u64() && t["first_output_stream"] == "stdout");
    // The log: what the agent said, stderr marked, and the exit.
    let log = log_of(&a.p.root, &turn);
    assert!(log.contains(&format!("working on {turn}\n")), "{log}");
    assert!(log.contains("[stderr] it broke\n"), "{log}");
    assert!(log.contains("[adapter:diag] process_exit {"), "{log}");
    assert_eq!(
        event_types(&a.p.root),
        ["run_started", "turn_dispatched", "human_escalation_raised"]
    );
    let esc = jsonl(&a.p.root, ".agentxchain/human-escalations.jsonl");
    assert_eq!(esc[0]["blocked_on"], "dispatch:exit-3");
    // Without --resume the retained turn is not touched.
    let (code, out, _) = a.step(&[]);
    assert_eq!(code, 1);
    assert!(
        out.starts_with("This run is blocked on a retained turn.\n  Reason: dispatch_error\n  Action: Resolve the dispatch issue, then run agentxchain step --resume\n"),
        "{out}"
    );
    // Fixed, the same turn is dispatched again and accepted; the escalation is resolved.
    a.mode("ok");
    let (code, out, _) = a.step(&["--resume"]);
    assert_eq!(code, 0, "{out}");
    // Its earlier process is gone: said, then dispatched again.
    assert!(
        out.starts_with(&format!("Detected crashed worker (PID {}). Re-dispatching turn {turn}...\nRe-dispatching blocked turn: {turn}\n", t["worker_pid"])),
        "{out}"
    );
    assert!(out.contains("  Turn Accepted"), "{out}");
    let esc = jsonl(&a.p.root, ".agentxchain/human-escalations.jsonl");
    assert_eq!(esc.last().unwrap()["kind"], "resolved");
    assert_eq!(esc.last().unwrap()["resolved_via"], "step --resume");
    assert_eq!(a.p.state()["status"], "active");
}

#[test]
fn an_agent_that_says_nothing_and_stages_nothing_failed_to_start() {
    let a = agent("silent", "stdin");
    let (code, out, _) = a.step(&[]);
    assert_eq!(code, 1, "{out}");
    let turn = a.seen("turn.txt");
    assert!(
        out.contains(&format!("\nTurn startup failed: Subprocess exited (code 0) before producing output or staging a turn result.\nThe turn was retained as failed_start. You can:\n  - Reissue immediately: agentxchain reissue-turn --turn {turn} --reason ghost\n")),
        "{out}"
    );
    let state = a.p.state();
    assert_eq!(state["blocked_on"], format!("turn:failed_start:{turn}"));
    assert_eq!(state["blocked_reason"]["category"], "ghost_turn");
    let t = &state["active_turns"][&turn];
    assert_eq!(t["status"], "failed_start");
    // It attached (a pid) but never wrote: a failed attach.
    assert_eq!(t["failed_start_reason"], "stdout_attach_failed");
    assert_eq!(t["failed_start_previous_status"], "starting");
    assert_eq!(
        event_types(&a.p.root),
        [
            "run_started",
            "turn_dispatched",
            "turn_start_failed",
            "stdout_attach_failed",
            "run_blocked"
        ]
    );
}

#[test]
fn an_agent_that_is_not_there_is_a_failed_spawn() {
    let a = agent("ok", "stdin");
    a.p.config(|c| c["runtimes"]["local-pm"]["command"][0] = json!("no-such-agent-cli-x"));
    let (code, out, _) = a.step(&[]);
    assert_eq!(code, 1, "{out}");
    assert!(
        out.contains("Turn startup failed: Subprocess error: spawn no-such-agent-cli-x ENOENT\n"),
        "{out}"
    );
    let state = a.p.state();
    let t = state["active_turns"]
        .as_object()
        .unwrap()
        .values()
        .next()
        .unwrap();
    assert_eq!(t["failed_start_reason"], "runtime_spawn_failed");
    assert_eq!(t["failed_start_running_ms"], 0);
    assert!(
        event_types(&a.p.root).contains(&"runtime_spawn_failed".to_owned()),
        "{:?}",
        event_types(&a.p.root)
    );
}

#[test]
fn a_result_staged_without_a_word_is_still_the_result() {
    let a = agent("quiet-ok", "stdin");
    let (code, out, _) = a.step(&[]);
    assert_eq!(code, 0, "{out}");
    let h = &jsonl(&a.p.root, ".agentxchain/history.jsonl")[0];
    assert_eq!(h["summary"], "planned by the script");
}

fn alive(pid: i32) -> bool {
    // SAFETY: signal 0 only asks whether the process exists.
    unsafe { libc::kill(pid, 0) == 0 }
}

#[test]
fn the_deadline_ends_the_agent_and_whatever_it_started() {
    let a = agent("hang", "stdin");
    // Assign the turn, then bring its deadline to two seconds from now.
    a.p.ok(&["resume"]);
    let mut state = a.p.state();
    let turn = a.p.active_turn().0;
    let soon = std::time::SystemTime::now() + Duration::from_secs(2);
    let ms = soon
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_millis() as i64;
    state["active_turns"][&turn]["deadline_at"] = json!(iso(ms));
    a.p.write(
        ".agentxchain/state.json",
        &serde_json::to_string_pretty(&state).unwrap(),
    );
    let started = Instant::now();
    let (code, out, _) = a.step(&["--resume"]);
    let took = started.elapsed();
    assert_eq!(code, 1, "{out}");
    assert!(took < Duration::from_secs(12), "SIGTERM ended it: {took:?}");
    assert!(
        out.starts_with(&format!("Resuming active turn: {turn}\n")),
        "{out}"
    );
    assert!(
        out.contains("\nTurn timed out. Subprocess was terminated.\nThe turn remains assigned. You can:\n  - Re-dispatch: agentxchain step --resume\n"),
        "{out}"
    );
    let state = a.p.state();
    assert_eq!(state["blocked_on"], "dispatch:timeout");
    assert_eq!(
        state["blocked_reason"]["recovery"]["detail"],
        "Subprocess timed out before staging a turn result."
    );
    // The background process the agent started is gone too (its process group was ended).
    let child: i32 = a.seen("child.pid").trim().parse().unwrap();
    let gone = (0..50).any(|_| {
        std::thread::sleep(Duration::from_millis(50));
        !alive(child)
    });
    assert!(gone, "the agent's child {child} outlived the turn");
    let log = log_of(&a.p.root, &turn);
    assert!(
        log.contains("[adapter] Turn timed out after 2s. Sending SIGTERM.\n"),
        "{log}"
    );
    // Re-dispatched twice (resume, step --resume).
    let types = event_types(&a.p.root);
    assert_eq!(
        types.iter().filter(|t| *t == "turn_dispatched").count(),
        2,
        "{types:?}"
    );
}

/// `Date#toISOString()` of `ms` since the epoch.
fn iso(ms: i64) -> String {
    let secs = ms.div_euclid(1000);
    let days = secs.div_euclid(86_400);
    let rem = secs.rem_euclid(86_400);
    // Civil from days (Howard Hinnant's algorithm).
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let y = yoe + era * 400;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    let y = if m <= 2 { y + 1 } else { y };
    format!(
        "{y:04}-{m:02}-{d:02}T{:02}:{:02}:{:02}.{:03}Z",
        rem / 3600,
        rem % 3600 / 60,
        rem % 60,
        ms.rem_euclid(1000)
    )
}

#[test]
fn a_runtime_directory_outside_the_project_is_refused_before_anything_runs() {
    let a = agent("ok", "stdin");
    a.p.config(|c| c["runtimes"]["local-pm"]["cwd"] = json!("../.."));
    let (code, out, err) = a.step(&[]);
    assert_ne!(code, 0, "{out}");
    assert!(
        format!("{out}{err}")
            .contains("runtimes.local-pm.cwd \"../..\" is not a directory inside the project"),
        "{out}{err}"
    );
    assert_eq!(a.seen("turn.txt"), "", "the agent never ran");
}

#[test]
fn a_staged_result_that_links_out_of_the_project_is_no_result() {
    let a = agent("silent", "stdin");
    a.p.ok(&["resume"]);
    let turn = a.p.active_turn().0;
    // A result outside the project, linked in where the staged result goes.
    let outside = a.out.path().join("forged.json");
    std::fs::write(&outside, "{\"status\":\"completed\"}").unwrap();
    let staging = a.p.root.join(format!(".agentxchain/staging/{turn}"));
    std::fs::create_dir_all(&staging).unwrap();
    std::os::unix::fs::symlink(&outside, staging.join("turn-result.json")).unwrap();
    let (code, out, _) = a.step(&["--resume"]);
    assert_eq!(code, 1, "{out}");
    assert!(out.contains("Turn startup failed"), "{out}");
    assert_eq!(
        std::fs::read_to_string(&outside).unwrap(),
        "{\"status\":\"completed\"}",
        "the outside file is untouched"
    );
}

#[test]
fn a_manual_turn_waits_for_its_result_then_is_accepted() {
    let p = Project::new();
    let mut child = Command::new(BIN)
        .args(["step", "--poll", "1"])
        .current_dir(&p.root)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // The bundle appears, then the person writes the result.
    let deadline = Instant::now() + Duration::from_secs(20);
    while p.state()["active_turns"]
        .as_object()
        .is_none_or(|m| m.is_empty())
    {
        assert!(Instant::now() < deadline, "no turn was assigned");
        std::thread::sleep(Duration::from_millis(50));
    }
    std::thread::sleep(Duration::from_millis(300));
    assert!(child.try_wait().unwrap().is_none(), "step is waiting");
    let turn = p.agent_turn(&[], json!({"proposed_next_role": "pm"}));
    let status = child.wait().unwrap();
    let mut out = String::new();
    child
        .stdout
        .take()
        .unwrap()
        .read_to_string(&mut out)
        .unwrap();
    assert!(status.success(), "{out}");
    for line in [
        "  |  MANUAL TURN REQUIRED                                    |\n",
        &format!("  |  Turn:    {turn}                         |\n"),
        "    4. The step command will detect the file and proceed\n",
        "  Gate files to update this phase:\n    - .planning/PM_SIGNOFF.md",
        "    \"phase_transition_request\": \"implementation\",\n",
        &format!("Polling: .agentxchain/staging/{turn}/turn-result.json (every 1s)\n"),
        "Staged result detected.\n",
        "  Turn Accepted\n",
    ] {
        assert!(out.contains(line), "{line:?} in {out}");
    }
    assert_eq!(jsonl(&p.root, ".agentxchain/history.jsonl").len(), 1);
}

#[test]
fn ctrl_c_leaves_a_manual_turn_assigned() {
    let p = Project::new();
    let mut child = Command::new(BIN)
        .args(["step"])
        .current_dir(&p.root)
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let deadline = Instant::now() + Duration::from_secs(20);
    while p.state()["active_turns"]
        .as_object()
        .is_none_or(|m| m.is_empty())
    {
        assert!(Instant::now() < deadline, "no turn was assigned");
        std::thread::sleep(Duration::from_millis(50));
    }
    std::thread::sleep(Duration::from_millis(300));
    // SAFETY: signalling our own child.
    unsafe { libc::kill(child.id() as i32, libc::SIGINT) };
    let status = child.wait().unwrap();
    let mut out = String::new();
    child
        .stdout
        .take()
        .unwrap()
        .read_to_string(&mut out)
        .unwrap();
    assert_eq!(status.code(), Some(0), "{out}");
    assert!(
        out.ends_with("\nAborted. Turn remains assigned.\nResume later with: agentxchain step --resume\nOr accept/reject manually: agentxchain accept-turn / reject-turn\n"),
        "{out}"
    );
    assert_eq!(p.state()["active_turns"].as_object().unwrap().len(), 1);
    // An active turn is not assigned twice; --resume picks it up.
    let out = p.fails(&["step"]);
    assert!(
        out.starts_with("A turn is already active:\n  Turn:  turn_"),
        "{out}"
    );
    assert!(out.contains("Use agentxchain step --resume to continue waiting for an active turn.\nOr run: agentxchain accept-turn / reject-turn\n"));
}

#[test]
fn a_result_that_fails_validation_is_kept_or_rejected_as_asked() {
    let a = agent("ok", "stdin");
    // A result whose status is not one the protocol knows.
    let script = a.out.path().join("agent.sh");
    let text = std::fs::read_to_string(&script).unwrap();
    std::fs::write(
        &script,
        text.replace(
            "\"status\":\"completed\",\"summary\"",
            "\"status\":\"bogus\",\"summary\"",
        ),
    )
    .unwrap();
    git(&a.p.root, &["status", "--short"]);
    let (code, out, _) = a.step(&[]);
    assert_eq!(code, 1, "{out}");
    assert!(out.contains("Validation failed:\n  Stage:  "), "{out}");
    assert!(
        out.contains("  - Auto-reject on failure: agentxchain step --auto-reject\n"),
        "{out}"
    );
    // Kept as it was: the turn is active, nothing was accepted or rejected.
    let state = a.p.state();
    let t = state["active_turns"]
        .as_object()
        .unwrap()
        .values()
        .next()
        .unwrap()
        .clone();
    assert_ne!(t["status"], "failed_acceptance");
    assert!(jsonl(&a.p.root, ".agentxchain/history.jsonl").is_empty());
    let (code, out, _) = a.step(&["--resume", "--auto-reject"]);
    assert_eq!(code, 0, "{out}");
    assert!(
        out.contains("Turn rejected for retry.\n  Attempt: 2\n\nThe retry dispatch bundle has been written.\nRun: agentxchain step --resume to continue.\n"),
        "{out}"
    );
    assert!(event_types(&a.p.root).contains(&"turn_rejected".to_owned()));
}

#[test]
fn a_completed_run_takes_no_more_turns() {
    let p = Project::new();
    let mut s = p.state();
    s["status"] = json!("completed");
    s["completed_at"] = json!("2026-01-02T03:04:05.000Z");
    p.write(
        ".agentxchain/state.json",
        &serde_json::to_string(&s).unwrap(),
    );
    let out = p.ok(&["step"]);
    assert_eq!(
        out,
        "This run is already completed.\n  Completed at: 2026-01-02T03:04:05.000Z\n  No more turns can be assigned to a completed run.\n"
    );
}

/// The agent script with `extra` shell run before it stages its result.
fn agent_with(extra: &str) -> Agent {
    agent_with_mode("ok", extra)
}

/// The agent of `mode`, running `extra` before it stages its result.
fn agent_with_mode(mode: &str, extra: &str) -> Agent {
    let a = agent(mode, "stdin");
    let script = a.out.path().join("agent.sh");
    let text = std::fs::read_to_string(&script).unwrap();
    std::fs::write(
        &script,
        text.replace(
            "mkdir -p \".agentxchain/staging/$t\"",
            &format!("{extra}\nmkdir -p \".agentxchain/staging/$t\""),
        ),
    )
    .unwrap();
    a
}

#[test]
fn nothing_the_agent_started_outlives_its_turn() {
    // A background process with its pipes closed, meant to write after the result is judged.
    let a = agent_with("( sleep 2; echo late > \"$AGENT_OUT/late\" ) </dev/null >/dev/null 2>&1 &");
    let (code, out, _) = a.step(&[]);
    assert_eq!(code, 0, "{out}");
    std::thread::sleep(Duration::from_secs(3));
    assert!(
        !a.out.path().join("late").exists(),
        "the background process ran on"
    );
}

#[test]
fn an_agent_that_breaks_the_state_is_ended_with_the_step() {
    // The agent breaks the state before its first output, which the step records in the state
    // (read, then written back under its lock, which the agent does not take). Printing first,
    // as the `ok` agent does, raced that write: a corruption landing between the step's read
    // and its write was overwritten, and the run went on.
    let a = agent_with_mode(
        "quiet-ok",
        "echo $$ > \"$AGENT_OUT/pid\"; echo 'not json' > .agentxchain/state.json; echo broke; sleep 30",
    );
    let started = Instant::now();
    let (code, out, err) = a.step(&[]);
    assert_ne!(code, 0, "{out}{err}");
    let pid: i32 = a.seen("pid").trim().parse().unwrap();
    let gone = (0..40).any(|_| {
        std::thread::sleep(Duration::from_millis(50));
        !alive(pid)
    });
    assert!(gone, "the agent {pid} runs on unwatched");
    assert!(started.elapsed() < Duration::from_secs(20));
}

#[test]
fn a_passed_deadline_is_renewed_when_the_turn_is_dispatched_again() {
    let a = agent("ok", "stdin");
    a.p.ok(&["resume"]);
    let turn = a.p.active_turn().0;
    let mut state = a.p.state();
    state["active_turns"][&turn]["deadline_at"] = json!("2020-01-01T00:00:00.000Z");
    a.p.write(
        ".agentxchain/state.json",
        &serde_json::to_string_pretty(&state).unwrap(),
    );
    let (code, out, _) = a.step(&["--resume"]);
    assert_eq!(code, 0, "{out}");
    assert!(out.contains("  Turn Accepted"), "{out}");
}

#[test]
fn two_resumes_at_once_run_one_agent() {
    let a = agent_with("echo run >> \"$AGENT_OUT/runs\"; sleep 2");
    a.p.ok(&["resume"]);
    let spawn = || {
        Command::new(BIN)
            .args(["step", "--resume"])
            .current_dir(&a.p.root)
            .env("AGENT_OUT", a.out.path())
            .stdout(Stdio::piped())
            .spawn()
            .unwrap()
    };
    let (x, y) = (spawn(), spawn());
    let (ox, oy) = (x.wait_with_output().unwrap(), y.wait_with_output().unwrap());
    let runs = a.seen("runs");
    assert_eq!(runs.lines().count(), 1, "agents run: {runs:?}");
    let refused = [&ox, &oy]
        .iter()
        .filter(|o| String::from_utf8_lossy(&o.stdout).contains("is still alive"))
        .count();
    assert_eq!(
        refused,
        1,
        "{}\n---\n{}",
        String::from_utf8_lossy(&ox.stdout),
        String::from_utf8_lossy(&oy.stdout)
    );
}

#[test]
fn streamed_output_keeps_its_lines_and_escapes_controls() {
    let a = agent_with("printf 'line one\\nline two\\n\\033[31mred\\n'");
    let (code, out, _) = a.step(&["--stream"]);
    assert_eq!(code, 0, "{out}");
    assert!(out.contains("line one\nline two\n"), "{out}");
    assert!(
        !out.contains('\u{1b}'),
        "an escape reached the terminal: {out}"
    );
}

#[test]
fn an_agent_cannot_approve_or_unblock_from_inside_its_turn() {
    let a = agent_with(
        "for c in approve-transition approve-completion 'unblock hesc_0123456789abcdef' 'run --auto-approve' 'run --max-turns 1'; do \"$AXC\" $c >> \"$AGENT_OUT/person.txt\"; echo \"rc=$?\" >> \"$AGENT_OUT/person.txt\"; done; AGENTXCHAIN_TURN_ID=\"$(printf 'turn_\\377')\" \"$AXC\" approve-transition >> \"$AGENT_OUT/person.txt\"; echo \"rc=$?\" >> \"$AGENT_OUT/person.txt\"",
    );
    let (code, out, _) = a.step(&[]);
    assert_eq!(code, 0, "{out}");
    let said = a.seen("person.txt");
    for c in [
        "approve-transition",
        "approve-completion",
        "unblock",
        "run --auto-approve",
        "run",
    ] {
        assert!(
            said.contains(&format!(
                "{c} is a person's command: it was run inside the dispatched turn turn_"
            )),
            "{c}: {said}"
        );
    }
    // The interactive run (its prompt approves) and a turn id that is not UTF-8 are refused too.
    assert!(said.contains("\nrun is a person's command"), "{said}");
    assert_eq!(
        said.matches("approve-transition is a person's").count(),
        2,
        "{said}"
    );
    assert_eq!(said.matches("rc=1").count(), 6, "{said}");
}

#[test]
fn an_agent_that_closes_its_stdin_unread_does_not_end_the_step() {
    // A prompt larger than a pipe holds (the mandate is part of it), to an agent that closes its
    // stdin at once: writing the prompt meets a closed pipe. The step goes on to judge the
    // result instead of dying of SIGPIPE.
    let a = agent("ok", "stdin");
    let script = a.out.path().join("agent.sh");
    let text = std::fs::read_to_string(&script).unwrap();
    std::fs::write(
        &script,
        text.replace("cat > \"$AGENT_OUT/stdin.txt\"", "exec 0<&-; sleep 1"),
    )
    .unwrap();
    a.p.config(|c| c["roles"]["pm"]["mandate"] = json!("x".repeat(200_000)));
    let (code, out, err) = a.step(&[]);
    assert!(
        code == 0 || code == 1,
        "killed by a signal: {code}\n{out}\n{err}"
    );
    assert!(out.contains("Turn: "), "{out}");
}

#[test]
fn under_the_phases_capacity_step_runs_a_turn_beside_the_active_one() {
    let a = agent("ok", "stdin");
    a.p.config(|c| c["routing"]["planning"]["max_concurrent_turns"] = json!(2));
    // A person's qa turn is active; the pm's agent runs beside it.
    a.p.ok(&["resume", "--role", "qa"]);
    let (first, _) = a.p.active_turn();
    let (code, out, _) = a.step(&[]);
    assert_eq!(code, 0, "{out}");
    let s = a.p.state();
    // The first turn is still active; the second ran beside it and was accepted.
    assert_eq!(s["active_turns"].as_object().unwrap().len(), 1, "{out}");
    assert!(s["active_turns"].get(&first).is_some());
    let history = std::fs::read_to_string(a.p.root.join(".agentxchain/history.jsonl")).unwrap();
    let h: Value = serde_json::from_str(history.lines().last().unwrap()).unwrap();
    assert_ne!(h["turn_id"], first);
    assert_eq!(h["concurrent_with"], json!([first]));
    assert_eq!(h["role"], "pm");
    // A role with a turn active gets no second one.
    let (code, out, _) = a.step(&["--role", "qa"]);
    assert_eq!(code, 1, "{out}");
    assert!(
        out.contains("Role \"qa\" already has an active turn"),
        "{out}"
    );
}
