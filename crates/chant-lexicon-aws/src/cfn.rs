//! Reading CloudFormation values back: what the post-synth checks and the importer both need
//! to know of a template's text.

use serde_json::Value as Json;

/// The names an `Fn::Sub` argument (`"text"` or `["text", {variables}]`) writes as `${…}`,
/// whole (`bucket.Arn`), in order; the `${!…}` escapes are text, not names.
pub fn sub_names(arg: &Json) -> Vec<&str> {
    let text = match arg {
        Json::String(s) => s.as_str(),
        Json::Array(a) => a.first().and_then(Json::as_str).unwrap_or_default(),
        _ => "",
    };
    let mut names = Vec::new();
    let mut rest = text;
    while let Some(i) = rest.find("${") {
        rest = &rest[i + 2..];
        let Some(end) = rest.find('}') else { break };
        if !rest.starts_with('!') {
            names.push(&rest[..end]);
        }
        rest = &rest[end..];
    }
    names
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn sub_names_are_the_references_of_the_text() {
        assert_eq!(
            sub_names(&json!("a-${AWS::Region}-${b.Arn}${!lit}-${c}")),
            ["AWS::Region", "b.Arn", "c"]
        );
        assert_eq!(sub_names(&json!(["${x}-${y", {"x": 1}])), ["x"]);
        assert!(sub_names(&json!(1)).is_empty());
    }
}
