//! docs/agentxchain*.md name exactly what the binary registers.

use std::path::PathBuf;

use mcp_testkit::docs::{headings, page, subcommands};

fn doc(name: &str) -> String {
    page(env!("CARGO_MANIFEST_DIR"), name)
}

#[test]
fn the_server_page_lists_every_tool_and_resource() {
    let server = axc_mcp::server(axc_mcp::Options {
        project_root: PathBuf::from("/nonexistent"),
        version: "0".into(),
        warn: std::sync::Arc::new(|_| {}),
    });
    let page = doc("agentxchain-serve-mcp.md");
    let tools: Vec<&str> = server.tools().iter().map(|t| t.name.as_str()).collect();
    assert_eq!(headings(&page, "### `"), tools);
    for r in server.resources() {
        assert!(page.contains(&format!("`{}`", r.uri)), "{}", r.uri);
    }
}

#[test]
fn the_command_page_lists_every_subcommand() {
    let commands = subcommands(env!("CARGO_BIN_EXE_agentxchain"));
    let page = doc("agentxchain.md");
    let documented: Vec<&str> = headings(&page, "## `agentxchain ");
    assert_eq!(documented, commands);
}
