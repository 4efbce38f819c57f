//! Process lifecycle of local servers, with plain `sh` commands standing in for servers
//! that crash, hang or leave children behind: no MCP peer is needed for any of these.
#![cfg(unix)]

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use serde_json::json;
use tokio_util::sync::CancellationToken;
use toolnexus::config::{ConfigInput, McpConfig};
use toolnexus::inventory::{self, Aborted, Status};

mod liveness;
use liveness::alive;

fn config(servers: serde_json::Value) -> McpConfig {
    McpConfig::load(&ConfigInput::Json(servers.to_string())).expect("valid config")
}

fn pid_file(test: &str) -> PathBuf {
    std::env::temp_dir().join(format!("toolnexus-{test}-{}.pids", std::process::id()))
}

/// A "server" that records its pid and a grandchild's pid, then hangs without answering.
fn hanging_tree(pids: &Path) -> serde_json::Value {
    let script = format!(
        "echo $$ > {0}; sleep 300 & echo $! >> {0}; wait",
        pids.display()
    );
    json!(["sh", "-c", script])
}

async fn read_pids(path: &Path) -> Vec<i32> {
    for _ in 0..100 {
        if let Ok(text) = std::fs::read_to_string(path) {
            let pids: Vec<i32> = text.lines().filter_map(|l| l.trim().parse().ok()).collect();
            if pids.len() == 2 {
                return pids;
            }
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    panic!("the server never wrote its pids to {}", path.display());
}

async fn assert_gone(pids: &[i32]) {
    for _ in 0..100 {
        if !pids.iter().any(|&p| alive(p)) {
            return;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    panic!(
        "still alive: {:?}",
        pids.iter().filter(|&&p| alive(p)).collect::<Vec<_>>()
    );
}

#[tokio::test]
async fn a_server_that_exits_at_once_fails_fast_with_its_code_and_stderr() {
    let started = Instant::now();
    let cfg =
        config(json!({ "bad": { "command": ["sh", "-c", "echo 'boom: no config' >&2; exit 3"] } }));
    let inv = inventory::list_inventory(&cfg, &CancellationToken::new())
        .await
        .expect("not aborted");
    assert!(
        started.elapsed() < Duration::from_secs(5),
        "took {:?}",
        started.elapsed()
    );
    assert_eq!(inv.status["bad"], "failed");
    let failure = &inv.failures[0];
    assert!(
        failure.starts_with("MCP server \"bad\" failed: exited (code 3) during initialize"),
        "{failure}"
    );
    assert!(failure.contains("boom: no config"), "{failure}");
}

#[tokio::test]
async fn a_missing_program_fails_that_server_only() {
    let cfg = config(json!({
        "missing": { "command": ["/no/such/program"] },
        "off": { "command": ["x"], "enabled": false },
        "broken": { "command": "not an array" },
    }));
    let inv = inventory::list_inventory(&cfg, &CancellationToken::new())
        .await
        .expect("not aborted");
    assert_eq!(
        serde_json::Value::Object(inv.status),
        json!({ "missing": "failed", "off": "disabled", "broken": "failed" })
    );
    assert!(
        inv.failures[0].contains("cannot start \"/no/such/program\""),
        "{:?}",
        inv.failures
    );
    assert!(inv.tools.is_empty());
}

#[tokio::test]
async fn a_silent_server_fails_after_its_own_timeout_and_its_tree_is_killed() {
    let pids_path = pid_file("silent");
    let cfg = config(json!({ "silent": { "command": hanging_tree(&pids_path), "timeout": 300 } }));
    let inv = inventory::list_inventory(&cfg, &CancellationToken::new())
        .await
        .expect("not aborted");
    assert_eq!(inv.status["silent"], "failed");
    assert!(
        inv.failures[0].contains("did not answer initialize within 300 ms"),
        "{:?}",
        inv.failures
    );
    let pids = read_pids(&pids_path).await;
    std::fs::remove_file(&pids_path).ok();
    assert_gone(&pids).await;
}

#[tokio::test]
async fn cancelling_a_load_aborts_promptly_and_kills_every_tree() {
    let pids_path = pid_file("abort");
    let cfg = config(json!({ "hang": { "command": hanging_tree(&pids_path) } }));
    let cancel = CancellationToken::new();
    let load = tokio::spawn({
        let cancel = cancel.clone();
        async move {
            inventory::load_source(&cfg, &Default::default(), &cancel)
                .await
                .map(|_| ())
        }
    });
    let pids = read_pids(&pids_path).await;
    std::fs::remove_file(&pids_path).ok();
    let started = Instant::now();
    cancel.cancel();
    let result = load.await.expect("no panic");
    assert_eq!(result, Err(Aborted));
    assert!(
        started.elapsed() < Duration::from_secs(5),
        "took {:?}",
        started.elapsed()
    );
    assert_gone(&pids).await;
}

#[tokio::test]
async fn an_already_cancelled_load_spawns_nothing() {
    let marker = pid_file("never");
    let cfg =
        config(json!({ "s": { "command": ["sh", "-c", format!("touch {}", marker.display())] } }));
    let cancel = CancellationToken::new();
    cancel.cancel();
    assert!(inventory::list_inventory(&cfg, &cancel).await.is_err());
    tokio::time::sleep(Duration::from_millis(200)).await;
    assert!(!marker.exists(), "the server was started");
}

#[tokio::test]
async fn status_is_in_config_order_and_disabled_servers_are_not_started() {
    let marker = pid_file("disabled");
    let cfg = config(json!({
        "z": { "command": ["sh", "-c", format!("touch {}", marker.display())], "disabled": true },
        "a": { "command": ["sh", "-c", "exit 1"] },
    }));
    let inv = inventory::list_inventory(&cfg, &CancellationToken::new())
        .await
        .expect("not aborted");
    assert_eq!(inv.status.keys().collect::<Vec<_>>(), ["z", "a"]);
    assert_eq!(
        inv.status["z"],
        serde_json::to_value(Status::Disabled).expect("serialises")
    );
    assert!(!marker.exists(), "a disabled server was started");
}

/// The most memory this test process has held (Linux counts `ru_maxrss` in KiB, macOS in
/// bytes).
fn peak_rss_mib() -> u64 {
    // SAFETY: a zeroed rusage is a valid out-parameter for getrusage.
    let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
    // SAFETY: `usage` is live and writable.
    assert_eq!(unsafe { libc::getrusage(libc::RUSAGE_SELF, &mut usage) }, 0);
    let peak = u64::try_from(usage.ru_maxrss).expect("a size");
    if cfg!(target_os = "macos") {
        peak >> 20
    } else {
        peak >> 10
    }
}

#[tokio::test]
async fn endless_stderr_without_a_newline_costs_no_memory() {
    // 300 MB of stderr in one line, then the line that says what went wrong.
    let script = "head -c 300000000 /dev/zero | tr '\\0' x >&2; echo >&2; echo 'the real reason' >&2; exit 3";
    let cfg = config(json!({ "loud": { "command": ["sh", "-c", script], "timeout": 60_000 } }));
    let inv = inventory::list_inventory(&cfg, &CancellationToken::new())
        .await
        .expect("not aborted");
    let failure = &inv.failures[0];
    assert!(failure.contains("exited (code 3)"), "{failure}");
    assert!(failure.contains("the real reason"), "{failure}");
    let peak = peak_rss_mib();
    assert!(
        peak < 150,
        "peak RSS {peak} MiB while draining 300 MB of stderr"
    );
}

/// A `sed` server that answers `initialize` with `answer` (a JSON-RPC response body after
/// the id), `tools/list` with `list` (the same, after the request's string id) when given,
/// and nothing else; it exits when its input closes, as stdio servers do.
fn sed_server(answer: &str, list: Option<&str>) -> serde_json::Value {
    let mut script =
        format!(r#"/"method":"initialize"/{{s/.*/{{"jsonrpc":"2.0","id":0,{answer}}}/p;d}}"#);
    if let Some(list) = list {
        script.push_str(&format!(
            r#"
/"method":"tools\/list"/{{s/^{{"jsonrpc":"2.0","id":"\([^"]*\)".*/{{"jsonrpc":"2.0","id":"\1",{list}}}/p;d}}"#
        ));
    }
    json!(["sed", "-u", "-n", script])
}

fn initialize_answered(answer: &str) -> serde_json::Value {
    sed_server(answer, None)
}

/// An initialize answer with these capabilities.
fn initialized_with(capabilities: &str) -> String {
    format!(
        r#""result":{{"protocolVersion":"2025-11-25","capabilities":{capabilities},"serverInfo":{{"name":"sed","version":"1"}}}}"#
    )
}

async fn load_all(command: serde_json::Value) -> inventory::Inventory {
    let cfg = config(json!({ "srv": { "command": command, "timeout": 10_000 } }));
    inventory::list_inventory(&cfg, &CancellationToken::new())
        .await
        .expect("not aborted")
}

#[tokio::test]
async fn a_server_without_tools_that_refuses_tools_list_is_connected_with_none() {
    let refusal = r#""error":{"code":-32601,"message":"Method not found"}"#;
    let inv = load_all(sed_server(&initialized_with("{}"), Some(refusal))).await;
    assert_eq!(inv.status["srv"], "connected", "{:?}", inv.failures);
    assert!(inv.tools.iter().all(|(_, tools)| tools.is_empty()));

    // Offering tools and then refusing to list them is a failure.
    let command = sed_server(&initialized_with(r#"{"tools":{}}"#), Some(refusal));
    let failure = only_failure(command).await;
    assert!(failure.contains("tools/list"), "{failure}");
}

#[tokio::test]
async fn an_empty_next_cursor_ends_the_listing() {
    let list =
        r#""result":{"tools":[{"name":"only","inputSchema":{"type":"object"}}],"nextCursor":""}"#;
    let inv = load_all(sed_server(&initialized_with(r#"{"tools":{}}"#), Some(list))).await;
    assert_eq!(inv.status["srv"], "connected", "{:?}", inv.failures);
    let names: Vec<_> = inv
        .tools
        .iter()
        .flat_map(|(_, t)| t.iter().map(|t| t.name.clone()))
        .collect();
    assert_eq!(names, ["only"]);
}

async fn only_failure(command: serde_json::Value) -> String {
    let inv = load_all(command).await;
    assert_eq!(inv.status["srv"], "failed", "{:?}", inv.failures);
    inv.failures[0].clone()
}

#[tokio::test]
async fn an_initialize_error_is_the_reason_even_when_the_server_exits_after_it() {
    let answer = r#""error":{"code":-32602,"message":"Unsupported protocol version"}"#;
    let failure = only_failure(initialize_answered(answer)).await;
    assert_eq!(
        failure,
        "MCP server \"srv\" failed: answered initialize with an error: Unsupported protocol version"
    );
}

#[tokio::test]
async fn a_protocol_version_the_client_does_not_know_fails_the_server() {
    let answer = r#""result":{"protocolVersion":"1999-01-01","capabilities":{},"serverInfo":{"name":"old","version":"1"}}"#;
    let failure = only_failure(initialize_answered(answer)).await;
    assert_eq!(
        failure,
        "MCP server \"srv\" failed: answered initialize with protocol version \"1999-01-01\", which this client does not support"
    );
}
