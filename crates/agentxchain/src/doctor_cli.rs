//! `agentxchain doctor [--json]`: the readiness report (`axc_kernel::views::doctor`) as the
//! reference prints it, exit 1 when a check fails.

use std::path::PathBuf;
use std::process::ExitCode;

use axc_core::util::printable as clean;
use axc_kernel::run::Store;
use axc_kernel::views::doctor;
use serde_json::{Value as Json, json};

/// `doctor`.
pub fn doctor(json_out: bool) -> ExitCode {
    let fail = |text: String, doc: Json| {
        if json_out {
            println!("{doc}");
        } else {
            println!("{text}");
        }
        ExitCode::from(1)
    };
    let cwd = std::env::current_dir().unwrap_or_else(|_| PathBuf::from("."));
    let Some(root) = axc_core::config::find_root(&cwd) else {
        return fail(
            "No agentxchain.json found. Run `agentxchain init` first.".into(),
            json!({"error": "No agentxchain.json found"}),
        );
    };
    let store = Store::new(root);
    let raw = match store.read_text("agentxchain.json", 16 << 20) {
        Ok(Some(t)) => match serde_json::from_str::<Json>(&t) {
            Ok(v) => v,
            Err(e) => {
                let m = format!("agentxchain.json is invalid JSON: {e}");
                return fail(m.clone(), json!({ "error": m }));
            }
        },
        Ok(None) => {
            return fail(
                "No agentxchain.json found. Run `agentxchain init` first.".into(),
                json!({"error": "No agentxchain.json found"}),
            );
        }
        Err(r) => {
            let m = format!("agentxchain.json cannot be read: {}", r.message);
            return fail(m.clone(), json!({ "error": m }));
        }
    };
    let report = doctor::report(&store, &raw, env!("CARGO_PKG_VERSION"));
    let fails = report["fail_count"].as_u64().unwrap_or(0);
    let warns = report["warn_count"].as_u64().unwrap_or(0);
    if json_out {
        println!(
            "{}",
            serde_json::to_string_pretty(&report).unwrap_or_default()
        );
    } else {
        println!();
        println!("  AgentXchain Governed Doctor");
        println!("  {}", "─".repeat(44));
        println!(
            "  Project: {}",
            clean(report["project"].as_str().unwrap_or("unknown"))
        );
        println!("  Versioning: {}", doctor::version_label(&raw));
        println!();
        for c in report["checks"].as_array().into_iter().flatten() {
            let badge = match c["level"].as_str() {
                Some("pass") => "PASS",
                Some("warn") => "WARN",
                Some("info") => "INFO",
                _ => "FAIL",
            };
            let name = clean(c["name"].as_str().unwrap_or(""));
            let pad = 24usize.saturating_sub(name.chars().count());
            println!(
                "  {badge}  {name}{} {}",
                " ".repeat(pad),
                clean(c["detail"].as_str().unwrap_or(""))
            );
            if c["runtime_contract"].is_object() {
                println!(
                    "        {}",
                    clean(&doctor::summarize_contract(&c["runtime_contract"]))
                );
                let roles: Vec<String> = c["bound_roles"]
                    .as_array()
                    .into_iter()
                    .flatten()
                    .map(doctor::summarize_role)
                    .collect();
                if !roles.is_empty() {
                    println!("        roles: {}", clean(&roles.join(" | ")));
                }
            }
        }
        println!();
        // "0 warnings" (the reference prints "0 warning").
        let plural = |n: u64| if n == 1 { "" } else { "s" };
        if fails == 0 && warns == 0 {
            println!("  ✓ Governed project is ready.");
        } else if fails == 0 {
            println!("  Ready with {warns} warning{}.", plural(warns));
        } else {
            println!(
                "  Not ready: {fails} failure{}, {warns} warning{}.",
                plural(fails),
                plural(warns)
            );
        }
        if fails == 0 && report["connector_probe_recommended"] == true {
            println!(
                "  Next: {}",
                report["connector_probe_detail"].as_str().unwrap_or("")
            );
        }
        println!();
    }
    if fails > 0 {
        ExitCode::from(1)
    } else {
        ExitCode::SUCCESS
    }
}
