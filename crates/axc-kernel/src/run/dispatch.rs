//! A turn's dispatch bundle (`.agentxchain/dispatch/turns/<turn>/`): `ASSIGNMENT.json` (the
//! turn's contract as data), `PROMPT.md` (what the role is asked to do and how to answer),
//! `CONTEXT.md` (where the run is), sealed by `MANIFEST.json`; and the dispatch index.

use serde_json::{Value as Json, json};

use super::config as cfg;
use super::store::Store;
use super::{Refusal, now};
use crate::turn_result::RESERVED_PATHS;

pub fn bundle_rel(turn_id: &str) -> String {
    format!(".agentxchain/dispatch/turns/{turn_id}")
}

pub fn staging_rel(turn_id: &str) -> String {
    format!(".agentxchain/staging/{turn_id}/turn-result.json")
}

fn assignment(state: &Json, config: &Json, turn: &Json) -> Json {
    let role = turn["assigned_role"].as_str().unwrap_or("");
    let turn_id = turn["turn_id"].as_str().unwrap_or("");
    let phase = state["phase"].as_str().unwrap_or("");
    let siblings: Vec<&String> = state["active_turns"]
        .as_object()
        .map(|m| m.keys().filter(|k| *k != turn_id).collect())
        .unwrap_or_default();
    let mut a = json!({
        "run_id": state["run_id"],
        "turn_id": turn_id,
        "phase": phase,
        "role": role,
        "runtime_id": turn["runtime_id"],
        "write_authority": cfg::write_authority(config, role),
        "accepted_integration_ref": state["accepted_integration_ref"],
        "staging_result_path": staging_rel(turn_id),
        "reserved_paths": RESERVED_PATHS,
        "allowed_next_roles": config["routing"][phase]["allowed_next_roles"],
        "attempt": turn["attempt"],
        "deadline_at": turn["deadline_at"],
        "assigned_sequence": turn["assigned_sequence"],
        "budget_reservation_usd": state["budget_reservations"][turn_id]["reserved_usd"],
        "active_siblings": siblings,
    });
    if turn["intake_context"].is_object() {
        a["intake_context"] = turn["intake_context"].clone();
    }
    a
}

/// The acceptance items of the intent a turn serves (empty when none).
fn contract(turn: &Json) -> Vec<String> {
    turn["intake_context"]["acceptance_contract"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(Json::as_str)
        .map(str::to_owned)
        .collect()
}

fn gate_lines(config: &Json, phase: &str) -> Vec<String> {
    let mut out = Vec::new();
    let Some(gate_id) = cfg::exit_gate(config, phase) else {
        out.push("This phase has no exit gate.".into());
        return out;
    };
    let gate = &config["gates"][gate_id];
    out.push(format!("Exit gate: `{gate_id}`"));
    for f in gate["requires_files"].as_array().into_iter().flatten() {
        out.push(format!("- requires file `{}`", f.as_str().unwrap_or("")));
    }
    if gate["requires_verification_pass"] == true {
        out.push("- requires verification status `pass`".into());
    }
    if gate["requires_human_approval"] == true {
        out.push("- requires human approval before the run moves on".into());
    }
    out
}

fn prompt(store: &Store, state: &Json, config: &Json, turn: &Json) -> String {
    let role = turn["assigned_role"].as_str().unwrap_or("");
    let turn_id = turn["turn_id"].as_str().unwrap_or("");
    let phase = state["phase"].as_str().unwrap_or("");
    let title = cfg::role_title(config, role);
    let authority = cfg::write_authority(config, role);
    let mandate = cfg::role(config, role)["mandate"].as_str().unwrap_or("");
    let role_prompt = cfg::role(config, role)["prompt"]
        .as_str()
        .map(str::to_owned)
        .unwrap_or_else(|| format!(".agentxchain/prompts/{role}.md"));
    let role_text = (relative_inside(&role_prompt)
        && role_prompt.starts_with(".agentxchain/prompts/"))
    .then(|| fsread::read_inside(store.root(), std::path::Path::new(&role_prompt), 1 << 20).ok())
    .flatten()
    .map(|b| String::from_utf8_lossy(&b).into_owned())
    .unwrap_or_default();
    let next_roles: Vec<&str> = config["routing"][phase]["allowed_next_roles"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(Json::as_str)
        .collect();
    let authority_rule = match authority {
        "authoritative" => {
            "You may change product files. Every file you change goes in `files_changed`; the orchestrator compares them with what git observes."
        }
        "proposed" => "Propose changes as a patch; do not write product files directly.",
        _ => {
            "Do not change product files: write only planning artifacts under `.planning/` and reviews under `.agentxchain/reviews/`."
        }
    };
    let mut p = format!(
        "# Turn Assignment: {title} ({role})\n\n\
         - Run: `{run}`\n- Turn: `{turn_id}`\n- Phase: `{phase}`\n- Attempt: {attempt}\n- Deadline: {deadline}\n\n\
         ## Your Mandate\n\n{mandate}\n\n\
         ## Protocol Rules\n\n\
         - Challenge the previous turn: name at least one risk or objection; rubber-stamping violates the protocol.\n\
         - Never write the orchestrator's files: {reserved}.\n\
         - Decisions carry ids `DEC-NNN`, objections `OBJ-NNN`.\n\n\
         ### Write Authority: {authority}\n\n{authority_rule}\n\n\
         ## Phase Exit Gate\n\n{gate}\n\n\
         To leave the phase, set `phase_transition_request` to the next phase; in the final phase set `run_completion_request: true`.\n\n\
         ## Required Output\n\n\
         Write the turn result as JSON to `{staging}`, then run `agentxchain validate --mode turn` and `agentxchain accept-turn`.\n\n\
         Fields: `schema_version` (\"1.0\"), `run_id` (\"{run}\"), `turn_id` (\"{turn_id}\"), `role` (\"{role}\"), \
         `runtime_id` (\"{runtime}\"), `status` (completed | blocked | needs_human | failed), `summary`, `decisions`, \
         `objections`, `files_changed`, `artifacts_created`, `verification` ({{status: pass | fail | skipped, commands, \
         evidence_summary, machine_evidence}}), `artifact` ({{type: workspace | patch | commit | review, ref}}), \
         `proposed_next_role` (one of: {next}), `phase_transition_request`, `run_completion_request`, \
         `needs_human_reason`, `cost` ({{input_tokens, output_tokens, usd}}).\n",
        run = state["run_id"].as_str().unwrap_or(""),
        attempt = turn["attempt"],
        deadline = turn["deadline_at"].as_str().unwrap_or(""),
        reserved = RESERVED_PATHS.map(|r| format!("`{r}`")).join(", "),
        gate = gate_lines(config, phase).join("\n"),
        staging = staging_rel(turn_id),
        runtime = turn["runtime_id"].as_str().unwrap_or(""),
        next = next_roles.join(", "),
    );
    p.push_str(&conflict_section(&turn["conflict_context"]));
    let ctx = &turn["intake_context"];
    if ctx.is_object() {
        p.push_str(&format!(
            "\n## Intake Intent — this turn's charter\n\n{}\n",
            ctx["charter"].as_str().unwrap_or("")
        ));
        let items = contract(turn);
        if !items.is_empty() {
            p.push_str("\nAnswer every acceptance item; acceptance checks each one:\n\n");
            for (i, item) in items.iter().enumerate() {
                p.push_str(&format!("{}. {item}\n", i + 1));
            }
            p.push_str("\nSay how in `intent_response`: one `{item, status: addressed | deferred | rejected, detail}` per item, the item's text exactly as above.\n");
        }
    }
    if !role_text.is_empty() {
        p.push_str("\n## Role Prompt\n\n");
        p.push_str(&role_text);
        if !role_text.ends_with('\n') {
            p.push('\n');
        }
    }
    p
}

/// A retry after a conflict (`reject-turn --reassign`): what conflicted, with whom, and what of
/// the prior attempt to keep — the reference's section, its values escaped (they come from the
/// run's files).
fn conflict_section(c: &Json) -> String {
    if !c.is_object() {
        return String::new();
    }
    let esc = axc_core::util::printable;
    let strs = |v: &Json| -> Vec<String> {
        v.as_array()
            .into_iter()
            .flatten()
            .filter_map(Json::as_str)
            .map(esc)
            .collect()
    };
    let turns = |v: &Json| -> Vec<String> {
        v.as_array()
            .into_iter()
            .flatten()
            .map(|t| {
                let files = strs(&t["files_changed"]);
                format!(
                    "- `{}` ({}) touched: {}",
                    esc(t["turn_id"].as_str().unwrap_or("")),
                    esc(t["role"].as_str().unwrap_or("")),
                    if files.is_empty() {
                        "(none)".to_owned()
                    } else {
                        files.join(", ")
                    }
                )
            })
            .collect()
    };
    let mut l = vec![
        String::new(),
        "## File Conflict - Retry Required".to_owned(),
        String::new(),
        "Your prior attempt conflicted with work accepted after your assignment.".to_owned(),
        String::new(),
    ];
    let files = strs(&c["conflicting_files"]);
    if !files.is_empty() {
        l.push("Conflicting files:".into());
        l.extend(files.iter().map(|f| format!("- `{f}`")));
        l.push(String::new());
    }
    let since = turns(&c["accepted_turns_since"]);
    if !since.is_empty() {
        l.push("Accepted turns since assignment:".into());
        l.extend(since);
        l.push(String::new());
    }
    let forward = strs(&c["forward_revision_files"]);
    if !forward.is_empty() {
        l.push("Forward-revision files already safe to carry forward:".into());
        l.extend(forward.iter().map(|f| format!("- `{f}`")));
        let ft = turns(&c["forward_revision_turns_since"]);
        if !ft.is_empty() {
            l.push(String::new());
            l.push("Forward-revision turns since assignment:".into());
            l.extend(ft);
        }
        l.push(String::new());
    }
    let keep = strs(&c["non_conflicting_files_preserved"]);
    if !keep.is_empty() {
        l.push("Non-conflicting files to preserve from your prior attempt:".into());
        l.extend(keep.iter().map(|f| format!("- `{f}`")));
        l.push(String::new());
    }
    l.push(c["guidance"].as_str().map(esc).unwrap_or_else(|| {
        "You MUST rebase your changes on top of the current workspace state before retrying.".into()
    }));
    l.push(String::new());
    l.join("\n")
}

fn context(store: &Store, state: &Json, config: &Json, turn: &Json) -> String {
    let phase = state["phase"].as_str().unwrap_or("");
    let mut c = format!(
        "# Execution Context\n\n## Current State\n\n- Run: `{}`\n- Phase: `{phase}`\n- Status: `{}`\n- Accepted integration ref: `{}`\n- Budget: spent ${}, remaining {}\n",
        state["run_id"].as_str().unwrap_or(""),
        state["status"].as_str().unwrap_or(""),
        state["accepted_integration_ref"].as_str().unwrap_or("none"),
        axc_core::util::to_fixed(
            state["budget_status"]["spent_usd"].as_f64().unwrap_or(0.0),
            2
        ),
        state["budget_status"]["remaining_usd"].as_f64().map_or(
            "unlimited".to_owned(),
            |r| format!("${}", axc_core::util::to_fixed(r, 2))
        ),
    );
    c.push_str(&super::repo_decisions::context_section(state, config));
    if state["inherited_context"].is_object() {
        // The whole summary on the run's first turn, its outline after.
        let compact = !state["last_completed_turn_id"].is_null();
        c.push('\n');
        c.push_str(&super::run_history::inherited_markdown(
            &state["inherited_context"],
            compact,
        ));
    }
    let ctx = &turn["intake_context"];
    if ctx.is_object() {
        let f = |k: &str| ctx[k].as_str().unwrap_or("").to_owned();
        c.push_str(&format!(
            "\n## Intake Intent\n\n- Intent: `{}`\n- Event: `{}`\n- Source: {}\n- Category: {}\n- Charter: {}\n",
            f("intent_id"),
            f("event_id"),
            f("source"),
            f("category"),
            f("charter"),
        ));
        if let Some(scope) = ctx["phase_scope"].as_str() {
            c.push_str(&format!("- Phase scope: {scope}\n"));
        }
        let items = contract(turn);
        if !items.is_empty() {
            c.push_str("- Acceptance contract:\n");
            for item in items {
                c.push_str(&format!("  - {item}\n"));
            }
        }
    }
    if let Some(last) = store.last_jsonl(super::store::HISTORY).as_ref() {
        c.push_str(&format!(
            "\n## Previous Turn\n\n- Turn: `{}` ({}, {})\n- Summary: {}\n",
            last["turn_id"].as_str().unwrap_or(""),
            last["role"].as_str().unwrap_or(""),
            last["phase"].as_str().unwrap_or(""),
            last["summary"].as_str().unwrap_or(""),
        ));
        for d in last["decisions"].as_array().into_iter().flatten() {
            c.push_str(&format!(
                "- Decision {}: {}\n",
                d["id"].as_str().unwrap_or(""),
                d["statement"].as_str().unwrap_or("")
            ));
        }
        for o in last["objections"].as_array().into_iter().flatten() {
            c.push_str(&format!(
                "- Objection {} ({}): {}\n",
                o["id"].as_str().unwrap_or(""),
                o["severity"].as_str().unwrap_or(""),
                o["statement"].as_str().unwrap_or("")
            ));
        }
    }
    if let Some(gate_id) = cfg::exit_gate(config, phase) {
        c.push_str("\n## Gate Required Files\n\n");
        for f in config["gates"][gate_id]["requires_files"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(Json::as_str)
        {
            let exists = relative_inside(f) && store.is_file(f);
            c.push_str(&format!(
                "- `{f}` — {}\n",
                if exists { "exists" } else { "missing" }
            ));
        }
    }
    c.push_str("\n## Phase Gate Status\n\n");
    for (g, s) in state["phase_gate_status"].as_object().into_iter().flatten() {
        c.push_str(&format!("- `{g}`: {}\n", s.as_str().unwrap_or("")));
    }
    c
}

/// A config path read only when it stays inside the project (no root, no `..`).
fn relative_inside(p: &str) -> bool {
    let path = std::path::Path::new(p);
    !p.is_empty()
        && path.components().all(|c| {
            matches!(
                c,
                std::path::Component::Normal(_) | std::path::Component::CurDir
            )
        })
}

/// Writes `turn`'s bundle and the dispatch index, runs the `after_dispatch` hooks of `hooks`
/// on it, and seals it — every dispatch's order (`assign`, the redispatch of a retained turn,
/// `step --resume`'s claim). `Some` when a hook halted the dispatch: the run is blocked, the
/// turn retained, nothing sealed.
pub fn write_hooked_bundle(
    store: &Store,
    config: &Json,
    hooks: &Json,
    state: &Json,
    turn: &Json,
) -> Result<Option<super::hooked::Halted>, Refusal> {
    write_bundle_files(store, state, config, turn)?;
    if let Some(halted) = super::hooked::after_dispatch(store, config, hooks, state, turn)? {
        return Ok(Some(halted));
    }
    seal(store, state, turn)?;
    Ok(None)
}

/// Writes the bundle and the dispatch index for `turn` of `state`, and seals it.
pub fn write_bundle(
    store: &Store,
    state: &Json,
    config: &Json,
    turn: &Json,
) -> Result<(), Refusal> {
    write_bundle_files(store, state, config, turn)?;
    seal(store, state, turn)
}

/// Writes the bundle's files for `turn` of `state` (a re-dispatch replaces the whole bundle)
/// and the dispatch index, not sealed yet: the `after_dispatch` hooks run between the two.
pub fn write_bundle_files(
    store: &Store,
    state: &Json,
    config: &Json,
    turn: &Json,
) -> Result<(), Refusal> {
    let turn_id = turn["turn_id"].as_str().unwrap_or("");
    let dir = bundle_rel(turn_id);
    // A re-dispatch replaces the whole bundle: nothing of an earlier attempt stays sealed in.
    store.remove_tree(&dir);
    store.write_derived_json(
        &format!("{dir}/ASSIGNMENT.json"),
        &assignment(state, config, turn),
    )?;
    store.write_derived(
        &format!("{dir}/PROMPT.md"),
        &prompt(store, state, config, turn),
    )?;
    store.write_derived(
        &format!("{dir}/CONTEXT.md"),
        &context(store, state, config, turn),
    )?;
    let mut turns = serde_json::Map::new();
    for (id, t) in state["active_turns"].as_object().into_iter().flatten() {
        turns.insert(
            id.clone(),
            json!({
                "turn_id": id,
                "role": t["assigned_role"],
                "runtime_id": t["runtime_id"],
                "attempt": t["attempt"],
                "status": "assigned",
                "bundle_path": bundle_rel(id),
                "staging_result_path": staging_rel(id),
                "assigned_sequence": t["assigned_sequence"],
                "advisory_warnings": [],
            }),
        );
    }
    store.write_derived_json(
        ".agentxchain/dispatch/index.json",
        &json!({"run_id": state["run_id"], "phase": state["phase"], "updated_at": now(), "active_turns": turns}),
    )
}

/// Seals `turn`'s bundle: its manifest, of every file in it now (what an `after_dispatch` hook
/// added included).
pub fn seal(store: &Store, state: &Json, turn: &Json) -> Result<(), Refusal> {
    let turn_id = turn["turn_id"].as_str().unwrap_or("");
    crate::manifest::finalize(
        store.root(),
        turn_id,
        state["run_id"].as_str().unwrap_or(""),
        turn["assigned_role"].as_str().unwrap_or(""),
    )
    .map(|_| ())
    .map_err(|e| Refusal::new(format!("Failed to finalize dispatch manifest: {e}")))
}
