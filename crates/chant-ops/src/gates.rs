//! The gate ledger: pending facts and resolutions, plan digests, origins, the same-origin
//! rule, `neverOverMcp`, and the one approval function every channel uses.
//!
//! A fact is one file, `_gates/<op>/<gate>/<yyyy>/<mm>/<dd>/<hh>/<timestamp>-<n>.jsonl` (see
//! [`crate::layout`]), so a decision reads the newest facts back to the standing pending one
//! and no further, however long the gate's history. Ledgers written before this layout hold
//! an Op's facts as lines of `_gates/<op>.jsonl`; that file is still read, never written.

use gitledger::{Flow, Kind, Ledger};
use serde_json::{Map, Value as Json, json};

use crate::skipped::Skipped;
use crate::time::Clock;

/// The channel a gate fact came through.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Origin {
    Cli,
    Mcp,
    Acp,
}

impl Origin {
    pub fn as_str(self) -> &'static str {
        match self {
            Origin::Cli => "cli",
            Origin::Mcp => "mcp",
            Origin::Acp => "acp",
        }
    }

    pub fn parse(s: &str) -> Option<Origin> {
        match s {
            "cli" => Some(Origin::Cli),
            "mcp" => Some(Origin::Mcp),
            "acp" => Some(Origin::Acp),
            _ => None,
        }
    }

    /// `mcp` and `acp` are model-authored.
    pub fn model_authored(self) -> bool {
        self != Origin::Cli
    }
}

/// The longest a gate's pending fact may stand (its timeout): 366 days.
pub const MAX_GATE_MS: u64 = 366 * 86_400_000;

/// How many resolutions after a pending fact one decision judges, newest first.
pub const MAX_JUDGED: usize = 64;

/// How far ahead of this machine's clock a fact's time may be and still count.
pub const MAX_CLOCK_DRIFT_MS: u64 = 5 * 60_000;

/// The file older ledgers hold an Op's gate facts in, one per line. Read, never written.
pub fn gates_path(op: &str) -> String {
    format!("_gates/{op}.jsonl")
}

/// Where the facts of `op`'s gate `gate` are: `_gates/<op>/<gate>`, the gate's name with
/// every byte outside `[a-z0-9._-]` (and the dots of `.` and `..`, which name no directory)
/// written `%XX`, so every name has one directory and no two share one.
pub fn gate_dir(op: &str, gate: &str) -> String {
    let mut name = String::new();
    for b in gate.bytes() {
        if b.is_ascii_lowercase() || b.is_ascii_digit() || matches!(b, b'.' | b'_' | b'-') {
            name.push(b as char);
        } else {
            name.push_str(&format!("%{b:02X}"));
        }
    }
    if name.bytes().all(|b| b == b'.') {
        name = name.replace('.', "%2E");
    }
    format!("_gates/{op}/{name}")
}

/// The gate a directory name under `_gates/<op>/` stands for (the inverse of [`gate_dir`]).
fn gate_of_dir(name: &str) -> Option<String> {
    let mut out = Vec::new();
    let mut bytes = name.bytes();
    while let Some(b) = bytes.next() {
        if b == b'%' {
            let hex: String = [bytes.next()?, bytes.next()?]
                .iter()
                .map(|b| *b as char)
                .collect();
            out.push(u8::from_str_radix(&hex, 16).ok()?);
        } else {
            out.push(b);
        }
    }
    String::from_utf8(out).ok()
}

/// The facts one decision of `op`'s gate `gate` needs, at `now_ms`, in the order they were
/// written (by `timestamp`), and the lines skipped on the way: the legacy file's facts for
/// the gate, and the gate's files newest first back to the newest pending fact that could
/// stand (with the rest of its hour, for facts of the same millisecond). Files dated after
/// `now_ms` beyond a clock's drift are not read: their facts would decide nothing.
pub fn load(
    ledger: &Ledger,
    op: &str,
    gate: &str,
    now_ms: u64,
) -> Result<(Vec<Fact>, Vec<Skipped>), gitledger::LedgerError> {
    load_from(&mut ledger.reader()?, op, gate, now_ms)
}

/// [`load`] through a reader the caller already has (one commit, one git process).
pub fn load_from(
    reader: &mut gitledger::Reader,
    op: &str,
    gate: &str,
    now_ms: u64,
) -> Result<(Vec<Fact>, Vec<Skipped>), gitledger::LedgerError> {
    let (mut facts, mut skipped) = legacy_facts(reader, op)?;
    facts.retain(|f| f.gate == gate);
    let (new, bad) = new_facts(reader, op, gate, Some(now_ms))?;
    facts.extend(new);
    skipped.extend(bad);
    facts.sort_by_key(|f| f.timestamp_ms);
    Ok((facts, skipped))
}

/// Every fact of `op`'s gates, legacy and new, in the order they were written, and the lines
/// skipped (what tests and audits list; a decision reads only what [`load`] reads).
pub fn all_facts(
    ledger: &Ledger,
    op: &str,
) -> Result<(Vec<Fact>, Vec<Skipped>), gitledger::LedgerError> {
    let mut reader = ledger.reader()?;
    let (mut facts, mut skipped) = legacy_facts(&mut reader, op)?;
    for gate in gate_names_new(&mut reader, op)? {
        let (new, bad) = new_facts(&mut reader, op, &gate, None)?;
        facts.extend(new);
        skipped.extend(bad);
    }
    facts.sort_by_key(|f| f.timestamp_ms);
    Ok((facts, skipped))
}

/// The legacy file's facts (every gate of `op`), and its skipped lines.
fn legacy_facts(
    reader: &mut gitledger::Reader,
    op: &str,
) -> Result<(Vec<Fact>, Vec<Skipped>), gitledger::LedgerError> {
    let legacy = gates_path(op);
    Ok(match reader.blob(&legacy)? {
        Some(bytes) => {
            let (f, s) = parse_facts(&bytes);
            (f, Skipped::list(&legacy, s))
        }
        None => Default::default(),
    })
}

/// The gates that have a directory of facts under `_gates/<op>/`.
fn gate_names_new(
    reader: &mut gitledger::Reader,
    op: &str,
) -> Result<Vec<String>, gitledger::LedgerError> {
    Ok(reader
        .tree(&format!("_gates/{op}"))?
        .unwrap_or_default()
        .into_iter()
        .filter(|e| e.kind == Kind::Tree)
        .filter_map(|e| {
            // Only a name written the one way [`gate_dir`] writes it.
            let g = gate_of_dir(&e.name)?;
            (gate_dir(op, &g) == format!("_gates/{op}/{}", e.name)).then_some(g)
        })
        .collect())
}

/// Every gate of `op` the ledger has facts of (directories, then the pending facts of the
/// legacy file), once each, through a reader the caller has.
pub fn gate_names_from(
    reader: &mut gitledger::Reader,
    op: &str,
) -> Result<Vec<String>, gitledger::LedgerError> {
    let mut names = gate_names_new(reader, op)?;
    for f in legacy_facts(reader, op)?.0 {
        if f.pending && !names.contains(&f.gate) {
            names.push(f.gate);
        }
    }
    Ok(names)
}

/// The facts in the gate's directory, in written order. With `now_ms`: newest first back to
/// the newest pending fact that could stand at `now_ms` (and the rest of its hour), not
/// reading files dated after `now_ms` beyond a clock's drift. Without: all of them.
fn new_facts(
    reader: &mut gitledger::Reader,
    op: &str,
    gate: &str,
    now_ms: Option<u64>,
) -> Result<(Vec<Fact>, Vec<Skipped>), gitledger::LedgerError> {
    let dir = gate_dir(op, gate);
    let mut newest: Vec<Fact> = Vec::new();
    let mut skipped = Vec::new();
    let Some(now_ms) = now_ms else {
        let (files, walked) = crate::layout::all_under(reader, &dir)?;
        skipped.extend(walked.said(&dir));
        let mut all = Vec::new();
        for (path, bytes) in files {
            let (kept, _) = facts_of_file(&dir, op, gate, &path, bytes, None, &mut skipped);
            all.extend(kept);
        }
        return Ok((all, skipped));
    };
    let until = now_ms.saturating_add(MAX_CLOCK_DRIFT_MS);
    let walked = crate::layout::newest_first(reader, &dir, Some(until), &mut |path, bytes| {
        let (kept, stands) = facts_of_file(
            &dir,
            op,
            gate,
            path,
            bytes.map(<[u8]>::to_vec),
            Some(now_ms),
            &mut skipped,
        );
        // Written order within the file, newest file first: reversed once at the end.
        newest.extend(kept.into_iter().rev());
        if stands { Flow::FinishDir } else { Flow::Next }
    })?;
    skipped.extend(walked.said(&dir));
    newest.reverse();
    Ok((newest, skipped))
}

/// The facts of one file of the gate's directory `dir` that belong there (the others said in
/// `skipped`), and whether one is a pending fact that could stand at `now_ms`.
fn facts_of_file(
    dir: &str,
    op: &str,
    gate: &str,
    path: &str,
    bytes: Result<Vec<u8>, u64>,
    now_ms: Option<u64>,
    skipped: &mut Vec<Skipped>,
) -> (Vec<Fact>, bool) {
    let bytes = match bytes {
        Ok(b) => b,
        Err(size) => {
            skipped.push(Skipped::whole(path, size));
            return (Vec::new(), false);
        }
    };
    let mut stands = false;
    let mut kept = Vec::new();
    for line in gitledger::numbered(&bytes) {
        let why = match line.text.map_err(str::to_owned).and_then(parse_fact) {
            Err(reason) => reason,
            Ok(f) if f.op != op || f.gate != gate => format!(
                "a fact of {}/{} does not belong in this gate's directory",
                crate::skipped::shown(&f.op),
                crate::skipped::shown(&f.gate)
            ),
            Ok(f) if !crate::layout::placed(dir, path, f.timestamp_ms) => {
                crate::layout::misplaced("timestamp", &f.timestamp)
            }
            Ok(f) => {
                stands |= f.pending && now_ms.is_some_and(|n| plausible(&f, n));
                kept.push(f);
                continue;
            }
        };
        skipped.push(Skipped {
            file: path.to_owned(),
            line: line.number,
            reason: why,
        });
    }
    (kept, stands)
}

/// A gate line as read from the ledger.
#[derive(Clone, Debug, PartialEq)]
pub struct Fact {
    pub pending: bool,
    pub op: String,
    pub gate: String,
    pub timestamp: String,
    /// `timestamp` in epoch milliseconds (facts are ordered by it, not by its text).
    pub timestamp_ms: u64,
    pub expires_at: Option<String>,
    /// `expiresAt` in epoch milliseconds (pending facts only).
    pub expires_ms: Option<u64>,
    pub plan_digest: Option<String>,
    pub origin: Option<Origin>,
    pub never_over_mcp: bool,
    pub resolved_by: Option<String>,
    pub url: Option<String>,
    pub raw: Json,
}

/// Parses gate lines. A line that is not a gate fact costs that line only: it is skipped and
/// listed as `(line number, reason)`.
pub fn parse_facts(bytes: &[u8]) -> (Vec<Fact>, Vec<(usize, String)>) {
    let mut out = Vec::new();
    let mut skipped = Vec::new();
    for line in gitledger::numbered(bytes) {
        match line.text.map_err(str::to_owned).and_then(parse_fact) {
            Ok(f) => out.push(f),
            Err(reason) => skipped.push((line.number, reason)),
        }
    }
    (out, skipped)
}

/// One gate line, or why it is not one (§4.3's rules, plus times that must read as times: a
/// timestamp that sorts after every real one would otherwise stand forever).
fn parse_fact(line: &str) -> Result<Fact, String> {
    let v: Json = serde_json::from_str(line).map_err(|e| format!("not JSON ({e})"))?;
    let o = v.as_object().ok_or("not a JSON object")?;
    if o.get("version") != Some(&json!(1)) {
        return Err("version is not 1".into());
    }
    let s = |k: &str| o.get(k).and_then(Json::as_str).map(str::to_owned);
    let need = |k: &str| s(k).ok_or_else(|| format!("{k} is missing or not a string"));
    let (op, gate, timestamp) = (need("op")?, need("gate")?, need("timestamp")?);
    let time = |k: &str, v: &str| {
        crate::time::parse_iso(v)
            .ok_or_else(|| format!("{k} is not an ISO 8601 time: {}", crate::skipped::shown(v)))
    };
    let timestamp_ms = time("timestamp", &timestamp)?;
    if o.get("planDigest").is_some_and(|d| !d.is_string()) {
        return Err("planDigest is not a string".into());
    }
    let pending = o.get("kind").and_then(Json::as_str) == Some("pending");
    let expires_ms = if pending {
        Some(time("expiresAt", &need("expiresAt")?)?)
    } else {
        need("resolvedBy")?;
        None
    };
    Ok(Fact {
        pending,
        op,
        gate,
        timestamp,
        timestamp_ms,
        expires_at: s("expiresAt"),
        expires_ms,
        plan_digest: s("planDigest"),
        origin: s("origin").and_then(|o| Origin::parse(&o)),
        never_over_mcp: o.get("neverOverMcp") == Some(&Json::Bool(true)),
        resolved_by: s("resolvedBy"),
        url: s("url"),
        raw: v,
    })
}

/// How a gate stands.
#[derive(Clone, Debug, PartialEq)]
pub enum GateState {
    /// No unexpired pending fact.
    Open,
    /// A pending fact stands with no counting resolution.
    Standing(Fact),
    /// Resolved for the pending plan.
    Passed { pending: Fact, resolution: Fact },
    /// Resolutions exist, but for another plan.
    Mismatched { pending: Fact, resolution: Fact },
}

fn is_expired(f: &Fact, now_ms: u64) -> bool {
    f.expires_ms.is_none_or(|e| e <= now_ms)
}

/// A fact dated after now (beyond a clock's drift), or a pending fact standing longer than
/// any gate may, was not written by a run or an approval: it decides nothing, so it can
/// neither shadow the run's own pending fact nor block the gate for good.
fn plausible(f: &Fact, now_ms: u64) -> bool {
    f.timestamp_ms <= now_ms.saturating_add(MAX_CLOCK_DRIFT_MS)
        && f.expires_ms
            .is_none_or(|e| e.saturating_sub(f.timestamp_ms) <= MAX_GATE_MS)
}

/// Decides one gate from the Op's facts.
pub fn decide(facts: &[Fact], gate: &str, now_ms: u64) -> GateState {
    decide_with(facts, gate, now_ms, &|_, _| true)
}

/// [`decide`], counting only the resolutions `believed(pending, resolution)` accepts (a signers
/// policy: the others are as if they were not there). `believed` is asked only about
/// resolutions after the standing pending fact, newest first, and only until one decides.
pub fn decide_with(
    facts: &[Fact],
    gate: &str,
    now_ms: u64,
    believed: &dyn Fn(&Fact, &Fact) -> bool,
) -> GateState {
    let plausible = |f: &&Fact| plausible(f, now_ms);
    let mut pending: Option<&Fact> = None;
    for f in facts
        .iter()
        .filter(|f| f.pending && f.gate == gate)
        .filter(plausible)
    {
        if pending.is_none_or(|p| f.timestamp_ms >= p.timestamp_ms) {
            pending = Some(f);
        }
    }
    let Some(p) = pending.filter(|p| !is_expired(p, now_ms)) else {
        return GateState::Open;
    };
    let after: Vec<&Fact> = facts
        .iter()
        .filter(|f| !f.pending && f.gate == gate && f.timestamp_ms >= p.timestamp_ms)
        .filter(plausible)
        .collect();
    let for_pending = |r: &&&Fact| match &p.plan_digest {
        None => true,
        Some(d) => r.plan_digest.as_deref() == Some(d),
    };
    // Each judgement may cost a signature check: only the newest MAX_JUDGED resolutions
    // after the pending fact are asked about, so a flood of copied lines costs a bounded time.
    let matching = after
        .iter()
        .rev()
        .filter(for_pending)
        .take(MAX_JUDGED)
        .find(|r| believed(p, r));
    let last = match matching {
        Some(_) => None,
        None => after
            .iter()
            .rev()
            .filter(|r| !for_pending(r))
            .take(MAX_JUDGED)
            .find(|r| believed(p, r)),
    };
    match (matching, last) {
        (Some(r), _) => GateState::Passed {
            pending: p.clone(),
            resolution: (*r).clone(),
        },
        (None, Some(r)) => GateState::Mismatched {
            pending: p.clone(),
            resolution: (*r).clone(),
        },
        (None, None) => GateState::Standing(p.clone()),
    }
}

/// How a gate stands for the run asking now, whose plan digest is `plan`.
#[derive(Clone, Debug, PartialEq)]
pub enum PlanDecision {
    /// A counting resolution approved exactly this plan.
    Pass { pending: Fact, resolution: Fact },
    /// A pending fact for this plan stands, unresolved.
    Waiting(Fact),
    /// What stands was approved, or is waiting, for another plan (the Op, its environment or
    /// the gate changed): a new pending fact for this plan is needed. `resolution` is the
    /// approval of the other plan, if any.
    OtherPlan {
        pending: Fact,
        resolution: Option<Fact>,
    },
    /// A resolution for another plan answers a pending fact for this one.
    Mismatched { pending: Fact, resolution: Fact },
    /// No unexpired pending fact.
    Open,
}

/// Decides a gate for the run asking now: an approval passes only the plan it names, whatever
/// the pending fact it answered said.
pub fn decide_plan(
    facts: &[Fact],
    gate: &str,
    now_ms: u64,
    plan: &str,
    believed: &dyn Fn(&Fact, &Fact) -> bool,
) -> PlanDecision {
    let for_plan = |f: &Fact| f.plan_digest.as_deref() == Some(plan);
    match decide_with(facts, gate, now_ms, believed) {
        GateState::Open => PlanDecision::Open,
        GateState::Passed {
            pending,
            resolution,
        } if for_plan(&resolution) => PlanDecision::Pass {
            pending,
            resolution,
        },
        GateState::Standing(pending) if for_plan(&pending) => PlanDecision::Waiting(pending),
        GateState::Standing(pending) => PlanDecision::OtherPlan {
            pending,
            resolution: None,
        },
        GateState::Passed {
            pending,
            resolution,
        }
        | GateState::Mismatched {
            pending,
            resolution,
        } => {
            if for_plan(&pending) {
                PlanDecision::Mismatched {
                    pending,
                    resolution,
                }
            } else {
                PlanDecision::OtherPlan {
                    pending,
                    resolution: Some(resolution),
                }
            }
        }
    }
}

/// `"sha256:" + sha256hex(canonical({kind, subject}))`.
pub fn plan_digest(kind: &str, subject: &Json) -> String {
    format!(
        "sha256:{}",
        canon::sha256_hex(
            canon::to_canonical_compact(&json!({"kind": kind, "subject": subject})).as_bytes()
        )
    )
}

/// `^sha256:[0-9a-f]{64}$`.
pub fn valid_digest(d: &str) -> bool {
    d.strip_prefix("sha256:").is_some_and(|h| {
        h.len() == 64
            && h.bytes()
                .all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b))
    })
}

/// An absolute http/https URL.
pub fn valid_url(u: &str) -> bool {
    let rest = u
        .strip_prefix("https://")
        .or_else(|| u.strip_prefix("http://"));
    rest.is_some_and(|r| {
        let host = r.split(['/', '?', '#']).next().unwrap_or_default();
        !host.is_empty() && !host.contains(char::is_whitespace)
    })
}

/// The core same-origin refusal reason.
pub fn same_origin_reason(o: Origin) -> String {
    format!(
        "the gate was reached over {0} and this resolution arrived over {0} too, so the same caller wrote both halves",
        o.as_str()
    )
}

/// Seals a payload into a `signature` value, or says why it cannot.
pub type Seal = dyn Fn(&str) -> Result<Json, String>;
/// The plan digest of the declared Op for an environment (`None`: the default one).
pub type PlanHere<'a> = dyn Fn(Option<&str>) -> (String, String) + 'a;

/// What an approval asks for.
#[derive(Clone)]
pub struct Approval<'a> {
    pub op: &'a str,
    pub gate: &'a str,
    pub origin: Origin,
    pub resolved_by: String,
    pub note: Option<String>,
    pub url: Option<String>,
    /// A plan digest named by hand (shell only).
    pub plan: Option<String>,
    pub allow_same_origin: bool,
    /// The Op declares `neverOverMcp`.
    pub declared_never_over_mcp: bool,
    /// Seals the record's payload ([`crate::attest::payload`]) into its `signature` member
    /// (`chant approve --sign`); its error is the refusal.
    pub seal: Option<&'a Seal>,
    /// The plan digest of the Op as the approver has it checked out, for an environment (the
    /// pending fact's `env`, when it names one): an approval of a pending fact for another
    /// plan is refused, so a person approves what they can see, not what the ledger says.
    pub plan_here: Option<&'a PlanHere<'a>>,
}

/// Why an approval was refused (each text is what the user sees).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Refusal {
    NeverOverMcp(String),
    NoLedger(String),
    BadUrl(String),
    BadPlan(String),
    NoPendingFact(String),
    SameOrigin(String),
    Seal(String),
    Ledger(String),
}

impl std::fmt::Display for Refusal {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Refusal::NeverOverMcp(t)
            | Refusal::NoLedger(t)
            | Refusal::BadUrl(t)
            | Refusal::BadPlan(t)
            | Refusal::NoPendingFact(t)
            | Refusal::SameOrigin(t)
            | Refusal::Seal(t)
            | Refusal::Ledger(t) => f.write_str(t),
        }
    }
}

/// The neverOverMcp approval text.
pub fn never_over_mcp_approve_text(op: &str, gate: &str) -> String {
    format!(
        "Op \"{op}\" declares neverOverMcp, so its gates are not resolved over MCP, whichever channel reached them. Approvals belong to people: approve at a shell with `chant approve {op} {gate}`."
    )
}

/// A recorded resolution.
#[derive(Clone, Debug, PartialEq)]
pub struct Resolved {
    pub record: Json,
    pub plan_digest: Option<String>,
    pub timestamp: String,
    /// Whether it is believed, as outputs say it ([`crate::attest::describe`] against the
    /// signers the approval was decided with).
    pub seen: Json,
}

/// The first check of an approval, before anything is read: a model may not resolve a gate
/// of an Op that declares `neverOverMcp`.
pub fn declared_never_over_mcp(a: &Approval<'_>) -> Result<(), Refusal> {
    if a.origin.model_authored() && a.declared_never_over_mcp {
        return Err(Refusal::NeverOverMcp(never_over_mcp_approve_text(
            a.op, a.gate,
        )));
    }
    Ok(())
}

/// Records a gate's resolution after every check, in the order every channel shares.
pub fn approve(ledger: &Ledger, a: &Approval<'_>, clock: &dyn Clock) -> Result<Resolved, Refusal> {
    let model = a.origin.model_authored();
    declared_never_over_mcp(a)?;
    let flag = if a.origin == Origin::Mcp {
        "url"
    } else {
        "--url"
    };
    match ledger.exists() {
        Ok(true) => {}
        Ok(false) => {
            return Err(Refusal::NoLedger(
                "Cannot record the approval: this clone has no chant/lifecycle branch; fetch it first".into(),
            ));
        }
        Err(e) => {
            return Err(Refusal::NoLedger(format!(
                "Cannot record the approval: {e}"
            )));
        }
    }
    if let Some(u) = &a.url
        && !valid_url(u)
    {
        return Err(Refusal::BadUrl(format!(
            "{flag} must be an absolute http/https URL (got \"{u}\")"
        )));
    }
    if let Some(p) = &a.plan
        && !valid_digest(p)
    {
        return Err(Refusal::BadPlan(format!(
            "--plan must be a plan digest (\"sha256:\" and 64 hex characters), got \"{p}\""
        )));
    }
    let now = clock.now_ms();
    let (facts, _) = load(ledger, a.op, a.gate, now)
        .map_err(|e| Refusal::Ledger(format!("Cannot record the approval: {e}")))?;
    // A gate already resolved for its plan has nothing left to approve; under a signers
    // policy, a resolution that is not believed resolves nothing.
    let signers = crate::attest::Signers::at_base(ledger)
        .map_err(|e| Refusal::Ledger(format!("Cannot record the approval: {e}")))?;
    let believed =
        |p: &Fact, r: &Fact| crate::attest::judge(signers.as_ref(), &p.raw, &r.raw).attested();
    let standing = match decide_with(&facts, a.gate, now, &believed) {
        GateState::Standing(p) | GateState::Mismatched { pending: p, .. } => Some(p),
        GateState::Passed { .. } | GateState::Open => None,
    };
    if let Some(p) = &standing
        && p.never_over_mcp
        && model
    {
        return Err(Refusal::NeverOverMcp(never_over_mcp_approve_text(
            a.op, a.gate,
        )));
    }
    let no_fact = format!(
        "Gate \"{}\" on \"{}\" has no pending fact, so there is no plan to approve",
        a.gate, a.op
    );
    let plan_digest = match (&standing, &a.plan) {
        (_, Some(p)) => Some(p.clone()),
        (Some(p), None) => p.plan_digest.clone(),
        (None, None) => return Err(Refusal::NoPendingFact(no_fact)),
    };
    // A digest that is not one was not written by a run: it is never copied into an approval.
    if a.plan.is_none()
        && let Some(d) = &plan_digest
        && !valid_digest(d)
    {
        return Err(Refusal::BadPlan(format!(
            "Gate \"{g}\" on \"{o}\" has a pending fact whose planDigest is not a plan digest (\"sha256:\" and 64 hex characters), got \"{d}\"; it is not copied into an approval. Record a new pending fact with `chant run {o}`, or end this one with `chant approve {o} {g} --expire`",
            g = a.gate,
            o = a.op
        )));
    }
    if a.plan.is_none()
        && let (Some(here), Some(p), Some(d)) = (a.plan_here, &standing, &plan_digest)
    {
        let (env, mine) = here(p.raw.get("env").and_then(Json::as_str));
        if *d != mine {
            return Err(Refusal::BadPlan(format!(
                "Gate \"{g}\" on \"{o}\" waits for plan {d}, but {o} as checked out here is plan {mine} (environment {env}): approving would approve a plan you have not seen. Check out what the run ran and approve again, or approve that plan by name with `--plan {d}` once you have reviewed it",
                g = a.gate,
                o = a.op
            )));
        }
    }
    if let Some(pending_origin) = standing.as_ref().and_then(|p| p.origin)
        && model
        && pending_origin == a.origin
        && !a.allow_same_origin
    {
        let _ = same_origin_reason(a.origin);
        return Err(Refusal::SameOrigin(format!(
            "Gate \"{1}\" on \"{0}\" was not recorded. If the gate was reached over MCP, it cannot also be resolved over MCP — approve it from another channel, normally `chant approve {0} {1}` at a shell.",
            a.op, a.gate
        )));
    }
    let timestamp = crate::time::iso(now);
    let mut r = Map::new();
    r.insert("version".into(), json!(1));
    r.insert("kind".into(), json!("resolution"));
    r.insert("op".into(), json!(a.op));
    r.insert("gate".into(), json!(a.gate));
    r.insert("resolvedBy".into(), json!(a.resolved_by));
    r.insert("timestamp".into(), json!(timestamp));
    if let Some(n) = &a.note {
        r.insert("note".into(), json!(n));
    }
    if let Some(u) = &a.url {
        r.insert("url".into(), json!(u));
    }
    if let Some(d) = &plan_digest {
        r.insert("planDigest".into(), json!(d));
    }
    // The pending fact this answers, by digest: a seal then covers that one fact, so a
    // signed approval cannot be replayed for another pending fact of the same plan.
    if let Some(p) = &standing {
        r.insert("answers".into(), json!(crate::attest::answers(&p.raw)));
    }
    r.insert("origin".into(), json!(a.origin.as_str()));
    let overridden =
        a.allow_same_origin && standing.as_ref().and_then(|p| p.origin) == Some(a.origin);
    if overridden {
        r.insert("sameOriginOverride".into(), json!(true));
    }
    let mut record = Json::Object(r);
    if let Some(seal) = a.seal {
        let signature = seal(&crate::attest::payload(&record)).map_err(Refusal::Seal)?;
        record["signature"] = signature;
    }
    crate::layout::append(
        ledger,
        &gate_dir(a.op, a.gate),
        now,
        &canon::to_canonical_compact(&record),
        &format!("Approve {} {}", a.op, a.gate),
    )
    .map_err(|e| Refusal::Ledger(format!("Cannot record the approval: {e}")))?;
    let seen = crate::attest::describe(&record, signers.as_ref());
    Ok(Resolved {
        record,
        plan_digest,
        timestamp,
        seen,
    })
}

/// Appends a pending fact (a run reaching a gate, or `chant approve --expire`).
#[allow(clippy::too_many_arguments)]
pub fn record_pending(
    ledger: &Ledger,
    op: &str,
    gate: &str,
    now_ms: u64,
    timeout_ms: u64,
    plan_digest: Option<&str>,
    origin: Origin,
    extra: &[(&str, Json)],
) -> Result<Json, gitledger::LedgerError> {
    let mut p = Map::new();
    p.insert("version".into(), json!(1));
    p.insert("kind".into(), json!("pending"));
    p.insert("op".into(), json!(op));
    p.insert("gate".into(), json!(gate));
    p.insert("timestamp".into(), json!(crate::time::iso(now_ms)));
    p.insert(
        "expiresAt".into(),
        json!(crate::time::iso(now_ms.saturating_add(timeout_ms))),
    );
    if let Some(d) = plan_digest {
        p.insert("planDigest".into(), json!(d));
    }
    p.insert("origin".into(), json!(origin.as_str()));
    for (k, v) in extra {
        p.insert((*k).to_owned(), v.clone());
    }
    let record = Json::Object(p);
    crate::layout::append(
        ledger,
        &gate_dir(op, gate),
        now_ms,
        &canon::to_canonical_compact(&record),
        &format!("Gate {op} {gate} pending"),
    )?;
    Ok(record)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fact(line: Json) -> Fact {
        parse_fact(&line.to_string()).unwrap()
    }

    fn pending(ts: &str, exp: &str, digest: Option<&str>) -> Fact {
        let mut v = json!({"version": 1, "kind": "pending", "op": "o", "gate": "g", "timestamp": ts, "expiresAt": exp});
        if let Some(d) = digest {
            v["planDigest"] = json!(d);
        }
        fact(v)
    }

    fn resolution(ts: &str, digest: Option<&str>) -> Fact {
        let mut v = json!({"version": 1, "kind": "resolution", "op": "o", "gate": "g", "timestamp": ts, "resolvedBy": "alex"});
        if let Some(d) = digest {
            v["planDigest"] = json!(d);
        }
        fact(v)
    }

    const NOW: u64 = 1_796_000_000_000; // 2026-11-29

    #[test]
    fn a_pending_fact_expires_at_its_expiry_exactly() {
        let at = crate::time::iso(NOW);
        // What `chant approve --expire` writes: expiresAt == timestamp == now.
        let expired_now = pending(&at, &at, None);
        assert_eq!(
            decide(std::slice::from_ref(&expired_now), "g", NOW),
            GateState::Open
        );
        let one_more = pending(&at, &crate::time::iso(NOW + 1), None);
        assert!(matches!(
            decide(std::slice::from_ref(&one_more), "g", NOW),
            GateState::Standing(_)
        ));
    }

    #[test]
    fn a_resolution_passes_only_the_plan_it_names() {
        let (d1, d2) = ("sha256:aa", "sha256:bb");
        let p1 = pending(
            "2026-11-29T00:00:00.000Z",
            "2026-12-01T00:00:00.000Z",
            Some(d1),
        );
        let r1 = resolution("2026-11-29T01:00:00.000Z", Some(d1));
        let facts = [p1.clone(), r1.clone()];
        assert!(matches!(
            decide_plan(&facts, "g", NOW, d1, &|_, _| true),
            PlanDecision::Pass { .. }
        ));
        // The same approval, asked by a run whose plan is another.
        assert_eq!(
            decide_plan(&facts, "g", NOW, d2, &|_, _| true),
            PlanDecision::OtherPlan {
                pending: p1.clone(),
                resolution: Some(r1.clone())
            }
        );
        // A standing fact for another plan is superseded, not waited on.
        assert_eq!(
            decide_plan(std::slice::from_ref(&p1), "g", NOW, d2, &|_, _| true),
            PlanDecision::OtherPlan {
                pending: p1.clone(),
                resolution: None
            }
        );
        assert_eq!(
            decide_plan(std::slice::from_ref(&p1), "g", NOW, d1, &|_, _| true),
            PlanDecision::Waiting(p1.clone())
        );
        // A new pending fact for this plan, answered for the old one.
        let p2 = pending(
            "2026-11-29T02:00:00.000Z",
            "2026-12-01T00:00:00.000Z",
            Some(d2),
        );
        let r_old = resolution("2026-11-29T03:00:00.000Z", Some(d1));
        assert!(matches!(
            decide_plan(&[p1.clone(), p2.clone(), r_old], "g", NOW, d2, &|_, _| true),
            PlanDecision::Mismatched { .. }
        ));
        // A pending fact and resolution without digests never pass a run that has one.
        let bare = [
            pending("2026-11-29T00:00:00.000Z", "2026-12-01T00:00:00.000Z", None),
            resolution("2026-11-29T01:00:00.000Z", None),
        ];
        assert!(matches!(
            decide_plan(&bare, "g", NOW, d1, &|_, _| true),
            PlanDecision::OtherPlan { .. }
        ));
        assert_eq!(
            decide_plan(&[], "g", NOW, d1, &|_, _| true),
            PlanDecision::Open
        );
    }

    #[test]
    fn deciding_gates() {
        let p = pending(
            "2026-11-29T00:00:00.000Z",
            "2026-12-01T00:00:00.000Z",
            Some("sha256:aa"),
        );
        assert!(matches!(
            decide(std::slice::from_ref(&p), "g", NOW),
            GateState::Standing(_)
        ));
        let early = resolution("2026-11-28T00:00:00.000Z", Some("sha256:aa"));
        assert!(
            matches!(
                decide(&[p.clone(), early], "g", NOW),
                GateState::Standing(_)
            ),
            "a resolution before the pending fact does not count"
        );
        let other = resolution("2026-11-29T01:00:00.000Z", Some("sha256:bb"));
        assert!(matches!(
            decide(&[p.clone(), other.clone()], "g", NOW),
            GateState::Mismatched { .. }
        ));
        let none = resolution("2026-11-29T01:00:00.000Z", None);
        assert!(
            matches!(
                decide(&[p.clone(), none], "g", NOW),
                GateState::Mismatched { .. }
            ),
            "no digest when the pending fact has one"
        );
        let ok = resolution("2026-11-29T02:00:00.000Z", Some("sha256:aa"));
        assert!(matches!(
            decide(&[p.clone(), other, ok], "g", NOW),
            GateState::Passed { .. }
        ));
        let expired = pending("2026-11-20T00:00:00.000Z", "2026-11-22T00:00:00.000Z", None);
        assert_eq!(decide(&[expired], "g", NOW), GateState::Open);
        assert_eq!(decide(&[], "g", NOW), GateState::Open);
    }

    #[test]
    fn a_bad_line_costs_that_line_and_says_why() {
        let t = "2026-11-29T00:00:00.000Z";
        let lines = [
            format!(r#"{{"version":2,"op":"o","gate":"g","timestamp":"{t}"}}"#),
            "not json".to_owned(),
            format!(r#"{{"version":1,"kind":"pending","op":"o","gate":"g","timestamp":"{t}"}}"#),
            String::new(),
            format!(r#"{{"version":1,"op":"o","gate":"g","timestamp":"{t}","resolvedBy":"a"}}"#),
            format!(
                r#"{{"version":1,"kind":"pending","op":"o","gate":"g","timestamp":"zzzz","expiresAt":"{t}"}}"#
            ),
            format!(
                r#"{{"version":1,"kind":"pending","op":"o","gate":"g","timestamp":"{t}","expiresAt":"soon"}}"#
            ),
            "[1]".to_owned(),
            format!(r#"{{"version":1,"op":"o","gate":7,"timestamp":"{t}","resolvedBy":"a"}}"#),
            format!(
                r#"{{"version":1,"op":"o","gate":"g","timestamp":"{t}","resolvedBy":"a","planDigest":1}}"#
            ),
        ];
        let mut bytes = lines.join("\n").into_bytes();
        bytes.extend_from_slice(b"\n\xff{\"x\":1}\n");
        let (facts, skipped) = parse_facts(&bytes);
        assert_eq!(facts.len(), 1);
        assert!(!facts[0].pending, "kind absent means a resolution");
        assert_eq!(
            skipped,
            [
                (1, "version is not 1".to_owned()),
                (2, "not JSON (expected ident at line 1 column 2)".to_owned()),
                (3, "expiresAt is missing or not a string".to_owned()),
                (6, "timestamp is not an ISO 8601 time: \"zzzz\"".to_owned()),
                (7, "expiresAt is not an ISO 8601 time: \"soon\"".to_owned()),
                (8, "not a JSON object".to_owned()),
                (9, "gate is missing or not a string".to_owned()),
                (10, "planDigest is not a string".to_owned()),
                (11, "not UTF-8".to_owned()),
            ]
        );
    }

    #[test]
    fn a_fact_dated_in_the_future_or_standing_too_long_decides_nothing() {
        let e = crate::time::iso(NOW + 3_600_000);
        let genuine = pending(&crate::time::iso(NOW - 1000), &e, None);
        let drift = crate::time::iso(NOW + MAX_CLOCK_DRIFT_MS);
        let within = pending(
            &drift,
            &crate::time::iso(NOW + MAX_CLOCK_DRIFT_MS + 1),
            None,
        );
        let future = pending(
            &crate::time::iso(NOW + MAX_CLOCK_DRIFT_MS + 1),
            &crate::time::iso(NOW + 7_200_000),
            None,
        );
        let forever = pending(
            &crate::time::iso(NOW),
            &crate::time::iso(NOW + MAX_GATE_MS + 1),
            None,
        );
        for shadow in [&future, &forever] {
            assert_eq!(
                decide(&[genuine.clone(), shadow.clone()], "g", NOW),
                GateState::Standing(genuine.clone())
            );
        }
        assert_eq!(
            decide(&[genuine.clone(), within.clone()], "g", NOW),
            GateState::Standing(within.clone()),
            "a clock a little ahead still counts"
        );
        // "A little" is five minutes: four ahead count, six do not.
        for (ahead, counts) in [(4 * 60_000, true), (6 * 60_000, false)] {
            let p = pending(
                &crate::time::iso(NOW + ahead),
                &crate::time::iso(NOW + ahead + 60_000),
                None,
            );
            let d = decide(&[genuine.clone(), p.clone()], "g", NOW);
            assert_eq!(d == GateState::Standing(p), counts, "{ahead} ms ahead");
        }
        let late = resolution(&crate::time::iso(NOW + MAX_CLOCK_DRIFT_MS + 1), None);
        assert_eq!(
            decide(&[genuine.clone(), late], "g", NOW),
            GateState::Standing(genuine.clone()),
            "nor does a resolution from the future"
        );
    }

    #[test]
    fn a_flood_of_resolutions_costs_a_bounded_number_of_judgements() {
        let t = crate::time::iso(NOW - 1000);
        let p = pending(&t, &crate::time::iso(NOW + 3_600_000), None);
        let mut facts = vec![p];
        facts.extend((0..500).map(|_| resolution(&t, None)));
        let asked = std::cell::Cell::new(0usize);
        let state = decide_with(&facts, "g", NOW, &|_, _| {
            asked.set(asked.get() + 1);
            false
        });
        assert!(matches!(state, GateState::Standing(_)));
        assert_eq!(asked.get(), MAX_JUDGED, "only the newest are judged");
    }

    #[test]
    fn an_unreadable_timestamp_never_blocks_its_gate() {
        // Once, "zzzz" sorted after every real time: that pending fact stood forever and no
        // resolution or expiry after it could count. Now it is skipped, and the gate reads
        // as if it were not there.
        let t = crate::time::iso(NOW - 1000);
        let e = crate::time::iso(NOW + 3_600_000);
        let text = format!(
            "{{\"version\":1,\"kind\":\"pending\",\"op\":\"o\",\"gate\":\"g\",\"timestamp\":\"{t}\",\"expiresAt\":\"{e}\"}}\n{{\"version\":1,\"kind\":\"pending\",\"op\":\"o\",\"gate\":\"g\",\"timestamp\":\"zzzz\",\"expiresAt\":\"{e}\"}}\n{{\"version\":1,\"op\":\"o\",\"gate\":\"g\",\"timestamp\":\"{t}\",\"resolvedBy\":\"alex\"}}"
        );
        let (facts, skipped) = parse_facts(text.as_bytes());
        assert_eq!(skipped.len(), 1);
        assert!(matches!(decide(&facts, "g", NOW), GateState::Passed { .. }));
        // Times are compared as times, not as text.
        let later_offset = pending("2026-11-29T01:00:00+00:00", &e, None);
        let earlier_z = pending("2026-11-29T00:30:00.000Z", &e, None);
        assert!(later_offset.timestamp_ms > earlier_z.timestamp_ms);
    }

    #[test]
    fn digests_and_urls() {
        let d = plan_digest(
            "op-gate",
            &json!({"op": "o", "gate": "g", "env": "local", "props": {}}),
        );
        assert!(valid_digest(&d), "{d}");
        assert!(!valid_digest("sha256:ABC"));
        assert!(!valid_digest("sha256:abc"), "too short, though hex");
        assert!(
            !valid_digest(&format!("sha256:{}", "g".repeat(64))),
            "64 characters, not hex"
        );
        assert!(valid_url("https://github.com/a/b/pull/1"));
        for bad in ["ftp://x", "github.com/x", "https://", "http:// x"] {
            assert!(!valid_url(bad), "{bad}");
        }
    }
}

#[cfg(test)]
mod approval_tests {
    use super::*;
    use crate::time::FixedClock;

    const NOW: u64 = 1_796_000_000_000;

    use crate::test_ledger as ledger;

    fn pending(l: &Ledger, origin: Option<Origin>, extra: &[(&str, Json)]) {
        let mut p = json!({"version": 1, "kind": "pending", "op": "o", "gate": "g", "timestamp": crate::time::iso(NOW - 1000), "expiresAt": crate::time::iso(NOW + 3_600_000), "planDigest": format!("sha256:{}", "a".repeat(64))});
        if let Some(o) = origin {
            p["origin"] = json!(o.as_str());
        }
        for (k, v) in extra {
            p[*k] = v.clone();
        }
        l.append_line(
            &gates_path("o"),
            &canon::to_canonical_compact(&p),
            "pending",
        )
        .unwrap();
    }

    fn approval(origin: Origin) -> Approval<'static> {
        Approval {
            op: "o",
            gate: "g",
            origin,
            resolved_by: if origin == Origin::Cli {
                "alex".into()
            } else {
                "unattested".into()
            },
            note: None,
            url: None,
            plan: None,
            allow_same_origin: false,
            declared_never_over_mcp: false,
            seal: None,
            plan_here: None,
        }
    }

    fn lines(l: &Ledger) -> usize {
        all_facts(l, "o").unwrap().0.len()
    }

    #[test]
    fn the_same_origin_truth_table() {
        let origins = [
            None,
            Some(Origin::Cli),
            Some(Origin::Mcp),
            Some(Origin::Acp),
        ];
        for p in origins {
            for r in [Origin::Cli, Origin::Mcp, Origin::Acp] {
                let (_d, l) = ledger();
                pending(&l, p, &[]);
                let result = approve(&l, &approval(r), &FixedClock(NOW));
                let refused = p == Some(r) && r != Origin::Cli;
                assert_eq!(
                    result.is_err(),
                    refused,
                    "pending {p:?}, resolution {r:?}: {result:?}"
                );
                if refused {
                    assert_eq!(
                        result.unwrap_err().to_string(),
                        "Gate \"g\" on \"o\" was not recorded. If the gate was reached over MCP, it cannot also be resolved over MCP — approve it from another channel, normally `chant approve o g` at a shell."
                    );
                    assert_eq!(lines(&l), 1, "nothing written");
                } else {
                    assert_eq!(lines(&l), 2);
                }
            }
        }
        assert_eq!(
            same_origin_reason(Origin::Mcp),
            "the gate was reached over mcp and this resolution arrived over mcp too, so the same caller wrote both halves"
        );
    }

    #[test]
    fn allow_same_origin_records_the_override() {
        let (_d, l) = ledger();
        pending(&l, Some(Origin::Cli), &[]);
        let mut a = approval(Origin::Cli);
        a.allow_same_origin = true;
        let r = approve(&l, &a, &FixedClock(NOW)).unwrap();
        assert_eq!(r.record["sameOriginOverride"], true);
        let (_d2, l2) = ledger();
        pending(&l2, Some(Origin::Acp), &[]);
        let mut acp = approval(Origin::Acp);
        acp.allow_same_origin = true;
        assert!(
            approve(&l2, &acp, &FixedClock(NOW)).is_ok(),
            "acp may override its own same-origin rule"
        );
    }

    #[test]
    fn the_override_flag_is_recorded_only_when_it_overrode_something() {
        // A cli approval of a cli-reached gate is not an override (cli is never refused).
        let (_d, l) = ledger();
        pending(&l, Some(Origin::Cli), &[]);
        let r = approve(&l, &approval(Origin::Cli), &FixedClock(NOW)).unwrap();
        assert_eq!(r.record.get("sameOriginOverride"), None);
        // Asking to override where the origins differ overrides nothing either.
        let (_d2, l2) = ledger();
        pending(&l2, Some(Origin::Mcp), &[]);
        let mut acp = approval(Origin::Acp);
        acp.allow_same_origin = true;
        let r = approve(&l2, &acp, &FixedClock(NOW)).unwrap();
        assert_eq!(r.record.get("sameOriginOverride"), None);
    }

    #[test]
    fn an_approval_of_a_plan_other_than_the_one_checked_out_here_is_refused() {
        let waits = format!("sha256:{}", "a".repeat(64));
        let other = format!("sha256:{}", "b".repeat(64));
        for (here, refused) in [(&waits, false), (&other, true)] {
            let (_d, l) = ledger();
            pending(
                &l,
                Some(Origin::Mcp),
                &[("planDigest", json!(waits)), ("env", json!("prod"))],
            );
            let seen = std::cell::RefCell::new(None::<String>);
            let plan_here = |env: Option<&str>| {
                *seen.borrow_mut() = env.map(str::to_owned);
                ("prod".to_owned(), here.clone())
            };
            let mut a = approval(Origin::Cli);
            a.plan_here = Some(&plan_here);
            let result = approve(&l, &a, &FixedClock(NOW));
            assert_eq!(
                seen.borrow().as_deref(),
                Some("prod"),
                "asked for the fact's env"
            );
            if refused {
                let e = result.unwrap_err().to_string();
                assert!(e.contains(&format!("waits for plan {waits}")), "{e}");
                assert!(e.contains(&format!("is plan {other}")), "{e}");
                assert_eq!(lines(&l), 1, "nothing written");
            } else {
                assert_eq!(result.unwrap().record["planDigest"], json!(waits));
            }
        }
    }

    #[test]
    fn a_pending_fact_is_written_where_gates_are_read() {
        assert_eq!(gates_path("deploy"), "_gates/deploy.jsonl");
        let (_d, l) = ledger();
        let written = record_pending(
            &l,
            "deploy",
            "prod",
            NOW,
            60_000,
            Some("sha256:ab"),
            Origin::Mcp,
            &[("neverOverMcp", json!(true))],
        )
        .unwrap();
        assert_eq!(written["kind"], "pending");
        assert_eq!(written["expiresAt"], crate::time::iso(NOW + 60_000));
        assert_eq!(
            l.read("_gates/deploy.jsonl").unwrap(),
            None,
            "never the legacy file"
        );
        let place = crate::layout::place("_gates/deploy/prod", NOW);
        let blob = l
            .read(&format!("{}/{}-0000.jsonl", place.dir, place.stem))
            .unwrap()
            .unwrap();
        assert_eq!(
            serde_json::from_slice::<Json>(&blob).unwrap(),
            written,
            "the reply is what was recorded, one fact in its own file"
        );
        let (facts, _) = load(&l, "deploy", "prod", NOW).unwrap();
        assert_eq!(facts.len(), 1);
        assert_eq!(facts[0].raw, written);
        assert_eq!(
            written,
            json!({"version": 1, "kind": "pending", "op": "deploy", "gate": "prod",
                "timestamp": crate::time::iso(NOW), "expiresAt": crate::time::iso(NOW + 60_000),
                "planDigest": "sha256:ab", "origin": "mcp", "neverOverMcp": true})
        );
    }

    #[test]
    fn a_never_over_mcp_pending_record_is_refused_for_models_only() {
        for (origin, allow, refused) in [
            (Origin::Mcp, false, true),
            (Origin::Acp, true, true),
            (Origin::Cli, false, false),
        ] {
            let (_d, l) = ledger();
            pending(&l, Some(Origin::Cli), &[("neverOverMcp", json!(true))]);
            let mut a = approval(origin);
            a.op = "o";
            a.allow_same_origin = allow;
            let result = approve(&l, &a, &FixedClock(NOW));
            assert_eq!(result.is_err(), refused, "{origin:?}");
            if refused {
                let text = result.unwrap_err().to_string();
                assert!(
                    text.contains("declares neverOverMcp") && text.contains("whichever channel"),
                    "{text}"
                );
                assert_eq!(lines(&l), 1);
            }
        }
    }

    #[test]
    fn a_declared_never_over_mcp_op_is_refused_before_anything_is_read() {
        let (_d, l) = ledger();
        pending(&l, Some(Origin::Cli), &[]);
        let mut a = approval(Origin::Mcp);
        a.declared_never_over_mcp = true;
        assert!(matches!(
            approve(&l, &a, &FixedClock(NOW)),
            Err(Refusal::NeverOverMcp(_))
        ));
        assert_eq!(lines(&l), 1);
    }

    #[test]
    fn refusals_in_order() {
        let (_d, l) = ledger();
        // No branch at all.
        assert_eq!(
            approve(&l, &approval(Origin::Mcp), &FixedClock(NOW))
                .unwrap_err()
                .to_string(),
            "Cannot record the approval: this clone has no chant/lifecycle branch; fetch it first"
        );
        l.append_line("local/runs__x.jsonl", "{}", "init").unwrap();
        let mut bad_url = approval(Origin::Mcp);
        bad_url.url = Some("ftp://x".into());
        assert_eq!(
            approve(&l, &bad_url, &FixedClock(NOW))
                .unwrap_err()
                .to_string(),
            "url must be an absolute http/https URL (got \"ftp://x\")"
        );
        let mut cli_url = approval(Origin::Cli);
        cli_url.url = Some("x".into());
        assert_eq!(
            approve(&l, &cli_url, &FixedClock(NOW))
                .unwrap_err()
                .to_string(),
            "--url must be an absolute http/https URL (got \"x\")"
        );
        let mut bad_plan = approval(Origin::Cli);
        bad_plan.plan = Some("sha256:xyz".into());
        assert_eq!(
            approve(&l, &bad_plan, &FixedClock(NOW))
                .unwrap_err()
                .to_string(),
            "--plan must be a plan digest (\"sha256:\" and 64 hex characters), got \"sha256:xyz\""
        );
        assert_eq!(
            approve(&l, &approval(Origin::Mcp), &FixedClock(NOW))
                .unwrap_err()
                .to_string(),
            "Gate \"g\" on \"o\" has no pending fact, so there is no plan to approve"
        );
    }

    #[test]
    fn the_plan_is_copied_and_expiry_ends_a_fact() {
        let (_d, l) = ledger();
        pending(&l, Some(Origin::Cli), &[]);
        let r = approve(&l, &approval(Origin::Mcp), &FixedClock(NOW)).unwrap();
        assert_eq!(r.plan_digest, Some(format!("sha256:{}", "a".repeat(64))));
        assert_eq!(r.record["resolvedBy"], "unattested");
        assert_eq!(r.record["origin"], "mcp");
        // Resolved: nothing left to approve.
        assert!(matches!(
            approve(&l, &approval(Origin::Cli), &FixedClock(NOW)),
            Err(Refusal::NoPendingFact(_))
        ));
        // After expiry the fact no longer stands, resolved or not.
        let (_d2, l2) = ledger();
        pending(&l2, Some(Origin::Cli), &[]);
        assert!(matches!(
            approve(&l2, &approval(Origin::Cli), &FixedClock(NOW + 7_200_000)),
            Err(Refusal::NoPendingFact(_))
        ));
    }
}

#[cfg(test)]
mod layout_tests {
    //! A decision reads only the newest facts; it must decide what reading them all decides.
    use super::*;
    use proptest::prelude::*;

    const NOW: u64 = 1_796_000_000_000;

    use crate::test_ledger as ledger;

    /// `(pending, gate h instead of g, minutes from now, minutes it stands, plan b, legacy)`.
    type Spec = (bool, bool, i64, u64, bool, bool);

    fn line(op: &str, (pending, other, minutes, stands, plan_b, _): Spec) -> (String, u64, Json) {
        let gate = if other { "h" } else { "g" };
        let ts = (NOW as i64 + minutes * 60_000) as u64;
        let digest = format!("sha256:{}", if plan_b { "b" } else { "a" }.repeat(64));
        let mut v = json!({"version": 1, "op": op, "gate": gate, "timestamp": crate::time::iso(ts),
            "planDigest": digest, "origin": "cli"});
        if pending {
            v["kind"] = json!("pending");
            v["expiresAt"] = json!(crate::time::iso(ts + stands * 60_000));
        } else {
            v["kind"] = json!("resolution");
            v["resolvedBy"] = json!("sam");
        }
        (gate.to_owned(), ts, v)
    }

    proptest! {
        #![proptest_config(ProptestConfig { cases: 24, ..ProptestConfig::default() })]
        #[test]
        fn reading_the_newest_facts_decides_what_reading_all_decides(
            specs in proptest::collection::vec(
                (any::<bool>(), any::<bool>(), -600i64..30, 1u64..900, any::<bool>(), proptest::bool::weighted(0.2)),
                1..9,
            )
        ) {
            let (_d, l) = ledger();
            for spec in &specs {
                let (gate, ts, v) = line("o", *spec);
                let text = canon::to_canonical_compact(&v);
                if spec.5 {
                    l.append_line(&gates_path("o"), &text, "legacy").unwrap();
                } else {
                    crate::layout::append(&l, &gate_dir("o", &gate), ts, &text, "new").unwrap();
                }
            }
            let (all, _) = all_facts(&l, "o").unwrap();
            for gate in ["g", "h"] {
                let (some, _) = load(&l, "o", gate, NOW).unwrap();
                prop_assert!(some.len() <= all.len());
                prop_assert_eq!(decide(&some, gate, NOW), decide(&all, gate, NOW), "gate {}", gate);
            }
        }
    }

    #[test]
    fn a_fact_outside_its_place_or_gate_is_skipped_and_said() {
        let (_d, l) = ledger();
        let (_, ts, pending) = line("o", (true, false, -5, 60, false, false));
        let text = canon::to_canonical_compact(&pending);
        // Filed an hour off its own time, and in gate h's directory: neither is believed.
        let wrong_hour = crate::layout::place(&gate_dir("o", "g"), ts - 3_600_000);
        l.append_record(&wrong_hour.dir, &wrong_hour.stem, &text, "m")
            .unwrap();
        crate::layout::append(&l, &gate_dir("o", "h"), ts, &text, "m").unwrap();
        let (facts, skipped) = load(&l, "o", "g", NOW).unwrap();
        assert_eq!(facts, [], "nothing stands for g");
        assert_eq!(skipped.len(), 1);
        assert!(
            skipped[0]
                .reason
                .contains("does not belong in this file's directory"),
            "{skipped:?}"
        );
        let (facts_h, skipped_h) = load(&l, "o", "h", NOW).unwrap();
        assert_eq!(facts_h, []);
        assert_eq!(
            skipped_h[0].reason,
            "a fact of \"o\"/\"g\" does not belong in this gate's directory"
        );
        assert_eq!(decide(&facts, "g", NOW), GateState::Open);
    }

    #[test]
    fn facts_dated_far_ahead_are_not_even_read() {
        let (_d, l) = ledger();
        // A flood filed in next year's directory: a decision never opens it.
        let future = NOW + 200 * 86_400_000;
        for i in 0..3 {
            let mut v = line("o", (true, false, 0, 60, false, false)).2;
            v["timestamp"] = json!(crate::time::iso(future + i));
            crate::layout::append(
                &l,
                &gate_dir("o", "g"),
                future + i,
                &canon::to_canonical_compact(&v),
                "m",
            )
            .unwrap();
        }
        let (_, ts, v) = line("o", (true, false, -1, 60, false, false));
        crate::layout::append(
            &l,
            &gate_dir("o", "g"),
            ts,
            &canon::to_canonical_compact(&v),
            "m",
        )
        .unwrap();
        let (facts, skipped) = load(&l, "o", "g", NOW).unwrap();
        assert_eq!(facts.len(), 1, "only the one that can stand now");
        assert_eq!(skipped, []);
        assert!(matches!(decide(&facts, "g", NOW), GateState::Standing(_)));
        assert_eq!(all_facts(&l, "o").unwrap().0.len(), 4);
    }

    #[test]
    fn gate_directories_name_every_gate_once() {
        for (gate, dir) in [
            ("ship-it", "_gates/o/ship-it"),
            (".", "_gates/o/%2E"),
            ("..", "_gates/o/%2E%2E"),
            ("a/b", "_gates/o/a%2Fb"),
            ("%2E", "_gates/o/%252%45"),
            ("Ship", "_gates/o/%53hip"),
        ] {
            assert_eq!(gate_dir("o", gate), dir);
            let name = dir.rsplit('/').next().unwrap();
            assert_eq!(gate_of_dir(name).as_deref(), Some(gate));
        }
    }
}

#[cfg(test)]
mod flood_tests {
    //! What a forger can plant costs a bounded read and decides nothing.
    use super::*;
    use std::io::Write;

    const NOW: u64 = 1_796_000_000_000;

    /// Adds `files` to the ledger in one commit (git fast-import, as a forger with plumbing).
    fn plant(dir: &std::path::Path, files: &[(String, String)]) {
        let mut child = std::process::Command::new("git")
            .args(["fast-import", "--quiet", "--force"])
            .current_dir(dir)
            .stdin(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        let mut w = std::io::BufWriter::new(child.stdin.take().unwrap());
        writeln!(w, "commit refs/heads/chant/lifecycle\ncommitter f <f@f> 1796000000 +0000\ndata 5\nflood\nfrom refs/heads/chant/lifecycle^0").unwrap();
        for (path, text) in files {
            writeln!(w, "M 100644 inline {path}\ndata {}\n{text}", text.len()).unwrap();
        }
        drop(w);
        assert!(child.wait().unwrap().success());
    }

    fn setup() -> (tempfile::TempDir, Ledger, Json) {
        let (dir, l) = crate::test_ledger();
        let p = record_pending(
            &l,
            "o",
            "g",
            NOW - 60_000,
            3_600_000,
            None,
            Origin::Cli,
            &[],
        )
        .unwrap();
        (dir, l, p)
    }

    #[test]
    fn files_not_named_as_records_are_passed_by_unread() {
        let (d, l, pending) = setup();
        let hour = crate::layout::place(&gate_dir("o", "g"), NOW).dir;
        let junk: Vec<(String, String)> = (0..5_000)
            .map(|i| (format!("{hour}/zz{i:07}.jsonl"), "{}".to_owned()))
            .collect();
        plant(d.path(), &junk);
        let (facts, skipped) = load(&l, "o", "g", NOW).unwrap();
        assert_eq!(facts.len(), 1);
        assert_eq!(facts[0].raw, pending);
        assert_eq!(
            skipped,
            [Skipped {
                file: "_gates/o/g/".into(),
                line: 0,
                reason: "5000 files whose names chant never gives a record were not read".into()
            }]
        );
    }

    #[test]
    fn a_flood_of_record_names_is_read_up_to_a_bound_and_decides_nothing() {
        let (d, l, _) = setup();
        // Newer than the genuine pending fact, named as records, but not facts of this gate.
        let p = crate::layout::place(&gate_dir("o", "g"), NOW);
        let flood: Vec<(String, String)> = (0..1_500)
            .map(|i| {
                (
                    format!("{}/{}-{i:04}.jsonl", p.dir, p.stem),
                    "not a fact".to_owned(),
                )
            })
            .collect();
        plant(d.path(), &flood);
        let (facts, skipped) = load(&l, "o", "g", NOW).unwrap();
        assert_eq!(facts, [], "the walk stopped before the genuine fact");
        assert_eq!(
            decide(&facts, "g", NOW),
            GateState::Open,
            "so the gate passes nothing"
        );
        assert_eq!(skipped.len(), crate::layout::MAX_WALK_READS + 1);
        assert_eq!(
            skipped.last().unwrap().reason,
            "the newest 1000 files hold nothing that decides; older ones were not read"
        );
        // All of them, when all are asked for.
        assert_eq!(all_facts(&l, "o").unwrap().0.len(), 1);
    }

    #[test]
    fn a_decision_stops_at_the_newest_pending_fact_that_can_stand() {
        let (_d, l, pending) = setup();
        // Older than the pending fact: a file a decision would say it skipped, if it read it.
        let old = crate::layout::place(&gate_dir("o", "g"), NOW - 7_200_000);
        l.append_record(&old.dir, &old.stem, "not a fact", "m")
            .unwrap();
        let (facts, skipped) = load(&l, "o", "g", NOW).unwrap();
        assert_eq!(facts.len(), 1);
        assert_eq!(facts[0].raw, pending);
        assert_eq!(skipped, [], "the older file was not read");
        assert_eq!(all_facts(&l, "o").unwrap().1.len(), 1, "but it is there");
    }

    #[test]
    fn gates_only_the_legacy_file_names_are_found() {
        let (_d, l, _) = setup();
        let p = json!({"version": 1, "kind": "pending", "op": "o", "gate": "old-gate",
            "timestamp": crate::time::iso(NOW - 1000), "expiresAt": crate::time::iso(NOW + 60_000)});
        let r = json!({"version": 1, "kind": "resolution", "op": "o", "gate": "answered-only",
            "timestamp": crate::time::iso(NOW - 1000), "resolvedBy": "sam"});
        for v in [&p, &r] {
            l.append_line(&gates_path("o"), &canon::to_canonical_compact(v), "legacy")
                .unwrap();
        }
        let names = gate_names_from(&mut l.reader().unwrap(), "o").unwrap();
        assert_eq!(
            names,
            ["g", "old-gate"],
            "a gate with a pending fact, once each"
        );
    }
}
