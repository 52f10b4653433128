//! `status --json`: the reference's object — the normalized config, the run state, and what the
//! reference derives around them (continuity, recovery, next actions, the recent events, the
//! current human escalation, pending intents, the phase's workflow artifacts, …), key for key.
//!
//! It only reads. The reference rewrites `state.json` on a read (the budget's remaining amount
//! recomputed, approval pauses re-normalized), turns a turn dispatched for three minutes into a
//! "ghost" and blocks the run, and deletes stale marker files; here the budget is shown as the
//! reference would recompute it and nothing is written. A manual turn is never a ghost: it waits
//! for a person, not a subprocess.

use std::path::Path;
use std::time::{Duration, SystemTime};

use axc_core::jsonl::{self, Visit};
use axc_core::read::{EVENTS_FILE, STATE_FILE};
use serde_json::{Map, Value as Json, json};

use crate::run::Store;
use crate::run::git;

/// How far back the recent-event summary counts.
const WINDOW: Duration = Duration::from_secs(15 * 60);

/// Why there is no status object: the reference's texts.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NoStatus {
    /// Printed on stderr first (`  Warning: …`), when the config is there but unusable.
    pub warning: Option<String>,
    /// Printed on stdout.
    pub message: String,
    /// The config is a legacy (v3) one: not this view's (the caller reports it its way).
    pub legacy: bool,
}

const NO_CONFIG: &str = "No agentxchain.json found. Run `agentxchain init` first.";

fn falsy(v: &Json) -> bool {
    match v {
        Json::Null => true,
        Json::Bool(b) => !b,
        Json::Number(n) => n.as_f64().is_none_or(|f| f == 0.0),
        Json::String(s) => s.is_empty(),
        _ => false,
    }
}

/// `a || b`.
fn or(v: &Json, default: Json) -> Json {
    if falsy(v) { default } else { v.clone() }
}

fn trimmed(v: &Json) -> Option<&str> {
    v.as_str().map(str::trim).filter(|s| !s.is_empty())
}

/// The normalized config (`normalizeV4`): the sections the reference keeps, in its order, with
/// its defaults; other keys are dropped.
pub fn normalize_config(raw: &Json) -> Json {
    let mut roles = Map::new();
    for (id, role) in raw["roles"].as_object().into_iter().flatten() {
        let mut r = Map::new();
        for k in ["title", "mandate", "write_authority"] {
            if let Some(v) = role.get(k) {
                r.insert(k.into(), v.clone());
            }
        }
        if role["decision_authority"].is_number() {
            r.insert(
                "decision_authority".into(),
                role["decision_authority"].clone(),
            );
        }
        let runtime = &role["runtime"];
        let class = runtime
            .as_str()
            .map(|rt| or(&raw["runtimes"][rt]["type"], json!("manual")))
            .unwrap_or(json!("manual"));
        r.insert("runtime_class".into(), class);
        if !runtime.is_null() {
            r.insert("runtime_id".into(), runtime.clone());
        }
        roles.insert(id.clone(), Json::Object(r));
    }
    let routing = or(&raw["routing"], json!({}));
    let phases: Vec<String> = match routing.as_object() {
        Some(r) if !r.is_empty() => r.keys().cloned().collect(),
        _ => ["planning", "implementation", "qa"]
            .map(String::from)
            .to_vec(),
    };
    let mut project = Map::new();
    project.insert("id".into(), or(&raw["project"]["id"], json!("unknown")));
    project.insert("name".into(), or(&raw["project"]["name"], json!("Unknown")));
    if let Some(goal) = trimmed(&raw["project"]["goal"]) {
        project.insert("goal".into(), json!(goal));
    }
    project.insert(
        "default_branch".into(),
        json!(trimmed(&raw["project"]["default_branch"]).unwrap_or("main")),
    );
    let rules = &raw["rules"];
    let nullish = |v: &Json, d: Json| if v.is_null() { d } else { v.clone() };
    let mut out = Map::new();
    out.insert("schema_version".into(), json!(4));
    out.insert("protocol_mode".into(), json!("governed"));
    out.insert("template".into(), or(&raw["template"], json!("generic")));
    out.insert("project".into(), Json::Object(project));
    out.insert("roles".into(), Json::Object(roles));
    out.insert("runtimes".into(), or(&raw["runtimes"], json!({})));
    out.insert("routing".into(), routing);
    out.insert("gates".into(), or(&raw["gates"], json!({})));
    out.insert("hooks".into(), or(&raw["hooks"], json!({})));
    out.insert("notifications".into(), or(&raw["notifications"], json!({})));
    out.insert("schedules".into(), schedules(&raw["schedules"]));
    out.insert("budget".into(), or(&raw["budget"], Json::Null));
    out.insert(
        "policies".into(),
        if raw["policies"].is_array() {
            raw["policies"].clone()
        } else {
            json!([])
        },
    );
    out.insert(
        "approval_policy".into(),
        or(&raw["approval_policy"], Json::Null),
    );
    out.insert("timeouts".into(), or(&raw["timeouts"], Json::Null));
    out.insert(
        "workflow_kit".into(),
        workflow_kit(&raw["workflow_kit"], &phases),
    );
    out.insert(
        "retention".into(),
        or(
            &raw["retention"],
            json!({"talk_strategy": "append_only", "history_strategy": "jsonl_append_only"}),
        ),
    );
    out.insert(
        "rules".into(),
        json!({
            "challenge_required": nullish(&rules["challenge_required"], json!(true)),
            "max_turn_retries": nullish(&rules["max_turn_retries"], json!(2)),
            "max_deadlock_cycles": nullish(&rules["max_deadlock_cycles"], json!(2)),
            "max_consecutive_claims": null,
            "verify_command": null,
            "compress_after_words": null,
            "ttl_minutes": null,
        }),
    );
    out.insert(
        "files".into(),
        json!({"talk": "TALK.md", "history": ".agentxchain/history.jsonl",
               "state": ".agentxchain/state.json", "log": null}),
    );
    for k in [
        "gate_semantic_coverage_mode",
        "intent_coverage_mode",
        "run_loop",
    ] {
        if !falsy(&raw[k]) {
            out.insert(k.into(), raw[k].clone());
        }
    }
    out.insert(
        "compat".into(),
        json!({"next_owner_source": "state-json", "lock_based_coordination": false,
               "original_version": 4}),
    );
    Json::Object(out)
}

/// The reference's `normalizeWorkflowKit`: each phase's template artifacts, then its own.
pub(crate) fn workflow_kit(raw: &Json, phases: &[String]) -> Json {
    use axc_core::config::{
        default_workflow_artifacts as default_artifacts,
        workflow_template_artifacts as template_artifacts,
    };
    if raw.is_null() {
        let mut out = Map::new();
        for phase in phases {
            let arts = default_artifacts(phase);
            if arts.is_empty() {
                continue;
            }
            let list: Vec<Json> = arts
                .iter()
                .map(|(p, s)| json!({"path": p, "semantics": s, "required": true, "semantics_config": null}))
                .collect();
            out.insert(phase.clone(), json!({"artifacts": list}));
        }
        return json!({"phases": out});
    }
    let mut out = Map::new();
    for (phase, cfg) in raw["phases"].as_object().into_iter().flatten() {
        let mut list = cfg["template"]
            .as_str()
            .map(template_artifacts)
            .unwrap_or_default();
        for a in cfg["artifacts"].as_array().into_iter().flatten() {
            let at = a["path"]
                .as_str()
                .and_then(|p| list.iter().position(|t| t["path"] == p));
            match (at, a.as_object()) {
                (Some(i), Some(fields)) => {
                    for (k, v) in fields {
                        list[i][k.as_str()] = v.clone();
                    }
                }
                _ => list.push(a.clone()),
            }
        }
        let list: Vec<Json> = list
            .iter()
            .map(|a| {
                json!({"path": a["path"], "semantics": or(&a["semantics"], Json::Null),
                "semantics_config": or(&a["semantics_config"], Json::Null),
                "owned_by": or(&a["owned_by"], Json::Null), "required": a["required"] != false})
            })
            .collect();
        let mut p = Map::new();
        if let Some(t) = cfg["template"].as_str() {
            p.insert("template".into(), json!(t));
        }
        p.insert("artifacts".into(), Json::Array(list));
        out.insert(phase.clone(), Json::Object(p));
    }
    json!({"phases": out, "_explicit": true})
}

fn schedules(raw: &Json) -> Json {
    let mut out = Map::new();
    for (id, s) in raw.as_object().into_iter().flatten() {
        let mut e = Map::new();
        e.insert("enabled".into(), json!(s["enabled"] != false));
        if !s["every_minutes"].is_null() {
            e.insert("every_minutes".into(), s["every_minutes"].clone());
        }
        e.insert("auto_approve".into(), json!(s["auto_approve"] != false));
        e.insert(
            "max_turns".into(),
            if s["max_turns"].is_null() {
                json!(50)
            } else {
                s["max_turns"].clone()
            },
        );
        e.insert("initial_role".into(), or(&s["initial_role"], Json::Null));
        e.insert(
            "trigger_reason".into(),
            json!(
                trimmed(&s["trigger_reason"])
                    .map(str::to_owned)
                    .unwrap_or_else(|| format!("schedule:{id}"))
            ),
        );
        e.insert("continuous".into(), continuous(&s["continuous"]));
        out.insert(id.clone(), Json::Object(e));
    }
    Json::Object(out)
}

fn continuous(raw: &Json) -> Json {
    if raw["enabled"] != true {
        return Json::Null;
    }
    let int_at_least = |v: &Json, min: i64, d: i64| v.as_i64().filter(|n| *n >= min).unwrap_or(d);
    let on_idle = raw["on_idle"]
        .as_str()
        .filter(|s| ["exit", "perpetual", "human_review"].contains(s))
        .unwrap_or("exit");
    let mut out = Map::new();
    out.insert("enabled".into(), json!(true));
    out.insert(
        "vision_path".into(),
        or(&raw["vision_path"], json!(".planning/VISION.md")),
    );
    out.insert(
        "max_runs".into(),
        json!(int_at_least(&raw["max_runs"], 1, 50)),
    );
    out.insert(
        "max_idle_cycles".into(),
        json!(int_at_least(&raw["max_idle_cycles"], 1, 5)),
    );
    out.insert(
        "triage_approval".into(),
        json!(if raw["triage_approval"] == "human" {
            "human"
        } else {
            "auto"
        }),
    );
    out.insert(
        "per_session_max_usd".into(),
        raw["per_session_max_usd"]
            .as_f64()
            .filter(|f| *f > 0.0)
            .map_or(Json::Null, |_| raw["per_session_max_usd"].clone()),
    );
    if raw["auto_checkpoint"].is_boolean() {
        out.insert("auto_checkpoint".into(), raw["auto_checkpoint"].clone());
    }
    out.insert("on_idle".into(), json!(on_idle));
    let expansion = if on_idle == "perpetual" {
        let x = &raw["idle_expansion"];
        let defaults = [
            ".planning/VISION.md",
            ".planning/ROADMAP.md",
            ".planning/SYSTEM_SPEC.md",
        ];
        let sources: Vec<Json> = match x["sources"].as_array().filter(|a| !a.is_empty()) {
            Some(a) => {
                let s: Vec<Json> = a
                    .iter()
                    .filter(|s| s.as_str().is_some_and(|s| !s.is_empty()))
                    .cloned()
                    .collect();
                if s.is_empty() {
                    vec![json!(".planning/VISION.md")]
                } else {
                    s
                }
            }
            None => defaults.iter().map(|s| json!(s)).collect(),
        };
        json!({
            "sources": sources,
            "max_expansions": int_at_least(&x["max_expansions"], 1, 5),
            "role": x["role"].as_str().filter(|s| !s.is_empty()).unwrap_or("pm"),
            "output": "intake_intent_or_vision_exhausted",
            "malformed_retry_limit": int_at_least(&x["malformed_retry_limit"], 0, 1),
            "pm_prompt_path": trimmed(&x["pm_prompt_path"]).unwrap_or(".agentxchain/prompts/pm-idle-expansion.md"),
        })
    } else {
        Json::Null
    };
    out.insert("idle_expansion".into(), expansion);
    Json::Object(out)
}

/// The state as the reference shows it: the file's, with the budget reconciled with the
/// configured limit (a person may have changed it since the last write).
fn shown_state(state: Json, config: &Json) -> Json {
    crate::budget::reconcile(state, config, None)
}

fn active_turns(state: &Json) -> Vec<(&String, &Json)> {
    state["active_turns"]
        .as_object()
        .into_iter()
        .flatten()
        .filter(|(_, t)| t.is_object())
        .collect()
}

/// `continuity`: the session checkpoint, whether it is stale, what git says moved since it,
/// and the command the reference recommends.
fn continuity(store: &Store, state: &Json, session: Option<Json>) -> Json {
    let report = ".agentxchain/SESSION_RECOVERY.md";
    let report = store.exists(report).then_some(report);
    if session.is_none() && report.is_none() {
        return Json::Null;
    }
    let cp = session.clone().unwrap_or(Json::Null);
    let stale = match (trimmed(&cp["run_id"]), trimmed(&state["run_id"])) {
        (Some(a), Some(b)) => a != b,
        _ => false,
    };
    let (mut drift, mut warnings) = (Json::Null, Vec::<String>::new());
    let base = &cp["baseline_ref"];
    // The working tree is read only when the checkpoint says it was clean — proven clean from
    // the index and the files, else by a git process; HEAD and branch come from the files.
    let needs_tree = base["workspace_dirty"] == false;
    let now = if falsy(base) || stale {
        None
    } else if needs_tree {
        match crate::run::clean::proven(store.root()) {
            // Provably clean without a git process: HEAD and branch as the proof read them.
            Some((head, branch)) => Some(git::Snapshot {
                head: Some(head),
                branch,
                ..Default::default()
            }),
            None => git::snapshot(store.root()),
        }
    } else {
        // The tree was dirty at the checkpoint: only HEAD and branch matter.
        git::head_branch(store.root()).map(|(head, branch)| git::Snapshot {
            head,
            branch,
            ..Default::default()
        })
    };
    if let Some(now) = now {
        let old_head = base["git_head"].as_str().filter(|o| !o.is_empty());
        let short = |s: &str| s.chars().take(8).collect::<String>();
        match (old_head, now.head.as_deref()) {
            (Some(old), Some(head)) if old != head => warnings.push(format!(
                "Git HEAD has moved since checkpoint: {} -> {}",
                short(old),
                short(head)
            )),
            // A branch with no commit yet (an orphan checkout): HEAD is gone from the commit
            // the checkpoint named.
            (Some(old), None) => warnings.push(format!(
                "Git HEAD has moved since checkpoint: {} -> (no commit)",
                short(old)
            )),
            _ => {}
        }
        if let (Some(old), Some(new)) = (trimmed(&base["git_branch"]), now.branch.as_deref())
            && old != new
        {
            warnings.push(format!("Branch changed since checkpoint: {old} -> {new}"));
        }
        if base["workspace_dirty"] == false && !now.changes.is_empty() {
            warnings.push("Workspace was clean at checkpoint but is now dirty".to_owned());
        }
        drift = json!(!warnings.is_empty());
    } else if needs_tree && !falsy(base) && !stale && git::has_git_dir(store.root()) {
        // git could not say (it failed, or was stopped after its time limit): the drift is
        // unknown, which must not read as none.
        warnings.push(
            "Workspace state could not be read (git status failed or timed out): drift since checkpoint is unknown"
                .to_owned(),
        );
    }
    let (restart, command, reason, detail) = if drift == true {
        (
            false,
            json!("agentxchain reconcile-state --accept-operator-head"),
            "operator_commit_drift",
            json!("accept safe fast-forward operator commits as the new baseline"),
        )
    } else {
        recommended(state)
    };
    json!({
        "checkpoint": cp,
        "stale_checkpoint": stale,
        "recovery_report_path": report,
        "restart_recommended": restart,
        "recommended_command": command,
        "recommended_reason": reason,
        "recommended_detail": detail,
        "drift_detected": drift,
        "drift_warnings": warnings,
    })
}

/// What the reference recommends next for `state`: `(restart_recommended, command, reason,
/// detail)`.
pub fn recommended(state: &Json) -> (bool, Json, &'static str, Json) {
    let u = |v: &Json| {
        or(v, json!("unknown"))
            .as_str()
            .unwrap_or("unknown")
            .to_owned()
    };
    if state.is_null() {
        return (false, Json::Null, "no_state", Json::Null);
    }
    let ppt = &state["pending_phase_transition"];
    if !falsy(ppt) {
        return (
            false,
            json!("agentxchain approve-transition"),
            "pending_phase_transition",
            json!(format!(
                "{} -> {} (gate: {})",
                u(&ppt["from"]),
                u(&ppt["to"]),
                u(&ppt["gate"])
            )),
        );
    }
    let prc = &state["pending_run_completion"];
    if !falsy(prc) {
        let detail = trimmed(&prc["gate"]).map_or(Json::Null, |g| json!(format!("gate: {g}")));
        return (
            false,
            json!("agentxchain approve-completion"),
            "pending_run_completion",
            detail,
        );
    }
    match state["status"].as_str() {
        Some("failed") => (
            false,
            Json::Null,
            "reserved_terminal_state",
            json!("run-level failed is reserved and not emitted by current governed writers"),
        ),
        Some("blocked") => (false, Json::Null, "blocked", Json::Null),
        Some("completed") => (false, Json::Null, "terminal_state", Json::Null),
        _ => (
            true,
            json!("agentxchain restart"),
            "restart_available",
            json!("rebuild session context from disk"),
        ),
    }
}

/// The command that goes on with a retained turn.
fn retained_command(state: &Json, config: &Json) -> String {
    retained_command_for(state, config, None)
}

/// [`retained_command`] for the turn `turn_id` when it is active (the reference's
/// `deriveRetainedTurnRecoveryCommand`): `resume` for a manual runtime, `step --resume` for
/// another, with `--turn` when several turns are active.
pub(crate) fn retained_command_for(state: &Json, config: &Json, turn_id: Option<&str>) -> String {
    let turns = active_turns(state);
    let active = |id: &Json| {
        id.as_str()
            .and_then(|id| turns.iter().find(|(k, _)| k.as_str() == id))
            .map(|(_, t)| *t)
    };
    let turn = turn_id
        .and_then(|t| active(&json!(t)))
        .or_else(|| active(&state["blocked_reason"]["turn_id"]))
        .or_else(|| active(&state["escalation"]["from_turn_id"]))
        .or_else(|| (turns.len() == 1).then(|| turns[0].1));
    let Some(turn) = turn else {
        return "agentxchain step --resume".to_owned();
    };
    let kind = turn["runtime_id"]
        .as_str()
        .and_then(|rt| config["runtimes"][rt]["type"].as_str())
        .unwrap_or("manual");
    let mut cmd = if kind == "manual" {
        "agentxchain resume".to_owned()
    } else {
        "agentxchain step --resume".to_owned()
    };
    if turns.len() > 1 {
        cmd += &format!(" --turn {}", turn["turn_id"].as_str().unwrap_or(""));
    }
    cmd
}

/// `recovery`: what the reference says a person does next about a paused or blocked run.
pub fn recovery(state: &Json, config: &Json) -> Json {
    if state.is_null() {
        return Json::Null;
    }
    let approval = |typed: &str, action: &str, gate: &Json| {
        json!({"typed_reason": typed, "owner": "human", "recovery_action": action,
               "turn_retained": false, "detail": or(gate, Json::Null)})
    };
    if !falsy(&state["pending_run_completion"]) {
        return approval(
            "pending_run_completion",
            "agentxchain approve-completion",
            &state["pending_run_completion"]["gate"],
        );
    }
    if !falsy(&state["pending_phase_transition"]) {
        return approval(
            "pending_phase_transition",
            "agentxchain approve-transition",
            &state["pending_phase_transition"]["gate"],
        );
    }
    let retained = !active_turns(state).is_empty();
    let r = &state["blocked_reason"]["recovery"];
    if r.is_object() {
        let detail = if r["detail"].is_null() {
            state["blocked_on"].clone()
        } else {
            r["detail"].clone()
        };
        return json!({
            "typed_reason": or(&r["typed_reason"], json!("unknown_block")),
            "owner": or(&r["owner"], json!("human")),
            "recovery_action": or(&r["recovery_action"], json!("Inspect state.json and resolve manually before rerunning agentxchain step")),
            "turn_retained": if r["turn_retained"].is_boolean() { r["turn_retained"].clone() } else { json!(retained) },
            "detail": detail,
            "runtime_guidance": [],
        });
    }
    let Some(on) = trimmed(&state["blocked_on"]) else {
        return Json::Null;
    };
    let cmd = if retained {
        retained_command(state, config)
    } else {
        "agentxchain resume".to_owned()
    };
    let entry = |typed: &str, owner: &str, action: String, kept: bool, detail: Json| {
        json!({"typed_reason": typed, "owner": owner, "recovery_action": action,
               "turn_retained": kept, "detail": detail, "runtime_guidance": []})
    };
    let rest = |p: &str| on.strip_prefix(p).filter(|r| !r.is_empty());
    if let Some(gate) = on.strip_prefix("human_approval:") {
        return json!({"typed_reason": "pending_phase_transition", "owner": "human",
            "recovery_action": "agentxchain approve-transition", "turn_retained": false,
            "detail": if gate.is_empty() { Json::Null } else { json!(gate) }});
    }
    if on.starts_with("human:") {
        return entry(
            "needs_human",
            "human",
            format!("Resolve the stated issue, then run {cmd}"),
            retained,
            rest("human:").map_or(Json::Null, |r| json!(r)),
        );
    }
    if on.starts_with("escalation:") {
        let esc = &state["escalation"];
        let operator = on.starts_with("escalation:operator:") || esc["source"] == "operator";
        let detail = [&esc["detail"], &esc["reason"]]
            .into_iter()
            .find(|v| !falsy(v))
            .cloned()
            .unwrap_or(json!(on));
        return entry(
            if operator {
                "operator_escalation"
            } else {
                "retries_exhausted"
            },
            "human",
            format!("Resolve the escalation, then run {cmd}"),
            retained,
            detail,
        );
    }
    if on.starts_with("dispatch:") {
        return entry(
            "dispatch_error",
            "human",
            format!("Resolve the dispatch issue, then run {cmd}"),
            retained,
            json!(rest("dispatch:").unwrap_or(on)),
        );
    }
    if on.starts_with("policy:") {
        let p = rest("policy:");
        let action = match p {
            Some(p) => format!("Resolve policy \"{p}\" condition, then run {cmd}"),
            None => format!("Resolve the policy condition, then run {cmd}"),
        };
        let detail = trimmed(&state["blocked_reason"])
            .map(str::to_owned)
            .or_else(|| p.map(|p| format!("Policy \"{p}\" triggered")))
            .unwrap_or_else(|| on.to_owned());
        return entry(
            "policy_escalation",
            "human",
            action,
            retained,
            json!(detail),
        );
    }
    if on.starts_with("timeout:") {
        return entry(
            "timeout",
            "operator",
            "agentxchain resume".to_owned(),
            false,
            json!(format!(
                "{} timeout exceeded",
                rest("timeout:").unwrap_or("unknown")
            )),
        );
    }
    entry(
        "unknown_block",
        "human",
        "Inspect state.json and resolve manually before rerunning agentxchain step".to_owned(),
        retained,
        json!(on),
    )
}

fn next_actions(recovery: &Json) -> Json {
    match trimmed(&recovery["recovery_action"]) {
        Some(action) => json!([{
            "command": action,
            "reason": format!("Run is blocked: {}.", recovery["typed_reason"].as_str().unwrap_or("")),
        }]),
        None => json!([]),
    }
}

/// `recent_event_summary`: the log's last event and how many fall in the last 15 minutes —
/// read from the end, so the cost is those events', not the log's.
fn recent_events(root: &Path, now: SystemTime) -> Json {
    // Whether an event's `timestamp` falls in the window (`None`: it has none to read).
    let within = |ts: &Json| {
        crate::events::timestamp(&Json::String(trimmed(ts)?.to_owned()))
            .map(|t| now.duration_since(t).map_or(true, |age| age <= WINDOW))
    };
    let latest = jsonl::read_last(root, EVENTS_FILE, 1)
        .ok()
        .and_then(|t| t.entries.into_iter().next());
    let Some(latest) = latest else {
        return json!({"window_minutes": 15, "freshness": "no_events", "recent_count": 0,
                      "latest_event": null});
    };
    // Events are appended in time order: the first one older than the window ends the count.
    // Only each event's timestamp is read (a recent burst is hundreds of events).
    #[derive(serde::Deserialize)]
    struct Stamp {
        #[serde(default)]
        timestamp: Json,
    }
    let mut count = 0usize;
    let _ = jsonl::read_back_as(root, EVENTS_FILE, usize::MAX, |e: &Stamp| {
        match within(&e.timestamp) {
            Some(true) => {
                count += 1;
                Visit::Skip
            }
            Some(false) => Visit::Stop,
            None => Visit::Skip,
        }
    });
    let freshness = match within(&latest["timestamp"]) {
        Some(true) => "recent",
        Some(false) => "quiet",
        None => "unknown",
    };
    json!({"window_minutes": 15, "freshness": freshness, "recent_count": count,
           "latest_event": summarize_event(&latest)})
}

fn summarize_event(e: &Json) -> Json {
    let t = |v: &Json| trimmed(v).map(str::to_owned);
    let kind = t(&e["event_type"])
        .or_else(|| t(&e["type"]))
        .unwrap_or_else(|| "unknown_event".to_owned());
    let turn = if e["turn"].is_object() {
        &e["turn"]
    } else {
        &Json::Null
    };
    let role = t(&turn["role_id"])
        .or_else(|| t(&turn["assigned_role"]))
        .or_else(|| t(&e["role_id"]))
        .or_else(|| t(&e["role"]));
    let repo = t(&e["repo_id"]);
    let prefix = repo
        .as_ref()
        .map_or_else(String::new, |r| format!("[{r}] "));
    let p = &e["payload"];
    let gate = t(&p["gate_id"]).or_else(|| t(&e["gate"]));
    let role_part = role
        .as_ref()
        .map_or_else(String::new, |r| format!(" [{r}]"));
    let summary = match kind.as_str() {
        "turn_dispatched"
        | "turn_accepted"
        | "turn_rejected"
        | "turn_conflicted"
        | "turn_checkpointed"
        | "turn_stalled"
        | "turn_start_failed"
        | "runtime_spawn_failed"
        | "stdout_attach_failed"
        | "dispatch_progress" => format!("{prefix}{kind}{role_part}"),
        "phase_entered" => match (t(&p["from"]), t(&p["to"]).or_else(|| t(&e["phase"]))) {
            (Some(from), Some(to)) => format!("{prefix}phase_entered {from} -> {to}"),
            _ => format!("{prefix}{kind}"),
        },
        "gate_pending" | "gate_approved" | "gate_failed" => format!(
            "{prefix}{kind}{}",
            gate.as_ref()
                .map_or_else(String::new, |g| format!(" ({g})"))
        ),
        "conflict_resolved" => format!(
            "{prefix}{kind}{role_part}{}",
            t(&p["resolution"]).map_or_else(String::new, |r| format!(" via {r}"))
        ),
        "run_blocked"
        | "run_completed"
        | "run_started"
        | "escalation_raised"
        | "escalation_resolved"
        | "budget_exceeded_warn" => format!("{prefix}{kind}"),
        _ => t(&e["summary"]).unwrap_or_else(|| format!("{prefix}{kind}")),
    };
    let turn_id = t(&turn["turn_id"]).or_else(|| t(&e["turn_id"]));
    json!({"event_type": kind, "timestamp": t(&e["timestamp"]), "phase": t(&e["phase"]),
           "status": t(&e["status"]), "turn_id": turn_id, "role_id": role, "repo_id": repo,
           "summary": summary})
}

/// The current human escalation, as the reference materializes it.
fn human_escalation(root: &Path, state: &Json) -> Json {
    let Ok(records) = axc_core::escalations::load(root) else {
        return Json::Null;
    };
    let run_state = axc_core::state::RunState::from_value(state.clone());
    let Some(rec) = axc_core::escalations::current_blocker(&records, &run_state) else {
        return Json::Null;
    };
    let mut out = rec.record.clone();
    let res = rec.resolution.clone().unwrap_or_default();
    let get = |k: &str| {
        res.get(k)
            .filter(|v| !falsy(v))
            .cloned()
            .unwrap_or(Json::Null)
    };
    out.insert(
        "status".into(),
        json!(if rec.open { "open" } else { "resolved" }),
    );
    out.insert("resolved_at".into(), get("resolved_at"));
    out.insert("resolved_via".into(), get("resolved_via"));
    out.insert("resolution_notes".into(), get("resolution_notes"));
    Json::Object(out)
}

const INTENTS_DIR: &str = ".agentxchain/intake/intents";

/// Approved intents waiting for the run (or any run, when there is none yet).
fn pending_intents(store: &Store, run_id: Option<&str>) -> Json {
    // Located first: most projects have none, and `path` resolves every component.
    if !store.is_dir(INTENTS_DIR) {
        return json!([]);
    }
    let Ok(dir) = store.path(INTENTS_DIR) else {
        return json!([]);
    };
    let Ok(entries) = std::fs::read_dir(dir) else {
        return json!([]);
    };
    let mut intents: Vec<Json> = Vec::new();
    for entry in entries.flatten().take(10_000) {
        let name = entry.file_name().to_string_lossy().into_owned();
        if !name.ends_with(".json") || name.starts_with(".tmp-") {
            continue;
        }
        let Ok(Some(intent)) = store.read_json(&format!("{INTENTS_DIR}/{name}")) else {
            continue;
        };
        if intent["status"] != "approved" {
            continue;
        }
        if let Some(run) = run_id {
            let bound = intent["approved_run_id"].as_str();
            let ok = bound == Some(run)
                || (falsy(&intent["approved_run_id"]) && intent["cross_run_durable"] == true);
            if !ok {
                continue;
            }
        }
        intents.push(intent);
    }
    let rank = |i: &Json| match i["priority"].as_str() {
        Some("p0") => 0,
        Some("p1") => 1,
        Some("p2") => 2,
        Some("p3") => 3,
        _ => 4,
    };
    let when = |i: &Json| {
        let v = or(&i["approved_at"], i["created_at"].clone());
        crate::events::timestamp(&v)
    };
    intents.sort_by(|a, b| {
        rank(a)
            .cmp(&rank(b))
            .then_with(|| match (when(a), when(b)) {
                (Some(x), Some(y)) => x.cmp(&y),
                _ => std::cmp::Ordering::Equal,
            })
            .then_with(|| {
                canon::locale_cmp(
                    a["intent_id"].as_str().unwrap_or(""),
                    b["intent_id"].as_str().unwrap_or(""),
                )
            })
    });
    let list: Vec<Json> = intents
        .iter()
        .map(|i| {
            json!({
                "intent_id": i["intent_id"],
                "priority": or(&i["priority"], json!("p0")),
                "charter": or(&i["charter"], or(&i["description"], Json::Null)),
                "acceptance_count": i["acceptance_contract"].as_array().map_or(0, Vec::len),
                "approved_at": or(&i["approved_at"], Json::Null),
            })
        })
        .collect();
    Json::Array(list)
}

/// The injected-priority marker, when the intent it names is still approved or planned.
fn preemption_marker(store: &Store) -> Json {
    let Ok(Some(marker)) = store.read_json(".agentxchain/intake/injected-priority.json") else {
        return Json::Null;
    };
    let Some(id) = marker["intent_id"].as_str() else {
        return if marker.is_object() {
            marker
        } else {
            Json::Null
        };
    };
    if !axc_core::util::is_plain_id(id) {
        return Json::Null;
    }
    match store.read_json(&format!("{INTENTS_DIR}/{id}.json")) {
        Ok(Some(i)) if i["status"] == "approved" || i["status"] == "planned" => marker,
        _ => Json::Null,
    }
}

/// The current phase's workflow artifacts: owner, whether each exists, in the reference's
/// (locale) order.
fn workflow_artifacts(store: &Store, config: &Json, state: &Json) -> Json {
    let Some(phase) = state["phase"].as_str().filter(|p| !p.is_empty()) else {
        return Json::Null;
    };
    let Some(list) = config["workflow_kit"]["phases"][phase]["artifacts"]
        .as_array()
        .filter(|a| !a.is_empty())
    else {
        return Json::Null;
    };
    let entry_role = or(&config["routing"][phase]["entry_role"], Json::Null);
    let mut arts: Vec<Json> = list
        .iter()
        .filter_map(|a| {
            let path = a["path"].as_str()?;
            let (owner, how) = match trimmed(&a["owned_by"]) {
                Some(o) => (json!(o), "explicit"),
                None => (entry_role.clone(), "entry_role"),
            };
            // Inside the project only: a path out of it (or through a link out) is not there.
            let exists = store.exists(path);
            Some(json!({"path": path, "required": a["required"] != false,
                "semantics": or(&a["semantics"], Json::Null), "owned_by": owner,
                "owner_resolution": how, "exists": exists}))
        })
        .collect();
    arts.sort_by(|a, b| {
        canon::locale_cmp(
            a["path"].as_str().unwrap_or(""),
            b["path"].as_str().unwrap_or(""),
        )
    });
    json!({"ok": true, "phase": phase, "artifacts": arts})
}

/// The latest gate-action attempt for the pending approval's gate (decision ledger).
fn gate_action_attempt(store: &Store, state: &Json) -> Json {
    let (kind, gate) = if !falsy(&state["pending_phase_transition"]) {
        (
            "phase_transition",
            &state["pending_phase_transition"]["gate"],
        )
    } else if !falsy(&state["pending_run_completion"]) {
        ("run_completion", &state["pending_run_completion"]["gate"])
    } else {
        return Json::Null;
    };
    let mut entries: Vec<Json> = store
        .read_jsonl(".agentxchain/decision-ledger.jsonl")
        .into_iter()
        .filter(|e| e["type"] == "gate_action" && e["gate_type"] == kind && &e["gate_id"] == gate)
        .collect();
    entries.sort_by(|a, b| a["timestamp"].as_str().cmp(&b["timestamp"].as_str()));
    let Some(latest) = entries.last() else {
        return Json::Null;
    };
    let attempt = latest["attempt_id"].clone();
    let int = |v: &Json| v.as_i64().map_or(Json::Null, |n| json!(n));
    let n = |v: &Json| if v.is_null() { Json::Null } else { v.clone() };
    let actions: Vec<Json> = entries
        .iter()
        .filter(|e| e["attempt_id"] == attempt)
        .map(|e| {
            json!({"attempt_id": n(&e["attempt_id"]), "gate_id": n(&e["gate_id"]),
            "gate_type": n(&e["gate_type"]), "phase": n(&e["phase"]),
            "requested_by_turn": n(&e["requested_by_turn"]),
            "trigger_command": n(&e["trigger_command"]), "action_index": int(&e["action_index"]),
            "action_label": n(&e["action_label"]), "command": n(&e["command"]),
            "status": or(&e["status"], json!("unknown")), "exit_code": int(&e["exit_code"]),
            "signal": n(&e["signal"]), "stdout_tail": n(&e["stdout_tail"]),
            "stderr_tail": n(&e["stderr_tail"]), "spawn_error": n(&e["spawn_error"]),
            "timeout_ms": int(&e["timeout_ms"]), "timed_out": e["timed_out"] == true,
            "timestamp": n(&e["timestamp"])})
        })
        .collect();
    let failed = actions.iter().any(|a| a["status"] == "failed");
    json!({"attempt_id": attempt, "gate_id": gate, "gate_type": kind,
           "status": if failed { "failed" } else { "succeeded" },
           "attempted_at": or(&latest["timestamp"], Json::Null), "actions": actions})
}

/// Active turns whose role is now bound to another runtime or authority.
fn binding_drift(state: &Json, config: &Json) -> Json {
    let mut out = Vec::new();
    for (id, turn) in active_turns(state) {
        let Some(role_id) = turn["assigned_role"].as_str() else {
            continue;
        };
        let role = &config["roles"][role_id];
        if !role.is_object() {
            continue;
        }
        let cur = trimmed(&role["runtime_id"]);
        let old = trimmed(&turn["runtime_id"]);
        let runtime_changed = matches!((cur, old), (Some(c), Some(o)) if c != o);
        let authority_changed = match (
            trimmed(&role["write_authority"]),
            trimmed(&turn["write_authority"]),
        ) {
            (Some(a), Some(b)) => a != b,
            _ => false,
        };
        let kind = |rt: Option<&str>| rt.and_then(|rt| config["runtimes"][rt]["type"].as_str());
        let type_changed = matches!((kind(cur), kind(old)), (Some(a), Some(b)) if a != b);
        if runtime_changed || authority_changed || type_changed {
            let mut e = Map::new();
            e.insert("turn_id".into(), json!(id));
            e.insert("role_id".into(), json!(role_id));
            e.insert(
                "runtime_changed".into(),
                json!(runtime_changed || type_changed),
            );
            e.insert("old_runtime".into(), turn["runtime_id"].clone());
            e.insert("new_runtime".into(), role["runtime_id"].clone());
            e.insert("authority_changed".into(), json!(authority_changed));
            if !turn["write_authority"].is_null() {
                e.insert("old_authority".into(), turn["write_authority"].clone());
            }
            e.insert("new_authority".into(), role["write_authority"].clone());
            e.insert(
                "recovery_command".into(),
                json!(format!(
                    "agentxchain reissue-turn --turn {id} --reason \"config rebinding\""
                )),
            );
            out.push(Json::Object(e));
        }
    }
    Json::Array(out)
}

/// Active turns whose dispatch bundle is missing.
fn bundle_integrity(store: &Store, state: &Json) -> Json {
    let desynced: Vec<Json> = active_turns(state)
        .into_iter()
        .filter_map(|(id, turn)| {
            let path = format!(".agentxchain/dispatch/turns/{id}");
            let there = axc_core::util::is_plain_id(id) && store.is_dir(&path);
            (!there).then(|| {
                json!({"turn_id": id, "role": or(&turn["assigned_role"], json!("unknown")),
                       "expected_path": path})
            })
        })
        .collect();
    json!({"ok": desynced.is_empty(), "desynced": desynced})
}

/// Runtimes the reference reports connector health for (manual ones are not connectors).
/// The newest history entries `connector_health` reads for each runtime's last success.
const CONNECTOR_HISTORY: usize = 500;

/// `connector_health` (`getConnectorHealth`): each automated runtime (sorted by id) with its
/// active turns, its last success (the newest accepted turn it ran, from the newest
/// [`CONNECTOR_HISTORY`] history entries) and its last failure (the run blocked on one of its
/// turns), and the state those make: `active`, `failing`, `healthy` or `never_used`.
fn connector_health(store: &Store, config: &Json, state: &Json) -> Json {
    let mut ids: Vec<&String> = config["runtimes"]
        .as_object()
        .into_iter()
        .flatten()
        .filter(|(_, r)| {
            matches!(
                r["type"].as_str(),
                Some("local_cli" | "api_proxy" | "mcp" | "remote_agent")
            )
        })
        .map(|(id, _)| id)
        .collect();
    ids.sort_by(|a, b| canon::locale_cmp(a, b));
    if ids.is_empty() {
        return json!({"connectors": []});
    }
    // runtime -> (active turn ids, active roles, identity)
    let mut active: Map<String, Json> = Map::new();
    let mut turn_runtime: std::collections::HashMap<String, String> = Default::default();
    for t in state["active_turns"]
        .as_object()
        .into_iter()
        .flatten()
        .map(|(_, t)| t)
    {
        let Some(rt) = t["runtime_id"]
            .as_str()
            .filter(|r| ids.iter().any(|i| i.as_str() == *r))
        else {
            continue;
        };
        let e = active
            .entry(rt.to_owned())
            .or_insert_with(|| json!({"turns": [], "roles": [], "identity": null}));
        if let Some(id) = t["turn_id"].as_str() {
            turn_runtime.insert(id.to_owned(), rt.to_owned());
            if let Some(a) = e["turns"].as_array_mut() {
                a.push(json!(id));
            }
        }
        if let Some(r) = t["assigned_role"].as_str()
            && let Some(a) = e["roles"].as_array_mut()
            && !a.iter().any(|x| x == r)
        {
            a.push(json!(r));
        }
        e["identity"] =
            json!({"turn_id": t["turn_id"], "role": t["assigned_role"], "phase": state["phase"]});
    }
    // The newest accepted turn of each runtime, read from the end.
    let mut success: Map<String, Json> = Map::new();
    let mut seen = 0usize;
    let _ = jsonl::read_back(store.root(), crate::run::store::HISTORY, 1, |e| {
        seen += 1;
        if let Some(rt) = e["runtime_id"].as_str()
            && ids.iter().any(|i| i.as_str() == rt)
        {
            if let Some(t) = e["turn_id"].as_str() {
                turn_runtime
                    .entry(t.to_owned())
                    .or_insert_with(|| rt.to_owned());
            }
            if let Some(at) = e["accepted_at"].as_str()
                && !success.contains_key(rt)
            {
                success.insert(
                    rt.to_owned(),
                    json!({"at": at, "turn_id": e["turn_id"], "role": e["role"], "phase": e["phase"]}),
                );
            }
        }
        if success.len() == ids.len() || seen >= CONNECTOR_HISTORY {
            Visit::Stop
        } else {
            Visit::Skip
        }
    });
    // A run blocked on a turn blames that turn's runtime.
    let mut failure: Map<String, Json> = Map::new();
    if let Some(t) = state["blocked_reason"]["turn_id"].as_str()
        && let Some(rt) = turn_runtime.get(t)
    {
        let detail = state["blocked_reason"]["recovery"]["detail"]
            .as_str()
            .or(state["blocked_on"].as_str())
            .unwrap_or("runtime_blocked");
        failure.insert(
            rt.clone(),
            json!({"at": state["blocked_reason"]["blocked_at"], "turn_id": t, "role": null, "phase": state["phase"], "error": detail}),
        );
    }
    let ms = |v: &Json| crate::events::timestamp(v);
    let list: Vec<Json> = ids
        .into_iter()
        .map(|id| {
            let r = &config["runtimes"][id.as_str()];
            let a = active.get(id.as_str()).cloned().unwrap_or(Json::Null);
            let ok = success.get(id.as_str()).cloned().unwrap_or(Json::Null);
            let bad = failure.get(id.as_str()).cloned().unwrap_or(Json::Null);
            let turns = a["turns"].clone();
            let has_active = turns.as_array().is_some_and(|t| !t.is_empty());
            let sorted = |v: Json| {
                let mut l: Vec<String> = v
                    .as_array()
                    .into_iter()
                    .flatten()
                    .filter_map(|x| x.as_str().map(str::to_owned))
                    .collect();
                l.sort_by(|x, y| canon::locale_cmp(x, y));
                json!(l)
            };
            let turns = sorted(turns);
            let roles = sorted(a["roles"].clone());
            let st = if has_active && bad.is_null() {
                "active"
            } else if !bad.is_null()
                && (ok.is_null() || ms(&bad["at"]).zip(ms(&ok["at"])).is_some_and(|(f, s)| f >= s))
            {
                "failing"
            } else if !ok.is_null() {
                "healthy"
            } else if has_active {
                "active"
            } else {
                "never_used"
            };
            let reachable = if r["type"] == "local_cli" {
                "unknown"
            } else if st == "healthy" {
                "yes"
            } else if !bad.is_null() {
                "no"
            } else {
                "unknown"
            };
            let identity = [&bad, &ok, &a["identity"]]
                .into_iter()
                .find(|c| c.is_object())
                .cloned()
                .unwrap_or(Json::Null);
            let pick = |k: &str| or(&identity[k], Json::Null);
            json!({"runtime_id": id, "type": r["type"], "target": connector_target(r), "state": st,
                "reachable": reachable, "active_turn_ids": turns, "active_roles": roles,
                "last_turn_id": pick("turn_id"), "last_role": pick("role"), "last_phase": pick("phase"),
                "last_attempt_at": null, "last_success_at": or(&ok["at"], Json::Null),
                "last_failure_at": or(&bad["at"], Json::Null),
                "latency_ms": null, "attempts_made": null, "last_error": or(&bad["error"], Json::Null)})
        })
        .collect();
    json!({"connectors": list})
}

fn connector_target(r: &Json) -> String {
    let joined = |v: &Json, args: &Json| -> Option<String> {
        match v {
            Json::Array(parts) => Some(
                parts
                    .iter()
                    .map(|p| p.as_str().map_or_else(|| p.to_string(), str::to_owned))
                    .collect::<Vec<_>>()
                    .join(" "),
            ),
            Json::String(c) => {
                let mut all = vec![c.clone()];
                all.extend(
                    args.as_array()
                        .into_iter()
                        .flatten()
                        .map(|a| a.as_str().map_or_else(|| a.to_string(), str::to_owned)),
                );
                Some(all.join(" "))
            }
            _ => None,
        }
    };
    let t = match r["type"].as_str() {
        Some("api_proxy") => {
            let parts: Vec<&str> = [trimmed(&r["provider"]), trimmed(&r["model"])]
                .into_iter()
                .flatten()
                .collect();
            (!parts.is_empty()).then(|| parts.join(" / "))
        }
        Some("remote_agent") => trimmed(&r["url"]).map(str::to_owned),
        Some("mcp") if r["transport"] == "streamable_http" => trimmed(&r["url"]).map(str::to_owned),
        _ => joined(&r["command"], &r["args"]),
    };
    t.filter(|t| !t.is_empty())
        .unwrap_or_else(|| "unknown target".to_owned())
}

/// The dashboard the reference may have left running (`.agentxchain-dashboard.pid` / `.json`).
pub(crate) fn dashboard_session(store: &Store) -> Json {
    let pid = store
        .read_text(".agentxchain-dashboard.pid", 64)
        .ok()
        .flatten()
        .and_then(|t| {
            let digits: String = t.trim().chars().take_while(char::is_ascii_digit).collect();
            digits.parse::<i32>().ok()
        })
        .filter(|p| {
            *p > 0 && {
                // SAFETY: kill with signal 0 only checks whether the process exists.
                unsafe { libc::kill(*p, 0) == 0 }
            }
        });
    let session = store
        .read_json(".agentxchain-dashboard.json")
        .ok()
        .flatten()
        .filter(Json::is_object);
    let s = session.clone().unwrap_or(Json::Null);
    match (pid, session) {
        (Some(pid), _) => json!({"status": "running", "pid": pid, "url": or(&s["url"], Json::Null),
                                 "started_at": or(&s["started_at"], Json::Null)}),
        (None, Some(s)) => json!({"status": "stale", "pid": or(&s["pid"], Json::Null),
                                  "url": or(&s["url"], Json::Null),
                                  "started_at": or(&s["started_at"], Json::Null)}),
        (None, None) => {
            json!({"status": "not_running", "pid": null, "url": null, "started_at": null})
        }
    }
}

/// Coordinator projection warnings: only a run the coordinator created can have them, so the
/// log is searched only then (and then only its last 64 MiB).
fn coordinator_warnings(root: &Path, state: &Json, run_id: Option<&str>) -> Json {
    let by_coordinator = state["provenance"]["created_by"] == "coordinator"
        || state["provenance"]["trigger"] == "coordinator";
    let found = if by_coordinator {
        jsonl::read_last_where(root, EVENTS_FILE, usize::MAX, |e| {
            e["event_type"] == "coordinator_retry_projection_warning"
                && run_id.is_none_or(|r| e["run_id"] == r)
        })
        .map(|t| t.entries)
        .unwrap_or_default()
    } else {
        Vec::new()
    };
    let warnings: Vec<Json> = found
        .iter()
        .map(|e| {
            let p = &e["payload"];
            let n = |v: &Json| if v.is_null() { Json::Null } else { v.clone() };
            json!({"event_id": n(&e["event_id"]), "timestamp": n(&e["timestamp"]),
                "run_id": or(&e["run_id"], Json::Null), "workstream_id": n(&p["workstream_id"]),
                "repo_id": n(&p["repo_id"]), "reissued_turn_id": n(&p["reissued_turn_id"]),
                "warning_code": or(&p["warning_code"], json!("coordinator_acceptance_projection_incomplete")),
                "warning_message": n(&p["warning_message"])})
        })
        .collect();
    json!({"count": warnings.len(), "reconciliation_required": !warnings.is_empty(),
           "warnings": warnings})
}

/// Builds the object for the governed project at `root`, as of `now`. Warnings about files
/// that could not be used go to `warnings` (the reference prints them on stderr).
pub fn build(root: &Path, now: SystemTime, warnings: &mut Vec<String>) -> Result<Json, NoStatus> {
    let store = Store::new(root);
    let raw = match store.read_json(axc_core::config::CONFIG_FILE) {
        Ok(Some(raw)) => raw,
        Ok(None) => {
            return Err(NoStatus {
                warning: None,
                message: NO_CONFIG.to_owned(),
                legacy: false,
            });
        }
        Err(e) => {
            return Err(NoStatus {
                warning: Some(format!("  Warning: {}", e.message)),
                message: NO_CONFIG.to_owned(),
                legacy: false,
            });
        }
    };
    match axc_core::config::from_value(raw.clone()) {
        Err(e) => {
            return Err(NoStatus {
                warning: Some(format!("  Warning: {e}")),
                message: NO_CONFIG.to_owned(),
                legacy: false,
            });
        }
        Ok(c) if c.mode == axc_core::config::ProtocolMode::Legacy => {
            return Err(NoStatus {
                warning: None,
                message: String::new(),
                legacy: true,
            });
        }
        Ok(_) => {}
    }
    let config = normalize_config(&raw);
    let state = match store.read_json(STATE_FILE) {
        Ok(Some(s)) if s.is_object() => shown_state(s, &config),
        Ok(_) => Json::Null,
        Err(e) => {
            warnings.push(format!("  Warning: {STATE_FILE} has issues: {}", e.message));
            Json::Null
        }
    };
    // The stale-turn watchdog's verdicts, applied in memory only (reads are pure; `resume` and
    // `step` record them).
    let now_ms = now
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_millis() as u64);
    let (ghosts, stale) = if state.is_object() {
        crate::run::watchdog::detect(&store, &state, &config, now_ms)
    } else {
        (Vec::new(), Vec::new())
    };
    let state = if ghosts.is_empty() && stale.is_empty() {
        state
    } else {
        crate::run::watchdog::apply(&state, &ghosts, &stale, &axc_core::util::iso_timestamp(now))
    };
    let run_id = trimmed(&state["run_id"]).map(str::to_owned);
    let session = store
        .read_json(crate::run::store::SESSION)
        .ok()
        .flatten()
        .filter(Json::is_object);
    let recovery = recovery(&state, &config);
    let mut out = Map::new();
    out.insert("version".into(), json!(4));
    out.insert("protocol_mode".into(), json!("governed"));
    out.insert("template".into(), config["template"].clone());
    out.insert(
        "project_goal".into(),
        or(&config["project"]["goal"], Json::Null),
    );
    out.insert("config".into(), config.clone());
    out.insert("state".into(), state.clone());
    for k in ["provenance", "inherited_context", "repo_decisions"] {
        out.insert(k.into(), or(&state[k], Json::Null));
    }
    out.insert(
        "repo_decision_summary".into(),
        repo_decision_summary(&store, &config),
    );
    out.insert("continuity".into(), continuity(&store, &state, session));
    out.insert("recovery".into(), recovery.clone());
    out.insert("runtime_guidance".into(), json!([]));
    out.insert("next_actions".into(), next_actions(&recovery));
    out.insert(
        "connector_health".into(),
        connector_health(&store, &config, &state),
    );
    out.insert("recent_event_summary".into(), recent_events(root, now));
    out.insert("dispatch_progress".into(), json!({}));
    out.insert("human_escalation".into(), human_escalation(root, &state));
    out.insert("preemption_marker".into(), preemption_marker(&store));
    out.insert(
        "pending_intents".into(),
        pending_intents(&store, run_id.as_deref()),
    );
    out.insert(
        "continuous_session".into(),
        store
            .read_json(axc_core::read::SESSION_FILE)
            .ok()
            .flatten()
            .unwrap_or(Json::Null),
    );
    out.insert(
        "gate_action_attempt".into(),
        gate_action_attempt(&store, &state),
    );
    out.insert(
        "workflow_kit_artifacts".into(),
        workflow_artifacts(&store, &config, &state),
    );
    out.insert("dashboard_session".into(), dashboard_session(&store));
    out.insert("binding_drift".into(), binding_drift(&state, &config));
    out.insert("bundle_integrity".into(), bundle_integrity(&store, &state));
    out.insert(
        "coordinator_warnings".into(),
        coordinator_warnings(root, &state, run_id.as_deref()),
    );
    out.insert(
        "stale_turns".into(),
        stale.iter().map(|v| v.to_json()).collect(),
    );
    out.insert(
        "ghost_turns".into(),
        ghosts.iter().map(|v| v.to_json()).collect(),
    );
    Ok(Json::Object(out))
}

/// Repo-scoped decisions that outlive runs (`.agentxchain/repo-decisions.jsonl`), summarized
/// as the reference does: null when there are none.
fn repo_decision_summary(store: &Store, config: &Json) -> Json {
    let all = crate::run::repo_decisions::all(store);
    if all.is_empty() {
        return Json::Null;
    }
    let auth = |d: &Json| {
        crate::run::repo_decisions::authority(&d["role"], config)
            .map_or((Json::Null, Json::Null), |a| a.fields())
    };
    let active: Vec<Json> = all
        .iter()
        .filter(|d| d["status"] == "active")
        .map(|d| {
            let (level, source) = auth(d);
            json!({"id": d["id"], "category": d["category"], "statement": d["statement"],
                "role": d["role"], "run_id": d["run_id"],
                "overrides": or(&d["overrides"], Json::Null),
                "durability": or(&d["durability"], json!("repo")),
                "authority_level": level, "authority_source": source})
        })
        .collect();
    let overridden: Vec<Json> = all
        .iter()
        .filter(|d| d["status"] == "overridden")
        .map(|d| {
            let (level, source) = auth(d);
            json!({"id": d["id"], "overridden_by": d["overridden_by"],
                "statement": d["statement"], "overrides": or(&d["overrides"], Json::Null),
                "durability": or(&d["durability"], json!("repo")),
                "role": or(&d["role"], Json::Null),
                "authority_level": level, "authority_source": source})
        })
        .collect();
    let mut categories: Vec<String> = active
        .iter()
        .filter_map(|d| {
            d["category"]
                .as_str()
                .filter(|c| !c.is_empty())
                .map(str::to_owned)
        })
        .collect();
    categories.sort();
    categories.dedup();
    // The first of the highest levels, as the reference's reduce keeps it.
    let mut top: Option<&Json> = None;
    for d in active.iter().filter(|d| d["authority_level"].is_number()) {
        let level = d["authority_level"].as_f64();
        if top.is_none_or(|t| level > t["authority_level"].as_f64()) {
            top = Some(d);
        }
    }
    let top = top.cloned().unwrap_or(Json::Null);
    let superseding = active.iter().filter(|d| !falsy(&d["overrides"])).count();
    let with_successor = overridden
        .iter()
        .filter(|d| !falsy(&d["overridden_by"]))
        .count();
    json!({
        "total": all.len(),
        "active_count": active.len(),
        "overridden_count": overridden.len(),
        "active": active,
        "overridden": overridden,
        "operator_summary": {
            "active_categories": categories,
            "highest_active_authority_level": top["authority_level"],
            "highest_active_authority_role": top["role"],
            "highest_active_authority_source": top["authority_source"],
            "superseding_active_count": superseding,
            "overridden_with_successor_count": with_successor,
        },
    })
}
