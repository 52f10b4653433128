//! What the operations read of `agentxchain.json`: roles with their runtime, the routing's
//! phases, entry roles and exit gates, the budget.

use serde_json::{Value as Json, json};

use super::Refusal;
use super::store::{CONFIG, Store};

const NO_CONFIG: &str = "No agentxchain.json found. Run `agentxchain init` first.";

/// Reads the project's config, refusing a project that is not governed or whose config does
/// not validate with the reference's texts (the reference's stdout line, and on stderr its
/// warning naming each problem), and adds what the reference's normalized config carries:
/// `runtime_id` and `runtime_class` on each role. Every governed command reads the config
/// here, so none runs a config `status` and `validate` call invalid.
pub fn load(store: &Store) -> Result<Json, Refusal> {
    load_text(store).map(|(config, _)| config)
}

/// [`load`], with the text it parsed: an operation that judges a turn by the config reads it
/// once, under the run's lock, and compares these exact bytes (a later read could see another
/// file: a config swapped back in between).
pub fn load_text(store: &Store) -> Result<(Json, String), Refusal> {
    let (raw, text) = store
        .read_json_text(CONFIG)?
        .ok_or_else(|| Refusal::new(NO_CONFIG))?;
    if let Err(e) = axc_core::config::from_value(raw.clone()) {
        return Err(Refusal::new(NO_CONFIG).warning(format!("  Warning: {e}")));
    }
    Ok((governed(raw)?, text))
}

/// The config as `load` reads it, without validating it (for `doctor`, which reports the
/// problems itself).
pub fn read(store: &Store) -> Result<Json, Refusal> {
    governed(
        store
            .read_json(CONFIG)?
            .ok_or_else(|| Refusal::new(NO_CONFIG))?,
    )
}

fn governed(raw: Json) -> Result<Json, Refusal> {
    if !raw.is_object() || raw.get("roles").is_none_or(|r| !r.is_object()) {
        return Err(Refusal::new(
            "The resume command is only available for governed projects.",
        ));
    }
    Ok(normalize(raw))
}

/// Adds `runtime_id` / `runtime_class` to every role (from `runtime` and the runtime's type),
/// and the workflow kit as the reference normalizes it: a config without one gets each routed
/// phase's default artifacts (the planning, implementation and QA proof files every exit gate
/// of that phase checks), a phase's template its template's artifacts.
pub fn normalize(mut raw: Json) -> Json {
    if raw.is_object() {
        let phases: Vec<String> = phases(&raw).into_iter().map(str::to_owned).collect();
        raw["workflow_kit"] = crate::views::status::workflow_kit(&raw["workflow_kit"], &phases);
    }
    let runtimes = raw["runtimes"].clone();
    if let Some(roles) = raw["roles"].as_object_mut() {
        for role in roles.values_mut() {
            let Some(r) = role.as_object_mut() else {
                continue;
            };
            let runtime = r
                .get("runtime_id")
                .or(r.get("runtime"))
                .and_then(Json::as_str)
                .map(str::to_owned);
            if let Some(id) = runtime {
                let class = runtimes[&id]["type"]
                    .as_str()
                    .unwrap_or("manual")
                    .to_owned();
                r.entry("runtime_class").or_insert(json!(class));
                r.entry("runtime_id").or_insert(json!(id));
            }
        }
    }
    raw
}

pub fn role<'a>(config: &'a Json, id: &str) -> &'a Json {
    &config["roles"][id]
}

pub fn role_title<'a>(config: &'a Json, id: &'a str) -> &'a str {
    role(config, id)["title"].as_str().unwrap_or(id)
}

pub fn write_authority<'a>(config: &'a Json, id: &str) -> &'a str {
    role(config, id)["write_authority"]
        .as_str()
        .unwrap_or("review_only")
}

pub fn runtime_id<'a>(config: &'a Json, id: &str) -> &'a str {
    role(config, id)["runtime_id"].as_str().unwrap_or("")
}

pub fn runtime_type<'a>(config: &'a Json, runtime: &str) -> &'a str {
    config["runtimes"][runtime]["type"]
        .as_str()
        .unwrap_or("manual")
}

pub fn entry_role<'a>(config: &'a Json, phase: &str) -> Option<&'a str> {
    config["routing"][phase]["entry_role"].as_str()
}

pub fn exit_gate<'a>(config: &'a Json, phase: &str) -> Option<&'a str> {
    config["routing"][phase]["exit_gate"]
        .as_str()
        .filter(|g| !g.is_empty())
}

pub fn phases(config: &Json) -> Vec<&str> {
    crate::gates::phase_order(config)
}

/// `budget.per_turn_max_usd` (the reservation a turn takes), when set.
pub fn per_turn_budget(config: &Json) -> Option<f64> {
    config["budget"]["per_turn_max_usd"].as_f64()
}

/// `project.id`, else `project.name`.
pub fn project_id(config: &Json) -> Json {
    match &config["project"] {
        Json::Object(p) => p.get("id").or(p.get("name")).cloned().unwrap_or(Json::Null),
        Json::String(s) => json!(s),
        _ => Json::Null,
    }
}

/// The gate statuses of a fresh run: every gate `pending`.
pub fn initial_gate_status(config: &Json) -> Json {
    let mut m = serde_json::Map::new();
    for phase in phases(config) {
        if let Some(g) = exit_gate(config, phase) {
            m.insert(g.to_owned(), json!("pending"));
        }
    }
    Json::Object(m)
}
