//! The tree a read looks at: the working tree, or a commit read from the local object store
//! (`--at`, and the base revision trust is read from). Reads only: nothing here writes, and
//! git runs with replace refs off, so `git replace` cannot make a commit show other files.

use std::io::{Seek, Write};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use crate::error::{Result, WsError};

/// Whether `p` is a workspace path a pin may name: `/` separators, no leading `/`, no `.` or
/// `..` segment, no trailing `/`.
pub fn pin_path_ok(p: &str) -> bool {
    !p.is_empty()
        && !p.starts_with('/')
        && !p.ends_with('/')
        && !p.contains('\\')
        && !p.contains('\0')
        && p.split('/').all(|s| !s.is_empty() && s != "." && s != "..")
}

/// A git command in `dir`, replace refs off, no pager, and no file system monitor: a
/// repository's `core.fsmonitor` names a program git would run for `status`, and a read is
/// no reason to run what the project's config names.
pub fn git(dir: &Path) -> Command {
    let mut cmd = Command::new("git");
    cmd.arg("-C")
        .arg(dir)
        .args(["-c", "core.fsmonitor=false"])
        .env("GIT_NO_REPLACE_OBJECTS", "1")
        .env("GIT_TERMINAL_PROMPT", "0")
        .stdin(Stdio::null());
    cmd
}

/// `git <args>` in `dir`: its stdout when it exits 0.
pub fn git_out(dir: &Path, args: &[&str]) -> Option<Vec<u8>> {
    let out = git(dir).args(args).stderr(Stdio::null()).output().ok()?;
    out.status.success().then_some(out.stdout)
}

/// The top of the git work tree holding `dir`, if any: the nearest directory with a `.git`
/// (a directory, or a file naming a linked worktree's or a submodule's git directory). Found on
/// the filesystem, without a process per question (reads ask it several times, and each spawn
/// costs milliseconds).
///
/// Everything read "at base" is read from this top, so a `.git` file is believed only when it
/// names a git directory of its own: a linked worktree's (whose `gitdir` names this file back)
/// or a submodule's. One naming the git directory of a repository around it (`gitdir:
/// ../.git`, one line an agent can write) would make a subdirectory read the base's trust
/// files from the wrong place; it is passed over, and the walk goes on up.
pub fn toplevel(dir: &Path) -> Option<PathBuf> {
    let dir = std::fs::canonicalize(dir).ok()?;
    let tops: Vec<&Path> = dir.ancestors().filter(|d| is_top(d)).collect();
    // A top inside another repository whose HEAD tracks that directory's files is a directory
    // of that repository, however its `.git` reads (a forged worktree, or a git directory
    // borrowing the outer one's objects and refs): the repository that tracks it is the top.
    // A submodule (a commit in the outer tree) or an untracked worktree stays a top.
    let mut at = 0;
    while at + 1 < tops.len() {
        let (inner, outer) = (tops[at], tops[at + 1]);
        let rel = inner
            .strip_prefix(outer)
            .ok()
            .and_then(Path::to_str)
            .unwrap_or("");
        let spec = format!("HEAD:{rel}");
        let tracked = !rel.is_empty()
            && !rel.contains('\n')
            && git_out(outer, &["cat-file", "-t", &spec]).is_some_and(|t| t == b"tree\n");
        if !tracked {
            break;
        }
        at += 1;
    }
    tops.get(at).map(|d| d.to_path_buf())
}

/// Whether `d` is the top of a work tree (see [`toplevel`]).
fn is_top(d: &Path) -> bool {
    let dot = d.join(".git");
    let Ok(meta) = std::fs::symlink_metadata(&dot) else {
        return false;
    };
    if meta.is_dir() {
        return true;
    }
    if !meta.is_file() || meta.len() > 4096 {
        return false;
    }
    let Some(named) = std::fs::read_to_string(&dot)
        .ok()
        .and_then(|t| t.trim().strip_prefix("gitdir: ").map(PathBuf::from))
    else {
        return false;
    };
    let named = if named.is_absolute() {
        named
    } else {
        d.join(named)
    };
    let Ok(git_dir) = std::fs::canonicalize(&named) else {
        return false;
    };
    // The git directory of a repository around `d`: not a top of its own.
    if d.ancestors()
        .skip(1)
        .any(|a| std::fs::canonicalize(a.join(".git")).is_ok_and(|g| g == git_dir))
    {
        return false;
    }
    // A linked worktree's directory names its `.git` file back.
    if git_dir.join("commondir").exists() {
        return std::fs::read_to_string(git_dir.join("gitdir"))
            .ok()
            .and_then(|t| std::fs::canonicalize(t.trim()).ok())
            .is_some_and(|back| back == dot);
    }
    true
}

/// The full commit id `rev` names in the repository at `top`.
pub fn resolve(top: &Path, rev: &str) -> Option<String> {
    if rev.starts_with('-') || rev.is_empty() {
        return None;
    }
    let spec = format!("{rev}^{{commit}}");
    let out = git_out(
        top,
        &[
            "rev-parse",
            "--verify",
            "--quiet",
            "--end-of-options",
            &spec,
        ],
    )?;
    let s = String::from_utf8(out).ok()?;
    // A full object id and nothing else (`^main` resolves to `^<id>`, a negation, not a commit).
    let id = s.trim();
    ((id.len() == 40 || id.len() == 64) && id.bytes().all(|b| b.is_ascii_hexdigit()))
        .then(|| id.to_owned())
}

/// A directory entry: its name and whether it is a file (else a directory or something else).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Entry {
    pub name: String,
    pub file: bool,
}

#[derive(Debug, Clone)]
pub enum Tree {
    /// The working tree.
    Work,
    /// A commit of the repository whose work tree starts at `top`.
    Rev { top: PathBuf, commit: String },
}

impl Tree {
    /// The commit `rev` of the repository holding `dir`: `not-a-git-repository` outside one,
    /// `revision-unknown` (or `code`) when `rev` names no commit.
    pub fn at(dir: &Path, rev: &str, code: &'static str) -> Result<Tree> {
        let top = toplevel(dir).ok_or_else(|| {
            WsError::new(
                "not-a-git-repository",
                format!(
                    "{} is in no git repository, so there is no revision {rev} to read; drop the revision, or run it inside the repository",
                    dir.display()
                ),
            )
        })?;
        let commit = resolve(&top, rev).ok_or_else(|| {
            WsError::new(
                code,
                format!(
                    "{rev} names no commit in {}; give a branch, tag or commit id it has",
                    top.display()
                ),
            )
        })?;
        Ok(Tree::Rev { top, commit })
    }

    pub fn commit(&self) -> Option<&str> {
        match self {
            Tree::Work => None,
            Tree::Rev { commit, .. } => Some(commit),
        }
    }

    /// `path` (absolute, under the work tree) as a path inside the commit.
    fn inner(top: &Path, path: &Path) -> Option<String> {
        let rel = path.strip_prefix(top).ok()?;
        let s = rel.to_str()?.to_owned();
        Some(s)
    }

    /// The entries of the directory `dir` (absolute), sorted by name; `None` when there is no
    /// directory there.
    pub fn list(&self, dir: &Path) -> Option<Vec<Entry>> {
        match self {
            Tree::Work => {
                let rd = std::fs::read_dir(dir).ok()?;
                let mut out: Vec<Entry> = rd
                    .filter_map(|e| {
                        let e = e.ok()?;
                        let name = e.file_name().into_string().ok()?;
                        // A link is followed only to see whether it is a file; the reader
                        // checks where it leads before reading it.
                        let kind = e.file_type().ok()?;
                        let file = kind.is_file() || (kind.is_symlink() && e.path().is_file());
                        Some(Entry { name, file })
                    })
                    .collect();
                out.sort_by(|a, b| a.name.cmp(&b.name));
                Some(out)
            }
            Tree::Rev { top, commit } => {
                let inner = Self::inner(top, dir)?;
                // The top is the commit's tree (the commit itself is no tree).
                let spec = if inner.is_empty() {
                    format!("{commit}^{{tree}}")
                } else {
                    format!("{commit}:{inner}")
                };
                // ls-tree fails on what is not a tree (a blob, nothing): no directory there.
                let out = git_out(top, &["ls-tree", "-z", &spec])?;
                let mut entries: Vec<Entry> = out
                    .split(|b| *b == 0)
                    .filter(|l| !l.is_empty())
                    .filter_map(|l| {
                        let l = std::str::from_utf8(l).ok()?;
                        let (meta, name) = l.split_once('\t')?;
                        let mut m = meta.split(' ');
                        let mode = m.next()?;
                        let kind = m.next()?;
                        Some(Entry {
                            name: name.to_owned(),
                            file: kind == "blob" && mode != "120000",
                        })
                    })
                    .collect();
                entries.sort_by(|a, b| a.name.cmp(&b.name));
                Some(entries)
            }
        }
    }

    /// The bytes of each of `paths` (absolute), `None` for one that is no file.
    pub fn read_many(&self, paths: &[PathBuf]) -> Vec<Option<Vec<u8>>> {
        match self {
            Tree::Work => paths.iter().map(|p| read_file(p)).collect(),
            Tree::Rev { top, commit } => {
                let mut input = String::new();
                let mut asked = Vec::new();
                for p in paths {
                    match Self::inner(top, p) {
                        Some(i) if !i.contains('\n') => {
                            input.push_str(&format!("{commit}:{i}\n"));
                            asked.push(true);
                        }
                        _ => asked.push(false),
                    }
                }
                // Sizes first: a blob larger than MAX_FILE is not read, as in the working tree
                // (a commit can hold a record of gigabytes that packs into a few bytes).
                let info = batch_info(top, &input);
                let mut small = String::new();
                let mut fits = Vec::new();
                for (line, i) in input.lines().zip(info) {
                    let ok = i.is_some_and(|(kind, n)| kind == "blob" && n <= MAX_FILE);
                    if ok {
                        small.push_str(line);
                        small.push('\n');
                    }
                    fits.push(ok);
                }
                let mut read = cat_batch(top, &small).into_iter();
                let answers: Vec<Option<Vec<u8>>> = fits
                    .into_iter()
                    .map(|ok| if ok { read.next().flatten() } else { None })
                    .collect();
                let mut answers = answers.into_iter();
                asked
                    .into_iter()
                    .map(|a| if a { answers.next().flatten() } else { None })
                    .collect()
            }
        }
    }

    /// Whether anything (a file, a directory, a link) is at each of `paths` (absolute): one
    /// process for them all at a revision.
    pub fn exists_many(&self, paths: &[PathBuf]) -> Vec<bool> {
        match self {
            Tree::Work => paths.iter().map(|p| p.symlink_metadata().is_ok()).collect(),
            Tree::Rev { top, commit } => {
                let mut input = String::new();
                let mut asked = Vec::new();
                for p in paths {
                    match Self::inner(top, p) {
                        Some(i) if !i.is_empty() && !i.contains('\n') => {
                            input.push_str(&format!("{commit}:{i}\n"));
                            asked.push(true);
                        }
                        _ => asked.push(false),
                    }
                }
                let mut info = batch_info(top, &input).into_iter();
                asked
                    .into_iter()
                    .map(|a| a && info.next().flatten().is_some())
                    .collect()
            }
        }
    }

    pub fn read(&self, path: &Path) -> Option<Vec<u8>> {
        self.read_many(std::slice::from_ref(&path.to_path_buf()))
            .pop()
            .flatten()
    }
}

/// Files larger than this are not read as records or pins' targets are still hashed by stream.
pub const MAX_FILE: u64 = 16 * 1024 * 1024;

/// The bytes of the regular file at `p`, at most [`MAX_FILE`]: opened without waiting (a FIFO
/// is no file), judged by the open handle's own metadata, read to its size.
fn read_file(p: &Path) -> Option<Vec<u8>> {
    read_open(open_file(p)?)
}

fn open_file(p: &Path) -> Option<std::fs::File> {
    use std::os::unix::fs::OpenOptionsExt;
    std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NONBLOCK)
        .open(p)
        .ok()
}

fn read_open(mut f: std::fs::File) -> Option<Vec<u8>> {
    use std::io::Read;
    let meta = f.metadata().ok()?;
    if !meta.is_file() || meta.len() > MAX_FILE {
        return None;
    }
    let mut bytes = Vec::with_capacity(meta.len() as usize + 1);
    Read::by_ref(&mut f)
        .take(MAX_FILE + 1)
        .read_to_end(&mut bytes)
        .ok()?;
    (bytes.len() as u64 <= MAX_FILE).then_some(bytes)
}

/// Reads the files directly in one directory, judged inside once: the directory is opened and
/// its place checked on the open handle, then each file is opened relative to it without
/// following a link (`openat`, `O_NOFOLLOW`), so no swap of a name or of the directory lets a
/// read leave it; a name that is a link is read by [`read_inside`], its target judged as opened.
/// One check for the directory, not one a file: a records read opens thousands.
pub struct DirReader {
    dir: std::fs::File,
    path: PathBuf,
    root: PathBuf,
}

impl DirReader {
    /// The directory `dir` when it lies inside `root` (resolved) once opened.
    pub fn open(dir: &Path, root: &Path) -> Option<DirReader> {
        use std::os::fd::AsRawFd;
        use std::os::unix::fs::OpenOptionsExt;
        let f = std::fs::OpenOptions::new()
            .read(true)
            .custom_flags(libc::O_DIRECTORY | libc::O_NONBLOCK)
            .open(dir)
            .ok()?;
        let opened = std::fs::read_link(format!("/proc/self/fd/{}", f.as_raw_fd())).ok()?;
        opened.starts_with(root).then(|| DirReader {
            dir: f,
            path: dir.to_path_buf(),
            root: root.to_path_buf(),
        })
    }

    /// The file `name` of this directory.
    pub fn read(&self, name: &std::ffi::OsStr) -> std::result::Result<Vec<u8>, Unread> {
        use std::os::fd::{AsRawFd, FromRawFd};
        use std::os::unix::ffi::OsStrExt;
        let Ok(c) = std::ffi::CString::new(name.as_bytes()) else {
            return Err(Unread::Unreadable);
        };
        if name.as_bytes().contains(&b'/') {
            return Err(Unread::Unreadable);
        }
        // SAFETY: openat with a valid directory descriptor and a NUL-terminated name; the
        // descriptor it returns is owned by the File made from it.
        let fd = unsafe {
            libc::openat(
                self.dir.as_raw_fd(),
                c.as_ptr(),
                libc::O_RDONLY | libc::O_NONBLOCK | libc::O_NOFOLLOW | libc::O_CLOEXEC,
            )
        };
        if fd < 0 {
            return match std::io::Error::last_os_error().raw_os_error() {
                // A link: its target is judged on what opening it finds.
                Some(libc::ELOOP) => read_inside(&self.path.join(name), &self.root),
                _ => Err(Unread::Unreadable),
            };
        }
        // SAFETY: `fd` was just opened and is owned by nothing else.
        let f = unsafe { std::fs::File::from_raw_fd(fd) };
        read_open(f).ok_or(Unread::Unreadable)
    }
}

/// Why [`read_inside`] read nothing.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Unread {
    /// What was opened is outside `root` (a link, or a path swapped for one).
    Outside,
    /// Missing, not a regular file, unreadable, or larger than [`MAX_FILE`].
    Unreadable,
}

/// The bytes of the working-tree file at `p` when what was opened lies inside `root` (resolved
/// already). The place is judged on the open file itself (`/proc/self/fd`), never on the path
/// before it is opened: a file swapped for a link between a check and the open, or a directory
/// swapped for one, cannot make a read print a file outside.
pub fn read_inside(p: &Path, root: &Path) -> std::result::Result<Vec<u8>, Unread> {
    use std::os::fd::AsRawFd;
    let f = open_file(p).ok_or(Unread::Unreadable)?;
    let opened = std::fs::read_link(format!("/proc/self/fd/{}", f.as_raw_fd()))
        .or_else(|_| std::fs::canonicalize(p))
        .map_err(|_| Unread::Unreadable)?;
    if !opened.starts_with(root) {
        return Err(Unread::Outside);
    }
    read_open(f).ok_or(Unread::Unreadable)
}

/// `git cat-file --batch` answers for each line of `input`: the blob's bytes, or `None`.
/// The kind and size of each object `input` names (one `<rev>:<path>` a line), `None` for
/// one that is not there.
fn batch_info(top: &Path, input: &str) -> Vec<Option<(String, u64)>> {
    let n = input.lines().count();
    if n == 0 {
        return Vec::new();
    }
    let Some(file) = stdin_file(input) else {
        return vec![None; n];
    };
    let out = git(top)
        .args(["cat-file", "--batch-check"])
        .stdin(file)
        .stderr(Stdio::null())
        .output();
    let text = out.map(|o| o.stdout).unwrap_or_default();
    let text = String::from_utf8_lossy(&text);
    let mut info: Vec<Option<(String, u64)>> = text
        .lines()
        .map(|l| {
            let p: Vec<&str> = l.split(' ').collect();
            match p[..] {
                [_, kind, size] => Some((kind.to_owned(), size.parse().ok()?)),
                _ => None,
            }
        })
        .collect();
    info.resize(n, None);
    info
}

/// `input` in a file to give a child as its standard input: no pipe, so a child that exits
/// before reading it all raises no SIGPIPE here (a one-shot command dies of that).
pub fn stdin_file(input: &str) -> Option<Stdio> {
    let mut f = tempfile::tempfile().ok()?;
    f.write_all(input.as_bytes()).ok()?;
    f.seek(std::io::SeekFrom::Start(0)).ok()?;
    Some(Stdio::from(f))
}

fn cat_batch(top: &Path, input: &str) -> Vec<Option<Vec<u8>>> {
    let n = input.lines().count();
    if n == 0 {
        return Vec::new();
    }
    let Some(file) = stdin_file(input) else {
        return vec![None; n];
    };
    let out = git(top)
        .args(["cat-file", "--batch"])
        .stdin(file)
        .stderr(Stdio::null())
        .output()
        .map(|o| o.stdout)
        .unwrap_or_default();
    let mut answers = Vec::with_capacity(n);
    let mut at = 0;
    while answers.len() < n && at < out.len() {
        let Some(nl) = out[at..].iter().position(|b| *b == b'\n') else {
            break;
        };
        let header = String::from_utf8_lossy(&out[at..at + nl]).into_owned();
        at += nl + 1;
        let parts: Vec<&str> = header.split(' ').collect();
        if parts.len() == 3 && parts[1] == "blob" {
            let size: usize = parts[2].parse().unwrap_or(0);
            let end = (at + size).min(out.len());
            answers.push(Some(out[at..end].to_vec()));
            at = end + 1;
        } else if parts.len() == 3 {
            // Another kind of object (a tree): its bytes are skipped.
            let size: usize = parts[2].parse().unwrap_or(0);
            at = (at + size + 1).min(out.len());
            answers.push(None);
        } else {
            answers.push(None);
        }
    }
    answers.resize(n, None);
    answers
}

/// The commit HEAD names in the repository whose work tree starts at `top`, read from its
/// files (a write never runs git): `None` before the first commit, or when HEAD is in a form
/// this does not read (then a write records no revision rather than a wrong one).
pub fn head_commit(top: &Path) -> Option<String> {
    // Each of these files is a line (packed-refs a few lines a ref): a regular file read up to a
    // bound, never a link to a device or a FIFO, which would never end.
    let small = |p: &Path, max: u64| -> Option<String> {
        use std::io::Read;
        let meta = std::fs::symlink_metadata(p).ok()?;
        if !meta.is_file() {
            return None;
        }
        let mut text = String::new();
        std::fs::File::open(p)
            .ok()?
            .take(max)
            .read_to_string(&mut text)
            .ok()?;
        Some(text)
    };
    let dot = top.join(".git");
    // A linked worktree or a submodule: `.git` is a file naming the git directory.
    let git_dir = if dot.is_file() {
        let text = small(&dot, 4096)?;
        let d = PathBuf::from(text.trim().strip_prefix("gitdir: ")?);
        if d.is_absolute() { d } else { top.join(d) }
    } else {
        dot
    };
    let common = match small(&git_dir.join("commondir"), 4096).ok_or(()) {
        Ok(c) => git_dir.join(c.trim()),
        Err(_) => git_dir.clone(),
    };
    let hex =
        |s: &str| (s.len() == 40 || s.len() == 64) && s.bytes().all(|b| b.is_ascii_hexdigit());
    let head = small(&git_dir.join("HEAD"), 4096)?;
    let head = head.trim();
    let Some(name) = head.strip_prefix("ref: ") else {
        return hex(head).then(|| head.to_owned());
    };
    if !name.starts_with("refs/") || name.split('/').any(|p| p.is_empty() || p == "..") {
        return None;
    }
    for dir in [&git_dir, &common] {
        if let Some(v) = small(&dir.join(name), 4096) {
            let v = v.trim();
            return hex(v).then(|| v.to_owned());
        }
    }
    let packed = small(&common.join("packed-refs"), 64 << 20)?;
    packed.lines().find_map(|l| {
        let (sha, r) = l.split_once(' ')?;
        (r == name && hex(sha)).then(|| sha.to_owned())
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The place is judged on what was opened: a link out, a path through a linked directory,
    /// a FIFO (opened without waiting) are not read.
    #[test]
    fn read_inside_reads_only_regular_files_inside() {
        let tmp = tempfile::tempdir().unwrap();
        let base = std::fs::canonicalize(tmp.path()).unwrap();
        let (root, outside) = (base.join("ws"), base.join("out"));
        std::fs::create_dir_all(root.join("d")).unwrap();
        std::fs::create_dir_all(&outside).unwrap();
        std::fs::write(root.join("d/a.md"), "inside").unwrap();
        std::fs::write(outside.join("secret.md"), "secret").unwrap();
        std::os::unix::fs::symlink(outside.join("secret.md"), root.join("d/link.md")).unwrap();
        std::os::unix::fs::symlink(&outside, root.join("linked")).unwrap();
        std::os::unix::fs::symlink(root.join("d/a.md"), root.join("d/inner.md")).unwrap();
        let fifo = root.join("d/fifo.md");
        assert!(
            Command::new("mkfifo")
                .arg(&fifo)
                .status()
                .unwrap()
                .success()
        );
        assert_eq!(read_inside(&root.join("d/a.md"), &root).unwrap(), b"inside");
        assert_eq!(
            read_inside(&root.join("d/inner.md"), &root).unwrap(),
            b"inside"
        );
        assert_eq!(
            read_inside(&root.join("d/link.md"), &root),
            Err(Unread::Outside)
        );
        assert_eq!(
            read_inside(&root.join("linked/secret.md"), &root),
            Err(Unread::Outside)
        );
        assert_eq!(read_inside(&fifo, &root), Err(Unread::Unreadable));
        assert_eq!(
            read_inside(&root.join("d/none.md"), &root),
            Err(Unread::Unreadable)
        );
        // The same through one directory handle.
        let d = DirReader::open(&root.join("d"), &root).unwrap();
        let name = |n: &str| std::ffi::OsString::from(n);
        assert_eq!(d.read(&name("a.md")).unwrap(), b"inside");
        assert_eq!(d.read(&name("inner.md")).unwrap(), b"inside");
        assert_eq!(d.read(&name("link.md")), Err(Unread::Outside));
        assert_eq!(d.read(&name("fifo.md")), Err(Unread::Unreadable));
        assert_eq!(d.read(&name("../d/a.md")), Err(Unread::Unreadable));
        assert!(DirReader::open(&root.join("linked"), &root).is_none());
    }
}
