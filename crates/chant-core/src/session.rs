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
        self.build_nested(project, format, only, budget, &mut Vec::new())
    }

    /// [`Chant::build`], with the child projects (nested stacks) built and their outputs added
    /// as files; `stack` holds the child directories being built, to refuse a cycle.
    fn build_nested(
        &self,
        project: &Project,
        format: Format,
        only: Option<&str>,
        budget: &Budget,
        stack: &mut Vec<(std::path::PathBuf, String)>,
    ) -> (Discovery, Result<Built, BuildFailure>) {
        let discovery = self.discover(project, budget);
        let mut result = build::build(&discovery, &self.lexicons, format, only);
        if let Ok(built) = &mut result
            && let Err(e) = self.build_children(project, &discovery, only, budget, stack, built)
        {
            result = Err(e);
        }
        (discovery, result)
    }

    /// Builds each child project the entities declare and adds its output (and its own files)
    /// to `built`.
    fn build_children(
        &self,
        project: &Project,
        d: &Discovery,
        only: Option<&str>,
        budget: &Budget,
        stack: &mut Vec<(std::path::PathBuf, String)>,
        built: &mut Built,
    ) -> Result<(), BuildFailure> {
        /// How deep nested stacks may go.
        const MAX_DEPTH: usize = 8;
        let fail = |file: &Path, message: String| BuildFailure {
            errors: vec![(file.display().to_string(), message)],
        };
        for (i, entity) in d.entities.iter().enumerate() {
            let decl = d.decl(i);
            let home = decl.home_lexicon();
            if only.is_some_and(|o| o != home) {
                continue;
            }
            let Some(lexicon) = self.lexicons.get(home) else {
                continue;
            };
            let Some((path, file)) = lexicon.child_project(decl) else {
                continue;
            };
            let from = entity.file.parent().unwrap_or(project.dir());
            let dir = project
                .walls()
                .resolve_from(from, "the nested stack's directory", &path)
                .map_err(|e| fail(&entity.file, format!("nested stack {}: {e}", entity.name)))?;
            if !dir.is_dir() {
                return Err(fail(
                    &entity.file,
                    format!(
                        "nested stack {}: {} is not a directory (a child project: its own chant.config.ts and sources)",
                        entity.name,
                        dir.display()
                    ),
                ));
            }
            if let Some(at) = stack.iter().position(|(p, _)| *p == dir) {
                let mut names: Vec<&str> = stack[at..].iter().map(|(_, n)| n.as_str()).collect();
                names.push(&entity.name);
                return Err(fail(
                    &entity.file,
                    format!("Circular nested stack: {}", names.join(" → ")),
                ));
            }
            if stack.len() >= MAX_DEPTH {
                return Err(fail(
                    &entity.file,
                    format!(
                        "nested stack {}: more than {MAX_DEPTH} levels of nested stacks",
                        entity.name
                    ),
                ));
            }
            let child = self
                .locate_within(&dir, Some(project.walls().root()), budget)
                .map_err(|e| fail(&entity.file, format!("nested stack {}: {e}", entity.name)))?;
            if child.config_dir.as_deref() != Some(dir.as_path()) {
                return Err(fail(
                    &entity.file,
                    format!(
                        "nested stack {}: {} has no chant.config.ts of its own — a child project is a project (its own config and sources), or its resources would be built into the parent too",
                        entity.name,
                        dir.display()
                    ),
                ));
            }
            if let Some(inside) = d.source_files.iter().find(|f| f.starts_with(&dir)) {
                return Err(fail(
                    &entity.file,
                    format!(
                        "nested stack {}: {} is inside the sources being built ({} is one), so its resources would be built into this template too — keep the child project beside the parent's sources (e.g. ../network)",
                        entity.name,
                        dir.display(),
                        inside.display()
                    ),
                ));
            }
            stack.push((dir.clone(), entity.name.clone()));
            let (_, result) = self.build_nested(&child, Format::Json, Some(home), budget, stack);
            stack.pop();
            let child_built = result.map_err(|f| BuildFailure {
                errors: f
                    .errors
                    .into_iter()
                    .map(|(file, m)| (file, format!("nested stack {}: {m}", entity.name)))
                    .collect(),
            })?;
            let text = lexicon
                .child_template(d, i, &child_built.output)
                .map_err(|m| fail(&entity.file, format!("nested stack {}: {m}", entity.name)))?;
            let names = std::iter::once(&file).chain(child_built.files.iter().map(|(n, _)| n));
            for name in names {
                if built.files.iter().any(|(f, _)| f == name) {
                    return Err(fail(
                        &entity.file,
                        format!(
                            "nested stack {}: another nested stack of this build is also written as {name} — give them different names",
                            entity.name
                        ),
                    ));
                }
            }
            built.files.push((file, text));
            built.files.extend(child_built.files);
            built
                .findings
                .extend(child_built.findings.into_iter().map(|(l, mut f)| {
                    f.entity = format!("{}/{}", entity.name, f.entity);
                    (l, f)
                }));
        }
        Ok(())
    }
}
