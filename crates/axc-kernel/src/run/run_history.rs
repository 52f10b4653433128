//! `run-history.jsonl`: one record per finished run (what `history` lists and a child run
//! inherits), appended when a run completes.

use axc_core::jsonl::Visit;
use serde_json::{Value as Json, json};

use super::store::{HISTORY, LEDGER, Store};
use super::{Refusal, now};

pub const RUN_HISTORY: &str = ".agentxchain/run-history.jsonl";
const MAX_DECISIONS: usize = 5;
const MAX_TURNS: usize = 3;

fn unique<'a>(entries: &'a [Json], key: &str) -> Vec<&'a Json> {
    let mut out: Vec<&Json> = Vec::new();
    for e in entries {
        let v = &e[key];
        if v.as_str().is_some_and(|s| !s.is_empty()) && !out.contains(&v) {
            out.push(v);
        }
    }
    out
}

fn or_null(v: &Json) -> Json {
    match v {
        Json::String(s) if s.is_empty() => Json::Null,
        Json::Null => Json::Null,
        other => other.clone(),
    }
}

/// Appends the record of the completed run `state`.
pub fn record_completed(store: &Store, state: &Json, config: &Json) -> Result<(), Refusal> {
    record(store, state, config, "completed")
}

/// Appends the record of the run `state` that just blocked (a person is needed, retries spent,
/// no progress): a child run can recover from it (`run --recover-from`).
pub fn record_blocked(store: &Store, state: &Json, config: &Json) -> Result<(), Refusal> {
    record(store, state, config, "blocked")
}

/// The parent a child run came from (`parent_context`), when it has one.
fn parent_context(state: &Json) -> Json {
    let ic = &state["inherited_context"];
    let parent = or_null(&state["provenance"]["parent_run_id"]);
    let parent = if parent.is_null() {
        or_null(&ic["parent_run_id"])
    } else {
        parent
    };
    if parent.is_null() {
        return Json::Null;
    }
    json!({"parent_run_id": parent, "parent_status": or_null(&ic["parent_status"]),
           "parent_completed_at": or_null(&ic["parent_completed_at"]),
           "inherited_at": or_null(&ic["inherited_at"])})
}

/// The history entries of the run `run`, oldest first: read from the end of the history back
/// to an entry of another run accepted before `run` was created (`created_at`). A run's turns
/// are appended while it is the project's run, after every earlier run's, so the record of a
/// run costs its own turns, not the history of the runs before it. An entry of another run
/// accepted since (one written in among the run's own), or without a run id or a time, is
/// passed over; without `created_at` the first entry of another run ends the read.
fn run_entries(store: &Store, run: &str, created_at: Option<&str>) -> Vec<Json> {
    let when = |t: &str| humantime::parse_rfc3339_weak(t).ok();
    let created = created_at.and_then(when);
    axc_core::jsonl::read_back(store.root(), HISTORY, usize::MAX, |e| {
        if e["run_id"] == run {
            return Visit::Keep;
        }
        if !e["run_id"].is_string() {
            return Visit::Skip;
        }
        match (created, e["accepted_at"].as_str().and_then(when)) {
            (None, _) => Visit::Stop,
            (Some(c), Some(a)) if a < c => Visit::Stop,
            _ => Visit::Skip,
        }
    })
    .map(|t| t.entries)
    .unwrap_or_default()
}

fn record(store: &Store, state: &Json, config: &Json, status: &str) -> Result<(), Refusal> {
    let history: Vec<Json> = match state["run_id"].as_str() {
        Some(run) => run_entries(store, run, state["created_at"].as_str()),
        None => store
            .read_jsonl(HISTORY)
            .into_iter()
            .filter(|e| state["run_id"].is_null() || e["run_id"] == state["run_id"])
            .collect(),
    };
    let ledger = store.read_jsonl(LEDGER);
    let first_role = config["roles"]
        .as_object()
        .and_then(|m| m.values().next())
        .cloned()
        .unwrap_or(Json::Null);
    let started = history
        .first()
        .map(|e| e["accepted_at"].clone())
        .filter(|v| !v.is_null())
        .unwrap_or_else(|| state["created_at"].clone());
    let completed = state["completed_at"].clone();
    let ms = |v: &Json| {
        v.as_str()
            .and_then(|t| humantime::parse_rfc3339_weak(t).ok())
            .and_then(|t| t.duration_since(std::time::UNIX_EPOCH).ok())
            .map(|d| d.as_millis() as i64)
    };
    let duration = match (ms(&started), ms(&completed)) {
        (Some(a), Some(b)) => json!(b - a),
        _ => Json::Null,
    };
    let last = history.last();
    let last_summary = last
        .and_then(|e| e["summary"].as_str())
        .map(str::trim)
        .filter(|s| !s.is_empty())
        .map(str::to_owned);
    let blocked = status == "blocked";
    let recovery = if blocked {
        crate::views::status::recovery(state, config)
    } else {
        Json::Null
    };
    let headline = if blocked {
        recovery["detail"]
            .as_str()
            .map(str::trim)
            .filter(|d| !d.is_empty())
            .map(str::to_owned)
            .or_else(|| last_summary.map(|s| format!("Run blocked after: {s}")))
            .unwrap_or_else(|| "Run blocked.".to_owned())
    } else {
        last_summary
            .unwrap_or_else(|| format!("Run completed after {} accepted turn(s).", history.len()))
    };
    let run_id = state["run_id"].as_str().unwrap_or("").trim();
    let hint = if blocked || run_id.is_empty() {
        Json::Null
    } else {
        let mut hint = format!(
            "If more scope remains, start a child run with `agentxchain run --continue-from {run_id} --inherit-context`."
        );
        if let Some(next) = last
            .and_then(|e| e["proposed_next_role"].as_str())
            .filter(|r| !r.trim().is_empty() && *r != "human")
        {
            hint.push_str(&format!(" The last accepted turn suggested `{next}` next."));
        }
        json!(hint)
    };
    let retrospective = if blocked {
        json!({"headline": headline,
               "terminal_reason": or_null(&recovery["typed_reason"]).as_str().unwrap_or("blocked"),
               "next_operator_action": or_null(&recovery["recovery_action"]),
               "follow_on_hint": null})
    } else {
        json!({"headline": headline, "terminal_reason": "completed",
               "next_operator_action": null, "follow_on_hint": hint})
    };
    let blocked_reason = if blocked {
        let d = or_null(&state["blocked_reason"]["detail"]);
        if d.is_null() {
            or_null(&state["blocked_on"])
        } else {
            d
        }
    } else {
        Json::Null
    };
    let decisions: Vec<Json> = ledger
        .iter()
        .skip(ledger.len().saturating_sub(MAX_DECISIONS))
        .map(|e| {
            json!({
                "id": or_null(if e["id"].is_null() { &e["decision_id"] } else { &e["id"] }),
                "statement": or_null(&e["statement"]),
                "decided_by": or_null(if e["decided_by"].is_null() { &e["role"] } else { &e["decided_by"] }),
                "phase": or_null(&e["phase"]),
            })
        })
        .collect();
    let turns: Vec<&Json> = history
        .iter()
        .filter(|e| e["status"] != "rejected" && e["turn_id"].is_string() && e["role"].is_string())
        .collect();
    let turns: Vec<Json> = turns
        .iter()
        .skip(turns.len().saturating_sub(MAX_TURNS))
        .map(|e| json!({"turn_id": e["turn_id"], "role": e["role"], "summary": or_null(&e["summary"]), "phase": or_null(&e["phase"])}))
        .collect();
    let record = json!({
        "schema_version": "0.1",
        "run_id": state["run_id"],
        "project_id": or_null(&config["project"]["id"]),
        "project_name": or_null(&config["project"]["name"]),
        "template": or_null(&config["template"]),
        "status": status,
        "started_at": started,
        "completed_at": completed,
        "duration_ms": duration,
        "phases_completed": unique(&history, "phase"),
        "total_turns": history.len(),
        "roles_used": unique(&history, "role"),
        "decisions_count": ledger.len(),
        "total_cost_usd": state["budget_status"]["spent_usd"],
        "budget_limit_usd": config["budget"]["per_run_max_usd"],
        "blocked_reason": blocked_reason,
        "gate_results": state["phase_gate_status"],
        "connector_used": or_null(if first_role["runtime_id"].is_null() { &first_role["runtime"] } else { &first_role["runtime_id"] }),
        "model_used": or_null(&first_role["model"]),
        "provenance": state["provenance"],
        "parent_context": parent_context(state),
        "retrospective": retrospective,
        "inheritance_snapshot": {"recent_decisions": decisions, "recent_accepted_turns": turns},
        "recorded_at": now(),
    });
    store.append_jsonl(RUN_HISTORY, &record)
}

/// The record of `run_id` in `run-history.jsonl`, if one is there.
fn find(store: &Store, run_id: &str) -> Option<Json> {
    store
        .read_jsonl(RUN_HISTORY)
        .into_iter()
        .find(|e| e["run_id"] == run_id)
}

/// A parent a child run may start from (`run --continue-from` / `--recover-from`): a recorded
/// run that ended completed or blocked. The reference's refusal otherwise.
pub fn parent(store: &Store, run_id: &str) -> Result<Json, String> {
    let entry =
        find(store, run_id).ok_or_else(|| format!("Run {run_id} not found in run history"))?;
    match entry["status"].as_str() {
        Some("completed" | "blocked") => Ok(entry),
        other => Err(format!(
            "Run {run_id} is still active (status: {}). Cannot chain from a non-terminal run.",
            other.unwrap_or("undefined")
        )),
    }
}

/// The read-only summary a child run carries of its parent (`--inherit-context`): the
/// parent's outcome, phases, roles, retrospective and its last decisions and turns, and the
/// warnings about what was missing.
pub fn inherited_context(store: &Store, parent_run_id: &str) -> (Json, Vec<String>) {
    let mut warnings = Vec::new();
    let entry = find(store, parent_run_id);
    if entry.is_none() {
        warnings.push(format!(
            "Parent run {parent_run_id} not found in run-history.jsonl"
        ));
    }
    let e = entry.unwrap_or(Json::Null);
    let snapshot = &e["inheritance_snapshot"];
    if entry_exists(&e) && !snapshot.is_object() {
        warnings.push("Parent run has no inheritance snapshot in run-history.jsonl — inherited context is metadata only".to_owned());
    }
    let list = |v: &Json| {
        if entry_exists(&e) && v.is_array() {
            v.clone()
        } else {
            json!([])
        }
    };
    let mut ctx = json!({
        "schema_version": "0.1",
        "parent_run_id": parent_run_id,
        "parent_status": or_null(&e["status"]),
        "parent_completed_at": or_null(&e["completed_at"]),
        "parent_phases_completed": list(&e["phases_completed"]),
        "parent_roles_used": list(&e["roles_used"]),
        "parent_blocked_reason": or_null(&e["blocked_reason"]),
        "parent_retrospective": or_null(&e["retrospective"]),
        "recent_decisions": list(&snapshot["recent_decisions"]),
        "recent_accepted_turns": list(&snapshot["recent_accepted_turns"]),
        "inherited_at": now(),
    });
    if !warnings.is_empty() {
        ctx["warnings"] = json!(warnings);
    }
    (ctx, warnings)
}

fn entry_exists(e: &Json) -> bool {
    e.is_object()
}

/// The inherited context as the dispatch bundle's `CONTEXT.md` shows it (the reference's
/// section; `compact` after the run's first turn).
pub fn inherited_markdown(ctx: &Json, compact: bool) -> String {
    if !ctx.is_object() {
        return String::new();
    }
    let t = |v: &Json| {
        v.as_str()
            .filter(|s| !s.is_empty())
            .map(axc_core::util::printable)
    };
    let join = |v: &Json| {
        v.as_array().filter(|a| !a.is_empty()).map(|a| {
            a.iter()
                .map(|x| {
                    x.as_str()
                        .map_or_else(|| x.to_string(), axc_core::util::printable)
                })
                .collect::<Vec<_>>()
                .join(", ")
        })
    };
    let mut l = vec![
        "## Inherited Run Context".to_owned(),
        String::new(),
        "> **This is a fresh run, not a resumed parent.** The context below is a read-only summary from the parent run to provide continuity.".to_owned(),
        String::new(),
        format!("- **Parent run:** {}", t(&ctx["parent_run_id"]).unwrap_or_default()),
        format!("- **Parent status:** {}", t(&ctx["parent_status"]).unwrap_or_else(|| "unknown".into())),
    ];
    if let Some(at) = t(&ctx["parent_completed_at"]) {
        l.push(format!("- **Completed at:** {at}"));
    }
    if let Some(r) = t(&ctx["parent_blocked_reason"]) {
        l.push(format!("- **Blocked reason:** {r}"));
    }
    if let Some(p) = join(&ctx["parent_phases_completed"]) {
        l.push(format!("- **Phases completed:** {p}"));
    }
    if let Some(r) = join(&ctx["parent_roles_used"]) {
        l.push(format!("- **Roles used:** {r}"));
    }
    l.push(String::new());
    let retro = &ctx["parent_retrospective"];
    if !compact && retro.is_object() {
        l.push("### Parent Retrospective".into());
        l.push(String::new());
        l.push(format!(
            "- **Headline:** {}",
            t(&retro["headline"]).unwrap_or_else(|| "n/a".into())
        ));
        l.push(format!(
            "- **Terminal reason:** {}",
            t(&retro["terminal_reason"]).unwrap_or_else(|| "unknown".into())
        ));
        if let Some(a) = t(&retro["next_operator_action"]) {
            l.push(format!("- **Next operator action:** {a}"));
        }
        if let Some(h) = t(&retro["follow_on_hint"]) {
            l.push(format!("- **Follow-on hint:** {h}"));
        }
        l.push(String::new());
    }
    let decisions = ctx["recent_decisions"].as_array().filter(|a| !a.is_empty());
    if let (false, Some(ds)) = (compact, decisions) {
        l.push("### Recent Decisions".into());
        l.push(String::new());
        for d in ds {
            l.push(format!(
                "- **{}:** {}",
                t(&d["id"]).unwrap_or_else(|| "(no id)".into()),
                t(&d["statement"]).unwrap_or_else(|| "(no statement)".into())
            ));
        }
        l.push(String::new());
    }
    let turns = ctx["recent_accepted_turns"]
        .as_array()
        .filter(|a| !a.is_empty());
    if let (false, Some(ts)) = (compact, turns) {
        l.push("### Recent Accepted Turns".into());
        l.push(String::new());
        for x in ts {
            l.push(format!(
                "- **{}** ({}): {}",
                t(&x["role"]).unwrap_or_else(|| "(unknown)".into()),
                t(&x["turn_id"]).unwrap_or_else(|| "?".into()),
                t(&x["summary"]).unwrap_or_else(|| "(no summary)".into())
            ));
        }
        l.push(String::new());
    }
    if let Some(ws) = ctx["warnings"].as_array().filter(|a| !a.is_empty()) {
        l.push("### Inheritance Warnings".into());
        l.push(String::new());
        for w in ws {
            l.push(format!("- ⚠ {}", t(w).unwrap_or_default()));
        }
        l.push(String::new());
    }
    l.join("\n")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_runs_entries_are_read_back_to_the_run_before_it() {
        let d = tempfile::tempdir().unwrap();
        let root = d.path();
        std::fs::create_dir_all(root.join(".agentxchain")).unwrap();
        let at = |m: u32| format!("2026-12-07T10:{m:02}:00.000Z");
        let lines = [
            json!({"run_id": "run_b", "n": 0, "accepted_at": at(0)}),
            json!({"run_id": "run_a", "n": 1, "accepted_at": at(1)}),
            json!({"run_id": "run_a", "n": 2, "accepted_at": at(2)}),
            // run_c began at minute 5: run_b's turn before it ends its read.
            json!({"run_id": "run_b", "n": 3, "accepted_at": at(3)}),
            json!({"run_id": "run_c", "n": 4, "accepted_at": at(6)}),
            json!({"n": 5}),
            // Another run's entry written in among run_c's own is passed over.
            json!({"run_id": "run_x", "n": 6, "accepted_at": at(7)}),
            json!({"run_id": "run_c", "n": 7, "accepted_at": at(8)}),
        ];
        let text: String = lines.iter().map(|l| format!("{l}\n")).collect();
        std::fs::write(root.join(HISTORY), format!("{text}{{broken\n\n")).unwrap();
        let store = Store::new(root);
        let n = |run: &str, created: Option<&str>| -> Vec<i64> {
            run_entries(&store, run, created)
                .iter()
                .filter_map(|e| e["n"].as_i64())
                .collect()
        };
        let created = at(5);
        assert_eq!(n("run_c", Some(&created)), [4, 7], "back to the run before");
        assert_eq!(n("run_c", None), [7], "without a start: to any other run");
        assert_eq!(
            n("run_b", Some(&at(0))),
            [0, 3],
            "every turn since it began"
        );
        assert_eq!(n("run_z", Some(&created)), Vec::<i64>::new());
    }
}
