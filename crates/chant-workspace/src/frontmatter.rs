//! A fast reader for the front matter chant writes (and people usually write): block mappings
//! and sequences of bare keys and JSON scalars (`"..."`, numbers, `true`, `false`, `null`,
//! `[]`, `{}`). Hand-written because the general YAML reader was a third of the time of reading
//! 2,000 records (measured, docs/benchmarks.md); it gives up (`None`) on anything outside that
//! shape (comments, plain or single-quoted strings, flow collections, anchors, tags, tabs,
//! block scalars, a repeated key), and the caller then reads the text with the full reader, so
//! what it accepts reads exactly as the full reader reads it.

use serde_json::{Map, Value};

struct Line<'a> {
    indent: usize,
    body: &'a str,
}

/// The front matter text (the lines between the `---` lines) as a mapping, if it has the
/// simple shape.
pub fn read(text: &str) -> Option<Map<String, Value>> {
    let mut lines = Vec::new();
    for raw in text.split('\n') {
        // A tab or a CR is never part of this shape (a JSON string escapes them).
        if raw.contains(['\t', '\r']) {
            return None;
        }
        if raw.trim().is_empty() {
            continue;
        }
        let body = raw.trim_start_matches(' ');
        lines.push(Line {
            indent: raw.len() - body.len(),
            body,
        });
    }
    let mut at = 0;
    let map = mapping(&lines, &mut at, 0)?;
    (at == lines.len()).then_some(map)
}

fn plain_key(k: &str) -> bool {
    let mut chars = k.chars();
    let first_ok = chars
        .next()
        .is_some_and(|c| c.is_ascii_alphabetic() || c == '_');
    first_ok
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-')
        && !matches!(
            k.to_ascii_lowercase().as_str(),
            // The YAML 1.2 core schema's keywords, which the full reader resolves (chant-yaml
            // reads 1.2: `on`, `yes` and `n` are strings there, as here).
            "true" | "false" | "null"
        )
}

/// `key: rest` of a line, when the key is bare (or a JSON string) and a `:` follows it.
fn split_key(body: &str) -> Option<(String, &str)> {
    if body.starts_with('"') {
        let end = json_string_end(body)?;
        let key: String = serde_json::from_str(&body[..end]).ok()?;
        let rest = body[end..].strip_prefix(':')?;
        return after_colon(rest).map(|r| (key, r));
    }
    let colon = body.find(':')?;
    let key = &body[..colon];
    if !plain_key(key) {
        return None;
    }
    after_colon(&body[colon + 1..]).map(|r| (key.to_owned(), r))
}

/// What follows `key:`: nothing, or one space and a value.
fn after_colon(rest: &str) -> Option<&str> {
    if rest.is_empty() {
        Some("")
    } else {
        rest.strip_prefix(' ').filter(|r| !r.starts_with(' '))
    }
}

/// Where the JSON string opening `s` ends (just past its closing quote).
fn json_string_end(s: &str) -> Option<usize> {
    let b = s.as_bytes();
    let mut i = 1;
    while i < b.len() {
        match b[i] {
            b'\\' => i += 2,
            b'"' => return Some(i + 1),
            _ => i += 1,
        }
    }
    None
}

/// A scalar written as JSON: the whole of `s`, nothing after it.
fn scalar(s: &str) -> Option<Value> {
    match s {
        "null" => return Some(Value::Null),
        "true" => return Some(Value::Bool(true)),
        "false" => return Some(Value::Bool(false)),
        "[]" => return Some(Value::Array(Vec::new())),
        "{}" => return Some(Value::Object(Map::new())),
        _ => {}
    }
    if s.starts_with('"') {
        let end = json_string_end(s)?;
        if end != s.len() {
            return None;
        }
        return serde_json::from_str::<String>(s).ok().map(Value::String);
    }
    // A number as JSON writes one, which the YAML core schema reads the same way: digits with
    // no leading zero, an optional fraction and exponent. Anything else is left to YAML.
    let digits = s.strip_prefix('-').unwrap_or(s);
    let int_part = digits.split(['.', 'e', 'E']).next().unwrap_or("");
    let ok = !int_part.is_empty()
        && int_part.chars().all(|c| c.is_ascii_digit())
        && (int_part == "0" || !int_part.starts_with('0'))
        && s.chars()
            .all(|c| c.is_ascii_digit() || matches!(c, '-' | '+' | '.' | 'e' | 'E'));
    if !ok {
        return None;
    }
    let v: Value = serde_json::from_str(s).ok()?;
    // A big integer YAML reads as the nearest float: left to the full reader.
    match &v {
        Value::Number(n) if n.is_i64() || n.is_f64() => Some(v),
        _ => None,
    }
}

/// The block under a `key:` or `-` with nothing after it: a deeper sequence or mapping, a
/// sequence at the same indent (allowed under a key), or nothing (`null`).
fn child(lines: &[Line], at: &mut usize, indent: usize, under_key: bool) -> Option<Value> {
    let Some(next) = lines.get(*at) else {
        return Some(Value::Null);
    };
    if next.indent > indent {
        block(lines, at, next.indent)
    } else if under_key && next.indent == indent && is_item(next.body) {
        sequence(lines, at, indent).map(Value::Array)
    } else {
        Some(Value::Null)
    }
}

fn is_item(body: &str) -> bool {
    body == "-" || body.starts_with("- ")
}

fn block(lines: &[Line], at: &mut usize, indent: usize) -> Option<Value> {
    if is_item(lines.get(*at)?.body) {
        sequence(lines, at, indent).map(Value::Array)
    } else {
        mapping(lines, at, indent).map(Value::Object)
    }
}

fn mapping(lines: &[Line], at: &mut usize, indent: usize) -> Option<Map<String, Value>> {
    let mut m = Map::new();
    while let Some(line) = lines.get(*at) {
        if line.indent < indent {
            break;
        }
        if line.indent > indent || is_item(line.body) {
            return None;
        }
        let (key, rest) = split_key(line.body)?;
        *at += 1;
        let value = if rest.is_empty() {
            child(lines, at, indent, true)?
        } else {
            scalar(rest)?
        };
        if m.insert(key, value).is_some() {
            return None;
        }
    }
    Some(m)
}

fn sequence(lines: &[Line], at: &mut usize, indent: usize) -> Option<Vec<Value>> {
    let mut items = Vec::new();
    while let Some(line) = lines.get(*at) {
        if line.indent < indent {
            break;
        }
        if line.indent > indent || !is_item(line.body) {
            // Past the items: a key at the same indent belongs to the mapping above.
            if line.indent == indent && !is_item(line.body) {
                break;
            }
            return None;
        }
        let rest = line.body.strip_prefix('-').unwrap_or("");
        let rest = rest.strip_prefix(' ').unwrap_or(rest);
        if rest.is_empty() {
            *at += 1;
            items.push(child(lines, at, indent, false)?);
        } else if split_key(rest).is_some() && !rest.starts_with('"') {
            // `- key: value`: a mapping whose first entry sits on the dash's line, the rest
            // two columns in.
            let inner = indent + 2;
            let mut first = Map::new();
            let (key, value_text) = split_key(rest)?;
            *at += 1;
            let value = if value_text.is_empty() {
                child(lines, at, inner, true)?
            } else {
                scalar(value_text)?
            };
            first.insert(key, value);
            let more = mapping(lines, at, inner)?;
            for (k, v) in more {
                if first.insert(k, v).is_some() {
                    return None;
                }
            }
            items.push(Value::Object(first));
        } else {
            *at += 1;
            items.push(scalar(rest)?);
        }
    }
    Some(items)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn same(text: &str) {
        let fast = read(text).unwrap_or_else(|| panic!("the fast reader gave up on {text:?}"));
        let full = chant_yaml::read::parse_json_subset(text).unwrap();
        assert_eq!(Value::Object(fast), full, "{text}");
    }

    #[test]
    fn what_chant_writes_reads_as_the_full_reader_reads_it() {
        same(
            "id: \"ws-001\"\ntitle: \"A \\\"quoted\\\" title: with # and: colons\"\nstate: \"proposed\"\nevidence: []\nn: 3\nf: -1.5e3\nz: 0\nb: true\nnothing: null\nempty: {}\n",
        );
        same(
            "reviews:\n  - reviewer: \"alice\"\n    verdict: \"agree\"\n    on: \"2026-12-03\"\n  - reviewer: \"bob\"\n    note: \"x\"\nsupersedes:\n  - decision: \"ws-000\"\nsource:\n  via: \"mcp\"\n  client:\n    name: \"c\"\n",
        );
        same("list:\n- \"a\"\n- 1\nafter: \"x\"\n");
        same("nested:\n  -\n    - \"deep\"\n  - []\nk:\n");
        same("\"quoted key\": \"v\"\n");
    }

    #[test]
    fn anything_else_is_left_to_the_full_reader() {
        for text in [
            "a: plain\n",
            "a: 'single'\n",
            "a: \"x\" # comment\n",
            "a: &x \"v\"\nb: *x\n",
            "a: !tag \"v\"\n",
            "a: [1, 2]\n",
            "a: |\n  block\n",
            "a: 01\n",
            "a: 1\na: 2\n",
            "true: 1\n",
            "a:  \"two spaces\"\n",
            "a:\t\"tab\"\n",
            "-budget: \"x\"\n",
            "a: \"unterminated\n",
            "  a: \"indented\"\nb: 1\n",
        ] {
            assert!(read(text).is_none(), "{text:?} was read by the fast reader");
        }
    }
}

#[cfg(test)]
mod equivalence {
    use super::*;
    use proptest::prelude::*;

    fn value() -> impl Strategy<Value = Value> {
        let leaf = prop_oneof![
            Just(Value::Null),
            any::<bool>().prop_map(Value::Bool),
            any::<i32>().prop_map(Value::from),
            "[ -~]{0,12}".prop_map(Value::String),
            "\\PC{0,6}".prop_map(Value::String),
        ];
        leaf.prop_recursive(3, 24, 4, |inner| {
            prop_oneof![
                prop::collection::vec(inner.clone(), 0..4).prop_map(Value::Array),
                prop::collection::btree_map("[a-z_][a-z0-9_-]{0,6}", inner, 0..4)
                    .prop_map(|m| Value::Object(m.into_iter().collect())),
            ]
        })
    }

    proptest! {
        /// Whatever chant's writer lays out, the fast reader reads as the full reader does.
        #[test]
        fn the_writers_output_reads_the_same_both_ways(
            fields in prop::collection::btree_map("[a-z_][a-z0-9_-]{0,8}", value(), 1..6)
        ) {
            let text: String = fields
                .iter()
                .map(|(k, v)| crate::write::field_block(k, v))
                .collect();
            let full = chant_yaml::read::parse_json_subset(&text);
            if let Some(fast) = read(&text) {
                prop_assert_eq!(Ok(Value::Object(fast)), full, "{}", text);
            }
        }
    }
}
