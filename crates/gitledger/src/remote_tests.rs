//! The ledger as one copy of a shared branch: fresh clones, two clones that both moved,
//! concurrent pushers, shallow clones, and refs or trees that are not a ledger.

use super::*;

fn git(dir: &Path, args: &[&str]) -> String {
    let out = Command::new("git")
        .args(args)
        .current_dir(dir)
        .env("GIT_AUTHOR_NAME", "t")
        .env("GIT_AUTHOR_EMAIL", "t@t")
        .env("GIT_COMMITTER_NAME", "t")
        .env("GIT_COMMITTER_EMAIL", "t@t")
        .stdin(Stdio::null())
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "git {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).trim().to_owned()
}

/// `git <args>` in `dir` with `input` on stdin: its output, trimmed.
fn git_in(dir: &Path, args: &[&str], input: &str) -> String {
    let mut child = Command::new("git")
        .args(args)
        .current_dir(dir)
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

/// A bare `origin` with a main branch, and a first clone of it.
fn origin() -> (tempfile::TempDir, PathBuf, PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let origin = dir.path().join("origin.git");
    git(dir.path(), &["init", "-q", "--bare", "origin.git"]);
    git(dir.path(), &["clone", "-q", "origin.git", "a"]);
    let a = dir.path().join("a");
    git(&a, &["commit", "-q", "--allow-empty", "-m", "init"]);
    git(&a, &["push", "-q", "origin", "HEAD"]);
    (dir, origin, a)
}

fn clone(dir: &Path, name: &str, extra: &[&str]) -> PathBuf {
    let mut args = vec!["clone", "-q"];
    args.extend(extra);
    let url = format!("file://{}", dir.join("origin.git").display());
    args.extend([url.as_str(), name]);
    git(dir, &args);
    dir.join(name)
}

fn text(ledger: &Ledger, path: &str) -> String {
    String::from_utf8(ledger.read(path).unwrap().unwrap_or_default()).unwrap()
}

fn on_origin(origin: &Path, path: &str) -> String {
    git(origin, &["cat-file", "-p", &format!("{BRANCH}:{path}")])
}

#[test]
fn a_fresh_clone_builds_on_the_remote_and_drops_nothing() {
    let (dir, origin, a) = origin();
    let la = Ledger::open(&a).unwrap();
    la.append_line("_gates/o.jsonl", r#"{"timestamp":"1","n":1}"#, "pending")
        .unwrap();
    let first = la.head().unwrap().unwrap();
    assert_eq!(la.publish().unwrap().as_deref(), Some("origin"));

    // A normal clone: origin/chant/lifecycle, no local branch.
    let b = clone(dir.path(), "b", &[]);
    let lb = Ledger::open(&b).unwrap();
    assert!(
        lb.exists().unwrap(),
        "the remote's ledger is this clone's ledger"
    );
    assert_eq!(text(&lb, "_gates/o.jsonl"), r#"{"timestamp":"1","n":1}"#);
    lb.append_line("_gates/o.jsonl", r#"{"timestamp":"2","n":2}"#, "approve")
        .unwrap();
    lb.publish().unwrap();
    assert_eq!(
        on_origin(&origin, "_gates/o.jsonl"),
        "{\"timestamp\":\"1\",\"n\":1}\n{\"timestamp\":\"2\",\"n\":2}"
    );
    // Every earlier commit is still reachable from the remote's branch.
    git(&origin, &["merge-base", "--is-ancestor", &first, BRANCH]);
}

#[test]
fn two_clones_that_both_moved_are_merged_not_replaced() {
    let (dir, origin, a) = origin();
    let la = Ledger::open(&a).unwrap();
    la.append_line("_gates/o.jsonl", r#"{"timestamp":"1","p":1}"#, "pending")
        .unwrap();
    la.write("dev/snap.json", b"{\"v\":1}", "State snapshot")
        .unwrap();
    la.publish().unwrap();
    let b = clone(dir.path(), "b", &[]);
    let lb = Ledger::open(&b).unwrap();

    la.append_line("_gates/o.jsonl", r#"{"timestamp":"3","a":1}"#, "from a")
        .unwrap();
    la.append_line("dev/runs__o.jsonl", r#"{"started":"3"}"#, "run a")
        .unwrap();
    let a_tip = la.head().unwrap().unwrap();
    la.publish().unwrap();

    lb.append_line("_gates/o.jsonl", r#"{"timestamp":"2","b":1}"#, "from b")
        .unwrap();
    lb.write("dev/snap.json", b"{\"v\":2}", "State snapshot")
        .unwrap();
    let b_tip = lb.head().unwrap().unwrap();
    // b's push is refused as stale, so b fetches, merges and pushes the merge.
    lb.publish().unwrap();
    assert_eq!(
        on_origin(&origin, "_gates/o.jsonl"),
        "{\"timestamp\":\"1\",\"p\":1}\n{\"timestamp\":\"2\",\"b\":1}\n{\"timestamp\":\"3\",\"a\":1}"
    );
    assert_eq!(
        on_origin(&origin, "dev/runs__o.jsonl"),
        "{\"started\":\"3\"}"
    );
    // Only b changed the snapshot since the split: b's stands.
    assert_eq!(on_origin(&origin, "dev/snap.json"), "{\"v\":2}");
    for tip in [&a_tip, &b_tip] {
        git(&origin, &["merge-base", "--is-ancestor", tip, BRANCH]);
    }
    // a sees the merge once it fetches, without a write of its own.
    git(&a, &["fetch", "-q", "origin"]);
    assert_eq!(
        text(&la, "_gates/o.jsonl").lines().count(),
        3,
        "a fast-forwards its reads to the remote"
    );
}

#[test]
fn a_fetched_remote_and_unpushed_local_writes_are_read_together() {
    let (dir, _origin, a) = origin();
    let la = Ledger::open(&a).unwrap();
    la.append_line("g.jsonl", r#"{"timestamp":"1"}"#, "m")
        .unwrap();
    la.publish().unwrap();
    let b = clone(dir.path(), "b", &[]);
    let lb = Ledger::open(&b).unwrap();
    lb.append_line("g.jsonl", r#"{"timestamp":"2"}"#, "m")
        .unwrap();
    lb.publish().unwrap();
    la.append_line("g.jsonl", r#"{"timestamp":"3"}"#, "m")
        .unwrap();
    git(&a, &["fetch", "-q", "origin"]);
    let local_before = git(&a, &["rev-parse", REF]);
    assert_eq!(
        text(&la, "g.jsonl"),
        "{\"timestamp\":\"1\"}\n{\"timestamp\":\"2\"}\n{\"timestamp\":\"3\"}"
    );
    assert_eq!(
        git(&a, &["rev-parse", REF]),
        local_before,
        "reading moves no ref"
    );
}

#[test]
fn concurrent_pushers_from_two_clones_all_survive() {
    let (dir, origin, a) = origin();
    let la = Ledger::open(&a).unwrap();
    la.append_line("g.jsonl", r#"{"timestamp":"0"}"#, "m")
        .unwrap();
    la.publish().unwrap();
    let b = clone(dir.path(), "b", &[]);
    let per = 6;
    std::thread::scope(|s| {
        for (who, path) in [("a", &a), ("b", &b)] {
            s.spawn(move || {
                let l = Ledger::open(path).unwrap();
                for i in 0..per {
                    l.append_line(
                        "g.jsonl",
                        &format!(r#"{{"timestamp":"{i}","who":"{who}"}}"#),
                        "m",
                    )
                    .unwrap();
                    l.publish().unwrap();
                }
            });
        }
    });
    la.publish().unwrap();
    let all = on_origin(&origin, "g.jsonl");
    assert_eq!(all.lines().count(), 1 + 2 * per, "{all}");
    for who in ["a", "b"] {
        for i in 0..per {
            assert!(all.contains(&format!(r#"{{"timestamp":"{i}","who":"{who}"}}"#)));
        }
    }
}

#[test]
fn a_single_branch_shallow_clone_fetches_the_ledger_before_it_decides() {
    let (dir, _origin, a) = origin();
    let la = Ledger::open(&a).unwrap();
    la.append_line("g.jsonl", r#"{"timestamp":"1"}"#, "m")
        .unwrap();
    la.publish().unwrap();
    let s = clone(dir.path(), "s", &["--depth", "1"]);
    let ls = Ledger::open(&s).unwrap();
    assert!(!ls.exists().unwrap(), "a single-branch clone has no copy");
    assert_eq!(
        ls.fetch_if_unknown().unwrap(),
        Fetch::Fetched {
            remote: "origin".into()
        }
    );
    assert_eq!(text(&ls, "g.jsonl"), r#"{"timestamp":"1"}"#);
    assert_eq!(ls.fetch_if_unknown().unwrap(), Fetch::Known);
    // A remote without a ledger is said as such; a broken remote is a failure, not silence.
    let (_d2, _o2, a2) = origin();
    let l2 = Ledger::open(&a2).unwrap();
    assert_eq!(
        l2.fetch_if_unknown().unwrap(),
        Fetch::NotOnRemote {
            remote: "origin".into()
        }
    );
    git(&a2, &["remote", "set-url", "origin", "/nonexistent/x.git"]);
    assert!(matches!(
        l2.fetch_if_unknown().unwrap(),
        Fetch::Failed { .. }
    ));
}

#[test]
fn a_remote_that_refuses_is_reported_not_overwritten() {
    let (_dir, origin, a) = origin();
    let la = Ledger::open(&a).unwrap();
    la.append_line("g.jsonl", "1", "m").unwrap();
    // A hook that refuses every push (a protected branch on a forge says the same).
    let hook = origin.join("hooks/pre-receive");
    std::fs::write(&hook, "#!/bin/sh\necho protected >&2\nexit 1\n").unwrap();
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&hook, std::fs::Permissions::from_mode(0o755)).unwrap();
    let err = la.publish().unwrap_err().to_string();
    assert!(err.starts_with("origin refused chant/lifecycle: "), "{err}");
    assert!(err.contains("protected"), "{err}");
}

#[test]
fn a_ref_that_is_not_a_commit_is_named_with_its_fix() {
    let (_dir, _origin, a) = origin();
    let la = Ledger::open(&a).unwrap();
    for kind in ["blob", "tree"] {
        let sha = if kind == "blob" {
            git(&a, &["hash-object", "-w", "--stdin"])
        } else {
            git(&a, &["mktree"])
        };
        // git's update-ref refuses a non-commit under refs/heads; a hand-written ref file does not.
        std::fs::create_dir_all(a.join(".git/refs/heads/chant")).unwrap();
        std::fs::write(
            a.join(".git/refs/heads/chant/lifecycle"),
            format!("{sha}\n"),
        )
        .unwrap();
        let want = format!(
            "refs/heads/chant/lifecycle points at a {kind}, not a commit, so it is no ledger chant can read or extend; look at it with `git cat-file -p refs/heads/chant/lifecycle`, then point it back at the last ledger commit (`git update-ref refs/heads/chant/lifecycle <commit>`) or delete it (`git update-ref -d refs/heads/chant/lifecycle`)"
        );
        assert_eq!(la.read("g.jsonl").unwrap_err().to_string(), want);
        assert_eq!(
            la.append_line("g.jsonl", "x", "m").unwrap_err().to_string(),
            want
        );
        std::fs::remove_file(a.join(".git/refs/heads/chant/lifecycle")).unwrap();
    }
    // The remote-tracking copy is named the same way.
    let blob = git(&a, &["hash-object", "-w", "--stdin"]);
    git(
        &a,
        &["update-ref", "refs/remotes/origin/chant/lifecycle", &blob],
    );
    assert!(
        la.read("g.jsonl")
            .unwrap_err()
            .to_string()
            .starts_with("refs/remotes/origin/chant/lifecycle points at a blob")
    );
}

#[test]
fn a_tree_entry_named_dot_dot_is_refused_by_reads_and_writes() {
    let (_dir, _origin, a) = origin();
    let blob = git(&a, &["hash-object", "-w", "--stdin"]);
    let input = format!("100644 blob {blob}\t..\n100644 blob {blob}\tok.jsonl\n");
    let tree = git_in(&a, &["mktree"], &input);
    let commit = git(&a, &["commit-tree", &tree, "-m", "hostile"]);
    git(&a, &["update-ref", REF, &commit]);
    let la = Ledger::open(&a).unwrap();
    let want = format!(
        "chant/lifecycle at {commit} holds a tree entry named \"..\" (empty, `.`, `..` or with a `/`), which chant never writes and git refuses to check out; find the last good commit with `git log chant/lifecycle` and reset the branch to it with `git update-ref refs/heads/chant/lifecycle <commit>`"
    );
    // Reads go past a name chant never writes; writes refuse, saying why and what to do.
    assert_eq!(la.read("ok.jsonl").unwrap(), Some(Vec::new()));
    let mut reader = la.reader().unwrap();
    let names: Vec<String> = reader
        .tree("")
        .unwrap()
        .unwrap()
        .into_iter()
        .map(|e| e.name)
        .collect();
    assert_eq!(names, ["ok.jsonl"]);
    assert_eq!(
        la.append_record("runs", "x", "1", "m")
            .unwrap_err()
            .to_string(),
        want
    );
    assert_eq!(
        la.append_line("ok.jsonl", "x", "m")
            .unwrap_err()
            .to_string(),
        want
    );
    assert_eq!(git(&a, &["rev-parse", REF]), commit, "nothing written");
}

#[test]
fn a_remote_named_like_an_option_is_never_passed_to_git() {
    let (dir, _origin, a) = origin();
    // git itself will not name a remote so; a hand-edited config can.
    let url = git(&a, &["remote", "get-url", "origin"]);
    git(&a, &["remote", "remove", "origin"]);
    git(&a, &["config", "remote.-x.url", &url]);
    let la = Ledger::open(&a).unwrap();
    la.append_line("g.jsonl", "1", "m").unwrap();
    assert_eq!(la.remote(), None);
    assert_eq!(la.publish().unwrap(), None, "nothing pushed through \"-x\"");
    assert_eq!(la.fetch_if_unknown().unwrap(), Fetch::Known);
    drop(dir);
}

#[test]
fn two_clones_adding_records_in_one_directory_keep_both_and_share_the_rest() {
    let (dir, origin, a) = origin();
    let la = Ledger::open(&a).unwrap();
    // A shared history: records in other directories, and a snapshot file.
    for h in ["01", "02", "03"] {
        la.append_record(
            &format!("local/runs/o/2026/12/01/{h}"),
            "t",
            "{\"n\":0}",
            "r",
        )
        .unwrap();
    }
    la.write("local/temporal.json", b"{\"v\":1}", "snap")
        .unwrap();
    la.publish().unwrap();
    let b = clone(dir.path(), "b", &[]);
    let lb = Ledger::open(&b).unwrap();
    // Both add a record in the same hour, with the same stem (the same millisecond): each
    // names its file -0000, with different content.
    let (pa, _) = la
        .append_record("local/runs/o/2026/12/01/04", "s", r#"{"started":"a"}"#, "r")
        .unwrap();
    let (pb, _) = lb
        .append_record("local/runs/o/2026/12/01/04", "s", r#"{"started":"b"}"#, "r")
        .unwrap();
    assert_eq!(pa, pb);
    // And each changes the snapshot: the remote's wins, the local one stays reachable.
    la.write("local/temporal.json", b"{\"v\":2}", "snap")
        .unwrap();
    lb.write("local/temporal.json", b"{\"v\":3}", "snap")
        .unwrap();
    la.publish().unwrap();
    lb.publish().unwrap();
    // The file both named is the union of the two records; nothing else was rewritten.
    assert_eq!(
        on_origin(&origin, &pa),
        "{\"started\":\"a\"}\n{\"started\":\"b\"}"
    );
    assert_eq!(on_origin(&origin, "local/temporal.json"), "{\"v\":2}");
    for h in ["01", "02", "03"] {
        let p = format!("local/runs/o/2026/12/01/{h}");
        assert_eq!(
            git(&origin, &["rev-parse", &format!("{BRANCH}:{p}")]),
            git(&b, &["rev-parse", &format!("origin/{BRANCH}~1:{p}")]),
            "{p} is the very tree both sides had"
        );
    }
}

#[test]
fn records_are_numbered_per_stem_and_walked_newest_first() {
    let (_dir, _origin, a) = origin();
    let l = Ledger::open(&a).unwrap();
    let (p0, _) = l.append_record("r/2026/12/01/10", "x", "a", "m").unwrap();
    let (p1, _) = l.append_record("r/2026/12/01/10", "x", "b", "m").unwrap();
    let (p2, _) = l.append_record("r/2026/12/01/10", "y", "c", "m").unwrap();
    let (p3, _) = l.append_record("r/2026/12/01/11", "x", "d", "m").unwrap();
    assert_eq!(p0, "r/2026/12/01/10/x-0000.jsonl");
    assert_eq!(p1, "r/2026/12/01/10/x-0001.jsonl");
    assert_eq!(p2, "r/2026/12/01/10/y-0000.jsonl");
    assert_eq!(p3, "r/2026/12/01/11/x-0000.jsonl");
    for bad in [("r/../x", "s"), ("r", "a/b"), ("r", ".."), ("", "s")] {
        assert!(
            matches!(
                l.append_record(bad.0, bad.1, "z", "m"),
                Err(LedgerError::InvalidPath(_))
            ),
            "{bad:?}"
        );
    }
    let walk = |finish_at: Option<&str>, enter_11: bool| {
        let mut r = l.reader().unwrap();
        let mut seen = Vec::new();
        let mut enter = |d: &str, k: Kind| k == Kind::Blob || enter_11 || !d.ends_with("/11");
        r.newest_first("r", &mut enter, &mut |path, bytes| {
            seen.push(format!(
                "{path}={}",
                String::from_utf8_lossy(bytes.unwrap())
            ));
            if finish_at == Some(path) {
                Flow::FinishDir
            } else {
                Flow::Next
            }
        })
        .unwrap();
        seen
    };
    assert_eq!(
        walk(None, true),
        [
            format!("{p3}=d"),
            format!("{p2}=c"),
            format!("{p1}=b"),
            format!("{p0}=a")
        ]
    );
    assert_eq!(
        walk(None, false).len(),
        3,
        "a skipped directory is not read"
    );
    // FinishDir: the rest of that directory, then nothing (no later directory).
    assert_eq!(walk(Some(&p3), true), [format!("{p3}=d")]);
    assert_eq!(
        walk(Some(&p2), true),
        [
            format!("{p3}=d"),
            format!("{p2}=c"),
            format!("{p1}=b"),
            format!("{p0}=a")
        ]
    );
    let mut r = l.reader().unwrap();
    assert_eq!(r.files_under("r/2026/12/01/10").unwrap().len(), 3);
    assert_eq!(r.files_under("nowhere").unwrap(), []);
}

#[test]
fn a_write_never_replaces_a_file_with_a_directory_or_the_reverse() {
    let (_dir, _origin, a) = origin();
    let l = Ledger::open(&a).unwrap();
    // An earlier release's history file, and an Op named like it ("x.jsonl").
    l.append_line("_gates/x.jsonl", "history", "m").unwrap();
    l.append_record("_gates/y/g/2026/12/01/10", "s", "1", "m")
        .unwrap();
    let before = l.head().unwrap().unwrap();
    let e = l
        .append_record("_gates/x.jsonl/g/2026/12/01/10", "s", "2", "m")
        .unwrap_err();
    assert!(
        matches!(&e, LedgerError::NotADirectory { path, .. } if path == "_gates/x.jsonl"),
        "{e}"
    );
    assert!(e.to_string().contains("rename it"), "{e}");
    let e = l
        .append_line("_gates/y", "over a directory", "m")
        .unwrap_err();
    assert!(
        matches!(&e, LedgerError::NotAFile { path, .. } if path == "_gates/y"),
        "{e}"
    );
    let e = l
        .append_record("_gates/y/g/2026/12/01/10/s-0000.jsonl", "t", "3", "m")
        .unwrap_err();
    assert!(matches!(e, LedgerError::NotADirectory { .. }), "{e}");
    assert_eq!(l.head().unwrap().unwrap(), before, "nothing written");
    assert_eq!(text(&l, "_gates/x.jsonl"), "history");
}

#[test]
fn a_symbolic_ledger_ref_is_refused_not_followed() {
    let (_dir, _origin, a) = origin();
    let l = Ledger::open(&a).unwrap();
    l.append_line("x.jsonl", "1", "m").unwrap();
    let tip = git(&a, &["rev-parse", REF]);
    git(&a, &["update-ref", "refs/x/ledger", &tip]);
    git(&a, &["symbolic-ref", REF, "refs/x/ledger"]);
    let e = l.head().unwrap_err();
    assert_eq!(
        e.to_string(),
        "refs/heads/chant/lifecycle is a symbolic ref to refs/x/ledger, which chant does not follow (what it reads and writes must be the branch itself); point it at a commit with `git update-ref --no-deref refs/heads/chant/lifecycle <commit>`"
    );
    assert!(l.append_line("x.jsonl", "2", "m").is_err());
    assert_eq!(
        git(&a, &["rev-parse", "refs/x/ledger"]),
        tip,
        "nothing written"
    );
}

#[test]
fn a_merge_keeps_a_directory_of_records_the_other_side_made_a_file() {
    let (dir, origin, a) = origin();
    let la = Ledger::open(&a).unwrap();
    la.append_record("_gates/o/g/2026/12/01/10", "s", "pending", "m")
        .unwrap();
    la.publish().unwrap();
    let b = clone(dir.path(), "b", &[]);
    let lb = Ledger::open(&b).unwrap();
    // b records an approval; meanwhile the remote's `_gates/o` became a file.
    lb.append_record("_gates/o/g/2026/12/01/11", "s", "approval", "m")
        .unwrap();
    let blob = git(&a, &["hash-object", "-w", "--stdin"]);
    let gates = git_in(&a, &["mktree"], &format!("100644 blob {blob}\to\n"));
    let root = git_in(&a, &["mktree"], &format!("040000 tree {gates}\t_gates\n"));
    let head = git(&a, &["rev-parse", REF]);
    let commit = git(&a, &["commit-tree", &root, "-p", &head, "-m", "a file"]);
    git(&a, &["update-ref", REF, &commit]);
    git(&a, &["push", "-q", "origin", &format!("{REF}:{REF}")]);
    lb.publish().unwrap();
    let files = git(&origin, &["ls-tree", "-r", "--name-only", BRANCH]);
    assert_eq!(
        files.lines().collect::<Vec<_>>(),
        [
            "_gates/o/g/2026/12/01/10/s-0000.jsonl",
            "_gates/o/g/2026/12/01/11/s-0000.jsonl"
        ],
        "both records kept"
    );
}

#[test]
fn trees_nested_deeper_than_chant_writes_are_refused_by_a_merge() {
    let (dir, _origin, a) = origin();
    let la = Ledger::open(&a).unwrap();
    la.append_line("x.jsonl", "1", "m").unwrap();
    la.publish().unwrap();
    let b = clone(dir.path(), "b", &[]);
    let lb = Ledger::open(&b).unwrap();
    let deep: Vec<&str> = std::iter::repeat_n("d", 80).collect();
    la.append_line(&format!("{}/x.jsonl", deep.join("/")), "a", "m")
        .unwrap();
    la.publish().unwrap();
    lb.append_line(&format!("{}/x.jsonl", deep.join("/")), "b", "m")
        .unwrap();
    let e = lb.publish().unwrap_err();
    assert!(matches!(e, LedgerError::TooDeep { .. }), "{e}");
}

#[test]
fn a_merge_keeps_a_file_the_other_side_made_a_link() {
    let (dir, origin, a) = origin();
    let la = Ledger::open(&a).unwrap();
    la.append_line("x.jsonl", "base", "m").unwrap();
    la.publish().unwrap();
    let b = clone(dir.path(), "b", &[]);
    let lb = Ledger::open(&b).unwrap();
    lb.append_line("x.jsonl", "mine", "m").unwrap();
    // The remote's x.jsonl becomes a submodule link (chant never writes one).
    let head = git(&a, &["rev-parse", REF]);
    let tree = git_in(
        &a,
        &["mktree", "--missing"],
        &format!("160000 commit {head}\tx.jsonl\n"),
    );
    let commit = git(&a, &["commit-tree", &tree, "-p", &head, "-m", "a link"]);
    git(&a, &["update-ref", REF, &commit]);
    git(&a, &["push", "-q", "origin", &format!("{REF}:{REF}")]);
    lb.publish().unwrap();
    assert_eq!(
        on_origin(&origin, "x.jsonl"),
        "base\nmine",
        "the file, not the link"
    );
}
