//! The lexicon abstraction: what a lexicon contributes (runtime module, catalog, composites,
//! serializer, post-synth checks, scaffold templates) and the catalog data format.

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

impl Catalog {
    /// Parses `{"schemaVersion":1, "entries": {<ClassName>: {kind, resourceType, attrs?, props?}}}`.
    pub fn from_surface_json(text: &str) -> Result<Catalog, String> {
        let v: Json =
            serde_json::from_str(text).map_err(|e| format!("catalog is not JSON: {e}"))?;
        let entries = v
            .get("entries")
            .and_then(Json::as_object)
            .ok_or("catalog has no entries object")?;
        let strings = |e: &Json, k: &str| -> Vec<String> {
            e.get(k)
                .and_then(Json::as_array)
                .map(|a| {
                    a.iter()
                        .filter_map(|s| s.as_str().map(str::to_owned))
                        .collect()
                })
                .unwrap_or_default()
        };
        Ok(Catalog {
            entries: entries
                .iter()
                .map(|(class, e)| CatalogEntry {
                    class_name: class.clone(),
                    kind: e
                        .get("kind")
                        .and_then(Json::as_str)
                        .unwrap_or("resource")
                        .to_owned(),
                    resource_type: e
                        .get("resourceType")
                        .and_then(Json::as_str)
                        .unwrap_or_default()
                        .to_owned(),
                    attrs: strings(e, "attrs"),
                    props: strings(e, "props")
                        .into_iter()
                        .map(|p| match p.rsplit_once(':') {
                            Some((name, req)) => (name.to_owned(), req == "true"),
                            None => (p, false),
                        })
                        .collect(),
                })
                .collect(),
        })
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

    /// Parses a lexicon's `composites.json` (an array of entries).
    pub fn parse_all(lexicon: &str, text: &str) -> Result<Vec<CompositeEntry>, String> {
        let v: Json = serde_json::from_str(text)
            .map_err(|e| format!("composites catalog is not JSON: {e}"))?;
        let items = v.as_array().ok_or("composites catalog must be an array")?;
        items
            .iter()
            .map(|c| {
                let s = |k: &str| c.get(k).and_then(Json::as_str).map(str::to_owned);
                Ok(CompositeEntry {
                    name: s("name").ok_or("a composite entry has no name")?,
                    lexicon: lexicon.to_owned(),
                    description: s("description").unwrap_or_default(),
                    bundles: c
                        .get("bundles")
                        .and_then(Json::as_array)
                        .map(|a| {
                            a.iter()
                                .filter_map(|b| b.as_str().map(str::to_owned))
                                .collect()
                        })
                        .unwrap_or_default(),
                    params: c
                        .get("params")
                        .and_then(Json::as_array)
                        .cloned()
                        .unwrap_or_default(),
                })
            })
            .collect()
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

/// What a serializer produced.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Serialized {
    pub primary: String,
    /// True when `primary` is JSON (re-rendered with sorted keys when assembled).
    pub is_json: bool,
    /// Additional files `(path, content)`.
    pub files: Vec<(String, String)>,
    pub warnings: Vec<String>,
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

/// A lexicon: everything chant needs to evaluate, build, search and scaffold for one target.
pub trait Lexicon: LexiconPlugin + Send + Sync {
    /// e.g. `gitlab`.
    fn name(&self) -> &'static str;
    /// TypeScript source of `@intentius/chant-lexicon-<name>`.
    fn runtime_module(&self) -> String;
    fn catalog(&self) -> &Catalog;
    fn composites(&self) -> &[CompositeEntry];
    /// Serializes `entities` (indices into `discovery.entities`, entity order) of this lexicon.
    fn serialize(&self, discovery: &Discovery, entities: &[usize]) -> Result<Serialized, String>;
    /// Checks run by `chant build` on the serialized output; never fail a build unless `error`.
    fn post_synth_checks(&self, discovery: &Discovery, entities: &[usize]) -> Vec<Finding>;
    fn templates(&self) -> &[TemplateSet];
    /// Markdown appended to `chant://context`.
    fn context(&self) -> &str;
    fn examples(&self) -> &[Example];
}

/// A tool a lexicon adds to the MCP server (namespaced `<lexicon>:<name>` there).
#[derive(Clone, Debug, PartialEq)]
pub struct PluginTool {
    pub name: String,
    pub description: String,
    pub input_schema: Json,
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

/// Plugin surface of a lexicon; everything defaults to nothing.
pub trait LexiconPlugin {
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

    fn plugin_resources(&self) -> Vec<PluginResource> {
        Vec::new()
    }

    /// Reads a plugin resource by the URI it declared: `(mime type, text)`.
    fn read_plugin_resource(&self, _uri: &str) -> Option<(String, String)> {
        None
    }
}
