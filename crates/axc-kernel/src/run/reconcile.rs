//! `reconcile-state --accept-operator-head`: a person committed on top of the run's last
//! checkpoint (a fix, a doc) and `status` reports the drift; this accepts those commits as the
//! run's new baseline — only when every one of them is safe: the old baseline is an ancestor of
//! HEAD (no history rewritten), no commit touches the orchestrator's files under
//! `.agentxchain/` (but the recovery report and the prompts), and none deletes the acceptance
//! matrix. State gets `accepted_integration_ref` and `operator_commit_reconciliation`, the
//! event log `state_reconciled_operator_commits`, the session checkpoint the new baseline.

use serde_json::{Value as Json, json};

use super::store::{CONFIG, SESSION, STATE, Store};
use super::{Refusal, git, now};

const CRITICAL_DELETIONS: [&str; 1] = [".planning/acceptance-matrix.md"];
const SAFE_PATHS: [&str; 1] = [".agentxchain/SESSION_RECOVERY.md"];
const SAFE_PREFIXES: [&str; 1] = [".agentxchain/prompts/"];

/// One accepted operator commit.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Commit {
    pub sha: String,
    pub subject: String,
    pub paths_touched: Vec<String>,
}

/// What reconciliation did.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Reconciled {
    /// HEAD is the baseline already.
    NoOp { head: String },
    Accepted {
        previous_baseline: String,
        head: String,
        commits: Vec<Commit>,
        paths_touched: Vec<String>,
    },
}

/// Why it refused: the reference's error class, its message, and the commit and path at fault.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Refused {
    pub error_class: &'static str,
    pub message: String,
    pub offending_commit: Option<String>,
    pub offending_path: Option<String>,
}

impl Refused {
    fn new(error_class: &'static str, message: impl Into<String>) -> Refused {
        Refused {
            error_class,
            message: message.into(),
            offending_commit: None,
            offending_path: None,
        }
    }
}

/// A `git:`-prefixed or bare commit name, if it is one.
fn git_ref(v: &Json) -> Option<String> {
    let s = v.as_str()?.trim();
    let s = s.strip_prefix("git:").map_or(s, str::trim);
    (!s.is_empty()).then(|| s.to_owned())
}

fn short(s: &str) -> String {
    s.chars().take(8).collect()
}

/// Why `commit` cannot be accepted, if it cannot.
fn unsafe_change(sha: &str, entries: &[(String, Vec<String>)]) -> Option<Refused> {
    for (status, paths) in entries {
        for path in paths {
            let governed = path == ".agentxchain" || path.starts_with(".agentxchain/");
            let safe = SAFE_PATHS.contains(&path.as_str())
                || SAFE_PREFIXES.iter().any(|p| path.starts_with(p));
            if governed && !safe {
                return Some(Refused {
                    error_class: "governance_state_modified",
                    message: format!(
                        "Commit {} modifies governed state path {}; reconcile cannot auto-accept .agentxchain edits.",
                        short(sha),
                        axc_core::util::printable(path)
                    ),
                    offending_commit: Some(sha.to_owned()),
                    offending_path: Some(path.clone()),
                });
            }
            // The config holds the rules the run is judged by (gates, approval policy): a
            // person changes it knowingly, not by accepting a range of commits. (The reference
            // accepts it; an agent's commit could loosen its own gates that way.)
            if path == CONFIG {
                return Some(Refused {
                    error_class: "governance_config_modified",
                    message: format!(
                        "Commit {} modifies {CONFIG}, the rules the run is judged by; reconcile cannot auto-accept config changes. Review and commit the config change as a person, then restart from an explicit checkpoint.",
                        short(sha)
                    ),
                    offending_commit: Some(sha.to_owned()),
                    offending_path: Some(path.clone()),
                });
            }
            // A deletion, or a file turned into something else (a link, a submodule).
            let deleted = status.starts_with('D') || status.starts_with('T');
            if deleted && CRITICAL_DELETIONS.contains(&path.as_str()) {
                return Some(Refused {
                    error_class: "critical_artifact_deleted",
                    message: format!(
                        "Commit {} deletes critical governed evidence {path}; restore the artifact or restart from an explicit recovery point.",
                        short(sha)
                    ),
                    offending_commit: Some(sha.to_owned()),
                    offending_path: Some(path.clone()),
                });
            }
        }
    }
    None
}

/// `reconcile-state --accept-operator-head`.
pub fn accept_operator_head(store: &Store) -> Result<Result<Reconciled, Refused>, Refusal> {
    let _lock = store.lock()?;
    let root = store.root();
    if !git::is_repo(root) {
        return Ok(Err(Refused::new(
            "not_git_repo",
            "reconcile-state requires a git repository.",
        )));
    }
    let Some(head) = git::head(root) else {
        return Ok(Err(Refused::new(
            "git_unavailable",
            "Unable to inspect git HEAD: git could not read HEAD.",
        )));
    };
    let state = store.read_json(STATE)?.filter(Json::is_object);
    let session = store.read_json(SESSION).ok().flatten();
    let state_ref = state.as_ref().unwrap_or(&Json::Null);
    let session_ref = session.as_ref().unwrap_or(&Json::Null);
    let Some(previous) = git_ref(&session_ref["baseline_ref"]["git_head"])
        .or_else(|| git_ref(&state_ref["accepted_integration_ref"]))
        .or_else(|| git_ref(&state_ref["last_completed_turn"]["checkpoint_sha"]))
    else {
        return Ok(Err(Refused::new(
            "missing_baseline",
            "No prior checkpoint baseline found in session.json, state.accepted_integration_ref, or last_completed_turn.checkpoint_sha.",
        )));
    };
    if previous == head {
        return Ok(Ok(Reconciled::NoOp { head }));
    }
    if !git::is_ancestor(root, &previous, &head) {
        return Ok(Err(Refused::new(
            "history_rewrite",
            format!(
                "Cannot reconcile operator HEAD: baseline {} is not an ancestor of current HEAD {}.",
                axc_core::util::printable(&short(&previous)),
                short(&head)
            ),
        )));
    }
    let Some(shas) = git::commits_between(root, &previous, &head) else {
        return Ok(Err(Refused::new(
            "commit_walk_failed",
            "Failed to inspect operator commits: git rev-list failed.",
        )));
    };
    let mut commits = Vec::new();
    for sha in shas {
        let Some((subject, entries)) = git::commit_changes(root, &sha) else {
            return Ok(Err(Refused::new(
                "commit_walk_failed",
                format!("Failed to inspect operator commits: cannot read commit {sha}."),
            )));
        };
        if let Some(refused) = unsafe_change(&sha, &entries) {
            return Ok(Err(refused));
        }
        let mut paths: Vec<String> = entries.into_iter().flat_map(|(_, p)| p).collect();
        paths.sort();
        paths.dedup();
        commits.push(Commit {
            sha,
            subject,
            paths_touched: paths,
        });
    }
    // The range as a whole, too: whatever the commits' own diffs show, the net change from the
    // baseline to HEAD must pass the same checks.
    let Some(net) = git::paths_between(root, &previous, &head) else {
        return Ok(Err(Refused::new(
            "commit_walk_failed",
            "Failed to inspect operator commits: git diff failed.",
        )));
    };
    if let Some(refused) = unsafe_change(&head, &net) {
        return Ok(Err(refused));
    }
    let mut touched: Vec<String> = commits
        .iter()
        .flat_map(|c| c.paths_touched.iter().cloned())
        .collect();
    touched.sort();
    touched.dedup();
    let at = now();
    let listed: Vec<Json> = commits
        .iter()
        .map(|c| json!({"sha": c.sha, "subject": c.subject, "paths_touched": c.paths_touched}))
        .collect();
    let next = state.clone().map(|mut s| {
        s["accepted_integration_ref"] = json!(format!("git:{head}"));
        s["operator_commit_reconciliation"] = json!({
            "reconciled_at": at, "previous_baseline": previous, "accepted_head": head,
            "commit_count": commits.len(), "safety_mode": "manual_safe_only",
        });
        s
    });
    if let Some(next) = &next {
        store.write_json(STATE, next)?;
    }
    let shown = next.clone().unwrap_or(Json::Null);
    store.emit(
        "state_reconciled_operator_commits",
        &json!({"run_id": shown["run_id"], "phase": if shown["phase"].is_null() { shown["current_phase"].clone() } else { shown["phase"].clone() }, "status": shown["status"]}),
        Json::Null,
        json!({
            "previous_baseline": previous, "accepted_head": head, "accepted_commits": listed,
            "paths_touched": touched,
            "safety_checks": {
                "baseline_is_ancestor": true,
                "rejected_state_paths": [".agentxchain/"],
                "reconcile_safe_paths": SAFE_PATHS,
                "reconcile_safe_prefixes": SAFE_PREFIXES,
                "rejected_deletions": CRITICAL_DELETIONS,
            },
        }),
    )?;
    let mut checkpoint = session.filter(Json::is_object).unwrap_or_else(|| json!({}));
    let phase = if shown["phase"].is_string() {
        shown["phase"].clone()
    } else {
        shown["current_phase"].clone()
    };
    let keep = |v: &Json, old: &Json| if v.is_null() { old.clone() } else { v.clone() };
    let snap = git::snapshot(root);
    let baseline = match &snap {
        Some(s) => json!({"git_head": s.head, "git_branch": s.branch,
            "workspace_dirty": s.changes.iter().any(|p| !p.starts_with(".agentxchain/locks/"))}),
        None => json!({"git_head": null, "git_branch": null, "workspace_dirty": null}),
    };
    let old = checkpoint.clone();
    checkpoint["run_id"] = keep(&shown["run_id"], &old["run_id"]);
    checkpoint["last_checkpoint_at"] = json!(at);
    checkpoint["checkpoint_reason"] = json!("operator_commit_reconciled");
    checkpoint["run_status"] = keep(&shown["status"], &old["run_status"]);
    checkpoint["phase"] = keep(&phase, &old["phase"]);
    checkpoint["last_phase"] = keep(&phase, &old["last_phase"]);
    checkpoint["last_completed_turn_id"] = keep(
        &shown["last_completed_turn_id"],
        &old["last_completed_turn_id"],
    );
    checkpoint["baseline_ref"] = baseline;
    checkpoint["operator_commit_reconciliation"] = json!({
        "previous_baseline": previous, "accepted_head": head, "commit_count": commits.len(),
    });
    store.write_json(SESSION, &checkpoint)?;
    Ok(Ok(Reconciled::Accepted {
        previous_baseline: previous,
        head,
        commits,
        paths_touched: touched,
    }))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn entries(list: &[(&str, &[&str])]) -> Vec<(String, Vec<String>)> {
        list.iter()
            .map(|(s, p)| (s.to_string(), p.iter().map(|p| p.to_string()).collect()))
            .collect()
    }

    #[test]
    fn only_commits_that_leave_the_orchestrators_files_and_evidence_alone_are_safe() {
        let sha = "0123456789abcdef0123456789abcdef01234567";
        for ok in [
            entries(&[("M", &["src/a.rs"]), ("A", &["docs/x.md"])]),
            entries(&[("M", &[".agentxchain/SESSION_RECOVERY.md"])]),
            entries(&[("A", &[".agentxchain/prompts/dev.md"])]),
            entries(&[("M", &[".planning/acceptance-matrix.md"])]),
            entries(&[("M", &[".agentxchainx/y"])]),
        ] {
            assert_eq!(unsafe_change(sha, &ok), None, "{ok:?}");
        }
        let r = unsafe_change(sha, &entries(&[("M", &[".agentxchain/state.json"])])).unwrap();
        assert_eq!(r.error_class, "governance_state_modified");
        assert_eq!(
            r.message,
            "Commit 01234567 modifies governed state path .agentxchain/state.json; reconcile cannot auto-accept .agentxchain edits."
        );
        // A rename out of the orchestrator's files names both paths; either is enough.
        let r = unsafe_change(
            sha,
            &entries(&[("R100", &[".agentxchain/history.jsonl", "old.jsonl"])]),
        )
        .unwrap();
        assert_eq!(
            r.offending_path.as_deref(),
            Some(".agentxchain/history.jsonl")
        );
        assert!(unsafe_change(sha, &entries(&[("A", &[".agentxchain"])])).is_some());
        let r =
            unsafe_change(sha, &entries(&[("D", &[".planning/acceptance-matrix.md"])])).unwrap();
        assert_eq!(r.error_class, "critical_artifact_deleted");
        let r =
            unsafe_change(sha, &entries(&[("T", &[".planning/acceptance-matrix.md"])])).unwrap();
        assert_eq!(r.error_class, "critical_artifact_deleted");
        let r = unsafe_change(sha, &entries(&[("M", &["agentxchain.json"])])).unwrap();
        assert_eq!(r.error_class, "governance_config_modified");
        assert_eq!(
            unsafe_change(sha, &entries(&[("M", &["sub/agentxchain.json"])])),
            None
        );
    }

    #[test]
    fn a_baseline_is_a_git_prefixed_or_bare_name() {
        assert_eq!(git_ref(&json!("git:abc")), Some("abc".into()));
        assert_eq!(git_ref(&json!(" abc ")), Some("abc".into()));
        assert_eq!(git_ref(&json!("git: ")), None);
        assert_eq!(git_ref(&json!(null)), None);
        assert_eq!(git_ref(&json!(7)), None);
    }
}
