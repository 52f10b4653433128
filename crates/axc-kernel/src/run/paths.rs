//! Which repository paths belong to the orchestrator and which to the agents: the
//! orchestrator's own files are never an agent's change, and evidence paths may stay dirty
//! between turns without blocking the next code-writing turn.

/// Written by the orchestrator during dispatch and acceptance.
pub const OPERATIONAL_PREFIXES: [&str; 10] = [
    ".agentxchain/dispatch/",
    ".agentxchain/dispatch-progress",
    ".agentxchain/staging/",
    ".agentxchain/intake/",
    ".agentxchain/locks/",
    ".agentxchain/transactions/",
    ".agentxchain/missions/",
    ".agentxchain/multirepo/",
    ".agentxchain/plugins/",
    ".agentxchain/prompts/",
];

/// The orchestrator's state files.
pub const STATE_FILES: [&str; 20] = [
    ".agentxchain/state.json",
    ".agentxchain/session.json",
    ".agentxchain/history.jsonl",
    ".agentxchain/decision-ledger.jsonl",
    ".agentxchain/repo-decisions.jsonl",
    ".agentxchain/lock.json",
    ".agentxchain/hook-audit.jsonl",
    ".agentxchain/hook-annotations.jsonl",
    ".agentxchain/run-history.jsonl",
    ".agentxchain/events.jsonl",
    ".agentxchain/notification-audit.jsonl",
    ".agentxchain/schedule-state.json",
    ".agentxchain/schedule-daemon.json",
    ".agentxchain/continuous-session.json",
    ".agentxchain/human-escalations.jsonl",
    ".agentxchain/sla-reminders.json",
    ".agentxchain/SESSION_RECOVERY.md",
    ".agentxchain/migration-report.md",
    "TALK.md",
    "HUMAN_TASKS.md",
];

/// Evidence that may stay dirty across turns.
const EXEMPT_PREFIXES: [&str; 4] = [
    ".agentxchain/reviews/",
    ".agentxchain/reports/",
    ".agentxchain/proposed/",
    ".planning/dogfood-100-turn-evidence/",
];

/// Kept across a run's export and restore (the baseline check passes them too).
const CONTINUITY_ROOTS: [&str; 6] = [
    ".agentxchain/dispatch",
    ".agentxchain/staging",
    ".agentxchain/transactions/accept",
    ".agentxchain/intake",
    ".agentxchain/missions",
    ".agentxchain/multirepo",
];

fn generated_report(p: &str) -> bool {
    let Some(name) = p.strip_prefix(".agentxchain/reports/") else {
        return false;
    };
    !name.contains('/')
        && [
            ("report-", ".md"),
            ("export-", ".json"),
            ("chain-", ".json"),
        ]
        .iter()
        .any(|(pre, suf)| {
            name.len() > pre.len() + suf.len() && name.starts_with(pre) && name.ends_with(suf)
        })
}

/// The orchestrator writes it: never attributed to an agent.
pub fn is_operational(p: &str) -> bool {
    OPERATIONAL_PREFIXES.iter().any(|x| p.starts_with(x))
        || STATE_FILES.contains(&p)
        || generated_report(p)
}

/// It may be dirty when a code-writing turn is assigned.
pub fn is_baseline_exempt(p: &str) -> bool {
    is_operational(p)
        || STATE_FILES.contains(&p)
        || CONTINUITY_ROOTS
            .iter()
            .any(|r| p == *r || p.strip_prefix(r).is_some_and(|rest| rest.starts_with('/')))
        || EXEMPT_PREFIXES.iter().any(|x| p.starts_with(x))
}

/// DOGFOOD evidence (operator proof, not turn work).
pub fn is_dogfood_evidence(p: &str) -> bool {
    p.starts_with(".planning/dogfood-100-turn-evidence/")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_orchestrators_files_are_operational_and_the_agents_are_not() {
        for p in [
            ".agentxchain/state.json",
            ".agentxchain/staging/t/turn-result.json",
            ".agentxchain/locks/accept-turn.lock",
            "TALK.md",
            ".agentxchain/reports/report-1.md",
        ] {
            assert!(is_operational(p), "{p}");
            assert!(is_baseline_exempt(p), "{p}");
        }
        for p in [
            ".planning/PM_SIGNOFF.md",
            "hello.sh",
            ".agentxchain/reports/x/report-1.md",
        ] {
            assert!(!is_operational(p), "{p}");
        }
        assert!(is_baseline_exempt(".agentxchain/reviews/r.md"));
        assert!(!is_operational(".agentxchain/reviews/r.md"));
        assert!(!is_baseline_exempt(".planning/ROADMAP.md"));
        assert!(!is_baseline_exempt(".agentxchain/dispatcher"));
    }
}
