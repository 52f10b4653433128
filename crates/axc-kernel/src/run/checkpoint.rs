//! `checkpoint-turn`: commits exactly the files an accepted turn declared, so the next
//! code-writing turn starts from a clean baseline; the history entry, the state's
//! `last_completed_turn` and a `turn_checkpointed` event record the commit.

use serde_json::{Value as Json, json};

use super::store::{HISTORY, STATE, Store};
use super::{Refusal, git, now, paths};

/// What `checkpoint-turn` did.
#[derive(Clone, Debug)]
pub enum Checkpointed {
    Committed { turn_id: String, sha: String },
    Already { turn_id: String, sha: String },
    Skipped { reason: String },
}

fn declared(entry: &Json) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for f in entry["files_changed"].as_array().into_iter().flatten() {
        let Some(f) = f.as_str().map(str::trim).filter(|f| !f.is_empty()) else {
            continue;
        };
        if paths::is_operational(f) || out.iter().any(|o| o == f) {
            continue;
        }
        out.push(f.to_owned());
    }
    out
}

/// A declared path is committed only when it names a file inside the repository (relative,
/// no `..`), never as a git option or an outside path.
fn inside(p: &str) -> bool {
    !p.is_empty()
        && !p.starts_with('-')
        && !p.starts_with(':')
        && std::path::Path::new(p)
            .components()
            .all(|c| matches!(c, std::path::Component::Normal(_)))
}

pub fn checkpoint(store: &Store, turn: Option<&str>) -> Result<Checkpointed, Refusal> {
    super::config::load(store)?;
    if !git::is_repo(store.root()) {
        return Err(Refusal::new("checkpoint-turn requires a git repository."));
    }
    let _lock = store.lock()?;
    // The entry is found from the end (it is nearly always the last line): only the lines after
    // it are parsed, whatever the history's length.
    let raw = store.read_text(HISTORY, 1 << 30)?.unwrap_or_default();
    let Some((span, entry)) = find_from_end(&raw, turn) else {
        return Err(Refusal::new(match turn {
            Some(t) => format!("Accepted turn {t} not found in history."),
            None => "No accepted turn found in history.".to_owned(),
        }));
    };
    let turn_id = entry["turn_id"].as_str().unwrap_or("").to_owned();
    if let Some(sha) = entry["checkpoint_sha"].as_str() {
        return Ok(Checkpointed::Already {
            turn_id,
            sha: sha.to_owned(),
        });
    }
    let files = declared(&entry);
    if let Some(bad) = files.iter().find(|f| !inside(f)) {
        return Err(Refusal::new(format!(
            "Accepted turn {turn_id} declares {bad:?}, which is not a path inside the repository; nothing was committed."
        )));
    }
    if files.is_empty() {
        return Ok(Checkpointed::Skipped {
            reason: "Accepted turn has no writable files_changed paths to checkpoint.".into(),
        });
    }
    if !git::has_changes(store.root(), &files) {
        return Ok(Checkpointed::Skipped {
            reason: format!("Accepted turn {turn_id} has no staged repo changes to checkpoint."),
        });
    }
    let runtime = entry["runtime_id"].as_str().unwrap_or("(unknown)");
    let role = entry["role"].as_str().unwrap_or("(unknown)");
    let phase = entry["phase"].as_str().unwrap_or("(unknown)");
    let mut body = vec![
        format!("Summary: {}", entry["summary"].as_str().unwrap_or("(none)")),
        format!("Turn-ID: {turn_id}"),
        format!("Role: {role}"),
        format!("Phase: {phase}"),
        format!("Runtime: {runtime}"),
    ];
    if let Some(at) = entry["accepted_at"].as_str() {
        body.push(format!("Accepted-At: {at}"));
    }
    let message = format!(
        "checkpoint: {turn_id} (role={role}, phase={phase}, runtime={runtime})\n\n{}",
        body.join("\n")
    );
    let sha = git::commit_files(store.root(), &files, &message)
        .map_err(|e| Refusal::new(format!("Checkpoint commit failed: {e}")))?;
    let at = now();
    // Only the entry's own line changes: every other line, even one no reader can parse,
    // is kept byte for byte.
    let mut updated = entry.clone();
    updated["checkpoint_sha"] = json!(sha);
    updated["checkpointed_at"] = json!(at);
    let mut out = String::with_capacity(raw.len() + 128);
    out.push_str(&raw[..span.0]);
    out.push_str(&serde_json::to_string(&updated).map_err(std::io::Error::other)?);
    out.push('\n');
    out.push_str(&raw[span.1..]);
    store.write_text(HISTORY, &out)?;
    if let Some(mut state) = store.read_json(STATE)? {
        state["accepted_integration_ref"] = json!(format!("git:{sha}"));
        state["last_completed_turn"] = json!({
            "turn_id": turn_id, "role": entry["role"], "phase": entry["phase"],
            "runtime_id": entry["runtime_id"], "checkpoint_sha": sha,
            "checkpointed_at": at, "intent_id": entry["intent_id"],
        });
        store.write_json(STATE, &state)?;
        store.emit_for(
            "turn_checkpointed",
            &state,
            json!({"turn_id": turn_id, "role_id": entry["role"], "runtime_id": entry["runtime_id"]}),
            super::id_or_null(&entry["intent_id"]),
            json!({"checkpoint_sha": sha, "checkpointed_at": at}),
        )?;
    }
    Ok(Checkpointed::Committed { turn_id, sha })
}

/// The last history line that parses as an entry for `turn` (any entry when `None`), with
/// its byte span (its newline included).
fn find_from_end(raw: &str, turn: Option<&str>) -> Option<((usize, usize), Json)> {
    let mut end = raw.len();
    while end > 0 {
        let body_end = if raw.as_bytes()[end - 1] == b'\n' {
            end - 1
        } else {
            end
        };
        let start = raw[..body_end].rfind('\n').map_or(0, |i| i + 1);
        let line = raw[start..body_end].trim();
        if !line.is_empty()
            && let Ok(e) = serde_json::from_str::<Json>(line)
            && turn.is_none_or(|t| e["turn_id"] == t)
        {
            return Some(((start, end), e));
        }
        end = start;
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_entry_is_found_from_the_end_with_its_exact_span() {
        let raw =
            "{\"turn_id\":\"a\"}\nnot json\n{\"turn_id\":\"b\"}\n\n{\"turn_id\":\"a\",\"n\":2}";
        let ((s, e), v) = find_from_end(raw, Some("a")).unwrap();
        assert_eq!(
            (&raw[s..e], v["n"].as_u64()),
            ("{\"turn_id\":\"a\",\"n\":2}", Some(2))
        );
        let ((s, e), _) = find_from_end(raw, Some("b")).unwrap();
        assert_eq!(&raw[s..e], "{\"turn_id\":\"b\"}\n");
        let ((s, _), v) = find_from_end(raw, None).unwrap();
        assert_eq!((s, v["n"].as_u64()), (raw.rfind('{').unwrap(), Some(2)));
        assert!(find_from_end(raw, Some("c")).is_none());
        assert!(find_from_end("", None).is_none());
        assert!(find_from_end("garbage\n", None).is_none());
    }

    #[test]
    fn only_paths_inside_the_repository_are_committed() {
        for ok in ["hello.sh", ".planning/PM_SIGNOFF.md", "a/b/c"] {
            assert!(inside(ok), "{ok}");
        }
        for bad in [
            "/etc/passwd",
            "../x",
            "a/../../x",
            "--all",
            ":(glob)*",
            "./x",
            "",
        ] {
            assert!(!inside(bad), "{bad}");
        }
    }
}
