//! The local runtime: runs an Op's phases in this process — activities with profiles (timeouts,
//! retries with backoff), gates decided against the ledger, `onFailure` in reverse — and records
//! the run on the ledger.

use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::thread;
use std::time::{Duration, Instant};

use gitledger::Ledger;
use serde_json::{Map, Value as Json, json};
use wait_timeout::ChildExt;

use chant_core::lexicon::{Activity, ActivityCall, ActivityError, ActivityHost, Registry};

use crate::attest;
use crate::gates::{self, Origin, PlanDecision};
use crate::model::{OpDef, Phase, Step, parse_duration};
use crate::records::RunStatus;
use crate::time::{Clock, iso};

/// How long a running shell step waits before it looks at the cancel flag again.
const CANCEL_CHECK: Duration = Duration::from_millis(20);

/// The activities a run can call: the runtime's own (`shellCmd`), then those the project's
/// lexicons offer, in the config's order. A name is resolved to the first that has it, so a
/// lexicon cannot replace `shellCmd`.
pub struct Activities<'a> {
    /// Each with the lexicon that offers it (`None`: the runtime's own).
    known: Vec<(Option<&'static str>, &'a dyn Activity)>,
    /// Activities other lexicons provide: `(activity, provider, what this chant has of it)`.
    hints: Vec<(&'static str, &'static str, Provider)>,
}

impl<'a> Activities<'a> {
    /// The runtime's own activities only.
    pub fn native() -> Activities<'static> {
        Activities {
            known: vec![(None, &ShellCmd)],
            hints: Vec::new(),
        }
    }

    /// The runtime's own, then what `lexicons` (the project's) offer through `registry`.
    pub fn of_project(registry: &'a Registry, lexicons: &[String]) -> Activities<'a> {
        let mut known = Activities::native().known;
        known.extend(
            registry
                .activities(lexicons)
                .into_iter()
                .map(|(lexicon, a)| (Some(lexicon), a)),
        );
        let hints = registry
            .iter()
            .flat_map(|l| l.activity_hints())
            .map(|h| {
                let provider = match registry.get(h.provider) {
                    None => Provider::Absent,
                    Some(l) if l.activities().iter().any(|a| a.name() == h.activity) => {
                        Provider::Offers
                    }
                    Some(_) => Provider::Lacks,
                };
                (h.activity, h.provider, provider)
            })
            .collect();
        Activities { known, hints }
    }

    /// Why a step naming `name` cannot run: who provides it, when a lexicon says so, else
    /// every name it could have called.
    fn missing(&self, name: &str) -> String {
        match self.hints.iter().find(|(a, _, _)| *a == name) {
            Some((_, provider, Provider::Offers)) => format!(
                "activity \"{name}\" is provided by the {provider} lexicon, which this project does not use: add \"{provider}\" to its lexicons"
            ),
            Some((_, provider, Provider::Lacks)) => format!(
                "activity \"{name}\" is provided by the {provider} lexicon, and this chant's {provider} lexicon does not run it yet"
            ),
            Some((_, provider, Provider::Absent)) => format!(
                "activity \"{name}\" is provided by the {provider} lexicon, which this chant does not have"
            ),
            None => format!(
                "no activity named \"{name}\" (known: {})",
                self.names().join(", ")
            ),
        }
    }

    fn resolve(&self, name: &str) -> Option<(Option<&'static str>, &'a dyn Activity)> {
        self.known.iter().copied().find(|(_, a)| a.name() == name)
    }

    fn get(&self, name: &str) -> Option<&'a dyn Activity> {
        self.resolve(name).map(|(_, a)| a)
    }

    /// Every name a step may call, sorted, each once.
    pub fn names(&self) -> Vec<&'static str> {
        let mut names: Vec<&'static str> = self.known.iter().map(|(_, a)| a.name()).collect();
        names.sort_unstable();
        names.dedup();
        names
    }
}

/// What this chant has of the lexicon a hint names.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Provider {
    /// It is here and offers the activity.
    Offers,
    /// It is here without the activity.
    Lacks,
    /// It is not in this chant.
    Absent,
}

/// An activity profile: timeout and retry policy.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Profile {
    pub timeout_ms: u64,
    pub attempts: u32,
    pub initial_ms: u64,
    pub coefficient: f64,
    pub non_retryable: &'static [&'static str],
}

/// The built-in profiles (`fastIdempotent` for anything unknown).
pub fn profile(name: Option<&str>) -> Profile {
    let p = |timeout_ms, attempts, initial_ms, non_retryable| Profile {
        timeout_ms,
        attempts,
        initial_ms,
        coefficient: 2.0,
        non_retryable,
    };
    match name.unwrap_or("fastIdempotent") {
        "longInfra" => p(20 * 60_000, 3, 30_000, &[]),
        "k8sWait" => p(15 * 60_000, 3, 10_000, &["ReadinessFailedError"]),
        "humanGate" => p(48 * 3_600_000, 1, 0, &[]),
        "argoSync" => p(30 * 60_000, 5, 5_000, &[]),
        "policyCheck" => p(5 * 60_000, 1, 0, &[]),
        _ => p(5 * 60_000, 3, 5_000, &[]),
    }
}

impl Profile {
    fn to_json(self) -> Json {
        json!({
            "timeoutMs": self.timeout_ms,
            "attempts": self.attempts,
            "initialMs": self.initial_ms,
            "coefficient": self.coefficient,
            "nonRetryable": self.non_retryable,
        })
    }
}

/// The plan a gate of `op` approves when run in `env`: the Op's whole definition as evaluated
/// (its props: every phase, step, activity and argument, gates, `neverOverMcp`), the profile
/// each activity runs under as this runtime resolves it, which lexicon (or none) each
/// activity that is not the runtime's own resolves to, the environment, the gate, and where
/// the Op file is in the repository (`file`, from its top): the same Op in another project —
/// another workspace member, or the root — is another plan, so an approval of one never
/// passes the other's gate. A plan of the runtime's own activities only is digested without
/// the `activities` member.
pub fn plan_digest(op: &OpDef, gate: &str, env: &str, activities: &Activities<'_>) -> String {
    let mut profiles = Map::new();
    let mut offered = Map::new();
    for phase in op.phases.iter().chain(&op.on_failure) {
        for step in &phase.steps {
            if let Step::Activity {
                profile: p,
                function,
                ..
            } = step
            {
                let name = p.as_deref().unwrap_or("fastIdempotent");
                profiles.insert(name.to_owned(), profile(Some(name)).to_json());
                match activities.resolve(function) {
                    Some((None, _)) => {}
                    Some((Some(lexicon), _)) => {
                        offered.insert(function.clone(), json!(lexicon));
                    }
                    None => {
                        offered.insert(function.clone(), Json::Null);
                    }
                }
            }
        }
    }
    let mut subject = json!({"op": op.name, "gate": gate, "env": env, "props": op.props,
        "profiles": profiles, "file": location(&op.file)});
    if !offered.is_empty() {
        subject["activities"] = Json::Object(offered);
    }
    gates::plan_digest("op-gate", &subject)
}

/// `file` from the top of the git repository holding it, `/` separators (the path as given
/// outside one): the same in every clone, wherever it is checked out.
pub fn location(file: &Path) -> String {
    let abs = std::fs::canonicalize(file).unwrap_or_else(|_| file.to_path_buf());
    // The work tree's top as every base read finds it (a `.git` file naming the repository
    // around it is no top).
    let top = abs.parent().and_then(chant_workspace::tree::toplevel);
    let rel = top.and_then(|t| abs.strip_prefix(t).ok()).unwrap_or(file);
    rel.components()
        .map(|c| c.as_os_str().to_string_lossy())
        .collect::<Vec<_>>()
        .join("/")
}

/// How to run.
pub struct RunOptions<'a> {
    /// The environment; else `labels.Env`; else `local`.
    pub env: Option<String>,
    /// Stamped on pending facts this run writes.
    pub origin: Origin,
    /// Where shell steps run (the project directory).
    pub cwd: PathBuf,
    pub ledger: Option<&'a Ledger>,
    pub clock: &'a dyn Clock,
    pub cancel: &'a AtomicBool,
    /// What steps' `fn` may name.
    pub activities: &'a Activities<'a>,
    /// What activities needing chant itself ask of the front end.
    pub host: &'a dyn ActivityHost,
    /// Called with each settled step record, the number settled so far, and the step total.
    pub on_step: &'a (dyn Fn(&Json, usize, usize) + Sync),
}

/// What a run produced.
#[derive(Clone, Debug)]
pub struct RunOutcome {
    pub op: String,
    pub run_id: String,
    pub status: RunStatus,
    pub started: String,
    pub ended: String,
    pub total_ms: u64,
    pub records: Vec<Json>,
    /// `{name, since}` when gated.
    pub gate: Option<Json>,
    pub env: String,
    /// The run record appended to the ledger.
    pub record: Json,
    /// Set when the record could not be written (the run still stands).
    pub ledger_error: Option<String>,
}

struct StepResult {
    record: Json,
    failed: bool,
    gated: Option<Json>,
}

fn base_record(phase: &str, function: &str, args: Option<&Json>) -> Map<String, Json> {
    let mut m = Map::new();
    m.insert("phase".into(), json!(phase));
    m.insert("fn".into(), json!(function));
    if let Some(a) = args.filter(|a| a.as_object().is_none_or(|o| !o.is_empty())) {
        m.insert("args".into(), a.clone());
    }
    m
}

fn skipped(phase: &str, step: &Step) -> Json {
    let mut m = match step {
        Step::Activity { function, args, .. } => base_record(phase, function, args.as_ref()),
        Step::Gate { gate, .. } => base_record(phase, &format!("gate:{gate}"), None),
    };
    m.insert("status".into(), json!("skipped"));
    m.insert("durationMs".into(), json!(0));
    Json::Object(m)
}

fn total_steps(op: &OpDef) -> usize {
    op.phases.iter().map(|p| p.steps.len()).sum()
}

/// The environment a run of `op` uses: `given`, else the Op's `labels.Env`, else `local`.
pub fn env_of(op: &OpDef, given: Option<&str>) -> String {
    given
        .map(str::to_owned)
        .or_else(|| {
            op.labels
                .get("Env")
                .and_then(Json::as_str)
                .map(str::to_owned)
        })
        .unwrap_or_else(|| "local".to_owned())
}

/// The plan of `op`'s `gate` as the Op is checked out here, for the pending fact's
/// environment (else `given`, else as [`env_of`] picks): `(environment, digest)`. What an
/// approver is shown to be approving ([`crate::gates::Approval::plan_here`]).
pub fn plan_here(
    op: &OpDef,
    gate: &str,
    pending_env: Option<&str>,
    given: Option<&str>,
    activities: &Activities<'_>,
) -> (String, String) {
    let env = env_of(op, pending_env.or(given));
    let digest = plan_digest(op, gate, &env, activities);
    (env, digest)
}

/// Runs `op` to a terminal state and records it.
pub fn run(op: &OpDef, opts: &RunOptions<'_>) -> RunOutcome {
    let started_ms = opts.clock.now_ms();
    let wall = Instant::now();
    let run_id = format!("local-{started_ms}");
    let env = env_of(op, opts.env.as_deref());
    let total = total_steps(op);
    let settled = std::sync::atomic::AtomicUsize::new(0);
    let report = |r: &Json| {
        let n = settled.fetch_add(1, Ordering::SeqCst) + 1;
        (opts.on_step)(r, n, total.max(n));
    };
    let ctx = StepContext {
        op,
        opts,
        env: &env,
        run_id: &run_id,
        report: &report,
    };
    let mut records: Vec<Json> = Vec::new();
    let mut phases_out: Vec<Json> = Vec::new();
    let mut status = RunStatus::Ok;
    let mut gate: Option<Json> = None;
    for phase in &op.phases {
        if opts.cancel.load(Ordering::SeqCst) {
            status = RunStatus::Cancelled;
            break;
        }
        let (results, phase_status) = run_phase(&ctx, phase);
        records.extend(results.iter().map(|r| r.record.clone()));
        phases_out.push(phase_json(phase, &results, phase_status));
        if let Some(g) = results.iter().find_map(|r| r.gated.clone()) {
            status = RunStatus::Gated;
            gate = Some(g);
            break;
        }
        if phase_status == "fail" {
            status = if opts.cancel.load(Ordering::SeqCst) {
                RunStatus::Cancelled
            } else {
                RunStatus::Fail
            };
            break;
        }
    }
    if status == RunStatus::Fail {
        for phase in op.on_failure.iter().rev() {
            let (results, phase_status) = run_phase(&ctx, phase);
            records.extend(results.iter().map(|r| r.record.clone()));
            phases_out.push(phase_json(phase, &results, phase_status));
        }
    }
    let total_ms = wall.elapsed().as_millis() as u64;
    let ended = iso(started_ms + total_ms);
    let started = iso(started_ms);
    let outcomes: Map<String, Json> = records
        .iter()
        .filter_map(|r| {
            r.get("outcome")
                .and_then(|o| Some((o["name"].as_str()?.to_owned(), o["value"].clone())))
        })
        .collect();
    let mut record = Map::new();
    record.insert("version".into(), json!(1));
    record.insert("id".into(), json!(run_id));
    record.insert("op".into(), json!(op.name));
    record.insert("env".into(), json!(env));
    record.insert("started".into(), json!(started));
    record.insert("ended".into(), json!(ended));
    record.insert("status".into(), json!(status.as_str()));
    record.insert("labels".into(), Json::Object(op.labels.clone()));
    record.insert("outcomes".into(), Json::Object(outcomes));
    record.insert("phases".into(), Json::Array(phases_out));
    if let Some(g) = &gate {
        record.insert("gate".into(), g.clone());
    }
    let record = Json::Object(record);
    let ledger_error = opts.ledger.and_then(|l| {
        crate::records::append_run(l, &record, &format!("Run {} {status}", op.name))
            .err()
            .map(|e| e.to_string())
    });
    RunOutcome {
        op: op.name.clone(),
        run_id,
        status,
        started,
        ended,
        total_ms,
        records,
        gate,
        env,
        record,
        ledger_error,
    }
}

fn phase_json(phase: &Phase, results: &[StepResult], status: &str) -> Json {
    let duration: u64 = results
        .iter()
        .filter_map(|r| r.record["durationMs"].as_u64())
        .sum();
    json!({"name": phase.name, "status": status, "durationMs": duration, "steps": results.iter().map(|r| r.record.clone()).collect::<Vec<_>>()})
}

struct StepContext<'a> {
    op: &'a OpDef,
    opts: &'a RunOptions<'a>,
    env: &'a str,
    run_id: &'a str,
    report: &'a (dyn Fn(&Json) + Sync),
}

/// Runs one phase; returns its step results and `ok`, `fail` or `gated`.
fn run_phase(ctx: &StepContext<'_>, phase: &Phase) -> (Vec<StepResult>, &'static str) {
    let mut results: Vec<StepResult> = Vec::new();
    if phase.parallel {
        let outs: Vec<StepResult> = thread::scope(|s| {
            let handles: Vec<_> = phase
                .steps
                .iter()
                .map(|step| s.spawn(move || run_step(ctx, &phase.name, step)))
                .collect();
            handles.into_iter().map(|h| h.join().unwrap_or_else(|_| StepResult { record: json!({"phase": phase.name, "status": "fail", "durationMs": 0, "error": "step crashed"}), failed: true, gated: None })).collect()
        });
        results.extend(outs);
    } else {
        let mut stop = false;
        for step in &phase.steps {
            if stop {
                let r = skipped(&phase.name, step);
                (ctx.report)(&r);
                results.push(StepResult {
                    record: r,
                    failed: false,
                    gated: None,
                });
                continue;
            }
            let r = run_step(ctx, &phase.name, step);
            stop = r.failed || r.gated.is_some();
            results.push(r);
        }
    }
    let status = if results.iter().any(|r| r.gated.is_some()) {
        "gated"
    } else if results.iter().any(|r| r.failed) {
        "fail"
    } else {
        "ok"
    };
    (results, status)
}

fn run_step(ctx: &StepContext<'_>, phase: &str, step: &Step) -> StepResult {
    let result = match step {
        Step::Activity {
            function,
            args,
            profile: p,
            outcome,
        } => run_activity(
            ctx,
            phase,
            function,
            args.as_ref(),
            p.as_deref(),
            outcome.as_ref(),
        ),
        Step::Gate {
            gate,
            timeout,
            description,
            attested,
        } => run_gate(ctx, phase, gate, timeout, description.as_deref(), *attested),
    };
    (ctx.report)(&result.record);
    result
}

fn run_activity(
    ctx: &StepContext<'_>,
    phase: &str,
    function: &str,
    args: Option<&Json>,
    profile_name: Option<&str>,
    outcome: Option<&(String, Option<String>)>,
) -> StepResult {
    let mut record = base_record(phase, function, args);
    let Some(activity) = ctx.opts.activities.get(function) else {
        record.insert("status".into(), json!("fail"));
        record.insert("durationMs".into(), json!(0));
        record.insert("error".into(), json!(ctx.opts.activities.missing(function)));
        return StepResult {
            record: Json::Object(record),
            failed: true,
            gated: None,
        };
    };
    let profile = profile(profile_name);
    let start = Instant::now();
    let cancel = ctx.opts.cancel;
    let pause = |wait: Duration| {
        let until = Instant::now() + wait;
        while Instant::now() < until && !cancel.load(Ordering::SeqCst) {
            thread::sleep(Duration::from_millis(20));
        }
    };
    let call = ActivityCall {
        args,
        cwd: &ctx.opts.cwd,
        timeout_ms: profile.timeout_ms,
        cancel,
        host: ctx.opts.host,
    };
    let result = retrying(&profile, cancel, &pause, || activity.run(&call)).map_err(|e| e.message);
    let duration = start.elapsed().as_millis() as u64;
    let failed = result.is_err();
    match result {
        Ok(value) => {
            record.insert("status".into(), json!("ok"));
            record.insert("durationMs".into(), json!(duration));
            if let Some((name, from)) = outcome {
                let parsed = value
                    .as_str()
                    .and_then(|s| serde_json::from_str::<Json>(s).ok())
                    .unwrap_or(value.clone());
                let picked = from.as_deref().map_or(parsed.clone(), |path| {
                    path.split('.').fold(parsed.clone(), |v, k| {
                        v.get(k).cloned().unwrap_or(Json::Null)
                    })
                });
                record.insert("outcome".into(), json!({"name": name, "value": picked}));
            }
        }
        Err(message) => {
            record.insert("status".into(), json!("fail"));
            record.insert("durationMs".into(), json!(duration));
            record.insert("error".into(), json!(message));
        }
    }
    StepResult {
        record: Json::Object(record),
        failed,
        gated: None,
    }
}

/// Runs `attempt` under `profile`'s retry policy: up to `attempts` tries, waiting
/// `initial_ms × coefficient^(n-1)` (through `pause`) before try n+1; an error named in
/// `non_retryable`, a cancellation, or a cancel request ends it at once.
fn retrying(
    profile: &Profile,
    cancel: &AtomicBool,
    pause: &dyn Fn(Duration),
    mut attempt: impl FnMut() -> Result<Json, ActivityError>,
) -> Result<Json, ActivityError> {
    let mut n = 1;
    loop {
        match attempt() {
            Ok(v) => return Ok(v),
            Err(e) => {
                let retryable = !profile.non_retryable.contains(&e.name.as_str())
                    && !ActivityError::PERMANENT.contains(&e.name.as_str())
                    && e.name != "Cancelled"
                    && !cancel.load(Ordering::SeqCst);
                if n >= profile.attempts.max(1) || !retryable {
                    return Err(e);
                }
                let wait = profile.initial_ms as f64 * profile.coefficient.powi(n as i32 - 1);
                pause(Duration::from_millis(wait as u64));
                n += 1;
            }
        }
    }
}

/// `shellCmd {cmd, cwd?, env?}`: `sh -c <cmd>` in the project directory with the process
/// environment plus `env`; the result is stdout, trimmed.
struct ShellCmd;

impl Activity for ShellCmd {
    fn name(&self) -> &'static str {
        "shellCmd"
    }

    fn run(&self, call: &ActivityCall<'_>) -> Result<Json, ActivityError> {
        shell_cmd(call.args, call.cwd, call.timeout_ms, call.cancel)
    }
}

fn shell_cmd(
    args: Option<&Json>,
    cwd: &Path,
    timeout_ms: u64,
    cancel: &AtomicBool,
) -> Result<Json, ActivityError> {
    let fail = |name: &str, message: String| ActivityError::new(name, message);
    let cmd = args
        .and_then(|a| a.get("cmd"))
        .and_then(Json::as_str)
        .ok_or_else(|| fail("Error", "shellCmd needs a cmd string".into()))?;
    let dir = match args.and_then(|a| a.get("cwd")).and_then(Json::as_str) {
        Some(d) => cwd.join(d),
        None => cwd.to_path_buf(),
    };
    let env = chant_core::lexicon::step_env(args);
    run_shell(cmd, &dir, &env, timeout_ms, cancel).map(Json::String)
}

/// `sh -c <cmd>` in `dir` with the process environment plus `env`, in its own process group,
/// ended (the whole group) by the deadline or a cancel: stdout, trimmed; a failure names the
/// command and its stderr.
pub(crate) fn run_shell(
    cmd: &str,
    dir: &Path,
    env: &[(String, String)],
    timeout_ms: u64,
    cancel: &AtomicBool,
) -> Result<String, ActivityError> {
    let fail = |name: &str, message: String| ActivityError::new(name, message);
    let mut command = Command::new("sh");
    // Its own process group, so cancelling or timing out ends the whole command (the
    // `sleep` under `sh -c "...; sleep 20"` too), not only the shell.
    std::os::unix::process::CommandExt::process_group(&mut command, 0);
    command
        .arg("-c")
        .arg(cmd)
        .current_dir(dir)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    for (k, v) in env {
        command.env(k, v);
    }
    let mut child = command
        .spawn()
        .map_err(|e| fail("Error", format!("Command failed: {cmd}\n{e}")))?;
    let pid = child.id();
    let mut out = child.stdout.take().expect("piped");
    let mut err = child.stderr.take().expect("piped");
    let out_reader = thread::spawn(move || {
        let mut b = Vec::new();
        let _ = out.read_to_end(&mut b);
        b
    });
    let err_reader = thread::spawn(move || {
        let mut b = Vec::new();
        let _ = err.read_to_end(&mut b);
        b
    });
    let deadline = Instant::now() + Duration::from_millis(timeout_ms);
    // Why the command must stop now, if it must: a cancel, or no time left.
    let ended = || {
        if cancel.load(Ordering::SeqCst) {
            Some(fail("Cancelled", format!("Command cancelled: {cmd}")))
        } else if deadline.saturating_duration_since(Instant::now()).is_zero() {
            Some(fail(
                "TimeoutError",
                format!("activity timed out after {timeout_ms}ms"),
            ))
        } else {
            None
        }
    };
    let status = loop {
        // Woken when the child exits (wait-timeout waits on SIGCHLD, not a poll); the slice
        // bounds how long a cancel or the deadline waits to be seen.
        let slice = deadline
            .saturating_duration_since(Instant::now())
            .min(CANCEL_CHECK);
        match child.wait_timeout(slice) {
            Ok(Some(s)) => break Ok(s),
            Ok(None) => {}
            Err(e) => break Err(fail("Error", e.to_string())),
        }
        if let Some(e) = ended() {
            kill_group(&mut child);
            break Err(e);
        }
    };
    // The shell may be gone while a process it started in the background still holds its
    // output open: the step is not over until the output ends, and the same cancel and
    // deadline end it (the group is signalled; the shell itself is already reaped).
    let status = status.and_then(|s| {
        while !(out_reader.is_finished() && err_reader.is_finished()) {
            if let Some(e) = ended() {
                kill_group_of(pid);
                return Err(e);
            }
            // The readers give no signal to wait on; this wait is rare (a background
            // process kept the output) and short-sliced.
            thread::sleep(Duration::from_millis(5));
        }
        Ok(s)
    });
    let stdout = out_reader.join().unwrap_or_default();
    let stderr = err_reader.join().unwrap_or_default();
    let status = status?;
    if !status.success() {
        return Err(fail(
            "Error",
            format!(
                "Command failed: {cmd}\n{}",
                String::from_utf8_lossy(&stderr)
            ),
        ));
    }
    Ok(String::from_utf8_lossy(&stdout).trim().to_owned())
}

/// Ends a command started in its own process group: every process in the group, then
/// reaps the shell.
fn kill_group(child: &mut std::process::Child) {
    kill_group_of(child.id());
    let _ = child.kill();
    let _ = child.wait();
}

/// Signals every process left in the group the shell `pid` led (the group outlives its
/// leader while any member is alive).
fn kill_group_of(pid: u32) {
    if let Ok(pid) = i32::try_from(pid) {
        // SAFETY: kill(2) with a negative pid signals the process group `pid` leads; it
        // touches no memory of ours.
        unsafe {
            libc::kill(-pid, libc::SIGKILL);
        }
    }
}

fn run_gate(
    ctx: &StepContext<'_>,
    phase: &str,
    gate: &str,
    timeout: &str,
    description: Option<&str>,
    attested: bool,
) -> StepResult {
    let mut record = base_record(phase, &format!("gate:{gate}"), None);
    let fail = |mut record: Map<String, Json>, message: String| {
        record.insert("status".into(), json!("fail"));
        record.insert("durationMs".into(), json!(0));
        record.insert("error".into(), json!(message));
        StepResult {
            record: Json::Object(record),
            failed: true,
            gated: None,
        }
    };
    let Some(ledger) = ctx.opts.ledger else {
        return fail(
            record,
            format!(
                "gate \"{gate}\" needs the chant/lifecycle ledger, and this run has none (not in a git repository)"
            ),
        );
    };
    let timeout_ms = match parse_duration(timeout) {
        Ok(ms) if ms > gates::MAX_GATE_MS => {
            return fail(
                record,
                format!(
                    "gate timeout \"{timeout}\" is longer than the 366 days a pending fact may stand"
                ),
            );
        }
        Ok(ms) => ms,
        Err(e) => return fail(record, e),
    };
    let now = ctx.opts.clock.now_ms();
    let facts = match gates::load(ledger, &ctx.op.name, gate, now) {
        Ok((facts, _)) => facts,
        Err(e) => return fail(record, e.to_string()),
    };
    // Once the project lists its signers at base, only a sealed approval is believed.
    let signers = match attest::Signers::at_base(ledger) {
        Ok(s) => s,
        Err(e) => return fail(record, e),
    };
    if attested && signers.is_none() {
        return fail(
            record,
            format!(
                "gate \"{gate}\" declares attested: true, and {} is not on origin/HEAD, main or master, so no approval could be verified; commit the approvers' public keys there (ssh-keygen's allowed-signers format)",
                attest::SIGNERS_PATH
            ),
        );
    }
    let policy = signers.as_ref();
    let believed =
        |p: &gates::Fact, r: &gates::Fact| attest::judge(policy, &p.raw, &r.raw).attested();
    let digest = plan_digest(ctx.op, gate, ctx.env, ctx.opts.activities);
    let gated = |mut record: Map<String, Json>, since: &str, refusal: Option<String>| {
        record.insert("status".into(), json!("gated"));
        record.insert("durationMs".into(), json!(0));
        record.insert("gate".into(), json!(gate));
        if let Some(r) = refusal {
            record.insert("refusal".into(), json!(r));
        }
        StepResult {
            record: Json::Object(record),
            failed: false,
            gated: Some(json!({"name": gate, "since": since})),
        }
    };
    let record_new = |record: Map<String, Json>, refusal: Option<String>| {
        let mut extra: Vec<(&str, Json)> =
            vec![("runId", json!(ctx.run_id)), ("env", json!(ctx.env))];
        if let Some(d) = description {
            extra.push(("description", json!(d)));
        }
        if ctx.op.never_over_mcp {
            extra.push(("neverOverMcp", json!(true)));
        }
        match gates::record_pending(
            ledger,
            &ctx.op.name,
            gate,
            now,
            timeout_ms,
            Some(&digest),
            ctx.opts.origin,
            &extra,
        ) {
            Ok(p) => gated(record, p["timestamp"].as_str().unwrap_or_default(), refusal),
            Err(e) => fail(record, format!("could not record the pending gate: {e}")),
        }
    };
    match gates::decide_plan(&facts, gate, now, &digest, &believed) {
        PlanDecision::Pass { resolution, .. } => {
            let mut approval = Map::new();
            approval.insert("gate".into(), json!(gate));
            approval.insert("resolvedBy".into(), json!(resolution.resolved_by));
            approval.insert("timestamp".into(), json!(resolution.timestamp));
            if let Some(u) = &resolution.url {
                approval.insert("url".into(), json!(u));
            }
            if let Json::Object(a) = attest::describe(&resolution.raw, policy) {
                approval.extend(a);
            }
            record.insert("status".into(), json!("ok"));
            record.insert("durationMs".into(), json!(0));
            record.insert("approval".into(), Json::Object(approval));
            StepResult {
                record: Json::Object(record),
                failed: false,
                gated: None,
            }
        }
        PlanDecision::Mismatched {
            pending,
            resolution,
        } => {
            let refusal = mismatch_text(&resolution, &digest, &ctx.op.name, gate);
            gated(record, &pending.timestamp, Some(refusal))
        }
        PlanDecision::OtherPlan { resolution, .. } => {
            // A new pending fact names this run's plan, so a person can approve it.
            let refusal = resolution.map(|r| mismatch_text(&r, &digest, &ctx.op.name, gate));
            record_new(record, refusal)
        }
        PlanDecision::Waiting(pending) => {
            // An approval that was not believed is said, with how to give one that is.
            let refusal = policy.and_then(|s| {
                facts
                    .iter()
                    .rev()
                    .filter(|f| {
                        !f.pending
                            && f.gate == gate
                            && f.timestamp_ms >= pending.timestamp_ms
                            && f.plan_digest == pending.plan_digest
                    })
                    .take(gates::MAX_JUDGED)
                    .find_map(|f| match attest::judge(Some(s), &pending.raw, &f.raw) {
                        attest::Attestation::Unattested { reason } => Some(format!(
                            "the resolution by {} is unattested ({reason}), and {} at {} lets only signed approvals pass; approve with `chant approve {} {gate} --sign`",
                            f.resolved_by.as_deref().unwrap_or("?"),
                            attest::SIGNERS_PATH,
                            s.base,
                            ctx.op.name
                        )),
                        attest::Attestation::Attested { .. } => None,
                    })
            });
            gated(record, &pending.timestamp, refusal)
        }
        PlanDecision::Open => record_new(record, None),
    }
}

/// Why an approval of another plan does not pass this run; names both digests.
fn mismatch_text(resolution: &gates::Fact, digest: &str, op: &str, gate: &str) -> String {
    format!(
        "the resolution by {} approves plan {}, not this run's plan {} (the Op, its environment or the gate changed since it was approved); approve this plan with `chant approve {op} {gate}`",
        resolution.resolved_by.as_deref().unwrap_or("?"),
        resolution.plan_digest.as_deref().unwrap_or("(none)"),
        digest
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    /// One run of an Op whose only step is a gate with `timeout`, on a fresh ledger: the
    /// gate step's record.
    fn gate_step(timeout: &str) -> Json {
        let (dir, ledger) = crate::test_ledger();
        let op = crate::model::op_from_props(
            json!({"name": "o", "overview": "", "phases": [{"name": "A", "steps": [
                {"kind": "gate", "gate": "g", "timeout": timeout}]}]}),
            &dir.path().join("o.op.ts"),
        )
        .unwrap();
        let cancel = AtomicBool::new(false);
        let opts = RunOptions {
            env: None,
            origin: Origin::Cli,
            cwd: dir.path().to_path_buf(),
            ledger: Some(&ledger),
            clock: &crate::time::FixedClock(1_796_000_000_000),
            cancel: &cancel,
            activities: &Activities::native(),
            host: &crate::host::NoHost,
            on_step: &|_, _, _| {},
        };
        let outcome = run(&op, &opts);
        outcome.records[0].clone()
    }

    /// A lexicon offering an activity named like the runtime's own, and one of its own.
    struct Shadow;
    struct Named(&'static str);
    impl Activity for Named {
        fn name(&self) -> &'static str {
            self.0
        }
        fn run(&self, _call: &ActivityCall<'_>) -> Result<Json, ActivityError> {
            Ok(json!(format!("{} from the lexicon", self.0)))
        }
    }
    impl chant_core::lexicon::Lexicon for Shadow {
        fn name(&self) -> &'static str {
            "shadow"
        }
        fn version(&self) -> &'static str {
            "0"
        }
        fn activities(&self) -> Vec<&dyn Activity> {
            vec![&Named("shellCmd"), &Named("zeta")]
        }
    }

    #[test]
    fn a_lexicon_adds_activities_to_its_projects_and_never_replaces_the_runtimes_own() {
        let registry = Registry::new(vec![Box::new(Shadow)]);
        let used = Activities::of_project(&registry, &["shadow".to_owned()]);
        assert_eq!(used.names(), ["shellCmd", "zeta"]);
        let cancel = AtomicBool::new(false);
        let call = ActivityCall {
            args: Some(&json!({"cmd": "echo native"})),
            cwd: Path::new("."),
            timeout_ms: 10_000,
            cancel: &cancel,
            host: &crate::host::NoHost,
        };
        assert_eq!(
            used.get("shellCmd").unwrap().run(&call),
            Ok(json!("native"))
        );
        assert_eq!(
            used.get("zeta").unwrap().run(&call),
            Ok(json!("zeta from the lexicon"))
        );
        // A project that does not use the lexicon gets none of its activities.
        let unused = Activities::of_project(&registry, &["gitlab".to_owned()]);
        assert_eq!(unused.names(), ["shellCmd"]);
        assert!(unused.get("zeta").is_none());
    }

    /// Another lexicon offering `zeta`.
    struct Echo;
    impl chant_core::lexicon::Lexicon for Echo {
        fn name(&self) -> &'static str {
            "echo"
        }
        fn version(&self) -> &'static str {
            "0"
        }
        fn activities(&self) -> Vec<&dyn Activity> {
            vec![&Named("zeta")]
        }
    }

    #[test]
    fn the_plan_names_which_lexicon_each_activity_resolves_to() {
        let op = |function: &str| {
            crate::model::op_from_props(
                json!({"name": "o", "overview": "", "phases": [{"name": "A", "steps": [
                    {"kind": "activity", "fn": "shellCmd", "args": {"cmd": "true"}},
                    {"kind": "activity", "fn": function},
                    {"kind": "gate", "gate": "g"}]}]}),
                Path::new("o.op.ts"),
            )
            .unwrap()
        };
        let registry = Registry::new(vec![Box::new(Shadow), Box::new(Echo)]);
        let names = |n: &[&str]| n.iter().map(|s| (*s).to_owned()).collect::<Vec<_>>();
        let digest = |function: &str, lexicons: &[&str]| {
            plan_digest(
                &op(function),
                "g",
                "prod",
                &Activities::of_project(&registry, &names(lexicons)),
            )
        };
        // The runtime's own activity is the same plan whatever lexicons a project has, and the
        // same as before activities came from lexicons.
        assert_eq!(
            digest("shellCmd", &[]),
            digest("shellCmd", &["shadow", "echo"])
        );
        assert_eq!(
            digest("shellCmd", &[]),
            gates::plan_digest(
                "op-gate",
                &json!({"op": "o", "gate": "g", "env": "prod", "props": op("shellCmd").props,
                    "profiles": {"fastIdempotent": profile(None).to_json()}, "file": "o.op.ts"})
            )
        );
        // An activity nobody offers, then offered by one lexicon or the other: three plans.
        let plans = [
            digest("zeta", &[]),
            digest("zeta", &["shadow", "echo"]),
            digest("zeta", &["echo", "shadow"]),
        ];
        assert_ne!(plans[0], plans[1]);
        assert_ne!(plans[1], plans[2]);
        assert_ne!(plans[0], plans[2]);
        assert_eq!(plans[1], digest("zeta", &["shadow"]));
    }

    #[test]
    fn a_gate_may_stand_366_days_and_not_a_millisecond_more() {
        assert_eq!(gate_step("366d")["status"], "gated");
        assert_eq!(gate_step("4h")["status"], "gated");
        let longer = gate_step("367d");
        assert_eq!(longer["status"], "fail");
        assert_eq!(
            longer["error"],
            "gate timeout \"367d\" is longer than the 366 days a pending fact may stand"
        );
    }

    fn cmd(c: &str) -> Json {
        json!({"cmd": c})
    }

    #[test]
    fn shell_steps_return_trimmed_stdout_and_name_the_failure() {
        let dir = tempfile::tempdir().unwrap();
        let cancel = AtomicBool::new(false);
        let out = shell_cmd(Some(&cmd("echo ' hi '")), dir.path(), 10_000, &cancel);
        assert_eq!(out.ok(), Some(json!("hi")));
        let err = shell_cmd(
            Some(&cmd("echo oops >&2; exit 2")),
            dir.path(),
            10_000,
            &cancel,
        )
        .err()
        .unwrap();
        assert_eq!(
            (err.name.as_str(), err.message.as_str()),
            ("Error", "Command failed: echo oops >&2; exit 2\noops\n")
        );
    }

    fn flaky<'a>(failures: &'a [&'static str]) -> impl FnMut() -> Result<Json, ActivityError> + 'a {
        let mut calls = 0;
        move || {
            calls += 1;
            match failures.get(calls - 1) {
                Some(name) => Err(ActivityError {
                    name: (*name).into(),
                    message: format!("{name} on try {calls}"),
                }),
                None => Ok(json!(calls)),
            }
        }
    }

    fn with_waits(
        profile_name: &str,
        failures: &[&'static str],
    ) -> (Result<Json, String>, Vec<u64>) {
        let waits = std::sync::Mutex::new(Vec::new());
        let cancel = AtomicBool::new(false);
        let pause = |d: Duration| waits.lock().unwrap().push(d.as_millis() as u64);
        let out = retrying(
            &profile(Some(profile_name)),
            &cancel,
            &pause,
            flaky(failures),
        )
        .map_err(|e| e.message);
        (out, waits.into_inner().unwrap())
    }

    #[test]
    fn retries_back_off_by_the_profile() {
        // fastIdempotent: 3 tries, 5 s then 10 s.
        assert_eq!(
            with_waits("fastIdempotent", &["Error", "Error"]),
            (Ok(json!(3)), vec![5_000, 10_000])
        );
        assert_eq!(
            with_waits("fastIdempotent", &["Error", "Error", "Error"]),
            (Err("Error on try 3".into()), vec![5_000, 10_000])
        );
        // argoSync: 5 tries from 5 s, doubling.
        assert_eq!(
            with_waits("argoSync", &["E", "E", "E", "E"]),
            (Ok(json!(5)), vec![5_000, 10_000, 20_000, 40_000])
        );
        // One try only.
        assert_eq!(
            with_waits("policyCheck", &["Error"]),
            (Err("Error on try 1".into()), vec![])
        );
        assert_eq!(
            with_waits("humanGate", &["Error"]),
            (Err("Error on try 1".into()), vec![])
        );
        // An unknown profile is fastIdempotent.
        assert_eq!(
            with_waits("noSuchProfile", &["Error"]),
            (Ok(json!(2)), vec![5_000])
        );
    }

    #[test]
    fn non_retryable_errors_and_cancels_stop_at_once() {
        assert_eq!(
            with_waits("k8sWait", &["ReadinessFailedError"]),
            (Err("ReadinessFailedError on try 1".into()), vec![])
        );
        assert_eq!(
            with_waits("k8sWait", &["Error"]),
            (Ok(json!(2)), vec![10_000])
        );
        assert_eq!(
            with_waits("longInfra", &["Cancelled"]),
            (Err("Cancelled on try 1".into()), vec![])
        );
        let cancel = AtomicBool::new(true);
        let out = retrying(
            &profile(None),
            &cancel,
            &|_| panic!("no wait"),
            flaky(&["Error"]),
        );
        assert_eq!(out.err().map(|e| e.message), Some("Error on try 1".into()));
        // Permanent errors stop at once whatever the profile.
        for permanent in ActivityError::PERMANENT {
            assert_eq!(
                with_waits("longInfra", &[permanent]),
                (Err(format!("{permanent} on try 1")), vec![])
            );
        }
    }

    /// A lexicon whose builders emit activities others provide.
    struct Hinter;
    impl chant_core::lexicon::Lexicon for Hinter {
        fn name(&self) -> &'static str {
            "hinter"
        }
        fn version(&self) -> &'static str {
            "0"
        }
        fn activity_hints(&self) -> &[chant_core::lexicon::ActivityHint] {
            use chant_core::lexicon::ActivityHint;
            &[
                ActivityHint {
                    activity: "zeta",
                    provider: "shadow",
                },
                ActivityHint {
                    activity: "omega",
                    provider: "shadow",
                },
                ActivityHint {
                    activity: "beta",
                    provider: "nowhere",
                },
            ]
        }
    }

    #[test]
    fn a_missing_activity_says_who_provides_it() {
        let registry = Registry::new(vec![Box::new(Hinter), Box::new(Shadow)]);
        let a = Activities::of_project(&registry, &["hinter".to_owned()]);
        assert_eq!(
            a.missing("zeta"),
            "activity \"zeta\" is provided by the shadow lexicon, which this project does not use: add \"shadow\" to its lexicons"
        );
        assert_eq!(
            a.missing("omega"),
            "activity \"omega\" is provided by the shadow lexicon, and this chant's shadow lexicon does not run it yet"
        );
        assert_eq!(
            a.missing("beta"),
            "activity \"beta\" is provided by the nowhere lexicon, which this chant does not have"
        );
        assert_eq!(a.missing("x"), "no activity named \"x\" (known: shellCmd)");
        // Hints come from every lexicon of the chant, used by the project or not.
        let b = Activities::of_project(&registry, &[]);
        assert!(b.missing("beta").contains("nowhere lexicon"));
    }

    #[test]
    fn a_timeout_ends_the_whole_command_not_only_the_shell() {
        // Without the process group, `sleep` keeps the output pipe open and the step
        // waits the full 20 s after the shell is killed.
        let dir = tempfile::tempdir().unwrap();
        let cancel = AtomicBool::new(false);
        let started = Instant::now();
        let err = shell_cmd(Some(&cmd("sleep 20; echo done")), dir.path(), 200, &cancel)
            .err()
            .unwrap();
        assert_eq!(err.name, "TimeoutError");
        assert_eq!(err.message, "activity timed out after 200ms");
        assert!(
            started.elapsed() < Duration::from_secs(10),
            "{:?}",
            started.elapsed()
        );
    }

    #[test]
    fn a_background_process_holding_the_output_is_ended_by_the_deadline_and_by_cancel() {
        let dir = tempfile::tempdir().unwrap();
        let never = AtomicBool::new(false);
        let started = Instant::now();
        let err = shell_cmd(
            Some(&cmd("sleep 30 & echo started")),
            dir.path(),
            300,
            &never,
        )
        .err()
        .unwrap();
        assert_eq!(err.name, "TimeoutError");
        assert!(
            started.elapsed() < Duration::from_secs(5),
            "{:?}",
            started.elapsed()
        );
        let cancel = std::sync::Arc::new(AtomicBool::new(false));
        let flag = std::sync::Arc::clone(&cancel);
        let setter = std::thread::spawn(move || {
            std::thread::sleep(Duration::from_millis(300));
            flag.store(true, Ordering::SeqCst);
        });
        let started = Instant::now();
        let err = shell_cmd(
            Some(&cmd("sleep 30 & echo started")),
            dir.path(),
            60_000,
            &cancel,
        )
        .err()
        .unwrap();
        setter.join().unwrap();
        assert_eq!(err.name, "Cancelled");
        assert!(
            started.elapsed() < Duration::from_secs(5),
            "{:?}",
            started.elapsed()
        );
        // One that holds only stderr open is waited for all the same.
        let started = Instant::now();
        let err = shell_cmd(
            Some(&cmd("(exec 1>&-; sleep 10) & echo started")),
            dir.path(),
            300,
            &never,
        )
        .err()
        .unwrap();
        assert_eq!(err.name, "TimeoutError");
        assert!(
            started.elapsed() < Duration::from_secs(5),
            "{:?}",
            started.elapsed()
        );
        // A background process that lets go of the output in time is no failure.
        let ok = shell_cmd(
            Some(&cmd("(sleep 0.2; echo late) & echo now")),
            dir.path(),
            10_000,
            &never,
        );
        assert_eq!(ok.ok(), Some(serde_json::json!("now\nlate")));
    }

    #[test]
    fn cancelling_ends_the_whole_command() {
        let dir = tempfile::tempdir().unwrap();
        let cancel = AtomicBool::new(false);
        let started = Instant::now();
        let err = thread::scope(|s| {
            let h = s.spawn(|| {
                shell_cmd(
                    Some(&cmd("sleep 20; echo done")),
                    dir.path(),
                    60_000,
                    &cancel,
                )
            });
            thread::sleep(Duration::from_millis(200));
            cancel.store(true, Ordering::SeqCst);
            h.join().unwrap().err().unwrap()
        });
        assert_eq!(err.name, "Cancelled");
        assert_eq!(err.message, "Command cancelled: sleep 20; echo done");
        assert!(
            started.elapsed() < Duration::from_secs(10),
            "{:?}",
            started.elapsed()
        );
    }
}
