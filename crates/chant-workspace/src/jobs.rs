//! The CI jobs a generated pipeline file defines, for `ls`: GitLab's top-level jobs, and the
//! jobs of a GitHub, Forgejo or Gitea workflow (each job's `name`, else its id), in file
//! order. Matrices are not expanded. `null` when the file is no forge pipeline, is missing or
//! does not parse; `[]` when it defines none.

use serde_json::{Value, json};

/// GitLab's top-level keywords, which are not jobs.
const GITLAB_KEYWORDS: &[&str] = &[
    "stages",
    "variables",
    "default",
    "include",
    "workflow",
    "image",
    "services",
    "cache",
    "before_script",
    "after_script",
    "pages",
];

enum Forge {
    GitLab,
    /// GitHub, Forgejo and Gitea: workflows with a `jobs` map.
    Workflow,
}

/// Which reading of a pipeline `path` gets (`None`: no pipeline), for a cache of reads.
pub fn class(path: &str) -> Option<&'static str> {
    forge(path).map(|f| match f {
        Forge::GitLab => "gitlab",
        Forge::Workflow => "workflow",
    })
}

fn forge(path: &str) -> Option<Forge> {
    let yaml = path.ends_with(".yml") || path.ends_with(".yaml");
    // A member's own pipeline (`infra/.gitlab-ci.yml`) or one it includes (`.gitlab/ci/…`).
    let name = path.rsplit('/').next().unwrap_or(path);
    if name == ".gitlab-ci.yml"
        || ((path.starts_with(".gitlab/ci/") || path.contains("/.gitlab/ci/")) && yaml)
    {
        return Some(Forge::GitLab);
    }
    [
        ".github/workflows/",
        ".forgejo/workflows/",
        ".gitea/workflows/",
    ]
    .iter()
    .any(|d| path.starts_with(d) && yaml)
    .then_some(Forge::Workflow)
}

/// The jobs the file at `path` (from the repository root) holding `bytes` defines.
pub fn of(path: &str, bytes: Option<&[u8]>) -> Value {
    let (Some(forge), Some(bytes)) = (forge(path), bytes) else {
        return Value::Null;
    };
    let Ok(text) = std::str::from_utf8(bytes) else {
        return Value::Null;
    };
    let Ok(Value::Object(doc)) = chant_yaml::read::parse(text) else {
        return Value::Null;
    };
    let jobs: Vec<String> = match forge {
        Forge::GitLab => doc
            .iter()
            .filter(|(k, v)| {
                v.is_object() && !k.starts_with('.') && !GITLAB_KEYWORDS.contains(&k.as_str())
            })
            .map(|(k, _)| k.clone())
            .collect(),
        Forge::Workflow => match doc.get("jobs") {
            Some(Value::Object(jobs)) => jobs
                .iter()
                .map(|(id, job)| {
                    job.get("name")
                        .and_then(Value::as_str)
                        .filter(|n| !n.is_empty())
                        .unwrap_or(id)
                        .to_owned()
                })
                .collect(),
            _ => Vec::new(),
        },
    };
    json!(jobs)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn gitlab_jobs_are_top_level_maps_that_are_no_keyword_or_template() {
        let text = "stages: [build]\nvariables:\n  A: b\n.template:\n  script: [x]\nbuild-job:\n  stage: build\n  script: [make]\ndefault:\n  image: x\nlist: [1]\ntest:\n  script: [t]\n";
        assert_eq!(
            of(".gitlab-ci.yml", Some(text.as_bytes())),
            json!(["build-job", "test"])
        );
        assert_eq!(
            of(".gitlab/ci/api.yml", Some(b"a:\n  script: [x]\n")),
            json!(["a"])
        );
    }

    #[test]
    fn workflow_jobs_are_named_or_their_ids() {
        let text = "on: push\njobs:\n  build:\n    name: Build it\n    runs-on: x\n  test:\n    runs-on: x\n  lint:\n    name: \"\"\n";
        for p in [
            ".github/workflows/ci.yml",
            ".forgejo/workflows/a.yaml",
            ".gitea/workflows/b.yml",
        ] {
            assert_eq!(
                of(p, Some(text.as_bytes())),
                json!(["Build it", "test", "lint"]),
                "{p}"
            );
        }
        assert_eq!(
            of(".github/workflows/none.yml", Some(b"on: push\n")),
            json!([])
        );
    }

    #[test]
    fn anything_else_is_unknown() {
        assert_eq!(of("ci.yml", Some(b"a:\n  script: [x]\n")), Value::Null);
        assert_eq!(of(".gitlab-ci.yml", None), Value::Null);
        assert_eq!(of(".gitlab-ci.yml", Some(b"a: [unclosed\n")), Value::Null);
        assert_eq!(
            of(".github/workflows/x.yml", Some(b"- a list\n")),
            Value::Null
        );
    }
}
