//! The stale-turn watchdog: a turn whose process died with the command that ran it is found by
//! the next `resume` or `step` (recorded, the run blocked, the reissue command named) and shown
//! by `status` without writing; a person's manual turn and a turn whose worker still runs are
//! never judged.

mod support;

use serde_json::{Value, json};
use support::project::Project;
use support::*;

const LONG_AGO: &str = "2026-01-01T00:00:00.000Z";

/// A project whose pm runs as a `local_cli` agent, its turn dispatched, then edited by `edit`
/// as a process that died would have left it.
fn dead_turn(edit: impl FnOnce(&mut Value)) -> (Project, String) {
    let p = Project::new();
    p.config(|c| {
        c["roles"]["pm"]["write_authority"] = json!("authoritative");
        c["runtimes"]["manual-pm"] =
            json!({"type": "local_cli", "command": ["true"], "prompt_transport": "stdin"});
    });
    p.ok(&["resume"]);
    let (turn, _) = p.active_turn();
    let mut s = p.state();
    edit(&mut s["active_turns"][&turn]);
    p.write(
        ".agentxchain/state.json",
        &serde_json::to_string_pretty(&s).unwrap(),
    );
    // The turn's events are as old as the turn.
    let log = p.root.join(".agentxchain/events.jsonl");
    let old: Vec<String> = std::fs::read_to_string(&log)
        .unwrap()
        .lines()
        .map(|l| {
            let mut e: Value = serde_json::from_str(l).unwrap();
            e["timestamp"] = json!(LONG_AGO);
            e.to_string()
        })
        .collect();
    std::fs::write(&log, old.join("\n") + "\n").unwrap();
    (p, turn)
}

fn events(p: &Project) -> Vec<String> {
    std::fs::read_to_string(p.root.join(".agentxchain/events.jsonl"))
        .unwrap()
        .lines()
        .map(|l| {
            serde_json::from_str::<Value>(l).unwrap()["event_type"]
                .as_str()
                .unwrap()
                .to_owned()
        })
        .collect()
}

#[test]
fn a_turn_that_never_started_is_a_ghost_status_shows_it_and_resume_records_it() {
    let (p, turn) = dead_turn(|t| {
        t["dispatched_at"] = json!(LONG_AGO);
    });
    // status shows the verdict and writes nothing.
    let before = hash_tree(&p.root);
    let v: Value = serde_json::from_str(&p.ok(&["status", "--json"])).unwrap();
    assert_eq!(v["ghost_turns"][0]["turn_id"], turn);
    assert_eq!(v["ghost_turns"][0]["failure_type"], "runtime_spawn_failed");
    assert_eq!(v["state"]["status"], "blocked");
    assert_eq!(v["state"]["active_turns"][&turn]["status"], "failed_start");
    let text = p.ok(&["status"]);
    assert!(
        text.contains("  ⚠ Ghost turn detected — subprocess never started\n"),
        "{text}"
    );
    assert_eq!(hash_tree(&p.root), before, "status wrote");

    let out = p.fails(&["resume"]);
    assert!(out.starts_with(&format!("Ghost turn detected — subprocess never started.\n\n  Turn:    {turn} (pm)\n  Runtime: manual-pm\n  Age:     ")), "{out}");
    assert!(out.ends_with(&format!("s with no subprocess output\n  Recover: agentxchain reissue-turn --turn {turn} --reason ghost\n\n")), "{out}");
    let s = p.state();
    assert_eq!(s["status"], "blocked");
    assert_eq!(s["blocked_on"], format!("turn:failed_start:{turn}"));
    assert_eq!(
        s["active_turns"][&turn]["failed_start_reason"],
        "runtime_spawn_failed"
    );
    assert!(s["budget_reservations"].get(&turn).is_none());
    let e = events(&p);
    assert_eq!(
        &e[e.len() - 3..],
        ["turn_start_failed", "runtime_spawn_failed", "run_blocked"]
    );
    // What it names recovers.
    p.ok(&["reissue-turn", "--turn", &turn, "--reason", "ghost"]);
}

#[test]
fn a_running_turn_silent_past_the_threshold_is_stalled_by_step() {
    let (p, turn) = dead_turn(|t| {
        t["status"] = json!("running");
        t["started_at"] = json!(LONG_AGO);
        t["first_output_at"] = json!(LONG_AGO);
        t["first_output_stream"] = json!("stdout");
        t["worker_pid"] = json!(i32::MAX);
    });
    let out = p.fails(&["step", "--resume"]);
    assert!(
        out.starts_with(&format!("Stale turn detected.\n\n  Turn:    {turn} (pm)\n")),
        "{out}"
    );
    assert!(
        out.contains(&format!(
            "m with no output\n  Recover: agentxchain reissue-turn --turn {turn} --reason stale\n"
        )),
        "{out}"
    );
    let s = p.state();
    assert_eq!(s["blocked_on"], format!("turn:stalled:{turn}"));
    let t = &s["active_turns"][&turn];
    assert_eq!(t["status"], "stalled");
    assert_eq!(t["stalled_previous_status"], "running");
    assert_eq!(t["stalled_threshold_ms"], 600000);
    let e = events(&p);
    assert_eq!(&e[e.len() - 2..], ["turn_stalled", "run_blocked"]);
}

#[test]
fn a_person_s_manual_turn_and_a_turn_whose_worker_runs_are_never_judged() {
    // The manual pm (the template's own runtime), dispatched long ago.
    let p = Project::new();
    p.ok(&["resume"]);
    let (turn, _) = p.active_turn();
    let mut s = p.state();
    s["active_turns"][&turn]["dispatched_at"] = json!(LONG_AGO);
    p.write(
        ".agentxchain/state.json",
        &serde_json::to_string_pretty(&s).unwrap(),
    );
    let v: Value = serde_json::from_str(&p.ok(&["status", "--json"])).unwrap();
    assert_eq!(v["ghost_turns"], json!([]));
    let out = p.fails(&["resume"]);
    assert!(out.starts_with("A turn is already active:"), "{out}");
    assert_eq!(p.state()["status"], "active");

    // An api_proxy turn (this build dispatches none; a person completes it), long dispatched.
    let p = Project::new();
    p.config(|c| {
        c["roles"]["pm"]["write_authority"] = json!("proposed");
        c["runtimes"]["manual-pm"] = json!({"type": "api_proxy", "provider": "anthropic", "model": "claude-x", "auth_env": "ANTHROPIC_API_KEY"});
    });
    p.ok(&["resume"]);
    let (turn, _) = p.active_turn();
    let mut s = p.state();
    s["active_turns"][&turn]["dispatched_at"] = json!(LONG_AGO);
    p.write(
        ".agentxchain/state.json",
        &serde_json::to_string_pretty(&s).unwrap(),
    );
    let v: Value = serde_json::from_str(&p.ok(&["status", "--json"])).unwrap();
    assert_eq!(v["ghost_turns"], json!([]));
    let out = p.fails(&["resume"]);
    assert!(out.starts_with("A turn is already active:"), "{out}");

    // A local_cli turn whose worker is alive, silent for hours.
    let mut worker = std::process::Command::new("sleep")
        .arg("30")
        .spawn()
        .unwrap();
    let pid = worker.id();
    let (q, turn) = dead_turn(|t| {
        t["status"] = json!("running");
        t["started_at"] = json!(LONG_AGO);
        t["worker_pid"] = json!(pid);
    });
    let out = q.fails(&["resume"]);
    assert!(out.starts_with("A turn is already active:"), "{out}");
    assert_eq!(q.state()["active_turns"][&turn]["status"], "running");
    worker.kill().unwrap();
    worker.wait().unwrap();
}
