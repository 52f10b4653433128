//! The two things a front end asks of Ops on someone's behalf — run an Op, approve a gate —
//! each written once, in the order every channel shares: the names and runtime checked, the
//! Ops discovered, `neverOverMcp` applied, the ledger synced, the work done and recorded, the
//! record pushed. The CLI and the MCP server call these and only shape the replies; what a
//! front end prints is in the returned notes, never printed here.

use std::ops::Deref;
use std::sync::atomic::AtomicBool;

use serde_json::Value as Json;

use crate::gates::{self, Approval, Origin, Refusal, Resolved};
use crate::model::{self, OpSet};
use crate::records::RunStatus;
use crate::runtime::{self, Activities, RunOptions, RunOutcome};
use crate::time::Clock;
use crate::{Repo, check_env, check_runtime};

/// A name an Op or a gate may have (`.` is the gate of an Op with one, such as
/// `workspace-upgrade`): names become ledger paths.
fn check_names(op: &str, gate: Option<&str>) -> Result<(), String> {
    for (what, name) in [("Op", Some(op)), ("gate", gate)] {
        let Some(name) = name else { continue };
        if !(model::valid_name(name) || (what == "gate" && name == ".")) {
            return Err(format!(
                "{what} name \"{name}\" must match ^[a-z0-9][a-z0-9._-]*$"
            ));
        }
    }
    Ok(())
}

/// Ops chant's own machinery gates without any `*.op.ts` declaring them (fan-out, the
/// workspace upgrade, a pull request's gate `pr-<number>`): approving one is expected.
pub fn undeclared_by_design(op: &str) -> bool {
    matches!(op, "fan-out" | "workspace-upgrade")
        || op
            .strip_prefix("pr-")
            .is_some_and(|n| !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()))
}

/// The warning for an Op no `*.op.ts` declares, unless chant's own machinery gates it.
fn undeclared_note(declared: bool, op: &str) -> Vec<String> {
    if declared || undeclared_by_design(op) {
        return Vec::new();
    }
    vec![format!(
        "warning: Op \"{op}\" was not found among discovered *.op.ts declarations — recording the resolution anyway"
    )]
}

/// Why a model may not approve a gate of an Op it does not see declared.
fn undeclared_over_mcp_text(op: &str, gate: &str, set: &OpSet) -> String {
    let unread = match set.errors.first() {
        Some(e) => format!(" (and discovery did not read everything: {e})"),
        None => String::new(),
    };
    format!(
        "Op \"{op}\" is not declared by any *.op.ts this server reads{unread}, so whether it allows approvals over MCP cannot be told, and its gates are not resolved here. Approve at a shell with `chant approve {op} {gate}`."
    )
}

/// The lexicons whose activities a run of `op` may call, read now: those of the project the
/// Op's file is in (none when it is in no project, or its config does not load), then the
/// lexicon whose `Op` declared it. Where the command runs from, or what a server read at its
/// start, makes no difference.
fn op_lexicons(
    chant: &chant_core::session::Chant,
    root: &std::path::Path,
    op: &model::OpDef,
) -> Vec<String> {
    let budget = chant_core::model::Budget::default();
    let of_project = op
        .file
        .parent()
        .and_then(|dir| chant.locate_within(dir, Some(root), &budget).ok())
        .and_then(|p| p.lexicon_names().ok())
        .unwrap_or_default();
    with_op_lexicon(&of_project, op)
}

/// `lexicons`, then the lexicon whose `Op` declared `op` (its base activities, such as
/// `chantBuild`, whatever the project lists).
fn with_op_lexicon(lexicons: &[String], op: &model::OpDef) -> Vec<String> {
    let mut all = lexicons.to_vec();
    if let Some(l) = &op.lexicon
        && !all.contains(l)
    {
        all.push(l.clone());
    }
    all
}

/// What a person or a model asks to approve, and through which channel.
pub struct ApproveGate<'a> {
    pub op: &'a str,
    pub gate: &'a str,
    pub origin: Origin,
    /// The runtime named (`--on`, `runtime`), checked against `lexicons`.
    pub runtime: Option<&'a str>,
    /// The project's lexicons.
    pub lexicons: &'a [String],
    /// Where the lexicons of the Op's project, and their activities, are found (they are part
    /// of the plan).
    pub chant: &'a chant_core::session::Chant,
    /// The environment the approver's plan is computed for, if named.
    pub env: Option<&'a str>,
    /// Who approves, as the channel may claim it (`"unattested"` over MCP).
    pub resolved_by: String,
    pub note: Option<String>,
    pub url: Option<String>,
    /// A plan digest named by hand (shell only).
    pub plan: Option<String>,
    pub allow_same_origin: bool,
    /// Seal the record with the approver's key (`chant approve --sign`).
    pub sign: bool,
}

/// Why an action did not happen: its arguments, or the gate's refusal.
#[derive(Debug, PartialEq, Eq)]
pub enum ActionError {
    /// A name, runtime or environment that is not valid; nothing was read.
    Invalid(String),
    /// An Op to run that discovery did not find (`available`: the names it found).
    NotFound {
        op: String,
        available: Vec<String>,
    },
    /// An Op that declares `neverOverMcp`, asked over MCP.
    NeverOverMcp(String),
    Refused(Refusal),
}

impl std::fmt::Display for ActionError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ActionError::Invalid(t) | ActionError::NeverOverMcp(t) => f.write_str(t),
            ActionError::NotFound { op, available } => write!(
                f,
                "Op \"{op}\" not found. Available: {}",
                available.join(", ")
            ),
            ActionError::Refused(r) => write!(f, "{r}"),
        }
    }
}

/// What an approval recorded, and what the front end should tell its user.
pub struct Approved {
    pub resolved: Resolved,
    /// Warnings and notes in the order they arose (sync, an undeclared Op, the push).
    pub notes: Vec<String>,
}

/// Approves a gate: names and runtime checked, Ops discovered (by `discover`, as the front
/// end discovers), the ledger synced, the approval decided and recorded by
/// [`gates::approve`] (where `neverOverMcp` and every other rule is applied, once), looked
/// for once more on the remote when no pending fact was found here, and pushed.
pub fn approve_gate<S: Deref<Target = OpSet>>(
    repo: &Repo,
    discover: impl FnOnce() -> S,
    req: &ApproveGate<'_>,
    clock: &dyn Clock,
) -> Result<Approved, ActionError> {
    check_names(req.op, Some(req.gate)).map_err(ActionError::Invalid)?;
    let set = discover();
    let declared = set.get(req.op);
    // Whether an Op allows approvals over MCP is in its declaration: a model approves only
    // gates of Ops this channel sees declared. An Op it does not see — outside the served
    // project, or unread because discovery failed or the request was cancelled mid-way — is
    // refused, not taken for one without `neverOverMcp`. chant's own gated Ops have no
    // declaration; their pending record carries the flag, and the ledger decides.
    if req.origin.model_authored() && declared.is_none() && !undeclared_by_design(req.op) {
        return Err(ActionError::NeverOverMcp(undeclared_over_mcp_text(
            req.op, req.gate, &set,
        )));
    }
    let mut notes = undeclared_note(declared.is_some(), req.op);
    let root = repo.root.clone();
    let seal = move |payload: &str| crate::attest::seal(&root, payload);
    let (gate, given_env) = (req.gate, req.env);
    let lexicons = match declared {
        Some(op) => op_lexicons(req.chant, &repo.root, op),
        None => Vec::new(),
    };
    let activities = Activities::of_project(&req.chant.lexicons, &lexicons);
    let activities = &activities;
    let plan_here = declared
        .map(|op| move |e: Option<&str>| runtime::plan_here(op, gate, e, given_env, activities));
    let approval = Approval {
        op: req.op,
        gate: req.gate,
        origin: req.origin,
        resolved_by: req.resolved_by.clone(),
        note: req.note.clone(),
        url: req.url.clone(),
        plan: req.plan.clone(),
        allow_same_origin: req.allow_same_origin,
        declared_never_over_mcp: declared.is_some_and(|o| o.never_over_mcp),
        seal: req.sign.then_some(&seal as &gates::Seal),
        plan_here: plan_here.as_ref().map(|f| f as &gates::PlanHere),
    };
    // In the order every channel shares: neverOverMcp from the declaration, then the runtime.
    gates::declared_never_over_mcp(&approval).map_err(ActionError::Refused)?;
    check_runtime(req.runtime, req.lexicons).map_err(ActionError::Invalid)?;
    notes.extend(repo.sync());
    let mut result = gates::approve(&repo.ledger, &approval, clock);
    // The gate may have been reached on another clone: look at the remote once more.
    if matches!(result, Err(Refusal::NoPendingFact(_)))
        && matches!(repo.ledger.refresh(), Ok(Some(_)))
    {
        result = gates::approve(&repo.ledger, &approval, clock);
    }
    let resolved = result.map_err(ActionError::Refused)?;
    notes.extend(repo.publish());
    Ok(Approved { resolved, notes })
}

/// Expires a gate (`chant approve --expire`): a pending fact with no time left, so the one
/// that stood no longer does. Shell only.
pub fn expire_gate<S: Deref<Target = OpSet>>(
    repo: &Repo,
    discover: impl FnOnce() -> S,
    op: &str,
    gate: &str,
    runtime: Option<&str>,
    lexicons: &[String],
    clock: &dyn Clock,
) -> Result<Vec<String>, ActionError> {
    check_names(op, Some(gate)).map_err(ActionError::Invalid)?;
    check_runtime(runtime, lexicons).map_err(ActionError::Invalid)?;
    let mut notes = undeclared_note(discover().get(op).is_some(), op);
    notes.extend(repo.sync());
    gates::record_pending(
        &repo.ledger,
        op,
        gate,
        clock.now_ms(),
        0,
        None,
        Origin::Cli,
        &[],
    )
    .map_err(|e| ActionError::Invalid(format!("Cannot record the expiry: {e}")))?;
    notes.extend(repo.publish());
    Ok(notes)
}

/// What a person or a model asks to run, and through which channel.
pub struct RunOp<'a> {
    pub op: &'a str,
    pub origin: Origin,
    pub runtime: Option<&'a str>,
    pub lexicons: &'a [String],
    /// Where the lexicons of the Op's project, and their activities, are found.
    pub chant: &'a chant_core::session::Chant,
    /// What activities needing chant itself ask of the front end.
    pub host: &'a dyn chant_core::lexicon::ActivityHost,
    pub env: Option<&'a str>,
    /// Where shell steps run.
    pub cwd: std::path::PathBuf,
    pub cancel: &'a AtomicBool,
    pub on_step: &'a (dyn Fn(&Json, usize, usize) + Sync),
}

/// A run's outcome and what the front end should tell its user.
pub struct Ran {
    pub outcome: RunOutcome,
    pub notes: Vec<String>,
}

/// Runs an Op: runtime and environment checked, Ops discovered, `neverOverMcp` applied to
/// a model's request, the ledger synced, the phases run and recorded, a gated run's pending
/// fact pushed (it is what a person on another clone approves).
pub fn run_op<S: Deref<Target = OpSet>>(
    repo: &Repo,
    discover: impl FnOnce() -> S,
    req: &RunOp<'_>,
    clock: &dyn Clock,
) -> Result<Ran, ActionError> {
    check_runtime(req.runtime, req.lexicons).map_err(ActionError::Invalid)?;
    if let Some(env) = req.env {
        check_env(env).map_err(ActionError::Invalid)?;
    }
    let set = discover();
    let Some(op) = set.get(req.op) else {
        return Err(ActionError::NotFound {
            op: req.op.to_owned(),
            available: set.names().into_iter().map(str::to_owned).collect(),
        });
    };
    if req.origin.model_authored() && op.never_over_mcp {
        return Err(ActionError::NeverOverMcp(crate::never_over_mcp_run_text(
            &op.name,
        )));
    }
    let mut notes: Vec<String> = repo.sync().into_iter().collect();
    let lexicons = op_lexicons(req.chant, &repo.root, op);
    let activities = Activities::of_project(&req.chant.lexicons, &lexicons);
    let opts = RunOptions {
        env: req.env.map(str::to_owned),
        origin: req.origin,
        cwd: req.cwd.clone(),
        ledger: Some(&repo.ledger),
        clock,
        cancel: req.cancel,
        activities: &activities,
        host: req.host,
        on_step: req.on_step,
    };
    let outcome = runtime::run(op, &opts);
    if let Some(e) = &outcome.ledger_error {
        notes.push(format!(
            "warning: the run was not recorded on chant/lifecycle: {e}"
        ));
    } else if outcome.status == RunStatus::Gated {
        notes.extend(repo.publish());
    }
    Ok(Ran { outcome, notes })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_run_may_call_the_activities_of_the_lexicon_that_declared_its_op() {
        let mut op = model::op_from_props(
            serde_json::json!({"name": "o", "overview": "", "phases": []}),
            std::path::Path::new("o.op.ts"),
        )
        .unwrap();
        let names = |v: &[&str]| v.iter().map(|s| (*s).to_owned()).collect::<Vec<_>>();
        assert_eq!(
            with_op_lexicon(&names(&["gitlab"]), &op),
            names(&["gitlab"])
        );
        op.lexicon = Some("temporal".into());
        assert_eq!(
            with_op_lexicon(&names(&["gitlab"]), &op),
            names(&["gitlab", "temporal"])
        );
        assert_eq!(
            with_op_lexicon(&names(&["temporal", "gitlab"]), &op),
            names(&["temporal", "gitlab"])
        );
    }

    #[test]
    fn only_chants_own_gated_ops_are_undeclared_by_design() {
        for op in ["fan-out", "workspace-upgrade", "pr-1", "pr-12345"] {
            assert!(undeclared_by_design(op), "{op}");
        }
        for op in ["pr-", "pr-1a", "fan-out2", "deploy", "pr12"] {
            assert!(!undeclared_by_design(op), "{op}");
        }
    }

    #[test]
    fn names_that_would_be_ledger_paths_are_refused_before_anything_is_read() {
        assert_eq!(check_names("deploy", Some(".")), Ok(()));
        assert_eq!(
            check_names(".", Some("g")).unwrap_err(),
            "Op name \".\" must match ^[a-z0-9][a-z0-9._-]*$"
        );
        assert_eq!(
            check_names("deploy", Some("../x")).unwrap_err(),
            "gate name \"../x\" must match ^[a-z0-9][a-z0-9._-]*$"
        );
    }
}
