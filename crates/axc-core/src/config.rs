//! `agentxchain.json`: root discovery, version detection, validation of the core sections and
//! the normalized `project`.

use std::path::{Path, PathBuf};

use serde_json::{Map, Value, json};
use thiserror::Error;

pub const CONFIG_FILE: &str = "agentxchain.json";

const WRITE_AUTHORITIES: [&str; 3] = ["authoritative", "proposed", "review_only"];
const RUNTIME_TYPES: [&str; 5] = ["manual", "local_cli", "api_proxy", "mcp", "remote_agent"];
const API_PROXY_PROVIDERS: [&str; 4] = ["anthropic", "openai", "google", "ollama"];

/// Why a config could not be used. `Display` is the warning's text after `  Warning: `.
#[derive(Debug, Error, Clone, PartialEq, Eq)]
pub enum ConfigError {
    #[error("agentxchain.json is invalid JSON: {0}")]
    InvalidJson(String),
    #[error("agentxchain.json has issues: {}", .0.join(", "))]
    Issues(Vec<String>),
    #[error("agentxchain.json could not be read: {0}")]
    Unreadable(String),
}

/// The two config generations.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ProtocolMode {
    /// `schema_version` `"1.0"` or `4`.
    Governed,
    /// `version` `3`.
    Legacy,
}

impl ProtocolMode {
    pub fn as_str(self) -> &'static str {
        match self {
            ProtocolMode::Governed => "governed",
            ProtocolMode::Legacy => "legacy",
        }
    }
}

/// A loaded, validated config.
#[derive(Debug, Clone, PartialEq)]
pub struct Config {
    pub mode: ProtocolMode,
    /// `{id, name, goal?, default_branch}`.
    pub project: Value,
    /// Where the run state lives, relative to the root.
    pub state_file: String,
    /// `budget.per_run_max_usd`, when configured.
    pub per_run_max_usd: Option<f64>,
    /// The file as parsed.
    pub raw: Value,
}

/// The nearest ancestor of `start` (inclusive) that holds `agentxchain.json`.
pub fn find_root(start: &Path) -> Option<PathBuf> {
    start
        .ancestors()
        .find(|dir| dir.join(CONFIG_FILE).is_file())
        .map(Path::to_path_buf)
}

/// Reads and validates `<root>/agentxchain.json`.
pub fn load(root: &Path) -> Result<Config, ConfigError> {
    let text = fsread::read_inside(root, Path::new(CONFIG_FILE), crate::util::MAX_STATE_BYTES)
        .map_err(|e| ConfigError::Unreadable(e.to_string()))?;
    let raw: Value =
        serde_json::from_slice(&text).map_err(|e| ConfigError::InvalidJson(e.to_string()))?;
    from_value(raw)
}

/// Validates a parsed config.
pub fn from_value(raw: Value) -> Result<Config, ConfigError> {
    let Some(obj) = raw.as_object() else {
        return Err(ConfigError::Issues(vec![UNRECOGNIZED.into()]));
    };
    let governed = matches!(obj.get("schema_version"), Some(Value::String(s)) if s == "1.0")
        || obj.get("schema_version").and_then(Value::as_f64) == Some(4.0);
    let legacy = obj.get("version").and_then(Value::as_f64) == Some(3.0);
    if governed {
        let errors = validate_governed(obj);
        if !errors.is_empty() {
            return Err(ConfigError::Issues(errors));
        }
        let per_run = obj
            .get("budget")
            .and_then(|b| b.get("per_run_max_usd"))
            .and_then(Value::as_f64);
        Ok(Config {
            mode: ProtocolMode::Governed,
            project: governed_project(obj.get("project")),
            state_file: ".agentxchain/state.json".into(),
            per_run_max_usd: per_run,
            raw,
        })
    } else if legacy {
        let errors = validate_legacy(obj);
        if !errors.is_empty() {
            return Err(ConfigError::Issues(errors));
        }
        let name = obj
            .get("project")
            .and_then(Value::as_str)
            .unwrap_or("Unknown Project");
        let state_file = obj
            .get("state_file")
            .and_then(Value::as_str)
            .unwrap_or("state.json")
            .to_owned();
        Ok(Config {
            mode: ProtocolMode::Legacy,
            project: json!({"id": slugify(name), "name": name, "default_branch": "main"}),
            state_file,
            per_run_max_usd: None,
            raw,
        })
    } else {
        Err(ConfigError::Issues(vec![UNRECOGNIZED.into()]))
    }
}

const UNRECOGNIZED: &str =
    "Unrecognized config format. Expected version: 3 or schema_version: \"1.0\" / 4";

fn governed_project(project: Option<&Value>) -> Value {
    let text = |k: &str| {
        project
            .and_then(|p| p.get(k))
            .and_then(Value::as_str)
            .filter(|s| !s.is_empty())
    };
    let mut m = Map::new();
    m.insert("id".into(), json!(text("id").unwrap_or("unknown")));
    m.insert("name".into(), json!(text("name").unwrap_or("Unknown")));
    if let Some(goal) = text("goal").map(str::trim).filter(|g| !g.is_empty()) {
        m.insert("goal".into(), json!(goal));
    }
    m.insert(
        "default_branch".into(),
        json!(text("default_branch").unwrap_or("main")),
    );
    Value::Object(m)
}

fn slugify(s: &str) -> String {
    let mut out = String::new();
    let mut dash = false;
    for c in s.to_lowercase().chars() {
        if c.is_ascii_lowercase() || c.is_ascii_digit() {
            out.push(c);
            dash = false;
        } else if !dash {
            out.push('-');
            dash = true;
        }
    }
    out.trim_matches('-').to_owned()
}

fn non_empty_str(v: Option<&Value>) -> bool {
    v.and_then(Value::as_str)
        .is_some_and(|s| !s.trim().is_empty())
}

fn is_id(s: &str) -> bool {
    !s.is_empty()
        && s.bytes()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'_' || b == b'-')
}

fn is_phase_name(s: &str) -> bool {
    let mut bytes = s.bytes();
    bytes.next().is_some_and(|b| b.is_ascii_lowercase())
        && bytes.all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'_' || b == b'-')
}

fn validate_legacy(obj: &Map<String, Value>) -> Vec<String> {
    let mut errors = Vec::new();
    if !non_empty_str(obj.get("project")) {
        errors.push("project must be a non-empty string".to_owned());
    }
    match obj.get("agents").and_then(Value::as_object) {
        None => errors.push("agents must be an object".to_owned()),
        Some(agents) => {
            for (id, agent) in agents {
                if !is_id(id) {
                    errors.push(format!("Invalid agent id: \"{id}\""));
                }
                if !agent.is_object() {
                    errors.push(format!("Agent \"{id}\" must be an object"));
                    continue;
                }
                if !non_empty_str(agent.get("name")) {
                    errors.push(format!("Agent \"{id}\": name required"));
                }
                if !non_empty_str(agent.get("mandate")) {
                    errors.push(format!("Agent \"{id}\": mandate required"));
                }
            }
        }
    }
    errors
}

/// The reference's checks of the core sections of a governed (`schema_version: "1.0"`) config:
/// project, roles, runtimes and their cross-references, routing, gates, budget. Unknown keys
/// are tolerated. Each issue is a sentence naming the field.
pub fn validate_governed(obj: &Map<String, Value>) -> Vec<String> {
    let mut errors = Vec::new();
    match obj.get("project").filter(|p| p.is_object()) {
        None => errors.push("project must be an object with id and name".to_owned()),
        Some(p) => {
            if !non_empty_str(p.get("id")) {
                errors.push("project.id must be a non-empty string".to_owned());
            }
            if !non_empty_str(p.get("name")) {
                errors.push("project.name must be a non-empty string".to_owned());
            }
            match p.get("goal") {
                None | Some(Value::Null) => {}
                Some(Value::String(g)) if g.trim().is_empty() => {
                    errors.push("project.goal must be a non-empty string when provided".to_owned());
                }
                Some(Value::String(g)) if g.trim().encode_utf16().count() > 500 => {
                    errors.push("project.goal must be 500 characters or fewer".to_owned());
                }
                Some(Value::String(_)) => {}
                Some(_) => errors.push("project.goal must be a string".to_owned()),
            }
        }
    }
    let roles = obj.get("roles").and_then(Value::as_object);
    let runtimes = obj.get("runtimes").and_then(Value::as_object);
    match roles {
        None => errors.push("roles must be an object".to_owned()),
        Some(roles) => {
            for (id, role) in roles {
                if !is_id(id) {
                    errors.push(format!("Invalid role id: \"{id}\""));
                }
                if !role.is_object() {
                    errors.push(format!("Role \"{id}\" must be an object"));
                    continue;
                }
                if !non_empty_str(role.get("title")) {
                    errors.push(format!("Role \"{id}\": title required"));
                }
                if !non_empty_str(role.get("mandate")) {
                    errors.push(format!("Role \"{id}\": mandate required"));
                }
                if !role
                    .get("write_authority")
                    .and_then(Value::as_str)
                    .is_some_and(|w| WRITE_AUTHORITIES.contains(&w))
                {
                    errors.push(format!(
                        "Role \"{id}\": write_authority must be one of: {}",
                        WRITE_AUTHORITIES.join(", ")
                    ));
                }
                match role.get("decision_authority") {
                    None | Some(Value::Null) => {}
                    Some(v) if v.as_u64().is_some_and(|n| n <= 99) => {}
                    Some(_) => errors.push(format!(
                        "Role \"{id}\": decision_authority must be an integer between 0 and 99"
                    )),
                }
                if !non_empty_str(role.get("runtime")) {
                    errors.push(format!("Role \"{id}\": runtime required"));
                }
            }
        }
    }
    match runtimes {
        None => errors.push("runtimes must be an object".to_owned()),
        Some(runtimes) => {
            for (id, rt) in runtimes {
                if !rt.is_object() {
                    errors.push(format!("Runtime \"{id}\" must be an object"));
                    continue;
                }
                let ty = rt.get("type").and_then(Value::as_str);
                if !ty.is_some_and(|t| RUNTIME_TYPES.contains(&t)) {
                    errors.push(format!(
                        "Runtime \"{id}\": type must be one of: {}",
                        RUNTIME_TYPES.join(", ")
                    ));
                }
                if ty == Some("api_proxy") {
                    let provider = rt
                        .get("provider")
                        .and_then(Value::as_str)
                        .filter(|p| !p.trim().is_empty());
                    match provider {
                        None => errors.push(format!(
                            "Runtime \"{id}\": api_proxy requires \"provider\" (e.g. \"anthropic\", \"openai\")"
                        )),
                        Some(p) if !API_PROXY_PROVIDERS.contains(&p) => errors.push(format!(
                            "Runtime \"{id}\": api_proxy provider must be one of: {}",
                            API_PROXY_PROVIDERS.join(", ")
                        )),
                        Some(_) => {}
                    }
                    if !non_empty_str(rt.get("model")) {
                        errors.push(format!(
                            "Runtime \"{id}\": api_proxy requires \"model\" (e.g. \"claude-sonnet-4-6\")"
                        ));
                    }
                    if !non_empty_str(rt.get("auth_env")) && provider != Some("ollama") {
                        errors.push(format!(
                            "Runtime \"{id}\": api_proxy requires \"auth_env\" (environment variable name for API key)"
                        ));
                    }
                }
            }
        }
    }
    if let (Some(roles), Some(runtimes)) = (roles, runtimes) {
        for (id, role) in roles {
            let Some(rt_id) = role
                .get("runtime")
                .and_then(Value::as_str)
                .filter(|s| !s.is_empty())
            else {
                continue;
            };
            match runtimes.get(rt_id) {
                None => errors.push(format!(
                    "Role \"{id}\" references unknown runtime \"{rt_id}\""
                )),
                Some(rt) => {
                    let review_only =
                        role.get("write_authority").and_then(Value::as_str) == Some("review_only");
                    if review_only && rt.get("type").and_then(Value::as_str) == Some("local_cli") {
                        errors.push(format!(
                            "Role \"{id}\" is review_only but uses local_cli runtime \"{rt_id}\" — review_only roles should not have authoritative write access"
                        ));
                    }
                }
            }
        }
    }
    let routing = obj.get("routing").and_then(Value::as_object);
    if let Some(routing) = routing {
        for (phase, route) in routing {
            if !is_phase_name(phase) {
                errors.push(format!(
                    "Routing phase name \"{phase}\" must be lowercase alphanumeric starting with a letter (hyphens and underscores allowed)"
                ));
            }
            if let (Some(entry), Some(roles)) =
                (route.get("entry_role").and_then(Value::as_str), roles)
                && !entry.is_empty()
                && !roles.contains_key(entry)
            {
                errors.push(format!(
                    "Routing \"{phase}\": entry_role \"{entry}\" is not a defined role"
                ));
            }
            if let (Some(next), Some(roles)) = (
                route.get("allowed_next_roles").and_then(Value::as_array),
                roles,
            ) {
                for r in next {
                    let name = r.as_str().unwrap_or_default();
                    if name != "human" && !roles.contains_key(name) {
                        errors.push(format!("Routing \"{phase}\": allowed_next_roles references unknown role \"{}\"", display(r)));
                    }
                }
            }
            if let Some(m) = route.get("max_concurrent_turns")
                && !m.as_u64().is_some_and(|n| (1..=4).contains(&n))
            {
                errors.push(format!(
                    "Routing \"{phase}\": max_concurrent_turns must be an integer between 1 and 4"
                ));
            }
        }
    }
    // The reference validates gates when they are truthy (an empty list too).
    if let Some(gates) = obj.get("gates").filter(|g| truthy(g)) {
        validate_gates(gates, &mut errors);
        if let (Some(gates), Some(routing)) = (gates.as_object(), routing) {
            for route in routing.values() {
                if let Some(gate) = route
                    .get("exit_gate")
                    .and_then(Value::as_str)
                    .filter(|g| !g.is_empty())
                    && gates.get(gate).is_none_or(|g| !truthy(g))
                {
                    errors.push(format!("Routing references unknown gate: \"{gate}\""));
                }
            }
        }
    }
    if let Some(budget) = obj.get("budget").filter(|b| !b.is_null()) {
        validate_budget(budget, &mut errors);
    }
    if let Some(ap) = obj.get("approval_policy").filter(|a| !a.is_null()) {
        validate_approval_policy(ap, routing, &mut errors);
    }
    if let Some(t) = obj.get("timeouts").filter(|t| !t.is_null()) {
        validate_timeouts(t, routing, &mut errors);
    }
    if let Some(r) = obj.get("run_loop") {
        validate_run_loop(r, &mut errors);
    }
    if let Some(h) = obj.get("hooks").filter(|h| !h.is_null()) {
        validate_hooks(h, &mut errors);
    }
    // Stricter than the reference, which compares the attempt with whatever is there (so -1
    // escalates every first rejection and 2.5 allows three attempts): a count is a count.
    match obj.get("rules").map(|r| r.get("max_turn_retries")) {
        None | Some(None) | Some(Some(Value::Null)) => {}
        Some(Some(v)) if v.as_u64().is_some() => {}
        Some(Some(_)) => errors.push(
            "rules.max_turn_retries must be a non-negative integer (the attempts a turn gets before its rejection escalates to a person)".to_owned(),
        ),
    }
    if let Some(wk) = obj.get("workflow_kit") {
        validate_workflow_kit(wk, obj.get("roles"), &mut errors);
    }
    errors
}

/// JavaScript's truthiness of a JSON value.
fn truthy(v: &Value) -> bool {
    match v {
        Value::Null => false,
        Value::Bool(b) => *b,
        Value::Number(n) => n.as_f64().is_some_and(|f| f != 0.0),
        Value::String(s) => !s.is_empty(),
        _ => true,
    }
}

const GATE_ACTION_TIMEOUT_MS: std::ops::RangeInclusive<u64> = 1000..=3_600_000;

/// `gates` as the reference's `validateGateActionsConfig` and credentialed check admit them:
/// an object of objects; `gate_actions`, when given, a non-empty list of `{run, label?,
/// timeout_ms?}` on a gate a person approves.
fn validate_gates(gates: &Value, errors: &mut Vec<String>) {
    let Some(gates) = gates.as_object() else {
        errors.push("gates must be an object".to_owned());
        return;
    };
    for (id, gate) in gates {
        let Some(gate) = gate.as_object() else {
            errors.push(format!("Gate \"{id}\" must be an object"));
            continue;
        };
        if let Some(actions) = gate.get("gate_actions") {
            match actions.as_array().filter(|a| !a.is_empty()) {
                None => errors.push(format!(
                    "Gate \"{id}\": gate_actions must be a non-empty array when provided"
                )),
                Some(actions) => {
                    if gate.get("requires_human_approval") != Some(&Value::Bool(true)) {
                        errors.push(format!(
                            "Gate \"{id}\": gate_actions require requires_human_approval: true"
                        ));
                    }
                    for (i, action) in actions.iter().enumerate() {
                        let prefix = format!("gates.{id}.gate_actions[{i}]");
                        let Some(action) = action.as_object() else {
                            errors.push(format!("{prefix} must be an object"));
                            continue;
                        };
                        let nonblank = |v: Option<&Value>| {
                            v.and_then(Value::as_str)
                                .is_some_and(|s| !s.trim().is_empty())
                        };
                        if !nonblank(action.get("run")) {
                            errors.push(format!("{prefix}.run must be a non-empty string"));
                        }
                        if action.contains_key("label") && !nonblank(action.get("label")) {
                            errors.push(format!(
                                "{prefix}.label must be a non-empty string when provided"
                            ));
                        }
                        if let Some(t) = action.get("timeout_ms")
                            && !whole_number(t).is_some_and(|t| GATE_ACTION_TIMEOUT_MS.contains(&t))
                        {
                            errors.push(format!(
                                "{prefix}.timeout_ms must be an integer between {} and {} when provided",
                                GATE_ACTION_TIMEOUT_MS.start(),
                                GATE_ACTION_TIMEOUT_MS.end()
                            ));
                        }
                    }
                }
            }
        }
        if let Some(c) = gate.get("credentialed")
            && !c.is_boolean()
        {
            errors.push(format!(
                "gates.{id}.credentialed must be a boolean when provided"
            ));
        }
    }
}

const PHASE_TEMPLATES: [&str; 5] = [
    "planning-default",
    "implementation-default",
    "qa-default",
    "architecture-review",
    "security-review",
];
const SEMANTIC_IDS: [&str; 7] = [
    "pm_signoff",
    "system_spec",
    "implementation_notes",
    "acceptance_matrix",
    "ship_verdict",
    "release_notes",
    "section_check",
];

/// The built-in workflow-kit artifacts of a phase: `(path, semantics)`.
pub fn default_workflow_artifacts(phase: &str) -> &'static [(&'static str, Option<&'static str>)] {
    match phase {
        "planning" => &[
            (".planning/PM_SIGNOFF.md", Some("pm_signoff")),
            (".planning/SYSTEM_SPEC.md", Some("system_spec")),
            (".planning/ROADMAP.md", None),
        ],
        "implementation" => &[(
            ".planning/IMPLEMENTATION_NOTES.md",
            Some("implementation_notes"),
        )],
        "qa" => &[
            (".planning/acceptance-matrix.md", Some("acceptance_matrix")),
            (".planning/ship-verdict.md", Some("ship_verdict")),
            (".planning/RELEASE_NOTES.md", Some("release_notes")),
        ],
        _ => &[],
    }
}

/// A workflow-kit phase template's artifacts (none for an unknown one).
pub fn workflow_template_artifacts(template: &str) -> Vec<Value> {
    let phase = template.strip_suffix("-default").unwrap_or("");
    let mut list: Vec<Value> = default_workflow_artifacts(phase)
        .iter()
        .map(|(p, s)| json!({"path": p, "semantics": s, "required": true}))
        .collect();
    let sections = |s: &[&str]| json!({"required_sections": s});
    match template {
        "architecture-review" => list.push(json!({"path": ".planning/ARCHITECTURE.md",
            "semantics": "section_check", "required": true,
            "semantics_config": sections(&["## Context", "## Proposed Design", "## Trade-offs", "## Risks"])})),
        "security-review" => list.push(json!({"path": ".planning/SECURITY_REVIEW.md",
            "semantics": "section_check", "required": true,
            "semantics_config": sections(&["## Threat Model", "## Findings", "## Verdict"])})),
        _ => {}
    }
    list
}

/// `workflow_kit` as the reference's `validateWorkflowKitConfig` admits it (its errors; its
/// warnings are not refusals): phases by valid names, each a template, artifacts or both,
/// each artifact a path inside the project once, known semantics with what they need, a
/// boolean `required`, an `owned_by` naming a role.
fn validate_workflow_kit(wk: &Value, roles: Option<&Value>, errors: &mut Vec<String>) {
    if wk.is_null() || wk.as_object().is_some_and(Map::is_empty) {
        return;
    }
    let Some(wk) = wk.as_object() else {
        errors.push("workflow_kit must be an object".to_owned());
        return;
    };
    let Some(phases) = wk.get("phases") else {
        return;
    };
    let Some(phases) = phases.as_object() else {
        errors.push("workflow_kit.phases must be an object".to_owned());
        return;
    };
    let roles = roles.and_then(Value::as_object);
    for (phase, cfg) in phases {
        let valid_name = phase.chars().next().is_some_and(|c| c.is_ascii_lowercase())
            && phase
                .chars()
                .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_' || c == '-');
        if !valid_name {
            errors.push(format!("workflow_kit phase name \"{phase}\" must be lowercase alphanumeric starting with a letter (hyphens and underscores allowed)"));
            continue;
        }
        let Some(cfg) = cfg.as_object() else {
            errors.push(format!("workflow_kit.phases.{phase} must be an object"));
            continue;
        };
        let mut template = None;
        let mut template_valid = true;
        if let Some(t) = cfg.get("template") {
            template_valid = false;
            match t.as_str().filter(|t| !t.trim().is_empty()) {
                None => errors.push(format!(
                    "workflow_kit.phases.{phase}.template must be a non-empty string"
                )),
                Some(t) if !PHASE_TEMPLATES.contains(&t) => errors.push(format!(
                    "workflow_kit.phases.{phase}.template \"{t}\" is unknown; valid values: {}",
                    PHASE_TEMPLATES.join(", ")
                )),
                Some(t) => {
                    template = Some(t);
                    template_valid = true;
                }
            }
        }
        let explicit = match cfg.get("artifacts") {
            Some(Value::Array(a)) => a.as_slice(),
            Some(_) => {
                errors.push(format!(
                    "workflow_kit.phases.{phase}.artifacts must be an array"
                ));
                continue;
            }
            None => &[],
        };
        let mut seen_explicit: Vec<&str> = Vec::new();
        for a in explicit {
            if let Some(p) = a["path"].as_str().filter(|p| !p.trim().is_empty()) {
                if seen_explicit.contains(&p) {
                    errors.push(format!(
                        "duplicate artifact path \"{p}\" in phase \"{phase}\""
                    ));
                    continue;
                }
                seen_explicit.push(p);
            }
        }
        if !cfg.contains_key("template") && !cfg.contains_key("artifacts") {
            errors.push(format!(
                "workflow_kit.phases.{phase} must declare template, artifacts, or both"
            ));
            continue;
        }
        // The template's artifacts first, each explicit one merged into the one of its path
        // (the reference's `expandWorkflowKitPhaseArtifacts`); with a template that is not
        // valid, the explicit ones as they are.
        let mut expanded: Vec<Value> = template
            .map(workflow_template_artifacts)
            .unwrap_or_default();
        if template_valid {
            for a in explicit {
                let at = a["path"]
                    .as_str()
                    .filter(|_| a.is_object())
                    .and_then(|p| expanded.iter().position(|e| e["path"] == p));
                match (at, a.as_object()) {
                    (Some(i), Some(fields)) => {
                        for (k, v) in fields {
                            expanded[i][k.as_str()] = v.clone();
                        }
                    }
                    _ => expanded.push(a.clone()),
                }
            }
        } else {
            expanded = explicit.to_vec();
        }
        let mut seen: Vec<String> = Vec::new();
        for (i, a) in expanded.iter().enumerate() {
            let prefix = format!("workflow_kit.phases.{phase}.artifacts[{i}]");
            let Some(art) = a.as_object() else {
                errors.push(format!("{prefix} must be an object"));
                continue;
            };
            let Some(path) = art
                .get("path")
                .and_then(Value::as_str)
                .filter(|p| !p.trim().is_empty())
            else {
                errors.push(format!("{prefix} requires a non-empty path"));
                continue;
            };
            if path.contains("..") {
                errors.push(format!(
                    "{prefix} path must not traverse above project root (contains \"..\")"
                ));
                continue;
            }
            if seen.iter().any(|p| p == path) {
                errors.push(format!(
                    "duplicate artifact path \"{path}\" in phase \"{phase}\""
                ));
            }
            seen.push(path.to_owned());
            match art.get("semantics") {
                None | Some(Value::Null) => {}
                Some(Value::String(id)) if !SEMANTIC_IDS.contains(&id.as_str()) => {
                    errors.push(format!(
                        "{prefix} unknown semantics validator \"{id}\"; valid values: {}",
                        SEMANTIC_IDS.join(", ")
                    ))
                }
                Some(Value::String(id)) if id == "section_check" => {
                    match art.get("semantics_config").filter(|c| truthy(c) && (c.is_object() || c.is_array())) {
                        None => errors.push(format!("{prefix} section_check requires semantics_config")),
                        Some(c) => match c["required_sections"].as_array().filter(|s| !s.is_empty()) {
                            None => errors.push(format!("{prefix} section_check requires semantics_config.required_sections as a non-empty array")),
                            Some(sections) => {
                                if sections.iter().any(|s| s.as_str().is_none_or(|s| s.trim().is_empty())) {
                                    errors.push(format!("{prefix} section_check required_sections must contain non-empty strings"));
                                }
                            }
                        },
                    }
                }
                Some(Value::String(_)) => {}
                Some(_) => errors.push(format!("{prefix} semantics must be a string or null")),
            }
            if let Some(r) = art.get("required")
                && !r.is_boolean()
            {
                errors.push(format!("{prefix} required must be a boolean"));
            }
            match art.get("owned_by") {
                None | Some(Value::Null) => {}
                Some(Value::String(o)) => {
                    let valid = !o.is_empty()
                        && o.chars().all(|c| {
                            c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_' || c == '-'
                        });
                    if !valid {
                        errors.push(format!("{prefix} owned_by \"{o}\" is not a valid role ID (must be lowercase alphanumeric with hyphens/underscores)"));
                    } else if roles.is_some_and(|r| !r.contains_key(o)) {
                        errors.push(format!(
                            "{prefix} owned_by \"{o}\" does not reference a defined role"
                        ));
                    }
                }
                Some(_) => errors.push(format!("{prefix} owned_by must be a string")),
            }
        }
    }
}

const TIMEOUT_ACTIONS: [&str; 3] = ["escalate", "warn", "skip_phase"];

/// `timeouts` (and the routing's per-phase overrides), with the reference's texts: the turn
/// deadline and the timeout escalations read them.
fn validate_timeouts(t: &Value, routing: Option<&Map<String, Value>>, errors: &mut Vec<String>) {
    let Some(t) = t.as_object() else {
        errors.push("timeouts must be an object".to_owned());
        return;
    };
    for key in ["per_turn_minutes", "per_phase_minutes", "per_run_minutes"] {
        if let Some(v) = t.get(key)
            && !v.as_f64().is_some_and(|n| n >= 1.0)
        {
            errors.push(format!("timeouts.{key} must be a number >= 1"));
        }
    }
    if let Some(a) = t.get("action") {
        if !a.as_str().is_some_and(|a| TIMEOUT_ACTIONS.contains(&a)) {
            errors.push("timeouts.action must be one of: escalate, warn".to_owned());
        }
        if a == "skip_phase" {
            errors.push("timeouts.action cannot be \"skip_phase\" at the global level — use per-phase timeout_action override in routing instead".to_owned());
        }
    }
    for (phase, route) in routing.into_iter().flatten() {
        if let Some(v) = route.get("timeout_minutes")
            && !v.as_f64().is_some_and(|n| n >= 1.0)
        {
            errors.push(format!(
                "Routing \"{phase}\": timeout_minutes must be a number >= 1"
            ));
        }
        if let Some(a) = route.get("timeout_action")
            && !a.as_str().is_some_and(|a| TIMEOUT_ACTIONS.contains(&a))
        {
            errors.push(format!(
                "Routing \"{phase}\": timeout_action must be one of: {}",
                TIMEOUT_ACTIONS.join(", ")
            ));
        }
    }
}

/// `run_loop`'s watchdog knobs: positive whole milliseconds (the reference's texts). The
/// stale-turn watchdog judges by them.
fn validate_run_loop(r: &Value, errors: &mut Vec<String>) {
    let Some(r) = r.as_object() else {
        errors.push("run_loop must be an object".to_owned());
        return;
    };
    for key in [
        "startup_watchdog_ms",
        "startup_heartbeat_ms",
        "liveness_heartbeat_ms",
        "stale_turn_threshold_ms",
    ] {
        match r.get(key) {
            None | Some(Value::Null) => {}
            Some(v) if v.as_u64().is_some_and(|n| n >= 1) => {}
            Some(_) => errors.push(format!(
                "run_loop.{key} must be a positive integer (milliseconds)"
            )),
        }
    }
}

/// The phases hooks run at, in the reference's order.
pub const HOOK_PHASES: [&str; 8] = [
    "before_assignment",
    "after_dispatch",
    "before_validation",
    "after_validation",
    "before_acceptance",
    "after_acceptance",
    "before_gate",
    "on_escalation",
];

/// `hooks`, as the reference's `validateHooksConfig` admits them (its texts): a hook that
/// would not run as it reads — a mode in capitals taken as advisory, a command part that is
/// no string dropped, a timeout that is no integer taken as the default — is refused. (The
/// reference also looks for `command[0]` on the PATH; that is checked when the hook runs.)
fn validate_hooks(hooks: &Value, errors: &mut Vec<String>) {
    let Some(hooks) = hooks.as_object() else {
        errors.push("hooks must be an object".to_owned());
        return;
    };
    for (phase, list) in hooks {
        if !HOOK_PHASES.contains(&phase.as_str()) {
            errors.push(format!(
                "hooks: unknown phase \"{phase}\". Valid phases: {}",
                HOOK_PHASES.join(", ")
            ));
            continue;
        }
        let Some(list) = list.as_array() else {
            errors.push(format!("hooks.{phase} must be an array"));
            continue;
        };
        if list.len() > 8 {
            errors.push(format!("hooks.{phase}: maximum 8 hooks per phase"));
        }
        let mut names: Vec<&str> = Vec::new();
        for (i, hook) in list.iter().enumerate() {
            let label = format!("hooks.{phase}[{i}]");
            let Some(h) = hook.as_object() else {
                errors.push(format!("{label} must be an object"));
                continue;
            };
            match h.get("name").and_then(Value::as_str) {
                Some(n) if n.trim().is_empty() => {
                    errors.push(format!("{label}: name must be a non-empty string"))
                }
                Some(n)
                    if !n.bytes().all(|b| {
                        b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'_' || b == b'-'
                    }) =>
                {
                    errors.push(format!("{label}: name must match ^[a-z0-9_-]+$"))
                }
                Some(n) if names.contains(&n) => errors.push(format!(
                    "{label}: duplicate hook name \"{n}\" in phase {phase}"
                )),
                Some(n) => names.push(n),
                None => errors.push(format!("{label}: name must be a non-empty string")),
            }
            match h.get("type").and_then(Value::as_str) {
                Some("process") => match h.get("command").and_then(Value::as_array) {
                    Some(c) if !c.is_empty() => {
                        for (j, part) in c.iter().enumerate() {
                            if !part.is_string() {
                                errors.push(format!("{label}: command[{j}] must be a string"));
                            }
                        }
                    }
                    _ => errors.push(format!(
                        "{label}: command must be a non-empty array of strings"
                    )),
                },
                Some("http") => {
                    match h.get("url").and_then(Value::as_str) {
                        Some(u) if u.trim().is_empty() => {
                            errors.push(format!("{label}: url must be a non-empty string"))
                        }
                        Some(u)
                            if !(u.len() > 7 && u.starts_with("http://")
                                || u.len() > 8 && u.starts_with("https://")) =>
                        {
                            errors.push(format!("{label}: url must be a valid HTTP or HTTPS URL"))
                        }
                        Some(_) => {}
                        None => errors.push(format!("{label}: url must be a non-empty string")),
                    }
                    if h.get("method").and_then(Value::as_str) != Some("POST") {
                        errors.push(format!(
                            "{label}: method must be \"POST\" (required; only POST is supported)"
                        ));
                    }
                    string_map(h.get("headers"), &label, "headers", errors);
                }
                _ => errors.push(format!("{label}: type must be \"process\" or \"http\"")),
            }
            if !h
                .get("timeout_ms")
                .and_then(whole_number)
                .is_some_and(|t| (100..=30_000).contains(&t))
            {
                errors.push(format!(
                    "{label}: timeout_ms must be an integer between 100 and 30000"
                ));
            }
            match h.get("mode").and_then(Value::as_str) {
                Some("blocking")
                    if matches!(phase.as_str(), "after_acceptance" | "on_escalation") =>
                {
                    errors.push(format!(
                        "{label}: phase \"{phase}\" does not support blocking hooks"
                    ))
                }
                Some("blocking" | "advisory") => {}
                _ => errors.push(format!(
                    "{label}: mode must be \"blocking\" or \"advisory\""
                )),
            }
            string_map(h.get("env"), &label, "env", errors);
        }
    }
}

/// `value` as a whole number of at least 0: an integral float (`1000.0`) is one, as
/// JavaScript's `Number.isInteger` says (the reference's configs are read by JavaScript).
pub fn whole_number(value: &Value) -> Option<u64> {
    value.as_u64().or_else(|| {
        value
            .as_f64()
            .filter(|f| f.fract() == 0.0 && *f >= 0.0)
            .map(|f| f as u64)
    })
}

/// An optional object of strings (`headers`, `env`) of the hook at `label`.
fn string_map(value: Option<&Value>, label: &str, key: &str, errors: &mut Vec<String>) {
    match value {
        None => {}
        Some(Value::Object(m)) => {
            for (k, v) in m {
                if !v.is_string() {
                    errors.push(format!("{label}: {key}.{k} must be a string"));
                }
            }
        }
        Some(_) => errors.push(format!("{label}: {key} must be an object")),
    }
}

const APPROVAL_ACTIONS: [&str; 2] = ["auto_approve", "require_human"];

/// `approval_policy`: the rules that may approve a gate without a person are refused unless
/// every part is what the reference's validator admits (its texts), so a malformed rule never
/// reaches the policy as something it would read another way.
fn validate_approval_policy(
    ap: &Value,
    routing: Option<&Map<String, Value>>,
    errors: &mut Vec<String>,
) {
    let Some(ap) = ap.as_object() else {
        errors.push("approval_policy must be an object".to_owned());
        return;
    };
    let actions = APPROVAL_ACTIONS.join(", ");
    let known = |p: &str| routing.is_none_or(|r| r.is_empty() || r.contains_key(p));
    if let Some(pt) = ap.get("phase_transitions") {
        match pt.as_object() {
            None => errors.push("approval_policy.phase_transitions must be an object".to_owned()),
            Some(pt) => {
                if let Some(d) = pt.get("default")
                    && !d.as_str().is_some_and(|d| APPROVAL_ACTIONS.contains(&d))
                {
                    errors.push(format!(
                        "approval_policy.phase_transitions.default must be one of: {actions}"
                    ));
                }
                match pt.get("rules") {
                    None => {}
                    Some(Value::Array(rules)) => {
                        for (i, rule) in rules.iter().enumerate() {
                            let prefix = format!("approval_policy.phase_transitions.rules[{i}]");
                            let Some(rule) = rule.as_object() else {
                                errors.push(format!("{prefix} must be an object"));
                                continue;
                            };
                            if !rule
                                .get("action")
                                .and_then(Value::as_str)
                                .is_some_and(|a| APPROVAL_ACTIONS.contains(&a))
                            {
                                errors.push(format!("{prefix}.action must be one of: {actions}"));
                            }
                            for key in ["from_phase", "to_phase"] {
                                match rule.get(key) {
                                    None => {}
                                    Some(Value::String(p)) if known(p) => {}
                                    Some(Value::String(p)) => errors.push(format!(
                                        "{prefix}.{key} \"{p}\" does not exist in routing"
                                    )),
                                    Some(_) => {
                                        errors.push(format!("{prefix}.{key} must be a string"))
                                    }
                                }
                            }
                            if let Some(when) = rule.get("when") {
                                validate_approval_when(when, &prefix, errors);
                            }
                        }
                    }
                    Some(_) => errors.push(
                        "approval_policy.phase_transitions.rules must be an array".to_owned(),
                    ),
                }
            }
        }
    }
    if let Some(rc) = ap.get("run_completion") {
        match rc.as_object() {
            None => errors.push("approval_policy.run_completion must be an object".to_owned()),
            Some(rc) => {
                if let Some(a) = rc.get("action")
                    && !a.as_str().is_some_and(|a| APPROVAL_ACTIONS.contains(&a))
                {
                    errors.push(format!(
                        "approval_policy.run_completion.action must be one of: {actions}"
                    ));
                }
                if let Some(when) = rc.get("when") {
                    validate_approval_when(when, "approval_policy.run_completion", errors);
                }
            }
        }
    }
}

fn validate_approval_when(when: &Value, prefix: &str, errors: &mut Vec<String>) {
    let Some(w) = when.as_object() else {
        errors.push(format!("{prefix}.when must be an object"));
        return;
    };
    for key in ["gate_passed", "all_phases_visited"] {
        if w.get(key).is_some_and(|v| !v.is_boolean()) {
            errors.push(format!("{prefix}.when.{key} must be a boolean"));
        }
    }
    match w.get("roles_participated") {
        None => {}
        Some(Value::Array(roles))
            if !roles
                .iter()
                .all(|r| r.as_str().is_some_and(|r| !r.trim().is_empty())) =>
        {
            errors.push(format!(
                "{prefix}.when.roles_participated entries must be non-empty strings"
            ));
        }
        Some(Value::Array(_)) => {}
        Some(_) => errors.push(format!(
            "{prefix}.when.roles_participated must be an array of role IDs"
        )),
    }
    match w.get("credentialed_gate") {
        None | Some(Value::Bool(false)) => {}
        Some(Value::Bool(true)) => errors.push(format!(
            "{prefix}.when.credentialed_gate must be false when provided (DEC-BUG59-CREDENTIALED-GATE-PREDICATE-NEGATIVE-ONLY-001)"
        )),
        Some(_) => errors.push(format!("{prefix}.when.credentialed_gate must be a boolean")),
    }
}

fn display(v: &Value) -> String {
    v.as_str().map_or_else(|| v.to_string(), str::to_owned)
}

fn validate_budget(budget: &Value, errors: &mut Vec<String>) {
    let Some(b) = budget.as_object() else {
        errors.push("budget must be an object".to_owned());
        return;
    };
    for key in ["per_turn_max_usd", "per_run_max_usd"] {
        match b.get(key) {
            None | Some(Value::Null) => {}
            Some(Value::Number(n)) if n.as_f64().is_some_and(|f| f > 0.0) => {}
            Some(Value::Number(_)) => {
                errors.push(format!("budget.{key} must be greater than 0 when provided"))
            }
            Some(_) => errors.push(format!(
                "budget.{key} must be a finite number when provided"
            )),
        }
    }
    let turn = b.get("per_turn_max_usd").and_then(Value::as_f64);
    let run = b.get("per_run_max_usd").and_then(Value::as_f64);
    if let (Some(t), Some(r)) = (turn, run)
        && t > r
    {
        errors.push(
            "budget.per_turn_max_usd must be less than or equal to budget.per_run_max_usd when both are set".to_owned(),
        );
    }
    if let Some(on) = b.get("on_exceed")
        && !on
            .as_str()
            .is_some_and(|s| s == "pause_and_escalate" || s == "warn")
    {
        errors.push("budget.on_exceed must be one of: pause_and_escalate, warn".to_owned());
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn governed(extra: Value) -> Value {
        let mut base = json!({
            "schema_version": "1.0",
            "project": {"id": "p", "name": "P"},
            "roles": {"dev": {"title": "Dev", "mandate": "Build.", "write_authority": "authoritative", "runtime": "m"}},
            "runtimes": {"m": {"type": "manual"}}
        });
        for (k, v) in extra.as_object().unwrap() {
            base[k] = v.clone();
        }
        base
    }

    #[test]
    fn versions_are_detected() {
        assert_eq!(
            from_value(governed(json!({}))).unwrap().mode,
            ProtocolMode::Governed
        );
        assert_eq!(
            from_value(governed(json!({"schema_version": 4})))
                .unwrap()
                .mode,
            ProtocolMode::Governed
        );
        let legacy = json!({"version": 3, "project": "My App", "agents": {"dev": {"name": "Dev", "mandate": "x"}}});
        let c = from_value(legacy).unwrap();
        assert_eq!(c.mode, ProtocolMode::Legacy);
        assert_eq!(
            c.project,
            json!({"id": "my-app", "name": "My App", "default_branch": "main"})
        );
        assert_eq!(c.state_file, "state.json");
        let e = from_value(json!({"schema_version": 2})).unwrap_err();
        assert_eq!(
            e.to_string(),
            "agentxchain.json has issues: Unrecognized config format. Expected version: 3 or schema_version: \"1.0\" / 4"
        );
    }

    #[test]
    fn the_reference_issue_texts_are_kept() {
        let c = governed(json!({
            "roles": {
                "dev": {"title": "Dev", "mandate": "Build.", "write_authority": "superuser", "runtime": "m"},
                "qa": {"title": "QA", "mandate": "Test.", "write_authority": "review_only", "runtime": "manual-tester"}
            }
        }));
        assert_eq!(
            from_value(c).unwrap_err().to_string(),
            "agentxchain.json has issues: Role \"dev\": write_authority must be one of: authoritative, proposed, review_only, Role \"qa\" references unknown runtime \"manual-tester\""
        );
    }

    #[test]
    fn project_is_normalized() {
        let c = from_value(governed(
            json!({"project": {"name": "P", "goal": "  Ship it ", "id": "p"}}),
        ))
        .unwrap();
        assert_eq!(
            c.project,
            json!({"id": "p", "name": "P", "goal": "Ship it", "default_branch": "main"})
        );
        let bad = from_value(governed(json!({"project": {"id": "", "name": 3}}))).unwrap_err();
        assert_eq!(
            bad,
            ConfigError::Issues(vec![
                "project.id must be a non-empty string".into(),
                "project.name must be a non-empty string".into()
            ])
        );
    }

    #[test]
    fn routing_gates_and_runtimes_are_checked() {
        let c = governed(json!({
            "runtimes": {"m": {"type": "manual"}, "api": {"type": "api_proxy", "provider": "acme"}, "x": {"type": "cloud"}},
            "routing": {"Build": {"entry_role": "ghost", "exit_gate": "g1", "max_concurrent_turns": 9, "allowed_next_roles": ["human", "nobody"]}},
            "gates": {}
        }));
        let Err(ConfigError::Issues(errors)) = from_value(c) else {
            panic!()
        };
        assert_eq!(
            errors,
            [
                "Runtime \"api\": api_proxy provider must be one of: anthropic, openai, google, ollama",
                "Runtime \"api\": api_proxy requires \"model\" (e.g. \"claude-sonnet-4-6\")",
                "Runtime \"api\": api_proxy requires \"auth_env\" (environment variable name for API key)",
                "Runtime \"x\": type must be one of: manual, local_cli, api_proxy, mcp, remote_agent",
                "Routing phase name \"Build\" must be lowercase alphanumeric starting with a letter (hyphens and underscores allowed)",
                "Routing \"Build\": entry_role \"ghost\" is not a defined role",
                "Routing \"Build\": allowed_next_roles references unknown role \"nobody\"",
                "Routing \"Build\": max_concurrent_turns must be an integer between 1 and 4",
                "Routing references unknown gate: \"g1\"",
            ]
        );
    }

    #[test]
    fn review_only_on_local_cli_is_rejected() {
        let c = governed(json!({
            "roles": {"qa": {"title": "QA", "mandate": "Test.", "write_authority": "review_only", "runtime": "cli"}},
            "runtimes": {"cli": {"type": "local_cli"}}
        }));
        assert!(
            from_value(c)
                .unwrap_err()
                .to_string()
                .contains("review_only roles should not have authoritative write access")
        );
    }

    #[test]
    fn an_approval_policy_is_refused_unless_every_part_is_what_it_may_be() {
        let base = json!({
            "roles": {"pm": {"title": "PM", "mandate": "Plan.", "write_authority": "review_only", "runtime": "m"}},
            "runtimes": {"m": {"type": "manual"}},
            "routing": {"planning": {"entry_role": "pm"}, "qa": {"entry_role": "pm"}},
        });
        let ok = json!({"phase_transitions": {"default": "require_human", "rules": [
            {"from_phase": "planning", "to_phase": "qa", "action": "auto_approve",
             "when": {"gate_passed": true, "roles_participated": ["pm"], "credentialed_gate": false}}]},
            "run_completion": {"action": "auto_approve", "when": {"all_phases_visited": true}}});
        let mut c = base.clone();
        c["approval_policy"] = ok.clone();
        assert!(from_value(governed(c)).is_ok());
        for (edit, want) in [
            ("/", "approval_policy must be an object"),
            (
                "/phase_transitions",
                "approval_policy.phase_transitions must be an object",
            ),
            (
                "/phase_transitions/default",
                "approval_policy.phase_transitions.default must be one of: auto_approve, require_human",
            ),
            (
                "/phase_transitions/rules",
                "approval_policy.phase_transitions.rules must be an array",
            ),
            (
                "/phase_transitions/rules/0",
                "approval_policy.phase_transitions.rules[0] must be an object",
            ),
            (
                "/phase_transitions/rules/0/action",
                "approval_policy.phase_transitions.rules[0].action must be one of: auto_approve, require_human",
            ),
            (
                "/phase_transitions/rules/0/from_phase",
                "approval_policy.phase_transitions.rules[0].from_phase \"x\" does not exist in routing",
            ),
            (
                "/phase_transitions/rules/0/when",
                "approval_policy.phase_transitions.rules[0].when must be an object",
            ),
            (
                "/phase_transitions/rules/0/when/gate_passed",
                "approval_policy.phase_transitions.rules[0].when.gate_passed must be a boolean",
            ),
            (
                "/phase_transitions/rules/0/when/roles_participated",
                "approval_policy.phase_transitions.rules[0].when.roles_participated must be an array of role IDs",
            ),
            (
                "/run_completion",
                "approval_policy.run_completion must be an object",
            ),
            (
                "/run_completion/action",
                "approval_policy.run_completion.action must be one of: auto_approve, require_human",
            ),
            (
                "/run_completion/when/all_phases_visited",
                "approval_policy.run_completion.when.all_phases_visited must be a boolean",
            ),
        ] {
            let mut ap = ok.clone();
            if edit == "/" {
                ap = json!("x");
            } else {
                *ap.pointer_mut(edit).unwrap() = json!("x");
            }
            let mut c = base.clone();
            c["approval_policy"] = ap;
            let e = from_value(governed(c)).unwrap_err().to_string();
            assert!(e.contains(want), "{edit}: {e}");
        }
        let mut c = base.clone();
        c["approval_policy"] = ok.clone();
        c["approval_policy"]["phase_transitions"]["rules"][0]["when"]["credentialed_gate"] =
            json!(true);
        assert!(
            from_value(governed(c))
                .unwrap_err()
                .to_string()
                .contains("credentialed_gate must be false when provided")
        );
        let mut c = base.clone();
        c["approval_policy"] = ok;
        c["approval_policy"]["phase_transitions"]["rules"][0]["when"]["roles_participated"] =
            json!(["pm", " "]);
        assert!(
            from_value(governed(c))
                .unwrap_err()
                .to_string()
                .contains("roles_participated entries must be non-empty strings")
        );
        let mut c = base;
        c["gates"] = json!({"g": {"credentialed": "yes"}});
        assert!(
            from_value(governed(c))
                .unwrap_err()
                .to_string()
                .contains("gates.g.credentialed must be a boolean when provided")
        );
    }

    #[test]
    fn timeouts_and_run_loop_knobs_are_refused_unless_they_can_be_used() {
        for (key, value, want) in [
            ("timeouts", json!("x"), "timeouts must be an object"),
            (
                "timeouts",
                json!({"per_turn_minutes": 0}),
                "timeouts.per_turn_minutes must be a number >= 1",
            ),
            (
                "timeouts",
                json!({"per_run_minutes": "5"}),
                "timeouts.per_run_minutes must be a number >= 1",
            ),
            (
                "timeouts",
                json!({"action": "nope"}),
                "timeouts.action must be one of: escalate, warn",
            ),
            (
                "timeouts",
                json!({"action": "skip_phase"}),
                "cannot be \"skip_phase\" at the global level",
            ),
            ("run_loop", json!([]), "run_loop must be an object"),
            (
                "run_loop",
                json!({"startup_watchdog_ms": 0}),
                "run_loop.startup_watchdog_ms must be a positive integer (milliseconds)",
            ),
            (
                "run_loop",
                json!({"stale_turn_threshold_ms": 1.5}),
                "run_loop.stale_turn_threshold_ms must be a positive integer (milliseconds)",
            ),
            (
                "rules",
                json!({"max_turn_retries": -1}),
                "rules.max_turn_retries must be a non-negative integer",
            ),
            (
                "rules",
                json!({"max_turn_retries": 2.5}),
                "rules.max_turn_retries must be a non-negative integer",
            ),
            (
                "rules",
                json!({"max_turn_retries": "3"}),
                "rules.max_turn_retries must be a non-negative integer",
            ),
        ] {
            let mut c = json!({});
            c[key] = value.clone();
            let e = from_value(governed(c)).unwrap_err().to_string();
            assert!(e.contains(want), "{value}: {e}");
        }
        let ok = json!({"timeouts": {"per_turn_minutes": 30, "action": "warn"},
                        "run_loop": {"startup_watchdog_ms": 5000, "max_turns": 3},
                        "rules": {"max_turn_retries": 0}});
        assert!(from_value(governed(ok)).is_ok());
    }

    #[test]
    fn root_discovery_walks_up() {
        let dir = tempfile::tempdir().unwrap();
        let nested = dir.path().join("a/b");
        std::fs::create_dir_all(&nested).unwrap();
        assert_eq!(find_root(&nested), None);
        std::fs::write(dir.path().join(CONFIG_FILE), "{}").unwrap();
        assert_eq!(find_root(&nested).as_deref(), Some(dir.path()));
    }

    fn errors_of(extra: Value) -> Vec<String> {
        validate_governed(governed(extra).as_object().unwrap())
    }

    #[test]
    fn gates_are_validated_as_the_reference_validates_them() {
        assert_eq!(errors_of(json!({"gates": []})), ["gates must be an object"]);
        assert_eq!(
            errors_of(
                json!({"gates": {"g": null}, "routing": {"p": {"entry_role": "dev", "exit_gate": "g"}}})
            ),
            [
                "Gate \"g\" must be an object",
                "Routing references unknown gate: \"g\""
            ]
        );
        assert_eq!(
            errors_of(json!({"gates": {"g": {"gate_actions": []}}})),
            ["Gate \"g\": gate_actions must be a non-empty array when provided"]
        );
        assert_eq!(
            errors_of(
                json!({"gates": {"g": {"gate_actions": [{"run": "", "label": " ", "timeout_ms": 5}, 3]}}})
            ),
            [
                "Gate \"g\": gate_actions require requires_human_approval: true",
                "gates.g.gate_actions[0].run must be a non-empty string",
                "gates.g.gate_actions[0].label must be a non-empty string when provided",
                "gates.g.gate_actions[0].timeout_ms must be an integer between 1000 and 3600000 when provided",
                "gates.g.gate_actions[1] must be an object",
            ]
        );
        let ok = json!({"gates": {"g": {"requires_human_approval": true, "gate_actions": [{"run": "make check", "timeout_ms": 1000}]}}});
        assert!(errors_of(ok).is_empty());
        // Falsy gates are not validated (as the reference's `if (data.gates)`).
        assert!(errors_of(json!({"gates": {}})).is_empty());
    }

    #[test]
    fn the_workflow_kit_is_validated_as_the_reference_validates_it() {
        assert!(errors_of(json!({"workflow_kit": {}})).is_empty());
        assert_eq!(
            errors_of(json!({"workflow_kit": [1]})),
            ["workflow_kit must be an object"]
        );
        assert_eq!(
            errors_of(json!({"workflow_kit": {"phases": []}})),
            ["workflow_kit.phases must be an object"]
        );
        let wk = |phases: Value| errors_of(json!({"workflow_kit": {"phases": phases}}));
        assert_eq!(
            wk(json!({"planning": {"artifacts": [{"path": "a.md", "semantics": "nope"}]}})),
            [
                "workflow_kit.phases.planning.artifacts[0] unknown semantics validator \"nope\"; valid values: pm_signoff, system_spec, implementation_notes, acceptance_matrix, ship_verdict, release_notes, section_check"
            ]
        );
        assert_eq!(
            wk(
                json!({"planning": {"artifacts": [{"path": "a.md", "semantics": "section_check"}]}})
            ),
            ["workflow_kit.phases.planning.artifacts[0] section_check requires semantics_config"]
        );
        assert_eq!(
            wk(
                json!({"planning": {"template": "planning-default", "artifacts": [
                {"path": "a.md", "owned_by": ""}, {"path": "b.md", "owned_by": "ghost", "required": null},
                {"path": "../x", "semantics": 3}]}})
            ),
            [
                "workflow_kit.phases.planning.artifacts[3] owned_by \"\" is not a valid role ID (must be lowercase alphanumeric with hyphens/underscores)",
                "workflow_kit.phases.planning.artifacts[4] required must be a boolean",
                "workflow_kit.phases.planning.artifacts[4] owned_by \"ghost\" does not reference a defined role",
                "workflow_kit.phases.planning.artifacts[5] path must not traverse above project root (contains \"..\")",
            ]
        );
        assert_eq!(
            wk(
                json!({"planning": {"artifacts": [{"path": "a.md"}, {"path": "a.md"}]}, "Bad": {"artifacts": []},
                      "qa": {"template": "zzz"}, "implementation": {}})
            ),
            [
                "duplicate artifact path \"a.md\" in phase \"planning\"",
                "workflow_kit phase name \"Bad\" must be lowercase alphanumeric starting with a letter (hyphens and underscores allowed)",
                "workflow_kit.phases.qa.template \"zzz\" is unknown; valid values: planning-default, implementation-default, qa-default, architecture-review, security-review",
                "workflow_kit.phases.implementation must declare template, artifacts, or both",
            ]
        );
        // A template's own semantics config serves an artifact that names its check again.
        assert!(
            wk(
                json!({"planning": {"template": "architecture-review", "artifacts": [
            {"path": ".planning/ARCHITECTURE.md", "semantics": "section_check"}]}})
            )
            .is_empty()
        );
    }
}
