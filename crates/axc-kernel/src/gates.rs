//! Phase-exit and run-completion gates: whether an accepted turn's request to move to the next
//! phase (or to finish the run) passes the current phase's exit gate — its required files and
//! their semantics, the owning roles' participation, verification — and whether a person must
//! approve it first. Pure over (state, config, accepted turn, project root): nothing is written.

use std::path::Path;

use serde_json::Value as Json;

use crate::js::truthy;
use crate::semantics;

/// What a gate evaluation decided.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Action {
    /// The turn asked for nothing.
    NoRequest,
    /// The requested phase is not in the routing.
    UnknownPhase,
    /// Run completion asked outside the final phase.
    NotFinalPhase,
    /// A predicate failed: the turn is accepted, the run stays where it is.
    GateFailed,
    /// Move to `next_phase` now.
    Advance,
    /// The run is complete.
    Complete,
    /// Every predicate passed; a person must approve.
    AwaitingHumanApproval,
}

impl Action {
    pub fn as_str(self) -> &'static str {
        match self {
            Action::NoRequest => "no_request",
            Action::UnknownPhase => "unknown_phase",
            Action::NotFinalPhase => "not_final_phase",
            Action::GateFailed => "gate_failed",
            Action::Advance => "advance",
            Action::Complete => "complete",
            Action::AwaitingHumanApproval => "awaiting_human_approval",
        }
    }
}

/// One gate evaluation.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct GateResult {
    pub gate_id: Option<String>,
    pub passed: bool,
    pub blocked_by_human_approval: bool,
    pub reasons: Vec<String>,
    pub missing_files: Vec<String>,
    pub failing_files: Vec<String>,
    pub missing_verification: bool,
    pub next_phase: Option<String>,
    pub action: Action,
}

impl GateResult {
    fn new(action: Action) -> GateResult {
        GateResult {
            gate_id: None,
            passed: false,
            blocked_by_human_approval: false,
            reasons: Vec::new(),
            missing_files: Vec::new(),
            failing_files: Vec::new(),
            missing_verification: false,
            next_phase: None,
            action,
        }
    }

    fn failing(&mut self, path: &str) {
        if !self.failing_files.iter().any(|f| f == path) {
            self.failing_files.push(path.to_owned());
        }
    }
}

/// The phases in the routing's declaration order.
pub fn phase_order(config: &Json) -> Vec<&str> {
    config["routing"]
        .as_object()
        .map(|r| r.keys().map(String::as_str).collect())
        .unwrap_or_default()
}

/// The phase after `current`, if it is not the last (or unknown).
pub fn next_phase<'a>(config: &'a Json, current: &str) -> Option<&'a str> {
    let phases = phase_order(config);
    let i = phases.iter().position(|p| *p == current)?;
    phases.get(i + 1).copied()
}

/// One artifact a gate checks: required or not, with the semantic checks it carries.
struct Artifact {
    path: String,
    required: bool,
    legacy: bool,
    checks: Vec<(String, Option<Json>)>,
    owned_by: Option<String>,
}

/// The gate's `requires_files` and the phase's workflow-kit artifacts, merged by path.
fn artifacts(config: &Json, gate: &Json, phase: &str) -> Vec<Artifact> {
    let mut out: Vec<Artifact> = Vec::new();
    for p in gate["requires_files"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(Json::as_str)
    {
        if !out.iter().any(|a| a.path == p) {
            out.push(Artifact {
                path: p.to_owned(),
                required: true,
                legacy: true,
                checks: Vec::new(),
                owned_by: None,
            });
        }
    }
    let kit = config["workflow_kit"]["phases"][phase]["artifacts"].as_array();
    for a in kit.into_iter().flatten() {
        let Some(path) = a["path"].as_str().filter(|p| !p.is_empty()) else {
            continue;
        };
        let i = match out.iter().position(|x| x.path == path) {
            Some(i) => i,
            None => {
                out.push(Artifact {
                    path: path.to_owned(),
                    required: false,
                    legacy: false,
                    checks: Vec::new(),
                    owned_by: None,
                });
                out.len() - 1
            }
        };
        let art = &mut out[i];
        art.required = art.required || a["required"] != false;
        if let Some(owner) = a["owned_by"].as_str() {
            art.owned_by = Some(owner.to_owned());
        }
        if let Some(id) = a["semantics"].as_str() {
            let legacy_id = if art.legacy {
                semantics::id_for_path(path)
            } else {
                None
            };
            if Some(id) != legacy_id {
                let cfg = Some(a["semantics_config"].clone()).filter(|c| !c.is_null());
                art.checks.push((id.to_owned(), cfg));
            }
        }
    }
    out
}

/// Whether `role` has an accepted turn in `phase` (the state's `history`).
fn participated(state: &Json, phase: &str, role: &str) -> bool {
    state["history"]
        .as_array()
        .is_some_and(|h| h.iter().any(|t| t["phase"] == phase && t["role"] == role))
}

/// One artifact judged on disk: present (readable inside the project), the reasons its
/// semantics fail, and whether its owning role took part in the phase (`None`: no owner).
struct Judged {
    present: bool,
    /// Each failing semantic check's reason, as the check says it, and whether the check is
    /// the workflow kit's (the gate's reasons then name the file first).
    semantic_failures: Vec<(String, bool)>,
    owner_took_part: Option<bool>,
}

impl Judged {
    /// The semantic reasons as the gate gives them: a workflow-kit check's prefixed with the
    /// file's path unless it names it already.
    fn gate_reasons(&self, path: &str) -> Vec<String> {
        self.semantic_failures
            .iter()
            .map(|(reason, kit)| {
                if *kit && !reason.contains(path) {
                    format!("{path}: {reason}")
                } else {
                    reason.clone()
                }
            })
            .collect()
    }
}

fn judge(root: &Path, state: &Json, phase: &str, a: &Artifact) -> Judged {
    // A path that leaves the project (absolute, `..`) is a file the gate cannot have.
    let inside = !Path::new(&a.path).is_absolute()
        && !Path::new(&a.path)
            .components()
            .any(|c| matches!(c, std::path::Component::ParentDir));
    let content = inside
        .then(|| fsread::read_inside(root, Path::new(&a.path), 16 << 20).ok())
        .flatten()
        .map(|b| String::from_utf8_lossy(&b).into_owned());
    let mut semantic_failures = Vec::new();
    if let Some(content) = &content {
        if a.legacy
            && let Some(id) = semantics::id_for_path(&a.path)
            && let Some(reason) = semantics::check(id, content, None)
        {
            semantic_failures.push((reason, false));
        }
        for (id, cfg) in &a.checks {
            if let Some(reason) = semantics::check(id, content, cfg.as_ref()) {
                semantic_failures.push((reason, true));
            }
        }
    }
    Judged {
        present: content.is_some(),
        semantic_failures,
        owner_took_part: a.owned_by.as_ref().map(|o| participated(state, phase, o)),
    }
}

fn ownership_failure(path: &str, owner: &str, phase: &str) -> String {
    format!(
        "\"{path}\" requires participation from role \"{owner}\" in phase \"{phase}\", but no accepted turn from that role was found"
    )
}

/// The artifact and verification predicates of `gate` in `phase`, into `result`.
fn predicates(
    root: &Path,
    config: &Json,
    state: &Json,
    turn: &Json,
    gate: &Json,
    phase: &str,
    result: &mut GateResult,
) -> Vec<String> {
    let mut failures = Vec::new();
    for a in artifacts(config, gate, phase) {
        let j = judge(root, state, phase, &a);
        if !j.present {
            if a.required {
                if !result.missing_files.contains(&a.path) {
                    result.missing_files.push(a.path.clone());
                }
                result.failing(&a.path);
                failures.push(format!("Required file missing: {}", a.path));
            }
            continue;
        }
        if !j.semantic_failures.is_empty() {
            result.failing(&a.path);
            failures.extend(j.gate_reasons(&a.path));
        }
        if let (Some(owner), Some(false)) = (&a.owned_by, j.owner_took_part) {
            result.failing(&a.path);
            failures.push(ownership_failure(&a.path, owner, phase));
        }
    }
    if gate["requires_verification_pass"] == true {
        let status = turn["verification"]["status"].as_str();
        if !matches!(status, Some("pass" | "attested_pass")) {
            result.missing_verification = true;
            failures.push(format!(
                "Verification status is \"{}\", requires \"pass\" or \"attested_pass\"",
                status.filter(|s| !s.is_empty()).unwrap_or("missing")
            ));
        }
    }
    failures
}

/// The exit gate of `phase`: `None` when the phase has none; `Err(id)` when it names one the
/// config does not define (treated as open, as the reference does).
fn exit_gate<'a>(config: &'a Json, phase: &str) -> Option<Result<(&'a str, &'a Json), &'a str>> {
    let id = config["routing"][phase]["exit_gate"]
        .as_str()
        .filter(|g| !g.is_empty())?;
    Some(match config["gates"].get(id) {
        Some(g) => Ok((id, g)),
        None => Err(id),
    })
}

/// Whether judging `phase`'s exit gate needs the run's accepted turns (`state.history`): an
/// artifact of it must be owned by a role that took part in the phase.
pub fn needs_history(config: &Json, phase: &str) -> bool {
    matches!(exit_gate(config, phase), Some(Ok((_, gate)))
        if artifacts(config, gate, phase).iter().any(|a| a.owned_by.is_some()))
}

/// Whether the accepted `turn`'s `phase_transition_request` may move the run from its phase.
pub fn evaluate_phase_exit(state: &Json, config: &Json, turn: &Json, root: &Path) -> GateResult {
    let current = state["phase"].as_str().unwrap_or("");
    let Some(request) = turn["phase_transition_request"]
        .as_str()
        .filter(|r| !r.is_empty())
    else {
        return GateResult::new(Action::NoRequest);
    };
    if config["routing"].get(request).is_none() {
        let mut r = GateResult::new(Action::UnknownPhase);
        r.reasons = vec![format!(
            "Requested phase \"{request}\" does not exist in routing config"
        )];
        return r;
    }
    let invalid = match next_phase(config, current) {
        None => Some(format!(
            "phase_transition_request \"{request}\" is invalid in final phase \"{current}\"; use run_completion_request instead."
        )),
        Some(next) if next != request => Some(format!(
            "phase_transition_request \"{request}\" is invalid from phase \"{current}\"; next phase is \"{next}\"."
        )),
        Some(_) => None,
    };
    if let Some(reason) = invalid {
        let mut r = GateResult::new(Action::GateFailed);
        r.reasons = vec![reason];
        return r;
    }
    decide(
        state,
        config,
        turn,
        root,
        Action::Advance,
        Some(request),
        |id| {
            format!(
                "Gate \"{id}\" referenced by routing but not defined in gates config — treated as open"
            )
        },
    )
}

/// Whether the accepted `turn`'s `run_completion_request` may complete the run.
pub fn evaluate_run_completion(
    state: &Json,
    config: &Json,
    turn: &Json,
    root: &Path,
) -> GateResult {
    if !truthy(&turn["run_completion_request"]) {
        return GateResult::new(Action::NoRequest);
    }
    let current = state["phase"].as_str().unwrap_or("");
    let phases = phase_order(config);
    if let Some(last) = phases.last()
        && *last != current
    {
        let mut r = GateResult::new(Action::NotFinalPhase);
        r.reasons = vec![format!(
            "Run completion requested but current phase \"{current}\" is not the final phase \"{last}\""
        )];
        return r;
    }
    decide(state, config, turn, root, Action::Complete, None, |id| {
        format!("Gate \"{id}\" referenced but not defined — treated as open")
    })
}

/// The current phase's exit gate decides a request both evaluations make the same way: no gate,
/// or one the config does not define (said by `undefined`), passes as `pass`; a failing
/// predicate is `GateFailed`; a gate that needs a person is `AwaitingHumanApproval`.
/// `next_phase` is where a passing transition goes.
fn decide(
    state: &Json,
    config: &Json,
    turn: &Json,
    root: &Path,
    pass: Action,
    next_phase: Option<&str>,
    undefined: impl Fn(&str) -> String,
) -> GateResult {
    let current = state["phase"].as_str().unwrap_or("");
    let passed = |gate_id: Option<&str>, reasons: Vec<String>| {
        let mut r = GateResult::new(pass);
        r.passed = true;
        r.gate_id = gate_id.map(str::to_owned);
        r.next_phase = next_phase.map(str::to_owned);
        r.reasons = reasons;
        r
    };
    let (gate_id, gate) = match exit_gate(config, current) {
        None => return passed(None, Vec::new()),
        Some(Err(id)) => return passed(Some(id), vec![undefined(id)]),
        Some(Ok(g)) => g,
    };
    let mut r = GateResult::new(Action::GateFailed);
    r.gate_id = Some(gate_id.to_owned());
    let failures = predicates(root, config, state, turn, gate, current, &mut r);
    if !failures.is_empty() {
        r.reasons = failures;
        return r;
    }
    r.passed = true;
    r.next_phase = next_phase.map(str::to_owned);
    if gate["requires_human_approval"] == true {
        r.blocked_by_human_approval = true;
        r.action = Action::AwaitingHumanApproval;
    } else {
        r.action = pass;
    }
    r
}

/// The gate `id` as `gate list` and `gate show` present it (the reference's gate record): the
/// phase whose exit it guards, its effective artifacts (`requires_files` with the phase's
/// workflow-kit artifacts), its predicates, its status and last failure in `state`. With
/// `history` (the run's accepted turns), also `evaluation`: each artifact judged on disk as
/// the gate judges it, and the verification of the phase's latest accepted turn.
pub fn record(
    root: &Path,
    config: &Json,
    state: &Json,
    id: &str,
    history: Option<&[Json]>,
) -> Json {
    use serde_json::json;
    let gate = &config["gates"][id];
    let linked = config["routing"].as_object().and_then(|r| {
        r.iter()
            .find(|(_, route)| route["exit_gate"] == id)
            .map(|(phase, _)| phase.as_str())
    });
    let arts = artifacts(config, gate, linked.unwrap_or(""));
    let view = |a: &Artifact| {
        json!({
            "path": a.path,
            "required": a.required,
            "owned_by": a.owned_by,
            "legacy_semantics": if a.legacy { semantics::id_for_path(&a.path) } else { None },
            "semantic_checks": a.checks.iter().map(|(s, c)| json!({"semantics": s, "semantics_config": c})).collect::<Vec<_>>(),
        })
    };
    let requires_verification = gate["requires_verification_pass"] == true;
    let failure = &state["last_gate_failure"];
    let or_empty = |v: &Json| if truthy(v) { v.clone() } else { json!([]) };
    let status = &state["phase_gate_status"][id];
    let mut record = json!({
        "id": id,
        "linked_phase": linked,
        "requires_files": if gate["requires_files"].is_array() { gate["requires_files"].clone() } else { json!([]) },
        "effective_artifacts": arts.iter().map(view).collect::<Vec<_>>(),
        "requires_verification_pass": requires_verification,
        "requires_human_approval": gate["requires_human_approval"] == true,
        "status": if truthy(status) { status.clone() } else { Json::Null },
        "last_failure": if failure["gate_id"] == id {
            json!({"gate_type": failure["gate_type"], "phase": failure["phase"], "failed_at": failure["failed_at"],
                   "reasons": or_empty(&failure["reasons"]), "missing_files": or_empty(&failure["missing_files"])})
        } else {
            Json::Null
        },
    });
    let Some(history) = history else {
        return record;
    };
    let phase = linked.unwrap_or("");
    let judged_state = json!({"history": history});
    let (mut missing, mut semantic, mut ownership, mut reasons) =
        (Vec::new(), Vec::new(), Vec::new(), Vec::new());
    let evaluated: Vec<Json> = arts
        .iter()
        .map(|a| {
            let j = judge(root, &judged_state, phase, a);
            let mut failures = Vec::new();
            if !j.present && a.required {
                missing.push(a.path.clone());
                failures.push(format!("Required file missing: {}", a.path));
            }
            // As the reference's `gate show` gives them: each check's own words.
            let own: Vec<String> = j.semantic_failures.into_iter().map(|(r, _)| r).collect();
            semantic.extend(own.iter().cloned());
            failures.extend(own);
            let satisfied = match (&a.owned_by, linked) {
                (Some(_), Some(_)) => j.owner_took_part,
                _ => None,
            };
            if let (Some(owner), Some(false)) = (&a.owned_by, satisfied) {
                let f = ownership_failure(&a.path, owner, phase);
                ownership.push(f.clone());
                failures.push(f);
            }
            reasons.extend(failures.iter().cloned());
            let mut v = view(a);
            v["exists"] = json!(j.present);
            v["ownership_satisfied"] = json!(satisfied);
            v["failures"] = json!(failures);
            v
        })
        .collect();
    let latest = linked.and_then(|p| history.iter().rev().find(|e| e["phase"] == p));
    let status = latest
        .map(|e| &e["verification"]["status"])
        .filter(|s| truthy(s))
        .cloned()
        .unwrap_or(Json::Null);
    let passed = matches!(status.as_str(), Some("pass" | "attested_pass"));
    if requires_verification && !passed {
        reasons.push(format!(
            "Verification status is \"{}\", requires \"pass\" or \"attested_pass\"",
            status.as_str().unwrap_or("missing")
        ));
    }
    record["evaluation"] = json!({
        "phase": linked,
        "passed": reasons.is_empty(),
        "reasons": reasons,
        "missing_files": missing,
        "semantic_failures": semantic,
        "ownership_failures": ownership,
        "artifacts": evaluated,
        "verification": {
            "required": requires_verification,
            "source_turn_id": latest.map_or(Json::Null, |e| e["turn_id"].clone()),
            "status": status,
            "passed": if requires_verification { json!(passed) } else { Json::Null },
        },
    });
    record
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn config() -> Json {
        json!({
            "routing": {
                "planning": {"exit_gate": "signoff"},
                "implementation": {"exit_gate": "impl"},
                "qa": {"exit_gate": "ship"}
            },
            "gates": {
                "signoff": {"requires_files": [".planning/PM_SIGNOFF.md"]},
                "impl": {"requires_verification_pass": true},
                "ship": {"requires_human_approval": true}
            }
        })
    }

    #[test]
    fn a_phase_exit_checks_order_files_semantics_and_verification() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        let state = json!({"phase": "planning"});
        let go = json!({"phase_transition_request": "implementation"});
        assert_eq!(
            evaluate_phase_exit(&state, &config(), &json!({}), root).action,
            Action::NoRequest
        );
        let r = evaluate_phase_exit(&state, &config(), &go, root);
        assert_eq!(
            (r.action, r.missing_files.clone()),
            (
                Action::GateFailed,
                vec![".planning/PM_SIGNOFF.md".to_owned()]
            )
        );
        std::fs::create_dir_all(root.join(".planning")).unwrap();
        std::fs::write(root.join(".planning/PM_SIGNOFF.md"), "Approved: NO\n").unwrap();
        let r = evaluate_phase_exit(&state, &config(), &go, root);
        assert!(
            r.reasons[0].starts_with("PM signoff is not approved"),
            "{r:?}"
        );
        std::fs::write(root.join(".planning/PM_SIGNOFF.md"), "Approved: YES\n").unwrap();
        let r = evaluate_phase_exit(&state, &config(), &go, root);
        assert_eq!(
            (r.action, r.next_phase.as_deref()),
            (Action::Advance, Some("implementation"))
        );
        let skip = json!({"phase_transition_request": "qa"});
        assert_eq!(
            evaluate_phase_exit(&state, &config(), &skip, root).reasons,
            [
                "phase_transition_request \"qa\" is invalid from phase \"planning\"; next phase is \"implementation\"."
            ]
        );
        let impl_state = json!({"phase": "implementation"});
        let r = evaluate_phase_exit(&impl_state, &config(), &skip, root);
        assert!(r.missing_verification);
        let pass =
            json!({"phase_transition_request": "qa", "verification": {"status": "attested_pass"}});
        assert_eq!(
            evaluate_phase_exit(&impl_state, &config(), &pass, root).action,
            Action::Advance
        );
        let outside = json!({"routing": {"a": {"exit_gate": "g"}, "b": {}}, "gates": {"g": {"requires_files": ["../secret", "/etc/passwd"]}}});
        let r = evaluate_phase_exit(
            &json!({"phase": "a"}),
            &outside,
            &json!({"phase_transition_request": "b"}),
            root,
        );
        assert_eq!(
            r.missing_files,
            ["../secret", "/etc/passwd"],
            "a gate never reads outside the project"
        );
    }

    #[test]
    fn run_completion_needs_the_final_phase_and_may_need_a_person() {
        let dir = tempfile::tempdir().unwrap();
        let done = json!({"run_completion_request": true});
        let r = evaluate_run_completion(
            &json!({"phase": "implementation"}),
            &config(),
            &done,
            dir.path(),
        );
        assert_eq!(r.action, Action::NotFinalPhase);
        let r = evaluate_run_completion(&json!({"phase": "qa"}), &config(), &done, dir.path());
        assert_eq!(
            (r.action, r.gate_id.as_deref()),
            (Action::AwaitingHumanApproval, Some("ship"))
        );
        assert_eq!(
            evaluate_run_completion(&json!({"phase": "qa"}), &config(), &json!({}), dir.path())
                .action,
            Action::NoRequest
        );
    }
}
