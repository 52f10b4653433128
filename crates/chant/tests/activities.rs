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
            "import {{ Op, phase, build, kubectlApply, helmInstall, httpCheck, teardown, lifecycleSnapshot, awsApply, gitlabPipeline, k3dUp, flociUp }} from \"@intentius/chant-lexicon-temporal\";\nexport default Op({{ name: \"t\", overview: \"o\", phases: [phase(\"P\", [{steps}], {{ parallel: true }})] }});\n"
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
        r#"httpCheck("http://127.0.0.1:{ok}/health"), httpCheck("http://127.0.0.1:{ok}/", {{ contains: "world", status: 200 }}), httpCheck("http://127.0.0.1:{ok}/", {{ contains: "planet", profile: "policyCheck" }}), httpCheck("http://127.0.0.1:{missing}/", {{ profile: "policyCheck" }}), httpCheck("ftp://x/", {{ profile: "policyCheck" }})"#
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
        ]
    );
}

#[test]
fn activities_other_lexicons_provide_say_which() {
    let (_d, root) = repo(
        r#"["temporal"]"#,
        r#"awsApply("t.json"), gitlabPipeline("p")"#,
    );
    let records = run(&root, None);
    assert_eq!(
        records[0]["error"],
        "activity \"awsApply\" is provided by the aws lexicon, which this chant does not have"
    );
    assert_eq!(
        records[1]["error"],
        "activity \"gitlabPipeline\" is provided by the gitlab lexicon, and this chant's gitlab lexicon does not run it yet"
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
    // Apply: build, plan (lifecycleDiff: not run by this chant yet, so the run stops there).
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
            json!(["Plan", "lifecycleDiff", "fail"]),
            json!(["Rollback", "compensateApply", "fail"]),
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
