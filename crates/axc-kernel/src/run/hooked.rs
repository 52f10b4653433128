//! The governed commands' hooks: which config's hooks a command may run, running a phase's
//! hooks ([`crate::hooks::run_hooks`]) with the run's id, turn and protected files, and what a
//! hook that blocks or tampers does to the run — the reference's `blockRunForHookIssue` (the
//! run blocked on `hook:<phase>:<hook>`, a human escalation raised) or, after a dispatch,
//! `markRunBlocked` (the turn retained).
//!
//! Hooks are commands run with the rights of whoever runs the governed command — a person
//! approving a gate, accepting a turn. So they run only when they are exactly the hooks the
//! person allowed for the project on this machine (`agentxchain hooks allow`, a list kept
//! outside the project): nothing an agent writes in the project adds, changes or drops a hook.

use std::path::{Path, PathBuf};

use serde_json::{Value as Json, json};

use super::store::{STATE, Store};
use super::{Refusal, config as cfg, escalate, now, session};
use crate::hooks::{self, HookContext, HookRun};

/// A phase's hooks halted the command.
#[derive(Clone, Debug)]
pub struct Halted {
    /// The hook phase (`before_assignment`, `after_dispatch`, …).
    pub phase: &'static str,
    /// The hook named (the one that blocked or tampered; for `after_dispatch`'s tamper, the
    /// file, as the reference names it).
    pub hook: String,
    /// What halted it: the hook's message, the tamper's, or the phase's default text.
    pub error: String,
    /// `hook_blocked`, `hook_<file>_tamper` or `hook_post_commit_error`.
    pub error_code: String,
    pub tamper: bool,
    /// The turn and role it halted, when one.
    pub turn_id: Option<String>,
    pub role: Option<String>,
    /// The run as it stands after: blocked, or unchanged (a `before_assignment` block).
    pub state: Json,
    /// The human escalation raised for the block, when one was.
    pub escalation: Option<Json>,
    /// The audit lines written.
    pub results: Vec<Json>,
}

impl std::fmt::Display for Halted {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.error)
    }
}

/// The hooks of `config`, when the governed commands may run them (and leave none out). The
/// config is read again now (the hooks that run are the ones in that text, whatever was loaded
/// before), and its hooks must be exactly the ones the person last allowed for this project on
/// this machine ([`allowed`], `agentxchain hooks allow`), the project files their commands name
/// included. The allow list is outside the project: nothing an agent writes in it — the config,
/// a commit, the run's state (a turn's baseline), git's objects, the decision ledger — changes
/// what runs. Hooks the person allowed that are gone from the config are no way past them
/// either: the step is refused until they are back or the person allows running without them.
/// A project whose person never allowed hooks, and whose config declares none, runs none.
pub fn trusted<'a>(store: &Store, config: &'a Json) -> Result<&'a Json, Refusal> {
    let hooks = &config["hooks"];
    let (now, _) = cfg::load_text(store)?;
    if now["hooks"] != *hooks {
        return Err(Refusal::new(format!(
            "{} changed while this command ran: run it again.",
            super::store::CONFIG
        )));
    }
    match newest_allowance(store.root()) {
        Some(line) if line["hooks_key"] == hooks_key(store.root(), hooks).as_str() => Ok(hooks),
        Some(line) if line["any"] == true && !any_hooks(hooks) => Err(Refusal::new(format!(
            "The hooks allowed for this project are gone from {config}: hooks guard steps a person wanted checked, so none is left out. Restore them (git checkout {config}), or — a person — run `agentxchain hooks allow` to run without them.",
            config = super::store::CONFIG
        ))),
        None if !any_hooks(hooks) => Ok(hooks),
        _ => Err(Refusal::new(format!(
            "The hooks in {} are not the ones allowed on this machine. Hooks are commands run with your rights, and anyone who can write to the project (an agent too) can change them: review them with `agentxchain hooks`, then run `agentxchain hooks allow` (it records these exact hooks, and the project files they name, for this project; any change asks again).",
            super::store::CONFIG
        ))),
    }
}

/// Whether `hooks` declares any hook at all.
pub fn any_hooks(hooks: &Json) -> bool {
    hooks.as_object().is_some_and(|m| {
        m.values()
            .any(|l| l.as_array().is_some_and(|l| !l.is_empty()))
    })
}

/// The file where this machine's person records the hooks they allowed, one line per
/// allowance: `$AGENTXCHAIN_HOME/allowed-hooks.jsonl`, else under `$XDG_CONFIG_HOME/agentxchain`,
/// else `~/.config/agentxchain` — outside every project, where an agent working in one cannot
/// write (the way `direnv allow` keeps its list). `None` when there is no home to keep it in.
pub fn allow_list() -> Option<PathBuf> {
    let var = |k: &str| {
        std::env::var_os(k)
            .filter(|v| !v.is_empty())
            .map(PathBuf::from)
    };
    var("AGENTXCHAIN_HOME")
        .or_else(|| var("XDG_CONFIG_HOME").map(|d| d.join("agentxchain")))
        .or_else(|| var("HOME").map(|d| d.join(".config/agentxchain")))
        .map(|d| d.join("allowed-hooks.jsonl"))
}

/// The project an allowance is for: its real path's bytes, as one SHA-256 digest.
fn project_key(root: &Path) -> String {
    use std::os::unix::ffi::OsStrExt;
    let root = root.canonicalize().unwrap_or_else(|_| root.to_path_buf());
    format!("sha256:{}", canon::sha256_hex(root.as_os_str().as_bytes()))
}

/// What an allowance allows: these exact hooks (their canonical JSON) and the bytes of every
/// file of the project a hook's command names (`sh scripts/lint.sh`: an agent that rewrites the
/// script changes what is allowed), as one SHA-256 digest.
pub fn hooks_key(root: &Path, hooks: &Json) -> String {
    let mut text = canon::to_canonical_compact(hooks);
    for phase in hooks.as_object().into_iter().flat_map(|m| m.values()) {
        for hook in phase.as_array().into_iter().flatten() {
            // The program itself, found as the hook's process will find it: a `PATH` (the
            // hook's own `env` first) that leads into the project lets the project pick it.
            // A program of the system counts by where it is (hashing it would cost every
            // command milliseconds, and an update would ask again); one in the project by its
            // bytes too.
            if let Some(program) = hook["command"][0].as_str().filter(|p| !p.contains('/'))
                && let Some(found) = on_path(root, program, &hook["env"]["PATH"])
            {
                let real = found.canonicalize().unwrap_or(found);
                let inside = root.canonicalize().is_ok_and(|r| real.starts_with(&r));
                let mark = if inside {
                    file_mark(root, &real.to_string_lossy()).unwrap_or_default()
                } else {
                    String::new()
                };
                text.push_str(&format!("\n{program}\0{}\0{mark}", real.display()));
            }
            for part in hook["command"].as_array().into_iter().flatten() {
                let Some(p) = part
                    .as_str()
                    .filter(|p| !p.is_empty() && !p.starts_with('-'))
                else {
                    continue;
                };
                if let Some(mark) = file_mark(root, p) {
                    text.push_str(&format!("\n{p}\0{mark}"));
                }
            }
        }
    }
    format!("sha256:{}", canon::sha256_hex(text.as_bytes()))
}

/// Where `program` is found on the `PATH` a hook runs with (its `env`'s, else this process's):
/// the first executable regular file, a relative entry taken from the project (the hook's
/// directory).
fn on_path(root: &Path, program: &str, hook_path: &Json) -> Option<PathBuf> {
    use std::os::unix::fs::PermissionsExt;
    let path = hook_path
        .as_str()
        .map(std::ffi::OsString::from)
        .or_else(|| std::env::var_os("PATH"))?;
    std::env::split_paths(&path)
        .map(|dir| root.join(dir).join(program))
        .find(|c| {
            std::fs::metadata(c).is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
        })
}

/// What a command part that names a file (in the project, or a link from it to elsewhere)
/// stands for in an allowance: the digest of its bytes (up to 16 MiB), else — a larger file —
/// its real path, size and modification time. `None` for a part that names no regular file
/// (a word, a directory, a FIFO: never opened).
fn file_mark(root: &Path, part: &str) -> Option<String> {
    if let Ok(bytes) = fsread::read_inside(root, Path::new(part), 16 << 20) {
        return Some(canon::sha256_hex(&bytes));
    }
    let path = root.join(part);
    let meta = std::fs::metadata(&path)
        .ok()
        .filter(std::fs::Metadata::is_file)?;
    let real = path.canonicalize().ok()?;
    if meta.len() <= 16 << 20
        && let Ok(bytes) = std::fs::read(&real)
    {
        return Some(format!("{}:{}", real.display(), canon::sha256_hex(&bytes)));
    }
    let modified = meta
        .modified()
        .ok()
        .and_then(|m| m.duration_since(std::time::UNIX_EPOCH).ok())
        .map_or(0, |d| d.as_nanos());
    Some(format!("{}:{}:{modified}", real.display(), meta.len()))
}

/// The person's newest allowance line for the project at `root` on this machine.
fn newest_allowance(root: &Path) -> Option<Json> {
    let list = allow_list()?;
    let project = project_key(root);
    // Read as a regular file only, never waiting on a FIFO or following into a device.
    let text = fsread::read_inside(list.parent()?, Path::new(list.file_name()?), 64 << 20).ok()?;
    String::from_utf8_lossy(&text)
        .lines()
        .rev()
        .filter_map(|l| serde_json::from_str::<Json>(l).ok())
        .find(|l| l["project_key"] == project.as_str())
}

/// Whether the person ever allowed hooks (or running without them) for the project at `root`.
pub fn has_allowance(root: &Path) -> bool {
    newest_allowance(root).is_some()
}

/// Whether the person's newest allowance for the project at `root` on this machine is for
/// `hooks` as they are now (an older allowance of other hooks no longer counts).
pub fn allowed(root: &Path, hooks: &Json) -> bool {
    newest_allowance(root).is_some_and(|l| l["hooks_key"] == hooks_key(root, hooks).as_str())
}

/// Records that the person allows `hooks` for the project at `root` (`agentxchain hooks
/// allow`): the allow list's path.
pub fn allow(root: &Path, hooks: &Json) -> Result<PathBuf, String> {
    use std::io::Write;
    let list = allow_list()
        .ok_or("no home directory to keep the allow list in (set HOME or AGENTXCHAIN_HOME)")?;
    if let Some(dir) = list.parent() {
        std::fs::create_dir_all(dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    }
    let line = json!({"project_key": project_key(root), "hooks_key": hooks_key(root, hooks),
        "any": any_hooks(hooks),
        "project": root.canonicalize().unwrap_or_else(|_| root.to_path_buf()).display().to_string(),
        "allowed_at": now()});
    std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(&list)
        .and_then(|mut f| f.write_all(format!("{line}\n").as_bytes()))
        .map_err(|e| format!("{}: {e}", list.display()))?;
    Ok(list)
}

/// Runs `phase`'s hooks of `hooks` for the run `run_id` (and `turn_id`); `None` when there
/// are none. `protected`: files besides the state, history and ledger no hook may change.
pub fn run(
    store: &Store,
    hooks: &Json,
    phase: &str,
    payload: &Json,
    run_id: &Json,
    turn_id: Option<&str>,
    protected: Vec<String>,
) -> Option<HookRun> {
    if !hooks::declares(hooks, phase) {
        return None;
    }
    let ctx = HookContext {
        run_id: run_id.as_str().unwrap_or(""),
        turn_id,
        audit_dir: store.root().join(".agentxchain"),
        protected,
    };
    Some(hooks::run_hooks(store.root(), hooks, phase, payload, &ctx))
}

/// The `error_code` of a halted run of hooks: the tamper's, else `otherwise`.
pub fn error_code(run: &HookRun, otherwise: &str) -> String {
    run.tamper
        .as_ref()
        .and_then(|t| t["error_code"].as_str())
        .unwrap_or(otherwise)
        .to_owned()
}

/// The command that goes on with the run after a hook is fixed: `agentxchain resume`, with
/// `--turn` when several turns are active and one is retained (the reference's
/// `deriveBlockedRecoveryCommand` without a config: every runtime is taken as manual).
fn tamper_command(state: &Json, turn_id: Option<&str>, retained: bool) -> String {
    let active = state["active_turns"].as_object().map_or(0, |m| m.len());
    match turn_id {
        Some(t) if retained && active > 1 => format!("agentxchain resume --turn {t}"),
        _ => "agentxchain resume".to_owned(),
    }
}

/// The recovery a hook's block asks for (the reference's `deriveHookRecovery`).
fn recovery(
    state: &Json,
    phase: &str,
    hook: &str,
    detail: &str,
    tamper: bool,
    turn_id: Option<&str>,
    retained: bool,
) -> Json {
    for (key, command) in [
        ("pending_phase_transition", "approve-transition"),
        ("pending_run_completion", "approve-completion"),
    ] {
        let pending = &state[key];
        if phase == "before_gate" && !pending.is_null() {
            let typed = if tamper { "hook_tamper" } else { key };
            let action = if tamper {
                format!(
                    "Disable or fix the hook, verify protected files, then rerun agentxchain {command}"
                )
            } else {
                format!("agentxchain {command}")
            };
            let detail = pending["gate"]
                .as_str()
                .filter(|g| !g.is_empty())
                .unwrap_or(detail);
            return json!({"typed_reason": typed, "owner": "human", "recovery_action": action,
                "turn_retained": false, "detail": detail});
        }
    }
    let action = if tamper {
        format!(
            "Disable or fix the hook, verify protected files, then run {}",
            tamper_command(state, turn_id, retained)
        )
    } else {
        let turn = turn_id.map(|t| format!(" --turn {t}")).unwrap_or_default();
        format!("Fix or reconfigure hook \"{hook}\", then rerun agentxchain accept-turn{turn}")
    };
    json!({"typed_reason": if tamper { "hook_tamper" } else { "hook_block" }, "owner": "human",
        "recovery_action": action, "turn_retained": retained, "detail": detail})
}

/// What the caller knows of a halt: where, which turn, and whether the turn stays.
pub struct Halt<'a> {
    pub phase: &'static str,
    pub turn_id: Option<&'a str>,
    pub retained: bool,
    /// The text when neither the hook nor a tamper says what halted it.
    pub fallback: &'a str,
    /// The `error_code` of a block that is not a tamper (`hook_blocked`, or
    /// `hook_post_commit_error` after an acceptance).
    pub code: &'a str,
}

/// Blocks the run on a hook that blocked or tampered (the reference's `blockRunForHookIssue`):
/// `blocked_on` = `hook:<phase>:<hook>`, the recovery a person takes, the run's history line
/// and the human escalation. Called under the lock, with the state as it stands.
pub fn block(
    store: &Store,
    state: &Json,
    config: &Json,
    run: &HookRun,
    halt: &Halt<'_>,
) -> Result<Halted, Refusal> {
    let hook = run.halting_hook().to_owned();
    let error = run.halt_detail(halt.fallback);
    let tamper = run.tamper.is_some();
    let error_code = error_code(run, halt.code);
    let rec = recovery(
        state,
        halt.phase,
        &hook,
        &error,
        tamper,
        halt.turn_id,
        halt.retained,
    );
    let mut next = state.clone();
    next["status"] = json!("blocked");
    next["blocked_on"] = json!(format!("hook:{}:{hook}", halt.phase));
    next["blocked_reason"] = json!({
        "category": if tamper { "hook_tamper" } else { "hook_block" },
        "recovery": rec,
        "blocked_at": now(),
        "turn_id": halt.turn_id,
    });
    store.write_json(STATE, &next)?;
    super::run_history::record_blocked(store, &next, config)?;
    let escalation = raise_once(store, &next, halt.turn_id)?;
    let role = halt
        .turn_id
        .and_then(|t| next["active_turns"][t]["assigned_role"].as_str())
        .map(str::to_owned);
    Ok(Halted {
        phase: halt.phase,
        hook,
        error,
        error_code,
        tamper,
        turn_id: halt.turn_id.map(str::to_owned),
        role,
        state: next,
        escalation,
        results: run.results.clone(),
    })
}

/// The human escalation for a block, unless one is open already.
fn raise_once(store: &Store, state: &Json, turn_id: Option<&str>) -> Result<Option<Json>, Refusal> {
    if escalate::current(store, state).is_some() {
        return Ok(None);
    }
    let role = turn_id
        .and_then(|t| state["active_turns"][t]["assigned_role"].as_str())
        .map(str::to_owned);
    escalate::raise(store, state, turn_id, role.as_deref()).map(Some)
}

/// The `after_dispatch` hooks of a dispatched `turn` (its bundle written, not sealed yet:
/// what a hook adds to the bundle is sealed with it; the bundle's own files are protected).
/// `Some` when they halted it: the run is blocked with the turn retained.
pub fn after_dispatch(
    store: &Store,
    config: &Json,
    hooks: &Json,
    state: &Json,
    turn: &Json,
) -> Result<Option<Halted>, Refusal> {
    if !crate::hooks::declares(hooks, "after_dispatch") {
        return Ok(None);
    }
    let turn_id = turn["turn_id"].as_str().unwrap_or("");
    let dir = super::dispatch::bundle_rel(turn_id);
    let payload = json!({
        "turn_id": turn_id, "role_id": turn["assigned_role"], "bundle_path": dir,
        "bundle_files": ["ASSIGNMENT.json", "PROMPT.md", "CONTEXT.md"],
    });
    let protected = [
        "ASSIGNMENT.json",
        "PROMPT.md",
        "CONTEXT.md",
        "CONTEXT.effective.md",
    ]
    .iter()
    .map(|f| format!("{dir}/{f}"))
    .collect();
    let Some(run) = run(
        store,
        hooks,
        "after_dispatch",
        &payload,
        &state["run_id"],
        Some(turn_id),
        protected,
    )
    .filter(|r| !r.ok) else {
        return Ok(None);
    };
    // The turn stays assigned, not dispatched: a person fixes the hook and dispatches it again.
    let mut held = state.clone();
    held["active_turns"][turn_id]["status"] = json!("assigned");
    if let Some(t) = held["active_turns"][turn_id].as_object_mut() {
        t.remove("dispatched_at");
    }
    block_dispatch(store, &held, config, &run, turn_id).map(Some)
}

/// Blocks the run on an `after_dispatch` hook that blocked or tampered with the turn's bundle
/// (the reference's `markRunBlocked` from `resume`, `step` and `run`): category
/// `dispatch_error`, the turn retained, a session checkpoint and the human escalation.
pub fn block_dispatch(
    store: &Store,
    state: &Json,
    config: &Json,
    run: &HookRun,
    turn_id: &str,
) -> Result<Halted, Refusal> {
    let tamper = run.tamper.is_some();
    // A tamper names the file, as the reference does.
    let hook = match &run.tamper {
        Some(t) => t["file"].as_str().unwrap_or("unknown").to_owned(),
        None => run.halting_hook().to_owned(),
    };
    let error = run.halt_detail(&format!(
        "after_dispatch hook blocked dispatch for turn {turn_id}"
    ));
    let command = crate::views::status::retained_command_for(state, config, Some(turn_id));
    let mut next = state.clone();
    next["status"] = json!("blocked");
    next["blocked_on"] = json!(format!("hook:after_dispatch:{hook}"));
    next["blocked_reason"] = json!({
        "category": "dispatch_error",
        "recovery": {
            "typed_reason": if tamper { "hook_tamper" } else { "hook_block" },
            "owner": "human",
            "recovery_action": format!("Fix or reconfigure the hook, then rerun {command}"),
            "turn_retained": true,
            "detail": error,
        },
        "blocked_at": now(),
        "turn_id": turn_id,
    });
    if next.get("escalation").is_none() {
        next["escalation"] = Json::Null;
    }
    store.write_json(STATE, &next)?;
    let role = next["active_turns"][turn_id]["assigned_role"]
        .as_str()
        .map(str::to_owned);
    let _ = session::checkpoint(
        store,
        &next,
        "blocked",
        session::Extra {
            role: role.as_deref(),
            ..Default::default()
        },
    );
    let escalation = raise_once(store, &next, Some(turn_id))?;
    Ok(Halted {
        phase: "after_dispatch",
        hook,
        error,
        error_code: error_code(run, "hook_blocked"),
        tamper,
        turn_id: Some(turn_id.to_owned()),
        role,
        state: next,
        escalation,
        results: run.results.clone(),
    })
}

/// A halt that leaves the run as it was (a `before_assignment` hook that blocked: nothing was
/// assigned, nothing is blocked).
pub fn refused(
    state: &Json,
    run: &HookRun,
    phase: &'static str,
    role: &str,
    fallback: &str,
) -> Halted {
    Halted {
        phase,
        hook: run.halting_hook().to_owned(),
        error: run.halt_detail(fallback),
        error_code: error_code(run, "hook_blocked"),
        tamper: run.tamper.is_some(),
        turn_id: None,
        role: Some(role.to_owned()),
        state: state.clone(),
        escalation: None,
        results: run.results.clone(),
    }
}

/// Fires the `on_escalation` hooks of `config` once a block is written (the reference's
/// `_fireOnEscalationHooks`): they are told, they decide nothing (their outcome is only in
/// `hook-audit.jsonl`). Never for a block a hook caused. Hooks of a config no person chose
/// are not run (the escalation stands all the same).
pub fn on_escalation(store: &Store, config: &Json, payload: &Json) {
    let Ok(hooks) = trusted(store, config) else {
        return;
    };
    let turn = payload["failed_turn_id"].as_str();
    let _ = run(
        store,
        hooks,
        "on_escalation",
        payload,
        &payload["run_id"],
        turn,
        Vec::new(),
    );
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_gate_hook_block_asks_for_the_approval_again_and_a_turn_hook_for_accept() {
        let paused =
            json!({"pending_phase_transition": {"gate": "planning_signoff"}, "active_turns": {}});
        let r = recovery(&paused, "before_gate", "sign", "no", false, None, false);
        assert_eq!(r["typed_reason"], "pending_phase_transition");
        assert_eq!(r["recovery_action"], "agentxchain approve-transition");
        assert_eq!(r["detail"], "planning_signoff");
        let r = recovery(&paused, "before_gate", "sign", "no", true, None, false);
        assert_eq!(r["typed_reason"], "hook_tamper");
        assert_eq!(
            r["recovery_action"],
            "Disable or fix the hook, verify protected files, then rerun agentxchain approve-transition"
        );
        let done = json!({"pending_run_completion": {"gate": "qa_ship"}});
        let r = recovery(&done, "before_gate", "sign", "no", false, None, false);
        assert_eq!(r["recovery_action"], "agentxchain approve-completion");
        let active = json!({"active_turns": {"t1": {}, "t2": {}}});
        let r = recovery(
            &active,
            "before_validation",
            "lint",
            "bad",
            false,
            Some("t1"),
            true,
        );
        assert_eq!(
            r["recovery_action"],
            "Fix or reconfigure hook \"lint\", then rerun agentxchain accept-turn --turn t1"
        );
        assert_eq!(
            (r["typed_reason"].as_str(), r["turn_retained"].as_bool()),
            (Some("hook_block"), Some(true))
        );
        let r = recovery(
            &active,
            "before_validation",
            "lint",
            "bad",
            true,
            Some("t1"),
            true,
        );
        assert_eq!(
            r["recovery_action"],
            "Disable or fix the hook, verify protected files, then run agentxchain resume --turn t1"
        );
        let r = recovery(
            &active,
            "before_assignment",
            "lint",
            "bad",
            true,
            None,
            false,
        );
        assert_eq!(
            r["recovery_action"],
            "Disable or fix the hook, verify protected files, then run agentxchain resume"
        );
    }
}
