//! Decisions that outlive their run (`.agentxchain/repo-decisions.jsonl`): a turn's decision
//! with `durability: "repo"` (or one that overrides an earlier repo decision) is recorded when
//! the turn is accepted, binds every later run (a new run carries the active ones in
//! `state.repo_decisions`, its turns see them in the bundle's context) until a later decision
//! overrides it — which needs authority at least the original author's when both roles declare
//! `decision_authority`.

use serde_json::{Value as Json, json};

use super::{Refusal, Store};

pub const FILE: &str = ".agentxchain/repo-decisions.jsonl";

/// Every recorded decision, in file order (lines that are not JSON objects are skipped).
pub fn all(store: &Store) -> Vec<Json> {
    store
        .read_jsonl(FILE)
        .into_iter()
        .filter(Json::is_object)
        .collect()
}

/// The decisions that bind now.
pub fn active(store: &Store) -> Vec<Json> {
    all(store)
        .into_iter()
        .filter(|d| d["status"] == "active")
        .collect()
}

/// A role's weight in overriding decisions.
#[derive(Debug, Clone, PartialEq)]
pub enum Authority {
    /// The role declares none (no rule applies).
    Undeclared,
    /// The role is not in the config any more: weighs 0.
    UnknownRole,
    /// `decision_authority`, or a person's default of 100.
    Level { level: Json, source: &'static str },
}

impl Authority {
    fn level(&self) -> Option<f64> {
        match self {
            Authority::Undeclared => None,
            Authority::UnknownRole => Some(0.0),
            Authority::Level { level, .. } => level.as_f64(),
        }
    }

    /// `(authority_level, authority_source)` as the reference's summaries print them.
    pub fn fields(&self) -> (Json, Json) {
        match self {
            Authority::Undeclared => (Json::Null, Json::Null),
            Authority::UnknownRole => (json!(0), json!("unknown_role")),
            Authority::Level { level, source } => (level.clone(), json!(source)),
        }
    }
}

/// The authority of the decision's author `role` under `config` (`None`: the config has no
/// roles, so no authority rule applies at all).
pub fn authority(role: &Json, config: &Json) -> Option<Authority> {
    let roles = config["roles"].as_object()?;
    let id = role.as_str();
    if id == Some("human") {
        return Some(match roles.get("human").map(|h| &h["decision_authority"]) {
            Some(n @ Json::Number(_)) => Authority::Level {
                level: n.clone(),
                source: "configured",
            },
            _ => Authority::Level {
                level: json!(100),
                source: "human_default",
            },
        });
    }
    Some(match id.and_then(|r| roles.get(r)) {
        None => Authority::UnknownRole,
        Some(r) if r["decision_authority"].is_number() => Authority::Level {
            level: r["decision_authority"].clone(),
            source: "configured",
        },
        Some(_) => Authority::Undeclared,
    })
}

/// Whether `decision` (with its author in `role`) may override the decision it names: the
/// reference's texts for a refusal.
pub fn check_override(all: &[Json], decision: &Json, config: &Json) -> Result<(), String> {
    let Some(target_id) = decision["overrides"].as_str() else {
        return Ok(());
    };
    // The last record of that id is the one that counts (an override rewrites it in place).
    let Some(target) = all.iter().rev().find(|d| d["id"] == target_id) else {
        return Err(format!(
            "decisions: overrides references {target_id} which does not exist in repo decisions."
        ));
    };
    match target["status"].as_str() {
        Some("active") => {}
        Some("overridden") => {
            return Err(format!(
                "decisions: {target_id} is already overridden by {}.",
                target["overridden_by"]
                    .as_str()
                    .unwrap_or("another decision")
            ));
        }
        other => {
            return Err(format!(
                "decisions: {target_id} has status \"{}\", only active repo decisions can be overridden.",
                other.unwrap_or("undefined")
            ));
        }
    }
    let (by, of) = (&decision["role"], &target["role"]);
    if by.is_string() && by == of {
        return Ok(());
    }
    let (Some(theirs), Some(mine)) = (authority(of, config), authority(by, config)) else {
        return Ok(());
    };
    if theirs == Authority::UnknownRole
        || theirs == Authority::Undeclared
        || mine == Authority::Undeclared
    {
        return Ok(());
    }
    let (need, have) = (theirs.level().unwrap_or(0.0), mine.level().unwrap_or(0.0));
    if have < need {
        let n = |f: f64| canon::to_compact(&axc_core::util::js_number(f));
        return Err(format!(
            "decisions: role '{}' (authority {}) cannot override {target_id} made by '{}' (authority {}). Override requires authority >= {}.",
            by.as_str().unwrap_or("undefined"),
            n(have),
            of.as_str().unwrap_or("undefined"),
            n(need),
            n(need)
        ));
    }
    Ok(())
}

/// Records the accepted turn's repo-durable decisions and its overrides: an overridden
/// decision is marked (the file rewritten whole, atomically) before the overriding one is
/// appended. A decision already recorded by this turn (a second acceptance after a crash) is
/// not recorded twice.
pub fn record(
    store: &Store,
    tr: &Json,
    state: &Json,
    phase: &str,
    at: &str,
) -> Result<(), Refusal> {
    for d in tr["decisions"].as_array().into_iter().flatten() {
        let durable = d["durability"].as_str().unwrap_or("run") == "repo";
        let overrides = d["overrides"].as_str().filter(|o| !o.is_empty());
        if !durable && overrides.is_none() {
            continue;
        }
        let mut records = all(store);
        if records
            .iter()
            .any(|r| r["id"] == d["id"] && r["turn_id"] == tr["turn_id"])
        {
            continue;
        }
        if let Some(target) = overrides {
            let mut changed = false;
            for r in records.iter_mut().filter(|r| r["id"] == target) {
                r["status"] = json!("overridden");
                r["overridden_by"] = d["id"].clone();
                changed = true;
            }
            if changed {
                let text: String = records
                    .iter()
                    .map(|r| format!("{}\n", canon::to_compact(r)))
                    .collect();
                store.write_text(FILE, &text)?;
            }
        }
        store.append_jsonl(
            FILE,
            &json!({
                "id": d["id"], "run_id": state["run_id"], "turn_id": tr["turn_id"],
                "role": tr["role"], "phase": phase, "category": d["category"],
                "statement": d["statement"], "rationale": d["rationale"],
                "durability": d["durability"].as_str().unwrap_or("repo"),
                "overrides": overrides, "status": "active", "overridden_by": null,
                "created_at": at,
            }),
        )?;
    }
    Ok(())
}

/// The bundle's section naming the decisions that bind the run (none: empty).
pub fn context_section(state: &Json, config: &Json) -> String {
    let list = state["repo_decisions"]
        .as_array()
        .cloned()
        .unwrap_or_default();
    if list.is_empty() {
        return String::new();
    }
    let p = axc_core::util::printable;
    let mut c = "\n## Active Repo Decisions\n\nDecisions recorded by earlier runs that bind this one. Comply with each, or override one explicitly: a decision with `overrides: \"DEC-NNN\"` and its rationale.\n".to_owned();
    let policy = config["roles"]
        .as_object()
        .is_some_and(|r| r.values().any(|r| r["decision_authority"].is_number()));
    if policy {
        c.push_str("Roles here declare `decision_authority`: overriding a decision needs authority at least its author's.\n");
    }
    c.push('\n');
    for d in &list {
        let s = |k: &str| p(d[k].as_str().unwrap_or(""));
        let weight = match authority(&d["role"], config) {
            Some(Authority::Level {
                level,
                source: "human_default",
            }) => {
                format!(", authority {level} (a person's default)")
            }
            Some(Authority::Level { level, .. }) => format!(", authority {level}"),
            Some(Authority::UnknownRole) => ", authority 0 (role no longer in the config)".into(),
            _ => String::new(),
        };
        let supersedes = d["overrides"]
            .as_str()
            .map_or_else(String::new, |o| format!(" (supersedes {})", p(o)));
        c.push_str(&format!(
            "- **{}** ({}, by {}{weight}): {}{supersedes}\n",
            s("id"),
            s("category"),
            if s("role").is_empty() {
                "unknown".into()
            } else {
                s("role")
            },
            s("statement"),
        ));
    }
    c
}
