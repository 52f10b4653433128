//! The one place where JavaScript values become `chant-core` data.
//!
//! The core runtime module encodes values as JSON with markers (see `runtime/chant.ts`):
//! `{"$u":1}` undefined, `{"$n":"NaN"}` a non-finite number, `{"$d":id}` a declarable,
//! `{"$a":[id,attr]}` an attribute reference, `{"$t":tag,"v":…}` a tagged value,
//! `{"$i":name,"v":…}` an intrinsic, `{"$c":name,"m":[[k,v]…]}` a composite instance and
//! `{"$o":[[k,v]…]}` a plain object. Everything else is plain JSON.

use chant_core::model::{DeclId, DeclKind, Declarable, Value};
use serde_json::Value as Json;

fn id(v: &Json) -> Result<DeclId, String> {
    v.as_u64()
        .map(|n| DeclId(n as u32))
        .ok_or_else(|| format!("bad declarable id {v}"))
}

fn entries(v: &Json) -> Result<Vec<(String, Value)>, String> {
    let items = v.as_array().ok_or("object entries must be an array")?;
    items
        .iter()
        .map(|pair| match pair.as_array().map(Vec::as_slice) {
            Some([Json::String(k), v]) => Ok((k.clone(), value(v)?)),
            _ => Err(format!("bad object entry {pair}")),
        })
        .collect()
}

/// Decodes one encoded value.
pub fn value(v: &Json) -> Result<Value, String> {
    Ok(match v {
        Json::Null => Value::Null,
        Json::Bool(b) => Value::Bool(*b),
        Json::Number(n) => Value::Number(n.as_f64().unwrap_or(f64::NAN)),
        Json::String(s) => Value::String(s.clone()),
        Json::Array(items) => Value::Array(items.iter().map(value).collect::<Result<_, _>>()?),
        Json::Object(m) => {
            if m.contains_key("$u") {
                Value::Undefined
            } else if let Some(n) = m.get("$n") {
                Value::Number(match n.as_str() {
                    Some("Infinity") => f64::INFINITY,
                    Some("-Infinity") => f64::NEG_INFINITY,
                    _ => f64::NAN,
                })
            } else if let Some(d) = m.get("$d") {
                Value::Decl(id(d)?)
            } else if let Some(a) = m.get("$a") {
                match a.as_array().map(Vec::as_slice) {
                    Some([d, Json::String(attr)]) => Value::AttrRef {
                        decl: id(d)?,
                        attribute: attr.clone(),
                    },
                    _ => return Err(format!("bad attribute reference {a}")),
                }
            } else if let Some(Json::String(tag)) = m.get("$t") {
                Value::Tagged {
                    tag: tag.clone(),
                    value: Box::new(value(m.get("v").unwrap_or(&Json::Null))?),
                }
            } else if let Some(Json::String(name)) = m.get("$i") {
                Value::Intrinsic {
                    name: name.clone(),
                    args: Box::new(value(m.get("v").unwrap_or(&Json::Null))?),
                }
            } else if let Some(Json::String(name)) = m.get("$c") {
                Value::Composite {
                    name: name.clone(),
                    members: entries(m.get("m").unwrap_or(&Json::Null))?,
                }
            } else if let Some(o) = m.get("$o") {
                Value::Object(entries(o)?)
            } else {
                return Err(format!("unmarked object {v}"));
            }
        }
    })
}

/// Decodes `__chant_encode_exports`'s output: `[[name, value]…]`.
pub fn exports(json: &str) -> Result<Vec<(String, Value)>, String> {
    let parsed: Json = serde_json::from_str(json).map_err(|e| e.to_string())?;
    entries(&parsed)
}

/// Decodes `__chant_dump`'s output: `[[kind, lexicon, type, className, props, attributes]…]`.
pub fn decls(json: &str) -> Result<Vec<Declarable>, String> {
    let parsed: Json = serde_json::from_str(json).map_err(|e| e.to_string())?;
    let items = parsed.as_array().ok_or("declarables must be an array")?;
    items
        .iter()
        .map(|d| match d.as_array().map(Vec::as_slice) {
            Some(
                [
                    Json::String(kind),
                    Json::String(lexicon),
                    Json::String(ty),
                    Json::String(class),
                    props,
                    attributes,
                ],
            ) => Ok(Declarable {
                kind: match kind.as_str() {
                    "resource" => DeclKind::Resource,
                    "property" => DeclKind::Property,
                    "output" => DeclKind::Output,
                    other => return Err(format!("unknown declarable kind {other}")),
                },
                lexicon: lexicon.clone(),
                entity_type: ty.clone(),
                class_name: class.clone(),
                props: value(props)?,
                attributes: value(attributes)?,
            }),
            _ => Err(format!("bad declarable {d}")),
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn markers_decode() {
        let v = value(&json!({"$o": [["a", {"$u": 1}], ["b", [1, {"$d": 3}]], ["c", {"$a": [2, "Arn"]}], ["$o", "literal"]]})).unwrap();
        assert_eq!(
            v,
            Value::Object(vec![
                ("a".into(), Value::Undefined),
                (
                    "b".into(),
                    Value::Array(vec![Value::Number(1.0), Value::Decl(DeclId(3))])
                ),
                (
                    "c".into(),
                    Value::AttrRef {
                        decl: DeclId(2),
                        attribute: "Arn".into()
                    }
                ),
                ("$o".into(), Value::String("literal".into())),
            ])
        );
        assert!(value(&json!({"x": 1})).is_err());
    }
}
