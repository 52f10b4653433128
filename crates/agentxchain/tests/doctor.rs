//! `agentxchain doctor`: the readiness report on a fresh project, on one whose runtimes cannot
//! run, whose turn lost its bundle, and whose gates no routed role can satisfy; and it never
//! runs an agent to find out.

mod support;

use serde_json::{Value, json};
use support::project::Project;

fn checks(p: &Project) -> (i32, Value) {
    let out = p.run(&["doctor", "--json"]);
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    (out.status.code().unwrap(), v)
}

fn level<'a>(report: &'a Value, id: &str) -> (&'a str, &'a str) {
    let c = report["checks"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["id"] == id)
        .unwrap_or_else(|| panic!("no check {id} in {report}"));
    (c["level"].as_str().unwrap(), c["detail"].as_str().unwrap())
}

#[test]
fn a_fresh_project_is_ready() {
    let p = Project::new();
    let out = p.ok(&["doctor"]);
    assert!(
        out.starts_with("\n  AgentXchain Governed Doctor\n  ────────────────────────────────────────────\n  Project: demo\n  Versioning: protocol v7, config generation v4, config schema 1.0\n\n  INFO  CLI version              Could not verify the published docs CLI floor.\n  PASS  Config validation        Config loads and validates\n  PASS  Roles defined            4 roles: pm, dev, qa, eng_director\n  PASS  Runtime: manual-pm       Manual runtime (no binary needed)\n        transport=manual; writes=direct; proposals=none; owned_by=yes; binary=no\n        roles: pm(review_only); path=planning_only; owned_by=yes\n"),
        "{out}"
    );
    assert!(
        out.contains("  PASS  State health             schema_version: 1.1, status: idle\n"),
        "{out}"
    );
    assert!(
        out.contains(
            "  PASS  Workflow-kit artifacts   All 3 required artifacts present for planning\n"
        ),
        "{out}"
    );
    assert!(out.ends_with("  PASS  Admission control        No dead-end configs detected\n\n  ✓ Governed project is ready.\n\n"), "{out}");
    let (code, r) = checks(&p);
    assert_eq!(code, 0);
    assert_eq!(r["overall"], "pass");
    assert_eq!(r["protocol_version"], "v7");
    assert_eq!(r["config_schema_version"], "1.0");
    assert_eq!(
        (r["fail_count"].as_u64(), r["warn_count"].as_u64()),
        (Some(0), Some(0))
    );
    let ids: Vec<&str> = r["checks"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["id"].as_str().unwrap())
        .collect();
    assert_eq!(ids[..3], ["cli_version", "config_valid", "roles_defined"]);
}

#[test]
fn runtimes_that_cannot_run_fail_and_the_agent_is_never_started() {
    let p = Project::new();
    let marker = p._dir.path().join("ran");
    p.config(|c| {
        c["runtimes"]["gone"] = json!({"type": "local_cli", "command": ["no-such-agent-cli-zz", "{prompt}"]});
        c["runtimes"]["api"] = json!({"type": "api_proxy", "provider": "anthropic", "model": "m", "auth_env": "AXC_TEST_NO_SUCH_KEY"});
        c["runtimes"]["probe"] = json!({"type": "local_cli", "command": ["sh", "-c", format!("touch {}", marker.display())]});
        c["runtimes"]["nowhere"] = json!({"type": "local_cli", "command": ["sh"], "cwd": "no/such/dir"});
        c["roles"]["dev"]["runtime"] = json!("gone");
    });
    let (code, r) = checks(&p);
    assert_eq!(code, 1);
    assert_eq!(r["overall"], "fail");
    assert_eq!(
        level(&r, "runtime_gone"),
        (
            "fail",
            "\"no-such-agent-cli-zz\" is not resolvable in the dispatch spawn context. Set \"command\" to an absolute path or add it to PATH in the dispatch spawn context."
        )
    );
    assert_eq!(
        level(&r, "runtime_api"),
        ("fail", "AXC_TEST_NO_SUCH_KEY not set")
    );
    assert_eq!(level(&r, "runtime_probe").0, "pass");
    assert_eq!(
        level(&r, "runtime_nowhere"),
        (
            "fail",
            "Runtime cwd \"no/such/dir\" does not exist in the dispatch spawn context."
        )
    );
    assert!(!marker.exists(), "doctor ran the agent's command");
    let c = r["checks"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["id"] == "runtime_gone")
        .unwrap();
    assert_eq!(c["bound_roles"][0]["role_id"], "dev");
    assert_eq!(c["bound_roles"][0]["effective_write_path"], "direct");
    let out = String::from_utf8_lossy(&p.run(&["doctor"]).stdout).into_owned();
    assert!(
        out.contains("\n  Not ready: 3 failures, 0 warnings.\n"),
        "{out}"
    );
}

#[test]
fn a_turn_without_its_bundle_is_a_ghost_and_a_rebound_role_is_stale() {
    let p = Project::new();
    p.ok(&["resume"]);
    let (turn, _) = p.active_turn();
    std::fs::remove_dir_all(p.root.join(format!(".agentxchain/dispatch/turns/{turn}"))).unwrap();
    let (code, r) = checks(&p);
    assert_eq!(code, 1);
    assert_eq!(
        level(&r, "bundle_integrity"),
        ("fail", format!("Ghost turn(s): {turn} (pm): missing .agentxchain/dispatch/turns/{turn}. Run: agentxchain reissue-turn").as_str())
    );
    p.config(|c| c["roles"]["pm"]["runtime"] = json!("manual-dev"));
    let (_, r) = checks(&p);
    assert_eq!(
        level(&r, "binding_drift"),
        ("warn", format!("Stale binding: {turn} (pm): runtime manual-pm → manual-dev. Run: agentxchain reissue-turn").as_str())
    );
}

#[test]
fn a_gate_no_routed_role_can_write_is_a_dead_end() {
    let p = Project::new();
    p.config(|c| {
        c["runtimes"]["api"] = json!({"type": "api_proxy", "provider": "ollama", "model": "m"});
        for r in ["pm", "eng_director"] {
            c["roles"][r]["runtime"] = json!("api");
        }
    });
    let (code, r) = checks(&p);
    assert_eq!(code, 1);
    let (lvl, detail) = level(&r, "admission_control");
    assert_eq!(lvl, "fail");
    assert!(
        detail.starts_with("Phase \"planning\" gate \"planning_signoff\" requires files (.planning/PM_SIGNOFF.md, .planning/ROADMAP.md, .planning/SYSTEM_SPEC.md) but no routed role has a reachable file-production path (pm:review_only/api_proxy->review_artifact_only, eng_director:review_only/api_proxy->review_artifact_only)."),
        "{detail}"
    );
}

#[test]
fn outside_a_project_and_with_a_broken_config() {
    let dir = tempfile::tempdir().unwrap();
    let out = std::process::Command::new(support::BIN)
        .args(["doctor", "--json"])
        .current_dir(dir.path())
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    assert_eq!(
        String::from_utf8_lossy(&out.stdout),
        "{\"error\":\"No agentxchain.json found\"}\n"
    );
    let p = Project::new();
    p.write("agentxchain.json", "{ not json");
    let out = p.run(&["doctor"]);
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stdout).starts_with("agentxchain.json is invalid JSON: "));
}

#[test]
fn a_role_on_a_runtime_that_does_not_exist_is_not_ready() {
    let p = Project::new();
    p.config(|c| {
        c["roles"]["pm"]["runtime"] = json!("nope");
        c["runtimes"]["out"] = json!({"type": "local_cli", "command": ["sh"], "cwd": "../.."});
    });
    let (code, r) = checks(&p);
    assert_eq!(code, 1);
    let (lvl, detail) = level(&r, "config_valid");
    assert_eq!(lvl, "fail");
    assert!(
        detail.contains("Role \"pm\" references unknown runtime \"nope\""),
        "{detail}"
    );
    assert_eq!(
        level(&r, "runtime_out"),
        (
            "fail",
            "Runtime cwd \"../..\" is not a directory inside the project."
        )
    );
}
