//! Proving a work tree clean without a git process — for `status`'s one question ("was the
//! tree clean at the checkpoint and is it still?"), where one `git status` is most of the
//! command's time. The proof only ever says *clean*: every case it cannot decide the way git
//! would (a layout or index feature it does not read, a racily clean entry, any stat change,
//! any untracked file) answers `None`, and the caller asks git. Never used where a turn's
//! baseline is taken: that stays git's word.
//!
//! Clean means what `git status --porcelain=v2 --untracked-files=all --ignore-submodules=all`
//! prints nothing for: the index equals HEAD's tree (the index's cache-tree root is valid and
//! names HEAD's tree), every index entry's stat data matches the file (git would not look at
//! its content either) and no file outside the index escapes the ignore rules.

use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};

/// Largest index read (a bigger one is left to git).
const MAX_INDEX: u64 = 64 << 20;
/// Largest loose commit object read for HEAD's tree.
const MAX_COMMIT: u64 = 1 << 20;

/// HEAD and its branch (as [`super::git::head_branch`] reads them) when the work tree holding
/// `root` is provably clean; `None`: ask git.
pub fn proven(root: &Path) -> Option<(String, Option<String>)> {
    let (work, git) = plain_repository(root)?;
    let config = std::fs::read_to_string(git.join("config"))
        .unwrap_or_default()
        .to_ascii_lowercase();
    // Settings that change what git reads as the work tree, its ignore rules or its hashes.
    if [
        "worktree",
        "excludesfile",
        "include",
        "objectformat",
        "sparse",
        "refstorage",
    ]
    .iter()
    .any(|k| config.contains(k))
        || config
            .split_whitespace()
            .collect::<String>()
            .contains("bare=true")
        || replaced(&git)
    {
        return None;
    }
    if !user_configs_plain() {
        return None;
    }
    let (head, branch) = super::git::head_from_files(root)?;
    let head = head?;
    let index_meta = std::fs::symlink_metadata(git.join("index")).ok()?;
    if !index_meta.is_file() || index_meta.len() > MAX_INDEX {
        return None;
    }
    let bytes = std::fs::read(git.join("index")).ok()?;
    let index = parse(&bytes)?;
    if index.tree.as_deref() != Some(head_tree(&git, &head)?.as_str()) {
        return None;
    }
    // git built without nanosecond stat comparison (Debian's) takes an entry as racy when its
    // mtime's second is the index's or later; seconds only is right either way.
    let racy = |e: &Entry| i64::from(e.mtime.0) >= index_meta.mtime();
    let mut tracked = std::collections::HashSet::with_capacity(index.entries.len());
    let mut gitlinks = Vec::new();
    let mut dirs = std::collections::HashSet::new();
    for e in &index.entries {
        if e.mode == 0o160000 {
            gitlinks.push(work.join(&e.path));
            continue;
        }
        if racy(e) {
            return None;
        }
        // Every leading directory a real one (git sees a path under a link as deleted).
        let mut dir = String::new();
        let parts: Vec<&str> = e.path.split('/').collect();
        for c in &parts[..parts.len() - 1] {
            if !dir.is_empty() {
                dir.push('/');
            }
            dir.push_str(c);
            if dirs.insert(dir.clone())
                && !std::fs::symlink_metadata(work.join(&dir)).ok()?.is_dir()
            {
                return None;
            }
        }
        let m = std::fs::symlink_metadata(work.join(&e.path)).ok()?;
        let mode = if m.file_type().is_symlink() {
            0o120000
        } else if m.is_file() {
            if m.mode() & 0o100 != 0 {
                0o100755
            } else {
                0o100644
            }
        } else {
            return None;
        };
        // git keeps each field's low 32 bits.
        let same = e.mode == mode
            && e.mtime == (m.mtime() as u32, m.mtime_nsec() as u32)
            && e.ctime == (m.ctime() as u32, m.ctime_nsec() as u32)
            && e.ino == m.ino() as u32
            && e.uid == m.uid()
            && e.gid == m.gid()
            && e.size == m.size() as u32;
        if !same {
            return None;
        }
        tracked.insert(work.join(&e.path));
    }
    untracked_none(&work, &tracked, &gitlinks)?;
    Some((head, branch))
}

/// Whether the system and user git configs say nothing the ignore walk would read otherwise
/// than git: an `include` (the walk does not follow one) or a system `core.excludesFile`
/// (git prefers it over the user's default excludes file when the user sets none).
fn user_configs_plain() -> bool {
    let read = |p: PathBuf| {
        std::fs::read_to_string(p)
            .unwrap_or_default()
            .to_ascii_lowercase()
    };
    let home = std::env::var_os("HOME").map(PathBuf::from);
    let xdg = std::env::var_os("XDG_CONFIG_HOME")
        .map(PathBuf::from)
        .or_else(|| home.as_ref().map(|h| h.join(".config")));
    let system = read(PathBuf::from("/etc/gitconfig"));
    if system.contains("include") || system.contains("excludesfile") {
        return false;
    }
    let user = [
        home.map(|h| h.join(".gitconfig")),
        xdg.map(|x| x.join("git/config")),
    ];
    !user
        .into_iter()
        .flatten()
        .map(read)
        // More than one excludesFile: the walk may take another one than git (the last).
        .any(|c| c.contains("include") || c.matches("excludesfile").count() > 1)
}

/// Whether any replace ref exists (git would read HEAD's tree through it).
fn replaced(git: &Path) -> bool {
    let loose = std::fs::read_dir(git.join("refs/replace")).is_ok_and(|mut d| d.next().is_some());
    let packed = std::fs::read(git.join("packed-refs"))
        .is_ok_and(|b| b.windows(13).any(|w| w == b"refs/replace/"));
    loose || packed
}

/// [`super::git::plain_repository`], with a work tree this user owns too (git refuses
/// another owner's work tree even when `.git` is this user's).
fn plain_repository(root: &Path) -> Option<(PathBuf, PathBuf)> {
    let (work, git) = super::git::plain_repository(root)?;
    // SAFETY: geteuid has no preconditions.
    (std::fs::symlink_metadata(&work).ok()?.uid() == unsafe { libc::geteuid() })
        .then_some((work, git))
}

/// The tree a loose commit object names (a packed HEAD, or anything unexpected: `None`).
fn head_tree(git: &Path, head: &str) -> Option<String> {
    let path = git.join("objects").join(&head[..2]).join(&head[2..]);
    let bytes = fsread::read_regular(&path, MAX_COMMIT).ok()?;
    let raw = miniz_oxide::inflate::decompress_to_vec_zlib_with_limit(&bytes, MAX_COMMIT as usize)
        .ok()?;
    let body = raw.strip_prefix(b"commit ")?;
    let nul = body.iter().position(|&b| b == 0)?;
    let tree = body[nul + 1..].strip_prefix(b"tree ")?.get(..40)?;
    let tree = std::str::from_utf8(tree).ok()?;
    tree.bytes()
        .all(|b| b.is_ascii_hexdigit())
        .then(|| tree.to_owned())
}

#[derive(Debug)]
struct Entry {
    ctime: (u32, u32),
    mtime: (u32, u32),
    ino: u32,
    mode: u32,
    uid: u32,
    gid: u32,
    size: u32,
    path: String,
}

#[derive(Debug)]
struct Index {
    entries: Vec<Entry>,
    /// The cache-tree root's tree id, when valid.
    tree: Option<String>,
}

fn be32(b: &[u8], at: usize) -> Option<u32> {
    Some(u32::from_be_bytes(b.get(at..at + 4)?.try_into().ok()?))
}

/// An index of version 2 or 3 with SHA-1 ids; `None` for anything else (v4's compressed
/// paths, a split or sparse index, conflict stages, skip-worktree or intent-to-add entries).
fn parse(b: &[u8]) -> Option<Index> {
    if b.get(..4)? != b"DIRC" {
        return None;
    }
    let version = be32(b, 4)?;
    if version != 2 && version != 3 {
        return None;
    }
    let count = be32(b, 8)? as usize;
    let end = b.len().checked_sub(20)?;
    let mut at = 12;
    let mut entries = Vec::with_capacity(count.min(1 << 20));
    for _ in 0..count {
        let f = |i: usize| be32(b, at + 4 * i);
        let flags = u16::from_be_bytes(b.get(at + 60..at + 62)?.try_into().ok()?);
        let stage = (flags >> 12) & 3;
        let extended = flags & 0x4000 != 0;
        if stage != 0 || (extended && version < 3) {
            return None;
        }
        let mut head = 62;
        if extended {
            let extra = u16::from_be_bytes(b.get(at + 62..at + 64)?.try_into().ok()?);
            // skip-worktree, intent-to-add, or bits this does not know.
            if extra != 0 {
                return None;
            }
            head = 64;
        }
        let name = b.get(at + head..end)?;
        let len = name.iter().position(|&c| c == 0)?;
        if usize::from(flags & 0xfff) != len.min(0xfff) {
            return None;
        }
        let path = std::str::from_utf8(&name[..len]).ok()?;
        // Strictly ascending, as git writes them.
        if entries
            .last()
            .is_some_and(|p: &Entry| p.path.as_bytes() >= path.as_bytes())
        {
            return None;
        }
        if path.is_empty()
            || path
                .split('/')
                .any(|c| c.is_empty() || c == "." || c == "..")
        {
            return None;
        }
        entries.push(Entry {
            ctime: (f(0)?, f(1)?),
            mtime: (f(2)?, f(3)?),
            ino: f(5)?,
            mode: f(6)?,
            uid: f(7)?,
            gid: f(8)?,
            size: f(9)?,
            path: path.to_owned(),
        });
        // Padded with 1 to 8 NULs to a multiple of 8 from the entry's start.
        at += (head + len + 8) & !7;
        if at > end {
            return None;
        }
    }
    let mut tree = None;
    while at < end {
        let sig = b.get(at..at + 4)?;
        let size = be32(b, at + 4)? as usize;
        let data = b.get(at + 8..(at + 8).checked_add(size)?)?;
        if !sig[0].is_ascii_uppercase() {
            // A required extension (`link`, `sdir`): not read here.
            return None;
        }
        if sig == b"TREE" {
            tree = cache_tree_root(data);
        }
        at += 8 + size;
    }
    (at == end).then_some(Index { entries, tree })
}

/// The root of a `TREE` extension: `\0<entries> <subtrees>\n<20-byte id>`, entries `-1` when
/// invalidated.
fn cache_tree_root(data: &[u8]) -> Option<String> {
    let rest = data.strip_prefix(b"\0")?;
    let nl = rest.iter().position(|&c| c == b'\n')?;
    let counts = std::str::from_utf8(&rest[..nl]).ok()?;
    let entries: i64 = counts.split(' ').next()?.parse().ok()?;
    if entries < 0 {
        return None;
    }
    let id = rest.get(nl + 1..nl + 21)?;
    Some(id.iter().map(|b| format!("{b:02x}")).collect())
}

/// `Some(())` when every file of the work tree is in the index or ignored as git ignores it
/// (the work tree's `.gitignore` files, `.git/info/exclude`, the user's global excludes).
/// Any other file, a nested repository, or an entry the walk cannot read: `None`.
fn untracked_none(
    work: &Path,
    tracked: &std::collections::HashSet<PathBuf>,
    gitlinks: &[PathBuf],
) -> Option<()> {
    let git_dir = work.join(".git");
    let gitlinks: Vec<PathBuf> = gitlinks.to_vec();
    // A `[` in an ignore file (an unclosed class matches literally in the walk, nothing in
    // git): left to git.
    let bracket = |p: &Path| match std::fs::symlink_metadata(p) {
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => false,
        Err(_) => true,
        Ok(_) => fsread::read_regular(p, 1 << 20).map_or(true, |b| {
            b.split(|&c| c == b'\n')
                .any(|l| !l.starts_with(b"#") && l.contains(&b'['))
        }),
    };
    if bracket(&work.join(".git/info/exclude")) {
        return None;
    }
    let xdg = std::env::var_os("XDG_CONFIG_HOME")
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".config")));
    if xdg.is_some_and(|x| bracket(&x.join("git/ignore"))) {
        return None;
    }
    let walk = ignore::WalkBuilder::new(work)
        .current_dir(work.to_path_buf())
        .hidden(false)
        .ignore(false)
        .parents(false)
        .git_ignore(true)
        .git_exclude(true)
        .git_global(true)
        .require_git(false)
        .follow_links(false)
        .filter_entry(move |e| e.path() != git_dir && !gitlinks.iter().any(|g| g == e.path()))
        .build();
    for entry in walk {
        let entry = entry.ok()?;
        let ty = entry.file_type()?;
        // git refuses a linked ignore file; a `[` may read otherwise in the walk.
        if entry.file_name() == ".gitignore" && (ty.is_symlink() || bracket(entry.path())) {
            return None;
        }
        if ty.is_dir() {
            if entry.depth() > 0 && entry.path().join(".git").exists() {
                return None;
            }
            continue;
        }
        if !tracked.contains(entry.path()) {
            return None;
        }
    }
    Some(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::process::Command;

    fn git(dir: &Path, args: &[&str]) -> String {
        let out = Command::new("git")
            .args(["-c", "user.name=t", "-c", "user.email=t@example.invalid"])
            .args(args)
            .current_dir(dir)
            .env_remove("GIT_DIR")
            .output()
            .unwrap();
        assert!(out.status.success(), "git {args:?}");
        String::from_utf8(out.stdout).unwrap()
    }

    fn git_clean(dir: &Path) -> bool {
        git(
            dir,
            &[
                "status",
                "--porcelain=v2",
                "--untracked-files=all",
                "--ignore-submodules=all",
            ],
        )
        .is_empty()
    }

    /// A committed repository whose index is older than its files' timestamps (not racy).
    fn repo() -> tempfile::TempDir {
        let t = tempfile::tempdir().unwrap();
        let d = t.path();
        git(d, &["init", "-q", "-b", "main"]);
        std::fs::create_dir_all(d.join("src/deep")).unwrap();
        std::fs::write(d.join("a.txt"), "a\n").unwrap();
        std::fs::write(d.join("src/deep/b.txt"), "b\n").unwrap();
        std::fs::write(d.join(".gitignore"), "target/\n*.log\n").unwrap();
        std::os::unix::fs::symlink("a.txt", d.join("link")).unwrap();
        git(d, &["add", "-A"]);
        git(d, &["commit", "-qm", "one"]);
        settle(d);
        t
    }

    /// Rewrites the index after the racy window so its entries are no longer racily clean.
    fn settle(d: &Path) {
        // Into the next second: git takes an entry as racy within the index's second.
        std::thread::sleep(std::time::Duration::from_millis(1050));
        git(d, &["update-index", "--really-refresh"]);
        // A fresh index write after the files' times: `update-index` rewrites it only when
        // something changed, so force one.
        git(d, &["read-tree", "HEAD"]);
        git(d, &["update-index", "--refresh"]);
    }

    fn agrees(d: &Path) {
        let ours = proven(d).is_some();
        let theirs = git_clean(d);
        assert!(!ours || theirs, "proved clean where git status is not");
    }

    #[test]
    fn a_committed_tree_is_proven_clean_and_every_change_is_not() {
        let t = repo();
        let d = t.path();
        assert!(git_clean(d));
        assert!(proven(d).is_some(), "a settled committed tree");
        assert!(proven(&d.join("src/deep")).is_some(), "from a subdirectory");
        // Ignored files do not count.
        std::fs::create_dir_all(d.join("target/x")).unwrap();
        std::fs::write(d.join("target/x/o"), "o").unwrap();
        std::fs::write(d.join("run.log"), "l").unwrap();
        assert!(proven(d).is_some(), "ignored files");
        type Change = fn(&Path);
        let changes: &[(&str, Change)] = &[
            ("an edit of the same size", |d| {
                std::fs::write(d.join("a.txt"), "z\n").unwrap()
            }),
            ("an untracked file", |d| {
                std::fs::write(d.join("src/new.txt"), "n").unwrap()
            }),
            ("an untracked dotfile", |d| {
                std::fs::write(d.join(".env"), "n").unwrap()
            }),
            ("a deletion", |d| {
                std::fs::remove_file(d.join("src/deep/b.txt")).unwrap()
            }),
            ("a mode change", |d| {
                use std::os::unix::fs::PermissionsExt;
                std::fs::set_permissions(d.join("a.txt"), std::fs::Permissions::from_mode(0o755))
                    .unwrap()
            }),
            ("a symlink retargeted", |d| {
                std::fs::remove_file(d.join("link")).unwrap();
                std::os::unix::fs::symlink("src", d.join("link")).unwrap();
            }),
            ("a file replaced by a directory", |d| {
                std::fs::remove_file(d.join("a.txt")).unwrap();
                std::fs::create_dir(d.join("a.txt")).unwrap();
            }),
            ("a staged change", |d| {
                std::fs::write(d.join("a.txt"), "staged\n").unwrap();
                git(d, &["add", "a.txt"]);
            }),
            ("a nested repository", |d| {
                git(&d.join("src"), &["init", "-q", "inner"]);
            }),
            ("the ignore rule removed", |d| {
                std::fs::write(d.join("target.keep"), "k").unwrap();
            }),
        ];
        for (what, change) in changes {
            let t = repo();
            let d = t.path();
            std::fs::write(d.join("run.log"), "l").unwrap();
            change(d);
            assert!(!git_clean(d), "{what}: git sees it");
            assert!(proven(d).is_none(), "{what}: must not be proven clean");
        }
    }

    #[test]
    fn a_commit_of_the_change_is_clean_again_and_an_amend_of_head_alone_is_not() {
        let t = repo();
        let d = t.path();
        std::fs::write(d.join("a.txt"), "two\n").unwrap();
        git(d, &["commit", "-qam", "two"]);
        settle(d);
        assert!(proven(d).is_some());
        // HEAD moved to a commit with another tree while the index stayed: staged changes.
        git(d, &["reset", "-q", "--soft", "HEAD~1"]);
        assert!(!git_clean(d));
        assert!(proven(d).is_none());
    }

    #[test]
    fn a_fresh_index_is_racily_clean_and_left_to_git() {
        let t = tempfile::tempdir().unwrap();
        let d = t.path();
        git(d, &["init", "-q", "-b", "main"]);
        std::fs::write(d.join("a.txt"), "a").unwrap();
        git(d, &["add", "-A"]);
        git(d, &["commit", "-qm", "one"]);
        // Same-size edit right after: its stat may match in coarse clocks; racy → git decides.
        agrees(d);
    }

    #[test]
    fn layouts_it_does_not_read_are_left_to_git() {
        let t = repo();
        let d = t.path();
        git(d, &["config", "core.excludesFile", "/dev/null"]);
        assert!(
            proven(d).is_none(),
            "excludesFile in the repository's config"
        );
        let t = repo();
        let d = t.path();
        git(d, &["update-index", "--index-version", "4"]);
        assert!(proven(d).is_none(), "index v4");
        let t = repo();
        let d = t.path();
        git(d, &["gc", "-q"]);
        assert!(proven(d).is_none(), "a packed HEAD");
        let t = repo();
        let d = t.path();
        git(d, &["update-index", "--skip-worktree", "a.txt"]);
        assert!(proven(d).is_none(), "skip-worktree");
        assert!(parse(b"DIRC\0\0\0\x02\0\0\0\x05").is_none(), "a cut index");
        assert!(parse(&[0u8; 40]).is_none());
    }
}
