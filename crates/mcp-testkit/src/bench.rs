//! Helpers for the benchmark binaries: an MCP client that reads the server's stdout pipe
//! directly (no reader thread between the pipe and the timer, unlike [`crate::ServerProcess`]),
//! medians and percentiles, a process's peak RSS, and the size of a fixture tree.

use std::io::{BufRead, BufReader, Write};
use std::path::Path;
use std::process::{Child, ChildStdin, ChildStdout, Command, Stdio};
use std::time::Duration;

/// A server spoken to over its pipes, one request line and one reply line at a time.
pub struct PipeServer {
    child: Child,
    stdin: ChildStdin,
    stdout: BufReader<ChildStdout>,
    line: String,
}

impl PipeServer {
    /// Spawns `cmd` with piped stdin and stdout (stderr discarded).
    pub fn start(mut cmd: Command) -> PipeServer {
        let mut child = cmd
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .expect("spawn the server");
        let stdin = child.stdin.take().expect("piped stdin");
        let stdout = BufReader::new(child.stdout.take().expect("piped stdout"));
        PipeServer {
            child,
            stdin,
            stdout,
            line: String::new(),
        }
    }

    /// Writes `request` and a newline, then reads one reply line.
    pub fn roundtrip(&mut self, request: &str) -> &str {
        self.stdin.write_all(request.as_bytes()).unwrap();
        self.stdin.write_all(b"\n").unwrap();
        self.stdin.flush().unwrap();
        self.line.clear();
        self.stdout.read_line(&mut self.line).unwrap();
        &self.line
    }

    /// Peak resident set size of the server in KiB.
    pub fn peak_rss_kib(&self) -> Option<u64> {
        peak_rss_kib(self.child.id())
    }

    /// Writes `request` and a newline without waiting for a reply.
    pub fn send(&mut self, request: &str) {
        self.stdin.write_all(request.as_bytes()).unwrap();
        self.stdin.write_all(b"\n").unwrap();
        self.stdin.flush().unwrap();
    }

    /// Closes stdin and returns how long the server took to exit.
    pub fn close_and_wait(self) -> Duration {
        let PipeServer {
            mut child, stdin, ..
        } = self;
        let t = std::time::Instant::now();
        drop(stdin);
        child.wait().unwrap();
        t.elapsed()
    }

    /// Closes stdin and waits for the server to exit.
    pub fn stop(mut self) {
        drop(self.stdin);
        self.child.wait().unwrap();
    }
}

/// Peak resident set size of process `pid` in KiB (Linux `VmHWM`).
pub fn peak_rss_kib(pid: u32) -> Option<u64> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    status
        .lines()
        .find_map(|l| l.strip_prefix("VmHWM:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
}

/// The middle value (the upper one of an even count).
pub fn median(mut v: Vec<Duration>) -> Duration {
    v.sort();
    v[v.len() / 2]
}

/// The value 90% of the way up.
pub fn p90(mut v: Vec<Duration>) -> Duration {
    v.sort();
    v[v.len() * 9 / 10]
}

/// The value at fraction `p` of an already sorted list (nearest rank).
pub fn percentile(sorted: &[Duration], p: f64) -> Duration {
    let i = ((sorted.len() as f64 - 1.0) * p).round() as usize;
    sorted[i]
}

/// Total bytes of the files under `p`.
pub fn dir_size(p: &Path) -> u64 {
    std::fs::read_dir(p)
        .map(|rd| {
            rd.flatten()
                .map(|e| {
                    if e.path().is_dir() {
                        dir_size(&e.path())
                    } else {
                        e.metadata().map_or(0, |m| m.len())
                    }
                })
                .sum()
        })
        .unwrap_or(0)
}
