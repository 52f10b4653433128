//! `history`: the run summaries of `run-history.jsonl`, newest first, each with what the
//! reference derives when it prints them: `inheritable` (a later run can inherit its context)
//! and `outcome_summary` (`{label, status, next_action}`).

use std::path::Path;

use axc_core::jsonl::{self, Tail};
use axc_core::read::RUN_HISTORY_FILE;
use fsread::ReadError;
use serde_json::{Value as Json, json};

/// Which runs to show.
#[derive(Debug, Clone, Default)]
pub struct Query {
    /// Only runs with this `status` (`completed`, `blocked`).
    pub status: Option<String>,
    /// The newest this many (0: all).
    pub limit: usize,
}

/// The runs, newest first, each enriched.
pub fn read(root: &Path, query: &Query) -> Result<Tail, ReadError> {
    let n = if query.limit == 0 {
        usize::MAX
    } else {
        query.limit
    };
    let mut tail = jsonl::read_last_where(root, RUN_HISTORY_FILE, n, |e| {
        query
            .status
            .as_deref()
            .is_none_or(|s| e["status"].as_str() == Some(s))
    })?;
    tail.entries.reverse();
    for e in &mut tail.entries {
        enrich(e);
    }
    Ok(tail)
}

/// The run `run_id` and its ancestors through `provenance.parent_run_id`, oldest first; a
/// parent the history does not hold ends the chain with `{broken_link: true, missing_run_id}`
/// and a cycle ends it where it closes. The error is the reference's text.
pub fn lineage(root: &Path, run_id: &str) -> Result<Vec<Json>, String> {
    let all = jsonl::read_all(root, RUN_HISTORY_FILE)
        .map_err(|e| format!("Failed to read run history file: {e}"))?;
    if all.entries.is_empty() {
        return Err("No run history found. Run at least one governed run first.".to_owned());
    }
    // A run recorded twice is its last record, as the reference's map keeps it.
    let mut by_id = std::collections::HashMap::new();
    for e in &all.entries {
        if let Some(id) = e["run_id"].as_str().filter(|id| !id.is_empty()) {
            by_id.insert(id.to_owned(), e);
        }
    }
    let Some(target) = by_id.get(run_id) else {
        return Err(format!(
            "Run {} not found in run history.",
            axc_core::util::printable(run_id)
        ));
    };
    let mut chain = vec![(*target).clone()];
    let mut visited = std::collections::HashSet::from([run_id.to_owned()]);
    let mut current = *target;
    while let Some(parent) = current["provenance"]["parent_run_id"]
        .as_str()
        .filter(|p| !p.is_empty())
    {
        if !visited.insert(parent.to_owned()) {
            break;
        }
        match by_id.get(parent) {
            Some(p) => {
                chain.push((*p).clone());
                current = p;
            }
            None => {
                chain.push(json!({"broken_link": true, "missing_run_id": parent}));
                break;
            }
        }
    }
    chain.reverse();
    Ok(chain)
}

/// Adds (or replaces, in place) `inheritable` and `outcome_summary`.
pub fn enrich(entry: &mut Json) {
    let inheritable = inheritable(entry);
    let summary = outcome_summary(entry);
    if let Some(o) = entry.as_object_mut() {
        o.insert("inheritable".into(), json!(inheritable));
        o.insert("outcome_summary".into(), summary);
    }
}

/// A run a later one can inherit from: its snapshot holds decisions or accepted turns.
pub fn inheritable(entry: &Json) -> bool {
    let snap = &entry["inheritance_snapshot"];
    let some = |k: &str| snap[k].as_array().is_some_and(|a| !a.is_empty());
    some("recent_decisions") || some("recent_accepted_turns")
}

/// `{label, status, next_action}`: `clean` / `follow-on` for a completed run without / with an
/// operator follow-up, `blocked` / `operator` for a blocked one, `unknown` otherwise. The
/// follow-up is the retrospective's `next_operator_action`, else its `follow_on_hint` (the
/// first that is set), on one line.
pub fn outcome_summary(entry: &Json) -> Json {
    let status = entry["status"].as_str().unwrap_or("unknown");
    let retro = &entry["retrospective"];
    let hint = [&retro["next_operator_action"], &retro["follow_on_hint"]]
        .into_iter()
        .find(|v| truthy(v))
        .and_then(Json::as_str)
        .and_then(one_line);
    let label = match (status, &hint) {
        ("blocked", Some(_)) => "operator",
        ("blocked", None) => "blocked",
        ("completed", Some(_)) => "follow-on",
        ("completed", None) => "clean",
        _ => "unknown",
    };
    json!({"label": label, "status": status, "next_action": hint})
}

/// JavaScript's truthiness, which picks the follow-up (`""`, `0`, `false` and null fall through).
fn truthy(v: &Json) -> bool {
    match v {
        Json::Null => false,
        Json::Bool(b) => *b,
        Json::Number(n) => n.as_f64().is_some_and(|f| f != 0.0 && !f.is_nan()),
        Json::String(s) => !s.is_empty(),
        Json::Array(_) | Json::Object(_) => true,
    }
}

/// Runs of whitespace as one space, trimmed; nothing when nothing is left.
pub fn one_line(s: &str) -> Option<String> {
    let words: Vec<&str> = s
        .split(|c: char| c.is_whitespace() || c == '\u{feff}')
        .filter(|w| !w.is_empty())
        .collect();
    (!words.is_empty()).then(|| words.join(" "))
}

/// `2026-01-02T03:04:05.678Z` → `2026-01-02 03:04:05` (UTC).
pub fn utc_date(iso: &str) -> Option<String> {
    let t = crate::events::timestamp(&Json::String(iso.to_owned()))?;
    let s = humantime::format_rfc3339_seconds(t).to_string();
    Some(s.trim_end_matches('Z').replacen('T', " ", 1))
}

/// The run's trigger as the history table shows it (`legacy` when it has no valid one).
pub fn trigger_label(entry: &Json) -> &str {
    const TRIGGERS: [&str; 7] = [
        "manual",
        "continuation",
        "recovery",
        "intake",
        "vision_scan",
        "schedule",
        "coordinator",
    ];
    entry["provenance"]["trigger"]
        .as_str()
        .map(str::trim)
        .filter(|t| TRIGGERS.contains(t))
        .unwrap_or("legacy")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn outcome_labels_follow_status_and_follow_up() {
        let label = |e: Json| outcome_summary(&e);
        assert_eq!(
            label(json!({"status": "completed"})),
            json!({"label": "clean", "status": "completed", "next_action": null})
        );
        assert_eq!(
            label(
                json!({"status": "completed", "retrospective": {"follow_on_hint": " ship\n the  docs "}})
            ),
            json!({"label": "follow-on", "status": "completed", "next_action": "ship the docs"})
        );
        assert_eq!(
            label(
                json!({"status": "blocked", "retrospective": {"next_operator_action": "", "follow_on_hint": "rotate"}})
            ),
            json!({"label": "operator", "status": "blocked", "next_action": "rotate"}),
            "an empty action falls through to the hint"
        );
        assert_eq!(
            label(
                json!({"status": "blocked", "retrospective": {"next_operator_action": 5, "follow_on_hint": "x"}})
            ),
            json!({"label": "blocked", "status": "blocked", "next_action": null}),
            "a set action that is no text hides the hint, as the reference"
        );
        assert_eq!(
            label(json!({"status": "blocked", "retrospective": {"next_operator_action": "  \t"}})),
            json!({"label": "blocked", "status": "blocked", "next_action": null})
        );
        assert_eq!(
            label(json!({"status": 3, "retrospective": {"follow_on_hint": "x"}})),
            json!({"label": "unknown", "status": "unknown", "next_action": "x"})
        );
        assert_eq!(label(json!({"status": "failed"}))["label"], "unknown");
    }

    #[test]
    fn inheritable_needs_decisions_or_turns() {
        assert!(!inheritable(&json!({})));
        assert!(!inheritable(&json!({"inheritance_snapshot": "x"})));
        assert!(!inheritable(
            &json!({"inheritance_snapshot": {"recent_decisions": []}})
        ));
        assert!(inheritable(
            &json!({"inheritance_snapshot": {"recent_decisions": [1]}})
        ));
        assert!(inheritable(
            &json!({"inheritance_snapshot": {"recent_accepted_turns": [{}]}})
        ));
    }

    #[test]
    fn history_is_newest_first_filtered_and_enriched_in_place() {
        let d = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(d.path().join(".agentxchain")).unwrap();
        std::fs::write(
            d.path().join(RUN_HISTORY_FILE),
            "{\"run_id\":\"r1\",\"status\":\"completed\",\"inheritable\":\"old\",\"z\":1}\n\
             {\"run_id\":\"r2\",\"status\":\"blocked\"}\n\
             {\"run_id\":\"r3\",\"status\":\"completed\"}\n",
        )
        .unwrap();
        let ids = |q: Query| -> Vec<String> {
            read(d.path(), &q)
                .unwrap()
                .entries
                .iter()
                .map(|e| e["run_id"].as_str().unwrap().to_owned())
                .collect()
        };
        assert_eq!(ids(Query::default()), ["r3", "r2", "r1"]);
        assert_eq!(
            ids(Query {
                status: None,
                limit: 2
            }),
            ["r3", "r2"]
        );
        let completed = || Query {
            status: Some("completed".into()),
            limit: 0,
        };
        assert_eq!(ids(completed()), ["r3", "r1"]);
        let r1 = read(d.path(), &completed()).unwrap().entries.pop().unwrap();
        let keys: Vec<&str> = r1.as_object().unwrap().keys().map(String::as_str).collect();
        assert_eq!(
            keys,
            ["run_id", "status", "inheritable", "z", "outcome_summary"]
        );
        assert_eq!(r1["inheritable"], false);
    }

    #[test]
    fn lineage_walks_parents_oldest_first_and_stops_at_breaks_and_cycles() {
        let d = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(d.path().join(".agentxchain")).unwrap();
        let path = d.path().join(RUN_HISTORY_FILE);
        assert!(
            lineage(d.path(), "r1")
                .unwrap_err()
                .starts_with("No run history found.")
        );
        std::fs::write(
            &path,
            "{\"run_id\":\"r1\",\"provenance\":{\"parent_run_id\":\"gone\"}}\n\
             {\"run_id\":\"r2\",\"provenance\":{\"parent_run_id\":\"r1\"}}\n\
             {\"run_id\":\"r3\",\"provenance\":{\"parent_run_id\":\"r2\"}}\n\
             {\"run_id\":\"c1\",\"provenance\":{\"parent_run_id\":\"c2\"}}\n\
             {\"run_id\":\"c2\",\"provenance\":{\"parent_run_id\":\"c1\"}}\n",
        )
        .unwrap();
        let chain = lineage(d.path(), "r3").unwrap();
        assert_eq!(
            chain[0],
            json!({"broken_link": true, "missing_run_id": "gone"})
        );
        let ids: Vec<_> = chain[1..]
            .iter()
            .map(|e| e["run_id"].as_str().unwrap())
            .collect();
        assert_eq!(ids, ["r1", "r2", "r3"]);
        let cycle = lineage(d.path(), "c1").unwrap();
        assert_eq!(cycle.len(), 2, "{cycle:?}");
        assert_eq!(
            lineage(d.path(), "nope").unwrap_err(),
            "Run nope not found in run history."
        );
    }

    #[test]
    fn trigger_labels() {
        assert_eq!(trigger_label(&json!({})), "legacy");
        assert_eq!(
            trigger_label(&json!({"provenance": {"trigger": " intake "}})),
            "intake"
        );
        assert_eq!(
            trigger_label(&json!({"provenance": {"trigger": "bogus"}})),
            "legacy"
        );
    }
}
