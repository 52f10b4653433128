//! The safe style: YAML that reads back to exactly the JSON it was written from.
//!
//! Block style with two-space indents. A string is written plain only when it could not be
//! read as anything but that string: it starts with an ASCII letter, `_` or `/`, holds only
//! ASCII letters, digits, spaces and `_./-+()=`, does not end in a space, and is none of the
//! words YAML 1.2 or 1.1 read as a boolean or null (`true`, `no`, `on`, `y`, `null`, …, in any
//! case). Every other string — numbers in text, empty strings, `- a`, `key: value`, `#` anywhere,
//! anything non-ASCII — is double-quoted, with the characters YAML does not allow raw escaped.
//! Numbers are written as JavaScript writes them (the JSON output's own text; `.0` is put before
//! an exponent without a point, for YAML 1.1 readers). Keys follow the string rule; one longer than
//! 1,000 characters as written is an explicit `? key`.

use serde_json::Value as Json;

/// One YAML document holding `value`, ending with a newline.
pub fn to_yaml(value: &Json) -> String {
    let mut out = String::new();
    if is_block(value) {
        block(value, 0, &mut out);
    } else {
        scalar(value, &mut out);
        out.push('\n');
    }
    out
}

/// Several documents, each begun with `---`.
pub fn documents(values: &[Json]) -> String {
    let mut out = String::new();
    for v in values {
        out.push_str("---\n");
        out.push_str(&to_yaml(v));
    }
    out
}

/// A non-empty mapping or sequence (written as a block; empty ones are `{}` and `[]`).
fn is_block(v: &Json) -> bool {
    match v {
        Json::Object(m) => !m.is_empty(),
        Json::Array(a) => !a.is_empty(),
        _ => false,
    }
}

fn pad(out: &mut String, indent: usize) {
    for _ in 0..indent {
        out.push_str("  ");
    }
}

/// A block value, every line at `indent` and ending with a newline.
fn block(v: &Json, indent: usize, out: &mut String) {
    match v {
        Json::Object(m) => {
            for (k, val) in m {
                pad(out, indent);
                let mut key = String::new();
                string(k, &mut key);
                if key.chars().count() > MAX_IMPLICIT_KEY {
                    // Too long for an implicit key: `? key` on its line, `:` on the next.
                    out.push_str("? ");
                    out.push_str(&key);
                    out.push('\n');
                    pad(out, indent);
                } else {
                    out.push_str(&key);
                }
                out.push(':');
                entry_value(val, indent + 1, out);
            }
        }
        Json::Array(items) => {
            for item in items {
                pad(out, indent);
                out.push('-');
                if is_block(item) {
                    // The item's first line follows the dash; the rest align under it.
                    let mut nested = String::new();
                    block(item, indent + 1, &mut nested);
                    out.push(' ');
                    out.push_str(&nested[2 * (indent + 1)..]);
                } else {
                    out.push(' ');
                    scalar(item, out);
                    out.push('\n');
                }
            }
        }
        other => {
            pad(out, indent);
            scalar(other, out);
            out.push('\n');
        }
    }
}

/// What follows `key:`: a block on the next lines, or ` scalar`.
fn entry_value(v: &Json, indent: usize, out: &mut String) {
    if is_block(v) {
        out.push('\n');
        block(v, indent, out);
    } else {
        out.push(' ');
        scalar(v, out);
        out.push('\n');
    }
}

fn scalar(v: &Json, out: &mut String) {
    match v {
        Json::Null => out.push_str("null"),
        Json::Bool(b) => out.push_str(if *b { "true" } else { "false" }),
        Json::Number(n) => number(n, out),
        Json::String(s) => string(s, out),
        Json::Array(_) => out.push_str("[]"),
        Json::Object(_) => out.push_str("{}"),
    }
}

/// The longest key written implicitly (`key: value`), as written (quotes and escapes
/// counted); YAML allows 1024 characters.
const MAX_IMPLICIT_KEY: usize = 1000;

/// A number as JavaScript writes it, with `.0` before an exponent that has no point
/// (`1e+21` → `1.0e+21`): YAML 1.1 readers take a float only with a point.
fn number(n: &serde_json::Number, out: &mut String) {
    let mut text = String::new();
    canon::write_number(&mut text, n, canon::Integers::Js);
    match text.find('e') {
        Some(e) if !text[..e].contains('.') => {
            out.push_str(&text[..e]);
            out.push_str(".0");
            out.push_str(&text[e..]);
        }
        _ => out.push_str(&text),
    }
}

/// Words some YAML reader takes for a boolean or null when plain (1.2 core and 1.1).
const WORDS: [&str; 10] = [
    "true", "false", "null", "yes", "no", "on", "off", "y", "n", "nan",
];

/// Whether `s` may be written plain: nothing but that string reads back from it.
pub fn plain_is_safe(s: &str) -> bool {
    let b = s.as_bytes();
    let Some((&first, _)) = b.split_first() else {
        return false;
    };
    (first.is_ascii_alphabetic() || first == b'_' || first == b'/')
        && b.last() != Some(&b' ')
        && b.iter()
            .all(|c| c.is_ascii_alphanumeric() || b" _./-+()=".contains(c))
        && !WORDS.iter().any(|w| w.eq_ignore_ascii_case(s))
}

/// A string or key: plain when safe, else double-quoted with YAML's escapes.
fn string(s: &str, out: &mut String) {
    if plain_is_safe(s) {
        out.push_str(s);
        return;
    }
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\t' => out.push_str("\\t"),
            '\r' => out.push_str("\\r"),
            // Not allowed raw (C0, DEL, C1), or read as line breaks or a byte-order mark by
            // some readers.
            '\0'..='\x1f'
            | '\x7f'..='\u{9f}'
            | '\u{2028}'
            | '\u{2029}'
            | '\u{feff}'
            | '\u{fffe}'
            | '\u{ffff}' => out.push_str(&format!("\\u{:04x}", c as u32)),
            c => out.push(c),
        }
    }
    out.push('"');
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use serde_json::json;

    #[test]
    fn what_json_to_yaml_used_to_write_unquoted_is_quoted() {
        let v = json!({"a": "true", "b": "123", "c": "", "d": "- a", "e": "x: y", "f": "#c",
            "g": "~", "h": "No", "i": "1e3", "j": ".inf", "k": " lead", "l": "trail ",
            "m": "plain words", "n": "my-bucket.v2", "o": "é"});
        assert_eq!(
            to_yaml(&v),
            "a: \"true\"\nb: \"123\"\nc: \"\"\nd: \"- a\"\ne: \"x: y\"\nf: \"#c\"\ng: \"~\"\nh: \"No\"\ni: \"1e3\"\nj: \".inf\"\nk: \" lead\"\nl: \"trail \"\nm: plain words\n\"n\": my-bucket.v2\no: \"é\"\n"
        );
    }

    #[test]
    fn blocks_nest_with_two_spaces() {
        let v = json!({"Resources": {"B": {"Type": "AWS::S3::Bucket", "Properties": {
            "Tags": [{"Key": "k", "Value": 1}, [1, [2, 3]], [], {}], "Empty": {}}}}, "n": null});
        assert_eq!(
            to_yaml(&v),
            "Resources:\n  B:\n    Type: \"AWS::S3::Bucket\"\n    Properties:\n      Tags:\n        - Key: k\n          Value: 1\n        - - 1\n          - - 2\n            - 3\n        - []\n        - {}\n      Empty: {}\n\"n\": null\n"
        );
        assert_eq!(to_yaml(&json!("x")), "x\n");
        assert_eq!(
            documents(&[json!({"a": 1}), json!([true])]),
            "---\na: 1\n---\n- true\n"
        );
    }

    /// Numbers compare as the JavaScript numbers they are (`1` and `1.0` are one number).
    fn same(a: &Json, b: &Json) -> bool {
        match (a, b) {
            (Json::Number(x), Json::Number(y)) => x.as_f64() == y.as_f64(),
            (Json::Array(x), Json::Array(y)) => {
                x.len() == y.len() && x.iter().zip(y).all(|(a, b)| same(a, b))
            }
            (Json::Object(x), Json::Object(y)) => {
                x.len() == y.len() && x.iter().all(|(k, v)| y.get(k).is_some_and(|w| same(v, w)))
            }
            _ => a == b,
        }
    }

    fn text() -> impl Strategy<Value = String> {
        prop_oneof![
            any::<String>(),
            "[ -~]{0,12}",
            "[a-zé\u{1}]{300,1100}",
            prop::sample::select(vec![
                "true",
                "False",
                "NULL",
                "~",
                "yes",
                "Off",
                "y",
                "<<",
                "- a",
                "? b",
                ": c",
                "a: b",
                "a #b",
                "#",
                "0x1F",
                "0o17",
                "1_000",
                "1:20",
                ".5",
                "-.inf",
                ".NaN",
                "1e3",
                "+1",
                "2001-12-14",
                "@x",
                "`x",
                "|",
                ">",
                "!tag",
                "&a",
                "*a",
                "%YAML",
                "---",
                "...",
                "'",
                "\"",
                "\\",
                "\u{85}",
                "\u{2028}",
                "\u{feff}",
                "\t",
                "a\r\nb",
                "",
                " ",
                "x ",
                " x",
            ])
            .prop_map(str::to_owned),
        ]
    }

    fn json_value() -> impl Strategy<Value = Json> {
        let leaf = prop_oneof![
            Just(Json::Null),
            any::<bool>().prop_map(Json::Bool),
            any::<i64>().prop_map(Json::from),
            any::<u64>().prop_map(Json::from),
            any::<f64>()
                .prop_filter("finite", |f| f.is_finite())
                .prop_map(Json::from),
            text().prop_map(Json::String),
        ];
        leaf.prop_recursive(4, 48, 6, |inner| {
            prop_oneof![
                prop::collection::vec(inner.clone(), 0..6).prop_map(Json::Array),
                prop::collection::vec((text(), inner), 0..6)
                    .prop_map(|kv| Json::Object(kv.into_iter().collect())),
            ]
        })
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(2048))]
        #[test]
        fn safe_yaml_reads_back_to_the_same_json(v in json_value()) {
            let text = to_yaml(&v);
            let back = crate::read::parse(&text)
                .map_err(|e| TestCaseError::fail(format!("{e}\n{text}")))?;
            prop_assert!(same(&v, &back), "{v}\n--- wrote\n{text}--- read\n{back}");
        }
    }
}
