//! `workflowSupplyChainAudit`: each action a GitHub workflow pins, asked of GitHub.

use chant_core::lexicon::{Activity, ActivityCall, ActivityError};
use serde_json::{Value as Json, json};

use super::{
    Asked, Outcome, Report, Upstream, api_and_token, audit_mode, conclude, encode, sources,
};

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
        && !s.bytes().all(|b| b == b'.')
        && s.bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"-._".contains(&b))
}

/// Each `uses:` line's value and the first word of its `# comment`, read once per file.
fn comments(text: &str) -> std::collections::HashMap<String, String> {
    let mut out = std::collections::HashMap::new();
    for line in text.lines() {
        let Some((_, rest)) = line.split_once("uses:") else {
            continue;
        };
        let Some((value, comment)) = rest.split_once('#') else {
            continue;
        };
        if let Some(word) = comment.split_whitespace().next() {
            out.entry(value.trim().trim_matches(['"', '\'']).to_owned())
                .or_insert_with(|| word.to_owned());
        }
    }
    out
}

/// `uses` values of a workflow's steps and reusable-workflow jobs, read as YAML (so a `uses:`
/// inside a `run:` script is not one), with the comment from the line that holds each; and
/// the ones this audit does not ask (`docker://`, anything not `owner/repo@ref`), listed.
/// Local (`./`) actions are part of the repository and not references at all.
fn action_refs(text: &str) -> Result<(Vec<ActionRef>, Vec<String>), String> {
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
    let notes = comments(text);
    let (mut out, mut skipped) = (Vec::new(), Vec::new());
    for u in uses {
        if u.starts_with("./") {
            continue;
        }
        let parsed = u.rsplit_once('@').and_then(|(path, reference)| {
            let mut parts = path.split('/');
            let (owner, repo) = (parts.next()?, parts.next()?);
            (valid_slug_part(owner) && valid_slug_part(repo) && !reference.is_empty())
                .then(|| (format!("{owner}/{repo}"), reference))
        });
        match parsed {
            Some((slug, reference)) if !u.starts_with("docker://") => out.push(ActionRef {
                slug,
                reference: reference.to_owned(),
                comment: notes.get(u).cloned(),
            }),
            _ => skipped.push(u.to_owned()),
        }
    }
    Ok((out, skipped))
}

fn is_sha(r: &str) -> bool {
    r.len() == 40
        && r.bytes()
            .all(|b| b.is_ascii_hexdigit() && !b.is_ascii_uppercase())
}

/// Everything asked of GitHub about one pinned action, into `o`.
fn check(gh: &Upstream<'_, '_>, r: &ActionRef, o: &mut Outcome) -> Result<(), ActivityError> {
    let at = json!({"slug": r.slug, "ref": r.reference});
    let (owner, name) = r.slug.split_once('/').unwrap_or((&r.slug, ""));
    let repo = format!("/repos/{}/{}", encode(owner), encode(name));
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
            o.unchecked(&at, why);
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
            o.unchecked(&at, why);
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
            Asked::Missing => o.unchecked(
                &at,
                format!(
                    "the tags of {} were not found, so the pin's tag could not be checked",
                    r.slug
                ),
            ),
            Asked::Failed(why) => o.unchecked(&at, why),
        }
    } else {
        let tag = gh.ask(&format!("{repo}/git/ref/tags/{}", encode(&r.reference)))?;
        let branch = gh.ask(&format!("{repo}/git/ref/heads/{}", encode(&r.reference)))?;
        for answer in [&tag, &branch] {
            if let Asked::Failed(why) = answer {
                o.unchecked(&at, why.clone());
            }
        }
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
        Asked::Failed(why) => o.unchecked(&at, why),
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
        let (api, token) = api_and_token(
            call,
            "GITHUB_API_URL",
            "https://api.github.com",
            "GITHUB_TOKEN",
        );
        let mut headers = vec![
            ("Accept", "application/vnd.github+json".to_owned()),
            ("X-GitHub-Api-Version", "2022-11-28".to_owned()),
        ];
        if let Some(token) = token {
            headers.push(("Authorization", format!("Bearer {token}")));
        }
        let gh = Upstream {
            call,
            activity: NAME,
            base: api.trim_end_matches('/').to_owned(),
            headers,
            deadline: std::time::Instant::now() + std::time::Duration::from_millis(call.timeout_ms),
        };
        let mut o = Outcome::default();
        let mut seen = std::collections::HashSet::new();
        for (file, text) in &files {
            let (refs, skipped) = action_refs(text).map_err(|e| {
                ActivityError::new(
                    "InvalidArgs",
                    format!("{file} is not YAML a workflow can be: {e}"),
                )
            })?;
            for u in skipped {
                o.skip(&json!({"slug": u, "ref": ""}), "not an owner/repo@ref action on GitHub (docker:// images and other forms are not asked)".to_owned());
            }
            for r in refs {
                if seen.insert(format!("{}@{}", r.slug, r.reference)) {
                    o.asked += 1;
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
        let (refs, skipped) = action_refs(wf).unwrap();
        assert_eq!(skipped, ["docker://alpine"]);
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
