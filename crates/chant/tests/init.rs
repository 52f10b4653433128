//! `chant init` black-box: the project it writes, the MCP config it merges into the IDE's
//! global file and the project's `.mcp.json` (HOME is a temporary directory), idempotence,
//! refusals that write nothing, and hostile files already there.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use serde_json::{Value, json};

const BIN: &str = env!("CARGO_BIN_EXE_chant");

struct Sandbox {
    _dir: tempfile::TempDir,
    home: PathBuf,
    work: PathBuf,
}

fn sandbox(ide_dirs: &[&str]) -> Sandbox {
    let dir = tempfile::tempdir().unwrap();
    let root = std::fs::canonicalize(dir.path()).unwrap();
    let home = root.join("home");
    let work = root.join("work");
    std::fs::create_dir_all(&home).unwrap();
    std::fs::create_dir_all(&work).unwrap();
    for d in ide_dirs {
        std::fs::create_dir_all(home.join(d)).unwrap();
    }
    Sandbox {
        _dir: dir,
        home,
        work,
    }
}

fn init(s: &Sandbox, args: &[&str]) -> Output {
    Command::new(BIN)
        .arg("init")
        .args(args)
        .current_dir(&s.work)
        .env("HOME", &s.home)
        .output()
        .unwrap()
}

fn text(o: &Output) -> (String, String) {
    (
        String::from_utf8_lossy(&o.stdout).into_owned(),
        String::from_utf8_lossy(&o.stderr).into_owned(),
    )
}

fn exe() -> String {
    std::fs::canonicalize(BIN).unwrap().display().to_string()
}

fn read_json(p: &Path) -> Value {
    serde_json::from_str(&std::fs::read_to_string(p).unwrap()).unwrap()
}

/// Every file under `dir` with its bytes, for "nothing changed" checks.
fn snapshot(dir: &Path) -> Vec<(PathBuf, Vec<u8>)> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        let Ok(entries) = std::fs::read_dir(&d) else {
            continue;
        };
        for e in entries.flatten() {
            let p = e.path();
            let t = std::fs::symlink_metadata(&p).unwrap().file_type();
            if t.is_dir() {
                stack.push(p);
            } else if t.is_file() {
                out.push((p.clone(), std::fs::read(&p).unwrap()));
            } else {
                out.push((
                    p.clone(),
                    std::fs::read_link(&p)
                        .unwrap()
                        .into_os_string()
                        .into_encoded_bytes(),
                ));
            }
        }
    }
    out.sort();
    out
}

#[test]
fn a_new_project_builds_is_a_repository_and_its_agent_finds_chant() {
    let s = sandbox(&[".claude"]);
    let out = init(&s, &["proj"]);
    let (stdout, stderr) = text(&out);
    assert!(out.status.success(), "{stderr}");
    let proj = s.work.join("proj");
    for f in [
        "chant.config.ts",
        "tsconfig.json",
        "package.json",
        ".gitignore",
        "src/config.ts",
        "src/pipeline.ts",
    ] {
        assert!(proj.join(f).is_file(), "{f}\n{stdout}");
        assert!(stdout.contains(&format!("  create {f}\n")), "{stdout}");
    }
    assert!(proj.join(".git").is_dir());
    let entry = json!({"mcpServers": {"chant": {"command": exe(), "args": ["serve", "mcp"]}}});
    assert_eq!(read_json(&s.home.join(".claude/mcp.json")), entry);
    assert_eq!(read_json(&proj.join(".mcp.json")), entry);
    assert!(
        stdout.contains("  ~/.claude/mcp.json: add the chant server (Claude Code)\n"),
        "{stdout}"
    );
    // The project builds as written.
    let built = Command::new(BIN)
        .args(["build", "."])
        .current_dir(&proj)
        .output()
        .unwrap();
    assert!(built.status.success(), "{}", text(&built).1);
    assert!(String::from_utf8_lossy(&built.stdout).starts_with("stages:\n  - build\n  - test\n"));
    // The server the config names starts on the project and lists its tools.
    let mut server = mcp_testkit::ServerProcess::spawn_in(exe(), ["serve", "mcp"], &proj);
    server.initialize(Some("2025-11-25"));
    let tools = server.request(1, "tools/list", json!({}));
    assert!(tools["result"]["tools"].as_array().unwrap().len() > 10);

    // A second run changes nothing and says so.
    let before = (snapshot(&proj), snapshot(&s.home));
    let again = init(&s, &["proj"]);
    assert!(again.status.success());
    assert_eq!(
        text(&again).0,
        format!(
            "Nothing to change: {} is already a gitlab project, and its MCP config is up to date.\n",
            proj.display()
        )
    );
    assert_eq!((snapshot(&proj), snapshot(&s.home)), before);
}

#[test]
fn the_config_goes_to_the_detected_ide_with_the_names_it_needs() {
    let portable = json!({"command": exe(), "args": ["serve", "mcp", "--tool-names", "portable"]});
    let s = sandbox(&[".cursor"]);
    assert!(init(&s, &["p"]).status.success());
    assert_eq!(
        read_json(&s.home.join(".cursor/mcp.json"))["mcpServers"]["chant"],
        portable
    );
    assert!(!s.home.join(".claude").exists());
    // No known IDE: the generic file, its folders made.
    let s = sandbox(&[]);
    assert!(init(&s, &["p"]).status.success());
    assert_eq!(
        read_json(&s.home.join(".config/mcp/mcp.json"))["mcpServers"]["chant"],
        portable
    );
    // Claude Code wins when both are there; --ide overrides detection.
    let s = sandbox(&[".claude", ".cursor"]);
    assert!(init(&s, &["p"]).status.success());
    assert!(s.home.join(".claude/mcp.json").exists() && !s.home.join(".cursor/mcp.json").exists());
    assert!(init(&s, &["q", "--ide", "cursor"]).status.success());
    assert!(s.home.join(".cursor/mcp.json").exists());
    // --ide none writes no MCP config at all; an unknown IDE is refused before anything.
    let s = sandbox(&[".claude"]);
    let out = init(&s, &["p", "--ide", "none"]);
    assert!(out.status.success());
    assert!(!s.home.join(".claude/mcp.json").exists() && !s.work.join("p/.mcp.json").exists());
    let out = init(&s, &["r", "--ide", "vim"]);
    assert_eq!(out.status.code(), Some(1));
    assert_eq!(
        text(&out).1,
        "error: --ide must be claude, cursor, other or none (got \"vim\")\n"
    );
    assert!(!s.work.join("r").exists());
}

#[test]
fn other_servers_and_unknown_keys_are_kept_and_a_broken_config_is_never_overwritten() {
    let s = sandbox(&[".claude"]);
    let global = s.home.join(".claude/mcp.json");
    std::fs::write(
        &global,
        r#"{"mcpServers": {"zed": {"command": "zed-mcp"}, "chant": {"command": "npx", "args": ["chant", "serve", "mcp"], "env": {"X": "1"}}}, "z-last": [1, 2]}"#,
    )
    .unwrap();
    let out = init(&s, &["p"]);
    assert!(out.status.success(), "{}", text(&out).1);
    assert!(
        text(&out)
            .0
            .contains("  ~/.claude/mcp.json: update the chant server (Claude Code)\n")
    );
    let v = read_json(&global);
    assert_eq!(
        v,
        json!({"mcpServers": {"zed": {"command": "zed-mcp"}, "chant": {"command": exe(), "args": ["serve", "mcp"], "env": {"X": "1"}}}, "z-last": [1, 2]})
    );
    let keys: Vec<&String> = v.as_object().unwrap().keys().collect();
    assert_eq!(keys, ["mcpServers", "z-last"]);

    // A malformed file is refused with its path and line; nothing is written anywhere.
    let broken = "{\n  \"mcpServers\": {\n    \"zed\": {},\n  }\n}\n";
    std::fs::write(&global, broken).unwrap();
    let out = init(&s, &["fresh"]);
    assert_eq!(out.status.code(), Some(1));
    let (_, stderr) = text(&out);
    assert!(
        stderr.starts_with("error: ~/.claude/mcp.json: line 4, column 3: not valid JSON (trailing comma). chant init changed nothing"),
        "{stderr}"
    );
    assert!(
        stderr.contains(&format!("\"chant\": {{\"command\":\"{}\"", exe())),
        "{stderr}"
    );
    assert_eq!(std::fs::read_to_string(&global).unwrap(), broken);
    assert!(!s.work.join("fresh").exists());
    // So is a file of the wrong shape, and a server list that is not one.
    for bad in ["[]", r#"{"mcpServers": "chant"}"#] {
        std::fs::write(&global, bad).unwrap();
        let out = init(&s, &["fresh"]);
        assert_eq!(out.status.code(), Some(1), "{bad}");
        assert_eq!(std::fs::read_to_string(&global).unwrap(), bad);
        assert!(!s.work.join("fresh").exists());
    }
}

#[test]
fn dry_runs_json_and_refusals_write_nothing() {
    let s = sandbox(&[".claude"]);
    let before = snapshot(&s.home);
    let out = init(&s, &["p", "--dry-run"]);
    let (stdout, _) = text(&out);
    assert!(out.status.success());
    assert!(stdout.starts_with(&format!("Would set up a gitlab project in {} (template default):\n  would create chant.config.ts\n", s.work.join("p").display())), "{stdout}");
    assert!(stdout.contains("  would initialize a git repository\n"));
    assert!(stdout.contains("  ~/.claude/mcp.json: would add the chant server (Claude Code)\n"));
    assert!(!s.work.join("p").exists());
    assert_eq!(snapshot(&s.home), before);

    let out = init(
        &s,
        &[
            "p",
            "--json",
            "--template",
            "node-pipeline",
            "--lexicon",
            "gitlab",
        ],
    );
    assert!(out.status.success());
    let v: Value = serde_json::from_str(text(&out).0.trim()).unwrap();
    assert_eq!(v["lexicon"], "gitlab");
    assert_eq!(v["template"], "node-pipeline");
    assert_eq!(v["dryRun"], false);
    assert_eq!(
        v["created"],
        json!([
            "chant.config.ts",
            "tsconfig.json",
            "package.json",
            ".gitignore",
            "src/pipeline.ts"
        ])
    );
    assert_eq!(v["git"], "initialized");
    assert_eq!(
        v["mcp"][1],
        json!({"path": "~/.claude/mcp.json", "client": "Claude Code", "change": "created"})
    );

    for (args, said) in [
        (
            vec!["q", "--lexicon", "azure"],
            "error: Lexicon \"azure\" is not available in this chant (available: gitlab, aws, temporal)\n",
        ),
        (
            vec!["q", "--template", "huge"],
            "error: Lexicon gitlab has no init template \"huge\" (templates: default, node-pipeline, python-pipeline, docker-build, review-app)\n",
        ),
    ] {
        let out = init(&s, &args);
        assert_eq!(out.status.code(), Some(1));
        assert_eq!(text(&out).1, said);
        assert!(!s.work.join("q").exists());
    }
    // An aws project starts from the aws default set, and builds.
    let out = init(&s, &["cloud", "--lexicon", "aws"]);
    assert!(out.status.success(), "{}", text(&out).1);
    for f in ["config.ts", "data-bucket.ts", "logs-bucket.ts"] {
        assert!(s.work.join("cloud/src").join(f).is_file(), "{f}");
    }
    let built = Command::new(BIN)
        .args(["build", "src"])
        .current_dir(s.work.join("cloud"))
        .output()
        .unwrap();
    assert!(built.status.success(), "{}", text(&built).1);
    let template: Value = serde_json::from_slice(&built.stdout).unwrap();
    assert_eq!(
        template["Resources"]["dataBucket"]["Type"],
        "AWS::S3::Bucket"
    );
    // A directory with other files is refused without --force; with it, nothing there is replaced.
    let busy = s.work.join("busy");
    std::fs::create_dir_all(busy.join("src")).unwrap();
    std::fs::write(busy.join("src/pipeline.ts"), "// mine\n").unwrap();
    let out = init(&s, &["busy"]);
    assert_eq!(out.status.code(), Some(1));
    assert!(
        text(&out)
            .1
            .contains("is not empty and holds no chant project; use --force"),
        "{}",
        text(&out).1
    );
    assert!(!busy.join("chant.config.ts").exists());
    let out = init(&s, &["busy", "--force"]);
    assert!(out.status.success());
    assert!(
        text(&out)
            .0
            .contains("  keep src/pipeline.ts (already there; chant init never replaces a file)\n")
    );
    assert_eq!(
        std::fs::read_to_string(busy.join("src/pipeline.ts")).unwrap(),
        "// mine\n"
    );
    // Without HOME only --ide none works.
    let out = Command::new(BIN)
        .args(["init", "nohome"])
        .current_dir(&s.work)
        .env_remove("HOME")
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    assert_eq!(
        text(&out).1,
        "error: HOME is not set, so no IDE config can be found; pass --ide none to skip it\n"
    );
    assert!(!s.work.join("nohome").exists());
}

#[test]
fn links_already_there_are_followed_only_where_they_should_be() {
    let s = sandbox(&[".claude"]);
    // A dotfiles link stays a link; the file it points to gets the entry.
    let dotfiles = s.home.join("dotfiles/claude-mcp.json");
    std::fs::create_dir_all(dotfiles.parent().unwrap()).unwrap();
    std::fs::write(&dotfiles, r#"{"mcpServers": {"zed": {}}}"#).unwrap();
    std::os::unix::fs::symlink(&dotfiles, s.home.join(".claude/mcp.json")).unwrap();
    assert!(init(&s, &["p"]).status.success());
    assert!(
        std::fs::symlink_metadata(s.home.join(".claude/mcp.json"))
            .unwrap()
            .file_type()
            .is_symlink()
    );
    assert_eq!(
        read_json(&dotfiles)["mcpServers"]["chant"]["command"],
        exe()
    );
    // A project folder whose src/ leads elsewhere is refused, and nothing is written.
    let outside = s.work.join("outside");
    std::fs::create_dir(&outside).unwrap();
    let proj = s.work.join("linked");
    std::fs::create_dir(&proj).unwrap();
    std::os::unix::fs::symlink(&outside, proj.join("src")).unwrap();
    let out = init(&s, &["linked", "--force"]);
    assert_eq!(out.status.code(), Some(1));
    assert!(
        text(&out).1.contains("must be inside the project"),
        "{}",
        text(&out).1
    );
    assert_eq!(std::fs::read_dir(&outside).unwrap().count(), 0);
    assert!(!proj.join("chant.config.ts").exists());
    // The project's .mcp.json leading to another config outside it is not written through.
    let other = s.work.join("other.json");
    std::fs::write(&other, r#"{"mcpServers": {}}"#).unwrap();
    let proj = s.work.join("mcplink");
    std::fs::create_dir(&proj).unwrap();
    std::os::unix::fs::symlink(&other, proj.join(".mcp.json")).unwrap();
    let out = init(&s, &["mcplink"]);
    assert_eq!(out.status.code(), Some(1));
    assert!(
        text(&out)
            .1
            .contains("the project's .mcp.json must be inside the project"),
        "{}",
        text(&out).1
    );
    assert_eq!(
        std::fs::read_to_string(&other).unwrap(),
        r#"{"mcpServers": {}}"#
    );
    assert!(!proj.join("chant.config.ts").exists());
}

#[test]
fn a_config_that_cannot_be_written_or_read_is_found_before_anything_is_written() {
    // ~/.config/mcp is a link to nowhere: the global file cannot be written there.
    let s = sandbox(&[]);
    std::fs::create_dir_all(s.home.join(".config")).unwrap();
    std::os::unix::fs::symlink("/nonexistent/dir", s.home.join(".config/mcp")).unwrap();
    let out = init(&s, &["p", "--ide", "other"]);
    assert_eq!(out.status.code(), Some(1));
    assert!(
        text(&out)
            .1
            .contains("is not a directory (or a link to one); chant init changed nothing"),
        "{}",
        text(&out).1
    );
    assert!(!s.work.join("p").exists());
    // A FIFO where the config should be is refused, not waited on.
    let s = sandbox(&[".claude"]);
    let fifo = s.home.join(".claude/mcp.json");
    assert!(
        Command::new("mkfifo")
            .arg(&fifo)
            .status()
            .unwrap()
            .success()
    );
    let out = init(&s, &["p", "--dry-run"]);
    assert_eq!(out.status.code(), Some(1));
    assert!(
        text(&out)
            .1
            .starts_with("error: Cannot read ~/.claude/mcp.json"),
        "{}",
        text(&out).1
    );
    // Bytes that are not UTF-8 are named, and left alone.
    std::fs::remove_file(&fifo).unwrap();
    std::fs::write(&fifo, b"{\"mcpServers\": {\"\xff\": {}}}").unwrap();
    let out = init(&s, &["p"]);
    assert_eq!(out.status.code(), Some(1));
    assert!(
        text(&out).1.contains("not UTF-8 text (byte 17)"),
        "{}",
        text(&out).1
    );
    assert!(!s.work.join("p").exists());
}
