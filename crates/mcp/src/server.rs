//! The server: reads JSON-RPC lines, negotiates a revision per request, dispatches to the
//! registry on a worker pool and writes each reply as one line.

use std::collections::HashMap;
use std::io::{self, BufRead, BufReader, Read, Write};
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::{Arc, Mutex, MutexGuard};

use serde_json::{Map, Value, json};

use crate::context::{CancelToken, RequestContext};
use crate::output::Output;
use crate::pool::Pool;
use crate::registry::{
    Resource, ResourceContents, ResourceError, ResourceReader, ResourceTemplate, Tool, ToolOutput,
};
use crate::version::ProtocolVersion;
use canon::Integers;

/// Longest incoming line served (16 MiB); a longer one is discarded and answered -32700.
pub const MAX_LINE_BYTES: usize = 16 * 1024 * 1024;

const META_PROTOCOL_VERSION: &str = "io.modelcontextprotocol/protocolVersion";
const META_CLIENT_INFO: &str = "io.modelcontextprotocol/clientInfo";
const META_SERVER_INFO: &str = "io.modelcontextprotocol/serverInfo";

/// JSON-RPC and MCP error codes this server answers with.
pub mod codes {
    pub const PARSE_ERROR: i64 = -32700;
    pub const INVALID_REQUEST: i64 = -32600;
    pub const METHOD_NOT_FOUND: i64 = -32601;
    pub const INVALID_PARAMS: i64 = -32602;
    pub const INTERNAL_ERROR: i64 = -32603;
    pub const RESOURCE_NOT_FOUND: i64 = -32002;
    pub const UNSUPPORTED_VERSION: i64 = -32022;
}

/// The code a missing resource is answered with.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum NotFoundCode {
    /// -32002 before 2026-07-28, -32602 from it (chant).
    VersionGated,
    /// -32602 at every revision (AgentXchain).
    InvalidParams,
}

/// `serverInfo`: the server's name and the version of the binary that serves.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ServerInfo {
    pub name: String,
    pub version: String,
    pub title: Option<String>,
}

struct Inner {
    info: ServerInfo,
    capabilities: Value,
    instructions: Option<String>,
    tools: Vec<Tool>,
    resources: Vec<Resource>,
    templates: Vec<ResourceTemplate>,
    reader: Option<ResourceReader>,
    not_found: NotFoundCode,
    page_size: Option<usize>,
    max_workers: usize,
    stack_size: usize,
}

/// Builds a [`Server`].
pub struct ServerBuilder {
    inner: Inner,
}

impl ServerBuilder {
    pub fn new(name: impl Into<String>, version: impl Into<String>) -> ServerBuilder {
        ServerBuilder {
            inner: Inner {
                info: ServerInfo {
                    name: name.into(),
                    version: version.into(),
                    title: None,
                },
                capabilities: json!({"tools": {}, "resources": {}}),
                instructions: None,
                tools: Vec::new(),
                resources: Vec::new(),
                templates: Vec::new(),
                reader: None,
                not_found: NotFoundCode::VersionGated,
                page_size: None,
                max_workers: 32,
                stack_size: 8 * 1024 * 1024,
            },
        }
    }

    pub fn title(mut self, title: impl Into<String>) -> Self {
        self.inner.info.title = Some(title.into());
        self
    }

    /// The `capabilities` object of `initialize` (default `{"tools":{},"resources":{}}`).
    pub fn capabilities(mut self, capabilities: Value) -> Self {
        self.inner.capabilities = capabilities;
        self
    }

    pub fn instructions(mut self, instructions: impl Into<String>) -> Self {
        self.inner.instructions = Some(instructions.into());
        self
    }

    /// Adds a tool; `tools/list` lists tools in the order they are added.
    pub fn tool(mut self, tool: Tool) -> Self {
        self.inner.tools.push(tool);
        self
    }

    pub fn resource(mut self, resource: Resource) -> Self {
        self.inner.resources.push(resource);
        self
    }

    pub fn resource_template(mut self, template: ResourceTemplate) -> Self {
        self.inner.templates.push(template);
        self
    }

    /// The function that answers `resources/read` for every URI.
    pub fn resource_reader(
        mut self,
        reader: impl Fn(&str, &RequestContext) -> Result<Vec<ResourceContents>, ResourceError>
        + Send
        + Sync
        + 'static,
    ) -> Self {
        self.inner.reader = Some(Arc::new(reader));
        self
    }

    pub fn not_found_code(mut self, code: NotFoundCode) -> Self {
        self.inner.not_found = code;
        self
    }

    /// Splits list results into pages of `n` with opaque `nextCursor`s (default: one page).
    pub fn page_size(mut self, n: usize) -> Self {
        self.inner.page_size = Some(n.max(1));
        self
    }

    /// Most requests handled at once (default 32); further ones wait for a free worker.
    pub fn max_workers(mut self, n: usize) -> Self {
        self.inner.max_workers = n.max(1);
        self
    }

    /// Stack size of each worker thread (default 8 MiB).
    pub fn worker_stack_size(mut self, bytes: usize) -> Self {
        self.inner.stack_size = bytes;
        self
    }

    pub fn build(self) -> Server {
        Server(Arc::new(self.inner))
    }
}

/// An MCP server over a line-framed byte stream. Cheap to clone.
#[derive(Clone)]
pub struct Server(Arc<Inner>);

impl Server {
    pub fn info(&self) -> &ServerInfo {
        &self.0.info
    }

    pub fn tools(&self) -> &[Tool] {
        &self.0.tools
    }

    pub fn resources(&self) -> &[Resource] {
        &self.0.resources
    }

    pub fn resource_templates(&self) -> &[ResourceTemplate] {
        &self.0.templates
    }

    /// Serves stdin/stdout until stdin ends, then finishes the replies in flight and returns.
    pub fn serve_stdio(&self) -> io::Result<()> {
        self.serve(io::stdin().lock(), Box::new(io::stdout()))
    }

    /// Serves `input` until it ends (or `output` breaks), answering on `output`. Requests run
    /// concurrently; every reply still in flight at end of input is written before returning.
    pub fn serve<R: Read>(&self, input: R, output: Box<dyn Write + Send>) -> io::Result<()> {
        let pool = Pool::new(self.0.max_workers, self.0.stack_size);
        self.run(input, output, Exec::Pool(&pool))
    }

    /// Answers every line of `input` with the handlers run inline, one after another, and
    /// returns everything written. The line-to-reply entry point for fuzzing and unit tests.
    pub fn serve_sync(&self, input: &[u8]) -> Vec<u8> {
        let buf = SharedBuf::default();
        // Reading from a byte slice cannot fail.
        let _ = self.run(input, Box::new(buf.clone()), Exec::Inline);
        buf.take()
    }

    fn run<R: Read>(
        &self,
        input: R,
        output: Box<dyn Write + Send>,
        exec: Exec<'_>,
    ) -> io::Result<()> {
        let conn = Conn {
            server: Arc::clone(&self.0),
            session: Arc::new(Session::default()),
            output: Arc::new(Output::new(output)),
            exec,
        };
        let mut reader = BufReader::with_capacity(64 * 1024, input);
        let mut line = Vec::with_capacity(4096);
        let result = loop {
            if conn.output.is_broken() {
                break Ok(());
            }
            match read_line(&mut reader, &mut line, MAX_LINE_BYTES) {
                Ok(Line::Eof) => break Ok(()),
                Ok(Line::TooLong) => conn.output.write_value(&error_reply(
                    Value::Null,
                    codes::PARSE_ERROR,
                    "Parse error",
                    None,
                )),
                Ok(Line::Complete) => conn.handle_line(&line),
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                Err(e) => break Err(e),
            }
        };
        // The client is gone: work that watches for it stops, and every reply still in
        // flight is written before returning.
        conn.session.closed.close();
        if let Exec::Pool(pool) = conn.exec {
            pool.drain();
        }
        result
    }
}

enum Exec<'p> {
    Pool(&'p Pool),
    Inline,
}

#[derive(Default)]
struct Session {
    handshake: Mutex<Option<ProtocolVersion>>,
    client_info: Mutex<Option<Value>>,
    inflight: Mutex<HashMap<String, CancelToken>>,
    /// Set when the input ends; handlers see it through `RequestContext::should_stop`.
    closed: Arc<crate::context::Closed>,
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}

/// The outcome of dispatching one message on the reader thread.
enum Step {
    /// Nothing to send (a notification or a client's response).
    Silent,
    /// The reply is ready.
    Reply(Value),
    /// The reply needs a worker.
    Work(Work),
}

struct Work {
    key: String,
    token: CancelToken,
    run: Box<dyn FnOnce() -> Value + Send>,
}

struct Conn<'p> {
    server: Arc<Inner>,
    session: Arc<Session>,
    output: Arc<Output>,
    exec: Exec<'p>,
}

impl Conn<'_> {
    fn handle_line(&self, raw: &[u8]) {
        let raw = raw.strip_suffix(b"\r").unwrap_or(raw);
        if raw.iter().all(u8::is_ascii_whitespace) {
            return;
        }
        match serde_json::from_slice::<Value>(raw) {
            Err(_) => self.output.write_value(&error_reply(
                Value::Null,
                codes::PARSE_ERROR,
                "Parse error",
                None,
            )),
            Ok(Value::Object(obj)) => match self.dispatch(obj) {
                Step::Silent => {}
                Step::Reply(v) => self.output.write_value(&v),
                Step::Work(work) => self.spawn_single(work),
            },
            Ok(Value::Array(items)) => self.handle_batch(items),
            Ok(_) => self.output.write_value(&invalid_request(Value::Null)),
        }
    }

    fn handle_batch(&self, items: Vec<Value>) {
        let batching = *lock(&self.session.handshake) == Some(ProtocolVersion::V2025_03_26);
        if items.is_empty() || !batching {
            self.output.write_value(&invalid_request(Value::Null));
            return;
        }
        let steps: Vec<Step> = items
            .into_iter()
            .map(|item| match item {
                Value::Object(obj) => self.dispatch(obj),
                _ => Step::Reply(invalid_request(Value::Null)),
            })
            .collect();
        if steps.iter().all(|s| matches!(s, Step::Silent)) {
            return;
        }
        let mut works = Vec::new();
        let mut slots: Vec<Option<Value>> = Vec::new();
        for step in steps {
            match step {
                Step::Silent => {}
                Step::Reply(v) => slots.push(Some(v)),
                Step::Work(w) => {
                    self.register(&w);
                    works.push((slots.len(), w));
                    slots.push(None);
                }
            }
        }
        let session = Arc::clone(&self.session);
        let output = Arc::clone(&self.output);
        self.execute(Box::new(move || {
            for (slot, work) in works {
                let reply = (work.run)();
                lock(&session.inflight).remove(&work.key);
                if !work.token.is_cancelled() {
                    slots[slot] = Some(reply);
                }
            }
            let replies: Vec<Value> = slots.into_iter().flatten().collect();
            if !replies.is_empty() {
                output.write_value(&Value::Array(replies));
            }
        }));
    }

    fn register(&self, work: &Work) {
        lock(&self.session.inflight).insert(work.key.clone(), work.token.clone());
    }

    fn spawn_single(&self, work: Work) {
        self.register(&work);
        let session = Arc::clone(&self.session);
        let output = Arc::clone(&self.output);
        self.execute(Box::new(move || {
            let reply = (work.run)();
            lock(&session.inflight).remove(&work.key);
            if !work.token.is_cancelled() {
                output.write_value(&reply);
            }
        }));
    }

    fn execute(&self, job: Box<dyn FnOnce() + Send>) {
        match self.exec {
            Exec::Pool(pool) => pool.submit(job),
            Exec::Inline => job(),
        }
    }

    /// Classifies one object and handles everything that does not need a worker.
    fn dispatch(&self, mut obj: Map<String, Value>) -> Step {
        let id = obj.remove("id");
        let method = match obj.remove("method") {
            Some(Value::String(m)) => m,
            Some(_) => return Step::Reply(invalid_request(valid_id(id))),
            None if id.is_some() && (obj.contains_key("result") || obj.contains_key("error")) => {
                return Step::Silent; // a client's response to a request we never send
            }
            None => return Step::Reply(invalid_request(valid_id(id))),
        };
        let params = obj.remove("params");
        match id {
            None => {
                self.notification(&method, params.as_ref());
                Step::Silent
            }
            Some(id @ (Value::String(_) | Value::Number(_))) => self.request(id, &method, params),
            Some(_) => Step::Reply(invalid_request(Value::Null)),
        }
    }

    fn notification(&self, method: &str, params: Option<&Value>) {
        if method != "notifications/cancelled" {
            return;
        }
        if let Some(id) = params.and_then(|p| p.get("requestId"))
            && let Some(token) = lock(&self.session.inflight).get(&id_key(id))
        {
            token.cancel();
        }
    }

    fn request(&self, id: Value, method: &str, params: Option<Value>) -> Step {
        let params = match params {
            None | Some(Value::Null) => Map::new(),
            Some(Value::Object(m)) => m,
            Some(_) => return Step::Reply(invalid_params(id, "Invalid params")),
        };
        let meta = params.get("_meta").and_then(Value::as_object);
        let enveloped = meta
            .and_then(|m| m.get(META_PROTOCOL_VERSION))
            .and_then(Value::as_str);
        let version = match enveloped {
            Some(requested) => match ProtocolVersion::parse(requested) {
                Some(v) => v,
                None => return Step::Reply(unsupported_version(id, requested)),
            },
            None if method == "initialize" => {
                ProtocolVersion::negotiate(params.get("protocolVersion").and_then(Value::as_str))
            }
            None => lock(&self.session.handshake).unwrap_or(ProtocolVersion::FALLBACK),
        };
        let envelope_client = meta.and_then(|m| m.get(META_CLIENT_INFO)).cloned();
        if method == "initialize" {
            *lock(&self.session.handshake) = Some(version);
        }
        let announced = envelope_client.or_else(|| match method {
            "initialize" => params.get("clientInfo").cloned(),
            _ => None,
        });
        // Only the handshake names the session's client: an envelope names the client of its
        // own request, and a later request without one is not stamped with it.
        let client_info = match announced {
            Some(info) => {
                if method == "initialize" {
                    *lock(&self.session.client_info) = Some(info.clone());
                }
                Some(info)
            }
            None => lock(&self.session.client_info).clone(),
        };
        let srv = &self.server;
        let result = match method {
            "initialize" => Some(srv.initialize_result(version)),
            "server/discover" => Some(srv.discover_result(version)),
            "ping" if !version.is_stateless() => Some(srv.finish(Map::new(), version, false)),
            "tools/list" => srv.list(version, &params, "tools", &srv.tools, Tool::listing),
            "resources/list" => srv.list(
                version,
                &params,
                "resources",
                &srv.resources,
                Resource::listing,
            ),
            "resources/templates/list" => srv.list(
                version,
                &params,
                "resourceTemplates",
                &srv.templates,
                ResourceTemplate::listing,
            ),
            "tools/call" | "resources/read" => {
                let ctx = RequestContext {
                    version,
                    client_info,
                    cancel: CancelToken::new(),
                    progress_token: meta.and_then(|m| m.get("progressToken")).cloned(),
                    output: Some(Arc::clone(&self.output)),
                    closed: Arc::clone(&self.session.closed),
                };
                return if method == "tools/call" {
                    self.tools_call(id, params, ctx)
                } else {
                    self.resources_read(id, params, ctx)
                };
            }
            _ => {
                return Step::Reply(error_reply(
                    id,
                    codes::METHOD_NOT_FOUND,
                    "Method not found",
                    None,
                ));
            }
        };
        match result {
            Some(result) => Step::Reply(success(id, result)),
            None => Step::Reply(invalid_params(id, "Invalid cursor")),
        }
    }

    fn tools_call(&self, id: Value, mut params: Map<String, Value>, ctx: RequestContext) -> Step {
        let Some(Value::String(name)) = params.remove("name") else {
            return Step::Reply(invalid_params(id, "Invalid params"));
        };
        let Some(tool) = self.server.tools.iter().find(|t| t.name == name) else {
            let text = format!("Unknown tool: {name}");
            let result = self
                .server
                .tool_result(ToolOutput::ErrorText(text), ctx.version);
            return Step::Reply(success(id, result));
        };
        let handler = Arc::clone(&tool.handler);
        let arguments = params.remove("arguments");
        if let Some(text) = undeclared_argument(&tool.name, &tool.input_schema, arguments.as_ref())
        {
            let result = self
                .server
                .tool_result(ToolOutput::ErrorText(text), ctx.version);
            return Step::Reply(success(id, result));
        }
        let server = Arc::clone(&self.server);
        let token = ctx.cancel.clone();
        let key = id_key(&id);
        Step::Work(Work {
            key,
            token,
            run: Box::new(move || {
                let outcome = catch_unwind(AssertUnwindSafe(|| handler(arguments, &ctx)));
                let output = match outcome {
                    Ok(Ok(output)) => output,
                    Ok(Err(e)) => ToolOutput::ErrorText(format!("Error: {e}")),
                    Err(panic) => ToolOutput::ErrorText(format!(
                        "Error: tool {name} failed unexpectedly: {}",
                        panic_message(panic.as_ref())
                    )),
                };
                success(id, server.tool_result(output, ctx.version))
            }),
        })
    }

    fn resources_read(&self, id: Value, params: Map<String, Value>, ctx: RequestContext) -> Step {
        let Some(uri) = params.get("uri").and_then(Value::as_str).map(str::to_owned) else {
            return Step::Reply(invalid_params(id, "Invalid params"));
        };
        let server = Arc::clone(&self.server);
        let token = ctx.cancel.clone();
        let key = id_key(&id);
        Step::Work(Work {
            key,
            token,
            run: Box::new(move || {
                let outcome = match &server.reader {
                    Some(reader) => catch_unwind(AssertUnwindSafe(|| reader(&uri, &ctx)))
                        .unwrap_or_else(|p| Err(ResourceError::Failed(panic_message(p.as_ref())))),
                    None => Err(ResourceError::NotFound(format!("Unknown resource: {uri}"))),
                };
                match outcome {
                    Ok(contents) => success(id, server.read_result(contents, ctx.version)),
                    Err(ResourceError::NotFound(message)) => {
                        let code = match server.not_found {
                            NotFoundCode::VersionGated if !ctx.version.is_stateless() => {
                                codes::RESOURCE_NOT_FOUND
                            }
                            _ => codes::INVALID_PARAMS,
                        };
                        error_reply(id, code, &message, None)
                    }
                    Err(ResourceError::Failed(message)) => error_reply(
                        id,
                        codes::INTERNAL_ERROR,
                        &format!("Internal error: {message}"),
                        None,
                    ),
                }
            }),
        })
    }
}

impl Inner {
    fn server_info(&self, v: ProtocolVersion) -> Value {
        let mut m = Map::new();
        m.insert("name".into(), json!(self.info.name));
        m.insert("version".into(), json!(self.info.version));
        if let (Some(t), true) = (&self.info.title, v.has_structured_content()) {
            m.insert("title".into(), json!(t));
        }
        Value::Object(m)
    }

    /// Adds the keys a 2026-07-28 result carries (`cached` adds `ttlMs` and `cacheScope`).
    fn finish(&self, mut result: Map<String, Value>, v: ProtocolVersion, cached: bool) -> Value {
        if v.is_stateless() {
            self.add_stateless_keys(&mut result, v, cached);
        }
        Value::Object(result)
    }

    fn add_stateless_keys(
        &self,
        result: &mut Map<String, Value>,
        v: ProtocolVersion,
        cached: bool,
    ) {
        result.insert("resultType".into(), json!("complete"));
        if cached {
            result.insert("ttlMs".into(), json!(0));
            result.insert("cacheScope".into(), json!("private"));
        }
        result.insert(
            "_meta".into(),
            json!({ META_SERVER_INFO: self.server_info(v) }),
        );
    }

    /// `protocolVersion`, (`supportedVersions`), `capabilities`, `serverInfo`, `instructions?`.
    fn handshake_fields(&self, v: ProtocolVersion, with_supported: bool) -> Map<String, Value> {
        let mut m = Map::new();
        m.insert("protocolVersion".into(), json!(v.as_str()));
        if with_supported {
            let supported: Vec<&str> = ProtocolVersion::SUPPORTED
                .iter()
                .map(|s| s.as_str())
                .collect();
            m.insert("supportedVersions".into(), json!(supported));
        }
        m.insert("capabilities".into(), self.capabilities.clone());
        m.insert("serverInfo".into(), self.server_info(v));
        if let Some(i) = &self.instructions {
            m.insert("instructions".into(), json!(i));
        }
        m
    }

    fn initialize_result(&self, v: ProtocolVersion) -> Value {
        self.finish(self.handshake_fields(v, false), v, false)
    }

    fn discover_result(&self, v: ProtocolVersion) -> Value {
        let mut m = self.handshake_fields(v, true);
        m.insert(
            "tools".into(),
            self.tools.iter().map(|t| t.listing(v)).collect(),
        );
        m.insert(
            "resources".into(),
            self.resources.iter().map(|r| r.listing(v)).collect(),
        );
        // Discover belongs to 2026-07-28: its cache keys are always present.
        self.add_stateless_keys(&mut m, v, true);
        Value::Object(m)
    }

    fn list<T>(
        &self,
        v: ProtocolVersion,
        params: &Map<String, Value>,
        key: &str,
        items: &[T],
        listing: impl Fn(&T, ProtocolVersion) -> Value,
    ) -> Option<Value> {
        let start = match params.get("cursor") {
            None | Some(Value::Null) => 0,
            Some(cursor) => self.decode_cursor(cursor, items.len())?,
        };
        let end = match self.page_size {
            Some(n) => (start + n).min(items.len()),
            None => items.len(),
        };
        let mut m = Map::new();
        m.insert(
            key.into(),
            items[start..end].iter().map(|i| listing(i, v)).collect(),
        );
        if end < items.len() {
            m.insert("nextCursor".into(), json!(format!("page:{end}")));
        }
        Some(self.finish(m, v, true))
    }

    /// A cursor is valid only if this server could have issued it.
    fn decode_cursor(&self, cursor: &Value, len: usize) -> Option<usize> {
        let n = self.page_size?;
        let offset: usize = cursor.as_str()?.strip_prefix("page:")?.parse().ok()?;
        (offset > 0 && offset < len && offset.is_multiple_of(n)).then_some(offset)
    }

    fn tool_result(&self, output: ToolOutput, v: ProtocolVersion) -> Value {
        let mut m = Map::new();
        let (text, structured, is_error) = match output {
            ToolOutput::Json(value) => {
                let text = canon::to_pretty(&value);
                let structured = value.is_object().then_some(value);
                (text, structured, false)
            }
            ToolOutput::Text(text) => (text, None, false),
            ToolOutput::ErrorText(text) => (text, None, true),
        };
        let mut block = Map::new();
        block.insert("type".into(), Value::String("text".into()));
        block.insert("text".into(), Value::String(text));
        m.insert("content".into(), Value::Array(vec![Value::Object(block)]));
        if let (Some(s), true) = (structured, v.has_structured_content()) {
            m.insert("structuredContent".into(), s);
        }
        if is_error {
            m.insert("isError".into(), Value::Bool(true));
        }
        self.finish(m, v, false)
    }

    fn read_result(&self, contents: Vec<ResourceContents>, v: ProtocolVersion) -> Value {
        let contents: Vec<Value> = contents
            .into_iter()
            .map(|c| json!({"uri": c.uri, "mimeType": c.mime_type, "text": c.text}))
            .collect();
        let mut m = Map::new();
        m.insert("contents".into(), Value::Array(contents));
        self.finish(m, v, true)
    }
}

/// The refusal of an argument the tool's input schema does not declare, checked before any
/// handler runs: a handler never sees a parameter it did not publish (an `approver` slipped to a
/// tool that records `unattested`, say). A schema with `additionalProperties: true` takes any.
fn undeclared_argument(tool: &str, schema: &Value, arguments: Option<&Value>) -> Option<String> {
    let (Some(Value::Object(args)), Some(Value::Object(declared))) =
        (arguments, schema.get("properties"))
    else {
        return None;
    };
    if schema.get("additionalProperties") == Some(&Value::Bool(true)) {
        return None;
    }
    let unknown = args.keys().find(|k| !declared.contains_key(k.as_str()))?;
    let names: Vec<&str> = declared.keys().map(String::as_str).collect();
    Some(format!(
        "Error: {tool} does not take \"{unknown}\"; its arguments are {}",
        if names.is_empty() {
            "none".to_owned()
        } else {
            names.join(", ")
        }
    ))
}

/// The cancellation-table key of a request id: its exact JSON text, so `1` and `"1"` differ.
fn id_key(id: &Value) -> String {
    let mut s = String::new();
    canon::write_compact(&mut s, id, Integers::Exact);
    s
}

fn valid_id(id: Option<Value>) -> Value {
    match id {
        Some(id @ (Value::String(_) | Value::Number(_))) => id,
        _ => Value::Null,
    }
}

/// Built member by member: `json!` would copy `result` through `to_value`, and a result
/// can be large (a list of a thousand Ops).
fn success(id: Value, result: Value) -> Value {
    let mut m = Map::new();
    m.insert("jsonrpc".into(), Value::String("2.0".into()));
    m.insert("id".into(), id);
    m.insert("result".into(), result);
    Value::Object(m)
}

fn error_reply(id: Value, code: i64, message: &str, data: Option<Value>) -> Value {
    let mut error = Map::new();
    error.insert("code".into(), json!(code));
    error.insert("message".into(), json!(message));
    if let Some(d) = data {
        error.insert("data".into(), d);
    }
    json!({"jsonrpc": "2.0", "id": id, "error": Value::Object(error)})
}

fn invalid_request(id: Value) -> Value {
    error_reply(id, codes::INVALID_REQUEST, "Invalid Request", None)
}

fn invalid_params(id: Value, message: &str) -> Value {
    error_reply(id, codes::INVALID_PARAMS, message, None)
}

fn unsupported_version(id: Value, requested: &str) -> Value {
    let supported: Vec<&str> = ProtocolVersion::SUPPORTED
        .iter()
        .map(|s| s.as_str())
        .collect();
    error_reply(
        id,
        codes::UNSUPPORTED_VERSION,
        &format!("Unsupported protocol version: {requested}"),
        Some(json!({"requested": requested, "supported": supported})),
    )
}

fn panic_message(payload: &(dyn std::any::Any + Send)) -> String {
    if let Some(s) = payload.downcast_ref::<&str>() {
        (*s).to_owned()
    } else if let Some(s) = payload.downcast_ref::<String>() {
        s.clone()
    } else {
        "panic".to_owned()
    }
}

enum Line {
    Complete,
    TooLong,
    Eof,
}

/// Reads one `\n`-terminated line (without the `\n`) into `buf`. A line longer than `limit` is
/// consumed to its end and reported as `TooLong` without being kept in memory.
fn read_line(r: &mut impl BufRead, buf: &mut Vec<u8>, limit: usize) -> io::Result<Line> {
    buf.clear();
    let mut overflow = false;
    let mut seen_any = false;
    loop {
        let available = r.fill_buf()?;
        if available.is_empty() {
            return Ok(match (seen_any, overflow) {
                (false, _) => Line::Eof,
                (true, true) => Line::TooLong,
                (true, false) => Line::Complete,
            });
        }
        seen_any = true;
        let (chunk, done) = match available.iter().position(|&b| b == b'\n') {
            Some(i) => (&available[..i], Some(i + 1)),
            None => (available, None),
        };
        if !overflow {
            if buf.len() + chunk.len() > limit {
                overflow = true;
                buf.clear();
                buf.shrink_to(64 * 1024);
            } else {
                buf.extend_from_slice(chunk);
            }
        }
        let consumed = done.unwrap_or(available.len());
        r.consume(consumed);
        if done.is_some() {
            return Ok(if overflow {
                Line::TooLong
            } else {
                Line::Complete
            });
        }
    }
}

/// A `Write` into shared memory, for [`Server::serve_sync`].
#[derive(Clone, Default)]
struct SharedBuf(Arc<Mutex<Vec<u8>>>);

impl SharedBuf {
    fn take(&self) -> Vec<u8> {
        std::mem::take(&mut *lock(&self.0))
    }
}

impl Write for SharedBuf {
    fn write(&mut self, data: &[u8]) -> io::Result<usize> {
        lock(&self.0).extend_from_slice(data);
        Ok(data.len())
    }

    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}
