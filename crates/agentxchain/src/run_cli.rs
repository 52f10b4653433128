//! `agentxchain run`: drive the run turn after turn with its automated runtimes (`local_cli`),
//! stopping at a gate a person holds, a block, completion or `--max-turns`. A failed dispatch is
//! a rejection (retried until the role's retries are spent); a manual role is skipped the same
//! way (`step` is how a manual turn is done). Texts, stop reasons and exit codes as the
//! reference's `run`.

use std::io::{BufRead, IsTerminal, Write};
use std::process::ExitCode;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};

use axc_core::util::printable as clean;
use axc_kernel::run::config as cfg;
use axc_kernel::run::local_cli::{self, Outcome};
use axc_kernel::run::{Store, accept, approve, assign, checkpoint, lifecycle, reject, run_history};
use serde_json::Value as Json;

use crate::governed::{refuse, s, store};

mod parallel;

/// How `run` was asked.
#[derive(Clone, Debug, Default)]
pub struct Args {
    pub role: Option<String>,
    pub max_turns: Option<u64>,
    pub auto_approve: bool,
    pub verbose: bool,
    pub dry_run: bool,
    pub auto_checkpoint: bool,
    pub continue_from: Option<String>,
    pub recover_from: Option<String>,
    pub inherit_context: bool,
    /// `--chain`: when a run ends in a status of `chain_on`, start a continuation of it.
    pub chain: bool,
    pub max_chains: Option<u64>,
    pub chain_on: Option<String>,
    pub chain_cooldown: Option<u64>,
}

/// What starts a child run: its provenance, and the parent's summary it inherits.
struct Lineage {
    provenance: Json,
    inherited: Json,
}

/// `--continue-from` / `--recover-from` / `--inherit-context`, checked as the reference checks
/// them: `Err` is the line printed before exit 1.
fn lineage(store: &Store, a: &Args) -> Result<Option<Lineage>, Vec<String>> {
    if a.continue_from.is_some() && a.recover_from.is_some() {
        return Err(vec![
            "Cannot specify both --continue-from and --recover-from".into(),
        ]);
    }
    let parent = a.continue_from.as_deref().or(a.recover_from.as_deref());
    let Some(parent) = parent else {
        if a.inherit_context {
            return Err(vec![
                "--inherit-context requires --continue-from or --recover-from".into(),
                "Usage: agentxchain run --continue-from <run_id> --inherit-context".into(),
            ]);
        }
        return Ok(None);
    };
    run_history::parent(store, parent).map_err(|e| vec![clean(&e)])?;
    let trigger = if a.continue_from.is_some() {
        "continuation"
    } else {
        "recovery"
    };
    let provenance = serde_json::json!({"trigger": trigger, "parent_run_id": parent,
        "trigger_reason": null, "intake_intent_id": null, "created_by": "operator"});
    let inherited = if a.inherit_context {
        let (ctx, warnings) = run_history::inherited_context(store, parent);
        for w in warnings {
            println!("  ⚠ Inheritance: {}", clean(&w));
        }
        ctx
    } else {
        Json::Null
    };
    Ok(Some(Lineage {
        provenance,
        inherited,
    }))
}

/// Why the loop stopped (the reference's `stop_reason`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Stop {
    Completed,
    Blocked,
    GateHeld,
    MaxTurns,
    CallerStopped,
    RejectExhausted,
    InitFailed,
    /// A gate no routed role can satisfy (the admission control doctor reports).
    AdmissionRejected,
    /// `inject` left a p0 intent: the loop yields so it is taken next.
    PriorityPreempted,
    /// Parallel turns: an acceptance conflict blocked the run (its third detection).
    ConflictLoop,
    /// Parallel turns: a round in which every turn's acceptance conflicted.
    ConflictStall,
}

impl Stop {
    fn as_str(self) -> &'static str {
        match self {
            Stop::Completed => "completed",
            Stop::Blocked => "blocked",
            Stop::GateHeld => "gate_held",
            Stop::MaxTurns => "max_turns_reached",
            Stop::CallerStopped => "caller_stopped",
            Stop::RejectExhausted => "reject_exhausted",
            Stop::InitFailed => "init_failed",
            Stop::AdmissionRejected => "admission_rejected",
            Stop::PriorityPreempted => "priority_preempted",
            Stop::ConflictLoop => "conflict_loop",
            Stop::ConflictStall => "conflict_stall",
        }
    }
}

struct Loop<'a> {
    store: &'a Store,
    config: &'a Json,
    args: &'a Args,
    turns: u64,
    gates: u64,
    errors: Vec<String>,
    /// SIGINTs received: the first stops after the current turn, the second ends the agent.
    interrupts: Arc<AtomicUsize>,
    abort: Arc<AtomicBool>,
    told_stopping: bool,
    /// A child run's provenance and inherited summary (`--continue-from`, `--recover-from`).
    lineage: Option<Lineage>,
    /// `--role`: taken by the loop's first choice of a role, as the reference's `selectRole`.
    pick: Option<String>,
}

/// `run`.
pub fn run(a: &Args) -> ExitCode {
    let store = match store() {
        Ok(s) => s,
        Err(c) => return c,
    };
    let config = match cfg::load(&store) {
        Ok(c) => c,
        Err(r) => return refuse(&r),
    };
    let max_turns = a
        .max_turns
        .or_else(|| config["run_loop"]["max_turns"].as_u64())
        .unwrap_or(50);
    if let Some(r) = &a.role
        && config["roles"].get(r).is_none()
    {
        println!("Unknown role: \"{}\"", clean(r));
        let roles: Vec<&str> = config["roles"]
            .as_object()
            .map(|m| m.keys().map(String::as_str).collect())
            .unwrap_or_default();
        if !roles.is_empty() {
            println!("Available roles: {}", roles.join(", "));
        }
        return ExitCode::from(1);
    }
    let chain = Chain::resolve(a, &config);
    if chain.enabled && !a.dry_run {
        return chained(&store, &config, a, max_turns, &chain);
    }
    execute(&store, &config, a, max_turns, &signals()).code
}

/// SIGINT once: finish the current turn, then stop; twice, or SIGTERM/SIGHUP: end the agent.
struct Signals {
    interrupts: Arc<AtomicUsize>,
    abort: Arc<AtomicBool>,
}

fn signals() -> Signals {
    let interrupts = Arc::new(AtomicUsize::new(0));
    let abort = Arc::new(AtomicBool::new(false));
    let (n, ab) = (Arc::clone(&interrupts), Arc::clone(&abort));
    // SAFETY: the handler only touches atomics (async-signal-safe).
    let _ = unsafe {
        signal_hook::low_level::register(signal_hook::consts::SIGINT, move || {
            if n.fetch_add(1, Ordering::SeqCst) >= 1 {
                ab.store(true, Ordering::SeqCst);
            }
        })
    };
    for sig in [signal_hook::consts::SIGTERM, signal_hook::consts::SIGHUP] {
        let _ = signal_hook::flag::register(sig, Arc::clone(&abort));
    }
    Signals { interrupts, abort }
}

/// One governed run's end: its exit code, why it stopped (none when it never started), its
/// accepted turns, and the state it left.
struct Executed {
    code: ExitCode,
    stop: Option<Stop>,
    turns: u64,
    state: Json,
}

/// One governed run, from its header to its summary.
fn execute(store: &Store, config: &Json, a: &Args, max_turns: u64, sig: &Signals) -> Executed {
    let state = || store.state().unwrap_or(Json::Null);
    let early = |code: ExitCode| Executed {
        code,
        stop: None,
        turns: 0,
        state: state(),
    };
    let lineage = match lineage(store, a) {
        Ok(l) => l,
        Err(lines) => {
            for l in lines {
                println!("{l}");
            }
            return early(ExitCode::from(1));
        }
    };
    if a.dry_run {
        return early(dry_run(store, config, a, max_turns));
    }
    println!("agentxchain run");
    println!(
        "  Max turns: {max_turns}  Gate mode: {}",
        if a.auto_approve {
            "auto-approve"
        } else {
            "interactive"
        }
    );
    if let Some(l) = &lineage {
        let p = &l.provenance;
        println!(
            "  Origin:    {} from {}",
            s(&p["trigger"]),
            s(&p["parent_run_id"])
        );
        let ic = &l.inherited;
        if ic.is_object() {
            let count = |k: &str| ic[k].as_array().map_or(0, Vec::len);
            let plural = |n: usize, w: &str| format!("{n} {w}{}", if n == 1 { "" } else { "s" });
            let parts: Vec<String> = [
                ("parent_phases_completed", "phase"),
                ("recent_decisions", "decision"),
                ("recent_accepted_turns", "turn"),
            ]
            .iter()
            .filter(|(k, _)| count(k) > 0)
            .map(|(k, w)| plural(count(k), w))
            .collect();
            let detail = if parts.is_empty() {
                String::new()
            } else {
                format!(" — {}", parts.join(", "))
            };
            println!(
                "  Inherits: parent {} ({}){detail}",
                s(&ic["parent_run_id"]),
                ic["parent_status"].as_str().map_or("unknown".into(), clean)
            );
        }
    }
    println!();
    let mut l = Loop {
        store,
        config,
        args: a,
        turns: 0,
        gates: 0,
        errors: Vec::new(),
        interrupts: Arc::clone(&sig.interrupts),
        abort: Arc::clone(&sig.abort),
        told_stopping: false,
        lineage,
        pick: a.role.clone(),
    };
    let stop = l.drive(max_turns);
    let code = if l.abort.load(Ordering::SeqCst) {
        ExitCode::from(130)
    } else {
        l.summary(stop)
    };
    Executed {
        code,
        stop: Some(stop),
        turns: l.turns,
        state: state(),
    }
}

/// `--chain` and `run_loop.chain` in the config, the flags first (the reference's defaults:
/// 5 continuations, on `completed`, 5 s apart).
struct Chain {
    enabled: bool,
    max_chains: u64,
    chain_on: Vec<String>,
    cooldown: u64,
}

impl Chain {
    fn resolve(a: &Args, config: &Json) -> Chain {
        let c = &config["run_loop"]["chain"];
        let chain_on = match &a.chain_on {
            Some(list) => list
                .split(',')
                .map(str::trim)
                .filter(|s| !s.is_empty())
                .map(str::to_owned)
                .collect(),
            None => match c["chain_on"].as_array() {
                Some(list) => list
                    .iter()
                    .filter_map(Json::as_str)
                    .map(str::to_owned)
                    .collect(),
                None => vec!["completed".to_owned()],
            },
        };
        Chain {
            enabled: a.chain || c["enabled"] == true,
            max_chains: a
                .max_chains
                .or_else(|| c["max_chains"].as_u64())
                .unwrap_or(5),
            chain_on,
            cooldown: a
                .chain_cooldown
                .or_else(|| c["cooldown_seconds"].as_u64())
                .unwrap_or(5),
        }
    }
}

/// `run --chain`: runs one after another, each a continuation of the last that inherits its
/// summary, while each ends in a chainable status, up to `max_chains` continuations; a SIGINT
/// lets the current run finish and starts no other. The chain's report is written to
/// `.agentxchain/reports/<chain_id>.json`. Exits as the last run did.
fn chained(store: &Store, config: &Json, a: &Args, max_turns: u64, chain: &Chain) -> ExitCode {
    println!("agentxchain run --chain");
    println!(
        "  Chain mode: enabled (max {} continuations, on: {}, cooldown: {}s)",
        chain.max_chains,
        chain.chain_on.join(","),
        chain.cooldown
    );
    let sig = signals();
    let chain_id = format!("chain-{}", axc_core::util::random_hex(8));
    let started = std::time::Instant::now();
    let started_at = axc_core::util::iso_timestamp(std::time::SystemTime::now());
    let max_runs = chain.max_chains.saturating_add(1);
    let mut runs: Vec<Json> = Vec::new();
    let mut total_turns = 0u64;
    let mut previous: Option<String> = None;
    let mut code = ExitCode::SUCCESS;
    let mut terminal: Option<String> = None;
    for i in 0..max_runs {
        println!();
        println!("  ── Chain run {}/{max_runs} {}", i + 1, "─".repeat(50));
        let mut args = a.clone();
        if let Some(p) = &previous {
            args.continue_from = Some(p.clone());
            args.recover_from = None;
            args.inherit_context = true;
        }
        let t = std::time::Instant::now();
        let run = execute(store, config, &args, max_turns, &sig);
        let ms = t.elapsed().as_millis() as u64;
        let run_id = run.state["run_id"]
            .as_str()
            .map_or_else(|| format!("unknown-{i}"), str::to_owned);
        let status = run.stop.map_or("unknown", Stop::as_str);
        let ic = &run.state["inherited_context"];
        let count = |k: &str| ic[k].as_array().map_or(0, Vec::len);
        runs.push(serde_json::json!({
            "run_id": run_id, "status": status, "turns": run.turns, "duration_ms": ms,
            "provenance_trigger": run.state["provenance"]["trigger"],
            "parent_run_id": run.state["provenance"]["parent_run_id"],
            "inherited_context_summary": if ic.is_object() {
                serde_json::json!({"parent_run_id": ic["parent_run_id"], "parent_status": ic["parent_status"],
                    "inherited_at": ic["inherited_at"],
                    "parent_roles_used": ic["parent_roles_used"].as_array().cloned().unwrap_or_default(),
                    "parent_phases_completed_count": count("parent_phases_completed"),
                    "recent_decisions_count": count("recent_decisions"),
                    "recent_accepted_turns_count": count("recent_accepted_turns")})
            } else { Json::Null },
        }));
        total_turns += run.turns;
        code = run.code;
        previous = Some(run_id.clone());
        if sig.interrupts.load(Ordering::SeqCst) > 0 || sig.abort.load(Ordering::SeqCst) {
            terminal = Some("operator_abort".into());
            break;
        }
        if i + 1 == max_runs {
            terminal = Some("chain_limit_reached".into());
            break;
        }
        if !chain.chain_on.iter().any(|c| c == status) {
            terminal = Some("non_chainable_status".into());
            break;
        }
        // The next run continues this one: it must be on record as finished.
        let mut valid = run_history::parent(store, &run_id);
        if valid.is_err() && matches!(status, "completed" | "blocked") {
            let recorded = if status == "completed" {
                run_history::record_completed(store, &run.state, config)
            } else {
                run_history::record_blocked(store, &run.state, config)
            };
            if recorded.is_ok() {
                valid = run_history::parent(store, &run_id);
            }
        }
        if let Err(e) = valid {
            println!("  Chain: cannot continue — {}", clean(&e));
            terminal = Some("parent_validation_failed".into());
            break;
        }
        println!();
        println!(
            "  Chain: run {status} → starting continuation ({} remaining)...",
            max_runs.saturating_sub(i + 2)
        );
        if chain.cooldown > 0 {
            println!("  Waiting {}s...", chain.cooldown);
            let until = std::time::Instant::now() + std::time::Duration::from_secs(chain.cooldown);
            while std::time::Instant::now() < until
                && sig.interrupts.load(Ordering::SeqCst) == 0
                && !sig.abort.load(Ordering::SeqCst)
            {
                std::thread::sleep(std::time::Duration::from_millis(50));
            }
        }
        if sig.interrupts.load(Ordering::SeqCst) > 0 || sig.abort.load(Ordering::SeqCst) {
            terminal = Some("operator_abort".into());
            break;
        }
    }
    let total_ms = started.elapsed().as_millis() as u64;
    let terminal = terminal.unwrap_or_else(|| "unknown".into());
    let report = serde_json::json!({
        "chain_id": chain_id, "started_at": started_at, "runs": runs,
        "total_turns": total_turns, "total_duration_ms": total_ms, "terminal_reason": terminal,
        "completed_at": axc_core::util::iso_timestamp(std::time::SystemTime::now()),
    });
    // Advisory, as the reference's: a report that cannot be written does not fail the chain.
    let _ = store.write_json(&format!(".agentxchain/reports/{chain_id}.json"), &report);
    println!();
    println!("  ─── Chain Summary ───");
    println!("  Total runs:   {}", runs.len());
    println!("  Total turns:  {total_turns}");
    println!("  Duration:     {}", duration(total_ms));
    println!("  Terminal:     {terminal}");
    code
}

/// The reference's short duration: `850ms`, `12s`, `3m 4s`, `1h 2m`.
fn duration(ms: u64) -> String {
    let s = ms / 1000;
    match (ms, s / 60, s / 3600) {
        (ms, _, _) if ms < 1000 => format!("{ms}ms"),
        (_, 0, _) => format!("{s}s"),
        (_, m, 0) => format!("{m}m {}s", s % 60),
        (_, m, h) => format!("{h}h {}m", m % 60),
    }
}

fn dry_run(store: &Store, config: &Json, a: &Args, max_turns: u64) -> ExitCode {
    let state = store.state().unwrap_or(Json::Null);
    let first = a.role.clone().or_else(|| assign::next_role(&state, config));
    println!("Dry run — no execution");
    println!(
        "  First role:   {}",
        first.as_deref().map_or("(unresolved)".to_owned(), clean)
    );
    println!("  Max turns:    {max_turns}");
    println!(
        "  Gate mode:    {}",
        if a.auto_approve {
            "auto-approve"
        } else {
            "interactive"
        }
    );
    let kind = |role: &str| {
        let rt = config["roles"][role]["runtime"].as_str().unwrap_or("");
        config["runtimes"][rt]["type"]
            .as_str()
            .or(config["roles"][role]["runtime_class"].as_str())
            .unwrap_or("manual")
            .to_owned()
    };
    for role in config["roles"]
        .as_object()
        .into_iter()
        .flatten()
        .map(|(k, _)| k)
    {
        let k = kind(role);
        if k == "manual" {
            println!("  ✗ {} → {k} (not supported in run mode)", clean(role));
        } else {
            println!("  ✓ {} → {k}", clean(role));
        }
    }
    if let Some(r) = first
        && kind(&r) == "manual"
    {
        let r = clean(&r);
        println!();
        println!("  ⚠ The current phase's first role ({r}) is manual.");
        println!(
            "    \"run\" will block immediately. Complete manual turns via \"agentxchain step\" first,"
        );
        println!("    or configure {r} with an automatable runtime.");
    }
    ExitCode::SUCCESS
}

/// What came of dispatching a turn to its agent.
enum Launched {
    /// Its result is staged: accept it.
    Staged,
    /// Reject it with this reason (retried until the role's retries are spent).
    Rejected(String),
    /// Its process never started: the turn is kept as `failed_start` and the run stops.
    StartupFailed(lifecycle::StartFailure),
    /// The loop stops with this error.
    Failed(String),
}

/// What the loop made of a dispatched turn.
enum Settled {
    Accepted,
    Rejected,
    /// Its acceptance conflicted with a turn accepted beside it (the turn waits for a person
    /// or a retry).
    Conflicted,
    Stop(Stop),
}

/// A turn that is dispatched and may be picked up again by the loop.
fn dispatchable(turn: &Json) -> bool {
    matches!(
        turn["status"].as_str(),
        Some("assigned" | "dispatched" | "starting" | "running" | "retrying")
    )
}

impl Loop<'_> {
    fn stopping(&mut self) -> bool {
        let n = self.interrupts.load(Ordering::SeqCst);
        if n >= 1 && !self.told_stopping {
            self.told_stopping = true;
            println!();
            println!("SIGINT received — finishing current turn, then stopping.");
        }
        n >= 1 || self.abort.load(Ordering::SeqCst)
    }

    fn drive(&mut self, max_turns: u64) -> Stop {
        // A config whose gates no routed role can satisfy would only burn retries.
        if let Ok(Some(raw)) = self.store.read_json(axc_kernel::run::store::CONFIG) {
            let (errors, _) = axc_kernel::views::doctor::admission(
                &axc_kernel::views::status::normalize_config(&raw),
            );
            if !errors.is_empty() {
                self.errors.extend(
                    errors
                        .into_iter()
                        .map(|e| format!("Admission control: {e}")),
                );
                return Stop::AdmissionRejected;
            }
        }
        match self.store.state() {
            // A run over a completed one starts afresh, as the reference's `run`; so does a
            // child run over a blocked one.
            Ok(state)
                if state["status"] == "idle"
                    || state["status"] == "completed"
                    || (state["status"] == "blocked" && self.lineage.is_some()) =>
            {
                let started = (|| {
                    let _lock = self.store.lock()?;
                    let mut state = self.store.state()?;
                    if state["status"] == "completed" || state["status"] == "blocked" {
                        state = assign::fresh_idle(&state, self.config);
                    }
                    let (provenance, inherited) = match &self.lineage {
                        Some(l) => (l.provenance.clone(), l.inherited.clone()),
                        None => (
                            serde_json::json!({"trigger": "manual", "parent_run_id": null, "trigger_reason": null, "intake_intent_id": null, "created_by": "operator"}),
                            Json::Null,
                        ),
                    };
                    assign::start_child_run(self.store, self.config, &state, provenance, inherited)
                })();
                if let Err(r) = started {
                    self.errors.push(r.message);
                    return Stop::InitFailed;
                }
            }
            Ok(_) => {}
            Err(r) => {
                self.errors.push(r.message);
                return Stop::InitFailed;
            }
        }
        loop {
            let state = match self.store.state() {
                Ok(s) => s,
                Err(r) => {
                    self.errors.push(r.message);
                    return Stop::Blocked;
                }
            };
            match state["status"].as_str() {
                Some("completed") => {
                    println!("Run completed");
                    return Stop::Completed;
                }
                Some("blocked") => {
                    println!("Run blocked");
                    return Stop::Blocked;
                }
                Some("paused") => match self.gate(&state) {
                    Some(stop) => return stop,
                    None => continue,
                },
                _ => {}
            }
            if self.turns >= max_turns {
                return Stop::MaxTurns;
            }
            let max = axc_kernel::transitions::max_concurrent_turns(
                self.config,
                state["phase"].as_str().unwrap_or(""),
            );
            if max > 1 {
                match self.parallel_round(state, max) {
                    Some(stop) => return stop,
                    None => continue,
                }
            }
            let active = state["active_turns"]
                .as_object()
                .and_then(|m| m.values().next().cloned());
            let turn = match active {
                Some(t) if dispatchable(&t) => t,
                Some(t) => {
                    self.errors.push(parallel::waiting(&t));
                    return Stop::Blocked;
                }
                None => {
                    if axc_kernel::run::intake::preemption(self.store)
                        .is_some_and(|m| m["priority"] == "p0")
                    {
                        return Stop::PriorityPreempted;
                    }
                    if self.stopping() {
                        println!("Run stopped by caller");
                        return Stop::CallerStopped;
                    }
                    let role = self
                        .pick
                        .take()
                        .or_else(|| assign::next_role(&state, self.config));
                    let Some(role) = role else {
                        self.errors.push(format!(
                            "No entry role for phase \"{}\"",
                            s(&state["phase"])
                        ));
                        return Stop::Blocked;
                    };
                    match self.assign(&role) {
                        Ok(t) => t,
                        Err(e) => {
                            self.errors.push(format!("assignTurn({role}): {e}"));
                            return Stop::Blocked;
                        }
                    }
                }
            };
            let launched = self.launch(&turn);
            match self.settle(&turn, launched) {
                Settled::Accepted | Settled::Rejected => {}
                // One turn at a time, a conflict is a person's to resolve.
                Settled::Conflicted => return Stop::Blocked,
                Settled::Stop(stop) => return stop,
            }
        }
    }

    fn assign(&self, role: &str) -> Result<Json, String> {
        let _lock = self.store.lock().map_err(|r| r.message)?;
        let state = self.store.state().map_err(|r| r.message)?;
        let (_, turn) = assign::assign_and_dispatch(self.store, self.config, &state, role, None)?;
        println!("Turn assigned: {} → {}", s(&turn["turn_id"]), clean(role));
        Ok(turn)
    }

    /// Dispatches `turn` to its agent and waits for it (several at once in a parallel round:
    /// this reads the loop, never changes it).
    fn launch(&self, turn: &Json) -> Launched {
        let turn_id = s(&turn["turn_id"]);
        let role = s(&turn["assigned_role"]);
        let runtime_id = s(&turn["runtime_id"]);
        let runtime = &self.config["runtimes"][&runtime_id];
        let kind = cfg::runtime_type(self.config, &runtime_id).to_owned();
        match kind.as_str() {
            "manual" => {
                println!(
                    "Skipping manual role \"{}\" — use agentxchain step for manual dispatch.",
                    clean(&role)
                );
                Launched::Rejected(
                    "manual adapter is not supported in run mode — use agentxchain step".to_owned(),
                )
            }
            "local_cli" => {
                // Dispatched again by the loop, as the reference's run records it: the bundle
                // written afresh, the turn claimed (a worker of an earlier run still alive
                // refuses it).
                if let Err(r) =
                    lifecycle::claim(self.store, self.config, &turn_id, std::process::id())
                {
                    return Launched::Failed(r.message.replace('\n', " "));
                }
                println!(
                    "  Dispatching to local CLI: {}  transport: {}",
                    clean(&local_cli::describe(runtime)),
                    local_cli::transport(runtime).as_str()
                );
                self.progress(turn, "started", 0, 0);
                let started = std::time::Instant::now();
                let mut lines = 0u64;
                let verbose = self.args.verbose;
                let mut echo = |stderr: bool, bytes: &[u8]| {
                    lines += bytes.iter().filter(|b| **b == b'\n').count().max(1) as u64;
                    if verbose {
                        crate::step_cli::echo_piece(stderr, bytes);
                    }
                };
                let watch = local_cli::Watch {
                    cancel: &self.abort,
                    echo: Some(&mut echo),
                };
                let outcome = local_cli::run(self.store, self.config, &turn_id, watch);
                let milestone = match &outcome {
                    Ok(Outcome::Staged) => "completed",
                    Ok(Outcome::TimedOut) => "timed_out",
                    _ => "failed",
                };
                self.progress(
                    turn,
                    milestone,
                    lines,
                    started.elapsed().as_secs_f64().round() as u64,
                );
                match outcome {
                    Err(r) => Launched::Failed(format!("dispatch threw for {role}: {}", r.message)),
                    Ok(Outcome::Staged) => Launched::Staged,
                    Ok(Outcome::StartupFailed { failure_type, .. }) => {
                        Launched::StartupFailed(lifecycle::StartFailure {
                            failure_type,
                            threshold_ms: local_cli::startup_watchdog_ms(self.config, runtime),
                        })
                    }
                    Ok(Outcome::Aborted) => {
                        Launched::Rejected("dispatch aborted by operator".to_owned())
                    }
                    Ok(Outcome::TimedOut) => Launched::Rejected("dispatch timed out".to_owned()),
                    Ok(Outcome::Failed { error, .. }) => Launched::Rejected(error),
                }
            }
            other => Launched::Rejected(format!(
                "runtime type \"{other}\" is not dispatched by this build — use agentxchain step, or a local_cli runtime"
            )),
        }
    }

    /// Records what came of dispatching `turn`: its staged result accepted, or the turn
    /// rejected (retried until the role's retries are spent).
    fn settle(&mut self, turn: &Json, launched: Launched) -> Settled {
        let turn_id = s(&turn["turn_id"]);
        let role = s(&turn["assigned_role"]);
        match launched {
            Launched::Staged => self.accept(&turn_id, &role),
            Launched::Failed(message) => {
                self.errors.push(message);
                Settled::Stop(Stop::Blocked)
            }
            Launched::StartupFailed(f) => {
                if let Err(r) = lifecycle::fail_startup(self.store, &turn_id, &f) {
                    self.errors.push(r.message);
                }
                println!("Run blocked");
                Settled::Stop(Stop::Blocked)
            }
            Launched::Rejected(_) if self.abort.load(Ordering::SeqCst) => {
                Settled::Stop(Stop::CallerStopped)
            }
            Launched::Rejected(reason) => match self.reject(&turn_id, &role, &reason) {
                Some(stop) => Settled::Stop(stop),
                None => Settled::Rejected,
            },
        }
    }

    /// A `dispatch_progress` event (the reference's run log of a dispatch: started, then
    /// completed, failed or timed out, with the output lines seen).
    fn progress(&self, turn: &Json, milestone: &str, lines: u64, elapsed: u64) {
        let state = self.store.state().unwrap_or(Json::Null);
        let _ = self.store.emit(
            "dispatch_progress",
            &state,
            serde_json::json!({"turn_id": turn["turn_id"], "assigned_role": turn["assigned_role"]}),
            serde_json::json!({"milestone": milestone, "output_lines": lines, "elapsed_seconds": elapsed, "silent_seconds": 0}),
        );
    }

    fn reject(&mut self, turn_id: &str, role: &str, reason: &str) -> Option<Stop> {
        match reject::reject_as(
            self.store,
            Some(turn_id),
            Some(reason),
            Some(("dispatch", vec![reason.to_owned()])),
        ) {
            Ok(r) => {
                if let Some(e) = &r.escalation {
                    crate::governed::escalation_notice(e);
                }
                println!("Turn rejected: {turn_id} — {}", clean(reason));
                if r.escalated {
                    self.errors
                        .push(format!("Turn rejected for {role}, retries exhausted"));
                    println!("Run blocked");
                    return Some(Stop::RejectExhausted);
                }
                None
            }
            Err(r) => {
                self.errors
                    .push(format!("rejectTurn({role}): {}", r.message));
                // The rejection was refused (a retry would take a config the agent changed,
                // say): the run is blocked on it, the turn retained with the refusal as the
                // block's detail, so state.json says what the summary says and `status`
                // names the recovery.
                match lifecycle::block_dispatch(
                    self.store,
                    turn_id,
                    "rejection_refused",
                    &r.message,
                ) {
                    Ok(b) => {
                        if let Some(e) = &b.escalation {
                            crate::governed::escalation_notice(e);
                        }
                    }
                    Err(e) => self
                        .errors
                        .push(format!("Could not record the block: {}", e.message)),
                }
                Some(Stop::Blocked)
            }
        }
    }

    fn accept(&mut self, turn_id: &str, role: &str) -> Settled {
        match accept::accept(self.store, Some(turn_id)) {
            Ok(accept::Accepted::Done { escalation, .. }) => {
                if let Some(e) = &escalation {
                    crate::governed::escalation_notice(e);
                }
            }
            Ok(accept::Accepted::Conflict { conflict, .. }) => {
                self.errors.push(format!(
                    "acceptTurn({role}): Acceptance conflict detected for turn {turn_id} ({})",
                    clean(&crate::governed::s(&conflict["suggested_resolution"]))
                ));
                return Settled::Conflicted;
            }
            Ok(accept::Accepted::Failed { stage, errors, .. }) => {
                self.errors.push(format!(
                    "acceptTurn({role}): Validation failed at stage {stage}: {}",
                    errors.join("; ")
                ));
                return Settled::Stop(Stop::Blocked);
            }
            Err(r) => {
                self.errors
                    .push(format!("acceptTurn({role}): {}", r.message));
                return Settled::Stop(Stop::Blocked);
            }
            Ok(accept::Accepted::Hook(h)) => {
                if let Some(e) = &h.escalation {
                    crate::governed::escalation_notice(e);
                }
                self.errors
                    .push(format!("acceptTurn({role}): {}", clean(&h.error)));
                return Settled::Stop(Stop::Blocked);
            }
        }
        if self.args.auto_checkpoint
            && let Err(r) = checkpoint::checkpoint(self.store, Some(turn_id))
        {
            self.errors
                .push(format!("afterAccept({role}): {}", r.message));
            return Settled::Stop(Stop::Blocked);
        }
        self.turns += 1;
        println!("Turn accepted: {turn_id}");
        Settled::Accepted
    }

    /// A paused run's gate: approved (with `--auto-approve`, or a person's `y` at a
    /// terminal) or held. `None` when the loop goes on.
    fn gate(&mut self, state: &Json) -> Option<Stop> {
        let kind = if !state["pending_phase_transition"].is_null() {
            "phase_transition"
        } else if !state["pending_run_completion"].is_null() {
            "run_completion"
        } else {
            return Some(Stop::Blocked);
        };
        println!("Gate paused: {kind}");
        if !self.approve(kind, state) {
            println!("Gate held: {kind} — run paused");
            return Some(Stop::GateHeld);
        }
        let done = if kind == "phase_transition" {
            approve::approve_transition(self.store)
        } else {
            approve::approve_completion(self.store)
        };
        if let Err(e) = done {
            self.errors.push(clean(&e.to_string()));
            return Some(Stop::Blocked);
        }
        self.gates += 1;
        println!("Gate approved: {kind}");
        None
    }

    fn approve(&self, kind: &str, state: &Json) -> bool {
        if self.args.auto_approve {
            let phase = state["phase"].as_str().unwrap_or("");
            if let Some(gate) = cfg::exit_gate(self.config, phase)
                && self.config["gates"][gate]["credentialed"] == true
            {
                println!(
                    "  Gate \"{}\" is credentialed — auto-approval refused. A human must approve (lights-out without blind trust).",
                    clean(gate)
                );
                return false;
            }
            println!("  Auto-approved {kind} gate");
            return true;
        }
        if !std::io::stdin().is_terminal() {
            println!("  Gate pause: {kind} — stdin is not a TTY, failing closed.");
            println!("  Use --auto-approve for non-interactive mode.");
            return false;
        }
        let target = if kind == "phase_transition" {
            state["pending_phase_transition"]["to"]
                .as_str()
                .unwrap_or("(next phase)")
                .to_owned()
        } else {
            "run completion".to_owned()
        };
        println!();
        println!("Gate pause: {kind}");
        println!("  Phase: {} → {}", s(&state["phase"]), clean(&target));
        print!("  Approve? [y/N] ");
        let _ = std::io::stdout().flush();
        let mut answer = String::new();
        let _ = std::io::stdin().lock().read_line(&mut answer);
        matches!(answer.trim().to_lowercase().as_str(), "y" | "yes")
    }

    fn summary(&self, stop: Stop) -> ExitCode {
        println!();
        println!("─── Run Summary ───");
        println!("  Status:  {}", stop.as_str());
        println!("  Turns:   {}", self.turns);
        println!("  Gates:   {} approved", self.gates);
        if self.errors.is_empty() {
            println!("  Errors:  none");
        } else {
            println!("  Errors:  {}", self.errors.len());
            for e in &self.errors {
                println!("    {}", clean(e));
            }
        }
        if matches!(stop, Stop::Blocked | Stop::RejectExhausted)
            && let Ok(state) = self.store.state()
        {
            let r = axc_kernel::views::status::recovery(&state, self.config);
            if !r.is_null() {
                println!();
                println!("  Recovery: {}", clean(&s(&r["typed_reason"])));
                println!("  Action:   {}", clean(&s(&r["recovery_action"])));
                if let Some(d) = r["detail"].as_str().filter(|d| !d.is_empty()) {
                    println!("  Detail:   {}", clean(d));
                }
            }
        }
        match stop {
            Stop::Completed | Stop::GateHeld | Stop::CallerStopped | Stop::MaxTurns => {
                ExitCode::SUCCESS
            }
            _ => ExitCode::from(1),
        }
    }
}
