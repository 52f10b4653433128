//! The run's budget, driven by this binary alone: a turn whose cost spends
//! `budget.per_run_max_usd` blocks the run on `budget:exhausted` with a human escalation (or
//! warns, under `on_exceed: warn`); the recovery it prints (`agentxchain config --set
//! budget.per_run_max_usd <usd>`, then `agentxchain resume`) is run as printed. And `config`
//! itself: its reads, its refusals, and the attacks on its writes (an agent inside its turn,
//! a link out, concurrent writers, an invalid value).

mod support;

use std::process::Command;

use serde_json::{Value, json};
use support::BIN;
use support::project::{Project, git};

const SPEC: &str = "# System Spec\n\n## Purpose\n\nGreet.\n\n## Interface\n\n`hello.sh`\n\n## Behavior\n\nPrints hello.\n\n## Error Cases\n\nNone.\n\n## Acceptance Tests\n\n- [x] prints hello\n\n## Open Questions\n\n- None.\n";
const SIGNOFF: &str = "# PM Signoff\n\nApproved: YES\n\n## Discovery Checklist\n- [x] Target user defined\n- [x] Core pain point defined\n- [x] Core workflow defined\n- [x] MVP scope defined\n- [x] Out-of-scope list defined\n- [x] Success metric defined\n";

/// A project whose run may spend $1 and whose turns reserve $0.50, with its first turn
/// assigned.
fn budgeted(on_exceed: &str) -> Project {
    budgeted_with(on_exceed, |_| {})
}

fn budgeted_with(on_exceed: &str, edit: impl FnOnce(&mut Value)) -> Project {
    let p = Project::new();
    p.config(|c| {
        c["budget"] =
            json!({"per_turn_max_usd": 0.5, "per_run_max_usd": 1, "on_exceed": on_exceed});
        edit(c);
    });
    p.ok(&["resume"]);
    p
}

fn cost(usd: f64) -> Value {
    json!({"cost": {"input_tokens": 1, "output_tokens": 1, "usd": usd}})
}

fn event_types(p: &Project) -> Vec<String> {
    p.jsonl(".agentxchain/events.jsonl")
        .iter()
        .map(|e| e["event_type"].as_str().unwrap().to_owned())
        .collect()
}

fn state_bytes(p: &Project) -> Vec<u8> {
    std::fs::read(p.root.join(".agentxchain/state.json")).unwrap()
}

/// The command in a recovery's `Action:` line, with `<usd>` filled in.
fn action_command(out: &str, usd: &str) -> Vec<String> {
    let line = out
        .lines()
        .find_map(|l| l.trim().strip_prefix("Action:"))
        .unwrap_or_else(|| panic!("no Action: line in {out}"));
    let cmd = line
        .trim()
        .strip_prefix("Increase budget with ")
        .and_then(|r| r.split(", then run").next())
        .unwrap_or_else(|| panic!("not the budget's recovery: {line}"));
    cmd.replace("<usd>", usd)
        .split_whitespace()
        .skip(1)
        .map(str::to_owned)
        .collect()
}

#[test]
fn a_turn_that_spends_the_budget_blocks_the_run_until_a_person_raises_it() {
    let p = budgeted("pause_and_escalate");
    let (turn, _) = p.active_turn();
    p.agent_turn(&[(".planning/PM_SIGNOFF.md", SIGNOFF)], cost(1.5));
    let out = p.run(&["accept-turn"]);
    assert!(out.status.success());
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stdout.contains(
            "  Budget warning: Actual cost $1.50 exceeded reservation $0.50 for this turn\n"
        ),
        "{stdout}"
    );
    assert!(
        stdout.contains("  Reason:   budget_exhausted\n"),
        "{stdout}"
    );
    assert!(
        stdout.contains(
            "  Detail:   Run budget exhausted: spent $1.50 of $1.00 limit ($0.50 over)\n"
        ),
        "{stdout}"
    );
    assert!(
        stderr.contains("HUMAN ESCALATION RAISED: hesc_"),
        "{stderr}"
    );

    let s = p.state();
    assert_eq!(s["status"], "blocked");
    assert_eq!(s["blocked_on"], "budget:exhausted");
    assert_eq!(s["blocked_reason"]["category"], "budget_exhausted");
    assert_eq!(s["blocked_reason"]["turn_id"], json!(turn));
    assert_eq!(
        s["blocked_reason"]["recovery"]["recovery_action"],
        "Increase budget with agentxchain config --set budget.per_run_max_usd <usd>, then run agentxchain resume"
    );
    let bs = &s["budget_status"];
    assert_eq!(bs["spent_usd"], 1.5);
    assert_eq!(bs["remaining_usd"], -0.5);
    assert_eq!(bs["exhausted"], true);
    assert_eq!(bs["exhausted_after_turn"], json!(turn));
    assert_eq!(bs["exhausted_at"], s["blocked_reason"]["blocked_at"]);
    let types = event_types(&p);
    let at = types.iter().position(|t| t == "turn_accepted").unwrap();
    assert_eq!(
        types[at..],
        ["turn_accepted", "human_escalation_raised", "run_blocked"]
    );
    let blocked = p.jsonl(".agentxchain/events.jsonl").pop().unwrap();
    assert_eq!(blocked["payload"], json!({"category": "budget_exhausted"}));
    let history = p.jsonl(".agentxchain/run-history.jsonl");
    assert_eq!(history.len(), 1);
    assert_eq!(history[0]["status"], "blocked");
    assert_eq!(history[0]["blocked_reason"], "budget:exhausted");
    assert_eq!(
        history[0]["retrospective"]["terminal_reason"],
        "budget_exhausted"
    );
    let esc = p.jsonl(".agentxchain/human-escalations.jsonl");
    assert_eq!(esc.len(), 1);
    assert_eq!(esc[0]["blocked_on"], "budget:exhausted");

    // Resuming while the limit is still spent changes nothing: the block and its escalation
    // stay, and the refusal says what to do.
    let before = state_bytes(&p);
    let refused = p.fails(&["resume"]);
    assert_eq!(
        refused.trim_end(),
        "Cannot resume: run budget exhausted (spent $1.50 of $1.00 limit). Increase budget with agentxchain config --set budget.per_run_max_usd <usd>, then run agentxchain resume"
    );
    assert_eq!(state_bytes(&p), before);
    assert_eq!(p.jsonl(".agentxchain/human-escalations.jsonl").len(), 1);
    let id = esc[0]["escalation_id"].as_str().unwrap();
    p.fails(&["unblock", id]);
    assert_eq!(state_bytes(&p), before);
    let status = p.ok(&["status"]);
    assert!(
        status.contains(
            "Blocked:  BLOCKED — Run budget exhausted: spent $1.50 of $1.00 limit ($0.50 over)"
        ),
        "{status}"
    );

    // The recovery, run as printed.
    let set = action_command(&stdout, "3");
    assert_eq!(set, ["config", "--set", "budget.per_run_max_usd", "3"]);
    let done = p.ok(&set.iter().map(String::as_str).collect::<Vec<_>>());
    assert_eq!(
        done,
        "\n  ✓ Set budget.per_run_max_usd = 3\n    (was: 1)\n\n"
    );
    // `status` shows the recovery is ready and writes nothing (reads are pure).
    let before = state_bytes(&p);
    let status = p.ok(&["status"]);
    assert!(
        status.contains(
            "Detail:   Budget recovery ready: spent $1.50 of $3.00 limit ($1.50 remaining)"
        ),
        "{status}"
    );
    assert!(status.contains("Action:   Run agentxchain resume to assign the next turn"));
    let json_status: Value = serde_json::from_str(&p.ok(&["status", "--json"])).unwrap();
    assert_eq!(json_status["state"]["budget_status"]["remaining_usd"], 1.5);
    assert!(
        json_status["state"]["budget_status"]
            .get("exhausted")
            .is_none()
    );
    assert_eq!(state_bytes(&p), before);

    // Nothing is committed: the next turn is judged by the config in place when it started.
    let out = p.run(&["resume"]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stdout)
    );
    assert!(String::from_utf8_lossy(&out.stderr).contains(&format!(
        "HUMAN ESCALATION RESOLVED: {id}\n  Resolved via: resume\n"
    )));
    let s = p.state();
    assert_eq!(s["status"], "active");
    assert_eq!(s["blocked_on"], Value::Null);
    assert_eq!(
        s["budget_status"],
        json!({"spent_usd": 1.5, "remaining_usd": 1.5})
    );
    assert_eq!(s["active_turns"].as_object().unwrap().len(), 1);
    let esc = p.jsonl(".agentxchain/human-escalations.jsonl");
    assert_eq!(esc[1]["kind"], "resolved");
    assert_eq!(esc[1]["resolved_via"], "resume");
    p.agent_turn(&[], cost(0.25));
    p.ok(&["accept-turn"]);
    assert_eq!(p.state()["budget_status"]["spent_usd"], 1.75);

    // An agent that edits the config its turn is judged by is refused, the person's uncommitted
    // edit notwithstanding.
    p.ok(&["resume"]);
    let config = p.root.join("agentxchain.json");
    let text = std::fs::read_to_string(&config).unwrap();
    std::fs::write(
        &config,
        text.replace("\"per_run_max_usd\": 3", "\"per_run_max_usd\": 300"),
    )
    .unwrap();
    p.agent_turn(&[], cost(0.25));
    let out = p.fails(&["accept-turn"]);
    assert!(
        out.contains("agentxchain.json changed during the turn"),
        "{out}"
    );
}

#[test]
fn a_run_its_budget_blocks_decides_no_phase_transition() {
    let planning = [
        (".planning/PM_SIGNOFF.md", SIGNOFF),
        (".planning/SYSTEM_SPEC.md", SPEC),
    ];
    let p = budgeted("pause_and_escalate");
    let mut request = cost(2.0);
    request["phase_transition_request"] = json!("implementation");
    p.agent_turn(&planning, request);
    p.ok(&["accept-turn"]);
    let s = p.state();
    assert_eq!(s["status"], "blocked");
    assert_eq!(s["blocked_on"], "budget:exhausted");
    assert_eq!(s["phase"], "planning");
    assert_eq!(s["pending_phase_transition"], Value::Null);
    assert_eq!(s["last_gate_failure"], Value::Null);
    let types = event_types(&p);
    assert!(
        !types
            .iter()
            .any(|t| t.starts_with("phase_") || t.starts_with("gate_")),
        "{types:?}"
    );

    // The same turn within the budget advances (the policy auto-approves planning's exit):
    // the block is what stopped it.
    let q = budgeted("pause_and_escalate");
    let mut request = cost(0.5);
    request["phase_transition_request"] = json!("implementation");
    q.agent_turn(&planning, request);
    q.ok(&["accept-turn"]);
    assert_eq!(q.state()["phase"], "implementation");
}

#[test]
fn a_turn_asking_for_a_person_is_blocked_on_its_question_not_the_budget() {
    let p = budgeted("pause_and_escalate");
    let mut request = cost(3.0);
    request["status"] = json!("needs_human");
    request["needs_human_reason"] = json!("which database?");
    // No gate file written: an unblock then answers the question, not the planning gate
    // (standing_gate.rs).
    p.agent_turn(&[], request);
    p.ok(&["accept-turn"]);
    let s = p.state();
    assert_eq!(s["blocked_on"], "human:which database?");
    assert_eq!(
        s["budget_status"],
        json!({"spent_usd": 3, "remaining_usd": -2, "exhausted": true})
    );
    let esc = p.jsonl(".agentxchain/human-escalations.jsonl");
    assert_eq!(esc.len(), 1);
    // Answering the question does not make the spent budget go on: unblocking would leave an
    // active run no turn can be assigned to.
    let before = state_bytes(&p);
    let id = esc[0]["escalation_id"].as_str().unwrap();
    let out = p.fails(&["unblock", id]);
    assert_eq!(
        out,
        "Cannot resume: run budget exhausted (spent $3.00 of $1.00 limit). Increase budget with agentxchain config --set budget.per_run_max_usd <usd>, then run agentxchain resume\n"
    );
    assert_eq!(state_bytes(&p), before);
    p.ok(&["config", "--set", "budget.per_run_max_usd", "10"]);
    p.ok(&["unblock", id]);
    assert_eq!(p.state()["status"], "active");
}

#[test]
fn a_retried_turn_does_not_launder_the_agents_config_edit() {
    let p = budgeted("pause_and_escalate");
    let config = p.root.join("agentxchain.json");
    let text = std::fs::read_to_string(&config).unwrap();
    let raised = text.replace("\"per_run_max_usd\": 1,", "\"per_run_max_usd\": 1000,");
    assert_ne!(raised, text);
    // The agent raises its own budget, then its turn is rejected and dispatched again: the
    // retry's baseline sees the edit as already there.
    std::fs::write(&config, &raised).unwrap();
    p.agent_turn(&[], cost(5.0));
    let out = p.fails(&["accept-turn"]);
    assert!(out.contains("agentxchain.json"), "{out}");
    let out = p.fails(&["reject-turn", "--reason", "retry"]);
    assert!(out.contains("agentxchain.json changed while turn"), "{out}");
    assert_eq!(p.state()["budget_status"]["spent_usd"], 0);
    // Nor does a person's `config --set` on top of it take the agent's edit on.
    let out = p.fails(&["config", "--set", "project.goal", "ship it"]);
    assert!(
        out.contains("has changes not made with `agentxchain config --set`"),
        "{out}"
    );
    assert_eq!(std::fs::read_to_string(&config).unwrap(), raised);
}

#[test]
fn a_person_may_set_the_config_while_a_turn_runs_and_before_a_code_writing_one() {
    // The person raises the budget while the pm's turn is active: the turn is accepted.
    let p = budgeted("pause_and_escalate");
    p.ok(&["config", "--set", "budget.per_run_max_usd", "5"]);
    p.agent_turn(&[(".planning/PM_SIGNOFF.md", SIGNOFF)], cost(1.5));
    p.ok(&["accept-turn"]);
    let s = p.state();
    assert_eq!(s["status"], "active");
    assert_eq!(s["budget_status"]["remaining_usd"], 3.5);
    let ledger = p.jsonl(".agentxchain/decision-ledger.jsonl");
    let change = ledger
        .iter()
        .find(|e| e["type"] == "config_change")
        .unwrap();
    assert_eq!(change["path"], "budget.per_run_max_usd");
    assert_eq!(change["value"], 5);
    assert_eq!(change["previous"], 1);
    assert_eq!(change["changed_by"], "operator");

    // A code-writing role's turn is assigned with the person's uncommitted config in place.
    let q = Project::new();
    q.config(|c| {
        c["routing"]["planning"]["entry_role"] = json!("dev");
        c["routing"]["planning"]["allowed_next_roles"] = json!(["dev", "pm", "human"]);
    });
    q.ok(&["config", "--set", "budget.per_run_max_usd", "20"]);
    let out = q.ok(&["resume"]);
    assert!(out.contains("Turn Assigned"), "{out}");
    assert_eq!(q.active_turn().1, "dev");
    // Another uncommitted edit is in the way, as before.
    let r = Project::new();
    r.config(|c| {
        c["routing"]["planning"]["entry_role"] = json!("dev");
        c["routing"]["planning"]["allowed_next_roles"] = json!(["dev", "pm", "human"]);
    });
    let config = r.root.join("agentxchain.json");
    let text = std::fs::read_to_string(&config).unwrap();
    let edited = text.replace("\"per_run_max_usd\": 50", "\"per_run_max_usd\": 51");
    assert_ne!(edited, text);
    std::fs::write(&config, edited).unwrap();
    let out = r.fails(&["resume"]);
    assert!(
        out.contains("uncommitted changes in actor-owned files: agentxchain.json"),
        "{out}"
    );
}

#[test]
fn acceptance_judges_the_turn_by_the_config_it_read_under_the_lock() {
    // A process swaps in a config that would let the phase advance on its own, holds the run's
    // lock while accept-turn starts, then puts the committed config back and lets go. The turn
    // is judged by the config in place once accept-turn holds the lock: a person's gate.
    let p = Project::new();
    p.config(|c| c["approval_policy"]["phase_transitions"]["rules"] = json!([]));
    p.ok(&["resume"]);
    p.agent_turn(
        &[
            (".planning/PM_SIGNOFF.md", SIGNOFF),
            (".planning/SYSTEM_SPEC.md", SPEC),
        ],
        json!({"phase_transition_request": "implementation"}),
    );
    let config = p.root.join("agentxchain.json");
    let committed = std::fs::read(&config).unwrap();
    let mut lax: Value = serde_json::from_slice(&committed).unwrap();
    lax["approval_policy"]["phase_transitions"]["default"] = json!("auto_approve");
    lax["gates"]["planning_signoff"]["requires_human_approval"] = json!(false);
    let lock = std::fs::File::open(p.root.join(".agentxchain")).unwrap();
    lock.lock().unwrap();
    std::fs::write(&config, serde_json::to_string_pretty(&lax).unwrap()).unwrap();
    let child = Command::new(BIN)
        .arg("accept-turn")
        .current_dir(&p.root)
        .stdout(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    std::thread::sleep(std::time::Duration::from_millis(600));
    std::fs::write(&config, &committed).unwrap();
    lock.unlock().unwrap();
    let out = child.wait_with_output().unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stdout)
    );
    let s = p.state();
    assert_eq!(s["phase"], "planning");
    assert_eq!(s["status"], "paused");
}

#[test]
fn warn_mode_goes_on_past_the_limit_and_says_so_every_turn() {
    let p = budgeted("warn");
    let (first, _) = p.active_turn();
    p.agent_turn(&[(".planning/PM_SIGNOFF.md", SIGNOFF)], cost(1.25));
    let out = p.ok(&["accept-turn"]);
    assert!(
        out.contains("  Budget warning: Budget exhausted: spent $1.25 of $1.00 limit ($0.25 over). Run continues in warn mode.\n"),
        "{out}"
    );
    let s = p.state();
    assert_eq!(s["status"], "active");
    assert_eq!(s["budget_status"]["warn_mode"], true);
    assert_eq!(s["budget_status"]["exhausted_after_turn"], json!(first));
    let warn = p
        .jsonl(".agentxchain/events.jsonl")
        .into_iter()
        .find(|e| e["event_type"] == "budget_exceeded_warn")
        .expect("a budget_exceeded_warn event");
    assert_eq!(warn["payload"]["limit_usd"], 1);
    assert_eq!(
        warn["payload"]["recovery_classification"],
        json!({"domain": "budget", "severity": "high", "outcome": "pending", "mechanism": "config_change"})
    );
    assert_eq!(warn["payload"]["remaining_usd"], -0.25);
    assert_eq!(warn["turn"]["turn_id"], json!(first));

    git(&p.root, &["add", "-A"]);
    git(&p.root, &["commit", "-qm", "signoff"]);
    let out = p.ok(&["resume"]);
    assert!(
        out.contains("\nWarning: Budget exhausted (spent $1.25 of $1.00 limit). Run continues in warn mode per on_exceed policy.\n"),
        "{out}"
    );
    p.agent_turn(&[], cost(0.25));
    let out = p.ok(&["accept-turn"]);
    assert!(
        out.contains("spent $1.50 of $1.00 limit ($0.50 over)"),
        "{out}"
    );
    let s = p.state();
    assert_eq!(s["budget_status"]["exhausted_after_turn"], json!(first));
    assert_eq!(
        event_types(&p)
            .iter()
            .filter(|t| *t == "budget_exceeded_warn")
            .count(),
        2
    );
}

#[test]
fn config_reads_values_by_path_and_refuses_what_it_cannot_read() {
    let p = Project::new();
    assert_eq!(p.ok(&["config", "--get", "project.name"]), "demo\n");
    assert_eq!(
        p.ok(&["config", "--get", "routing.planning.allowed_next_roles.0"]),
        "pm\n"
    );
    let roles: Value =
        serde_json::from_str(&p.ok(&["config", "--get", "routing.planning.allowed_next_roles"]))
            .unwrap();
    assert_eq!(roles, json!(["pm", "eng_director", "human"]));
    assert_eq!(
        p.fails(&["config", "--get", "nope.x"]),
        "  Config path not found: nope.x\n"
    );
    assert_eq!(
        p.fails(&["config", "--get", "roles.__proto__"]),
        "  Refusing to read reserved object path.\n"
    );
    assert_eq!(
        p.fails(&["config", "--get", "a", "--set", "b", "c"]),
        "  --get and --set are mutually exclusive.\n  Inspect a value with `agentxchain config --get <path>` or change it with `agentxchain config --set <path> <value>`.\n"
    );
    let whole: Value = serde_json::from_str(&p.ok(&["config", "--json"])).unwrap();
    let file: Value =
        serde_json::from_str(&std::fs::read_to_string(p.root.join("agentxchain.json")).unwrap())
            .unwrap();
    assert_eq!(whole, file);
    let shown = p.ok(&["config"]);
    assert!(shown.contains("  AgentXchain Governed Config\n"), "{shown}");
    assert!(shown.contains("  Roles:     4\n"), "{shown}");
    assert_eq!(
        p.fails(&["config", "--remove-agent", "pm"]).lines().next(),
        Some("  --remove-agent is legacy-only.")
    );
}

#[test]
fn config_set_writes_only_a_config_that_validates() {
    let p = Project::new();
    let path = p.root.join("agentxchain.json");
    let before = std::fs::read(&path).unwrap();
    for (args, said) in [
        (
            vec!["roles.pm.runtime", "nope"],
            "  Refusing to save invalid config: Role \"pm\" references unknown runtime \"nope\"\n",
        ),
        (
            vec!["budget.per_run_max_usd", "-1"],
            "  Refusing to save invalid config: budget.per_run_max_usd must be greater than 0 when provided, budget.per_turn_max_usd must be less than or equal to budget.per_run_max_usd when both are set\n",
        ),
        (
            vec!["project.name.x", "1"],
            "  Cannot set project.name.x: project.name is a string, not an object.\n",
        ),
        (
            vec!["project.name.x.y", "1"],
            "  Cannot set project.name.x.y: project.name is a string, not an object.\n",
        ),
        (
            vec!["routing.planning.allowed_next_roles.7.x", "1"],
            "  Cannot set routing.planning.allowed_next_roles.7.x: 7 is past the end of a list of 3.\n",
        ),
        (
            vec!["routing.planning.allowed_next_roles.9", "qa"],
            "  Cannot set routing.planning.allowed_next_roles.9: 9 is past the end of a list of 3.\n",
        ),
        (
            vec!["constructor.x", "1"],
            "  Refusing to write reserved object path.\n",
        ),
        (
            vec!["budget.per_run_max_usd"],
            "  Usage: agentxchain config --set <key> <value>\n  Example: agentxchain config --set project.goal \"Build a governed CLI\"\n",
        ),
    ] {
        let mut argv = vec!["config", "--set"];
        argv.extend(args);
        assert_eq!(p.fails(&argv), said, "{argv:?}");
        assert_eq!(std::fs::read(&path).unwrap(), before, "{argv:?} wrote");
    }
    assert_eq!(
        p.ok(&["config", "--set", "project.goal", "Build", "a", "thing"]),
        "\n  ✓ Set project.goal = Build a thing\n\n"
    );
    assert_eq!(
        p.ok(&["config", "--set", "budget.on_exceed", "warn"]),
        "\n  ✓ Set budget.on_exceed = warn\n    (was: pause_and_escalate)\n\n"
    );
    p.ok(&[
        "config",
        "--set",
        "gates.qa_ship_verdict.credentialed",
        "true",
    ]);
    p.ok(&["config", "--set", "budget.per_turn_max_usd", "2.5"]);
    let c: Value = serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
    assert_eq!(c["project"]["goal"], "Build a thing");
    assert_eq!(c["gates"]["qa_ship_verdict"]["credentialed"], true);
    assert_eq!(c["budget"]["per_turn_max_usd"], 2.5);
    // The new key goes last, as the reference writes it.
    let keys: Vec<&String> = c["project"].as_object().unwrap().keys().collect();
    assert_eq!(keys.last().unwrap().as_str(), "goal");
}

#[test]
fn an_agent_cannot_change_the_config_from_inside_its_turn() {
    let p = Project::new();
    p.ok(&["resume"]);
    let path = p.root.join("agentxchain.json");
    let before = std::fs::read(&path).unwrap();
    let out = Command::new(BIN)
        .args(["config", "--set", "budget.per_run_max_usd", "1000000"])
        .current_dir(&p.root)
        .env("AGENTXCHAIN_TURN_ID", "turn_0123456789abcdef")
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    assert!(
        String::from_utf8_lossy(&out.stdout).starts_with("config --set is a person's command"),
        "{}",
        String::from_utf8_lossy(&out.stdout)
    );
    assert_eq!(std::fs::read(&path).unwrap(), before);
    // Reading is anyone's.
    let out = Command::new(BIN)
        .args(["config", "--get", "budget.per_run_max_usd"])
        .current_dir(&p.root)
        .env("AGENTXCHAIN_TURN_ID", "turn_0123456789abcdef")
        .output()
        .unwrap();
    assert!(out.status.success());
}

#[test]
fn config_set_never_writes_through_a_link_out_of_the_project() {
    let p = Project::new();
    let outside = p._dir.path().join("outside.json");
    std::fs::copy(p.root.join("agentxchain.json"), &outside).unwrap();
    let before = std::fs::read(&outside).unwrap();
    std::fs::remove_file(p.root.join("agentxchain.json")).unwrap();
    std::os::unix::fs::symlink(&outside, p.root.join("agentxchain.json")).unwrap();
    let out = p.run(&["config", "--set", "project.goal", "pwned"]);
    assert_eq!(out.status.code(), Some(1));
    assert_eq!(std::fs::read(&outside).unwrap(), before);
}

#[test]
fn concurrent_config_writers_lose_no_update() {
    let p = Project::new();
    let children: Vec<_> = (0..8)
        .map(|i| {
            Command::new(BIN)
                .args([
                    "config",
                    "--set",
                    &format!("project.tag_{i}"),
                    &format!("v{i}"),
                ])
                .current_dir(&p.root)
                .stdout(std::process::Stdio::null())
                .spawn()
                .unwrap()
        })
        .collect();
    for mut c in children {
        assert!(c.wait().unwrap().success());
    }
    let c: Value =
        serde_json::from_str(&std::fs::read_to_string(p.root.join("agentxchain.json")).unwrap())
            .unwrap();
    for i in 0..8 {
        assert_eq!(c["project"][format!("tag_{i}")], format!("v{i}"), "{c}");
    }
}

fn raise_budget_in_file(p: &Project, to: u64) {
    let path = p.root.join("agentxchain.json");
    let mut c: Value = serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
    c["budget"]["per_run_max_usd"] = json!(to);
    std::fs::write(&path, serde_json::to_string_pretty(&c).unwrap() + "\n").unwrap();
}

#[test]
fn an_agents_commit_or_replace_ref_of_the_config_is_not_the_persons() {
    // The agent commits its raised budget: refused at acceptance; a person's unrelated
    // `config --set` does not take it on, and a retry does not launder it.
    let p = budgeted("pause_and_escalate");
    raise_budget_in_file(&p, 1000);
    git(&p.root, &["commit", "-qam", "tweak"]);
    p.agent_turn(&[], cost(5.0));
    let out = p.fails(&["accept-turn"]);
    assert!(out.contains("Detail:   agentxchain.json"), "{out}");
    let out = p.fails(&["config", "--set", "project.goal", "ship it"]);
    assert!(
        out.contains("has changes not made with `agentxchain config --set`"),
        "{out}"
    );
    let out = p.fails(&["reject-turn", "--reason", "retry"]);
    assert!(out.contains("agentxchain.json changed while turn"), "{out}");
    let out = p.fails(&["reissue-turn", "--reason", "again"]);
    assert!(out.contains("agentxchain.json changed while turn"), "{out}");
    assert_eq!(p.state()["budget_status"]["spent_usd"], 0);

    // The agent rewrites history with a replace ref instead: git is not shown it.
    let q = budgeted("pause_and_escalate");
    let (turn, _) = q.active_turn();
    let base = q.state()["active_turns"][&turn]["baseline"]["head_ref"]
        .as_str()
        .unwrap()
        .to_owned();
    raise_budget_in_file(&q, 1000);
    git(&q.root, &["add", "agentxchain.json"]);
    let tree = Command::new("git")
        .args(["write-tree"])
        .current_dir(&q.root)
        .output()
        .unwrap();
    let tree = String::from_utf8_lossy(&tree.stdout).trim().to_owned();
    let commit = Command::new("git")
        .args(["commit-tree", &tree, "-m", "init"])
        .env("GIT_AUTHOR_NAME", "a")
        .env("GIT_AUTHOR_EMAIL", "a@x.invalid")
        .env("GIT_COMMITTER_NAME", "a")
        .env("GIT_COMMITTER_EMAIL", "a@x.invalid")
        .current_dir(&q.root)
        .output()
        .unwrap();
    let commit = String::from_utf8_lossy(&commit.stdout).trim().to_owned();
    git(&q.root, &["replace", &base, &commit]);
    q.agent_turn(&[], cost(5.0));
    let out = q.fails(&["accept-turn"]);
    assert!(out.contains("agentxchain.json"), "{out}");
    assert_eq!(q.state()["budget_status"]["spent_usd"], 0);
}

#[test]
fn an_agent_that_reverts_the_persons_config_is_refused() {
    let p = Project::new();
    p.ok(&["config", "--set", "budget.per_run_max_usd", "3"]);
    p.ok(&["resume"]);
    git(&p.root, &["checkout", "--", "agentxchain.json"]);
    p.agent_turn(&[], cost(1.9));
    let out = p.fails(&["accept-turn"]);
    assert!(
        out.contains("agentxchain.json differs from the one committed when the turn started"),
        "{out}"
    );
    // The message says what the config was at dispatch: a person who undid their own edit
    // sets it again.
    let out = p.fails(&["reject-turn", "--reason", "retry"]);
    assert!(
        out.contains("agentxchain.json is not the config turn")
            && out.contains("set the value again with agentxchain config --set"),
        "{out}"
    );
}

#[test]
fn a_budget_blocked_run_does_not_resume_under_a_limit_an_agent_wrote() {
    let p = budgeted("pause_and_escalate");
    p.agent_turn(&[(".planning/PM_SIGNOFF.md", SIGNOFF)], cost(1.5));
    p.ok(&["accept-turn"]);
    raise_budget_in_file(&p, 1000);
    let before = state_bytes(&p);
    let out = p.fails(&["resume"]);
    assert!(
        out.contains("has changes not made with agentxchain config --set, and the budget a blocked run resumes under is a person's to set"),
        "{out}"
    );
    assert_eq!(state_bytes(&p), before);
}

#[test]
fn a_moment_of_broken_git_gives_no_turn_a_baseline_without_a_commit() {
    let p = Project::new();
    p.ok(&["config", "--set", "budget.per_run_max_usd", "100"]);
    p.ok(&["resume"]);
    let gitcfg = p.root.join(".git/config");
    let good = std::fs::read(&gitcfg).unwrap();
    let mut bad = good.clone();
    bad.extend_from_slice(b"[core]\n\trepositoryformatversion = 9\n");
    std::fs::write(&gitcfg, &bad).unwrap();
    let before = state_bytes(&p);
    let out = p.fails(&["reject-turn", "--reason", "r"]);
    assert!(out.contains("git cannot read this repository now"), "{out}");
    let out = p.fails(&["reissue-turn", "--reason", "ghost"]);
    assert!(out.contains("git cannot read this repository now"), "{out}");
    assert_eq!(state_bytes(&p), before);
    std::fs::write(&gitcfg, &good).unwrap();

    // Nor is a new turn assigned there, a review-only one included.
    let q = Project::new();
    let gitcfg = q.root.join(".git/config");
    let mut bad = std::fs::read(&gitcfg).unwrap();
    bad.extend_from_slice(b"[core]\n\trepositoryformatversion = 9\n");
    std::fs::write(&gitcfg, &bad).unwrap();
    let out = q.fails(&["resume"]);
    assert!(out.contains("repair it before assigning a turn"), "{out}");
    assert!(
        q.state()["active_turns"]
            .as_object()
            .is_none_or(|m| m.is_empty())
    );
}

#[test]
fn a_legacy_configs_agent_is_removed_but_never_the_last() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    std::fs::write(
        root.join("agentxchain.json"),
        serde_json::to_string_pretty(&json!({"version": 3, "project": "old", "log": "log.md",
            "rules": {"max_consecutive_claims": 2},
            "agents": {"pm": {"name": "PM", "mandate": "plan"}, "dev": {"name": "Dev", "mandate": "build"}}}))
        .unwrap(),
    )
    .unwrap();
    let run = |args: &[&str]| {
        Command::new(BIN)
            .args(args)
            .current_dir(root)
            .env_remove("AGENTXCHAIN_TURN_ID")
            .output()
            .unwrap()
    };
    let shown = String::from_utf8_lossy(&run(&["config"]).stdout).into_owned();
    assert!(
        shown.contains("  AgentXchain Config\n") && shown.contains("  Agents:   2\n"),
        "{shown}"
    );
    let out = run(&["config", "--remove-agent", "nope"]);
    assert_eq!(out.status.code(), Some(1));
    assert_eq!(
        String::from_utf8_lossy(&out.stdout),
        "  Agent \"nope\" not found.\n  Available: pm, dev\n"
    );
    let out = run(&["config", "--remove-agent", "pm"]);
    assert!(out.status.success());
    assert_eq!(
        String::from_utf8_lossy(&out.stdout),
        "\n  ✓ Removed agent pm (PM)\n  Agents now: dev\n\n"
    );
    let c: Value =
        serde_json::from_str(&std::fs::read_to_string(root.join("agentxchain.json")).unwrap())
            .unwrap();
    assert_eq!(
        c["agents"],
        json!({"dev": {"name": "Dev", "mandate": "build"}})
    );
    let out = run(&["config", "--remove-agent", "dev"]);
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stdout).starts_with("  Cannot remove the last agent."));
    let out = run(&["config", "--add-agent"]);
    assert_eq!(out.status.code(), Some(1));
}
