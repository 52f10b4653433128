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
