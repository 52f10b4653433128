//! Strict JSON for the workspace's files: one reader for the declaration (JSON or JSONC) and
//! for JSON records (I-JSON: an object at the top, no member name twice in one object).
//!
//! serde_json keeps the last of two equal keys without a word, and reads no comments; the
//! declaration's `duplicate keys → error` and the JSONC form need both, so comments and
//! trailing commas are blanked out first (byte for byte, so every line and column an error
//! names is the file's own) and the text is then read through a visitor that refuses a
//! repeated name.

use std::fmt;

use serde::de::{self, DeserializeSeed, MapAccess, SeqAccess, Visitor};
use serde_json::{Map, Value};

/// Why a text is not the JSON it should be, and where.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct JsonError {
    pub message: String,
    pub line: usize,
    pub column: usize,
}

impl fmt::Display for JsonError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{} (line {}, column {})",
            self.message, self.line, self.column
        )
    }
}

/// Reads `text` as JSON (`jsonc`: comments and trailing commas allowed), refusing a member
/// name repeated within one object, compared after escapes are decoded.
pub fn parse(text: &str, jsonc: bool) -> Result<Value, JsonError> {
    let owned;
    let text = if jsonc {
        owned = blank_comments(text)?;
        owned.as_str()
    } else {
        text
    };
    let mut de = serde_json::Deserializer::from_str(text);
    let value = Strict.deserialize(&mut de).map_err(from_serde)?;
    de.end().map_err(from_serde)?;
    Ok(value)
}

fn from_serde(e: serde_json::Error) -> JsonError {
    let full = e.to_string();
    // serde_json appends " at line L column C"; the location is kept apart.
    let message = match full.rfind(" at line ") {
        Some(i) => full[..i].to_owned(),
        None => full,
    };
    JsonError {
        message,
        line: e.line(),
        column: e.column(),
    }
}

/// `text` with its `//` and `/* */` comments and its trailing commas turned into spaces
/// (newlines kept), so what is left is JSON with the same line and column for every token.
fn blank_comments(text: &str) -> Result<String, JsonError> {
    let b = text.as_bytes();
    let mut out = b.to_vec();
    let mut i = 0;
    let mut in_string = false;
    // The position of a comma that may yet turn out to be trailing.
    let mut comma: Option<usize> = None;
    // The last byte outside strings, comments and whitespace: a comma after `[`, `{` or
    // another comma follows no value, so it is never trailing (and stays an error).
    let mut prev = b'[';
    let position = |at: usize| {
        let before = &text[..at];
        let line = before.matches('\n').count() + 1;
        let column = before.len() - before.rfind('\n').map_or(0, |n| n + 1) + 1;
        (line, column)
    };
    while i < b.len() {
        let c = b[i];
        if in_string {
            match c {
                b'\\' => i += 1,
                b'"' => in_string = false,
                _ => {}
            }
            i += 1;
            continue;
        }
        match c {
            b'"' => {
                in_string = true;
                comma = None;
                prev = b'"';
            }
            b'/' if b.get(i + 1) == Some(&b'/') => {
                while i < b.len() && b[i] != b'\n' {
                    out[i] = b' ';
                    i += 1;
                }
                continue;
            }
            b'/' if b.get(i + 1) == Some(&b'*') => {
                let start = i;
                i += 2;
                loop {
                    if i + 1 >= b.len() {
                        let (line, column) = position(start);
                        return Err(JsonError {
                            message: "a /* comment is never closed".into(),
                            line,
                            column,
                        });
                    }
                    if b[i] == b'*' && b[i + 1] == b'/' {
                        break;
                    }
                    i += 1;
                }
                for o in &mut out[start..i + 2] {
                    if *o != b'\n' {
                        *o = b' ';
                    }
                }
                i += 2;
                continue;
            }
            b',' => {
                comma = (!matches!(prev, b'[' | b'{' | b',')).then_some(i);
                prev = b',';
            }
            b'}' | b']' => {
                if let Some(at) = comma.take() {
                    out[at] = b' ';
                }
                prev = c;
            }
            b' ' | b'\t' | b'\n' | b'\r' => {}
            _ => {
                comma = None;
                prev = c;
            }
        }
        i += 1;
    }
    // Only ASCII bytes were replaced, by ASCII spaces: still UTF-8.
    Ok(String::from_utf8(out).unwrap_or_default())
}

/// A JSON value read with no member name twice in one object.
struct Strict;

impl<'de> DeserializeSeed<'de> for Strict {
    type Value = Value;
    fn deserialize<D: de::Deserializer<'de>>(self, d: D) -> Result<Value, D::Error> {
        d.deserialize_any(StrictVisitor)
    }
}

struct StrictVisitor;

impl<'de> Visitor<'de> for StrictVisitor {
    type Value = Value;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a JSON value")
    }
    fn visit_bool<E>(self, v: bool) -> Result<Value, E> {
        Ok(Value::Bool(v))
    }
    fn visit_i64<E>(self, v: i64) -> Result<Value, E> {
        Ok(Value::from(v))
    }
    fn visit_u64<E>(self, v: u64) -> Result<Value, E> {
        Ok(Value::from(v))
    }
    fn visit_f64<E: de::Error>(self, v: f64) -> Result<Value, E> {
        serde_json::Number::from_f64(v)
            .map(Value::Number)
            .ok_or_else(|| E::custom("a number JSON cannot hold"))
    }
    fn visit_str<E>(self, v: &str) -> Result<Value, E> {
        Ok(Value::String(v.to_owned()))
    }
    fn visit_string<E>(self, v: String) -> Result<Value, E> {
        Ok(Value::String(v))
    }
    fn visit_unit<E>(self) -> Result<Value, E> {
        Ok(Value::Null)
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Value, A::Error> {
        let mut items = Vec::new();
        while let Some(v) = seq.next_element_seed(Strict)? {
            items.push(v);
        }
        Ok(Value::Array(items))
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Value, A::Error> {
        let mut m = Map::new();
        while let Some(key) = map.next_key::<String>()? {
            if m.contains_key(&key) {
                return Err(de::Error::custom(format!(
                    "the member name {} appears twice in one object",
                    Value::String(key)
                )));
            }
            let v = map.next_value_seed(Strict)?;
            m.insert(key, v);
        }
        Ok(Value::Object(m))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_repeated_name_is_refused_even_when_escaped_and_nested() {
        let e = parse(r#"{"a": 1, "\u0061": 2}"#, false).unwrap_err();
        assert!(e.message.contains("\"a\" appears twice"), "{e}");
        assert_eq!(e.line, 1);
        let e = parse("{\"x\": [{\"b\": 1,\n \"b\": 2}]}", false).unwrap_err();
        assert_eq!(e.line, 2, "{e}");
        assert_eq!(
            parse(r#"{"a": {"a": 1}}"#, false).unwrap(),
            json!({"a": {"a": 1}})
        );
    }

    #[test]
    fn jsonc_reads_comments_and_trailing_commas_and_keeps_positions() {
        let text = "// head\n{\n  /* a\n  b */ \"k\": [1, 2,], // c\n  \"s\": \"// not a comment, /* */\",\n}\n";
        assert_eq!(
            parse(text, true).unwrap(),
            json!({"k": [1, 2], "s": "// not a comment, /* */"})
        );
        assert!(parse(text, false).is_err(), "strict JSON reads no comments");
        let e = parse("{\n\n  \"a\": tru }", true).unwrap_err();
        assert_eq!((e.line, e.column), (3, 11), "{e}");
        let e = parse("{ /* open", true).unwrap_err();
        assert!(e.message.contains("never closed"));
    }

    #[test]
    fn a_comma_with_nothing_before_it_stays_an_error() {
        assert!(parse("[,]", true).is_err());
        assert!(parse("{,}", true).is_err());
        assert!(parse("[1,,]", true).is_err());
    }
}
