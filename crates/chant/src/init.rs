//! `chant init`: wiring only. The project's files come from `chant_core::init`, the MCP
//! client files and their merge from `mcp_clients`; this module decides nothing but the order:
//! everything is planned and checked first, so a refusal writes nothing, then written.

use std::path::{Path, PathBuf};
use std::process::{Command, ExitCode};

use chant_core::init;
use chant_core::session::Chant;
use mcp_clients::{Change, Client};
use serde_json::{Value, json};

pub struct InitArgs {
    pub dir: PathBuf,
    pub lexicon: Option<String>,
    pub template: Option<String>,
    pub ide: Option<String>,
    pub dry_run: bool,
    pub force: bool,
    pub json: bool,
}

/// One MCP config file to bring up to date.
struct McpTarget {
    /// Where it is written (a link to it is followed: dotfiles stay links).
    path: PathBuf,
    /// How it is said (`~/…` under the home directory).
    shown: String,
    client: &'static str,
    text: String,
    change: Change,
}

fn fail(message: impl std::fmt::Display) -> ExitCode {
    eprintln!("error: {message}");
    ExitCode::FAILURE
}

pub fn run(chant: &Chant, args: InitArgs) -> ExitCode {
    match init_project(chant, &args) {
        Ok(code) => code,
        Err(e) => fail(e),
    }
}

fn init_project(chant: &Chant, args: &InitArgs) -> Result<ExitCode, String> {
    let dir = absolute(&args.dir)?;
    let plan = init::plan(
        &chant.lexicons,
        args.lexicon.as_deref(),
        args.template.as_deref(),
        env!("CARGO_PKG_VERSION"),
    )
    .map_err(|e| e.to_string())?;
    init::check_dir(&dir, args.force).map_err(|e| e.to_string())?;
    let (create, keep) = init::sort_out(&dir, &plan.files).map_err(|e| e.to_string())?;
    let client = match args.ide.as_deref() {
        Some("none") => None,
        Some(name) => Some(Client::parse(name).ok_or_else(|| {
            format!("--ide must be claude, cursor, other or none (got \"{name}\")")
        })?),
        None => Some(mcp_clients::detect(&home()?)),
    };
    let mut targets = Vec::new();
    if let Some(client) = client {
        let home = home()?;
        let entry = entry(client)?;
        // The project's own file stays inside the project, link or not.
        let project_file = if dir.exists() {
            chant_core::confine::Walls::new(&dir)
                .and_then(|w| w.resolve("the project's .mcp.json", ".mcp.json"))
                .map_err(|e| e.to_string())?
        } else {
            dir.join(".mcp.json")
        };
        targets.push(target(&project_file, &home, client, &entry)?);
        targets.push(target(&client.global_config(&home), &home, client, &entry)?);
    }
    let in_git = inside_git(&dir);
    if !args.dry_run {
        init::write(&dir, &plan.files).map_err(|e| e.to_string())?;
        for t in &targets {
            if t.change != Change::Unchanged {
                fswrite::write_atomic(&t.path, t.text.as_bytes())
                    .map_err(|e| format!("Cannot write {}: {e}", t.shown))?;
            }
        }
    }
    let git = match (in_git, args.dry_run) {
        (true, _) => "existing",
        (false, true) => "would initialize",
        (false, false) => git_init(&dir),
    };
    let changes: Vec<Value> = targets
        .iter()
        .map(|t| json!({"path": t.shown, "client": t.client, "change": change_name(t.change)}))
        .collect();
    if args.json {
        println!(
            "{}",
            canon::to_compact(&json!({
                "dir": dir.display().to_string(),
                "lexicon": plan.lexicon,
                "template": plan.template,
                "dryRun": args.dry_run,
                "created": create,
                "kept": keep,
                "git": git,
                "mcp": changes,
            }))
        );
        return Ok(ExitCode::SUCCESS);
    }
    let would = if args.dry_run { "would " } else { "" };
    let nothing = create.is_empty()
        && targets.iter().all(|t| t.change == Change::Unchanged)
        && git == "existing";
    if nothing {
        println!(
            "Nothing to change: {} is already a {} project, and its MCP config is up to date.",
            dir.display(),
            plan.lexicon
        );
        return Ok(ExitCode::SUCCESS);
    }
    println!(
        "{} {} project in {} (template {}):",
        if args.dry_run {
            "Would set up a"
        } else {
            "Set up a"
        },
        plan.lexicon,
        dir.display(),
        plan.template
    );
    for f in &create {
        println!("  {would}create {f}");
    }
    for f in &keep {
        println!("  keep {f} (already there; chant init never replaces a file)");
    }
    match git {
        "initialized" => println!("  initialized a git repository"),
        "would initialize" => println!("  would initialize a git repository"),
        "existing" => {}
        other => println!("  {other}"),
    }
    for t in &targets {
        let what = match t.change {
            Change::Created | Change::Added => format!("{would}add the chant server"),
            Change::Updated => format!("{would}update the chant server"),
            Change::Unchanged => "the chant server is already there".to_owned(),
        };
        println!("  {}: {what} ({})", t.shown, t.client);
    }
    if client.is_none() {
        println!(
            "  no MCP config written (--ide none); see docs/chant.md#chant-init to add it by hand"
        );
    }
    Ok(ExitCode::SUCCESS)
}

fn change_name(c: Change) -> &'static str {
    match c {
        Change::Created => "created",
        Change::Added => "added",
        Change::Updated => "updated",
        Change::Unchanged => "unchanged",
    }
}

fn absolute(dir: &Path) -> Result<PathBuf, String> {
    chant_core::confine::resolve(dir).map_err(|e| format!("Cannot use {}: {e}", dir.display()))
}

fn home() -> Result<PathBuf, String> {
    match std::env::var_os("HOME") {
        Some(h) if !h.is_empty() => Ok(PathBuf::from(h)),
        _ => {
            Err("HOME is not set, so no IDE config can be found; pass --ide none to skip it".into())
        }
    }
}

/// The entry that runs this binary by absolute path (no Node needed), with portable tool
/// names for the clients that need them.
fn entry(client: Client) -> Result<serde_json::Map<String, Value>, String> {
    let exe = std::env::current_exe()
        .and_then(std::fs::canonicalize)
        .map_err(|e| format!("Cannot find this chant binary's path: {e}"))?;
    let mut args = vec!["serve", "mcp"];
    if client.needs_portable_tool_names() {
        args.extend(["--tool-names", "portable"]);
    }
    let v = json!({"command": exe.display().to_string(), "args": args});
    Ok(v.as_object().expect("an object").clone())
}

fn target(
    path: &Path,
    home: &Path,
    client: Client,
    entry: &serde_json::Map<String, Value>,
) -> Result<McpTarget, String> {
    let shown = match path.strip_prefix(home) {
        Ok(rest) => format!("~/{}", rest.display()),
        Err(_) => path.display().to_string(),
    };
    // A config kept as a link (dotfiles) is written where it points, so it stays a link.
    let path = match std::fs::symlink_metadata(path) {
        Ok(m) if m.file_type().is_symlink() => std::fs::canonicalize(path)
            .map_err(|e| format!("{shown} is a link that cannot be followed: {e}"))?,
        _ => path.to_path_buf(),
    };
    // A regular file only (never a FIFO or a device), at most 64 MiB.
    let existing = match fsread::read_regular(&path, 64 << 20) {
        Ok(bytes) => Some(String::from_utf8(bytes).map_err(|e| {
            format!(
                "{shown}: not UTF-8 text (byte {}); chant init changed nothing",
                e.utf8_error().valid_up_to()
            )
        })?),
        Err(e) if e.is_missing() => None,
        Err(e) => {
            return Err(format!(
                "Cannot read {shown}: {e}; chant init changed nothing"
            ));
        }
    };
    creatable(&path, &shown)?;
    let merged = mcp_clients::merge(existing.as_deref(), "chant", entry).map_err(|e| {
        format!(
            "{shown}: {e}. chant init changed nothing (in it or anywhere): fix the file, or add this under \"mcpServers\" by hand: \"chant\": {}",
            canon::to_compact(&Value::Object(entry.clone()))
        )
    })?;
    Ok(McpTarget {
        path,
        shown,
        client: client.name(),
        text: merged.text,
        change: merged.change,
    })
}

fn inside_git(dir: &Path) -> bool {
    let mut d = Some(dir);
    while let Some(p) = d {
        if p.join(".git").exists() {
            return true;
        }
        d = p.parent();
    }
    false
}

/// `git init` in `dir`: `initialized`, or why not (git missing or failing is no error: the
/// project works without a repository, Ops need one).
fn git_init(dir: &Path) -> &'static str {
    match Command::new("git")
        .args(["init", "-q"])
        .current_dir(dir)
        .status()
    {
        Ok(s) if s.success() => "initialized",
        Ok(_) => "git init failed: run it yourself before using Ops",
        Err(_) => "git is not on PATH: run git init yourself before using Ops",
    }
}

/// Whether the folder `file` goes in exists, or can be made: its nearest existing ancestor is
/// a directory (a dangling link or a file there would fail the write after others were done).
fn creatable(file: &Path, shown: &str) -> Result<(), String> {
    let mut dir = file.parent();
    while let Some(d) = dir {
        if std::fs::symlink_metadata(d).is_ok() {
            return match std::fs::metadata(d) {
                Ok(m) if m.is_dir() => Ok(()),
                _ => Err(format!(
                    "Cannot write {shown}: {} is not a directory (or a link to one); chant init changed nothing",
                    d.display()
                )),
            };
        }
        dir = d.parent();
    }
    Ok(())
}
