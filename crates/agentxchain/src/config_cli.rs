//! `config`: show the project's config, read one value (`--get`), set one (`--set`, a person's
//! command), print it whole (`--json`). The rules live in `axc_kernel::run::settings`.

use std::process::ExitCode;

use axc_kernel::run::settings;
use serde_json::Value as Json;

use crate::governed::{refuse, store};
use axc_core::util::printable as clean;

/// What `config` was asked.
pub struct Args {
    pub get: Option<String>,
    pub set: Option<Vec<String>>,
    pub json: bool,
    pub add_agent: bool,
    pub remove_agent: Option<String>,
}

fn fail(lines: &[&str]) -> ExitCode {
    for l in lines {
        println!("{l}");
    }
    ExitCode::from(1)
}

fn legacy_only(flag: &str) -> ExitCode {
    fail(&[
        &format!("  {flag} is legacy-only."),
        "  Governed repos use roles and runtimes instead of legacy v3 agents.",
        "  Use `agentxchain config --set <path> <value>` for governed config changes.",
    ])
}

/// `--set`'s words as the reference splits them: the path, then the value (the rest joined
/// by spaces); one word holding both is split at its first run of spaces.
fn key_and_value(words: &[String]) -> Option<(String, String)> {
    match words {
        [key, rest @ ..] if !rest.is_empty() => Some((key.clone(), rest.join(" "))),
        [one] => {
            let t = one.trim();
            let (k, v) = t.split_once(char::is_whitespace)?;
            let v = v.trim_start();
            (!v.is_empty()).then(|| (k.to_owned(), v.to_owned()))
        }
        _ => None,
    }
}

fn pretty(v: &Json) -> String {
    serde_json::to_string_pretty(v).unwrap_or_default()
}

pub fn run(a: Args) -> ExitCode {
    let store = match store() {
        Ok(s) => s,
        Err(c) => return c,
    };
    let (config, governed) = match settings::read(&store) {
        Ok(c) => c,
        Err(r) => return refuse(&r),
    };
    if a.get.is_some() && a.set.is_some() {
        return fail(&[
            "  --get and --set are mutually exclusive.",
            "  Inspect a value with `agentxchain config --get <path>` or change it with `agentxchain config --set <path> <value>`.",
        ]);
    }
    if a.add_agent {
        if governed {
            return legacy_only("--add-agent");
        }
        return fail(&[
            "  --add-agent asks its questions at a terminal in the JavaScript tool; this build does not ask.",
            "  Add the agent to agentxchain.json's agents (an id with a name and a mandate) by hand.",
        ]);
    }
    if let Some(id) = &a.remove_agent {
        if governed {
            return legacy_only("--remove-agent");
        }
        if let Some(code) = crate::person_only("config --remove-agent") {
            return code;
        }
        return match settings::remove_agent(&store, id) {
            Err(r) => refuse(&r),
            Ok((name, left)) => {
                println!();
                println!("  ✓ Removed agent {} ({})", clean(id), clean(&name));
                println!("  Agents now: {}", clean(&left.join(", ")));
                println!();
                ExitCode::SUCCESS
            }
        };
    }
    if let Some(path) = &a.get {
        return match settings::get(&config, path) {
            Err(r) => refuse(&r),
            Ok(v) if a.json || v.is_object() || v.is_array() => {
                println!("{}", pretty(&v));
                ExitCode::SUCCESS
            }
            Ok(v) => {
                println!("{}", clean(&settings::display(&v)));
                ExitCode::SUCCESS
            }
        };
    }
    if let Some(words) = &a.set {
        let Some((key, value)) = key_and_value(words) else {
            return fail(&[
                "  Usage: agentxchain config --set <key> <value>",
                "  Example: agentxchain config --set project.goal \"Build a governed CLI\"",
            ]);
        };
        if let Some(code) = crate::person_only("config --set") {
            return code;
        }
        return match settings::set(&store, &key, &value) {
            Err(r) => refuse(&r),
            Ok(done) => {
                println!();
                println!(
                    "  ✓ Set {} = {}",
                    clean(&done.key),
                    clean(&settings::display(&done.value))
                );
                if let Some(old) = &done.old {
                    println!("    (was: {})", clean(&settings::display(old)));
                }
                println!();
                ExitCode::SUCCESS
            }
        };
    }
    if a.json {
        println!("{}", pretty(&config));
        return ExitCode::SUCCESS;
    }
    let text =
        |v: &Json, missing: &str| clean(v.as_str().filter(|s| !s.is_empty()).unwrap_or(missing));
    let count = |v: &Json| v.as_object().map_or(0, |m| m.len());
    println!();
    if governed {
        println!("  AgentXchain Governed Config");
        println!("  {}", "─".repeat(40));
        println!();
        println!(
            "  Project:   {}",
            text(&config["project"]["name"], "(unknown)")
        );
        println!(
            "  Project ID: {}",
            text(&config["project"]["id"], "(unknown)")
        );
        println!(
            "  Goal:      {}",
            text(&config["project"]["goal"], "(not set)")
        );
        println!("  Template:  {}", text(&config["template"], "generic"));
        println!("  Roles:     {}", count(&config["roles"]));
        println!("  Runtimes:  {}", count(&config["runtimes"]));
        println!();
        println!("  Commands:");
        println!(
            "    agentxchain config --get project.goal              Read one config value without opening JSON"
        );
        println!(
            "    agentxchain config --set project.goal \"Build a ...\"  Set mission context without hand-editing JSON"
        );
        println!(
            "    agentxchain config --set roles.qa.runtime manual-qa  Switch a governed role runtime"
        );
        println!("    agentxchain config --json                             Output raw config");
    } else {
        println!("  AgentXchain Config");
        println!("  {}", "─".repeat(40));
        println!();
        println!(
            "  Project:  {}",
            clean(&settings::display(&config["project"]))
        );
        println!(
            "  Version:  {}",
            clean(&settings::display(&config["version"]))
        );
        println!("  Log:      {}", clean(&settings::display(&config["log"])));
        println!();
        println!("  Rules:");
        for (k, v) in config["rules"].as_object().into_iter().flatten() {
            println!("    {}: {}", clean(k), clean(&settings::display(v)));
        }
        println!();
        println!("  Agents:   {}", count(&config["agents"]));
        for (id, agent) in config["agents"].as_object().into_iter().flatten() {
            let mandate = agent["mandate"].as_str().unwrap_or("");
            let short: String = mandate.chars().take(80).collect();
            let more = if mandate.chars().count() > 80 {
                "..."
            } else {
                ""
            };
            println!("    {} — {}", clean(id), text(&agent["name"], ""));
            println!("    {}{more}", clean(&short));
            println!();
        }
        println!("  Commands:");
        println!("    agentxchain config --remove-agent <id> Remove an agent");
        println!("    agentxchain config --get <key>         Read one config value");
        println!("    agentxchain config --set <key> <val>   Update a setting");
        println!("    agentxchain config --json              Output as JSON");
    }
    println!();
    ExitCode::SUCCESS
}
