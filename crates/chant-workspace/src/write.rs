//! The record writes: `records new`, `amend`, `review` and `close`. Each reads the records,
//! builds the one file it would write, reads them again with that file in place, and writes
//! only when the record comes back valid and no other record gained a reason code. A write
//! holds the records directory's lock, writes atomically (a new file never replaces one that
//! appeared meanwhile), and never runs git: the caller commits.

use std::collections::{HashMap, HashSet};
use std::path::{Path, PathBuf};

use serde_json::{Map, Value, json};

use crate::digest;
use crate::error::{Result, WsError};
use crate::kind::{Format, Id, Kind};
use crate::read::{self, Context, Overlay, Record};
use crate::records::{Env, load_kind, named_kind};
use crate::tree::Tree;
use crate::trust::Trust;

pub const NEW_SCHEMA: &str =
    "https://intentius.io/chant/schemas/workspace/records-new/v1/records-new.schema.json";
pub const AMEND_SCHEMA: &str =
    "https://intentius.io/chant/schemas/workspace/records-amend/v1/records-amend.schema.json";
pub const REVIEW_SCHEMA: &str =
    "https://intentius.io/chant/schemas/workspace/records-review/v1/records-review.schema.json";
pub const CLOSE_SCHEMA: &str =
    "https://intentius.io/chant/schemas/workspace/records-close/v1/records-close.schema.json";

/// Where a write came from: stamped into the record's source block over MCP.
#[derive(Debug, Clone, Default)]
pub struct Source {
    /// `{via: "mcp", client: {...}}`, or nothing at the shell.
    pub block: Option<Value>,
    /// Writes over MCP open a record only in the kind's first state.
    pub initial_only: bool,
    /// The key to seal with (`--sign`, `sign: true`): the record's author seal on `new` and
    /// `amend`, the verdict's seal on `review`.
    pub sign: Option<crate::seal::Key>,
}

/// What the kind is, with everything a write reads.
struct Target {
    kind: Kind,
    root: PathBuf,
    trust: Trust,
    need: (u64, &'static str),
}

/// The document a refusal prints.
pub fn refusal(schema: &str, e: &WsError) -> Value {
    json!({"$schema": schema, "contract": 1, "error": e.block(false)})
}

fn usage(msg: impl Into<String>) -> WsError {
    WsError::new("write-usage-invalid", msg)
}

/// The kind a write goes through: named, else the declaration's one kind.
fn target(env: &Env, kind: Option<&str>) -> Result<Target> {
    let decl = env.declaration(&Tree::Work)?;
    let file = match kind {
        Some(k) => named_kind(env, k, decl.as_ref()).0,
        None => {
            let Some(d) = decl.as_ref() else {
                return Err(usage(
                    "--kind <kind file> is required: no workspace declaration above this directory names a record kind",
                ));
            };
            let kinds = d.all_kinds();
            match kinds.as_slice() {
                [one] => d.root.join(&one.path),
                [] => {
                    return Err(usage(
                        "--kind <kind file> is required: the workspace declaration names no record kind",
                    ));
                }
                many => {
                    return Err(usage(format!(
                        "the declaration names {} record kinds ({}); name the kind to write with --kind",
                        many.len(),
                        many.iter()
                            .map(|k| k.name.clone().unwrap_or_else(|| k.path.clone()))
                            .collect::<Vec<_>>()
                            .join(", ")
                    )));
                }
            }
        }
    };
    target_file(env, decl.as_ref(), &file)
}

/// The kind at `file` as a write's target.
fn target_file(
    env: &Env,
    decl: Option<&crate::declaration::Declaration>,
    file: &Path,
) -> Result<Target> {
    let (kind, root) = load_kind(env, file)?;
    if kind.format != Format::Markdown || kind.id == Id::Sha256 {
        return Err(usage(format!(
            "{} is a {} kind{}, and these commands write markdown front matter with an idField only; its records are written by the tool that owns the kind",
            read::shown(&root, &kind.file),
            kind.format.as_str(),
            if kind.id == Id::Sha256 {
                " with content-addressed ids"
            } else {
                ""
            }
        )));
    }
    // The records directory must stay inside the workspace once links are followed.
    if let (Ok(r), Ok(d)) = (
        std::fs::canonicalize(&root),
        std::fs::canonicalize(&kind.dir),
    ) && !d.starts_with(&r)
    {
        return Err(usage(format!(
            "{}: the records directory leads outside the workspace ({}), so nothing is written there",
            read::shown(&root, &kind.file),
            d.display()
        )));
    }
    let trust = Trust::read(&root, None)?;
    let need = crate::records::need_at_base(&trust, env.version, decl);
    Ok(Target {
        kind,
        root,
        trust,
        need,
    })
}

impl Target {
    fn read(&self, overlay: Option<&Overlay>) -> Result<Vec<Record>> {
        let ctx = Context {
            tree: &Tree::Work,
            root: &self.root,
            trust: &self.trust,
            need: self.need,
            dirty: None,
        };
        read::read(&self.kind, &ctx, overlay)
    }

    /// `text` with the record's author seal (`seal: {signer, key, signature}`) made with `key`
    /// over its id, digest, author (the kind's decider field) and state: the seal, and the text.
    fn author_sealed(
        &self,
        id: &str,
        text: &str,
        key: &crate::seal::Key,
    ) -> Result<(String, Value)> {
        let Some(rv) = &self.kind.reviews else {
            return Err(usage(format!(
                "--sign seals a record's author, named by the kind's reviews.decider field, and the {} kind declares no reviews",
                self.kind.name
            )));
        };
        let data = read::parse(&self.kind, text).map_err(|why| {
            WsError::new(
                "record-unparseable",
                format!("{id} {why}, so it cannot be sealed"),
            )
        })?;
        let Some(author) = data.get(&rv.decider).and_then(Value::as_str) else {
            return Err(WsError::new(
                "record-sign-failed",
                format!(
                    "{id} names no {f}, so there is no author to seal: set {f}, then seal it with records amend {id} --sign",
                    f = rv.decider
                ),
            ));
        };
        let state = self
            .kind
            .states
            .as_ref()
            .and_then(|s| data.get(&s.field))
            .and_then(Value::as_str);
        let digest = self.kind.digest(text);
        let payload = crate::seal::record_payload(id, &digest, author, state);
        let seal = crate::seal::seal(
            key,
            author,
            crate::seal::RECORD_NAMESPACE,
            &payload,
            "record-sign-failed",
        )?;
        let out = rewrite(text, &[("seal".to_owned(), seal.clone())]);
        if self.kind.digest(&out) != digest {
            return Err(usage(format!(
                "{id}: the seal could not be added without moving the digest it signs"
            )));
        }
        Ok((out, seal))
    }

    /// Fields given by hand may not set what chant writes itself: the author seal (only
    /// `--sign`) and a session's opening and closing revisions (`new` and `close`).
    fn no_hand_seal(&self, fields: &Map<String, Value>, flag: &str) -> Result<()> {
        if self.kind.reviews.is_some() && fields.contains_key("seal") {
            return Err(WsError::new(
                "write-input-invalid",
                format!(
                    "the fields given with {flag} set seal, and only --sign writes a record's seal"
                ),
            ));
        }
        if let Some(s) = &self.kind.session
            && let Some(f) = [&s.opened_rev, &s.closed_rev]
                .into_iter()
                .flatten()
                .find(|f| fields.contains_key(f.as_str()))
        {
            return Err(WsError::new(
                "write-input-invalid",
                format!(
                    "the fields given with {flag} set {f}, and chant writes a session's revisions itself (records new opens it at HEAD, records close records where it closed)"
                ),
            ));
        }
        Ok(())
    }

    /// `text` with its closing seal written last in the front matter when `state` is closed
    /// and the kind seals (`seal`); else `text` as it is.
    fn sealed(&self, text: &str, state: Option<&str>) -> String {
        let Some(field) = &self.kind.seal else {
            return text.to_owned();
        };
        if !self.kind.is_closed(state) {
            return text.to_owned();
        }
        let Ok(core) = read::parse(&self.kind, text) else {
            return text.to_owned();
        };
        let seal = digest::closing_seal(&core, field, text);
        let mut out = digest::lf(text);
        if let Some(r) = digest::block_range(&out, field) {
            out.replace_range(r, "");
        }
        if let Some((fm, _)) = digest::front_matter(&out) {
            out.insert_str(fm.end, &field_block(field, &json!(seal)));
        }
        out
    }

    /// Moving into the kind's ratified state needs the quorum met on the text as written.
    fn ratify_check(
        &self,
        id: &str,
        from: Option<&str>,
        to: Option<&str>,
        mine: &Record,
    ) -> Result<()> {
        let Some(ratified) = self
            .kind
            .reviews
            .as_ref()
            .and_then(|r| r.ratified.as_deref())
        else {
            return Ok(());
        };
        // Every state ranked as high as the ratified one needs the quorum too: a record set
        // straight to `superseded` would otherwise close, and supersede a ratified one, with
        // no verdict at all.
        let bar = self.kind.rank(Some(ratified));
        let entering =
            |s: Option<&str>| s == Some(ratified) || (bar > 0 && self.kind.rank(s) >= bar);
        if !entering(to) || entering(from) {
            return Ok(());
        }
        let Some(q) = &mine.quorum else { return Ok(()) };
        if q["met"] == true {
            return Ok(());
        }
        let not: Vec<String> = q["notCounted"]
            .as_array()
            .into_iter()
            .flatten()
            .map(|n| {
                format!(
                    "{}, {}",
                    n["reviewer"].as_str().unwrap_or(""),
                    n["reason"]["code"].as_str().unwrap_or("")
                )
            })
            .collect();
        let has = if not.is_empty() {
            format!("{}", q["agreed"])
        } else {
            format!("{} (not counted: {})", q["agreed"], not.join("; "))
        };
        Err(WsError::new(
            "ratify-quorum-not-met",
            format!(
                "{id} can't be ratified yet: its quorum needs {} agreeing verdicts that count, and it has {has}. Add verdicts with chant workspace records review {id}",
                q["need"]
            ),
        ))
    }

    fn kind_block(&self) -> Value {
        read::kind_block(&self.kind, &self.root, false)
    }

    fn find<'r>(&self, records: &'r [Record], id: &str) -> Result<&'r Record> {
        records.iter().find(|r| r.id.as_deref() == Some(id)).ok_or_else(|| {
            WsError::new(
                "record-not-found",
                format!("no {} record has the id {id}; `chant workspace records --kind {}` lists them", self.kind.name, read::shown(&self.root, &self.kind.file)),
            )
        })
    }

    /// Reads again with `candidate` in place: the refusal, if the record comes back invalid or
    /// another record gains a reason code; else the record as read, for its warnings.
    fn judge(&self, before: &[Record], candidate: &Overlay) -> Result<Record> {
        let after = self.read(Some(candidate))?;
        let had: HashMap<&str, HashSet<&str>> = before
            .iter()
            .map(|r| (r.path.as_str(), r.reasons.iter().map(|c| c.code).collect()))
            .collect();
        let mine = after.iter().find(|r| r.file == candidate.file).cloned();
        let Some(mine) = mine else {
            return Err(usage(format!(
                "the file it would write, {}, does not match the kind's location.match, so no read would find it",
                read::shown(&self.root, &candidate.file)
            )));
        };
        if let Some(c) = mine.reasons.first() {
            return Err(WsError::new(c.code, c.message.clone()));
        }
        for r in &after {
            if r.file == candidate.file {
                continue;
            }
            let old = had.get(r.path.as_str());
            if let Some(c) = r
                .reasons
                .iter()
                .find(|c| old.is_none_or(|o| !o.contains(c.code)))
            {
                return Err(WsError::new(
                    c.code,
                    format!(
                        "the write would give another record a reason code: {}",
                        c.message
                    ),
                ));
            }
        }
        Ok(mine)
    }
}

/// The written record's warnings, as its result lists them: whether its author seal counts
/// is the read's to say (`records`, `record-unattested`), not the write's, which does not
/// judge the key it signed with.
fn warnings(r: &Record) -> Value {
    Value::Array(
        r.warnings
            .iter()
            .filter(|c| c.code != "record-unattested")
            .map(|c| json!({"code": c.code, "message": c.message}))
            .collect(),
    )
}

/// A front-matter value: every string double-quoted (a JSON string is a YAML double-quoted
/// scalar), maps and lists in block style.
fn emit_value(v: &Value, indent: usize, out: &mut String) {
    let pad = " ".repeat(indent);
    match v {
        Value::Object(m) if !m.is_empty() => {
            for (k, val) in m {
                out.push('\n');
                out.push_str(&pad);
                emit_key(k, out);
                emit_value(val, indent + 2, out);
            }
        }
        Value::Array(a) if !a.is_empty() => {
            for item in a {
                out.push('\n');
                out.push_str(&pad);
                out.push_str("- ");
                match item {
                    Value::Object(m) if !m.is_empty() => {
                        let mut first = true;
                        for (k, val) in m {
                            if !first {
                                out.push('\n');
                                out.push_str(&pad);
                                out.push_str("  ");
                            }
                            first = false;
                            emit_key(k, out);
                            emit_value(val, indent + 4, out);
                        }
                    }
                    Value::Array(inner) if !inner.is_empty() => {
                        out.push_str(&serde_json::to_string(item).unwrap_or_default());
                    }
                    other => out.push_str(&scalar(other)),
                }
            }
        }
        other => {
            out.push(' ');
            out.push_str(&scalar(other));
        }
    }
}

fn emit_key(k: &str, out: &mut String) {
    let plain = !k.is_empty()
        && k.chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-')
        && !k.starts_with('-');
    if plain {
        out.push_str(k);
    } else {
        out.push_str(&serde_json::to_string(k).unwrap_or_default());
    }
    out.push(':');
}

fn scalar(v: &Value) -> String {
    match v {
        Value::Object(_) => "{}".into(),
        Value::Array(_) => "[]".into(),
        other => serde_json::to_string(other).unwrap_or_default(),
    }
}

/// The block of one top-level field, ending in a newline.
pub fn field_block(key: &str, value: &Value) -> String {
    let mut out = String::new();
    emit_key(key, &mut out);
    emit_value(value, 2, &mut out);
    out.push('\n');
    out
}

/// The schema's property order, then any other field in the order given.
fn ordered(kind: &Kind, fields: &Map<String, Value>) -> Vec<(String, Value)> {
    let schema: Value = std::fs::read_to_string(&kind.schema_path)
        .ok()
        .and_then(|t| serde_json::from_str(&t).ok())
        .unwrap_or(Value::Null);
    let mut out = Vec::new();
    if let Some(props) = schema.get("properties").and_then(Value::as_object) {
        for k in props.keys() {
            if let Some(v) = fields.get(k) {
                out.push((k.clone(), v.clone()));
            }
        }
    }
    for (k, v) in fields {
        if !out.iter().any(|(o, _)| o == k) {
            out.push((k.clone(), v.clone()));
        }
    }
    out
}

/// The slug of a title: lower-case letters and digits, runs of anything else one `-`.
pub fn slug(title: &str) -> String {
    let mut s = String::new();
    for c in title.to_lowercase().chars() {
        if c.is_ascii_alphanumeric() {
            s.push(c);
        } else if !s.ends_with('-') && !s.is_empty() {
            s.push('-');
        }
    }
    let s: String = s.trim_end_matches('-').chars().take(60).collect();
    let s = s.trim_end_matches('-').to_owned();
    if s.is_empty() { "record".into() } else { s }
}

/// The next id: the one prefix every record file shares (or `prefix`), a dash, one more than
/// the highest number, padded to 3 digits or the width in use.
fn next_id(kind: &Kind, prefix: Option<&str>) -> Result<String> {
    let re =
        regex::Regex::new(r"^([A-Za-z][A-Za-z0-9]*)-([0-9]+)").map_err(|e| usage(e.to_string()))?;
    let names: Vec<String> = Tree::Work
        .list(&kind.dir)
        .unwrap_or_default()
        .into_iter()
        .filter(|e| e.file && kind.matcher.is_match(&e.name))
        .map(|e| e.name)
        .collect();
    let mut seen: Vec<(String, u64, usize)> = Vec::new();
    for n in &names {
        if let Some(c) = re.captures(n) {
            let digits = &c[2];
            seen.push((c[1].to_owned(), digits.parse().unwrap_or(0), digits.len()));
        }
    }
    let prefixes: HashSet<&str> = seen.iter().map(|s| s.0.as_str()).collect();
    let prefix = match (prefix, prefixes.len()) {
        (Some(p), _) => p.to_owned(),
        (None, 1) => prefixes.into_iter().next().unwrap_or_default().to_owned(),
        (None, 0) => {
            return Err(usage(format!(
                "{} holds no records yet, so no prefix to number from; name one with --prefix (for example --prefix {})",
                kind.dir.display(),
                kind.name.chars().take(3).collect::<String>()
            )));
        }
        (None, _) => {
            let mut all: Vec<&str> = prefixes.into_iter().collect();
            all.sort();
            return Err(usage(format!(
                "the records use more than one prefix ({}); name one with --prefix",
                all.join(", ")
            )));
        }
    };
    let of: Vec<&(String, u64, usize)> = seen.iter().filter(|s| s.0 == prefix).collect();
    let n = of.iter().map(|s| s.1).max().unwrap_or(0) + 1;
    let width = of.iter().map(|s| s.2).max().unwrap_or(3).max(3);
    Ok(format!("{prefix}-{n:0width$}"))
}

/// Takes the records directory's lock for the rest of the write: two writers never interleave
/// read-judge-write (a lock on the directory itself, so no file is added to it).
fn lock(dir: &Path) -> Result<std::fs::File> {
    let f = std::fs::File::open(dir)
        .map_err(|e| usage(format!("cannot open {} to lock it: {e}", dir.display())))?;
    f.lock()
        .map_err(|e| usage(format!("cannot lock {}: {e}", dir.display())))?;
    Ok(f)
}

/// Replaces `path` when it still holds `expected`.
fn replace(path: &Path, expected: &str, text: &str) -> Result<()> {
    let now = std::fs::read_to_string(path).unwrap_or_default();
    if now != expected {
        return Err(usage(format!(
            "{} changed while this write read it; run the command again",
            path.display()
        )));
    }
    fswrite::write_atomic(path, text.as_bytes())
        .map_err(|e| usage(format!("cannot write {}: {e}", path.display())))
}

/// Lays the MCP source block over the `source` the fields give (its keys win).
fn stamp(fields: &mut Map<String, Value>, block: &Value) {
    let mut s = fields
        .get("source")
        .and_then(Value::as_object)
        .cloned()
        .unwrap_or_default();
    if let Value::Object(b) = block {
        for (k, v) in b {
            s.insert(k.clone(), v.clone());
        }
    }
    fields.insert("source".into(), Value::Object(s));
}

/// Checks that `by` names someone.
fn principal(by: &str, flag: &str) -> Result<String> {
    if crate::principal::principal(by).is_empty() {
        return Err(usage(format!(
            "{flag} must name the person or agent, and it is empty"
        )));
    }
    Ok(by.to_owned())
}

/// `records new`: a new record from `fields`.
pub fn new(
    env: &Env,
    kind: Option<&str>,
    fields: &Value,
    prefix: Option<&str>,
    by: Option<&str>,
    source: &Source,
    dry_run: bool,
) -> Result<Value> {
    let t = target(env, kind)?;
    let Value::Object(fields) = fields else {
        return Err(usage("the record's fields must be a JSON object"));
    };
    let mut fields = fields.clone();
    t.no_hand_seal(&fields, "--from")?;
    let id_field = match &t.kind.id {
        Id::Field(f) => f.clone(),
        Id::Sha256 => unreachable!("refused by target"),
    };
    let _lock = lock(&t.kind.dir)?;
    let before = t.read(None)?;
    if let Some(states) = &t.kind.states {
        let initial = states.all.first().cloned().unwrap_or_default();
        match fields.get(&states.field).and_then(Value::as_str) {
            None => {
                fields.insert(states.field.clone(), json!(initial));
            }
            Some(s) if s != initial && source.initial_only => {
                return Err(WsError::new(
                    "record-state-not-initial",
                    format!(
                        "a record proposed over MCP opens in the kind's first state, {initial:?}, and this one sets {s:?}; leave the state out, and people move it on after review"
                    ),
                ));
            }
            Some(_) => {}
        }
    }
    let state = t
        .kind
        .states
        .as_ref()
        .and_then(|s| fields.get(&s.field))
        .and_then(Value::as_str)
        .map(str::to_owned);
    if let Some(by) = by {
        let by = principal(by, "by")?;
        let initial = state.as_deref() == t.kind.initial_state();
        match (&t.kind.proposed_by, &t.kind.reviews) {
            (Some(p), _) if initial => {
                fields.insert(p.clone(), json!(by));
            }
            (_, Some(r)) => {
                fields.insert(r.decider.clone(), json!(by));
            }
            (Some(p), None) => {
                fields.insert(p.clone(), json!(by));
            }
            (None, None) => {}
        }
    }
    if let Some(block) = &source.block {
        stamp(&mut fields, block);
    }
    // A session opens at the commit HEAD names (null before the first commit).
    if let Some(f) = t.kind.session.as_ref().and_then(|s| s.opened_rev.as_ref()) {
        let head = crate::tree::toplevel(&t.root)
            .as_deref()
            .and_then(crate::tree::head_commit);
        fields.insert(f.clone(), json!(head));
    }
    let id = match fields.get(&id_field) {
        Some(Value::String(id)) => {
            if before.iter().any(|r| r.id.as_deref() == Some(id.as_str()))
                || Tree::Work
                    .list(&t.kind.dir)
                    .unwrap_or_default()
                    .iter()
                    .any(|e| e.name.starts_with(&format!("{id}-")) || e.name == format!("{id}.md"))
            {
                return Err(WsError::new(
                    "record-id-taken",
                    format!(
                        "the id {id} is in use already; leave the id out and one is allocated, or give another"
                    ),
                ));
            }
            id.clone()
        }
        Some(other) => return Err(usage(format!("{id_field} must be a string, got {other}"))),
        None => {
            let id = next_id(&t.kind, prefix)?;
            fields.insert(id_field.clone(), json!(id));
            id
        }
    };
    if id.contains(['/', '\\', '\0']) || id.starts_with('.') {
        return Err(usage(format!(
            "the id {id:?} cannot name a file; ids are letters, digits and dashes"
        )));
    }
    let title = fields
        .get("title")
        .and_then(Value::as_str)
        .unwrap_or("")
        .to_owned();
    let file = t.kind.dir.join(format!("{id}-{}.md", slug(&title)));
    let mut text = String::from("---\n");
    for (k, v) in ordered(&t.kind, &fields) {
        text.push_str(&field_block(&k, &v));
    }
    text.push_str("---\n\n");
    text.push_str(&format!(
        "# {}\n",
        if title.is_empty() {
            id.as_str()
        } else {
            title.as_str()
        }
    ));
    let (text, author_seal) = match &source.sign {
        Some(key) => {
            let (text, seal) = t.author_sealed(&id, &text, key)?;
            (text, Some(seal))
        }
        None => (text, None),
    };
    let text = t.sealed(&text, state.as_deref());
    let candidate = Overlay {
        file: file.clone(),
        text: text.clone(),
    };
    let mine = t.judge(&before, &candidate)?;
    t.ratify_check(&id, None, state.as_deref(), &mine)?;
    if !dry_run {
        fswrite::write_new(&file, text.as_bytes()).map_err(|e| {
            if e.kind() == std::io::ErrorKind::AlreadyExists {
                WsError::new(
                    "record-id-taken",
                    format!(
                        "{} appeared while this write ran; run it again for the next id",
                        read::shown(&t.root, &file)
                    ),
                )
            } else {
                usage(format!("cannot write {}: {e}", file.display()))
            }
        })?;
    }
    let mut doc = json!({
        "$schema": NEW_SCHEMA,
        "contract": 1,
        "kind": t.kind_block(),
        "path": read::shown(&t.root, &file),
        "id": id,
        "state": state,
        "dryRun": dry_run,
        "warnings": warnings(&mine),
    });
    if let Some(seal) = author_seal {
        doc["seal"] = seal;
    }
    if dry_run {
        doc["text"] = json!(text);
    }
    Ok(doc)
}

/// `text` with the front-matter blocks of `changes` replaced (a `null` value removes the
/// field), new fields added before the closing `---`, every other byte kept.
pub fn rewrite(text: &str, changes: &[(String, Value)]) -> String {
    let mut text = digest::lf(text);
    for (key, value) in changes {
        let block = if value.is_null() {
            String::new()
        } else {
            field_block(key, value)
        };
        match digest::block_range(&text, key) {
            Some(r) => text.replace_range(r, &block),
            None => {
                if let Some((fm, _)) = digest::front_matter(&text) {
                    text.insert_str(fm.end, &block);
                }
            }
        }
    }
    text
}

/// `records amend`: the record with the top-level fields of `set` replacing its own.
pub fn amend(
    env: &Env,
    id: &str,
    kind: Option<&str>,
    set: &Value,
    by: Option<&str>,
    source: &Source,
    dry_run: bool,
) -> Result<Value> {
    let t = target(env, kind)?;
    let Value::Object(set) = set else {
        return Err(usage("the fields to set must be a JSON object"));
    };
    let mut set = set.clone();
    t.no_hand_seal(&set, "--set")?;
    if let Some(by) = by {
        let by = principal(by, "by")?;
        match &t.kind.reviews {
            Some(r) => {
                set.insert(r.decider.clone(), json!(by));
            }
            None => {
                return Err(usage(format!(
                    "by names the decider, and the kind {} declares no decider (reviews.decider)",
                    t.kind.name
                )));
            }
        }
    }
    if let (Some(block), true) = (&source.block, set.contains_key("source")) {
        stamp(&mut set, block);
    }
    let _lock = lock(&t.kind.dir)?;
    let before = t.read(None)?;
    let r = t.find(&before, id)?;
    let (Some(data), Some(text)) = (&r.data, &r.text) else {
        return Err(WsError::new(
            "record-unparseable",
            format!(
                "{} cannot be read, so it cannot be amended; fix it by hand first",
                r.path
            ),
        ));
    };
    if t.kind.is_closed(r.state.as_deref()) {
        return Err(WsError::new(
            "record-closed",
            format!(
                "{} is {}, a closed state, and a closed record never changes; write a new record whose supersedes names {id}",
                r.path,
                r.state.as_deref().unwrap_or("")
            ),
        ));
    }
    let id_field = match &t.kind.id {
        Id::Field(f) => f.clone(),
        Id::Sha256 => String::new(),
    };
    let changed: Vec<(String, Value)> = set
        .iter()
        .filter(|(k, v)| data.get(*k).unwrap_or(&Value::Null) != *v)
        .map(|(k, v)| (k.clone(), v.clone()))
        .collect();
    if source.initial_only {
        // Over MCP every call is the model's: it proposes and reviews, and a person moves the
        // state and edits verdicts, at a shell.
        let state_field = t.kind.states.as_ref().map(|s| s.field.as_str());
        let reviews_field = t.kind.reviews.as_ref().map(|r| r.field.as_str());
        if let Some((k, _)) = changed
            .iter()
            .find(|(k, _)| Some(k.as_str()) == state_field || Some(k.as_str()) == reviews_field)
        {
            return Err(usage(format!(
                "over MCP a record's {k} never changes: a person moves a record's state or edits its verdicts at a shell (chant workspace records amend {id} --set ...); verdicts are added with records-review"
            )));
        }
    }
    if let Some(rv) = &t.kind.reviews
        && let Some((_, new)) = changed.iter().find(|(k, _)| *k == rv.field)
    {
        // Verdicts are added by `review` only; an amendment may mark a dissent addressed or
        // withdrawn, and change nothing else a reviewer wrote.
        let old = data
            .get(&rv.field)
            .and_then(Value::as_array)
            .cloned()
            .unwrap_or_default();
        let new = new.as_array().cloned().unwrap_or_default();
        let strip = |v: &Value| {
            let mut v = v.clone();
            if let Some(m) = v.as_object_mut() {
                m.remove("addressed_by");
                m.remove("withdrawn_on");
            }
            v
        };
        if old.len() != new.len() || old.iter().zip(&new).any(|(a, b)| strip(a) != strip(b)) {
            return Err(WsError::new(
                "write-input-invalid",
                format!(
                    "the fields given with --set change the verdicts in {}: an amendment may only set addressed_by or withdrawn_on on a verdict; add one with chant workspace records review {id}",
                    rv.field
                ),
            ));
        }
    }
    if changed.iter().any(|(k, _)| *k == id_field) {
        return Err(WsError::new(
            "amend-id-immutable",
            format!(
                "{}: the id never changes; write the change as a new record whose supersedes names {id}",
                r.path
            ),
        ));
    }
    let rank = t.kind.rank(r.state.as_deref());
    if rank > 0 {
        let state_field = t.kind.states.as_ref().map(|s| s.field.as_str());
        let pins = t.kind.pins.as_deref();
        let reviews = t.kind.reviews.as_ref().map(|r| r.field.as_str());
        for (k, v) in &changed {
            let ok = if Some(k.as_str()) == state_field {
                t.kind.rank(v.as_str()) >= rank
            } else {
                Some(k.as_str()) == pins || Some(k.as_str()) == reviews
            };
            if !ok {
                return Err(WsError::new(
                    "amend-supersede-instead",
                    format!(
                        "{} is {}, an approved state, and then only its state (upward), its {} and its reviews may change, not {k}; write the change as a new record whose supersedes names {id}, which replaces it once approved at least as strongly",
                        r.path,
                        r.state.as_deref().unwrap_or(""),
                        pins.unwrap_or("pins")
                    ),
                ));
            }
        }
    }
    let names: Vec<&str> = changed.iter().map(|(k, _)| k.as_str()).collect();
    let mut doc = json!({
        "$schema": AMEND_SCHEMA,
        "contract": 1,
        "kind": t.kind_block(),
        "path": r.path,
        "id": id,
        "changed": names,
        "dryRun": dry_run,
        "warnings": [],
    });
    // With nothing to change, --sign seals the record as it is.
    if changed.is_empty() && source.sign.is_none() {
        doc["warnings"] = warnings(r);
        return Ok(doc);
    }
    let new_state = t
        .kind
        .states
        .as_ref()
        .and_then(|s| set.get(&s.field).or_else(|| data.get(&s.field)))
        .and_then(Value::as_str)
        .map(str::to_owned);
    let mut new_text = rewrite(text, &changed);
    // The author seal: made again over the new text with --sign; without it, a seal the
    // amendment's digest no longer matches is removed, and the result says so.
    let mut seal_changed = false;
    match &source.sign {
        Some(key) => {
            let (sealed, seal) = t.author_sealed(id, &new_text, key)?;
            new_text = sealed;
            doc["seal"] = seal;
            seal_changed = true;
        }
        None if data.get("seal").is_some_and(|s| !s.is_null())
            && t.kind.reviews.is_some()
            && t.kind.digest(&new_text) != t.kind.digest(text) =>
        {
            new_text = rewrite(&new_text, &[("seal".to_owned(), Value::Null)]);
            let by = data
                .get("seal")
                .and_then(|s| s.get("signer"))
                .and_then(Value::as_str)
                .map(|s| format!(" by {s}"))
                .unwrap_or_default();
            doc["sealDropped"] = json!(format!(
                "{id} was sealed{by}, and the amendment moves its digest, so the seal was removed: seal it again with records amend {id} --sign"
            ));
            seal_changed = true;
        }
        None => {}
    }
    let new_text = t.sealed(&new_text, new_state.as_deref());
    if let Some(c) = doc["changed"].as_array_mut() {
        if let Some(seal) = &t.kind.seal
            && t.kind.is_closed(new_state.as_deref())
        {
            c.push(json!(seal));
        }
        if seal_changed && !c.iter().any(|k| k == "seal") {
            c.push(json!("seal"));
        }
    }
    let candidate = Overlay {
        file: r.file.clone(),
        text: new_text.clone(),
    };
    let mine = t.judge(&before, &candidate)?;
    t.ratify_check(id, r.state.as_deref(), new_state.as_deref(), &mine)?;
    doc["warnings"] = warnings(&mine);
    doc["digest"] = json!(mine.digest);
    if dry_run {
        doc["text"] = json!(new_text);
    } else {
        replace(&r.file, text, &new_text)?;
    }
    Ok(doc)
}

/// Today's date in UTC, `YYYY-MM-DD`.
pub fn today() -> String {
    let mut stamp = humantime::format_rfc3339_seconds(std::time::SystemTime::now()).to_string();
    stamp.truncate(10);
    stamp
}

/// A review as asked for.
pub struct Review<'a> {
    pub verdict: &'a str,
    pub by: &'a str,
    pub note: Option<&'a str>,
    pub session: Option<&'a str>,
    /// The key to seal the verdict with (`--sign`).
    pub sign: Option<crate::seal::Key>,
}

/// The open session `sid` of a session kind the declaration names whose subjects are the kind
/// at `subjects`: its kind (as a write target) and record; `session-unknown` or
/// `session-not-open` otherwise.
fn open_session(env: &Env, subjects: &Path, sid: &str) -> Result<(Target, Record)> {
    let unknown = || {
        WsError::new(
            "session-unknown",
            format!(
                "--session {sid} names no session of a session kind whose subjects are the record's kind"
            ),
        )
    };
    let decl = env.declaration(&Tree::Work)?.ok_or_else(unknown)?;
    let same = |a: &Path, b: &Path| match (std::fs::canonicalize(a), std::fs::canonicalize(b)) {
        (Ok(a), Ok(b)) => a == b,
        _ => a == b,
    };
    for (file, kind, _) in crate::records::session_kinds(env, Some(&decl), None) {
        if !kind
            .session
            .as_ref()
            .is_some_and(|s| same(&s.subjects, subjects))
        {
            continue;
        }
        let t = target_file(env, Some(&decl), &file)?;
        let found = t
            .read(None)?
            .into_iter()
            .find(|r| r.id.as_deref() == Some(sid) && r.valid());
        if let Some(r) = found {
            let closed_at_base =
                crate::records::closed_at_base(&t.kind, &t.root, &t.trust).contains_key(sid);
            if t.kind.is_closed(r.state.as_deref()) || closed_at_base {
                return Err(WsError::new(
                    "session-not-open",
                    if closed_at_base {
                        format!(
                            "--session {sid} names a session closed at base, which takes no more verdicts however its file reads now"
                        )
                    } else {
                        format!(
                            "--session {sid} names a session in a closed state ({}), which takes no more verdicts",
                            r.state.as_deref().unwrap_or("")
                        )
                    },
                ));
            }
            return Ok((t, r));
        }
    }
    Err(unknown())
}

/// `records review`: one verdict appended to the record's reviews.
pub fn review(
    env: &Env,
    id: &str,
    kind: Option<&str>,
    rv: &Review,
    dry_run: bool,
) -> Result<Value> {
    let t = target(env, kind)?;
    let Some(reviews) = &t.kind.reviews else {
        return Err(WsError::new(
            "review-unsupported",
            format!(
                "the kind {} declares no reviews, so its records take no verdict",
                t.kind.name
            ),
        ));
    };
    if !matches!(rv.verdict, "agree" | "dissent" | "abstain") {
        return Err(usage(format!(
            "--verdict must be agree, dissent or abstain, got {:?}",
            rv.verdict
        )));
    }
    let by = principal(rv.by, "--by")?;
    if rv.verdict == "dissent" && rv.note.is_none_or(|n| n.trim().is_empty()) {
        return Err(WsError::new(
            "review-note-required",
            "a dissent needs a note saying what would change the reviewer's mind; give --note",
        ));
    }
    let _lock = lock(&t.kind.dir)?;
    let before = t.read(None)?;
    let r = t.find(&before, id)?;
    let (Some(data), Some(text), Some(digest)) = (&r.data, &r.text, &r.digest) else {
        return Err(WsError::new(
            "record-unparseable",
            format!(
                "{} cannot be read, so it takes no review; fix it by hand first",
                r.path
            ),
        ));
    };
    if t.kind.is_closed(r.state.as_deref()) {
        return Err(WsError::new(
            "record-closed",
            format!(
                "{} is {}, a closed state, and a closed record takes no review",
                r.path,
                r.state.as_deref().unwrap_or("")
            ),
        ));
    }
    let mut entry = Map::new();
    entry.insert("reviewer".into(), json!(by));
    entry.insert("verdict".into(), json!(rv.verdict));
    if let Some(n) = rv.note {
        entry.insert("note".into(), json!(n));
    }
    entry.insert("on".into(), json!(today()));
    entry.insert("digest".into(), json!(digest));
    if let Some(s) = rv.session {
        entry.insert("session".into(), json!(s));
    }
    if let Some(key) = &rv.sign {
        let on = entry["on"].as_str().unwrap_or_default().to_owned();
        let payload = crate::seal::verdict_payload(id, digest, rv.verdict, &by, &on);
        let seal = crate::seal::seal(
            key,
            &by,
            crate::seal::REVIEW_NAMESPACE,
            &payload,
            "review-sign-failed",
        )?;
        entry.insert("seal".into(), seal);
    }
    let mut list = data
        .get(&reviews.field)
        .and_then(Value::as_array)
        .cloned()
        .unwrap_or_default();
    list.push(Value::Object(entry.clone()));
    let new_text = rewrite(text, &[(reviews.field.clone(), Value::Array(list))]);
    let candidate = Overlay {
        file: r.file.clone(),
        text: new_text.clone(),
    };
    let mine = t.judge(&before, &candidate)?;
    // With --session, the verdict goes into the session's list too: both files are judged
    // before either is written, so the two lists never differ.
    let session = match rv.session {
        None => None,
        Some(sid) => {
            let (st, sr) = open_session(env, &t.kind.file, sid)?;
            let _session_lock = (st.kind.dir != t.kind.dir)
                .then(|| lock(&st.kind.dir))
                .transpose()?;
            let spec = st.kind.session.clone().expect("a session kind");
            let (Some(sdata), Some(stext)) = (sr.data.clone(), sr.text.clone()) else {
                return Err(WsError::new(
                    "record-unparseable",
                    format!("{} can't be read", sr.path),
                ));
            };
            let verdict =
                json!({"record": id, "principal": by, "verdict": rv.verdict, "digest": digest});
            let mut verdicts = sdata
                .get(&spec.verdicts)
                .and_then(Value::as_array)
                .cloned()
                .unwrap_or_default();
            verdicts.push(verdict.clone());
            let s_text = rewrite(&stext, &[(spec.verdicts.clone(), Value::Array(verdicts))]);
            let s_before = st.read(None)?;
            st.judge(
                &s_before,
                &Overlay {
                    file: sr.file.clone(),
                    text: s_text.clone(),
                },
            )?;
            Some((st, sr, stext, s_text, verdict, _session_lock))
        }
    };
    let mut doc = json!({
        "$schema": REVIEW_SCHEMA,
        "contract": 1,
        "kind": t.kind_block(),
        "path": r.path,
        "id": id,
        "review": entry,
        "quorum": mine.quorum,
        "dryRun": dry_run,
        "warnings": warnings(&mine),
    });
    if let Some((st, sr, s_old, s_text, verdict, _lock)) = &session {
        doc["session"] =
            json!({"id": sr.id, "path": read::shown(&st.root, &sr.file), "verdict": verdict});
        if dry_run {
            doc["session"]["text"] = json!(s_text);
        } else {
            replace(&sr.file, s_old, s_text)?;
        }
    }
    if dry_run {
        doc["text"] = json!(new_text);
    } else if let Err(e) = replace(&r.file, text, &new_text) {
        // The record changed meanwhile: the session's verdict is taken back, so the two lists
        // never differ (the session's file still holds what this write put there).
        if let Some((_, sr, s_old, s_text, _, _)) = &session {
            let _ = replace(&sr.file, s_text, s_old);
        }
        return Err(e);
    }
    Ok(doc)
}

/// The session kind `records close` goes through: the one named, else the one session kind
/// the declaration names.
fn session_target(env: &Env, kind: Option<&str>) -> Result<Target> {
    if kind.is_some() {
        return target(env, kind);
    }
    let decl = env.declaration(&Tree::Work)?;
    let Some(d) = decl.as_ref() else {
        return Err(usage(
            "--kind <session kind file> is required: no workspace declaration above this directory names a record kind",
        ));
    };
    let sessions: Vec<PathBuf> = crate::records::session_kinds(env, Some(d), None)
        .into_iter()
        .map(|(file, _, _)| file)
        .collect();
    match sessions.as_slice() {
        [one] => target_file(env, Some(d), one),
        [] => Err(usage(
            "the declaration names no review session kind (a kind with a session block), and records close closes a review session; amend sets the state of other records",
        )),
        many => Err(usage(format!(
            "the declaration names {} session kinds; name the one to close with --kind",
            many.len()
        ))),
    }
}

/// An ISO 8601 UTC time to the second, `2026-12-07T10:30:00Z`.
fn now_seconds() -> String {
    humantime::format_rfc3339_seconds(std::time::SystemTime::now()).to_string()
}

/// `records close`: closes a review session (a record of a kind with a `session` block): its
/// first closed state, the close time and the commit HEAD names (when the kind records them),
/// and the closing seal written last, over everything else. A closed session never changes.
pub fn close(env: &Env, id: &str, kind: Option<&str>, dry_run: bool) -> Result<Value> {
    let t = session_target(env, kind)?;
    let Some(session) = t.kind.session.clone() else {
        return Err(usage(format!(
            "the {} kind has no session block, and records close closes a review session; amend sets the state of other records (records amend {id} --set '{{\"{}\": \"{}\"}}')",
            t.kind.name,
            t.kind.states.as_ref().map_or("state", |s| s.field.as_str()),
            t.kind
                .reviews
                .as_ref()
                .and_then(|r| r.ratified.clone())
                .or_else(|| t
                    .kind
                    .states
                    .as_ref()
                    .and_then(|s| s.closed.first().cloned()))
                .unwrap_or_default()
        )));
    };
    let states = t.kind.states.clone().expect("a session kind has states");
    let closed_state = states.closed.first().cloned().expect("and closed states");
    let _lock = lock(&t.kind.dir)?;
    let before = t.read(None)?;
    let r = t.find(&before, id)?;
    if t.kind.is_closed(r.state.as_deref()) {
        return Err(WsError::new(
            "record-closed",
            format!(
                "{id} is already {}, and a closed session is sealed and stays as it is; open a new session",
                r.state.as_deref().unwrap_or("")
            ),
        ));
    }
    let (Some(data), Some(text)) = (&r.data, &r.text) else {
        return Err(WsError::new(
            "record-unparseable",
            format!("{} can't be read, so it can't be closed", r.path),
        ));
    };
    let top = crate::tree::toplevel(&t.root);
    let head = top.as_deref().and_then(crate::tree::head_commit);
    let mut set: Vec<(String, Value)> = Vec::new();
    if let Some(f) = &session.opened_rev
        && data.get(f).is_none_or(Value::is_null)
        && head.is_some()
    {
        set.push((f.clone(), json!(head)));
    }
    set.push((states.field.clone(), json!(closed_state)));
    if let Some(f) = &session.closed_on {
        set.push((f.clone(), json!(now_seconds())));
    }
    if let Some(f) = &session.closed_rev {
        set.push((f.clone(), json!(head)));
    }
    let changed: Vec<(String, Value)> = set
        .into_iter()
        .filter(|(k, v)| data.get(k).unwrap_or(&Value::Null) != v)
        .collect();
    let new_text = t.sealed(&rewrite(text, &changed), Some(&closed_state));
    let sealed = read::parse(&t.kind, &new_text)
        .ok()
        .and_then(|m| {
            m.get(&session.seal)
                .and_then(Value::as_str)
                .map(str::to_owned)
        })
        .ok_or_else(|| {
            WsError::new(
                "record-unparseable",
                format!(
                    "{}: the {} line can't be added without changing the text it seals",
                    r.path, session.seal
                ),
            )
        })?;
    let candidate = Overlay {
        file: r.file.clone(),
        text: new_text.clone(),
    };
    let mine = t.judge(&before, &candidate)?;
    let mut names: Vec<String> = changed.into_iter().map(|(k, _)| k).collect();
    names.push(session.seal.clone());
    let mut doc = json!({
        "$schema": CLOSE_SCHEMA,
        "contract": 1,
        "kind": t.kind_block(),
        "path": r.path,
        "id": id,
        "changed": names,
        "seal": {"field": session.seal, "digest": sealed},
        "closedRev": head,
        "dryRun": dry_run,
        "warnings": warnings(&mine),
    });
    if dry_run {
        doc["text"] = json!(new_text);
    } else {
        replace(&r.file, text, &new_text)?;
    }
    Ok(doc)
}
