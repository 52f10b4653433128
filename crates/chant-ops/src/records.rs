//! Run records on the ledger: `<env>/runs__<op>.jsonl`, and the run status read back from them.

use gitledger::Ledger;
use serde_json::{Map, Value as Json, json};

/// Ledger path of an Op's run records in `env`.
pub fn runs_path(env: &str, op: &str) -> String {
    format!("{env}/runs__{op}.jsonl")
}

/// A well-formed run record (`version` 1 with `op`, `env`, `started`, `ended`, `status`, `phases`).
fn valid(v: &Json) -> bool {
    let Some(o) = v.as_object() else { return false };
    o.get("version") == Some(&json!(1))
        && ["op", "env", "started", "ended", "status"]
            .iter()
            .all(|k| o.get(*k).is_some_and(Json::is_string))
        && o.get("phases").is_some_and(Json::is_array)
}

/// Parses run lines, skipping (and counting) malformed ones.
pub fn parse_runs(bytes: &[u8]) -> (Vec<Json>, usize) {
    let mut out = Vec::new();
    let mut malformed = 0;
    for line in gitledger::lines(bytes) {
        match serde_json::from_str::<Json>(line) {
            Ok(v) if valid(&v) => out.push(v),
            _ => malformed += 1,
        }
    }
    (out, malformed)
}

/// Every run record of `op` across environments, newest first (by `started`).
pub fn history(ledger: &Ledger, op: &str) -> Vec<Json> {
    histories(ledger, &[op]).pop().unwrap_or_default()
}

/// The [`history`] of each of `ops`, in order, from one snapshot of the ledger: a fixed
/// number of git processes however many Ops and environments there are.
pub fn histories(ledger: &Ledger, ops: &[&str]) -> Vec<Vec<Json>> {
    let Ok(snapshot) = ledger.snapshot() else {
        return vec![Vec::new(); ops.len()];
    };
    // `<env>/runs__<op>.jsonl`, env not starting with `_` (`_gates` and the like).
    let mut wanted: Vec<(usize, &str)> = Vec::new();
    for path in snapshot.paths() {
        let Some((env, file)) = path.split_once('/') else {
            continue;
        };
        if env.starts_with('_') || file.contains('/') {
            continue;
        }
        let Some(op) = file
            .strip_prefix("runs__")
            .and_then(|f| f.strip_suffix(".jsonl"))
        else {
            continue;
        };
        if let Some(i) = ops.iter().position(|o| *o == op) {
            wanted.push((i, path));
        }
    }
    let paths: Vec<&str> = wanted.iter().map(|(_, p)| *p).collect();
    let blobs = snapshot.read_many(&paths).unwrap_or_default();
    let mut out = vec![Vec::new(); ops.len()];
    for ((i, _), bytes) in wanted.iter().zip(blobs) {
        if let Some(bytes) = bytes {
            out[*i].extend(parse_runs(&bytes).0);
        }
    }
    for all in &mut out {
        all.sort_by(|a, b| b["started"].as_str().cmp(&a["started"].as_str()));
    }
    out
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
    fn malformed_run_lines_are_counted() {
        let good = r#"{"version":1,"id":"local-1","op":"o","env":"local","started":"a","ended":"b","status":"ok","phases":[]}"#;
        let text = format!(
            "{good}\n{{\"version\":1,\"op\":\"o\"}}\ngarbage\n\n{}",
            good.replace("\"ok\"", "\"fail\"")
        );
        let (runs, bad) = parse_runs(text.as_bytes());
        assert_eq!((runs.len(), bad), (2, 2));
        assert_eq!(state_of("fail"), "failed");
        assert_eq!(state_of("ok"), "completed");
    }
}
