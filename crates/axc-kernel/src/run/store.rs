//! A governed project's files, read and written the one way every operation uses: JSON files
//! whole by write-then-rename, JSONL lines whole in one append, under one lock.

use std::fs::File;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use serde_json::{Value as Json, json};

use super::Refusal;

pub const CONFIG: &str = "agentxchain.json";
pub const STATE: &str = ".agentxchain/state.json";
pub const SESSION: &str = ".agentxchain/session.json";
pub const HISTORY: &str = ".agentxchain/history.jsonl";
pub const LEDGER: &str = ".agentxchain/decision-ledger.jsonl";
pub const EVENTS: &str = ".agentxchain/events.jsonl";
pub const ESCALATIONS: &str = ".agentxchain/human-escalations.jsonl";
pub const TALK: &str = "TALK.md";
pub const HUMAN_TASKS: &str = "HUMAN_TASKS.md";
/// The reference's acceptance lock (JSON `{owner_pid, acquired_at}`), honoured and written so
/// the two tools exclude each other.
pub const REFERENCE_LOCK: &str = ".agentxchain/locks/accept-turn.lock";
/// The reference treats a lock older than this as stale.
const STALE_LOCK: Duration = Duration::from_secs(30 * 60);
/// How long a command waits for another to finish before refusing.
const LOCK_WAIT: Duration = Duration::from_secs(10);
/// The largest JSON file read (state, session, config).
/// The most of a JSON file of the run (or the config) that is read.
pub const MAX_JSON: u64 = 16 << 20;
/// The largest log read whole (history, ledger, escalations); the event log is only appended.
pub const MAX_LOG: u64 = 256 << 20;

/// Opens `path` to append, never through a link at the last component.
fn open_append(path: &Path) -> std::io::Result<File> {
    use std::os::unix::fs::{MetadataExt, OpenOptionsExt};
    // Read too: whether it ends with a newline is read through this descriptor.
    let file = File::options()
        .read(true)
        .create(true)
        .append(true)
        .custom_flags(libc::O_NOFOLLOW | libc::O_NONBLOCK)
        .open(path)?;
    let meta = file.metadata()?;
    // A hard link shares its inode with a file that may be anywhere: appending would change
    // that file too. And only a regular file is appended to (not a FIFO or a device).
    if !meta.is_file() || meta.nlink() > 1 {
        return Err(std::io::Error::other(format!(
            "{} is not a regular file of its own (a device, a FIFO or a hard link); nothing was appended",
            path.display()
        )));
    }
    Ok(file)
}

/// Whether `rel` is a plain relative path: not empty, no root, no `..`.
fn plain(rel: &str) -> bool {
    !rel.is_empty()
        && Path::new(rel).components().all(|c| {
            matches!(
                c,
                std::path::Component::Normal(_) | std::path::Component::CurDir
            )
        })
}

/// Why [`Store::read_bytes`] read nothing ([`Store::refusal`] words it).
enum Unread {
    NotPlain,
    HardLinked,
    Fs(fsread::ReadError),
}

/// One project root. Every path is resolved through the project's walls (`confine`): a
/// symlink anywhere on the way that leads outside the project is refused, for reads, appends,
/// writes and removals alike.
#[derive(Clone, Debug)]
pub struct Store {
    root: PathBuf,
    walls: confine::Walls,
}

/// Held while an operation runs; dropping it releases both locks.
pub struct Lock {
    _os: File,
    reference: PathBuf,
}

impl Drop for Lock {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.reference);
    }
}

fn pid_alive(pid: i64) -> bool {
    if pid <= 0 || pid > i64::from(i32::MAX) {
        return false;
    }
    // SAFETY: kill with signal 0 only checks whether the process exists.
    let r = unsafe { libc::kill(pid as libc::pid_t, 0) };
    r == 0 || std::io::Error::last_os_error().raw_os_error() == Some(libc::EPERM)
}

impl Store {
    pub fn new(root: impl Into<PathBuf>) -> Store {
        let root = root.into();
        let walls =
            confine::Walls::new(&root).unwrap_or_else(|_| confine::Walls::resolved(root.clone()));
        Store { root, walls }
    }

    pub fn root(&self) -> &Path {
        &self.root
    }

    /// `root/rel`, refused when it is not a relative path or leads outside the project.
    pub fn path(&self, rel: &str) -> Result<PathBuf, Refusal> {
        if !plain(rel) {
            return Err(Refusal::new(format!(
                "{rel} is not a path inside the project; nothing was written"
            )));
        }
        self.walls.resolve(rel, rel).map_err(|e| {
            Refusal::new(format!(
                "{e}; agentxchain does not follow links out of the project"
            ))
        })
    }

    /// Reads the text file at `rel` (`Ok(None)` when absent), at most `max` bytes.
    pub fn read_text(&self, rel: &str, max: u64) -> Result<Option<String>, Refusal> {
        self.read_bytes(rel, max)
            .map(|b| b.map(|b| String::from_utf8_lossy(&b).into_owned()))
            .map_err(|e| self.refusal(rel, e))
    }

    /// The bytes of the file at `rel` (`Ok(None)` when absent), at most `max`. The file is
    /// opened first and then judged where it really is (`fsread`): a link anywhere on the way
    /// that leads out of the project is refused, as a file hard-linked to another is; nothing
    /// is resolved before the open (that costs a `readlink` per component, for every read).
    /// Absent means nothing is there to read by that name, wherever a link on the way leads;
    /// a dangling link at `rel` itself is refused as [`Store::path`] refuses it.
    fn read_bytes(&self, rel: &str, max: u64) -> Result<Option<Vec<u8>>, Unread> {
        if !plain(rel) {
            return Err(Unread::NotPlain);
        }
        let path = self.root.join(rel);
        match fsread::open_inside(&self.root, Path::new(rel)) {
            Ok((file, meta)) => fsread::read_open(file, &meta, &path, max)
                .map(Some)
                .map_err(Unread::Fs),
            // A hard link shares its content with a file that may be outside the project.
            Err(fsread::ReadError::HardLinked { .. }) => Err(Unread::HardLinked),
            Err(e) if e.is_missing() && std::fs::symlink_metadata(&path).is_err() => Ok(None),
            Err(e) => Err(Unread::Fs(e)),
        }
    }

    /// The refusal for a read of `rel` that failed with `e`: the walls' own words when `rel`
    /// is not a plain path or leads out of the project.
    fn refusal(&self, rel: &str, e: Unread) -> Refusal {
        if let Err(walls) = self.path(rel) {
            return walls;
        }
        match e {
            Unread::HardLinked => Refusal::new(format!(
                "{rel} is hard-linked to another file; agentxchain reads only files of its own"
            )),
            Unread::Fs(e) => Refusal::new(format!("Cannot read {rel}: {e}")),
            // `path` refuses what is not plain: never reached.
            Unread::NotPlain => Refusal::new(format!(
                "{rel} is not a path inside the project; nothing was read"
            )),
        }
    }

    /// What is at `rel` inside the project, its links followed (`None`: nothing there, not a
    /// plain relative path, or a link that leads out), located without reading it.
    pub fn locate(&self, rel: &str) -> Option<std::fs::Metadata> {
        if !plain(rel) {
            return None;
        }
        fsread::locate_inside(&self.root, Path::new(rel)).ok()
    }

    /// Whether something is at `rel` inside the project ([`Store::locate`]).
    pub fn exists(&self, rel: &str) -> bool {
        self.locate(rel).is_some()
    }

    /// Whether a directory is at `rel` inside the project ([`Store::locate`]).
    pub fn is_dir(&self, rel: &str) -> bool {
        self.locate(rel).is_some_and(|m| m.is_dir())
    }

    /// Whether a regular file is at `rel` inside the project ([`Store::locate`]).
    pub fn is_file(&self, rel: &str) -> bool {
        self.locate(rel).is_some_and(|m| m.is_file())
    }

    /// `rel`'s directory resolved through the walls, joined with its last component as it is:
    /// the path names the entry itself, a link there included, never what a link leads to.
    fn entry_path(&self, rel: &str) -> Option<PathBuf> {
        let p = Path::new(rel);
        let name = p.file_name()?;
        let parent = p.parent().map(|d| d.to_string_lossy().into_owned());
        let dir = match parent.as_deref() {
            None | Some("") => self.root.clone(),
            Some(d) => self.path(d).ok()?,
        };
        // The whole path must be a plain one inside the project too.
        self.path(rel).ok()?;
        Some(dir.join(name))
    }

    /// Removes the directory tree at `rel` (a link there is removed, never followed).
    pub fn remove_tree(&self, rel: &str) {
        self.remove_entry(rel);
    }

    /// Removes the file at `rel` (a link there is removed, never followed).
    pub fn remove_file(&self, rel: &str) {
        self.remove_entry(rel);
    }

    fn remove_entry(&self, rel: &str) {
        let Some(p) = self.entry_path(rel) else {
            return;
        };
        match std::fs::symlink_metadata(&p) {
            Ok(m) if m.is_dir() => {
                let _ = std::fs::remove_dir_all(&p);
            }
            Ok(_) => {
                let _ = std::fs::remove_file(&p);
            }
            Err(_) => {}
        }
    }

    /// Whether the file at `rel` ends with `text` (only that many bytes are read).
    pub fn ends_with(&self, rel: &str, text: &str) -> bool {
        use std::io::{Read, Seek, SeekFrom};
        let Ok(path) = self.path(rel) else {
            return false;
        };
        let Ok((mut f, _)) = fsread::open_regular(&path) else {
            return false;
        };
        let n = text.len() as u64;
        if f.metadata().map(|m| m.len()).unwrap_or(0) < n
            || f.seek(SeekFrom::End(-(n as i64))).is_err()
        {
            return false;
        }
        let mut buf = Vec::with_capacity(text.len());
        f.take(n).read_to_end(&mut buf).is_ok() && buf == text.as_bytes()
    }

    /// Appends `text` to the file at `rel` in one write.
    pub fn append_text(&self, rel: &str, text: &str) -> Result<(), Refusal> {
        let path = self.path(rel)?;
        if let Some(dir) = path.parent() {
            std::fs::create_dir_all(dir)?;
        }
        let mut file = open_append(&path)?;
        file.write_all(text.as_bytes())
            .map_err(|e| Refusal::new(format!("Cannot append to {rel}: {e}")))
    }

    /// Takes the project's lock: waits for another of our commands, refuses when a reference
    /// process holds its acceptance lock (`Acceptance lock held by PID <n>`).
    pub fn lock(&self) -> Result<Lock, Refusal> {
        // An OS lock on the `.agentxchain` directory itself: no file of its own to linger in
        // `git status`, and released by the kernel when the holder dies (kill -9 included).
        let dir = self.path(".agentxchain")?;
        std::fs::create_dir_all(&dir)?;
        let file = File::open(&dir)?;
        let start = Instant::now();
        loop {
            match file.try_lock() {
                Ok(()) => break,
                Err(std::fs::TryLockError::WouldBlock) if start.elapsed() < LOCK_WAIT => {
                    std::thread::sleep(Duration::from_millis(20));
                }
                Err(std::fs::TryLockError::WouldBlock) => {
                    return Err(Refusal::new(
                        "Another agentxchain command is changing this run; try again when it has finished.",
                    ));
                }
                Err(std::fs::TryLockError::Error(e)) => return Err(e.into()),
            }
        }
        let reference = self.path(REFERENCE_LOCK)?;
        // Read as a regular file only, never waiting (a FIFO there would hang every command).
        if let Ok(bytes) = fsread::read_inside(&self.root, Path::new(REFERENCE_LOCK), 1 << 16)
            && let Ok(held) = serde_json::from_slice::<Json>(&bytes)
        {
            let pid = held["owner_pid"].as_i64().unwrap_or(0);
            let fresh = held["acquired_at"]
                .as_str()
                .and_then(|t| humantime::parse_rfc3339_weak(t).ok())
                .and_then(|t| t.elapsed().ok())
                .is_some_and(|age| age < STALE_LOCK);
            if pid != i64::from(std::process::id()) && pid_alive(pid) && fresh {
                return Err(Refusal::new(format!("Acceptance lock held by PID {pid}")));
            }
        }
        let body = json!({"owner_pid": std::process::id(), "acquired_at": super::now()});
        self.write_derived_json(REFERENCE_LOCK, &body)?;
        Ok(Lock {
            _os: file,
            reference,
        })
    }

    /// The run's state (refused when there is none, or when a turn id in it is not a plain
    /// id).
    pub fn state(&self) -> Result<Json, Refusal> {
        let state = self.read_json(STATE)?.ok_or_else(|| {
            Refusal::new("No governed state.json found. Run `agentxchain init --governed` first.")
        })?;
        // Turn ids name directories (bundles, staging): one that is not a plain id is refused
        // before anything is written or removed.
        for (key, turn) in state["active_turns"].as_object().into_iter().flatten() {
            let id = turn["turn_id"].as_str().unwrap_or(key);
            if !axc_core::util::is_plain_id(key) || !axc_core::util::is_plain_id(id) || id != key {
                return Err(Refusal::new(format!(
                    "{STATE} names an active turn {key:?} that is not a plain turn id; nothing was done (restore the file from the last good state)"
                )));
            }
        }
        Ok(state)
    }

    /// The JSON file at `rel`: `Ok(None)` when absent; an error naming the file when it is
    /// not JSON or too large.
    pub fn read_json(&self, rel: &str) -> Result<Option<Json>, Refusal> {
        let Some(bytes) = self.json_bytes(rel)? else {
            return Ok(None);
        };
        parse_json(rel, &String::from_utf8_lossy(&bytes)).map(Some)
    }

    /// [`Store::read_json`], with the text it parsed (for a file compared by its bytes later,
    /// as the config a turn is judged by is).
    pub fn read_json_text(&self, rel: &str) -> Result<Option<(Json, String)>, Refusal> {
        let Some(bytes) = self.json_bytes(rel)? else {
            return Ok(None);
        };
        let text = String::from_utf8_lossy(&bytes).into_owned();
        Ok(Some((parse_json(rel, &text)?, text)))
    }

    fn json_bytes(&self, rel: &str) -> Result<Option<Vec<u8>>, Refusal> {
        match self.read_bytes(rel, MAX_JSON) {
            Ok(b) => Ok(b),
            Err(Unread::Fs(fsread::ReadError::TooLarge { len, .. })) if self.path(rel).is_ok() => {
                Err(Refusal::new(format!(
                    "{rel} is {len} bytes, more than the {MAX_JSON} read"
                )))
            }
            Err(e) => Err(self.refusal(rel, e)),
        }
    }

    /// Writes `value` at `rel` as the reference does (two-space JSON and a newline), whole.
    pub fn write_json(&self, rel: &str, value: &Json) -> Result<(), Refusal> {
        let text = serde_json::to_string_pretty(value).map_err(std::io::Error::other)? + "\n";
        self.write_text(rel, &text)
    }

    pub fn write_text(&self, rel: &str, text: &str) -> Result<(), Refusal> {
        let path = self.write_path(rel)?;
        // A file at the project's root (agentxchain.json, TALK.md) is staged in the run's
        // transactions directory: a writer killed mid-write leaves its temporary file there
        // (operational, never the user's work in a turn's baseline), not beside the user's files.
        let written = if Path::new(rel)
            .parent()
            .is_none_or(|d| d.as_os_str().is_empty())
        {
            let staging = self.path(".agentxchain/transactions")?;
            fswrite::write_atomic_staged(&path, text.as_bytes(), &staging)
        } else {
            fswrite::write_atomic(&path, text.as_bytes())
        };
        written.map_err(|e| Refusal::new(format!("Cannot write {rel}: {e}")))
    }

    /// Where a write of `rel` lands: its directory through the walls, then its own name — a
    /// link at the name is replaced by the write, never followed (a link an agent plants at
    /// `session.json` or `.planning/x.md` pointing at `agentxchain.json` stays a link's
    /// problem, not the config's).
    fn write_path(&self, rel: &str) -> Result<PathBuf, Refusal> {
        self.path(rel)?;
        let p = Path::new(rel);
        let name = p
            .file_name()
            .ok_or_else(|| Refusal::new(format!("{rel} names no file; nothing was written")))?;
        let dir = match p.parent().filter(|d| !d.as_os_str().is_empty()) {
            Some(d) => self.path(&d.to_string_lossy())?,
            None => self.walls.root().to_path_buf(),
        };
        Ok(dir.join(name))
    }

    /// Writes a file that is made again from the others (dispatch bundles and index, the
    /// session checkpoint, the lock): whole for readers, without waiting for the disk.
    pub fn write_derived(&self, rel: &str, text: &str) -> Result<(), Refusal> {
        fswrite::write_replace(&self.write_path(rel)?, text.as_bytes())
            .map_err(|e| Refusal::new(format!("Cannot write {rel}: {e}")))
    }

    /// [`Store::write_derived`] of a JSON value.
    pub fn write_derived_json(&self, rel: &str, value: &Json) -> Result<(), Refusal> {
        let text = serde_json::to_string_pretty(value).map_err(std::io::Error::other)? + "\n";
        self.write_derived(rel, &text)
    }

    /// Appends `entry` as one line in one write (a line left unterminated by a crash is ended
    /// first, so the new line stays whole).
    pub fn append_jsonl(&self, rel: &str, entry: &Json) -> Result<(), Refusal> {
        let path = self.path(rel)?;
        if let Some(dir) = path.parent() {
            std::fs::create_dir_all(dir)?;
        }
        let mut file = open_append(&path)?;
        let len = file.metadata()?.len();
        let ends_open = len > 0 && !ends_with_newline(&file, len);
        let mut line = String::new();
        if ends_open {
            line.push('\n');
        }
        line.push_str(&serde_json::to_string(entry).map_err(std::io::Error::other)?);
        line.push('\n');
        file.write_all(line.as_bytes())
            .map_err(|e| Refusal::new(format!("Cannot append to {rel}: {e}")))
    }

    /// Every JSON line of `rel` (lines that are not JSON are skipped, as readers do).
    pub fn read_jsonl(&self, rel: &str) -> Vec<Json> {
        self.read_text(rel, MAX_LOG)
            .ok()
            .flatten()
            .unwrap_or_default()
            .lines()
            .filter(|l| !l.trim().is_empty())
            .filter_map(|l| serde_json::from_str(l).ok())
            .collect()
    }

    /// How many entries `rel` holds as the reference counts them (each non-blank line its
    /// `JSON.parse` takes), without building them — several times faster on a long history
    /// than [`Store::read_jsonl`]. It may count a few lines that one drops: a number out of
    /// range, a lone surrogate escape, nesting past 128 levels (`JSON.parse` takes them).
    pub fn count_jsonl(&self, rel: &str) -> usize {
        let bytes = self
            .read_bytes(rel, MAX_LOG)
            .ok()
            .flatten()
            .unwrap_or_default();
        let json = |l: &[u8]| serde_json::from_slice::<serde::de::IgnoredAny>(l).is_ok();
        bytes
            .split(|&b| b == b'\n')
            .filter(|l| !l.trim_ascii().is_empty())
            .filter(|l| {
                // Bytes that are not UTF-8 read as U+FFFD, as `read_jsonl` (and the
                // reference's text read) takes them: only such a line is converted.
                json(l)
                    || (std::str::from_utf8(l).is_err()
                        && json(String::from_utf8_lossy(l).as_bytes()))
            })
            .count()
    }

    /// The last JSON line of `rel` (read from the end: the cost does not grow with the file).
    pub fn last_jsonl(&self, rel: &str) -> Option<Json> {
        axc_core::jsonl::read_last(&self.root, rel, 1)
            .ok()
            .and_then(|t| t.entries.into_iter().last())
    }

    /// Appends one run event (`events.jsonl`) that serves no intake intent.
    pub fn emit(
        &self,
        event_type: &str,
        state: &Json,
        turn: Json,
        payload: Json,
    ) -> Result<(), Refusal> {
        self.emit_for(event_type, state, turn, Json::Null, payload)
    }

    /// Appends one run event (`events.jsonl`); `intent_id` names the intake intent the event's
    /// turn serves (`null` when none).
    pub fn emit_for(
        &self,
        event_type: &str,
        state: &Json,
        turn: Json,
        intent_id: Json,
        mut payload: Json,
    ) -> Result<(), Refusal> {
        // As the reference's emitter: a recovery event carries its classification.
        if let Some(c) = crate::events::recovery_classification(event_type, &payload)
            && let Some(p) = payload.as_object_mut()
            && !p.contains_key("recovery_classification")
        {
            p.insert("recovery_classification".into(), c);
        }
        let event = json!({
            "event_id": super::new_id("evt"),
            "event_type": event_type,
            "timestamp": super::now(),
            "run_id": state["run_id"],
            "phase": state["phase"],
            "status": state["status"],
            "turn": turn,
            "intent_id": intent_id,
            "payload": payload,
        });
        self.append_jsonl(EVENTS, &event)
    }
}

fn parse_json(rel: &str, text: &str) -> Result<Json, Refusal> {
    serde_json::from_str(text).map_err(|e| Refusal::new(format!("{rel} is not valid JSON: {e}")))
}

/// Whether the file opened to append, `len` bytes long, ends with a newline: its last byte read
/// through the same descriptor (opening the path again could meet a FIFO swapped in since).
fn ends_with_newline(file: &File, len: u64) -> bool {
    use std::os::unix::fs::FileExt;
    let mut b = [0u8; 1];
    len == 0
        || file
            .read_exact_at(&mut b, len - 1)
            .is_ok_and(|()| b[0] == b'\n')
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_removal_removes_the_link_never_what_it_leads_to() {
        let d = tempfile::tempdir().unwrap();
        let root = d.path();
        std::fs::create_dir_all(root.join("src")).unwrap();
        std::fs::write(root.join("src/main.rs"), "keep").unwrap();
        std::fs::write(root.join("agentxchain.json"), "{}").unwrap();
        std::fs::create_dir_all(root.join(".agentxchain/staging")).unwrap();
        std::os::unix::fs::symlink("../../src", root.join(".agentxchain/staging/turn_x")).unwrap();
        std::os::unix::fs::symlink("../agentxchain.json", root.join(".agentxchain/marker.json"))
            .unwrap();
        let store = Store::new(root);
        store.remove_tree(".agentxchain/staging/turn_x");
        store.remove_file(".agentxchain/marker.json");
        assert_eq!(
            std::fs::read_to_string(root.join("src/main.rs")).unwrap(),
            "keep"
        );
        assert!(root.join("agentxchain.json").exists());
        assert!(std::fs::symlink_metadata(root.join(".agentxchain/staging/turn_x")).is_err());
        assert!(std::fs::symlink_metadata(root.join(".agentxchain/marker.json")).is_err());
        // A real directory and file go.
        std::fs::create_dir_all(root.join(".agentxchain/staging/turn_y/a")).unwrap();
        store.remove_tree(".agentxchain/staging/turn_y");
        assert!(!root.join(".agentxchain/staging/turn_y").exists());
    }

    #[test]
    fn reads_and_lookups_stay_inside_the_project_whatever_is_on_the_way() {
        use std::os::unix::fs::symlink;
        let d = tempfile::tempdir().unwrap();
        let (root, out) = (d.path().join("p"), d.path().join("out"));
        std::fs::create_dir_all(root.join(".agentxchain")).unwrap();
        std::fs::create_dir_all(&out).unwrap();
        std::fs::write(out.join("secret.json"), "{\"s\":1}").unwrap();
        std::fs::write(root.join("own.json"), "{\"o\":1}").unwrap();
        symlink(&out, root.join(".agentxchain/dir")).unwrap();
        symlink(out.join("secret.json"), root.join("file.json")).unwrap();
        symlink(out.join("gone.json"), root.join("dangling.json")).unwrap();
        std::fs::hard_link(out.join("secret.json"), root.join("hard.json")).unwrap();
        symlink("own.json", root.join("alias.json")).unwrap();
        let fifo = std::ffi::CString::new(root.join("fifo.json").to_str().unwrap()).unwrap();
        // SAFETY: mkfifo(3) reads the NUL-terminated path and touches nothing else.
        assert_eq!(unsafe { libc::mkfifo(fifo.as_ptr(), 0o644) }, 0);
        let store = Store::new(&root);
        let refused = |rel: &str| match store.read_json(rel) {
            Err(r) => r.message,
            Ok(v) => panic!("{rel} was read: {v:?}"),
        };
        for rel in [".agentxchain/dir/secret.json", "file.json", "dangling.json"] {
            assert!(
                refused(rel).contains("does not follow links out of the project"),
                "{rel}: {}",
                refused(rel)
            );
            assert!(store.read_text(rel, 1 << 20).is_err(), "{rel}");
            assert!(!store.exists(rel) && !store.is_file(rel), "{rel}");
        }
        assert!(!store.is_dir(".agentxchain/dir"));
        assert!(refused("hard.json").contains("hard-linked to another file"));
        assert!(refused("fifo.json").contains("not a regular file"));
        for rel in ["../out/secret.json", "/etc/passwd", ""] {
            assert!(
                refused(rel).contains("not a path inside the project"),
                "{rel}"
            );
            assert!(!store.exists(rel), "{rel}");
        }
        // Inside: read, through a link that stays inside too; absent is nothing.
        assert_eq!(
            store.read_json("alias.json").unwrap(),
            Some(json!({"o": 1}))
        );
        assert!(store.is_file("alias.json") && store.is_dir(".agentxchain"));
        assert_eq!(store.read_json("nope.json").unwrap(), None);
        assert!(!store.exists("nope.json"));
        // Over the cap: said with the size, nothing read.
        std::fs::write(root.join("big.txt"), "x".repeat(100)).unwrap();
        let big = store.read_text("big.txt", 10).unwrap_err().message;
        assert!(big.contains("100 bytes"), "{big}");
    }

    #[test]
    fn a_line_left_open_by_a_crash_is_ended_before_the_next() {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::new(dir.path());
        std::fs::create_dir_all(dir.path().join(".agentxchain")).unwrap();
        std::fs::write(store.path(EVENTS).unwrap(), "{\"a\":1}\n{\"torn\":").unwrap();
        store.append_jsonl(EVENTS, &json!({"b": 2})).unwrap();
        let lines = store.read_jsonl(EVENTS);
        assert_eq!(lines, vec![json!({"a": 1}), json!({"b": 2})]);
    }

    #[test]
    fn the_count_of_a_log_is_the_number_of_its_entries_read() {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::new(dir.path());
        std::fs::create_dir_all(dir.path().join(".agentxchain")).unwrap();
        std::fs::write(
            store.path(HISTORY).unwrap(),
            b"{\"a\":1}\n\n  \n[1,2]\r\n{\"torn\":\nnot json\n\"s\"\n{\"b\":{\"c\":[]}}\n{\"x\":1}{\"y\":2}\n{\"bad\":\"\xff\"}\n\xfe\n",
        )
        .unwrap();
        assert_eq!(store.read_jsonl(HISTORY).len(), 5);
        assert_eq!(store.count_jsonl(HISTORY), 5);
        assert_eq!(store.count_jsonl(EVENTS), 0, "a missing log counts none");
    }

    #[test]
    fn a_hard_link_or_a_fifo_is_never_appended_to() {
        let dir = tempfile::tempdir().unwrap();
        let outside = dir.path().join("outside.jsonl");
        std::fs::write(&outside, "{}\n").unwrap();
        let root = dir.path().join("p");
        std::fs::create_dir_all(root.join(".agentxchain")).unwrap();
        std::fs::hard_link(&outside, root.join(EVENTS)).unwrap();
        let store = Store::new(&root);
        assert!(store.append_jsonl(EVENTS, &json!({"x": 1})).is_err());
        assert_eq!(std::fs::read_to_string(&outside).unwrap(), "{}\n");
        std::fs::remove_file(root.join(EVENTS)).unwrap();
        let fifo = std::ffi::CString::new(root.join(EVENTS).to_str().unwrap()).unwrap();
        // SAFETY: mkfifo on a path we own.
        assert_eq!(unsafe { libc::mkfifo(fifo.as_ptr(), 0o600) }, 0);
        assert!(store.append_jsonl(EVENTS, &json!({"x": 1})).is_err());
    }

    #[test]
    fn a_live_reference_lock_refuses_and_a_dead_one_is_taken() {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::new(dir.path());
        let mut child = std::process::Command::new("sleep")
            .arg("5")
            .spawn()
            .unwrap();
        let held = json!({"owner_pid": child.id(), "acquired_at": crate::run::now()});
        store.write_json(REFERENCE_LOCK, &held).unwrap();
        let refused = store.lock().err().unwrap();
        assert_eq!(
            refused.message,
            format!("Acceptance lock held by PID {}", child.id())
        );
        child.kill().unwrap();
        child.wait().unwrap();
        let lock = store.lock().unwrap();
        let mine = store.read_json(REFERENCE_LOCK).unwrap().unwrap();
        assert_eq!(mine["owner_pid"], json!(std::process::id()));
        drop(lock);
        assert!(!store.path(REFERENCE_LOCK).unwrap().exists());
    }

    #[test]
    fn a_second_holder_waits_for_the_first() {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::new(dir.path());
        let lock = store.lock().unwrap();
        let s2 = store.clone();
        let t = std::thread::spawn(move || {
            let start = Instant::now();
            let _l = s2.lock().unwrap();
            start.elapsed()
        });
        std::thread::sleep(Duration::from_millis(300));
        drop(lock);
        assert!(t.join().unwrap() >= Duration::from_millis(250));
    }
}
