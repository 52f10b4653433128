//! `pipelineSupplyChainAudit`: each project include and component a GitLab pipeline pins,
//! asked of GitLab.

use chant_core::lexicon::{Activity, ActivityCall, ActivityError};
use serde_json::{Value as Json, json};

use super::{
    Asked, Outcome, Report, Upstream, api_and_token, audit_mode, conclude, encode, sources,
};

const NAME: &str = "pipelineSupplyChainAudit";

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
        // A project named by number, a ref written as a number (`ref: 1.0`): as text.
        let text = |v: &Json| match v {
            Json::String(x) => Some(x.clone()),
            Json::Number(n) => Some(n.to_string()),
            _ => None,
        };
        if let Some(project) = text(&inc["project"]) {
            let r = text(&inc["ref"]).unwrap_or_else(|| "HEAD".to_owned());
            out.push(("include", project, r));
        }
        for kind in ["remote", "template"] {
            if let Some(v) = text(&inc[kind]) {
                out.push((
                    if kind == "remote" {
                        "remote"
                    } else {
                        "template"
                    },
                    v,
                    String::new(),
                ));
            }
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

/// The GitLab project a reference names, or why it is not asked.
fn project_of(kind: &str, id: &str, api_host: &str, api: &str) -> Result<String, String> {
    match kind {
        "image" => {
            Err("images are not resolved: no registry or advisory source is asked".to_owned())
        }
        "component" => {
            // <host>/<project path>/<component name>
            let parts: Vec<&str> = id.split('/').collect();
            if parts.len() < 3 {
                return Err(format!("component \"{id}\" is not <host>/<project>/<name>"));
            }
            if !parts[0].eq_ignore_ascii_case(api_host) {
                return Err(format!(
                    "component host {} is not the GitLab asked ({api}); set CI_API_V4_URL",
                    parts[0]
                ));
            }
            Ok(parts[1..parts.len() - 1].join("/"))
        }
        _ => Ok(id.to_owned()),
    }
}

/// Everything asked of GitLab about one reference, into `o`.
fn check(
    gl: &Upstream<'_, '_>,
    api_host: &str,
    (kind, id, r): &PipelineRef,
    o: &mut Outcome,
) -> Result<(), ActivityError> {
    let at = json!({"refKind": kind, "identifier": id, "ref": r});
    let project = match project_of(kind, id, api_host, &gl.base) {
        Ok(p) => p,
        Err(why) => {
            o.skip(&at, why);
            return Ok(());
        }
    };
    o.asked += 1;
    let base = format!("/projects/{}", encode(&project));
    let unresolved = format!("{kind} \"{id}@{r}\" no longer resolves upstream");
    let found = match gl.ask(&base)? {
        Asked::Found(v) => v,
        Asked::Missing => {
            o.find(&at, "unresolved", unresolved);
            return Ok(());
        }
        Asked::Failed(why) => {
            o.unchecked(&at, why);
            return Ok(());
        }
    };
    if found["archived"] == true {
        o.find(&at, "archived", format!("{id} has been archived upstream"));
    }
    if let Some(now) = found["path_with_namespace"].as_str()
        && !now.eq_ignore_ascii_case(&project)
    {
        o.find(&at, "moved", format!("{project} moved to {now}"));
    }
    // A component's `~latest` and partial versions (`1`, `1.2`) are resolved by GitLab at
    // pipeline time; a full version, a SHA, a branch or a tag is asked.
    let partial = *kind == "component"
        && (r.starts_with('~')
            || (r.bytes().all(|b| b.is_ascii_digit() || b == b'.') && r.matches('.').count() < 2));
    if r != "HEAD" && !partial {
        match gl.ask(&format!("{base}/repository/commits/{}", encode(r)))? {
            Asked::Found(_) => {}
            Asked::Missing => o.find(&at, "unresolved", unresolved),
            Asked::Failed(why) => o.unchecked(&at, why),
        }
    } else if partial {
        o.skip(
            &at,
            format!("version \"{r}\" is resolved by GitLab when the pipeline runs"),
        );
    }
    Ok(())
}

const REPORT: Report = Report {
    heading: "Pipeline include/component audit",
    column: "Reference",
    label: |v| {
        format!(
            "{} ({})",
            v["identifier"].as_str().unwrap_or(""),
            v["refKind"].as_str().unwrap_or("")
        )
    },
    named: |v| {
        format!(
            "{} ({})",
            v["identifier"].as_str().unwrap_or(""),
            v["refKind"].as_str().unwrap_or("")
        )
    },
    reference: "ref",
};

/// `pipelineSupplyChainAudit {yaml? | yamls? | pipelineFile?, mode?}`: each `include:
/// project` (and its `ref`) and `component` checked against GitLab — `unresolved`,
/// `archived`, `moved` (the project answers under another path). Images have no advisory
/// source here and are listed under `unchecked`.
pub struct PipelineAudit;

impl Activity for PipelineAudit {
    fn name(&self) -> &'static str {
        NAME
    }

    fn run(&self, call: &ActivityCall<'_>) -> Result<Json, ActivityError> {
        let mode = audit_mode(call, NAME, "merge-request")?;
        let files = sources(call, NAME, "pipelineFile", ".gitlab-ci.yml", false)?;
        let (api, token) = api_and_token(
            call,
            "CI_API_V4_URL",
            "https://gitlab.com/api/v4",
            "GITLAB_TOKEN",
        );
        let api = api.trim_end_matches('/').to_owned();
        let api_host = api
            .split_once("://")
            .map(|(_, r)| r.split(['/', ':']).next().unwrap_or("").to_owned())
            .unwrap_or_default();
        let mut headers = Vec::new();
        if let Some(token) = token {
            headers.push(("PRIVATE-TOKEN", token));
        }
        let gl = Upstream {
            call,
            activity: NAME,
            base: api,
            headers,
            deadline: std::time::Instant::now() + std::time::Duration::from_millis(call.timeout_ms),
        };
        let mut o = Outcome::default();
        let mut seen = std::collections::HashSet::new();
        for (file, text) in &files {
            let refs = pipeline_refs(text).map_err(|e| {
                ActivityError::new(
                    "InvalidArgs",
                    format!("{file} is not YAML a pipeline can be: {e}"),
                )
            })?;
            for r in refs {
                if seen.insert(format!("{}:{}@{}", r.0, r.1, r.2)) {
                    check(&gl, &api_host, &r, &mut o)?;
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
