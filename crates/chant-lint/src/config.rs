//! The `lint` section of a project's config: per-rule settings (`"off"`, a severity, or
//! `[severity, options]`) and per-glob `overrides` applied in order after the top-level rules.

use serde_json::Value as Json;

use crate::Severity;

/// One rule's effective setting. `severity` `None` keeps the rule's own.
#[derive(Clone, Debug, PartialEq)]
pub struct Setting {
    pub severity: Option<Severity>,
    pub options: Json,
}

#[derive(Clone, Debug, PartialEq)]
enum Entry {
    Off,
    On(Setting),
}

/// Rule settings in the order written.
type Rules = Vec<(String, Entry)>;

#[derive(Clone, Debug, Default, PartialEq)]
pub struct LintConfig {
    rules: Rules,
    /// `(globs, rules)` per override.
    overrides: Vec<(Vec<String>, Rules)>,
}

fn entry(path: &str, v: &Json) -> Result<Entry, String> {
    let severity = |s: &str| -> Result<Entry, String> {
        match s {
            "off" => Ok(Entry::Off),
            _ => Severity::parse(s)
                .map(|sev| {
                    Entry::On(Setting {
                        severity: Some(sev),
                        options: Json::Null,
                    })
                })
                .ok_or_else(|| {
                    format!(
                        "{path}: \"{s}\" is not one of \"off\", \"error\", \"warning\", \"info\""
                    )
                }),
        }
    };
    match v {
        Json::String(s) => severity(s),
        Json::Bool(false) => Ok(Entry::Off),
        Json::Bool(true) => Ok(Entry::On(Setting {
            severity: None,
            options: Json::Null,
        })),
        Json::Array(a) => match a.first() {
            Some(Json::String(s)) => match severity(s)? {
                Entry::Off => Ok(Entry::Off),
                Entry::On(mut setting) => {
                    setting.options = a.get(1).cloned().unwrap_or(Json::Null);
                    Ok(Entry::On(setting))
                }
            },
            _ => Err(format!(
                "{path}: an array setting starts with a severity, as in [\"warning\", {{ \"max\": 4 }}]"
            )),
        },
        _ => Err(format!(
            "{path}: expected \"off\", a severity, or [severity, options]"
        )),
    }
}

fn rules(path: &str, v: Option<&Json>) -> Result<Rules, String> {
    match v {
        None | Some(Json::Null) => Ok(Vec::new()),
        Some(Json::Object(m)) => m
            .iter()
            .map(|(id, v)| Ok((id.clone(), entry(&format!("{path}.{id}"), v)?)))
            .collect(),
        Some(_) => Err(format!("{path} must be an object of rule settings")),
    }
}

impl LintConfig {
    /// From the config's `lint` value (`null` for defaults).
    pub fn from_json(lint: &Json) -> Result<LintConfig, String> {
        if lint.is_null() {
            return Ok(LintConfig::default());
        }
        let Some(o) = lint.as_object() else {
            return Err("lint must be an object".into());
        };
        if o.get("extends").is_some_and(|e| !e.is_null()) {
            return Err(
                "lint.extends (the strict and relaxed presets) is not supported yet; list the rules under lint.rules instead".into(),
            );
        }
        let top = rules("lint.rules", o.get("rules"))?;
        let mut overrides = Vec::new();
        match o.get("overrides") {
            None | Some(Json::Null) => {}
            Some(Json::Array(items)) => {
                for (i, item) in items.iter().enumerate() {
                    let path = format!("lint.overrides[{i}]");
                    let files: Vec<String> = match item.get("files") {
                        Some(Json::String(s)) => vec![s.clone()],
                        Some(Json::Array(a)) if a.iter().all(Json::is_string) => a
                            .iter()
                            .filter_map(|s| s.as_str().map(str::to_owned))
                            .collect(),
                        _ => return Err(format!("{path}.files must be a glob or a list of globs")),
                    };
                    overrides.push((files, rules(&format!("{path}.rules"), item.get("rules"))?));
                }
            }
            Some(_) => return Err("lint.overrides must be an array".into()),
        }
        Ok(LintConfig {
            rules: top,
            overrides,
        })
    }

    /// The setting of `rule` for the file at `relative` (`/`-separated); `None` when off.
    pub fn setting(&self, rule: &str, relative: &str) -> Option<Setting> {
        let mut current = Entry::On(Setting {
            severity: None,
            options: Json::Null,
        });
        let apply = |current: &mut Entry, list: &[(String, Entry)]| {
            if let Some((_, e)) = list.iter().rev().find(|(id, _)| id == rule) {
                *current = e.clone();
            }
        };
        apply(&mut current, &self.rules);
        for (globs, list) in &self.overrides {
            if globs.iter().any(|g| glob_match(g, relative)) {
                apply(&mut current, list);
            }
        }
        match current {
            Entry::Off => None,
            Entry::On(s) => Some(s),
        }
    }
}

/// `**` any number of path segments, `*` any run of characters but `/`, `?` one such character.
pub fn glob_match(glob: &str, path: &str) -> bool {
    let g: Vec<char> = glob.trim_start_matches("./").chars().collect();
    let p: Vec<char> = path.trim_start_matches("./").chars().collect();
    matches(&g, &p)
}

fn matches(g: &[char], p: &[char]) -> bool {
    match g.first() {
        None => p.is_empty(),
        Some('*') if g.get(1) == Some(&'*') => {
            if g.get(2) == Some(&'/') {
                // `**/x`: x at the start or after any `/`.
                (0..=p.len()).any(|i| (i == 0 || p[i - 1] == '/') && matches(&g[3..], &p[i..]))
            } else {
                (0..=p.len()).any(|i| matches(&g[2..], &p[i..]))
            }
        }
        Some('*') => (0..=p.len())
            .take_while(|i| *i == 0 || p[*i - 1] != '/')
            .any(|i| matches(&g[1..], &p[i..])),
        Some('?') => p.first().is_some_and(|c| *c != '/') && matches(&g[1..], &p[1..]),
        Some(c) => p.first() == Some(c) && matches(&g[1..], &p[1..]),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn globs() {
        assert!(glob_match("**/quiet.ts", "src/quiet.ts"));
        assert!(glob_match("**/quiet.ts", "quiet.ts"));
        assert!(glob_match("**/quiet.ts", "a/b/c/quiet.ts"));
        assert!(!glob_match("**/quiet.ts", "src/notquiet.ts"));
        assert!(glob_match("src/*.ts", "src/a.ts"));
        assert!(!glob_match("src/*.ts", "src/sub/a.ts"));
        assert!(glob_match("src/**", "src/sub/a.ts"));
        assert!(glob_match("src/**/*.ts", "src/a.ts"));
        assert!(glob_match("src/?.ts", "src/a.ts") && !glob_match("src/?.ts", "src/ab.ts"));
        assert!(glob_match("./src/a.ts", "src/a.ts"));
    }

    #[test]
    fn rules_and_overrides_in_order() {
        let c = LintConfig::from_json(&json!({
            "rules": {"WGL003": "error", "COR009": ["warning", {"max": 4}], "COR005": "off"},
            "overrides": [{"files": ["**/quiet.ts"], "rules": {"COR004": "off", "COR005": "info"}}],
        }))
        .unwrap();
        assert_eq!(
            c.setting("WGL003", "src/a.ts").unwrap().severity,
            Some(Severity::Error)
        );
        assert_eq!(
            c.setting("COR009", "src/a.ts").unwrap().options,
            json!({"max": 4})
        );
        assert_eq!(
            c.setting("COR004", "src/a.ts").unwrap(),
            Setting {
                severity: None,
                options: Json::Null
            }
        );
        assert_eq!(c.setting("COR004", "src/quiet.ts"), None);
        assert_eq!(c.setting("COR005", "src/a.ts"), None);
        assert_eq!(
            c.setting("COR005", "src/quiet.ts").unwrap().severity,
            Some(Severity::Info)
        );
    }

    #[test]
    fn bad_settings_name_the_key_and_the_fix() {
        let err = |v: Json| LintConfig::from_json(&v).unwrap_err();
        assert_eq!(
            err(json!({"rules": {"COR004": "eror"}})),
            "lint.rules.COR004: \"eror\" is not one of \"off\", \"error\", \"warning\", \"info\""
        );
        assert_eq!(
            err(json!({"rules": []})),
            "lint.rules must be an object of rule settings"
        );
        assert_eq!(
            err(json!({"overrides": [{"rules": {}}]})),
            "lint.overrides[0].files must be a glob or a list of globs"
        );
        assert!(
            err(json!({"rules": {"X": [{"max": 1}]}}))
                .starts_with("lint.rules.X: an array setting starts with a severity")
        );
        assert!(err(json!({"extends": ["strict"]})).starts_with("lint.extends"));
        assert_eq!(
            LintConfig::from_json(&Json::Null).unwrap(),
            LintConfig::default()
        );
    }
}
