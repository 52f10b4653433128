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

    /// The blob sha at `path` in `commit` (whole tree, whatever the cwd).
    fn blob_sha(&self, commit: &str, path: &str) -> Result<Option<String>, LedgerError> {
        let out = self.git_text(&["ls-tree", "--full-tree", commit, "--", path], None)?;
        Ok(out.lines().next().and_then(|l| {
            let (meta, _) = l.split_once('\t')?;
            let mut parts = meta.split(' ');
            let (_, kind, sha) = (parts.next()?, parts.next()?, parts.next()?);
            (kind == "blob").then(|| sha.to_owned())
        }))
    }

    /// The bytes at `path` on the branch, `None` when absent.
    pub fn read(&self, path: &str) -> Result<Option<Vec<u8>>, LedgerError> {
        check_path(path)?;
        let Some(head) = self.head()? else {
            return Ok(None);
        };
        match self.blob_sha(&head, path)? {
            Some(sha) => Ok(Some(self.git(&["cat-file", "blob", &sha], None)?)),
            None => Ok(None),
        }
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
            let old = self.head()?;
            let prior_sha = match &old {
                Some(c) => self.blob_sha(c, path)?,
                None => None,
            };
            let prior = match &prior_sha {
                Some(sha) => Some(self.git(&["cat-file", "blob", sha], None)?),
                None => None,
            };
            let bytes = content(prior.as_deref());
            let blob = self.git_text(&["hash-object", "-w", "--stdin"], Some(&bytes))?;
            let root_tree = match &old {
                Some(c) => Some(self.git_text(&["rev-parse", &format!("{c}^{{tree}}")], None)?),
                None => None,
            };
            let tree = self.rebuild(root_tree.as_deref(), &parts, &blob)?;
            let mut args = vec!["commit-tree", tree.as_str()];
            if let Some(c) = &old {
                args.extend(["-p", c.as_str()]);
            }
            args.extend(["-m", message]);
            let commit = self.git_text(&args, None)?;
            // The path must still hold what was read, and the ref must not have moved.
            if let Some(c) = &old
                && self.blob_sha(c, path)? != prior_sha
            {
                continue;
            }
            let expected = old.as_deref().unwrap_or(ZERO);
            match self.git(&["update-ref", REF, &commit, expected], None) {
                Ok(_) => return Ok(commit),
                Err(LedgerError::Git { .. }) => continue,
                Err(e) => return Err(e),
            }
        }
        Err(LedgerError::Contended)
    }

    /// The tree `tree` with `parts` (a path) pointing at `blob`, rebuilt bottom-up.
    fn rebuild(
        &self,
        tree: Option<&str>,
        parts: &[&str],
        blob: &str,
    ) -> Result<String, LedgerError> {
        let mut entries: Vec<String> = match tree {
            Some(t) => self
                .git_text(&["ls-tree", t], None)?
                .lines()
                .map(str::to_owned)
                .collect(),
            None => Vec::new(),
        };
        let name = parts[0];
        let existing = entries
            .iter()
            .position(|e| e.split_once('\t').is_some_and(|(_, n)| n == name));
        let line = if parts.len() == 1 {
            format!("100644 blob {blob}\t{name}")
        } else {
            let sub = existing.and_then(|i| {
                let (meta, _) = entries[i].split_once('\t')?;
                let mut f = meta.split(' ');
                let (_, kind, sha) = (f.next()?, f.next()?, f.next()?);
                (kind == "tree").then(|| sha.to_owned())
            });
            let new_sub = self.rebuild(sub.as_deref(), &parts[1..], blob)?;
            format!("040000 tree {new_sub}\t{name}")
        };
        match existing {
            Some(i) => entries[i] = line,
            None => entries.push(line),
        }
        let mut input = entries.join("\n");
        input.push('\n');
        self.git_text(&["mktree"], Some(input.as_bytes()))
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

    #[test]
    fn lines_skip_blanks() {
        assert_eq!(lines(b"a\n\nb\r\n").collect::<Vec<_>>(), ["a", "b"]);
    }
}
