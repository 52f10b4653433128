//! What a server offers: tools, resources and resource templates, as plain data plus handlers.

use std::fmt;
use std::sync::Arc;

use serde_json::{Map, Value, json};

use crate::context::RequestContext;
use crate::version::ProtocolVersion;

/// What a tool handler produced.
#[derive(Clone, Debug, PartialEq)]
pub enum ToolOutput {
    /// An object (or other JSON value): answered as a pretty JSON text block, plus
    /// `structuredContent` when it is an object and the revision has it.
    Json(Value),
    /// A plain string: answered as one text block.
    Text(String),
    /// A failure whose text the tool words itself (no `Error: ` prefix is added): `isError: true`.
    ErrorText(String),
}

/// A tool's failure: answered as `isError: true` with the text `Error: <message>`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ToolError(pub String);

impl fmt::Display for ToolError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for ToolError {}

impl From<String> for ToolError {
    fn from(s: String) -> Self {
        ToolError(s)
    }
}

impl From<&str> for ToolError {
    fn from(s: &str) -> Self {
        ToolError(s.to_owned())
    }
}

/// The arguments of a `tools/call`: `None` when the request carried no `arguments` key.
pub type Arguments = Option<Value>;

/// A tool's code.
pub type ToolHandler =
    Arc<dyn Fn(Arguments, &RequestContext) -> Result<ToolOutput, ToolError> + Send + Sync>;

/// Behaviour hints shown to clients (they may not trust them).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ToolAnnotations {
    pub read_only: Option<bool>,
    pub destructive: Option<bool>,
    pub idempotent: Option<bool>,
    pub open_world: Option<bool>,
}

impl ToolAnnotations {
    /// A tool that only reads local state.
    pub const READ_ONLY: ToolAnnotations = ToolAnnotations {
        read_only: Some(true),
        destructive: Some(false),
        idempotent: Some(true),
        open_world: Some(false),
    };

    fn to_json(self) -> Value {
        let mut m = Map::new();
        for (key, v) in [
            ("readOnlyHint", self.read_only),
            ("destructiveHint", self.destructive),
            ("idempotentHint", self.idempotent),
            ("openWorldHint", self.open_world),
        ] {
            if let Some(b) = v {
                m.insert(key.into(), Value::Bool(b));
            }
        }
        Value::Object(m)
    }
}

/// A tool: its listing plus its handler.
#[derive(Clone)]
pub struct Tool {
    pub name: String,
    pub title: Option<String>,
    pub description: String,
    pub input_schema: Value,
    pub output_schema: Option<Value>,
    pub annotations: Option<ToolAnnotations>,
    pub(crate) handler: ToolHandler,
}

impl fmt::Debug for Tool {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Tool")
            .field("name", &self.name)
            .finish_non_exhaustive()
    }
}

impl Tool {
    /// A tool named `name` with a hand-written JSON Schema for its arguments.
    pub fn new(
        name: impl Into<String>,
        description: impl Into<String>,
        input_schema: Value,
        handler: impl Fn(Arguments, &RequestContext) -> Result<ToolOutput, ToolError>
        + Send
        + Sync
        + 'static,
    ) -> Tool {
        Tool {
            name: name.into(),
            title: None,
            description: description.into(),
            input_schema,
            output_schema: None,
            annotations: None,
            handler: Arc::new(handler),
        }
    }

    pub fn with_title(mut self, title: impl Into<String>) -> Tool {
        self.title = Some(title.into());
        self
    }

    pub fn with_annotations(mut self, annotations: ToolAnnotations) -> Tool {
        self.annotations = Some(annotations);
        self
    }

    /// Declares an output schema; every successful object result must then validate against it.
    pub fn with_output_schema(mut self, schema: Value) -> Tool {
        self.output_schema = Some(schema);
        self
    }

    /// The `tools/list` entry at revision `v` (fields the revision lacks are left out).
    pub fn listing(&self, v: ProtocolVersion) -> Value {
        let mut m = Map::new();
        m.insert("name".into(), Value::String(self.name.clone()));
        if let (Some(title), true) = (&self.title, v.has_structured_content()) {
            m.insert("title".into(), Value::String(title.clone()));
        }
        m.insert(
            "description".into(),
            Value::String(self.description.clone()),
        );
        m.insert("inputSchema".into(), self.input_schema.clone());
        if let (Some(schema), true) = (&self.output_schema, v.has_structured_content()) {
            m.insert("outputSchema".into(), schema.clone());
        }
        if let (Some(a), true) = (self.annotations, v.has_annotations()) {
            m.insert("annotations".into(), a.to_json());
        }
        Value::Object(m)
    }
}

/// A concrete resource, listed by `resources/list`.
#[derive(Clone, Debug, PartialEq)]
pub struct Resource {
    pub uri: String,
    pub name: String,
    pub title: Option<String>,
    pub description: String,
    pub mime_type: String,
}

impl Resource {
    pub fn new(
        uri: impl Into<String>,
        name: impl Into<String>,
        description: impl Into<String>,
        mime_type: impl Into<String>,
    ) -> Resource {
        Resource {
            uri: uri.into(),
            name: name.into(),
            title: None,
            description: description.into(),
            mime_type: mime_type.into(),
        }
    }

    pub fn with_title(mut self, title: impl Into<String>) -> Resource {
        self.title = Some(title.into());
        self
    }

    pub fn listing(&self, v: ProtocolVersion) -> Value {
        described(
            "uri",
            &self.uri,
            &self.name,
            &self.title,
            &self.description,
            &self.mime_type,
            v,
        )
    }
}

/// A parameterised resource, listed by `resources/templates/list`.
#[derive(Clone, Debug, PartialEq)]
pub struct ResourceTemplate {
    pub uri_template: String,
    pub name: String,
    pub title: Option<String>,
    pub description: String,
    pub mime_type: String,
}

impl ResourceTemplate {
    pub fn new(
        uri_template: impl Into<String>,
        name: impl Into<String>,
        description: impl Into<String>,
        mime_type: impl Into<String>,
    ) -> ResourceTemplate {
        ResourceTemplate {
            uri_template: uri_template.into(),
            name: name.into(),
            title: None,
            description: description.into(),
            mime_type: mime_type.into(),
        }
    }

    pub fn listing(&self, v: ProtocolVersion) -> Value {
        described(
            "uriTemplate",
            &self.uri_template,
            &self.name,
            &self.title,
            &self.description,
            &self.mime_type,
            v,
        )
    }
}

fn described(
    uri_key: &str,
    uri: &str,
    name: &str,
    title: &Option<String>,
    description: &str,
    mime_type: &str,
    v: ProtocolVersion,
) -> Value {
    let mut m = Map::new();
    m.insert(uri_key.into(), json!(uri));
    m.insert("name".into(), json!(name));
    if let (Some(t), true) = (title, v.has_structured_content()) {
        m.insert("title".into(), json!(t));
    }
    m.insert("description".into(), json!(description));
    m.insert("mimeType".into(), json!(mime_type));
    Value::Object(m)
}

/// One entry of a `resources/read` result.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ResourceContents {
    pub uri: String,
    pub mime_type: String,
    pub text: String,
}

/// Why a resource could not be read.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ResourceError {
    /// No such resource; the message is sent as is (e.g. `Unknown resource: <uri>`) with the
    /// server's not-found code.
    NotFound(String),
    /// Reading failed: answered -32603 `Internal error: <message>`.
    Failed(String),
}

/// Reads any resource by URI (listed, templated or unlisted).
pub type ResourceReader = Arc<
    dyn Fn(&str, &RequestContext) -> Result<Vec<ResourceContents>, ResourceError> + Send + Sync,
>;
