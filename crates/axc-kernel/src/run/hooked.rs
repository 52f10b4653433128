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
use super::{Refusal, config as cfg, escalate, now};
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
    /// The turn and role it halted, when one.
    pub turn_id: Option<String>,
    pub role: Option<String>,
    /// The run as it stands after: blocked, or unchanged (a `before_assignment` block).
    pub state: Json,
    /// The human escalation raised for the block, when one was.
    pub escalation: Option<Json>,
}

impl std::fmt::Display for Halted {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.error)
    }
}

/// The hooks of `config`, when the governed commands may run them (and leave none out). The
/// config is read again now (the hooks that run are the ones in that text, whatever was loaded
/// before), and its hooks must be exactly the ones the person last allowed for this project on
/// this machine (`agentxchain hooks allow`, [`allow`]), the project files their commands name
/// included. The allow list is outside the project: nothing an agent writes in it — the config,
/// a commit, the run's state (a turn's baseline), git's objects, the decision ledger — changes
/// what runs. Hooks the person allowed that are gone from the config are no way past them
/// either: the step is refused until they are back or the person allows running without them.
/// A project whose person never allowed hooks, and whose config declares none, runs none.
pub fn trusted<'a>(store: &Store, config: &'a Json) -> Result<&'a Json, Refusal> {
    trusted_by(store, config, newest_allowance_checked(store.root()))
}

/// [`trusted`], judged by the newest allowance `allowance` (as the allow list was read).
fn trusted_by<'a>(
    store: &Store,
    config: &'a Json,
    allowance: Result<Option<Json>, String>,
) -> Result<&'a Json, Refusal> {
    let hooks = &config["hooks"];
    let (now, _) = cfg::load_text(store)?;
    if now["hooks"] != *hooks {
        return Err(Refusal::new(format!(
            "{} changed while this command ran: run it again.",
            super::store::CONFIG
        )));
    }
    let newest = allowance.map_err(|e| {
        Refusal::new(format!(
            "The allow list of hooks cannot be read ({}): no hook is run, or left out, without it.",
            axc_core::util::printable(&e)
        ))
    })?;
    match newest {
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

/// A file a hook's command runs or names, read once: the bytes that are keyed are the bytes
/// that run ([`run`] hands the hook a private copy of them).
struct Named {
    /// Which command part names it.
    index: usize,
    /// The file's real path.
    real: PathBuf,
    /// Its bytes, when it is named through the project (a path in it, a link in it, a `PATH`
    /// entry in it); `None` for a file of the machine named from outside the project (an
    /// absolute path, a program of the system): counted by where it is — the agent cannot
    /// change it, hashing it would cost every command milliseconds, and an update would ask
    /// again.
    bytes: Option<Vec<u8>>,
    executable: bool,
}

/// The most of a named file read and copied (a larger one cannot be allowed).
const MAX_NAMED: u64 = 64 << 20;

/// What `hook`'s command runs and names: its program as the hook's process will find it (a
/// `PATH` — the hook's own `env` first — that leads into the project lets the project pick
/// it), and every part that names a regular file (in the project, or through a link out of
/// it). A part naming a FIFO or device is never opened. Err: a named file too large to pin.
fn named(root: &Path, hook: &Json) -> Result<Vec<Named>, String> {
    use std::os::unix::fs::PermissionsExt;
    let real_root = root.canonicalize().unwrap_or_else(|_| root.to_path_buf());
    let mut out = Vec::new();
    let parts: Vec<&str> = hook["command"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|p| p.as_str().unwrap_or(""))
        .collect();
    for (index, part) in parts.iter().enumerate() {
        if part.is_empty() || part.starts_with('-') {
            continue;
        }
        let found = if index == 0 && !part.contains('/') {
            match on_path(root, part, &hook["env"]["PATH"]) {
                Some(f) => f,
                None => continue,
            }
        } else {
            root.join(part)
        };
        let Some(meta) = std::fs::metadata(&found)
            .ok()
            .filter(std::fs::Metadata::is_file)
        else {
            continue;
        };
        // Named through the project (a path in it, a link in it to anywhere, a `PATH` entry
        // in it): the agent's to change, so read and run as read. Anything else is the
        // person's machine, counted by where it is.
        let real = found.canonicalize().unwrap_or_else(|_| found.clone());
        let through_project = lexically_inside(root, &found) || real.starts_with(&real_root);
        let bytes = if !through_project {
            None
        } else {
            if meta.len() > MAX_NAMED {
                return Err(format!(
                    "{part} ({} bytes) is larger than the {MAX_NAMED} bytes a hook's file may be",
                    meta.len()
                ));
            }
            Some(read_regular(&real).map_err(|e| format!("{part}: {e}"))?)
        };
        out.push(Named {
            index,
            real,
            bytes,
            executable: meta.permissions().mode() & 0o111 != 0,
        });
    }
    Ok(out)
}

/// Whether `path`, with its `..` taken away by name (links not followed), is `root` or
/// below it.
fn lexically_inside(root: &Path, path: &Path) -> bool {
    use std::path::Component;
    let mut out = PathBuf::new();
    for c in root.join(path).components() {
        match c {
            Component::ParentDir => {
                out.pop();
            }
            Component::CurDir => {}
            other => out.push(other),
        }
    }
    out.starts_with(root)
}

/// The bytes of the regular file at `path` (at most [`MAX_NAMED`]): opened without waiting (a
/// FIFO swapped in is refused, not waited on) and checked to be a regular file as opened.
fn read_regular(path: &Path) -> std::io::Result<Vec<u8>> {
    use std::io::Read;
    use std::os::unix::fs::OpenOptionsExt;
    let file = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NONBLOCK)
        .open(path)?;
    if !file.metadata()?.is_file() {
        return Err(std::io::Error::other("not a regular file"));
    }
    let mut bytes = Vec::new();
    file.take(MAX_NAMED + 1).read_to_end(&mut bytes)?;
    if bytes.len() as u64 > MAX_NAMED {
        return Err(std::io::Error::other(
            "grew past the size a hook's file may be",
        ));
    }
    Ok(bytes)
}

/// The allowance key of `hooks` with the files they name as `named` read them.
fn key_of(hooks: &Json, named: &[HookFiles]) -> String {
    let mut text = canon::to_canonical_compact(hooks);
    for (phase, i, files) in named {
        let label = format!("{phase}.{i}");
        for n in files {
            let digest = n
                .bytes
                .as_deref()
                .map(canon::sha256_hex)
                .unwrap_or_default();
            text.push_str(&format!(
                "\n{label}:{}\0{}\0{digest}",
                n.index,
                n.real.display()
            ));
        }
    }
    format!("sha256:{}", canon::sha256_hex(text.as_bytes()))
}

/// A hook, by its phase and place in the phase's list, with what it names.
type HookFiles = (String, usize, Vec<Named>);

/// Every hook of `hooks` with what it names.
fn all_named(root: &Path, hooks: &Json) -> Result<Vec<HookFiles>, String> {
    let mut out = Vec::new();
    for (phase, list) in hooks.as_object().into_iter().flatten() {
        for (i, hook) in list.as_array().into_iter().flatten().enumerate() {
            out.push((phase.clone(), i, named(root, hook)?));
        }
    }
    Ok(out)
}

/// What an allowance allows: these exact hooks (their canonical JSON), and the bytes of every
/// file a hook runs or names (`sh scripts/lint.sh`: an agent that rewrites the script changes
/// what is allowed; the program a `PATH` into the project finds), as one SHA-256 digest. A hook
/// whose file cannot be pinned keys as nothing any allowance holds.
pub fn hooks_key(root: &Path, hooks: &Json) -> String {
    match all_named(root, hooks) {
        Ok(named) => key_of(hooks, &named),
        Err(why) => format!("unpinnable: {why}"),
    }
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

/// `hooks` as they will run: every file a hook runs or names read once, checked against the
/// person's allowance, and copied into `dir` (outside the project); each command part that
/// named one names its copy. What runs is what was allowed, whatever the project's files
/// become while the hooks run. Err: the files are not the allowed ones (any more).
fn pinned(root: &Path, hooks: &Json, dir: &Path, allowance: Option<&Json>) -> Result<Json, String> {
    use std::os::unix::fs::PermissionsExt;
    let named = all_named(root, hooks)?;
    let allowed = allowance.is_some_and(|l| l["hooks_key"] == key_of(hooks, &named).as_str());
    if !allowed {
        return Err(format!(
            "a file the hooks run changed since {} was checked against the allowance: nothing was run",
            super::store::CONFIG
        ));
    }
    let mut out = hooks.clone();
    for (phase, i, files) in &named {
        let (phase, i) = (phase.as_str(), *i);
        for n in files {
            let Some(bytes) = &n.bytes else {
                continue;
            };
            let name = n
                .real
                .file_name()
                .map(|f| f.to_string_lossy().into_owned())
                .unwrap_or_default();
            let copy = dir.join(format!("{phase}-{i}-{}-{name}", n.index));
            std::fs::write(&copy, bytes).map_err(|e| e.to_string())?;
            if n.executable {
                let _ = std::fs::set_permissions(&copy, std::fs::Permissions::from_mode(0o700));
            }
            out[phase][i]["command"][n.index] = json!(copy.display().to_string());
        }
    }
    Ok(out)
}

/// The person's newest allowance line for the project at `root` on this machine. Err: the
/// allow list is there but cannot be read (a link to nothing readable, not a regular file,
/// too large) — no leave to run, or to leave out, any hook.
fn newest_allowance_checked(root: &Path) -> Result<Option<Json>, String> {
    match allow_list() {
        Some(list) => allowance_in(&list, root),
        None => Ok(None),
    }
}

/// [`newest_allowance_checked`] in the allow list `list`.
fn allowance_in(list: &Path, root: &Path) -> Result<Option<Json>, String> {
    // Followed through a link (a dotfiles setup), read as a regular file only.
    let text = match read_regular(list) {
        Ok(t) => t,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(format!("{}: {e}", list.display())),
    };
    let project = project_key(root);
    Ok(String::from_utf8_lossy(&text)
        .lines()
        .rev()
        .filter_map(|l| serde_json::from_str::<Json>(l).ok())
        .find(|l| l["project_key"] == project.as_str()))
}

/// [`newest_allowance_checked`], an unreadable list read as no allowance (for `hooks`' own
/// listing; the governed commands refuse on it).
fn newest_allowance(root: &Path) -> Option<Json> {
    newest_allowance_checked(root).ok().flatten()
}

/// Whether `hooks` need no new allowance for the project at `root`: the person never allowed
/// any for it, or the newest allowance is for these.
pub fn nothing_to_allow(root: &Path, hooks: &Json) -> bool {
    newest_allowance(root).is_none_or(|l| l["hooks_key"] == hooks_key(root, hooks).as_str())
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
    // The hooks run private copies of the files they name, read and checked once, here.
    let dir = tempfile::Builder::new()
        .prefix("agentxchain-hooks-")
        .tempdir();
    let pinned = match &dir {
        Ok(d) => pinned(
            store.root(),
            hooks,
            d.path(),
            newest_allowance(store.root()).as_ref(),
        ),
        Err(e) => Err(format!("no private directory for the hooks' files: {e}")),
    };
    Some(match pinned {
        Ok(p) => hooks::run_hooks(store.root(), &p, phase, payload, &ctx),
        Err(why) => HookRun::halted(&hooks[phase], &why),
    })
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
    let role = halt
        .turn_id
        .and_then(|t| next["active_turns"][t]["assigned_role"].as_str())
        .map(str::to_owned);
    let escalation = escalate::raise_unless_open(store, &next, halt.turn_id, role.as_deref())?;
    Ok(Halted {
        phase: halt.phase,
        hook,
        error,
        turn_id: halt.turn_id.map(str::to_owned),
        role,
        state: next,
        escalation,
    })
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
fn block_dispatch(
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
    let recovery = json!({
        "typed_reason": if tamper { "hook_tamper" } else { "hook_block" },
        "owner": "human",
        "recovery_action": format!("Fix or reconfigure the hook, then rerun {command}"),
        "turn_retained": true,
        "detail": error,
    });
    let blocked = super::lifecycle::mark_blocked(
        store,
        state.clone(),
        Some(turn_id),
        &format!("hook:after_dispatch:{hook}"),
        "dispatch_error",
        recovery,
    )?;
    let role = blocked.state["active_turns"][turn_id]["assigned_role"]
        .as_str()
        .map(str::to_owned);
    Ok(Halted {
        phase: "after_dispatch",
        hook,
        error,
        turn_id: Some(turn_id.to_owned()),
        role,
        state: blocked.state,
        escalation: blocked.escalation,
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
        turn_id: None,
        role: Some(role.to_owned()),
        state: state.clone(),
        escalation: None,
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

    fn project() -> (tempfile::TempDir, PathBuf) {
        let d = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(d.path().join("p")).unwrap();
        let root = d.path().join("p").canonicalize().unwrap();
        (d, root)
    }

    fn exe(path: &Path, text: &str) {
        use std::os::unix::fs::PermissionsExt;
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, text).unwrap();
        std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o755)).unwrap();
    }

    #[test]
    fn inside_is_judged_by_name_with_dotdot_taken_away() {
        let root = Path::new("/p/root");
        assert!(lexically_inside(root, Path::new("a/b")));
        assert!(lexically_inside(root, Path::new("a/../b")));
        assert!(lexically_inside(root, Path::new("./a")));
        assert!(lexically_inside(root, Path::new("/p/root/x")));
        assert!(!lexically_inside(root, Path::new("../x")));
        assert!(!lexically_inside(root, Path::new("a/../../x")));
        assert!(!lexically_inside(root, Path::new("/etc/passwd")));
    }

    #[test]
    fn a_hook_names_the_files_it_runs_through_the_project_and_nothing_else() {
        let (d, root) = project();
        exe(&root.join("scripts/gate.sh"), "echo gate");
        exe(&root.join(".tools/lint"), "echo lint");
        std::fs::create_dir_all(root.join("pkg")).unwrap();
        let outside = d.path().join("outside.sh");
        exe(&outside, "echo outside");
        std::os::unix::fs::symlink(&outside, root.join("linked.sh")).unwrap();
        let hook = json!({"command": ["sh", "scripts/gate.sh", "-x", "pkg", "missing", "linked.sh",
            outside.display().to_string()]});
        let n = named(&root, &hook).unwrap();
        let got: Vec<(usize, bool)> = n.iter().map(|n| (n.index, n.bytes.is_some())).collect();
        // `sh` (a system program, by where it is), the script (bytes), the link in the
        // project to outside (bytes), the absolute outside path (by where it is).
        assert_eq!(got, [(0, false), (1, true), (5, true), (6, false)]);
        assert_eq!(n[1].bytes.as_deref(), Some(&b"echo gate"[..]));
        assert!(n[1].executable);
        // A PATH into the project: the program found there is read.
        let hook = json!({"command": ["lint"], "env": {"PATH": ".tools:/usr/bin:/bin"}});
        let n = named(&root, &hook).unwrap();
        assert_eq!(n.len(), 1);
        assert_eq!(n[0].bytes.as_deref(), Some(&b"echo lint"[..]));
    }

    #[test]
    fn the_key_changes_with_the_hooks_and_with_the_files_they_run() {
        let (_d, root) = project();
        exe(&root.join("scripts/gate.sh"), "echo one");
        let hooks = json!({"before_gate": [{"name": "g", "command": ["sh", "scripts/gate.sh"]}]});
        let first = hooks_key(&root, &hooks);
        assert!(first.starts_with("sha256:"));
        assert_eq!(
            first,
            hooks_key(&root, &hooks),
            "the same hooks, the same key"
        );
        exe(&root.join("scripts/gate.sh"), "echo two");
        let second = hooks_key(&root, &hooks);
        assert_ne!(first, second, "a rewritten script");
        let other =
            json!({"before_gate": [{"name": "g", "command": ["sh", "scripts/gate.sh", "-v"]}]});
        assert_ne!(second, hooks_key(&root, &other), "another command");
    }

    #[test]
    fn pinning_copies_the_allowed_bytes_and_refuses_changed_ones() {
        let (d, root) = project();
        exe(&root.join("scripts/gate.sh"), "echo one");
        let hooks = json!({"before_gate": [{"name": "g", "command": ["sh", "scripts/gate.sh"]}]});
        let allowance = json!({"hooks_key": hooks_key(&root, &hooks)});
        let dir = d.path().join("pins");
        std::fs::create_dir_all(&dir).unwrap();
        let p = pinned(&root, &hooks, &dir, Some(&allowance)).unwrap();
        let copy = PathBuf::from(p["before_gate"][0]["command"][1].as_str().unwrap());
        assert!(copy.starts_with(&dir));
        assert_eq!(std::fs::read_to_string(&copy).unwrap(), "echo one");
        assert_eq!(
            p["before_gate"][0]["command"][0], "sh",
            "a system program is left by name"
        );
        exe(&root.join("scripts/gate.sh"), "echo two");
        assert!(pinned(&root, &hooks, &dir, Some(&allowance)).is_err());
        assert!(pinned(&root, &hooks, &dir, None).is_err());
    }

    #[test]
    fn only_the_newest_allowance_of_the_project_counts_and_an_unreadable_list_is_an_error() {
        let (d, root) = project();
        let list = d.path().join("allowed-hooks.jsonl");
        assert_eq!(
            allowance_in(&list, &root),
            Ok(None),
            "no list, no allowance"
        );
        let me = project_key(&root);
        std::fs::write(
            &list,
            format!(
                "{}\n{}\nnot json\n{}\n",
                json!({"project_key": me, "hooks_key": "old"}),
                json!({"project_key": me, "hooks_key": "new"}),
                json!({"project_key": "sha256:other", "hooks_key": "x"})
            ),
        )
        .unwrap();
        assert_eq!(
            allowance_in(&list, &root).unwrap().unwrap()["hooks_key"],
            "new"
        );
        std::fs::remove_file(&list).unwrap();
        std::fs::create_dir(&list).unwrap();
        assert!(
            allowance_in(&list, &root).is_err(),
            "a directory is no list"
        );
    }

    #[test]
    fn the_hooks_run_only_as_allowed_and_allowed_ones_are_never_left_out() {
        let (_d, root) = project();
        let template = super::super::scaffold::template("generic").unwrap();
        super::super::scaffold::governed(
            &root,
            &template,
            "demo",
            None,
            &super::super::scaffold::DevRuntime::default(),
            true,
        )
        .unwrap();
        let store = Store::new(&root);
        let set = |hooks: Json| {
            let mut c: Json = serde_json::from_str(
                &std::fs::read_to_string(root.join("agentxchain.json")).unwrap(),
            )
            .unwrap();
            c["hooks"] = hooks;
            std::fs::write(root.join("agentxchain.json"), c.to_string()).unwrap();
            cfg::load(&store).unwrap()
        };
        let gate = json!({"before_gate": [{"name": "g", "type": "process", "command": ["true"],
            "timeout_ms": 1000, "mode": "blocking"}]});
        let config = set(gate.clone());
        let key = hooks_key(&root, &gate);
        let refused = |r: Result<&Json, Refusal>| r.unwrap_err().message;
        // Allowed exactly: run.
        let ok = trusted_by(
            &store,
            &config,
            Ok(Some(json!({"hooks_key": key, "any": true}))),
        );
        assert_eq!(ok.unwrap(), &gate);
        // Never allowed, or allowed other hooks: refused.
        assert!(refused(trusted_by(&store, &config, Ok(None))).contains("not the ones allowed"));
        assert!(
            refused(trusted_by(
                &store,
                &config,
                Ok(Some(json!({"hooks_key": "x", "any": true})))
            ))
            .contains("not the ones allowed")
        );
        // An allow list that cannot be read: refused.
        assert!(
            refused(trusted_by(&store, &config, Err("a directory".into())))
                .contains("cannot be read")
        );
        // The config changed on disk since it was loaded: refused.
        let other = set(json!({}));
        assert!(
            refused(trusted_by(
                &store,
                &config,
                Ok(Some(json!({"hooks_key": key})))
            ))
            .contains("changed while this command ran")
        );
        // Allowed hooks gone: refused; no hooks and nothing allowed, or an allowance of none: run.
        let gone = trusted_by(
            &store,
            &other,
            Ok(Some(json!({"hooks_key": key, "any": true}))),
        );
        assert!(refused(gone).contains("are gone from"));
        assert!(trusted_by(&store, &other, Ok(None)).is_ok());
        let none = json!({"hooks_key": hooks_key(&root, &json!({})), "any": false});
        assert!(trusted_by(&store, &other, Ok(Some(none))).is_ok());
        assert!(!any_hooks(&json!({"before_gate": []})));
        assert!(any_hooks(&gate));
    }

    #[test]
    fn options_and_modes_are_read_as_they_are_and_a_file_up_to_the_limit_is_pinned() {
        let (d, root) = project();
        // A file named like an option is an option to the program, not a file it runs.
        std::fs::write(root.join("-x"), "not run").unwrap();
        std::fs::write(root.join("plain.txt"), "data").unwrap();
        let n = named(&root, &json!({"command": ["sh", "-x", "plain.txt"]})).unwrap();
        let at: Vec<usize> = n.iter().map(|n| n.index).collect();
        assert_eq!(at, [0, 2]);
        assert!(!n[1].executable, "a file without an execute bit");
        // Exactly the limit is read; one byte more cannot be allowed.
        let big = root.join("big.bin");
        let f = std::fs::File::create(&big).unwrap();
        f.set_len(MAX_NAMED).unwrap();
        let whole = named(&root, &json!({"command": ["cat", "big.bin"]})).unwrap();
        assert_eq!(
            whole[1].bytes.as_ref().map(Vec::len),
            Some(MAX_NAMED as usize),
            "read whole, not short"
        );
        f.set_len(MAX_NAMED + 1).unwrap();
        assert!(named(&root, &json!({"command": ["cat", "big.bin"]})).is_err());
        drop(d);
    }

    #[test]
    fn a_file_read_past_the_limit_is_refused_whatever_its_size_said() {
        // A file that grew after its size was checked: read_regular itself refuses it (a
        // sparse file: no disk is used).
        let (d, root) = project();
        let big = root.join("grown.bin");
        let f = std::fs::File::create(&big).unwrap();
        f.set_len(MAX_NAMED + 1).unwrap();
        assert!(read_regular(&big).is_err());
        f.set_len(MAX_NAMED).unwrap();
        assert_eq!(read_regular(&big).unwrap().len() as u64, MAX_NAMED);
        drop(d);
    }

    #[test]
    fn a_program_is_found_on_the_path_only_where_it_may_run() {
        use std::os::unix::fs::PermissionsExt;
        let (d, root) = project();
        for (dir, mode) in [("a", 0o644), ("b", 0o755)] {
            std::fs::create_dir_all(root.join(dir)).unwrap();
            let prog = root.join(dir).join("tool");
            std::fs::write(&prog, "#!/bin/sh\n").unwrap();
            std::fs::set_permissions(&prog, std::fs::Permissions::from_mode(mode)).unwrap();
        }
        // A directory by the name comes before them: not a program either.
        std::fs::create_dir_all(root.join("c/tool")).unwrap();
        let path = json!(format!(
            "{}:{}:{}",
            root.join("c").display(),
            root.join("a").display(),
            root.join("b").display()
        ));
        assert_eq!(
            on_path(&root, "tool", &path),
            Some(root.join("b").join("tool"))
        );
        assert_eq!(on_path(&root, "absent", &path), None);
        drop(d);
    }

    #[test]
    fn each_project_has_its_own_allowances() {
        let (d, root) = project();
        std::fs::create_dir_all(d.path().join("q")).unwrap();
        let other = d.path().join("q").canonicalize().unwrap();
        assert_ne!(project_key(&root), project_key(&other));
        // The same project reached through a link is the same project.
        std::os::unix::fs::symlink(&root, d.path().join("link")).unwrap();
        assert_eq!(project_key(&root), project_key(&d.path().join("link")));
        assert!(project_key(&root).starts_with("sha256:"));
    }

    #[test]
    fn a_halted_phase_names_its_first_hook_and_why() {
        let run = HookRun::halted(&json!([{"name": "gate"}, {"name": "other"}]), "changed");
        assert!(!run.ok && run.blocked);
        assert_eq!(run.halting_hook(), "gate");
        assert_eq!(run.halt_detail("fallback"), "changed");
    }

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
