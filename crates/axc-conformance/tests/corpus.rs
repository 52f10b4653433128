//! The protocol conformance corpus (../shared/fixtures/agentxchain-conformance) through the
//! adapter: every fixture of a surface this implementation claims passes, and every other
//! one says it is not implemented (never a wrong pass or a crash).

use std::path::PathBuf;

use serde_json::Value;

fn corpus() -> Vec<(PathBuf, Value)> {
    let base = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../../../shared/fixtures/agentxchain-conformance");
    let mut out = Vec::new();
    for tier in std::fs::read_dir(&base).unwrap() {
        let tier = tier.unwrap().path();
        if !tier.is_dir() {
            continue;
        }
        for surface in std::fs::read_dir(&tier).unwrap() {
            for f in std::fs::read_dir(surface.unwrap().path()).unwrap() {
                let p = f.unwrap().path();
                let v: Value = serde_json::from_str(&std::fs::read_to_string(&p).unwrap()).unwrap();
                out.push((p, v));
            }
        }
    }
    out.sort_by(|a, b| a.0.cmp(&b.0));
    out
}

#[test]
fn every_fixture_of_a_claimed_surface_passes_and_the_rest_say_not_implemented() {
    let all = corpus();
    assert_eq!(all.len(), 108);
    let mut failures = Vec::new();
    let mut passed = 0;
    for (path, fixture) in &all {
        let surface = fixture["surface"].as_str().unwrap();
        let verdict = axc_conformance::adapter::run(fixture);
        if axc_conformance::adapter::surface_implemented(surface) {
            if verdict.status == "pass" {
                passed += 1;
            } else {
                failures.push(format!(
                    "{}: {} {} {:?}",
                    path.display(),
                    verdict.status,
                    verdict.message,
                    verdict.actual
                ));
            }
        } else {
            assert_eq!(verdict.status, "not_implemented", "{}", path.display());
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
    assert_eq!(passed, 108, "fixtures of the claimed surfaces");
}

#[test]
fn a_fixture_whose_expected_outcome_is_altered_fails() {
    for (_, mut fixture) in corpus() {
        let surface = fixture["surface"].as_str().unwrap().to_owned();
        if !axc_conformance::adapter::surface_implemented(&surface) {
            continue;
        }
        let before = axc_conformance::adapter::run(&fixture);
        fixture["expected"]["result"] = Value::String("something else".into());
        let after = axc_conformance::adapter::run(&fixture);
        assert_eq!(
            (before.status, after.status),
            ("pass", "fail"),
            "{}",
            fixture["fixture_id"]
        );
        assert_eq!(
            timeless(before.actual),
            timeless(after.actual),
            "the outcome never depends on `expected`"
        );
    }
}

/// What a run makes anew each time: ids, moments, durations.
const MADE_NOW: [&str; 13] = [
    "projection_ref",
    "finalized_at",
    "accepted_at",
    "timestamp",
    "duration_ms",
    "run_id",
    "created_at",
    "phase_entered_at",
    "completed_at",
    "turn_id",
    "assigned_at",
    "started_at",
    "deadline_at",
];

/// `actual` with what was made at run time ([`MADE_NOW`]) blanked.
fn timeless(v: Option<Value>) -> Option<Value> {
    fn walk(v: &mut Value) {
        match v {
            Value::Object(m) => {
                for (k, x) in m.iter_mut() {
                    if MADE_NOW.contains(&k.as_str()) {
                        *x = Value::Null;
                    } else {
                        walk(x);
                    }
                }
            }
            Value::Array(a) => a.iter_mut().for_each(walk),
            _ => {}
        }
    }
    v.map(|mut v| {
        walk(&mut v);
        v
    })
}

#[test]
fn hostile_values_give_a_verdict_not_a_panic() {
    let all = corpus();
    let find = |id: &str| {
        all.iter()
            .find(|(_, f)| f["fixture_id"] == id)
            .unwrap()
            .1
            .clone()
    };
    let mut tr = find("TR-001");
    let staged = if tr["setup"]["turn_result"].is_null() {
        "/input/args/turn_result"
    } else {
        "/setup/turn_result"
    };
    *tr.pointer_mut(&format!("{staged}/verification")).unwrap() = serde_json::json!({
        "status": "pass", "evidence_summary": "npm test EXITED with code 1 as expected",
        "machine_evidence": [{"command": "npm test", "exit_code": 1}]
    });
    assert_eq!(
        axc_conformance::adapter::run(&tr).status,
        "pass",
        "a declared expected failure is a pass"
    );
    let mut ev = find("EL-001");
    ev["input"]["args"]["event"]["timestamp"] = Value::String("Té12345".into());
    assert_eq!(
        axc_conformance::adapter::run(&ev).actual.unwrap()["result"],
        "error"
    );
    let mut sm = find("SM-001");
    sm["setup"]["state"]["status"] = Value::String("active".into());
    sm["setup"]["config"]["timeouts"] = serde_json::json!({"per_turn_minutes": u64::MAX});
    let _ = axc_conformance::adapter::run(&sm);
}
