//! `nativeApply` and `compensateApply` (ApplyOp's Apply and Rollback): declared source pushed
//! through the target's own mechanism, and its rollback. chant keeps no state file; the
//! platform stays the authority.
//!
//! | target | apply | delete modes | rollback |
//! |---|---|---|---|
//! | `cloudformation` | `aws cloudformation deploy` (the stack is the ownership boundary) | all | `aws cloudformation rollback-stack`, then `wait stack-rollback-complete` |
//! | `kubectl` | `kubectl apply --server-side --field-manager=chant -f` | `never` only | `command` only |
//! | `kustomize` | the same with `-k` | `never` only | `command` only |
//! | `arm` | the azure lexicon's per-resource apply | — | `command` only |
//!
//! A prune of Kubernetes objects chant no longer declares needs the k8s lexicon's
//! marker-scoped sweep (the reference moved it there); `kubectl --prune` by label deletes
//! what chant never owned, so a `deleteMode` other than `never` on those targets is refused,
//! not approximated.

use std::path::Path;

use chant_core::lexicon::{Activity, ActivityCall, ActivityError};
use serde_json::{Value as Json, json};

use super::call::{arg, choice, env_var, not_a_flag, required, run_tool};

const TARGETS: [&str; 4] = ["kubectl", "cloudformation", "kustomize", "arm"];
const DELETE_MODES: [&str; 3] = ["never", "owned-only", "gated"];
/// The field manager a server-side apply claims ownership as.
const FIELD_MANAGER: &str = "chant";

fn words(items: &[&str]) -> Vec<String> {
    items.iter().map(|s| (*s).to_owned()).collect()
}

fn azure_missing(activity: &str) -> ActivityError {
    ActivityError::new(
        "ToolMissing",
        format!(
            "activity \"{activity}\" target \"arm\" needs the azure lexicon (its per-resource ARM apply, which prunes only what carries chant's ownership tag); this chant does not have it"
        ),
    )
}

/// `aws` with `--endpoint-url` when `AWS_ENDPOINT_URL` is set (a local emulator such as
/// Floci), whatever the CLI's version reads by itself.
fn aws(call: &ActivityCall<'_>, rest: &[&str]) -> Vec<String> {
    let mut argv = words(&["aws"]);
    if let Some(endpoint) = env_var(call, "AWS_ENDPOINT_URL") {
        argv.extend(["--endpoint-url".to_owned(), endpoint]);
    }
    argv.extend(words(rest));
    argv
}

/// `nativeApply {target, env, output?, deleteMode?, forceConflicts?}`.
pub struct NativeApply;

impl Activity for NativeApply {
    fn name(&self) -> &'static str {
        "nativeApply"
    }

    fn run(&self, call: &ActivityCall<'_>) -> Result<Json, ActivityError> {
        const NAME: &str = "nativeApply";
        let target = choice(call, NAME, "target", &TARGETS)?;
        let env = required(call, NAME, "env")?;
        let delete_mode = choice(call, NAME, "deleteMode", &DELETE_MODES)?;
        let output = match arg(call, "output") {
            None | Some(Json::Null) => match target {
                "kubectl" | "kustomize" => "dist",
                _ => "template.json",
            },
            Some(_) => required(call, NAME, "output")?,
        };
        let force = match arg(call, "forceConflicts") {
            None | Some(Json::Null) => false,
            Some(Json::Bool(b)) => *b,
            Some(v) => {
                return Err(ActivityError::new(
                    "InvalidArgs",
                    format!("nativeApply forceConflicts must be true or false (got {v})"),
                ));
            }
        };
        if target == "arm" {
            return Err(azure_missing(NAME));
        }
        // What the tool reads is inside the repository (links resolved), handed over as the
        // absolute path it resolved to: never a file elsewhere, nor a name a tool reads as a URL.
        let resolved = call.host.project_path(Path::new(output)).map_err(|e| {
            if e.message.ends_with("no such file or directory") {
                ActivityError::new(
                    "InvalidArgs",
                    format!(
                        "nativeApply output {output} does not exist (in {}): build it first — ApplyOp's Build step writes it when the project's build script does",
                        call.cwd.display()
                    ),
                )
            } else {
                ActivityError::new("InvalidArgs", format!("nativeApply output {output}: {}", e.message))
            }
        })?;
        let resolved = resolved.to_string_lossy().into_owned();
        let output = resolved.as_str();
        match target {
            "cloudformation" => {
                // The stack bounds what `deploy` deletes: a resource CloudFormation did not
                // create is not in it, so every delete mode is the same command.
                let argv = aws(
                    call,
                    &[
                        "cloudformation",
                        "deploy",
                        "--template-file",
                        output,
                        "--stack-name",
                        env,
                        "--capabilities",
                        "CAPABILITY_NAMED_IAM",
                    ],
                );
                let out = run_tool(call, NAME, &argv)?;
                Ok(json!({"command": argv.join(" "), "output": out}))
            }
            _ => {
                if delete_mode != "never" {
                    return Err(ActivityError::new(
                        "InvalidArgs",
                        format!(
                            "nativeApply deleteMode \"{delete_mode}\" on target \"{target}\" needs the k8s lexicon's sweep of objects carrying chant's ownership marker, which this chant does not have; a label-selected kubectl --prune would delete objects chant never applied. Use deleteMode \"never\" and delete by hand"
                        ),
                    ));
                }
                let manager = format!("--field-manager={FIELD_MANAGER}");
                let source = if target == "kustomize" { "-k" } else { "-f" };
                let mut argv = words(&["kubectl", "apply", "--server-side", &manager]);
                if force {
                    argv.push("--force-conflicts".to_owned());
                }
                if let Some(ns) = super::call::optional(call, NAME, "namespace")? {
                    argv.extend(["-n".to_owned(), ns.to_owned()]);
                }
                if let Some(ctx) = super::call::optional(call, NAME, "context")? {
                    argv.extend(["--context".to_owned(), ctx.to_owned()]);
                }
                argv.extend(words(&[source, output]));
                let out = run_tool(call, NAME, &argv)?;
                let applied = out.lines().filter(|l| !l.trim().is_empty()).count();
                Ok(
                    json!({"applied": applied, "pruned": 0, "fieldManager": FIELD_MANAGER, "output": out}),
                )
            }
        }
    }
}

/// `compensateApply {target, env, command?}`: `command` when the Op gives one (run by `sh`,
/// as a `shell` step is), else the target's own rollback, waited for. A target with none
/// succeeds with `reverted: false` and a warning in its record — partial state never looks
/// reverted when it is not. It runs whenever ApplyOp's Rollback phase does, which is after
/// any failure, the Apply step's or an earlier one's.
pub struct CompensateApply;

impl Activity for CompensateApply {
    fn name(&self) -> &'static str {
        "compensateApply"
    }

    fn run(&self, call: &ActivityCall<'_>) -> Result<Json, ActivityError> {
        const NAME: &str = "compensateApply";
        let target = choice(call, NAME, "target", &TARGETS)?;
        let env = required(call, NAME, "env")?;
        let command = match arg(call, "command") {
            None | Some(Json::Null) => None,
            Some(Json::String(c)) if !c.trim().is_empty() => Some(c.as_str()),
            Some(v) => {
                return Err(ActivityError::new(
                    "InvalidArgs",
                    format!("compensateApply command must be a non-empty string (got {v})"),
                ));
            }
        };
        if let Some(command) = command {
            let out = call.host.shell(
                command,
                None,
                &super::call::env_of(call),
                call.timeout_ms,
                call.cancel,
            )?;
            return Ok(json!({"command": command, "reverted": true, "output": out}));
        }
        match target {
            "cloudformation" => {
                not_a_flag(NAME, "env", env)?;
                let argv = aws(
                    call,
                    &["cloudformation", "rollback-stack", "--stack-name", env],
                );
                // rollback-stack only starts the rollback: the step waits for it to finish, so
                // `reverted` means the stack is back, not that a request was sent.
                let mut out = run_tool(call, NAME, &argv)?;
                let wait = aws(
                    call,
                    &[
                        "cloudformation",
                        "wait",
                        "stack-rollback-complete",
                        "--stack-name",
                        env,
                    ],
                );
                out.push_str(&run_tool(call, NAME, &wait)?);
                Ok(
                    json!({"command": format!("{} && {}", argv.join(" "), wait.join(" ")), "reverted": true, "output": out}),
                )
            }
            _ => Ok(json!({
                "reverted": false,
                "warning": format!("no automatic rollback for target \"{target}\" — partial apply to {env} was NOT reverted; supply compensate.command to enable rollback"),
            })),
        }
    }
}
