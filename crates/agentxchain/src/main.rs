//! `agentxchain`: governed multi-agent runs. Argument parsing and wiring only; the rules live in
//! `axc-core` and the MCP server in `axc-mcp`.

mod config_cli;
mod decisions_cli;
mod doctor_cli;
mod gate_cli;
mod governed;
mod hooks_cli;
mod intake_cli;
mod logs_cli;
mod run_cli;
mod status_cli;
mod status_text;
mod step_cli;

use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;

use axc_core::read::{self, Project};
use axc_core::util::resolve_path;
use clap::{Args, Parser, Subcommand};
use serde_json::{Value, json};

/// Governed multi-agent runs: phases, turns, gates, escalations and intake, with an MCP server
/// that lets agents read run state and learn how a person approves a gate.
#[derive(Parser, Debug)]
#[command(name = "agentxchain", version, about, long_about = None)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

const STATUS_ABOUT: &str =
    "Show the project's run status: phase, active turns, pending gates, blocked state";

#[derive(Args, Debug)]
struct StatusArgs {
    /// Print the reference's status object: the normalized config, the state, and what is
    /// derived from them (continuity, recovery, next actions, recent events, …)
    #[arg(short = 'j', long)]
    json: bool,
    /// Project directory (default: here; the nearest ancestor holding agentxchain.json)
    #[arg(short = 'd', long, value_name = "PATH", alias = "root")]
    dir: Option<PathBuf>,
}

/// `status` alone, as the whole command tree holds it (a test compares their help and
/// errors). Agents and scripts poll `status`: building every subcommand's arguments and help
/// to parse it was a fifth of the command's time (docs/benchmarks.md).
fn status_command() -> clap::Command {
    StatusArgs::augment_args(
        clap::Command::new("status")
            .bin_name("agentxchain status")
            .about(STATUS_ABOUT),
    )
}

/// `agentxchain status …` parsed by [`status_command`]; `None` for any other command line.
fn parse_status() -> Option<StatusArgs> {
    use clap::FromArgMatches;
    let mut args = std::env::args_os().skip(1);
    if args.next()? != "status" {
        return None;
    }
    let matches = status_command().get_matches_from(std::iter::once("status".into()).chain(args));
    Some(StatusArgs::from_arg_matches(&matches).unwrap_or_else(|e| e.exit()))
}

#[derive(Subcommand, Debug)]
enum Command {
    /// Scaffold a governed project from a template: agentxchain.json, role prompts,
    /// planning artifacts, TALK.md, an idle state
    Init {
        /// A governed project (the only kind this build scaffolds)
        #[arg(long)]
        governed: bool,
        /// No questions; replace an existing agentxchain.json
        #[arg(short = 'y', long)]
        yes: bool,
        /// Where (default: here when this is a git repository without agentxchain.json)
        #[arg(long, value_name = "DIR")]
        dir: Option<PathBuf>,
        /// The project goal, written to project.goal
        #[arg(long, value_name = "TEXT")]
        goal: Option<String>,
        /// Governed scaffold template: generic, api-service, cli-tool, library, web-app,
        /// full-local-cli, enterprise-app
        #[arg(long, value_name = "ID", default_value = "generic")]
        template: String,
        /// The local dev runtime's command parts (include {prompt} for argv prompt delivery)
        #[arg(long = "dev-command", value_name = "PARTS", num_args = 1..)]
        dev_command: Vec<String>,
        /// The local dev runtime's prompt transport: argv, stdin, dispatch_bundle_only
        #[arg(long = "dev-prompt-transport", value_name = "MODE")]
        dev_prompt_transport: Option<String>,
    },
    /// Start the run (when idle), reactivate it (when blocked) and assign the next turn with
    /// its dispatch bundle
    Resume {
        /// Assign this role instead of the routing's choice
        #[arg(long, value_name = "ROLE")]
        role: Option<String>,
        /// Re-dispatch this retained turn
        #[arg(long, value_name = "ID")]
        turn: Option<String>,
    },
    /// Pick up a governed run in a new session from what is on disk (state, session checkpoint,
    /// dispatch bundles): reconnect to active turns or a pending gate, or assign the next turn;
    /// writes .agentxchain/SESSION_RECOVERY.md. Refuses a completed or blocked run and ghost
    /// turns (active turns without a dispatch bundle)
    Restart {
        /// Assign this role instead of the routing's entry role
        #[arg(long, value_name = "ROLE")]
        role: Option<String>,
    },
    /// Accept a person's commits on top of the run's last checkpoint as its new baseline (what
    /// status recommends when it reports that drift) — only fast-forward commits that leave
    /// .agentxchain/ and the acceptance matrix alone
    ReconcileState {
        /// Accept safe fast-forward operator commits as the new governed baseline
        #[arg(long)]
        accept_operator_head: bool,
    },
    /// Run one whole turn: assign it, dispatch it by its runtime (local_cli: run the agent;
    /// manual: print what to do and wait for the staged result), validate, accept (or reject),
    /// checkpoint
    Step {
        /// Assign this role instead of the routing's choice
        #[arg(long, value_name = "ROLE")]
        role: Option<String>,
        /// Dispatch the already-active (or blocked, retained) turn again instead of assigning
        #[arg(long)]
        resume: bool,
        /// The active turn to resume (when several are active)
        #[arg(long, value_name = "ID")]
        turn: Option<String>,
        /// Seconds between looks for a manual turn's staged result
        #[arg(long, value_name = "SECONDS", default_value_t = 2)]
        poll: u64,
        /// Print the agent's output as it comes (a local_cli runtime)
        #[arg(long, alias = "verbose")]
        stream: bool,
        /// Reject the result (and dispatch the retry) when it fails validation
        #[arg(long = "auto-reject")]
        auto_reject: bool,
        /// Do not commit the accepted turn's files
        #[arg(long = "no-checkpoint")]
        no_checkpoint: bool,
    },
    /// Drive the run turn after turn with its automated (local_cli) runtimes, until a gate a
    /// person holds, a block, completion or --max-turns
    Run {
        /// The first turn's role instead of the routing's choice
        #[arg(long, value_name = "ROLE")]
        role: Option<String>,
        /// Stop after this many accepted turns (default: run_loop.max_turns, else 50)
        #[arg(long = "max-turns", value_name = "N")]
        max_turns: Option<u64>,
        /// Approve every gate that is not credentialed (no prompt)
        #[arg(long = "auto-approve")]
        auto_approve: bool,
        /// Print the agents' output as it comes
        #[arg(long)]
        verbose: bool,
        /// Print what would be dispatched, run nothing
        #[arg(long = "dry-run")]
        dry_run: bool,
        /// Commit each accepted turn's files
        #[arg(long = "auto-checkpoint")]
        auto_checkpoint: bool,
        /// No governance report after the run (this build writes none; accepted for scripts
        /// written for the reference)
        #[arg(long = "no-report")]
        no_report: bool,
        /// Start a child run continuing a completed (or blocked) run of run-history
        /// (provenance trigger `continuation`)
        #[arg(long = "continue-from", value_name = "RUN_ID")]
        continue_from: Option<String>,
        /// Start a child run recovering a blocked (or completed) run of run-history
        /// (provenance trigger `recovery`)
        #[arg(long = "recover-from", value_name = "RUN_ID")]
        recover_from: Option<String>,
        /// Carry the parent's read-only summary (outcome, phases, last decisions and turns)
        /// into the child run and its dispatch bundles; needs --continue-from or --recover-from
        #[arg(long = "inherit-context")]
        inherit_context: bool,
        /// When a run ends in a chainable status, start a continuation of it that inherits its
        /// summary (run_loop.chain in the config sets the same)
        #[arg(long)]
        chain: bool,
        /// The most continuations a chain starts (default 5)
        #[arg(long = "max-chains", value_name = "N")]
        max_chains: Option<u64>,
        /// The run statuses that start a continuation, comma-separated (default: completed)
        #[arg(long = "chain-on", value_name = "STATUSES")]
        chain_on: Option<String>,
        /// Seconds between chained runs (default 5)
        #[arg(long = "chain-cooldown", value_name = "SECONDS")]
        chain_cooldown: Option<u64>,
    },
    /// Check that the governed project is ready to run: config, roles, each runtime's command,
    /// state and dispatch bundles, clean tree, workflow-kit artifacts, admission control
    Doctor {
        /// Print the report as JSON (checks with ids and levels, counts, overall)
        #[arg(short = 'j', long)]
        json: bool,
    },
    /// Validate the active turn's staged result and record it: history, decisions, gates,
    /// approval policy
    #[command(name = "accept-turn")]
    AcceptTurn {
        /// The turn (when several are active)
        #[arg(long, value_name = "ID")]
        turn: Option<String>,
        /// `human_merge`: a conflicted turn whose work a person merged by hand is accepted as
        /// staged (recorded as that resolution); `standard` (the default) judges conflicts
        #[arg(long, value_name = "MODE")]
        resolution: Option<String>,
    },
    /// Commit exactly the files the last accepted turn declared
    #[command(name = "checkpoint-turn")]
    CheckpointTurn {
        /// The accepted turn (default: the last)
        #[arg(long, value_name = "ID")]
        turn: Option<String>,
    },
    /// Reject the active turn's staged result: it is archived and the same turn dispatched
    /// again (attempt + 1), or the run blocks when its retries are spent
    #[command(name = "reject-turn")]
    RejectTurn {
        /// The turn (when several are active)
        #[arg(long, value_name = "ID")]
        turn: Option<String>,
        /// Why (recorded with the rejection)
        #[arg(long, value_name = "TEXT")]
        reason: Option<String>,
        /// Re-dispatch the rejected turn at once; refused when HEAD moved since the turn's
        /// baseline (reissue-turn is the clean way then)
        #[arg(long)]
        reassign: bool,
    },
    /// Replace the active turn with a new one (fresh baseline, attempt + 1)
    #[command(name = "reissue-turn")]
    ReissueTurn {
        /// The turn (when several are active)
        #[arg(long, value_name = "ID")]
        turn: Option<String>,
        /// Give the new turn to this role
        #[arg(long, value_name = "ROLE")]
        role: Option<String>,
        /// Why (recorded in history and the ledger)
        #[arg(long, value_name = "TEXT")]
        reason: Option<String>,
    },
    /// A person approves the pending phase transition
    #[command(name = "approve-transition")]
    ApproveTransition,
    /// A person approves the pending run completion
    #[command(name = "approve-completion")]
    ApproveCompletion,
    /// Block the active run on an operator escalation (raises a human escalation)
    Escalate {
        /// Why (required)
        #[arg(long, value_name = "TEXT")]
        reason: String,
        /// More detail
        #[arg(long, value_name = "TEXT")]
        detail: Option<String>,
        /// The recovery action to show instead of the default
        #[arg(long, value_name = "TEXT")]
        action: Option<String>,
        /// The active turn to retain (when several are active)
        #[arg(long, value_name = "ID")]
        turn: Option<String>,
    },
    /// Resolve the current human escalation and resume the run
    Unblock {
        /// The escalation id (hesc_...)
        id: String,
    },
    /// Validate the staged turn result without accepting it
    Validate {
        /// What to validate (turn)
        #[arg(long, value_name = "MODE", default_value = "turn")]
        mode: String,
        /// The turn (when several are active)
        #[arg(long, value_name = "ID")]
        turn: Option<String>,
        /// Print the verdict as JSON
        #[arg(short = 'j', long)]
        json: bool,
    },
    /// View or edit the project's agentxchain.json: show it, read one value by its dotted path
    /// (--get budget.per_run_max_usd), set one (--set budget.per_run_max_usd 20: a person's
    /// command; the whole config is validated before it is written)
    Config {
        /// Read one config value by its dotted path (e.g. --get project.goal, --get
        /// routing.planning.allowed_next_roles.0)
        #[arg(long, value_name = "PATH")]
        get: Option<String>,
        /// Set one config value: --set <path> <value> (e.g. --set project.goal "Build a
        /// governed CLI"); true/false and numbers are written as such
        #[arg(long, value_name = "PATH_AND_VALUE", num_args = 1.., allow_hyphen_values = true)]
        set: Option<Vec<String>>,
        /// Print the config (or the --get value) as JSON
        #[arg(short = 'j', long)]
        json: bool,
        /// Add an agent (legacy v3 projects, interactive in the JavaScript tool)
        #[arg(long)]
        add_agent: bool,
        /// Remove an agent by id (legacy v3 projects)
        #[arg(long, value_name = "ID")]
        remove_agent: Option<String>,
    },
    /// The project's hooks and whether they are allowed on this machine; `hooks allow` (a
    /// person's command) allows these exact hooks for this project
    Hooks {
        /// allow: record these exact hooks as allowed for this project on this machine
        #[arg(value_name = "ACTION", value_parser = ["allow"])]
        action: Option<String>,
        /// Print as JSON
        #[arg(short = 'j', long)]
        json: bool,
    },
    /// The config's gates: `gate list`, or `gate show <gate_id> [--evaluate]` (its artifacts,
    /// predicates and status; --evaluate judges them against the files now)
    Gate {
        #[command(subcommand)]
        command: GateCommand,
    },
    /// Protocol conformance: check an implementation against the corpus
    Conformance {
        #[command(subcommand)]
        command: ConformanceCommand,
    },
    /// stdio-fixture-v1: reads one fixture line on stdin, prints one verdict, exits 0 pass,
    /// 1 fail, 2 error, 3 not implemented
    #[command(name = "conformance-adapter", hide = true)]
    ConformanceAdapter,
    /// Serve the governance view of a project over MCP (stdio)
    #[command(name = "serve-mcp")]
    ServeMcp {
        /// Project root (default: the current directory); the nearest ancestor holding
        /// agentxchain.json is used
        #[arg(long, value_name = "PATH")]
        root: Option<PathBuf>,
    },
    #[command(about = STATUS_ABOUT)]
    Status(StatusArgs),
    /// Show the run's lifecycle events (the newest 50 by default), oldest first
    Events {
        /// Keep printing events as they are appended (every 200 ms, until interrupted)
        #[arg(short = 'f', long)]
        follow: bool,
        /// Only these event types (comma-separated: turn_accepted,phase_entered)
        #[arg(short = 't', long = "type", value_name = "TYPES")]
        types: Option<String>,
        /// Only events after this ISO-8601 timestamp (2026-01-02T03:04:05Z, or a date)
        #[arg(long, value_name = "TIMESTAMP")]
        since: Option<String>,
        /// Print each event as the log holds it: one JSON object per line (JSONL)
        #[arg(short = 'j', long)]
        json: bool,
        /// How many (the newest; default 50, 0 = all)
        #[arg(short = 'l', long, value_name = "N", default_value_t = 50)]
        limit: usize,
        /// Project directory (default: here; the nearest ancestor holding agentxchain.json)
        #[arg(short = 'd', long, value_name = "PATH", alias = "root")]
        dir: Option<PathBuf>,
    },
    /// Show the history of finished runs (completed or blocked), newest first
    History {
        /// Print the runs as a JSON array, each with `inheritable` and `outcome_summary`
        #[arg(short = 'j', long)]
        json: bool,
        /// How many (the newest; default 20, 0 = all)
        #[arg(short = 'l', long, value_name = "N", default_value_t = 20)]
        limit: usize,
        /// Only runs with this status: completed or blocked
        #[arg(short = 's', long, value_name = "STATUS")]
        status: Option<String>,
        /// Show the chain of runs that led to this one (through parent_run_id), oldest first
        #[arg(long, value_name = "RUN_ID")]
        lineage: Option<String>,
        /// Project directory (default: here; the nearest ancestor holding agentxchain.json)
        #[arg(short = 'd', long, value_name = "PATH", alias = "root")]
        dir: Option<PathBuf>,
    },
    /// Show the repo decisions that persist across runs (binding until a later decision
    /// overrides them)
    Decisions {
        /// Print the decisions as JSON, each with binding_state and its author's authority
        #[arg(short = 'j', long)]
        json: bool,
        /// Include overridden decisions
        #[arg(short = 'a', long)]
        all: bool,
        /// Show one decision (e.g. DEC-042)
        #[arg(short = 's', long, value_name = "ID")]
        show: Option<String>,
        /// Project directory (default: here)
        #[arg(short = 'd', long, value_name = "PATH")]
        dir: Option<PathBuf>,
    },
    /// Inject a priority work item into the intake queue: record, triage and approve in one
    /// step (a p0 one makes a running `run` yield to it); the next resume or step takes it
    Inject(intake_cli::InjectArgs),
    /// Intake: record external signals, triage, approve, plan and start intents, follow them
    Intake {
        #[command(subcommand)]
        command: intake_cli::IntakeCommand,
    },
}

#[derive(Subcommand, Debug)]
enum ConformanceCommand {
    /// Run an implementation's conformance adapter over the protocol corpus and report per tier
    /// (exit 0 pass, 1 fail, 2 error; fixtures not implemented alone still pass)
    Check {
        /// Highest tier to run (1, 2 or 3); every lower tier runs too
        #[arg(long, value_name = "N", default_value_t = 1)]
        tier: u64,
        /// Only this surface (it must be claimed in capabilities.json)
        #[arg(long, value_name = "S")]
        surface: Option<String>,
        /// The implementation's root, holding .agentxchain-conformance/capabilities.json
        #[arg(long, value_name = "DIR")]
        target: PathBuf,
        /// The corpus (<tier>/<surface>/<id>.json); default <target>/.agentxchain-conformance/fixtures
        #[arg(long, value_name = "DIR")]
        fixtures: Option<PathBuf>,
        /// `json` prints the report object
        #[arg(long, value_name = "F", default_value = "text")]
        format: String,
    },
}

#[derive(Subcommand, Debug)]
enum GateCommand {
    /// List all defined gates with phase linkage and predicate summary
    List {
        /// Print as JSON
        #[arg(short = 'j', long)]
        json: bool,
    },
    /// Show a single gate contract, predicates, and status
    Show {
        #[arg(value_name = "GATE_ID")]
        gate_id: String,
        /// Live-evaluate gate predicates against current filesystem
        #[arg(long)]
        evaluate: bool,
        /// Print as JSON
        #[arg(short = 'j', long)]
        json: bool,
    },
}

#[derive(Args, Debug)]
struct ReadArgs {
    /// Print the report as JSON (the same object the MCP tool returns)
    #[arg(long)]
    json: bool,
    /// Project directory (default: the current directory)
    #[arg(long, value_name = "PATH")]
    root: Option<PathBuf>,
}

/// A person's command (an approval, an unblock) refused inside a dispatched turn: the agent
/// `step` or `run` started has `AGENTXCHAIN_TURN_ID` set, and an agent never approves its own
/// gate. (An agent that clears the variable is not stopped by this: it is the same class as
/// an agent rewriting the run's files, docs/agentxchain.md.)
fn person_only(command: &str) -> Option<ExitCode> {
    person_only_as(command, false)
}

/// [`person_only`], the refusal as `{"error": …}` for a command asked for `--json`.
fn person_only_as(command: &str, json: bool) -> Option<ExitCode> {
    // Any value counts, bytes that are not UTF-8 too.
    let turn = std::env::var_os("AGENTXCHAIN_TURN_ID")?;
    let text = format!(
        "{command} is a person's command: it was run inside the dispatched turn {} (AGENTXCHAIN_TURN_ID is set). A person runs it, after the agent's turn: an agent never approves its own gate or changes the rules it runs under.",
        axc_core::util::printable(&turn.to_string_lossy())
    );
    if json {
        println!("{}", serde_json::json!({"error": text}));
    } else {
        println!("{text}");
    }
    Some(ExitCode::from(1))
}

fn main() -> ExitCode {
    // Output piped into `head` ends the process quietly, as any command-line tool's does (the
    // run's files are written before anything is printed).
    // SAFETY: restoring the default disposition of SIGPIPE before any thread starts.
    unsafe {
        libc::signal(libc::SIGPIPE, libc::SIG_DFL);
    }
    if let Some(a) = parse_status() {
        return status_cli::run(a.json, a.dir.as_deref());
    }
    let cli = Cli::parse();
    match cli.command {
        Command::Init {
            governed,
            yes,
            dir,
            goal,
            template,
            dev_command,
            dev_prompt_transport,
        } => {
            if !governed {
                println!(
                    "Only governed projects are scaffolded by this build: agentxchain init --governed"
                );
                return ExitCode::from(1);
            }
            let dev = axc_kernel::run::scaffold::DevRuntime {
                command: dev_command,
                prompt_transport: dev_prompt_transport,
            };
            governed::init(dir.as_deref(), goal.as_deref(), &template, &dev, yes)
        }
        Command::Config {
            get,
            set,
            json,
            add_agent,
            remove_agent,
        } => config_cli::run(config_cli::Args {
            get,
            set,
            json,
            add_agent,
            remove_agent,
        }),
        Command::Gate { command } => match command {
            GateCommand::List { json } => gate_cli::run(gate_cli::Ask::List, json),
            GateCommand::Show {
                gate_id,
                evaluate,
                json,
            } => gate_cli::run(
                gate_cli::Ask::Show {
                    id: gate_id,
                    evaluate,
                },
                json,
            ),
        },
        Command::Hooks { action, json } => match action.as_deref() {
            Some("allow") => {
                person_only_as("hooks allow", json).unwrap_or_else(|| hooks_cli::run(true, json))
            }
            _ => hooks_cli::run(false, json),
        },
        Command::Resume { role, turn } => governed::resume(axc_kernel::run::assign::Options {
            role,
            turn,
            via: None,
            bind_intents: true,
        }),
        Command::Restart { role } => governed::restart(role.as_deref()),
        Command::ReconcileState {
            accept_operator_head,
        } => person_only("reconcile-state")
            .unwrap_or_else(|| governed::reconcile_state(accept_operator_head)),
        Command::Step {
            role,
            resume,
            turn,
            poll,
            stream,
            auto_reject,
            no_checkpoint,
        } => step_cli::step(&step_cli::Args {
            role,
            resume,
            turn,
            poll,
            stream,
            auto_reject,
            no_checkpoint,
        }),
        // `run` approves gates (at its prompt, or with --auto-approve): never from inside a
        // dispatched turn.
        Command::Run { auto_approve, .. }
            if person_only(if auto_approve {
                "run --auto-approve"
            } else {
                "run"
            })
            .is_some() =>
        {
            ExitCode::from(1)
        }
        Command::Run {
            role,
            max_turns,
            auto_approve,
            verbose,
            dry_run,
            auto_checkpoint,
            no_report: _,
            continue_from,
            recover_from,
            inherit_context,
            chain,
            max_chains,
            chain_on,
            chain_cooldown,
        } => run_cli::run(&run_cli::Args {
            role,
            max_turns,
            auto_approve,
            verbose,
            dry_run,
            auto_checkpoint,
            continue_from,
            recover_from,
            inherit_context,
            chain,
            max_chains,
            chain_on,
            chain_cooldown,
        }),
        Command::Doctor { json } => doctor_cli::doctor(json),
        Command::Inject(a) => intake_cli::inject(a),
        // A human merge says a person merged a conflicted turn's work by hand: never an agent.
        Command::AcceptTurn { turn, resolution }
            if resolution.as_deref() == Some("human_merge")
                && person_only("accept-turn --resolution human_merge").is_some() =>
        {
            let _ = turn;
            ExitCode::from(1)
        }
        Command::AcceptTurn { turn, resolution } => {
            governed::accept_turn(turn.as_deref(), resolution.as_deref())
        }
        Command::CheckpointTurn { turn } => governed::checkpoint_turn(turn.as_deref()),
        Command::RejectTurn {
            turn,
            reason,
            reassign,
        } => governed::reject_turn(turn.as_deref(), reason.as_deref(), reassign),
        // Another role for a turn is a person's choice: an agent may not turn its own review
        // turn into a code-writing one.
        Command::ReissueTurn { role: Some(_), .. }
            if person_only("reissue-turn --role").is_some() =>
        {
            ExitCode::from(1)
        }
        Command::ReissueTurn { turn, role, reason } => {
            governed::reissue_turn(turn.as_deref(), role.as_deref(), reason.as_deref())
        }
        Command::ApproveTransition => {
            person_only("approve-transition").unwrap_or_else(governed::approve_transition)
        }
        Command::ApproveCompletion => {
            person_only("approve-completion").unwrap_or_else(governed::approve_completion)
        }
        Command::Escalate {
            reason,
            detail,
            action,
            turn,
        } => governed::escalate(
            &reason,
            detail.as_deref(),
            action.as_deref(),
            turn.as_deref(),
        ),
        Command::Unblock { id } => person_only("unblock").unwrap_or_else(|| governed::unblock(&id)),
        Command::Validate { mode, turn, json } => {
            if mode != "turn" {
                println!("validate --mode {mode}: only --mode turn is available in this build");
                return ExitCode::from(2);
            }
            governed::validate_turn(turn.as_deref(), json)
        }
        Command::ServeMcp { root } => serve_mcp(root),
        Command::Decisions {
            json,
            all,
            show,
            dir,
        } => decisions_cli::run(json, all, show.as_deref(), dir.as_deref()),
        Command::Status(a) => status_cli::run(a.json, a.dir.as_deref()),
        Command::Events {
            follow,
            types,
            since,
            json,
            limit,
            dir,
        } => logs_cli::events(logs_cli::EventsArgs {
            follow,
            types,
            since,
            json,
            limit,
            dir,
        }),
        Command::History {
            json,
            limit,
            status,
            lineage,
            dir,
        } => logs_cli::history(logs_cli::HistoryArgs {
            json,
            limit,
            status,
            lineage,
            dir,
        }),
        Command::Intake { command } => intake_cli::run(command),
        Command::ConformanceAdapter => conformance_adapter(),
        Command::Conformance {
            command:
                ConformanceCommand::Check {
                    tier,
                    surface,
                    target,
                    fixtures,
                    format,
                },
        } => conformance_check(tier, surface, target, fixtures, &format),
    }
}

fn conformance_adapter() -> ExitCode {
    let mut line = String::new();
    let verdict = match std::io::stdin().read_line(&mut line) {
        Ok(_) => axc_conformance::adapter::run_line(&line),
        Err(e) => axc_conformance::adapter::run_line(&format!("<unreadable: {e}>")),
    };
    println!("{}", verdict.to_json());
    ExitCode::from(verdict.exit_code() as u8)
}

fn conformance_check(
    tier: u64,
    surface: Option<String>,
    target: PathBuf,
    fixtures: Option<PathBuf>,
    format: &str,
) -> ExitCode {
    if format != "text" && format != "json" {
        eprintln!("--format must be text or json (got \"{format}\")");
        return ExitCode::from(2);
    }
    let fixtures =
        fixtures.unwrap_or_else(|| target.join(".agentxchain-conformance").join("fixtures"));
    let check = axc_conformance::runner::Check {
        target: &target,
        tier,
        surface: surface.as_deref(),
        fixtures: &fixtures,
    };
    match axc_conformance::runner::check(&check) {
        Ok((report, code)) => {
            if format == "json" {
                println!("{}", canon::to_pretty(&report));
            } else {
                print!("{}", axc_conformance::runner::render(&report));
            }
            ExitCode::from(code as u8)
        }
        Err(e) => {
            eprintln!("{e}");
            ExitCode::from(2)
        }
    }
}

fn serve_mcp(root: Option<PathBuf>) -> ExitCode {
    let hint =
        root.unwrap_or_else(|| std::env::current_dir().unwrap_or_else(|_| PathBuf::from(".")));
    let resolved = resolve_path(&hint);
    let found = axc_core::config::find_root(&resolved);
    if found.is_none() {
        eprintln!(
            "[agentxchain serve-mcp] Warning: no agentxchain.json found at {}. Tools will return errors until a governed project is available.",
            hint.display()
        );
    }
    let project_root = found.unwrap_or(resolved);
    eprintln!(
        "[agentxchain serve-mcp] Starting MCP server for {}",
        project_root.display()
    );
    let server = axc_mcp::server(axc_mcp::Options {
        project_root,
        version: env!("CARGO_PKG_VERSION").to_owned(),
        warn: Arc::new(|w| eprintln!("{w}")),
    });
    match server.serve_stdio() {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("[agentxchain serve-mcp] reading stdin failed: {e}");
            ExitCode::FAILURE
        }
    }
}

/// `status` of a legacy (v3) project: the read model's report.
fn legacy_status(json: bool, root: PathBuf) -> ExitCode {
    report(
        &ReadArgs {
            json,
            root: Some(root),
        },
        |p, root, w| match p {
            Some(p) => read::status(p, w),
            None => read::no_project(root),
        },
    )
}

/// Runs a read report on the project at or above `--root` and prints it.
fn report(
    args: &ReadArgs,
    build: impl FnOnce(Option<&Project>, &std::path::Path, &mut Vec<String>) -> Value,
) -> ExitCode {
    let start = resolve_path(&args.root.clone().unwrap_or_else(|| PathBuf::from(".")));
    let mut warnings = Vec::new();
    let project = read::open(&start, &mut warnings);
    let root = project.as_ref().map_or(start.clone(), |p| p.root.clone());
    let value = build(project.as_ref(), &root, &mut warnings);
    for w in &warnings {
        eprintln!("{w}");
    }
    let ok = value["ok"] == json!(true);
    if args.json {
        println!("{}", canon::to_pretty(&value));
    } else if !ok {
        println!("{}", value["error"].as_str().unwrap_or("failed"));
    } else {
        print!("{}", human(&value));
    }
    if ok {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    }
}

fn s(v: &Value) -> String {
    match v {
        Value::Null => "-".to_owned(),
        Value::String(s) => axc_core::util::printable(s),
        other => other.to_string(),
    }
}

/// The human-readable form of a report.
fn human(v: &Value) -> String {
    let mut out = String::new();
    if let Some(project) = v.get("project") {
        out += &format!(
            "Project:       {} ({})\n",
            s(&project["name"]),
            s(&project["id"])
        );
        out += &format!("Protocol:      {}\n", s(&v["protocol_mode"]));
        out += &format!("Run:           {}\n", s(&v["run_id"]));
        out += &format!("Phase:         {}\n", s(&v["phase"]));
        out += &format!("Status:        {}\n", s(&v["status"]));
        let turns = v["active_turns"].as_array().cloned().unwrap_or_default();
        if turns.is_empty() {
            out += "Active turns:  none\n";
        }
        for (i, t) in turns.iter().enumerate() {
            let label = if i == 0 {
                "Active turns: "
            } else {
                "              "
            };
            out += &format!(
                "{label} {} ({}, {})\n",
                s(&t["turn_id"]),
                s(&t["role"]),
                s(&t["status"])
            );
        }
        let gates = v["pending_gates"]
            .as_array()
            .map(|g| g.iter().map(s).collect::<Vec<_>>().join(", "));
        out += &format!(
            "Pending gates: {}\n",
            gates.unwrap_or_else(|| "none".to_owned())
        );
        out += &format!("Blocked on:    {}\n", s(&v["blocked_on"]));
        if let Some(e) = v.get("escalation") {
            out += &format!(
                "Escalation:    {} ({})\nResolve with:  {}\n",
                s(&e["escalation_id"]),
                s(&e["type"]),
                s(&e["resolution_command"])
            );
        }
        if let Some(c) = v.get("continuous") {
            out += &format!(
                "Continuous:    {} ({}, {} runs completed, {} idle cycles)\n",
                s(&c["session_id"]),
                s(&c["status"]),
                s(&c["runs_completed"]),
                s(&c["idle_cycles"])
            );
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::{CommandFactory, FromArgMatches};

    /// `status` parsed alone reads as `status` in the whole tree: its help, its errors, what
    /// it parses.
    #[test]
    fn status_alone_is_the_trees_status() {
        let mut tree = Cli::command();
        tree.build();
        let mut in_tree = tree.find_subcommand("status").unwrap().clone();
        let mut alone = status_command();
        assert_eq!(
            in_tree.render_long_help().to_string(),
            alone.render_long_help().to_string()
        );
        assert_eq!(
            in_tree.render_usage().to_string(),
            alone.render_usage().to_string()
        );
        for line in [
            &["--bogus"][..],
            &["--dir"],
            &["-j", "-j"],
            &["extra"],
            &["--json", "--dir", "a"],
            &["--root", "b", "-j"],
            &["-h"],
            &["-V"],
            &["--help"],
        ] {
            let whole = Cli::command()
                .try_get_matches_from(["agentxchain", "status"].iter().chain(line))
                .map(|m| {
                    let cli = Cli::from_arg_matches(&m).unwrap();
                    let Command::Status(a) = cli.command else {
                        panic!()
                    };
                    format!("{a:?}")
                })
                .map_err(|e| e.render().to_string());
            let one = status_command()
                .try_get_matches_from(["status"].iter().chain(line))
                .map(|m| format!("{:?}", StatusArgs::from_arg_matches(&m).unwrap()))
                .map_err(|e| e.render().to_string());
            assert_eq!(whole, one, "{line:?}");
        }
    }
}
