//! What every activity reads of its call, once: args (a value handed to a tool never starts
//! with `-`), a choice among allowed values, an environment variable as the step or chant
//! sets it, and running a tool (found on PATH, each word quoted for `sh`) or `gh`.

use chant_core::lexicon::{ActivityCall, ActivityError};
use serde_json::Value as Json;

pub(super) fn arg<'a>(call: &'a ActivityCall<'_>, key: &str) -> Option<&'a Json> {
    call.args.and_then(|a| a.get(key))
}

pub(super) fn text<'a>(call: &'a ActivityCall<'_>, key: &str) -> Option<&'a str> {
    arg(call, key).and_then(Json::as_str)
}

pub(super) fn needs(activity: &str, key: &str) -> ActivityError {
    ActivityError::new("InvalidArgs", format!("{activity} needs a {key} string"))
}

pub(super) fn required<'a>(
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
pub(super) fn not_a_flag<'a>(
    activity: &str,
    key: &str,
    value: &'a str,
) -> Result<&'a str, ActivityError> {
    if value.starts_with('-') {
        return Err(ActivityError::new(
            "InvalidArgs",
            format!("{activity} {key} may not start with -: \"{value}\""),
        ));
    }
    Ok(value)
}

/// An optional string arg, refused when it starts with `-` (see [`not_a_flag`]).
pub(super) fn optional<'a>(
    call: &'a ActivityCall<'_>,
    activity: &str,
    key: &str,
) -> Result<Option<&'a str>, ActivityError> {
    text(call, key)
        .map(|v| not_a_flag(activity, key, v))
        .transpose()
}

/// One of `allowed` (the first when absent), or `InvalidArgs` listing them.
pub(super) fn choice<'a>(
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
pub(super) fn env_var(call: &ActivityCall<'_>, name: &str) -> Option<String> {
    env_of(call)
        .into_iter()
        .find(|(k, _)| k == name)
        .map(|(_, v)| v)
        .or_else(|| std::env::var(name).ok())
        .filter(|v| !v.is_empty())
}

/// `gh issue create`: the new issue's URL.
pub(super) fn gh_issue(
    call: &ActivityCall<'_>,
    activity: &str,
    title: &str,
    body: &str,
) -> Result<String, ActivityError> {
    // `--flag=value`: a title or body that starts with `-` stays a value.
    let argv = vec![
        "gh".to_owned(),
        "issue".to_owned(),
        "create".to_owned(),
        format!("--title={title}"),
        format!("--body={body}"),
    ];
    run_tool(call, activity, &argv).map(|out| out.trim().to_owned())
}

pub(super) fn env_of(call: &ActivityCall<'_>) -> Vec<(String, String)> {
    chant_core::lexicon::step_env(call.args)
}

/// `'…'` for `sh`: any byte is safe inside, a `'` is closed, escaped and reopened.
pub(super) fn quote(word: &str) -> String {
    format!("'{}'", word.replace('\'', r"'\''"))
}

/// Whether `tool` is an executable file in a `PATH` directory.
pub(super) fn on_path(tool: &str) -> bool {
    use std::os::unix::fs::PermissionsExt;
    std::env::var_os("PATH").is_some_and(|path| {
        std::env::split_paths(&path).any(|d| {
            std::fs::metadata(d.join(tool))
                .is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
        })
    })
}

/// Runs `argv` (its first word the tool) through the host's shell, each word quoted.
pub(super) fn run_tool(
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
