//! `hooks`: the project's hooks as this machine would run them (each phase's hooks, what each
//! runs, whether the person allowed them here), and `hooks allow` — a person's command — which
//! records these exact hooks as allowed for this project. The rules live in
//! `axc_kernel::run::hooked`.

use std::process::ExitCode;

use axc_kernel::run::{config as cfg, hooked};
use serde_json::{Value as Json, json};

use crate::governed::{refuse, store};
use axc_core::util::printable as clean;

/// One line per hook: `phase  name  mode  what it runs`.
fn listing(hooks: &Json) -> Vec<(String, String, String, String)> {
    axc_kernel::hooks::PHASES
        .iter()
        .flat_map(|phase| {
            hooks[*phase]
                .as_array()
                .into_iter()
                .flatten()
                .map(move |h| {
                    let runs = match h["type"].as_str() {
                        Some("http") => format!("POST {}", h["url"].as_str().unwrap_or("")),
                        _ => h["command"]
                            .as_array()
                            .into_iter()
                            .flatten()
                            .map(|a| a.as_str().map_or_else(|| a.to_string(), str::to_owned))
                            .collect::<Vec<_>>()
                            .join(" "),
                    };
                    (
                        (*phase).to_owned(),
                        h["name"].as_str().unwrap_or("").to_owned(),
                        h["mode"].as_str().unwrap_or("").to_owned(),
                        runs,
                    )
                })
        })
        .collect()
}

/// `hooks [allow] [--json]`.
pub fn run(allow: bool, as_json: bool) -> ExitCode {
    let store = match store() {
        Ok(s) => s,
        Err(c) => return c,
    };
    let config = match cfg::load(&store) {
        Ok(c) => c,
        Err(r) => return refuse(&r),
    };
    let hooks = &config["hooks"];
    let list = listing(hooks);
    if allow {
        if list.is_empty() {
            println!("agentxchain.json declares no hooks: nothing to allow.");
            return ExitCode::SUCCESS;
        }
        return match hooked::allow(store.root(), hooks) {
            Ok(path) => {
                if as_json {
                    println!(
                        "{}",
                        json!({"allowed": true, "hooks": list.len(), "allow_list": path.display().to_string(),
                            "key": hooked::allowance_key(store.root(), hooks)})
                    );
                } else {
                    print_list(&list);
                    println!(
                        "Allowed these {} hook(s) for this project (recorded in {}).",
                        list.len(),
                        clean(&path.display().to_string())
                    );
                    println!("Any change to them asks again.");
                }
                ExitCode::SUCCESS
            }
            Err(e) => {
                println!("Cannot record the allowance: {}", clean(&e));
                ExitCode::from(1)
            }
        };
    }
    let allowed = !list.is_empty() && hooked::allowed(store.root(), hooks);
    if as_json {
        let hooks: Vec<Json> = list
            .iter()
            .map(|(phase, name, mode, runs)| json!({"phase": phase, "name": name, "mode": mode, "runs": runs}))
            .collect();
        println!("{}", json!({"hooks": hooks, "allowed": allowed}));
        return ExitCode::SUCCESS;
    }
    if list.is_empty() {
        println!("agentxchain.json declares no hooks.");
        return ExitCode::SUCCESS;
    }
    print_list(&list);
    if allowed {
        println!("Allowed on this machine: the governed commands run them.");
    } else {
        println!("Not allowed on this machine: the governed commands that would run them refuse.");
        println!("Review them, then run: agentxchain hooks allow");
    }
    ExitCode::SUCCESS
}

fn print_list(list: &[(String, String, String, String)]) {
    for (phase, name, mode, runs) in list {
        println!(
            "  {:<18} {:<20} {:<9} {}",
            phase,
            clean(name),
            clean(mode),
            clean(runs)
        );
    }
}
