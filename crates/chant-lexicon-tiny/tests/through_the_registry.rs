//! A lexicon added to a registry and nowhere else: it builds (JSON, and safe YAML), lints with
//! its own rule, imports, serves its plugin tool, and resolves only the runtime modules it has.

use std::sync::Arc;

use chant_core::build::Format;
use chant_core::lexicon::Registry;
use chant_core::model::Budget;
use chant_core::session::Chant;
use chant_lexicon_tiny::Tiny;

fn chant() -> Chant {
    let lexicons = Arc::new(Registry::new(vec![Box::new(Tiny)]));
    let engine = chant_js::Engine::new(
        chant_js::EmbeddedModules::with_lexicons(Arc::clone(&lexicons)),
        chant_js::Limits::default(),
    );
    Chant {
        lexicons,
        evaluator: Box::new(engine),
    }
}

const THINGS: &str = "import { Thing } from \"@intentius/chant-lexicon-tiny\";\nexport const small = new Thing({ size: 1, label: \"true\" });\nexport const big = new Thing({ size: \"huge\", peer: small });\n";

fn project(src: &str) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("chant.config.json"),
        r#"{"lexicons":["tiny"]}"#,
    )
    .unwrap();
    std::fs::create_dir(dir.path().join("src")).unwrap();
    std::fs::write(dir.path().join("src/things.ts"), src).unwrap();
    dir
}

#[test]
fn a_lexicon_in_a_registry_builds_lints_imports_and_serves() {
    let chant = chant();
    let dir = project(THINGS);
    let root = std::fs::canonicalize(dir.path()).unwrap();
    let budget = Budget::default();
    let p = chant.locate(&root.join("src"), &budget).unwrap();
    let (_, json) = chant.build(&p, Format::Json, None, &budget);
    assert_eq!(
        json.unwrap().output,
        "{\n  \"things\": {\n    \"big\": {\n      \"peer\": \"small\",\n      \"size\": \"huge\"\n    },\n    \"small\": {\n      \"label\": \"true\",\n      \"size\": 1\n    }\n  }\n}"
    );
    // JSON output as YAML goes through the safe style: the string "true" stays a string.
    let (_, yaml) = chant.build(&p, Format::Yaml, None, &budget);
    assert_eq!(
        yaml.unwrap().output,
        "things:\n  big:\n    peer: small\n    size: huge\n  small:\n    label: \"true\"\n    size: 1\n"
    );

    let setup = chant_core::lint::setup(&chant.lexicons, &p, &root.join("src"), &[]).unwrap();
    assert!(setup.rules.iter().any(|r| r.id == "TINY001"));
    let found: Vec<(String, usize)> = setup
        .linter()
        .lint(&setup.files)
        .all
        .into_iter()
        .filter(|d| d.rule_id == "TINY001")
        .map(|d| (d.message, d.line))
        .collect();
    assert_eq!(found, [("this Thing is huge".to_owned(), 3)]);

    let template = root.join("things.json");
    std::fs::write(&template, r#"{"tinyThings": {"cup": {"size": 2}}}"#).unwrap();
    let out = root.join("imported");
    let report =
        chant_core::import::import_file(&chant.lexicons, &template, &out, &[], false).unwrap();
    assert_eq!(
        (report.lexicon, report.written),
        ("tiny", vec!["things.ts".to_owned()])
    );
    assert_eq!(
        std::fs::read_to_string(out.join("things.ts")).unwrap(),
        "import { Thing } from \"@intentius/chant-lexicon-tiny\";\nexport const cup = new Thing({\"size\":2});\n"
    );

    let server = chant_mcp::server(
        chant,
        chant_mcp::Options {
            root: root.clone(),
            version: "0".into(),
            tool_names: Default::default(),
            exe: None,
        },
    )
    .unwrap();
    assert!(server.tools().iter().any(|t| t.name == "tiny:count"));
}

#[test]
fn only_the_runtime_modules_a_lexicon_has_resolve() {
    let chant = chant();
    for (specifier, ok) in [
        ("@intentius/chant-lexicon-tiny", true),
        ("@intentius/chant-lexicon-tiny/sub", false),
        ("@intentius/chant-lexicon-tiny/../tiny", false),
        ("@intentius/chant-lexicon-gitlab", false),
        ("@intentius/chant-lexicon-", false),
    ] {
        let dir = project(&THINGS.replace("@intentius/chant-lexicon-tiny", specifier));
        let root = std::fs::canonicalize(dir.path()).unwrap();
        let budget = Budget::default();
        let p = chant.locate(&root, &budget).unwrap();
        let d = chant.discover(&p, &budget);
        assert_eq!(d.errors.is_empty(), ok, "{specifier}: {:?}", d.errors);
        if !ok {
            let message = &d.errors[0].message;
            assert!(
                message.contains(&format!("Cannot find module '{specifier}'")),
                "{specifier}: {message}"
            );
        }
    }
}

/// `op-run` over MCP calls the activity the project's lexicon offers, and a step naming none
/// is told every name it could have called.
#[test]
fn an_op_calls_the_activities_its_projects_lexicon_offers() {
    let dir = project(THINGS);
    let root = std::fs::canonicalize(dir.path()).unwrap();
    let git = |args: &[&str]| {
        let ok = std::process::Command::new("git")
            .args(args)
            .current_dir(&root)
            .output()
            .unwrap();
        assert!(
            ok.status.success(),
            "{}",
            String::from_utf8_lossy(&ok.stderr)
        );
    };
    git(&["init", "-q"]);
    std::fs::write(
        root.join("measure.op.ts"),
        r#"export default { name: "measure", overview: "", phases: [{ name: "M", parallel: true, steps: [
  { kind: "activity", fn: "tinyMeasure", args: { size: 100 }, outcomeAttribute: { name: "huge", from: "huge" } },
  { kind: "activity", fn: "tinyMeasure", args: { size: "big" }, profile: "policyCheck" },
  { kind: "activity", fn: "awsApply", profile: "policyCheck" }
] }] };
"#,
    )
    .unwrap();
    let server = chant_mcp::server(
        chant(),
        chant_mcp::Options {
            root: root.clone(),
            version: "0".into(),
            tool_names: Default::default(),
            exe: None,
        },
    )
    .unwrap();
    let input = [
        r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"0"}}}"#,
        r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#,
        r#"{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"op-run","arguments":{"name":"measure"}}}"#,
    ]
    .join("\n")
        + "\n";
    let out = server.serve_sync(input.as_bytes());
    let reply: serde_json::Value = String::from_utf8(out)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str::<serde_json::Value>(l).unwrap())
        .find(|m| m["id"] == 2)
        .expect("a reply to op-run");
    let text = reply["result"]["content"][0]["text"].as_str().unwrap();
    let run: serde_json::Value = serde_json::from_str(text).unwrap();
    let records = run["records"].as_array().unwrap();
    let by_size = |i: usize| {
        (
            &records[i]["status"],
            &records[i]["outcome"],
            &records[i]["error"],
        )
    };
    assert_eq!(run["state"], "failed", "{run}");
    assert_eq!(
        by_size(0),
        (
            &serde_json::json!("ok"),
            &serde_json::json!({"name": "huge", "value": true}),
            &serde_json::Value::Null
        )
    );
    assert_eq!(records[1]["status"], "fail");
    assert_eq!(records[1]["error"], "tinyMeasure needs a size number");
    assert_eq!(
        records[2]["error"],
        "no activity named \"awsApply\" (known: shellCmd, tinyMeasure)"
    );

    // The project's lexicons are read at each run, not when the server started: once neither
    // the config nor an import names tiny, its activity is not there.
    std::fs::write(root.join("chant.config.json"), r#"{"lexicons":[]}"#).unwrap();
    std::fs::write(root.join("src/things.ts"), "export const nothing = 1;\n").unwrap();
    let out = server.serve_sync(
        [
            r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"0"}}}"#,
            r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#,
            r#"{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"op-run","arguments":{"name":"measure"}}}"#,
        ]
        .join("\n")
        .as_bytes(),
    );
    let reply: serde_json::Value = String::from_utf8(out)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str::<serde_json::Value>(l).unwrap())
        .find(|m| m["id"] == 3)
        .expect("a reply to op-run");
    let text = reply["result"]["content"][0]["text"].as_str().unwrap();
    let run: serde_json::Value = serde_json::from_str(text).unwrap();
    assert_eq!(
        run["records"][0]["error"], "no activity named \"tinyMeasure\" (known: shellCmd)",
        "{run}"
    );
}
