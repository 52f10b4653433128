//! `chant workspace ls`: the declaration's members, example groups and record kinds, each
//! member with a reason code when it cannot be read (the command still succeeds).

use std::path::{Path, PathBuf};

use serde_json::{Map, Value, json};

use crate::declaration::{self, Declaration, KindDecl, MEMBER_KINDS, Member};
use crate::error::Result;
use crate::kind::{self, ModuleReader};
use crate::tree::Tree;

pub const LS_SCHEMA: &str = "https://intentius.io/chant/schemas/workspace/ls/v1/ls.schema.json";

/// The chant config file names a `chant` member holds.
pub const CONFIGS: &[&str] = &["chant.config.ts", "chant.config.json"];

/// What a member is, read from the tree: `None` when readable, else the reason code and why.
pub fn probe(d: &Declaration, m: &Member, tree: &Tree) -> Option<(&'static str, String)> {
    let dir = d.root.join(&m.dir);
    let Some(entries) = tree.list(&dir) else {
        return Some((
            "dir-missing",
            format!("member {} has no directory at {}", m.name, m.dir),
        ));
    };
    let has = |names: &[&str]| {
        entries
            .iter()
            .any(|e| e.file && names.contains(&e.name.as_str()))
    };
    match m.kind.as_str() {
        "chant" if !has(CONFIGS) => Some((
            "kind-probe-failed",
            format!(
                "member {} is of kind chant, and {} holds no chant.config.ts or chant.config.json",
                m.name, m.dir
            ),
        )),
        "workspace" if !has(&[declaration::FILE, declaration::FILE_JSONC]) => Some((
            "kind-probe-failed",
            format!(
                "member {} is of kind workspace, and {} holds no chant.workspace.json",
                m.name, m.dir
            ),
        )),
        k if !MEMBER_KINDS.contains(&k) => Some((
            "unknown-kind",
            format!(
                "member {} has the kind {k:?}, which is neither built in nor supplied by a pinned package (known: {})",
                m.name,
                MEMBER_KINDS.join(", ")
            ),
        )),
        _ => None,
    }
}

/// A declared kind as `ls` lists it: loaded from the working tree.
pub fn kind_entry(d: &Declaration, k: &KindDecl, reader: &dyn ModuleReader) -> Value {
    let file = d.root.join(&k.path);
    match kind::load(reader, &d.root, &file, &k.path) {
        Ok(kind) => json!({
            "name": k.name.clone().unwrap_or_else(|| kind.name.clone()),
            "path": k.path,
            "kind": kind.name,
            "reason": null,
            "acceptance": null,
        }),
        Err(e) => json!({
            "name": k.name,
            "path": k.path,
            "kind": null,
            // The codes `ls` lists for a kind: a schema that does not compile, or records that
            // have no directory, read as a schema or kind that cannot be read.
            "reason": {
                "code": match e.code {
                    "schema-invalid" => "schema-unreadable",
                    "location-missing" => "kind-invalid",
                    c => c,
                },
                "message": e.message,
            },
            "acceptance": null,
        }),
    }
}

/// The directories (absolute) the glob `pattern` matches under `root`, sorted.
fn glob_dirs(root: &Path, pattern: &str, tree: &Tree) -> Vec<PathBuf> {
    let Ok(g) = globset::GlobBuilder::new(pattern)
        .literal_separator(true)
        .build()
    else {
        return Vec::new();
    };
    let matcher = g.compile_matcher();
    let depth = pattern.split('/').filter(|s| !s.is_empty()).count();
    let mut out = Vec::new();
    let mut level: Vec<(PathBuf, String)> = vec![(root.to_path_buf(), String::new())];
    for _ in 0..depth {
        let mut next = Vec::new();
        for (dir, rel) in &level {
            for e in tree.list(dir).unwrap_or_default() {
                if e.file || e.name == ".git" || e.name == "node_modules" {
                    continue;
                }
                let r = if rel.is_empty() {
                    e.name.clone()
                } else {
                    format!("{rel}/{}", e.name)
                };
                next.push((dir.join(&e.name), r));
            }
        }
        level = next;
        if level.len() > 100_000 {
            break;
        }
    }
    for (dir, rel) in level {
        if matcher.is_match(&rel) {
            out.push(dir);
        }
    }
    out.sort();
    out
}

fn holds_project(dir: &Path, tree: &Tree) -> bool {
    tree.list(dir)
        .unwrap_or_default()
        .iter()
        .any(|e| e.file && CONFIGS.contains(&e.name.as_str()))
}

/// The workspace root from the git root, `/` separators.
pub fn root_from_git(d: &Declaration) -> String {
    match crate::tree::toplevel(&d.root) {
        Some(top) => crate::read::shown(&top, &d.root),
        None => ".".into(),
    }
}

/// The agent sessions and where they were read: the declaration at `at`, else at base, else
/// the working tree's.
fn sessions(
    d: &Declaration,
    at: &Tree,
    reader_version: &str,
) -> (Vec<declaration::Agent>, &'static str) {
    if at.commit().is_some() {
        return (d.agents.clone(), "at");
    }
    if let Some(base) = base_declaration(d, reader_version) {
        return (base.agents, "base");
    }
    (d.agents.clone(), "working-tree")
}

/// The declaration as the base revision holds it, if the base has one at the same place.
pub fn base_declaration(d: &Declaration, reader_version: &str) -> Option<Declaration> {
    let top = crate::tree::toplevel(&d.root)?;
    let (commit, _) = crate::trust::base_of(&top, None).ok()??;
    let tree = Tree::Rev { top, commit };
    declaration::load(&d.file, &tree, reader_version).ok()
}

/// The `ls --json` document, or the error document; and whether the declaration was read.
pub fn ls(dir: &Path, at: Option<&str>, version: &str, reader: &dyn ModuleReader) -> (Value, bool) {
    match ls_inner(dir, at, version, reader) {
        Ok(doc) => (doc, true),
        Err(e) => (
            json!({"$schema": LS_SCHEMA, "contract": 1, "chant": version, "error": e.block(true)}),
            false,
        ),
    }
}

fn ls_inner(
    dir: &Path,
    at: Option<&str>,
    version: &str,
    reader: &dyn ModuleReader,
) -> Result<Value> {
    let tree = match at {
        Some(rev) => Tree::at(dir, rev, "revision-unknown")?,
        None => Tree::Work,
    };
    let d = declaration::discover(dir, &tree, version)?;
    let (agents, agents_from) = sessions(&d, &tree, version);
    let mut workspace = Map::new();
    workspace.insert("name".into(), json!(d.name));
    workspace.insert("root".into(), json!(root_from_git(&d)));
    workspace.insert("file".into(), json!(d.file_name));
    workspace.insert("schema".into(), json!(d.schema));
    workspace.insert("minReader".into(), json!(d.min_reader));
    workspace.insert(
        "pins".into(),
        Value::Array(
            d.pins
                .iter()
                .map(|p| {
                    json!({
                        "package": p.get("package").cloned().unwrap_or(Value::Null),
                        "version": p.get("version").cloned().unwrap_or(Value::Null),
                        "path": p.get("path").cloned().unwrap_or(Value::Null),
                        "integrity": p.get("integrity").cloned().unwrap_or(Value::Null),
                    })
                })
                .collect(),
        ),
    );
    workspace.insert(
        "records".into(),
        Value::Array(d.kinds.iter().map(|k| kind_entry(&d, k, reader)).collect()),
    );
    workspace.insert("agentsFrom".into(), json!(agents_from));
    for (k, v) in &d.extra {
        workspace.insert(k.clone(), v.clone());
    }
    let mut members = Vec::new();
    let mut unreadable = 0;
    for m in &d.members {
        let reason = probe(&d, m, &tree);
        if reason.is_some() {
            unreadable += 1;
        }
        let mut e = Map::new();
        e.insert("name".into(), json!(m.name));
        e.insert("dir".into(), json!(m.dir));
        e.insert("kind".into(), json!(m.kind));
        e.insert(
            "roles".into(),
            Value::Array(
                m.roles
                    .iter()
                    .map(|r| json!({"name": r, "path": null}))
                    .collect(),
            ),
        );
        e.insert("upstream".into(), json!(m.upstream));
        e.insert("because".into(), json!(m.because));
        e.insert("readable".into(), json!(reason.is_none()));
        e.insert(
            "reason".into(),
            reason.as_ref().map_or(
                Value::Null,
                |(code, message)| json!({"code": code, "message": message}),
            ),
        );
        e.insert(
            "records".into(),
            Value::Array(m.kinds.iter().map(|k| kind_entry(&d, k, reader)).collect()),
        );
        let generated = generated_files(&d, m, &tree);
        e.insert("generated".into(), Value::Array(generated));
        e.insert(
            "agents".into(),
            json!(
                agents
                    .iter()
                    .filter(|a| a.members.contains(&m.name))
                    .map(|a| a.name.clone())
                    .collect::<Vec<_>>()
            ),
        );
        for (k, v) in &m.extra {
            e.insert(k.clone(), v.clone());
        }
        members.push(Value::Object(e));
    }
    let mut groups = Vec::new();
    let mut total = 0;
    for g in &d.groups {
        let mut matches = Vec::new();
        let mut skipped = Vec::new();
        for pattern in &g.glob {
            for dir in glob_dirs(&d.root, pattern, &tree) {
                let rel = crate::read::shown(&d.root, &dir);
                if holds_project(&dir, &tree) {
                    if !matches.contains(&rel) {
                        matches.push(rel);
                    }
                } else if !skipped.contains(&rel) {
                    skipped.push(rel);
                }
            }
        }
        total += matches.len();
        groups.push(json!({
            "name": g.name,
            "kind": "examples",
            "glob": g.glob,
            "reason": if matches.is_empty() {
                json!({"code": "no-matches", "message": format!("the globs of {} match no directory holding a chant project", g.name)})
            } else {
                Value::Null
            },
            "matches": matches,
            "skipped": skipped,
        }));
    }
    Ok(json!({
        "$schema": LS_SCHEMA,
        "contract": 1,
        "chant": version,
        "at": tree.commit(),
        "workspace": workspace,
        "members": members,
        "groups": groups,
        "diagrams": diagrams(&d),
        "summary": {"members": d.members.len(), "unreadable": unreadable, "groups": d.groups.len(), "matches": total},
    }))
}

/// Where the repository's top is, for the workspace `d` (its root outside git).
fn repo_top(d: &Declaration) -> PathBuf {
    crate::tree::toplevel(&d.root).unwrap_or_else(|| d.root.clone())
}

/// The most generated files listed for one member.
const MAX_GENERATED: usize = 1000;

/// A path as written in a generated-files entry: relative, `/` separators, inside.
fn plain_path(p: &str) -> Option<String> {
    crate::tree::pin_path_ok(p).then(|| p.trim_start_matches("./").to_owned())
}

/// The generated files member `m` owns, from the repository root and sorted by path: the
/// declaration's `generated` entries (not those kept by hand) merged with the record chant
/// keeps in the member's `.chant/generated.json`; a path in both is listed once, with the
/// declared generator as its command and the record's env. Each with the CI jobs it defines
/// when it is a forge's pipeline file.
fn generated_files(d: &Declaration, m: &Member, tree: &Tree) -> Vec<Value> {
    let top = repo_top(d);
    let member_dir = d.root.join(&m.dir);
    let from_top = |p: &Path| crate::read::shown(&top, p);
    let mut by_path: std::collections::BTreeMap<String, (String, Value)> = Default::default();
    for g in &m.generated {
        if g.get("handWritten").is_some() {
            continue;
        }
        let (Some(p), Some(cmd)) = (
            g.get("path").and_then(Value::as_str).and_then(plain_path),
            g.get("generator").and_then(Value::as_str),
        ) else {
            continue;
        };
        by_path.insert(from_top(&member_dir.join(p)), (cmd.to_owned(), Value::Null));
    }
    // The record chant build writes; a malformed or missing one is no record.
    let record_file = member_dir.join(".chant/generated.json");
    let real_top = std::fs::canonicalize(&top).unwrap_or_else(|_| top.clone());
    let record = match tree {
        // Only a record that lies inside the repository once opened.
        Tree::Work => crate::tree::read_inside(&record_file, &real_top).ok(),
        Tree::Rev { .. } => tree.read(&record_file),
    }
    .and_then(|b| serde_json::from_slice::<Value>(&b).ok());
    for f in record
        .as_ref()
        .and_then(|r| r.get("files"))
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
    {
        let Some(p) = f.get("path").and_then(Value::as_str).and_then(plain_path) else {
            continue;
        };
        let env = f
            .get("env")
            .filter(|e| e.is_string())
            .cloned()
            .unwrap_or(Value::Null);
        match by_path.get_mut(&p) {
            Some(entry) => entry.1 = env,
            None => {
                let cmd = f
                    .get("command")
                    .and_then(Value::as_str)
                    .unwrap_or("")
                    .to_owned();
                by_path.insert(p, (cmd, env));
            }
        }
    }
    // Each file is read once, and only inside the repository: a link out of it is no pipeline
    // of this workspace (its jobs are unknown, and nothing outside is read).
    let mut read: std::collections::HashMap<(PathBuf, Option<&str>), Value> = Default::default();
    by_path
        .into_iter()
        .take(MAX_GENERATED)
        .map(|(path, (command, env))| {
            let file = top.join(&path);
            let jobs = match tree {
                Tree::Work => match std::fs::canonicalize(&file) {
                    Ok(real) if real.starts_with(&real_top) => read
                        .entry((real.clone(), crate::jobs::class(&path)))
                        .or_insert_with(|| {
                            let bytes = crate::tree::read_inside(&real, &real_top).ok();
                            crate::jobs::of(&path, bytes.as_deref())
                        })
                        .clone(),
                    _ => Value::Null,
                },
                Tree::Rev { .. } => crate::jobs::of(&path, tree.read(&file).as_deref()),
            };
            json!({"path": path, "command": command, "env": env, "jobs": jobs})
        })
        .collect()
}

/// Every diagram the declaration names, the workspace's own first and then each member's, in
/// file order, as declared: chant runs no renderer.
fn diagrams(d: &Declaration) -> Vec<Value> {
    let own = d.diagrams.iter().map(|g| (None, g));
    let members = d
        .members
        .iter()
        .flat_map(|m| m.diagrams.iter().map(move |g| (Some(m.name.as_str()), g)));
    own.chain(members)
        .map(|(member, g)| {
            let r = g.get("renderer");
            json!({
                "name": g.get("name"),
                "title": g.get("title"),
                "source": g.get("source").cloned().unwrap_or(Value::Null),
                "render": g.get("render").cloned().unwrap_or(Value::Null),
                "renderer": {
                    "tool": r.and_then(|r| r.get("tool")),
                    "version": r.and_then(|r| r.get("version")),
                    "args": r.and_then(|r| r.get("args")).cloned().unwrap_or(json!([])),
                },
                "member": member,
            })
        })
        .collect()
}

/// The human form of an `ls` document.
pub fn human(doc: &Value) -> String {
    if let Some(e) = doc.get("error") {
        return format!(
            "error[{}]: {}\n",
            e["code"].as_str().unwrap_or(""),
            e["message"].as_str().unwrap_or("")
        );
    }
    let mut out = String::new();
    let ws = &doc["workspace"];
    out.push_str(&format!(
        "{}  ({})\n",
        ws["name"].as_str().unwrap_or(""),
        ws["file"].as_str().unwrap_or("")
    ));
    let members = doc["members"].as_array().cloned().unwrap_or_default();
    if !members.is_empty() {
        let w_name = members
            .iter()
            .map(|m| m["name"].as_str().unwrap_or("").len())
            .max()
            .unwrap_or(0)
            .max(6)
            + 2;
        let w_kind = members
            .iter()
            .map(|m| m["kind"].as_str().unwrap_or("").len())
            .max()
            .unwrap_or(0)
            .max(4)
            + 2;
        let w_dir = members
            .iter()
            .map(|m| m["dir"].as_str().unwrap_or("").len())
            .max()
            .unwrap_or(0)
            .max(3)
            + 2;
        out.push_str(&format!(
            "\n{:w_name$} {:w_kind$} {:w_dir$} ROLES\n",
            "MEMBER", "KIND", "DIR"
        ));
        for m in &members {
            let roles: Vec<&str> = m["roles"]
                .as_array()
                .into_iter()
                .flatten()
                .filter_map(|r| r["name"].as_str())
                .collect();
            let mut line = format!(
                "{:w_name$} {:w_kind$} {:w_dir$} {}",
                m["name"].as_str().unwrap_or(""),
                m["kind"].as_str().unwrap_or(""),
                m["dir"].as_str().unwrap_or(""),
                roles.join(",")
            );
            if let Some(r) = m["reason"]["code"].as_str() {
                line.push_str(&format!(
                    "  unreadable: {r}: {}",
                    m["reason"]["message"].as_str().unwrap_or("")
                ));
            }
            out.push_str(line.trim_end());
            out.push('\n');
        }
    }
    let groups = doc["groups"].as_array().cloned().unwrap_or_default();
    if !groups.is_empty() {
        let w_name = groups
            .iter()
            .map(|g| g["name"].as_str().unwrap_or("").len())
            .max()
            .unwrap_or(0)
            .max(5)
            + 2;
        let glob = |g: &Value| {
            g["glob"]
                .as_array()
                .into_iter()
                .flatten()
                .filter_map(Value::as_str)
                .collect::<Vec<_>>()
                .join(" ")
        };
        let w_glob = groups
            .iter()
            .map(|g| glob(g).len())
            .max()
            .unwrap_or(0)
            .max(4)
            + 2;
        out.push_str(&format!(
            "\n{:w_name$} {:10} {:w_glob$} PROJECTS\n",
            "GROUP", "KIND", "GLOB"
        ));
        for g in &groups {
            out.push_str(&format!(
                "{:w_name$} {:10} {:w_glob$} {}\n",
                g["name"].as_str().unwrap_or(""),
                "examples",
                glob(g),
                g["matches"].as_array().map_or(0, Vec::len)
            ));
        }
    }
    let kinds: Vec<&Value> = ws["records"]
        .as_array()
        .into_iter()
        .flatten()
        .chain(
            members
                .iter()
                .flat_map(|m| m["records"].as_array().into_iter().flatten()),
        )
        .collect();
    if !kinds.is_empty() {
        out.push_str("\nRECORD KIND  PATH\n");
        for k in kinds {
            out.push_str(&format!(
                "{}  {}{}\n",
                k["name"].as_str().unwrap_or("?"),
                k["path"].as_str().unwrap_or(""),
                k["reason"]["code"]
                    .as_str()
                    .map(|r| format!("  ({r})"))
                    .unwrap_or_default()
            ));
        }
    }
    let s = &doc["summary"];
    out.push_str(&format!(
        "\n{} members, {} unreadable; {} example groups with {} projects\n",
        s["members"], s["unreadable"], s["groups"], s["matches"]
    ));
    out
}
