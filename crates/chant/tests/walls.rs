//! The walls a project sets, tried as a hostile agent would: every path a tool takes stays
//! inside the server's project (absolute paths, `..`, symlinks), discovery and the module loader
//! never follow a link out, walks are bounded, `import` keeps what exists, one named file is
//! that file, one evaluation budget no JavaScript escapes (getters, Proxy traps, cancellation,
//! end of input), and a config that is not valid is never silently ignored.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

use mcp_testkit::{ServerProcess, tool_text};
use serde_json::{Value, json};

static BIN: std::sync::LazyLock<String> = std::sync::LazyLock::new(|| {
    std::env::var("CHANT_UNDER_TEST").unwrap_or_else(|_| env!("CARGO_BIN_EXE_chant").to_owned())
});

const JOB: &str = "import { Job } from \"@intentius/chant-lexicon-gitlab\";\nexport const lint = new Job({ stage: \"test\", script: [\"make lint\"] });\n";

/// A fixable file: COR004 (an unused import) has a fix.
const FIXABLE: &str = "import { Job, Cache } from \"@intentius/chant-lexicon-gitlab\";\nexport const lint = new Job({ stage: \"test\", script: [\"make lint\"] });\n";

/// `<tmp>/project` (a gitlab project) beside `<tmp>/elsewhere` (another one, outside).
fn layout() -> (tempfile::TempDir, PathBuf, PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let base = std::fs::canonicalize(dir.path()).unwrap();
    let root = base.join("project");
    let elsewhere = base.join("elsewhere");
    for p in [&root, &elsewhere] {
        std::fs::create_dir_all(p.join("src")).unwrap();
        std::fs::write(p.join("chant.config.json"), r#"{"lexicons":["gitlab"]}"#).unwrap();
        std::fs::write(p.join("src/ci.ts"), JOB).unwrap();
    }
    std::fs::write(elsewhere.join("src/a.ts"), FIXABLE).unwrap();
    (dir, root, elsewhere)
}

fn serve(root: &Path) -> ServerProcess {
    let mut s = ServerProcess::spawn_in(BIN.as_str(), ["serve", "mcp"], root);
    s.initialize(Some("2025-11-25"));
    s
}

fn call(s: &mut ServerProcess, id: i64, name: &str, args: Value) -> Value {
    s.request(id, "tools/call", json!({"name": name, "arguments": args}))["result"].clone()
}

fn chant(dir: &Path, args: &[&str]) -> std::process::Output {
    Command::new(BIN.as_str())
        .args(args)
        .current_dir(dir)
        .output()
        .unwrap()
}

fn refused(result: &Value, param: &str, root: &Path, given: &str) {
    assert_eq!(result["isError"], true, "{result}");
    assert_eq!(
        tool_text(result),
        format!(
            "Error: {param} must be inside the project ({}): {given}",
            root.display()
        )
    );
}

#[test]
fn no_tool_reads_evaluates_or_writes_outside_the_project() {
    let (_d, root, elsewhere) = layout();
    std::os::unix::fs::symlink(&elsewhere, root.join("link")).unwrap();
    std::os::unix::fs::symlink(elsewhere.join("src/a.ts"), root.join("src/linked.ts")).unwrap();
    let before = std::fs::read_to_string(elsewhere.join("src/a.ts")).unwrap();
    let mut s = serve(&root);
    let abs = elsewhere.display().to_string();
    let abs_file = elsewhere.join("src/a.ts").display().to_string();
    let mut id = 0;
    let mut next = || {
        id += 1;
        id
    };
    for (tool, args, param, given) in [
        ("build", json!({"path": abs}), "path", abs.as_str()),
        (
            "build",
            json!({"path": "../elsewhere"}),
            "path",
            "../elsewhere",
        ),
        ("build", json!({"path": "link"}), "path", "link"),
        ("build", json!({"path": "/"}), "path", "/"),
        ("explain", json!({"path": "/"}), "path", "/"),
        ("explain", json!({"path": "../../"}), "path", "../../"),
        (
            "lint",
            json!({"path": abs_file, "fix": true}),
            "path",
            abs_file.as_str(),
        ),
        (
            "lint",
            json!({"path": "../elsewhere/src/a.ts", "fix": true}),
            "path",
            "../elsewhere/src/a.ts",
        ),
        (
            "lint",
            json!({"path": "link/src/a.ts", "fix": true}),
            "path",
            "link/src/a.ts",
        ),
        (
            "lint",
            json!({"path": "src/linked.ts", "fix": true}),
            "path",
            "src/linked.ts",
        ),
        (
            "import",
            json!({"source": "../elsewhere/src/ci.ts"}),
            "source",
            "../elsewhere/src/ci.ts",
        ),
        (
            "import",
            json!({"source": "link/src/ci.ts"}),
            "source",
            "link/src/ci.ts",
        ),
        (
            "import",
            json!({"source": "src/ci.ts", "output": "../out"}),
            "output",
            "../out",
        ),
        (
            "import",
            json!({"source": "src/ci.ts", "output": "link/new"}),
            "output",
            "link/new",
        ),
        (
            "import",
            json!({"source": "src/ci.ts", "output": "/tmp/x"}),
            "output",
            "/tmp/x",
        ),
        (
            "gitlab:pipeline",
            json!({"path": "../elsewhere"}),
            "path",
            "../elsewhere",
        ),
        ("gitlab:checks", json!({"path": "link"}), "path", "link"),
    ] {
        let r = call(&mut s, next(), tool, args.clone());
        refused(&r, param, &root, given);
    }
    assert_eq!(
        std::fs::read_to_string(elsewhere.join("src/a.ts")).unwrap(),
        before,
        "nothing outside was rewritten"
    );
    assert!(!root.parent().unwrap().join("out").exists());
    assert!(!elsewhere.join("new").exists());
    // The server still serves inside.
    let r = call(&mut s, next(), "build", json!({"path": "src"}));
    assert_ne!(r["isError"], true, "{r}");
}

#[test]
fn discovery_and_imports_never_follow_a_link_out() {
    let (_d, root, elsewhere) = layout();
    std::fs::write(
        elsewhere.join("secret.ts"),
        "export const secret = \"outside content\";\n",
    )
    .unwrap();
    std::os::unix::fs::symlink(&elsewhere, root.join("src/link")).unwrap();
    std::os::unix::fs::symlink(elsewhere.join("src/a.ts"), root.join("src/b.ts")).unwrap();
    // A directory link back into the project is walked once, not forever.
    std::os::unix::fs::symlink(&root, root.join("src/loop")).unwrap();
    std::fs::write(
        root.join("src/reader.ts"),
        "import { Job } from \"@intentius/chant-lexicon-gitlab\";\nimport { secret } from \"./link/secret\";\nexport const leak = new Job({ stage: \"test\", script: [secret] });\n",
    )
    .unwrap();
    for tool_args in [
        vec!["build", "src"],
        vec!["list", "src"],
        vec!["explain", "src", "--format", "json"],
    ] {
        let out = chant(&root, &tool_args);
        let all = format!(
            "{}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
        assert!(!all.contains("outside content"), "{tool_args:?}: {all}");
        assert!(
            all.contains("it is outside the project"),
            "{tool_args:?}: {all}"
        );
        assert!(!all.contains("elsewhere/src/a.ts"), "{tool_args:?}: {all}");
    }
    let mut s = serve(&root);
    let r = call(
        &mut s,
        1,
        "explain",
        json!({"path": "src", "format": "json"}),
    );
    let text = tool_text(&r).to_owned();
    assert!(!text.contains("outside content"), "{text}");
    let files: Vec<String> = r["structuredContent"]["sourceFiles"]
        .as_array()
        .map(|a| a.iter().map(|f| f.as_str().unwrap().to_owned()).collect())
        .unwrap_or_default();
    assert!(
        files
            .iter()
            .all(|f| f.starts_with(&root.display().to_string())
                && !f.contains("/link/")
                && !f.ends_with("/b.ts")),
        "{files:?}"
    );
    // lint --fix at the shell leaves the linked-in file alone.
    let before = std::fs::read_to_string(elsewhere.join("src/a.ts")).unwrap();
    chant(&root, &["lint", "src", "--fix"]);
    assert_eq!(
        std::fs::read_to_string(elsewhere.join("src/a.ts")).unwrap(),
        before
    );
}

#[test]
fn walks_are_bounded_and_errors_list_no_directories() {
    let (_d, root, _) = layout();
    // Deeper than any project: the walk stops with a short error.
    let mut deep = root.join("src");
    for i in 0..60 {
        deep = deep.join(format!("d{i}"));
    }
    std::fs::create_dir_all(&deep).unwrap();
    std::fs::write(deep.join("x.ts"), "export const x = 1;\n").unwrap();
    let t = Instant::now();
    let out = chant(&root, &["explain", "src"]);
    assert!(t.elapsed() < Duration::from_secs(10));
    let all = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(all.contains("the walk stopped at a depth of"), "{all}");
    assert!(all.len() < 4_000, "{} bytes", all.len());
    assert!(!all.contains("/d59"), "{all}");
}

#[test]
fn import_keeps_what_exists_unless_forced_and_is_destructive() {
    let (_d, root, _) = layout();
    let mut s = serve(&root);
    let tools = s.request(1, "tools/list", json!({}));
    let import = tools["result"]["tools"]
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["name"] == "import")
        .unwrap()
        .clone();
    assert_eq!(import["annotations"]["destructiveHint"], true);
    assert_eq!(
        import["inputSchema"]["properties"]["force"]["type"],
        "boolean"
    );
    std::fs::write(
        root.join("p.yml"),
        "stages: [test]\nunit:\n  stage: test\n  script: [make]\n",
    )
    .unwrap();
    std::fs::create_dir_all(root.join("infra")).unwrap();
    std::fs::write(root.join("infra/01-test.ts"), "// mine\n").unwrap();
    let r = call(&mut s, 2, "import", json!({"source": "p.yml"}));
    assert_eq!(r["structuredContent"]["generatedFiles"], json!([]), "{r}");
    assert_eq!(
        std::fs::read_to_string(root.join("infra/01-test.ts")).unwrap(),
        "// mine\n"
    );
    let r = call(
        &mut s,
        3,
        "import",
        json!({"source": "p.yml", "force": true}),
    );
    assert_eq!(
        r["structuredContent"]["generatedFiles"],
        json!(["01-test.ts"])
    );
    let r = call(
        &mut s,
        4,
        "import",
        json!({"source": "p.yml", "force": "yes"}),
    );
    assert_eq!(tool_text(&r), "Error: force must be a boolean, got \"yes\"");
    // At the shell, the same rule.
    std::fs::write(root.join("infra/01-test.ts"), "// mine\n").unwrap();
    let out = chant(&root, &["import", "p.yml"]);
    assert!(out.status.success());
    assert_eq!(
        std::fs::read_to_string(root.join("infra/01-test.ts")).unwrap(),
        "// mine\n"
    );
}

#[test]
fn a_stage_name_cannot_place_an_imported_file_outside_its_folder() {
    let (_d, root, _) = layout();
    std::fs::write(
        root.join("p.yml"),
        "stages: [\"../../../escaped\"]\nunit:\n  stage: \"../../../escaped\"\n  script: [make]\n",
    )
    .unwrap();
    let out = chant(&root, &["import", "p.yml", "-o", "infra"]);
    let base = root.parent().unwrap().parent().unwrap();
    assert!(
        !std::fs::read_dir(base)
            .unwrap()
            .flatten()
            .any(|e| e.file_name().to_string_lossy().contains("escaped")),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

#[test]
fn one_named_file_is_built_linted_listed_and_explained_alone() {
    let (_d, root, _) = layout();
    std::fs::write(
        root.join("src/other.ts"),
        "import { Job } from \"@intentius/chant-lexicon-gitlab\";\nexport const other = new Job({ stage: \"test\", script: [\"x\"] });\n",
    )
    .unwrap();
    let out = chant(&root, &["build", "src/ci.ts"]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let built = String::from_utf8_lossy(&out.stdout);
    assert!(
        built.contains("lint:") && !built.contains("other:"),
        "{built}"
    );
    let out = chant(&root, &["list", "src/ci.ts"]);
    let listed = String::from_utf8_lossy(&out.stdout);
    assert!(
        listed.contains("lint ") && !listed.contains("other"),
        "{listed}"
    );
    let mut s = serve(&root);
    let r = call(&mut s, 1, "build", json!({"path": "src/ci.ts"}));
    assert_eq!(r["structuredContent"]["resourceCount"], 1, "{r}");
    let r = call(
        &mut s,
        2,
        "explain",
        json!({"path": "src/ci.ts", "format": "json"}),
    );
    assert_eq!(
        r["structuredContent"]["sourceFiles"]
            .as_array()
            .unwrap()
            .len(),
        1,
        "{r}"
    );
}

const HOSTILE_PROXY: &str = "import { Job } from \"@intentius/chant-lexicon-gitlab\";\nexport const j = new Job({ stage: \"test\", script: [\"x\"], variables: new Proxy({}, { get() { for (;;) {} }, ownKeys() { for (;;) {} } }) });\n";

fn hostile(timeout: &str) -> (tempfile::TempDir, PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("p");
    std::fs::create_dir_all(&root).unwrap();
    std::fs::write(
        root.join("chant.config.json"),
        format!(r#"{{"lexicons":["gitlab"],"timeout":"{timeout}"}}"#),
    )
    .unwrap();
    std::fs::write(root.join("hostile.ts"), HOSTILE_PROXY).unwrap();
    (dir, root)
}

#[test]
fn a_proxy_that_loops_while_it_is_read_back_is_stopped_within_the_budget() {
    let (_d, root) = hostile("1s");
    let mut s = serve(&root);
    for (id, tool, args) in [
        (1, "build", json!({"path": "."})),
        (2, "explain", json!({"path": ".", "format": "json"})),
        (3, "lifecycle-diff", json!({"environment": "dev"})),
        (4, "gitlab:pipeline", json!({"path": "."})),
    ] {
        let t = Instant::now();
        let r = call(&mut s, id, tool, args);
        let took = t.elapsed();
        // The budget is 1 s; without it the proxy loops for the 60 s of the next one. The
        // margin is for a loaded 2-core machine (mutation runs), not for the rule.
        assert!(took < Duration::from_millis(4000), "{tool}: {took:?}");
        let text = serde_json::to_string(&r).unwrap();
        assert!(
            text.contains("budget") || text.contains("Build failed"),
            "{tool}: {text}"
        );
    }
    // At the shell, --timeout sets the budget over the config's.
    let t = Instant::now();
    let out = chant(&root, &["build", "--timeout", "300ms"]);
    assert!(
        t.elapsed() < Duration::from_millis(3000),
        "{:?}",
        t.elapsed()
    );
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stderr).contains("exceeded its 0.3 s budget"));
}

#[test]
fn cancellation_and_end_of_input_interrupt_an_evaluation() {
    let (_d, root) = hostile("60s");
    let mut s = serve(&root);
    s.send(&json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "build", "arguments": {"path": "."}}}));
    std::thread::sleep(Duration::from_millis(300));
    s.notify("notifications/cancelled", json!({"requestId": 1}));
    // The server is not pinned: a second hostile build is interrupted by end of input.
    s.send(&json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {"name": "build", "arguments": {"path": "."}}}));
    std::thread::sleep(Duration::from_millis(300));
    let t = Instant::now();
    s.close_stdin();
    let status = s.wait_exit(Duration::from_secs(5));
    // 0.5 s of grace, then the interrupt (the bench measures it: docs/benchmarks.md); the
    // rest is margin for a loaded machine — the evaluation's own budget is 60 s.
    assert!(
        t.elapsed() < Duration::from_secs(4),
        "exit took {:?}",
        t.elapsed()
    );
    assert!(status.success());
    let lines = s.drain_lines();
    let reply = lines
        .iter()
        .filter_map(|l| serde_json::from_str::<Value>(l).ok())
        .find(|v| v["id"] == 2)
        .expect("the reply in flight at end of input is written");
    assert!(tool_text(&reply["result"]).contains("stopped"), "{reply}");
    assert!(
        !lines.iter().any(|l| l.contains("\"id\":1,")),
        "a cancelled request gets no reply"
    );
}

#[test]
fn pipelined_hostile_builds_share_one_memory_budget() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("p");
    std::fs::create_dir_all(&root).unwrap();
    std::fs::write(
        root.join("chant.config.json"),
        r#"{"lexicons":["gitlab"],"timeout":"20s"}"#,
    )
    .unwrap();
    // Each evaluation fills its heap to the limit.
    std::fs::write(
        root.join("hog.ts"),
        "const a: string[] = [];\nwhile (true) { a.push(\"x\".repeat(1 << 20) + a.length); }\n",
    )
    .unwrap();
    let mut s = serve(&root);
    for id in 1..=8 {
        s.send(&json!({"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": {"name": "build", "arguments": {"path": "."}}}));
    }
    let mut peak = 0;
    for id in 1..=8 {
        // The eight fills queue behind one another for the one budget: on a loaded 2-core
        // machine one can take longer than the usual 20 s guard. What is checked is memory.
        let r = s.recv_reply_within(&json!(id), Duration::from_secs(120));
        assert!(tool_text(&r["result"]).contains("memory limit"), "{r}");
        peak = peak.max(s.peak_rss_kib().unwrap_or(0));
    }
    assert!(peak < 1536 * 1024, "peak RSS {} MiB", peak / 1024);
}

#[test]
fn pipelined_builds_of_large_values_share_one_memory_budget_to_the_reply() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("p");
    std::fs::create_dir_all(&root).unwrap();
    std::fs::write(root.join("chant.config.json"), r#"{"lexicons":["gitlab"]}"#).unwrap();
    // Values just under the read-back cap: each call builds its output and reply from them.
    std::fs::write(
        root.join("ci.ts"),
        "import { Job } from \"@intentius/chant-lexicon-gitlab\";\nexport const big = new Job({ stage: \"test\", script: [\"x\".repeat(24 * 2 ** 20)] });\n",
    )
    .unwrap();
    let mut s = serve(&root);
    for id in 1..=8 {
        s.send(&json!({"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": {"name": "build", "arguments": {"path": "."}}}));
    }
    let mut peak = 0;
    for id in 1..=8 {
        let r = s.recv_reply_within(&json!(id), Duration::from_secs(120));
        assert_ne!(r["result"]["isError"], true, "{}", &r.to_string()[..200]);
        peak = peak.max(s.peak_rss_kib().unwrap_or(0));
    }
    assert!(peak < 1536 * 1024, "peak RSS {} MiB", peak / 1024);
}

#[test]
fn a_config_that_is_not_valid_fails_every_command_by_name() {
    for (file, text, says) in [
        (
            "chant.config.ts",
            "export default 42;\n",
            "the default export must be an object",
        ),
        (
            "chant.config.ts",
            "export default { lexicons: \"gitlab\" };\n",
            "lexicons must be a list of lexicon names",
        ),
        (
            "chant.config.json",
            "{\"lexicons\": [\"gitlab\",]}",
            "invalid JSON",
        ),
        (
            "chant.config.json",
            "{\"lexicons\": [\"azure\"]}",
            "Lexicon \"azure\" is not available",
        ),
        (
            "chant.config.json",
            "{\"lexicons\": [\"gitlab\"], \"lint\": {\"rules\": {\"COR004\": \"nonsense\"}}}",
            "lint.rules.COR004: \"nonsense\"",
        ),
        (
            "chant.config.json",
            "{\"lexicon\": [\"gitlab\"]}",
            "unknown field \"lexicon\"",
        ),
        (
            "chant.config.json",
            "{\"lexicons\": [\"gitlab\"], \"timeout\": \"soon\"}",
            "timeout must be a duration",
        ),
        (
            "chant.config.json",
            "{\"lexicons\": [\"gitlab\"], \"timeout\": 0.5}",
            "timeout must be a duration",
        ),
        (
            "chant.config.json",
            "{\"lexicons\": [\"gitlab\"], \"lint\": {\"rulez\": {}}}",
            "lint: unknown field \"rulez\"",
        ),
        (
            "chant.config.json",
            "{\"lexicons\": [\"gitlab\"], \"lint\": {\"rules\": {\"COR999\": \"off\"}}}",
            "lint.rules.COR999: no such rule",
        ),
        (
            "chant.config.json",
            "{\"lexicons\": [\"gitlab\"], \"lint\": {\"overrides\": [{\"files\": \"*.ts\", \"rulez\": {}}]}}",
            "lint.overrides[0]: unknown field \"rulez\"",
        ),
    ] {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join(file), text).unwrap();
        std::fs::write(dir.path().join("ci.ts"), JOB).unwrap();
        for cmd in ["build", "lint", "explain", "list"] {
            let out = chant(dir.path(), &[cmd]);
            let err = String::from_utf8_lossy(&out.stderr);
            assert_eq!(out.status.code(), Some(1), "{cmd} with {text}: {err}");
            assert!(err.contains(says), "{cmd} with {text}: {err}");
            if !says.starts_with("Lexicon") {
                assert!(err.contains(file), "{cmd} names the file: {err}");
            }
        }
    }
}

#[test]
fn a_config_changed_mid_session_is_read_by_the_next_call() {
    let (_d, root, _) = layout();
    let mut s = serve(&root);
    let r = call(&mut s, 1, "build", json!({"path": "src"}));
    assert_ne!(r["isError"], true, "{r}");
    std::fs::write(root.join("chant.config.json"), r#"{"lexicons": "gitlab"}"#).unwrap();
    let r = call(&mut s, 2, "build", json!({"path": "src"}));
    assert_eq!(r["isError"], true);
    assert!(tool_text(&r).contains("lexicons must be a list"), "{r}");
    std::fs::write(
        root.join("chant.config.json"),
        r#"{"lexicons": ["gitlab"], "lint": {"rules": {"COR004": "off"}}}"#,
    )
    .unwrap();
    let r = call(&mut s, 3, "build", json!({"path": "src"}));
    assert_ne!(r["isError"], true, "{r}");
}

#[test]
fn a_config_that_links_out_of_the_project_is_refused() {
    let (_d, root, elsewhere) = layout();
    std::fs::remove_file(root.join("chant.config.json")).unwrap();
    std::os::unix::fs::symlink(
        elsewhere.join("chant.config.json"),
        root.join("chant.config.json"),
    )
    .unwrap();
    let out = chant(&root, &["build", "src"]);
    assert_eq!(out.status.code(), Some(1));
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("a link that leads out of the project"),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

#[test]
fn no_call_reads_a_config_or_imports_above_the_served_project() {
    let dir = tempfile::tempdir().unwrap();
    let up = std::fs::canonicalize(dir.path()).unwrap();
    // Above the served project: a config and a secret.
    std::fs::write(
        up.join("chant.config.ts"),
        "export default { lexicons: [\"gitlab\"] };\n",
    )
    .unwrap();
    std::fs::write(
        up.join("secret.ts"),
        "export const secret = \"TOP-SECRET\";\n",
    )
    .unwrap();
    let proj = up.join("proj");
    std::fs::create_dir_all(&proj).unwrap();
    std::fs::write(proj.join("chant.config.json"), r#"{"lexicons":["gitlab"]}"#).unwrap();
    std::fs::write(
        proj.join("ci.ts"),
        "import { Job } from \"@intentius/chant-lexicon-gitlab\";\nimport { secret } from \"../secret\";\nexport const leak = new Job({ stage: \"test\", script: [secret] });\n",
    )
    .unwrap();
    let mut s = serve(&proj);
    let r = call(&mut s, 1, "build", json!({"path": "."}));
    assert!(
        !serde_json::to_string(&r).unwrap().contains("TOP-SECRET"),
        "{r}"
    );
    // The agent turns the project's config into a lint-only fragment, then deletes it: the
    // parent's config is still never read, and the import still never reaches the secret.
    for change in ["fragment", "delete"] {
        if change == "fragment" {
            std::fs::write(proj.join("chant.config.json"), r#"{"rules":{}}"#).unwrap();
        } else {
            std::fs::remove_file(proj.join("chant.config.json")).unwrap();
        }
        let r = call(&mut s, 2, "build", json!({"path": "."}));
        let text = serde_json::to_string(&r).unwrap();
        assert!(!text.contains("TOP-SECRET"), "{change}: {text}");
    }
}

#[test]
fn lint_fragments_and_extends_are_read_only_from_small_files_inside() {
    let (_d, root, elsewhere) = layout();
    std::fs::write(
        elsewhere.join("secret.json"),
        r#"{"rules":{"COR001":"sk-live-SECRET"}}"#,
    )
    .unwrap();
    std::fs::create_dir_all(root.join("sub")).unwrap();
    std::fs::write(root.join("sub/ci.ts"), JOB).unwrap();
    let mut s = serve(&root);
    type Make<'a> = Box<dyn Fn() + 'a>;
    let cases: Vec<(&str, Make)> = vec![
        (
            "a fragment linked out",
            Box::new(|| {
                std::os::unix::fs::symlink(
                    elsewhere.join("secret.json"),
                    root.join("sub/chant.config.json"),
                )
                .unwrap()
            }),
        ),
        (
            "a FIFO fragment",
            Box::new(|| {
                Command::new("mkfifo")
                    .arg(root.join("sub/chant.config.json"))
                    .status()
                    .unwrap();
            }),
        ),
        (
            "a fragment linked to /dev/zero",
            Box::new(|| {
                std::os::unix::fs::symlink("/dev/zero", root.join("sub/chant.config.json")).unwrap()
            }),
        ),
    ];
    for (i, (what, make)) in cases.iter().enumerate() {
        let _ = std::fs::remove_file(root.join("sub/chant.config.json"));
        make();
        let t = Instant::now();
        let r = call(&mut s, i as i64 + 1, "lint", json!({"path": "sub"}));
        assert!(t.elapsed() < Duration::from_secs(5), "{what}");
        let text = serde_json::to_string(&r).unwrap();
        assert!(!text.contains("sk-live-SECRET"), "{what}: {text}");
        assert_eq!(r["isError"], true, "{what}: {text}");
    }
    // extends: a FIFO, and a file outside.
    let _ = std::fs::remove_file(root.join("sub/chant.config.json"));
    Command::new("mkfifo")
        .arg(root.join("base.json"))
        .status()
        .unwrap();
    for (extends, says) in [
        ("./base.json", "not a regular file"),
        ("../elsewhere/secret.json", "must be inside the project"),
    ] {
        std::fs::write(
            root.join("chant.config.json"),
            format!(r#"{{"lexicons":["gitlab"],"lint":{{"extends":["{extends}"]}}}}"#),
        )
        .unwrap();
        let t = Instant::now();
        let out = chant(&root, &["list", "src"]);
        assert!(t.elapsed() < Duration::from_secs(5), "{extends}");
        assert_eq!(out.status.code(), Some(1), "{extends}");
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(
            err.contains(says) && !err.contains("sk-live"),
            "{extends}: {err}"
        );
    }
}

#[test]
fn a_declarable_shared_at_every_level_costs_its_size_not_two_to_the_levels() {
    let (_d, root, _) = layout();
    std::fs::write(
        root.join("src/chain.ts"),
        "import { Job } from \"@intentius/chant-lexicon-gitlab\";\nlet x: any = new Job({ stage: \"a\", script: [\"x\"] });\nfor (let i = 0; i < 40; i++) x = new Job({ stage: \"a\", script: [\"x\"], variables: { a: x, b: x } });\nexport const top = new Job({ stage: \"test\", script: [\"make\"], variables: { a: x, b: x } });\n",
    )
    .unwrap();
    for cmd in ["list", "build", "explain"] {
        let t = Instant::now();
        let out = chant(&root, &[cmd, "src"]);
        assert!(
            t.elapsed() < Duration::from_secs(10),
            "{cmd}: {:?}",
            t.elapsed()
        );
        if cmd == "build" {
            assert_eq!(out.status.code(), Some(1));
            assert!(
                String::from_utf8_lossy(&out.stderr)
                    .contains("once the declarables it shares are copied")
            );
        }
    }
}

#[test]
fn deeply_nested_source_is_an_error_and_the_server_keeps_serving() {
    let (_d, root, _) = layout();
    let n = 20_000;
    std::fs::write(
        root.join("src/deep.ts"),
        format!("export const a = {}{};\n", "[".repeat(n), "]".repeat(n)),
    )
    .unwrap();
    let out = chant(&root, &["lint", "src"]);
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stdout).contains("nested more than 1000 levels"));
    let out = chant(&root, &["build", "src"]);
    assert_eq!(out.status.code(), Some(1));
    let mut s = serve(&root);
    let r = call(&mut s, 1, "lint", json!({"path": "src"}));
    assert_eq!(r["structuredContent"]["success"], false, "{r}");
    let r = call(&mut s, 2, "build", json!({"path": "src"}));
    assert_eq!(r["isError"], true);
    assert_eq!(s.request(3, "ping", json!({}))["result"], json!({}));
}

#[test]
fn an_argument_of_the_wrong_type_is_refused_not_read_as_missing() {
    let (_d, root, _) = layout();
    let mut s = serve(&root);
    for (id, tool, args, says) in [
        (
            1,
            "build",
            json!({"path": "src", "format": 1}),
            "format must be a string, got 1",
        ),
        (
            2,
            "gitlab:pipeline",
            json!({"path": ["a"]}),
            "path must be a string, got [\"a\"]",
        ),
        (
            3,
            "lint",
            json!({"path": "src", "fix": "yes"}),
            "fix must be a boolean, got \"yes\"",
        ),
        (
            4,
            "op-run",
            json!({"name": 7}),
            "name must be a string, got 7",
        ),
    ] {
        let r = call(&mut s, id, tool, args);
        assert_eq!(r["isError"], true, "{tool}: {r}");
        assert_eq!(tool_text(&r), format!("Error: {says}"), "{tool}");
    }
}

#[test]
fn a_build_sent_just_before_end_of_input_is_still_answered() {
    let (_d, root, _) = layout();
    let mut s = ServerProcess::spawn_in(BIN.as_str(), ["serve", "mcp"], &root);
    s.initialize(Some("2025-11-25"));
    s.send(&json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "build", "arguments": {"path": "src"}}}));
    s.close_stdin();
    assert!(s.wait_exit(Duration::from_secs(5)).success());
    let reply = s
        .drain_lines()
        .iter()
        .filter_map(|l| serde_json::from_str::<Value>(l).ok())
        .find(|v| v["id"] == 1)
        .expect("the reply");
    assert_eq!(
        reply["result"]["structuredContent"]["success"], true,
        "{reply}"
    );
}

#[test]
fn long_call_member_and_operator_chains_are_errors_not_crashes() {
    let (_d, root, _) = layout();
    let mut s = serve(&root);
    for (i, (name, chain)) in [
        (
            "calls.ts",
            format!(
                "export const f: any = () => f;\nf{};\n",
                "()".repeat(600_000)
            ),
        ),
        (
            "members.ts",
            format!("export const o = Object{};\n", ".a".repeat(600_000)),
        ),
        (
            "sums.ts",
            format!("export const n = 1{};\n", "+1".repeat(600_000)),
        ),
        (
            "typeofs.ts",
            format!("export const t = {}1;\n", "typeof ".repeat(600_000)),
        ),
        (
            "voids.ts",
            format!("export const t = {}1;\n", "void\n".repeat(600_000)),
        ),
        (
            "ins.ts",
            format!("export const t = 1{};\n", " in 1".repeat(600_000)),
        ),
        (
            "keyofs.ts",
            format!(
                "type T = {}{{}};\nexport const t = 1;\n",
                "keyof ".repeat(600_000)
            ),
        ),
        (
            "regex.ts",
            format!(
                "export const t = {}1{};\n",
                "(/\\)/, ".repeat(300_000),
                ")".repeat(300_000)
            ),
        ),
        // Just under the limit parses, builds and lints.
        (
            "fine.ts",
            format!("export const m = 1{};\n", "+1".repeat(4_000)),
        ),
    ]
    .into_iter()
    .enumerate()
    {
        std::fs::write(root.join("src").join(name), &chain).unwrap();
        let id = i as i64 * 2;
        let lint = call(
            &mut s,
            id + 1,
            "lint",
            json!({"path": format!("src/{name}")}),
        );
        let build = call(
            &mut s,
            id + 2,
            "build",
            json!({"path": format!("src/{name}")}),
        );
        if name == "fine.ts" {
            assert!(!tool_text(&build).contains("chains more than"), "{build}");
            assert!(!tool_text(&lint).contains("chains more than"), "{lint}");
        } else {
            assert!(
                tool_text(&lint).contains("does not parse sources nested this far"),
                "{name}: {lint}"
            );
            assert_eq!(build["isError"], true, "{name}");
        }
        std::fs::remove_file(root.join("src").join(name)).unwrap();
    }
    assert_eq!(s.request(99, "ping", json!({}))["result"], json!({}));
}

#[test]
fn a_negative_limit_is_refused() {
    let (_d, root, _) = layout();
    let mut s = serve(&root);
    for tool in ["search", "composites"] {
        let mut args = json!({"limit": -5});
        if tool == "search" {
            args["query"] = json!("job");
        }
        let r = call(&mut s, 1, tool, args);
        assert_eq!(
            tool_text(&r),
            "Error: limit must be zero or more, got -5",
            "{tool}"
        );
    }
}
