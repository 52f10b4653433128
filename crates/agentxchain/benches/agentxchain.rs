//! `cargo bench -p agentxchain`: the serve-mcp figures issue 3 names.
//!
//! - cold start: spawn to the `initialize` reply (50 runs, median and p90);
//! - `agentxchain_events` with limit 50 on a generated 1 GB `events.jsonl` (median of 200 calls);
//! - `agentxchain_status` on the largest reference fixture (median of 2,000 calls).
//!
//! Each figure is printed beside its target and the JavaScript reference's figure
//! (spec/agentxchain.md §12, mcp-protocol.md §13), with the ratio to the target.

use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

use mcp_testkit::bench::{PipeServer, dir_size, median, p90};

const BIN: &str = env!("CARGO_BIN_EXE_agentxchain");
const INIT: &str = r#"{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"bench","version":"1"}}}"#;

/// `agentxchain serve-mcp` on `root`.
fn serve(root: &Path) -> PipeServer {
    let mut cmd = Command::new(BIN);
    cmd.args(["serve-mcp", "--root"]).arg(root);
    PipeServer::start(cmd)
}

fn time_calls(server: &mut PipeServer, request: &str, n: usize, check: &str) -> Vec<Duration> {
    (0..n)
        .map(|_| {
            let t = Instant::now();
            let reply = server.roundtrip(request);
            let d = t.elapsed();
            assert!(
                reply.contains(check),
                "unexpected reply: {}",
                &reply[..reply.len().min(300)]
            );
            d
        })
        .collect()
}

fn fixtures() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../../shared/fixtures/agentxchain")
}

fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for e in std::fs::read_dir(from).unwrap().flatten() {
        let target = to.join(e.file_name());
        if e.path().is_dir() {
            copy_dir(&e.path(), &target);
        } else {
            std::fs::copy(e.path(), &target).unwrap();
        }
    }
}

fn report(name: &str, value: Duration, target_ms: f64, reference: &str) {
    let ms = value.as_secs_f64() * 1e3;
    println!(
        "{name:<44} {ms:>8.3} ms  target <= {target_ms:>5.1} ms  ratio {:>5.2}  {}  (JS reference: {reference})",
        ms / target_ms,
        if ms <= target_ms { "ok" } else { "MISSED" }
    );
}

fn main() {
    let scratch = std::env::temp_dir().join(format!("axc-bench-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&scratch);

    // The largest fixture by bytes on disk.
    let largest = std::fs::read_dir(fixtures())
        .unwrap()
        .flatten()
        .filter(|e| e.path().join("project/agentxchain.json").is_file())
        .max_by_key(|e| dir_size(&e.path().join("project")))
        .unwrap();
    let status_root = scratch.join("status");
    copy_dir(&largest.path().join("project"), &status_root);

    // Cold start.
    let mut cold = Vec::new();
    for i in 0..55 {
        let t = Instant::now();
        let mut s = serve(&status_root);
        let reply = s.roundtrip(INIT).to_owned();
        if i >= 5 {
            cold.push(t.elapsed());
        }
        assert!(reply.contains("\"protocolVersion\":\"2025-11-25\""));
        s.stop();
    }

    // Status on the largest fixture.
    let mut s = serve(&status_root);
    s.roundtrip(INIT);
    let status_req = r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"agentxchain_status","arguments":{}}}"#;
    time_calls(&mut s, status_req, 100, "\\\"ok\\\": true");
    let status = time_calls(&mut s, status_req, 2_000, "\\\"ok\\\": true");
    s.stop();

    // Events on a 1 GB log.
    let events_root = scratch.join("events");
    copy_dir(
        &fixtures().join("scratch-completed-run/project"),
        &events_root,
    );
    let log = events_root.join(".agentxchain/events.jsonl");
    let t = Instant::now();
    {
        let mut w = BufWriter::with_capacity(1 << 20, std::fs::File::create(&log).unwrap());
        let mut written = 0u64;
        let mut i = 0u64;
        while written < 1_000_000_000 {
            let line = format!(
                "{{\"event_id\":\"evt_{i:016x}\",\"event_type\":\"turn_accepted\",\"timestamp\":\"2026-11-30T08:54:20.866Z\",\"run_id\":\"run_d2e4603cc697cc64\",\"phase\":\"implementation\",\"status\":\"active\",\"turn\":{{\"turn_id\":\"turn_{i:016x}\",\"role_id\":\"dev\"}},\"intent_id\":null,\"payload\":{{\"summary\":\"accepted turn {i}\"}}}}\n"
            );
            w.write_all(line.as_bytes()).unwrap();
            written += line.len() as u64;
            i += 1;
        }
    }
    let log_size = std::fs::metadata(&log).unwrap().len();
    println!(
        "generated {:.2} GB events log in {:.1} s",
        log_size as f64 / 1e9,
        t.elapsed().as_secs_f64()
    );
    let mut s = serve(&events_root);
    s.roundtrip(INIT);
    let events_req = r#"{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"agentxchain_events","arguments":{"limit":50}}}"#;
    time_calls(&mut s, events_req, 10, "\\\"count\\\": 50");
    let events = time_calls(&mut s, events_req, 200, "\\\"count\\\": 50");
    s.stop();
    let _ = std::fs::remove_dir_all(&scratch);

    println!("agentxchain serve-mcp benchmark ({BIN})");
    report(
        "cold start to initialize reply, median",
        median(cold.clone()),
        2.0,
        "522 ms",
    );
    println!(
        "{:<44} {:>8.3} ms",
        "cold start to initialize reply, p90",
        p90(cold).as_secs_f64() * 1e3
    );
    report(
        "agentxchain_events limit 50 on 1 GB, median",
        median(events.clone()),
        5.0,
        "14-45 ms on a 970 KB log",
    );
    println!(
        "{:<44} {:>8.3} ms",
        "agentxchain_events limit 50 on 1 GB, p90",
        p90(events).as_secs_f64() * 1e3
    );
    let largest_name = largest.file_name();
    report(
        &format!(
            "agentxchain_status ({}), median",
            largest_name.to_string_lossy()
        ),
        median(status.clone()),
        1.0,
        "1-13 ms",
    );
    println!(
        "{:<44} {:>8.3} ms",
        "agentxchain_status, p90",
        p90(status).as_secs_f64() * 1e3
    );
}
