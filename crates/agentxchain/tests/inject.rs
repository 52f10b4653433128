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
    let out = p.ok(&["inject", "Fix the sidebar ordering", "--acceptance", "sidebar sorted, tests pass"]);
    assert!(out.starts_with("\n  Injected\n  Intent:   intent_"), "{out}");
    assert!(out.contains("  Priority: p0\n  Status:   approved\n  Charter:  Fix the sidebar ordering\n\n  ⚡ Preemption marker written\n"), "{out}");
    let i = &intents(&p)[0];
    assert_eq!(i["status"], "approved");
    assert_eq!(i["acceptance_contract"], serde_json::json!(["sidebar sorted", "tests pass"]));
    assert_eq!(i["cross_run_durable"], true, "approved before any run");
    let marker: Value = serde_json::from_str(&std::fs::read_to_string(p.root.join(MARKER)).unwrap()).unwrap();
    assert_eq!(marker["intent_id"], i["intent_id"]);
    // The same item again is the same intent.
    let out = p.ok(&["inject", "Fix the sidebar ordering"]);
    assert!(out.starts_with("\n  ⚠ Duplicate injection — existing intent returned\n"), "{out}");
    let out = p.ok(&["inject", "Second thing", "--priority", "p2", "--json"]);
    let v: Value = serde_json::from_str(&out).unwrap();
    assert_eq!((v["ok"].as_bool(), v["priority"].as_str(), v["preemption_marker"].as_bool()), (Some(true), Some("p2"), Some(false)));
    assert_eq!(intents(&p).len(), 2);
    // The next turn takes the p0 item: planned, started, its contract in the bundle.
    let id = i["intent_id"].as_str().unwrap().to_owned();
    let out = p.ok(&["resume"]);
    assert!(out.contains(&format!("Bound approved intent to next turn: {id}\n")), "{out}");
    let state = p.state();
    let (turn, _) = p.active_turn();
    assert_eq!(state["active_turns"][&turn]["intake_context"]["intent_id"], id.as_str());
    let all = intents(&p);
    assert_eq!(all[0]["status"], "executing");
    assert_eq!(all[0]["approved_run_id"], state["run_id"], "bound to the run that started");
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
    assert!(text.contains("  Status:  priority_preempted\n  Turns:   0\n"), "{text}");
    // step (manual pm) binds it without saying so, as the reference.
    let mut child = std::process::Command::new(support::BIN)
        .args(["step", "--poll", "1"])
        .current_dir(&p.root)
        .stdout(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(20);
    while intents(&p)[0]["status"] != "executing" {
        assert!(std::time::Instant::now() < deadline, "the intent was not taken");
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    // SAFETY: signalling our own child.
    unsafe { libc::kill(child.id() as i32, libc::SIGINT) };
    assert!(child.wait().unwrap().success());
    let (turn, _) = p.active_turn();
    assert_eq!(p.state()["active_turns"][&turn]["intake_context"]["charter"], "Hotfix the login");
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
    p.write(MARKER, "{\"intent_id\": \"../../agentxchain\", \"priority\": \"p0\"}");
    let out = p.run(&["run"]);
    let text = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(!text.contains("priority_preempted"), "{text}");
    assert!(!p.root.join(MARKER).exists(), "the stale marker is cleared");
    assert!(p.root.join("agentxchain.json").exists());
}
