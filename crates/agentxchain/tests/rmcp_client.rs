//! The official Rust SDK's client (`rmcp`) lists and calls every agentxchain tool, in each of its
//! lifecycles.

mod support;

use rmcp::model::{
    CallToolRequestParams, ClientConfig, ProtocolVersion, ReadResourceRequestParams,
};
use rmcp::transport::TokioChildProcess;
use rmcp::{ClientLifecycleMode, ClientServiceExt};
use serde_json::{Value, json};

async fn every_tool(mode: ClientLifecycleMode) {
    let (_d, root) = support::project_copy("scratch-blocked-hesc");
    let mut cmd = tokio::process::Command::new(support::BIN);
    cmd.arg("serve-mcp")
        .arg("--root")
        .arg(&root)
        .stderr(std::process::Stdio::null());
    let client = ClientConfig::default()
        .serve_with_lifecycle(TokioChildProcess::new(cmd).unwrap(), mode)
        .await
        .expect("rmcp connects to agentxchain serve-mcp");
    assert_eq!(
        client.peer_info().unwrap().protocol_version,
        ProtocolVersion::V_2026_07_28
    );
    let tools = client.list_all_tools().await.unwrap();
    let names: Vec<&str> = tools.iter().map(|t| t.name.as_ref()).collect();
    assert_eq!(
        names,
        [
            "agentxchain_status",
            "agentxchain_events",
            "agentxchain_history",
            "agentxchain_approve_gate",
            "agentxchain_intake_record"
        ]
    );
    let calls = [
        ("agentxchain_status", json!({}), "blocked", json!(true)),
        ("agentxchain_events", json!({"limit": 2}), "count", json!(2)),
        ("agentxchain_history", json!({}), "count", json!(0)),
        (
            "agentxchain_approve_gate",
            json!({"gate_id": "hesc_2f9ad2784d2284e1"}),
            "type",
            json!("needs_credential"),
        ),
        (
            "agentxchain_intake_record",
            json!({"source": "manual", "title": "t"}),
            "ok",
            json!(true),
        ),
    ];
    for (name, args, key, expected) in calls {
        let args = args.as_object().cloned().unwrap();
        let r = client
            .call_tool(CallToolRequestParams::new(name).with_arguments(args))
            .await
            .unwrap();
        let structured: Value = r
            .structured_content
            .clone()
            .unwrap_or_else(|| panic!("{name}: {r:?}"));
        assert_eq!(structured[key], expected, "{name}");
    }
    let state = client
        .read_resource(ReadResourceRequestParams::new("agentxchain://state"))
        .await
        .unwrap();
    assert_eq!(state.contents.len(), 1);
    client.cancel().await.unwrap();
}

#[tokio::test]
async fn initialize_lifecycle() {
    every_tool(ClientLifecycleMode::Initialize).await;
}

#[tokio::test]
async fn discover_lifecycle() {
    every_tool(ClientLifecycleMode::Discover {
        preferred_versions: vec![ProtocolVersion::V_2026_07_28],
    })
    .await;
}

#[tokio::test]
async fn auto_lifecycle() {
    every_tool(ClientLifecycleMode::Auto {
        preferred_versions: vec![ProtocolVersion::V_2026_07_28],
        legacy_version: Some(ProtocolVersion::V_2025_11_25),
    })
    .await;
}
