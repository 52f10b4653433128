//! `chant serve mcp`: chant's tools and resources as thin adapters from MCP arguments to the
//! engine (`chant-core` with an evaluator and lexicons) and back.
//!
//! Owns the tool listings (seed descriptions, hand-written schemas, annotations), argument
//! handling, result shapes, the core resources, and plugin namespacing (`<lexicon>:<tool>`,
//! `chant://<lexicon>/<path>`). It knows no wire mechanics (the `mcp` crate) and no build rules
//! (the engine). The project is evaluated per call, never cached.
//!
//! By tool group: `core_tools` (build, lint, import, explain, scaffold, search, composites) and
//! `ops_tools` (lifecycle and Ops) each declare their tools once, a `ToolDecl` with its schema
//! beside its handler, in listing order; `plugins` registers the lexicons' tools and
//! `resources` the resources. [`server`] only wires them.

mod catalog;
mod core_tools;
mod namespace;
mod ops_tools;
mod plugins;
mod resources;
mod workspace_root;
mod workspace_tools;

use std::path::{Path, PathBuf};
use std::sync::Arc;

use chant_core::confine::Walls;
use chant_core::lexicon::{Lexicon, Plugin};
use chant_core::model::Budget;
use chant_core::permits::{Permit, Permits};
use chant_core::project::{Project, ProjectError};
use chant_core::session::Chant;
use mcp::{
    Args, Arguments, RequestContext, Server, ServerBuilder, Tool, ToolAnnotations, ToolError,
    ToolOutput,
};
use serde_json::{Map, Value, json};

pub use namespace::{ToolNames, namespace_resource, namespace_tool, portable};

/// chant's development context (`chant://context`); lexicon sections are appended.
pub const CONTEXT: &str = include_str!("context.md");

/// How the server is set up.
pub struct Options {
    /// The server's project directory; relative tool paths resolve against it.
    pub root: PathBuf,
    /// `serverInfo.version`: the version `chant --version` prints.
    pub version: String,
    /// How plugin tools are named.
    pub tool_names: ToolNames,
    /// The chant executable the workspace reads run (`chant workspace … --json`).
    pub exe: Option<PathBuf>,
}

pub(crate) struct State {
    pub(crate) chant: Chant,
    /// The server's project directory, resolved: every path argument must stay inside it.
    pub(crate) root: PathBuf,
    pub(crate) walls: Walls,
    /// The served project's own directory, found at startup: no call reads a config above it
    /// or evaluates, discovers or imports anything outside it.
    pub(crate) ceiling: PathBuf,
    /// Names of the lexicons loaded at startup, in resolution order.
    pub(crate) loaded: Vec<String>,
    /// Calls that evaluate the project, held for the whole call: what a project makes
    /// (its values, the output built from them, the reply) exists for two calls at a time.
    pub(crate) work: Arc<Permits>,
    /// What each Op's run files said, by object id: `op-list` reads only what changed.
    pub(crate) latest: chant_ops::records::LatestCache,
    /// What each Op file declared, by what its evaluation read: discovery evaluates only
    /// the files whose reads changed.
    pub(crate) ops: chant_ops::model::DiscoveryCache,
    /// The repository, once found (finding it runs git).
    pub(crate) repo: std::sync::OnceLock<chant_ops::Repo>,
    /// The last `op-list` answer, while nothing it was built from changed.
    pub(crate) list_memo: ops_tools::ListMemo,
    /// The chant executable workspace reads run.
    pub(crate) exe: Option<PathBuf>,
    /// `serverInfo.version`, also the reader version of workspace declarations.
    pub(crate) version: String,
    /// Served at a workspace root with no lexicon of its own: its `chant` members, by name and
    /// resolved directory. Tools taking a path want one of these directories.
    pub(crate) members: Option<Vec<(String, PathBuf)>>,
}

/// Reads record kinds through the server's JavaScript sandbox.
pub(crate) struct KindReader<'a>(pub(crate) &'a dyn chant_core::model::Evaluator);

impl chant_workspace::kind::ModuleReader for KindReader<'_> {
    fn export(&self, boundary: &Path, file: &Path, name: &str) -> Result<Value, String> {
        self.0
            .evaluate_export(boundary, file, name, &Budget::default())
    }
}

impl State {
    fn lexicons(&self) -> Vec<&dyn Lexicon> {
        self.loaded
            .iter()
            .filter_map(|n| self.chant.lexicon(n))
            .collect()
    }

    /// The loaded lexicons that add tools or resources, with their plugin.
    fn plugins(&self) -> Vec<(&dyn Lexicon, &dyn Plugin)> {
        self.lexicons()
            .into_iter()
            .filter_map(|l| Some((l, l.plugin()?)))
            .collect()
    }

    /// A path argument `param`, relative to the root, symlinks resolved, refused outside it:
    /// every tool's paths pass through here.
    pub(crate) fn resolve(&self, param: &str, given: &str) -> Result<PathBuf, ToolError> {
        self.walls
            .resolve(param, given)
            .map_err(|e| ToolError(e.to_string()))
    }

    /// Locates the project `path` (resolved) belongs to, within the call's budget. At a
    /// workspace root, `path` must be in a `chant` member's directory, and the project is
    /// looked for no higher than that directory.
    pub(crate) fn locate(&self, path: &Path, budget: &Budget) -> Result<Project, ToolError> {
        let ceiling = match &self.members {
            None => self.ceiling.clone(),
            Some(members) => members
                .iter()
                .filter(|(_, d)| path.starts_with(d))
                .max_by_key(|(_, d)| d.as_os_str().len())
                .map(|(_, d)| d.clone())
                .ok_or_else(|| {
                    let names: Vec<String> = members
                        .iter()
                        .map(|(n, d)| format!("{n} ({})", chant_workspace::read::shown(&self.root, d)))
                        .collect();
                    ToolError(format!(
                        "{} is not a member's directory: this server runs at a workspace root, and tools taking a path want a chant member's directory: {}",
                        chant_workspace::read::shown(&self.root, path),
                        if names.is_empty() { "the workspace has no chant member".to_owned() } else { names.join(", ") }
                    ))
                })?,
        };
        self.chant
            .locate_within(path, Some(&ceiling), budget)
            .map_err(|e| ToolError(e.to_string()))
    }

    /// A permit for a call that evaluates the project, waited for while the call still wants it.
    pub(crate) fn work(&self, ctx: &RequestContext) -> Result<Permit, ToolError> {
        self.work.take(&|| ctx.should_stop()).ok_or_else(|| {
            ToolError("the call was cancelled, or the client went away, while it waited for an evaluation to finish".into())
        })
    }
}

/// The budget of an evaluation made for a call: the project's time, stopped when the call is
/// cancelled or the client goes away.
pub(crate) fn budget(ctx: &RequestContext) -> Budget {
    Budget {
        time: None,
        stop: Some(ctx.stop_signal()),
    }
}

/// Every argument of the type its schema declares (`null` counts as absent), checked before a
/// handler runs, so no handler reads a wrong-typed argument as missing and falls back to its
/// default: `<key> must be a <type>, got <value>`.
fn check_types(schema: &Value, args: &Arguments) -> Result<(), ToolError> {
    let (Some(Value::Object(args)), Some(Value::Object(props))) = (args, schema.get("properties"))
    else {
        return Ok(());
    };
    for (key, value) in args {
        let Some(kind) = props
            .get(key)
            .and_then(|p| p.get("type"))
            .and_then(Value::as_str)
        else {
            continue;
        };
        let ok = match kind {
            "string" => value.is_string(),
            "boolean" => value.is_boolean(),
            "number" => value.is_number(),
            "integer" => value.is_i64() || value.is_u64(),
            "object" => value.is_object(),
            "array" => value.is_array(),
            _ => true,
        };
        if !ok && !value.is_null() {
            let article = if kind.starts_with(['a', 'e', 'i', 'o', 'u']) {
                "an"
            } else {
                "a"
            };
            return Err(ToolError(format!(
                "{key} must be {article} {kind}, got {value}"
            )));
        }
    }
    Ok(())
}

pub(crate) fn required<'a>(args: &'a Args, key: &str) -> Result<&'a str, ToolError> {
    args.str(key)
        .ok_or_else(|| ToolError(format!("{key} is required and must be a string")))
}

pub(crate) fn limit(args: &Args, default: usize) -> Result<usize, ToolError> {
    match args.f64("limit") {
        None => Ok(default),
        Some(n) if n >= 0.0 => Ok(n.floor() as usize),
        Some(_) => Err(ToolError(format!(
            "limit must be zero or more, got {}",
            args.get("limit").unwrap_or(&Value::Null)
        ))),
    }
}

pub(crate) fn schema(props: &[(&str, Value)], required: &[&str]) -> Value {
    let mut properties = Map::new();
    for (name, s) in props {
        properties.insert((*name).to_owned(), s.clone());
    }
    let mut s = json!({"type": "object", "properties": properties});
    if !required.is_empty() {
        s["required"] = json!(required);
    }
    s
}

pub(crate) fn string_prop(description: &str) -> Value {
    json!({"type": "string", "description": description})
}

pub(crate) const READ_ONLY: ToolAnnotations = ToolAnnotations::READ_ONLY;

/// A tool's handler: the server's state, the call's arguments (already checked against the
/// schema's names and types) and its context.
pub(crate) type Handler = fn(&State, Arguments, &RequestContext) -> Result<ToolOutput, ToolError>;

/// One tool, declared once: its listing, its schema, whether it holds a work permit while it
/// runs (it evaluates or writes a project), and its handler.
/// Who checks a tool's arguments: the generic type check against its schema, or the tool
/// itself, in the words its contract gives (the workspace tools).
#[derive(Clone, Copy, PartialEq, Eq)]
pub(crate) enum Checks {
    Types,
    Own,
}

pub(crate) struct ToolDecl {
    pub name: &'static str,
    pub title: &'static str,
    pub description: &'static str,
    pub schema: fn() -> Value,
    pub annotations: ToolAnnotations,
    pub permit: bool,
    pub checks: Checks,
    pub handler: Handler,
}

/// Registers `decl`: the schema's types are checked before the handler runs, and the permit
/// is held for the whole call when the tool takes one.
fn register(b: ServerBuilder, state: &Arc<State>, decl: &'static ToolDecl) -> ServerBuilder {
    let st = Arc::clone(state);
    let input = (decl.schema)();
    let checked = input.clone();
    b.tool(
        Tool::new(decl.name, decl.description, input, move |args, ctx| {
            if decl.checks == Checks::Types {
                check_types(&checked, &args)?;
            }
            let _permit = if decl.permit {
                Some(st.work(ctx)?)
            } else {
                None
            };
            (decl.handler)(&st, args, ctx)
        })
        .with_title(decl.title)
        .with_annotations(decl.annotations),
    )
}

/// Builds the server for the project at `options.root`. Refuses a project with no lexicon.
/// A plugin tool that cannot be served under its name is left out with a warning on stderr.
pub fn server(chant: Chant, options: Options) -> Result<Server, ProjectError> {
    let (server, skipped) = server_and_warnings(chant, options)?;
    for s in skipped {
        eprintln!("warning: {s}");
    }
    Ok(server)
}

/// [`server`], and the plugin tools left out, each with why.
fn server_and_warnings(
    chant: Chant,
    options: Options,
) -> Result<(Server, Vec<String>), ProjectError> {
    let walls = Walls::new(&options.root).map_err(|e| ProjectError::Config(e.to_string()))?;
    // At a workspace root with no config of its own, the members' configs are evaluated (each
    // in its own walls) while the declaration's schema judges it; what they gave is kept only
    // when it passes.
    let workspace = chant_workspace::declaration::discover_then(
        walls.root(),
        &chant_workspace::tree::Tree::Work,
        &options.version,
        |d| {
            (d.root == walls.root() && chant_core::project::config_file(&d.root).is_none())
                .then(|| workspace_root::serve(&chant, d))
        },
    );
    // A declaration that cannot be read still makes this a workspace: its tools answer with
    // the error document the CLI prints.
    let in_workspace = !matches!(&workspace, Err(e) if e.code == "declaration-missing");
    let (loaded, ceiling, members, instructions) = match workspace {
        Ok((d, Some(served))) => (
            served.loaded,
            d.root,
            Some(served.members),
            Some(served.instructions),
        ),
        _ => {
            let project = chant.locate(&options.root, &Budget::default())?;
            let loaded: Vec<String> = chant
                .lexicons_for(&project)?
                .iter()
                .map(|l| l.name().to_owned())
                .collect();
            (loaded, project.dir().to_path_buf(), None, None)
        }
    };
    let state = Arc::new(State {
        chant,
        root: walls.root().to_path_buf(),
        walls,
        ceiling,
        loaded,
        work: Arc::new(Permits::new(2)),
        latest: Default::default(),
        ops: Default::default(),
        repo: Default::default(),
        list_memo: Default::default(),
        exe: options.exe,
        version: options.version.clone(),
        members,
    });
    let mut b = ServerBuilder::new("chant", options.version);
    if let Some(i) = instructions {
        b = b.instructions(i);
    }
    let workspace_tools: &[ToolDecl] = if in_workspace {
        workspace_tools::TOOLS
    } else {
        &[]
    };
    for decl in core_tools::TOOLS
        .iter()
        .chain(ops_tools::TOOLS)
        .chain(workspace_tools)
    {
        b = register(b, &state, decl);
    }
    let core: Vec<&str> = core_tools::TOOLS
        .iter()
        .chain(ops_tools::TOOLS)
        .chain(workspace_tools)
        .map(|d| d.name)
        .collect();
    let (b, skipped) = plugins::register(b, &state, options.tool_names, &core);
    let b = resources::register(b, &state);
    Ok((b.build(), skipped))
}

#[cfg(test)]
mod tests {
    use super::*;
    use chant_core::lexicon::{PluginResource, Registry};
    use chant_core::model::{Evaluation, Evaluator};

    struct Fake;

    impl Plugin for Fake {
        fn plugin_resources(&self) -> Vec<PluginResource> {
            let r = |uri: &str| PluginResource {
                uri: uri.into(),
                name: uri.into(),
                description: "d".into(),
                mime_type: "text/plain".into(),
            };
            vec![r("chant://context"), r("examples/demo"), r("fake:catalog")]
        }

        fn read_plugin_resource(&self, uri: &str) -> Option<(String, String)> {
            Some(("text/plain".into(), format!("plugin {uri}")))
        }

        fn plugin_tools(&self) -> Vec<chant_core::lexicon::PluginTool> {
            let t = |name: &str, read_only: bool| chant_core::lexicon::PluginTool {
                name: name.into(),
                title: format!("Title of {name}"),
                description: "d".into(),
                input_schema: json!({"type": "object"}),
                read_only,
            };
            vec![
                t("a:b", true),
                t("a_b", true),
                t(&"x".repeat(60), true),
                t("writes", false),
            ]
        }
    }

    impl Lexicon for Fake {
        fn name(&self) -> &'static str {
            "fake"
        }
        fn version(&self) -> &'static str {
            "0"
        }
        fn context(&self) -> &str {
            "## fake"
        }
        fn plugin(&self) -> Option<&dyn Plugin> {
            Some(self)
        }
    }

    struct NoEval;

    impl Evaluator for NoEval {
        fn evaluate(&self, _b: &Path, _f: &[PathBuf], _: &Budget) -> Evaluation {
            Evaluation::default()
        }
        fn evaluate_config(&self, _b: &Path, _f: &Path, _: &Budget) -> Result<Value, String> {
            Ok(json!({"lexicons": ["fake"]}))
        }
    }

    fn fake_server(tool_names: ToolNames) -> (Vec<Value>, Vec<String>) {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("chant.config.ts"), "export default {};\n").unwrap();
        let chant = Chant {
            lexicons: Arc::new(Registry::new(vec![Box::new(Fake)])),
            evaluator: Box::new(NoEval),
        };
        let options = Options {
            root: dir.path().to_path_buf(),
            version: "0".into(),
            tool_names,
            exe: None,
        };
        let (server, skipped) = server_and_warnings(chant, options).unwrap();
        let tools = server
            .tools()
            .iter()
            .filter(|t| t.name.starts_with("fake"))
            .map(|t| json!({"name": t.name, "title": t.title, "readOnly": t.annotations.and_then(|a| a.read_only)}))
            .collect();
        (tools, skipped)
    }

    #[test]
    fn plugin_tools_are_named_in_the_style_asked_and_never_twice() {
        let long = "x".repeat(60);
        let (seed, skipped) = fake_server(ToolNames::Seed);
        assert_eq!(
            seed,
            [
                json!({"name": "fake:a:b", "title": "Title of a:b", "readOnly": true}),
                json!({"name": "fake:a_b", "title": "Title of a_b", "readOnly": true}),
                json!({"name": format!("fake:{long}"), "title": format!("Title of {long}"), "readOnly": true}),
                json!({"name": "fake:writes", "title": "Title of writes", "readOnly": false}),
            ]
        );
        assert!(skipped.is_empty(), "{skipped:?}");
        let (portable, skipped) = fake_server(ToolNames::Portable);
        assert_eq!(
            portable,
            [
                json!({"name": "fake_a_b", "title": "Title of a:b", "readOnly": true}),
                json!({"name": "fake_writes", "title": "Title of writes", "readOnly": false}),
            ]
        );
        assert_eq!(
            skipped,
            [
                "fake's tool a_b is not served: its name fake_a_b is taken by fake's tool a:b"
                    .to_owned(),
                format!(
                    "fake's tool {long} is not served: fake_{long} is not a portable tool name (^[a-zA-Z0-9_-]{{1,64}}$)"
                ),
            ]
        );
    }

    #[test]
    fn a_plugin_cannot_shadow_a_core_resource() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("chant.config.ts"), "export default {};\n").unwrap();
        let chant = Chant {
            lexicons: Arc::new(Registry::new(vec![Box::new(Fake)])),
            evaluator: Box::new(NoEval),
        };
        let server = server(
            chant,
            Options {
                root: dir.path().to_path_buf(),
                version: "0".into(),
                tool_names: ToolNames::Seed,
                exe: None,
            },
        )
        .unwrap();
        let uris: Vec<&str> = server.resources().iter().map(|r| r.uri.as_str()).collect();
        assert_eq!(
            uris,
            [
                "chant://context",
                "chant://examples/list",
                "chant://ops",
                "chant://ops/{name}/runs",
                "chant://ops/{name}/runs/latest",
                "chant://composites",
                "chant://knowledge",
                "chant://state/{environment}",
                "chant://state/{environment}/{lexicon}",
                "chant://fake/examples/demo",
                "chant://fake/catalog"
            ]
        );
        let input = b"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"resources/read\",\"params\":{\"uri\":\"chant://context\"}}\n{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"resources/read\",\"params\":{\"uri\":\"chant://examples/demo\"}}\n";
        let out = String::from_utf8(server.serve_sync(input)).unwrap();
        let replies: Vec<Value> = out
            .lines()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect();
        let context = replies[0]["result"]["contents"][0]["text"]
            .as_str()
            .unwrap();
        assert!(
            context.starts_with("# chant Development Context"),
            "the core context wins"
        );
        assert!(context.ends_with("## fake"));
        assert_eq!(
            replies[1]["result"]["contents"][0]["text"],
            "plugin examples/demo"
        );
    }
}
