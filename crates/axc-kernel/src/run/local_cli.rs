//! The `local_cli` runtime: a turn's agent is a process on this machine. The command comes
//! from the runtime (`command: ["claude", "-p", "{prompt}"]`, or `command` + `args`), the
//! prompt (the bundle's PROMPT.md, `---`, CONTEXT.md) goes by `prompt_transport` (`argv`
//! replaces `{prompt}`, `stdin` writes it, `dispatch_bundle_only` leaves it on disk), the
//! environment carries `AGENTXCHAIN_TURN_ID`, and its output goes to the bundle's
//! `stdout.log` as it comes (stderr lines prefixed `[stderr] `). The turn's deadline bounds it
//! (SIGTERM to its process group, SIGKILL 10 s later); a process that says nothing and stages
//! nothing within the startup watchdog (180 s, `startup_watchdog_ms`) is ended too.
//!
//! Process success is not turn success: only a staged result that is more than `{}` is. The
//! adapter never decides a transition — it returns an [`Outcome`] and moves the turn through
//! `starting`/`running` ([`super::lifecycle`]); `step` validates and accepts.

use std::io::{Read, Write};
use std::os::unix::process::{CommandExt, ExitStatusExt};
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc;
use std::time::{Duration, Instant, SystemTime};

use serde_json::{Value as Json, json};

use super::lifecycle::{self, Stage};
use super::store::Store;
use super::{Refusal, dispatch, now};

/// The startup watchdog's default window.
pub const STARTUP_WATCHDOG_MS: u64 = 180_000;
/// A turn without a deadline may run this long.
const DEFAULT_TIMEOUT: Duration = Duration::from_secs(20 * 60);
/// From SIGTERM to SIGKILL when the deadline or the watchdog ends a process.
const KILL_GRACE: Duration = Duration::from_secs(10);
/// From SIGTERM to SIGKILL when the operator aborts (Ctrl+C).
const ABORT_GRACE: Duration = Duration::from_secs(5);
/// How long the pipes may stay open after the process exits (a background process it left
/// holding them) before its process group is ended.
const PIPE_GRACE: Duration = Duration::from_secs(2);
/// How much of stderr the exit diagnostic quotes.
const STDERR_EXCERPT: usize = 800;

/// How the prompt reaches the process.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Transport {
    Argv,
    Stdin,
    BundleOnly,
}

impl Transport {
    pub fn as_str(self) -> &'static str {
        match self {
            Transport::Argv => "argv",
            Transport::Stdin => "stdin",
            Transport::BundleOnly => "dispatch_bundle_only",
        }
    }
}

/// The runtime's transport: `prompt_transport` when it is one of the three, else `argv` when
/// the command names `{prompt}`, else `dispatch_bundle_only`.
pub fn transport(runtime: &Json) -> Transport {
    match runtime["prompt_transport"].as_str() {
        Some("argv") => return Transport::Argv,
        Some("stdin") => return Transport::Stdin,
        Some("dispatch_bundle_only") => return Transport::BundleOnly,
        _ => {}
    }
    let parts: Vec<&Json> = match &runtime["command"] {
        Json::Array(a) => a.iter().collect(),
        c => std::iter::once(c)
            .chain(runtime["args"].as_array().into_iter().flatten())
            .collect(),
    };
    if parts
        .iter()
        .any(|p| p.as_str().is_some_and(|s| s.contains("{prompt}")))
    {
        Transport::Argv
    } else {
        Transport::BundleOnly
    }
}

/// The runtime's command as one line, for the operator (`claude -p {prompt}`).
pub fn describe(runtime: &Json) -> String {
    let mut parts: Vec<String> = match &runtime["command"] {
        Json::Array(a) => a.iter().map(text).collect(),
        Json::String(s) => vec![s.clone()],
        _ => return "(default)".into(),
    };
    parts.extend(runtime["args"].as_array().into_iter().flatten().map(text));
    parts.join(" ")
}

fn text(v: &Json) -> String {
    v.as_str().map_or_else(|| v.to_string(), str::to_owned)
}

/// The program and its arguments, `{prompt}` replaced (argv) or dropped (otherwise). A first
/// array element with spaces (`["echo test"]`) is split into program and arguments; later
/// elements are kept whole.
pub fn command(runtime: &Json, prompt: &str) -> Option<(String, Vec<String>)> {
    let t = transport(runtime);
    let (program, rest): (String, Vec<String>) = match &runtime["command"] {
        Json::Array(a) => {
            let first = a.first().map(text).unwrap_or_default();
            let mut head = first.split_whitespace().map(str::to_owned);
            let program = if first.contains(' ') {
                head.next().unwrap_or_default()
            } else {
                first.clone()
            };
            let mut rest: Vec<String> = if first.contains(' ') {
                head.collect()
            } else {
                Vec::new()
            };
            rest.extend(a.iter().skip(1).map(text));
            (program, rest)
        }
        Json::String(s) if !s.is_empty() => (
            s.clone(),
            runtime["args"]
                .as_array()
                .into_iter()
                .flatten()
                .map(text)
                .collect(),
        ),
        _ => return None,
    };
    if program.is_empty() {
        return None;
    }
    let args = if t == Transport::Argv {
        rest.into_iter()
            .map(|a| {
                if a == "{prompt}" {
                    prompt.to_owned()
                } else {
                    a
                }
            })
            .collect()
    } else {
        rest.into_iter().filter(|a| a != "{prompt}").collect()
    };
    Some((program, args))
}

/// The startup watchdog's window for `runtime` (its `startup_watchdog_ms`, else the config's
/// `run_loop.startup_watchdog_ms`, else 180 s).
pub fn startup_watchdog_ms(config: &Json, runtime: &Json) -> u64 {
    let positive = |v: &Json| v.as_u64().filter(|n| *n > 0);
    positive(&runtime["startup_watchdog_ms"])
        .or_else(|| positive(&config["run_loop"]["startup_watchdog_ms"]))
        .unwrap_or(STARTUP_WATCHDOG_MS)
}

/// A staged result is proof only when it says something: not missing, blank or `{}`.
pub fn staged_ready(store: &Store, turn_id: &str) -> bool {
    let rel = dispatch::staging_rel(turn_id);
    match store.read_text(&rel, 16 << 20) {
        Ok(Some(t)) => !matches!(t.trim(), "" | "{}"),
        _ => false,
    }
}

/// How a dispatch ended.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Outcome {
    /// A result is staged (whatever the exit code).
    Staged,
    /// The operator aborted: the turn stays assigned.
    Aborted,
    /// The deadline ended the process before it staged a result.
    TimedOut,
    /// The process never started, or never said anything (`failure_type` as
    /// [`lifecycle::StartFailure`]).
    StartupFailed {
        failure_type: &'static str,
        error: String,
    },
    /// It exited without staging a result (`exit_code` `None`: killed, or never run).
    Failed {
        exit_code: Option<i32>,
        error: String,
    },
}

/// Receives each piece of output as it comes (`true` for stderr).
pub type Echo<'a> = &'a mut dyn FnMut(bool, &[u8]);

/// How [`run`] is watched.
pub struct Watch<'a> {
    /// Set (by SIGINT) to abort: the process is ended and the turn stays assigned.
    pub cancel: &'a AtomicBool,
    /// Each piece of output as it comes (`true` for stderr), for `--stream`.
    pub echo: Option<Echo<'a>>,
}

enum Piece {
    Out(Vec<u8>),
    Err(Vec<u8>),
    Closed,
}

/// Reads a pipe on its own thread into `tx` (bounded: a process that writes faster than the
/// log is kept waits on its pipe instead of filling memory), each piece ending on a whole
/// UTF-8 character (a character split across reads is carried to the next piece).
fn reader(mut pipe: impl Read + Send + 'static, tx: mpsc::SyncSender<Piece>, stderr: bool) {
    std::thread::spawn(move || {
        let mut buf = vec![0u8; 16 * 1024];
        let mut carry: Vec<u8> = Vec::new();
        loop {
            match pipe.read(&mut buf) {
                Ok(0) | Err(_) => break,
                Ok(n) => {
                    let mut data = std::mem::take(&mut carry);
                    data.extend_from_slice(&buf[..n]);
                    let cut = match std::str::from_utf8(&data) {
                        Err(e) if e.error_len().is_none() => e.valid_up_to(),
                        _ => data.len(),
                    };
                    carry = data.split_off(cut);
                    if data.is_empty() {
                        continue;
                    }
                    let msg = if stderr {
                        Piece::Err(data)
                    } else {
                        Piece::Out(data)
                    };
                    if tx.send(msg).is_err() {
                        break;
                    }
                }
            }
        }
        if !carry.is_empty() {
            let _ = tx.send(if stderr {
                Piece::Err(carry)
            } else {
                Piece::Out(carry)
            });
        }
        let _ = tx.send(Piece::Closed);
    });
}

/// Ends the agent's process group when dropped: whatever way `run` leaves (its end, an error
/// on the way), nothing it started keeps running unwatched.
struct Group(u32);

impl Drop for Group {
    fn drop(&mut self) {
        signal_group(self.0, libc::SIGKILL);
    }
}

fn signal_group(pid: u32, sig: i32) {
    // SAFETY: signalling the process group the child leads; no memory is touched.
    unsafe {
        libc::kill(-(pid as i32), sig);
    }
}

fn errno_name(e: &std::io::Error) -> String {
    match e.kind() {
        std::io::ErrorKind::NotFound => "ENOENT".into(),
        std::io::ErrorKind::PermissionDenied => "EACCES".into(),
        _ => e.to_string(),
    }
}

/// The log of one dispatch, appended to the bundle's `stdout.log` as it grows (so
/// `tail -f` follows it); a log that cannot be written never stops the turn.
struct Log<'a> {
    store: &'a Store,
    rel: String,
    /// A stderr line not finished yet (prefixed once, when it starts).
    err_open: bool,
    /// Bytes written so far; past [`MAX_LOG`] the agent's output is no longer kept.
    written: u64,
}

/// The most of an agent's output `stdout.log` keeps.
const MAX_LOG: u64 = 64 << 20;

impl Log<'_> {
    fn put(&mut self, text: &str) {
        if self.written > MAX_LOG {
            return;
        }
        self.written += text.len() as u64;
        let text = if self.written > MAX_LOG {
            format!(
                "{text}\n[adapter] output over {} MiB: the rest is not logged\n",
                MAX_LOG >> 20
            )
        } else {
            text.to_owned()
        };
        let _ = self.store.append_text(&self.rel, &text);
    }
    fn diag(&mut self, label: &str, payload: Json) {
        self.close_err();
        self.put(&format!("[adapter:diag] {label} {payload}\n"));
    }
    fn note(&mut self, text: &str) {
        self.close_err();
        self.put(&format!("[adapter] {text}\n"));
    }
    fn out(&mut self, bytes: &[u8]) {
        self.close_err();
        self.put(&String::from_utf8_lossy(bytes));
    }
    fn err(&mut self, bytes: &[u8]) {
        let text = String::from_utf8_lossy(bytes);
        let mut out = String::new();
        for piece in text.split_inclusive('\n') {
            if !self.err_open {
                out.push_str("[stderr] ");
            }
            out.push_str(piece);
            self.err_open = !piece.ends_with('\n');
        }
        self.put(&out);
    }
    fn close_err(&mut self) {
        if self.err_open {
            self.put("\n");
            self.err_open = false;
        }
    }
}

/// Runs the agent of the active turn `turn_id` and waits for it.
pub fn run(
    store: &Store,
    config: &Json,
    turn_id: &str,
    mut watch: Watch<'_>,
) -> Result<Outcome, Refusal> {
    let state = store.state()?;
    let Some(turn) = state["active_turns"].get(turn_id).cloned() else {
        return Err(Refusal::new("No active turn in state"));
    };
    let verification = crate::manifest::verify(store.root(), turn_id);
    if let Some(first) = verification.errors.first() {
        return Ok(Outcome::Failed {
            exit_code: None,
            error: format!(
                "Dispatch manifest verification failed: {}",
                first["message"]
                    .as_str()
                    .unwrap_or("the bundle is not as sealed")
            ),
        });
    }
    let runtime_id = turn["runtime_id"].as_str().unwrap_or("");
    let runtime = &config["runtimes"][runtime_id];
    if !runtime.is_object() {
        return Ok(Outcome::Failed {
            exit_code: None,
            error: format!("Runtime \"{runtime_id}\" not found in config"),
        });
    }
    let bundle = dispatch::bundle_rel(turn_id);
    let Some(prompt) = store.read_text(&format!("{bundle}/PROMPT.md"), 16 << 20)? else {
        return Ok(Outcome::Failed {
            exit_code: None,
            error: "Dispatch bundle not found. Run writeDispatchBundle() first.".into(),
        });
    };
    let context = store
        .read_text(&format!("{bundle}/CONTEXT.md"), 16 << 20)?
        .unwrap_or_default();
    let full = format!("{prompt}\n---\n\n{context}");
    let t = transport(runtime);
    let Some((program, args)) = command(runtime, &full) else {
        return Ok(Outcome::Failed {
            exit_code: None,
            error: format!(
                "Cannot resolve CLI command for runtime \"{runtime_id}\". Expected \"command\" field in runtime config."
            ),
        });
    };
    // The process runs inside the project: a `cwd` that leads out of it is refused.
    let cwd = match runtime["cwd"].as_str().filter(|c| !c.is_empty()) {
        Some(c) => {
            let p = store.path(c).map_err(|r| {
                Refusal::new(format!(
                    "runtimes.{runtime_id}.cwd {c:?} is not a directory inside the project: {}",
                    r.message
                ))
            })?;
            if !p.is_dir() {
                return Ok(Outcome::Failed {
                    exit_code: None,
                    error: format!(
                        "runtimes.{runtime_id}.cwd {c:?} is not a directory inside the project"
                    ),
                });
            }
            p
        }
        None => store.root().to_path_buf(),
    };
    let deadline = turn["deadline_at"]
        .as_str()
        .and_then(|d| crate::events::timestamp(&json!(d)))
        .map(|d| {
            d.duration_since(SystemTime::now())
                .unwrap_or(Duration::ZERO)
        })
        .unwrap_or(DEFAULT_TIMEOUT);
    let watchdog = Duration::from_millis(startup_watchdog_ms(config, runtime));
    // A result left from an earlier attempt is not this attempt's proof.
    let staging = dispatch::staging_rel(turn_id);
    if store.read_text(&staging, 16 << 20).ok().flatten().is_some() {
        store.write_text(&staging, "{}")?;
    }
    let mut log = Log {
        store,
        rel: format!("{bundle}/stdout.log"),
        err_open: false,
        written: 0,
    };
    let shown_args: Vec<String> = args
        .iter()
        .map(|a| {
            if t == Transport::Argv && *a == full {
                format!("<prompt:{} bytes>", full.len())
            } else {
                a.clone()
            }
        })
        .collect();
    log.diag(
        "spawn_prepare",
        json!({
            "runtime_id": runtime_id, "turn_id": turn_id, "command": program,
            "args": shown_args, "cwd": cwd.display().to_string(),
            "prompt_transport": t.as_str(),
            "stdin_bytes": if t == Transport::Stdin { full.len() } else { 0 },
        }),
    );
    let mut child = match Command::new(&program)
        .args(&args)
        .current_dir(&cwd)
        .env("AGENTXCHAIN_TURN_ID", turn_id)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .process_group(0)
        .spawn()
    {
        Ok(c) => c,
        Err(e) => {
            log.diag(
                "spawn_error",
                json!({"code": errno_name(&e), "message": e.to_string()}),
            );
            return Ok(Outcome::StartupFailed {
                failure_type: "runtime_spawn_failed",
                error: format!("Subprocess error: spawn {program} {}", errno_name(&e)),
            });
        }
    };
    let pid = child.id();
    let _group = Group(pid);
    let spawned = Instant::now();
    log.diag(
        "spawn_attached",
        json!({"pid": pid, "at": now(), "startup_watchdog_ms": watchdog.as_millis() as u64}),
    );
    lifecycle::mark(store, turn_id, Stage::Starting { pid: Some(pid) })?;
    let (tx, rx) = mpsc::sync_channel(64);
    let mut open = 0;
    if let Some(out) = child.stdout.take() {
        reader(out, tx.clone(), false);
        open += 1;
    }
    if let Some(err) = child.stderr.take() {
        reader(err, tx.clone(), true);
        open += 1;
    }
    drop(tx);
    if let Some(mut stdin) = child.stdin.take() {
        let input = if t == Transport::Stdin {
            full.clone().into_bytes()
        } else {
            Vec::new()
        };
        // Written on its own thread: a process that does not read its stdin never blocks us.
        // An agent that exits before reading it leaves a closed pipe: the write must fail with
        // EPIPE, not raise SIGPIPE (whose default action, which the binary keeps for its own
        // stdout, would end this command). SIGPIPE from a write goes to the writing thread, so
        // blocking it here, in this thread only, is enough; it dies with the thread.
        std::thread::spawn(move || {
            crate::process::block_sigpipe();
            let _ = stdin.write_all(&input);
        });
    }
    let mut first_output: Option<&'static str> = None;
    let mut stderr_excerpt = String::new();
    let (mut out_bytes, mut err_bytes) = (0usize, 0usize);
    let mut term_at: Option<(Instant, Duration)> = None;
    let mut killed = false;
    let mut timed_out = false;
    let mut watchdog_fired = false;
    let mut aborted = false;
    let mut exited: Option<(std::process::ExitStatus, Instant)> = None;
    loop {
        match rx.recv_timeout(Duration::from_millis(50)) {
            Ok(Piece::Out(b)) => {
                out_bytes += b.len();
                if first_output.is_none() {
                    first_output = Some("stdout");
                    log.diag(
                        "first_output",
                        json!({"at": now(), "stream": "stdout", "pid": pid, "startup_latency_ms": spawned.elapsed().as_millis() as u64}),
                    );
                    lifecycle::mark(store, turn_id, Stage::Running { stream: "stdout" })?;
                }
                log.out(&b);
                if let Some(echo) = watch.echo.as_mut() {
                    echo(false, &b);
                }
            }
            Ok(Piece::Err(b)) => {
                err_bytes += b.len();
                if stderr_excerpt.len() < STDERR_EXCERPT {
                    let text = String::from_utf8_lossy(&b);
                    let room = STDERR_EXCERPT - stderr_excerpt.len();
                    stderr_excerpt.extend(text.chars().take(room));
                }
                log.err(&b);
                if let Some(echo) = watch.echo.as_mut() {
                    echo(true, &b);
                }
            }
            Ok(Piece::Closed) => open -= 1,
            Err(mpsc::RecvTimeoutError::Timeout) => {}
            Err(mpsc::RecvTimeoutError::Disconnected) => open = 0,
        }
        if exited.is_none()
            && let Ok(Some(status)) = child.try_wait()
        {
            exited = Some((status, Instant::now()));
        }
        if let Some((_, at)) = exited {
            if open == 0 {
                break;
            }
            if at.elapsed() >= PIPE_GRACE {
                // Whatever it left behind holding the pipes ends with the turn.
                signal_group(pid, libc::SIGKILL);
                break;
            }
            continue;
        }
        if !aborted && watch.cancel.load(Ordering::SeqCst) {
            aborted = true;
            log.note("Abort signal received. Sending SIGTERM.");
            signal_group(pid, libc::SIGTERM);
            term_at = Some((Instant::now(), ABORT_GRACE));
        }
        if term_at.is_none() && spawned.elapsed() >= deadline {
            timed_out = true;
            log.note(&format!(
                "Turn timed out after {}s. Sending SIGTERM.",
                deadline.as_secs_f64().round() as u64
            ));
            signal_group(pid, libc::SIGTERM);
            term_at = Some((Instant::now(), KILL_GRACE));
        }
        if term_at.is_none()
            && first_output.is_none()
            && spawned.elapsed() >= watchdog
            && !staged_ready(store, turn_id)
        {
            watchdog_fired = true;
            log.note(&format!(
                "Startup watchdog fired after {}s with no output.",
                watchdog.as_secs_f64().round() as u64
            ));
            signal_group(pid, libc::SIGTERM);
            term_at = Some((Instant::now(), KILL_GRACE));
        }
        if let Some((at, grace)) = term_at
            && !killed
            && at.elapsed() >= grace
        {
            killed = true;
            log.note("Grace period expired. Sending SIGKILL.");
            signal_group(pid, libc::SIGKILL);
        }
    }
    let (status, _) = match exited {
        Some(e) => e,
        None => (child.wait()?, Instant::now()),
    };
    // The turn's processes end with it: a background process it left (pipes closed or not)
    // does not go on writing into the project after the result is judged.
    signal_group(pid, libc::SIGKILL);
    let exit_code = status.code();
    let by_signal = matches!(status.signal(), Some(libc::SIGTERM | libc::SIGKILL));
    let has_result = staged_ready(store, turn_id);
    if has_result && first_output.is_none() {
        first_output = Some("staged_result");
    }
    let mut exit = json!({
        "pid": pid, "exit_code": exit_code, "signal": status.signal(),
        "elapsed_since_spawn_ms": spawned.elapsed().as_millis() as u64,
        "first_output_stream": first_output, "stdout_bytes": out_bytes, "stderr_bytes": err_bytes,
        "staged_result_ready": has_result, "watchdog_fired": watchdog_fired,
    });
    if !stderr_excerpt.is_empty() {
        exit["stderr_excerpt"] = json!(stderr_excerpt);
    }
    if timed_out {
        exit["timed_out"] = json!(true);
    }
    log.diag("process_exit", exit);
    if aborted {
        return Ok(Outcome::Aborted);
    }
    if has_result {
        if first_output == Some("staged_result") {
            lifecycle::mark(
                store,
                turn_id,
                Stage::Running {
                    stream: "staged_result",
                },
            )?;
        }
        return Ok(Outcome::Staged);
    }
    let code = exit_code.map_or("null".to_owned(), |c| c.to_string());
    Ok(if watchdog_fired {
        Outcome::StartupFailed {
            failure_type: "no_subprocess_output",
            error: format!(
                "Subprocess produced no output within {}s and did not stage a turn result.",
                watchdog.as_secs_f64().round() as u64
            ),
        }
    } else if timed_out || by_signal {
        Outcome::TimedOut
    } else if first_output.is_none() {
        Outcome::StartupFailed {
            failure_type: "no_subprocess_output",
            error: format!(
                "Subprocess exited (code {code}) before producing output or staging a turn result."
            ),
        }
    } else {
        Outcome::Failed {
            exit_code,
            error: format!(
                "Subprocess exited (code {code}) without writing a staged turn result to {staging}."
            ),
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_transport_is_the_declared_one_else_inferred_from_the_command() {
        assert_eq!(
            transport(&json!({"command": ["a"], "prompt_transport": "stdin"})),
            Transport::Stdin
        );
        assert_eq!(
            transport(&json!({"command": ["a", "-p", "{prompt}"]})),
            Transport::Argv
        );
        assert_eq!(
            transport(&json!({"command": "a", "args": ["x{prompt}"]})),
            Transport::Argv
        );
        assert_eq!(transport(&json!({"command": ["a"]})), Transport::BundleOnly);
        assert_eq!(
            transport(&json!({"command": ["a"], "prompt_transport": "carrier-pigeon"})),
            Transport::BundleOnly
        );
    }

    #[test]
    fn the_command_places_or_drops_the_prompt_and_splits_only_a_spaced_head() {
        let argv = json!({"command": ["claude", "-p", "{prompt}"]});
        assert_eq!(
            command(&argv, "P"),
            Some(("claude".into(), vec!["-p".into(), "P".into()]))
        );
        let stdin = json!({"command": ["claude", "-p", "{prompt}"], "prompt_transport": "stdin"});
        assert_eq!(
            command(&stdin, "P"),
            Some(("claude".into(), vec!["-p".into()]))
        );
        let head = json!({"command": ["node -e", "console.log('a b')"]});
        assert_eq!(
            command(&head, "P"),
            Some((
                "node".into(),
                vec!["-e".into(), "console.log('a b')".into()]
            ))
        );
        let shape2 = json!({"command": "codex", "args": ["exec", "{prompt}"]});
        assert_eq!(
            command(&shape2, "P"),
            Some(("codex".into(), vec!["exec".into(), "P".into()]))
        );
        assert_eq!(command(&json!({"command": ""}), "P"), None);
        assert_eq!(command(&json!({}), "P"), None);
        assert_eq!(describe(&argv), "claude -p {prompt}");
    }

    #[test]
    fn the_watchdog_window_is_the_runtimes_then_the_configs_then_180_s() {
        let config = json!({"run_loop": {"startup_watchdog_ms": 5000}});
        assert_eq!(
            startup_watchdog_ms(&config, &json!({"startup_watchdog_ms": 700})),
            700
        );
        assert_eq!(startup_watchdog_ms(&config, &json!({})), 5000);
        assert_eq!(
            startup_watchdog_ms(&json!({}), &json!({"startup_watchdog_ms": 0})),
            STARTUP_WATCHDOG_MS
        );
    }
}
