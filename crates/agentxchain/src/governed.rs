//! The governed-run commands' texts: each calls one kernel operation
//! (`axc_kernel::run`) and prints what the reference prints, exiting as it does.

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use axc_kernel::run::{
    self, Refusal, Store, accept, approve, assign, checkpoint, config as cfg, escalate, scaffold,
};
use serde_json::Value as Json;

const RULE: &str = "────────────────────────────────────────────";

fn code(c: i32) -> ExitCode {
    ExitCode::from(c.clamp(0, 255) as u8)
}

pub(crate) fn refuse(r: &Refusal) -> ExitCode {
    if let Some(w) = &r.warning {
        eprintln!("{w}");
    }
    println!("{}", r.message);
    code(r.exit_code)
}

use axc_core::util::printable as clean;

/// A string field of the run's files as one printable line (empty when not a string).
pub(crate) fn s(v: &Json) -> String {
    clean(v.as_str().unwrap_or(""))
}

/// The project root: the nearest ancestor of the current directory holding agentxchain.json.
/// The run's active turns, in state order.
pub(crate) fn active_turns(state: &Json) -> Vec<Json> {
    state["active_turns"]
        .as_object()
        .map(|m| m.values().cloned().collect())
        .unwrap_or_default()
}

pub(crate) fn store() -> Result<Store, ExitCode> {
    let cwd = std::env::current_dir().unwrap_or_else(|_| PathBuf::from("."));
    match axc_core::config::find_root(&cwd) {
        Some(root) => Ok(Store::new(root)),
        None => {
            println!("No agentxchain.json found. Run `agentxchain init` first.");
            Err(ExitCode::from(1))
        }
    }
}

macro_rules! project {
    () => {
        match store() {
            Ok(s) => s,
            Err(c) => return c,
        }
    };
}

/// The project, once its config validates: a command that prints before its kernel operation
/// reads the config refuses first, with the reference's texts and nothing else printed.
macro_rules! configured {
    () => {{
        let store = project!();
        if let Err(r) = cfg::load(&store) {
            return refuse(&r);
        }
        store
    }};
}

/// `init --governed`.
pub fn init(
    dir: Option<&Path>,
    goal: Option<&str>,
    template: &str,
    dev: &scaffold::DevRuntime,
    yes: bool,
) -> ExitCode {
    let Some(tpl) = scaffold::template(template) else {
        eprintln!("  Error: Unknown template \"{}\".", clean(template));
        eprintln!();
        eprintln!("  Available templates:");
        for (id, summary, _) in scaffold::TEMPLATES {
            eprintln!("    {id:<13} {summary}");
        }
        return ExitCode::from(1);
    };
    if let Some(d) = dir
        && d.as_os_str().to_string_lossy().trim().is_empty()
    {
        eprintln!("  Error: --dir must not be empty.");
        return ExitCode::from(1);
    }
    let cwd = std::env::current_dir().unwrap_or_else(|_| PathBuf::from("."));
    let in_place =
        dir.is_none() && cwd.join(".git").exists() && !cwd.join("agentxchain.json").exists();
    let (target, label) = match dir {
        Some(d) => (cwd.join(d), d.display().to_string()),
        None if in_place => (cwd.clone(), ".".to_owned()),
        None => (
            cwd.join("my-agentxchain-project"),
            "my-agentxchain-project".to_owned(),
        ),
    };
    let name = if dir.is_some() || in_place {
        axc_core::util::resolve_path(&target)
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_else(|| "My AgentXchain Project".into())
    } else {
        "My AgentXchain Project".to_owned()
    };
    let made = match scaffold::governed(&target, &tpl, &name, goal, dev, yes) {
        Ok(m) => m,
        Err(r) => {
            eprintln!("  Error: {}", r.message);
            return code(r.exit_code);
        }
    };
    let config = &made.config;
    let roles: Vec<&String> = config["roles"]
        .as_object()
        .into_iter()
        .flatten()
        .map(|(k, _)| k)
        .collect();
    let role_list = roles
        .iter()
        .map(|r| clean(r))
        .collect::<Vec<_>>()
        .join(", ");
    let runtime_of = |role: &Json| &config["runtimes"][role["runtime"].as_str().unwrap_or("")];
    println!();
    println!("  ✓ Created governed project {}/", clean(&label));
    println!();
    println!("    ├── agentxchain.json  (governed)");
    println!("    ├── .agentxchain/");
    println!("    │    ├── state.json / history.jsonl / decision-ledger.jsonl");
    println!("    │    ├── staging/");
    println!("    │    ├── prompts/  ({role_list})");
    println!("    │    ├── reviews/");
    println!("    │    └── dispatch/");
    println!("    ├── .planning/");
    let lines = scaffold::planning_summary(&tpl, config);
    for (i, line) in lines.iter().enumerate() {
        let branch = if i + 1 == lines.len() {
            "└──"
        } else {
            "├──"
        };
        println!("    │    {branch} {line}");
    }
    println!("    └── TALK.md");
    println!();
    println!("  Roles: {role_list}");
    println!(
        "  Phases: {} {}",
        made.phases.join(" → "),
        if tpl.defines_routing() {
            "(template-defined; edit routing in agentxchain.json to customize)"
        } else {
            "(default; extend via routing in agentxchain.json)"
        }
    );
    println!("  Template: {}", tpl.id);
    if let Some(g) = config["project"]["goal"].as_str() {
        println!("  Goal: {}", clean(g));
    }
    let dev_id = config["roles"]["dev"]["runtime"].as_str();
    let dev_summary = match dev_id.map(|id| (id, &config["runtimes"][id])) {
        Some((id, rt)) if rt.is_object() => {
            let ty = rt["type"].as_str().unwrap_or("");
            let command = match &rt["command"] {
                Json::Array(parts) => parts
                    .iter()
                    .map(|p| {
                        p.as_str()
                            .map(str::to_owned)
                            .unwrap_or_else(|| p.to_string())
                    })
                    .collect::<Vec<_>>()
                    .join(" "),
                Json::String(c) => c.clone(),
                _ => String::new(),
            };
            if ty == "manual" {
                format!("{id} (manual)")
            } else if command.is_empty() {
                format!("{id} ({ty})")
            } else {
                format!(
                    "{command} ({})",
                    rt["prompt_transport"].as_str().unwrap_or(ty)
                )
            }
        }
        _ => "unconfigured".to_owned(),
    };
    println!("  Dev runtime: {}", clean(&dev_summary));
    println!("  Protocol: governed convergence");
    println!();
    let role_entries: Vec<(&String, &Json)> =
        config["roles"].as_object().into_iter().flatten().collect();
    let manual: Vec<&str> = role_entries
        .iter()
        .filter(|(_, r)| runtime_of(r)["type"] == "manual")
        .map(|(id, _)| id.as_str())
        .collect();
    let keyed: Vec<(&str, &str)> = role_entries
        .iter()
        .filter_map(|(id, r)| {
            runtime_of(r)["auth_env"]
                .as_str()
                .filter(|e| !e.is_empty())
                .map(|e| (id.as_str(), e))
        })
        .collect();
    if !keyed.is_empty() {
        let mut envs: Vec<&str> = Vec::new();
        for (_, e) in &keyed {
            if !envs.contains(e) {
                envs.push(e);
            }
        }
        let names: Vec<&str> = keyed.iter().map(|(id, _)| *id).collect();
        if envs
            .iter()
            .all(|e| std::env::var_os(e).is_some_and(|v| !v.is_empty()))
        {
            println!(
                "  Ready: all runtimes configured ({} detected)",
                envs.join(", ")
            );
        } else {
            println!(
                "  Mixed-mode: {} work immediately (manual).",
                manual.join(", ")
            );
            println!(
                "    {} need {} to dispatch automatically.",
                names.join(", "),
                envs.join(", ")
            );
            println!("    Without it, those turns fall back to manual input.");
            if config["roles"]["qa"]["runtime"] == "api-qa"
                && config["runtimes"]["manual-qa"].is_object()
            {
                println!(
                    "    No-key QA path: change roles.qa.runtime from \"api-qa\" to \"manual-qa\" in agentxchain.json."
                );
            }
        }
        println!();
    } else if role_entries
        .iter()
        .all(|(_, r)| runtime_of(r)["type"] == "manual")
    {
        println!("  Ready: manual-only scaffold (no API keys and no local coding CLI required).");
        println!(
            "    Use agentxchain step for the first governed turn; run requires automatable runtimes."
        );
        println!();
    }
    println!("  Next:");
    if label != "." {
        println!("    cd {}", clean(&label));
    }
    if !target.ancestors().any(|d| d.join(".git").exists()) {
        println!("    git init # initialize the governed repo");
    }
    println!("    agentxchain doctor # verify runtimes, config, and readiness");
    println!("    git add -A # stage the governed scaffold");
    println!("    git commit -m \"initial governed scaffold\" # checkpoint the starting state");
    println!("    agentxchain step # run the first governed turn");
    println!("    agentxchain status # inspect phase, gate, and turn state");
    println!();
    ExitCode::SUCCESS
}

/// The run context `resume` and `step` print first (`agentxchain <command>`, the run, its
/// phase, origin, parent and exit gate).
pub(crate) fn gate_context(command: &str, config: &Json, state: &Json) {
    println!();
    println!("agentxchain {command}");
    println!(
        "  Run:      {}",
        state["run_id"].as_str().unwrap_or("(uninitialized)")
    );
    let phase = state["phase"].as_str().unwrap_or("");
    println!(
        "  Phase:    {}",
        if phase.is_empty() {
            "(unknown)".to_owned()
        } else {
            clean(phase)
        }
    );
    if let Some(origin) = origin(&state["provenance"]) {
        println!("  Origin:   {}", clean(&origin));
    }
    if let Some(parent) = state["inherited_context"]["parent_run_id"]
        .as_str()
        .filter(|p| !p.is_empty())
    {
        println!(
            "  Inherits: parent {} ({})",
            clean(parent),
            clean(
                state["inherited_context"]["parent_status"]
                    .as_str()
                    .unwrap_or("unknown")
            )
        );
    }
    if let Some(gate) = cfg::exit_gate(config, phase) {
        let status = state["phase_gate_status"][gate]
            .as_str()
            .unwrap_or("pending");
        println!("  Gate:     {gate} ({status})");
        let g = &config["gates"][gate];
        let files: Vec<String> = g["requires_files"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(Json::as_str)
            .map(|f| clean(f.strip_prefix(".planning/").unwrap_or(f)))
            .collect();
        if !files.is_empty() {
            println!("  Files:    {}", files.join(", "));
        }
        let mut needs = Vec::new();
        if g["requires_human_approval"] == true {
            needs.push("human approval");
        }
        if g["requires_verification_pass"] == true {
            needs.push("verification pass");
        }
        if !needs.is_empty() {
            println!("  Needs:    {}", needs.join(", "));
        }
    }
    println!();
}

/// What started the run, in one line (`intake intent <id> ("<charter>")`), or nothing for a
/// plain manual start.
pub fn origin(p: &Json) -> Option<String> {
    let text = |k: &str| {
        p[k].as_str()
            .map(str::trim)
            .filter(|x| !x.is_empty())
            .map(str::to_owned)
    };
    const TRIGGERS: [&str; 7] = [
        "manual",
        "continuation",
        "recovery",
        "intake",
        "vision_scan",
        "schedule",
        "coordinator",
    ];
    let trigger = text("trigger").filter(|t| TRIGGERS.contains(&t.as_str()))?;
    let creator = text("created_by")
        .filter(|c| ["operator", "continuous_loop", "coordinator"].contains(&c.as_str()))
        .unwrap_or_else(|| "operator".into());
    let parent = text("parent_run_id");
    let intent = text("intake_intent_id");
    let reason = text("trigger_reason");
    if trigger == "manual"
        && parent.is_none()
        && intent.is_none()
        && reason.is_none()
        && creator != "coordinator"
    {
        return None;
    }
    let mut details = Vec::new();
    if let Some(p) = &parent {
        details.push(format!("from {p}"));
    }
    if let Some(i) = &intent {
        details.push(format!("intent {i}"));
    }
    let mut out = if details.is_empty() {
        trigger
    } else {
        format!("{trigger} {}", details.join(" "))
    };
    match creator.as_str() {
        "coordinator" => out.push_str(" (created by coordinator)"),
        "continuous_loop" => out.push_str(" (created by continuous loop)"),
        _ => {}
    }
    if let Some(r) = reason {
        out.push_str(&format!(" (\"{r}\")"));
    }
    Some(out)
}

fn turn_assigned(config: &Json, state: &Json, turn: &Json) {
    let id = s(&turn["turn_id"]);
    let role = turn["assigned_role"].as_str().unwrap_or("");
    println!();
    println!("  Turn Assigned");
    println!("  {RULE}");
    println!();
    println!("  Turn:     {id}");
    println!("  Role:     {}", cfg::role_title(config, role));
    println!("  Phase:    {}", s(&state["phase"]));
    println!("  Runtime:  {}", s(&turn["runtime_id"]));
    println!("  Attempt:  {}", turn["attempt"]);
    println!();
    println!("  Dispatch bundle: .agentxchain/dispatch/turns/{id}/");
    println!("  Prompt:           .agentxchain/dispatch/turns/{id}/PROMPT.md");
    println!("  Submit result to: .agentxchain/staging/{id}/turn-result.json");
    println!();
    println!("  When done, run: agentxchain validate --mode turn");
    println!();
}

fn recovery_block(reason: &str, owner: &str, action: &str, turn: &str, detail: &str) {
    let detail = clean(detail);
    println!("  Reason:   {reason}");
    println!("  Owner:    {owner}");
    println!("  Action:   {action}");
    println!("  Turn:     {turn}");
    println!("  Detail:   {detail}");
}

fn awaiting(state: &Json) {
    println!("This run is awaiting approval.");
    if let Some(gate) = state["pending_phase_transition"]["gate"].as_str() {
        println!();
        recovery_block(
            "pending_phase_transition",
            "human",
            "agentxchain approve-transition",
            "cleared",
            gate,
        );
        println!(
            "  Pending:  {} → {}",
            s(&state["pending_phase_transition"]["from"]),
            s(&state["pending_phase_transition"]["to"])
        );
    } else if let Some(gate) = state["pending_run_completion"]["gate"].as_str() {
        println!();
        recovery_block(
            "pending_run_completion",
            "human",
            "agentxchain approve-completion",
            "cleared",
            gate,
        );
    }
}

/// The stale-turn watchdog before a command acts on the run: the ghost or stale turns it found
/// (now recorded, the run blocked), printed as the reference prints them, exit 1.
pub(crate) fn watchdog_stop(store: &Store, config: &Json) -> Option<ExitCode> {
    let (ghosts, stale) = match run::watchdog::reconcile(store, config) {
        Ok(found) => found,
        Err(r) => return Some(refuse(&r)),
    };
    let (title, list, age) = if !ghosts.is_empty() {
        (
            "Ghost turn detected — subprocess never started.",
            ghosts,
            "ghost",
        )
    } else if !stale.is_empty() {
        ("Stale turn detected.", stale, "stale")
    } else {
        return None;
    };
    println!("{title}");
    println!();
    for v in &list {
        println!("  Turn:    {} ({})", v.turn_id, clean(&v.role));
        println!("  Runtime: {}", clean(&v.runtime_id));
        if age == "ghost" {
            println!(
                "  Age:     {}s with no subprocess output",
                v.running_ms / 1000
            );
        } else {
            println!("  Age:     {}m with no output", v.running_ms / 60000);
        }
        println!(
            "  Recover: agentxchain reissue-turn --turn {} --reason {age}",
            v.turn_id
        );
        println!();
    }
    Some(ExitCode::from(1))
}

/// What `resume` and `step` say before the turn: the escalation a reactivation resolved, the
/// run started or reactivated, the phase a pending request moved it to.
pub fn started(
    resolved: Option<&Json>,
    initialized: Option<&str>,
    reactivated: bool,
    run_id: &Json,
    advanced: Option<&(String, String)>,
    undecided: Option<&String>,
) {
    if let Some(e) = resolved {
        resolved_notice(e);
    }
    if let Some(id) = initialized {
        println!("Initialized governed run: {id}");
    } else if reactivated {
        println!("Resumed blocked run: {}", s(run_id));
    }
    if let Some((from, to)) = advanced {
        println!("Advanced phase before dispatch: {from} → {to}");
    }
    if let Some(why) = undecided {
        eprintln!("Warning: {why}");
    }
}

/// [`started`] for a run resumed (a retained turn dispatched again is no reactivation to
/// announce).
pub fn started_resumed(r: &assign::Resumed) {
    started(
        r.resolved.as_ref(),
        r.initialized.as_deref(),
        r.reactivated && !r.redispatched,
        &r.state["run_id"],
        r.advanced.as_ref(),
        r.undecided.as_ref(),
    );
}

/// [`started`] for an assignment that then failed.
pub fn started_before_failure(f: &assign::AssignFailed) {
    started(
        f.resolved.as_ref(),
        f.initialized.as_deref(),
        f.reactivated,
        &f.context["run_id"],
        f.advanced.as_ref(),
        f.undecided.as_ref(),
    );
}

/// `resume` (and the second half of `unblock`).
pub fn resume(opts: assign::Options) -> ExitCode {
    let store = project!();
    let config = match cfg::load(&store) {
        Ok(c) => c,
        Err(r) => return refuse(&r),
    };
    if let Some(code) = watchdog_stop(&store, &config) {
        return code;
    }
    match assign::resume(&store, &opts) {
        Ok(mut r) => {
            started_resumed(&r);
            gate_context("resume", &config, &r.context);
            let role = r.bind.as_ref().map_or_else(
                || r.turn["assigned_role"].clone(),
                |b| Json::String(b.1.clone()),
            );
            if r.redispatched {
                println!("Re-dispatching blocked turn: {}", s(&r.turn["turn_id"]));
                println!("  Role:    {}", s(&r.turn["assigned_role"]));
                println!("  Attempt: {}", r.turn["attempt"]);
                println!();
            } else if opts.role.is_none()
                && r.context["next_recommended_role"].is_string()
                && r.context["next_recommended_role"] == role
            {
                println!("Using recommended role: {} (from previous turn)", s(&role));
            }
            if let Some((_, role)) = r.bind.take() {
                match bind(&store, &role, r.state["run_id"].as_str(), true) {
                    Ok((state, turn)) => {
                        r.state = state;
                        r.turn = turn;
                    }
                    Err(c) => return c,
                }
            }
            if !r.redispatched
                && let Some(w) = axc_kernel::budget::assignment_warning(&r.state, &config)
            {
                println!("Warning: {w}");
            }
            turn_assigned(&config, &r.state, &r.turn);
            ExitCode::SUCCESS
        }
        Err(assign::Stop::Refused(r)) => refuse(&r),
        Err(assign::Stop::TurnsActive(turns, state)) => {
            if let [t] = turns.as_slice() {
                println!("A turn is already active:");
                println!("  Turn:  {}", s(&t["turn_id"]));
                println!("  Role:  {}", s(&t["assigned_role"]));
                println!("  Phase: {}", s(&state["phase"]));
                println!();
                println!(
                    "The dispatch bundle is at: .agentxchain/dispatch/turns/{}/",
                    s(&t["turn_id"])
                );
            } else {
                println!("{} turns are already active:", turns.len());
                turn_lines(&turns);
                println!();
            }
            println!("Complete or accept/reject active turns before resuming.");
            println!("Use agentxchain step --resume to continue waiting for an active turn.");
            ExitCode::from(1)
        }
        Err(assign::Stop::AwaitingApproval(state)) => {
            awaiting(&state);
            ExitCode::from(1)
        }
        Err(assign::Stop::AssignFailed(f)) => {
            started_before_failure(&f);
            gate_context("resume", &config, &f.context);
            assign_failed(&f, &config)
        }
        Err(assign::Stop::Settled(st)) => settled(&st),
    }
}

/// What `unblock` says when the run's standing exit gate settled it without a turn to assign:
/// paused for a person's approval, completed, or blocked again.
pub(crate) fn settled(st: &assign::Settled) -> ExitCode {
    started(
        st.resolved.as_ref(),
        None,
        true,
        &st.state["run_id"],
        None,
        None,
    );
    match &st.outcome {
        assign::SettledBy::AwaitingApproval => {
            awaiting(&st.state);
            ExitCode::from(1)
        }
        assign::SettledBy::Completed => {
            println!("Completed run before dispatch: {}", s(&st.state["run_id"]));
            ExitCode::SUCCESS
        }
        assign::SettledBy::Unsettled {
            completion,
            undecided,
            reasons,
            escalation,
        } => {
            if let Some(why) = undecided {
                eprintln!("Warning: {why}");
            }
            if let Some(e) = escalation {
                escalation_notice(e);
            }
            // Not in the reference's output: what the person has to fix.
            for r in reasons {
                println!("  Gate: {}", clean(r));
            }
            println!(
                "Unblock did not materialize {}; leaving the run blocked for manual recovery.",
                if *completion {
                    "run completion"
                } else {
                    "a phase transition"
                }
            );
            // Not in the reference's output: the two ways on (its recovery names
            // approve-*, which has nothing pending to approve here).
            if let Some(id) = escalation
                .as_ref()
                .and_then(|e| e["escalation_id"].as_str())
            {
                println!(
                    "  Once the gate can pass: agentxchain unblock {} judges it again. To go on in this phase instead: agentxchain resume.",
                    clean(id)
                );
            }
            ExitCode::from(1)
        }
    }
}

/// `restart`.
pub fn restart(role: Option<&str>) -> ExitCode {
    use run::restart::{self, Outcome};
    let store = project!();
    // Every line may carry values from the run's files (a forged branch name, run id, role):
    // printed with their control characters escaped.
    let notes = |notes: &[(bool, String)]| {
        for (_, line) in notes {
            println!("{}", clean(line));
        }
    };
    match restart::restart(&store, role) {
        Err(stop) => {
            notes(&stop.notes);
            for line in &stop.lines {
                println!("{}", clean(line));
            }
            ExitCode::from(1)
        }
        Ok(r) => {
            notes(&r.notes);
            match &r.outcome {
                Outcome::Pending => {}
                Outcome::Assigned {
                    turn_id,
                    role,
                    intent,
                } => {
                    if let Some(id) = intent {
                        println!("Bound approved intent to next turn: {}", clean(id));
                    }
                    println!("✓ Restarted run {}", clean(&r.run_id));
                    println!("  Phase: {}", clean(&r.phase));
                    println!("  Turn: {}", clean(turn_id));
                    println!("  Role: {}", clean(role));
                    println!(
                        "  Dispatch: .agentxchain/dispatch/turns/{}/",
                        clean(turn_id)
                    );
                    if let Some((reason, at)) = &r.checkpoint {
                        println!("  Last checkpoint: {} at {}", clean(reason), clean(at));
                    }
                }
                Outcome::Reconnected { turns } => {
                    println!("✓ Reconnected to run {}", clean(&r.run_id));
                    println!("  Phase: {}", clean(&r.phase));
                    println!("  Active turns: {}", clean(&turns.join(", ")));
                    println!(
                        "  Complete the active turn(s) with `agentxchain accept-turn` or `agentxchain step`."
                    );
                }
            }
            println!("  Recovery report: {}", restart::REPORT);
            ExitCode::SUCCESS
        }
    }
}

/// `reconcile-state [--accept-operator-head]`.
pub fn reconcile_state(accept: bool) -> ExitCode {
    use run::reconcile::{self, Reconciled};
    let store = project!();
    if let Err(r) = cfg::load(&store) {
        if r.message.starts_with("The resume command") {
            println!("The reconcile-state command is only available for governed projects.");
            return ExitCode::from(1);
        }
        return refuse(&r);
    }
    if !accept {
        println!("No reconciliation action selected.");
        println!(
            "Run `agentxchain reconcile-state --accept-operator-head` to accept safe operator commits on top of the last checkpoint."
        );
        return ExitCode::from(1);
    }
    match reconcile::accept_operator_head(&store) {
        Err(r) => refuse(&r),
        Ok(Err(refused)) => {
            println!("Reconcile refused ({}).", refused.error_class);
            println!("{}", refused.message);
            if let Some(p) = &refused.offending_path {
                println!("Offending path: {}", clean(p));
            }
            if let Some(c) = &refused.offending_commit {
                println!("Offending commit: {c}");
            }
            println!(
                "Manual recovery: inspect the commit range, restore governed state artifacts if needed, then restart from an explicit checkpoint."
            );
            ExitCode::from(1)
        }
        Ok(Ok(Reconciled::NoOp { head })) => {
            println!(
                "State already reconciled at {}.",
                &head[..head.len().min(8)]
            );
            ExitCode::SUCCESS
        }
        Ok(Ok(Reconciled::Accepted {
            previous_baseline,
            head,
            commits,
            paths_touched,
        })) => {
            println!("Reconciled {} operator commit(s).", commits.len());
            println!("Previous baseline: {}", clean(&previous_baseline));
            println!("Accepted HEAD:      {head}");
            if !paths_touched.is_empty() {
                let paths: Vec<String> = paths_touched.iter().map(|p| clean(p)).collect();
                println!("Paths touched:      {}", paths.join(", "));
            }
            ExitCode::SUCCESS
        }
    }
}

/// `Acceptance Conflict Detected`, as the reference prints it (with the recovery when the
/// conflict blocked the run).
pub(crate) fn conflict_detected(conflict: &Json, state: &Json, config: &Json) {
    let files: Vec<String> = conflict["conflicting_files"]
        .as_array()
        .into_iter()
        .flatten()
        .map(s)
        .collect();
    println!();
    println!("  Acceptance Conflict Detected");
    println!("  {RULE}");
    println!();
    println!(
        "  Turn:     {}",
        s(&conflict["conflicting_turn"]["turn_id"])
    );
    println!("  Role:     {}", s(&conflict["conflicting_turn"]["role"]));
    println!(
        "  Files:    {}",
        if files.is_empty() {
            "(none)".to_owned()
        } else {
            files.join(", ")
        }
    );
    println!(
        "  Overlap:  {}%",
        axc_core::util::to_fixed(conflict["overlap_ratio"].as_f64().unwrap_or(0.0) * 100.0, 0)
    );
    println!("  Suggest:  {}", s(&conflict["suggested_resolution"]));
    if state["status"] == "blocked" {
        let r = axc_kernel::views::status::recovery(state, config);
        if r.is_object() {
            println!("  Action:   {}", s(&r["recovery_action"]));
        }
    }
    println!();
}

/// The reference's list of active turns: `  ● <turn> — <role> (<status>)` each.
pub(crate) fn turn_lines(turns: &[Json]) {
    for t in turns {
        println!(
            "  ● {} — {} ({})",
            s(&t["turn_id"]),
            s(&t["assigned_role"]),
            s(&t["status"])
        );
    }
}

/// The next turn takes the waiting intake intent (planned and started for `role`; `Bound
/// approved intent to next turn: <id>`), or, when it cannot, is a plain turn of `role` — as the
/// reference's `resume` and `step`. `(state, turn)`.
pub(crate) fn bind(
    store: &Store,
    role: &str,
    run_id: Option<&str>,
    announce: bool,
) -> Result<(Json, Json), ExitCode> {
    if let Some(Ok(reply)) = run::intake::bind_next(store, role, run_id) {
        let state = store.state().map_err(|r| refuse(&r))?;
        let turn = state["active_turns"][s(&reply["turn_id"])].clone();
        if announce {
            println!(
                "Bound approved intent to next turn: {}",
                s(&reply["intent"]["intent_id"])
            );
        }
        return Ok((state, turn));
    }
    let opts = assign::Options {
        role: Some(role.to_owned()),
        ..Default::default()
    };
    match assign::resume(store, &opts) {
        Ok(r) => Ok((r.state, r.turn)),
        Err(assign::Stop::AssignFailed(f)) => {
            let config = cfg::load(store).unwrap_or_default();
            Err(assign_failed(&f, &config))
        }
        Err(assign::Stop::Refused(r)) => Err(refuse(&r)),
        Err(_) => {
            println!("Failed to assign turn: the run changed meanwhile; run the command again");
            Err(ExitCode::from(1))
        }
    }
}

/// `accept-turn`.
pub fn accept_turn(turn: Option<&str>, resolution: Option<&str>) -> ExitCode {
    let store = project!();
    let config = match cfg::load(&store) {
        Ok(c) => c,
        Err(r) => return refuse(&r),
    };
    let human_merge = match resolution.unwrap_or("standard") {
        "standard" => false,
        "human_merge" => true,
        other => {
            println!("Unknown resolution mode \"{}\"", clean(other));
            return ExitCode::from(1);
        }
    };
    match accept::accept_as(&store, turn, human_merge) {
        Err(r) => refuse(&r),
        Ok(accept::Accepted::Hook(h)) => {
            if let Some(e) = &h.escalation {
                escalation_notice(e);
            }
            hook_halted(&h, &config);
            ExitCode::from(1)
        }
        Ok(accept::Accepted::Conflict {
            conflict,
            state,
            escalation,
        }) => {
            if let Some(e) = &escalation {
                escalation_notice(e);
            }
            conflict_detected(&conflict, &state, &config);
            ExitCode::from(1)
        }
        Ok(accept::Accepted::Failed { stage, errors, .. }) if stage == "override_validation" => {
            println!(
                "{}",
                errors
                    .iter()
                    .map(|e| clean(e))
                    .collect::<Vec<_>>()
                    .join("; ")
            );
            ExitCode::from(1)
        }
        Ok(accept::Accepted::Failed {
            stage,
            error_class,
            errors,
            ..
        }) => {
            println!();
            println!("  Validation failed at stage {stage}");
            println!("  {RULE}");
            println!();
            println!("  Reason:   {error_class}");
            println!("  Owner:    human");
            println!(
                "  Action:   Fix staged result and rerun agentxchain accept-turn, or reject with agentxchain reject-turn --reason \"...\""
            );
            // (The reference adds a `Recovery:` line naming `--normalize-staged-result`, an
            // option it accepts and ignores: a command that changes nothing is not printed.)
            println!("  Turn:     retained");
            for e in &errors {
                println!("  Detail:   {}", clean(e));
            }
            println!();
            println!("Inspect the staged result with: agentxchain validate --mode turn");
            ExitCode::from(1)
        }
        Ok(accept::Accepted::Done {
            entry,
            state,
            outcome,
            budget_warning,
            escalation,
        }) => {
            if let Some(e) = &escalation {
                escalation_notice(e);
            }
            println!();
            println!("  Turn Accepted");
            println!("  {RULE}");
            println!();
            println!("  Turn:     {}", s(&entry["turn_id"]));
            println!("  Role:     {}", s(&entry["role"]));
            println!("  Status:   {}", s(&entry["status"]));
            println!("  Summary:  {}", s(&entry["summary"]));
            if let Some(n) = entry["proposed_next_role"].as_str() {
                println!("  Proposed: {n}");
            }
            println!("  Accepted: {}", s(&state["accepted_integration_ref"]));
            if let Some(c) = entry["cost"]["usd"].as_f64() {
                println!("  Cost:     ${}", axc_core::util::to_fixed(c, 2));
            }
            if let Some(w) = &budget_warning {
                println!("  Budget warning: {w}");
            }
            println!();
            match outcome {
                accept::Outcome::PausedForTransition { gate, .. } => {
                    recovery_block(
                        "pending_phase_transition",
                        "human",
                        "agentxchain approve-transition",
                        "cleared",
                        &gate,
                    );
                    println!();
                }
                accept::Outcome::PausedForCompletion { gate } => {
                    recovery_block(
                        "pending_run_completion",
                        "human",
                        "agentxchain approve-completion",
                        "cleared",
                        &gate,
                    );
                    println!();
                }
                // Blocked by the run itself (the non-progress guard, the budget), or by its
                // budget while the completion it asked for failed its gate: the recovery the
                // state records.
                _ if state["status"] == "blocked"
                    && !matches!(outcome, accept::Outcome::Blocked { .. }) =>
                {
                    let r = axc_kernel::views::status::recovery(&state, &config);
                    recovery_block(
                        r["typed_reason"].as_str().unwrap_or(""),
                        r["owner"].as_str().unwrap_or("human"),
                        r["recovery_action"].as_str().unwrap_or(""),
                        if r["turn_retained"] == true {
                            "retained"
                        } else {
                            "cleared"
                        },
                        r["detail"].as_str().unwrap_or(""),
                    );
                    println!();
                }
                accept::Outcome::Blocked { detail } => {
                    recovery_block(
                        "needs_human",
                        "human",
                        "Resolve the stated issue, then run agentxchain resume",
                        "cleared",
                        &detail,
                    );
                    println!();
                }
                // A failed gate prints nothing more here, as the reference's accept-turn: it is
                // in the state (`last_gate_failure`), which `status` shows.
                _ => {
                    match entry["proposed_next_role"].as_str() {
                        Some(role) if role != "human" => {
                            println!("  Next: agentxchain resume --role {}", clean(role));
                        }
                        _ => println!(
                            "  Next: review state, then run agentxchain resume when ready."
                        ),
                    }
                    println!();
                }
            }
            ExitCode::SUCCESS
        }
    }
}

/// `checkpoint-turn`.
pub fn checkpoint_turn(turn: Option<&str>) -> ExitCode {
    let store = project!();
    match checkpoint::checkpoint(&store, turn) {
        Err(r) => refuse(&r),
        Ok(checkpoint::Checkpointed::Committed { turn_id, sha }) => {
            println!("Checkpointed {turn_id} at {sha}.");
            ExitCode::SUCCESS
        }
        Ok(checkpoint::Checkpointed::Already { turn_id, sha }) => {
            println!("Turn {turn_id} already has checkpoint {sha}.");
            ExitCode::SUCCESS
        }
        Ok(checkpoint::Checkpointed::Skipped { reason }) => {
            println!("{reason}");
            ExitCode::SUCCESS
        }
    }
}

/// `approve-transition`.
pub fn approve_transition() -> ExitCode {
    let store = project!();
    let config = match cfg::load(&store) {
        Ok(c) => c,
        Err(r) => return refuse(&r),
    };
    match approve::approve_transition(&store) {
        Err(approve::NotApproved::Refused(r)) => refuse(&r),
        Err(approve::NotApproved::Hook(h)) => {
            approving_transition(&h.state["pending_phase_transition"]);
            gate_hook_halted(&h, &config)
        }
        Ok(a) => {
            let p = &a.pending;
            approving_transition(p);
            println!("  ✓ Phase advanced: {} → {}", s(&p["from"]), s(&p["to"]));
            println!("  Run status: {}", s(&a.state["status"]));
            println!();
            let to = p["to"].as_str().unwrap_or("");
            let next_role = cfg::entry_role(&config, to);
            let blocked = next_role.and_then(|r| {
                assign::plain_baseline_error(&store, cfg::write_authority(&config, r))
                    .map(|e| (r, e))
            });
            match blocked {
                Some((role, why)) => {
                    println!("  Next turn blocked until the workspace is checkpointed.");
                    println!("  Role:  {role} ({})", cfg::write_authority(&config, role));
                    println!("  Why:   {why}");
                    println!(
                        "  Fix:   git add -A && git commit -m \"checkpoint accepted artifacts\""
                    );
                    println!("  Then:  agentxchain step  (to run the first turn in {to} phase)");
                }
                None => println!("  Next: agentxchain step  (to run the first turn in {to} phase)"),
            }
            println!();
            ExitCode::SUCCESS
        }
    }
}

/// `approve-completion`.
pub fn approve_completion() -> ExitCode {
    let store = project!();
    match approve::approve_completion(&store) {
        Err(approve::NotApproved::Refused(r)) => refuse(&r),
        Err(approve::NotApproved::Hook(h)) => {
            let config = cfg::load(&store).unwrap_or_default();
            approving_completion(&h.state, &h.state["pending_run_completion"]);
            gate_hook_halted(&h, &config)
        }
        Ok(a) => {
            let p = &a.pending;
            approving_completion(&a.state, p);
            println!("  ✓ Run completed");
            println!("  Completed at: {}", s(&a.state["completed_at"]));
            println!();
            ExitCode::SUCCESS
        }
    }
}

/// `escalate`.
pub fn escalate(
    reason: &str,
    detail: Option<&str>,
    action: Option<&str>,
    turn: Option<&str>,
) -> ExitCode {
    let store = project!();
    match escalate::escalate(&store, reason, detail, action, turn) {
        Err(r) => refuse(&r),
        Ok(e) => {
            let esc = &e.escalation;
            println!();
            println!("  Run Escalated");
            println!("  {RULE}");
            println!();
            println!("  Reason:   {}", s(&esc["reason"]));
            if esc["detail"] != esc["reason"] {
                println!("  Detail:   {}", s(&esc["detail"]));
            }
            println!("  Blocked:  {}", s(&e.state["blocked_on"]));
            println!("  Source:   operator");
            println!(
                "  Turn:     {}",
                esc["from_turn_id"].as_str().unwrap_or("none retained")
            );
            if let Some(r) = esc["from_role"].as_str() {
                println!("  Role:     {r}");
            }
            println!();
            let rec = &e.state["blocked_reason"]["recovery"];
            println!("  Typed:    {}", s(&rec["typed_reason"]));
            println!("  Owner:    {}", s(&rec["owner"]));
            println!("  Action:   {}", s(&rec["recovery_action"]));
            println!(
                "  Retained: {}",
                if rec["turn_retained"] == true {
                    "yes"
                } else {
                    "no"
                }
            );
            println!();
            escalation_notice(&e.record);
            ExitCode::SUCCESS
        }
    }
}

/// `unblock <id>`.
pub fn unblock(id: &str) -> ExitCode {
    let store = project!();
    let record = match escalate::check_unblock(&store, id) {
        Ok(r) => r,
        Err(r) => return refuse(&r),
    };
    // A run its spent budget keeps blocked says so before "Continuing…" (resume refuses it).
    if let (Ok(config), Ok(state)) = (cfg::load(&store), store.state())
        && let Some(refusal) = axc_kernel::budget::still_exhausted(&state, &config)
    {
        println!("{refusal}");
        return ExitCode::from(1);
    }
    let svc = record["service"]
        .as_str()
        .map(|s| format!(" ({s})"))
        .unwrap_or_default();
    println!();
    println!("  Unblocking {}", s(&record["escalation_id"]));
    println!("  Type: {}{svc}", s(&record["type"]));
    if let Some(d) = record["detail"].as_str() {
        println!("  Detail: {d}");
    }
    println!("  Continuing governed execution...");
    println!();
    resume(assign::Options {
        role: None,
        turn: record["turn_id"].as_str().map(str::to_owned),
        via: Some("operator_unblock".into()),
        bind_intents: false,
    })
}

/// The notice a resolved human escalation prints on stderr (the reference's local notice).
pub(crate) fn resolved_notice(record: &Json) {
    eprint!(
        "\n[agentxchain] ✓ HUMAN ESCALATION RESOLVED: {}\n  Resolved via: {}\n\n",
        s(&record["escalation_id"]),
        s(&record["resolved_via"])
    );
}

/// `validate --mode turn`: the staged result of the active turn, through the five stages,
/// without accepting it.
pub fn validate_turn(turn: Option<&str>, json_out: bool) -> ExitCode {
    let store = project!();
    let config = match cfg::load(&store) {
        Ok(c) => c,
        Err(r) => return refuse(&r),
    };
    let state = match store.state() {
        Ok(s) => s,
        Err(r) => return refuse(&r),
    };
    let turns = state["active_turns"]
        .as_object()
        .cloned()
        .unwrap_or_default();
    let target = match turn {
        Some(t) => turns.get(t).cloned(),
        None if turns.len() == 1 => turns.values().next().cloned(),
        None => None,
    };
    let Some(t) = target else {
        println!("No active turn to validate (use --turn <id> when several are active).");
        return ExitCode::from(1);
    };
    let id = s(&t["turn_id"]).to_owned();
    let mut solo = state.clone();
    solo["active_turns"] = serde_json::json!({ &id: t });
    let rel = run::dispatch::staging_rel(&id);
    let v = axc_kernel::turn_result::validate_staged(store.root(), &solo, &config, &rel);
    if json_out {
        println!(
            "{}",
            canon::to_pretty(&serde_json::json!({
                "ok": v.ok(), "turn_id": id, "stage": v.stage, "error_class": v.error_class,
                "errors": v.errors, "warnings": v.warnings,
            }))
        );
    } else if v.ok() {
        println!("✓ Turn result for {id} is valid ({rel}).");
        for w in &v.warnings {
            println!("  warning: {}", clean(w));
        }
    } else {
        println!(
            "✗ Turn result for {id} failed at stage {}:",
            v.stage.unwrap_or("")
        );
        for e in &v.errors {
            println!("  - {}", clean(e));
        }
    }
    if v.ok() {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    }
}

/// The notice a raised human escalation prints on stderr (the reference's local notice).
pub(crate) fn escalation_notice(record: &Json) {
    let svc = record["service"]
        .as_str()
        .map(|s| format!(" ({s})"))
        .unwrap_or_default();
    eprint!(
        "\n[agentxchain] ⚠ HUMAN ESCALATION RAISED: {}{svc}\n  Type:    {}\n  Action:  {}\n  Unblock: {}\n\n",
        s(&record["escalation_id"]),
        s(&record["type"]),
        s(&record["action"]),
        s(&record["resolution_command"])
    );
}

/// `reject-turn`.
pub fn reject_turn(turn: Option<&str>, reason: Option<&str>, reassign: bool) -> ExitCode {
    let store = configured!();
    if reassign {
        match run::reject::reassign_drift(&store, turn) {
            Err(r) => return refuse(&r),
            Ok(Some((id, from, to))) => {
                let short = |h: &str| clean(&h.chars().take(12).collect::<String>());
                println!(
                    "Baseline drift detected: HEAD moved from {} to {}.",
                    short(&from),
                    short(&to)
                );
                println!("Use: agentxchain reissue-turn --turn {id} --reason \"baseline drift\"");
                println!(
                    "--reassign detected baseline drift. Use reissue-turn instead for a clean reissue from current HEAD."
                );
                return ExitCode::from(1);
            }
            Ok(None) => {}
        }
    }
    match run::reject::reject(&store, turn, reason) {
        Err(r) => {
            println!("Failed to reject turn: {}", r.message);
            code(r.exit_code)
        }
        Ok(r) => {
            if let Some(e) = &r.escalation {
                escalation_notice(e);
            }
            println!();
            if r.escalated {
                println!("  Turn Rejected And Escalated");
            } else {
                println!("  Turn Rejected For Retry");
            }
            println!("  {RULE}");
            println!();
            println!("  Turn:         {}", s(&r.turn["turn_id"]));
            println!("  Role:         {}", s(&r.turn["assigned_role"]));
            println!("  Failed stage: {}", r.failed_stage);
            if let Some(e) = r.errors.first().filter(|_| !reassign) {
                println!("  Reason:       {}", clean(e));
            }
            if let Some(note) = reason {
                println!("  Operator note: {note}");
            }
            println!();
            if r.escalated {
                let rec = &r.state["blocked_reason"]["recovery"];
                println!("  Reason:       {}", s(&rec["typed_reason"]));
                println!("  Owner:        {}", s(&rec["owner"]));
                println!("  Action:       {}", s(&rec["recovery_action"]));
                println!("  Turn:         retained");
                println!("  Detail:       {}", s(&rec["detail"]));
            } else {
                println!("  Attempt:      {}", r.turn["attempt"]);
                println!(
                    "  Dispatch:     .agentxchain/dispatch/turns/{}/",
                    s(&r.turn["turn_id"])
                );
                if reassign {
                    println!(
                        "  The turn was rejected for conflict and immediately re-dispatched with conflict context."
                    );
                } else {
                    println!("  The retry bundle has been rewritten for the same assigned turn.");
                }
            }
            println!();
            ExitCode::SUCCESS
        }
    }
}

/// `reissue-turn`.
pub fn reissue_turn(turn: Option<&str>, role: Option<&str>, reason: Option<&str>) -> ExitCode {
    let store = configured!();
    if let Ok(state) = store.state()
        && let Some(t) = match turn {
            Some(t) => state["active_turns"].get(t),
            None => state["active_turns"]
                .as_object()
                .filter(|m| m.len() == 1)
                .and_then(|m| m.values().next()),
        }
    {
        println!(
            "Reissuing turn: {} ({})",
            s(&t["turn_id"]),
            s(&t["assigned_role"])
        );
        println!("Reason: {}", reason.unwrap_or("operator-initiated reissue"));
    }
    match run::reject::reissue(&store, turn, role, reason) {
        Err(r) => refuse(&r),
        Ok(r) => {
            println!();
            println!("  Turn Reissued");
            println!("  {RULE}");
            println!();
            println!("  Old turn:     {}", s(&r.old["turn_id"]));
            println!("  New turn:     {}", s(&r.new["turn_id"]));
            println!("  Role:         {}", s(&r.new["assigned_role"]));
            println!("  Attempt:      {}", r.new["attempt"]);
            println!("  Reason:       {}", r.reason);
            let (oh, nh) = (
                s(&r.old["baseline"]["head_ref"]),
                s(&r.new["baseline"]["head_ref"]),
            );
            if oh != nh {
                let short = |h: &str| h.chars().take(12).collect::<String>();
                println!("  HEAD:         {} → {}", short(&oh), short(&nh));
            }
            println!();
            println!("Run: agentxchain step --resume to dispatch the reissued turn.");
            ExitCode::SUCCESS
        }
    }
}

/// The reference's block for a step a hook halted (`Turn Assignment Blocked By Hook`,
/// `Dispatch Blocked By Hook`, `Turn Acceptance Blocked By Hook`, `Phase Transition Blocked By
/// Hook`, …): what was halted, by which hook, why, and what a person does next. Every value
/// that came from a hook or the run's files is printed escaped.
pub(crate) fn hook_halted(h: &run::hooked::Halted, config: &Json) {
    let or_unknown = |v: Option<&str>| v.map_or("(unknown)".to_owned(), clean);
    let recovery = axc_kernel::views::status::recovery(&h.state, config);
    let mut lines: Vec<(&str, String)> = Vec::new();
    let (title, rule) = match h.phase {
        "before_assignment" => {
            lines.push(("Role:", or_unknown(h.role.as_deref())));
            lines.push(("Phase:", or_unknown(h.state["phase"].as_str())));
            ("Turn Assignment Blocked By Hook", '-')
        }
        "after_dispatch" => {
            lines.push(("Turn:", or_unknown(h.turn_id.as_deref())));
            lines.push(("Role:", or_unknown(h.role.as_deref())));
            ("Dispatch Blocked By Hook", '-')
        }
        "before_gate" => {
            // The request the gate hook held back, still pending in the blocked run.
            let p = match &h.state["pending_phase_transition"] {
                Json::Null => &h.state["pending_run_completion"],
                t => t,
            };
            let transition = !p["from"].is_null();
            if transition {
                lines.push(("From:", s(&p["from"])));
                lines.push(("To:", s(&p["to"])));
            }
            lines.push(("Gate:", s(&p["gate"])));
            if transition {
                ("Phase Transition Blocked By Hook", '-')
            } else {
                ("Run Completion Blocked By Hook", '-')
            }
        }
        phase => {
            lines.push(("Turn:", or_unknown(h.turn_id.as_deref())));
            lines.push(("Role:", or_unknown(h.role.as_deref())));
            if phase == "after_acceptance" {
                lines.push(("Status:", "accepted".to_owned()));
                ("Turn Accepted, Hook Failure Detected", '─')
            } else {
                ("Turn Acceptance Blocked By Hook", '─')
            }
        }
    };
    lines.push(("Hook:", clean(&h.hook)));
    lines.push(("Error:", clean(&h.error)));
    if recovery.is_object() {
        lines.push(("Reason:", s(&recovery["typed_reason"])));
        lines.push(("Owner:", s(&recovery["owner"])));
        lines.push(("Action:", s(&recovery["recovery_action"])));
        // The dispatch block names no detail: its error is the detail.
        if let Some(d) = recovery["detail"]
            .as_str()
            .filter(|d| !d.is_empty() && h.phase != "after_dispatch")
        {
            lines.push(("Detail:", clean(d)));
        }
    } else if h.phase == "before_assignment" {
        lines.push((
            "Action:",
            format!(
                "Fix or reconfigure hook \"{}\", then rerun agentxchain resume --role {}",
                clean(&h.hook),
                or_unknown(h.role.as_deref())
            ),
        ));
    }
    println!();
    println!("  {title}");
    println!("  {}", rule.to_string().repeat(44));
    println!();
    for (label, value) in lines {
        println!("  {label:<10}{value}");
    }
    println!();
}

/// A failed assignment: the hook's block when a hook halted it, then `Failed to assign turn: …`
/// (not after a dispatch a hook blocked: the turn was assigned, the run is blocked).
pub(crate) fn assign_failed(f: &assign::AssignFailed, config: &Json) -> ExitCode {
    if let Some(e) = f.hook.as_ref().and_then(|h| h.escalation.as_ref()) {
        escalation_notice(e);
    }
    match f.hook.as_deref() {
        Some(h) if h.phase == "after_dispatch" => hook_halted(h, config),
        Some(h) => {
            hook_halted(h, config);
            println!("Failed to assign turn: {}", clean(&f.error));
        }
        None => println!("Failed to assign turn: {}", f.error),
    }
    ExitCode::from(1)
}

/// An approval a `before_gate` hook halted: the escalation raised, then the hook's block.
fn gate_hook_halted(h: &run::hooked::Halted, config: &Json) -> ExitCode {
    if let Some(e) = &h.escalation {
        escalation_notice(e);
    }
    hook_halted(h, config);
    ExitCode::from(1)
}

/// The banner `approve-transition` prints before it approves (or a hook halts it).
fn approving_transition(p: &Json) {
    println!();
    println!("  Approving Phase Transition");
    println!("  {RULE}");
    println!("  From:  {}", s(&p["from"]));
    println!("  To:    {}", s(&p["to"]));
    println!("  Gate:  {}", s(&p["gate"]));
    println!("  Turn:  {}", s(&p["requested_by_turn"]));
    println!();
}

/// The banner `approve-completion` prints before it approves (or a hook halts it).
fn approving_completion(state: &Json, p: &Json) {
    println!();
    println!("  Approving Run Completion");
    println!("  {RULE}");
    println!("  Phase:  {}", s(&state["phase"]));
    println!("  Gate:   {}", s(&p["gate"]));
    println!("  Turn:   {}", s(&p["requested_by_turn"]));
    println!();
}
