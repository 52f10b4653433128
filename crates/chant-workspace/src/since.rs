//! `chant workspace records --since <rev>`: what changed in a kind's records between the
//! commit `--since` names and the tree `--at` names (the working tree without it), matched by
//! id: records new and removed, state transitions, verdicts added, supersessions that took
//! effect and pinned hashes that moved (`records-since.schema.json`, the reference's own).
//!
//! Both sides are read by [`crate::read`] with the kind (and its schema) from the working tree,
//! so the comparison is of the records, not of two versions of the rules.

use std::collections::{BTreeSet, HashMap};
use std::path::Path;

use serde_json::{Map, Value, json};

use crate::error::{Result, WsError};
use crate::kind::Kind;
use crate::read::{self, Record};
use crate::records::{Env, load_kind, named_kind};
use crate::tree::Tree;

pub const SINCE_SCHEMA: &str =
    "https://intentius.io/chant/schemas/workspace/records-since/v1/records-since.schema.json";

/// The change kinds, in the order the document lists them.
const CHANGE_KINDS: [&str; 6] = ["new", "removed", "state", "verdict", "supersession", "pin"];

/// How a `--since` comparison is asked for.
#[derive(Debug, Default, Clone)]
pub struct SinceOptions {
    pub kind: Option<String>,
    pub since: String,
    pub at: Option<String>,
    /// Keep only the changes of this record (the summary stays the whole kind's).
    pub id: Option<String>,
}

/// Whether `v` has the shape of a review session's id (`S-0002`, `ws-052`).
fn session_shaped(v: &str) -> bool {
    let Some((head, n)) = v.split_once('-') else {
        return false;
    };
    let mut h = head.chars();
    h.next().is_some_and(|c| c.is_ascii_alphabetic())
        && h.all(|c| c.is_ascii_alphanumeric())
        && !n.is_empty()
        && n.bytes().all(|b| b.is_ascii_digit())
}

fn failure(e: &WsError) -> Value {
    json!({"$schema": SINCE_SCHEMA, "contract": 1, "error": e.block(false)})
}

/// The commit `--since` names, from the repository holding `cwd`.
fn since_commit(cwd: &Path, rev: &str) -> Result<String> {
    let Some(top) = crate::tree::toplevel(cwd) else {
        return Err(WsError::new(
            "not-a-git-repository",
            "--since reads git objects, and this directory is not in a git repository",
        ));
    };
    match crate::tree::resolve(&top, rev) {
        Some(c) => Ok(c),
        // This chant reads no review-session kinds, so no session can have the id: a value of
        // that shape naming no commit names nothing this read can compare.
        None if session_shaped(rev) => Err(WsError::new(
            "since-session-unknown",
            format!(
                "--since {rev} has the shape of a session id and names no commit, and no session the kind or the declaration reads has that id"
            ),
        )),
        None => Err(WsError::new(
            "since-rev-unknown",
            format!("--since {rev} names no commit in this repository"),
        )),
    }
}

/// The first record of each id, in path order; records with no id are not compared.
fn by_id(records: &[Record]) -> HashMap<&str, &Record> {
    let mut m = HashMap::new();
    for r in records {
        if let Some(id) = r.id.as_deref() {
            m.entry(id).or_insert(r);
        }
    }
    m
}

/// One entry of a verdict list, as the comparison sees it.
struct Verdict {
    principal: Value,
    verdict: Value,
    record: Option<String>,
    session: Option<String>,
    /// What makes two entries the same verdict.
    key: String,
}

/// A verdict list's entries.
fn verdicts(kind: &Kind, r: &Record) -> Vec<Verdict> {
    let field = kind
        .reviews
        .as_ref()
        .map_or("reviews", |rv| rv.field.as_str());
    let list = r
        .data
        .as_ref()
        .and_then(|d| d.get(field))
        .and_then(Value::as_array);
    list.into_iter()
        .flatten()
        .filter_map(Value::as_object)
        .map(|o| {
            let s = |k: &str| o.get(k).and_then(Value::as_str).map(str::to_owned);
            let opt = |k: &str| o.get(k).cloned().unwrap_or(Value::Null);
            let principal = o
                .get("reviewer")
                .filter(|v| v.is_string())
                .cloned()
                .unwrap_or(Value::Null);
            let verdict = o
                .get("verdict")
                .filter(|v| v.is_string())
                .cloned()
                .unwrap_or(Value::Null);
            // Two entries are one verdict when principal, verdict, date, session and record
            // match: a dissent that later gains addressed_by is not a new one.
            let key = Value::Array(vec![
                principal.clone(),
                opt("verdict"),
                opt("on"),
                opt("session"),
                opt("record"),
            ])
            .to_string();
            Verdict {
                principal,
                verdict,
                record: s("record"),
                session: s("session"),
                key,
            }
        })
        .collect()
}

/// `path -> sha256` of a record's pins.
fn pins(kind: &Kind, r: &Record) -> HashMap<String, String> {
    let Some(field) = &kind.pins else {
        return HashMap::new();
    };
    r.data
        .as_ref()
        .and_then(|d| d.get(field))
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(|e| {
            Some((
                e.get("path")?.as_str()?.to_owned(),
                e.get("sha256")?.as_str()?.to_owned(),
            ))
        })
        .collect()
}

/// The changes from `before` to `after`, in the document's order.
pub fn compare(kind: &Kind, before: &[Record], after: &[Record]) -> Vec<Value> {
    let (a_ids, b_ids) = (by_id(before), by_id(after));
    // Sorted as JavaScript's sort() orders strings: by UTF-16 code units.
    let mut ids: Vec<&str> = a_ids
        .keys()
        .chain(b_ids.keys())
        .copied()
        .collect::<BTreeSet<_>>()
        .into_iter()
        .collect();
    ids.sort_by(|x, y| x.encode_utf16().cmp(y.encode_utf16()));
    let mut groups: [Vec<Value>; 6] = Default::default();
    let mut supersessions: Vec<(String, Value)> = Vec::new();
    for id in ids {
        let (a, b) = (a_ids.get(id).copied(), b_ids.get(id).copied());
        let Some(b) = b else {
            if let Some(a) = a {
                groups[1]
                    .push(json!({"change": "removed", "id": id, "path": a.path, "state": a.state}));
            }
            continue;
        };
        match a {
            None => {
                groups[0].push(json!({"change": "new", "id": id, "path": b.path, "state": b.state}))
            }
            Some(a) if a.state != b.state => {
                groups[2].push(json!({"change": "state", "id": id, "from": a.state, "to": b.state}))
            }
            Some(_) => {}
        }
        let mut had: HashMap<String, usize> = HashMap::new();
        for v in a.map(|a| verdicts(kind, a)).unwrap_or_default() {
            *had.entry(v.key).or_default() += 1;
        }
        for (index, v) in verdicts(kind, b).into_iter().enumerate() {
            if let Some(n) = had.get_mut(&v.key).filter(|n| **n > 0) {
                *n -= 1;
                continue;
            }
            let mut c = Map::new();
            c.insert("change".into(), json!("verdict"));
            c.insert("id".into(), json!(id));
            c.insert("principal".into(), v.principal);
            c.insert("verdict".into(), v.verdict);
            c.insert("index".into(), json!(index));
            if let Some(r) = v.record {
                c.insert("record".into(), json!(r));
            }
            if let Some(s) = v.session {
                c.insert("session".into(), json!(s));
            }
            groups[3].push(Value::Object(c));
        }
        if let Some(by) = &b.superseded_by
            && a.is_none_or(|a| a.superseded_by.as_ref() != Some(by))
        {
            supersessions.push((
                by.clone(),
                json!({"change": "supersession", "id": by, "supersedes": id}),
            ));
        }
        if let Some(a) = a
            && kind.pins.is_some()
        {
            let (pa, pb) = (pins(kind, a), pins(kind, b));
            let paths: BTreeSet<&String> = pa.keys().chain(pb.keys()).collect();
            let mut paths: Vec<&String> = paths.into_iter().collect();
            paths.sort_by(|x, y| x.encode_utf16().cmp(y.encode_utf16()));
            for p in paths {
                let (from, to) = (pa.get(p), pb.get(p));
                if from != to {
                    groups[5].push(
                        json!({"change": "pin", "id": id, "path": p, "from": from, "to": to}),
                    );
                }
            }
        }
    }
    // Supersessions are listed by the superseding record's id (a stable sort keeps the
    // superseded ids in order within one).
    supersessions.sort_by(|x, y| x.0.encode_utf16().cmp(y.0.encode_utf16()));
    groups[4] = supersessions.into_iter().map(|(_, v)| v).collect();
    groups.into_iter().flatten().collect()
}

fn summary(changes: &[Value]) -> Value {
    let mut s = Map::new();
    for k in CHANGE_KINDS {
        let n = changes.iter().filter(|c| c["change"] == k).count();
        s.insert(k.into(), json!(n));
    }
    Value::Object(s)
}

/// One kind compared: its result document.
fn compare_kind(env: &Env, file: &Path, since: &str, at: &Tree, id: Option<&str>) -> Result<Value> {
    let (kind, root) = load_kind(env, file)?;
    let top = crate::tree::toplevel(&root).unwrap_or_else(|| root.clone());
    let before_tree = Tree::Rev {
        top: top.clone(),
        commit: since.to_owned(),
    };
    let before = read::records_at(&kind, &root, &before_tree)?;
    let after = read::records_at(&kind, &root, at)?;
    let changes = compare(&kind, &before, &after);
    let mut doc = json!({
        "$schema": SINCE_SCHEMA,
        "contract": 1,
        "kind": {"name": kind.name, "schema": kind.schema_id, "file": read::shown(&top, &kind.file)},
        "since": since,
        "at": at.commit(),
        "changes": null,
        "summary": summary(&changes),
    });
    doc["changes"] = Value::Array(match id {
        Some(id) => changes.into_iter().filter(|c| c["id"] == id).collect(),
        None => changes,
    });
    Ok(doc)
}

/// `records --since <rev> [--kind] [--at]`: the document and the exit code (0 compared, 1 a
/// revision or kind could not be read).
pub fn records_since(env: &Env, opts: &SinceOptions) -> (Value, i32) {
    let decl = match env.declaration(&Tree::Work) {
        Ok(d) => d,
        Err(e) => return (failure(&e), 1),
    };
    // A value shaped like a session id is looked up as a review session first.
    let session = if session_shaped(&opts.since) {
        match find_session(env, decl.as_ref(), opts) {
            Ok(s) => s,
            Err(e) => return (failure(&e), 1),
        }
    } else {
        None
    };
    let (since, at, block) = match session {
        Some(found) => match session_revisions(env, &found, opts.at.as_deref()) {
            Ok(r) => r,
            Err(e) => return (failure(&e), 1),
        },
        None => {
            let since = match since_commit(env.cwd, &opts.since) {
                Ok(c) => c,
                Err(e) => return (failure(&e), 1),
            };
            let at = match &opts.at {
                Some(rev) => match Tree::at(env.cwd, rev, "revision-unknown") {
                    Ok(t) => t,
                    Err(e) => return (failure(&e), 1),
                },
                None => Tree::Work,
            };
            (since, at, None)
        }
    };
    let with_session = |mut doc: Value| {
        if let Some(b) = &block
            && doc.get("error").is_none()
        {
            doc["session"] = b.clone();
        }
        doc
    };
    let (doc, code) = compare_all(env, decl.as_ref(), opts, &since, &at);
    let doc = match doc.get("kinds").and_then(Value::as_array) {
        Some(kinds) => {
            let kinds: Vec<Value> = kinds.iter().cloned().map(with_session).collect();
            json!({"$schema": SINCE_SCHEMA, "contract": 1, "kinds": kinds})
        }
        None => with_session(doc),
    };
    (doc, code)
}

/// The comparison of one kind (`--kind`) or every declared kind, from `since` to `at`.
fn compare_all(
    env: &Env,
    decl: Option<&crate::declaration::Declaration>,
    opts: &SinceOptions,
    since: &str,
    at: &Tree,
) -> (Value, i32) {
    if let Some(given) = &opts.kind {
        let (file, _) = named_kind(env, given, decl);
        return match compare_kind(env, &file, since, at, opts.id.as_deref()) {
            Ok(doc) => (doc, 0),
            Err(e) => (failure(&e), 1),
        };
    }
    let d = match crate::records::naming_kinds(decl) {
        Ok(d) => d,
        Err(e) => return (failure(&e), 1),
    };
    let mut failed = false;
    let kinds: Vec<Value> = d
        .all_kinds()
        .into_iter()
        .map(|k| {
            let mut doc = compare_kind(env, &d.root.join(&k.path), since, at, opts.id.as_deref())
                .unwrap_or_else(|e| {
                    failed = true;
                    failure(&e)
                });
            doc["declared"] = crate::records::declared_block(Some(k));
            doc
        })
        .collect();
    (
        json!({"$schema": SINCE_SCHEMA, "contract": 1, "kinds": kinds}),
        i32::from(failed),
    )
}

/// A review session found by id: its kind's record, and the workspace it is in.
struct FoundSession {
    kind: Kind,
    record: Record,
    root: std::path::PathBuf,
}

/// The session with the id `--since` names, among the kind compared (when it is a session
/// kind) and every session kind the declaration names; `None` when none has it.
fn find_session(
    env: &Env,
    decl: Option<&crate::declaration::Declaration>,
    opts: &SinceOptions,
) -> Result<Option<FoundSession>> {
    let first = opts.kind.as_ref().map(|k| named_kind(env, k, decl).0);
    for (_, kind, root) in crate::records::session_kinds(env, decl, first) {
        // A session is the record of that id whose file is named by it (`S-0002-….md`): an
        // id written into another file does not shadow a branch or tag of that name.
        let named = |r: &Record| {
            r.file
                .file_name()
                .and_then(|n| n.to_str())
                .is_some_and(|n| {
                    n.starts_with(&format!("{}-", opts.since))
                        || n.starts_with(&format!("{}.", opts.since))
                })
        };
        let mut found: Vec<Record> = read::records_at(&kind, &root, &Tree::Work)?
            .into_iter()
            .filter(|r| r.id.as_deref() == Some(opts.since.as_str()) && named(r))
            .collect();
        // Only one valid session of that id is believed (a copy, or a sealed session edited
        // after its close, picks no revisions).
        match found.len() {
            0 => {}
            1 if found[0].valid() => {
                let record = found.remove(0);
                return Ok(Some(FoundSession { kind, record, root }));
            }
            n => {
                return Err(WsError::new(
                    "since-session-unknown",
                    format!(
                        "--since {} names {} session{} of the {} kind that {} not be believed: {}; fix the session files, or give a revision",
                        opts.since,
                        n,
                        if n == 1 { "" } else { "s" },
                        kind.name,
                        if n == 1 { "can" } else { "can all" },
                        found
                            .iter()
                            .map(|r| {
                                let why: Vec<&str> = r.reasons.iter().map(|c| c.code).collect();
                                if why.is_empty() {
                                    format!("{} (one of several)", r.path)
                                } else {
                                    format!("{} ({})", r.path, why.join(", "))
                                }
                            })
                            .collect::<Vec<_>>()
                            .join("; ")
                    ),
                ));
            }
        }
    }
    Ok(None)
}

/// The first line `git log` prints for `args`, in the repository at `top`.
fn log_first(top: &Path, args: &[&str]) -> Option<String> {
    let out = crate::tree::git_out(top, args)?;
    String::from_utf8_lossy(&out)
        .lines()
        .next()
        .map(str::to_owned)
        .filter(|l| !l.is_empty())
}

/// The two revisions of a session: the commit it opened at (its opening revision field, else
/// the last commit that added its file) and the one that carries its close (the first commit
/// after its closing revision that changed its file, else the last that did; `--at` overrides;
/// an open session, or one whose close is not committed, is compared with the working tree).
fn session_revisions(
    env: &Env,
    s: &FoundSession,
    at: Option<&str>,
) -> Result<(String, Tree, Option<Value>)> {
    let Some(top) = crate::tree::toplevel(&s.root) else {
        return Err(WsError::new(
            "not-a-git-repository",
            "--since reads git objects, and this directory is not in a git repository",
        ));
    };
    let spec = s.kind.session.as_ref().expect("a session kind");
    let data = s.record.data.as_ref();
    // A revision field holds a full commit id, as chant writes it; anything else (a branch
    // name, `HEAD`) is not believed, and the file's history is read instead.
    let field = |f: &Option<String>| -> Option<String> {
        let f = f.as_ref()?;
        let v = data?.get(f)?.as_str()?;
        ((v.len() == 40 || v.len() == 64) && v.bytes().all(|b| b.is_ascii_hexdigit()))
            .then(|| v.to_owned())
    };
    let rel = read::shown(&top, &s.record.file);
    let (since, since_from) = match field(&spec.opened_rev)
        .and_then(|r| crate::tree::resolve(&top, &r))
    {
        Some(c) => (c, "opened-rev"),
        None => match log_first(&top, &["log", "--diff-filter=A", "--format=%H", "--", &rel]) {
            Some(c) => (c, "history"),
            None => {
                return Err(WsError::new(
                    "since-rev-unknown",
                    "--since names no commit, or a session with no opening revision and no commit that added it",
                ));
            }
        },
    };
    let closed = s.kind.is_closed(s.record.state.as_deref());
    let mut reasons = Vec::new();
    let (tree, at_from) = if let Some(rev) = at {
        (Tree::at(env.cwd, rev, "revision-unknown")?, "at")
    } else if !closed {
        reasons.push(json!({"code": "since-session-open", "message": "--since names a session that is still open, so the comparison runs to the working tree"}));
        (Tree::Work, "working-tree")
    } else if spec.closed_rev.is_some() {
        let after = field(&spec.closed_rev)
            .and_then(|r| crate::tree::resolve(&top, &r))
            .and_then(|c| {
                log_first(
                    &top,
                    &[
                        "log",
                        "--reverse",
                        "--format=%H",
                        &format!("{c}..HEAD"),
                        "--",
                        &rel,
                    ],
                )
            });
        match after {
            Some(c) => (
                Tree::Rev {
                    top: top.clone(),
                    commit: c,
                },
                "close-commit",
            ),
            None => (Tree::Work, "working-tree"),
        }
    } else {
        match log_first(&top, &["log", "-1", "--format=%H", "--", &rel]) {
            Some(c) => (
                Tree::Rev {
                    top: top.clone(),
                    commit: c,
                },
                "history",
            ),
            None => (Tree::Work, "working-tree"),
        }
    };
    let block = json!({
        "id": s.record.id, "path": rel, "state": s.record.state,
        "sinceFrom": since_from, "atFrom": at_from, "reasons": reasons,
    });
    Ok((since, tree, Some(block)))
}

/// The human form of a `--since` document.
pub fn human(doc: &Value) -> String {
    if let Some(kinds) = doc.get("kinds").and_then(Value::as_array) {
        let mut out = String::new();
        for k in kinds {
            let name = k["declared"]["name"]
                .as_str()
                .or(k["kind"]["name"].as_str())
                .unwrap_or("?");
            out.push_str(&format!(
                "{name} ({})\n",
                k["declared"]["path"].as_str().unwrap_or("")
            ));
            out.push_str(&human(k));
        }
        return out;
    }
    if let Some(line) = crate::records::error_line(doc) {
        return line;
    }
    let or = |v: &Value, d: &'static str| v.as_str().map_or(d.to_owned(), str::to_owned);
    let short = |v: &Value| {
        v.as_str()
            .map_or("none".to_owned(), |h| h.chars().take(12).collect())
    };
    let mut out = String::new();
    for c in doc["changes"].as_array().into_iter().flatten() {
        let id = c["id"].as_str().unwrap_or("");
        let line = match c["change"].as_str().unwrap_or("") {
            "new" => format!(
                "{id}  new, {}  ({})",
                or(&c["state"], "no state"),
                or(&c["path"], "")
            ),
            "removed" => format!(
                "{id}  removed, was {}  ({})",
                or(&c["state"], "no state"),
                or(&c["path"], "")
            ),
            "state" => format!(
                "{id}  state {} to {}",
                or(&c["from"], "none"),
                or(&c["to"], "none")
            ),
            "verdict" => {
                let mut l = format!(
                    "{id}  verdict {} by {}",
                    or(&c["verdict"], "-"),
                    or(&c["principal"], "-")
                );
                if let Some(r) = c["record"].as_str() {
                    l.push_str(&format!(" on {r}"));
                }
                if let Some(s) = c["session"].as_str() {
                    l.push_str(&format!(" in {s}"));
                }
                l
            }
            "supersession" => format!("{id}  supersedes {}", or(&c["supersedes"], "")),
            _ => format!(
                "{id}  pin {} {} to {}",
                or(&c["path"], ""),
                short(&c["from"]),
                short(&c["to"])
            ),
        };
        out.push_str(&line);
        out.push('\n');
    }
    let s = &doc["summary"];
    let n: u64 = CHANGE_KINDS
        .iter()
        .map(|k| s[k].as_u64().unwrap_or(0))
        .sum();
    let since: String = doc["since"]
        .as_str()
        .unwrap_or("")
        .chars()
        .take(8)
        .collect();
    let to = match doc["at"].as_str() {
        Some(a) => format!(" to {}", &a[..a.len().min(8)]),
        None => " to the working tree".into(),
    };
    out.push_str(&format!(
        "{n} changes since {since}{to}: {} new, {} removed, {} state, {} verdicts, {} supersessions, {} pins\n",
        s["new"], s["removed"], s["state"], s["verdict"], s["supersession"], s["pin"]
    ));
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn session_ids_have_their_shape() {
        for yes in ["S-0002", "ws-052", "a1-9"] {
            assert!(session_shaped(yes), "{yes}");
        }
        for no in ["main", "v-1a", "-1", "S-", "1S-2", "HEAD~1", "a-b-1"] {
            assert!(!session_shaped(no), "{no}");
        }
    }
}
