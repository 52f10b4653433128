//! `Chant`: the lexicons and the evaluator a process works with, and the operations every front
//! end (CLI, MCP) shares: locate, discover, build, explain.

use std::path::Path;
use std::sync::Arc;

use crate::build::{self, BuildFailure, Built, Format};
use crate::discover::{self, Discovery};
use crate::lexicon::{Lexicon, Registry};
use crate::model::{Budget, Evaluator};
use crate::project::{self, Project, ProjectError};

pub struct Chant {
    /// Shared with the evaluator, which asks it for runtime modules.
    pub lexicons: Arc<Registry>,
    pub evaluator: Box<dyn Evaluator + Send + Sync>,
}

impl Chant {
    /// Locates the project `path` belongs to and validates its config: its fields, that every
    /// lexicon it names is embedded here, and its lint section as the lint would read it.
    pub fn locate(&self, path: &Path, budget: &Budget) -> Result<Project, ProjectError> {
        self.locate_within(path, None, budget)
    }

    /// [`Chant::locate`] under a `ceiling`: no config above it, no boundary wider than it.
    pub fn locate_within(
        &self,
        path: &Path,
        ceiling: Option<&Path>,
        budget: &Budget,
    ) -> Result<Project, ProjectError> {
        let project = project::locate(path, self.evaluator.as_ref(), budget, ceiling)?;
        for name in &project.settings.lexicons {
            if self.lexicon(name).is_none() {
                return Err(ProjectError::UnknownLexicon(name.clone()));
            }
        }
        crate::lint::check_config(&self.lexicons, &project).map_err(ProjectError::Config)?;
        Ok(project)
    }

    /// The budget of an evaluation of `project`: the caller's time, else the config's.
    pub fn budget_for(&self, project: &Project, budget: &Budget) -> Budget {
        budget.or_time(project.settings.timeout)
    }

    /// The embedded lexicons a project uses (an unknown name is an error).
    pub fn lexicons_for(&self, project: &Project) -> Result<Vec<&dyn Lexicon>, ProjectError> {
        project
            .lexicon_names()?
            .into_iter()
            .map(|name| {
                self.lexicons
                    .get(&name)
                    .ok_or(ProjectError::UnknownLexicon(name))
            })
            .collect()
    }

    pub fn lexicon(&self, name: &str) -> Option<&dyn Lexicon> {
        self.lexicons.get(name)
    }

    pub fn discover(&self, project: &Project, budget: &Budget) -> Discovery {
        discover::discover(
            &project.path,
            &project.walls(),
            self.evaluator.as_ref(),
            &self.budget_for(project, budget),
        )
    }

    /// Discovers and builds a project (`only`: just that lexicon's part).
    pub fn build(
        &self,
        project: &Project,
        format: Format,
        only: Option<&str>,
        budget: &Budget,
    ) -> (Discovery, Result<Built, BuildFailure>) {
        let discovery = self.discover(project, budget);
        let result = build::build(&discovery, &self.lexicons, format, only);
        (discovery, result)
    }
}
