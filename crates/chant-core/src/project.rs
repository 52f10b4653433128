//! A chant project: where its config is, which lexicons it uses, and where imports may reach.

use std::path::{Path, PathBuf};

use serde_json::Value as Json;
use thiserror::Error;

use crate::config::{self, Settings};
use crate::confine::{self, Walls};
use crate::discover;
use crate::model::{Budget, Evaluator};

#[derive(Debug, Error, Clone, PartialEq, Eq)]
pub enum ProjectError {
    #[error("No lexicon detected in infrastructure files")]
    NoLexicon,
    #[error("Lexicon \"{0}\" is not available in this chant")]
    UnknownLexicon(String),
    #[error("{0}")]
    Config(String),
}

/// A located project.
#[derive(Clone, Debug, PartialEq)]
pub struct Project {
    /// The path the user named (a directory or one source file), symlinks resolved.
    pub path: PathBuf,
    /// The directory holding `chant.config.ts`/`.json`, if any.
    pub config_dir: Option<PathBuf>,
    /// The config's default export (an object), `{}` without a config.
    pub config: Json,
    /// What chant reads from the config, validated.
    pub settings: Settings,
    /// Imports, discovery and writes may not leave this directory (the git root, else the
    /// project's directory), symlinks resolved.
    pub boundary: PathBuf,
}

/// The config file in `dir`: `chant.config.ts`, then `chant.config.json` unless that is a
/// lint-only fragment (only `extends`, `rules`, `overrides`), which configures the lint of its
/// directory and not a project.
pub fn config_file(dir: &Path) -> Option<PathBuf> {
    let ts = dir.join("chant.config.ts");
    if ts.is_file() {
        return Some(ts);
    }
    let json = dir.join("chant.config.json");
    (json.is_file() && !is_lint_fragment(&json)).then_some(json)
}

fn is_lint_fragment(file: &Path) -> bool {
    let Ok(text) = read_config_text(file) else {
        return false;
    };
    let Ok(Json::Object(o)) = serde_json::from_str::<Json>(&text) else {
        return false;
    };
    !o.is_empty()
        && o.keys()
            .all(|k| matches!(k.as_str(), "extends" | "rules" | "overrides"))
}

/// Locates the project for `path`: the config at `path` or above it (validated), and the
/// import boundary.
///
/// With a `ceiling` (a resolved directory above `path`, e.g. the directory an MCP server
/// serves), no config above it is read and the boundary is never wider than it.
pub fn locate(
    path: &Path,
    evaluator: &dyn Evaluator,
    budget: &Budget,
    ceiling: Option<&Path>,
) -> Result<Project, ProjectError> {
    let path = confine::resolve(path).map_err(ProjectError::Config)?;
    let dir = if path.is_dir() {
        path.clone()
    } else {
        path.parent().map(Path::to_path_buf).unwrap_or_default()
    };
    let git_root = dir
        .ancestors()
        .find(|d| d.join(".git").exists())
        .map(Path::to_path_buf);
    let under_ceiling = |d: &Path| ceiling.is_none_or(|c| d.starts_with(c));
    let config_dir = dir
        .ancestors()
        .take_while(|d| git_root.as_ref().is_none_or(|g| d.starts_with(g)) && under_ceiling(d))
        .find(|d| config_file(d).is_some())
        .map(Path::to_path_buf);
    let mut boundary = git_root
        .clone()
        .or_else(|| config_dir.clone())
        .unwrap_or_else(|| dir.clone());
    if let Some(c) = ceiling
        && c.starts_with(&boundary)
    {
        boundary = c.to_path_buf();
    }
    let (config, settings) = match config_dir.as_deref().and_then(config_file) {
        None => (Json::Object(Default::default()), Settings::default()),
        Some(file) if !Walls::resolved(boundary.clone()).contains(&file) => {
            return Err(ProjectError::Config(format!(
                "{}: a link that leads out of the project ({}); a config must be a file of the project",
                file.display(),
                boundary.display()
            )));
        }
        Some(file) => {
            let config = if file.extension().is_some_and(|e| e == "json") {
                let text = read_config_text(&file)?;
                serde_json::from_str(&text).map_err(|e| {
                    ProjectError::Config(format!(
                        "{}: invalid JSON: {e}; chant.config.json is strict JSON (no comments or trailing commas)",
                        file.display()
                    ))
                })?
            } else {
                evaluator
                    .evaluate_config(&boundary, &file, budget)
                    .map_err(ProjectError::Config)?
            };
            let settings = config::validate(&file, &config).map_err(ProjectError::Config)?;
            (config, settings)
        }
    };
    Ok(Project {
        path,
        config_dir,
        config,
        settings,
        boundary,
    })
}

/// A config larger than this is refused (it is read whole).
const MAX_CONFIG_BYTES: u64 = 1 << 20;

/// A source file larger than this is not read (the evaluator refuses it too).
pub const MAX_SOURCE_BYTES: u64 = 16 << 20;

fn read_config_text(file: &Path) -> Result<String, ProjectError> {
    confine::read_text(file, MAX_CONFIG_BYTES).map_err(ProjectError::Config)
}

impl Project {
    /// The project's own directory: where its config is, else the directory named.
    pub fn dir(&self) -> &Path {
        self.config_dir.as_deref().unwrap_or_else(|| {
            if self.path.is_dir() {
                &self.path
            } else {
                self.path.parent().unwrap_or(&self.path)
            }
        })
    }

    /// The walls of this project: its boundary.
    pub fn walls(&self) -> Walls {
        Walls::resolved(self.boundary.clone())
    }

    /// The source files `path` names: a directory's discovered sources, or that one file.
    pub fn source_files(&self) -> Result<Vec<PathBuf>, ProjectError> {
        discover::source_files(&self.path, &self.walls())
            .map_err(|e| ProjectError::Config(e.to_string()))
    }

    /// `config.lexicons` if non-empty, else the lexicons the sources import, in first-use order.
    pub fn lexicon_names(&self) -> Result<Vec<String>, ProjectError> {
        if !self.settings.lexicons.is_empty() {
            return Ok(self.settings.lexicons.clone());
        }
        let mut found: Vec<String> = Vec::new();
        for file in self.source_files()? {
            let Ok(text) = confine::read_text(&file, MAX_SOURCE_BYTES) else {
                continue;
            };
            for name in imported_lexicons(&text) {
                if !found.contains(&name) {
                    found.push(name);
                }
            }
        }
        if found.is_empty() {
            Err(ProjectError::NoLexicon)
        } else {
            Ok(found)
        }
    }
}

/// Lexicon names in `from "@intentius/chant-lexicon-<name>"` clauses of imports and re-exports.
pub fn imported_lexicons(source: &str) -> Vec<String> {
    const PREFIX: &str = "@intentius/chant-lexicon-";
    let mut out = Vec::new();
    let mut from = 0;
    while let Some(rel) = source[from..].find(PREFIX) {
        let at = from + rel;
        from = at + PREFIX.len();
        let Some(quote) = source[..at]
            .chars()
            .last()
            .filter(|c| *c == '"' || *c == '\'')
        else {
            continue;
        };
        let before = source[..at - 1].trim_end();
        if !before.ends_with("from") {
            continue;
        }
        let name: String = source[from..]
            .chars()
            .take_while(|c| c.is_ascii_alphanumeric() || *c == '_' || *c == '-')
            .collect();
        let closes = source[from + name.len()..].starts_with(quote);
        if closes && name.starts_with(|c: char| c.is_ascii_lowercase()) {
            out.push(name);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::imported_lexicons;

    #[test]
    fn lexicon_imports_are_found() {
        let src = "import { Job } from \"@intentius/chant-lexicon-gitlab\";\nexport * from '@intentius/chant-lexicon-aws';\nconst s = \"@intentius/chant-lexicon-k8s\";\nimport x from \"@intentius/chant-lexicon-gitlab/sub\";\n";
        assert_eq!(imported_lexicons(src), ["gitlab", "aws"]);
    }
}
