//! `doctor`: is the governed project ready to run? The reference's checks, ids, levels and
//! texts — config, roles, each runtime (with its capability contract), the state and its
//! dispatch bundles, the clean baseline, the current phase's workflow-kit artifacts, a
//! dashboard left running, admission control (gates no routed role can satisfy), approved
//! intents waiting — as one report object. Reads only: it never runs an agent (the reference's
//! spawn probe runs the command; here the command is resolved on `PATH` and checked to be
//! executable) and never writes.

use std::path::{Path, PathBuf};

use serde_json::{Map, Value as Json, json};

use crate::run::Store;

pub const PROTOCOL_VERSION: &str = "v7";
pub const CONFIG_GENERATION: u64 = 4;

fn check(id: &str, name: &str, level: &str, detail: impl Into<String>) -> Json {
    json!({"id": id, "name": name, "level": level, "detail": detail.into()})
}

/// The config's schema version as the reference reports it (`"1.0"` for generation 4).
pub fn config_schema_version(raw: &Json) -> Json {
    match &raw["schema_version"] {
        Json::String(s) if !s.trim().is_empty() => json!(s.trim()),
        v if v.as_u64() == Some(4) => json!("1.0"),
        _ => Json::Null,
    }
}

/// `protocol v7, config generation v4, config schema 1.0`.
pub fn version_label(raw: &Json) -> String {
    let mut parts = vec![
        format!("protocol {PROTOCOL_VERSION}"),
        format!("config generation v{CONFIG_GENERATION}"),
    ];
    if let Some(s) = config_schema_version(raw).as_str() {
        parts.push(format!("config schema {s}"));
    }
    parts.join(", ")
}

/// The reference's runtime capability contract for a runtime (its declared `capabilities`
/// overriding the three declarable fields).
pub fn runtime_contract(rt: &Json) -> Json {
    let (kind, transport, writes, review, proposals, binary, owned) = match rt["type"].as_str() {
        Some("manual") => (
            "manual",
            "manual",
            "direct",
            "Manual review roles may create planning and review artifacts without claiming automated repo writes.",
            "none",
            false,
            "yes",
        ),
        Some("local_cli") => (
            "local_cli",
            "local_cli",
            "direct",
            "Review-only bindings are invalid because local_cli exposes direct repo writes.",
            "optional",
            true,
            "yes",
        ),
        Some("api_proxy") => (
            "api_proxy",
            "provider_api",
            "proposal_only",
            "Review-only turns return structured review artifacts only; they do not write repo files directly.",
            "native",
            false,
            "proposal_apply_required",
        ),
        Some("remote_agent") => (
            "remote_agent",
            "remote_http",
            "proposal_only",
            "Review-only turns return JSON review results only; there is no proven local workspace write path.",
            "native",
            false,
            "proposal_apply_required",
        ),
        Some("mcp") => {
            let http = rt["transport"].as_str().map(str::trim) == Some("streamable_http");
            (
                "mcp",
                if http {
                    "mcp_streamable_http"
                } else {
                    "mcp_stdio"
                },
                "tool_defined",
                "Review-only behavior depends on the configured MCP tool contract; AgentXchain only requires a valid governed turn result.",
                "tool_defined",
                !http,
                "tool_defined",
            )
        }
        _ => (
            "",
            "unknown",
            "unknown",
            "Unknown runtime type — capability contract is not defined.",
            "unknown",
            false,
            "unknown",
        ),
    };
    let mut c = json!({
        "runtime_type": if kind.is_empty() { rt["type"].as_str().unwrap_or("unknown") } else { kind },
        "transport": transport, "can_write_files": writes, "review_only_behavior": review,
        "proposal_support": proposals, "requires_local_binary": binary,
        "workflow_artifact_ownership": owned,
    });
    for k in [
        "can_write_files",
        "proposal_support",
        "workflow_artifact_ownership",
    ] {
        if let Some(v) = rt["capabilities"][k].as_str().filter(|v| !v.is_empty()) {
            c[k] = json!(v);
        }
    }
    c
}

/// A role's effective write path through its runtime (`getRoleRuntimeCapabilityContract`).
pub fn role_contract(role_id: &str, role: &Json, rt: &Json) -> Json {
    let base = runtime_contract(rt);
    let authority = role["write_authority"].as_str().unwrap_or("unknown");
    let kind = rt["type"].as_str().unwrap_or("");
    let writes = base["can_write_files"].as_str().unwrap_or("");
    let owned = base["workflow_artifact_ownership"].as_str().unwrap_or("");
    let tool = writes == "tool_defined" || owned == "tool_defined";
    let (path, ownership, note): (&str, String, Option<String>) = match authority {
        "review_only" => {
            if kind == "manual" {
                (
                    "planning_only",
                    "yes".into(),
                    Some("Manual review roles can satisfy workflow-kit ownership for planning artifacts.".into()),
                )
            } else if writes == "direct" && kind == "local_cli" {
                (
                    "invalid_review_only_binding",
                    "invalid".into(),
                    Some("review_only + local_cli is invalid because local_cli exposes direct repo writes.".into()),
                )
            } else if tool {
                (
                    "tool_defined",
                    "tool_defined".into(),
                    Some("Review-only file production depends on the configured tool contract, not runtime type alone.".into()),
                )
            } else if writes == "proposal_only" {
                (
                    "review_artifact_only",
                    "no".into(),
                    Some("Review-only remote turns can attest and produce review artifacts, not workflow-kit files.".into()),
                )
            } else if writes == "direct" {
                let yes = owned == "yes";
                (
                    if yes { "planning_only" } else { "review_artifact_only" },
                    if yes { "yes" } else { "no" }.into(),
                    Some("Review-only roles constrain direct-write runtimes to planning or review artifact production only.".into()),
                )
            } else {
                ("unknown", "unknown".into(), None)
            }
        }
        "proposed" => {
            let patch = "This role can prepare patch-shaped work while still satisfying workflow-kit artifact ownership.";
            if kind == "manual" {
                ("patch_authoring", "yes".into(), Some(patch.into()))
            } else if writes == "direct" {
                ("patch_authoring", owned.into(), Some(patch.into()))
            } else if writes == "proposal_only" {
                (
                    "proposal_apply_required",
                    "proposal_apply_required".into(),
                    Some("Accepted proposals are staged under .agentxchain/proposed and require proposal apply before gate files exist in the repo.".into()),
                )
            } else if tool {
                (
                    "tool_defined",
                    "tool_defined".into(),
                    Some(
                        "Proposed-authoring behavior depends on the governed tool implementation."
                            .into(),
                    ),
                )
            } else {
                ("unknown", "unknown".into(), None)
            }
        }
        "authoritative" => {
            if writes == "direct" {
                (
                    "direct",
                    owned.into(),
                    (kind == "mcp").then(|| "Authoritative MCP repo writes are accepted because the connector declared a direct write path.".into()),
                )
            } else if writes == "proposal_only" {
                (
                    "invalid_authoritative_binding",
                    "invalid".into(),
                    Some(format!(
                        "{kind} does not support authoritative roles in v1."
                    )),
                )
            } else if tool {
                (
                    "tool_defined",
                    "tool_defined".into(),
                    Some("Authoritative repo writes are tool-defined, not guaranteed by runtime type alone.".into()),
                )
            } else {
                ("unknown", "unknown".into(), None)
            }
        }
        _ => ("unknown", "unknown".into(), None),
    };
    json!({
        "role_id": role_id, "role_write_authority": authority, "effective_write_path": path,
        "workflow_artifact_ownership": ownership, "notes": note.into_iter().collect::<Vec<_>>(),
        "runtime_contract": base,
    })
}

/// `transport=…; writes=…; proposals=…; owned_by=…; binary=…`.
pub fn summarize_contract(c: &Json) -> String {
    format!(
        "transport={}; writes={}; proposals={}; owned_by={}; binary={}",
        text(&c["transport"]),
        text(&c["can_write_files"]),
        text(&c["proposal_support"]),
        text(&c["workflow_artifact_ownership"]),
        if c["requires_local_binary"] == true {
            "yes"
        } else {
            "no"
        }
    )
}

/// `<role>(<authority>); path=…; owned_by=…`.
pub fn summarize_role(c: &Json) -> String {
    format!(
        "{}({}); path={}; owned_by={}",
        text(&c["role_id"]),
        text(&c["role_write_authority"]),
        text(&c["effective_write_path"]),
        text(&c["workflow_artifact_ownership"])
    )
}

fn text(v: &Json) -> String {
    v.as_str().map_or_else(|| v.to_string(), str::to_owned)
}

fn executable(p: &Path) -> Result<bool, ()> {
    use std::os::unix::fs::PermissionsExt;
    match std::fs::metadata(p) {
        Ok(m) if m.is_file() => Ok(m.permissions().mode() & 0o111 != 0),
        Ok(_) => Ok(false),
        Err(_) => Err(()),
    }
}

/// Finds `command` as a spawn would: a path (with `/`) from `cwd`, else on `PATH`.
/// `Ok(true)` runnable, `Ok(false)` there but not executable, `Err` not found.
fn resolve(command: &str, cwd: &Path) -> Result<bool, ()> {
    if command.contains('/') {
        return executable(&cwd.join(command));
    }
    let path = std::env::var_os("PATH").unwrap_or_default();
    let mut found = Err(());
    for dir in std::env::split_paths(&path) {
        let dir = if dir.as_os_str().is_empty() {
            PathBuf::from(".")
        } else {
            dir
        };
        match executable(&dir.join(command)) {
            Ok(true) => return Ok(true),
            Ok(false) => found = Ok(false),
            Err(()) => {}
        }
    }
    found
}

fn resolution_fix(command: &str) -> &'static str {
    let base = Path::new(command)
        .file_name()
        .and_then(|b| b.to_str())
        .unwrap_or(command);
    if base == "codex" || base == "codex.exe" {
        "Set \"command\" to the absolute path, e.g. \"/Applications/Codex.app/Contents/Resources/codex\", or add Codex to PATH in the dispatch spawn context."
    } else if command.contains('~') {
        "Expand \"~\" to an absolute path in \"command\". Shell expansion does not apply to governed dispatch."
    } else {
        "Set \"command\" to an absolute path or add it to PATH in the dispatch spawn context."
    }
}

/// Whether the runtime's command could be started (`probeRuntimeSpawnContext`, without
/// starting it): `(ok, detail)`.
fn spawn_probe(root: &Path, rt: &Json) -> (bool, String) {
    let command = if rt["type"] == "local_cli" {
        crate::run::local_cli::command(rt, "AgentXchain spawn-context probe").map(|(c, _)| c)
    } else {
        match &rt["command"] {
            Json::Array(a) => a.first().and_then(Json::as_str).map(str::to_owned),
            Json::String(s) => Some(s.clone()),
            _ => None,
        }
        .filter(|c| !c.is_empty())
    };
    let Some(command) = command else {
        return (
            false,
            "No command configured for the dispatch spawn context.".into(),
        );
    };
    let cwd = match rt["cwd"].as_str().filter(|c| !c.is_empty()) {
        Some(c) => match Store::new(root).path(c) {
            Ok(p) => p,
            Err(_) => {
                return (
                    false,
                    format!("Runtime cwd \"{c}\" is not a directory inside the project."),
                );
            }
        },
        None => root.to_path_buf(),
    };
    if !cwd.is_dir() {
        return (
            false,
            format!(
                "Runtime cwd \"{}\" does not exist in the dispatch spawn context.",
                text(&rt["cwd"])
            ),
        );
    }
    match resolve(&command, &cwd) {
        Ok(true) => (
            true,
            format!("\"{command}\" is resolvable in the dispatch spawn context."),
        ),
        Ok(false) => (
            false,
            format!(
                "\"{command}\" exists but is not executable in the dispatch spawn context. Mark it executable or point \"command\" at the real executable path."
            ),
        ),
        Err(()) => (
            false,
            format!(
                "\"{command}\" is not resolvable in the dispatch spawn context. {}",
                resolution_fix(&command)
            ),
        ),
    }
}

fn runtime_check(root: &Path, id: &str, rt: &Json, bound: &[(String, Json)]) -> Json {
    let (level, detail) = match rt["type"].as_str() {
        None | Some("") => ("warn", "No runtime type specified".to_owned()),
        Some("manual") => ("pass", "Manual runtime (no binary needed)".to_owned()),
        Some("local_cli") => {
            let (ok, d) = spawn_probe(root, rt);
            (if ok { "pass" } else { "fail" }, d)
        }
        Some("api_proxy") => match rt["auth_env"].as_str().filter(|e| !e.is_empty()) {
            None => (
                "pass",
                format!(
                    "{} provider (no auth required)",
                    rt["provider"].as_str().unwrap_or("unknown")
                ),
            ),
            Some(env) if std::env::var_os(env).is_some_and(|v| !v.is_empty()) => {
                ("pass", format!("{env} is set"))
            }
            Some(env) => ("fail", format!("{env} not set")),
        },
        Some("mcp") if rt["transport"].as_str().unwrap_or("stdio") == "streamable_http" => (
            "warn",
            "Remote MCP endpoint (cannot verify at doctor time)".to_owned(),
        ),
        Some("mcp") => {
            let (ok, d) = spawn_probe(root, rt);
            (if ok { "pass" } else { "fail" }, d)
        }
        Some("remote_agent") => (
            "warn",
            "Remote agent endpoint (cannot verify at doctor time)".to_owned(),
        ),
        Some(other) => ("warn", format!("Unknown runtime type: {other}")),
    };
    let roles: Vec<Json> = bound
        .iter()
        .map(|(rid, role)| role_contract(rid, role, rt))
        .collect();
    let contract = roles.first().map_or_else(
        || role_contract("__unbound__", &json!({"write_authority": "unknown"}), rt)["runtime_contract"].clone(),
        |r| r["runtime_contract"].clone(),
    );
    let mut c = check(
        &format!("runtime_{id}"),
        &format!("Runtime: {id}"),
        level,
        detail,
    );
    c["runtime_type"] = json!(rt["type"].as_str().unwrap_or("unknown"));
    c["runtime_contract"] = contract;
    c["bound_roles"] = json!(roles);
    c
}

/// The gate's files and the phase's workflow-kit artifacts (`getEffectiveGateArtifacts`):
/// `(path, required, owned_by)`.
fn gate_artifacts(config: &Json, gate: &Json, phase: &str) -> Vec<(String, bool, Option<String>)> {
    let mut out: Vec<(String, bool, Option<String>)> = gate["requires_files"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(Json::as_str)
        .map(|p| (p.to_owned(), true, None))
        .collect();
    for a in config["workflow_kit"]["phases"][phase]["artifacts"]
        .as_array()
        .into_iter()
        .flatten()
    {
        let Some(path) = a["path"].as_str().filter(|p| !p.is_empty()) else {
            continue;
        };
        let i = match out.iter().position(|(p, ..)| p == path) {
            Some(i) => i,
            None => {
                out.push((path.to_owned(), false, None));
                out.len() - 1
            }
        };
        out[i].1 |= a["required"] != false;
        if let Some(o) = a["owned_by"].as_str() {
            out[i].2 = Some(o.to_owned());
        }
    }
    out
}

fn produces_files(c: &Json) -> bool {
    matches!(
        c["effective_write_path"].as_str(),
        Some(
            "direct"
                | "planning_only"
                | "patch_authoring"
                | "proposal_apply_required"
                | "tool_defined"
        )
    )
}

fn owns_artifacts(c: &Json) -> bool {
    matches!(
        c["workflow_artifact_ownership"].as_str(),
        Some("yes" | "proposal_apply_required" | "tool_defined")
    )
}

/// Admission control: `(errors, warnings)` — a gate whose required files no routed role can
/// write (ADM-001), an owner outside the routing (ADM-002) or unable to own (ADM-004); human
/// approval with no manual runtime (ADM-003, advisory).
pub fn admission(config: &Json) -> (Vec<String>, Vec<String>) {
    let mut errors = Vec::new();
    let mut warnings = Vec::new();
    let Some(routing) = config["routing"].as_object() else {
        return (errors, warnings);
    };
    let roles = &config["roles"];
    let runtimes = &config["runtimes"];
    let runtime_of = |role: &Json| {
        let key = role["runtime_id"]
            .as_str()
            .or(role["runtime"].as_str())
            .unwrap_or("");
        runtimes[key].clone()
    };
    for (phase, route) in routing {
        let Some(gate_id) = route["exit_gate"].as_str() else {
            continue;
        };
        let gate = &config["gates"][gate_id];
        if !gate.is_object() {
            continue;
        }
        let required: Vec<_> = gate_artifacts(config, gate, phase)
            .into_iter()
            .filter(|a| a.1)
            .collect();
        if required.is_empty() {
            continue;
        }
        let mut ids: Vec<String> = Vec::new();
        for r in std::iter::once(&route["entry_role"])
            .chain(route["allowed_next_roles"].as_array().into_iter().flatten())
            .filter_map(Json::as_str)
            .filter(|r| !r.is_empty())
        {
            if !ids.iter().any(|i| i == r) {
                ids.push(r.to_owned());
            }
        }
        let present: Vec<(&String, &Json, Json)> = ids
            .iter()
            .filter_map(|id| {
                let role = roles.get(id.as_str())?;
                Some((id, role, runtime_of(role)))
            })
            .collect();
        let producer = present
            .iter()
            .any(|(id, role, rt)| produces_files(&role_contract(id, role, rt)));
        let automated: Vec<_> = present
            .iter()
            .filter(|(.., rt)| rt["type"] != "manual")
            .collect();
        if !producer && !automated.is_empty() {
            let summary = automated
                .iter()
                .map(|(id, role, rt)| {
                    let c = role_contract(id, role, rt);
                    format!(
                        "{id}:{}/{}->{}",
                        text(&role["write_authority"]),
                        rt["type"].as_str().unwrap_or("unknown"),
                        text(&c["effective_write_path"])
                    )
                })
                .collect::<Vec<_>>()
                .join(", ");
            let files = required
                .iter()
                .map(|a| a.0.as_str())
                .collect::<Vec<_>>()
                .join(", ");
            errors.push(format!("ADM-001: Phase \"{phase}\" gate \"{gate_id}\" requires files ({files}) but no routed role has a reachable file-production path ({summary})."));
        }
        for (path, _, owner) in &required {
            let Some(owner) = owner else { continue };
            if !ids.iter().any(|i| i == owner) {
                errors.push(format!("ADM-002: Phase \"{phase}\" artifact \"{path}\" is owned_by \"{owner}\" but that role is not in the phase routing (entry_role or allowed_next_roles). The ownership predicate can never be satisfied."));
                continue;
            }
            let Some(role) = roles.get(owner.as_str()) else {
                continue;
            };
            let rt = runtime_of(role);
            let c = role_contract(owner, role, &rt);
            if !owns_artifacts(&c) {
                errors.push(format!("ADM-004: Phase \"{phase}\" artifact \"{path}\" is owned_by \"{owner}\" but that role resolves to workflow ownership \"{}\" via {}/{} ({}).", text(&c["workflow_artifact_ownership"]), text(&role["write_authority"]), rt["type"].as_str().unwrap_or("unknown"), text(&c["effective_write_path"])));
            }
        }
    }
    human_topology(config, routing, &mut warnings);
    (errors, warnings)
}

fn human_topology(config: &Json, routing: &Map<String, Json>, warnings: &mut Vec<String>) {
    let manual = config["runtimes"]
        .as_object()
        .is_some_and(|m| m.values().any(|r| r["type"] == "manual"));
    if manual {
        return;
    }
    let policy = &config["approval_policy"];
    let pt = &policy["phase_transitions"];
    let rules: Vec<&Json> = pt["rules"].as_array().into_iter().flatten().collect();
    let matches = |rule: &Json, phase: &str| {
        rule["from_phase"]
            .as_str()
            .is_none_or(|f| f.is_empty() || f == phase)
    };
    let auto_phase = |phase: &str| {
        rules
            .iter()
            .any(|r| r["action"] == "auto_approve" && matches(r, phase))
            || pt["default"] == "auto_approve"
    };
    // (phase or None for completion, gate)
    let mut points: Vec<(Option<String>, String)> = Vec::new();
    for (phase, route) in routing {
        let Some(gate) = route["exit_gate"].as_str() else {
            continue;
        };
        if config["gates"][gate]["requires_human_approval"] == true && !auto_phase(phase) {
            points.push((Some(phase.clone()), gate.to_owned()));
        }
    }
    if let Some(gate) = config["completion_gate"].as_str()
        && config["gates"][gate]["requires_human_approval"] == true
        && policy["run_completion"]["action"] != "auto_approve"
    {
        points.push((None, gate.to_owned()));
    }
    let has = |points: &[(Option<String>, String)], phase: Option<&str>| {
        points.iter().any(|(p, _)| p.as_deref() == phase)
    };
    if pt["default"] == "require_human" {
        for (phase, route) in routing {
            let overridden = rules
                .iter()
                .any(|r| r["action"] == "auto_approve" && matches(r, phase));
            if !overridden && !has(&points, Some(phase)) {
                let gate = route["exit_gate"].as_str().unwrap_or("(policy)").to_owned();
                points.push((Some(phase.clone()), gate));
            }
        }
    }
    for r in &rules {
        if let Some(from) = r["from_phase"].as_str().filter(|f| !f.is_empty())
            && r["action"] == "require_human"
            && !has(&points, Some(from))
        {
            points.push((Some(from.to_owned()), "(policy)".into()));
        }
    }
    if policy["run_completion"]["action"] == "require_human" && !has(&points, None) {
        points.push((None, "(policy)".into()));
    }
    for (phase, gate) in points {
        warnings.push(match phase {
            Some(p) => format!("ADM-003: Phase \"{p}\" requires human approval (gate \"{gate}\") but no role uses runtime type \"manual\". The run will pause at pending_phase_transition and require external approval (CLI, dashboard, or webhook)."),
            None => format!("ADM-003: Run completion requires human approval (gate \"{gate}\") but no role uses runtime type \"manual\". The run will pause at pending_run_completion and require external approval."),
        });
    }
}

/// The report for the project at `store` (its raw `agentxchain.json` already parsed), with
/// this binary's version.
pub fn report(store: &Store, raw: &Json, cli_version: &str) -> Json {
    let root = store.root();
    let mut checks = vec![check(
        "cli_version",
        "CLI version",
        "info",
        "Could not verify the published docs CLI floor.",
    )];
    let loaded = crate::run::config::read(store);
    let problems = raw
        .as_object()
        .map(axc_core::config::validate_governed)
        .unwrap_or_else(|| vec!["agentxchain.json must be an object".to_owned()]);
    match &loaded {
        Err(r) => checks.push(check(
            "config_valid",
            "Config validation",
            "fail",
            &r.message,
        )),
        Ok(_) if !problems.is_empty() => checks.push(check(
            "config_valid",
            "Config validation",
            "fail",
            problems
                .iter()
                .take(3)
                .cloned()
                .collect::<Vec<_>>()
                .join("; "),
        )),
        Ok(_) => checks.push(check(
            "config_valid",
            "Config validation",
            "pass",
            "Config loads and validates",
        )),
    }
    let config = super::status::normalize_config(raw);
    let roles: Vec<String> = config["roles"]
        .as_object()
        .map(|m| m.keys().cloned().collect())
        .unwrap_or_default();
    checks.push(if roles.is_empty() {
        check("roles_defined", "Roles defined", "fail", "No roles defined")
    } else {
        check(
            "roles_defined",
            "Roles defined",
            "pass",
            format!(
                "{} role{}: {}",
                roles.len(),
                if roles.len() > 1 { "s" } else { "" },
                roles.join(", ")
            ),
        )
    });
    let runtimes = if config["runtimes"].is_object() {
        &config["runtimes"]
    } else {
        &raw["runtimes"]
    };
    let mut probe_ids = Vec::new();
    for (id, rt) in runtimes.as_object().into_iter().flatten() {
        let bound: Vec<(String, Json)> = config["roles"]
            .as_object()
            .into_iter()
            .flatten()
            .filter(|(_, r)| r["runtime_id"] == id.as_str())
            .map(|(k, r)| (k.clone(), r.clone()))
            .collect();
        checks.push(runtime_check(root, id, rt, &bound));
        let remote = matches!(rt["type"].as_str(), Some("api_proxy" | "remote_agent"))
            || (rt["type"] == "mcp" && rt["transport"] == "streamable_http");
        if remote {
            probe_ids.push(id.clone());
        }
    }
    checks.push(if root.join(".agentxchain").is_dir() {
        check(
            "state_dir",
            "State directory",
            "pass",
            ".agentxchain/ exists",
        )
    } else {
        check(
            "state_dir",
            "State directory",
            "warn",
            ".agentxchain/ missing (created on first run)",
        )
    });
    let state = match store.read_text(crate::run::store::STATE, 16 << 20) {
        Ok(Some(text)) => match serde_json::from_str::<Json>(&text) {
            Ok(s) if s.get("schema_version").is_some_and(|v| !v.is_null()) => {
                checks.push(check(
                    "state_health",
                    "State health",
                    "pass",
                    format!(
                        "schema_version: {}, status: {}",
                        text_of(&s["schema_version"]),
                        s["status"].as_str().unwrap_or("unknown")
                    ),
                ));
                Some(s)
            }
            Ok(s) => {
                checks.push(check(
                    "state_health",
                    "State health",
                    "fail",
                    "State file missing schema_version",
                ));
                Some(s)
            }
            Err(_) => {
                checks.push(check(
                    "state_health",
                    "State health",
                    "fail",
                    "State file is malformed JSON",
                ));
                None
            }
        },
        Ok(None) => {
            checks.push(check(
                "state_health",
                "State health",
                "warn",
                "No state file yet (first run pending)",
            ));
            None
        }
        Err(r) => {
            checks.push(check("state_health", "State health", "fail", &r.message));
            None
        }
    };
    let active: Vec<Json> = state
        .as_ref()
        .and_then(|s| s["active_turns"].as_object())
        .map(|m| m.values().cloned().collect())
        .unwrap_or_default();
    if state.is_some() {
        let mut drifts = Vec::new();
        for t in &active {
            let Some(role_id) = t["assigned_role"].as_str() else {
                continue;
            };
            let role = &config["roles"][role_id];
            if !role.is_object() {
                continue;
            }
            let now_rt = role["runtime_id"].as_str().unwrap_or("");
            let was_rt = t["runtime_id"].as_str().unwrap_or("");
            let rt_changed = !now_rt.is_empty() && !was_rt.is_empty() && now_rt != was_rt;
            let now_auth = role["write_authority"].as_str().unwrap_or("");
            let was_auth = t["write_authority"].as_str().unwrap_or("");
            let auth_changed = !now_auth.is_empty() && !was_auth.is_empty() && now_auth != was_auth;
            let now_type = config["runtimes"][now_rt]["type"].as_str().unwrap_or("");
            let was_type = config["runtimes"][was_rt]["type"].as_str().unwrap_or("");
            let type_changed = !now_type.is_empty() && !was_type.is_empty() && now_type != was_type;
            if rt_changed || auth_changed || type_changed {
                let turn = t["turn_id"].as_str().unwrap_or("");
                drifts.push(json!({
                    "turn_id": turn, "role_id": role_id,
                    "runtime_changed": rt_changed || type_changed, "old_runtime": t["runtime_id"], "new_runtime": now_rt,
                    "authority_changed": auth_changed, "old_authority": t["write_authority"], "new_authority": now_auth,
                    "recovery_command": format!("agentxchain reissue-turn --turn {turn} --reason \"config rebinding\""),
                }));
            }
        }
        if !drifts.is_empty() {
            let summary = drifts
                .iter()
                .map(|d| {
                    let mut parts = Vec::new();
                    if d["runtime_changed"] == true {
                        parts.push(format!(
                            "runtime {} → {}",
                            text_of(&d["old_runtime"]),
                            text_of(&d["new_runtime"])
                        ));
                    }
                    if d["authority_changed"] == true {
                        parts.push(format!(
                            "authority {} → {}",
                            text_of(&d["old_authority"]),
                            text_of(&d["new_authority"])
                        ));
                    }
                    format!(
                        "{} ({}): {}",
                        text_of(&d["turn_id"]),
                        text_of(&d["role_id"]),
                        parts.join(", ")
                    )
                })
                .collect::<Vec<_>>()
                .join("; ");
            let mut c = check(
                "binding_drift",
                "Active turn binding",
                "warn",
                format!("Stale binding: {summary}. Run: agentxchain reissue-turn"),
            );
            c["drifts"] = json!(drifts);
            checks.push(c);
        } else if !active.is_empty() {
            checks.push(check(
                "binding_drift",
                "Active turn binding",
                "pass",
                "Active turns match current config bindings",
            ));
        }
        let desynced: Vec<Json> = active
            .iter()
            .filter_map(|t| {
                let id = t["turn_id"].as_str()?;
                let dir = crate::manifest::bundle_dir(root, id)?;
                (!dir.is_dir()).then(|| {
                    json!({"turn_id": id, "role": t["assigned_role"].as_str().unwrap_or("unknown"),
                           "expected_path": format!(".agentxchain/dispatch/turns/{id}")})
                })
            })
            .collect();
        if !desynced.is_empty() {
            let summary = desynced
                .iter()
                .map(|d| {
                    format!(
                        "{} ({}): missing {}",
                        text_of(&d["turn_id"]),
                        text_of(&d["role"]),
                        text_of(&d["expected_path"])
                    )
                })
                .collect::<Vec<_>>()
                .join("; ");
            let mut c = check(
                "bundle_integrity",
                "Dispatch bundle integrity",
                "fail",
                format!("Ghost turn(s): {summary}. Run: agentxchain reissue-turn"),
            );
            c["desynced"] = json!(desynced);
            checks.push(c);
        } else if !active.is_empty() {
            checks.push(check(
                "bundle_integrity",
                "Dispatch bundle integrity",
                "pass",
                "All active turns have dispatch bundles on disk",
            ));
        }
    }
    let writable: Vec<&str> = config["roles"]
        .as_object()
        .into_iter()
        .flatten()
        .filter(|(_, r)| {
            matches!(
                r["write_authority"].as_str(),
                Some("authoritative" | "proposed")
            )
        })
        .map(|(k, _)| k.as_str())
        .collect();
    if !writable.is_empty() {
        checks.push(
            match crate::run::assign::clean_baseline_error(store, "authoritative") {
                None => check(
                    "clean_baseline",
                    "Clean working tree",
                    "pass",
                    "Working tree is clean for authoritative/proposed turns",
                ),
                Some(reason) => check(
                    "clean_baseline",
                    "Clean working tree",
                    "warn",
                    format!("{reason} Writable roles: {}", writable.join(", ")),
                ),
            },
        );
    }
    // The current phase (the reference reads a `current_phase` field no state has, so it
    // always checks the first phase).
    let phase = state
        .as_ref()
        .and_then(|s| s["phase"].as_str().map(str::to_owned))
        .or_else(|| {
            config["routing"]
                .as_object()
                .and_then(|m| m.keys().next().cloned())
        })
        .unwrap_or_else(|| "planning".into());
    let kit: Vec<&Json> = config["workflow_kit"]["phases"][&phase]["artifacts"]
        .as_array()
        .into_iter()
        .flatten()
        .collect();
    if !kit.is_empty() {
        let required: Vec<&&Json> = kit.iter().filter(|a| a["required"] != false).collect();
        let missing = required
            .iter()
            .filter(|a| a["path"].as_str().is_none_or(|p| !root.join(p).exists()))
            .count();
        checks.push(if missing == 0 {
            check(
                "workflow_kit",
                "Workflow-kit artifacts",
                "pass",
                format!(
                    "All {} required artifacts present for {phase}",
                    required.len()
                ),
            )
        } else {
            check(
                "workflow_kit",
                "Workflow-kit artifacts",
                "warn",
                format!(
                    "{missing}/{} required artifacts missing for {phase}",
                    required.len()
                ),
            )
        });
    }
    let dash = super::status::dashboard_session(store);
    checks.push(match dash["status"].as_str() {
        Some("running") => check(
            "dashboard_session",
            "Dashboard session",
            "pass",
            format!(
                "Dashboard running at {} (PID: {})",
                text_of(&dash["url"]),
                text_of(&dash["pid"])
            ),
        ),
        Some("stale") => check(
            "dashboard_session",
            "Dashboard session",
            "warn",
            format!(
                "Stale dashboard session files (PID {} not running)",
                dash["pid"]
                    .as_i64()
                    .map_or("?".to_owned(), |p| p.to_string())
            ),
        ),
        _ => check(
            "dashboard_session",
            "Dashboard session",
            "info",
            "No dashboard session",
        ),
    });
    let (adm_errors, adm_warnings) = admission(&config);
    let strip = |s: &String| {
        s.split_once(": ")
            .filter(|(code, _)| code.starts_with("ADM-"))
            .map_or(s.clone(), |(_, rest)| rest.to_owned())
    };
    checks.push(if !adm_errors.is_empty() {
        check(
            "admission_control",
            "Admission control",
            "fail",
            adm_errors
                .iter()
                .take(2)
                .map(strip)
                .collect::<Vec<_>>()
                .join("; "),
        )
    } else if !adm_warnings.is_empty() {
        check(
            "admission_control",
            "Admission control",
            "info",
            adm_warnings
                .iter()
                .take(2)
                .map(strip)
                .collect::<Vec<_>>()
                .join("; "),
        )
    } else {
        check(
            "admission_control",
            "Admission control",
            "pass",
            "No dead-end configs detected",
        )
    });
    let run_id = state.as_ref().and_then(|s| s["run_id"].as_str());
    let pending = pending_intents(store, run_id);
    if !pending.is_empty() {
        let summary = pending
            .iter()
            .map(|(p, id)| format!("[{p}] {id}"))
            .collect::<Vec<_>>()
            .join(", ");
        checks.push(check(
            "pending_intents",
            "Pending intents",
            "info",
            format!(
                "{} approved intent(s) in queue, next turn will consume them: {summary}",
                pending.len()
            ),
        ));
    }
    let fails = checks.iter().filter(|c| c["level"] == "fail").count();
    let warns = checks.iter().filter(|c| c["level"] == "warn").count();
    let project = raw["project"]["id"]
        .as_str()
        .or(raw["project"]["name"].as_str())
        .unwrap_or("unknown");
    json!({
        "project": project,
        "protocol_version": PROTOCOL_VERSION,
        "config_generation": CONFIG_GENERATION,
        "config_schema_version": config_schema_version(raw),
        "config_version": CONFIG_GENERATION,
        "cli_version": cli_version,
        "docs_min_cli_version": null,
        "cli_version_status": "unknown",
        "cli_version_source": null,
        "overall": if fails > 0 { "fail" } else if warns > 0 { "warn" } else { "pass" },
        "connector_probe_recommended": !probe_ids.is_empty(),
        "connector_probe_runtime_ids": probe_ids,
        "connector_probe_detail": if probe_ids.is_empty() { Json::Null } else {
            json!("run `agentxchain connector check` to live-probe api / remote HTTP runtimes, then `agentxchain connector validate <runtime_id>` to prove one binding produces valid governed turn results.")
        },
        "checks": checks,
        "fail_count": fails,
        "warn_count": warns,
    })
}

fn text_of(v: &Json) -> String {
    match v {
        Json::String(s) => s.clone(),
        Json::Null => "null".into(),
        other => other.to_string(),
    }
}

/// Approved intents the next turn would take, by priority then approval time:
/// `(priority, intent_id)`.
fn pending_intents(store: &Store, run_id: Option<&str>) -> Vec<(String, String)> {
    let mut found: Vec<(u8, String, String, String)> = Vec::new();
    let Ok(dir) = store.path(".agentxchain/intake/intents") else {
        return Vec::new();
    };
    let Ok(entries) = std::fs::read_dir(dir) else {
        return Vec::new();
    };
    for e in entries.flatten() {
        let name = e.file_name().to_string_lossy().into_owned();
        if !name.ends_with(".json") {
            continue;
        }
        let Ok(Some(intent)) = store.read_json(&format!(".agentxchain/intake/intents/{name}"))
        else {
            continue;
        };
        if intent["status"] != "approved" {
            continue;
        }
        if let Some(run) = run_id {
            let bound = intent["approved_run_id"].as_str();
            if !(bound == Some(run) || (bound.is_none() && intent["cross_run_durable"] == true)) {
                continue;
            }
        }
        let p = intent["priority"].as_str().unwrap_or("p0").to_owned();
        let rank = match p.as_str() {
            "p0" => 0,
            "p1" => 1,
            "p2" => 2,
            "p3" => 3,
            _ => 9,
        };
        let at = intent["approved_at"]
            .as_str()
            .or(intent["created_at"].as_str())
            .unwrap_or("")
            .to_owned();
        found.push((rank, at, text_of(&intent["intent_id"]), p));
    }
    found.sort();
    found.into_iter().map(|(_, _, id, p)| (p, id)).collect()
}
