//! Black-box test harness for MCP servers that speak over stdio.
//!
//! [`ServerProcess`] spawns a server binary, writes raw bytes or JSON lines to its stdin and reads
//! its stdout line by line with timeouts, so tests can assert exact replies, their order, and
//! silence. It knows the wire format only (JSON-RPC lines, the 2026-07-28 `_meta` envelope); it
//! knows nothing of any product's tools. [`bench`] holds what the benchmark binaries share.

use std::collections::VecDeque;
use std::ffi::OsStr;
use std::io::{BufRead, BufReader, Read, Write};
use std::path::Path;
use std::process::{Child, ChildStdin, Command, ExitStatus, Stdio};
use std::sync::mpsc::{Receiver, channel};
use std::sync::{Arc, Mutex};
use std::thread;
use std::time::{Duration, Instant};

use serde_json::{Value, json};

pub mod bench;
pub mod docs;

/// How long a test waits for a reply before failing.
pub const TIMEOUT: Duration = Duration::from_secs(20);

/// The client capabilities, name and version that [`envelope`] sends.
pub const CLIENT_NAME: &str = "mcp-testkit";

/// A running server process.
pub struct ServerProcess {
    child: Child,
    stdin: Option<ChildStdin>,
    lines: Receiver<String>,
    stash: VecDeque<Value>,
    stderr: Arc<Mutex<Vec<u8>>>,
    stderr_reader: Option<thread::JoinHandle<()>>,
}

impl ServerProcess {
    /// Spawns `program args…` with piped stdio.
    pub fn spawn<I, S>(program: impl AsRef<OsStr>, args: I) -> ServerProcess
    where
        I: IntoIterator<Item = S>,
        S: AsRef<OsStr>,
    {
        let mut cmd = Command::new(program);
        cmd.args(args);
        ServerProcess::from_command(cmd)
    }

    /// Spawns `program args…` in `dir`.
    pub fn spawn_in<I, S>(program: impl AsRef<OsStr>, args: I, dir: &Path) -> ServerProcess
    where
        I: IntoIterator<Item = S>,
        S: AsRef<OsStr>,
    {
        let mut cmd = Command::new(program);
        cmd.args(args).current_dir(dir);
        ServerProcess::from_command(cmd)
    }

    /// Spawns a prepared command, replacing its stdio with pipes.
    pub fn from_command(mut cmd: Command) -> ServerProcess {
        cmd.stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        let mut child = cmd
            .spawn()
            .unwrap_or_else(|e| panic!("cannot spawn {cmd:?}: {e}"));
        let stdout = child.stdout.take().expect("piped stdout");
        let mut err = child.stderr.take().expect("piped stderr");
        let (tx, lines) = channel();
        thread::spawn(move || {
            for line in BufReader::new(stdout).lines() {
                let Ok(line) = line else { break };
                if tx.send(line).is_err() {
                    break;
                }
            }
        });
        let stderr = Arc::new(Mutex::new(Vec::new()));
        let sink = Arc::clone(&stderr);
        let stderr_reader = thread::spawn(move || {
            let mut buf = [0u8; 8192];
            while let Ok(n) = err.read(&mut buf) {
                if n == 0 {
                    break;
                }
                sink.lock().unwrap().extend_from_slice(&buf[..n]);
            }
        });
        ServerProcess {
            stdin: child.stdin.take(),
            child,
            lines,
            stash: VecDeque::new(),
            stderr,
            stderr_reader: Some(stderr_reader),
        }
    }

    pub fn pid(&self) -> u32 {
        self.child.id()
    }

    /// Writes raw bytes to the server's stdin.
    pub fn send_raw(&mut self, bytes: &[u8]) {
        let stdin = self.stdin.as_mut().expect("stdin already closed");
        stdin.write_all(bytes).expect("write to server stdin");
        stdin.flush().expect("flush server stdin");
    }

    /// Writes `value` as one JSON line.
    pub fn send(&mut self, value: &Value) {
        let mut line = serde_json::to_vec(value).expect("serialize");
        line.push(b'\n');
        self.send_raw(&line);
    }

    /// The next line the server writes, as raw text.
    pub fn recv_line(&mut self) -> String {
        self.recv_line_timeout(TIMEOUT)
            .unwrap_or_else(|| panic!("no reply within {TIMEOUT:?}; stderr: {}", self.stderr()))
    }

    pub fn recv_line_timeout(&mut self, timeout: Duration) -> Option<String> {
        self.lines.recv_timeout(timeout).ok()
    }

    /// The next message the server writes (stashed messages first).
    pub fn recv(&mut self) -> Value {
        if let Some(v) = self.stash.pop_front() {
            return v;
        }
        let line = self.recv_line();
        parse_line(&line)
    }

    /// The next message, or `None` if nothing arrives within `timeout`.
    pub fn recv_timeout(&mut self, timeout: Duration) -> Option<Value> {
        if let Some(v) = self.stash.pop_front() {
            return Some(v);
        }
        self.recv_line_timeout(timeout).map(|l| parse_line(&l))
    }

    /// Waits for the reply whose `id` equals `id`; anything else that arrives first is stashed
    /// for [`recv`](Self::recv).
    pub fn recv_reply(&mut self, id: &Value) -> Value {
        self.recv_reply_within(id, TIMEOUT)
    }

    /// [`recv_reply`](Self::recv_reply) with a hang guard of `timeout`, for a test whose
    /// replies queue behind each other's work (its claim is about that work, not its speed).
    pub fn recv_reply_within(&mut self, id: &Value, timeout: Duration) -> Value {
        if let Some(pos) = self.stash.iter().position(|m| m.get("id") == Some(id)) {
            return self.stash.remove(pos).expect("position is valid");
        }
        let deadline = Instant::now() + timeout;
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            let line = self.recv_line_timeout(left).unwrap_or_else(|| {
                panic!(
                    "no reply to id {id} within {timeout:?}; stderr: {}",
                    self.stderr()
                )
            });
            let msg = parse_line(&line);
            if msg.get("id") == Some(id) && msg.get("method").is_none() {
                return msg;
            }
            self.stash.push_back(msg);
        }
    }

    /// Sends a request and waits for its reply.
    pub fn request(&mut self, id: impl Into<Value>, method: &str, params: Value) -> Value {
        let id = id.into();
        self.send(&json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}));
        self.recv_reply(&id)
    }

    /// Sends a notification (no id).
    pub fn notify(&mut self, method: &str, params: Value) {
        self.send(&json!({"jsonrpc": "2.0", "method": method, "params": params}));
    }

    /// `initialize` with `version` (or none), then `notifications/initialized`; returns the result.
    pub fn initialize(&mut self, version: Option<&str>) -> Value {
        let mut params = json!({
            "capabilities": {},
            "clientInfo": {"name": CLIENT_NAME, "version": "1.0.0"}
        });
        if let Some(v) = version {
            params["protocolVersion"] = json!(v);
        }
        let reply = self.request(0, "initialize", params);
        self.notify("notifications/initialized", json!({}));
        reply
            .get("result")
            .cloned()
            .unwrap_or_else(|| panic!("initialize failed: {reply}"))
    }

    /// Asserts that the server writes nothing for `wait`.
    pub fn assert_silent(&mut self, wait: Duration) {
        if let Some(v) = self.stash.pop_front() {
            panic!("expected silence, got {v}");
        }
        if let Some(line) = self.recv_line_timeout(wait) {
            panic!("expected silence, got {line}");
        }
    }

    /// Closes stdin (EOF for the server).
    pub fn close_stdin(&mut self) {
        self.stdin = None;
    }

    /// Waits for the process to exit (kills it after `timeout`).
    pub fn wait_exit(&mut self, timeout: Duration) -> ExitStatus {
        use wait_timeout::ChildExt;
        if let Some(status) = self.child.wait_timeout(timeout).expect("wait") {
            return status;
        }
        let _ = self.child.kill();
        panic!("server did not exit within {timeout:?}");
    }

    /// Every remaining stdout line after the process ended.
    pub fn drain_lines(&mut self) -> Vec<String> {
        let mut out: Vec<String> = self.stash.drain(..).map(|v| v.to_string()).collect();
        while let Ok(line) = self.lines.recv_timeout(Duration::from_secs(5)) {
            out.push(line);
        }
        out
    }

    /// Everything the server wrote to stderr so far.
    pub fn stderr(&self) -> String {
        String::from_utf8_lossy(&self.stderr.lock().unwrap()).into_owned()
    }

    /// Everything the server wrote to stderr, complete: call after the process exited.
    pub fn final_stderr(&mut self) -> String {
        if let Some(reader) = self.stderr_reader.take() {
            let _ = reader.join();
        }
        self.stderr()
    }

    /// Waits until stderr contains `needle` (stderr is read on its own thread, so it may lag
    /// behind stdout). Returns whether it appeared within `timeout`.
    pub fn wait_for_stderr(&self, needle: &str, timeout: Duration) -> bool {
        let deadline = Instant::now() + timeout;
        loop {
            if self.stderr().contains(needle) {
                return true;
            }
            if Instant::now() > deadline {
                return false;
            }
            thread::sleep(Duration::from_millis(5));
        }
    }

    /// Peak resident set size of the live process in KiB (Linux `VmHWM`).
    pub fn peak_rss_kib(&self) -> Option<u64> {
        bench::peak_rss_kib(self.child.id())
    }
}

impl Drop for ServerProcess {
    fn drop(&mut self) {
        self.stdin = None;
        if matches!(self.child.try_wait(), Ok(None)) {
            thread::sleep(Duration::from_millis(1));
            if matches!(self.child.try_wait(), Ok(None)) {
                let _ = self.child.kill();
            }
        }
        let _ = self.child.wait();
    }
}

fn parse_line(line: &str) -> Value {
    serde_json::from_str(line)
        .unwrap_or_else(|e| panic!("server wrote a non-JSON line ({e}): {line:?}"))
}

/// The 2026-07-28 `_meta` envelope for `version`.
pub fn envelope(version: &str) -> Value {
    json!({
        "io.modelcontextprotocol/protocolVersion": version,
        "io.modelcontextprotocol/clientCapabilities": {},
        "io.modelcontextprotocol/clientInfo": {"name": CLIENT_NAME, "version": "1.0.0"}
    })
}

/// `params` with the 2026-07-28 envelope added under `_meta`.
pub fn enveloped(version: &str, mut params: Value) -> Value {
    params["_meta"] = envelope(version);
    params
}

/// The text of the first content block of a `tools/call` result.
pub fn tool_text(result: &Value) -> &str {
    result["content"][0]["text"]
        .as_str()
        .unwrap_or_else(|| panic!("no text block in {result}"))
}

/// Checks the basics every binary owes its users: `--version` prints `<name> <version>`, `--help`
/// prints a usage line, and an unknown flag is a usage error (exit 2) that names the flag.
pub fn assert_cli_basics(bin: &str, name: &str, version: &str) {
    use std::process::Command;
    let out = Command::new(bin)
        .arg("--version")
        .output()
        .expect("run --version");
    assert!(out.status.success());
    assert_eq!(
        String::from_utf8_lossy(&out.stdout).trim(),
        format!("{name} {version}")
    );
    let out = Command::new(bin)
        .arg("--help")
        .output()
        .expect("run --help");
    assert!(out.status.success());
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains(&format!("Usage: {name}")), "{text}");
    let out = Command::new(bin)
        .arg("--no-such-flag")
        .output()
        .expect("run with a bad flag");
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("--no-such-flag"));
}

/// Copies the fixture project at `from` to `to` (created), leaving out its `expected/`
/// captures; copies are writable even when the fixture files are read-only.
pub fn copy_fixture(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for e in std::fs::read_dir(from).unwrap().flatten() {
        if e.file_name() == "expected" {
            continue;
        }
        let target = to.join(e.file_name());
        if e.path().is_dir() {
            copy_fixture(&e.path(), &target);
        } else {
            std::fs::write(&target, std::fs::read(e.path()).unwrap()).unwrap();
        }
    }
}
