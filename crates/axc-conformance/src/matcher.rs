//! The corpus's matcher: assertion objects (`nonempty_string`, `id_prefix`, `present`,
//! `unordered_array`), objects by subset (`warnings_allowed` ignored), arrays exactly in
//! length and order, scalars as JavaScript's `Object.is` (a missing key is not `null`).

use serde_json::Value as Json;

/// Whether `actual` (absent: `None`) satisfies `expected`.
pub fn matches(expected: &Json, actual: Option<&Json>) -> bool {
    if let Some(kind) = expected
        .as_object()
        .and_then(|o| o.get("assert"))
        .and_then(Json::as_str)
    {
        return match kind {
            "nonempty_string" => actual
                .and_then(Json::as_str)
                .is_some_and(|s| !s.trim().is_empty()),
            "id_prefix" => match (actual.and_then(Json::as_str), expected["value"].as_str()) {
                (Some(a), Some(p)) => a.starts_with(p),
                _ => false,
            },
            "present" => actual.is_some(),
            "unordered_array" => unordered(&expected["items"], actual),
            _ => false,
        };
    }
    match expected {
        Json::Array(items) => actual.and_then(Json::as_array).is_some_and(|a| {
            a.len() == items.len() && items.iter().zip(a).all(|(e, x)| matches(e, Some(x)))
        }),
        Json::Object(fields) => match actual {
            Some(Json::Object(a)) => fields
                .iter()
                .filter(|(k, _)| *k != "warnings_allowed")
                .all(|(k, e)| matches(e, a.get(k))),
            // Arrays are objects to JavaScript: only keys an array has can match.
            Some(Json::Array(a)) => fields
                .iter()
                .filter(|(k, _)| *k != "warnings_allowed")
                .all(|(k, e)| matches(e, k.parse::<usize>().ok().and_then(|i| a.get(i)))),
            _ => false,
        },
        Json::Number(n) => actual
            .and_then(Json::as_number)
            .is_some_and(|a| a.as_f64() == n.as_f64()),
        scalar => actual == Some(scalar),
    }
}

fn unordered(items: &Json, actual: Option<&Json>) -> bool {
    let (Some(items), Some(actual)) = (items.as_array(), actual.and_then(Json::as_array)) else {
        return false;
    };
    if items.len() != actual.len() {
        return false;
    }
    let mut used = vec![false; actual.len()];
    items.iter().all(|e| {
        let found = (0..actual.len()).find(|&i| !used[i] && matches(e, Some(&actual[i])));
        found.map(|i| used[i] = true).is_some()
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn the_corpus_matcher() {
        let actual = json!({"result": "ok", "id": "turn_123", "n": 2, "list": [1, 2], "nothing": null, "extra": true});
        assert!(matches(
            &json!({"result": "ok", "warnings_allowed": true}),
            Some(&actual)
        ));
        assert!(matches(&json!({"n": 2.0, "list": [1, 2]}), Some(&actual)));
        assert!(!matches(&json!({"list": [1]}), Some(&actual)));
        assert!(!matches(&json!({"list": [2, 1]}), Some(&actual)));
        assert!(matches(
            &json!({"list": {"assert": "unordered_array", "items": [2, 1]}}),
            Some(&actual)
        ));
        assert!(matches(
            &json!({"id": {"assert": "id_prefix", "value": "turn_"}}),
            Some(&actual)
        ));
        assert!(!matches(
            &json!({"id": {"assert": "id_prefix", "value": "run_"}}),
            Some(&actual)
        ));
        assert!(matches(&json!({"nothing": null}), Some(&actual)));
        assert!(
            !matches(&json!({"missing": null}), Some(&actual)),
            "absent is not null"
        );
        assert!(matches(
            &json!({"nothing": {"assert": "present"}}),
            Some(&actual)
        ));
        assert!(!matches(
            &json!({"missing": {"assert": "present"}}),
            Some(&actual)
        ));
        assert!(matches(
            &json!({"id": {"assert": "nonempty_string"}}),
            Some(&actual)
        ));
        assert!(!matches(
            &json!({"n": {"assert": "nonempty_string"}}),
            Some(&actual)
        ));
        assert!(!matches(
            &json!({"n": {"assert": "unknown"}}),
            Some(&actual)
        ));
        assert!(!matches(&json!({"result": "ok"}), Some(&json!("ok"))));
        assert!(matches(&json!({"0": 1}), Some(&json!([1]))));
    }
}
