//! `events`: the run's event log, newest `limit` entries that pass the filters, oldest first.

use std::collections::BTreeSet;
use std::path::Path;
use std::time::SystemTime;

use axc_core::jsonl::{self, Tail};
use axc_core::read::EVENTS_FILE;
use fsread::ReadError;
use serde_json::Value as Json;

/// Which events to show.
#[derive(Debug, Clone, Default)]
pub struct Query {
    /// Only these `event_type`s (none: every type).
    pub types: Option<BTreeSet<String>>,
    /// Only events strictly after this instant; an event whose timestamp cannot be read is
    /// then left out (it cannot be placed after anything).
    pub since: Option<SystemTime>,
    /// The newest this many (0: all the log holds, up to [`jsonl::MAX_SCAN`] from its end).
    pub limit: usize,
}

impl Query {
    /// Whether `event` passes the filters.
    pub fn keeps(&self, event: &Json) -> bool {
        if let Some(types) = &self.types
            && !event["event_type"]
                .as_str()
                .is_some_and(|t| types.contains(t))
        {
            return false;
        }
        if let Some(since) = self.since {
            return crate::events::timestamp(&event["timestamp"]).is_some_and(|t| t > since);
        }
        true
    }
}

/// `--type a,b`: the comma-separated names, trimmed, empty ones dropped.
pub fn parse_types(list: &str) -> BTreeSet<String> {
    list.split(',')
        .map(str::trim)
        .filter(|t| !t.is_empty())
        .map(str::to_owned)
        .collect()
}

/// `--since`: an ISO-8601 instant (`2026-01-02T03:04:05Z`, fractions, a `±HH:MM` offset, no
/// zone = UTC) or a date alone (its midnight, UTC).
pub fn parse_since(text: &str) -> Option<SystemTime> {
    let text = text.trim();
    let full = if text.contains('T') || text.contains(' ') {
        text.to_owned()
    } else {
        format!("{text}T00:00:00Z")
    };
    crate::events::timestamp(&Json::String(full))
}

/// The event types the kernel knows, for a warning about a filter that names none of them.
pub fn known_type(t: &str) -> bool {
    crate::events::EVENT_TYPES.contains(&t)
}

/// Reads the log of the project at `root`.
pub fn read(root: &Path, query: &Query) -> Result<Tail, ReadError> {
    let n = if query.limit == 0 {
        usize::MAX
    } else {
        query.limit
    };
    jsonl::read_last_where(root, EVENTS_FILE, n, |e| query.keeps(e))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn log(lines: &[Json]) -> tempfile::TempDir {
        let d = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(d.path().join(".agentxchain")).unwrap();
        let text: String = lines.iter().map(|l| format!("{l}\n")).collect();
        std::fs::write(d.path().join(EVENTS_FILE), text).unwrap();
        d
    }

    fn ev(i: u32, t: &str, ts: &str) -> Json {
        json!({"event_id": format!("e{i}"), "event_type": t, "timestamp": ts})
    }

    fn ids(t: &Tail) -> Vec<&str> {
        t.entries
            .iter()
            .map(|e| e["event_id"].as_str().unwrap())
            .collect()
    }

    #[test]
    fn type_since_and_limit_filter_as_the_reference() {
        let d = log(&[
            ev(1, "run_started", "2026-01-01T00:00:00Z"),
            ev(2, "turn_dispatched", "2026-01-01T00:00:01.500Z"),
            ev(3, "turn_accepted", "2026-01-02T00:00:00Z"),
            ev(4, "turn_dispatched", "not a time"),
            ev(5, "turn_dispatched", "2026-01-03T00:00:00+02:00"),
        ]);
        let q = |types: Option<&str>, since: Option<&str>, limit| Query {
            types: types.map(parse_types),
            since: since.map(|s| parse_since(s).unwrap()),
            limit,
        };
        let all = read(d.path(), &q(None, None, 0)).unwrap();
        assert_eq!(ids(&all), ["e1", "e2", "e3", "e4", "e5"]);
        let t = read(
            d.path(),
            &q(Some(" turn_dispatched , run_started,"), None, 0),
        )
        .unwrap();
        assert_eq!(ids(&t), ["e1", "e2", "e4", "e5"]);
        let t = read(d.path(), &q(Some("turn_dispatched"), None, 2)).unwrap();
        assert_eq!(ids(&t), ["e4", "e5"], "the limit takes the newest");
        // Strictly after; an unreadable timestamp is never after anything.
        let t = read(d.path(), &q(None, Some("2026-01-01T00:00:01.500Z"), 0)).unwrap();
        assert_eq!(ids(&t), ["e3", "e5"]);
        let t = read(d.path(), &q(None, Some("2026-01-02"), 0)).unwrap();
        assert_eq!(
            ids(&t),
            ["e5"],
            "a date is its UTC midnight; +02:00 is moved to UTC"
        );
        let t = read(d.path(), &q(Some("turn_dispatched"), Some("2026-01-01"), 1)).unwrap();
        assert_eq!(ids(&t), ["e5"]);
    }

    #[test]
    fn since_is_an_instant_or_nothing() {
        assert!(parse_since("yesterday").is_none());
        assert!(parse_since("2026-13-01").is_none());
        assert_eq!(
            parse_since("2026-01-01"),
            parse_since("2026-01-01T00:00:00Z")
        );
        assert_eq!(
            parse_since("2026-01-01T02:00:00+02:00"),
            parse_since("2026-01-01T00:00:00Z")
        );
        assert!(known_type("turn_accepted") && !known_type("turn_acepted"));
    }
}
