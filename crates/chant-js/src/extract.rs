//! The one place where JavaScript values become `chant-core` data.
//!
//! Values are read directly from the QuickJS heap. The core runtime module marks what is not
//! plain data with a hidden `__chant` property: a declarable instance holds its registry index
//! (a number); `AttrRef`, `Tagged`, `Intrinsic` and composite instances inherit a string kind
//! (`attr`, `tagged`, `intrinsic`, `composite`) from their prototype. Everything else is read as
//! plain data: arrays, objects (own enumerable keys in JavaScript's order), scalars; functions and
//! symbols read as `undefined`.

use chant_core::model::{DeclId, DeclKind, Declarable, Evaluation, Value};
use rquickjs::{Array, Ctx, Object, Type, Value as Js};

const MAX_DEPTH: usize = 200;

/// The longest array read back (the prelude bounds the built-ins at the same length).
const MAX_ARRAY_LENGTH: f64 = 16_777_216.0;

/// What one value costs in the estimate a [`Reader`] keeps: its node, plus its text.
const NODE_BYTES: usize = std::mem::size_of::<Value>() + 16;

/// The text of an error rquickjs reports; a JavaScript exception (a getter or trap that threw)
/// is taken from the context and named by its message.
fn err(ctx: &Ctx<'_>, e: rquickjs::Error) -> String {
    if e.is_exception() {
        let thrown = ctx.catch();
        if let Some(ex) = thrown.as_exception() {
            return ex.message().unwrap_or_else(|| "an exception".into());
        }
        if let Some(s) = thrown.as_string().and_then(|s| s.to_string().ok()) {
            return s;
        }
        return "a value was thrown while it was read".into();
    }
    e.to_string()
}

fn decl_id(v: &Js<'_>) -> Option<DeclId> {
    v.as_number()
        .filter(|n| *n >= 0.0 && n.fract() == 0.0 && *n <= u32::MAX as f64)
        .map(|n| DeclId(n as u32))
}

/// Reads JavaScript values into `chant-core` data within a budget: an estimate of the bytes
/// built (shared references are copied, so a small heap can describe a huge tree), and the
/// evaluation's deadline, asked every few thousand values.
pub struct Reader<'a> {
    bytes: usize,
    limit: usize,
    nodes: usize,
    over: Box<dyn Fn() -> bool + 'a>,
}

impl<'a> Reader<'a> {
    pub fn new(limit: usize, over: impl Fn() -> bool + 'a) -> Reader<'a> {
        Reader {
            bytes: 0,
            limit,
            nodes: 0,
            over: Box::new(over),
        }
    }

    fn charge(&mut self, text: usize) -> Result<(), String> {
        self.bytes += NODE_BYTES + text;
        self.nodes += 1;
        if self.bytes > self.limit {
            return Err(format!(
                "the project's values exceed {} MiB once read (a value shared many times is copied each time)",
                self.limit >> 20
            ));
        }
        if self.nodes.is_multiple_of(4096) && (self.over)() {
            return Err("interrupted".into());
        }
        Ok(())
    }

    /// Reads one value.
    pub fn value<'js>(
        &mut self,
        ctx: &Ctx<'js>,
        v: &Js<'js>,
        depth: usize,
    ) -> Result<Value, String> {
        if depth > MAX_DEPTH {
            return Err("value nested too deeply (a cycle?)".into());
        }
        self.charge(0)?;
        Ok(match v.type_of() {
            Type::Uninitialized | Type::Undefined => Value::Undefined,
            Type::Null => Value::Null,
            Type::Bool => Value::Bool(v.as_bool().unwrap_or(false)),
            Type::Int | Type::Float => Value::Number(v.as_number().unwrap_or(f64::NAN)),
            Type::BigInt => Value::Number(
                v.as_big_int()
                    .and_then(|b| b.clone().to_i64().ok())
                    .unwrap_or(0) as f64,
            ),
            Type::String => {
                let s = v
                    .as_string()
                    .map(|s| s.to_string())
                    .transpose()
                    .map_err(|e| err(ctx, e))?
                    .unwrap_or_default();
                self.charge(s.len())?;
                Value::String(s)
            }
            Type::Array => {
                let array: &Array = v.as_array().ok_or("array expected")?;
                // Read as a number first: a sparse array can claim up to 2^32 - 1 elements.
                let length: f64 = array.as_object().get("length").map_err(|e| err(ctx, e))?;
                if length > MAX_ARRAY_LENGTH {
                    return Err(format!(
                        "an array of length {length}: over the {MAX_ARRAY_LENGTH} elements chant reads"
                    ));
                }
                let mut items = Vec::new();
                for item in array.iter::<Js>() {
                    let item = item.map_err(|e| err(ctx, e))?;
                    items.push(self.value(ctx, &item, depth + 1)?);
                }
                Value::Array(items)
            }
            Type::Object | Type::Exception | Type::Proxy => {
                self.object(ctx, v.as_object().ok_or("object expected")?, depth)?
            }
            Type::Function
            | Type::Constructor
            | Type::Symbol
            | Type::Promise
            | Type::Module
            | Type::Unknown => Value::Undefined,
        })
    }

    fn object<'js>(
        &mut self,
        ctx: &Ctx<'js>,
        obj: &Object<'js>,
        depth: usize,
    ) -> Result<Value, String> {
        let e = |e| err(ctx, e);
        let marker: Js = obj.get("__chant").map_err(e)?;
        if let Some(id) = decl_id(&marker) {
            return Ok(Value::Decl(id));
        }
        if let Some(kind) = marker.as_string() {
            let kind = kind.to_string().map_err(e)?;
            return Ok(match kind.as_str() {
                "attr" => {
                    let parent: Object = obj.get("parent").map_err(e)?;
                    let id = decl_id(&parent.get::<_, Js>("__chant").map_err(e)?)
                        .ok_or("attribute of a non-declarable")?;
                    let attribute: String = obj.get("attribute").map_err(e)?;
                    self.charge(attribute.len())?;
                    Value::AttrRef {
                        decl: id,
                        attribute,
                    }
                }
                "tagged" => {
                    let tag: String = obj.get("tag").map_err(e)?;
                    let value: Js = obj.get("value").map_err(e)?;
                    Value::Tagged {
                        tag,
                        value: Box::new(self.value(ctx, &value, depth + 1)?),
                    }
                }
                "intrinsic" => {
                    let name: String = obj.get("name").map_err(e)?;
                    let args: Js = obj.get("args").map_err(e)?;
                    Value::Intrinsic {
                        name,
                        args: Box::new(self.value(ctx, &args, depth + 1)?),
                    }
                }
                "composite" => {
                    let name: String = obj
                        .get::<_, Option<String>>("compositeName")
                        .map_err(e)?
                        .unwrap_or_else(|| "anonymous".into());
                    let members: Object = obj.get("members").map_err(e)?;
                    Value::Composite {
                        name,
                        members: self.entries(ctx, &members, depth)?,
                    }
                }
                _ => Value::Object(self.entries(ctx, obj, depth)?),
            });
        }
        Ok(Value::Object(self.entries(ctx, obj, depth)?))
    }

    fn entries<'js>(
        &mut self,
        ctx: &Ctx<'js>,
        obj: &Object<'js>,
        depth: usize,
    ) -> Result<Vec<(String, Value)>, String> {
        let mut out = Vec::new();
        for prop in obj.props::<String, Js>() {
            let (k, v) = prop.map_err(|e| err(ctx, e))?;
            self.charge(k.len())?;
            let v = self.value(ctx, &v, depth + 1)?;
            out.push((k, v));
        }
        Ok(out)
    }

    /// A module namespace's exports, in the namespace's order.
    pub fn exports<'js>(
        &mut self,
        ctx: &Ctx<'js>,
        namespace: &Object<'js>,
    ) -> Result<Vec<(String, Value)>, String> {
        self.entries(ctx, namespace, 0)
    }

    /// Every declarable of the registry `[instances, props, attributes]`.
    pub fn decls<'js>(
        &mut self,
        ctx: &Ctx<'js>,
        registry: &Array<'js>,
    ) -> Result<Vec<Declarable>, String> {
        let e = |e| err(ctx, e);
        let instances: Array = registry.get(0).map_err(e)?;
        let props: Array = registry.get(1).map_err(e)?;
        let attributes: Array = registry.get(2).map_err(e)?;
        let mut out = Vec::new();
        for i in 0..instances.len() {
            let instance: Object = instances.get(i).map_err(e)?;
            let info: Vec<String> = instance.get("__chantInfo").map_err(e)?;
            let [kind, lexicon, entity_type, class_name]: [String; 4] = info
                .try_into()
                .map_err(|_| "a declarable without class information".to_owned())?;
            let p: Js = props.get(i).map_err(e)?;
            let a: Js = attributes.get(i).map_err(e)?;
            out.push(Declarable {
                kind: match kind.as_str() {
                    "resource" => DeclKind::Resource,
                    "property" => DeclKind::Property,
                    "output" => DeclKind::Output,
                    other => return Err(format!("unknown declarable kind {other}")),
                },
                lexicon,
                entity_type,
                class_name,
                props: self.value(ctx, &p, 0)?,
                attributes: self.value(ctx, &a, 0)?,
            });
        }
        Ok(out)
    }
}

/// Every declarable a value names exists: a marker is only a number on an object, and project
/// code can put any number there (a Proxy answers what it likes).
pub fn check_ids(evaluation: &Evaluation) -> Result<(), String> {
    let n = evaluation.decls.len();
    let mut bad = None;
    let mut visit = |v: &Value| {
        v.visit_refs(&mut |d, _| {
            if d.0 as usize >= n {
                bad.get_or_insert(d.0);
            }
        })
    };
    for m in &evaluation.modules {
        for (_, v) in &m.exports {
            visit(v);
        }
    }
    for d in &evaluation.decls {
        visit(&d.props);
        visit(&d.attributes);
    }
    match bad {
        None => Ok(()),
        Some(id) => Err(format!(
            "a value claims to be declarable #{id}, and there are {n}: only values made with a lexicon's classes are declarables"
        )),
    }
}

/// Plain JSON of a value (the config's default export): `undefined` keys dropped, declarables
/// and other markers refused.
pub fn to_json(v: &Value) -> Result<serde_json::Value, String> {
    Ok(match v {
        Value::Undefined | Value::Null => serde_json::Value::Null,
        Value::Bool(b) => serde_json::Value::Bool(*b),
        Value::Number(n) => serde_json::Number::from_f64(*n).map_or(serde_json::Value::Null, |n| {
            if n.as_f64()
                .is_some_and(|f| f.fract() == 0.0 && f.abs() < 9.0e15)
            {
                serde_json::Value::from(n.as_f64().unwrap_or_default() as i64)
            } else {
                serde_json::Value::Number(n)
            }
        }),
        Value::String(s) => serde_json::Value::String(s.clone()),
        Value::Array(items) => {
            serde_json::Value::Array(items.iter().map(to_json).collect::<Result<_, _>>()?)
        }
        Value::Object(entries) => serde_json::Value::Object(
            entries
                .iter()
                .filter(|(_, v)| !matches!(v, Value::Undefined))
                .map(|(k, v)| Ok((k.clone(), to_json(v)?)))
                .collect::<Result<_, String>>()?,
        ),
        _ => return Err("expected plain data, found a declarable or reference".into()),
    })
}
