//! The [`ActivityHost`] a local run gives its activities: chant's own build and lifecycle
//! snapshot, in process, for projects inside the repository the Op runs in.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use chant_core::build::Format;
use chant_core::lexicon::{ActivityError, ActivityHost, BuildRequest};
use chant_core::model::Budget;
use chant_core::session::Chant;
use serde_json::{Value as Json, json};

/// Runs `f` with a budget that `cancel` stops (checked every 20 ms by a watcher) and that
/// ends at `deadline`, so an evaluation that never returns holds the step no longer.
fn under_cancel<T>(
    cancel: &AtomicBool,
    deadline: Option<std::time::Instant>,
    f: impl FnOnce(&Budget) -> T,
) -> T {
    let flag = Arc::new(AtomicBool::new(cancel.load(Ordering::SeqCst)));
    let stop = {
        let flag = Arc::clone(&flag);
        move || flag.load(Ordering::SeqCst)
    };
    let budget = Budget {
        time: deadline.map(|d| d.saturating_duration_since(std::time::Instant::now())),
        stop: Some(Arc::new(stop)),
    };
    std::thread::scope(|s| {
        let watch = s.spawn(|| {
            while !flag.load(Ordering::SeqCst) {
                if cancel.load(Ordering::SeqCst)
                    || deadline.is_some_and(|d| std::time::Instant::now() >= d)
                {
                    flag.store(true, Ordering::SeqCst);
                }
                std::thread::park_timeout(std::time::Duration::from_millis(20));
            }
        });
        let out = f(&budget);
        // Ends the watcher: the work is over either way.
        flag.store(true, Ordering::SeqCst);
        watch.thread().unpark();
        let _ = watch.join();
        out
    })
}

/// Builds and observes with `chant`, for projects inside `repo_root`.
pub struct LocalHost<'a> {
    pub chant: &'a Chant,
    /// The repository the Op runs in: no build reads a project outside it.
    pub repo_root: PathBuf,
    /// The project directory a run's relative paths start from.
    pub cwd: PathBuf,
}

impl LocalHost<'_> {
    fn inside(&self, dir: &Path, what: &str) -> Result<PathBuf, ActivityError> {
        let invalid = |e: String| ActivityError::new("InvalidArgs", e);
        let walls =
            chant_core::confine::Walls::new(&self.repo_root).map_err(|e| invalid(e.to_string()))?;
        walls
            .resolve_from(&self.cwd, what, &dir.to_string_lossy())
            .map_err(|e| invalid(e.to_string()))
    }
}

impl LocalHost<'_> {
    fn build_in(
        &self,
        dir: &Path,
        req: &BuildRequest<'_>,
        output: Option<&Path>,
        cancel: &AtomicBool,
    ) -> Result<Json, String> {
        let lexicon = req.lexicon;
        let format = if req.yaml { Format::Yaml } else { Format::Json };
        let built = under_cancel(cancel, None, |budget| {
            let project = self
                .chant
                .locate_within(dir, Some(&self.repo_root), budget)
                .map_err(|e| e.to_string())?;
            if let Some(l) = lexicon
                && self.chant.lexicon(l).is_none()
            {
                return Err(
                    chant_core::project::ProjectError::UnknownLexicon(l.to_owned()).to_string(),
                );
            }
            let (_, built) = self.chant.build(&project, format, lexicon, budget);
            Ok(built)
        })?;
        let built = built.map_err(|f| {
            let first: Vec<String> = f
                .errors
                .iter()
                .take(5)
                .map(|(file, m)| {
                    if file.is_empty() {
                        m.clone()
                    } else {
                        format!("{file}: {m}")
                    }
                })
                .collect();
            format!(
                "chant build of {} failed: {}",
                dir.display(),
                first.join("; ")
            )
        })?;
        if let Some((lex, f)) = built.findings.iter().find(|(_, f)| f.error) {
            return Err(format!(
                "chant build of {} failed: [{}] {} ({lex})",
                dir.display(),
                f.entity,
                f.message
            ));
        }
        let written = match output {
            Some(file) => {
                chant_core::build::write_output(&built, file)?;
                Json::String(file.display().to_string())
            }
            None => Json::Null,
        };
        let warnings: Vec<String> = built
            .warnings
            .iter()
            .cloned()
            .chain(
                built
                    .findings
                    .iter()
                    .map(|(lex, f)| format!("[{}] {} ({lex})", f.entity, f.message)),
            )
            .collect();
        Ok(json!({"resourceCount": built.resource_count, "output": written, "warnings": warnings}))
    }
}

impl ActivityHost for LocalHost<'_> {
    fn build(&self, req: &BuildRequest<'_>, cancel: &AtomicBool) -> Result<Json, ActivityError> {
        let dir = self.inside(req.dir, "chantBuild path")?;
        if !dir.exists() {
            return Err(ActivityError::new(
                "InvalidArgs",
                format!("{}: no such file or directory", dir.display()),
            ));
        }
        let output = match req.output {
            Some(o) => Some(self.inside(o, "chantBuild output")?),
            None => None,
        };
        self.build_in(&dir, req, output.as_deref(), cancel)
            .map_err(|e| ActivityError::new("Error", e))
    }

    fn shell(
        &self,
        cmd: &str,
        dir: Option<&str>,
        env: &[(String, String)],
        timeout_ms: u64,
        cancel: &AtomicBool,
    ) -> Result<String, ActivityError> {
        let dir = dir.map_or_else(|| self.cwd.clone(), |d| self.cwd.join(d));
        crate::runtime::run_shell(cmd, &dir, env, timeout_ms, cancel)
    }

    fn project_path(&self, path: &Path) -> Result<PathBuf, ActivityError> {
        let found = self.inside(path, "path")?;
        if !found.exists() {
            return Err(ActivityError::new(
                "InvalidArgs",
                format!("{}: no such file or directory", found.display()),
            ));
        }
        Ok(found)
    }

    fn project_dir(&self, path: &Path) -> Result<PathBuf, ActivityError> {
        let dir = self.inside(path, "project path")?;
        if !dir.is_dir() {
            return Err(ActivityError::new(
                "InvalidArgs",
                format!("{}: no such directory", dir.display()),
            ));
        }
        Ok(dir)
    }

    fn lifecycle_snapshot(&self, environment: &str) -> Result<Json, String> {
        crate::check_env(environment)?;
        let budget = Budget::default();
        let project = self
            .chant
            .locate_within(&self.cwd, Some(&self.repo_root), &budget)
            .map_err(|e| e.to_string())?;
        let lexicons = self
            .chant
            .lexicons_for(&project)
            .map_err(|e| e.to_string())?;
        let observers: Vec<_> = lexicons
            .iter()
            .filter_map(|l| Some((l.name(), l.observer()?)))
            .collect();
        if observers.is_empty() {
            return Ok(
                json!({"environment": environment, "lexicons": {}, "note": "No plugins implement describeResources"}),
            );
        }
        let d = self.chant.discover(&project, &budget);
        let mut out = serde_json::Map::new();
        for (name, observer) in observers {
            let entities: Vec<usize> = (0..d.entities.len())
                .filter(|&i| d.decl(i).home_lexicon() == name)
                .collect();
            out.insert(
                name.to_owned(),
                observer.describe_resources(environment, &d, &entities)?,
            );
        }
        Ok(json!({"environment": environment, "lexicons": out}))
    }

    fn lifecycle_diff(
        &self,
        environment: &str,
        cancel: &AtomicBool,
        timeout_ms: u64,
    ) -> Result<Json, String> {
        crate::check_env(environment)?;
        let deadline = std::time::Instant::now() + std::time::Duration::from_millis(timeout_ms);
        under_cancel(cancel, Some(deadline), |budget| {
            let project = self
                .chant
                .locate_within(&self.cwd, Some(&self.repo_root), budget)
                .map_err(|e| e.to_string())?;
            let (d, built) = self.chant.build(&project, Format::Json, None, budget);
            if cancel.load(Ordering::SeqCst) {
                return Err("cancelled".to_owned());
            }
            if std::time::Instant::now() >= deadline {
                return Err(format!(
                    "the build did not finish within the step's {timeout_ms} ms"
                ));
            }
            if let Err(f) = built {
                let first: Vec<&str> = f.errors.iter().take(3).map(|(_, m)| m.as_str()).collect();
                return Err(format!(
                    "Build failed: {} (the diff compares the project's build)",
                    first.join("; ")
                ));
            }
            let ledger = crate::Repo::open(&self.cwd).ok().map(|r| r.ledger);
            Ok(crate::lifecycle::diff_all(
                &d,
                ledger.as_ref(),
                environment,
                None,
            ))
        })
    }
}

/// A host for tests of the runtime alone: it has no chant to build with.
#[cfg(test)]
pub(crate) struct NoHost;

#[cfg(test)]
impl ActivityHost for NoHost {
    fn build(&self, _: &BuildRequest<'_>, _: &AtomicBool) -> Result<Json, ActivityError> {
        Err(ActivityError::new("Error", "no chant here"))
    }
    fn shell(
        &self,
        _: &str,
        _: Option<&str>,
        _: &[(String, String)],
        _: u64,
        _: &AtomicBool,
    ) -> Result<String, ActivityError> {
        Err(ActivityError::new("Error", "no shell here"))
    }
    fn lifecycle_snapshot(&self, _: &str) -> Result<Json, String> {
        Err("no chant here".into())
    }
    fn lifecycle_diff(&self, _: &str, _: &AtomicBool, _: u64) -> Result<Json, String> {
        Err("no chant here".into())
    }
    fn project_path(&self, _: &Path) -> Result<PathBuf, ActivityError> {
        Err(ActivityError::new("InvalidArgs", "no repository here"))
    }
    fn project_dir(&self, _: &Path) -> Result<PathBuf, ActivityError> {
        Err(ActivityError::new("InvalidArgs", "no repository here"))
    }
}
