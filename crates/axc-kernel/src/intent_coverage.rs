//! Whether an accepted turn answers the acceptance contract of the intake intent it serves
//! (the reference's rules): an item is addressed when the turn's `intent_response` names it
//! as addressed, deferred or rejected; when its phase scope has already been left, or it says
//! a gate passes and that gate has passed; when a roadmap-derived charter's provenance item is
//! met; or when at least half of its significant words (longer than three letters) appear in
//! what the turn wrote (summary, decisions, objections, files, verification evidence, intent
//! responses). Data in, verdict out.

use serde_json::Value as Json;

/// The items of the contract the turn addressed and those it did not, in contract order.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Coverage {
    pub addressed: Vec<String>,
    pub unaddressed: Vec<String>,
}

/// The phases in order: `phases[].id` when the config lists them, else the routing's keys.
pub fn phase_order(config: &Json) -> Vec<String> {
    if let Some(p) = config["phases"].as_array().filter(|p| !p.is_empty()) {
        return p
            .iter()
            .filter_map(|x| x["id"].as_str())
            .filter(|id| !id.trim().is_empty())
            .map(str::to_owned)
            .collect();
    }
    config["routing"]
        .as_object()
        .map(|m| m.keys().cloned().collect())
        .unwrap_or_default()
}

/// The gates `text` names (case-insensitively), in the config's order.
pub fn referenced_gates(text: &str, config: &Json) -> Vec<String> {
    let hay = text.to_lowercase();
    if hay.is_empty() {
        return Vec::new();
    }
    config["gates"]
        .as_object()
        .into_iter()
        .flatten()
        .map(|(g, _)| g)
        .filter(|g| hay.contains(&g.to_lowercase()))
        .cloned()
        .collect()
}

/// The one phase whose exit gate the named gates are, if they name exactly one.
fn phase_of_gates(gates: &[String], config: &Json) -> Option<String> {
    let mut phases: Vec<String> = Vec::new();
    for (phase, route) in config["routing"].as_object().into_iter().flatten() {
        if let Some(g) = route["exit_gate"].as_str().filter(|g| !g.trim().is_empty())
            && gates.iter().any(|x| x == g)
            && !phases.contains(phase)
        {
            phases.push(phase.clone());
        }
    }
    (phases.len() == 1).then(|| phases.remove(0))
}

/// An intent's phase scope: the one it states, else the one phase its charter and contract
/// name the exit gate of.
pub fn intent_phase_scope(intent: &Json, config: Option<&Json>) -> Option<String> {
    if let Some(s) = intent["phase_scope"].as_str().map(str::trim)
        && !s.is_empty()
    {
        return Some(s.to_owned());
    }
    let config = config?;
    let mut texts = vec![intent["charter"].as_str().unwrap_or("").to_owned()];
    texts.extend(
        intent["acceptance_contract"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(Json::as_str)
            .map(str::to_owned),
    );
    let mut gates: Vec<String> = Vec::new();
    for t in &texts {
        for g in referenced_gates(t, config) {
            if !gates.contains(&g) {
                gates.push(g);
            }
        }
    }
    phase_of_gates(&gates, config)
}

fn phase_exited(current: &str, scoped: &str, config: &Json) -> bool {
    let order = phase_order(config);
    match (
        order.iter().position(|p| p == current),
        order.iter().position(|p| p == scoped),
    ) {
        (Some(c), Some(s)) => c > s,
        _ => false,
    }
}

fn gate_pass_language(text: &str) -> bool {
    // `\b(can advance|advance to|gate can advance|gate passes|gate passed|passes|passed)\b`
    const PHRASES: [&str; 6] = [
        "can advance",
        "advance to",
        "gate passes",
        "gate passed",
        "passes",
        "passed",
    ];
    let word = |c: Option<char>| c.is_some_and(|c| c.is_ascii_alphanumeric() || c == '_');
    PHRASES.iter().any(|p| {
        text.match_indices(p).any(|(i, _)| {
            !word(text[..i].chars().next_back()) && !word(text[i + p.len()..].chars().next())
        })
    })
}

fn satisfied_by_gate_state(item: &str, state: &Json, config: &Json) -> bool {
    let text = item.to_lowercase();
    let gates = referenced_gates(item, config);
    !gates.is_empty()
        && gate_pass_language(&text)
        && gates
            .iter()
            .any(|g| state["phase_gate_status"][g] == "passed")
}

/// Whether an item is met by where the run is: its phase scope (the gates it names, else the
/// intent's) has been left, or it says a gate passes that has passed.
pub(crate) fn met_by_lifecycle(item: &str, ctx: &Json, state: &Json, config: &Json) -> bool {
    let fallback = ctx["phase_scope"]
        .as_str()
        .map(str::trim)
        .filter(|s| !s.is_empty());
    let scope = phase_of_gates(&referenced_gates(item, config), config)
        .or_else(|| fallback.map(str::to_owned));
    let exited = scope.as_deref().is_some_and(|s| {
        state["phase"]
            .as_str()
            .is_some_and(|p| phase_exited(p, s, config))
    });
    exited || satisfied_by_gate_state(item, state, config)
}

/// What the turn wrote, lower-cased, as one text.
fn corpus(tr: &Json) -> String {
    let s = |v: &Json| v.as_str().unwrap_or("").to_owned();
    let mut parts = vec![s(&tr["summary"])];
    for d in tr["decisions"].as_array().into_iter().flatten() {
        parts.push(format!("{} {}", s(&d["statement"]), s(&d["rationale"])));
    }
    for o in tr["objections"].as_array().into_iter().flatten() {
        parts.push(s(&o["statement"]));
    }
    for key in ["files_changed", "artifacts_created"] {
        parts.extend(
            tr[key]
                .as_array()
                .into_iter()
                .flatten()
                .filter_map(Json::as_str)
                .map(str::to_owned),
        );
    }
    let v = &tr["verification"];
    parts.push(s(&v["evidence_summary"]));
    for e in v["machine_evidence"].as_array().into_iter().flatten() {
        let Some(m) = e.as_object() else {
            parts.push(String::new());
            continue;
        };
        let fields: Vec<String> = m
            .values()
            .map(|x| match x {
                Json::String(t) => t.clone(),
                Json::Array(a) => a
                    .iter()
                    .map(|y| match y {
                        Json::String(t) => t.clone(),
                        Json::Null => String::new(),
                        other => other.to_string(),
                    })
                    .collect::<Vec<_>>()
                    .join(" "),
                Json::Object(_) => x.to_string(),
                _ => String::new(),
            })
            .collect();
        parts.push(fields.join(" "));
    }
    for r in tr["intent_response"].as_array().into_iter().flatten() {
        parts.push(format!("{} {}", s(&r["item"]), s(&r["detail"])));
    }
    parts.join("\n").to_lowercase()
}

fn words(text: &str) -> Vec<String> {
    text.to_lowercase()
        .split(|c: char| !c.is_ascii_alphanumeric())
        .filter(|w| !w.is_empty())
        .map(str::to_owned)
        .collect()
}

/// A `[roadmap]` or `[roadmap-replenishment]` charter's provenance items, decided by their own
/// rule (`None`: the item is judged as any other).
fn roadmap_rule(item: &str, tr: &Json, ctx: &Json, state: &Json) -> Option<bool> {
    let charter = ctx["charter"].as_str().unwrap_or("");
    let lower = item.to_lowercase();
    let lower = lower.trim();
    if charter.starts_with("[roadmap]") {
        if lower.starts_with("evidence source:") {
            return Some(true);
        }
        if lower.starts_with("unchecked roadmap item completed:") && state["phase"] == "planning" {
            let milestone = regex::Regex::new(r"(?i)\[roadmap\]\s*(M\d+)")
                .ok()?
                .captures(charter)?
                .get(1)?
                .as_str()
                .to_lowercase();
            return Some(corpus(tr).contains(&milestone));
        }
        return None;
    }
    if charter.starts_with("[roadmap-replenishment]") {
        let cites =
            lower.starts_with("milestone cites at least one concrete vision.md source section");
        if !cites && !lower.starts_with("milestone scope derived from vision.md sections:") {
            return None;
        }
        let c = corpus(tr);
        if !c.contains("vision.md") {
            return Some(false);
        }
        if cites {
            return Some(true);
        }
        let list = item.split(':').skip(1).collect::<Vec<_>>().join(":");
        let sections: Vec<String> = list
            .split(',')
            .map(|s| s.trim().to_lowercase())
            .filter(|s| s.chars().count() >= 4)
            .collect();
        return Some(sections.is_empty() || sections.iter().any(|s| c.contains(s.as_str())));
    }
    None
}

/// The coverage of `ctx.acceptance_contract` by turn result `tr`, the run being in `state`.
pub fn evaluate(tr: &Json, ctx: &Json, state: &Json, config: &Json) -> Coverage {
    let mut responses: Vec<(String, String)> = Vec::new();
    for r in tr["intent_response"].as_array().into_iter().flatten() {
        if let (Some(item), Some(status)) = (r["item"].as_str(), r["status"].as_str()) {
            let key = item.to_lowercase().trim().to_owned();
            responses.retain(|(k, _)| *k != key);
            responses.push((key, status.to_owned()));
        }
    }
    let text = corpus(tr);
    let mut out = Coverage::default();
    for item in ctx["acceptance_contract"].as_array().into_iter().flatten() {
        // An item that is not text is never addressed: a contract cannot be emptied by
        // changing its items' type.
        let Some(item) = item.as_str() else {
            out.unaddressed.push(item.to_string());
            continue;
        };
        let key = item.to_lowercase().trim().to_owned();
        let structural = responses
            .iter()
            .find(|(k, _)| *k == key)
            .is_some_and(|(_, s)| matches!(s.as_str(), "addressed" | "deferred" | "rejected"));
        let addressed = met_by_lifecycle(item, ctx, state, config)
            || roadmap_rule(item, tr, ctx, state) == Some(true)
            || structural
            || {
                let significant: Vec<String> =
                    words(&key).into_iter().filter(|w| w.len() > 3).collect();
                significant.is_empty() || {
                    let matched = significant
                        .iter()
                        .filter(|w| text.contains(w.as_str()))
                        .count();
                    matched * 2 >= significant.len()
                }
            };
        if addressed {
            out.addressed.push(item.to_owned());
        } else {
            out.unaddressed.push(item.to_owned());
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn config() -> Json {
        json!({
            "routing": {
                "planning": {"exit_gate": "planning_signoff"},
                "implementation": {"exit_gate": "implementation_complete"},
                "qa": {"exit_gate": "qa_ship_verdict"},
            },
            "gates": {"planning_signoff": {}, "implementation_complete": {}, "qa_ship_verdict": {}},
        })
    }

    fn ctx(items: &[&str]) -> Json {
        json!({"intent_id": "intent_1_abcd", "charter": "Ship a greeting script", "acceptance_contract": items, "phase_scope": null})
    }

    #[test]
    fn an_item_is_addressed_by_a_response_or_by_most_of_its_words() {
        let state = json!({"phase": "planning", "phase_gate_status": {}});
        let c = ctx(&["prints hello", "exits 0"]);
        // Nothing said: "prints hello" has 2 significant words, none in the corpus; "exits 0"
        // has one ("exits"), absent.
        let tr = json!({"summary": "pm turn done"});
        let cov = evaluate(&tr, &c, &state, &config());
        assert_eq!(cov.unaddressed, ["prints hello", "exits 0"]);
        assert!(cov.addressed.is_empty());
        // Structural answers, case and space insensitive; "pending" is not an answer.
        let tr = json!({"summary": "x", "intent_response": [
            {"item": " Prints Hello ", "status": "addressed"},
            {"item": "exits 0", "status": "pending"},
        ]});
        let cov = evaluate(&tr, &c, &state, &config());
        // "prints hello" by its answer; "exits 0" only because the response's own item text
        // puts its word in the corpus.
        assert_eq!(cov.addressed, ["prints hello", "exits 0"]);
        let tr = json!({"summary": "x", "intent_response": [{"item": "exits 0", "status": "pending", "detail": "later"}]});
        let c2 = ctx(&["prints hello"]);
        assert_eq!(
            evaluate(&tr, &c2, &state, &config()).unaddressed,
            ["prints hello"]
        );
        // Half of the significant words is enough; fewer is not.
        let c = ctx(&["greeting script prints output"]);
        let half = json!({"summary": "the greeting script"});
        assert!(
            evaluate(&half, &c, &state, &config())
                .unaddressed
                .is_empty()
        );
        let less = json!({"summary": "the greeting"});
        assert_eq!(
            evaluate(&less, &c, &state, &config()).unaddressed,
            ["greeting script prints output"]
        );
        // An item with no significant word is addressed by anything.
        let c = ctx(&["a b c"]);
        assert!(
            evaluate(&json!({}), &c, &state, &config())
                .unaddressed
                .is_empty()
        );
    }

    #[test]
    fn an_item_that_is_not_text_is_never_addressed() {
        let state = json!({"phase": "planning"});
        let c = json!({"acceptance_contract": [{"item": "prints hello"}, 7]});
        let cov = evaluate(&json!({"summary": "prints hello"}), &c, &state, &config());
        assert_eq!(cov.unaddressed, [r#"{"item":"prints hello"}"#, "7"]);
    }

    #[test]
    fn an_item_is_met_when_its_phase_was_left_or_its_gate_passed() {
        let c = ctx(&["planning_signoff is approved by the board"]);
        let in_planning = json!({"phase": "planning", "phase_gate_status": {}});
        let later = json!({"phase": "qa", "phase_gate_status": {}});
        let tr = json!({"summary": "nothing"});
        assert_eq!(
            evaluate(&tr, &c, &in_planning, &config()).unaddressed.len(),
            1
        );
        assert!(evaluate(&tr, &c, &later, &config()).unaddressed.is_empty());
        let c = ctx(&["qa_ship_verdict gate passed"]);
        let passed = json!({"phase": "qa", "phase_gate_status": {"qa_ship_verdict": "passed"}});
        let pending = json!({"phase": "qa", "phase_gate_status": {"qa_ship_verdict": "pending"}});
        assert!(evaluate(&tr, &c, &passed, &config()).unaddressed.is_empty());
        assert_eq!(evaluate(&tr, &c, &pending, &config()).unaddressed.len(), 1);
        // "bypassed" is not "passed".
        assert!(!gate_pass_language("qa_ship_verdict bypassed"));
        assert!(gate_pass_language("it passes."));
    }

    #[test]
    fn the_phase_scope_is_stated_or_named_by_exactly_one_gate() {
        let cfg = config();
        assert_eq!(
            intent_phase_scope(&json!({"phase_scope": " qa "}), Some(&cfg)).as_deref(),
            Some("qa")
        );
        assert_eq!(
            intent_phase_scope(
                &json!({"charter": "get implementation_complete", "acceptance_contract": []}),
                Some(&cfg)
            )
            .as_deref(),
            Some("implementation")
        );
        assert_eq!(
            intent_phase_scope(
                &json!({"charter": "planning_signoff and qa_ship_verdict"}),
                Some(&cfg)
            ),
            None
        );
        assert_eq!(intent_phase_scope(&json!({"charter": "x"}), None), None);
        assert_eq!(
            phase_order(&json!({"phases": [{"id": "a"}, {"id": " "}, {"id": "b"}]})),
            ["a", "b"]
        );
    }

    #[test]
    fn roadmap_charters_have_their_own_provenance_items() {
        let state = json!({"phase": "planning"});
        let c = json!({"charter": "[roadmap] M7: ship", "acceptance_contract": [
            "Evidence source: .planning/ROADMAP.md",
            "Unchecked roadmap item completed: zzzz qqqq wwww",
        ]});
        let tr = json!({"summary": "scoped m7"});
        assert!(evaluate(&tr, &c, &state, &config()).unaddressed.is_empty());
        let tr = json!({"summary": "scoped"});
        assert_eq!(
            evaluate(&tr, &c, &state, &config()).unaddressed,
            ["Unchecked roadmap item completed: zzzz qqqq wwww"]
        );
        let c = json!({"charter": "[roadmap-replenishment] next", "acceptance_contract": [
            "Milestone scope derived from VISION.md sections: Billing Flows, Audit"
        ]});
        assert!(
            evaluate(
                &json!({"summary": "per vision.md: billing flows"}),
                &c,
                &state,
                &config()
            )
            .unaddressed
            .is_empty()
        );
        assert_eq!(
            evaluate(&json!({"summary": "billing flows"}), &c, &state, &config())
                .unaddressed
                .len(),
            1
        );
    }
}
