//! `chant`: declarative infrastructure as code in TypeScript. Argument parsing and wiring only;
//! the engine lives in `chant-core` and `chant-js`, the lexicons come from the registry in
//! `chant-lexicons`, the MCP server in `chant-mcp`.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::Duration;

use chant_core::build::Format;
use chant_core::confine::Walls;
use chant_core::discover::Discovery;
use chant_core::explain;
use chant_core::model::Budget;
use chant_core::session::Chant;
use clap::{Parser, Subcommand, ValueEnum};

mod import;
mod init;
mod lint;
mod ops;
mod pretty;
mod workspace;

/// Declarative infrastructure as code: declare resources in TypeScript, build them into
/// CloudFormation, GitLab CI, Kubernetes and more, and serve it all to agents over MCP.
#[derive(Parser, Debug)]
#[command(name = "chant", version, about, long_about = None)]
struct Cli {
    /// Wall time one evaluation of the project's TypeScript may take, e.g. 10s or 500ms
    /// (default: the config's `timeout`, else 10s)
    #[arg(long, global = true, value_name = "DURATION", value_parser = parse_timeout)]
    timeout: Option<Duration>,
    #[command(subcommand)]
    command: Command,
}

fn parse_timeout(s: &str) -> Result<Duration, String> {
    match chant_core::config::parse_duration(s) {
        Ok(ms) if (1..=chant_core::config::MAX_TIMEOUT_MS).contains(&ms) => {
            Ok(Duration::from_millis(ms))
        }
        _ => Err(format!(
            "expected a duration from 1ms to 1h, such as 10s or 500ms, got \"{s}\""
        )),
    }
}

#[derive(Subcommand, Debug)]
enum Command {
    /// Start a project: config, settings and a lexicon's init template under src/, git init
    /// when not in a repository, and the chant MCP server added to the IDE's global MCP config
    /// (Claude Code, Cursor, else ~/.config/mcp/mcp.json) and to the project's .mcp.json.
    /// Nothing already there is replaced; a second run changes nothing and says so
    Init {
        /// Project directory (default: the current directory; created when missing)
        dir: Option<PathBuf>,
        /// The project's lexicon (default: the first lexicon of this chant with init templates)
        #[arg(short = 'd', long, value_name = "L")]
        lexicon: Option<String>,
        /// The lexicon's init template (default: default)
        #[arg(short = 't', long, value_name = "T")]
        template: Option<String>,
        /// Whose MCP config to write: claude, cursor, other or none (default: detected from
        /// ~/.claude, then ~/.cursor)
        #[arg(long, value_name = "IDE")]
        ide: Option<String>,
        /// Say what would be written and write nothing
        #[arg(long)]
        dry_run: bool,
        /// Add a project to a directory that holds other files (none of them is replaced)
        #[arg(long)]
        force: bool,
        /// Print the result as one JSON line
        #[arg(long)]
        json: bool,
    },
    /// Build the project into its lexicons' output (e.g. .gitlab-ci.yml)
    Build {
        /// Project directory (default: the current directory)
        path: Option<PathBuf>,
        /// Build only this lexicon's part of the project
        #[arg(long, value_name = "L")]
        lexicon: Option<String>,
        /// Output format of JSON-producing lexicons (text output is unaffected)
        #[arg(long, value_enum, default_value = "json")]
        format: BuildFormat,
        /// Write the output to FILE instead of standard output
        #[arg(short = 'o', long = "output", value_name = "FILE")]
        output: Option<PathBuf>,
        /// Accepted for scripts written for the reference chant, and ignored: there is one
        /// evaluation path, with no folding to turn off
        #[arg(long)]
        no_fold: bool,
    },
    /// List the project's entities: name, lexicon, type, kind
    List {
        /// Project directory (default: the current directory)
        path: Option<PathBuf>,
    },
    /// Run an Op locally (`run list`, `run status <op>`, `run log <op>` read the run ledger)
    Run {
        /// The Op to run, or `list`, `status`, `log`
        target: String,
        /// With `status` or `log`: the Op
        op: Option<String>,
        /// Print the result as one JSON line
        #[arg(long)]
        json: bool,
        /// Stream each settled step as an NDJSON line on stdout
        #[arg(long)]
        progress_json: bool,
        /// Environment the run targets (default: the Op's labels.Env, else local)
        #[arg(long, value_name = "E")]
        env: Option<String>,
        /// Runtime to run on (default: local)
        #[arg(long, value_name = "RUNTIME")]
        on: Option<String>,
        /// Exit code of a run that stops at a gate
        #[arg(long, value_name = "N", default_value_t = 3)]
        gated_exit: u8,
    },
    /// Approve a gate an Op run is waiting at, recording who and which plan on the gate ledger
    Approve {
        op: String,
        gate: String,
        /// Who approves (default: $GITHUB_ACTOR, $GITLAB_USER_LOGIN or $USER)
        #[arg(long, value_name = "A")]
        actor: Option<String>,
        /// Who approves, when it differs from the actor
        #[arg(long, value_name = "A")]
        approver: Option<String>,
        /// Free-text context recorded on the resolution
        #[arg(long, value_name = "N")]
        note: Option<String>,
        /// Absolute http/https URL where the approval happened (default: derived from CI)
        #[arg(long, value_name = "U")]
        url: Option<String>,
        /// Approve this plan digest instead of the one the gate recorded
        #[arg(long, value_name = "DIGEST")]
        plan: Option<String>,
        /// Approve a gate reached over the same channel (both halves in one session)
        #[arg(long)]
        allow_same_origin: bool,
        /// Expire the standing pending fact instead of approving it
        #[arg(long)]
        expire: bool,
        /// Seal the approval with git's SSH signing key (gpg.format ssh, user.signingkey); a
        /// project listing .chant/allowed_signers on main passes gates on sealed approvals only
        #[arg(long)]
        sign: bool,
        /// Environment of the woken run
        #[arg(long, value_name = "E")]
        env: Option<String>,
        /// Runtime hosting the gated run (default: local)
        #[arg(long, value_name = "RUNTIME")]
        on: Option<String>,
    },
    /// Lint the project's sources: the core rules, then each lexicon's (exit 1 on errors)
    Lint {
        /// A project directory (its sources) or one source file (default: the current directory)
        path: Option<PathBuf>,
        /// Apply the rules' fixes in place, then lint again and report that
        #[arg(long)]
        fix: bool,
        /// Report format
        #[arg(long, value_enum, default_value = "stylish")]
        format: LintFormat,
        /// Run only these rules (comma-separated ids, e.g. COR004,WGL002)
        #[arg(long, value_name = "IDS", value_delimiter = ',')]
        rules: Vec<String>,
    },
    /// Import an existing template (a .gitlab-ci.yml, or its JSON form) as chant TypeScript
    Import {
        /// The template file (JSON or YAML)
        file: PathBuf,
        /// Directory to write the generated files into
        #[arg(
            short = 'o',
            long = "output",
            value_name = "DIR",
            default_value = "infra"
        )]
        output: PathBuf,
        /// Replace files that already exist in the output directory
        #[arg(long)]
        force: bool,
    },
    /// Serve the project to agents
    Serve {
        #[command(subcommand)]
        command: ServeCommand,
    },
    /// Read and write a workspace: its declaration (chant.workspace.json), members and
    /// records (`workspace ls`, `workspace records`)
    Workspace {
        #[command(subcommand)]
        command: workspace::WorkspaceCommand,
    },
    /// Summarize the project's entities, dependencies and errors
    Explain {
        /// Project directory (default: the current directory)
        path: Option<PathBuf>,
        #[arg(long, value_enum, default_value = "markdown")]
        format: ExplainFormat,
        /// With --format okf: write the bundle's files into DIR
        #[arg(short = 'o', long = "output", value_name = "DIR")]
        output: Option<PathBuf>,
    },
}

#[derive(Subcommand, Debug)]
enum ServeCommand {
    /// Start an MCP server over stdio for the project at PATH (default: the current directory)
    Mcp {
        /// Project directory; relative tool paths resolve against it
        path: Option<PathBuf>,
        /// How lexicon plugin tools are named: `seed` (`gitlab:checks`, the default) or
        /// `portable` (`gitlab_checks`, names every MCP client accepts). Without this flag,
        /// the CHANT_MCP_TOOL_NAMES environment variable is read
        #[arg(long, value_name = "STYLE")]
        tool_names: Option<String>,
    },
}

#[derive(Clone, Copy, Debug, ValueEnum)]
enum BuildFormat {
    Json,
    Yaml,
}

#[derive(Clone, Copy, Debug, ValueEnum)]
enum LintFormat {
    Stylish,
    Json,
    Sarif,
}

#[derive(Clone, Copy, Debug, ValueEnum)]
enum ExplainFormat {
    Markdown,
    Json,
    Okf,
}

fn chant() -> Chant {
    let lexicons = std::sync::Arc::new(chant_lexicons::registry());
    let engine = chant_js::Engine::new(
        chant_js::EmbeddedModules::with_lexicons(std::sync::Arc::clone(&lexicons)),
        chant_js::Limits::default(),
    );
    Chant {
        lexicons,
        evaluator: Box::new(engine),
    }
}

fn path_or_cwd(path: Option<PathBuf>) -> PathBuf {
    path.unwrap_or_else(|| PathBuf::from("."))
}

/// One malloc arena for the whole process. glibc gives each thread that meets contention an
/// arena of its own and keeps what it frees there, so a server whose pool threads each take a
/// turn at a large build ends up holding one build's worth of memory per thread (measured:
/// 93-128 MiB after three 10,000-job builds, depending on which threads served them; 64 MiB
/// with one arena, at the same build time). Only a server lives long enough for that to
/// matter: a command that ends after one read keeps the arenas, since one would make the
/// threads that parse a records directory wait on each other's allocations (measured:
/// 2,000 records read in 103 ms with one arena, see docs/benchmarks.md).
fn single_malloc_arena() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    // SAFETY: mallopt only sets an allocator parameter; called before any thread starts.
    unsafe {
        libc::mallopt(libc::M_ARENA_MAX, 1);
    }
}

/// A command whose reader went away (`chant run status | head`) ends quietly, as Unix tools
/// do, instead of panicking on the next write. `serve` keeps handling a closed pipe itself.
fn quiet_on_closed_pipe() {
    // SAFETY: restores the default disposition of one signal, before any thread starts.
    unsafe {
        libc::signal(libc::SIGPIPE, libc::SIG_DFL);
    }
}

/// A one-shot command grows its heaps in large steps: the threads that read a records
/// directory otherwise grew theirs a page range at a time, one `mprotect` each (4,011 for
/// 2,000 records; measured 4% of the read, docs/benchmarks.md). Only address space is
/// reserved; pages are touched as they are used, and the process ends soon.
fn large_heap_steps() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    // SAFETY: mallopt only sets an allocator parameter; called before any thread starts.
    unsafe {
        libc::mallopt(libc::M_TOP_PAD, 64 << 20);
    }
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    if matches!(cli.command, Command::Serve { .. }) {
        single_malloc_arena();
    } else {
        large_heap_steps();
        quiet_on_closed_pipe();
    }
    let chant = chant();
    let budget = Budget {
        time: cli.timeout,
        stop: None,
    };
    let budget = &budget;
    match cli.command {
        Command::Init {
            dir,
            lexicon,
            template,
            ide,
            dry_run,
            force,
            json,
        } => init::run(
            &chant,
            init::InitArgs {
                dir: path_or_cwd(dir),
                lexicon,
                template,
                ide,
                dry_run,
                force,
                json,
            },
        ),
        Command::Build {
            path,
            lexicon,
            format,
            output,
            no_fold: _,
        } => build(&chant, budget, &path_or_cwd(path), lexicon, format, output),
        Command::List { path } => list(&chant, budget, &path_or_cwd(path)),
        Command::Workspace { command } => workspace::run(chant.evaluator.as_ref(), budget, command),
        Command::Import {
            file,
            output,
            force,
        } => import::run(&chant, budget, &file, &output, force),
        Command::Lint {
            path,
            fix,
            format,
            rules,
        } => lint::run(
            &chant,
            budget,
            &path_or_cwd(path),
            fix,
            match format {
                LintFormat::Stylish => lint::Format::Stylish,
                LintFormat::Json => lint::Format::Json,
                LintFormat::Sarif => lint::Format::Sarif,
            },
            &rules,
        ),
        Command::Explain {
            path,
            format,
            output,
        } => explain_cmd(&chant, budget, &path_or_cwd(path), format, output),
        Command::Run {
            target,
            op,
            json,
            progress_json,
            env,
            on,
            gated_exit,
        } => match (target.as_str(), op) {
            ("list", None) => ops::list(&chant, budget, json),
            ("status", Some(op)) => ops::status(&chant, budget, &op, false, json),
            ("log", Some(op)) => ops::status(&chant, budget, &op, true, json),
            (_, Some(extra)) => fail(format!(
                "unexpected argument '{extra}': chant run <op> takes one Op name"
            )),
            (name, None) => ops::run(
                &chant,
                budget,
                ops::RunArgs {
                    op: name.to_owned(),
                    json,
                    progress_json,
                    env,
                    on,
                    gated_exit,
                },
            ),
        },
        Command::Approve {
            op,
            gate,
            actor,
            approver,
            note,
            url,
            plan,
            allow_same_origin,
            expire,
            sign,
            env,
            on,
        } => ops::approve(
            &chant,
            budget,
            ops::ApproveArgs {
                op,
                gate,
                actor,
                approver,
                note,
                url,
                plan,
                allow_same_origin,
                expire,
                sign,
                env,
                on,
            },
        ),
        Command::Serve {
            command: ServeCommand::Mcp { path, tool_names },
        } => serve_mcp(chant, path_or_cwd(path), tool_names),
    }
}

fn serve_mcp(chant: Chant, root: PathBuf, tool_names: Option<String>) -> ExitCode {
    if !root.is_dir() {
        return fail(format!("{}: no such directory", root.display()));
    }
    let style = match tool_names {
        Some(t) => chant_mcp::ToolNames::parse(&t).map_err(|e| format!("--tool-names: {e}")),
        None => match std::env::var("CHANT_MCP_TOOL_NAMES") {
            Ok(t) if !t.is_empty() => {
                chant_mcp::ToolNames::parse(&t).map_err(|e| format!("CHANT_MCP_TOOL_NAMES: {e}"))
            }
            _ => Ok(chant_mcp::ToolNames::Seed),
        },
    };
    let tool_names = match style {
        Ok(s) => s,
        Err(e) => return fail(e),
    };
    let options = chant_mcp::Options {
        root,
        version: env!("CARGO_PKG_VERSION").to_owned(),
        tool_names,
        exe: std::env::current_exe().ok(),
    };
    match chant_mcp::server(chant, options) {
        Ok(server) => match server.serve_stdio() {
            Ok(()) => ExitCode::SUCCESS,
            Err(e) => fail(format!("reading stdin failed: {e}")),
        },
        Err(e) => fail(e),
    }
}

fn fail(message: impl std::fmt::Display) -> ExitCode {
    eprintln!("error: {message}");
    ExitCode::FAILURE
}

fn discover(
    chant: &Chant,
    budget: &Budget,
    path: &Path,
) -> Result<(chant_core::project::Project, Discovery), ExitCode> {
    if !path.exists() {
        return Err(fail(format!(
            "{}: no such file or directory",
            path.display()
        )));
    }
    let project = chant.locate(path, budget).map_err(fail)?;
    let discovery = chant.discover(&project, budget);
    Ok((project, discovery))
}

/// Where a file the output names goes: inside `dir`, whatever the name says.
fn inside(dir: &Path, name: &str) -> Result<PathBuf, String> {
    std::fs::create_dir_all(dir).map_err(|e| format!("cannot create {}: {e}", dir.display()))?;
    Walls::new(dir)
        .and_then(|w| w.resolve("an output file", name))
        .map_err(|e| e.to_string())
}

fn build(
    chant: &Chant,
    budget: &Budget,
    path: &Path,
    lexicon: Option<String>,
    format: BuildFormat,
    output: Option<PathBuf>,
) -> ExitCode {
    if !path.exists() {
        return fail(format!("{}: no such file or directory", path.display()));
    }
    let project = match chant.locate(path, budget) {
        Ok(p) => p,
        Err(e) => return fail(e),
    };
    if let Err(e) = chant.lexicons_for(&project) {
        return fail(e);
    }
    let format = match format {
        BuildFormat::Json => Format::Json,
        BuildFormat::Yaml => Format::Yaml,
    };
    if let Some(l) = &lexicon
        && chant.lexicon(l).is_none()
    {
        return fail(chant_core::project::ProjectError::UnknownLexicon(l.clone()));
    }
    let (_, result) = chant.build(&project, format, lexicon.as_deref(), budget);
    let built = match result {
        Ok(b) => b,
        Err(failure) => {
            let mut seen: Vec<(String, String, usize)> = Vec::new();
            for (file, message) in failure.errors {
                match seen.iter_mut().find(|(_, m, _)| *m == message) {
                    Some(entry) => entry.2 += 1,
                    None => seen.push((file, message, 0)),
                }
            }
            for (file, message, more) in seen {
                let suffix = if more > 0 {
                    format!(" (and the same from {more} more files)")
                } else {
                    String::new()
                };
                if file.is_empty() {
                    eprintln!("error: {message}{suffix}");
                } else {
                    eprintln!("{file} - error: {message}{suffix}");
                }
            }
            return ExitCode::FAILURE;
        }
    };
    // One write for all diagnostics: a large project can have tens of thousands.
    let mut diagnostics = String::new();
    for w in &built.warnings {
        diagnostics.push_str(&format!("warning: {w}\n"));
    }
    let mut failed = false;
    for (lex, f) in &built.findings {
        let level = if f.error { "error" } else { "warning" };
        failed |= f.error;
        diagnostics.push_str(&format!("{level}: [{}] {} ({lex})\n", f.entity, f.message));
    }
    let _ = std::io::stderr().lock().write_all(diagnostics.as_bytes());
    if failed {
        return ExitCode::FAILURE;
    }
    match output {
        Some(file) => {
            if let Err(e) = chant_core::build::write_output(&built, &file) {
                return fail(e);
            }
        }
        None => {
            println!("{}", built.output);
            for (name, content) in &built.files {
                eprint!("\n--- {name} ---\n{content}");
            }
        }
    }
    ExitCode::SUCCESS
}

fn list(chant: &Chant, budget: &Budget, path: &Path) -> ExitCode {
    let (_, d) = match discover(chant, budget, path) {
        Ok(x) => x,
        Err(code) => return code,
    };
    if !d.errors.is_empty() {
        for e in &d.errors {
            println!("{}", e.message);
        }
        return ExitCode::FAILURE;
    }
    let mut rows: Vec<[String; 4]> = d
        .entities
        .iter()
        .enumerate()
        .map(|(i, e)| {
            let decl = d.decl(i);
            [
                e.name.clone(),
                decl.lexicon.clone(),
                decl.entity_type.clone(),
                decl.kind.as_str().to_owned(),
            ]
        })
        .collect();
    rows.sort_by(|a, b| canon::locale_cmp(&a[0], &b[0]));
    let header = ["NAME", "LEXICON", "TYPE", "KIND"].map(str::to_owned);
    let mut widths = header.clone().map(|h| h.chars().count());
    for r in &rows {
        for (w, c) in widths.iter_mut().zip(r) {
            *w = (*w).max(c.chars().count());
        }
    }
    let mut out = String::new();
    for row in std::iter::once(&header).chain(rows.iter()) {
        let cells: Vec<String> = row
            .iter()
            .zip(widths)
            .map(|(c, w)| format!("{c:<w$}"))
            .collect();
        out.push_str(&cells.join("  "));
        out.push('\n');
    }
    print!("{out}");
    eprintln!("Found {} entities", rows.len());
    ExitCode::SUCCESS
}

fn explain_cmd(
    chant: &Chant,
    budget: &Budget,
    path: &Path,
    format: ExplainFormat,
    output: Option<PathBuf>,
) -> ExitCode {
    let (project, d) = match discover(chant, budget, path) {
        Ok(x) => x,
        Err(code) => return code,
    };
    match format {
        ExplainFormat::Markdown => {
            println!("{}", explain::markdown(&d));
            ExitCode::SUCCESS
        }
        ExplainFormat::Json => {
            println!(
                "{}",
                canon::to_pretty(&explain::json_with_knowledge(&d, project.dir()))
            );
            ExitCode::SUCCESS
        }
        ExplainFormat::Okf => {
            let (bundle, errors) = explain::okf(&d, &project.path);
            if let Some(dir) = output {
                if let Some(files) = bundle["files"].as_object() {
                    for (name, content) in files {
                        let target = match inside(&dir, name) {
                            Ok(t) => t,
                            Err(e) => return fail(e),
                        };
                        if let Err(e) = fswrite::write_atomic(
                            &target,
                            content.as_str().unwrap_or_default().as_bytes(),
                        ) {
                            return fail(format!("cannot write {}: {e}", target.display()));
                        }
                    }
                }
            } else {
                println!("{}", canon::to_pretty(&bundle));
            }
            for e in &errors {
                eprintln!("error: {e}");
            }
            if errors.is_empty() {
                ExitCode::SUCCESS
            } else {
                ExitCode::FAILURE
            }
        }
    }
}
