//! `agentxchain conformance check`: runs an implementation's `stdio-fixture-v1` adapter (named
//! by `<target>/.agentxchain-conformance/capabilities.json`) over the corpus, tier by tier,
//! and reports what passed, failed, errored and is not implemented.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Duration;

use axc_kernel::process::{kill_group, reader};
use serde_json::{Map, Value as Json, json};

/// How long one fixture may take the adapter, and the most it may print.
const FIXTURE_TIMEOUT: Duration = Duration::from_secs(60);
const MAX_OUTPUT: usize = 16 << 20;

/// What to check.
pub struct Check<'a> {
    pub target: &'a Path,
    pub tier: u64,
    pub surface: Option<&'a str>,
    /// The corpus: `<tier>/<surface>/<id>.json` files.
    pub fixtures: &'a Path,
}

/// The capabilities an implementation claims, checked.
fn capabilities(target: &Path) -> Result<Json, String> {
    let path = target.join(".agentxchain-conformance/capabilities.json");
    let text = std::fs::read_to_string(&path)
        .map_err(|e| format!("Cannot read {}: {e}", path.display()))?;
    let caps: Json = serde_json::from_str(&text)
        .map_err(|e| format!("{} is not valid JSON: {e}", path.display()))?;
    if caps["implementation"]
        .as_str()
        .is_none_or(|s| s.trim().is_empty())
    {
        return Err(format!(
            "{}: implementation must be a non-empty string",
            path.display()
        ));
    }
    let tiers = caps["tiers"].as_array().filter(|t| !t.is_empty());
    if !tiers.is_some_and(|t| t.iter().all(|x| matches!(x.as_u64(), Some(1..=3)))) {
        return Err(format!(
            "{}: tiers must be a non-empty list of 1, 2 and 3",
            path.display()
        ));
    }
    if caps["adapter"]["protocol"] != "stdio-fixture-v1" {
        return Err(format!(
            "{}: adapter.protocol must be \"stdio-fixture-v1\"",
            path.display()
        ));
    }
    let command = caps["adapter"]["command"].as_array();
    if !command.is_some_and(|c| {
        !c.is_empty() && c.iter().all(|w| w.as_str().is_some_and(|s| !s.is_empty()))
    }) {
        return Err(format!(
            "{}: adapter.command must be a non-empty list of strings",
            path.display()
        ));
    }
    Ok(caps)
}

/// The corpus's fixtures up to `tier` (and of `surface`), in path order.
fn fixtures(root: &Path, tier: u64, surface: Option<&str>) -> Result<Vec<Json>, String> {
    if !root.is_dir() {
        return Err(format!("Fixture root not found at {}", root.display()));
    }
    let mut files: Vec<PathBuf> = Vec::new();
    let mut stack = vec![root.to_path_buf()];
    while let Some(dir) = stack.pop() {
        for e in std::fs::read_dir(&dir).map_err(|e| format!("{}: {e}", dir.display()))? {
            let e = e.map_err(|e| e.to_string())?;
            let p = e.path();
            // Links are not followed (a loop would count a fixture many times, or never end)
            // and only regular files are read (a FIFO would block).
            let ty = e.file_type().map_err(|e| format!("{}: {e}", p.display()))?;
            if ty.is_dir() {
                stack.push(p);
            } else if ty.is_file() && p.extension().is_some_and(|x| x == "json") {
                files.push(p);
            }
        }
    }
    files.sort();
    let mut out = Vec::new();
    for f in files {
        let text = std::fs::read_to_string(&f).map_err(|e| format!("{}: {e}", f.display()))?;
        let fx: Json = serde_json::from_str(&text).map_err(|e| format!("{}: {e}", f.display()))?;
        for key in ["fixture_id", "surface", "type"] {
            if fx[key].as_str().is_none() {
                return Err(format!("{}: fixture needs a string {key}", f.display()));
            }
        }
        let Some(t) = fx["tier"].as_u64() else {
            return Err(format!("{}: fixture needs a numeric tier", f.display()));
        };
        if fx["input"]["operation"].as_str().is_none() {
            return Err(format!("{}: fixture needs input.operation", f.display()));
        }
        if t <= tier && surface.is_none_or(|s| fx["surface"] == s) {
            out.push(fx);
        }
    }
    Ok(out)
}

/// One fixture through the adapter: its response, or an error response saying what went
/// wrong (an exit code that disagrees with the status is an error too).
fn execute(target: &Path, command: &[String], fixture: &Json) -> Json {
    let err = |m: String, actual: Json| json!({"status": "error", "message": m, "actual": actual});
    let mut cmd = Command::new(&command[0]);
    cmd.args(&command[1..])
        .current_dir(target)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    // Its own process group, so the deadline ends the adapter and everything it started.
    std::os::unix::process::CommandExt::process_group(&mut cmd, 0);
    let mut child = match cmd.spawn() {
        Ok(c) => c,
        Err(e) => return err(format!("Failed to execute adapter: {e}"), Json::Null),
    };
    let start = std::time::Instant::now();
    // Written on its own thread: an adapter that never reads its input still meets the
    // deadline.
    let input = format!("{fixture}\n");
    let mut stdin = child.stdin.take();
    std::thread::spawn(move || {
        if let Some(s) = stdin.as_mut() {
            let _ = s.write_all(input.as_bytes());
        }
    });
    let stdout = reader(child.stdout.take(), MAX_OUTPUT);
    let stderr = reader(child.stderr.take(), MAX_OUTPUT);
    use wait_timeout::ChildExt;
    let pid = child.id();
    let timed_out = || {
        err(
            format!("Adapter took longer than {} s", FIXTURE_TIMEOUT.as_secs()),
            Json::Null,
        )
    };
    let status = match child.wait_timeout(FIXTURE_TIMEOUT) {
        Ok(Some(s)) => s,
        Ok(None) => {
            kill_group(pid);
            let _ = child.kill();
            let _ = child.wait();
            return timed_out();
        }
        Err(e) => return err(format!("Failed to execute adapter: {e}"), Json::Null),
    };
    // What the adapter left running goes with it; its output is what it wrote by the deadline.
    kill_group(pid);
    let left = FIXTURE_TIMEOUT.saturating_sub(start.elapsed()) + Duration::from_millis(200);
    let Ok((out_bytes, too_much)) = stdout.recv_timeout(left) else {
        return timed_out();
    };
    if too_much {
        return err(
            format!("Adapter wrote more than {MAX_OUTPUT} bytes"),
            Json::Null,
        );
    }
    let out = std::process::Output {
        status,
        stdout: out_bytes,
        stderr: stderr
            .recv_timeout(Duration::from_millis(200))
            .map(|(b, _)| b)
            .unwrap_or_default(),
    };
    let code = out.status.code().unwrap_or(-1);
    if !(0..=3).contains(&code) {
        return err(
            format!("Adapter exited with unsupported status {code}"),
            json!({"exit_code": code, "stderr": String::from_utf8_lossy(&out.stderr).trim()}),
        );
    }
    let stdout = String::from_utf8_lossy(&out.stdout);
    let parsed: Json = match serde_json::from_str(if stdout.trim().is_empty() {
        "{}"
    } else {
        stdout.trim()
    }) {
        Ok(v) => v,
        Err(e) => {
            return err(
                format!("Malformed adapter response: {e}"),
                json!({"stdout": stdout, "stderr": String::from_utf8_lossy(&out.stderr)}),
            );
        }
    };
    let expected = match parsed["status"].as_str() {
        Some("pass") => 0,
        Some("fail") => 1,
        Some("error") => 2,
        Some("not_implemented") => 3,
        _ => {
            return err(
                "Adapter response missing valid \"status\"".to_owned(),
                parsed,
            );
        }
    };
    if code != expected {
        return err(
            format!(
                "Adapter exit code {code} does not match response status \"{}\"",
                parsed["status"].as_str().unwrap_or("")
            ),
            parsed,
        );
    }
    parsed
}

fn summary(status: &str, note: Option<String>) -> Json {
    let mut s = json!({
        "status": status, "fixtures_run": 0, "fixtures_passed": 0, "fixtures_failed": 0,
        "fixtures_errored": 0, "fixtures_not_implemented": 0, "surfaces": {},
        "failures": [], "errors": [], "not_implemented": [],
    });
    if let Some(n) = note {
        s["note"] = json!(n);
    }
    s
}

fn push(tier: &mut Json, list: &str, entry: Json) {
    if let Some(a) = tier[list].as_array_mut() {
        a.push(entry);
    }
}

fn bump(v: &mut Json, key: &str) {
    v[key] = json!(v[key].as_u64().unwrap_or(0) + 1);
}

/// The report and the exit code: 0 pass, 1 fail, 2 error. Setup problems are `Err` (exit 2).
pub fn check(c: &Check<'_>) -> Result<(Json, i32), String> {
    if !(1..=3).contains(&c.tier) {
        return Err(format!("Tier must be 1, 2, or 3. Received \"{}\"", c.tier));
    }
    let caps = capabilities(c.target)?;
    if let (Some(s), Some(claimed)) = (c.surface, caps["surfaces"].as_object())
        && claimed.get(s) != Some(&Json::Bool(true))
    {
        return Err(format!(
            "Surface \"{s}\" is not claimed in capabilities.json. Claimed surfaces: {}",
            claimed.keys().cloned().collect::<Vec<_>>().join(", ")
        ));
    }
    let command: Vec<String> = caps["adapter"]["command"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|w| w.as_str().map(str::to_owned))
        .collect();
    let list = fixtures(c.fixtures, c.tier, c.surface)?;
    if list.is_empty() {
        return Err(format!(
            "No fixtures of tier {} or lower{} under {}: nothing would be checked",
            c.tier,
            c.surface
                .map(|s| format!(" for surface \"{s}\""))
                .unwrap_or_default(),
            c.fixtures.display()
        ));
    }
    let claimed: Vec<u64> = caps["tiers"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(Json::as_u64)
        .collect();
    let mut results = Map::new();
    for t in 1..=c.tier {
        results.insert(
            format!("tier_{t}"),
            if claimed.contains(&t) {
                summary("pass", None)
            } else {
                summary("skipped", Some(format!("Target does not claim Tier {t}")))
            },
        );
    }
    let mut overall = "pass";
    for fx in &list {
        let key = format!("tier_{}", fx["tier"].as_u64().unwrap_or(0));
        let Some(tier) = results.get_mut(&key).filter(|t| t["status"] != "skipped") else {
            continue;
        };
        let surface = fx["surface"].as_str().unwrap_or("").to_owned();
        if tier["surfaces"].get(&surface).is_none() {
            tier["surfaces"][&surface] =
                json!({"passed": 0, "failed": 0, "errored": 0, "not_implemented": 0});
        }
        let r = execute(c.target, &command, fx);
        bump(tier, "fixtures_run");
        let entry = |default: &str| {
            json!({"fixture_id": fx["fixture_id"], "surface": surface,
                   "message": r["message"].as_str().unwrap_or(default), "actual": r.get("actual").cloned().unwrap_or(Json::Null)})
        };
        match r["status"].as_str() {
            Some("pass") => {
                bump(tier, "fixtures_passed");
                bump(&mut tier["surfaces"][&surface], "passed");
            }
            Some("not_implemented") => {
                bump(tier, "fixtures_not_implemented");
                bump(&mut tier["surfaces"][&surface], "not_implemented");
                let mut e = entry("Not implemented");
                if let Some(o) = e.as_object_mut() {
                    o.remove("actual");
                }
                push(tier, "not_implemented", e);
            }
            Some("fail") => {
                bump(tier, "fixtures_failed");
                bump(&mut tier["surfaces"][&surface], "failed");
                if tier["status"] == "pass" {
                    tier["status"] = json!("fail");
                }
                let e = entry("Fixture failed");
                push(tier, "failures", e);
                if overall == "pass" {
                    overall = "fail";
                }
            }
            _ => {
                bump(tier, "fixtures_errored");
                bump(&mut tier["surfaces"][&surface], "errored");
                tier["status"] = json!("error");
                let e = entry("Fixture errored");
                push(tier, "errors", e);
                overall = "error";
            }
        }
    }
    let report = json!({
        "implementation": caps["implementation"],
        "protocol_version": caps.get("protocol_version").cloned().unwrap_or(Json::Null),
        "tier_requested": c.tier,
        "target_root": c.target.display().to_string(),
        "fixture_root": c.fixtures.display().to_string(),
        "results": results,
        "overall": overall,
    });
    let code = match overall {
        "pass" => 0,
        "fail" => 1,
        _ => 2,
    };
    Ok((report, code))
}

/// The report as a person reads it.
pub fn render(report: &Json) -> String {
    let mut out = format!(
        "Protocol conformance: {} ({})\n",
        report["implementation"].as_str().unwrap_or(""),
        report["protocol_version"]
            .as_str()
            .unwrap_or("unknown protocol")
    );
    for (tier, s) in report["results"].as_object().into_iter().flatten() {
        out.push_str(&format!(
            "  {tier}: {} — {} run, {} passed, {} failed, {} errored, {} not implemented\n",
            s["status"].as_str().unwrap_or(""),
            s["fixtures_run"],
            s["fixtures_passed"],
            s["fixtures_failed"],
            s["fixtures_errored"],
            s["fixtures_not_implemented"]
        ));
        for (kind, list) in [("FAIL", &s["failures"]), ("ERROR", &s["errors"])] {
            for f in list.as_array().into_iter().flatten() {
                out.push_str(&format!(
                    "    {kind} {} ({}): {}\n",
                    f["fixture_id"].as_str().unwrap_or(""),
                    f["surface"].as_str().unwrap_or(""),
                    f["message"].as_str().unwrap_or("")
                ));
            }
        }
    }
    out.push_str(&format!(
        "Overall: {}\n",
        report["overall"].as_str().unwrap_or("")
    ));
    out
}
