//! Tool calls to a local server, below rmcp: round trips, progress, timeouts, aborts, a
//! server that goes away, and requests bigger than the pipe. The server is a `sed` script
//! that answers each request line with a canned response line.
#![cfg(target_os = "linux")]

use std::sync::{Arc, Mutex};

use std::time::Duration;
use tokio::sync::mpsc;

use serde_json::json;
use tokio_util::sync::CancellationToken;
use toolnexus::code::Code;
use toolnexus::config::{ConfigInput, McpConfig};
use toolnexus::inventory::{self, Source};
use toolnexus::session::{CallSink, CallSpec, Progress, Session};
use toolnexus::tool::result::ToolOutput;

/// Answers initialize, tools/list and tools/call by pattern, one line per line (`-u`:
/// unbuffered). `quit` makes the server exit with code 0 instead of answering.
const SERVER: &str = r#"
/"method":"initialize"/{s/.*/{"jsonrpc":"2.0","id":0,"result":{"protocolVersion":"2025-11-25","capabilities":{"tools":{}},"serverInfo":{"name":"sed","version":"1"}}}/p;d}
/"method":"tools\/list"/{s/^{"jsonrpc":"2.0","id":"\([^"]*\)".*/{"jsonrpc":"2.0","id":"\1","result":{"tools":[{"name":"echo","inputSchema":{"type":"object"}},{"name":"silent"},{"name":"progress"},{"name":"quit"},{"name":"failing"}]}}/p;d}
/"name":"echo"/{s/^{"jsonrpc":"2.0","id":"\([^"]*\)".*"arguments":{"text":"\([^"]*\)"}.*$/{"jsonrpc":"2.0","id":"\1","result":{"content":[{"type":"text","text":"\2"}]}}/p;d}
/"name":"progress"/{s/^{"jsonrpc":"2.0","id":"\([^"]*\)".*/{"jsonrpc":"2.0","method":"notifications\/progress","params":{"progressToken":"\1","progress":1,"total":2,"message":"half"}}\n{"jsonrpc":"2.0","id":"\1","result":{"content":[{"type":"text","text":"done"}]}}/p;d}
/"name":"failing"/{s/^{"jsonrpc":"2.0","id":"\([^"]*\)".*/{"jsonrpc":"2.0","id":"\1","error":{"code":-32602,"message":"no such thing"}}/p;d}
/"name":"quit"/q
d
"#;

async fn load() -> Source {
    load_command(json!(["sed", "-u", "-n", SERVER])).await
}

async fn load_command(command: serde_json::Value) -> Source {
    let config = json!({ "sed": { "command": command, "timeout": 10_000 } });
    let config = McpConfig::load(&ConfigInput::Json(config.to_string())).expect("valid config");
    let source = inventory::load_source(&config, &Default::default(), &CancellationToken::new())
        .await
        .expect("not aborted");
    assert_eq!(source.status["sed"], "connected", "{:?}", source.failures);
    source
}

async fn call(source: &Source, tool: &str, args: &str, timeout: Duration) -> ToolOutput {
    let options = CallOptions {
        timeout,
        max_total: None,
        cancel: &CancellationToken::new(),
        on_progress: None,
    };
    call_tool(&source.sessions[0], tool, args, options).await
}

/// How one awaited call is run.
struct CallOptions<'a> {
    timeout: Duration,
    max_total: Option<Duration>,
    cancel: &'a CancellationToken,
    /// Returns false when it cannot take more now: the call is then aborted.
    on_progress: Option<&'a (dyn Fn(Progress) -> bool + Send + Sync)>,
}

/// Hands a call's events to the test awaiting it: `Err` carries progress.
struct ChannelSink(mpsc::UnboundedSender<Result<ToolOutput, Progress>>);

impl CallSink for ChannelSink {
    fn progress(&self, _call: u64, progress: Progress) {
        let _ = self.0.send(Err(progress));
    }

    fn done(&self, _call: u64, output: ToolOutput) {
        let _ = self.0.send(Ok(output));
    }
}

/// Starts a call and waits for its outcome, aborting it when `cancel` fires.
async fn call_tool(
    session: &Session,
    tool: &str,
    args: &str,
    options: CallOptions<'_>,
) -> ToolOutput {
    let (tx, mut events) = mpsc::unbounded_channel();
    let spec = CallSpec {
        timeout: options.timeout,
        max_total: options.max_total,
        wants_progress: options.on_progress.is_some(),
        task: false,
        trace: None,
        elicitor: None,
    };
    let id = session.start_call(tool, args, spec, Arc::new(ChannelSink(tx)));
    let mut aborted = false;
    loop {
        tokio::select! {
            event = events.recv() => match event.expect("the outcome comes") {
                Ok(output) => return output,
                Err(progress) => if let Some(on_progress) = options.on_progress
                    && !on_progress(progress)
                    && !aborted
                {
                    aborted = true;
                    session.abort_call(id);
                },
            },
            _ = options.cancel.cancelled(), if !aborted => {
                aborted = true;
                session.abort_call(id);
            }
        }
    }
}

const LONG: Duration = Duration::from_secs(10);

#[tokio::test]
async fn calls_round_trip_and_tools_are_listed() {
    let source = load().await;
    let names: Vec<_> = source.tools.iter().map(|t| t.name.as_str()).collect();
    assert_eq!(
        names,
        [
            "sed_echo",
            "sed_silent",
            "sed_progress",
            "sed_quit",
            "sed_failing"
        ]
    );
    let output = call(&source, "echo", r#"{"text":"hello"}"#, LONG).await;
    assert_eq!(output, ToolOutput::text("hello".into()));
    let output = call(&source, "failing", "{}", LONG).await;
    assert_eq!(
        output,
        ToolOutput::failure(
            Code::ServerError,
            "MCP server \"sed\" answered tools/call \"failing\" with an error: no such thing"
        )
    );
    let output = call(&source, "echo", "[1]", LONG).await;
    assert_eq!(
        output,
        ToolOutput::failure(
            Code::InvalidArgument,
            "MCP server \"sed\": arguments for \"echo\" must be a JSON object"
        )
    );
    source.close().await;
    let output = call(&source, "echo", r#"{"text":"late"}"#, LONG).await;
    assert_eq!(
        output,
        ToolOutput::failure(
            Code::Closed,
            "MCP server \"sed\" is closed; cannot run tools/call \"echo\""
        )
    );
}

#[tokio::test]
async fn many_calls_in_flight_each_get_their_own_answer() {
    let source = load().await;
    let calls = (0..200).map(|i| {
        let source = &source;
        async move {
            let args = format!(r#"{{"text":"call {i}"}}"#);
            (i, call(source, "echo", &args, LONG).await)
        }
    });
    for (i, output) in futures::future::join_all(calls).await {
        assert_eq!(output, ToolOutput::text(format!("call {i}")));
    }
    source.close().await;
}

#[tokio::test]
async fn requests_and_answers_bigger_than_the_pipe_arrive_whole() {
    let source = load().await;
    let text = "x".repeat(1 << 18);
    let args = format!(r#"{{"text":"{text}"}}"#);
    let calls = (0..4).map(|_| call(&source, "echo", &args, LONG));
    for output in futures::future::join_all(calls).await {
        assert_eq!(output.output.len(), text.len());
        assert!(!output.is_error);
    }
    source.close().await;
}

#[tokio::test]
async fn progress_arrives_before_the_result() {
    let source = load().await;
    let seen = Arc::new(Mutex::new(Vec::new()));
    let record = {
        let seen = seen.clone();
        move |p: Progress| {
            seen.lock().expect("lock").push(p);
            true
        }
    };
    let options = CallOptions {
        timeout: LONG,
        max_total: None,
        cancel: &CancellationToken::new(),
        on_progress: Some(&record),
    };
    let output = call_tool(&source.sessions[0], "progress", "{}", options).await;
    assert_eq!(output, ToolOutput::text("done".into()));
    let progress = Progress {
        progress: 1.0,
        total: Some(2.0),
        message: Some("half".into()),
    };
    assert_eq!(*seen.lock().expect("lock"), [progress]);
    source.close().await;
}

#[tokio::test]
async fn an_unanswered_call_times_out_and_an_aborted_one_ends_at_once() {
    let source = load().await;
    let output = call(&source, "silent", "{}", Duration::from_millis(200)).await;
    assert_eq!(
        output,
        ToolOutput::failure(
            Code::Timeout,
            "MCP server \"sed\" did not answer tools/call \"silent\" within 200 ms"
        )
    );
    let cancel = CancellationToken::new();
    let options = CallOptions {
        timeout: LONG,
        max_total: None,
        cancel: &cancel,
        on_progress: None,
    };
    let aborting = async {
        tokio::time::sleep(Duration::from_millis(50)).await;
        cancel.cancel();
    };
    let (output, ()) = tokio::join!(
        call_tool(&source.sessions[0], "silent", "{}", options),
        aborting
    );
    assert_eq!(
        output,
        ToolOutput::failure(
            Code::Aborted,
            "MCP server \"sed\": tools/call \"silent\" was aborted"
        )
    );
    // The session still works after both.
    let output = call(&source, "echo", r#"{"text":"still here"}"#, LONG).await;
    assert_eq!(output.output, "still here");
    source.close().await;
}

#[tokio::test]
async fn calls_in_flight_when_the_server_exits_say_how_it_exited() {
    assert_calls_end_with_the_server(load().await).await;
}

#[tokio::test]
async fn calls_end_with_the_server_even_while_a_grandchild_holds_its_stdout() {
    // The shell leaves a grandchild holding the pipe open, then becomes the sed server.
    let command = json!(["sh", "-c", "sleep 300 & exec sed -u -n \"$0\"", SERVER]);
    assert_calls_end_with_the_server(load_command(command).await).await;
}

/// A call waiting, then `quit`: both, and any later call, fail as the server exited.
async fn assert_calls_end_with_the_server(source: Source) {
    let waiting = call(&source, "silent", "{}", LONG);
    let quitting = async {
        tokio::time::sleep(Duration::from_millis(50)).await;
        call(&source, "quit", "{}", LONG).await
    };
    let (waiting, quitting) = tokio::join!(waiting, quitting);
    assert_eq!(
        waiting,
        ToolOutput::failure(
            Code::ServerFailed,
            "MCP server \"sed\" exited (code 0) during tools/call \"silent\""
        )
    );
    assert_eq!(
        quitting,
        ToolOutput::failure(
            Code::ServerFailed,
            "MCP server \"sed\" exited (code 0) during tools/call \"quit\""
        )
    );
    let later = call(&source, "echo", r#"{"text":"x"}"#, LONG).await;
    assert_eq!(
        later,
        ToolOutput::failure(
            Code::ServerFailed,
            "MCP server \"sed\" exited (code 0) during tools/call \"echo\""
        )
    );
    source.close().await;
}

/// A shell server whose `huge` answers with a 70 MB line and `small` with "ok".
const OVERSIZED_SERVER: &str = r#"
id() { echo "$1" | sed 's/^{"jsonrpc":"2.0","id":"\([^"]*\)".*/\1/'; }
while IFS= read -r line; do
  case "$line" in
    *'"method":"initialize"'*)
      echo '{"jsonrpc":"2.0","id":0,"result":{"protocolVersion":"2025-11-25","capabilities":{"tools":{}},"serverInfo":{"name":"sh","version":"1"}}}' ;;
    *'"method":"tools/list"'*)
      echo "{\"jsonrpc\":\"2.0\",\"id\":\"$(id "$line")\",\"result\":{\"tools\":[{\"name\":\"huge\"},{\"name\":\"small\"}]}}" ;;
    *'"name":"huge"'*)
      printf '{"jsonrpc":"2.0","id":"%s","result":{"content":[{"type":"text","text":"' "$(id "$line")"
      head -c 140000000 /dev/zero | tr '\0' x
      printf '"}]}}\n' ;;
    *'"name":"small"'*)
      echo "{\"jsonrpc\":\"2.0\",\"id\":\"$(id "$line")\",\"result\":{\"content\":[{\"type\":\"text\",\"text\":\"ok\"}]}}" ;;
  esac
done
"#;

#[tokio::test]
async fn an_answer_over_the_size_limit_fails_its_call_at_once_and_the_session_goes_on() {
    let source = load_command(json!(["sh", "-c", OVERSIZED_SERVER])).await;
    let huge = call(&source, "huge", "{}", LONG).await;
    assert_eq!(
        huge,
        ToolOutput::failure(
            Code::Connection,
            "MCP server \"sed\" answered tools/call \"huge\" with a message over the 128 MiB limit"
        )
    );
    let small = call(&source, "small", "{}", LONG).await;
    assert_eq!(small.output, "ok");
    assert!(!small.is_error);
    source.close().await;
}

/// The state letter of `/proc/<pid>/stat` (`Z` for a zombie), or `None` once reaped.
fn process_state(pid: i32) -> Option<char> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    stat.rsplit(')').next()?.trim_start().chars().next()
}

#[tokio::test]
async fn an_exited_server_is_reaped_only_once_its_group_can_no_longer_be_signalled() {
    let pid_file = std::env::temp_dir().join(format!("toolnexus-reap-{}.pid", std::process::id()));
    let script = format!("echo $$ > {}; exec sed -u -n \"$0\"", pid_file.display());
    let source = load_command(json!(["sh", "-c", script, SERVER])).await;
    let pid: i32 = std::fs::read_to_string(&pid_file)
        .expect("the pid file")
        .trim()
        .parse()
        .expect("a pid");
    let _ = std::fs::remove_file(&pid_file);
    let output = call(&source, "quit", "{}", LONG).await;
    assert!(output.is_error, "{output:?}");
    // Exited, yet its pid (the group's id) stays taken while the source may signal it.
    assert_eq!(process_state(pid), Some('Z'));
    source.close().await;
    for _ in 0..100 {
        if process_state(pid).is_none() {
            return;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    panic!("the server was never reaped");
}
