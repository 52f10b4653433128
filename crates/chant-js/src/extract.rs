//! The one place where JavaScript values become `chant-core` data.
//!
//! Values are read directly from the QuickJS heap. The core runtime module marks what is not
//! plain data with a hidden `__chant` property: a declarable instance holds its registry index
//! (a number); `AttrRef`, `Tagged`, `Intrinsic` and composite instances inherit a string kind
//! (`attr`, `tagged`, `intrinsic`, `composite`) from their prototype. Everything else is read as
//! plain data: arrays, objects (own enumerable keys in JavaScript's order), scalars; functions and
//! symbols read as `undefined`.

use chant_core::model::{DeclId, DeclKind, Declarable, Value};
use rquickjs::{Array, Ctx, Object, Type, Value as Js};

const MAX_DEPTH: usize = 200;

fn err(e: rquickjs::Error) -> String {
    e.to_string()
}

fn decl_id(v: &Js<'_>) -> Option<DeclId> {
    v.as_number()
        .filter(|n| *n >= 0.0 && n.fract() == 0.0)
        .map(|n| DeclId(n as u32))
}

/// Reads one value.
pub fn value<'js>(ctx: &Ctx<'js>, v: &Js<'js>, depth: usize) -> Result<Value, String> {
    if depth > MAX_DEPTH {
        return Err("value nested too deeply (a cycle?)".into());
    }
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
        Type::String => Value::String(
            v.as_string()
                .map(|s| s.to_string())
                .transpose()
                .map_err(err)?
                .unwrap_or_default(),
        ),
        Type::Array => {
            let array: &Array = v.as_array().ok_or("array expected")?;
            let mut items = Vec::with_capacity(array.len());
            for item in array.iter::<Js>() {
                items.push(value(ctx, &item.map_err(err)?, depth + 1)?);
            }
            Value::Array(items)
        }
        Type::Object | Type::Exception | Type::Proxy => {
            object(ctx, v.as_object().ok_or("object expected")?, depth)?
        }
        Type::Function
        | Type::Constructor
        | Type::Symbol
        | Type::Promise
        | Type::Module
        | Type::Unknown => Value::Undefined,
    })
}

fn object<'js>(ctx: &Ctx<'js>, obj: &Object<'js>, depth: usize) -> Result<Value, String> {
    let marker: Js = obj.get("__chant").map_err(err)?;
    if let Some(id) = decl_id(&marker) {
        return Ok(Value::Decl(id));
    }
    if let Some(kind) = marker.as_string() {
        let kind = kind.to_string().map_err(err)?;
        let field = |name: &str| -> Result<Js<'js>, String> { obj.get(name).map_err(err) };
        return Ok(match kind.as_str() {
            "attr" => {
                let parent: Object = obj.get("parent").map_err(err)?;
                let id = decl_id(&parent.get::<_, Js>("__chant").map_err(err)?)
                    .ok_or("attribute of a non-declarable")?;
                let attribute: String = obj.get("attribute").map_err(err)?;
                Value::AttrRef {
                    decl: id,
                    attribute,
                }
            }
            "tagged" => Value::Tagged {
                tag: obj.get("tag").map_err(err)?,
                value: Box::new(value(ctx, &field("value")?, depth + 1)?),
            },
            "intrinsic" => Value::Intrinsic {
                name: obj.get("name").map_err(err)?,
                args: Box::new(value(ctx, &field("args")?, depth + 1)?),
            },
            "composite" => {
                let name: String = obj
                    .get::<_, Option<String>>("compositeName")
                    .map_err(err)?
                    .unwrap_or_else(|| "anonymous".into());
                let members: Object = obj.get("members").map_err(err)?;
                Value::Composite {
                    name,
                    members: entries(ctx, &members, depth)?,
                }
            }
            _ => Value::Object(entries(ctx, obj, depth)?),
        });
    }
    Ok(Value::Object(entries(ctx, obj, depth)?))
}

fn entries<'js>(
    ctx: &Ctx<'js>,
    obj: &Object<'js>,
    depth: usize,
) -> Result<Vec<(String, Value)>, String> {
    let mut out = Vec::new();
    for prop in obj.props::<String, Js>() {
        let (k, v) = prop.map_err(err)?;
        out.push((k, value(ctx, &v, depth + 1)?));
    }
    Ok(out)
}

/// A module namespace's exports, in the namespace's order.
pub fn exports<'js>(
    ctx: &Ctx<'js>,
    namespace: &Object<'js>,
) -> Result<Vec<(String, Value)>, String> {
    entries(ctx, namespace, 0)
}

/// Every declarable of the registry `[instances, props, attributes]`.
pub fn decls<'js>(ctx: &Ctx<'js>, registry: &Array<'js>) -> Result<Vec<Declarable>, String> {
    let instances: Array = registry.get(0).map_err(err)?;
    let props: Array = registry.get(1).map_err(err)?;
    let attributes: Array = registry.get(2).map_err(err)?;
    let mut out = Vec::with_capacity(instances.len());
    for i in 0..instances.len() {
        let instance: Object = instances.get(i).map_err(err)?;
        let info: Vec<String> = instance.get("__chantInfo").map_err(err)?;
        let [kind, lexicon, entity_type, class_name]: [String; 4] = info
            .try_into()
            .map_err(|_| "a declarable without class information".to_owned())?;
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
            props: value(ctx, &props.get::<Js>(i).map_err(err)?, 0)?,
            attributes: value(ctx, &attributes.get::<Js>(i).map_err(err)?, 0)?,
        });
    }
    Ok(out)
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
