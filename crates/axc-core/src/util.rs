//! Small helpers: ISO timestamps, random ids, atomic writes, POSIX shell quoting.

use std::path::Path;
use std::time::{SystemTime, UNIX_EPOCH};

/// Milliseconds since the Unix epoch.
/// The largest state, session or config file read (a larger one is said, not read).
pub const MAX_STATE_BYTES: u64 = 16 << 20;

pub fn epoch_millis(t: SystemTime) -> u64 {
    t.duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_millis() as u64)
}

/// `Date#toISOString()`: `2026-11-30T08:54:20.866Z`.
/// A clock before 1970 or past 9999 writes the nearest end (`humantime` writes neither).
pub fn iso_timestamp(t: SystemTime) -> String {
    const LAST_MS: u64 = 253_402_300_799_999;
    let ms = epoch_millis(t).min(LAST_MS);
    humantime::format_rfc3339_millis(UNIX_EPOCH + std::time::Duration::from_millis(ms)).to_string()
}

/// An identifier safe to use as one path segment and one shell word: 1 to 128 ASCII letters,
/// digits, `_`, `-` or `.`, not starting with `-` or `.` (`run_…`, `turn_…`, `hesc_…`,
/// `intent_…`). Ids read back from files an agent can write are checked with this before they
/// name a directory or appear in a printed command.
pub fn is_plain_id(s: &str) -> bool {
    (1..=128).contains(&s.len())
        && !s.starts_with(['-', '.'])
        && s.bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-' || b == b'.')
}

/// Text read from a project's files (agents write summaries, reasons, ids) as one printable
/// line: control characters — terminal escapes, line breaks that would forge another line —
/// and bidirectional overrides shown as `\u{…}` escapes.
pub fn printable(t: &str) -> String {
    t.chars()
        .map(|c| {
            // Also the format characters that reorder or break what a terminal shows:
            // bidirectional overrides and isolates, line and paragraph separators.
            if c.is_control()
                || matches!(c, '\u{200e}' | '\u{200f}' | '\u{2028}'..='\u{202e}' | '\u{2066}'..='\u{2069}')
            {
                c.escape_unicode().to_string()
            } else {
                c.to_string()
            }
        })
        .collect()
}

/// `n` random lowercase hex digits.
pub fn random_hex(n: usize) -> String {
    (0..n)
        .map(|_| char::from_digit(fastrand::u32(0..16), 16).unwrap_or('0'))
        .collect()
}

pub use fswrite::write_atomic;

/// Quotes `s` for a POSIX shell: unchanged when it is made only of characters no shell treats
/// specially, else single-quoted with every `'` written as `'\''`.
pub fn shell_quote(s: &str) -> String {
    let plain = !s.is_empty()
        && s.bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"_./:=@%+,-".contains(&b));
    if plain {
        s.to_owned()
    } else {
        format!("'{}'", s.replace('\'', r"'\''"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    #[test]
    fn printable_escapes_controls_and_bidirectional_overrides() {
        assert_eq!(printable("a\u{1b}[31mb\n"), "a\\u{1b}[31mb\\u{a}");
        assert_eq!(
            printable("x\u{202e}y\u{2028}z\u{2067}"),
            "x\\u{202e}y\\u{2028}z\\u{2067}"
        );
        assert_eq!(printable("héllo — ok"), "héllo — ok");
    }

    #[test]
    fn iso_timestamps_match_javascript() {
        let t = UNIX_EPOCH + Duration::from_millis(1_796_028_860_866);
        assert_eq!(iso_timestamp(t), "2026-11-30T08:54:20.866Z");
        assert_eq!(iso_timestamp(UNIX_EPOCH), "1970-01-01T00:00:00.000Z");
        let before = UNIX_EPOCH - std::time::Duration::from_secs(5);
        assert_eq!(iso_timestamp(before), "1970-01-01T00:00:00.000Z");
        let far = UNIX_EPOCH + std::time::Duration::from_secs(400_000_000_000);
        assert_eq!(iso_timestamp(far), "9999-12-31T23:59:59.999Z");
        let leap = UNIX_EPOCH + Duration::from_secs(951_782_400); // 2000-02-29
        assert_eq!(iso_timestamp(leap), "2000-02-29T00:00:00.000Z");
    }

    #[test]
    fn iso_timestamps_are_javascripts() {
        let t = UNIX_EPOCH + std::time::Duration::from_millis(1_764_492_860_866);
        assert_eq!(iso_timestamp(t), "2025-11-30T08:54:20.866Z");
        assert_eq!(iso_timestamp(UNIX_EPOCH), "1970-01-01T00:00:00.000Z");
        let before = UNIX_EPOCH - std::time::Duration::from_secs(5);
        assert_eq!(iso_timestamp(before), "1970-01-01T00:00:00.000Z");
        let far = UNIX_EPOCH + std::time::Duration::from_secs(400_000_000_000);
        assert_eq!(iso_timestamp(far), "9999-12-31T23:59:59.999Z");
    }

    #[test]
    fn random_hex_has_the_asked_length_and_varies() {
        let a = random_hex(16);
        assert_eq!(a.len(), 16);
        assert!(a.bytes().all(|b| b.is_ascii_hexdigit()));
        assert_ne!(a, random_hex(16));
    }

    #[test]
    fn shell_quoting() {
        assert_eq!(shell_quote("manual"), "manual");
        assert_eq!(shell_quote("it's broken"), r"'it'\''s broken'");
        assert_eq!(shell_quote(""), "''");
        assert_eq!(shell_quote(r#"{"a":1}"#), r#"'{"a":1}'"#);
        assert_eq!(shell_quote("$HOME"), "'$HOME'");
    }
}

/// `path.resolve(p)`: absolute, with `.` and `..` removed lexically (symlinks are not followed).
pub fn resolve_path(p: &Path) -> std::path::PathBuf {
    use std::path::Component;
    let joined = if p.is_absolute() {
        p.to_path_buf()
    } else {
        std::env::current_dir()
            .unwrap_or_else(|_| std::path::PathBuf::from("/"))
            .join(p)
    };
    let mut out = std::path::PathBuf::new();
    for c in joined.components() {
        match c {
            Component::ParentDir => {
                out.pop();
            }
            Component::CurDir => {}
            other => out.push(other),
        }
    }
    out
}

#[cfg(test)]
mod resolve_tests {
    use super::resolve_path;
    use std::path::Path;

    #[test]
    fn resolve_is_lexical() {
        assert_eq!(
            resolve_path(Path::new("/a/b/../c/./d")),
            Path::new("/a/c/d")
        );
        assert_eq!(resolve_path(Path::new("/..")), Path::new("/"));
        assert!(resolve_path(Path::new("x")).is_absolute());
    }
}

/// A number as JavaScript holds it: an integral value is an integer (`50`, not `50.0`).
pub fn js_number(f: f64) -> serde_json::Value {
    if f.fract() == 0.0 && f.abs() < 9.0e15 {
        serde_json::json!(f as i64)
    } else {
        serde_json::json!(f)
    }
}
