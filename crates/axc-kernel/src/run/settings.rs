//! `config`: one value of `agentxchain.json` read by its dotted path (`budget.per_run_max_usd`,
//! `routing.planning.allowed_next_roles.0`), or set — the whole config validated as every
//! governed command validates it before anything is written, under the run's lock, written
//! whole. This is what the budget's and other recoveries tell a person to run
//! (`agentxchain config --set budget.per_run_max_usd <usd>`). The reference's texts.

use serde_json::{Map, Value as Json};

use super::Refusal;
use super::store::{CONFIG, LEDGER, MAX_JSON, Store};

/// The decision-ledger entry `config --set` appends: a person changed the rules.
pub const CHANGE: &str = "config_change";

/// The digest of a config's text as the ledger and a baseline's `dirty_snapshot` write it.
pub fn digest(text: &str) -> String {
    format!("sha256:{}", canon::sha256_hex(text.as_bytes()))
}

/// Whether `text` (agentxchain.json as read) is what a person's last `config --set` wrote:
/// its digest is the newest `config_change` entry's in the decision ledger. An agent's own
/// edit has no entry (forging one is rewriting the run's records, the known limit
/// docs/agentxchain.md names); an entry further back than the ledger's read-back window
/// counts as none.
pub fn set_by_person(store: &Store, text: &str) -> bool {
    axc_core::jsonl::read_last_where(store.root(), LEDGER, 1, |e| e["type"] == CHANGE)
        .ok()
        .and_then(|t| t.entries.into_iter().last())
        .is_some_and(|e| e["config_sha256"].as_str() == Some(digest(text).as_str()))
}

/// Whether agentxchain.json, as it is on disk now, is what a person's last `config --set`
/// wrote ([`set_by_person`]); an unreadable one is not.
pub fn on_disk_set_by_person(store: &Store) -> bool {
    config_text(store).is_some_and(|t| set_by_person(store, &t))
}

/// agentxchain.json's text, when it can be read.
fn config_text(store: &Store) -> Option<String> {
    store.read_text(CONFIG, MAX_JSON).ok().flatten()
}

const NO_CONFIG: &str = "  No agentxchain.json found. Run `agentxchain init` first.";

/// A dotted path's segments; `None` for an empty path, an empty segment, or one of the names
/// the reference reserves (`__proto__`, `prototype`, `constructor`).
pub fn segments(path: &str) -> Option<Vec<&str>> {
    if path.trim().is_empty() {
        return None;
    }
    let segs: Vec<&str> = path.split('.').collect();
    segs.iter()
        .all(|s| !s.is_empty() && !matches!(*s, "__proto__" | "prototype" | "constructor"))
        .then_some(segs)
}

/// The project's `agentxchain.json` as written (not normalized), and whether it is a
/// governed one.
pub fn read(store: &Store) -> Result<(Json, bool), Refusal> {
    let raw = store
        .read_json(CONFIG)?
        .ok_or_else(|| Refusal::new(NO_CONFIG))?;
    let governed = match axc_core::config::from_value(raw.clone()) {
        Ok(c) => c.mode == axc_core::config::ProtocolMode::Governed,
        Err(_) => raw.get("roles").is_some_and(Json::is_object),
    };
    Ok((raw, governed))
}

/// The refusal to move a turn's baseline (a retry, a reissue) past a change to the config the
/// turn was dispatched with — in the working tree or committed since — that a person's
/// `config --set` did not write: the new baseline would take the change (its agent's, say) as
/// the config the retry is judged by.
pub fn rebaseline_refusal(store: &Store, turn: &Json) -> Option<String> {
    let root = store.root();
    let old = turn["baseline"]["head_ref"].as_str()?;
    // A turn dispatched from a commit is retried from one: with git unable to read the
    // repository now (an agent can break `.git/config` for a moment), the new baseline would
    // have no commit to hold the config to.
    let Some(new) = super::git::head(root) else {
        return Some(format!(
            "git cannot read this repository now (a broken HEAD, ref or .git/config), so turn {}'s new baseline would hold the config to nothing: repair the repository, then try again.",
            turn["turn_id"].as_str().unwrap_or("")
        ));
    };
    let text = config_text(store)?;
    if set_by_person(store, &text) {
        return None;
    }
    // The config committed at the old head: a git process, asked at most once.
    let at_old = std::cell::LazyCell::new(|| super::git::committed_text(root, old, CONFIG));
    let dispatched_marker = turn["baseline"]["dirty_snapshot"][CONFIG].as_str();
    let as_dispatched = match dispatched_marker {
        Some(marker) => marker == digest(&text),
        None => at_old.as_deref() == Some(text.as_str()),
    };
    let committed_same = new == old || *at_old == super::git::committed_text(root, &new, CONFIG);
    if as_dispatched && committed_same {
        return None;
    }
    if dispatched_marker.is_some() && committed_same {
        // The config was a person's uncommitted `config --set` at dispatch, and is not that now.
        return Some(format!(
            "{CONFIG} is not the config turn {} was dispatched with (one set with agentxchain config --set and not committed then): set the value again with agentxchain config --set (or restore that file), then try again.",
            turn["turn_id"].as_str().unwrap_or("")
        ));
    }
    Some(format!(
        "{CONFIG} changed while turn {} was active (in the working tree, or committed since {}): the config a turn is judged by is a person's to change. Revert the change (git diff {CONFIG}; git log {CONFIG}), or set the value with agentxchain config --set, then try again.",
        turn["turn_id"].as_str().unwrap_or(""),
        &old[..old.len().min(12)],
    ))
}

/// Whether the project's config, as it is now, is one a person chose (see [`chosen`]);
/// a config that cannot be read is not.
pub fn person_chosen(store: &Store) -> bool {
    config_text(store).is_some_and(|t| chosen(store, &t))
}

/// Whether `text` is a config a person chose for the active turns: the one committed at every
/// active turn's baseline head (at HEAD when none is active), or the one a person's last
/// `config --set` wrote.
pub fn chosen(store: &Store, text: &str) -> bool {
    if set_by_person(store, text) {
        return true;
    }
    let root = store.root();
    let state = store.state().ok();
    let heads: Vec<String> = state
        .as_ref()
        .and_then(|s| {
            s["active_turns"].as_object().map(|m| {
                m.values()
                    .filter_map(|t| t["baseline"]["head_ref"].as_str().map(str::to_owned))
                    .collect()
            })
        })
        .filter(|h: &Vec<String>| !h.is_empty())
        .or_else(|| super::git::head(root).map(|h| vec![h]))
        .unwrap_or_default();
    if heads.is_empty() {
        // No commit to compare with: nothing a turn is judged by in a project that is not a
        // git repository (or has no commit yet). But when the run's own records name commits,
        // git failing to answer (a `.git` moved away, a broken HEAD, config or index) is no
        // leave to take any text as the person's.
        return !state.as_ref().is_some_and(names_commits);
    }
    // A commit without a config leaves any text to be the person's; a head that is no commit
    // git can read (a forged `head_ref`, a missing object) leaves none.
    heads
        .iter()
        .all(|h| match super::git::committed_text(root, h, CONFIG) {
            Some(c) => c == text,
            None => super::git::is_commit(root, h),
        })
}

/// Whether the run's state names a commit: a turn accepted into git (`git:<sha>`), or a
/// turn's baseline head.
fn names_commits(state: &Json) -> bool {
    state["accepted_integration_ref"]
        .as_str()
        .is_some_and(|r| r.starts_with("git:"))
        || state["active_turns"]
            .as_object()
            .is_some_and(|m| m.values().any(|t| t["baseline"]["head_ref"].is_string()))
}

fn child<'a>(v: &'a Json, seg: &str) -> Option<&'a Json> {
    match v {
        Json::Object(m) => m.get(seg),
        Json::Array(a) => index(seg).and_then(|i| a.get(i)),
        _ => None,
    }
}

/// An array index as JavaScript reads a property name: digits only, no leading zero.
fn index(seg: &str) -> Option<usize> {
    (seg == "0" || (!seg.starts_with('0') && seg.bytes().all(|b| b.is_ascii_digit())))
        .then(|| seg.parse().ok())
        .flatten()
}

/// The value at `path` in `config`.
pub fn get(config: &Json, path: &str) -> Result<Json, Refusal> {
    let segs =
        segments(path).ok_or_else(|| Refusal::new("  Refusing to read reserved object path."))?;
    let mut v = config;
    for s in segs {
        v = child(v, s).ok_or_else(|| Refusal::new(format!("  Config path not found: {path}")))?;
    }
    Ok(v.clone())
}

/// A `--set` value as the reference reads it: `true` and `false` are booleans, a number is a
/// number, anything else is the text itself.
pub fn parse_value(raw: &str) -> Json {
    match raw {
        "true" => return Json::Bool(true),
        "false" => return Json::Bool(false),
        _ => {}
    }
    let t = raw.trim();
    let number = if let Some(hex) = t.strip_prefix("0x").or(t.strip_prefix("0X")) {
        u64::from_str_radix(hex, 16).ok().map(|n| n as f64)
    } else if !t.is_empty()
        && t.bytes()
            .all(|b| b.is_ascii_digit() || matches!(b, b'.' | b'e' | b'E' | b'+' | b'-'))
    {
        t.parse::<f64>().ok()
    } else {
        None
    };
    match number.filter(|n| n.is_finite()) {
        Some(n) => axc_core::util::js_number(n),
        None => Json::String(raw.to_owned()),
    }
}

/// A value as JavaScript's `String(value)` shows it in the reference's `Set … (was: …)` lines.
pub fn display(v: &Json) -> String {
    match v {
        Json::String(s) => s.clone(),
        Json::Array(a) => a
            .iter()
            .map(|e| {
                if e.is_null() {
                    String::new()
                } else {
                    display(e)
                }
            })
            .collect::<Vec<_>>()
            .join(","),
        Json::Object(_) => "[object Object]".to_owned(),
        other => other.to_string(),
    }
}

/// What `config --set` did.
#[derive(Clone, Debug, PartialEq)]
pub struct Set {
    pub key: String,
    pub value: Json,
    /// The value it replaced, when there was one.
    pub old: Option<Json>,
}

/// Sets `path` to `raw` (read by [`parse_value`]) in the project's config: the objects on the
/// way are made when missing; a path through a value that is not an object (or an array index
/// past its end) is refused, as is a config that no longer validates — with each problem, and
/// nothing written.
pub fn set(store: &Store, path: &str, raw: &str) -> Result<Set, Refusal> {
    let segs =
        segments(path).ok_or_else(|| Refusal::new("  Refusing to write reserved object path."))?;
    let _lock = store.lock()?;
    let (mut config, text) = store
        .read_json_text(CONFIG)?
        .ok_or_else(|| Refusal::new(NO_CONFIG))?;
    // Edits nobody made with this command (by hand, or an agent's) are not taken on: what is
    // set here becomes the config turns are judged by.
    if !chosen(store, &text) {
        return Err(Refusal::new(format!(
            "  {CONFIG} has changes not made with `agentxchain config --set` (by hand, by an agent, or a config --set that did not finish; committed during an active turn counts too): commit or revert them first (git diff {CONFIG}; git log {CONFIG}), then set the value."
        )));
    }
    let value = parse_value(raw);
    // One walk for every segment: the objects on the way are made when missing; a value that
    // is not an object or list, or an index past a list's end, stops it, named by where it is.
    let mut target = &mut config;
    let mut old = None;
    for (i, seg) in segs.iter().enumerate() {
        let last = i + 1 == segs.len();
        let slot = match target {
            Json::Object(m) if last => {
                old = m.insert((*seg).to_owned(), value.clone());
                break;
            }
            Json::Object(m) => m
                .entry((*seg).to_owned())
                .or_insert_with(|| Json::Object(Map::new())),
            Json::Array(a) => {
                let len = a.len();
                index(seg).and_then(|n| a.get_mut(n)).ok_or_else(|| {
                    Refusal::new(format!(
                        "  Cannot set {path}: {seg} is past the end of a list of {len}."
                    ))
                })?
            }
            other => {
                let at = if i == 0 {
                    "the config".to_owned()
                } else {
                    segs[..i].join(".")
                };
                return Err(Refusal::new(format!(
                    "  Cannot set {path}: {at} is {}, not an object.",
                    kind(other)
                )));
            }
        };
        if last {
            old = Some(std::mem::replace(slot, value.clone()));
            break;
        }
        target = slot;
    }
    if let Err(e) = axc_core::config::from_value(config.clone()) {
        let errors = match e {
            axc_core::config::ConfigError::Issues(v) => v.join(", "),
            other => other.to_string(),
        };
        return Err(Refusal::new(format!(
            "  Refusing to save invalid config: {errors}"
        )));
    }
    js_numbers(&mut config);
    // The record first: a crash before the write leaves a digest no file has (refused as
    // a hand edit), never a config without its record.
    let written = serde_json::to_string_pretty(&config).map_err(std::io::Error::other)? + "\n";
    store.append_jsonl(
        LEDGER,
        &serde_json::json!({
            "type": CHANGE, "path": path, "value": value, "previous": old,
            "config_sha256": digest(&written), "changed_by": "operator",
            "timestamp": super::now(),
        }),
    )?;
    store.write_text(CONFIG, &written)?;
    Ok(Set {
        key: path.to_owned(),
        value,
        old,
    })
}

/// Numbers as JavaScript writes them back: an integral value without a fraction (`1E2` and
/// `100.0` are `100`, as the reference's `JSON.stringify` writes them).
fn js_numbers(v: &mut Json) {
    match v {
        Json::Number(n) if n.is_f64() => {
            if let Some(f) = n.as_f64() {
                *v = axc_core::util::js_number(f);
            }
        }
        Json::Array(a) => a.iter_mut().for_each(js_numbers),
        Json::Object(m) => m.values_mut().for_each(js_numbers),
        _ => {}
    }
}

fn kind(v: &Json) -> &'static str {
    match v {
        Json::Null => "null",
        Json::Bool(_) => "a boolean",
        Json::Number(_) => "a number",
        Json::String(_) => "a string",
        Json::Array(_) => "a list",
        Json::Object(_) => "an object",
    }
}

/// `config --remove-agent <id>` of a legacy (v3) project: the agent's id and name.
pub fn remove_agent(store: &Store, id: &str) -> Result<(String, Vec<String>), Refusal> {
    let _lock = store.lock()?;
    let (mut config, _) = read(store)?;
    let Some(agents) = config.get_mut("agents").and_then(Json::as_object_mut) else {
        return Err(Refusal::new(format!("  Agent \"{id}\" not found.")));
    };
    let names = |a: &Map<String, Json>| a.keys().cloned().collect::<Vec<_>>().join(", ");
    let Some(agent) = agents.get(id) else {
        return Err(Refusal::new(format!(
            "  Agent \"{id}\" not found.\n  Available: {}",
            names(agents)
        )));
    };
    let name = agent["name"].as_str().unwrap_or("").to_owned();
    if agents.len() <= 1 {
        return Err(Refusal::new(
            "  Cannot remove the last agent.\n  Add another agent first, then remove this one if needed.",
        ));
    }
    agents.shift_remove(id);
    let left = agents.keys().cloned().collect();
    store.write_json(CONFIG, &config)?;
    Ok((name, left))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn paths_refuse_reserved_and_empty_segments() {
        assert_eq!(
            segments("budget.per_run_max_usd"),
            Some(vec!["budget", "per_run_max_usd"])
        );
        for bad in [
            "",
            " ",
            "a..b",
            ".a",
            "a.",
            "__proto__",
            "a.constructor",
            "prototype.x",
        ] {
            assert_eq!(segments(bad), None, "{bad:?}");
        }
    }

    #[test]
    fn values_are_read_as_the_reference_reads_them() {
        assert_eq!(parse_value("true"), json!(true));
        assert_eq!(parse_value("false"), json!(false));
        assert_eq!(parse_value("3"), json!(3));
        assert_eq!(parse_value("2.5"), json!(2.5));
        assert_eq!(parse_value("-1"), json!(-1));
        assert_eq!(parse_value("1e3"), json!(1000));
        assert_eq!(parse_value("0x10"), json!(16));
        assert_eq!(parse_value(" 7 "), json!(7));
        for text in [
            "TRUE",
            "Infinity",
            "NaN",
            "inf",
            "1.2.3",
            "manual-qa",
            "Build a thing",
            "",
        ] {
            assert_eq!(parse_value(text), json!(text), "{text:?}");
        }
    }

    #[test]
    fn get_walks_objects_and_list_indexes() {
        let c = json!({"a": {"b": [10, {"c": null}]}});
        assert_eq!(get(&c, "a.b.0").unwrap(), json!(10));
        assert_eq!(get(&c, "a.b.1.c").unwrap(), Json::Null);
        assert_eq!(
            get(&c, "a.b.01").unwrap_err().message,
            "  Config path not found: a.b.01"
        );
        assert_eq!(
            get(&c, "a.b.2").unwrap_err().message,
            "  Config path not found: a.b.2"
        );
        assert_eq!(
            get(&c, "a.x").unwrap_err().message,
            "  Config path not found: a.x"
        );
        assert_eq!(
            get(&c, "a.__proto__").unwrap_err().message,
            "  Refusing to read reserved object path."
        );
    }

    #[test]
    fn numbers_are_written_back_as_javascript_writes_them() {
        let mut v: Json = serde_json::from_str(r#"{"a": 1E2, "b": [2.0, 2.5], "c": 7}"#).unwrap();
        js_numbers(&mut v);
        assert_eq!(
            serde_json::to_string(&v).unwrap(),
            r#"{"a":100,"b":[2,2.5],"c":7}"#
        );
    }

    #[test]
    fn display_is_javascripts_string() {
        assert_eq!(display(&json!("x")), "x");
        assert_eq!(display(&json!(1.5)), "1.5");
        assert_eq!(display(&json!(3)), "3");
        assert_eq!(display(&json!(null)), "null");
        assert_eq!(display(&json!(["a", null, 2])), "a,,2");
        assert_eq!(display(&json!({"a": 1})), "[object Object]");
    }

    #[test]
    fn a_head_that_is_no_commit_leaves_no_text_the_persons() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        let git = |args: &[&str]| {
            let ok = std::process::Command::new("git")
                .args(["-c", "user.name=t", "-c", "user.email=t@e"])
                .args(args)
                .current_dir(root)
                .output()
                .unwrap()
                .status
                .success();
            assert!(ok, "git {args:?}");
        };
        git(&["init", "-q", "-b", "main"]);
        std::fs::write(root.join("README"), "x").unwrap();
        git(&["add", "-A"]);
        git(&["commit", "-qm", "no config yet"]);
        std::fs::create_dir_all(root.join(".agentxchain")).unwrap();
        let store = Store::new(root);
        let head = super::super::git::head(root).unwrap();
        let with_head = |h: &str| {
            let state = json!({"active_turns": {"turn_a": {"turn_id": "turn_a", "baseline": {"head_ref": h}}}});
            std::fs::write(root.join(crate::run::store::STATE), state.to_string()).unwrap();
        };
        // A commit without a config: any text (as before).
        with_head(&head);
        assert!(chosen(&store, "{}"));
        // A forged head: a name git has no object for, or no object name at all.
        for forged in [
            "0000000000000000000000000000000000000000",
            "zzzz",
            "../HEAD",
        ] {
            with_head(forged);
            assert!(!chosen(&store, "{}"), "{forged}");
        }
        // A blob's name is no commit either.
        std::fs::write(root.join("agentxchain.json"), "{}").unwrap();
        git(&["add", "agentxchain.json"]);
        git(&["commit", "-qm", "config"]);
        let blob = std::process::Command::new("git")
            .args(["rev-parse", "HEAD:agentxchain.json"])
            .current_dir(root)
            .output()
            .unwrap();
        let blob = String::from_utf8(blob.stdout).unwrap().trim().to_owned();
        with_head(&blob);
        assert!(!chosen(&store, "{}"));
        assert!(!chosen(&store, "{\"other\": 1}"));
    }
}
