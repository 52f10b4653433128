//! `init --governed`: the generic template's scaffold, as the reference writes it —
//! `agentxchain.json`, the role prompts, the planning artifacts, `TALK.md`, the governed
//! `.gitignore` entries, an idle `state.json` and empty history and ledger.
//!
//! Unlike the reference, files a person already has (planning artifacts, prompts, `TALK.md`)
//! are kept, not overwritten; `agentxchain.json` is replaced only when `overwrite` says so.

use std::path::Path;

use serde_json::{Value as Json, json};

use super::Refusal;
use super::store::{HISTORY, LEDGER, STATE, Store, TALK};

const CONFIG_TEMPLATE: &str = include_str!("../../templates/generic/agentxchain.json");
const TALK_TEMPLATE: &str = include_str!("../../templates/generic/TALK.md");
const GITIGNORE: &str = include_str!("../../templates/generic/gitignore");
const PROMPTS: [(&str, &str); 5] = [
    ("pm", include_str!("../../templates/generic/prompts/pm.md")),
    (
        "dev",
        include_str!("../../templates/generic/prompts/dev.md"),
    ),
    ("qa", include_str!("../../templates/generic/prompts/qa.md")),
    (
        "eng_director",
        include_str!("../../templates/generic/prompts/eng_director.md"),
    ),
    (
        "pm-idle-expansion",
        include_str!("../../templates/generic/prompts/pm-idle-expansion.md"),
    ),
];
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

/// The templates this build scaffolds.
pub const TEMPLATES: [&str; 1] = ["generic"];

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

/// The generic template's config for `name` (and `goal`).
pub fn config(name: &str, goal: Option<&str>) -> Json {
    let q = |s: &str| serde_json::to_string(s).unwrap_or_default();
    let text = CONFIG_TEMPLATE
        .replace("{{project_id_json}}", &q(&slugify(name)))
        .replace("{{project_name_json}}", &q(name));
    let mut config: Json = serde_json::from_str(&text).expect("the template is JSON");
    if let Some(g) = goal.map(str::trim).filter(|g| !g.is_empty())
        && let Some(project) = config["project"].as_object_mut()
    {
        let branch = project.remove("default_branch");
        project.insert("goal".into(), json!(g));
        if let Some(b) = branch {
            project.insert("default_branch".into(), b);
        }
    }
    config
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
    name: &str,
    goal: Option<&str>,
    overwrite: bool,
) -> Result<Scaffold, Refusal> {
    std::fs::create_dir_all(dir)?;
    let store = Store::new(dir);
    let config = config(name, goal);
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
        "phase": "planning",
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
    for (role, text) in PROMPTS {
        write_new(&store, &format!(".agentxchain/prompts/{role}.md"), text)?;
    }
    for (file, text) in PLANNING {
        write_new(
            &store,
            &format!(".planning/{file}"),
            &text.replace("{{project_name}}", name),
        )?;
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
    fn slugs_are_the_references() {
        assert_eq!(slugify("My AgentXchain Project"), "my-agentxchain-project");
        assert_eq!(slugify("--Démo__x--"), "d-mo-x");
        assert_eq!(slugify("demo"), "demo");
    }

    #[test]
    fn a_name_is_written_as_json_and_a_goal_sits_before_the_branch() {
        let c = config("a \"quoted\" name", Some(" ship it "));
        assert_eq!(c["project"]["name"], "a \"quoted\" name");
        assert_eq!(c["project"]["id"], "a-quoted-name");
        let keys: Vec<&String> = c["project"].as_object().unwrap().keys().collect();
        assert_eq!(keys, ["id", "name", "goal", "default_branch"]);
    }
}
