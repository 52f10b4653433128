//! The gitlab lint rules (WGL001–WGL004), read from the source before anything is built.
//! Their severities are the lexicon's own: a config entry can turn one off or on, not change
//! how severe it is (as in the reference, whose captured output keeps WGL003 at `info` under
//! `"error"`).

use chant_lint::facts::{Facts, NewSite};
use chant_lint::{Finding, Rule, RuleContext, Severity};

const LEXICON_MODULE: &str = "@intentius/chant-lexicon-gitlab";

/// WGL001–WGL004, in run order; each keeps its own severity.
pub fn rules() -> Vec<Rule> {
    [
        Rule::new(
            "WGL001",
            "deprecated-only-except",
            Severity::Warning,
            "style",
            "Flags the deprecated only/except keywords in favour of rules",
            wgl001,
        ),
        Rule::new(
            "WGL002",
            "missing-script",
            Severity::Error,
            "correctness",
            "A job must define script, trigger or run",
            wgl002,
        ),
        Rule::new(
            "WGL003",
            "missing-stage",
            Severity::Info,
            "style",
            "Jobs should declare a stage (the default is test)",
            wgl003,
        ),
        Rule::new(
            "WGL004",
            "artifact-no-expiry",
            Severity::Warning,
            "performance",
            "Artifacts should set an expiry",
            wgl004,
        ),
    ]
    .into_iter()
    .map(Rule::fixed_severity)
    .collect()
}

/// Whether `site`'s class comes from a chant lexicon other than gitlab (a github `Job`, say).
/// Without an import to tell, it counts as gitlab's.
fn from_other_lexicon(facts: &Facts, site: &NewSite) -> bool {
    let source = match (&site.namespace, &site.class) {
        (Some(ns), _) => facts
            .imports
            .iter()
            .find(|i| i.namespace.as_deref() == Some(ns.as_str())),
        (None, Some(class)) => facts.imports.iter().find(|i| i.named.contains(class)),
        _ => None,
    };
    source.is_some_and(|i| {
        i.source.starts_with("@intentius/chant-lexicon-") && i.source != LEXICON_MODULE
    })
}

/// Gitlab constructor sites of `class` whose first argument is an object literal, with the keys.
fn sites<'f>(
    facts: &'f Facts,
    class: &'f str,
) -> impl Iterator<Item = (&'f NewSite, Vec<&'f str>)> {
    facts.news.iter().filter_map(move |n| {
        if n.class.as_deref() != Some(class) || from_other_lexicon(facts, n) {
            return None;
        }
        let keys = n
            .props
            .as_ref()?
            .iter()
            .filter_map(|p| p.key.as_deref())
            .collect();
        Some((n, keys))
    })
}

fn wgl001(ctx: &RuleContext<'_, '_>) -> Vec<Finding> {
    ctx.facts
        .props_in_new
        .iter()
        .filter(|(k, _)| k == "only" || k == "except")
        .map(|(k, at)| {
            Finding::at(
                *at,
                format!(
                    "\"{k}\" is deprecated. Use \"rules\" for conditional job execution instead."
                ),
            )
        })
        .collect()
}

fn wgl002(ctx: &RuleContext<'_, '_>) -> Vec<Finding> {
    sites(ctx.facts, "Job")
        .filter(|(_, keys)| {
            !keys
                .iter()
                .any(|k| matches!(*k, "script" | "trigger" | "run"))
        })
        .map(|(n, _)| {
            Finding::at(
                n.start,
                "Job must have \"script\", \"trigger\", or \"run\" defined.",
            )
        })
        .collect()
}

fn wgl003(ctx: &RuleContext<'_, '_>) -> Vec<Finding> {
    sites(ctx.facts, "Job")
        .filter(|(_, keys)| !keys.contains(&"stage"))
        .map(|(n, _)| {
            Finding::at(
                n.start,
                "Job does not declare a \"stage\". It will default to \"test\".",
            )
        })
        .collect()
}

fn wgl004(ctx: &RuleContext<'_, '_>) -> Vec<Finding> {
    sites(ctx.facts, "Artifacts")
        .filter(|(_, keys)| !keys.iter().any(|k| matches!(*k, "expireIn" | "expire_in")))
        .map(|(n, _)| {
            Finding::at(n.start, "Artifacts without \"expireIn\" will be kept indefinitely. Set an expiry to save storage.")
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use chant_lint::{LintConfig, lint_text};

    fn lint(text: &str) -> Vec<(String, usize, usize, Severity)> {
        let config =
            LintConfig::from_json(&serde_json::json!({"rules": {"WGL003": "error"}})).unwrap();
        lint_text("f.ts", "f.ts", text, &rules(), &config)
            .into_iter()
            .map(|d| (d.rule_id, d.line, d.column, d.severity))
            .collect()
    }

    #[test]
    fn job_and_artifact_rules() {
        let src = "import { Job, Artifacts } from \"@intentius/chant-lexicon-gitlab\";\n\
export const a = new Job({ stage: \"x\", only: [\"main\"], artifacts: new Artifacts({ paths: [\"o/\"] }) });\n\
export const b = new Job({ script: [\"make\"], rules: [{ except: [\"tags\"] }] });\n\
export const c = new Job({ stage: \"x\", trigger: \"y\", artifacts: new Artifacts({ paths: [\"o/\"], expire_in: \"1 day\" }) });\n";
        assert_eq!(
            lint(src),
            [
                ("WGL001".into(), 2, 40, Severity::Warning),
                ("WGL001".into(), 3, 56, Severity::Warning),
                ("WGL002".into(), 2, 18, Severity::Error),
                // The config's "error" does not change a lexicon rule's severity.
                ("WGL003".into(), 3, 18, Severity::Info),
                ("WGL004".into(), 2, 67, Severity::Warning),
            ]
        );
    }

    #[test]
    fn another_lexicons_job_is_not_gitlabs() {
        let src = "import { Job } from \"@intentius/chant-lexicon-github\";\nimport * as gl from \"@intentius/chant-lexicon-gitlab\";\nexport const a = new Job({ runsOn: \"ubuntu\" });\nexport const b = new gl.Job({ script: [\"x\"] });\n";
        assert_eq!(lint(src), [("WGL003".into(), 4, 18, Severity::Info)]);
    }
}
