//! `workflowSupplyChainAudit`: each action a GitHub workflow pins, asked of GitHub.

use chant_core::lexicon::{Activity, ActivityCall, ActivityError};
use serde_json::{Value as Json, json};

use super::{Asked, Outcome, Report, Upstream, audit_mode, conclude, encode, sources};
use crate::activities::call::env_var;

const NAME: &str = "workflowSupplyChainAudit";

/// An external action reference: `owner/repo[/path]@ref`, with the `# vX.Y.Z` comment its
/// line carries.
#[derive(Debug, PartialEq, Eq)]
struct ActionRef {
    slug: String,
    reference: String,
    comment: Option<String>,
}

fn valid_slug_part(s: &str) -> bool {
    !s.is_empty()
        && s.bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"-._".contains(&b))
}

/// `uses` values of a workflow's steps and reusable-workflow jobs, read as YAML (so a `uses:`
/// inside a `run:` script is not one), with the comment from the line that holds each.
fn action_refs(text: &str) -> Result<Vec<ActionRef>, String> {
    let doc = chant_yaml::read::parse(text)?;
    let mut uses: Vec<&str> = Vec::new();
    for job in doc["jobs"]
        .as_object()
        .into_iter()
        .flatten()
        .map(|(_, j)| j)
    {
        if let Some(u) = job["uses"].as_str() {
            uses.push(u);
        }
        for step in job["steps"].as_array().into_iter().flatten() {
            if let Some(u) = step["uses"].as_str() {
                uses.push(u);
            }
        }
    }
    let mut out = Vec::new();
    for u in uses {
        if u.starts_with("./") || u.starts_with("docker://") {
            continue;
        }
        let Some((path, reference)) = u.rsplit_once('@') else {
            continue;
        };
        let mut parts = path.split('/');
        let (Some(owner), Some(repo)) = (parts.next(), parts.next()) else {
            continue;
        };
        if !valid_slug_part(owner) || !valid_slug_part(repo) || reference.is_empty() {
            continue;
        }
        let comment = text
            .lines()
            .filter_map(|l| l.split_once("uses:").map(|(_, r)| r.trim()))
            .find_map(|r| {
                let (value, rest) = r.split_once('#')?;
                (value.trim().trim_matches(['"', '\'']) == u)
                    .then(|| rest.split_whitespace().next().map(str::to_owned))
                    .flatten()
            });
        out.push(ActionRef {
            slug: format!("{owner}/{repo}"),
            reference: reference.to_owned(),
            comment,
        });
    }
    Ok(out)
}

fn is_sha(r: &str) -> bool {
    r.len() == 40
        && r.bytes()
            .all(|b| b.is_ascii_hexdigit() && !b.is_ascii_uppercase())
}

/// Everything asked of GitHub about one pinned action, into `o`.
fn check(gh: &Upstream<'_, '_>, r: &ActionRef, o: &mut Outcome) -> Result<(), ActivityError> {
    let at = json!({"slug": r.slug, "ref": r.reference});
    let repo = format!("/repos/{}", r.slug);
    let archived = match gh.ask(&repo)? {
        Asked::Found(v) => v["archived"] == true,
        Asked::Missing => {
            o.find(
                &at,
                "impostor",
                format!(
                    "{} does not exist upstream — possible impostor or deleted repository",
                    r.slug
                ),
            );
            return Ok(());
        }
        Asked::Failed(why) => {
            o.skip(&at, why);
            return Ok(());
        }
    };
    match gh.ask(&format!("{repo}/commits/{}", encode(&r.reference)))? {
        Asked::Found(_) => {}
        Asked::Missing => {
            o.find(
                &at,
                "impostor",
                format!(
                    "ref does not exist in {} — possible impostor or deleted ref",
                    r.slug
                ),
            );
            return Ok(());
        }
        Asked::Failed(why) => {
            o.skip(&at, why);
            return Ok(());
        }
    }
    let mut tags: Vec<String> = Vec::new();
    if is_sha(&r.reference) {
        match gh.ask(&format!("{repo}/tags?per_page=100"))? {
            Asked::Found(list) => {
                tags = list
                    .as_array()
                    .into_iter()
                    .flatten()
                    .filter(|t| t["commit"]["sha"] == r.reference.as_str())
                    .filter_map(|t| t["name"].as_str().map(str::to_owned))
                    .collect();
                if tags.is_empty() {
                    o.find(
                        &at,
                        "stale-pin",
                        "pinned SHA is no longer on any tag/release upstream".to_owned(),
                    );
                }
            }
            Asked::Missing => {}
            Asked::Failed(why) => o.skip(&at, why),
        }
    } else {
        let tag = gh.ask(&format!("{repo}/git/ref/tags/{}", encode(&r.reference)))?;
        let branch = gh.ask(&format!("{repo}/git/ref/heads/{}", encode(&r.reference)))?;
        if matches!((&tag, &branch), (Asked::Found(_), Asked::Found(_))) {
            o.find(
                &at,
                "ambiguous-ref",
                "ref resolves as both a tag and a branch upstream (symbolic-ref confusion)"
                    .to_owned(),
            );
        }
    }
    if let Some(c) = &r.comment
        && !tags.is_empty()
        && !tags.contains(c)
    {
        o.find(
            &at,
            "pin-comment-mismatch",
            format!(
                "pin comment \"{c}\" does not match the SHA's actual tag(s): {}",
                tags.join(", ")
            ),
        );
    }
    if archived {
        o.find(
            &at,
            "archived",
            format!("{} has been archived upstream since pinning", r.slug),
        );
    }
    match gh.ask(&format!(
        "/advisories?ecosystem=actions&affects={}",
        encode(&r.slug)
    ))? {
        Asked::Found(list) => {
            for adv in list.as_array().into_iter().flatten() {
                let id = adv["ghsa_id"].as_str().unwrap_or("an advisory");
                let ranges: Vec<&str> = adv["vulnerabilities"]
                    .as_array()
                    .into_iter()
                    .flatten()
                    .filter(|v| {
                        v["package"]["name"]
                            .as_str()
                            .is_some_and(|n| n.eq_ignore_ascii_case(&r.slug))
                    })
                    .filter_map(|v| v["vulnerable_version_range"].as_str())
                    .collect();
                let range = if ranges.is_empty() {
                    String::new()
                } else {
                    format!(" (vulnerable: {})", ranges.join("; "))
                };
                o.find(
                    &at,
                    "advisory",
                    format!("disclosed advisory {id} covers {}{range}", r.slug),
                );
            }
        }
        Asked::Missing => {}
        Asked::Failed(why) => o.skip(&at, why),
    }
    Ok(())
}

const REPORT: Report = Report {
    heading: "Workflow supply-chain audit",
    column: "Action",
    label: |v| v["slug"].as_str().unwrap_or("").to_owned(),
    named: |v| {
        format!(
            "{}@{}",
            v["slug"].as_str().unwrap_or(""),
            v["ref"].as_str().unwrap_or("")
        )
    },
    reference: "ref",
};

/// `workflowSupplyChainAudit {yaml? | yamls? | workflowsDir?, mode?}`: each pinned action
/// (`owner/repo@ref`) checked upstream — `impostor` (the repository or ref does not exist),
/// `stale-pin` (a SHA no tag points at), `ambiguous-ref` (a name that is both a tag and a
/// branch), `pin-comment-mismatch`, `archived`, `advisory` (GitHub's advisory database).
pub struct WorkflowAudit;

impl Activity for WorkflowAudit {
    fn name(&self) -> &'static str {
        NAME
    }

    fn run(&self, call: &ActivityCall<'_>) -> Result<Json, ActivityError> {
        let mode = audit_mode(call, NAME, "pull-request")?;
        let files = sources(call, NAME, "workflowsDir", ".github/workflows", true)?;
        let api =
            env_var(call, "GITHUB_API_URL").unwrap_or_else(|| "https://api.github.com".to_owned());
        let mut headers = vec![
            ("Accept", "application/vnd.github+json".to_owned()),
            ("X-GitHub-Api-Version", "2022-11-28".to_owned()),
        ];
        if let Some(token) = env_var(call, "GITHUB_TOKEN") {
            headers.push(("Authorization", format!("Bearer {token}")));
        }
        let gh = Upstream {
            call,
            activity: NAME,
            base: api.trim_end_matches('/').to_owned(),
            headers,
        };
        let mut o = Outcome::default();
        let mut seen = std::collections::HashSet::new();
        for (file, text) in &files {
            let refs = action_refs(text).map_err(|e| {
                ActivityError::new(
                    "InvalidArgs",
                    format!("{file} is not YAML a workflow can be: {e}"),
                )
            })?;
            for r in refs {
                if seen.insert(format!("{}@{}", r.slug, r.reference)) {
                    check(&gh, &r, &mut o)?;
                }
            }
        }
        conclude(call, NAME, mode, &REPORT, o)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn workflow_refs_are_the_uses_of_steps_and_jobs_with_their_comments() {
        let wf = "on: push\njobs:\n  a:\n    runs-on: ubuntu-latest\n    steps:\n      - uses: actions/checkout@8f4b7f84864484a7bf31766abe9204da3cbe65b3 # v4.1.1\n      - uses: ./local\n      - uses: docker://alpine\n      - run: \"echo uses: evil/x@y\"\n      - uses: \"actions/setup-node@v4\"\n  b:\n    uses: org/repo/.github/workflows/w.yml@main\n";
        let refs = action_refs(wf).unwrap();
        assert_eq!(
            refs,
            vec![
                ActionRef {
                    slug: "actions/checkout".into(),
                    reference: "8f4b7f84864484a7bf31766abe9204da3cbe65b3".into(),
                    comment: Some("v4.1.1".into())
                },
                ActionRef {
                    slug: "actions/setup-node".into(),
                    reference: "v4".into(),
                    comment: None
                },
                ActionRef {
                    slug: "org/repo".into(),
                    reference: "main".into(),
                    comment: None
                },
            ]
        );
        assert!(is_sha("8f4b7f84864484a7bf31766abe9204da3cbe65b3"));
        assert!(!is_sha("v4"));
    }
}
