//! The entity model as plain Rust data: declarables, their property values, and the module
//! exports an evaluator hands back.

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

/// Index of a declarable in [`Evaluation::decls`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct DeclId(pub u32);

/// What a declarable is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DeclKind {
    /// A top-level item of its lexicon's output, referenced by name.
    Resource,
    /// Inlined wherever it is referenced.
    Property,
    /// An output of the producing lexicon (`output(ref, name)`).
    Output,
}

impl DeclKind {
    pub fn as_str(self) -> &'static str {
        match self {
            DeclKind::Resource => "resource",
            DeclKind::Property => "property",
            DeclKind::Output => "output",
        }
    }
}

/// A value inside a declarable's props, as JavaScript had it.
#[derive(Clone, Debug, PartialEq)]
pub enum Value {
    /// `undefined`: kept distinct from `null` (serializers treat them differently).
    Undefined,
    Null,
    Bool(bool),
    Number(f64),
    String(String),
    Array(Vec<Value>),
    /// A plain object, keys in insertion order.
    Object(Vec<(String, Value)>),
    /// Another declarable.
    Decl(DeclId),
    /// `resource.Attr`: an attribute of a declarable.
    AttrRef {
        decl: DeclId,
        attribute: String,
    },
    /// A tagged value such as GitLab's `!reference [job, key]`.
    Tagged {
        tag: String,
        value: Box<Value>,
    },
    /// A lexicon intrinsic (e.g. AWS `{"Fn::Sub": …}`), rendered by the lexicon.
    Intrinsic {
        name: String,
        args: Box<Value>,
    },
    /// A composite instance: its members in declaration order.
    Composite {
        name: String,
        members: Vec<(String, Value)>,
    },
}

impl Value {
    /// The value at `key` of an object.
    pub fn get(&self, key: &str) -> Option<&Value> {
        match self {
            Value::Object(entries) => entries.iter().find(|(k, _)| k == key).map(|(_, v)| v),
            _ => None,
        }
    }

    pub fn as_str(&self) -> Option<&str> {
        match self {
            Value::String(s) => Some(s),
            _ => None,
        }
    }

    /// True for `undefined` and `null`.
    pub fn is_nullish(&self) -> bool {
        matches!(self, Value::Undefined | Value::Null)
    }

    /// Every declarable this value references, in order of first appearance (walking into
    /// arrays, objects, tagged values, intrinsics and attribute references, not into other
    /// declarables' props).
    pub fn visit_refs(&self, f: &mut dyn FnMut(DeclId, Option<&str>)) {
        match self {
            Value::Decl(d) => f(*d, None),
            Value::AttrRef { decl, attribute } => f(*decl, Some(attribute)),
            Value::Array(items) => items.iter().for_each(|v| v.visit_refs(f)),
            Value::Object(entries) => entries.iter().for_each(|(_, v)| v.visit_refs(f)),
            Value::Composite { members, .. } => members.iter().for_each(|(_, v)| v.visit_refs(f)),
            Value::Tagged { value, .. } | Value::Intrinsic { args: value, .. } => {
                value.visit_refs(f)
            }
            _ => {}
        }
    }
}

/// One declarable instance created while evaluating a project.
#[derive(Clone, Debug, PartialEq)]
pub struct Declarable {
    pub kind: DeclKind,
    pub lexicon: String,
    /// e.g. `GitLab::CI::Job`.
    pub entity_type: String,
    /// e.g. `Job`.
    pub class_name: String,
    pub props: Value,
    /// AWS resource attributes (`DependsOn`, `Condition`, …); `Undefined` when none.
    pub attributes: Value,
}

impl Declarable {
    /// The lexicon whose output holds it: its own, or for an output (which belongs to no
    /// lexicon itself) the lexicon that produces it (`lexicon` in its props).
    pub fn home_lexicon(&self) -> &str {
        match self.kind {
            DeclKind::Output => self
                .props
                .get("lexicon")
                .and_then(Value::as_str)
                .unwrap_or(&self.lexicon),
            _ => &self.lexicon,
        }
    }
}

/// The exports of one evaluated source file.
#[derive(Clone, Debug, PartialEq)]
pub struct ModuleExports {
    pub file: PathBuf,
    /// Export name → value, in the module's own order (`default` for `export default`).
    pub exports: Vec<(String, Value)>,
}

/// A file that failed to evaluate.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct EvalError {
    pub file: PathBuf,
    /// `file:line:column: message`-style text naming the position.
    pub message: String,
}

/// Everything one evaluation of a project produced.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Evaluation {
    pub decls: Vec<Declarable>,
    pub modules: Vec<ModuleExports>,
    pub errors: Vec<EvalError>,
    /// What it read from the project, to tell later whether evaluating again would read the
    /// same (evaluation is deterministic: no clock, randomness, environment or host).
    pub reads: Reads,
}

/// The project files an evaluation read, and how each import found its file.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Reads {
    /// Each project module loaded, by resolved path: the SHA-256 (hex) of the bytes evaluated.
    pub modules: Vec<(PathBuf, String)>,
    /// Each import of a project file, in the order they were resolved.
    pub imports: Vec<Import>,
}

/// One import resolved to a project file.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Import {
    /// The importing module's name (a resolved path, or the evaluation's own entry point).
    pub from: String,
    /// The directory candidates are resolved from.
    pub dir: PathBuf,
    /// Each candidate asked, in order, and the file it resolved to (`None`: no file there).
    pub probes: Vec<(String, Option<PathBuf>)>,
    /// The module it resolved to.
    pub to: PathBuf,
}

impl Evaluation {
    pub fn decl(&self, id: DeclId) -> &Declarable {
        &self.decls[id.0 as usize]
    }
}

/// The default wall time of one evaluation of a whole project.
pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(10);

/// What one evaluation may spend, and what may stop it early. The time covers the whole
/// evaluation: every file, and every JavaScript that runs while its values are read back.
#[derive(Clone, Default)]
pub struct Budget {
    /// Wall time; `None` takes the project's `timeout`, else [`DEFAULT_TIMEOUT`].
    pub time: Option<Duration>,
    /// Asked while JavaScript runs; `true` stops the evaluation (cancellation, end of input).
    pub stop: Option<Arc<dyn Fn() -> bool + Send + Sync>>,
}

impl std::fmt::Debug for Budget {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Budget")
            .field("time", &self.time)
            .field("stop", &self.stop.is_some())
            .finish()
    }
}

impl Budget {
    /// This budget with `time` filled in from `fallback` when the caller set none.
    pub fn or_time(&self, fallback: Option<Duration>) -> Budget {
        Budget {
            time: self.time.or(fallback),
            stop: self.stop.clone(),
        }
    }

    pub fn time(&self) -> Duration {
        self.time.unwrap_or(DEFAULT_TIMEOUT)
    }

    pub fn stopped(&self) -> bool {
        self.stop.as_ref().is_some_and(|s| s())
    }
}

/// Evaluates a project's source files (implemented by `chant-js`).
pub trait Evaluator {
    /// Evaluates `files` (absolute paths) as modules within `budget`; imports may not leave
    /// `boundary` (a resolved directory).
    fn evaluate(
        &self,
        boundary: &std::path::Path,
        files: &[PathBuf],
        budget: &Budget,
    ) -> Evaluation;

    /// Evaluates each of `files` on its own (nothing one does is seen by another), within one
    /// `budget`: one evaluation per file, in order.
    fn evaluate_each(
        &self,
        boundary: &std::path::Path,
        files: &[PathBuf],
        budget: &Budget,
    ) -> Vec<Evaluation> {
        files
            .iter()
            .map(|f| self.evaluate(boundary, std::slice::from_ref(f), budget))
            .collect()
    }

    /// Evaluates one file and returns its default export (used for `chant.config.ts`).
    fn evaluate_config(
        &self,
        boundary: &std::path::Path,
        file: &std::path::Path,
        budget: &Budget,
    ) -> Result<serde_json::Value, String>;

    /// Evaluates one file and returns its export `export` (`null` when it has none): a
    /// workspace's record kinds (`recordKind`).
    fn evaluate_export(
        &self,
        boundary: &std::path::Path,
        file: &std::path::Path,
        export: &str,
        budget: &Budget,
    ) -> Result<serde_json::Value, String> {
        let _ = (boundary, file, budget);
        Err(format!("this evaluator reads no export {export}"))
    }
}
/// JSON of a prop value as `JSON.stringify` would write it: `undefined` dropped from objects
/// (`null` in arrays), a nested declarable as its enumerable keys (a resource's attribute
/// references, a property declarable `{}`).
pub fn to_json(v: &Value) -> serde_json::Value {
    match v {
        Value::Undefined | Value::Null => serde_json::Value::Null,
        Value::Bool(b) => serde_json::Value::Bool(*b),
        Value::Number(n) => number(*n),
        Value::String(s) => serde_json::Value::String(s.clone()),
        Value::Array(items) => serde_json::Value::Array(items.iter().map(to_json).collect()),
        Value::Object(entries) => serde_json::Value::Object(
            entries
                .iter()
                .filter(|(_, v)| !matches!(v, Value::Undefined))
                .map(|(k, v)| (k.clone(), to_json(v)))
                .collect(),
        ),
        Value::Decl(_) => serde_json::Value::Object(serde_json::Map::new()),
        Value::AttrRef { attribute, .. } => {
            serde_json::json!({"__attrRef": {"attribute": attribute}})
        }
        Value::Tagged { value, .. } | Value::Intrinsic { args: value, .. } => to_json(value),
        Value::Composite { members, .. } => serde_json::Value::Object(
            members
                .iter()
                .map(|(k, v)| (k.clone(), to_json(v)))
                .collect(),
        ),
    }
}

fn number(n: f64) -> serde_json::Value {
    if n.fract() == 0.0 && n.abs() < 9.0e15 {
        serde_json::Value::from(n as i64)
    } else {
        serde_json::Number::from_f64(n).map_or(serde_json::Value::Null, serde_json::Value::Number)
    }
}
