//! Run records on the ledger, and the run status read back from them.
//!
//! A run is one file, `<env>/runs/<op>/<yyyy>/<mm>/<dd>/<hh>/<started>-<n>.jsonl` (see
//! [`crate::layout`]): appending one and reading the latest cost the same however many runs
//! came before. Ledgers written before this layout hold an Op's runs as lines of one file,
//! `<env>/runs__<op>.jsonl`; it is still read (and no longer written), so nobody migrates
//! anything and a clone running an older chant still adds to what everyone sees.

use std::collections::HashMap;
use std::sync::Mutex;

use gitledger::{Flow, Kind, Ledger, LedgerError, Reader};
use serde_json::{Map, Value as Json, json};

use crate::layout;

/// Where an Op's run files are in `env`.
pub fn runs_dir(env: &str, op: &str) -> String {
    format!("{env}/runs/{op}")
}

/// The file older ledgers hold an Op's run records in (`env`), one per line. Read, never
/// written.
pub fn legacy_runs_path(env: &str, op: &str) -> String {
    format!("{env}/runs__{op}.jsonl")
}

/// Appends a run record (its `started` names its place). Returns the file's path.
pub fn append_run(ledger: &Ledger, record: &Json, message: &str) -> Result<String, LedgerError> {
    let (env, op) = (
        record["env"].as_str().unwrap_or_default(),
        record["op"].as_str().unwrap_or_default(),
    );
    let started = record["started"]
        .as_str()
        .and_then(crate::time::parse_iso)
        .unwrap_or_default();
    layout::append(
        ledger,
        &runs_dir(env, op),
        started,
        &canon::to_canonical_compact(record),
        message,
    )
}

/// Why `v` is not a well-formed run record (`version` 1 with string `op`, `env`, `started`,
/// `ended`, `status`, and `phases` an array), or `None` when it is one.
fn invalid(v: &Json) -> Option<String> {
    let Some(o) = v.as_object() else {
        return Some("not a JSON object".into());
    };
    if o.get("version") != Some(&json!(1)) {
        return Some("version is not 1".into());
    }
    if let Some(k) = ["op", "env", "started", "ended", "status"]
        .iter()
        .find(|k| !o.get(**k).is_some_and(Json::is_string))
    {
        return Some(format!("{k} is missing or not a string"));
    }
    if !o.get("phases").is_some_and(Json::is_array) {
        return Some("phases is missing or not an array".into());
    }
    None
}

/// Parses run lines. A line that is not a run record costs that line only: it is skipped and
/// listed as `(line number, reason)`.
pub fn parse_runs(bytes: &[u8]) -> (Vec<Json>, Vec<(usize, String)>) {
    let (runs, skipped) = parse_runs_numbered(bytes);
    (runs.into_iter().map(|(_, r)| r).collect(), skipped)
}

/// An Op's run records across environments, newest first (by `started`), and the lines of
/// its ledger files that were skipped on the way.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct History {
    pub runs: Vec<Json>,
    pub skipped: Vec<Skipped>,
}

pub use crate::skipped::{SKIPPED_SHOWN, Skipped, shown};

/// The environments the ledger holds (top-level directories not starting with `_`).
fn environments(reader: &mut Reader) -> Result<Vec<(String, String)>, LedgerError> {
    Ok(reader
        .tree("")?
        .unwrap_or_default()
        .into_iter()
        .filter(|e| e.kind == Kind::Tree && !e.name.starts_with('_'))
        .map(|e| (e.name, e.sha))
        .collect())
}

/// The run records of a new-layout file, each checked against its place: `(records, skipped)`.
fn parse_run_file(dir: &str, path: &str, bytes: &[u8]) -> (Vec<Json>, Vec<(usize, String)>) {
    let (runs, mut skipped) = parse_runs_numbered(bytes);
    let mut kept = Vec::new();
    for (number, run) in runs {
        let started = run["started"].as_str().unwrap_or_default();
        match crate::time::parse_iso(started) {
            Some(ms) if layout::placed(dir, path, ms) => kept.push(run),
            _ => skipped.push((number, layout::misplaced("started", started))),
        }
    }
    skipped.sort();
    (kept, skipped)
}

/// Lines read: `(line number, value)` kept, `(line number, reason)` skipped.
type Numbered<T> = (Vec<(usize, T)>, Vec<(usize, String)>);

/// [`parse_runs`], each record with its line number.
fn parse_runs_numbered(bytes: &[u8]) -> Numbered<Json> {
    let mut out = Vec::new();
    let mut skipped = Vec::new();
    for line in gitledger::numbered(bytes) {
        let parsed = line
            .text
            .map_err(str::to_owned)
            .and_then(|t| serde_json::from_str::<Json>(t).map_err(|e| format!("not JSON ({e})")));
        match parsed {
            Ok(v) => match invalid(&v) {
                None => out.push((line.number, v)),
                Some(reason) => skipped.push((line.number, reason)),
            },
            Err(reason) => skipped.push((line.number, reason)),
        }
    }
    (out, skipped)
}

/// How two runs order by when they started: by the time `started` reads as (what also names
/// a run's place), then by its text.
fn by_started(a: &Json, b: &Json) -> std::cmp::Ordering {
    let key = |r: &Json| {
        let text = r["started"].as_str();
        (
            text.and_then(crate::time::parse_iso),
            text.map(str::to_owned),
        )
    };
    key(a).cmp(&key(b))
}

/// Newest first by `started`; among runs started the same millisecond, the one written first.
fn newest_first_by_started(runs: &mut [Json]) {
    runs.sort_by(|a, b| by_started(b, a));
}

/// Every run record of `op` across environments, newest first (by `started`), and every line
/// skipped on the way. This reads the whole history (`chant run log`, `chant://ops/<n>/runs`);
/// the latest alone is [`latest`].
pub fn history(ledger: &Ledger, op: &str) -> History {
    let mut out = History::default();
    let Ok(mut reader) = ledger.reader() else {
        return out;
    };
    let Ok(envs) = environments(&mut reader) else {
        return out;
    };
    for (env, _) in envs {
        let legacy = legacy_runs_path(&env, op);
        match reader.blob(&legacy) {
            Ok(Some(bytes)) => {
                let (runs, skipped) = parse_runs(&bytes);
                out.runs.extend(runs);
                out.skipped.extend(Skipped::list(&legacy, skipped));
            }
            Ok(None) => {}
            Err(e) => out.skipped.push(Skipped::unread(&legacy, &e)),
        }
        let dir = runs_dir(&env, op);
        let (files, walked) = layout::all_under(&mut reader, &dir).unwrap_or_default();
        out.skipped.extend(walked.said(&dir));
        for (path, bytes) in files {
            let bytes = match bytes {
                Ok(b) => b,
                Err(size) => {
                    out.skipped.push(Skipped::whole(&path, size));
                    continue;
                }
            };
            let (runs, skipped) = parse_run_file(&dir, &path, &bytes);
            out.runs.extend(runs);
            out.skipped.extend(Skipped::list(&path, skipped));
        }
    }
    newest_first_by_started(&mut out.runs);
    out
}

/// An Op's newest run record (by `started`), and the lines skipped on the way to it.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Latest {
    pub run: Option<Json>,
    pub skipped: Vec<Skipped>,
}

/// What one source of an Op's runs in one environment offers: its newest record and what was
/// skipped reading it. Cached by the object id of what it was read from.
#[derive(Clone, Debug, Default)]
struct Part {
    run: Option<Json>,
    skipped: Vec<Skipped>,
}

/// Remembers, across calls of a long-running process, what each Op's run files said as of
/// the tree (or legacy file) object they were read from: an object id names its content, so
/// an entry is right until the id changes, and a call reads only what changed since the last.
#[derive(Debug, Default)]
pub struct LatestCache {
    parts: Mutex<HashMap<String, Part>>,
    /// The answer of the last call, and the stamp of the refs it read: while the refs files
    /// are as they were, the ledger's commit is the same, and so is every Op's latest run.
    last: Mutex<Option<(gitledger::RefsStamp, HashMap<String, Latest>)>>,
}

impl LatestCache {
    /// The latest of each of `ops` as of the last call, if the refs are as they were then.
    fn unchanged(&self, stamp: &gitledger::RefsStamp, ops: &[&str]) -> Option<Vec<Latest>> {
        let last = self.last.lock().ok()?;
        let (was, answers) = last.as_ref()?;
        if was != stamp {
            return None;
        }
        ops.iter().map(|op| answers.get(*op).cloned()).collect()
    }

    fn remember(&self, stamp: gitledger::RefsStamp, ops: &[&str], out: &[Latest]) {
        if let Ok(mut last) = self.last.lock() {
            let answers = ops
                .iter()
                .zip(out)
                .map(|(op, l)| ((*op).to_owned(), l.clone()))
                .collect();
            *last = Some((stamp, answers));
        }
    }

    fn get(&self, key: &str) -> Option<Part> {
        self.parts.lock().ok()?.get(key).cloned()
    }

    fn put(&self, key: String, part: &Part) {
        if let Ok(mut m) = self.parts.lock() {
            // A bound on what a process keeps: past it, start again (the next call re-reads).
            if m.len() > 100_000 {
                m.clear();
            }
            m.insert(key, part.clone());
        }
    }
}

/// The newest run under `dir` (new layout): newest file first, until one holds a run; the
/// rest of that file's hour is read too, for runs started the same millisecond.
fn newest_in_dir(reader: &mut Reader, dir: &str) -> Part {
    let mut found: Vec<(String, Json)> = Vec::new();
    let mut skipped = Vec::new();
    let walked = layout::newest_first(reader, dir, None, &mut |path, bytes| {
        let bytes = match bytes {
            Ok(b) => b,
            Err(size) => {
                skipped.push(Skipped::whole(path, size));
                return Flow::Next;
            }
        };
        let (runs, bad) = parse_run_file(dir, path, bytes);
        skipped.extend(Skipped::list(path, bad));
        let any = !runs.is_empty();
        found.extend(runs.into_iter().map(|r| (path.to_owned(), r)));
        if any { Flow::FinishDir } else { Flow::Next }
    });
    match walked {
        Ok(w) => skipped.extend(w.said(dir)),
        Err(_) => return Part::default(),
    }
    // Newest `started`; a tie goes to the file written first (the lowest name).
    found.sort_by(|(pa, a), (pb, b)| by_started(b, a).then(pa.cmp(pb)));
    Part {
        run: found.into_iter().next().map(|(_, r)| r),
        skipped,
    }
}

/// The newest run of a legacy file's lines.
fn newest_in_legacy(path: &str, bytes: &[u8]) -> Part {
    let (mut runs, skipped) = parse_runs(bytes);
    newest_first_by_started(&mut runs);
    Part {
        run: runs.into_iter().next(),
        skipped: Skipped::list(path, skipped),
    }
}

/// The newest run record of `op` across environments (what [`history`] would list first),
/// reading only the newest files.
pub fn latest(ledger: &Ledger, op: &str) -> Latest {
    latests(ledger, &[op], None).pop().unwrap_or_default()
}

/// [`latest`] through a reader the caller already has.
pub fn latest_from(reader: &mut Reader, op: &str) -> Latest {
    read_latests_from(reader, &[op], None)
        .pop()
        .unwrap_or_default()
}

/// [`latest`] of each of `ops`, in order, with one reader; with a cache, only the Ops whose
/// run files changed since the cache saw them are read.
pub fn latests(ledger: &Ledger, ops: &[&str], cache: Option<&LatestCache>) -> Vec<Latest> {
    // Stamped before reading: a ref moved during the read is a change the next call sees.
    let stamp = cache.and_then(|_| ledger.refs_stamp());
    if let (Some(c), Some(s)) = (cache, &stamp)
        && let Some(all) = c.unchanged(s, ops)
    {
        return all;
    }
    let out = read_latests(ledger, ops, cache);
    if let (Some(c), Some(s)) = (cache, stamp) {
        c.remember(s, ops, &out);
    }
    out
}

fn read_latests(ledger: &Ledger, ops: &[&str], cache: Option<&LatestCache>) -> Vec<Latest> {
    match ledger.reader() {
        Ok(mut reader) => read_latests_from(&mut reader, ops, cache),
        Err(_) => vec![Latest::default(); ops.len()],
    }
}

fn read_latests_from(
    reader: &mut Reader,
    ops: &[&str],
    cache: Option<&LatestCache>,
) -> Vec<Latest> {
    let mut out = vec![Latest::default(); ops.len()];
    let Ok(envs) = environments(reader) else {
        return out;
    };
    for (env, env_sha) in envs {
        // One listing per environment names every Op's run directory and legacy file.
        let listing = reader.tree_at(&env_sha).unwrap_or_default();
        let runs_sha = listing
            .iter()
            .find(|e| e.name == "runs" && e.kind == Kind::Tree)
            .map(|e| e.sha.clone());
        let dirs = match &runs_sha {
            Some(sha) => reader.tree_at(sha).unwrap_or_default(),
            None => Vec::new(),
        };
        for (i, op) in ops.iter().enumerate() {
            let legacy_name = format!("runs__{op}.jsonl");
            let mut parts: Vec<Part> = Vec::new();
            if let Some(e) = listing
                .iter()
                .find(|e| e.name == legacy_name && e.kind == Kind::Blob)
            {
                let key = format!("blob {}", e.sha);
                let part = match cache.and_then(|c| c.get(&key)) {
                    Some(p) => p,
                    None => {
                        let path = legacy_runs_path(&env, op);
                        let p = match reader.blob_at(&e.sha) {
                            Ok(bytes) => newest_in_legacy(&path, &bytes.unwrap_or_default()),
                            Err(e) => Part {
                                run: None,
                                skipped: vec![Skipped::unread(&path, &e)],
                            },
                        };
                        if let Some(c) = cache {
                            c.put(key, &p);
                        }
                        p
                    }
                };
                parts.push(part);
            }
            if let Some(e) = dirs.iter().find(|e| e.name == *op && e.kind == Kind::Tree) {
                // The same tree under another environment or Op name holds other paths.
                let key = format!("tree {} {env}/{op}", e.sha);
                let part = match cache.and_then(|c| c.get(&key)) {
                    Some(p) => p,
                    None => {
                        let p = newest_in_dir(reader, &runs_dir(&env, op));
                        if let Some(c) = cache {
                            c.put(key, &p);
                        }
                        p
                    }
                };
                parts.push(part);
            }
            for part in parts {
                out[i].skipped.extend(part.skipped);
                let newer = match (&out[i].run, &part.run) {
                    (_, None) => false,
                    (None, Some(_)) => true,
                    (Some(a), Some(b)) => by_started(b, a).is_gt(),
                };
                if newer {
                    out[i].run = part.run;
                }
            }
        }
    }
    out
}

/// How a run this runtime made ended (a record's `status`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RunStatus {
    Ok,
    Fail,
    Gated,
    Cancelled,
}

impl RunStatus {
    /// As a run record writes it.
    pub fn as_str(self) -> &'static str {
        match self {
            RunStatus::Ok => "ok",
            RunStatus::Fail => "fail",
            RunStatus::Gated => "gated",
            RunStatus::Cancelled => "cancelled",
        }
    }

    /// The run state outputs show ([`state_of`]).
    pub fn state(self) -> &'static str {
        state_of(self.as_str())
    }
}

impl std::fmt::Display for RunStatus {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Run state of a record's status: `ok → completed`, `gated`, `waiting`, `cancelled`, else `failed`.
pub fn state_of(status: &str) -> &'static str {
    match status {
        "ok" => "completed",
        "gated" => "gated",
        "waiting" => "waiting",
        "cancelled" => "cancelled",
        _ => "failed",
    }
}

/// The step records of a run record, flattened in phase order.
pub fn step_records(record: &Json) -> Vec<Json> {
    record["phases"]
        .as_array()
        .map(|ps| {
            ps.iter()
                .flat_map(|p| p["steps"].as_array().cloned().unwrap_or_default())
                .collect()
        })
        .unwrap_or_default()
}

/// `{op, runtime, runId, state, startedAt, endedAt, records, gate}` for the newest record.
pub fn status(op: &str, runtime: &str, latest: Option<&Json>, standing_gate: Option<Json>) -> Json {
    let mut m = Map::new();
    m.insert("op".into(), json!(op));
    m.insert("runtime".into(), json!(runtime));
    match latest {
        Some(r) => {
            m.insert("runId".into(), r["id"].clone());
            m.insert(
                "state".into(),
                json!(state_of(r["status"].as_str().unwrap_or_default())),
            );
            m.insert("startedAt".into(), r["started"].clone());
            m.insert("endedAt".into(), r["ended"].clone());
            m.insert("records".into(), Json::Array(step_records(r)));
        }
        None => {
            for k in ["runId", "state", "startedAt", "endedAt"] {
                m.insert(k.into(), Json::Null);
            }
            m.insert("records".into(), json!([]));
        }
    }
    m.insert("gate".into(), standing_gate.unwrap_or(Json::Null));
    Json::Object(m)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_quoted_value_is_short_and_escaped() {
        assert_eq!(shown("zzzz"), "\"zzzz\"");
        let long = "x".repeat(5_000_000);
        assert_eq!(shown(&long), format!("\"{}…\"", "x".repeat(40)));
        assert_eq!(shown("a\nb\u{1b}"), "\"a\\nb\\u{1b}\"");
        let many: Vec<Skipped> = (0..250)
            .map(|i| Skipped {
                file: "f".into(),
                line: i,
                reason: "r".into(),
            })
            .collect();
        assert_eq!(
            Skipped::array(&many).as_array().unwrap().len(),
            SKIPPED_SHOWN
        );
    }

    #[test]
    fn a_bad_run_line_costs_that_line_and_says_why() {
        let good = r#"{"version":1,"id":"local-1","op":"o","env":"local","started":"a","ended":"b","status":"ok","phases":[]}"#;
        let text = format!(
            "{good}\n{{\"version\":1,\"op\":\"o\"}}\ngarbage\n\n{}",
            good.replace("\"ok\"", "\"fail\"")
        );
        let (runs, bad) = parse_runs(text.as_bytes());
        assert_eq!(runs.len(), 2);
        assert_eq!(
            bad,
            [
                (2, "env is missing or not a string".to_owned()),
                (3, "not JSON (expected value at line 1 column 1)".to_owned())
            ]
        );
        let mut bytes = good.as_bytes().to_vec();
        bytes.extend_from_slice(b"\n\xc3(\n");
        bytes.extend_from_slice(good.replace("\"phases\":[]", "\"phases\":1").as_bytes());
        let (runs, bad) = parse_runs(&bytes);
        assert_eq!(runs.len(), 1, "one bad byte cost its line only");
        assert_eq!(
            bad,
            [
                (2, "not UTF-8".to_owned()),
                (3, "phases is missing or not an array".to_owned())
            ]
        );
        assert_eq!(state_of("fail"), "failed");
        assert_eq!(state_of("ok"), "completed");
    }

    use crate::test_ledger as ledger;

    fn run(env: &str, started_ms: u64, n: usize) -> Json {
        json!({"version": 1, "id": format!("local-{n}"), "op": "o", "env": env,
            "started": crate::time::iso(started_ms), "ended": crate::time::iso(started_ms + 5),
            "status": if n.is_multiple_of(2) { "ok" } else { "fail" }, "phases": []})
    }

    const T0: u64 = 1_796_000_000_000;

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig { cases: 24, ..Default::default() })]
        #[test]
        fn the_latest_is_what_the_whole_history_lists_first(
            runs in proptest::collection::vec(
                (0u64..5, proptest::bool::ANY, proptest::bool::weighted(0.25), proptest::bool::weighted(0.15)),
                1..8,
            )
        ) {
            let (_d, l) = ledger();
            for (n, (minute, staging, legacy, garbage)) in runs.iter().enumerate() {
                let env = if *staging { "staging" } else { "local" };
                let r = run(env, T0 + minute * 60_000, n);
                if *legacy {
                    let line = if *garbage { "{oops".to_owned() } else { canon::to_canonical_compact(&r) };
                    l.append_line(&legacy_runs_path(env, "o"), &line, "m").unwrap();
                } else if *garbage {
                    // A run filed under another hour than it names: skipped, never the latest.
                    let p = layout::place(&runs_dir(env, "o"), T0 + 7_200_000);
                    l.append_record(&p.dir, &p.stem, &canon::to_canonical_compact(&r), "m").unwrap();
                } else {
                    append_run(&l, &r, "m").unwrap();
                }
            }
            let all = history(&l, "o");
            let latest = latest(&l, "o");
            proptest::prop_assert_eq!(latest.run.as_ref(), all.runs.first());
            proptest::prop_assert!(latest.skipped.len() <= all.skipped.len());
            // A cache answers the same, cold and warm.
            let cache = LatestCache::default();
            for _ in 0..2 {
                let cached = latests(&l, &["o", "absent"], Some(&cache));
                proptest::prop_assert_eq!(cached[0].run.as_ref(), all.runs.first());
                proptest::prop_assert_eq!(&cached[1], &Latest::default());
            }
        }
    }

    #[test]
    fn a_record_file_too_large_to_be_one_is_skipped_unread() {
        let (_d, l) = ledger();
        append_run(&l, &run("local", T0, 0), "m").unwrap();
        let p = layout::place(&runs_dir("local", "o"), T0 + 60_000);
        let huge = format!(
            "{}\n{}",
            canon::to_canonical_compact(&run("local", T0 + 60_000, 1)),
            "x".repeat(17 << 20)
        );
        let (path, _) = l.append_record(&p.dir, &p.stem, &huge, "m").unwrap();
        let latest = latest(&l, "o");
        assert_eq!(
            latest.run.unwrap()["id"],
            "local-0",
            "the older run, read past the huge file"
        );
        assert_eq!(latest.skipped, [Skipped::whole(&path, huge.len() as u64)]);
        assert!(
            latest.skipped[0]
                .reason
                .contains("more than the 16 MiB a record may be")
        );
        let all = history(&l, "o");
        assert_eq!(all.runs.len(), 1);
        assert_eq!(all.skipped, latest.skipped);
    }

    #[test]
    fn runs_order_by_the_time_their_start_reads_as_not_its_text() {
        let (_d, l) = ledger();
        let mut early = run("local", T0, 0);
        early["started"] = json!("2026-11-28T10:00:00.000Z");
        let mut late = run("local", T0, 1);
        // Reads as a later time, though its text sorts first ("2026-11-28 " < "2026-11-28T").
        late["started"] = json!("2026-11-28 15:00:00");
        append_run(&l, &early, "m").unwrap();
        append_run(&l, &late, "m").unwrap();
        let all = history(&l, "o");
        assert_eq!(all.runs[0]["id"], "local-1");
        assert_eq!(latest(&l, "o").run.unwrap()["id"], "local-1");
    }
}
