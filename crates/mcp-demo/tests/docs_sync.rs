//! docs/mcp-demo.md names exactly the tools and resources the demo server registers.

use std::collections::BTreeSet;

fn doc() -> String {
    mcp_testkit::docs::page(env!("CARGO_MANIFEST_DIR"), "mcp-demo.md")
}

#[test]
fn the_page_lists_every_registered_tool_in_order() {
    let doc = doc();
    let documented = mcp_testkit::docs::headings(&doc, "### `");
    let server = mcp_demo::server(&mcp_demo::Options::default());
    let registered: Vec<&str> = server.tools().iter().map(|t| t.name.as_str()).collect();
    assert_eq!(documented, registered);
}

#[test]
fn the_page_lists_every_resource() {
    let doc = doc();
    let server = mcp_demo::server(&mcp_demo::Options::default());
    let mut uris: BTreeSet<&str> = server.resources().iter().map(|r| r.uri.as_str()).collect();
    uris.extend(
        server
            .resource_templates()
            .iter()
            .map(|t| t.uri_template.as_str()),
    );
    for uri in uris {
        assert!(
            doc.contains(&format!("`{uri}`")),
            "docs/mcp-demo.md does not name {uri}"
        );
    }
}
