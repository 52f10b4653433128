//! The ledger as a team shares it, through the real binary: fresh clones build on the remote's
//! history, pushes never drop a commit the remote has, and a repository redirect through the
//! environment is refused rather than followed.

use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::Value;

const BIN: &str = env!("CARGO_BIN_EXE_chant");

const ROLLOUT: &str = r#"import { Op, phase, shell, gate } from "@intentius/chant-lexicon-temporal";

export default Op({
  name: "rollout",
  overview: "Stage, wait for approval, then roll out",
  phases: [
    phase("Stage", [shell("echo staging")]),
    phase("Approve", [gate("ship-it", { timeout: "4h" })]),
    phase("Rollout", [shell("echo rolling out")]),
  ],
});
"#;

fn git(dir: &Path, args: &[&str]) -> String {
    let out = Command::new("git")
        .args(args)
        .current_dir(dir)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "git {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).trim().to_owned()
}

fn chant_in(dir: &Path, args: &[&str], env: &[(&str, &str)]) -> std::process::Output {
    let mut cmd = Command::new(BIN);
    cmd.args(args).current_dir(dir);
    for (k, v) in env {
        cmd.env(k, v);
    }
    cmd.output().unwrap()
}

fn stderr(out: &std::process::Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

/// A bare origin holding a chant project on main, and the path of a first clone of it.
fn team() -> (tempfile::TempDir, PathBuf, PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    git(dir.path(), &["init", "-q", "--bare", "origin.git"]);
    git(dir.path(), &["clone", "-q", "origin.git", "a"]);
    let a = dir.path().join("a");
    for (k, v) in [("user.name", "Alex"), ("user.email", "alex@example.com")] {
        git(&a, &["config", k, v]);
    }
    std::fs::create_dir_all(a.join("ops")).unwrap();
    std::fs::write(a.join("chant.config.json"), r#"{"lexicons":["temporal"]}"#).unwrap();
    std::fs::write(a.join("ops/rollout.op.ts"), ROLLOUT).unwrap();
    git(&a, &["add", "."]);
    git(&a, &["commit", "-q", "-m", "project"]);
    git(&a, &["push", "-q", "origin", "HEAD"]);
    let origin = dir.path().join("origin.git");
    (dir, origin, a)
}

/// Every gate fact of `rollout` on the ledger of `dir` (a clone or the bare origin), in the
/// order they were written: the legacy file's lines, then one file per fact in time order.
fn gate_lines(dir: &Path) -> Vec<Value> {
    let mut out: Vec<Value> = Vec::new();
    let listed = git(
        dir,
        &[
            "ls-tree",
            "-r",
            "--name-only",
            "chant/lifecycle",
            "--",
            "_gates/",
        ],
    );
    let mut paths: Vec<&str> = listed.lines().collect();
    paths.sort_by_key(|p| (*p != "_gates/rollout.jsonl", p.to_string()));
    for path in paths {
        if path == "_gates/rollout.jsonl" || path.starts_with("_gates/rollout/") {
            // (A line that is not JSON is no fact: the readers skip it too.)
            for l in git(dir, &["show", &format!("chant/lifecycle:{path}")]).lines() {
                out.extend(serde_json::from_str::<Value>(l).ok());
            }
        }
    }
    out
}

/// Plants `fact` where chant files a fact of its time (as a writer who knows the layout and
/// uses git plumbing would): it is read like any other.
fn forge(dir: &Path, fact: &Value) {
    let ms = chant_ops::time::parse_iso(fact["timestamp"].as_str().unwrap()).unwrap();
    let gate =
        chant_ops::gates::gate_dir(fact["op"].as_str().unwrap(), fact["gate"].as_str().unwrap());
    chant_ops::layout::append(
        &gitledger::Ledger::open(dir).unwrap(),
        &gate,
        ms,
        &fact.to_string(),
        "hand edit",
    )
    .unwrap();
}

/// The ledger's commit (what "nothing was recorded" compares).
fn ledger_head(dir: &Path) -> String {
    git(dir, &["rev-parse", "chant/lifecycle"])
}

/// The files under `dir` on the ledger of `clone`, sorted (newest last).
fn ledger_files(clone: &Path, dir: &str) -> Vec<String> {
    git(
        clone,
        &["ls-tree", "-r", "--name-only", "chant/lifecycle", "--", dir],
    )
    .lines()
    .map(str::to_owned)
    .collect()
}

#[test]
fn a_fresh_clone_approves_on_top_of_the_remote_and_every_commit_stays_reachable() {
    let (dir, origin, a) = team();
    // A run in clone a stops at the gate; its pending fact is pushed for the approver.
    let run = chant_in(&a, &["run", "rollout"], &[]);
    assert!(
        stderr(&run).contains("waiting at gate \"ship-it\""),
        "{}",
        stderr(&run)
    );
    let pending_commit = git(&a, &["rev-parse", "chant/lifecycle"]);
    assert_eq!(
        git(&origin, &["rev-parse", "chant/lifecycle"]),
        pending_commit
    );

    // A person's fresh clone: origin/chant/lifecycle, no local branch.
    git(dir.path(), &["clone", "-q", "origin.git", "b"]);
    let b = dir.path().join("b");
    let approve = chant_in(
        &b,
        &["approve", "rollout", "ship-it", "--actor", "sam"],
        &[],
    );
    assert!(approve.status.success(), "{}", stderr(&approve));
    assert!(
        !stderr(&approve).contains("warning"),
        "{}",
        stderr(&approve)
    );
    let lines = gate_lines(&origin);
    assert_eq!(lines.len(), 2, "{lines:?}");
    assert_eq!(lines[0]["kind"], "pending");
    assert_eq!(lines[1]["kind"], "resolution");
    assert_eq!(lines[1]["resolvedBy"], "sam");
    git(
        &origin,
        &[
            "merge-base",
            "--is-ancestor",
            &pending_commit,
            "chant/lifecycle",
        ],
    );

    // Clone a, fetched, now passes the gate; a third fresh clone sees the same history.
    git(&a, &["fetch", "-q", "origin"]);
    let passed = chant_in(&a, &["run", "rollout", "--json"], &[]);
    assert!(passed.status.success(), "{}", stderr(&passed));
    git(dir.path(), &["clone", "-q", "origin.git", "c"]);
    let c = dir.path().join("c");
    let log = chant_in(&c, &["run", "log", "rollout", "--json"], &[]);
    assert!(log.status.success(), "{}", stderr(&log));
}

#[test]
fn two_clones_approving_while_the_other_moved_both_survive() {
    let (dir, origin, a) = team();
    let run = chant_in(&a, &["run", "rollout"], &[]);
    assert!(stderr(&run).contains("waiting at gate"), "{}", stderr(&run));
    git(dir.path(), &["clone", "-q", "origin.git", "b"]);
    let b = dir.path().join("b");
    // a writes an expiry and pushes; b, not having fetched, approves: b's push is refused
    // as stale, so b fetches, merges the two and pushes the merge.
    let expire = chant_in(&a, &["approve", "rollout", "ship-it", "--expire"], &[]);
    assert!(expire.status.success(), "{}", stderr(&expire));
    let approve = chant_in(
        &b,
        &["approve", "rollout", "ship-it", "--actor", "sam"],
        &[],
    );
    assert!(approve.status.success(), "{}", stderr(&approve));
    assert!(
        !stderr(&approve).contains("warning"),
        "{}",
        stderr(&approve)
    );
    let kinds: Vec<String> = gate_lines(&origin)
        .iter()
        .map(|l| l["kind"].as_str().unwrap().to_owned())
        .collect();
    assert_eq!(kinds.len(), 3, "{kinds:?}: nothing dropped");
    assert_eq!(kinds.iter().filter(|k| *k == "pending").count(), 2);
    assert_eq!(kinds.iter().filter(|k| *k == "resolution").count(), 1);
    for clone in [&a, &b] {
        let tip = git(clone, &["rev-parse", "chant/lifecycle"]);
        if clone == &b {
            git(
                &origin,
                &["merge-base", "--is-ancestor", &tip, "chant/lifecycle"],
            );
        }
    }
    let a_tip = git(&a, &["rev-parse", "chant/lifecycle"]);
    git(
        &origin,
        &["merge-base", "--is-ancestor", &a_tip, "chant/lifecycle"],
    );
}

#[test]
fn a_shallow_single_branch_clone_fetches_the_ledger_before_deciding() {
    let (dir, _origin, a) = team();
    let run = chant_in(&a, &["run", "rollout"], &[]);
    assert!(stderr(&run).contains("waiting at gate"), "{}", stderr(&run));
    let approve = chant_in(
        &a,
        &["approve", "rollout", "ship-it", "--actor", "sam"],
        &[],
    );
    assert!(approve.status.success(), "{}", stderr(&approve));
    let url = format!("file://{}", dir.path().join("origin.git").display());
    git(dir.path(), &["clone", "-q", "--depth", "1", &url, "ci"]);
    let ci = dir.path().join("ci");
    // CI's clone has no chant/lifecycle at all; the run fetches it and passes the gate.
    let passed = chant_in(&ci, &["run", "rollout", "--json"], &[]);
    assert!(passed.status.success(), "{}", stderr(&passed));
    // When the fetch cannot happen, the run says what it cannot see.
    git(
        dir.path(),
        &["clone", "-q", "--depth", "1", &url, "offline"],
    );
    let offline = dir.path().join("offline");
    git(
        &offline,
        &["remote", "set-url", "origin", "/nonexistent/origin.git"],
    );
    let blind = chant_in(&offline, &["run", "rollout"], &[]);
    let text = stderr(&blind);
    assert!(
        text.contains("note: this clone has no chant/lifecycle and fetching origin's failed")
            && text.contains("in this shallow clone")
            && text
                .contains("git fetch origin chant/lifecycle:refs/remotes/origin/chant/lifecycle"),
        "{text}"
    );
}

#[test]
fn a_repository_redirect_in_the_environment_is_refused() {
    let (dir, _origin, a) = team();
    let other = dir.path().join("other");
    git(dir.path(), &["init", "-q", "other"]);
    let other_git = other.join(".git");
    for var in [
        "GIT_DIR",
        "GIT_WORK_TREE",
        "GIT_COMMON_DIR",
        "GIT_NAMESPACE",
        "GIT_OBJECT_DIRECTORY",
    ] {
        let value = if var == "GIT_NAMESPACE" {
            "elsewhere".to_owned()
        } else {
            other_git.display().to_string()
        };
        let out = chant_in(&a, &["run", "rollout"], &[(var, value.as_str())]);
        assert!(!out.status.success(), "{var}");
        assert_eq!(
            stderr(&out).trim(),
            format!(
                "error: {var} is set in the environment (\"{value}\"), which would point git at another repository's chant/lifecycle ledger; chant refuses rather than guess. Unset {var} and run chant from inside the repository whose ledger you mean"
            )
        );
        let approve = chant_in(
            &a,
            &["approve", "rollout", "ship-it"],
            &[(var, value.as_str())],
        );
        assert!(!approve.status.success(), "{var}");
    }
    assert!(
        Command::new("git")
            .args(["rev-parse", "--verify", "-q", "chant/lifecycle"])
            .current_dir(&other)
            .output()
            .unwrap()
            .stdout
            .is_empty(),
        "nothing was written to the other repository"
    );
}

fn ledger_bytes(dir: &Path, path: &str) -> Vec<u8> {
    gitledger::Ledger::open(dir)
        .unwrap()
        .read(path)
        .unwrap()
        .unwrap_or_default()
}

fn put(dir: &Path, path: &str, bytes: &[u8]) {
    gitledger::Ledger::open(dir)
        .unwrap()
        .write(path, bytes, "hand edit")
        .unwrap();
}

fn json_out(out: &std::process::Output) -> Value {
    assert!(out.status.success(), "{}", stderr(out));
    serde_json::from_slice(&out.stdout).unwrap()
}

#[test]
fn one_bad_byte_costs_one_line_and_is_reported_everywhere() {
    let (_dir, _origin, a) = team();
    // Two runs recorded (the second passes the gate after an approval).
    chant_in(&a, &["run", "rollout"], &[]);
    let ok = chant_in(
        &a,
        &["approve", "rollout", "ship-it", "--actor", "sam"],
        &[],
    );
    assert!(ok.status.success(), "{}", stderr(&ok));
    assert!(chant_in(&a, &["run", "rollout"], &[]).status.success());
    // One file per run, one per gate fact.
    let run_files = ledger_files(&a, "local/runs/rollout/");
    assert_eq!(run_files.len(), 2, "{run_files:?}");
    assert_eq!(gate_lines(&a).len(), 2);
    // One invalid byte on a second line of the newest run file, one on the newest gate file.
    let runs = run_files.last().unwrap().as_str();
    let mut bytes = ledger_bytes(&a, runs);
    bytes.extend_from_slice(b"\n{\"version\":1,\"op\":\"rollout\xff\"}");
    put(&a, runs, &bytes);
    let gate_files = ledger_files(&a, "_gates/rollout/");
    let gates = gate_files.last().unwrap().as_str();
    let mut g = ledger_bytes(&a, gates);
    g.extend_from_slice(b"\n\xfe");
    put(&a, gates, &g);

    let status = json_out(&chant_in(&a, &["run", "status", "rollout", "--json"], &[]));
    assert_eq!(
        status["state"], "completed",
        "the runs before the bad line remain"
    );
    assert_eq!(
        status["skipped"],
        serde_json::json!([
            {"file": runs, "line": 2, "reason": "not UTF-8"},
            {"file": gates, "line": 2, "reason": "not UTF-8"},
        ])
    );
    let log = json_out(&chant_in(&a, &["run", "log", "rollout", "--json"], &[]));
    assert_eq!(log["runs"].as_array().unwrap().len(), 2);
    assert_eq!(log["skipped"][0]["line"], 2);
    let plain = chant_in(&a, &["run", "log", "rollout"], &[]);
    assert!(
        stderr(&plain).contains(&format!(
            "warning: skipped line 2 of {runs} on chant/lifecycle: not UTF-8"
        )),
        "{}",
        stderr(&plain)
    );

    // Over MCP: op-status carries the list, op-report says it.
    let mut s = mcp_testkit::ServerProcess::spawn_in(BIN, ["serve", "mcp"], &a);
    s.initialize(Some("2025-11-25"));
    let r = s.request(
        2,
        "tools/call",
        serde_json::json!({"name": "op-status", "arguments": {"name": "rollout"}}),
    );
    assert_eq!(
        r["result"]["structuredContent"]["skipped"][1],
        serde_json::json!({"file": gates, "line": 2, "reason": "not UTF-8"})
    );
    let r = s.request(
        3,
        "tools/call",
        serde_json::json!({"name": "op-report", "arguments": {"name": "rollout"}}),
    );
    let text = mcp_testkit::tool_text(&r["result"]);
    assert!(
        text.contains("## Skipped ledger lines")
            && text.contains(&format!("- `{runs}` line 2: not UTF-8")),
        "{text}"
    );
    // The gate still reads its approval: another run passes it.
    let again = chant_in(&a, &["run", "rollout", "--json"], &[]);
    assert!(again.status.success(), "{}", stderr(&again));
}

fn now_ms() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_millis() as u64
}

/// A pending fact as a run writes it, reached an hour ago, standing for a day.
fn pending_line(timestamp: &str, digest: &str) -> String {
    let expires = chant_ops::time::iso(now_ms() + 86_400_000);
    format!(
        r#"{{"expiresAt":"{expires}","gate":"ship-it","kind":"pending","op":"rollout","origin":"cli","planDigest":"{digest}","timestamp":"{timestamp}","version":1}}"#
    )
}

fn an_hour_ago() -> String {
    chant_ops::time::iso(now_ms() - 3_600_000)
}

#[test]
fn a_pending_fact_with_an_unreadable_time_blocks_nothing() {
    let (_dir, _origin, a) = team();
    let gates = "_gates/rollout.jsonl";
    put(
        &a,
        gates,
        pending_line("zzzz", &format!("sha256:{}", "0".repeat(64))).as_bytes(),
    );
    // Before, "zzzz" sorted after every real time: the gate stood forever, approvals after it
    // never counted and --expire could not end it. Now the line is skipped, and said.
    let run = chant_in(&a, &["run", "rollout"], &[]);
    assert!(stderr(&run).contains("waiting at gate"), "{}", stderr(&run));
    let ok = chant_in(
        &a,
        &["approve", "rollout", "ship-it", "--actor", "sam"],
        &[],
    );
    assert!(ok.status.success(), "{}", stderr(&ok));
    let passed = chant_in(&a, &["run", "rollout", "--json"], &[]);
    assert!(passed.status.success(), "{}", stderr(&passed));
    let status = json_out(&chant_in(&a, &["run", "status", "rollout", "--json"], &[]));
    assert_eq!(
        status["skipped"],
        serde_json::json!([{"file": gates, "line": 1, "reason": "timestamp is not an ISO 8601 time: \"zzzz\""}])
    );
}

#[test]
fn a_malformed_plan_digest_is_never_copied_into_an_approval() {
    let (_dir, _origin, a) = team();
    let gates = "_gates/rollout.jsonl";
    let line = pending_line(&an_hour_ago(), "md5:abc");
    put(&a, gates, line.as_bytes());
    let want = "Gate \"ship-it\" on \"rollout\" has a pending fact whose planDigest is not a plan digest (\"sha256:\" and 64 hex characters), got \"md5:abc\"; it is not copied into an approval. Record a new pending fact with `chant run rollout`, or end this one with `chant approve rollout ship-it --expire`";
    let refused = chant_in(
        &a,
        &["approve", "rollout", "ship-it", "--actor", "sam"],
        &[],
    );
    assert!(!refused.status.success());
    assert_eq!(stderr(&refused).trim(), format!("error: {want}"));
    let mut s = mcp_testkit::ServerProcess::spawn_in(BIN, ["serve", "mcp"], &a);
    s.initialize(Some("2025-11-25"));
    let r = s.request(
        2,
        "tools/call",
        serde_json::json!({"name": "op-approve", "arguments": {"name": "rollout", "gate": "ship-it"}}),
    );
    assert_eq!(r["result"]["isError"], true);
    assert_eq!(
        mcp_testkit::tool_text(&r["result"]),
        format!("Error: {want}")
    );
    assert_eq!(
        ledger_bytes(&a, gates),
        line.as_bytes(),
        "nothing was recorded"
    );
    assert_eq!(gate_lines(&a).len(), 1, "nothing was recorded anywhere");
}

/// An ed25519 key for `who` in `dir`, and its allowed-signers line.
fn keypair(dir: &Path, who: &str) -> (PathBuf, String) {
    let key = dir.join(format!("{who}_key"));
    let ok = Command::new("ssh-keygen")
        .args(["-q", "-t", "ed25519", "-N", "", "-C", who, "-f"])
        .arg(&key)
        .status()
        .unwrap();
    assert!(ok.success());
    let public = std::fs::read_to_string(key.with_extension("pub")).unwrap();
    let mut p = public.split_whitespace();
    (
        key,
        format!(
            "{who}@example.com {} {}\n",
            p.next().unwrap(),
            p.next().unwrap()
        ),
    )
}

fn approval_record(run: &std::process::Output) -> Value {
    let v: Value = serde_json::from_slice(&run.stdout).unwrap();
    v["records"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["fn"] == "gate:ship-it")
        .cloned()
        .unwrap()
}

#[test]
fn under_a_signers_file_only_a_sealed_approval_passes_and_a_forgery_is_told_apart() {
    let (dir, _origin, a) = team();
    let (sam_key, sam_line) = keypair(dir.path(), "sam");
    let (eve_key, _) = keypair(dir.path(), "eve");

    // Without a signers file: every approval passes, and each output says whether it is signed.
    chant_in(&a, &["run", "rollout"], &[]);
    let plain = chant_in(
        &a,
        &["approve", "rollout", "ship-it", "--actor", "sam"],
        &[],
    );
    assert!(
        stderr(&plain).contains("as sam (unsigned)"),
        "{}",
        stderr(&plain)
    );
    let passed = chant_in(&a, &["run", "rollout", "--json"], &[]);
    assert!(passed.status.success(), "{}", stderr(&passed));
    assert_eq!(approval_record(&passed)["approval"]["attested"], false);
    assert_eq!(approval_record(&passed)["approval"]["signed"], false);

    // The team lists sam's key on main (not just in the working tree).
    std::fs::create_dir_all(a.join(".chant")).unwrap();
    std::fs::write(a.join(".chant/allowed_signers"), &sam_line).unwrap();
    git(&a, &["add", ".chant/allowed_signers"]);
    git(&a, &["commit", "-q", "-m", "signers"]);
    git(&a, &["branch", "-M", "main"]);
    // A new plan (the Op changed), so a new approval is needed.
    std::fs::write(
        a.join("ops/rollout.op.ts"),
        ROLLOUT.replace("echo staging", "echo staging v2"),
    )
    .unwrap();
    let gated = chant_in(&a, &["run", "rollout"], &[]);
    assert!(
        stderr(&gated).contains("waiting at gate"),
        "{}",
        stderr(&gated)
    );

    // A forgery with git plumbing: a cli resolution naming alice, unsigned, filed where
    // chant files it.
    let pending = gate_lines(&a).last().cloned().unwrap();
    let forged = serde_json::json!({"version": 1, "kind": "resolution", "op": "rollout", "gate": "ship-it",
        "resolvedBy": "alice", "timestamp": chant_ops::time::iso(now_ms()), "origin": "cli",
        "planDigest": pending["planDigest"]});
    forge(&a, &forged);
    let refused = chant_in(&a, &["run", "rollout", "--json"], &[]);
    assert_eq!(refused.status.code(), Some(3), "{}", stderr(&refused));
    let step = approval_record(&refused);
    assert_eq!(
        step["refusal"],
        "the resolution by alice is unattested (unsigned), and .chant/allowed_signers at main lets only signed approvals pass; approve with `chant approve rollout ship-it --sign`"
    );

    // --sign without a key configured is refused with the remedy, nothing written.
    let before = ledger_head(&a);
    let no_key = chant_in(
        &a,
        &["approve", "rollout", "ship-it", "--actor", "sam", "--sign"],
        &[],
    );
    assert!(!no_key.status.success());
    assert!(
        stderr(&no_key).contains("--sign seals the approval with git's SSH signing key, and gpg.format is not ssh: set one with `git config gpg.format ssh`"),
        "{}",
        stderr(&no_key)
    );
    assert_eq!(ledger_head(&a), before);

    // A key nobody listed signs: recorded, but not believed.
    git(&a, &["config", "gpg.format", "ssh"]);
    git(
        &a,
        &["config", "user.signingkey", eve_key.to_str().unwrap()],
    );
    let eve = chant_in(
        &a,
        &["approve", "rollout", "ship-it", "--actor", "sam", "--sign"],
        &[],
    );
    assert!(eve.status.success(), "{}", stderr(&eve));
    assert!(
        stderr(&eve).contains(
            "(signed, but unattested: signed by a key not listed in .chant/allowed_signers at main)"
        ),
        "{}",
        stderr(&eve)
    );
    let still = chant_in(&a, &["run", "rollout", "--json"], &[]);
    assert_eq!(still.status.code(), Some(3), "{}", stderr(&still));

    // Over MCP: recorded as unsigned, and the reply says it will not pass.
    let mut s = mcp_testkit::ServerProcess::spawn_in(BIN, ["serve", "mcp"], &a);
    s.initialize(Some("2025-11-25"));
    let r = s.request(
        2,
        "tools/call",
        serde_json::json!({"name": "op-approve", "arguments": {"name": "rollout", "gate": "ship-it"}}),
    );
    let reply = &r["result"]["structuredContent"];
    assert_eq!(reply["attested"], false, "{r}");
    assert_eq!(reply["signed"], false);
    assert_eq!(reply["unattested"], "unsigned");
    drop(s);
    let still = chant_in(&a, &["run", "rollout", "--json"], &[]);
    assert_eq!(still.status.code(), Some(3), "{}", stderr(&still));

    // Sam's sealed approval passes, and says by whom.
    git(
        &a,
        &["config", "user.signingkey", sam_key.to_str().unwrap()],
    );
    let sam = chant_in(
        &a,
        &["approve", "rollout", "ship-it", "--actor", "sam", "--sign"],
        &[],
    );
    assert!(sam.status.success(), "{}", stderr(&sam));
    assert!(
        stderr(&sam).contains("as sam (signed and verified as sam@example.com)"),
        "{}",
        stderr(&sam)
    );
    let passed = chant_in(&a, &["run", "rollout", "--json"], &[]);
    assert!(passed.status.success(), "{}", stderr(&passed));
    let approval = &approval_record(&passed)["approval"];
    assert_eq!(approval["attested"], true);
    assert_eq!(approval["signedBy"], "sam@example.com");

    // Editing the sealed line afterwards (another approver name) breaks the seal.
    let files = ledger_files(&a, "_gates/rollout/");
    let gates = files.last().unwrap().as_str();
    let text = String::from_utf8(ledger_bytes(&a, gates)).unwrap();
    assert!(text.contains("\"resolvedBy\":\"sam\""), "{text}");
    put(
        &a,
        gates,
        text.replace("\"resolvedBy\":\"sam\"", "\"resolvedBy\":\"bob\"")
            .as_bytes(),
    );
    let broken = chant_in(&a, &["run", "rollout", "--json"], &[]);
    assert_eq!(broken.status.code(), Some(3), "{}", stderr(&broken));

    // The signers file in the working tree only (an agent's edit) changes nothing.
    std::fs::write(a.join(".chant/allowed_signers"), "").unwrap();
    let status = chant_in(&a, &["run", "rollout", "--json"], &[]);
    assert_eq!(
        status.status.code(),
        Some(3),
        "the policy is read at main, not the working tree"
    );
}

#[test]
fn an_attested_gate_without_signers_at_base_says_so() {
    let (_dir, _origin, a) = team();
    std::fs::write(
        a.join("ops/rollout.op.ts"),
        ROLLOUT.replace("{ timeout: \"4h\" }", "{ timeout: \"4h\", attested: true }"),
    )
    .unwrap();
    let out = chant_in(&a, &["run", "rollout", "--json"], &[]);
    assert!(!out.status.success());
    let step = approval_record(&out);
    assert_eq!(
        step["error"],
        "gate \"ship-it\" declares attested: true, and .chant/allowed_signers is not on origin/HEAD, main or master, so no approval could be verified; commit the approvers' public keys there (ssh-keygen's allowed-signers format)"
    );
}

/// A team whose main lists sam's key, with an Op run once (gated) and sam's key configured
/// for signing: `(dir, clone, sam's key, eve's key, sam's signers line)`.
fn signed_team() -> (tempfile::TempDir, PathBuf, PathBuf, PathBuf, String) {
    let (dir, _origin, a) = team();
    let (sam_key, sam_line) = keypair(dir.path(), "sam");
    let (eve_key, _) = keypair(dir.path(), "eve");
    std::fs::create_dir_all(a.join(".chant")).unwrap();
    std::fs::write(a.join(".chant/allowed_signers"), &sam_line).unwrap();
    git(&a, &["add", ".chant/allowed_signers"]);
    git(&a, &["commit", "-q", "-m", "signers"]);
    git(&a, &["branch", "-M", "main"]);
    git(&a, &["config", "gpg.format", "ssh"]);
    git(
        &a,
        &["config", "user.signingkey", sam_key.to_str().unwrap()],
    );
    let gated = chant_in(&a, &["run", "rollout"], &[]);
    assert!(
        stderr(&gated).contains("waiting at gate"),
        "{}",
        stderr(&gated)
    );
    (dir, a, sam_key, eve_key, sam_line)
}

#[test]
fn a_sealed_approval_answers_one_pending_fact_and_cannot_be_replayed() {
    let (_dir, a, _sam, _eve, _) = signed_team();
    let sam = chant_in(
        &a,
        &["approve", "rollout", "ship-it", "--actor", "sam", "--sign"],
        &[],
    );
    assert!(sam.status.success(), "{}", stderr(&sam));
    let lines = gate_lines(&a);
    let (pending, resolution) = (&lines[0], &lines[1]);
    assert!(
        resolution["answers"]
            .as_str()
            .unwrap()
            .starts_with("sha256:")
    );
    // The replay: a forged pending fact for the same plan, stamped at the resolution's time
    // with a far expiry, so the old sealed resolution would count for it.
    let mut forged = pending.clone();
    forged["timestamp"] = resolution["timestamp"].clone();
    forged["expiresAt"] = serde_json::json!(chant_ops::time::iso(now_ms() + 86_400_000));
    forge(&a, &forged);
    forge(&a, resolution);
    let run = chant_in(&a, &["run", "rollout", "--json"], &[]);
    assert_eq!(run.status.code(), Some(3), "{}", stderr(&run));
    assert_eq!(
        approval_record(&run)["refusal"],
        "the resolution by sam is unattested (its seal answers another pending fact (an approval copied from another run)), and .chant/allowed_signers at main lets only signed approvals pass; approve with `chant approve rollout ship-it --sign`"
    );
}

#[test]
fn replace_refs_and_a_planted_ssh_keygen_do_not_change_the_verdict() {
    let (dir, a, sam, eve, sam_line) = signed_team();
    // git replace: make the signers blob at main read as eve's key under sam's name.
    let old = git(&a, &["rev-parse", "main:.chant/allowed_signers"]);
    let eve_pub = std::fs::read_to_string(eve.with_extension("pub")).unwrap();
    let mut p = eve_pub.split_whitespace();
    let eve_line = format!(
        "sam@example.com {} {}\n",
        p.next().unwrap(),
        p.next().unwrap()
    );
    std::fs::write(dir.path().join("eve_signers"), &eve_line).unwrap();
    let new = git(
        &a,
        &[
            "hash-object",
            "-w",
            dir.path().join("eve_signers").to_str().unwrap(),
        ],
    );
    git(&a, &["replace", &old, &new]);
    git(&a, &["config", "user.signingkey", eve.to_str().unwrap()]);
    let forged = chant_in(
        &a,
        &["approve", "rollout", "ship-it", "--actor", "sam", "--sign"],
        &[],
    );
    assert!(
        stderr(&forged).contains("signed, but unattested: signed by a key not listed"),
        "{}",
        stderr(&forged)
    );
    let run = chant_in(&a, &["run", "rollout", "--json"], &[]);
    assert_eq!(run.status.code(), Some(3), "replace refs are not followed");
    // GIT_REPLACE_REF_BASE is a redirect like GIT_DIR.
    let hidden = chant_in(
        &a,
        &["run", "rollout"],
        &[("GIT_REPLACE_REF_BASE", "refs/hidden/")],
    );
    assert!(
        stderr(&hidden).contains("GIT_REPLACE_REF_BASE is set in the environment"),
        "{}",
        stderr(&hidden)
    );
    git(&a, &["replace", "-d", &old]);

    // A line with options is judged by ssh-keygen: the system's, not one planted on PATH.
    std::fs::write(
        a.join(".chant/allowed_signers"),
        sam_line.replacen(' ', " namespaces=\"chant-approval\" ", 1),
    )
    .unwrap();
    git(&a, &["commit", "-q", "-am", "options"]);
    let fake = dir.path().join("fakebin");
    std::fs::create_dir_all(&fake).unwrap();
    std::fs::write(fake.join("ssh-keygen"), "#!/bin/sh\nexit 0\n").unwrap();
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(
        fake.join("ssh-keygen"),
        std::fs::Permissions::from_mode(0o755),
    )
    .unwrap();
    // A resolution carrying a real seal of sam's, made over some other text (copied from
    // elsewhere): sam's key is listed, so only the verification itself can refuse it.
    let pending = gate_lines(&a)[0].clone();
    let mut child = Command::new("ssh-keygen")
        .args(["-Y", "sign", "-q", "-n", "chant-approval", "-f"])
        .arg(&sam)
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    use std::io::Write as _;
    child
        .stdin
        .take()
        .unwrap()
        .write_all(b"something else sam signed")
        .unwrap();
    let copied = String::from_utf8(child.wait_with_output().unwrap().stdout).unwrap();
    let answers = format!(
        "sha256:{}",
        canon::sha256_hex(canon::to_canonical_compact(&pending).as_bytes())
    );
    let forged = serde_json::json!({"version": 1, "kind": "resolution", "op": "rollout", "gate": "ship-it",
        "resolvedBy": "sam", "timestamp": chant_ops::time::iso(now_ms()), "origin": "cli",
        "planDigest": pending["planDigest"], "answers": answers,
        "signature": {"format": "ssh", "namespace": "chant-approval", "signature": copied}});
    forge(&a, &forged);
    let path = format!("{}:{}", fake.display(), std::env::var("PATH").unwrap());
    let run = chant_in(
        &a,
        &["run", "rollout", "--json"],
        &[("PATH", path.as_str())],
    );
    assert_eq!(
        run.status.code(),
        Some(3),
        "eve's seal is refused by the real ssh-keygen: {}",
        stderr(&run)
    );
}

#[test]
fn a_forged_pending_fact_neither_shadows_the_run_nor_gets_a_person_to_approve_its_plan() {
    let (_dir, a, _sam, _eve, _) = signed_team();
    let gates = "_gates/rollout.jsonl";
    let genuine = gate_lines(&a)[0].clone();
    let other_plan = format!("sha256:{}", "b".repeat(64));
    // Dated in the future: it would be "the latest pending fact" for good.
    let mut future = genuine.clone();
    future["timestamp"] = serde_json::json!("2099-01-01T00:00:00.000Z");
    future["expiresAt"] = serde_json::json!("2099-01-02T00:00:00.000Z");
    future["planDigest"] = serde_json::json!(other_plan);
    // Where chant would file it, and in the legacy file older ledgers hold facts in.
    forge(&a, &future);
    put(&a, gates, future.to_string().as_bytes());
    let ok = chant_in(
        &a,
        &["approve", "rollout", "ship-it", "--actor", "sam", "--sign"],
        &[],
    );
    assert!(ok.status.success(), "{}", stderr(&ok));
    assert!(
        String::from_utf8_lossy(&ok.stdout).contains(genuine["planDigest"].as_str().unwrap()),
        "the person approved the run's plan, not the forged one"
    );
    let run = chant_in(&a, &["run", "rollout", "--json"], &[]);
    assert!(run.status.success(), "{}", stderr(&run));

    // Plausibly dated, for a plan that is not the Op as checked out: refused, with why.
    let mut now = genuine.clone();
    now["timestamp"] = serde_json::json!(chant_ops::time::iso(now_ms()));
    now["expiresAt"] = serde_json::json!(chant_ops::time::iso(now_ms() + 3_600_000));
    now["planDigest"] = serde_json::json!(other_plan);
    forge(&a, &now);
    let refused = chant_in(
        &a,
        &["approve", "rollout", "ship-it", "--actor", "sam", "--sign"],
        &[],
    );
    assert!(!refused.status.success());
    let mine = genuine["planDigest"].as_str().unwrap();
    assert_eq!(
        stderr(&refused).trim(),
        format!(
            "error: Gate \"ship-it\" on \"rollout\" waits for plan {other_plan}, but rollout as checked out here is plan {mine} (environment local): approving would approve a plan you have not seen. Check out what the run ran and approve again, or approve that plan by name with `--plan {other_plan}` once you have reviewed it"
        )
    );
}

#[test]
fn a_signer_that_writes_no_signature_is_refused() {
    let (dir, a, _sam, _eve, _) = signed_team();
    // An ssh-keygen that exits 0 and prints nothing (a broken install, a wrapper): --sign must
    // not record an approval sealed with nothing.
    let fake = dir.path().join("fakebin");
    std::fs::create_dir_all(&fake).unwrap();
    std::fs::write(
        fake.join("ssh-keygen"),
        "#!/bin/sh\ncat >/dev/null\nexit 0\n",
    )
    .unwrap();
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(
        fake.join("ssh-keygen"),
        std::fs::Permissions::from_mode(0o755),
    )
    .unwrap();
    let path = format!("{}:{}", fake.display(), std::env::var("PATH").unwrap());
    let before = ledger_head(&a);
    let out = chant_in(
        &a,
        &["approve", "rollout", "ship-it", "--actor", "sam", "--sign"],
        &[("PATH", path.as_str())],
    );
    assert!(!out.status.success());
    assert!(
        stderr(&out).contains("--sign could not sign with user.signingkey"),
        "{}",
        stderr(&out)
    );
    assert_eq!(ledger_head(&a), before, "nothing recorded");
}

/// `git <args>` in `dir` with `input` on stdin: its output, trimmed.
fn git_in(dir: &Path, args: &[&str], input: &str) -> String {
    let mut child = Command::new("git")
        .args(args)
        .current_dir(dir)
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    use std::io::Write as _;
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

/// Rewrites the ledger of `dir` in the layout earlier releases wrote: every run a line of
/// `<env>/runs__<op>.jsonl`, every gate fact a line of `_gates/<op>.jsonl`, nothing else.
fn to_legacy_layout(dir: &Path, extra_run_line: &str, extra_gate_line: &str) {
    let runs: Vec<String> = ledger_files(dir, "local/runs/rollout/")
        .iter()
        .flat_map(|p| {
            String::from_utf8(ledger_bytes(dir, p))
                .unwrap()
                .lines()
                .map(str::to_owned)
                .collect::<Vec<_>>()
        })
        .chain([extra_run_line.to_owned()])
        .collect();
    let facts: Vec<String> = gate_lines(dir)
        .iter()
        .map(canon::to_canonical_compact)
        .chain([extra_gate_line.to_owned()])
        .collect();
    let l = gitledger::Ledger::open(dir).unwrap();
    let hash = |bytes: &str| git_in(dir, &["hash-object", "-w", "--stdin"], bytes);
    let mktree = |listing: String| git_in(dir, &["mktree"], &listing);
    let local = mktree(format!(
        "100644 blob {}\truns__rollout.jsonl\n",
        hash(&runs.join("\n"))
    ));
    let gates = mktree(format!(
        "100644 blob {}\trollout.jsonl\n",
        hash(&facts.join("\n"))
    ));
    let root = mktree(format!(
        "040000 tree {gates}\t_gates\n040000 tree {local}\tlocal\n"
    ));
    let commit = git(dir, &["commit-tree", &root, "-m", "legacy layout"]);
    git(dir, &["update-ref", "refs/heads/chant/lifecycle", &commit]);
    // The team's copy too: the remote holds what an earlier release pushed.
    git(
        dir,
        &[
            "push",
            "-q",
            "-f",
            "origin",
            "chant/lifecycle:chant/lifecycle",
        ],
    );
    git(dir, &["fetch", "-q", "origin"]);
    assert!(l.exists().unwrap());
}

#[test]
fn a_ledger_in_the_earlier_layout_keeps_working_and_grows_in_the_new_one() {
    let (_dir, _origin, a) = team();
    // A gated run and its approval, then the whole ledger as an earlier release wrote it,
    // with one bad line in each file.
    chant_in(&a, &["run", "rollout"], &[]);
    let ok = chant_in(
        &a,
        &["approve", "rollout", "ship-it", "--actor", "sam"],
        &[],
    );
    assert!(ok.status.success(), "{}", stderr(&ok));
    to_legacy_layout(&a, "{\"version\":2}", "not json");
    assert_eq!(ledger_files(&a, "local/runs/"), Vec::<String>::new());

    let status = json_out(&chant_in(&a, &["run", "status", "rollout", "--json"], &[]));
    assert_eq!(status["state"], "gated", "{status}");
    assert_eq!(
        status["skipped"],
        serde_json::json!([
            {"file": "local/runs__rollout.jsonl", "line": 2, "reason": "version is not 1"},
            {"file": "_gates/rollout.jsonl", "line": 3, "reason": "not JSON (expected ident at line 1 column 2)"},
        ])
    );
    // The approval in the legacy file passes the gate; the new run is one file of its own.
    let passed = chant_in(&a, &["run", "rollout", "--json"], &[]);
    assert!(passed.status.success(), "{}", stderr(&passed));
    assert_eq!(approval_record(&passed)["approval"]["resolvedBy"], "sam");
    assert_eq!(ledger_files(&a, "local/runs/rollout/").len(), 1);
    assert_eq!(
        ledger_bytes(&a, "local/runs__rollout.jsonl")
            .split(|b| *b == b'\n')
            .count(),
        2,
        "the legacy file is read, never written"
    );
    let status = json_out(&chant_in(&a, &["run", "status", "rollout", "--json"], &[]));
    assert_eq!(status["state"], "completed");
    let log = json_out(&chant_in(&a, &["run", "log", "rollout", "--json"], &[]));
    let states: Vec<&str> = log["runs"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["status"].as_str().unwrap())
        .collect();
    assert_eq!(states, ["ok", "gated"], "newest first, both layouts");
    // A new pending fact and its expiry go to the new layout; the gate reads both.
    let expire = chant_in(&a, &["approve", "rollout", "ship-it", "--expire"], &[]);
    assert!(expire.status.success(), "{}", stderr(&expire));
    assert_eq!(gate_lines(&a).len(), 3);
    assert_eq!(ledger_files(&a, "_gates/rollout/").len(), 1);
    let mut s = mcp_testkit::ServerProcess::spawn_in(BIN, ["serve", "mcp"], &a);
    s.initialize(Some("2025-11-25"));
    let r = s.request(
        2,
        "tools/call",
        serde_json::json!({"name": "op-list", "arguments": {}}),
    );
    assert_eq!(
        r["result"]["structuredContent"]["ops"][0]["runState"],
        "completed"
    );
}
