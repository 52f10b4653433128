//! A governed project in a fresh git repository, driven by this binary: the person's
//! commands, the agent's files and staged result.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use serde_json::{Value, json};

use super::BIN;

pub struct Project {
    pub _dir: tempfile::TempDir,
    pub root: PathBuf,
}

pub fn git(root: &Path, args: &[&str]) {
    let out = Command::new("git")
        .args(args)
        .current_dir(root)
        .env("GIT_AUTHOR_NAME", "t")
        .env("GIT_AUTHOR_EMAIL", "t@example.invalid")
        .env("GIT_COMMITTER_NAME", "t")
        .env("GIT_COMMITTER_EMAIL", "t@example.invalid")
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "git {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
}

impl Project {
    /// `init --governed -y` in a fresh repository, committed.
    pub fn new() -> Project {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().join("demo");
        std::fs::create_dir_all(&root).unwrap();
        git(&root, &["init", "-q", "-b", "main"]);
        let p = Project { _dir: dir, root };
        p.ok(&["init", "--governed", "-y"]);
        git(&p.root, &["add", "-A"]);
        git(
            &p.root,
            &["commit", "-q", "-m", "initial governed scaffold"],
        );
        p
    }

    pub fn run(&self, args: &[&str]) -> Output {
        Command::new(BIN)
            .args(args)
            .current_dir(&self.root)
            // This machine's allow list of hooks, one per project (never the user's own).
            .env("AGENTXCHAIN_HOME", self._dir.path().join("home"))
            .env("GIT_AUTHOR_NAME", "t")
            .env("GIT_AUTHOR_EMAIL", "t@example.invalid")
            .env("GIT_COMMITTER_NAME", "t")
            .env("GIT_COMMITTER_EMAIL", "t@example.invalid")
            .output()
            .unwrap()
    }

    pub fn ok(&self, args: &[&str]) -> String {
        let out = self.run(args);
        let text = String::from_utf8_lossy(&out.stdout).into_owned();
        assert!(
            out.status.success(),
            "{args:?}: {text}{}",
            String::from_utf8_lossy(&out.stderr)
        );
        text
    }

    pub fn fails(&self, args: &[&str]) -> String {
        let out = self.run(args);
        assert_eq!(out.status.code(), Some(1), "{args:?}");
        String::from_utf8_lossy(&out.stdout).into_owned()
    }

    pub fn state(&self) -> Value {
        serde_json::from_str(
            &std::fs::read_to_string(self.root.join(".agentxchain/state.json")).unwrap(),
        )
        .unwrap()
    }

    /// The entries of a JSONL file of the project (none when it is missing).
    #[allow(dead_code)]
    pub fn jsonl(&self, rel: &str) -> Vec<Value> {
        std::fs::read_to_string(self.root.join(rel))
            .unwrap_or_default()
            .lines()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect()
    }

    pub fn write(&self, rel: &str, text: &str) {
        let p = self.root.join(rel);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(p, text).unwrap();
    }

    pub fn config(&self, edit: impl FnOnce(&mut Value)) {
        self.edit_config(edit);
        git(&self.root, &["commit", "-qam", "config"]);
    }

    /// agentxchain.json edited and left uncommitted (as an agent's edit is).
    pub fn edit_config(&self, edit: impl FnOnce(&mut Value)) {
        let path = self.root.join("agentxchain.json");
        let mut c: Value = serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
        edit(&mut c);
        std::fs::write(&path, serde_json::to_string_pretty(&c).unwrap()).unwrap();
    }

    pub fn active_turn(&self) -> (String, String) {
        let s = self.state();
        let (id, t) = s["active_turns"]
            .as_object()
            .unwrap()
            .iter()
            .next()
            .unwrap();
        (id.clone(), t["assigned_role"].as_str().unwrap().to_owned())
    }

    /// The active turn's agent writes `files` and a completed result declaring them.
    pub fn agent_turn(&self, files: &[(&str, &str)], request: Value) -> String {
        let (turn, role) = self.active_turn();
        let s = self.state();
        for (rel, text) in files {
            self.write(rel, text);
        }
        let review = role != "dev";
        let mut result = json!({
            "schema_version": "1.0", "run_id": s["run_id"], "turn_id": turn, "role": role,
            "runtime_id": s["active_turns"][&turn]["runtime_id"], "status": "completed",
            "summary": format!("{role} turn done"),
            "decisions": [{"id": "DEC-001", "category": "process", "statement": format!("{role} decided"), "rationale": "test"}],
            "objections": [{"id": "OBJ-001", "severity": "low", "against_turn_id": turn, "statement": "nit", "status": "raised"}],
            "files_changed": files.iter().map(|(f, _)| f).collect::<Vec<_>>(),
            "artifacts_created": [],
            "verification": {"status": "pass", "commands": ["true"], "evidence_summary": "ran true", "machine_evidence": [{"command": "true", "exit_code": 0}]},
            "artifact": {"type": if review { "review" } else { "workspace" }, "ref": null},
            "proposed_next_role": if review { "human" } else { "qa" },
            "phase_transition_request": null, "run_completion_request": null, "needs_human_reason": null,
            "cost": {"input_tokens": 10, "output_tokens": 10, "usd": 0.01},
        });
        for (k, v) in request.as_object().unwrap() {
            result[k] = v.clone();
        }
        self.write(
            &format!(".agentxchain/staging/{turn}/turn-result.json"),
            &serde_json::to_string_pretty(&result).unwrap(),
        );
        turn
    }

    /// An intake intent recorded, triaged (acceptance `acceptance`) and approved: its id.
    #[allow(dead_code)]
    pub fn approved_intent(&self, acceptance: &str) -> String {
        self.approved_intent_as(acceptance, "p1", "generic", "Repair", acceptance)
    }

    /// [`Project::approved_intent`] with the signal's title and the triage's priority,
    /// template and charter given.
    #[allow(dead_code)]
    pub fn approved_intent_as(
        &self,
        title: &str,
        priority: &str,
        template: &str,
        charter: &str,
        acceptance: &str,
    ) -> String {
        let out = self.ok(&[
            "intake",
            "record",
            "--source",
            "manual",
            "--signal",
            &json!({"title": title}).to_string(),
            "--evidence",
            r#"{"type":"text","value":"asked"}"#,
            "--json",
        ]);
        let v: Value = serde_json::from_str(&out).unwrap();
        let id = v["intent"]["intent_id"].as_str().unwrap().to_owned();
        self.ok(&[
            "intake",
            "triage",
            "--intent",
            &id,
            "--priority",
            priority,
            "--template",
            template,
            "--charter",
            charter,
            "--acceptance",
            acceptance,
        ]);
        self.ok(&["intake", "approve", "--intent", &id]);
        id
    }
}
