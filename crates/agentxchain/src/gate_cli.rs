//! `gate list` and `gate show <gate_id> [--evaluate]`: the config's gates as the reference's
//! `gate` command shows them (`axc_kernel::gates::record`), read only. The recovery a blocked
//! run names (`agentxchain gate show <gate>`) runs here.

use std::process::ExitCode;

use axc_core::util::printable as clean;
use axc_kernel::gates;
use axc_kernel::run::config as cfg;
use serde_json::{Value as Json, json};

use crate::governed::store;

/// What `gate` was asked.
pub enum Ask {
    List,
    Show { id: String, evaluate: bool },
}

fn refuse(lines: &[String]) -> ExitCode {
    for l in lines {
        println!("{l}");
    }
    ExitCode::from(1)
}

/// `gate list|show`.
pub fn run(ask: Ask, as_json: bool) -> ExitCode {
    let store = match store() {
        Ok(s) => s,
        Err(c) => return c,
    };
    let config = match cfg::load(&store) {
        Ok(c) => c,
        Err(r) => {
            // The validator's warning on stderr, as the reference prints it; escaped (it
            // quotes the config's values).
            if let Some(w) = &r.warning {
                eprintln!("{}", clean(w));
            }
            return refuse(&[format!("  {}", r.message)]);
        }
    };
    let ids: Vec<String> = config["gates"]
        .as_object()
        .map(|g| g.keys().cloned().collect())
        .unwrap_or_default();
    if ids.is_empty() {
        return refuse(&["  No gates defined in config.".to_owned()]);
    }
    let state = store.state().unwrap_or(Json::Null);
    let available = || format!("  Available: {}", clean(&ids.join(", ")));
    match ask {
        Ask::List => {
            let list: Vec<Json> = ids
                .iter()
                .map(|id| gates::record(store.root(), &config, &state, id, None))
                .collect();
            if as_json {
                println!("{}", canon::to_pretty(&json!({"gates": list})));
                return ExitCode::SUCCESS;
            }
            println!("\n  Gates ({}):\n", list.len());
            for g in &list {
                let mut predicates = Vec::new();
                let n = g["effective_artifacts"].as_array().map_or(0, Vec::len);
                if n > 0 {
                    predicates.push(format!("{n} artifact{}", if n > 1 { "s" } else { "" }));
                }
                if g["requires_verification_pass"] == true {
                    predicates.push("verification".to_owned());
                }
                println!(
                    "  {}{} — phase {}, {}, requires {}",
                    clean(g["id"].as_str().unwrap_or("")),
                    g["status"]
                        .as_str()
                        .map_or_else(String::new, |s| format!(" [{}]", clean(s))),
                    g["linked_phase"]
                        .as_str()
                        .map_or("orphaned".to_owned(), clean),
                    if g["requires_human_approval"] == true {
                        "human-approval"
                    } else {
                        "auto"
                    },
                    if predicates.is_empty() {
                        "none".to_owned()
                    } else {
                        predicates.join(" + ")
                    }
                );
            }
            println!();
            println!("  Usage: agentxchain gate show <gate_id>\n");
            ExitCode::SUCCESS
        }
        Ask::Show { id, .. } if id.is_empty() => {
            refuse(&["  Gate ID is required.".to_owned(), available()])
        }
        Ask::Show { id, evaluate } => {
            if config["gates"].get(&id).is_none() {
                return refuse(&[format!("  Unknown gate: {}", clean(&id)), available()]);
            }
            // The accepted turns, as a gate is judged with them: who took part, the latest
            // verification (the reference's `gate show --evaluate` had none to look at: every
            // owned artifact failed and the verification read "missing").
            let history = evaluate.then(|| store.read_jsonl(axc_kernel::run::store::HISTORY));
            let g = gates::record(store.root(), &config, &state, &id, history.as_deref());
            if as_json {
                println!("{}", canon::to_pretty(&g));
                return ExitCode::SUCCESS;
            }
            show(&g, &state);
            ExitCode::SUCCESS
        }
    }
}

fn text(v: &Json) -> String {
    clean(&v.as_str().map_or_else(|| v.to_string(), str::to_owned))
}

fn show(g: &Json, state: &Json) {
    println!("\n  Gate: {}\n", text(&g["id"]));
    println!(
        "  Linked phase:       {}",
        g["linked_phase"]
            .as_str()
            .map_or("none (orphaned)".to_owned(), clean)
    );
    let yes = |b: bool, y: &str, n: &str| if b { y.to_owned() } else { n.to_owned() };
    println!(
        "  Human approval:     {}",
        yes(g["requires_human_approval"] == true, "yes", "no")
    );
    println!(
        "  Verification:       {}",
        yes(
            g["requires_verification_pass"] == true,
            "required",
            "not required"
        )
    );
    if !g["status"].is_null() {
        println!("  Status:             {}", text(&g["status"]));
    }
    let eval = &g["evaluation"];
    if eval.is_object() {
        println!(
            "  Evaluation:         {}",
            yes(eval["passed"] == true, "pass", "fail")
        );
    }
    println!();
    let arts = g["effective_artifacts"]
        .as_array()
        .cloned()
        .unwrap_or_default();
    if arts.is_empty() {
        println!("  Effective artifacts: none\n");
    } else {
        println!("  Effective artifacts:");
        for a in &arts {
            let judged = eval["artifacts"]
                .as_array()
                .and_then(|list| list.iter().find(|e| e["path"] == a["path"]));
            let icon = match judged {
                Some(j) if j["failures"].as_array().is_some_and(Vec::is_empty) => "✓",
                Some(_) => "✗",
                None => "-",
            };
            let mut semantics: Vec<String> = a["legacy_semantics"]
                .as_str()
                .map(clean)
                .into_iter()
                .collect();
            semantics.extend(
                a["semantic_checks"]
                    .as_array()
                    .into_iter()
                    .flatten()
                    .filter_map(|c| c["semantics"].as_str().map(clean)),
            );
            println!(
                "    {icon} {} [{}] [owner: {}] [semantics: {}]",
                text(&a["path"]),
                yes(a["required"] == true, "required", "optional"),
                a["owned_by"].as_str().map_or("none".to_owned(), clean),
                if semantics.is_empty() {
                    "none".to_owned()
                } else {
                    semantics.join(", ")
                }
            );
            for f in judged
                .and_then(|j| j["failures"].as_array())
                .into_iter()
                .flatten()
            {
                println!("      - {}", text(f));
            }
        }
        println!();
    }
    if eval.is_object() && g["requires_verification_pass"] == true {
        let v = &eval["verification"];
        let source = v["source_turn_id"]
            .as_str()
            .map_or_else(String::new, |t| format!(" ({})", clean(t)));
        println!(
            "  Verification pass: {} {}{source}\n",
            yes(v["passed"] == true, "✓", "✗"),
            yes(v["passed"] == true, "yes", "no")
        );
    }
    let f = &g["last_failure"];
    if f.is_object() {
        println!("  Last failure:");
        println!("    Type:    {}", text(&f["gate_type"]));
        println!("    Phase:   {}", text(&f["phase"]));
        println!("    At:      {}", text(&f["failed_at"]));
        let list = |k: &str, sep: &str| {
            f[k].as_array()
                .map(|a| a.iter().map(text).collect::<Vec<_>>().join(sep))
                .unwrap_or_default()
        };
        if f["reasons"].as_array().is_some_and(|a| !a.is_empty()) {
            println!("    Reasons: {}", list("reasons", "; "));
        }
        if f["missing_files"].as_array().is_some_and(|a| !a.is_empty()) {
            println!("    Missing: {}", list("missing_files", ", "));
        }
        println!();
    }
    // The reference's hint for a human gate that stands pending in the current phase with
    // nothing prepared to approve.
    if g["requires_human_approval"] == true
        && g["status"] == "pending"
        && state["phase"].is_string()
        && g["linked_phase"] == state["phase"]
        && !axc_kernel::js::truthy(&state["pending_phase_transition"])
    {
        println!("  Recovery:");
        println!(
            "    No phase transition is prepared for \"{}\".",
            text(&g["id"])
        );
        println!("    If a human escalation is open, resolve with: agentxchain unblock <hesc_id>");
        println!("    After resolution, run: agentxchain approve-transition");
        println!();
    }
}
