//! `workflowSupplyChainAudit` and `pipelineSupplyChainAudit` (WorkflowAuditOp,
//! PipelineAuditOp): the references a project's CI pins, resolved against their live
//! upstreams — what a deterministic build cannot know.
//!
//! GitHub is asked at `GITHUB_API_URL` (default `https://api.github.com`, `GITHUB_TOKEN` when
//! set), GitLab at `CI_API_V4_URL` (default `https://gitlab.com/api/v4`, `GITLAB_TOKEN`),
//! each from the step's `env` first, then chant's own. Unlike the reference, a reference
//! whose upstream could not be asked is listed under `unchecked` with why, never counted as
//! clean; `issue` mode opens a GitHub issue when there are findings.

use std::path::Path;

use chant_core::lexicon::{Activity, ActivityCall, ActivityError};
use serde_json::{Value as Json, json};

use super::{arg, choice, env_var, gh_issue, http, optional, text};

/// The most of one workflow or pipeline file read.
const MAX_FILE: u64 = 1 << 20;

/// `yaml` / `yamls` from the step, else the files under `default` (a directory of `*.yml` /
/// `*.yaml`, or one file) inside the repository.
fn sources(
    call: &ActivityCall<'_>,
    activity: &str,
    key: &str,
    default: &str,
    is_dir: bool,
) -> Result<Vec<(String, String)>, ActivityError> {
    let bad = |m: String| ActivityError::new("InvalidArgs", m);
    if let Some(y) = text(call, "yaml") {
        return Ok(vec![("yaml".to_owned(), y.to_owned())]);
    }
    if let Some(list) = arg(call, "yamls") {
        let items = list
            .as_array()
            .ok_or_else(|| bad(format!("{activity} yamls must be a list of strings")))?;
        return items
            .iter()
            .enumerate()
            .map(|(i, y)| {
                y.as_str()
                    .map(|s| (format!("yamls[{i}]"), s.to_owned()))
                    .ok_or_else(|| bad(format!("{activity} yamls[{i}] is not a string")))
            })
            .collect();
    }
    let path = optional(call, activity, key)?.unwrap_or(default);
    let read = |dir: &Path, name: &str, shown: String| {
        fsread::read_inside(dir, Path::new(name), MAX_FILE)
            .map_err(|e| bad(format!("{activity} cannot read {shown}: {e}")))
            .and_then(|b| {
                String::from_utf8(b).map_err(|_| bad(format!("{shown} is not UTF-8 text")))
            })
    };
    if is_dir {
        let dir = call.host.project_dir(Path::new(path))?;
        let mut names: Vec<String> = std::fs::read_dir(&dir)
            .map_err(|e| bad(format!("{activity} cannot list {path}: {e}")))?
            .filter_map(Result::ok)
            .filter_map(|e| e.file_name().into_string().ok())
            .filter(|n| n.ends_with(".yml") || n.ends_with(".yaml"))
            .collect();
        names.sort();
        names
            .into_iter()
            .map(|n| {
                let shown = format!("{path}/{n}");
                read(&dir, &n, shown.clone()).map(|t| (shown, t))
            })
            .collect()
    } else {
        let p = Path::new(path);
        let parent = p
            .parent()
            .filter(|d| !d.as_os_str().is_empty())
            .unwrap_or(Path::new("."));
        let name = p
            .file_name()
            .and_then(|n| n.to_str())
            .ok_or_else(|| bad(format!("{activity} {key} \"{path}\" names no file")))?;
        let dir = call.host.project_dir(parent)?;
        Ok(vec![(path.to_owned(), read(&dir, name, path.to_owned())?)])
    }
}

/// `s` as one URL path segment: everything but unreserved characters percent-encoded.
fn encode(s: &str) -> String {
    let mut out = String::new();
    for b in s.bytes() {
        if b.is_ascii_alphanumeric() || b"-._~".contains(&b) {
            out.push(b as char);
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
}

/// What asking one URL gave: an answer, or why there was none.
enum Asked {
    Found(Json),
    Missing,
    Failed(String),
}

fn ask(
    call: &ActivityCall<'_>,
    activity: &str,
    url: &str,
    headers: &[(&str, String)],
) -> Result<Asked, ActivityError> {
    match http::get(call, activity, url, headers) {
        Ok((200..=299, body)) => Ok(serde_json::from_str(&body)
            .map(Asked::Found)
            .unwrap_or_else(|_| Asked::Failed(format!("{url} answered with something not JSON")))),
        Ok((404 | 422, _)) => Ok(Asked::Missing),
        Ok((status, _)) => Ok(Asked::Failed(format!("{url} answered {status}"))),
        // A missing curl, a bad URL or a cancel stops the step; a network error is one
        // reference left unchecked.
        Err(e) if matches!(e.name.as_str(), "ToolMissing" | "InvalidArgs" | "Cancelled") => Err(e),
        Err(e) => Ok(Asked::Failed(e.message)),
    }
}

fn finding(kind: &str, fields: Json, detail: String) -> Json {
    let mut f = fields;
    f["kind"] = json!(kind);
    f["detail"] = json!(detail);
    f
}

/// The result both audits return, and `issue` mode's issue.
fn conclude(
    call: &ActivityCall<'_>,
    activity: &str,
    mode: &str,
    title: &str,
    findings: Vec<Json>,
    unchecked: Vec<Json>,
    summary: String,
) -> Result<Json, ActivityError> {
    let mut out =
        json!({"mode": mode, "findings": findings, "summary": summary, "unchecked": unchecked});
    if mode == "issue" && !findings.is_empty() {
        out["issueUrl"] = json!(gh_issue(call, activity, title, &summary)?);
    }
    Ok(out)
}

fn unchecked_lines(unchecked: &[Json], label: &dyn Fn(&Json) -> String) -> String {
    if unchecked.is_empty() {
        return String::new();
    }
    let mut out = format!(
        "\n{} reference(s) could not be checked:\n\n",
        unchecked.len()
    );
    for u in unchecked {
        out.push_str(&format!(
            "- {}: {}\n",
            label(u),
            u["reason"].as_str().unwrap_or("")
        ));
    }
    out
}

/// A mode other than `report` and `issue` is not something an audit can write.
fn audit_mode<'a>(
    call: &'a ActivityCall<'_>,
    activity: &str,
    pr_name: &'static str,
) -> Result<&'a str, ActivityError> {
    let mode = choice(call, activity, "mode", &["report", "issue", pr_name])?;
    if mode == pr_name {
        return Err(ActivityError::new(
            "InvalidArgs",
            format!(
                "{activity} mode \"{pr_name}\" would re-pin references, which an audit does not decide; use onFinding \"issue\" (an issue listing the findings) or \"report\""
            ),
        ));
    }
    Ok(mode)
}

// ---- GitHub workflows ----

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

/// `workflowSupplyChainAudit {yaml? | yamls? | workflowsDir?, mode?}`: each pinned action
/// (`owner/repo@ref`) checked upstream — `impostor` (the repository or ref does not exist),
/// `stale-pin` (a SHA no tag points at), `ambiguous-ref` (a name that is both a tag and a
/// branch), `pin-comment-mismatch`, `archived`, `advisory` (GitHub's advisory database).
pub struct WorkflowAudit;

impl Activity for WorkflowAudit {
    fn name(&self) -> &'static str {
        "workflowSupplyChainAudit"
    }

    fn run(&self, call: &ActivityCall<'_>) -> Result<Json, ActivityError> {
        const NAME: &str = "workflowSupplyChainAudit";
        let mode = audit_mode(call, NAME, "pull-request")?;
        let files = sources(call, NAME, "workflowsDir", ".github/workflows", true)?;
        let api =
            env_var(call, "GITHUB_API_URL").unwrap_or_else(|| "https://api.github.com".to_owned());
        let api = api.trim_end_matches('/');
        let mut headers = vec![
            ("Accept", "application/vnd.github+json".to_owned()),
            ("X-GitHub-Api-Version", "2022-11-28".to_owned()),
        ];
        if let Some(token) = env_var(call, "GITHUB_TOKEN") {
            headers.push(("Authorization", format!("Bearer {token}")));
        }
        let (mut findings, mut unchecked) = (Vec::new(), Vec::new());
        let mut seen = std::collections::HashSet::new();
        for (file, text) in &files {
            let refs = action_refs(text).map_err(|e| {
                ActivityError::new(
                    "InvalidArgs",
                    format!("{file} is not YAML a workflow can be: {e}"),
                )
            })?;
            for r in refs {
                if !seen.insert(format!("{}@{}", r.slug, r.reference)) {
                    continue;
                }
                let at = json!({"slug": r.slug, "ref": r.reference});
                let skip = |reason: String| {
                    let mut u = at.clone();
                    u["reason"] = json!(reason);
                    u
                };
                let base = format!("{api}/repos/{}", r.slug);
                let repo = match ask(call, NAME, &base, &headers)? {
                    Asked::Found(v) => v,
                    Asked::Missing => {
                        findings.push(finding("impostor", at, format!("{} does not exist upstream — possible impostor or deleted repository", r.slug)));
                        continue;
                    }
                    Asked::Failed(why) => {
                        unchecked.push(skip(why));
                        continue;
                    }
                };
                let commit = format!("{base}/commits/{}", encode(&r.reference));
                match ask(call, NAME, &commit, &headers)? {
                    Asked::Found(_) => {}
                    Asked::Missing => {
                        findings.push(finding(
                            "impostor",
                            at,
                            format!(
                                "ref does not exist in {} — possible impostor or deleted ref",
                                r.slug
                            ),
                        ));
                        continue;
                    }
                    Asked::Failed(why) => {
                        unchecked.push(skip(why));
                        continue;
                    }
                }
                let mut tags: Vec<String> = Vec::new();
                if is_sha(&r.reference) {
                    match ask(call, NAME, &format!("{base}/tags?per_page=100"), &headers)? {
                        Asked::Found(list) => {
                            tags = list
                                .as_array()
                                .into_iter()
                                .flatten()
                                .filter(|t| t["commit"]["sha"] == r.reference.as_str())
                                .filter_map(|t| t["name"].as_str().map(str::to_owned))
                                .collect();
                            if tags.is_empty() {
                                findings.push(finding(
                                    "stale-pin",
                                    at.clone(),
                                    "pinned SHA is no longer on any tag/release upstream"
                                        .to_owned(),
                                ));
                            }
                        }
                        Asked::Missing => {}
                        Asked::Failed(why) => unchecked.push(skip(why)),
                    }
                } else {
                    let tag = ask(
                        call,
                        NAME,
                        &format!("{base}/git/ref/tags/{}", encode(&r.reference)),
                        &headers,
                    )?;
                    let branch = ask(
                        call,
                        NAME,
                        &format!("{base}/git/ref/heads/{}", encode(&r.reference)),
                        &headers,
                    )?;
                    if matches!((&tag, &branch), (Asked::Found(_), Asked::Found(_))) {
                        findings.push(finding("ambiguous-ref", at.clone(), "ref resolves as both a tag and a branch upstream (symbolic-ref confusion)".to_owned()));
                    }
                }
                if let Some(c) = &r.comment
                    && !tags.is_empty()
                    && !tags.contains(c)
                {
                    findings.push(finding(
                        "pin-comment-mismatch",
                        at.clone(),
                        format!(
                            "pin comment \"{c}\" does not match the SHA's actual tag(s): {}",
                            tags.join(", ")
                        ),
                    ));
                }
                if repo["archived"] == true {
                    findings.push(finding(
                        "archived",
                        at.clone(),
                        format!("{} has been archived upstream since pinning", r.slug),
                    ));
                }
                let advisories = format!(
                    "{api}/advisories?ecosystem=actions&affects={}",
                    encode(&r.slug)
                );
                match ask(call, NAME, &advisories, &headers)? {
                    Asked::Found(list) => {
                        for adv in list.as_array().into_iter().flatten() {
                            let id = adv["ghsa_id"].as_str().unwrap_or("an advisory");
                            let range: Vec<&str> = adv["vulnerabilities"]
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
                            let range = if range.is_empty() {
                                String::new()
                            } else {
                                format!(" (vulnerable: {})", range.join("; "))
                            };
                            findings.push(finding(
                                "advisory",
                                at.clone(),
                                format!("disclosed advisory {id} covers {}{range}", r.slug),
                            ));
                        }
                    }
                    Asked::Missing => {}
                    Asked::Failed(why) => unchecked.push(skip(why)),
                }
            }
        }
        let mut summary = if findings.is_empty() {
            "## Workflow supply-chain audit\n\nNo live drift detected against upstream references.\n".to_owned()
        } else {
            let mut s = format!(
                "## Workflow supply-chain audit\n\n{} finding(s) against live upstream truth:\n\n| Action | Ref | Finding | Detail |\n|---|---|---|---|\n",
                findings.len()
            );
            for f in &findings {
                s.push_str(&format!(
                    "| {} | {} | {} | {} |\n",
                    f["slug"].as_str().unwrap_or(""),
                    f["ref"].as_str().unwrap_or(""),
                    f["kind"].as_str().unwrap_or(""),
                    f["detail"].as_str().unwrap_or("")
                ));
            }
            s
        };
        summary.push_str(&unchecked_lines(&unchecked, &|u| {
            format!(
                "{}@{}",
                u["slug"].as_str().unwrap_or(""),
                u["ref"].as_str().unwrap_or("")
            )
        }));
        let title = format!("Workflow supply-chain audit: {} finding(s)", findings.len());
        conclude(call, NAME, mode, &title, findings, unchecked, summary)
    }
}

// ---- GitLab pipelines ----

/// A pipeline reference: `(refKind, identifier, ref)`.
type PipelineRef = (&'static str, String, String);

/// `include: project`/`component` entries and `image`/`services` names, read as YAML.
fn pipeline_refs(text: &str) -> Result<Vec<PipelineRef>, String> {
    let doc = chant_yaml::read::parse(text)?;
    let mut out: Vec<PipelineRef> = Vec::new();
    let includes: Vec<&Json> = match &doc["include"] {
        Json::Array(a) => a.iter().collect(),
        Json::Null => Vec::new(),
        other => vec![other],
    };
    for inc in includes {
        if let Some(project) = inc["project"].as_str() {
            let r = inc["ref"].as_str().unwrap_or("HEAD");
            out.push(("include", project.to_owned(), r.to_owned()));
        }
        if let Some(c) = inc["component"].as_str()
            && let Some((id, v)) = c.rsplit_once('@')
        {
            out.push(("component", id.to_owned(), v.to_owned()));
        }
    }
    let mut image = |v: &Json| {
        let name = v.as_str().or_else(|| v["name"].as_str());
        if let Some(name) = name
            .map(str::trim)
            .filter(|n| !n.is_empty() && !n.contains('$'))
        {
            let slash = name.rfind('/').map_or(0, |i| i + 1);
            let r = match (name.rfind('@'), name[slash..].rfind(':')) {
                (Some(at), _) => &name[at + 1..],
                (None, Some(c)) => &name[slash + c + 1..],
                _ => "latest",
            };
            if !out.iter().any(|(k, id, _)| *k == "image" && id == name) {
                out.push(("image", name.to_owned(), r.to_owned()));
            }
        }
    };
    let mut jobs: Vec<&Json> = vec![&doc, &doc["default"]];
    jobs.extend(doc.as_object().into_iter().flatten().map(|(_, j)| j));
    for job in jobs {
        if job.is_object() {
            image(&job["image"]);
            for s in job["services"].as_array().into_iter().flatten() {
                image(s);
            }
        }
    }
    Ok(out)
}

/// `pipelineSupplyChainAudit {yaml? | yamls? | pipelineFile?, mode?}`: each `include:
/// project` (and its `ref`) and `component` checked against GitLab — `unresolved`,
/// `archived`, `moved` (the project answers under another path). Images have no advisory
/// source here and are listed under `unchecked`.
pub struct PipelineAudit;

impl Activity for PipelineAudit {
    fn name(&self) -> &'static str {
        "pipelineSupplyChainAudit"
    }

    fn run(&self, call: &ActivityCall<'_>) -> Result<Json, ActivityError> {
        const NAME: &str = "pipelineSupplyChainAudit";
        let mode = audit_mode(call, NAME, "merge-request")?;
        let files = sources(call, NAME, "pipelineFile", ".gitlab-ci.yml", false)?;
        let api = env_var(call, "CI_API_V4_URL")
            .unwrap_or_else(|| "https://gitlab.com/api/v4".to_owned());
        let api = api.trim_end_matches('/');
        let api_host = api
            .split_once("://")
            .map(|(_, r)| r.split(['/', ':']).next().unwrap_or(""))
            .unwrap_or("");
        let mut headers = Vec::new();
        if let Some(token) = env_var(call, "GITLAB_TOKEN") {
            headers.push(("PRIVATE-TOKEN", token));
        }
        let (mut findings, mut unchecked) = (Vec::new(), Vec::new());
        let mut seen = std::collections::HashSet::new();
        for (file, text) in &files {
            let refs = pipeline_refs(text).map_err(|e| {
                ActivityError::new(
                    "InvalidArgs",
                    format!("{file} is not YAML a pipeline can be: {e}"),
                )
            })?;
            for (kind, id, r) in refs {
                if !seen.insert(format!("{kind}:{id}@{r}")) {
                    continue;
                }
                let at = json!({"refKind": kind, "identifier": id, "ref": r});
                let skip = |reason: String| {
                    let mut u = at.clone();
                    u["reason"] = json!(reason);
                    u
                };
                let project = match kind {
                    "image" => {
                        unchecked.push(skip(
                            "images are not resolved: no registry or advisory source is asked"
                                .to_owned(),
                        ));
                        continue;
                    }
                    "component" => {
                        // <host>/<project path>/<component name>
                        let parts: Vec<&str> = id.split('/').collect();
                        if parts.len() < 3 {
                            unchecked.push(skip(format!(
                                "component \"{id}\" is not <host>/<project>/<name>"
                            )));
                            continue;
                        }
                        if !parts[0].eq_ignore_ascii_case(api_host) {
                            unchecked.push(skip(format!("component host {} is not the GitLab asked ({api}); set CI_API_V4_URL", parts[0])));
                            continue;
                        }
                        parts[1..parts.len() - 1].join("/")
                    }
                    _ => id.clone(),
                };
                let base = format!("{api}/projects/{}", encode(&project));
                let found = match ask(call, NAME, &base, &headers)? {
                    Asked::Found(v) => v,
                    Asked::Missing => {
                        findings.push(finding(
                            "unresolved",
                            at,
                            format!("{kind} \"{id}@{r}\" no longer resolves upstream"),
                        ));
                        continue;
                    }
                    Asked::Failed(why) => {
                        unchecked.push(skip(why));
                        continue;
                    }
                };
                if found["archived"] == true {
                    findings.push(finding(
                        "archived",
                        at.clone(),
                        format!("{id} has been archived upstream"),
                    ));
                }
                if let Some(now) = found["path_with_namespace"].as_str()
                    && !now.eq_ignore_ascii_case(&project)
                {
                    findings.push(finding(
                        "moved",
                        at.clone(),
                        format!("{project} moved to {now}"),
                    ));
                }
                // A component's `~latest` and partial versions (`1`, `1.2`) are resolved by
                // GitLab at pipeline time; a full version, a SHA, a branch or a tag is asked.
                let partial = kind == "component"
                    && (r.starts_with('~')
                        || (r.bytes().all(|b| b.is_ascii_digit() || b == b'.')
                            && r.matches('.').count() < 2));
                if r != "HEAD" && !partial {
                    match ask(
                        call,
                        NAME,
                        &format!("{base}/repository/commits/{}", encode(&r)),
                        &headers,
                    )? {
                        Asked::Found(_) => {}
                        Asked::Missing => findings.push(finding(
                            "unresolved",
                            at.clone(),
                            format!("{kind} \"{id}@{r}\" no longer resolves upstream"),
                        )),
                        Asked::Failed(why) => unchecked.push(skip(why)),
                    }
                }
            }
        }
        let mut summary = if findings.is_empty() {
            "## Pipeline include/component audit\n\nNo live drift detected against upstream references.\n".to_owned()
        } else {
            let mut s = format!(
                "## Pipeline include/component audit\n\n{} finding(s) against live upstream truth:\n\n| Reference | Ref | Finding | Detail |\n|---|---|---|---|\n",
                findings.len()
            );
            for f in &findings {
                s.push_str(&format!(
                    "| {} ({}) | {} | {} | {} |\n",
                    f["identifier"].as_str().unwrap_or(""),
                    f["refKind"].as_str().unwrap_or(""),
                    f["ref"].as_str().unwrap_or(""),
                    f["kind"].as_str().unwrap_or(""),
                    f["detail"].as_str().unwrap_or("")
                ));
            }
            s
        };
        summary.push_str(&unchecked_lines(&unchecked, &|u| {
            format!(
                "{} ({})",
                u["identifier"].as_str().unwrap_or(""),
                u["refKind"].as_str().unwrap_or("")
            )
        }));
        let title = format!("Pipeline supply-chain audit: {} finding(s)", findings.len());
        conclude(call, NAME, mode, &title, findings, unchecked, summary)
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

    #[test]
    fn pipeline_refs_are_includes_components_and_images() {
        let ci = "include:\n  - project: group/ci\n    ref: v1.2.0\n    file: a.yml\n  - component: gitlab.com/org/sub/comp/build@1.0.0\n  - local: x.yml\nimage: node:20\ndefault:\n  image: registry.example.com:5000/tools/img@sha256:abc\njob:\n  image:\n    name: python:3.12\n  services:\n    - postgres:16\n    - name: redis\n  script: [\"echo\"]\nother:\n  image: $CI_IMAGE\n";
        let refs = pipeline_refs(ci).unwrap();
        let shown: Vec<String> = refs
            .iter()
            .map(|(k, id, r)| format!("{k} {id} {r}"))
            .collect();
        assert_eq!(
            shown,
            [
                "include group/ci v1.2.0",
                "component gitlab.com/org/sub/comp/build 1.0.0",
                "image node:20 20",
                "image registry.example.com:5000/tools/img@sha256:abc sha256:abc",
                "image python:3.12 3.12",
                "image postgres:16 16",
                "image redis latest",
            ]
        );
        assert_eq!(encode("group/ci"), "group%2Fci");
    }
}
