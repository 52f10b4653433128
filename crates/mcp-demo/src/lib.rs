//! A demonstration MCP server built on the `mcp` crate: a handful of tools that exercise every
//! result convention (object, string, failure, panic), a slow cancellable tool with progress, and
//! two resources. It exists for the protocol's black-box tests, benchmarks and fuzz target; it
//! knows nothing of chant or AgentXchain.

use std::thread;
use std::time::{Duration, Instant};

use mcp::{
    Arguments, RequestContext, Resource, ResourceContents, ResourceError, ResourceTemplate, Server,
    ServerBuilder, Tool, ToolAnnotations, ToolError, ToolOutput,
};
use serde_json::{Value, json};

/// Options of the demo server.
#[derive(Clone, Debug, Default)]
pub struct Options {
    /// Split list results into pages of this size.
    pub page_size: Option<usize>,
    /// `instructions` for the initialize result.
    pub instructions: Option<String>,
}

/// Builds the demo server.
pub fn server(options: &Options) -> Server {
    let mut b = ServerBuilder::new("mcp-demo", env!("CARGO_PKG_VERSION"))
        .tool(
            Tool::new(
                "echo",
                "Echo a text back with its length.",
                json!({"type": "object", "properties": {"text": {"type": "string", "description": "Text to echo"}}, "required": ["text"]}),
                echo,
            )
            .with_title("Echo")
            .with_annotations(ToolAnnotations::READ_ONLY),
        )
        .tool(
            Tool::new(
                "shout",
                "Return the text upper-cased, as a plain string.",
                json!({"type": "object", "properties": {"text": {"type": "string"}}, "required": ["text"]}),
                |args, _| Ok(ToolOutput::Text(text_arg(&args)?.to_uppercase())),
            )
            .with_title("Shout"),
        )
        .tool(Tool::new(
            "fail",
            "Always fails, to show how failures are reported.",
            json!({"type": "object", "properties": {}}),
            |_, _| Err(ToolError::from("the demo tool failed on purpose")),
        ))
        .tool(Tool::new(
            "panic",
            "Panics, to show that a crashing handler does not take the server down.",
            json!({"type": "object", "properties": {}}),
            |_, _| panic!("demo panic"),
        ))
        .tool(
            Tool::new(
                "sleep",
                "Sleep for ms milliseconds in ten steps, reporting progress; stops early when cancelled.",
                json!({"type": "object", "properties": {"ms": {"type": "number", "description": "Milliseconds to sleep"}}, "required": ["ms"]}),
                sleep,
            )
            .with_title("Sleep"),
        )
        .tool(
            Tool::new(
                "whoami",
                "Report the revision this call was served at and the client it came from.",
                json!({"type": "object", "properties": {}}),
                |_, ctx| {
                    Ok(ToolOutput::Json(json!({
                        "protocolVersion": ctx.version.as_str(),
                        "clientInfo": ctx.client_info.clone().unwrap_or(Value::Null),
                    })))
                },
            )
            .with_annotations(ToolAnnotations::READ_ONLY),
        )
        .resource(
            Resource::new("demo://readme", "readme", "What this server is", "text/markdown")
                .with_title("Read Me"),
        )
        .resource_template(ResourceTemplate::new(
            "demo://items/{id}",
            "item",
            "One numbered item",
            "application/json",
        ))
        .resource_reader(read_resource);
    if let Some(n) = options.page_size {
        b = b.page_size(n);
    }
    if let Some(i) = &options.instructions {
        b = b.instructions(i.clone());
    }
    b.build()
}

fn text_arg(args: &Arguments) -> Result<&str, ToolError> {
    args.as_ref()
        .and_then(|a| a.get("text"))
        .and_then(Value::as_str)
        .ok_or_else(|| ToolError::from("text is required and must be a string"))
}

fn echo(args: Arguments, _ctx: &RequestContext) -> Result<ToolOutput, ToolError> {
    let text = text_arg(&args)?;
    Ok(ToolOutput::Json(
        json!({"text": text, "length": text.chars().count()}),
    ))
}

fn sleep(args: Arguments, ctx: &RequestContext) -> Result<ToolOutput, ToolError> {
    let ms = args
        .as_ref()
        .and_then(|a| a.get("ms"))
        .and_then(Value::as_f64)
        .filter(|ms| (0.0..=600_000.0).contains(ms))
        .ok_or_else(|| {
            ToolError::from("ms is required: a number of milliseconds from 0 to 600000")
        })?;
    let started = Instant::now();
    let step = Duration::from_secs_f64(ms / 10_000.0);
    for i in 1..=10 {
        let until = started + step * i;
        while Instant::now() < until {
            if ctx.is_cancelled() {
                return Err(ToolError::from("cancelled"));
            }
            thread::sleep((until - Instant::now()).min(Duration::from_millis(5)));
        }
        ctx.report_progress(f64::from(i), Some(10.0), Some(&format!("step {i} of 10")));
    }
    Ok(ToolOutput::Json(json!({"slept_ms": ms})))
}

fn read_resource(uri: &str, _ctx: &RequestContext) -> Result<Vec<ResourceContents>, ResourceError> {
    if uri == "demo://readme" {
        return Ok(vec![ResourceContents {
            uri: uri.to_owned(),
            mime_type: "text/markdown".into(),
            text: "# mcp-demo\n\nA demonstration server for the mcp crate.\n".into(),
        }]);
    }
    if let Some(id) = uri
        .strip_prefix("demo://items/")
        .and_then(|s| s.parse::<u32>().ok())
    {
        return Ok(vec![ResourceContents {
            uri: uri.to_owned(),
            mime_type: "application/json".into(),
            text: canon::to_pretty(&json!({"id": id, "square": u64::from(id) * u64::from(id)})),
        }]);
    }
    Err(ResourceError::NotFound(format!("Unknown resource: {uri}")))
}
