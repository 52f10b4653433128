//! The official Rust SDK's client (`rmcp`) against the demo server, in each of its lifecycles.

use rmcp::model::{CallToolRequestParams, ClientConfig, ProtocolVersion};
use rmcp::transport::TokioChildProcess;
use rmcp::{ClientLifecycleMode, ClientServiceExt};
use serde_json::json;

async fn list_and_call(mode: ClientLifecycleMode, expected: ProtocolVersion) {
    let cmd = tokio::process::Command::new(env!("CARGO_BIN_EXE_mcp-demo"));
    let transport = TokioChildProcess::new(cmd).expect("spawn mcp-demo");
    let client = ClientConfig::default()
        .serve_with_lifecycle(transport, mode)
        .await
        .expect("rmcp connects to the demo server");

    let info = client.peer_info().expect("server info after connecting");
    assert_eq!(info.protocol_version, expected);
    let server = info.server_info.as_ref().expect("serverInfo");
    assert_eq!(server.name, "mcp-demo");
    assert_eq!(server.version, env!("CARGO_PKG_VERSION"));

    let tools = client.list_all_tools().await.expect("tools/list");
    let names: Vec<&str> = tools.iter().map(|t| t.name.as_ref()).collect();
    assert_eq!(names, ["echo", "shout", "fail", "panic", "sleep", "whoami"]);

    let args = json!({"text": "hi"}).as_object().cloned().unwrap();
    let result = client
        .call_tool(CallToolRequestParams::new("echo").with_arguments(args))
        .await
        .expect("tools/call echo");
    assert_eq!(
        result.structured_content,
        Some(json!({"text": "hi", "length": 2}))
    );
    assert_ne!(result.is_error, Some(true));

    let failed = client
        .call_tool(CallToolRequestParams::new("fail"))
        .await
        .expect("tools/call fail");
    assert_eq!(failed.is_error, Some(true));

    client.cancel().await.expect("close the client");
}

#[tokio::test]
async fn initialize_lifecycle() {
    // rmcp's Initialize mode asks for 2026-07-28 by name, which is echoed.
    list_and_call(
        ClientLifecycleMode::Initialize,
        ProtocolVersion::V_2026_07_28,
    )
    .await;
}

#[tokio::test]
async fn discover_lifecycle() {
    let mode = ClientLifecycleMode::Discover {
        preferred_versions: vec![ProtocolVersion::V_2026_07_28],
    };
    list_and_call(mode, ProtocolVersion::V_2026_07_28).await;
}

#[tokio::test]
async fn auto_lifecycle() {
    let mode = ClientLifecycleMode::Auto {
        preferred_versions: vec![ProtocolVersion::V_2026_07_28],
        legacy_version: Some(ProtocolVersion::V_2025_11_25),
    };
    list_and_call(mode, ProtocolVersion::V_2026_07_28).await;
}
