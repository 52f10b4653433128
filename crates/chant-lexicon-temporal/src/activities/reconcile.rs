//! `reconcilePr` (ReconcileOp's Reconcile step): the drift between source and the environment,
//! as a summary (`report`), a GitHub issue (`issue`), or a pull request of regenerated source
//! (`pull-request`).
//!
//! The entries come from the step's `entries`, else from the run's digest diff against the
//! environment's last snapshot (added → `create`, changed → `update`, removed → `delete`).
//! A pull request regenerates source from the live environment (`chant import --from`),
//! which needs a lexicon that observes deployed state; until one does, that mode is refused
//! with the modes that work, never skipped.

use chant_core::lexicon::{Activity, ActivityCall, ActivityError};
use serde_json::{Value as Json, json};

use super::call::{arg, choice, gh_issue, required};

const MODES: [&str; 3] = ["pull-request", "issue", "report"];

/// One change-set entry: `{name, action, type?}`.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Entry {
    name: String,
    action: String,
    kind: Option<String>,
}

impl Entry {
    fn to_json(&self) -> Json {
        let mut e = json!({"name": self.name, "action": self.action});
        if let Some(t) = &self.kind {
            e["type"] = json!(t);
        }
        e
    }
}

/// The markdown body of the issue or pull request (the reference's text).
fn summary(env: &str, entries: &[Entry]) -> String {
    let mut lines = vec![
        format!("Reconcile from live environment `{env}`."),
        String::new(),
        "This PR regenerates chant TypeScript from live state to close the gap between the cloud and source. It was triggered by the following change-set entries:".to_owned(),
        String::new(),
        "| Entry | Action | Type |".to_owned(),
        "|---|---|---|".to_owned(),
    ];
    for e in entries {
        // A `|` or a line break in a name would end the table cell.
        let cell = |s: &str| s.replace('|', "\\|").replace(['\n', '\r'], " ");
        lines.push(format!(
            "| {} | {} | {} |",
            cell(&e.name),
            cell(&e.action),
            cell(e.kind.as_deref().unwrap_or(""))
        ));
    }
    if entries.is_empty() {
        lines.push("| _(none)_ | | |".to_owned());
    }
    lines.push(String::new());
    lines.push(
        "Review the diff before merging — live import may surface values that need redaction."
            .to_owned(),
    );
    lines.join("\n")
}

fn given_entries(v: &Json) -> Result<Vec<Entry>, ActivityError> {
    let bad = |m: String| ActivityError::new("InvalidArgs", m);
    let items = v
        .as_array()
        .ok_or_else(|| bad(format!("reconcilePr entries must be a list (got {v})")))?;
    items
        .iter()
        .enumerate()
        .map(|(i, e)| {
            let field = |k: &str| e.get(k).and_then(Json::as_str).map(str::to_owned);
            match (field("name"), field("action")) {
                (Some(name), Some(action)) => Ok(Entry {
                    name,
                    action,
                    kind: field("type"),
                }),
                _ => Err(bad(format!(
                    "reconcilePr entries[{i}] needs name and action strings (got {e})"
                ))),
            }
        })
        .filter(|e| e.as_ref().map_or(true, |e| e.action != "noop"))
        .collect()
}

/// Entries from a `lifecycle-diff` answer: every lexicon's added, changed and removed.
fn diff_entries(diff: &Json) -> Vec<Entry> {
    let mut out = Vec::new();
    for (_, d) in diff.as_object().into_iter().flatten() {
        for (key, action) in [
            ("added", "create"),
            ("changed", "update"),
            ("removed", "delete"),
        ] {
            for name in d[key]
                .as_array()
                .into_iter()
                .flatten()
                .filter_map(Json::as_str)
            {
                out.push(Entry {
                    name: name.to_owned(),
                    action: action.to_owned(),
                    kind: None,
                });
            }
        }
    }
    out
}

/// `reconcilePr {env, entries?, mode?, title?, owned?, output?, branch?}`.
pub struct ReconcilePr;

impl Activity for ReconcilePr {
    fn name(&self) -> &'static str {
        "reconcilePr"
    }

    fn run(&self, call: &ActivityCall<'_>) -> Result<Json, ActivityError> {
        const NAME: &str = "reconcilePr";
        let env = required(call, NAME, "env")?;
        let mode = choice(call, NAME, "mode", &MODES)?;
        if mode == "pull-request" {
            return Err(ActivityError::new(
                "InvalidArgs",
                format!(
                    "reconcilePr mode \"pull-request\" regenerates source from the live {env} environment (chant import --from {env}), which needs a lexicon that observes deployed state; none of this chant's lexicons does yet. Use onDrift \"issue\" (a GitHub issue listing the drift) or \"report\""
                ),
            ));
        }
        let entries = match arg(call, "entries") {
            Some(v) if !v.is_null() => given_entries(v)?,
            _ => diff_entries(
                &call
                    .host
                    .lifecycle_diff(env, call.cancel, call.timeout_ms)
                    .map_err(|e| ActivityError::new("Error", e))?,
            ),
        };
        let body = summary(env, &entries);
        let listed: Vec<Json> = entries.iter().map(Entry::to_json).collect();
        let mut out = json!({"mode": mode, "summary": body, "entries": listed});
        if mode == "issue" {
            if entries.is_empty() {
                out["note"] = json!(format!("no drift in {env}: no issue opened"));
            } else {
                let title = match arg(call, "title").and_then(Json::as_str) {
                    Some(t) => t.to_owned(),
                    None => format!("Reconcile {env}: {} change(s) from live", entries.len()),
                };
                out["issueUrl"] = json!(gh_issue(call, NAME, &title, &body)?);
            }
        }
        Ok(out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_summary_is_the_references_table_and_cells_cannot_break_it() {
        let entries = vec![
            Entry {
                name: "bucket".into(),
                action: "create".into(),
                kind: Some("AWS::S3::Bucket".into()),
            },
            Entry {
                name: "a|b\nc".into(),
                action: "delete".into(),
                kind: None,
            },
        ];
        assert_eq!(
            summary("prod", &entries),
            "Reconcile from live environment `prod`.\n\nThis PR regenerates chant TypeScript from live state to close the gap between the cloud and source. It was triggered by the following change-set entries:\n\n| Entry | Action | Type |\n|---|---|---|\n| bucket | create | AWS::S3::Bucket |\n| a\\|b c | delete |  |\n\nReview the diff before merging — live import may surface values that need redaction."
        );
        assert!(summary("prod", &[]).contains("| _(none)_ | | |"));
    }

    #[test]
    fn entries_come_from_the_diff_in_order_and_noops_are_dropped() {
        let diff = json!({"temporal": {"added": ["a"], "removed": ["c"], "changed": ["b"], "unchanged": ["d"]}});
        let names: Vec<(String, String)> = diff_entries(&diff)
            .into_iter()
            .map(|e| (e.name, e.action))
            .collect();
        assert_eq!(
            names,
            [("a", "create"), ("b", "update"), ("c", "delete")]
                .map(|(a, b)| (a.to_owned(), b.to_owned()))
        );
        let given = given_entries(&json!([{"name": "x", "action": "noop"}, {"name": "y", "action": "update", "type": "T"}])).unwrap();
        assert_eq!(given.len(), 1);
        assert_eq!(given[0].kind.as_deref(), Some("T"));
        assert!(given_entries(&json!([{"name": "x"}])).is_err());
        assert!(given_entries(&json!("x")).is_err());
    }
}
