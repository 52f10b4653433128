//! Reading a kind's records: each file the kind locates, parsed, judged by the kind's schema,
//! with ids, supersession, evidence pins, digest, quorum and provenance worked out. A read
//! never writes; a write reads through here twice, the second time with its candidate file in
//! place ([`Overlay`]).

use std::collections::{HashMap, HashSet};
use std::path::{Path, PathBuf};

use serde_json::{Map, Value, json};

use crate::digest;
use crate::error::{Result, WsError};
use crate::kind::{Format, Id, Kind};
use crate::quorum::{self, Judge};
use crate::tree::Tree;
use crate::trust::Trust;

/// A file a write would put in place, read instead of what the tree holds there.
pub struct Overlay {
    pub file: PathBuf,
    pub text: String,
}

/// What a read needs besides the kind.
pub struct Context<'a> {
    pub tree: &'a Tree,
    /// The workspace root, absolute: record and pin paths are shown from it.
    pub root: &'a Path,
    pub trust: &'a Trust,
    /// The review need and where it came from (`declaration` or `default`).
    pub need: (u64, &'static str),
    /// Paths (absolute) the working tree holds changed or new against HEAD, when known.
    pub dirty: Option<&'a HashSet<PathBuf>>,
}

#[derive(Debug, Clone, PartialEq)]
pub struct Code {
    pub code: &'static str,
    pub message: String,
}

fn code(code: &'static str, message: impl Into<String>) -> Code {
    Code {
        code,
        message: message.into(),
    }
}

/// One record as read.
#[derive(Debug, Clone)]
pub struct Record {
    pub id: Option<String>,
    /// From the workspace root, `/` separators.
    pub path: String,
    pub file: PathBuf,
    pub text: Option<String>,
    pub data: Option<Map<String, Value>>,
    pub state: Option<String>,
    pub reasons: Vec<Code>,
    pub warnings: Vec<Code>,
    pub superseded_by: Option<String>,
    pub digest: Option<String>,
    pub assets: Vec<Value>,
    pub quorum: Option<Value>,
    pub provenance: Value,
    /// What the record's author seal establishes (a kind with reviews, a parsed record).
    pub attestation: Option<crate::seal::Attestation>,
    /// On a session kind's record: the subjects' review entries that name it.
    pub cited_by: Option<Vec<Value>>,
}

impl Record {
    pub fn valid(&self) -> bool {
        self.reasons.is_empty()
    }
}

/// `path` from `root` with `/` separators (the path itself when it is not under `root`).
pub fn shown(root: &Path, path: &Path) -> String {
    let rel = path.strip_prefix(root).unwrap_or(path);
    let s = rel
        .components()
        .map(|c| c.as_os_str().to_string_lossy().into_owned())
        .collect::<Vec<_>>()
        .join("/");
    if s.is_empty() { ".".into() } else { s }
}

/// Parses a record's text by the kind's format: its structured core, or why it has none.
pub fn parse(kind: &Kind, text: &str) -> std::result::Result<Map<String, Value>, String> {
    match kind.format {
        Format::Markdown => {
            let text = digest::lf(text);
            let (fm, _) = digest::front_matter(&text)
                .ok_or("has no front matter (a first line --- and a closing ---)")?;
            let parsed = match crate::frontmatter::read(&text[fm.clone()]) {
                Some(m) => Ok(Value::Object(m)),
                None => chant_yaml::read::parse_json_subset(&text[fm]),
            };
            match parsed {
                // A top-level key the digest rule would read as a block's continuation line
                // could be added after a review without moving the digest.
                Ok(Value::Object(m)) => match m
                    .keys()
                    .find(|k| k.is_empty() || k.starts_with(['-', '#', ' ', '\t']))
                {
                    Some(k) => Err(format!(
                        "front matter has the key {k:?}, and a top-level key may not start with -, # or a space"
                    )),
                    None => Ok(m),
                },
                Ok(other) => Err(format!(
                    "front matter is {} rather than a mapping",
                    kind_of(&other)
                )),
                Err(e) => Err(format!("front matter: {e}")),
            }
        }
        Format::Json => match crate::json::parse(text, false) {
            Ok(Value::Object(m)) => Ok(m),
            Ok(other) => Err(format!("holds {} rather than one object", kind_of(&other))),
            Err(e) => Err(format!("is not I-JSON: {e}")),
        },
    }
}

fn kind_of(v: &Value) -> &'static str {
    match v {
        Value::Null => "empty",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "a list",
        Value::Object(_) => "an object",
    }
}

pub use crate::tree::pin_path_ok;

/// The files the kind locates, in path order: every file directly in its directory whose name
/// matches, and the overlay's file when it is one of them.
fn locate(kind: &Kind, ctx: &Context, overlay: Option<&Overlay>) -> Result<Vec<PathBuf>> {
    let Some(entries) = ctx.tree.list(&kind.dir) else {
        if overlay.is_some_and(|o| o.file.parent() == Some(kind.dir.as_path())) {
            return Ok(vec![overlay.map(|o| o.file.clone()).unwrap_or_default()]);
        }
        return Err(WsError::new(
            "location-missing",
            format!(
                "{}: the records directory {} does not exist{}; create it, or fix the kind's location.dir",
                shown(ctx.root, &kind.file),
                shown(ctx.root, &kind.dir),
                ctx.tree
                    .commit()
                    .map(|c| format!(" at {c}"))
                    .unwrap_or_default()
            ),
        ));
    };
    let mut files: Vec<PathBuf> = entries
        .into_iter()
        .filter(|e| e.file && kind.matcher.is_match(&e.name))
        .map(|e| kind.dir.join(e.name))
        .collect();
    if let Some(o) = overlay
        && !files.contains(&o.file)
    {
        files.push(o.file.clone());
        files.sort();
    }
    Ok(files)
}

/// Reads every record of `kind`, with `overlay` in place of what the tree holds at its path.
pub fn read(kind: &Kind, ctx: &Context, overlay: Option<&Overlay>) -> Result<Vec<Record>> {
    let files = locate(kind, ctx, overlay)?;
    // The texts of some of the files, in their order: the overlay's for its file, else what
    // the tree holds (in the working tree, only what lies inside the workspace once opened).
    let root_real = std::fs::canonicalize(ctx.root).unwrap_or_else(|_| ctx.root.to_path_buf());
    let cannot = || {
        format!(
            "cannot be read (missing, unreadable or larger than {} bytes)",
            crate::tree::MAX_FILE
        )
    };
    let utf8 = |b: Vec<u8>| String::from_utf8(b).map_err(|_| "is not UTF-8 text".to_owned());
    let dir = matches!(ctx.tree, Tree::Work)
        .then(|| crate::tree::DirReader::open(&kind.dir, &root_real))
        .flatten();
    let texts = |files: &[PathBuf]| -> Vec<std::result::Result<String, String>> {
        if matches!(ctx.tree, Tree::Work) {
            let read_one = |f: &PathBuf| match (&dir, f.file_name()) {
                (Some(d), Some(name)) if f.parent() == Some(kind.dir.as_path()) => d.read(name),
                _ => crate::tree::read_inside(f, &root_real),
            };
            return files
                .iter()
                .map(|f| match overlay {
                    Some(o) if &o.file == f => Ok(o.text.clone()),
                    _ => match read_one(f) {
                        Ok(b) => utf8(b),
                        Err(crate::tree::Unread::Outside) => Err(
                            "is a link that leads outside the workspace, so it is not read"
                                .to_owned(),
                        ),
                        Err(crate::tree::Unread::Unreadable) => Err(cannot()),
                    },
                })
                .collect();
        }
        let from_tree: Vec<PathBuf> = files
            .iter()
            .filter(|f| overlay.is_none_or(|o| &o.file != *f))
            .cloned()
            .collect();
        let mut got = ctx.tree.read_many(&from_tree).into_iter();
        files
            .iter()
            .map(|f| match overlay {
                Some(o) if &o.file == f => Ok(o.text.clone()),
                _ => got.next().flatten().map_or_else(|| Err(cannot()), utf8),
            })
            .collect()
    };
    // Some of the files read and each record parsed and judged on its own.
    let parsed = |files: &[PathBuf]| -> Vec<Record> {
        files
            .iter()
            .zip(texts(files))
            .map(|(f, t)| parse_one(kind, ctx.root, f, t))
            .collect()
    };
    // Over both cores, reading included: the rest of the read (ids, supersession, pins,
    // quorum) needs them all and runs after.
    let mut records: Vec<Record> = if files.len() < 64 {
        parsed(&files)
    } else {
        let (first, second) = files.split_at(files.len() / 2);
        std::thread::scope(|scope| {
            let other = scope.spawn(|| parsed(second));
            let mut records = parsed(first);
            records.extend(
                other
                    .join()
                    .unwrap_or_else(|p| std::panic::resume_unwind(p)),
            );
            records
        })
    };
    ids(&mut records);
    supersession(kind, &mut records);
    for i in 0..records.len() {
        pins(kind, ctx, &root_real, &mut records, i);
    }
    // Quorum and provenance look at one record each, so they too run over both cores.
    let judge_one = |r: &mut Record| {
        reviews(kind, ctx, r);
        r.provenance = ctx.trust.provenance(&r.file, ctx.dirty);
    };
    if records.len() < 64 {
        records.iter_mut().for_each(judge_one);
    } else {
        let half = records.len() / 2;
        let (first, second) = records.split_at_mut(half);
        std::thread::scope(|scope| {
            scope.spawn(|| second.iter_mut().for_each(judge_one));
            first.iter_mut().for_each(judge_one);
        });
    }
    Ok(records)
}

/// The records of `kind` as `tree` holds them, judged with no trust policy (no provenance or
/// seal counts): what a comparison or a check against the base revision needs. A records
/// directory the tree lacks holds none.
pub fn records_at(kind: &Kind, root: &Path, tree: &Tree) -> Result<Vec<Record>> {
    let trust = Trust::default();
    let ctx = Context {
        tree,
        root,
        trust: &trust,
        need: (2, "default"),
        dirty: None,
    };
    match read(kind, &ctx, None) {
        Err(e) if e.code == "location-missing" => Ok(Vec::new()),
        other => other,
    }
}

/// One record's file parsed and judged by the kind alone.
fn parse_one(
    kind: &Kind,
    root: &Path,
    file: &Path,
    text: std::result::Result<String, String>,
) -> Record {
    let field_of =
        |m: &Map<String, Value>, f: &str| m.get(f).and_then(Value::as_str).map(str::to_owned);
    let path = shown(root, file);
    let mut r = Record {
        id: None,
        path,
        file: file.to_path_buf(),
        text: None,
        data: None,
        state: None,
        reasons: Vec::new(),
        warnings: Vec::new(),
        superseded_by: None,
        digest: None,
        assets: Vec::new(),
        quorum: None,
        provenance: Value::Null,
        attestation: None,
        cited_by: None,
    };
    match text {
        Err(why) => r
            .reasons
            .push(code("record-unparseable", format!("{} {why}", r.path))),
        Ok(text) => {
            match parse(kind, &text) {
                Err(why) => r
                    .reasons
                    .push(code("record-unparseable", format!("{} {why}", r.path))),
                Ok(data) => {
                    r.id = match &kind.id {
                        Id::Field(f) => field_of(&data, f),
                        Id::Sha256 => Some(digest::sha256_hex(text.as_bytes())),
                    };
                    if let Some(s) = &kind.states {
                        r.state = field_of(&data, &s.field);
                    }
                    // Judged as a value without copying it: moved in, and back out.
                    let whole = Value::Object(data);
                    let verdict = kind.validator.check(&whole);
                    let Value::Object(data) = whole else {
                        unreachable!("made an object just above")
                    };
                    if let Some(why) = verdict {
                        r.reasons.push(code(
                            "record-schema-invalid",
                            format!(
                                "{} does not match the kind's schema {}: {why}",
                                r.path, kind.schema_id
                            ),
                        ));
                    }
                    if let Some(s) = &kind.states
                        && let Some(st) = &r.state
                        && !s.all.contains(st)
                    {
                        r.reasons.push(code(
                            "record-schema-invalid",
                            format!(
                                "{} is in the state \"{st}\", which the kind does not list ({})",
                                r.path,
                                s.all.join(", ")
                            ),
                        ));
                    }
                    // A closed record of a sealing kind carries the seal of its text now; one
                    // with none, or another, changed after it closed (or never closed by a write).
                    if let Some(field) = &kind.seal
                        && kind.is_closed(r.state.as_deref())
                        && data.get(field).and_then(Value::as_str)
                            != Some(digest::closing_seal(&data, field, &text).as_str())
                    {
                        r.reasons.push(code(
                                if kind.session.is_some() { "session-seal-mismatch" } else { "record-seal-mismatch" },
                                format!("{} is {} and sealed, and its {field} is not the seal of its text now: it changed after it closed", r.path, r.state.as_deref().unwrap_or("")),
                            ));
                    }
                    r.data = Some(data);
                }
            }
            r.digest = Some(kind.digest(&text));
            r.text = Some(text);
        }
    }
    r
}

fn ids(records: &mut [Record]) {
    let mut seen: HashMap<String, String> = HashMap::new();
    for r in records.iter_mut() {
        let Some(id) = &r.id else { continue };
        match seen.get(id) {
            Some(first) => {
                let m = format!(
                    "{} repeats the id {id}, which {first} already has; give one of them another id",
                    r.path
                );
                r.reasons.push(code("record-id-duplicate", m));
            }
            None => {
                seen.insert(id.clone(), r.path.clone());
            }
        }
    }
}

/// The ids a record lists under the kind's supersedes field.
pub fn supersedes_ids(kind: &Kind, data: &Map<String, Value>) -> Vec<String> {
    let Some((field, key)) = &kind.supersedes else {
        return Vec::new();
    };
    let one = |v: &Value| -> Option<String> {
        match key {
            Some(k) => v.get(k).and_then(Value::as_str).map(str::to_owned),
            None => v.as_str().map(str::to_owned),
        }
    };
    match data.get(field) {
        Some(Value::Array(a)) => a.iter().filter_map(one).collect(),
        Some(v @ Value::String(_)) if key.is_none() => one(v).into_iter().collect(),
        _ => Vec::new(),
    }
}

/// Whether a link from a record in `new` to one in `old` takes effect: with `approval`, the
/// new rank is above 0 and at least the old; without, the new record is closed.
pub fn link_takes_effect(kind: &Kind, new: Option<&str>, old: Option<&str>) -> bool {
    if kind.approval.is_some() {
        let n = kind.rank(new);
        n > 0 && n >= kind.rank(old)
    } else {
        kind.is_closed(new)
    }
}

fn supersession(kind: &Kind, records: &mut [Record]) {
    if kind.supersedes.is_none() {
        return;
    }
    let index: HashMap<String, usize> = records
        .iter()
        .enumerate()
        .filter(|(_, r)| !r.reasons.iter().any(|c| c.code == "record-id-duplicate"))
        .filter_map(|(i, r)| Some((r.id.clone()?, i)))
        .collect();
    for i in 0..records.len() {
        let Some(data) = &records[i].data else {
            continue;
        };
        let targets = supersedes_ids(kind, data);
        for t in targets {
            let Some(&j) = index.get(&t) else {
                let m = format!(
                    "{} supersedes {t}, and no record has that id",
                    records[i].path
                );
                records[i]
                    .reasons
                    .push(code("record-supersedes-unknown", m));
                continue;
            };
            let (new, old) = (records[i].state.clone(), records[j].state.clone());
            if !link_takes_effect(kind, new.as_deref(), old.as_deref()) {
                let m = format!(
                    "{} supersedes {t}, which is {}, and a {} record's link has no effect until it is approved at least as strongly",
                    records[i].path,
                    old.as_deref().unwrap_or("in no state"),
                    new.as_deref().unwrap_or("stateless")
                );
                records[i]
                    .warnings
                    .push(code("record-supersedes-pending", m));
                continue;
            }
            let me = records[i].id.clone();
            match &records[j].superseded_by {
                Some(other) if Some(other) != me.as_ref() => {
                    let m = format!(
                        "{} supersedes {t}, which {other} already supersedes; each record is superseded once",
                        records[i].path
                    );
                    records[i]
                        .reasons
                        .push(code("record-supersedes-conflict", m));
                }
                _ => records[j].superseded_by = me,
            }
        }
    }
}

fn pins(kind: &Kind, ctx: &Context, root_real: &Path, records: &mut [Record], i: usize) {
    let Some(field) = &kind.pins else { return };
    let Some(data) = &records[i].data else { return };
    let entries = match data.get(field) {
        Some(Value::Array(a)) => a.clone(),
        _ => Vec::new(),
    };
    if entries.is_empty() {
        let m = format!(
            "{} has an empty {field} list, so it cites nothing and pins no file",
            records[i].path
        );
        records[i].warnings.push(code("record-no-evidence", m));
        return;
    }
    // Hashes the records this one supersedes pinned, by path.
    let mut earlier: HashSet<(String, String)> = HashSet::new();
    for t in supersedes_ids(kind, data) {
        if let Some(old) = records.iter().find(|r| r.id.as_deref() == Some(t.as_str()))
            && let Some(od) = &old.data
            && let Some(Value::Array(a)) = od.get(field)
        {
            for e in a {
                if let (Some(p), Some(h)) = (
                    e.get("path").and_then(Value::as_str),
                    e.get("sha256").and_then(Value::as_str),
                ) {
                    earlier.insert((p.to_owned(), h.to_owned()));
                }
            }
        }
    }
    let mut assets = Vec::new();
    let mut warnings = Vec::new();
    for e in &entries {
        let (Some(p), Some(h)) = (
            e.get("path").and_then(Value::as_str),
            e.get("sha256").and_then(Value::as_str),
        ) else {
            continue;
        };
        let target = ctx.root.join(p);
        // In the working tree, only what lies inside the workspace once opened is hashed.
        let bytes = if !pin_path_ok(p) {
            None
        } else if matches!(ctx.tree, Tree::Work) {
            crate::tree::read_inside(&target, root_real).ok()
        } else {
            ctx.tree.read(&target)
        };
        let (state, actual) = match bytes {
            None => ("missing", Value::Null),
            Some(b) => {
                let actual = digest::sha256_hex(&b);
                if actual != h {
                    ("drifted", json!(actual))
                } else if earlier.contains(&(p.to_owned(), h.to_owned()))
                    && unchanged_since(ctx, &target, &records[i].file)
                {
                    ("stale", json!(actual))
                } else {
                    ("pinned", json!(actual))
                }
            }
        };
        match state {
            "missing" => warnings.push(code("asset-missing", format!("{} pins {p}, which does not exist in the tree read", records[i].path))),
            "drifted" => warnings.push(code("asset-drift", format!("{} pins {p} at {h}, and the file now hashes to {}", records[i].path, actual.as_str().unwrap_or("")))),
            "stale" => warnings.push(code("asset-stale", format!("{} pins {p} at the hash a record it supersedes pinned, and the file has not changed since", records[i].path))),
            _ => {}
        }
        assets.push(json!({"path": p, "sha256": h, "state": state, "actual": actual}));
    }
    records[i].assets = assets;
    records[i].warnings.extend(warnings);
}

/// Whether `file`'s last commit in the tree read is older than the commit that added `record`
/// (a record not committed yet counts as recorded now). Outside git, hashes alone decide.
fn unchanged_since(ctx: &Context, file: &Path, record: &Path) -> bool {
    let Some(top) = crate::tree::toplevel(ctx.root) else {
        return false;
    };
    let rev = ctx.tree.commit().unwrap_or("HEAD").to_owned();
    let time = |args: &[&str], p: &Path| -> Option<i64> {
        let p = p.strip_prefix(&top).ok()?.to_str()?.to_owned();
        let mut a: Vec<&str> = args.to_vec();
        a.push(&rev);
        a.push("--");
        a.push(&p);
        let out = crate::tree::git_out(&top, &a)?;
        String::from_utf8(out)
            .ok()?
            .lines()
            .last()?
            .trim()
            .parse()
            .ok()
    };
    let file_time = time(&["log", "-1", "--format=%ct"], file);
    let added = time(&["log", "--diff-filter=A", "--format=%ct"], record);
    match (file_time, added) {
        (Some(f), Some(a)) => f < a,
        (Some(_), None) => true,
        _ => false,
    }
}

fn reviews(kind: &Kind, ctx: &Context, r: &mut Record) {
    let (Some(rv), Some(data), Some(digest)) = (&kind.reviews, &r.data, &r.digest) else {
        return;
    };
    let list: &[Value] = match data.get(&rv.field) {
        Some(Value::Array(a)) => a,
        _ => &[],
    };
    let judge = Judge {
        need: ctx.need.0,
        need_from: ctx.need.1,
        agents: &ctx.trust.agents,
        attestation: ctx.trust.active,
    };
    let decider = data.get(&rv.decider).and_then(Value::as_str);
    let id = r.id.as_deref();
    let seals: Vec<crate::seal::Attestation> =
        list.iter().map(|v| verdict_seal(ctx, id, v)).collect();
    let (q, undigested) = quorum::quorum(list, decider, digest, &judge, &seals);
    let author_seal = author_seal(kind, ctx, r);
    if ctx.trust.active && decider.is_some() && author_seal.attested != Some(true) {
        r.warnings.push(code(
            "record-unattested",
            format!(
                "{}: a signers file is active at base, and its author's seal does not count: {}",
                r.path, author_seal.message
            ),
        ));
    }
    r.attestation = Some(author_seal);
    if !undigested.is_empty() {
        let names = undigested
            .iter()
            .map(|n| format!("\"{n}\""))
            .collect::<Vec<_>>()
            .join(", ");
        r.warnings.push(code(
            "review-undigested",
            format!("{} has verdicts with no digest, by {names}; they still count, and an amendment will not stop them counting", r.path),
        ));
    }
    r.quorum = Some(q);
}

/// What a verdict's seal establishes, over its record id, digest, verdict, reviewer and day.
fn verdict_seal(ctx: &Context, id: Option<&str>, v: &Value) -> crate::seal::Attestation {
    let s = |k: &str| v.get(k).and_then(Value::as_str);
    let reviewer = s("reviewer").unwrap_or("");
    // A digest is 64 hex digits and a day ten characters: anything else is covered by no seal
    // chant makes, and is not handed to ssh-keygen.
    let hex64 = |d: &&str| d.len() == 64 && d.bytes().all(|b| b.is_ascii_hexdigit());
    let payload = match (
        id,
        s("digest").filter(hex64),
        s("on").filter(|o| o.len() <= 32),
    ) {
        (Some(id), Some(d), Some(on)) => Some(crate::seal::verdict_payload(
            id,
            d,
            s("verdict").unwrap_or(""),
            reviewer,
            on,
        )),
        _ => None,
    };
    crate::seal::check(
        v.get("seal"),
        reviewer,
        payload.as_deref(),
        crate::seal::REVIEW_NAMESPACE,
        ctx.trust,
        &format!("the verdict by {reviewer}"),
        "the record id, the verdict's digest and on",
    )
}

/// What a record's author seal (its top-level `seal`) establishes, for the author the kind's
/// decider field names, over its id, digest, author and state.
fn author_seal(kind: &Kind, ctx: &Context, r: &Record) -> crate::seal::Attestation {
    let field = kind
        .reviews
        .as_ref()
        .map_or("decided_by", |rv| rv.decider.as_str());
    let data = r.data.as_ref();
    let author = data.and_then(|d| d.get(field)).and_then(Value::as_str);
    let seal = data.and_then(|d| d.get("seal")).filter(|s| !s.is_null());
    let what = r.id.clone().unwrap_or_else(|| r.path.clone());
    if author.is_none() && seal.is_none() {
        return crate::seal::Attestation {
            attested: None,
            code: Some("seal-missing"),
            message: format!("{what} names no {field}, so it claims no author to seal"),
            key: None,
        };
    }
    let payload = match (&r.id, &r.digest, author) {
        (Some(id), Some(d), Some(a)) => {
            Some(crate::seal::record_payload(id, d, a, r.state.as_deref()))
        }
        _ => None,
    };
    crate::seal::check(
        seal,
        author.unwrap_or(""),
        payload.as_deref(),
        crate::seal::RECORD_NAMESPACE,
        ctx.trust,
        &what,
        &format!("its id and its {field}"),
    )
}

/// A session kind's records joined to its subjects' records: a verdict in a session naming a
/// record the subjects lack makes the session invalid (`session-verdict-unknown-record`), and
/// each session lists the subjects' review entries that name it (`citedBy`).
pub fn link_sessions(
    kind: &Kind,
    sessions: &mut [Record],
    subjects: &Kind,
    subject_records: &[Record],
) {
    let Some(spec) = &kind.session else { return };
    let ids: HashSet<&str> = subject_records
        .iter()
        .filter_map(|r| r.id.as_deref())
        .collect();
    let review_field = subjects
        .reviews
        .as_ref()
        .map_or("reviews", |r| r.field.as_str());
    for s in sessions.iter_mut() {
        let Some(data) = &s.data else { continue };
        let unknown: Vec<String> = data
            .get(&spec.verdicts)
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .filter_map(|v| v.get("record").and_then(Value::as_str))
            .filter(|id| !ids.contains(id))
            .map(str::to_owned)
            .collect();
        for id in unknown {
            let m = format!(
                "{} has a verdict on {id}, and no record of the kind its subjects name ({}) has that id",
                s.path, subjects.name
            );
            s.reasons.push(code("session-verdict-unknown-record", m));
        }
        let Some(sid) = s.id.clone() else { continue };
        let mut cited = Vec::new();
        for r in subject_records {
            let list = r
                .data
                .as_ref()
                .and_then(|d| d.get(review_field))
                .and_then(Value::as_array);
            for (index, v) in list.into_iter().flatten().enumerate() {
                if v.get("session").and_then(Value::as_str) == Some(sid.as_str()) {
                    cited.push(json!({
                        "id": r.id, "path": r.path, "index": index,
                        "reviewer": v.get("reviewer").filter(|x| x.is_string()),
                        "verdict": v.get("verdict").filter(|x| x.is_string()),
                    }));
                }
            }
        }
        s.cited_by = Some(cited);
    }
}

fn codes(list: &[Code]) -> Value {
    Value::Array(
        list.iter()
            .map(|c| json!({"code": c.code, "message": c.message}))
            .collect(),
    )
}

/// The `kind` block of a document.
pub fn kind_block(kind: &Kind, root: &Path, with_format: bool) -> Value {
    let mut b =
        json!({"name": kind.name, "schema": kind.schema_id, "file": shown(root, &kind.file)});
    if with_format {
        b["format"] = json!(kind.format.as_str());
    }
    b
}

/// One record as the `records` document lists it, its data moved out of it.
fn record_json_owned(kind: &Kind, mut r: Record) -> Value {
    let data = r.data.take();
    let quorum = r.quorum.take();
    let assets = std::mem::take(&mut r.assets);
    let provenance = std::mem::take(&mut r.provenance);
    let mut v = record_json(kind, &r);
    v["data"] = data.map_or(Value::Null, Value::Object);
    v["assets"] = Value::Array(assets);
    v["provenance"] = provenance;
    if kind.reviews.is_some() {
        v["quorum"] = quorum.unwrap_or(Value::Null);
    }
    v
}

/// One record as the `records` document lists it.
pub fn record_json(kind: &Kind, r: &Record) -> Value {
    let mut m = Map::new();
    m.insert("id".into(), json!(r.id));
    m.insert("path".into(), json!(r.path));
    m.insert("state".into(), json!(r.state));
    m.insert("valid".into(), json!(r.valid()));
    m.insert("reasons".into(), codes(&r.reasons));
    m.insert("supersededBy".into(), json!(r.superseded_by));
    m.insert("remediatedBy".into(), json!([]));
    m.insert(
        "data".into(),
        r.data.clone().map_or(Value::Null, Value::Object),
    );
    m.insert("provenance".into(), r.provenance.clone());
    m.insert("assets".into(), Value::Array(r.assets.clone()));
    m.insert("warnings".into(), codes(&r.warnings));
    if kind.reviews.is_some() {
        if let Some(d) = &r.digest {
            m.insert("digest".into(), json!(d));
        }
        m.insert("quorum".into(), r.quorum.clone().unwrap_or(Value::Null));
        if let Some(a) = &r.attestation {
            m.insert("attested".into(), json!(a.attested));
            m.insert("attestation".into(), a.block());
        }
    }
    if let Some(c) = &r.cited_by {
        m.insert("citedBy".into(), Value::Array(c.clone()));
    }
    Value::Object(m)
}

pub const RECORDS_SCHEMA: &str =
    "https://intentius.io/chant/schemas/workspace/records/v1/records.schema.json";

/// The `records --json` document of one kind.
pub fn document(kind: &Kind, records: Vec<Record>, ctx: &Context, current: bool) -> Value {
    let total = records.len();
    let valid = records.iter().filter(|r| r.valid()).count();
    let superseded = records.iter().filter(|r| r.superseded_by.is_some()).count();
    let hidden: Vec<bool> = records
        .iter()
        .map(|r| current && superseded_by_closed(kind, &records, r))
        .collect();
    let kept: Vec<Record> = records
        .into_iter()
        .zip(hidden)
        .filter(|(_, h)| !h)
        .map(|(r, _)| r)
        .collect();
    // Each record's JSON on its own, over both cores.
    let shown_records: Vec<Value> = if kept.len() < 64 {
        kept.into_iter()
            .map(|r| record_json_owned(kind, r))
            .collect()
    } else {
        let mut first = kept;
        let second = first.split_off(first.len() / 2);
        std::thread::scope(|scope| {
            let other = scope.spawn(|| {
                second
                    .into_iter()
                    .map(|r| record_json_owned(kind, r))
                    .collect::<Vec<_>>()
            });
            let mut mine: Vec<Value> = first
                .into_iter()
                .map(|r| record_json_owned(kind, r))
                .collect();
            mine.extend(
                other
                    .join()
                    .unwrap_or_else(|p| std::panic::resume_unwind(p)),
            );
            mine
        })
    };
    let mut doc = json!({
        "$schema": RECORDS_SCHEMA,
        "contract": 1,
        "kind": kind_block(kind, ctx.root, true),
        "at": ctx.tree.commit(),
        "workspaceRoot": ".",
        "current": current,
        "trust": ctx.trust.block(),
        "records": null,
        "summary": {"total": total, "valid": valid, "invalid": total - valid, "superseded": superseded},
    });
    // Moved in, not through `json!`, which would serialize a copy of every record.
    doc["records"] = Value::Array(shown_records);
    doc
}

/// Whether `r` is superseded by a record in a closed state (`--current` leaves it out).
fn superseded_by_closed(kind: &Kind, records: &[Record], r: &Record) -> bool {
    let Some(by) = &r.superseded_by else {
        return false;
    };
    records
        .iter()
        .find(|o| o.id.as_ref() == Some(by))
        .is_some_and(|o| kind.is_closed(o.state.as_deref()))
}
