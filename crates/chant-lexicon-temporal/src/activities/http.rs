//! `httpCheck`, and the one HTTP GET the activities that ask a web API share: plain `http://`
//! in process (loopback included), `https://` through `curl`.

use std::io::{Read, Write};
use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};

use chant_core::lexicon::{Activity, ActivityCall, ActivityError};
use serde_json::{Value as Json, json};

use super::call::{arg, on_path, quote, required, text};

/// `httpCheck {url, method?, status?, contains?, retries?, intervalMs?}`: `http://` URLs
/// (loopback included) are asked in process; `https://` through `curl`.
pub struct HttpCheck;

impl Activity for HttpCheck {
    fn name(&self) -> &'static str {
        "httpCheck"
    }

    fn run(&self, call: &ActivityCall<'_>) -> Result<Json, ActivityError> {
        let url = required(call, "httpCheck", "url")?;
        let method = text(call, "method").unwrap_or("GET");
        if !method.bytes().all(|b| b.is_ascii_uppercase()) || method.is_empty() {
            return Err(ActivityError::new(
                "InvalidArgs",
                format!("httpCheck method \"{method}\" is not an HTTP method"),
            ));
        }
        let expected = arg(call, "status").and_then(Json::as_u64);
        let contains = text(call, "contains");
        let retries = arg(call, "retries")
            .and_then(Json::as_u64)
            .unwrap_or(0)
            .min(1000);
        let interval = Duration::from_millis(
            arg(call, "intervalMs")
                .and_then(Json::as_u64)
                .unwrap_or(1000),
        );
        let deadline = Instant::now() + Duration::from_millis(call.timeout_ms);
        let mut last = String::new();
        for attempt in 0..=retries {
            if call.cancel.load(Ordering::SeqCst) {
                return Err(ActivityError::new(
                    "Cancelled",
                    format!("httpCheck of {url} cancelled"),
                ));
            }
            let left = deadline.saturating_duration_since(Instant::now());
            if left.is_zero() {
                break;
            }
            let answer = if url.starts_with("https://") {
                curl(call, "httpCheck", url, method, &[], left)
            } else {
                http_get(
                    "httpCheck",
                    url,
                    method,
                    &[],
                    left.min(Duration::from_secs(30)),
                    call.cancel,
                )
            };
            match answer {
                Ok((status, body)) => {
                    let status_ok = expected.map_or((200..300).contains(&status), |e| e == status);
                    if !status_ok {
                        last = format!(
                            "status {status} (want {})",
                            expected.map_or("2xx".to_owned(), |e| e.to_string())
                        );
                    } else if let Some(c) = contains.filter(|c| !body.contains(c)) {
                        last = format!("body missing \"{c}\"");
                    } else {
                        return Ok(json!({"status": status}));
                    }
                }
                Err(e) if e.name == "ToolMissing" || e.name == "InvalidArgs" => return Err(e),
                Err(e) => last = e.message,
            }
            if attempt < retries {
                let until = Instant::now() + interval;
                while Instant::now() < until && !call.cancel.load(Ordering::SeqCst) {
                    std::thread::sleep(Duration::from_millis(20));
                }
            }
        }
        Err(ActivityError::new(
            "Error",
            format!("httpCheck failed for {url}: {last}"),
        ))
    }
}

/// The most of a body read: enough for `contains`, bounded against a hostile server.
const MAX_BODY: u64 = 1 << 20;

/// One HTTP/1.1 request over plain TCP: `(status, body)`. Hand-written because the check
/// needs only a status line and a bounded body, and no client crate earns its build time for
/// that; `https` goes through curl.
fn http_get(
    activity: &str,
    url: &str,
    method: &str,
    headers: &[(&str, String)],
    timeout: Duration,
    cancel: &std::sync::atomic::AtomicBool,
) -> Result<(u64, String), ActivityError> {
    let deadline = Instant::now() + timeout;
    let bad = |m: String| ActivityError::new("InvalidArgs", m);
    let rest = url.strip_prefix("http://").ok_or_else(|| {
        bad(format!(
            "{activity} url must be http:// or https:// (got \"{url}\")"
        ))
    })?;
    let (authority, path) = match rest.find('/') {
        Some(i) => (&rest[..i], &rest[i..]),
        None => (rest, "/"),
    };
    // A space or any control character would end or split the request line.
    if authority.is_empty()
        || authority.contains('@')
        || authority.chars().any(char::is_control)
        || path.chars().any(|c| c == ' ' || c.is_control())
    {
        return Err(bad(format!(
            "{activity} url \"{url}\" is not one it can ask"
        )));
    }
    let addr = if authority
        .rsplit_once(':')
        .is_some_and(|(_, p)| p.bytes().all(|b| b.is_ascii_digit()) && !p.is_empty())
        && !authority.ends_with(']')
    {
        authority.to_owned()
    } else {
        format!("{authority}:80")
    };
    let fail = |e: std::io::Error| ActivityError::new("Error", format!("{url}: {e}"));
    use std::net::ToSocketAddrs;
    let target = addr
        .to_socket_addrs()
        .map_err(fail)?
        .next()
        .ok_or_else(|| ActivityError::new("Error", format!("{url}: no address")))?;
    let mut stream = std::net::TcpStream::connect_timeout(&target, timeout).map_err(fail)?;
    stream.set_write_timeout(Some(timeout)).map_err(fail)?;
    let mut extra = String::new();
    for (k, v) in headers {
        if v.contains(['\r', '\n']) {
            return Err(bad(format!("header {k} of {url} holds a line break")));
        }
        extra.push_str(&format!("{k}: {v}\r\n"));
    }
    let accept = if headers
        .iter()
        .any(|(k, _)| k.eq_ignore_ascii_case("accept"))
    {
        ""
    } else {
        "Accept: */*\r\n"
    };
    write!(stream, "{method} {path} HTTP/1.1\r\nHost: {authority}\r\nUser-Agent: chant\r\n{accept}{extra}Connection: close\r\n\r\n").map_err(fail)?;
    // Read in slices until the server closes, the cap, the deadline or a cancel: a server that
    // drips or never ends the body holds the step no longer than its time.
    let mut raw = Vec::new();
    let mut chunk = [0u8; 16 * 1024];
    loop {
        if cancel.load(Ordering::SeqCst) {
            return Err(ActivityError::new(
                "Cancelled",
                format!("the request to {url} was cancelled"),
            ));
        }
        let left = deadline.saturating_duration_since(Instant::now());
        if left.is_zero() {
            return Err(ActivityError::new(
                "Error",
                format!("{url}: no complete answer in time"),
            ));
        }
        stream
            .set_read_timeout(Some(left.min(Duration::from_millis(200))))
            .map_err(fail)?;
        match stream.read(&mut chunk) {
            Ok(0) => break,
            Ok(n) => {
                raw.extend_from_slice(&chunk[..n]);
                if raw.len() as u64 > MAX_BODY + 16 * 1024 {
                    break;
                }
            }
            Err(e)
                if matches!(
                    e.kind(),
                    std::io::ErrorKind::WouldBlock
                        | std::io::ErrorKind::TimedOut
                        | std::io::ErrorKind::Interrupted
                ) => {}
            Err(e) => return Err(fail(e)),
        }
    }
    let text = String::from_utf8_lossy(&raw);
    let status = text
        .strip_prefix("HTTP/1.")
        .and_then(|r| r.get(2..5))
        .and_then(|s| s.parse::<u64>().ok())
        .ok_or_else(|| ActivityError::new("Error", format!("{url}: the answer is not HTTP")))?;
    let body = text
        .split_once("\r\n\r\n")
        .map(|(_, b)| b.to_owned())
        .unwrap_or_default();
    Ok((status, body))
}

/// `curl` for `https://`: status and body. Headers reach curl on its standard input (`-H @-`),
/// never on its command line, where any user could read a token.
fn curl(
    call: &ActivityCall<'_>,
    activity: &str,
    url: &str,
    method: &str,
    headers: &[(&str, String)],
    left: Duration,
) -> Result<(u64, String), ActivityError> {
    if !on_path("curl") {
        return Err(ActivityError::new(
            "ToolMissing",
            format!("activity \"{activity}\" needs curl on PATH for https URLs"),
        ));
    }
    let mut lines = String::new();
    for (k, v) in headers {
        if v.contains(['\r', '\n']) {
            return Err(ActivityError::new(
                "InvalidArgs",
                format!("header {k} of {url} holds a line break"),
            ));
        }
        lines.push_str(&format!("{k}: {v}\n"));
    }
    let secs = left.as_secs().max(1).to_string();
    let argv = [
        "curl",
        "-sS",
        "--max-time",
        &secs,
        "--max-filesize",
        "1048576",
        "-X",
        method,
        "-H",
        "@-",
        "-w",
        "\n%{http_code}",
        "--",
        url,
    ];
    let cmd: Vec<String> = argv.iter().map(|w| quote(w)).collect();
    // `head -c` bounds what reaches chant: curl's `--max-filesize` cannot stop a body of
    // unknown length, and an answer cut there has lost its status line, so it is refused.
    let cap = MAX_BODY + 16;
    let cmd = format!(
        "printf '%s' \"$CHANT_HTTP_HEADERS\" | {} | head -c {cap}",
        cmd.join(" ")
    );
    let env = [("CHANT_HTTP_HEADERS".to_owned(), lines)];
    let out = call
        .host
        .shell(&cmd, None, &env, call.timeout_ms, call.cancel)?;
    if out.len() as u64 > MAX_BODY {
        return Err(ActivityError::new(
            "Error",
            format!("{url}: the answer is larger than {MAX_BODY} bytes"),
        ));
    }
    let (body, code) = out.rsplit_once('\n').unwrap_or(("", out.as_str()));
    let status = code
        .trim()
        .parse::<u64>()
        .map_err(|_| ActivityError::new("Error", format!("{url}: curl gave no status")))?;
    Ok((status, body.to_owned()))
}

/// `GET url` with `headers`, for the activities that ask a web API: `(status, body)`, within
/// `left` (at most 30 s a request) and the step's cancel.
pub(super) fn get(
    call: &ActivityCall<'_>,
    activity: &str,
    url: &str,
    headers: &[(&str, String)],
    left: Duration,
) -> Result<(u64, String), ActivityError> {
    let left = left
        .min(Duration::from_secs(30))
        .max(Duration::from_millis(1));
    if url.starts_with("https://") {
        curl(call, activity, url, "GET", headers, left)
    } else {
        http_get(activity, url, "GET", headers, left, call.cancel)
    }
}
