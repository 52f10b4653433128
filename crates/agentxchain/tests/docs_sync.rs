//! docs/agentxchain*.md name exactly what the binary registers.

use std::path::PathBuf;
use std::process::Command;

fn doc(name: &str) -> String {
    let p = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../../docs")
        .join(name);
    std::fs::read_to_string(&p).unwrap_or_else(|e| panic!("{}: {e}", p.display()))
}

fn headings<'a>(doc: &'a str, prefix: &str) -> Vec<&'a str> {
    doc.lines()
        .filter_map(|l| l.strip_prefix(prefix)?.strip_suffix('`'))
        .collect()
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
    let out = Command::new(env!("CARGO_BIN_EXE_agentxchain"))
        .arg("--help")
        .output()
        .unwrap();
    let help = String::from_utf8_lossy(&out.stdout);
    let commands: Vec<&str> = help
        .lines()
        .skip_while(|l| !l.starts_with("Commands:"))
        .skip(1)
        .take_while(|l| l.starts_with("  "))
        .filter_map(|l| l.split_whitespace().next())
        .filter(|c| *c != "help")
        .collect();
    let page = doc("agentxchain.md");
    let documented: Vec<&str> = headings(&page, "## `agentxchain ");
    assert_eq!(documented, commands);
}
