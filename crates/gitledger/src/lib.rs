//! The `chant/lifecycle` ledger branch, driven through the git CLI's plumbing.
//!
//! Owns reading and writing files on a branch without touching any work tree: exact-bytes
//! blobs (`hash-object -w --stdin`), trees rebuilt bottom-up with `mktree`, commits with
//! `commit-tree`, and a compare-and-swap `update-ref` with retries. Reads always see the whole
//! tree, whatever the current directory. Local writers are serialized with an advisory file lock
//! (released even when a writer is killed), and the compare-and-swap protects against everyone
//! else. Every git command is spawned with an argument vector, never through a shell. It knows
//! nothing of what the files mean (runs, gates, snapshots).

use std::fs::File;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use thiserror::Error;

/// The ledger branch.
pub const BRANCH: &str = "chant/lifecycle";
const REF: &str = "refs/heads/chant/lifecycle";
const ZERO: &str = "0000000000000000000000000000000000000000";
const MAX_ATTEMPTS: usize = 5;

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
    #[error("{0}")]
    Io(#[from] std::io::Error),
}

/// A repository's ledger branch.
#[derive(Clone, Debug)]
pub struct Ledger {
    toplevel: PathBuf,
    git_dir: PathBuf,
}

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

/// The ledger's files at one commit: paths and blob ids, contents read in one batch.
#[derive(Debug)]
pub struct Snapshot<'a> {
    ledger: &'a Ledger,
    files: std::collections::BTreeMap<String, String>,
}

impl Snapshot<'_> {
    /// Every file path, sorted.
    pub fn paths(&self) -> impl Iterator<Item = &str> {
        self.files.keys().map(String::as_str)
    }

    /// The bytes of each of `paths` (`None` where absent), in order, with one `git cat-file
    /// --batch` however many there are.
    pub fn read_many(&self, paths: &[&str]) -> Result<Vec<Option<Vec<u8>>>, LedgerError> {
        let shas: Vec<Option<&String>> = paths.iter().map(|p| self.files.get(*p)).collect();
        let wanted: Vec<&str> = shas.iter().flatten().map(|s| s.as_str()).collect();
        if wanted.is_empty() {
            return Ok(vec![None; paths.len()]);
        }
        let mut input = wanted.join("\n");
        input.push('\n');
        let out = self
            .ledger
            .git(&["cat-file", "--batch"], Some(input.as_bytes()))?;
        let mut blobs = parse_batch(&out, wanted.len())?.into_iter();
        Ok(shas
            .iter()
            .map(|s| s.and_then(|_| blobs.next().flatten().map(|(_, _, body)| body)))
            .collect())
    }
}

/// What [`Ledger::read_path`] found: head commit, tree listings down the path, file bytes.
type PathRead = (Option<String>, Vec<Vec<String>>, Option<Vec<u8>>);

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
        let out = Command::new("git")
            .args(["rev-parse", "--show-toplevel", "--absolute-git-dir"])
            .current_dir(dir)
            .stdin(Stdio::null())
            .output()
            .map_err(|_| LedgerError::NotARepository)?;
        if !out.status.success() {
            return Err(LedgerError::NotARepository);
        }
        let text = String::from_utf8_lossy(&out.stdout);
        let mut lines = text.lines();
        let (Some(top), Some(git_dir)) = (lines.next(), lines.next()) else {
            return Err(LedgerError::NotARepository);
        };
        Ok(Ledger {
            toplevel: PathBuf::from(top),
            git_dir: PathBuf::from(git_dir),
        })
    }

    pub fn toplevel(&self) -> &Path {
        &self.toplevel
    }

    fn git(&self, args: &[&str], input: Option<&[u8]>) -> Result<Vec<u8>, LedgerError> {
        let mut cmd = Command::new("git");
        cmd.arg("-C").arg(&self.toplevel).args(args);
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
        let ok = Command::new("git")
            .arg("-C")
            .arg(&self.toplevel)
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

    /// The branch's commit, if the branch exists.
    pub fn head(&self) -> Result<Option<String>, LedgerError> {
        match self.git(
            &[
                "rev-parse",
                "--verify",
                "--quiet",
                &format!("{REF}^{{commit}}"),
            ],
            None,
        ) {
            Ok(out) => Ok(Some(String::from_utf8_lossy(&out).trim().to_owned())),
            Err(LedgerError::Git { .. }) => Ok(None),
            Err(e) => Err(e),
        }
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
        let input = format!("{REF}:{path}\n");
        let out = self.git(&["cat-file", "--batch"], Some(input.as_bytes()))?;
        Ok(match parse_batch(&out, 1)?.pop().flatten() {
            Some((_, kind, body)) if kind == "blob" => Some(body),
            _ => None,
        })
    }

    /// Every file on the branch as of its current commit, listed with one `ls-tree -r`; read
    /// any number of them with one `cat-file --batch` ([`Snapshot::read_many`]).
    pub fn snapshot(&self) -> Result<Snapshot<'_>, LedgerError> {
        let mut files = std::collections::BTreeMap::new();
        if let Some(head) = self.head()? {
            let out = self.git(&["ls-tree", "-r", "-z", "--full-tree", &head], None)?;
            for line in out.split(|b| *b == 0).filter(|l| !l.is_empty()) {
                let line = String::from_utf8_lossy(line);
                if let Some((kind, sha, name)) = entry(&line)
                    && kind == "blob"
                {
                    files.insert(name.to_owned(), sha.to_owned());
                }
            }
        }
        Ok(Snapshot {
            ledger: self,
            files,
        })
    }

    /// Names of the entries directly under `dir` (`""` for the top), blobs and trees.
    pub fn list(&self, dir: &str) -> Result<Vec<String>, LedgerError> {
        let Some(head) = self.head()? else {
            return Ok(Vec::new());
        };
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
        let parts = check_path(path)?;
        let lock = File::options()
            .create(true)
            .truncate(false)
            .write(true)
            .open(self.git_dir.join("chant-lifecycle.lock"))?;
        lock.lock()?;
        for _ in 0..MAX_ATTEMPTS {
            let (old, levels, prior) = self.read_path(&parts)?;
            let bytes = content(prior.as_deref());
            let blob = self.git_text(&["hash-object", "-w", "--stdin"], Some(&bytes))?;
            let tree = self.mktrees(&parts, levels, &blob)?;
            let mut args = vec!["commit-tree", tree.as_str()];
            if let Some(c) = &old {
                args.extend(["-p", c.as_str()]);
            }
            args.extend(["-m", message]);
            let commit = self.git_text(&args, None)?;
            // Compare-and-swap: only if the branch still points where this attempt read it.
            // Whatever moved after that read (even between the reads of one batch) fails here.
            let expected = old.as_deref().unwrap_or(ZERO);
            match self.git(&["update-ref", REF, &commit, expected], None) {
                Ok(_) => return Ok(commit),
                Err(LedgerError::Git { .. }) => continue,
                Err(e) => return Err(e),
            }
        }
        Err(LedgerError::Contended)
    }

    /// One `cat-file --batch` for an update of `parts`: the branch's commit, the `ls-tree`
    /// lines of each tree down the path (root first; empty where absent) and the file's bytes.
    fn read_path(&self, parts: &[&str]) -> Result<PathRead, LedgerError> {
        let mut input = format!("{REF}\n{REF}^{{tree}}\n");
        for i in 1..=parts.len() {
            input.push_str(&format!("{REF}:{}\n", parts[..i].join("/")));
        }
        let out = self.git(&["cat-file", "--batch"], Some(input.as_bytes()))?;
        let mut objects = parse_batch(&out, parts.len() + 2)?.into_iter();
        let Some(Some((head, _, _))) = objects.next() else {
            return Ok((None, vec![Vec::new(); parts.len()], None));
        };
        let mut levels = Vec::with_capacity(parts.len());
        for _ in 0..parts.len() {
            levels.push(match objects.next().flatten() {
                Some((_, kind, body)) if kind == "tree" => tree_lines(&body, head.len() / 2),
                _ => Vec::new(),
            });
        }
        let prior = match objects.next().flatten() {
            Some((_, kind, body)) if kind == "blob" => Some(body),
            _ => None,
        };
        Ok((Some(head), levels, prior))
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
        let mut child = Command::new("git")
            .arg("-C")
            .arg(&self.toplevel)
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
        remotes
            .iter()
            .find(|r| **r == "origin")
            .or(remotes.first())
            .map(|r| (*r).to_owned())
    }

    /// Pushes the branch with a lease on `expected` (the remote's value when the write began).
    pub fn push(&self, remote: &str, expected: Option<&str>) -> Result<(), LedgerError> {
        let lease = match expected {
            Some(e) => format!("--force-with-lease={REF}:{e}"),
            None => format!("--force-with-lease={REF}"),
        };
        self.git(
            &[
                "push",
                "--quiet",
                &lease,
                remote,
                &format!("{BRANCH}:{BRANCH}"),
            ],
            None,
        )
        .map(|_| ())
    }
}

/// Splits a JSONL blob into its non-empty lines (with or without a trailing newline).
pub fn lines(bytes: &[u8]) -> impl Iterator<Item = &str> {
    std::str::from_utf8(bytes)
        .unwrap_or_default()
        .split('\n')
        .map(|l| l.trim_end_matches('\r'))
        .filter(|l| !l.trim().is_empty())
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
    fn a_snapshot_reads_many_files_in_one_batch() {
        let (_d, ledger) = repo();
        assert_eq!(ledger.snapshot().unwrap().paths().count(), 0);
        ledger.append_line("a/b/c/deep.jsonl", "1", "m").unwrap();
        ledger.append_line("a/b/c/deep.jsonl", "2\n", "m").unwrap();
        ledger.write("dev/x.json", b"", "m").unwrap();
        ledger.write("dev/bin", &[0, 10, 255, 10, 10], "m").unwrap();
        let snap = ledger.snapshot().unwrap();
        assert_eq!(
            snap.paths().collect::<Vec<_>>(),
            ["a/b/c/deep.jsonl", "dev/bin", "dev/x.json"]
        );
        let got = snap
            .read_many(&["dev/bin", "nope", "a/b/c/deep.jsonl", "dev/x.json"])
            .unwrap();
        assert_eq!(
            got,
            [
                Some(vec![0, 10, 255, 10, 10]),
                None,
                Some(b"1\n2\n".to_vec()),
                Some(Vec::new())
            ]
        );
        // A later write does not change what the snapshot sees.
        ledger.append_line("dev/x.json", "y", "m").unwrap();
        assert_eq!(snap.read_many(&["dev/x.json"]).unwrap(), [Some(Vec::new())]);
        assert_eq!(ledger.read("dev/x.json").unwrap().unwrap(), b"y");
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

    #[test]
    fn lines_skip_blanks() {
        assert_eq!(lines(b"a\n\nb\r\n").collect::<Vec<_>>(), ["a", "b"]);
    }
}
