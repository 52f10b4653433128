//! The resources: chant's own (`chant://context`, the Ops, composites, knowledge, state) and
//! the ones lexicons add (`chant://<lexicon>/…`), and reading them.

use std::sync::Arc;

use mcp::{RequestContext, Resource, ResourceContents, ResourceError, ServerBuilder};
use serde_json::{Value, json};

use crate::{CONTEXT, State, budget, catalog, namespace_resource, ops_tools};

/// Registers the core resources, then each loaded lexicon's (one that would shadow a core
/// resource, or one already registered, is skipped), and the reader of them all.
pub(crate) fn register(mut b: ServerBuilder, state: &Arc<State>) -> ServerBuilder {
    // (namespaced uri, lexicon, declared uri)
    let mut plugin_resources: Vec<(String, String, String)> = Vec::new();
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
    let st = Arc::clone(state);
    b.resource_reader(move |uri, ctx| read_resource(&st, &plugin_resources, uri, ctx))
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
