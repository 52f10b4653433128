//! `chant.config`: the typed settings every command reads, validated once when a project is
//! located. A config that is not valid is an error naming the file, the field and the fix; no
//! field is silently ignored.

use std::path::Path;
use std::time::Duration;

use serde_json::Value as Json;

/// The fields a config may have besides its lexicons' own namespaces. `capabilities` …
/// `signing` are accepted and not used by this chant (chant-engine.md §2.2).
const KNOWN: &[&str] = &[
    "lexicons",
    "timeout",
    "lint",
    "rules",
    "capabilities",
    "environments",
    "sourceDir",
    "stacks",
    "ownership",
    "build",
    "buildParams",
    "release",
    "sbom",
    "signing",
];

/// The longest `timeout` (and `--timeout`) an evaluation may be given: one hour.
pub const MAX_TIMEOUT_MS: u64 = 3_600_000;

/// What chant itself reads from a config.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Settings {
    /// `lexicons`, in order (empty: detect from the sources).
    pub lexicons: Vec<String>,
    /// `timeout`: the wall time of one evaluation of the whole project.
    pub timeout: Option<Duration>,
}

/// A lexicon name: `^[a-z][a-z0-9_-]*$`.
pub fn valid_lexicon_name(name: &str) -> bool {
    let mut b = name.bytes();
    b.next().is_some_and(|c| c.is_ascii_lowercase())
        && b.all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == b'-' || c == b'_')
}

/// Validates a config's default export (`file` names it in errors).
pub fn validate(file: &Path, config: &Json) -> Result<Settings, String> {
    let f = file.display();
    let Some(o) = config.as_object() else {
        return Err(format!(
            "{f}: the default export must be an object, as in `export default {{ lexicons: [\"gitlab\"] }}`; got {}",
            describe(config)
        ));
    };
    let mut settings = Settings::default();
    match o.get("lexicons") {
        None | Some(Json::Null) => {}
        Some(Json::Array(items)) => {
            for item in items {
                match item.as_str() {
                    Some(name) if valid_lexicon_name(name) => {
                        settings.lexicons.push(name.to_owned())
                    }
                    _ => {
                        return Err(format!(
                            "{f}: lexicons: {} is not a lexicon name; list names such as \"gitlab\"",
                            canon::to_compact(item)
                        ));
                    }
                }
            }
        }
        Some(other) => {
            return Err(format!(
                "{f}: lexicons must be a list of lexicon names, as in lexicons: [\"gitlab\"]; got {}",
                describe(other)
            ));
        }
    }
    match o.get("timeout") {
        None | Some(Json::Null) => {}
        Some(v) => {
            let ms = match v {
                Json::Number(n) => n
                    .as_f64()
                    .filter(|n| n.is_finite() && *n >= 1.0)
                    .map(|n| n as u64),
                Json::String(s) => parse_duration(s).ok(),
                _ => None,
            };
            let Some(ms) = ms.filter(|ms| (1..=MAX_TIMEOUT_MS).contains(ms)) else {
                return Err(format!(
                    "{f}: timeout must be a duration from 1ms to 1h, such as \"10s\" or \"500ms\" (or milliseconds as a number); got {}",
                    canon::to_compact(v)
                ));
            };
            settings.timeout = Some(Duration::from_millis(ms));
        }
    }
    for key in ["lint", "rules"] {
        if let Some(v) = o.get(key)
            && !v.is_object()
            && !v.is_null()
        {
            return Err(format!("{f}: {key} must be an object; got {}", describe(v)));
        }
    }
    for key in o.keys() {
        if KNOWN.contains(&key.as_str()) || settings.lexicons.iter().any(|l| l == key) {
            continue;
        }
        return Err(format!(
            "{f}: unknown field \"{key}\"; the fields are {}, and a lexicon's own settings go under its name once it is listed in lexicons",
            KNOWN.join(", ")
        ));
    }
    Ok(settings)
}

fn describe(v: &Json) -> String {
    let text = canon::to_compact(v);
    let kind = match v {
        Json::Null => "null",
        Json::Bool(_) => "a boolean",
        Json::Number(_) => "a number",
        Json::String(_) => "a string",
        Json::Array(_) => "a list",
        Json::Object(_) => "an object",
    };
    if text.len() > 80 {
        kind.to_owned()
    } else {
        format!("{kind}, {text}")
    }
}

/// `parseDuration`: the sum of every `<n>(ms|s|m|h|d)`; none is an error.
pub fn parse_duration(s: &str) -> Result<u64, String> {
    let bytes = s.as_bytes();
    let (mut i, mut total, mut found) = (0, 0u64, false);
    while i < bytes.len() {
        if !bytes[i].is_ascii_digit() {
            i += 1;
            continue;
        }
        let start = i;
        while i < bytes.len() && bytes[i].is_ascii_digit() {
            i += 1;
        }
        let n: u64 = s[start..i].parse().unwrap_or(u64::MAX);
        let (unit, len) = if s[i..].starts_with("ms") {
            (1, 2)
        } else {
            match bytes.get(i) {
                Some(b's') => (1_000, 1),
                Some(b'm') => (60_000, 1),
                Some(b'h') => (3_600_000, 1),
                Some(b'd') => (86_400_000, 1),
                _ => continue,
            }
        };
        i += len;
        total = total.saturating_add(n.saturating_mul(unit));
        found = true;
    }
    if found {
        Ok(total)
    } else {
        Err(format!("unparseable duration: \"{s}\""))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn duration_vectors() {
        assert_eq!(parse_duration("5m"), Ok(300_000));
        assert_eq!(parse_duration("100ms"), Ok(100));
        assert_eq!(parse_duration("1h30m"), Ok(5_400_000));
        assert_eq!(parse_duration("48h"), Ok(172_800_000));
        assert_eq!(parse_duration("2d"), Ok(172_800_000));
        assert_eq!(parse_duration("99999999999999999999999d"), Ok(u64::MAX));
        assert_eq!(
            parse_duration("soon"),
            Err("unparseable duration: \"soon\"".into())
        );
    }

    #[test]
    fn configs_are_validated_with_the_field_and_the_fix() {
        let f = Path::new("/p/chant.config.ts");
        let ok = validate(
            f,
            &json!({"lexicons": ["gitlab"], "timeout": "2s", "gitlab": {}, "lint": {"rules": {}}}),
        )
        .unwrap();
        assert_eq!(ok.lexicons, ["gitlab"]);
        assert_eq!(ok.timeout, Some(Duration::from_secs(2)));
        let err = |v: Json| validate(f, &v).unwrap_err();
        assert_eq!(
            err(json!(42)),
            "/p/chant.config.ts: the default export must be an object, as in `export default { lexicons: [\"gitlab\"] }`; got a number, 42"
        );
        assert_eq!(
            err(json!({"lexicons": "gitlab"})),
            "/p/chant.config.ts: lexicons must be a list of lexicon names, as in lexicons: [\"gitlab\"]; got a string, \"gitlab\""
        );
        assert!(err(json!({"lexicons": ["Git Lab"]})).contains("is not a lexicon name"));
        assert!(err(json!({"timeout": "soon"})).contains("timeout must be a duration"));
        assert!(err(json!({"timeout": -1})).contains("timeout must be a duration"));
        assert!(err(json!({"timeout": 0.5})).contains("timeout must be a duration"));
        assert!(err(json!({"timeout": "0s"})).contains("timeout must be a duration"));
        assert!(err(json!({"timeout": "99999999999d"})).contains("from 1ms to 1h"));
        assert!(err(json!({"lexicon": ["gitlab"]})).starts_with(
            "/p/chant.config.ts: unknown field \"lexicon\"; the fields are lexicons, timeout,"
        ));
        assert!(err(json!({"lexicons": ["gitlab"], "aws": {}})).contains("unknown field \"aws\""));
        assert!(err(json!({"lint": "strict"})).contains("lint must be an object"));
    }
}
