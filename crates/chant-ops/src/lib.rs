//! chant's Ops: the Op model and discovery, the local runtime, run records, and the gate
//! ledger with approvals, origins and `neverOverMcp` — everything an Op does, on `gitledger` and
//! `canon`.
//!
//! The origin of a write (`cli`, `mcp`, `acp`) is a value the caller passes in, never ambient
//! state. It knows nothing of MCP transport details or command-line parsing: front ends call
//! [`actions::run_op`] and [`actions::approve_gate`] (each written once for every channel),
//! [`list`], [`status`] and [`report::markdown`].

pub mod actions;
pub mod attest;
pub mod gates;
pub mod host;
pub mod layout;
pub mod lifecycle;
pub mod model;
pub mod records;
pub mod report;
pub mod runtime;
pub mod skipped;
pub mod time;

use std::path::{Path, PathBuf};

use chant_core::model::{Budget, Evaluator};
use gitledger::Ledger;
use serde_json::{Map, Value as Json, json};

pub use gates::Origin;
pub use model::{OpDef, OpSet};

/// The runtime a tool or command addresses (`local` is the only one in this release).
pub fn check_runtime(runtime: Option<&str>, configured: &[String]) -> Result<&'static str, String> {
    match runtime {
        None | Some("local") => Ok("local"),
        Some(r) if configured.iter().any(|c| c == r) => {
            Err(format!("lexicon \"{r}\" does not host Op runs"))
        }
        Some(r) => Err(format!(
            "runtime \"{r}\" is not a configured lexicon (configured: {})",
            configured.join(", ")
        )),
    }
}

/// An environment name becomes a ledger folder (`<env>/runs__<op>.jsonl`), so it is checked
/// before anything runs: letters, digits, `.`, `_`, `-`, starting with a letter or digit, no `..`.
pub fn check_env(env: &str) -> Result<(), String> {
    let mut bytes = env.bytes();
    let ok = bytes.next().is_some_and(|b| b.is_ascii_alphanumeric())
        && bytes.all(|b| b.is_ascii_alphanumeric() || matches!(b, b'.' | b'_' | b'-'))
        && !env.contains("..");
    if ok {
        Ok(())
    } else {
        Err(format!(
            "environment \"{env}\" must match ^[A-Za-z0-9][A-Za-z0-9._-]*$ (it names a folder on chant/lifecycle)"
        ))
    }
}

/// Where Ops live: the git top level and its ledger.
#[derive(Clone, Debug)]
pub struct Repo {
    pub root: PathBuf,
    pub ledger: Ledger,
}

impl Repo {
    /// The repository containing `dir` (`Not in a git repository` outside one), with the
    /// ledger of the project there: inside a workspace member, its `_members/<member>/`
    /// directory on the branch (see [`chant_workspace::ledger`]), which every read and write
    /// of runs, gates and snapshots stays in.
    pub fn open(dir: &Path) -> Result<Repo, String> {
        let scope = chant_workspace::ledger::scope_of(dir, env!("CARGO_PKG_VERSION"))?;
        let ledger = Ledger::open(dir)
            .and_then(|l| l.scoped(&scope))
            .map_err(|e| e.to_string())?;
        Ok(Repo {
            root: ledger.toplevel().to_path_buf(),
            ledger,
        })
    }

    /// Before a run or an approval decides anything: a clone that knows no ledger fetches the
    /// remote's (see [`gitledger::Ledger::fetch_if_unknown`]). The note to show, if any.
    pub fn sync(&self) -> Option<String> {
        match self.ledger.fetch_if_unknown() {
            Ok(gitledger::Fetch::Failed {
                remote,
                message,
                shallow,
            }) => Some(format!(
                "note: this clone has no chant/lifecycle and fetching {remote}'s failed ({message}){}, so approvals and runs recorded there are not seen; fetch it with `git fetch {remote} chant/lifecycle:refs/remotes/{remote}/chant/lifecycle` (writes made meanwhile are merged, never pushed over {remote}'s)",
                if shallow {
                    " in this shallow clone"
                } else {
                    ""
                }
            )),
            Ok(_) => None,
            Err(e) => Some(format!("note: {e}")),
        }
    }

    /// Pushes the ledger when a remote is configured (never forced; see
    /// [`gitledger::Ledger::publish`]). A failure is a warning to show: the record stays local.
    pub fn publish(&self) -> Option<String> {
        self.ledger.publish().err().map(|e| {
            format!("warning: could not push chant/lifecycle: {e}; the record stays local")
        })
    }

    pub fn discover(&self, evaluator: &(dyn Evaluator + Sync), budget: &Budget) -> OpSet {
        model::discover(&self.root, evaluator, budget)
    }

    /// The Ops under `dir` only (inside the repository), evaluated with `dir` as their
    /// boundary: what a server confined to `dir` may see.
    pub fn discover_under(
        &self,
        dir: &Path,
        evaluator: &(dyn Evaluator + Sync),
        budget: &Budget,
    ) -> OpSet {
        model::discover(dir, evaluator, budget)
    }

    /// [`Repo::discover_under`], evaluating only the Op files whose reads changed since
    /// `cache` saw them (a long-running server's).
    pub fn discover_under_cached(
        &self,
        dir: &Path,
        evaluator: &(dyn Evaluator + Sync),
        budget: &Budget,
        cache: &model::DiscoveryCache,
    ) -> std::sync::Arc<OpSet> {
        model::discover_cached(dir, evaluator, budget, Some(cache))
    }

    /// The `op-status` object; `skipped: [{file, line, reason}]` is added when a line of the
    /// Op's run or gate files could not be read (each such line costs itself only).
    pub fn status(&self, op: &OpDef, runtime: &str, now_ms: u64) -> Json {
        self.status_and_skipped(op, runtime, now_ms).0
    }

    /// [`Repo::status`], with the skipped lines also as data.
    pub fn status_and_skipped(
        &self,
        op: &OpDef,
        runtime: &str,
        now_ms: u64,
    ) -> (Json, Vec<records::Skipped>) {
        // One reader (one commit, one git process) for the runs and the gates.
        let (latest, (gate, gate_skipped)) = match self.ledger.reader() {
            Ok(mut reader) => (
                records::latest_from(&mut reader, &op.name),
                standing_gate_from(&mut reader, op, now_ms),
            ),
            Err(_) => Default::default(),
        };
        let mut status = records::status(&op.name, runtime, latest.run.as_ref(), gate);
        let skipped: Vec<records::Skipped> =
            latest.skipped.into_iter().chain(gate_skipped).collect();
        if !skipped.is_empty()
            && let Some(o) = status.as_object_mut()
        {
            o.insert("skipped".into(), records::Skipped::array(&skipped));
            o.insert("skippedTotal".into(), json!(skipped.len()));
        }
        (status, skipped)
    }

    /// The `op-list` entries of `ops`, reading the ledger once for all of them (only what
    /// changed since `cache` saw it, when there is one).
    pub fn list_entries(&self, ops: &[OpDef], cache: Option<&records::LatestCache>) -> Vec<Json> {
        let names: Vec<&str> = ops.iter().map(|o| o.name.as_str()).collect();
        let latests = records::latests(&self.ledger, &names, cache);
        ops.iter()
            .zip(latests)
            .map(|(op, latest)| {
                let mut m = summary(op);
                m.insert(
                    "runState".into(),
                    latest.run.as_ref().map_or(Json::Null, |r| {
                        json!(records::state_of(r["status"].as_str().unwrap_or_default()))
                    }),
                );
                Json::Object(m)
            })
            .collect()
    }
}

/// `{name, since}` of a standing gate of `op`, if any (the one whose pending fact is newest,
/// when several stand), and the gate lines skipped.
fn standing_gate_from(
    reader: &mut gitledger::Reader,
    op: &OpDef,
    now_ms: u64,
) -> (Option<Json>, Vec<records::Skipped>) {
    let mut skipped = Vec::new();
    // Each gate's load reads the legacy file again: its lines are said once.
    let mut said = std::collections::HashSet::new();
    let mut standing: Option<gates::Fact> = None;
    for g in gates::gate_names_from(reader, &op.name).unwrap_or_default() {
        let Ok((facts, bad)) = gates::load_from(reader, &op.name, &g, now_ms) else {
            continue;
        };
        for s in bad {
            if said.insert((s.file.clone(), s.line, s.reason.clone())) {
                skipped.push(s);
            }
        }
        if let gates::GateState::Standing(p) | gates::GateState::Mismatched { pending: p, .. } =
            gates::decide(&facts, &g, now_ms)
            && standing
                .as_ref()
                .is_none_or(|s| p.timestamp_ms >= s.timestamp_ms)
        {
            standing = Some(p);
        }
    }
    (
        standing.map(|p| json!({"name": p.gate, "since": p.timestamp})),
        skipped,
    )
}

/// `{name, overview, phases: <count>, labels, depends}` (`chant://ops` entries).
pub fn summary(op: &OpDef) -> Map<String, Json> {
    let mut m = Map::new();
    m.insert("name".into(), json!(op.name));
    m.insert("overview".into(), json!(op.overview));
    m.insert("phases".into(), json!(op.phases.len()));
    m.insert("labels".into(), Json::Object(op.labels.clone()));
    m.insert("depends".into(), json!(op.depends));
    m
}

/// `Op "<n>" not found. Available: <names>`.
pub fn not_found(name: &str, set: &OpSet) -> String {
    format!(
        "Op \"{name}\" not found. Available: {}",
        set.names().join(", ")
    )
}

/// The `neverOverMcp` run refusal.
pub fn never_over_mcp_run_text(op: &str) -> String {
    format!(
        "Op \"{op}\" declares neverOverMcp, so it is not run over MCP. Run it at a shell with `chant run {op}`; op-status and op-report still answer here."
    )
}

/// A fresh repository and its (empty) ledger, for tests.
#[cfg(test)]
pub(crate) fn test_ledger() -> (tempfile::TempDir, Ledger) {
    let dir = tempfile::tempdir().unwrap();
    let ok = std::process::Command::new("git")
        .args(["init", "-q"])
        .current_dir(dir.path())
        .status()
        .unwrap();
    assert!(ok.success());
    let l = Ledger::open(dir.path()).unwrap();
    (dir, l)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn environments_that_would_escape_their_folder_are_refused() {
        for ok in ["local", "dev", "Prod-EU", "stage.2", "qa_1"] {
            assert_eq!(check_env(ok), Ok(()), "{ok}");
        }
        for bad in ["", "../x", "a/b", "a..b", "-x", ".hidden", "a b", "a\"b"] {
            let e = check_env(bad).unwrap_err();
            assert!(
                e.starts_with(&format!("environment \"{bad}\" must match")),
                "{e}"
            );
        }
    }
}
