//! Ops end to end: `chant run` / `chant approve` at a shell and the Op tools over MCP, on a real
//! git repository, with the governance rules that keep an agent from approving its own gate.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Duration;

use mcp_testkit::{ServerProcess, tool_text};
use serde_json::{Value, json};

const BIN: &str = env!("CARGO_BIN_EXE_chant");

const ROLLOUT: &str = r#"import { Op, phase, shell, gate } from "@intentius/chant-lexicon-temporal";

export default Op({
  name: "rollout",
  overview: "Stage, wait for approval, then roll out",
  phases: [
    phase("Stage", [shell("echo staging")]),
    phase("Approve", [gate("ship-it", { timeout: "4h", description: "Release manager sign-off" })]),
    phase("Rollout", [shell("echo rolling out > rolled.txt")]),
  ],
});
"#;

const GUARDED: &str = r#"import { Op, phase, shell, gate } from "@intentius/chant-lexicon-temporal";

export default Op({
  name: "guarded",
  overview: "Kept from agents",
  neverOverMcp: true,
  phases: [
    phase("Stage", [shell("echo staging")]),
    phase("Approve", [gate("owner-ok")]),
  ],
});
"#;

fn repo() -> (tempfile::TempDir, PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("repo");
    std::fs::create_dir_all(root.join("ops")).unwrap();
    git(&root, &["init", "-q"]);
    std::fs::write(
        root.join("chant.config.json"),
        r#"{"lexicons":["temporal"]}"#,
    )
    .unwrap();
    std::fs::write(root.join("ops/rollout.op.ts"), ROLLOUT).unwrap();
    std::fs::write(root.join("ops/guarded.op.ts"), GUARDED).unwrap();
    (dir, root)
}

fn git(root: &Path, args: &[&str]) -> String {
    let out = Command::new("git")
        .args(args)
        .current_dir(root)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "git {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

fn show(root: &Path, path: &str) -> Option<String> {
    let out = Command::new("git")
        .args(["show", &format!("chant/lifecycle:{path}")])
        .current_dir(root)
        .output()
        .unwrap();
    out.status
        .success()
        .then(|| String::from_utf8_lossy(&out.stdout).into_owned())
}

/// The lines of an Op's gate facts (`_gates/<op>.jsonl`) or runs in an environment
/// (`<env>/runs__<op>.jsonl`), in the order they were written, whichever layout holds them:
/// the legacy file's lines, then one file per record (`_gates/<op>/…`, `<env>/runs/<op>/…`)
/// in time order. `None` when there are none.
fn ledger_file(root: &Path, path: &str) -> Option<String> {
    let dir = if let Some(op) = path
        .strip_prefix("_gates/")
        .and_then(|p| p.strip_suffix(".jsonl"))
    {
        format!("_gates/{op}/")
    } else {
        let (env, file) = path.split_once('/')?;
        let op = file.strip_prefix("runs__")?.strip_suffix(".jsonl")?;
        format!("{env}/runs/{op}/")
    };
    let mut lines: Vec<String> = show(root, path)
        .map(|t| t.lines().map(str::to_owned).collect())
        .unwrap_or_default();
    let listed = Command::new("git")
        .args([
            "ls-tree",
            "-r",
            "--name-only",
            "chant/lifecycle",
            "--",
            &dir,
        ])
        .current_dir(root)
        .output()
        .unwrap();
    let mut records: Vec<(String, String)> = Vec::new();
    for file in String::from_utf8_lossy(&listed.stdout).lines() {
        for l in show(root, file).unwrap_or_default().lines() {
            // Facts of several gates, in time order (a file's name starts with its time).
            let name = file.rsplit('/').next().unwrap_or_default().to_owned();
            records.push((name, l.to_owned()));
        }
    }
    records.sort_by(|a, b| a.0.cmp(&b.0));
    lines.extend(records.into_iter().map(|(_, l)| l));
    (!lines.is_empty()).then(|| lines.join("\n"))
}

fn chant(root: &Path, args: &[&str]) -> std::process::Output {
    Command::new(BIN)
        .args(args)
        .current_dir(root)
        .output()
        .unwrap()
}

fn serve(root: &Path) -> ServerProcess {
    let mut s = ServerProcess::spawn_in(BIN, ["serve", "mcp"], root);
    s.initialize(Some("2025-11-25"));
    s
}

fn call(s: &mut ServerProcess, id: i64, name: &str, args: Value) -> Value {
    s.request(id, "tools/call", json!({"name": name, "arguments": args}))["result"].clone()
}

/// A JSON resource's text, parsed.
fn read_json(s: &mut ServerProcess, id: i64, uri: &str) -> Value {
    let r = s.request(id, "resources/read", json!({"uri": uri}));
    serde_json::from_str(r["result"]["contents"][0]["text"].as_str().unwrap()).unwrap()
}

fn ok(result: &Value) -> Value {
    assert_ne!(result["isError"], true, "{result}");
    result["structuredContent"].clone()
}

#[test]
fn a_gate_reached_over_mcp_is_approved_at_a_shell_only() {
    let (_d, root) = repo();
    let mut s = serve(&root);

    // op-run reaches the gate.
    let run = ok(&call(&mut s, 1, "op-run", json!({"name": "rollout"})));
    assert_eq!(run["state"], "gated");
    assert_eq!(run["gate"]["name"], "ship-it");
    assert!(run["runId"].as_str().unwrap().starts_with("local-"));
    assert!(!root.join("rolled.txt").exists(), "no later phase ran");
    let pending: Value = serde_json::from_str(
        ledger_file(&root, "_gates/rollout.jsonl")
            .unwrap()
            .lines()
            .last()
            .unwrap(),
    )
    .unwrap();
    assert_eq!(
        (pending["kind"].clone(), pending["origin"].clone()),
        (json!("pending"), json!("mcp"))
    );
    assert!(
        pending["planDigest"]
            .as_str()
            .unwrap()
            .starts_with("sha256:")
    );

    // op-approve over MCP is refused: the same caller would write both halves.
    let refused = call(
        &mut s,
        2,
        "op-approve",
        json!({"name": "rollout", "gate": "ship-it"}),
    );
    assert_eq!(refused["isError"], true);
    assert_eq!(
        tool_text(&refused),
        "Error: Gate \"ship-it\" on \"rollout\" was not recorded. If the gate was reached over MCP, it cannot also be resolved over MCP — approve it from another channel, normally `chant approve rollout ship-it` at a shell."
    );
    assert_eq!(
        ledger_file(&root, "_gates/rollout.jsonl")
            .unwrap()
            .lines()
            .count(),
        1,
        "nothing written"
    );

    // A person approves at a shell.
    let out = chant(
        &root,
        &[
            "approve",
            "rollout",
            "ship-it",
            "--actor",
            "alex",
            "--note",
            "looks good",
        ],
    );
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        stdout.starts_with(&format!(
            "This approves the plan {}, and only that plan.",
            pending["planDigest"].as_str().unwrap()
        )),
        "{stdout}"
    );

    // The next op-run passes the gate and completes.
    let run = ok(&call(&mut s, 3, "op-run", json!({"name": "rollout"})));
    assert_eq!(run["state"], "completed", "{run}");
    let gate_step = run["records"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["fn"] == "gate:ship-it")
        .unwrap();
    assert_eq!(gate_step["approval"]["resolvedBy"], "alex");
    assert!(root.join("rolled.txt").exists());

    // op-status, op-report and the runs resources show each step.
    let status = ok(&call(&mut s, 4, "op-status", json!({"name": "rollout"})));
    assert_eq!(
        (
            status["state"].clone(),
            status["gate"].clone(),
            status["runtime"].clone()
        ),
        (json!("completed"), Value::Null, json!("local"))
    );
    assert_eq!(status["records"].as_array().unwrap().len(), 3);
    let report = tool_text(&call(&mut s, 5, "op-report", json!({"name": "rollout"}))).to_owned();
    assert!(
        report.starts_with(
            "# rollout\n\nStage, wait for approval, then roll out\n\n- Runtime: local\n"
        ),
        "{report}"
    );
    assert!(
        report.contains("| Approve | gate:ship-it | ok | 0ms |"),
        "{report}"
    );
    let runs: Value = read_json(&mut s, 6, "chant://ops/rollout/runs");
    let states: Vec<&str> = runs
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["state"].as_str().unwrap())
        .collect();
    assert_eq!(states, ["completed", "gated"], "newest first");
    let latest: Value = read_json(&mut s, 7, "chant://ops/rollout/runs/latest");
    assert_eq!(latest["state"], "completed");
    let list = ok(&call(&mut s, 8, "op-list", json!({})));
    let rollout = list["ops"]
        .as_array()
        .unwrap()
        .iter()
        .find(|o| o["name"] == "rollout")
        .unwrap();
    assert_eq!(rollout["runState"], "completed");
    assert!(
        git(&root, &["log", "--oneline", "chant/lifecycle"])
            .lines()
            .count()
            >= 4,
        "a normal branch git log shows"
    );
}

#[test]
fn a_gate_reached_at_a_shell_is_resolvable_over_mcp_as_unattested() {
    let (_d, root) = repo();
    let out = chant(&root, &["run", "rollout"]);
    assert_eq!(out.status.code(), Some(3), "gated exit code");
    assert_eq!(
        chant(&root, &["run", "rollout", "--gated-exit", "0"])
            .status
            .code(),
        Some(0)
    );
    let mut s = serve(&root);
    let r = ok(&call(
        &mut s,
        1,
        "op-approve",
        json!({"name": "rollout", "gate": "ship-it", "url": "https://example.test/pr/1"}),
    ));
    assert_eq!(
        (
            r["resolvedBy"].clone(),
            r["origin"].clone(),
            r["runtimeNotified"].clone()
        ),
        (json!("unattested"), json!("mcp"), json!(false))
    );
    let resolution: Value = serde_json::from_str(
        ledger_file(&root, "_gates/rollout.jsonl")
            .unwrap()
            .lines()
            .last()
            .unwrap(),
    )
    .unwrap();
    assert_eq!(resolution["resolvedBy"], "unattested");
    assert_eq!(resolution["url"], "https://example.test/pr/1");
    // op-approve takes no approver.
    let tools = s.request(2, "tools/list", json!({}))["result"]["tools"].clone();
    let approve = tools
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["name"] == "op-approve")
        .unwrap();
    let props: Vec<&String> = approve["inputSchema"]["properties"]
        .as_object()
        .unwrap()
        .keys()
        .collect();
    assert_eq!(props, ["name", "gate", "note", "url", "env", "runtime"]);
    let description = approve["description"].as_str().unwrap().to_lowercase();
    assert!(
        description.contains("refuses a gate this same channel reached")
            && description.contains("chant approve")
            && description.contains("unattested")
    );
}

#[test]
fn never_over_mcp_ops_are_kept_from_agents() {
    let (_d, root) = repo();
    let mut s = serve(&root);
    let r = call(&mut s, 1, "op-run", json!({"name": "guarded"}));
    assert_eq!(r["isError"], true);
    let text = tool_text(&r);
    assert_eq!(
        text,
        "Error: Op \"guarded\" declares neverOverMcp, so it is not run over MCP. Run it at a shell with `chant run guarded`; op-status and op-report still answer here."
    );
    assert!(
        ledger_file(&root, "local/runs__guarded.jsonl").is_none(),
        "nothing started"
    );
    // A person runs it; the gate it reaches (origin cli) is still refused over MCP.
    assert_eq!(chant(&root, &["run", "guarded"]).status.code(), Some(3));
    let before = ledger_file(&root, "_gates/guarded.jsonl").unwrap();
    let r = call(
        &mut s,
        2,
        "op-approve",
        json!({"name": "guarded", "gate": "owner-ok"}),
    );
    assert_eq!(
        tool_text(&r),
        "Error: Op \"guarded\" declares neverOverMcp, so its gates are not resolved over MCP, whichever channel reached them. Approvals belong to people: approve at a shell with `chant approve guarded owner-ok`."
    );
    assert_eq!(
        ledger_file(&root, "_gates/guarded.jsonl").unwrap(),
        before,
        "nothing written"
    );
    // Reads answer as usual.
    assert_eq!(
        ok(&call(&mut s, 3, "op-status", json!({"name": "guarded"})))["state"],
        "gated"
    );
    assert!(
        tool_text(&call(&mut s, 4, "op-report", json!({"name": "guarded"})))
            .contains("- Gate: owner-ok (pending since")
    );
    assert!(
        ok(&call(&mut s, 5, "op-list", json!({})))["ops"]
            .as_array()
            .unwrap()
            .iter()
            .any(|o| o["name"] == "guarded")
    );
    // A person approves it at a shell.
    assert!(
        chant(
            &root,
            &["approve", "guarded", "owner-ok", "--actor", "owner"]
        )
        .status
        .success()
    );
}

#[test]
fn an_undiscovered_ops_pending_record_carries_never_over_mcp() {
    let (_d, root) = repo();
    // A pending fact written for an Op no *.op.ts declares (e.g. the fan-out gate); its
    // timestamp is later than the expiry `write_gate_line` records first (a second later).
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_millis() as u64;
    let line = json!({"version": 1, "kind": "pending", "op": "fan-out", "gate": "merge",
        "timestamp": chant_ops::time::iso(now + 1000), "expiresAt": chant_ops::time::iso(now + 3_600_000),
        "origin": "cli", "neverOverMcp": true});
    write_gate_line(&root, "fan-out", &line);
    let mut s = serve(&root);
    let r = call(
        &mut s,
        1,
        "op-approve",
        json!({"name": "fan-out", "gate": "merge"}),
    );
    assert!(
        tool_text(&r).contains("declares neverOverMcp")
            && tool_text(&r).contains("whichever channel"),
        "{}",
        tool_text(&r)
    );
    let out = chant(&root, &["approve", "fan-out", "merge", "--actor", "alex"]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        !String::from_utf8_lossy(&out.stderr).contains("was not found among discovered"),
        "fan-out needs no declaration"
    );
}

/// `git <args>` with `input` on stdin; its trimmed stdout.
fn git_with_input(root: &Path, args: &[&str], input: &str) -> String {
    use std::io::Write;
    let mut child = Command::new("git")
        .args(args)
        .current_dir(root)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    child
        .stdin
        .take()
        .unwrap()
        .write_all(input.as_bytes())
        .unwrap();
    String::from_utf8(child.wait_with_output().unwrap().stdout)
        .unwrap()
        .trim()
        .to_owned()
}

fn write_gate_line(root: &Path, op: &str, line: &Value) {
    // Through the binary's own writer: expire creates the branch, then append the line by hand.
    assert!(
        chant(root, &["approve", op, "merge", "--expire"])
            .status
            .success()
    );
    let existing = ledger_file(root, &format!("_gates/{op}.jsonl")).unwrap();
    let bytes = format!("{existing}\n{}", canon::to_compact(line));
    let blob = git_with_input(root, &["hash-object", "-w", "--stdin"], &bytes);
    let gates_tree = git_with_input(
        root,
        &["mktree"],
        &format!("100644 blob {blob}\t{op}.jsonl\n"),
    );
    let root_tree = git_with_input(
        root,
        &["mktree"],
        &format!("040000 tree {gates_tree}\t_gates\n"),
    );
    let head = git(root, &["rev-parse", "chant/lifecycle"])
        .trim()
        .to_owned();
    let commit = git(
        root,
        &["commit-tree", &root_tree, "-p", &head, "-m", "test"],
    )
    .trim()
    .to_owned();
    git(root, &["update-ref", "refs/heads/chant/lifecycle", &commit]);
}

#[test]
fn refusals_over_mcp() {
    let (_d, root) = repo();
    let mut s = serve(&root);
    let text = |s: &mut ServerProcess, id: i64, name: &str, args: Value| {
        tool_text(&call(s, id, name, args)).to_owned()
    };
    assert_eq!(
        text(&mut s, 1, "op-approve", json!({"name": "rollout"})),
        "Error: op-approve needs both an Op name and a gate name"
    );
    assert_eq!(
        text(
            &mut s,
            2,
            "op-approve",
            json!({"name": "rollout", "gate": "ship-it"})
        ),
        "Error: Cannot record the approval: this clone has no chant/lifecycle branch; fetch it first"
    );
    assert_eq!(
        text(
            &mut s,
            3,
            "op-approve",
            json!({"name": "../etc", "gate": "x"})
        ),
        "Error: Op name \"../etc\" must match ^[a-z0-9][a-z0-9._-]*$"
    );
    assert_eq!(
        text(&mut s, 4, "op-list", json!({"runtime": "aws"})),
        "Error: runtime \"aws\" is not a configured lexicon (configured: temporal)"
    );
    assert_eq!(
        text(
            &mut s,
            5,
            "op-run",
            json!({"name": "rollout", "runtime": "temporal"})
        ),
        "Error: lexicon \"temporal\" does not host Op runs"
    );
    assert_eq!(
        text(&mut s, 6, "op-status", json!({"name": "nope"})),
        "Error: Op \"nope\" not found. Available: guarded, rollout"
    );
    call(&mut s, 7, "op-run", json!({"name": "rollout"}));
    assert_eq!(
        text(
            &mut s,
            8,
            "op-approve",
            json!({"name": "rollout", "gate": "other"})
        ),
        "Error: Gate \"other\" on \"rollout\" has no pending fact, so there is no plan to approve"
    );
    assert_eq!(
        text(
            &mut s,
            9,
            "op-approve",
            json!({"name": "rollout", "gate": "ship-it", "url": "javascript:alert(1)"})
        ),
        "Error: url must be an absolute http/https URL (got \"javascript:alert(1)\")"
    );
    let status = ok(&call(&mut s, 10, "op-status", json!({"name": "rollout"})));
    assert_eq!(status["gate"]["name"], "ship-it");
    assert_eq!(
        s.request(11, "ping", json!({}))["result"],
        json!({}),
        "the server keeps serving"
    );
}

#[test]
fn an_approval_binds_one_plan() {
    let (_d, root) = repo();
    assert_eq!(chant(&root, &["run", "rollout"]).status.code(), Some(3));
    let other = format!("sha256:{}", "b".repeat(64));
    let out = chant(
        &root,
        &[
            "approve", "rollout", "ship-it", "--actor", "alex", "--plan", &other,
        ],
    );
    assert!(out.status.success());
    let out = chant(&root, &["run", "rollout", "--json"]);
    assert_eq!(
        out.status.code(),
        Some(3),
        "a resolution for another plan does not pass the gate"
    );
    let result: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(result["status"], "gated");
    let gate = result["records"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["fn"] == "gate:ship-it")
        .unwrap();
    assert!(gate["refusal"].as_str().unwrap().contains(&other));
    // Changing the Op changes the plan: a stale approval never covers it.
    assert!(
        chant(&root, &["approve", "rollout", "ship-it", "--actor", "alex"])
            .status
            .success()
    );
    std::fs::write(
        root.join("ops/rollout.op.ts"),
        ROLLOUT.replace("echo staging", "echo staging v2"),
    )
    .unwrap();
    assert!(
        chant(&root, &["approve", "rollout", "ship-it", "--expire"])
            .status
            .success()
    );
    assert_eq!(
        chant(&root, &["run", "rollout"]).status.code(),
        Some(3),
        "an expired fact stops standing; the run records a new one"
    );
}

#[test]
fn shell_refusals_name_the_fix() {
    let (_d, root) = repo();
    chant(&root, &["run", "rollout"]);
    let err = |args: &[&str]| {
        let out = chant(&root, args);
        assert_eq!(out.status.code(), Some(1), "{args:?}");
        String::from_utf8_lossy(&out.stderr).into_owned()
    };
    assert!(
        err(&["approve", "rollout", "ship-it", "--plan", "sha256:nope"]).contains(
            "--plan must be a plan digest (\"sha256:\" and 64 hex characters), got \"sha256:nope\""
        )
    );
    assert!(
        err(&["approve", "rollout", "ship-it", "--url", "example.test"])
            .contains("--url must be an absolute http/https URL (got \"example.test\")")
    );
    let text = err(&["approve", "rollout", "later", "--actor", "alex"]);
    assert!(
        text.contains(
            "Gate \"later\" on \"rollout\" has no pending fact, so there is no plan to approve"
        ) && text.contains("chant run rollout"),
        "{text}"
    );
    assert!(err(&["approve", "Bad/Name", "g"]).contains("must match ^[a-z0-9][a-z0-9._-]*$"));
    let warn = chant(&root, &["approve", "nosuchop", "g", "--expire"]);
    assert!(String::from_utf8_lossy(&warn.stderr).contains("Op \"nosuchop\" was not found among discovered *.op.ts declarations — recording the resolution anyway"));
    let outside = tempfile::tempdir().unwrap();
    let out = chant(outside.path(), &["run", "x"]);
    assert_eq!(
        String::from_utf8_lossy(&out.stderr),
        "error: Not in a git repository\n"
    );
}

#[test]
fn eight_processes_appending_at_once_lose_no_line() {
    let (_d, root) = repo();
    assert!(
        chant(&root, &["approve", "rollout", "g", "--expire"])
            .status
            .success()
    );
    let children: Vec<_> = (0..8)
        .map(|_| {
            Command::new("sh")
                .arg("-c")
                .arg(format!(
                    "for i in 1 2 3 4 5; do {BIN} approve rollout g --expire || exit 1; done"
                ))
                .current_dir(&root)
                .stderr(Stdio::null())
                .spawn()
                .unwrap()
        })
        .collect();
    for mut c in children {
        assert!(c.wait().unwrap().success());
    }
    let text = ledger_file(&root, "_gates/rollout.jsonl").unwrap();
    assert_eq!(text.lines().count(), 41);
    for line in text.lines() {
        serde_json::from_str::<Value>(line).unwrap();
    }
}

#[test]
fn a_writer_killed_mid_write_leaves_a_parseable_ledger() {
    let (_d, root) = repo();
    assert!(
        chant(&root, &["approve", "rollout", "g", "--expire"])
            .status
            .success()
    );
    for delay in [40, 90, 150] {
        let mut child = Command::new(BIN)
            .args(["run", "rollout"])
            .current_dir(&root)
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        let mut writers: Vec<_> = (0..3)
            .map(|_| {
                Command::new(BIN)
                    .args(["approve", "rollout", "g", "--expire"])
                    .current_dir(&root)
                    .stderr(Stdio::null())
                    .spawn()
                    .unwrap()
            })
            .collect();
        std::thread::sleep(Duration::from_millis(delay));
        let _ = child.kill(); // SIGKILL
        for w in &mut writers {
            let _ = w.kill();
        }
        let _ = child.wait();
        for mut w in writers {
            let _ = w.wait();
        }
        let _ = std::fs::remove_file(root.join(".git/chant-lifecycle.lock"));
        let text = ledger_file(&root, "_gates/rollout.jsonl").unwrap();
        for line in text.lines() {
            serde_json::from_str::<Value>(line)
                .unwrap_or_else(|e| panic!("unparseable line {line:?}: {e}"));
        }
        git(&root, &["fsck", "--no-progress"]);
    }
    // Every reader still works.
    let mut s = serve(&root);
    assert!(ok(&call(&mut s, 1, "op-list", json!({})))["ops"].is_array());
}

#[test]
fn run_json_and_progress_json() {
    let (_d, root) = repo();
    std::fs::write(
        root.join("ops/hello.op.ts"),
        "import { Op, phase, shell } from \"@intentius/chant-lexicon-temporal\";\nexport default Op({ name: \"hello\", overview: \"Minimal local Op — no Temporal server required\", phases: [phase(\"Greet\", [shell(\"echo hello from chant\")])] });\n",
    )
    .unwrap();
    let out = chant(&root, &["run", "hello", "--json"]);
    assert!(out.status.success());
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["ok"], true);
    assert_eq!(
        v["records"][0]["args"],
        json!({"cmd": "echo hello from chant"})
    );
    assert_eq!(
        v.as_object().unwrap().keys().collect::<Vec<_>>(),
        ["op", "records", "totalMs", "ok"]
    );
    let out = chant(&root, &["run", "hello", "--progress-json"]);
    let lines: Vec<Value> = String::from_utf8_lossy(&out.stdout)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(lines.len(), 1);
    assert_eq!(lines[0]["status"], "ok");
    // The digest vector: the hello Op diffs as added, then the build's propsHash is the spec's.
    let mut s = serve(&root);
    let diff = ok(&call(
        &mut s,
        1,
        "lifecycle-diff",
        json!({"environment": "dev", "lexicon": "temporal"}),
    ));
    assert_eq!(diff["temporal"]["added"].as_array().unwrap().len(), 3);
    assert_eq!(
        tool_text(&call(
            &mut s,
            2,
            "lifecycle-snapshot",
            json!({"environment": "dev"})
        )),
        "No plugins implement describeResources"
    );
    let state = s.request(3, "resources/read", json!({"uri": "chant://state/dev"}));
    assert_eq!(state["result"]["contents"][0]["text"], "{}");
    let missing = s.request(
        4,
        "resources/read",
        json!({"uri": "chant://state/dev/temporal"}),
    );
    assert_eq!(
        missing["error"]["message"],
        "No snapshot found for dev/temporal"
    );
}

#[test]
fn a_failing_op_runs_on_failure_in_reverse() {
    let (_d, root) = repo();
    std::fs::write(
        root.join("ops/migrate.op.ts"),
        r##"import { Op, phase, shell, activity } from "@intentius/chant-lexicon-temporal";
export default Op({
  name: "migrate",
  overview: "fails and rolls back",
  phases: [
    phase("Migrate", [shell("echo backing up"), shell("echo 'boom' >&2; exit 3", { profile: "policyCheck" }), shell("echo never runs")]),
    phase("Verify", [shell("echo verify")]),
  ],
  onFailure: [phase("Restore", [shell("echo restoring")]), phase("Notify", [activity("noSuchActivity", { channel: "#ops" })])],
});
"##,
    )
    .unwrap();
    let out = chant(&root, &["run", "migrate", "--json"]);
    assert_eq!(out.status.code(), Some(1));
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    let steps: Vec<(String, String)> = v["records"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| {
            (
                r["phase"].as_str().unwrap().to_owned(),
                r["status"].as_str().unwrap().to_owned(),
            )
        })
        .collect();
    assert_eq!(
        steps,
        [
            ("Migrate", "ok"),
            ("Migrate", "fail"),
            ("Migrate", "skipped"),
            ("Notify", "fail"),
            ("Restore", "ok")
        ]
        .map(|(a, b)| (a.to_owned(), b.to_owned()))
    );
    assert_eq!(
        v["records"][1]["error"],
        "Command failed: echo 'boom' >&2; exit 3\nboom\n"
    );
    assert_eq!(
        v["records"][3]["error"],
        "no activity named \"noSuchActivity\" (known: azGroupDelete, azGroupEnsure, chantBuild, chantTeardown, compensateApply, flociAzDown, flociAzUp, flociDown, flociGcpDown, flociGcpUp, flociUp, helmInstall, httpCheck, k3dDown, k3dUp, kubectlApply, lexiconUpgrade, lifecycleDiff, lifecycleSnapshot, nativeApply, pipelineSupplyChainAudit, policyGate, reconcilePr, shellCmd, waitForReady, workflowSupplyChainAudit)"
    );
    assert_eq!(v["records"][3]["durationMs"], 0);
}

#[test]
fn ctrl_c_cancels_the_run_ends_its_command_and_still_records_it() {
    let (_d, root) = repo();
    std::fs::write(
        root.join("ops/slow.op.ts"),
        r#"import { Op, phase, shell } from "@intentius/chant-lexicon-temporal";
export default Op({ name: "slow", overview: "sleeps", phases: [
  phase("Wait", [shell("sleep 30 & echo $! > sleep.pid; wait")]),
  phase("After", [shell("touch after.txt")]),
] });
"#,
    )
    .unwrap();
    let child = Command::new(BIN)
        .args(["run", "slow", "--json"])
        .current_dir(&root)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let pid_file = root.join("sleep.pid");
    let deadline = std::time::Instant::now() + Duration::from_secs(20);
    let sleep_pid = loop {
        if let Some(p) = std::fs::read_to_string(&pid_file)
            .ok()
            .and_then(|s| s.trim().parse::<u32>().ok())
        {
            break p;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "the step never started"
        );
        std::thread::sleep(Duration::from_millis(20));
    };
    let kill = Command::new("kill")
        .args(["-INT", &child.id().to_string()])
        .status()
        .unwrap();
    assert!(kill.success());
    let out = child.wait_with_output().unwrap();
    assert_eq!(
        out.status.code(),
        Some(130),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["ok"], false);
    assert_eq!(
        v["records"][0]["error"],
        "Command cancelled: sleep 30 & echo $! > sleep.pid; wait"
    );
    assert_eq!(
        v["records"].as_array().unwrap().len(),
        1,
        "nothing runs after a cancel"
    );
    assert!(!root.join("after.txt").exists());
    // The step's own child is gone too (absent, or a zombie awaiting its reaper).
    let stat = std::fs::read_to_string(format!("/proc/{sleep_pid}/stat")).unwrap_or_default();
    assert!(
        stat.is_empty() || stat.split(") ").nth(1).is_some_and(|s| s.starts_with('Z')),
        "{stat}"
    );
    // The run is on the ledger, cancelled.
    let record: Value = serde_json::from_str(
        ledger_file(&root, "local/runs__slow.jsonl")
            .unwrap()
            .lines()
            .last()
            .unwrap(),
    )
    .unwrap();
    assert_eq!(record["status"], "cancelled");
    let status = chant(&root, &["run", "status", "slow"]);
    assert_eq!(
        serde_json::from_slice::<Value>(&status.stdout).unwrap()["state"],
        "cancelled"
    );
}

#[test]
fn run_list_status_log_and_environments() {
    let (_d, root) = repo();
    let before = chant(&root, &["run", "list"]);
    assert!(before.status.success());
    let text = String::from_utf8_lossy(&before.stdout);
    assert!(
        text.lines()
            .any(|l| l.starts_with("rollout") && l.split_whitespace().nth(1) == Some("-")),
        "{text}"
    );
    assert_eq!(
        chant(
            &root,
            &["run", "rollout", "--env", "staging", "--gated-exit", "0"]
        )
        .status
        .code(),
        Some(0)
    );
    assert!(
        ledger_file(&root, "staging/runs__rollout.jsonl").is_some(),
        "--env names the ledger folder"
    );
    assert!(ledger_file(&root, "local/runs__rollout.jsonl").is_none());
    let list: Value =
        serde_json::from_slice(&chant(&root, &["run", "list", "--json"]).stdout).unwrap();
    let names: Vec<&str> = list["ops"]
        .as_array()
        .unwrap()
        .iter()
        .map(|o| o["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["guarded", "rollout"]);
    let log: Value =
        serde_json::from_slice(&chant(&root, &["run", "log", "rollout"]).stdout).unwrap();
    assert!(log.is_array(), "{log}");
    // Refusals before anything runs.
    for (args, want) in [
        (
            &["run", "rollout", "--env", "../escape"][..],
            "error: environment \"../escape\" must match ^[A-Za-z0-9][A-Za-z0-9._-]*$",
        ),
        (
            &["run", "rollout", "--on", "nope"][..],
            "error: runtime \"nope\" is not a configured lexicon (configured: temporal)",
        ),
        (
            &["run", "rollout", "--on", "temporal"][..],
            "error: lexicon \"temporal\" does not host Op runs",
        ),
        (
            &["run", "status", "nope"][..],
            "error: Op \"nope\" not found",
        ),
    ] {
        let out = chant(&root, args);
        assert_eq!(out.status.code(), Some(1), "{args:?}");
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(err.starts_with(want), "{args:?}: {err}");
    }
    assert!(ledger_file(&root, "../escape/runs__rollout.jsonl").is_none());
    let mut s = serve(&root);
    let r = call(
        &mut s,
        1,
        "op-run",
        json!({"name": "rollout", "env": "a/b"}),
    );
    assert_eq!(r["isError"], true);
    assert!(
        tool_text(&r).starts_with("Error: environment \"a/b\" must match"),
        "{}",
        tool_text(&r)
    );
    let r = call(&mut s, 2, "lifecycle-diff", json!({"environment": ".."}));
    assert!(
        tool_text(&r).starts_with("Error: environment \"..\" must match"),
        "{}",
        tool_text(&r)
    );
}

#[test]
fn parallel_phases_run_their_steps_at_once_and_outcomes_are_recorded() {
    let (_d, root) = repo();
    // Each step waits (up to 10 s) for the other's file: run one after the other, the first
    // would fail; run at once, both pass quickly.
    std::fs::write(
        root.join("ops/pair.op.ts"),
        r#"import { Op, phase, shell } from "@intentius/chant-lexicon-temporal";
const waitFor = (mine: string, theirs: string) =>
  `touch ${mine}; i=0; while [ ! -f ${theirs} ]; do i=$((i+1)); [ $i -gt 1000 ] && exit 1; sleep 0.01; done`;
export default Op({
  name: "pair",
  overview: "two steps that need each other",
  labels: { Env: "qa" },
  phases: [
    phase("Both", [shell(waitFor("a.flag", "b.flag"), { profile: "policyCheck" }), shell(waitFor("b.flag", "a.flag"), { profile: "policyCheck" })], { parallel: true }),
    phase("Outcome", [shell("echo '{\"release\": {\"id\": 42}}'", { outcomeAttribute: { name: "releaseId", from: "release.id" } })]),
  ],
});
"#,
    )
    .unwrap();
    let out = chant(&root, &["run", "pair", "--json"]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stdout)
    );
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["records"][0]["status"], "ok");
    assert_eq!(v["records"][1]["status"], "ok");
    assert_eq!(
        v["records"][2]["outcome"],
        json!({"name": "releaseId", "value": 42})
    );
    // labels.Env picks the environment when --env is absent.
    let record: Value =
        serde_json::from_str(&ledger_file(&root, "qa/runs__pair.jsonl").unwrap()).unwrap();
    assert_eq!(record["outcomes"], json!({"releaseId": 42}));
    assert_eq!(record["labels"], json!({"Env": "qa"}));
    assert_eq!(
        record["phases"]
            .as_array()
            .unwrap()
            .iter()
            .map(|p| p["name"].as_str().unwrap())
            .collect::<Vec<_>>(),
        ["Both", "Outcome"]
    );
}

#[test]
fn a_server_started_in_a_subdirectory_keeps_every_ledger_entry() {
    let (_d, root) = repo();
    std::fs::write(
        root.join("ops/hold.op.ts"),
        r#"import { Op, phase, shell, gate } from "@intentius/chant-lexicon-temporal";
export default Op({
  name: "hold",
  overview: "gated, never cleaned up",
  phases: [phase("Wait", [gate("go")]), phase("After", [shell("touch after.txt")])],
  onFailure: [phase("Cleanup", [shell("touch cleanup.txt")])],
});
"#,
    )
    .unwrap();
    // Entries written from the top level first.
    assert_eq!(
        chant(&root, &["run", "guarded", "--env", "prod"])
            .status
            .code(),
        Some(3)
    );
    let before = git(&root, &["ls-tree", "-r", "--name-only", "chant/lifecycle"]);
    let mut s = ServerProcess::spawn_in(BIN, ["serve", "mcp"], &root.join("ops"));
    s.initialize(Some("2025-11-25"));
    let r = ok(&call(&mut s, 1, "op-run", json!({"name": "hold"})));
    assert_eq!(r["state"], "gated");
    // A gated run runs no later phase and no onFailure.
    assert!(!root.join("after.txt").exists() && !root.join("cleanup.txt").exists());
    assert!(!root.join("ops/after.txt").exists());
    let after = git(&root, &["ls-tree", "-r", "--name-only", "chant/lifecycle"]);
    for line in before.lines() {
        assert!(after.lines().any(|l| l == line), "{line} kept: {after}");
    }
    for added in ["_gates/hold/", "local/runs/hold/"] {
        assert!(
            after.lines().any(|l| l.starts_with(added)),
            "{added}: {after}"
        );
    }
    // Reads from the subdirectory see entries written at the top level.
    let status = ok(&call(&mut s, 2, "op-status", json!({"name": "guarded"})));
    assert_eq!(status["state"], "gated");
    let runs = read_json(&mut s, 3, "chant://ops/guarded/runs");
    assert_eq!(runs.as_array().unwrap().len(), 1, "{runs}");
    assert_eq!(runs[0]["state"], "gated");
}

/// The gate step's record of a `chant run --json`.
fn gate_record(out: &std::process::Output) -> Value {
    let result: Value = serde_json::from_slice(&out.stdout).unwrap();
    result["records"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["fn"] == "gate:ship-it")
        .cloned()
        .unwrap_or(Value::Null)
}

/// The newest pending fact's plan digest.
fn pending_digest(root: &Path) -> String {
    let text = ledger_file(root, "_gates/rollout.jsonl").unwrap();
    text.lines()
        .map(|l| serde_json::from_str::<Value>(l).unwrap())
        .rfind(|v| v["kind"] == "pending")
        .unwrap()["planDigest"]
        .as_str()
        .unwrap()
        .to_owned()
}

#[test]
fn an_approval_passes_only_the_plan_it_named() {
    // Reached and approved for staging, at a shell.
    let (_d, root) = repo();
    let gated = || chant(&root, &["run", "rollout", "--env", "staging", "--json"]);
    assert_eq!(gated().status.code(), Some(3));
    let staging = pending_digest(&root);
    assert!(
        chant(&root, &["approve", "rollout", "ship-it", "--actor", "alex"])
            .status
            .success()
    );
    // Another environment is another plan.
    let out = chant(&root, &["run", "rollout", "--env", "prod", "--json"]);
    assert_eq!(
        out.status.code(),
        Some(3),
        "the staging approval does not pass prod"
    );
    let refusal = gate_record(&out)["refusal"].as_str().unwrap().to_owned();
    let prod = pending_digest(&root);
    assert_ne!(prod, staging);
    assert!(
        refusal.contains(&staging) && refusal.contains(&prod),
        "the refusal names both digests: {refusal}"
    );
    assert!(!root.join("rolled.txt").exists());
    // Approving prod's plan passes prod, and only then.
    assert!(
        chant(&root, &["approve", "rollout", "ship-it", "--actor", "alex"])
            .status
            .success()
    );
    let out = chant(&root, &["run", "rollout", "--env", "prod", "--json"]);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(root.join("rolled.txt").exists());
    std::fs::remove_file(root.join("rolled.txt")).unwrap();
    // Unchanged Op, same env: still passes.
    let out = chant(&root, &["run", "rollout", "--env", "prod", "--json"]);
    assert_eq!(out.status.code(), Some(0));
    std::fs::remove_file(root.join("rolled.txt")).unwrap();

    // An edited step and an edited profile are other plans too.
    for (what, edited) in [
        (
            "an edited step",
            ROLLOUT.replace("echo rolling out > rolled.txt", "echo pwned > rolled.txt"),
        ),
        (
            "an edited profile",
            ROLLOUT.replace(
                "shell(\"echo staging\")",
                "{ ...shell(\"echo staging\"), profile: \"longInfra\" }",
            ),
        ),
    ] {
        // The unedited Op stands approved for prod.
        let out = chant(&root, &["run", "rollout", "--env", "prod", "--json"]);
        if out.status.code() == Some(3) {
            assert!(
                chant(&root, &["approve", "rollout", "ship-it", "--actor", "alex"])
                    .status
                    .success()
            );
            let out = chant(&root, &["run", "rollout", "--env", "prod", "--json"]);
            assert_eq!(out.status.code(), Some(0), "{what}");
        }
        std::fs::remove_file(root.join("rolled.txt")).unwrap();
        std::fs::write(root.join("ops/rollout.op.ts"), &edited).unwrap();
        let out = chant(&root, &["run", "rollout", "--env", "prod", "--json"]);
        assert_eq!(
            out.status.code(),
            Some(3),
            "{what}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        assert!(
            gate_record(&out)["refusal"]
                .as_str()
                .is_some_and(|r| r.contains("not this run's plan")),
            "{what}"
        );
        assert!(!root.join("rolled.txt").exists(), "{what}");
        std::fs::write(root.join("ops/rollout.op.ts"), ROLLOUT).unwrap();
    }
}

#[test]
fn an_agent_cannot_edit_an_op_and_ride_a_persons_approval() {
    let (_d, root) = repo();
    // A person runs and approves at a shell.
    assert_eq!(chant(&root, &["run", "rollout"]).status.code(), Some(3));
    assert!(
        chant(&root, &["approve", "rollout", "ship-it", "--actor", "alex"])
            .status
            .success()
    );
    // The agent edits the Op, then runs it over MCP.
    std::fs::write(
        root.join("ops/rollout.op.ts"),
        ROLLOUT.replace("echo rolling out > rolled.txt", "echo agent > rolled.txt"),
    )
    .unwrap();
    let mut s = serve(&root);
    let run = ok(&call(&mut s, 1, "op-run", json!({"name": "rollout"})));
    assert_eq!(run["state"], "gated", "{run}");
    assert!(!root.join("rolled.txt").exists());
    // The new pending fact was reached over MCP: the agent cannot approve it either.
    let r = call(
        &mut s,
        2,
        "op-approve",
        json!({"name": "rollout", "gate": "ship-it"}),
    );
    assert_eq!(r["isError"], true, "{r}");
    let run = ok(&call(&mut s, 3, "op-run", json!({"name": "rollout"})));
    assert_eq!(run["state"], "gated");
    assert!(!root.join("rolled.txt").exists());
    // The unedited Op still passes on the person's approval of it... once re-approved for the
    // plan that stands now, which is the edited one: put it back and approve at a shell.
    std::fs::write(root.join("ops/rollout.op.ts"), ROLLOUT).unwrap();
    assert_eq!(chant(&root, &["run", "rollout"]).status.code(), Some(3));
    assert!(
        chant(&root, &["approve", "rollout", "ship-it", "--actor", "alex"])
            .status
            .success()
    );
    let run = ok(&call(&mut s, 4, "op-run", json!({"name": "rollout"})));
    assert_eq!(run["state"], "completed", "{run}");
}

#[test]
fn op_approve_takes_no_approver_and_no_override_and_shows_what_was_recorded() {
    let (_d, root) = repo();
    let mut s = serve(&root);
    // Reached over MCP: the agent cannot slip in an override or a name.
    ok(&call(&mut s, 1, "op-run", json!({"name": "rollout"})));
    let before = ledger_file(&root, "_gates/rollout.jsonl");
    for (id, extra) in [
        (2, json!({"allowSameOrigin": true})),
        (3, json!({"approver": "alice"})),
        (4, json!({"resolvedBy": "alice", "origin": "cli"})),
    ] {
        let mut args = json!({"name": "rollout", "gate": "ship-it"});
        for (k, v) in extra.as_object().unwrap() {
            args[k] = v.clone();
        }
        let r = call(&mut s, id, "op-approve", args);
        assert_eq!(r["isError"], true, "{r}");
        assert!(tool_text(&r).contains("op-approve does not take"), "{r}");
    }
    assert_eq!(
        ledger_file(&root, "_gates/rollout.jsonl"),
        before,
        "nothing written"
    );
    // Reached at a shell: the approval is recorded unattested, and the reply says what the
    // ledger holds.
    let (_d2, root2) = repo();
    assert_eq!(chant(&root2, &["run", "rollout"]).status.code(), Some(3));
    let mut s2 = serve(&root2);
    let r = ok(&call(
        &mut s2,
        1,
        "op-approve",
        json!({"name": "rollout", "gate": "ship-it"}),
    ));
    let recorded: Value = serde_json::from_str(
        ledger_file(&root2, "_gates/rollout.jsonl")
            .unwrap()
            .lines()
            .last()
            .unwrap(),
    )
    .unwrap();
    assert_eq!(recorded["resolvedBy"], "unattested");
    assert_eq!(r["resolvedBy"], recorded["resolvedBy"]);
    assert_eq!(r["origin"], recorded["origin"]);
    assert_eq!(r["timestamp"], recorded["timestamp"]);
}

#[test]
fn never_over_mcp_is_checked_from_the_declaration_first_whatever_the_pending_fact_says() {
    let (_d, root) = repo();
    // Reached at a shell before the Op declared neverOverMcp: its pending fact has no flag.
    assert_eq!(chant(&root, &["run", "rollout"]).status.code(), Some(3));
    std::fs::write(
        root.join("ops/rollout.op.ts"),
        ROLLOUT.replace("overview:", "neverOverMcp: true,\n  overview:"),
    )
    .unwrap();
    let before = ledger_file(&root, "_gates/rollout.jsonl").unwrap();
    assert!(!before.contains("neverOverMcp"));
    let mut s = serve(&root);
    let never = "Error: Op \"rollout\" declares neverOverMcp, so its gates are not resolved over MCP, whichever channel reached them. Approvals belong to people: approve at a shell with `chant approve rollout ship-it`.";
    let r = call(
        &mut s,
        1,
        "op-approve",
        json!({"name": "rollout", "gate": "ship-it"}),
    );
    assert_eq!(tool_text(&r), never);
    // Second in the check order: before the runtime is resolved.
    let r = call(
        &mut s,
        2,
        "op-approve",
        json!({"name": "rollout", "gate": "ship-it", "runtime": "nope"}),
    );
    assert_eq!(tool_text(&r), never);
    assert_eq!(
        ledger_file(&root, "_gates/rollout.jsonl").unwrap(),
        before,
        "nothing written"
    );
}

/// A model approves only gates of Ops it sees declared: an Op outside the served project, or
/// one discovery could not read (a cancelled request stops discovery the same way), is
/// refused, not taken for one without neverOverMcp.
#[test]
fn a_model_cannot_approve_an_op_it_does_not_see_declared() {
    let (_d, root) = repo();
    assert_eq!(chant(&root, &["run", "rollout"]).status.code(), Some(3));
    std::fs::write(
        root.join("ops/rollout.op.ts"),
        ROLLOUT.replace("overview:", "neverOverMcp: true,\n  overview:"),
    )
    .unwrap();
    let before = ledger_file(&root, "_gates/rollout.jsonl").unwrap();
    let says = |r: &Value| -> String {
        let t = tool_text(r).to_owned();
        assert!(
            t.starts_with("Error: Op \"rollout\" is not declared by any *.op.ts this server reads")
                && t.ends_with("Approve at a shell with `chant approve rollout ship-it`."),
            "{t}"
        );
        t
    };
    // Served from a project inside the repository that declares no Ops.
    std::fs::create_dir_all(root.join("app")).unwrap();
    std::fs::write(
        root.join("app/chant.config.json"),
        r#"{"lexicons":["temporal"]}"#,
    )
    .unwrap();
    let mut s = serve(&root.join("app"));
    says(&call(
        &mut s,
        1,
        "op-approve",
        json!({"name": "rollout", "gate": "ship-it"}),
    ));
    drop(s);
    // The declaration cannot be read.
    std::fs::write(
        root.join("ops/rollout.op.ts"),
        "export default Op({ name: \"rollout\",\n",
    )
    .unwrap();
    let mut s = serve(&root);
    let text = says(&call(
        &mut s,
        2,
        "op-approve",
        json!({"name": "rollout", "gate": "ship-it"}),
    ));
    assert!(text.contains("discovery did not read everything"), "{text}");
    assert_eq!(
        ledger_file(&root, "_gates/rollout.jsonl").unwrap(),
        before,
        "nothing written"
    );
    // At a shell the same approval goes ahead, with the warning.
    let out = chant(&root, &["approve", "rollout", "ship-it", "--actor", "alex"]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// Inside a workspace a member's runs and gates live under `_members/<member>/` on the branch:
/// what one member records, the root and the other members do not read (an approval given
/// there finds no pending fact), and a declaration that cannot be read stops the run rather
/// than guessing where its entries go.
#[test]
fn a_members_runs_and_gates_live_under_its_own_ledger_directory() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("ws");
    for m in ["api", "web"] {
        std::fs::create_dir_all(root.join(m).join("ops")).unwrap();
        std::fs::write(
            root.join(m).join("chant.config.json"),
            r#"{"lexicons":["temporal"]}"#,
        )
        .unwrap();
    }
    std::fs::write(root.join("api/ops/rollout.op.ts"), ROLLOUT).unwrap();
    let declaration = r#"{"name": "ws", "schema": 1, "members": [
      {"name": "api", "dir": "api", "kind": "chant"}, {"name": "web", "dir": "web", "kind": "chant"}]}"#;
    std::fs::write(root.join("chant.workspace.json"), declaration).unwrap();
    git(&root, &["init", "-q"]);
    let api = root.join("api");
    let web = root.join("web");

    let out = chant(&api, &["run", "rollout"]);
    assert_eq!(
        out.status.code(),
        Some(3),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let paths = || git(&root, &["ls-tree", "-r", "--name-only", "chant/lifecycle"]);
    let listed = paths();
    assert!(!listed.is_empty());
    for p in listed.lines() {
        assert!(
            p.starts_with("_members/api/"),
            "{p} is outside the member's directory"
        );
    }

    // The root and the other member read their own directories: no pending fact there.
    for elsewhere in [&root, &web] {
        let out = chant(
            elsewhere,
            &["approve", "rollout", "ship-it", "--actor", "alex"],
        );
        assert!(!out.status.success());
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(
            err.contains("has no pending fact"),
            "{}: {err}",
            elsewhere.display()
        );
    }
    assert_eq!(paths(), listed, "a refused approval writes nothing");

    // In the member, the person's approval finds its gate, and the run completes.
    let out = chant(&api, &["approve", "rollout", "ship-it", "--actor", "alex"]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let out = chant(&api, &["run", "rollout"]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    for p in paths().lines() {
        assert!(p.starts_with("_members/api/"), "{p}");
    }
    let mut s = serve(&api);
    let status = ok(&call(&mut s, 1, "op-status", json!({"name": "rollout"})));
    assert_eq!(status["state"], "completed", "{status}");
    drop(s);

    // An unreadable declaration: nothing runs, nothing is written, and the error says why.
    std::fs::write(root.join("chant.workspace.json"), "{ not json").unwrap();
    let before = git(&root, &["rev-parse", "chant/lifecycle"]);
    let out = chant(&api, &["run", "rollout"]);
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("cannot place this project's lifecycle ledger: ")
            && err.contains("chant does not guess the member. Fix the declaration and retry."),
        "{err}"
    );
    assert_eq!(git(&root, &["rev-parse", "chant/lifecycle"]), before);
}

/// The members' ledger directories come from the declaration at base, as the trust policy
/// does: an agent that edits the working tree's declaration (swapping two members'
/// directories, or dropping a member so it reads the top) does not make one project read
/// another's ledger, so a person's approval of one member's gate never passes the same Op's
/// gate in another member, or in the root.
#[test]
fn an_approval_binds_the_op_files_place_whatever_the_declaration_says() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("ws");
    for m in ["api", "web", "."] {
        std::fs::create_dir_all(root.join(m).join("ops")).unwrap();
        std::fs::write(
            root.join(m).join("chant.config.json"),
            r#"{"lexicons":["temporal"]}"#,
        )
        .unwrap();
        std::fs::write(root.join(m).join("ops/rollout.op.ts"), ROLLOUT).unwrap();
    }
    let declared = r#"{"name": "ws", "schema": 1, "members": [
      {"name": "api", "dir": "api", "kind": "chant"}, {"name": "web", "dir": "web", "kind": "chant"}]}"#;
    std::fs::write(root.join("chant.workspace.json"), declared).unwrap();
    git(&root, &["init", "-q", "-b", "main"]);
    git(&root, &["add", "-A"]);
    git(
        &root,
        &[
            "-c",
            "user.name=t",
            "-c",
            "user.email=t@example.com",
            "-c",
            "commit.gpgsign=false",
            "commit",
            "-qm",
            "ws",
        ],
    );
    let (api, web) = (root.join("api"), root.join("web"));
    for d in [&api, &web, &root] {
        assert_eq!(chant(d, &["run", "rollout"]).status.code(), Some(3));
    }
    let out = chant(&api, &["approve", "rollout", "ship-it", "--actor", "alex"]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let out = chant(&root, &["approve", "rollout", "ship-it", "--actor", "alex"]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );

    // Swapped: web now reads api's directory on the branch, and finds api's approval.
    std::fs::write(
        root.join("chant.workspace.json"),
        declared
            .replace(r#""dir": "api""#, r#""dir": "XX""#)
            .replace(r#""dir": "web""#, r#""dir": "api""#)
            .replace(r#""dir": "XX""#, r#""dir": "web""#),
    )
    .unwrap();
    let out = chant(&web, &["run", "rollout"]);
    assert_eq!(
        out.status.code(),
        Some(3),
        "web ran on api's approval: {}",
        String::from_utf8_lossy(&out.stdout)
    );
    assert!(!web.join("rolled.txt").exists());
    // Dropped: web would read the top, and find the root's approval.
    std::fs::write(
        root.join("chant.workspace.json"),
        r#"{"name": "ws", "schema": 1, "members": [{"name": "api", "dir": "api", "kind": "chant"}]}"#,
    )
    .unwrap();
    let out = chant(&web, &["run", "rollout"]);
    assert_eq!(
        out.status.code(),
        Some(3),
        "web ran on the root's approval: {}",
        String::from_utf8_lossy(&out.stdout)
    );
    assert!(!web.join("rolled.txt").exists());
    // Each approval still passes its own gate.
    std::fs::write(root.join("chant.workspace.json"), declared).unwrap();
    for d in [&api, &root] {
        let out = chant(d, &["run", "rollout"]);
        assert!(
            out.status.success(),
            "{}: {}",
            d.display(),
            String::from_utf8_lossy(&out.stderr)
        );
    }
}
