//! Reading one commit of the ledger object by object, through one long-lived
//! `git cat-file --batch`: each request is a line, each answer is read before the next is
//! asked, so a reader can walk a tree and stop as soon as it has what it needs.
//!
//! This is what keeps the cost of "the latest record" independent of history: a record file's
//! directories name when it was written (see [`Ledger::append_record`]), so the newest one is
//! found by descending the newest entry of each level, a handful of objects however many
//! records there are.

use std::io::{BufRead, BufReader, Read, Write};
use std::process::{Child, ChildStdin, ChildStdout, Stdio};

use crate::{Ledger, LedgerError, check_path, git_command};

/// What a tree entry holds.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    Blob,
    Tree,
    /// A submodule link or anything else chant never writes.
    Other,
}

/// One entry of a tree.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Entry {
    pub name: String,
    pub kind: Kind,
    pub sha: String,
}

/// The largest record file a walk reads (a record is a few KiB): a larger one is passed to the
/// visitor as its size, unread.
pub const MAX_RECORD_BYTES: u64 = 16 << 20;

/// The largest file [`Reader::blob`] reads (an earlier release's history file of a busy Op
/// can be hundreds of MiB): a larger one is [`LedgerError::TooLarge`], drained unread.
pub const MAX_FILE_BYTES: u64 = 512 << 20;

/// A walk's visitor: `(path, bytes or the size of a file too large to read)` → what next.
pub type Visitor<'a> = dyn FnMut(&str, Result<&[u8], u64>) -> Flow + 'a;

/// What a walk's visitor asks for next.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Flow {
    /// The next file, newest first.
    Next,
    /// The rest of this file's directory, then stop.
    FinishDir,
    /// Nothing more.
    Stop,
}

struct Batch {
    child: Child,
    stdin: ChildStdin,
    stdout: BufReader<ChildStdout>,
}

/// Reads the ledger as of one commit (the latest this clone knows when the reader was made).
pub struct Reader {
    ledger: Ledger,
    head: Option<String>,
    batch: Option<Batch>,
}

impl Drop for Reader {
    fn drop(&mut self) {
        if let Some(b) = self.batch.take() {
            drop(b.stdin);
            let mut child = b.child;
            let _ = child.wait();
        }
    }
}

fn bad(what: &str) -> LedgerError {
    LedgerError::Git {
        args: "cat-file --batch".into(),
        message: what.into(),
    }
}

impl Reader {
    pub(crate) fn new(ledger: &Ledger, head: Option<String>) -> Reader {
        Reader {
            ledger: ledger.clone(),
            head,
            batch: None,
        }
    }

    /// The commit this reader reads (`None`: no ledger yet).
    pub fn head(&self) -> Option<&str> {
        self.head.as_deref()
    }

    /// One object by name (`<sha>`, `<commit>:<path>`): `(kind, bytes)`, `None` when missing;
    /// one larger than `max` is drained unread and is [`LedgerError::TooLarge`].
    fn object_up_to(
        &mut self,
        spec: &str,
        max: u64,
    ) -> Result<Option<(String, Vec<u8>)>, LedgerError> {
        if self.batch.is_none() {
            let mut child = git_command(self.ledger.toplevel())
                .args(["cat-file", "--batch"])
                .stdin(Stdio::piped())
                .stdout(Stdio::piped())
                .stderr(Stdio::null())
                .spawn()?;
            let stdin = child.stdin.take().expect("piped stdin");
            let stdout = BufReader::new(child.stdout.take().expect("piped stdout"));
            self.batch = Some(Batch {
                child,
                stdin,
                stdout,
            });
        }
        let b = self.batch.as_mut().expect("started above");
        b.stdin.write_all(spec.as_bytes())?;
        b.stdin.write_all(b"\n")?;
        b.stdin.flush()?;
        let mut header = String::new();
        if b.stdout.read_line(&mut header)? == 0 {
            return Err(bad("ended early"));
        }
        let fields: Vec<&str> = header.trim_end().split(' ').collect();
        let [_, kind, size] = fields[..] else {
            // `<name> missing` or `<name> ambiguous`: nothing follows.
            return Ok(None);
        };
        let size: u64 = size.parse().map_err(|_| bad("bad header"))?;
        if size > max {
            let drained = std::io::copy(&mut (&mut b.stdout).take(size + 1), &mut std::io::sink())?;
            if drained != size + 1 {
                return Err(bad("ended early"));
            }
            return Err(LedgerError::TooLarge {
                path: spec.to_owned(),
                size,
                max,
            });
        }
        let mut body = vec![0; size as usize + 1];
        b.stdout.read_exact(&mut body)?;
        body.pop();
        Ok(Some((kind.to_owned(), body)))
    }

    /// [`Reader::object_up_to`] [`MAX_FILE_BYTES`].
    fn object(&mut self, spec: &str) -> Result<Option<(String, Vec<u8>)>, LedgerError> {
        self.object_up_to(spec, MAX_FILE_BYTES)
    }

    fn entries(&self, raw: &[u8]) -> Vec<Entry> {
        let hash_len = self.head.as_ref().map_or(20, |h| h.len() / 2);
        crate::tree_lines(raw, hash_len)
            .iter()
            .filter_map(|l| {
                let (kind, sha, name) = crate::entry(l)?;
                // A name chant never writes is not followed.
                check_path(name).ok().filter(|p| p.len() == 1)?;
                Some(Entry {
                    name: name.to_owned(),
                    kind: match kind {
                        "blob" => Kind::Blob,
                        "tree" => Kind::Tree,
                        _ => Kind::Other,
                    },
                    sha: sha.to_owned(),
                })
            })
            .collect()
    }

    /// The entries of the tree at `dir` (`""` for the top), `None` when there is none.
    pub fn tree(&mut self, dir: &str) -> Result<Option<Vec<Entry>>, LedgerError> {
        let Some(head) = self.head.clone() else {
            return Ok(None);
        };
        if !dir.is_empty() {
            check_path(dir)?;
        }
        let full = self.ledger.full(dir);
        let spec = if full.is_empty() {
            format!("{head}^{{tree}}")
        } else {
            format!("{head}:{full}")
        };
        Ok(match self.object(&spec)? {
            Some((kind, body)) if kind == "tree" => Some(self.entries(&body)),
            _ => None,
        })
    }

    /// The tree id of commit `commit`.
    pub(crate) fn tree_sha(&mut self, commit: &str) -> Result<Option<String>, LedgerError> {
        Ok(match self.object(commit)? {
            Some((kind, body)) if kind == "commit" => String::from_utf8_lossy(&body)
                .lines()
                .next()
                .and_then(|l| l.strip_prefix("tree "))
                .map(str::to_owned),
            _ => None,
        })
    }

    /// The raw bytes of tree object `sha`.
    pub(crate) fn raw_tree(&mut self, sha: &str) -> Result<Option<Vec<u8>>, LedgerError> {
        Ok(match self.object(sha)? {
            Some((kind, body)) if kind == "tree" => Some(body),
            _ => None,
        })
    }

    /// The entries of the tree object `sha`.
    pub fn tree_at(&mut self, sha: &str) -> Result<Vec<Entry>, LedgerError> {
        Ok(match self.object(sha)? {
            Some((kind, body)) if kind == "tree" => self.entries(&body),
            _ => Vec::new(),
        })
    }

    /// The bytes of the file at `path`, `None` when absent.
    pub fn blob(&mut self, path: &str) -> Result<Option<Vec<u8>>, LedgerError> {
        check_path(path)?;
        let Some(head) = self.head.clone() else {
            return Ok(None);
        };
        let found = self
            .object(&format!("{head}:{}", self.ledger.full(path)))
            .map_err(|e| match e {
                LedgerError::TooLarge { size, max, .. } => LedgerError::TooLarge {
                    path: path.to_owned(),
                    size,
                    max,
                },
                e => e,
            })?;
        Ok(match found {
            Some((kind, body)) if kind == "blob" => Some(body),
            _ => None,
        })
    }

    /// The bytes of the blob object `sha`.
    pub fn blob_at(&mut self, sha: &str) -> Result<Option<Vec<u8>>, LedgerError> {
        Ok(match self.object(sha)? {
            Some((kind, body)) if kind == "blob" => Some(body),
            _ => None,
        })
    }

    /// Walks the files under `dir` newest first — entries of each tree in descending name
    /// order, depth first — calling `visit(path, bytes)` on each file until it says stop (a
    /// file over [`MAX_RECORD_BYTES`] is visited as `Err(its size)`, unread).
    /// `take(path, kind)` is asked before each subtree and file (false: skip it, unread).
    pub fn newest_first(
        &mut self,
        dir: &str,
        take: &mut dyn FnMut(&str, Kind) -> bool,
        visit: &mut Visitor<'_>,
    ) -> Result<(), LedgerError> {
        let Some(top) = self.tree(dir)? else {
            return Ok(());
        };
        self.walk(dir, top, take, visit).map(|_| ())
    }

    /// `false` once the visitor asked to stop.
    fn walk(
        &mut self,
        dir: &str,
        mut entries: Vec<Entry>,
        take: &mut dyn FnMut(&str, Kind) -> bool,
        visit: &mut Visitor<'_>,
    ) -> Result<bool, LedgerError> {
        entries.sort_by(|a, b| b.name.cmp(&a.name));
        let mut finishing = false;
        for e in entries {
            let path = format!("{dir}/{}", e.name);
            match e.kind {
                Kind::Tree if !finishing && take(&path, Kind::Tree) => {
                    let sub = self.tree_at(&e.sha)?;
                    if !self.walk(&path, sub, take, visit)? {
                        return Ok(false);
                    }
                }
                Kind::Blob if take(&path, Kind::Blob) => {
                    let flow = match self.object_up_to(&e.sha, MAX_RECORD_BYTES) {
                        Ok(Some((kind, bytes))) if kind == "blob" => visit(&path, Ok(&bytes)),
                        Ok(_) => continue,
                        Err(LedgerError::TooLarge { size, .. }) => visit(&path, Err(size)),
                        Err(e) => return Err(e),
                    };
                    match flow {
                        Flow::Next => {}
                        Flow::FinishDir => finishing = true,
                        Flow::Stop => return Ok(false),
                    }
                }
                _ => {}
            }
        }
        Ok(!finishing)
    }

    /// Every file under `dir`, `(path, bytes)` sorted by path: one `ls-tree -r` and one
    /// batch of reads. A file over [`MAX_RECORD_BYTES`] is `(path, Err(its size))`, unread.
    #[allow(clippy::type_complexity)]
    pub fn files_under(
        &mut self,
        dir: &str,
    ) -> Result<Vec<(String, Result<Vec<u8>, u64>)>, LedgerError> {
        let Some(head) = self.head.clone() else {
            return Ok(Vec::new());
        };
        check_path(dir)?;
        let spec = format!("{head}:{}", self.ledger.full(dir));
        let out = match self.ledger.git(&["ls-tree", "-r", "-l", "-z", &spec], None) {
            Ok(out) => out,
            Err(LedgerError::Git { .. }) => return Ok(Vec::new()),
            Err(e) => return Err(e),
        };
        let mut listed = Vec::new();
        let mut too_large = Vec::new();
        for line in out.split(|b| *b == 0).filter(|l| !l.is_empty()) {
            let line = String::from_utf8_lossy(line);
            let Some((meta, name)) = line.split_once('\t') else {
                continue;
            };
            // `<mode> blob <sha> <size, right-aligned>`
            let mut f = meta.split_whitespace();
            if let (Some(_), Some("blob"), Some(sha), Some(size)) =
                (f.next(), f.next(), f.next(), f.next())
                && check_path(name).is_ok()
            {
                let path = format!("{dir}/{name}");
                match size.parse::<u64>() {
                    Ok(n) if n <= MAX_RECORD_BYTES => listed.push((path, sha.to_owned())),
                    Ok(n) => too_large.push((path, Err(n))),
                    Err(_) => {}
                }
            }
        }
        if listed.is_empty() && too_large.is_empty() {
            return Ok(Vec::new());
        }
        let mut input: String = listed.iter().map(|(_, sha)| format!("{sha}\n")).collect();
        input.pop();
        input.push('\n');
        let raw = self
            .ledger
            .git(&["cat-file", "--batch"], Some(input.as_bytes()))?;
        let objects = crate::parse_batch(&raw, listed.len())?;
        let mut files: Vec<(String, Result<Vec<u8>, u64>)> = listed
            .into_iter()
            .zip(objects)
            .filter_map(|((path, _), o)| match o {
                Some((_, kind, body)) if kind == "blob" => Some((path, Ok(body))),
                _ => None,
            })
            .chain(too_large)
            .collect();
        files.sort_by(|a, b| a.0.cmp(&b.0));
        Ok(files)
    }
}
