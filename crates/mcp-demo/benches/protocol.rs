//! Protocol benchmark on the demo server (`cargo bench -p mcp-demo`).
//!
//! Measures, with the release build of `mcp-demo`:
//! - cold start: spawn to the `initialize` reply, 50 runs (median, p90);
//! - `tools/call` round trip: 2,000 sequential calls on one process (p50, p99);
//! - peak RSS of that process (`VmHWM`).
//!
//! Prints each figure beside its target and the ratio figure/target; exits 1 if a target is
//! missed and `MCP_BENCH_STRICT=1` is set.

use std::io::{BufRead, BufReader, Write};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use mcp_testkit::bench::{peak_rss_kib, percentile};

const BIN: &str = env!("CARGO_BIN_EXE_mcp-demo");
const INIT: &[u8] = b"{\"jsonrpc\":\"2.0\",\"id\":0,\"method\":\"initialize\",\"params\":{\"protocolVersion\":\"2025-11-25\",\"capabilities\":{},\"clientInfo\":{\"name\":\"bench\",\"version\":\"1\"}}}\n";

fn spawn_demo() -> std::process::Child {
    Command::new(BIN)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("spawn mcp-demo")
}

fn cold_start(runs: usize) -> Vec<Duration> {
    let mut times = Vec::with_capacity(runs);
    for _ in 0..runs {
        let start = Instant::now();
        let mut child = spawn_demo();
        let mut stdin = child.stdin.take().unwrap();
        stdin.write_all(INIT).unwrap();
        stdin.flush().unwrap();
        let mut out = BufReader::new(child.stdout.take().unwrap());
        let mut line = String::new();
        out.read_line(&mut line).unwrap();
        times.push(start.elapsed());
        assert!(
            line.contains("\"protocolVersion\":\"2025-11-25\""),
            "unexpected reply {line}"
        );
        drop(stdin);
        child.wait().unwrap();
    }
    times.sort();
    times
}

fn round_trips(calls: usize) -> (Vec<Duration>, u64) {
    let mut child = spawn_demo();
    let mut stdin = child.stdin.take().unwrap();
    let mut out = BufReader::new(child.stdout.take().unwrap());
    let mut line = String::new();
    stdin.write_all(INIT).unwrap();
    out.read_line(&mut line).unwrap();
    let mut times = Vec::with_capacity(calls);
    for id in 1..=calls {
        let req = format!(
            "{{\"jsonrpc\":\"2.0\",\"id\":{id},\"method\":\"tools/call\",\"params\":{{\"name\":\"echo\",\"arguments\":{{\"text\":\"hello\"}}}}}}\n"
        );
        line.clear();
        let start = Instant::now();
        stdin.write_all(req.as_bytes()).unwrap();
        stdin.flush().unwrap();
        out.read_line(&mut line).unwrap();
        times.push(start.elapsed());
        debug_assert!(line.contains("structuredContent"));
    }
    let rss_kib = peak_rss_kib(child.id()).unwrap_or(0);
    drop(stdin);
    child.wait().unwrap();
    times.sort();
    (times, rss_kib)
}

fn report(name: &str, value: f64, unit: &str, target: f64) -> bool {
    let ok = value <= target;
    println!(
        "{name:<34} {value:>9.3} {unit:<3} target <= {target:>7.3} {unit:<3} ratio {:>5.2}  {}",
        value / target,
        if ok { "ok" } else { "MISSED" }
    );
    ok
}

fn main() {
    // `cargo bench` passes --bench; a filter argument is accepted and ignored.
    let ms = |d: Duration| d.as_secs_f64() * 1e3;
    let us = |d: Duration| d.as_secs_f64() * 1e6;

    cold_start(5); // warm the page cache
    let cold = cold_start(50);
    let (rt, rss_kib) = round_trips(2_000);

    println!("mcp-demo protocol benchmark ({BIN})");
    let mut ok = true;
    ok &= report(
        "cold start to initialize, median",
        ms(percentile(&cold, 0.5)),
        "ms",
        2.0,
    );
    println!(
        "{:<34} {:>9.3} ms",
        "cold start to initialize, p90",
        ms(percentile(&cold, 0.9))
    );
    ok &= report(
        "tools/call round trip, p50",
        us(percentile(&rt, 0.5)),
        "us",
        100.0,
    );
    println!(
        "{:<34} {:>9.3} us",
        "tools/call round trip, p99",
        us(percentile(&rt, 0.99))
    );
    ok &= report("peak RSS", rss_kib as f64 / 1024.0, "MiB", 5.0);
    if !ok && std::env::var_os("MCP_BENCH_STRICT").is_some() {
        std::process::exit(1);
    }
}
