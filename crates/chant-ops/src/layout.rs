//! Where a record goes on the ledger: one file per record, in directories naming the UTC hour
//! it was made — `<prefix>/<yyyy>/<mm>/<dd>/<hh>/<yyyymmdd>T<hhmmss>.<mmm>Z-<n>.jsonl`.
//!
//! An append then rewrites the few trees down that path, never a history file, and the newest
//! record is found by descending the newest directory of each level: both cost the same after
//! a million records as after one. Names sort as times, so "newest" is "last by name". A
//! record whose own time does not name the directory it is in was not put there by chant and
//! is not believed (a reader skips it and says why): the directories are an index readers
//! rely on, so they must agree with what they index.

use gitledger::{Ledger, LedgerError, Reader};

use crate::time::iso;

/// Where a record of time `ms` goes under `prefix`: its directory and its file's stem.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Place {
    pub dir: String,
    pub stem: String,
}

/// [`Place`] of a record made at `ms` (epoch milliseconds), under `prefix`.
pub fn place(prefix: &str, ms: u64) -> Place {
    // `2026-12-01T14:36:28.123Z`
    let t = iso(ms);
    let (y, mo, d, h) = (&t[0..4], &t[5..7], &t[8..10], &t[11..13]);
    let (mi, s, frac) = (&t[14..16], &t[17..19], &t[20..23]);
    Place {
        dir: format!("{prefix}/{y}/{mo}/{d}/{h}"),
        stem: format!("{y}{mo}{d}T{h}{mi}{s}.{frac}Z"),
    }
}

/// Whether the file at `path` is where a record of time `ms` belongs under `prefix`.
pub fn placed(prefix: &str, path: &str, ms: u64) -> bool {
    let p = place(prefix, ms);
    path.strip_prefix(&p.dir)
        .and_then(|rest| rest.strip_prefix('/'))
        .and_then(|name| name.strip_prefix(&p.stem))
        .is_some_and(|rest| rest.starts_with('-') && rest.ends_with(".jsonl"))
}

/// The reason a reader gives for a record outside its place.
pub fn misplaced(key: &str, value: &str) -> String {
    format!(
        "{key} {} does not belong in this file's directory (chant files a record under the hour it names)",
        crate::records::shown(value)
    )
}

/// The reason a reader gives for a record file too large to be one (it is not read).
pub fn too_large(size: u64) -> String {
    format!(
        "the file is {size} bytes, more than the {} MiB a record may be; not read",
        gitledger::MAX_RECORD_BYTES >> 20
    )
}

/// The earliest time a directory under `prefix` can hold (`<yyyy>[/<mm>[/<dd>[/<hh>]]]`),
/// `None` when it is not such a directory (nothing in it is where chant puts records).
pub fn earliest(prefix: &str, dir: &str) -> Option<u64> {
    let rel = dir.strip_prefix(prefix)?.strip_prefix('/')?;
    let parts: Vec<&str> = rel.split('/').collect();
    let widths = [4, 2, 2, 2];
    if parts.is_empty()
        || parts.len() > 4
        || parts
            .iter()
            .zip(widths)
            .any(|(p, w)| p.len() != w || !p.bytes().all(|b| b.is_ascii_digit()))
    {
        return None;
    }
    let get = |i: usize, default: &str| parts.get(i).map_or(default.to_owned(), |p| (*p).into());
    let text = format!(
        "{}-{}-{}T{}:00:00.000Z",
        parts[0],
        get(1, "01"),
        get(2, "01"),
        get(3, "00")
    );
    crate::time::parse_iso(&text)
}

/// Appends `line`, a record made at `ms`, under `prefix`. Returns its file's path.
pub fn append(
    ledger: &Ledger,
    prefix: &str,
    ms: u64,
    line: &str,
    message: &str,
) -> Result<String, LedgerError> {
    let p = place(prefix, ms);
    ledger
        .append_record(&p.dir, &p.stem, line, message)
        .map(|(path, _)| path)
}

/// Walks the record files under `prefix` newest first (see [`Reader::newest_first`]),
/// skipping unread every directory that cannot hold a time at or before `until` (records
/// dated after it decide nothing) and every directory that is not an hour's.
pub fn newest_first(
    reader: &mut Reader,
    prefix: &str,
    until: Option<u64>,
    visit: &mut gitledger::Visitor<'_>,
) -> Result<(), LedgerError> {
    let mut enter = |dir: &str| match earliest(prefix, dir) {
        None => false,
        Some(t) => until.is_none_or(|u| t <= u),
    };
    reader.newest_first(prefix, &mut enter, visit)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_place_names_the_hour_and_sorts_as_time() {
        let ms = crate::time::parse_iso("2026-12-01T14:36:28.123Z").unwrap();
        let p = place("local/runs/deploy", ms);
        assert_eq!(p.dir, "local/runs/deploy/2026/12/01/14");
        assert_eq!(p.stem, "20261201T143628.123Z");
        assert!(placed(
            "local/runs/deploy",
            "local/runs/deploy/2026/12/01/14/20261201T143628.123Z-0000.jsonl",
            ms
        ));
        for wrong in [
            "local/runs/deploy/2026/12/01/15/20261201T143628.123Z-0000.jsonl",
            "local/runs/deploy/2026/12/01/14/20261201T143628.124Z-0000.jsonl",
            "local/runs/other/2026/12/01/14/20261201T143628.123Z-0000.jsonl",
            "local/runs/deploy/2026/12/01/14/20261201T143628.123Z-0000.json",
            "local/runs/deploy/2026/12/01/14/20261201T143628.123Z.jsonl",
        ] {
            assert!(!placed("local/runs/deploy", wrong, ms), "{wrong}");
        }
        let later = place("p", ms + 1);
        assert!(later.stem > p.stem);
        let next_year = place("p", ms + 40 * 86_400_000);
        assert!(next_year.dir > place("p", ms).dir);
    }

    #[test]
    fn a_directory_knows_the_earliest_time_it_holds() {
        let t = |s: &str| crate::time::parse_iso(s).unwrap();
        assert_eq!(earliest("p", "p/2026"), Some(t("2026-01-01T00:00:00Z")));
        assert_eq!(earliest("p", "p/2026/12"), Some(t("2026-12-01T00:00:00Z")));
        assert_eq!(
            earliest("p", "p/2026/12/01/14"),
            Some(t("2026-12-01T14:00:00Z"))
        );
        for bad in [
            "p",
            "p/26",
            "p/2026/1",
            "p/2026/12/01/14/00",
            "q/2026",
            "p/20x6",
        ] {
            assert_eq!(earliest("p", bad), None, "{bad}");
        }
    }
}
