//! `run-history.jsonl`: one record per finished run (what `history` lists and a child run
//! inherits), appended when a run completes.

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
    let history: Vec<Json> = store
        .read_jsonl(HISTORY)
        .into_iter()
        .filter(|e| state["run_id"].is_null() || e["run_id"] == state["run_id"])
        .collect();
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
    let headline = last
        .and_then(|e| e["summary"].as_str())
        .map(str::trim)
        .filter(|s| !s.is_empty())
        .map(str::to_owned)
        .unwrap_or_else(|| format!("Run completed after {} accepted turn(s).", history.len()));
    let run_id = state["run_id"].as_str().unwrap_or("");
    let mut hint = format!(
        "If more scope remains, start a child run with `agentxchain run --continue-from {run_id} --inherit-context`."
    );
    if let Some(next) = last
        .and_then(|e| e["proposed_next_role"].as_str())
        .filter(|r| !r.trim().is_empty() && *r != "human")
    {
        hint.push_str(&format!(" The last accepted turn suggested `{next}` next."));
    }
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
        "status": "completed",
        "started_at": started,
        "completed_at": completed,
        "duration_ms": duration,
        "phases_completed": unique(&history, "phase"),
        "total_turns": history.len(),
        "roles_used": unique(&history, "role"),
        "decisions_count": ledger.len(),
        "total_cost_usd": state["budget_status"]["spent_usd"],
        "budget_limit_usd": config["budget"]["per_run_max_usd"],
        "blocked_reason": null,
        "gate_results": state["phase_gate_status"],
        "connector_used": or_null(if first_role["runtime_id"].is_null() { &first_role["runtime"] } else { &first_role["runtime_id"] }),
        "model_used": or_null(&first_role["model"]),
        "provenance": state["provenance"],
        "parent_context": null,
        "retrospective": {"headline": headline, "terminal_reason": "completed", "next_operator_action": null, "follow_on_hint": hint},
        "inheritance_snapshot": {"recent_decisions": decisions, "recent_accepted_turns": turns},
        "recorded_at": now(),
    });
    store.append_jsonl(RUN_HISTORY, &record)
}
