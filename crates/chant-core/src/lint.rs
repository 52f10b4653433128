//! A project's lint setup: which rules run (the core ones, then each of its lexicons'), its
//! `lint` config, and which files (a directory's sources, or the one file named).

use std::path::{Path, PathBuf};

use crate::lexicon::Registry;
use crate::project::Project;
use chant_lint::{LintConfig, Rule};
use serde_json::{Value as Json, json};

/// What a lint of one path in a project needs.
pub struct Setup {
    pub rules: Vec<Rule>,
    pub config: LintConfig,
    pub files: Vec<PathBuf>,
    /// Override globs match paths relative to this directory (the project's).
    pub root: PathBuf,
}

/// The `lint` section of a config: `lint`, else a top-level `rules`.
fn lint_section(config: &Json) -> Json {
    match (config.get("lint"), config.get("rules")) {
        (Some(l), _) => l.clone(),
        (None, Some(r)) => json!({"rules": r}),
        (None, None) => Json::Null,
    }
}

/// The lint section of a located project's config, checked as the lint would read it (a rule
/// set to `"nonsense"` fails every command).
pub fn check_config(registry: &Registry, project: &Project) -> Result<(), String> {
    let section = lint_section(&project.config);
    if section.is_null() {
        return Ok(());
    }
    let file = project
        .config_dir
        .as_deref()
        .and_then(crate::project::config_file)
        .map(|f| f.display().to_string())
        .unwrap_or_else(|| "chant.config".into());
    LintConfig::from_json_in(&section, Some(project.dir()), Some(&project.walls()))
        .map_err(|e| format!("{file}: {e}"))?;
    // Every rule the config names is a rule this project runs (presets may name others).
    let rules = registry.lint_rules(&project.lexicon_names().unwrap_or_default());
    let mut named: Vec<(String, &str)> = Vec::new();
    if let Some(r) = section.get("rules").and_then(Json::as_object) {
        named.extend(r.keys().map(|id| ("lint.rules".to_owned(), id.as_str())));
    }
    if let Some(items) = section.get("overrides").and_then(Json::as_array) {
        for (i, item) in items.iter().enumerate() {
            if let Some(r) = item.get("rules").and_then(Json::as_object) {
                named.extend(
                    r.keys()
                        .map(|id| (format!("lint.overrides[{i}].rules"), id.as_str())),
                );
            }
        }
    }
    if let Some((at, id)) = named
        .iter()
        .find(|(_, id)| !rules.iter().any(|r| r.id == *id))
    {
        let known: Vec<&str> = rules.iter().map(|r| r.id).collect();
        return Err(format!(
            "{file}: {at}.{id}: no such rule; the rules are {}",
            known.join(", ")
        ));
    }
    Ok(())
}

/// Prepares a lint of `path` (absolute) in `project`; `only` restricts the rules to those ids.
pub fn setup(
    registry: &Registry,
    project: &Project,
    path: &Path,
    only: &[String],
) -> Result<Setup, String> {
    let walls = project.walls();
    let lexicons = project.lexicon_names().unwrap_or_default();
    let mut rules = registry.lint_rules(&lexicons);
    if !only.is_empty() {
        if let Some(unknown) = only
            .iter()
            .find(|id| !rules.iter().any(|r| r.id == id.as_str()))
        {
            let known: Vec<&str> = rules.iter().map(|r| r.id).collect();
            return Err(format!(
                "unknown rule \"{unknown}\" (known: {})",
                known.join(", ")
            ));
        }
        rules.retain(|r| only.iter().any(|id| id == r.id));
    }
    // The project config's `lint` (or top-level `rules`); else a lint-only
    // `chant.config.json` in the linted directory.
    let section = lint_section(&project.config);
    let config = if !section.is_null() {
        LintConfig::from_json_in(&section, Some(project.dir()), Some(&walls))
            .map_err(|e| format!("chant.config: {e}"))?
    } else {
        let dir = if path.is_dir() {
            path
        } else {
            path.parent().unwrap_or(path)
        };
        let fragment = dir.join("chant.config.json");
        let read = if fragment.exists() {
            walls
                .read_text(dir, "chant.config.json", "chant.config.json", 1 << 20)
                .map(|(_, text)| text)
                .map(Some)
        } else {
            Ok(None)
        };
        match read.map_err(|e| format!("{}: {e}", fragment.display()))? {
            Some(text) => {
                let raw: Json = serde_json::from_str(&text)
                    .map_err(|e| format!("{}: {e}", fragment.display()))?;
                let lint = raw.get("lint").filter(|l| l.is_object()).unwrap_or(&raw);
                let only_lint: serde_json::Map<String, Json> = lint
                    .as_object()
                    .map(|o| {
                        o.iter()
                            .filter(|(k, _)| {
                                matches!(k.as_str(), "extends" | "rules" | "overrides")
                            })
                            .map(|(k, v)| (k.clone(), v.clone()))
                            .collect()
                    })
                    .unwrap_or_default();
                LintConfig::from_json_in(&Json::Object(only_lint), Some(dir), Some(&walls))
                    .map_err(|e| format!("{}: {e}", fragment.display()))?
            }
            None => LintConfig::default(),
        }
    };
    let files = if path.is_file() {
        // One file named: linted whatever its name, so long as it is inside the project.
        walls
            .resolve("path", &path.to_string_lossy())
            .map_err(|e| e.to_string())?;
        vec![path.to_path_buf()]
    } else if path.is_dir() {
        crate::discover::source_files(path, &walls).map_err(|e| e.to_string())?
    } else {
        return Err(format!("{}: no such file or directory", path.display()));
    };
    let mut config = config;
    config.intrinsics = registry.intrinsics(&lexicons);
    Ok(Setup {
        rules,
        config,
        files,
        root: project.dir().to_path_buf(),
    })
}

impl Setup {
    pub fn linter(&self) -> chant_lint::run::Linter<'_> {
        chant_lint::run::Linter {
            rules: &self.rules,
            config: &self.config,
            root: &self.root,
        }
    }
}
