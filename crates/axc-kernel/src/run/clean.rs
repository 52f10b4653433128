//! Proving a work tree clean without a git process — for `status`'s one question ("was the
//! tree clean at the checkpoint and is it still?"), where one `git status` is most of the
//! command's time. The proof only ever says *clean*: every case it cannot decide the way git
//! would (a layout or index feature it does not read, a racily clean entry, any stat change,
//! any untracked file) answers `None`, and the caller asks git. Never used where a turn's
//! baseline is taken: that stays git's word.
//!
//! Clean means what `git status --porcelain=v2 --untracked-files=all` prints nothing for (as
//! the reference asks git, submodules included; a repository with any is left to git): the
//! index equals HEAD's tree (the tree its entries make, computed as `git write-tree` would, is
//! the one HEAD's commit names), every index entry's stat data matches the file (git would not
//! look at its content either) and no file outside the index escapes the ignore rules.

use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};
use std::rc::Rc;

/// Largest index read (a bigger one is left to git).
const MAX_INDEX: u64 = 64 << 20;
/// Largest loose commit object read for HEAD's tree.
const MAX_COMMIT: u64 = 1 << 20;

/// HEAD and its branch (as [`super::git::head_branch`] reads them) when the work tree holding
/// `root` is provably clean; `None`: ask git.
pub fn proven(root: &Path) -> Option<(String, Option<String>)> {
    let (home, xdg) = user_dirs()?;
    proven_for(root, home.as_deref(), xdg.as_deref())
}

/// [`proven`] for a user's home and XDG config directory.
fn proven_for(
    root: &Path,
    home: Option<&Path>,
    xdg: Option<&Path>,
) -> Option<(String, Option<String>)> {
    let (work, git) = plain_repository(root)?;
    // Read once and handed on: each read is a few system calls, and status is measured in them.
    let config = super::git::repository_config(&git)?;
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
        // `bare` spelled any way but `false` (git fails or sees no work tree).
        || config.lines().any(|l| {
            let l: String = l.split_whitespace().collect();
            l.starts_with("bare") && l != "bare=false"
        })
        || replaced(&git)
        // A config git would refuse to read, or a repository format or extension git may
        // read otherwise (or not at all): git's to say, and to fail on.
        || config.contains("extensions")
        || !plain_config(&config)
    {
        return None;
    }
    let etc = system_etc_dirs();
    let (user, configs) = user_configs(home, xdg, &etc)?;
    let (head, branch) = super::git::head_in(&git, &config)?;
    let head = head?;
    // The index itself, never one reached through a link (git would replace the link).
    if !std::fs::symlink_metadata(git.join("index")).ok()?.is_file() {
        return None;
    }
    let (file, index_meta) = fsread::open_inside(&git, Path::new("index")).ok()?;
    let bytes = fsread::read_open(file, &index_meta, &git.join("index"), MAX_INDEX).ok()?;
    let index = parse(&bytes)?;
    // The index's entries make HEAD's tree. Computed from the entries, as git compares them:
    // the cache-tree extension an agent can leave stale beside an edited entry is not taken
    // on trust.
    let tree = head_tree(&git, &head)?;
    // git cannot compare with a tree it does not have ("bad tree object HEAD").
    if tree_of(&index.entries) != tree || !has_object(&git, &tree) {
        return None;
    }
    // git built without nanosecond stat comparison (Debian's) takes an entry as racy when its
    // mtime's second is the index's or later; seconds only is right either way.
    let racy = |e: &Entry| i64::from(e.mtime.0) >= index_meta.mtime();
    // A file whose stat data git cannot trust (racy, or changed: a checkpoint committed in the
    // second its files were written leaves both) is compared by content, as git compares it:
    // the blob id of its bytes against the index's. Only where git hashes the very bytes: no
    // attributes file (tracked, in `.git/info`, the user's, or found by the walk below) and no
    // setting that converts line ends, filters or stores links as files.
    let present = |p: PathBuf| std::fs::symlink_metadata(p).is_ok();
    let may_hash = !present(git.join("info/attributes"))
        && std::env::var_os("GIT_ATTR_SOURCE").is_none()
        && !etc.iter().any(|d| present(d.join("gitattributes")))
        // git's global attributes file when no setting names one.
        && xdg.is_none_or(|x| !present(x.join("git/attributes")))
        && ![
            "autocrlf",
            "eol",
            "attributesfile",
            "filter",
            "symlinks",
            "encoding",
            "attr",
        ]
        .iter()
        .any(|k| config.contains(k) || user.contains(k))
        && !index
            .entries
            .iter()
            .any(|e| e.path.rsplit('/').next() == Some(".gitattributes"));
    let mut tracked = std::collections::HashSet::with_capacity(index.entries.len());
    let mut dirs = std::collections::HashSet::new();
    let mut attributes_checked = std::collections::HashSet::new();
    for e in &index.entries {
        // A submodule: git looks inside it (its checkout, its own changes); that is git's.
        if e.mode == 0o160000 {
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
        if e.mode != mode {
            return None;
        }
        // git keeps each field's low 32 bits.
        let same = e.mtime == (m.mtime() as u32, m.mtime_nsec() as u32)
            && e.ctime == (m.ctime() as u32, m.ctime_nsec() as u32)
            && e.ino == m.ino() as u32
            && e.uid == m.uid()
            && e.gid == m.gid()
            && e.size == m.size() as u32;
        if racy(e) || !same {
            // git reads the content only when the size agrees or the entry's is 0 (never
            // recorded, or smudged): any other size change is modified without a read.
            if e.size != 0 && e.size != m.size() as u32 {
                return None;
            }
            // An attributes file in any directory above the file (even an ignored one, which
            // the walk below never enters) may change the bytes git hashes.
            if !may_hash
                || !no_attributes_above(&work, &e.path, &mut attributes_checked)
                || !same_content(&work.join(&e.path), &m, &e.oid)
            {
                return None;
            }
        }
        tracked.insert(work.join(&e.path));
    }
    untracked_none(&work, (home, xdg), &configs, &tracked)?;
    Some((head, branch))
}

/// The directories whose system-wide files (`gitconfig`, `gitattributes`) the `git` this
/// process would run may read: `/etc`, and the `etc` of the prefix it is installed under (git
/// built with another prefix than `/usr`, as `/usr/local`, reads `<prefix>/etc`).
fn system_etc_dirs() -> Vec<PathBuf> {
    let mut dirs = vec![PathBuf::from("/etc")];
    let git = std::env::var_os("PATH").and_then(|path| {
        std::env::split_paths(&path)
            .map(|d| d.join("git"))
            .find(|g| g.is_file())
    });
    if let Some(prefix) = git
        .and_then(|g| g.canonicalize().ok())
        .and_then(|g| Some(g.parent()?.parent()?.to_path_buf()))
        .filter(|p| p != Path::new("/usr") && p != Path::new("/"))
    {
        dirs.push(prefix.join("etc"));
    }
    dirs
}

/// Whether no directory from the work tree's root down to `path`'s holds a `.gitattributes`
/// (`checked`: the directories already seen without one).
fn no_attributes_above(
    work: &Path,
    path: &str,
    checked: &mut std::collections::HashSet<String>,
) -> bool {
    let mut dir = String::new();
    let mut parts: Vec<&str> = path.split('/').collect();
    parts.pop();
    for c in std::iter::once("").chain(parts) {
        if !c.is_empty() {
            if !dir.is_empty() {
                dir.push('/');
            }
            dir.push_str(c);
        }
        if checked.contains(&dir) {
            continue;
        }
        if std::fs::symlink_metadata(work.join(&dir).join(".gitattributes")).is_ok() {
            return false;
        }
        checked.insert(dir.clone());
    }
    true
}

/// Largest file compared by content (a bigger one is left to git).
const MAX_HASHED: u64 = 8 << 20;

/// Whether the file at `path` (a regular file or a link, `meta` its own) holds the blob `oid`:
/// git's object id of its bytes (a link's: its target).
fn same_content(path: &Path, meta: &std::fs::Metadata, oid: &[u8; 20]) -> bool {
    use std::os::unix::ffi::OsStrExt;
    let bytes = if meta.file_type().is_symlink() {
        match std::fs::read_link(path) {
            Ok(t) => t.as_os_str().as_bytes().to_vec(),
            Err(_) => return false,
        }
    } else {
        match fsread::read_regular(path, MAX_HASHED) {
            Ok(b) => b,
            Err(_) => return false,
        }
    };
    object_id("blob", &bytes) == *oid
}

/// The id git gives an object of `kind` holding `body`.
fn object_id(kind: &str, body: &[u8]) -> [u8; 20] {
    use sha1::Digest;
    let mut h = sha1::Sha1::new();
    h.update(format!("{kind} {}\0", body.len()).as_bytes());
    h.update(body);
    h.finalize().into()
}

/// Where the loose object named `hex` (40 hex digits) is, relative to `.git`.
fn loose_object(hex: &str) -> Option<String> {
    Some(format!("objects/{}/{}", hex.get(..2)?, hex.get(2..)?))
}

/// The user's git config files as read once, each as written (empty when absent): the XDG
/// one (`git/config`) and `~/.gitconfig`, in the order git reads them.
struct UserConfigs {
    xdg: String,
    home: String,
}

/// A git config file's text: empty when it is absent, `None` when it is there but not read
/// whole (not a regular file, over 1 MiB, not UTF-8), which leaves the answer to git.
fn read_config(path: &Path) -> Option<String> {
    match fsread::read_regular(path, 1 << 20) {
        Ok(b) => String::from_utf8(b).ok(),
        Err(e) if e.is_missing() => Some(String::new()),
        Err(_) => None,
    }
}

/// The system and user git configs (lowercased, one after the other) when they say nothing
/// the ignore walk would read otherwise than git: an `include` (the walk does not follow one)
/// or a system `core.excludesFile` (git prefers it over the user's default excludes file when
/// the user sets none); `None` otherwise. The user's files are handed back as read.
fn user_configs(
    home: Option<&Path>,
    xdg: Option<&Path>,
    etc: &[PathBuf],
) -> Option<(String, UserConfigs)> {
    let mut system = String::new();
    for d in etc {
        system.push_str(&read_config(&d.join("gitconfig"))?.to_ascii_lowercase());
    }
    if system.contains("include") || system.contains("excludesfile") {
        return None;
    }
    let read = |p: Option<PathBuf>| p.map_or(Some(String::new()), |p| read_config(&p));
    let configs = UserConfigs {
        xdg: read(xdg.map(|x| x.join("git/config")))?,
        home: read(home.map(|h| h.join(".gitconfig")))?,
    };
    let mut all = system;
    for c in [&configs.home, &configs.xdg] {
        let c = c.to_ascii_lowercase();
        // More than one excludesFile: the walk may take another one than git (the last).
        if c.contains("include") || c.matches("excludesfile").count() > 1 {
            return None;
        }
        all.push('\n');
        all.push_str(&c);
    }
    Some((all, configs))
}

/// The user's home and XDG config directory as git takes them (an empty `XDG_CONFIG_HOME` is
/// unset, and the XDG directory is then `~/.config`); `None` when either is empty or relative
/// (git would resolve it from where it runs, this from where it runs).
fn user_dirs() -> Option<(Option<PathBuf>, Option<PathBuf>)> {
    let xdg = std::env::var_os("XDG_CONFIG_HOME").filter(|x| !x.is_empty());
    user_dirs_from(std::env::var_os("HOME"), xdg)
}

fn user_dirs_from(
    home: Option<std::ffi::OsString>,
    xdg: Option<std::ffi::OsString>,
) -> Option<(Option<PathBuf>, Option<PathBuf>)> {
    let home = home.map(PathBuf::from);
    let xdg = xdg.map(PathBuf::from);
    if home.iter().chain(&xdg).any(|p| !p.is_absolute()) {
        return None;
    }
    let xdg = xdg.or_else(|| home.as_ref().map(|h| h.join(".config")));
    Some((home, xdg))
}

/// Whether any replace ref exists (git would read HEAD's tree through it).
/// Also when `packed-refs` is there but not read (not a regular file, over 64 MiB): git may
/// read it otherwise.
fn replaced(git: &Path) -> bool {
    let loose = std::fs::read_dir(git.join("refs/replace")).is_ok_and(|mut d| d.next().is_some());
    let packed = match fsread::read_inside(git, Path::new("packed-refs"), 64 << 20) {
        Ok(b) => b.windows(13).any(|w| w == b"refs/replace/"),
        Err(e) => !e.is_missing(),
    };
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

/// The tree a loose commit object names (a packed HEAD, or anything unexpected: `None`). The
/// object must hash to its name: git reads a packed copy first, so a loose file under that
/// name with other content would be read here and never by git.
fn head_tree(git: &Path, head: &str) -> Option<[u8; 20]> {
    use sha1::Digest;
    let bytes = fsread::read_inside(git, Path::new(&loose_object(head)?), MAX_COMMIT).ok()?;
    let raw = miniz_oxide::inflate::decompress_to_vec_zlib_with_limit(&bytes, MAX_COMMIT as usize)
        .ok()?;
    if hex(&sha1::Sha1::digest(&raw)) != head {
        return None;
    }
    let body = raw.strip_prefix(b"commit ")?;
    let nul = body.iter().position(|&b| b == 0)?;
    let tree = body[nul + 1..].strip_prefix(b"tree ")?.get(..40)?;
    let mut id = [0u8; 20];
    for (i, pair) in tree.chunks(2).enumerate() {
        id[i] = u8::from_str_radix(std::str::from_utf8(pair).ok()?, 16).ok()?;
    }
    Some(id)
}

/// Whether the lowercased repository config `config` is one git reads as this reads it: every
/// line blank, a comment, a whole section header, or a plain `key` / `key = value` (no
/// continued line), and any `repositoryformatversion` 0 or 1.
fn plain_config(config: &str) -> bool {
    config.lines().all(|line| {
        let t = line.trim();
        if t.is_empty() || t.starts_with('#') || t.starts_with(';') {
            return true;
        }
        if t.starts_with('[') {
            return t.ends_with(']') && t.matches('[').count() == 1 && t.matches(']').count() == 1;
        }
        if t.ends_with('\\') {
            return false;
        }
        let (key, value) = match t.split_once('=') {
            Some((k, v)) => (k.trim(), Some(v.trim())),
            None => (t, None),
        };
        let key_ok = key.starts_with(|c: char| c.is_ascii_alphabetic())
            && key.chars().all(|c| c.is_ascii_alphanumeric() || c == '-');
        key_ok && (key != "repositoryformatversion" || matches!(value, Some("0" | "1")))
    })
}

/// Whether the object `id` is in the repository: loose, or in a pack's index (version 2,
/// searched with a few reads, never read whole). The empty tree git always has. Anything this
/// does not read (alternates, an older pack index) says no: git's to say.
fn has_object(git: &Path, id: &[u8; 20]) -> bool {
    use std::os::unix::fs::FileExt;
    const EMPTY_TREE: &str = "4b825dc642cb6eb9a060e54bf8d69288fbee4904";
    let name = hex(id);
    if name == EMPTY_TREE {
        return true;
    }
    if loose_object(&name)
        .is_some_and(|rel| std::fs::symlink_metadata(git.join(rel)).is_ok_and(|m| m.is_file()))
    {
        return true;
    }
    if std::fs::symlink_metadata(git.join("objects/info/alternates")).is_ok() {
        return false;
    }
    let Ok(packs) = std::fs::read_dir(git.join("objects/pack")) else {
        return false;
    };
    let in_index = |rel: &str| -> Option<bool> {
        let (file, meta) = fsread::open_inside(git, Path::new(rel)).ok()?;
        let mut head = [0u8; 8 + 256 * 4];
        file.read_exact_at(&mut head, 0).ok()?;
        if head[..8] != [0xff, b't', b'O', b'c', 0, 0, 0, 2] {
            return None;
        }
        let fan = |i: usize| be32(&head, 8 + 4 * i).map(|n| n as u64);
        let first = id[0] as usize;
        let (mut lo, mut hi) = (if first == 0 { 0 } else { fan(first - 1)? }, fan(first)?);
        let total = fan(255)?;
        if hi > total || meta.len() < 8 + 1024 + total * 20 {
            return None;
        }
        let mut probe = [0u8; 20];
        while lo < hi {
            let mid = lo + (hi - lo) / 2;
            file.read_exact_at(&mut probe, 8 + 1024 + mid * 20).ok()?;
            match probe.cmp(id) {
                std::cmp::Ordering::Equal => return Some(true),
                std::cmp::Ordering::Less => lo = mid + 1,
                std::cmp::Ordering::Greater => hi = mid,
            }
        }
        Some(false)
    };
    let mut found = false;
    for entry in packs.flatten() {
        let file = entry.file_name();
        let Some(file) = file.to_str().filter(|f| f.ends_with(".idx")) else {
            continue;
        };
        match in_index(&format!("objects/pack/{file}")) {
            Some(true) => found = true,
            Some(false) => {}
            None => return false,
        }
    }
    found
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// The id of the tree the index `entries` make (what `git write-tree` would write): each
/// directory's entries in index order, which is git's tree order (a directory sorts as its
/// name and a slash, as its entries' full paths do in the index).
fn tree_of(entries: &[Entry]) -> [u8; 20] {
    fn tree(entries: &[Entry], prefix: usize) -> [u8; 20] {
        let mut body = Vec::new();
        let mut i = 0;
        while i < entries.len() {
            let rest = &entries[i].path[prefix..];
            match rest.find('/') {
                None => {
                    body.extend_from_slice(format!("{:o} {rest}\0", entries[i].mode).as_bytes());
                    body.extend_from_slice(&entries[i].oid);
                    i += 1;
                }
                Some(k) => {
                    let dir = &rest[..=k];
                    let end = i + entries[i..]
                        .iter()
                        .take_while(|e| e.path[prefix..].starts_with(dir))
                        .count();
                    let id = tree(&entries[i..end], prefix + k + 1);
                    body.extend_from_slice(format!("40000 {}\0", &rest[..k]).as_bytes());
                    body.extend_from_slice(&id);
                    i = end;
                }
            }
        }
        object_id("tree", &body)
    }
    tree(entries, 0)
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
    oid: [u8; 20],
    path: String,
}

#[derive(Debug)]
struct Index {
    entries: Vec<Entry>,
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
            oid: b.get(at + 40..at + 60)?.try_into().ok()?,
            path: path.to_owned(),
        });
        // Padded with 1 to 8 NULs to a multiple of 8 from the entry's start.
        at += (head + len + 8) & !7;
        if at > end {
            return None;
        }
    }
    while at < end {
        let sig = b.get(at..at + 4)?;
        let size = be32(b, at + 4)? as usize;
        // Optional extensions (the cache-tree, resolve-undo, ...) are skipped whole: what
        // they say is worked out from the entries. A required one (`link`, `sdir`) is not
        // read here.
        b.get(at + 8..(at + 8).checked_add(size)?)?;
        if !sig[0].is_ascii_uppercase() {
            return None;
        }
        at += 8 + size;
    }
    (at == end).then_some(Index { entries })
}

/// `Some(())` when every file of the work tree is in the index or ignored as git ignores it
/// (`None`: a file that is neither, or a case left to git).
///
/// The walk is written here rather than taken from `ignore::WalkBuilder` for a measured
/// reason: the builder's setup (its global-config regex, file-type tables, a thread pool
/// sized from cgroups) was a third of `status`'s own time. Each ignore file is matched by
/// [`Rules`] (the `ignore` crate's gitignore matcher, or bytes compared for plain patterns), in
/// git's order: the deepest directory's `.gitignore` first, then `.git/info/exclude`, then the
/// user's excludes file. An ignored directory is not entered, as git does not.
fn untracked_none(
    work: &Path,
    (home, xdg): (Option<&Path>, Option<&Path>),
    configs: &UserConfigs,
    tracked: &std::collections::HashSet<PathBuf>,
) -> Option<()> {
    // One ignore file's rules, its patterns relative to `dir`; `None` when it is not a plain
    // file git would read, or holds a `[` (an unclosed class matches literally in the
    // matcher, nothing in git).
    let matcher = |dir: &Path, file: &Path| -> Option<Option<Rules>> {
        match std::fs::symlink_metadata(file) {
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Some(None),
            Err(_) => return None,
            // git refuses a linked ignore file.
            Ok(m) if !m.is_file() => return None,
            Ok(_) => {}
        }
        let text = fsread::read_regular(file, 1 << 20).ok()?;
        // Also a backslash or `//` (the crate reads `\/` and `**//` otherwise than git), and a
        // brace (the crate's globs take `{a,b}` as alternatives, git as the characters).
        if text.split(|&c| c == b'\n').any(|l| {
            !l.starts_with(b"#")
                && (l.iter().any(|c| matches!(c, b'[' | b'\\' | b'{' | b'}'))
                    || l.windows(2).any(|w| w == b"//"))
        }) {
            return None;
        }
        Rules::new(dir, file, &text).map(Some)
    };
    let exclude = matcher(work, &work.join(".git/info/exclude"))?;
    let global = match excludes_file(home, xdg, configs)? {
        Some(file) => matcher(work, &file)?,
        None => None,
    };
    let git_dir = work.join(".git");
    // Directories to read, each with the matchers of its own and its parents' `.gitignore`,
    // deepest last.
    let mut todo: Vec<(PathBuf, Vec<Rc<Rules>>)> = vec![(work.to_path_buf(), Vec::new())];
    while let Some((dir, mut chain)) = todo.pop() {
        if let Some(own) = matcher(&dir, &dir.join(".gitignore"))? {
            chain.push(Rc::new(own));
        }
        let ignored = |path: &Path, is_dir: bool| {
            chain
                .iter()
                .rev()
                .map(|r| &**r)
                .chain(&exclude)
                .chain(&global)
                .find_map(|r| r.matched(path, is_dir))
                == Some(true)
        };
        for entry in std::fs::read_dir(&dir).ok()? {
            let entry = entry.ok()?;
            let path = entry.path();
            let ty = entry.file_type().ok()?;
            if ty.is_dir() {
                if path == git_dir || ignored(&path, true) {
                    continue;
                }
                // A repository inside: git's rules for it are not these.
                if path.join(".git").exists() {
                    return None;
                }
                todo.push((path, chain.clone()));
            } else if !tracked.contains(&path) && !ignored(&path, false) {
                return None;
            }
        }
    }
    Some(())
}

/// One ignore file's rules.
///
/// A file of plain names and paths only (the scaffold's `.gitignore` is one) is matched by
/// comparing bytes, as git's `match_basename` / `match_pathname` compare a pattern without
/// wildcards: building the `ignore` crate's matcher for it (a glob set, regexes) was half of
/// the walk's time. Anything else in the file (a wildcard, a negation, an escape, blanks
/// around a pattern, a carriage return) sends the whole file to the `ignore` crate's matcher.
enum Rules {
    Literal {
        base: PathBuf,
        /// Patterns without a slash (but a trailing one): a name at any depth below `base`.
        names: Vec<(Vec<u8>, bool)>,
        /// Patterns with a slash: a path relative to `base`. Each with whether only a
        /// directory matches (a trailing slash).
        paths: Vec<(Vec<u8>, bool)>,
    },
    Glob(ignore::gitignore::Gitignore),
}

impl Rules {
    fn new(base: &Path, file: &Path, text: &[u8]) -> Option<Rules> {
        Rules::literal(base, text).or_else(|| {
            let mut b = ignore::gitignore::GitignoreBuilder::new(base);
            if b.add(file).is_some() {
                return None;
            }
            b.build().ok().map(Rules::Glob)
        })
    }

    /// The plain-pattern form, when every line is one.
    fn literal(base: &Path, text: &[u8]) -> Option<Rules> {
        let (mut names, mut paths) = (Vec::new(), Vec::new());
        for line in text.split(|&c| c == b'\n') {
            if line.is_empty() || line.starts_with(b"#") {
                continue;
            }
            let plain = line.iter().all(|&c| {
                c > b' ' && !matches!(c, b'*' | b'?' | b'[' | b']' | b'\\' | b'!' | 0x7f)
            });
            if !plain {
                return None;
            }
            let (pattern, dir_only) = match line.strip_suffix(b"/") {
                Some(p) => (p, true),
                None => (line, false),
            };
            let (pattern, anchored) = match pattern.strip_prefix(b"/") {
                Some(p) => (p, true),
                None => (pattern, false),
            };
            if pattern.is_empty()
                || pattern
                    .split(|&c| c == b'/')
                    .any(|c| c.is_empty() || c == b"." || c == b"..")
            {
                return None;
            }
            if anchored || pattern.contains(&b'/') {
                paths.push((pattern.to_vec(), dir_only));
            } else {
                names.push((pattern.to_vec(), dir_only));
            }
        }
        Some(Rules::Literal {
            base: base.to_path_buf(),
            names,
            paths,
        })
    }

    /// `Some(true)` ignored, `Some(false)` re-included (a negation), `None`: no rule says.
    fn matched(&self, path: &Path, is_dir: bool) -> Option<bool> {
        use std::os::unix::ffi::OsStrExt;
        match self {
            Rules::Glob(g) => match g.matched(path, is_dir) {
                ignore::Match::None => None,
                ignore::Match::Ignore(_) => Some(true),
                ignore::Match::Whitelist(_) => Some(false),
            },
            Rules::Literal { base, names, paths } => {
                let rel = path.strip_prefix(base).ok()?.as_os_str().as_bytes();
                let name = path.file_name()?.as_bytes();
                let hit = |rules: &[(Vec<u8>, bool)], what: &[u8]| {
                    rules
                        .iter()
                        .any(|(p, dir_only)| p == what && (is_dir || !dir_only))
                };
                (hit(names, name) || hit(paths, rel)).then_some(true)
            }
        }
    }
}

/// The user's excludes file as git finds it, for a home and an XDG config directory (`core.excludesFile` in `~/.gitconfig` or
/// `$XDG_CONFIG_HOME/git/config`, the former winning, else `$XDG_CONFIG_HOME/git/ignore`);
/// `Some(None)` when there is none; `None` when a setting is written in a way this does not
/// read as git would (left to git). [`user_configs`] has already refused includes, a
/// system setting and more than one setting in a file.
fn excludes_file(
    home: Option<&Path>,
    xdg: Option<&Path>,
    configs: &UserConfigs,
) -> Option<Option<PathBuf>> {
    let mut found = None;
    // git reads the XDG file first, then ~/.gitconfig: the last setting wins.
    for text in [&configs.xdg, &configs.home] {
        let mut section = String::new();
        for line in text.lines() {
            let line = line.trim();
            // A continued line (its value goes on below) is not read here.
            if line.ends_with('\\') {
                return None;
            }
            if let Some(rest) = line.strip_prefix('[') {
                let (name, after) = rest.split_once(']')?;
                // A setting on the header's line is not read here.
                let after = after.trim();
                if !(after.is_empty() || after.starts_with(['#', ';'])) {
                    return None;
                }
                section = name.trim().to_ascii_lowercase();
                continue;
            }
            let (key, value) = line.split_once('=').unwrap_or((line, ""));
            if !key.trim().eq_ignore_ascii_case("excludesfile") {
                if line.to_ascii_lowercase().contains("excludesfile") {
                    return None;
                }
                continue;
            }
            let value = value.trim();
            let value = value
                .strip_prefix('"')
                .and_then(|v| v.strip_suffix('"'))
                .unwrap_or(value);
            if section != "core" || value.is_empty() || value.contains(['\\', '"', ';', '#']) {
                return None;
            }
            let path = match value.strip_prefix("~/") {
                Some(rest) => home?.join(rest),
                None => PathBuf::from(value),
            };
            if !path.is_absolute() {
                return None;
            }
            found = Some(path);
        }
    }
    Some(found.or_else(|| xdg.map(|x| x.join("git/ignore"))))
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

    /// A repository whose `a.txt` the index cannot vouch for (committed in the second it was
    /// written, then touched): git compares its content.
    fn fresh(files: &[(&str, &str)], config: &[(&str, &str)]) -> tempfile::TempDir {
        let t = tempfile::tempdir().unwrap();
        let d = t.path();
        git(d, &["init", "-q", "-b", "main"]);
        for (k, v) in config {
            git(d, &["config", k, v]);
        }
        for (f, text) in files {
            std::fs::write(d.join(f), text).unwrap();
        }
        std::os::unix::fs::symlink("a.txt", d.join("link")).unwrap();
        git(d, &["add", "-A"]);
        git(d, &["commit", "-qm", "one"]);
        // Racy, or (when the commit crossed into the next second) a stat change: either way
        // the index cannot vouch for `a.txt`.
        let f = std::fs::File::options()
            .write(true)
            .open(d.join("a.txt"))
            .unwrap();
        f.set_modified(std::time::SystemTime::now() + std::time::Duration::from_secs(5))
            .unwrap();
        t
    }

    #[test]
    fn a_tree_committed_as_its_files_were_written_is_judged_by_their_content() {
        // (`proven` first: `git status` rewrites the index with fresh stat data.)
        let t = fresh(&[("a.txt", "a\n"), ("b.txt", "b\n")], &[]);
        assert!(proven(t.path()).is_some(), "unchanged content");
        assert!(git_clean(t.path()));
        // The same size, the same second: only the content tells.
        let t = fresh(&[("a.txt", "a\n"), ("b.txt", "b\n")], &[]);
        std::fs::write(t.path().join("a.txt"), "z\n").unwrap();
        assert!(proven(t.path()).is_none(), "an edit of the same size");
        assert!(!git_clean(t.path()));
        // A link retargeted to a name of the same length.
        let t = fresh(&[("a.txt", "a\n"), ("b.txt", "b\n")], &[]);
        std::fs::remove_file(t.path().join("link")).unwrap();
        std::os::unix::fs::symlink("b.txt", t.path().join("link")).unwrap();
        assert!(proven(t.path()).is_none(), "a link retargeted");
        assert!(!git_clean(t.path()));
        // Where git would hash other bytes than the file's, the answer is git's.
        type Pairs = &'static [(&'static str, &'static str)];
        let cases: &[(&str, Pairs, Pairs)] = &[
            (
                "a tracked attributes file",
                &[("a.txt", "a\n"), (".gitattributes", "*.txt text\n")],
                &[],
            ),
            (
                "line-end conversion",
                &[("a.txt", "a\n")],
                &[("core.autocrlf", "input")],
            ),
            (
                "links stored as files",
                &[("a.txt", "a\n")],
                &[("core.symlinks", "false")],
            ),
        ];
        for (what, files, config) in cases {
            let t = fresh(files, config);
            assert!(proven(t.path()).is_none(), "{what}");
        }
        let t = fresh(&[("a.txt", "a\n"), (".gitignore", ".gitattributes\n")], &[]);
        std::fs::write(t.path().join(".gitattributes"), "*.txt eol=crlf\n").unwrap();
        assert!(proven(t.path()).is_none(), "an ignored attributes file");
        let t = fresh(&[("a.txt", "a\n")], &[]);
        std::fs::write(t.path().join(".git/info/attributes"), "*.txt -text\n").unwrap();
        assert!(proven(t.path()).is_none(), "info/attributes");
        // The user's attributes file, read by git with no setting naming it.
        let t = fresh(&[("a.txt", "a\n")], &[]);
        let home = tempfile::tempdir().unwrap();
        let xdg = home.path().join(".config");
        std::fs::create_dir_all(xdg.join("git")).unwrap();
        assert!(proven_for(t.path(), Some(home.path()), Some(&xdg)).is_some());
        std::fs::write(xdg.join("git/attributes"), "*.txt eol=crlf\n").unwrap();
        assert!(
            proven_for(t.path(), Some(home.path()), Some(&xdg)).is_none(),
            "the user's attributes file"
        );
    }

    #[test]
    fn a_touched_file_of_the_same_content_is_clean_as_git_says() {
        let t = repo();
        let d = t.path();
        let f = std::fs::File::options()
            .write(true)
            .open(d.join("a.txt"))
            .unwrap();
        f.set_modified(std::time::SystemTime::now() + std::time::Duration::from_secs(5))
            .unwrap();
        drop(f);
        assert!(proven(d).is_some(), "only the stat data changed");
        assert!(git_clean(d));
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

    /// The plain-pattern matcher says what the `ignore` crate's matcher (a full gitignore
    /// implementation) says, for every pattern form it takes, on paths that match and paths
    /// that only look alike.
    #[test]
    fn plain_patterns_match_as_the_gitignore_matcher_does() {
        let base = Path::new("/w/sub");
        let text = b"# comment\n\nTALK.md\n.env\n.agentxchain/state.json\n.agentxchain/staging/\n/top\nlogs/\n/anch/dir/\na.b-c_d\n";
        let Some(plain) = Rules::literal(base, text) else {
            panic!("plain patterns");
        };
        let mut b = ignore::gitignore::GitignoreBuilder::new(base);
        for line in std::str::from_utf8(text).unwrap().lines() {
            b.add_line(None, line).unwrap();
        }
        let glob = Rules::Glob(b.build().unwrap());
        let paths = [
            "TALK.md",
            "x/TALK.md",
            "x/y/TALK.md",
            "TALK.mdx",
            "xTALK.md",
            "TALK.md/z",
            ".env",
            "d/.env",
            ".env.local",
            ".agentxchain/state.json",
            "x/.agentxchain/state.json",
            ".agentxchain/state.json.bak",
            ".agentxchain",
            ".agentxchain/staging",
            "x/.agentxchain/staging",
            ".agentxchain/staging2",
            "top",
            "x/top",
            "topx",
            "logs",
            "x/logs",
            "logsx",
            "anch/dir",
            "x/anch/dir",
            "anch",
            "a.b-c_d",
            "q/a.b-c_d",
        ];
        for p in paths {
            for is_dir in [false, true] {
                let path = base.join(p);
                assert_eq!(
                    plain.matched(&path, is_dir),
                    glob.matched(&path, is_dir),
                    "{p} (dir: {is_dir})"
                );
            }
        }
        // Anything else is the gitignore matcher's.
        for other in [
            &b"*.log\n"[..],
            b"!keep\n",
            b"a\\ b\n",
            b" lead\n",
            b"trail \n",
            b"cr\r\n",
            b"a?c\n",
            b"//\n",
            b"/\n",
            b"a//b\n",
            b"./a\n",
            b"a/../b\n",
            b"\x7f\n",
        ] {
            assert!(Rules::literal(base, other).is_none(), "{other:?}");
        }
    }

    #[test]
    fn a_tree_ignored_by_plain_patterns_is_proven_as_git_sees_it() {
        let t = tempfile::tempdir().unwrap();
        let d = t.path();
        git(d, &["init", "-q", "-b", "main"]);
        std::fs::create_dir_all(d.join("src/.agentxchain")).unwrap();
        std::fs::write(d.join("a.txt"), "a\n").unwrap();
        std::fs::write(d.join("src/b.txt"), "b\n").unwrap();
        std::fs::write(
            d.join(".gitignore"),
            "TALK.md\n.agentxchain/state.json\n.agentxchain/staging/\n/build\ncache/\n",
        )
        .unwrap();
        std::fs::write(d.join("src/.gitignore"), "local.txt\n").unwrap();
        git(d, &["add", "-A"]);
        git(d, &["commit", "-qm", "one"]);
        settle(d);
        std::fs::create_dir_all(d.join(".agentxchain/staging/t")).unwrap();
        std::fs::write(d.join(".agentxchain/staging/t/r.json"), "{}").unwrap();
        std::fs::write(d.join(".agentxchain/state.json"), "{}").unwrap();
        std::fs::write(d.join("src/TALK.md"), "t").unwrap();
        std::fs::write(d.join("src/local.txt"), "l").unwrap();
        std::fs::create_dir_all(d.join("build/o")).unwrap();
        std::fs::write(d.join("build/o/x"), "x").unwrap();
        std::fs::create_dir_all(d.join("src/cache")).unwrap();
        std::fs::write(d.join("src/cache/f"), "f").unwrap();
        assert!(git_clean(d));
        assert!(proven(d).is_some(), "every untracked file is ignored");
        type Change = fn(&Path);
        let lookalikes: &[(&str, Change)] = &[
            ("an anchored path one level down", |d| {
                std::fs::write(d.join("src/.agentxchain/state.json"), "{}").unwrap()
            }),
            ("a longer name", |d| {
                std::fs::write(d.join(".agentxchain/state.json.bak"), "{}").unwrap()
            }),
            ("an anchored name below the root", |d| {
                std::fs::create_dir_all(d.join("src/build")).unwrap();
                std::fs::write(d.join("src/build/x"), "x").unwrap();
            }),
            ("a subdirectory's rule above it", |d| {
                std::fs::write(d.join("local.txt"), "l").unwrap()
            }),
            ("a directory-only rule on a file", |d| {
                std::fs::create_dir_all(d.join("x")).unwrap();
                std::fs::write(d.join("x/cache"), "f").unwrap();
            }),
        ];
        for (what, change) in lookalikes {
            change(d);
            assert!(!git_clean(d), "{what}: git sees it");
            assert!(proven(d).is_none(), "{what}: must not be proven clean");
            git(d, &["clean", "-qfd"]);
            std::fs::remove_dir_all(d.join("x")).ok();
            assert!(git_clean(d), "{what}: cleaned up");
        }
    }

    #[test]
    fn the_users_excludes_file_is_found_as_git_finds_it() {
        let t = tempfile::tempdir().unwrap();
        let (home, xdg) = (t.path().join("h"), t.path().join("x"));
        std::fs::create_dir_all(xdg.join("git")).unwrap();
        std::fs::create_dir_all(&home).unwrap();
        let find = || {
            let (_, configs) = user_configs(Some(&home), Some(&xdg), &[])?;
            excludes_file(Some(&home), Some(&xdg), &configs)
        };
        assert_eq!(find(), Some(Some(xdg.join("git/ignore"))), "the default");
        std::fs::write(
            xdg.join("git/config"),
            "[core]\n\texcludesFile = /etc/x-ignore\n",
        )
        .unwrap();
        assert_eq!(find(), Some(Some(PathBuf::from("/etc/x-ignore"))));
        std::fs::write(
            home.join(".gitconfig"),
            "[user]\n\tname = a\n[core]\n  ExcludesFile = \"~/.gi\"\n",
        )
        .unwrap();
        assert_eq!(
            find(),
            Some(Some(home.join(".gi"))),
            "~/.gitconfig is read last"
        );
        for unread in [
            "[user]\n\texcludesfile = /a\n",
            "[core]\n\texcludesfile = rel/path\n",
            "[core]\n\texcludesfile = \"/a\\\"b\"\n",
            "[core]\n\texcludesfile = /a ; comment\n",
            "[core]\n\texcludesfile\n",
            "[core]\n\texcludesfile.x = /a\n",
            // A setting on the header's line, and a continued line: git reads them.
            "[core] excludesFile = /a\n",
            "[core]\n\tpager = less \\\n\texcludesFile = /a\n",
        ] {
            std::fs::write(home.join(".gitconfig"), unread).unwrap();
            assert_eq!(find(), None, "{unread:?}");
        }
    }

    #[test]
    fn home_and_xdg_are_taken_as_git_takes_them() {
        use std::ffi::OsString;
        let o = |s: &str| Some(OsString::from(s));
        assert_eq!(
            user_dirs_from(o("/h"), None),
            Some((Some("/h".into()), Some("/h/.config".into())))
        );
        assert_eq!(
            user_dirs_from(o("/h"), o("/x")),
            Some((Some("/h".into()), Some("/x".into())))
        );
        assert_eq!(user_dirs_from(None, None), Some((None, None)));
        // Resolved from where git runs: not decided here.
        assert_eq!(user_dirs_from(o("/h"), o("rel")), None);
        assert_eq!(user_dirs_from(o(""), None), None);
        assert_eq!(user_dirs_from(o("h"), None), None);
    }

    #[test]
    fn ignore_lines_the_matcher_reads_otherwise_than_git_are_left_to_git() {
        for line in ["\\/\n", "build\\/\n", "**//\n", "\\#x\n"] {
            let t = repo();
            let d = t.path();
            std::fs::write(d.join(".git/info/exclude"), line).unwrap();
            std::fs::create_dir_all(d.join("src2")).unwrap();
            std::fs::write(d.join("src2/new.rs"), "n").unwrap();
            assert!(!git_clean(d), "{line:?}: git sees it");
            assert!(proven(d).is_none(), "{line:?}");
        }
    }

    #[test]
    fn an_index_entry_edited_beside_a_stale_cache_tree_is_not_clean() {
        // An agent rewrites one entry's blob id (and the index checksum) and leaves the
        // cache-tree naming HEAD's tree: git compares the entries, so must this.
        let t = repo();
        let d = t.path();
        assert!(proven(d).is_some());
        let other = git(d, &["hash-object", "-w", "--stdin"]);
        let other: Vec<u8> = (0..20)
            .map(|i| u8::from_str_radix(&other.trim()[2 * i..2 * i + 2], 16).unwrap())
            .collect();
        let mut index = std::fs::read(d.join(".git/index")).unwrap();
        assert!(
            index.windows(4).any(|w| w == b"TREE"),
            "a cache-tree to leave stale"
        );
        let name = index.windows(6).position(|w| w == b"a.txt\0").unwrap();
        index[name - 22..name - 2].copy_from_slice(&other);
        let body = index.len() - 20;
        let sum: [u8; 20] = {
            use sha1::Digest;
            sha1::Sha1::digest(&index[..body]).into()
        };
        index[body..].copy_from_slice(&sum);
        std::fs::write(d.join(".git/index"), &index).unwrap();
        assert!(!git_clean(d), "git sees the staged change");
        assert_eq!(proven(d), None);
    }

    #[test]
    fn a_loose_commit_that_is_not_what_its_name_says_is_not_read() {
        // git reads a packed commit before a loose file of the same name: a forged loose
        // copy naming another tree must not be believed.
        let t = repo();
        let d = t.path();
        git(d, &["gc", "-q"]);
        let head = git(d, &["rev-parse", "HEAD"]).trim().to_owned();
        let git_dir = d.join(".git");
        assert!(
            !git_dir
                .join(format!("objects/{}/{}", &head[..2], &head[2..]))
                .exists()
        );
        let empty = "4b825dc642cb6eb9a060e54bf8d69288fbee4904";
        let body =
            format!("tree {empty}\nauthor t <t> 0 +0000\ncommitter t <t> 0 +0000\n\nforged\n");
        let raw = format!("commit {}\0{body}", body.len());
        let packed = miniz_oxide::deflate::compress_to_vec_zlib(raw.as_bytes(), 6);
        std::fs::create_dir_all(git_dir.join(format!("objects/{}", &head[..2]))).unwrap();
        std::fs::write(
            git_dir.join(format!("objects/{}/{}", &head[..2], &head[2..])),
            packed,
        )
        .unwrap();
        assert_eq!(head_tree(&git_dir, &head), None);
    }

    #[test]
    fn a_repository_git_cannot_read_is_left_to_git() {
        // git refuses these (a broken config line, a format or extension it may not know, a
        // HEAD whose tree is gone): the proof must not say clean where git says nothing.
        type Break = fn(&Path);
        let breaks: &[(&str, Break)] = &[
            ("a broken section header", |d| {
                let c = d.join(".git/config");
                let text = std::fs::read_to_string(&c).unwrap();
                std::fs::write(c, text + "[core\n").unwrap();
            }),
            ("repository format 2", |d| {
                git(d, &["config", "core.repositoryformatversion", "2"]);
            }),
            ("an unknown extension", |d| {
                git(d, &["config", "core.repositoryformatversion", "1"]);
                git(d, &["config", "extensions.frobnicate", "true"]);
            }),
            ("HEAD's tree gone", |d| {
                // Everything packed, then only the commit written back loose and the pack
                // removed: the commit reads, its tree does not exist.
                let raw = git(d, &["cat-file", "commit", "HEAD"]);
                let head = git(d, &["rev-parse", "HEAD"]).trim().to_owned();
                git(d, &["gc", "-q"]);
                for e in std::fs::read_dir(d.join(".git/objects/pack")).unwrap() {
                    std::fs::remove_file(e.unwrap().path()).unwrap();
                }
                let obj = format!("commit {}\0{raw}", raw.len());
                let dir = d.join(format!(".git/objects/{}", &head[..2]));
                std::fs::create_dir_all(&dir).unwrap();
                std::fs::write(
                    dir.join(&head[2..]),
                    miniz_oxide::deflate::compress_to_vec_zlib(obj.as_bytes(), 6),
                )
                .unwrap();
            }),
            ("a submodule deleted", |d| {
                let head = git(d, &["rev-parse", "HEAD"]).trim().to_owned();
                std::fs::create_dir(d.join("sub")).unwrap();
                git(
                    d,
                    &[
                        "update-index",
                        "--add",
                        "--cacheinfo",
                        &format!("160000,{head},sub"),
                    ],
                );
                git(d, &["commit", "-qm", "sub"]);
                settle(d);
                std::fs::remove_dir(d.join("sub")).unwrap();
            }),
        ];
        for (what, f) in breaks {
            let t = repo();
            assert!(proven(t.path()).is_some(), "{what}: clean before");
            f(t.path());
            assert_eq!(proven(t.path()), None, "{what}");
        }
    }

    #[test]
    fn a_brace_in_an_ignore_line_is_left_to_git() {
        // The matcher's globs read `{log,tmp}` as alternatives; git reads the characters.
        let t = repo();
        let d = t.path();
        std::fs::write(d.join(".git/info/exclude"), "*.{log,tmp}\n").unwrap();
        std::fs::write(d.join("x.tmp"), "x").unwrap();
        assert!(!git_clean(d), "git shows x.tmp");
        assert_eq!(proven(d), None);
    }

    #[test]
    fn a_packed_refs_that_is_no_file_is_never_read_whole() {
        // /dev/zero behind a link would be read until memory ran out, a FIFO waited on.
        for which in ["zero", "fifo"] {
            let t = repo();
            let packed = t.path().join(".git/packed-refs");
            std::fs::remove_file(&packed).ok();
            if which == "zero" {
                std::os::unix::fs::symlink("/dev/zero", &packed).unwrap();
            } else {
                let c = std::ffi::CString::new(packed.to_str().unwrap()).unwrap();
                // SAFETY: mkfifo(3) reads the NUL-terminated path and touches nothing else.
                assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o644) }, 0);
            }
            let root = t.path().to_owned();
            let (tx, rx) = std::sync::mpsc::channel();
            std::thread::spawn(move || tx.send(proven(&root)));
            let answer = rx.recv_timeout(std::time::Duration::from_secs(10));
            assert_eq!(answer, Ok(None), "{which}");
        }
    }

    #[test]
    fn a_config_that_is_a_fifo_is_never_waited_on() {
        // An agent can put a FIFO where `.git/config` is; the user's files are named too. Each
        // read must refuse it at once (leaving the answer to git, which is bounded) rather
        // than wait forever for a writer.
        let mkfifo = |p: &Path| {
            let c = std::ffi::CString::new(p.to_str().unwrap()).unwrap();
            // SAFETY: mkfifo(3) reads the NUL-terminated path and touches nothing else.
            assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o644) }, 0);
        };
        for which in ["repository", "home", "xdg"] {
            let t = repo();
            let home = tempfile::tempdir().unwrap();
            let xdg = home.path().join(".config");
            std::fs::create_dir_all(xdg.join("git")).unwrap();
            assert!(proven_for(t.path(), Some(home.path()), Some(&xdg)).is_some());
            let fifo = match which {
                "repository" => t.path().join(".git/config"),
                "home" => home.path().join(".gitconfig"),
                _ => xdg.join("git/config"),
            };
            std::fs::remove_file(&fifo).ok();
            mkfifo(&fifo);
            let (root, h, x) = (t.path().to_owned(), home.path().to_owned(), xdg.clone());
            let (tx, rx) = std::sync::mpsc::channel();
            std::thread::spawn(move || tx.send(proven_for(&root, Some(&h), Some(&x))));
            let answer = rx.recv_timeout(std::time::Duration::from_secs(10));
            assert_eq!(answer, Ok(None), "{which}: a FIFO config");
        }
    }

    #[test]
    fn the_system_config_git_reads_is_among_those_read() {
        let theirs = git(Path::new("/"), &["var", "GIT_CONFIG_SYSTEM"]);
        let theirs = PathBuf::from(theirs.trim());
        let ours: Vec<PathBuf> = system_etc_dirs()
            .iter()
            .map(|d| d.join("gitconfig"))
            .collect();
        assert!(ours.contains(&theirs), "{theirs:?} not in {ours:?}");
    }

    #[test]
    fn content_is_not_compared_where_git_would_not_compare_it() {
        // A size other than the entry's: modified, without a read (the bytes equal the blob).
        let t = tempfile::tempdir().unwrap();
        let d = t.path();
        git(d, &["init", "-q", "-b", "main"]);
        std::fs::write(d.join("a.txt"), "a\nb\n").unwrap();
        git(d, &["add", "-A"]);
        git(d, &["commit", "-qm", "one"]);
        std::fs::write(d.join(".git/info/attributes"), "*.txt eol=crlf\n").unwrap();
        std::fs::remove_file(d.join("a.txt")).unwrap();
        git(d, &["checkout", "--", "a.txt"]);
        settle(d);
        std::fs::remove_file(d.join(".git/info/attributes")).unwrap();
        std::fs::write(d.join("a.txt"), "a\nb\n").unwrap();
        assert!(proven(d).is_none(), "a size change");
        assert!(!git_clean(d));
        // An attributes file in an ignored directory above a file compared by content.
        let t = tempfile::tempdir().unwrap();
        let d = t.path();
        git(d, &["init", "-q", "-b", "main"]);
        std::fs::create_dir_all(d.join("gen")).unwrap();
        std::fs::write(d.join(".gitignore"), "gen/\n").unwrap();
        std::fs::write(d.join("gen/a.txt"), "a\r\n").unwrap();
        git(d, &["add", "-A"]);
        git(d, &["add", "-f", "gen/a.txt"]);
        git(d, &["commit", "-qm", "one"]);
        // Compared by content whatever the clock did meanwhile: a stat change the index cannot
        // vouch for (the commit may or may not have crossed into the next second; when it did,
        // the entry was not racy and nothing was compared — the test failed under load).
        std::fs::File::options()
            .write(true)
            .open(d.join("gen/a.txt"))
            .unwrap()
            .set_modified(std::time::SystemTime::now() + std::time::Duration::from_secs(5))
            .unwrap();
        std::fs::write(d.join("gen/.gitattributes"), "* text\n").unwrap();
        assert!(proven(d).is_none(), "an ignored attributes file above");
        // The attributes read from a tree (`attr.tree`).
        let t = fresh(&[("a.txt", "a\n")], &[("attr.tree", "HEAD")]);
        assert!(proven(t.path()).is_none(), "attr.tree");
    }
}
