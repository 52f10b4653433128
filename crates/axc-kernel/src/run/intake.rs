//! The intake lifecycle after `intake record` (which lives in `axc_core::intake`): a detected
//! intent is triaged (or suppressed), approved (or rejected), planned (the template's planning
//! artifacts written), started (the governed run started or continued and a turn dispatched
//! carrying the intent's contract), and resolved against the run's outcome; `status` reads it
//! all. Each operation returns the reference's result object (`{ok: true, …, exitCode: 0}`) or
//! its failure (`{ok: false, error, …, exitCode}`); the command line prints either.
//!
//! Intent and event ids name files, so only ids of the reference's shape are looked up
//! (`intent_<ms>_<4 hex>`, `evt_<ms>_<4 hex>`); any other value is "not found", never a path.
//! Every change to an intent is made under the run's lock and written whole.

use serde_json::{Map, Value as Json, json};

use super::config as cfg;
use super::store::{CONFIG, STATE, Store};
use super::{Refusal, assign, now};
use crate::intent_coverage;

pub const INTENTS: &str = ".agentxchain/intake/intents";
pub const EVENTS: &str = ".agentxchain/intake/events";
const OBSERVATIONS: &str = ".agentxchain/intake/observations";

/// The governed templates an intent may name, in the reference's order.
pub const TEMPLATES: [&str; 7] = [
    "generic",
    "api-service",
    "cli-tool",
    "library",
    "web-app",
    "full-local-cli",
    "enterprise-app",
];
const PRIORITIES: [&str; 4] = ["p0", "p1", "p2", "p3"];
/// Intents in these states ask nothing more of a turn.
const FINISHED: [&str; 6] = [
    "completed",
    "satisfied",
    "superseded",
    "suppressed",
    "failed",
    "rejected",
];
/// Each template's planning artifacts: file names (the reference's) with our own skeletons.
const PLANNING_ARTIFACTS: &str = include_str!("../../templates/planning-artifacts.json");

/// A result object or a failure object, both as the reference prints them with `--json`.
pub type Reply = Result<Json, Json>;

fn failure(code: i32, error: impl Into<String>) -> Json {
    json!({"ok": false, "error": error.into(), "exitCode": code})
}

fn refused(r: Refusal) -> Json {
    failure(r.exit_code.max(1), r.message)
}

fn shaped(id: &str, prefix: &str) -> bool {
    let Some(rest) = id.strip_prefix(prefix) else {
        return false;
    };
    let Some((ms, hex)) = rest.split_once('_') else {
        return false;
    };
    !ms.is_empty()
        && ms.len() <= 20
        && ms.bytes().all(|b| b.is_ascii_digit())
        && hex.len() == 4
        && hex.bytes().all(|b| matches!(b, b'0'..=b'9' | b'a'..=b'f'))
}

/// `intent_<ms>_<4 hex>`.
pub fn is_intent_id(id: &str) -> bool {
    shaped(id, "intent_")
}

/// `evt_<ms>_<4 hex>`.
pub fn is_event_id(id: &str) -> bool {
    shaped(id, "evt_")
}

fn intent_rel(id: &str) -> String {
    format!("{INTENTS}/{id}.json")
}

fn load(store: &Store, id: &str) -> Result<Json, Json> {
    let not_found = || failure(2, format!("intent {id} not found"));
    if !is_intent_id(id) {
        return Err(not_found());
    }
    match store.read_json(&intent_rel(id)) {
        // The file names the intent it holds; one that names another would send every write
        // (and the run's provenance) elsewhere.
        Ok(Some(intent)) if intent.is_object() && intent["intent_id"] == json!(id) => Ok(intent),
        Ok(Some(intent)) if intent.is_object() => Err(failure(
            1,
            format!(
                "{} names another intent ({}); nothing was done (restore the file)",
                intent_rel(id),
                axc_core::util::printable(&intent["intent_id"].to_string())
            ),
        )),
        Ok(Some(_)) => Err(failure(
            1,
            format!("{} is not a JSON object", intent_rel(id)),
        )),
        Ok(None) => Err(not_found()),
        Err(r) => Err(refused(r)),
    }
}

fn save(store: &Store, intent: &Json) -> Result<(), Json> {
    let id = intent["intent_id"].as_str().unwrap_or("");
    store.write_json(&intent_rel(id), intent).map_err(refused)
}

fn read_event(store: &Store, id: &str) -> Result<Json, Json> {
    let not_found = || failure(2, format!("event {id} not found"));
    if !is_event_id(id) {
        return Err(not_found());
    }
    match store.read_json(&format!("{EVENTS}/{id}.json")) {
        Ok(Some(e)) => Ok(e),
        Ok(None) => Err(not_found()),
        Err(r) => Err(refused(r)),
    }
}

fn push_history(intent: &mut Json, entry: Json) {
    if !intent["history"].is_array() {
        intent["history"] = json!([]);
    }
    if let Some(h) = intent["history"].as_array_mut() {
        h.push(entry);
    }
}

fn status_of(intent: &Json) -> &str {
    intent["status"].as_str().unwrap_or("")
}

fn lock(store: &Store) -> Result<super::store::Lock, Json> {
    store.lock().map_err(refused)
}

/// The config when it can be read (intake works without one where the reference does).
fn config(store: &Store) -> Option<Json> {
    store.read_json(CONFIG).ok().flatten().map(cfg::normalize)
}

/// What a person does next with an intent in its state.
pub fn next_action(intent: &Json) -> Json {
    let id = intent["intent_id"].as_str().unwrap_or("<intent_id>");
    let resolve = format!("agentxchain intake resolve --intent {id}");
    let act = |label: &str, summary: &str, command: Json, alternatives: Json| json!({"label": label, "summary": summary, "command": command, "alternatives": alternatives, "recovery": null, "action_required": true});
    let none = |summary: &str| json!({"label": "none", "summary": summary, "command": null, "alternatives": [], "recovery": null, "action_required": false});
    match intent["status"].as_str().unwrap_or("unknown") {
        "detected" => act(
            "triage",
            "Triage this detected intent so it can enter governed delivery.",
            json!(format!(
                "agentxchain intake triage --intent {id} --priority <p0-p3> --template <template_id> --charter \"<charter>\" --acceptance \"<criterion>\""
            )),
            json!([format!(
                "agentxchain intake triage --intent {id} --suppress --reason \"<reason>\""
            )]),
        ),
        "triaged" => act(
            "approve",
            "Approve this triaged intent for planning or reject it explicitly.",
            json!(format!("agentxchain intake approve --intent {id}")),
            json!([format!(
                "agentxchain intake triage --intent {id} --reject --reason \"<reason>\""
            )]),
        ),
        "approved" => act(
            "plan",
            "Generate planning artifacts for this approved intent.",
            json!(format!("agentxchain intake plan --intent {id}")),
            json!([]),
        ),
        "planned" => act(
            "start",
            "Start repo-local execution or hand the intent off to a coordinator workstream.",
            json!(format!("agentxchain intake start --intent {id}")),
            json!([format!(
                "agentxchain intake handoff --intent {id} --coordinator-root <path> --workstream <id>"
            )]),
        ),
        "executing" => act(
            "resolve",
            if intent["target_workstream"].is_null() {
                "Re-check the governed run outcome for this intent."
            } else {
                "Re-check the coordinator workstream outcome for this intent."
            },
            json!(resolve),
            json!([]),
        ),
        "blocked" => {
            let mut a = act(
                "recover",
                "Resolve the linked run blockage, then re-check intake resolution.",
                json!(resolve),
                json!([]),
            );
            a["recovery"] = intent["run_blocked_recovery"].clone();
            a
        }
        "completed" => none("No action required. This intent completed successfully."),
        "suppressed" => none("No action required. This intent was suppressed."),
        "rejected" => none("No action required. This intent was rejected."),
        "failed" => {
            json!({"label": "inspect", "summary": "Manual inspection required. This intent is in a reserved failed state.", "command": null, "alternatives": [], "recovery": "Inspect the linked intent and run artifacts manually before continuing.", "action_required": true})
        }
        _ => {
            json!({"label": "inspect", "summary": "Manual inspection required. The intent state is not recognized by the current intake surface.", "command": null, "alternatives": [], "recovery": null, "action_required": true})
        }
    }
}

/// Every JSON file of `dir` in name order (temporary files and unreadable ones skipped, as
/// the reference skips them).
fn read_all(store: &Store, dir: &str) -> Vec<Json> {
    let Ok(path) = store.path(dir) else {
        return Vec::new();
    };
    let Ok(rd) = std::fs::read_dir(path) else {
        return Vec::new();
    };
    let mut names: Vec<String> = rd
        .flatten()
        .filter_map(|e| e.file_name().into_string().ok())
        .filter(|n| n.ends_with(".json") && !n.starts_with(".tmp-"))
        .collect();
    names.sort();
    names
        .iter()
        .filter_map(|n| store.read_json(&format!("{dir}/{n}")).ok().flatten())
        .filter(Json::is_object)
        .collect()
}

/// Intents newest first (by `updated_at`, else `created_at`; a stable sort, as the
/// reference's).
fn newest_first(intents: &mut [Json]) {
    let when = |i: &Json| {
        i["updated_at"]
            .as_str()
            .or(i["created_at"].as_str())
            .unwrap_or("")
            .to_owned()
    };
    intents.sort_by_key(|i| std::cmp::Reverse(when(i)));
}

/// `intake status [--intent id]`: one intent with its event and next action, or the summary.
/// A read: nothing is written (the reference refreshes a `loop-state.json` cache here).
pub fn status(store: &Store, intent_id: Option<&str>) -> Reply {
    if let Some(id) = intent_id {
        let intent = load(store, id)?;
        let event = intent["event_id"]
            .as_str()
            .and_then(|e| read_event(store, e).ok())
            .unwrap_or(Json::Null);
        let next = next_action(&intent);
        return Ok(
            json!({"ok": true, "intent": intent, "event": event, "next_action": next, "exitCode": 0}),
        );
    }
    let events = read_all(store, EVENTS);
    let mut intents = read_all(store, INTENTS);
    let mut by_status = Map::new();
    for i in &intents {
        let s = status_of(i).to_owned();
        let n = by_status.get(&s).and_then(Json::as_u64).unwrap_or(0);
        by_status.insert(s, json!(n + 1));
    }
    newest_first(&mut intents);
    let list: Vec<Json> = intents
        .iter()
        .map(|i| {
            json!({
                "intent_id": i["intent_id"], "priority": i["priority"], "template": i["template"],
                "status": i["status"], "updated_at": i["updated_at"], "next_action": next_action(i),
            })
        })
        .collect();
    Ok(json!({
        "ok": true,
        "summary": {
            "schema_version": "1.0",
            "last_updated_at": now(),
            "total_events": events.len(),
            "total_intents": intents.len(),
            "by_status": by_status,
            "intents": list,
        },
        "exitCode": 0,
    }))
}

/// What `intake triage` was given.
#[derive(Clone, Debug, Default)]
pub struct Triage {
    pub suppress: bool,
    pub reject: bool,
    pub reason: Option<String>,
    pub priority: Option<String>,
    pub template: Option<String>,
    pub charter: Option<String>,
    pub acceptance: Vec<String>,
    pub phase_scope: Option<String>,
}

/// The reference's triage field checks, every problem named.
fn triage_errors(t: &Triage, phase_scope: Option<&str>, config: Option<&Json>) -> Vec<String> {
    let mut errors = Vec::new();
    if !t
        .priority
        .as_deref()
        .is_some_and(|p| PRIORITIES.contains(&p))
    {
        errors.push(format!(
            "priority must be one of: {}",
            PRIORITIES.join(", ")
        ));
    }
    if !t
        .template
        .as_deref()
        .is_some_and(|p| TEMPLATES.contains(&p))
    {
        errors.push(format!("template must be one of: {}", TEMPLATES.join(", ")));
    }
    if t.charter.as_deref().is_none_or(|c| c.trim().is_empty()) {
        errors.push("charter must be a non-empty string".to_owned());
    }
    if t.acceptance.is_empty() {
        errors.push("acceptance_contract must be a non-empty array".to_owned());
    }
    if let Some(scope) = phase_scope {
        if scope.trim().is_empty() {
            errors.push("phase_scope must be a non-empty string when provided".to_owned());
        } else if let Some(c) = config {
            let phases = intent_coverage::phase_order(c);
            if !phases.is_empty() && !phases.iter().any(|p| p == scope.trim()) {
                errors.push(format!("phase_scope must be one of: {}", phases.join(", ")));
            }
        }
    }
    errors
}

/// `intake triage`: detected → triaged (or → suppressed), triaged → rejected.
pub fn triage(store: &Store, id: &str, t: &Triage) -> Reply {
    let _lock = lock(store)?;
    let mut intent = load(store, id)?;
    let at = now();
    let status = status_of(&intent).to_owned();
    for (asked, from, to, what) in [
        (t.suppress, "detected", "suppressed", "suppress"),
        (t.reject, "triaged", "rejected", "reject"),
    ] {
        if !asked {
            continue;
        }
        if status != from {
            return Err(failure(
                1,
                format!("cannot {what} from status \"{status}\" (must be {from})"),
            ));
        }
        let Some(reason) = t.reason.as_deref().filter(|r| !r.is_empty()) else {
            return Err(failure(1, format!("{what} requires --reason")));
        };
        intent["status"] = json!(to);
        intent["updated_at"] = json!(at);
        push_history(
            &mut intent,
            json!({"from": from, "to": to, "at": at, "reason": reason}),
        );
        save(store, &intent)?;
        return Ok(json!({"ok": true, "intent": intent, "exitCode": 0}));
    }
    if status != "detected" {
        return Err(failure(
            1,
            format!("cannot triage from status \"{status}\" (must be detected)"),
        ));
    }
    let config = config(store);
    let scope = t.phase_scope.clone().filter(|s| !s.is_empty()).or_else(|| {
        intent_coverage::intent_phase_scope(
            &json!({"charter": t.charter, "acceptance_contract": t.acceptance}),
            config.as_ref(),
        )
    });
    let errors = triage_errors(t, scope.as_deref(), config.as_ref());
    if !errors.is_empty() {
        return Err(failure(1, errors.join("; ")));
    }
    intent["status"] = json!("triaged");
    intent["priority"] = json!(t.priority);
    intent["template"] = json!(t.template);
    intent["charter"] = json!(t.charter);
    intent["acceptance_contract"] = json!(t.acceptance);
    intent["phase_scope"] = json!(scope);
    intent["updated_at"] = json!(at);
    push_history(
        &mut intent,
        json!({"from": "detected", "to": "triaged", "at": at, "reason": "triage completed"}),
    );
    save(store, &intent)?;
    Ok(json!({"ok": true, "intent": intent, "exitCode": 0}))
}

/// A text's scope tokens: milestone, bug and MW references, `.planning/` and `cli/` paths, and
/// the significant words (longer than three letters, not stop words or template boilerplate).
fn fingerprint(text: &str) -> std::collections::BTreeSet<String> {
    const STOP: &[&str] = &[
        "the",
        "a",
        "an",
        "and",
        "or",
        "but",
        "in",
        "on",
        "at",
        "to",
        "for",
        "of",
        "with",
        "by",
        "from",
        "is",
        "are",
        "was",
        "were",
        "be",
        "been",
        "being",
        "have",
        "has",
        "had",
        "do",
        "does",
        "did",
        "will",
        "would",
        "could",
        "should",
        "may",
        "might",
        "must",
        "shall",
        "can",
        "that",
        "this",
        "these",
        "those",
        "it",
        "its",
        "they",
        "them",
        "their",
        "not",
        "no",
        "nor",
        "only",
        "also",
        "just",
        "than",
        "then",
        "each",
        "every",
        "all",
        "any",
        "both",
        "such",
        "as",
        "more",
        "vision",
        "goal",
        "addressed",
        "section",
    ];
    let mut out = std::collections::BTreeSet::new();
    for pat in [
        r"(?i)\bM\d+\b",
        r"(?i)\bBUG-\d+\b",
        r"(?:cli/(?:src|test|bin)/\S+|\.planning/\S+)",
    ] {
        if let Ok(re) = regex::Regex::new(pat) {
            out.extend(re.find_iter(text).map(|m| m.as_str().to_lowercase()));
        }
    }
    if regex::Regex::new(r"(?i)\bMW\b").is_ok_and(|re| re.is_match(text)) {
        out.insert("mw".to_owned());
    }
    let cleaned: String = text
        .to_lowercase()
        .chars()
        .map(|c| {
            if c.is_ascii_lowercase() || c.is_ascii_digit() || c.is_whitespace() || c == '-' {
                c
            } else {
                ' '
            }
        })
        .collect();
    out.extend(
        cleaned
            .split_whitespace()
            .filter(|w| w.len() > 3 && !STOP.contains(w) && !w.bytes().all(|b| b.is_ascii_digit()))
            .map(str::to_owned),
    );
    out
}

fn jaccard(a: &std::collections::BTreeSet<String>, b: &std::collections::BTreeSet<String>) -> f64 {
    let both = a.intersection(b).count();
    let union = a.len() + b.len() - both;
    if union == 0 {
        0.0
    } else {
        both as f64 / union as f64
    }
}

fn contract_text(intent: &Json) -> String {
    let items: Vec<&str> = intent["acceptance_contract"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(Json::as_str)
        .collect();
    format!(
        "{} {}",
        intent["charter"].as_str().unwrap_or(""),
        items.join(" ")
    )
}

/// The approval's scope-overlap guard: the candidate's charter and contract against the active
/// run's charter and the ten most recently completed intents (Jaccard of their fingerprints).
fn scope_overlap(store: &Store, intent: &Json, threshold: f64) -> Json {
    let candidate = fingerprint(&contract_text(intent));
    if candidate.len() < 3 {
        return json!({"overlapping": false, "matches": [], "max_score": 0});
    }
    let mut matches = Vec::new();
    if let Ok(Some(state)) = store.read_json(STATE)
        && state["status"] == "active"
    {
        let charter = state["active_turns"]
            .as_object()
            .into_iter()
            .flatten()
            .find_map(|(_, t)| t["intake_context"]["charter"].as_str())
            .or(state["provenance"]["trigger_reason"].as_str());
        if let Some(c) = charter {
            let score = jaccard(&candidate, &fingerprint(c));
            if score > 0.0 {
                matches.push(json!({"source": "active_run", "charter": c, "score": score}));
            }
        }
    }
    let mut done: Vec<Json> = read_all(store, INTENTS)
        .into_iter()
        .filter(|i| matches!(status_of(i), "completed" | "satisfied"))
        .collect();
    newest_first(&mut done);
    for i in done.iter().take(10) {
        let score = jaccard(&candidate, &fingerprint(&contract_text(i)));
        if score > 0.0 {
            matches.push(json!({
                "source": format!("intent:{}", i["intent_id"].as_str().unwrap_or("")),
                "charter": i["charter"].as_str().unwrap_or(""),
                "score": score,
            }));
        }
    }
    let max = matches
        .iter()
        .filter_map(|m| m["score"].as_f64())
        .fold(0.0_f64, f64::max);
    json!({"overlapping": max >= threshold, "matches": matches, "max_score": max})
}

fn template_artifacts(template: &str) -> Result<Vec<(String, String)>, String> {
    if !TEMPLATES.contains(&template) {
        return Err(format!(
            "Unknown template \"{template}\". Valid templates: {}",
            TEMPLATES.join(", ")
        ));
    }
    let all: Json = serde_json::from_str(PLANNING_ARTIFACTS).map_err(|e| e.to_string())?;
    Ok(all[template]
        .as_array()
        .into_iter()
        .flatten()
        .map(|a| {
            (
                a["filename"].as_str().unwrap_or("").to_owned(),
                a["content"].as_str().unwrap_or("").to_owned(),
            )
        })
        .collect())
}

/// `intake approve`: triaged (or blocked) → approved, unless its scope overlaps work under way
/// or done (exit 3, `--force-scope` to approve anyway); an intent whose planning artifacts
/// already exist for the run that approves it is superseded instead.
pub fn approve(
    store: &Store,
    id: &str,
    approver: Option<&str>,
    reason: Option<&str>,
    force_scope: bool,
) -> Reply {
    let _lock = lock(store)?;
    let mut intent = load(store, id)?;
    let previous = status_of(&intent).to_owned();
    if previous != "triaged" && previous != "blocked" {
        return Err(failure(
            1,
            format!("cannot approve from status \"{previous}\" (must be triaged or blocked)"),
        ));
    }
    if !force_scope && !intent["charter"].as_str().unwrap_or("").is_empty() {
        let overlap = scope_overlap(store, &intent, 0.4);
        if overlap["overlapping"] == true {
            return Err(
                json!({"ok": false, "error": "scope_overlap_detected", "overlap": overlap, "exitCode": 3}),
            );
        }
    }
    let approver = approver.filter(|a| !a.is_empty()).unwrap_or("operator");
    let reason = reason
        .filter(|r| !r.is_empty())
        .map(str::to_owned)
        .unwrap_or_else(|| {
            if previous == "blocked" {
                "re-approved after block resolution".into()
            } else {
                "approved for planning".into()
            }
        });
    let at = now();
    if intent["approved_run_id"].is_null() {
        match store.read_json(STATE) {
            Ok(Some(state)) => match state["run_id"].as_str() {
                Some(run) => intent["approved_run_id"] = json!(run),
                None => intent["cross_run_durable"] = json!(true),
            },
            Ok(None) => intent["cross_run_durable"] = json!(true),
            Err(_) => {}
        }
    }
    intent["status"] = json!("approved");
    intent["approved_by"] = json!(approver);
    intent["updated_at"] = json!(at);
    if !intent["approved_run_id"].is_null() && phantom(store, &intent) {
        let why = "planning artifacts for this intent already exist on disk; intent superseded during approval";
        intent["status"] = json!("superseded");
        intent["archived_reason"] = json!(why);
        push_history(
            &mut intent,
            json!({"from": previous, "to": "superseded", "at": at, "reason": why, "approver": approver}),
        );
        save(store, &intent)?;
        return Ok(json!({"ok": true, "intent": intent, "superseded": true, "exitCode": 0}));
    }
    push_history(
        &mut intent,
        json!({"from": previous, "to": "approved", "at": at, "reason": reason, "approver": approver}),
    );
    save(store, &intent)?;
    Ok(json!({"ok": true, "intent": intent, "exitCode": 0}))
}

/// An approved intent whose planning artifacts (recorded or its template's) exist already.
fn phantom(store: &Store, intent: &Json) -> bool {
    let mut paths: Vec<String> = intent["planning_artifacts"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(Json::as_str)
        .map(|p| p.trim().to_owned())
        .filter(|p| !p.is_empty())
        .collect();
    if let Some(t) = intent["template"].as_str()
        && let Ok(arts) = template_artifacts(t)
    {
        paths.extend(arts.into_iter().map(|(f, _)| format!(".planning/{f}")));
    }
    paths.iter().any(|p| store.exists(p))
}

/// `intake plan`: approved → planned, the template's planning artifacts written under
/// `.planning/` (refused when one exists, unless `force`).
pub fn plan(store: &Store, id: &str, project_name: Option<&str>, force: bool) -> Reply {
    let _lock = lock(store)?;
    let mut intent = load(store, id)?;
    let status = status_of(&intent).to_owned();
    if status != "approved" {
        return Err(failure(
            1,
            format!("cannot plan from status \"{status}\" (must be approved)"),
        ));
    }
    let template = intent["template"].as_str().unwrap_or("").to_owned();
    let artifacts = template_artifacts(&template).map_err(|e| failure(2, e))?;
    let name = project_name
        .map(str::to_owned)
        .or_else(|| {
            store
                .root()
                .file_name()
                .map(|n| n.to_string_lossy().into_owned())
        })
        .unwrap_or_default();
    let rel = |f: &str| format!(".planning/{f}");
    // Every artifact's place must be writable before any is written: one behind a link out of
    // the project refuses the plan whole.
    for (f, _) in &artifacts {
        store.path(&rel(f)).map_err(refused)?;
    }
    if !force {
        // A link there (wherever it leads) is an existing artifact too.
        let conflicts: Vec<String> = artifacts
            .iter()
            .map(|(f, _)| rel(f))
            .filter(|p| std::fs::symlink_metadata(store.root().join(p)).is_ok())
            .collect();
        if !conflicts.is_empty() {
            return Err(
                json!({"ok": false, "error": "existing planning artifacts would be overwritten", "conflicts": conflicts, "exitCode": 1}),
            );
        }
    }
    let mut generated = Vec::new();
    for (f, content) in &artifacts {
        let p = store.path(&rel(f)).map_err(refused)?;
        if let Some(dir) = p.parent() {
            std::fs::create_dir_all(dir).map_err(|e| failure(1, e.to_string()))?;
        }
        store
            .write_text(&rel(f), &content.replace("{{project_name}}", &name))
            .map_err(refused)?;
        generated.push(rel(f));
    }
    let at = now();
    intent["status"] = json!("planned");
    intent["planning_artifacts"] = json!(generated);
    intent["updated_at"] = json!(at);
    push_history(
        &mut intent,
        json!({
            "from": "approved", "to": "planned", "at": at,
            "reason": format!("generated {} planning artifact(s) from template \"{template}\"", generated.len()),
            "artifacts": generated,
        }),
    );
    save(store, &intent)?;
    Ok(
        json!({"ok": true, "intent": intent, "artifacts_generated": generated, "artifacts_skipped": [], "exitCode": 0}),
    )
}

/// The role an intake turn goes to: `--role`, the intent's preferred role, the phase's entry
/// role, else the first role.
fn intake_role(
    role: Option<&str>,
    intent: &Json,
    state: &Json,
    config: &Json,
) -> Result<String, String> {
    let roles: Vec<&String> = config["roles"]
        .as_object()
        .map(|m| m.keys().collect())
        .unwrap_or_default();
    let available = roles
        .iter()
        .map(|r| r.as_str())
        .collect::<Vec<_>>()
        .join(", ");
    if let Some(r) = role {
        if config["roles"].get(r).is_none() {
            return Err(format!("unknown role: \"{r}\". Available: {available}"));
        }
        return Ok(r.to_owned());
    }
    if let Some(p) = intent["preferred_role"]
        .as_str()
        .map(str::trim)
        .filter(|p| !p.is_empty())
    {
        if config["roles"].get(p).is_none() {
            return Err(format!(
                "unknown preferred_role on intent: \"{p}\". Available: {available}"
            ));
        }
        return Ok(p.to_owned());
    }
    if let Some(e) = cfg::entry_role(config, state["phase"].as_str().unwrap_or("")) {
        return Ok(e.to_owned());
    }
    roles
        .first()
        .map(|r| r.to_string())
        .ok_or_else(|| "no roles defined in project config".to_owned())
}

/// `intake start`: planned → executing. The run is started when idle (its provenance names
/// the intent), a turn of the intake role assigned and dispatched carrying the intent's
/// contract (`intake_context`).
pub fn start(store: &Store, id: &str, role: Option<&str>) -> Reply {
    start_with(store, id, role, false)
}

/// [`start`]; `restart_completed` (`--restart-completed`) starts a fresh run over a completed
/// one instead of refusing.
pub fn start_with(store: &Store, id: &str, role: Option<&str>, restart_completed: bool) -> Reply {
    let _lock = lock(store)?;
    let mut intent = load(store, id)?;
    let status = status_of(&intent).to_owned();
    if status != "planned" {
        return Err(failure(
            1,
            format!("cannot start from status \"{status}\" (must be planned)"),
        ));
    }
    let missing: Vec<String> = intent["planning_artifacts"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(Json::as_str)
        .filter(|p| !store.exists(p))
        .map(str::to_owned)
        .collect();
    if !missing.is_empty() {
        return Err(
            json!({"ok": false, "error": "recorded planning artifacts are missing on disk", "missing": missing, "exitCode": 1}),
        );
    }
    let event = read_event(store, intent["event_id"].as_str().unwrap_or(""))?;
    let ctx = json!({
        "intent_id": intent["intent_id"], "event_id": intent["event_id"],
        "source": event["source"].as_str(), "category": event["category"].as_str(),
        "charter": intent["charter"].as_str(),
        "acceptance_contract": if intent["acceptance_contract"].is_array() { intent["acceptance_contract"].clone() } else { json!([]) },
        "phase_scope": intent["phase_scope"].as_str().filter(|s| !s.is_empty()),
    });
    // A governed project's config (its roles); the reference's texts when it is not.
    let config = match store.read_json(CONFIG) {
        Ok(Some(raw)) if raw["roles"].is_object() => cfg::normalize(raw),
        Ok(Some(_)) => return Err(failure(2, "intake start requires a governed project")),
        _ => return Err(failure(2, "agentxchain.json not found or invalid")),
    };
    let mut state = match store.read_json(STATE) {
        Ok(Some(s)) => s,
        Ok(None) => json!({"status": "idle", "run_id": null}),
        Err(_) => return Err(failure(2, "Failed to parse governed state.json")),
    };
    let active: Vec<String> = state["active_turns"]
        .as_object()
        .map(|m| m.keys().cloned().collect())
        .unwrap_or_default();
    if !active.is_empty() {
        return Err(failure(
            1,
            format!(
                "cannot start: active turn(s) already exist: {}",
                active.join(", ")
            ),
        ));
    }
    match state["status"].as_str().unwrap_or("") {
        "blocked" => {
            let why = state["blocked_reason"]["recovery"]["detail"]
                .as_str()
                .or(state["blocked_on"].as_str())
                .unwrap_or("unknown");
            return Err(failure(1, format!("cannot start: run is blocked ({why})")));
        }
        "completed" if restart_completed => {}
        "completed" => {
            return Err(failure(
                1,
                format!(
                    "cannot start: governed run is already completed. Re-run with \"agentxchain intake start --intent {} --restart-completed\" to initialize a fresh governed run.",
                    intent["intent_id"].as_str().unwrap_or(id)
                ),
            ));
        }
        "paused" => {
            return Err(failure(
                1,
                "cannot start: run is paused (awaiting approval). Resolve the blocking gate before starting a new intake turn.",
            ));
        }
        _ => {}
    }
    if let Some(to) = state["pending_phase_transition"]
        .as_object()
        .map(|p| p.get("to").cloned().unwrap_or_default())
    {
        return Err(failure(
            1,
            format!(
                "cannot start: pending phase transition to \"{}\"",
                to.as_str().unwrap_or("")
            ),
        ));
    }
    if !state["pending_run_completion"].is_null() {
        return Err(failure(1, "cannot start: pending run completion approval"));
    }
    // A fresh run over a completed one starts at the first phase: its role is that phase's.
    if state["status"] == "completed" {
        state = assign::fresh_idle(&state, &config);
    }
    // The role and a clean baseline are checked before a run is started, so a start that
    // cannot dispatch leaves no run behind.
    let role = intake_role(role, &intent, &state, &config).map_err(|e| failure(1, e))?;
    if let Some(e) = assign::clean_baseline_error(store, cfg::write_authority(&config, &role)) {
        return Err(failure(1, format!("turn assignment failed: {e}")));
    }
    if state["status"] == "idle" && state["run_id"].is_null() {
        let provenance = json!({
            "trigger": "intake", "parent_run_id": null,
            "trigger_reason": intent["charter"].as_str(),
            "intake_intent_id": intent["intent_id"], "created_by": "operator",
        });
        state = assign::start_run(store, &config, &state, provenance)
            .map_err(|r| failure(1, format!("run initialization failed: {}", r.message)))?;
    }
    let (state, turn) = assign::assign_and_dispatch(store, &config, &state, &role, Some(&ctx))
        .map_err(|e| failure(1, format!("turn assignment failed: {e}")))?;
    let at = now();
    let run_id = state["run_id"].clone();
    let turn_id = turn["turn_id"].clone();
    intent["status"] = json!("executing");
    intent["target_run"] = run_id.clone();
    intent["target_turn"] = turn_id.clone();
    intent["started_at"] = json!(at);
    intent["updated_at"] = json!(at);
    push_history(
        &mut intent,
        json!({"from": "planned", "to": "executing", "at": at, "run_id": run_id, "turn_id": turn_id, "role": role, "reason": "governed execution started"}),
    );
    save(store, &intent)?;
    Ok(json!({
        "ok": true, "intent": intent, "run_id": run_id, "turn_id": turn_id, "role": role,
        "dispatch_dir": super::dispatch::bundle_rel(turn_id.as_str().unwrap_or("")),
        "exitCode": 0,
    }))
}

fn observation_dir(store: &Store, id: &str) {
    if let Ok(p) = store.path(&format!("{OBSERVATIONS}/{id}")) {
        let _ = std::fs::create_dir_all(p);
    }
}

/// `intake resolve [--outcome completed]`: an executing (or blocked) intent follows its run —
/// blocked when the run is, completed when it is; `--outcome completed` completes it now.
pub fn resolve(store: &Store, id: &str, outcome: Option<&str>) -> Reply {
    let _lock = lock(store)?;
    let mut intent = load(store, id)?;
    let previous = status_of(&intent).to_owned();
    let reply = |intent: &Json, new: &str, run: &str, no_change: bool| json!({"ok": true, "intent": intent, "previous_status": previous, "new_status": new, "run_outcome": run, "no_change": no_change, "exitCode": 0});
    if previous == "completed" {
        return Ok(reply(&intent, "completed", "completed", true));
    }
    if previous != "executing" && previous != "blocked" {
        return Err(failure(
            1,
            format!("cannot resolve from status \"{previous}\" (must be executing or blocked)"),
        ));
    }
    let at = now();
    match outcome {
        Some("completed") if previous == "executing" => {
            intent["status"] = json!("completed");
            intent["completed_at"] = json!(at);
            intent["updated_at"] = json!(at);
            push_history(
                &mut intent,
                json!({"from": previous, "to": "completed", "at": at, "reason": "operator-resolved: intent marked completed via intake resolve --outcome completed"}),
            );
            observation_dir(store, id);
            save(store, &intent)?;
            return Ok(reply(&intent, "completed", "completed", false));
        }
        Some(o) if o != "completed" => {
            return Err(failure(
                1,
                format!("--outcome must be \"completed\" (got \"{o}\")"),
            ));
        }
        _ => {}
    }
    if !intent["target_workstream"].is_null() {
        return resolve_by_coordinator(store, intent, &previous, &at);
    }
    let Some(target) = intent["target_run"].as_str().map(str::to_owned) else {
        return Err(failure(
            1,
            format!("intent {id} has no linked run (target_run is null)"),
        ));
    };
    let state = match store.read_json(STATE) {
        Ok(Some(s)) => s,
        Ok(None) => {
            return Err(failure(
                1,
                "governed state not found at .agentxchain/state.json",
            ));
        }
        Err(_) => return Err(failure(1, "failed to parse governed state.json")),
    };
    if state["run_id"].as_str() != Some(target.as_str()) {
        return Err(failure(
            1,
            format!(
                "run_id mismatch: intent targets {target} but governed state has {}",
                state["run_id"].as_str().unwrap_or("null")
            ),
        ));
    }
    match state["status"].as_str().unwrap_or("") {
        "idle" => Err(failure(
            1,
            "governed run is idle — state may have been reset after intent start",
        )),
        "failed" => Err(failure(
            1,
            "governed run has reserved status \"failed\" which is not emitted by current governed writers. Manual inspection required. See DEC-RUN-STATUS-001.",
        )),
        "blocked" => {
            intent["status"] = json!("blocked");
            intent["run_blocked_on"] = state["blocked_on"].clone();
            intent["run_blocked_reason"] = state["blocked_reason"]["category"].clone();
            intent["run_blocked_recovery"] =
                state["blocked_reason"]["recovery"]["recovery_action"].clone();
            intent["updated_at"] = json!(at);
            push_history(
                &mut intent,
                json!({"from": previous, "to": "blocked", "at": at, "reason": format!("governed run {target} reached status blocked"), "run_id": target, "run_status": "blocked"}),
            );
            save(store, &intent)?;
            Ok(reply(&intent, "blocked", "blocked", false))
        }
        "completed" => {
            intent["status"] = json!("completed");
            intent["run_completed_at"] = if state["completed_at"].is_null() {
                json!(at)
            } else {
                state["completed_at"].clone()
            };
            intent["run_final_turn"] = state["last_completed_turn_id"].clone();
            intent["updated_at"] = json!(at);
            push_history(
                &mut intent,
                json!({"from": previous, "to": "completed", "at": at, "reason": format!("governed run {target} reached status completed"), "run_id": target, "run_status": "completed"}),
            );
            observation_dir(store, id);
            save(store, &intent)?;
            Ok(reply(&intent, "completed", "completed", false))
        }
        other => Ok(reply(&intent.clone(), &previous, other, true)),
    }
}

const MULTI_CONFIG: &str = "agentxchain-multi.json";
const MULTI_STATE: &str = ".agentxchain/multirepo/state.json";
const MULTI_BARRIERS: &str = ".agentxchain/multirepo/barriers.json";
const HANDOFFS: &str = ".agentxchain/multirepo/handoffs";

/// `intake handoff`: a planned intent goes to a coordinator workstream this repository is a
/// member of, while the coordinator's run is active: the handoff file is written under the
/// coordinator's `.agentxchain/multirepo/handoffs/` and the intent is executing,
/// coordinator-managed. The coordinator's files are read and written through its own walls.
pub fn handoff(
    store: &Store,
    id: &str,
    coordinator_root: &std::path::Path,
    workstream: &str,
) -> Reply {
    let _lock = lock(store)?;
    let mut intent = load(store, id)?;
    if status_of(&intent) != "planned" {
        return Err(failure(
            1,
            format!(
                "intent must be in planned state for handoff (current: {})",
                status_of(&intent)
            ),
        ));
    }
    let root = axc_core::util::resolve_path(coordinator_root);
    let coord = Store::new(&root);
    let no_config = || {
        failure(
            1,
            "coordinator root does not contain agentxchain-multi.json",
        )
    };
    let multi = match coord.read_json(MULTI_CONFIG) {
        Ok(Some(c))
            if crate::coordinator::validate_config(&c).is_empty()
                && crate::coordinator::repo_errors(&c, &root).is_empty() =>
        {
            c
        }
        _ => return Err(no_config()),
    };
    let Some(ws) = multi["workstreams"][workstream].as_object() else {
        return Err(failure(
            1,
            format!("workstream {workstream} not found in coordinator config"),
        ));
    };
    let Some(project) = config(store) else {
        return Err(failure(2, "agentxchain.json not found or invalid"));
    };
    let Some(repo) = project["project"]["id"].as_str().filter(|r| !r.is_empty()) else {
        return Err(failure(
            2,
            "governed project id is missing from agentxchain.json",
        ));
    };
    let member = ws["repos"]
        .as_array()
        .is_some_and(|r| r.iter().any(|x| x == repo));
    if !member {
        return Err(failure(
            1,
            format!("repo {repo} is not a member of workstream {workstream}"),
        ));
    }
    let state = coord
        .read_json(MULTI_STATE)
        .ok()
        .flatten()
        .filter(Json::is_object)
        .unwrap_or(Json::Null);
    if state["status"] != "active" {
        let status = match or_null(&state["status"]) {
            Json::Null => "not_initialized".to_owned(),
            Json::String(s) => s,
            other => other.to_string(),
        };
        return Err(failure(
            1,
            format!("coordinator run is not active (status: {status})"),
        ));
    }
    let event_id = intent["event_id"].as_str().unwrap_or("").to_owned();
    let event = read_event(store, &event_id)?;
    let at = now();
    let super_run = state["super_run_id"].clone();
    let event_ref = format!("{EVENTS}/{event_id}.json");
    let record = json!({
        "schema_version": "1.0",
        "super_run_id": super_run,
        "intent_id": id,
        "source_repo": repo,
        "source_event_id": event_id,
        "source_signal_source": or_null(&event["source"]),
        "source_signal_category": or_null(&event["category"]),
        "source_event_ref": event_ref,
        "workstream_id": workstream,
        "charter": intent["charter"],
        "acceptance_contract": if intent["acceptance_contract"].is_array() { intent["acceptance_contract"].clone() } else { json!([]) },
        "evidence_refs": [event_ref],
        "handed_off_at": at,
        "handed_off_by": "operator",
    });
    let rel = format!("{HANDOFFS}/{id}.json");
    if let Ok(dir) = coord.path(HANDOFFS) {
        let _ = std::fs::create_dir_all(dir);
    }
    coord.write_json(&rel, &record).map_err(refused)?;
    let root_text = root.to_string_lossy().into_owned();
    intent["status"] = json!("executing");
    intent["target_run"] = Json::Null;
    intent["target_turn"] = Json::Null;
    intent["target_workstream"] = json!({"coordinator_root": root_text, "workstream_id": workstream, "super_run_id": super_run});
    intent["started_at"] = json!(at);
    intent["updated_at"] = json!(at);
    push_history(
        &mut intent,
        json!({"from": "planned", "to": "executing", "at": at, "super_run_id": super_run, "workstream_id": workstream, "coordinator_root": root_text, "reason": format!("handed off to coordinator workstream \"{workstream}\"")}),
    );
    save(store, &intent)?;
    Ok(json!({
        "ok": true,
        "intent": intent,
        "handoff_path": root.join(rel).to_string_lossy(),
        "super_run_id": super_run,
        "exitCode": 0,
    }))
}

/// A JS `value || null` of a field.
fn or_null(v: &Json) -> Json {
    match v {
        Json::Null | Json::Bool(false) => Json::Null,
        Json::String(s) if s.is_empty() => Json::Null,
        Json::Number(n) if n.as_f64() == Some(0.0) => Json::Null,
        other => other.clone(),
    }
}

/// `intake resolve` of a handed-off intent: it follows the coordinator's run and its
/// workstream's completion barrier.
fn resolve_by_coordinator(store: &Store, mut intent: Json, previous: &str, at: &str) -> Reply {
    let tw = &intent["target_workstream"];
    let text = |v: &Json| v.as_str().filter(|s| !s.is_empty()).map(str::to_owned);
    let (Some(root), Some(ws), Some(super_run)) = (
        text(&tw["coordinator_root"]),
        text(&tw["workstream_id"]),
        text(&tw["super_run_id"]),
    ) else {
        return Err(failure(1, "intent target_workstream is incomplete"));
    };
    let coord = Store::new(&root);
    let Some(state) = coord
        .read_json(MULTI_STATE)
        .ok()
        .flatten()
        .filter(Json::is_object)
    else {
        return Err(failure(1, format!("coordinator state not found at {root}")));
    };
    if state["super_run_id"].as_str() != Some(super_run.as_str()) {
        return Err(failure(
            1,
            format!(
                "super_run_id mismatch: intent targets {super_run} but coordinator state has {}",
                state["super_run_id"].as_str().unwrap_or("undefined")
            ),
        ));
    }
    let barriers = coord
        .read_json(MULTI_BARRIERS)
        .ok()
        .flatten()
        .unwrap_or(Json::Null);
    let barrier = &barriers[format!("{ws}_completion")];
    if !barrier.is_object() {
        return Err(failure(
            1,
            format!("completion barrier not found for workstream {ws}"),
        ));
    }
    let run_status = state["status"].clone();
    let id = intent["intent_id"].as_str().unwrap_or("").to_owned();
    let reply = |intent: &Json, new: &str, no_change: bool| json!({"ok": true, "intent": intent, "previous_status": previous, "new_status": new, "run_outcome": run_status, "no_change": no_change, "exitCode": 0});
    let entry = |to: &str, reason: String| json!({"from": previous, "to": to, "at": at, "reason": reason, "super_run_id": super_run, "run_status": run_status});
    if barrier["status"] == "satisfied" {
        intent["status"] = json!("completed");
        intent["run_completed_at"] = json!(at);
        intent["run_final_turn"] = Json::Null;
        intent["updated_at"] = json!(at);
        push_history(
            &mut intent,
            entry(
                "completed",
                format!("coordinator workstream {ws} satisfied completion barrier"),
            ),
        );
        observation_dir(store, &id);
        save(store, &intent)?;
        return Ok(reply(&intent, "completed", false));
    }
    match state["status"].as_str() {
        Some("blocked") => {
            intent["status"] = json!("blocked");
            intent["run_blocked_on"] = json!(format!("coordinator:{ws}"));
            intent["run_blocked_reason"] = match or_null(&state["blocked_reason"]) {
                Json::Null => json!("coordinator_blocked"),
                reason => reason,
            };
            intent["run_blocked_recovery"] =
                json!("resolve coordinator blocked state, then rerun agentxchain intake resolve");
            intent["updated_at"] = json!(at);
            push_history(
                &mut intent,
                entry(
                    "blocked",
                    format!("coordinator run {super_run} is blocked for workstream {ws}"),
                ),
            );
            save(store, &intent)?;
            Ok(reply(&intent, "blocked", false))
        }
        Some("failed") => Err(failure(
            1,
            format!(
                "coordinator run {super_run} has reserved status \"failed\" which is not emitted by current governed writers. Manual inspection required. See DEC-RUN-STATUS-001."
            ),
        )),
        Some("completed") => {
            intent["status"] = json!("blocked");
            intent["run_blocked_on"] =
                json!(format!("coordinator:completed_without_workstream:{ws}"));
            intent["run_blocked_reason"] = json!("coordinator_completed_without_workstream");
            intent["run_blocked_recovery"] = json!(format!(
                "Coordinator run {super_run} completed without satisfying workstream {ws}. Re-approve the intent and start a new run."
            ));
            intent["updated_at"] = json!(at);
            push_history(
                &mut intent,
                entry(
                    "blocked",
                    format!(
                        "coordinator run {super_run} completed without satisfying workstream {ws}"
                    ),
                ),
            );
            save(store, &intent)?;
            Ok(reply(&intent, "blocked", false))
        }
        _ => Ok(reply(&intent.clone(), previous, true)),
    }
}

/// The intake context a turn carries, reconciled with its intent as it is now: `None` when
/// the turn serves no intent or its intent is finished; the live contract otherwise. An intent
/// file that is gone or unreadable is the error text.
pub fn live_context(store: &Store, ctx: &Json) -> Result<Option<Json>, String> {
    let Some(id) = ctx["intent_id"].as_str() else {
        return Ok(None);
    };
    let rel = intent_rel(id);
    if !is_intent_id(id) {
        return Err(format!(
            "Intent reconciliation failed: live intent {id} not found at {INTENTS}/{id}.json"
        ));
    }
    match store.read_json(&rel) {
        Ok(None) => Err(format!(
            "Intent reconciliation failed: live intent {id} not found at {rel}"
        )),
        Err(r) => Err(format!(
            "Intent reconciliation failed: could not read live intent {id}: {}",
            r.message
        )),
        Ok(Some(live)) => {
            if FINISHED.contains(&status_of(&live)) {
                return Ok(None);
            }
            let mut ctx = ctx.clone();
            if live["acceptance_contract"].is_array() {
                ctx["acceptance_contract"] = live["acceptance_contract"].clone();
            }
            Ok(Some(ctx))
        }
    }
}

/// After an accepted turn: the executing intent it served is completed (its id returned, for
/// `intent_satisfied`).
pub fn satisfy(
    store: &Store,
    turn: &Json,
    state: &Json,
    at: &str,
) -> Result<Option<Json>, Refusal> {
    let Some(id) = turn["intake_context"]["intent_id"].as_str() else {
        return Ok(None);
    };
    let Ok(mut intent) = load(store, id) else {
        return Ok(None);
    };
    if status_of(&intent) != "executing" {
        return Ok(None);
    }
    let turn_id = turn["turn_id"].clone();
    intent["status"] = json!("completed");
    intent["completed_at"] = json!(at);
    intent["run_completed_at"] = if state["completed_at"].is_null() {
        json!(at)
    } else {
        state["completed_at"].clone()
    };
    intent["run_final_turn"] = turn_id.clone();
    intent["updated_at"] = json!(at);
    intent["satisfying_turn"] = turn_id.clone();
    push_history(
        &mut intent,
        json!({"from": "executing", "to": "completed", "at": at, "turn_id": turn_id, "role": turn["assigned_role"], "run_id": state["run_id"], "reason": "turn accepted — acceptance contract satisfied"}),
    );
    store.write_json(&intent_rel(id), &intent)?;
    observation_dir(store, id);
    Ok(Some(json!(id)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_ids_of_the_reference_shape_name_files() {
        assert!(is_intent_id("intent_1796222398730_eac3"));
        assert!(is_event_id("evt_1796222398728_1be2"));
        for bad in [
            "intent_1_EAC3",
            "intent__eac3",
            "intent_1_eac",
            "intent_1_eac3/../x",
            "../intent_1_eac3",
            "intent_1_eac3.json",
            "evt_1_eac3",
        ] {
            assert!(!is_intent_id(bad), "{bad}");
        }
        assert!(!is_event_id("evt_1_../"));
    }

    #[test]
    fn the_next_action_follows_the_state() {
        let a = next_action(&json!({"intent_id": "intent_1_abcd", "status": "executing"}));
        assert_eq!(a["label"], "resolve");
        assert_eq!(
            a["command"],
            "agentxchain intake resolve --intent intent_1_abcd"
        );
        let a = next_action(&json!({"intent_id": "intent_1_abcd", "status": "completed"}));
        assert_eq!(a["action_required"], false);
        let a = next_action(&json!({"status": "blocked", "run_blocked_recovery": "fix"}));
        assert_eq!(a["recovery"], "fix");
        assert_eq!(next_action(&json!({"status": "odd"}))["label"], "inspect");
    }

    #[test]
    fn scope_fingerprints_overlap_by_their_shared_tokens() {
        let a = fingerprint("Ship M12 greeting script, see .planning/ROADMAP.md and BUG-7");
        assert!(a.contains("m12") && a.contains("bug-7") && a.contains(".planning/roadmap.md"));
        assert!(a.contains("greeting") && a.contains("script") && !a.contains("see"));
        let b = fingerprint("greeting script for M12");
        let j = jaccard(&a, &b);
        assert!(j > 0.0 && j < 1.0, "{j}");
        assert_eq!(jaccard(&b, &b), 1.0);
        assert_eq!(jaccard(&Default::default(), &Default::default()), 0.0);
    }

    #[test]
    fn every_template_has_its_planning_artifacts() {
        for t in TEMPLATES {
            let arts = template_artifacts(t).unwrap();
            assert_eq!(
                arts.is_empty(),
                t == "generic" || t == "full-local-cli",
                "{t}"
            );
            for (f, c) in arts {
                assert!(f.ends_with(".md") && !f.contains('/'), "{f}");
                assert!(c.contains("{{project_name}}"), "{t} {f}");
            }
        }
        assert!(
            template_artifacts("nope")
                .unwrap_err()
                .starts_with("Unknown template \"nope\"")
        );
    }
}

/// Where `inject` leaves its p0 intent for a running loop to yield to.
pub const PREEMPTION_MARKER: &str = ".agentxchain/intake/injected-priority.json";

fn priority_rank(intent: &Json) -> u8 {
    match intent["priority"].as_str() {
        Some("p0") => 0,
        Some("p1") => 1,
        Some("p2") => 2,
        Some("p3") => 3,
        _ => u8::MAX,
    }
}

/// The intent the next turn takes (`findNextDispatchableIntent`): an approved one before a
/// planned one, by priority, then by when it was approved (or planned, or created), then by id;
/// within a run only the intents approved for it (or durable ones not yet bound to a run).
pub fn next_dispatchable(store: &Store, run_id: Option<&str>) -> Option<String> {
    let mut intents: Vec<Json> = read_all(store, INTENTS)
        .into_iter()
        .filter(|i| matches!(status_of(i), "approved" | "planned"))
        .filter(|i| i["intent_id"].as_str().is_some_and(is_intent_id))
        .filter(|i| match run_id {
            None => true,
            Some(run) => {
                let bound = i["approved_run_id"].as_str();
                bound == Some(run) || (bound.is_none() && i["cross_run_durable"] == true)
            }
        })
        .collect();
    if intents.iter().any(|i| status_of(i) == "approved") {
        intents.retain(|i| status_of(i) == "approved");
    }
    let when = |i: &Json| {
        ["approved_at", "planned_at", "created_at", "updated_at"]
            .iter()
            .find_map(|k| i[*k].as_str())
            .and_then(|t| crate::events::timestamp(&json!(t)))
    };
    intents.sort_by(|a, b| {
        priority_rank(a)
            .cmp(&priority_rank(b))
            .then_with(|| match (when(a), when(b)) {
                (Some(x), Some(y)) => x.cmp(&y),
                _ => std::cmp::Ordering::Equal,
            })
            .then_with(|| {
                a["intent_id"]
                    .as_str()
                    .unwrap_or("")
                    .cmp(b["intent_id"].as_str().unwrap_or(""))
            })
    });
    intents
        .first()
        .and_then(|i| i["intent_id"].as_str())
        .map(str::to_owned)
}

/// Binds the next dispatchable intent to a turn of `role` (`consumeNextApprovedIntent`): an
/// approved intent is planned, then started. `None` when no intent waits; the reply of the
/// step that refused otherwise (the caller then assigns a plain turn, as the reference).
pub fn bind_next(store: &Store, role: &str, run_id: Option<&str>) -> Option<Reply> {
    let id = next_dispatchable(store, run_id)?;
    let intent = match lock(store).and_then(|_l| load(store, &id)) {
        Ok(i) => i,
        Err(e) => return Some(Err(e)),
    };
    if status_of(&intent) == "approved"
        && let Err(e) = plan(store, &id, None, false)
    {
        return Some(Err(e));
    }
    Some(start(store, &id, Some(role)))
}

/// How `inject` was asked.
#[derive(Clone, Debug, Default)]
pub struct Injection {
    pub priority: Option<String>,
    pub template: Option<String>,
    pub charter: Option<String>,
    /// Comma-separated acceptance items (default: the description).
    pub acceptance: Option<String>,
    pub approver: Option<String>,
    /// `--no-approve`: leave the intent triaged.
    pub no_approve: bool,
}

/// `inject <description>`: an operator's work item recorded, triaged and approved in one step
/// (`source: manual`, category `operator_injection`); a p0 approved one leaves the preemption
/// marker a running `run` yields to. The same description again returns the intent it made.
pub fn inject(store: &Store, description: &str, o: &Injection) -> Reply {
    let description = description.trim();
    if description.is_empty() {
        return Err(failure(1, "description is required"));
    }
    let priority = o.priority.clone().unwrap_or_else(|| "p0".into());
    if !PRIORITIES.contains(&priority.as_str()) {
        return Err(failure(
            1,
            format!("priority must be one of: {}", PRIORITIES.join(", ")),
        ));
    }
    let template = o.template.clone().unwrap_or_else(|| "generic".into());
    if !TEMPLATES.contains(&template.as_str()) {
        return Err(failure(
            1,
            format!("template must be one of: {}", TEMPLATES.join(", ")),
        ));
    }
    let payload = json!({
        "source": "manual", "category": "operator_injection",
        "signal": {"description": description, "injected": true, "priority": priority},
        "evidence": [{"type": "text", "value": description}],
    });
    let recorded = {
        let _lock = lock(store)?;
        axc_core::intake::record(store.root(), &payload, std::time::SystemTime::now())
            .map_err(|e| failure(1, e.to_string()))?
    };
    if recorded.deduplicated {
        return Ok(json!({
            "ok": true, "intent": recorded.intent.unwrap_or(Json::Null), "event": recorded.event,
            "deduplicated": true, "preemption_marker": false, "exitCode": 0,
        }));
    }
    let id = recorded
        .intent
        .as_ref()
        .and_then(|i| i["intent_id"].as_str())
        .unwrap_or("")
        .to_owned();
    let acceptance: Vec<String> = match &o.acceptance {
        Some(a) => a
            .split(',')
            .map(str::trim)
            .filter(|s| !s.is_empty())
            .map(str::to_owned)
            .collect(),
        None => vec![description.to_owned()],
    };
    let t = Triage {
        priority: Some(priority.clone()),
        template: Some(template),
        charter: Some(o.charter.clone().unwrap_or_else(|| description.to_owned())),
        acceptance,
        ..Default::default()
    };
    if let Err(e) = triage(store, &id, &t) {
        return Err(failure(
            1,
            format!("triage failed: {}", e["error"].as_str().unwrap_or("")),
        ));
    }
    let mut marker = false;
    if !o.no_approve {
        let approver = o.approver.clone().unwrap_or_else(|| "human".into());
        if let Err(e) = approve(
            store,
            &id,
            Some(&approver),
            Some("operator injection"),
            false,
        ) {
            return Err(failure(
                1,
                format!("approve failed: {}", e["error"].as_str().unwrap_or("")),
            ));
        }
        if priority == "p0" {
            let _lock = lock(store)?;
            store
                .write_json(
                    PREEMPTION_MARKER,
                    &json!({"intent_id": id, "priority": priority, "description": description, "injected_at": now()}),
                )
                .map_err(refused)?;
            marker = true;
        }
    }
    let intent = load(store, &id)?;
    Ok(json!({
        "ok": true, "intent": intent, "event": recorded.event, "deduplicated": false,
        "preemption_marker": marker, "exitCode": 0,
    }))
}

/// On a phase advance from `exited` (`state` is the run after it): the approved intents of
/// this run that the exited phase scoped, or whose every acceptance item the run's progress
/// has met (the gates they name passed, or their phases left), are `satisfied` — there is no
/// repair left to do in a phase the run left (the reference's
/// `retireApprovedPhaseScopedIntents`). Their ids, in file order; a preemption marker naming
/// one goes with it. Written under the caller's lock.
pub fn retire_on_phase_advance(
    store: &Store,
    state: &Json,
    config: &Json,
    exited: &str,
    at: &str,
) -> Result<Vec<String>, Refusal> {
    let run_id = state["run_id"].as_str().filter(|r| !r.is_empty());
    let mut retired = Vec::new();
    for mut intent in read_all(store, INTENTS) {
        if status_of(&intent) != "approved" {
            continue;
        }
        let id = intent["intent_id"].as_str().unwrap_or("").to_owned();
        if !is_intent_id(&id) {
            continue;
        }
        if run_id.is_some() {
            match intent["approved_run_id"].as_str().filter(|r| !r.is_empty()) {
                Some(bound) if Some(bound) != run_id => continue,
                None if intent["cross_run_durable"] != true => continue,
                _ => {}
            }
        }
        let scope = crate::intent_coverage::intent_phase_scope(&intent, Some(config));
        let ctx = json!({"phase_scope": scope});
        let items: Vec<&str> = intent["acceptance_contract"]
            .as_array()
            .into_iter()
            .flatten()
            .map(|i| i.as_str().unwrap_or(""))
            .collect();
        let by_exit = scope.as_deref() == Some(exited);
        let by_gates = !items.is_empty()
            && items
                .iter()
                .all(|i| crate::intent_coverage::met_by_lifecycle(i, &ctx, state, config));
        if !by_exit && !by_gates {
            continue;
        }
        let reason = if by_exit {
            format!("phase {exited} exited; {exited}-scoped repair no longer required")
        } else {
            format!("acceptance items satisfied by gate state after phase advance from {exited}")
        };
        intent["status"] = json!("satisfied");
        intent["phase_scope"] = match scope {
            Some(s) => json!(s),
            None => or_null(&intent["phase_scope"]),
        };
        intent["updated_at"] = json!(at);
        intent["satisfied_at"] = json!(at);
        intent["satisfied_reason"] = json!(reason);
        push_history(
            &mut intent,
            json!({"from": "approved", "to": "satisfied", "at": at, "reason": reason,
                "exited_phase": exited, "entered_phase": state["phase"]}),
        );
        store.write_json(&intent_rel(&id), &intent)?;
        if store
            .read_json(PREEMPTION_MARKER)
            .ok()
            .flatten()
            .is_some_and(|m| m["intent_id"] == id.as_str())
        {
            store.remove_file(PREEMPTION_MARKER);
        }
        retired.push(id);
    }
    Ok(retired)
}

/// The preemption marker, when it still names an intent a turn could take (approved or
/// planned); a stale marker is removed (`validatePreemptionMarker`).
pub fn preemption(store: &Store) -> Option<Json> {
    let marker = store.read_json(PREEMPTION_MARKER).ok().flatten()?;
    let id = marker["intent_id"].as_str().unwrap_or("");
    let live = is_intent_id(id)
        && load(store, id).is_ok_and(|i| matches!(status_of(&i), "approved" | "planned"));
    if live {
        Some(marker)
    } else {
        if let Ok(_l) = lock(store) {
            store.remove_file(PREEMPTION_MARKER);
        }
        None
    }
}

/// At a run's start (`archiveStaleIntentsForRun`): an approval made before any run
/// (`cross_run_durable`) is bound to the new run, and an approval bound to another run is
/// stale and suppressed. Written under the caller's lock.
pub fn adopt_for_run(store: &Store, run_id: &str) -> Result<(), Refusal> {
    let at = now();
    for mut intent in read_all(store, INTENTS) {
        let status = status_of(&intent).to_owned();
        if !matches!(status.as_str(), "approved" | "planned")
            || !intent["intent_id"].as_str().is_some_and(is_intent_id)
        {
            continue;
        }
        let durable = intent["cross_run_durable"] == true;
        let bound = intent["approved_run_id"].as_str().map(str::to_owned);
        match bound.as_deref() {
            None if durable => {
                intent["approved_run_id"] = json!(run_id);
                if let Some(o) = intent.as_object_mut() {
                    o.remove("cross_run_durable");
                }
                intent["updated_at"] = json!(at);
                push_history(
                    &mut intent,
                    json!({"from": status, "to": status, "at": at, "reason": format!("pre-run durable approval bound to run {run_id}")}),
                );
            }
            Some(r) if r == run_id && durable => {
                if let Some(o) = intent.as_object_mut() {
                    o.remove("cross_run_durable");
                }
                intent["updated_at"] = json!(at);
            }
            Some(r) if r != run_id => {
                let reason = format!(
                    "stale: approved under run {r}, archived on run {run_id} initialization"
                );
                intent["status"] = json!("suppressed");
                intent["updated_at"] = json!(at);
                intent["archived_reason"] = json!(reason);
                push_history(
                    &mut intent,
                    json!({"from": status, "to": "suppressed", "at": at, "reason": reason}),
                );
            }
            _ => continue,
        }
        store.write_json(
            &intent_rel(intent["intent_id"].as_str().unwrap_or("")),
            &intent,
        )?;
    }
    Ok(())
}

/// `intake scan --source S`: each item of a source's snapshot (`{source, items: [{signal,
/// evidence, category?, repo?, ref?}]}`) recorded as an intake event — created, deduplicated
/// or rejected with its reasons; failing only when every item was rejected.
pub fn scan(store: &Store, source: &str, snapshot: &Json) -> Reply {
    const SOURCES: [&str; 3] = ["ci_failure", "git_ref_change", "schedule"];
    if !SOURCES.contains(&source) {
        return Err(failure(
            1,
            format!(
                "unknown scan source: \"{source}\". Supported: {}",
                SOURCES.join(", ")
            ),
        ));
    }
    if !snapshot.is_object() {
        return Err(failure(1, "snapshot must be a JSON object"));
    }
    if snapshot["source"] != source {
        return Err(failure(
            1,
            format!(
                "source mismatch: CLI flag \"{source}\" but snapshot declares \"{}\"",
                snapshot["source"].as_str().unwrap_or("undefined")
            ),
        ));
    }
    let Some(items) = snapshot["items"].as_array().filter(|i| !i.is_empty()) else {
        return Err(failure(1, "snapshot must contain a non-empty items array"));
    };
    let _lock = lock(store)?;
    let (mut created, mut dedup, mut rejected) = (0u64, 0u64, 0u64);
    let mut results = Vec::new();
    for (i, item) in items.iter().enumerate() {
        let mut errors = Vec::new();
        if !item.is_object() {
            errors.push("item must be a JSON object".to_owned());
        } else {
            if item["signal"].as_object().is_none_or(|o| o.is_empty()) {
                errors.push("signal must be a non-empty object".into());
            }
            match item["evidence"].as_array().filter(|e| !e.is_empty()) {
                None => errors.push("evidence must be a non-empty array".into()),
                Some(ev) => {
                    for e in ev {
                        if !e.is_object() {
                            errors.push("each evidence entry must be an object".into());
                            continue;
                        }
                        if !["url", "file", "text"].contains(&e["type"].as_str().unwrap_or("")) {
                            errors.push(format!(
                                "evidence type must be one of: url, file, text (got \"{}\")",
                                e["type"].as_str().unwrap_or("undefined")
                            ));
                        }
                        if e["value"].as_str().is_none_or(|v| v.trim().is_empty()) {
                            errors.push("evidence value must be a non-empty string".into());
                        }
                    }
                }
            }
        }
        if !errors.is_empty() {
            results.push(json!({"status": "rejected", "index": i, "error": errors.join("; ")}));
            rejected += 1;
            continue;
        }
        let mut payload =
            json!({"source": source, "signal": item["signal"], "evidence": item["evidence"]});
        for k in ["category", "repo", "ref"] {
            if item[k].as_str().is_some_and(|v| !v.is_empty()) {
                payload[k] = item[k].clone();
            }
        }
        match axc_core::intake::record(store.root(), &payload, std::time::SystemTime::now()) {
            Err(e) => {
                results.push(json!({"status": "rejected", "index": i, "error": e.to_string()}));
                rejected += 1;
            }
            Ok(r) => {
                let status = if r.deduplicated {
                    "deduplicated"
                } else {
                    "created"
                };
                if r.deduplicated {
                    dedup += 1;
                } else {
                    created += 1;
                }
                results.push(json!({
                    "status": status, "event_id": r.event["event_id"],
                    "intent_id": r.intent.as_ref().map_or(Json::Null, |i| i["intent_id"].clone()),
                }));
            }
        }
    }
    let all_rejected = created == 0 && dedup == 0;
    let mut out = json!({"ok": !all_rejected});
    if all_rejected {
        out["error"] = json!("all scanned items were rejected");
    }
    for (k, v) in [
        ("source", json!(source)),
        ("scanned", json!(items.len())),
        ("created", json!(created)),
        ("deduplicated", json!(dedup)),
        ("rejected", json!(rejected)),
        ("results", json!(results)),
        ("exitCode", json!(if all_rejected { 1 } else { 0 })),
    ] {
        out[k] = v;
    }
    if all_rejected { Err(out) } else { Ok(out) }
}
