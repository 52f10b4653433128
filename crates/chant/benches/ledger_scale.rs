//! `cargo bench -p chant --bench ledger_scale [-- runs|list|gates] [-- --sizes 1,10000]`: how the
//! ledger's cost grows with history (issue 16).
//!
//! - `runs`: `chant run deploy` and `chant run status deploy` (process spawn to exit, medians)
//!   with 1, 10,000, 100,000 and 1,000,000 earlier runs of the Op on `chant/lifecycle`, each
//!   run a 327-byte record a minute before the next, written with `git fast-import`: one file
//!   per run in the layout this build writes, or (`LEDGER_LAYOUT=legacy`) every run a line of
//!   `local/runs__deploy.jsonl`, the layout earlier releases wrote.
//! - `list`: MCP `op-list` on 1,000 Ops, each with one run: the first call of a server (cold)
//!   and the median of later calls (warm).
//! - `gates`: one gate decision (the facts it reads, then the decision) with 100,000 earlier
//!   facts of the gate, in-process, in both layouts.
//!
//! `CHANT_BENCH_BIN` measures another binary (an earlier release) for side-by-side figures.

use std::io::Write;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use mcp_testkit::bench::{PipeServer, median};

static BIN: std::sync::LazyLock<String> = std::sync::LazyLock::new(|| {
    std::env::var("CHANT_BENCH_BIN").unwrap_or_else(|_| env!("CARGO_BIN_EXE_chant").to_owned())
});

const INIT: &str =
    r#"{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25"}}"#;

const DEPLOY: &str = r#"import { Op, phase, shell } from "@intentius/chant-lexicon-temporal";
export default Op({ name: "deploy", overview: "Deploy", phases: [phase("Run", [shell("true")])] });
"#;

fn legacy() -> bool {
    std::env::var("LEDGER_LAYOUT").is_ok_and(|v| v == "legacy")
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1e3
}

fn git(dir: &Path, args: &[&str]) -> String {
    let out = Command::new("git")
        .args(args)
        .current_dir(dir)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "git {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).trim().to_owned()
}

/// A git repository holding a temporal project with `ops` (name, source) committed on main.
fn project(ops: &[(String, String)]) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    git(root, &["init", "-q", "-b", "main"]);
    for (k, v) in [("user.name", "Bench"), ("user.email", "bench@example.com")] {
        git(root, &["config", k, v]);
    }
    std::fs::create_dir_all(root.join("ops")).unwrap();
    std::fs::write(
        root.join("chant.config.json"),
        r#"{"lexicons":["temporal"]}"#,
    )
    .unwrap();
    for (name, source) in ops {
        std::fs::write(root.join(format!("ops/{name}.op.ts")), source).unwrap();
    }
    git(root, &["add", "."]);
    git(root, &["commit", "-q", "-m", "project"]);
    dir
}

/// A run record of `op` started at `ms`, 327 bytes as in the issue's measurement.
fn run_record(op: &str, ms: u64) -> String {
    let started = chant_ops::time::iso(ms);
    let ended = chant_ops::time::iso(ms + 3);
    let base = format!(
        r#"{{"ended":"{ended}","env":"local","id":"local-{ms}","labels":{{}},"op":"{op}","outcomes":{{}},"phases":[{{"durationMs":3,"name":"Run","status":"ok","steps":[{{"durationMs":3,"fn":"shell","status":"ok"}}]}}],"started":"{started}","status":"ok","version":1"#
    );
    let pad = 327usize.saturating_sub(base.len() + 10);
    format!("{base},\"x\":\"{}\"}}", "-".repeat(pad))
}

/// Writes `records` (`(path, bytes)`, or lines of one legacy file) onto `chant/lifecycle` in
/// one commit with `git fast-import`.
fn fast_import(root: &Path, files: impl Iterator<Item = (String, Vec<u8>)>) {
    let mut child = Command::new("git")
        .args(["fast-import", "--quiet", "--force"])
        .current_dir(root)
        .stdin(Stdio::piped())
        .spawn()
        .unwrap();
    let mut w = std::io::BufWriter::new(child.stdin.take().unwrap());
    writeln!(
        w,
        "commit refs/heads/chant/lifecycle\ncommitter bench <bench@localhost> 1796000000 +0000\ndata 7\nhistory"
    )
    .unwrap();
    for (path, bytes) in files {
        writeln!(w, "M 100644 inline {path}\ndata {}", bytes.len()).unwrap();
        w.write_all(&bytes).unwrap();
        w.write_all(b"\n").unwrap();
    }
    w.write_all(b"\n").unwrap();
    drop(w);
    assert!(child.wait().unwrap().success());
}

/// `n` runs of `op`, a minute apart, ending an hour ago: one file each, or one legacy file.
fn runs_history(root: &Path, ops: &[&str], n: u64) {
    let now = chant_ops::time::SystemClock;
    let end = chant_ops::time::Clock::now_ms(&now) - 3_600_000;
    let times = move || (0..n).map(move |i| end - (n - i) * 60_000);
    if legacy() {
        fast_import(
            root,
            ops.iter().map(|op| {
                let lines: Vec<String> = times().map(|t| run_record(op, t)).collect();
                (
                    chant_ops::records::legacy_runs_path("local", op),
                    lines.join("\n").into_bytes(),
                )
            }),
        );
    } else {
        fast_import(
            root,
            ops.iter().flat_map(|op| {
                let dir = chant_ops::records::runs_dir("local", op);
                times().map(move |t| {
                    let p = chant_ops::layout::place(&dir, t);
                    (
                        format!("{}/{}-0000.jsonl", p.dir, p.stem),
                        run_record(op, t).into_bytes(),
                    )
                })
            }),
        );
    }
}

fn timed(root: &Path, args: &[&str]) -> Duration {
    let t = Instant::now();
    let out = Command::new(&*BIN)
        .args(args)
        .current_dir(root)
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .output()
        .unwrap();
    let d = t.elapsed();
    assert!(
        out.status.success(),
        "chant {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    d
}

fn bench_runs(sizes: &[u64]) {
    println!(
        "layout: {}; binary: {}",
        if legacy() {
            "legacy (runs__<op>.jsonl)"
        } else {
            "one file per run"
        },
        *BIN
    );
    println!(
        "{:>10} {:>12} {:>14} {:>10}",
        "runs", "run ms", "status ms", "build s"
    );
    let mut first: Option<(f64, f64)> = None;
    for &n in sizes {
        let dir = project(&[("deploy".into(), DEPLOY.into())]);
        let t = Instant::now();
        runs_history(dir.path(), &["deploy"], n);
        let built = t.elapsed().as_secs_f64();
        // Warm the file cache, then measure; fewer repetitions where one takes seconds.
        let probe = timed(dir.path(), &["run", "status", "deploy"]);
        let reps = if probe > Duration::from_secs(1) {
            3
        } else {
            11
        };
        let run = median(
            (0..reps)
                .map(|_| timed(dir.path(), &["run", "deploy"]))
                .collect(),
        );
        let status = median(
            (0..reps)
                .map(|_| timed(dir.path(), &["run", "status", "deploy"]))
                .collect(),
        );
        let (r, s) = (ms(run), ms(status));
        let (r1, s1) = *first.get_or_insert((r, s));
        println!(
            "{n:>10} {r:>12.1} {s:>14.1} {built:>10.1}   ratio to 1 run: run {:.2}x, status {:.2}x",
            r / r1,
            s / s1
        );
    }
}

fn bench_list() {
    let names: Vec<String> = (0..1000).map(|i| format!("op-{i:04}")).collect();
    let ops: Vec<(String, String)> = names
        .iter()
        .map(|n| {
            (
                n.clone(),
                DEPLOY.replace("name: \"deploy\"", &format!("name: \"{n}\"")),
            )
        })
        .collect();
    let dir = project(&ops);
    let refs: Vec<&str> = names.iter().map(String::as_str).collect();
    runs_history(dir.path(), &refs, 1);
    // A project as it usually is: nothing written in the last seconds. (A file changed less
    // than 2 s ago is read and hashed on every call, since its stat cannot yet stand for it.)
    std::thread::sleep(Duration::from_secs(3));
    let call = r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"op-list","arguments":{}}}"#;
    let mut colds = Vec::new();
    let mut warms = Vec::new();
    for _ in 0..3 {
        let mut cmd = Command::new(&*BIN);
        cmd.args(["serve", "mcp"]).current_dir(dir.path());
        let mut s = PipeServer::start(cmd);
        s.roundtrip(INIT);
        s.send(r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#);
        let t = Instant::now();
        let reply = s.roundtrip(call).to_owned();
        colds.push(t.elapsed());
        assert!(
            reply.contains("op-0999"),
            "{}",
            &reply[..reply.len().min(300)]
        );
        for _ in 0..20 {
            let t = Instant::now();
            s.roundtrip(call);
            warms.push(t.elapsed());
        }
        s.stop();
    }
    // One Op file changed between calls: what one changed file costs.
    let mut cmd = Command::new(&*BIN);
    cmd.args(["serve", "mcp"]).current_dir(dir.path());
    let mut s = PipeServer::start(cmd);
    s.roundtrip(INIT);
    s.roundtrip(call);
    let mut changed = Vec::new();
    for i in 0..10 {
        let n = &names[i * 7];
        std::fs::write(
            dir.path().join(format!("ops/{n}.op.ts")),
            DEPLOY
                .replace("name: \"deploy\"", &format!("name: \"{n}\""))
                .replace("Deploy", &format!("Deploy v{i}")),
        )
        .unwrap();
        let t = Instant::now();
        s.roundtrip(call);
        changed.push(t.elapsed());
    }
    s.stop();
    println!(
        "op-list over MCP, 1,000 Ops with one run each (binary: {}):",
        *BIN
    );
    println!(
        "  cold (first call of a server, median of 3)  {:>9.1} ms",
        ms(median(colds))
    );
    println!(
        "  warm (nothing changed, median of 60)         {:>9.1} ms   target <= 10 ms",
        ms(median(warms))
    );
    println!(
        "  one Op file changed (median of 10)           {:>9.1} ms",
        ms(median(changed))
    );
}

fn bench_gates() {
    let n = 100_000u64;
    for legacy_layout in [true, false] {
        let dir = project(&[("deploy".into(), DEPLOY.into())]);
        let now = chant_ops::time::Clock::now_ms(&chant_ops::time::SystemClock);
        let digest = format!("sha256:{}", "a".repeat(64));
        // Pairs of a pending fact and its approval, a minute apart, the newest a pending
        // fact still standing.
        let fact = |i: u64| {
            let t = now - (n - i) * 60_000;
            let ts = chant_ops::time::iso(t);
            let line = if i.is_multiple_of(2) {
                let exp =
                    chant_ops::time::iso(t + 120_000 + if i == n - 2 { 86_400_000 } else { 0 });
                format!(
                    r#"{{"expiresAt":"{exp}","gate":"ship-it","kind":"pending","op":"deploy","origin":"cli","planDigest":"{digest}","timestamp":"{ts}","version":1}}"#
                )
            } else {
                format!(
                    r#"{{"gate":"ship-it","kind":"resolution","op":"deploy","origin":"cli","planDigest":"{digest}","resolvedBy":"sam","timestamp":"{ts}","version":1}}"#
                )
            };
            (t, line)
        };
        if legacy_layout {
            let lines: Vec<String> = (0..n - 1).map(|i| fact(i).1).collect();
            fast_import(
                dir.path(),
                std::iter::once((
                    "_gates/deploy.jsonl".to_owned(),
                    lines.join("\n").into_bytes(),
                )),
            );
        } else {
            let gate = chant_ops::gates::gate_dir("deploy", "ship-it");
            fast_import(
                dir.path(),
                (0..n - 1).map(|i| {
                    let (t, line) = fact(i);
                    let p = chant_ops::layout::place(&gate, t);
                    (
                        format!("{}/{}-0000.jsonl", p.dir, p.stem),
                        line.into_bytes(),
                    )
                }),
            );
        }
        let ledger = gitledger::Ledger::open(dir.path()).unwrap();
        let decide = || {
            let (facts, _) = chant_ops::gates::load(&ledger, "deploy", "ship-it", now).unwrap();
            chant_ops::gates::decide(&facts, "ship-it", now)
        };
        assert!(matches!(decide(), chant_ops::gates::GateState::Standing(_)));
        let times: Vec<Duration> = (0..30)
            .map(|_| {
                let t = Instant::now();
                std::hint::black_box(decide());
                t.elapsed()
            })
            .collect();
        println!(
            "one gate decision, {n} earlier facts, {:<28} {:>8.2} ms   target <= 15 ms",
            if legacy_layout {
                "legacy _gates/<op>.jsonl:"
            } else {
                "one file per fact:"
            },
            ms(median(times))
        );
    }
}

/// A forger's flood: 100,000 files in the gate's current hour (names chant never gives a
/// record, and 5,000 named as records holding no fact), and `chant run status` on it.
fn bench_flood() {
    let dir = project(&[("deploy".into(), DEPLOY.into())]);
    let now = chant_ops::time::Clock::now_ms(&chant_ops::time::SystemClock);
    let gate = chant_ops::gates::gate_dir("deploy", "ship-it");
    let p = chant_ops::layout::place(&gate, now);
    fast_import(
        dir.path(),
        (0..100_000)
            .map(|i| (format!("{}/zz{i:07}.jsonl", p.dir), b"{}".to_vec()))
            .chain((0..5_000).map(|i| {
                (
                    format!("{}/{}-{i:04}.jsonl", p.dir, p.stem),
                    b"not a fact".to_vec(),
                )
            })),
    );
    let status = median(
        (0..5)
            .map(|_| timed(dir.path(), &["run", "status", "deploy"]))
            .collect(),
    );
    println!(
        "chant run status with a 105,000-file flood in the gate's hour: {:>8.1} ms",
        ms(status)
    );
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let sizes: Vec<u64> = args
        .iter()
        .position(|a| a == "--sizes")
        .and_then(|i| args.get(i + 1))
        .map(|s| s.split(',').filter_map(|x| x.parse().ok()).collect())
        .unwrap_or_else(|| vec![1, 10_000, 100_000, 1_000_000]);
    // Words are filters, as `cargo bench -- <filter>` passes them to every bench binary: no
    // word runs every group, a word names the groups to run (another bench's word, none).
    let words: Vec<&String> = args
        .iter()
        .enumerate()
        .filter(|(i, a)| !a.starts_with('-') && (*i == 0 || args[i - 1] != "--sizes"))
        .map(|(_, a)| a)
        .collect();
    let wanted = |g: &str| words.is_empty() || words.iter().any(|a| *a == g);
    if wanted("runs") {
        bench_runs(&sizes);
    }
    if wanted("gates") {
        bench_gates();
        bench_flood();
    }
    if wanted("list") {
        bench_list();
    }
}
