//! The GitLab CI lexicon: classes from the catalog, the runtime module, the `.gitlab-ci.yml`
//! serializer, post-synth checks, composites metadata and init templates.

mod checks;
pub mod import;
pub mod lint;
mod plugin;

use std::sync::OnceLock;

use chant_core::discover::Discovery;
use chant_core::lexicon::{
    Catalog, CompositeEntry, Example, Finding, Importer, Lexicon, Output, Plugin, Serialized,
    TemplateSet, catalog_module,
};
use chant_core::model::{DeclKind, Value};

use chant_yaml::gitlab::{self as yaml, Yaml};

pub const JOB: &str = "GitLab::CI::Job";
pub const DEFAULT: &str = "GitLab::CI::Default";
pub const WORKFLOW: &str = "GitLab::CI::Workflow";
/// Top-level pipeline `variables:` (a chant addition: the captured reference had no way to
/// declare them, and its importer dropped them).
pub const VARIABLES: &str = "GitLab::CI::Variables";

const CATALOG: &str = include_str!("../data/gitlab.surface.json");
const COMPOSITES: &str = include_str!("../data/composites.json");
const RUNTIME: &str = include_str!("../runtime/gitlab.ts");

macro_rules! template_set {
    ($name:literal, [$($file:literal),*]) => {
        ($name, &[$(($file, include_str!(concat!("../data/templates/", $name, "/", $file)))),*])
    };
}

const TEMPLATES: &[(&str, &[(&str, &str)])] = &[
    template_set!("default", ["config.ts", "pipeline.ts"]),
    template_set!("node-pipeline", ["pipeline.ts"]),
    template_set!("python-pipeline", ["pipeline.ts"]),
    template_set!("docker-build", ["pipeline.ts"]),
    template_set!("review-app", ["pipeline.ts"]),
];

const CONTEXT: &str = "## GitLab CI (lexicon `gitlab`)

Declare jobs with `new Job({...})`, shared settings with `new Default({...})`, pipeline rules with
`new Workflow({...})` and top-level variables with `new Variables({...})`, all imported from
`@intentius/chant-lexicon-gitlab`. Property keys are GitLab's own
snake_case keys (`expire_in`, `before_script`). Reusable pieces are property declarables (`Image`,
`Cache`, `Artifacts`, `Rule`, `Need`, `Service`, …): export them and reference them from jobs; they are
inlined in the YAML. Referencing an exported job (e.g. in `needs`) renders its kebab-case name; a job exported under a
string name (`export { unit as \"test:unit\" }`, hidden `.templates` too) keeps that name as written.
`reference(\".setup\", \"script\")` renders `!reference [.setup, script]`; `CI.CommitRefSlug` and friends are
the predefined variables. Composites: `NodePipeline`, `PythonPipeline`, `DockerBuild`, `ReviewApp`.
`chant build` writes `.gitlab-ci.yml` with stages in first-use order, then `variables:`, `default:`,
`workflow:` and the jobs. `chant import .gitlab-ci.yml` turns an existing pipeline into this TypeScript.
";

/// The GitLab CI lexicon.
#[derive(Debug, Default)]
pub struct Gitlab;

fn catalog() -> &'static Catalog {
    static C: OnceLock<Catalog> = OnceLock::new();
    C.get_or_init(|| {
        Catalog::from_surface_json(CATALOG).expect("the embedded gitlab catalog parses")
    })
}

fn composites() -> &'static [CompositeEntry] {
    static C: OnceLock<Vec<CompositeEntry>> = OnceLock::new();
    C.get_or_init(|| {
        CompositeEntry::parse_all("gitlab", COMPOSITES)
            .expect("the embedded gitlab composites parse")
    })
}

fn templates() -> &'static [TemplateSet] {
    static T: OnceLock<Vec<TemplateSet>> = OnceLock::new();
    T.get_or_init(|| TemplateSet::from_static(TEMPLATES))
}

fn examples() -> &'static [Example] {
    static E: OnceLock<Vec<Example>> = OnceLock::new();
    E.get_or_init(|| {
        templates()
            .iter()
            .filter(|t| t.name != "default")
            .map(|t| Example {
                name: t.name.clone(),
                description: format!("GitLab CI pipeline using the {} template", t.name),
                content: t
                    .files
                    .iter()
                    .map(|f| f.content.as_str())
                    .collect::<Vec<_>>()
                    .join("\n"),
            })
            .collect()
    })
}

pub use chant_core::names::is_identifier;

/// A job's name in the YAML: the kebab-case of an identifier export (`lintJob` → `lint-job`),
/// or, for a string export name (`export { unit as "test:unit" }`), that name as written.
pub fn job_name(entity: &str) -> String {
    if is_identifier(entity) {
        kebab(entity)
    } else {
        entity.to_owned()
    }
}

/// `lintJob` → `lint-job`: a dash between a lowercase letter or digit and a capital, then lower case.
pub fn kebab(name: &str) -> String {
    let chars: Vec<char> = name.chars().collect();
    let mut out = String::with_capacity(name.len() + 4);
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        if (c.is_ascii_lowercase() || c.is_ascii_digit())
            && chars.get(i + 1).is_some_and(char::is_ascii_uppercase)
        {
            out.push(c);
            out.push('-');
            out.push(chars[i + 1]);
            i += 2;
        } else {
            out.push(c);
            i += 1;
        }
    }
    out.to_lowercase()
}

/// One emitted section: its name in the YAML, the entity behind it and its walked props.
pub(crate) struct Section {
    pub name: String,
    pub kind: &'static str,
    pub props: Yaml,
}

/// The values one pipeline may hold once its inlined declarables are copied in (a string
/// counting once per 64 bytes): a declarable shared at every level of a chain would otherwise
/// make an output of 2^levels values. 2,000,000 is some 128 MiB of text.
const MAX_VALUES: usize = 2_000_000;

pub(crate) struct Walker<'a> {
    pub d: &'a Discovery,
    /// Values walked so far; past [`MAX_VALUES`] the walk stops and the serializer says so.
    walked: std::cell::Cell<usize>,
}

impl Walker<'_> {
    /// Walks a prop value into YAML. `drop_undefined` is set inside inlined declarables.
    fn value(&self, v: &Value, depth: usize) -> Yaml {
        // A value costs one, and a string one more per 64 bytes: a long string copied into
        // every job that inlines it counts for each copy.
        let cost = match v {
            Value::String(s) => 1 + s.len() / 64,
            _ => 1,
        };
        let walked = self.walked.get() + cost;
        self.walked.set(walked);
        if depth > 64 || walked > MAX_VALUES {
            return Yaml::Null;
        }
        match v {
            Value::Undefined | Value::Null => Yaml::Null,
            Value::Bool(b) => Yaml::Bool(*b),
            Value::Number(n) => Yaml::Number(*n),
            Value::String(s) => Yaml::String(s.clone()),
            Value::Array(items) => {
                Yaml::Seq(items.iter().map(|i| self.value(i, depth + 1)).collect())
            }
            Value::Object(entries) => Yaml::Map(
                entries
                    .iter()
                    .map(|(k, v)| (k.clone(), self.value(v, depth + 1)))
                    .collect(),
            ),
            Value::Decl(id) => {
                let decl = self.d.evaluation.decl(*id);
                match (decl.kind, self.d.entity_of(*id)) {
                    (DeclKind::Resource, Some(e)) => {
                        Yaml::String(job_name(&self.d.entities[e].name))
                    }
                    (DeclKind::Output, Some(e)) => Yaml::String(self.d.entities[e].name.clone()),
                    _ => self.inline(&decl.props, depth + 1),
                }
            }
            Value::AttrRef { decl, .. } => Yaml::String(
                self.d
                    .entity_of(*decl)
                    .map(|e| self.d.entities[e].name.clone())
                    .unwrap_or_default(),
            ),
            Value::Tagged { tag, value } => {
                Yaml::Tagged(tag.clone(), Box::new(self.value(value, depth + 1)))
            }
            Value::Intrinsic { args, .. } => self.value(args, depth + 1),
            Value::Composite { .. } => Yaml::Null,
        }
    }

    /// An inlined declarable: its props, keys holding `undefined` left out.
    fn inline(&self, props: &Value, depth: usize) -> Yaml {
        match props {
            Value::Object(entries) => Yaml::Map(
                entries
                    .iter()
                    .filter(|(_, v)| !matches!(v, Value::Undefined))
                    .map(|(k, v)| (k.clone(), self.value(v, depth + 1)))
                    .collect(),
            ),
            other => self.value(other, depth),
        }
    }

    /// A top-level section's props (explicit `undefined` becomes `null`).
    fn section_props(&self, props: &Value) -> Yaml {
        self.value(props, 0)
    }
}

/// The sections of the pipeline, in output order (stages excluded).
pub(crate) fn sections(
    d: &Discovery,
    entities: &[usize],
) -> Result<(Vec<String>, Vec<Section>), String> {
    let walker = Walker {
        d,
        walked: std::cell::Cell::new(0),
    };
    let of_type = |ty: &'static str| {
        entities.iter().copied().filter(move |&e| {
            let decl = d.decl(e);
            decl.kind == DeclKind::Resource && decl.entity_type == ty
        })
    };
    let mut stages: Vec<String> = Vec::new();
    for e in of_type(JOB) {
        if let Some(stage) = d.decl(e).props.get("stage").and_then(Value::as_str)
            && !stages.iter().any(|s| s == stage)
        {
            stages.push(stage.to_owned());
        }
    }
    let mut out = Vec::new();
    for (ty, kind) in [
        (VARIABLES, "variables"),
        (DEFAULT, "default"),
        (WORKFLOW, "workflow"),
        (JOB, "job"),
    ] {
        for e in of_type(ty) {
            let props = walker.section_props(&d.decl(e).props);
            let name = if kind == "job" {
                job_name(&d.entities[e].name)
            } else {
                kind.to_owned()
            };
            out.push(Section { name, kind, props });
            if walker.walked.get() > MAX_VALUES {
                return Err(format!(
                    "the pipeline would hold more than {MAX_VALUES} values once the declarables it shares are copied into each job that uses them; export the shared ones (a job or property used by name is not copied)"
                ));
            }
        }
    }
    Ok((stages, out))
}

/// `.gitlab-ci.yml`: `stages` in first-use order, then the sections, a blank line between.
fn pipeline_yaml(d: &Discovery, entities: &[usize]) -> Result<String, String> {
    let (stages, sections) = sections(d, entities)?;
    let mut parts = Vec::new();
    if !stages.is_empty() {
        parts.push(yaml::section(
            "stages",
            &Yaml::Seq(stages.into_iter().map(Yaml::String).collect()),
        ));
    }
    for s in &sections {
        if matches!(&s.props, Yaml::Map(m) if m.is_empty()) {
            continue;
        }
        parts.push(yaml::section(&s.name, &s.props));
    }
    let mut primary = parts.join("\n\n");
    primary.push('\n');
    Ok(primary)
}

impl Lexicon for Gitlab {
    fn name(&self) -> &'static str {
        "gitlab"
    }

    fn version(&self) -> &'static str {
        env!("CARGO_PKG_VERSION")
    }

    /// The root module for every subpath (the reference's package exports them all from
    /// its root).
    fn runtime_subpath(&self, _subpath: &str) -> Option<String> {
        Some(String::new())
    }

    fn runtime_module(&self, subpath: &str) -> Option<String> {
        if !subpath.is_empty() {
            return None;
        }
        // `Variables` (top-level pipeline variables) is chant's own, beside the catalog's.
        Some(catalog_module(
            "gitlab",
            RUNTIME,
            catalog(),
            &[("Variables", VARIABLES, "resource")],
        ))
    }

    fn catalog(&self) -> &Catalog {
        catalog()
    }

    fn composites(&self) -> &[CompositeEntry] {
        composites()
    }

    fn serialize(&self, d: &Discovery, entities: &[usize]) -> Option<Result<Serialized, String>> {
        Some(pipeline_yaml(d, entities).map(|text| Serialized::of(Output::Text(text))))
    }

    fn lint_rules(&self) -> Vec<chant_lint::Rule> {
        lint::rules()
    }

    fn importer(&self) -> Option<&dyn Importer> {
        Some(&import::GitlabImporter)
    }

    fn plugin(&self) -> Option<&dyn Plugin> {
        Some(self)
    }

    fn post_synth_checks(
        &self,
        d: &Discovery,
        entities: &[usize],
        _output: &chant_core::lexicon::Output,
    ) -> Vec<Finding> {
        checks::run(d, entities)
    }

    fn templates(&self) -> &[TemplateSet] {
        templates()
    }

    fn context(&self) -> &str {
        CONTEXT
    }

    fn examples(&self) -> &[Example] {
        examples()
    }
}

#[cfg(test)]
mod tests {
    use super::kebab;

    #[test]
    fn kebab_case_names() {
        for (input, out) in [
            ("lintJob", "lint-job"),
            ("Deploy", "deploy"),
            ("deployToEU", "deploy-to-eu"),
            ("buildV2Image", "build-v2-image"),
            ("e2eTests", "e2e-tests"),
            ("snake_case_job", "snake_case_job"),
            ("shardJobs_0", "shard-jobs_0"),
            ("Backendlint", "backendlint"),
        ] {
            assert_eq!(kebab(input), out);
        }
    }

    #[test]
    fn string_export_names_are_job_names_as_written() {
        use super::job_name;
        assert_eq!(job_name("deployToEU"), "deploy-to-eu");
        assert_eq!(job_name("test:unit"), "test:unit");
        assert_eq!(job_name("Deploy Prod"), "Deploy Prod");
        assert_eq!(job_name(".base"), ".base");
        assert_eq!(job_name("pytest-unit"), "pytest-unit");
    }
}
