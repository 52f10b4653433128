//! `chant serve mcp`: chant's tools and resources as thin adapters from MCP arguments to the
//! engine (`chant-core` with an evaluator and lexicons) and back.
//!
//! Owns the tool listings (seed descriptions, hand-written schemas, annotations), argument
//! handling, result shapes, the core resources, and plugin namespacing (`<lexicon>:<tool>`,
//! `chant://<lexicon>/<path>`). It knows no wire mechanics (the `mcp` crate) and no build rules
//! (the engine). The project is evaluated per call, never cached.

mod catalog;
mod namespace;
mod ops_tools;

use std::path::{Path, PathBuf};
use std::sync::Arc;

use chant_core::build::Format;
use chant_core::confine::Walls;
use chant_core::explain;
use chant_core::lexicon::{Lexicon, Plugin, PluginOutput};
use chant_core::model::Budget;
use chant_core::permits::{Permit, Permits};
use chant_core::project::{Project, ProjectError};
use chant_core::session::Chant;
use mcp::{
    Arguments, RequestContext, Resource, ResourceContents, ResourceError, Server, ServerBuilder,
    Tool, ToolAnnotations, ToolError, ToolOutput,
};
use serde_json::{Map, Value, json};

pub use namespace::{namespace_resource, namespace_tool};

/// chant's development context (`chant://context`); lexicon sections are appended.
pub const CONTEXT: &str = include_str!("context.md");

/// How the server is set up.
pub struct Options {
    /// The server's project directory; relative tool paths resolve against it.
    pub root: PathBuf,
    /// `serverInfo.version`: the version `chant --version` prints.
    pub version: String,
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

    /// Locates the project `path` (resolved) belongs to, within the call's budget.
    pub(crate) fn locate(&self, path: &Path, budget: &Budget) -> Result<Project, ToolError> {
        self.chant
            .locate_within(path, Some(&self.ceiling), budget)
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

pub(crate) fn args_object(args: &Arguments) -> Map<String, Value> {
    match args {
        Some(Value::Object(m)) => m.clone(),
        _ => Map::new(),
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

pub(crate) fn string_arg<'a>(args: &'a Map<String, Value>, key: &str) -> Option<&'a str> {
    args.get(key).and_then(Value::as_str)
}

fn required<'a>(args: &'a Map<String, Value>, key: &str) -> Result<&'a str, ToolError> {
    string_arg(args, key)
        .ok_or_else(|| ToolError(format!("{key} is required and must be a string")))
}

fn limit(args: &Map<String, Value>, default: usize) -> Result<usize, ToolError> {
    match args.get("limit").and_then(Value::as_f64) {
        None => Ok(default),
        Some(n) if n >= 0.0 => Ok(n.floor() as usize),
        Some(_) => Err(ToolError(format!(
            "limit must be zero or more, got {}",
            args["limit"]
        ))),
    }
}

fn schema(props: &[(&str, Value)], required: &[&str]) -> Value {
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

fn string_prop(description: &str) -> Value {
    json!({"type": "string", "description": description})
}

/// The project the `path` argument names (inside the root); a path that is not there is named.
fn project_at(
    state: &State,
    args: &Map<String, Value>,
    budget: &Budget,
) -> Result<(PathBuf, Project), ToolError> {
    let given = required(args, "path")?;
    let path = state.resolve("path", given)?;
    if !path.exists() {
        return Err(ToolError(format!("{given}: no such file or directory")));
    }
    let project = state.locate(&path, budget)?;
    Ok((path, project))
}

fn tool_build(
    state: &State,
    args: Arguments,
    ctx: &RequestContext,
) -> Result<ToolOutput, ToolError> {
    let args = args_object(&args);
    let budget = budget(ctx);
    let format = match string_arg(&args, "format").unwrap_or("json") {
        "json" => Format::Json,
        "yaml" => Format::Yaml,
        other => {
            return Err(ToolError(format!(
                "format must be \"json\" or \"yaml\", got \"{other}\""
            )));
        }
    };
    let (_, project) = project_at(state, &args, &budget)?;
    let (_, result) = state.chant.build(&project, format, None, &budget);
    let built = result.map_err(|f| ToolError(f.message()))?;
    let mut output = built.output;
    for (name, content) in &built.files {
        output.push_str(&format!("\n--- {name} ---\n{content}"));
    }
    Ok(ToolOutput::Json(json!({
        "success": true,
        "resourceCount": built.resource_count,
        "output": output,
        "format": if format == Format::Json { "json" } else { "yaml" },
    })))
}

/// `{success, errorCount, warningCount, diagnostics, output}`; findings never fail the call,
/// a path that is not there or a broken lint config does.
fn tool_lint(
    state: &State,
    args: Arguments,
    ctx: &RequestContext,
) -> Result<ToolOutput, ToolError> {
    let args = args_object(&args);
    // Its type was checked against the schema before the call (`check_types`).
    let fix = args.get("fix").and_then(Value::as_bool).unwrap_or(false);
    let (path, project) = project_at(state, &args, &budget(ctx))?;
    let setup =
        chant_core::lint::setup(&state.chant.lexicons, &project, &path, &[]).map_err(ToolError)?;
    let linter = setup.linter();
    let result = if fix {
        linter
            .fix(&setup.files)
            .map_err(|e| ToolError(format!("could not write the fixes: {e}")))?
            .0
    } else {
        linter.lint(&setup.files)
    };
    Ok(ToolOutput::Json(result.to_json()))
}

/// `{success: true, lexicon, generatedFiles, warnings}`; both paths stay inside the project,
/// existing files are kept (and named in `warnings`) unless `force`, and any failure fails the
/// call.
fn tool_import(
    state: &State,
    args: Arguments,
    _ctx: &RequestContext,
) -> Result<ToolOutput, ToolError> {
    let args = args_object(&args);
    let source = state.resolve("source", required(&args, "source")?)?;
    let output = state.resolve("output", string_arg(&args, "output").unwrap_or("./infra/"))?;
    let force = args.get("force").and_then(Value::as_bool).unwrap_or(false);
    let report = chant_core::import::import_file(
        &state.chant.lexicons,
        &source,
        &output,
        &state.loaded,
        force,
    )
    .map_err(ToolError)?;
    Ok(ToolOutput::Json(json!({
        "success": true,
        "lexicon": report.lexicon,
        "generatedFiles": report.written,
        "warnings": report.warnings,
    })))
}

fn tool_explain(
    state: &State,
    args: Arguments,
    ctx: &RequestContext,
) -> Result<ToolOutput, ToolError> {
    let args = args_object(&args);
    let format = string_arg(&args, "format").unwrap_or("markdown");
    if !matches!(format, "markdown" | "json" | "okf") {
        return Err(ToolError(format!(
            "format must be \"markdown\", \"json\" or \"okf\", got \"{format}\""
        )));
    }
    let budget = budget(ctx);
    let (_, project) = project_at(state, &args, &budget)?;
    let d = state.chant.discover(&project, &budget);
    Ok(match format {
        "markdown" => ToolOutput::Text(explain::markdown(&d)),
        "json" => ToolOutput::Json(explain::json_with_knowledge(&d, project.dir())),
        _ => {
            let (mut bundle, errors) = explain::okf(&d, &project.path);
            bundle["errors"] = json!(errors);
            ToolOutput::Json(bundle)
        }
    })
}

fn tool_scaffold(
    state: &State,
    args: Arguments,
    _ctx: &RequestContext,
) -> Result<ToolOutput, ToolError> {
    let args = args_object(&args);
    let pattern = required(&args, "pattern")?;
    let lexicon = string_arg(&args, "lexicon");
    let template = string_arg(&args, "template");
    Ok(ToolOutput::Json(catalog::scaffold(
        &state.lexicons(),
        pattern,
        lexicon,
        template,
    )))
}

fn tool_search(
    state: &State,
    args: Arguments,
    _ctx: &RequestContext,
) -> Result<ToolOutput, ToolError> {
    let args = args_object(&args);
    let query = required(&args, "query")?;
    Ok(ToolOutput::Json(catalog::search(
        &state.lexicons(),
        query,
        string_arg(&args, "lexicon"),
        limit(&args, 20)?,
    )))
}

fn tool_composites(
    state: &State,
    args: Arguments,
    _ctx: &RequestContext,
) -> Result<ToolOutput, ToolError> {
    let args = args_object(&args);
    Ok(ToolOutput::Json(catalog::composites(
        &state.lexicons(),
        string_arg(&args, "lexicon"),
        string_arg(&args, "query"),
        limit(&args, 50)?,
    )))
}

fn plugin_call(
    state: &State,
    lexicon: &str,
    tool: &str,
    args: Arguments,
    ctx: &RequestContext,
) -> Result<ToolOutput, ToolError> {
    let plugin = state
        .chant
        .lexicon(lexicon)
        .and_then(|l| l.plugin())
        .ok_or_else(|| ToolError(format!("lexicon {lexicon} is not loaded")))?;
    let args = Value::Object(args_object(&args));
    let path = state.resolve(
        "path",
        args.get("path").and_then(Value::as_str).unwrap_or("."),
    )?;
    let budget = budget(ctx);
    let project = state.locate(&path, &budget)?;
    let d = state.chant.discover(&project, &budget);
    if let Some(e) = d.errors.first() {
        return Err(ToolError(e.message.clone()));
    }
    let entities: Vec<usize> = (0..d.entities.len())
        .filter(|&i| d.decl(i).lexicon == lexicon)
        .collect();
    match plugin
        .call_plugin_tool(tool, &args, &d, &entities)
        .map_err(ToolError)?
    {
        PluginOutput::Json(v) => Ok(ToolOutput::Json(v)),
        PluginOutput::Text(t) => Ok(ToolOutput::Text(t)),
    }
}

const READ_ONLY: ToolAnnotations = ToolAnnotations::READ_ONLY;

/// Builds the server for the project at `options.root`. Refuses a project with no lexicon.
pub fn server(chant: Chant, options: Options) -> Result<Server, ProjectError> {
    let project = chant.locate(&options.root, &Budget::default())?;
    let walls = Walls::new(&options.root).map_err(|e| ProjectError::Config(e.to_string()))?;
    let loaded: Vec<String> = chant
        .lexicons_for(&project)?
        .iter()
        .map(|l| l.name().to_owned())
        .collect();
    let ceiling = project.dir().to_path_buf();
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
    });
    let mut b = ServerBuilder::new("chant", options.version);
    type Handler = fn(&State, Arguments, &RequestContext) -> Result<ToolOutput, ToolError>;
    let core: [(&str, &str, &str, Value, Handler); 7] = [
        (
            "build",
            "Build",
            "Build chant infrastructure code and generate output for the target lexicon.",
            schema(
                &[
                    (
                        "path",
                        string_prop("Path to the infrastructure directory or file"),
                    ),
                    (
                        "output",
                        string_prop(
                            "Accepted by the schema and currently ignored; the built output always comes back in the response",
                        ),
                    ),
                    (
                        "format",
                        json!({"type": "string", "enum": ["json", "yaml"], "description": "Output format (default: json)"}),
                    ),
                ],
                &["path"],
            ),
            tool_build,
        ),
        (
            "lint",
            "Lint",
            "Lint chant infrastructure code and report issues.",
            schema(
                &[
                    (
                        "path",
                        string_prop("Path to the infrastructure directory or file"),
                    ),
                    (
                        "fix",
                        json!({"type": "boolean", "description": "Auto-fix fixable issues (default: false)"}),
                    ),
                ],
                &["path"],
            ),
            tool_lint,
        ),
        (
            "import",
            "Import",
            "Import external templates and convert them to chant TypeScript.",
            schema(
                &[
                    ("source", string_prop("Path to the template file to import")),
                    (
                        "output",
                        string_prop("Output directory (default: ./infra/)"),
                    ),
                    (
                        "force",
                        json!({"type": "boolean", "description": "Replace files that already exist in the output directory (default: false: they are kept and named in warnings)"}),
                    ),
                ],
                &["source"],
            ),
            tool_import,
        ),
        (
            "explain",
            "Explain",
            "Summarize the resources in a chant project.",
            schema(
                &[
                    ("path", string_prop("Path to the infrastructure directory")),
                    (
                        "format",
                        json!({"type": "string", "enum": ["markdown", "json", "okf"], "description": "Output format (default: markdown)"}),
                    ),
                ],
                &["path"],
            ),
            tool_explain,
        ),
        (
            "scaffold",
            "Scaffold",
            "Generate starter files for a chant project.",
            schema(
                &[
                    (
                        "pattern",
                        string_prop(
                            "Resource pattern to scaffold (e.g. \"s3-bucket\", \"pipeline\")",
                        ),
                    ),
                    (
                        "lexicon",
                        string_prop("Lexicon to use for templates. Auto-detected if omitted"),
                    ),
                    (
                        "template",
                        string_prop(
                            "Named init template (e.g. \"node-pipeline\"). Given one, the template's own source files come back instead of a pattern match",
                        ),
                    ),
                ],
                &["pattern"],
            ),
            tool_scaffold,
        ),
        (
            "search",
            "Search",
            "Search the resource types and the composites of the loaded lexicons.",
            schema(
                &[
                    (
                        "query",
                        string_prop("Search query (case-insensitive substring match)"),
                    ),
                    ("lexicon", string_prop("Filter to a specific lexicon")),
                    (
                        "limit",
                        json!({"type": "number", "description": "Maximum results (default: 20)"}),
                    ),
                ],
                &["query"],
            ),
            tool_search,
        ),
        (
            "composites",
            "Composites",
            "List the composites the loaded lexicons export.",
            schema(
                &[
                    ("lexicon", string_prop("Only composites from this lexicon")),
                    (
                        "query",
                        string_prop(
                            "Keyword matched against the name, description, bundled resource kinds and parameter names",
                        ),
                    ),
                    (
                        "limit",
                        json!({"type": "number", "description": "Maximum composites (default: 50)"}),
                    ),
                ],
                &[],
            ),
            tool_composites,
        ),
    ];
    for (name, title, description, input, handler) in core {
        let st = Arc::clone(&state);
        b = b.tool(
            Tool::new(name, description, input.clone(), move |args, ctx| {
                check_types(&input, &args)?;
                let _permit = match name {
                    "build" | "lint" | "explain" | "import" => Some(st.work(ctx)?),
                    _ => None,
                };
                handler(&st, args, ctx)
            })
            .with_title(title)
            .with_annotations(match name {
                // `fix: true` rewrites source files (the same fixes again change nothing).
                "lint" => ToolAnnotations {
                    read_only: Some(false),
                    destructive: Some(false),
                    idempotent: Some(true),
                    open_world: Some(false),
                },
                // `force: true` replaces files that exist.
                "import" => ToolAnnotations {
                    read_only: Some(false),
                    destructive: Some(true),
                    idempotent: Some(true),
                    open_world: Some(false),
                },
                _ => READ_ONLY,
            }),
        );
    }
    let runtime_prop = || {
        string_prop("Runtime to address: a lexicon name with an opRuntime, or local (the default)")
    };
    let no_write = ToolAnnotations {
        read_only: Some(false),
        destructive: Some(false),
        idempotent: Some(false),
        open_world: Some(false),
    };
    let lifecycle: [(&str, &str, &str, Value, Handler, ToolAnnotations); 6] = [
        (
            "lifecycle-snapshot",
            "Lifecycle Snapshot",
            "Capture deployed state for an environment, reading every loaded lexicon that implements describeResources.",
            schema(
                &[
                    ("environment", string_prop("Target environment")),
                    (
                        "lexicon",
                        string_prop("Restrict to one lexicon; snapshots all of them if omitted"),
                    ),
                ],
                &["environment"],
            ),
            ops_tools::lifecycle_snapshot,
            ToolAnnotations {
                read_only: Some(false),
                destructive: Some(false),
                idempotent: Some(true),
                open_world: Some(true),
            },
        ),
        (
            "lifecycle-diff",
            "Lifecycle Diff",
            "Compare the current build's digest against the digest stored in an environment's last snapshot.",
            schema(
                &[
                    ("environment", string_prop("Target environment")),
                    (
                        "lexicon",
                        string_prop("Restrict to one lexicon; diffs all of them if omitted"),
                    ),
                ],
                &["environment"],
            ),
            ops_tools::lifecycle_diff,
            READ_ONLY,
        ),
        (
            "op-list",
            "List Ops",
            "List every Op discovered from *.op.ts files with the run state the runtime reports.",
            schema(&[("runtime", runtime_prop())], &[]),
            ops_tools::op_list,
            READ_ONLY,
        ),
        (
            "op-status",
            "Op Status",
            "Show the state the runtime reports for an Op's latest run.",
            schema(
                &[
                    ("name", string_prop("Op name")),
                    ("runtime", runtime_prop()),
                ],
                &["name"],
            ),
            ops_tools::op_status,
            READ_ONLY,
        ),
        (
            "op-approve",
            "Approve Op Gate",
            "Record a gate's resolution on the gate ledger, then wake the runtime hosting the gated run. Refuses a gate this same channel reached (approve it with chant approve <op> <gate> at a shell) and records the resolver as unattested.",
            schema(
                &[
                    ("name", string_prop("Op name")),
                    (
                        "gate",
                        string_prop("Gate name (must match the gate's name in the Op)"),
                    ),
                    (
                        "note",
                        string_prop("Free-text context recorded on the resolution"),
                    ),
                    (
                        "url",
                        string_prop("Absolute http/https URL this resolution happened at"),
                    ),
                    (
                        "env",
                        string_prop(
                            "Environment the woken run runs in, as chant run approve --env names it; omitted, the runtime keeps the gated run's",
                        ),
                    ),
                    ("runtime", runtime_prop()),
                ],
                &["name", "gate"],
            ),
            ops_tools::op_approve,
            no_write,
        ),
        (
            "op-report",
            "Op Report",
            "Return a markdown report for an Op's latest run.",
            schema(
                &[
                    ("name", string_prop("Op name")),
                    ("runtime", runtime_prop()),
                ],
                &["name"],
            ),
            ops_tools::op_report,
            READ_ONLY,
        ),
    ];
    for (name, title, description, input, handler, annotations) in lifecycle {
        let st = Arc::clone(&state);
        b = b.tool(
            Tool::new(name, description, input.clone(), move |args, ctx| {
                check_types(&input, &args)?;
                let _permit = st.work(ctx)?;
                handler(&st, args, ctx)
            })
            .with_title(title)
            .with_annotations(annotations),
        );
        if name == "op-list" {
            let st = Arc::clone(&state);
            let input = schema(
                &[
                    ("name", string_prop("Op name (must match an *.op.ts file)")),
                    (
                        "env",
                        string_prop(
                            "Environment the run targets, as chant run --env names it; omitted, the runtime uses its own default",
                        ),
                    ),
                    ("runtime", runtime_prop()),
                ],
                &["name"],
            );
            b = b.tool(
                Tool::new(
                    "op-run",
                    "Run an Op on a runtime and return its result.",
                    input.clone(),
                    move |args, ctx| {
                        check_types(&input, &args)?;
                        ops_tools::op_run(&st, args, ctx)
                    },
                )
                .with_title("Run Op")
                .with_annotations(ToolAnnotations {
                    read_only: Some(false),
                    destructive: Some(true),
                    idempotent: Some(false),
                    open_world: Some(true),
                }),
            );
        }
    }
    let mut registered: Vec<String> = Vec::new();
    let mut plugin_resources: Vec<(String, String, String)> = Vec::new(); // (namespaced uri, lexicon, declared uri)
    for (lex, plugin) in state.plugins() {
        for tool in plugin.plugin_tools() {
            let name = namespace_tool(lex.name(), &tool.name);
            if registered.contains(&name) {
                continue;
            }
            registered.push(name.clone());
            let st = Arc::clone(&state);
            let lexicon = lex.name().to_owned();
            let tool_name = tool.name.clone();
            let input = tool.input_schema.clone();
            b = b.tool(Tool::new(
                name,
                tool.description,
                tool.input_schema,
                move |args, ctx| {
                    check_types(&input, &args)?;
                    let _permit = st.work(ctx)?;
                    plugin_call(&st, &lexicon, &tool_name, args, ctx)
                },
            ));
        }
    }
    let core_resources = [
        (
            "chant://context",
            "chant Context",
            "Lexicon-specific instructions, patterns, and best practices",
            "text/markdown",
        ),
        (
            "chant://examples/list",
            "Examples List",
            "JSON array of available examples ([{ name, description }])",
            "application/json",
        ),
        (
            "chant://ops",
            "Ops",
            "Every Op discovered from *.op.ts, with overview, phase count, labels and dependencies",
            "application/json",
        ),
        (
            "chant://ops/{name}/runs",
            "Op run history",
            "Run history for a named Op, newest first",
            "application/json",
        ),
        (
            "chant://ops/{name}/runs/latest",
            "Op latest run",
            "Latest run state for a named Op",
            "application/json",
        ),
        (
            "chant://composites",
            "Composites",
            "Every composite the loaded lexicons export, the same entries the composites tool returns, unfiltered",
            "application/json",
        ),
        (
            "chant://knowledge",
            "Knowledge",
            "The project’s OKF knowledge bundle as { dir, index, concepts }, empty when the project has authored none",
            "application/json",
        ),
        (
            "chant://state/{environment}",
            "State (all lexicons)",
            "Every lexicon’s snapshot for an environment, keyed by lexicon",
            "application/json",
        ),
        (
            "chant://state/{environment}/{lexicon}",
            "State (single lexicon)",
            "One lexicon’s snapshot for an environment",
            "application/json",
        ),
    ];
    for (uri, name, description, mime) in core_resources {
        b = b.resource(Resource::new(uri, name, description, mime));
        if uri.contains('{') {
            b = b.resource_template(mcp::ResourceTemplate::new(uri, name, description, mime));
        }
    }
    for (lex, plugin) in state.plugins() {
        for r in plugin.plugin_resources() {
            let uri = namespace_resource(lex.name(), &r.uri);
            if core_resources.iter().any(|c| c.0 == uri)
                || plugin_resources.iter().any(|p| p.0 == uri)
            {
                continue;
            }
            plugin_resources.push((uri.clone(), lex.name().to_owned(), r.uri.clone()));
            b = b.resource(Resource::new(uri, r.name, r.description, r.mime_type));
        }
    }
    let st = Arc::clone(&state);
    b = b.resource_reader(move |uri, ctx| read_resource(&st, &plugin_resources, uri, ctx));
    Ok(b.build())
}

fn contents(uri: &str, mime: &str, text: String) -> Vec<ResourceContents> {
    vec![ResourceContents {
        uri: uri.to_owned(),
        mime_type: mime.to_owned(),
        text,
    }]
}

fn read_resource(
    state: &State,
    plugins: &[(String, String, String)],
    uri: &str,
    _ctx: &RequestContext,
) -> Result<Vec<ResourceContents>, ResourceError> {
    let read_plugin = |(_, lexicon, declared): &(String, String, String)| {
        state
            .chant
            .lexicon(lexicon)
            .and_then(|l| l.plugin()?.read_plugin_resource(declared))
    };
    match uri {
        "chant://context" => {
            let mut text = CONTEXT.to_owned();
            for lex in state.lexicons() {
                text.push('\n');
                text.push_str(lex.context());
            }
            return Ok(contents(uri, "text/markdown", text));
        }
        "chant://examples/list" => {
            let list: Vec<Value> = plugins
                .iter()
                .filter(|p| p.0.contains("/examples/"))
                .filter_map(|p| {
                    let plugin = state.chant.lexicon(&p.1)?.plugin()?;
                    let r = plugin.plugin_resources().into_iter().find(|r| r.uri == p.2)?;
                    Some(json!({"name": p.0.rsplit('/').next().unwrap_or_default(), "description": r.description}))
                })
                .collect();
            return Ok(contents(
                uri,
                "application/json",
                canon::to_compact(&Value::Array(list)),
            ));
        }
        "chant://knowledge" => {
            let _permit = state.work(_ctx).map_err(|e| ResourceError::Failed(e.0))?;
            let budget = budget(_ctx);
            let project = state
                .locate(&state.root, &budget)
                .map_err(|e| ResourceError::Failed(e.0))?;
            let d = state.chant.discover(&project, &budget);
            let names: Vec<&str> = d.entities.iter().map(|e| e.name.as_str()).collect();
            let bundle = chant_core::knowledge::load(project.dir());
            return Ok(contents(
                uri,
                "application/json",
                canon::to_pretty(&chant_core::knowledge::resource(bundle.as_ref(), &names)),
            ));
        }
        "chant://composites" => {
            let all = catalog::composites(&state.lexicons(), None, None, usize::MAX);
            return Ok(contents(
                uri,
                "application/json",
                canon::to_pretty(&all["composites"]),
            ));
        }
        _ => {}
    }
    let _permit = if uri.starts_with("chant://ops") {
        Some(state.work(_ctx).map_err(|e| ResourceError::Failed(e.0))?)
    } else {
        None
    };
    if let Some(result) = ops_tools::read(state, uri, _ctx) {
        return match result {
            Ok(text) => Ok(contents(uri, "application/json", text)),
            Err(message) => Err(ResourceError::NotFound(message)),
        };
    }
    if let Some(name) = uri.strip_prefix("chant://examples/") {
        let suffix = format!("/examples/{name}");
        return plugins
            .iter()
            .find(|p| p.0.ends_with(&suffix))
            .and_then(|p| read_plugin(p).map(|(mime, text)| (mime, text, p)))
            .map(|(mime, text, _)| {
                contents(
                    uri,
                    if mime.is_empty() {
                        "text/typescript"
                    } else {
                        &mime
                    },
                    text,
                )
            })
            .ok_or_else(|| ResourceError::NotFound(format!("Example not found: {name}")));
    }
    match plugins.iter().find(|p| p.0 == uri).and_then(read_plugin) {
        Some((mime, text)) => Ok(contents(uri, &mime, text)),
        None => Err(ResourceError::NotFound(format!("Unknown resource: {uri}"))),
    }
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
