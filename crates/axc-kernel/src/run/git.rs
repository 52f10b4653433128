//! What the run reads of git: the head, the working tree's changes, diff summaries, file
//! markers; and the one write, a checkpoint commit. Every call passes paths after `--` and
//! runs without a shell.

use std::path::Path;
use std::process::{Command, Stdio};

use serde_json::{Map, Value as Json, json};
use sha2::{Digest, Sha256};

use super::paths;

/// git without what a project's own files could make it run: the repository's `.git/` is
/// inside the project, where an agent writes. No fsmonitor, no hooks, no external diff or
/// textconv, attributes read from the empty tree (so no `.gitattributes` filter runs) and every
/// filter driver `.git/info/attributes` names emptied; paths are literal, never globs or magic;
/// reads take no optional index lock (cheaper, and never in the way of a person's git).
fn command(root: &Path) -> Command {
    const EMPTY_TREE: &str = "4b825dc642cb6eb9a060e54bf8d69288fbee4904";
    let mut c = Command::new("git");
    c.arg("-C").arg(root).args([
        "--no-optional-locks",
        "--literal-pathspecs",
        "-c",
        "core.fsmonitor=false",
        "-c",
        "core.hooksPath=/dev/null",
        "-c",
        "diff.external=",
        "-c",
        "core.untrackedCache=false",
        "-c",
        "core.attributesFile=/dev/null",
        "-c",
        "commit.gpgSign=false",
        "-c",
        "gpg.program=false",
    ]);
    c.arg(format!("--attr-source={EMPTY_TREE}"));
    for name in info_filters(root) {
        for key in ["clean", "smudge", "process"] {
            c.arg("-c").arg(format!("filter.{name}.{key}="));
        }
    }
    c.env_remove("GIT_DIR")
        .env_remove("GIT_WORK_TREE")
        .env_remove("GIT_EXTERNAL_DIFF")
        .stdin(Stdio::null());
    c
}

/// The filter drivers `.git/info/attributes` assigns (read here: git reads that file whatever
/// `--attr-source` says).
fn info_filters(root: &Path) -> Vec<String> {
    let Ok(bytes) = fsread::read_inside(root, Path::new(".git/info/attributes"), 1 << 20) else {
        return Vec::new();
    };
    let mut names: Vec<String> = String::from_utf8_lossy(&bytes)
        .split_whitespace()
        .filter_map(|w| w.strip_prefix("filter="))
        .filter(|n| {
            !n.is_empty()
                && n.bytes()
                    .all(|b| b.is_ascii_alphanumeric() || b"_-.".contains(&b))
        })
        .map(str::to_owned)
        .collect();
    names.sort();
    names.dedup();
    names
}

fn git(root: &Path, args: &[&str]) -> Option<String> {
    let out = command(root)
        .args(args)
        .stderr(Stdio::null())
        .output()
        .ok()?;
    out.status
        .success()
        .then(|| String::from_utf8_lossy(&out.stdout).into_owned())
}

fn lines(s: Option<String>) -> Vec<String> {
    s.unwrap_or_default()
        .lines()
        .filter(|l| !l.is_empty())
        .map(str::to_owned)
        .collect()
}

/// The working tree as one `git status` call sees it: the head, the branch, and every path
/// that differs from HEAD (tracked changes, staged changes, untracked files), each once.
#[derive(Clone, Debug, Default)]
pub struct Snapshot {
    pub head: Option<String>,
    pub branch: Option<String>,
    pub changes: Vec<String>,
    /// The untracked files among `changes`.
    pub untracked: Vec<String>,
}

/// One `git status --porcelain=v2 --branch -z`: `None` outside a work tree. (One process
/// instead of five: each git process is milliseconds on a loaded machine.)
pub fn snapshot(root: &Path) -> Option<Snapshot> {
    let out = git(
        root,
        &[
            "status",
            "--porcelain=v2",
            "--branch",
            "-z",
            "--untracked-files=all",
        ],
    )?;
    let mut snap = Snapshot::default();
    let mut fields = out.split('\0').peekable();
    while let Some(rec) = fields.next() {
        if let Some(oid) = rec.strip_prefix("# branch.oid ") {
            snap.head = (oid != "(initial)").then(|| oid.to_owned());
        } else if let Some(b) = rec.strip_prefix("# branch.head ") {
            snap.branch = (b != "(detached)").then(|| b.to_owned());
        } else if let Some(p) = rec.strip_prefix("? ") {
            snap.changes.push(p.to_owned());
            snap.untracked.push(p.to_owned());
        } else if rec.starts_with("1 ") {
            // 1 XY sub mH mI mW hH hI path
            if let Some(p) = rec.splitn(9, ' ').nth(8) {
                snap.changes.push(p.to_owned());
            }
        } else if rec.starts_with("2 ") {
            // 2 XY sub mH mI mW hH hI Xscore path, then the original path as its own field
            if let Some(p) = rec.splitn(10, ' ').nth(9) {
                snap.changes.push(p.to_owned());
            }
            fields.next();
        } else if rec.starts_with("u ")
            && let Some(p) = rec.splitn(11, ' ').nth(10)
        {
            snap.changes.push(p.to_owned());
        }
    }
    let mut seen = std::collections::HashSet::new();
    snap.changes.retain(|p| seen.insert(p.clone()));
    Some(snap)
}

pub fn is_repo(root: &Path) -> bool {
    snapshot(root).is_some()
}

pub fn head(root: &Path) -> Option<String> {
    snapshot(root)?.head
}

/// Tracked changes against HEAD, staged changes and untracked files, each once.
pub fn working_tree_changes(root: &Path) -> Vec<String> {
    snapshot(root).map(|s| s.changes).unwrap_or_default()
}

/// `sha256:<hex>` of the file's bytes, `deleted` or `unreadable`.
pub fn marker(root: &Path, rel: &str) -> String {
    if std::fs::symlink_metadata(root.join(rel)).is_err() {
        return "deleted".into();
    }
    // Streamed, of a regular file inside the project only (a link out, a FIFO or /dev/zero
    // is "unreadable", never read).
    let Ok((mut file, _)) = fsread::open_inside(root, Path::new(rel)) else {
        return "unreadable".into();
    };
    let mut hasher = Sha256::new();
    match std::io::copy(&mut file, &mut hasher) {
        Ok(_) => format!("sha256:{:x}", hasher.finalize()),
        Err(_) => "unreadable".into(),
    }
}

/// The baseline a turn is measured against: the head, whether the tree is clean of agent
/// work, and a marker of every dirty agent file.
pub fn capture_baseline(root: &Path, now: &str) -> Json {
    baseline_of(root, snapshot(root).as_ref(), now)
}

/// [`capture_baseline`] from a snapshot already taken.
pub fn baseline_of(root: &Path, snap: Option<&Snapshot>, now: &str) -> Json {
    let Some(snap) = snap.cloned() else {
        return json!({"kind": "no_git", "head_ref": null, "clean": true, "captured_at": now, "dirty_snapshot": {}});
    };
    let dirty = snap.changes;
    let clean = dirty.iter().all(|p| paths::is_baseline_exempt(p));
    let mut snapshot = Map::new();
    for p in dirty.iter().filter(|p| !paths::is_operational(p)) {
        snapshot.insert(p.clone(), json!(marker(root, p)));
    }
    json!({
        "kind": "git_worktree",
        "head_ref": snap.head,
        "clean": clean,
        "captured_at": now,
        "dirty_snapshot": snapshot,
    })
}

fn summary(stat: Option<String>, untracked: &[String]) -> Json {
    let base = stat.map(|s| s.trim().to_owned()).filter(|s| !s.is_empty());
    let extra = (!untracked.is_empty()).then(|| {
        std::iter::once("Untracked files:".to_owned())
            .chain(untracked.iter().map(|f| format!("  - {f}")))
            .collect::<Vec<_>>()
            .join("\n")
    });
    match (base, extra) {
        (Some(b), Some(e)) => json!(format!("{b}\n{e}")),
        (Some(b), None) => json!(b),
        (None, Some(e)) => json!(e),
        (None, None) => Json::Null,
    }
}

/// What changed since the baseline, as the orchestrator sees it: the agent's files (sorted),
/// their markers, the head and a diff summary. Files dirty at the baseline and unchanged since
/// are not the turn's.
pub fn observe(root: &Path, baseline: &Json) -> Json {
    observe_now(root, baseline).0
}

/// [`observe`], with the snapshot it took: `git status` and `git diff --stat` run at once
/// (each is a process of milliseconds; they do not depend on each other).
pub fn observe_now(root: &Path, baseline: &Json) -> (Json, Option<Snapshot>) {
    let base = baseline["head_ref"]
        .as_str()
        .filter(|b| is_object_name(b))
        .map(str::to_owned);
    std::thread::scope(|sc| {
        let stat = sc.spawn(|| match &base {
            // Against the baseline's commit: the same as `HEAD` while the head has not moved.
            Some(b) => git(
                root,
                &["diff", "--no-ext-diff", "--no-textconv", "--stat", b, "--"],
            ),
            None => git(
                root,
                &["diff", "--no-ext-diff", "--no-textconv", "--stat", "HEAD"],
            ),
        });
        let snap = snapshot(root);
        let stat = stat.join().ok().flatten();
        (observe_with(root, baseline, snap.as_ref(), stat), snap)
    })
}

/// What changed, from a snapshot and the diff summary already taken.
fn observe_with(
    root: &Path,
    baseline: &Json,
    snap: Option<&Snapshot>,
    stat: Option<String>,
) -> Json {
    let snap = match snap.cloned() {
        Some(s) if baseline["kind"] != "no_git" => s,
        _ => {
            return json!({"files_changed": [], "file_markers": {}, "head_ref": null, "diff_summary": null, "observation_available": false, "kind": "no_git"});
        }
    };
    let current = snap.head.clone();
    let untracked = snap.untracked.clone();
    let base = baseline["head_ref"].as_str();
    let diff = summary(stat, &untracked);
    let mut changed = match base {
        Some(b) if Some(b) != current.as_deref() && is_object_name(b) => {
            let mut c = lines(git(
                root,
                &["diff", "--no-ext-diff", "--name-only", b, "--"],
            ));
            for f in snap.changes.clone() {
                if !c.contains(&f) {
                    c.push(f);
                }
            }
            c
        }
        _ => snap.changes.clone(),
    };
    let mut inherited: Vec<String> = Vec::new();
    if let Some(snapshot) = baseline["dirty_snapshot"].as_object() {
        for (f, m) in snapshot {
            if m.as_str() == Some(marker(root, f).as_str()) {
                inherited.push(f.clone());
            }
        }
        changed.retain(|f| !inherited.contains(f));
    }
    let mut actor: Vec<String> = changed
        .into_iter()
        .filter(|f| !paths::is_operational(f) && !paths::is_dogfood_evidence(f))
        .collect();
    actor.sort();
    let mut markers = Map::new();
    for f in &actor {
        markers.insert(f.clone(), json!(marker(root, f)));
    }
    json!({
        "files_changed": actor,
        "file_markers": markers,
        "head_ref": current,
        "diff_summary": diff,
        "observation_available": true,
        "kind": "git_observed",
        "baseline_unchanged": inherited,
    })
}

/// A baseline's head ref is only ever used as an object name, never as an option.
fn is_object_name(s: &str) -> bool {
    (4..=64).contains(&s.len()) && s.bytes().all(|b| b.is_ascii_hexdigit())
}

/// Commits exactly `files` (added, or removed when deleted) with `message`: the new head, or
/// git's error.
pub fn commit_files(root: &Path, files: &[String], message: &str) -> Result<String, String> {
    let run = |args: &[&str]| -> Result<(), String> {
        let out = command(root)
            .args(args)
            .output()
            .map_err(|e| e.to_string())?;
        if out.status.success() {
            Ok(())
        } else {
            Err(String::from_utf8_lossy(&out.stderr).trim().to_owned())
        }
    };
    let mut add = vec!["add", "-A", "--"];
    add.extend(files.iter().map(String::as_str));
    run(&add)?;
    let mut commit = vec!["commit", "-q", "--no-verify", "-m", message, "--"];
    commit.extend(files.iter().map(String::as_str));
    run(&commit)?;
    head(root).ok_or_else(|| "no HEAD after the commit".to_owned())
}

/// Whether the working tree has changes to `files`.
pub fn has_changes(root: &Path, files: &[String]) -> bool {
    if files.is_empty() {
        return false;
    }
    let mut args = vec!["status", "--porcelain", "--"];
    args.extend(files.iter().map(String::as_str));
    git(root, &args).is_some_and(|s| !s.trim().is_empty())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sh(root: &Path, args: &[&str]) {
        let ok = Command::new("git")
            .args(["-c", "user.name=t", "-c", "user.email=t@e"])
            .args(args)
            .current_dir(root)
            .output()
            .unwrap()
            .status
            .success();
        assert!(ok, "{args:?}");
    }

    #[test]
    fn one_status_sees_the_head_branch_and_every_kind_of_change() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        assert!(snapshot(root).is_none(), "not a repository");
        sh(root, &["init", "-q", "-b", "trunk"]);
        let s = snapshot(root).unwrap();
        assert_eq!((s.head, s.branch.as_deref()), (None, Some("trunk")));
        for f in ["a.txt", "b.txt", "c d.txt"] {
            std::fs::write(root.join(f), f).unwrap();
        }
        sh(root, &["add", "-A"]);
        sh(root, &["commit", "-qm", "one"]);
        std::fs::write(root.join("a.txt"), "changed").unwrap();
        sh(root, &["mv", "b.txt", "renamed.txt"]);
        std::fs::write(root.join("new file.txt"), "n").unwrap();
        std::fs::create_dir(root.join("dir")).unwrap();
        std::fs::write(root.join("dir/inner.txt"), "i").unwrap();
        let s = snapshot(root).unwrap();
        assert_eq!(s.head.as_deref().map(str::len), Some(40));
        let mut c = s.changes.clone();
        c.sort();
        assert_eq!(c, ["a.txt", "dir/inner.txt", "new file.txt", "renamed.txt"]);
        let mut u = s.untracked.clone();
        u.sort();
        assert_eq!(u, ["dir/inner.txt", "new file.txt"]);
    }
}
