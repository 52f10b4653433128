//! `chant run` and `chant approve`: argument handling and rendering around `chant-ops`.

use std::io::Write;

use std::process::ExitCode;
use std::sync::Arc;
use std::sync::atomic::AtomicBool;

use chant_core::model::Budget;
use chant_core::session::Chant;
use chant_ops::Repo;
use chant_ops::actions::{self, ActionError};
use chant_ops::gates::{Origin, Refusal};
use chant_ops::records::RunStatus;
use chant_ops::time::{Clock, SystemClock};
use serde_json::{Value, json};

fn fail(message: impl std::fmt::Display) -> ExitCode {
    eprintln!("error: {message}");
    ExitCode::FAILURE
}

fn render_args(args: &Value) -> String {
    args.as_object()
        .map(|o| {
            o.iter()
                .map(|(k, v)| match v {
                    Value::String(s) => format!("{k}={s}"),
                    other => format!("{k}={}", canon::to_compact(other)),
                })
                .collect::<Vec<_>>()
                .join(", ")
        })
        .unwrap_or_default()
}

/// The human line of a settled step.
fn render_step(r: &Value) -> String {
    let call = format!(
        "{}({})",
        r["fn"].as_str().unwrap_or_default(),
        render_args(&r["args"])
    );
    let ms = r["durationMs"].as_u64().unwrap_or(0);
    let mut line = match r["status"].as_str() {
        Some("ok") => format!("  ✓ {call}   {ms}ms"),
        Some("skipped") => format!("  • {call}   skipped"),
        Some("gated") => format!("  ⏸ {call}   waiting for approval"),
        _ => format!("  ✗ {call}   {ms}ms"),
    };
    if let Some(e) = r["error"].as_str() {
        line.push_str(&format!("\n    {e}"));
    }
    if let Some(o) = r["outcome"].as_object() {
        line.push_str(&format!(
            "\n    [outcome] {}={}",
            o["name"].as_str().unwrap_or_default(),
            canon::to_compact(&o["value"])
        ));
    }
    line
}

pub struct RunArgs {
    pub op: String,
    pub json: bool,
    pub progress_json: bool,
    pub env: Option<String>,
    pub on: Option<String>,
    pub gated_exit: u8,
}

fn repo_and_ops(chant: &Chant, budget: &Budget) -> Result<(Repo, chant_ops::OpSet), ExitCode> {
    let cwd = std::env::current_dir().map_err(fail)?;
    let repo = Repo::open(&cwd).map_err(fail)?;
    let ops = repo.discover(chant.evaluator.as_ref(), budget);
    for e in &ops.errors {
        eprintln!("warning: {e}");
    }
    Ok((repo, ops))
}

fn configured_lexicons(chant: &Chant, budget: &Budget) -> Vec<String> {
    let cwd = std::env::current_dir().unwrap_or_default();
    chant
        .locate(&cwd, budget)
        .ok()
        .and_then(|p| p.lexicon_names().ok())
        .unwrap_or_default()
}

fn open_repo() -> Result<Repo, ExitCode> {
    let cwd = std::env::current_dir().map_err(fail)?;
    Repo::open(&cwd).map_err(fail)
}

/// Discovers the repository's Ops, saying what could not be read.
fn discovered<'a>(
    chant: &'a Chant,
    repo: &'a Repo,
    budget: &'a Budget,
) -> impl FnOnce() -> Box<chant_ops::OpSet> + 'a {
    move || {
        let ops = repo.discover(chant.evaluator.as_ref(), budget);
        for e in &ops.errors {
            eprintln!("warning: {e}");
        }
        Box::new(ops)
    }
}

fn notes(notes: &[String]) {
    for n in notes {
        eprintln!("{n}");
    }
}

pub fn run(chant: &Chant, budget: &Budget, args: RunArgs) -> ExitCode {
    let repo = match open_repo() {
        Ok(r) => r,
        Err(code) => return code,
    };
    let cancel = Arc::new(AtomicBool::new(false));
    let _ = signal_hook::flag::register(signal_hook::consts::SIGINT, Arc::clone(&cancel));
    let _ = signal_hook::flag::register(signal_hook::consts::SIGTERM, Arc::clone(&cancel));
    let last_phase = std::sync::Mutex::new(String::new());
    let progress_json = args.progress_json;
    let human = !args.json && !progress_json;
    let on_step = move |r: &Value, _n: usize, _total: usize| {
        if progress_json {
            let mut out = std::io::stdout().lock();
            let _ = writeln!(out, "{}", canon::to_compact(r));
            let _ = out.flush();
        }
        if human {
            let phase = r["phase"].as_str().unwrap_or_default().to_owned();
            let mut last = last_phase.lock().unwrap_or_else(|p| p.into_inner());
            let mut err = std::io::stderr().lock();
            if *last != phase {
                let _ = writeln!(err, "[phase] {phase}");
                *last = phase;
            }
            let _ = writeln!(err, "{}", render_step(r));
        }
    };
    let lexicons = configured_lexicons(chant, budget);
    let cwd = std::env::current_dir().unwrap_or_else(|_| repo.root.clone());
    let host = chant_ops::host::LocalHost {
        chant,
        repo_root: repo.root.clone(),
        cwd: cwd.clone(),
    };
    let request = actions::RunOp {
        op: &args.op,
        origin: Origin::Cli,
        runtime: args.on.as_deref(),
        lexicons: &lexicons,
        chant,
        host: &host,
        env: args.env.as_deref(),
        cwd,
        cancel: &cancel,
        on_step: &on_step,
    };
    let ran = match actions::run_op(
        &repo,
        discovered(chant, &repo, budget),
        &request,
        &SystemClock,
    ) {
        Ok(r) => r,
        Err(ActionError::NotFound { op, available }) => {
            return fail(format!(
                "Op \"{op}\" not found\n  Available: {}",
                available.join(", ")
            ));
        }
        Err(e) => return fail(e),
    };
    notes(&ran.notes);
    let outcome = ran.outcome;
    if args.json {
        println!("{}", canon::to_compact(&cli_json(&outcome)));
    }
    let op = &args.op;
    let secs = outcome.total_ms as f64 / 1000.0;
    if human {
        match outcome.status {
            RunStatus::Ok => eprintln!("Op \"{op}\" completed in {secs:.1}s"),
            RunStatus::Gated => {
                let gate = outcome
                    .gate
                    .as_ref()
                    .and_then(|g| g["name"].as_str())
                    .unwrap_or_default()
                    .to_owned();
                eprintln!(
                    "Op \"{op}\" is waiting at gate \"{gate}\". A person approves it with: chant approve {op} {gate}"
                );
            }
            RunStatus::Cancelled => eprintln!("Op \"{op}\" cancelled after {secs:.1}s"),
            RunStatus::Fail => eprintln!("Op \"{op}\" failed after {secs:.1}s"),
        }
    }
    match outcome.status {
        RunStatus::Ok => ExitCode::SUCCESS,
        RunStatus::Gated => ExitCode::from(args.gated_exit),
        RunStatus::Cancelled => ExitCode::from(130),
        RunStatus::Fail => ExitCode::FAILURE,
    }
}

/// `{op, records, totalMs, ok}` (+ `status: "gated"`): `chant run --json`.
fn cli_json(outcome: &chant_ops::runtime::RunOutcome) -> Value {
    let mut m = serde_json::Map::new();
    m.insert("op".into(), json!(outcome.op));
    m.insert("records".into(), Value::Array(outcome.records.clone()));
    m.insert("totalMs".into(), json!(outcome.total_ms));
    m.insert("ok".into(), json!(outcome.status == RunStatus::Ok));
    if outcome.status == RunStatus::Gated {
        m.insert("status".into(), json!("gated"));
    }
    Value::Object(m)
}

/// `chant run list`: every Op with its latest run state.
pub fn list(chant: &Chant, budget: &Budget, json_out: bool) -> ExitCode {
    let (repo, ops) = match repo_and_ops(chant, budget) {
        Ok(x) => x,
        Err(code) => return code,
    };
    let entries: Vec<Value> = repo.list_entries(&ops.ops, None);
    if json_out {
        println!(
            "{}",
            canon::to_pretty(&json!({"ops": entries, "errors": ops.errors}))
        );
    } else {
        for e in &entries {
            println!(
                "{:<24} {:<10} {}",
                e["name"].as_str().unwrap_or_default(),
                e["runState"].as_str().unwrap_or("-"),
                e["overview"].as_str().unwrap_or_default()
            );
        }
    }
    ExitCode::SUCCESS
}

/// `chant run status <op>` and `chant run log <op>`. Skipped ledger lines are listed in
/// `skipped` (status always, log with `--json`: `{runs, skipped}`), and also said on stderr.
pub fn status(chant: &Chant, budget: &Budget, name: &str, log: bool, json_out: bool) -> ExitCode {
    let (repo, ops) = match repo_and_ops(chant, budget) {
        Ok(x) => x,
        Err(code) => return code,
    };
    let Some(op) = ops.get(name) else {
        return fail(chant_ops::not_found(name, &ops));
    };
    let out = if log {
        let history = chant_ops::records::history(&repo.ledger, name);
        warn_skipped(&history.skipped);
        if json_out {
            json!({"runs": history.runs, "skipped": chant_ops::records::Skipped::array(&history.skipped), "skippedTotal": history.skipped.len()})
        } else {
            Value::Array(history.runs)
        }
    } else {
        let (mut status, skipped) = repo.status_and_skipped(op, "local", SystemClock.now_ms());
        warn_skipped(&skipped);
        if json_out && let Some(o) = status.as_object_mut() {
            o.entry("skipped").or_insert(json!([]));
            o.entry("skippedTotal").or_insert(json!(0));
        }
        status
    };
    println!("{}", canon::to_pretty(&out));
    ExitCode::SUCCESS
}

fn warn_skipped(skipped: &[chant_ops::records::Skipped]) {
    let shown = chant_ops::records::SKIPPED_SHOWN;
    for s in skipped.iter().take(shown) {
        eprintln!(
            "warning: skipped line {} of {} on chant/lifecycle: {}",
            s.line, s.file, s.reason
        );
    }
    if skipped.len() > shown {
        eprintln!(
            "warning: {} more lines of chant/lifecycle were skipped",
            skipped.len() - shown
        );
    }
}

pub struct ApproveArgs {
    pub op: String,
    pub gate: String,
    pub actor: Option<String>,
    pub approver: Option<String>,
    pub note: Option<String>,
    pub url: Option<String>,
    pub plan: Option<String>,
    pub allow_same_origin: bool,
    pub expire: bool,
    pub sign: bool,
    pub env: Option<String>,
    pub on: Option<String>,
}

fn ci_url() -> Option<String> {
    let env = |k: &str| std::env::var(k).ok().filter(|v| !v.is_empty());
    if let (Some(r), Some(repo)) = (env("GITHUB_REF_NAME"), env("GITHUB_REPOSITORY"))
        && let Some(n) = r.strip_suffix("/merge").or_else(|| r.strip_suffix("/head"))
    {
        return Some(format!("https://github.com/{repo}/pull/{n}"));
    }
    match (
        env("CI_MERGE_REQUEST_PROJECT_URL"),
        env("CI_MERGE_REQUEST_IID"),
    ) {
        (Some(u), Some(iid)) => Some(format!("{u}/-/merge_requests/{iid}")),
        _ => None,
    }
}

pub fn approve(chant: &Chant, budget: &Budget, args: ApproveArgs) -> ExitCode {
    let repo = match open_repo() {
        Ok(r) => r,
        Err(code) => return code,
    };
    let lexicons = configured_lexicons(chant, budget);
    if args.expire {
        return match actions::expire_gate(
            &repo,
            discovered(chant, &repo, budget),
            &args.op,
            &args.gate,
            args.on.as_deref(),
            &lexicons,
            &SystemClock,
        ) {
            Ok(n) => {
                notes(&n);
                eprintln!(
                    "Gate \"{}\" on \"{}\" expired: the standing pending fact no longer stands.",
                    args.gate, args.op
                );
                ExitCode::SUCCESS
            }
            Err(e) => fail(e),
        };
    }
    let env = |k: &str| std::env::var(k).ok().filter(|v| !v.is_empty());
    let resolved_by = args
        .approver
        .clone()
        .or(args.actor.clone())
        .or_else(|| env("GITHUB_ACTOR"))
        .or_else(|| env("GITLAB_USER_LOGIN"))
        .or_else(|| env("USER"))
        .unwrap_or_else(|| "unknown".into());
    let request = actions::ApproveGate {
        op: &args.op,
        gate: &args.gate,
        origin: Origin::Cli,
        runtime: args.on.as_deref(),
        lexicons: &lexicons,
        chant,
        env: args.env.as_deref(),
        resolved_by: resolved_by.clone(),
        note: args.note.clone(),
        url: args.url.clone().or_else(ci_url),
        plan: args.plan.clone(),
        allow_same_origin: args.allow_same_origin,
        sign: args.sign,
    };
    let result = actions::approve_gate(
        &repo,
        discovered(chant, &repo, budget),
        &request,
        &SystemClock,
    );
    match result {
        Ok(approved) => {
            notes(&approved.notes);
            let resolved = approved.resolved;
            let seen = &resolved.seen;
            let how = match (&seen["signedBy"], seen["signed"].as_bool()) {
                (Value::String(who), _) => format!("signed and verified as {who}"),
                (_, Some(true)) => match seen["unattested"].as_str() {
                    Some(why) => format!("signed, but unattested: {why}"),
                    None => "signed".to_owned(),
                },
                _ => "unsigned".to_owned(),
            };
            eprintln!(
                "Approved gate \"{}\" on \"{}\" as {resolved_by} ({how}).",
                args.gate, args.op
            );
            if let Some(d) = &resolved.plan_digest {
                println!("This approves the plan {d}, and only that plan.");
            }
            ExitCode::SUCCESS
        }
        Err(ActionError::Refused(Refusal::NoPendingFact(text))) => fail(format!(
            "{text}\n  Run `chant run {}` first so the gate records its plan, or name the plan with --plan <digest>.",
            args.op
        )),
        Err(e) => fail(e),
    }
}
