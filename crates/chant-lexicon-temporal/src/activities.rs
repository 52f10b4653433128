//! The Op activities the temporal lexicon runs on one machine: `chantBuild`, `chantTeardown`,
//! `httpCheck`, `lifecycleSnapshot`, `policyGate`, and the ones that drive a tool
//! (`kubectlApply`, `helmInstall`, `waitForReady`, `k3dUp`/`k3dDown`, the Floci emulators,
//! `azGroupEnsure`/`azGroupDelete`), which fail as `ToolMissing` when the tool is not on PATH.
//! chant's own work (a build, a snapshot, a command) is asked of the run's host.

use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};

use chant_core::lexicon::{Activity, ActivityCall, ActivityError, ActivityHint, BuildRequest};
use serde_json::{Value as Json, json};

fn arg<'a>(call: &'a ActivityCall<'_>, key: &str) -> Option<&'a Json> {
    call.args.and_then(|a| a.get(key))
}

fn text<'a>(call: &'a ActivityCall<'_>, key: &str) -> Option<&'a str> {
    arg(call, key).and_then(Json::as_str)
}

fn needs(activity: &str, key: &str) -> ActivityError {
    ActivityError::new("InvalidArgs", format!("{activity} needs a {key} string"))
}

fn required<'a>(
    call: &'a ActivityCall<'_>,
    activity: &str,
    key: &str,
) -> Result<&'a str, ActivityError> {
    text(call, key)
        .filter(|s| !s.is_empty())
        .ok_or_else(|| needs(activity, key))
}

fn env_of(call: &ActivityCall<'_>) -> Vec<(String, String)> {
    chant_core::lexicon::step_env(call.args)
}

/// `'…'` for `sh`: any byte is safe inside, a `'` is closed, escaped and reopened.
fn quote(word: &str) -> String {
    format!("'{}'", word.replace('\'', r"'\''"))
}

/// Whether `tool` is an executable file in a `PATH` directory.
fn on_path(tool: &str) -> bool {
    use std::os::unix::fs::PermissionsExt;
    std::env::var_os("PATH").is_some_and(|path| {
        std::env::split_paths(&path).any(|d| {
            std::fs::metadata(d.join(tool))
                .is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
        })
    })
}

/// Runs `argv` (its first word the tool) through the host's shell, each word quoted.
fn run_tool(
    call: &ActivityCall<'_>,
    activity: &str,
    argv: &[String],
) -> Result<String, ActivityError> {
    let tool = &argv[0];
    if !on_path(tool) {
        return Err(ActivityError::new(
            "ToolMissing",
            format!("activity \"{activity}\" needs {tool} on PATH"),
        ));
    }
    let cmd: Vec<String> = argv.iter().map(|w| quote(w)).collect();
    call.host.shell(
        &cmd.join(" "),
        None,
        &env_of(call),
        call.timeout_ms,
        call.cancel,
    )
}

/// The package.json script `name` of the project at `dir` (a directory the host resolved
/// inside the repository), if it has one: a regular file, at most 1 MiB.
fn script(dir: &Path, name: &str) -> Result<Option<String>, ActivityError> {
    let bytes = match fsread::read_inside(dir, Path::new("package.json"), 1 << 20) {
        Ok(b) => b,
        Err(e) if e.is_missing() => return Ok(None),
        Err(e) => {
            return Err(ActivityError::new(
                "InvalidArgs",
                format!("cannot read {}/package.json: {e}", dir.display()),
            ));
        }
    };
    let pkg: Json = serde_json::from_slice(&bytes).map_err(|e| {
        ActivityError::new(
            "InvalidArgs",
            format!("{}/package.json is not valid JSON: {e}", dir.display()),
        )
    })?;
    Ok(pkg["scripts"][name].as_str().map(str::to_owned))
}

/// Whether `sh` would read `body` as more than `&&`-joined simple commands (comments, quotes,
/// escapes, other lists, several lines): then the whole script goes to `sh` as written.
fn needs_whole_shell(body: &str) -> bool {
    body.contains(['#', '\'', '"', '\\', '\n', ';', '`', '(']) || body.contains("||")
}

/// A `chant build` command line, as a package.json script writes one, when that is all a
/// segment is: `[npx|bunx] chant build [dir] [--lexicon L] [-o|--output FILE] [--format F]`.
fn chant_build_words(segment: &str) -> Option<(PathBuf, Option<String>, Option<PathBuf>, bool)> {
    if segment.contains(['|', '>', '<', ';', '$', '`', '"', '\'', '(', '&', '*', '\\']) {
        return None;
    }
    let mut words = segment.split_whitespace().peekable();
    if matches!(words.peek(), Some(&("npx" | "bunx"))) {
        words.next();
    }
    if words.next() != Some("chant") || words.next() != Some("build") {
        return None;
    }
    let (mut dir, mut lexicon, mut output, mut yaml) = (None, None, None, false);
    while let Some(w) = words.next() {
        match w {
            "--lexicon" | "-d" => lexicon = Some(words.next()?.to_owned()),
            "-o" | "--output" => output = Some(PathBuf::from(words.next()?)),
            "--format" => yaml = words.next()? == "yaml",
            "--no-fold" => {}
            w if w.starts_with('-') => return None,
            w if dir.is_none() => dir = Some(PathBuf::from(w)),
            _ => return None,
        }
    }
    Some((
        dir.unwrap_or_else(|| PathBuf::from(".")),
        lexicon,
        output,
        yaml,
    ))
}

/// Runs package.json script `body` of the project at `dir` (relative to the run's directory):
/// each `&&` segment that is a `chant build` is built in process, any other runs in `sh`.
fn run_script(call: &ActivityCall<'_>, dir: &Path, body: &str) -> Result<Json, ActivityError> {
    if needs_whole_shell(body) {
        let out = call.host.shell(
            body,
            Some(&dir.to_string_lossy()),
            &env_of(call),
            call.timeout_ms,
            call.cancel,
        )?;
        return Ok(Json::String(out));
    }
    let mut results = Vec::new();
    for segment in body.split("&&").map(str::trim).filter(|s| !s.is_empty()) {
        if call.cancel.load(Ordering::SeqCst) {
            return Err(ActivityError::new("Cancelled", "cancelled"));
        }
        match chant_build_words(segment) {
            Some((sub, lexicon, output, yaml)) => {
                let project = dir.join(&sub);
                // `-o` is relative to where the script runs, which is `dir`.
                let output = output.map(|o| dir.join(o));
                let req = BuildRequest {
                    dir: &project,
                    lexicon: lexicon.as_deref(),
                    output: output.as_deref(),
                    yaml,
                };
                results.push(call.host.build(&req, call.cancel)?);
            }
            None => {
                let out = call.host.shell(
                    segment,
                    Some(&dir.to_string_lossy()),
                    &env_of(call),
                    call.timeout_ms,
                    call.cancel,
                )?;
                results.push(Json::String(out));
            }
        }
    }
    Ok(if results.len() == 1 {
        results.remove(0)
    } else {
        Json::Array(results)
    })
}

/// `chantBuild {path, script?, env?}`: the project's package.json script (`build` unless
/// `script` names another), its `chant build` commands run in process; a project without a
/// `build` script is built in process and nothing is written.
pub struct ChantBuild;

impl Activity for ChantBuild {
    fn name(&self) -> &'static str {
        "chantBuild"
    }

    fn run(&self, call: &ActivityCall<'_>) -> Result<Json, ActivityError> {
        let path = required(call, "chantBuild", "path")?;
        let named = text(call, "script");
        let dir = call.host.project_dir(Path::new(path))?;
        match script(&dir, named.unwrap_or("build"))? {
            Some(body) => run_script(call, &dir, &body),
            None if named.is_some() => Err(ActivityError::new(
                "InvalidArgs",
                format!(
                    "{path}/package.json has no \"{}\" script",
                    named.unwrap_or_default()
                ),
            )),
            None => call.host.build(
                &BuildRequest {
                    dir: &dir,
                    lexicon: None,
                    output: None,
                    yaml: false,
                },
                call.cancel,
            ),
        }
    }
}

/// `chantTeardown {path}`: the project's `teardown` script (chant has no teardown of its own).
pub struct ChantTeardown;

impl Activity for ChantTeardown {
    fn name(&self) -> &'static str {
        "chantTeardown"
    }

    fn run(&self, call: &ActivityCall<'_>) -> Result<Json, ActivityError> {
        let path = required(call, "chantTeardown", "path")?;
        let dir = call.host.project_dir(Path::new(path))?;
        match script(&dir, "teardown")? {
            Some(body) => run_script(call, &dir, &body),
            None => Err(ActivityError::new(
                "InvalidArgs",
                format!(
                    "{path}/package.json has no \"teardown\" script: chant tears nothing down by itself, so say how in that script"
                ),
            )),
        }
    }
}

/// `lifecycleSnapshot {env}`.
pub struct LifecycleSnapshot;

impl Activity for LifecycleSnapshot {
    fn name(&self) -> &'static str {
        "lifecycleSnapshot"
    }

    fn run(&self, call: &ActivityCall<'_>) -> Result<Json, ActivityError> {
        let env = required(call, "lifecycleSnapshot", "env")?;
        call.host
            .lifecycle_snapshot(env)
            .map_err(|e| ActivityError::new("Error", e))
    }
}

/// `policyGate {path, env?}`: the project at `path` builds and none of its checks is an error.
pub struct PolicyGate;

impl Activity for PolicyGate {
    fn name(&self) -> &'static str {
        "policyGate"
    }

    fn run(&self, call: &ActivityCall<'_>) -> Result<Json, ActivityError> {
        let path = text(call, "path").unwrap_or(".");
        call.host
            .build(
                &BuildRequest {
                    dir: Path::new(path),
                    lexicon: None,
                    output: None,
                    yaml: false,
                },
                call.cancel,
            )
            .map_err(|e| match e.name.as_str() {
                "Error" => ActivityError::new("PolicyViolation", e.message),
                _ => e,
            })
    }
}

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
                curl(call, url, method, left)
            } else {
                http_get(url, method, left.min(Duration::from_secs(30)), call.cancel)
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
    url: &str,
    method: &str,
    timeout: Duration,
    cancel: &std::sync::atomic::AtomicBool,
) -> Result<(u64, String), ActivityError> {
    let deadline = Instant::now() + timeout;
    let bad = |m: String| ActivityError::new("InvalidArgs", m);
    let rest = url.strip_prefix("http://").ok_or_else(|| {
        bad(format!(
            "httpCheck url must be http:// or https:// (got \"{url}\")"
        ))
    })?;
    let (authority, path) = match rest.find('/') {
        Some(i) => (&rest[..i], &rest[i..]),
        None => (rest, "/"),
    };
    if authority.is_empty() || authority.contains('@') || path.contains([' ', '\r', '\n']) {
        return Err(bad(format!(
            "httpCheck url \"{url}\" is not one it can ask"
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
    write!(stream, "{method} {path} HTTP/1.1\r\nHost: {authority}\r\nUser-Agent: chant\r\nAccept: */*\r\nConnection: close\r\n\r\n").map_err(fail)?;
    // Read in slices until the server closes, the cap, the deadline or a cancel: a server that
    // drips or never ends the body holds the step no longer than its time.
    let mut raw = Vec::new();
    let mut chunk = [0u8; 16 * 1024];
    loop {
        if cancel.load(Ordering::SeqCst) {
            return Err(ActivityError::new(
                "Cancelled",
                format!("httpCheck of {url} cancelled"),
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

/// `curl` for `https://`: status and body.
fn curl(
    call: &ActivityCall<'_>,
    url: &str,
    method: &str,
    left: Duration,
) -> Result<(u64, String), ActivityError> {
    if !on_path("curl") {
        return Err(ActivityError::new(
            "ToolMissing",
            "activity \"httpCheck\" needs curl on PATH for https URLs",
        ));
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
        "-w",
        "\n%{http_code}",
        url,
    ];
    let cmd: Vec<String> = argv.iter().map(|w| quote(w)).collect();
    let out = call
        .host
        .shell(&cmd.join(" "), None, &[], call.timeout_ms, call.cancel)?;
    let (body, code) = out.rsplit_once('\n').unwrap_or(("", out.as_str()));
    let status = code
        .trim()
        .parse::<u64>()
        .map_err(|_| ActivityError::new("Error", format!("{url}: curl gave no status")))?;
    Ok((status, body.to_owned()))
}

/// An activity that runs one tool with arguments made from the step's args.
pub struct Tool {
    pub name: &'static str,
    pub argv: fn(&ActivityCall<'_>) -> Result<Vec<String>, ActivityError>,
}

impl Activity for Tool {
    fn name(&self) -> &'static str {
        self.name
    }

    fn run(&self, call: &ActivityCall<'_>) -> Result<Json, ActivityError> {
        let argv = (self.argv)(call)?;
        run_tool(call, self.name, &argv).map(Json::String)
    }
}

fn words(items: &[&str]) -> Vec<String> {
    items.iter().map(|s| (*s).to_owned()).collect()
}

fn opt(out: &mut Vec<String>, call: &ActivityCall<'_>, key: &str, flag: &str) {
    if let Some(v) = arg(call, key) {
        let v = v.as_str().map_or_else(|| v.to_string(), str::to_owned);
        out.extend([flag.to_owned(), v]);
    }
}

fn kubectl_apply(call: &ActivityCall<'_>) -> Result<Vec<String>, ActivityError> {
    let manifest = required(call, "kubectlApply", "manifest")?;
    let mut a = words(&["kubectl", "apply", "-f", manifest]);
    opt(&mut a, call, "namespace", "-n");
    opt(&mut a, call, "context", "--context");
    Ok(a)
}

fn helm_install(call: &ActivityCall<'_>) -> Result<Vec<String>, ActivityError> {
    let name = required(call, "helmInstall", "name")?;
    let chart = required(call, "helmInstall", "chart")?;
    let mut a = words(&["helm", "upgrade", "--install", name, chart]);
    opt(&mut a, call, "values", "-f");
    if let Some(ns) = text(call, "namespace") {
        a.extend(words(&["-n", ns, "--create-namespace"]));
    }
    opt(&mut a, call, "context", "--kube-context");
    Ok(a)
}

fn wait_for_ready(call: &ActivityCall<'_>) -> Result<Vec<String>, ActivityError> {
    let kind = required(call, "waitForReady", "kind")?;
    let name = required(call, "waitForReady", "name")?;
    let timeout = format!("--timeout={}s", (call.timeout_ms / 1000).max(1));
    let mut a = words(&[
        "kubectl",
        "wait",
        "--for=condition=Ready",
        &format!("{kind}/{name}"),
        &timeout,
    ]);
    opt(&mut a, call, "namespace", "-n");
    opt(&mut a, call, "context", "--context");
    Ok(a)
}

fn k3d_up(call: &ActivityCall<'_>) -> Result<Vec<String>, ActivityError> {
    let name = required(call, "k3dUp", "name")?;
    let mut a = words(&["k3d", "cluster", "create", name]);
    opt(&mut a, call, "servers", "--servers");
    opt(&mut a, call, "agents", "--agents");
    opt(&mut a, call, "image", "--image");
    for p in arg(call, "ports")
        .and_then(Json::as_array)
        .into_iter()
        .flatten()
        .filter_map(Json::as_str)
    {
        a.extend(words(&["-p", p]));
    }
    let flag = |key: &str| arg(call, key).and_then(Json::as_bool).unwrap_or(false);
    a.push(format!(
        "--kubeconfig-update-default={}",
        flag("updateDefaultKubeconfig")
    ));
    a.push(format!(
        "--kubeconfig-switch-context={}",
        flag("switchCurrentContext")
    ));
    Ok(a)
}

fn k3d_down(call: &ActivityCall<'_>) -> Result<Vec<String>, ActivityError> {
    Ok(words(&[
        "k3d",
        "cluster",
        "delete",
        required(call, "k3dDown", "name")?,
    ]))
}

/// `docker run` of an emulator: `(default name, image, container port)`.
fn emulator_up(
    call: &ActivityCall<'_>,
    name: &str,
    image: &str,
    port: u16,
) -> Result<Vec<String>, ActivityError> {
    let name = text(call, "name").unwrap_or(name);
    let image = text(call, "image").unwrap_or(image);
    let host_port = arg(call, "port")
        .and_then(Json::as_u64)
        .unwrap_or(u64::from(port));
    Ok(words(&[
        "docker",
        "run",
        "-d",
        "--rm",
        "--name",
        name,
        "-p",
        &format!("{host_port}:{port}"),
        image,
    ]))
}

fn emulator_down(call: &ActivityCall<'_>, name: &str) -> Result<Vec<String>, ActivityError> {
    Ok(words(&[
        "docker",
        "rm",
        "-f",
        text(call, "name").unwrap_or(name),
    ]))
}

fn az_group_ensure(call: &ActivityCall<'_>) -> Result<Vec<String>, ActivityError> {
    let group = required(call, "azGroupEnsure", "resourceGroup")?;
    let location = text(call, "location").unwrap_or("eastus");
    Ok(words(&[
        "az",
        "group",
        "create",
        "--name",
        group,
        "--location",
        location,
    ]))
}

fn az_group_delete(call: &ActivityCall<'_>) -> Result<Vec<String>, ActivityError> {
    let group = required(call, "azGroupDelete", "resourceGroup")?;
    Ok(words(&[
        "az",
        "group",
        "delete",
        "--name",
        group,
        "--yes",
        "--no-wait",
    ]))
}

pub static TOOLS: [Tool; 13] = [
    Tool {
        name: "kubectlApply",
        argv: kubectl_apply,
    },
    Tool {
        name: "helmInstall",
        argv: helm_install,
    },
    Tool {
        name: "waitForReady",
        argv: wait_for_ready,
    },
    Tool {
        name: "k3dUp",
        argv: k3d_up,
    },
    Tool {
        name: "k3dDown",
        argv: k3d_down,
    },
    Tool {
        name: "flociUp",
        argv: |c| emulator_up(c, "chant-floci", "floci/floci:latest", 4566),
    },
    Tool {
        name: "flociDown",
        argv: |c| emulator_down(c, "chant-floci"),
    },
    Tool {
        name: "flociAzUp",
        argv: |c| emulator_up(c, "chant-floci-az", "floci/floci-az:latest", 4577),
    },
    Tool {
        name: "flociAzDown",
        argv: |c| emulator_down(c, "chant-floci-az"),
    },
    Tool {
        name: "flociGcpUp",
        argv: |c| emulator_up(c, "chant-floci-gcp", "floci/floci-gcp:latest", 4588),
    },
    Tool {
        name: "flociGcpDown",
        argv: |c| emulator_down(c, "chant-floci-gcp"),
    },
    Tool {
        name: "azGroupEnsure",
        argv: az_group_ensure,
    },
    Tool {
        name: "azGroupDelete",
        argv: az_group_delete,
    },
];

/// The builders' activities that need a cloud API, and the lexicon that provides each.
pub const HINTS: [ActivityHint; 8] = [
    ActivityHint {
        activity: "waitForStack",
        provider: "aws",
    },
    ActivityHint {
        activity: "awsApply",
        provider: "aws",
    },
    ActivityHint {
        activity: "awsDelete",
        provider: "aws",
    },
    ActivityHint {
        activity: "azApply",
        provider: "azure",
    },
    ActivityHint {
        activity: "azDelete",
        provider: "azure",
    },
    ActivityHint {
        activity: "gcpApply",
        provider: "gcp",
    },
    ActivityHint {
        activity: "gcpDelete",
        provider: "gcp",
    },
    ActivityHint {
        activity: "gitlabPipeline",
        provider: "gitlab",
    },
];

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn chant_build_scripts_are_recognised_only_when_plain() {
        assert_eq!(
            chant_build_words("chant build src --lexicon k8s -o dist/k8s.yaml"),
            Some((
                PathBuf::from("src"),
                Some("k8s".into()),
                Some(PathBuf::from("dist/k8s.yaml")),
                false
            ))
        );
        assert_eq!(
            chant_build_words("npx chant build --format yaml"),
            Some((PathBuf::from("."), None, None, true))
        );
        for other in [
            "chant lint src",
            "chant build src > out.yaml",
            "chant build $DIR",
            "npm run x",
            "chant build a b",
            "chant build --watch",
        ] {
            assert_eq!(chant_build_words(other), None, "{other}");
        }
        assert_eq!(quote("it's"), r"'it'\''s'");
    }
}
