//! `lifecycleSnapshot` and `lifecycleDiff`: the environment's deployed state as the project's
//! observers read it, and the build's digest against the last snapshot.

use chant_core::lexicon::{Activity, ActivityCall, ActivityError};
use serde_json::{Value as Json, json};

use super::call::{arg, required};

/// `lifecycleSnapshot {env}`.
pub struct LifecycleSnapshot;

impl Activity for LifecycleSnapshot {
    fn name(&self) -> &'static str {
        "lifecycleSnapshot"
    }

    fn run(&self, call: &ActivityCall<'_>) -> Result<Json, ActivityError> {
        let env = required(call, "lifecycleSnapshot", "env")?;
        call.host
            .lifecycle_snapshot(env)
            .map_err(|e| ActivityError::new("Error", e))
    }
}

/// `lifecycleDiff {env, live?}`: `{drifted, output, exitCode, diff}` — `diff` is
/// `lifecycle-diff`'s answer, `drifted` whether any lexicon has a resource added, removed or
/// changed (what `outcomeAttribute: {name: "Drift", from: "drifted"}` reads). With `live`, the
/// observers' reading of the environment is added as `observed`; when no lexicon of the
/// project observes deployed state, `observed` is `false` and `note` says so — the diff is
/// then against the last snapshot only, never a silent claim of a live comparison.
pub struct LifecycleDiff;

const SECTIONS: [(&str, &str); 3] = [
    ("added", "ADDED"),
    ("removed", "REMOVED"),
    ("changed", "CHANGED"),
];

/// The text a person reads in the run's record: a line per lexicon, then a section per
/// non-empty kind of change.
fn render(env: &str, diff: &Json) -> String {
    let mut out = Vec::new();
    for (lex, d) in diff.as_object().into_iter().flatten() {
        let count = |k: &str| d[k].as_array().map_or(0, Vec::len);
        out.push(format!(
            "{lex} ({env}): {} added, {} removed, {} changed, {} unchanged",
            count("added"),
            count("removed"),
            count("changed"),
            count("unchanged")
        ));
        for (key, header) in SECTIONS {
            let names: Vec<&str> = d[key]
                .as_array()
                .into_iter()
                .flatten()
                .filter_map(Json::as_str)
                .collect();
            if !names.is_empty() {
                out.push(format!("{header} ({})", names.len()));
                out.extend(names.iter().map(|n| format!("  {n}")));
            }
        }
    }
    if out.is_empty() {
        out.push(format!("{env}: the build declares no resources"));
    }
    out.join("\n")
}

fn drifted(diff: &Json) -> bool {
    diff.as_object().is_some_and(|m| {
        m.values().any(|d| {
            SECTIONS
                .iter()
                .any(|(k, _)| d[*k].as_array().is_some_and(|a| !a.is_empty()))
        })
    })
}

impl Activity for LifecycleDiff {
    fn name(&self) -> &'static str {
        "lifecycleDiff"
    }

    fn run(&self, call: &ActivityCall<'_>) -> Result<Json, ActivityError> {
        let env = required(call, "lifecycleDiff", "env")?;
        let live = match arg(call, "live") {
            None | Some(Json::Null) => false,
            Some(Json::Bool(b)) => *b,
            Some(v) => {
                return Err(ActivityError::new(
                    "InvalidArgs",
                    format!("lifecycleDiff live must be true or false (got {v})"),
                ));
            }
        };
        let diff = call
            .host
            .lifecycle_diff(env, call.cancel, call.timeout_ms)
            .map_err(|e| ActivityError::new("Error", e))?;
        let mut out = json!({
            "drifted": drifted(&diff),
            "output": render(env, &diff),
            "exitCode": 0,
            "diff": diff,
        });
        if live {
            let seen = call
                .host
                .lifecycle_snapshot(env)
                .map_err(|e| ActivityError::new("Error", e))?;
            match seen
                .get("lexicons")
                .filter(|l| l.as_object().is_some_and(|m| !m.is_empty()))
            {
                Some(observed) => out["observed"] = observed.clone(),
                None => {
                    out["observed"] = json!(false);
                    out["note"] = json!(format!(
                        "no lexicon of this project observes deployed state (describeResources), so {env} was compared with its last snapshot only, not read live"
                    ));
                }
            }
        }
        Ok(out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn drift_is_any_added_removed_or_changed_resource() {
        let none =
            json!({"temporal": {"added": [], "removed": [], "changed": [], "unchanged": ["a"]}});
        assert!(!drifted(&none));
        assert!(!drifted(&json!({})));
        for key in ["added", "removed", "changed"] {
            let mut d = none.clone();
            d["temporal"][key] = json!(["b"]);
            assert!(drifted(&d), "{key}");
            assert!(render("dev", &d).contains("\n  b"), "{key}");
        }
        assert_eq!(
            render("dev", &none),
            "temporal (dev): 0 added, 0 removed, 0 changed, 1 unchanged"
        );
    }
}
