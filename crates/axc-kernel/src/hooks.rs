//! Hooks: the commands (`process`) and webhooks (`http`) a governed project runs at a phase
//! of a turn's life (`before_assignment`, `after_dispatch`, `before_validation`, …), each given
//! a JSON envelope and answering a verdict (`allow`, `warn`, `block`). Blocking hooks fail
//! closed (a timeout, a failure or output that is no verdict blocks); advisory hooks only warn.
//! A hook that changes a protected file (state, history, decision ledger, or a path the
//! caller adds) aborts the phase and the file is restored. Every hook's outcome is appended to
//! `hook-audit.jsonl` as one line.

use std::io::{Read, Write};

use crate::process::{kill_group, reader};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::{Value as Json, json};

/// The phases hooks run at (the config validator's list).
pub const PHASES: [&str; 8] = axc_core::config::HOOK_PHASES;
/// Files no hook may change.
pub const PROTECTED_FILES: [&str; 3] = [
    ".agentxchain/state.json",
    ".agentxchain/history.jsonl",
    ".agentxchain/decision-ledger.jsonl",
];
const MAX_STDOUT: usize = 1 << 20;
const MAX_STDERR: usize = 4096;
const MAX_ANNOTATIONS: usize = 16;
const MAX_ANNOTATION_VALUE: usize = 1000;

/// Who runs the hooks and where their audit goes.
pub struct HookContext<'a> {
    pub run_id: &'a str,
    pub turn_id: Option<&'a str>,
    /// The directory of `hook-audit.jsonl` and `hook-annotations.jsonl`.
    pub audit_dir: PathBuf,
    /// Paths (relative to the project) protected besides [`PROTECTED_FILES`].
    pub protected: Vec<String>,
}

/// What running a phase's hooks decided.
#[derive(Debug, Clone, PartialEq)]
pub struct HookRun {
    /// `false` when a hook blocked or tampered.
    pub ok: bool,
    pub blocked: bool,
    /// Set when a hook changed a protected file: `{file, error_code, message}`.
    pub tamper: Option<Json>,
    /// The blocking hook that blocked: `{hook_name, verdict, message}` (`message` is the
    /// hook's own, or why it failed; `null` when it gave none).
    pub blocker: Option<Json>,
    /// The audit entries written, in order.
    pub results: Vec<Json>,
}

impl HookRun {
    /// A phase's hooks halted before any ran, for `why`: blocked (the first hook named).
    pub fn halted(list: &Json, why: &str) -> HookRun {
        let name = list[0]["name"].as_str().unwrap_or("unknown");
        HookRun {
            ok: false,
            blocked: true,
            tamper: None,
            blocker: Some(json!({"hook_name": name, "verdict": "block", "message": why})),
            results: Vec::new(),
        }
    }

    /// The hook a halted run names: the one that blocked, else the last one run (the one that
    /// tampered). (The reference names the phase's first hook on a tamper, which need not be
    /// the one that changed the file.)
    pub fn halting_hook(&self) -> &str {
        self.blocker
            .as_ref()
            .and_then(|b| b["hook_name"].as_str())
            .or_else(|| self.results.last().and_then(|r| r["hook_name"].as_str()))
            .unwrap_or("unknown")
    }

    /// What halted the phase: the blocker's message, else the tamper's, else `fallback`.
    pub fn halt_detail(&self, fallback: &str) -> String {
        self.blocker
            .as_ref()
            .and_then(|b| b["message"].as_str())
            .or_else(|| self.tamper.as_ref().and_then(|t| t["message"].as_str()))
            .filter(|m| !m.is_empty())
            .unwrap_or(fallback)
            .to_owned()
    }
}

/// Whether `hooks` declares any hook for `phase`.
pub fn declares(hooks: &Json, phase: &str) -> bool {
    hooks[phase].as_array().is_some_and(|l| !l.is_empty())
}

struct Exec {
    timed_out: bool,
    stdout: String,
    stderr: String,
    exit_code: Option<i32>,
    duration_ms: u64,
    failed: Option<String>,
}

fn now() -> String {
    humantime::format_rfc3339_millis(std::time::SystemTime::now()).to_string()
}

/// A protected file's bytes (`None`: nothing is there), read as every project file is
/// (`fsread`: no FIFO waited on, no device or link out read), a hard-linked one too (its other
/// name could change it), at most 256 MiB. `Err`: something is there that cannot be read, so
/// no change to it could be seen.
fn read_protected(root: &Path, rel: &str) -> Result<Option<Vec<u8>>, String> {
    let path = root.join(rel);
    match std::fs::symlink_metadata(&path) {
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        _ => {}
    }
    fsread::open_inside_linked(root, Path::new(rel))
        .and_then(|(file, meta)| fsread::read_open(file, &meta, &path, 256 << 20))
        .map(Some)
        .map_err(|e| e.to_string())
}

fn run_process(root: &Path, hook: &Json, envelope: &Json, timeout: Duration) -> Exec {
    let start = Instant::now();
    let failed = |m: String| Exec {
        timed_out: false,
        stdout: String::new(),
        stderr: m.chars().take(MAX_STDERR).collect(),
        exit_code: None,
        duration_ms: start.elapsed().as_millis() as u64,
        failed: Some(m),
    };
    let argv: Vec<&str> = hook["command"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(Json::as_str)
        .collect();
    let Some((program, args)) = argv.split_first() else {
        return failed("hook command must be a non-empty list of strings".to_owned());
    };
    let mut cmd = Command::new(program);
    cmd.args(args)
        .current_dir(root)
        .env(
            "AGENTXCHAIN_HOOK_PHASE",
            envelope["hook_phase"].as_str().unwrap_or(""),
        )
        .env(
            "AGENTXCHAIN_HOOK_NAME",
            envelope["hook_name"].as_str().unwrap_or(""),
        )
        .env(
            "AGENTXCHAIN_RUN_ID",
            envelope["run_id"].as_str().unwrap_or(""),
        )
        .env("AGENTXCHAIN_PROJECT_ROOT", root)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    // Its own process group: a timeout ends the hook and whatever it started, so nothing
    // keeps its pipes open after it.
    std::os::unix::process::CommandExt::process_group(&mut cmd, 0);
    for (k, v) in hook["env"].as_object().into_iter().flatten() {
        if let Some(v) = v.as_str() {
            cmd.env(k, v);
        }
    }
    let mut child = match cmd.spawn() {
        Ok(c) => c,
        Err(e) => return failed(format!("{program}: {e}")),
    };
    let input = envelope.to_string();
    let mut stdin = child.stdin.take();
    std::thread::spawn(move || {
        // A hook that exits without reading its input is not a failure: EPIPE, never the
        // SIGPIPE that would end the command mid-write (an agent's long staged result makes
        // the input longer than a pipe holds).
        crate::process::block_sigpipe();
        if let Some(s) = stdin.as_mut() {
            let _ = s.write_all(input.as_bytes());
        }
    });
    let out = reader(child.stdout.take(), MAX_STDOUT);
    let err = reader(child.stderr.take(), MAX_STDERR);
    use wait_timeout::ChildExt;
    let pid = child.id();
    let (status, mut timed_out) = match child.wait_timeout(timeout) {
        Ok(Some(s)) => (Some(s), false),
        Ok(None) => {
            kill_group(pid);
            let _ = child.kill();
            (child.wait().ok(), true)
        }
        Err(e) => return failed(e.to_string()),
    };
    // Whatever the hook left running dies with its group, so its pipes close; a process that
    // escaped the group is waited for no longer than the hook's time.
    kill_group(pid);
    let grace = timeout.saturating_sub(start.elapsed()) + Duration::from_millis(200);
    let take =
        |rx: std::sync::mpsc::Receiver<(Vec<u8>, bool)>, wait: Duration| rx.recv_timeout(wait).ok();
    let stdout = take(out, grace);
    let stderr = take(err, Duration::from_millis(200))
        .map(|(b, _)| b)
        .unwrap_or_default();
    let duration_ms = start.elapsed().as_millis() as u64;
    // As the reference: a hook that took longer than its time timed out, however it ended.
    timed_out |= stdout.is_none() || duration_ms > timeout.as_millis() as u64;
    let (stdout, too_long) = stdout.unwrap_or_default();
    Exec {
        timed_out,
        stdout: String::from_utf8_lossy(&stdout).into_owned(),
        stderr: String::from_utf8_lossy(&stderr).into_owned(),
        exit_code: if timed_out {
            None
        } else {
            status.and_then(|s| s.code())
        },
        duration_ms,
        failed: too_long.then(|| format!("the hook wrote more than {MAX_STDOUT} bytes on stdout")),
    }
}

/// `${VAR}` in a header value, from the hook's `env` then the process's: a missing variable
/// is an error naming it.
fn interpolate(value: &str, hook_env: &Json) -> Result<String, String> {
    let mut out = String::new();
    let mut rest = value;
    while let Some(i) = rest.find("${") {
        out.push_str(&rest[..i]);
        let after = &rest[i + 2..];
        let Some(j) = after.find('}') else {
            out.push_str(&rest[i..]);
            return Ok(out);
        };
        let name = &after[..j];
        let v = hook_env[name]
            .as_str()
            .map(str::to_owned)
            .or_else(|| std::env::var(name).ok())
            .ok_or_else(|| format!("header variable ${{{name}}} is not set"))?;
        out.push_str(&v);
        rest = &after[j + 1..];
    }
    out.push_str(rest);
    Ok(out)
}

/// A `POST` of the envelope to an `http://` URL; the answer's body (2xx) is the hook's output.
fn run_http(hook: &Json, envelope: &Json, timeout: Duration) -> Exec {
    let start = Instant::now();
    let fail = |m: String| Exec {
        timed_out: false,
        stdout: String::new(),
        stderr: m.chars().take(MAX_STDERR).collect(),
        exit_code: Some(1),
        duration_ms: start.elapsed().as_millis() as u64,
        failed: Some(m),
    };
    let url = hook["url"].as_str().unwrap_or("");
    let Some(rest) = url.strip_prefix("http://") else {
        return fail(format!(
            "http hook url must be http:// (got \"{url}\"); this runner does not speak TLS"
        ));
    };
    let (authority, path) = rest.split_at(rest.find('/').unwrap_or(rest.len()));
    let path = if path.is_empty() { "/" } else { path };
    if authority.is_empty()
        || authority.contains('@')
        || (authority.to_string() + path)
            .chars()
            .any(|c| c == ' ' || c.is_control())
    {
        return fail(format!("http hook url \"{url}\" is not one it can ask"));
    }
    let mut headers = String::new();
    for (k, v) in hook["headers"].as_object().into_iter().flatten() {
        match interpolate(v.as_str().unwrap_or(""), &hook["env"]) {
            Ok(v) if !v.contains(['\r', '\n']) && !k.contains(['\r', '\n', ':']) => {
                headers.push_str(&format!("{k}: {v}\r\n"))
            }
            Ok(_) => return fail(format!("header {k} holds a line break")),
            Err(e) => return fail(e),
        }
    }
    let body = envelope.to_string();
    let addr = if authority
        .rsplit_once(':')
        .is_some_and(|(_, p)| !p.is_empty() && p.bytes().all(|b| b.is_ascii_digit()))
    {
        authority.to_owned()
    } else {
        format!("{authority}:80")
    };
    use std::net::ToSocketAddrs;
    let target = match addr.to_socket_addrs().map(|mut a| a.next()) {
        Ok(Some(t)) => t,
        Ok(None) => return fail(format!("{url}: no address")),
        Err(e) => return fail(format!("{url}: {e}")),
    };
    let mut stream = match std::net::TcpStream::connect_timeout(&target, timeout) {
        Ok(s) => s,
        Err(e) => return fail(format!("{url}: {e}")),
    };
    let left = |start: Instant| {
        timeout
            .saturating_sub(start.elapsed())
            .max(Duration::from_millis(1))
    };
    let _ = stream.set_write_timeout(Some(left(start)));
    let request = format!(
        "POST {path} HTTP/1.1\r\nHost: {authority}\r\nContent-Type: application/json\r\nContent-Length: {}\r\n{headers}Connection: close\r\n\r\n{body}",
        body.len()
    );
    if let Err(e) = stream.write_all(request.as_bytes()) {
        return fail(format!("{url}: {e}"));
    }
    let mut raw = Vec::new();
    let mut buf = [0u8; 8192];
    loop {
        if start.elapsed() >= timeout {
            return Exec {
                timed_out: true,
                stdout: String::new(),
                stderr: String::new(),
                exit_code: None,
                duration_ms: start.elapsed().as_millis() as u64,
                failed: None,
            };
        }
        let _ = stream.set_read_timeout(Some(left(start).min(Duration::from_millis(200))));
        match stream.read(&mut buf) {
            Ok(0) => break,
            Ok(n) => {
                raw.extend_from_slice(&buf[..n]);
                if raw.len() > MAX_STDOUT + 16 * 1024 {
                    return fail(format!(
                        "{url}: the answer is larger than {MAX_STDOUT} bytes"
                    ));
                }
            }
            Err(e)
                if matches!(
                    e.kind(),
                    std::io::ErrorKind::WouldBlock
                        | std::io::ErrorKind::TimedOut
                        | std::io::ErrorKind::Interrupted
                ) => {}
            Err(e) => return fail(format!("{url}: {e}")),
        }
    }
    let text = String::from_utf8_lossy(&raw);
    let status = text
        .strip_prefix("HTTP/1.")
        .and_then(|r| r.get(2..5))
        .and_then(|s| s.parse::<u16>().ok());
    let body = text
        .split_once("\r\n\r\n")
        .map(|(_, b)| b.to_owned())
        .unwrap_or_default();
    match status {
        Some(200..=299) => Exec {
            timed_out: false,
            stdout: body,
            stderr: String::new(),
            exit_code: Some(0),
            duration_ms: start.elapsed().as_millis() as u64,
            failed: None,
        },
        Some(s) => fail(format!(
            "HTTP {s}: {}",
            body.chars().take(200).collect::<String>()
        )),
        None => fail(format!("{url}: the answer is not HTTP")),
    }
}

fn parse_verdict(stdout: &str) -> Option<Json> {
    let v: Json = serde_json::from_str(stdout.trim()).ok()?;
    matches!(v["verdict"].as_str(), Some("allow" | "warn" | "block")).then_some(v)
}

fn annotations(v: &Json) -> Vec<Json> {
    v.as_array()
        .into_iter()
        .flatten()
        .take(MAX_ANNOTATIONS)
        .filter_map(|a| {
            let key = a["key"].as_str().filter(|k| {
                !k.is_empty()
                    && k.bytes().all(|b| {
                        b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'_' || b == b'-'
                    })
            })?;
            let value: String = a["value"]
                .as_str()?
                .chars()
                .take(MAX_ANNOTATION_VALUE)
                .collect();
            Some(json!({"key": key, "value": value}))
        })
        .collect()
}

/// Appends one audit line. An agent can plant links in the project: a directory or file that
/// is a link, a hard link, a FIFO or a device is not appended to (the line is lost, never
/// written elsewhere).
fn append(dir: &Path, file: &str, entry: &Json) {
    use std::os::unix::fs::{MetadataExt, OpenOptionsExt};
    if std::fs::symlink_metadata(dir).is_ok_and(|m| !m.is_dir()) {
        return;
    }
    let _ = std::fs::create_dir_all(dir);
    let Ok(mut f) = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .custom_flags(libc::O_NOFOLLOW | libc::O_NONBLOCK)
        .open(dir.join(file))
    else {
        return;
    };
    if f.metadata().is_ok_and(|m| m.is_file() && m.nlink() == 1) {
        let _ = f.write_all(format!("{entry}\n").as_bytes());
    }
}

/// Puts the protected file `rel` back as it was (`None`: it was absent). Only inside the
/// project: a directory on the way that a hook replaced with a link (or anything but a
/// directory) is not written through — the file is then not restored, and the caller says so.
/// A file the hook replaced with a directory or a link is replaced, never followed; the bytes
/// are written whole (a crash leaves the hook's file or the original).
fn restore(root: &Path, rel: &str, content: Option<&[u8]>) -> Result<(), String> {
    let rel_path = Path::new(rel);
    let mut dir = root.to_path_buf();
    if let Some(parent) = rel_path.parent() {
        for part in parent.components() {
            dir.push(part);
            match std::fs::symlink_metadata(&dir) {
                Ok(m) if m.is_dir() => {}
                Ok(_) => {
                    return Err(format!(
                        "{} is no longer a directory of the project",
                        dir.strip_prefix(root).unwrap_or(&dir).display()
                    ));
                }
                Err(_) if content.is_none() => return Ok(()),
                Err(_) => std::fs::create_dir(&dir).map_err(|e| e.to_string())?,
            }
        }
    }
    let path = root.join(rel_path);
    if std::fs::symlink_metadata(&path).is_ok_and(|m| m.is_dir()) {
        std::fs::remove_dir_all(&path).map_err(|e| e.to_string())?;
    }
    match content {
        Some(bytes) => fswrite::write_atomic(&path, bytes).map_err(|e| e.to_string()),
        None => match std::fs::remove_file(&path) {
            Err(e) if e.kind() != std::io::ErrorKind::NotFound => Err(e.to_string()),
            _ => Ok(()),
        },
    }
}

/// Runs the hooks of `phase` in order, stopping at the first that blocks or tampers.
pub fn run_hooks(
    root: &Path,
    hooks: &Json,
    phase: &str,
    payload: &Json,
    ctx: &HookContext<'_>,
) -> HookRun {
    let list: Vec<&Json> = hooks[phase].as_array().into_iter().flatten().collect();
    let mut results = Vec::new();
    let mut protected: Vec<String> = PROTECTED_FILES.iter().map(|s| (*s).to_owned()).collect();
    for p in &ctx.protected {
        if !p.trim().is_empty() && !protected.contains(p) {
            protected.push(p.clone());
        }
    }
    let audit = |e: &Json| append(&ctx.audit_dir, "hook-audit.jsonl", e);
    for (index, hook) in list.iter().enumerate() {
        let name = hook["name"].as_str().unwrap_or("");
        let blocking = hook["mode"] == "blocking";
        let transport = hook["type"].as_str().unwrap_or("process");
        // Each protected file read once: its bytes restore it and say whether it changed — a
        // byte comparison after the hook, not a digest of each read (on a 10,000-turn history
        // the digests were most of a hooked command's time). Never the file's stat instead: a
        // write through a shared mapping already dirtied moves neither its mtime nor its ctime.
        let mut before = Vec::new();
        for p in &protected {
            match read_protected(root, p) {
                Ok(bytes) => before.push((p.clone(), bytes)),
                Err(why) => {
                    return HookRun::halted(
                        &hooks[phase],
                        &format!(
                            "protected file {p} cannot be read ({why}): no hook runs while a change to it could not be seen"
                        ),
                    );
                }
            }
        }
        let envelope = json!({
            "hook_phase": phase, "hook_name": name, "run_id": ctx.run_id,
            "project_root": root.display().to_string(), "timestamp": now(), "payload": payload,
        });
        // `1000.0` is 1000 ms, as the config's validator reads it.
        let timeout_ms = axc_core::config::whole_number(&hook["timeout_ms"]);
        let timeout = Duration::from_millis(timeout_ms.unwrap_or(30_000));
        let exec = if transport == "http" {
            run_http(hook, &envelope, timeout)
        } else {
            run_process(root, hook, &envelope, timeout)
        };
        let base = |verdict: Json, message: Json, notes: Vec<Json>, action: &str| {
            json!({
                "timestamp": now(), "hook_phase": phase, "hook_name": name, "transport": transport,
                "run_id": ctx.run_id, "turn_id": ctx.turn_id, "duration_ms": exec.duration_ms,
                "verdict": verdict, "message": message, "annotations": notes,
                "exit_code": exec.exit_code, "timed_out": exec.timed_out,
                "stderr_excerpt": exec.stderr, "orchestrator_action": action,
            })
        };
        if let Some((file, _)) = before
            .iter()
            .find(|(p, c)| read_protected(root, p).as_ref() != Ok(c))
        {
            // Put every protected file back as it was, then say which one was touched.
            let mut unrestored = Vec::new();
            for (p, c) in &before {
                if let Err(why) = restore(root, p, c.as_deref()) {
                    unrestored.push(format!("{p} ({why})"));
                }
            }
            let code = if file.ends_with("state.json") {
                "hook_state_tamper"
            } else if file.ends_with("history.jsonl") {
                "hook_history_tamper"
            } else if file.ends_with("decision-ledger.jsonl") {
                "hook_ledger_tamper"
            } else {
                "hook_bundle_tamper"
            };
            let found =
                format!("Hook tampered with protected file {file} (SHA-256 digest mismatch)");
            let (message, said) = if unrestored.is_empty() {
                (
                    found.clone(),
                    format!("{found}. Protected content restored."),
                )
            } else {
                let m = format!(
                    "{found}; protected content could not be restored: {}",
                    unrestored.join(", ")
                );
                (m.clone(), m)
            };
            let entry = base(Json::Null, json!(said), Vec::new(), "aborted_tamper");
            audit(&entry);
            results.push(entry);
            return HookRun {
                ok: false,
                blocked: false,
                tamper: Some(json!({"file": file, "error_code": code, "message": message})),
                blocker: None,
                results,
            };
        }
        let fallback = if blocking { "block" } else { "warn" };
        let (verdict, message, notes, action) = if exec.timed_out {
            (
                fallback.to_owned(),
                Some(format!(
                    "Hook \"{name}\" timed out after {}ms",
                    timeout.as_millis()
                )),
                Vec::new(),
                if blocking {
                    "blocked_timeout"
                } else {
                    "warned_timeout"
                },
            )
        } else if exec.exit_code != Some(0) || exec.failed.is_some() {
            let code = exec.exit_code.map_or("null".to_owned(), |c| c.to_string());
            (
                fallback.to_owned(),
                Some(format!("Hook \"{name}\" failed (exit code {code})")),
                Vec::new(),
                if blocking {
                    "blocked_failure"
                } else {
                    "warned_failure"
                },
            )
        } else {
            match parse_verdict(&exec.stdout) {
                None => (
                    fallback.to_owned(),
                    Some(format!("Hook \"{name}\" produced invalid JSON output")),
                    Vec::new(),
                    if blocking {
                        "blocked_invalid_output"
                    } else {
                        "warned_invalid_output"
                    },
                ),
                Some(v) => {
                    let said = v["verdict"].as_str().unwrap_or("allow");
                    let message = v["message"].as_str().map(str::to_owned);
                    let notes = annotations(&v["annotations"]);
                    match (said, blocking) {
                        ("block", false) => (
                            "warn".to_owned(),
                            message,
                            notes,
                            "downgraded_block_to_warn",
                        ),
                        ("block", true) => ("block".to_owned(), message, notes, "blocked"),
                        ("warn", _) => ("warn".to_owned(), message, notes, "warned"),
                        _ => ("allow".to_owned(), message, notes, "continued"),
                    }
                }
            }
        };
        let entry = base(json!(verdict), json!(message), notes.clone(), action);
        audit(&entry);
        results.push(entry);
        if phase == "after_acceptance" && !notes.is_empty() {
            append(
                &ctx.audit_dir,
                "hook-annotations.jsonl",
                &json!({"timestamp": now(), "turn_id": ctx.turn_id, "hook_name": name, "annotations": notes}),
            );
        }
        if verdict == "block" && blocking {
            for later in &list[index + 1..] {
                let skipped = json!({
                    "timestamp": now(), "hook_phase": phase, "hook_name": later["name"],
                    "run_id": ctx.run_id, "turn_id": ctx.turn_id, "duration_ms": 0, "verdict": null,
                    "message": format!("Skipped: prior hook \"{name}\" blocked"), "annotations": [],
                    "exit_code": null, "timed_out": false, "stderr_excerpt": "", "orchestrator_action": "skipped",
                });
                audit(&skipped);
                results.push(skipped);
            }
            return HookRun {
                ok: false,
                blocked: true,
                tamper: None,
                blocker: Some(json!({"hook_name": name, "verdict": verdict, "message": message})),
                results,
            };
        }
    }
    HookRun {
        ok: true,
        blocked: false,
        tamper: None,
        blocker: None,
        results,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ctx(dir: &Path) -> HookContext<'static> {
        HookContext {
            run_id: "run_1",
            turn_id: Some("turn_1"),
            audit_dir: dir.join(".agentxchain"),
            protected: Vec::new(),
        }
    }

    #[test]
    fn verdicts_modes_timeouts_and_tampering() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        std::fs::create_dir_all(root.join(".agentxchain")).unwrap();
        std::fs::write(root.join(".agentxchain/state.json"), "{\"ok\":1}").unwrap();
        let hooks = json!({
            "before_assignment": [
                {"name": "ok", "type": "process", "command": ["sh", "-c", "cat >/dev/null; echo '{\"verdict\":\"allow\"}'"], "timeout_ms": 5000, "mode": "blocking"},
                {"name": "slow", "type": "process", "command": ["sh", "-c", "sleep 5 & sleep 5; echo late"], "timeout_ms": 100, "mode": "advisory"},
                {"name": "leaves", "type": "process", "command": ["sh", "-c", "sleep 5 & echo '{\"verdict\":\"allow\"}'"], "timeout_ms": 1000, "mode": "advisory"},
                {"name": "loud", "type": "process", "command": ["sh", "-c", "echo '{\"verdict\":\"allow\"}'; head -c 3000000 /dev/zero | tr '\\0' ' '"], "timeout_ms": 5000, "mode": "advisory"},
                {"name": "bad", "type": "process", "command": ["sh", "-c", "echo nope"], "timeout_ms": 5000, "mode": "blocking"},
                {"name": "never", "type": "process", "command": ["true"], "timeout_ms": 5000, "mode": "blocking"}
            ],
            "before_validation": [
                {"name": "tamper", "type": "process", "command": ["sh", "-c", "echo '{}' > .agentxchain/state.json; echo '{\"verdict\":\"allow\"}'"], "timeout_ms": 5000, "mode": "blocking"}
            ]
        });
        let run = run_hooks(root, &hooks, "before_assignment", &json!({}), &ctx(root));
        let actions: Vec<&str> = run
            .results
            .iter()
            .map(|r| r["orchestrator_action"].as_str().unwrap())
            .collect();
        assert_eq!(
            actions,
            [
                "continued",
                "warned_timeout",
                "continued",
                "warned_failure",
                "blocked_invalid_output",
                "skipped"
            ]
        );
        assert!((run.ok, run.blocked) == (false, true));
        assert!(
            run.results[1]["duration_ms"].as_u64().unwrap() < 3000,
            "a timeout kills the hook"
        );
        assert!(
            run.results[2]["duration_ms"].as_u64().unwrap() < 3000,
            "a child left behind dies with the hook"
        );
        let run = run_hooks(root, &hooks, "before_validation", &json!({}), &ctx(root));
        assert_eq!(run.results[0]["orchestrator_action"], "aborted_tamper");
        assert_eq!(run.tamper.unwrap()["error_code"], "hook_state_tamper");
        assert_eq!(
            std::fs::read_to_string(root.join(".agentxchain/state.json")).unwrap(),
            "{\"ok\":1}",
            "restored"
        );
        let audit = std::fs::read_to_string(root.join(".agentxchain/hook-audit.jsonl")).unwrap();
        assert_eq!(audit.lines().count(), 7);
    }

    #[test]
    fn a_change_of_the_same_length_with_its_mtime_set_back_is_seen_and_undone() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        std::fs::create_dir_all(root.join(".agentxchain")).unwrap();
        let history = root.join(".agentxchain/history.jsonl");
        std::fs::write(&history, "{\"turn_id\":\"a\"}\n").unwrap();
        std::fs::write(root.join(".agentxchain/state.json"), "{}").unwrap();
        let hooks = json!({"before_validation": [
            {"name": "same-length", "type": "process", "command": ["sh", "-c", "t=$(stat -c %y .agentxchain/history.jsonl); printf '{\"turn_id\":\"b\"}\\n' > .agentxchain/history.jsonl; touch -d \"$t\" .agentxchain/history.jsonl; echo '{\"verdict\":\"allow\"}'"], "timeout_ms": 5000, "mode": "blocking"}
        ], "after_validation": [
            {"name": "reads-only", "type": "process", "command": ["sh", "-c", "cat .agentxchain/history.jsonl >/dev/null; echo '{\"verdict\":\"allow\"}'"], "timeout_ms": 5000, "mode": "blocking"}
        ]});
        let run = run_hooks(root, &hooks, "after_validation", &json!({}), &ctx(root));
        assert!(run.ok && run.tamper.is_none(), "{:?}", run.results);
        let run = run_hooks(root, &hooks, "before_validation", &json!({}), &ctx(root));
        assert_eq!(run.tamper.unwrap()["error_code"], "hook_history_tamper");
        assert_eq!(
            std::fs::read_to_string(&history).unwrap(),
            "{\"turn_id\":\"a\"}\n",
            "restored"
        );
    }

    #[test]
    fn a_protected_file_with_another_name_is_watched_and_one_that_cannot_be_read_runs_no_hook() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().join("p");
        std::fs::create_dir_all(root.join(".agentxchain")).unwrap();
        let history = root.join(".agentxchain/history.jsonl");
        std::fs::write(&history, "{\"turn_id\":\"a\"}\n").unwrap();
        // A second name left outside the project: the hook writes through it.
        let other = dir.path().join("other-name");
        std::fs::hard_link(&history, &other).unwrap();
        let hooks = json!({"before_validation": [
            {"name": "through-link", "type": "process", "command": ["sh", "-c", format!("printf x >> {}; echo '{{\"verdict\":\"allow\"}}'", other.display())], "timeout_ms": 5000, "mode": "advisory"}
        ]});
        let run = run_hooks(&root, &hooks, "before_validation", &json!({}), &ctx(&root));
        assert_eq!(run.tamper.unwrap()["error_code"], "hook_history_tamper");
        assert_eq!(
            std::fs::read_to_string(&history).unwrap(),
            "{\"turn_id\":\"a\"}\n"
        );
        // A FIFO where the history is: nothing can be compared, so no hook runs (and none waits).
        std::fs::remove_file(&history).unwrap();
        let fifo = std::ffi::CString::new(history.to_str().unwrap()).unwrap();
        assert_eq!(unsafe { libc::mkfifo(fifo.as_ptr(), 0o644) }, 0);
        let ran = dir.path().join("ran");
        let hooks = json!({"before_validation": [
            {"name": "never", "type": "process", "command": ["sh", "-c", format!("touch {}; echo '{{\"verdict\":\"allow\"}}'", ran.display())], "timeout_ms": 5000, "mode": "advisory"}
        ]});
        let run = run_hooks(&root, &hooks, "before_validation", &json!({}), &ctx(&root));
        assert!(!run.ok && run.blocked);
        let why = run.blocker.unwrap()["message"].as_str().unwrap().to_owned();
        assert!(why.contains("history.jsonl cannot be read"), "{why}");
        assert!(!ran.exists(), "the hook did not run");
        // A protected path that cannot even be looked at (its directory is a file) is no
        // absent file: it halts the hooks too.
        std::fs::remove_file(&history).unwrap();
        std::fs::write(root.join(".agentxchain/bundle"), "a file, not a directory").unwrap();
        let mut c = ctx(&root);
        c.protected = vec![".agentxchain/bundle/PROMPT.md".to_owned()];
        let run = run_hooks(&root, &hooks, "before_validation", &json!({}), &c);
        assert!(!run.ok && run.blocked, "{:?}", run.results);
        assert!(!ran.exists(), "the hook did not run");
    }

    #[test]
    fn the_audit_follows_no_link_an_agent_planted() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().join("p");
        std::fs::create_dir_all(root.join(".agentxchain")).unwrap();
        let outside = dir.path().join("bashrc");
        std::fs::write(&outside, "keep\n").unwrap();
        std::os::unix::fs::symlink(&outside, root.join(".agentxchain/hook-audit.jsonl")).unwrap();
        let hooks = json!({"before_gate": [{"name": "ok", "type": "process",
            "command": ["sh", "-c", "echo '{\"verdict\":\"allow\"}'"], "timeout_ms": 5000, "mode": "advisory"}]});
        let run = run_hooks(&root, &hooks, "before_gate", &json!({}), &ctx(&root));
        assert!(run.ok);
        assert_eq!(std::fs::read_to_string(&outside).unwrap(), "keep\n");
        // A hard link is not appended to either.
        std::fs::remove_file(root.join(".agentxchain/hook-audit.jsonl")).unwrap();
        std::fs::hard_link(&outside, root.join(".agentxchain/hook-audit.jsonl")).unwrap();
        run_hooks(&root, &hooks, "before_gate", &json!({}), &ctx(&root));
        assert_eq!(std::fs::read_to_string(&outside).unwrap(), "keep\n");
    }

    #[test]
    fn a_restore_writes_nothing_through_a_link_a_hook_left_and_undoes_a_directory() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().join("p");
        std::fs::create_dir_all(root.join(".agentxchain")).unwrap();
        std::fs::write(root.join(".agentxchain/state.json"), "{\"ok\":1}").unwrap();
        std::fs::write(root.join(".agentxchain/history.jsonl"), "{}\n").unwrap();
        let outside = dir.path().join("outside");
        std::fs::create_dir_all(&outside).unwrap();
        let hook = |script: &str| {
            json!({"before_gate": [{"name": "h", "type": "process",
                "command": ["sh", "-c", format!("{script}; echo '{{\"verdict\":\"allow\"}}'")],
                "timeout_ms": 5000, "mode": "advisory"}]})
        };
        // The history replaced by a directory: the file comes back.
        let run = run_hooks(
            &root,
            &hook("rm .agentxchain/history.jsonl; mkdir .agentxchain/history.jsonl"),
            "before_gate",
            &json!({}),
            &ctx(&root),
        );
        assert_eq!(run.tamper.unwrap()["error_code"], "hook_history_tamper");
        assert_eq!(
            std::fs::read_to_string(root.join(".agentxchain/history.jsonl")).unwrap(),
            "{}\n"
        );
        // `.agentxchain` replaced by a link out of the project: nothing is written there, and
        // the tamper says the files could not be put back.
        let script = format!(
            "mv .agentxchain .moved; ln -s {} .agentxchain",
            outside.display()
        );
        let run = run_hooks(
            &root,
            &hook(&script),
            "before_gate",
            &json!({}),
            &ctx(&root),
        );
        let message = run.tamper.unwrap()["message"].as_str().unwrap().to_owned();
        assert!(message.contains("could not be restored"), "{message}");
        assert!(
            std::fs::read_dir(&outside).unwrap().next().is_none(),
            "nothing written outside"
        );
    }

    #[test]
    fn header_variables_come_from_the_hook_env_and_a_missing_one_is_named() {
        assert_eq!(
            interpolate("Bearer ${T}", &json!({"T": "x"})).unwrap(),
            "Bearer x"
        );
        assert_eq!(
            interpolate("${AXC_SURELY_UNSET_VAR}", &json!({})).unwrap_err(),
            "header variable ${AXC_SURELY_UNSET_VAR} is not set"
        );
    }
}
