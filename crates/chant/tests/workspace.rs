//! `chant workspace` and the workspace MCP tools, black-box: the declaration's refusals, `ls`,
//! the records read, the writes with each of their refusals, reviews and quorum judged with
//! trust read at base, serving at a workspace root, and the whole story from a proposal over
//! MCP to a ratified record that no longer changes. Every `--json` document a test sees is
//! validated against its published schema.

use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

use mcp_testkit::ServerProcess;
use serde_json::{Value, json};

const BIN: &str = env!("CARGO_BIN_EXE_chant");

fn schemas_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../chant-workspace/schemas")
}

/// Validates `doc` against the schema its `$schema` names (by file name).
fn conforms(doc: &Value) {
    let id = doc["$schema"]
        .as_str()
        .unwrap_or_else(|| panic!("no $schema: {doc}"));
    let name = id.rsplit('/').next().unwrap();
    let schema: Value =
        serde_json::from_str(&std::fs::read_to_string(schemas_dir().join(name)).unwrap()).unwrap();
    let validator = jsonschema::validator_for(&schema).unwrap();
    let errors: Vec<String> = validator
        .iter_errors(doc)
        .map(|e| format!("{}: {e}", e.instance_path()))
        .collect();
    assert!(errors.is_empty(), "{name}: {errors:#?}\n{doc:#}");
    if let Some(kinds) = doc.get("kinds").and_then(Value::as_array) {
        kinds.iter().for_each(conforms);
    }
}

fn git(dir: &Path, args: &[&str]) {
    let out = Command::new("git")
        .args([
            "-c",
            "user.email=t@example.com",
            "-c",
            "user.name=t",
            "-c",
            "commit.gpgsign=false",
        ])
        .args(args)
        .current_dir(dir)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "git {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
}

const KIND: &str = r#"export const recordKind = {
  name: "decision",
  location: { dir: ".", match: "^[a-z][a-z0-9]{0,15}-[0-9]{3,}-.+\\.md$" },
  format: "markdown-front-matter",
  schema: { id: "urn:test:decision:1", path: "decision.schema.json" },
  idField: "id",
  stateField: "state",
  states: ["proposed", "decided", "ratified", "superseded", "withdrawn"],
  closedStates: ["ratified", "superseded"],
  supersedes: { field: "supersedes", key: "decision" },
  approval: { proposed: 0, withdrawn: 0, decided: 1, ratified: 2, superseded: 2 },
  pins: { field: "evidence" },
  reviews: { field: "reviews", decider: "decided_by", ratified: "ratified" },
  proposedBy: "proposed_by",
  seal: "closed_digest",
};
"#;

const SCHEMA: &str = r#"{"$schema": "https://json-schema.org/draft/2020-12/schema", "$id": "urn:test:decision:1",
 "type": "object", "required": ["id", "title", "state"],
 "properties": {"id": {"type": "string", "pattern": "^[a-z][a-z0-9]*-[0-9]{3,}$"}, "title": {"type": "string", "minLength": 1},
  "state": {"type": "string"}, "proposed_by": {"type": "string"}, "decided_by": {"type": "string"},
  "evidence": {"type": "array"}, "supersedes": {"type": "array"}, "reviews": {"type": "array"}, "source": {"type": "object"}, "seal": {"type": "object"}, "closed_digest": {"type": "string"}},
 "additionalProperties": false}"#;

/// A git repository holding a workspace: a `chant` member `infra` (gitlab), a member `docs`,
/// the decision kind, and one proposed decision, committed on `main`.
fn workspace() -> (tempfile::TempDir, PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let root = std::fs::canonicalize(dir.path()).unwrap().join("ws");
    std::fs::create_dir_all(root.join("decisions")).unwrap();
    std::fs::create_dir_all(root.join("infra/src")).unwrap();
    std::fs::create_dir_all(root.join("docs")).unwrap();
    std::fs::write(
        root.join("chant.workspace.json"),
        r#"{"name": "demo", "schema": 1, "records": [{"kind": "decisions/decision.kind.mjs"}],
  "members": [{"name": "infra", "dir": "infra", "kind": "chant"},
              {"name": "docs", "dir": "docs", "kind": "other", "because": "prose only"}]}
"#,
    )
    .unwrap();
    std::fs::write(
        root.join("infra/chant.config.ts"),
        "export default { lexicons: [\"gitlab\"] };\n",
    )
    .unwrap();
    std::fs::write(
        root.join("infra/src/ci.ts"),
        "import { Job } from \"@intentius/chant-lexicon-gitlab\";\nexport const test = new Job({ stage: \"test\", script: [\"true\"] });\n",
    )
    .unwrap();
    std::fs::write(root.join("docs/README.md"), "docs\n").unwrap();
    std::fs::write(root.join("decisions/decision.kind.mjs"), KIND).unwrap();
    std::fs::write(root.join("decisions/decision.schema.json"), SCHEMA).unwrap();
    std::fs::write(
        root.join("decisions/ws-001-first.md"),
        "---\nid: \"ws-001\"\ntitle: \"First\"\nstate: \"proposed\"\nevidence: []\n---\n\n# First\n",
    )
    .unwrap();
    git(&root, &["init", "-q", "-b", "main"]);
    git(&root, &["add", "-A"]);
    git(&root, &["commit", "-qm", "init"]);
    (dir, root)
}

fn chant(dir: &Path, args: &[&str]) -> Output {
    chant_in(dir, args, None)
}

fn chant_in(dir: &Path, args: &[&str], stdin: Option<&str>) -> Output {
    let mut c = Command::new(BIN);
    c.args(args)
        .current_dir(dir)
        .env("GIT_CONFIG_GLOBAL", "/dev/null")
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .stdin(if stdin.is_some() {
            Stdio::piped()
        } else {
            Stdio::null()
        })
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let mut child = c.spawn().unwrap();
    if let Some(s) = stdin {
        use std::io::Write;
        child.stdin.take().unwrap().write_all(s.as_bytes()).unwrap();
    }
    child.wait_with_output().unwrap()
}

/// Runs a `--json` command (or a write, which always prints JSON): its document, validated,
/// and its exit code.
fn doc(dir: &Path, args: &[&str], stdin: Option<&str>) -> (Value, i32) {
    let out = chant_in(dir, args, stdin);
    let v: Value = serde_json::from_slice(&out.stdout).unwrap_or_else(|e| {
        panic!(
            "{args:?}: {e}\nstdout: {}\nstderr: {}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        )
    });
    conforms(&v);
    (v, out.status.code().unwrap_or(-1))
}

fn records(dir: &Path) -> Value {
    let (v, code) = doc(
        dir,
        &["workspace", "records", "--kind", "decision", "--json"],
        None,
    );
    assert_eq!(code, 0, "{v}");
    v
}

fn record<'a>(doc: &'a Value, id: &str) -> &'a Value {
    doc["records"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["id"] == id)
        .unwrap_or_else(|| panic!("no {id} in {doc}"))
}

fn record_at<'a>(doc: &'a Value, path: &str) -> &'a Value {
    doc["records"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["path"] == path)
        .unwrap_or_else(|| panic!("no {path} in {doc}"))
}

fn new(dir: &Path, fields: &str, extra: &[&str]) -> (Value, i32) {
    let mut args = vec!["workspace", "records", "new", "--from", "-"];
    args.extend_from_slice(extra);
    doc(dir, &args, Some(fields))
}

fn review(dir: &Path, id: &str, verdict: &str, by: &str, note: Option<&str>) -> (Value, i32) {
    let mut args = vec![
        "workspace",
        "records",
        "review",
        id,
        "--verdict",
        verdict,
        "--by",
        by,
    ];
    if let Some(n) = note {
        args.extend(["--note", n]);
    }
    doc(dir, &args, None)
}

/// Whether the front matter ends with a `closed_digest: "sha256:<64 hex>"` line.
fn regex_like_seal(text: &str) -> bool {
    let Some(i) = text.find("\nclosed_digest: \"sha256:") else {
        return false;
    };
    let rest = &text[i + "\nclosed_digest: \"sha256:".len()..];
    rest.len() > 70
        && rest[..64].chars().all(|c| c.is_ascii_hexdigit())
        && rest[64..].starts_with("\"\n---\n")
}

fn code_of(v: &Value) -> &str {
    v["error"]["code"]
        .as_str()
        .unwrap_or_else(|| panic!("no error: {v}"))
}

fn files(dir: &Path) -> Vec<String> {
    let mut v: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .collect();
    v.sort();
    v
}

#[test]
fn the_declaration_refusals_each_have_a_code_and_a_document() {
    let (_d, root) = workspace();
    let cases: [(&str, &str, &str); 5] = [
        (
            "chant.workspace.json",
            "{\"name\": \"demo\", \"schema\": 1, \"members\": [],}",
            "declaration-unparseable",
        ),
        (
            "chant.workspace.json",
            r#"{"name": "demo", "schema": 1, "members": [], "member": []}"#,
            "declaration-invalid",
        ),
        (
            "chant.workspace.json",
            r#"{"name": "demo", "schema": 1, "members": [], "members": []}"#,
            "declaration-unparseable",
        ),
        (
            "chant.workspace.json",
            r#"{"name": "demo", "schema": 1, "members": [{"name": "x", "dir": "../outside", "kind": "chant"}]}"#,
            "declaration-invalid",
        ),
        (
            "chant.workspace.json",
            r#"{"name": "demo", "schema": 1, "minReader": "99.0.0", "members": []}"#,
            "reader-too-old",
        ),
    ];
    for (file, text, code) in cases {
        std::fs::write(root.join(file), text).unwrap();
        let (v, exit) = doc(&root.join("docs"), &["workspace", "ls", "--json"], None);
        assert_eq!((code_of(&v), exit), (code, 1), "{text}: {v}");
        assert!(
            v["error"]["message"]
                .as_str()
                .unwrap()
                .contains("chant.workspace.json"),
            "names the file: {v}"
        );
    }
    std::fs::write(root.join("chant.workspace.jsonc"), "{}").unwrap();
    let (v, _) = doc(&root, &["workspace", "ls", "--json"], None);
    assert_eq!(code_of(&v), "declaration-ambiguous");
    std::fs::remove_file(root.join("chant.workspace.json")).unwrap();
    std::fs::write(
        root.join("chant.workspace.jsonc"),
        "// a comment\n{\"name\": \"demo\", \"schema\": 1, \"members\": [],}\n",
    )
    .unwrap();
    let (v, exit) = doc(&root, &["workspace", "ls", "--json"], None);
    assert_eq!(
        (exit, v["workspace"]["file"].clone()),
        (0, json!("chant.workspace.jsonc")),
        "{v}"
    );
    std::fs::remove_file(root.join("chant.workspace.jsonc")).unwrap();
    let (v, _) = doc(&root, &["workspace", "ls", "--json"], None);
    assert_eq!(code_of(&v), "declaration-missing");
}

#[test]
fn ls_lists_every_member_and_names_why_one_cannot_be_read() {
    let (_d, root) = workspace();
    std::fs::write(
        root.join("chant.workspace.json"),
        r#"{"name": "demo", "schema": 1, "x-team": "platform", "records": [{"kind": "decisions/decision.kind.mjs"}, {"kind": "nope.kind.mjs"}],
  "members": [{"name": "infra", "dir": "infra", "kind": "chant", "x-owner": "ops"},
              {"name": "docs", "dir": "docs", "kind": "chant"},
              {"name": "gone", "dir": "gone", "kind": "other", "because": "removed"},
              {"name": "helm", "dir": "docs", "kind": "helm"}]}"#,
    )
    .unwrap();
    let (v, exit) = doc(&root, &["workspace", "ls", "--json"], None);
    assert_eq!(code_of(&v), "placement-invalid", "two members share docs");
    assert_eq!(exit, 1);
    let text = std::fs::read_to_string(root.join("chant.workspace.json"))
        .unwrap()
        .replace(
            r#""dir": "docs", "kind": "helm""#,
            r#""dir": "infra/src", "kind": "helm""#,
        );
    std::fs::write(root.join("chant.workspace.json"), text).unwrap();
    let (v, exit) = doc(&root, &["workspace", "ls", "--json"], None);
    assert_eq!(exit, 0, "{v}");
    let reasons: Vec<Value> = v["members"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| json!([m["name"], m["reason"]["code"]]))
        .collect();
    assert_eq!(
        reasons,
        [
            json!(["infra", null]),
            json!(["docs", "kind-probe-failed"]),
            json!(["gone", "dir-missing"]),
            json!(["helm", "unknown-kind"])
        ]
    );
    assert_eq!(v["summary"]["unreadable"], 3);
    assert_eq!(v["workspace"]["x-team"], "platform");
    assert_eq!(v["members"][0]["x-owner"], "ops");
    assert_eq!(v["workspace"]["records"][0]["kind"], "decision");
    assert_eq!(
        v["workspace"]["records"][1]["reason"]["code"],
        "kind-unreadable"
    );
    let human = chant(&root, &["workspace", "ls"]);
    let text = String::from_utf8_lossy(&human.stdout);
    assert!(text.starts_with("demo  (chant.workspace.json)\n"), "{text}");
    assert!(text.contains("4 members, 3 unreadable"), "{text}");
}

#[test]
fn the_whole_story_from_a_proposal_over_mcp_to_a_ratified_record_that_never_changes() {
    let (_d, root) = workspace();
    let mut s = ServerProcess::spawn_in(BIN, ["serve", "mcp"], &root);
    let init = s.initialize(Some("2025-11-25"));
    let instructions = init["instructions"].as_str().unwrap();
    assert!(
        instructions.contains("gitlab (from member infra)"),
        "{instructions}"
    );
    assert!(
        instructions.contains("want a member's directory: infra (infra)"),
        "{instructions}"
    );
    let r = s.request(1, "tools/call", json!({"name": "records-new", "arguments": {"record": {"title": "Keep state in S3"}, "by": "claude"}}));
    let made = r["result"]["structuredContent"].clone();
    conforms(&made);
    assert_eq!(made["id"], "ws-002", "{r}");
    assert_eq!(made["state"], "proposed");
    let text = std::fs::read_to_string(root.join("decisions/ws-002-keep-state-in-s3.md")).unwrap();
    assert!(
        text.contains("proposed_by: \"claude\"\nsource:\n  via: \"mcp\"\n  client:\n    name: "),
        "{text}"
    );
    drop(s);
    // Two people review at the shell; the first tries to ratify too early.
    let ratify = r#"{"state": "ratified"}"#;
    let amend = ["workspace", "records", "amend", "ws-002", "--set", "-"];
    let (v, code) = review(&root, "ws-002", "agree", "alice", None);
    assert_eq!(code, 0, "{v}");
    let (v, code) = doc(&root, &amend, Some(ratify));
    assert_eq!((code_of(&v), code), ("ratify-quorum-not-met", 1));
    assert!(v["error"]["message"].as_str().unwrap().starts_with("ws-002 can't be ratified yet: its quorum needs 2 agreeing verdicts that count, and it has 1."), "{v}");
    let (v, code) = review(&root, "ws-002", "agree", "bob", None);
    assert_eq!(code, 0, "{v}");
    let (v, code) = doc(&root, &amend, Some(ratify));
    assert_eq!(
        (code, v["changed"].clone()),
        (0, json!(["state", "closed_digest"])),
        "{v}"
    );
    let text = std::fs::read_to_string(root.join("decisions/ws-002-keep-state-in-s3.md")).unwrap();
    assert!(
        regex_like_seal(&text),
        "the seal is the last front-matter line: {text}"
    );
    let q = record(&records(&root), "ws-002")["quorum"].clone();
    assert_eq!(q["met"], true, "ratifying keeps the verdicts counting: {q}");
    // `close` closes review sessions; a decision is not one.
    let (v, _) = doc(&root, &["workspace", "records", "close", "ws-002"], None);
    assert_eq!(code_of(&v), "write-usage-invalid");
    let before =
        std::fs::read_to_string(root.join("decisions/ws-002-keep-state-in-s3.md")).unwrap();
    let (v, code) = doc(&root, &amend, Some(r#"{"title": "Keep state in GCS"}"#));
    assert_eq!((code_of(&v), code), ("record-closed", 1));
    let (v, _) = review(&root, "ws-002", "dissent", "carol", Some("too late"));
    assert_eq!(code_of(&v), "record-closed");
    assert_eq!(
        std::fs::read_to_string(root.join("decisions/ws-002-keep-state-in-s3.md")).unwrap(),
        before,
        "a closed record never changes"
    );
    // An edit by hand after it closed breaks its seal.
    std::fs::write(
        root.join("decisions/ws-002-keep-state-in-s3.md"),
        before.replace("# Keep state in S3", "# Keep state in GCS"),
    )
    .unwrap();
    let r = record(&records(&root), "ws-002").clone();
    assert_eq!(r["reasons"][0]["code"], "record-seal-mismatch", "{r}");
    std::fs::write(root.join("decisions/ws-002-keep-state-in-s3.md"), &before).unwrap();
    assert_eq!(record(&records(&root), "ws-002")["state"], "ratified");
}

#[test]
fn every_string_argument_starting_with_a_dash_is_refused_before_anything_runs() {
    let (_d, root) = workspace();
    let mut s = ServerProcess::spawn_in(BIN, ["serve", "mcp"], &root);
    s.initialize(Some("2025-11-25"));
    let calls = [
        ("workspace-ls", json!({"at": "--output=/tmp/x"}), "at"),
        ("workspace-records", json!({"kind": "--help"}), "kind"),
        ("workspace-records", json!({"id": "-x"}), "id"),
        (
            "records-new",
            json!({"record": {"title": "t"}, "by": "-alice"}),
            "by",
        ),
        (
            "records-new",
            json!({"record": {"title": "t"}, "prefix": "-p"}),
            "prefix",
        ),
        (
            "records-amend",
            json!({"id": "-ws-001", "fields": {"title": "x"}}),
            "id",
        ),
        (
            "records-review",
            json!({"id": "ws-001", "verdict": "agree", "by": "--dry-run"}),
            "by",
        ),
        (
            "records-review",
            json!({"id": "ws-001", "verdict": "-agree", "by": "a"}),
            "verdict",
        ),
        (
            "records-close",
            json!({"id": "ws-001", "kind": "-k"}),
            "kind",
        ),
    ];
    for (i, (tool, args, key)) in calls.iter().enumerate() {
        let r = s.request(
            10 + i as i64,
            "tools/call",
            json!({"name": tool, "arguments": args}),
        );
        let text = r["result"]["content"][0]["text"]
            .as_str()
            .unwrap_or_default()
            .to_owned();
        let value = args[*key].as_str().unwrap();
        assert_eq!(r["result"]["isError"], true, "{tool}: {r}");
        assert!(
            text.ends_with(&format!("{key} may not start with -: \"{value}\"")),
            "{tool}: {text}"
        );
    }
    assert_eq!(
        files(&root.join("decisions")),
        [
            "decision.kind.mjs",
            "decision.schema.json",
            "ws-001-first.md"
        ],
        "nothing was written"
    );
    // The other argument checks, in the seed's words.
    for (tool, args, want) in [
        ("records-new", json!({}), "record is required"),
        (
            "records-new",
            json!({"record": "x"}),
            "record must be a JSON object",
        ),
        (
            "records-amend",
            json!({"id": "", "fields": {}}),
            "id must be a non-empty string",
        ),
        (
            "records-close",
            json!({"id": "ws-001", "dryRun": "yes"}),
            "dryRun must be true or false",
        ),
        (
            "workspace-records",
            json!({"uncommitted": true, "at": "HEAD"}),
            "uncommitted reads the working tree against HEAD, and takes no at or since",
        ),
    ] {
        let r = s.request(50, "tools/call", json!({"name": tool, "arguments": args}));
        let text = r["result"]["content"][0]["text"]
            .as_str()
            .unwrap_or_default();
        assert!(text.ends_with(want), "{tool}: {text}");
    }
}

#[test]
fn over_mcp_a_record_opens_in_the_first_state_and_carries_its_source() {
    let (_d, root) = workspace();
    let mut s = ServerProcess::spawn_in(BIN, ["serve", "mcp"], &root);
    s.initialize(Some("2025-11-25"));
    let r = s.request(1, "tools/call", json!({"name": "records-new", "arguments": {"record": {"title": "Skip review", "state": "decided"}}}));
    assert_eq!(
        code_of(&r["result"]["structuredContent"]),
        "record-state-not-initial",
        "{r}"
    );
    assert_eq!(files(&root.join("decisions")).len(), 3, "nothing written");
    // The same at the shell is a person's write, and any valid state opens.
    let (v, code) = new(
        &root,
        r#"{"title": "Decided at the shell", "state": "decided"}"#,
        &[],
    );
    assert_eq!((code, v["state"].clone()), (0, json!("decided")), "{v}");
    // The client identity from the request's _meta on the 2026-07-28 revision.
    let r = s.request(
        2,
        "tools/call",
        json!({"name": "records-new", "arguments": {"record": {"title": "Meta"}, "dryRun": true},
               "_meta": {"io.modelcontextprotocol/clientInfo": {"name": "other-client", "version": "9", "title": "Other"}}}),
    );
    let text = r["result"]["structuredContent"]["text"]
        .as_str()
        .unwrap_or_default();
    assert!(text.contains("source:\n  via: \"mcp\"\n  client:\n    name: \"other-client\"\n    version: \"9\"\n    title: \"Other\"\n"), "{r}");
    // An amendment gets the stamp only when its fields set the source block.
    let r = s.request(3, "tools/call", json!({"name": "records-amend", "arguments": {"id": "ws-001", "fields": {"title": "First, renamed"}}}));
    assert_eq!(
        r["result"]["structuredContent"]["changed"],
        json!(["title"]),
        "{r}"
    );
    let text = std::fs::read_to_string(root.join("decisions/ws-001-first.md")).unwrap();
    assert!(!text.contains("source:"), "{text}");
    let r = s.request(4, "tools/call", json!({"name": "records-amend", "arguments": {"id": "ws-001", "fields": {"source": {"note": "moved"}}}}));
    assert_ne!(r["result"]["isError"], true, "{r}");
    let text = std::fs::read_to_string(root.join("decisions/ws-001-first.md")).unwrap();
    assert!(
        text.contains("source:\n  note: \"moved\"\n  via: \"mcp\"\n"),
        "{text}"
    );
}

#[test]
fn amendments_keep_to_what_the_state_allows_and_the_id_never_changes() {
    let (_d, root) = workspace();
    let (v, _) = doc(
        &root,
        &["workspace", "records", "amend", "ws-001", "--set", "-"],
        Some(r#"{"id": "ws-099"}"#),
    );
    assert_eq!(code_of(&v), "amend-id-immutable");
    let (v, code) = doc(
        &root,
        &[
            "workspace",
            "records",
            "amend",
            "ws-001",
            "--set",
            "-",
            "--by",
            "lex",
        ],
        Some(r#"{"state": "decided"}"#),
    );
    assert_eq!(code, 0, "{v}");
    assert_eq!(v["changed"], json!(["state", "decided_by"]));
    let (v, _) = doc(
        &root,
        &["workspace", "records", "amend", "ws-001", "--set", "-"],
        Some(r#"{"title": "Another"}"#),
    );
    assert_eq!(code_of(&v), "amend-supersede-instead");
    assert!(
        v["error"]["message"]
            .as_str()
            .unwrap()
            .contains("supersedes names ws-001"),
        "{v}"
    );
    let (v, _) = doc(
        &root,
        &["workspace", "records", "amend", "ws-001", "--set", "-"],
        Some(r#"{"state": "proposed"}"#),
    );
    assert_eq!(
        code_of(&v),
        "amend-supersede-instead",
        "a state may only move up"
    );
    let (v, code) = doc(
        &root,
        &["workspace", "records", "amend", "ws-001", "--set", "-"],
        Some(r#"{"evidence": [{"title": "t", "url": "https://example.com"}]}"#),
    );
    assert_eq!(code, 0, "evidence may change: {v}");
    // Only the changed block was rewritten, every other byte kept.
    let text = std::fs::read_to_string(root.join("decisions/ws-001-first.md")).unwrap();
    assert!(
        text.starts_with(
            "---\nid: \"ws-001\"\ntitle: \"First\"\nstate: \"decided\"\nevidence:\n  - title: \"t\""
        ),
        "{text}"
    );
    assert!(text.ends_with("---\n\n# First\n"), "{text}");
    // A dissent needs a note; a schema-breaking write is refused with the read's own code.
    let (v, _) = review(&root, "ws-001", "dissent", "bob", None);
    assert_eq!(code_of(&v), "review-note-required");
    let (v, _) = doc(
        &root,
        &["workspace", "records", "amend", "ws-001", "--set", "-"],
        Some(r#"{"state": "ratified", "unknown": 1}"#),
    );
    assert_eq!(code_of(&v), "amend-supersede-instead");
    let (v, _) = new(&root, r#"{"title": ""}"#, &[]);
    assert_eq!(code_of(&v), "record-schema-invalid");
    let (v, _) = new(&root, r#"{"title": "Taken", "id": "ws-001"}"#, &[]);
    assert_eq!(code_of(&v), "record-id-taken");
}

#[test]
fn verdicts_are_counted_by_the_rules_with_trust_read_at_base() {
    let (_d, root) = workspace();
    let (_, code) = doc(
        &root,
        &[
            "workspace",
            "records",
            "amend",
            "ws-001",
            "--set",
            "-",
            "--by",
            "Lex",
        ],
        Some("{}"),
    );
    assert_eq!(code, 0);
    for (by, verdict) in [
        ("lex ", "agree"),
        ("robot", "agree"),
        ("alice", "agree"),
        ("Alice", "abstain"),
        ("dave", "agree"),
    ] {
        let (v, code) = review(&root, "ws-001", verdict, by, None);
        assert_eq!(code, 0, "{v}");
    }
    // The agent role granted only in the working tree (not at base) counts for nothing.
    std::fs::create_dir_all(root.join(".chant")).unwrap();
    std::fs::write(
        root.join(".chant/trust.json"),
        r#"{"schema": 1, "roles": {"agent": ["robot"]}}"#,
    )
    .unwrap();
    let q = record(&records(&root), "ws-001")["quorum"].clone();
    assert_eq!(q["need"], 2);
    assert_eq!(q["needFrom"], "default");
    let codes: Vec<Value> = q["notCounted"]
        .as_array()
        .unwrap()
        .iter()
        .map(|n| json!([n["reviewer"], n["reason"]["code"]]))
        .collect();
    assert_eq!(
        codes,
        [
            json!(["lex ", "review-decider"]),
            json!(["alice", "review-duplicate"])
        ],
        "{q}"
    );
    assert_eq!(q["agreed"], 2, "robot and dave");
    // On a branch, the grant still does not count: base is main.
    git(&root, &["checkout", "-qb", "change"]);
    git(&root, &["add", "-A"]);
    git(&root, &["commit", "-qm", "grant"]);
    let q = record(&records(&root), "ws-001")["quorum"].clone();
    assert!(
        !q["notCounted"]
            .as_array()
            .unwrap()
            .iter()
            .any(|n| n["reason"]["code"] == "review-agent"),
        "{q}"
    );
    // Once main has it, robot's verdict is an agent's.
    git(&root, &["checkout", "-q", "main"]);
    git(&root, &["merge", "-q", "change"]);
    let q = record(&records(&root), "ws-001")["quorum"].clone();
    let robot = q["notCounted"]
        .as_array()
        .unwrap()
        .iter()
        .find(|n| n["reviewer"] == "robot")
        .cloned();
    assert_eq!(
        robot.map(|r| r["reason"]["code"].clone()),
        Some(json!("review-agent")),
        "{q}"
    );
    // An edit moves the digest: every verdict before it names an older one.
    doc(
        &root,
        &["workspace", "records", "amend", "ws-001", "--set", "-"],
        Some(r#"{"title": "Changed"}"#),
    );
    let q = record(&records(&root), "ws-001")["quorum"].clone();
    assert_eq!(q["agreed"], 0);
    assert!(
        q["notCounted"]
            .as_array()
            .unwrap()
            .iter()
            .any(|n| n["reason"]["code"] == "review-older-digest"),
        "{q}"
    );
    // A signers file at base turns attestation on, and unsealed verdicts stop counting; the
    // declaration's quorum sets the need.
    review(&root, "ws-001", "agree", "erin", None);
    std::fs::write(
        root.join(".chant/allowed_signers"),
        "erin ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIDJ8yNq1cEMmqUYLuZ8mSO6mYnW6PqC8qPB8S4bfsFZD\n",
    )
    .unwrap();
    let decl = std::fs::read_to_string(root.join("chant.workspace.json"))
        .unwrap()
        .replace("\"schema\": 1,", "\"schema\": 1, \"quorum\": 3,");
    std::fs::write(root.join("chant.workspace.json"), decl).unwrap();
    // The need is read at base too: a change cannot lower (or raise) its own quorum.
    let q = record(&records(&root), "ws-001")["quorum"].clone();
    assert_eq!(
        (q["need"].clone(), q["needFrom"].clone()),
        (json!(2), json!("default")),
        "a quorum only in the working tree: {q}"
    );
    assert!(
        !q["notCounted"]
            .as_array()
            .unwrap()
            .iter()
            .any(|n| n["reason"]["code"] == "review-unattested"),
        "signers only in the working tree: {q}"
    );
    git(&root, &["add", "-A"]);
    git(&root, &["commit", "-qm", "signers"]);
    let doc_now = records(&root);
    assert_eq!(doc_now["trust"]["active"], true);
    let q = record(&doc_now, "ws-001")["quorum"].clone();
    assert_eq!(
        (q["need"].clone(), q["needFrom"].clone()),
        (json!(3), json!("declaration"))
    );
    // Lowered to 0 in the working tree: still 3.
    let lowered = std::fs::read_to_string(root.join("chant.workspace.json"))
        .unwrap()
        .replace("\"quorum\": 3,", "\"quorum\": 0,");
    std::fs::write(root.join("chant.workspace.json"), lowered).unwrap();
    assert_eq!(record(&records(&root), "ws-001")["quorum"]["need"], 3);
    let q = record(&doc_now, "ws-001")["quorum"].clone();
    let erin = q["notCounted"]
        .as_array()
        .unwrap()
        .iter()
        .find(|n| n["reviewer"] == "erin")
        .cloned();
    assert_eq!(
        erin.map(|r| r["reason"]["code"].clone()),
        Some(json!("review-unattested")),
        "{q}"
    );
}

#[test]
fn signing_without_a_configured_key_is_refused_with_the_remedy() {
    let (_d, root) = workspace();
    let (v, code) = new(&root, r#"{"title": "Signed"}"#, &["--sign"]);
    assert_eq!((code_of(&v), code), ("record-sign-failed", 1));
    assert!(
        v["error"]["message"]
            .as_str()
            .unwrap()
            .contains("git config user.signingkey"),
        "{v}"
    );
    let (v, _) = doc(
        &root,
        &[
            "workspace",
            "records",
            "review",
            "ws-001",
            "--verdict",
            "agree",
            "--by",
            "a",
            "--sign",
        ],
        None,
    );
    assert_eq!(code_of(&v), "review-sign-failed");
    let mut s = ServerProcess::spawn_in(BIN, ["serve", "mcp"], &root);
    s.initialize(Some("2025-11-25"));
    let r = s.request(1, "tools/call", json!({"name": "records-review", "arguments": {"id": "ws-001", "verdict": "agree", "by": "a", "sign": true}}));
    assert_eq!(
        code_of(&r["result"]["structuredContent"]),
        "review-sign-failed",
        "{r}"
    );
    assert_eq!(files(&root.join("decisions")).len(), 3);
}

#[test]
fn hostile_records_pins_and_kinds_stay_inside_the_workspace() {
    let (d, root) = workspace();
    let secret = d.path().join("secret.txt");
    std::fs::write(&secret, "top secret\n").unwrap();
    std::os::unix::fs::symlink(&secret, root.join("decisions/ws-009-link.md")).unwrap();
    std::fs::write(
        root.join("decisions/ws-010-pins.md"),
        "---\nid: \"ws-010\"\ntitle: \"Pins\"\nstate: \"proposed\"\nevidence:\n  - path: \"../secret.txt\"\n    sha256: \"0000000000000000000000000000000000000000000000000000000000000000\"\n  - path: \"docs/README.md\"\n    sha256: \"0000000000000000000000000000000000000000000000000000000000000000\"\n---\n",
    )
    .unwrap();
    std::os::unix::fs::symlink(&secret, root.join("docs/leak.txt")).unwrap();
    std::fs::write(
        root.join("decisions/ws-011-leak.md"),
        "---\nid: \"ws-011\"\ntitle: \"Leak\"\nstate: \"proposed\"\nevidence:\n  - path: \"docs/leak.txt\"\n    sha256: \"0000000000000000000000000000000000000000000000000000000000000000\"\n---\n",
    )
    .unwrap();
    let v = records(&root);
    let text = v.to_string();
    assert!(!text.contains("top secret"), "{text}");
    assert_eq!(record(&v, "ws-010")["assets"][0]["state"], "missing");
    assert_eq!(record(&v, "ws-010")["assets"][1]["state"], "drifted");
    assert_eq!(
        record(&v, "ws-011")["assets"][0]["state"],
        "missing",
        "a link out is not read"
    );
    let link = v["records"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["path"] == "decisions/ws-009-link.md")
        .unwrap();
    assert_eq!(link["reasons"][0]["code"], "record-unparseable");
    // A kind whose records directory leads out of the workspace is written through by nobody.
    std::fs::create_dir_all(d.path().join("outside")).unwrap();
    std::os::unix::fs::symlink(d.path().join("outside"), root.join("decisions/out")).unwrap();
    std::fs::write(
        root.join("decisions/out.kind.mjs"),
        KIND.replace("dir: \".\"", "dir: \"out\"")
            .replace("name: \"decision\"", "name: \"out\""),
    )
    .unwrap();
    std::fs::copy(
        root.join("decisions/decision.schema.json"),
        root.join("decisions/decision.schema.json.bak"),
    )
    .unwrap();
    let (v, _) = new(
        &root,
        r#"{"title": "Escape"}"#,
        &["decisions/out.kind.mjs", "--prefix", "ws"],
    );
    // Refused when the kind is loaded, for reads as for writes.
    assert_eq!(code_of(&v), "kind-invalid", "{v}");
    assert!(files(&d.path().join("outside")).is_empty());
    // A kind file that never finishes, or reads values back through a getter that throws.
    std::fs::write(
        root.join("decisions/loop.kind.mjs"),
        "while (true) {}\nexport const recordKind = {};\n",
    )
    .unwrap();
    let out = chant_in(
        &root,
        &[
            "--timeout",
            "300ms",
            "workspace",
            "records",
            "--kind",
            "decisions/loop.kind.mjs",
            "--json",
        ],
        None,
    );
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(code_of(&v), "kind-unreadable", "{v}");
    std::fs::write(
        root.join("decisions/proxy.kind.mjs"),
        "export const recordKind = new Proxy({}, { get() { throw new Error(\"gotcha\"); }, ownKeys() { return [\"name\"]; }, getOwnPropertyDescriptor() { return { enumerable: true, configurable: true }; } });\n",
    )
    .unwrap();
    let (v, _) = doc(
        &root,
        &[
            "workspace",
            "records",
            "--kind",
            "decisions/proxy.kind.mjs",
            "--json",
        ],
        None,
    );
    assert!(
        matches!(code_of(&v), "kind-unreadable" | "kind-invalid"),
        "{v}"
    );
}

#[test]
fn two_writers_at_once_never_hand_out_one_id_twice() {
    let (_d, root) = workspace();
    let spawn = |title: &str| {
        let mut c = Command::new(BIN);
        c.args(["workspace", "records", "new", "--from", "-"])
            .current_dir(&root)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        let mut child = c.spawn().unwrap();
        use std::io::Write;
        child
            .stdin
            .take()
            .unwrap()
            .write_all(format!("{{\"title\": \"{title}\"}}").as_bytes())
            .unwrap();
        child
    };
    let children: Vec<_> = (0..4).map(|i| spawn(&format!("Parallel {i}"))).collect();
    let mut ids = Vec::new();
    for c in children {
        let out = c.wait_with_output().unwrap();
        let v: Value = serde_json::from_slice(&out.stdout).unwrap();
        assert_eq!(out.status.code(), Some(0), "{v}");
        ids.push(v["id"].as_str().unwrap().to_owned());
    }
    ids.sort();
    assert_eq!(ids, ["ws-002", "ws-003", "ws-004", "ws-005"]);
    // Made as `File::create` makes a file (0666 less the umask), not 0600.
    use std::os::unix::fs::PermissionsExt;
    let made = std::fs::metadata(
        root.join("decisions").join(
            files(&root.join("decisions"))
                .into_iter()
                .find(|f| f.starts_with("ws-002"))
                .unwrap(),
        ),
    )
    .unwrap()
    .permissions()
    .mode();
    let old = std::fs::metadata(root.join("decisions/ws-001-first.md"))
        .unwrap()
        .permissions()
        .mode();
    assert_eq!(made & 0o777, old & 0o777, "as the checkout's own files");
    assert_eq!(records(&root)["summary"]["valid"], 5);
}

#[test]
fn at_a_workspace_root_path_tools_want_a_members_directory_and_a_broken_member_is_left_out() {
    let (_d, root) = workspace();
    std::fs::create_dir_all(root.join("api")).unwrap();
    std::fs::write(
        root.join("api/chant.config.ts"),
        "throw new Error(\"broken config\");\n",
    )
    .unwrap();
    std::fs::create_dir_all(root.join("web")).unwrap();
    std::fs::write(
        root.join("web/chant.config.json"),
        r#"{"lexicons": ["azure"]}"#,
    )
    .unwrap();
    let decl = std::fs::read_to_string(root.join("chant.workspace.json")).unwrap().replace(
        r#"{"name": "infra", "dir": "infra", "kind": "chant"},"#,
        r#"{"name": "infra", "dir": "infra", "kind": "chant"}, {"name": "api", "dir": "api", "kind": "chant"}, {"name": "web", "dir": "web", "kind": "chant"},"#,
    );
    std::fs::write(root.join("chant.workspace.json"), decl).unwrap();
    let mut s = ServerProcess::spawn_in(BIN, ["serve", "mcp"], &root);
    let init = s.initialize(Some("2025-11-25"));
    let i = init["instructions"].as_str().unwrap();
    assert!(
        i.contains("Lexicons loaded: gitlab (from member infra)"),
        "{i}"
    );
    assert!(i.contains("member api (its config does not load"), "{i}");
    assert!(
        i.contains("lexicon azure of member web (this chant has no such lexicon)"),
        "{i}"
    );
    let r = s.request(
        1,
        "tools/call",
        json!({"name": "build", "arguments": {"path": "."}}),
    );
    let text = r["result"]["content"][0]["text"].as_str().unwrap();
    assert!(
        text.contains("is not a member's directory") && text.contains("infra (infra)"),
        "{text}"
    );
    let r = s.request(
        2,
        "tools/call",
        json!({"name": "build", "arguments": {"path": "docs"}}),
    );
    assert_eq!(r["result"]["isError"], true, "{r}");
    let r = s.request(
        3,
        "tools/call",
        json!({"name": "build", "arguments": {"path": "infra"}}),
    );
    assert_ne!(r["result"]["isError"], true, "{r}");
    let tools = s.request(4, "tools/list", json!({}));
    let names: Vec<&str> = tools["result"]["tools"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|t| t["name"].as_str())
        .collect();
    for t in [
        "workspace-ls",
        "workspace-records",
        "records-new",
        "records-amend",
        "records-review",
        "records-close",
    ] {
        assert!(names.contains(&t), "{t} in {names:?}");
    }
    for t in tools["result"]["tools"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|t| {
            t["name"]
                .as_str()
                .is_some_and(|n| n.starts_with("records-"))
        })
    {
        let d = t["description"].as_str().unwrap();
        assert!(
            d.contains("Records are proposals until people review them")
                && d.contains(
                    "`by` must name the person or agent that actually proposed or decided it"
                ),
            "{d}"
        );
    }
    // The reads return the CLI's document unchanged.
    let r = s.request(
        5,
        "tools/call",
        json!({"name": "workspace-ls", "arguments": {}}),
    );
    let (cli, _) = doc(&root, &["workspace", "ls", "--json"], None);
    assert_eq!(r["result"]["structuredContent"], cli);
    let r = s.request(
        6,
        "tools/call",
        json!({"name": "workspace-records", "arguments": {"kind": "decision", "id": "ws-001"}}),
    );
    let (cli, _) = doc(
        &root,
        &[
            "workspace",
            "records",
            "--kind",
            "decision",
            "--id",
            "ws-001",
            "--json",
        ],
        None,
    );
    assert_eq!(r["result"]["structuredContent"], cli);
    assert_eq!(cli["records"].as_array().unwrap().len(), 1);
}

#[test]
fn outside_a_workspace_no_workspace_tool_is_served() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("chant.config.json"),
        r#"{"lexicons": ["gitlab"]}"#,
    )
    .unwrap();
    let mut s = ServerProcess::spawn_in(BIN, ["serve", "mcp"], dir.path());
    let init = s.initialize(Some("2025-11-25"));
    assert!(init.get("instructions").is_none(), "{init}");
    let tools = s.request(1, "tools/list", json!({}));
    assert!(!tools.to_string().contains("workspace-ls"));
}

#[test]
fn over_mcp_no_state_moves_and_no_verdict_is_edited_so_one_client_cannot_ratify_alone() {
    let (_d, root) = workspace();
    let mut s = ServerProcess::spawn_in(BIN, ["serve", "mcp"], &root);
    s.initialize(Some("2025-11-25"));
    for (i, args) in [
        json!({"id": "ws-001", "fields": {"state": "decided"}, "by": "alice"}),
        json!({"id": "ws-001", "fields": {"state": "ratified"}}),
        json!({"id": "ws-001", "fields": {"reviews": [{"reviewer": "a", "verdict": "agree", "on": "2026-12-03"}]}}),
    ]
    .into_iter()
    .enumerate()
    {
        let r = s.request(i as i64 + 1, "tools/call", json!({"name": "records-amend", "arguments": args}));
        let v = &r["result"]["structuredContent"];
        assert_eq!(code_of(v), "write-usage-invalid", "{r}");
        assert!(v["error"]["message"].as_str().unwrap().starts_with("over MCP a record's"), "{v}");
    }
    assert_eq!(record(&records(&root), "ws-001")["state"], "proposed");
    // The request's _meta names the client of that request only.
    s.request(
        9,
        "tools/call",
        json!({"name": "records-new", "arguments": {"record": {"title": "One"}},
        "_meta": {"io.modelcontextprotocol/clientInfo": {"name": "spoof"}}}),
    );
    let r = s.request(
        10,
        "tools/call",
        json!({"name": "records-new", "arguments": {"record": {"title": "Two"}, "dryRun": true}}),
    );
    let text = r["result"]["structuredContent"]["text"].as_str().unwrap();
    assert!(!text.contains("spoof"), "{text}");
    // A kind file outside the server's directory is refused before anything runs.
    let r = s.request(11, "tools/call", json!({"name": "records-new", "arguments": {"record": {"title": "x"}, "kind": "../../elsewhere/d.kind.mjs"}}));
    assert_eq!(r["result"]["isError"], true, "{r}");
    let r = s.request(
        12,
        "tools/call",
        json!({"name": "workspace-records", "arguments": {"kind": "/etc/passwd"}}),
    );
    assert_eq!(r["result"]["isError"], true, "{r}");
}

#[test]
fn verdicts_change_only_through_review_and_every_top_rank_needs_the_quorum() {
    let (_d, root) = workspace();
    review(&root, "ws-001", "dissent", "carol", Some("no"));
    let set = |fields: &str| {
        doc(
            &root,
            &["workspace", "records", "amend", "ws-001", "--set", "-"],
            Some(fields),
        )
    };
    let (v, _) =
        set(r#"{"reviews": [{"reviewer": "carol", "verdict": "agree", "on": "2026-12-03"}]}"#);
    assert_eq!(
        code_of(&v),
        "write-input-invalid",
        "a verdict is not rewritten: {v}"
    );
    let current = record(&records(&root), "ws-001")["data"]["reviews"].clone();
    let mut two = current.as_array().unwrap().clone();
    two.push(json!({"reviewer": "mallory", "verdict": "agree", "on": "2026-12-03"}));
    let (v, _) = set(&json!({"reviews": two}).to_string());
    assert_eq!(
        code_of(&v),
        "write-input-invalid",
        "a verdict is not added by amend: {v}"
    );
    let mut addressed = current.clone();
    addressed[0]["addressed_by"] = json!("ws-002");
    let (v, code) = set(&json!({"reviews": addressed}).to_string());
    assert_eq!(code, 0, "marking a dissent addressed is an amendment: {v}");
    // `superseded` ranks with `ratified`: no quorum, no entry.
    let (v, _) = set(r#"{"state": "superseded"}"#);
    assert_eq!(code_of(&v), "ratify-quorum-not-met", "{v}");
    let (v, _) = new(
        &root,
        r#"{"title": "Replace", "state": "superseded", "supersedes": [{"decision": "ws-001"}]}"#,
        &[],
    );
    assert_eq!(code_of(&v), "ratify-quorum-not-met", "{v}");
}

#[test]
fn hand_edits_the_digest_cannot_see_and_invisible_names_are_refused_or_unmasked() {
    let (_d, root) = workspace();
    // A key the digest rule would skip.
    std::fs::write(
        root.join("decisions/ws-002-hidden.md"),
        "---\nid: \"ws-002\"\ntitle: \"Hidden\"\nstate: \"proposed\"\nreviews: []\n-budget: \"1M\"\n---\n",
    )
    .unwrap();
    // A record closed by hand, with no seal.
    std::fs::write(
        root.join("decisions/ws-003-closed.md"),
        "---\nid: \"ws-003\"\ntitle: \"Closed\"\nstate: \"ratified\"\n---\n",
    )
    .unwrap();
    let v = records(&root);
    assert_eq!(
        record_at(&v, "decisions/ws-002-hidden.md")["reasons"][0]["code"],
        "record-unparseable"
    );
    assert_eq!(
        record(&v, "ws-003")["reasons"][0]["code"],
        "record-seal-mismatch"
    );
    // The decider under a zero-width space is still the decider.
    doc(
        &root,
        &[
            "workspace",
            "records",
            "amend",
            "ws-001",
            "--set",
            "-",
            "--by",
            "lex",
        ],
        Some("{}"),
    );
    review(&root, "ws-001", "agree", "le\u{200b}x", None);
    let q = record(&records(&root), "ws-001")["quorum"].clone();
    assert_eq!(
        q["notCounted"][0]["reason"]["code"], "review-decider",
        "{q}"
    );
    let (v, _) = review(&root, "ws-001", "agree", " \u{200b} ", None);
    assert_eq!(code_of(&v), "write-usage-invalid", "{v}");
}

#[test]
fn a_kinds_schema_is_read_only_from_inside_the_repository_and_only_as_a_file() {
    let (d, root) = workspace();
    std::fs::write(
        d.path().join("outside.json"),
        r#"{"$id": "urn:test:decision:1", "type": "object"}"#,
    )
    .unwrap();
    let kind = KIND.replace(
        "path: \"decision.schema.json\"",
        "path: \"../../outside.json\"",
    );
    // Edited where the base holds it, the kind keeps the base's rules: nothing changes.
    std::fs::write(root.join("decisions/decision.kind.mjs"), &kind).unwrap();
    let (v, code) = doc(
        &root,
        &["workspace", "records", "--kind", "decision", "--json"],
        None,
    );
    assert_eq!(code, 0, "the committed kind is read at base: {v}");
    // A kind new in the working tree is read from it, and its schema must stay inside.
    std::fs::write(root.join("decisions/evil.kind.mjs"), &kind).unwrap();
    let (v, _) = doc(
        &root,
        &[
            "workspace",
            "records",
            "--kind",
            "decisions/evil.kind.mjs",
            "--json",
        ],
        None,
    );
    assert_eq!(code_of(&v), "schema-unreadable", "{v}");
    assert!(
        v["error"]["message"]
            .as_str()
            .unwrap()
            .contains("outside the repository"),
        "{v}"
    );
    let fifo = root.join("decisions/fifo.json");
    assert!(
        Command::new("mkfifo")
            .arg(&fifo)
            .status()
            .unwrap()
            .success()
    );
    std::fs::write(
        root.join("decisions/evil.kind.mjs"),
        KIND.replace("decision.schema.json", "fifo.json"),
    )
    .unwrap();
    let t = std::time::Instant::now();
    let (v, _) = doc(
        &root,
        &[
            "workspace",
            "records",
            "--kind",
            "decisions/evil.kind.mjs",
            "--json",
        ],
        None,
    );
    assert_eq!(code_of(&v), "schema-unreadable", "{v}");
    assert!(
        t.elapsed() < std::time::Duration::from_secs(5),
        "a FIFO is not waited on"
    );
}

fn head(dir: &Path) -> String {
    let out = Command::new("git")
        .args(["rev-parse", "HEAD"])
        .current_dir(dir)
        .output()
        .unwrap();
    String::from_utf8_lossy(&out.stdout).trim().to_owned()
}

fn decision(id: &str, state: &str, extra: &str) -> String {
    format!("---\nid: \"{id}\"\ntitle: \"T {id}\"\nstate: \"{state}\"\n{extra}---\n\n# {id}\n")
}

/// `records --since`: each change kind, in the document's order and by id within each; the
/// same changes to a commit with `--at`; the declared set; `--id`; and each refusal.
#[test]
fn records_since_lists_what_changed_between_two_revisions() {
    let (_d, root) = workspace();
    let dec = root.join("decisions");
    let (x, y) = ("a".repeat(64), "b".repeat(64));
    std::fs::write(
        dec.join("ws-002-second.md"),
        decision(
            "ws-002",
            "decided",
            &format!("decided_by: \"lex\"\nevidence:\n  - path: \"docs/README.md\"\n    sha256: \"{x}\"\nreviews:\n  - reviewer: \"alice\"\n    verdict: \"agree\"\n    on: \"2026-12-01\"\n"),
        ),
    )
    .unwrap();
    std::fs::write(
        dec.join("ws-009-gone.md"),
        decision("ws-009", "proposed", ""),
    )
    .unwrap();
    git(&root, &["add", "-A"]);
    git(&root, &["commit", "-qm", "base"]);
    let base = head(&root);

    // The working tree: ws-001 decided, ws-002 a second verdict (the first kept, and gaining
    // addressed_by does not make it new) and its pin moved, ws-003 new and superseding
    // ws-002 with a verdict of its own, ws-009 removed.
    std::fs::write(
        dec.join("ws-001-first.md"),
        decision("ws-001", "decided", "decided_by: \"lex\"\nevidence: []\n"),
    )
    .unwrap();
    std::fs::write(
        dec.join("ws-002-second.md"),
        decision(
            "ws-002",
            "decided",
            &format!("decided_by: \"lex\"\nevidence:\n  - path: \"docs/README.md\"\n    sha256: \"{y}\"\nreviews:\n  - reviewer: \"alice\"\n    verdict: \"agree\"\n    on: \"2026-12-01\"\n  - reviewer: \"bob\"\n    verdict: \"dissent\"\n    note: \"no\"\n    on: \"2026-12-02\"\n"),
        ),
    )
    .unwrap();
    std::fs::write(
        dec.join("ws-003-third.md"),
        decision(
            "ws-003",
            "decided",
            "decided_by: \"lex\"\nsupersedes:\n  - decision: \"ws-002\"\nevidence: []\nreviews:\n  - reviewer: \"carol\"\n    verdict: \"agree\"\n    on: \"2026-12-03\"\n",
        ),
    )
    .unwrap();
    std::fs::remove_file(dec.join("ws-009-gone.md")).unwrap();

    let expected = json!([
        {"change": "new", "id": "ws-003", "path": "decisions/ws-003-third.md", "state": "decided"},
        {"change": "removed", "id": "ws-009", "path": "decisions/ws-009-gone.md", "state": "proposed"},
        {"change": "state", "id": "ws-001", "from": "proposed", "to": "decided"},
        {"change": "verdict", "id": "ws-002", "principal": "bob", "verdict": "dissent", "index": 1},
        {"change": "verdict", "id": "ws-003", "principal": "carol", "verdict": "agree", "index": 0},
        {"change": "supersession", "id": "ws-003", "supersedes": "ws-002"},
        {"change": "pin", "id": "ws-002", "path": "docs/README.md", "from": x, "to": y},
    ]);
    let summary =
        json!({"new": 1, "removed": 1, "state": 1, "verdict": 2, "supersession": 1, "pin": 1});
    let args = [
        "workspace",
        "records",
        "--kind",
        "decision",
        "--since",
        &base,
        "--json",
    ];
    let (v, code) = doc(&root, &args, None);
    assert_eq!(code, 0, "{v}");
    assert_eq!(v["changes"], expected, "{v:#}");
    assert_eq!(v["summary"], summary);
    assert_eq!(
        (v["since"].as_str(), &v["at"]),
        (Some(base.as_str()), &Value::Null)
    );
    assert_eq!(v["kind"]["file"], "decisions/decision.kind.mjs");

    // Committed, and read to that commit with --at: the same changes.
    git(&root, &["add", "-A"]);
    git(&root, &["commit", "-qm", "after"]);
    let after = head(&root);
    let (v, _) = doc(
        &root,
        &[
            "workspace",
            "records",
            "--kind",
            "decision",
            "--since",
            &base,
            "--at",
            &after,
            "--json",
        ],
        None,
    );
    assert_eq!(
        (v["changes"].clone(), v["at"].clone()),
        (expected.clone(), json!(after))
    );
    // Nothing changed between a commit and itself.
    let (v, _) = doc(
        &root,
        &[
            "workspace",
            "records",
            "--kind",
            "decision",
            "--since",
            "HEAD",
            "--json",
        ],
        None,
    );
    assert_eq!(v["changes"], json!([]));

    // --id keeps one record's changes; without --kind, every declared kind.
    let (v, _) = doc(
        &root,
        &[
            "workspace",
            "records",
            "--kind",
            "decision",
            "--since",
            &base,
            "--id",
            "ws-002",
            "--json",
        ],
        None,
    );
    let ids: Vec<&str> = v["changes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["id"].as_str().unwrap())
        .collect();
    assert_eq!(ids, ["ws-002", "ws-002"]);
    let (v, code) = doc(
        &root,
        &["workspace", "records", "--since", &base, "--json"],
        None,
    );
    assert_eq!(code, 0);
    assert_eq!(v["kinds"][0]["changes"], expected);
    assert_eq!(
        v["kinds"][0]["declared"]["path"],
        "decisions/decision.kind.mjs"
    );

    // The human form.
    let out = chant(
        &root,
        &[
            "workspace",
            "records",
            "--kind",
            "decision",
            "--since",
            &base,
        ],
    );
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.contains("ws-003  new, decided  (decisions/ws-003-third.md)\n"),
        "{text}"
    );
    assert!(text.contains("ws-002  verdict dissent by bob\n"), "{text}");
    assert!(text.contains(&format!(
        "ws-002  pin docs/README.md {} to {}\n",
        &x[..12],
        &y[..12]
    )));
    assert!(
        text.ends_with(&format!(
            "7 changes since {} to the working tree: 1 new, 1 removed, 1 state, 2 verdicts, 1 supersessions, 1 pins\n",
            &base[..8]
        )),
        "{text}"
    );

    // Refusals: a revision naming nothing, a session-shaped one, flags it takes none of.
    let (v, code) = doc(
        &root,
        &[
            "workspace",
            "records",
            "--kind",
            "decision",
            "--since",
            "nope",
            "--json",
        ],
        None,
    );
    assert_eq!((code_of(&v), code), ("since-rev-unknown", 1));
    assert_eq!(
        v["error"]["message"],
        "--since nope names no commit in this repository"
    );
    let (v, _) = doc(
        &root,
        &[
            "workspace",
            "records",
            "--kind",
            "decision",
            "--since",
            "S-0002",
            "--json",
        ],
        None,
    );
    assert_eq!(code_of(&v), "since-session-unknown");
    let (v, _) = doc(
        &root,
        &[
            "workspace",
            "records",
            "--kind",
            "decision",
            "--since",
            "HEAD",
            "--at",
            "nope",
            "--json",
        ],
        None,
    );
    assert_eq!(code_of(&v), "revision-unknown");
    for flag in [
        &["--current"][..],
        &["--base", "main"],
        &["--require", "attested"],
    ] {
        let mut a = vec![
            "workspace",
            "records",
            "--kind",
            "decision",
            "--since",
            "HEAD",
            "--json",
        ];
        a.extend_from_slice(flag);
        let out = chant(&root, &a);
        assert_eq!(out.status.code(), Some(1), "{flag:?}");
        assert!(out.stdout.is_empty());
        assert!(String::from_utf8_lossy(&out.stderr).contains(
            "--since compares two revisions and takes no --current, --require or --base"
        ));
    }
    let out = chant(
        &root,
        &["workspace", "records", "--since", "HEAD", "--uncommitted"],
    );
    assert_eq!(out.status.code(), Some(2), "clap refuses the pair");

    // Over MCP, the command's document unchanged; a pair the command refuses is an error.
    let mut s = ServerProcess::spawn_in(BIN, ["serve", "mcp"], &root);
    s.initialize(Some("2025-11-25"));
    let r = s.request(
        1,
        "tools/call",
        json!({"name": "workspace-records", "arguments": {"kind": "decision", "since": base}}),
    );
    let v = r["result"]["structuredContent"].clone();
    conforms(&v);
    assert_eq!(v["changes"], expected, "{r}");
    let r = s.request(
        2,
        "tools/call",
        json!({"name": "workspace-records", "arguments": {"since": "HEAD", "current": true}}),
    );
    assert_eq!(r["result"]["isError"], true, "{r}");
    let r = s.request(
        3,
        "tools/call",
        json!({"name": "workspace-records", "arguments": {"since": "-p"}}),
    );
    assert_eq!(r["result"]["isError"], true, "{r}");
    assert!(
        r.to_string()
            .contains(r#"since may not start with -: \"-p\""#),
        "{r}"
    );
}

/// An ed25519 key pair in `dir`: the private key's path and the public key's text.
fn keypair(dir: &Path, name: &str) -> (PathBuf, String) {
    let key = dir.join(name);
    let out = Command::new("ssh-keygen")
        .args(["-q", "-t", "ed25519", "-N", "", "-C", name, "-f"])
        .arg(&key)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let public = std::fs::read_to_string(key.with_extension("pub")).unwrap();
    let mut f = public.split_whitespace();
    (key, format!("{} {}", f.next().unwrap(), f.next().unwrap()))
}

fn verdict_of<'a>(q: &'a Value, reviewer: &str) -> (&'static str, &'a Value) {
    for list in ["counted", "notCounted"] {
        if let Some(v) = q[list]
            .as_array()
            .unwrap()
            .iter()
            .rev()
            .find(|v| v["reviewer"] == reviewer)
        {
            return (
                if list == "counted" {
                    "counted"
                } else {
                    "notCounted"
                },
                v,
            );
        }
    }
    panic!("no verdict by {reviewer} in {q}")
}

/// Seals made with real ssh keys: an author seal on amend, a verdict seal on review (git's
/// configured key, and a key file), checked against the signers file at base. What an attacker
/// would try does not count: a seal copied to another reviewer's verdict, a sealed verdict
/// edited after, a key the signers file does not list (also under a wildcard line), a seal
/// written by hand, and a sealed record amended without resealing.
#[test]
fn seals_are_made_with_ssh_keys_and_count_only_when_they_verify_at_base() {
    let (d, root) = workspace();
    let keys = d.path().join("keys");
    std::fs::create_dir_all(&keys).unwrap();
    let (alice_key, alice_pub) = keypair(&keys, "alice");
    let (lex_key, lex_pub) = keypair(&keys, "lex");
    let (carol_key, carol_pub) = keypair(&keys, "carol");
    std::fs::create_dir_all(root.join(".chant")).unwrap();
    std::fs::write(
        root.join(".chant/allowed_signers"),
        format!("alice {alice_pub}\nlex namespaces=\"chant-record,chant-review\" {lex_pub}\n* {carol_pub}\n"),
    )
    .unwrap();
    git(&root, &["add", "-A"]);
    git(&root, &["commit", "-qm", "signers"]);
    git(&root, &["config", "gpg.format", "ssh"]);
    git(
        &root,
        &["config", "user.signingkey", alice_key.to_str().unwrap()],
    );

    // The author seal: lex decides ws-001 and seals it with a key file.
    let lex_file = lex_key.to_str().unwrap();
    let (v, code) = doc(
        &root,
        &[
            "workspace",
            "records",
            "amend",
            "ws-001",
            "--set",
            "-",
            "--by",
            "lex",
            "--sign",
            lex_file,
        ],
        Some(r#"{"state": "decided"}"#),
    );
    assert_eq!(code, 0, "{v}");
    assert_eq!(v["seal"]["signer"], "lex");
    assert!(v["seal"]["key"].as_str().unwrap().starts_with("SHA256:"));
    assert_eq!(v["changed"].as_array().unwrap().last().unwrap(), "seal");
    let text = std::fs::read_to_string(root.join("decisions/ws-001-first.md")).unwrap();
    assert!(text.contains("\nseal:\n  signer: \"lex\"\n"), "{text}");
    let r = record(&records(&root), "ws-001").clone();
    assert_eq!(r["attested"], true, "{r:#}");
    assert!(
        !r["warnings"].to_string().contains("record-unattested"),
        "{r:#}"
    );

    // Verdicts: alice with git's configured key, carol with hers (listed only under a
    // wildcard, which a seal does not trust), bob with none.
    for (by, extra) in [
        ("alice", vec!["--sign"]),
        ("carol", vec!["--sign", carol_key.to_str().unwrap()]),
        ("bob", vec![]),
    ] {
        let mut args = vec![
            "workspace",
            "records",
            "review",
            "ws-001",
            "--verdict",
            "agree",
            "--by",
            by,
        ];
        args.extend(extra);
        let (v, code) = doc(&root, &args, None);
        assert_eq!(code, 0, "{v}");
        assert_eq!(v["review"].get("seal").is_some(), by != "bob", "{v}");
    }
    let q = record(&records(&root), "ws-001")["quorum"].clone();
    let (list, alice) = verdict_of(&q, "alice");
    assert_eq!(
        (list, &alice["attested"]),
        ("counted", &json!(true)),
        "{q:#}"
    );
    let (list, carol) = verdict_of(&q, "carol");
    assert_eq!(list, "notCounted");
    assert_eq!(carol["reason"]["code"], "review-unattested");
    assert_eq!(
        carol["attestation"]["code"], "seal-signer-unlisted",
        "{carol}"
    );
    let (_, bob) = verdict_of(&q, "bob");
    assert_eq!(bob["attestation"]["code"], "seal-missing");
    assert_eq!(bob["reason"]["code"], "review-unattested");

    // Forgeries in the working tree: alice's seal copied onto a verdict by mallory, and a
    // sealed verdict turned into a dissent after it was signed.
    let text = std::fs::read_to_string(root.join("decisions/ws-001-first.md")).unwrap();
    let start = text.find("  - reviewer: \"alice\"").unwrap();
    let end = start + text[start..].find("  - reviewer: \"carol\"").unwrap();
    let alice_block = &text[start..end];
    let forged = alice_block.replace("reviewer: \"alice\"", "reviewer: \"mallory\"");
    let flipped = alice_block.replace(
        "verdict: \"agree\"",
        "verdict: \"dissent\"\n    note: \"no\"",
    );
    std::fs::write(
        root.join("decisions/ws-001-first.md"),
        format!("{}{flipped}{forged}{}", &text[..start], &text[end..]),
    )
    .unwrap();
    let q = record(&records(&root), "ws-001")["quorum"].clone();
    assert_eq!(q["agreed"], 0, "{q:#}");
    let (_, mallory) = verdict_of(&q, "mallory");
    assert_eq!(
        mallory["attestation"]["code"], "seal-signature-invalid",
        "{mallory}"
    );
    let (_, alice) = verdict_of(&q, "alice");
    assert_eq!(
        (
            alice["attested"].clone(),
            alice["attestation"]["code"].clone()
        ),
        (json!(false), json!("seal-signature-invalid"))
    );
    std::fs::write(root.join("decisions/ws-001-first.md"), &text).unwrap();

    // A seal is written only by --sign; an amendment that moves the digest removes it.
    let (v, _) = doc(
        &root,
        &["workspace", "records", "amend", "ws-001", "--set", "-"],
        Some(r#"{"seal": {"signer": "lex", "key": "SHA256:x", "signature": "x"}}"#),
    );
    assert_eq!(code_of(&v), "write-input-invalid");
    let (v, code) = doc(
        &root,
        &["workspace", "records", "amend", "ws-001", "--set", "-"],
        Some(
            r#"{"evidence": [{"path": "docs/README.md", "sha256": "0000000000000000000000000000000000000000000000000000000000000000"}]}"#,
        ),
    );
    assert_eq!(code, 0, "{v}");
    assert!(
        v["sealDropped"]
            .as_str()
            .unwrap()
            .starts_with("ws-001 was sealed by lex, and the amendment moves its digest"),
        "{v}"
    );
    assert_eq!(v["changed"], json!(["evidence", "seal"]));
    let r = record(&records(&root), "ws-001").clone();
    assert_eq!(r["attested"], false);
    assert!(
        r["warnings"].to_string().contains("record-unattested"),
        "{r:#}"
    );
    // Resealed as it is, with nothing else changed.
    let (v, code) = doc(
        &root,
        &[
            "workspace",
            "records",
            "amend",
            "ws-001",
            "--set",
            "-",
            "--sign",
            lex_file,
        ],
        Some("{}"),
    );
    assert_eq!((code, v["changed"].clone()), (0, json!(["seal"])), "{v}");
    assert_eq!(record(&records(&root), "ws-001")["attested"], true);

    // No author to seal: refused, nothing written.
    let (v, _) = new(&root, r#"{"title": "Unowned"}"#, &["--sign"]);
    assert_eq!(code_of(&v), "record-sign-failed");
    assert!(
        v["error"]["message"]
            .as_str()
            .unwrap()
            .contains("names no decided_by"),
        "{v}"
    );

    // Over MCP, sign: true seals with the host's key (its global git config), never with
    // one the repository's config names, which an agent can write.
    let serve = |global: &Path| {
        let mut cmd = Command::new(BIN);
        cmd.args(["serve", "mcp"])
            .current_dir(&root)
            .env("GIT_CONFIG_GLOBAL", global)
            .env("GIT_CONFIG_NOSYSTEM", "1");
        let mut s = ServerProcess::from_command(cmd);
        s.initialize(Some("2025-11-25"));
        s
    };
    let empty = keys.join("empty.gitconfig");
    std::fs::write(&empty, "").unwrap();
    let mut s = serve(&empty);
    let r = s.request(1, "tools/call", json!({"name": "records-review", "arguments": {"id": "ws-001", "verdict": "agree", "by": "alice", "sign": true}}));
    let v = r["result"]["structuredContent"].clone();
    assert_eq!(code_of(&v), "review-sign-failed", "{r}");
    assert!(
        v["error"]["message"]
            .as_str()
            .unwrap()
            .contains("never the repository's")
    );
    drop(s);
    let host = keys.join("host.gitconfig");
    std::fs::write(
        &host,
        format!(
            "[gpg]\n\tformat = ssh\n[user]\n\tsigningkey = {}\n",
            alice_key.display()
        ),
    )
    .unwrap();
    let mut s = serve(&host);
    let r = s.request(1, "tools/call", json!({"name": "records-review", "arguments": {"id": "ws-001", "verdict": "agree", "by": "alice", "sign": true}}));
    let v = r["result"]["structuredContent"].clone();
    conforms(&v);
    assert_eq!(v["review"]["seal"]["signer"], "alice", "{r}");
    drop(s);
    let q = record(&records(&root), "ws-001")["quorum"].clone();
    let (list, alice) = verdict_of(&q, "alice");
    assert_eq!(
        (list, &alice["attested"]),
        ("counted", &json!(true)),
        "{q:#}"
    );
}

const SESSION_KIND: &str = r#"export const recordKind = {
  name: "session",
  location: { dir: ".", match: "^S-[0-9]{3,}-.+\\.md$" },
  format: "markdown-front-matter",
  schema: { id: "urn:test:session:1", path: "session.schema.json" },
  idField: "id",
  stateField: "state",
  states: ["open", "closed"],
  closedStates: ["closed"],
  session: { verdicts: "verdicts", seal: "closed_digest", subjects: { kind: "../decisions/decision.kind.mjs" },
             openedRev: "opened_rev", closedRev: "closed_rev", closedOn: "closed" },
};
"#;

/// Adds the session kind to the workspace of `root` and to its declaration.
fn declare_sessions(root: &Path) {
    std::fs::create_dir_all(root.join("sessions")).unwrap();
    std::fs::write(root.join("sessions/session.kind.mjs"), SESSION_KIND).unwrap();
    std::fs::write(root.join("sessions/session.schema.json"), SESSION_SCHEMA).unwrap();
    let decl = std::fs::read_to_string(root.join("chant.workspace.json"))
        .unwrap()
        .replace(
            r#""records": [{"kind": "decisions/decision.kind.mjs"}]"#,
            r#""records": [{"kind": "decisions/decision.kind.mjs"}, {"kind": "sessions/session.kind.mjs"}]"#,
        );
    std::fs::write(root.join("chant.workspace.json"), decl).unwrap();
}

/// A closed session's text, reopened by hand: open, and without its close fields.
fn reopen(text: &str) -> String {
    text.replace("state: \"closed\"", "state: \"open\"")
        .lines()
        .filter(|l| !l.starts_with("closed"))
        .map(|l| format!("{l}\n"))
        .collect()
}

const SESSION_SCHEMA: &str = r#"{"$schema": "https://json-schema.org/draft/2020-12/schema", "$id": "urn:test:session:1",
 "type": "object", "required": ["id", "title", "state"], "additionalProperties": false,
 "properties": {"id": {"type": "string"}, "title": {"type": "string"}, "state": {"enum": ["open", "closed"]},
  "verdicts": {"type": "array"}, "opened_rev": {"type": ["string", "null"]}, "closed_rev": {"type": ["string", "null"]},
  "closed": {"type": ["string", "null"]}, "closed_digest": {"type": "string"}}}"#;

/// Review sessions: a session opens at HEAD, a verdict given in it is written to the record and
/// to the session in one command, the session lists what cites it, `--since <session>` compares
/// from where it opened, and `close` seals it with the state, time and revision it closed at;
/// then it takes no verdict, no amendment and no second close, and an edit breaks its seal.
#[test]
fn a_review_session_opens_gathers_verdicts_closes_sealed_and_is_compared_by_id() {
    let (_d, root) = workspace();
    declare_sessions(&root);
    git(&root, &["add", "-A"]);
    git(&root, &["commit", "-qm", "sessions"]);
    let opened_at = head(&root);

    let (v, code) = doc(
        &root,
        &[
            "workspace",
            "records",
            "new",
            "--kind",
            "session",
            "--prefix",
            "S",
            "--from",
            "-",
        ],
        Some(r#"{"title": "First walk"}"#),
    );
    assert_eq!(
        (code, v["id"].clone(), v["state"].clone()),
        (0, json!("S-001"), json!("open")),
        "{v}"
    );
    let session_file = root.join("sessions/S-001-first-walk.md");
    let text = std::fs::read_to_string(&session_file).unwrap();
    assert!(
        text.contains(&format!("opened_rev: \"{opened_at}\"")),
        "{text}"
    );
    // The revisions are chant's to write.
    let (v, _) = doc(
        &root,
        &[
            "workspace",
            "records",
            "new",
            "--kind",
            "session",
            "--prefix",
            "S",
            "--from",
            "-",
        ],
        Some(r#"{"title": "Forged", "closed_rev": "abc"}"#),
    );
    assert_eq!(code_of(&v), "write-input-invalid");
    git(&root, &["add", "-A"]);
    git(&root, &["commit", "-qm", "open S-001"]);

    // A verdict in the session lands in both files.
    let review_in = |id: &str, by: &str, sid: &str| {
        doc(
            &root,
            &[
                "workspace",
                "records",
                "review",
                id,
                "--kind",
                "decision",
                "--verdict",
                "agree",
                "--by",
                by,
                "--session",
                sid,
            ],
            None,
        )
    };
    let (v, code) = review_in("ws-001", "alice", "S-001");
    assert_eq!(code, 0, "{v}");
    assert_eq!(v["session"]["id"], "S-001");
    assert_eq!(v["session"]["path"], "sessions/S-001-first-walk.md");
    assert_eq!(v["session"]["verdict"]["record"], "ws-001");
    assert_eq!(v["review"]["session"], "S-001");
    let sessions = |root: &Path| {
        let (v, code) = doc(
            root,
            &["workspace", "records", "--kind", "session", "--json"],
            None,
        );
        assert_eq!(code, 0, "{v}");
        v
    };
    let s = record(&sessions(&root), "S-001").clone();
    assert_eq!(s["valid"], true, "{s:#}");
    assert_eq!(s["data"]["verdicts"][0]["principal"], "alice");
    assert_eq!(
        s["citedBy"],
        json!([{"id": "ws-001", "path": "decisions/ws-001-first.md", "index": 0, "reviewer": "alice", "verdict": "agree"}])
    );
    let (v, _) = review_in("ws-001", "bob", "S-404");
    assert_eq!(code_of(&v), "session-unknown");

    // --since a session: from the commit it opened at, to the working tree while it is open.
    let (v, code) = doc(
        &root,
        &[
            "workspace",
            "records",
            "--kind",
            "decision",
            "--since",
            "S-001",
            "--json",
        ],
        None,
    );
    assert_eq!(code, 0, "{v}");
    assert_eq!(v["since"], json!(opened_at));
    assert_eq!(
        (
            v["session"]["sinceFrom"].clone(),
            v["session"]["atFrom"].clone()
        ),
        (json!("opened-rev"), json!("working-tree"))
    );
    assert_eq!(v["session"]["reasons"][0]["code"], "since-session-open");
    assert_eq!(
        v["changes"],
        json!([{"change": "verdict", "id": "ws-001", "principal": "alice", "verdict": "agree", "index": 0, "session": "S-001"}])
    );

    // Closed: the first closed state, the time and HEAD, sealed last; without --kind, through
    // the declaration's one session kind.
    git(&root, &["add", "-A"]);
    git(&root, &["commit", "-qm", "alice in S-001"]);
    let closed_at = head(&root);
    let (v, code) = doc(&root, &["workspace", "records", "close", "S-001"], None);
    assert_eq!(code, 0, "{v}");
    assert_eq!(v["closedRev"], json!(closed_at));
    let mut changed: Vec<String> = v["changed"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c.as_str().unwrap().to_owned())
        .collect();
    changed.sort();
    assert_eq!(changed, ["closed", "closed_digest", "closed_rev", "state"]);
    let digest = v["seal"]["digest"].as_str().unwrap().to_owned();
    assert!(digest.starts_with("sha256:") && digest.len() == 71, "{v}");
    let text = std::fs::read_to_string(&session_file).unwrap();
    assert!(
        text.ends_with(&format!(
            "closed_digest: \"{digest}\"\n---\n\n# First walk\n"
        )),
        "{text}"
    );
    let s = record(&sessions(&root), "S-001").clone();
    assert_eq!(
        (s["state"].clone(), s["valid"].clone()),
        (json!("closed"), json!(true)),
        "{s:#}"
    );

    // Closed means closed.
    let (v, code) = doc(&root, &["workspace", "records", "close", "S-001"], None);
    assert_eq!((code_of(&v), code), ("record-closed", 1));
    let (v, _) = review_in("ws-001", "bob", "S-001");
    assert_eq!(code_of(&v), "session-not-open");
    let (v, _) = doc(
        &root,
        &[
            "workspace",
            "records",
            "amend",
            "S-001",
            "--kind",
            "session",
            "--set",
            "-",
        ],
        Some(r#"{"title": "Renamed"}"#),
    );
    assert_eq!(code_of(&v), "record-closed");
    assert_eq!(std::fs::read_to_string(&session_file).unwrap(), text);
    // Committed: --since the session runs to the commit that carries the close.
    git(&root, &["add", "-A"]);
    git(&root, &["commit", "-qm", "close S-001"]);
    let close_commit = head(&root);
    let (v, _) = doc(
        &root,
        &[
            "workspace",
            "records",
            "--kind",
            "decision",
            "--since",
            "S-001",
            "--json",
        ],
        None,
    );
    assert_eq!(
        (v["at"].clone(), v["session"]["atFrom"].clone()),
        (json!(close_commit), json!("close-commit")),
        "{v}"
    );
    assert_eq!(v["session"]["reasons"], json!([]));

    // An edit by hand breaks the seal; a verdict naming no subject record is invalid.
    std::fs::write(
        &session_file,
        text.replace("verdict: \"agree\"", "verdict: \"dissent\""),
    )
    .unwrap();
    std::fs::write(
        root.join("sessions/S-002-other.md"),
        "---\nid: \"S-002\"\ntitle: \"Other\"\nstate: \"open\"\nverdicts:\n  - record: \"ws-404\"\n    principal: \"bob\"\n    verdict: \"agree\"\n---\n",
    )
    .unwrap();
    let doc_now = sessions(&root);
    let codes = |id: &str| -> Vec<String> {
        record(&doc_now, id)["reasons"]
            .as_array()
            .unwrap()
            .iter()
            .map(|r| r["code"].as_str().unwrap().to_owned())
            .collect()
    };
    assert_eq!(codes("S-001"), ["session-seal-mismatch"]);
    assert_eq!(codes("S-002"), ["session-verdict-unknown-record"]);

    // A decision is no session.
    let (v, _) = doc(
        &root,
        &[
            "workspace",
            "records",
            "close",
            "ws-001",
            "--kind",
            "decision",
        ],
        None,
    );
    assert_eq!(code_of(&v), "write-usage-invalid");
}

/// `ls` lists each member's generated files (declared, and recorded by chant in the member's
/// `.chant/generated.json`, merged by path) with the CI jobs a forge pipeline defines, and
/// every declared diagram, the workspace's own first.
#[test]
fn ls_lists_generated_files_with_their_jobs_and_the_declared_diagrams() {
    let (_d, root) = workspace();
    let decl = std::fs::read_to_string(root.join("chant.workspace.json")).unwrap().replace(
        r#"{"name": "infra", "dir": "infra", "kind": "chant"}"#,
        r#"{"name": "infra", "dir": "infra", "kind": "chant",
            "generated": [{"path": ".gitlab-ci.yml", "generator": "chant build src -o .gitlab-ci.yml"},
                          {"path": "notes.md", "generator": "x", "handWritten": {"because": "kept by hand"}}],
            "diagrams": [{"name": "infra-flow", "title": "Infra", "source": "infra/flow.d2", "render": "infra/flow.svg",
                          "renderer": {"tool": "d2", "version": "0.7.0"}}]}"#,
    ).replace(
        r#""records": [{"kind": "decisions/decision.kind.mjs"}],"#,
        r#""records": [{"kind": "decisions/decision.kind.mjs"}], "minReader": "0.1.0",
  "diagrams": [{"name": "overview", "title": "Overview", "source": null, "render": "docs/overview.svg",
                "renderer": {"tool": "graphviz", "version": "12.1.0", "args": ["-Kdot"]}}],"#,
    );
    std::fs::write(root.join("chant.workspace.json"), &decl).unwrap();
    std::fs::write(
        root.join("infra/.gitlab-ci.yml"),
        "stages: [test]\n.hidden:\n  script: [x]\ntest:\n  stage: test\n  script: [\"true\"]\n",
    )
    .unwrap();
    std::fs::create_dir_all(root.join("infra/.chant")).unwrap();
    std::fs::create_dir_all(root.join(".github/workflows")).unwrap();
    std::fs::write(
        root.join(".github/workflows/chant-infra-prod.yml"),
        "on: push\njobs:\n  deploy:\n    name: Deploy infra\n    runs-on: ubuntu-latest\n  plan:\n    runs-on: ubuntu-latest\n",
    )
    .unwrap();
    std::fs::write(
        root.join("infra/.chant/generated.json"),
        r#"{"schema": 1, "files": [
          {"path": ".github/workflows/chant-infra-prod.yml", "command": "chant build --components --generate github --env prod", "env": "prod"},
          {"path": "infra/.gitlab-ci.yml", "command": "ignored: the declaration names it", "env": "staging"},
          {"path": "../outside.yml", "command": "x", "env": null}]}"#,
    )
    .unwrap();
    let (v, code) = doc(&root, &["workspace", "ls", "--json"], None);
    assert_eq!(code, 0, "{v}");
    let infra = v["members"]
        .as_array()
        .unwrap()
        .iter()
        .find(|m| m["name"] == "infra")
        .unwrap();
    assert_eq!(
        infra["generated"],
        json!([
            {"path": ".github/workflows/chant-infra-prod.yml", "command": "chant build --components --generate github --env prod", "env": "prod", "jobs": ["Deploy infra", "plan"]},
            {"path": "infra/.gitlab-ci.yml", "command": "chant build src -o .gitlab-ci.yml", "env": "staging", "jobs": ["test"]},
        ]),
        "{infra:#}"
    );
    assert_eq!(
        v["diagrams"],
        json!([
            {"name": "overview", "title": "Overview", "source": null, "render": "docs/overview.svg",
             "renderer": {"tool": "graphviz", "version": "12.1.0", "args": ["-Kdot"]}, "member": null},
            {"name": "infra-flow", "title": "Infra", "source": "infra/flow.d2", "render": "infra/flow.svg",
             "renderer": {"tool": "d2", "version": "0.7.0", "args": []}, "member": "infra"},
        ])
    );
    // A pipeline that does not parse, or is gone, has unknown jobs.
    std::fs::write(root.join("infra/.gitlab-ci.yml"), "test: [unclosed\n").unwrap();
    std::fs::remove_file(root.join(".github/workflows/chant-infra-prod.yml")).unwrap();
    let (v, _) = doc(&root, &["workspace", "ls", "--json"], None);
    let infra = v["members"]
        .as_array()
        .unwrap()
        .iter()
        .find(|m| m["name"] == "infra")
        .unwrap();
    let jobs: Vec<&Value> = infra["generated"]
        .as_array()
        .unwrap()
        .iter()
        .map(|g| &g["jobs"])
        .collect();
    assert_eq!(jobs, [&Value::Null, &Value::Null]);
}

/// What a hostile agent writes into a project does not crash a person's read, run a program
/// the project's config names, or make a revision mean something else: a seal ssh-keygen
/// stops reading early (SIGPIPE killed the read), a `core.fsmonitor` hook, a record of
/// 20 MiB at a revision, a declaration that is a directory, `^REV`.
#[test]
fn hostile_inputs_neither_crash_a_read_nor_run_the_projects_programs() {
    let (d, root) = workspace();
    let digest = "x".repeat(1_000_000);
    std::fs::write(
        root.join("decisions/ws-002-bad-seal.md"),
        format!(
            "---\nid: \"ws-002\"\ntitle: \"Bad\"\nstate: \"proposed\"\nevidence: []\nreviews:\n  - reviewer: \"r\"\n    verdict: \"agree\"\n    on: \"d\"\n    digest: \"{digest}\"\n    seal:\n      signer: \"r\"\n      signature: \"garbage\"\n  - reviewer: \"s\"\n    verdict: \"agree\"\n    on: \"2026-12-07\"\n    digest: \"{}\"\n    seal:\n      signer: \"s\"\n      signature: \"{}\"\n  - reviewer: \"{long}\"\n    verdict: \"agree\"\n    on: \"2026-12-07\"\n    digest: \"{}\"\n    seal:\n      signer: \"{long}\"\n      signature: \"garbage\"\n---\n",
            "a".repeat(64),
            "b".repeat(100_000),
            "a".repeat(64),
            long = "t".repeat(1_000_000),
        ),
    )
    .unwrap();
    let marker = d.path().join("fsmonitor-ran");
    let hook = d.path().join("fsmonitor.sh");
    std::fs::write(&hook, format!("#!/bin/sh\ntouch {}\n", marker.display())).unwrap();
    std::fs::set_permissions(&hook, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
    git(&root, &["config", "core.fsmonitor", hook.to_str().unwrap()]);
    for _ in 0..3 {
        let (v, code) = doc(
            &root,
            &[
                "workspace",
                "records",
                "--kind",
                "decision",
                "--uncommitted",
                "--json",
            ],
            None,
        );
        assert_eq!(code, 0, "{v}");
        let q = record(&v, "ws-002")["quorum"].clone();
        let codes: Vec<&str> = q["counted"]
            .as_array()
            .unwrap()
            .iter()
            .chain(q["notCounted"].as_array().unwrap())
            .map(|e| e["attestation"]["code"].as_str().unwrap())
            .collect();
        assert_eq!(codes.len(), 3, "{q}");
        assert!(codes.iter().all(|c| *c == "seal-signature-invalid"), "{q}");
    }
    assert!(
        !marker.exists(),
        "the read ran the project's core.fsmonitor"
    );

    // A record of 20 MiB committed and removed: the read at that revision skips it unread.
    std::fs::remove_file(root.join("decisions/ws-002-bad-seal.md")).unwrap();
    std::fs::write(
        root.join("decisions/ws-003-huge.md"),
        format!(
            "---\nid: \"ws-003\"\ntitle: \"{}\"\nstate: \"proposed\"\n---\n",
            "a".repeat(20 << 20)
        ),
    )
    .unwrap();
    git(&root, &["add", "-A"]);
    git(&root, &["commit", "-qm", "huge"]);
    let (v, _) = doc(
        &root,
        &[
            "workspace",
            "records",
            "--kind",
            "decision",
            "--at",
            "HEAD",
            "--json",
        ],
        None,
    );
    let huge = record_at(&v, "decisions/ws-003-huge.md");
    assert_eq!(huge["reasons"][0]["code"], "record-unparseable", "{huge}");

    // ^HEAD names no commit.
    let (v, _) = doc(
        &root,
        &[
            "workspace",
            "records",
            "--kind",
            "decision",
            "--since",
            "^HEAD",
            "--json",
        ],
        None,
    );
    assert_eq!(code_of(&v), "since-rev-unknown");
    let (v, _) = doc(
        &root,
        &[
            "workspace",
            "records",
            "--kind",
            "decision",
            "--base",
            "^main",
            "--json",
        ],
        None,
    );
    assert_eq!(code_of(&v), "revision-unknown");

    // A declaration that is a directory is one that cannot be read, not none.
    std::fs::remove_file(root.join("chant.workspace.json")).unwrap();
    std::fs::create_dir(root.join("chant.workspace.json")).unwrap();
    let (v, code) = doc(&root, &["workspace", "ls", "--json"], None);
    assert_eq!((code_of(&v), code), ("declaration-unparseable", 1));
}

/// A second hostile review's findings: a `.git` file naming the repository around it does not
/// move where trust and quorum are read; a session closed at base stays closed; a ref file
/// that is a device does not hang `new`; `ls` reads no pipeline outside the repository; a kind
/// lists no directory outside it; a session id in another file does not shadow a branch.
#[test]
fn a_second_hostile_review_finds_the_walls_standing() {
    let (d, root) = workspace();
    // A nested workspace with its own signers and quorum, committed on main.
    let p = root.join("platform");
    std::fs::create_dir_all(p.join("decisions")).unwrap();
    std::fs::create_dir_all(p.join(".chant")).unwrap();
    std::fs::write(
        p.join("chant.workspace.json"),
        r#"{"name": "platform", "schema": 1, "quorum": 3, "records": [{"kind": "decisions/decision.kind.mjs"}], "members": []}"#,
    )
    .unwrap();
    std::fs::write(p.join("decisions/decision.kind.mjs"), KIND).unwrap();
    std::fs::write(p.join("decisions/decision.schema.json"), SCHEMA).unwrap();
    std::fs::write(
        p.join("decisions/ws-001-first.md"),
        "---\nid: \"ws-001\"\ntitle: \"First\"\nstate: \"decided\"\ndecided_by: \"lex\"\nevidence: []\n---\n",
    )
    .unwrap();
    std::fs::write(
        p.join(".chant/allowed_signers"),
        "alice ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIDJ8yNq1cEMmqUYLuZ8mSO6mYnW6PqC8qPB8S4bfsFZD\n",
    )
    .unwrap();
    let decl = std::fs::read_to_string(root.join("chant.workspace.json")).unwrap().replace(
        r#"{"name": "docs", "dir": "docs""#,
        r#"{"name": "platform", "dir": "platform", "kind": "workspace"}, {"name": "docs", "dir": "docs""#,
    );
    std::fs::write(root.join("chant.workspace.json"), decl).unwrap();
    git(&root, &["add", "-A"]);
    git(&root, &["commit", "-qm", "platform"]);
    let read = |dir: &Path| {
        let (v, code) = doc(
            dir,
            &["workspace", "records", "--kind", "decision", "--json"],
            None,
        );
        assert_eq!(code, 0, "{v}");
        v
    };
    let before = read(&p);
    assert_eq!(before["trust"]["active"], true);
    assert_eq!(record(&before, "ws-001")["quorum"]["need"], 3);
    std::fs::write(p.join(".git"), "gitdir: ../.git\n").unwrap();
    let after = read(&p);
    assert_eq!(
        after["trust"], before["trust"],
        "a .git file moved the base"
    );
    assert_eq!(record(&after, "ws-001")["quorum"]["need"], 3);
    std::fs::remove_file(p.join(".git")).unwrap();

    // A kind whose records directory is outside the repository is no kind.
    std::fs::write(
        root.join("decisions/etc.kind.mjs"),
        KIND.replace(r#"location: { dir: ".","#, r#"location: { dir: "/etc","#),
    )
    .unwrap();
    let (v, _) = doc(
        &root,
        &[
            "workspace",
            "records",
            "--kind",
            "decisions/etc.kind.mjs",
            "--json",
        ],
        None,
    );
    assert_eq!(code_of(&v), "kind-invalid", "{v}");

    // ls reads no pipeline through a link out of the repository.
    let outside = d.path().join("secret.yml");
    std::fs::write(&outside, "SECRET_hunter2:\n  script: [x]\n").unwrap();
    std::fs::create_dir_all(root.join("infra/.gitlab/ci")).unwrap();
    std::os::unix::fs::symlink(&outside, root.join("infra/.gitlab/ci/leak.yml")).unwrap();
    std::fs::create_dir_all(root.join("infra/.chant")).unwrap();
    std::fs::write(
        root.join("infra/.chant/generated.json"),
        r#"{"schema": 1, "files": [{"path": "infra/.gitlab/ci/leak.yml", "command": "x"}]}"#,
    )
    .unwrap();
    let (v, _) = doc(&root, &["workspace", "ls", "--json"], None);
    assert!(!v.to_string().contains("hunter2"), "{v}");

    // Sessions: closed and committed, then reopened by hand.
    declare_sessions(&root);
    let new_session = |title: &str| {
        doc(
            &root,
            &[
                "workspace",
                "records",
                "new",
                "--kind",
                "sessions/session.kind.mjs",
                "--prefix",
                "S",
                "--from",
                "-",
            ],
            Some(&format!(r#"{{"title": "{title}"}}"#)),
        )
    };
    let (v, code) = new_session("Walk");
    assert_eq!(code, 0, "{v}");
    let (v, code) = doc(
        &root,
        &[
            "workspace",
            "records",
            "close",
            "S-001",
            "--kind",
            "sessions/session.kind.mjs",
        ],
        None,
    );
    assert_eq!(code, 0, "{v}");
    git(&root, &["add", "-A"]);
    git(&root, &["commit", "-qm", "S-001 closed"]);
    let file = root.join("sessions/S-001-walk.md");
    let text = std::fs::read_to_string(&file).unwrap();
    let reopened = reopen(&text);
    std::fs::write(&file, reopened).unwrap();
    let (v, _) = doc(
        &root,
        &[
            "workspace",
            "records",
            "--kind",
            "sessions/session.kind.mjs",
            "--json",
        ],
        None,
    );
    assert_eq!(
        record(&v, "S-001")["reasons"][0]["code"],
        "session-seal-mismatch",
        "{v}"
    );
    let (v, _) = doc(
        &root,
        &[
            "workspace",
            "records",
            "review",
            "ws-001",
            "--kind",
            "decision",
            "--verdict",
            "agree",
            "--by",
            "mallory",
            "--session",
            "S-001",
        ],
        None,
    );
    assert_eq!(
        code_of(&v),
        "session-not-open",
        "a session closed at base takes no verdict: {v}"
    );
    std::fs::write(&file, &text).unwrap();

    // A branch named like a session id, and a session that claims the id in another file.
    git(&root, &["branch", "rel-1", "HEAD~1"]);
    std::fs::write(
        root.join("sessions/S-002-x.md"),
        "---\nid: \"rel-1\"\ntitle: \"x\"\nstate: \"open\"\nopened_rev: \"HEAD\"\n---\n",
    )
    .unwrap();
    let (v, _) = doc(
        &root,
        &[
            "workspace",
            "records",
            "--kind",
            "decision",
            "--since",
            "rel-1",
            "--json",
        ],
        None,
    );
    assert!(v.get("session").is_none(), "{v}");

    // A ref that is a device: the session opens with no revision, at once.
    std::fs::write(root.join(".git/HEAD"), "ref: refs/heads/zero\n").unwrap();
    std::os::unix::fs::symlink("/dev/zero", root.join(".git/refs/heads/zero")).unwrap();
    let t = std::time::Instant::now();
    let (v, code) = new_session("Zero");
    assert_eq!(code, 0, "{v}");
    assert!(t.elapsed() < std::time::Duration::from_secs(20));
    let text = std::fs::read_to_string(
        root.join(format!("sessions/{}-zero.md", v["id"].as_str().unwrap())),
    )
    .unwrap();
    assert!(text.contains("opened_rev: null"), "{text}");
}

/// A third hostile review: a forged linked worktree (its `.git` file, `commondir` and back
/// `gitdir` all written by the agent) or a git directory borrowing the outer one's objects is
/// no top for a directory the outer repository tracks; two sessions of one id, or one edited
/// after its close, pick no revisions; `ls` reads no generated-files record through a link out.
#[test]
fn a_third_hostile_review_finds_the_walls_standing() {
    let (d, root) = workspace();
    let p = root.join("proj");
    std::fs::create_dir_all(p.join("decisions")).unwrap();
    std::fs::create_dir_all(p.join(".chant")).unwrap();
    std::fs::write(
        p.join("chant.workspace.json"),
        r#"{"name": "proj", "schema": 1, "quorum": 2, "records": [{"kind": "decisions/decision.kind.mjs"}], "members": []}"#,
    )
    .unwrap();
    std::fs::write(p.join("decisions/decision.kind.mjs"), KIND).unwrap();
    std::fs::write(p.join("decisions/decision.schema.json"), SCHEMA).unwrap();
    std::fs::write(
        p.join("decisions/ws-001-first.md"),
        "---\nid: \"ws-001\"\ntitle: \"First\"\nstate: \"decided\"\ndecided_by: \"lex\"\nevidence: []\n---\n",
    )
    .unwrap();
    std::fs::write(
        p.join(".chant/allowed_signers"),
        "alice ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIDJ8yNq1cEMmqUYLuZ8mSO6mYnW6PqC8qPB8S4bfsFZD\n",
    )
    .unwrap();
    git(&root, &["add", "-A"]);
    git(&root, &["commit", "-qm", "proj"]);
    let read = || {
        let (v, code) = doc(
            &p,
            &["workspace", "records", "--kind", "decision", "--json"],
            None,
        );
        assert_eq!(code, 0, "{v}");
        (
            v["trust"]["active"].clone(),
            record(&v, "ws-001")["quorum"]["need"].clone(),
        )
    };
    assert_eq!(read(), (json!(true), json!(2)));
    let lowered = std::fs::read_to_string(p.join("chant.workspace.json"))
        .unwrap()
        .replace("\"quorum\": 2", "\"quorum\": 0");
    std::fs::write(p.join("chant.workspace.json"), lowered).unwrap();
    // A forged worktree.
    let wt = root.join(".git/worktrees/x");
    std::fs::create_dir_all(&wt).unwrap();
    std::fs::write(wt.join("commondir"), "../..\n").unwrap();
    std::fs::write(wt.join("gitdir"), format!("{}\n", p.join(".git").display())).unwrap();
    std::fs::write(wt.join("HEAD"), "ref: refs/heads/main\n").unwrap();
    std::fs::write(p.join(".git"), "gitdir: ../.git/worktrees/x\n").unwrap();
    assert_eq!(
        read(),
        (json!(true), json!(2)),
        "a forged worktree moved the base"
    );
    std::fs::remove_file(p.join(".git")).unwrap();
    // A git directory borrowing the outer one's objects and refs.
    std::fs::create_dir_all(p.join(".git")).unwrap();
    std::os::unix::fs::symlink(root.join(".git/objects"), p.join(".git/objects")).unwrap();
    std::os::unix::fs::symlink(root.join(".git/refs"), p.join(".git/refs")).unwrap();
    std::fs::write(p.join(".git/HEAD"), "ref: refs/heads/main\n").unwrap();
    assert_eq!(
        read(),
        (json!(true), json!(2)),
        "a borrowed git directory moved the base"
    );
    std::fs::remove_dir_all(p.join(".git")).unwrap();

    // ls: a generated-files record that is a link out of the repository is not read.
    let outside = d.path().join("generated.json");
    std::fs::write(
        &outside,
        r#"{"schema": 1, "files": [{"path": "x.yml", "command": "LEAK-cmd", "env": "LEAK-env"}]}"#,
    )
    .unwrap();
    std::fs::create_dir_all(root.join("infra/.chant")).unwrap();
    std::os::unix::fs::symlink(&outside, root.join("infra/.chant/generated.json")).unwrap();
    let (v, _) = doc(&root, &["workspace", "ls", "--json"], None);
    assert!(!v.to_string().contains("LEAK"), "{v}");

    // Sessions: a copy of a session under its id, and a sealed one edited after its close.
    std::fs::create_dir_all(root.join("sessions")).unwrap();
    std::fs::write(root.join("sessions/session.kind.mjs"), SESSION_KIND).unwrap();
    std::fs::write(root.join("sessions/session.schema.json"), SESSION_SCHEMA).unwrap();
    let kind = ["--kind", "sessions/session.kind.mjs"];
    let (v, code) = doc(
        &root,
        &[
            "workspace",
            "records",
            "new",
            kind[0],
            kind[1],
            "--prefix",
            "S",
            "--from",
            "-",
        ],
        Some(r#"{"title": "Walk"}"#),
    );
    assert_eq!(code, 0, "{v}");
    let (v, code) = doc(
        &root,
        &["workspace", "records", "close", "S-001", kind[0], kind[1]],
        None,
    );
    assert_eq!(code, 0, "{v}");
    let since = |root: &Path| {
        doc(
            root,
            &[
                "workspace",
                "records",
                "--kind",
                "decision",
                "--since",
                "S-001",
                "--json",
            ],
            None,
        )
        .0
    };
    let file = root.join("sessions/S-001-walk.md");
    let text = std::fs::read_to_string(&file).unwrap();
    let moved = text.replace(
        "opened_rev: \"",
        "opened_rev: \"0000000000000000000000000000000000000000\"\nx_old: \"",
    );
    std::fs::write(&file, &moved).unwrap();
    assert_eq!(code_of(&since(&root)), "since-session-unknown");
    std::fs::write(&file, &text).unwrap();
    std::fs::write(root.join("sessions/S-001-copy.md"), &text).unwrap();
    assert_eq!(code_of(&since(&root)), "since-session-unknown");
}

/// A kind the base holds is read as it is there: a change that rewrites its rules in the
/// working tree (no closed state, another state field) cannot reopen a record or a session
/// that the rules at base close.
#[test]
fn a_kind_edited_in_the_working_tree_keeps_the_rules_at_base() {
    let (_d, root) = workspace();
    declare_sessions(&root);
    // A decision closed by hand with the closed state, committed with the kind.
    std::fs::write(
        root.join("decisions/ws-002-closed.md"),
        "---\nid: \"ws-002\"\ntitle: \"Closed\"\nstate: \"superseded\"\ndecided_by: \"lex\"\nevidence: []\n---\n",
    )
    .unwrap();
    git(&root, &["add", "-A"]);
    git(&root, &["commit", "-qm", "kinds"]);
    let (v, code) = doc(
        &root,
        &[
            "workspace",
            "records",
            "new",
            "--kind",
            "session",
            "--prefix",
            "S",
            "--from",
            "-",
        ],
        Some(r#"{"title": "Walk"}"#),
    );
    assert_eq!(code, 0, "{v}");
    let (v, code) = doc(&root, &["workspace", "records", "close", "S-001"], None);
    assert_eq!(code, 0, "{v}");
    git(&root, &["add", "-A"]);
    git(&root, &["commit", "-qm", "closed"]);

    // The working tree's kinds lose their closed states.
    std::fs::write(
        root.join("decisions/decision.kind.mjs"),
        KIND.replace(
            r#"closedStates: ["ratified", "superseded"]"#,
            r#"closedStates: ["ratified"]"#,
        ),
    )
    .unwrap();
    std::fs::write(
        root.join("sessions/session.kind.mjs"),
        SESSION_KIND
            .replace(
                r#"states: ["open", "closed"]"#,
                r#"states: ["open", "closed", "done"]"#,
            )
            .replace(r#"closedStates: ["closed"]"#, r#"closedStates: ["done"]"#),
    )
    .unwrap();
    let (v, _) = doc(
        &root,
        &[
            "workspace",
            "records",
            "amend",
            "ws-002",
            "--kind",
            "decision",
            "--set",
            "-",
        ],
        Some(r#"{"title": "Reopened"}"#),
    );
    assert_eq!(code_of(&v), "record-closed", "{v}");
    let file = root.join("sessions/S-001-walk.md");
    let text = std::fs::read_to_string(&file).unwrap();
    let reopened = reopen(&text);
    std::fs::write(&file, reopened).unwrap();
    let (v, _) = doc(
        &root,
        &[
            "workspace",
            "records",
            "review",
            "ws-001",
            "--kind",
            "decision",
            "--verdict",
            "agree",
            "--by",
            "mallory",
            "--session",
            "S-001",
            "--dry-run",
        ],
        None,
    );
    assert_eq!(code_of(&v), "session-not-open", "{v}");
    let (v, _) = doc(
        &root,
        &["workspace", "records", "--kind", "session", "--json"],
        None,
    );
    assert_eq!(
        record(&v, "S-001")["reasons"][0]["code"],
        "session-seal-mismatch",
        "{v}"
    );
}
