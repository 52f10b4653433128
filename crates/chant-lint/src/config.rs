//! The `lint` section of a project's config: per-rule settings (`"off"`, a severity, or
//! `[severity, options]`) and per-glob `overrides` applied in order after the top-level rules.

use std::path::{Path, PathBuf};

use confine::Walls;
use serde_json::{Value as Json, json};

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
    overrides: Vec<(Files, Rules)>,
    /// The intrinsic functions of the project's lexicons (`Ref`, `Join`, …): calls that are
    /// statically evaluable (EVL001). Set by the caller from its lexicons, never from a file.
    pub intrinsics: Vec<String>,
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

/// The built-in presets `extends` may name.
fn preset(name: &str) -> Option<Json> {
    let severities = |list: [&str; 15]| {
        let ids = (1..=15).map(|i| format!("COR{i:03}"));
        Json::Object(ids.zip(list).map(|(id, s)| (id, json!(s))).collect())
    };
    match name {
        "@intentius/chant/lint/presets/strict" => Some(json!({"rules": severities([
            "error", "error", "warning", "warning", "warning", "error", "warning", "error",
            "warning", "warning", "error", "warning", "info", "warning", "warning",
        ])})),
        "@intentius/chant/lint/presets/relaxed" => Some(json!({"rules": severities([
            "warning", "off", "off", "off", "off", "off", "off", "warning", "off", "warning",
            "warning", "off", "off", "off", "off",
        ])})),
        _ => None,
    }
}

/// The rules `extends` contributes, in order: built-in presets by name, other configs by
/// path (relative to `base`), each of those resolved the same way.
fn extended(
    path: &str,
    extends: Option<&Json>,
    base: Option<&Path>,
    walls: Option<&Walls>,
    seen: &mut Vec<PathBuf>,
) -> Result<Rules, String> {
    let list = match extends {
        None | Some(Json::Null) => return Ok(Vec::new()),
        Some(Json::Array(a)) => a,
        Some(_) => {
            return Err(format!(
                "{path}.extends must be an array of preset names or config paths"
            ));
        }
    };
    let mut out = Vec::new();
    for item in list {
        let Some(name) = item.as_str() else {
            return Err(format!("{path}.extends must be an array of strings"));
        };
        if name.starts_with("@intentius/chant") {
            let p = preset(name).ok_or_else(|| {
                format!("Unknown preset: {name} (known: @intentius/chant/lint/presets/strict, @intentius/chant/lint/presets/relaxed)")
            })?;
            out.extend(rules(name, p.get("rules"))?);
            continue;
        }
        let Some(base) = base else {
            return Err(format!(
                "{path}.extends: \"{name}\" is a file, and this config has no directory to resolve it from"
            ));
        };
        let file = match walls {
            Some(w) => w
                .resolve_from(base, &format!("{path}.extends"), name)
                .map_err(|e| e.to_string())?,
            None => base.join(name),
        };
        let key = std::fs::canonicalize(&file).unwrap_or_else(|_| file.clone());
        if seen.contains(&key) {
            return Err(format!("Circular extends detected: {}", file.display()));
        }
        seen.push(key);
        if !file.exists() {
            return Err(format!(
                "Extended config file not found: {}",
                file.display()
            ));
        }
        let text = confine::read_text(&file, 1 << 20)?;
        let raw: Json = serde_json::from_str(&text)
            .map_err(|e| format!("Failed to parse config file {}: {e}", file.display()))?;
        let lint = raw.get("lint").filter(|l| l.is_object()).unwrap_or(&raw);
        let shown = file.display().to_string();
        out.extend(extended(
            &shown,
            lint.get("extends"),
            file.parent(),
            walls,
            seen,
        )?);
        out.extend(rules(&format!("{shown}: rules"), lint.get("rules"))?);
    }
    Ok(out)
}

impl LintConfig {
    /// From the config's `lint` value (`null` for defaults).
    pub fn from_json(lint: &Json) -> Result<LintConfig, String> {
        LintConfig::from_json_in(lint, None, None)
    }

    /// From the config's `lint` value, resolving file `extends` against `base` (the config's
    /// directory); with `walls`, a file `extends` must stay inside them.
    pub fn from_json_in(
        lint: &Json,
        base: Option<&Path>,
        walls: Option<&Walls>,
    ) -> Result<LintConfig, String> {
        if lint.is_null() {
            return Ok(LintConfig::default());
        }
        let Some(o) = lint.as_object() else {
            return Err("lint must be an object".into());
        };
        if let Some(k) = o
            .keys()
            .find(|k| !matches!(k.as_str(), "extends" | "rules" | "overrides"))
        {
            return Err(if k == "plugins" {
                "lint.plugins: lint plugins are not supported by this chant; remove the field"
                    .into()
            } else {
                format!("lint: unknown field \"{k}\"; the fields are extends, rules, overrides")
            });
        }
        let mut top = extended("lint", o.get("extends"), base, walls, &mut Vec::new())?;
        top.extend(rules("lint.rules", o.get("rules"))?);
        let mut overrides = Vec::new();
        match o.get("overrides") {
            None | Some(Json::Null) => {}
            Some(Json::Array(items)) => {
                for (i, item) in items.iter().enumerate() {
                    let path = format!("lint.overrides[{i}]");
                    if let Some(k) = item
                        .as_object()
                        .and_then(|o| o.keys().find(|k| !matches!(k.as_str(), "files" | "rules")))
                    {
                        return Err(format!(
                            "{path}: unknown field \"{k}\"; an override has files and rules"
                        ));
                    }
                    let files: Vec<String> = match item.get("files") {
                        Some(Json::String(s)) => vec![s.clone()],
                        Some(Json::Array(a)) if a.iter().all(Json::is_string) => a
                            .iter()
                            .filter_map(|s| s.as_str().map(str::to_owned))
                            .collect(),
                        _ => return Err(format!("{path}.files must be a glob or a list of globs")),
                    };
                    let files = Files::new(&path, files)?;
                    overrides.push((files, rules(&format!("{path}.rules"), item.get("rules"))?));
                }
            }
            Some(_) => return Err("lint.overrides must be an array".into()),
        }
        Ok(LintConfig {
            rules: top,
            overrides,
            intrinsics: Vec::new(),
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
            if globs.set.is_match(relative.trim_start_matches("./")) {
                apply(&mut current, list);
            }
        }
        match current {
            Entry::Off => None,
            Entry::On(s) => Some(s),
        }
    }
}

/// An override's `files`: the globs as written, compiled once (globset: `**` any number of
/// path segments, `*` and `?` never across a `/`, `{a,b}` and `[abc]` as in a shell; matching
/// is linear in the path, whatever the pattern).
#[derive(Clone, Debug)]
struct Files {
    globs: Vec<String>,
    set: globset::GlobSet,
}

impl PartialEq for Files {
    fn eq(&self, other: &Files) -> bool {
        self.globs == other.globs
    }
}

impl Files {
    fn new(path: &str, globs: Vec<String>) -> Result<Files, String> {
        let mut set = globset::GlobSetBuilder::new();
        for (j, g) in globs.iter().enumerate() {
            let compiled = glob(g).map_err(|e| format!("{path}.files[{j}]: {e}"))?;
            // Too large to compile is said of the glob that is, not of the list.
            one(&compiled).map_err(|e| format!("{path}.files[{j}]: {e}"))?;
            set.add(compiled);
        }
        let set = set.build().map_err(|e| format!("{path}.files: {e}"))?;
        Ok(Files { globs, set })
    }
}

fn glob(pattern: &str) -> Result<globset::Glob, String> {
    globset::GlobBuilder::new(pattern.trim_start_matches("./"))
        .literal_separator(true)
        .build()
        .map_err(|e| format!("{} is not a glob ({})", shown(pattern), e.kind()))
}

/// One glob's matcher (globset's own `compile_matcher` panics on a pattern too large).
fn one(g: &globset::Glob) -> Result<globset::GlobSet, String> {
    let mut b = globset::GlobSetBuilder::new();
    b.add(g.clone());
    b.build()
        .map_err(|e| format!("{} is too large a glob ({e})", shown(g.glob())))
}

/// A pattern as an error quotes it: whole up to 80 characters, else its start and length.
fn shown(pattern: &str) -> String {
    match pattern.char_indices().nth(80) {
        None => format!("\"{pattern}\""),
        Some((at, _)) => format!("\"{}…\" ({} bytes)", &pattern[..at], pattern.len()),
    }
}

/// Whether `path` (`/`-separated, relative) matches `glob`.
pub fn glob_match(glob_text: &str, path: &str) -> bool {
    glob(glob_text)
        .and_then(|g| one(&g))
        .is_ok_and(|set| set.is_match(path.trim_start_matches("./")))
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
        // What a shell's globs also mean, once taken literally.
        assert!(glob_match("src/{a,b}.ts", "src/b.ts") && !glob_match("src/{a,b}.ts", "src/c.ts"));
        assert!(glob_match("src/[ab].ts", "src/a.ts") && !glob_match("src/[ab].ts", "src/[ab].ts"));
        // A pattern that would take exponential time to backtrack answers at once.
        let hostile = format!("{}b", "*a".repeat(40));
        assert!(!glob_match(&hostile, &"a".repeat(200)));
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
    fn presets_and_extended_files_come_before_the_configs_own_rules() {
        let strict = LintConfig::from_json(&json!({"extends": ["@intentius/chant/lint/presets/strict"], "rules": {"COR008": "warning"}})).unwrap();
        assert_eq!(
            strict.setting("COR001", "a.ts").unwrap().severity,
            Some(Severity::Error)
        );
        assert_eq!(
            strict.setting("COR013", "a.ts").unwrap().severity,
            Some(Severity::Info)
        );
        assert_eq!(
            strict.setting("COR008", "a.ts").unwrap().severity,
            Some(Severity::Warning),
            "own rules win"
        );
        let relaxed =
            LintConfig::from_json(&json!({"extends": ["@intentius/chant/lint/presets/relaxed"]}))
                .unwrap();
        assert_eq!(relaxed.setting("COR004", "a.ts"), None);
        assert!(relaxed.setting("COR010", "a.ts").is_some());
        assert!(
            relaxed.setting("EVL001", "a.ts").is_some(),
            "rules a preset does not name stay on"
        );

        let dir = tempfile::tempdir().unwrap();
        std::fs::write(
            dir.path().join("base.json"),
            r#"{"extends": ["./more.json"], "rules": {"COR005": "error"}}"#,
        )
        .unwrap();
        std::fs::write(
            dir.path().join("more.json"),
            r#"{"lint": {"rules": {"COR005": "info", "COR004": "off"}}}"#,
        )
        .unwrap();
        let c =
            LintConfig::from_json_in(&json!({"extends": ["./base.json"]}), Some(dir.path()), None)
                .unwrap();
        assert_eq!(
            c.setting("COR005", "a.ts").unwrap().severity,
            Some(Severity::Error)
        );
        assert_eq!(c.setting("COR004", "a.ts"), None);
        std::fs::write(
            dir.path().join("more.json"),
            r#"{"extends": ["./base.json"]}"#,
        )
        .unwrap();
        let e =
            LintConfig::from_json_in(&json!({"extends": ["./base.json"]}), Some(dir.path()), None)
                .unwrap_err();
        assert!(e.starts_with("Circular extends detected: "), "{e}");
        let e = LintConfig::from_json_in(
            &json!({"extends": ["./missing.json"]}),
            Some(dir.path()),
            None,
        )
        .unwrap_err();
        assert!(e.starts_with("Extended config file not found: "), "{e}");
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
        assert_eq!(
            err(json!({"extends": ["@intentius/chant/lint/presets/nope"]})),
            "Unknown preset: @intentius/chant/lint/presets/nope (known: @intentius/chant/lint/presets/strict, @intentius/chant/lint/presets/relaxed)"
        );
        assert!(err(json!({"extends": "strict"})).starts_with("lint.extends must be an array"));
        assert!(
            err(json!({"extends": ["./base.json"]})).contains("no directory to resolve it from")
        );
        let huge = "*".repeat(100_000);
        let e = err(json!({"overrides": [{"files": ["a", huge], "rules": {}}]}));
        assert!(
            e.starts_with(&format!(
                "lint.overrides[0].files[1]: \"{}…\" (100000 bytes) is too large a glob",
                "*".repeat(80)
            )),
            "{}",
            &e[..e.len().min(300)]
        );
        assert_eq!(
            err(json!({"overrides": [{"files": ["src/*.ts", "src/[a"], "rules": {}}]})),
            "lint.overrides[0].files[1]: \"src/[a\" is not a glob (unclosed character class; missing ']')"
        );
        assert_eq!(
            LintConfig::from_json(&Json::Null).unwrap(),
            LintConfig::default()
        );
    }
}
