//! The gitlab fixtures of ../shared/fixtures/chant, replayed command by command against the
//! `chant` binary in a fresh copy of each fixture.
//!
//! Normalizations: `<ROOT>` is the copy's path; the reference's `[fold:…]` stderr lines are not
//! reproduced (every file is evaluated). Deliberate differences, each tested on its own below:
//! real dependency edges in explain; syntax and evaluation errors worded by oxc/QuickJS (so the
//! `--no-fold` behaviour: a broken file fails the build); no ANSI colours when not on a terminal.

use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::Value;

const BIN: &str = env!("CARGO_BIN_EXE_chant");

fn fixtures() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../../shared/fixtures/chant")
}

fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for e in std::fs::read_dir(from).unwrap().flatten() {
        if e.file_name() == "expected" {
            continue;
        }
        let target = to.join(e.file_name());
        if e.path().is_dir() {
            copy_dir(&e.path(), &target);
        } else {
            std::fs::copy(e.path(), &target).unwrap();
            let mut perms = std::fs::metadata(&target).unwrap().permissions();
            #[allow(clippy::permissions_set_readonly_false)]
            perms.set_readonly(false);
            std::fs::set_permissions(&target, perms).unwrap();
        }
    }
}

struct Step {
    id: String,
    command: String,
    exit_code: i32,
    stdout: String,
    stderr: String,
}

fn steps(fixture: &str) -> Vec<Step> {
    let text =
        std::fs::read_to_string(fixtures().join(fixture).join("expected/commands.json")).unwrap();
    let v: Value = serde_json::from_str(&text).unwrap();
    v["steps"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|s| s["exit_code"].is_i64())
        .map(|s| Step {
            id: s["id"].as_str().unwrap().to_owned(),
            command: s["command"].as_str().unwrap().to_owned(),
            exit_code: s["exit_code"].as_i64().unwrap() as i32,
            stdout: s["stdout"].as_str().unwrap_or_default().to_owned(),
            stderr: s["stderr"].as_str().unwrap_or_default().to_owned(),
        })
        .collect()
}

fn expected(fixture: &str, file: &str, root: &Path) -> String {
    std::fs::read_to_string(fixtures().join(fixture).join("expected").join(file))
        .unwrap()
        .replace("<ROOT>", &root.display().to_string())
}

fn run(root: &Path, command: &str) -> std::process::Output {
    let args: Vec<&str> = command.split_whitespace().skip(1).collect();
    Command::new(BIN)
        .args(args)
        .current_dir(root)
        .env("NO_COLOR", "1")
        .output()
        .unwrap()
}

fn without_fold(s: &str) -> String {
    s.lines()
        .filter(|l| !l.starts_with("[fold:"))
        .map(|l| format!("{l}\n"))
        .collect()
}

/// Our explain output with the real dependency edges removed (the reference always had none).
fn without_dependencies(command: &str, out: &str) -> String {
    if command.contains("--format json") {
        let mut v: Value = serde_json::from_str(out).unwrap();
        v["dependencies"] = Value::Array(vec![]);
        return format!("{}\n", canon::to_pretty(&v));
    }
    if command.contains("--format okf") {
        let mut v: Value = serde_json::from_str(out).unwrap();
        for (_, content) in v["files"].as_object_mut().unwrap() {
            let text = content.as_str().unwrap();
            let cut = text
                .find("\n\n## Depends on")
                .or_else(|| text.find("\n\n## Referenced by"));
            if let Some(i) = cut {
                *content = Value::String(format!("{}\n", &text[..i]));
            }
        }
        return format!("{}\n", canon::to_pretty(&v));
    }
    match (out.find("## Dependencies\n"), out.find("## Errors\n")) {
        (Some(start), Some(end)) => format!("{}{}", &out[..start], &out[end..]),
        (Some(start), None) => {
            format!("{}\n", out[..start].trim_end_matches('\n')).replace("\n\n\n", "\n\n") + "\n"
        }
        _ => out.to_owned(),
    }
}

fn replay(fixture: &str, skip: &[&str]) {
    let mut checked = 0;
    for step in steps(fixture) {
        let is_engine_command = ["chant build", "chant list", "chant explain"]
            .iter()
            .any(|p| step.command.starts_with(p));
        if !is_engine_command || skip.contains(&step.id.as_str()) {
            continue;
        }
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().join("project");
        copy_dir(&fixtures().join(fixture), &root);
        let out = run(&root, &step.command);
        let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
        let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
        let expected_out = expected(fixture, &step.stdout, &root);
        let expected_err = without_fold(&expected(fixture, &step.stderr, &root));
        assert_eq!(
            out.status.code(),
            Some(step.exit_code),
            "{fixture} `{}`: exit code\n{stderr}",
            step.command
        );
        let ours = if step.command.starts_with("chant explain") {
            without_dependencies(&step.command, &stdout)
        } else {
            stdout
        };
        assert_eq!(ours, expected_out, "{fixture} `{}`: stdout", step.command);
        assert_eq!(stderr, expected_err, "{fixture} `{}`: stderr", step.command);
        checked += 1;
    }
    assert!(checked > 0, "{fixture}: no command replayed");
}

#[test]
fn gitlab_shared_props() {
    // build-color: the reference forced ANSI colours into a file; we colour only terminals.
    replay("gitlab-shared-props", &["build-color"]);
}

#[test]
fn gitlab_flow_control() {
    replay("gitlab-flow-control", &[]);
}

#[test]
fn gitlab_yaml_quoting() {
    replay("gitlab-yaml-quoting", &[]);
}

#[test]
fn gitlab_naming_arrays() {
    replay("gitlab-naming-arrays", &[]);
}

#[test]
fn gitlab_composites() {
    replay("gitlab-composites", &[]);
}

#[test]
fn gitlab_lint_rules() {
    replay("gitlab-lint-rules", &[]);
}

#[test]
fn gitlab_err_duplicate() {
    replay("gitlab-err-duplicate", &["build-no-fold"]);
}

/// The dependency graph is real (the reference always reported none).
#[test]
fn explain_reports_real_dependency_edges() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("project");
    copy_dir(&fixtures().join("gitlab-flow-control"), &root);
    let out = run(&root, "chant explain src --format json");
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(
        v["dependencies"],
        serde_json::json!([
            {"from": "deployStaging", "to": "rspecSuite"},
            {"from": "deployStaging", "to": "rubocopCheck"},
            {"from": "rspecSuite", "to": "installGems"}
        ])
    );
    let md = String::from_utf8(run(&root, "chant explain src --format markdown").stdout).unwrap();
    assert!(md.contains("## Dependencies\n\n- `deployStaging` → `rspecSuite`\n- `deployStaging` → `rubocopCheck`\n- `rspecSuite` → `installGems`\n"), "{md}");
    let okf: Value =
        serde_json::from_slice(&run(&root, "chant explain src --format okf").stdout).unwrap();
    let install = okf["files"]["gitlab/installGems.md"].as_str().unwrap();
    assert!(
        install.ends_with(
            "Declared in `jobs.ts`.\n\n## Referenced by\n\n- [rspecSuite](/gitlab/rspecSuite.md)\n"
        ),
        "{install}"
    );
}

/// A file that does not parse fails the build and names file, line and column (the reference's
/// default build tolerated it; its `--no-fold` build failed like ours).
#[test]
fn syntax_errors_fail_the_build_with_positions() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("project");
    copy_dir(&fixtures().join("gitlab-err-syntax"), &root);
    let out = run(&root, "chant build src");
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8_lossy(&out.stderr);
    let broken = root.join("src/broken.ts").display().to_string();
    let garbled = root.join("src/garbled.ts").display().to_string();
    assert!(
        err.contains(&format!("{broken} - error: {broken}:6:1: ")),
        "{err}"
    );
    assert!(
        err.contains(&format!("{garbled} - error: {garbled}:6:3: ")),
        "{err}"
    );
    // explain keeps the entities of the files that did evaluate.
    let v: Value =
        serde_json::from_slice(&run(&root, "chant explain src --format json").stdout).unwrap();
    assert_eq!(v["totalEntities"], 1);
    assert_eq!(
        v["lexicons"]["gitlab"]["resources"],
        serde_json::json!(["docs"])
    );
    assert_eq!(v["errors"].as_array().unwrap().len(), 2);
}

/// Modules importing each other fail in the temporal dead zone, as in Node.
#[test]
fn an_import_cycle_is_a_clear_error() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("project");
    copy_dir(&fixtures().join("gitlab-err-cycle"), &root);
    let out = run(&root, "chant build src");
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains(
            "Cannot access 'downstream' before initialization (and the same from 1 more files)"
        ),
        "{err}"
    );
    assert!(err.contains("upstream.ts:5:"), "{err}");
}
