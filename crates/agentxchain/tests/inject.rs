//! `agentxchain inject` and the intake queue: an injected item is approved and taken by the
//! next `resume` or `step`; a p0 one makes `run` yield; a stale or forged marker is ignored.

mod support;

use serde_json::Value;
use support::project::Project;

fn intents(p: &Project) -> Vec<Value> {
    let mut v: Vec<Value> = std::fs::read_dir(p.root.join(".agentxchain/intake/intents"))
        .map(|d| {
            d.flatten()
                .filter_map(|e| std::fs::read_to_string(e.path()).ok())
                .filter_map(|t| serde_json::from_str(&t).ok())
                .collect()
        })
        .unwrap_or_default();
    v.sort_by_key(|i: &Value| i["priority"].as_str().unwrap_or("").to_owned());
    v
}

const MARKER: &str = ".agentxchain/intake/injected-priority.json";

#[test]
fn an_injected_item_is_approved_marked_and_taken_by_the_next_resume() {
    let p = Project::new();
    let out = p.ok(&[
        "inject",
        "Fix the sidebar ordering",
        "--acceptance",
        "sidebar sorted, tests pass",
    ]);
    assert!(
        out.starts_with("\n  Injected\n  Intent:   intent_"),
        "{out}"
    );
    assert!(out.contains("  Priority: p0\n  Status:   approved\n  Charter:  Fix the sidebar ordering\n\n  ⚡ Preemption marker written\n"), "{out}");
    let i = &intents(&p)[0];
    assert_eq!(i["status"], "approved");
    assert_eq!(
        i["acceptance_contract"],
        serde_json::json!(["sidebar sorted", "tests pass"])
    );
    assert_eq!(i["cross_run_durable"], true, "approved before any run");
    let marker: Value =
        serde_json::from_str(&std::fs::read_to_string(p.root.join(MARKER)).unwrap()).unwrap();
    assert_eq!(marker["intent_id"], i["intent_id"]);
    // The same item again is the same intent.
    let out = p.ok(&["inject", "Fix the sidebar ordering"]);
    assert!(
        out.starts_with("\n  ⚠ Duplicate injection — existing intent returned\n"),
        "{out}"
    );
    let out = p.ok(&["inject", "Second thing", "--priority", "p2", "--json"]);
    let v: Value = serde_json::from_str(&out).unwrap();
    assert_eq!(
        (
            v["ok"].as_bool(),
            v["priority"].as_str(),
            v["preemption_marker"].as_bool()
        ),
        (Some(true), Some("p2"), Some(false))
    );
    assert_eq!(intents(&p).len(), 2);
    // The next turn takes the p0 item: planned, started, its contract in the bundle.
    let id = i["intent_id"].as_str().unwrap().to_owned();
    let out = p.ok(&["resume"]);
    assert!(
        out.contains(&format!("Bound approved intent to next turn: {id}\n")),
        "{out}"
    );
    let state = p.state();
    let (turn, _) = p.active_turn();
    assert_eq!(
        state["active_turns"][&turn]["intake_context"]["intent_id"],
        id.as_str()
    );
    let all = intents(&p);
    assert_eq!(all[0]["status"], "executing");
    assert_eq!(
        all[0]["approved_run_id"], state["run_id"],
        "bound to the run that started"
    );
    assert!(all[0].get("cross_run_durable").is_none());
    assert_eq!(all[1]["status"], "approved", "the p2 item waits");
}

#[test]
fn a_p0_injection_makes_run_yield_and_step_takes_it() {
    let p = Project::new();
    p.ok(&["inject", "Hotfix the login"]);
    let out = p.run(&["run"]);
    let text = String::from_utf8_lossy(&out.stdout).into_owned();
    assert_eq!(out.status.code(), Some(1), "{text}");
    assert!(
        text.contains("  Status:  priority_preempted\n  Turns:   0\n"),
        "{text}"
    );
    // step (manual pm) binds it without saying so, as the reference.
    let mut child = std::process::Command::new(support::BIN)
        .args(["step", "--poll", "1"])
        .current_dir(&p.root)
        .stdout(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    // Interrupted only once it waits for the agent (its box printed): a signal before step
    // has its handler would end it the default way.
    let (tx, rx) = std::sync::mpsc::channel();
    let stdout = child.stdout.take().unwrap();
    std::thread::spawn(move || {
        use std::io::BufRead;
        for line in std::io::BufReader::new(stdout)
            .lines()
            .map_while(Result::ok)
        {
            let _ = tx.send(line);
        }
    });
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(20);
    loop {
        let left = deadline.saturating_duration_since(std::time::Instant::now());
        let line = rx
            .recv_timeout(left)
            .expect("step never waited for the agent");
        if line.contains("MANUAL TURN REQUIRED") {
            break;
        }
    }
    assert_eq!(
        intents(&p)[0]["status"],
        "executing",
        "the intent was taken"
    );
    // SAFETY: signalling our own child.
    unsafe { libc::kill(child.id() as i32, libc::SIGINT) };
    assert!(child.wait().unwrap().success());
    let (turn, _) = p.active_turn();
    assert_eq!(
        p.state()["active_turns"][&turn]["intake_context"]["charter"],
        "Hotfix the login"
    );
}

#[test]
fn a_held_item_a_bad_priority_and_a_forged_marker() {
    let p = Project::new();
    let out = p.ok(&["inject", "Later maybe", "--no-approve"]);
    assert!(out.contains("  Status:   triaged\n"), "{out}");
    assert!(!out.contains("Preemption"), "{out}");
    assert!(!p.root.join(MARKER).exists());
    let out = p.fails(&["inject", "x", "--priority", "urgent"]);
    assert_eq!(out, "priority must be one of: p0, p1, p2, p3\n");
    let out = p.fails(&["inject", "  "]);
    assert!(out.starts_with("A description is required."), "{out}");
    // A marker naming no intent (or a path) does not stop a run, and is removed.
    p.write(
        MARKER,
        "{\"intent_id\": \"../../agentxchain\", \"priority\": \"p0\"}",
    );
    let out = p.run(&["run"]);
    let text = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(!text.contains("priority_preempted"), "{text}");
    assert!(!p.root.join(MARKER).exists(), "the stale marker is cleared");
    assert!(p.root.join("agentxchain.json").exists());
}

#[test]
fn a_scan_records_each_good_item_once_and_names_each_bad_one() {
    let p = Project::new();
    let snap = r#"{"source":"ci_failure","items":[
        {"signal":{"job":"build","run":1},"evidence":[{"type":"url","value":"https://ci/1"}]},
        {"signal":{},"evidence":[]},
        {"signal":{"job":"build","run":1},"evidence":[{"type":"url","value":"https://ci/1"}]},
        {"signal":{"job":"t"},"evidence":[{"type":"bogus","value":""}]}]}"#;
    p.write("snap.json", snap);
    let out = p.ok(&[
        "intake",
        "scan",
        "--source",
        "ci_failure",
        "--file",
        "snap.json",
    ]);
    assert_eq!(
        out,
        "\n  Scan complete: 4 item(s) processed\n  Created:      1\n  Deduplicated: 1\n  Rejected:     2\n\n"
    );
    let out = p.ok(&[
        "intake",
        "scan",
        "--source",
        "ci_failure",
        "--file",
        "snap.json",
        "-j",
    ]);
    let v: Value = serde_json::from_str(&out).unwrap();
    assert_eq!(
        v["results"][1]["error"],
        "signal must be a non-empty object; evidence must be a non-empty array"
    );
    assert_eq!(
        v["results"][3]["error"],
        "evidence type must be one of: url, file, text (got \"bogus\"); evidence value must be a non-empty string"
    );
    assert_eq!(v["deduplicated"], 2);
    assert_eq!(intents(&p).len(), 1, "one signal, one intent");
    let out = p.fails(&[
        "intake",
        "scan",
        "--source",
        "schedule",
        "--file",
        "snap.json",
    ]);
    assert_eq!(
        out,
        "  source mismatch: CLI flag \"schedule\" but snapshot declares \"ci_failure\"\n"
    );
    let out = p.fails(&["intake", "scan", "--source", "ci_failure"]);
    assert_eq!(out, "one of --file or --stdin is required\n");
    let out = p.run(&[
        "intake",
        "scan",
        "--source",
        "ci_failure",
        "--file",
        "missing.json",
    ]);
    assert_eq!(out.status.code(), Some(2));
}

#[test]
fn an_intent_starts_a_fresh_run_over_a_completed_one_only_when_asked() {
    let p = Project::new();
    p.ok(&["inject", "Next feature", "--no-approve"]);
    let id = intents(&p)[0]["intent_id"].as_str().unwrap().to_owned();
    p.ok(&["intake", "approve", "--intent", &id]);
    p.ok(&["intake", "plan", "--intent", &id]);
    let mut s = p.state();
    s["status"] = serde_json::json!("completed");
    s["run_id"] = serde_json::json!("run_0123456789abcdef");
    s["phase"] = serde_json::json!("qa");
    s["completed_at"] = serde_json::json!("2026-01-02T03:04:05.000Z");
    p.write(
        ".agentxchain/state.json",
        &serde_json::to_string(&s).unwrap(),
    );
    let out = p.fails(&["intake", "start", "--intent", &id]);
    assert_eq!(
        out,
        format!(
            "  cannot start: governed run is already completed. Re-run with \"agentxchain intake start --intent {id} --restart-completed\" to initialize a fresh governed run.\n"
        )
    );
    p.ok(&["intake", "start", "--intent", &id, "--restart-completed"]);
    let s = p.state();
    assert_eq!(s["status"], "active");
    assert_eq!(
        s["phase"], "planning",
        "a fresh run starts at the first phase"
    );
    assert_ne!(s["run_id"], "run_0123456789abcdef");
    assert_eq!(s["provenance"]["trigger"], "intake");
    let (turn, role) = p.active_turn();
    assert_eq!(role, "pm", "the fresh run's first phase's role ({turn})");
    assert_eq!(s["phase_gate_status"]["planning_signoff"], "pending");
}

#[test]
fn an_intake_payload_is_read_bounded() {
    let p = Project::new();
    let fifo = p.root.join("payload.fifo");
    assert!(
        std::process::Command::new("mkfifo")
            .arg(&fifo)
            .status()
            .unwrap()
            .success()
    );
    let out = p.run(&["intake", "record", "--file", "payload.fifo"]);
    assert_eq!(out.status.code(), Some(1));
    assert!(
        String::from_utf8_lossy(&out.stdout).contains("cannot read payload.fifo"),
        "{:?}",
        out
    );
}
