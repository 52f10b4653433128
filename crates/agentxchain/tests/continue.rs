//! A run the JavaScript reference started continues with this binary from any step: for every
//! step of the reference's own runs (captured with their git repositories by
//! `scripts/capture-reference-runs` into `tests/reference-runs/`), the project exactly as the
//! reference left it before the step, then the step run with this binary — the same exit code,
//! and the same state, history, ledger, events, run history, escalations, `TALK.md`,
//! `HUMAN_TASKS.md`, intake events and intents as the reference wrote at that step, after the fixtures' placeholder rules.
//! Deliberate differences (docs/agentxchain.md) are the ones tolerated here: the float the
//! reference's `status` rounds on a read, the `baseline_dirty_unchanged_excluded` payload.

mod support;

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use serde_json::Value;
use support::{BIN, Norm, fixture_env};

const COMPARED: [&str; 8] = [
    ".agentxchain/state.json",
    ".agentxchain/history.jsonl",
    ".agentxchain/decision-ledger.jsonl",
    ".agentxchain/events.jsonl",
    ".agentxchain/run-history.jsonl",
    ".agentxchain/human-escalations.jsonl",
    "TALK.md",
    "HUMAN_TASKS.md",
];

fn manifest_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

fn run(cmd: &mut Command) {
    let out = cmd.output().unwrap();
    assert!(
        out.status.success(),
        "{cmd:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// A project's compared files as one text, in one normalizer's scan order.
fn normalized(root: &Path) -> Vec<(String, String)> {
    let mut norm = Norm::default();
    let float = regex::Regex::new(r"(\d+\.\d{9,})").unwrap();
    // The intake's events and intents too, in name order (their names are their ids).
    let mut rels: Vec<String> = COMPARED.iter().map(|r| r.to_string()).collect();
    for dir in [".agentxchain/intake/events", ".agentxchain/intake/intents"] {
        let mut names: Vec<String> = std::fs::read_dir(root.join(dir))
            .into_iter()
            .flatten()
            .flatten()
            .map(|e| format!("{dir}/{}", e.file_name().to_string_lossy()))
            .collect();
        names.sort();
        rels.extend(names);
    }
    rels.iter()
        .map(|rel| {
            let text =
                std::fs::read_to_string(root.join(rel)).unwrap_or_else(|_| "<absent>".into());
            let mut text = norm.text(&text, root);
            // The reference's float sums (49.980000000000004), as a reader rounds them.
            text = float
                .replace_all(&text, |c: &regex::Captures| {
                    let v: f64 = c[1].parse().unwrap();
                    format!("{}", (v * 1e6).round() / 1e6)
                })
                .into_owned();
            if rel.ends_with(".json") && text != "<absent>" {
                let v: Value = serde_json::from_str(&text).unwrap();
                text = serde_json::to_string_pretty(&v).unwrap();
            }
            if rel.ends_with("events.jsonl") && text != "<absent>" {
                text = text
                    .lines()
                    .map(|l| {
                        let mut e: Value = serde_json::from_str(l).unwrap();
                        if e["event_type"] == "baseline_dirty_unchanged_excluded" {
                            for k in ["payload", "status", "turn"] {
                                e[k] = Value::Null;
                            }
                        }
                        e.to_string() + "\n"
                    })
                    .collect();
            }
            (norm.text(rel, root), text)
        })
        .collect()
}

fn continue_scenario(scenario: &str) {
    let tmp = tempfile::tempdir().unwrap();
    let archive = manifest_dir().join(format!("tests/reference-runs/{scenario}.tar.gz"));
    run(Command::new("tar")
        .arg("-xzf")
        .arg(&archive)
        .arg("-C")
        .arg(tmp.path()));
    let trees = tmp.path().join(scenario);
    let values: Value =
        serde_json::from_str(&std::fs::read_to_string(trees.join("values.json")).unwrap()).unwrap();
    let sub = |t: &str| {
        values
            .as_object()
            .unwrap()
            .iter()
            .fold(t.to_owned(), |t, (k, v)| t.replace(k, v.as_str().unwrap()))
    };
    let steps: Vec<Value> = serde_json::from_str(
        &std::fs::read_to_string(manifest_dir().join(format!(
            "../../../shared/fixtures/agentxchain-runs/{scenario}/steps.json"
        )))
        .unwrap(),
    )
    .unwrap();
    let home = tmp.path().join("home");
    std::fs::create_dir_all(&home).unwrap();
    for (i, step) in steps.iter().enumerate() {
        let id = step["id"].as_str().unwrap();
        let after = steps.get(i + 1).map_or("zz-end".to_owned(), |s| {
            s["id"].as_str().unwrap().to_owned()
        });
        // The reference's project before this step, in a place of its own named as it was.
        let work = tmp.path().join(format!("work-{i}"));
        std::fs::create_dir_all(&work).unwrap();
        let root = work.join("demo");
        run(Command::new("cp").arg("-r").arg(trees.join(id)).arg(&root));
        for (p, c) in step["writes"].as_object().into_iter().flatten() {
            let path = root.join(sub(p));
            std::fs::create_dir_all(path.parent().unwrap()).unwrap();
            std::fs::write(path, sub(c.as_str().unwrap())).unwrap();
        }
        let env = fixture_env(&home);
        for g in step["git_before"].as_array().into_iter().flatten() {
            let args: Vec<&str> = g
                .as_array()
                .unwrap()
                .iter()
                .map(|a| a.as_str().unwrap())
                .collect();
            run(Command::new("git")
                .args(&args)
                .current_dir(&root)
                .env_clear()
                .envs(env.iter().map(|(k, v)| (*k, v.as_str()))));
        }
        let argv: Vec<String> = step["argv"]
            .as_array()
            .unwrap()
            .iter()
            .map(|a| sub(a.as_str().unwrap()))
            .collect();
        if argv[0] == "init" {
            // The scaffold is the replay test's; here runs continue.
            continue;
        }
        let out = Command::new(BIN)
            .args(&argv)
            .current_dir(&root)
            .env_clear()
            .envs(env.iter().map(|(k, v)| (*k, v.as_str())))
            .stdin(Stdio::null())
            .output()
            .unwrap();
        assert_eq!(
            out.status.code(),
            step["exit_code"].as_i64().map(|c| c as i32),
            "{scenario} {id}: {}",
            String::from_utf8_lossy(&out.stdout)
        );
        let reference = work.join("reference");
        std::fs::create_dir_all(&reference).unwrap();
        let ref_root = reference.join("demo");
        run(Command::new("cp")
            .arg("-r")
            .arg(trees.join(&after))
            .arg(&ref_root));
        let ours = normalized(&root);
        let theirs = normalized(&ref_root);
        // Never a comparison of nothing: the state and the event log exist from the first
        // resume on, the intake's files from the first record.
        assert!(
            theirs.iter().any(|(_, t)| t != "<absent>"),
            "{scenario} {id}: nothing of the reference's to compare"
        );
        if !argv[0].starts_with("intake") {
            assert_ne!(
                theirs[0].1, "<absent>",
                "{scenario} {id}: no reference state"
            );
            assert_ne!(
                theirs[3].1, "<absent>",
                "{scenario} {id}: no reference events"
            );
        }
        let names = |v: &[(String, String)]| v.iter().map(|(r, _)| r.clone()).collect::<Vec<_>>();
        assert_eq!(names(&ours), names(&theirs), "{scenario} {id}: files");
        for ((rel, o), (_, t)) in ours.iter().zip(&theirs) {
            assert_eq!(o, t, "{scenario} {id}: {rel} differs from the reference's");
        }
    }
}

#[test]
fn auto_approved_continues_from_every_step() {
    continue_scenario("auto-approved");
}

#[test]
fn full_run_with_human_gates_continues_from_every_step() {
    continue_scenario("full-run-human-gates");
}

#[test]
fn escalation_continues_from_every_step() {
    continue_scenario("escalation");
}

#[test]
fn intake_continues_from_every_step() {
    continue_scenario("intake");
}

#[test]
fn reject_and_reissue_continues_from_every_step() {
    continue_scenario("reject-and-reissue");
}
