//! The hidden `conformance-adapter` (stdio-fixture-v1) and `conformance check`, black-box:
//! one fixture in, one verdict out with its exit code; bad input is an error verdict; the
//! runner over the whole corpus with this repository's capabilities.json.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use serde_json::{Value, json};

const BIN: &str = env!("CARGO_BIN_EXE_agentxchain");

fn corpus() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../../../shared/fixtures/agentxchain-conformance")
}

fn adapter(input: &str) -> (i32, Value) {
    let mut child = Command::new(BIN)
        .arg("conformance-adapter")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    child
        .stdin
        .take()
        .unwrap()
        .write_all(input.as_bytes())
        .unwrap();
    let out = child.wait_with_output().unwrap();
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    (out.status.code().unwrap(), v)
}

fn fixture(rel: &str) -> Value {
    serde_json::from_str(&std::fs::read_to_string(corpus().join(rel)).unwrap()).unwrap()
}

#[test]
fn one_fixture_in_one_verdict_out_with_its_exit_code() {
    let gs = fixture("1/gate_semantics/GS-005.json");
    let (code, v) = adapter(&format!("{gs}\n"));
    assert_eq!((code, v["status"].clone()), (0, json!("pass")), "{v}");
    assert_eq!(v["actual"]["action"], "awaiting_human_approval");
    let mut wrong = gs.clone();
    wrong["expected"]["action"] = json!("advance");
    let (code, v) = adapter(&format!("{wrong}\n"));
    assert_eq!((code, v["status"].clone()), (1, json!("fail")));
    assert_eq!(
        v["actual"]["action"], "awaiting_human_approval",
        "what ran, not what was expected"
    );
    let mut unknown = fixture("3/coordinator/CR-001.json");
    unknown["input"]["operation"] = json!("rebalance_workstreams");
    let (code, v) = adapter(&format!("{unknown}\n"));
    assert_eq!((code, v["status"].clone()), (3, json!("not_implemented")));
    for bad in ["", "{not json\n", "[1,2]\n"] {
        let (code, v) = adapter(bad);
        assert_eq!(
            (code, v["status"].clone()),
            (2, json!("error")),
            "{bad:?}: {v}"
        );
    }
    // A fixture that would write outside its own project is an error, and writes nothing.
    let mut escape = fixture("1/gate_semantics/GS-001.json");
    let outside = std::env::temp_dir().join(format!("axc-escape-{}", std::process::id()));
    escape["setup"]["filesystem"] =
        json!({ format!("../../../../../../..{}", outside.display()): "x" });
    let (code, v) = adapter(&format!("{escape}\n"));
    assert_eq!(code, 2, "{v}");
    assert!(
        v["message"]
            .as_str()
            .unwrap()
            .contains("leaves the fixture's project"),
        "{v}"
    );
    assert!(!outside.exists());
}

fn check(target: &Path, extra: &[&str]) -> (i32, Value) {
    let path = format!(
        "{}:{}",
        Path::new(BIN).parent().unwrap().display(),
        std::env::var("PATH").unwrap()
    );
    let out = Command::new(BIN)
        .args([
            "conformance",
            "check",
            "--tier",
            "3",
            "--format",
            "json",
            "--target",
        ])
        .arg(target)
        .arg("--fixtures")
        .arg(corpus())
        .args(extra)
        .env("PATH", path)
        .output()
        .unwrap();
    let v = serde_json::from_slice(&out.stdout)
        .unwrap_or_else(|_| json!({"stderr": String::from_utf8_lossy(&out.stderr)}));
    (out.status.code().unwrap(), v)
}

#[test]
fn the_runner_over_the_whole_corpus_with_this_repositorys_claims() {
    let repo = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..");
    let (code, v) = check(&repo, &[]);
    assert_eq!(code, 0, "{v}");
    let t1 = &v["results"]["tier_1"];
    assert_eq!(
        json!([
            t1["status"],
            t1["fixtures_run"],
            t1["fixtures_passed"],
            t1["fixtures_failed"],
            t1["fixtures_errored"],
            t1["fixtures_not_implemented"]
        ]),
        json!(["pass", 77, 77, 0, 0, 0])
    );
    let t2 = &v["results"]["tier_2"];
    assert_eq!(
        json!([
            t2["status"],
            t2["fixtures_run"],
            t2["fixtures_passed"],
            t2["fixtures_not_implemented"]
        ]),
        json!(["pass", 23, 23, 0])
    );
    let t3 = &v["results"]["tier_3"];
    assert_eq!(
        json!([t3["status"], t3["fixtures_run"], t3["fixtures_passed"]]),
        json!(["pass", 8, 8])
    );
    assert_eq!(v["overall"], "pass");
    // Every claimed surface passes whole.
    let caps: Value = serde_json::from_str(
        &std::fs::read_to_string(repo.join(".agentxchain-conformance/capabilities.json")).unwrap(),
    )
    .unwrap();
    for (surface, claimed) in caps["surfaces"].as_object().unwrap() {
        assert_eq!(claimed, true);
        let s = [t1, t2, t3]
            .into_iter()
            .map(|t| &t["surfaces"][surface])
            .find(|s| !s.is_null())
            .unwrap();
        assert!(s["passed"].as_u64().unwrap() > 0, "{surface}");
        assert_eq!(
            (
                s["failed"].clone(),
                s["errored"].clone(),
                s["not_implemented"].clone()
            ),
            (json!(0), json!(0), json!(0)),
            "{surface}: {s}"
        );
    }
    let (code, v) = check(&repo, &["--surface", "teleport"]);
    assert_eq!(code, 2);
    assert!(
        v["stderr"]
            .as_str()
            .unwrap()
            .starts_with("Surface \"teleport\" is not claimed in capabilities.json."),
        "{v}"
    );
}

#[test]
fn an_adapter_whose_exit_code_disagrees_or_that_answers_nonsense_is_an_error() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(dir.path().join(".agentxchain-conformance")).unwrap();
    std::fs::write(
        dir.path().join("adapter.sh"),
        "#!/bin/sh\nread line\ncase \"$line\" in *EL-001*) echo '{\"status\":\"pass\"}'; exit 1;; *EL-002*) echo 'nonsense'; exit 0;; *EL-003*) sleep 100 & echo '{\"status\":\"pass\"}';; *) echo '{\"status\":\"pass\"}';; esac\n",
    )
    .unwrap();
    std::fs::write(
        dir.path().join(".agentxchain-conformance/capabilities.json"),
        r#"{"implementation": "fake", "protocol_version": "v7", "adapter": {"protocol": "stdio-fixture-v1", "command": ["sh", "adapter.sh"]}, "tiers": [1], "surfaces": {"event_lifecycle": true}}"#,
    )
    .unwrap();
    let start = std::time::Instant::now();
    let (code, v) = check(dir.path(), &["--surface", "event_lifecycle"]);
    assert_eq!(code, 2, "{v}");
    let errors: Vec<(String, String)> = v["results"]["tier_1"]["errors"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| {
            (
                e["fixture_id"].as_str().unwrap().to_owned(),
                e["message"].as_str().unwrap().to_owned(),
            )
        })
        .collect();
    assert_eq!(errors.len(), 2, "{errors:?}");
    assert_eq!(
        errors[0].1,
        "Adapter exit code 1 does not match response status \"pass\""
    );
    assert!(
        errors[1].1.starts_with("Malformed adapter response"),
        "{errors:?}"
    );
    assert_eq!(v["results"]["tier_1"]["fixtures_passed"], 6);
    // EL-003's adapter left a child holding its output open: it went with the adapter.
    assert!(
        start.elapsed() < std::time::Duration::from_secs(30),
        "{:?}",
        start.elapsed()
    );
    // A corpus with nothing to check is not a pass.
    let empty = tempfile::tempdir().unwrap();
    let out = Command::new(BIN)
        .args(["conformance", "check", "--tier", "3", "--target"])
        .arg(dir.path())
        .arg("--fixtures")
        .arg(empty.path())
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("nothing would be checked"));
}
