//! GitLab post-synth checks: findings about the pipeline `chant build` prints as warnings.
//! Checks on the declared jobs name the entity; checks on the emitted YAML name the YAML key.

use chant_core::discover::Discovery;
use chant_core::lexicon::Finding;
use chant_core::model::{DeclKind, Value};

use super::{JOB, sections};
use chant_yaml::gitlab::{Yaml, scalar_text};

/// Variables whose values a pusher or merge-request author controls.
const ATTACKER_CONTROLLED: [&str; 12] = [
    "CI_COMMIT_BRANCH",
    "CI_COMMIT_REF_NAME",
    "CI_COMMIT_REF_SLUG",
    "CI_COMMIT_TAG",
    "CI_COMMIT_MESSAGE",
    "CI_COMMIT_TITLE",
    "CI_COMMIT_DESCRIPTION",
    "CI_COMMIT_AUTHOR",
    "CI_MERGE_REQUEST_TITLE",
    "CI_MERGE_REQUEST_DESCRIPTION",
    "CI_MERGE_REQUEST_SOURCE_BRANCH_NAME",
    "CI_EXTERNAL_PULL_REQUEST_SOURCE_BRANCH_NAME",
];

fn warn(entity: &str, message: String) -> Finding {
    Finding {
        entity: entity.to_owned(),
        message,
        error: false,
    }
}

fn is_deploy_stage(stage: &str) -> bool {
    let s = stage.to_ascii_lowercase();
    s.contains("deploy") || s.contains("release")
}

fn truthy(v: Option<&Value>) -> bool {
    match v {
        None | Some(Value::Undefined | Value::Null) => false,
        Some(Value::Bool(b)) => *b,
        Some(Value::Number(n)) => *n != 0.0 && !n.is_nan(),
        Some(Value::String(s)) => !s.is_empty(),
        Some(_) => true,
    }
}

/// The props of a declarable reached through a prop value (inlined property or plain object).
fn props_of<'a>(d: &'a Discovery, v: &'a Value) -> Option<&'a Value> {
    match v {
        Value::Decl(id) => Some(&d.evaluation.decl(*id).props),
        Value::Object(_) => Some(v),
        _ => None,
    }
}

pub(crate) fn run(d: &Discovery, entities: &[usize]) -> Vec<Finding> {
    let jobs: Vec<usize> = entities
        .iter()
        .copied()
        .filter(|&e| d.decl(e).kind == DeclKind::Resource && d.decl(e).entity_type == JOB)
        .collect();
    let mut out = Vec::new();
    let name = |e: usize| d.entities[e].name.as_str();
    for &e in &jobs {
        if !truthy(d.decl(e).props.get("timeout")) {
            out.push(warn(
                name(e),
                format!(
                    "Job \"{}\" has no explicit timeout — default is 1 hour which may be too long",
                    name(e)
                ),
            ));
        }
    }
    for &e in &jobs {
        let props = &d.decl(e).props;
        if let Some(stage) = props.get("stage").and_then(Value::as_str)
            && is_deploy_stage(stage)
            && !truthy(props.get("retry"))
        {
            out.push(warn(
                name(e),
                format!("Deploy job \"{}\" (stage: {stage}) has no retry strategy — consider adding retry for transient failures", name(e)),
            ));
        }
    }
    for &e in &jobs {
        let props = &d.decl(e).props;
        if props.get("when").and_then(Value::as_str) == Some("manual")
            && props.get("allow_failure") != Some(&Value::Bool(true))
        {
            out.push(warn(name(e), format!("Job \"{}\" has when: manual but no allow_failure: true — this will block the pipeline", name(e))));
        }
    }
    for &e in &jobs {
        let artifacts = d
            .decl(e)
            .props
            .get("artifacts")
            .and_then(|a| props_of(d, a));
        if let Some(a) = artifacts
            && a.get("expire_in").is_none_or(Value::is_nullish)
        {
            out.push(warn(name(e), format!("Job \"{}\" has artifacts without expire_in — set an expiry to avoid disk bloat", name(e))));
        }
    }

    // A pipeline too large to walk is the serializer's error; there is nothing to check here.
    let Ok((stages, sections)) = sections(d, entities) else {
        return out;
    };
    let stage_index = |s: &Yaml| s.as_str().and_then(|s| stages.iter().position(|x| x == s));
    let stage_of: std::collections::HashMap<&str, &Yaml> = sections
        .iter()
        .filter(|s| s.kind == "job")
        .filter_map(|s| s.props.get("stage").map(|st| (s.name.as_str(), st)))
        .collect();
    let job_stage = |job: &str| stage_of.get(job).copied();
    for s in sections.iter().filter(|s| s.kind == "job") {
        let Some((Some(own), Yaml::Seq(needs))) = s
            .props
            .get("stage")
            .map(|st| (stage_index(st), s.props.get("needs").unwrap_or(&Yaml::Null)))
            .map(|(a, b)| (a, b.clone()))
        else {
            continue;
        };
        for need in &needs {
            let need_name = match need {
                Yaml::String(n) => n.clone(),
                Yaml::Map(_) => match need.get("job").and_then(Yaml::as_str) {
                    Some(n) => n.to_owned(),
                    None => continue,
                },
                _ => continue,
            };
            let Some(their) = job_stage(&need_name) else {
                continue;
            };
            if let Some(idx) = stage_index(their)
                && idx < own
            {
                out.push(warn(
                    &s.name,
                    format!(
                        "Job \"{}\" lists \"{need_name}\" in needs: but it's already in an earlier stage ({} → {})",
                        s.name, stages[idx], stages[own]
                    ),
                ));
            }
        }
    }
    let image_name = |v: &Yaml| match v {
        Yaml::Map(_) => v.get("name").map(scalar_text).unwrap_or_default(),
        other => scalar_text(other),
    };
    for s in sections.iter().filter(|s| s.kind != "workflow") {
        if let Some(image) = s.props.get("image") {
            let img = image_name(image);
            if !img.contains("@sha256:") {
                out.push(warn(&s.name, format!("Job \"{}\" image \"{img}\" is not pinned to a digest — reference it by @sha256:... so the image cannot change after review.", s.name)));
            }
        }
        if let Some(Yaml::Seq(services)) = s.props.get("services") {
            for service in services {
                let img = image_name(service);
                if !img.contains("@sha256:") {
                    out.push(warn(&s.name, format!("Job \"{}\" service image \"{img}\" is not pinned to a digest — reference it by @sha256:... so the image cannot change after review.", s.name)));
                }
            }
        }
    }
    for s in sections.iter().filter(|s| s.kind == "job") {
        let lines: Vec<String> = match s.props.get("script") {
            Some(Yaml::Seq(items)) => items
                .iter()
                .filter_map(|i| i.as_str().map(str::to_owned))
                .collect(),
            Some(Yaml::String(line)) => vec![line.clone()],
            _ => continue,
        };
        let mut found: Vec<(usize, &str)> = Vec::new();
        for var in ATTACKER_CONTROLLED {
            let first = lines
                .iter()
                .enumerate()
                .find_map(|(i, l)| find_var(l, var).map(|pos| (i, pos)));
            if let Some((line, pos)) = first {
                found.push((line * 1_000_000 + pos, var));
            }
        }
        found.sort();
        for (_, var) in found {
            out.push(warn(
                &s.name,
                format!(
                    "Job \"{}\" uses the attacker-controllable variable ${var} in a script command. A crafted value can inject shell commands — quote it (\"${var}\") and avoid using it in sensitive commands, or sanitize it first.",
                    s.name
                ),
            ));
        }
    }
    for s in sections.iter().filter(|s| s.kind == "workflow") {
        if s.props.get("name").is_none_or(|n| matches!(n, Yaml::Null)) {
            out.push(warn(
                "workflow",
                "The pipeline defines a workflow: block but no workflow:name. Add a name so runs are identifiable in the GitLab UI and audit output.".to_owned(),
            ));
        }
    }
    let _ = &jobs;
    out
}

/// Byte position of `$VAR` or `${VAR}` in `line`, not followed by more name characters.
fn find_var(line: &str, var: &str) -> Option<usize> {
    let bytes = line.as_bytes();
    let mut from = 0;
    while let Some(rel) = line[from..].find('$') {
        let at = from + rel;
        let rest = &line[at + 1..];
        let (body, braced) = match rest.strip_prefix('{') {
            Some(b) => (b, true),
            None => (rest, false),
        };
        if let Some(after) = body.strip_prefix(var) {
            let ok = if braced {
                after.starts_with('}')
            } else {
                !after.starts_with(|c: char| c.is_ascii_alphanumeric() || c == '_')
            };
            if ok {
                return Some(at);
            }
        }
        from = at + 1;
        if from >= bytes.len() {
            break;
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::find_var;

    #[test]
    fn variables_are_matched_whole() {
        assert_eq!(find_var("echo $CI_COMMIT_TAG", "CI_COMMIT_TAG"), Some(5));
        assert_eq!(find_var("echo ${CI_COMMIT_TAG}x", "CI_COMMIT_TAG"), Some(5));
        assert_eq!(find_var("echo $CI_COMMIT_TAGS", "CI_COMMIT_TAG"), None);
        assert_eq!(find_var("echo $CI_COMMIT_SHORT_SHA", "CI_COMMIT_SHA"), None);
    }
}
