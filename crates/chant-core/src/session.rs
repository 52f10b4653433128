//! `Chant`: the lexicons and the evaluator a process works with, and the operations every front
//! end (CLI, MCP) shares: locate, discover, build, explain.

use std::path::Path;

use crate::build::{self, BuildFailure, Built, Format};
use crate::discover::{self, Discovery};
use crate::lexicon::Lexicon;
use crate::model::Evaluator;
use crate::project::{self, Project, ProjectError};

pub struct Chant {
    pub lexicons: Vec<Box<dyn Lexicon>>,
    pub evaluator: Box<dyn Evaluator + Send + Sync>,
}

impl Chant {
    pub fn locate(&self, path: &Path) -> Result<Project, ProjectError> {
        project::locate(path, self.evaluator.as_ref())
    }

    /// The embedded lexicons a project uses (an unknown name is an error).
    pub fn lexicons_for(&self, project: &Project) -> Result<Vec<&dyn Lexicon>, ProjectError> {
        project
            .lexicon_names()?
            .into_iter()
            .map(|name| {
                self.lexicons
                    .iter()
                    .find(|l| l.name() == name)
                    .map(|l| l.as_ref())
                    .ok_or(ProjectError::UnknownLexicon(name))
            })
            .collect()
    }

    pub fn lexicon(&self, name: &str) -> Option<&dyn Lexicon> {
        self.lexicons
            .iter()
            .find(|l| l.name() == name)
            .map(|l| l.as_ref())
    }

    pub fn discover(&self, project: &Project) -> Discovery {
        discover::discover(&project.path, &project.boundary, self.evaluator.as_ref())
    }

    /// Discovers and builds a project (`only`: just that lexicon's part).
    pub fn build(
        &self,
        project: &Project,
        format: Format,
        only: Option<&str>,
    ) -> (Discovery, Result<Built, BuildFailure>) {
        let discovery = self.discover(project);
        let lexicons: Vec<&dyn Lexicon> = self.lexicons.iter().map(|l| l.as_ref()).collect();
        let result = build::build(&discovery, &lexicons, format, only);
        (discovery, result)
    }
}
