//! Record kinds: a data-only module exporting `recordKind`, read through the caller's sandbox
//! ([`ModuleReader`]), checked into a typed [`Kind`], with its JSON Schema compiled.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde_json::{Map, Value};

use crate::error::{Result, WsError};

/// Evaluates a module and hands back one of its exports as JSON. `chant` implements it with
/// its JavaScript sandbox; the workspace engine never runs code itself.
pub trait ModuleReader {
    /// The export `name` of the module `file`, whose imports may not leave `boundary`.
    fn export(
        &self,
        boundary: &Path,
        file: &Path,
        name: &str,
    ) -> std::result::Result<Value, String>;
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    Markdown,
    Json,
}

impl Format {
    pub fn as_str(self) -> &'static str {
        match self {
            Format::Markdown => "markdown-front-matter",
            Format::Json => "json",
        }
    }
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Id {
    Field(String),
    Sha256,
}

#[derive(Debug, Clone)]
pub struct States {
    pub field: String,
    /// In order: the first is the initial state.
    pub all: Vec<String>,
    pub closed: Vec<String>,
}

#[derive(Debug, Clone)]
pub struct Reviews {
    pub field: String,
    pub decider: String,
    /// The state a record enters only with its quorum met (`reviews.ratified`); the state line
    /// is then left out of the digest, so ratifying keeps the verdicts counting.
    pub ratified: Option<String>,
}

/// A review session kind's `session` block: the list of verdicts a session gathers, the field
/// its closing seal goes in, the kind whose records it reviews, and the fields that record when
/// it opened and closed.
#[derive(Debug, Clone)]
pub struct Session {
    pub verdicts: String,
    pub seal: String,
    /// The subjects' kind file, absolute.
    pub subjects: PathBuf,
    pub opened_rev: Option<String>,
    pub closed_rev: Option<String>,
    pub closed_on: Option<String>,
}

/// A record kind, checked.
#[derive(Debug)]
pub struct Kind {
    pub name: String,
    /// The kind file, absolute.
    pub file: PathBuf,
    /// The directory records live in, absolute.
    pub dir: PathBuf,
    pub matcher: regex::Regex,
    pub format: Format,
    pub schema_id: String,
    pub schema_path: PathBuf,
    pub refs: Vec<(String, PathBuf)>,
    pub id: Id,
    pub states: Option<States>,
    /// The supersedes field, and the key of each entry's id (`None`: the field holds ids).
    pub supersedes: Option<(String, Option<String>)>,
    pub approval: Option<BTreeMap<String, i64>>,
    pub pins: Option<String>,
    pub constrains: Option<String>,
    pub reviews: Option<Reviews>,
    pub proposed_by: Option<String>,
    /// The field a record entering a closed state is sealed in (`seal`, e.g. `closed_digest`;
    /// a session kind's `session.seal`).
    pub seal: Option<String>,
    /// A review session kind's block.
    pub session: Option<Session>,
    /// The schema, compiled.
    pub validator: Validator,
}

impl Kind {
    pub fn initial_state(&self) -> Option<&str> {
        self.states
            .as_ref()
            .and_then(|s| s.all.first())
            .map(String::as_str)
    }

    pub fn is_closed(&self, state: Option<&str>) -> bool {
        match (&self.states, state) {
            (Some(s), Some(st)) => s.closed.iter().any(|c| c == st),
            _ => false,
        }
    }

    /// The rank of `state` in `approval` (0 when the kind ranks none, or not this one).
    pub fn rank(&self, state: Option<&str>) -> i64 {
        match (&self.approval, state) {
            (Some(a), Some(s)) => a.get(s).copied().unwrap_or(0),
            _ => 0,
        }
    }

    /// The front-matter fields the digest leaves out: the reviews, the author seal, the
    /// closing seal, and the state when ratifying is a state change.
    pub fn undigested(&self) -> Vec<&str> {
        let mut keys = vec![
            self.reviews
                .as_ref()
                .map_or("reviews", |r| r.field.as_str()),
        ];
        if self.reviews.is_some() {
            keys.push("seal");
        }
        if let Some(s) = &self.seal {
            keys.push(s);
        }
        if let (Some(r), Some(s)) = (&self.reviews, &self.states)
            && r.ratified.is_some()
        {
            keys.push(&s.field);
        }
        keys
    }

    pub fn digest(&self, text: &str) -> String {
        match self.format {
            Format::Markdown => crate::digest::markdown_digest_without(text, &self.undigested()),
            Format::Json => crate::digest::json_digest(
                text,
                self.reviews
                    .as_ref()
                    .map_or("reviews", |r| r.field.as_str()),
            ),
        }
    }
}

/// A compiled JSON Schema (any draft; ECMA-262 patterns, lookaround included, as the
/// reference's schemas use them).
pub struct Validator(jsonschema::Validator);

impl std::fmt::Debug for Validator {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Validator")
    }
}

impl Validator {
    /// Compiles `schema` with `refs` registered by their ids, so a `$ref` to one resolves
    /// without reading anything else (nothing is fetched).
    pub fn compile(
        _id: &str,
        schema: Value,
        refs: Vec<(String, Value)>,
    ) -> std::result::Result<Validator, String> {
        let mut registry = jsonschema::Registry::new();
        for (rid, v) in refs {
            registry = registry
                .add(rid.as_str(), v)
                .map_err(|e| format!("{rid}: {e}"))?;
        }
        let registry = registry.prepare().map_err(|e| e.to_string())?;
        jsonschema::options()
            .with_registry(&registry)
            .build(&schema)
            .map(Validator)
            .map_err(|e| e.to_string())
    }

    /// `None` when `value` is valid, else what is wrong, one failure per `;`.
    pub fn check(&self, value: &Value) -> Option<String> {
        errors_text(self.0.iter_errors(value))
    }
}

/// The first eight of `errors`, each with where it is, joined by `;` (`None` for none).
pub fn errors_text<'a>(
    errors: impl Iterator<Item = jsonschema::ValidationError<'a>>,
) -> Option<String> {
    let errors: Vec<String> = errors
        .take(8)
        .map(|e| {
            let at = e.instance_path().to_string();
            if at.is_empty() {
                e.to_string()
            } else {
                format!("at {at}: {e}")
            }
        })
        .collect();
    (!errors.is_empty()).then(|| errors.join("; "))
}

fn invalid(file: &str, why: impl std::fmt::Display) -> WsError {
    WsError::new(
        "kind-invalid",
        format!("{file}: recordKind {why}; see docs/workspaces.md#record-kinds"),
    )
}

fn string(m: &Map<String, Value>, key: &str, file: &str) -> Result<Option<String>> {
    match m.get(key) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::String(s)) if !s.is_empty() => Ok(Some(s.clone())),
        Some(v) => Err(invalid(
            file,
            format!("{key} must be a non-empty string, got {v}"),
        )),
    }
}

fn strings(m: &Map<String, Value>, key: &str, file: &str) -> Result<Option<Vec<String>>> {
    match m.get(key) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::Array(a)) => a
            .iter()
            .map(|v| match v {
                Value::String(s) if !s.is_empty() => Ok(s.clone()),
                _ => Err(invalid(
                    file,
                    format!("{key} must list non-empty strings, got {v}"),
                )),
            })
            .collect::<Result<Vec<_>>>()
            .map(Some),
        Some(v) => Err(invalid(file, format!("{key} must be a list, got {v}"))),
    }
}

fn object<'a>(
    m: &'a Map<String, Value>,
    key: &str,
    file: &str,
) -> Result<Option<&'a Map<String, Value>>> {
    match m.get(key) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::Object(o)) => Ok(Some(o)),
        Some(v) => Err(invalid(file, format!("{key} must be an object, got {v}"))),
    }
}

const KNOWN: &[&str] = &[
    "name",
    "location",
    "format",
    "schema",
    "idField",
    "idFrom",
    "stateField",
    "states",
    "closedStates",
    "supersedes",
    "approval",
    "pins",
    "constrains",
    "reviews",
    "proposedBy",
    "seal",
    "session",
];

/// Loads the kind file `file` (absolute) through `reader`, with imports kept in `boundary`,
/// and `shown` the path errors name it by.
pub fn load(reader: &dyn ModuleReader, boundary: &Path, file: &Path, shown: &str) -> Result<Kind> {
    load_as(reader, boundary, file, shown, None)
}

/// [`load`], with the kind's rules taken from `at_base` when given: the text of the kind file
/// at the base revision, evaluated on its own in a directory of its own, so a change cannot
/// rewrite the rules its own records are judged by (closed states, the seal, where records
/// are). Its paths (`location.dir`, `schema.path`) still name the working tree's files.
pub fn load_as(
    reader: &dyn ModuleReader,
    boundary: &Path,
    file: &Path,
    shown: &str,
    at_base: Option<(&str, &[u8])>,
) -> Result<Kind> {
    if !file.is_file() && at_base.is_none() {
        return Err(WsError::new(
            "kind-unreadable",
            format!("{shown}: no kind file there; name a file that exports recordKind"),
        ));
    }
    let value = match at_base {
        None => reader
            .export(boundary, file, "recordKind")
            .map_err(|e| WsError::new("kind-unreadable", format!("{shown}: {e}")))?,
        Some((commit, bytes)) => {
            let unreadable = |e: String| {
                WsError::new(
                    "kind-unreadable",
                    format!(
                        "{shown} as it is at base ({}) does not evaluate on its own: {e}; a kind file is read at base, with no imports",
                        &commit[..commit.len().min(12)]
                    ),
                )
            };
            let dir = tempfile::tempdir().map_err(|e| unreadable(e.to_string()))?;
            let name = file.file_name().unwrap_or_default();
            let copy = dir.path().join(name);
            std::fs::write(&copy, bytes).map_err(|e| unreadable(e.to_string()))?;
            reader
                .export(dir.path(), &copy, "recordKind")
                .map_err(unreadable)?
        }
    };
    // The schema files a kind names are read from inside the same walls as its imports.
    let kind_dir = file.parent().unwrap_or(Path::new("/"));
    let schema = value.get("schema");
    let named = schema
        .and_then(|s| s.get("path"))
        .into_iter()
        .chain(
            schema
                .and_then(|s| s.get("refs"))
                .and_then(Value::as_array)
                .into_iter()
                .flatten()
                .filter_map(|r| r.get("path")),
        )
        .filter_map(Value::as_str);
    let walls = std::fs::canonicalize(boundary).unwrap_or_else(|_| boundary.to_path_buf());
    for p in named {
        let at = normalize(&kind_dir.join(p));
        let resolved = std::fs::canonicalize(&at).unwrap_or(at);
        if !resolved.starts_with(&walls) {
            return Err(WsError::new(
                "schema-unreadable",
                format!(
                    "{shown}: the schema {p} is outside the repository ({}), and a kind's schema is read only from inside it",
                    walls.display()
                ),
            ));
        }
    }
    let kind = from_value(&value, file, shown)?;
    // The records directory is inside the same walls: a kind does not list /etc.
    let dir = std::fs::canonicalize(&kind.dir).unwrap_or_else(|_| kind.dir.clone());
    if !dir.starts_with(&walls) {
        return Err(invalid(
            shown,
            format!(
                "location.dir leads to {}, outside the repository ({}); a kind's records are inside it",
                dir.display(),
                walls.display()
            ),
        ));
    }
    Ok(kind)
}

/// Checks the exported `recordKind` of `file`.
pub fn from_value(value: &Value, file: &Path, shown: &str) -> Result<Kind> {
    let Value::Object(m) = value else {
        return Err(WsError::new(
            "kind-invalid",
            format!(
                "{shown} exports no recordKind object (got {value}); export const recordKind = {{ name, location, format, schema, idField, ... }}"
            ),
        ));
    };
    for key in m.keys() {
        if key == "work" {
            return Err(invalid(
                shown,
                format!("has a {key} block, and this chant does not read {key} kinds yet"),
            ));
        }
        if !KNOWN.contains(&key.as_str()) {
            return Err(invalid(
                shown,
                format!("has an unknown field {key} (known: {})", KNOWN.join(", ")),
            ));
        }
    }
    let name =
        string(m, "name", shown)?.ok_or_else(|| invalid(shown, "needs a name (a string)"))?;
    let kind_dir = file.parent().unwrap_or(Path::new("/")).to_path_buf();
    let location = object(m, "location", shown)?
        .ok_or_else(|| invalid(shown, "needs location {dir, match}"))?;
    let dir = string(location, "dir", shown)?.unwrap_or_else(|| ".".into());
    let pattern = string(location, "match", shown)?
        .ok_or_else(|| invalid(shown, "needs location.match (a regular expression)"))?;
    let matcher = regex::Regex::new(&pattern)
        .map_err(|e| invalid(shown, format!("location.match does not compile: {e}")))?;
    let format = match string(m, "format", shown)?.as_deref() {
        None | Some("markdown-front-matter") => Format::Markdown,
        Some("json") => Format::Json,
        Some(other) => {
            return Err(invalid(
                shown,
                format!("format must be markdown-front-matter or json, got \"{other}\""),
            ));
        }
    };
    let schema =
        object(m, "schema", shown)?.ok_or_else(|| invalid(shown, "needs schema {id, path}"))?;
    let schema_id =
        string(schema, "id", shown)?.ok_or_else(|| invalid(shown, "needs schema.id"))?;
    let schema_path =
        string(schema, "path", shown)?.ok_or_else(|| invalid(shown, "needs schema.path"))?;
    let mut refs = Vec::new();
    if let Some(list) = schema.get("refs") {
        let Value::Array(list) = list else {
            return Err(invalid(shown, "schema.refs must be a list of {id, path}"));
        };
        for r in list {
            let Value::Object(r) = r else {
                return Err(invalid(shown, "schema.refs must be a list of {id, path}"));
            };
            let (Some(id), Some(path)) = (string(r, "id", shown)?, string(r, "path", shown)?)
            else {
                return Err(invalid(shown, "each schema.refs entry needs id and path"));
            };
            refs.push((id, kind_dir.join(path)));
        }
    }
    let id = match (string(m, "idField", shown)?, string(m, "idFrom", shown)?) {
        (Some(f), None) => Id::Field(f),
        (None, Some(h)) if h == "sha256" => Id::Sha256,
        (None, Some(h)) => {
            return Err(invalid(
                shown,
                format!("idFrom must be \"sha256\", got \"{h}\""),
            ));
        }
        _ => return Err(invalid(shown, "needs exactly one of idField and idFrom")),
    };
    let states = match (
        string(m, "stateField", shown)?,
        strings(m, "states", shown)?,
        strings(m, "closedStates", shown)?,
    ) {
        (None, None, None) => None,
        (Some(field), Some(all), Some(closed)) => {
            if all.is_empty() {
                return Err(invalid(shown, "states must list at least one state"));
            }
            if let Some(c) = closed.iter().find(|c| !all.contains(c)) {
                return Err(invalid(
                    shown,
                    format!("closedStates names \"{c}\", which states does not list"),
                ));
            }
            Some(States { field, all, closed })
        }
        _ => {
            return Err(invalid(
                shown,
                "stateField, states and closedStates are given together or not at all",
            ));
        }
    };
    let supersedes = match object(m, "supersedes", shown)? {
        None => None,
        Some(s) => Some((
            string(s, "field", shown)?.ok_or_else(|| invalid(shown, "supersedes needs field"))?,
            string(s, "key", shown)?,
        )),
    };
    let approval = match object(m, "approval", shown)? {
        None => None,
        Some(a) => {
            let mut ranks = BTreeMap::new();
            for (state, rank) in a {
                let Some(r) = rank.as_i64().filter(|r| *r >= 0) else {
                    return Err(invalid(
                        shown,
                        format!("approval.{state} must be a whole number of 0 or more"),
                    ));
                };
                if !states.as_ref().is_some_and(|s| s.all.contains(state)) {
                    return Err(invalid(
                        shown,
                        format!("approval ranks \"{state}\", which states does not list"),
                    ));
                }
                ranks.insert(state.clone(), r);
            }
            Some(ranks)
        }
    };
    if states.is_none() && (supersedes.is_some() || approval.is_some()) {
        return Err(invalid(
            shown,
            "has supersedes or approval but no states, and a link takes effect only from a closed or ranked state",
        ));
    }
    let field_of = |key: &str| -> Result<Option<String>> {
        match object(m, key, shown)? {
            None => Ok(None),
            Some(o) => string(o, "field", shown)?
                .map(Some)
                .ok_or_else(|| invalid(shown, format!("{key} needs field"))),
        }
    };
    let pins = field_of("pins")?;
    let constrains = field_of("constrains")?;
    let reviews = match object(m, "reviews", shown)? {
        None => None,
        Some(r) => Some(Reviews {
            field: string(r, "field", shown)?.unwrap_or_else(|| "reviews".into()),
            decider: string(r, "decider", shown)?
                .ok_or_else(|| invalid(shown, "reviews needs decider (the decider's field)"))?,
            ratified: string(r, "ratified", shown)?,
        }),
    };
    if let Some(r) = reviews.as_ref().and_then(|r| r.ratified.as_ref())
        && !states.as_ref().is_some_and(|s| s.all.contains(r))
    {
        return Err(invalid(
            shown,
            format!("reviews.ratified names \"{r}\", which states does not list"),
        ));
    }
    let session = match object(m, "session", shown)? {
        None => None,
        Some(b) => {
            const SESSION_KEYS: [&str; 6] = [
                "verdicts",
                "seal",
                "subjects",
                "openedRev",
                "closedRev",
                "closedOn",
            ];
            if let Some(k) = b.keys().find(|k| !SESSION_KEYS.contains(&k.as_str())) {
                return Err(invalid(
                    shown,
                    format!(
                        "session has an unknown field {k} (known: {})",
                        SESSION_KEYS.join(", ")
                    ),
                ));
            }
            if states.as_ref().is_none_or(|s| s.closed.is_empty()) {
                return Err(invalid(
                    shown,
                    "a session kind must have states and closedStates: a session is sealed when it reaches a closed state",
                ));
            }
            let need = |k: &str| {
                string(b, k, shown)?
                    .ok_or_else(|| invalid(shown, format!("session needs {k} (a field name)")))
            };
            let subjects = object(b, "subjects", shown)?
                .and_then(|o| o.get("kind"))
                .and_then(Value::as_str)
                .ok_or_else(|| {
                    invalid(
                        shown,
                        "session needs subjects.kind, the kind file of the records it reviews",
                    )
                })?;
            Some(Session {
                verdicts: need("verdicts")?,
                seal: need("seal")?,
                subjects: normalize(&kind_dir.join(subjects)),
                opened_rev: string(b, "openedRev", shown)?,
                closed_rev: string(b, "closedRev", shown)?,
                closed_on: string(b, "closedOn", shown)?,
            })
        }
    };
    let seal = match (string(m, "seal", shown)?, &session) {
        (Some(s), _) => Some(s),
        (None, Some(sess)) => Some(sess.seal.clone()),
        (None, None) => None,
    };
    let proposed_by = string(m, "proposedBy", shown)?;
    let schema_path = kind_dir.join(&schema_path);
    let validator = compile_schema(&schema_id, &schema_path, &refs, shown)?;
    Ok(Kind {
        name,
        file: file.to_path_buf(),
        dir: normalize(&kind_dir.join(dir)),
        matcher,
        format,
        schema_id,
        schema_path,
        refs,
        id,
        states,
        supersedes,
        approval,
        pins,
        constrains,
        reviews,
        proposed_by,
        seal,
        session,
        validator,
    })
}

/// `path` with its `.` and `..` segments resolved by name.
pub fn normalize(path: &Path) -> PathBuf {
    let mut out = PathBuf::new();
    for c in path.components() {
        match c {
            std::path::Component::CurDir => {}
            std::path::Component::ParentDir => {
                out.pop();
            }
            other => out.push(other),
        }
    }
    out
}

/// A schema larger than this is not read.
const MAX_SCHEMA: u64 = 4 * 1024 * 1024;

fn read_schema(id: &str, path: &Path, shown: &str) -> Result<Value> {
    // A regular file of bounded size: a FIFO, a device or a huge file is no schema, and
    // reading one would hang or exhaust memory.
    match std::fs::metadata(path) {
        Ok(m) if m.is_file() && m.len() <= MAX_SCHEMA => {}
        Ok(m) if m.is_file() => {
            return Err(WsError::new(
                "schema-unreadable",
                format!(
                    "{shown}: schema {} is larger than {MAX_SCHEMA} bytes",
                    path.display()
                ),
            ));
        }
        Ok(_) => {
            return Err(WsError::new(
                "schema-unreadable",
                format!("{shown}: schema {} is not a regular file", path.display()),
            ));
        }
        Err(_) => {}
    }
    let text = std::fs::read_to_string(path).map_err(|e| {
        WsError::new(
            "schema-unreadable",
            format!("{shown}: schema {}: {e}", path.display()),
        )
    })?;
    let v: Value = serde_json::from_str(&text).map_err(|e| {
        WsError::new(
            "schema-unreadable",
            format!("{shown}: schema {} is not JSON: {e}", path.display()),
        )
    })?;
    let got = v.get("$id").and_then(Value::as_str);
    if got != Some(id) {
        return Err(WsError::new(
            "schema-id-mismatch",
            format!(
                "{shown}: schema {} has $id {}, and the kind names {id}; make them equal",
                path.display(),
                got.map_or("none".into(), |g| format!("\"{g}\""))
            ),
        ));
    }
    Ok(v)
}

fn compile_schema(
    id: &str,
    path: &Path,
    refs: &[(String, PathBuf)],
    shown: &str,
) -> Result<Validator> {
    let main = read_schema(id, path, shown)?;
    let refs = refs
        .iter()
        .map(|(rid, rpath)| Ok((rid.clone(), read_schema(rid, rpath, shown)?)))
        .collect::<Result<Vec<_>>>()?;
    Validator::compile(id, main, refs).map_err(|e| {
        WsError::new(
            "schema-invalid",
            format!("{shown}: schema {} does not compile: {e}", path.display()),
        )
    })
}
