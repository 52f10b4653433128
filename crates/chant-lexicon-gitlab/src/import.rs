//! Importing a GitLab CI pipeline (`.gitlab-ci.yml` read as YAML, or its JSON form) into
//! chant TypeScript: one file per stage (`01-build.ts`, …, in the pipeline's stage order, so
//! the built `stages:` keep that order), hidden templates first, and `pipeline.ts` for the
//! top-level `variables`, `default` and `workflow`. Every job keeps its name: an export whose
//! kebab-case is the name where one exists (`pytest-unit` → `pytestUnit`), otherwise a string
//! export (`export { testUnit as "test:unit" }`), so `needs`, `dependencies` and `extends`
//! strings stay valid. Property values become the lexicon's classes (`Image`, `Artifacts`,
//! `Cache`, `Rule`, `Environment`, …) and `!reference` tags become `reference(...)`.

use serde_json::{Map, Value as Json};

use super::{is_identifier, kebab};
use chant_core::import::{Generated, Imported};

/// Top-level keys that are not jobs.
const GLOBAL_KEYS: [&str; 5] = ["stages", "variables", "default", "workflow", "include"];
/// Deprecated global keywords GitLab treats as `default:` entries.
const LEGACY_DEFAULTS: [&str; 5] = [
    "image",
    "services",
    "cache",
    "before_script",
    "after_script",
];
/// Keys that make a top-level mapping a job.
const JOB_KEYS: [&str; 6] = ["script", "trigger", "run", "extends", "stage", "needs"];

/// Whether `value` looks like a GitLab CI pipeline: a `stages` list, or a top-level mapping
/// with job keys.
pub fn detect(value: &Json) -> bool {
    let Some(o) = value.as_object() else {
        return false;
    };
    o.get("stages").is_some_and(Json::is_array)
        || o.iter().any(|(k, v)| {
            !GLOBAL_KEYS.contains(&k.as_str())
                && v.as_object()
                    .is_some_and(|job| JOB_KEYS.iter().any(|key| job.contains_key(*key)))
        })
}

/// The GitLab importer: [`detect`], [`parse`], [`generate`].
pub struct GitlabImporter;

impl chant_core::lexicon::Importer for GitlabImporter {
    fn detect(&self, template: &Json) -> bool {
        detect(template)
    }

    fn looks_for(&self) -> &'static str {
        "a `stages` list or a job with script, trigger, run, extends, stage or needs"
    }

    fn import(&self, template: &Json) -> Result<Imported, String> {
        generate(parse(template)?)
    }
}

/// The intermediate form: what the pipeline declares, before any TypeScript.
#[derive(Debug, Default)]
pub struct Pipeline {
    pub stages: Vec<String>,
    pub variables: Option<Map<String, Json>>,
    pub default: Option<Map<String, Json>>,
    pub workflow: Option<Map<String, Json>>,
    /// `(name, props)` in document order.
    pub jobs: Vec<(String, Map<String, Json>)>,
    pub warnings: Vec<String>,
}

/// Reads the pipeline's parts.
pub fn parse(value: &Json) -> Result<Pipeline, String> {
    let o = value
        .as_object()
        .ok_or("a GitLab CI pipeline is a mapping at the top")?;
    let mut p = Pipeline::default();
    let mut legacy = Map::new();
    for (key, v) in o {
        match key.as_str() {
            "stages" => {
                p.stages = v
                    .as_array()
                    .ok_or("`stages` must be a list")?
                    .iter()
                    .map(|s| match s {
                        Json::String(s) => Ok(s.clone()),
                        other => Err(format!("`stages` holds {other}, not a stage name")),
                    })
                    .collect::<Result<_, _>>()?;
            }
            "variables" => {
                p.variables = Some(v.as_object().cloned().ok_or("`variables` must be a mapping")?);
            }
            "default" => {
                p.default = Some(v.as_object().cloned().ok_or("`default` must be a mapping")?);
            }
            "workflow" => {
                p.workflow = Some(v.as_object().cloned().ok_or("`workflow` must be a mapping")?);
            }
            "include" => p.warnings.push(
                "`include` is not imported: chant builds the whole pipeline from its own sources; import each included file on its own".into(),
            ),
            k if LEGACY_DEFAULTS.contains(&k) => {
                legacy.insert(k.to_owned(), v.clone());
            }
            name => match v {
                Json::Object(job) => p.jobs.push((name.to_owned(), job.clone())),
                other => p.warnings.push(format!(
                    "top-level `{name}` is not a job (it holds {}); left out",
                    kind_of(other)
                )),
            },
        }
    }
    if !legacy.is_empty() {
        let keys: Vec<String> = legacy.keys().cloned().collect();
        p.warnings.push(format!(
            "top-level {} moved under `default:` (GitLab's deprecated global keywords)",
            keys.join(", ")
        ));
        let default = p.default.get_or_insert_with(Map::new);
        for (k, v) in legacy {
            default.entry(k).or_insert(v);
        }
    }
    Ok(p)
}

fn kind_of(v: &Json) -> &'static str {
    match v {
        Json::Null => "null",
        Json::Bool(_) => "a boolean",
        Json::Number(_) => "a number",
        Json::String(_) => "a string",
        Json::Array(_) => "a list",
        Json::Object(_) => "a mapping",
    }
}

/// `pytest-unit` → `pytestUnit` when that kebab-cases back to the name.
fn export_name(name: &str) -> Option<String> {
    let mut out = String::new();
    for (i, part) in name.split('-').enumerate() {
        if i == 0 {
            out.push_str(part);
        } else {
            let mut chars = part.chars();
            let first = chars.next()?;
            if !first.is_ascii_lowercase() {
                return None;
            }
            out.push(first.to_ascii_uppercase());
            out.extend(chars);
        }
    }
    (is_identifier(&out) && !chant_core::names::is_reserved(&out) && kebab(&out) == name)
        .then_some(out)
}

/// A local identifier for a name that cannot be its own export.
fn local_name(name: &str) -> String {
    let mut out = String::new();
    let mut upper = false;
    for c in name.chars() {
        if c.is_ascii_alphanumeric() {
            if upper && !out.is_empty() {
                out.push(c.to_ascii_uppercase());
            } else {
                out.push(c);
            }
            upper = false;
        } else {
            upper = true;
        }
    }
    if out.is_empty() || out.starts_with(|c: char| c.is_ascii_digit()) {
        out.insert(0, '_');
    }
    let mut chars = out.chars();
    let first = chars.next().map(|c| c.to_ascii_lowercase());
    first.into_iter().chain(chars).collect()
}

/// A TypeScript source being written: imports used, and the text.
struct Source {
    classes: Vec<&'static str>,
    reference: bool,
    text: String,
}

impl Source {
    fn new() -> Source {
        Source {
            classes: Vec::new(),
            reference: false,
            text: String::new(),
        }
    }

    fn class(&mut self, name: &'static str) -> &'static str {
        if !self.classes.contains(&name) {
            self.classes.push(name);
        }
        name
    }

    fn finish(mut self) -> String {
        self.classes.sort_unstable();
        let mut names: Vec<&str> = self.classes.clone();
        if self.reference {
            names.push("reference");
        }
        format!(
            "import {{ {} }} from \"@intentius/chant-lexicon-gitlab\";\n{}",
            names.join(", "),
            self.text
        )
    }
}

fn string(s: &str) -> String {
    serde_json::to_string(s).unwrap_or_else(|_| "\"\"".into())
}

fn key(k: &str) -> String {
    if is_identifier(k) {
        k.to_owned()
    } else {
        string(k)
    }
}

/// Which class wraps the value at `key` (directly, or each item of a list) in a section of
/// `section` kind.
fn wrapper(section: &str, key: &str, item: bool) -> Option<&'static str> {
    Some(match (section, key, item) {
        ("workflow", "rules", true) => "WorkflowRule",
        ("workflow", "auto_cancel", false) => "AutoCancel",
        (_, "image", false) => "Image",
        (_, "artifacts", false) => "Artifacts",
        (_, "cache", _) => "Cache",
        ("job", "rules", true) => "Rule",
        ("job", "environment", false) => "Environment",
        (_, "services", true) => "Service",
        (_, "retry", false) => "Retry",
        ("job", "parallel", false) => "Parallel",
        ("job", "trigger", false) => "Trigger",
        ("job", "release", false) => "Release",
        ("job", "inherit", false) => "Inherit",
        ("job", "allow_failure", false) => "AllowFailure",
        _ => return None,
    })
}

const LINE: usize = 96;

impl Source {
    /// `value` as a TypeScript expression at `indent` (spaces of the line it starts on).
    fn value(
        &mut self,
        v: &Json,
        indent: usize,
        section: &str,
        key: Option<&str>,
        item: bool,
    ) -> String {
        if let (Json::Object(o), Some(k)) = (v, key)
            && !o.contains_key("!reference")
            && let Some(class) = wrapper(section, k, item)
        {
            let class = self.class(class);
            return format!("new {class}({})", self.object(o, indent, section));
        }
        match v {
            Json::Null => "null".into(),
            Json::Bool(b) => b.to_string(),
            Json::Number(n) => n.to_string(),
            Json::String(s) => string(s),
            Json::Array(items) => {
                let inline: Option<Vec<String>> = items
                    .iter()
                    .map(|i| match i {
                        Json::Null | Json::Bool(_) | Json::Number(_) | Json::String(_) => {
                            Some(self.value(i, indent, section, None, true))
                        }
                        _ => None,
                    })
                    .collect();
                if let Some(parts) = inline {
                    let one = format!("[{}]", parts.join(", "));
                    if indent + one.len() <= LINE {
                        return one;
                    }
                }
                if items.is_empty() {
                    return "[]".into();
                }
                let pad = " ".repeat(indent + 2);
                let mut out = String::from("[\n");
                for i in items {
                    let text = self.value(i, indent + 2, section, key, true);
                    out.push_str(&format!("{pad}{text},\n"));
                }
                out.push_str(&" ".repeat(indent));
                out.push(']');
                out
            }
            Json::Object(o) => {
                if let (Some(Json::Array(path)), 1) = (o.get("!reference"), o.len()) {
                    self.reference = true;
                    let args: Vec<String> = path
                        .iter()
                        .map(|p| p.as_str().map_or_else(|| p.to_string(), string))
                        .collect();
                    return format!("reference({})", args.join(", "));
                }
                self.object(o, indent, section)
            }
        }
    }

    fn object(&mut self, o: &Map<String, Json>, indent: usize, section: &str) -> String {
        if o.is_empty() {
            return "{}".into();
        }
        let pad = " ".repeat(indent + 2);
        let mut out = String::from("{\n");
        for (k, v) in o {
            let text = self.value(v, indent + 2, section, Some(k), false);
            out.push_str(&format!("{pad}{}: {text},\n", key(k)));
        }
        out.push_str(&" ".repeat(indent));
        out.push('}');
        out
    }
}

/// A file name part for a stage: letters, digits and dashes.
fn slug(s: &str) -> String {
    let out: String = s
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() {
                c.to_ascii_lowercase()
            } else {
                '-'
            }
        })
        .collect();
    let out = out.trim_matches('-').to_owned();
    if out.is_empty() { "stage".into() } else { out }
}

/// Renames `from` to `to` wherever a job names another: `needs` (names or `{job}`),
/// `dependencies`, `extends`, and the first element of `!reference` tags.
fn rename_references(v: &mut Json, from: &str, to: &str) {
    match v {
        Json::Object(o) => {
            if let Some(Json::Array(path)) = o.get_mut("!reference")
                && path.first().and_then(Json::as_str) == Some(from)
            {
                path[0] = Json::String(to.to_owned());
            }
            for (k, item) in o.iter_mut() {
                match (k.as_str(), item) {
                    ("needs" | "dependencies" | "extends", Json::String(s)) if s == from => {
                        *s = to.to_owned();
                    }
                    ("needs" | "dependencies" | "extends", Json::Array(list)) => {
                        for entry in list {
                            match entry {
                                Json::String(s) if s == from => *s = to.to_owned(),
                                Json::Object(n) => {
                                    if let Some(Json::String(s)) = n.get_mut("job")
                                        && s == from
                                    {
                                        *s = to.to_owned();
                                    }
                                }
                                other => rename_references(other, from, to),
                            }
                        }
                    }
                    (_, other) => rename_references(other, from, to),
                }
            }
        }
        Json::Array(items) => items
            .iter_mut()
            .for_each(|i| rename_references(i, from, to)),
        _ => {}
    }
}

/// Job names chant cannot keep: an identifier with capitals builds under its kebab-case
/// (`buildWheel` → `build-wheel`), so those jobs are renamed, references with them.
fn apply_renames(p: &mut Pipeline) -> Result<(), String> {
    let renames: Vec<(String, String)> = p
        .jobs
        .iter()
        .filter(|(n, _)| is_identifier(n) && kebab(n) != *n)
        .map(|(n, _)| (n.clone(), kebab(n)))
        .collect();
    for (from, to) in &renames {
        if p.jobs.iter().any(|(n, _)| n == to) {
            return Err(format!(
                "jobs \"{from}\" and \"{to}\" would both build as \"{to}\" (chant names jobs by the kebab-case of their export); rename one first"
            ));
        }
        p.warnings.push(format!(
            "job \"{from}\" is renamed \"{to}\" (chant names jobs by the kebab-case of their export), and the references to it with it"
        ));
        for (name, job) in p.jobs.iter_mut() {
            if name == from {
                *name = to.clone();
            }
            let mut v = Json::Object(std::mem::take(job));
            rename_references(&mut v, from, to);
            if let Json::Object(o) = v {
                *job = o;
            }
        }
    }
    Ok(())
}

/// The TypeScript files for `pipeline`.
pub fn generate(mut p: Pipeline) -> Result<Imported, String> {
    apply_renames(&mut p)?;
    let mut warnings = p.warnings;
    // Names: exports where kebab-case gives the name back, else a string export.
    let mut taken: Vec<String> = ["variables", "defaults", "workflow", "reference"]
        .iter()
        .map(|s| s.to_string())
        .collect();
    let mut idents: Vec<(String, bool)> = Vec::new();
    for (name, _) in &p.jobs {
        let (mut ident, direct) = match export_name(name) {
            Some(e) if !taken.contains(&e) => (e, true),
            _ => (local_name(name), false),
        };
        if !direct {
            let base = ident.clone();
            let mut n = 2;
            while taken.contains(&ident) || chant_core::names::is_reserved(&ident) {
                ident = format!("{base}{n}");
                n += 1;
            }
        }
        taken.push(ident.clone());
        idents.push((ident, direct));
    }
    // Stages: the declared order, then any a job uses without declaring.
    let mut stages = p.stages.clone();
    for (_, job) in &p.jobs {
        if let Some(s) = job.get("stage").and_then(Json::as_str)
            && !stages.iter().any(|x| x == s)
        {
            stages.push(s.to_owned());
        }
    }
    for s in &p.stages {
        if !p
            .jobs
            .iter()
            .any(|(_, j)| j.get("stage").and_then(Json::as_str) == Some(s.as_str()))
        {
            warnings.push(format!(
                "stage \"{s}\" has no jobs; chant lists the stages its jobs use, so it is left out"
            ));
        }
    }
    let mut files: Vec<Generated> = Vec::new();
    let width = stages.len().to_string().len().max(2);
    // Jobs without a stage: hidden templates (and stage-less jobs) come first.
    let groups: Vec<(String, Option<&str>)> = std::iter::once(("00-templates".to_owned(), None))
        .chain(
            stages
                .iter()
                .enumerate()
                .map(|(i, s)| (format!("{:0width$}-{}", i + 1, slug(s)), Some(s.as_str()))),
        )
        .collect();
    for (file, stage) in groups {
        let members: Vec<usize> = (0..p.jobs.len())
            .filter(|&i| p.jobs[i].1.get("stage").and_then(Json::as_str) == stage)
            .collect();
        if members.is_empty() {
            continue;
        }
        let mut src = Source::new();
        let job = src.class("Job");
        let mut exports = Vec::new();
        for i in members {
            let (name, props) = &p.jobs[i];
            let (ident, direct) = &idents[i];
            let body = src.object(props, 0, "job");
            if *direct {
                src.text
                    .push_str(&format!("\nexport const {ident} = new {job}({body});\n"));
            } else {
                src.text
                    .push_str(&format!("\nconst {ident} = new {job}({body});\n"));
                exports.push(format!("{ident} as {}", string(name)));
            }
        }
        if !exports.is_empty() {
            src.text
                .push_str(&format!("\nexport {{ {} }};\n", exports.join(", ")));
        }
        files.push(Generated {
            path: format!("{file}.ts"),
            content: src.finish(),
        });
    }
    if p.variables.is_some() || p.default.is_some() || p.workflow.is_some() {
        let mut src = Source::new();
        for (ident, class, section, props) in [
            ("variables", "Variables", "variables", &p.variables),
            ("defaults", "Default", "default", &p.default),
            ("workflow", "Workflow", "workflow", &p.workflow),
        ] {
            if let Some(props) = props {
                let class = src.class(class);
                let body = src.object(props, 0, section);
                src.text
                    .push_str(&format!("\nexport const {ident} = new {class}({body});\n"));
            }
        }
        files.push(Generated {
            path: "pipeline.ts".into(),
            content: src.finish(),
        });
    }
    Ok(Imported {
        lexicon: "gitlab",
        files,
        warnings,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_template_no_importer_recognises_names_what_each_looks_for() {
        let registry = chant_core::lexicon::Registry::new(vec![Box::new(crate::Gitlab)]);
        let cfn = serde_json::json!({"AWSTemplateFormatVersion": "2010-09-09"});
        let names = chant_core::import::importers(&registry);
        assert_eq!(names, ["gitlab"]);
        let source = std::path::Path::new("cfn.json");
        assert_eq!(
            chant_core::import::import(&registry, &cfn, source, &names).unwrap_err(),
            "Could not detect template lexicon. No installed lexicon recognizes this template: cfn.json (gitlab looks for a `stages` list or a job with script, trigger, run, extends, stage or needs)"
        );
    }

    #[test]
    fn names_round_trip_through_kebab_case() {
        assert_eq!(export_name("pytest-unit").as_deref(), Some("pytestUnit"));
        assert_eq!(export_name("ruff_check").as_deref(), Some("ruff_check"));
        assert_eq!(export_name("build").as_deref(), Some("build"));
        for none in [
            "buildWheel",
            "test:unit",
            ".base",
            "deploy prod",
            "e2e-1",
            "new",
            "a--b",
        ] {
            assert_eq!(export_name(none), None, "{none}");
        }
        assert_eq!(local_name("test:unit"), "testUnit");
        assert_eq!(local_name(".base"), "base");
        assert_eq!(local_name("Deploy Prod"), "deployProd");
        assert_eq!(local_name("1st"), "_1st");
    }

    #[test]
    fn capitalised_identifier_names_are_renamed_with_their_references() {
        let p = parse(&json!({
            "buildWheel": {"stage": "b", "script": ["x"]},
            "ship": {"stage": "c", "needs": ["buildWheel", {"job": "buildWheel", "artifacts": true}], "dependencies": ["buildWheel"], "script": [{"!reference": ["buildWheel", "script"]}]},
        }))
        .unwrap();
        let out = generate(p).unwrap();
        assert!(
            out.files
                .iter()
                .any(|f| f.content.contains("export const buildWheel = new Job("))
        );
        let ship = &out
            .files
            .iter()
            .find(|f| f.content.contains("ship"))
            .unwrap()
            .content;
        assert!(
            ship.contains("needs: [\n    \"build-wheel\",\n    {\n      job: \"build-wheel\","),
            "{ship}"
        );
        assert!(
            ship.contains("dependencies: [\"build-wheel\"]")
                && ship.contains("reference(\"build-wheel\", \"script\")"),
            "{ship}"
        );
        assert_eq!(
            out.warnings,
            [
                "job \"buildWheel\" is renamed \"build-wheel\" (chant names jobs by the kebab-case of their export), and the references to it with it"
            ]
        );
        let clash =
            parse(&json!({"buildWheel": {"script": ["x"]}, "build-wheel": {"script": ["y"]}}))
                .unwrap();
        assert!(
            generate(clash)
                .unwrap_err()
                .starts_with("jobs \"buildWheel\" and \"build-wheel\" would both build as")
        );
    }

    #[test]
    fn detection() {
        assert!(detect(&json!({"stages": ["a"]})));
        assert!(detect(&json!({"build": {"script": ["make"]}})));
        assert!(!detect(
            &json!({"AWSTemplateFormatVersion": "2010-09-09", "Resources": {}})
        ));
        assert!(!detect(&json!([1, 2])));
    }

    #[test]
    fn files_per_stage_with_names_kept() {
        let p = parse(&json!({
            "stages": ["build", "test", "unused"],
            "variables": {"GLOBAL": "1"},
            "image": "node:22",
            ".base": {"tags": ["docker"]},
            "compile": {"stage": "build", "extends": ".base", "script": ["make"], "artifacts": {"paths": ["out/"], "expire_in": "1 day"}},
            "test:unit": {"stage": "test", "needs": ["compile"], "script": [{"!reference": [".base", "script"]}, "make test"], "rules": [{"if": "$CI"}]},
        }))
        .unwrap();
        let out = generate(p).unwrap();
        let names: Vec<&str> = out.files.iter().map(|f| f.path.as_str()).collect();
        assert_eq!(
            names,
            [
                "00-templates.ts",
                "01-build.ts",
                "02-test.ts",
                "pipeline.ts"
            ]
        );
        assert_eq!(
            out.files[2].content,
            "import { Job, Rule, reference } from \"@intentius/chant-lexicon-gitlab\";\n\nconst testUnit = new Job({\n  stage: \"test\",\n  needs: [\"compile\"],\n  script: [\n    reference(\".base\", \"script\"),\n    \"make test\",\n  ],\n  rules: [\n    new Rule({\n      if: \"$CI\",\n    }),\n  ],\n});\n\nexport { testUnit as \"test:unit\" };\n"
        );
        assert!(out.files[1].content.contains("export const compile = new Job({\n  stage: \"build\",\n  extends: \".base\",\n  script: [\"make\"],\n  artifacts: new Artifacts({\n"), "{}", out.files[1].content);
        assert!(
            out.files[3]
                .content
                .contains("export const defaults = new Default({\n  image: \"node:22\",\n});")
        );
        assert_eq!(
            out.warnings,
            [
                "top-level image moved under `default:` (GitLab's deprecated global keywords)",
                "stage \"unused\" has no jobs; chant lists the stages its jobs use, so it is left out"
            ]
        );
    }
}
