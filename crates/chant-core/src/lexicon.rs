//! The lexicon abstraction: a lexicon as a set of optional capabilities (runtime modules,
//! catalog, serializer, post-synth checks, lint rules, importer, composites, templates, plugin
//! tools and resources, a live-state observer, Op activities), the [`Registry`] every lookup goes through, and
//! the data they exchange.

use serde_json::Value as Json;

use crate::discover::Discovery;

/// One entry of a lexicon's surface catalog.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CatalogEntry {
    pub class_name: String,
    /// `resource` or `property`.
    pub kind: String,
    pub resource_type: String,
    pub attrs: Vec<String>,
    /// `(name, required)`.
    pub props: Vec<(String, bool)>,
}

/// A lexicon's classes, from its committed surface snapshot.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Catalog {
    pub entries: Vec<CatalogEntry>,
}

/// A surface snapshot as committed: `{"schemaVersion": 1, "entries": {<ClassName>: …}}`.
#[derive(serde::Deserialize)]
struct Surface {
    entries: serde_json::Map<String, Json>,
}

/// One class of a surface snapshot; `props` are `"<name>:<required>"`. Members chant does
/// not read yet (`createOnly`, `taggable`) are passed over.
#[derive(serde::Deserialize)]
#[serde(rename_all = "camelCase")]
struct SurfaceEntry {
    #[serde(default = "resource_kind")]
    kind: String,
    #[serde(default)]
    resource_type: String,
    #[serde(default)]
    attrs: Vec<String>,
    #[serde(default)]
    props: Vec<String>,
}

fn resource_kind() -> String {
    "resource".to_owned()
}

impl Catalog {
    /// Parses a surface snapshot, classes in the order written; an entry that is not one is
    /// an error naming its class.
    pub fn from_surface_json(text: &str) -> Result<Catalog, String> {
        let surface: Surface =
            serde_json::from_str(text).map_err(|e| format!("catalog is not a surface: {e}"))?;
        let entries = surface
            .entries
            .into_iter()
            .map(|(class, e)| {
                let e: SurfaceEntry = serde_json::from_value(e)
                    .map_err(|err| format!("catalog entry {class}: {err}"))?;
                Ok(CatalogEntry {
                    class_name: class,
                    kind: e.kind,
                    resource_type: e.resource_type,
                    attrs: e.attrs,
                    props: e
                        .props
                        .into_iter()
                        .map(|p| match p.rsplit_once(':') {
                            Some((name, req)) => (name.to_owned(), req == "true"),
                            None => (p, false),
                        })
                        .collect(),
                })
            })
            .collect::<Result<_, String>>()?;
        Ok(Catalog { entries })
    }

    /// `chant://<lexicon>/resource-catalog`: `[{className, resourceType, kind}]` in snapshot order.
    pub fn resource_catalog_json(&self) -> String {
        let entries: Vec<Json> = self
            .entries
            .iter()
            .map(|e| serde_json::json!({"className": e.class_name, "resourceType": e.resource_type, "kind": e.kind}))
            .collect();
        canon::to_compact(&Json::Array(entries))
    }
}

/// A composite's catalog entry: `{name, lexicon, description, bundles, params}`.
#[derive(Clone, Debug, PartialEq)]
pub struct CompositeEntry {
    pub name: String,
    pub lexicon: String,
    pub description: String,
    pub bundles: Vec<String>,
    /// `{name, type, required, description}` each.
    pub params: Vec<Json>,
}

impl CompositeEntry {
    pub fn to_json(&self) -> Json {
        serde_json::json!({
            "name": self.name,
            "lexicon": self.lexicon,
            "description": self.description,
            "bundles": self.bundles,
            "params": self.params,
        })
    }

    /// Parses a lexicon's `composites.json` (an array of entries); an entry that is not one
    /// is an error naming its place.
    pub fn parse_all(lexicon: &str, text: &str) -> Result<Vec<CompositeEntry>, String> {
        #[derive(serde::Deserialize)]
        #[serde(deny_unknown_fields)]
        struct Listed {
            name: String,
            #[serde(default)]
            description: String,
            #[serde(default)]
            bundles: Vec<String>,
            #[serde(default)]
            params: Vec<Json>,
        }
        let listed: Vec<Listed> = serde_json::from_str(text)
            .map_err(|e| format!("composites catalog is not a list of composites: {e}"))?;
        Ok(listed
            .into_iter()
            .map(|c| CompositeEntry {
                name: c.name,
                lexicon: lexicon.to_owned(),
                description: c.description,
                bundles: c.bundles,
                params: c.params,
            })
            .collect())
    }
}

/// A file a scaffold or init template provides.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TemplateFile {
    pub filename: String,
    pub content: String,
}

/// A named set of init template files (`default` is the lexicon's default set).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TemplateSet {
    pub name: String,
    pub files: Vec<TemplateFile>,
}

impl TemplateSet {
    /// Sets from a lexicon's embedded `(name, [(file, content)])` table.
    pub fn from_static(sets: &[(&str, &[(&str, &str)])]) -> Vec<TemplateSet> {
        sets.iter()
            .map(|(name, files)| TemplateSet {
                name: (*name).to_owned(),
                files: files
                    .iter()
                    .map(|(f, c)| TemplateFile {
                        filename: (*f).to_owned(),
                        content: (*c).to_owned(),
                    })
                    .collect(),
            })
            .collect()
    }
}

/// What a serializer produced: structured, so the core never re-parses text.
#[derive(Clone, Debug, PartialEq)]
pub enum Output {
    /// A JSON value (CloudFormation-like): written as canonical JSON, or as safe-style YAML
    /// with `--format yaml`.
    Json(Json),
    /// YAML documents (Kubernetes-like), written in the safe style whatever the format.
    Yaml(Vec<Json>),
    /// Text the lexicon rendered itself (GitLab's reference-parity YAML, a compose file),
    /// written as it is whatever the format.
    Text(String),
}

/// A serializer's result: the output, additional files and notes.
#[derive(Clone, Debug, PartialEq)]
pub struct Serialized {
    pub output: Output,
    /// Additional files `(path, content)`.
    pub files: Vec<(String, String)>,
    pub warnings: Vec<String>,
}

impl Serialized {
    /// Just this output: no files, no warnings.
    pub fn of(output: Output) -> Serialized {
        Serialized {
            output,
            files: Vec::new(),
            warnings: Vec::new(),
        }
    }
}

/// A post-synth finding, printed as `warning: [<entity>] <message> (<lexicon>)`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Finding {
    pub entity: String,
    pub message: String,
    pub error: bool,
}

/// An example a lexicon ships (`chant://<lexicon>/examples/<name>`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Example {
    pub name: String,
    pub description: String,
    pub content: String,
}

impl Example {
    /// The plugin resources of `examples`: `examples/<name>`, TypeScript.
    pub fn resources(examples: &[Example]) -> Vec<PluginResource> {
        examples
            .iter()
            .map(|e| PluginResource {
                uri: format!("examples/{}", e.name),
                name: e.name.clone(),
                description: e.description.clone(),
                mime_type: "text/typescript".into(),
            })
            .collect()
    }

    /// The `(MIME type, text)` of the example a plugin resource URI names.
    pub fn read(examples: &[Example], uri: &str) -> Option<(String, String)> {
        let name = uri.strip_prefix("examples/")?;
        examples
            .iter()
            .find(|e| e.name == name)
            .map(|e| ("text/typescript".into(), e.content.clone()))
    }
}

/// A lexicon: what chant needs to evaluate, build, lint, import, search and scaffold for one
/// target. Only [`Lexicon::name`] is required; every capability defaults to having none, so a
/// lexicon implements just what it offers. Lexicons are found through a [`Registry`], never by
/// name in code outside them.
pub trait Lexicon: Send + Sync {
    /// e.g. `gitlab`; projects import its runtime module as `@intentius/chant-lexicon-<name>`.
    fn name(&self) -> &'static str;

    /// This lexicon's version (its crate's).
    fn version(&self) -> &'static str;

    /// Which of its runtime modules `@intentius/chant-lexicon-<name>/<subpath>` loads (`""`
    /// for the bare `@intentius/chant-lexicon-<name>`): that module's subpath, so several
    /// specifiers can share one module; `None`: no such module.
    fn runtime_subpath(&self, _subpath: &str) -> Option<String> {
        None
    }

    /// TypeScript source of its runtime module at a subpath [`Lexicon::runtime_subpath`]
    /// gave. Asked when a project first imports it, so a lexicon of thousands of classes
    /// builds only the modules a project uses.
    fn runtime_module(&self, _subpath: &str) -> Option<String> {
        None
    }

    /// A module exporting just `names` of the runtime module at `subpath`, for a project
    /// file that imports only those: its subpath (which [`Lexicon::runtime_subpath`] and
    /// [`Lexicon::runtime_module`] then answer). `None`: load the whole module. A lexicon of
    /// thousands of classes answers this so a project pays only for the classes it names.
    fn runtime_pick(&self, _subpath: &str, _names: &[String]) -> Option<String> {
        None
    }

    /// The classes its runtime module exports (search, the catalog resource).
    fn catalog(&self) -> &Catalog {
        static EMPTY: Catalog = Catalog {
            entries: Vec::new(),
        };
        &EMPTY
    }

    /// Serializes `entities` (indices into `discovery.entities`, entity order) of this
    /// lexicon; `None`: this lexicon has no serializer (a build says so and goes on).
    fn serialize(
        &self,
        _discovery: &Discovery,
        _entities: &[usize],
    ) -> Option<Result<Serialized, String>> {
        None
    }

    /// A declarable that is a child project (a nested stack): the directory to build, relative
    /// to the file that declares it, and the name of the file its output is written as. The
    /// build builds it (inside the project's walls) and adds that file; the lexicon's
    /// serializer writes the parent's side (the resource that points at the file).
    fn child_project(&self, _decl: &crate::model::Declarable) -> Option<(String, String)> {
        None
    }

    /// The file a child project's build is written as, from its output: the lexicon checks it
    /// against the parent that declares it (entity `entity` of `d`) and may complete it. An
    /// error fails the parent's build.
    fn child_template(
        &self,
        _d: &Discovery,
        _entity: usize,
        child_output: &str,
    ) -> Result<String, String> {
        Ok(format!("{child_output}\n"))
    }

    /// Checks run by `chant build` on the serialized output (`output`, what this lexicon's
    /// serializer just produced for `entities`); never fail a build unless `error`.
    fn post_synth_checks(
        &self,
        _discovery: &Discovery,
        _entities: &[usize],
        _output: &Output,
    ) -> Vec<Finding> {
        Vec::new()
    }

    /// The lint rules it adds (run after the core rules).
    fn lint_rules(&self) -> Vec<chant_lint::Rule> {
        Vec::new()
    }

    /// Its intrinsic functions whose calls are statically evaluable (`Ref`, `Join`): EVL001
    /// lets a call of one through and checks its arguments.
    fn intrinsics(&self) -> &[&'static str] {
        &[]
    }

    /// Its importer of existing templates, if it has one.
    fn importer(&self) -> Option<&dyn Importer> {
        None
    }

    fn composites(&self) -> &[CompositeEntry] {
        &[]
    }

    /// Init and scaffold template sets.
    fn templates(&self) -> &[TemplateSet] {
        &[]
    }

    /// Markdown appended to `chant://context`.
    fn context(&self) -> &str {
        ""
    }

    fn examples(&self) -> &[Example] {
        &[]
    }

    /// Its tools and resources for the MCP server, if it adds any.
    fn plugin(&self) -> Option<&dyn Plugin> {
        None
    }

    /// Its live-state observer (`describeResources`), if it can read deployed state.
    fn observer(&self) -> Option<&dyn Observer> {
        None
    }

    /// The Op activities it offers: what an Op step's `fn` may name besides the runtime's
    /// own (`shellCmd`), for Ops run in a project that uses this lexicon.
    fn activities(&self) -> Vec<&dyn Activity> {
        Vec::new()
    }

    /// Activities its builders emit that other lexicons provide.
    fn activity_hints(&self) -> &[ActivityHint] {
        &[]
    }
}

/// One Op activity: an effect an Op step names by `fn` (`kubectlApply`, `awsApply`, …). The
/// runtime resolves it by name, retries it by the step's profile and records the outcome;
/// an activity runs once per attempt and outside the evaluation sandbox (it is the Op's
/// effect).
pub trait Activity: Send + Sync {
    /// The name steps call it by; unique among a project's activities.
    fn name(&self) -> &'static str;

    /// One attempt. It must end by [`ActivityCall::timeout_ms`] and soon after
    /// [`ActivityCall::cancel`] is set: the runtime cannot stop work in its own process for it.
    fn run(&self, call: &ActivityCall<'_>) -> Result<Json, ActivityError>;
}

/// What one attempt of an activity is given.
pub struct ActivityCall<'a> {
    /// The step's `args`, as declared.
    pub args: Option<&'a Json>,
    /// The project directory the Op runs in.
    pub cwd: &'a std::path::Path,
    /// How long this attempt may take (the step's profile).
    pub timeout_ms: u64,
    /// Set when the run is cancelled.
    pub cancel: &'a std::sync::atomic::AtomicBool,
    /// What the front end running the Op does for activities that need chant itself.
    pub host: &'a dyn ActivityHost,
}

/// A step's `args.env` as the variables a command gets: each value as text (a string as it
/// is, anything else as its JSON).
pub fn step_env(args: Option<&Json>) -> Vec<(String, String)> {
    args.and_then(|a| a.get("env"))
        .and_then(Json::as_object)
        .into_iter()
        .flatten()
        .map(|(k, v)| {
            (
                k.clone(),
                v.as_str().map_or_else(|| v.to_string(), str::to_owned),
            )
        })
        .collect()
}

/// chant's own work an activity may ask of the process running the Op (`chantBuild` builds a
/// project in process; `lifecycleSnapshot` records one), so a lexicon's activity needs no
/// chant binary on PATH and knows nothing of how the front end is wired.
pub trait ActivityHost: Send + Sync {
    /// Builds the chant project `req.dir` names and, with `req.output`, writes it there (and
    /// the extra files beside it). Errors and error findings fail it; the answer is
    /// `{resourceCount, output, warnings}`.
    /// A path outside the repository or not there fails as `InvalidArgs` (never retried).
    fn build(
        &self,
        req: &BuildRequest<'_>,
        cancel: &std::sync::atomic::AtomicBool,
    ) -> Result<Json, ActivityError>;

    /// Captures the deployed state of `environment` through the project's observers.
    fn lifecycle_snapshot(&self, environment: &str) -> Result<Json, String>;

    /// The run's project built (stopped by `cancel` or after `timeout_ms`) and its digest
    /// diffed against each lexicon's last snapshot in `environment`: `{<lexicon>: {added,
    /// removed, changed, unchanged, lexiconVersionChanges}}`, for every lexicon the build
    /// declares or the environment has a snapshot of.
    fn lifecycle_diff(
        &self,
        environment: &str,
        cancel: &std::sync::atomic::AtomicBool,
        timeout_ms: u64,
    ) -> Result<Json, String>;

    /// `path` (relative to the run's directory) as an existing directory inside the
    /// repository, symlinks resolved; anything else fails as `InvalidArgs`.
    fn project_dir(&self, path: &std::path::Path) -> Result<std::path::PathBuf, ActivityError>;

    /// `path` (relative to the run's directory) as an existing file or directory inside the
    /// repository, symlinks resolved (absolute); anything else fails as `InvalidArgs`. What an
    /// activity hands a tool to read goes through here.
    fn project_path(&self, path: &std::path::Path) -> Result<std::path::PathBuf, ActivityError>;

    /// Runs `sh -c <cmd>` in `dir` (relative to the run's directory) with `env` added, in its
    /// own process group, ended by `timeout_ms` or a cancel: its stdout, trimmed.
    fn shell(
        &self,
        cmd: &str,
        dir: Option<&str>,
        env: &[(String, String)],
        timeout_ms: u64,
        cancel: &std::sync::atomic::AtomicBool,
    ) -> Result<String, ActivityError>;
}

/// What `chantBuild` asks [`ActivityHost::build`] for.
#[derive(Clone, Copy, Debug)]
pub struct BuildRequest<'a> {
    /// The project, relative to the run's directory.
    pub dir: &'a std::path::Path,
    /// Only this lexicon's part.
    pub lexicon: Option<&'a str>,
    /// Where to write it, relative to the run's directory; `None` builds without writing.
    pub output: Option<&'a std::path::Path>,
    /// YAML instead of JSON for JSON-producing lexicons.
    pub yaml: bool,
}

/// An activity a lexicon's builders emit that another lexicon provides: said when a step
/// names it and the provider is not in the project (or not in this chant).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ActivityHint {
    pub activity: &'static str,
    /// The lexicon that provides it.
    pub provider: &'static str,
}

/// Why an attempt failed: `name` is what a profile's non-retryable list names
/// (`TimeoutError`, `Cancelled` and `Error` are the runtime's own); `message` is recorded.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ActivityError {
    pub name: String,
    pub message: String,
}

impl ActivityError {
    /// Names of errors no retry can mend (bad arguments, a tool that is not installed): the
    /// runtime never retries them, whatever the profile.
    pub const PERMANENT: [&'static str; 2] = ["InvalidArgs", "ToolMissing"];

    pub fn new(name: &str, message: impl Into<String>) -> ActivityError {
        ActivityError {
            name: name.to_owned(),
            message: message.into(),
        }
    }
}

/// Turns an existing template (read as JSON) into chant TypeScript.
pub trait Importer: Send + Sync {
    /// Whether `template` is one this importer reads.
    fn detect(&self, template: &Json) -> bool;

    /// What [`Importer::detect`] looks for, said when no importer recognises a template.
    fn looks_for(&self) -> &'static str;

    /// Parses a detected template and generates the files.
    fn import(&self, template: &Json) -> Result<Imported, String>;
}

/// The tools and resources a lexicon adds to the MCP server; each defaults to nothing.
pub trait Plugin: Send + Sync {
    /// Tools it adds to the MCP server (namespaced `<lexicon>:<name>` there).
    fn plugin_tools(&self) -> Vec<PluginTool> {
        Vec::new()
    }

    /// Runs plugin tool `name` against a discovered project (`entities` are this lexicon's).
    fn call_plugin_tool(
        &self,
        name: &str,
        _args: &Json,
        _d: &Discovery,
        _entities: &[usize],
    ) -> Result<PluginOutput, String> {
        Err(format!("Unknown tool: {name}"))
    }

    /// Resources it adds (namespaced `chant://<lexicon>/…` by the server).
    fn plugin_resources(&self) -> Vec<PluginResource> {
        Vec::new()
    }

    /// Reads a plugin resource by the URI it declared: `(mime type, text)`.
    fn read_plugin_resource(&self, _uri: &str) -> Option<(String, String)> {
        None
    }
}

/// One generated file, relative to the output directory.
#[derive(Clone, Debug, PartialEq)]
pub struct Generated {
    pub path: String,
    pub content: String,
}

/// What an importer produced.
#[derive(Clone, Debug, PartialEq)]
pub struct Imported {
    pub lexicon: &'static str,
    pub files: Vec<Generated>,
    pub warnings: Vec<String>,
}

/// Reads the deployed state of an environment's resources (`describeResources`).
pub trait Observer: Send + Sync {
    /// The lexicon's view of the resources `entities` declare, as deployed in `environment`.
    fn describe_resources(
        &self,
        environment: &str,
        discovery: &Discovery,
        entities: &[usize],
    ) -> Result<Json, String>;
}

/// The lexicons a process has, in registration order: the one place chant finds a lexicon.
#[derive(Default)]
pub struct Registry {
    lexicons: Vec<Box<dyn Lexicon>>,
}

impl Registry {
    pub fn new(lexicons: Vec<Box<dyn Lexicon>>) -> Registry {
        Registry { lexicons }
    }

    pub fn get(&self, name: &str) -> Option<&dyn Lexicon> {
        self.lexicons
            .iter()
            .find(|l| l.name() == name)
            .map(|l| l.as_ref())
    }

    pub fn iter(&self) -> impl Iterator<Item = &dyn Lexicon> {
        self.lexicons.iter().map(|l| l.as_ref())
    }

    /// The specifier of the runtime module a bare specifier
    /// `@intentius/chant-lexicon-<name>[/<subpath>]` loads, if one of these lexicons has it.
    pub fn resolve_runtime(&self, specifier: &str) -> Option<String> {
        let (lexicon, subpath) = split_runtime(specifier)?;
        let module = self.get(lexicon)?.runtime_subpath(subpath)?;
        Some(if module.is_empty() {
            format!("{RUNTIME_PREFIX}{lexicon}")
        } else {
            format!("{RUNTIME_PREFIX}{lexicon}/{module}")
        })
    }

    /// The specifier of a module exporting just `names` of the runtime module a bare
    /// specifier names, when its lexicon offers one ([`Lexicon::runtime_pick`]).
    pub fn resolve_pick(&self, specifier: &str, names: &[String]) -> Option<String> {
        let (lexicon, subpath) = split_runtime(specifier)?;
        let lexicon = self.get(lexicon)?;
        let module = lexicon.runtime_subpath(subpath)?;
        let picked = lexicon.runtime_pick(&module, names)?;
        Some(format!("{RUNTIME_PREFIX}{}/{picked}", lexicon.name()))
    }

    /// The source of a runtime module by the specifier [`Registry::resolve_runtime`] gave.
    pub fn runtime_module(&self, specifier: &str) -> Option<String> {
        let (lexicon, subpath) = split_runtime(specifier)?;
        self.get(lexicon)?.runtime_module(subpath)
    }

    /// The activities the lexicons named offer, each with the lexicon's name (unknown names
    /// add none), in the order the names are given.
    pub fn activities(&self, lexicons: &[String]) -> Vec<(&'static str, &dyn Activity)> {
        lexicons
            .iter()
            .filter_map(|n| self.get(n))
            .flat_map(|l| l.activities().into_iter().map(move |a| (l.name(), a)))
            .collect()
    }

    /// The intrinsic function names of the lexicons named (unknown names add none).
    pub fn intrinsics(&self, lexicons: &[String]) -> Vec<String> {
        lexicons
            .iter()
            .filter_map(|n| self.get(n))
            .flat_map(|l| l.intrinsics().iter().map(|s| (*s).to_owned()))
            .collect()
    }

    /// The rules a lint of a project using `lexicons` runs: the core rules, then each
    /// lexicon's (unknown names add none).
    pub fn lint_rules(&self, lexicons: &[String]) -> Vec<chant_lint::Rule> {
        let mut rules = chant_lint::rules::core();
        for l in lexicons.iter().filter_map(|n| self.get(n)) {
            rules.extend(l.lint_rules());
        }
        rules
    }
}

/// A lexicon's runtime module built from its catalog: its hand-written TypeScript, then one
/// `export const <Class> = declarableClass(...)` per catalog entry and per extra
/// `(class, resourceType, kind)`.
pub fn catalog_module(
    lexicon: &str,
    hand_written: &str,
    catalog: &Catalog,
    extra: &[(&str, &str, &str)],
) -> String {
    let mut src = String::from(hand_written);
    src.push_str("\nimport { declarableClass as __declarableClass } from \"@intentius/chant\";\n");
    let line = |class: &str, resource_type: &str, kind: &str, attrs: &[String]| {
        format!(
            "export const {class} = __declarableClass({lexicon:?}, {resource_type:?}, {class:?}, {kind:?}, {attrs:?});\n"
        )
    };
    for e in &catalog.entries {
        src.push_str(&line(&e.class_name, &e.resource_type, &e.kind, &e.attrs));
    }
    for (class, resource_type, kind) in extra {
        src.push_str(&line(class, resource_type, kind, &[]));
    }
    src
}

/// `@intentius/chant-lexicon-<name>[/<subpath>]` → `(name, subpath)`.
fn split_runtime(specifier: &str) -> Option<(&str, &str)> {
    let rest = specifier.strip_prefix(RUNTIME_PREFIX)?;
    Some(rest.split_once('/').unwrap_or((rest, "")))
}

/// The specifier prefix of a lexicon's runtime module.
pub const RUNTIME_PREFIX: &str = "@intentius/chant-lexicon-";

/// A tool a lexicon adds to the MCP server (namespaced `<lexicon>:<name>` there).
#[derive(Clone, Debug, PartialEq)]
pub struct PluginTool {
    pub name: String,
    /// A short human name for the tool.
    pub title: String,
    pub description: String,
    pub input_schema: Json,
    /// It only reads: it changes nothing in the project or elsewhere.
    pub read_only: bool,
}

/// What a plugin tool answers: an object or a plain string.
#[derive(Clone, Debug, PartialEq)]
pub enum PluginOutput {
    Json(Json),
    Text(String),
}

/// A resource a lexicon adds (its URI is namespaced `chant://<lexicon>/…` by the server).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PluginResource {
    pub uri: String,
    pub name: String,
    pub description: String,
    pub mime_type: String,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_shared_catalog_parses_in_order() {
        let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../../shared/catalogs");
        let mut seen = 0;
        for entry in std::fs::read_dir(&dir).unwrap() {
            let path = entry.unwrap().path();
            let text = std::fs::read_to_string(&path).unwrap();
            let c = Catalog::from_surface_json(&text).unwrap();
            let raw: Json = serde_json::from_str(&text).unwrap();
            let names: Vec<&String> = raw["entries"].as_object().unwrap().keys().collect();
            let parsed: Vec<&String> = c.entries.iter().map(|e| &e.class_name).collect();
            assert_eq!(parsed, names, "{}", path.display());
            seen += c.entries.len();
        }
        assert!(seen > 1653, "{seen}");
    }

    #[test]
    fn entries_that_are_not_entries_are_named() {
        assert_eq!(
            Catalog::from_surface_json(r#"{"entries": {"Bucket": {"attrs": "Arn"}}}"#).unwrap_err(),
            "catalog entry Bucket: invalid type: string \"Arn\", expected a sequence"
        );
        let c = Catalog::from_surface_json(
            r#"{"entries": {"B": {"resourceType": "T", "props": ["a:true", "b"]}}}"#,
        )
        .unwrap();
        assert_eq!(c.entries[0].kind, "resource");
        assert_eq!(
            c.entries[0].props,
            [("a".to_owned(), true), ("b".to_owned(), false)]
        );
        assert!(
            CompositeEntry::parse_all("x", r#"[{"name": "A", "nmae": 1}]"#)
                .unwrap_err()
                .starts_with(
                    "composites catalog is not a list of composites: unknown field `nmae`"
                )
        );
    }
}
