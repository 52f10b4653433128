//! The run's budget (`budget.per_run_max_usd`, `budget.on_exceed`): what an accepted turn's
//! cost does to `state.budget_status`, what spending the limit does to the run (blocked on
//! `budget:exhausted` with a person to raise it, or a warning in `warn` mode), and the budget
//! status reconciled with the configured limit after a person changes it. The reference's
//! texts and shapes (`reconcileBudgetStatusWithConfig`, DEC-BUDGET-ENFORCE-001,
//! DEC-BUDGET-WARN-001). Pure: the operations write what these return.

use axc_core::util::to_fixed;
use serde_json::{Map, Value as Json, json};

/// Dollars as the reference prints them (`toFixed(2)`).
fn usd2(v: f64) -> String {
    to_fixed(v, 2)
}

/// `blocked_on` of a run blocked by its budget.
pub const BLOCKED_ON: &str = "budget:exhausted";

/// What a person does about an exhausted budget.
pub const RAISE: &str = "Increase budget with agentxchain config --set budget.per_run_max_usd <usd>, then run agentxchain resume";

/// What a person does once the budget has room again.
pub const READY: &str = "Run agentxchain resume to assign the next turn";

/// The configured per-run limit, when one is set (a finite number).
pub fn limit(config: &Json) -> Option<f64> {
    config["budget"]["per_run_max_usd"]
        .as_f64()
        .filter(|l| l.is_finite())
}

/// `budget.on_exceed`: `warn` lets the run go on past the limit; anything else (the default
/// `pause_and_escalate`) stops it for a person.
pub fn warns(config: &Json) -> bool {
    config["budget"]["on_exceed"] == "warn"
}

fn spent(status: &Json) -> f64 {
    status["spent_usd"]
        .as_f64()
        .filter(|s| s.is_finite())
        .unwrap_or(0.0)
}

/// Whether `state` is blocked by its budget.
pub fn blocks(state: &Json) -> bool {
    state["blocked_on"] == BLOCKED_ON || state["blocked_reason"]["category"] == "budget_exhausted"
}

/// The refusal to reactivate a blocked run while its budget is spent (and not in `warn`
/// mode): one its budget blocks, or one with no retained turn to dispatch again (it would need
/// a new turn, which the budget refuses). The reference reactivated it and then failed to
/// assign, leaving an active run that no turn can be assigned to and no block that says why.
/// `None` when the run may go on.
pub fn still_exhausted(state: &Json, config: &Json) -> Option<String> {
    let retained = state["active_turns"]
        .as_object()
        .is_some_and(|m| !m.is_empty());
    if (!blocks(state) && retained) || warns(config) {
        return None;
    }
    let limit = limit(config)?;
    let spent = spent(&state["budget_status"]);
    (limit - spent <= 0.0).then(|| {
        format!(
            "Cannot resume: run budget exhausted (spent ${} of ${} limit). {RAISE}",
            usd2(spent),
            usd2(limit)
        )
    })
}

/// What assigning a turn past the limit in `warn` mode says (the reference's assignment
/// warning, printed as `Warning: …`): `state` is the run's as the assignment left it.
pub fn assignment_warning(state: &Json, config: &Json) -> Option<String> {
    let remaining = state["budget_status"]["remaining_usd"].as_f64()?;
    if remaining > 0.0 || !warns(config) {
        return None;
    }
    let spent = spent(&state["budget_status"]);
    Some(format!(
        "Budget exhausted (spent ${} of ${} limit). Run continues in warn mode per on_exceed policy.",
        usd2(spent),
        usd2(spent + remaining)
    ))
}

fn detail(spent: f64, limit: Option<f64>, ready: bool) -> String {
    match (limit, ready) {
        (None, true) => {
            format!(
                "Budget recovery ready: spent ${} with per_run_max_usd disabled",
                usd2(spent)
            )
        }
        (None, false) => format!(
            "Run budget exhausted: spent ${} with no configured per_run_max_usd limit",
            usd2(spent)
        ),
        (Some(l), true) => format!(
            "Budget recovery ready: spent ${} of ${} limit (${} remaining)",
            usd2(spent),
            usd2(l),
            usd2(l - spent)
        ),
        (Some(l), false) => format!(
            "Run budget exhausted: spent ${} of ${} limit (${} over)",
            usd2(spent),
            usd2(l),
            usd2((l - spent).abs())
        ),
    }
}

fn blocked_reason(detail: String, action: &str, turn_id: &Json, blocked_at: &Json) -> Json {
    json!({
        "category": "budget_exhausted",
        "recovery": {
            "typed_reason": "budget_exhausted", "owner": "human", "recovery_action": action,
            "turn_retained": false, "detail": detail,
        },
        "blocked_at": blocked_at,
        "turn_id": turn_id,
    })
}

/// `state` with its budget status recomputed from the configured limit (a person may have
/// raised, lowered or removed it since the last write): `remaining_usd` is the limit less what
/// was spent, `exhausted` set while nothing remains and dropped with its time and turn once
/// something does. A run the budget blocks gets its recovery rewritten to match (`Budget
/// recovery ready` once it may resume). `at` stands in for a missing `blocked_at` (a view
/// passes `None` and leaves it missing).
pub fn reconcile(state: Json, config: &Json, at: Option<&str>) -> Json {
    let blocked = blocks(&state);
    let Json::Object(mut next) = state else {
        return state;
    };
    // Changed where it stands: the state keeps its keys' order, as the reference's spread does.
    let slot = next
        .entry("budget_status")
        .or_insert_with(|| Json::Object(Map::new()));
    if !slot.is_object() {
        *slot = Json::Object(Map::new());
    }
    let spent_usd = spent(slot);
    let Json::Object(bs) = slot else {
        unreachable!("made an object above")
    };
    let limit = limit(config);
    let remaining = limit.map(|l| l - spent_usd);
    if !bs
        .get("spent_usd")
        .is_some_and(|s| s.as_f64().is_some_and(f64::is_finite))
    {
        bs.insert("spent_usd".into(), json!(0));
    }
    bs.insert(
        "remaining_usd".into(),
        remaining.map_or(Json::Null, axc_core::util::js_number),
    );
    if remaining.is_some_and(|r| r <= 0.0) {
        bs.insert("exhausted".into(), json!(true));
    } else {
        for k in ["exhausted", "exhausted_at", "exhausted_after_turn"] {
            bs.shift_remove(k);
        }
    }
    if blocked {
        let ready = remaining.is_none_or(|r| r > 0.0);
        let reason = next.get("blocked_reason").cloned().unwrap_or(Json::Null);
        let turn_id = if reason["turn_id"].is_null() {
            next.get("last_completed_turn_id")
                .cloned()
                .unwrap_or(Json::Null)
        } else {
            reason["turn_id"].clone()
        };
        let blocked_at = match at {
            Some(at) if reason["blocked_at"].is_null() => json!(at),
            _ => reason["blocked_at"].clone(),
        };
        next.insert("blocked_on".into(), json!(BLOCKED_ON));
        next.insert(
            "blocked_reason".into(),
            blocked_reason(
                detail(spent_usd, limit, ready),
                if ready { READY } else { RAISE },
                &turn_id,
                &blocked_at,
            ),
        );
    }
    Json::Object(next)
}

/// What an accepted turn's cost did to the budget.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Charged {
    /// The run is now blocked by its budget (`pause_and_escalate`): the recovery's detail.
    pub blocked: Option<String>,
    /// `warn` mode passed the limit: the `budget_exceeded_warn` event's payload.
    pub warn_event: Option<Json>,
    /// The line accept-turn prints: the turn cost more than it reserved, or `warn` mode
    /// passed the limit.
    pub warning: Option<String>,
}

/// Charges the accepted turn `turn_id`'s `cost` to `next` (the state after the turn; `state`
/// the one before it): `budget_status` keeps what else it held, with what was spent and what
/// remains of the configured limit. Once nothing remains, a run that is neither blocked nor
/// completed is blocked on `budget:exhausted` (or marked `warn_mode` under `on_exceed: warn`).
pub fn charge(
    next: &mut Json,
    state: &Json,
    config: &Json,
    turn_id: &str,
    cost: f64,
    at: &str,
) -> Charged {
    let mut out = Charged::default();
    if let Some(reserved) = state["budget_reservations"][turn_id]["reserved_usd"].as_f64()
        && cost > reserved
    {
        out.warning = Some(format!(
            "Actual cost ${} exceeded reservation ${} for this turn",
            usd2(cost),
            usd2(reserved)
        ));
    }
    let mut bs: Map<String, Json> = state["budget_status"]
        .as_object()
        .cloned()
        .unwrap_or_default();
    let spent_usd = spent(&state["budget_status"]) + cost;
    let limit = limit(config);
    let remaining = limit.map(|l| l - spent_usd);
    bs.insert("spent_usd".into(), crate::run::usd(spent_usd));
    bs.insert(
        "remaining_usd".into(),
        remaining.map_or(Json::Null, crate::run::usd),
    );
    if let (Some(limit), Some(remaining)) = (limit, remaining)
        && remaining <= 0.0
    {
        exhaust(
            next,
            &mut bs,
            &mut out,
            config,
            (limit, remaining, spent_usd),
            turn_id,
            at,
        );
    }
    next["budget_status"] = Json::Object(bs);
    out
}

/// What spending the limit does to the run after the turn (`next`), its budget status `bs`
/// and what the acceptance says (`out`); `(limit, remaining, spent)` in dollars.
fn exhaust(
    next: &mut Json,
    bs: &mut Map<String, Json>,
    out: &mut Charged,
    config: &Json,
    (limit, remaining, spent_usd): (f64, f64, f64),
    turn_id: &str,
    at: &str,
) {
    let mark = |bs: &mut Map<String, Json>| {
        bs.insert("exhausted".into(), json!(true));
        bs.insert("exhausted_at".into(), json!(at));
        bs.insert("exhausted_after_turn".into(), json!(turn_id));
    };
    if next["status"] == "blocked" || next["status"] == "completed" {
        // Blocked already (the turn asked for a person) or done: spent, nothing more (the
        // reference's next read marks it so).
        bs.insert("exhausted".into(), json!(true));
        return;
    }
    let spent_usd = crate::run::usd(spent_usd).as_f64().unwrap_or(spent_usd);
    let over = remaining.abs();
    if warns(config) {
        if bs.get("exhausted") != Some(&json!(true)) {
            mark(bs);
        }
        bs.insert("warn_mode".into(), json!(true));
        let warning = format!(
            "Budget exhausted: spent ${} of ${} limit (${} over). Run continues in warn mode.",
            usd2(spent_usd),
            usd2(limit),
            usd2(over)
        );
        out.warn_event = Some(json!({
            "spent_usd": bs["spent_usd"], "limit_usd": crate::run::usd(limit),
            "remaining_usd": bs["remaining_usd"], "warning": warning,
        }));
        out.warning = Some(warning);
    } else {
        let detail = detail(spent_usd, Some(limit), false);
        next["status"] = json!("blocked");
        next["blocked_on"] = json!(BLOCKED_ON);
        next["blocked_reason"] = blocked_reason(detail.clone(), RAISE, &json!(turn_id), &json!(at));
        mark(bs);
        out.blocked = Some(detail);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn config(limit: Json, on_exceed: &str) -> Json {
        json!({"budget": {"per_run_max_usd": limit, "on_exceed": on_exceed}})
    }

    #[test]
    fn a_cost_past_the_limit_blocks_the_run_for_a_person() {
        let state = json!({"status": "active", "budget_status": {"spent_usd": 0.5, "remaining_usd": 0.5},
            "budget_reservations": {"t1": {"reserved_usd": 0.5}}});
        let mut next = state.clone();
        let c = charge(
            &mut next,
            &state,
            &config(json!(1), "pause_and_escalate"),
            "t1",
            1.0,
            "T",
        );
        assert_eq!(
            c.blocked.as_deref(),
            Some("Run budget exhausted: spent $1.50 of $1.00 limit ($0.50 over)")
        );
        assert_eq!(
            c.warning.as_deref(),
            Some("Actual cost $1.00 exceeded reservation $0.50 for this turn")
        );
        assert_eq!(next["status"], "blocked");
        assert_eq!(next["blocked_on"], BLOCKED_ON);
        assert_eq!(next["blocked_reason"]["recovery"]["recovery_action"], RAISE);
        assert_eq!(next["blocked_reason"]["turn_id"], "t1");
        assert_eq!(
            next["budget_status"],
            json!({"spent_usd": 1.5, "remaining_usd": -0.5, "exhausted": true,
                "exhausted_at": "T", "exhausted_after_turn": "t1"})
        );
    }

    #[test]
    fn exactly_the_limit_is_exhausted_and_a_cent_under_is_not() {
        let state = json!({"status": "active", "budget_status": {"spent_usd": 0}});
        let cfg = config(json!(1), "pause_and_escalate");
        let mut at = state.clone();
        assert!(
            charge(&mut at, &state, &cfg, "t", 1.0, "T")
                .blocked
                .is_some()
        );
        let mut under = state.clone();
        let c = charge(&mut under, &state, &cfg, "t", 0.99, "T");
        assert_eq!(c, Charged::default());
        assert_eq!(under["status"], "active");
        assert_eq!(
            under["budget_status"],
            json!({"spent_usd": 0.99, "remaining_usd": 0.01})
        );
    }

    #[test]
    fn warn_mode_marks_the_first_exhaustion_and_warns_every_time() {
        let cfg = config(json!(1), "warn");
        let state = json!({"status": "active", "budget_status": {"spent_usd": 0.9}});
        let mut next = state.clone();
        let c = charge(&mut next, &state, &cfg, "t1", 0.2, "T1");
        assert!(c.blocked.is_none());
        assert_eq!(next["status"], "active");
        assert_eq!(
            c.warning.as_deref(),
            Some(
                "Budget exhausted: spent $1.10 of $1.00 limit ($0.10 over). Run continues in warn mode."
            )
        );
        assert_eq!(c.warn_event.as_ref().unwrap()["limit_usd"], 1);
        let mut later = next.clone();
        let c = charge(&mut later, &next, &cfg, "t2", 0.5, "T2");
        assert!(c.warning.is_some());
        assert_eq!(later["budget_status"]["exhausted_after_turn"], "t1");
        assert_eq!(later["budget_status"]["exhausted_at"], "T1");
        assert_eq!(later["budget_status"]["warn_mode"], true);
    }

    #[test]
    fn a_blocked_or_completed_run_or_no_limit_is_not_blocked_again() {
        for status in ["blocked", "completed"] {
            let state = json!({"status": status, "blocked_on": "human:x", "budget_status": {"spent_usd": 0}});
            let mut next = state.clone();
            let c = charge(
                &mut next,
                &state,
                &config(json!(1), "pause_and_escalate"),
                "t",
                5.0,
                "T",
            );
            assert!(c.blocked.is_none());
            assert_eq!(next["blocked_on"], "human:x");
        }
        let state = json!({"status": "active", "budget_status": {"spent_usd": 0}});
        let mut next = state.clone();
        let c = charge(&mut next, &state, &json!({}), "t", 5.0, "T");
        assert!(c.blocked.is_none());
        assert_eq!(
            next["budget_status"],
            json!({"spent_usd": 5, "remaining_usd": null})
        );
    }

    #[test]
    fn a_raised_limit_makes_a_blocked_run_ready_and_a_lowered_one_keeps_it_blocked() {
        let mut state = json!({"status": "active", "budget_status": {"spent_usd": 0}});
        let cfg = config(json!(1), "pause_and_escalate");
        let before = state.clone();
        charge(&mut state, &before, &cfg, "t1", 1.5, "T");
        assert!(still_exhausted(&state, &cfg).is_some());
        let raised = config(json!(3), "pause_and_escalate");
        assert_eq!(still_exhausted(&state, &raised), None);
        assert_eq!(still_exhausted(&state, &config(json!(1), "warn")), None);
        let r = reconcile(state.clone(), &raised, Some("NOW"));
        assert_eq!(
            r["budget_status"],
            json!({"spent_usd": 1.5, "remaining_usd": 1.5})
        );
        assert_eq!(r["blocked_reason"]["recovery"]["recovery_action"], READY);
        assert_eq!(
            r["blocked_reason"]["recovery"]["detail"],
            "Budget recovery ready: spent $1.50 of $3.00 limit ($1.50 remaining)"
        );
        assert_eq!(r["blocked_reason"]["blocked_at"], "T");
        let same = reconcile(state.clone(), &cfg, Some("NOW"));
        assert_eq!(same["blocked_reason"], state["blocked_reason"]);
        assert_eq!(same["budget_status"], state["budget_status"]);
        let none = reconcile(state.clone(), &json!({}), None);
        assert_eq!(
            none["blocked_reason"]["recovery"]["detail"],
            "Budget recovery ready: spent $1.50 with per_run_max_usd disabled"
        );
        assert_eq!(none["budget_status"]["remaining_usd"], Json::Null);
    }

    #[test]
    fn a_spent_run_is_reactivated_only_to_dispatch_a_retained_turn_of_another_block() {
        let cfg = config(json!(1), "pause_and_escalate");
        let spent = json!({"spent_usd": 1.5});
        let turn = json!({"t1": {"turn_id": "t1"}});
        let human = |turns: Json| json!({"status": "blocked", "blocked_on": "human:q", "budget_status": spent, "active_turns": turns});
        assert!(still_exhausted(&human(json!({})), &cfg).is_some());
        assert!(still_exhausted(&human(Json::Null), &cfg).is_some());
        assert_eq!(still_exhausted(&human(turn.clone()), &cfg), None);
        let budget = json!({"status": "blocked", "blocked_on": BLOCKED_ON, "budget_status": spent, "active_turns": turn});
        assert!(still_exhausted(&budget, &cfg).is_some());
        assert_eq!(still_exhausted(&budget, &config(json!(1), "warn")), None);
        assert_eq!(
            still_exhausted(&human(json!({})), &config(json!(2), "pause_and_escalate")),
            None
        );
        assert_eq!(still_exhausted(&human(json!({})), &json!({})), None);
    }

    #[test]
    fn a_limit_spent_to_the_cent_is_not_ready_to_resume() {
        let state = json!({"status": "blocked", "blocked_on": BLOCKED_ON,
            "budget_status": {"spent_usd": 1.5}, "blocked_reason": {"blocked_at": "T"}});
        let r = reconcile(state, &config(json!(1.5), "pause_and_escalate"), None);
        assert_eq!(r["blocked_reason"]["recovery"]["recovery_action"], RAISE);
        assert_eq!(
            r["blocked_reason"]["recovery"]["detail"],
            "Run budget exhausted: spent $1.50 of $1.50 limit ($0.00 over)"
        );
        assert_eq!(r["budget_status"]["exhausted"], true);
    }

    #[test]
    fn a_missing_blocked_at_is_filled_only_when_a_time_is_given() {
        let state = json!({"status": "blocked", "blocked_on": BLOCKED_ON,
            "budget_status": {"spent_usd": 2}, "blocked_reason": null});
        let cfg = config(json!(1), "pause_and_escalate");
        let r = reconcile(state.clone(), &cfg, Some("NOW"));
        assert_eq!(r["blocked_reason"]["blocked_at"], "NOW");
        let r = reconcile(state, &cfg, None);
        assert_eq!(r["blocked_reason"]["blocked_at"], Json::Null);
        let kept = json!({"status": "blocked", "blocked_on": BLOCKED_ON,
            "budget_status": {"spent_usd": 2}, "blocked_reason": {"blocked_at": "T"}});
        assert_eq!(
            reconcile(kept, &cfg, Some("NOW"))["blocked_reason"]["blocked_at"],
            "T"
        );
    }

    #[test]
    fn a_cost_equal_to_its_reservation_is_no_overrun() {
        let state = json!({"status": "active", "budget_status": {"spent_usd": 0},
            "budget_reservations": {"t1": {"reserved_usd": 0.5}}});
        let mut next = state.clone();
        let c = charge(
            &mut next,
            &state,
            &config(json!(10), "pause_and_escalate"),
            "t1",
            0.5,
            "T",
        );
        assert_eq!(c.warning, None);
    }

    #[test]
    fn reconciling_keeps_the_states_key_order() {
        let state = json!({"run_id": "r", "budget_status": {"spent_usd": 1, "remaining_usd": 9},
            "blocked_on": "budget:exhausted", "blocked_reason": null, "phase": "qa"});
        let r = reconcile(state, &config(json!(3), "pause_and_escalate"), Some("T"));
        let keys: Vec<&String> = r.as_object().unwrap().keys().collect();
        assert_eq!(
            keys,
            [
                "run_id",
                "budget_status",
                "blocked_on",
                "blocked_reason",
                "phase"
            ]
        );
        assert_eq!(
            r["budget_status"],
            json!({"spent_usd": 1, "remaining_usd": 2})
        );
    }

    #[test]
    fn an_unblocked_run_is_reconciled_without_a_block() {
        let state = json!({"status": "active", "blocked_on": null,
            "budget_status": {"spent_usd": "x", "exhausted": true, "exhausted_at": "T"}});
        let r = reconcile(state.clone(), &config(json!(2), "pause_and_escalate"), None);
        assert_eq!(
            r["budget_status"],
            json!({"spent_usd": 0, "remaining_usd": 2})
        );
        assert_eq!(r["blocked_on"], Json::Null);
        assert!(r.get("blocked_reason").is_none());
    }
}
