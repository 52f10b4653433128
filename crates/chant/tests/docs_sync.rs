//! docs/chant*.md name exactly what the binary registers.

use std::path::Path;

use mcp_testkit::docs::{headings, page, subcommands};

const BIN: &str = env!("CARGO_BIN_EXE_chant");

#[test]
fn the_server_page_lists_every_tool() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("chant.config.json"),
        r#"{"lexicons":["gitlab","aws"]}"#,
    )
    .unwrap();
    let mut s = mcp_testkit::ServerProcess::spawn_in(BIN, ["serve", "mcp"], Path::new(dir.path()));
    let tools = s.request(1, "tools/list", serde_json::json!({}))["result"]["tools"].clone();
    let names: Vec<&str> = tools
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["name"].as_str().unwrap())
        .collect();
    let page = page(env!("CARGO_MANIFEST_DIR"), "chant-serve-mcp.md");
    assert_eq!(headings(&page, "### `"), names);
    let resources =
        s.request(2, "resources/list", serde_json::json!({}))["result"]["resources"].clone();
    for r in resources.as_array().unwrap() {
        let uri = r["uri"].as_str().unwrap();
        let documented = page.contains(&format!("`{uri}`"))
            || uri.starts_with("chant://gitlab/examples/")
            || uri.starts_with("chant://aws/examples/");
        assert!(documented, "{uri} is not on docs/chant-serve-mcp.md");
    }
}

#[test]
fn the_command_page_lists_every_subcommand() {
    let page = page(env!("CARGO_MANIFEST_DIR"), "chant.md");
    let mut documented = headings(&page, "## `chant ");
    documented.sort();
    let mut commands = subcommands(BIN);
    commands.sort();
    assert_eq!(documented, commands);
}

/// docs/architecture.md's table names every crate of the workspace.
#[test]
fn the_architecture_page_names_every_crate() {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let page = std::fs::read_to_string(root.join("docs/architecture.md")).unwrap();
    for entry in std::fs::read_dir(root.join("crates")).unwrap() {
        let name = entry.unwrap().file_name().to_string_lossy().into_owned();
        assert!(
            page.contains(&format!("`{name}`")),
            "crates/{name} is not on docs/architecture.md"
        );
    }
}

/// The seed's workspace tool table, `(tool, [parameters])`: the rows after "Tool\tParameters".
fn seed_workspace_tools() -> Vec<(String, Vec<String>)> {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../../shared/seeds");
    let page = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| std::fs::read_to_string(e.unwrap().path()).unwrap())
        .find(|t| t.contains("Workspace tools"))
        .unwrap();
    let start = page.find("Tool\tParameters\tReturns").unwrap();
    page[start..]
        .lines()
        .skip(1)
        .take_while(|l| l.contains('\t'))
        .map(|l| {
            let mut cols = l.split('\t');
            let name = cols.next().unwrap().to_owned();
            let params = cols.next().unwrap();
            let cleaned = params
                .replace(" (required)", "")
                .replace(" (a list)", "")
                .replace(" (all required)", "")
                .replace(" (both required)", "")
                .replace(" and ", ", ");
            let params = cleaned
                .split(", ")
                .map(|p| p.trim().to_owned())
                .filter(|p| !p.is_empty())
                .collect();
            (name, params)
        })
        .collect()
}

/// A server inside a workspace registers only tools of the seed's workspace table, each with
/// exactly the seed's parameters, and docs/workspaces.md has a section for each.
#[test]
fn the_workspace_tools_match_the_seed_table_and_the_page() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("chant.workspace.json"),
        r#"{"name": "ws", "schema": 1, "members": []}"#,
    )
    .unwrap();
    let mut s = mcp_testkit::ServerProcess::spawn_in(BIN, ["serve", "mcp"], dir.path());
    s.initialize(Some("2025-11-25"));
    let tools = s.request(1, "tools/list", serde_json::json!({}))["result"]["tools"].clone();
    let seed = seed_workspace_tools();
    assert_eq!(seed.len(), 16, "{seed:?}");
    let page = page(env!("CARGO_MANIFEST_DIR"), "workspaces.md");
    let documented = headings(&page, "### `");
    let mut served = Vec::new();
    for t in tools.as_array().unwrap() {
        let name = t["name"].as_str().unwrap();
        let Some((_, params)) = seed.iter().find(|(n, _)| n == name) else {
            continue;
        };
        let mut have: Vec<String> = t["inputSchema"]["properties"]
            .as_object()
            .unwrap()
            .keys()
            .cloned()
            .collect();
        let mut want = params.clone();
        have.sort();
        want.sort();
        assert_eq!(have, want, "{name}'s parameters");
        served.push(name.to_owned());
    }
    assert_eq!(documented, served, "docs/workspaces.md's tool sections");
    for (name, _) in &seed {
        assert!(
            served.contains(name)
                || page.contains(&format!("`{name}`"))
                || page.contains("`points-*`"),
            "{name} is neither served nor named on docs/workspaces.md"
        );
    }
}
