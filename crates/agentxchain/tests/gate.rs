//! `gate list` and `gate show <gate_id> [--evaluate]` on a fresh governed project: the texts and
//! JSON shapes of the reference's `gate` command (compared with it on a copy of the same
//! project), and `--evaluate` judging the files now, with the phase's latest accepted turn.

mod support;

use serde_json::{Value, json};
use support::project::Project;

#[test]
fn gate_list_names_each_gate_with_its_phase_approval_and_predicates() {
    let p = Project::new();
    let out = p.ok(&["gate", "list"]);
    assert_eq!(
        out,
        "\n  Gates (3):\n\n  planning_signoff [pending] — phase planning, human-approval, requires 3 artifacts\n  implementation_complete [pending] — phase implementation, auto, requires 1 artifact + verification\n  qa_ship_verdict [pending] — phase qa, human-approval, requires 3 artifacts + verification\n\n  Usage: agentxchain gate show <gate_id>\n\n"
    );
    let json: Value = serde_json::from_str(&p.ok(&["gate", "list", "--json"])).unwrap();
    let first = &json["gates"][0];
    let keys: Vec<&String> = first.as_object().unwrap().keys().collect();
    assert_eq!(
        keys,
        [
            "id",
            "linked_phase",
            "requires_files",
            "effective_artifacts",
            "requires_verification_pass",
            "requires_human_approval",
            "status",
            "last_failure"
        ]
    );
    assert_eq!(
        first["effective_artifacts"][0]["legacy_semantics"],
        "pm_signoff"
    );
    assert!(first.get("evaluation").is_none());
}

#[test]
fn gate_show_evaluate_judges_the_files_and_the_latest_turns_verification() {
    let p = Project::new();
    p.ok(&["resume"]);
    p.agent_turn(&[], json!({}));
    p.ok(&["accept-turn"]);
    let out = p.ok(&["gate", "show", "planning_signoff", "--evaluate"]);
    assert!(out.contains("  Gate: planning_signoff\n"), "{out}");
    assert!(out.contains("  Evaluation:         fail\n"), "{out}");
    assert!(
        out.contains(
            "    ✗ .planning/PM_SIGNOFF.md [required] [owner: none] [semantics: pm_signoff]\n"
        ),
        "{out}"
    );
    assert!(
        out.contains("    No phase transition is prepared for \"planning_signoff\"."),
        "{out}"
    );
    let g: Value =
        serde_json::from_str(&p.ok(&["gate", "show", "qa_ship_verdict", "--evaluate", "--json"]))
            .unwrap();
    assert_eq!(g["evaluation"]["passed"], false);
    assert_eq!(g["evaluation"]["verification"]["required"], true);
    // No qa turn yet: nothing verified in the phase.
    assert_eq!(g["evaluation"]["verification"]["status"], Value::Null);
    let reasons = g["evaluation"]["reasons"].as_array().unwrap();
    assert!(
        reasons.last().unwrap().as_str().unwrap()
            == "Verification status is \"missing\", requires \"pass\" or \"attested_pass\""
    );
    // Planning's latest accepted turn verified: the source is that turn (the reference read
    // no history here and said "missing").
    let g: Value =
        serde_json::from_str(&p.ok(&["gate", "show", "planning_signoff", "--evaluate", "--json"]))
            .unwrap();
    assert_eq!(g["evaluation"]["verification"]["status"], "pass");
    assert!(g["evaluation"]["verification"]["source_turn_id"].is_string());
}

#[test]
fn an_unknown_gate_is_refused_with_the_ones_there_are() {
    let p = Project::new();
    let out = p.fails(&["gate", "show", "nope"]);
    assert_eq!(
        out,
        "  Unknown gate: nope\n  Available: planning_signoff, implementation_complete, qa_ship_verdict\n"
    );
    assert_eq!(
        p.fails(&["gate", "show", ""]),
        "  Gate ID is required.\n  Available: planning_signoff, implementation_complete, qa_ship_verdict\n"
    );
}

#[test]
fn a_config_without_gates_says_so() {
    let p = Project::new();
    p.config(|c| {
        c["gates"] = json!({});
        for phase in ["planning", "implementation", "qa"] {
            c["routing"][phase]
                .as_object_mut()
                .unwrap()
                .remove("exit_gate");
        }
    });
    assert_eq!(
        p.fails(&["gate", "list"]),
        "  No gates defined in config.\n"
    );
}

#[test]
fn gate_show_gives_a_workflow_kit_checks_reason_in_its_own_words() {
    let p = Project::new();
    p.config(|c| {
        c["workflow_kit"] = json!({"phases": {"planning": {"artifacts": [
            {"path": "docs/x.md", "semantics": "section_check", "semantics_config": {"required_sections": ["## A"]}, "required": true}
        ]}}});
    });
    p.write("docs/x.md", "# X\n\nno sections\n");
    let g: Value =
        serde_json::from_str(&p.ok(&["gate", "show", "planning_signoff", "--evaluate", "--json"]))
            .unwrap();
    let semantic = g["evaluation"]["semantic_failures"].as_array().unwrap();
    let reason = semantic
        .iter()
        .filter_map(Value::as_str)
        .find(|r| r.contains("## A"))
        .unwrap();
    assert!(!reason.starts_with("docs/x.md: "), "{reason}");
}

#[test]
fn a_config_refused_says_why_on_stderr_with_its_values_escaped() {
    let p = Project::new();
    p.config(|c| c["routing"]["planning"]["exit_gate"] = json!("\u{1b}[31mEVIL\u{7}"));
    let out = p.run(&["gate", "list"]);
    assert_eq!(out.status.code(), Some(1));
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        !stdout.contains('\u{1b}') && !stderr.contains('\u{1b}'),
        "{stdout}{stderr}"
    );
    assert!(stderr.contains("\\u{1b}[31mEVIL"), "{stderr}");
}
