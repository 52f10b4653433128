//! JSON text exactly as JavaScript's `JSON.stringify` writes it.
//!
//! This crate owns JavaScript-compatible JSON rendering: MCP text blocks, AgentXchain's files and
//! dedupe keys, and (later) chant's canonical forms and digests must be byte-compatible with the
//! JavaScript references, so numbers follow `Number#toString` (`1`, not `1.0`; `1e+21`, not
//! `1e21`) and strings escape only what JavaScript escapes. It knows nothing of MCP, git or any
//! product: it turns `serde_json` values into text.

use serde_json::{Map, Number, Value};

/// How integers that do not fit a JavaScript number exactly are written.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Integers {
    /// As JavaScript would: the value is rounded to the nearest `f64` first.
    Js,
    /// Digit for digit, as parsed (used for JSON-RPC ids, which must be echoed unchanged).
    Exact,
}

/// `JSON.stringify(value)`.
pub fn to_compact(value: &Value) -> String {
    let mut out = String::with_capacity(128);
    write_compact(&mut out, value, Integers::Js);
    out
}

/// `JSON.stringify(value, null, 2)`.
pub fn to_pretty(value: &Value) -> String {
    let mut out = String::with_capacity(256);
    write_pretty(&mut out, value, 0);
    out
}

/// Appends the compact form of `value` to `out`.
pub fn write_compact(out: &mut String, value: &Value, ints: Integers) {
    match value {
        Value::Array(items) => {
            out.push('[');
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                write_compact(out, item, ints);
            }
            out.push(']');
        }
        Value::Object(map) => {
            out.push('{');
            for (i, (k, v)) in map.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                write_string(out, k);
                out.push(':');
                write_compact(out, v, ints);
            }
            out.push('}');
        }
        scalar => write_scalar(out, scalar, ints),
    }
}

fn write_pretty(out: &mut String, value: &Value, depth: usize) {
    match value {
        Value::Array(items) if !items.is_empty() => {
            out.push('[');
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                newline_indent(out, depth + 1);
                write_pretty(out, item, depth + 1);
            }
            newline_indent(out, depth);
            out.push(']');
        }
        Value::Object(map) if !map.is_empty() => write_pretty_object(out, map, depth),
        Value::Array(_) => out.push_str("[]"),
        Value::Object(_) => out.push_str("{}"),
        scalar => write_scalar(out, scalar, Integers::Js),
    }
}

fn write_pretty_object(out: &mut String, map: &Map<String, Value>, depth: usize) {
    out.push('{');
    for (i, (k, v)) in map.iter().enumerate() {
        if i > 0 {
            out.push(',');
        }
        newline_indent(out, depth + 1);
        write_string(out, k);
        out.push_str(": ");
        write_pretty(out, v, depth + 1);
    }
    newline_indent(out, depth);
    out.push('}');
}

fn newline_indent(out: &mut String, depth: usize) {
    out.push('\n');
    for _ in 0..depth {
        out.push_str("  ");
    }
}

fn write_scalar(out: &mut String, value: &Value, ints: Integers) {
    match value {
        Value::Null => out.push_str("null"),
        Value::Bool(true) => out.push_str("true"),
        Value::Bool(false) => out.push_str("false"),
        Value::Number(n) => write_number(out, n, ints),
        Value::String(s) => write_string(out, s),
        Value::Array(_) | Value::Object(_) => unreachable!("containers are written by the caller"),
    }
}

/// Largest integer a JavaScript number holds exactly (2^53).
const JS_SAFE: u64 = 1 << 53;

/// Appends `n` as JavaScript's `Number#toString` would write it.
pub fn write_number(out: &mut String, n: &Number, ints: Integers) {
    let exact = ints == Integers::Exact;
    if let Some(u) = n.as_u64().filter(|&u| u <= JS_SAFE || exact) {
        out.push_str(&u.to_string());
        return;
    }
    if let Some(i) = n.as_i64().filter(|i| i.unsigned_abs() <= JS_SAFE || exact) {
        out.push_str(&i.to_string());
        return;
    }
    let f = n.as_f64().unwrap_or(f64::NAN);
    write_f64(out, f);
}

/// Appends an `f64` as JavaScript writes it (`NaN` and infinities become `null`, as in JSON).
pub fn write_f64(out: &mut String, f: f64) {
    if !f.is_finite() {
        out.push_str("null");
    } else if f == 0.0 {
        out.push('0');
    } else {
        let mut buf = ryu_js::Buffer::new();
        out.push_str(buf.format_finite(f));
    }
}

/// Appends `s` as a JSON string literal, escaping exactly what JavaScript escapes.
pub fn write_string(out: &mut String, s: &str) {
    out.push('"');
    let bytes = s.as_bytes();
    let mut start = 0;
    for (i, &b) in bytes.iter().enumerate() {
        let escape: &str = match b {
            b'"' => "\\\"",
            b'\\' => "\\\\",
            b'\n' => "\\n",
            b'\r' => "\\r",
            b'\t' => "\\t",
            0x08 => "\\b",
            0x0c => "\\f",
            0x00..=0x1f => "",
            _ => continue,
        };
        out.push_str(&s[start..i]);
        if escape.is_empty() {
            const HEX: &[u8; 16] = b"0123456789abcdef";
            out.push_str("\\u00");
            out.push(HEX[(b >> 4) as usize] as char);
            out.push(HEX[(b & 0xf) as usize] as char);
        } else {
            out.push_str(escape);
        }
        start = i + 1;
    }
    out.push_str(&s[start..]);
    out.push('"');
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn numbers_follow_number_to_string() {
        let v: Value = serde_json::from_str(
            "[1.0, -0.0, 1e21, 1.5e-7, 123456789012345678901, 0.1, 100, -5, 9007199254740993]",
        )
        .unwrap();
        assert_eq!(
            to_compact(&v),
            "[1,0,1e+21,1.5e-7,123456789012345680000,0.1,100,-5,9007199254740992]"
        );
    }

    #[test]
    fn exact_integers_keep_every_digit() {
        let v: Value = serde_json::from_str("9007199254740993").unwrap();
        let mut out = String::new();
        write_compact(&mut out, &v, Integers::Exact);
        assert_eq!(out, "9007199254740993");
    }

    #[test]
    fn strings_escape_like_javascript() {
        let v = json!("a\"b\\c\n\r\t\u{8}\u{c}\u{1}\u{1f}/é\u{7f}");
        assert_eq!(
            to_compact(&v),
            r#""a\"b\\c\n\r\t\b\f\u0001\u001f/é""#.replace("é\"", "é\u{7f}\"")
        );
    }

    #[test]
    fn pretty_matches_stringify_with_two_spaces() {
        let v = json!({"a": [], "b": {}, "c": [1, {"d": null}], "e": "x"});
        assert_eq!(
            to_pretty(&v),
            "{\n  \"a\": [],\n  \"b\": {},\n  \"c\": [\n    1,\n    {\n      \"d\": null\n    }\n  ],\n  \"e\": \"x\"\n}"
        );
        assert_eq!(to_pretty(&json!([])), "[]");
        assert_eq!(to_pretty(&json!(true)), "true");
    }

    #[test]
    fn key_order_is_insertion_order() {
        let v: Value = serde_json::from_str(r#"{"z":1,"a":2,"m":3}"#).unwrap();
        assert_eq!(to_compact(&v), r#"{"z":1,"a":2,"m":3}"#);
    }
}

/// `a.localeCompare(b)`: ICU root collation at default strength (not code-point order).
pub fn locale_cmp(a: &str, b: &str) -> std::cmp::Ordering {
    use icu_collator::options::CollatorOptions;
    use icu_collator::{Collator, CollatorBorrowed};
    use std::sync::OnceLock;
    static COLLATOR: OnceLock<CollatorBorrowed<'static>> = OnceLock::new();
    COLLATOR
        .get_or_init(|| {
            Collator::try_new(Default::default(), CollatorOptions::default())
                .expect("root collation data is compiled in")
        })
        .compare(a, b)
}

#[cfg(test)]
mod collation_tests {
    use super::locale_cmp;

    #[test]
    fn root_collation_vector() {
        let mut keys = vec![
            "Z9",
            "f",
            "é",
            "e",
            "B",
            "APIVersion",
            "apiVersion",
            "ab",
            "a-b",
            "a_b",
            "a",
            "-y",
            "_x",
            "Z10",
        ];
        keys.sort_by(|a, b| locale_cmp(a, b));
        assert_eq!(
            keys,
            [
                "_x",
                "-y",
                "a",
                "a_b",
                "a-b",
                "ab",
                "apiVersion",
                "APIVersion",
                "B",
                "e",
                "é",
                "f",
                "Z10",
                "Z9"
            ]
        );
    }
}

/// JavaScript's own key order for an object: integer-like keys (`0`…`4294967294`, no leading
/// zeros) first, ascending; then the rest.
fn array_index(k: &str) -> Option<u64> {
    if k == "0" {
        return Some(0);
    }
    if k.is_empty() || k.starts_with('0') || !k.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    k.parse::<u64>().ok().filter(|n| *n < 4_294_967_295)
}

/// The key order of chant's canonical JSON: `localeCompare`, then JavaScript's integer-keys-first.
pub fn canonical_key_cmp(a: &str, b: &str) -> std::cmp::Ordering {
    match (array_index(a), array_index(b)) {
        (Some(x), Some(y)) => x.cmp(&y),
        (Some(_), None) => std::cmp::Ordering::Less,
        (None, Some(_)) => std::cmp::Ordering::Greater,
        (None, None) => locale_cmp(a, b),
    }
}

/// The value with every object's keys in canonical order
/// (`JSON.stringify(v, sortedJsonReplacer)`'s order).
pub fn canonical(v: &Value) -> Value {
    match v {
        Value::Object(m) => {
            let mut entries: Vec<(&String, &Value)> = m.iter().collect();
            entries.sort_by(|a, b| canonical_key_cmp(a.0, b.0));
            Value::Object(
                entries
                    .into_iter()
                    .map(|(k, v)| (k.clone(), canonical(v)))
                    .collect(),
            )
        }
        Value::Array(items) => Value::Array(items.iter().map(canonical).collect()),
        other => other.clone(),
    }
}

/// Compact canonical JSON (for hashes and JSONL lines).
pub fn to_canonical_compact(v: &Value) -> String {
    to_compact(&canonical(v))
}

/// Lower-case hex SHA-256 of `bytes`.
pub fn sha256_hex(bytes: &[u8]) -> String {
    use sha2::{Digest, Sha256};
    let digest = Sha256::digest(bytes);
    let mut out = String::with_capacity(64);
    for b in digest {
        out.push_str(&format!("{b:02x}"));
    }
    out
}

#[cfg(test)]
mod canonical_tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn canonical_key_order() {
        let v = canonical(&json!({"10": 1, "9": 2, "b": 3, "a": {"z": 1, "A": 2}}));
        assert_eq!(to_compact(&v), r#"{"9":2,"10":1,"a":{"A":2,"z":1},"b":3}"#);
    }

    #[test]
    fn the_hello_props_hash_vector() {
        let props = json!({
            "name": "hello",
            "overview": "Minimal local Op — no Temporal server required",
            "taskQueue": "hello",
            "phases": [{"name": "Greet", "steps": [{"kind": "activity", "fn": "shellCmd", "args": {"cmd": "echo hello from chant"}}]}]
        });
        let text = to_canonical_compact(&props);
        assert_eq!(
            text,
            r#"{"name":"hello","overview":"Minimal local Op — no Temporal server required","phases":[{"name":"Greet","steps":[{"args":{"cmd":"echo hello from chant"},"fn":"shellCmd","kind":"activity"}]}],"taskQueue":"hello"}"#
        );
        assert_eq!(
            sha256_hex(text.as_bytes()),
            "501540a574e8e5896a1261cae7b949dd0bcb4e3f9a0d8c1c31bd5cf70c292e92"
        );
    }
}
