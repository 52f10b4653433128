//! `reconcile-state --accept-operator-head`: the command `status` recommends after a person
//! commits on top of the run's checkpoint, run as that person would — and attacked: commits
//! that touch the orchestrator's files under a name git would quote, a forged baseline that
//! reads as an option, a rewritten history, an agent running it inside its turn.

mod support;

use serde_json::Value;
use support::project::{Project, git};
use support::*;

fn recommended(p: &Project) -> String {
    let v: Value = serde_json::from_str(&p.ok(&["status", "--json"])).unwrap();
    v["continuity"]["recommended_command"]
        .as_str()
        .unwrap_or("")
        .to_owned()
}

fn head(p: &Project) -> String {
    let out = std::process::Command::new("git")
        .args(["rev-parse", "HEAD"])
        .current_dir(&p.root)
        .output()
        .unwrap();
    String::from_utf8(out.stdout).unwrap().trim().to_owned()
}

fn operator_commit(p: &Project, path: &str, text: &str) {
    p.write(path, text);
    git(&p.root, &["add", "-f", path]);
    git(
        &p.root,
        &["commit", "-qm", &format!("operator edits {path}")],
    );
}

/// Every file of the project but the lock a command takes.
fn tree(p: &Project) -> std::collections::BTreeMap<std::path::PathBuf, String> {
    let mut t = hash_tree(&p.root);
    t.retain(|k, _| {
        !k.starts_with(".agentxchain/locks")
            && k.as_path() != std::path::Path::new(".agentxchain/.")
    });
    t
}

#[test]
fn safe_operator_commits_become_the_baseline_status_then_recommends_restart() {
    let p = Project::new();
    p.ok(&["resume"]);
    let base = head(&p);
    operator_commit(&p, "docs/fix.md", "a fix\n");
    operator_commit(&p, ".agentxchain/prompts/dev.md", "better prompt\n");
    assert_eq!(
        recommended(&p),
        "agentxchain reconcile-state --accept-operator-head"
    );
    let out = p.fails(&["reconcile-state"]);
    assert_eq!(
        out,
        "No reconciliation action selected.\nRun `agentxchain reconcile-state --accept-operator-head` to accept safe operator commits on top of the last checkpoint.\n"
    );
    let now = head(&p);
    let out = p.ok(&["reconcile-state", "--accept-operator-head"]);
    assert_eq!(
        out,
        format!(
            "Reconciled 2 operator commit(s).\nPrevious baseline: {base}\nAccepted HEAD:      {now}\nPaths touched:      .agentxchain/prompts/dev.md, docs/fix.md\n"
        )
    );
    let s = p.state();
    assert_eq!(s["accepted_integration_ref"], format!("git:{now}"));
    assert_eq!(s["operator_commit_reconciliation"]["commit_count"], 2);
    assert_eq!(
        s["operator_commit_reconciliation"]["safety_mode"],
        "manual_safe_only"
    );
    let events = std::fs::read_to_string(p.root.join(".agentxchain/events.jsonl")).unwrap();
    let last: Value = serde_json::from_str(events.lines().last().unwrap()).unwrap();
    assert_eq!(last["event_type"], "state_reconciled_operator_commits");
    assert_eq!(
        last["payload"]["accepted_commits"][0]["subject"],
        "operator edits docs/fix.md"
    );
    let session: Value = serde_json::from_str(
        &std::fs::read_to_string(p.root.join(".agentxchain/session.json")).unwrap(),
    )
    .unwrap();
    assert_eq!(session["checkpoint_reason"], "operator_commit_reconciled");
    assert_eq!(session["baseline_ref"]["git_head"], now);
    assert_eq!(recommended(&p), "agentxchain restart");
    let out = p.ok(&["reconcile-state", "--accept-operator-head"]);
    assert_eq!(out, format!("State already reconciled at {}.\n", &now[..8]));
}

#[test]
fn a_commit_to_the_orchestrators_files_is_refused_however_git_would_spell_its_name() {
    for path in [
        ".agentxchain/state.json",
        ".agentxchain/é\tx.json",
        ".agentxchain/history.jsonl",
    ] {
        let p = Project::new();
        p.ok(&["resume"]);
        operator_commit(&p, "ok.md", "fine\n");
        operator_commit(&p, path, "{}\n");
        let bad = head(&p);
        let before = tree(&p);
        let out = p.fails(&["reconcile-state", "--accept-operator-head"]);
        assert!(out.starts_with(&format!("Reconcile refused (governance_state_modified).\nCommit {} modifies governed state path ", &bad[..8])), "{path}: {out}");
        assert!(
            out.contains(&format!("\nOffending commit: {bad}\n")),
            "{out}"
        );
        assert_eq!(tree(&p), before, "{path}: a refusal wrote");
    }
    // Deleting the acceptance matrix is refused too.
    let p = Project::new();
    p.ok(&["resume"]);
    git(&p.root, &["rm", "-q", ".planning/acceptance-matrix.md"]);
    git(&p.root, &["commit", "-qm", "drop evidence"]);
    let out = p.fails(&["reconcile-state", "--accept-operator-head"]);
    assert!(
        out.starts_with("Reconcile refused (critical_artifact_deleted).\n"),
        "{out}"
    );
}

#[test]
fn a_forged_or_rewritten_baseline_is_refused_and_git_never_reads_it_as_an_option() {
    let p = Project::new();
    p.ok(&["resume"]);
    // History rewritten under the checkpoint.
    git(
        &p.root,
        &["commit", "-q", "--amend", "--allow-empty", "-m", "amended"],
    );
    let out = p.fails(&["reconcile-state", "--accept-operator-head"]);
    assert!(
        out.starts_with(
            "Reconcile refused (history_rewrite).\nCannot reconcile operator HEAD: baseline "
        ),
        "{out}"
    );

    // A baseline an agent wrote into the checkpoint that git would take as an option.
    let outside = tempfile::tempdir().unwrap();
    let target = outside.path().join("written");
    let path = p.root.join(".agentxchain/session.json");
    let mut cp: Value = serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
    cp["baseline_ref"]["git_head"] = Value::String(format!("--output={}", target.display()));
    std::fs::write(&path, cp.to_string()).unwrap();
    let before = tree(&p);
    let out = p.fails(&["reconcile-state", "--accept-operator-head"]);
    assert!(
        out.starts_with("Reconcile refused (history_rewrite)."),
        "{out}"
    );
    assert!(!target.exists(), "git wrote where the forged baseline said");
    assert_eq!(tree(&p), before);
}

#[test]
fn an_agent_cannot_reconcile_from_inside_its_turn() {
    let p = Project::new();
    p.ok(&["resume"]);
    operator_commit(&p, "src/agent.rs", "fn main() {}\n");
    let before = tree(&p);
    let out = std::process::Command::new(BIN)
        .args(["reconcile-state", "--accept-operator-head"])
        .current_dir(&p.root)
        .env("AGENTXCHAIN_TURN_ID", "turn_0123456789abcdef")
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    assert!(
        String::from_utf8_lossy(&out.stdout).starts_with("reconcile-state is a person's command")
    );
    assert_eq!(tree(&p), before);
}

/// The hostile review's ways round the checks: a merge commit that adds governed state itself,
/// an unrelated history merged in, the config the run is judged by, the acceptance matrix
/// turned into a link.
#[test]
fn merges_unrelated_histories_the_config_and_a_matrix_made_a_link_are_refused() {
    let refused = |setup: &dyn Fn(&Project), class: &str| {
        let p = Project::new();
        p.ok(&["resume"]);
        setup(&p);
        let before = tree(&p);
        let out = p.fails(&["reconcile-state", "--accept-operator-head"]);
        assert!(
            out.starts_with(&format!("Reconcile refused ({class}).\n")),
            "{class}: {out}"
        );
        assert_eq!(tree(&p), before, "{class}: a refusal wrote");
    };
    refused(
        &|p| {
            git(&p.root, &["checkout", "-q", "-b", "side"]);
            operator_commit(p, "harmless.txt", "x\n");
            git(&p.root, &["checkout", "-q", "main"]);
            git(&p.root, &["merge", "-q", "--no-ff", "--no-commit", "side"]);
            p.write(".agentxchain/evil.txt", "evil\n");
            git(&p.root, &["add", "-f", ".agentxchain/evil.txt"]);
            git(&p.root, &["commit", "-qm", "Merge side"]);
        },
        "governance_state_modified",
    );
    refused(
        &|p| {
            git(&p.root, &["checkout", "-q", "--orphan", "orphan"]);
            git(&p.root, &["rm", "-rfq", "--cached", "."]);
            p.write(".agentxchain/intake-evil.json", "{}\n");
            git(&p.root, &["add", "-f", ".agentxchain/intake-evil.json"]);
            git(&p.root, &["commit", "-qm", "root"]);
            git(&p.root, &["checkout", "-qf", "main"]);
            git(
                &p.root,
                &[
                    "merge",
                    "-q",
                    "--allow-unrelated-histories",
                    "-m",
                    "m",
                    "orphan",
                ],
            );
        },
        "governance_state_modified",
    );
    refused(
        &|p| {
            let path = p.root.join("agentxchain.json");
            let mut c: Value =
                serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
            c["approval_policy"]["phase_transitions"]["default"] = Value::from("auto_approve");
            std::fs::write(&path, serde_json::to_string_pretty(&c).unwrap()).unwrap();
            git(&p.root, &["commit", "-qam", "loosen the gates"]);
        },
        "governance_config_modified",
    );
    refused(
        &|p| {
            let m = p.root.join(".planning/acceptance-matrix.md");
            std::fs::remove_file(&m).unwrap();
            std::os::unix::fs::symlink("../TALK.md", &m).unwrap();
            git(&p.root, &["commit", "-qam", "matrix as a link"]);
        },
        "critical_artifact_deleted",
    );
}
