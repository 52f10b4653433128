//! How the protocol's JSON values read, the one place it is said: JavaScript's truthiness (the
//! reference's `if (x)`), a truthy string's text, a non-blank string, a value as a template literal shows it, and a
//! decision id (`DEC-` and ASCII digits, as JavaScript's `\d`).

use serde_json::Value as Json;

/// JavaScript's truthiness of a JSON value.
pub fn truthy(v: &Json) -> bool {
    match v {
        Json::Null => false,
        Json::Bool(b) => *b,
        Json::Number(n) => n.as_f64().is_some_and(|f| f != 0.0 && !f.is_nan()),
        Json::String(s) => !s.is_empty(),
        Json::Array(_) | Json::Object(_) => true,
    }
}

/// A string with something other than white space in it.
pub fn nonblank(v: &Json) -> bool {
    v.as_str().is_some_and(|s| !s.trim().is_empty())
}

/// A truthy string's text (`None` for an empty string or another kind of value): what the
/// reference's `x || fallback` takes from a string field.
pub fn truthy_str(v: &Json) -> Option<&str> {
    v.as_str().filter(|s| !s.is_empty())
}

/// A value as JavaScript's template literal shows it (`${v}`) for the values messages quote.
pub fn text(v: &Json) -> String {
    match v {
        Json::Null => "null".into(),
        Json::String(x) => x.clone(),
        other => other.to_string(),
    }
}

/// `DEC-<digits>`.
pub fn is_decision_id(s: &str) -> bool {
    s.strip_prefix("DEC-")
        .is_some_and(|n| !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn values_read_as_javascript_reads_them() {
        for (v, t) in [
            (json!(null), false),
            (json!(0), false),
            (json!(""), false),
            (json!(false), false),
            (json!(1), true),
            (json!("x"), true),
            (json!([]), true),
            (json!({}), true),
        ] {
            assert_eq!(truthy(&v), t, "{v}");
        }
        assert!(nonblank(&json!(" x ")) && !nonblank(&json!("  ")) && !nonblank(&json!(3)));
        assert_eq!(
            (text(&json!(null)), text(&json!("a")), text(&json!(2))),
            ("null".into(), "a".into(), "2".into())
        );
        assert!(
            is_decision_id("DEC-007")
                && !is_decision_id("DEC-")
                && !is_decision_id("DEC-٣")
                && !is_decision_id("D-1")
        );
    }
}
