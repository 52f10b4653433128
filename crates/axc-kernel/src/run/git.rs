//! What the run reads of git: the head, the working tree's changes, diff summaries, file
//! markers; and the one write, a checkpoint commit. Every call passes paths after `--` and
//! runs without a shell.

use std::path::Path;
use std::process::{Command, Stdio};

use serde_json::{Map, Value as Json, json};
use sha2::{Digest, Sha256};

use super::paths;

fn git(root: &Path, args: &[&str]) -> Option<String> {
    let out = Command::new("git")
        .arg("-C")
        .arg(root)
        .args(args)
        .stdin(Stdio::null())
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

pub fn is_repo(root: &Path) -> bool {
    git(root, &["rev-parse", "--is-inside-work-tree"]).is_some_and(|s| s.trim() == "true")
}

pub fn head(root: &Path) -> Option<String> {
    git(root, &["rev-parse", "HEAD"])
        .map(|s| s.trim().to_owned())
        .filter(|s| !s.is_empty())
}

pub fn branch(root: &Path) -> Option<String> {
    git(root, &["rev-parse", "--abbrev-ref", "HEAD"])
        .map(|s| s.trim().to_owned())
        .filter(|s| !s.is_empty() && s != "HEAD")
}

fn untracked(root: &Path) -> Vec<String> {
    lines(git(root, &["ls-files", "--others", "--exclude-standard"]))
}

/// Tracked changes against HEAD, staged changes and untracked files, each once.
pub fn working_tree_changes(root: &Path) -> Vec<String> {
    let mut all: Vec<String> = Vec::new();
    for l in lines(git(root, &["diff", "--name-only", "HEAD"]))
        .into_iter()
        .chain(lines(git(root, &["diff", "--name-only", "--cached"])))
        .chain(untracked(root))
    {
        if !all.contains(&l) {
            all.push(l);
        }
    }
    all
}

/// `sha256:<hex>` of the file's bytes, `deleted` or `unreadable`.
pub fn marker(root: &Path, rel: &str) -> String {
    let p = root.join(rel);
    match std::fs::symlink_metadata(&p) {
        Err(_) => "deleted".into(),
        Ok(_) => match std::fs::read(&p) {
            Ok(b) => format!("sha256:{:x}", Sha256::digest(&b)),
            Err(_) => "unreadable".into(),
        },
    }
}

/// The baseline a turn is measured against: the head, whether the tree is clean of agent
/// work, and a marker of every dirty agent file.
pub fn capture_baseline(root: &Path, now: &str) -> Json {
    if !is_repo(root) {
        return json!({"kind": "no_git", "head_ref": null, "clean": true, "captured_at": now, "dirty_snapshot": {}});
    }
    let dirty = working_tree_changes(root);
    let clean = dirty.iter().all(|p| paths::is_baseline_exempt(p));
    let mut snapshot = Map::new();
    for p in dirty.iter().filter(|p| !paths::is_operational(p)) {
        snapshot.insert(p.clone(), json!(marker(root, p)));
    }
    json!({
        "kind": "git_worktree",
        "head_ref": head(root),
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
    if !is_repo(root) || baseline["kind"] == "no_git" {
        return json!({"files_changed": [], "file_markers": {}, "head_ref": null, "diff_summary": null, "observation_available": false, "kind": "no_git"});
    }
    let current = head(root);
    let untracked = untracked(root);
    let base = baseline["head_ref"].as_str();
    let (mut changed, diff) = match base {
        Some(b) if Some(b) == current.as_deref() => (
            working_tree_changes(root),
            summary(git(root, &["diff", "--stat", "HEAD"]), &untracked),
        ),
        Some(b) if is_object_name(b) => {
            let mut c = lines(git(root, &["diff", "--name-only", b, "--"]));
            for f in working_tree_changes(root) {
                if !c.contains(&f) {
                    c.push(f);
                }
            }
            (
                c,
                summary(git(root, &["diff", "--stat", b, "--"]), &untracked),
            )
        }
        _ => (
            working_tree_changes(root),
            summary(git(root, &["diff", "--stat", "HEAD"]), &untracked),
        ),
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
        let out = Command::new("git")
            .arg("-C")
            .arg(root)
            .args(args)
            .stdin(Stdio::null())
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
