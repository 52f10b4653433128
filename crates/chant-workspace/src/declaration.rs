//! The workspace declaration: `chant.workspace.json` (strict JSON) or `chant.workspace.jsonc`,
//! the nearest one walking up from a directory to the git root. It is judged by its published
//! schema (schemas/chant.workspace.schema.json, compiled into this crate), then by the rules a
//! schema cannot say: names used once, members placed inside the workspace and apart, a
//! `chant` member holding a chant config, and `minReader`.

use std::path::{Path, PathBuf};

use serde_json::{Map, Value};

use crate::error::{Location, Result, WsError};
use crate::kind::normalize;
use crate::tree::Tree;

pub const FILE: &str = "chant.workspace.json";
pub const FILE_JSONC: &str = "chant.workspace.jsonc";
pub const SCHEMA: &str = include_str!("../schemas/chant.workspace.schema.json");
pub const SCHEMA_ID: &str =
    "https://intentius.io/chant/schemas/workspace/declaration/v1/chant.workspace.schema.json";

/// The member kinds this chant knows; a pinned package may add more (none yet).
pub const MEMBER_KINDS: &[&str] = &["chant", "workspace", "other"];

/// A record kind the declaration names.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct KindDecl {
    /// The member that declares it (`None`: the workspace's own).
    pub member: Option<String>,
    /// The kind file from the workspace root.
    pub path: String,
    /// The name the declaration gives it.
    pub name: Option<String>,
}

#[derive(Debug, Clone)]
pub struct Member {
    pub name: String,
    /// From the workspace root, `/` separators.
    pub dir: String,
    pub kind: String,
    pub roles: Vec<String>,
    pub upstream: Option<String>,
    pub because: Option<String>,
    pub generated: Vec<Value>,
    /// The member's own diagram artifacts, as declared.
    pub diagrams: Vec<Value>,
    pub kinds: Vec<KindDecl>,
    /// The member's own `x-` keys, as written.
    pub extra: Map<String, Value>,
}

#[derive(Debug, Clone)]
pub struct Group {
    pub name: String,
    pub glob: Vec<String>,
}

#[derive(Debug, Clone)]
pub struct Agent {
    pub name: String,
    pub members: Vec<String>,
    pub principals: Vec<String>,
}

#[derive(Debug, Clone)]
pub struct Declaration {
    /// The declaration file, absolute.
    pub file: PathBuf,
    /// The workspace root (the file's directory), absolute.
    pub root: PathBuf,
    /// `chant.workspace.json` or `chant.workspace.jsonc`.
    pub file_name: &'static str,
    pub name: String,
    pub schema: u64,
    pub min_reader: Option<String>,
    pub pins: Vec<Value>,
    pub members: Vec<Member>,
    pub groups: Vec<Group>,
    pub kinds: Vec<KindDecl>,
    pub quorum: Option<u64>,
    pub agents: Vec<Agent>,
    pub write_scope: Map<String, Value>,
    /// The workspace's own diagram artifacts, as declared.
    pub diagrams: Vec<Value>,
    pub extra: Map<String, Value>,
}

impl Declaration {
    pub fn member(&self, name: &str) -> Option<&Member> {
        self.members.iter().find(|m| m.name == name)
    }

    /// Every kind the declaration names: the workspace's own first, then each member's.
    pub fn all_kinds(&self) -> Vec<&KindDecl> {
        self.kinds
            .iter()
            .chain(self.members.iter().flat_map(|m| m.kinds.iter()))
            .collect()
    }

    /// The member whose directory holds `path` (absolute, resolved), the deepest one.
    pub fn member_of(&self, path: &Path) -> Option<&Member> {
        self.members
            .iter()
            .filter(|m| m.dir != "." && path.starts_with(self.root.join(&m.dir)))
            .max_by_key(|m| m.dir.len())
    }
}

/// Finds the declaration nearest above `dir` (absolute), up to the git root (or the
/// filesystem's root outside git): its path, or `declaration-missing`, or
/// `declaration-ambiguous` when both forms sit in one directory.
pub fn find(dir: &Path, tree: &Tree) -> Result<PathBuf> {
    let top = crate::tree::toplevel(dir);
    // Every directory from `dir` up to the git root, nearest first.
    let mut levels = Vec::new();
    let mut at = Some(dir);
    while let Some(d) = at {
        levels.push(d);
        if top.as_deref() == Some(d) {
            break;
        }
        at = d.parent();
    }
    // Anything by those names counts, a directory, a FIFO or a dangling link included: it is
    // then a declaration that cannot be read, never the absence of one. One question for
    // every level (one process at a revision).
    let candidates: Vec<PathBuf> = levels
        .iter()
        .flat_map(|d| [d.join(FILE), d.join(FILE_JSONC)])
        .collect();
    let found = tree.exists_many(&candidates);
    for (i, d) in levels.iter().enumerate() {
        match (found[2 * i], found[2 * i + 1]) {
            (true, true) => {
                return Err(WsError::new(
                    "declaration-ambiguous",
                    format!(
                        "{} holds both {FILE} and {FILE_JSONC}; keep one of them",
                        d.display()
                    ),
                ));
            }
            (true, false) => return Ok(candidates[2 * i].clone()),
            (false, true) => return Ok(candidates[2 * i + 1].clone()),
            _ => {}
        }
    }
    Err(WsError::new(
        "declaration-missing",
        format!(
            "no {FILE} or {FILE_JSONC} between {} and {}; write one at the workspace root (see docs/workspaces.md)",
            dir.display(),
            top.as_deref()
                .map_or("the filesystem root".into(), |t| t.display().to_string())
        ),
    ))
}

/// The published schema, compiled when chant is built: compiling its 55 KB (ECMA patterns,
/// lookaround included, and the check of the schema itself) at run time was most of a server's
/// start at a workspace root (measured, docs/benchmarks.md).
#[jsonschema::validator(path = "schemas/chant.workspace.schema.json", draft = Draft202012)]
struct DeclarationSchema;

/// What is wrong with `value` by the declaration's schema, one failure per `;`.
fn schema_errors(value: &Value) -> Option<String> {
    crate::kind::errors_text(DeclarationSchema::iter_errors(value))
}

fn strs(v: Option<&Value>) -> Vec<String> {
    v.and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(Value::as_str)
        .map(str::to_owned)
        .collect()
}

fn extra(m: &Map<String, Value>) -> Map<String, Value> {
    m.iter()
        .filter(|(k, _)| k.starts_with("x-"))
        .map(|(k, v)| (k.clone(), v.clone()))
        .collect()
}

/// A directory from the workspace root as written: relative, `/` separators, nothing that
/// leaves the root. `None` when it leaves it.
fn inside_root(dir: &str) -> Option<String> {
    if dir.starts_with('/') || dir.contains('\\') || dir.contains('\0') {
        return None;
    }
    let mut parts: Vec<&str> = Vec::new();
    for p in dir.split('/') {
        match p {
            "" | "." => {}
            ".." => {
                parts.pop()?;
            }
            p => parts.push(p),
        }
    }
    Some(if parts.is_empty() {
        ".".into()
    } else {
        parts.join("/")
    })
}

fn kind_decls(v: Option<&Value>, member: Option<&Member>, file: &str) -> Result<Vec<KindDecl>> {
    let mut out = Vec::new();
    for k in v.and_then(Value::as_array).into_iter().flatten() {
        let (path, name) = match k {
            Value::String(p) => (p.clone(), None),
            other => (
                other
                    .get("kind")
                    .and_then(Value::as_str)
                    .unwrap_or("")
                    .to_owned(),
                other.get("name").and_then(Value::as_str).map(str::to_owned),
            ),
        };
        let base = member.map_or(".", |m| m.dir.as_str());
        let joined = if base == "." {
            path.clone()
        } else {
            format!("{base}/{path}")
        };
        let Some(at) = inside_root(&joined).filter(|p| p != ".") else {
            return Err(WsError::new(
                "placement-invalid",
                format!(
                    "{file}: the kind file {path:?}{} leaves the workspace; name a file inside it",
                    member
                        .map(|m| format!(" of member {}", m.name))
                        .unwrap_or_default()
                ),
            ));
        };
        out.push(KindDecl {
            member: member.map(|m| m.name.clone()),
            path: at,
            name,
        });
    }
    Ok(out)
}

/// Compares dotted versions: whether `have` is at least `want`.
pub fn version_at_least(have: &str, want: &str) -> bool {
    let parse = |v: &str| -> Vec<u64> {
        v.split(['.', '-', '+'])
            .take(3)
            .map(|p| p.parse().unwrap_or(0))
            .collect()
    };
    parse(have) >= parse(want)
}

/// Reads and judges the declaration at `file` (absolute) from `tree`; `reader` is this chant's
/// version, for `minReader`.
pub fn load(file: &Path, tree: &Tree, reader: &str) -> Result<Declaration> {
    let (value, file_name) = parse_file(file, tree)?;
    judge(&value, file_name)?;
    build(file, file_name, &value, reader)
}

/// [`load`], running `early` on the declaration while its schema judges it (compiling the
/// schema is most of a load's time): `early`'s result is returned only with a declaration that
/// passed, and is dropped with one that did not. For work that is safe to start on what the
/// declaration says before the schema has judged it (every code check has passed: names,
/// directories inside the workspace), such as evaluating members' configs in their own walls.
pub fn load_then<T>(
    file: &Path,
    tree: &Tree,
    reader: &str,
    early: impl FnOnce(&Declaration) -> T,
) -> Result<(Declaration, T)> {
    let (value, file_name) = parse_file(file, tree)?;
    std::thread::scope(|scope| {
        let judged = scope.spawn(|| judge(&value, file_name));
        let built = build(file, file_name, &value, reader);
        let then = built.as_ref().ok().map(early);
        judged
            .join()
            .unwrap_or_else(|p| std::panic::resume_unwind(p))?;
        let d = built?;
        Ok((d, then.expect("made from the built declaration")))
    })
}

/// Finds and reads the declaration nearest above `dir`, with [`load_then`]'s `early`.
pub fn discover_then<T>(
    dir: &Path,
    tree: &Tree,
    reader: &str,
    early: impl FnOnce(&Declaration) -> T,
) -> Result<(Declaration, T)> {
    let file = find(dir, tree)?;
    load_then(&file, tree, reader, early)
}

/// The declaration's text at `file`, parsed: the value and which of the two names it has.
fn parse_file(file: &Path, tree: &Tree) -> Result<(Value, &'static str)> {
    let bytes = tree.read(file).ok_or_else(|| {
        WsError::new(
            "declaration-unparseable",
            format!(
                "{}: cannot be read (missing, unreadable, or larger than 16 MiB)",
                file.display()
            ),
        )
    })?;
    parse_bytes(file, bytes)
}

/// [`load`] of a declaration whose bytes were read already (at base, beside the trust files).
pub fn load_bytes(file: &Path, bytes: Vec<u8>, reader: &str) -> Result<Declaration> {
    let (value, file_name) = parse_bytes(file, bytes)?;
    judge(&value, file_name)?;
    build(file, file_name, &value, reader)
}

/// The declaration `bytes` (of `file`), parsed: the value and which of the two names it has.
fn parse_bytes(file: &Path, bytes: Vec<u8>) -> Result<(Value, &'static str)> {
    let file_name = if file.file_name().and_then(|n| n.to_str()) == Some(FILE_JSONC) {
        FILE_JSONC
    } else {
        FILE
    };
    let shown = file_name;
    let text = String::from_utf8(bytes).map_err(|_| {
        WsError::new(
            "declaration-unparseable",
            format!("{shown}: is not UTF-8 text"),
        )
    })?;
    let value = crate::json::parse(&text, file_name == FILE_JSONC).map_err(|e| {
        WsError::new(
            "declaration-unparseable",
            format!(
                "{shown}: {} at line {} column {}{}",
                e.message,
                e.line,
                e.column,
                if file_name == FILE {
                    "; comments and trailing commas need chant.workspace.jsonc"
                } else {
                    ""
                }
            ),
        )
        .at(Location {
            file: shown.to_owned(),
            line: e.line,
            column: e.column,
        })
    })?;
    Ok((value, file_name))
}

fn invalid(shown: &str, msg: String) -> WsError {
    WsError::new(
        "declaration-invalid",
        format!("{shown}: {msg}; see docs/workspaces.md#the-declaration"),
    )
}

/// The declaration judged by its published schema.
fn judge(value: &Value, shown: &str) -> Result<()> {
    match schema_errors(value) {
        Some(why) => Err(invalid(shown, why)),
        None => Ok(()),
    }
}

/// The declaration made from its parsed `value`, with the checks the schema cannot make
/// (names used once, directories inside the workspace, agents bound to members, `minReader`).
fn build(file: &Path, file_name: &'static str, value: &Value, reader: &str) -> Result<Declaration> {
    let shown = file_name;
    let invalid = |msg: String| invalid(shown, msg);
    let Value::Object(m) = value else {
        return Err(invalid("is not an object".into()));
    };
    let root = file.parent().unwrap_or(Path::new("/")).to_path_buf();
    if let Some(want) = m.get("minReader").and_then(Value::as_str)
        && !version_at_least(reader, want)
    {
        return Err(WsError::new(
            "reader-too-old",
            format!(
                "{shown} needs chant {want} or newer to read it (minReader), and this is chant {reader}; update chant"
            ),
        ));
    }
    let mut members = Vec::new();
    let mut groups = Vec::new();
    let mut names: Vec<String> = Vec::new();
    for (i, e) in m
        .get("members")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .enumerate()
    {
        let Value::Object(e) = e else { continue };
        let name = e
            .get("name")
            .and_then(Value::as_str)
            .unwrap_or("")
            .to_owned();
        if names.contains(&name) {
            return Err(invalid(format!(
                "members[{i}] repeats the name {name:?}; give each member and group its own name"
            )));
        }
        names.push(name.clone());
        let kind = e
            .get("kind")
            .and_then(Value::as_str)
            .unwrap_or("")
            .to_owned();
        if kind == "examples" {
            let glob = match e.get("glob") {
                Some(Value::String(g)) => vec![g.clone()],
                other => strs(other),
            };
            for g in &glob {
                if inside_root(g).is_none() {
                    return Err(WsError::new(
                        "placement-invalid",
                        format!(
                            "{shown}: members[{i}] ({name}) globs {g:?}, which leaves the workspace; globs are relative to the workspace root"
                        ),
                    ));
                }
            }
            groups.push(Group { name, glob });
            continue;
        }
        let written = e.get("dir").and_then(Value::as_str).unwrap_or("");
        let Some(dir) = inside_root(written) else {
            return Err(WsError::new(
                "placement-invalid",
                format!(
                    "{shown}: members[{i}] ({name}) has dir {written:?}, which leaves the workspace; a member's dir is relative to the workspace root and stays inside it"
                ),
            ));
        };
        if let Some(other) = members.iter().find(|o: &&Member| o.dir == dir) {
            return Err(WsError::new(
                "placement-invalid",
                format!(
                    "{shown}: members[{i}] ({name}) and {} share the dir {dir:?}; each member has a directory of its own",
                    other.name
                ),
            ));
        }
        let mut member = Member {
            name,
            dir,
            kind,
            roles: e
                .get("roles")
                .and_then(Value::as_array)
                .into_iter()
                .flatten()
                .filter_map(|r| r.as_str().or_else(|| r.get("name").and_then(Value::as_str)))
                .map(str::to_owned)
                .collect(),
            upstream: e.get("upstream").and_then(Value::as_str).map(str::to_owned),
            because: e.get("because").and_then(Value::as_str).map(str::to_owned),
            diagrams: e
                .get("diagrams")
                .and_then(Value::as_array)
                .cloned()
                .unwrap_or_default(),
            generated: e
                .get("generated")
                .and_then(Value::as_array)
                .cloned()
                .unwrap_or_default(),
            kinds: Vec::new(),
            extra: extra(e),
        };
        member.kinds = kind_decls(e.get("records"), Some(&member), shown)?;
        members.push(member);
    }
    let kinds = kind_decls(m.get("records"), None, shown)?;
    let mut agents = Vec::new();
    for a in m
        .get("agents")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
    {
        let name = a
            .get("name")
            .and_then(Value::as_str)
            .unwrap_or("")
            .to_owned();
        let mut bound = strs(a.get("members"));
        if let Some(one) = a.get("member").and_then(Value::as_str) {
            bound.insert(0, one.to_owned());
        }
        if let Some(unknown) = bound.iter().find(|b| !names.contains(b)) {
            return Err(invalid(format!(
                "the agent session {name:?} is bound to {unknown:?}, which no member is"
            )));
        }
        if agents.iter().any(|x: &Agent| x.name == name) {
            return Err(invalid(format!(
                "the agent session {name:?} is declared twice"
            )));
        }
        agents.push(Agent {
            name,
            members: bound,
            principals: strs(a.get("principals")),
        });
    }
    Ok(Declaration {
        file: normalize(file),
        root: normalize(&root),
        file_name,
        name: m
            .get("name")
            .and_then(Value::as_str)
            .unwrap_or("")
            .to_owned(),
        schema: m.get("schema").and_then(Value::as_u64).unwrap_or(1),
        min_reader: m
            .get("minReader")
            .and_then(Value::as_str)
            .map(str::to_owned),
        pins: m
            .get("pins")
            .and_then(Value::as_array)
            .cloned()
            .unwrap_or_default(),
        members,
        groups,
        kinds,
        quorum: m.get("quorum").and_then(Value::as_u64),
        agents,
        write_scope: m
            .get("writeScope")
            .and_then(Value::as_object)
            .cloned()
            .unwrap_or_default(),
        diagrams: m
            .get("diagrams")
            .and_then(Value::as_array)
            .cloned()
            .unwrap_or_default(),
        extra: extra(m),
    })
}

/// Finds and reads the declaration nearest above `dir`.
pub fn discover(dir: &Path, tree: &Tree, reader: &str) -> Result<Declaration> {
    let file = find(dir, tree)?;
    load(&file, tree, reader)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn load_text(name: &str, text: &str) -> Result<Declaration> {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join(name), text).unwrap();
        load(&dir.path().join(name), &Tree::Work, "1.0.0")
    }

    /// What `early` makes from a declaration is returned only when the schema passes it, and
    /// `early` never sees one the code checks refuse (a member directory leaving the workspace).
    #[test]
    fn early_work_is_kept_only_with_a_declaration_that_passes() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join(FILE);
        let run = |text: &str| {
            std::fs::write(&file, text).unwrap();
            let mut saw = Vec::new();
            let got = load_then(&file, &Tree::Work, "1.0.0", |d| {
                saw.push(d.members.len());
                d.members.len()
            });
            (got.map(|(_, n)| n), saw)
        };
        let (ok, saw) = run(
            r#"{"name": "ws", "schema": 1, "members": [{"name": "a", "dir": "a", "kind": "chant"}]}"#,
        );
        assert_eq!((ok.unwrap(), saw), (1, vec![1]));
        // The schema refuses an unknown field: the early result is dropped with the error.
        let (err, saw) = run(
            r#"{"name": "ws", "schema": 1, "bogus": 1, "members": [{"name": "a", "dir": "a", "kind": "chant"}]}"#,
        );
        assert_eq!(err.unwrap_err().code, "declaration-invalid");
        assert_eq!(saw, vec![1]);
        // A directory out of the workspace: the code refuses it before anything runs on it.
        let (err, saw) = run(
            r#"{"name": "ws", "schema": 1, "members": [{"name": "a", "dir": "../a", "kind": "chant"}]}"#,
        );
        assert!(err.is_err());
        assert!(saw.is_empty(), "early ran on {saw:?}");
        // The same errors, in the same order, as load.
        for text in [
            r#"{"name": "ws", "schema": 1, "minReader": "9.0.0", "members": [], "bogus": 1}"#,
            r#"{"name": "ws", "schema": 1, "minReader": "9.0.0", "members": []}"#,
        ] {
            std::fs::write(&file, text).unwrap();
            let a = load(&file, &Tree::Work, "1.0.0").unwrap_err();
            let b = load_then(&file, &Tree::Work, "1.0.0", |_| ()).unwrap_err();
            assert_eq!((a.code, a.message), (b.code, b.message));
        }
    }

    #[test]
    fn the_schema_compiles_and_a_whole_declaration_reads() {
        let d = load_text(
            FILE,
            r#"{"name": "ws", "schema": 1, "quorum": 3, "x-team": "core",
               "records": [{"kind": "decisions/decision.kind.mjs"}],
               "members": [
                 {"name": "infra", "dir": "infra", "kind": "chant", "records": [{"kind": "k/work.kind.mjs", "name": "work"}]},
                 {"name": "docs", "dir": "docs", "kind": "other", "because": "prose"},
                 {"name": "examples", "kind": "examples", "glob": "examples/*"}
               ]}"#,
        )
        .unwrap();
        assert_eq!(d.members[0].dir, "infra");
        assert_eq!(d.members[1].dir, "docs");
        assert_eq!(d.groups[0].glob, ["examples/*"]);
        assert_eq!(d.quorum, Some(3));
        assert_eq!(d.extra["x-team"], "core");
        let kinds: Vec<(Option<&str>, &str)> = d
            .all_kinds()
            .iter()
            .map(|k| (k.member.as_deref(), k.path.as_str()))
            .collect();
        assert_eq!(
            kinds,
            [
                (None, "decisions/decision.kind.mjs"),
                (Some("infra"), "infra/k/work.kind.mjs")
            ]
        );
    }

    #[test]
    fn each_refusal_has_its_code() {
        let cases = [
            (
                FILE,
                "{\"name\": \"ws\", // c\n\"schema\": 1, \"members\": []}",
                "declaration-unparseable",
            ),
            (
                FILE,
                r#"{"name": "ws", "name": "ws2", "schema": 1, "members": []}"#,
                "declaration-unparseable",
            ),
            (
                FILE,
                r#"{"name": "ws", "schema": 1, "members": [], "extra": 1}"#,
                "declaration-invalid",
            ),
            (
                FILE,
                r#"{"name": "Ws", "schema": 1, "members": []}"#,
                "declaration-invalid",
            ),
            (
                FILE,
                r#"{"name": "_members", "schema": 1, "members": []}"#,
                "declaration-invalid",
            ),
            (
                FILE,
                r#"{"name": "ws", "schema": 2, "members": []}"#,
                "declaration-invalid",
            ),
            (
                FILE,
                r#"{"name": "ws", "schema": 1, "members": [{"name": "a", "dir": "a", "kind": "other"}]}"#,
                "declaration-invalid",
            ),
            (
                FILE,
                r#"{"name": "ws", "schema": 1, "members": [{"name": "a", "dir": "a", "kind": "chant"}, {"name": "a", "dir": "b", "kind": "chant"}]}"#,
                "declaration-invalid",
            ),
            (
                FILE,
                r#"{"name": "ws", "schema": 1, "members": [{"name": "a", "dir": "../x", "kind": "chant"}]}"#,
                "declaration-invalid",
            ),
            (
                FILE,
                r#"{"name": "ws", "schema": 1, "members": [{"name": "a", "dir": "/etc", "kind": "chant"}]}"#,
                "declaration-invalid",
            ),
            (
                FILE,
                r#"{"name": "ws", "schema": 1, "members": [{"name": "a", "dir": "x", "kind": "chant"}, {"name": "b", "dir": "y/../x", "kind": "chant"}]}"#,
                "declaration-invalid",
            ),
            (
                FILE,
                r#"{"name": "ws", "schema": 1, "records": [{"kind": "../k.kind.mjs"}], "members": []}"#,
                "declaration-invalid",
            ),
            (
                FILE,
                r#"{"name": "ws", "schema": 1, "minReader": "9.0.0", "members": []}"#,
                "reader-too-old",
            ),
            (
                FILE,
                r#"{"name": "ws", "schema": 1, "agents": [{"name": "a", "member": "nope"}], "members": []}"#,
                "declaration-invalid",
            ),
        ];
        for (name, text, code) in cases {
            let e = load_text(name, text).unwrap_err();
            assert_eq!(e.code, code, "{text}: {e}");
            assert!(e.message.starts_with(name), "{e}");
        }
        let ok = load_text(
            FILE_JSONC,
            "{\"name\": \"ws\", // c\n\"schema\": 1, \"members\": [],}",
        );
        assert!(ok.is_ok(), "{ok:?}");
    }

    #[test]
    fn the_nearest_declaration_wins_and_two_forms_are_ambiguous() {
        let dir = tempfile::tempdir().unwrap();
        let sub = dir.path().join("a/b");
        std::fs::create_dir_all(&sub).unwrap();
        std::fs::write(dir.path().join(FILE), "{}").unwrap();
        assert_eq!(find(&sub, &Tree::Work).unwrap(), dir.path().join(FILE));
        std::fs::write(dir.path().join("a").join(FILE_JSONC), "{}").unwrap();
        assert_eq!(
            find(&sub, &Tree::Work).unwrap(),
            dir.path().join("a").join(FILE_JSONC)
        );
        std::fs::write(dir.path().join("a").join(FILE), "{}").unwrap();
        assert_eq!(
            find(&sub, &Tree::Work).unwrap_err().code,
            "declaration-ambiguous"
        );
    }
}
