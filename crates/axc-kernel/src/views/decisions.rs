//! `decisions`: the repo decisions that outlive runs, each with whether it binds now
//! (`binding_state`: `binding`, `replaced`, `historical`) and its author's authority.

use serde_json::{Value as Json, json};

use crate::run::Store;
use crate::run::repo_decisions;

/// The decision with what the reference derives when it prints it.
pub fn enrich(d: &Json, config: &Json) -> Json {
    let mut out = d.clone();
    let binding = if d["status"] == "active" {
        "binding"
    } else if d["overridden_by"].as_str().is_some_and(|s| !s.is_empty()) {
        "replaced"
    } else {
        "historical"
    };
    let (level, source) = repo_decisions::authority(&d["role"], config)
        .map_or((Json::Null, Json::Null), |a| a.fields());
    if let Some(o) = out.as_object_mut() {
        o.insert("binding_state".into(), json!(binding));
        o.insert("authority_level".into(), level);
        o.insert("authority_source".into(), source);
    }
    out
}

/// The listed decisions (active ones, or all), enriched, in file order.
pub fn list(store: &Store, config: &Json, all: bool) -> Vec<Json> {
    repo_decisions::all(store)
        .iter()
        .filter(|d| all || d["status"] == "active")
        .map(|d| enrich(d, config))
        .collect()
}

/// One decision by id (its last record).
pub fn show(store: &Store, config: &Json, id: &str) -> Option<Json> {
    repo_decisions::all(store)
        .iter()
        .rev()
        .find(|d| d["id"] == id)
        .map(|d| enrich(d, config))
}

/// The summary lines above the list: what binds now, its categories, the history kept, the
/// highest authority among the binding decisions.
pub fn summary_lines(store: &Store, config: &Json, all: bool) -> Vec<String> {
    let records = repo_decisions::all(store);
    let active: Vec<&Json> = records.iter().filter(|d| d["status"] == "active").collect();
    let overridden = records
        .iter()
        .filter(|d| d["status"] == "overridden")
        .count();
    let plural = |n: usize| if n == 1 { "" } else { "s" };
    let mut lines = vec![format!(
        "binding now: {} active decision{}",
        active.len(),
        plural(active.len())
    )];
    let mut categories: Vec<String> = active
        .iter()
        .filter_map(|d| d["category"].as_str().filter(|c| !c.is_empty()))
        .map(axc_core::util::printable)
        .collect();
    categories.sort();
    categories.dedup();
    if !categories.is_empty() {
        lines.push(format!("categories: {}", categories.join(", ")));
    }
    if overridden > 0 {
        lines.push(if all {
            format!(
                "history: {overridden} overridden decision{} recorded",
                plural(overridden)
            )
        } else {
            format!(
                "history: {overridden} overridden decision{} hidden (use --all)",
                plural(overridden)
            )
        });
    }
    let mut top: Option<(f64, &Json)> = None;
    for d in &active {
        let Some((level, _)) = repo_decisions::authority(&d["role"], config).map(|a| a.fields())
        else {
            continue;
        };
        if let Some(l) = level.as_f64()
            && top.is_none_or(|(t, _)| l > t)
        {
            top = Some((l, d));
        }
    }
    if let Some((l, d)) = top {
        lines.push(format!(
            "highest active authority: {} ({})",
            canon::to_compact(&axc_core::util::js_number(l)),
            axc_core::util::printable(d["role"].as_str().unwrap_or("unknown"))
        ));
    }
    lines
}
