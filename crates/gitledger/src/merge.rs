//! Joining two sides of the ledger that both moved: a union of lines per JSONL file.
//!
//! The ledger's `.jsonl` files are append-only logs, so the two sides of a split share a
//! prefix of lines and each added lines after it. Their union keeps every line of both (a line
//! both added, byte for byte, once) and interleaves the two additions by each line's time, the
//! order the readers' rules (latest pending fact, resolutions after it) expect. This is the one
//! thing this crate knows about what it stores: lines carry their time in a `timestamp` (gate
//! facts) or `started` (run records) member. A file that is not JSONL and differs on both
//! sides is taken from the remote's side (the state others already see); the local one stays
//! reachable as the merge commit's first parent.

/// The time a line carries, to order it among the other side's lines: the string value of its
/// top-level `timestamp` member, else `started`. `None` for anything else.
fn time_of(line: &[u8]) -> Option<String> {
    let text = std::str::from_utf8(line).ok()?;
    let v: serde_json::Value = serde_json::from_str(text).ok()?;
    let o = v.as_object()?;
    o.get("timestamp")
        .or_else(|| o.get("started"))
        .and_then(serde_json::Value::as_str)
        .map(str::to_owned)
}

fn split(bytes: &[u8]) -> Vec<&[u8]> {
    let bytes = bytes.strip_suffix(b"\n").unwrap_or(bytes);
    if bytes.is_empty() {
        return Vec::new();
    }
    bytes.split(|b| *b == b'\n').collect()
}

/// The union of two versions of one JSONL file, written as this crate writes JSONL (lines
/// joined by `\n`, no trailing newline).
pub fn union_lines(ours: &[u8], theirs: &[u8]) -> Vec<u8> {
    let (a, b) = (split(ours), split(theirs));
    let common = a.iter().zip(&b).take_while(|(x, y)| x == y).count();
    let (a_tail, b_tail) = (&a[common..], &b[common..]);
    // A line both sides added (the same fact copied to both) is kept once: each line of
    // ours cancels one equal line of theirs.
    let mut spare: std::collections::HashMap<&[u8], usize> = std::collections::HashMap::new();
    for l in a_tail {
        *spare.entry(l).or_default() += 1;
    }
    let b_new: Vec<&[u8]> = b_tail
        .iter()
        .filter(|l| match spare.get_mut(**l) {
            Some(n) if *n > 0 => {
                *n -= 1;
                false
            }
            _ => true,
        })
        .copied()
        .collect();
    let mut merged: Vec<&[u8]> = a[..common].to_vec();
    let (mut i, mut j) = (0, 0);
    let (ta, tb): (Vec<_>, Vec<_>) = (
        a_tail.iter().map(|l| time_of(l)).collect(),
        b_new.iter().map(|l| time_of(l)).collect(),
    );
    while i < a_tail.len() && j < b_new.len() {
        // A line without a time keeps its place on its own side; otherwise the earlier goes
        // first, ours on a tie.
        let take_ours = match (&ta[i], &tb[j]) {
            (None, _) => true,
            (_, None) => false,
            (Some(x), Some(y)) => x <= y,
        };
        if take_ours {
            merged.push(a_tail[i]);
            i += 1;
        } else {
            merged.push(b_new[j]);
            j += 1;
        }
    }
    merged.extend_from_slice(&a_tail[i..]);
    merged.extend_from_slice(&b_new[j..]);
    merged.join(&b'\n')
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fact(ts: &str, what: &str) -> String {
        format!(r#"{{"timestamp":"{ts}","what":"{what}"}}"#)
    }

    #[test]
    fn both_sides_keep_every_line_in_time_order() {
        let base = fact("2026-01-01T00:00:00.000Z", "pending");
        let ours = [base.clone(), fact("2026-01-03T00:00:00.000Z", "run")].join("\n");
        let theirs = [base.clone(), fact("2026-01-02T00:00:00.000Z", "approved")].join("\n");
        let merged = String::from_utf8(union_lines(ours.as_bytes(), theirs.as_bytes())).unwrap();
        assert_eq!(
            merged.lines().collect::<Vec<_>>(),
            [
                base.as_str(),
                &fact("2026-01-02T00:00:00.000Z", "approved"),
                &fact("2026-01-03T00:00:00.000Z", "run"),
            ]
        );
        // Commutative in content, and idempotent.
        let other = String::from_utf8(union_lines(theirs.as_bytes(), ours.as_bytes())).unwrap();
        assert_eq!(merged, other);
        assert_eq!(
            union_lines(merged.as_bytes(), merged.as_bytes()),
            merged.as_bytes()
        );
        assert_eq!(
            union_lines(merged.as_bytes(), ours.as_bytes()),
            merged.as_bytes()
        );
    }

    #[test]
    fn unrelated_sides_and_odd_lines_lose_nothing() {
        let ours = "x\n{\"started\":\"b\"}\n";
        let theirs = "{\"started\":\"a\"}\nnot json\n{\"started\":\"c\"}";
        let merged = String::from_utf8(union_lines(ours.as_bytes(), theirs.as_bytes())).unwrap();
        assert_eq!(
            merged.lines().collect::<Vec<_>>(),
            [
                "x",
                "{\"started\":\"a\"}",
                "not json",
                "{\"started\":\"b\"}",
                "{\"started\":\"c\"}"
            ]
        );
        assert_eq!(union_lines(b"", b"a\nb"), b"a\nb");
        assert_eq!(union_lines(b"a\nb\n", b""), b"a\nb");
        // The same fact added on both sides is kept once; two equal lines on one side stay two.
        assert_eq!(union_lines(b"p\nq", b"p\nq"), b"p\nq");
        assert_eq!(union_lines(b"p\nq\nq", b"p\nq"), b"p\nq\nq");
    }
}
