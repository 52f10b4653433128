//! `agentxchain serve-mcp` rules beyond the goldens: the deliberate departures from the
//! reference, fresh reads, purity, broken inputs, and the intake command round trip.

mod support;

use std::path::Path;
use std::process::Command;
use std::time::Duration;

use mcp_testkit::{ServerProcess, tool_text};
use serde_json::{Value, json};
use support::*;

fn call(s: &mut ServerProcess, id: i64, name: &str, args: Value) -> Value {
    let r = s.request(id, "tools/call", json!({"name": name, "arguments": args}));
    let result = &r["result"];
    serde_json::from_str(tool_text(result)).unwrap_or_else(|_| json!(tool_text(result)))
}

fn write(root: &Path, rel: &str, text: &str) {
    let p = root.join(rel);
    std::fs::create_dir_all(p.parent().unwrap()).unwrap();
    std::fs::write(p, text).unwrap();
}

fn state(root: &Path) -> Value {
    serde_json::from_str(&std::fs::read_to_string(root.join(".agentxchain/state.json")).unwrap())
        .unwrap()
}

fn set_state(root: &Path, s: &Value) {
    write(
        root,
        ".agentxchain/state.json",
        &serde_json::to_string_pretty(s).unwrap(),
    );
}

#[test]
fn active_turns_are_real_summaries() {
    let (_d, root) = project_copy("scratch-blocked-hesc");
    let mut s = serve(&root);
    let status = call(&mut s, 1, "agentxchain_status", json!({}));
    assert_eq!(
        status["active_turns"],
        json!([{"turn_id": "turn_8ee8698b694d4fbd", "role": "pm", "status": "dispatched", "phase": "planning"}])
    );
    let (_d2, root2) = project_copy("scratch-blocked-multi-hesc");
    let mut s2 = serve(&root2);
    let status = call(&mut s2, 1, "agentxchain_status", json!({}));
    assert_eq!(
        status["active_turns"],
        json!([{"turn_id": "turn_f237bbad7be1298c", "role": "pm", "status": "dispatched", "phase": "planning"}])
    );
}

#[test]
fn pending_gates_name_the_gate_awaiting_approval() {
    let (_d, root) = project_copy("scratch-paused-approval");
    let mut s = serve(&root);
    let status = call(&mut s, 1, "agentxchain_status", json!({}));
    assert_eq!(status["pending_gates"], json!(["planning_signoff"]));
    assert_eq!(status["blocked"], false);
    assert_eq!(status["status"], "paused");
    // Neither pending field: null.
    let (_d2, root2) = project_copy("scratch-completed-run");
    let mut s2 = serve(&root2);
    assert_eq!(
        call(&mut s2, 1, "agentxchain_status", json!({}))["pending_gates"],
        Value::Null
    );
}

#[test]
fn approve_gate_answers_a_phase_transition_gate() {
    let (_d, root) = project_copy("scratch-paused-approval");
    let mut s = serve(&root);
    let r = call(
        &mut s,
        1,
        "agentxchain_approve_gate",
        json!({"gate_id": " planning_signoff "}),
    );
    assert_eq!(
        r,
        json!({
            "ok": true,
            "gate_id": "planning_signoff",
            "type": "phase_transition",
            "detail": "planning → implementation",
            "instruction": "Gate planning_signoff is awaiting human approval. Run \"agentxchain approve-transition\" to approve the transition from planning to implementation."
        })
    );
    let r = call(
        &mut s,
        2,
        "agentxchain_approve_gate",
        json!({"gate_id": "qa_ship_verdict"}),
    );
    assert_eq!(
        r,
        json!({"ok": false, "error": "No pending approval gate qa_ship_verdict for this run."})
    );
    // An escalation id on a paused run keeps the reference's text.
    let r = call(
        &mut s,
        3,
        "agentxchain_approve_gate",
        json!({"gate_id": "hesc_0000000000000000"}),
    );
    assert_eq!(
        r["error"],
        "Run is not blocked (status: \"paused\"). Nothing to approve."
    );
}

#[test]
fn approve_gate_answers_a_run_completion_gate() {
    let (_d, root) = project_copy("scratch-paused-approval");
    let mut st = state(&root);
    st["pending_phase_transition"] = Value::Null;
    st["pending_run_completion"] =
        json!({"gate": "qa_ship_verdict", "requested_by_turn": "turn_x"});
    st["blocked_on"] = json!("human_approval:qa_ship_verdict");
    set_state(&root, &st);
    let mut s = serve(&root);
    assert_eq!(
        call(&mut s, 1, "agentxchain_status", json!({}))["pending_gates"],
        json!(["qa_ship_verdict"])
    );
    let r = call(
        &mut s,
        2,
        "agentxchain_approve_gate",
        json!({"gate_id": "qa_ship_verdict"}),
    );
    assert_eq!(
        r,
        json!({
            "ok": true,
            "gate_id": "qa_ship_verdict",
            "type": "run_completion",
            "detail": null,
            "instruction": "Gate qa_ship_verdict is awaiting human approval. Run \"agentxchain approve-completion\" to approve completing the run."
        })
    );
}

#[test]
fn approve_gate_refuses_a_gate_on_a_run_not_waiting() {
    let (_d, root) = project_copy("test-suite-fixture");
    let mut s = serve(&root);
    let r = call(
        &mut s,
        1,
        "agentxchain_approve_gate",
        json!({"gate_id": "planning_signoff"}),
    );
    assert_eq!(
        r["error"],
        "Run is not awaiting approval (status: \"active\"). Nothing to approve."
    );
    std::fs::remove_file(root.join(".agentxchain/state.json")).unwrap();
    let r = call(
        &mut s,
        2,
        "agentxchain_approve_gate",
        json!({"gate_id": "planning_signoff"}),
    );
    assert_eq!(r, json!({"ok": false, "error": "No governed state found."}));
}

#[test]
fn the_state_resource_returns_the_bytes_on_disk() {
    let (_d, root) = project_copy("test-suite-fixture");
    let on_disk = std::fs::read_to_string(root.join(".agentxchain/state.json")).unwrap();
    let mut s = serve(&root);
    call(&mut s, 1, "agentxchain_status", json!({}));
    let r = s.request(2, "resources/read", json!({"uri": "agentxchain://state"}));
    assert_eq!(r["result"]["contents"][0]["text"], json!(on_disk));
    assert!(
        on_disk.contains("current_turn"),
        "the v1.0 file is not migrated on disk"
    );
}

#[test]
fn intake_record_returns_a_command_the_cli_accepts() {
    let (_d, root) = project_copy("scratch-blocked-hesc");
    let mut s = serve(&root);
    let r = call(
        &mut s,
        1,
        "agentxchain_intake_record",
        json!({"source": "manual", "title": "it's broken", "description": "Users see $HOME and `ls`", "priority": "p1"}),
    );
    assert_eq!(r["ok"], true);
    let command = r["command"].as_str().unwrap();
    assert_eq!(
        r["instruction"],
        json!(format!("Use \"{command}\" to record this event."))
    );
    for flag in ["--title", "--description", "--priority"] {
        assert!(!command.contains(flag), "{command}");
    }
    assert!(
        command.starts_with(
            "agentxchain intake record --source manual --signal '{\"title\":\"it'\\''s broken\""
        ),
        "{command}"
    );
    let bin_dir = Path::new(BIN).parent().unwrap();
    let path = format!(
        "{}:{}",
        bin_dir.display(),
        std::env::var("PATH").unwrap_or_default()
    );
    let out = Command::new("sh")
        .arg("-c")
        .arg(command)
        .current_dir(&root)
        .env("PATH", path)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    let intents: Vec<_> = std::fs::read_dir(root.join(".agentxchain/intake/intents"))
        .unwrap()
        .collect();
    assert_eq!(intents.len(), 1);
    let events: Vec<_> = std::fs::read_dir(root.join(".agentxchain/intake/events"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    let event: Value = serde_json::from_str(&std::fs::read_to_string(&events[0]).unwrap()).unwrap();
    assert_eq!(
        event["signal"],
        json!({"title": "it's broken", "description": "Users see $HOME and `ls`", "priority": "p1"})
    );
    assert_eq!(
        event["evidence"],
        json!([{"type": "text", "value": "Users see $HOME and `ls`"}])
    );
}

#[test]
fn intake_record_validates_the_source() {
    let (_d, root) = project_copy("scratch-blocked-hesc");
    let mut s = serve(&root);
    let r = call(
        &mut s,
        1,
        "agentxchain_intake_record",
        json!({"source": "email", "title": "x"}),
    );
    assert_eq!(
        r["error"],
        "source must be one of: manual, ci_failure, git_ref_change, schedule, vision_scan, vision_idle_expansion"
    );
    assert!(
        !root.join(".agentxchain/intake").exists(),
        "the tool never writes"
    );
}

#[test]
fn reads_are_fresh_on_every_call() {
    let (_d, root) = project_copy("test-suite-fixture");
    let mut s = serve(&root);
    assert_eq!(call(&mut s, 1, "agentxchain_events", json!({}))["count"], 3);
    let mut log = std::fs::read_to_string(root.join(".agentxchain/events.jsonl")).unwrap();
    log.push_str("{\"event_type\":\"run_completed\"}\n");
    write(&root, ".agentxchain/events.jsonl", &log);
    let r = call(&mut s, 2, "agentxchain_events", json!({"limit": 1}));
    assert_eq!(r["events"], json!([{"event_type": "run_completed"}]));
    let mut st = state(&root);
    st["phase"] = json!("qa");
    set_state(&root, &st);
    assert_eq!(
        call(&mut s, 3, "agentxchain_status", json!({}))["phase"],
        "qa"
    );
}

#[test]
fn a_project_created_after_startup_is_picked_up() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("later");
    std::fs::create_dir_all(&root).unwrap();
    let mut s = serve(&root);
    let r = call(&mut s, 1, "agentxchain_status", json!({}));
    assert_eq!(
        r["error"],
        json!(format!("No governed project found at {}", root.display()))
    );
    copy_dir(&fixtures().join("test-suite-fixture/project"), &root);
    assert_eq!(
        call(&mut s, 2, "agentxchain_status", json!({}))["run_id"],
        "run_mcp_test_001"
    );
    assert!(s.wait_for_stderr(
        "Warning: no agentxchain.json found at",
        Duration::from_secs(5)
    ));
}

#[test]
fn a_missing_root_still_starts_and_resources_answer_empty() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("does/not/exist");
    let mut s = serve(&root);
    let r = s.request(1, "resources/read", json!({"uri": "agentxchain://session"}));
    assert_eq!(r["result"]["contents"][0]["text"], "{}");
    assert_eq!(
        call(&mut s, 2, "agentxchain_history", json!({}))["ok"],
        false
    );
}

#[test]
fn a_broken_state_is_set_aside_with_a_warning() {
    let (_d, root) = project_copy("test-suite-fixture");
    write(
        &root,
        ".agentxchain/state.json",
        "{\"status\": \"active\", ",
    );
    let mut s = serve(&root);
    let r = call(&mut s, 1, "agentxchain_status", json!({}));
    assert_eq!(r["ok"], true);
    assert_eq!(
        (
            r["run_id"].clone(),
            r["status"].clone(),
            r["active_turns"].clone()
        ),
        (Value::Null, Value::Null, json!([]))
    );
    // The answer itself says the state could not be used; blocked is unknown, not false.
    assert!(
        r["warnings"][0]
            .as_str()
            .unwrap()
            .starts_with(".agentxchain/state.json is invalid JSON: "),
        "{r}"
    );
    assert_eq!(r["blocked"], Value::Null);
    write(
        &root,
        ".agentxchain/state.json",
        "{\"status\": \"dancing\", \"active_turns\": {}}",
    );
    call(&mut s, 2, "agentxchain_status", json!({}));
    // A directory where the file should be: unreadable, not a crash.
    std::fs::remove_file(root.join(".agentxchain/state.json")).unwrap();
    std::fs::create_dir(root.join(".agentxchain/state.json")).unwrap();
    assert_eq!(call(&mut s, 3, "agentxchain_status", json!({}))["ok"], true);
    let r = s.request(4, "resources/read", json!({"uri": "agentxchain://state"}));
    let message = r["error"]["message"].as_str().unwrap_or_default();
    assert!(
        message.contains("cannot read .agentxchain/state.json: ")
            && message.ends_with("not a regular file"),
        "{r}"
    );
    let wait = |needle: &str| s.wait_for_stderr(needle, Duration::from_secs(5));
    assert!(
        wait("  Warning: .agentxchain/state.json is invalid JSON: "),
        "{}",
        s.stderr()
    );
    assert!(
        wait(
            "  Warning: .agentxchain/state.json has issues: status must be one of: idle, active, paused, blocked, completed"
        ),
        "{}",
        s.stderr()
    );
    assert!(
        wait("  Warning: .agentxchain/state.json could not be read: "),
        "{}",
        s.stderr()
    );
}

#[test]
fn garbage_log_lines_are_skipped() {
    let (_d, root) = project_copy("test-suite-fixture");
    write(
        &root,
        ".agentxchain/events.jsonl",
        "{\"event_type\":\"a\"}\n\u{0}\u{1}garbage\n{\"event_type\":\"b\"\n\n{\"event_type\":\"c\"}\n{\"event_type\":",
    );
    write(
        &root,
        ".agentxchain/run-history.jsonl",
        "{\"run_id\":\"r1\"}\nnot json\n{\"run_id\":\"r2\"}\n",
    );
    let mut s = serve(&root);
    let r = call(&mut s, 1, "agentxchain_events", json!({}));
    assert_eq!(
        r,
        json!({"ok": true, "count": 2, "events": [{"event_type": "a"}, {"event_type": "c"}], "skipped_lines": 3})
    );
    let r = call(&mut s, 2, "agentxchain_history", json!({}));
    assert_eq!(r["entries"], json!([{"run_id": "r2"}, {"run_id": "r1"}]));
}

#[test]
fn limits_follow_the_decided_rule() {
    let (_d, root) = project_copy("scratch-completed-run");
    let mut s = serve(&root);
    for (id, limit, expected) in [
        (1, json!(2.5), 2),
        (2, json!(0.5), 24),
        (3, json!(1), 1),
        (4, json!(0), 24),
        (5, json!(-3), 24),
    ] {
        assert_eq!(
            call(&mut s, id, "agentxchain_events", json!({"limit": limit}))["count"],
            expected,
            "limit {limit}"
        );
    }
    let r = s.request(
        6,
        "tools/call",
        json!({"name": "agentxchain_events", "arguments": {"limit": "2"}}),
    );
    assert_eq!(r["result"]["isError"], true);
    assert!(tool_text(&r["result"]).contains("Invalid input: expected number, received string"));
}

#[test]
fn the_continuous_session_is_reported_when_present() {
    let (_d, root) = project_copy("test-suite-fixture");
    write(
        &root,
        ".agentxchain/continuous-session.json",
        r#"{"session_id":"cont-1a2b3c4d","status":"running","runs_completed":2}"#,
    );
    let mut s = serve(&root);
    let r = call(&mut s, 1, "agentxchain_status", json!({}));
    assert_eq!(
        r["continuous"],
        json!({"session_id": "cont-1a2b3c4d", "status": "running", "runs_completed": 2, "idle_cycles": 0})
    );
    let keys: Vec<&String> = r.as_object().unwrap().keys().collect();
    assert_eq!(keys.last().unwrap().as_str(), "continuous");
}

#[test]
fn a_full_session_writes_nothing() {
    for fixture in [
        "scratch-blocked-hesc",
        "scratch-paused-approval",
        "test-suite-fixture",
    ] {
        let (_d, root) = project_copy(fixture);
        let before = hash_tree(&root);
        let mut s = serve(&root);
        for (i, (name, args)) in [
            ("agentxchain_status", json!({})),
            ("agentxchain_events", json!({})),
            ("agentxchain_history", json!({})),
            (
                "agentxchain_approve_gate",
                json!({"gate_id": "hesc_2f9ad2784d2284e1"}),
            ),
            (
                "agentxchain_approve_gate",
                json!({"gate_id": "planning_signoff"}),
            ),
            (
                "agentxchain_intake_record",
                json!({"source": "manual", "title": "t"}),
            ),
        ]
        .into_iter()
        .enumerate()
        {
            call(&mut s, i as i64, name, args);
        }
        s.request(10, "resources/read", json!({"uri": "agentxchain://state"}));
        s.request(
            11,
            "resources/read",
            json!({"uri": "agentxchain://session"}),
        );
        s.close_stdin();
        s.wait_exit(Duration::from_secs(5));
        assert_eq!(hash_tree(&root), before, "{fixture}");
    }
}

#[test]
fn unknown_tools_and_resources() {
    let (_d, root) = project_copy("test-suite-fixture");
    let mut s = serve(&root);
    let r = s.request(1, "tools/call", json!({"name": "nope", "arguments": {}}));
    assert_eq!(
        r["result"],
        json!({"content": [{"type": "text", "text": "Unknown tool: nope"}], "isError": true})
    );
    let r = s.request(2, "resources/read", json!({"uri": "agentxchain://x", "_meta": {"io.modelcontextprotocol/protocolVersion": "2026-07-28"}}));
    assert_eq!(
        r["error"],
        json!({"code": -32602, "message": "MCP error -32602: Resource agentxchain://x not found"})
    );
    let r = s.request(3, "resources/templates/list", json!({}));
    assert_eq!(r["result"], json!({"resourceTemplates": []}));
}
