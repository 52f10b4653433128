//! `chant workspace records`: which kind a command reads or writes through (a kind file, a
//! declared kind's name, or the declaration's kinds), and the read documents for one kind and
//! for every declared kind.

use std::collections::{HashMap, HashSet};
use std::path::{Path, PathBuf};

use serde_json::{Value, json};

use crate::declaration::{self, Declaration, KindDecl};
use crate::error::{Result, WsError};
use crate::kind::{self, Kind, ModuleReader};
use crate::read::{self, Context, RECORDS_SCHEMA};
use crate::tree::Tree;
use crate::trust::Trust;

/// What every workspace command runs with.
pub struct Env<'a> {
    /// Where the command runs (absolute): relative paths resolve against it.
    pub cwd: &'a Path,
    /// This chant's version (`minReader`, the documents' `chant`).
    pub version: &'a str,
    /// Evaluates kind files.
    pub reader: &'a dyn ModuleReader,
}

impl Env<'_> {
    /// The declaration nearest above the working directory in `tree`, if there is one; a
    /// declaration that cannot be read is an error.
    pub fn declaration(&self, tree: &Tree) -> Result<Option<Declaration>> {
        match declaration::discover(self.cwd, tree, self.version) {
            Ok(d) => Ok(Some(d)),
            Err(e) if e.code == "declaration-missing" => Ok(None),
            Err(e) => Err(e),
        }
    }
}

/// The workspace root of a kind file: the directory of the declaration nearest above it, else
/// the repository's top, else the kind's own directory.
pub fn root_of(kind_file: &Path) -> PathBuf {
    let dir = kind_file.parent().unwrap_or(Path::new("/"));
    if let Ok(f) = declaration::find(dir, &Tree::Work)
        && let Some(p) = f.parent()
    {
        return p.to_path_buf();
    }
    crate::tree::toplevel(dir).unwrap_or_else(|| dir.to_path_buf())
}

/// A kind named on the command line: a declared kind's name (or its file's name without
/// `.kind.mjs`), else a kind file resolved against the working directory.
pub fn named_kind<'d>(
    env: &Env,
    given: &str,
    decl: Option<&'d Declaration>,
) -> (PathBuf, Option<&'d KindDecl>) {
    if let Some(d) = decl {
        let by_name = d.all_kinds().into_iter().find(|k| {
            k.name.as_deref() == Some(given)
                || Path::new(&k.path)
                    .file_name()
                    .and_then(|n| n.to_str())
                    .and_then(|n| n.strip_suffix(".kind.mjs"))
                    == Some(given)
        });
        if let Some(k) = by_name {
            return (d.root.join(&k.path), Some(k));
        }
    }
    let file = kind::normalize(&env.cwd.join(given));
    let declared = decl.and_then(|d| {
        d.all_kinds()
            .into_iter()
            .find(|k| d.root.join(&k.path) == file)
    });
    (file, declared)
}

/// Loads the kind at `file`, shown from its workspace root.
/// Loads the kind at `file`, shown from its workspace root. A kind file the base revision
/// holds is read as it is there (its rules judge the records, and a change cannot rewrite
/// them); a kind new in the working tree is read from it.
pub fn load_kind(env: &Env, file: &Path) -> Result<(Kind, PathBuf)> {
    let root = root_of(file);
    let shown = read::shown(&root, file);
    let top = crate::tree::toplevel(&root);
    let boundary = top.clone().unwrap_or_else(|| root.clone());
    let at_base = top.as_ref().and_then(|t| {
        let (commit, _) = crate::trust::base_of(t, None).ok().flatten()?;
        let file = std::fs::canonicalize(file).unwrap_or_else(|_| file.to_path_buf());
        let bytes = Tree::Rev {
            top: t.clone(),
            commit: commit.clone(),
        }
        .read(&file)?;
        Some((commit, bytes))
    });
    let k = kind::load_as(
        env.reader,
        &boundary,
        file,
        &shown,
        at_base.as_ref().map(|(c, b)| (c.as_str(), b.as_slice())),
    )?;
    Ok((k, root))
}

/// The review session kinds among `first` and the kinds `decl` names, loaded, each kind file
/// once (by its resolved path): `(file, kind, its workspace root)`. A kind that does not load
/// is not one.
pub fn session_kinds(
    env: &Env,
    decl: Option<&Declaration>,
    first: Option<PathBuf>,
) -> Vec<(PathBuf, Kind, PathBuf)> {
    let declared = decl
        .into_iter()
        .flat_map(|d| d.all_kinds().into_iter().map(|k| d.root.join(&k.path)));
    let mut seen = HashSet::new();
    first
        .into_iter()
        .chain(declared)
        .filter(|f| seen.insert(std::fs::canonicalize(f).unwrap_or_else(|_| f.clone())))
        .filter_map(|f| {
            let (kind, root) = load_kind(env, &f).ok()?;
            kind.session.is_some().then_some((f, kind, root))
        })
        .collect()
}

/// How a read is asked for.
#[derive(Debug, Default, Clone)]
pub struct ReadOptions {
    pub kind: Option<String>,
    pub current: bool,
    pub uncommitted: bool,
    pub at: Option<String>,
    pub base: Option<String>,
    pub id: Option<String>,
    pub require_attested: bool,
}

/// The declaration's entry for a kind, as a read document's `declared` block.
pub(crate) fn declared_block(k: Option<&KindDecl>) -> Value {
    match k {
        Some(k) => json!({"member": k.member, "path": k.path, "name": k.name}),
        None => Value::Null,
    }
}

fn failure(e: &WsError) -> Value {
    json!({"$schema": RECORDS_SCHEMA, "contract": 1, "error": e.block(false)})
}

/// The review need the declaration in the tree read sets, else 2.
fn need_of(decl: Option<&Declaration>) -> (u64, &'static str) {
    match decl.and_then(|d| d.quorum) {
        Some(q) => (q, "declaration"),
        None => (2, "default"),
    }
}

/// The review need, read at base as the trust policy is (a change cannot lower the quorum its
/// own records need): the declaration the trust read found at base beside its files, when the
/// base holds one; else `fallback`, the declaration of the tree read.
pub fn need_at_base(
    trust: &Trust,
    version: &str,
    fallback: Option<&Declaration>,
) -> (u64, &'static str) {
    if let Some((file, bytes)) = &trust.base_declaration
        && let Ok(d) = declaration::load_bytes(file, bytes.clone(), version)
    {
        return need_of(Some(&d));
    }
    need_of(fallback)
}

/// The sessions of `kind` closed at base, by id, with their seal: a session closed and sealed
/// at base stays closed with that seal (empty for a kind that is no session kind, or no base).
pub fn closed_at_base(kind: &Kind, root: &Path, trust: &Trust) -> HashMap<String, Option<Value>> {
    let (Some(spec), Some(top), Some(base)) = (&kind.session, &trust.top, &trust.base) else {
        return HashMap::new();
    };
    let at = Tree::Rev {
        top: top.clone(),
        commit: base.clone(),
    };
    read::records_at(kind, root, &at)
        .unwrap_or_default()
        .into_iter()
        .filter(|r| kind.is_closed(r.state.as_deref()))
        .filter_map(|r| {
            let seal = r.data.as_ref().and_then(|d| d.get(&spec.seal)).cloned();
            Some((r.id?, seal))
        })
        .collect()
}

/// Marks each session closed at base that is no longer closed with the same seal: a closed
/// session never reopens or changes (`session-seal-mismatch`).
pub fn reopened(
    kind: &Kind,
    records: &mut [read::Record],
    closed: &HashMap<String, Option<Value>>,
) {
    let Some(spec) = &kind.session else { return };
    for r in records.iter_mut() {
        let Some(seal) = r.id.as_ref().and_then(|id| closed.get(id)) else {
            continue;
        };
        let now = r.data.as_ref().and_then(|d| d.get(&spec.seal)).cloned();
        if !kind.is_closed(r.state.as_deref()) || now != *seal {
            r.reasons.push(read::Code {
                code: "session-seal-mismatch",
                message: format!(
                    "{} is closed and sealed at base, and here it is {} with {}: a closed session never reopens or changes; restore it from base, and open a new session",
                    r.path,
                    r.state.as_deref().unwrap_or("no state"),
                    if now.is_some() { "another seal" } else { "no seal" }
                ),
            });
        }
    }
}

/// The declaration, when it names record kinds: a read without `--kind` reads them all, and
/// without one needs `--kind`.
pub fn naming_kinds(decl: Option<&Declaration>) -> Result<&Declaration> {
    decl.filter(|d| !d.all_kinds().is_empty()).ok_or_else(|| {
        WsError::new(
            "kind-unreadable",
            "--kind <kind file> is required: no workspace declaration above this directory names a record kind",
        )
    })
}

/// Reads one kind: its document, and whether every printed record is attested.
fn read_kind(
    env: &Env,
    file: &Path,
    declared: Option<&KindDecl>,
    opts: &ReadOptions,
    tree: &Tree,
    decl_at: Option<&Declaration>,
) -> Result<(Value, bool)> {
    // The policy at base (a few git processes) is read while the kind file is evaluated.
    let root = root_of(file);
    let (kind, root, trust) = std::thread::scope(|scope| {
        let trust = scope.spawn(|| Trust::read(&root, opts.base.as_deref()));
        let kind = load_kind(env, file);
        let trust = trust
            .join()
            .unwrap_or_else(|p| std::panic::resume_unwind(p));
        kind.and_then(|(k, r)| Ok((k, r, trust?)))
    })?;
    let dirty = if opts.uncommitted || trust.active {
        crate::trust::dirty(&root)
    } else {
        None
    };
    if opts.uncommitted && dirty.is_none() {
        return Err(WsError::new(
            "not-a-git-repository",
            format!(
                "--uncommitted reads the working tree against HEAD, and {} is in no git repository",
                root.display()
            ),
        ));
    }
    let ctx = Context {
        tree,
        root: &root,
        trust: &trust,
        need: need_at_base(&trust, env.version, decl_at),
        dirty: dirty.as_ref(),
    };
    let mut records = read::read(&kind, &ctx, None)?;
    if let Some(spec) = &kind.session {
        if let Ok((subjects, _)) = load_kind(env, &spec.subjects)
            && let Ok(subject_records) = read::read(&subjects, &ctx, None)
        {
            read::link_sessions(&kind, &mut records, &subjects, &subject_records);
        }
        reopened(&kind, &mut records, &closed_at_base(&kind, &root, &trust));
    }
    let mut doc = read::document(&kind, records, &ctx, opts.current);
    let keep = |r: &Value| -> bool {
        let by_id = opts
            .id
            .as_deref()
            .is_none_or(|id| r["id"].as_str() == Some(id));
        let by_dirty = !opts.uncommitted
            || dirty.as_ref().is_some_and(|d: &HashSet<PathBuf>| {
                d.contains(&root.join(r["path"].as_str().unwrap_or("")))
            });
        by_id && by_dirty
    };
    if let Some(list) = doc["records"].as_array_mut() {
        list.retain(keep);
    }
    let attested = doc["records"]
        .as_array()
        .into_iter()
        .flatten()
        .all(|r| r["provenance"]["level"] == "attested");
    if declared.is_some() {
        doc["declared"] = declared_block(declared);
    }
    Ok((doc, attested))
}

/// `records [--kind] [--current] [--uncommitted] [--at] [--base] [--id]`: the document and the
/// exit code (0 read, 1 failed, 2 `--require attested` unmet).
pub fn records(env: &Env, opts: &ReadOptions) -> (Value, i32) {
    // `--uncommitted` with `--at` is refused by the command line and the MCP tool before this.
    let tree = match &opts.at {
        Some(rev) => match Tree::at(env.cwd, rev, "revision-unknown") {
            Ok(t) => t,
            Err(e) => return (failure(&e), 1),
        },
        None => Tree::Work,
    };
    let decl = match env.declaration(&tree) {
        Ok(d) => d,
        Err(e) => return (failure(&e), 1),
    };
    let exit = |attested: bool| {
        if opts.require_attested && !attested {
            2
        } else {
            0
        }
    };
    if let Some(given) = &opts.kind {
        let (file, declared) = named_kind(env, given, decl.as_ref());
        return match read_kind(env, &file, declared, opts, &tree, decl.as_ref()) {
            Ok((doc, attested)) => (doc, exit(attested)),
            Err(e) => (failure(&e), 1),
        };
    }
    let d = match naming_kinds(decl.as_ref()) {
        Ok(d) => d,
        Err(e) => return (failure(&e), 1),
    };
    let mut kinds = Vec::new();
    let mut failed = false;
    let mut all_attested = true;
    for k in d.all_kinds() {
        match read_kind(env, &d.root.join(&k.path), Some(k), opts, &tree, Some(d)) {
            Ok((doc, attested)) => {
                all_attested &= attested;
                kinds.push(doc);
            }
            Err(e) => {
                failed = true;
                let mut f = failure(&e);
                f["declared"] = declared_block(Some(k));
                kinds.push(f);
            }
        }
    }
    let code = if failed { 1 } else { exit(all_attested) };
    (
        json!({"$schema": RECORDS_SCHEMA, "contract": 1, "kinds": kinds}),
        code,
    )
}

/// The human form of a failure document's error block, `error[<code>]: <message>`.
pub(crate) fn error_line(doc: &Value) -> Option<String> {
    doc.get("error").map(|e| {
        format!(
            "error[{}]: {}\n",
            e["code"].as_str().unwrap_or(""),
            e["message"].as_str().unwrap_or("")
        )
    })
}

/// The human form of a records document (one kind or the declared set).
pub fn human(doc: &Value) -> String {
    let mut out = String::new();
    if let Some(kinds) = doc.get("kinds").and_then(Value::as_array) {
        for k in kinds {
            let name = k["kind"]["name"]
                .as_str()
                .or(k["declared"]["name"].as_str())
                .unwrap_or("?");
            let path = k["declared"]["path"].as_str().unwrap_or("");
            out.push_str(&format!("== {name} ({path})\n"));
            out.push_str(&human(k));
        }
        return out;
    }
    if let Some(line) = error_line(doc) {
        return line;
    }
    for r in doc["records"].as_array().into_iter().flatten() {
        let mark = if r["valid"] == true { "ok" } else { "INVALID" };
        out.push_str(&format!(
            "{:8} {:12} {:10} {}\n",
            mark,
            r["id"].as_str().unwrap_or("-"),
            r["state"].as_str().unwrap_or("-"),
            r["path"].as_str().unwrap_or("")
        ));
        for c in r["reasons"]
            .as_array()
            .into_iter()
            .flatten()
            .chain(r["warnings"].as_array().into_iter().flatten())
        {
            out.push_str(&format!(
                "         {}: {}\n",
                c["code"].as_str().unwrap_or(""),
                c["message"].as_str().unwrap_or("")
            ));
        }
        if let Some(q) = r.get("quorum").filter(|q| q.is_object())
            && (q["counted"].as_array().is_some_and(|a| !a.is_empty())
                || q["notCounted"].as_array().is_some_and(|a| !a.is_empty()))
        {
            let mut line = format!("         quorum {} of {} agreed", q["agreed"], q["need"]);
            if q["met"] == true {
                line.push_str(if q["metWithObjections"] == true {
                    ", met with objections"
                } else {
                    ", met"
                });
            }
            let nc = q["notCounted"].as_array().map_or(0, Vec::len);
            let oc = q["openConcerns"].as_array().map_or(0, Vec::len);
            if nc > 0 || oc > 0 {
                line.push_str(&format!(
                    "; {nc} not counted, {oc} open concern{}",
                    if oc == 1 { "" } else { "s" }
                ));
            }
            out.push_str(&line);
            out.push('\n');
        }
    }
    let s = &doc["summary"];
    out.push_str(&format!(
        "{} records: {} valid, {} invalid, {} superseded\n",
        s["total"], s["valid"], s["invalid"], s["superseded"]
    ));
    out
}

/// `records pin <path>`: the path from the workspace root and the file's sha256, for an
/// evidence pin.
pub fn pin(env: &Env, path: &Path) -> Result<Value> {
    let file = std::fs::canonicalize(env.cwd.join(path))
        .map_err(|e| WsError::new("asset-missing", format!("{}: {e}", path.display())))?;
    let root = match env.declaration(&Tree::Work)? {
        Some(d) => d.root,
        None => crate::tree::toplevel(env.cwd).unwrap_or_else(|| env.cwd.to_path_buf()),
    };
    let root = std::fs::canonicalize(&root).unwrap_or(root);
    if !file.starts_with(&root) || !file.is_file() {
        return Err(WsError::new(
            "asset-missing",
            format!(
                "{} is not a file inside the workspace ({}); a pin names a workspace file",
                path.display(),
                root.display()
            ),
        ));
    }
    // Read as it is opened, inside the workspace (no FIFO, no file swapped for a link).
    let bytes = crate::tree::read_inside(&file, &root).map_err(|_| {
        WsError::new(
            "asset-missing",
            format!(
                "{}: cannot be read inside the workspace (a regular file of at most {} bytes)",
                path.display(),
                crate::tree::MAX_FILE
            ),
        )
    })?;
    Ok(json!({"path": read::shown(&root, &file), "sha256": crate::digest::sha256_hex(&bytes)}))
}
