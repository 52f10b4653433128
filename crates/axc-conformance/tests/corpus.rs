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
