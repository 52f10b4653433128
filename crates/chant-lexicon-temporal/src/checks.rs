//! The temporal post-synth checks, each as the reference words it: TMP001 (namespace
//! retention under 3 days, error), TMP002 (`AllowAll` overlap without `state.note`,
//! warning), TMP010 (cron expressions that are not 5- or 6-field cron, warning), TMP011
//! (a search attribute naming an undeclared namespace, error).

use chant_core::discover::Discovery;
use chant_core::lexicon::Finding;
use chant_core::model::to_json;
use serde_json::Value as Json;

/// `"<n>d"` or `"<n>h"` (any case) in hours; anything else is not judged.
fn retention_hours(retention: &str) -> Option<u64> {
    let (n, unit) = retention.split_at(retention.len().checked_sub(1)?);
    let n: u64 = n
        .parse()
        .ok()
        .filter(|_| n.bytes().all(|b| b.is_ascii_digit()))?;
    match unit {
        "d" | "D" => n.checked_mul(24),
        "h" | "H" => Some(n),
        _ => None,
    }
}

fn cron_ok(expr: &str) -> bool {
    let fields: Vec<&str> = expr.split_whitespace().collect();
    (5..=6).contains(&fields.len())
        && fields.iter().all(|f| {
            f.bytes()
                .all(|b| b.is_ascii_digit() || b"*,/-?LW#".contains(&b))
        })
}

fn truthy_text(v: Option<&Json>) -> Option<&str> {
    v.and_then(Json::as_str).filter(|s| !s.is_empty())
}

pub fn run(d: &Discovery, entities: &[usize]) -> Vec<Finding> {
    let items: Vec<(&str, &str, Json)> = entities
        .iter()
        .map(|&e| {
            let decl = d.decl(e);
            (
                d.entities[e].name.as_str(),
                decl.entity_type.as_str(),
                to_json(&decl.props),
            )
        })
        .collect();
    let mut out = Vec::new();
    let finding = |entity: &str, message: String, error: bool| Finding {
        entity: entity.to_owned(),
        message,
        error,
    };
    for (name, ty, p) in &items {
        if *ty == "Temporal::Namespace"
            && let Some(retention) = truthy_text(p.get("retention"))
            && retention_hours(retention).is_some_and(|h| h < 72)
        {
            out.push(finding(name, format!("Namespace \"{name}\" has retention \"{retention}\" — minimum recommended is 3d (72h) to preserve workflow history. Set retention to at least \"3d\" — e.g. retention: \"7d\""), true));
        }
    }
    for (name, ty, p) in &items {
        if *ty == "Temporal::Schedule"
            && p["policies"]["overlap"] == "AllowAll"
            && p["state"]["note"]
                .as_str()
                .is_none_or(|n| n.trim().is_empty())
        {
            out.push(finding(name, format!("Schedule \"{name}\" uses overlap \"AllowAll\" — add state.note explaining why concurrent runs are safe. Add state: {{ note: \"Workflow is idempotent — concurrent runs are safe\" }}"), false));
        }
    }
    for (name, ty, p) in &items {
        if *ty != "Temporal::Schedule" {
            continue;
        }
        let id = p.get("scheduleId").and_then(Json::as_str).unwrap_or(name);
        for expr in p["spec"]["cronExpressions"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(Json::as_str)
        {
            if !cron_ok(expr) {
                out.push(finding(name, format!("schedules/{id}.ts: cron expression \"{expr}\" does not look like valid 5- or 6-field cron syntax"), false));
            }
        }
    }
    let declared: Vec<&str> = items
        .iter()
        .filter(|(_, ty, _)| *ty == "Temporal::Namespace")
        .filter_map(|(_, _, p)| truthy_text(p.get("name")))
        .collect();
    for (name, ty, p) in &items {
        if *ty == "Temporal::SearchAttribute"
            && let Some(ns) = truthy_text(p.get("namespace"))
            && !declared.contains(&ns)
        {
            out.push(finding(name, format!("SearchAttribute \"{name}\" references namespace \"{ns}\" which is not declared — add a TemporalNamespace with name \"{ns}\""), true));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn retention_and_cron_are_read_as_the_reference_reads_them() {
        assert_eq!(retention_hours("2d"), Some(48));
        assert_eq!(retention_hours("72H"), Some(72));
        assert_eq!(retention_hours("3"), None);
        assert_eq!(retention_hours("-1d"), None);
        assert_eq!(retention_hours("1w"), None);
        assert_eq!(retention_hours(""), None);
        assert!(cron_ok("0 2 * * *"));
        assert!(cron_ok("0 0 2 ? * MON".replace("MON", "1").as_str()));
        assert!(!cron_ok("0 2 * *"));
        assert!(!cron_ok("@daily"));
        assert!(!cron_ok("0 2 * * * * *"));
    }
}
