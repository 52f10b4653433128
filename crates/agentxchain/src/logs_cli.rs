//! `events` and `history`: the run's logs as the reference's CLI prints them — JSONL of the
//! events, the enriched run summaries as a JSON array, or tables for a person — and
//! `events --follow`. What is read and how it is filtered is `axc_kernel::views`.

use std::collections::BTreeSet;
use std::io::{Read, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::Duration;

use axc_core::read::EVENTS_FILE;
use axc_core::util::{printable, resolve_path};
use axc_kernel::views::{events, history};
use serde_json::Value as Json;

const NO_PROJECT: &str = "No AgentXchain project found. Run this inside a governed project.";

/// The nearest ancestor of `dir` (default: here) that holds agentxchain.json — or, for the
/// event log, a run state.
fn project_root(dir: Option<&Path>, state_counts: bool) -> Option<PathBuf> {
    let start = resolve_path(dir.unwrap_or(Path::new(".")));
    start
        .ancestors()
        .find(|d| {
            d.join(axc_core::config::CONFIG_FILE).is_file()
                || (state_counts && d.join(axc_core::read::STATE_FILE).is_file())
        })
        .map(Path::to_path_buf)
}

/// What `events` was asked.
pub struct EventsArgs {
    pub follow: bool,
    pub types: Option<String>,
    pub since: Option<String>,
    pub json: bool,
    pub limit: usize,
    pub dir: Option<PathBuf>,
}

pub fn events(args: EventsArgs) -> ExitCode {
    let Some(root) = project_root(args.dir.as_deref(), true) else {
        eprintln!("{NO_PROJECT}");
        return ExitCode::FAILURE;
    };
    let since = match args.since.as_deref().map(|s| (s, events::parse_since(s))) {
        None => None,
        Some((_, Some(t))) => Some(t),
        Some((text, None)) => {
            eprintln!(
                "--since {:?} is not an ISO-8601 timestamp: give an instant such as 2026-01-02T03:04:05Z (or +02:00), or a date such as 2026-01-02",
                printable(text)
            );
            return ExitCode::from(2);
        }
    };
    let types = args.types.as_deref().map(events::parse_types);
    for t in types.iter().flatten().filter(|t| !events::known_type(t)) {
        eprintln!(
            "Note: no event type {:?} is known to this build; only events of that exact type are shown.",
            printable(t)
        );
    }
    let query = events::Query {
        types,
        since,
        limit: args.limit,
    };
    // Where following starts: the log's length before the tail is read, so an event appended
    // in between is printed once (by whichever read saw it first), never lost.
    let start = log_len(&root);
    let tail = match events::read(&root, &query) {
        Ok(t) => t,
        Err(e) => {
            eprintln!("Cannot read {EVENTS_FILE}: {e}");
            return ExitCode::FAILURE;
        }
    };
    warn_partial(tail.skipped, tail.truncated);
    let mut out = std::io::stdout().lock();
    if tail.entries.is_empty() && !args.json && !args.follow {
        let _ = writeln!(out, "No events found.");
        if let Some(t) = &args.types {
            let _ = writeln!(out, "  (filtered by type: {})", printable(t));
        }
        return ExitCode::SUCCESS;
    }
    for e in &tail.entries {
        let _ = writeln!(out, "{}", event_line(e, args.json));
    }
    let _ = out.flush();
    drop(out);
    if args.follow {
        let seen: BTreeSet<String> = tail
            .entries
            .iter()
            .filter_map(|e| e["event_id"].as_str().map(str::to_owned))
            .collect();
        return follow(&root, &query, args.json, start, seen);
    }
    ExitCode::SUCCESS
}

fn log_len(root: &Path) -> u64 {
    fsread::open_inside(root, Path::new(EVENTS_FILE))
        .ok()
        .and_then(|(f, _)| f.metadata().ok())
        .map_or(0, |m| m.len())
}

fn warn_partial(skipped: usize, truncated: bool) {
    if skipped > 0 {
        eprintln!("Warning: {skipped} line(s) of the log are not JSON objects and were skipped.");
    }
    if truncated {
        eprintln!(
            "Warning: only the end of the log was read ({} MiB); older entries are not shown.",
            axc_core::jsonl::MAX_SCAN >> 20
        );
    }
}

/// Prints each complete line appended to the log from byte `pos` on, every 200 ms, until the
/// process is stopped. A log that shrinks (rotated, truncated) is read again from its start;
/// a line still being written is held until its newline arrives.
fn follow(
    root: &Path,
    query: &events::Query,
    json: bool,
    mut pos: u64,
    seen: BTreeSet<String>,
) -> ExitCode {
    println!("Watching for events... (Ctrl+C to stop)");
    let mut seen = Some(seen);
    let mut pending: Vec<u8> = Vec::new();
    loop {
        if let Ok((mut file, _)) = fsread::open_inside(root, Path::new(EVENTS_FILE)) {
            let len = file.metadata().map_or(pos, |m| m.len());
            if len < pos {
                pos = 0;
                pending.clear();
            }
            if len > pos && file.seek(SeekFrom::Start(pos)).is_ok() {
                let mut buf = Vec::new();
                if let Ok(n) = file.take(len - pos).read_to_end(&mut buf) {
                    pos += n as u64;
                    pending.extend_from_slice(&buf);
                }
            }
        }
        if let Some(nl) = pending.iter().rposition(|&b| b == b'\n') {
            let complete: Vec<u8> = pending.drain(..=nl).collect();
            let mut out = std::io::stdout().lock();
            for line in complete.split(|&b| b == b'\n') {
                let Ok(e) = serde_json::from_slice::<Json>(line.trim_ascii()) else {
                    continue;
                };
                if !e.is_object() || !query.keeps(&e) {
                    continue;
                }
                // The first appended lines may be ones the tail already printed.
                if let (Some(seen), Some(id)) = (&seen, e["event_id"].as_str())
                    && seen.contains(id)
                {
                    continue;
                }
                if writeln!(out, "{}", event_line(&e, json)).is_err() {
                    return ExitCode::SUCCESS;
                }
            }
            if out.flush().is_err() {
                return ExitCode::SUCCESS;
            }
            seen = None;
        }
        std::thread::sleep(Duration::from_millis(200));
    }
}

fn text(v: &Json) -> Option<String> {
    v.as_str().map(printable)
}

/// One event: its JSON (as the log holds it) or the reference's line for a person —
/// `<timestamp>  <type, 22 wide>  <run id, 12>  <phase>[ [role]][ intent=…][ — details]`.
/// The timestamp is printed whole (the reference shows only a local time of day).
pub fn event_line(e: &Json, json: bool) -> String {
    if json {
        return canon::to_compact(e);
    }
    let dash = || "—".to_owned();
    let ts = text(&e["timestamp"]).unwrap_or_else(dash);
    let kind = text(&e["event_type"]).unwrap_or_default();
    let run: String = text(&e["run_id"])
        .map(|r| r.chars().take(12).collect())
        .unwrap_or_else(dash);
    let phase = text(&e["phase"])
        .filter(|p| !p.is_empty())
        .unwrap_or_else(dash);
    let mut line = format!("{ts}  {kind:<22}  {run}  {phase}");
    if let Some(role) = text(&e["turn"]["role_id"]).filter(|r| !r.is_empty()) {
        line += &format!(" [{role}]");
    }
    if let Some(intent) = text(&e["intent_id"]).filter(|r| !r.is_empty()) {
        line += &format!(" intent={intent}");
    }
    line += &detail(e);
    line
}

/// The reference's per-type detail after the line's fixed part.
fn detail(e: &Json) -> String {
    let p = &e["payload"];
    let t = |v: &Json| text(v).filter(|s| !s.is_empty());
    match e["event_type"].as_str().unwrap_or("") {
        "turn_conflicted" => format!(" — {}", conflict(e)),
        "conflict_resolved" => {
            let files = list(&p["conflicting_files"], 3);
            let parts = [
                Some(if files.is_empty() {
                    "resolved conflict".to_owned()
                } else {
                    files
                }),
                t(&p["resolution"]).map(|r| format!("via {r}")),
                percent(&p["overlap_ratio"]),
            ];
            format!(
                " — {}",
                parts.into_iter().flatten().collect::<Vec<_>>().join(" | ")
            )
        }
        "turn_rejected" => t(&p["reason"]).map_or_else(String::new, |r| {
            let stage = t(&p["failed_stage"]).map_or_else(String::new, |s| format!(" ({s})"));
            format!(" — {r}{stage}")
        }),
        "acceptance_failed" => t(&p["reason"]).map_or_else(String::new, |r| {
            let stage = t(&p["stage"]).map_or_else(String::new, |s| format!(" ({s})"));
            format!(" — {r}{stage}")
        }),
        "phase_entered" => match (t(&p["from"]), t(&p["to"])) {
            (Some(from), Some(to)) => {
                let trigger = t(&p["trigger"]).map_or_else(String::new, |s| format!(" ({s})"));
                format!(" {from} → {to}{trigger}")
            }
            _ => String::new(),
        },
        "gate_failed" => t(&p["from_phase"]).map_or_else(String::new, |from| {
            let to = t(&p["to_phase"]).unwrap_or_else(|| "?".to_owned());
            let reason = p["reasons"]
                .as_array()
                .and_then(|r| r.first())
                .map_or_else(String::new, |r| {
                    format!(" — {}", text(r).unwrap_or_else(|| r.to_string()))
                });
            let gate = t(&p["gate_id"]).map_or_else(String::new, |g| format!(" ({g})"));
            format!(" {from} → {to}{reason}{gate}")
        }),
        "human_escalation_raised" => t(&p["escalation_id"]).map_or_else(String::new, |id| {
            let kind = t(&p["type"]).unwrap_or_else(|| "?".to_owned());
            let service = t(&p["service"]).map_or_else(String::new, |s| format!(" ({s})"));
            format!(" {id} [{kind}]{service}")
        }),
        "human_escalation_resolved" => t(&p["escalation_id"]).map_or_else(String::new, |id| {
            let via = t(&p["resolved_via"]).unwrap_or_else(|| "?".to_owned());
            format!(" {id} via {via}")
        }),
        "coordinator_retry" if p.is_object() => format!(
            " — ws {} repo {} (retry of {})",
            t(&p["workstream_id"]).unwrap_or_else(|| "?".into()),
            t(&p["repo_id"]).unwrap_or_else(|| "?".into()),
            t(&p["failed_turn_id"]).unwrap_or_else(|| "?".into())
        ),
        "coordinator_retry_projection_warning" if p.is_object() => format!(
            " — ws {} repo {} (reconciliation required)",
            t(&p["workstream_id"]).unwrap_or_else(|| "?".into()),
            t(&p["repo_id"]).unwrap_or_else(|| "?".into())
        ),
        _ => String::new(),
    }
}

fn conflict(e: &Json) -> String {
    let p = &e["payload"];
    let files = list(&p["conflicting_files"], 3);
    let mut parts = vec![if files.is_empty() {
        "unknown files".to_owned()
    } else {
        files
    }];
    parts.extend(percent(&p["overlap_ratio"]));
    if let Some(n) = p["detection_count"].as_i64() {
        parts.push(format!("detection {n}"));
    }
    let turns = list(&p["accepted_since_turn_ids"], 2);
    if !turns.is_empty() {
        parts.push(format!("accepted since {turns}"));
    }
    if e["status"] == "blocked" {
        parts.push("run blocked".to_owned());
    }
    parts.join(" | ")
}

fn percent(v: &Json) -> Option<String> {
    v.as_f64()
        .map(|r| format!("{}% overlap", (r * 100.0).round()))
}

/// The first `limit` items, then `+N more`.
fn list(v: &Json, limit: usize) -> String {
    let items: Vec<String> = v
        .as_array()
        .into_iter()
        .flatten()
        .map(|i| text(i).unwrap_or_else(|| i.to_string()))
        .collect();
    let shown = items
        .iter()
        .take(limit)
        .cloned()
        .collect::<Vec<_>>()
        .join(", ");
    if items.len() <= limit {
        shown
    } else {
        format!("{shown} +{} more", items.len() - limit)
    }
}

/// What `history` was asked.
pub struct HistoryArgs {
    pub json: bool,
    pub limit: usize,
    pub status: Option<String>,
    pub lineage: Option<String>,
    pub dir: Option<PathBuf>,
}

pub fn history(args: HistoryArgs) -> ExitCode {
    let Some(root) = project_root(args.dir.as_deref(), false) else {
        eprintln!("{NO_PROJECT}");
        return ExitCode::FAILURE;
    };
    if let Some(run) = &args.lineage {
        return lineage(&root, run, args.json);
    }
    let query = history::Query {
        status: args.status.clone(),
        limit: args.limit,
    };
    let tail = match history::read(&root, &query) {
        Ok(t) => t,
        Err(e) => {
            eprintln!("Cannot read {}: {e}", axc_core::read::RUN_HISTORY_FILE);
            return ExitCode::FAILURE;
        }
    };
    warn_partial(tail.skipped, tail.truncated);
    if args.json {
        println!("{}", canon::to_pretty(&Json::Array(tail.entries)));
        return ExitCode::SUCCESS;
    }
    if tail.entries.is_empty() {
        println!("No run history found.");
        if let Some(s) = &args.status {
            println!("  (filtered by status: {})", printable(s));
        }
        return ExitCode::SUCCESS;
    }
    print!("{}", history_table(&tail.entries));
    ExitCode::SUCCESS
}

/// The reference's table: `# Run ID Status Outcome Trigger Ctx Phases Turns Cost Duration Date
/// Headline`, a `next:` line under a run with an operator follow-up, and the count. Dates are
/// `recorded_at` in UTC (the reference prints them in the machine's locale).
pub fn history_table(entries: &[Json]) -> String {
    let widths = [4, 14, 11, 11, 14, 4, 8, 6, 10, 10, 20, 42];
    let row = |cells: [String; 12]| -> String {
        cells
            .iter()
            .zip(widths)
            .map(|(c, w)| pad(c, w))
            .collect::<Vec<_>>()
            .join(" ")
    };
    let header = row([
        "#", "Run ID", "Status", "Outcome", "Trigger", "Ctx", "Phases", "Turns", "Cost",
        "Duration", "Date", "Headline",
    ]
    .map(str::to_owned));
    let mut out = format!("{header}\n{}\n", "─".repeat(header.chars().count()));
    for (i, e) in entries.iter().enumerate() {
        let outcome = history::outcome_summary(e);
        let dash = || "—".to_owned();
        let cost = e["total_cost_usd"]
            .as_f64()
            .map_or_else(dash, |c| format!("${}", axc_core::util::to_fixed(c, 4)));
        let duration = e["duration_ms"]
            .as_f64()
            .map_or_else(dash, |ms| duration_text(ms as u64));
        let date = text(&e["recorded_at"])
            .and_then(|d| history::utc_date(&d))
            .unwrap_or_else(dash);
        let count = |k: &str| e[k].as_array().map_or(0, Vec::len);
        out += &row([
            (i + 1).to_string(),
            text(&e["run_id"]).map_or_else(dash, |r| r.chars().take(12).collect()),
            text(&e["status"])
                .filter(|s| !s.is_empty())
                .unwrap_or_else(dash),
            outcome["label"].as_str().unwrap_or("unknown").to_owned(),
            history::trigger_label(e).to_owned(),
            if history::inheritable(e) {
                "✓"
            } else {
                "—"
            }
            .to_owned(),
            count("phases_completed").to_string(),
            e["total_turns"].as_u64().unwrap_or(0).to_string(),
            cost,
            duration,
            date,
            headline(&e["retrospective"]["headline"]),
        ]);
        out.push('\n');
        if let Some(next) = text(&outcome["next_action"]) {
            out += &format!("     next: {}\n", truncate(&next, 148));
        }
    }
    out += &format!("\n{} run(s) shown\n", entries.len());
    out
}

fn pad(s: &str, width: usize) -> String {
    let n = s.chars().count();
    format!("{s}{}", " ".repeat(width.saturating_sub(n)))
}

fn duration_text(ms: u64) -> String {
    if ms < 1000 {
        return format!("{ms}ms");
    }
    let secs = ms / 1000;
    if secs < 60 {
        return format!("{secs}s");
    }
    let (mins, secs) = (secs / 60, secs % 60);
    if mins < 60 {
        return format!("{mins}m {secs}s");
    }
    format!("{}h {}m", mins / 60, mins % 60)
}

fn headline(v: &Json) -> String {
    match v.as_str().and_then(history::one_line) {
        None => "—".to_owned(),
        Some(h) => truncate(&printable(&h), 40),
    }
}

/// At most `max` characters, the last an ellipsis when cut.
fn truncate(s: &str, max: usize) -> String {
    if s.chars().count() <= max {
        return s.to_owned();
    }
    let mut out: String = s.chars().take(max - 1).collect();
    out.push('…');
    out
}

fn lineage(root: &Path, run: &str, json: bool) -> ExitCode {
    let chain = match history::lineage(root, run) {
        Ok(c) => c,
        Err(e) => {
            eprintln!("{e}");
            return ExitCode::FAILURE;
        }
    };
    if json {
        println!("{}", canon::to_pretty(&Json::Array(chain)));
        return ExitCode::SUCCESS;
    }
    println!("Run Lineage for {}:", printable(run));
    for (i, e) in chain.iter().enumerate() {
        let prefix = if i == 0 { "  " } else { "  └─ " };
        if e["broken_link"] == true {
            println!(
                "{prefix}[broken link: {}]",
                text(&e["missing_run_id"]).unwrap_or_default()
            );
            continue;
        }
        let id: String =
            text(&e["run_id"]).map_or_else(|| "—".into(), |r| r.chars().take(12).collect());
        let phases: Vec<String> = e["phases_completed"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(text)
            .collect();
        let phases = if phases.is_empty() {
            "—".to_owned()
        } else {
            phases.join(",")
        };
        let turns = format!("{} turns", e["total_turns"].as_u64().unwrap_or(0));
        let cost = e["total_cost_usd"].as_f64().map_or_else(String::new, |c| {
            format!("${}", axc_core::util::to_fixed(c, 2))
        });
        let parent = text(&e["provenance"]["parent_run_id"]).map_or_else(String::new, |p| {
            format!(" from {}", p.chars().take(12).collect::<String>())
        });
        let ctx = if history::inheritable(e) {
            " [ctx]"
        } else {
            ""
        };
        let head = text(&e["retrospective"]["headline"]).map_or_else(String::new, |_| {
            format!("  {}", headline(&e["retrospective"]["headline"]))
        });
        println!(
            "{prefix}{id}  {}  {}  {}  {}  ({}{parent}){ctx}{head}",
            text(&e["status"]).unwrap_or_else(|| "—".into()),
            pad(&phases, 20),
            pad(&turns, 10),
            pad(&cost, 8),
            history::trigger_label(e)
        );
    }
    ExitCode::SUCCESS
}
