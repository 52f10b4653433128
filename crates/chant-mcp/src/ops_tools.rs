//! The Op and lifecycle tools and resources. Every fact this server writes carries origin `mcp`;
//! `op-approve` records `resolvedBy: "unattested"` and takes no approver.

use chant_core::build::Format;
use chant_ops::actions;
use chant_ops::gates::Origin;
use chant_ops::time::{Clock, SystemClock};
use chant_ops::{OpDef, OpSet, Repo};
use mcp::{Args, Arguments, RequestContext, ToolAnnotations, ToolError, ToolOutput};
use serde_json::{Map, Value, json};

use crate::{READ_ONLY, State, ToolDecl, required, schema, string_prop};

/// In the order `tools/list` gives them.
pub(crate) const TOOLS: &[ToolDecl] = &[
    LIFECYCLE_SNAPSHOT,
    LIFECYCLE_DIFF,
    OP_LIST,
    OP_RUN,
    OP_STATUS,
    OP_APPROVE,
    OP_REPORT,
];

/// A tool that writes the ledger and nothing else, and not idempotently.
const NO_WRITE: ToolAnnotations = ToolAnnotations {
    read_only: Some(false),
    destructive: Some(false),
    idempotent: Some(false),
    open_world: Some(false),
};

fn runtime_prop() -> Value {
    string_prop("Runtime to address: a lexicon name with an opRuntime, or local (the default)")
}

/// The repository of the served project, found once per server (a failure is not kept:
/// the next call looks again).
fn repo(state: &State) -> Result<Repo, ToolError> {
    if let Some(r) = state.repo.get() {
        return Ok(r.clone());
    }
    let r = Repo::open(&state.root).map_err(ToolError)?;
    Ok(state.repo.get_or_init(|| r).clone())
}

fn runtime(state: &State, args: &Args) -> Result<&'static str, ToolError> {
    chant_ops::check_runtime(args.str("runtime"), &state.loaded).map_err(ToolError)
}

fn op<'a>(set: &'a OpSet, name: &str) -> Result<&'a OpDef, ToolError> {
    set.get(name)
        .ok_or_else(|| ToolError(chant_ops::not_found(name, set)))
}

/// The last `op-list` answer, and what it was built from: the discovered set (the very one,
/// which discovery hands back again while no Op file's reads changed) and the stamp of the
/// ledger's refs (the same while the ledger's commit is).
#[derive(Default)]
pub(crate) struct ListMemo(
    std::sync::Mutex<Option<(std::sync::Arc<OpSet>, gitledger::RefsStamp, Value)>>,
);

impl ListMemo {
    fn get(&self, set: &std::sync::Arc<OpSet>, stamp: &gitledger::RefsStamp) -> Option<Value> {
        let memo = self.0.lock().ok()?;
        let (s, st, v) = memo.as_ref()?;
        (std::sync::Arc::ptr_eq(s, set) && st == stamp).then(|| v.clone())
    }

    fn put(&self, set: std::sync::Arc<OpSet>, stamp: gitledger::RefsStamp, value: &Value) {
        if let Ok(mut memo) = self.0.lock() {
            *memo = Some((set, stamp, value.clone()));
        }
    }
}

pub(crate) const OP_LIST: ToolDecl = ToolDecl {
    name: "op-list",
    title: "List Ops",
    description: "List every Op discovered from *.op.ts files with the run state the runtime reports.",
    schema: op_list_schema,
    annotations: READ_ONLY,
    permit: true,
    checks: crate::Checks::Types,
    handler: op_list,
};

fn op_list_schema() -> Value {
    schema(&[("runtime", runtime_prop())], &[])
}

pub(crate) fn op_list(
    state: &State,
    args: Arguments,
    ctx: &RequestContext,
) -> Result<ToolOutput, ToolError> {
    let args = Args::of(&args);
    runtime(state, &args)?;
    let repo = match repo(state) {
        Ok(r) => r,
        Err(e) => return Ok(ToolOutput::Json(json!({"ops": [], "errors": [e.0]}))),
    };
    // Stamped before anything is read: a ref moved meanwhile is a change the next call sees.
    let stamp = repo.ledger.refs_stamp();
    let set = repo.discover_under_cached(
        &state.ceiling,
        state.chant.evaluator.as_ref(),
        &crate::budget(ctx),
        &state.ops,
    );
    if let Some(st) = &stamp
        && let Some(answer) = state.list_memo.get(&set, st)
    {
        return Ok(ToolOutput::Json(answer));
    }
    let ops: Vec<Value> = repo.list_entries(&set.ops, Some(&state.latest));
    // Built member by member: `json!` would copy the list through `to_value`.
    let mut out = Map::new();
    out.insert("ops".into(), Value::Array(ops));
    out.insert(
        "errors".into(),
        Value::Array(set.errors.iter().cloned().map(Value::String).collect()),
    );
    let answer = Value::Object(out);
    if let Some(st) = stamp {
        state.list_memo.put(set, st, &answer);
    }
    Ok(ToolOutput::Json(answer))
}

pub(crate) const OP_RUN: ToolDecl = ToolDecl {
    name: "op-run",
    title: "Run Op",
    description: "Run an Op on a runtime and return its result.",
    schema: op_run_schema,
    annotations: ToolAnnotations {
        read_only: Some(false),
        destructive: Some(true),
        idempotent: Some(false),
        open_world: Some(true),
    },
    // A run holds no work permit: it runs shell steps for minutes, and its discovery is cached.
    permit: false,
    checks: crate::Checks::Types,
    handler: op_run,
};

fn op_run_schema() -> Value {
    schema(
        &[
            ("name", string_prop("Op name (must match an *.op.ts file)")),
            (
                "env",
                string_prop(
                    "Environment the run targets, as chant run --env names it; omitted, the runtime uses its own default",
                ),
            ),
            ("runtime", runtime_prop()),
        ],
        &["name"],
    )
}

pub(crate) fn op_run(
    state: &State,
    args: Arguments,
    ctx: &RequestContext,
) -> Result<ToolOutput, ToolError> {
    let args = Args::of(&args);
    let name = required(&args, "name")?;
    let repo = repo(state)?;
    let on_step = |r: &Value, settled: usize, total: usize| {
        let message = format!(
            "{}: {} {}",
            r["phase"].as_str().unwrap_or_default(),
            r["fn"].as_str().unwrap_or_default(),
            r["status"].as_str().unwrap_or_default()
        );
        ctx.report_progress(settled as f64, Some(total as f64), Some(&message));
    };
    let host = chant_ops::host::LocalHost {
        chant: &state.chant,
        repo_root: repo.root.clone(),
        cwd: state.root.clone(),
    };
    let request = actions::RunOp {
        op: name,
        origin: Origin::Mcp,
        runtime: args.str("runtime"),
        lexicons: &state.loaded,
        chant: &state.chant,
        host: &host,
        env: args.str("env"),
        cwd: state.root.clone(),
        cancel: ctx.cancel.as_atomic(),
        on_step: &on_step,
    };
    let ran = actions::run_op(&repo, discovered(state, &repo, ctx), &request, &SystemClock)
        .map_err(|e| ToolError(e.to_string()))?;
    log(&ran.notes);
    Ok(ToolOutput::Json(run_reply(&ran.outcome)))
}

/// `{op, runId, state, startedAt, endedAt, records?, gate?}`.
fn run_reply(outcome: &chant_ops::runtime::RunOutcome) -> Value {
    let mut m = Map::new();
    m.insert("op".into(), json!(outcome.op));
    m.insert("runId".into(), json!(outcome.run_id));
    m.insert("state".into(), json!(outcome.status.state()));
    m.insert("startedAt".into(), json!(outcome.started));
    m.insert("endedAt".into(), json!(outcome.ended));
    if !outcome.records.is_empty() {
        m.insert("records".into(), Value::Array(outcome.records.clone()));
    }
    if let Some(g) = &outcome.gate {
        m.insert("gate".into(), g.clone());
    }
    Value::Object(m)
}

/// Discovers the served project's Ops (cached while no Op file's reads changed).
fn discovered<'a>(
    state: &'a State,
    repo: &'a Repo,
    ctx: &'a RequestContext,
) -> impl FnOnce() -> std::sync::Arc<OpSet> + 'a {
    move || {
        repo.discover_under_cached(
            &state.ceiling,
            state.chant.evaluator.as_ref(),
            &crate::budget(ctx),
            &state.ops,
        )
    }
}

/// The server's log (its stderr): what an action noted for its user.
fn log(notes: &[String]) {
    for n in notes {
        eprintln!("{n}");
    }
}

/// Reads the named Op's run status and hands it, with the Op and runtime, to `answer`.
fn with_status(
    state: &State,
    args: Arguments,
    ctx: &RequestContext,
    answer: impl FnOnce(&OpDef, &'static str, Value) -> ToolOutput,
) -> Result<ToolOutput, ToolError> {
    let args = Args::of(&args);
    let name = required(&args, "name")?;
    let rt = runtime(state, &args)?;
    let repo = repo(state)?;
    let set = repo.discover_under_cached(
        &state.ceiling,
        state.chant.evaluator.as_ref(),
        &crate::budget(ctx),
        &state.ops,
    );
    let op = op(&set, name)?;
    let status = repo.status(op, rt, SystemClock.now_ms());
    Ok(answer(op, rt, status))
}

pub(crate) const OP_STATUS: ToolDecl = ToolDecl {
    name: "op-status",
    title: "Op Status",
    description: "Show the state the runtime reports for an Op's latest run.",
    schema: op_status_schema,
    annotations: READ_ONLY,
    permit: true,
    checks: crate::Checks::Types,
    handler: op_status,
};

fn op_status_schema() -> Value {
    schema(
        &[
            ("name", string_prop("Op name")),
            ("runtime", runtime_prop()),
        ],
        &["name"],
    )
}

pub(crate) fn op_status(
    state: &State,
    args: Arguments,
    ctx: &RequestContext,
) -> Result<ToolOutput, ToolError> {
    with_status(state, args, ctx, |_, _, status| ToolOutput::Json(status))
}

pub(crate) const OP_REPORT: ToolDecl = ToolDecl {
    name: "op-report",
    title: "Op Report",
    description: "Return a markdown report for an Op's latest run.",
    schema: op_report_schema,
    annotations: READ_ONLY,
    permit: true,
    checks: crate::Checks::Types,
    handler: op_report,
};

fn op_report_schema() -> Value {
    schema(
        &[
            ("name", string_prop("Op name")),
            ("runtime", runtime_prop()),
        ],
        &["name"],
    )
}

pub(crate) fn op_report(
    state: &State,
    args: Arguments,
    ctx: &RequestContext,
) -> Result<ToolOutput, ToolError> {
    with_status(state, args, ctx, |op, rt, status| {
        ToolOutput::Text(chant_ops::report::markdown(op, rt, &status))
    })
}

pub(crate) const OP_APPROVE: ToolDecl = ToolDecl {
    name: "op-approve",
    title: "Approve Op Gate",
    description: "Record a gate's resolution on the gate ledger, then wake the runtime hosting the gated run. Refuses a gate this same channel reached (approve it with chant approve <op> <gate> at a shell) and records the resolver as unattested.",
    schema: op_approve_schema,
    annotations: NO_WRITE,
    permit: true,
    checks: crate::Checks::Types,
    handler: op_approve,
};

fn op_approve_schema() -> Value {
    schema(
        &[
            ("name", string_prop("Op name")),
            (
                "gate",
                string_prop("Gate name (must match the gate's name in the Op)"),
            ),
            (
                "note",
                string_prop("Free-text context recorded on the resolution"),
            ),
            (
                "url",
                string_prop("Absolute http/https URL this resolution happened at"),
            ),
            (
                "env",
                string_prop(
                    "Environment the woken run runs in, as chant run approve --env names it; omitted, the runtime keeps the gated run's",
                ),
            ),
            ("runtime", runtime_prop()),
        ],
        &["name", "gate"],
    )
}

pub(crate) fn op_approve(
    state: &State,
    args: Arguments,
    ctx: &RequestContext,
) -> Result<ToolOutput, ToolError> {
    let args = Args::of(&args);
    let (Some(name), Some(gate)) = (args.str("name"), args.str("gate")) else {
        return Err(ToolError(
            "op-approve needs both an Op name and a gate name".into(),
        ));
    };
    let repo = repo(state)?;
    // A model's approval claims no approver and never passes its own origin's gate.
    let request = actions::ApproveGate {
        op: name,
        gate,
        origin: Origin::Mcp,
        runtime: args.str("runtime"),
        lexicons: &state.loaded,
        chant: &state.chant,
        env: args.str("env"),
        resolved_by: "unattested".into(),
        note: args.str("note").map(str::to_owned),
        url: args.str("url").map(str::to_owned),
        plan: None,
        allow_same_origin: false,
        sign: false,
    };
    let approved =
        actions::approve_gate(&repo, discovered(state, &repo, ctx), &request, &SystemClock)
            .map_err(|e| ToolError(e.to_string()))?;
    log(&approved.notes);
    let resolved = approved.resolved;
    // What the ledger recorded, not what this handler meant to record.
    let mut reply = json!({
        "op": name,
        "gate": gate,
        "resolvedBy": resolved.record["resolvedBy"],
        "origin": resolved.record["origin"],
        "timestamp": resolved.timestamp,
        "runtimeNotified": false,
    });
    // Whether it is believed: an approval over MCP is never sealed, so under a signers
    // policy it does not pass the gate, and the reply says so.
    if let (Some(o), Value::Object(seen)) = (reply.as_object_mut(), resolved.seen) {
        o.extend(seen);
    }
    Ok(ToolOutput::Json(reply))
}

pub(crate) const LIFECYCLE_SNAPSHOT: ToolDecl = ToolDecl {
    name: "lifecycle-snapshot",
    title: "Lifecycle Snapshot",
    description: "Capture deployed state for an environment, reading every loaded lexicon that implements describeResources.",
    schema: lifecycle_snapshot_schema,
    annotations: ToolAnnotations {
        read_only: Some(false),
        destructive: Some(false),
        idempotent: Some(true),
        open_world: Some(true),
    },
    permit: true,
    checks: crate::Checks::Types,
    handler: lifecycle_snapshot,
};

fn lifecycle_snapshot_schema() -> Value {
    schema(
        &[
            ("environment", string_prop("Target environment")),
            (
                "lexicon",
                string_prop("Restrict to one lexicon; snapshots all of them if omitted"),
            ),
        ],
        &["environment"],
    )
}

pub(crate) fn lifecycle_snapshot(
    state: &State,
    args: Arguments,
    _ctx: &RequestContext,
) -> Result<ToolOutput, ToolError> {
    let args = Args::of(&args);
    let env = required(&args, "environment")?;
    chant_ops::check_env(env).map_err(ToolError)?;
    // No loaded lexicon observes live state yet (describeResources).
    let _ = state;
    Ok(ToolOutput::Text(
        "No plugins implement describeResources".into(),
    ))
}

pub(crate) const LIFECYCLE_DIFF: ToolDecl = ToolDecl {
    name: "lifecycle-diff",
    title: "Lifecycle Diff",
    description: "Compare the current build's digest against the digest stored in an environment's last snapshot.",
    schema: lifecycle_diff_schema,
    annotations: READ_ONLY,
    permit: true,
    checks: crate::Checks::Types,
    handler: lifecycle_diff,
};

fn lifecycle_diff_schema() -> Value {
    schema(
        &[
            ("environment", string_prop("Target environment")),
            (
                "lexicon",
                string_prop("Restrict to one lexicon; diffs all of them if omitted"),
            ),
        ],
        &["environment"],
    )
}

pub(crate) fn lifecycle_diff(
    state: &State,
    args: Arguments,
    ctx: &RequestContext,
) -> Result<ToolOutput, ToolError> {
    let args = Args::of(&args);
    let env = required(&args, "environment")?;
    chant_ops::check_env(env).map_err(ToolError)?;
    let budget = crate::budget(ctx);
    let project = state.locate(&state.root, &budget)?;
    let (discovery, result) = state.chant.build(&project, Format::Json, None, &budget);
    if result.is_err() {
        return Ok(ToolOutput::Text("Build failed".into()));
    }
    let ledger = repo(state).ok().map(|r| r.ledger);
    let diffs =
        chant_ops::lifecycle::diff_all(&discovery, ledger.as_ref(), env, args.str("lexicon"));
    Ok(ToolOutput::Json(diffs))
}

/// `chant://ops`, `chant://ops/{name}/runs[/latest]`, `chant://state/{env}[/{lexicon}]`.
pub(crate) fn read(
    state: &State,
    uri: &str,
    ctx: &RequestContext,
) -> Option<Result<String, String>> {
    if uri == "chant://ops" {
        let summaries = match repo(state).map_err(|e| e.0) {
            Ok(repo) => repo
                .discover_under_cached(
                    &state.ceiling,
                    state.chant.evaluator.as_ref(),
                    &crate::budget(ctx),
                    &state.ops,
                )
                .ops
                .iter()
                .map(|o| Value::Object(chant_ops::summary(o)))
                .collect(),
            Err(_) => Vec::new(),
        };
        return Some(Ok(canon::to_pretty(&Value::Array(summaries))));
    }
    if let Some(rest) = uri.strip_prefix("chant://ops/") {
        let (name, latest) = match (
            rest.strip_suffix("/runs/latest"),
            rest.strip_suffix("/runs"),
        ) {
            (Some(n), _) => (n, true),
            (None, Some(n)) => (n, false),
            _ => return None,
        };
        let result = (|| -> Result<Value, String> {
            let repo = repo(state).map_err(|e| e.0)?;
            let set = repo.discover_under_cached(
                &state.ceiling,
                state.chant.evaluator.as_ref(),
                &crate::budget(ctx),
                &state.ops,
            );
            let op = set
                .get(name)
                .ok_or_else(|| chant_ops::not_found(name, &set))?;
            if latest {
                return Ok(repo.status(op, "local", SystemClock.now_ms()));
            }
            let runs: Vec<Value> = chant_ops::records::history(&repo.ledger, name)
                .runs
                .iter()
                .map(|r| {
                    let mut s = chant_ops::records::status(name, "local", Some(r), None);
                    if let Some(o) = s.as_object_mut() {
                        o.shift_remove("gate");
                        if let Some(g) = r.get("gate") {
                            o.insert("gate".into(), g.clone());
                        }
                    }
                    s
                })
                .collect();
            Ok(Value::Array(runs))
        })();
        return Some(Ok(match result {
            Ok(v) => canon::to_pretty(&v),
            Err(e) => canon::to_compact(&json!({"error": e})),
        }));
    }
    if let Some(rest) = uri.strip_prefix("chant://state/") {
        let repo = repo(state);
        return Some(match rest.split_once('/') {
            Some((env, lex)) => match &repo {
                Ok(r) => chant_ops::lifecycle::state_text(&r.ledger, env, lex),
                Err(_) => Err(format!("No snapshot found for {env}/{lex}")),
            },
            None => Ok(match &repo {
                Ok(r) => canon::to_pretty(&chant_ops::lifecycle::state_all(&r.ledger, rest)),
                Err(_) => "{}".into(),
            }),
        });
    }
    None
}
