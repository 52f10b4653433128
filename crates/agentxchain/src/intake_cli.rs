//! `agentxchain intake …`: each subcommand calls one intake operation (`axc_core::intake` for
//! `record`, `axc_kernel::run::intake` for the rest) and prints the reference's text, or with
//! `-j/--json` the result object itself, exiting with the operation's code.

use std::io::Read;
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::SystemTime;

use axc_core::util::printable as clean;
use axc_kernel::run::{Store, intake};
use clap::{Args, Subcommand};

use crate::governed::s;
use serde_json::{Value as Json, json};

#[derive(Subcommand, Debug)]
pub enum IntakeCommand {
    /// Record an intake event and create a detected intent (deduplicated on source + signal)
    Record(RecordArgs),
    /// Triage a detected intent (priority, template, charter, acceptance), or suppress it; or
    /// reject a triaged one
    Triage(TriageArgs),
    /// Approve a triaged (or blocked) intent for planning
    Approve(ApproveArgs),
    /// Write the intent's template planning artifacts under .planning/ and mark it planned
    Plan(PlanArgs),
    /// Start governed execution of a planned intent: the run starts when idle and a turn is
    /// dispatched carrying the intent's acceptance contract
    Start(StartArgs),
    /// Record each item of a source's snapshot (CI failures, ref changes, schedules) as an
    /// intake event
    Scan(ScanArgs),
    /// Hand off a planned intent to a coordinator workstream (the multi-repo coordinator then
    /// manages it)
    Handoff(HandoffArgs),
    /// Follow an executing intent's run: blocked or completed as the run is (or, handed off,
    /// the coordinator's run and its workstream's completion barrier)
    Resolve(ResolveArgs),
    /// Show intake state: events, intents and counts, or one intent in detail
    Status(StatusArgs),
}

#[derive(Args, Debug)]
pub struct RecordArgs {
    /// Read the payload ({source, signal, evidence, category?}) from a JSON file
    #[arg(long, value_name = "F")]
    file: Option<PathBuf>,
    /// Read the payload from standard input
    #[arg(long)]
    stdin: bool,
    /// Event source: manual, ci_failure, git_ref_change, schedule, vision_scan, vision_idle_expansion
    #[arg(long, value_name = "S")]
    source: Option<String>,
    /// The signal, a JSON object
    #[arg(long, value_name = "JSON")]
    signal: Option<String>,
    /// Evidence, a JSON object {"type":"url|file|text","value":"..."} or an array of them;
    /// may be repeated
    #[arg(long, value_name = "JSON")]
    evidence: Vec<String>,
    /// Event category (default: <source>_signal)
    #[arg(long, value_name = "C")]
    category: Option<String>,
    /// Print the result as JSON
    #[arg(short = 'j', long)]
    json: bool,
}

#[derive(Args, Debug)]
pub struct TriageArgs {
    /// The intent (intent_<ms>_<hex>)
    #[arg(long, value_name = "ID")]
    intent: Option<String>,
    /// p0, p1, p2 or p3
    #[arg(long, value_name = "LEVEL")]
    priority: Option<String>,
    /// Governed template: generic, api-service, cli-tool, library, web-app, full-local-cli,
    /// enterprise-app
    #[arg(long, value_name = "ID")]
    template: Option<String>,
    /// What delivering the intent means, in one sentence
    #[arg(long, value_name = "TEXT")]
    charter: Option<String>,
    /// Acceptance criteria, comma-separated
    #[arg(long, value_name = "TEXT")]
    acceptance: Option<String>,
    /// Suppress a detected intent instead (needs --reason)
    #[arg(long)]
    suppress: bool,
    /// Reject a triaged intent (needs --reason)
    #[arg(long)]
    reject: bool,
    /// Why it is suppressed or rejected
    #[arg(long, value_name = "TEXT")]
    reason: Option<String>,
    /// Print the result as JSON
    #[arg(short = 'j', long)]
    json: bool,
}

#[derive(Args, Debug)]
pub struct ApproveArgs {
    /// The intent (intent_<ms>_<hex>)
    #[arg(long, value_name = "ID")]
    intent: Option<String>,
    /// Who approves (default: operator)
    #[arg(long, value_name = "NAME")]
    approver: Option<String>,
    /// Why
    #[arg(long, value_name = "TEXT")]
    reason: Option<String>,
    /// Approve even when the scope overlaps the active run or recently completed intents
    #[arg(long)]
    force_scope: bool,
    /// Print the result as JSON
    #[arg(short = 'j', long)]
    json: bool,
}

#[derive(Args, Debug)]
pub struct PlanArgs {
    /// The intent (intent_<ms>_<hex>)
    #[arg(long, value_name = "ID")]
    intent: Option<String>,
    /// The name written into the artifacts (default: the project directory's name)
    #[arg(long, value_name = "NAME")]
    project_name: Option<String>,
    /// Overwrite planning artifacts that exist
    #[arg(long)]
    force: bool,
    /// Print the result as JSON
    #[arg(short = 'j', long)]
    json: bool,
}

#[derive(Args, Debug)]
pub struct StartArgs {
    /// The intent (intent_<ms>_<hex>)
    #[arg(long, value_name = "ID")]
    intent: Option<String>,
    /// The role of the turn (default: the intent's preferred role, else the phase's entry role)
    #[arg(long, value_name = "ROLE")]
    role: Option<String>,
    /// Start a fresh governed run when the current one is completed
    #[arg(long = "restart-completed")]
    restart_completed: bool,
    /// Print the result as JSON
    #[arg(short = 'j', long)]
    json: bool,
}

#[derive(Args, Debug)]
pub struct ScanArgs {
    /// The snapshot's source: ci_failure, git_ref_change, schedule
    #[arg(long, value_name = "ID")]
    source: Option<String>,
    /// Read the snapshot ({source, items: [{signal, evidence, …}]}) from a JSON file
    #[arg(long, value_name = "PATH")]
    file: Option<PathBuf>,
    /// Read the snapshot from standard input
    #[arg(long)]
    stdin: bool,
    /// Print the result as JSON
    #[arg(short = 'j', long)]
    json: bool,
}

#[derive(Args, Debug)]
pub struct ResolveArgs {
    /// The intent (intent_<ms>_<hex>)
    #[arg(long, value_name = "ID")]
    intent: Option<String>,
    /// `completed`: mark an executing intent completed now
    #[arg(long, value_name = "STATUS")]
    outcome: Option<String>,
    /// Print the result as JSON
    #[arg(short = 'j', long)]
    json: bool,
}

#[derive(Args, Debug)]
pub struct HandoffArgs {
    /// Intent ID to hand off
    #[arg(long, value_name = "ID")]
    intent: Option<String>,
    /// Path to the coordinator workspace root (with agentxchain-multi.json)
    #[arg(long = "coordinator-root", value_name = "PATH")]
    coordinator_root: Option<PathBuf>,
    /// Coordinator workstream ID
    #[arg(long, value_name = "ID")]
    workstream: Option<String>,
    /// Print the result as JSON
    #[arg(short = 'j', long)]
    json: bool,
}

#[derive(Args, Debug)]
pub struct StatusArgs {
    /// One intent in detail
    #[arg(long, value_name = "ID")]
    intent: Option<String>,
    /// Print the result as JSON
    #[arg(short = 'j', long)]
    json: bool,
}

fn pretty(v: &Json) -> String {
    canon::to_pretty(v)
}

fn exit(v: &Json) -> ExitCode {
    ExitCode::from(v["exitCode"].as_i64().unwrap_or(1).clamp(0, 255) as u8)
}

/// Prints an error as the reference does (`{ok:false, error}` with `--json`).
fn say_error(json_out: bool, message: &str, code: u8) -> ExitCode {
    if json_out {
        println!("{}", pretty(&json!({"ok": false, "error": message})));
    } else {
        println!("{}", clean(message));
    }
    ExitCode::from(code)
}

/// The project root (the nearest ancestor holding agentxchain.json), else the reference's
/// error and exit 2.
fn project(json_out: bool) -> Result<Store, ExitCode> {
    let cwd = std::env::current_dir().unwrap_or_else(|_| PathBuf::from("."));
    match axc_core::config::find_root(&cwd) {
        Some(root) => Ok(Store::new(root)),
        None => Err(say_error(json_out, "agentxchain.json not found", 2)),
    }
}

/// The intent id the subcommand needs.
fn intent_id(json_out: bool, id: Option<&str>) -> Result<String, ExitCode> {
    id.map(str::to_owned)
        .ok_or_else(|| say_error(json_out, "--intent <id> is required", 1))
}

macro_rules! need {
    ($e:expr) => {
        match $e {
            Ok(v) => v,
            Err(c) => return c,
        }
    };
}

/// Prints a reply: the object with `--json`, else `human` of it (or the error, indented).
fn reply(json_out: bool, r: intake::Reply, human: impl FnOnce(&Json)) -> ExitCode {
    let v = match &r {
        Ok(v) | Err(v) => v,
    };
    if json_out {
        println!("{}", pretty(v));
    } else if r.is_ok() {
        human(v);
    } else {
        println!("  {}", s(&v["error"]));
    }
    exit(v)
}

pub fn run(command: IntakeCommand) -> ExitCode {
    match command {
        IntakeCommand::Record(a) => record(a),
        IntakeCommand::Triage(a) => {
            let store = need!(project(a.json));
            let id = need!(intent_id(a.json, a.intent.as_deref()));
            let fields = intake::Triage {
                suppress: a.suppress,
                reject: a.reject,
                reason: a.reason,
                priority: a.priority,
                template: a.template,
                charter: a.charter,
                acceptance: a
                    .acceptance
                    .as_deref()
                    .unwrap_or("")
                    .split(',')
                    .map(str::trim)
                    .filter(|x| !x.is_empty())
                    .map(str::to_owned)
                    .collect(),
                phase_scope: None,
            };
            reply(a.json, intake::triage(&store, &id, &fields), |v| {
                let i = &v["intent"];
                println!();
                println!("  Intent {} → {}", s(&i["intent_id"]), s(&i["status"]));
                if i["priority"].is_string() {
                    println!(
                        "  Priority: {}  Template: {}",
                        s(&i["priority"]),
                        s(&i["template"])
                    );
                }
                println!();
            })
        }
        IntakeCommand::Approve(a) => {
            let store = need!(project(a.json));
            let id = need!(intent_id(a.json, a.intent.as_deref()));
            let r = intake::approve(
                &store,
                &id,
                a.approver.as_deref(),
                a.reason.as_deref(),
                a.force_scope,
            );
            reply(a.json, r, |v| {
                let i = &v["intent"];
                println!();
                if v["superseded"] == true {
                    let h = i["history"].as_array().map(Vec::as_slice).unwrap_or(&[]);
                    let from = h
                        .len()
                        .checked_sub(2)
                        .and_then(|k| h[k]["to"].as_str())
                        .unwrap_or("triaged");
                    println!("  Superseded intent {}", s(&i["intent_id"]));
                    println!("  Approver: {}", s(&i["approved_by"]));
                    println!("  Status: {} → superseded", clean(from));
                    println!("  Reason: {}", s(&i["archived_reason"]));
                } else {
                    println!("  Approved intent {}", s(&i["intent_id"]));
                    println!("  Approver: {}", s(&i["approved_by"]));
                    println!("  Status: triaged → approved");
                }
                println!();
            })
        }
        IntakeCommand::Plan(a) => {
            let store = need!(project(a.json));
            let id = need!(intent_id(a.json, a.intent.as_deref()));
            let r = intake::plan(&store, &id, a.project_name.as_deref(), a.force);
            if !a.json
                && let Err(v) = &r
                && let Some(conflicts) = v["conflicts"].as_array()
            {
                println!();
                println!("  Cannot plan intent {}", clean(&id));
                println!("  Existing planning artifacts would be overwritten:");
                for c in conflicts {
                    println!("    {}", s(c));
                }
                println!("  Use --force to overwrite, or remove the existing files first.");
                println!();
                return exit(v);
            }
            reply(a.json, r, |v| {
                let i = &v["intent"];
                println!();
                println!("  Planned intent {}", s(&i["intent_id"]));
                println!("  Template: {}", s(&i["template"]));
                let made = v["artifacts_generated"]
                    .as_array()
                    .cloned()
                    .unwrap_or_default();
                if made.is_empty() {
                    println!("  No template-specific planning artifacts to generate.");
                } else {
                    println!("  Generated planning artifacts:");
                    for m in &made {
                        println!("    {}", s(m));
                    }
                }
                println!("  Status: approved → planned");
                println!();
            })
        }
        IntakeCommand::Start(a) => {
            let store = need!(project(a.json));
            let id = need!(intent_id(a.json, a.intent.as_deref()));
            let r = intake::start_with(&store, &id, a.role.as_deref(), a.restart_completed);
            if !a.json
                && let Err(v) = &r
                && let Some(missing) = v["missing"].as_array()
            {
                println!();
                println!("  Cannot start intent {}", clean(&id));
                println!("  Recorded planning artifacts are missing on disk:");
                for m in missing {
                    println!("    {}", s(m));
                }
                println!();
                return exit(v);
            }
            reply(a.json, r, |v| {
                println!();
                println!("  Started intent {}", s(&v["intent"]["intent_id"]));
                println!("  Run:    {}", s(&v["run_id"]));
                println!("  Turn:   {}", s(&v["turn_id"]));
                println!("  Role:   {}", s(&v["role"]));
                println!("  Status: planned → executing");
                println!();
            })
        }
        IntakeCommand::Scan(a) => scan(a),
        IntakeCommand::Handoff(a) => {
            let store = need!(project(a.json));
            let id = need!(intent_id(a.json, a.intent.as_deref()));
            let Some(root) = a.coordinator_root else {
                return say_error(a.json, "--coordinator-root <path> is required", 1);
            };
            let Some(ws) = a.workstream else {
                return say_error(a.json, "--workstream <id> is required", 1);
            };
            let r = intake::handoff(&store, &id, &root, &ws);
            reply(a.json, r, |v| {
                println!();
                println!("  Handed off intent {}", s(&v["intent"]["intent_id"]));
                println!(
                    "  Workstream: {}",
                    s(&v["intent"]["target_workstream"]["workstream_id"])
                );
                println!("  Super Run:  {}", s(&v["super_run_id"]));
                println!("  Handoff:    {}", s(&v["handoff_path"]));
                println!("  Status:     planned → executing (coordinator-managed)");
                println!();
            })
        }
        IntakeCommand::Resolve(a) => {
            let store = need!(project(a.json));
            let id = need!(intent_id(a.json, a.intent.as_deref()));
            let r = intake::resolve(&store, &id, a.outcome.as_deref());
            reply(a.json, r, |v| {
                println!();
                if v["no_change"] == true {
                    println!(
                        "  Intent {} — run still {}, no transition",
                        clean(&id),
                        s(&v["run_outcome"])
                    );
                } else {
                    println!("  Resolved intent {}", clean(&id));
                    println!("  {} → {}", s(&v["previous_status"]), s(&v["new_status"]));
                    println!("  Run outcome: {}", s(&v["run_outcome"]));
                }
                println!();
            })
        }
        IntakeCommand::Status(a) => {
            let store = need!(project(a.json));
            let r = intake::status(&store, a.intent.as_deref());
            reply(a.json, r, |v| {
                if v["intent"].is_object() {
                    print_detail(&v["intent"], &v["event"], &v["next_action"]);
                } else {
                    print_summary(&v["summary"]);
                }
            })
        }
    }
}

fn print_summary(summary: &Json) {
    println!();
    println!("  AgentXchain Intake Status");
    println!("  {}", "─".repeat(44));
    println!("  Events:  {}", summary["total_events"]);
    let parts: Vec<String> = summary["by_status"]
        .as_object()
        .into_iter()
        .flatten()
        .map(|(k, c)| format!("{}: {c}", clean(k)))
        .collect();
    println!(
        "  Intents: {}  ({})",
        summary["total_intents"],
        if parts.is_empty() {
            "none".to_owned()
        } else {
            parts.join(", ")
        }
    );
    println!();
    let intents = summary["intents"].as_array().cloned().unwrap_or_default();
    if !intents.is_empty() {
        println!("  Recent Intents:");
        for i in intents.iter().take(20) {
            let pri = i["priority"]
                .as_str()
                .filter(|p| !p.is_empty())
                .map_or("---".to_owned(), |p| format!("{:<3}", clean(p)));
            let tpl = format!(
                "{:<12}",
                i["template"]
                    .as_str()
                    .filter(|t| !t.is_empty())
                    .map_or("---".to_owned(), clean)
            );
            let hint = if i["next_action"]["action_required"] == true
                && i["next_action"]["label"] != "none"
            {
                format!("  → {}", s(&i["next_action"]["label"]))
            } else {
                String::new()
            };
            println!(
                "  {}  {pri}  {tpl}  {}  {}{hint}",
                s(&i["intent_id"]),
                s(&i["status"]),
                s(&i["updated_at"])
            );
        }
    }
    println!();
}

fn or_dash(v: &Json) -> String {
    v.as_str()
        .filter(|x| !x.is_empty())
        .map_or("—".to_owned(), clean)
}

fn print_detail(intent: &Json, event: &Json, next: &Json) {
    println!();
    println!("  Intent: {}", s(&intent["intent_id"]));
    println!("  {}", "─".repeat(44));
    println!("  Status:    {}", s(&intent["status"]));
    println!("  Event:     {}", s(&intent["event_id"]));
    println!("  Priority:  {}", or_dash(&intent["priority"]));
    println!("  Template:  {}", or_dash(&intent["template"]));
    println!("  Charter:   {}", or_dash(&intent["charter"]));
    println!("  Created:   {}", s(&intent["created_at"]));
    println!("  Updated:   {}", s(&intent["updated_at"]));
    if intent["target_workstream"].is_object() {
        println!(
            "  Workstream: {}",
            s(&intent["target_workstream"]["workstream_id"])
        );
        println!(
            "  Super Run:  {}",
            s(&intent["target_workstream"]["super_run_id"])
        );
    }
    let items = intent["acceptance_contract"]
        .as_array()
        .cloned()
        .unwrap_or_default();
    if !items.is_empty() {
        println!();
        println!("  Acceptance Contract:");
        for a in &items {
            println!("    - {}", s(a));
        }
    }
    let history = intent["history"].as_array().cloned().unwrap_or_default();
    if !history.is_empty() {
        println!();
        println!("  History:");
        for h in &history {
            let from = h["from"]
                .as_str()
                .filter(|f| !f.is_empty())
                .map_or("(new)".to_owned(), clean);
            println!(
                "    {}  {from} → {}  {}",
                s(&h["at"]),
                s(&h["to"]),
                s(&h["reason"])
            );
        }
    }
    if event.is_object() {
        println!();
        println!("  Source Event:");
        println!("    Source:  {}", s(&event["source"]));
        println!("    Signal:  {}", clean(&event["signal"].to_string()));
    }
    if next.is_object() {
        println!();
        println!("  Next Action:");
        println!("    {}", s(&next["summary"]));
        if next["command"].is_string() {
            println!("    Command:  {}", s(&next["command"]));
        }
        for alt in next["alternatives"].as_array().into_iter().flatten() {
            println!("    Alternative: {}", s(alt));
        }
        if next["recovery"].is_string() {
            println!("    Recovery: {}", s(&next["recovery"]));
        }
    }
    println!();
}

fn record(args: RecordArgs) -> ExitCode {
    let json_out = args.json;
    let cwd = std::env::current_dir().unwrap_or_else(|_| PathBuf::from("."));
    let Some(root) = axc_core::config::find_root(&cwd) else {
        return say_error(json_out, "agentxchain.json not found", 2);
    };
    let payload = match parse_payload(&args) {
        Ok(p) => p,
        Err(message) => return say_error(json_out, &message, 1),
    };
    match axc_core::intake::record(&root, &payload, SystemTime::now()) {
        Ok(recorded) => {
            if json_out {
                let mut v = recorded.to_json();
                v["exitCode"] = json!(0);
                println!("{}", pretty(&v));
            } else if recorded.deduplicated {
                println!(
                    "\n  Event already recorded: {} (deduplicated)",
                    s(&recorded.event["event_id"])
                );
                if let Some(i) = &recorded.intent {
                    println!(
                        "  Linked intent: {} ({})",
                        s(&i["intent_id"]),
                        s(&i["status"])
                    );
                }
                println!();
            } else {
                println!("\n  Recorded event {}", s(&recorded.event["event_id"]));
                if let Some(i) = &recorded.intent {
                    println!("  Created intent {} (detected)", s(&i["intent_id"]));
                }
                println!();
            }
            ExitCode::SUCCESS
        }
        Err(e) => say_error(json_out, &e.to_string(), 1),
    }
}

/// The largest intake payload or snapshot read.
const MAX_PAYLOAD: u64 = 16 << 20;

fn parse_json(what: &str, text: &str) -> Result<Json, String> {
    serde_json::from_str(text).map_err(|e| format!("{what} is not valid JSON: {e}"))
}

fn parse_payload(args: &RecordArgs) -> Result<Json, String> {
    if let Some(file) = &args.file {
        // A regular file of at most 16 MiB (not a FIFO, /dev/zero or a device).
        let bytes = fsread::read_regular(file, MAX_PAYLOAD)
            .map_err(|e| format!("cannot read {}: {e}", file.display()))?;
        let text = String::from_utf8_lossy(&bytes);
        return parse_json(&file.display().to_string(), &text);
    }
    if args.stdin {
        let mut text = String::new();
        std::io::stdin()
            .take(MAX_PAYLOAD + 1)
            .read_to_string(&mut text)
            .map_err(|e| format!("cannot read standard input: {e}"))?;
        if text.len() as u64 > MAX_PAYLOAD {
            return Err(format!(
                "standard input is over {} MiB; an intake payload is one JSON object",
                MAX_PAYLOAD >> 20
            ));
        }
        return parse_json("standard input", &text);
    }
    let Some(source) = &args.source else {
        return Err("one of --file, --stdin, or --source is required".to_owned());
    };
    let Some(signal) = &args.signal else {
        return Err("--source requires --signal".to_owned());
    };
    if args.evidence.is_empty() {
        return Err("--source requires --evidence".to_owned());
    }
    let signal = parse_json("--signal", signal)?;
    let mut evidence = Vec::new();
    for e in &args.evidence {
        match parse_json("--evidence", e)? {
            Json::Array(items) => evidence.extend(items),
            one => evidence.push(one),
        }
    }
    let mut payload = json!({"source": source, "signal": signal, "evidence": evidence});
    if let Some(c) = &args.category {
        payload["category"] = json!(c);
    }
    Ok(payload)
}

/// `inject <description>`'s options.
#[derive(clap::Args, Debug)]
pub struct InjectArgs {
    /// The work item
    pub description: String,
    /// Priority: p0 (the default; a running `run` yields to it), p1, p2, p3
    #[arg(long, value_name = "LEVEL")]
    pub priority: Option<String>,
    /// Governed template: generic (default), api-service, cli-tool, library, web-app,
    /// full-local-cli, enterprise-app
    #[arg(long, value_name = "ID")]
    pub template: Option<String>,
    /// The delivery charter (default: the description)
    #[arg(long, value_name = "TEXT")]
    pub charter: Option<String>,
    /// Comma-separated acceptance criteria (default: the description)
    #[arg(long, value_name = "TEXT")]
    pub acceptance: Option<String>,
    /// Who approves it (default: human)
    #[arg(long, value_name = "NAME")]
    pub approver: Option<String>,
    /// Leave it triaged instead of approving it
    #[arg(long = "no-approve")]
    pub no_approve: bool,
    /// Print the result as JSON
    #[arg(short = 'j', long)]
    pub json: bool,
}

/// `inject`: record, triage and approve an operator's work item in one step.
pub fn inject(a: InjectArgs) -> ExitCode {
    let store = match crate::governed::store() {
        Ok(s) => s,
        Err(c) => return c,
    };
    if axc_kernel::run::config::load(&store).is_err() {
        println!("The inject command is only available for governed projects.");
        return ExitCode::from(1);
    }
    if a.description.trim().is_empty() {
        println!(
            "A description is required. Example: agentxchain inject \"Fix the sidebar ordering\""
        );
        return ExitCode::from(1);
    }
    let o = intake::Injection {
        priority: a.priority,
        template: a.template,
        charter: a.charter,
        acceptance: a.acceptance,
        approver: a.approver,
        no_approve: a.no_approve,
    };
    let r = match intake::inject(&store, &a.description, &o) {
        Ok(r) => r,
        Err(e) => {
            let code = e["exitCode"].as_u64().unwrap_or(1).clamp(1, 255) as u8;
            return say_error(a.json, e["error"].as_str().unwrap_or("inject failed"), code);
        }
    };
    let intent = &r["intent"];
    if a.json {
        println!(
            "{}",
            pretty(&json!({
                "ok": true, "intent_id": intent["intent_id"], "event_id": r["event"]["event_id"],
                "status": intent["status"], "priority": intent["priority"],
                "deduplicated": r["deduplicated"], "preemption_marker": r["preemption_marker"],
            }))
        );
        return ExitCode::SUCCESS;
    }
    println!();
    if r["deduplicated"] == true {
        println!("  ⚠ Duplicate injection — existing intent returned");
        println!(
            "  Intent: {}",
            clean(intent["intent_id"].as_str().unwrap_or("unknown"))
        );
        println!(
            "  Status: {}",
            clean(intent["status"].as_str().unwrap_or("unknown"))
        );
        println!();
        return ExitCode::SUCCESS;
    }
    println!("  Injected");
    println!("  Intent:   {}", s(&intent["intent_id"]));
    println!(
        "  Priority: {}",
        clean(intent["priority"].as_str().unwrap_or("p0"))
    );
    println!("  Status:   {}", s(&intent["status"]));
    println!(
        "  Charter:  {}",
        clean(intent["charter"].as_str().unwrap_or(a.description.as_str()))
    );
    if r["preemption_marker"] == true {
        println!();
        println!("  ⚡ Preemption marker written");
        println!("  The current run will yield after the active turn completes.");
        println!(
            "  The next dispatch (manual resume, step --resume, or continuous loop) will consume this intent."
        );
    }
    println!();
    ExitCode::SUCCESS
}

fn scan(a: ScanArgs) -> ExitCode {
    let store = need!(project(a.json));
    let Some(source) = a.source else {
        return say_error(
            a.json,
            "--source is required. Supported scan sources: ci_failure, git_ref_change, schedule",
            1,
        );
    };
    let text = match (&a.file, a.stdin) {
        (None, false) => return say_error(a.json, "one of --file or --stdin is required", 1),
        (Some(_), true) => {
            return say_error(a.json, "--file and --stdin are mutually exclusive", 1);
        }
        (Some(f), false) => match fsread::read_regular(f, 16 << 20) {
            Ok(b) => String::from_utf8_lossy(&b).into_owned(),
            Err(e) => {
                let missing = matches!(&e, fsread::ReadError::Io { source, .. } if source.kind() == std::io::ErrorKind::NotFound);
                let code = if missing { 2 } else { 1 };
                return say_error(
                    a.json,
                    &format!("failed to read snapshot from {}: {e}", f.display()),
                    code,
                );
            }
        },
        (None, true) => {
            let mut t = String::new();
            if let Err(e) = std::io::stdin().take(16 << 20).read_to_string(&mut t) {
                return say_error(
                    a.json,
                    &format!("failed to read snapshot from stdin: {e}"),
                    1,
                );
            }
            t
        }
    };
    let snapshot: Json = match serde_json::from_str(&text) {
        Ok(v) => v,
        Err(e) => {
            let from = a
                .file
                .as_ref()
                .map_or("stdin".to_owned(), |f| f.display().to_string());
            return say_error(
                a.json,
                &format!("failed to read snapshot from {from}: {e}"),
                1,
            );
        }
    };
    reply(a.json, intake::scan(&store, &source, &snapshot), |v| {
        println!();
        println!("  Scan complete: {} item(s) processed", v["scanned"]);
        println!("  Created:      {}", v["created"]);
        println!("  Deduplicated: {}", v["deduplicated"]);
        if v["rejected"].as_u64().unwrap_or(0) > 0 {
            println!("  Rejected:     {}", v["rejected"]);
        }
        println!();
    })
}
