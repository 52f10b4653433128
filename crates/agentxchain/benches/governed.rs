//! `cargo bench -p agentxchain --bench governed`: the governed-run command figures issue 14
//! names — assignment and dispatch (`resume`, step's first half), `accept-turn`, a whole `step`
//! with a `local_cli` agent (a shell script staging its result: spawn, wait, validate, accept,
//! checkpoint) on a project with 10,000 history entries and a 1 GB event log, beside the same
//! project with a small log (the latency must not grow with the log), and `status`. Each
//! figure is a cold CLI process, median of N.

use std::io::{BufWriter, Write};
use std::path::Path;
use std::process::Command;
use std::time::{Duration, Instant};

use mcp_testkit::bench::{median, p90};
use serde_json::{Value, json};

const BIN: &str = env!("CARGO_BIN_EXE_agentxchain");
const N: usize = 30;

/// The binary measured: this build's, or `AGENTXCHAIN_BENCH_BIN` (another build, to compare
/// side by side on the same machine and moment).
fn bin() -> String {
    std::env::var("AGENTXCHAIN_BENCH_BIN").unwrap_or_else(|_| BIN.to_owned())
}

/// This bench's scratch directory.
fn scratch() -> std::path::PathBuf {
    std::env::temp_dir().join(format!("axc-governed-bench-{}", std::process::id()))
}

fn run(root: &Path, args: &[&str]) -> Duration {
    let t = Instant::now();
    let out = Command::new(bin())
        .args(args)
        .current_dir(root)
        // The hooks allowed in the bench's own allow list, never the user's.
        .env("AGENTXCHAIN_HOME", scratch().join("home"))
        .output()
        .unwrap();
    let d = t.elapsed();
    assert!(
        out.status.success(),
        "{args:?}: {}",
        String::from_utf8_lossy(&out.stdout)
    );
    d
}

fn git(root: &Path, args: &[&str]) {
    let ok = Command::new("git")
        .args(["-c", "user.name=b", "-c", "user.email=b@example.invalid"])
        .args(args)
        .current_dir(root)
        .output()
        .unwrap()
        .status
        .success();
    assert!(ok, "git {args:?}");
}

/// A committed governed project with `history` accepted turns and an event log of about
/// `log_bytes`.
fn project(root: &Path, history: usize, log_bytes: u64) {
    std::fs::create_dir_all(root).unwrap();
    git(root, &["init", "-q", "-b", "main"]);
    run(root, &["init", "--governed", "-y"]);
    // The pm is a local_cli agent (authoritative: local_cli may not be review-only) that stages
    // a review result for its turn.
    let agent = root.join("agent.sh");
    std::fs::write(&agent, AGENT).unwrap();
    let cfg_path = root.join("agentxchain.json");
    let mut cfg: Value =
        serde_json::from_str(&std::fs::read_to_string(&cfg_path).unwrap()).unwrap();
    cfg["runtimes"]["local-pm"] = json!({"type": "local_cli", "command": ["sh", agent.display().to_string()], "prompt_transport": "stdin"});
    cfg["roles"]["pm"]["runtime"] = json!("local-pm");
    cfg["roles"]["pm"]["write_authority"] = json!("authoritative");
    std::fs::write(&cfg_path, serde_json::to_string_pretty(&cfg).unwrap()).unwrap();
    git(root, &["add", "-A"]);
    git(root, &["commit", "-qm", "scaffold"]);
    let mut h =
        BufWriter::new(std::fs::File::create(root.join(".agentxchain/history.jsonl")).unwrap());
    for i in 0..history {
        let entry = json!({
            "turn_id": format!("turn_{i:016x}"), "run_id": "run_0000000000000000", "role": "pm",
            "phase": "planning", "runtime_id": "manual-pm", "status": "completed",
            "summary": format!("turn {i}: a summary of what was done in this turn, as agents write them"),
            "decisions": [{"id": "DEC-001", "category": "process", "statement": "proceed", "rationale": "bench"}],
            "objections": [{"id": "OBJ-001", "severity": "low", "against_turn_id": "turn_x", "statement": "nit", "status": "raised"}],
            "files_changed": [".planning/ROADMAP.md"], "artifacts_created": [],
            "verification": {"status": "pass", "commands": ["true"], "evidence_summary": "ok", "machine_evidence": [{"command": "true", "exit_code": 0}]},
            "artifact": {"type": "review", "ref": null}, "proposed_next_role": "pm",
            "phase_transition_request": null, "run_completion_request": false,
            "assigned_sequence": i, "accepted_sequence": i + 1, "concurrent_with": [],
            "cost": {"input_tokens": 10, "output_tokens": 10, "usd": 0.0}, "accepted_at": "2026-11-30T08:54:20.866Z",
            "checkpoint_sha": "0000000000000000000000000000000000000000",
        });
        writeln!(h, "{entry}").unwrap();
    }
    h.into_inner().unwrap().sync_all().unwrap();
    let mut w = BufWriter::with_capacity(
        1 << 20,
        std::fs::File::create(root.join(".agentxchain/events.jsonl")).unwrap(),
    );
    let mut written = 0u64;
    let mut i = 0u64;
    while written < log_bytes {
        let line = format!(
            "{{\"event_id\":\"evt_{i:016x}\",\"event_type\":\"turn_accepted\",\"timestamp\":\"2026-11-30T08:54:20.866Z\",\"run_id\":\"run_0000000000000000\",\"phase\":\"planning\",\"status\":\"active\",\"turn\":{{\"turn_id\":\"turn_{i:016x}\",\"role_id\":\"pm\"}},\"intent_id\":null,\"payload\":{{}}}}\n"
        );
        w.write_all(line.as_bytes()).unwrap();
        written += line.len() as u64;
        i += 1;
    }
    // On disk before anything is timed: the kernel writing a gigabyte back while the commands
    // run would be measured as theirs (it doubled `status` in earlier rounds).
    w.into_inner().unwrap().sync_all().unwrap();
}

/// The bench's agent: reads its prompt, says a line, stages a review result for its turn.
const AGENT: &str = r#"#!/bin/sh
cat > /dev/null
run=$(sed -n 's/.*"run_id": "\(run_[0-9a-f]*\)".*/\1/p' .agentxchain/state.json | head -n 1)
t="$AGENTXCHAIN_TURN_ID"
echo "working on $t"
mkdir -p ".agentxchain/staging/$t"
printf '{"schema_version":"1.0","run_id":"%s","turn_id":"%s","role":"pm","runtime_id":"local-pm","status":"completed","summary":"bench turn","decisions":[{"id":"DEC-001","category":"process","statement":"go","rationale":"bench"}],"objections":[{"id":"OBJ-001","severity":"low","statement":"nit","status":"raised"}],"files_changed":[],"verification":{"status":"skipped","commands":[],"evidence_summary":"none"},"artifact":{"type":"review","ref":null},"proposed_next_role":"pm","phase_transition_request":null,"run_completion_request":null}' "$run" "$t" > ".agentxchain/staging/$t/turn-result.json"
"#;

/// The active turn's result (a pm review with no request: the run stays in planning).
fn stage_result(root: &Path) {
    let s: Value = serde_json::from_str(
        &std::fs::read_to_string(root.join(".agentxchain/state.json")).unwrap(),
    )
    .unwrap();
    let (turn, t) = s["active_turns"]
        .as_object()
        .unwrap()
        .iter()
        .next()
        .unwrap();
    let result = json!({
        "schema_version": "1.0", "run_id": s["run_id"], "turn_id": turn, "role": "pm",
        "runtime_id": t["runtime_id"], "status": "completed", "summary": "bench turn",
        "decisions": [{"id": "DEC-001", "category": "process", "statement": "go", "rationale": "bench"}],
        "objections": [{"id": "OBJ-001", "severity": "low", "against_turn_id": turn, "statement": "nit", "status": "raised"}],
        "files_changed": [], "artifacts_created": [],
        "verification": {"status": "pass", "commands": ["true"], "evidence_summary": "ok", "machine_evidence": [{"command": "true", "exit_code": 0}]},
        "artifact": {"type": "review", "ref": null}, "proposed_next_role": "pm",
        "phase_transition_request": null, "run_completion_request": null, "needs_human_reason": null,
        "cost": {"input_tokens": 1, "output_tokens": 1, "usd": 0.0},
    });
    let p = root.join(format!(".agentxchain/staging/{turn}/turn-result.json"));
    std::fs::create_dir_all(p.parent().unwrap()).unwrap();
    std::fs::write(p, result.to_string()).unwrap();
}

type Figures = (Vec<Duration>, Vec<Duration>, Vec<Duration>, Vec<Duration>);

fn cycle(root: &Path) -> Figures {
    let (mut assign, mut accept, mut status, mut step) =
        (Vec::new(), Vec::new(), Vec::new(), Vec::new());
    for i in 0..N + 3 {
        let s = run(root, &["resume"]);
        stage_result(root);
        let a = run(root, &["accept-turn"]);
        let st = run(root, &["status", "--json"]);
        let full = run(root, &["step"]);
        if i >= 3 {
            assign.push(s);
            accept.push(a);
            status.push(st);
            step.push(full);
        }
    }
    (assign, accept, status, step)
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1e3
}

fn main() {
    let scratch = scratch();
    let _ = std::fs::remove_dir_all(&scratch);
    let small = scratch.join("small");
    let big = scratch.join("big");
    let hooked = scratch.join("hooked");
    project(&small, 10_000, 1 << 20);
    // The small project with a hook at assignment and one at acceptance (advisory, `true`),
    // allowed: a hooked command reads the protected files around each hook.
    project(&hooked, 10_000, 1 << 20);
    let cfg_path = hooked.join("agentxchain.json");
    let mut cfg: Value =
        serde_json::from_str(&std::fs::read_to_string(&cfg_path).unwrap()).unwrap();
    let hook = |name: &str| json!([{"name": name, "type": "process", "command": ["true"], "timeout_ms": 5000, "mode": "advisory"}]);
    cfg["hooks"] =
        json!({"before_assignment": hook("assign"), "before_acceptance": hook("accept")});
    std::fs::write(&cfg_path, serde_json::to_string_pretty(&cfg).unwrap()).unwrap();
    git(&hooked, &["commit", "-qam", "hooks"]);
    run(&hooked, &["hooks", "allow"]);
    let t = Instant::now();
    project(&big, 10_000, 1_000_000_000);
    println!(
        "generated 10,000 history entries and a {:.2} GB event log in {:.1} s",
        std::fs::metadata(big.join(".agentxchain/events.jsonl"))
            .unwrap()
            .len() as f64
            / 1e9,
        t.elapsed().as_secs_f64()
    );
    // The log sizes alternate so a machine's load falls on both alike.
    let (mut s1, mut a1, mut t1, mut f1, mut s2, mut a2, mut t2, mut f2) = (
        vec![],
        vec![],
        vec![],
        vec![],
        vec![],
        vec![],
        vec![],
        vec![],
    );
    let (mut hs, mut ha) = (vec![], vec![]);
    for _ in 0..2 {
        let (s, a, _, _) = cycle(&hooked);
        hs.extend(s);
        ha.extend(a);
        let (s, a, t, f) = cycle(&small);
        s1.extend(s);
        a1.extend(a);
        t1.extend(t);
        f1.extend(f);
        let (s, a, t, f) = cycle(&big);
        s2.extend(s);
        a2.extend(a);
        t2.extend(t);
        f2.extend(f);
    }
    println!(
        "agentxchain governed-run benchmark ({}), cold processes, {} runs each",
        bin(),
        2 * N
    );
    println!(
        "{:<40} {:>10} {:>10} {:>10} {:>8}",
        "", "1 MB log", "1 GB log", "p90 1 GB", "ratio"
    );
    for (name, a, b, target) in [
        ("resume (assign + dispatch)", &s1, &s2, 20.0),
        ("accept-turn", &a1, &a2, 20.0),
        ("status --json", &t1, &t2, 2.0),
        (
            "step, local_cli agent (whole turn)",
            &f1,
            &f2,
            f64::INFINITY,
        ),
    ] {
        let (ma, mb) = (ms(median(a.clone())), ms(median(b.clone())));
        println!(
            "{name:<40} {ma:>7.2} ms {mb:>7.2} ms {:>7.2} ms {:>8.2}  {}",
            ms(p90(b.clone())),
            mb / ma,
            if target.is_infinite() {
                "(no target: the agent's own time is in it)".to_owned()
            } else if mb <= target {
                format!("target <= {target} ms ok")
            } else {
                format!("target <= {target} ms MISSED")
            }
        );
    }
    for (name, d) in [
        ("resume, a before_assignment hook", &hs),
        ("accept-turn, a before_acceptance hook", &ha),
    ] {
        println!(
            "{name:<40} {:>7.2} ms {:>10} {:>7.2} ms {:>8}  (1 MB log; the hook `true` spawned)",
            ms(median(d.clone())),
            "",
            ms(p90(d.clone())),
            ""
        );
    }
    // What any process costs here: the floor under every figure above.
    let spawn: Vec<Duration> = (0..60)
        .map(|_| {
            let t = Instant::now();
            Command::new("true").output().unwrap();
            t.elapsed()
        })
        .collect();
    let git: Vec<Duration> = (0..60)
        .map(|_| {
            let t = Instant::now();
            Command::new("git")
                .args(["status", "--porcelain=v2", "--branch", "-z"])
                .current_dir(&big)
                .output()
                .unwrap();
            t.elapsed()
        })
        .collect();
    println!(
        "{:<40} {:>7.2} ms   (a process spawn: the floor of every cold figure)",
        "true",
        ms(median(spawn))
    );
    println!(
        "{:<40} {:>7.2} ms   (resume runs it up to three times, accept-turn twice)",
        "git status --porcelain=v2",
        ms(median(git))
    );
    // `AGENTXCHAIN_BENCH_KEEP=1` leaves the two projects for a closer look (`perf`, `strace`).
    if std::env::var_os("AGENTXCHAIN_BENCH_KEEP").is_some() {
        println!("projects kept in {}", scratch.display());
    } else {
        let _ = std::fs::remove_dir_all(&scratch);
    }
}
