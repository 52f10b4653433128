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

struct Step {
    id: String,
    command: String,
    exit_code: i32,
    stdout: String,
    stderr: String,
    /// Commands run first in the same copy (e.g. `chant lint src --fix`).
    before: Vec<String>,
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
            before: s["before"]
                .as_array()
                .map(|b| {
                    b.iter()
                        .filter_map(|c| c.as_str().map(str::to_owned))
                        .collect()
                })
                .unwrap_or_default(),
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
    replay_with(fixture, skip, &|_, _, text| text);
}

/// Which output a normalizer is given.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Side {
    Ours,
    Expected,
}

/// [`replay`], each stdout passed through `normalize` (for a deliberate difference, each
/// tested on its own) before they are compared.
fn replay_with(fixture: &str, skip: &[&str], normalize: &dyn Fn(&Step, Side, String) -> String) {
    let mut checked = 0;
    for step in steps(fixture) {
        let is_engine_command = ["chant build", "chant list", "chant explain", "chant lint"]
            .iter()
            .any(|p| step.command.starts_with(p));
        if !is_engine_command || skip.contains(&step.id.as_str()) {
            continue;
        }
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().join("project");
        mcp_testkit::copy_fixture(&fixtures().join(fixture), &root);
        for command in &step.before {
            run(&root, command);
        }
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
        let ours = normalize(&step, Side::Ours, ours);
        let expected_out = normalize(&step, Side::Expected, expected_out);
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
    // Deliberate differences, each checked in `lint_goldens_with_deliberate_differences`.
    replay(
        "gitlab-lint-rules",
        &["lint-json", "lint-sarif", "lint-single-file", "lint-fix"],
    );
}

/// Where chant's lint departs from the captured reference on purpose, the rest still matches.
#[test]
fn lint_goldens_with_deliberate_differences() {
    let fixture = "gitlab-lint-rules";
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("project");
    mcp_testkit::copy_fixture(&fixtures().join(fixture), &root);
    let json =
        |out: &std::process::Output| -> Value { serde_json::from_slice(&out.stdout).unwrap() };
    let golden =
        |file: &str| -> Value { serde_json::from_str(&expected(fixture, file, &root)).unwrap() };

    // COR012's fix covers exactly the import line: the reference's range began one byte
    // early, on the previous line's newline, and joined the two lines.
    let ours = json(&run(&root, "chant lint src --format json"));
    let mut want = golden("lint-json.stdout.txt");
    for d in want.as_array_mut().unwrap() {
        if d["ruleId"] == "COR012" {
            let start = d["fix"]["range"][0].as_u64().unwrap();
            d["fix"]["range"][0] = (start + 1).into();
        }
    }
    assert_eq!(ours, want);

    // SARIF: lexicon rules carry real descriptions (the reference repeated the id).
    let out = run(&root, "chant lint src --format sarif");
    assert_eq!(out.status.code(), Some(1));
    let ours = json(&out);
    let mut want = golden("lint-sarif.stdout.txt");
    for (r, o) in want["runs"][0]["tool"]["driver"]["rules"]
        .as_array_mut()
        .unwrap()
        .iter_mut()
        .zip(
            ours["runs"][0]["tool"]["driver"]["rules"]
                .as_array()
                .unwrap(),
        )
    {
        if r["id"].as_str().unwrap().starts_with("WGL") {
            assert_eq!(r["shortDescription"]["text"], r["id"]);
            r["shortDescription"] = o["shortDescription"].clone();
            r["fullDescription"] = o["fullDescription"].clone();
        }
    }
    assert_eq!(ours, want);

    // Linting one file works (the reference failed with ENOTDIR): the same diagnostics as
    // the directory run gives for that file.
    let out = run(&root, "chant lint src/suppressed.ts --format json");
    assert_eq!(out.status.code(), Some(0), "warnings only");
    let file = root.join("src/suppressed.ts").display().to_string();
    let from_dir: Vec<Value> = golden("lint-json.stdout.txt")
        .as_array()
        .unwrap()
        .iter()
        .filter(|d| d["file"] == file.as_str())
        .cloned()
        .collect();
    assert_eq!(json(&out), Value::Array(from_dir));

    // --fix: the report after fixing matches; the rewritten file keeps its lines apart and
    // the command says which files it rewrote.
    let out = run(&root, "chant lint src --fix");
    assert_eq!(out.status.code(), Some(1));
    assert_eq!(
        String::from_utf8_lossy(&out.stdout),
        expected(fixture, "lint-fix.stdout.txt", &root)
    );
    assert_eq!(
        String::from_utf8_lossy(&out.stderr),
        format!("fixed {}\n", root.join("src/fixable.ts").display())
    );
    let want = expected(fixture, "lint-fix.files/src/fixable.ts", &root).replacen(
        "\"@intentius/chant-lexicon-gitlab\";import",
        "\"@intentius/chant-lexicon-gitlab\";\nimport",
        1,
    );
    assert_eq!(
        std::fs::read_to_string(root.join("src/fixable.ts")).unwrap(),
        want
    );
    let after = run(&root, "chant lint src --format json");
    assert_eq!(
        String::from_utf8_lossy(&after.stdout),
        expected(fixture, "lint-json-after-fix.stdout.txt", &root)
    );
}

/// A file that does not parse is reported, not skipped (the reference skipped it silently
/// and exited 0); every other diagnostic matches.
#[test]
fn lint_reports_files_that_do_not_parse() {
    let fixture = "gitlab-err-syntax";
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("project");
    mcp_testkit::copy_fixture(&fixtures().join(fixture), &root);
    let out = run(&root, "chant lint src --format json");
    assert_eq!(out.status.code(), Some(1));
    let ours: Vec<Value> = serde_json::from_slice(&out.stdout).unwrap();
    let (parse, rest): (Vec<Value>, Vec<Value>) =
        ours.into_iter().partition(|d| d["ruleId"] == "parse");
    let want: Value =
        serde_json::from_str(&expected(fixture, "lint-json.stdout.txt", &root)).unwrap();
    assert_eq!(Value::Array(rest), want);
    let files: Vec<String> = parse
        .iter()
        .map(|d| {
            d["file"]
                .as_str()
                .unwrap()
                .rsplit('/')
                .next()
                .unwrap()
                .to_owned()
        })
        .collect();
    assert_eq!(files, ["broken.ts", "garbled.ts"]);
    for d in &parse {
        assert_eq!(d["severity"], "error");
        assert!(
            d["message"].as_str().unwrap().starts_with("Syntax error: "),
            "{d}"
        );
        assert!(d["line"].as_u64().unwrap() > 1);
    }
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
    mcp_testkit::copy_fixture(&fixtures().join("gitlab-flow-control"), &root);
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
    mcp_testkit::copy_fixture(&fixtures().join("gitlab-err-syntax"), &root);
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
    mcp_testkit::copy_fixture(&fixtures().join("gitlab-err-cycle"), &root);
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

/// The deliberate differences of the aws fixtures, applied to both sides: the reference's
/// OKF links came from some references only (ours are the real edges, tested in
/// `aws_templates_have_real_edges_and_default_tags`), it dropped `defaultTags` (we apply them:
/// removed here from our template, checked there), and `list` showed an output with no type as
/// a resource (ours: type `Output`, kind `output`).
fn aws_differences(step: &Step, side: Side, text: String) -> String {
    let command = step.command.as_str();
    if command.contains("--format okf") {
        return without_dependencies(command, &text);
    }
    if side == Side::Ours
        && command.starts_with("chant build")
        && !command.contains("yaml")
        && !text.is_empty()
    {
        let mut v: Value = serde_json::from_str(&text).unwrap();
        for r in v["Resources"].as_object_mut().unwrap().values_mut() {
            if let Some(p) = r.get_mut("Properties").and_then(Value::as_object_mut) {
                p.remove("Tags");
            }
        }
        return format!("{}\n", canon::to_pretty(&v));
    }
    if side == Side::Ours && command.starts_with("chant list") {
        return text
            .lines()
            .map(|l| {
                let l = if l.trim_end().ends_with(" output") {
                    l.replacen(" Output ", "        ", 1)
                        .replace(" output  ", " resource")
                } else {
                    l.to_owned()
                };
                format!("{l}\n")
            })
            .collect();
    }
    text
}

#[test]
fn aws_s3_encrypted() {
    // build-yaml: the safe YAML style, checked in `aws_yaml_reads_back_to_the_json_template`.
    replay_with("aws-s3-encrypted", &["build-yaml"], &aws_differences);
}

#[test]
fn aws_lambda_role() {
    replay_with("aws-lambda-role", &["build-yaml"], &aws_differences);
}

#[test]
fn aws_composites() {
    replay_with("aws-composites", &["build-yaml"], &aws_differences);
}

/// WAW006/WAW009 lint, post-synth errors failing the build, and a disable comment that hides
/// the lint but not the build check.
#[test]
fn aws_lint_waw() {
    replay_with("aws-lint-waw", &["build-yaml"], &aws_differences);
}

/// The YAML template reads back to exactly the JSON one (the reference's YAML did not: it
/// left `*`, `false` and `2010-09-09` plain, which YAML reads as an alias, a boolean, a date).
#[test]
fn aws_yaml_reads_back_to_the_json_template() {
    for fixture in ["aws-s3-encrypted", "aws-lambda-role", "aws-composites"] {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().join("project");
        mcp_testkit::copy_fixture(&fixtures().join(fixture), &root);
        let json: Value = serde_json::from_slice(&run(&root, "chant build src").stdout).unwrap();
        let yaml = run(&root, "chant build src --format yaml");
        assert_eq!(yaml.status.code(), Some(0), "{fixture}");
        let text = String::from_utf8(yaml.stdout).unwrap();
        let read = chant_yaml::read::parse(&text).unwrap();
        assert_eq!(read, json, "{fixture}:\n{text}");
        assert!(
            text.contains("AWSTemplateFormatVersion: \"2010-09-09\""),
            "{text}"
        );
    }
}

/// Dependencies are the real references (`Ref`, attributes, `Sub`), and `defaultTags` reach
/// every taggable resource and only those.
#[test]
fn aws_templates_have_real_edges_and_default_tags() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("project");
    mcp_testkit::copy_fixture(&fixtures().join("aws-s3-encrypted"), &root);
    let v: Value =
        serde_json::from_slice(&run(&root, "chant explain src --format json").stdout).unwrap();
    assert_eq!(
        v["dependencies"],
        serde_json::json!([
            {"from": "archiveBucket", "to": "stage"},
            {"from": "archiveBucket", "to": "retentionDays"},
            {"from": "archiveBucketArn", "to": "archiveBucket"},
            {"from": "archiveBucketDomain", "to": "archiveBucket"},
            {"from": "denyInsecureTransport", "to": "archiveBucket"}
        ])
    );
    let t: Value = serde_json::from_slice(&run(&root, "chant build src").stdout).unwrap();
    assert_eq!(
        t["Resources"]["archiveBucket"]["Properties"]["Tags"],
        serde_json::json!([
            {"Key": "team", "Value": "storage"},
            {"Key": "cost-center", "Value": "1234"}
        ])
    );
    // A bucket policy takes no tags.
    assert!(
        t["Resources"]["denyInsecureTransport"]["Properties"]
            .get("Tags")
            .is_none()
    );
    let lambda = tempfile::tempdir().unwrap();
    let root = lambda.path().join("project");
    mcp_testkit::copy_fixture(&fixtures().join("aws-lambda-role"), &root);
    // `-o` writes the template the reference wrote, byte for byte.
    assert!(
        run(&root, "chant build src -o dist/template.json")
            .status
            .success()
    );
    assert_eq!(
        std::fs::read_to_string(root.join("dist/template.json")).unwrap(),
        std::fs::read_to_string(
            fixtures().join("aws-lambda-role/expected/build-o.files/dist/template.json")
        )
        .unwrap()
    );
    let v: Value =
        serde_json::from_slice(&run(&root, "chant explain src --format json").stdout).unwrap();
    assert_eq!(
        v["dependencies"],
        serde_json::json!([
            {"from": "workerArn", "to": "workerFunction"},
            {"from": "workerFunction", "to": "workerRole"},
            {"from": "workerLogs", "to": "workerFunction"}
        ])
    );
}

/// `chant import` of the captured CloudFormation template prints what the reference printed,
/// and the result builds to the reference's template plus what the reference dropped (the
/// description, the conditions, `AllowedValues`, `DependsOn`, the outputs) — the rest of that
/// fixture's commands ran on the reference's lossy import, so they are checked this way.
#[test]
fn aws_import_cfn() {
    let fixture = "aws-import-cfn";
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("project");
    mcp_testkit::copy_fixture(&fixtures().join(fixture), &root);
    let out = run(&root, "chant import template.json -o infra/");
    assert_eq!(out.status.code(), Some(0));
    assert_eq!(
        String::from_utf8_lossy(&out.stdout),
        expected(fixture, "import.stdout.txt", &root)
    );
    assert_eq!(
        String::from_utf8_lossy(&out.stderr),
        expected(fixture, "import.stderr.txt", &root)
    );
    let built = run(&root, "chant build infra");
    assert_eq!(built.status.code(), Some(0));
    let mut ours: Value = serde_json::from_slice(&built.stdout).unwrap();
    let t = ours.as_object_mut().unwrap();
    assert_eq!(t["Description"], "Notification fan-out");
    assert_eq!(
        t["Conditions"]["IsProd"],
        serde_json::json!({"Fn::Equals": [{"Ref": "Env"}, "prod"]})
    );
    assert_eq!(t["Outputs"].as_object().unwrap().len(), 2);
    for k in ["Conditions", "Outputs", "Description"] {
        t.remove(k);
    }
    for p in t["Parameters"].as_object_mut().unwrap().values_mut() {
        p.as_object_mut().unwrap().remove("AllowedValues");
    }
    for r in t["Resources"].as_object_mut().unwrap().values_mut() {
        r.as_object_mut().unwrap().remove("DependsOn");
    }
    let reference: Value =
        serde_json::from_str(&expected(fixture, "build-imported.stdout.txt", &root)).unwrap();
    assert_eq!(ours, reference);
}

/// A project of both gitlab and aws builds both: the template under `aws`, then the pipeline.
#[test]
fn a_mixed_gitlab_and_aws_project_builds_both() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("project");
    std::fs::create_dir_all(root.join("src")).unwrap();
    std::fs::write(
        root.join("chant.config.ts"),
        "export default { lexicons: [\"gitlab\", \"aws\"] };\n",
    )
    .unwrap();
    std::fs::write(
        root.join("src/ci.ts"),
        "import { Job } from \"@intentius/chant-lexicon-gitlab\";\nexport const deploy = new Job({ stage: \"deploy\", script: [\"chant build\"] });\n",
    )
    .unwrap();
    std::fs::write(
        root.join("src/infra.ts"),
        "import { Queue } from \"@intentius/chant-lexicon-aws\";\nexport const jobs = new Queue({ SqsManagedSseEnabled: true });\n",
    )
    .unwrap();
    let out = run(&root, "chant build src");
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = String::from_utf8(out.stdout).unwrap();
    let (json, yaml) = text.split_once("\n\n# --- gitlab ---\n").unwrap();
    let v: Value = serde_json::from_str(json).unwrap();
    assert_eq!(v["aws"]["Resources"]["jobs"]["Type"], "AWS::SQS::Queue");
    assert!(yaml.contains("deploy:\n  stage: deploy\n"), "{yaml}");
    let only = run(&root, "chant build src --lexicon aws");
    let v: Value = serde_json::from_slice(&only.stdout).unwrap();
    assert_eq!(v["Resources"]["jobs"]["Type"], "AWS::SQS::Queue");
}
