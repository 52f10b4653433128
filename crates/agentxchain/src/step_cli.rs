//! `agentxchain step`: one whole turn — assign (or resume an active one), dispatch by the
//! turn's runtime (`local_cli`: run the agent; `manual`: print what to do and wait for the
//! staged result), validate, accept (or reject with `--auto-reject`), checkpoint. Texts and
//! exit codes as the reference's `step`.

use std::path::Path;
use std::process::ExitCode;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant, SystemTime};

use axc_kernel::run::config as cfg;
use axc_kernel::run::local_cli::{self, Outcome};
use axc_kernel::run::{Store, accept, assign, checkpoint, dispatch, lifecycle, reject};
use serde_json::Value as Json;

use crate::governed::{escalation_notice, gate_context, refuse, s, store, turn_lines};
use axc_core::util::printable as clean;

const DASHES: &str = "--------------------------------------------";

/// How `step` was asked.
#[derive(Clone, Debug, Default)]
pub struct Args {
    pub role: Option<String>,
    pub resume: bool,
    pub turn: Option<String>,
    /// Seconds between looks for a manual turn's result.
    pub poll: u64,
    /// Echo the agent's output as it comes.
    pub stream: bool,
    pub auto_reject: bool,
    pub no_checkpoint: bool,
}

fn recovery_summary(state: &Json, config: &Json, heading: &str) {
    println!("{heading}");
    let r = axc_kernel::views::status::recovery(state, config);
    if r.is_null() {
        return;
    }
    println!("  Reason: {}", clean(&s(&r["typed_reason"])));
    println!("  Action: {}", clean(&s(&r["recovery_action"])));
    if let Some(d) = r["detail"].as_str().filter(|d| !d.is_empty()) {
        println!("  Detail: {}", clean(d));
    }
}

fn pick(turns: &[Json], wanted: Option<&str>, multiple: &str) -> Result<Json, ExitCode> {
    if let Some(id) = wanted {
        return turns
            .iter()
            .find(|t| t["turn_id"] == id)
            .cloned()
            .ok_or_else(|| {
                println!("No active turn found for --turn {}", clean(id));
                ExitCode::from(1)
            });
    }
    match turns {
        [t] => Ok(t.clone()),
        _ => {
            println!("{multiple}");
            turn_lines(turns);
            println!();
            println!("Example: agentxchain step --resume --turn <turn_id>");
            Err(ExitCode::from(1))
        }
    }
}

/// A conflicted or failed turn is not resumed: the ways out instead.
fn unresumable(t: &Json) -> Option<ExitCode> {
    let id = s(&t["turn_id"]);
    match t["status"].as_str() {
        Some("conflicted") => {
            println!("Turn {id} is conflicted. Resolve the conflict before resuming.");
            println!();
            println!("Recovery options:");
            println!(
                "  agentxchain reject-turn --turn {id} --reassign  — reject and re-dispatch with conflict context"
            );
            println!(
                "  agentxchain accept-turn --turn {id} --resolution human_merge  — manually merge and re-accept"
            );
            Some(ExitCode::from(1))
        }
        Some("failed_acceptance") => {
            println!("Turn {id} ({}) failed acceptance.", s(&t["assigned_role"]));
            println!(
                "Reason: {}",
                clean(t["failure_reason"].as_str().unwrap_or("unknown"))
            );
            println!();
            println!("Recovery options:");
            println!("  agentxchain reject-turn --turn {id}  — reject and retry");
            println!("  agentxchain accept-turn --turn {id}  — re-attempt acceptance after fixing");
            Some(ExitCode::from(1))
        }
        _ => None,
    }
}

/// A turn whose worker still runs is not dispatched twice.
fn worker_alive(t: &Json) -> Option<ExitCode> {
    let pid = t["worker_pid"]
        .as_i64()
        .filter(|p| *p > 0 && *p <= i32::MAX as i64)?;
    if lifecycle::live_worker(t).is_some() {
        println!("Worker process (PID {pid}) is still alive.");
        println!("The previous dispatch appears to still be running.");
        println!("Wait for it to complete, or kill it first, then retry.");
        return Some(ExitCode::from(1));
    }
    println!(
        "Detected crashed worker (PID {pid}). Re-dispatching turn {}...",
        s(&t["turn_id"])
    );
    None
}

/// The turn `--resume` takes (`--turn`, or the only one), when it can be dispatched again:
/// not conflicted or failed, its worker not still running.
fn resumable(turns: &[Json], wanted: Option<&str>, multiple: &str) -> Result<Json, ExitCode> {
    let t = pick(turns, wanted, multiple)?;
    match unresumable(&t).or_else(|| worker_alive(&t)) {
        Some(c) => Err(c),
        None => Ok(t),
    }
}

/// `step`.
pub fn step(a: &Args) -> ExitCode {
    let store = match store() {
        Ok(s) => s,
        Err(c) => return c,
    };
    let config = match cfg::load(&store) {
        Ok(c) => c,
        Err(r) => return refuse(&r),
    };
    if let Some(code) = crate::governed::watchdog_stop(&store, &config) {
        return code;
    }
    let state = match store.state() {
        Ok(s) => s,
        Err(r) => return refuse(&r),
    };
    if state["status"] == "completed" {
        println!("This run is already completed.");
        if let Some(at) = state["completed_at"].as_str() {
            println!("  Completed at: {at}");
        }
        println!("  No more turns can be assigned to a completed run.");
        return ExitCode::SUCCESS;
    }
    let turns = crate::governed::active_turns(&state);
    let status = state["status"].as_str().unwrap_or("");
    let turn = if status == "active" && !turns.is_empty() {
        if a.resume {
            let t = match resumable(
                &turns,
                a.turn.as_deref(),
                "Multiple active turns exist. Use --turn <id> to specify which turn to resume.",
            ) {
                Ok(t) => t,
                Err(c) => return c,
            };
            println!("Resuming active turn: {}", s(&t["turn_id"]));
            match redispatch_active(&store, &config, &t) {
                Ok(t) => t,
                Err(r) => return refuse(&r),
            }
        } else if (turns.len() as u64)
            < axc_kernel::transitions::max_concurrent_turns(
                &config,
                state["phase"].as_str().unwrap_or(""),
            )
        {
            // Under the phase's capacity: a turn beside the active ones (parallel turns; their
            // files are told apart and their requests queued at acceptance).
            match assign::assign_parallel(&store, &config, a.role.as_deref()) {
                Ok((_, turn)) => turn,
                Err(r) => {
                    println!("{}", clean(&r.message));
                    return ExitCode::from(1);
                }
            }
        } else {
            if let [t] = turns.as_slice() {
                println!("A turn is already active:");
                println!("  Turn:  {}", s(&t["turn_id"]));
                println!("  Role:  {}", s(&t["assigned_role"]));
            } else {
                println!(
                    "{} turns are active (at capacity {}):",
                    turns.len(),
                    axc_kernel::transitions::max_concurrent_turns(
                        &config,
                        state["phase"].as_str().unwrap_or("")
                    )
                );
                turn_lines(&turns);
            }
            println!();
            println!("Use agentxchain step --resume to continue waiting for an active turn.");
            println!("Or run: agentxchain accept-turn / reject-turn");
            return ExitCode::from(1);
        }
    } else {
        if !state["pending_phase_transition"].is_null()
            || !state["pending_run_completion"].is_null()
        {
            recovery_summary(&state, &config, "This run is awaiting approval.");
            return ExitCode::from(1);
        }
        if status == "blocked" && !turns.is_empty() {
            if !a.resume {
                recovery_summary(&state, &config, "This run is blocked on a retained turn.");
                return ExitCode::from(1);
            }
            let t = match resumable(
                &turns,
                a.turn.as_deref(),
                "Multiple retained turns exist. Use --turn <id> to specify which to resume.",
            ) {
                Ok(t) => t,
                Err(c) => return c,
            };
            println!("Re-dispatching blocked turn: {}", s(&t["turn_id"]));
        }
        let opts = assign::Options {
            role: a.role.clone(),
            turn: a.turn.clone().filter(|_| status == "blocked"),
            via: Some(if a.resume { "step --resume" } else { "step" }.to_owned()),
            bind_intents: true,
        };
        match assign::resume(&store, &opts) {
            Ok(mut r) => {
                crate::governed::started_resumed(&r);
                let role = r.bind.as_ref().map_or_else(
                    || r.turn["assigned_role"].clone(),
                    |b| Json::String(b.1.clone()),
                );
                if !r.redispatched
                    && a.role.is_none()
                    && r.context["next_recommended_role"].is_string()
                    && r.context["next_recommended_role"] == role
                {
                    println!("Using recommended role: {} (from previous turn)", s(&role));
                }
                if !r.redispatched
                    && let Some(w) = axc_kernel::budget::assignment_warning(&r.state, &config)
                {
                    println!("Warning: {w}");
                }
                match r.bind.take() {
                    Some((_, role)) => match crate::governed::bind(
                        &store,
                        &role,
                        r.state["run_id"].as_str(),
                        false,
                    ) {
                        Ok((_, turn)) => turn,
                        Err(c) => return c,
                    },
                    None => r.turn,
                }
            }
            Err(assign::Stop::Refused(r)) => return refuse(&r),
            Err(assign::Stop::TurnsActive(..)) => {
                println!("A turn is already active.");
                return ExitCode::from(1);
            }
            Err(assign::Stop::AwaitingApproval(state)) => {
                recovery_summary(&state, &config, "This run is awaiting approval.");
                return ExitCode::from(1);
            }
            Err(assign::Stop::AssignFailed(f)) => {
                crate::governed::started_before_failure(&f);
                return crate::governed::assign_failed(&f, &config);
            }
            Err(assign::Stop::Settled(st)) => return crate::governed::settled(&st),
        }
    };
    let state = store.state().unwrap_or(state);
    gate_context("step", &config, &state);
    let turn_id = s(&turn["turn_id"]);
    let role = s(&turn["assigned_role"]);
    let runtime_id = s(&turn["runtime_id"]);
    let runtime = &config["runtimes"][&runtime_id];
    let kind = cfg::runtime_type(&config, &runtime_id).to_owned();
    let cancel = Arc::new(AtomicBool::new(false));
    // Ctrl+C, a closed terminal or a plain kill end the agent with the step: the turn stays
    // assigned, nothing is left running.
    for sig in [
        signal_hook::consts::SIGINT,
        signal_hook::consts::SIGTERM,
        signal_hook::consts::SIGHUP,
    ] {
        let _ = signal_hook::flag::register(sig, Arc::clone(&cancel));
    }
    let phase = s(&state["phase"]);
    match kind.as_str() {
        "local_cli" => {
            if let Err(c) = run_local(&store, &config, &turn, runtime, &phase, a, &cancel) {
                return c;
            }
        }
        "manual" => {
            print!("{}", manual_instructions(&state, &config, &turn));
            println!("Waiting for turn result...");
            println!(
                "Polling: .agentxchain/staging/{turn_id}/turn-result.json (every {}s)",
                a.poll.max(1)
            );
            println!("Press Ctrl+C to abort and leave the turn assigned.");
            println!();
            match wait_manual(&store, &turn, a.poll, &cancel) {
                Wait::Found => {
                    println!("Staged result detected.");
                    println!();
                }
                Wait::Aborted => return aborted(),
                Wait::TimedOut => {
                    println!();
                    println!("Turn timed out. No staged result found.");
                    println!("The turn remains assigned. You can:");
                    println!("  - Continue working and run: agentxchain step --resume");
                    println!("  - Reject and retry: agentxchain reject-turn --reason \"timeout\"");
                    return ExitCode::from(1);
                }
            }
        }
        other => {
            println!(
                "Runtime \"{}\" is {other}: this build dispatches local_cli and manual runtimes only.",
                clean(&runtime_id)
            );
            println!("The turn remains assigned. You can:");
            println!(
                "  - Complete it by hand: write .agentxchain/staging/{turn_id}/turn-result.json, then agentxchain accept-turn"
            );
            println!(
                "  - Give the role a local_cli or manual runtime in agentxchain.json, then agentxchain step --resume"
            );
            return ExitCode::from(1);
        }
    }
    finish(&store, &config, &turn_id, &role, a)
}

/// Writes the active turn's bundle again and claims it for this dispatch (`turn_dispatched`).
fn redispatch_active(
    store: &Store,
    config: &Json,
    turn: &Json,
) -> Result<Json, axc_kernel::run::Refusal> {
    lifecycle::claim(store, config, &s(&turn["turn_id"]), std::process::id())
}

/// What an agent printed, for the terminal: line breaks kept, every other control character
/// (escape sequences included) shown escaped.
pub(crate) fn stream_text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes)
        .split('\n')
        .map(clean)
        .collect::<Vec<_>>()
        .join("\n")
}

/// Prints a piece of an agent's output as it comes.
pub(crate) fn echo_piece(stderr: bool, bytes: &[u8]) {
    use std::io::Write;
    let text = stream_text(bytes);
    if stderr {
        let mut e = std::io::stderr();
        let _ = e.write_all(text.as_bytes());
        let _ = e.flush();
    } else {
        let mut o = std::io::stdout();
        let _ = o.write_all(text.as_bytes());
        let _ = o.flush();
    }
}

fn aborted() -> ExitCode {
    println!();
    println!("Aborted. Turn remains assigned.");
    println!("Resume later with: agentxchain step --resume");
    println!("Or accept/reject manually: agentxchain accept-turn / reject-turn");
    ExitCode::SUCCESS
}

/// Blocks the run on a failed dispatch (its escalation announced on stderr).
fn block(store: &Store, turn_id: &str, why: &str, detail: &str) {
    match lifecycle::block_dispatch(store, turn_id, why, detail) {
        Ok(b) => {
            if let Some(r) = &b.escalation {
                escalation_notice(r);
            }
        }
        Err(r) => eprintln!("Could not record the block: {}", r.message),
    }
}

fn run_local(
    store: &Store,
    config: &Json,
    turn: &Json,
    runtime: &Json,
    phase: &str,
    a: &Args,
    cancel: &AtomicBool,
) -> Result<(), ExitCode> {
    let turn_id = s(&turn["turn_id"]);
    let transport = local_cli::transport(runtime);
    println!(
        "Dispatching to local CLI: {}",
        clean(&local_cli::describe(runtime))
    );
    println!(
        "Turn: {turn_id}  Role: {}  Phase: {phase}  Transport: {}",
        s(&turn["assigned_role"]),
        transport.as_str()
    );
    if transport == local_cli::Transport::BundleOnly {
        println!(
            "Warning: prompt_transport is \"dispatch_bundle_only\" — the prompt will NOT be delivered to the subprocess automatically."
        );
        println!(
            "The subprocess must independently read from .agentxchain/dispatch/turns/{turn_id}/PROMPT.md"
        );
        println!(
            "To enable automatic prompt delivery, set prompt_transport to \"argv\" or \"stdin\" in the runtime config."
        );
    }
    let log = format!(".agentxchain/dispatch/turns/{turn_id}/stdout.log");
    println!("Log: {log}");
    if !a.stream {
        println!("  Watch live: tail -f {log}");
    }
    println!("Press Ctrl+C to abort and leave the turn assigned.");
    println!();
    let mut echo = echo_piece;
    let watch = local_cli::Watch {
        cancel,
        echo: if a.stream { Some(&mut echo) } else { None },
    };
    let outcome = match local_cli::run(store, config, &turn_id, watch) {
        Ok(o) => o,
        Err(r) => return Err(refuse(&r)),
    };
    let still_active = store
        .state()
        .is_ok_and(|st| st["active_turns"].get(&turn_id).is_some());
    if !still_active && outcome != Outcome::Aborted {
        println!();
        println!(
            "Turn {turn_id} is no longer active: it was accepted or rejected while its agent ran."
        );
        println!("Inspect it: agentxchain status");
        return Err(ExitCode::SUCCESS);
    }
    match outcome {
        Outcome::Staged => {
            println!("Subprocess completed. Staged result detected.");
            println!();
            Ok(())
        }
        Outcome::Aborted => Err(aborted()),
        Outcome::TimedOut => {
            block(
                store,
                &turn_id,
                "timeout",
                "Subprocess timed out before staging a turn result.",
            );
            println!();
            println!("Turn timed out. Subprocess was terminated.");
            println!("The turn remains assigned. You can:");
            println!("  - Re-dispatch: agentxchain step --resume");
            println!("  - Reject and retry: agentxchain reject-turn --reason \"timeout\"");
            Err(ExitCode::from(1))
        }
        Outcome::StartupFailed {
            failure_type,
            error,
        } => {
            let f = lifecycle::StartFailure {
                failure_type,
                threshold_ms: local_cli::startup_watchdog_ms(config, runtime),
            };
            if let Err(r) = lifecycle::fail_startup(store, &turn_id, &f) {
                eprintln!("Could not record the failed start: {}", r.message);
            }
            println!();
            println!("Turn startup failed: {}", clean(&error));
            println!("The turn was retained as failed_start. You can:");
            println!(
                "  - Reissue immediately: agentxchain reissue-turn --turn {turn_id} --reason ghost"
            );
            println!("  - Inspect status: agentxchain status");
            Err(ExitCode::from(1))
        }
        Outcome::Failed { exit_code, error } => {
            let why = exit_code.map_or("subprocess_failed".to_owned(), |c| format!("exit-{c}"));
            block(store, &turn_id, &why, &error);
            println!();
            println!("Subprocess failed: {}", clean(&error));
            if let Some(c) = exit_code {
                println!("Exit code: {c}");
            }
            println!("The turn remains assigned. You can:");
            println!("  - Fix and retry: agentxchain step --resume");
            println!("  - Reject: agentxchain reject-turn --reason \"subprocess failed\"");
            Err(ExitCode::from(1))
        }
    }
}

enum Wait {
    Found,
    Aborted,
    TimedOut,
}

/// Waits for a manual turn's staged result, until the turn's deadline (20 minutes without
/// one).
fn wait_manual(store: &Store, turn: &Json, poll: u64, cancel: &AtomicBool) -> Wait {
    let turn_id = s(&turn["turn_id"]);
    let limit = turn["deadline_at"]
        .as_str()
        .and_then(|d| axc_kernel::events::timestamp(&Json::String(d.to_owned())))
        .map(|d| {
            d.duration_since(SystemTime::now())
                .unwrap_or(Duration::ZERO)
        })
        .unwrap_or(Duration::from_secs(20 * 60));
    let start = Instant::now();
    let poll = Duration::from_secs(poll.max(1));
    let mut next_look = start;
    loop {
        if cancel.load(Ordering::SeqCst) {
            return Wait::Aborted;
        }
        if Instant::now() >= next_look {
            if local_cli::staged_ready(store, &turn_id) {
                return Wait::Found;
            }
            if start.elapsed() >= limit {
                return Wait::TimedOut;
            }
            next_look += poll;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// Validates the staged result and accepts it (or rejects it with `--auto-reject`), then
/// checkpoints the accepted turn.
fn finish(store: &Store, config: &Json, turn_id: &str, role: &str, a: &Args) -> ExitCode {
    let state = match store.state() {
        Ok(s) => s,
        Err(r) => return refuse(&r),
    };
    let mut solo = state.clone();
    solo["active_turns"] = serde_json::json!({ turn_id: state["active_turns"][turn_id].clone() });
    let v = axc_kernel::turn_result::validate_staged(
        store.root(),
        &solo,
        config,
        &dispatch::staging_rel(turn_id),
    );
    if !v.ok() {
        println!("Validation failed:");
        println!("  Stage:  {}", v.stage.unwrap_or("unknown"));
        for e in &v.errors {
            println!("  Error:  {}", clean(e));
        }
        println!();
        if !a.auto_reject {
            println!("The staged result failed validation.");
            println!("Review the errors above, then:");
            println!("  - Fix the staged result and run: agentxchain accept-turn");
            println!("  - Reject and retry: agentxchain reject-turn");
            println!("  - Auto-reject on failure: agentxchain step --auto-reject");
            return ExitCode::from(1);
        }
        return match reject::reject(store, Some(turn_id), None) {
            Ok(r) if r.escalated => {
                if let Some(e) = &r.escalation {
                    escalation_notice(e);
                }
                escalated_summary(&r.state, config);
                ExitCode::SUCCESS
            }
            Ok(r) => {
                println!("Turn rejected for retry.");
                println!("  Attempt: {}", r.turn["attempt"]);
                println!();
                println!("The retry dispatch bundle has been written.");
                println!("Run: agentxchain step --resume to continue.");
                ExitCode::SUCCESS
            }
            Err(r) => {
                println!("Rejection failed: {}", r.message);
                ExitCode::from(1)
            }
        };
    }
    let (entry, state) = match accept::accept(store, Some(turn_id)) {
        Ok(accept::Accepted::Done {
            entry,
            state,
            escalation,
            ..
        }) => {
            if let Some(e) = &escalation {
                escalation_notice(e);
            }
            (entry, state)
        }
        Ok(accept::Accepted::Conflict {
            conflict,
            state,
            escalation,
        }) => {
            if let Some(e) = &escalation {
                crate::governed::escalation_notice(e);
            }
            crate::governed::conflict_detected(&conflict, &state, config);
            return ExitCode::from(1);
        }
        Ok(accept::Accepted::Hook(h)) => {
            if let Some(e) = &h.escalation {
                escalation_notice(e);
            }
            crate::governed::hook_halted(&h, config);
            return ExitCode::from(1);
        }
        Ok(accept::Accepted::Failed { stage, errors, .. }) => {
            println!(
                "Acceptance failed: Validation failed at stage {stage}: {}",
                clean(&errors.join("; "))
            );
            return ExitCode::from(1);
        }
        Err(r) => {
            println!("Acceptance failed: {}", r.message);
            return ExitCode::from(r.exit_code as u8);
        }
    };
    accepted_summary(&entry, &state, config, role);
    if !a.no_checkpoint && Path::new(store.root()).join(".git").exists() {
        match checkpoint::checkpoint(store, Some(turn_id)) {
            Ok(checkpoint::Checkpointed::Committed { sha, .. })
            | Ok(checkpoint::Checkpointed::Already { sha, .. }) => {
                println!("  Checkpoint: {sha}");
            }
            Ok(checkpoint::Checkpointed::Skipped { .. }) => {}
            Err(r) => {
                println!("  Checkpoint: accepted but checkpoint failed");
                println!("  Error:  {}", r.message);
                println!("  Retry:  agentxchain checkpoint-turn --turn {turn_id}");
                println!();
                return ExitCode::from(1);
            }
        }
    }
    ExitCode::SUCCESS
}

fn recovery_lines(r: &Json) {
    println!("  Reason:   {}", clean(&s(&r["typed_reason"])));
    println!("  Owner:    {}", clean(&s(&r["owner"])));
    println!("  Action:   {}", clean(&s(&r["recovery_action"])));
    println!(
        "  Turn:     {}",
        if r["turn_retained"] == true {
            "retained"
        } else {
            "cleared"
        }
    );
    if let Some(d) = r["detail"].as_str().filter(|d| !d.is_empty()) {
        println!("  Detail:   {}", clean(d));
    }
}

fn accepted_summary(entry: &Json, state: &Json, config: &Json, role: &str) {
    println!();
    println!("  Turn Accepted");
    println!("  {DASHES}");
    println!();
    println!("  Turn:     {}", s(&entry["turn_id"]));
    println!("  Role:     {role}");
    println!(
        "  Status:   {}",
        clean(entry["status"].as_str().unwrap_or("completed"))
    );
    println!(
        "  Summary:  {}",
        clean(entry["summary"].as_str().unwrap_or("(none)"))
    );
    let next = entry["proposed_next_role"]
        .as_str()
        .filter(|r| !r.is_empty());
    if let Some(n) = next {
        println!("  Proposed: {}", clean(n));
    }
    if let Some(usd) = entry["cost"]["usd"].as_f64() {
        println!("  Cost:     ${}", axc_core::util::to_fixed(usd, 2));
    }
    println!();
    let recovery = axc_kernel::views::status::recovery(state, config);
    if state["status"] == "completed" {
        println!("  ✓ Run completed");
        if let Some(at) = state["completed_at"].as_str() {
            println!("  Completed at: {at}");
        }
    } else if !recovery.is_null() {
        recovery_lines(&recovery);
    } else if let Some(n) = next.filter(|n| *n != "human") {
        println!("  Next: agentxchain step --role {}", clean(n));
    } else {
        println!("  Next: review state, then run agentxchain step when ready.");
    }
    println!();
}

fn escalated_summary(state: &Json, config: &Json) {
    println!();
    println!("  Turn Escalated");
    println!("  {DASHES}");
    println!();
    let recovery = axc_kernel::views::status::recovery(state, config);
    if recovery.is_null() {
        println!("  Blocked on: {}", s(&state["blocked_on"]));
        println!("  Resolve the escalation, then run agentxchain step to re-dispatch.");
    } else {
        recovery_lines(&recovery);
    }
    println!();
}

/// `pad` of the reference's instruction box: a value is padded to `width`, or cut to its last
/// characters after `...`.
fn pad(text: &str, width: usize) -> String {
    let n = text.chars().count();
    if n >= width {
        let tail: String = text.chars().skip(n - (width - 3)).collect();
        format!("...{tail}")
    } else {
        format!("{text}{}", " ".repeat(width - n))
    }
}

fn next_phase(config: &Json, phase: &str) -> Option<String> {
    let phases = cfg::phases(config);
    let i = phases.iter().position(|p| *p == phase)?;
    phases.get(i + 1).map(|p| (*p).to_owned())
}

/// What a person does for a manual turn: the reference's box, steps, hints and a minimal
/// turn result.
fn manual_instructions(state: &Json, config: &Json, turn: &Json) -> String {
    let turn_id = s(&turn["turn_id"]);
    let role_id = turn["assigned_role"].as_str().unwrap_or("");
    let role = cfg::role(config, role_id);
    let phase = state["phase"].as_str().unwrap_or("planning");
    let prompt = format!(".agentxchain/dispatch/turns/{turn_id}/PROMPT.md");
    let staging = format!(".agentxchain/staging/{turn_id}/turn-result.json");
    let authority = role["write_authority"].as_str().unwrap_or("review_only");
    let gate = cfg::exit_gate(config, phase).map(|g| &config["gates"][g]);
    let needs_pass =
        gate.is_some_and(|g| g["requires_verification_pass"] == true) && authority != "review_only";
    let next = next_phase(config, phase);
    let mut l: Vec<String> = vec![
        String::new(),
        "  +---------------------------------------------------------+".into(),
        "  |  MANUAL TURN REQUIRED                                    |".into(),
        "  |                                                          |".into(),
        format!("  |  Role:    {}|", pad(&clean(role_id), 46)),
        format!("  |  Turn:    {}|", pad(&turn_id, 46)),
        format!("  |  Phase:   {}|", pad(&clean(phase), 46)),
        format!("  |  Attempt: {}|", pad(&turn["attempt"].to_string(), 46)),
        "  |                                                          |".into(),
        format!("  |  Prompt:  {}|", pad(&prompt, 46)),
        format!("  |  Result:  {}|", pad(&staging, 46)),
        "  +---------------------------------------------------------+".into(),
        String::new(),
        "  Steps:".into(),
        format!("    1. Read the prompt:   cat {prompt}"),
        "    2. Do the work described in the prompt".into(),
        format!("    3. Write turn-result.json to:  {staging}"),
        "    4. The step command will detect the file and proceed".into(),
        String::new(),
    ];
    let hints: &[&str] = match (phase, role_id) {
        ("planning", "pm" | "human") => &[
            ".planning/PM_SIGNOFF.md — change \"Approved: NO\" → \"Approved: YES\" when ready",
            ".planning/ROADMAP.md — define phases and acceptance criteria",
            ".planning/SYSTEM_SPEC.md — define ## Purpose, ## Interface, ## Acceptance Tests",
        ],
        ("implementation", "dev" | "human") => {
            &[".planning/IMPLEMENTATION_NOTES.md — record what you built and how to verify"]
        }
        ("qa", "qa" | "human") => &[
            ".planning/acceptance-matrix.md — mark each requirement PASS/FAIL",
            ".planning/ship-verdict.md — change \"## Verdict: PENDING\" → \"## Verdict: YES\"",
            ".planning/RELEASE_NOTES.md — user impact, verification summary, upgrade notes",
        ],
        _ => &[],
    };
    if !hints.is_empty() {
        l.push("  Gate files to update this phase:".into());
        l.extend(hints.iter().map(|h| format!("    - {h}")));
        l.push(String::new());
    }
    let mut done = Vec::new();
    if needs_pass {
        done.push(
            "set `verification.status` to `pass` only when your listed checks actually passed"
                .to_owned(),
        );
    }
    done.push(match authority {
        "authoritative" => "use `artifact.type: \"workspace\"` unless you created a real git commit during the turn".to_owned(),
        "proposed" => "use `artifact.type: \"patch\"` for non-completion turns".to_owned(),
        _ => "keep `artifact.type: \"review\"` because review-only roles cannot claim code-writing artifacts".to_owned(),
    });
    if let Some(n) = &next {
        done.push(format!(
            "set `phase_transition_request` to `{n}` when this turn is ready to leave `{phase}`"
        ));
    } else if phase == "qa" {
        done.push("set `run_completion_request` to `true` when QA evidence is complete and you are asking to end the run".to_owned());
    }
    l.push("  To exit this phase cleanly:".into());
    l.extend(done.iter().map(|h| format!("    - {}", clean(h))));
    l.push(String::new());
    let artifact = match authority {
        "authoritative" => "workspace",
        "proposed" => "patch",
        _ => "review",
    };
    let verification = if needs_pass {
        r#"{"status":"pass","commands":["..."],"evidence_summary":"..."}"#
    } else {
        r#"{"status":"skipped","commands":[],"evidence_summary":"..."}"#
    };
    let allowed: Vec<&str> = ["allowed_next_roles", "allowed_next"]
        .iter()
        .find_map(|k| {
            config["routing"][phase][k]
                .as_array()
                .filter(|a| !a.is_empty())
        })
        .map(|a| a.iter().filter_map(Json::as_str).collect())
        .unwrap_or_default();
    let next_role = if !allowed.is_empty() {
        if allowed.contains(&role_id) {
            role_id.to_owned()
        } else {
            allowed
                .iter()
                .find(|r| **r != "human")
                .unwrap_or(&allowed[0])
                .to_string()
        }
    } else if let Some(d) = config["routing"][role_id]["default_next"].as_str() {
        d.to_owned()
    } else {
        match role_id {
            "pm" => "dev",
            "dev" => "qa",
            _ => "human",
        }
        .to_owned()
    };
    let runtime = turn["runtime_id"]
        .as_str()
        .or(role["runtime_id"].as_str())
        .or(role["runtime"].as_str())
        .unwrap_or("manual");
    l.push("  Minimal turn-result.json:".into());
    l.push("  {".into());
    l.push("    \"schema_version\": \"1.0\",".into());
    l.push(format!(
        "    \"run_id\": \"{}\",",
        state["run_id"].as_str().unwrap_or("run_...")
    ));
    l.push(format!("    \"turn_id\": \"{turn_id}\","));
    l.push(format!("    \"role\": \"{}\",", clean(role_id)));
    l.push(format!("    \"runtime_id\": \"{}\",", clean(runtime)));
    l.push("    \"status\": \"completed\",".into());
    l.push("    \"summary\": \"...\",".into());
    l.push(r#"    "decisions": [{"id":"DEC-001","category":"scope","statement":"...","rationale":"..."}],"#.into());
    l.push(r#"    "objections": [{"id":"OBJ-001","severity":"medium","statement":"...","status":"raised"}],"#.into());
    l.push("    \"files_changed\": [],".into());
    l.push(format!("    \"verification\": {verification},"));
    l.push(format!(
        "    \"artifact\": {{\"type\":\"{artifact}\",\"ref\":null}},"
    ));
    l.push(format!(
        "    \"proposed_next_role\": \"{}\",",
        clean(&next_role)
    ));
    l.push(format!(
        "    \"phase_transition_request\": {},",
        next.as_ref()
            .map_or("null".to_owned(), |n| format!("\"{}\"", clean(n)))
    ));
    l.push(format!(
        "    \"run_completion_request\": {}",
        if next.is_none() && phase == "qa" {
            "true"
        } else {
            "null"
        }
    ));
    l.push("  }".into());
    l.push(String::new());
    l.push("  Docs: https://agentxchain.dev/docs/getting-started".into());
    l.push(String::new());
    // console.log of the joined lines: one newline after the last.
    let mut out = l.join("\n");
    out.push('\n');
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_box_pads_short_values_and_cuts_long_ones_from_the_left() {
        assert_eq!(pad("pm", 6), "pm    ");
        assert_eq!(pad("abcdefgh", 6), "...fgh");
        assert_eq!(pad("abcdef", 6), "...def");
    }
}
