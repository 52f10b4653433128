//! The multi-repo coordinator (`agentxchain-multi.json`, `.agentxchain/multirepo/`): its
//! config's rules, and the projection of one repository's accepted turn into the coordinator's
//! history with the completion barriers it moves.

use std::path::{Component, Path, PathBuf};

use serde_json::{Map, Value as Json, json};

use crate::js::{is_decision_id, nonblank};

const BARRIER_TYPES: [&str; 5] = [
    "all_repos_accepted",
    "interface_alignment",
    "named_decisions",
    "ordered_repo_sequence",
    "shared_human_gate",
];

fn valid_id(s: &str) -> bool {
    !s.is_empty()
        && s.bytes()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'_' || b == b'-')
}

/// Every problem of a coordinator config, each `<code>: <message>` (the reference's codes).
pub fn validate_config(raw: &Json) -> Vec<String> {
    let mut e: Vec<String> = Vec::new();
    let mut push = |code: &str, m: String| e.push(format!("{code}: {m}"));
    let Some(obj) = raw.as_object() else {
        return vec!["config_invalid: agentxchain-multi.json must be a JSON object".into()];
    };
    if raw["schema_version"] != "0.1" {
        push(
            "schema_version_invalid",
            "schema_version must be \"0.1\"".into(),
        );
    }
    match raw["project"].as_object() {
        None => push(
            "project_invalid",
            "project must be an object with id and name".into(),
        ),
        Some(_) => {
            if !nonblank(&raw["project"]["id"]) {
                push(
                    "project_id_invalid",
                    "project.id must be a non-empty string".into(),
                );
            }
            if !nonblank(&raw["project"]["name"]) {
                push(
                    "project_name_invalid",
                    "project.name must be a non-empty string".into(),
                );
            }
        }
    }
    let repos = raw["repos"].as_object().filter(|r| !r.is_empty());
    let repo_ids: Vec<&String> = repos.map(|r| r.keys().collect()).unwrap_or_default();
    match repos {
        None => push("repos_invalid", "repos must be a non-empty object".into()),
        Some(repos) => {
            for (id, repo) in repos {
                if !valid_id(id) {
                    push(
                        "repo_id_invalid",
                        format!(
                            "repo id \"{id}\" must be lowercase alphanumeric, hyphen, or underscore"
                        ),
                    );
                }
                if !repo.is_object() {
                    push("repo_invalid", format!("repo \"{id}\" must be an object"));
                    continue;
                }
                if !nonblank(&repo["path"]) {
                    push(
                        "repo_path_invalid",
                        format!("repo \"{id}\" path must be a non-empty string"),
                    );
                }
                if repo.get("default_branch").is_some() && !nonblank(&repo["default_branch"]) {
                    push(
                        "repo_default_branch_invalid",
                        format!(
                            "repo \"{id}\" default_branch must be a non-empty string when provided"
                        ),
                    );
                }
                if repo.get("required").is_some_and(|r| !r.is_boolean()) {
                    push(
                        "repo_required_invalid",
                        format!("repo \"{id}\" required must be a boolean when provided"),
                    );
                }
            }
        }
    }
    let workstreams = raw["workstreams"].as_object().filter(|w| !w.is_empty());
    match workstreams {
        None => push(
            "workstreams_invalid",
            "workstreams must be a non-empty object".into(),
        ),
        Some(ws) => {
            let phases: Vec<String> = match raw["routing"].as_object() {
                Some(r) => r.keys().cloned().collect(),
                None => ["planning", "implementation", "qa"]
                    .map(str::to_owned)
                    .to_vec(),
            };
            for (id, w) in ws {
                if !valid_id(id) {
                    push(
                        "workstream_id_invalid",
                        format!(
                            "workstream id \"{id}\" must be lowercase alphanumeric, hyphen, or underscore"
                        ),
                    );
                }
                if !w.is_object() {
                    push(
                        "workstream_invalid",
                        format!("workstream \"{id}\" must be an object"),
                    );
                    continue;
                }
                if !w["phase"]
                    .as_str()
                    .is_some_and(|p| phases.iter().any(|x| x == p))
                {
                    push(
                        "workstream_phase_invalid",
                        format!(
                            "workstream \"{id}\" phase must be one of: {}",
                            phases.join(", ")
                        ),
                    );
                }
                match w["repos"].as_array().filter(|r| !r.is_empty()) {
                    None => push(
                        "workstream_repos_invalid",
                        format!("workstream \"{id}\" repos must be a non-empty array"),
                    ),
                    Some(list) => {
                        let mut seen: Vec<&str> = Vec::new();
                        for r in list {
                            let Some(r) = r.as_str().filter(|r| !r.trim().is_empty()) else {
                                push(
                                    "workstream_repo_invalid",
                                    format!(
                                        "workstream \"{id}\" repos entries must be non-empty strings"
                                    ),
                                );
                                continue;
                            };
                            if seen.contains(&r) {
                                push(
                                    "workstream_repo_duplicate",
                                    format!("workstream \"{id}\" contains duplicate repo \"{r}\""),
                                );
                                continue;
                            }
                            seen.push(r);
                            if !repo_ids.iter().any(|x| *x == r) {
                                push(
                                    "workstream_repo_unknown",
                                    format!(
                                        "workstream \"{id}\" references undeclared repo \"{r}\""
                                    ),
                                );
                            }
                        }
                    }
                }
                if !nonblank(&w["entry_repo"]) {
                    push(
                        "workstream_entry_repo_invalid",
                        format!("workstream \"{id}\" entry_repo must be a non-empty string"),
                    );
                } else if !w["repos"]
                    .as_array()
                    .is_some_and(|r| r.contains(&w["entry_repo"]))
                {
                    push(
                        "workstream_entry_repo_mismatch",
                        format!(
                            "workstream \"{id}\" entry_repo must also appear in workstream.repos"
                        ),
                    );
                }
                match w["depends_on"].as_array() {
                    None => push(
                        "workstream_depends_on_invalid",
                        format!("workstream \"{id}\" depends_on must be an array"),
                    ),
                    Some(deps) => {
                        for d in deps {
                            match d.as_str().filter(|d| !d.trim().is_empty()) {
                                None => push(
                                    "workstream_dependency_invalid",
                                    format!(
                                        "workstream \"{id}\" depends_on entries must be non-empty strings"
                                    ),
                                ),
                                Some(d) if !ws.contains_key(d) => push(
                                    "workstream_dependency_unknown",
                                    format!(
                                        "workstream \"{id}\" depends_on undeclared workstream \"{d}\""
                                    ),
                                ),
                                Some(_) => {}
                            }
                        }
                    }
                }
                if !w["completion_barrier"]
                    .as_str()
                    .is_some_and(|b| BARRIER_TYPES.contains(&b))
                {
                    push(
                        "workstream_completion_barrier_invalid",
                        format!(
                            "workstream \"{id}\" completion_barrier must be one of: {}",
                            BARRIER_TYPES.join(", ")
                        ),
                    );
                }
                for (barrier, section, prefix) in [
                    (
                        "interface_alignment",
                        "interface_alignment",
                        "workstream_interface_alignment",
                    ),
                    (
                        "named_decisions",
                        "named_decisions",
                        "workstream_named_decisions",
                    ),
                ] {
                    if w["completion_barrier"] != barrier {
                        continue;
                    }
                    let Some(by_repo) = w[section]["decision_ids_by_repo"].as_object() else {
                        push(
                            &format!("{prefix}_invalid"),
                            format!(
                                "workstream \"{id}\" with completion_barrier \"{barrier}\" must declare {section}.decision_ids_by_repo"
                            ),
                        );
                        continue;
                    };
                    for r in w["repos"]
                        .as_array()
                        .into_iter()
                        .flatten()
                        .filter_map(Json::as_str)
                    {
                        match by_repo
                            .get(r)
                            .and_then(Json::as_array)
                            .filter(|l| !l.is_empty())
                        {
                            None => push(
                                &format!("{prefix}_repo_invalid"),
                                format!(
                                    "workstream \"{id}\" {section}.decision_ids_by_repo[\"{r}\"] must be a non-empty array"
                                ),
                            ),
                            Some(list) => {
                                for d in list {
                                    if !d.as_str().is_some_and(is_decision_id) {
                                        push(
                                            &format!("{prefix}_decision_invalid"),
                                            format!(
                                                "workstream \"{id}\" {section} decision \"{}\" for repo \"{r}\" must match DEC-NNN",
                                                d.as_str().unwrap_or("")
                                            ),
                                        );
                                    }
                                }
                            }
                        }
                    }
                }
            }
            cycles(ws, &mut e);
        }
    }
    let ids = |key: &str| -> Vec<String> {
        obj.get(key)
            .and_then(Json::as_object)
            .filter(|m| !m.is_empty())
            .map(|m| m.keys().cloned().collect())
            .unwrap_or_default()
    };
    let (repo_ids, workstream_ids) = (ids("repos"), ids("workstreams"));
    match obj.get("routing") {
        None => {}
        Some(Json::Object(routing)) => {
            for (phase, route) in routing {
                if !valid_phase(phase) {
                    e.push(format!("routing_phase_invalid: routing phase \"{phase}\" must be lowercase alphanumeric starting with a letter (hyphens and underscores allowed)"));
                }
                let Some(route) = route.as_object() else {
                    e.push(format!(
                        "routing_entry_invalid: routing \"{phase}\" must be an object"
                    ));
                    continue;
                };
                let Some(entry) = route.get("entry_workstream") else {
                    continue;
                };
                match entry.as_str().filter(|w| !w.trim().is_empty()) {
                    None => e.push(format!("routing_entry_workstream_invalid: routing \"{phase}\" entry_workstream must be a non-empty string")),
                    Some(w) if !workstream_ids.iter().any(|x| x == w) => e.push(format!("routing_entry_workstream_unknown: routing \"{phase}\" references undeclared workstream \"{w}\"")),
                    Some(w) => {
                        if let Some(p) = obj["workstreams"][w]["phase"].as_str().filter(|p| !p.is_empty())
                            && p != phase
                        {
                            e.push(format!("routing_phase_mismatch: routing \"{phase}\" entry_workstream \"{w}\" must belong to phase \"{phase}\""));
                        }
                    }
                }
            }
        }
        Some(_) => e.push("routing_invalid: routing must be an object when provided".into()),
    }
    match obj.get("gates") {
        None => {}
        Some(Json::Object(gates)) => {
            for (id, gate) in gates {
                if !valid_id(id) {
                    e.push(format!("gate_id_invalid: gate id \"{id}\" must be lowercase alphanumeric, hyphen, or underscore"));
                }
                let Some(gate) = gate.as_object() else {
                    e.push(format!("gate_invalid: gate \"{id}\" must be an object"));
                    continue;
                };
                if gate
                    .get("requires_human_approval")
                    .is_some_and(|v| !v.is_boolean())
                {
                    e.push(format!("gate_requires_human_approval_invalid: gate \"{id}\" requires_human_approval must be a boolean when provided"));
                }
                match gate.get("requires_repos") {
                    None => {}
                    Some(Json::Array(repos)) => {
                        let mut seen: Vec<&str> = Vec::new();
                        for r in repos {
                            let Some(r) = r.as_str().filter(|r| !r.trim().is_empty()) else {
                                e.push(format!("gate_requires_repo_invalid: gate \"{id}\" requires_repos entries must be non-empty strings"));
                                continue;
                            };
                            if seen.contains(&r) {
                                e.push(format!("gate_requires_repo_duplicate: gate \"{id}\" contains duplicate required repo \"{r}\""));
                                continue;
                            }
                            seen.push(r);
                            if !repo_ids.iter().any(|x| x == r) {
                                e.push(format!("gate_requires_repo_unknown: gate \"{id}\" references undeclared repo \"{r}\""));
                            }
                        }
                    }
                    Some(_) => e.push(format!(
                        "gate_requires_repos_invalid: gate \"{id}\" requires_repos must be an array"
                    )),
                }
            }
        }
        Some(_) => e.push("gates_invalid: gates must be an object when provided".into()),
    }
    e
}

/// `^[a-z][a-z0-9_-]*$`.
fn valid_phase(s: &str) -> bool {
    s.as_bytes().first().is_some_and(u8::is_ascii_lowercase) && valid_id(s)
}

/// `workstream_cycle: circular workstream dependency detected: a -> b -> a`, for each cycle,
/// found depth first in declaration order (an explicit stack: a chain of any length is walked
/// without recursion, each workstream once).
fn cycles(ws: &Map<String, Json>, errors: &mut Vec<String>) {
    use std::collections::HashSet;
    let deps = |id: &str| -> Vec<&str> {
        ws[id]["depends_on"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(Json::as_str)
            .filter(|d| ws.contains_key(*d))
            .collect()
    };
    let mut visited: HashSet<&str> = HashSet::new();
    for start in ws.keys() {
        if visited.contains(start.as_str()) {
            continue;
        }
        let mut stack: Vec<(&str, Vec<&str>, usize)> = vec![(start.as_str(), deps(start), 0)];
        let mut on_path: HashSet<&str> = HashSet::from([start.as_str()]);
        while let Some((node, next, i)) = stack.last_mut() {
            let node = *node;
            if *i < next.len() {
                let d = next[*i];
                *i += 1;
                let d = ws.get_key_value(d).map(|(k, _)| k.as_str()).unwrap_or(d);
                if on_path.contains(d) {
                    let from = stack.iter().position(|(n, _, _)| *n == d).unwrap_or(0);
                    let mut path: Vec<&str> = stack[from..].iter().map(|(n, _, _)| *n).collect();
                    path.push(d);
                    errors.push(format!(
                        "workstream_cycle: circular workstream dependency detected: {}",
                        path.join(" -> ")
                    ));
                } else if !visited.contains(d) {
                    on_path.insert(d);
                    stack.push((d, deps(d), 0));
                }
            } else {
                on_path.remove(node);
                visited.insert(node);
                stack.pop();
            }
        }
    }
}

/// The reference's `resolveRepoPaths` checks of a valid coordinator config at `workspace`:
/// each repository's path is a directory holding a governed `agentxchain.json` whose phases are
/// the coordinator's, in order. `<code>: <message>` each, in the config's repository order.
pub fn repo_errors(config: &Json, workspace: &Path) -> Vec<String> {
    let mut coordinator_phases: Vec<String> = config["routing"]
        .as_object()
        .map(|r| r.keys().cloned().collect())
        .unwrap_or_default();
    if coordinator_phases.is_empty() {
        // The reference orders workstreams by their dependencies first; declaration order is
        // that order whenever each workstream is declared after what it depends on.
        for ws in config["workstreams"]
            .as_object()
            .into_iter()
            .flatten()
            .map(|(_, w)| w)
        {
            if let Some(p) = ws["phase"].as_str().filter(|p| !p.is_empty())
                && !coordinator_phases.iter().any(|x| x == p)
            {
                coordinator_phases.push(p.to_owned());
            }
        }
    }
    let mut errors = Vec::new();
    for (id, repo) in config["repos"].as_object().into_iter().flatten() {
        let path =
            axc_core::util::resolve_path(&workspace.join(repo["path"].as_str().unwrap_or("")));
        let shown = path.display();
        let meta = match std::fs::metadata(&path) {
            Ok(m) => m,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                errors.push(format!(
                    "repo_path_missing: repo \"{id}\" path does not exist: {shown}"
                ));
                continue;
            }
            Err(e) => {
                errors.push(format!(
                    "repo_path_unreadable: repo \"{id}\" path could not be read: {e}"
                ));
                continue;
            }
        };
        if !meta.is_dir() {
            errors.push(format!(
                "repo_path_not_directory: repo \"{id}\" path is not a directory: {shown}"
            ));
            continue;
        }
        if !path.join("agentxchain.json").exists() {
            errors.push(format!(
                "repo_not_governed: repo \"{id}\" does not contain agentxchain.json"
            ));
            continue;
        }
        let repo_config = match axc_core::config::load(&path) {
            Ok(c) if c.mode == axc_core::config::ProtocolMode::Governed => c,
            Ok(_) => {
                errors.push(format!(
                    "repo_not_governed: repo \"{id}\" is not a governed project"
                ));
                continue;
            }
            Err(e) => {
                errors.push(format!(
                    "repo_not_governed: repo \"{id}\" is not a governed project ({e})"
                ));
                continue;
            }
        };
        let phases: Vec<String> = crate::run::config::normalize(repo_config.raw)["routing"]
            .as_object()
            .map(|r| r.keys().cloned().collect())
            .unwrap_or_default();
        if phases != coordinator_phases {
            errors.push(format!(
                "repo_phase_alignment_invalid: repo \"{id}\" routing phases [{}] do not match coordinator phases [{}]",
                phases.join(", "),
                coordinator_phases.join(", ")
            ));
        }
    }
    errors
}

fn multirepo(root: &Path) -> PathBuf {
    root.join(".agentxchain/multirepo")
}

/// The coordinator's history entries.
pub fn history(root: &Path) -> Vec<Json> {
    let bytes = fsread::read_inside(
        root,
        Path::new(".agentxchain/multirepo/history.jsonl"),
        256 << 20,
    )
    .unwrap_or_default();
    String::from_utf8_lossy(&bytes)
        .lines()
        .filter_map(|l| serde_json::from_str(l).ok())
        .collect()
}

fn append(path: &Path, entry: &Json) -> std::io::Result<()> {
    use std::io::Write;
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir)?;
    }
    std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(path)?
        .write_all(format!("{entry}\n").as_bytes())
}

/// `path` with `.` and `..` folded, without touching the disk.
fn lexical(path: &Path) -> PathBuf {
    let mut out = PathBuf::new();
    for c in path.components() {
        match c {
            Component::ParentDir => {
                out.pop();
            }
            Component::CurDir => {}
            other => out.push(other),
        }
    }
    out
}

fn projections<'a>(history: &'a [Json], workstream: &'a str) -> impl Iterator<Item = &'a Json> {
    history
        .iter()
        .filter(move |e| e["type"] == "acceptance_projection" && e["workstream_id"] == workstream)
}

fn accepted_repos(history: &[Json], workstream: &str, required: &[&str]) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for e in projections(history, workstream) {
        if let Some(r) = e["repo_id"].as_str()
            && (required.is_empty() || required.contains(&r))
            && !out.iter().any(|x| x == r)
        {
            out.push(r.to_owned());
        }
    }
    out
}

fn aligned_repos(barrier: &Json, history: &[Json]) -> Vec<String> {
    let required: Vec<&str> = barrier["required_repos"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(Json::as_str)
        .collect();
    let ids = if barrier["required_decision_ids_by_repo"].is_object() {
        &barrier["required_decision_ids_by_repo"]
    } else {
        &barrier["alignment_decision_ids"]
    };
    let workstream = barrier["workstream_id"].as_str().unwrap_or("");
    required
        .iter()
        .filter(|r| {
            let want: Vec<&str> = ids[**r]
                .as_array()
                .into_iter()
                .flatten()
                .filter_map(Json::as_str)
                .collect();
            !want.is_empty()
                && want.iter().all(|d| {
                    projections(history, workstream)
                        .filter(|e| e["repo_id"] == **r)
                        .any(|e| {
                            e["decisions"]
                                .as_array()
                                .into_iter()
                                .flatten()
                                .any(|x| x.as_str().or(x["id"].as_str()) == Some(*d))
                        })
                })
        })
        .map(|r| (*r).to_owned())
        .collect()
}

/// A barrier's status given the coordinator's history.
pub fn barrier_status(barrier: &Json, history: &[Json], config: &Json) -> Json {
    let workstream = barrier["workstream_id"].as_str().unwrap_or("");
    let required: Vec<&str> = barrier["required_repos"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(Json::as_str)
        .collect();
    let tier = |satisfied: bool, partial: bool| {
        json!(if satisfied {
            "satisfied"
        } else if partial {
            "partially_satisfied"
        } else {
            "pending"
        })
    };
    match barrier["type"].as_str().unwrap_or("") {
        "all_repos_accepted" => {
            let accepted = accepted_repos(history, workstream, &required);
            tier(
                !required.is_empty() && accepted.len() == required.len(),
                !accepted.is_empty(),
            )
        }
        "ordered_repo_sequence" => {
            let Some(entry) = config["workstreams"][workstream]["entry_repo"].as_str() else {
                return barrier["status"].clone();
            };
            let upstream = projections(history, workstream).any(|e| e["repo_id"] == entry);
            let downstream = projections(history, workstream).any(|e| e["repo_id"] != entry);
            tier(upstream, downstream)
        }
        "interface_alignment" | "named_decisions" => {
            let aligned = aligned_repos(barrier, history);
            let accepted = accepted_repos(history, workstream, &required);
            tier(
                !required.is_empty() && aligned.len() == required.len(),
                !accepted.is_empty(),
            )
        }
        // A person clears a shared gate; acceptances never do.
        _ => barrier["status"].clone(),
    }
}

/// What projecting an acceptance did.
pub struct Projection {
    pub projection_ref: String,
    /// `{barrier_id, previous_status, new_status}` for each barrier it moved.
    pub barrier_effects: Vec<Json>,
    /// Every barrier after it, by id.
    pub barriers: Map<String, Json>,
}

/// One repository's accepted turn, to project.
pub struct Acceptance<'a> {
    pub repo: &'a str,
    pub workstream: &'a str,
    pub turn: &'a Json,
    /// The id the projection is recorded under, and when.
    pub projection_ref: &'a str,
    pub now: &'a str,
}

/// Records the accepted turn in the coordinator's history and moves its workstream's
/// barriers. A file the turn changed outside its own repository is refused (naming the
/// repository it belongs to when it is another's), before anything is written. `repos` are
/// the coordinator's repositories, by id, as absolute paths.
pub fn project_acceptance(
    root: &Path,
    state: &Json,
    config: &Json,
    repos: &[(String, PathBuf)],
    a: &Acceptance<'_>,
) -> Result<Projection, String> {
    let (repo, workstream, turn, projection_ref, now) =
        (a.repo, a.workstream, a.turn, a.projection_ref, a.now);
    let Some((_, repo_path)) = repos.iter().find(|(id, _)| id == repo) else {
        return Err(format!("Unknown repo \"{repo}\""));
    };
    if config["workstreams"].get(workstream).is_none() {
        return Err(format!("Unknown workstream \"{workstream}\""));
    }
    if turn["turn_id"].as_str().is_none_or(str::is_empty) {
        return Err("acceptedTurn must include turn_id".into());
    }
    for f in turn["files_changed"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(Json::as_str)
    {
        let resolved = lexical(&repo_path.join(f));
        if resolved.starts_with(lexical(repo_path)) {
            continue;
        }
        let other = repos
            .iter()
            .find(|(id, p)| id != repo && resolved.starts_with(lexical(p)));
        return Err(match other {
            Some((id, _)) => format!(
                "Cross-repo write violation: file \"{f}\" belongs to repo \"{id}\", not \"{repo}\""
            ),
            None => {
                format!("Cross-repo write violation: file \"{f}\" resolves outside repo \"{repo}\"")
            }
        });
    }
    let entry = json!({
        "type": "acceptance_projection",
        "timestamp": now,
        "super_run_id": state["super_run_id"],
        "projection_ref": projection_ref,
        "workstream_id": workstream,
        "repo_id": repo,
        "repo_run_id": state["repo_runs"][repo]["run_id"],
        "repo_turn_id": turn["turn_id"],
        "summary": turn["summary"].as_str().unwrap_or(""),
        "files_changed": if turn["files_changed"].is_array() { turn["files_changed"].clone() } else { json!([]) },
        "decisions": if turn["decisions"].is_array() { turn["decisions"].clone() } else { json!([]) },
        "verification": turn["verification"],
    });
    let dir = multirepo(root);
    append(&dir.join("history.jsonl"), &entry).map_err(|e| e.to_string())?;
    let hist = history(root);
    let barriers_path = dir.join("barriers.json");
    let mut barriers: Map<String, Json> = fsread::read_inside(
        root,
        Path::new(".agentxchain/multirepo/barriers.json"),
        16 << 20,
    )
    .ok()
    .and_then(|t| serde_json::from_slice(&t).ok())
    .unwrap_or_default();
    let mut effects = Vec::new();
    let mut changed = false;
    for (id, b) in barriers.iter_mut() {
        if b["status"] == "satisfied" || b["workstream_id"] != workstream {
            continue;
        }
        let status = barrier_status(b, &hist, config);
        let required: Vec<&str> = b["required_repos"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(Json::as_str)
            .collect();
        let satisfied = match b["type"].as_str() {
            Some("all_repos_accepted") => Some(accepted_repos(&hist, workstream, &required)),
            Some("interface_alignment" | "named_decisions") => Some(aligned_repos(b, &hist)),
            _ => None,
        };
        if let Some(s) = satisfied
            && b["satisfied_repos"] != json!(s)
        {
            b["satisfied_repos"] = json!(s);
            changed = true;
        }
        if status != b["status"] {
            let previous = b["status"].clone();
            b["status"] = status.clone();
            changed = true;
            effects
                .push(json!({"barrier_id": id, "previous_status": previous, "new_status": status}));
            append(
                &dir.join("barrier-ledger.jsonl"),
                &json!({"type": "barrier_transition", "timestamp": now, "barrier_id": id, "previous_status": previous, "new_status": status,
                        "causation": {"super_run_id": state["super_run_id"], "workstream_id": workstream, "repo_id": repo, "barrier_type": b["type"]}}),
            )
            .map_err(|e| e.to_string())?;
        }
    }
    if changed {
        let text = serde_json::to_string_pretty(&barriers).map_err(|e| e.to_string())? + "\n";
        let tmp = dir.join(".barriers.json.tmp");
        std::fs::write(&tmp, text).map_err(|e| e.to_string())?;
        std::fs::rename(&tmp, &barriers_path).map_err(|e| e.to_string())?;
    }
    Ok(Projection {
        projection_ref: projection_ref.to_owned(),
        barrier_effects: effects,
        barriers,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn routing_and_gates_are_checked_as_the_reference_checks_them() {
        let cfg = json!({"schema_version": "0.1", "project": {"id": "p", "name": "P"},
            "repos": {"a": {"path": "./a"}},
            "workstreams": {"w": {"phase": "impl", "repos": ["a"], "entry_repo": "a", "depends_on": [], "completion_barrier": "all_repos_accepted"}},
            "routing": {"impl": {"entry_workstream": "w"}, "qa": {"entry_workstream": "w"}, "Bad": {}, "x": 3,
                "y": {"entry_workstream": "nope"}, "z": {"entry_workstream": " "}, "n": {}},
            "gates": {"ok": {"requires_human_approval": true, "requires_repos": ["a"]}, "G!": {},
                "g": {"requires_human_approval": "yes", "requires_repos": ["a", "a", "b", ""]}, "h": {"requires_repos": "a"}, "i": 1}});
        assert_eq!(
            validate_config(&cfg),
            [
                "routing_phase_mismatch: routing \"qa\" entry_workstream \"w\" must belong to phase \"qa\"",
                "routing_phase_invalid: routing phase \"Bad\" must be lowercase alphanumeric starting with a letter (hyphens and underscores allowed)",
                "routing_entry_invalid: routing \"x\" must be an object",
                "routing_entry_workstream_unknown: routing \"y\" references undeclared workstream \"nope\"",
                "routing_entry_workstream_invalid: routing \"z\" entry_workstream must be a non-empty string",
                "gate_id_invalid: gate id \"G!\" must be lowercase alphanumeric, hyphen, or underscore",
                "gate_requires_human_approval_invalid: gate \"g\" requires_human_approval must be a boolean when provided",
                "gate_requires_repo_duplicate: gate \"g\" contains duplicate required repo \"a\"",
                "gate_requires_repo_unknown: gate \"g\" references undeclared repo \"b\"",
                "gate_requires_repo_invalid: gate \"g\" requires_repos entries must be non-empty strings",
                "gate_requires_repos_invalid: gate \"h\" requires_repos must be an array",
                "gate_invalid: gate \"i\" must be an object",
            ]
        );
        assert!(
            valid_phase("a-1_b") && !valid_phase("1a") && !valid_phase("") && !valid_phase("aB")
        );
    }

    #[test]
    fn each_repository_must_be_a_governed_directory_with_the_coordinators_phases() {
        let dir = tempfile::tempdir().unwrap();
        let ws = dir.path();
        std::fs::create_dir_all(ws.join("gov")).unwrap();
        std::fs::create_dir_all(ws.join("bare")).unwrap();
        std::fs::write(ws.join("file"), "").unwrap();
        let governed = |routing: Json| {
            json!({"schema_version": "1.0", "project": {"id": "gov", "name": "g"},
                "roles": {"dev": {"title": "D", "mandate": "m", "write_authority": "authoritative", "runtime": "m"}},
                "runtimes": {"m": {"type": "manual"}}, "routing": routing, "gates": {}})
        };
        std::fs::write(
            ws.join("gov/agentxchain.json"),
            governed(json!({"impl": {"entry_role": "dev"}})).to_string(),
        )
        .unwrap();
        let cfg = json!({"routing": {"impl": {}, "qa": {}},
            "repos": {"gov": {"path": "./gov"}, "gone": {"path": "./gone"}, "file": {"path": "file"}, "bare": {"path": "bare"}}});
        let errors = repo_errors(&cfg, ws);
        let shown = |p: &str| {
            axc_core::util::resolve_path(&ws.join(p))
                .display()
                .to_string()
        };
        assert_eq!(
            errors,
            [
                "repo_phase_alignment_invalid: repo \"gov\" routing phases [impl] do not match coordinator phases [impl, qa]".to_owned(),
                format!("repo_path_missing: repo \"gone\" path does not exist: {}", shown("gone")),
                format!("repo_path_not_directory: repo \"file\" path is not a directory: {}", shown("file")),
                "repo_not_governed: repo \"bare\" does not contain agentxchain.json".to_owned(),
            ]
        );
        // Without routing, the workstreams' phases in order.
        let cfg =
            json!({"workstreams": {"w": {"phase": "impl"}}, "repos": {"gov": {"path": "gov"}}});
        assert!(repo_errors(&cfg, ws).is_empty());
    }

    #[test]
    fn a_cycle_is_named_by_its_path() {
        let cfg = json!({"schema_version": "0.1", "project": {"id": "p", "name": "P"}, "repos": {"a": {"path": "./a"}},
        "workstreams": {
            "x": {"phase": "planning", "repos": ["a"], "entry_repo": "a", "depends_on": ["y"], "completion_barrier": "all_repos_accepted"},
            "y": {"phase": "planning", "repos": ["a"], "entry_repo": "a", "depends_on": ["x"], "completion_barrier": "all_repos_accepted"}
        }});
        assert_eq!(
            validate_config(&cfg),
            ["workstream_cycle: circular workstream dependency detected: x -> y -> x"]
        );
    }

    #[test]
    fn files_outside_the_repository_are_refused_before_anything_is_written() {
        let dir = tempfile::tempdir().unwrap();
        let repos = vec![
            ("api".to_owned(), dir.path().join("repos/api")),
            ("web".to_owned(), dir.path().join("repos/web")),
        ];
        let cfg = json!({"workstreams": {"core": {}}});
        for (file, says) in [
            ("../web/x.ts", "belongs to repo \"web\""),
            ("/etc/passwd", "resolves outside repo \"api\""),
            ("a/../../../x", "resolves outside"),
        ] {
            let turn = json!({"turn_id": "t", "files_changed": [file]});
            let a = Acceptance {
                repo: "api",
                workstream: "core",
                turn: &turn,
                projection_ref: "proj_x",
                now: "now",
            };
            let e = project_acceptance(dir.path(), &json!({}), &cfg, &repos, &a)
                .err()
                .unwrap();
            assert!(e.contains(says), "{file}: {e}");
        }
        assert!(history(dir.path()).is_empty());
    }
}
