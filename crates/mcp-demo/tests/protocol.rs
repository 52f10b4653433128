//! Black-box tests of the wire protocol: the demo server is spawned and spoken to in raw lines.
//! One test per rule of mcp-protocol.md and the seed's Protocol Details.

use std::time::{Duration, Instant};

use mcp_testkit::{ServerProcess, enveloped, tool_text};
use serde_json::{Value, json};

const SUPPORTED: [&str; 5] = [
    "2026-07-28",
    "2025-11-25",
    "2025-06-18",
    "2025-03-26",
    "2024-11-05",
];

fn demo() -> ServerProcess {
    ServerProcess::spawn(env!("CARGO_BIN_EXE_mcp-demo"), [] as [&str; 0])
}

fn demo_with(args: &[&str]) -> ServerProcess {
    ServerProcess::spawn(env!("CARGO_BIN_EXE_mcp-demo"), args)
}

fn keys(v: &Value) -> Vec<&str> {
    v.as_object()
        .expect("an object")
        .keys()
        .map(String::as_str)
        .collect()
}

fn error_code(reply: &Value) -> i64 {
    reply["error"]["code"]
        .as_i64()
        .unwrap_or_else(|| panic!("not an error: {reply}"))
}

fn call(s: &mut ServerProcess, id: i64, name: &str, args: Value) -> Value {
    s.request(id, "tools/call", json!({"name": name, "arguments": args}))["result"].clone()
}

// ---- negotiation: one test per row of the seed's version table ----

#[test]
fn v2026_is_answered_when_asked_for() {
    let mut s = demo();
    let r = s.initialize(Some("2026-07-28"));
    assert_eq!(r["protocolVersion"], "2026-07-28");
}

#[test]
fn v2026_is_answered_when_no_version_is_named() {
    let mut s = demo();
    let r = s.request(1, "initialize", json!({"capabilities": {}}));
    assert_eq!(r["result"]["protocolVersion"], "2026-07-28");
    // A request with no params at all negotiates the same way.
    let r = s.request(2, "initialize", Value::Null);
    assert_eq!(r["result"]["protocolVersion"], "2026-07-28");
}

#[test]
fn v2025_11_25_is_answered_by_name() {
    assert_eq!(
        demo().initialize(Some("2025-11-25"))["protocolVersion"],
        "2025-11-25"
    );
}

#[test]
fn v2025_06_18_is_answered_by_name() {
    assert_eq!(
        demo().initialize(Some("2025-06-18"))["protocolVersion"],
        "2025-06-18"
    );
}

#[test]
fn v2025_03_26_is_answered_by_name() {
    assert_eq!(
        demo().initialize(Some("2025-03-26"))["protocolVersion"],
        "2025-03-26"
    );
}

#[test]
fn v2024_11_05_is_answered_by_name() {
    assert_eq!(
        demo().initialize(Some("2024-11-05"))["protocolVersion"],
        "2024-11-05"
    );
}

#[test]
fn an_unknown_version_gets_2025_11_25() {
    let mut s = demo();
    for (id, v) in ["1999-01-01", "2024-10-07", "2027-01-01"]
        .into_iter()
        .enumerate()
    {
        let r = s.request(id as i64, "initialize", json!({"protocolVersion": v}));
        assert_eq!(r["result"]["protocolVersion"], "2025-11-25", "for {v}");
    }
}

#[test]
fn initialize_result_shape_per_revision() {
    let r = demo().initialize(Some("2025-11-25"));
    assert_eq!(keys(&r), ["protocolVersion", "capabilities", "serverInfo"]);
    assert_eq!(
        r["serverInfo"],
        json!({"name": "mcp-demo", "version": env!("CARGO_PKG_VERSION")})
    );
    assert_eq!(r["capabilities"], json!({"tools": {}, "resources": {}}));

    let r = demo_with(&["--instructions", "Use the echo tool."]).initialize(Some("2026-07-28"));
    assert_eq!(
        keys(&r),
        [
            "protocolVersion",
            "capabilities",
            "serverInfo",
            "instructions",
            "resultType",
            "_meta"
        ]
    );
    assert_eq!(r["instructions"], "Use the echo tool.");
    assert_eq!(r["resultType"], "complete");
    assert_eq!(
        r["_meta"]["io.modelcontextprotocol/serverInfo"],
        json!({"name": "mcp-demo", "version": env!("CARGO_PKG_VERSION")})
    );
}

#[test]
fn a_second_initialize_renegotiates() {
    let mut s = demo();
    s.initialize(Some("2024-11-05"));
    let r = call(&mut s, 1, "whoami", json!({}));
    assert!(tool_text(&r).contains("\"protocolVersion\": \"2024-11-05\""));
    s.initialize(Some("2025-06-18"));
    assert_eq!(
        call(&mut s, 2, "whoami", json!({}))["structuredContent"]["protocolVersion"],
        "2025-06-18"
    );
}

// ---- the _meta envelope and its fallback ----

#[test]
fn the_envelope_sets_the_version_of_each_request() {
    let mut s = demo();
    s.initialize(Some("2024-11-05"));
    let r = s.request(
        1,
        "tools/call",
        enveloped("2025-06-18", json!({"name": "whoami", "arguments": {}})),
    );
    assert_eq!(
        r["result"]["structuredContent"]["protocolVersion"],
        "2025-06-18"
    );
    assert_eq!(
        r["result"]["structuredContent"]["clientInfo"]["name"],
        "mcp-testkit"
    );
    // No envelope: back to the handshake version (no structuredContent at 2024-11-05).
    let r = call(&mut s, 2, "whoami", json!({}));
    assert!(r.get("structuredContent").is_none());
    assert!(tool_text(&r).contains("\"protocolVersion\": \"2024-11-05\""));
}

#[test]
fn without_envelope_the_initialize_fields_are_used() {
    let mut s = demo();
    s.request(
        0,
        "initialize",
        json!({"protocolVersion": "2025-11-25", "clientInfo": {"name": "old-client", "version": "9"}}),
    );
    let r = call(&mut s, 1, "whoami", json!({}));
    assert_eq!(r["structuredContent"]["protocolVersion"], "2025-11-25");
    assert_eq!(
        r["structuredContent"]["clientInfo"],
        json!({"name": "old-client", "version": "9"})
    );
}

#[test]
fn without_envelope_or_initialize_requests_are_served_at_2025_11_25() {
    let mut s = demo();
    let r = call(&mut s, 1, "whoami", json!({}));
    assert_eq!(r["structuredContent"]["protocolVersion"], "2025-11-25");
    assert_eq!(r["structuredContent"]["clientInfo"], Value::Null);
}

#[test]
fn an_enveloped_unsupported_version_gets_32022() {
    let mut s = demo();
    let r = s.request(1, "tools/list", enveloped("2099-01-01", json!({})));
    assert_eq!(
        r["error"],
        json!({
            "code": -32022,
            "message": "Unsupported protocol version: 2099-01-01",
            "data": {"requested": "2099-01-01", "supported": SUPPORTED}
        })
    );
    // initialize is held to the same rule.
    let r = s.request(
        2,
        "initialize",
        enveloped("2024-10-07", json!({"protocolVersion": "2025-11-25"})),
    );
    assert_eq!(error_code(&r), -32022);
}

// ---- server/discover ----

#[test]
fn discover_merges_initialize_with_the_listings() {
    let mut s = demo();
    let d = s.request(1, "server/discover", enveloped("2026-07-28", json!({})))["result"].clone();
    assert_eq!(
        keys(&d),
        [
            "protocolVersion",
            "supportedVersions",
            "capabilities",
            "serverInfo",
            "tools",
            "resources",
            "resultType",
            "ttlMs",
            "cacheScope",
            "_meta"
        ]
    );
    assert_eq!(d["protocolVersion"], "2026-07-28");
    assert_eq!(d["supportedVersions"], json!(SUPPORTED));
    assert_eq!(
        (
            d["resultType"].clone(),
            d["ttlMs"].clone(),
            d["cacheScope"].clone()
        ),
        (json!("complete"), json!(0), json!("private"))
    );
    let tools =
        s.request(2, "tools/list", enveloped("2026-07-28", json!({})))["result"]["tools"].clone();
    let resources =
        s.request(3, "resources/list", enveloped("2026-07-28", json!({})))["result"]["resources"]
            .clone();
    assert_eq!(d["tools"], tools);
    assert_eq!(d["resources"], resources);
}

// ---- 2026-07-28 result fields ----

#[test]
fn v2026_results_carry_result_type_and_cache_keys() {
    let mut s = demo();
    let e = |p: Value| enveloped("2026-07-28", p);
    for (id, method, params) in [
        (1, "tools/list", e(json!({}))),
        (2, "resources/list", e(json!({}))),
        (3, "resources/templates/list", e(json!({}))),
        (4, "resources/read", e(json!({"uri": "demo://readme"}))),
    ] {
        let r = s.request(id, method, params)["result"].clone();
        assert_eq!(r["resultType"], "complete", "{method}");
        assert_eq!(r["ttlMs"], 0, "{method}");
        assert_eq!(r["cacheScope"], "private", "{method}");
        assert_eq!(
            r["_meta"]["io.modelcontextprotocol/serverInfo"]["name"], "mcp-demo",
            "{method}"
        );
    }
    let r = s.request(
        5,
        "tools/call",
        e(json!({"name": "echo", "arguments": {"text": "x"}})),
    )["result"]
        .clone();
    assert_eq!(
        keys(&r),
        ["content", "structuredContent", "resultType", "_meta"]
    );
}

#[test]
fn older_results_carry_no_2026_keys() {
    let mut s = demo();
    s.initialize(Some("2025-11-25"));
    for (id, method, params) in [
        (1, "tools/list", json!({})),
        (2, "resources/list", json!({})),
        (3, "resources/read", json!({"uri": "demo://readme"})),
        (
            4,
            "tools/call",
            json!({"name": "echo", "arguments": {"text": "x"}}),
        ),
    ] {
        let r = s.request(id, method, params)["result"].clone();
        for k in ["resultType", "ttlMs", "cacheScope", "_meta"] {
            assert!(r.get(k).is_none(), "{method} carries {k}");
        }
    }
}

#[test]
fn titles_annotations_and_structured_content_are_gated_by_revision() {
    let listing = |v: &str| {
        let mut s = demo();
        s.initialize(Some(v));
        s.request(1, "tools/list", json!({}))["result"]["tools"][0].clone()
    };
    assert_eq!(
        keys(&listing("2024-11-05")),
        ["name", "description", "inputSchema"]
    );
    assert_eq!(
        keys(&listing("2025-03-26")),
        ["name", "description", "inputSchema", "annotations"]
    );
    assert_eq!(
        keys(&listing("2025-06-18")),
        ["name", "title", "description", "inputSchema", "annotations"]
    );

    let mut s = demo();
    s.initialize(Some("2025-03-26"));
    let r = call(&mut s, 2, "echo", json!({"text": "x"}));
    assert!(r.get("structuredContent").is_none());
    let r = s.request(3, "resources/list", json!({}))["result"]["resources"][0].clone();
    assert_eq!(keys(&r), ["uri", "name", "description", "mimeType"]);
}

// ---- methods ----

#[test]
fn ping_is_answered_before_2026_only() {
    let mut s = demo();
    s.initialize(Some("2025-11-25"));
    assert_eq!(s.request(1, "ping", json!({}))["result"], json!({}));
    assert_eq!(s.request(2, "ping", Value::Null)["result"], json!({}));
    let r = s.request(3, "ping", enveloped("2026-07-28", json!({})));
    assert_eq!(
        r["error"],
        json!({"code": -32601, "message": "Method not found"})
    );
}

#[test]
fn unknown_methods_get_32601() {
    let mut s = demo();
    s.initialize(Some("2025-11-25"));
    for (id, m) in [
        "prompts/list",
        "logging/setLevel",
        "completion/complete",
        "resources/subscribe",
        "x",
    ]
    .into_iter()
    .enumerate()
    {
        let r = s.request(id as i64, m, json!({}));
        assert_eq!(
            r["error"],
            json!({"code": -32601, "message": "Method not found"}),
            "{m}"
        );
    }
}

#[test]
fn templates_are_listed() {
    let mut s = demo();
    s.initialize(Some("2025-11-25"));
    let r = s.request(1, "resources/templates/list", json!({}));
    assert_eq!(
        r["result"]["resourceTemplates"],
        json!([{"uriTemplate": "demo://items/{id}", "name": "item", "description": "One numbered item", "mimeType": "application/json"}])
    );
    let r = s.request(2, "resources/read", json!({"uri": "demo://items/7"}));
    assert_eq!(r["result"]["contents"][0]["uri"], "demo://items/7");
    assert_eq!(
        r["result"]["contents"][0]["text"],
        "{\n  \"id\": 7,\n  \"square\": 49\n}"
    );
}

#[test]
fn a_missing_resource_is_32002_before_2026_and_32602_at_2026() {
    let mut s = demo();
    s.initialize(Some("2025-11-25"));
    let r = s.request(1, "resources/read", json!({"uri": "demo://nope"}));
    assert_eq!(
        r["error"],
        json!({"code": -32002, "message": "Unknown resource: demo://nope"})
    );
    let r = s.request(
        2,
        "resources/read",
        enveloped("2026-07-28", json!({"uri": "demo://nope"})),
    );
    assert_eq!(
        r["error"],
        json!({"code": -32602, "message": "Unknown resource: demo://nope"})
    );
    let r = s.request(3, "resources/read", json!({}));
    assert_eq!(
        r["error"],
        json!({"code": -32602, "message": "Invalid params"})
    );
}

#[test]
fn list_methods_paginate_with_cursors() {
    let mut s = demo_with(&["--page-size", "4"]);
    s.initialize(Some("2025-11-25"));
    let page1 = s.request(1, "tools/list", json!({}))["result"].clone();
    let names = |p: &Value| {
        p["tools"]
            .as_array()
            .unwrap()
            .iter()
            .map(|t| t["name"].as_str().unwrap().to_owned())
            .collect::<Vec<_>>()
    };
    assert_eq!(names(&page1), ["echo", "shout", "fail", "panic"]);
    let cursor = page1["nextCursor"].clone();
    assert!(cursor.is_string());
    let page2 = s.request(2, "tools/list", json!({"cursor": cursor}))["result"].clone();
    assert_eq!(names(&page2), ["sleep", "whoami"]);
    assert!(page2.get("nextCursor").is_none());
    for (id, bad) in [
        (3, json!("page:3")),
        (4, json!("nonsense")),
        (5, json!(4)),
        (6, json!("page:400")),
    ] {
        let r = s.request(id, "tools/list", json!({"cursor": bad}));
        assert_eq!(
            r["error"],
            json!({"code": -32602, "message": "Invalid cursor"}),
            "{bad}"
        );
    }
}

#[test]
fn without_paging_every_cursor_is_invalid() {
    let mut s = demo();
    let r = s.request(1, "tools/list", json!({}));
    assert!(r["result"].get("nextCursor").is_none());
    let r = s.request(2, "resources/list", json!({"cursor": "page:1"}));
    assert_eq!(error_code(&r), -32602);
}

// ---- notifications ----

#[test]
fn notifications_never_get_a_reply() {
    let mut s = demo();
    s.notify("notifications/initialized", json!({}));
    s.notify("notifications/unknown", json!({"x": 1}));
    s.send(&json!({"jsonrpc": "2.0", "method": "tools/call", "params": {"name": "echo"}}));
    s.send(&json!({"jsonrpc": "2.0", "method": "notifications/cancelled", "params": "garbage"}));
    // A client's response to a request the server never sent: ignored too.
    s.send(&json!({"jsonrpc": "2.0", "id": 99, "result": {}}));
    s.assert_silent(Duration::from_millis(300));
    assert_eq!(s.request(1, "ping", json!({}))["result"], json!({}));
}

#[test]
fn a_cancelled_request_gets_no_reply() {
    let mut s = demo();
    s.initialize(Some("2025-11-25"));
    s.send(&json!({"jsonrpc": "2.0", "id": 7, "method": "tools/call", "params": {"name": "sleep", "arguments": {"ms": 2000}}}));
    std::thread::sleep(Duration::from_millis(100));
    let started = Instant::now();
    s.notify(
        "notifications/cancelled",
        json!({"requestId": 7, "reason": "user"}),
    );
    // Unknown and mismatched ids are ignored.
    s.notify("notifications/cancelled", json!({"requestId": "7"}));
    s.notify("notifications/cancelled", json!({"requestId": 12345}));
    assert_eq!(s.request(8, "ping", json!({}))["result"], json!({}));
    s.assert_silent(Duration::from_millis(500));
    s.close_stdin();
    assert!(s.wait_exit(Duration::from_secs(5)).success());
    assert!(s.drain_lines().is_empty());
    assert!(
        started.elapsed() < Duration::from_millis(1900),
        "the handler saw the cancellation"
    );
}

#[test]
fn progress_is_sent_only_when_a_token_is_given() {
    let mut s = demo();
    s.initialize(Some("2025-11-25"));
    s.send(&json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call",
        "params": {"name": "sleep", "arguments": {"ms": 50}, "_meta": {"progressToken": "tok"}}}));
    let mut progress = Vec::new();
    loop {
        let m = s.recv();
        if m.get("id") == Some(&json!(1)) {
            break;
        }
        assert_eq!(m["method"], "notifications/progress");
        progress.push(m["params"].clone());
    }
    assert_eq!(progress.len(), 10);
    assert_eq!(
        progress[0],
        json!({"progressToken": "tok", "progress": 1, "total": 10, "message": "step 1 of 10"})
    );
    assert_eq!(progress[9]["progress"], 10);

    call(&mut s, 2, "sleep", json!({"ms": 20}));
    s.assert_silent(Duration::from_millis(100));
}

#[test]
fn progress_has_no_message_before_2025_03_26() {
    let mut s = demo();
    s.initialize(Some("2024-11-05"));
    s.send(&json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call",
        "params": {"name": "sleep", "arguments": {"ms": 10}, "_meta": {"progressToken": 5}}}));
    let first = s.recv();
    assert_eq!(
        first["params"],
        json!({"progressToken": 5, "progress": 1, "total": 10})
    );
}

// ---- results ----

#[test]
fn an_object_result_is_pretty_text_plus_structured_content() {
    let mut s = demo();
    s.initialize(Some("2025-06-18"));
    let r = call(&mut s, 1, "echo", json!({"text": "a\"b"}));
    assert_eq!(
        r,
        json!({
            "content": [{"type": "text", "text": "{\n  \"text\": \"a\\\"b\",\n  \"length\": 3\n}"}],
            "structuredContent": {"text": "a\"b", "length": 3}
        })
    );
}

#[test]
fn a_string_result_is_one_text_block() {
    let mut s = demo();
    s.initialize(Some("2025-06-18"));
    assert_eq!(
        call(&mut s, 1, "shout", json!({"text": "hey"})),
        json!({"content": [{"type": "text", "text": "HEY"}]})
    );
}

#[test]
fn a_failing_handler_is_an_is_error_result() {
    let mut s = demo();
    s.initialize(Some("2025-06-18"));
    assert_eq!(
        call(&mut s, 1, "fail", json!({})),
        json!({"content": [{"type": "text", "text": "Error: the demo tool failed on purpose"}], "isError": true})
    );
    // Missing arguments reach the handler as missing, and it words the failure.
    let r = s.request(2, "tools/call", json!({"name": "echo"}));
    assert_eq!(
        tool_text(&r["result"]),
        "Error: text is required and must be a string"
    );
}

#[test]
fn an_unknown_tool_is_an_is_error_result() {
    let mut s = demo();
    s.initialize(Some("2025-06-18"));
    assert_eq!(
        call(&mut s, 1, "nope", json!({})),
        json!({"content": [{"type": "text", "text": "Unknown tool: nope"}], "isError": true})
    );
}

#[test]
fn a_call_without_a_tool_name_is_invalid_params() {
    let mut s = demo();
    for (id, params) in [(1, json!({})), (2, json!({"name": 5})), (3, json!([1, 2]))] {
        let r = s.request(id, "tools/call", params);
        assert_eq!(
            r["error"],
            json!({"code": -32602, "message": "Invalid params"})
        );
    }
}

#[test]
fn a_panicking_handler_is_isolated() {
    let mut s = demo();
    s.initialize(Some("2025-06-18"));
    let r = call(&mut s, 1, "panic", json!({}));
    assert_eq!(r["isError"], true);
    assert_eq!(
        tool_text(&r),
        "Error: tool panic failed unexpectedly: demo panic"
    );
    assert_eq!(
        call(&mut s, 2, "echo", json!({"text": "still here"}))["structuredContent"]["text"],
        "still here"
    );
    assert!(
        s.stderr().contains("demo panic"),
        "the panic is a diagnostic on stderr"
    );
}

#[test]
fn ids_are_echoed_with_their_type() {
    let mut s = demo();
    let r = s.request("abc", "ping", json!({}));
    assert_eq!(r["id"], "abc");
    s.send_raw(b"{\"jsonrpc\":\"2.0\",\"id\":9007199254740993,\"method\":\"ping\"}\n");
    assert_eq!(
        s.recv_line(),
        r#"{"jsonrpc":"2.0","id":9007199254740993,"result":{}}"#
    );
    s.send_raw(b"{\"jsonrpc\":\"2.0\",\"id\":-1.5,\"method\":\"ping\"}\n");
    assert_eq!(s.recv_line(), r#"{"jsonrpc":"2.0","id":-1.5,"result":{}}"#);
}

// ---- framing and bad input ----

#[test]
fn garbage_lines_are_answered_and_the_server_keeps_serving() {
    let mut s = demo();
    let parse_error =
        r#"{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"Parse error"}}"#;
    let invalid =
        r#"{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"Invalid Request"}}"#;
    for (input, expected) in [
        (&b"garbage\n"[..], parse_error),
        (b"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\n", parse_error),
        (b"\xff\xfe{\"id\":1}\n", parse_error),
        (
            b"{\"id\":1,\"method\":\"ping\",\"x\":\"\xc3\x28\"}\n",
            parse_error,
        ),
        (b"42\n", invalid),
        (b"\"hello\"\n", invalid),
        (b"null\n", invalid),
        (b"[]\n", invalid),
        (b"{\"foo\":1}\n", invalid),
        (b"{\"id\":true,\"method\":\"ping\"}\n", invalid),
    ] {
        s.send_raw(input);
        assert_eq!(
            s.recv_line(),
            expected,
            "for {:?}",
            String::from_utf8_lossy(input)
        );
    }
    s.send_raw(b"{\"id\":4,\"method\":7}\n");
    assert_eq!(
        s.recv_line(),
        r#"{"jsonrpc":"2.0","id":4,"error":{"code":-32600,"message":"Invalid Request"}}"#
    );
    // Blank lines are ignored; CRLF endings are accepted.
    s.send_raw(b"\n   \n\r\n{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"ping\"}\r\n");
    assert_eq!(s.recv_line(), r#"{"jsonrpc":"2.0","id":2,"result":{}}"#);
}

#[test]
fn deeply_nested_json_is_a_parse_error_not_a_crash() {
    let mut s = demo();
    let mut line = "[".repeat(100_000);
    line.push('\n');
    s.send_raw(line.as_bytes());
    assert_eq!(error_code(&s.recv()), -32700);
    assert_eq!(s.request(1, "ping", json!({}))["result"], json!({}));
}

#[test]
fn a_10_mib_line_is_served() {
    let mut s = demo();
    s.initialize(Some("2025-06-18"));
    let text = "x".repeat(10 * 1024 * 1024);
    let r = call(&mut s, 1, "echo", json!({"text": text}));
    assert_eq!(r["structuredContent"]["length"], 10 * 1024 * 1024);
}

#[test]
fn a_line_over_16_mib_is_a_parse_error_and_the_server_keeps_serving() {
    let mut s = demo();
    let mut line = format!(
        r#"{{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{{"name":"echo","arguments":{{"text":"{}"}}}}}}"#,
        "y".repeat(17 * 1024 * 1024)
    );
    line.push('\n');
    s.send_raw(line.as_bytes());
    assert_eq!(
        s.recv_line(),
        r#"{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"Parse error"}}"#
    );
    assert_eq!(s.request(2, "ping", json!({}))["result"], json!({}));
}

// ---- batches ----

#[test]
fn batches_are_served_on_a_2025_03_26_session() {
    let mut s = demo();
    s.initialize(Some("2025-03-26"));
    s.send(&json!([
        {"jsonrpc": "2.0", "id": 1, "method": "ping"},
        {"jsonrpc": "2.0", "method": "notifications/initialized"},
        {"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {"name": "echo", "arguments": {"text": "b"}}},
        5,
        {"jsonrpc": "2.0", "id": 3, "method": "nope"}
    ]));
    let reply = s.recv();
    let items = reply.as_array().expect("one array line");
    assert_eq!(items.len(), 4);
    assert_eq!(items[0], json!({"jsonrpc": "2.0", "id": 1, "result": {}}));
    assert_eq!(items[1]["id"], 2);
    assert_eq!(
        tool_text(&items[1]["result"]),
        "{\n  \"text\": \"b\",\n  \"length\": 1\n}"
    );
    assert_eq!(
        items[2],
        json!({"jsonrpc": "2.0", "id": null, "error": {"code": -32600, "message": "Invalid Request"}})
    );
    assert_eq!(error_code(&items[3]), -32601);

    // An all-notification batch gets no reply at all.
    s.send(&json!([{"jsonrpc": "2.0", "method": "notifications/initialized"}]));
    s.assert_silent(Duration::from_millis(200));
}

#[test]
fn batches_are_refused_on_other_sessions() {
    for version in [
        None,
        Some("2024-11-05"),
        Some("2025-06-18"),
        Some("2025-11-25"),
        Some("2026-07-28"),
    ] {
        let mut s = demo();
        if version.is_some() {
            s.initialize(version);
        }
        s.send(&json!([{"jsonrpc": "2.0", "id": 1, "method": "ping"}]));
        assert_eq!(
            s.recv(),
            json!({"jsonrpc": "2.0", "id": null, "error": {"code": -32600, "message": "Invalid Request"}}),
            "{version:?}"
        );
    }
}

// ---- concurrency and end of input ----

#[test]
fn a_slow_call_does_not_delay_tools_list() {
    let mut s = demo();
    s.initialize(Some("2025-11-25"));
    s.send(&json!({"jsonrpc": "2.0", "id": "slow", "method": "tools/call", "params": {"name": "sleep", "arguments": {"ms": 1500}}}));
    s.send(&json!({"jsonrpc": "2.0", "id": "list", "method": "tools/list"}));
    let first = s.recv();
    assert_eq!(
        first["id"], "list",
        "tools/list must overtake the slow call"
    );
    let second = s.recv();
    assert_eq!(second["id"], "slow");
}

#[test]
fn replies_in_flight_at_eof_are_finished_before_exit() {
    let mut s = demo();
    s.initialize(Some("2025-11-25"));
    for id in 1..=5 {
        s.send(&json!({"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": {"name": "sleep", "arguments": {"ms": 300}}}));
    }
    s.close_stdin();
    let status = s.wait_exit(Duration::from_secs(10));
    assert_eq!(status.code(), Some(0));
    let lines = s.drain_lines();
    let mut ids: Vec<i64> = lines
        .iter()
        .map(|l| {
            serde_json::from_str::<Value>(l).unwrap()["id"]
                .as_i64()
                .unwrap()
        })
        .collect();
    ids.sort();
    assert_eq!(ids, [1, 2, 3, 4, 5]);
}

#[test]
fn an_idle_server_exits_0_promptly_on_eof() {
    let mut s = demo();
    s.initialize(None);
    let t = Instant::now();
    s.close_stdin();
    assert_eq!(s.wait_exit(Duration::from_secs(5)).code(), Some(0));
    assert!(t.elapsed() < Duration::from_secs(1));
}

#[test]
fn concurrent_replies_are_whole_lines() {
    let mut s = demo();
    s.initialize(Some("2025-11-25"));
    let big = "z".repeat(200_000);
    for id in 0..40 {
        s.send(&json!({"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": {"name": "echo", "arguments": {"text": big}}}));
    }
    let mut seen = Vec::new();
    for _ in 0..40 {
        let r = s.recv(); // panics on a torn (non-JSON) line
        assert_eq!(r["result"]["structuredContent"]["length"], 200_000);
        seen.push(r["id"].as_i64().unwrap());
    }
    seen.sort();
    assert_eq!(seen, (0..40).collect::<Vec<_>>());
}

#[test]
fn the_demo_binary_explains_itself() {
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_mcp-demo"))
        .arg("--help")
        .output()
        .unwrap();
    assert!(out.status.success());
    assert!(String::from_utf8_lossy(&out.stdout).contains("--page-size N"));
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_mcp-demo"))
        .arg("--bogus")
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("unknown argument '--bogus'"));
}

// ---- arguments ----

#[test]
fn an_argument_the_schema_does_not_declare_is_refused_before_the_handler() {
    let mut s = demo();
    s.initialize(Some("2025-11-25"));
    let r = call(
        &mut s,
        1,
        "echo",
        json!({"text": "hi", "approver": "alice"}),
    );
    assert_eq!(r["isError"], true, "{r}");
    assert_eq!(
        tool_text(&r),
        "Error: echo does not take \"approver\"; its arguments are text"
    );
    let r = call(&mut s, 2, "echo", json!({"text": "hi"}));
    assert_ne!(r["isError"], true, "{r}");
}
