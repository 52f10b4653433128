//! AgentXchain reads against a project someone else controls: FIFOs where logs should be, a
//! state directory linked out of the project, a 200 MB state file, a 20 MB log line. Every
//! read answers at once, says what it could not use, and the server keeps serving.

mod support;

use std::path::Path;
use std::time::{Duration, Instant};

use mcp_testkit::tool_text;
use serde_json::{Value, json};
use support::*;

fn mkfifo(path: &Path) {
    let status = std::process::Command::new("mkfifo")
        .arg(path)
        .status()
        .unwrap();
    assert!(status.success());
}

fn tool(name: &str, id: i64) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": {"name": name, "arguments": {}}})
}

fn parsed(reply: &Value) -> Value {
    let text = tool_text(&reply["result"]);
    serde_json::from_str(text).unwrap_or_else(|_| json!(text))
}

#[test]
fn fifos_where_logs_should_be_never_hang_a_call_or_the_server() {
    let (_d, root) = project_copy("test-suite-fixture");
    let agx = root.join(".agentxchain");
    for f in [
        "events.jsonl",
        "run-history.jsonl",
        "continuous-session.json",
    ] {
        let _ = std::fs::remove_file(agx.join(f));
        mkfifo(&agx.join(f));
    }
    let mut s = serve(&root);
    let t = Instant::now();
    // 40 calls at once, more than the pool has workers: every one answered.
    for id in 0..40 {
        let name = if id % 2 == 0 {
            "agentxchain_events"
        } else {
            "agentxchain_history"
        };
        s.send(&tool(name, 100 + id));
    }
    for id in 0..40 {
        let r = s.recv_reply(&json!(100 + id));
        let v = parsed(&r);
        assert_eq!(v["ok"], false, "{r}");
        assert!(
            v["error"].as_str().unwrap().ends_with("not a regular file"),
            "{v}"
        );
    }
    assert!(t.elapsed() < Duration::from_secs(10), "{:?}", t.elapsed());
    // The server still serves, and the FIFO session file is simply not a session.
    let r = s.request(
        1,
        "tools/call",
        json!({"name": "agentxchain_status", "arguments": {}}),
    );
    assert_eq!(parsed(&r)["ok"], true);
    let r = s.request(2, "resources/read", json!({"uri": "agentxchain://session"}));
    assert!(
        r["error"]["message"]
            .as_str()
            .unwrap()
            .contains("not a regular file"),
        "{r}"
    );
}

#[test]
fn a_state_directory_linked_out_of_the_project_is_not_followed() {
    let (_d, root) = project_copy("test-suite-fixture");
    let elsewhere = tempfile::tempdir().unwrap();
    let agx = root.join(".agentxchain");
    copy_dir(&agx, elsewhere.path());
    std::fs::write(
        elsewhere.path().join("state.json"),
        r#"{"status": "blocked", "run_id": "run_elsewhere"}"#,
    )
    .unwrap();
    std::fs::remove_dir_all(&agx).unwrap();
    std::os::unix::fs::symlink(elsewhere.path(), &agx).unwrap();
    let mut s = serve(&root);
    let r = parsed(&s.request(
        1,
        "tools/call",
        json!({"name": "agentxchain_status", "arguments": {}}),
    ));
    assert_ne!(r["run_id"], "run_elsewhere", "{r}");
    assert!(
        r["warnings"][0].as_str().unwrap().contains("leads outside"),
        "{r}"
    );
    let r = parsed(&s.request(
        2,
        "tools/call",
        json!({"name": "agentxchain_events", "arguments": {}}),
    ));
    assert_eq!(r["ok"], false, "{r}");
    assert!(
        r["error"].as_str().unwrap().contains("leads outside"),
        "{r}"
    );
}

#[test]
fn a_huge_state_file_and_a_huge_line_are_said_not_read() {
    let (_d, root) = project_copy("test-suite-fixture");
    let agx = root.join(".agentxchain");
    // 200 MB (sparse): over the 16 MiB cap.
    let f = std::fs::File::create(agx.join("state.json")).unwrap();
    f.set_len(200 << 20).unwrap();
    let mut events = b"{\"event_type\":\"a\"}\n{\"event_type\":\"big\",\"pad\":\"".to_vec();
    events.resize(events.len() + (20 << 20), b'x');
    events.extend_from_slice(b"\"}\n{\"event_type\":\"b\"}\n");
    std::fs::write(agx.join("events.jsonl"), &events).unwrap();
    let mut s = serve(&root);
    let t = Instant::now();
    let r = s.request(1, "resources/read", json!({"uri": "agentxchain://state"}));
    let message = r["error"]["message"].as_str().unwrap_or_default();
    assert!(
        message.contains("cannot read .agentxchain/state.json")
            && message.contains("209715200 bytes, over the 16777216"),
        "{r}"
    );
    let status = parsed(&s.request(
        2,
        "tools/call",
        json!({"name": "agentxchain_status", "arguments": {}}),
    ));
    assert!(
        status["warnings"][0]
            .as_str()
            .unwrap()
            .contains("over the 16777216"),
        "{status}"
    );
    let ev = parsed(&s.request(
        3,
        "tools/call",
        json!({"name": "agentxchain_events", "arguments": {}}),
    ));
    assert_eq!(
        ev,
        json!({"ok": true, "count": 2, "events": [{"event_type": "a"}, {"event_type": "b"}], "skipped_lines": 1})
    );
    assert!(t.elapsed() < Duration::from_secs(10), "{:?}", t.elapsed());
}

#[test]
fn an_event_log_hard_linked_to_a_file_outside_is_not_read_as_the_projects() {
    // A hard link puts an outside file's content under a project name; `status` (CLI and
    // MCP) and `events` must not show it as the run's.
    let (_d, root) = project_copy("test-suite-fixture");
    let outside = tempfile::tempdir_in(root.parent().unwrap()).unwrap();
    let secret = outside.path().join("ev.jsonl");
    std::fs::write(
        &secret,
        "{\"event_id\":\"evt_out\",\"event_type\":\"OUTSIDE_EVT\",\"timestamp\":\"2026-12-07T11:00:00.000Z\"}\n",
    )
    .unwrap();
    let events = root.join(".agentxchain/events.jsonl");
    let _ = std::fs::remove_file(&events);
    std::fs::hard_link(&secret, &events).unwrap();
    let out = std::process::Command::new(BIN)
        .args(["status", "--json"])
        .current_dir(&root)
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(!text.contains("OUTSIDE_EVT"), "{text}");
    let mut s = serve(&root);
    let r = parsed(&s.request(
        1,
        "tools/call",
        json!({"name": "agentxchain_events", "arguments": {}}),
    ));
    assert_eq!(r["ok"], false, "{r}");
    assert!(r["error"].as_str().unwrap().contains("a hard link"), "{r}");
    assert!(!r.to_string().contains("OUTSIDE_EVT"), "{r}");
}
