//! docs/chant*.md name exactly what the binary registers.

use std::path::{Path, PathBuf};
use std::process::Command;

const BIN: &str = env!("CARGO_BIN_EXE_chant");

fn doc(name: &str) -> String {
    std::fs::read_to_string(
        PathBuf::from(env!("CARGO_MANIFEST_DIR"))
            .join("../../docs")
            .join(name),
    )
    .unwrap()
}

fn headings<'a>(doc: &'a str, prefix: &str) -> Vec<&'a str> {
    doc.lines()
        .filter_map(|l| l.strip_prefix(prefix)?.strip_suffix('`'))
        .collect()
}

#[test]
fn the_server_page_lists_every_tool() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("chant.config.json"),
        r#"{"lexicons":["gitlab"]}"#,
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
    let page = doc("chant-serve-mcp.md");
    assert_eq!(headings(&page, "### `"), names);
    let resources =
        s.request(2, "resources/list", serde_json::json!({}))["result"]["resources"].clone();
    for r in resources.as_array().unwrap() {
        let uri = r["uri"].as_str().unwrap();
        let documented =
            page.contains(&format!("`{uri}`")) || uri.starts_with("chant://gitlab/examples/");
        assert!(documented, "{uri} is not on docs/chant-serve-mcp.md");
    }
}

#[test]
fn the_command_page_lists_every_subcommand() {
    let out = Command::new(BIN).arg("--help").output().unwrap();
    let help = String::from_utf8_lossy(&out.stdout);
    let commands: Vec<&str> = help
        .lines()
        .skip_while(|l| !l.starts_with("Commands:"))
        .skip(1)
        .take_while(|l| l.starts_with("  "))
        .filter_map(|l| l.split_whitespace().next())
        .filter(|c| *c != "help")
        .collect();
    let page = doc("chant.md");
    let mut documented = headings(&page, "## `chant ");
    documented.sort();
    let mut commands = commands;
    commands.sort();
    assert_eq!(documented, commands);
}
