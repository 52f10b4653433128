//! The `chant` binary answers --version and --help.

const BIN: &str = env!("CARGO_BIN_EXE_chant");

#[test]
fn version_help_and_usage_errors() {
    mcp_testkit::assert_cli_basics(BIN, "chant", env!("CARGO_PKG_VERSION"));
}

use std::process::Command;

fn fixture_copy(name: &str) -> (tempfile::TempDir, std::path::PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("project");
    let src = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../../shared/fixtures/chant")
        .join(name);
    mcp_testkit::copy_fixture(&src, &root);
    (dir, root)
}

fn chant(dir: &std::path::Path, args: &[&str]) -> std::process::Output {
    Command::new(BIN)
        .args(args)
        .current_dir(dir)
        .output()
        .unwrap()
}

#[test]
fn build_lexicon_filter_and_refusals() {
    let (_d, root) = fixture_copy("gitlab-shared-props");
    let out = chant(&root, &["build", "src", "--lexicon", "gitlab"]);
    assert!(out.status.success());
    assert!(String::from_utf8_lossy(&out.stdout).starts_with("stages:\n"));
    // `--no-fold` (the reference's) is accepted and changes nothing.
    let unfolded = chant(&root, &["build", "src", "--lexicon", "gitlab", "--no-fold"]);
    assert!(unfolded.status.success());
    assert_eq!(unfolded.stdout, out.stdout);
    let out = chant(&root, &["build", "src", "--lexicon", "azure"]);
    assert_eq!(out.status.code(), Some(1));
    assert_eq!(
        String::from_utf8_lossy(&out.stderr),
        "error: Lexicon \"azure\" is not available in this chant\n"
    );
    let out = chant(&root, &["build", "nope"]);
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stderr).contains("nope: no such file or directory"));
    let empty = tempfile::tempdir().unwrap();
    std::fs::write(empty.path().join("a.ts"), "export const x = 1;\n").unwrap();
    let out = chant(empty.path(), &["build"]);
    assert_eq!(out.status.code(), Some(1));
    assert_eq!(
        String::from_utf8_lossy(&out.stderr),
        "error: No lexicon detected in infrastructure files\n"
    );
}

#[test]
fn explain_okf_writes_a_bundle_directory() {
    let (_d, root) = fixture_copy("gitlab-flow-control");
    let out = chant(&root, &["explain", "src", "--format", "okf", "-o", "kb"]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(out.stdout.is_empty());
    let index = std::fs::read_to_string(root.join("kb/index.md")).unwrap();
    assert!(index.starts_with("---\nokf_version: '0.2'\n---\n\n# Lexicon: gitlab\n"));
    assert!(root.join("kb/gitlab/rspecSuite.md").is_file());
}

#[test]
fn the_same_sources_build_the_same_bytes() {
    let (_d, root) = fixture_copy("gitlab-composites");
    let a = chant(&root, &["build", "src"]).stdout;
    let b = chant(&root, &["build", "src"]).stdout;
    assert!(!a.is_empty());
    assert_eq!(a, b);
}

fn lint_json(
    dir: &std::path::Path,
    args: &[&str],
) -> (Option<i32>, Vec<serde_json::Value>, String) {
    let out = chant(dir, args);
    let v = serde_json::from_slice(&out.stdout).unwrap_or_default();
    (
        out.status.code(),
        v,
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

fn project(config: &str, source: &str) -> (tempfile::TempDir, std::path::PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("p");
    std::fs::create_dir_all(root.join("src")).unwrap();
    std::fs::write(root.join("chant.config.ts"), config).unwrap();
    std::fs::write(root.join("src/pipeline.ts"), source).unwrap();
    (dir, root)
}

const UNUSED_JOB: &str = "import { Job } from \"@intentius/chant-lexicon-gitlab\";\nexport const lonely = new Job({ stage: \"build\", script: [\"make\"], variables: { A: \"1\" } });\n";

#[test]
fn lint_config_presets_fragments_and_rule_filters() {
    // The strict preset makes COR001 an error; the config's own rules still win.
    let (_d, root) = project(
        "export default { lexicons: [\"gitlab\"], lint: { extends: [\"@intentius/chant/lint/presets/strict\"], rules: { COR004: \"info\" } } };\n",
        UNUSED_JOB,
    );
    let (code, v, _) = lint_json(&root, &["lint", "src", "--format", "json"]);
    assert_eq!(code, Some(1));
    let got: Vec<(&str, &str)> = v
        .iter()
        .map(|d| {
            (
                d["ruleId"].as_str().unwrap(),
                d["severity"].as_str().unwrap(),
            )
        })
        .collect();
    assert_eq!(got, [("COR001", "error"), ("COR004", "info")]);
    // --rules runs only those; an unknown id is refused with the known ones.
    let (code, v, _) = lint_json(
        &root,
        &["lint", "src", "--format", "json", "--rules", "COR004"],
    );
    assert_eq!((code, v.len()), (Some(0), 1));
    let (code, _, err) = lint_json(&root, &["lint", "src", "--rules", "COR999"]);
    assert_eq!(code, Some(1));
    assert!(
        err.starts_with("error: unknown rule \"COR999\" (known: COR001, COR008, "),
        "{err}"
    );

    // Without a lint section, a lint-only chant.config.json in the linted directory applies.
    let (_d, root) = project("export default { lexicons: [\"gitlab\"] };\n", UNUSED_JOB);
    std::fs::write(
        root.join("src/chant.config.json"),
        r#"{"extends": ["@intentius/chant/lint/presets/relaxed"]}"#,
    )
    .unwrap();
    let (code, v, _) = lint_json(&root, &["lint", "src", "--format", "json"]);
    assert_eq!(code, Some(0));
    let ids: Vec<&str> = v.iter().map(|d| d["ruleId"].as_str().unwrap()).collect();
    assert_eq!(
        ids,
        ["COR001"],
        "relaxed turns COR004 off and keeps COR001 a warning"
    );

    // A broken lint config names the key and the fix.
    let (_d, root) = project(
        "export default { lexicons: [\"gitlab\"], lint: { rules: { COR004: \"loud\" } } };\n",
        UNUSED_JOB,
    );
    let (code, _, err) = lint_json(&root, &["lint", "src"]);
    assert_eq!(code, Some(1));
    assert_eq!(
        err,
        format!(
            "error: {}/chant.config.ts: lint.rules.COR004: \"loud\" is not one of \"off\", \"error\", \"warning\", \"info\"\n",
            root.display()
        )
    );
    // The same config fails every command, not only lint.
    for cmd in ["build", "explain", "list"] {
        let out = chant(&root, &[cmd, "src"]);
        assert_eq!(out.status.code(), Some(1), "{cmd}");
        assert!(
            String::from_utf8_lossy(&out.stderr).contains("lint.rules.COR004: \"loud\""),
            "{cmd}"
        );
    }
}

#[test]
fn top_level_variables_and_job_names_from_string_exports() {
    let (_d, root) = project(
        "export default { lexicons: [\"gitlab\"] };\n",
        "import { Job, Variables } from \"@intentius/chant-lexicon-gitlab\";\n\
export const globals = new Variables({ DEPLOY_ENV: \"prod\" });\n\
const unit = new Job({ stage: \"test\", script: [\"make test\"] });\n\
export { unit as \"Test: Unit\" };\n\
const base = new Job({ script: [\"echo base\"] });\n\
export { base as \".base\" };\n\
export const shipIt = new Job({ stage: \"deploy\", extends: \".base\", needs: [unit] });\n",
    );
    let out = chant(&root, &["build", "src"]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(
        String::from_utf8_lossy(&out.stdout),
        "stages:\n  - deploy\n  - test\n\nvariables:\n  DEPLOY_ENV: prod\n\n.base:\n  script:\n    - echo base\n\nship-it:\n  stage: deploy\n  extends: .base\n  needs:\n    - 'Test: Unit'\n\n'Test: Unit':\n  stage: test\n  script:\n    - make test\n\n"
    );
}

/// The temporal lexicon's resources build as the reference writes them: the compose file as
/// the output, the Helm values, setup script and one file per schedule beside it; a value
/// that would break out of the generated script's quoting is refused naming the entity.
#[test]
fn temporal_resources_build_a_compose_file_a_setup_script_and_schedules() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    std::fs::write(
        root.join("chant.config.json"),
        r#"{"lexicons":["temporal"]}"#,
    )
    .unwrap();
    std::fs::write(
        root.join("infra.ts"),
        r#"import { TemporalServer, TemporalNamespace, SearchAttribute, TemporalSchedule } from "@intentius/chant-lexicon-temporal";
export const server = new TemporalServer({ mode: "full", version: "1.27.0", uiPort: 8088 });
export const ns = new TemporalNamespace({ name: "prod", retention: "30d", description: "Costs $1 \"each\"" });
export const attr = new SearchAttribute({ name: "Env", type: "Keyword" });
export const nightly = new TemporalSchedule({ scheduleId: "nightly", spec: { cronExpressions: ["0 2 * * *"] }, action: { workflowType: "deploy", taskQueue: "q" } });
"#,
    )
    .unwrap();
    let out = chant(root, &["build", ".", "-o", "out/docker-compose.yml"]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let read = |f: &str| std::fs::read_to_string(root.join("out").join(f)).unwrap();
    let compose = read("docker-compose.yml");
    assert!(compose.starts_with("# Generated by chant — do not edit directly.\n# Source of truth: the chant TypeScript project.\n\nservices:\n  temporal:\n    image: temporalio/auto-setup:1.27.0\n"), "{compose}");
    assert!(compose.contains("  temporal-ui:\n    image: temporalio/ui:1.27.0\n"));
    assert!(compose.contains("      - \"8088:8080\"\n"));
    assert!(compose.ends_with("volumes:\n  temporal-db: {}\n"));
    assert!(read("temporal-helm-values.yaml").contains("    tag: \"1.27.0\"\n"));
    let setup = read("temporal-setup.sh");
    assert!(setup.contains("  --namespace \"prod\" \\\n  --retention \"30d\" \\\n  --description \"Costs \\$1 \\\"each\\\"\"\n"), "{setup}");
    assert!(setup.contains("  --name \"Env\" \\\n  --type Keyword\n"));
    let schedule = read("schedules/nightly.ts");
    assert!(schedule.contains("    scheduleId: \"nightly\",\n    spec: {\n          \"cronExpressions\": [\n                \"0 2 * * *\"\n          ]\n    },\n"), "{schedule}");
    // The setup script runs the description as text, not as a command.
    let echoed = Command::new("sh")
        .arg("-c")
        .arg(format!(
            "temporal() {{ printf '%s\\n' \"$@\"; }}; {}",
            setup.replace("set -euo pipefail", "")
        ))
        .output()
        .unwrap();
    assert!(String::from_utf8_lossy(&echoed.stdout).contains("Costs $1 \"each\"\n"));

    std::fs::write(
        root.join("infra.ts"),
        "import { TemporalNamespace } from \"@intentius/chant-lexicon-temporal\";\nexport const ns = new TemporalNamespace({ name: \"x\\\"; touch pwned; \\\"\" });\n",
    )
    .unwrap();
    let out = chant(root, &["build", "."]);
    assert_eq!(out.status.code(), Some(1));
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("ns: name"),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// The temporal stacks are composites: their members are entities of their own.
#[test]
fn temporal_stacks_declare_their_server_namespace_and_attributes() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    std::fs::write(
        root.join("chant.config.json"),
        r#"{"lexicons":["temporal"]}"#,
    )
    .unwrap();
    std::fs::write(
        root.join("infra.ts"),
        "import { TemporalDevStack, TemporalCloudStack } from \"@intentius/chant-lexicon-temporal\";\nexport const dev = TemporalDevStack({ namespace: \"app\", uiPort: 8081 });\nexport const cloud = TemporalCloudStack({ namespace: \"prod\", searchAttributes: [{ name: \"Env\", type: \"Keyword\" }] });\n",
    )
    .unwrap();
    let out = chant(root, &["list", "."]);
    let listed = String::from_utf8_lossy(&out.stdout);
    for line in [
        "cloudNs ",
        "cloudSearchAttributes_0 ",
        "devNs ",
        "devServer ",
    ] {
        assert!(listed.contains(line), "{listed}");
    }
    let out = chant(root, &["build", ".", "-o", "out/docker-compose.yml"]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let compose = std::fs::read_to_string(root.join("out/docker-compose.yml")).unwrap();
    assert!(compose.contains("temporal server start-dev --namespace default --ui-port 8081\n"));
    let setup = std::fs::read_to_string(root.join("out/temporal-setup.sh")).unwrap();
    assert!(
        setup.contains("  --namespace \"app\" \\\n  --retention \"7d\"\n"),
        "{setup}"
    );
    assert!(
        setup.contains("  --namespace \"prod\" \\\n  --name \"Env\" \\\n  --type Keyword\n"),
        "{setup}"
    );
}

/// The temporal post-synth checks: TMP001 and TMP011 fail the build, TMP002 and TMP010 warn.
#[test]
fn temporal_post_synth_checks_warn_and_fail_as_the_reference() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    std::fs::write(
        root.join("chant.config.json"),
        r#"{"lexicons":["temporal"]}"#,
    )
    .unwrap();
    let build = |src: &str| {
        std::fs::write(root.join("infra.ts"), format!("import {{ TemporalNamespace, SearchAttribute, TemporalSchedule }} from \"@intentius/chant-lexicon-temporal\";\n{src}")).unwrap();
        let out = chant(root, &["build", "."]);
        (
            out.status.code(),
            String::from_utf8_lossy(&out.stderr).into_owned(),
        )
    };
    let (code, stderr) = build(
        "export const s = new TemporalSchedule({ scheduleId: \"s\", spec: { cronExpressions: [\"every day\"] }, action: { workflowType: \"w\", taskQueue: \"q\" }, policies: { overlap: \"AllowAll\" } });\n",
    );
    assert_eq!(code, Some(0), "{stderr}");
    // The warnings, then (no -o) the extra file.
    assert!(
        stderr.starts_with("warning: [s] Schedule \"s\" uses overlap \"AllowAll\" — add state.note explaining why concurrent runs are safe. Add state: { note: \"Workflow is idempotent — concurrent runs are safe\" } (temporal)\nwarning: [s] schedules/s.ts: cron expression \"every day\" does not look like valid 5- or 6-field cron syntax (temporal)\n\n--- schedules/s.ts ---\n"),
        "{stderr}"
    );
    let (code, stderr) = build(
        "export const ns = new TemporalNamespace({ name: \"short\", retention: \"1d\" });\nexport const attr = new SearchAttribute({ name: \"Env\", type: \"Keyword\", namespace: \"other\" });\n",
    );
    assert_eq!(code, Some(1));
    assert!(
        stderr.contains(
            "error: [ns] Namespace \"ns\" has retention \"1d\" — minimum recommended is 3d (72h)"
        ),
        "{stderr}"
    );
    assert!(stderr.contains("error: [attr] SearchAttribute \"attr\" references namespace \"other\" which is not declared"), "{stderr}");
}

/// The temporal lexicon's data and duration helpers work in a project's TypeScript.
#[test]
fn temporal_duration_helpers_and_profiles_are_exported() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    std::fs::write(
        root.join("chant.config.json"),
        r#"{"lexicons":["temporal"]}"#,
    )
    .unwrap();
    std::fs::write(
        root.join("i.ts"),
        "import { parseDurationSeconds, formatDurationSeconds, reconcileDuration, TEMPORAL_ACTIVITY_PROFILES, TEMPORAL_NAMESPACE_DEFAULTS, TemporalNamespace } from \"@intentius/chant-lexicon-temporal\";\nexport const ns = new TemporalNamespace({ name: \"n\", description: `${parseDurationSeconds(\"1h30m\")} ${parseDurationSeconds(\"x\")} ${formatDurationSeconds(2592000)} ${formatDurationSeconds(1.5)} ${reconcileDuration(\"720h\", 2592000)} ${reconcileDuration(\"1d\", 60)} ${TEMPORAL_ACTIVITY_PROFILES.longInfra.startToCloseTimeout} ${TEMPORAL_NAMESPACE_DEFAULTS.retention}` });\n",
    )
    .unwrap();
    let out = chant(root, &["build", ".", "-o", "out/c.yml"]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let setup = std::fs::read_to_string(root.join("out/temporal-setup.sh")).unwrap();
    assert!(
        setup.contains("--description \"5400 undefined 30d 1500ms 720h 1m 20m 7d\""),
        "{setup}"
    );
}

#[test]
fn temporal_deep_normalization_hooks_prune_defaults_and_order_sets() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    std::fs::write(
        root.join("chant.config.json"),
        r#"{"lexicons":["temporal"]}"#,
    )
    .unwrap();
    std::fs::write(
        root.join("i.ts"),
        "import { temporalDeepNormalizationHooks as h, TemporalNamespace } from \"@intentius/chant-lexicon-temporal\";\nconst live = (pattern: string, value: unknown, entityType = \"Temporal::Schedule\") => h.prune({ side: \"live\", counterpart: \"absent\", entityType, pattern, value });\nconst r = [live(\"state\", { note: \"\", paused: false }), live(\"state.paused\", true), live(\"retention\", \"7d\", \"Temporal::Namespace\"), h.prune({ side: \"declared\", counterpart: \"absent\", entityType: \"Temporal::Namespace\", pattern: \"retention\", value: \"7d\" }), h.orderKey({ pattern: \"spec.cronExpressions[]\", element: \"0 * * * *\" }), h.orderKey({ pattern: \"action.args[]\", element: 1 }), h.orderKey({ pattern: \"spec.intervals[]\", element: { every: \"1h\", offset: \"0s\" } })];\nexport const ns = new TemporalNamespace({ name: \"n\", description: JSON.stringify(r).replace(/\"/g, \"'\") });\n",
    )
    .unwrap();
    let out = chant(root, &["build", ".", "-o", "out/c.yml"]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let setup = std::fs::read_to_string(root.join("out/temporal-setup.sh")).unwrap();
    assert!(
        setup.contains("[true,false,true,false,'0 * * * *',null,'{") && setup.contains("every"),
        "{setup}"
    );
}
