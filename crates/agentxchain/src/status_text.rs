//! `status` for a person: the reference's layout, drawn from the object `status --json`
//! prints (so the two never disagree). Every value from the project's files is printed through
//! `printable` (no terminal control sequences).

use std::fmt::Write as _;

use axc_core::util::printable;
use serde_json::Value as Json;

const RULE: &str = "────────────────────────────────────────────";

fn t(v: &Json) -> Option<String> {
    match v {
        Json::String(s) if !s.is_empty() => Some(printable(s)),
        Json::Number(n) => Some(n.to_string()),
        Json::Bool(b) => Some(b.to_string()),
        _ => None,
    }
}

fn or(v: &Json, d: &str) -> String {
    t(v).unwrap_or_else(|| d.to_owned())
}

fn truthy(v: &Json) -> bool {
    match v {
        Json::Null => false,
        Json::Bool(b) => *b,
        Json::Number(n) => n.as_f64().is_some_and(|f| f != 0.0),
        Json::String(s) => !s.is_empty(),
        _ => true,
    }
}

/// `toFixed(2)` of a number (anything else: `0.00`).
fn usd(v: &Json) -> String {
    axc_core::util::to_fixed(v.as_f64().unwrap_or(0.0), 2)
}

fn run_label(status: &Json) -> String {
    match status.as_str() {
        Some("blocked") => "BLOCKED".into(),
        Some("paused") => "PAUSED".into(),
        Some("completed") => "COMPLETED".into(),
        Some(s) if !s.is_empty() => printable(s),
        _ => "unknown".into(),
    }
}

/// The run's origin as the reference summarizes it (none for a plain manual run).
fn origin(p: &Json) -> Option<String> {
    const TRIGGERS: [&str; 7] = [
        "manual",
        "continuation",
        "recovery",
        "intake",
        "vision_scan",
        "schedule",
        "coordinator",
    ];
    fn s(v: &Json) -> Option<&str> {
        v.as_str().map(str::trim).filter(|s| !s.is_empty())
    }
    let trigger = s(&p["trigger"]).filter(|t| TRIGGERS.contains(t))?;
    let creator = s(&p["created_by"]).unwrap_or("operator");
    let mut out = trigger.to_owned();
    if let Some(parent) = s(&p["parent_run_id"]) {
        out += &format!(" from {parent}");
    }
    if let Some(intent) = s(&p["intake_intent_id"]) {
        out += &format!(" intent {intent}");
    }
    match creator {
        "coordinator" => out += " (created by coordinator)",
        "continuous_loop" => out += " (created by continuous loop)",
        _ => {}
    }
    if let Some(reason) = s(&p["trigger_reason"]) {
        out += &format!(" (\"{reason}\")");
    }
    let plain = trigger == "manual"
        && s(&p["parent_run_id"]).is_none()
        && s(&p["intake_intent_id"]).is_none()
        && s(&p["trigger_reason"]).is_none()
        && creator != "coordinator";
    (!plain).then(|| printable(&out))
}

/// `<s>s`, `<m>m`, `<h>h <m>m` since `iso` (`0s` when it cannot be read or is ahead).
fn age(iso: &Json) -> String {
    let secs = axc_kernel::events::timestamp(iso)
        .and_then(|t| std::time::SystemTime::now().duration_since(t).ok())
        .map_or(0, |d| d.as_secs());
    if secs < 60 {
        format!("{secs}s")
    } else if secs < 3600 {
        format!("{}m", secs / 60)
    } else {
        format!("{}h {}m", secs / 3600, (secs / 60) % 60)
    }
}

fn active_turns(state: &Json) -> Vec<&Json> {
    state["active_turns"]
        .as_object()
        .into_iter()
        .flatten()
        .map(|(_, t)| t)
        .filter(|t| t.is_object())
        .collect()
}

pub fn render(v: &Json) -> String {
    let mut o = String::new();
    let config = &v["config"];
    let state = &v["state"];
    let line = |o: &mut String, s: &str| {
        o.push_str(s);
        o.push('\n');
    };
    line(&mut o, "");
    line(&mut o, "  AgentXchain Status");
    line(&mut o, &format!("  {RULE}"));
    line(&mut o, "");
    banners(&mut o, v);
    header(&mut o, v);
    continuity(&mut o, &v["continuity"], state);
    connectors(&mut o, &v["connector_health"]);
    recent(&mut o, &v["recent_event_summary"]);
    coordinator(&mut o, &v["coordinator_warnings"]);
    if v["bundle_integrity"]["ok"] == false {
        line(
            &mut o,
            "  ⚠ Ghost turn(s) detected — dispatch bundle missing",
        );
        for d in v["bundle_integrity"]["desynced"]
            .as_array()
            .into_iter()
            .flatten()
        {
            line(
                &mut o,
                &format!(
                    "    {} ({}): {} not found",
                    or(&d["turn_id"], ""),
                    or(&d["role"], ""),
                    or(&d["expected_path"], "")
                ),
            );
        }
        line(
            &mut o,
            "  Run `agentxchain reissue-turn` to recover, or `agentxchain doctor` for diagnostics.",
        );
        line(&mut o, "");
    }
    turns(&mut o, state);
    drift(&mut o, &v["binding_drift"]);
    watchdog(&mut o, &v["ghost_turns"], &v["stale_turns"]);
    queued_and_reserved(&mut o, state);
    blocked(&mut o, state, &v["recovery"]);
    if truthy(&state["last_gate_failure"]) {
        gate_failure(&mut o, &state["last_gate_failure"], state, config);
    }
    recovery(&mut o, &v["recovery"]);
    human_task(&mut o, &v["human_escalation"]);
    pending(&mut o, state, &v["gate_action_attempt"]);
    if state["status"] == "completed" {
        line(&mut o, "");
        line(&mut o, "  ✓ Run completed");
        if let Some(at) = t(&state["completed_at"]) {
            line(&mut o, &format!("  Completed: {at}"));
        }
    }
    gates(&mut o, state, config);
    artifacts(&mut o, &v["workflow_kit_artifacts"]);
    if truthy(&state["budget_status"]) {
        let b = &state["budget_status"];
        line(&mut o, "");
        let over = if truthy(&b["warn_mode"]) {
            " [OVER BUDGET]"
        } else {
            ""
        };
        line(
            &mut o,
            &format!(
                "  Budget:   spent ${} / remaining ${}{over}",
                usd(&b["spent_usd"]),
                usd(&b["remaining_usd"])
            ),
        );
    }
    line(&mut o, "");
    let roles = config["roles"].as_object().cloned().unwrap_or_default();
    line(&mut o, &format!("  Roles:    {}", roles.len()));
    let busy = active_turns(state);
    for (id, role) in &roles {
        let assigned = busy.iter().any(|t| t["assigned_role"] == id.as_str());
        line(
            &mut o,
            &format!(
                "    {} {} — {} [{}]",
                if assigned { "●" } else { "○" },
                printable(id),
                or(&role["title"], "undefined"),
                or(&role["write_authority"], "undefined")
            ),
        );
    }
    line(&mut o, "");
    o
}

fn banners(o: &mut String, v: &Json) {
    let m = &v["preemption_marker"];
    if m.is_object() {
        let _ = writeln!(o, "  ⚡ Priority injection pending");
        let _ = writeln!(o, "  Intent:      {}", or(&m["intent_id"], "undefined"));
        let _ = writeln!(o, "  Priority:    {}", or(&m["priority"], "undefined"));
        if let Some(d) = t(&m["description"]) {
            let _ = writeln!(o, "  Description: {d}");
        }
        if let Some(d) = t(&m["injected_at"]) {
            let _ = writeln!(o, "  Injected at: {d}");
        }
        let _ = writeln!(
            o,
            "  Effect:      Will preempt current workstream after this turn completes"
        );
        let _ = writeln!(o, "  {RULE}\n");
    }
    let pending = v["pending_intents"].as_array().cloned().unwrap_or_default();
    if !pending.is_empty() {
        let _ = writeln!(o, "  📋 Pending injected intents (will drive next turn):");
        for i in &pending {
            let charter = or(&i["charter"], "(no charter)");
            let charter = if charter.chars().count() > 60 {
                format!("{}...", charter.chars().take(57).collect::<String>())
            } else {
                charter
            };
            let _ = writeln!(
                o,
                "    [{}] {} — {charter}",
                or(&i["priority"], "p0"),
                or(&i["intent_id"], "")
            );
            let n = i["acceptance_count"].as_u64().unwrap_or(0);
            let _ = writeln!(
                o,
                "         Acceptance: {n} {}",
                if n == 1 { "item" } else { "items" }
            );
        }
        let _ = writeln!(o, "  {RULE}\n");
    }
    let c = &v["continuous_session"];
    if c.is_object() {
        let _ = writeln!(o, "  🔄 Continuous Vision-Driven Session");
        let _ = writeln!(o, "  Session:     {}", or(&c["session_id"], "undefined"));
        let _ = writeln!(o, "  Vision:      {}", or(&c["vision_path"], "undefined"));
        let _ = writeln!(o, "  Status:      {}", or(&c["status"], "unknown"));
        let _ = writeln!(
            o,
            "  Runs:        {}/{}",
            or(&c["runs_completed"], "0"),
            or(&c["max_runs"], "?")
        );
        if c["owner_type"] == "schedule" {
            let _ = writeln!(o, "  Owner:       schedule:{}", or(&c["owner_id"], ""));
        }
        if let Some(obj) = t(&c["current_vision_objective"]) {
            let _ = writeln!(o, "  Objective:   {obj}");
        }
        if c["idle_cycles"].as_f64().is_some_and(|n| n > 0.0) {
            let _ = writeln!(
                o,
                "  Idle cycles: {}/{}",
                or(&c["idle_cycles"], "0"),
                or(&c["max_idle_cycles"], "?")
            );
        }
        if let Some(limit) = c["per_session_max_usd"].as_f64() {
            let spent = c["cumulative_spent_usd"].as_f64().unwrap_or(0.0);
            let pct = if limit > 0.0 {
                spent / limit * 100.0
            } else {
                0.0
            };
            let ex = if truthy(&c["budget_exhausted"]) {
                " [EXHAUSTED]"
            } else {
                ""
            };
            let _ = writeln!(
                o,
                "  Budget:      ${} / ${} ({}%){ex}",
                axc_core::util::to_fixed(spent, 2),
                axc_core::util::to_fixed(limit, 2),
                axc_core::util::to_fixed(pct, 1)
            );
        }
        let _ = writeln!(o, "  {RULE}\n");
    }
}

fn header(o: &mut String, v: &Json) {
    let config = &v["config"];
    let state = &v["state"];
    let _ = writeln!(o, "  Project:  {}", or(&config["project"]["name"], ""));
    if let Some(goal) = t(&config["project"]["goal"]) {
        let _ = writeln!(o, "  Goal:     {goal}");
    }
    let _ = writeln!(o, "  Protocol: governed (v{})", or(&v["version"], "4"));
    let _ = writeln!(o, "  Template: {}", or(&config["template"], "generic"));
    let _ = writeln!(o, "  Phase:    {}", or(&state["phase"], "unknown"));
    let _ = writeln!(o, "  Run:      {}", run_label(&state["status"]));
    if let Some(origin) = origin(&state["provenance"]) {
        let _ = writeln!(o, "  Origin:   {origin}");
    }
    if let Some(parent) = t(&state["inherited_context"]["parent_run_id"]) {
        let _ = writeln!(
            o,
            "  Inherits: parent {parent} ({})",
            or(&state["inherited_context"]["parent_status"], "unknown")
        );
    }
    let rd = &v["repo_decision_summary"];
    if rd.is_object() {
        let mut head = format!("{} active", rd["active_count"]);
        if rd["overridden_count"].as_u64().unwrap_or(0) > 0 {
            head += &format!(", {} overridden", rd["overridden_count"]);
        }
        let _ = writeln!(o, "  Repo decisions: {head}");
        let s = &rd["operator_summary"];
        let mut parts = Vec::new();
        if rd["active_count"] == 0 {
            parts.push("no active cross-run constraints remain".to_owned());
        } else if let Some(c) = s["active_categories"].as_array().filter(|c| !c.is_empty()) {
            let c: Vec<String> = c.iter().filter_map(t).collect();
            parts.push(format!("categories: {}", c.join(", ")));
        }
        if s["highest_active_authority_level"].is_number() {
            let role = t(&s["highest_active_authority_role"])
                .map_or_else(String::new, |r| format!(" ({r})"));
            parts.push(format!(
                "highest authority: {}{role}",
                s["highest_active_authority_level"]
            ));
        }
        let plural =
            |n: u64, one: &str, many: &str| format!("{n} {}", if n == 1 { one } else { many });
        let n = s["superseding_active_count"].as_u64().unwrap_or(0);
        if n > 0 {
            parts.push(plural(
                n,
                "active superseding earlier decision",
                "active superseding earlier decisions",
            ));
        }
        let n = s["overridden_with_successor_count"].as_u64().unwrap_or(0);
        if n > 0 {
            parts.push(plural(
                n,
                "overridden with recorded successor",
                "overridden with recorded successors",
            ));
        }
        if !parts.is_empty() {
            let _ = writeln!(o, "  Carryover: {}", parts.join("; "));
        }
    }
    if let Some(r) = t(&state["accepted_integration_ref"]) {
        let _ = writeln!(o, "  Accepted: {r}");
    }
    o.push('\n');
}

fn continuity(o: &mut String, c: &Json, state: &Json) {
    if !c.is_object() {
        return;
    }
    let _ = writeln!(o, "  Continuity:");
    let cp = &c["checkpoint"];
    if cp.is_object() {
        let summary = match t(&cp["last_checkpoint_at"]) {
            Some(at) => format!("{} at {at}", or(&cp["checkpoint_reason"], "unknown")),
            None => or(&cp["checkpoint_reason"], "unknown"),
        };
        let _ = writeln!(o, "  Session:  {}", or(&cp["session_id"], "unknown"));
        let _ = writeln!(o, "  Checkpoint: {summary}");
        let _ = writeln!(o, "  Last turn: {}", or(&cp["last_turn_id"], "none"));
        let _ = writeln!(o, "  Last role: {}", or(&cp["last_role"], "unknown"));
        if c["stale_checkpoint"] == true {
            let _ = writeln!(
                o,
                "  Warning: session checkpoint tracks {}, but state.json tracks {}; state.json remains source of truth",
                or(&cp["run_id"], "undefined"),
                or(&state["run_id"], "unknown")
            );
        }
    } else {
        let _ = writeln!(o, "  Checkpoint: No session checkpoint recorded");
    }
    if c["drift_detected"] == true {
        for (i, w) in c["drift_warnings"]
            .as_array()
            .into_iter()
            .flatten()
            .enumerate()
        {
            let label = if i == 0 { "Drift:   " } else { "         " };
            let _ = writeln!(o, "  {label} {}", or(w, ""));
        }
    } else if c["drift_detected"] == false {
        let _ = writeln!(o, "  Drift:    none detected since checkpoint");
    }
    if let Some(cmd) = t(&c["recommended_command"]) {
        let detail = t(&c["recommended_detail"]).map_or_else(String::new, |d| format!(" ({d})"));
        let _ = writeln!(o, "  Action:   {cmd}{detail}");
    }
    if let Some(r) = t(&c["recovery_report_path"]) {
        let _ = writeln!(o, "  Report:   {r}");
    }
    o.push('\n');
}

fn connectors(o: &mut String, h: &Json) {
    let list = h["connectors"].as_array().cloned().unwrap_or_default();
    if list.is_empty() {
        return;
    }
    let _ = writeln!(o, "  Connectors:");
    for c in &list {
        let state = match c["state"].as_str() {
            Some("healthy") => "● healthy",
            Some("failing") => "✗ failing",
            Some("active") => "● active",
            _ => "○ never_used",
        };
        let _ = writeln!(
            o,
            "    {state} {} — {} ({})",
            or(&c["runtime_id"], ""),
            or(&c["type"], ""),
            or(&c["target"], "")
        );
        let ids: Vec<String> = c["active_turn_ids"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(t)
            .collect();
        if !ids.is_empty() {
            let _ = writeln!(o, "      Active turns: {}", ids.join(", "));
        }
        if let Some(e) = t(&c["last_error"]) {
            let _ = writeln!(o, "      Last error: {e}");
        } else if let Some(s) = t(&c["last_success_at"]) {
            let _ = writeln!(o, "      Last success: {s}");
        } else if let Some(s) = t(&c["last_attempt_at"]) {
            let _ = writeln!(o, "      Last attempt: {s}");
        }
    }
    o.push('\n');
}

fn recent(o: &mut String, s: &Json) {
    if !s.is_object() {
        return;
    }
    let label = match s["freshness"].as_str() {
        Some("recent") => "recent",
        Some("quiet") => "quiet",
        Some("unknown") => "unknown timing",
        _ => "none recorded",
    };
    let count = if s["freshness"] == "no_events" {
        String::new()
    } else {
        format!(
            " ({} in last {}m)",
            s["recent_count"].as_u64().unwrap_or(0),
            s["window_minutes"].as_u64().unwrap_or(15)
        )
    };
    let _ = writeln!(o, "  Recent events: {label}{count}");
    let e = &s["latest_event"];
    if e.is_object() {
        let what = t(&e["summary"])
            .or_else(|| t(&e["event_type"]))
            .unwrap_or_else(|| "unknown_event".into());
        let _ = writeln!(o, "  Latest:   {what}");
        let _ = writeln!(o, "  When:     {}", or(&e["timestamp"], "unknown"));
    }
    o.push('\n');
}

fn coordinator(o: &mut String, w: &Json) {
    let n = w["count"].as_u64().unwrap_or(0);
    if n == 0 {
        return;
    }
    let _ = writeln!(
        o,
        "  ⚠ Coordinator reconciliation required ({n} projection warning{})",
        if n == 1 { "" } else { "s" }
    );
    for x in w["warnings"].as_array().into_iter().flatten() {
        let _ = writeln!(
            o,
            "    ● ws:{} repo:{} — {}",
            or(&x["workstream_id"], "?"),
            or(&x["repo_id"], "?"),
            or(&x["warning_code"], "")
        );
    }
    let _ = writeln!(
        o,
        "  Run `agentxchain mission plan show latest --json` to force plan sync and verify."
    );
    o.push('\n');
}

fn turns(o: &mut String, state: &Json) {
    let turns = active_turns(state);
    let elapsed = |turn: &Json| -> Option<(u64, u64)> {
        let start = axc_kernel::events::timestamp(&turn["started_at"])?;
        let secs = std::time::SystemTime::now()
            .duration_since(start)
            .ok()?
            .as_secs();
        Some((secs / 60, secs % 60))
    };
    let recover = |turn: &Json, reason: &str| {
        t(&turn["recovery_command"]).unwrap_or_else(|| {
            format!(
                "agentxchain reissue-turn --turn {} --reason {reason}",
                or(&turn["turn_id"], "")
            )
        })
    };
    let start_reason = |turn: &Json| match turn["failed_start_reason"].as_str() {
        Some(r @ ("runtime_spawn_failed" | "stdout_attach_failed")) => r.to_owned(),
        _ => "stdout_attach_failed".to_owned(),
    };
    if turns.len() > 1 {
        let _ = writeln!(o, "  Turns:    {} active", turns.len());
        for turn in &turns {
            let status = or(&turn["status"], "undefined");
            let bad = matches!(status.as_str(), "conflicted" | "failed_acceptance");
            let tag = elapsed(turn).map_or_else(String::new, |(m, s)| {
                if m > 0 {
                    format!(" — {m}m {s}s")
                } else {
                    format!(" — {s}s")
                }
            });
            let _ = writeln!(
                o,
                "    {} {} — {} ({status}) [attempt {}]{tag}",
                if bad { "✗" } else { "●" },
                or(&turn["turn_id"], ""),
                or(&turn["assigned_role"], ""),
                or(&turn["attempt"], "undefined")
            );
            let id = or(&turn["turn_id"], "");
            match status.as_str() {
                "conflicted" if turn["conflict_state"].is_object() => {
                    conflict_lines(
                        o,
                        turn,
                        "      ",
                        "Conflict:  ",
                        "Overlap:   ",
                        "Suggested: ",
                        "Resolve:   ",
                        "     or:   ",
                        false,
                    );
                }
                "failed_acceptance" => {
                    let _ = writeln!(
                        o,
                        "      Reason:  {}",
                        or(&turn["failure_reason"], "unknown")
                    );
                    let _ = writeln!(
                        o,
                        "      Recover: agentxchain reject-turn --turn {id} — reject and retry"
                    );
                    let _ = writeln!(
                        o,
                        "           or: agentxchain accept-turn --turn {id} — re-attempt acceptance"
                    );
                }
                "failed_start" => {
                    let _ = writeln!(o, "      Reason:  {}", start_reason(turn));
                    let _ = writeln!(o, "      Recover: {}", recover(turn, "ghost"));
                }
                "stalled" => {
                    let _ = writeln!(
                        o,
                        "      Reason:  {}",
                        or(&turn["stalled_reason"], "no_output_within_threshold")
                    );
                    let _ = writeln!(o, "      Recover: {}", recover(turn, "stale"));
                }
                _ => {}
            }
        }
    } else if let Some(turn) = turns.first() {
        let _ = writeln!(o, "  Turn:     {}", or(&turn["turn_id"], "undefined"));
        let _ = writeln!(
            o,
            "  Role:     {} ({})",
            or(&turn["assigned_role"], "undefined"),
            or(&turn["status"], "undefined")
        );
        let _ = writeln!(o, "  Runtime:  {}", or(&turn["runtime_id"], "undefined"));
        let _ = writeln!(o, "  Attempt:  {}", or(&turn["attempt"], "undefined"));
        if let Some((m, s)) = elapsed(turn) {
            let e = if m > 0 {
                format!("{m}m {s}s")
            } else {
                format!("{s}s")
            };
            let _ = writeln!(o, "  Elapsed:  {e}");
        }
        match turn["status"].as_str() {
            Some("conflicted") if turn["conflict_state"].is_object() => {
                conflict_lines(
                    o,
                    turn,
                    "  ",
                    "Conflict: ",
                    "Overlap:  ",
                    "Suggest:  ",
                    "Resolve:  ",
                    "     or:  ",
                    true,
                );
            }
            Some("failed_start") => {
                let _ = writeln!(o, "  Reason:   {}", start_reason(turn));
                let _ = writeln!(o, "  Recover:  {}", recover(turn, "ghost"));
            }
            Some("stalled") => {
                let _ = writeln!(
                    o,
                    "  Reason:   {}",
                    or(&turn["stalled_reason"], "no_output_within_threshold")
                );
                let _ = writeln!(o, "  Recover:  {}", recover(turn, "stale"));
            }
            _ => {}
        }
    } else {
        let _ = writeln!(o, "  Turn:     No active turn");
    }
}

/// A conflicted turn's conflict and the two ways out, as the reference's status shows them
/// (the labels padded as its two layouts pad them).
#[allow(clippy::too_many_arguments)]
fn conflict_lines(
    o: &mut String,
    turn: &Json,
    indent: &str,
    conflict: &str,
    overlap: &str,
    suggest: &str,
    resolve: &str,
    or_: &str,
    single: bool,
) {
    let cs = &turn["conflict_state"];
    let files = cs["conflict_error"]["conflicting_files"]
        .as_array()
        .map_or(0, Vec::len);
    let count = cs["detection_count"].as_u64().unwrap_or(1);
    let id = or(&turn["turn_id"], "");
    let what = if single {
        format!("{files} file(s) conflicting")
    } else {
        format!("{files} file(s)")
    };
    let _ = writeln!(o, "{indent}{conflict}{what} — detection #{count}");
    if let Some(r) = cs["conflict_error"]["overlap_ratio"].as_f64() {
        let _ = writeln!(
            o,
            "{indent}{overlap}{}%",
            axc_core::util::to_fixed(r * 100.0, 0)
        );
    }
    let _ = writeln!(
        o,
        "{indent}{suggest}{}",
        or(
            &cs["conflict_error"]["suggested_resolution"],
            "reject_and_reassign"
        )
    );
    let _ = writeln!(
        o,
        "{indent}{resolve}agentxchain reject-turn --turn {id} --reassign"
    );
    let _ = writeln!(
        o,
        "{indent}{or_}agentxchain accept-turn --turn {id} --resolution human_merge"
    );
}

fn drift(o: &mut String, drifts: &Json) {
    let list = drifts.as_array().cloned().unwrap_or_default();
    if list.is_empty() {
        return;
    }
    let _ = writeln!(o, "\n  ⚠ Stale binding detected");
    for d in &list {
        if d["runtime_changed"] == true {
            let _ = writeln!(
                o,
                "  Turn:     {} ({})",
                or(&d["turn_id"], ""),
                or(&d["role_id"], "")
            );
            let _ = writeln!(
                o,
                "  Runtime:  {} → {} (config changed)",
                or(&d["old_runtime"], "undefined"),
                or(&d["new_runtime"], "undefined")
            );
        }
        if d["authority_changed"] == true {
            let _ = writeln!(
                o,
                "  Authority: {} → {} (config changed)",
                or(&d["old_authority"], "undefined"),
                or(&d["new_authority"], "undefined")
            );
        }
        let _ = writeln!(o, "  Recover:  {}", or(&d["recovery_command"], ""));
    }
}

/// The stale-turn watchdog's ghost and stale turns (the reference's BUG-51 and BUG-47 blocks).
fn watchdog(o: &mut String, ghosts: &Json, stale: &Json) {
    let ghosts = ghosts.as_array().map(Vec::as_slice).unwrap_or_default();
    if !ghosts.is_empty() {
        o.push('\n');
        for g in ghosts {
            o.push_str("  ⚠ Ghost turn detected — subprocess never started\n");
            let id = or(&g["turn_id"], "");
            let _ = writeln!(o, "  Turn:     {id} ({})", or(&g["role"], ""));
            let _ = writeln!(o, "  Runtime:  {}", or(&g["runtime_id"], ""));
            let _ = writeln!(
                o,
                "  Age:      {}s with no subprocess output",
                g["running_ms"].as_u64().unwrap_or(0) / 1000
            );
            let _ = writeln!(
                o,
                "  Recover:  agentxchain reissue-turn --turn {id} --reason ghost"
            );
        }
    }
    let stale = stale.as_array().map(Vec::as_slice).unwrap_or_default();
    if !stale.is_empty() {
        o.push('\n');
        for st in stale {
            o.push_str("  ⚠ Stale turn detected\n");
            let id = or(&st["turn_id"], "");
            let _ = writeln!(o, "  Turn:     {id} ({})", or(&st["role"], ""));
            let _ = writeln!(o, "  Runtime:  {}", or(&st["runtime_id"], ""));
            let _ = writeln!(
                o,
                "  Running:  {}m with no output",
                st["running_ms"].as_u64().unwrap_or(0) / 60000
            );
            let _ = writeln!(
                o,
                "  Recover:  agentxchain reissue-turn --turn {id} --reason stale"
            );
        }
    }
}

fn queued_and_reserved(o: &mut String, state: &Json) {
    let q = &state["queued_phase_transition"];
    if truthy(q) {
        let _ = writeln!(
            o,
            "\n  Queued:   Phase transition {} → {} (awaiting drain)",
            or(&q["from"], "undefined"),
            or(&q["to"], "undefined")
        );
    }
    if truthy(&state["queued_run_completion"]) {
        let _ = writeln!(o, "\n  Queued:   Run completion (awaiting drain)");
    }
    let res = state["budget_reservations"]
        .as_object()
        .cloned()
        .unwrap_or_default();
    if !res.is_empty() {
        let _ = writeln!(o, "\n  Budget reservations:");
        for (id, r) in &res {
            let amt = if r["reserved_usd"].is_null() {
                "(unknown)".to_owned()
            } else {
                format!("${}", usd(&r["reserved_usd"]))
            };
            let _ = writeln!(o, "    ● {}: {amt}", printable(id));
        }
    }
}

fn blocked(o: &mut String, state: &Json, recovery: &Json) {
    let Some(on) = t(&state["blocked_on"]) else {
        return;
    };
    o.push('\n');
    if state["status"] == "blocked" {
        let detail = t(&recovery["detail"]).unwrap_or_else(|| on.clone());
        let _ = writeln!(o, "  Blocked:  BLOCKED — {detail}");
    } else if let Some(gate) = on.strip_prefix("human_approval:") {
        let _ = writeln!(o, "  Blocked:  AWAITING HUMAN APPROVAL — gate: {gate}");
    } else {
        let _ = writeln!(o, "  Blocked:  {on}");
    }
}

fn gate_failure(o: &mut String, f: &Json, state: &Json, config: &Json) {
    let completion = f["gate_type"] == "run_completion";
    let _ = writeln!(o);
    let _ = writeln!(
        o,
        "  Gate fail: {}",
        if completion {
            "RUN COMPLETION"
        } else {
            "PHASE TRANSITION"
        }
    );
    let _ = writeln!(o, "  Gate:     {}", or(&f["gate_id"], "unknown"));
    let request = if completion {
        "Run completion".to_owned()
    } else {
        let from = t(&f["from_phase"])
            .or_else(|| t(&f["phase"]))
            .unwrap_or_default();
        format!("{from} -> {}", or(&f["to_phase"], "unknown"))
    };
    let _ = writeln!(o, "  Request:  {request}");
    let _ = writeln!(
        o,
        "  Source:   {}",
        if f["queued_request"] == true {
            "queued drain request"
        } else {
            "direct request"
        }
    );
    let _ = writeln!(o, "  When:     {}", or(&f["failed_at"], "unknown"));
    if let Some(turn) = t(&f["requested_by_turn"]) {
        let _ = writeln!(o, "  Turn:     {turn}");
    }
    let reasons: Vec<String> = f["reasons"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(t)
        .collect();
    if !reasons.is_empty() {
        let _ = writeln!(o, "  Reasons:");
        for r in reasons {
            let _ = writeln!(o, "    • {r}");
        }
    }
    let phase = t(&f["phase"])
        .or_else(|| t(&state["phase"]))
        .unwrap_or_default();
    let role =
        t(&config["routing"][phase.as_str()]["entry_role"]).unwrap_or_else(|| "<role>".into());
    let _ = writeln!(
        o,
        "  Action:   agentxchain step --role {role} to keep working in {phase}"
    );
}

fn recovery(o: &mut String, r: &Json) {
    if !r.is_object() {
        return;
    }
    let _ = writeln!(o);
    let _ = writeln!(o, "  Reason:   {}", or(&r["typed_reason"], "undefined"));
    let _ = writeln!(o, "  Owner:    {}", or(&r["owner"], "undefined"));
    let _ = writeln!(o, "  Action:   {}", or(&r["recovery_action"], "undefined"));
    let _ = writeln!(
        o,
        "  Turn:     {}",
        if r["turn_retained"] == true {
            "retained"
        } else {
            "cleared"
        }
    );
    if let Some(d) = t(&r["detail"]) {
        let _ = writeln!(o, "  Detail:   {d}");
    }
}

fn human_task(o: &mut String, h: &Json) {
    if !h.is_object() {
        return;
    }
    let service = t(&h["service"]).map_or_else(String::new, |s| format!(" ({s})"));
    let _ = writeln!(o);
    let _ = writeln!(o, "  Human task: {}{service}", or(&h["escalation_id"], ""));
    let _ = writeln!(o, "  Type:     {}", or(&h["type"], "undefined"));
    let _ = writeln!(
        o,
        "  Unblock:  {}",
        or(&h["resolution_command"], "undefined")
    );
    if let Some(a) = t(&h["action"]) {
        let _ = writeln!(o, "  Task:     {a}");
    }
}

fn pending(o: &mut String, state: &Json, attempt: &Json) {
    let pt = &state["pending_phase_transition"];
    if truthy(pt) {
        let _ = writeln!(
            o,
            "  Pending:  {} → {}",
            or(&pt["from"], "undefined"),
            or(&pt["to"], "undefined")
        );
        let _ = writeln!(
            o,
            "  Gate:     {} (requires human approval)",
            or(&pt["gate"], "undefined")
        );
        if let Some(at) = t(&pt["requested_at"]) {
            let _ = writeln!(o, "  Requested: {at} ({} ago)", age(&pt["requested_at"]));
        }
    }
    let pc = &state["pending_run_completion"];
    if truthy(pc) {
        let _ = writeln!(o, "  Pending:  Run Completion");
        let _ = writeln!(
            o,
            "  Gate:     {} (requires human approval)",
            or(&pc["gate"], "undefined")
        );
        if let Some(at) = t(&pc["requested_at"]) {
            let _ = writeln!(o, "  Requested: {at} ({} ago)", age(&pc["requested_at"]));
        }
    }
    if attempt.is_object() {
        let _ = writeln!(
            o,
            "  Gate actions: {} at {}",
            or(&attempt["status"], ""),
            or(&attempt["attempted_at"], "unknown time")
        );
        for a in attempt["actions"].as_array().into_iter().flatten() {
            let idx = t(&a["action_index"])
                .filter(|i| i != "0")
                .unwrap_or_else(|| "?".into());
            let label = t(&a["action_label"])
                .or_else(|| t(&a["command"]))
                .unwrap_or_else(|| format!("action {idx}"));
            let timed_out = a["timed_out"] == true;
            let outcome = if a["status"] == "failed" {
                if timed_out {
                    format!("timed out after {}ms", or(&a["timeout_ms"], "null"))
                } else {
                    "failed".to_owned()
                }
            } else {
                "succeeded".to_owned()
            };
            let exit = if timed_out || a["exit_code"].is_null() {
                String::new()
            } else {
                format!(" (exit {})", a["exit_code"])
            };
            let _ = writeln!(o, "    {idx}. {label} — {outcome}{exit}");
            if a["status"] == "failed"
                && let Some(tail) = t(&a["stderr_tail"])
            {
                let _ = writeln!(o, "      {tail}");
            }
        }
    }
}

fn gates(o: &mut String, state: &Json, config: &Json) {
    let Some(gates) = state["phase_gate_status"]
        .as_object()
        .filter(|_| truthy(&state["phase_gate_status"]))
    else {
        return;
    };
    let _ = writeln!(o, "\n  Gates:");
    let phase = state["phase"].as_str().unwrap_or("");
    let exit = config["routing"][phase]["exit_gate"].as_str();
    for (gate, status) in gates {
        let passed = status == "passed";
        let _ = writeln!(
            o,
            "    {} {}: {}",
            if passed { "✓" } else { "○" },
            printable(gate),
            or(status, "undefined")
        );
        let def = &config["gates"][gate.as_str()];
        if passed || exit != Some(gate.as_str()) || !def.is_object() {
            continue;
        }
        let files: Vec<String> = def["requires_files"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(t)
            .map(|f| {
                f.strip_prefix(".planning/")
                    .map_or(f.clone(), str::to_owned)
            })
            .collect();
        if !files.is_empty() {
            let _ = writeln!(o, "      Files: {}", files.join(", "));
        }
        let mut needs = Vec::new();
        if truthy(&def["requires_human_approval"]) {
            needs.push("human approval");
        }
        if truthy(&def["requires_verification_pass"]) {
            needs.push("verification pass");
        }
        if !needs.is_empty() {
            let _ = writeln!(o, "      Needs: {}", needs.join(", "));
        }
    }
}

fn artifacts(o: &mut String, w: &Json) {
    let list = w["artifacts"].as_array().cloned().unwrap_or_default();
    if list.is_empty() {
        return;
    }
    let _ = writeln!(o, "\n  Artifacts: ({})", or(&w["phase"], ""));
    for a in &list {
        let icon = if a["exists"] == true {
            "✓"
        } else if a["required"] == true {
            "✗"
        } else {
            "○"
        };
        let owner = t(&a["owned_by"]).map_or_else(String::new, |o| {
            let star = if a["owner_resolution"] == "entry_role" {
                "*"
            } else {
                ""
            };
            format!(" [{o}{star}]")
        });
        let optional = if a["required"] == true {
            ""
        } else {
            " (optional)"
        };
        let _ = writeln!(o, "    {icon} {}{owner}{optional}", or(&a["path"], ""));
    }
    if list.iter().any(|a| a["owner_resolution"] == "entry_role") {
        let _ = writeln!(o, "    * = ownership inferred from entry_role");
    }
}
