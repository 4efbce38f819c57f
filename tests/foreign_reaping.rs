//! A host that reaps children behind toolnexus's back (`waitpid(-1)`, as some process
//! managers do) must not make closing hang. Alone in its binary: it reaps any child.
#![cfg(target_os = "linux")]

use std::sync::Arc;
use std::time::Duration;

use serde_json::json;
use tokio_util::sync::CancellationToken;
use toolnexus::config::{ConfigInput, McpConfig};
use toolnexus::inventory;
use toolnexus::session::{CallSink, CallSpec, Progress};
use toolnexus::tool::result::ToolOutput;

/// Answers `initialize` and `tools/list`; exits on any other request.
const SERVER: &str = r#"
/"method":"initialize"/{s/.*/{"jsonrpc":"2.0","id":0,"result":{"protocolVersion":"2025-11-25","capabilities":{"tools":{}},"serverInfo":{"name":"sed","version":"1"}}}/p;d}
/"method":"tools\/list"/{s/^{"jsonrpc":"2.0","id":"\([^"]*\)".*/{"jsonrpc":"2.0","id":"\1","result":{"tools":[{"name":"quit"}]}}/p;d}
/"method":"tools\/call"/q
d
"#;

#[tokio::test]
async fn close_returns_when_something_else_reaped_the_server() {
    let config = json!({ "sed": { "command": ["sed", "-u", "-n", SERVER] } });
    let config = McpConfig::load(&ConfigInput::Json(config.to_string())).expect("valid config");
    let source = inventory::load_source(&config, &Default::default(), &CancellationToken::new())
        .await
        .expect("not aborted");
    assert_eq!(source.status["sed"], "connected", "{:?}", source.failures);
    // Waits for the server's exit and reaps it first: the kernel wakes this waiter itself,
    // before the SIGCHLD reaches the runtime.
    let stealer = std::thread::spawn(|| {
        // SAFETY: waitpid with a null status pointer is allowed. `__WALL`: whatever signal
        // the child was set to send its parent.
        let pid = unsafe { libc::waitpid(-1, std::ptr::null_mut(), libc::__WALL) };
        (pid, std::io::Error::last_os_error())
    });
    std::thread::sleep(Duration::from_millis(100));
    // The request goes out at once; the runtime (this thread) then stays busy until the
    // stealer has reaped the exited server, so the runtime's own reaping finds it gone.
    let spec = CallSpec {
        timeout: Duration::from_secs(10),
        max_total: None,
        wants_progress: false,
        task: false,
        trace: None,
        elicitor: None,
    };
    source.sessions[0].start_call("quit", "{}", spec, Arc::new(Ignore));
    let (reaped, error) = stealer.join().expect("the stealer");
    assert!(reaped > 0, "{error}");
    tokio::time::timeout(Duration::from_secs(5), source.close())
        .await
        .expect("close returned although the server was reaped elsewhere");
}

struct Ignore;

impl CallSink for Ignore {
    fn progress(&self, _: u64, _: Progress) {}
    fn done(&self, _: u64, _: ToolOutput) {}
}
