//! A chant project: where its config is, which lexicons it uses, and where imports may reach.

use std::path::{Path, PathBuf};

use serde_json::Value as Json;
use thiserror::Error;

use crate::discover;
use crate::model::Evaluator;

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
    /// The path the user named (a directory).
    pub path: PathBuf,
    /// The directory holding `chant.config.ts`/`.json`, if any.
    pub config_dir: Option<PathBuf>,
    /// The config's default export (an object), `{}` without a config.
    pub config: Json,
    /// Relative imports may not leave this directory (the git root, else the project root).
    pub boundary: PathBuf,
}

/// The config file in `dir`: `chant.config.ts`, then `chant.config.json`.
pub fn config_file(dir: &Path) -> Option<PathBuf> {
    ["chant.config.ts", "chant.config.json"]
        .iter()
        .map(|n| dir.join(n))
        .find(|p| p.is_file())
}

/// Locates the project for `path`: the config at `path` or above it, and the import boundary.
pub fn locate(path: &Path, evaluator: &dyn Evaluator) -> Result<Project, ProjectError> {
    let path = std::path::absolute(path).unwrap_or_else(|_| path.to_path_buf());
    let dir = if path.is_dir() {
        path.clone()
    } else {
        path.parent().map(Path::to_path_buf).unwrap_or_default()
    };
    let git_root = dir
        .ancestors()
        .find(|d| d.join(".git").exists())
        .map(Path::to_path_buf);
    let config_dir = dir
        .ancestors()
        .take_while(|d| git_root.as_ref().is_none_or(|g| d.starts_with(g)))
        .find(|d| config_file(d).is_some())
        .map(Path::to_path_buf);
    let boundary = git_root
        .clone()
        .or_else(|| config_dir.clone())
        .unwrap_or_else(|| dir.clone());
    let config = match config_dir.as_deref().and_then(config_file) {
        None => Json::Object(Default::default()),
        Some(file) if file.extension().is_some_and(|e| e == "json") => {
            let text = std::fs::read_to_string(&file)
                .map_err(|e| ProjectError::Config(format!("{}: {e}", file.display())))?;
            serde_json::from_str(&text).map_err(|e| {
                ProjectError::Config(format!("{}: invalid JSON: {e}", file.display()))
            })?
        }
        Some(file) => evaluator
            .evaluate_config(&boundary, &file)
            .map_err(ProjectError::Config)?,
    };
    Ok(Project {
        path,
        config_dir,
        config,
        boundary,
    })
}

impl Project {
    /// The project's own directory: where its config is, else the path named.
    pub fn dir(&self) -> &Path {
        self.config_dir.as_deref().unwrap_or(&self.path)
    }

    /// `config.lexicons` if non-empty, else the lexicons the sources import, in first-use order.
    pub fn lexicon_names(&self) -> Result<Vec<String>, ProjectError> {
        let configured: Vec<String> = self
            .config
            .get("lexicons")
            .and_then(Json::as_array)
            .map(|a| {
                a.iter()
                    .filter_map(|l| l.as_str().map(str::to_owned))
                    .collect()
            })
            .unwrap_or_default();
        if !configured.is_empty() {
            return Ok(configured);
        }
        let mut found: Vec<String> = Vec::new();
        for file in discover::source_files(&self.path) {
            let Ok(text) = std::fs::read_to_string(&file) else {
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
