//! A running `chant serve mcp` keeps what each Op file declared and what the ledger said, and
//! answers `op-list` from them while nothing they were read from changed. These tests change
//! each thing an answer depends on — a file's bytes (also behind an unchanged size and
//! mtime), a module it imports, which file an import finds, a symlink's target, the set of
//! files, the ledger's commit — and check the next call sees it.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

use mcp_testkit::ServerProcess;
use serde_json::{Value, json};

const BIN: &str = env!("CARGO_BIN_EXE_chant");

fn git(dir: &Path, args: &[&str]) {
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
}

fn op(name: &str, overview: &str) -> String {
    format!(
        "import {{ Op, phase, shell }} from \"@intentius/chant-lexicon-temporal\";\nexport default Op({{ name: \"{name}\", overview: \"{overview}\", phases: [phase(\"Run\", [shell(\"true\")])] }});\n"
    )
}

/// An Op whose overview comes from `./<from>`.
fn op_importing(name: &str, from: &str) -> String {
    format!(
        "import {{ Op, phase, shell }} from \"@intentius/chant-lexicon-temporal\";\nimport {{ overview }} from \"{from}\";\nexport default Op({{ name: \"{name}\", overview, phases: [phase(\"Run\", [shell(\"true\")])] }});\n"
    )
}

fn project() -> (tempfile::TempDir, PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().canonicalize().unwrap();
    git(&root, &["init", "-q", "-b", "main"]);
    for (k, v) in [("user.name", "T"), ("user.email", "t@example.com")] {
        git(&root, &["config", k, v]);
    }
    std::fs::create_dir_all(root.join("ops/lib")).unwrap();
    std::fs::write(
        root.join("chant.config.json"),
        r#"{"lexicons":["temporal"]}"#,
    )
    .unwrap();
    std::fs::write(root.join("ops/plain.op.ts"), op("plain", "one")).unwrap();
    std::fs::write(
        root.join("ops/shared.op.ts"),
        op_importing("shared", "./lib/words"),
    )
    .unwrap();
    std::fs::write(
        root.join("ops/lib/words.ts"),
        "export const overview = \"from words\";\n",
    )
    .unwrap();
    std::fs::write(root.join("ops/linked-a.ts"), op("linked", "target a")).unwrap();
    std::fs::write(root.join("ops/linked-b.ts"), op("linked", "target b")).unwrap();
    std::os::unix::fs::symlink("linked-a.ts", root.join("ops/linked.op.ts")).unwrap();
    git(&root, &["add", "."]);
    git(&root, &["commit", "-q", "-m", "p"]);
    (dir, root)
}

/// `name → (overview, runState)` of an `op-list`.
fn list(s: &mut ServerProcess, id: i64) -> std::collections::BTreeMap<String, (String, Value)> {
    let r = s.request(
        id,
        "tools/call",
        json!({"name": "op-list", "arguments": {}}),
    );
    let v = &r["result"]["structuredContent"];
    assert_eq!(v["errors"], json!([]), "{r}");
    v["ops"]
        .as_array()
        .unwrap()
        .iter()
        .map(|o| {
            (
                o["name"].as_str().unwrap().to_owned(),
                (
                    o["overview"].as_str().unwrap().to_owned(),
                    o["runState"].clone(),
                ),
            )
        })
        .collect()
}

fn overview(s: &mut ServerProcess, id: i64, name: &str) -> String {
    list(s, id)[name].0.clone()
}

/// Past the window in which a file's stat cannot yet stand for its content.
fn settle() {
    std::thread::sleep(Duration::from_millis(2_600));
}

#[test]
fn every_read_an_answer_depends_on_is_checked_again() {
    let (_d, root) = project();
    let mut s = ServerProcess::spawn_in(BIN, ["serve", "mcp"], &root);
    s.initialize(Some("2025-11-25"));
    let first = list(&mut s, 1);
    assert_eq!(first["plain"].0, "one");
    assert_eq!(first["shared"].0, "from words");
    assert_eq!(first["linked"].0, "target a");

    // Changed bytes, right away (inside the window: read and hashed).
    std::fs::write(root.join("ops/plain.op.ts"), op("plain", "two")).unwrap();
    assert_eq!(overview(&mut s, 2, "plain"), "two");
    // A module an Op imports.
    std::fs::write(
        root.join("ops/lib/words.ts"),
        "export const overview = \"other words\";\n",
    )
    .unwrap();
    assert_eq!(overview(&mut s, 3, "shared"), "other words");
    // Which file an import finds: `./lib/words` now finds `words` itself before `words.ts`.
    std::fs::write(
        root.join("ops/lib/words"),
        "export const overview = \"found first\";\n",
    )
    .unwrap();
    assert_eq!(overview(&mut s, 4, "shared"), "found first");
    // A symlink pointed elsewhere.
    std::fs::remove_file(root.join("ops/linked.op.ts")).unwrap();
    std::os::unix::fs::symlink("linked-b.ts", root.join("ops/linked.op.ts")).unwrap();
    assert_eq!(overview(&mut s, 5, "linked"), "target b");
    // Files added and removed.
    std::fs::write(root.join("ops/new.op.ts"), op("new", "added")).unwrap();
    assert_eq!(overview(&mut s, 6, "new"), "added");
    std::fs::remove_file(root.join("ops/new.op.ts")).unwrap();
    assert!(!list(&mut s, 7).contains_key("new"));

    // Past the window, stats stand for content: a rewrite that keeps the size and the mtime
    // (what `touch -r` restores) still changes ctime, which no one can set back.
    settle();
    assert_eq!(overview(&mut s, 8, "plain"), "two");
    assert_eq!(overview(&mut s, 9, "plain"), "two");
    let file = root.join("ops/plain.op.ts");
    let mtime = std::fs::metadata(&file).unwrap().modified().unwrap();
    std::fs::write(&file, op("plain", "six")).unwrap();
    std::fs::File::options()
        .write(true)
        .open(&file)
        .unwrap()
        .set_modified(mtime)
        .unwrap();
    assert_eq!(std::fs::metadata(&file).unwrap().modified().unwrap(), mtime);
    assert_eq!(overview(&mut s, 10, "plain"), "six");

    // The ledger: a run recorded by another process shows, in and past the window.
    assert_eq!(list(&mut s, 11)["plain"].1, Value::Null);
    let run = Command::new(BIN)
        .args(["run", "plain"])
        .current_dir(&root)
        .output()
        .unwrap();
    assert!(
        run.status.success(),
        "{}",
        String::from_utf8_lossy(&run.stderr)
    );
    assert_eq!(list(&mut s, 12)["plain"].1, "completed");
    settle();
    assert_eq!(list(&mut s, 13)["plain"].1, "completed");
    assert_eq!(list(&mut s, 14)["shared"].1, Value::Null);
    let run = Command::new(BIN)
        .args(["run", "shared"])
        .current_dir(&root)
        .output()
        .unwrap();
    assert!(run.status.success());
    assert_eq!(list(&mut s, 15)["shared"].1, "completed");
}

#[test]
fn a_file_that_fails_is_evaluated_every_time_and_never_kept() {
    let (_d, root) = project();
    let mut s = ServerProcess::spawn_in(BIN, ["serve", "mcp"], &root);
    s.initialize(Some("2025-11-25"));
    std::fs::write(root.join("ops/broken.op.ts"), "export default {").unwrap();
    let call = |s: &mut ServerProcess, id| {
        s.request(
            id,
            "tools/call",
            json!({"name": "op-list", "arguments": {}}),
        )["result"]["structuredContent"]
            .clone()
    };
    let r = call(&mut s, 1);
    assert_eq!(r["errors"].as_array().unwrap().len(), 1, "{r}");
    assert_eq!(call(&mut s, 2)["errors"], r["errors"], "still said");
    std::fs::write(root.join("ops/broken.op.ts"), op("fixed", "fixed now")).unwrap();
    let r = call(&mut s, 3);
    assert_eq!(r["errors"], json!([]));
    assert!(
        r["ops"]
            .as_array()
            .unwrap()
            .iter()
            .any(|o| o["name"] == "fixed")
    );
}

#[test]
fn no_op_file_changes_what_another_declares() {
    let (_d, root) = project();
    std::fs::write(
        root.join("ops/lib/shared.ts"),
        "export const shared = { text: \"safe\" };\n",
    )
    .unwrap();
    std::fs::write(
        root.join("ops/a.op.ts"),
        "import { Op, phase, shell } from \"@intentius/chant-lexicon-temporal\";\nimport { shared } from \"./lib/shared\";\nexport default Op({ name: \"a\", overview: shared.text + \" \" + \"x\".toUpperCase(), phases: [phase(\"Run\", [shell(\"true\")])] });\n",
    )
    .unwrap();
    // Walked before a.op.ts: mutates the module a imports, and a built-in a uses.
    let meddler = "import { Op, phase, shell } from \"@intentius/chant-lexicon-temporal\";\nimport { shared } from \"./lib/shared\";\nshared.text = \"EVIL\";\nString.prototype.toUpperCase = function () { return \"PATCHED\"; };\nexport default Op({ name: \"meddler\", overview: \"m\", phases: [phase(\"Run\", [shell(\"true\")])] });\n";
    std::fs::write(root.join("ops/0-meddler.op.ts"), meddler).unwrap();
    let mut warm = ServerProcess::spawn_in(BIN, ["serve", "mcp"], &root);
    warm.initialize(Some("2025-11-25"));
    assert_eq!(overview(&mut warm, 1, "a"), "safe X");
    // The meddler changes; a's files did not: a declares what it declared, as a fresh
    // evaluation (a new server, the CLI) says too.
    std::fs::write(
        root.join("ops/0-meddler.op.ts"),
        meddler.replace("shared.text = \"EVIL\";", ""),
    )
    .unwrap();
    assert_eq!(overview(&mut warm, 2, "a"), "safe X");
    let mut cold = ServerProcess::spawn_in(BIN, ["serve", "mcp"], &root);
    cold.initialize(Some("2025-11-25"));
    assert_eq!(overview(&mut cold, 1, "a"), "safe X");
}

#[test]
fn jobs_one_op_file_leaves_queued_never_reach_the_next() {
    let (_d, root) = project();
    // Walked first: holds 250 MiB through a promise chain that re-queues itself forever.
    std::fs::write(
        root.join("ops/0-chain.op.ts"),
        "import { Op, phase, shell } from \"@intentius/chant-lexicon-temporal\";\nconst big: any[] = [];\nfor (let i = 0; i < 250; i++) big.push(new Uint8Array(1 << 20));\nconst keep = () => { big.length; Promise.resolve().then(keep); };\nkeep();\nexport default Op({ name: \"chain\", overview: \"x\", phases: [phase(\"Run\", [shell(\"true\")])] });\n",
    )
    .unwrap();
    // An ordinary Op that needs 100 MiB of its own.
    std::fs::write(
        root.join("ops/1-big.op.ts"),
        "import { Op, phase, shell } from \"@intentius/chant-lexicon-temporal\";\nconst mine: any[] = [];\nfor (let i = 0; i < 100; i++) mine.push(new Uint8Array(1 << 20));\nexport default Op({ name: \"big\", overview: \"fits\", phases: [phase(\"Run\", [shell(\"true\")])] });\n",
    )
    .unwrap();
    let mut s = ServerProcess::spawn_in(BIN, ["serve", "mcp"], &root);
    s.initialize(Some("2025-11-25"));
    let ops = list(&mut s, 1);
    assert_eq!(ops["big"].0, "fits", "{ops:?}");
    assert_eq!(ops["chain"].0, "x");
}
