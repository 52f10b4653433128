//! `events` and `history` as the reference's CLI prints them: filters, JSONL and tables,
//! `--follow`, lineage — and what a hostile log cannot make them do.

mod support;

use std::io::{BufRead, BufReader, Write};
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use support::BIN;

fn run(dir: &Path, args: &[&str]) -> std::process::Output {
    Command::new(BIN)
        .args(args)
        .current_dir(dir)
        .output()
        .unwrap()
}

fn stdout(o: &std::process::Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

/// A governed project whose event log and run history hold exactly these lines.
fn project(events: &[Value], history: &[Value]) -> tempfile::TempDir {
    let d = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(d.path().join(".agentxchain")).unwrap();
    std::fs::write(
        d.path().join("agentxchain.json"),
        r#"{"schema_version":"1.0","project":{"id":"p","name":"p"},"roles":{}}"#,
    )
    .unwrap();
    let lines = |v: &[Value]| -> String { v.iter().map(|l| format!("{l}\n")).collect() };
    std::fs::write(d.path().join(".agentxchain/events.jsonl"), lines(events)).unwrap();
    std::fs::write(
        d.path().join(".agentxchain/run-history.jsonl"),
        lines(history),
    )
    .unwrap();
    d
}

fn ev(id: &str, kind: &str, ts: &str, extra: Value) -> Value {
    let mut e = json!({"event_id": id, "event_type": kind, "timestamp": ts,
        "run_id": "run_0123456789abcdef", "phase": "planning"});
    for (k, v) in extra.as_object().unwrap() {
        e[k] = v.clone();
    }
    e
}

fn sample() -> Vec<Value> {
    vec![
        ev("e1", "run_started", "2026-01-01T00:00:00.000Z", json!({})),
        ev(
            "e2",
            "turn_dispatched",
            "2026-01-01T00:01:00.000Z",
            json!({"turn": {"turn_id": "t1", "role_id": "pm"}, "intent_id": "intent_1_abcd"}),
        ),
        ev(
            "e3",
            "turn_rejected",
            "2026-01-02T00:00:00.000Z",
            json!({"payload": {"reason": "no tests", "failed_stage": "verification"}}),
        ),
        ev(
            "e4",
            "phase_entered",
            "2026-01-03T00:00:00.000Z",
            json!({"payload": {"from": "planning", "to": "implementation", "trigger": "auto"}}),
        ),
        ev(
            "e5",
            "human_escalation_raised",
            "2026-01-04T00:00:00.000Z",
            json!({"payload": {"escalation_id": "hesc_1", "type": "needs_decision", "service": "GitHub"}}),
        ),
    ]
}

fn ids(out: &str) -> Vec<String> {
    out.lines()
        .map(|l| {
            serde_json::from_str::<Value>(l).unwrap()["event_id"]
                .as_str()
                .unwrap()
                .to_owned()
        })
        .collect()
}

#[test]
fn events_filter_by_type_since_and_limit_and_print_the_log_s_own_lines() {
    let d = project(&sample(), &[]);
    let p = d.path();
    let out = run(p, &["events", "--json"]);
    assert!(out.status.success());
    // Each line is the log's line, byte for byte.
    let log = std::fs::read_to_string(p.join(".agentxchain/events.jsonl")).unwrap();
    assert_eq!(stdout(&out), log);
    let o = run(p, &["events", "-j", "-t", "turn_rejected, run_started"]);
    assert_eq!(ids(&stdout(&o)), ["e1", "e3"]);
    let o = run(p, &["events", "-j", "--since", "2026-01-02T00:00:00Z"]);
    assert_eq!(ids(&stdout(&o)), ["e4", "e5"], "strictly after");
    let o = run(p, &["events", "-j", "--since", "2026-01-02"]);
    assert_eq!(ids(&stdout(&o)), ["e4", "e5"]);
    let o = run(p, &["events", "-j", "-l", "2"]);
    assert_eq!(ids(&stdout(&o)), ["e4", "e5"]);
    let o = run(p, &["events", "-j", "-l", "0", "--type", "turn_dispatched"]);
    assert_eq!(ids(&stdout(&o)), ["e2"]);
    // --dir (and --root) from anywhere.
    let elsewhere = tempfile::tempdir().unwrap();
    let o = Command::new(BIN)
        .args(["events", "-j", "-d"])
        .arg(p.join(".agentxchain"))
        .current_dir(elsewhere.path())
        .output()
        .unwrap();
    assert_eq!(ids(&stdout(&o)).len(), 5);
}

#[test]
fn events_for_a_person_follow_the_reference_s_line() {
    let d = project(&sample(), &[]);
    let o = run(d.path(), &["events"]);
    let text = stdout(&o);
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(
        lines,
        [
            "2026-01-01T00:00:00.000Z  run_started             run_01234567  planning",
            "2026-01-01T00:01:00.000Z  turn_dispatched         run_01234567  planning [pm] intent=intent_1_abcd",
            "2026-01-02T00:00:00.000Z  turn_rejected           run_01234567  planning — no tests (verification)",
            "2026-01-03T00:00:00.000Z  phase_entered           run_01234567  planning planning → implementation (auto)",
            "2026-01-04T00:00:00.000Z  human_escalation_raised  run_01234567  planning hesc_1 [needs_decision] (GitHub)",
        ]
    );
    let o = run(d.path(), &["events", "--type", "gate_failed"]);
    assert_eq!(
        stdout(&o),
        "No events found.\n  (filtered by type: gate_failed)\n"
    );
    assert!(
        String::from_utf8_lossy(&o.stderr).is_empty(),
        "a known type is no note"
    );
    let o = run(d.path(), &["events", "--type", "turn_acepted"]);
    assert!(
        String::from_utf8_lossy(&o.stderr).contains("no event type \"turn_acepted\" is known"),
        "a typo is pointed out"
    );
}

#[test]
fn a_since_that_is_no_timestamp_is_refused_with_the_form_it_takes() {
    let d = project(&sample(), &[]);
    let o = run(d.path(), &["events", "--since", "yesterday"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(o.stdout.is_empty());
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        err.contains("--since \"yesterday\" is not an ISO-8601 timestamp")
            && err.contains("2026-01-02T03:04:05Z"),
        "{err}"
    );
}

#[test]
fn hostile_log_lines_reach_the_terminal_as_text_not_control() {
    let evil = ev(
        "e1",
        "turn_rejected",
        "2026-01-01T00:00:00Z",
        json!({"phase": "plan\u{1b}[2J", "payload": {"reason": "ok\u{202e}txt.exe\rforged line"}}),
    );
    let d = project(&[evil], &[]);
    std::fs::OpenOptions::new()
        .append(true)
        .open(d.path().join(".agentxchain/events.jsonl"))
        .unwrap()
        .write_all(b"not json\n[1]\n")
        .unwrap();
    let o = run(d.path(), &["events"]);
    assert!(o.status.success());
    let text = stdout(&o);
    assert_eq!(text.lines().count(), 1, "{text}");
    assert!(!text.contains('\u{1b}') && !text.contains('\u{202e}') && !text.contains('\r'));
    assert!(
        String::from_utf8_lossy(&o.stderr).contains("2 line(s) of the log are not JSON objects")
    );
}

#[test]
fn a_log_that_leads_out_of_the_project_or_is_a_fifo_is_refused_at_once() {
    let d = project(&[], &[]);
    let outside = tempfile::tempdir().unwrap();
    std::fs::write(
        outside.path().join("secret.jsonl"),
        "{\"event_id\":\"stolen\"}\n",
    )
    .unwrap();
    for file in ["events.jsonl", "run-history.jsonl"] {
        let path = d.path().join(".agentxchain").join(file);
        std::fs::remove_file(&path).unwrap();
        std::os::unix::fs::symlink(outside.path().join("secret.jsonl"), &path).unwrap();
    }
    for cmd in [vec!["events", "-j"], vec!["history", "-j"]] {
        let o = run(d.path(), &cmd);
        assert_eq!(o.status.code(), Some(1), "{cmd:?}");
        assert!(!stdout(&o).contains("stolen"), "{cmd:?}");
        assert!(
            String::from_utf8_lossy(&o.stderr).contains("Cannot read .agentxchain/"),
            "{cmd:?}"
        );
    }
    let path = d.path().join(".agentxchain/events.jsonl");
    std::fs::remove_file(&path).unwrap();
    let c = std::ffi::CString::new(path.to_str().unwrap()).unwrap();
    // SAFETY: mkfifo(3) reads the NUL-terminated path only.
    assert_eq!(unsafe { mkfifo(c.as_ptr(), 0o644) }, 0);
    let t = Instant::now();
    let o = run(d.path(), &["events"]);
    assert_eq!(o.status.code(), Some(1));
    assert!(
        t.elapsed() < Duration::from_secs(5),
        "never waits on a FIFO"
    );
}

unsafe extern "C" {
    fn mkfifo(path: *const std::ffi::c_char, mode: u32) -> i32;
}

/// Reads lines from `r` until `want` of them arrived (or the deadline passed).
fn lines_from(r: &mut impl BufRead, want: usize) -> Vec<String> {
    let mut got = Vec::new();
    while got.len() < want {
        let mut l = String::new();
        if r.read_line(&mut l).unwrap() == 0 {
            break;
        }
        got.push(l.trim_end().to_owned());
    }
    got
}

#[test]
fn follow_prints_each_appended_event_once_holding_a_partial_line_until_it_ends() {
    let d = project(&sample()[..2], &[]);
    let log = d.path().join(".agentxchain/events.jsonl");
    let mut child = Command::new(BIN)
        .args([
            "events",
            "--follow",
            "--json",
            "--type",
            "turn_rejected,run_started",
        ])
        .current_dir(d.path())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut out = BufReader::new(child.stdout.take().unwrap());
    let head = lines_from(&mut out, 2);
    assert!(head[0].contains("\"e1\""), "{head:?}");
    assert_eq!(head[1], "Watching for events... (Ctrl+C to stop)");
    let mut f = std::fs::OpenOptions::new().append(true).open(&log).unwrap();
    let e3 = sample()[2].to_string();
    let (a, b) = e3.split_at(20);
    // Half a line, then the rest after a pause: printed once, whole.
    f.write_all(a.as_bytes()).unwrap();
    f.flush().unwrap();
    std::thread::sleep(Duration::from_millis(600));
    f.write_all(format!("{b}\n").as_bytes()).unwrap();
    // An event the filter drops, then one it keeps.
    writeln!(f, "{}", sample()[3]).unwrap();
    writeln!(
        f,
        "{}",
        ev("e9", "run_started", "2026-02-01T00:00:00Z", json!({}))
    )
    .unwrap();
    let got = lines_from(&mut out, 2);
    assert_eq!(ids(&got.join("\n")), ["e3", "e9"]);
    // Truncated (rotated): read again from its start.
    std::fs::write(
        &log,
        format!(
            "{}\n",
            ev("e10", "run_started", "2026-03-01T00:00:00Z", json!({}))
        ),
    )
    .unwrap();
    let got = lines_from(&mut out, 1);
    assert_eq!(ids(&got.join("\n")), ["e10"]);
    child.kill().unwrap();
    child.wait().unwrap();
}

fn run_entry(id: &str, status: &str, extra: Value) -> Value {
    let mut e = json!({"schema_version": "0.1", "run_id": id, "status": status,
        "phases_completed": ["planning", "implementation"], "total_turns": 3,
        "total_cost_usd": 1.5, "duration_ms": 125000, "recorded_at": "2026-01-05T10:20:30.000Z",
        "provenance": {"trigger": "manual", "parent_run_id": null}});
    for (k, v) in extra.as_object().unwrap() {
        e[k] = v.clone();
    }
    e
}

#[test]
fn history_prints_the_reference_s_enriched_array_and_table() {
    let d = project(
        &[],
        &[
            run_entry("run_aaaaaaaaaaaaaaaa", "completed", json!({})),
            run_entry(
                "run_bbbbbbbbbbbbbbbb",
                "blocked",
                json!({"retrospective": {"headline": "Waiting on\n credentials", "next_operator_action": "Rotate the key, then resume"},
                       "provenance": {"trigger": "continuation", "parent_run_id": "run_aaaaaaaaaaaaaaaa"},
                       "inheritance_snapshot": {"recent_decisions": [{"id": "DEC-1"}]}}),
            ),
        ],
    );
    let p = d.path();
    let o = run(p, &["history", "--json"]);
    let v: Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(v[0]["run_id"], "run_bbbbbbbbbbbbbbbb", "newest first");
    assert_eq!(v[0]["inheritable"], true);
    assert_eq!(
        v[0]["outcome_summary"],
        json!({"label": "operator", "status": "blocked", "next_action": "Rotate the key, then resume"})
    );
    assert_eq!(
        v[1]["outcome_summary"],
        json!({"label": "clean", "status": "completed", "next_action": null})
    );
    let o = run(p, &["history", "-j", "-s", "completed"]);
    let v: Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(v.as_array().unwrap().len(), 1);
    let o = run(p, &["history", "-s", "failed"]);
    assert_eq!(
        stdout(&o),
        "No run history found.\n  (filtered by status: failed)\n"
    );
    let text = stdout(&run(p, &["history"]));
    let lines: Vec<&str> = text.lines().collect();
    assert!(lines[0].starts_with("#    Run ID         Status      Outcome     Trigger        Ctx  Phases   Turns  Cost       Duration   Date                 Headline"), "{text}");
    assert!(lines[1].chars().all(|c| c == '─'));
    assert!(
        lines[2].starts_with("1    run_bbbbbbbb   blocked     operator    continuation   ✓    2        3      $1.5000    2m 5s      2026-01-05 10:20:30  Waiting on credentials"),
        "{text}"
    );
    assert_eq!(lines[3], "     next: Rotate the key, then resume");
    assert!(lines[4].starts_with("2    run_aaaaaaaa   completed   clean       manual         —"));
    assert_eq!(*lines.last().unwrap(), "2 run(s) shown");
}

#[test]
fn history_lineage_walks_back_to_the_first_run() {
    let d = project(
        &[],
        &[
            run_entry("run_a", "completed", json!({})),
            run_entry(
                "run_b",
                "completed",
                json!({"provenance": {"trigger": "continuation", "parent_run_id": "run_a"}}),
            ),
        ],
    );
    let o = run(d.path(), &["history", "--lineage", "run_b", "--json"]);
    let v: Value = serde_json::from_slice(&o.stdout).unwrap();
    let chain: Vec<_> = v
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["run_id"].as_str().unwrap())
        .collect();
    assert_eq!(chain, ["run_a", "run_b"]);
    let text = stdout(&run(d.path(), &["history", "--lineage", "run_b"]));
    assert!(
        text.starts_with("Run Lineage for run_b:\n  run_a  completed  planning,implementation"),
        "{text}"
    );
    assert!(text.contains("\n  └─ run_b  completed"), "{text}");
    assert!(text.contains("(continuation from run_a)"), "{text}");
    let o = run(d.path(), &["history", "--lineage", "run_x"]);
    assert_eq!(o.status.code(), Some(1));
    assert_eq!(
        String::from_utf8_lossy(&o.stderr),
        "Run run_x not found in run history.\n"
    );
}
