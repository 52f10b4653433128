//! `stdio-fixture-v1`: one fixture in, one verdict out. The fixture's project is laid out in a
//! temporary directory (config and state filled in as the reference's adapter does, the
//! ledger, the files), the operation runs through the kernel, and its outcome is shaped as
//! the corpus describes it and compared with `expected`.

use std::path::{Component, Path};

use axc_kernel::turn_result::{self, Validation};
use axc_kernel::{decisions, events, gates, manifest};
use serde_json::{Map, Value as Json, json};

use crate::matcher::matches;

/// A fixture's outcome: `pass`, `fail`, `error` or `not_implemented`.
#[derive(Clone, Debug, PartialEq)]
pub struct Verdict {
    pub status: &'static str,
    pub message: String,
    pub actual: Option<Json>,
}

impl Verdict {
    /// The exit code that goes with the status: 0 pass, 1 fail, 2 error, 3 not implemented.
    pub fn exit_code(&self) -> i32 {
        match self.status {
            "pass" => 0,
            "fail" => 1,
            "not_implemented" => 3,
            _ => 2,
        }
    }

    pub fn to_json(&self) -> Json {
        let mut v = json!({"status": self.status, "message": self.message});
        if let Some(a) = &self.actual {
            v["actual"] = a.clone();
        }
        v
    }

    fn error(message: String) -> Verdict {
        Verdict {
            status: "error",
            message,
            actual: None,
        }
    }
}

/// The operations this implementation runs, by surface.
pub const IMPLEMENTED: [(&str, &[&str]); 13] = [
    ("config_schema", &["validate_config"]),
    ("parallel_turns", &["validate_config"]),
    ("decision_ledger", &["append_decision"]),
    (
        "event_lifecycle",
        &["validate_event", "validate_event_ordering"],
    ),
    (
        "gate_semantics",
        &["evaluate_phase_exit", "evaluate_run_completion"],
    ),
    (
        "dispatch_manifest",
        &["verify_dispatch_manifest", "inspect_dispatch_manifest"],
    ),
    ("turn_result_validation", &["validate_turn_result"]),
    ("delegation", &["validate_turn_result"]),
    ("decision_carryover", &["validate_turn_result"]),
    ("history", &["accept_turn"]),
    ("hook_audit", &["run_hooks"]),
    (
        "coordinator",
        &["validate_coordinator_config", "project_repo_acceptance"],
    ),
    (
        "state_machine",
        &[
            "initialize_run",
            "assign_turn",
            "approve_transition",
            "approve_completion",
            "resolve_blocked",
            "transition_state",
        ],
    ),
];

/// Whether every operation of `surface` runs here.
pub fn surface_implemented(surface: &str) -> bool {
    IMPLEMENTED.iter().any(|(s, _)| *s == surface)
}

/// One line of the runner's stdin: runs it and says how it went.
pub fn run_line(line: &str) -> Verdict {
    match serde_json::from_str::<Json>(line) {
        Ok(fixture) if fixture.is_object() => run(&fixture),
        Ok(_) => Verdict::error("the fixture is not a JSON object".to_owned()),
        Err(e) => Verdict::error(format!("the fixture is not JSON: {e}")),
    }
}

/// Runs one fixture.
pub fn run(fixture: &Json) -> Verdict {
    let id = fixture["fixture_id"].as_str().unwrap_or("<no fixture_id>");
    let operation = fixture["input"]["operation"].as_str().unwrap_or("");
    let known = IMPLEMENTED.iter().any(|(_, ops)| ops.contains(&operation));
    if !known {
        return Verdict {
            status: "not_implemented",
            message: format!("operation \"{operation}\" is not implemented by this adapter yet"),
            actual: None,
        };
    }
    let actual = match execute(fixture, operation) {
        Ok(a) => a,
        Err(e) => return Verdict::error(format!("{id}: {e}")),
    };
    if matches(&fixture["expected"], Some(&actual)) {
        Verdict {
            status: "pass",
            message: "Fixture passed".to_owned(),
            actual: Some(actual),
        }
    } else {
        Verdict {
            status: "fail",
            message: format!("Expected {id} to match declared output"),
            actual: Some(actual),
        }
    }
}

/// The config as the reference's adapter fills it in: schema version, project, each role's
/// title, mandate, write authority and runtime, a `manual` runtime when a role names it,
/// each runtime's type, routing, gates and `rules.challenge_required`.
pub fn inflate_config(raw: &Json) -> Json {
    let mut c = raw.as_object().cloned().unwrap_or_default();
    c.entry("schema_version").or_insert(json!("1.0"));
    c.entry("project")
        .or_insert(json!({"id": "conformance-target", "name": "Conformance Target"}));
    let mut runtimes = c
        .get("runtimes")
        .and_then(Json::as_object)
        .cloned()
        .unwrap_or_default();
    let mut roles = Map::new();
    for (id, role) in c
        .get("roles")
        .and_then(Json::as_object)
        .into_iter()
        .flatten()
    {
        let mut r = Map::new();
        r.insert("title".into(), json!(id.to_uppercase()));
        r.insert(
            "mandate".into(),
            json!(format!("Execute {id} responsibilities.")),
        );
        r.insert("write_authority".into(), json!("authoritative"));
        r.insert("runtime".into(), json!("manual"));
        for (k, v) in role.as_object().into_iter().flatten() {
            // A value JavaScript reads as false keeps the default, as `a || b` does.
            if !matches!(
                k.as_str(),
                "title" | "mandate" | "write_authority" | "runtime"
            ) || axc_kernel::js::truthy(v)
            {
                r.insert(k.clone(), v.clone());
            }
        }
        if r["runtime"] == "manual" && !runtimes.contains_key("manual") {
            runtimes.insert("manual".into(), json!({"type": "manual"}));
        }
        roles.insert(id.clone(), Json::Object(r));
    }
    let runtimes: Map<String, Json> = runtimes
        .into_iter()
        .map(|(id, rt)| {
            let mut r = Map::new();
            r.insert("type".into(), json!("manual"));
            for (k, v) in rt.as_object().into_iter().flatten() {
                r.insert(k.clone(), v.clone());
            }
            (id, Json::Object(r))
        })
        .collect();
    c.insert("roles".into(), Json::Object(roles));
    c.insert("runtimes".into(), Json::Object(runtimes));
    c.entry("routing").or_insert(json!({}));
    c.entry("gates").or_insert(json!({}));
    let mut rules = Map::new();
    rules.insert("challenge_required".into(), json!(true));
    for (k, v) in c
        .get("rules")
        .and_then(Json::as_object)
        .into_iter()
        .flatten()
    {
        rules.insert(k.clone(), v.clone());
    }
    c.insert("rules".into(), Json::Object(rules));
    Json::Object(c)
}

/// The state as the reference's adapter fills it in (the fields the operations read).
fn inflate_state(raw: &Json, config: &Json) -> Json {
    let mut s = raw.as_object().cloned().unwrap_or_default();
    s.entry("schema_version").or_insert(json!("1.1"));
    s.entry("run_id").or_insert(Json::Null);
    s.insert("project_id".into(), config["project"]["id"].clone());
    for (k, v) in [("status", "idle"), ("phase", "planning")] {
        if s.get(k).is_none_or(|v| !axc_kernel::js::truthy(v)) {
            s.insert(k.into(), json!(v));
        }
    }
    let turns = s
        .get("active_turns")
        .and_then(Json::as_object)
        .cloned()
        .unwrap_or_default();
    let turns: Map<String, Json> = turns
        .into_iter()
        .map(|(id, t)| {
            let role = ["assigned_role", "role"]
                .iter()
                .find_map(|k| t[*k].as_str().filter(|r| !r.is_empty()))
                .unwrap_or("dev")
                .to_owned();
            let runtime = t["runtime_id"]
                .as_str()
                .filter(|r| !r.is_empty())
                .or_else(|| config["roles"][&role]["runtime"].as_str())
                .unwrap_or("manual")
                .to_owned();
            let mut n = Map::new();
            n.insert("turn_id".into(), json!(id));
            n.insert("assigned_role".into(), json!(role));
            n.insert("runtime_id".into(), json!(runtime));
            n.insert("status".into(), json!("running"));
            n.insert("attempt".into(), json!(1));
            n.insert("assigned_sequence".into(), json!(1));
            for (k, v) in t.as_object().into_iter().flatten() {
                n.insert(k.clone(), v.clone());
            }
            let turn_id = t["turn_id"]
                .as_str()
                .filter(|x| !x.is_empty())
                .unwrap_or(&id)
                .to_owned();
            n.insert("turn_id".into(), json!(turn_id));
            n.insert("assigned_role".into(), json!(role));
            n.insert("runtime_id".into(), json!(runtime));
            (id, Json::Object(n))
        })
        .collect();
    s.insert("active_turns".into(), Json::Object(turns));
    s.entry("accepted_sequence").or_insert(json!(0));
    s.entry("turn_sequence").or_insert(json!(0));
    Json::Object(s)
}

/// The project a fixture describes, in a temporary directory removed when it is dropped.
struct Workspace {
    dir: tempfile::TempDir,
    config: Json,
    state: Json,
}

fn write(root: &Path, rel: &str, content: &[u8]) -> Result<(), String> {
    let p = Path::new(rel);
    if rel.is_empty()
        || p.components()
            .any(|c| !matches!(c, Component::Normal(_) | Component::CurDir))
    {
        return Err(format!("setup path \"{rel}\" leaves the fixture's project"));
    }
    let path = root.join(p);
    if let Some(parent) = path.parent() {
        std::fs::create_dir_all(parent).map_err(|e| format!("{rel}: {e}"))?;
    }
    std::fs::write(&path, content).map_err(|e| format!("{rel}: {e}"))
}

fn jsonl(entries: &Json) -> Vec<u8> {
    let mut out = String::new();
    for e in entries.as_array().into_iter().flatten() {
        out.push_str(&e.to_string());
        out.push('\n');
    }
    out.into_bytes()
}

fn materialize(fixture: &Json) -> Result<Workspace, String> {
    let setup = &fixture["setup"];
    let dir = tempfile::Builder::new()
        .prefix("agentxchain-conformance-")
        .tempdir()
        .map_err(|e| format!("no temporary directory: {e}"))?;
    let root = dir.path();
    let config = inflate_config(&setup["config"]);
    let state = inflate_state(&setup["state"], &config);
    let pretty = |v: &Json| serde_json::to_vec_pretty(v).unwrap_or_default();
    write(root, "agentxchain.json", &pretty(&config))?;
    write(root, ".agentxchain/state.json", &pretty(&state))?;
    write(
        root,
        ".agentxchain/history.jsonl",
        &jsonl(&setup["history"]),
    )?;
    write(root, decisions::LEDGER, &jsonl(&setup["ledger"]))?;
    let staged = match &setup["turn_result"] {
        Json::Null => &fixture["input"]["args"]["turn_result"],
        t => t,
    };
    if !staged.is_null() {
        write(root, turn_result::STAGING_PATH, &pretty(staged))?;
    }
    for (rel, content) in setup["filesystem"].as_object().into_iter().flatten() {
        write(root, rel, text_of(content).as_bytes())?;
    }
    for (turn, files) in setup["dispatch_bundle"].as_object().into_iter().flatten() {
        let dir = bundle_rel(turn)?;
        for (name, content) in files.as_object().into_iter().flatten() {
            write(root, &format!("{dir}/{name}"), text_of(content).as_bytes())?;
        }
    }
    Ok(Workspace { dir, config, state })
}

/// A fixture's file content: a string as it is, anything else as its JSON.
fn text_of(content: &Json) -> String {
    content
        .as_str()
        .map_or_else(|| content.to_string(), str::to_owned)
}

/// A turn's bundle directory, relative to the project.
fn bundle_rel(turn: &str) -> Result<String, String> {
    manifest::bundle_dir(Path::new(""), turn)
        .map(|p| p.display().to_string())
        .ok_or_else(|| format!("turn id \"{turn}\" is not one path segment"))
}

fn execute(fixture: &Json, operation: &str) -> Result<Json, String> {
    let args = &fixture["input"]["args"];
    match operation {
        "validate_config" => Ok(validate_config(&inflate_config(&args["config"]))),
        "validate_event" => {
            let errors = events::event_errors(&args["event"]);
            Ok(if errors.is_empty() {
                json!({"result": "success", "errors": []})
            } else {
                json!({"result": "error", "error_type": "invalid_event", "errors": errors})
            })
        }
        "validate_event_ordering" => {
            let Some(list) = args["events"].as_array().filter(|l| !l.is_empty()) else {
                return Ok(
                    json!({"result": "error", "error_type": "invalid_events", "errors": ["Events must be a non-empty array"]}),
                );
            };
            let errors = events::ordering_errors(list);
            Ok(if errors.is_empty() {
                json!({"result": "success", "errors": []})
            } else {
                json!({"result": "error", "error_type": "ordering_violation", "errors": errors})
            })
        }
        "append_decision" => {
            let ws = materialize(fixture)?;
            let entry = &args["entry"];
            match decisions::append(ws.dir.path(), entry).map_err(|e| e.to_string())? {
                Ok(len) => Ok(
                    json!({"result": "success", "ledger_length": len, "ledger_last_entry": entry}),
                ),
                Err((refusal, len)) => {
                    let mut out = refusal;
                    out["result"] = json!("error");
                    out["ledger_length"] = json!(len);
                    Ok(out)
                }
            }
        }
        "evaluate_phase_exit" | "evaluate_run_completion" => {
            let ws = materialize(fixture)?;
            Ok(evaluate_gate(
                fixture,
                &ws,
                operation == "evaluate_run_completion",
            ))
        }
        "verify_dispatch_manifest" | "inspect_dispatch_manifest" => {
            let ws = materialize(fixture)?;
            dispatch_manifest(fixture, &ws, operation == "inspect_dispatch_manifest")
        }
        "validate_turn_result" => {
            let ws = materialize(fixture)?;
            let v = turn_result::validate_staged(
                ws.dir.path(),
                &ws.state,
                &ws.config,
                turn_result::STAGING_PATH,
            );
            Ok(classify(&v))
        }
        "initialize_run" | "assign_turn" | "approve_transition" | "approve_completion"
        | "resolve_blocked" | "transition_state" => {
            let ws = materialize(fixture)?;
            Ok(transition(fixture, operation, &ws))
        }
        "validate_coordinator_config" | "project_repo_acceptance" => {
            coordinator(fixture, operation)
        }
        "run_hooks" => {
            let ws = materialize(fixture)?;
            let root = ws.dir.path();
            let payload = match &args["payload"] {
                Json::Null => json!({}),
                p => p.clone(),
            };
            let run_id = ws.state["run_id"]
                .as_str()
                .or(payload["run_id"].as_str())
                .unwrap_or("")
                .to_owned();
            let ctx = axc_kernel::hooks::HookContext {
                run_id: &run_id,
                turn_id: payload["turn_id"].as_str(),
                audit_dir: root.join(".agentxchain"),
                protected: Vec::new(),
            };
            let phase = args["phase"].as_str().unwrap_or("");
            let run =
                axc_kernel::hooks::run_hooks(root, &ws.config["hooks"], phase, &payload, &ctx);
            Ok(json!({
                "result": "success",
                "hook_ok": run.ok,
                "blocked": run.blocked,
                "audit_entry": run.results.first().cloned().unwrap_or(Json::Null),
                "audit_entries": run.results,
            }))
        }
        "accept_turn" => {
            let ws = materialize(fixture)?;
            accept_turn(fixture, &ws)
        }
        other => Err(format!("operation \"{other}\" has no case")),
    }
}

/// `validate_config`: the config's issues as the kernel reports them, classified by the first.
fn validate_config(config: &Json) -> Json {
    let mut errors = Vec::new();
    let version = &config["schema_version"];
    if version != "1.0" {
        errors.push(format!(
            "schema_version must be \"1.0\", got \"{}\"",
            version
                .as_str()
                .map_or_else(|| version.to_string(), str::to_owned)
        ));
    } else if let Some(obj) = config.as_object() {
        errors = axc_core::config::validate_governed(obj);
    }
    if errors.is_empty() {
        return json!({"result": "success", "errors": []});
    }
    let first = errors[0].clone();
    let quoted = |after: &str| {
        first
            .split_once(after)
            .and_then(|(_, r)| r.split('"').next())
            .map(str::to_owned)
    };
    let mut out = json!({"result": "error", "errors": errors});
    if let Some(rest) = first.strip_prefix("Routing \"")
        && let Some((phase, tail)) = rest.split_once("\": entry_role \"")
    {
        out["error_type"] = json!("undeclared_role_reference");
        out["error_field"] = json!(format!("routing.{phase}.entry_role"));
        out["referenced_role"] = json!(tail.split('"').next());
    } else if let Some(rest) = first.strip_prefix("Role \"")
        && let Some((role, _)) = rest.split_once("\" references unknown runtime \"")
    {
        out["error_type"] = json!("undeclared_runtime_reference");
        out["error_field"] = json!(format!("roles.{role}.runtime"));
        out["referenced_runtime"] = json!(quoted("unknown runtime \""));
    } else if first.starts_with("Routing references unknown gate: \"") {
        let gate = quoted("gate: \"");
        let phase = config["routing"]
            .as_object()
            .and_then(|r| {
                r.iter()
                    .find(|(_, v)| v["exit_gate"].as_str() == gate.as_deref())
            })
            .map(|(p, _)| p.clone())
            .unwrap_or_default();
        out["error_type"] = json!("undeclared_gate_reference");
        out["error_field"] = json!(format!("routing.{phase}.exit_gate"));
        out["referenced_gate"] = json!(gate);
    } else if first.starts_with("schema_version must be \"1.0\"") {
        out["error_type"] = json!("schema_version_invalid");
        out["expected_version"] = json!("1.0");
        out["actual_version"] = json!(quoted("got \""));
    } else {
        out["error_type"] = json!("invalid_config");
    }
    out
}

/// `evaluate_phase_exit` / `evaluate_run_completion`: the kernel's gate result as the corpus
/// shapes it.
fn evaluate_gate(fixture: &Json, ws: &Workspace, completion: bool) -> Json {
    let setup_turn = &fixture["setup"]["turn_result"];
    let verification = match &setup_turn["verification"] {
        Json::Null => json!({"status": "pass"}),
        v => v.clone(),
    };
    let phase = ws.state["phase"].clone();
    let root = ws.dir.path();
    let result = if completion {
        let request = match &setup_turn["run_completion_request"] {
            Json::Null => json!(true),
            v => v.clone(),
        };
        let turn = json!({"run_completion_request": request, "verification": verification});
        gates::evaluate_run_completion(&ws.state, &ws.config, &turn, root)
    } else {
        let turn = json!({"phase_transition_request": fixture["input"]["args"]["requested_phase"], "verification": verification});
        gates::evaluate_phase_exit(&ws.state, &ws.config, &turn, root)
    };
    let action = result.action.as_str();
    match result.action {
        gates::Action::UnknownPhase => {
            json!({"result": "error", "action": "gate_error", "error_type": "unknown_phase", "state_unchanged": true})
        }
        gates::Action::AwaitingHumanApproval if completion => json!({
            "result": "success", "action": action, "new_status": "paused",
            "pending_run_completion": {"phase": phase, "gate": result.gate_id},
        }),
        gates::Action::AwaitingHumanApproval => json!({
            "result": "success", "action": action, "new_status": "paused",
            "pending_phase_transition": {"from": phase, "to": result.next_phase},
        }),
        gates::Action::Advance => {
            json!({"result": "success", "action": "advance", "new_phase": result.next_phase})
        }
        gates::Action::Complete => {
            json!({"result": "success", "action": action, "new_status": "completed"})
        }
        _ => {
            let reason = if !result.missing_files.is_empty() {
                Some("requires_files predicate failed".to_owned())
            } else if result.missing_verification {
                Some("requires_verification_pass predicate failed".to_owned())
            } else {
                result.reasons.first().cloned()
            };
            let mut out = json!({"result": "success", "action": action, "state_unchanged": true, "reason": reason});
            if !completion {
                out["phase_unchanged"] = json!(true);
            }
            out
        }
    }
}

/// `verify_dispatch_manifest` / `inspect_dispatch_manifest`: the bundle sealed by the kernel,
/// then changed as the fixture says (files injected, tampered with or deleted, the manifest
/// deleted or replaced), then verified.
fn dispatch_manifest(fixture: &Json, ws: &Workspace, inspect: bool) -> Result<Json, String> {
    let setup = &fixture["setup"];
    let turn = fixture["input"]["args"]["turn_id"].as_str().unwrap_or("");
    let root = ws.dir.path();
    let active = &ws.state["active_turns"][turn];
    let role = ["assigned_role", "role"]
        .iter()
        .find_map(|k| active[*k].as_str().filter(|r| !r.is_empty()))
        .unwrap_or("dev");
    let run_id = ws.state["run_id"]
        .as_str()
        .filter(|r| !r.is_empty())
        .unwrap_or("run_001");
    if let Err(e) = manifest::finalize(root, turn, run_id, role) {
        return Ok(json!({"result": "error", "error_type": "finalization_failed", "error": e}));
    }
    let dir = bundle_rel(turn)?;
    if !inspect {
        for key in ["post_finalize_inject", "post_finalize_tamper"] {
            for (name, content) in setup[key][turn].as_object().into_iter().flatten() {
                write(root, &format!("{dir}/{name}"), text_of(content).as_bytes())?;
            }
        }
        for name in setup["post_finalize_delete"][turn]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(Json::as_str)
        {
            bundle_rel(name)?;
            let _ = std::fs::remove_file(root.join(&dir).join(name));
        }
        if setup["post_finalize_delete_manifest"] == true {
            let _ = std::fs::remove_file(root.join(&dir).join(manifest::MANIFEST));
        }
        match &setup["post_finalize_corrupt_manifest"][turn] {
            Json::Null => {}
            Json::String(text) => write(
                root,
                &format!("{dir}/{}", manifest::MANIFEST),
                text.as_bytes(),
            )?,
            other => {
                let text = serde_json::to_string_pretty(other).map_err(|e| e.to_string())?;
                write(
                    root,
                    &format!("{dir}/{}", manifest::MANIFEST),
                    text.as_bytes(),
                )?;
            }
        }
    }
    let v = manifest::verify(root, turn);
    if inspect {
        let paths: Vec<Json> = v
            .manifest
            .as_ref()
            .and_then(|m| m["files"].as_array())
            .into_iter()
            .flatten()
            .map(|f| f["path"].clone())
            .collect();
        let contains_self = paths.iter().any(|p| p == manifest::MANIFEST);
        return Ok(
            json!({"result": "success", "manifest_contains_self": contains_self, "file_paths": paths}),
        );
    }
    if let Some(first) = v.errors.first() {
        return Ok(
            json!({"result": "error", "error_type": first["type"], "verification_errors": v.errors}),
        );
    }
    Ok(
        json!({"result": "success", "manifest_valid": true, "manifest": v.manifest, "verification_errors": []}),
    )
}

/// A validation as the corpus shapes it: the stages passed, or the failed stage and an
/// error type read from its first error.
fn classify(v: &Validation) -> Json {
    if v.ok() {
        return json!({"result": "success", "stages_passed": turn_result::STAGES, "errors": [], "warnings": v.warnings});
    }
    let stage = v.stage.unwrap_or("schema");
    let mut out = json!({"result": "error", "failed_stage": stage, "errors": v.errors, "warnings": v.warnings});
    let first = v.errors.first().map(String::as_str).unwrap_or("");
    if stage == "schema"
        && let Some(field) = first.strip_prefix("Missing required field: ")
    {
        out["error_type"] = json!("missing_required_field");
        out["error_field"] = json!(field);
    } else if stage == "schema" && first.contains(".id must match pattern DEC-NNN.") {
        out["error_type"] = json!("invalid_decision_id_format");
        out["error_detail"] = json!("Decision ID must match DEC-NNN pattern");
    } else if stage == "assignment" && first.starts_with("run_id mismatch") {
        out["error_type"] = json!("run_id_mismatch");
    } else if stage == "assignment" && first.starts_with("turn_id mismatch") {
        out["error_type"] = json!("turn_id_mismatch");
    } else if let Some(path) = first
        .strip_prefix("Turn result claims modification of reserved path: ")
        .filter(|_| stage == "artifact")
    {
        out["error_type"] = json!("reserved_path_violation");
        out["error_path"] = json!(path);
    } else if stage == "protocol" && first.starts_with("Protocol violation:") {
        out["error_type"] = json!("challenge_requirement_violated");
        out["error_detail"] = json!("review_only role must raise at least one objection");
    } else if stage == "protocol" && v.errors.iter().any(|e| e.contains("mutually exclusive")) {
        out["error_type"] = json!("mutually_exclusive_requests");
        out["error_detail"] =
            json!("phase_transition_request and run_completion_request cannot both be present");
    } else {
        out["error_type"] = json!(v.error_class.unwrap_or("validation_error"));
    }
    out
}

/// `accept_turn`: a turn already in history or not active is refused before anything
/// changes; a valid staged result is appended to history as one entry and leaves the active
/// turns, in state written after history.
fn accept_turn(fixture: &Json, ws: &Workspace) -> Result<Json, String> {
    let root = ws.dir.path();
    let turn = fixture["input"]["args"]["turn_id"].as_str().unwrap_or("");
    let history_path = root.join(".agentxchain/history.jsonl");
    let history: Vec<Json> = std::fs::read_to_string(&history_path)
        .unwrap_or_default()
        .lines()
        .filter_map(|l| serde_json::from_str(l).ok())
        .collect();
    if history.iter().any(|h| h["turn_id"] == turn) {
        return Ok(
            json!({"result": "error", "error_type": "turn_already_accepted", "history_length": history.len()}),
        );
    }
    if ws.state["active_turns"].get(turn).is_none() {
        return Ok(
            json!({"result": "error", "error_type": "turn_not_active", "history_length": history.len(), "state_unchanged": true}),
        );
    }
    let v = turn_result::validate_staged(root, &ws.state, &ws.config, turn_result::STAGING_PATH);
    let Some(tr) = v.turn_result.as_ref().filter(|_| v.ok()) else {
        return Ok(classify(&v));
    };
    let sequence = ws.state["accepted_sequence"].as_u64().unwrap_or(0) + 1;
    let entry = json!({
        "turn_id": tr["turn_id"], "run_id": tr["run_id"], "role": tr["role"], "status": tr["status"],
        "summary": tr["summary"], "accepted_sequence": sequence,
        "accepted_at": humantime_now(),
    });
    let mut state = ws.state.clone();
    state["accepted_sequence"] = json!(sequence);
    if let Some(active) = state["active_turns"].as_object_mut() {
        active.remove(turn);
    }
    let mut lines = jsonl(&Json::Array(history.clone()));
    lines.extend(format!("{entry}\n").into_bytes());
    write(root, ".agentxchain/history.jsonl", &lines)?;
    write(
        root,
        ".agentxchain/state.json",
        &serde_json::to_vec_pretty(&state).unwrap_or_default(),
    )?;
    Ok(json!({
        "result": "success",
        "state": {"accepted_sequence": sequence, "active_turns": state["active_turns"]},
        "history_length": history.len() + 1,
        "history_last_entry": entry,
    }))
}

fn humantime_now() -> String {
    humantime::format_rfc3339_millis(std::time::SystemTime::now()).to_string()
}

/// The state machine's operations through the kernel's transitions; a transition that is
/// taken is written back as the new state.
fn transition(fixture: &Json, operation: &str, ws: &Workspace) -> Json {
    use axc_kernel::transitions as t;
    let args = &fixture["input"]["args"];
    let refused = |kind: &str, error: Option<String>| {
        let mut out = json!({"result": "error", "error_type": kind, "state_unchanged": true});
        if let Some(e) = error {
            out["error"] = json!(e);
        }
        out
    };
    if matches!(operation, "initialize_run" | "assign_turn") {
        let check = validate_config(&ws.config);
        if check["result"] != "success" {
            return json!({"result": "error", "error_type": "invalid_config", "errors": check["errors"], "state_unchanged": true});
        }
    }
    let now = humantime_now();
    let next = match operation {
        "initialize_run" => t::initialize(&ws.state, &ws.config, &random_id("run"), &now),
        "assign_turn" => t::assign(
            &ws.state,
            &ws.config,
            args["role_id"].as_str().unwrap_or(""),
            &random_id("turn"),
            &now,
            t::turn_timeout_minutes(&ws.config),
        ),
        "approve_transition" => t::approve_transition(&ws.state, &now),
        "approve_completion" => t::approve_completion(&ws.state, &now),
        "resolve_blocked" if args["action"] == "resume" => t::resume(&ws.state),
        "resolve_blocked" => Err(format!(
            "resolve action {} is not one the protocol has",
            args["action"]
        )),
        _ => {
            if let Some(field) = args
                .get("candidate_overrides")
                .and_then(|c| t::immutable_change(&ws.state, c))
            {
                return refused(
                    "immutable_field",
                    Some(format!("{field} cannot change once set")),
                );
            }
            match args["trigger"].as_str() {
                Some("gate_requires_human_approval") => {
                    t::pause_for_phase_gate(&ws.state, &args["gate"])
                }
                Some("escalation") => t::block_on_escalation(
                    &ws.state,
                    args["reason"].as_str().unwrap_or("unknown"),
                    args["role_id"].as_str().unwrap_or(""),
                ),
                // Completion and pausing happen only through their gates, never by request.
                _ => Err(format!(
                    "status {} is not reached by a direct transition",
                    args["target_status"]
                )),
            }
        }
    };
    match next {
        Ok(state) => {
            let written = serde_json::to_vec_pretty(&state).unwrap_or_default();
            if let Err(e) = write(ws.dir.path(), ".agentxchain/state.json", &written) {
                return json!({"result": "error", "error_type": "write_failed", "error": e});
            }
            json!({"result": "ok", "state_assertions": state})
        }
        Err(e) => refused("invalid_state_transition", Some(e)),
    }
}

/// `<prefix>_<16 hex digits>`, as the reference makes run and turn ids.
fn random_id(prefix: &str) -> String {
    use std::hash::{BuildHasher, Hasher};
    let mut h = std::collections::hash_map::RandomState::new().build_hasher();
    h.write_u128(
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_nanos())
            .unwrap_or_default(),
    );
    format!("{prefix}_{:016x}", h.finish())
}

/// A tier-3 fixture's workspace: the coordinator config, each repository's own project, and
/// the coordinator's state, barriers and logs.
fn materialize_coordinator(fixture: &Json) -> Result<tempfile::TempDir, String> {
    let setup = &fixture["setup"];
    let dir = tempfile::Builder::new()
        .prefix("agentxchain-conformance-multi-")
        .tempdir()
        .map_err(|e| format!("no temporary directory: {e}"))?;
    let root = dir.path();
    let pretty = |v: &Json| serde_json::to_vec_pretty(v).unwrap_or_default();
    if !setup["coordinator_config"].is_null() {
        write(
            root,
            "agentxchain-multi.json",
            &pretty(&setup["coordinator_config"]),
        )?;
    }
    for (id, repo) in setup["repos"].as_object().into_iter().flatten() {
        let path = repo["path"]
            .as_str()
            .map_or_else(|| format!("./repos/{id}"), str::to_owned);
        let path = path.trim_start_matches("./");
        write(root, &format!("{path}/.agentxchain/.keep"), b"")?;
        if !repo["config"].is_null() {
            write(
                root,
                &format!("{path}/agentxchain.json"),
                &pretty(&repo["config"]),
            )?;
        }
        if !repo["state"].is_null() {
            let config = inflate_config(&repo["config"]);
            write(
                root,
                &format!("{path}/.agentxchain/state.json"),
                &pretty(&inflate_state(&repo["state"], &config)),
            )?;
        }
        if !repo["history"].is_null() {
            write(
                root,
                &format!("{path}/.agentxchain/history.jsonl"),
                &jsonl(&repo["history"]),
            )?;
        }
        for (rel, content) in repo["files"].as_object().into_iter().flatten() {
            write(root, &format!("{path}/{rel}"), text_of(content).as_bytes())?;
        }
    }
    if !setup["coordinator_state"].is_null() || !setup["barriers"].is_null() {
        let m = ".agentxchain/multirepo";
        if !setup["coordinator_state"].is_null() {
            write(
                root,
                &format!("{m}/state.json"),
                &pretty(&setup["coordinator_state"]),
            )?;
        }
        if !setup["barriers"].is_null() {
            write(
                root,
                &format!("{m}/barriers.json"),
                &pretty(&setup["barriers"]),
            )?;
        }
        write(
            root,
            &format!("{m}/history.jsonl"),
            &jsonl(&setup["coordinator_history"]),
        )?;
        write(
            root,
            &format!("{m}/barrier-ledger.jsonl"),
            &jsonl(&setup["barrier_ledger"]),
        )?;
    }
    Ok(dir)
}

fn coordinator(fixture: &Json, operation: &str) -> Result<Json, String> {
    use axc_kernel::coordinator as c;
    let dir = materialize_coordinator(fixture)?;
    let root = dir.path();
    let read = |rel: &str| -> Result<Json, String> {
        let text = std::fs::read_to_string(root.join(rel)).map_err(|e| format!("{rel}: {e}"))?;
        serde_json::from_str(&text).map_err(|e| format!("{rel}: {e}"))
    };
    let config = read("agentxchain-multi.json")?;
    if operation == "validate_coordinator_config" {
        let errors = c::validate_config(&config);
        return Ok(match errors.first() {
            None => json!({"result": "success", "errors": []}),
            Some(first) => json!({
                "result": "error",
                "error_type": if first.starts_with("workstream_cycle:") { "workstream_cycle" } else { "invalid_coordinator_config" },
                "errors": errors,
            }),
        });
    }
    let state = read(".agentxchain/multirepo/state.json")?;
    let repos: Vec<(String, std::path::PathBuf)> = config["repos"]
        .as_object()
        .into_iter()
        .flatten()
        .map(|(id, r)| {
            (
                id.clone(),
                root.join(r["path"].as_str().unwrap_or("").trim()),
            )
        })
        .collect();
    let args = &fixture["input"]["args"];
    let repo = args["repo_id"].as_str().unwrap_or("");
    let workstream = args["workstream_id"].as_str().unwrap_or("");
    let reference = random_id("proj").replacen("proj_", &format!("proj_{workstream}_{repo}_"), 1);
    let now = humantime_now();
    let acceptance = c::Acceptance {
        repo,
        workstream,
        turn: &args["accepted_turn"],
        projection_ref: &reference,
        now: &now,
    };
    match c::project_acceptance(root, &state, &config, &repos, &acceptance) {
        Err(e) => Ok(json!({
            "result": "error",
            "error_type": if e.contains("Cross-repo write violation") { "cross_repo_write_violation" } else { "projection_failed" },
            "error": e,
        })),
        Ok(p) => {
            let history = c::history(root);
            let snapshot: Map<String, Json> = p
                .barriers
                .iter()
                .map(|(id, b)| {
                    let status = if b["status"] == "satisfied" {
                        b["status"].clone()
                    } else {
                        c::barrier_status(b, &history, &config)
                    };
                    (id.clone(), json!({"status": status}))
                })
                .collect();
            Ok(json!({
                "result": "success",
                "projection_ref": p.projection_ref,
                "barrier_effects": p.barrier_effects,
                "barrier_snapshot": snapshot,
            }))
        }
    }
}
