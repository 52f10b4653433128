//! `init --governed`: the scaffold of a governed template, as the reference writes it —
//! `agentxchain.json`, the role prompts, the planning artifacts, `TALK.md`, the governed
//! `.gitignore` entries, an idle `state.json` and empty history and ledger.
//!
//! A template is data (`templates/governed/<id>.json`, the reference's manifests): an optional
//! blueprint (roles, runtimes, routing, gates, approval policy, policies, workflow kit) over the
//! defaults (`templates/governed/defaults.json`), planning artifacts of its own, guidance
//! appended to role prompts, acceptance hints and a system-spec overlay. The texts the
//! templates fill are in `templates/generic/`.
//!
//! Unlike the reference, files a person already has (planning artifacts, prompts, `TALK.md`)
//! are kept, not overwritten; `agentxchain.json` is replaced only when `overwrite` says so.

use std::path::Path;

use serde::Deserialize;
use serde_json::{Map, Value as Json, json};

use super::Refusal;
use super::store::{HISTORY, LEDGER, STATE, Store, TALK};

const DEFAULTS: &str = include_str!("../../templates/governed/defaults.json");
const TALK_TEMPLATE: &str = include_str!("../../templates/generic/TALK.md");
const GITIGNORE: &str = include_str!("../../templates/generic/gitignore");
const IDLE_EXPANSION: &str = include_str!("../../templates/generic/prompts/pm-idle-expansion.md");
const PM_PROMPT: &str = include_str!("../../templates/generic/prompts/pm.md");
const DEV_PROMPT: &str = include_str!("../../templates/generic/prompts/dev.md");
const QA_PROMPT: &str = include_str!("../../templates/generic/prompts/qa.md");
const DIRECTOR_PROMPT: &str = include_str!("../../templates/generic/prompts/eng_director.md");
const PLANNING: [(&str, &str); 7] = [
    (
        "PM_SIGNOFF.md",
        include_str!("../../templates/generic/planning/PM_SIGNOFF.md"),
    ),
    (
        "ROADMAP.md",
        include_str!("../../templates/generic/planning/ROADMAP.md"),
    ),
    (
        "SYSTEM_SPEC.md",
        include_str!("../../templates/generic/planning/SYSTEM_SPEC.md"),
    ),
    (
        "IMPLEMENTATION_NOTES.md",
        include_str!("../../templates/generic/planning/IMPLEMENTATION_NOTES.md"),
    ),
    (
        "acceptance-matrix.md",
        include_str!("../../templates/generic/planning/acceptance-matrix.md"),
    ),
    (
        "ship-verdict.md",
        include_str!("../../templates/generic/planning/ship-verdict.md"),
    ),
    (
        "RELEASE_NOTES.md",
        include_str!("../../templates/generic/planning/RELEASE_NOTES.md"),
    ),
];

/// The templates this build scaffolds, with the one-line summary `init` lists.
pub const TEMPLATES: [(&str, &str, &str); 7] = [
    (
        "generic",
        "Default governed scaffold",
        include_str!("../../templates/governed/generic.json"),
    ),
    (
        "api-service",
        "Governed scaffold for a backend service",
        include_str!("../../templates/governed/api-service.json"),
    ),
    (
        "cli-tool",
        "Governed scaffold for a CLI tool",
        include_str!("../../templates/governed/cli-tool.json"),
    ),
    (
        "library",
        "Governed scaffold for a reusable package",
        include_str!("../../templates/governed/library.json"),
    ),
    (
        "web-app",
        "Governed scaffold for a web application",
        include_str!("../../templates/governed/web-app.json"),
    ),
    (
        "full-local-cli",
        "Human-gated automation pattern with all roles on local_cli",
        include_str!("../../templates/governed/full-local-cli.json"),
    ),
    (
        "enterprise-app",
        "Governed scaffold for multi-role enterprise delivery",
        include_str!("../../templates/governed/enterprise-app.json"),
    ),
];

/// The prompt transports a `local_cli` runtime may use.
pub const PROMPT_TRANSPORTS: [&str; 3] = ["argv", "stdin", "dispatch_bundle_only"];

/// A governed template's manifest.
#[derive(Clone, Debug, Default, Deserialize)]
pub struct Template {
    pub id: String,
    #[serde(default)]
    pub planning_artifacts: Vec<PlanningArtifact>,
    #[serde(default)]
    pub prompt_overrides: Map<String, Json>,
    #[serde(default)]
    pub acceptance_hints: Vec<String>,
    #[serde(default)]
    pub system_spec_overlay: Map<String, Json>,
    #[serde(default)]
    pub scaffold_blueprint: Option<Map<String, Json>>,
}

/// A planning file a template adds.
#[derive(Clone, Debug, Deserialize)]
pub struct PlanningArtifact {
    pub filename: String,
    pub content_template: String,
}

/// The template `id`, when this build has it.
pub fn template(id: &str) -> Option<Template> {
    TEMPLATES
        .iter()
        .find(|(t, _, _)| *t == id)
        .map(|(_, _, text)| serde_json::from_str(text).expect("a template manifest is JSON"))
}

impl Template {
    /// Whether the template defines its own phases.
    pub fn defines_routing(&self) -> bool {
        self.scaffold_blueprint
            .as_ref()
            .and_then(|b| b.get("routing"))
            .and_then(Json::as_object)
            .is_some_and(|r| !r.is_empty())
    }
}

/// `--dev-command` and `--dev-prompt-transport`: the local dev runtime a scaffold gets.
#[derive(Clone, Debug, Default)]
pub struct DevRuntime {
    pub command: Vec<String>,
    pub prompt_transport: Option<String>,
}

impl DevRuntime {
    fn explicit(&self) -> bool {
        !self.command.is_empty()
            || self
                .prompt_transport
                .as_deref()
                .is_some_and(|t| !t.trim().is_empty())
    }

    /// The runtime, or the reference's refusal of the combination.
    pub fn resolve(&self) -> Result<Json, Refusal> {
        let transport = self
            .prompt_transport
            .as_deref()
            .map(str::trim)
            .filter(|t| !t.is_empty());
        if let Some(t) = transport
            && !PROMPT_TRANSPORTS.contains(&t)
        {
            return Err(Refusal::new(format!(
                "Unknown --dev-prompt-transport \"{t}\". Valid values: {}",
                PROMPT_TRANSPORTS.join(", ")
            )));
        }
        let mut command: Vec<String> = Vec::new();
        if let Some((head, rest)) = self.command.split_first() {
            command.extend(head.split_whitespace().map(str::to_owned));
            command.extend(
                rest.iter()
                    .map(|p| p.trim().to_owned())
                    .filter(|p| !p.is_empty()),
            );
        }
        let defaults: Json = serde_json::from_str(DEFAULTS).expect("the defaults are JSON");
        let mut runtime = defaults["local_dev_runtime"].clone();
        if command.is_empty() {
            if transport == Some("argv") {
                return Err(Refusal::new(
                    "Default local dev command does not include {prompt}. Use --dev-command ... {prompt} for argv mode.",
                ));
            }
            if let Some(t) = transport {
                runtime["prompt_transport"] = json!(t);
            }
            return Ok(runtime);
        }
        let placeholder = command.iter().any(|p| p.contains("{prompt}"));
        match transport {
            None if !placeholder => {
                return Err(Refusal::new(
                    "Custom --dev-command must either include {prompt} or set --dev-prompt-transport explicitly.",
                ));
            }
            Some("argv") if !placeholder => {
                return Err(Refusal::new(
                    "--dev-prompt-transport argv requires {prompt} in --dev-command.",
                ));
            }
            Some(t) if t != "argv" && placeholder => {
                return Err(Refusal::new(format!(
                    "--dev-prompt-transport {t} must not be combined with {{prompt}} in --dev-command."
                )));
            }
            _ => {}
        }
        Ok(json!({
            "type": "local_cli",
            "command": command,
            "cwd": ".",
            "prompt_transport": transport.unwrap_or("argv"),
        }))
    }
}

/// Fills every `{{key}}` of `text` in one pass (a value is never read for placeholders).
fn fill(text: &str, vars: &[(&str, &str)]) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    'scan: while let Some(at) = rest.find("{{") {
        out.push_str(&rest[..at]);
        let tail = &rest[at..];
        for (k, v) in vars {
            if let Some(after) = tail
                .strip_prefix("{{")
                .and_then(|t| t.strip_prefix(k))
                .and_then(|t| t.strip_prefix("}}"))
            {
                out.push_str(v);
                rest = after;
                continue 'scan;
            }
        }
        out.push_str("{{");
        rest = &tail[2..];
    }
    out.push_str(rest);
    out
}

/// The reference's project id of a name: lowercase, runs of other characters as `-`.
pub fn slugify(name: &str) -> String {
    let mut out = String::new();
    for c in name.to_lowercase().chars() {
        if c.is_ascii_lowercase() || c.is_ascii_digit() {
            out.push(c);
        } else if !out.ends_with('-') {
            out.push('-');
        }
    }
    out.trim_matches('-').to_owned()
}

/// What was scaffolded.
#[derive(Clone, Debug)]
pub struct Scaffold {
    pub project_name: String,
    pub project_id: String,
    pub roles: Vec<String>,
    pub phases: Vec<String>,
    pub config: Json,
}

fn is_default_local_cli(runtime: &Json, default: &Json) -> bool {
    runtime["type"] == "local_cli"
        && runtime["cwd"] == default["cwd"]
        && runtime["prompt_transport"] == default["prompt_transport"]
        && runtime["command"] == default["command"]
}

/// The config `template` scaffolds for `name` (and `goal`), with the dev runtime `dev` asks for.
pub fn config(
    template: &Template,
    name: &str,
    goal: Option<&str>,
    dev: &DevRuntime,
) -> Result<Json, Refusal> {
    let defaults: Json = serde_json::from_str(DEFAULTS).expect("the defaults are JSON");
    let local_dev = dev.resolve()?;
    let blueprint = template.scaffold_blueprint.clone();
    let part = |key: &str| {
        blueprint
            .as_ref()
            .and_then(|b| b.get(key))
            .filter(|v| !v.is_null())
            .cloned()
            .unwrap_or_else(|| defaults[key].clone())
    };
    let mut roles = part("roles");
    let mut runtimes = part("runtimes");
    let explicit = dev.explicit();
    let default_ids: Vec<String> = runtimes
        .as_object()
        .into_iter()
        .flatten()
        .filter(|(_, r)| is_default_local_cli(r, &defaults["local_dev_runtime"]))
        .map(|(id, _)| id.clone())
        .collect();
    if blueprint.is_none() || !default_ids.is_empty() || explicit {
        let ids = if default_ids.is_empty() {
            vec!["local-dev".to_owned()]
        } else {
            default_ids
        };
        if let Some(map) = runtimes.as_object_mut() {
            for id in ids {
                map.insert(id, local_dev.clone());
            }
        }
    }
    if explicit && roles["dev"]["runtime"] == "manual-dev" {
        roles["dev"]["runtime"] = json!("local-dev");
    }
    let routing = part("routing");
    let prompts: Map<String, Json> = roles
        .as_object()
        .into_iter()
        .flatten()
        .map(|(id, _)| (id.clone(), json!(format!(".agentxchain/prompts/{id}.md"))))
        .collect();
    let mut project = Map::new();
    project.insert("id".into(), json!(slugify(name)));
    project.insert("name".into(), json!(name));
    if let Some(g) = goal.map(str::trim).filter(|g| !g.is_empty()) {
        project.insert("goal".into(), json!(g));
    }
    project.insert("default_branch".into(), json!("main"));
    let mut config = json!({
        "schema_version": "1.0",
        "template": template.id,
        "project": project,
        "roles": roles,
        "runtimes": runtimes,
        "routing": routing,
        "gates": part("gates"),
        "approval_policy": part("approval_policy"),
        "budget": {"per_turn_max_usd": 2, "per_run_max_usd": 50, "on_exceed": "pause_and_escalate"},
        "retention": {"talk_strategy": "append_only", "history_strategy": "jsonl_append_only"},
        "prompts": prompts,
        "rules": {"challenge_required": true, "max_turn_retries": 2, "max_deadlock_cycles": 2},
    });
    let policies = blueprint.as_ref().and_then(|b| b.get("policies"));
    if let Some(p) = policies.filter(|p| p.as_array().is_some_and(|a| !a.is_empty())) {
        config["policies"] = p.clone();
    }
    if let Some(kit) = blueprint
        .as_ref()
        .and_then(|b| b.get("workflow_kit"))
        .filter(|k| !k.is_null())
    {
        config["workflow_kit"] = kit.clone();
    }
    Ok(config)
}

/// The workflow kit the prompts and placeholders are drawn from: the normalized kit when the
/// config declares one, none otherwise.
fn scaffold_kit(config: &Json) -> Json {
    if config["workflow_kit"].is_null() {
        return Json::Null;
    }
    let phases: Vec<String> = config["routing"]
        .as_object()
        .map(|r| r.keys().cloned().collect())
        .unwrap_or_default();
    crate::views::status::workflow_kit(&config["workflow_kit"], &phases)
}

fn kit_artifacts<'a>(kit: &'a Json, phase: &str) -> impl Iterator<Item = &'a Json> {
    kit["phases"][phase]["artifacts"]
        .as_array()
        .into_iter()
        .flatten()
        .filter(|a| a["path"].as_str().is_some_and(|p| !p.is_empty()))
}

/// A role's prompt: the four built-in roles' texts, or the generic one naming a custom role's
/// phases, gates and artifacts; then the template's guidance for the role.
fn prompt(id: &str, role: &Json, config: &Json, kit: &Json, template: &Template) -> String {
    let text = |v: &Json| v.as_str().unwrap_or("").to_owned();
    let mandate = text(&role["mandate"]);
    let review_only = role["write_authority"] == "review_only";
    let base = match id {
        "pm" => fill(PM_PROMPT, &[("mandate", &mandate)]),
        "dev" => fill(DEV_PROMPT, &[("mandate", &mandate)]),
        "qa" => fill(
            QA_PROMPT,
            &[
                ("mandate", &mandate),
                (
                    "file_access",
                    if review_only {
                        "You have `review_only` write authority. You may NOT modify product files. You may only create/modify files under `.planning/` and `.agentxchain/reviews/`. Your artifact type must be `review`."
                    } else {
                        "You have direct write access for this role. Use it to create or update QA-owned evidence and verification artifacts directly in the repo. Do not make unrelated product changes. Your artifact type should normally be `workspace` when you modify repo files directly."
                    },
                ),
            ],
        ),
        "eng_director" => fill(
            DIRECTOR_PROMPT,
            &[
                ("mandate", &mandate),
                (
                    "file_access",
                    if review_only {
                        "You have `review_only` write authority. Like QA, you must raise at least one objection (protocol requirement). Your artifact type is `review`."
                    } else {
                        "You have direct write access for this role. Use it sparingly to resolve tactical deadlocks or correct governance artifacts when necessary. Do not use Director authority as a shortcut around the normal PM -> Dev -> QA loop."
                    },
                ),
            ],
        ),
        _ => custom_prompt(id, role, config, kit),
    };
    match template.prompt_overrides.get(id).and_then(Json::as_str) {
        Some(o) if !o.trim().is_empty() => format!(
            "{base}\n\n---\n\n## Project-Type-Specific Guidance\n\n{}\n",
            o.trim()
        ),
        _ => base,
    }
}

fn custom_prompt(id: &str, role: &Json, config: &Json, kit: &Json) -> String {
    let text = |v: &Json| match v {
        Json::String(s) => s.clone(),
        Json::Null => "undefined".to_owned(),
        other => other.to_string(),
    };
    let (mut owned, mut gates, mut artifacts, mut ownership) =
        (Vec::new(), Vec::new(), Vec::new(), Vec::new());
    for (phase, route) in config["routing"].as_object().into_iter().flatten() {
        if route["entry_role"] != id {
            continue;
        }
        owned.push(phase.clone());
        let exit = route["exit_gate"].as_str().filter(|g| !g.is_empty());
        if let Some(g) = exit {
            gates.push(format!("- {phase}: {g}"));
        }
        let mut files: Vec<String> = Vec::new();
        let phase_artifacts: Vec<&Json> = kit_artifacts(kit, phase).collect();
        let gate_files = exit
            .and_then(|g| config["gates"][g]["requires_files"].as_array())
            .into_iter()
            .flatten()
            .filter_map(Json::as_str)
            .filter(|f| !f.is_empty());
        for f in phase_artifacts
            .iter()
            .filter_map(|a| a["path"].as_str())
            .chain(gate_files)
        {
            if !files.iter().any(|x| x == f) {
                files.push(f.to_owned());
            }
        }
        if !files.is_empty() {
            artifacts.push(format!("- {phase}: {}", files.join(", ")));
        }
        let enforced: Vec<&str> = phase_artifacts
            .iter()
            .filter(|a| a["owned_by"] == id)
            .filter_map(|a| a["path"].as_str())
            .collect();
        if !enforced.is_empty() {
            let verb = if enforced.len() == 1 {
                "requires"
            } else {
                "require"
            };
            ownership.push(format!(
                "- {phase}: {} {verb} an accepted turn from you before the gate can pass",
                enforced.join(", ")
            ));
        }
    }
    let section = |title: &str, lines: &[String]| {
        if lines.is_empty() {
            String::new()
        } else {
            format!("\n## {title}\n\n{}\n", lines.join("\n"))
        }
    };
    let primary = if owned.is_empty() {
        String::new()
    } else {
        format!("\n## Primary Phases\n\n- {}\n", owned.join(", "))
    };
    let access = match role["write_authority"].as_str() {
        Some("authoritative") => "You may modify product files directly.",
        Some("proposed") => "You may propose changes via patches.",
        _ => {
            "You may NOT modify product files. Only create review artifacts under `.planning/` and `.agentxchain/reviews/`."
        }
    };
    let title = text(&role["title"]);
    format!(
        "# {title} — Role Prompt\n\nYou are the **{title}** on this project.\n\n**Mandate:** {}\n**Write authority:** {}\n\n## What You Do Each Turn\n\n1. Read the previous turn and challenge it explicitly.\n2. Do your work according to your mandate.\n3. Write your structured turn result to the turn-scoped staging path printed by the orchestrator (`.agentxchain/staging/<turn_id>/turn-result.json`).\n4. If you make zero repo file edits, set `artifact.type: \"review\"` and `files_changed: []`.\n5. Only set `artifact.type: \"workspace\"` when you actually modified repo files and listed every changed path in `files_changed`.\n6. Every objection must include a non-empty `statement`; do not use `summary` or `detail` as a substitute.\n\n## File Access\n\n{access}{primary}{}{}{}\n",
        text(&role["mandate"]),
        text(&role["write_authority"]),
        section("Phase Gates", &gates),
        section("Workflow Artifacts You Own", &artifacts),
        section("Ownership Enforcement", &ownership),
    )
}

/// A phase's name in the roadmap: `qa` as `QA`, others with `_` as spaces and words capitalized.
fn phase_title(phase: &str) -> String {
    if phase == "qa" {
        return "QA".into();
    }
    let spaced = phase.replace('_', " ");
    let mut out = String::with_capacity(spaced.len());
    let mut prev_word = false;
    for c in spaced.chars() {
        let word = c.is_ascii_alphanumeric();
        if word && !prev_word {
            out.push(c.to_ascii_uppercase());
        } else {
            out.push(c);
        }
        prev_word = word;
    }
    out
}

fn phase_table(config: &Json) -> String {
    let routing = config["routing"].as_object();
    let first = routing.and_then(|r| r.keys().next()).cloned();
    let rows: Vec<String> = routing
        .into_iter()
        .flatten()
        .map(|(phase, route)| {
            let name = phase_title(phase);
            let goal = route["entry_role"]
                .as_str()
                .and_then(|r| config["roles"][r]["mandate"].as_str())
                .filter(|m| !m.is_empty())
                .map(str::to_owned)
                .unwrap_or_else(|| name.clone());
            let status = if Some(phase) == first.as_ref() {
                "In progress"
            } else {
                "Pending"
            };
            format!("| {name} | {goal} | {status} |")
        })
        .collect();
    format!(
        "| Phase | Goal | Status |\n|-------|------|--------|\n{}\n",
        rows.join("\n")
    )
}

/// Every planning file of the scaffold: the seven core ones, the template's, and a placeholder
/// for each workflow-kit artifact beyond them. `(path, content, from the workflow kit)`.
fn planning(
    config: &Json,
    kit: &Json,
    template: &Template,
    name: &str,
) -> Vec<(String, String, bool)> {
    let o = &template.system_spec_overlay;
    let overlay = |k: &str, default: &str| {
        o.get(k)
            .and_then(Json::as_str)
            .filter(|v| !v.is_empty())
            .unwrap_or(default)
            .to_owned()
    };
    let extra = o
        .get("extra_sections")
        .and_then(Json::as_str)
        .filter(|v| !v.is_empty())
        .map(|v| format!("\n{v}\n"))
        .unwrap_or_default();
    let table = phase_table(config);
    let mut out = Vec::new();
    for (file, text) in PLANNING {
        let mut content = fill(
            text,
            &[
                ("project_name", name),
                ("phase_table", &table),
                (
                    "purpose",
                    &overlay(
                        "purpose_guidance",
                        "(Describe the problem this slice solves and why it exists.)",
                    ),
                ),
                (
                    "interface",
                    &overlay(
                        "interface_guidance",
                        "(List the user-facing commands, files, APIs, or contracts this slice changes.)",
                    ),
                ),
                (
                    "behavior",
                    &overlay(
                        "behavior_guidance",
                        "(Describe the expected behavior, including important edge cases.)",
                    ),
                ),
                (
                    "error_cases",
                    &overlay(
                        "error_cases_guidance",
                        "(List the failure modes and how the system should respond.)",
                    ),
                ),
                (
                    "acceptance_tests",
                    &overlay(
                        "acceptance_tests_guidance",
                        "- [ ] Name the executable checks that prove this slice works.",
                    ),
                ),
                ("extra_sections", &extra),
            ],
        );
        if file == "acceptance-matrix.md" && !template.acceptance_hints.is_empty() {
            let hints: Vec<String> = template
                .acceptance_hints
                .iter()
                .map(|h| format!("- [ ] {h}"))
                .collect();
            content = format!("{content}\n\n## Template Guidance\n{}\n", hints.join("\n"));
        }
        out.push((format!(".planning/{file}"), content, false));
    }
    for a in &template.planning_artifacts {
        out.push((
            format!(".planning/{}", a.filename),
            a.content_template.replace("{{project_name}}", name),
            false,
        ));
    }
    let mut seen: Vec<String> = out
        .iter()
        .take(PLANNING.len())
        .map(|(p, _, _)| p.clone())
        .collect();
    for phase in kit["phases"]
        .as_object()
        .into_iter()
        .flatten()
        .map(|(p, _)| p)
    {
        for a in kit_artifacts(kit, phase) {
            let path = a["path"].as_str().unwrap_or_default().to_owned();
            if seen.contains(&path) {
                continue;
            }
            seen.push(path.clone());
            out.push((path.clone(), placeholder(a, &path, name), true));
        }
    }
    out
}

fn placeholder(artifact: &Json, path: &str, name: &str) -> String {
    let file = path.rsplit('/').next().unwrap_or(path);
    let stem = match file.rfind('.') {
        Some(i) if i + 1 < file.len() => &file[..i],
        _ => file,
    };
    let title = stem.replace(['-', '_'], " ");
    let sections: Vec<&str> = artifact["semantics_config"]["required_sections"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(Json::as_str)
        .collect();
    if artifact["semantics"] == "section_check" && !sections.is_empty() {
        let body: Vec<String> = sections
            .iter()
            .map(|s| format!("{s}\n\n(Content here.)\n"))
            .collect();
        return format!("# {title} — {name}\n\n{}", body.join("\n"));
    }
    format!("# {title} — {name}\n\n(Operator fills this in.)\n")
}

/// The `.planning/` lines `init` prints: the core files, then the template's, then the
/// workflow kit's beyond the core.
pub fn planning_summary(template: &Template, config: &Json) -> Vec<String> {
    let mut lines = vec![
        "PM_SIGNOFF.md / ROADMAP.md / SYSTEM_SPEC.md".to_owned(),
        "acceptance-matrix.md / ship-verdict.md".to_owned(),
        "RELEASE_NOTES.md".to_owned(),
    ];
    if !template.planning_artifacts.is_empty() {
        let files: Vec<&str> = template
            .planning_artifacts
            .iter()
            .map(|a| a.filename.as_str())
            .filter(|f| !f.is_empty())
            .collect();
        lines.push(format!("template: {}", files.join(" / ")));
    }
    let kit = scaffold_kit(config);
    let core: Vec<String> = PLANNING
        .iter()
        .map(|(f, _)| format!(".planning/{f}"))
        .collect();
    let mut custom: Vec<String> = Vec::new();
    for phase in kit["phases"]
        .as_object()
        .into_iter()
        .flatten()
        .map(|(p, _)| p)
    {
        for a in kit_artifacts(&kit, phase) {
            let path = a["path"].as_str().unwrap_or_default();
            if core.iter().any(|c| c == path) {
                continue;
            }
            let file = path.rsplit('/').next().unwrap_or(path).to_owned();
            if !custom.contains(&file) {
                custom.push(file);
            }
        }
    }
    if !custom.is_empty() {
        lines.push(format!("workflow: {}", custom.join(" / ")));
    }
    lines
}

fn write_new(store: &Store, rel: &str, text: &str) -> Result<(), Refusal> {
    if store.path(rel)?.symlink_metadata().is_ok() {
        return Ok(());
    }
    store.write_text(rel, text)
}

/// Adds the governed entries to `.gitignore` (the whole file when there is none).
fn ensure_gitignore(store: &Store) -> Result<(), Refusal> {
    let rel = ".gitignore";
    let Some(existing) = store.read_text(rel, 16 << 20)? else {
        return store.write_text(rel, GITIGNORE);
    };
    let have: std::collections::HashSet<&str> =
        existing.lines().map(|l| l.trim_end_matches('\r')).collect();
    let missing: Vec<&str> = GITIGNORE
        .lines()
        .filter(|l| !l.is_empty() && !l.starts_with('#') && !have.contains(l))
        .collect();
    if missing.is_empty() {
        return Ok(());
    }
    let prefix = if existing.is_empty() || existing.ends_with('\n') {
        ""
    } else {
        "\n"
    };
    store.write_text(rel, &format!("{existing}{prefix}{}\n", missing.join("\n")))
}

/// Scaffolds a governed project in `dir` (created when missing).
pub fn governed(
    dir: &Path,
    template: &Template,
    name: &str,
    goal: Option<&str>,
    dev: &DevRuntime,
    overwrite: bool,
) -> Result<Scaffold, Refusal> {
    let config = config(template, name, goal, dev)?;
    std::fs::create_dir_all(dir)?;
    let store = Store::new(dir);
    if store.path(super::store::CONFIG)?.exists() && !overwrite {
        return Err(Refusal::new(
            "agentxchain.json already exists here; pass -y to replace it.",
        ));
    }
    for sub in [
        ".agentxchain/staging",
        ".agentxchain/prompts",
        ".agentxchain/reviews",
        ".agentxchain/dispatch",
        ".planning",
    ] {
        std::fs::create_dir_all(store.path(sub)?)?;
    }
    store.write_json(super::store::CONFIG, &config)?;
    let state = json!({
        "schema_version": "1.1",
        "run_id": null,
        "project_id": config["project"]["id"],
        "status": "idle",
        "phase": config["routing"].as_object().and_then(|r| r.keys().next()).cloned().unwrap_or_else(|| "planning".into()),
        "accepted_integration_ref": null,
        "active_turns": {},
        "turn_sequence": 0,
        "last_completed_turn_id": null,
        "blocked_on": null,
        "blocked_reason": null,
        "escalation": null,
        "queued_phase_transition": null,
        "queued_run_completion": null,
        "last_gate_failure": null,
        "phase_gate_status": super::config::initial_gate_status(&config),
        "budget_reservations": {},
        "budget_status": {"spent_usd": 0, "remaining_usd": config["budget"]["per_run_max_usd"]},
    });
    store.write_json(STATE, &state)?;
    for rel in [HISTORY, LEDGER] {
        write_new(&store, rel, "")?;
    }
    let kit = scaffold_kit(&config);
    for (id, role) in config["roles"].as_object().into_iter().flatten() {
        write_new(
            &store,
            &format!(".agentxchain/prompts/{id}.md"),
            &prompt(id, role, &config, &kit, template),
        )?;
    }
    write_new(
        &store,
        ".agentxchain/prompts/pm-idle-expansion.md",
        IDLE_EXPANSION,
    )?;
    for (rel, text, _) in planning(&config, &kit, template, name) {
        if let Some(parent) = Path::new(&rel).parent() {
            std::fs::create_dir_all(store.path(&parent.to_string_lossy())?)?;
        }
        write_new(&store, &rel, &text)?;
    }
    write_new(
        &store,
        TALK,
        &TALK_TEMPLATE.replace("{{project_name}}", name),
    )?;
    ensure_gitignore(&store)?;
    let normalized = super::config::normalize(config.clone());
    Ok(Scaffold {
        project_name: name.to_owned(),
        project_id: slugify(name),
        roles: normalized["roles"]
            .as_object()
            .map(|m| m.keys().cloned().collect())
            .unwrap_or_default(),
        phases: super::config::phases(&normalized)
            .iter()
            .map(|s| s.to_string())
            .collect(),
        config,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn placeholders_fill_in_one_pass_and_phase_titles_are_the_references() {
        assert_eq!(
            fill("{{a}}-{{b}}-{{c}}-{{", &[("a", "{{b}}"), ("b", "x")]),
            "{{b}}-x-{{c}}-{{"
        );
        assert_eq!(phase_title("qa"), "QA");
        assert_eq!(phase_title("security_review"), "Security Review");
        assert_eq!(phase_title("x-ray 2nd"), "X-Ray 2nd");
        assert_eq!(
            placeholder(&json!({}), ".planning/risk_register.v2.md", "p"),
            "# risk register.v2 — p\n\n(Operator fills this in.)\n"
        );
        assert_eq!(
            placeholder(&json!({}), "x/.env", "p"),
            "#  — p\n\n(Operator fills this in.)\n"
        );
        assert_eq!(
            placeholder(&json!({}), "x/file.", "p"),
            "# file. — p\n\n(Operator fills this in.)\n"
        );
    }

    #[test]
    fn every_template_manifest_reads() {
        for (id, _, _) in TEMPLATES {
            assert_eq!(template(id).unwrap().id, id);
        }
        assert!(template("nope").is_none());
    }

    #[test]
    fn slugs_are_the_references() {
        assert_eq!(slugify("My AgentXchain Project"), "my-agentxchain-project");
        assert_eq!(slugify("--Démo__x--"), "d-mo-x");
        assert_eq!(slugify("demo"), "demo");
    }

    #[test]
    fn a_name_is_written_as_json_and_a_goal_sits_before_the_branch() {
        let c = config(
            &template("generic").unwrap(),
            "a \"quoted\" name",
            Some(" ship it "),
            &DevRuntime::default(),
        )
        .unwrap();
        assert_eq!(c["project"]["name"], "a \"quoted\" name");
        assert_eq!(c["project"]["id"], "a-quoted-name");
        let keys: Vec<&String> = c["project"].as_object().unwrap().keys().collect();
        assert_eq!(keys, ["id", "name", "goal", "default_branch"]);
    }
}
