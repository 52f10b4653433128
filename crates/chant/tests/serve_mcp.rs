//! `chant serve mcp` black-box: startup refusal, tools and schemas tied to the seed page, results
//! and isError conventions, resources, plugin namespacing, and a runaway project.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

use mcp_testkit::{ServerProcess, tool_text};
use serde_json::{Value, json};

const BIN: &str = env!("CARGO_BIN_EXE_chant");

fn shared() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../../shared")
}

fn fixture(name: &str) -> (tempfile::TempDir, PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("project");
    mcp_testkit::copy_fixture(&shared().join("fixtures/chant").join(name), &root);
    (dir, root)
}

fn serve(root: &Path) -> ServerProcess {
    let mut s = ServerProcess::spawn_in(BIN, ["serve", "mcp"], root);
    s.initialize(Some("2025-11-25"));
    s
}

fn call(s: &mut ServerProcess, id: i64, name: &str, args: Value) -> Value {
    s.request(id, "tools/call", json!({"name": name, "arguments": args}))["result"].clone()
}

fn structured(result: &Value) -> Value {
    assert_ne!(result["isError"], true, "{result}");
    result["structuredContent"].clone()
}

#[test]
fn a_project_without_a_lexicon_refuses_to_start() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("main.ts"), "export const x = 1;\n").unwrap();
    let out = Command::new(BIN)
        .args(["serve", "mcp"])
        .current_dir(dir.path())
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    assert_eq!(
        String::from_utf8_lossy(&out.stderr),
        "error: No lexicon detected in infrastructure files\n"
    );
    assert!(out.stdout.is_empty());
    std::fs::write(
        dir.path().join("chant.config.json"),
        r#"{"lexicons":["azure"]}"#,
    )
    .unwrap();
    let out = Command::new(BIN)
        .args(["serve", "mcp"])
        .current_dir(dir.path())
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    assert_eq!(
        String::from_utf8_lossy(&out.stderr),
        "error: Lexicon \"azure\" is not available in this chant\n"
    );
}

#[test]
fn lexicons_are_found_by_import_when_the_config_names_none() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("ci.ts"), "import { Job } from \"@intentius/chant-lexicon-gitlab\";\nexport const lint = new Job({ stage: \"test\", script: [\"make lint\"] });\n").unwrap();
    let mut s = serve(dir.path());
    let r = structured(&call(&mut s, 1, "build", json!({"path": "."})));
    assert_eq!(
        r["output"],
        "stages:\n  - test\n\nlint:\n  stage: test\n  script:\n    - make lint\n"
    );
}

/// The tools' parameter tables of the seed page, by tool name: `(name, required)` in order.
fn seed_parameters() -> Vec<(String, Vec<(String, bool)>)> {
    let seed = std::fs::read_to_string(shared().join("seeds/000_29bc2f98df19ab85.txt")).unwrap();
    let lines: Vec<&str> = seed.lines().collect();
    let mut out = Vec::new();
    for (i, line) in lines.iter().enumerate() {
        if *line != "Parameter\tType\tRequired\tDescription" {
            continue;
        }
        // The tool's name is the heading two lines above its description.
        let name = (0..i)
            .rev()
            .find(|&j| !lines[j].is_empty() && !lines[j].contains(' ') && !lines[j].contains('\t'))
            .map(|j| lines[j].to_owned());
        let params: Vec<(String, bool)> = lines[i + 1..]
            .iter()
            .take_while(|l| l.contains('\t'))
            .map(|l| {
                let cols: Vec<&str> = l.split('\t').collect();
                (cols[0].to_owned(), cols[2] == "Yes")
            })
            .collect();
        if let Some(name) = name {
            out.push((name, params));
        }
    }
    out
}

#[test]
fn core_tools_match_the_seed_page() {
    let (_d, root) = fixture("gitlab-shared-props");
    let mut s = serve(&root);
    let tools = s.request(1, "tools/list", json!({}))["result"]["tools"].clone();
    let names: Vec<&str> = tools
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["name"].as_str().unwrap())
        .collect();
    assert_eq!(
        names,
        [
            "build",
            "lint",
            "import",
            "explain",
            "scaffold",
            "search",
            "composites",
            "lifecycle-snapshot",
            "lifecycle-diff",
            "op-list",
            "op-run",
            "op-status",
            "op-approve",
            "op-report",
            "gitlab:pipeline-yaml",
            "gitlab:pipeline",
            "gitlab:checks"
        ]
    );
    let seed = seed_parameters();
    for tool in tools
        .as_array()
        .unwrap()
        .iter()
        .filter(|t| !t["name"].as_str().unwrap().contains(':'))
    {
        let name = tool["name"].as_str().unwrap();
        let (_, params) = seed
            .iter()
            .find(|(n, _)| n == name)
            .unwrap_or_else(|| panic!("{name} is not on the seed page"));
        let props: Vec<&String> = tool["inputSchema"]["properties"]
            .as_object()
            .unwrap()
            .keys()
            .collect();
        // Parameters this chant adds after the seed's, each for a reason its docs give.
        let additions: &[&str] = match name {
            "import" => &["force"], // existing files are kept unless asked (issue 9)
            _ => &[],
        };
        let mut seed_names: Vec<&String> = params.iter().map(|p| &p.0).collect();
        let added: Vec<String> = additions.iter().map(|a| a.to_string()).collect();
        seed_names.extend(added.iter());
        assert_eq!(props, seed_names, "{name}: parameters");
        let required: Vec<&str> = params
            .iter()
            .filter(|p| p.1)
            .map(|p| p.0.as_str())
            .collect();
        let ours: Vec<&str> = tool["inputSchema"]["required"]
            .as_array()
            .map(|a| a.iter().map(|v| v.as_str().unwrap()).collect())
            .unwrap_or_default();
        assert_eq!(ours, required, "{name}: required");
        let writes = [
            "lint",
            "import",
            "op-run",
            "op-approve",
            "lifecycle-snapshot",
        ]
        .contains(&name);
        assert_eq!(tool["annotations"]["readOnlyHint"], !writes, "{name}");
    }
}

#[test]
fn build_returns_the_real_output() {
    let (_d, root) = fixture("gitlab-flow-control");
    let golden = std::fs::read_to_string(
        shared().join("fixtures/chant/gitlab-flow-control/expected/build.stdout.txt"),
    )
    .unwrap();
    let mut s = serve(&root);
    let r = structured(&call(&mut s, 1, "build", json!({"path": "src"})));
    assert_eq!(r["success"], true);
    assert_eq!(r["resourceCount"], 11);
    assert_eq!(r["format"], "json");
    assert_eq!(format!("{}\n", r["output"].as_str().unwrap()), golden);
    let r = structured(&call(
        &mut s,
        2,
        "build",
        json!({"path": "src", "format": "yaml", "output": "ignored.yml"}),
    ));
    assert_eq!(r["format"], "yaml");
    assert!(!root.join("ignored.yml").exists());
}

#[test]
fn a_failing_build_fails_the_call() {
    let (_d, root) = fixture("gitlab-err-duplicate");
    let mut s = serve(&root);
    let r = call(&mut s, 1, "build", json!({"path": "src"}));
    assert_eq!(
        r,
        json!({"content": [{"type": "text", "text": "Error: Duplicate export name \"rollout\" found"}], "isError": true})
    );
    let r = call(&mut s, 2, "build", json!({"path": "no/such/dir"}));
    assert_eq!(r["isError"], true);
    assert!(tool_text(&r).starts_with("Error: "), "{r}");
    let r = call(&mut s, 3, "build", json!({}));
    assert_eq!(
        tool_text(&r),
        "Error: path is required and must be a string"
    );
    assert_eq!(s.request(4, "ping", json!({}))["result"], json!({}));
}

#[test]
fn explain_in_three_formats() {
    let (_d, root) = fixture("gitlab-err-duplicate");
    let mut s = serve(&root);
    let md = call(&mut s, 1, "explain", json!({"path": "src"}));
    assert!(
        md.get("structuredContent").is_none(),
        "markdown is a plain string"
    );
    assert_eq!(
        tool_text(&md),
        "# Project Summary\n\n- **Source files:** 3\n- **Total entities:** 0\n\n## Errors\n\n- Duplicate export name \"rollout\" found\n"
    );
    let j = structured(&call(
        &mut s,
        2,
        "explain",
        json!({"path": "src", "format": "json"}),
    ));
    assert_eq!(
        j["errors"],
        json!(["Duplicate export name \"rollout\" found"])
    );
    assert!(j.get("knowledge").is_none());
    let okf = structured(&call(
        &mut s,
        3,
        "explain",
        json!({"path": "src", "format": "okf"}),
    ));
    assert_eq!(
        okf.as_object().unwrap().keys().collect::<Vec<_>>(),
        ["okf_version", "files", "errors"]
    );
    assert_eq!(
        okf["files"]["index.md"],
        "---\nokf_version: '0.2'\n---\n\nNo entities discovered.\n"
    );
}

#[test]
fn search_ranks_prefix_matches_and_counts_before_the_limit() {
    let (_d, root) = fixture("gitlab-shared-props");
    let mut s = serve(&root);
    let r = structured(&call(&mut s, 1, "search", json!({"query": "CACHE"})));
    assert_eq!(r["query"], "CACHE");
    assert_eq!(
        r["results"][0]["kind"], "composite",
        "composites that bundle a Cache rank with the prefix matches, first"
    );
    let classes: Vec<&str> = r["results"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|x| x["className"].as_str())
        .collect();
    assert!(classes.contains(&"Cache"));
    assert_eq!(r["total"], r["results"].as_array().unwrap().len());
    let limited = structured(&call(
        &mut s,
        2,
        "search",
        json!({"query": "gitlab::ci", "limit": 2}),
    ));
    assert_eq!(limited["results"].as_array().unwrap().len(), 2);
    assert_eq!(limited["total"], 19, "3 resources and 16 properties match");
    let job = structured(&call(
        &mut s,
        3,
        "search",
        json!({"query": "GitLab::CI::Job"}),
    ));
    assert_eq!(
        job["results"],
        json!([{"className": "Job", "resourceType": "GitLab::CI::Job", "kind": "resource", "lexicon": "gitlab"}])
    );
    let none = structured(&call(
        &mut s,
        4,
        "search",
        json!({"query": "job", "lexicon": "aws"}),
    ));
    assert_eq!(none["total"], 0);
}

#[test]
fn composites_lists_the_catalog() {
    let (_d, root) = fixture("gitlab-shared-props");
    let mut s = serve(&root);
    let all = structured(&call(&mut s, 1, "composites", json!({})));
    assert_eq!(all["lexicons"], json!(["gitlab"]));
    let names: Vec<&str> = all["composites"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["name"].as_str().unwrap())
        .collect();
    assert_eq!(
        names,
        ["DockerBuild", "NodePipeline", "PythonPipeline", "ReviewApp"]
    );
    let first = &all["composites"][0];
    assert_eq!(
        first.as_object().unwrap().keys().collect::<Vec<_>>(),
        ["name", "lexicon", "description", "bundles", "params"]
    );
    assert_eq!(
        first["params"][0]
            .as_object()
            .unwrap()
            .keys()
            .collect::<Vec<_>>(),
        ["name", "type", "required", "description"]
    );
    let q = structured(&call(
        &mut s,
        2,
        "composites",
        json!({"query": "pipeline", "lexicon": "gitlab", "limit": 10}),
    ));
    let names: Vec<&str> = q["composites"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["name"].as_str().unwrap())
        .collect();
    assert_eq!(
        names[..2],
        ["NodePipeline", "PythonPipeline"],
        "name matches first"
    );
    assert_eq!(
        (q["lexicon"].clone(), q["query"].clone()),
        (json!("gitlab"), json!("pipeline"))
    );
    let other = structured(&call(&mut s, 3, "composites", json!({"lexicon": "aws"})));
    assert_eq!(
        (other["total"].clone(), other["composites"].clone()),
        (json!(0), json!([]))
    );
}

#[test]
fn scaffold_templates_patterns_and_the_generic_skeleton() {
    let (_d, root) = fixture("gitlab-shared-props");
    let mut s = serve(&root);
    let r = structured(&call(
        &mut s,
        1,
        "scaffold",
        json!({"pattern": "pipeline", "lexicon": "gitlab"}),
    ));
    assert_eq!(
        r.as_object().unwrap().keys().collect::<Vec<_>>(),
        ["lexicon", "pattern", "files"]
    );
    assert_eq!(r["files"].as_array().unwrap().len(), 1);
    assert_eq!(r["files"][0]["filename"], "pipeline.ts");
    let t = structured(&call(
        &mut s,
        2,
        "scaffold",
        json!({"pattern": "x", "template": "python-pipeline"}),
    ));
    assert_eq!(t["template"], "python-pipeline");
    assert!(
        t["files"][0]["content"]
            .as_str()
            .unwrap()
            .contains("PythonPipeline({")
    );
    let fallback = structured(&call(
        &mut s,
        3,
        "scaffold",
        json!({"pattern": "x", "template": "no-such", "lexicon": "gitlab"}),
    ));
    assert_eq!(fallback["files"].as_array().unwrap().len(), 2);
    let generic = structured(&call(
        &mut s,
        4,
        "scaffold",
        json!({"pattern": "s3-bucket"}),
    ));
    assert_eq!(generic["lexicon"], Value::Null);
    assert_eq!(
        generic["note"],
        "No lexicon-specific template found. Generic skeleton provided — fill in imports and resource types."
    );
    assert_eq!(generic["files"][1]["filename"], "s3-bucket.ts");
    assert!(
        generic["files"][1]["content"]
            .as_str()
            .unwrap()
            .contains("// export const s3Bucket = new ResourceType({")
    );
}

#[test]
fn resources_core_then_plugin_and_examples() {
    let (_d, root) = fixture("gitlab-shared-props");
    let mut s = serve(&root);
    let list = s.request(1, "resources/list", json!({}))["result"]["resources"].clone();
    let uris: Vec<&str> = list
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["uri"].as_str().unwrap())
        .collect();
    // The seed's resource table, row for row: URI, MIME type and description, in order.
    let seed = std::fs::read_to_string(shared().join("seeds/000_29bc2f98df19ab85.txt")).unwrap();
    let table: Vec<Vec<&str>> = seed
        .split("URI\tMIME Type\tDescription\n")
        .nth(1)
        .unwrap()
        .lines()
        .take_while(|l| !l.is_empty())
        .map(|l| l.split('\t').collect())
        .collect();
    assert_eq!(table.len(), 9);
    for (row, r) in table.iter().zip(list.as_array().unwrap()) {
        assert_eq!(
            [
                r["uri"].as_str().unwrap(),
                r["mimeType"].as_str().unwrap(),
                r["description"].as_str().unwrap()
            ],
            row[..],
        );
    }
    assert!(uris.contains(&"chant://gitlab/resource-catalog"));
    assert!(uris.contains(&"chant://gitlab/examples/node-pipeline"));
    assert!(
        !uris.contains(&"chant://examples/{name}"),
        "examples/{{name}} reads but is not listed"
    );
    let read = |s: &mut ServerProcess, id: i64, uri: &str| {
        s.request(id, "resources/read", json!({"uri": uri}))
    };
    let ctx = read(&mut s, 2, "chant://context");
    let text = ctx["result"]["contents"][0]["text"].as_str().unwrap();
    assert!(
        text.contains("op-approve") && text.contains("runtime") && text.contains("GitLab CI"),
        "{text}"
    );
    let examples: Value = serde_json::from_str(
        read(&mut s, 3, "chant://examples/list")["result"]["contents"][0]["text"]
            .as_str()
            .unwrap(),
    )
    .unwrap();
    assert!(
        examples
            .as_array()
            .unwrap()
            .iter()
            .any(|e| e["name"] == "node-pipeline")
    );
    let ex = read(&mut s, 4, "chant://examples/node-pipeline");
    assert_eq!(ex["result"]["contents"][0]["mimeType"], "text/typescript");
    assert_eq!(
        read(&mut s, 5, "chant://examples/nope")["error"],
        json!({"code": -32002, "message": "Example not found: nope"})
    );
    assert_eq!(
        read(&mut s, 6, "chant://nothing")["error"],
        json!({"code": -32002, "message": "Unknown resource: chant://nothing"})
    );
    let catalog: Value = serde_json::from_str(
        read(&mut s, 7, "chant://gitlab/resource-catalog")["result"]["contents"][0]["text"]
            .as_str()
            .unwrap(),
    )
    .unwrap();
    assert_eq!(
        catalog[0],
        json!({"className": "AllowFailure", "resourceType": "GitLab::CI::AllowFailure", "kind": "property"})
    );
    let composites: Value = serde_json::from_str(
        read(&mut s, 8, "chant://composites")["result"]["contents"][0]["text"]
            .as_str()
            .unwrap(),
    )
    .unwrap();
    assert_eq!(composites.as_array().unwrap().len(), 4);
}

/// `--tool-names portable` (or `CHANT_MCP_TOOL_NAMES=portable`) serves plugin tools under
/// names every client accepts, titled and annotated like the core tools; a style that is
/// neither is refused naming where it came from.
#[test]
fn plugin_tools_can_be_served_under_portable_names() {
    let (_d, root) = fixture("gitlab-flow-control");
    let listed = |s: &mut ServerProcess| -> Vec<Value> {
        s.request(1, "tools/list", json!({}))["result"]["tools"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|t| t["name"].as_str().unwrap().starts_with("gitlab"))
            .map(|t| json!([t["name"], t["title"], t["annotations"]["readOnlyHint"]]))
            .collect()
    };
    let portable = json!([
        ["gitlab_pipeline-yaml", "GitLab pipeline YAML", true],
        ["gitlab_pipeline", "GitLab pipeline stages and jobs", true],
        ["gitlab_checks", "GitLab post-synth checks", true]
    ]);
    let mut s = ServerProcess::spawn_in(BIN, ["serve", "mcp", "--tool-names", "portable"], &root);
    s.initialize(Some("2025-11-25"));
    assert_eq!(json!(listed(&mut s)), portable);
    let yaml = call(&mut s, 2, "gitlab_pipeline-yaml", json!({"path": "src"}));
    assert!(tool_text(&yaml).starts_with("stages:\n  - deploy\n"));
    let seed_name = call(&mut s, 3, "gitlab:pipeline-yaml", json!({"path": "src"}));
    assert_eq!(seed_name["isError"], true, "{seed_name}");

    let mut cmd = Command::new(BIN);
    cmd.args(["serve", "mcp"])
        .current_dir(&root)
        .env("CHANT_MCP_TOOL_NAMES", "portable");
    let mut s = ServerProcess::from_command(cmd);
    s.initialize(Some("2025-11-25"));
    assert_eq!(json!(listed(&mut s)), portable);
    // The flag wins over the environment.
    let mut cmd = Command::new(BIN);
    cmd.args(["serve", "mcp", "--tool-names", "seed"])
        .current_dir(&root)
        .env("CHANT_MCP_TOOL_NAMES", "portable");
    let mut s = ServerProcess::from_command(cmd);
    s.initialize(Some("2025-11-25"));
    assert_eq!(listed(&mut s)[0][0], "gitlab:pipeline-yaml");

    for (args, env, said) in [
        (
            vec!["--tool-names", "colon"],
            None,
            "error: --tool-names: tool names must be \"seed\" or \"portable\" (got \"colon\")\n",
        ),
        (
            vec![],
            Some("Portable"),
            "error: CHANT_MCP_TOOL_NAMES: tool names must be \"seed\" or \"portable\" (got \"Portable\")\n",
        ),
    ] {
        let mut cmd = Command::new(BIN);
        cmd.args(["serve", "mcp"]).args(args).current_dir(&root);
        if let Some(e) = env {
            cmd.env("CHANT_MCP_TOOL_NAMES", e);
        }
        let out = cmd.stdin(std::process::Stdio::null()).output().unwrap();
        assert_eq!(out.status.code(), Some(1));
        assert_eq!(String::from_utf8_lossy(&out.stderr), said);
    }
}

#[test]
fn plugin_tools_work_on_the_project() {
    let (_d, root) = fixture("gitlab-flow-control");
    let mut s = serve(&root);
    let yaml = call(&mut s, 1, "gitlab:pipeline-yaml", json!({"path": "src"}));
    assert!(tool_text(&yaml).starts_with("stages:\n  - deploy\n"));
    let p = structured(&call(&mut s, 2, "gitlab:pipeline", json!({"path": "src"})));
    assert_eq!(p["stages"], json!(["deploy", "prepare", "test"]));
    assert_eq!(
        p["jobs"][0],
        json!({"name": "deploy-staging", "stage": "deploy"})
    );
    let c = structured(&call(&mut s, 3, "gitlab:checks", json!({"path": "src"})));
    assert!(c["findings"].as_array().unwrap().iter().any(|f| {
        f["message"]
            .as_str()
            .unwrap()
            .contains("earlier stage (prepare → test)")
    }));
}

#[test]
fn initialize_reports_the_real_version() {
    let (_d, root) = fixture("gitlab-shared-props");
    let mut s = ServerProcess::spawn_in(BIN, ["serve", "mcp"], &root);
    let r = s.initialize(None);
    assert_eq!(r["protocolVersion"], "2026-07-28");
    assert_eq!(
        r["serverInfo"],
        json!({"name": "chant", "version": env!("CARGO_PKG_VERSION")})
    );
    assert!(
        r.get("instructions").is_none(),
        "instructions only at a workspace root"
    );
    assert_eq!(r["capabilities"], json!({"tools": {}, "resources": {}}));
}

#[test]
fn a_runaway_project_is_stopped_and_the_server_keeps_serving() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("chant.config.json"),
        r#"{"lexicons":["gitlab"],"timeout":"1s"}"#,
    )
    .unwrap();
    std::fs::write(dir.path().join("loop.ts"), "import { Job } from \"@intentius/chant-lexicon-gitlab\";\nwhile (true) {}\nexport const j = new Job({});\n").unwrap();
    let mut s = serve(dir.path());
    s.send(&json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "build", "arguments": {"path": "."}}}));
    // A slow build never delays other requests.
    assert_eq!(
        s.request(
            2,
            "tools/call",
            json!({"name": "search", "arguments": {"query": "job"}})
        )["result"]["structuredContent"]["query"],
        "job"
    );
    let r = s.recv_reply(&json!(1));
    assert_eq!(r["result"]["isError"], true);
    assert!(
        tool_text(&r["result"]).contains("exceeded its 1 s budget"),
        "{r}"
    );
    assert_eq!(s.request(3, "ping", json!({}))["result"], json!({}));
    s.close_stdin();
    assert_eq!(s.wait_exit(Duration::from_secs(10)).code(), Some(0));
}

#[test]
fn knowledge_resource_and_the_explain_key() {
    let (_d, root) = fixture("gitlab-shared-props");
    let mut s = serve(&root);
    let read = |s: &mut ServerProcess, id: i64| -> Value {
        let r = s.request(id, "resources/read", json!({"uri": "chant://knowledge"}));
        serde_json::from_str(r["result"]["contents"][0]["text"].as_str().unwrap()).unwrap()
    };
    assert_eq!(
        read(&mut s, 1),
        json!({"dir": null, "index": null, "concepts": []})
    );
    let explained = structured(&call(
        &mut s,
        2,
        "explain",
        json!({"path": "src", "format": "json"}),
    ));
    assert!(explained.get("knowledge").is_none(), "no bundle, no key");
    // An authored bundle: one concept binds to the goImage entity, one to nothing.
    std::fs::create_dir_all(root.join("knowledge/gitlab")).unwrap();
    std::fs::write(
        root.join("knowledge/index.md"),
        "---\nokf_version: '0.2'\n---\n\n# Notes\n",
    )
    .unwrap();
    std::fs::write(
        root.join("knowledge/gitlab/go.md"),
        "---\ntype: GitLab::CI::Image\ntitle: Go toolchain\nname: goImage\n---\nPinned on purpose.\n",
    )
    .unwrap();
    std::fs::write(
        root.join("knowledge/gitlab/retired.md"),
        "---\ntitle: Retired\nname: nothingHere\n---\n",
    )
    .unwrap();
    let k = read(&mut s, 3);
    assert_eq!(k["dir"], "knowledge");
    assert_eq!(k["index"], "---\nokf_version: '0.2'\n---\n\n# Notes\n");
    assert_eq!(
        k["concepts"],
        json!([
            {"path": "gitlab/go.md", "type": "GitLab::CI::Image", "title": "Go toolchain", "binds": "goImage"},
            {"path": "gitlab/retired.md", "type": null, "title": "Retired"}
        ])
    );
    let explained = structured(&call(
        &mut s,
        4,
        "explain",
        json!({"path": "src", "format": "json"}),
    ));
    assert_eq!(
        explained["knowledge"],
        json!({"dir": "knowledge", "concepts": [{"path": "gitlab/go.md", "type": "GitLab::CI::Image", "title": "Go toolchain", "binds": "goImage"}]})
    );
    let keys: Vec<&String> = explained.as_object().unwrap().keys().collect();
    assert_eq!(keys.last().unwrap().as_str(), "knowledge");
    // The CLI's explain json carries the same key.
    let out = std::process::Command::new(BIN)
        .args(["explain", "src", "--format", "json"])
        .current_dir(&root)
        .output()
        .unwrap();
    let cli: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(cli["knowledge"], explained["knowledge"]);
}

#[test]
fn lint_answers_as_the_seed_says_and_fixes_on_request() {
    let (_d, root) = fixture("gitlab-lint-rules");
    let mut s = serve(&root);
    let golden: Vec<Value> = serde_json::from_str(
        &std::fs::read_to_string(
            shared().join("fixtures/chant/gitlab-lint-rules/expected/lint-json.stdout.txt"),
        )
        .unwrap()
        .replace("<ROOT>", &root.display().to_string()),
    )
    .unwrap();
    let r = call(&mut s, 1, "lint", json!({"path": "src"}));
    assert_ne!(r["isError"], true, "findings do not fail the call");
    let v = structured(&r);
    let keys: Vec<&String> = v.as_object().unwrap().keys().collect();
    assert_eq!(
        keys,
        [
            "success",
            "errorCount",
            "warningCount",
            "diagnostics",
            "output"
        ]
    );
    assert_eq!(
        (
            v["success"].clone(),
            v["errorCount"].clone(),
            v["warningCount"].clone()
        ),
        (json!(false), json!(4), json!(20))
    );
    assert_eq!(v["diagnostics"].as_array().unwrap().len(), golden.len());
    assert_eq!(
        serde_json::from_str::<Value>(v["output"].as_str().unwrap()).unwrap(),
        v["diagnostics"]
    );
    // One file; a missing path fails the call.
    let one = structured(&call(&mut s, 2, "lint", json!({"path": "src/crowded.ts"})));
    assert_eq!(one["warningCount"], 5);
    let missing = call(&mut s, 3, "lint", json!({"path": "nope"}));
    assert_eq!(missing["isError"], true);
    assert!(
        tool_text(&missing).ends_with("nope: no such file or directory"),
        "{}",
        tool_text(&missing)
    );
    let bad = call(&mut s, 4, "lint", json!({"path": "src", "fix": "yes"}));
    assert_eq!(tool_text(&bad), "Error: fix must be a boolean, got \"yes\"");
    // fix: true rewrites the fixable file and answers with the lint after the fix.
    let fixed = structured(&call(
        &mut s,
        5,
        "lint",
        json!({"path": "src", "fix": true}),
    ));
    assert_eq!(
        (fixed["errorCount"].clone(), fixed["warningCount"].clone()),
        (json!(2), json!(19))
    );
    let text = std::fs::read_to_string(root.join("src/fixable.ts")).unwrap();
    assert!(
        text.contains("}, \"CheckPair\");") && !text.contains("import type"),
        "{text}"
    );
    // A clean project: success and an empty output.
    let (_d2, clean) = fixture("gitlab-composites");
    let mut s2 = serve(&clean);
    let v = structured(&call(&mut s2, 1, "lint", json!({"path": "src"})));
    assert_eq!(
        v,
        json!({"success": true, "errorCount": 0, "warningCount": 0, "diagnostics": [], "output": "[]"})
    );
}

#[test]
fn import_writes_the_files_and_fails_the_call_on_failure() {
    let (_d, root) = fixture("gitlab-import");
    let mut s = serve(&root);
    let v = structured(&call(
        &mut s,
        1,
        "import",
        json!({"source": "pipeline.json"}),
    ));
    assert_eq!(
        v,
        json!({"success": true, "lexicon": "gitlab", "generatedFiles": ["01-lint.ts", "02-test.ts", "03-package.ts", "04-deploy.ts", "pipeline.ts"], "warnings": ["job \"buildWheel\" is renamed \"build-wheel\" (chant names jobs by the kebab-case of their export), and the references to it with it"]})
    );
    assert!(root.join("infra/01-lint.ts").is_file());
    // The imported project builds, over the same server.
    let built = structured(&call(
        &mut s,
        2,
        "build",
        json!({"path": "infra", "format": "yaml"}),
    ));
    assert!(
        built["output"].as_str().unwrap().contains("build-wheel:\n"),
        "{built}"
    );
    // Again: what is there is kept and named, unless forced.
    std::fs::write(root.join("infra/01-lint.ts"), "// mine\n").unwrap();
    let again = structured(&call(
        &mut s,
        3,
        "import",
        json!({"source": "pipeline.json", "output": "./infra/"}),
    ));
    assert_eq!(again["generatedFiles"], json!([]));
    assert!(
        again["warnings"]
            .as_array()
            .unwrap()
            .contains(&json!("File 01-lint.ts already exists, skipping")),
        "{again}"
    );
    assert_eq!(
        std::fs::read_to_string(root.join("infra/01-lint.ts")).unwrap(),
        "// mine\n"
    );
    let forced = structured(&call(
        &mut s,
        8,
        "import",
        json!({"source": "pipeline.json", "output": "./infra/", "force": true}),
    ));
    assert_eq!(forced["generatedFiles"].as_array().unwrap().len(), 5);
    assert_ne!(
        std::fs::read_to_string(root.join("infra/01-lint.ts")).unwrap(),
        "// mine\n"
    );
    // YAML too.
    let yaml = structured(&call(
        &mut s,
        7,
        "import",
        json!({"source": "pipeline.yml", "output": "from-yaml"}),
    ));
    assert_eq!(yaml["generatedFiles"], json!(["01-test.ts"]));
    for (id, args, text) in [
        (
            4,
            json!({"source": "cloudformation.json", "output": "./aws/"}),
            format!(
                "Error: Could not detect template lexicon. No installed lexicon recognizes this template: {} (",
                root.join("cloudformation.json").display()
            ),
        ),
        (
            5,
            json!({"source": "does-not-exist.json"}),
            format!(
                "Error: Template file not found: {}",
                root.join("does-not-exist.json").display()
            ),
        ),
        (6, json!({}), "Error: source is required".to_owned()),
    ] {
        let r = call(&mut s, id, "import", args);
        assert_eq!(r["isError"], true);
        assert!(tool_text(&r).starts_with(&text), "{}", tool_text(&r));
    }
    assert!(!root.join("aws").exists());
}

/// An aws project: the seed's `search` for "queue" finds the `Queue` resource and the
/// `LambdaSqs` composite that bundles one, and `composites` lists aws's catalog.
#[test]
fn an_aws_project_searches_and_lists_its_composites() {
    let (_d, root) = fixture("aws-composites");
    let mut s = serve(&root);
    let r = structured(&call(
        &mut s,
        1,
        "search",
        json!({"query": "queue", "lexicon": "aws", "limit": 100}),
    ));
    let results = r["results"].as_array().unwrap();
    assert!(
        results.contains(&json!({"className": "Queue", "resourceType": "AWS::SQS::Queue", "kind": "resource", "lexicon": "aws"})),
        "{r}"
    );
    let sqs = results
        .iter()
        .find(|x| x["name"] == "LambdaSqs")
        .expect("LambdaSqs bundles a Queue");
    assert_eq!(sqs["kind"], "composite");
    let all = structured(&call(&mut s, 2, "composites", json!({"lexicon": "aws"})));
    assert_eq!(all["lexicons"], json!(["aws"]));
    assert_eq!(all["total"], 22);
    let built = structured(&call(&mut s, 3, "build", json!({"path": "src"})));
    let template: Value = serde_json::from_str(built["output"].as_str().unwrap()).unwrap();
    assert_eq!(
        template["Resources"]["ingestEventSourceMapping"]["Properties"]["BatchSize"],
        25
    );
    assert_eq!(built["resourceCount"], 9);
}

/// A post-synth error fails the MCP `build` as it fails `chant build` (the template would be
/// refused or unsafe when deployed), naming each finding.
#[test]
fn a_post_synth_error_fails_the_mcp_build() {
    let (_d, root) = fixture("aws-lint-waw");
    let mut s = serve(&root);
    let r = call(&mut s, 1, "build", json!({"path": "src"}));
    assert_eq!(r["isError"], true, "{r}");
    let text = r["content"][0]["text"].as_str().unwrap();
    assert!(
        text.contains("[plainBucket] S3 bucket \"plainBucket\" is missing PublicAccessBlockConfiguration — all public access should be blocked (aws)"),
        "{text}"
    );
}
