//! The local runtime's activities, black-box through `chant run`: the temporal builders' step
//! shapes, `chantBuild` building in process and writing what the project's build script says,
//! `httpCheck` against a server of the test's own, tools that are not on PATH, activities
//! other lexicons provide, and a build that would leave the repository.

use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::{Value, json};

const BIN: &str = env!("CARGO_BIN_EXE_chant");

/// A repository whose project uses `lexicons`, with `ops/t.op.ts` holding `op`'s one phase.
fn repo(lexicons: &str, steps: &str) -> (tempfile::TempDir, PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let root = std::fs::canonicalize(dir.path()).unwrap().join("repo");
    std::fs::create_dir_all(root.join("ops")).unwrap();
    assert!(
        Command::new("git")
            .args(["init", "-q"])
            .current_dir(&root)
            .status()
            .unwrap()
            .success()
    );
    std::fs::write(
        root.join("chant.config.json"),
        format!(r#"{{"lexicons":{lexicons}}}"#),
    )
    .unwrap();
    std::fs::write(
        root.join("ops/t.op.ts"),
        format!(
            "import {{ Op, phase, build, kubectlApply, helmInstall, httpCheck, teardown, lifecycleSnapshot, awsApply, azApply, gitlabPipeline, k3dUp, flociUp }} from \"@intentius/chant-lexicon-temporal\";\nexport default Op({{ name: \"t\", overview: \"o\", phases: [phase(\"P\", [{steps}], {{ parallel: true }})] }});\n"
        ),
    )
    .unwrap();
    (dir, root)
}

/// `chant run t --json`'s records, with PATH as given (None: the test's own).
fn run(root: &Path, path: Option<&str>) -> Vec<Value> {
    let mut cmd = Command::new(BIN);
    cmd.args(["run", "t", "--json"]).current_dir(root);
    if let Some(p) = path {
        cmd.env("PATH", p);
    }
    let out = cmd.output().unwrap();
    let v: Value = serde_json::from_slice(&out.stdout)
        .unwrap_or_else(|e| panic!("{e}: {}", String::from_utf8_lossy(&out.stderr)));
    v["records"].as_array().unwrap().clone()
}

#[test]
fn the_builders_make_the_reference_step_shapes_and_a_profile_never_leaks_into_args() {
    let (_d, root) = repo(
        r#"["temporal"]"#,
        r#"kubectlApply("k.yaml", { profile: "k8sWait", namespace: "x" }), helmInstall("web", "bitnami/nginx", { values: "v.yaml" }), k3dUp("dev", { agents: 2 }), flociUp({ port: 4600 })"#,
    );
    // Only git and sh are on this PATH: every step fails at once, and its args are what was
    // built.
    let bin = root.parent().unwrap().join("bin");
    std::fs::create_dir(&bin).unwrap();
    for tool in ["git", "sh"] {
        let found = String::from_utf8(
            Command::new("sh")
                .args(["-c", &format!("command -v {tool}")])
                .output()
                .unwrap()
                .stdout,
        )
        .unwrap();
        std::os::unix::fs::symlink(found.trim(), bin.join(tool)).unwrap();
    }
    let records = run(&root, Some(bin.to_str().unwrap()));
    let shape: Vec<Value> = records
        .iter()
        .map(|r| json!([r["fn"], r["args"]]))
        .collect();
    assert_eq!(
        shape,
        [
            json!(["kubectlApply", {"manifest": "k.yaml", "namespace": "x"}]),
            json!(["helmInstall", {"name": "web", "chart": "bitnami/nginx", "values": "v.yaml"}]),
            json!(["k3dUp", {"name": "dev", "agents": 2}]),
            json!(["flociUp", {"port": 4600}]),
        ]
    );
    for (r, tool) in records.iter().zip(["kubectl", "helm", "k3d", "docker"]) {
        assert_eq!(r["status"], "fail");
        assert_eq!(
            r["error"],
            format!(
                "activity \"{}\" needs {tool} on PATH",
                r["fn"].as_str().unwrap()
            )
        );
        // A missing tool is not retried (longInfra would wait 30 s before a second try).
        assert!(r["durationMs"].as_u64().unwrap() < 5_000, "{r}");
    }
}

#[test]
fn chant_build_runs_the_projects_build_script_in_process() {
    let (_d, root) = repo(
        r#"["gitlab"]"#,
        r#"build("app"), build("app", { script: "build:other" }), build("bare"), build("../.."), lifecycleSnapshot("dev"), teardown("app")"#,
    );
    let app = root.join("app");
    std::fs::create_dir_all(app.join("src")).unwrap();
    std::fs::write(app.join("chant.config.json"), r#"{"lexicons":["gitlab"]}"#).unwrap();
    std::fs::write(
        app.join("src/ci.ts"),
        "import { Job } from \"@intentius/chant-lexicon-gitlab\";\nexport const lint = new Job({ stage: \"test\", script: [\"make lint\"], timeout: \"5m\" });\n",
    )
    .unwrap();
    std::fs::write(
        app.join("package.json"),
        r#"{"scripts": {"build": "echo before > before.txt && chant build src --lexicon gitlab -o dist/.gitlab-ci.yml"}}"#,
    )
    .unwrap();
    let bare = root.join("bare");
    std::fs::create_dir_all(&bare).unwrap();
    std::fs::write(bare.join("chant.config.json"), r#"{"lexicons":["gitlab"]}"#).unwrap();
    std::fs::write(bare.join("x.ts"), "import { Job } from \"@intentius/chant-lexicon-gitlab\";\nexport const j = new Job({ script: [\"true\"], timeout: \"1m\" });\n").unwrap();
    // The project lists only gitlab: the Op's own lexicon (temporal) brings chantBuild.
    let records = run(&root, None);
    assert_eq!(records[0]["status"], "ok", "{}", records[0]);
    assert_eq!(
        std::fs::read_to_string(app.join("dist/.gitlab-ci.yml")).unwrap(),
        "stages:\n  - test\n\nlint:\n  stage: test\n  script:\n    - make lint\n  timeout: '5m'\n"
    );
    assert_eq!(
        std::fs::read_to_string(app.join("before.txt")).unwrap(),
        "before\n"
    );
    assert_eq!(
        records[1]["error"],
        "app/package.json has no \"build:other\" script"
    );
    // No build script: built in process, nothing written.
    assert_eq!(records[2]["status"], "ok", "{}", records[2]);
    assert_eq!(std::fs::read_dir(&bare).unwrap().count(), 2);
    // A project outside the repository is not built, and its scripts are not run.
    assert_eq!(records[3]["status"], "fail");
    assert!(
        records[3]["error"]
            .as_str()
            .unwrap()
            .contains("must be inside the project"),
        "{}",
        records[3]
    );
    assert_eq!(records[4]["status"], "ok", "{}", records[4]);
    assert!(
        records[5]["error"]
            .as_str()
            .unwrap()
            .starts_with("app/package.json has no \"teardown\" script")
    );
}

/// A server answering every connection with `answer` (each read to the end of its headers).
fn serve(answer: &'static str) -> u16 {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    std::thread::spawn(move || {
        for stream in listener.incoming() {
            let Ok(mut s) = stream else { continue };
            std::thread::spawn(move || {
                let mut got = Vec::new();
                let mut buf = [0u8; 1024];
                while !got.windows(4).any(|w| w == b"\r\n\r\n") {
                    match s.read(&mut buf) {
                        Ok(0) | Err(_) => return,
                        Ok(n) => got.extend_from_slice(&buf[..n]),
                    }
                }
                let _ = s.write_all(answer.as_bytes());
            });
        }
    });
    port
}

#[test]
fn http_check_asks_the_url_and_checks_status_and_body() {
    let ok = serve("HTTP/1.1 200 OK\r\nContent-Length: 11\r\n\r\nhello world");
    let missing = serve("HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\n\r\n");
    let steps = format!(
        r#"httpCheck("http://127.0.0.1:{ok}/health"), httpCheck("http://127.0.0.1:{ok}/", {{ contains: "world", status: 200 }}), httpCheck("http://127.0.0.1:{ok}/", {{ contains: "planet", profile: "policyCheck" }}), httpCheck("http://127.0.0.1:{missing}/", {{ profile: "policyCheck" }}), httpCheck("ftp://x/", {{ profile: "policyCheck" }}), httpCheck("http://127.0.0.1:{ok}/a\tb", {{ profile: "policyCheck" }})"#
    );
    let (_d, root) = repo(r#"["temporal"]"#, &steps);
    let records = run(&root, None);
    let got: Vec<Value> = records
        .iter()
        .map(|r| json!([r["status"], r["error"]]))
        .collect();
    assert_eq!(
        got,
        [
            json!(["ok", null]),
            json!(["ok", null]),
            json!([
                "fail",
                format!("httpCheck failed for http://127.0.0.1:{ok}/: body missing \"planet\"")
            ]),
            json!([
                "fail",
                format!("httpCheck failed for http://127.0.0.1:{missing}/: status 404 (want 2xx)")
            ]),
            json!([
                "fail",
                "httpCheck url must be http:// or https:// (got \"ftp://x/\")"
            ]),
            json!([
                "fail",
                format!("httpCheck url \"http://127.0.0.1:{ok}/a\tb\" is not one it can ask")
            ]),
        ]
    );
}

#[test]
fn activities_other_lexicons_provide_say_which() {
    let (_d, root) = repo(
        r#"["temporal"]"#,
        r#"azApply("t.json"), gitlabPipeline("p"), awsApply("t.json")"#,
    );
    let records = run(&root, None);
    assert_eq!(
        records[0]["error"],
        "activity \"azApply\" is provided by the azure lexicon, which this chant does not have"
    );
    assert_eq!(
        records[1]["error"],
        "activity \"gitlabPipeline\" is provided by the gitlab lexicon, and this chant's gitlab lexicon does not run it yet"
    );
    assert_eq!(
        records[2]["error"],
        "activity \"awsApply\" is provided by the aws lexicon, and this chant's aws lexicon does not run it yet"
    );
}

/// The Op composites make the reference's Ops: their phases and steps, in order.
#[test]
fn op_composites_declare_the_reference_phases() {
    let dir = tempfile::tempdir().unwrap();
    let root = std::fs::canonicalize(dir.path()).unwrap();
    assert!(
        Command::new("git")
            .args(["init", "-q"])
            .current_dir(&root)
            .status()
            .unwrap()
            .success()
    );
    std::fs::write(
        root.join("chant.config.json"),
        r#"{"lexicons":["temporal"]}"#,
    )
    .unwrap();
    std::fs::write(
        root.join("apply.op.ts"),
        "import { ApplyOp } from \"@intentius/chant-lexicon-temporal\";\nexport default ApplyOp({ name: \"apply\", env: \"local\", delete: \"gated\" }).op;\n",
    )
    .unwrap();
    std::fs::write(
        root.join("watch.op.ts"),
        "import { WatchOp } from \"@intentius/chant-lexicon-temporal\";\nconst w = WatchOp({ name: \"observe-it\", env: \"dev\", schedule: \"0 * * * *\" });\nexport default w.op;\nexport const schedule = w.schedule;\n",
    )
    .unwrap();
    let out = Command::new(BIN)
        .args(["run", "list", "--json"])
        .current_dir(&root)
        .output()
        .unwrap();
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    let names: Vec<&str> = v["ops"]
        .as_array()
        .unwrap()
        .iter()
        .map(|o| o["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["apply", "observe-it"], "{v}");
    assert_eq!(v["errors"], json!([]));
    // Apply: build, plan (the digest diff; nothing observes live state, which it says), and
    // the gate a gated delete mode asks for.
    let out = Command::new(BIN)
        .args(["run", "apply", "--json"])
        .current_dir(&root)
        .output()
        .unwrap();
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    let steps: Vec<Value> = v["records"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| json!([r["phase"], r["fn"], r["status"]]))
        .collect();
    assert_eq!(
        steps,
        [
            json!(["Build", "chantBuild", "ok"]),
            json!(["Plan", "lifecycleDiff", "ok"]),
            json!(["Approve", "gate:approve-apply", "gated"]),
        ]
    );
}

#[test]
fn audit_op_composites_declare_their_one_audit_step() {
    let dir = tempfile::tempdir().unwrap();
    let root = std::fs::canonicalize(dir.path()).unwrap();
    assert!(
        Command::new("git")
            .args(["init", "-q"])
            .current_dir(&root)
            .status()
            .unwrap()
            .success()
    );
    std::fs::write(
        root.join("chant.config.json"),
        r#"{"lexicons":["temporal"]}"#,
    )
    .unwrap();
    std::fs::write(
        root.join("a.op.ts"),
        "import { WorkflowAuditOp, PipelineAuditOp, LexiconUpgradeOp } from \"@intentius/chant-lexicon-temporal\";\nexport const p = PipelineAuditOp({ name: \"p\" });\nexport const u = LexiconUpgradeOp({ lexicon: \"aws\" });\nexport default WorkflowAuditOp({ name: \"audit\", workflowsDir: \"wf\", onFinding: \"issue\" }).op;\n",
    )
    .unwrap();
    std::fs::write(
        root.join("bad.op.ts"),
        "import { LexiconUpgradeOp } from \"@intentius/chant-lexicon-temporal\";\nexport default LexiconUpgradeOp({ lexicon: \"temporal\" }).op;\n",
    )
    .unwrap();
    let out = Command::new(BIN)
        .args(["run", "list", "--json"])
        .current_dir(&root)
        .output()
        .unwrap();
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert!(
        v["errors"][0].as_str().unwrap().ends_with("LexiconUpgradeOp: \"temporal\" is not in scope. In-scope lexicons: k8s, gcp, docker, gitlab, aws, azure, github, fly, cedar (helm, temporal, forgejo have no upstream spec)."),
        "{v}"
    );
    let out = Command::new(BIN)
        .args(["run", "audit", "--json"])
        .current_dir(&root)
        .output()
        .unwrap();
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    let r = &v["records"][0];
    assert_eq!(
        json!([r["phase"], r["fn"], r["args"]]),
        json!(["Audit", "workflowSupplyChainAudit", {"workflowsDir": "wf", "mode": "issue"}])
    );
}

#[test]
fn scripts_of_projects_outside_the_repository_never_run_and_shell_syntax_goes_to_sh_whole() {
    let (d, root) = repo(
        r#"["temporal"]"#,
        r#"build("../outside"), teardown("lnk"), build("p", { script: "commented" })"#,
    );
    let outside = d.path().canonicalize().unwrap().join("outside");
    std::fs::create_dir_all(&outside).unwrap();
    let marker = outside.join("ran");
    std::fs::write(
        outside.join("package.json"),
        format!(
            r#"{{"scripts": {{"build": "touch {0}", "teardown": "touch {0}"}}}}"#,
            marker.display()
        ),
    )
    .unwrap();
    std::os::unix::fs::symlink(&outside, root.join("lnk")).unwrap();
    let p = root.join("p");
    std::fs::create_dir_all(&p).unwrap();
    std::fs::write(
        p.join("package.json"),
        r#"{"scripts": {"commented": "echo hi # not run && touch after-comment"}}"#,
    )
    .unwrap();
    let records = run(&root, None);
    for r in &records[..2] {
        assert_eq!(r["status"], "fail", "{r}");
        assert!(
            r["error"]
                .as_str()
                .unwrap()
                .contains("must be inside the project"),
            "{r}"
        );
    }
    assert!(!marker.exists(), "a script outside the repository ran");
    assert_eq!(records[2]["status"], "ok", "{}", records[2]);
    assert!(
        !p.join("after-comment").exists(),
        "sh would not run what follows a comment"
    );
}

/// `bin/<name>`: a script that appends its arguments to `calls.log` and prints `say`.
fn fake_tool(root: &Path, name: &str, say: &str) -> PathBuf {
    let bin = root.parent().unwrap().join("bin");
    std::fs::create_dir_all(&bin).unwrap();
    let log = root.parent().unwrap().join("calls.log");
    let path = bin.join(name);
    std::fs::write(
        &path,
        format!(
            "#!/bin/sh\necho \"{name} $*\" >> '{}'\necho '{say}'\n",
            log.display()
        ),
    )
    .unwrap();
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
    bin
}

fn calls(root: &Path) -> Vec<String> {
    std::fs::read_to_string(root.parent().unwrap().join("calls.log"))
        .unwrap_or_default()
        .lines()
        .map(str::to_owned)
        .collect()
}

fn with_bin(bin: &Path) -> String {
    format!("{}:{}", bin.display(), std::env::var("PATH").unwrap())
}

/// One activity step as the reference writes it, its whole result kept as the outcome `r`.
fn step(function: &str, args: &str) -> String {
    format!(
        r#"{{ kind: "activity", fn: "{function}", args: {args}, profile: "policyCheck", outcomeAttribute: {{ name: "r" }} }}"#
    )
}

#[test]
fn lifecycle_diff_reconcile_and_upgrade_run_locally_and_say_what_they_cannot_do() {
    let steps = [
        step("lifecycleDiff", r#"{ env: "dev", live: true }"#),
        step("reconcilePr", r#"{ env: "dev", mode: "report" }"#),
        step("reconcilePr", r#"{ env: "dev", mode: "issue" }"#),
        step(
            "reconcilePr",
            r#"{ env: "dev", mode: "issue", entries: [{ name: "x", action: "noop" }] }"#,
        ),
        step("reconcilePr", r#"{ env: "dev" }"#),
        step("lexiconUpgrade", r#"{ lexicon: "aws" }"#),
        step("lifecycleDiff", r#"{ env: "dev", live: "yes" }"#),
    ]
    .join(", ");
    let (_d, root) = repo(r#"["temporal"]"#, &steps);
    std::fs::create_dir_all(root.join("src")).unwrap();
    std::fs::write(
        root.join("src/ns.ts"),
        "import { TemporalNamespace } from \"@intentius/chant-lexicon-temporal\";\nexport const hello = new TemporalNamespace({ name: \"hello\", retention: \"7d\" });\n",
    )
    .unwrap();
    let bin = fake_tool(&root, "gh", "https://github.com/o/r/issues/7");
    let records = run(&root, Some(&with_bin(&bin)));
    let diff = &records[0]["outcome"]["value"];
    assert_eq!(records[0]["status"], "ok", "{}", records[0]);
    assert_eq!(diff["drifted"], true);
    assert_eq!(
        diff["diff"],
        json!({"temporal": {"added": ["t", "hello"], "removed": [], "changed": [], "unchanged": [], "lexiconVersionChanges": []}})
    );
    assert_eq!(
        diff["output"],
        "temporal (dev): 2 added, 0 removed, 0 changed, 0 unchanged\nADDED (2)\n  t\n  hello"
    );
    assert_eq!(diff["observed"], false);
    assert!(
        diff["note"]
            .as_str()
            .unwrap()
            .starts_with("no lexicon of this project observes deployed state"),
        "{diff}"
    );
    let report = &records[1]["outcome"]["value"];
    assert_eq!(
        report["entries"],
        json!([{"name": "t", "action": "create"}, {"name": "hello", "action": "create"}])
    );
    assert!(
        report["summary"]
            .as_str()
            .unwrap()
            .contains("| hello | create |  |")
    );
    assert_eq!(report.get("issueUrl"), None);
    let issue = &records[2]["outcome"]["value"];
    assert_eq!(issue["issueUrl"], "https://github.com/o/r/issues/7");
    // No drift: no issue.
    assert_eq!(records[3]["outcome"]["value"]["entries"], json!([]));
    assert_eq!(records[3]["outcome"]["value"].get("issueUrl"), None);
    assert_eq!(
        calls(&root)[..1],
        ["gh issue create --title=Reconcile dev: 2 change(s) from live --body=Reconcile from live environment `dev`."]
            .map(str::to_owned),
        "gh got the title and the body (its first line) as --flag=value words"
    );
    assert!(
        records[4]["error"].as_str().unwrap().starts_with(
            "reconcilePr mode \"pull-request\" regenerates source from the live dev environment"
        ),
        "{}",
        records[4]
    );
    assert!(
        records[5]["error"]
            .as_str()
            .unwrap()
            .starts_with("lexiconUpgrade regenerates a lexicon's source tree"),
        "{}",
        records[5]
    );
    assert_eq!(
        records[6]["error"],
        "lifecycleDiff live must be true or false (got \"yes\")"
    );
}

#[test]
fn native_apply_drives_the_targets_tool_and_compensate_rolls_back_or_says_it_did_not() {
    let steps = [
        step(
            "nativeApply",
            r#"{ target: "kubectl", env: "dev", forceConflicts: true }"#,
        ),
        step(
            "nativeApply",
            r#"{ target: "kustomize", env: "dev", output: "k" }"#,
        ),
        step("nativeApply", r#"{ target: "cloudformation", env: "dev" }"#),
        step(
            "nativeApply",
            r#"{ target: "kubectl", env: "dev", deleteMode: "owned-only" }"#,
        ),
        step("nativeApply", r#"{ target: "arm", env: "rg" }"#),
        step(
            "nativeApply",
            r#"{ target: "cloudformation", env: "dev", output: "nope.json" }"#,
        ),
        step(
            "nativeApply",
            r#"{ target: "cloudformation", env: "--stack-name=other" }"#,
        ),
        step("nativeApply", r#"{ target: "helm", env: "dev" }"#),
        step(
            "compensateApply",
            r#"{ target: "cloudformation", env: "dev" }"#,
        ),
        step("compensateApply", r#"{ target: "kubectl", env: "dev" }"#),
        step(
            "compensateApply",
            r#"{ target: "kubectl", env: "dev", command: "echo undone > undone.txt" }"#,
        ),
        step(
            "nativeApply",
            r#"{ target: "kubectl", env: "dev", output: "/etc" }"#,
        ),
        step(
            "nativeApply",
            r#"{ target: "cloudformation", env: "dev", output: "lnk/passwd" }"#,
        ),
        step(
            "compensateApply",
            r#"{ target: "kubectl", env: "dev", command: "" }"#,
        ),
    ]
    .join(", ");
    let (_d, root) = repo(r#"["temporal"]"#, &steps);
    std::fs::create_dir_all(root.join("dist")).unwrap();
    std::fs::create_dir_all(root.join("k")).unwrap();
    std::fs::write(root.join("template.json"), "{}").unwrap();
    std::os::unix::fs::symlink("/etc", root.join("lnk")).unwrap();
    fake_tool(
        &root,
        "kubectl",
        "deployment.apps/web serverside-applied\nservice/web serverside-applied",
    );
    let bin = fake_tool(&root, "aws", "ok");
    let mut cmd = Command::new(BIN);
    cmd.args(["run", "t", "--json"])
        .current_dir(&root)
        .env("PATH", with_bin(&bin))
        .env("AWS_ENDPOINT_URL", "http://127.0.0.1:4566");
    let out = cmd.output().unwrap();
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    let records = v["records"].as_array().unwrap();
    let status: Vec<&str> = records
        .iter()
        .map(|r| r["status"].as_str().unwrap())
        .collect();
    assert_eq!(
        status,
        [
            "ok", "ok", "ok", "fail", "fail", "fail", "fail", "fail", "ok", "ok", "ok", "fail",
            "fail", "fail"
        ],
        "{records:?}"
    );
    let kubectl = &records[0]["outcome"]["value"];
    assert_eq!(kubectl["applied"], 2);
    assert_eq!(kubectl["fieldManager"], "chant");
    let mut seen = calls(&root);
    seen.sort();
    let r = root.display();
    assert_eq!(
        seen,
        [
            format!("aws --endpoint-url http://127.0.0.1:4566 cloudformation deploy --template-file {r}/template.json --stack-name dev --capabilities CAPABILITY_NAMED_IAM"),
            "aws --endpoint-url http://127.0.0.1:4566 cloudformation rollback-stack --stack-name dev".to_owned(),
            "aws --endpoint-url http://127.0.0.1:4566 cloudformation wait stack-rollback-complete --stack-name dev".to_owned(),
            format!("kubectl apply --server-side --field-manager=chant --force-conflicts -f {r}/dist"),
            format!("kubectl apply --server-side --field-manager=chant -k {r}/k"),
        ],
        "what a tool reads is the repository's, by the path it resolved to"
    );
    for i in [11, 12] {
        assert!(
            records[i]["error"]
                .as_str()
                .unwrap()
                .contains("must be inside the project"),
            "{}",
            records[i]
        );
    }
    assert_eq!(
        records[13]["error"],
        "compensateApply command must be a non-empty string (got \"\")"
    );
    let error = |i: usize| records[i]["error"].as_str().unwrap().to_owned();
    assert!(error(3).starts_with("nativeApply deleteMode \"owned-only\" on target \"kubectl\" needs the k8s lexicon's sweep"), "{}", error(3));
    assert!(
        error(4).starts_with("activity \"nativeApply\" target \"arm\" needs the azure lexicon"),
        "{}",
        error(4)
    );
    assert!(
        error(5).starts_with("nativeApply output nope.json does not exist"),
        "{}",
        error(5)
    );
    assert_eq!(
        error(6),
        "nativeApply env may not start with -: \"--stack-name=other\""
    );
    assert_eq!(
        error(7),
        "nativeApply target must be one of \"kubectl\", \"cloudformation\", \"kustomize\", \"arm\" (got \"helm\")"
    );
    assert_eq!(records[9]["outcome"]["value"]["reverted"], false);
    assert!(
        records[9]["outcome"]["value"]["warning"]
            .as_str()
            .unwrap()
            .contains("was NOT reverted")
    );
    assert_eq!(records[10]["outcome"]["value"]["reverted"], true);
    assert_eq!(
        std::fs::read_to_string(root.join("undone.txt")).unwrap(),
        "undone\n"
    );
}

/// A web API of the test's own: `routes` are `(path and query, status, body)`; every other
/// path answers 404. The requests it got (request line and headers) are in the log.
fn api(routes: Vec<(String, u16, String)>) -> (u16, std::sync::Arc<std::sync::Mutex<Vec<String>>>) {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    let log = std::sync::Arc::new(std::sync::Mutex::new(Vec::new()));
    let seen = std::sync::Arc::clone(&log);
    std::thread::spawn(move || {
        for stream in listener.incoming() {
            let Ok(mut s) = stream else { continue };
            let mut got = Vec::new();
            let mut buf = [0u8; 4096];
            while !got.windows(4).any(|w| w == b"\r\n\r\n") {
                match s.read(&mut buf) {
                    Ok(0) | Err(_) => break,
                    Ok(n) => got.extend_from_slice(&buf[..n]),
                }
            }
            let request = String::from_utf8_lossy(&got).into_owned();
            let path = request.split(' ').nth(1).unwrap_or("").to_owned();
            seen.lock().unwrap().push(request);
            let (status, body) = routes
                .iter()
                .find(|(p, _, _)| *p == path)
                .map_or((404, "{}".to_owned()), |(_, st, b)| (*st, b.clone()));
            let _ = write!(
                s,
                "HTTP/1.1 {status} X\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
                body.len()
            );
        }
    });
    (port, log)
}

#[test]
fn the_workflow_audit_resolves_each_pin_upstream_and_lists_what_it_could_not_ask() {
    let sha = "8f4b7f84864484a7bf31766abe9204da3cbe65b3";
    let old = "1111111111111111111111111111111111111111";
    let r = |p: &str, st: u16, b: &str| (p.to_owned(), st, b.to_owned());
    let (port, log) = api(vec![
        r("/repos/actions/checkout", 200, r#"{"archived": false}"#),
        r(&format!("/repos/actions/checkout/commits/{sha}"), 200, "{}"),
        r(&format!("/repos/actions/checkout/commits/{old}"), 200, "{}"),
        r(
            "/repos/actions/checkout/tags?per_page=100",
            200,
            &format!(r#"[{{"name": "v4.1.1", "commit": {{"sha": "{sha}"}}}}]"#),
        ),
        r(
            "/advisories?ecosystem=actions&affects=actions%2Fcheckout",
            200,
            "[]",
        ),
        r("/repos/old/thing", 200, r#"{"archived": true}"#),
        r("/repos/old/thing/commits/v1", 200, "{}"),
        r("/repos/old/thing/git/ref/tags/v1", 200, "{}"),
        r("/repos/old/thing/git/ref/heads/v1", 200, "{}"),
        r(
            "/advisories?ecosystem=actions&affects=old%2Fthing",
            200,
            r#"[{"ghsa_id": "GHSA-aaaa-bbbb-cccc", "vulnerabilities": [{"package": {"name": "old/thing"}, "vulnerable_version_range": "< 2"}]}]"#,
        ),
        r("/repos/flaky/api", 502, "bad gateway"),
    ]);
    let (_d, root) = repo(
        r#"["temporal"]"#,
        &step(
            "workflowSupplyChainAudit",
            r#"{ env: { GITHUB_TOKEN: "t0ken" } }"#,
        ),
    );
    std::fs::create_dir_all(root.join(".github/workflows")).unwrap();
    std::fs::write(
        root.join(".github/workflows/ci.yml"),
        format!("on: push\njobs:\n  a:\n    runs-on: x\n    steps:\n      - uses: actions/checkout@{sha} # v4.1.0\n      - uses: actions/checkout@{old}\n      - uses: old/thing@v1\n      - uses: gone/repo@v2\n      - uses: flaky/api@v1\n      - uses: ./local\n      - uses: docker://alpine\n"),
    )
    .unwrap();
    let run_it = || -> Value {
        let mut cmd = Command::new(BIN);
        cmd.args(["run", "t", "--json"])
            .current_dir(&root)
            .env("GITHUB_API_URL", format!("http://127.0.0.1:{port}"))
            .env("GITHUB_TOKEN", "chants-own");
        serde_json::from_slice(&cmd.output().unwrap().stdout).unwrap()
    };
    // One reference could not be asked: the audit is not clean, and says everything it found.
    let v = run_it();
    assert_eq!(v["records"][0]["status"], "fail", "{v}");
    let error = v["records"][0]["error"].as_str().unwrap();
    assert!(error.starts_with("## Workflow supply-chain audit\n\n6 finding(s) against live upstream truth:\n\n| Action | Ref | Finding | Detail |\n"), "{error}");
    assert!(
        error.ends_with(
            &("1 reference(s) could not be checked:\n\n- flaky/api@v1: http://127.0.0.1:"
                .to_owned()
                + &port.to_string()
                + "/repos/flaky/api answered 502\n\n1 reference(s) not asked:\n\n- docker://alpine@: not an owner/repo@ref action on GitHub (docker:// images and other forms are not asked)\n")
        ),
        "{error}"
    );
    std::fs::write(
        root.join(".github/workflows/ci.yml"),
        format!("on: push\njobs:\n  a:\n    runs-on: x\n    steps:\n      - uses: actions/checkout@{sha} # v4.1.0\n      - uses: actions/checkout@{old}\n      - uses: old/thing@v1\n      - uses: gone/repo@v2\n      - uses: ./local\n      - uses: docker://alpine\n"),
    )
    .unwrap();
    let v = run_it();
    let out = &v["records"][0]["outcome"]["value"];
    assert_eq!(v["records"][0]["status"], "ok", "{v}");
    let kinds: Vec<String> = out["findings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| {
            format!(
                "{}@{} {}",
                f["slug"].as_str().unwrap(),
                &f["ref"].as_str().unwrap()[..2],
                f["kind"].as_str().unwrap()
            )
        })
        .collect();
    assert_eq!(
        kinds,
        [
            "actions/checkout@8f pin-comment-mismatch",
            "actions/checkout@11 stale-pin",
            "old/thing@v1 ambiguous-ref",
            "old/thing@v1 archived",
            "old/thing@v1 advisory",
            "gone/repo@v2 impostor",
        ]
    );
    assert_eq!(
        out["findings"][4]["detail"],
        "disclosed advisory GHSA-aaaa-bbbb-cccc covers old/thing (vulnerable: < 2)"
    );
    assert_eq!(out["skipped"][0]["slug"], "docker://alpine");
    assert!(
        out["summary"]
            .as_str()
            .unwrap()
            .starts_with("## Workflow supply-chain audit\n\n6 finding(s)")
    );
    let requests = log.lock().unwrap();
    assert!(
        requests
            .iter()
            .all(|r| r.contains("\r\nAuthorization: Bearer t0ken\r\n")),
        "the step's own token, never chant's"
    );
}

#[test]
fn the_pipeline_audit_resolves_includes_and_components_and_stays_inside_the_repository() {
    let r = |p: &str, st: u16, b: &str| (p.to_owned(), st, b.to_owned());
    let (port, _log) = api(vec![
        r(
            "/api/v4/projects/group%2Fci",
            200,
            r#"{"archived": false, "path_with_namespace": "group/ci"}"#,
        ),
        r(
            "/api/v4/projects/group%2Fci/repository/commits/v1.2.0",
            200,
            "{}",
        ),
        r(
            "/api/v4/projects/group%2Frenamed",
            200,
            r#"{"archived": true, "path_with_namespace": "group/new-name"}"#,
        ),
        r(
            "/api/v4/projects/org%2Fcomps",
            200,
            r#"{"archived": false, "path_with_namespace": "org/comps"}"#,
        ),
    ]);
    let steps = [
        step("pipelineSupplyChainAudit", "{}"),
        step(
            "pipelineSupplyChainAudit",
            r#"{ pipelineFile: "../../etc/passwd" }"#,
        ),
        step("pipelineSupplyChainAudit", r#"{ mode: "merge-request" }"#),
    ]
    .join(", ");
    let (_d, root) = repo(r#"["temporal"]"#, &steps);
    std::fs::write(
        root.join(".gitlab-ci.yml"),
        "include:\n  - project: group/ci\n    ref: v1.2.0\n    file: a.yml\n  - project: group/ci\n    ref: gone-tag\n    file: a.yml\n  - project: group/renamed\n    file: b.yml\n  - project: group/missing\n    file: c.yml\n  - component: 127.0.0.1/org/comps/build@~latest\n  - component: elsewhere.com/x/y/z@1.0.0\njob:\n  image: node:20\n  script: [\"true\"]\n",
    )
    .unwrap();
    let mut cmd = Command::new(BIN);
    cmd.args(["run", "t", "--json"])
        .current_dir(&root)
        .env("CI_API_V4_URL", format!("http://127.0.0.1:{port}/api/v4"));
    let v: Value = serde_json::from_slice(&cmd.output().unwrap().stdout).unwrap();
    let out = &v["records"][0]["outcome"]["value"];
    let kinds: Vec<String> = out["findings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| {
            format!(
                "{} {}",
                f["identifier"].as_str().unwrap(),
                f["kind"].as_str().unwrap()
            )
        })
        .collect();
    assert_eq!(
        kinds,
        [
            "group/ci unresolved",
            "group/renamed archived",
            "group/renamed moved",
            "group/missing unresolved",
        ],
        "{out}"
    );
    assert_eq!(
        out["findings"][0]["detail"],
        "include \"group/ci@gone-tag\" no longer resolves upstream"
    );
    let skipped: Vec<&str> = out["skipped"]
        .as_array()
        .unwrap()
        .iter()
        .map(|u| u["identifier"].as_str().unwrap())
        .collect();
    assert_eq!(
        skipped,
        [
            "127.0.0.1/org/comps/build",
            "elsewhere.com/x/y/z",
            "node:20"
        ]
    );
    assert_eq!(v["records"][1]["status"], "fail");
    assert!(
        v["records"][1]["error"]
            .as_str()
            .unwrap()
            .contains("must be inside the project"),
        "{}",
        v["records"][1]
    );
    assert!(
        v["records"][2]["error"]
            .as_str()
            .unwrap()
            .starts_with("pipelineSupplyChainAudit mode \"merge-request\" would re-pin references"),
        "{}",
        v["records"][2]
    );
}

#[test]
fn a_token_reaches_curl_on_its_standard_input_never_its_command_line() {
    let (_d, root) = repo(
        r#"["temporal"]"#,
        &step(
            "workflowSupplyChainAudit",
            r#"{ yaml: "jobs:\n  a:\n    steps:\n      - uses: o/r@v1\n", env: { GITHUB_TOKEN: "s3cret" } }"#,
        ),
    );
    let bin = root.parent().unwrap().join("bin");
    std::fs::create_dir_all(&bin).unwrap();
    let log = root.parent().unwrap().join("curl.log");
    std::fs::write(
        bin.join("curl"),
        format!(
            "#!/bin/sh\necho \"args: $*\" >> '{0}'\nsed 's/^/stdin: /' >> '{0}'\nprintf '[]\\n200'\n",
            log.display()
        ),
    )
    .unwrap();
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(bin.join("curl"), std::fs::Permissions::from_mode(0o755)).unwrap();
    let mut cmd = Command::new(BIN);
    cmd.args(["run", "t", "--json"])
        .current_dir(&root)
        .env("PATH", with_bin(&bin))
        .env("GITHUB_API_URL", "https://api.example.test");
    let v: Value = serde_json::from_slice(&cmd.output().unwrap().stdout).unwrap();
    assert_eq!(v["records"][0]["status"], "ok", "{v}");
    let seen = std::fs::read_to_string(&log).unwrap();
    let args: Vec<&str> = seen.lines().filter(|l| l.starts_with("args: ")).collect();
    assert_eq!(args.len(), 5, "{seen}");
    assert!(args[0].contains("-H @-"), "{seen}");
    assert!(!args.iter().any(|a| a.contains("s3cret")), "{seen}");
    assert_eq!(
        seen.lines()
            .filter(|l| *l == "stdin: Authorization: Bearer s3cret")
            .count(),
        5,
        "{seen}"
    );
}

#[test]
fn apply_watch_and_reconcile_ops_run_end_to_end_on_one_machine() {
    let (_d, root) = repo(r#"["temporal"]"#, "lifecycleSnapshot(\"dev\")");
    std::fs::write(
        root.join("ops/apply.op.ts"),
        "import { ApplyOp } from \"@intentius/chant-lexicon-temporal\";\nexport default ApplyOp({ name: \"apply\", env: \"dev\" }).op;\n",
    )
    .unwrap();
    std::fs::write(
        root.join("ops/watch.op.ts"),
        "import { WatchOp } from \"@intentius/chant-lexicon-temporal\";\nexport default WatchOp({ name: \"watch\", env: \"dev\", schedule: \"0 * * * *\" }).op;\n",
    )
    .unwrap();
    std::fs::write(
        root.join("ops/reconcile.op.ts"),
        "import { ReconcileOp } from \"@intentius/chant-lexicon-temporal\";\nexport default ReconcileOp({ name: \"reconcile\", env: \"dev\", onDrift: \"issue\" }).op;\n",
    )
    .unwrap();
    std::fs::write(
        root.join("package.json"),
        r#"{"scripts": {"build": "mkdir -p dist && echo 'kind: ConfigMap' > dist/cm.yaml"}}"#,
    )
    .unwrap();
    fake_tool(&root, "kubectl", "configmap/cm serverside-applied");
    let bin = fake_tool(&root, "gh", "https://github.com/o/r/issues/9");
    let path = with_bin(&bin);
    let run_op = |name: &str| -> Value {
        let out = Command::new(BIN)
            .args(["run", name, "--json"])
            .current_dir(&root)
            .env("PATH", &path)
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{name}: {}",
            String::from_utf8_lossy(&out.stdout)
        );
        serde_json::from_slice(&out.stdout).unwrap()
    };
    let shape = |v: &Value| -> Vec<String> {
        v["records"]
            .as_array()
            .unwrap()
            .iter()
            .map(|r| {
                format!(
                    "{} {} {}",
                    r["phase"].as_str().unwrap(),
                    r["fn"].as_str().unwrap(),
                    r["status"].as_str().unwrap()
                )
            })
            .collect()
    };
    let apply = run_op("apply");
    assert_eq!(
        shape(&apply),
        [
            "Build chantBuild ok",
            "Plan lifecycleDiff ok",
            "Apply nativeApply ok"
        ]
    );
    assert_eq!(apply["records"][1]["outcome"]["name"], "Drift");
    assert_eq!(apply["records"][1]["outcome"]["value"], true);
    assert_eq!(
        std::fs::read_to_string(root.join("dist/cm.yaml")).unwrap(),
        "kind: ConfigMap\n"
    );
    assert_eq!(
        shape(&run_op("watch")),
        ["Snapshot lifecycleSnapshot ok", "Diff lifecycleDiff ok"]
    );
    let reconcile = run_op("reconcile");
    assert_eq!(
        shape(&reconcile),
        [
            "Snapshot lifecycleSnapshot ok",
            "Plan lifecycleDiff ok",
            "Reconcile reconcilePr ok"
        ]
    );
    assert_eq!(
        reconcile["records"][2]["outcome"],
        json!({"name": "Issue", "value": "https://github.com/o/r/issues/9"})
    );
    assert!(calls(&root).contains(&format!(
        "kubectl apply --server-side --field-manager=chant -f {}",
        root.join("dist").display()
    )));
}

#[test]
fn chants_own_token_never_goes_to_an_api_the_op_chose() {
    let (port, log) = api(vec![(
        "/repos/o/r".to_owned(),
        200,
        r#"{"archived": false}"#.to_owned(),
    )]);
    let (_d, root) = repo(
        r#"["temporal"]"#,
        &step(
            "workflowSupplyChainAudit",
            &format!(
                r#"{{ yaml: "jobs:\n  a:\n    steps:\n      - uses: o/r@v1\n", env: {{ GITHUB_API_URL: "http://127.0.0.1:{port}" }} }}"#
            ),
        ),
    );
    let out = Command::new(BIN)
        .args(["run", "t", "--json"])
        .current_dir(&root)
        .env("GITHUB_TOKEN", "chants-own-secret")
        .output()
        .unwrap();
    assert!(!String::from_utf8_lossy(&out.stdout).contains("chants-own-secret"));
    let requests = log.lock().unwrap();
    assert!(!requests.is_empty());
    assert!(
        requests
            .iter()
            .all(|r| !r.contains("chants-own-secret") && !r.contains("Authorization")),
        "{requests:?}"
    );
}

#[test]
fn a_lifecycle_diff_whose_build_never_ends_stops_at_ctrl_c() {
    let (_d, root) = repo(
        r#"["temporal"]"#,
        &step("lifecycleDiff", r#"{ env: "dev" }"#),
    );
    std::fs::create_dir_all(root.join("src")).unwrap();
    std::fs::write(
        root.join("src/spin.ts"),
        "let i = 0;\nwhile (true) { i++; }\n",
    )
    .unwrap();
    std::fs::write(
        root.join("chant.config.json"),
        r#"{"lexicons":["temporal"],"timeout":"120s"}"#,
    )
    .unwrap();
    let child = Command::new(BIN)
        .args(["run", "t", "--json"])
        .current_dir(&root)
        .stdout(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    std::thread::sleep(std::time::Duration::from_secs(2));
    let start = std::time::Instant::now();
    sigint(child.id());
    let out = child.wait_with_output().unwrap();
    assert!(
        start.elapsed() < std::time::Duration::from_secs(15),
        "took {:?} after Ctrl-C",
        start.elapsed()
    );
    assert_eq!(
        out.status.code(),
        Some(130),
        "{}",
        String::from_utf8_lossy(&out.stdout)
    );
}

/// Ctrl-C, as a terminal sends it.
fn sigint(pid: u32) {
    assert!(
        Command::new("kill")
            .args(["-INT", &pid.to_string()])
            .status()
            .unwrap()
            .success()
    );
}
