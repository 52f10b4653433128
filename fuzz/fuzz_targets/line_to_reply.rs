//! Fuzzes the line-to-reply entry point: arbitrary bytes (any number of lines) go in, and every
//! line that comes out must be one whole JSON object or array with `"jsonrpc":"2.0"`.
#![no_main]

use std::sync::OnceLock;

use libfuzzer_sys::fuzz_target;
use mcp::{
    Resource, ResourceContents, ResourceError, ResourceTemplate, Server, ServerBuilder, Tool,
    ToolError, ToolOutput,
};
use serde_json::{Value, json};

fn server() -> &'static Server {
    static SERVER: OnceLock<Server> = OnceLock::new();
    SERVER.get_or_init(|| {
        ServerBuilder::new("fuzz", "0")
            .page_size(1)
            .tool(Tool::new("echo", "echo", json!({"type": "object"}), |args, ctx| {
                ctx.report_progress(1.0, Some(2.0), Some("half"));
                Ok(ToolOutput::Json(json!({"args": args})))
            }))
            .tool(Tool::new("text", "text", json!({"type": "object"}), |args, _| {
                Ok(ToolOutput::Text(format!("{args:?}")))
            }))
            .tool(Tool::new("fail", "fail", json!({"type": "object"}), |_, _| {
                Err(ToolError::from("no"))
            }))
            .resource(Resource::new("fuzz://a", "a", "a", "text/plain"))
            .resource_template(ResourceTemplate::new("fuzz://t/{x}", "t", "t", "text/plain"))
            .resource_reader(|uri, _| match uri {
                "fuzz://a" => Ok(vec![ResourceContents {
                    uri: uri.into(),
                    mime_type: "text/plain".into(),
                    text: "a".into(),
                }]),
                "fuzz://broken" => Err(ResourceError::Failed("broken".into())),
                _ => Err(ResourceError::NotFound(format!("Unknown resource: {uri}"))),
            })
            .build()
    })
}

fuzz_target!(|data: &[u8]| {
    let out = server().serve_sync(data);
    let text = std::str::from_utf8(&out).expect("replies are UTF-8");
    for line in text.lines() {
        let v: Value = serde_json::from_str(line).expect("every reply line is JSON");
        match v {
            Value::Object(m) => assert_eq!(m.get("jsonrpc"), Some(&json!("2.0"))),
            Value::Array(items) => assert!(!items.is_empty()),
            other => panic!("unexpected reply {other}"),
        }
    }
});
