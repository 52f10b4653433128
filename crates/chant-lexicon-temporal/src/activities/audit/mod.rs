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

mod pipeline;
mod workflow;

pub use pipeline::PipelineAudit;
pub use workflow::WorkflowAudit;

use chant_core::lexicon::{ActivityCall, ActivityError};
use serde_json::{Value as Json, json};

use super::call::{arg, choice, gh_issue, optional, text};
use super::http;

/// The most of one workflow or pipeline file read, of all of them, and how many files.
const MAX_FILE: u64 = 1 << 20;
const MAX_TOTAL: u64 = 8 << 20;
const MAX_FILES: usize = 500;

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
        let mut names: Vec<String> = Vec::new();
        for e in std::fs::read_dir(&dir)
            .map_err(|e| bad(format!("{activity} cannot list {path}: {e}")))?
        {
            let e = e.map_err(|e| bad(format!("{activity} cannot list {path}: {e}")))?;
            let name = e.file_name();
            let Some(n) = name.to_str() else {
                // A workflow this cannot name is one it cannot read: never skipped silently.
                return Err(bad(format!(
                    "{activity}: {path} holds a file whose name is not UTF-8 ({})",
                    name.to_string_lossy()
                )));
            };
            if n.ends_with(".yml") || n.ends_with(".yaml") {
                names.push(n.to_owned());
            }
        }
        if names.len() > MAX_FILES {
            return Err(bad(format!(
                "{activity}: {path} holds {} workflow files, more than the {MAX_FILES} an audit reads",
                names.len()
            )));
        }
        names.sort();
        let mut total = 0u64;
        let mut out = Vec::new();
        for n in names {
            let shown = format!("{path}/{n}");
            let text = read(&dir, &n, shown.clone())?;
            total += text.len() as u64;
            if total > MAX_TOTAL {
                return Err(bad(format!(
                    "{activity}: the workflow files under {path} hold more than {MAX_TOTAL} bytes in all"
                )));
            }
            out.push((shown, text));
        }
        Ok(out)
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

/// `s` as one URL path segment: everything but unreserved characters percent-encoded, and a
/// segment of dots (`.`, `..`) encoded whole, so no client folds it into another path.
fn encode(s: &str) -> String {
    if !s.is_empty() && s.bytes().all(|b| b == b'.') {
        return "%2E".repeat(s.len());
    }
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

/// A web API asked for one activity: its base URL and the headers every request carries.
struct Upstream<'c, 'a> {
    call: &'c ActivityCall<'a>,
    activity: &'static str,
    base: String,
    headers: Vec<(&'static str, String)>,
    /// When the step's time is up: no request starts after it.
    deadline: std::time::Instant,
}

impl Upstream<'_, '_> {
    /// `GET <base><path>`: 2xx with JSON is found, 404 and 422 are missing, anything else (or
    /// a network error) failed — one reference left unchecked. A missing curl, a bad URL or a
    /// cancel stops the step.
    fn ask(&self, path: &str) -> Result<Asked, ActivityError> {
        let url = format!("{}{path}", self.base);
        if self.call.cancel.load(std::sync::atomic::Ordering::SeqCst) {
            return Err(ActivityError::new(
                "Cancelled",
                format!("{} cancelled", self.activity),
            ));
        }
        let left = self
            .deadline
            .saturating_duration_since(std::time::Instant::now());
        if left.is_zero() {
            return Err(ActivityError::new(
                "Error",
                format!(
                    "{} ran out of its step's {} ms before every reference was asked",
                    self.activity, self.call.timeout_ms
                ),
            ));
        }
        match http::get(self.call, self.activity, &url, &self.headers, left) {
            Ok((200..=299, body)) => Ok(serde_json::from_str(&body)
                .map(Asked::Found)
                .unwrap_or_else(|_| {
                    Asked::Failed(format!("{url} answered with something not JSON"))
                })),
            Ok((404 | 422, _)) => Ok(Asked::Missing),
            Ok((status, _)) => Ok(Asked::Failed(format!("{url} answered {status}"))),
            Err(e) if matches!(e.name.as_str(), "ToolMissing" | "InvalidArgs" | "Cancelled") => {
                Err(e)
            }
            Err(e) => Ok(Asked::Failed(e.message)),
        }
    }
}

/// What an audit found, what it could not ask (which fails the step), and what it does not
/// ask by design (listed, with why).
#[derive(Default)]
struct Outcome {
    findings: Vec<Json>,
    unchecked: Vec<Json>,
    skipped: Vec<Json>,
    asked: usize,
}

impl Outcome {
    /// A finding of `kind` about the reference `at` (its identifying fields).
    fn find(&mut self, at: &Json, kind: &str, detail: String) {
        let mut f = at.clone();
        f["kind"] = json!(kind);
        f["detail"] = json!(detail);
        self.findings.push(f);
    }

    /// The reference `at` could not be checked, and why.
    fn unchecked(&mut self, at: &Json, reason: String) {
        let mut u = at.clone();
        u["reason"] = json!(reason);
        self.unchecked.push(u);
    }

    /// The reference `at` is not asked by this audit, and why.
    fn skip(&mut self, at: &Json, reason: String) {
        let mut u = at.clone();
        u["reason"] = json!(reason);
        self.skipped.push(u);
    }
}

/// How an audit shows itself: its summary's heading, its table's first column, and the
/// label of one reference.
struct Report {
    heading: &'static str,
    column: &'static str,
    label: fn(&Json) -> String,
    /// How an unchecked reference is named in the list under the table.
    named: fn(&Json) -> String,
    /// The `Ref` column's field.
    reference: &'static str,
}

/// The markdown summary (the reference's text), plus what could not be checked.
fn summary(report: &Report, o: &Outcome) -> String {
    let field = |v: &Json, k: &str| v[k].as_str().unwrap_or("").to_owned();
    let mut s = if o.findings.is_empty() && o.unchecked.is_empty() {
        format!(
            "## {}\n\nNo live drift detected against upstream references ({} asked).\n",
            report.heading, o.asked
        )
    } else if o.findings.is_empty() {
        format!(
            "## {}\n\nNo drift found in the references that could be asked; {} could not be.\n",
            report.heading,
            o.unchecked.len()
        )
    } else {
        let mut s = format!(
            "## {}\n\n{} finding(s) against live upstream truth:\n\n| {} | Ref | Finding | Detail |\n|---|---|---|---|\n",
            report.heading,
            o.findings.len(),
            report.column
        );
        for f in &o.findings {
            s.push_str(&format!(
                "| {} | {} | {} | {} |\n",
                (report.label)(f),
                field(f, report.reference),
                field(f, "kind"),
                field(f, "detail")
            ));
        }
        s
    };
    if !o.unchecked.is_empty() {
        s.push_str(&format!(
            "\n{} reference(s) could not be checked:\n\n",
            o.unchecked.len()
        ));
        for u in &o.unchecked {
            s.push_str(&format!(
                "- {}: {}\n",
                (report.named)(u),
                field(u, "reason")
            ));
        }
    }
    if !o.skipped.is_empty() {
        s.push_str(&format!(
            "\n{} reference(s) not asked:\n\n",
            o.skipped.len()
        ));
        for u in &o.skipped {
            s.push_str(&format!(
                "- {}: {}\n",
                (report.named)(u),
                field(u, "reason")
            ));
        }
    }
    s
}

/// The result both audits return, and `issue` mode's issue.
fn conclude(
    call: &ActivityCall<'_>,
    activity: &str,
    mode: &str,
    report: &Report,
    o: Outcome,
) -> Result<Json, ActivityError> {
    let body = summary(report, &o);
    if !o.unchecked.is_empty() {
        // An audit that could not ask is not a clean audit: the step fails (and is retried
        // under its profile), with everything it did find in the message.
        return Err(ActivityError::new("Error", body));
    }
    let title = format!("{}: {} finding(s)", report.heading, o.findings.len());
    let issue = if mode == "issue" && !o.findings.is_empty() {
        Some(gh_issue(call, activity, &title, &body)?)
    } else {
        None
    };
    let mut out =
        json!({"mode": mode, "findings": o.findings, "summary": body, "skipped": o.skipped});
    if let Some(url) = issue {
        out["issueUrl"] = json!(url);
    }
    Ok(out)
}

/// The API to ask and the token to send it: an API the step names (`args.env`) gets only a
/// token the step names too; chant's own token goes only to chant's own (or the default) API,
/// never to a server an Op chose.
fn api_and_token(
    call: &ActivityCall<'_>,
    url_var: &str,
    default: &str,
    token_var: &str,
) -> (String, Option<String>) {
    let step = super::call::env_of(call);
    let from_step = |k: &str| {
        step.iter()
            .find(|(n, _)| n == k)
            .map(|(_, v)| v.clone())
            .filter(|v| !v.is_empty())
    };
    let from_chant = |k: &str| std::env::var(k).ok().filter(|v| !v.is_empty());
    match from_step(url_var) {
        Some(url) => (url, from_step(token_var)),
        None => (
            from_chant(url_var).unwrap_or_else(|| default.to_owned()),
            from_step(token_var).or_else(|| from_chant(token_var)),
        ),
    }
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
