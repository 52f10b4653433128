//! The staged turn result (`.agentxchain/staging/turn-result.json`) at the acceptance boundary:
//! a best-effort normalization of recoverable drift, then five stages that stop at the first
//! that fails — schema, assignment (the result is the active turn's), artifact (write
//! authority and reserved paths), verification (evidence consistency), protocol (challenge
//! requirement, routing, lifecycle requests, delegations).
//!
//! Normalization covers the identity and shape recoveries (run id of the active turn,
//! `files_modified`, missing arrays, runtime id, summary, artifact, next role, status synonyms,
//! file objects, decision and objection ids, categories, statements). The reference's
//! lifecycle inferences (its rules 0–6: inferring a missing status or phase request,
//! correcting non-forward requests, repairing next roles) are not applied: such a result is
//! refused here with the stage and reason, where the reference would rewrite it.

use std::path::Path;
use std::sync::LazyLock;

use regex::Regex;
use serde_json::{Map, Value as Json, json};

use crate::gates;
use crate::js::{is_decision_id, nonblank, text, truthy};

pub const STAGING_PATH: &str = ".agentxchain/staging/turn-result.json";
/// The largest staged result read.
pub const MAX_RESULT: u64 = 16 << 20;
pub const STAGES: [&str; 5] = [
    "schema",
    "assignment",
    "artifact",
    "verification",
    "protocol",
];

const STATUSES: [&str; 4] = ["completed", "blocked", "needs_human", "failed"];
const SEVERITIES: [&str; 4] = ["low", "medium", "high", "blocking"];
const CATEGORIES: [&str; 6] = crate::decisions::CATEGORIES;
const ARTIFACT_TYPES: [&str; 4] = ["workspace", "patch", "commit", "review"];
const VERIFICATION_STATUSES: [&str; 3] = ["pass", "fail", "skipped"];
const OBJECTION_STATUSES: [&str; 6] = [
    "raised",
    "acknowledged",
    "resolved",
    "escalated",
    "resolved_by_human",
    "resolved_by_director",
];
/// Files only the orchestrator writes.
pub const RESERVED_PATHS: [&str; 4] = [
    ".agentxchain/state.json",
    ".agentxchain/history.jsonl",
    ".agentxchain/decision-ledger.jsonl",
    ".agentxchain/lock.json",
];

fn re(p: &str) -> Regex {
    Regex::new(p).expect("a valid pattern")
}
static ROLE: LazyLock<Regex> = LazyLock::new(|| re(r"^[a-z0-9_-]+$"));
static OBJ: LazyLock<Regex> = LazyLock::new(|| re(r"^OBJ-\d+$"));
static DEL: LazyLock<Regex> = LazyLock::new(|| re(r"^del-\d{3}$"));
static PLACEHOLDER: LazyLock<Regex> = LazyLock::new(|| re(r"^<[^>]+>$"));
static TEST_DIR: LazyLock<Regex> = LazyLock::new(|| re(r"(^|/)(tests?|__tests__|spec)/"));
static TEST_FILE: LazyLock<Regex> = LazyLock::new(|| re(r"\.(test|spec)\.[cm]?[jt]sx?$"));
static FIRST_TYPE: LazyLock<Regex> = LazyLock::new(|| re(r"(?i)(--first-type)\s+([^&|;`\n\r ]+)"));

/// The outcome of validating one staged result.
#[derive(Clone, Debug, PartialEq)]
pub struct Validation {
    /// The stage that failed, or `None` when every stage passed.
    pub stage: Option<&'static str>,
    pub error_class: Option<&'static str>,
    pub errors: Vec<String>,
    pub warnings: Vec<String>,
    /// The normalized result (when every stage passed).
    pub turn_result: Option<Json>,
    /// What normalization changed, as sentences.
    pub corrections: Vec<String>,
    /// What normalization changed, as the reference's `staged_result_auto_normalized` payloads
    /// `{field, original_value, normalized_value, rationale}` (when every stage passed).
    pub normalization_events: Vec<Json>,
}

impl Validation {
    pub fn ok(&self) -> bool {
        self.stage.is_none()
    }

    fn failed(stage: &'static str, errors: Vec<String>, warnings: Vec<String>) -> Validation {
        Validation {
            stage: Some(stage),
            error_class: Some(match stage {
                "schema" => "schema_error",
                "assignment" => "assignment_error",
                "artifact" => "artifact_error",
                "verification" => "verification_error",
                _ => "protocol_error",
            }),
            errors,
            warnings,
            turn_result: None,
            corrections: Vec::new(),
            normalization_events: Vec::new(),
        }
    }
}

/// The one active turn of `state` (`active_turns` with exactly one entry), else its
/// `current_turn`.
pub fn active_turn(state: &Json) -> Option<&Json> {
    let turns = state["active_turns"].as_object();
    match turns {
        Some(t) if t.len() == 1 => t.values().next(),
        _ => state.get("current_turn").filter(|t| t.is_object()),
    }
}

/// Reads and validates the staged result at `root/<rel>`.
pub fn validate_staged(root: &Path, state: &Json, config: &Json, rel: &str) -> Validation {
    let path = root.join(rel);
    // Read inside the project only (a link out is refused), a regular file only (not a FIFO
    // or /dev/zero), and at most MAX_RESULT bytes.
    let read = if std::fs::symlink_metadata(&path).is_err() {
        Err(std::io::Error::from(std::io::ErrorKind::NotFound))
    } else {
        fsread::read_inside(root, Path::new(rel), MAX_RESULT)
            .map_err(|e| std::io::Error::other(e.to_string()))
            .and_then(|b| String::from_utf8(b).map_err(|_| std::io::Error::other("not UTF-8 text")))
    };
    let text = match read {
        Ok(t) => t,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            return Validation::failed(
                "schema",
                vec![format!("Staged turn result not found: {rel}")],
                Vec::new(),
            );
        }
        Err(e) => {
            return Validation::failed(
                "schema",
                vec![format!("Cannot read {rel}: {e}")],
                Vec::new(),
            );
        }
    };
    match serde_json::from_str::<Json>(&text) {
        Ok(tr) => validate(root, state, config, &tr),
        Err(e) => Validation::failed(
            "schema",
            vec![format!("Invalid JSON in {rel}: {e}")],
            Vec::new(),
        ),
    }
}

/// Normalizes and validates a parsed turn result.
pub fn validate(root: &Path, state: &Json, config: &Json, tr: &Json) -> Validation {
    let active = active_turn(state);
    let (
        tr,
        Notes {
            text: corrections,
            events,
        },
    ) = normalize(tr, config, state, active);
    let errors = schema(&tr);
    if !errors.is_empty() {
        return Validation::failed("schema", errors, Vec::new());
    }
    let errors = assignment(&tr, state, active);
    if !errors.is_empty() {
        return Validation::failed("assignment", errors, Vec::new());
    }
    let (errors, mut warnings) = artifact(&tr, config, state, root);
    if !errors.is_empty() {
        return Validation::failed("artifact", errors, warnings);
    }
    let (errors, w) = verification(&tr);
    if !errors.is_empty() {
        return Validation::failed("verification", errors, w);
    }
    warnings.extend(w);
    let (errors, w) = protocol(&tr, state, config, active);
    if !errors.is_empty() {
        return Validation::failed("protocol", errors, w);
    }
    warnings.extend(w);
    let mut all: Vec<String> = corrections
        .iter()
        .map(|c| format!("[normalized] {c}"))
        .collect();
    all.extend(warnings);
    Validation {
        stage: None,
        error_class: None,
        errors: Vec::new(),
        warnings: all,
        turn_result: Some(tr),
        corrections,
        normalization_events: events,
    }
}

fn s(v: &Json) -> Option<&str> {
    v.as_str()
}

fn padded(prefix: &str, i: usize) -> String {
    format!("{prefix}-{:03}", i + 1)
}

// ---- normalization ----

/// What normalization changed: each change as the reference's sentence, and the ones the
/// reference also records as a `staged_result_auto_normalized` event.
#[derive(Default)]
struct Notes {
    text: Vec<String>,
    events: Vec<Json>,
}

impl Notes {
    fn say(&mut self, text: impl Into<String>) {
        self.text.push(text.into());
    }

    fn event(
        &mut self,
        text: impl Into<String>,
        field: impl Into<String>,
        original: Json,
        normalized: Json,
        rationale: impl Into<String>,
    ) {
        self.say(text);
        self.events.push(json!({
            "field": field.into(), "original_value": original,
            "normalized_value": normalized, "rationale": rationale.into(),
        }));
    }
}

fn normalize(tr: &Json, config: &Json, state: &Json, active: Option<&Json>) -> (Json, Notes) {
    let mut c = Notes::default();
    let Some(obj) = tr.as_object() else {
        return (tr.clone(), c);
    };
    let mut n: Map<String, Json> = obj.clone();
    let run_id = state["run_id"].as_str().filter(|r| !r.is_empty());
    let role_key = active.and_then(|t| s(&t["assigned_role"]).or(s(&t["role"])));
    let turn_id = active.and_then(|t| s(&t["turn_id"]));
    // The active turn's run id, when the staged turn id proves the result is that turn's.
    if let (Some(run), Some(turn)) = (run_id, turn_id)
        && n.get("turn_id").and_then(Json::as_str) == Some(turn)
        && active
            .and_then(|t| s(&t["run_id"]))
            .is_none_or(|r| r == run)
    {
        let staged = n
            .get("run_id")
            .and_then(Json::as_str)
            .map(str::trim)
            .unwrap_or("");
        if staged != run {
            c.event(
                format!(
                    "run_id: rewritten from \"{}\" to active state run_id \"{run}\"",
                    if staged.is_empty() {
                        "(missing)"
                    } else {
                        staged
                    }
                ),
                "run_id",
                n.get("run_id").cloned().unwrap_or(Json::Null),
                json!(run),
                "run_id_rewritten_from_active_turn_context",
            );
            n.insert("run_id".into(), json!(run));
        }
    }
    if !n.contains_key("files_changed")
        && let Some(files) = n.get("files_modified").filter(|f| f.is_array()).cloned()
    {
        c.event(
            "files_changed: renamed from synonym files_modified",
            "files_changed",
            Json::Null,
            json!("(renamed from files_modified)"),
            "files_modified_renamed_to_files_changed",
        );
        n.insert("files_changed".into(), files);
        n.remove("files_modified");
    }
    let files_empty = n
        .get("files_changed")
        .and_then(Json::as_array)
        .is_some_and(Vec::is_empty);
    let no_edit_signal = n.get("run_completion_request") == Some(&Json::Bool(true))
        || n.get("phase_transition_request")
            .and_then(Json::as_str)
            .is_some_and(|r| !r.trim().is_empty());
    let review_only =
        role_key.is_some_and(|r| config["roles"][r]["write_authority"] == "review_only");
    for key in ["decisions", "objections"] {
        if !n.contains_key(key) {
            c.event(
                format!("{key}: defaulted missing required array to []"),
                key,
                Json::Null,
                json!([]),
                format!("missing_{key}_array_defaulted"),
            );
            n.insert(key.into(), json!([]));
        }
    }
    if !n.get("runtime_id").is_some_and(truthy)
        && let Some(rt) = active.and_then(|t| s(&t["runtime_id"]))
    {
        c.event(
            format!("runtime_id: defaulted from dispatch context \"{rt}\""),
            "runtime_id",
            Json::Null,
            json!(rt),
            "missing_runtime_id_defaulted_from_context",
        );
        n.insert("runtime_id".into(), json!(rt));
    }
    if !n.get("summary").is_some_and(nonblank) {
        let role = n
            .get("role")
            .and_then(Json::as_str)
            .filter(|r| !r.is_empty())
            .unwrap_or("agent")
            .to_owned();
        let title = n
            .get("milestone_title")
            .and_then(Json::as_str)
            .map(str::trim)
            .filter(|t| !t.is_empty());
        let milestone = n
            .get("milestone")
            .and_then(Json::as_str)
            .map(str::trim)
            .filter(|t| !t.is_empty());
        let (text, src) = match (title, milestone) {
            (Some(t), _) => (t.to_owned(), "milestone_title"),
            (None, Some(m)) => (format!("{role} turn for {m}"), "milestone"),
            _ => (format!("{role} turn completed"), "fallback"),
        };
        c.event(
            format!("summary: synthesized from {src}"),
            "summary",
            n.get("summary").cloned().unwrap_or(Json::Null),
            json!(text),
            format!("missing_summary_synthesized_from_{src}"),
        );
        n.insert("summary".into(), json!(text));
    }
    if !n.get("artifact").is_some_and(Json::is_object) {
        let has_files = n
            .get("files_changed")
            .and_then(Json::as_array)
            .is_some_and(|f| !f.is_empty());
        let inferred = json!({"type": if has_files { "workspace" } else { "review" }});
        c.event(
            format!("artifact: inferred {inferred} from files_changed"),
            "artifact",
            n.get("artifact").cloned().unwrap_or(Json::Null),
            inferred.clone(),
            "missing_artifact_inferred_from_files_changed",
        );
        n.insert("artifact".into(), inferred);
    }
    if !n.get("proposed_next_role").is_some_and(truthy) {
        let phase = state["phase"].as_str().unwrap_or("");
        let allowed: Vec<&str> = config["routing"][phase]["allowed_next_roles"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(Json::as_str)
            .collect();
        let assigned = role_key.or_else(|| n.get("role").and_then(Json::as_str));
        let role = allowed
            .iter()
            .find(|r| Some(**r) != assigned)
            .or(allowed.first())
            .copied()
            .unwrap_or("pm");
        c.event(
            format!("proposed_next_role: defaulted to \"{role}\""),
            "proposed_next_role",
            Json::Null,
            json!(role),
            "missing_proposed_next_role_defaulted",
        );
        n.insert("proposed_next_role".into(), json!(role));
    }
    if let Some(st) = n
        .get("status")
        .and_then(Json::as_str)
        .filter(|st| !STATUSES.contains(st))
    {
        let mapped = match st.to_lowercase().as_str() {
            "complete" | "success" | "done" => Some("completed"),
            "error" | "failure" => Some("failed"),
            _ => None,
        };
        if let Some(m) = mapped {
            c.event(
                format!("status: rewritten \"{st}\" → \"{m}\""),
                "status",
                json!(st),
                json!(m),
                "status_synonym_rewritten",
            );
            n.insert("status".into(), json!(m));
        }
    }
    if let Some(files) = n.get_mut("files_changed").and_then(Json::as_array_mut) {
        let mut coerced = false;
        for f in files.iter_mut() {
            if let Some(p) = f.get("path").and_then(Json::as_str).map(str::to_owned) {
                *f = json!(p);
                coerced = true;
            }
        }
        if coerced {
            c.event(
                "files_changed: coerced object entries to path strings",
                "files_changed",
                json!("(object entries)"),
                json!("(path strings)"),
                "files_changed_object_to_string",
            );
        }
    }
    if let Some(decs) = n.get_mut("decisions").and_then(Json::as_array_mut) {
        for (i, d) in decs.iter_mut().enumerate() {
            let Some(d) = d.as_object_mut() else { continue };
            let at = format!("decisions[{i}]");
            renumber(d, &at, i, "DEC", is_decision_id, "decision", &mut c);
            fill(
                d,
                &at,
                "statement",
                &["decision", "description", "summary", "title"],
                &mut c,
            );
            fill(
                d,
                &at,
                "rationale",
                &["reason", "why", "description", "decision", "statement"],
                &mut c,
            );
            if !d
                .get("category")
                .and_then(Json::as_str)
                .is_some_and(|x| CATEGORIES.contains(&x))
            {
                c.event(
                    format!("{at}.category: defaulted to \"implementation\""),
                    format!("{at}.category"),
                    d.get("category").cloned().unwrap_or(Json::Null),
                    json!("implementation"),
                    "missing_category_defaulted",
                );
                d.insert("category".into(), json!("implementation"));
            }
        }
    }
    if let Some(v) = n.get_mut("verification").and_then(Json::as_object_mut)
        && !v.contains_key("status")
    {
        let code = v.get("exit_code").cloned().unwrap_or(Json::Null);
        let status = match code.as_f64() {
            Some(0.0) => "pass",
            Some(_) => "fail",
            None => "skipped",
        };
        c.event(
            format!(
                "verification.status: inferred \"{status}\" from exit_code={}",
                if code.is_null() {
                    "undefined".to_owned()
                } else {
                    code.to_string()
                }
            ),
            "verification.status",
            Json::Null,
            json!(status),
            "verification_status_inferred_from_exit_code",
        );
        v.insert("status".into(), json!(status));
    }
    if let Some(v) = n.get_mut("verification").and_then(Json::as_object_mut) {
        structured_evidence(v, &mut c);
        expected_exit_codes(v, &mut c);
    }
    let has_files = n
        .get("files_changed")
        .and_then(Json::as_array)
        .is_some_and(|f| !f.is_empty());
    if let Some(a) = n.get_mut("artifact").and_then(Json::as_object_mut)
        && !a.contains_key("type")
    {
        let kind = if has_files { "workspace" } else { "review" };
        c.event(
            format!("artifact.type: inferred \"{kind}\" from files_changed"),
            "artifact.type",
            Json::Null,
            json!(kind),
            "artifact_type_inferred_from_files_changed",
        );
        a.insert("type".into(), json!(kind));
    }
    // An empty workspace artifact from a turn that declares no repository change is a review.
    let checkpointable = checkpointable(&Json::Object(n.clone()));
    let status = n
        .get("status")
        .and_then(Json::as_str)
        .unwrap_or("")
        .to_owned();
    let to_human = n.get("proposed_next_role").and_then(Json::as_str) == Some("human");
    let turn_ref = n
        .get("turn_id")
        .and_then(Json::as_str)
        .map(str::trim)
        .filter(|t| !t.is_empty())
        .map(|t| format!("turn:{t}"));
    if let Some(a) = n.get_mut("artifact").and_then(Json::as_object_mut)
        && a.get("type").and_then(Json::as_str) == Some("workspace")
        && files_empty
        && !checkpointable
        && (no_edit_signal
            || (review_only && status == "completed")
            || (status == "needs_human" && to_human))
    {
        a.insert("type".into(), json!("review"));
        let r = turn_ref
            .map(Json::String)
            .or_else(|| a.get("ref").cloned())
            .unwrap_or(Json::Null);
        a.insert("ref".into(), r);
        c.event(
            ARTIFACT_AUTO_REVIEW,
            "artifact.type",
            json!("workspace"),
            json!("review"),
            "empty_files_changed_no_repo_mutation_declared",
        );
    }
    if let Some(objs) = n.get_mut("objections").and_then(Json::as_array_mut) {
        for (i, o) in objs.iter_mut().enumerate() {
            let Some(o) = o.as_object_mut() else { continue };
            let at = format!("objections[{i}]");
            renumber(o, &at, i, "OBJ", |id| OBJ.is_match(id), "objection", &mut c);
            fill(o, &at, "statement", &["summary", "detail"], &mut c);
        }
    }
    lifecycle(&mut n, config, state, review_only, &mut c);
    next_role_repair(&mut n, config, state, role_key, review_only, &mut c);
    (Json::Object(n), c)
}

/// The reference's rule 6: a completed turn that names a next role the phase's routing does
/// not allow gets an allowed one (the first that is not the turn's own role), and a review-only
/// turn asking to complete the run hands it to `human`; a template placeholder
/// (`<role>`) is left for the schema to refuse.
fn next_role_repair(
    n: &mut Map<String, Json>,
    config: &Json,
    state: &Json,
    assigned: Option<&str>,
    review_only: bool,
    c: &mut Notes,
) {
    let phase = state["phase"].as_str().unwrap_or("");
    let known = config["routing"].get(phase).is_some();
    let allowed: Vec<&str> = config["routing"][phase]["allowed_next_roles"]
        .as_array()
        .map(|a| a.iter().filter_map(Json::as_str).collect())
        .unwrap_or_default();
    let proposed = n
        .get("proposed_next_role")
        .and_then(Json::as_str)
        .map(str::to_owned);
    let completed = n.get("status").and_then(Json::as_str) == Some("completed");
    let completion_only = n.get("run_completion_request") == Some(&Json::Bool(true))
        && !n.get("phase_transition_request").is_some_and(truthy);
    let assigned: Option<String> = assigned
        .map(str::to_owned)
        .or_else(|| n.get("role").and_then(Json::as_str).map(str::to_owned));
    let fallback = || {
        allowed
            .iter()
            .find(|r| Some(**r) != assigned.as_deref())
            .or(allowed.first())
            .map(|r| (*r).to_owned())
    };
    if review_only && completion_only {
        if proposed.as_deref() != Some("human") {
            n.insert("proposed_next_role".into(), json!("human"));
            c.say("proposed_next_role: corrected to \"human\" for run completion");
        }
        return;
    }
    let Some(p) = proposed else { return };
    let illegal =
        known && completed && p != "human" && !allowed.is_empty() && !allowed.contains(&p.as_str());
    if !illegal || (!review_only && PLACEHOLDER.is_match(&p)) {
        return;
    }
    let Some(f) = fallback() else { return };
    if review_only {
        c.say(format!(
            "proposed_next_role: corrected \"{p}\" to allowed role \"{f}\""
        ));
    } else {
        c.event(
            format!(
                "proposed_next_role: corrected \"{p}\" to allowed role \"{f}\" (routing-illegal for phase \"{phase}\")"
            ),
            "proposed_next_role",
            json!(p),
            json!(f),
            format!("routing_illegal_for_phase_{phase}"),
        );
    }
    n.insert("proposed_next_role".into(), json!(f));
}

/// The sentence (and the marker accept looks for) of the empty-workspace-to-review rule.
pub const ARTIFACT_AUTO_REVIEW: &str = "artifact.type: auto-normalized empty workspace artifact to review because files_changed is empty and no repo mutation was declared";

static AFFIRMATIVE: LazyLock<Regex> = LazyLock::new(|| {
    re(
        r"(?i)(?-u:\b)(approv|ship|release|sign.?off|no.?block|ready|pass|good|accept|green.?light|proceed|move.?forward|complet|done|lgtm|satisf|recommend)(?-u:\b)",
    )
});
static BLOCKER: LazyLock<Regex> = LazyLock::new(|| {
    re(
        r"(?i)(?-u:\b)(critical|security|fail|block|cannot|must.?fix|regression|vulnerab|reject|unsafe|broken)(?-u:\b)",
    )
});

/// JavaScript's `Number.isInteger`.
fn integral(v: &Json) -> bool {
    v.as_f64()
        .is_some_and(|f| f.is_finite() && f.fract() == 0.0)
}

/// The first `max - 3` characters and `...` when longer than `max`.
fn clip(value: &str, max: usize) -> String {
    if value.chars().count() > max {
        format!("{}...", value.chars().take(max - 3).collect::<String>())
    } else {
        value.to_owned()
    }
}

/// A structured observation (`{type, path, marker, …}`) as the reference summarizes it, when
/// `entry` is one.
fn structured_summary(entry: &Json) -> Option<(String, String)> {
    let kind = entry.get("type")?.as_str()?.trim();
    if kind.is_empty() || !entry.is_object() {
        return None;
    }
    let mut parts = vec![format!("type={kind}")];
    for key in ["path", "marker", "section", "result"] {
        if let Some(v) = entry[key].as_str().map(str::trim).filter(|v| !v.is_empty()) {
            parts.push(format!("{key}={}", clip(v, 220)));
        }
    }
    if let Some(items) = entry["contract"].as_array().filter(|a| !a.is_empty()) {
        let joined: Vec<String> = items
            .iter()
            .map(|i| match i {
                Json::String(s) => s.clone(),
                Json::Null => String::new(),
                other => other.to_string(),
            })
            .collect();
        parts.push(format!("contract={}", clip(&joined.join(" | "), 220)));
    }
    if entry["buckets_observed"].is_object() {
        parts.push(format!(
            "buckets_observed={}",
            clip(&entry["buckets_observed"].to_string(), 220)
        ));
    }
    Some((kind.to_owned(), format!("[{}]", parts.join(", "))))
}

/// Observations in `machine_evidence` that are not command records move into
/// `evidence_summary` (the reference's BUG-104 rule).
fn structured_evidence(v: &mut Map<String, Json>, c: &mut Notes) {
    let Some(entries) = v.get("machine_evidence").and_then(Json::as_array) else {
        return;
    };
    let mut kept = Vec::new();
    let mut moved = Vec::new();
    for (i, entry) in entries.iter().enumerate() {
        let command = entry["command"]
            .as_str()
            .is_some_and(|s| !s.trim().is_empty());
        if entry.is_object() && command && integral(&entry["exit_code"]) {
            kept.push(entry.clone());
            continue;
        }
        match structured_summary(entry) {
            None => kept.push(entry.clone()),
            Some((kind, text)) => {
                c.event(
                    format!("verification.machine_evidence[{i}]: moved structured {kind} evidence into evidence_summary"),
                    format!("verification.machine_evidence[{i}]"),
                    entry.clone(),
                    json!(text),
                    "structured_machine_evidence_moved_to_evidence_summary",
                );
                moved.push(text);
            }
        }
    }
    if moved.is_empty() {
        return;
    }
    let existing = v
        .get("evidence_summary")
        .and_then(Json::as_str)
        .map(str::trim)
        .unwrap_or("")
        .to_owned();
    let appended = moved.join("; ");
    v.insert("machine_evidence".into(), Json::Array(kept));
    v.insert(
        "evidence_summary".into(),
        json!(if existing.is_empty() {
            format!("Structured evidence: {appended}")
        } else {
            format!("{existing}\nStructured evidence: {appended}")
        }),
    );
}

/// A passing verification's non-zero command records declare that exit code as expected (the
/// reference's BUG-106 rule: the agent said the whole verification passed).
fn expected_exit_codes(v: &mut Map<String, Json>, c: &mut Notes) {
    if v.get("status").and_then(Json::as_str) != Some("pass") {
        return;
    }
    let Some(entries) = v.get_mut("machine_evidence").and_then(Json::as_array_mut) else {
        return;
    };
    for (i, entry) in entries.iter_mut().enumerate() {
        let Some(e) = entry.as_object_mut() else {
            continue;
        };
        let code = e.get("exit_code").cloned().unwrap_or(Json::Null);
        let nonzero = code.as_f64().is_some_and(|f| f != 0.0);
        if nonzero && !e.get("expected_exit_code").is_some_and(integral) {
            c.event(
                format!("verification.machine_evidence[{i}].expected_exit_code: set to {code} (verification.status is \"pass\")"),
                format!("verification.machine_evidence[{i}].expected_exit_code"),
                Json::Null,
                code.clone(),
                "verification_pass_expected_exit_code_inferred",
            );
            e.insert("expected_exit_code".into(), code);
        }
    }
}

/// The reference's lifecycle rules 0–5: a missing status inferred from an unambiguous signal,
/// `artifacts_created` objects as paths, the idle-expansion sentinel, an exit gate named where
/// a phase belongs, a review-only "needs human" that reads as approval, a review-only completed
/// turn's missing lifecycle signal, and a phase request that skips ahead or goes back.
fn lifecycle(
    n: &mut Map<String, Json>,
    config: &Json,
    state: &Json,
    review_only: bool,
    c: &mut Notes,
) {
    let routing = config["routing"].as_object();
    let phases: Vec<&str> = routing
        .map(|r| r.keys().map(String::as_str).collect())
        .unwrap_or_default();
    let phase = state["phase"].as_str().filter(|p| !p.is_empty());
    let index = phase.and_then(|p| phases.iter().position(|x| *x == p));
    let known = index.is_some();
    let terminal = index.is_some_and(|i| i + 1 == phases.len());
    let next = index
        .and_then(|i| phases.get(i + 1))
        .map(|p| (*p).to_owned());
    let allowed: Vec<String> = phase
        .filter(|_| known)
        .and_then(|p| config["routing"][p]["allowed_next_roles"].as_array())
        .map(|a| {
            a.iter()
                .filter_map(Json::as_str)
                .map(str::to_owned)
                .collect()
        })
        .unwrap_or_default();
    let text = |n: &Map<String, Json>, k: &str| {
        n.get(k)
            .and_then(Json::as_str)
            .map(str::to_owned)
            .filter(|v| !v.trim().is_empty())
    };

    // Rule 0.
    if !n.contains_key("status") {
        if text(n, "needs_human_reason").is_some() {
            n.insert("status".into(), json!("needs_human"));
            c.say("status: inferred \"needs_human\" from needs_human_reason");
        } else if let Some(r) = text(n, "phase_transition_request") {
            n.insert("status".into(), json!("completed"));
            c.say(format!(
                "status: inferred \"completed\" from phase_transition_request \"{r}\""
            ));
        } else if n.get("run_completion_request") == Some(&Json::Bool(true)) {
            n.insert("status".into(), json!("completed"));
            c.say("status: inferred \"completed\" from run_completion_request: true");
        }
    }
    // Rule 1.
    if let Some(items) = n.get_mut("artifacts_created").and_then(Json::as_array_mut) {
        for (i, item) in items.iter_mut().enumerate() {
            if !item.is_object() {
                continue;
            }
            let path = item["path"]
                .as_str()
                .or(item["name"].as_str())
                .map(str::to_owned)
                .unwrap_or_else(|| item.to_string());
            c.say(format!(
                "artifacts_created[{i}]: coerced object to string \"{path}\""
            ));
            *item = json!(path);
        }
    }
    if let Some(r) = n
        .get_mut("idle_expansion_result")
        .and_then(Json::as_object_mut)
        && r.get("kind").and_then(Json::as_str) == Some("new_intake_intent")
        && matches!(
            r.get("vision_exhausted"),
            Some(Json::Null | Json::Bool(false))
        )
    {
        r.remove("vision_exhausted");
        c.say(
            "idle_expansion_result.vision_exhausted: removed false sentinel for new_intake_intent",
        );
    }
    let completion = |n: &Map<String, Json>| n.get("run_completion_request").is_some_and(truthy);
    // Rule 2.
    if let (Some(routing), Some(gates), Some(requested)) = (
        routing,
        config["gates"].as_object(),
        n.get("phase_transition_request")
            .and_then(Json::as_str)
            .map(str::to_owned),
    ) && !completion(n)
        && !routing.contains_key(&requested)
        && gates.contains_key(&requested)
        && let Some(owner) = phases
            .iter()
            .position(|p| routing[*p]["exit_gate"].as_str() == Some(&requested))
    {
        match phases.get(owner + 1) {
            Some(p) => {
                c.say(format!(
                    "phase_transition_request: corrected gate name \"{requested}\" to phase \"{p}\""
                ));
                n.insert("phase_transition_request".into(), json!(p));
            }
            None => {
                c.say(format!("phase_transition_request: corrected terminal gate name \"{requested}\" to run_completion_request: true"));
                n.insert("phase_transition_request".into(), Json::Null);
                n.insert("run_completion_request".into(), json!(true));
            }
        }
    }
    let status = |n: &Map<String, Json>| n.get("status").and_then(Json::as_str).map(str::to_owned);
    // Rule 3.
    if review_only
        && phase.is_some()
        && routing.is_some()
        && status(n).as_deref() == Some("needs_human")
        && n.get("run_completion_request") != Some(&Json::Bool(false))
        && let Some(reason) = n
            .get("needs_human_reason")
            .and_then(Json::as_str)
            .map(str::to_owned)
        && AFFIRMATIVE.is_match(&reason)
        && !BLOCKER.is_match(&reason)
    {
        let short: String = reason.chars().take(80).collect();
        if terminal {
            c.say(format!("status: corrected review_only terminal \"needs_human\" to run_completion_request — reason indicated ship readiness (\"{short}\"), not a genuine blocker"));
            n.insert("status".into(), json!("completed"));
            n.insert("run_completion_request".into(), json!(true));
            n.remove("needs_human_reason");
        } else if let Some(next) = &next {
            c.say(format!("status: corrected review_only \"needs_human\" to phase_transition_request \"{next}\" — reason indicated forward progress (\"{short}\"), not a genuine blocker"));
            n.insert("status".into(), json!("completed"));
            n.insert("phase_transition_request".into(), json!(next));
            n.remove("needs_human_reason");
        }
    }
    let completed = |n: &Map<String, Json>| status(n).as_deref() == Some("completed");
    // Rule 4.
    if known
        && review_only
        && completed(n)
        && n.get("run_completion_request").is_none_or(Json::is_null)
        && !n.get("phase_transition_request").is_some_and(truthy)
    {
        let current = phase.unwrap_or("");
        if terminal {
            n.insert("run_completion_request".into(), json!(true));
            c.say(format!(
                "run_completion_request: inferred true for completed terminal phase \"{current}\""
            ));
        } else if let Some(next) = &next {
            n.insert("phase_transition_request".into(), json!(next));
            c.say(format!("phase_transition_request: inferred next phase \"{next}\" for completed phase \"{current}\""));
        }
    }
    // Rule 5: a forward request that skips a phase comes back to the next one.
    let requested = n
        .get("phase_transition_request")
        .and_then(Json::as_str)
        .map(str::to_owned);
    if let (Some(i), Some(requested)) = (index, requested.clone())
        && !terminal
        && !review_only
        && completed(n)
        && !completion(n)
        && phases
            .iter()
            .position(|p| *p == requested)
            .is_some_and(|r| r > i + 1)
        && let Some(next) = &next
    {
        c.event(
            format!("phase_transition_request: corrected skip-forward \"{requested}\" to immediate next phase \"{next}\""),
            "phase_transition_request",
            json!(requested),
            json!(next),
            "skip_forward_phase_corrected_to_next_phase",
        );
        n.insert("phase_transition_request".into(), json!(next));
        let entry = config["routing"][next.as_str()]["entry_role"]
            .as_str()
            .filter(|e| !e.is_empty());
        let proposed = n.get("proposed_next_role").cloned().unwrap_or(Json::Null);
        let stale = proposed.as_str() == Some(requested.as_str());
        let illegal = proposed.as_str().is_some_and(|p| {
            p != "human" && !allowed.is_empty() && !allowed.iter().any(|a| a == p)
        });
        if let Some(entry) = entry
            && allowed.iter().any(|a| a == entry)
            && (stale || illegal)
        {
            c.event(
                format!(
                    "proposed_next_role: corrected \"{}\" to entry role \"{entry}\" for corrected phase \"{next}\"",
                    match &proposed {
                        Json::String(s) => s.clone(),
                        Json::Null => "undefined".into(),
                        other => other.to_string(),
                    }
                ),
                "proposed_next_role",
                proposed.clone(),
                json!(entry),
                "aligned_to_corrected_phase_entry_role",
            );
            n.insert("proposed_next_role".into(), json!(entry));
        }
    }
    // …and a review-only turn's request for an unknown or earlier phase goes forward.
    if let (Some(i), Some(requested)) = (index, requested)
        && review_only
        && completed(n)
        && !completion(n)
        && n.get("phase_transition_request").and_then(Json::as_str) == Some(requested.as_str())
    {
        let at = phases.iter().position(|p| *p == requested);
        let invalid = routing.is_none_or(|r| !r.contains_key(&requested));
        let backwards = at.is_some_and(|a| a <= i);
        if invalid || backwards {
            if let Some(next) = &next {
                n.insert("phase_transition_request".into(), json!(next));
                c.say(format!("phase_transition_request: corrected \"{requested}\" to forward phase \"{next}\""));
            } else if terminal {
                n.insert("phase_transition_request".into(), Json::Null);
                n.insert("run_completion_request".into(), json!(true));
                c.say(format!("phase_transition_request: corrected terminal/non-forward \"{requested}\" to run_completion_request: true"));
            }
        }
    }
}

/// An entry's `id`, when `valid` refuses it, rewritten to `<prefix>-NNN` (its place, from 1).
fn renumber(
    entry: &mut Map<String, Json>,
    at: &str,
    i: usize,
    prefix: &str,
    valid: impl Fn(&str) -> bool,
    kind: &str,
    c: &mut Notes,
) {
    let id = entry
        .get("id")
        .and_then(Json::as_str)
        .unwrap_or("")
        .to_owned();
    if !valid(&id) {
        let new = padded(prefix, i);
        c.event(
            format!(
                "{at}.id: rewritten \"{}\" → {new}",
                if id.is_empty() { "(missing)" } else { &id }
            ),
            format!("{at}.id"),
            entry.get("id").cloned().unwrap_or(Json::Null),
            json!(new),
            format!("invalid_{kind}_id_rewritten"),
        );
        entry.insert("id".into(), json!(new));
    }
}

/// An entry's blank `field` filled from the first of `sources` that has text.
fn fill(entry: &mut Map<String, Json>, at: &str, field: &str, sources: &[&str], c: &mut Notes) {
    if entry.get(field).is_some_and(nonblank) {
        return;
    }
    let found = sources.iter().find_map(|k| {
        entry
            .get(*k)
            .and_then(Json::as_str)
            .map(str::trim)
            .filter(|v| !v.is_empty())
            .map(|v| (*k, v.to_owned()))
    });
    if let Some((src, v)) = found {
        c.event(
            format!("{at}.{field}: copied from {src}"),
            format!("{at}.{field}"),
            entry.get(field).cloned().unwrap_or(Json::Null),
            json!(v),
            format!("copied_from_{src}"),
        );
        entry.insert(field.into(), json!(v));
    }
}

/// Whether the result declares produced files a checkpoint can carry.
fn checkpointable(tr: &Json) -> bool {
    tr["verification"]["produced_files"]
        .as_array()
        .into_iter()
        .flatten()
        .any(|p| {
            nonblank(&p["path"]) && (p["disposition"].is_null() || p["disposition"] == "artifact")
        })
}

// ---- A: schema ----

fn schema(tr: &Json) -> Vec<String> {
    let Some(o) = tr.as_object() else {
        return vec!["Turn result must be a JSON object.".into()];
    };
    let required = [
        "schema_version",
        "run_id",
        "turn_id",
        "role",
        "runtime_id",
        "status",
        "summary",
        "decisions",
        "objections",
        "files_changed",
        "verification",
        "artifact",
        "proposed_next_role",
    ];
    let missing: Vec<String> = required
        .iter()
        .filter(|f| !o.contains_key(**f))
        .map(|f| format!("Missing required field: {f}"))
        .collect();
    if !missing.is_empty() {
        return missing;
    }
    let mut e = Vec::new();
    if tr["schema_version"] != "1.0" {
        e.push(format!(
            "schema_version must be \"1.0\", got \"{}\".",
            text(&tr["schema_version"])
        ));
    }
    for k in ["run_id", "turn_id"] {
        if !nonblank(&tr[k]) {
            e.push(format!("{k} must be a non-empty string."));
        }
    }
    if !s(&tr["role"]).is_some_and(|r| ROLE.is_match(r)) {
        e.push("role must match pattern ^[a-z0-9_-]+$.".into());
    }
    if !nonblank(&tr["runtime_id"]) {
        e.push("runtime_id must be a non-empty string.".into());
    }
    if !s(&tr["status"]).is_some_and(|x| STATUSES.contains(&x)) {
        e.push(format!(
            "status must be one of: {}. Got \"{}\".",
            STATUSES.join(", "),
            text(&tr["status"])
        ));
    }
    if !nonblank(&tr["summary"]) {
        e.push("summary must be a non-empty string.".into());
    }
    if !s(&tr["proposed_next_role"]).is_some_and(|r| ROLE.is_match(r)) {
        e.push("proposed_next_role must match ^[a-z0-9_-]+$ or be \"human\".".into());
    }
    match tr["decisions"].as_array() {
        None => e.push("decisions must be an array.".into()),
        Some(list) => list
            .iter()
            .enumerate()
            .for_each(|(i, d)| e.extend(decision(d, i))),
    }
    match tr["objections"].as_array() {
        None => e.push("objections must be an array.".into()),
        Some(list) => list
            .iter()
            .enumerate()
            .for_each(|(i, d)| e.extend(objection(d, i))),
    }
    for key in ["files_changed", "artifacts_created"] {
        if key == "artifacts_created" && !o.contains_key(key) {
            continue;
        }
        match tr[key].as_array() {
            None => e.push(format!("{key} must be an array.")),
            Some(list) => {
                for (i, f) in list.iter().enumerate() {
                    match f.as_str() {
                        None => e.push(format!("{key}[{i}] must be a string.")),
                        Some(f) => e.extend(outside(f).map(|why| {
                            // Quoted with its escapes: a control character is shown, not sent.
                            format!("{key}[{i}] {f:?} {why}. Name each file by its path relative to the project root.")
                        })),
                    }
                }
            }
        }
    }
    match tr["verification"].as_object() {
        None => e.push("verification must be an object.".into()),
        Some(v) => match v.get("status") {
            None => e.push("verification.status is required.".into()),
            Some(st) if !s(st).is_some_and(|x| VERIFICATION_STATUSES.contains(&x)) => {
                e.push(format!(
                    "verification.status must be one of: {}.",
                    VERIFICATION_STATUSES.join(", ")
                ))
            }
            _ => {}
        },
    }
    match tr["artifact"].as_object() {
        None => e.push("artifact must be an object.".into()),
        Some(a) => match a.get("type") {
            None => e.push("artifact.type is required.".into()),
            Some(t) if !s(t).is_some_and(|x| ARTIFACT_TYPES.contains(&x)) => e.push(format!(
                "artifact.type must be one of: {}.",
                ARTIFACT_TYPES.join(", ")
            )),
            _ => {}
        },
    }
    let typed = |k: &str, ok: fn(&Json) -> bool, text: &str, e: &mut Vec<String>| {
        if o.get(k).is_some_and(|v| !v.is_null() && !ok(v)) {
            e.push(text.to_owned());
        }
    };
    typed(
        "phase_transition_request",
        Json::is_string,
        "phase_transition_request must be a string or null.",
        &mut e,
    );
    typed(
        "run_completion_request",
        Json::is_boolean,
        "run_completion_request must be a boolean or null.",
        &mut e,
    );
    typed(
        "needs_human_reason",
        Json::is_string,
        "needs_human_reason must be a string or null.",
        &mut e,
    );
    typed("cost", Json::is_object, "cost must be an object.", &mut e);
    if o.contains_key("delegations") {
        match tr["delegations"].as_array() {
            None => e.push("delegations must be an array.".into()),
            Some(list) => list
                .iter()
                .enumerate()
                .for_each(|(i, d)| e.extend(delegation(d, i))),
        }
    }
    e.extend(placeholders(tr));
    e
}

fn placeholders(tr: &Json) -> Vec<String> {
    let mut e = Vec::new();
    let mut check = |field: String, v: &Json| {
        if let Some(x) = v.as_str()
            && PLACEHOLDER.is_match(x)
        {
            e.push(format!(
                "{field} contains an unfilled template placeholder: \"{x}\"."
            ));
        }
    };
    check("summary".into(), &tr["summary"]);
    check("proposed_next_role".into(), &tr["proposed_next_role"]);
    for (i, d) in tr["decisions"].as_array().into_iter().flatten().enumerate() {
        check(format!("decisions[{i}].statement"), &d["statement"]);
        check(format!("decisions[{i}].rationale"), &d["rationale"]);
    }
    for (i, d) in tr["objections"]
        .as_array()
        .into_iter()
        .flatten()
        .enumerate()
    {
        check(
            format!("objections[{i}].against_turn_id"),
            &d["against_turn_id"],
        );
        check(format!("objections[{i}].statement"), &d["statement"]);
    }
    for (i, f) in tr["files_changed"]
        .as_array()
        .into_iter()
        .flatten()
        .enumerate()
    {
        check(format!("files_changed[{i}]"), f);
    }
    let v = &tr["verification"];
    if v.is_object() {
        for (i, c) in v["commands"].as_array().into_iter().flatten().enumerate() {
            check(format!("verification.commands[{i}]"), c);
        }
        check(
            "verification.evidence_summary".into(),
            &v["evidence_summary"],
        );
        for (i, m) in v["machine_evidence"]
            .as_array()
            .into_iter()
            .flatten()
            .enumerate()
        {
            check(
                format!("verification.machine_evidence[{i}].command"),
                &m["command"],
            );
        }
    }
    e
}

fn decision(d: &Json, i: usize) -> Vec<String> {
    let p = format!("decisions[{i}]");
    if !d.is_object() && !d.is_array() {
        return vec![format!("{p} must be an object.")];
    }
    let mut e = Vec::new();
    if !s(&d["id"]).is_some_and(is_decision_id) {
        e.push(format!("{p}.id must match pattern DEC-NNN."));
    }
    if !s(&d["category"]).is_some_and(|x| CATEGORIES.contains(&x)) {
        e.push(format!(
            "{p}.category must be one of: {}.",
            CATEGORIES.join(", ")
        ));
    }
    for k in ["statement", "rationale"] {
        if !nonblank(&d[k]) {
            e.push(format!("{p}.{k} must be a non-empty string."));
        }
    }
    if d.get("durability").is_some()
        && !s(&d["durability"]).is_some_and(|x| x == "run" || x == "repo")
    {
        e.push(format!("{p}.durability must be one of: run, repo."));
    }
    if let Some(o) = d.get("overrides") {
        if !s(o).is_some_and(is_decision_id) {
            e.push(format!("{p}.overrides must match pattern DEC-NNN."));
        }
        if *o == d["id"] {
            e.push(format!("{p}.overrides cannot reference itself."));
        }
    }
    e
}

fn objection(o: &Json, i: usize) -> Vec<String> {
    let p = format!("objections[{i}]");
    if !o.is_object() && !o.is_array() {
        return vec![format!("{p} must be an object.")];
    }
    let mut e = Vec::new();
    if !s(&o["id"]).is_some_and(|x| OBJ.is_match(x)) {
        e.push(format!("{p}.id must match pattern OBJ-NNN."));
    }
    if !s(&o["severity"]).is_some_and(|x| SEVERITIES.contains(&x)) {
        e.push(format!(
            "{p}.severity must be one of: {}.",
            SEVERITIES.join(", ")
        ));
    }
    if !nonblank(&o["statement"]) {
        e.push(format!("{p}.statement must be a non-empty string."));
    }
    if o.get("status").is_some()
        && !s(&o["status"]).is_some_and(|x| OBJECTION_STATUSES.contains(&x))
    {
        e.push(format!(
            "{p}.status must be one of: {}.",
            OBJECTION_STATUSES.join(", ")
        ));
    }
    e
}

fn delegation(d: &Json, i: usize) -> Vec<String> {
    let p = format!("delegations[{i}]");
    if !d.is_object() {
        return vec![format!("{p} must be an object.")];
    }
    let mut e = Vec::new();
    if !s(&d["id"]).is_some_and(|x| DEL.is_match(x)) {
        e.push(format!("{p}.id must match pattern del-NNN."));
    }
    if !s(&d["to_role"]).is_some_and(|x| ROLE.is_match(x)) {
        e.push(format!("{p}.to_role must match pattern ^[a-z0-9_-]+$."));
    }
    if !nonblank(&d["charter"]) {
        e.push(format!("{p}.charter must be a non-empty string."));
    }
    match d["acceptance_contract"]
        .as_array()
        .filter(|a| !a.is_empty())
    {
        None => e.push(format!(
            "{p}.acceptance_contract must be a non-empty array."
        )),
        Some(list) => {
            for (j, c) in list.iter().enumerate() {
                if !nonblank(c) {
                    e.push(format!(
                        "{p}.acceptance_contract[{j}] must be a non-empty string."
                    ));
                }
            }
        }
    }
    if d.get("required_decision_ids").is_some() {
        match d["required_decision_ids"]
            .as_array()
            .filter(|a| !a.is_empty())
        {
            None => e.push(format!(
                "{p}.required_decision_ids must be a non-empty array when provided."
            )),
            Some(list) => {
                let mut seen = std::collections::HashSet::new();
                for (j, id) in list.iter().enumerate() {
                    match s(id).filter(|x| is_decision_id(x)) {
                        None => e.push(format!(
                            "{p}.required_decision_ids[{j}] must match pattern DEC-NNN."
                        )),
                        Some(x) if !seen.insert(x) => e.push(format!(
                            "{p}.required_decision_ids contains duplicate \"{x}\"."
                        )),
                        Some(_) => {}
                    }
                }
            }
        }
    }
    e
}

// ---- B: assignment ----

fn assignment(tr: &Json, state: &Json, active: Option<&Json>) -> Vec<String> {
    if !state.is_object() {
        return vec!["Cannot validate assignment: state.json is not loaded.".into()];
    }
    let mut e = Vec::new();
    if let Some(run) = s(&state["run_id"]).filter(|r| !r.is_empty())
        && tr["run_id"] != run
    {
        e.push(format!(
            "run_id mismatch: turn result has \"{}\", state has \"{run}\".",
            text(&tr["run_id"])
        ));
    }
    let Some(turn) = active else {
        e.push("No active turn in state.json — cannot validate assignment.".into());
        return e;
    };
    for (field, state_field, says) in [
        ("turn_id", "turn_id", "state has"),
        ("role", "assigned_role", "state assigns"),
        ("runtime_id", "runtime_id", "state has"),
    ] {
        if let Some(want) = s(&turn[state_field]).filter(|w| !w.is_empty())
            && tr[field] != want
        {
            e.push(format!(
                "{field} mismatch: turn result has \"{}\", {says} \"{want}\".",
                text(&tr[field])
            ));
        }
    }
    e
}

// ---- C: artifact ----

/// `path` with `.`, empty segments and `..` folded, as the file system would read it from the
/// project root (`None` when it leaves the project).
fn lexical(path: &str) -> Option<String> {
    let mut parts: Vec<&str> = Vec::new();
    for seg in path.split('/') {
        match seg {
            "" | "." => {}
            ".." => {
                parts.pop()?;
            }
            s => parts.push(s),
        }
    }
    Some(parts.join("/"))
}

/// Why `path`, as a turn names a file it changed or created, is not a file of the project, if it
/// is not: an absolute path, one that climbs out with `..`, or one inside `.git`. The reference
/// accepts these and writes them to history (git itself tracks no path through a `.git`); a later checkpoint or a reader trusting history
/// would then act outside the project, so they stop at validation.
fn outside(path: &str) -> Option<&'static str> {
    if path.chars().any(char::is_control) {
        return Some("holds a control character, which no file name of the project has");
    }
    let absolute = path.starts_with(['/', '\\'])
        || path.as_bytes().get(1) == Some(&b':') && path.as_bytes()[0].is_ascii_alphabetic();
    if absolute {
        return Some("is an absolute path, outside the project");
    }
    match lexical(&path.replace('\\', "/")) {
        None => Some("climbs out of the project with \"..\""),
        Some(p) if p.split('/').any(|s| s.eq_ignore_ascii_case(".git")) => {
            Some("is inside .git, which no turn may change")
        }
        Some(p) if p.is_empty() => Some("names no file (the project root itself)"),
        Some(_) => None,
    }
}

/// Whether `path`, however it is spelled (`./`, `//`, `x/..`, a trailing `/`), names a file only
/// the orchestrator writes.
fn reserved(path: &str) -> bool {
    !path.starts_with('/') && lexical(path).is_some_and(|p| RESERVED_PATHS.contains(&p.as_str()))
}

fn review_path(f: &str) -> bool {
    f.starts_with(".planning/") || f.starts_with(".agentxchain/reviews/")
}

fn product_path(f: &str) -> bool {
    !f.trim().is_empty() && !review_path(f) && !f.starts_with(".agentxchain/staging/")
}

fn files(tr: &Json) -> Vec<&str> {
    tr["files_changed"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(Json::as_str)
        .collect()
}

/// Whether an accepted, completed implementation turn of `run_id` already changed product
/// files (`.agentxchain/history.jsonl`).
fn run_has_product_code(root: &Path, run_id: Option<&str>) -> bool {
    let Some(run) = run_id else { return false };
    // Read as every log is (`jsonl::read_all`, through `fsread`): a FIFO, a device or a link
    // out of the project in its place is not waited on or read.
    axc_core::jsonl::read_all(root, ".agentxchain/history.jsonl")
        .map(|t| t.entries)
        .unwrap_or_default()
        .iter()
        .any(|h| {
            h["run_id"] == run
                && h["status"] == "completed"
                && h["phase"] == "implementation"
                && h["files_changed"]
                    .as_array()
                    .into_iter()
                    .flatten()
                    .filter_map(Json::as_str)
                    .any(product_path)
        })
}

fn artifact(tr: &Json, config: &Json, state: &Json, root: &Path) -> (Vec<String>, Vec<String>) {
    let (mut e, mut w) = (Vec::new(), Vec::new());
    let role = s(&tr["role"]).unwrap_or("");
    let authority = s(&config["roles"][role]["write_authority"]);
    let kind = s(&tr["artifact"]["type"]);
    let changed = files(tr);
    let product: Vec<&str> = changed
        .iter()
        .copied()
        .filter(|f| !review_path(f))
        .collect();
    if authority == Some("review_only") {
        if !product.is_empty() {
            e.push(format!("Role \"{role}\" has review_only write authority but claims product file changes: {}", product.join(", ")));
        }
        if let Some(k) = kind.filter(|k| !k.is_empty() && *k != "review") {
            e.push(format!("Role \"{role}\" has review_only write authority but artifact type is \"{k}\" (must be \"review\")."));
        }
    }
    if kind == Some("workspace") {
        if let Some(a) = authority.filter(|a| !a.is_empty() && *a != "authoritative") {
            e.push(format!("Artifact type \"workspace\" requires authoritative write authority, but role \"{role}\" has \"{a}\"."));
        }
        let checkpointable = tr["verification"]["produced_files"]
            .as_array()
            .into_iter()
            .flatten()
            .any(|p| {
                nonblank(&p["path"])
                    && (p["disposition"].is_null() || p["disposition"] == "artifact")
            });
        if tr["files_changed"].as_array().is_none_or(Vec::is_empty) && !checkpointable {
            e.push("artifact.type: \"workspace\" but files_changed is empty. Use artifact type \"review\" for no-edit turns, or declare checkpointable verification.produced_files entries with disposition \"artifact\".".into());
        }
    }
    for f in &changed {
        if reserved(f) {
            e.push(format!(
                "Turn result claims modification of reserved path: {f}"
            ));
        }
    }
    if authority == Some("authoritative") && kind == Some("review") && !product.is_empty() {
        e.push(format!("Role \"{role}\" has authoritative write authority and changed product files ({}), but artifact type is \"review\". Use \"workspace\" or \"commit\" when product files are modified.", product.join(", ")));
    }
    if authority == Some("authoritative")
        && state["phase"] == "implementation"
        && tr["status"] == "completed"
    {
        let code: Vec<&str> = changed
            .iter()
            .copied()
            .filter(|f| product_path(f))
            .collect();
        if code.is_empty() {
            if !run_has_product_code(root, s(&state["run_id"])) {
                e.push(format!("Role \"{role}\" completed an implementation turn without product code changes in files_changed. Implementation-phase completion requires at least one non-planning, non-review repo path; planning artifacts alone are not sufficient."));
            }
        } else if code
            .iter()
            .all(|f| TEST_DIR.is_match(f) || TEST_FILE.is_match(f))
        {
            w.push(format!("Role \"{role}\" completed an implementation turn that changed only test files ({}) with no implementation source. This is valid for acceptance or verification work; if the objective was to implement behavior, review whether the turn is test-only before accepting.", code.join(", ")));
        }
    }
    let runtime = s(&config["runtimes"][s(&tr["runtime_id"]).unwrap_or("")]["type"]);
    if authority == Some("proposed")
        && matches!(runtime, Some("api_proxy" | "remote_agent"))
        && tr["status"] == "completed"
        && tr["proposed_changes"].as_array().is_none_or(Vec::is_empty)
        && tr["run_completion_request"] != true
    {
        e.push(format!(
            "Proposed {} turn completed but proposed_changes is empty or missing.",
            runtime.unwrap_or("")
        ));
    }
    if let Some(changes) = tr["proposed_changes"].as_array() {
        if authority == Some("review_only") {
            w.push("Turn result contains proposed_changes but role has review_only write authority — proposed_changes will be ignored.".into());
        }
        for (i, ch) in changes.iter().enumerate() {
            if !ch.is_object() && !ch.is_array() {
                e.push(format!("proposed_changes[{i}]: must be an object."));
                continue;
            }
            let path = s(&ch["path"]).filter(|p| !p.is_empty());
            if path.is_none() {
                e.push(format!(
                    "proposed_changes[{i}]: missing or invalid \"path\"."
                ));
            }
            let action = s(&ch["action"]);
            if !matches!(action, Some("create" | "modify" | "delete")) {
                e.push(format!("proposed_changes[{i}]: action must be \"create\", \"modify\", or \"delete\" (got \"{}\").", text(&ch["action"])));
            }
            if matches!(action, Some("create" | "modify")) && !ch["content"].is_string() {
                e.push(format!(
                    "proposed_changes[{i}]: content is required for \"{}\" action.",
                    action.unwrap_or("")
                ));
            }
            if let Some(p) = path.filter(|p| reserved(p)) {
                e.push(format!(
                    "proposed_changes[{i}]: cannot propose changes to reserved path \"{p}\"."
                ));
            }
        }
    }
    (e, w)
}

// ---- D: verification ----

fn summary_declares_exit(summary: &Json, command: &Json, code: i64) -> bool {
    let (Some(summary), Some(command)) = (summary.as_str(), command.as_str()) else {
        return false;
    };
    let norm = |x: &str| x.split_whitespace().collect::<Vec<_>>().join(" ");
    let summary = norm(summary);
    let command = norm(command);
    let mut snippets = vec![command.clone()];
    if let Some(m) = FIRST_TYPE.captures(&command) {
        snippets.push(format!("{} {}", &m[1], &m[2]));
    }
    let mentions = re(&format!(
        r"(?i)\b(?:exit(?:s|ed)?(?:\s+(?:code|with\s+code))?|returns?|returned)\s*{}\b",
        regex::escape(&code.to_string())
    ));
    snippets.iter().filter(|x| !x.is_empty()).any(|snip| {
        summary
            .match_indices(snip.as_str())
            .next()
            .is_some_and(|(i, _)| {
                let window: String = summary[i..]
                    .chars()
                    .take(snip.chars().count() + 160)
                    .collect();
                mentions.is_match(&window)
            })
    })
}

fn expected_nonzero(entry: &Json, summary: &Json) -> bool {
    let Some(code) = entry["exit_code"].as_i64().filter(|c| *c != 0) else {
        return false;
    };
    match entry["expected_exit_code"].as_i64() {
        Some(x) => x == code,
        None => summary_declares_exit(summary, &entry["command"], code),
    }
}

fn integer(v: &Json) -> bool {
    v.as_i64().is_some()
        || v.as_u64().is_some()
        || v.as_f64()
            .is_some_and(|f| f.fract() == 0.0 && f.is_finite())
}

fn verification(tr: &Json) -> (Vec<String>, Vec<String>) {
    let (mut e, mut w) = (Vec::new(), Vec::new());
    let v = &tr["verification"];
    if !v.is_object() {
        return (e, w);
    }
    let pass = v["status"] == "pass";
    if pass
        && v["commands"].as_array().is_none_or(Vec::is_empty)
        && v["machine_evidence"].as_array().is_none_or(Vec::is_empty)
        && !nonblank(&v["evidence_summary"])
    {
        w.push("verification.status is \"pass\" but no evidence provided (commands, machine_evidence, or evidence_summary).".into());
    }
    for (i, c) in v["commands"].as_array().into_iter().flatten().enumerate() {
        if !nonblank(c) {
            e.push(format!(
                "verification.commands[{i}] must be a non-empty string."
            ));
        }
    }
    if let Some(evidence) = v["machine_evidence"].as_array() {
        for (i, m) in evidence.iter().enumerate() {
            if !m.is_object() && !m.is_array() {
                e.push(format!(
                    "verification.machine_evidence[{i}] must be an object."
                ));
                continue;
            }
            if !nonblank(&m["command"]) {
                e.push(format!(
                    "verification.machine_evidence[{i}].command must be a non-empty string."
                ));
            }
            if !integer(&m["exit_code"]) {
                e.push(format!(
                    "verification.machine_evidence[{i}].exit_code must be an integer."
                ));
            }
            if m.get("expected_exit_code").is_some() && !integer(&m["expected_exit_code"]) {
                e.push(format!("verification.machine_evidence[{i}].expected_exit_code must be an integer when provided."));
            }
        }
        if pass {
            let nonzero: Vec<&Json> = evidence
                .iter()
                .filter(|m| m["exit_code"].as_f64().is_some_and(|c| c != 0.0))
                .collect();
            let unexpected = nonzero
                .iter()
                .filter(|m| !expected_nonzero(m, &v["evidence_summary"]))
                .count();
            if unexpected > 0 {
                e.push(format!("verification.status is \"pass\" but {unexpected} command(s) have non-zero exit codes that are not explicitly declared as expected failures. Set verification.machine_evidence[].expected_exit_code to the expected non-zero code, wrap expected-failure checks in a verifier that exits 0 only when the failure occurs as expected, or do not report \"pass\"."));
            }
            let expected = nonzero.len() - unexpected;
            if expected > 0 {
                w.push(format!(
                    "verification.status is \"pass\" with {expected} expected non-zero command(s)."
                ));
            }
        }
    }
    if let Some(produced) = v["produced_files"].as_array() {
        let declared: Vec<&str> = files(tr);
        let mut seen: Vec<(String, usize)> = Vec::new();
        for (i, p) in produced.iter().enumerate() {
            if !p.is_object() && !p.is_array() {
                e.push(format!(
                    "verification.produced_files[{i}] must be an object."
                ));
                continue;
            }
            let path = s(&p["path"]).unwrap_or("").trim().to_owned();
            if path.is_empty() {
                e.push(format!(
                    "verification.produced_files[{i}].path must be a non-empty string."
                ));
            }
            let disposition = if p["disposition"].is_null() {
                "artifact"
            } else {
                s(&p["disposition"]).unwrap_or("")
            };
            if disposition != "artifact" && disposition != "ignore" {
                e.push(format!("verification.produced_files[{i}].disposition must be \"artifact\" or \"ignore\"."));
            }
            if !path.is_empty() {
                match seen.iter().find(|(x, _)| *x == path) {
                    Some((_, j)) => e.push(format!("verification.produced_files[{i}].path duplicates \"{path}\" from verification.produced_files[{j}].")),
                    None => seen.push((path.clone(), i)),
                }
                if disposition == "ignore" && declared.contains(&path.as_str()) {
                    e.push(format!("verification.produced_files[{i}] marks \"{path}\" as ignore, but it is also listed in files_changed."));
                }
            }
        }
    }
    (e, w)
}

// ---- E: protocol ----

fn protocol(
    tr: &Json,
    state: &Json,
    config: &Json,
    active: Option<&Json>,
) -> (Vec<String>, Vec<String>) {
    let (mut e, mut w) = (Vec::new(), Vec::new());
    let role = s(&tr["role"]).unwrap_or("");
    let authority = s(&config["roles"][role]["write_authority"]);
    if config["rules"]["challenge_required"] != false
        && authority == Some("review_only")
        && tr["objections"].as_array().is_none_or(Vec::is_empty)
    {
        e.push(format!("Protocol violation: role \"{role}\" has review_only authority and must raise at least one objection (challenge requirement)."));
    }
    let phase = s(&state["phase"]);
    let routing = phase
        .map(|p| &config["routing"][p])
        .filter(|r| !r.is_null());
    let allowed: Vec<&str> = routing
        .map(|r| {
            r["allowed_next_roles"]
                .as_array()
                .into_iter()
                .flatten()
                .filter_map(Json::as_str)
                .collect()
        })
        .unwrap_or_default();
    if let (Some(_), Some(next)) = (
        routing,
        s(&tr["proposed_next_role"]).filter(|n| !n.is_empty()),
    ) && !allowed.contains(&next)
        && next != "human"
    {
        e.push(format!("proposed_next_role \"{next}\" is not in the allowed_next_roles for phase \"{}\": [{}].", phase.unwrap_or(""), allowed.join(", ")));
    }
    let request = s(&tr["phase_transition_request"]).filter(|r| !r.is_empty());
    if let Some(req) = request
        && config["routing"].is_object()
    {
        if config["routing"].get(req).is_none() {
            e.push(format!(
                "phase_transition_request \"{req}\" is not a defined phase in routing."
            ));
        } else if let Some(current) = phase.filter(|p| !p.is_empty()) {
            match gates::next_phase(config, current) {
                None => e.push(format!("phase_transition_request \"{req}\" is invalid in final phase \"{current}\"; use run_completion_request instead.")),
                Some(next) if next != req => e.push(format!("phase_transition_request \"{req}\" is invalid from phase \"{current}\"; next phase is \"{next}\".")),
                Some(_) => {}
            }
        }
    }
    let completes = truthy(&tr["run_completion_request"]);
    if completes && request.is_some() {
        e.push("run_completion_request and phase_transition_request are mutually exclusive — set one or neither, not both.".into());
    }
    if tr["status"] == "needs_human" && !nonblank(&tr["needs_human_reason"]) {
        w.push("status is \"needs_human\" but needs_human_reason is empty.".into());
    }
    if let Some(dels) = tr["delegations"].as_array().filter(|d| !d.is_empty()) {
        if dels.len() > 5 {
            e.push(format!(
                "Maximum 5 delegations per turn (got {}).",
                dels.len()
            ));
        }
        if completes {
            e.push("delegations are mutually exclusive with run_completion_request — a turn cannot delegate and complete the run.".into());
        }
        if active.is_some_and(|t| truthy(&t["delegation_context"])) {
            e.push("Delegation review turns cannot contain further delegations.".into());
        }
        let mut seen = std::collections::HashSet::new();
        for d in dels {
            let id = text(&d["id"]);
            if !seen.insert(id.clone()) {
                e.push(format!("Duplicate delegation id \"{id}\"."));
            }
            let to = text(&d["to_role"]);
            if d["to_role"] == tr["role"] {
                e.push(format!(
                    "Role \"{role}\" cannot delegate to itself (delegation {id})."
                ));
            }
            if config["roles"].get(&to).is_none_or(|r| !truthy(r)) {
                e.push(format!(
                    "Delegation to_role \"{to}\" is not a defined role (delegation {id})."
                ));
            }
            if routing.is_some()
                && truthy(&d["to_role"])
                && !allowed.is_empty()
                && !allowed.contains(&to.as_str())
            {
                e.push(format!("Delegation to_role \"{to}\" is not in allowed_next_roles for phase \"{}\": [{}] (delegation {id}).", phase.unwrap_or(""), allowed.join(", ")));
            }
        }
    }
    if let Some(review) = active
        .map(|t| &t["delegation_review"])
        .filter(|r| truthy(r))
    {
        let unmet: Vec<String> = review["results"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(|r| {
                let missing: Vec<String> = r["missing_decision_ids"]
                    .as_array()?
                    .iter()
                    .map(text)
                    .collect();
                (!missing.is_empty())
                    .then(|| format!("{}: {}", text(&r["delegation_id"]), missing.join(", ")))
            })
            .collect();
        if !unmet.is_empty() {
            let detail = unmet.join("; ");
            if request.is_some() {
                e.push(format!("Delegation review cannot request phase transition while required child decisions are missing: {detail}."));
            }
            if completes {
                e.push(format!("Delegation review cannot request run completion while required child decisions are missing: {detail}."));
            }
        }
    }
    (e, w)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reserved_paths_are_matched_however_they_are_spelled() {
        for p in [
            ".agentxchain/state.json",
            "./.agentxchain/state.json",
            ".agentxchain//state.json",
            ".agentxchain/./state.json",
            "x/../.agentxchain/state.json",
            ".agentxchain/state.json/",
            "./.agentxchain/history.jsonl",
        ] {
            assert!(reserved(p), "{p}");
        }
        for p in [
            "src/state.json",
            ".agentxchain/staging/x.json",
            "../.agentxchain/state.json",
        ] {
            assert!(!reserved(p), "{p}");
        }
    }

    #[test]
    fn a_file_a_turn_names_must_be_the_projects_own() {
        for p in [
            "../x",
            "a/../../x",
            "/etc/passwd",
            "\\\\host\\share",
            "C:\\x",
            "c:/x",
            "..\\x",
            ".git",
            ".git/config",
            "./.git/hooks/x",
            "a/.Git/config",
            "x/../.git/config",
            "",
            ".",
            "a/..",
            "./",
            "real.txt\0",
            ".git\u{0}/x",
            "a\nb",
            "\u{1b}]0;PWN\u{7}",
        ] {
            assert!(outside(p).is_some(), "{p:?}");
        }
        for p in [
            "src/a.rs",
            "a/../b",
            "./b",
            ".gitignore",
            ".github/workflows/ci.yml",
            "x.git/y",
            "ab:c",
        ] {
            assert_eq!(outside(p), None, "{p}");
        }
    }

    #[test]
    fn an_expected_failure_named_in_the_summary_is_matched_case_insensitively() {
        let summary = json!("npm test EXITED WITH CODE 1 as expected");
        assert!(summary_declares_exit(&summary, &json!("npm test"), 1));
        assert!(!summary_declares_exit(&summary, &json!("npm test"), 2));
        assert!(FIRST_TYPE.is_match("x --FIRST-TYPE y"));
    }
}
