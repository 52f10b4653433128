//! The `chant/lifecycle` ledger branch, driven through the git CLI's plumbing.
//!
//! Owns reading and writing files on a branch without touching any work tree: exact-bytes
//! blobs (`hash-object -w --stdin`), trees rebuilt bottom-up with `mktree`, commits with
//! `commit-tree`, and a compare-and-swap `update-ref` with retries. Reads always see the whole
//! tree, whatever the current directory. Local writers are serialized with an advisory file lock
//! (released even when a writer is killed), and the compare-and-swap protects against everyone
//! else. Every git command is spawned with an argument vector, never through a shell. It knows
//! nothing of what the files mean (runs, gates, snapshots), beyond what [`merge`] needs to join
//! two sides of a split.
//!
//! A clone is one copy of a shared ledger: the branch on the remote is the ledger everyone
//! sees. Reads and writes start from the latest tip this clone knows (its own branch, or the
//! remote-tracking `refs/remotes/<remote>/chant/lifecycle` when that is ahead or the branch is
//! missing, as in a fresh clone); when both moved they are joined by [`merge`]. Pushes are
//! never forced: a push the remote refuses is fetched, merged and tried again, so no write
//! drops a commit the remote has.

use std::fs::File;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use thiserror::Error;

mod lines;
pub mod merge;
mod reader;

pub use lines::{Line, NOT_UTF8, lines, numbered};
pub use reader::{Entry, Flow, Kind, MAX_FILE_BYTES, MAX_RECORD_BYTES, Reader, Visitor};

/// The ledger branch.
pub const BRANCH: &str = "chant/lifecycle";
pub const REF: &str = "refs/heads/chant/lifecycle";
const ZERO: &str = "0000000000000000000000000000000000000000";
const MAX_ATTEMPTS: usize = 5;
/// Pushes race other clones over the network, so they retry longer, with a growing pause.
const PUSH_ATTEMPTS: u32 = 10;

/// A pause before retry `attempt` of a push: 10 ms times the attempt, plus up to as much
/// again of jitter (from the clock's nanoseconds), so two clones racing each other drift apart.
fn backoff(attempt: u32) {
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.subsec_nanos());
    let base = 10 * u64::from(attempt);
    let jitter = u64::from(nanos) % (base + 1);
    std::thread::sleep(std::time::Duration::from_millis(base + jitter));
}

#[derive(Debug, Error)]
pub enum LedgerError {
    #[error("Not in a git repository")]
    NotARepository,
    #[error("git {args}: {message}")]
    Git { args: String, message: String },
    #[error("could not update {REF} after {MAX_ATTEMPTS} attempts: other writers kept moving it")]
    Contended,
    #[error("invalid ledger path \"{0}\"")]
    InvalidPath(String),
    #[error(
        "{refname} points at a {kind}, not a commit, so it is no ledger chant can read or extend; look at it with `git cat-file -p {refname}`, then point it back at the last ledger commit (`git update-ref {refname} <commit>`) or delete it (`git update-ref -d {refname}`)"
    )]
    NotACommit { refname: String, kind: String },
    #[error(
        "{refname} is a symbolic ref to {target}, which chant does not follow (what it reads and writes must be the branch itself); point it at a commit with `git update-ref --no-deref {refname} <commit>`"
    )]
    SymbolicRef { refname: String, target: String },
    #[error(
        "chant/lifecycle at {commit} holds a tree entry named \"{path}\" (empty, `.`, `..` or with a `/`), which chant never writes and git refuses to check out; find the last good commit with `git log chant/lifecycle` and reset the branch to it with `git update-ref refs/heads/chant/lifecycle <commit>`"
    )]
    BadEntry { commit: String, path: String },
    #[error(
        "chant/lifecycle at {commit} nests trees more than {MAX_MERGE_DEPTH} deep (at \"{path}\"), which chant never writes, so the two sides were not joined; find the last good commit with `git log chant/lifecycle` and reset the branch to it with `git update-ref refs/heads/chant/lifecycle <commit>`"
    )]
    TooDeep { commit: String, path: String },
    #[error(
        "{var} is set in the environment (\"{value}\"), which would point git at another repository's chant/lifecycle ledger; chant refuses rather than guess. Unset {var} and run chant from inside the repository whose ledger you mean"
    )]
    Redirected { var: &'static str, value: String },
    #[error(
        "{path} on chant/lifecycle is {size} bytes, more than the {max} a ledger file may be, so it was not read"
    )]
    TooLarge { path: String, size: u64, max: u64 },
    #[error(
        "chant/lifecycle at {commit} holds a file at \"{path}\" where this write needs a directory, so nothing was written (replacing the file would drop what it holds); an Op or environment named like an earlier release's ledger file (\"<op>.jsonl\") does this: rename it"
    )]
    NotADirectory { commit: String, path: String },
    #[error(
        "chant/lifecycle at {commit} holds a directory at \"{path}\" where this write needs a file, so nothing was written (replacing it would drop what it holds)"
    )]
    NotAFile { commit: String, path: String },
    #[error("{remote} refused chant/lifecycle: {message}")]
    PushRefused { remote: String, message: String },
    #[error("{0}")]
    Io(#[from] std::io::Error),
}

/// Environment variables that make git use another repository, object store or ref space than
/// the one the directory is in. [`Ledger::open`] refuses when any is set: honouring them
/// silently would read and write some other repository's ledger.
const REDIRECTS: [&str; 6] = [
    "GIT_DIR",
    "GIT_WORK_TREE",
    "GIT_COMMON_DIR",
    "GIT_NAMESPACE",
    "GIT_OBJECT_DIRECTORY",
    "GIT_REPLACE_REF_BASE",
];

/// A git command for this ledger: `git -C <toplevel>`, with replace refs (`git replace`, which
/// would make a read return another object than the one a ref names) switched off.
fn git_command(toplevel: &Path) -> Command {
    let mut cmd = Command::new("git");
    cmd.arg("-C")
        .arg(toplevel)
        .env("GIT_NO_REPLACE_OBJECTS", "1");
    cmd
}

/// A repository's ledger branch.
#[derive(Clone, Debug)]
pub struct Ledger {
    toplevel: PathBuf,
    git_dir: PathBuf,
    /// Where the refs are (the main repository's `.git` for a worktree).
    common_dir: PathBuf,
    /// The directory on the branch every path of this ledger is under (`""`: the top): a
    /// workspace member's `_members/<member>` (see [`Ledger::scoped`]).
    scope: String,
}

/// The stat of every file that holds or lists the ledger's refs (see [`Ledger::refs_stamp`]).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RefsStamp(Vec<(PathBuf, Option<fsread::Stamp>)>);

fn check_path(path: &str) -> Result<Vec<&str>, LedgerError> {
    let parts: Vec<&str> = path.split('/').collect();
    let ok = !path.is_empty()
        && parts
            .iter()
            .all(|p| !p.is_empty() && *p != "." && *p != ".." && !p.contains(['\0', '\n', '\t']));
    if ok {
        Ok(parts)
    } else {
        Err(LedgerError::InvalidPath(path.to_owned()))
    }
}

/// What [`Ledger::read_path`] found: the tree listings down the path (the top, then each
/// directory above its last part), and the object at the path itself (`(kind, bytes)`).
type PathRead = (Vec<Vec<String>>, Option<(String, Vec<u8>)>);

/// This clone's branch, and the remote-tracking copy `(remote, commit)` of the remote's.
#[derive(Debug, Default)]
struct Tips {
    local: Option<String>,
    tracking: Option<(String, String)>,
}

/// Where a read or write starts ([`Ledger::resolve`]).
#[derive(Debug)]
struct Resolved {
    /// The local branch's value (`None`: no branch yet).
    local: Option<String>,
    /// The commit to read, and to build on.
    base: Option<String>,
}

/// `cat-file --batch` output: per object `<sha> <type> <size>\n<bytes>\n`, or `<name>
/// missing\n`; `(sha, type, bytes)` per request.
#[allow(clippy::type_complexity)]
fn parse_batch(
    out: &[u8],
    count: usize,
) -> Result<Vec<Option<(String, String, Vec<u8>)>>, LedgerError> {
    let bad = |what: &str| LedgerError::Git {
        args: "cat-file --batch".into(),
        message: what.into(),
    };
    let mut objects = Vec::with_capacity(count);
    let mut rest = out;
    for _ in 0..count {
        let nl = rest
            .iter()
            .position(|b| *b == b'\n')
            .ok_or_else(|| bad("truncated header"))?;
        let header = String::from_utf8_lossy(&rest[..nl]).into_owned();
        let fields: Vec<&str> = header.split(' ').collect();
        let size = match fields[..] {
            [sha, kind, size] => size
                .parse::<usize>()
                .ok()
                .map(|n| (sha.to_owned(), kind.to_owned(), n)),
            _ => None,
        };
        let Some((sha, kind, size)) = size else {
            // `<name> missing` (or ambiguous): nothing follows the header.
            objects.push(None);
            rest = &rest[nl + 1..];
            continue;
        };
        let body = rest
            .get(nl + 1..nl + 1 + size)
            .ok_or_else(|| bad("truncated object"))?;
        objects.push(Some((sha, kind, body.to_vec())));
        rest = rest.get(nl + 2 + size..).unwrap_or_default();
    }
    Ok(objects)
}

/// A raw tree object as `ls-tree` lines (`<mode> <type> <sha>\t<name>`); `hash_len` is the
/// object id's length in bytes (20 for SHA-1, 32 for SHA-256).
fn tree_lines(raw: &[u8], hash_len: usize) -> Vec<String> {
    let mut lines = Vec::new();
    let mut rest = raw;
    while let Some(sp) = rest.iter().position(|b| *b == b' ') {
        let Some(nul) = rest[sp..].iter().position(|b| *b == 0).map(|i| i + sp) else {
            break;
        };
        let Some(id) = rest.get(nul + 1..nul + 1 + hash_len) else {
            break;
        };
        let mode = String::from_utf8_lossy(&rest[..sp]);
        let name = String::from_utf8_lossy(&rest[sp + 1..nul]);
        let kind = match mode.as_ref() {
            "40000" => "tree",
            "160000" => "commit",
            _ => "blob",
        };
        let hex: String = id.iter().map(|b| format!("{b:02x}")).collect();
        lines.push(format!("{mode:0>6} {kind} {hex}\t{name}"));
        rest = &rest[nul + 1 + hash_len..];
    }
    lines
}

/// A tree's `ls-tree` lines, refusing a name chant never writes (`BadEntry`): such a tree is
/// not something to rebuild. `dir` is where the tree is, for the error.
fn checked_listing(raw: &[u8], base: &str, dir: &[&str]) -> Result<Vec<String>, LedgerError> {
    let lines = tree_lines(raw, base.len() / 2);
    for l in &lines {
        if let Some((_, _, name)) = entry(l)
            && check_path(name).map_or(true, |p| p.len() != 1)
        {
            return Err(LedgerError::BadEntry {
                commit: base.to_owned(),
                path: [dir, &[name]].concat().join("/"),
            });
        }
    }
    Ok(lines)
}

/// `(kind, sha, name)` of one `ls-tree` line (`<mode> <kind> <sha>\t<name>`).
fn entry(line: &str) -> Option<(&str, &str, &str)> {
    let (meta, name) = line.split_once('\t')?;
    let mut f = meta.split(' ');
    let (_, kind, sha) = (f.next()?, f.next()?, f.next()?);
    Some((kind, sha, name))
}

impl Ledger {
    /// The ledger of the repository containing `dir`.
    pub fn open(dir: &Path) -> Result<Ledger, LedgerError> {
        for var in REDIRECTS {
            if let Some(value) = std::env::var_os(var).filter(|v| !v.is_empty()) {
                return Err(LedgerError::Redirected {
                    var,
                    value: value.to_string_lossy().into_owned(),
                });
            }
        }
        let out = Command::new("git")
            .args([
                "rev-parse",
                "--show-toplevel",
                "--absolute-git-dir",
                "--path-format=absolute",
                "--git-common-dir",
            ])
            .current_dir(dir)
            .stdin(Stdio::null())
            .output()
            .map_err(|_| LedgerError::NotARepository)?;
        if !out.status.success() {
            return Err(LedgerError::NotARepository);
        }
        let text = String::from_utf8_lossy(&out.stdout);
        let mut lines = text.lines();
        let (Some(top), Some(git_dir), Some(common)) = (lines.next(), lines.next(), lines.next())
        else {
            return Err(LedgerError::NotARepository);
        };
        Ok(Ledger {
            toplevel: PathBuf::from(top),
            git_dir: PathBuf::from(git_dir),
            common_dir: PathBuf::from(common),
            scope: String::new(),
        })
    }

    /// This ledger with every path read or written under `scope` on the branch (`""`: the
    /// top), as a workspace member's entries live under `_members/<member>/`. Every path
    /// method goes through [`Ledger::full`], so a scoped ledger neither reads nor writes
    /// outside its directory; whole-branch work (fetch, merge, push) is the same for all.
    pub fn scoped(mut self, scope: &str) -> Result<Ledger, LedgerError> {
        if !scope.is_empty() {
            check_path(scope)?;
        }
        self.scope = scope.to_owned();
        Ok(self)
    }

    /// The directory on the branch this ledger's paths are under (`""`: the top).
    pub fn scope(&self) -> &str {
        &self.scope
    }

    /// `path` (from this ledger's scope, `""` for the scope itself) from the branch's top.
    fn full(&self, path: &str) -> String {
        match (self.scope.is_empty(), path.is_empty()) {
            (true, _) => path.to_owned(),
            (false, true) => self.scope.clone(),
            (false, false) => format!("{}/{path}", self.scope),
        }
    }

    /// The stat of each file the ledger's refs live in — the branch and every remote's
    /// tracking copy (loose or packed, or the reftable stack) and the directories that list
    /// them — without running git: while it stays equal, [`Ledger::head`] names the same
    /// commit, so what was read at that commit still holds. `None` when one of them changed
    /// too recently for its stat to be trusted ([`fsread::Stamp::trusted`]).
    pub fn refs_stamp(&self) -> Option<RefsStamp> {
        let taken = fsread::Stamp::now();
        let refs = self.common_dir.join("refs");
        let mut paths = vec![
            refs.join("heads/chant/lifecycle"),
            refs.join("heads/chant"),
            refs.join("heads"),
            refs.join("remotes"),
            self.common_dir.join("packed-refs"),
            self.common_dir.join("reftable"),
            self.common_dir.join("reftable/tables.list"),
            // What ancestry git sees (a merge or a fast-forward depends on it).
            self.common_dir.join("shallow"),
            self.common_dir.join("info/grafts"),
        ];
        if let Ok(remotes) = std::fs::read_dir(refs.join("remotes")) {
            let mut names: Vec<PathBuf> = remotes.flatten().map(|e| e.path()).collect();
            names.sort();
            for r in names {
                paths.push(r.join("chant/lifecycle"));
                paths.push(r.join("chant"));
                paths.push(r);
            }
        }
        let mut stamps = Vec::with_capacity(paths.len());
        for p in paths {
            let stamp = match std::fs::metadata(&p) {
                Ok(meta) => Some(fsread::Stamp::trusted(&meta, taken)?),
                Err(_) => None,
            };
            stamps.push((p, stamp));
        }
        Some(RefsStamp(stamps))
    }

    pub fn toplevel(&self) -> &Path {
        &self.toplevel
    }

    fn git(&self, args: &[&str], input: Option<&[u8]>) -> Result<Vec<u8>, LedgerError> {
        self.git_with(args, input, &[])
    }

    /// [`Ledger::git`] with extra environment variables (a private index for a merge).
    fn git_with(
        &self,
        args: &[&str],
        input: Option<&[u8]>,
        env: &[(&str, &Path)],
    ) -> Result<Vec<u8>, LedgerError> {
        let mut cmd = git_command(&self.toplevel);
        cmd.args(args);
        for (k, v) in env {
            cmd.env(k, v);
        }
        if !self.has_identity() {
            cmd.env("GIT_AUTHOR_NAME", "chant")
                .env("GIT_AUTHOR_EMAIL", "chant@localhost")
                .env("GIT_COMMITTER_NAME", "chant")
                .env("GIT_COMMITTER_EMAIL", "chant@localhost");
        }
        cmd.stdin(if input.is_some() {
            Stdio::piped()
        } else {
            Stdio::null()
        })
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
        let mut child = cmd.spawn()?;
        if let Some(bytes) = input {
            let mut stdin = child.stdin.take().expect("piped stdin");
            stdin.write_all(bytes)?;
        }
        let out = child.wait_with_output()?;
        if !out.status.success() {
            return Err(LedgerError::Git {
                args: args.join(" "),
                message: String::from_utf8_lossy(&out.stderr).trim().to_owned(),
            });
        }
        Ok(out.stdout)
    }

    fn git_text(&self, args: &[&str], input: Option<&[u8]>) -> Result<String, LedgerError> {
        Ok(String::from_utf8_lossy(&self.git(args, input)?)
            .trim()
            .to_owned())
    }

    fn has_identity(&self) -> bool {
        static CACHE: std::sync::OnceLock<
            std::sync::Mutex<std::collections::HashMap<PathBuf, bool>>,
        > = std::sync::OnceLock::new();
        let cache = CACHE.get_or_init(Default::default);
        if let Some(v) = cache
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .get(&self.toplevel)
        {
            return *v;
        }
        let ok = git_command(&self.toplevel)
            .args(["var", "GIT_COMMITTER_IDENT"])
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status()
            .is_ok_and(|s| s.success());
        cache
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .insert(self.toplevel.clone(), ok);
        ok
    }

    /// Where this clone's ledger stands: its own branch and the remote-tracking copy of the
    /// remote's (`origin`'s when there are several), with one `for-each-ref`. A ref that names
    /// anything but a commit is an error naming that ref and the fix.
    fn tips(&self) -> Result<Tips, LedgerError> {
        let out = self.git_text(
            &[
                "for-each-ref",
                "--format=%(objectname) %(objecttype) %(refname) %(symref)",
                REF,
                "refs/remotes/*/chant/lifecycle",
            ],
            None,
        )?;
        let mut tips = Tips::default();
        for line in out.lines() {
            let mut f = line.splitn(4, ' ');
            let (Some(sha), Some(kind), Some(refname)) = (f.next(), f.next(), f.next()) else {
                continue;
            };
            if let Some(target) = f.next().filter(|t| !t.is_empty()) {
                return Err(LedgerError::SymbolicRef {
                    refname: refname.to_owned(),
                    target: target.to_owned(),
                });
            }
            if kind != "commit" {
                return Err(LedgerError::NotACommit {
                    refname: refname.to_owned(),
                    kind: kind.to_owned(),
                });
            }
            if refname == REF {
                tips.local = Some(sha.to_owned());
            } else if let Some(remote) = refname
                .strip_prefix("refs/remotes/")
                .and_then(|r| r.strip_suffix("/chant/lifecycle"))
                && (tips.tracking.is_none() || remote == "origin")
            {
                tips.tracking = Some((remote.to_owned(), sha.to_owned()));
            }
        }
        Ok(tips)
    }

    /// Whether `a` is an ancestor of (or equal to) `b`.
    fn is_ancestor(&self, a: &str, b: &str) -> Result<bool, LedgerError> {
        let status = git_command(&self.toplevel)
            .args(["merge-base", "--is-ancestor", a, b])
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status()?;
        Ok(status.success())
    }

    /// The commit reads and writes start from, and the local branch's current value (what a
    /// write's compare-and-swap expects): the local branch, or the remote-tracking copy when
    /// the branch is missing or behind it, or — when both moved — a merge of the two.
    fn resolve(&self) -> Result<Resolved, LedgerError> {
        let tips = self.tips()?;
        let local = tips.local;
        let base = match (&local, tips.tracking) {
            (None, None) => None,
            (Some(l), None) => Some(l.clone()),
            (None, Some((_, t))) => Some(t),
            (Some(l), Some((_, t))) if *l == t => Some(t),
            (Some(l), Some((remote, t))) => {
                if self.is_ancestor(&t, l)? {
                    Some(l.clone())
                } else if self.is_ancestor(l, &t)? {
                    Some(t)
                } else {
                    Some(self.merge_commits(l, &t, &remote)?)
                }
            }
        };
        Ok(Resolved { local, base })
    }

    /// The ledger's latest commit as this clone knows it (see [`Ledger::resolve`]), if any.
    pub fn head(&self) -> Result<Option<String>, LedgerError> {
        Ok(self.resolve()?.base)
    }

    /// Whether this clone has the ledger branch.
    pub fn exists(&self) -> Result<bool, LedgerError> {
        Ok(self.head()?.is_some())
    }

    /// The bytes at `path` on the branch, `None` when absent: `<ref>:<path>` names the file
    /// at the branch's current commit from the top of the tree, whatever the cwd, and one
    /// `cat-file --batch` resolves and reads it.
    pub fn read(&self, path: &str) -> Result<Option<Vec<u8>>, LedgerError> {
        check_path(path)?;
        let Some(head) = self.head()? else {
            return Ok(None);
        };
        let input = format!("{head}:{}\n", self.full(path));
        let out = self.git(&["cat-file", "--batch"], Some(input.as_bytes()))?;
        Ok(match parse_batch(&out, 1)?.pop().flatten() {
            Some((_, kind, body)) if kind == "blob" => Some(body),
            _ => None,
        })
    }

    /// The file at `path` in the first of `revs` (branches or refs of the repository, not the
    /// ledger) that holds it, with one `cat-file --batch`: `(rev, bytes)`. For files that must
    /// be read at a base the agent's working tree cannot change.
    pub fn read_first(
        &self,
        revs: &[&str],
        path: &str,
    ) -> Result<Option<(String, Vec<u8>)>, LedgerError> {
        check_path(path)?;
        let input: String = revs.iter().map(|r| format!("{r}:{path}\n")).collect();
        let out = self.git(&["cat-file", "--batch"], Some(input.as_bytes()))?;
        Ok(parse_batch(&out, revs.len())?
            .into_iter()
            .zip(revs)
            .find_map(|(o, rev)| match o {
                Some((_, kind, body)) if kind == "blob" => Some(((*rev).to_owned(), body)),
                _ => None,
            }))
    }

    /// Names of the entries directly under `dir` (`""` for the top), blobs and trees.
    pub fn list(&self, dir: &str) -> Result<Vec<String>, LedgerError> {
        let Some(head) = self.head()? else {
            return Ok(Vec::new());
        };
        let dir = self.full(dir);
        let spec = if dir.is_empty() {
            head
        } else {
            format!("{head}:{dir}")
        };
        match self.git_text(&["ls-tree", &spec], None) {
            Ok(out) => Ok(out
                .lines()
                .filter_map(|l| l.split_once('\t').map(|(_, n)| n.to_owned()))
                .collect()),
            Err(LedgerError::Git { .. }) => Ok(Vec::new()),
            Err(e) => Err(e),
        }
    }

    /// A reader of the ledger as of the latest commit this clone knows, object by object.
    pub fn reader(&self) -> Result<Reader, LedgerError> {
        Ok(Reader::new(self, self.head()?))
    }

    /// Adds `line` as a new file `<dir>/<stem>-<n>.jsonl`, `n` (four digits) one more than
    /// the highest already there for that stem, so files of one stem sort in the order they
    /// were written. The trees rewritten are the ones down `dir`, whatever else the branch
    /// holds: with `dir` naming when the record was made, the cost of an append does not grow
    /// with the records before it. Returns the file's path and the new commit.
    pub fn append_record(
        &self,
        dir: &str,
        stem: &str,
        line: &str,
        message: &str,
    ) -> Result<(String, String), LedgerError> {
        check_path(dir)?;
        if check_path(stem).map_or(true, |p| p.len() != 1) {
            return Err(LedgerError::InvalidPath(format!("{dir}/{stem}")));
        }
        let full = self.full(dir);
        let dirs = check_path(&full)?;
        let _lock = self.lock()?;
        for _ in 0..MAX_ATTEMPTS {
            let Resolved { local, base } = self.resolve()?;
            let (mut levels, last) = self.read_path(base.as_deref(), &dirs)?;
            let leaf = match (&base, last) {
                (Some(b), Some((kind, body))) if kind == "tree" => {
                    checked_listing(&body, b, &dirs)?
                }
                (Some(b), Some(_)) => {
                    return Err(LedgerError::NotADirectory {
                        commit: b.clone(),
                        path: full.clone(),
                    });
                }
                _ => Vec::new(),
            };
            let prefix = format!("{stem}-");
            let next = leaf
                .iter()
                .filter_map(|l| entry(l)?.2.strip_prefix(&prefix)?.strip_suffix(".jsonl"))
                .filter_map(|n| n.parse::<u32>().ok())
                .max()
                .map_or(0, |n| n + 1);
            let name = format!("{stem}-{next:04}.jsonl");
            levels.push(leaf);
            let mut parts = dirs.clone();
            parts.push(&name);
            let attempt = Attempt {
                parts: &parts,
                levels,
                base: base.as_deref(),
                local: local.as_deref(),
                message,
            };
            if let Some(commit) = self.commit_and_swap(attempt, line.as_bytes())? {
                return Ok((format!("{dir}/{name}"), commit));
            }
        }
        Err(LedgerError::Contended)
    }

    /// Appends `line` to the JSONL file at `path` (prior bytes without one trailing `\n`, then
    /// `\n` when they were non-empty, then the line; no trailing newline is written).
    pub fn append_line(
        &self,
        path: &str,
        line: &str,
        message: &str,
    ) -> Result<String, LedgerError> {
        self.update(path, message, |prior| {
            let mut bytes = prior.map(<[u8]>::to_vec).unwrap_or_default();
            if bytes.last() == Some(&b'\n') {
                bytes.pop();
            }
            if !bytes.is_empty() {
                bytes.push(b'\n');
            }
            bytes.extend_from_slice(line.as_bytes());
            bytes
        })
    }

    /// Replaces the file at `path` with `bytes`, exactly.
    pub fn write(&self, path: &str, bytes: &[u8], message: &str) -> Result<String, LedgerError> {
        self.update(path, message, |_| bytes.to_vec())
    }

    /// Read-modify-write of one path with compare-and-swap on the branch ref. Returns the new
    /// commit.
    fn update(
        &self,
        path: &str,
        message: &str,
        content: impl Fn(Option<&[u8]>) -> Vec<u8>,
    ) -> Result<String, LedgerError> {
        check_path(path)?;
        let path = &self.full(path);
        let parts = check_path(path)?;
        let _lock = self.lock()?;
        for _ in 0..MAX_ATTEMPTS {
            // The write goes on top of the latest tip known (the remote's, in a fresh clone),
            // and swaps the local branch from the value it had when this attempt looked.
            let Resolved { local, base } = self.resolve()?;
            let (levels, last) = self.read_path(base.as_deref(), &parts)?;
            if let (Some(b), Some((kind, _))) = (&base, &last)
                && kind != "blob"
            {
                return Err(LedgerError::NotAFile {
                    commit: b.clone(),
                    path: path.to_owned(),
                });
            }
            let prior = last.map(|(_, b)| b);
            let bytes = content(prior.as_deref());
            let attempt = Attempt {
                parts: &parts,
                levels,
                base: base.as_deref(),
                local: local.as_deref(),
                message,
            };
            if let Some(commit) = self.commit_and_swap(attempt, &bytes)? {
                return Ok(commit);
            }
        }
        Err(LedgerError::Contended)
    }

    /// Writes `bytes` at `attempt.parts`, the trees above it and a commit on `attempt.base`,
    /// then swaps the branch from `attempt.local` to it: `None` when the branch no longer
    /// points there (someone moved it after this attempt read it: read again and retry).
    fn commit_and_swap(
        &self,
        attempt: Attempt<'_>,
        bytes: &[u8],
    ) -> Result<Option<String>, LedgerError> {
        let blob = self.git_text(&["hash-object", "-w", "--stdin"], Some(bytes))?;
        let tree = self.mktrees(attempt.parts, attempt.levels, &blob)?;
        let mut args = vec!["commit-tree", tree.as_str()];
        if let Some(c) = attempt.base {
            args.extend(["-p", c]);
        }
        args.extend(["-m", attempt.message]);
        let commit = self.git_text(&args, None)?;
        // Compare-and-swap: only if the branch still points where this attempt read it.
        // Whatever moved after that read (even between the reads of one batch) fails here.
        let expected = attempt.local.unwrap_or(ZERO);
        match self.git(&["update-ref", REF, &commit, expected], None) {
            Ok(_) => Ok(Some(commit)),
            Err(LedgerError::Git { .. }) => Ok(None),
            Err(e) => Err(e),
        }
    }

    /// One `cat-file --batch` for an update of `parts` on top of `base`: the `ls-tree` lines
    /// of each tree down the path (root first; empty where absent) and the file's bytes. A
    /// tree entry with a name chant never writes is an error, not something to rebuild.
    fn read_path(&self, base: Option<&str>, parts: &[&str]) -> Result<PathRead, LedgerError> {
        let Some(base) = base else {
            return Ok((vec![Vec::new(); parts.len()], None));
        };
        let mut input = format!("{base}^{{tree}}\n");
        for i in 1..=parts.len() {
            input.push_str(&format!("{base}:{}\n", parts[..i].join("/")));
        }
        let out = self.git(&["cat-file", "--batch"], Some(input.as_bytes()))?;
        let mut objects = parse_batch(&out, parts.len() + 1)?.into_iter();
        let mut levels = Vec::with_capacity(parts.len());
        for depth in 0..parts.len() {
            levels.push(match objects.next().flatten() {
                Some((_, kind, body)) if kind == "tree" => {
                    checked_listing(&body, base, &parts[..depth])?
                }
                None => Vec::new(),
                // A file where the path needs a directory: rebuilding would replace it.
                Some(_) => {
                    return Err(LedgerError::NotADirectory {
                        commit: base.to_owned(),
                        path: parts[..depth].join("/"),
                    });
                }
            });
        }
        let last = objects.next().flatten().map(|(_, kind, body)| (kind, body));
        Ok((levels, last))
    }

    /// The trees down `parts` (their current `levels`) rebuilt bottom-up around `blob`, in one
    /// `mktree --batch`; returns the new root tree.
    fn mktrees(
        &self,
        parts: &[&str],
        levels: Vec<Vec<String>>,
        blob: &str,
    ) -> Result<String, LedgerError> {
        use std::io::{BufRead, BufReader};
        let mut child = git_command(&self.toplevel)
            .args(["mktree", "--batch"])
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()?;
        let mut stdin = child.stdin.take().expect("piped stdin");
        let mut stdout = BufReader::new(child.stdout.take().expect("piped stdout"));
        let mut entry_line = format!("100644 blob {blob}");
        for (name, mut entries) in parts.iter().zip(levels).rev() {
            let line = format!("{entry_line}\t{name}");
            match entries
                .iter()
                .position(|e| entry(e).is_some_and(|x| x.2 == *name))
            {
                Some(i) => entries[i] = line,
                None => entries.push(line),
            }
            let mut input = entries.join("\n");
            input.push_str("\n\n");
            stdin.write_all(input.as_bytes())?;
            stdin.flush()?;
            let mut sha = String::new();
            stdout.read_line(&mut sha)?;
            let sha = sha.trim();
            if sha.is_empty() {
                drop(stdin);
                let out = child.wait_with_output()?;
                return Err(LedgerError::Git {
                    args: "mktree --batch".into(),
                    message: String::from_utf8_lossy(&out.stderr).trim().to_owned(),
                });
            }
            entry_line = format!("040000 tree {sha}");
        }
        drop(stdin);
        let _ = child.wait();
        Ok(entry_line.rsplit(' ').next().unwrap_or_default().to_owned())
    }

    /// The configured remote to push the ledger to (`origin` when present).
    pub fn remote(&self) -> Option<String> {
        let out = self.git_text(&["remote"], None).ok()?;
        let remotes: Vec<&str> = out.lines().collect();
        // A name that reads as an option is no remote chant will pass to git.
        remotes
            .iter()
            .filter(|r| !r.starts_with('-'))
            .find(|r| **r == "origin")
            .or(remotes.iter().find(|r| !r.starts_with('-')))
            .map(|r| (*r).to_owned())
    }

    /// A merge commit of `ours` (this clone's branch) and `theirs` (the remote's, as fetched),
    /// both kept as parents: files only one side changed come from that side, JSONL files both
    /// changed are the [`merge::union_lines`] of the two, and any other file both changed is
    /// the remote's. Writes objects only; no ref moves. Without a common ancestor (unrelated
    /// ledgers, a shallow clone) every file both sides hold differently is joined the same way.
    /// A file either side holds is kept. Only trees that differ are read (a subtree both sides
    /// share is kept by its id), so a merge costs what changed on the two sides, not the size
    /// of the ledger.
    fn merge_commits(&self, ours: &str, theirs: &str, remote: &str) -> Result<String, LedgerError> {
        let base = match self.git_text(&["merge-base", ours, theirs], None) {
            Ok(sha) if !sha.is_empty() => Some(sha),
            _ => None,
        };
        let mut reader = Reader::new(self, Some(ours.to_owned()));
        let mut mktree = MkTree::start(self)?;
        let tree_of = |reader: &mut Reader, commit: &str| -> Result<String, LedgerError> {
            reader.tree_sha(commit)?.ok_or_else(|| LedgerError::Git {
                args: "cat-file --batch".into(),
                message: format!("{commit} has no tree"),
            })
        };
        let (a, b) = (tree_of(&mut reader, ours)?, tree_of(&mut reader, theirs)?);
        let o = match &base {
            Some(c) => Some(tree_of(&mut reader, c)?),
            None => None,
        };
        let joined = MergeTrees {
            ledger: self,
            reader: &mut reader,
            mktree: &mut mktree,
            commit: ours,
        }
        .tree(o.as_deref(), &a, &b, &[])?;
        mktree.finish();
        let message = format!("Merge {remote}'s chant/lifecycle");
        self.git_text(
            &[
                "commit-tree",
                &joined,
                "-p",
                ours,
                "-p",
                theirs,
                "-m",
                &message,
            ],
            None,
        )
    }

    /// Moves the local branch to the tip reads start from (creating it from the remote's
    /// copy, fast-forwarding, or recording the merge of both), under the writers' lock.
    fn integrate(&self) -> Result<(), LedgerError> {
        let lock = self.lock()?;
        let Resolved { local, base } = self.resolve()?;
        if let Some(base) = base
            && local.as_deref() != Some(base.as_str())
        {
            self.git(
                &["update-ref", REF, &base, local.as_deref().unwrap_or(ZERO)],
                None,
            )?;
        }
        drop(lock);
        Ok(())
    }

    fn lock(&self) -> Result<File, LedgerError> {
        let lock = File::options()
            .create(true)
            .truncate(false)
            .write(true)
            .open(self.git_dir.join("chant-lifecycle.lock"))?;
        lock.lock()?;
        Ok(lock)
    }

    /// Fetches the remote's branch into its remote-tracking copy (`Ok(None)`: no remote),
    /// so the next read sees what was recorded there.
    pub fn refresh(&self) -> Result<Option<String>, LedgerError> {
        let Some(remote) = self.remote() else {
            return Ok(None);
        };
        self.fetch(&remote)?;
        Ok(Some(remote))
    }

    fn fetch(&self, remote: &str) -> Result<(), LedgerError> {
        self.git(
            &[
                "fetch",
                "--quiet",
                "--no-tags",
                "--no-write-fetch-head",
                "--",
                remote,
                &format!("+{REF}:refs/remotes/{remote}/{BRANCH}"),
            ],
            None,
        )
        .map(|_| ())
    }

    /// When this clone knows no ledger at all (no branch and no remote-tracking copy, as in a
    /// single-branch or shallow clone) and has a remote, fetches the remote's branch, so what
    /// was recorded there is read before anything is decided or written.
    pub fn fetch_if_unknown(&self) -> Result<Fetch, LedgerError> {
        let tips = self.tips()?;
        if tips.local.is_some() || tips.tracking.is_some() {
            return Ok(Fetch::Known);
        }
        let Some(remote) = self.remote() else {
            return Ok(Fetch::NoRemote);
        };
        Ok(match self.fetch(&remote) {
            Ok(()) => Fetch::Fetched { remote },
            Err(LedgerError::Git { message, .. })
                if message.contains("couldn't find remote ref") =>
            {
                Fetch::NotOnRemote { remote }
            }
            Err(LedgerError::Git { message, .. }) => Fetch::Failed {
                remote,
                message,
                shallow: self.git_dir.join("shallow").exists(),
            },
            Err(e) => return Err(e),
        })
    }

    /// Pushes this clone's branch to its remote (`origin` when there are several), never
    /// forced: the local branch first moves to the latest tip known, and when the remote
    /// refuses because it moved on, its branch is fetched, merged in and the push tried again
    /// (at most 10 times, with a growing pause). `Ok(None)`: no remote, or nothing to push.
    pub fn publish(&self) -> Result<Option<String>, LedgerError> {
        let mut known_remote = None;
        for attempt in 0..PUSH_ATTEMPTS {
            if attempt > 0 {
                backoff(attempt);
            }
            let tips = self.tips()?;
            let remote = match (&tips.tracking, &known_remote) {
                (Some((r, _)), _) => r.clone(),
                (None, Some(r)) => String::clone(r),
                (None, None) => match self.remote() {
                    Some(r) => r,
                    None => return Ok(None),
                },
            };
            known_remote = Some(remote.clone());
            match (&tips.local, &tips.tracking) {
                (None, None) => return Ok(None),
                // Nothing this clone has that the remote (as last seen) lacks.
                (Some(l), Some((_, t))) if l == t => return Ok(Some(remote)),
                // Ahead of the remote's tip: a fast-forward push, nothing to join first.
                (Some(l), Some((_, t))) if self.is_ancestor(t, l)? => {}
                (Some(_), None) => {}
                _ => self.integrate()?,
            }
            let out = git_command(&self.toplevel)
                .args(["push", "--porcelain", "--quiet", "--", &remote])
                .arg(format!("{REF}:{REF}"))
                .stdin(Stdio::null())
                .output()?;
            if out.status.success() {
                return Ok(Some(remote));
            }
            let report = String::from_utf8_lossy(&out.stdout);
            // Refused because the remote moved on (or, racing another pusher, moved while
            // this push landed): fetch, merge, try again. Anything else is the remote's no.
            let stale = report.lines().any(|l| {
                l.starts_with('!')
                    && [
                        "(non-fast-forward)",
                        "(fetch first)",
                        "(failed to update ref)",
                    ]
                    .iter()
                    .any(|why| l.contains(why))
            });
            if !stale {
                let stderr = String::from_utf8_lossy(&out.stderr);
                let message = report
                    .lines()
                    .filter(|l| l.starts_with('!'))
                    .chain(stderr.lines().filter(|l| !l.starts_with("hint:")))
                    .collect::<Vec<_>>()
                    .join("; ");
                return Err(LedgerError::PushRefused { remote, message });
            }
            self.fetch(&remote)?;
        }
        Err(LedgerError::Contended)
    }
}

/// One try of a write: where, the trees down the path as read, the commit it builds on and
/// the branch value it expects.
struct Attempt<'a> {
    parts: &'a [&'a str],
    levels: Vec<Vec<String>>,
    base: Option<&'a str>,
    local: Option<&'a str>,
    message: &'a str,
}

/// One `git mktree --batch`, a tree per request.
struct MkTree {
    child: std::process::Child,
    stdin: std::process::ChildStdin,
    stdout: std::io::BufReader<std::process::ChildStdout>,
}

impl MkTree {
    fn start(ledger: &Ledger) -> Result<MkTree, LedgerError> {
        let mut child = git_command(&ledger.toplevel)
            .args(["mktree", "--batch"])
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()?;
        let stdin = child.stdin.take().expect("piped stdin");
        let stdout = std::io::BufReader::new(child.stdout.take().expect("piped stdout"));
        Ok(MkTree {
            child,
            stdin,
            stdout,
        })
    }

    /// The tree of `entries` (`ls-tree` lines).
    fn write(&mut self, entries: &[String]) -> Result<String, LedgerError> {
        use std::io::BufRead;
        let mut input = entries.join("\n");
        input.push_str("\n\n");
        self.stdin.write_all(input.as_bytes())?;
        self.stdin.flush()?;
        let mut sha = String::new();
        self.stdout.read_line(&mut sha)?;
        let sha = sha.trim().to_owned();
        if sha.is_empty() {
            let mut err = String::new();
            if let Some(mut e) = self.child.stderr.take() {
                use std::io::Read;
                let _ = e.read_to_string(&mut err);
            }
            return Err(LedgerError::Git {
                args: "mktree --batch".into(),
                message: err.trim().to_owned(),
            });
        }
        Ok(sha)
    }

    fn finish(self) {
        drop(self.stdin);
        let mut child = self.child;
        let _ = child.wait();
    }
}

/// How deep a merge descends: chant's paths are a handful of levels (`<env>/runs/<op>/<yyyy>/
/// <mm>/<dd>/<hh>/<file>`, under `_members/<m>/` in a workspace); a tree nested deeper was
/// not written by chant, and is refused rather than walked to the end of the stack.
const MAX_MERGE_DEPTH: usize = 64;

/// A three-way join of two ledger trees, descending only where they differ.
struct MergeTrees<'a> {
    ledger: &'a Ledger,
    reader: &'a mut Reader,
    mktree: &'a mut MkTree,
    /// The commit named in a bad-entry error.
    commit: &'a str,
}

impl MergeTrees<'_> {
    /// The listing of tree `sha` at `dir`, by name (a name chant never writes is an error).
    fn listing(
        &mut self,
        sha: &str,
        dir: &[&str],
    ) -> Result<std::collections::BTreeMap<String, String>, LedgerError> {
        let raw = self.reader.raw_tree(sha)?.unwrap_or_default();
        Ok(checked_listing(&raw, self.commit, dir)?
            .into_iter()
            .filter_map(|l| {
                let name = entry(&l)?.2.to_owned();
                Some((name, l))
            })
            .collect())
    }

    /// The joined tree of `ours` and `theirs` (tree ids) at `dir`, `base` their ancestor's.
    fn tree(
        &mut self,
        base: Option<&str>,
        ours: &str,
        theirs: &str,
        dir: &[&str],
    ) -> Result<String, LedgerError> {
        // Descends wherever the two differ, even where one side is the ancestor: a file one
        // side holds is never dropped (a join of logs keeps every line either side has).
        if ours == theirs {
            return Ok(ours.to_owned());
        }
        if dir.len() > MAX_MERGE_DEPTH {
            return Err(LedgerError::TooDeep {
                commit: self.commit.to_owned(),
                path: dir.join("/"),
            });
        }
        let a = self.listing(ours, dir)?;
        let b = self.listing(theirs, dir)?;
        let o = match base {
            Some(t) => self.listing(t, dir)?,
            None => Default::default(),
        };
        let mut out: Vec<String> = Vec::new();
        let names: std::collections::BTreeSet<&String> = a.keys().chain(b.keys()).collect();
        for name in names {
            let line = match (a.get(name), b.get(name)) {
                (Some(x), None) => x.clone(),
                (None, Some(y)) => y.clone(),
                (Some(x), Some(y)) if x == y => x.clone(),
                (Some(x), Some(y)) => {
                    let (Some((kx, sx, _)), Some((ky, sy, _))) = (entry(x), entry(y)) else {
                        continue;
                    };
                    let was = o.get(name).and_then(|l| entry(l)).map(|(k, s, _)| (k, s));
                    let mut path = dir.to_vec();
                    path.push(name);
                    match (kx, ky) {
                        ("tree", "tree") => {
                            let base = was.filter(|(k, _)| *k == "tree").map(|(_, s)| s);
                            let t = self.tree(base, sx, sy, &path)?;
                            format!("040000 tree {t}\t{name}")
                        }
                        ("blob", "blob") if was == Some(("blob", sy)) => x.clone(),
                        ("blob", "blob") if was == Some(("blob", sx)) => y.clone(),
                        // A directory of records against anything else: the directory (what
                        // chant writes there), never a file or link that would drop it.
                        ("tree", _) => x.clone(),
                        (_, "tree") => y.clone(),
                        // Our file against their link (which chant never writes): the file.
                        // (Their file against our link is theirs, as below.)
                        ("blob", _) if ky != "blob" => x.clone(),
                        ("blob", "blob") if name.ends_with(".jsonl") => {
                            let x = self.reader.blob_at(sx)?.unwrap_or_default();
                            let y = self.reader.blob_at(sy)?.unwrap_or_default();
                            let bytes = merge::union_lines(&x, &y);
                            let sha = self
                                .ledger
                                .git_text(&["hash-object", "-w", "--stdin"], Some(&bytes))?;
                            format!("100644 blob {sha}\t{name}")
                        }
                        // Anything else both changed: the remote's.
                        _ => y.clone(),
                    }
                }
                (None, None) => continue,
            };
            out.push(line);
        }
        self.mktree.write(&out)
    }
}

/// What [`Ledger::fetch_if_unknown`] did.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Fetch {
    /// This clone already knows a ledger (its branch or the remote's copy); nothing fetched.
    Known,
    /// No remote is configured.
    NoRemote,
    /// The remote's branch was fetched.
    Fetched { remote: String },
    /// The remote has no ledger yet.
    NotOnRemote { remote: String },
    /// The fetch failed (offline, no access); `shallow` when this is a shallow clone.
    Failed {
        remote: String,
        message: String,
        shallow: bool,
    },
}

#[cfg(test)]
mod tests {
    use super::*;

    fn repo() -> (tempfile::TempDir, Ledger) {
        let dir = tempfile::tempdir().unwrap();
        let ok = Command::new("git")
            .args(["init", "-q"])
            .current_dir(dir.path())
            .status()
            .unwrap();
        assert!(ok.success());
        let ledger = Ledger::open(dir.path()).unwrap();
        (dir, ledger)
    }

    /// The reader reads the commit it was made at, only objects of the kind asked for (a path
    /// or id naming another kind is absent), and reads a record file up to exactly
    /// `MAX_RECORD_BYTES`: one byte more is passed on as its size, unread, and the reads after
    /// it still work (the oversized object was drained exactly).
    #[test]
    fn a_reader_reads_only_the_kind_asked_and_records_up_to_the_limit() {
        use crate::reader::{Flow, Kind, MAX_RECORD_BYTES};
        let (_dir, ledger) = repo();
        let max = MAX_RECORD_BYTES as usize;
        ledger.write("big/a-small.json", b"small", "a").unwrap();
        ledger.write("big/b-exact", &vec![b'b'; max], "b").unwrap();
        ledger
            .write("big/c-over", &vec![b'c'; max + 1], "c")
            .unwrap();
        let head = ledger.head().unwrap().unwrap();
        let mut r = ledger.reader().unwrap();
        assert_eq!(r.head(), Some(head.as_str()));

        // Newest first: the oversized file as its size, then the others read in full.
        let mut seen: Vec<(String, Result<usize, u64>)> = Vec::new();
        r.newest_first("big", &mut |_, _| true, &mut |path, bytes| {
            seen.push((path.to_owned(), bytes.map(<[u8]>::len)));
            Flow::Next
        })
        .unwrap();
        assert_eq!(
            seen,
            [
                ("big/c-over".to_owned(), Err(MAX_RECORD_BYTES + 1)),
                ("big/b-exact".to_owned(), Ok(max)),
                ("big/a-small.json".to_owned(), Ok(5)),
            ]
        );
        // A walk that takes no files visits none.
        let mut visited = 0;
        r.newest_first("big", &mut |_, k| k != Kind::Blob, &mut |_, _| {
            visited += 1;
            Flow::Next
        })
        .unwrap();
        assert_eq!(visited, 0);
        let files: Vec<(String, Result<usize, u64>)> = r
            .files_under("big")
            .unwrap()
            .into_iter()
            .map(|(p, b)| (p, b.map(|b| b.len())))
            .collect();
        assert_eq!(
            files,
            [
                ("big/a-small.json".to_owned(), Ok(5)),
                ("big/b-exact".to_owned(), Ok(max)),
                ("big/c-over".to_owned(), Err(MAX_RECORD_BYTES + 1)),
            ]
        );

        // Each read answers only for its own kind.
        let top = r.tree("").unwrap().unwrap();
        let big = top.iter().find(|e| e.name == "big").unwrap().sha.clone();
        let small = r
            .tree_at(&big)
            .into_iter()
            .flatten()
            .find(|e| e.name == "a-small.json")
            .unwrap()
            .sha;
        assert_eq!(r.tree("big/a-small.json").unwrap(), None);
        assert_eq!(r.blob("big").unwrap(), None);
        assert_eq!(r.blob_at(&big).unwrap(), None);
        assert_eq!(r.blob_at(&small).unwrap().unwrap(), b"small");
        assert!(r.tree_at(&small).unwrap().is_empty());
        assert_eq!(r.raw_tree(&small).unwrap(), None);
        assert!(r.raw_tree(&big).unwrap().is_some());
        assert_eq!(r.tree_sha(&big).unwrap(), None);
        assert!(r.tree_sha(&head).unwrap().is_some());
        // A blob that reads like a commit is still not one.
        ledger
            .write(
                "fake-commit",
                b"tree 4b825dc642cb6eb9a060e54bf8d69288fbee4904\n",
                "f",
            )
            .unwrap();
        let mut r = ledger.reader().unwrap();
        let fake = r
            .tree("")
            .unwrap()
            .unwrap()
            .into_iter()
            .find(|e| e.name == "fake-commit")
            .unwrap()
            .sha;
        assert_eq!(r.tree_sha(&fake).unwrap(), None);
        // A blob holding a tree's bytes is not a tree either.
        let raw = r.raw_tree(&big).unwrap().unwrap();
        ledger.write("fake-tree", &raw, "t").unwrap();
        let mut r = ledger.reader().unwrap();
        let fake = r
            .tree("")
            .unwrap()
            .unwrap()
            .into_iter()
            .find(|e| e.name == "fake-tree")
            .unwrap()
            .sha;
        assert!(r.tree_at(&fake).unwrap().is_empty());
        assert_eq!(r.tree("fake-tree").unwrap(), None);
        assert_eq!(r.raw_tree(&fake).unwrap(), None);
    }

    /// A member's ledger (`_members/<m>`) reads and writes only under its directory, and the
    /// paths it hands back are from there: the top and another member see none of it.
    #[test]
    fn a_scoped_ledger_stays_in_its_directory() {
        let (_dir, top) = repo();
        let api = top.clone().scoped("_members/api").unwrap();
        let web = top.clone().scoped("_members/web").unwrap();
        api.write("prod/aws.json", b"api", "snap").unwrap();
        api.append_line("_gates/deploy.jsonl", "g", "gate").unwrap();
        let (path, _) = api
            .append_record("prod/runs/deploy/2026", "x", "r", "run")
            .unwrap();
        assert_eq!(path, "prod/runs/deploy/2026/x-0000.jsonl");
        top.write("prod/aws.json", b"top", "snap").unwrap();
        assert_eq!(api.read("prod/aws.json").unwrap().unwrap(), b"api");
        assert_eq!(top.read("prod/aws.json").unwrap().unwrap(), b"top");
        assert_eq!(web.read("prod/aws.json").unwrap(), None);
        assert_eq!(
            top.read("_members/api/_gates/deploy.jsonl")
                .unwrap()
                .unwrap(),
            b"g"
        );
        assert_eq!(api.list("").unwrap(), ["_gates", "prod"]);
        assert_eq!(top.list("").unwrap(), ["_members", "prod"]);
        let mut r = api.reader().unwrap();
        let names: Vec<String> = r
            .tree("")
            .unwrap()
            .unwrap()
            .into_iter()
            .map(|e| e.name)
            .collect();
        assert_eq!(names, ["_gates", "prod"]);
        assert_eq!(r.blob("prod/aws.json").unwrap().unwrap(), b"api");
        let files: Vec<String> = r
            .files_under("prod")
            .unwrap()
            .into_iter()
            .map(|f| f.0)
            .collect();
        assert_eq!(
            files,
            ["prod/aws.json", "prod/runs/deploy/2026/x-0000.jsonl"]
        );
        assert!(web.reader().unwrap().tree("").unwrap().is_none());
        for bad in ["..", "/x", "_members//a", "a/../b"] {
            assert!(top.clone().scoped(bad).is_err(), "{bad}");
        }
        // A path that climbs out of the scope is refused as on the top.
        assert!(api.read("../web/x").is_err());
    }

    /// A writer that takes no lock (git itself, another tool) moves the branch between this
    /// writer's read and its `update-ref`: the compare-and-swap must refuse the stale commit,
    /// and the retry must keep the other writer's line.
    #[test]
    fn a_writer_that_skips_the_lock_is_never_overwritten() {
        let (dir, ledger) = repo();
        ledger
            .append_line("_gates/a.jsonl", "one", "first")
            .unwrap();
        let git = |args: &[&str], input: Option<&str>| -> String {
            use std::io::Write;
            let mut child = Command::new("git")
                .args(args)
                .current_dir(dir.path())
                .stdin(std::process::Stdio::piped())
                .stdout(std::process::Stdio::piped())
                .spawn()
                .unwrap();
            child
                .stdin
                .take()
                .unwrap()
                .write_all(input.unwrap_or_default().as_bytes())
                .unwrap();
            let out = child.wait_with_output().unwrap();
            assert!(out.status.success(), "git {args:?}");
            String::from_utf8_lossy(&out.stdout).trim().to_owned()
        };
        let moved = std::cell::Cell::new(false);
        ledger
            .update("_gates/a.jsonl", "ours", |prior| {
                if !moved.replace(true) {
                    // The foreign write, after our read: "one\nforeign", committed on the tip.
                    let tip = git(&["rev-parse", REF], None);
                    let blob = git(&["hash-object", "-w", "--stdin"], Some("one\nforeign"));
                    let inner = git(&["mktree"], Some(&format!("100644 blob {blob}\ta.jsonl\n")));
                    let root = git(&["mktree"], Some(&format!("040000 tree {inner}\t_gates\n")));
                    let commit = git(&["commit-tree", &root, "-p", &tip, "-m", "foreign"], None);
                    git(&["update-ref", REF, &commit], None);
                }
                let mut bytes = prior.map(<[u8]>::to_vec).unwrap_or_default();
                bytes.extend_from_slice(b"\nours");
                bytes
            })
            .unwrap();
        assert_eq!(
            ledger.read("_gates/a.jsonl").unwrap().unwrap(),
            b"one\nforeign\nours"
        );
    }

    #[test]
    fn outside_a_repository() {
        let dir = tempfile::tempdir().unwrap();
        assert!(matches!(
            Ledger::open(dir.path()),
            Err(LedgerError::NotARepository)
        ));
    }

    #[test]
    fn appends_keep_exact_bytes_and_other_entries() {
        let (dir, ledger) = repo();
        assert!(!ledger.exists().unwrap());
        assert_eq!(ledger.read("dev/runs__a.jsonl").unwrap(), None);
        ledger
            .append_line(
                "dev/runs__a.jsonl",
                r#"{"a":"back\\slash \n newline"}"#,
                "run",
            )
            .unwrap();
        ledger
            .append_line("dev/runs__a.jsonl", r#"{"b":2}"#, "run")
            .unwrap();
        ledger
            .append_line("_gates/a.jsonl", r#"{"g":1}"#, "gate")
            .unwrap();
        ledger
            .write("dev/gitlab.json", b"{\n  \"x\": 1\n}", "State snapshot")
            .unwrap();
        assert_eq!(
            ledger.read("dev/runs__a.jsonl").unwrap().unwrap(),
            b"{\"a\":\"back\\\\slash \\n newline\"}\n{\"b\":2}"
        );
        assert_eq!(
            ledger.read("_gates/a.jsonl").unwrap().unwrap(),
            b"{\"g\":1}"
        );
        assert_eq!(
            ledger.read("dev/gitlab.json").unwrap().unwrap(),
            b"{\n  \"x\": 1\n}"
        );
        let mut names = ledger.list("dev").unwrap();
        names.sort();
        assert_eq!(names, ["gitlab.json", "runs__a.jsonl"]);
        // Reads from a subdirectory still see the whole tree.
        std::fs::create_dir(dir.path().join("sub")).unwrap();
        let from_sub = Ledger::open(&dir.path().join("sub")).unwrap();
        assert_eq!(
            from_sub.read("_gates/a.jsonl").unwrap().unwrap(),
            b"{\"g\":1}"
        );
        // The branch is a normal branch: git log shows it.
        let log = Command::new("git")
            .args(["log", "--oneline", BRANCH])
            .current_dir(dir.path())
            .output()
            .unwrap();
        assert_eq!(String::from_utf8_lossy(&log.stdout).lines().count(), 4);
    }

    #[test]
    fn bad_paths_are_refused() {
        let (_d, ledger) = repo();
        for p in ["", "a//b", "../x", "a/./b", "a\nb"] {
            assert!(
                matches!(
                    ledger.append_line(p, "{}", "m"),
                    Err(LedgerError::InvalidPath(_))
                ),
                "{p:?}"
            );
        }
    }
}

#[cfg(test)]
mod remote_tests;
