//! `op-report`: the markdown report of an Op's latest run.

use serde_json::Value as Json;

use crate::model::OpDef;

/// The report for `op` given its `op-status` object.
pub fn markdown(op: &OpDef, runtime: &str, status: &Json) -> String {
    let mut out = format!("# {}\n\n{}\n\n", op.name, op.overview);
    if status["runId"].is_null() {
        out.push_str(&format!(
            "No run is recorded on the \"{runtime}\" runtime.\n"
        ));
        skipped(&mut out, status);
        return out;
    }
    let s = |k: &str| status[k].as_str().unwrap_or_default().to_owned();
    out.push_str(&format!(
        "- Runtime: {runtime}\n- Run: {}\n- State: {}\n- Started: {}\n",
        s("runId"),
        s("state"),
        s("startedAt")
    ));
    if !status["endedAt"].is_null() {
        out.push_str(&format!("- Ended: {}\n", s("endedAt")));
    }
    if let Some(g) = status["gate"].as_object() {
        out.push_str(&format!(
            "- Gate: {} (pending since {})\n",
            g.get("name").and_then(Json::as_str).unwrap_or_default(),
            g.get("since").and_then(Json::as_str).unwrap_or_default()
        ));
    }
    out.push_str("\n| Phase | Step | Status | Duration |\n|---|---|---|---|\n");
    for r in status["records"].as_array().into_iter().flatten() {
        out.push_str(&format!(
            "| {} | {} | {} | {}ms |\n",
            r["phase"].as_str().unwrap_or_default(),
            r["fn"].as_str().unwrap_or_default(),
            r["status"].as_str().unwrap_or_default(),
            r["durationMs"].as_u64().unwrap_or(0)
        ));
    }
    skipped(&mut out, status);
    out
}

/// The ledger lines the status skipped, so a reader of the report knows the record is partial.
fn skipped(out: &mut String, status: &Json) {
    let Some(lines) = status["skipped"].as_array().filter(|l| !l.is_empty()) else {
        return;
    };
    out.push_str("\n## Skipped ledger lines\n\n");
    for l in lines {
        out.push_str(&format!(
            "- `{}` line {}: {}\n",
            l["file"].as_str().unwrap_or_default(),
            l["line"],
            l["reason"].as_str().unwrap_or_default()
        ));
    }
}
