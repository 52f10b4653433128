//! Shared helpers for the agentxchain black-box tests.
#![allow(dead_code)]

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use mcp_testkit::ServerProcess;
use sha2::{Digest, Sha256};

pub mod project;

pub const BIN: &str = env!("CARGO_BIN_EXE_agentxchain");

/// `../shared/fixtures/agentxchain`, read in place.
pub fn fixtures() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../../shared/fixtures/agentxchain")
}

pub fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for entry in std::fs::read_dir(from).unwrap() {
        let entry = entry.unwrap();
        let target = to.join(entry.file_name());
        if entry.file_type().unwrap().is_dir() {
            copy_dir(&entry.path(), &target);
        } else {
            std::fs::copy(entry.path(), &target).unwrap();
            let mut perms = std::fs::metadata(&target).unwrap().permissions();
            #[allow(clippy::permissions_set_readonly_false)]
            perms.set_readonly(false);
            std::fs::set_permissions(&target, perms).unwrap();
        }
    }
}

/// A writable copy of fixture `name`'s project in a fresh temporary directory.
pub fn project_copy(name: &str) -> (tempfile::TempDir, PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("project");
    copy_dir(&fixtures().join(name).join("project"), &root);
    (dir, root)
}

/// Every file under `root` with the sha256 of its bytes.
/// Every file's content digest with its inode and modification and change times, and every
/// directory's times: a read that rewrites a file with the same bytes (in place or by rename),
/// or makes and removes a temporary file, shows.
pub fn hash_tree(root: &Path) -> BTreeMap<PathBuf, String> {
    use std::os::unix::fs::MetadataExt;
    let stamp = |m: &std::fs::Metadata| {
        format!(
            "ino {} mtime {}.{} ctime {}.{}",
            m.ino(),
            m.mtime(),
            m.mtime_nsec(),
            m.ctime(),
            m.ctime_nsec()
        )
    };
    let mut out = BTreeMap::new();
    let mut stack = vec![root.to_path_buf()];
    while let Some(dir) = stack.pop() {
        let meta = std::fs::metadata(&dir).unwrap();
        out.insert(
            dir.strip_prefix(root).unwrap().join("."),
            format!("dir {}", stamp(&meta)),
        );
        for entry in std::fs::read_dir(&dir).unwrap() {
            let entry = entry.unwrap();
            if entry.file_type().unwrap().is_dir() {
                stack.push(entry.path());
            } else {
                let digest = Sha256::digest(std::fs::read(entry.path()).unwrap());
                let hex: String = digest.iter().map(|b| format!("{b:02x}")).collect();
                let meta = std::fs::symlink_metadata(entry.path()).unwrap();
                out.insert(
                    entry.path().strip_prefix(root).unwrap().to_path_buf(),
                    format!("{hex} {}", stamp(&meta)),
                );
            }
        }
    }
    out
}

pub fn serve(root: &Path) -> ServerProcess {
    ServerProcess::spawn(
        BIN,
        ["serve-mcp".as_ref(), "--root".as_ref(), root.as_os_str()],
    )
}

/// The fixtures' placeholder rules (ids numbered by first appearance, per kind).
#[derive(Default)]
pub struct Norm {
    seen: BTreeMap<(String, String), String>,
    counts: BTreeMap<String, usize>,
}

impl Norm {
    pub fn id(&mut self, kind: &str, value: &str) -> String {
        if let Some(p) = self.seen.get(&(kind.to_owned(), value.to_owned())) {
            return p.clone();
        }
        let n = self.counts.entry(kind.to_owned()).or_default();
        *n += 1;
        let p = format!("<{kind}_{n}>");
        self.seen
            .insert((kind.to_owned(), value.to_owned()), p.clone());
        p
    }

    pub fn text(&mut self, t: &str, root: &Path) -> String {
        let mut t = t.replace(&root.display().to_string(), "<ROOT>");
        let ts =
            regex::Regex::new(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?(Z|[+-]\d\d:\d\d)").unwrap();
        t = ts.replace_all(&t, "<TS>").into_owned();
        let age = regex::Regex::new(r"\((\d+h )?\d+[smh] ago\)").unwrap();
        t = age.replace_all(&t, "(<AGE> ago)").into_owned();
        for (kind, pat) in [
            ("RUN", r"run_[0-9a-f]{16}"),
            ("TURN", r"turn_[0-9a-f]{16}"),
            ("HESC", r"hesc_[0-9a-f]{16}"),
            ("EVT", r"evt_[0-9a-f]{16}"),
            ("IEVT", r"evt_\d{13}_[0-9a-f]{4}"),
            ("INTENT", r"intent_\d{13}_[0-9a-f]{4}"),
            ("SESSION", r"session_[0-9a-f]{16}"),
            ("SHA", r"\b[0-9a-f]{40}\b"),
        ] {
            let re = regex::Regex::new(pat).unwrap();
            let mut out = String::new();
            let mut last = 0;
            for m in re.find_iter(&t) {
                out.push_str(&t[last..m.start()]);
                out.push_str(&self.id(kind, m.as_str()));
                last = m.end();
            }
            out.push_str(&t[last..]);
            t = out;
        }
        let ms = regex::Regex::new(r#""(duration_ms|elapsed_ms|wall_ms|duration|elapsed)":\s*\d+"#)
            .unwrap();
        ms.replace_all(&t, r#""$1": "<MS>""#).into_owned()
    }
}

/// The environment the agentxchain-runs fixtures were captured in (their README), with `home`
/// as `HOME`: nothing else of the caller's is inherited but `PATH`.
pub fn fixture_env(home: &Path) -> Vec<(&'static str, String)> {
    vec![
        ("PATH", std::env::var("PATH").unwrap()),
        ("HOME", home.display().to_string()),
        ("TZ", "UTC".into()),
        ("LANG", "C.UTF-8".into()),
        ("NO_COLOR", "1".into()),
        ("TERM", "dumb".into()),
        ("GIT_AUTHOR_NAME", "AgentXchain Fixture".into()),
        ("GIT_COMMITTER_NAME", "AgentXchain Fixture".into()),
        ("GIT_AUTHOR_EMAIL", "fixture@example.invalid".into()),
        ("GIT_COMMITTER_EMAIL", "fixture@example.invalid".into()),
        ("GIT_AUTHOR_DATE", "2026-01-01T00:00:00Z".into()),
        ("GIT_COMMITTER_DATE", "2026-01-01T00:00:00Z".into()),
    ]
}
