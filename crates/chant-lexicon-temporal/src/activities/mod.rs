//! The Op activities the temporal lexicon runs on one machine. chant's own work (a build, a
//! snapshot, a digest diff, a command) is asked of the run's host; activities that drive a
//! tool fail as `ToolMissing` when it is not on PATH; the ones a lexicon of another product
//! provides are [`HINTS`]. One module per concern:
//! - here: `chantBuild`, `chantTeardown`, `policyGate` and the shared argument helpers;
//! - `http`: `httpCheck` and the GET the web-API activities share;
//! - `tools`: `kubectlApply`, `helmInstall`, `waitForReady`, `k3dUp`/`k3dDown`, the Floci
//!   emulators, `azGroupEnsure`/`azGroupDelete`;
//! - `lifecycle`: `lifecycleSnapshot`, `lifecycleDiff`;
//! - `apply`: `nativeApply`, `compensateApply`;
//! - `reconcile`: `reconcilePr`;
//! - `audit`: `workflowSupplyChainAudit`, `pipelineSupplyChainAudit`;
//! - `upgrade`: `lexiconUpgrade`.

mod apply;
mod audit;
mod http;
mod lifecycle;
mod reconcile;
mod tools;
mod upgrade;

use std::path::{Path, PathBuf};
use std::sync::atomic::Ordering;

use chant_core::lexicon::{Activity, ActivityCall, ActivityError, ActivityHint, BuildRequest};
use serde_json::Value as Json;

/// Every activity this lexicon offers.
pub fn all() -> Vec<&'static dyn Activity> {
    let mut all: Vec<&'static dyn Activity> = vec![
        &ChantBuild,
        &ChantTeardown,
        &http::HttpCheck,
        &lifecycle::LifecycleSnapshot,
        &lifecycle::LifecycleDiff,
        &PolicyGate,
        &apply::NativeApply,
        &apply::CompensateApply,
        &reconcile::ReconcilePr,
        &audit::WorkflowAudit,
        &audit::PipelineAudit,
        &upgrade::LexiconUpgrade,
    ];
    all.extend(tools::TOOLS.iter().map(|t| t as &dyn Activity));
    all
}

fn arg<'a>(call: &'a ActivityCall<'_>, key: &str) -> Option<&'a Json> {
    call.args.and_then(|a| a.get(key))
}

fn text<'a>(call: &'a ActivityCall<'_>, key: &str) -> Option<&'a str> {
    arg(call, key).and_then(Json::as_str)
}

fn needs(activity: &str, key: &str) -> ActivityError {
    ActivityError::new("InvalidArgs", format!("{activity} needs a {key} string"))
}

fn required<'a>(
    call: &'a ActivityCall<'_>,
    activity: &str,
    key: &str,
) -> Result<&'a str, ActivityError> {
    let value = text(call, key)
        .filter(|s| !s.is_empty())
        .ok_or_else(|| needs(activity, key))?;
    not_a_flag(activity, key, value)
}

/// `value` unless it starts with `-`: every value an activity hands a tool is an operand or
/// an option's value, never an option of its own (`--kubeconfig=…`).
fn not_a_flag<'a>(activity: &str, key: &str, value: &'a str) -> Result<&'a str, ActivityError> {
    if value.starts_with('-') {
        return Err(ActivityError::new(
            "InvalidArgs",
            format!("{activity} {key} may not start with -: \"{value}\""),
        ));
    }
    Ok(value)
}

/// An optional string arg, refused when it starts with `-` (see [`not_a_flag`]).
fn optional<'a>(
    call: &'a ActivityCall<'_>,
    activity: &str,
    key: &str,
) -> Result<Option<&'a str>, ActivityError> {
    text(call, key)
        .map(|v| not_a_flag(activity, key, v))
        .transpose()
}

/// One of `allowed` (the first when absent), or `InvalidArgs` listing them.
fn choice<'a>(
    call: &'a ActivityCall<'_>,
    activity: &str,
    key: &str,
    allowed: &[&'a str],
) -> Result<&'a str, ActivityError> {
    match arg(call, key) {
        None | Some(Json::Null) => Ok(allowed[0]),
        Some(Json::String(v)) if allowed.contains(&v.as_str()) => Ok(allowed
            .iter()
            .find(|a| **a == v)
            .copied()
            .unwrap_or(allowed[0])),
        Some(v) => Err(ActivityError::new(
            "InvalidArgs",
            format!(
                "{activity} {key} must be one of {} (got {v})",
                allowed
                    .iter()
                    .map(|a| format!("\"{a}\""))
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
        )),
    }
}

/// An environment variable as the step sets it (`args.env`), else as chant's own process has
/// it.
fn env_var(call: &ActivityCall<'_>, name: &str) -> Option<String> {
    env_of(call)
        .into_iter()
        .find(|(k, _)| k == name)
        .map(|(_, v)| v)
        .or_else(|| std::env::var(name).ok())
        .filter(|v| !v.is_empty())
}

/// `gh issue create`: the new issue's URL.
fn gh_issue(
    call: &ActivityCall<'_>,
    activity: &str,
    title: &str,
    body: &str,
) -> Result<String, ActivityError> {
    let argv: Vec<String> = ["gh", "issue", "create", "--title", title, "--body", body]
        .iter()
        .map(|s| (*s).to_owned())
        .collect();
    run_tool(call, activity, &argv).map(|out| out.trim().to_owned())
}

fn env_of(call: &ActivityCall<'_>) -> Vec<(String, String)> {
    chant_core::lexicon::step_env(call.args)
}

/// `'…'` for `sh`: any byte is safe inside, a `'` is closed, escaped and reopened.
fn quote(word: &str) -> String {
    format!("'{}'", word.replace('\'', r"'\''"))
}

/// Whether `tool` is an executable file in a `PATH` directory.
fn on_path(tool: &str) -> bool {
    use std::os::unix::fs::PermissionsExt;
    std::env::var_os("PATH").is_some_and(|path| {
        std::env::split_paths(&path).any(|d| {
            std::fs::metadata(d.join(tool))
                .is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
        })
    })
}

/// Runs `argv` (its first word the tool) through the host's shell, each word quoted.
fn run_tool(
    call: &ActivityCall<'_>,
    activity: &str,
    argv: &[String],
) -> Result<String, ActivityError> {
    let tool = &argv[0];
    if !on_path(tool) {
        return Err(ActivityError::new(
            "ToolMissing",
            format!("activity \"{activity}\" needs {tool} on PATH"),
        ));
    }
    let cmd: Vec<String> = argv.iter().map(|w| quote(w)).collect();
    call.host.shell(
        &cmd.join(" "),
        None,
        &env_of(call),
        call.timeout_ms,
        call.cancel,
    )
}

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

/// The builders' activities that need a cloud API, and the lexicon that provides each.
pub const HINTS: [ActivityHint; 8] = [
    ActivityHint {
        activity: "waitForStack",
        provider: "aws",
    },
    ActivityHint {
        activity: "awsApply",
        provider: "aws",
    },
    ActivityHint {
        activity: "awsDelete",
        provider: "aws",
    },
    ActivityHint {
        activity: "azApply",
        provider: "azure",
    },
    ActivityHint {
        activity: "azDelete",
        provider: "azure",
    },
    ActivityHint {
        activity: "gcpApply",
        provider: "gcp",
    },
    ActivityHint {
        activity: "gcpDelete",
        provider: "gcp",
    },
    ActivityHint {
        activity: "gitlabPipeline",
        provider: "gitlab",
    },
];

#[cfg(test)]
mod tests {
    use super::*;

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
