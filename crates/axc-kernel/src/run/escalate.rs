//! Escalations: `escalate` blocks an active run on an operator's reason and raises a human
//! escalation (`human-escalations.jsonl`, `HUMAN_TASKS.md`); `unblock <id>` resolves the
//! current one and resumes the run. The classification (type, service, action) is the
//! reference's, so both tools describe one escalation the same way.

use std::sync::LazyLock;

use regex::Regex;
use serde_json::{Value as Json, json};

use super::config as cfg;
use super::store::{ESCALATIONS, HUMAN_TASKS, LEDGER, STATE, Store};
use super::{Refusal, new_id, now, session};

const OPEN_START: &str = "<!-- AGENTXCHAIN:HUMAN_ESCALATIONS:OPEN:START -->";
const OPEN_END: &str = "<!-- AGENTXCHAIN:HUMAN_ESCALATIONS:OPEN:END -->";
const DONE_START: &str = "<!-- AGENTXCHAIN:HUMAN_ESCALATIONS:COMPLETED:START -->";
const DONE_END: &str = "<!-- AGENTXCHAIN:HUMAN_ESCALATIONS:COMPLETED:END -->";

static SERVICES: LazyLock<Vec<(&'static str, Regex)>> = LazyLock::new(|| {
    [
        ("Anthropic", r"(?i)\banthropic\b|\bclaude\b"),
        ("OpenAI", r"(?i)\bopenai\b|\bgpt\b"),
        ("GitHub", r"(?i)\bgithub\b|\bgh\b"),
        ("Google", r"(?i)\bgoogle\b|\bgcp\b|\bgmail\b|\bdrive\b"),
        ("Linear", r"(?i)\blinear\b"),
        ("Slack", r"(?i)\bslack\b"),
        ("LinkedIn", r"(?i)\blinkedin\b"),
        ("X/Twitter", r"(?i)\btwitter\b|\bx-browser\b|\bx/twitter\b"),
        ("Reddit", r"(?i)\breddit\b|\br-browser\b"),
        ("npm", r"(?i)\bnpm\b"),
        ("Homebrew", r"(?i)\bhomebrew\b|\btap\b"),
        (
            "VS Code Marketplace",
            r"(?i)\bvs code marketplace\b|\bvsce\b",
        ),
    ]
    .into_iter()
    .map(|(s, p)| (s, Regex::new(p).expect("a valid pattern")))
    .collect()
});

static KINDS: LazyLock<Vec<(&'static str, Regex)>> = LazyLock::new(|| {
    [
        ("needs_oauth", r"\boauth\b|\blogin\b|\blog in\b|\bsign in\b|\bre-?auth\b|\bsession expired\b"),
        ("needs_credential", r"\bapi key\b|\bcredential\b|\bsecret\b|\btoken\b|\bpat\b|\bauth_env\b|\baccess key\b"),
        ("needs_payment", r"\bbilling\b|\bpayment\b|\bcard\b|\binvoice\b|\bsubscription\b"),
        ("needs_legal", r"\blegal\b|\blicense\b|\bnda\b|\bdpa\b|\bcontract\b|\bterms\b"),
        ("needs_physical_access", r"\bphysical\b|\bdevice\b|\bhardware\b|\bon-site\b|\bon site\b|\busb\b|\bphone\b|\bcamera\b"),
    ]
    .into_iter()
    .map(|(s, p)| (s, Regex::new(p).expect("a valid pattern")))
    .collect()
});

/// `(type, service)` of an escalation's text.
pub fn classify(text: &str) -> (&'static str, Option<&'static str>) {
    let service = SERVICES
        .iter()
        .find(|(_, r)| r.is_match(text))
        .map(|(s, _)| *s);
    let lower = text.to_lowercase();
    let kind = KINDS
        .iter()
        .find(|(_, r)| r.is_match(&lower))
        .map_or("needs_decision", |(k, _)| *k);
    (kind, service)
}

/// What a person is asked to do for an escalation of `kind`.
pub fn action(kind: &str, service: Option<&str>) -> String {
    match (kind, service) {
        ("needs_oauth", Some(s)) => format!("Reconnect {s} OAuth and verify the session."),
        ("needs_oauth", None) => "Reconnect the required OAuth session and verify access.".into(),
        ("needs_credential", Some(s)) => {
            format!("Restore the required {s} credential and verify access.")
        }
        ("needs_credential", None) => {
            "Restore the required credential or secret and verify access.".into()
        }
        ("needs_payment", Some(s)) => {
            format!("Complete the required {s} billing or payment action.")
        }
        ("needs_payment", None) => "Complete the required billing or payment action.".into(),
        ("needs_legal", _) => "Complete the required legal review or approval.".into(),
        ("needs_physical_access", _) => {
            "Complete the required physical-access or device action.".into()
        }
        _ => "Review the blocker, make the required decision, and confirm the run can continue."
            .into(),
    }
}

/// The escalation records (the log folded as every reader folds it, `axc_core::escalations`),
/// newest first, each with `status` (`open` | `resolved`) and its resolution fields.
pub fn records(store: &Store) -> Vec<Json> {
    let lines = store.read_jsonl(ESCALATIONS);
    axc_core::escalations::fold(&lines)
        .into_iter()
        .map(|e| {
            let mut r = Json::Object(e.record);
            let res = e.resolution.unwrap_or_default();
            r["status"] = json!(if e.open { "open" } else { "resolved" });
            for k in ["resolved_at", "resolved_via", "resolution_notes"] {
                r[k] = res.get(k).cloned().unwrap_or(Json::Null);
            }
            r
        })
        .collect()
}

/// The open escalation that is the current blocker of `state` (the one rule, in
/// `axc_core::escalations::current_blocker`).
pub fn current(store: &Store, state: &Json) -> Option<Json> {
    let lines = store.read_jsonl(ESCALATIONS);
    let folded = axc_core::escalations::fold(&lines);
    let run = axc_core::state::RunState::from_value(state.clone());
    axc_core::escalations::current_blocker(&folded, &run).map(|e| Json::Object(e.record.clone()))
}

/// A value as one line of HUMAN_TASKS.md: line breaks folded and comment markers broken, so
/// no value (an escalation reason is free text) can end the managed section or forge another.
fn one_line(s: &str) -> String {
    s.split(['\r', '\n'])
        .filter(|l| !l.trim().is_empty())
        .collect::<Vec<_>>()
        .join(" ")
        .replace("<!--", "<\\!--")
        .replace("-->", "--\\>")
}

fn field(label: &str, v: &Json) -> Option<String> {
    v.as_str()
        .filter(|s| !s.is_empty())
        .map(|s| format!("- {label}: {}", one_line(s)))
}

fn render_open(open: &[&Json]) -> String {
    if open.is_empty() {
        return "## Open\n\n_No open human escalations._".into();
    }
    let mut l = vec![
        "## Open".to_owned(),
        String::new(),
        "Live operator-required blockers generated by governed runs. The parseable source of truth is `.agentxchain/human-escalations.jsonl`.".to_owned(),
    ];
    for r in open {
        l.push(String::new());
        l.push(format!(
            "### {} — {}",
            one_line(r["escalation_id"].as_str().unwrap_or("")),
            one_line(r["type"].as_str().unwrap_or(""))
        ));
        let tick = |v: &Json| {
            v.as_str()
                .map(|s| json!(format!("`{s}`")))
                .unwrap_or(Json::Null)
        };
        l.extend(
            [
                field("Created", &r["created_at"]),
                field("Run", &r["run_id"]),
                field("Phase", &r["phase"]),
                field("Blocked on", &r["blocked_on"]),
                field("Typed reason", &r["typed_reason"]),
                field("Service", &r["service"]),
                field("Action", &r["action"]),
                field("Continue", &tick(&r["resolution_command"])),
                field("Underlying recovery", &tick(&r["recovery_action"])),
                field("Detail", &r["detail"]),
            ]
            .into_iter()
            .flatten(),
        );
    }
    l.join("\n")
}

fn render_done(done: &[&Json]) -> String {
    if done.is_empty() {
        return "## Completed\n\n_No resolved human escalations yet._".into();
    }
    let mut l = vec!["## Completed".to_owned()];
    for r in done.iter().take(10) {
        l.push(String::new());
        l.push(format!(
            "### {} — resolved",
            one_line(r["escalation_id"].as_str().unwrap_or(""))
        ));
        l.extend(
            [
                field("Created", &r["created_at"]),
                field("Resolved", &r["resolved_at"]),
                field("Resolved via", &r["resolved_via"]),
                field("Type", &r["type"]),
                field("Service", &r["service"]),
                field("Blocked on", &r["blocked_on"]),
                field("Detail", &r["detail"]),
                field("Notes", &r["resolution_notes"]),
            ]
            .into_iter()
            .flatten(),
        );
    }
    l.join("\n")
}

fn replace_section(content: &str, start: &str, end: &str, body: &str) -> String {
    match (content.find(start), content.find(end)) {
        (Some(s), Some(e)) if s < e => {
            format!("{}{start}\n{body}\n{}", &content[..s], &content[e..])
        }
        _ => {
            let sep = if content.ends_with('\n') { "" } else { "\n" };
            format!("{content}{sep}{start}\n{body}\n{end}\n")
        }
    }
}

fn rewrite_tasks(store: &Store) -> Result<(), Refusal> {
    let all = records(store);
    let open: Vec<&Json> = all.iter().filter(|r| r["status"] == "open").collect();
    let done: Vec<&Json> = all.iter().filter(|r| r["status"] == "resolved").collect();
    let existing = store.read_text(HUMAN_TASKS, 16 << 20)?.unwrap_or_else(|| {
        "# Human Tasks\n\nOperator-required blockers surfaced by AgentXchain.\n".into()
    });
    let mut next = replace_section(&existing, OPEN_START, OPEN_END, &render_open(&open));
    next = replace_section(&next, DONE_START, DONE_END, &render_done(&done));
    if !next.ends_with('\n') {
        next.push('\n');
    }
    store.write_text(HUMAN_TASKS, &next)
}

/// Resolves the current blocker's escalation (when there is one), as `via`.
pub fn resolve_current(store: &Store, state: &Json, via: &str) -> Result<Option<Json>, Refusal> {
    let Some(rec) = current(store, state) else {
        return Ok(None);
    };
    let id = rec["escalation_id"].clone();
    store.append_jsonl(
        ESCALATIONS,
        &json!({"kind": "resolved", "escalation_id": id, "resolved_at": now(), "resolved_via": via, "resolution_notes": null}),
    )?;
    rewrite_tasks(store)?;
    let event_state = json!({"run_id": rec["run_id"], "phase": rec["phase"], "status": "active"});
    store.emit(
        "human_escalation_resolved",
        &event_state,
        Json::Null,
        json!({"escalation_id": id, "type": rec["type"], "service": rec["service"], "resolved_via": via}),
    )?;
    Ok(Some(rec))
}

fn slug(reason: &str) -> String {
    let s = super::scaffold::slugify(reason.trim());
    if s.is_empty() { "operator".into() } else { s }
}

/// [`raise`], unless the run already has its open escalation (one per block: a block that
/// has its record keeps it). The record raised, if one was.
pub fn raise_unless_open(
    store: &Store,
    state: &Json,
    turn_id: Option<&str>,
    role: Option<&str>,
) -> Result<Option<Json>, Refusal> {
    if current(store, state).is_some() {
        return Ok(None);
    }
    raise(store, state, turn_id, role).map(Some)
}

/// Raises the human escalation for the blocked `state` (its `blocked_on` and
/// `blocked_reason`): the record in `human-escalations.jsonl`, `HUMAN_TASKS.md` and the
/// `human_escalation_raised` event. The record.
pub fn raise(
    store: &Store,
    state: &Json,
    turn_id: Option<&str>,
    role: Option<&str>,
) -> Result<Json, Refusal> {
    let recovery = &state["blocked_reason"]["recovery"];
    let blocked_on = state["blocked_on"].as_str().unwrap_or("");
    let category = state["blocked_reason"]["category"]
        .as_str()
        .unwrap_or("unknown_block");
    let typed = recovery["typed_reason"].as_str().unwrap_or("unknown_block");
    let detail = recovery["detail"]
        .as_str()
        .map(str::trim)
        .filter(|d| !d.is_empty())
        .unwrap_or(if blocked_on.is_empty() {
            "Operator intervention required."
        } else {
            blocked_on
        })
        .to_owned();
    let text = [blocked_on, typed, detail.as_str(), category]
        .into_iter()
        .filter(|t| !t.is_empty())
        .collect::<Vec<_>>()
        .join(" ");
    let (kind, service) = classify(&text);
    let id = new_id("hesc");
    let record = json!({
        "kind": "raised",
        "escalation_id": id,
        "created_at": state["blocked_reason"]["blocked_at"].as_str().map(str::to_owned).unwrap_or_else(now),
        "run_id": state["run_id"],
        "phase": state["phase"],
        "blocked_on": blocked_on,
        "category": category,
        "typed_reason": typed,
        "type": kind,
        "service": service,
        "action": action(kind, service),
        "recovery_action": recovery["recovery_action"],
        "resolution_command": format!("agentxchain unblock {id}"),
        "detail": detail,
        "turn_id": turn_id,
        "role_id": role,
    });
    store.append_jsonl(ESCALATIONS, &record)?;
    rewrite_tasks(store)?;
    store.emit(
        "human_escalation_raised",
        state,
        Json::Null,
        json!({
            "escalation_id": id,
            "type": kind,
            "service": service,
            "action": record["action"],
            "blocked_on": blocked_on,
            "resolution_command": record["resolution_command"],
            "detail": detail,
        }),
    )?;
    Ok(record)
}

/// What `escalate` did.
#[derive(Clone, Debug)]
pub struct Escalated {
    pub state: Json,
    pub escalation: Json,
    pub record: Json,
}

/// `escalate --reason … [--detail …] [--action …] [--turn …]`.
pub fn escalate(
    store: &Store,
    reason: &str,
    detail: Option<&str>,
    action_override: Option<&str>,
    turn_id: Option<&str>,
) -> Result<Escalated, Refusal> {
    let config = cfg::load(store)?;
    let _lock = store.lock()?;
    let state = store.state()?;
    let reason = reason.trim();
    if reason.is_empty() {
        return Err(Refusal::new("Escalation reason is required."));
    }
    let status = state["status"].as_str().unwrap_or("");
    if status != "active" {
        return Err(Refusal::new(format!(
            "Cannot escalate run: status is \"{status}\", expected \"active\""
        )));
    }
    let turns: Vec<&Json> = state["active_turns"]
        .as_object()
        .map(|m| m.values().collect())
        .unwrap_or_default();
    let target = match turn_id {
        Some(t) => Some(
            state["active_turns"]
                .get(t)
                .ok_or_else(|| Refusal::new(format!("No active turn found for --turn {t}")))?,
        ),
        None if turns.len() > 1 => {
            return Err(Refusal::new(
                "Multiple active turns exist. Use --turn <id> to target the escalation.",
            ));
        }
        None => turns.first().copied(),
    };
    let retained = target.is_some();
    let recovery_action = match action_override.map(str::trim).filter(|a| !a.is_empty()) {
        Some(a) => a.to_owned(),
        None => {
            let command = match target {
                Some(t)
                    if cfg::runtime_type(&config, t["runtime_id"].as_str().unwrap_or(""))
                        != "manual" =>
                {
                    "agentxchain step --resume"
                }
                _ => "agentxchain resume",
            };
            format!("Resolve the escalation, then run {command}")
        }
    };
    let detail = detail
        .map(str::trim)
        .filter(|d| !d.is_empty())
        .unwrap_or(reason)
        .to_owned();
    let blocked_on = format!("escalation:operator:{}", slug(reason));
    let at = now();
    let turn_id = target.map(|t| t["turn_id"].clone()).unwrap_or(Json::Null);
    let role = target
        .map(|t| t["assigned_role"].clone())
        .unwrap_or(Json::Null);
    let escalation = json!({
        "source": "operator",
        "raised_by": "human",
        "from_role": role,
        "from_turn_id": turn_id,
        "reason": reason,
        "detail": detail,
        "recovery_action": recovery_action,
        "escalated_at": at,
    });
    let blocked_at = now();
    let mut next = state.clone();
    next["status"] = json!("blocked");
    next["blocked_on"] = json!(blocked_on);
    next["blocked_reason"] = json!({
        "category": "operator_escalation",
        "recovery": {
            "typed_reason": "operator_escalation",
            "owner": "human",
            "recovery_action": recovery_action,
            "turn_retained": retained,
            "detail": detail,
        },
        "blocked_at": blocked_at,
        "turn_id": turn_id,
    });
    next["escalation"] = escalation.clone();
    store.write_json(STATE, &next)?;
    let _ = session::checkpoint(
        store,
        &next,
        "blocked",
        session::Extra {
            role: role.as_str(),
            ..Default::default()
        },
    );
    // The human escalation a person resolves with `unblock`.
    let record = raise(store, &next, turn_id.as_str(), role.as_str())?;
    let only = next["active_turns"]
        .as_object()
        .filter(|m| m.len() == 1)
        .and_then(|m| m.values().next());
    super::hooked::on_escalation(
        store,
        &config,
        &json!({"blocked_reason": "operator_escalation", "recovery_action": recovery_action,
            "failed_turn_id": turn_id, "failed_role": only.map(|t| &t["assigned_role"]),
            "attempt_count": only.and_then(|t| t["attempt"].as_u64()).unwrap_or(0),
            "last_error": detail, "run_id": next["run_id"]}),
    );
    store.append_jsonl(
        LEDGER,
        &json!({
            "timestamp": at,
            "decision": "operator_escalated",
            "run_id": next["run_id"],
            "phase": next["phase"],
            "blocked_on": blocked_on,
            "escalation": escalation,
        }),
    )?;
    store.emit(
        "escalation_raised",
        &next,
        Json::Null,
        json!({"source": "operator", "reason": reason}),
    )?;
    Ok(Escalated {
        state: next,
        escalation,
        record,
    })
}

/// Checks `unblock <id>` may go on: the run is blocked and `id` is its current open
/// escalation. The record, for the command's banner; resuming is [`super::assign::resume`].
pub fn check_unblock(store: &Store, id: &str) -> Result<Json, Refusal> {
    cfg::load(store)?;
    if id.trim().is_empty() {
        return Err(Refusal::new(
            "An escalation id is required. Example: agentxchain unblock hesc_1234",
        ));
    }
    let state = store.state()?;
    let status = state["status"].as_str().unwrap_or("");
    if status != "blocked" {
        return Err(Refusal::new(format!(
            "Cannot unblock run: status is \"{status}\", expected \"blocked\"."
        )));
    }
    let all = records(store);
    let Some(requested) = all
        .iter()
        .find(|r| r["escalation_id"] == id && r["status"] == "open")
    else {
        return Err(Refusal::new(format!(
            "No open human escalation found for {id}."
        )));
    };
    let Some(cur) = current(store, &state) else {
        return Err(Refusal::new(
            "The current blocked run does not have a linked human escalation record.",
        ));
    };
    if cur["escalation_id"] != requested["escalation_id"] {
        return Err(Refusal::new(format!(
            "Escalation {id} is not the current blocker for this run.\nCurrent blocker: {}",
            cur["escalation_id"].as_str().unwrap_or("")
        )));
    }
    Ok(requested.clone())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn classification_is_the_references() {
        let text = "escalation:operator:need-anthropic-api-key-rotated operator_escalation The PM needs a rotated key before continuing. operator_escalation";
        assert_eq!(classify(text), ("needs_decision", Some("Anthropic")));
        assert_eq!(
            classify("the GitHub token expired"),
            ("needs_credential", Some("GitHub"))
        );
        assert_eq!(classify("please LOGIN again"), ("needs_oauth", None));
        assert_eq!(
            action("needs_credential", Some("npm")),
            "Restore the required npm credential and verify access."
        );
    }

    #[test]
    fn a_value_cannot_end_the_managed_section() {
        let v = json!(format!("x\n{OPEN_END}\n### hesc_forged — needs_credential"));
        let line = field("Detail", &v).unwrap();
        assert!(
            !line.contains('\n') && !line.contains("<!--") && !line.contains("-->"),
            "{line}"
        );
    }

    #[test]
    fn a_managed_section_is_replaced_and_the_rest_kept() {
        let t = replace_section("# T\nmine\n", OPEN_START, OPEN_END, "A");
        assert_eq!(t, format!("# T\nmine\n{OPEN_START}\nA\n{OPEN_END}\n"));
        let t2 = replace_section(&(t.clone() + "after\n"), OPEN_START, OPEN_END, "B");
        assert_eq!(
            t2,
            format!("# T\nmine\n{OPEN_START}\nB\n{OPEN_END}\nafter\n")
        );
    }
}
