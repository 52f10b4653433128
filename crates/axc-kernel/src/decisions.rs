//! Decision-ledger entries (`.agentxchain/decision-ledger.jsonl`): what an appended entry must
//! be.

use serde_json::{Value as Json, json};

/// The categories a decision may have.
pub const CATEGORIES: [&str; 6] = [
    "implementation",
    "architecture",
    "scope",
    "process",
    "quality",
    "release",
];

/// Why an entry cannot be appended to `ledger`, as `{error_type, …}`; `None` when it can.
pub fn check_entry(entry: &Json, ledger: &[Json]) -> Option<Json> {
    let id = entry["id"].as_str().unwrap_or("");
    if !crate::js::is_decision_id(id) {
        return Some(json!({"error_type": "invalid_decision_id_format"}));
    }
    if !crate::js::nonblank(&entry["statement"]) {
        return Some(json!({"error_type": "empty_required_field", "error_field": "statement"}));
    }
    if !entry["category"]
        .as_str()
        .is_some_and(|c| CATEGORIES.contains(&c))
    {
        return Some(json!({
            "error_type": "invalid_enum_value",
            "error_field": "category",
            "valid_values": CATEGORIES,
        }));
    }
    if ledger.iter().any(|e| e["id"].as_str() == Some(id)) {
        return Some(json!({"error_type": "duplicate_decision_id", "duplicate_id": id}));
    }
    None
}

/// The ledger's place in a project.
pub const LEDGER: &str = ".agentxchain/decision-ledger.jsonl";

/// The entries of the ledger at `root` (a line that is not JSON is skipped, as readers do).
pub fn read(root: &std::path::Path) -> Vec<Json> {
    let bytes =
        fsread::read_inside(root, std::path::Path::new(LEDGER), 256 << 20).unwrap_or_default();
    String::from_utf8_lossy(&bytes)
        .lines()
        .filter(|l| !l.trim().is_empty())
        .filter_map(|l| serde_json::from_str(l).ok())
        .collect()
}

/// Appends `entry` to the ledger at `root` when [`check_entry`] allows it, as one line written
/// in one call (a crash leaves the ledger as it was or with the whole line): the ledger's
/// length after, or the refusal and the length it kept.
pub fn append(
    root: &std::path::Path,
    entry: &Json,
) -> std::io::Result<Result<usize, (Json, usize)>> {
    use std::io::Write;
    let ledger = read(root);
    if let Some(refusal) = check_entry(entry, &ledger) {
        return Ok(Err((refusal, ledger.len())));
    }
    let path = root.join(LEDGER);
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir)?;
    }
    let existing =
        fsread::read_inside(root, std::path::Path::new(LEDGER), 256 << 20).unwrap_or_default();
    let mut line = String::new();
    if !existing.is_empty() && !existing.ends_with(b"\n") {
        line.push('\n');
    }
    line.push_str(&serde_json::to_string(entry).map_err(std::io::Error::other)?);
    line.push('\n');
    std::os::unix::fs::OpenOptionsExt::custom_flags(
        std::fs::OpenOptions::new().create(true).append(true),
        libc::O_NOFOLLOW | libc::O_NONBLOCK,
    )
    .open(&path)?
    .write_all(line.as_bytes())?;
    Ok(Ok(ledger.len() + 1))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_entry_needs_a_numbered_id_a_statement_a_known_category_and_a_new_id() {
        let ok = json!({"id": "DEC-007", "statement": "s", "category": "scope"});
        assert_eq!(check_entry(&ok, &[]), None);
        for (entry, kind) in [
            (
                json!({"id": "DEC-", "statement": "s", "category": "scope"}),
                "invalid_decision_id_format",
            ),
            (
                json!({"id": "D-1", "statement": "s", "category": "scope"}),
                "invalid_decision_id_format",
            ),
            (
                json!({"id": "DEC-1", "statement": "  ", "category": "scope"}),
                "empty_required_field",
            ),
            (
                json!({"id": "DEC-1", "statement": "s", "category": "other"}),
                "invalid_enum_value",
            ),
        ] {
            assert_eq!(
                check_entry(&entry, &[]).unwrap()["error_type"],
                kind,
                "{entry}"
            );
        }
        assert_eq!(
            check_entry(&ok, std::slice::from_ref(&ok)).unwrap(),
            json!({"error_type": "duplicate_decision_id", "duplicate_id": "DEC-007"})
        );
    }

    #[test]
    fn append_adds_one_whole_line_and_refuses_without_writing() {
        let dir = tempfile::tempdir().unwrap();
        let e = json!({"id": "DEC-1", "statement": "s", "category": "scope"});
        assert_eq!(append(dir.path(), &e).unwrap(), Ok(1));
        let before = std::fs::read(dir.path().join(LEDGER)).unwrap();
        // A new ledger starts with the entry, not a blank line.
        assert_eq!(before, format!("{e}\n").into_bytes());
        let refused = append(dir.path(), &e).unwrap().unwrap_err();
        assert_eq!(
            (refused.0["error_type"].clone(), refused.1),
            (json!("duplicate_decision_id"), 1)
        );
        assert_eq!(std::fs::read(dir.path().join(LEDGER)).unwrap(), before);
        // A ledger whose last line lost its newline gets one before the next entry.
        std::fs::write(dir.path().join(LEDGER), before.strip_suffix(b"\n").unwrap()).unwrap();
        let next = json!({"id": "DEC-2", "statement": "t", "category": "scope"});
        assert_eq!(append(dir.path(), &next).unwrap(), Ok(2));
        assert_eq!(read(dir.path()).len(), 2);
    }

    #[test]
    fn append_follows_no_link_and_waits_on_no_fifo() {
        let dir = tempfile::tempdir().unwrap();
        let ledger = dir.path().join(LEDGER);
        std::fs::create_dir_all(ledger.parent().unwrap()).unwrap();
        let outside = dir.path().join("elsewhere");
        std::fs::write(&outside, "keep\n").unwrap();
        std::os::unix::fs::symlink(&outside, &ledger).unwrap();
        let e = json!({"id": "DEC-1", "statement": "s", "category": "scope"});
        assert!(append(dir.path(), &e).is_err(), "a link is not opened");
        assert_eq!(std::fs::read_to_string(&outside).unwrap(), "keep\n");
        // A FIFO with no reader: the open fails at once (O_NONBLOCK) rather than waiting for
        // a reader that never comes.
        std::fs::remove_file(&ledger).unwrap();
        let made = std::process::Command::new("mkfifo")
            .arg(&ledger)
            .status()
            .unwrap();
        assert!(made.success());
        assert!(append(dir.path(), &e).is_err());
    }
}
