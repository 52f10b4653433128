//! `decisions`: the repo decisions that bind every run until overridden, as the reference's CLI
//! lists them (`--json`: the records with `binding_state` and authority), or one of them.

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use axc_core::util::{printable, resolve_path};
use axc_kernel::run::Store;
use axc_kernel::views::decisions;
use serde_json::Value as Json;

/// The nearest ancestor holding agentxchain.json or `.agentxchain/`.
fn root(dir: Option<&Path>) -> Option<PathBuf> {
    let start = resolve_path(dir.unwrap_or(Path::new(".")));
    start
        .ancestors()
        .find(|d| {
            d.join(axc_core::config::CONFIG_FILE).is_file() || d.join(".agentxchain").is_dir()
        })
        .map(Path::to_path_buf)
}

pub fn run(json: bool, all: bool, show: Option<&str>, dir: Option<&Path>) -> ExitCode {
    let Some(root) = root(dir) else {
        eprintln!("No AgentXchain project found. Run this inside a governed project.");
        return ExitCode::FAILURE;
    };
    let store = Store::new(&root);
    // An unreadable config is no config: authority is then not derived.
    let config = store
        .read_json(axc_core::config::CONFIG_FILE)
        .ok()
        .flatten()
        .unwrap_or(Json::Null);
    let t = |v: &Json| v.as_str().filter(|s| !s.is_empty()).map(printable);
    if let Some(id) = show {
        let Some(d) = decisions::show(&store, &config, id) else {
            eprintln!("Decision {} not found in repo decisions.", printable(id));
            return ExitCode::FAILURE;
        };
        if json {
            println!("{}", canon::to_pretty(&d));
            return ExitCode::SUCCESS;
        }
        let dash = || "—".to_owned();
        let short = |v: &Json| t(v).map_or_else(dash, |s| s.chars().take(16).collect());
        println!("Decision {}", t(&d["id"]).unwrap_or_default());
        println!("  Category:    {}", t(&d["category"]).unwrap_or_else(dash));
        println!("  Statement:   {}", t(&d["statement"]).unwrap_or_else(dash));
        println!("  Rationale:   {}", t(&d["rationale"]).unwrap_or_else(dash));
        println!("  Status:      {}", t(&d["status"]).unwrap_or_else(dash));
        println!(
            "  Binding:     {}",
            t(&d["binding_state"]).unwrap_or_else(dash)
        );
        println!("  Role:        {}", t(&d["role"]).unwrap_or_else(dash));
        println!("  Phase:       {}", t(&d["phase"]).unwrap_or_else(dash));
        println!("  Run:         {}", short(&d["run_id"]));
        println!("  Turn:        {}", short(&d["turn_id"]));
        println!(
            "  Durability:  {}",
            t(&d["durability"]).unwrap_or_else(|| "repo".into())
        );
        if d["authority_level"].is_number() && d["authority_source"] != "unknown_role" {
            println!(
                "  Authority:   {} ({})",
                d["authority_level"],
                t(&d["role"]).unwrap_or_default()
            );
        }
        if let Some(o) = t(&d["overrides"]) {
            println!("  Supersedes:  {o}");
        }
        println!(
            "  Created:     {}",
            t(&d["created_at"]).unwrap_or_else(dash)
        );
        if let Some(o) = t(&d["overridden_by"]) {
            println!("  Overridden:  {o}");
        }
        return ExitCode::SUCCESS;
    }
    let list = decisions::list(&store, &config, all);
    if json {
        println!("{}", canon::to_pretty(&Json::Array(list)));
        return ExitCode::SUCCESS;
    }
    if list.is_empty() {
        if all {
            println!("No repo-level decisions found.");
        } else {
            println!("No active repo decisions found.");
            if !decisions::list(&store, &config, true).is_empty() {
                println!("Use --all to include overridden decisions.");
            }
        }
        return ExitCode::SUCCESS;
    }
    let label = if all {
        "Repo Decisions (all)"
    } else {
        "Active Repo Decisions"
    };
    println!("{label}: {}", list.len());
    for l in decisions::summary_lines(&store, &config, all) {
        println!("{l}");
    }
    println!();
    for d in &list {
        let link = match (t(&d["overridden_by"]), t(&d["overrides"])) {
            (Some(by), _) => format!(" → {by}"),
            (None, Some(o)) => format!(" ← supersedes {o}"),
            _ => String::new(),
        };
        println!(
            "  {}  {}  {}  {}{link}",
            t(&d["id"]).unwrap_or_default(),
            t(&d["status"]).unwrap_or_else(|| "—".into()),
            t(&d["category"]).unwrap_or_default(),
            t(&d["statement"]).unwrap_or_default()
        );
        let run: String = t(&d["run_id"]).map_or("?".into(), |r| r.chars().take(12).collect());
        let authority = if d["authority_source"] == "unknown_role" {
            " • authority unknown".to_owned()
        } else if d["authority_level"].is_number() {
            format!(" • authority {}", d["authority_level"])
        } else {
            String::new()
        };
        println!(
            "    by {} in {run}{authority}",
            t(&d["role"]).unwrap_or_else(|| "?".into())
        );
    }
    ExitCode::SUCCESS
}
