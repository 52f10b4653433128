//! `hooks`: the project's hooks as this machine would run them — each phase's hooks with all
//! that decides what they do (type, mode, timeout, the command's parts or the URL, env,
//! headers) — and whether the governed commands run them now; `hooks allow`, a person's
//! command, records these exact hooks as allowed for this project. The rules live in
//! `axc_kernel::run::hooked`.

use std::process::ExitCode;

use axc_kernel::hooks::PHASES;
use axc_kernel::run::{config as cfg, hooked};
use serde_json::{Value as Json, json};

use crate::governed::store;
use axc_core::util::{ascii_escaped as exact, printable as clean};

/// Every hook, in phase order, as `{phase, name, type, mode, timeout_ms, command | method and
/// url, env, headers}` — the hook's own fields, nothing left out that changes what it does.
fn listing(hooks: &Json) -> Vec<Json> {
    PHASES
        .iter()
        .flat_map(|phase| {
            hooks[*phase]
                .as_array()
                .into_iter()
                .flatten()
                .map(move |h| {
                    let mut e = json!({"phase": phase});
                    for (k, v) in h.as_object().into_iter().flatten() {
                        e[k] = v.clone();
                    }
                    e
                })
        })
        .collect()
}

/// Prints `lines` as text, or `value` as JSON, and exits with `code`.
fn answer(as_json: bool, value: Json, lines: &[String], code: u8) -> ExitCode {
    if as_json {
        println!("{value}");
    } else {
        for l in lines {
            println!("{l}");
        }
    }
    ExitCode::from(code)
}

/// One hook as text lines, every value escaped (JSON for the command's parts, so
/// `["lint --fix"]` and `["lint", "--fix"]` read apart), every character outside printable
/// ASCII shown as an escape: the person allows these bytes, and no joiner, invisible or
/// look-alike character may pass for another.
fn text_lines(list: &[Json]) -> Vec<String> {
    let mut out = Vec::new();
    for h in list {
        let field = |k: &str| {
            exact(
                &h[k]
                    .as_str()
                    .map_or_else(|| h[k].to_string(), str::to_owned),
            )
        };
        out.push(format!(
            "  {} {} ({}, {}, timeout {} ms)",
            field("phase"),
            field("name"),
            field("type"),
            field("mode"),
            field("timeout_ms")
        ));
        if h["type"] == "http" {
            out.push(format!("      {} {}", field("method"), field("url")));
        } else {
            out.push(format!("      runs: {}", exact(&h["command"].to_string())));
        }
        for key in ["env", "headers"] {
            if let Some(m) = h[key].as_object().filter(|m| !m.is_empty()) {
                out.push(format!(
                    "      {key}: {}",
                    exact(&Json::Object(m.clone()).to_string())
                ));
            }
        }
    }
    out
}

/// `hooks [allow] [--json]`.
pub fn run(allow: bool, as_json: bool) -> ExitCode {
    let store = match store() {
        Ok(s) => s,
        Err(c) => return c,
    };
    let config = match cfg::load(&store) {
        Ok(c) => c,
        Err(r) => {
            let mut lines = r.warning.iter().cloned().collect::<Vec<_>>();
            lines.push(r.message.clone());
            return answer(as_json, json!({"error": r.message}), &lines, 1);
        }
    };
    let hooks = &config["hooks"];
    let list = listing(hooks);
    if allow {
        if list.is_empty() && hooked::nothing_to_allow(store.root(), hooks) {
            return answer(
                as_json,
                json!({"allowed": false, "hooks": 0, "reason": "no hooks"}),
                &["agentxchain.json declares no hooks: nothing to allow.".to_owned()],
                0,
            );
        }
        return match hooked::allow(store.root(), hooks) {
            Ok(path) => {
                let mut lines = text_lines(&list);
                lines.push(if list.is_empty() {
                    format!(
                        "Recorded: this project runs without hooks now (in {}); the hooks allowed before no longer count.",
                        clean(&path.display().to_string())
                    )
                } else {
                    format!(
                        "Allowed these {} hook(s) for this project (recorded in {}). Any change to them, or to the files their commands name, asks again.",
                        list.len(),
                        clean(&path.display().to_string())
                    )
                });
                lines.push("Note: a hook runs what it names with your rights — a script in the project, the project's git config, a package's scripts: an agent that can change those changes what runs.".to_owned());
                answer(
                    as_json,
                    json!({"allowed": true, "hooks": list.len(), "allow_list": path.display().to_string()}),
                    &lines,
                    0,
                )
            }
            Err(e) => answer(
                as_json,
                json!({"allowed": false, "error": e}),
                &[format!("Cannot record the allowance: {}", clean(&e))],
                1,
            ),
        };
    }
    // Whether the governed commands would run them now (and leave none out): allowed here.
    let why = hooked::trusted(&store, &config).err().map(|r| r.message);
    if list.is_empty() && why.is_none() {
        return answer(
            as_json,
            json!({"hooks": [], "runnable": true, "why": null}),
            &["agentxchain.json declares no hooks.".to_owned()],
            0,
        );
    }
    let mut lines = text_lines(&list);
    match &why {
        None => lines.push("The governed commands run these hooks.".to_owned()),
        Some(w) => {
            lines.push(format!("Not run now: {}", clean(w)));
        }
    }
    answer(
        as_json,
        json!({"hooks": list, "runnable": why.is_none(), "why": why}),
        &lines,
        0,
    )
}
