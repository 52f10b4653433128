//! `chantBuild`, `chantTeardown` and `policyGate`: a project's package.json scripts (their
//! `chant build` parts in process, the rest in `sh`) and chant's own build.

use std::path::{Path, PathBuf};
use std::sync::atomic::Ordering;

use chant_core::lexicon::{Activity, ActivityCall, ActivityError, BuildRequest};
use serde_json::Value as Json;

use super::call::{env_of, required, text};

/// The package.json script `name` of the project at `dir` (a directory the host resolved
/// inside the repository), if it has one: a regular file, at most 1 MiB.
fn script(dir: &Path, name: &str) -> Result<Option<String>, ActivityError> {
    let bytes = match fsread::read_inside(dir, Path::new("package.json"), 1 << 20) {
        Ok(b) => b,
        Err(e) if e.is_missing() => return Ok(None),
        Err(e) => {
            return Err(ActivityError::new(
                "InvalidArgs",
                format!("cannot read {}/package.json: {e}", dir.display()),
            ));
        }
    };
    let pkg: Json = serde_json::from_slice(&bytes).map_err(|e| {
        ActivityError::new(
            "InvalidArgs",
            format!("{}/package.json is not valid JSON: {e}", dir.display()),
        )
    })?;
    Ok(pkg["scripts"][name].as_str().map(str::to_owned))
}

/// Whether `sh` would read `body` as more than `&&`-joined simple commands (comments, quotes,
/// escapes, other lists, several lines): then the whole script goes to `sh` as written.
fn needs_whole_shell(body: &str) -> bool {
    body.contains(['#', '\'', '"', '\\', '\n', ';', '`', '(']) || body.contains("||")
}

/// A `chant build` command line, as a package.json script writes one, when that is all a
/// segment is: `[npx|bunx] chant build [dir] [--lexicon L] [-o|--output FILE] [--format F]`.
fn chant_build_words(segment: &str) -> Option<(PathBuf, Option<String>, Option<PathBuf>, bool)> {
    if segment.contains(['|', '>', '<', ';', '$', '`', '"', '\'', '(', '&', '*', '\\']) {
        return None;
    }
    let mut words = segment.split_whitespace().peekable();
    if matches!(words.peek(), Some(&("npx" | "bunx"))) {
        words.next();
    }
    if words.next() != Some("chant") || words.next() != Some("build") {
        return None;
    }
    let (mut dir, mut lexicon, mut output, mut yaml) = (None, None, None, false);
    while let Some(w) = words.next() {
        match w {
            "--lexicon" | "-d" => lexicon = Some(words.next()?.to_owned()),
            "-o" | "--output" => output = Some(PathBuf::from(words.next()?)),
            "--format" => yaml = words.next()? == "yaml",
            "--no-fold" => {}
            w if w.starts_with('-') => return None,
            w if dir.is_none() => dir = Some(PathBuf::from(w)),
            _ => return None,
        }
    }
    Some((
        dir.unwrap_or_else(|| PathBuf::from(".")),
        lexicon,
        output,
        yaml,
    ))
}

/// Runs package.json script `body` of the project at `dir` (relative to the run's directory):
/// each `&&` segment that is a `chant build` is built in process, any other runs in `sh`.
fn run_script(call: &ActivityCall<'_>, dir: &Path, body: &str) -> Result<Json, ActivityError> {
    if needs_whole_shell(body) {
        let out = call.host.shell(
            body,
            Some(&dir.to_string_lossy()),
            &env_of(call),
            call.timeout_ms,
            call.cancel,
        )?;
        return Ok(Json::String(out));
    }
    let mut results = Vec::new();
    for segment in body.split("&&").map(str::trim).filter(|s| !s.is_empty()) {
        if call.cancel.load(Ordering::SeqCst) {
            return Err(ActivityError::new("Cancelled", "cancelled"));
        }
        match chant_build_words(segment) {
            Some((sub, lexicon, output, yaml)) => {
                let project = dir.join(&sub);
                // `-o` is relative to where the script runs, which is `dir`.
                let output = output.map(|o| dir.join(o));
                let req = BuildRequest {
                    dir: &project,
                    lexicon: lexicon.as_deref(),
                    output: output.as_deref(),
                    yaml,
                };
                results.push(call.host.build(&req, call.cancel)?);
            }
            None => {
                let out = call.host.shell(
                    segment,
                    Some(&dir.to_string_lossy()),
                    &env_of(call),
                    call.timeout_ms,
                    call.cancel,
                )?;
                results.push(Json::String(out));
            }
        }
    }
    Ok(if results.len() == 1 {
        results.remove(0)
    } else {
        Json::Array(results)
    })
}

/// `chantBuild {path, script?, env?}`: the project's package.json script (`build` unless
/// `script` names another), its `chant build` commands run in process; a project without a
/// `build` script is built in process and nothing is written.
pub struct ChantBuild;

impl Activity for ChantBuild {
    fn name(&self) -> &'static str {
        "chantBuild"
    }

    fn run(&self, call: &ActivityCall<'_>) -> Result<Json, ActivityError> {
        let path = required(call, "chantBuild", "path")?;
        let named = text(call, "script");
        let dir = call.host.project_dir(Path::new(path))?;
        match script(&dir, named.unwrap_or("build"))? {
            Some(body) => run_script(call, &dir, &body),
            None if named.is_some() => Err(ActivityError::new(
                "InvalidArgs",
                format!(
                    "{path}/package.json has no \"{}\" script",
                    named.unwrap_or_default()
                ),
            )),
            None => call.host.build(
                &BuildRequest {
                    dir: &dir,
                    lexicon: None,
                    output: None,
                    yaml: false,
                },
                call.cancel,
            ),
        }
    }
}

/// `chantTeardown {path}`: the project's `teardown` script (chant has no teardown of its own).
pub struct ChantTeardown;

impl Activity for ChantTeardown {
    fn name(&self) -> &'static str {
        "chantTeardown"
    }

    fn run(&self, call: &ActivityCall<'_>) -> Result<Json, ActivityError> {
        let path = required(call, "chantTeardown", "path")?;
        let dir = call.host.project_dir(Path::new(path))?;
        match script(&dir, "teardown")? {
            Some(body) => run_script(call, &dir, &body),
            None => Err(ActivityError::new(
                "InvalidArgs",
                format!(
                    "{path}/package.json has no \"teardown\" script: chant tears nothing down by itself, so say how in that script"
                ),
            )),
        }
    }
}

/// `policyGate {path, env?}`: the project at `path` builds and none of its checks is an error.
pub struct PolicyGate;

impl Activity for PolicyGate {
    fn name(&self) -> &'static str {
        "policyGate"
    }

    fn run(&self, call: &ActivityCall<'_>) -> Result<Json, ActivityError> {
        let path = text(call, "path").unwrap_or(".");
        call.host
            .build(
                &BuildRequest {
                    dir: Path::new(path),
                    lexicon: None,
                    output: None,
                    yaml: false,
                },
                call.cancel,
            )
            .map_err(|e| match e.name.as_str() {
                "Error" => ActivityError::new("PolicyViolation", e.message),
                _ => e,
            })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::activities::call::quote;

    #[test]
    fn chant_build_scripts_are_recognised_only_when_plain() {
        assert_eq!(
            chant_build_words("chant build src --lexicon k8s -o dist/k8s.yaml"),
            Some((
                PathBuf::from("src"),
                Some("k8s".into()),
                Some(PathBuf::from("dist/k8s.yaml")),
                false
            ))
        );
        assert_eq!(
            chant_build_words("npx chant build --format yaml"),
            Some((PathBuf::from("."), None, None, true))
        );
        for other in [
            "chant lint src",
            "chant build src > out.yaml",
            "chant build $DIR",
            "npm run x",
            "chant build a b",
            "chant build --watch",
        ] {
            assert_eq!(chant_build_words(other), None, "{other}");
        }
        assert_eq!(quote("it's"), r"'it'\''s'");
    }
}
