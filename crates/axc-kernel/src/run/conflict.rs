//! Acceptance conflicts: a turn is judged against the turns accepted since it was assigned
//! (parallel turns, or a reissue's predecessor's peers). A file both changed is a conflict —
//! unless it is the same role revising its own artifact forward (a workflow artifact it alone
//! owns, or a planning file of the planning entry role), which is a *forward revision* the
//! history records. The shapes, texts and thresholds are the reference's
//! (`classifyAcceptanceOverlap`, `buildConflictCandidateFiles`).

use serde_json::{Value as Json, json};

/// What one classification found.
#[derive(Clone, Debug, PartialEq)]
pub struct Overlap {
    /// The reference's `conflict` object, when a file conflicts.
    pub conflict: Option<Json>,
    pub forward_revision_files: Vec<String>,
    pub forward_revision_turns: Vec<Json>,
}

fn unique(items: impl IntoIterator<Item = String>) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for i in items {
        if !out.contains(&i) {
            out.push(i);
        }
    }
    out
}

fn strings(v: &Json) -> Vec<String> {
    v.as_array()
        .into_iter()
        .flatten()
        .filter_map(Json::as_str)
        .map(str::to_owned)
        .collect()
}

/// The files a turn is judged on: what git attributes to it (`observed`, siblings' files taken
/// out), and what it declared that git saw changed at all (`raw`, before attribution; inherited
/// dirty files included), sorted.
pub fn candidate_files(raw: &Json, observed: &Json, declared: &[String]) -> Vec<String> {
    let attributed = strings(&observed["files_changed"]);
    let mut raw_files = strings(&raw["files_changed"]);
    raw_files.extend(strings(&raw["baseline_unchanged"]));
    let raw = raw_files;
    let mut files = attributed;
    for f in declared {
        if raw.contains(f) && !files.contains(f) {
            files.push(f.clone());
        }
    }
    files.sort();
    files.dedup();
    files
}

/// The roles a workflow-kit artifact at `path` names as its owner.
fn owners(config: &Json, path: &str) -> Vec<String> {
    let mut out = Vec::new();
    for phase in config["workflow_kit"]["phases"]
        .as_object()
        .into_iter()
        .flatten()
    {
        for a in phase.1["artifacts"].as_array().into_iter().flatten() {
            if a["path"] == path
                && let Some(o) = a["owned_by"].as_str()
                && !out.iter().any(|x| x == o)
            {
                out.push(o.to_owned());
            }
        }
    }
    out
}

fn forward_revision(turn: &Json, entry: &Json, file: &str, config: &Json) -> bool {
    let role = turn["assigned_role"].as_str().unwrap_or("");
    if entry["role"].as_str() != Some(role) {
        return false;
    }
    let owners = owners(config, file);
    if !owners.is_empty() {
        return owners.len() == 1 && owners[0] == role;
    }
    file.starts_with(".planning/") && config["routing"]["planning"]["entry_role"] == role
}

/// Classifies `files` of `turn` against `history` (the accepted turns, any order).
pub fn classify(turn: &Json, files: &[String], history: &[Json], config: &Json) -> Overlap {
    let none = Overlap {
        conflict: None,
        forward_revision_files: Vec::new(),
        forward_revision_turns: Vec::new(),
    };
    if files.is_empty() {
        return none;
    }
    let assigned = turn["assigned_sequence"].as_u64().unwrap_or(0);
    let mut since: Vec<Json> = Vec::new();
    let mut conflicting: Vec<String> = Vec::new();
    let mut forward_files: Vec<String> = Vec::new();
    let mut forward_turns: Vec<Json> = Vec::new();
    for entry in history {
        if entry["status"] == "reissued"
            || (turn["reissued_from"].is_string() && turn["reissued_from"] == entry["turn_id"])
            || (turn["run_id"].is_string()
                && entry["run_id"].is_string()
                && entry["run_id"] != turn["run_id"])
            || entry["accepted_sequence"].as_u64().unwrap_or(0) <= assigned
        {
            continue;
        }
        let seen = match entry["observed_artifact"]["files_changed"].as_array() {
            Some(_) => strings(&entry["observed_artifact"]["files_changed"]),
            None => strings(&entry["files_changed"]),
        };
        let overlap = unique(seen.into_iter().filter(|f| files.contains(f)));
        if overlap.is_empty() {
            continue;
        }
        let (forward, destructive): (Vec<String>, Vec<String>) = overlap
            .into_iter()
            .partition(|f| forward_revision(turn, entry, f, config));
        if !destructive.is_empty() {
            for f in &destructive {
                if !conflicting.contains(f) {
                    conflicting.push(f.clone());
                }
            }
            since.push(json!({"turn_id": entry["turn_id"], "role": entry["role"],
                "accepted_sequence": entry["accepted_sequence"], "files_changed": destructive}));
        }
        if !forward.is_empty() {
            for f in &forward {
                if !forward_files.contains(f) {
                    forward_files.push(f.clone());
                }
            }
            match forward_turns
                .iter_mut()
                .find(|t| t["turn_id"] == entry["turn_id"])
            {
                Some(t) => {
                    let mut all = strings(&t["files_changed"]);
                    all.extend(forward);
                    t["files_changed"] = json!(unique(all));
                }
                None => forward_turns
                    .push(json!({"turn_id": entry["turn_id"], "role": entry["role"],
                    "accepted_sequence": entry["accepted_sequence"], "files_changed": forward})),
            }
        }
    }
    if since.is_empty() {
        return Overlap {
            conflict: None,
            forward_revision_files: forward_files,
            forward_revision_turns: forward_turns,
        };
    }
    let ratio = conflicting.len() as f64 / files.len() as f64;
    // As JavaScript writes a number: a whole ratio without a fraction (`1`, `0`).
    let ratio_json = if ratio.fract() == 0.0 {
        json!(ratio as u64)
    } else {
        json!(ratio)
    };
    let untouched: Vec<&String> = files
        .iter()
        .filter(|f| !conflicting.contains(f) && !forward_files.contains(f))
        .collect();
    let conflict = json!({
        "type": "file_conflict",
        "conflicting_turn": {"turn_id": turn["turn_id"], "role": turn["assigned_role"],
            "attempt": turn["attempt"], "files_changed": files},
        "accepted_since": since,
        "conflicting_files": conflicting,
        "non_conflicting_files": untouched,
        "forward_revision_files": forward_files,
        "forward_revision_turns": forward_turns,
        "overlap_ratio": ratio_json,
        "suggested_resolution": if ratio < 0.5 { "reject_and_reassign" } else { "human_merge" },
    });
    Overlap {
        conflict: Some(conflict),
        forward_revision_files: forward_files,
        forward_revision_turns: forward_turns,
    }
}

/// The ids of the turns a conflict names as accepted since (`accepted_since[].turn_id`).
pub fn since_ids(conflict: &Json) -> Vec<Json> {
    conflict["accepted_since"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|e| e["turn_id"].clone())
        .collect()
}

/// A conflict as the ledger and events summarize it: the files, the turns accepted since, the
/// overlap (0 when the record has none).
pub fn summary(conflict: &Json) -> Json {
    json!({
        "conflicting_files": conflict["conflicting_files"].as_array().cloned().unwrap_or_default(),
        "accepted_since_turn_ids": since_ids(conflict),
        "overlap_ratio": if conflict["overlap_ratio"].is_number() { conflict["overlap_ratio"].clone() } else { json!(0) },
    })
}

/// The recovery a conflict loop asks for (the reference's text).
pub fn loop_recovery(turn_id: &str) -> String {
    format!(
        "Serialize the conflicting work, then run agentxchain reject-turn --turn {turn_id} --reassign"
    )
}

/// The conflict's detail line.
pub fn detail(conflict: &Json) -> String {
    let files = strings(&conflict["conflicting_files"]);
    if files.is_empty() {
        "Resolve the retained file conflict, then resume the turn.".to_owned()
    } else {
        format!("Conflicting files: {}", files.join(", "))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn config() -> Json {
        json!({"routing": {"planning": {"entry_role": "pm"}, "implementation": {"entry_role": "dev"}}})
    }

    fn turn(role: &str, assigned: u64) -> Json {
        json!({"turn_id": "turn_b", "assigned_role": role, "assigned_sequence": assigned,
               "attempt": 1, "run_id": "run_1"})
    }

    fn entry(id: &str, role: &str, seq: u64, files: &[&str]) -> Json {
        json!({"turn_id": id, "role": role, "accepted_sequence": seq, "run_id": "run_1",
               "observed_artifact": {"files_changed": files}})
    }

    #[test]
    fn a_file_changed_by_a_turn_accepted_since_is_a_conflict() {
        let files = vec!["src/a.rs".to_owned(), "src/b.rs".to_owned()];
        let history = [
            entry("turn_old", "qa", 1, &["src/a.rs"]),
            entry("turn_a", "qa", 3, &["src/a.rs", "src/c.rs"]),
        ];
        let o = classify(&turn("dev", 2), &files, &history, &config());
        let c = o.conflict.unwrap();
        assert_eq!(c["conflicting_files"], json!(["src/a.rs"]));
        assert_eq!(c["non_conflicting_files"], json!(["src/b.rs"]));
        assert_eq!(c["accepted_since"][0]["turn_id"], "turn_a");
        assert_eq!(c["overlap_ratio"], 0.5);
        assert_eq!(c["suggested_resolution"], "human_merge");
        // Accepted before the turn was assigned, in another run, or reissued: no conflict.
        for e in [
            entry("turn_a", "qa", 2, &["src/a.rs"]),
            json!({"turn_id": "turn_a", "role": "qa", "accepted_sequence": 3, "run_id": "run_0",
                   "files_changed": ["src/a.rs"]}),
            json!({"turn_id": "turn_a", "role": "qa", "accepted_sequence": 3, "status": "reissued",
                   "files_changed": ["src/a.rs"]}),
        ] {
            assert_eq!(
                classify(&turn("dev", 2), &files, std::slice::from_ref(&e), &config()).conflict,
                None,
                "{e}"
            );
        }
        assert_eq!(
            classify(&turn("dev", 2), &[], &history, &config()).conflict,
            None
        );
    }

    #[test]
    fn a_role_revising_its_own_planning_file_is_a_forward_revision() {
        let files = vec![".planning/ROADMAP.md".to_owned()];
        let history = [entry("turn_a", "pm", 3, &[".planning/ROADMAP.md"])];
        let o = classify(&turn("pm", 2), &files, &history, &config());
        assert_eq!(o.conflict, None);
        assert_eq!(o.forward_revision_files, [".planning/ROADMAP.md"]);
        // Another role's revision of it is a conflict; so is an artifact owned by another.
        assert!(
            classify(&turn("dev", 2), &files, &history, &config())
                .conflict
                .is_some()
        );
        let mut c = config();
        c["workflow_kit"] = json!({"phases": {"planning": {"artifacts": [
            {"path": ".planning/ROADMAP.md", "owned_by": "eng_director"}]}}});
        assert!(
            classify(&turn("pm", 2), &files, &history, &c)
                .conflict
                .is_some()
        );
    }

    #[test]
    fn the_candidates_are_what_git_attributes_and_what_was_declared_and_seen() {
        let raw = json!({"files_changed": ["b", "a", "e"], "baseline_unchanged": ["c"]});
        // `e` is a sibling's: out of what is attributed, but the turn declared it.
        let observed = json!({"files_changed": ["b", "a"]});
        let declared = [
            "c".to_owned(),
            "d".to_owned(),
            "a".to_owned(),
            "e".to_owned(),
        ];
        assert_eq!(
            candidate_files(&raw, &observed, &declared),
            ["a", "b", "c", "e"]
        );
    }
}
