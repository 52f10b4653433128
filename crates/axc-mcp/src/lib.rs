//! `agentxchain serve-mcp`: the five governance tools and the two state resources, as thin
//! adapters from MCP arguments to the `axc-core` read model.
//!
//! Owns the tools' listings (names, descriptions, hand-written JSON Schemas), their argument
//! validation (zod-shaped issue texts), the resources, and the server identity. It knows no wire
//! mechanics (the `mcp` crate) and no governance rules (`axc-core`). Every call re-discovers the
//! project and re-reads the disk; no call writes anything.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use axc_core::read::{self, Project};
use mcp::{
    Args, Arguments, NotFoundCode, Resource, ResourceContents, ResourceError, Server,
    ServerBuilder, Tool, ToolAnnotations, ToolError, ToolOutput,
};
use serde_json::{Map, Value, json};

/// The `instructions` of the initialize result.
pub const INSTRUCTIONS: &str = "AgentXchain governance server. Use tools to query governed run status, read events and history, approve human gates, and record intake events.";

/// Receives each warning line (the binary prints them to stderr).
pub type Warn = Arc<dyn Fn(&str) + Send + Sync>;

/// How the server is set up.
#[derive(Clone)]
pub struct Options {
    /// The discovered project root at startup, or the resolved `--root` when none was found.
    pub project_root: PathBuf,
    /// `serverInfo.version`: the version `agentxchain --version` prints.
    pub version: String,
    pub warn: Warn,
}

/// A tool argument: its name, JSON type and whether it is required.
struct Param {
    name: &'static str,
    ty: &'static str,
    required: bool,
    description: &'static str,
}

const SCHEMA_DRAFT: &str = "http://json-schema.org/draft-07/schema#";

fn schema(params: &[Param]) -> Value {
    let mut props = Map::new();
    for p in params {
        props.insert(
            p.name.into(),
            json!({"type": p.ty, "description": p.description}),
        );
    }
    let mut s = Map::new();
    s.insert("$schema".into(), json!(SCHEMA_DRAFT));
    s.insert("type".into(), json!("object"));
    s.insert("properties".into(), Value::Object(props));
    let required: Vec<&str> = params
        .iter()
        .filter(|p| p.required)
        .map(|p| p.name)
        .collect();
    if !required.is_empty() {
        s.insert("required".into(), json!(required));
    }
    Value::Object(s)
}

fn type_name(v: Option<&Value>) -> &'static str {
    match v {
        None => "undefined",
        Some(Value::Null) => "null",
        Some(Value::Bool(_)) => "boolean",
        Some(Value::Number(_)) => "number",
        Some(Value::String(_)) => "string",
        Some(Value::Array(_)) => "array",
        Some(Value::Object(_)) => "object",
    }
}

fn issue(expected: &str, path: Value, received: &str) -> Value {
    json!({
        "expected": expected,
        "code": "invalid_type",
        "path": path,
        "message": format!("Invalid input: expected {expected}, received {received}"),
    })
}

/// Checks `args` against `params` the way the reference's zod schemas did; extra keys are
/// ignored. `Err` carries the whole `isError` text.
fn validate(tool: &str, params: &[Param], args: &Arguments) -> Result<Args, ToolOutput> {
    let issues: Vec<Value> = match args {
        Some(Value::Object(map)) => params
            .iter()
            .filter_map(|p| match map.get(p.name) {
                None if !p.required => None,
                Some(v) if type_name(Some(v)) == p.ty => None,
                other => Some(issue(p.ty, json!([p.name]), type_name(other))),
            })
            .collect(),
        other => vec![issue("object", json!([]), type_name(other.as_ref()))],
    };
    if issues.is_empty() {
        return Ok(Args::of(args));
    }
    Err(ToolOutput::ErrorText(format!(
        "MCP error -32602: Input validation error: Invalid arguments for tool {tool}: {}",
        canon::to_pretty(&Value::Array(issues))
    )))
}

/// Runs `f` on the project found at or above the root, or answers the no-project error.
fn with_project(opts: &Options, f: impl FnOnce(&Project, &mut Vec<String>) -> Value) -> Value {
    let mut warnings = Vec::new();
    let result = match read::open(&opts.project_root, &mut warnings) {
        Some(project) => f(&project, &mut warnings),
        None => read::no_project(&opts.project_root),
    };
    for w in &warnings {
        (opts.warn)(w);
    }
    result
}

type Handler = fn(&Options, Args) -> Value;

fn tool(
    opts: &Options,
    name: &'static str,
    title: &str,
    description: &str,
    params: Vec<Param>,
    run: Handler,
) -> Tool {
    let opts = opts.clone();
    let input_schema = schema(&params);
    Tool::new(name, description, input_schema, move |args, _ctx| {
        Ok::<_, ToolError>(match validate(name, &params, &args) {
            Ok(args) => ToolOutput::Json(run(&opts, args)),
            Err(text) => text,
        })
    })
    .with_title(title)
    .with_annotations(ToolAnnotations::READ_ONLY)
}

fn status(opts: &Options, _args: Args) -> Value {
    with_project(opts, read::status)
}

fn events(opts: &Options, args: Args) -> Value {
    let n = read::limit_from(args.get("limit"), read::DEFAULT_EVENTS);
    with_project(opts, |_, _| read::events(&opts.project_root, n))
}

fn history(opts: &Options, args: Args) -> Value {
    let n = read::limit_from(args.get("limit"), read::DEFAULT_HISTORY);
    with_project(opts, |_, _| read::history(&opts.project_root, n))
}

fn approve_gate(opts: &Options, args: Args) -> Value {
    let gate = args.str("gate_id").unwrap_or_default();
    with_project(opts, |project, warnings| {
        read::approve_gate(project, gate, warnings)
    })
}

fn intake_record(opts: &Options, args: Args) -> Value {
    let s = |k: &str| args.str(k);
    with_project(opts, |_, _| {
        read::intake_instruction(
            s("source").unwrap_or_default(),
            s("title").unwrap_or_default(),
            s("description"),
            s("priority"),
        )
    })
}

const STATE_URI: &str = "agentxchain://state";
const SESSION_URI: &str = "agentxchain://session";

/// A state file's text for `resources/read`: `{}` when absent; a file that is not a regular
/// file inside the project, or over 16 MiB, is an error naming it (never waited on, never
/// sent whole).
fn read_raw(root: &Path, file: &str) -> Result<String, ResourceError> {
    match fsread::read_inside(root, Path::new(file), read::MAX_STATE_BYTES) {
        Ok(b) => Ok(String::from_utf8_lossy(&b).into_owned()),
        Err(e) if e.is_missing() => Ok("{}".to_owned()),
        Err(e) => Err(ResourceError::Failed(format!("cannot read {file}: {e}"))),
    }
}

/// Builds the server.
pub fn server(opts: Options) -> Server {
    let p = |name, ty, required, description| Param {
        name,
        ty,
        required,
        description,
    };
    let root = opts.project_root.clone();
    ServerBuilder::new("agentxchain", opts.version.clone())
        .capabilities(json!({"tools": {"listChanged": true}, "resources": {"listChanged": true}}))
        .instructions(INSTRUCTIONS)
        .not_found_code(NotFoundCode::InvalidParams)
        .tool(tool(&opts, "agentxchain_status", "AgentXchain Status", "Read current governed project and run status", vec![], status))
        .tool(tool(
            &opts,
            "agentxchain_events",
            "AgentXchain Events",
            "Read recent events from the governed project event log",
            vec![p("limit", "number", false, "Max events to return (default 50)")],
            events,
        ))
        .tool(tool(
            &opts,
            "agentxchain_history",
            "AgentXchain History",
            "Read run history entries",
            vec![p("limit", "number", false, "Max history entries to return (default 20)")],
            history,
        ))
        .tool(tool(
            &opts,
            "agentxchain_approve_gate",
            "AgentXchain Approve Gate",
            "Approve a pending human gate/escalation to unblock a governed run",
            vec![
                p("gate_id", "string", true, "The escalation ID (e.g. hesc_abc123) or the ID of a gate awaiting human approval (e.g. planning_signoff)"),
                p("reason", "string", false, "Optional reason for approval"),
            ],
            approve_gate,
        ))
        .tool(tool(
            &opts,
            "agentxchain_intake_record",
            "AgentXchain Intake Record",
            "Record a new intake event for the governed project",
            vec![
                p("source", "string", true, "Event source (e.g. manual, ci_failure, schedule)"),
                p("title", "string", true, "Short title for the intake event"),
                p("description", "string", false, "Detailed description"),
                p("priority", "string", false, "Priority level (e.g. p0, p1, p2, p3)"),
            ],
            intake_record,
        ))
        .resource(Resource::new(STATE_URI, "governed-state", "Current .agentxchain/state.json contents", "application/json"))
        .resource(Resource::new(
            SESSION_URI,
            "continuous-session",
            "Current .agentxchain/continuous-session.json contents",
            "application/json",
        ))
        .resource_reader(move |uri, _ctx| {
            let file = match uri {
                STATE_URI => read::STATE_FILE,
                SESSION_URI => read::SESSION_FILE,
                _ => return Err(ResourceError::NotFound(format!("MCP error -32602: Resource {uri} not found"))),
            };
            Ok(vec![ResourceContents { uri: uri.to_owned(), mime_type: "application/json".into(), text: read_raw(&root, file)? }])
        })
        .build()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn validation_issues_follow_zod() {
        let params = [Param {
            name: "limit",
            ty: "number",
            required: false,
            description: "",
        }];
        let Err(ToolOutput::ErrorText(t)) =
            validate("agentxchain_events", &params, &Some(json!({"limit": "2"})))
        else {
            panic!()
        };
        assert_eq!(
            t,
            "MCP error -32602: Input validation error: Invalid arguments for tool agentxchain_events: [\n  {\n    \"expected\": \"number\",\n    \"code\": \"invalid_type\",\n    \"path\": [\n      \"limit\"\n    ],\n    \"message\": \"Invalid input: expected number, received string\"\n  }\n]"
        );
        assert!(validate("t", &params, &Some(json!({"other": 1}))).is_ok());
        let Err(ToolOutput::ErrorText(t)) = validate("t", &params, &None) else {
            panic!()
        };
        assert!(t.contains("Invalid input: expected object, received undefined"));
        let Err(ToolOutput::ErrorText(t)) = validate("t", &params, &Some(json!([1]))) else {
            panic!()
        };
        assert!(t.contains("expected object, received array"));
    }
}
