//! The tools lexicons add (`<lexicon>:<tool>`): registered from each loaded lexicon's
//! [`Plugin`](chant_core::lexicon::Plugin), run against the discovered project.

use std::sync::Arc;

use chant_core::lexicon::PluginOutput;
use mcp::{Arguments, RequestContext, ServerBuilder, Tool, ToolError, ToolOutput};
use serde_json::Value;

use crate::{State, budget, check_types, namespace_tool};

/// Registers every loaded lexicon's plugin tools (a name already taken is skipped).
pub(crate) fn register(mut b: ServerBuilder, state: &Arc<State>) -> ServerBuilder {
    let mut registered: Vec<String> = Vec::new();
    for (lex, plugin) in state.plugins() {
        for tool in plugin.plugin_tools() {
            let name = namespace_tool(lex.name(), &tool.name);
            if registered.contains(&name) {
                continue;
            }
            registered.push(name.clone());
            let st = Arc::clone(state);
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
    b
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
    let args = Value::Object(mcp::Args::of(&args).into_map());
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
