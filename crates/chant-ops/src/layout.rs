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
        crate::skipped::shown(value)
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

/// How many record files one walk reads at most. A decision or a latest run needs the newest
/// few (a gate's newest pending fact and what answered it; an Op's newest run): a walk that
/// reads this many without finding them is walking through what no run or approval wrote.
pub const MAX_WALK_READS: usize = 1_000;

/// Whether `name`, in the hour directory `dir` (`…/<yyyy>/<mm>/<dd>/<hh>`), is a name chant
/// gives a record made in that hour: `<yyyymmdd>T<hh><mmss>.<mmm>Z-<n>.jsonl`.
pub fn record_name(dir: &str, name: &str) -> bool {
    let parts: Vec<&str> = dir.rsplit('/').take(4).collect();
    let [h, d, mo, y] = parts[..] else {
        return false;
    };
    let Some(rest) = name.strip_prefix(&format!("{y}{mo}{d}T{h}")) else {
        return false;
    };
    // `<mmss>.<mmm>Z-<n>.jsonl`, as bytes (a name is anything a tree holds).
    let digits = |s: &[u8]| !s.is_empty() && s.iter().all(u8::is_ascii_digit);
    let Some(b) = rest.as_bytes().strip_suffix(b".jsonl") else {
        return false;
    };
    b.len() >= 14
        && digits(&b[0..4])
        && b[4] == b'.'
        && digits(&b[5..8])
        && &b[8..10] == b"Z-"
        && b.len() - 10 >= 4
        && digits(&b[10..])
}

/// Whether `path` is where chant puts a record under `prefix`: in an hour's directory, under
/// a name of that hour ([`record_name`]).
fn record_file(prefix: &str, path: &str) -> bool {
    let (dir, name) = path.rsplit_once('/').unwrap_or(("", path));
    earliest(prefix, dir).is_some() && record_name(dir, name)
}

/// How a walk ended.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Walked {
    /// Files passed by unread: names chant never gives a record.
    pub foreign: usize,
    /// It stopped after [`MAX_WALK_READS`] files, short of what it was looking for.
    pub cut_short: bool,
}

impl Walked {
    /// What a reader says of files it did not read, as a skipped entry of `prefix`, if any.
    pub fn said(&self, prefix: &str) -> Vec<crate::skipped::Skipped> {
        let mut out = Vec::new();
        if self.foreign > 0 {
            out.push(crate::skipped::Skipped {
                file: format!("{prefix}/"),
                line: 0,
                reason: format!(
                    "{} files whose names chant never gives a record were not read",
                    self.foreign
                ),
            });
        }
        if self.cut_short {
            out.push(crate::skipped::Skipped {
                file: format!("{prefix}/"),
                line: 0,
                reason: format!(
                    "the newest {MAX_WALK_READS} files hold nothing that decides; older ones were not read"
                ),
            });
        }
        out
    }
}

/// Walks the record files under `prefix` newest first (see [`Reader::newest_first`]),
/// skipping unread every directory that cannot hold a time at or before `until` (records
/// dated after it decide nothing), every directory that is not an hour's, and every file
/// whose name is not a record's of its hour; at most [`MAX_WALK_READS`] files are read.
pub fn newest_first(
    reader: &mut Reader,
    prefix: &str,
    until: Option<u64>,
    visit: &mut gitledger::Visitor<'_>,
) -> Result<Walked, LedgerError> {
    let mut walked = Walked::default();
    let mut take = |path: &str, kind: gitledger::Kind| {
        if kind == gitledger::Kind::Tree {
            return match earliest(prefix, path) {
                None => false,
                Some(t) => until.is_none_or(|u| t <= u),
            };
        }
        let ours = record_file(prefix, path);
        walked.foreign += usize::from(!ours);
        ours
    };
    let mut reads = 0;
    let mut cut_short = false;
    let mut counted = |path: &str, bytes: Result<&[u8], u64>| {
        reads += 1;
        match visit(path, bytes) {
            gitledger::Flow::Stop => gitledger::Flow::Stop,
            _ if reads >= MAX_WALK_READS => {
                cut_short = true;
                gitledger::Flow::Stop
            }
            flow => flow,
        }
    };
    reader.newest_first(prefix, &mut take, &mut counted)?;
    walked.cut_short = cut_short;
    Ok(walked)
}

/// Every record file under `prefix`, by path, read in one batch, and what was passed by
/// unread (names chant never gives a record; `cut_short` is never set).
#[allow(clippy::type_complexity)]
pub fn all_under(
    reader: &mut Reader,
    prefix: &str,
) -> Result<(Vec<(String, Result<Vec<u8>, u64>)>, Walked), LedgerError> {
    let mut walked = Walked::default();
    let files = reader
        .files_under(prefix)?
        .into_iter()
        .filter(|(path, _)| {
            let ours = record_file(prefix, path);
            walked.foreign += usize::from(!ours);
            ours
        })
        .collect();
    Ok((files, walked))
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
    fn only_names_chant_gives_a_record_of_that_hour_are_read() {
        let dir = "local/runs/o/2026/12/01/14";
        assert!(record_name(dir, "20261201T143628.123Z-0000.jsonl"));
        assert!(record_name(dir, "20261201T145959.999Z-12345.jsonl"));
        for bad in [
            "zz0000000.jsonl",
            "20261201T153628.123Z-0000.jsonl",
            "20261202T143628.123Z-0000.jsonl",
            "20261201T143628.123Z-000.jsonl",
            "20261201T143628.123Z-0000.json",
            "20261201T143628.123Z-00a0.jsonl",
            "20261201T1436x8.123Z-0000.jsonl",
            "20261201T143628123Z-0000.jsonl",
            "20261201T14",
            "20261201T14é8.123Z-0000.jsonl",
            "20261201T14\u{1F600}.123Z-0000.jsonl",
            "",
        ] {
            assert!(!record_name(dir, bad), "{bad}");
        }
        assert!(!record_name("14", "20261201T143628.123Z-0000.jsonl"));
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
