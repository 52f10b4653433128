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
            // And the invisible ones that hide a character in a name: zero width space, word
            // joiners, the byte order mark, Mongolian vowel separator, Arabic letter mark,
            // interlinear annotations and tag characters. (Zero width joiner and non-joiner
            // stay: Persian, Indic scripts and emoji need them.)
            if c.is_control()
                || matches!(c, '\u{61c}' | '\u{180e}' | '\u{200b}' | '\u{200e}' | '\u{200f}'
                    | '\u{2028}'..='\u{202e}' | '\u{2060}'..='\u{2064}' | '\u{2066}'..='\u{2069}'
                    | '\u{feff}' | '\u{fff9}'..='\u{fffb}' | '\u{e0000}'..='\u{e007f}')
            {
                c.escape_unicode().to_string()
            } else {
                c.to_string()
            }
        })
        .collect()
}

/// Text shown for a person to approve byte for byte (the hooks `hooks allow` records): every
/// character outside printable ASCII as a `\u{…}` escape, so no look-alike, joiner or invisible
/// character passes for another.
pub fn ascii_escaped(t: &str) -> String {
    t.chars()
        .map(|c| {
            if c.is_ascii() && !c.is_ascii_control() {
                c.to_string()
            } else {
                c.escape_unicode().to_string()
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
        // Invisible characters that hide in a name; joiners that scripts need stay.
        assert_eq!(
            printable("a\u{200b}b\u{feff}c\u{2060}d\u{e0041}e\u{61c}"),
            "a\\u{200b}b\\u{feff}c\\u{2060}d\\u{e0041}e\\u{61c}"
        );
        assert_eq!(printable("می\u{200c}خواهم"), "می\u{200c}خواهم");
    }

    #[test]
    fn ascii_escaped_shows_every_other_character_as_an_escape() {
        assert_eq!(
            ascii_escaped("sh scripts/l\u{200d}int.sh é\t"),
            "sh scripts/l\\u{200d}int.sh \\u{e9}\\u{9}"
        );
        assert_eq!(ascii_escaped("plain ~!@ 09"), "plain ~!@ 09");
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

/// `x.toFixed(digits)` as JavaScript writes it: the nearest number with `digits` decimals, a
/// tie going away from zero (Rust's `{:.2}` sends a tie to the even digit: `0.125` is `0.12`
/// there, `0.13` in JavaScript, and the reference prints dollar amounts this way). The tie is
/// judged on the value's exact decimal expansion, as JavaScript judges it.
pub fn to_fixed(x: f64, digits: usize) -> String {
    if x.is_nan() {
        return "NaN".to_owned();
    }
    if x.abs() >= 1e21 {
        // JavaScript falls back to its ToString there.
        return if x.is_infinite() {
            if x > 0.0 { "Infinity" } else { "-Infinity" }.to_owned()
        } else {
            format!("{x:e}").replace('e', "e+")
        };
    }
    // Rust's rounding is exact and agrees with JavaScript's but on an exact tie.
    if !is_tie(x, digits) {
        let x = if x == 0.0 { 0.0 } else { x };
        return format!("{x:.digits$}");
    }
    exact_to_fixed(x, digits)
}

/// [`to_fixed`] of a finite `x` below 1e21 from its whole decimal expansion (slow: used on
/// ties).
fn exact_to_fixed(x: f64, digits: usize) -> String {
    // Every finite f64 has at most 1074 decimals: at this precision the expansion is exact.
    let exact = format!("{:.1074}", x.abs());
    let (int, frac) = exact.split_once('.').unwrap_or((&exact, ""));
    let mut kept: Vec<u8> = int.bytes().chain(frac.bytes().take(digits)).collect();
    if frac.as_bytes().get(digits).is_some_and(|d| *d >= b'5') {
        let mut i = kept.len();
        loop {
            if i == 0 {
                kept.insert(0, b'1');
                break;
            }
            i -= 1;
            if kept[i] == b'9' {
                kept[i] = b'0';
            } else {
                kept[i] += 1;
                break;
            }
        }
    }
    let split = kept.len() - digits;
    let mut out = String::from_utf8(kept[..split].to_vec()).unwrap_or_default();
    if digits > 0 {
        out.push('.');
        out.push_str(std::str::from_utf8(&kept[split..]).unwrap_or_default());
    }
    // JavaScript keeps the sign of a negative value that rounds to zero (`-0.001` → `-0.00`)
    // but not of negative zero itself.
    if x < 0.0 {
        out.insert(0, '-');
    }
    out
}

/// Whether `x` lies exactly halfway between two numbers of `digits` decimals: `x·10^digits·2`
/// is an odd integer. With `x = m·2^e` (`m` odd) that is `m·5^digits·2^(e+digits+1)`, odd
/// exactly when `e + digits + 1 = 0`.
fn is_tie(x: f64, digits: usize) -> bool {
    let bits = x.abs().to_bits();
    let field = ((bits >> 52) & 0x7ff) as i64;
    let fraction = bits & ((1u64 << 52) - 1);
    let (mantissa, exp) = if field == 0 {
        (fraction, -1074)
    } else {
        (fraction | (1u64 << 52), field - 1075)
    };
    mantissa != 0 && exp + i64::from(mantissa.trailing_zeros()) + digits as i64 + 1 == 0
}

#[cfg(test)]
mod to_fixed_tests {
    use super::to_fixed;

    #[test]
    fn ties_go_away_from_zero_as_in_javascript() {
        // Each pair was printed by node's `toFixed`.
        for (x, d, js) in [
            (0.125, 2, "0.13"),
            (0.375, 2, "0.38"),
            (0.625, 2, "0.63"),
            (1.125, 2, "1.13"),
            (-0.125, 2, "-0.13"),
            (2.5, 0, "3"),
            (0.5, 0, "1"),
            (1.005, 2, "1.00"),
            (0.005, 2, "0.01"),
            (1.5e-7, 2, "0.00"),
            (-0.001, 2, "-0.00"),
            (-0.0, 2, "0.00"),
            (0.0, 2, "0.00"),
            (9.995, 2, "9.99"),
            (99.995, 2, "100.00"),
            (0.995, 2, "0.99"),
            (999.5, 0, "1000"),
            (1.5, 2, "1.50"),
            (50.0, 2, "50.00"),
            (123456789.125, 2, "123456789.13"),
            (f64::NAN, 2, "NaN"),
            (f64::INFINITY, 2, "Infinity"),
            (1e21, 2, "1e+21"),
            (0.25, 1, "0.3"),
            (0.35, 1, "0.3"),
            (-2.5, 0, "-3"),
            (12.345, 2, "12.35"),
            (0.045, 2, "0.04"),
        ] {
            assert_eq!(to_fixed(x, d), js, "{x}.toFixed({d})");
        }
    }

    #[test]
    fn a_tie_is_found_exactly() {
        assert!(super::is_tie(0.125, 2));
        assert!(super::is_tie(2.5, 0));
        assert!(super::is_tie(0.5, 0));
        assert!(!super::is_tie(1.005, 2));
        assert!(!super::is_tie(0.1, 1));
        assert!(!super::is_tie(0.0, 2));
        assert!(!super::is_tie(3.0, 0));
        assert!(!super::is_tie(0.25, 2));
    }

    proptest::proptest! {
        #[test]
        fn the_fast_path_agrees_with_the_exact_expansion(
            x in -1e15f64..1e15,
            scale in 0u32..8,
            digits in 0usize..7,
        ) {
            let x = x / 10f64.powi(scale as i32);
            proptest::prop_assert_eq!(super::to_fixed(x, digits), super::exact_to_fixed(x, digits));
        }

        #[test]
        fn cents_and_halves_agree_too(cents in -10_000_000i64..10_000_000, digits in 0usize..4) {
            // Values a budget holds: exact ties among them (n/8, n/2) as well.
            for x in [cents as f64 / 100.0, cents as f64 / 8.0, cents as f64 / 1000.0] {
                proptest::prop_assert_eq!(super::to_fixed(x, digits), super::exact_to_fixed(x, digits));
            }
        }
    }
}
