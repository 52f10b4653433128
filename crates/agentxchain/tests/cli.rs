//! The `agentxchain` binary answers --version and --help.

use std::process::Command;

const BIN: &str = env!("CARGO_BIN_EXE_agentxchain");

#[test]
fn version_help_and_usage_errors() {
    mcp_testkit::assert_cli_basics(BIN, "agentxchain", env!("CARGO_PKG_VERSION"));
}

mod support;

use std::path::Path;

use mcp_testkit::tool_text;
use serde_json::{Value, json};

fn run_in(dir: &Path, args: &[&str]) -> std::process::Output {
    Command::new(BIN)
        .args(args)
        .current_dir(dir)
        .output()
        .unwrap()
}

fn mcp_tool(root: &Path, name: &str, args: Value) -> Value {
    let mut s = support::serve(root);
    let r = s.request(1, "tools/call", json!({"name": name, "arguments": args}));
    serde_json::from_str(tool_text(&r["result"])).unwrap()
}

#[test]
fn read_commands_print_what_the_mcp_tools_return() {
    for fixture in [
        "scratch-blocked-hesc",
        "scratch-completed-run",
        "test-suite-fixture",
    ] {
        let (_d, root) = support::project_copy(fixture);
        // `status --json`: the reference's object, telling what the tool tells of the run —
        // and of a blocked one, the escalation and the command that resolves it.
        let out = run_in(&root, &["status", "--json"]);
        assert!(out.status.success());
        let cli: Value = serde_json::from_slice(&out.stdout).unwrap();
        let tool = mcp_tool(&root, "agentxchain_status", json!({}));
        for k in ["run_id", "phase", "status", "blocked_on"] {
            let cli_v = cli["state"].get(k).cloned().unwrap_or(Value::Null);
            assert_eq!(cli_v, tool[k], "{fixture} {k}");
        }
        if let Some(e) = tool.get("escalation") {
            assert_eq!(
                cli["human_escalation"]["escalation_id"], e["escalation_id"],
                "{fixture}"
            );
            assert_eq!(
                cli["human_escalation"]["resolution_command"], e["resolution_command"],
                "{fixture}"
            );
            let text = String::from_utf8_lossy(&run_in(&root, &["status"]).stdout).into_owned();
            let unblock = format!("  Unblock:  {}", e["resolution_command"].as_str().unwrap());
            assert!(text.contains(&unblock), "{fixture}: {text}");
        }
        // `events --json`: the tool's events, one JSON object per line (the reference's JSONL).
        for (cmd, args) in [
            (vec!["events", "--json"], json!({})),
            (
                vec!["events", "--json", "--limit", "2"],
                json!({"limit": 2}),
            ),
        ] {
            let out = run_in(&root, &cmd);
            assert!(out.status.success(), "{cmd:?}");
            let lines: Vec<Value> = String::from_utf8_lossy(&out.stdout)
                .lines()
                .map(|l| serde_json::from_str(l).unwrap())
                .collect();
            let tool = mcp_tool(&root, "agentxchain_events", args);
            assert_eq!(json!(lines), tool["events"], "{fixture} {cmd:?}");
        }
        // `history --json`: the tool's entries, each with what the reference derives.
        for (cmd, args) in [
            (vec!["history", "--json"], json!({})),
            (
                vec!["history", "--json", "--limit", "1"],
                json!({"limit": 1}),
            ),
        ] {
            let out = run_in(&root, &cmd);
            assert!(out.status.success(), "{cmd:?}");
            let mut printed: Value = serde_json::from_slice(&out.stdout).unwrap();
            for e in printed.as_array_mut().unwrap() {
                let e = e.as_object_mut().unwrap();
                assert!(e.remove("inheritable").unwrap().is_boolean());
                assert!(e.remove("outcome_summary").unwrap()["label"].is_string());
            }
            let tool = mcp_tool(&root, "agentxchain_history", args);
            assert_eq!(printed, tool["entries"], "{fixture} {cmd:?}");
        }
    }
}

#[test]
fn read_commands_take_root_and_explain_a_missing_project() {
    let (_d, root) = support::project_copy("test-suite-fixture");
    let nested = root.join(".agentxchain");
    let out = Command::new(BIN)
        .args(["status", "--root"])
        .arg(&nested)
        .output()
        .unwrap();
    assert!(out.status.success());
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("\n  Run:      active\n"), "{text}");
    let out = Command::new(BIN)
        .args(["status", "--json", "-d"])
        .arg(&nested)
        .output()
        .unwrap();
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["state"]["run_id"], "run_mcp_test_001");

    let empty = tempfile::tempdir().unwrap();
    let out = run_in(empty.path(), &["status"]);
    assert_eq!(out.status.code(), Some(1));
    assert_eq!(
        String::from_utf8_lossy(&out.stdout),
        "No agentxchain.json found. Run `agentxchain init` first.\n"
    );
    for cmd in ["events", "history"] {
        let out = run_in(empty.path(), &[cmd, "--json"]);
        assert_eq!(out.status.code(), Some(1), "{cmd}");
        assert!(out.stdout.is_empty(), "{cmd}");
        assert_eq!(
            String::from_utf8_lossy(&out.stderr),
            "No AgentXchain project found. Run this inside a governed project.\n"
        );
    }
}

#[test]
fn events_limit_zero_prints_all() {
    let (_d, root) = support::project_copy("scratch-completed-run");
    let out = run_in(&root, &["events", "--json", "--limit", "0"]);
    assert_eq!(String::from_utf8_lossy(&out.stdout).lines().count(), 24);
    let out = run_in(&root, &["events", "--limit", "2"]);
    let text = String::from_utf8_lossy(&out.stdout);
    assert_eq!(text.lines().count(), 2, "{text}");
}

#[test]
fn intake_record_usage_errors() {
    let (_d, root) = support::project_copy("test-suite-fixture");
    for (args, message) in [
        (
            vec!["intake", "record"],
            "one of --file, --stdin, or --source is required",
        ),
        (
            vec!["intake", "record", "--source", "manual"],
            "--source requires --signal",
        ),
        (
            vec![
                "intake",
                "record",
                "--source",
                "manual",
                "--signal",
                "{\"a\":1}",
            ],
            "--source requires --evidence",
        ),
        (
            vec![
                "intake",
                "record",
                "--source",
                "email",
                "--signal",
                "{}",
                "--evidence",
                "{\"type\":\"text\"}",
            ],
            "source must be one of: manual, ci_failure, git_ref_change, schedule, vision_scan, vision_idle_expansion; signal must be a non-empty object; evidence value must be a non-empty string",
        ),
    ] {
        let out = run_in(&root, &args);
        assert_eq!(out.status.code(), Some(1), "{args:?}");
        assert_eq!(String::from_utf8_lossy(&out.stdout).trim(), message);
    }
    let out = run_in(&root, &["intake", "record", "--title", "x"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("--title"));
    let empty = tempfile::tempdir().unwrap();
    let out = run_in(empty.path(), &["intake", "record", "--source", "manual"]);
    assert_eq!(out.status.code(), Some(2));
    assert_eq!(
        String::from_utf8_lossy(&out.stdout).trim(),
        "agentxchain.json not found"
    );
    assert!(!root.join(".agentxchain/intake").exists());
}

#[test]
fn intake_record_from_flags_file_and_stdin_with_dedupe() {
    let (_d, root) = support::project_copy("test-suite-fixture");
    let out = run_in(
        &root,
        &[
            "intake",
            "record",
            "--source",
            "ci_failure",
            "--signal",
            r#"{"job":"build","run":7}"#,
            "--evidence",
            r#"[{"type":"url","value":"https://ci/7"}]"#,
            "--category",
            "ci",
            "--json",
        ],
    );
    assert!(out.status.success());
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["deduplicated"], false);
    assert_eq!(v["event"]["category"], "ci");
    assert_eq!(v["intent"]["status"], "detected");
    let key = v["event"]["dedup_key"].as_str().unwrap().to_owned();
    assert!(key.starts_with("ci_failure:") && key.len() == "ci_failure:".len() + 16);

    // The same source and signal from a file: deduplicated, nothing new written.
    let payload = json!({"source": "ci_failure", "signal": {"run": 7, "job": "build"}, "evidence": [{"type": "text", "value": "again"}]});
    std::fs::write(root.join("payload.json"), payload.to_string()).unwrap();
    let out = run_in(&root, &["intake", "record", "--file", "payload.json", "-j"]);
    let v2: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v2["deduplicated"], true);
    assert_eq!(v2["event"]["event_id"], v["event"]["event_id"]);
    assert_eq!(
        std::fs::read_dir(root.join(".agentxchain/intake/events"))
            .unwrap()
            .count(),
        1
    );

    let mut child = Command::new(BIN)
        .args(["intake", "record", "--stdin"])
        .current_dir(&root)
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    use std::io::Write;
    child.stdin.take().unwrap().write_all(br#"{"source":"manual","signal":{"title":"from stdin"},"evidence":[{"type":"file","value":"README.md"}]}"#).unwrap();
    let out = child.wait_with_output().unwrap();
    assert!(out.status.success());
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.contains("Recorded event evt_") && text.contains("Created intent intent_"),
        "{text}"
    );
    assert_eq!(
        std::fs::read_dir(root.join(".agentxchain/intake/intents"))
            .unwrap()
            .count(),
        2
    );

    let out = run_in(&root, &["intake", "record", "--stdin"]);
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stdout).starts_with("standard input is not valid JSON"));
}
