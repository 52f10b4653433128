//! What the run reads of git: the head, the working tree's changes, diff summaries, file
//! markers; and the one write, a checkpoint commit. Every call passes paths after `--` and
//! runs without a shell.

use std::path::Path;
use std::process::{Command, Stdio};

use serde_json::{Map, Value as Json, json};
use sha2::{Digest, Sha256};

use super::paths;

/// git without what a project's own files could make it run: the repository's `.git/` is
/// inside the project, where an agent writes. No fsmonitor, hooks, external diff or textconv,
/// commit signing, lazy fetches of a partial clone (its upload-pack is a command) or any
/// transport; attributes read from the empty tree; every filter driver any config defines
/// emptied (so no attributes file, in-tree or `.git/info/`, can start one); submodules
/// ignored; paths literal, never globs or magic; reads take no optional index lock (cheaper,
/// and never in the way of a person's git); nothing of the caller's `GIT_*` environment.
fn command(root: &Path) -> Command {
    const EMPTY_TREE: &str = "4b825dc642cb6eb9a060e54bf8d69288fbee4904";
    let mut c = base(root);
    c.args([
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
        "-c",
        "protocol.allow=never",
        "-c",
        "diff.ignoreSubmodules=all",
        "-c",
        "status.submoduleSummary=false",
    ]);
    c.arg(format!("--attr-source={EMPTY_TREE}"));
    let drivers = if attributes_may_name_filters(root) {
        filter_drivers(root)
    } else {
        Vec::new()
    };
    for name in drivers {
        for key in ["clean", "smudge", "process"] {
            c.arg("-c").arg(format!("filter.{name}.{key}="));
        }
        c.arg("-c").arg(format!("filter.{name}.required=false"));
    }
    c
}

/// `git -C root` with a clean environment: the caller's `GIT_*` variables (a hook's index,
/// object directory or config parameters) never reach it, a partial clone never fetches, and
/// replace refs and grafts are not honoured (an agent's `git replace` of the baseline commit
/// would otherwise show git a tree holding its own edits: the config a turn is judged by
/// among them).
fn base(root: &Path) -> Command {
    let mut c = Command::new("git");
    for (k, _) in std::env::vars_os() {
        if k.to_string_lossy().starts_with("GIT_")
            && ![
                "GIT_AUTHOR_NAME",
                "GIT_AUTHOR_EMAIL",
                "GIT_AUTHOR_DATE",
                "GIT_COMMITTER_NAME",
                "GIT_COMMITTER_EMAIL",
                "GIT_COMMITTER_DATE",
            ]
            .contains(&k.to_string_lossy().as_ref())
        {
            c.env_remove(k);
        }
    }
    c.env("GIT_NO_LAZY_FETCH", "1")
        .env("GIT_NO_REPLACE_OBJECTS", "1")
        .env("GIT_GRAFT_FILE", "/dev/null")
        .env("GIT_ATTR_NOSYSTEM", "1")
        .arg("-C")
        .arg(root)
        .args(["--no-optional-locks", "--literal-pathspecs"])
        .stdin(Stdio::null());
    c
}

/// Whether any attributes file git would read here can name a filter. With the attributes
/// source the empty tree, `core.attributesFile` `/dev/null` and no system file
/// (`GIT_ATTR_NOSYSTEM`), the one left is the repository's `info/attributes`. When the
/// repository git would find is a plain `.git` directory (no `commondir`) with no such file,
/// no filter can start and the config query (a git process, milliseconds) is skipped; any
/// other layout (a `.git` file, a linked worktree, a directory that looks like a bare
/// repository on the way up, which git would take as the repository) asks git.
fn attributes_may_name_filters(root: &Path) -> bool {
    let looks_bare =
        |d: &Path| d.join("HEAD").exists() && d.join("objects").is_dir() && d.join("refs").is_dir();
    let Ok(start) = root.canonicalize() else {
        return true;
    };
    for dir in start.ancestors() {
        let dot = dir.join(".git");
        match std::fs::symlink_metadata(&dot) {
            Ok(m) if m.is_dir() => {
                return dot.join("commondir").exists()
                    || std::fs::symlink_metadata(dot.join("info/attributes")).is_ok();
            }
            Ok(_) => return true,
            Err(e) if e.kind() != std::io::ErrorKind::NotFound => return true,
            Err(_) => {}
        }
        if looks_bare(dir) {
            return true;
        }
    }
    false
}

/// Every filter driver the repository's config (with its includes) defines: their commands
/// are what an attributes file would start.
fn filter_drivers(root: &Path) -> Vec<String> {
    let mut c = base(root);
    c.args([
        "config",
        "--null",
        "--name-only",
        "--get-regexp",
        r"^filter\.",
    ]);
    let Some(out) = run_bounded(c) else {
        return Vec::new();
    };
    let mut names: Vec<String> = out
        .split('\0')
        .filter_map(|k| k.strip_prefix("filter."))
        .filter_map(|k| k.rsplit_once('.').map(|(name, _)| name.to_owned()))
        .collect();
    names.sort();
    names.dedup();
    names
}

/// How long one git command may take (a FIFO in the tree can make `git status` wait).
const GIT_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(60);

/// Runs `c` to its end or [`GIT_TIMEOUT`] (then its process group is ended): its stdout when
/// it succeeded.
fn run_bounded(mut c: Command) -> Option<String> {
    use std::os::unix::process::CommandExt;
    use wait_timeout::ChildExt;
    c.process_group(0)
        .stdout(Stdio::piped())
        .stderr(Stdio::null());
    let mut child = c.spawn().ok()?;
    let out = crate::process::reader(child.stdout.take(), 64 << 20);
    let status = match child.wait_timeout(GIT_TIMEOUT) {
        Ok(Some(s)) => s,
        _ => {
            crate::process::kill_group(child.id());
            let _ = child.wait();
            return None;
        }
    };
    let (bytes, more) = out.recv().ok()?;
    (status.success() && !more).then(|| String::from_utf8_lossy(&bytes).into_owned())
}

fn git(root: &Path, args: &[&str]) -> Option<String> {
    let mut c = command(root);
    c.args(args);
    run_bounded(c)
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

/// `(HEAD's commit, its branch)` as `git status` reports them (`None` for an unborn or
/// detached one), read from the repository's own files when it is a plain `.git` directory
/// this user owns with files-backed refs — no git process (`status` reads this on every call) —
/// else from [`snapshot`]. `None` outside a work tree.
pub fn head_branch(root: &Path) -> Option<(Option<String>, Option<String>)> {
    head_from_files(root).or_else(|| snapshot(root).map(|s| (s.head, s.branch)))
}

/// The repository's small text file `rel` (a regular file of its own inside `dir`, at most
/// 64 KiB). Never one reached through a link: git reads a symlinked `HEAD` or ref as a
/// symbolic ref to where it points, not as the file there.
fn small(dir: &Path, rel: &str) -> Option<String> {
    if !std::fs::symlink_metadata(dir.join(rel)).ok()?.is_file() {
        return None;
    }
    let bytes = fsread::read_inside(dir, Path::new(rel), 64 << 10).ok()?;
    String::from_utf8(bytes).ok()
}

fn is_oid(s: &str) -> bool {
    (s.len() == 40 || s.len() == 64) && s.bytes().all(|b| b.is_ascii_hexdigit())
}

/// The work tree and `.git` directory of the repository holding `root`, when it is one the
/// run reads from its files the way git would: a plain `.git` directory this user owns (git
/// refuses another owner's), not a linked worktree (`commondir`), no bare-looking directory on
/// the way up (git would take it as the repository). `None`: ask git.
pub(crate) fn plain_repository(root: &Path) -> Option<(std::path::PathBuf, std::path::PathBuf)> {
    use std::os::unix::fs::MetadataExt;
    let start = root.canonicalize().ok()?;
    let looks_bare =
        |d: &Path| d.join("HEAD").exists() && d.join("objects").is_dir() && d.join("refs").is_dir();
    for dir in start.ancestors() {
        let dot = dir.join(".git");
        match std::fs::symlink_metadata(&dot) {
            Ok(m) if m.is_dir() => {
                // SAFETY: geteuid has no preconditions.
                if m.uid() != unsafe { libc::geteuid() } || dot.join("commondir").exists() {
                    return None;
                }
                return Some((dir.to_path_buf(), dot));
            }
            Ok(_) => return None,
            Err(e) if e.kind() != std::io::ErrorKind::NotFound => return None,
            Err(_) => {}
        }
        if looks_bare(dir) {
            return None;
        }
    }
    None
}

/// [`head_branch`] from the files, or `None` to ask git: any layout this does not read the way
/// git would (a `.git` file or linked worktree, a bare-looking directory on the way up, another
/// owner's repository — git refuses it —, reftable refs, a symbolic ref outside `refs/heads/`).
pub(crate) fn head_from_files(root: &Path) -> Option<(Option<String>, Option<String>)> {
    let (_, git) = plain_repository(root)?;
    head_in(&git, &repository_config(&git)?)
}

/// The repository's `config` at `git`, lowercased (empty when there is none); `None` when it
/// is there but not read whole (not a regular file, over 1 MiB, not UTF-8): ask git.
pub(crate) fn repository_config(git: &Path) -> Option<String> {
    match fsread::read_regular(&git.join("config"), 1 << 20) {
        Ok(b) => String::from_utf8(b).ok().map(|t| t.to_ascii_lowercase()),
        Err(e) if e.is_missing() => Some(String::new()),
        Err(_) => None,
    }
}

/// [`head_from_files`] for the plain `.git` directory `git` whose lowercased config is
/// `config` ([`repository_config`]).
pub(crate) fn head_in(git: &Path, config: &str) -> Option<(Option<String>, Option<String>)> {
    if config.contains("refstorage") || config.contains("worktree") {
        return None;
    }
    let head = small(git, "HEAD")?;
    let head = head.trim_end_matches(['\n', '\r']);
    if is_oid(head) {
        return Some((Some(head.to_owned()), None));
    }
    let target = head.strip_prefix("ref: ")?.trim();
    let branch = target.strip_prefix("refs/heads/")?;
    if branch.is_empty()
        || target.contains("..")
        || target
            .split('/')
            .any(|c| c.is_empty() || c.starts_with('.'))
    {
        return None;
    }
    let oid = match small(git, target) {
        Some(loose) => {
            let loose = loose.trim();
            if !is_oid(loose) {
                return None;
            }
            Some(loose.to_owned())
        }
        // There but not read (a link, not a regular file): ask git.
        None if std::fs::symlink_metadata(git.join(target)).is_ok() => return None,
        None => match std::fs::symlink_metadata(git.join("packed-refs")) {
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => None,
            // A packed-refs this cannot read whole (too large, not a regular file): ask git.
            _ => {
                let packed = fsread::read_inside(git, Path::new("packed-refs"), 64 << 20).ok()?;
                let packed = String::from_utf8(packed).ok()?;
                packed.lines().find_map(|l| {
                    let (oid, name) = l.split_once(' ')?;
                    (name == target && is_oid(oid)).then(|| oid.to_owned())
                })
            }
        },
    };
    Some((oid, Some(branch.to_owned())))
}

/// A repository git cannot read: a `.git` at or above `root` (or `root` itself looking like a
/// bare repository) while `git status` fails there (a broken HEAD, another owner's repository
/// git refuses, a FIFO it times out on). Observation must then fail closed, not read as "no
/// repository, nothing changed".
pub fn broken(root: &Path) -> bool {
    has_git_dir(root) && snapshot(root).is_none()
}

/// Whether a `.git` is at or above `root` (read from the file system only).
pub fn has_git_dir(root: &Path) -> bool {
    root.canonicalize().is_ok_and(|start| {
        start
            .ancestors()
            .any(|d| std::fs::symlink_metadata(d.join(".git")).is_ok())
    })
}

/// Whether commit `a` is an ancestor of (or is) commit `b`; both must be object names.
pub fn is_ancestor(root: &Path, a: &str, b: &str) -> bool {
    is_object_name(a)
        && is_object_name(b)
        && git(root, &["merge-base", "--is-ancestor", a, b]).is_some()
}

/// The commits after `from` up to `to`, oldest first (`None` when git cannot list them).
pub fn commits_between(root: &Path, from: &str, to: &str) -> Option<Vec<String>> {
    if !is_object_name(from) || !is_object_name(to) {
        return None;
    }
    let out = git(root, &["rev-list", "--reverse", &format!("{from}..{to}")])?;
    Some(out.lines().map(str::to_owned).collect())
}

/// What one commit changed: `(status, paths)` per entry (`M`, `A`, `D`, `R100`, …).
pub type Changes = Vec<(String, Vec<String>)>;

/// One commit's subject and what it changed, paths exactly as stored (`-z`: never quoted, so a
/// path a check compares is the path).
pub fn commit_changes(root: &Path, sha: &str) -> Option<(String, Changes)> {
    if !is_object_name(sha) {
        return None;
    }
    let subject = git(root, &["log", "-1", "--format=%s", sha, "--"])?;
    // `-m`: a merge's changes against each parent (plain `diff-tree` prints nothing for a
    // merge, so what a merge commit itself adds would go unseen); `--root`: a root commit's
    // files (an unrelated history merged in).
    let raw = git(
        root,
        &[
            "diff-tree",
            "--no-commit-id",
            "--name-status",
            "-r",
            "-z",
            "-m",
            "--root",
            "--no-renames",
            sha,
        ],
    )?;
    let mut fields = raw.split('\0').filter(|f| !f.is_empty());
    let mut entries = Vec::new();
    while let Some(status) = fields.next() {
        // A copy or rename names two paths, everything else one.
        let n = if status.starts_with(['R', 'C']) { 2 } else { 1 };
        let paths: Vec<String> = fields.by_ref().take(n).map(str::to_owned).collect();
        entries.push((status.to_owned(), paths));
    }
    Some((subject.trim_end_matches('\n').to_owned(), entries))
}

/// Every path that differs between commits `from` and `to` (`None` when git cannot say).
pub fn paths_between(root: &Path, from: &str, to: &str) -> Option<Changes> {
    if !is_object_name(from) || !is_object_name(to) {
        return None;
    }
    let raw = git(
        root,
        &[
            "diff",
            "--name-status",
            "-z",
            "--no-renames",
            from,
            to,
            "--",
        ],
    )?;
    let mut fields = raw.split('\0').filter(|f| !f.is_empty());
    let mut entries = Vec::new();
    while let Some(status) = fields.next() {
        if let Some(path) = fields.next() {
            entries.push((status.to_owned(), vec![path.to_owned()]));
        }
    }
    Some(entries)
}

/// `files` (changed since the baseline commit `head`) as `{added, modified, deleted}`: deleted
/// when gone from the working tree, added when `head` did not have it (an untracked file, one
/// added since), modified otherwise — the reference's `classifyObservedChanges`, for hooks.
pub fn classify_changes(root: &Path, head: Option<&str>, files: &[String]) -> Json {
    let at_head: std::collections::HashSet<String> = head
        .filter(|h| is_object_name(h))
        // The whole tree, not the files as pathspecs (a name could read as pathspec magic).
        .and_then(|h| git(root, &["ls-tree", "-r", "-z", "--name-only", h]))
        .map(|raw| {
            raw.split('\0')
                .filter(|f| !f.is_empty())
                .map(str::to_owned)
                .collect()
        })
        .unwrap_or_default();
    let (mut added, mut modified, mut deleted) = (Vec::new(), Vec::new(), Vec::new());
    for f in files {
        if std::fs::symlink_metadata(root.join(f)).is_err() {
            deleted.push(f.clone());
        } else if head.is_some() && !at_head.contains(f) {
            added.push(f.clone());
        } else {
            modified.push(f.clone());
        }
    }
    serde_json::json!({"added": added, "modified": modified, "deleted": deleted})
}

pub fn is_repo(root: &Path) -> bool {
    // A repository whose HEAD reads from its files is one (no git process); else git says.
    head_from_files(root).is_some() || snapshot(root).is_some()
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
    // is "unreadable", never read). A hard-linked one is hashed: only its digest is kept, and
    // "unreadable" before and after would hide a change to it.
    let Ok((mut file, _)) = fsread::open_inside_linked(root, Path::new(rel)) else {
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
        let mut c = command(root);
        c.args(args);
        run_bounded(c).map(|_| ()).ok_or_else(|| {
            format!(
                "git {} failed or took over {} s",
                args[0],
                GIT_TIMEOUT.as_secs()
            )
        })
    };
    let mut add = vec!["add", "-A", "--"];
    add.extend(files.iter().map(String::as_str));
    run(&add)?;
    let mut commit = vec!["commit", "-q", "--no-verify", "-m", message, "--"];
    commit.extend(files.iter().map(String::as_str));
    run(&commit)?;
    head(root).ok_or_else(|| "no HEAD after the commit".to_owned())
}

/// The text of `path` as committed at `rev` (an object name), read from git's objects: what
/// the working tree, its index flags or its ignore files say does not change it.
pub fn committed_text(root: &Path, rev: &str, path: &str) -> Option<String> {
    if !is_object_name(rev) || path.starts_with('-') {
        return None;
    }
    // `./`: the path from the project's root (where git runs), which may be a directory
    // below the repository's top; a bare path is read from the top.
    git(root, &["cat-file", "blob", &format!("{rev}:./{path}")])
}

/// Whether `rev` (an object name) names a commit git can read.
pub fn is_commit(root: &Path, rev: &str) -> bool {
    is_object_name(rev) && git(root, &["cat-file", "-t", rev]).is_some_and(|t| t.trim() == "commit")
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

    /// What `git status` says of HEAD and branch, for comparison.
    fn from_git(root: &Path) -> Option<(Option<String>, Option<String>)> {
        snapshot(root).map(|s| (s.head, s.branch))
    }

    #[test]
    fn head_and_branch_read_from_the_files_agree_with_git() {
        let dir = tempfile::tempdir().unwrap();
        let repo = dir.path().join("repo");
        let app = repo.join("app");
        std::fs::create_dir_all(&app).unwrap();
        sh(&repo, &["init", "-q", "-b", "main"]);
        // Unborn: no commit, the branch named.
        assert_eq!(head_from_files(&repo), Some((None, Some("main".into()))));
        assert_eq!(head_from_files(&repo), from_git(&repo));
        sh(&repo, &["commit", "-q", "--allow-empty", "-m", "one"]);
        for root in [&repo, &app] {
            let fast = head_from_files(root);
            assert!(fast.as_ref().is_some_and(|(h, _)| h.is_some()));
            assert_eq!(fast, from_git(root));
        }
        // Packed refs only.
        sh(&repo, &["pack-refs", "--all", "--prune"]);
        assert!(!repo.join(".git/refs/heads/main").exists());
        assert_eq!(head_from_files(&repo), from_git(&repo));
        // Another branch, then detached.
        sh(&repo, &["checkout", "-q", "-b", "feature/x"]);
        sh(&repo, &["commit", "-q", "--allow-empty", "-m", "two"]);
        assert_eq!(head_from_files(&repo), from_git(&repo));
        sh(&repo, &["checkout", "-q", "--detach"]);
        assert_eq!(head_from_files(&repo).unwrap().1, None);
        assert_eq!(head_from_files(&repo), from_git(&repo));
        // A linked worktree (a .git file): git is asked, and agrees with itself.
        sh(&repo, &["worktree", "add", "-q", "../wt", "-b", "wt"]);
        let wt = dir.path().join("wt");
        assert_eq!(head_from_files(&wt), None);
        assert_eq!(head_branch(&wt).and_then(|(_, b)| b), Some("wt".to_owned()));
        // A HEAD that is a link into refs/: git reads it as a symbolic ref to that branch,
        // never as a detached HEAD at the file's id.
        sh(&repo, &["checkout", "-q", "main"]);
        std::fs::remove_file(repo.join(".git/HEAD")).unwrap();
        std::os::unix::fs::symlink("refs/heads/feature/x", repo.join(".git/HEAD")).unwrap();
        assert_eq!(head_from_files(&repo), None);
        assert_eq!(
            head_branch(&repo).and_then(|(_, b)| b),
            Some("feature/x".to_owned())
        );
        // A branch's ref that is a link: left to git too.
        std::fs::remove_file(repo.join(".git/HEAD")).unwrap();
        std::fs::write(repo.join(".git/HEAD"), "ref: refs/heads/linked\n").unwrap();
        std::os::unix::fs::symlink("feature/x", repo.join(".git/refs/heads/linked")).unwrap();
        assert_eq!(head_from_files(&repo), None);
        // A HEAD naming something odd is left to git.
        std::fs::write(repo.join(".git/HEAD"), "ref: refs/heads/../../config\n").unwrap();
        assert_eq!(head_from_files(&repo), None);
        // Outside a repository: nothing.
        let plain = tempfile::tempdir().unwrap();
        assert_eq!(head_branch(plain.path()), None);
    }

    #[test]
    fn the_filter_query_is_skipped_only_where_no_attributes_file_can_name_a_filter() {
        let dir = tempfile::tempdir().unwrap();
        let repo = dir.path().join("repo");
        let app = repo.join("app");
        std::fs::create_dir_all(&app).unwrap();
        sh(&repo, &["init", "-q"]);
        assert!(!attributes_may_name_filters(&repo));
        assert!(!attributes_may_name_filters(&app));
        // The repository's own attributes file.
        std::fs::write(repo.join(".git/info/attributes"), "* filter=x\n").unwrap();
        assert!(attributes_may_name_filters(&app));
        std::fs::remove_file(repo.join(".git/info/attributes")).unwrap();
        // A dangling link there is still a file git may read one day: ask.
        std::os::unix::fs::symlink("/nonexistent", repo.join(".git/info/attributes")).unwrap();
        assert!(attributes_may_name_filters(&app));
        std::fs::remove_file(repo.join(".git/info/attributes")).unwrap();
        // A directory on the way up that git would take as a bare repository.
        std::fs::write(app.join("HEAD"), "ref: refs/heads/main\n").unwrap();
        std::fs::create_dir_all(app.join("objects")).unwrap();
        std::fs::create_dir_all(app.join("refs")).unwrap();
        assert!(attributes_may_name_filters(&app));
        assert!(!attributes_may_name_filters(&repo));
        // A linked worktree or a .git file (submodule, --separate-git-dir).
        std::fs::write(app.join(".git"), "gitdir: /elsewhere\n").unwrap();
        assert!(attributes_may_name_filters(&app));
        std::fs::write(repo.join(".git/commondir"), "..\n").unwrap();
        assert!(attributes_may_name_filters(&repo));
        // No repository at all and an unreadable root: ask (git decides).
        assert!(attributes_may_name_filters(&dir.path().join("missing")));
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
