//! The tools lexicons add (`<lexicon>:<tool>`): registered from each loaded lexicon's
//! [`Plugin`](chant_core::lexicon::Plugin), run against the discovered project.

use std::sync::Arc;

use chant_core::lexicon::PluginOutput;
use mcp::{Arguments, RequestContext, ServerBuilder, Tool, ToolAnnotations, ToolError, ToolOutput};
use serde_json::Value;

use crate::{State, ToolNames, budget, check_types, portable};

/// Registers every loaded lexicon's plugin tools, named in `style`; returns what was not
/// registered and why: a name already taken (by a core tool in `core` or an earlier plugin
/// tool), or, in the portable style, a name some clients refuse.
pub(crate) fn register(
    mut b: ServerBuilder,
    state: &Arc<State>,
    style: ToolNames,
    core: &[&str],
) -> (ServerBuilder, Vec<String>) {
    let mut registered: Vec<(String, String)> = core
        .iter()
        .map(|n| ((*n).to_owned(), format!("the core tool {n}")))
        .collect();
    let mut skipped = Vec::new();
    for (lex, plugin) in state.plugins() {
        for tool in plugin.plugin_tools() {
            let name = style.name(lex.name(), &tool.name);
            let whose = format!("{}'s tool {}", lex.name(), tool.name);
            if let Some((_, first)) = registered.iter().find(|(n, _)| *n == name) {
                skipped.push(format!(
                    "{whose} is not served: its name {name} is taken by {first}"
                ));
                continue;
            }
            if style == ToolNames::Portable && !portable(&name) {
                skipped.push(format!(
                    "{whose} is not served: {name} is not a portable tool name (^[a-zA-Z0-9_-]{{1,64}}$)"
                ));
                continue;
            }
            registered.push((name.clone(), whose));
            let st = Arc::clone(state);
            let lexicon = lex.name().to_owned();
            let tool_name = tool.name.clone();
            let input = tool.input_schema.clone();
            let annotations = if tool.read_only {
                ToolAnnotations::READ_ONLY
            } else {
                ToolAnnotations {
                    read_only: Some(false),
                    destructive: None,
                    idempotent: None,
                    open_world: Some(false),
                }
            };
            b = b.tool(
                Tool::new(
                    name,
                    tool.description,
                    tool.input_schema,
                    move |args, ctx| {
                        check_types(&input, &args)?;
                        let _permit = st.work(ctx)?;
                        plugin_call(&st, &lexicon, &tool_name, args, ctx)
                    },
                )
                .with_title(tool.title)
                .with_annotations(annotations),
            );
        }
    }
    (b, skipped)
}

/// The largest file a plugin tool is handed (`"format": "path"` arguments).
const PLUGIN_FILE_BYTES: u64 = 16 << 20;

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
    let mut args = Value::Object(mcp::Args::of(&args).into_map());
    // An argument the tool's schema marks `"format": "path"` names a file of the project: the
    // plugin is handed its text, read inside the walls (it never sees the file system).
    let file_args: Vec<String> = plugin
        .plugin_tools()
        .into_iter()
        .find(|t| t.name == tool)
        .and_then(|t| {
            t.input_schema
                .get("properties")
                .and_then(Value::as_object)
                .cloned()
        })
        .map(|props| {
            props
                .into_iter()
                .filter(|(_, p)| p.get("format").and_then(Value::as_str) == Some("path"))
                .map(|(name, _)| name)
                .collect()
        })
        .unwrap_or_default();
    for name in file_args {
        if let Some(given) = args.get(&name).and_then(Value::as_str).map(str::to_owned) {
            let (_, text) = state
                .walls
                .read_text(state.walls.root(), &name, &given, PLUGIN_FILE_BYTES)
                .map_err(ToolError)?;
            args[&name] = Value::String(text);
        }
    }
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
        .filter(|&i| d.decl(i).home_lexicon() == lexicon)
        .collect();
    match plugin
        .call_plugin_tool(tool, &args, &d, &entities)
        .map_err(ToolError)?
    {
        PluginOutput::Json(v) => Ok(ToolOutput::Json(v)),
        PluginOutput::Text(t) => Ok(ToolOutput::Text(t)),
    }
}
