//! The tool calls of a local server, below rmcp. A request is written to the server's
//! stdin by the thread that makes the call, with an id rmcp never uses; its response (and
//! its progress) is taken off the incoming lines before rmcp sees them and decoded
//! straight into a [`ToolOutput`]. A call costs no task, no channel and none of rmcp's
//! generic decoding; timeouts are one sweeper task per session, not a timer per call.
//! `tools/list`, whose pages are the biggest answers, takes the same side door: each page
//! is decoded in one pass into tools whose schemas stay JSON text.

use std::collections::HashMap;
use std::io::Write;
use std::sync::{Arc, Mutex, MutexGuard, OnceLock, Weak};
use std::time::Duration;

use serde::Deserialize;
use serde_json::value::RawValue;
use tokio::runtime::Handle;
use tokio::sync::{Notify, oneshot};
use tokio::time::Instant;

use super::clock::Clock;
use super::handler::{Asking, Shared};
use super::wording::{
    aborted, answered_with_error, bad_arguments, closed_before, closed_during, during, failed,
    malformed_response, unexpected_response,
};
use super::{CallSink, CallSpec, Progress};
use crate::listed_tool::{ListedTool, Page};
use crate::tool_result::{self, ToolOutput};
use crate::transport::MAX_MESSAGE_BYTES;
use crate::transport::lines::{Intercept, LineWriter, WriteError};
use crate::transport::reaper::Exit;
use crate::transport::stdio::ChildProcess;

/// Our request ids and progress tokens: strings, where rmcp's ids are numbers.
const ID_PREFIX: &str = "tn-";
/// How far into a line an answer's id is looked for when the line cannot be decoded.
const ID_HEAD: usize = 256;

pub struct LocalCalls {
    me: Weak<LocalCalls>,
    shared: Arc<Shared>,
    writer: Arc<LineWriter>,
    child: Arc<ChildProcess>,
    runtime: Handle,
    table: Mutex<Table>,
    /// Wakes the sweeper: a deadline earlier than it planned for, or the end.
    nudge: Arc<Notify>,
    /// `_meta` members every request carries, set once the era is known (see
    /// `request_meta`); empty for the 2025 era.
    meta: OnceLock<String>,
}

struct Table {
    pending: HashMap<u64, Pending>,
    /// Pages of `tools/list` being waited for.
    listings: HashMap<u64, oneshot::Sender<PageResult>>,
    state: State,
    /// When the sweeper wakes next, if it plans to.
    sweep_at: Option<Instant>,
}

#[derive(Clone, Copy)]
enum State {
    Open,
    /// The server's output ended; waiting briefly to learn how it exited.
    Ending,
    Gone(Option<Exit>),
    Closed,
}

struct Pending {
    tool: String,
    clock: Clock,
    wants_progress: bool,
    sink: Arc<dyn CallSink>,
}

impl LocalCalls {
    /// Must be called within a tokio runtime (the sweeper is a task).
    pub fn new(
        shared: Arc<Shared>,
        writer: Arc<LineWriter>,
        child: Arc<ChildProcess>,
    ) -> Arc<LocalCalls> {
        let calls = Arc::new_cyclic(|me| LocalCalls {
            me: me.clone(),
            shared,
            writer,
            child,
            runtime: Handle::current(),
            table: Mutex::new(Table {
                pending: HashMap::new(),
                listings: HashMap::new(),
                state: State::Open,
                sweep_at: None,
            }),
            nudge: Arc::new(Notify::new()),
            meta: OnceLock::new(),
        });
        let eliciting = calls.shared.eliciting.subscribe();
        let exit = calls.child.exit_watch();
        tokio::spawn(sweep(
            calls.me.clone(),
            calls.nudge.clone(),
            eliciting,
            exit,
        ));
        calls
    }

    /// Sets the `_meta` members (`,"k":v,...`) of every later request.
    pub fn set_meta(&self, members: String) {
        let _ = self.meta.set(members);
    }

    fn meta(&self) -> &str {
        self.meta.get().map_or("", String::as_str)
    }

    fn table(&self) -> MutexGuard<'_, Table> {
        self.table.lock().unwrap_or_else(|e| e.into_inner())
    }

    fn failed(&self, reason: String) -> ToolOutput {
        failed(&self.shared.server, reason)
    }

    /// Sends `tools/call`; the outcome goes to `sink` under `id`. Never blocks.
    pub fn start(
        &self,
        id: u64,
        tool: &str,
        args_json: &str,
        spec: CallSpec,
        sink: Arc<dyn CallSink>,
    ) {
        let Some(line) = request_line(id, tool, args_json, self.meta()) else {
            return sink.done(id, bad_arguments(&self.shared.server, tool));
        };
        let mut table = self.table();
        match table.state {
            State::Open | State::Ending => {}
            State::Gone(status) => {
                drop(table);
                return self.fail_gone(status, vec![(id, tool.to_owned(), sink)]);
            }
            State::Closed => {
                drop(table);
                return sink.done(id, self.failed(closed_before(tool)));
            }
        }
        let paused = self.shared.eliciting.borrow().pauses(None);
        let clock = Clock::new(spec.timeout, spec.max_total, paused);
        if let Some(deadline) = clock.deadline()
            && table.sweep_at.is_none_or(|at| deadline < at)
        {
            table.sweep_at = Some(deadline);
            self.nudge.notify_one();
        }
        let pending = Pending {
            tool: tool.to_owned(),
            clock,
            wants_progress: spec.wants_progress,
            sink,
        };
        table.pending.insert(id, pending);
        drop(table);
        match self.writer.write_line(&line) {
            // The server is gone: the end of its output fails the call.
            Ok(()) | Err(WriteError::Closed) => {}
            Err(refused) => {
                if let Some(call) = self.table().pending.remove(&id) {
                    let reason = format!("{refused}; {} was not sent", during(tool));
                    call.sink.done(id, self.failed(reason));
                }
            }
        }
    }

    /// One page of `tools/list`, decoded as it arrives (see `take_page`). Unbounded: the
    /// caller bounds it.
    pub async fn list_tools_page(&self, cursor: Option<&str>) -> PageResult {
        let id = super::next_call_id();
        let (tx, rx) = oneshot::channel();
        {
            let mut table = self.table();
            let State::Open = table.state else {
                return Err("closed the connection during tools/list".to_owned());
            };
            table.listings.insert(id, tx);
        }
        let _forget = ForgetListing(self, id);
        let mut params: Vec<String> = Vec::new();
        if let Some(cursor) = cursor {
            params.push(format!("\"cursor\":{}", serde_json::Value::from(cursor)));
        }
        if let Some(meta) = self.meta().strip_prefix(',') {
            params.push(format!("\"_meta\":{{{meta}}}"));
        }
        let params = format!("{{{}}}", params.join(","));
        let line = format!(
            "{{\"jsonrpc\":\"2.0\",\"id\":\"{ID_PREFIX}{id}\",\"method\":\"tools/list\",\"params\":{params}}}\n"
        );
        self.writer
            .write_line(line.as_bytes())
            .map_err(|e| format!("could not send tools/list: {e}"))?;
        rx.await
            .unwrap_or_else(|_| Err("closed the connection during tools/list".to_owned()))
    }

    /// While a listing is waiting, a line is first read as its page, in one pass: pages
    /// are the biggest answers a session gets. Returns false when the line is not one, or
    /// answers anything but a waiting listing (a call's result may hold `tools` too).
    fn take_page(&self, line: &[u8]) -> bool {
        #[derive(Deserialize)]
        struct PageAnswer<'a> {
            #[serde(borrow)]
            id: &'a RawValue,
            #[serde(borrow)]
            result: Page<'a>,
        }
        if self.table().listings.is_empty() {
            return false;
        }
        let Ok(answer) = serde_json::from_slice::<PageAnswer>(line) else {
            return false;
        };
        let Some(listing) = our_id(answer.id).and_then(|id| self.table().listings.remove(&id))
        else {
            return false;
        };
        let tools = answer
            .result
            .tools
            .into_iter()
            .map(ListedTool::from)
            .collect();
        let _ = listing.send(Ok((tools, answer.result.next_cursor)));
        true
    }

    /// The caller gave up: the server is told, the call ends as aborted.
    pub fn abort(&self, id: u64) {
        let Some(call) = self.table().pending.remove(&id) else {
            return;
        };
        self.send_cancelled(id, "aborted by the client");
        call.sink.done(id, aborted(&self.shared.server, &call.tool));
    }

    /// Ends every call in flight; later calls fail at once. Idempotent.
    pub fn close(&self) {
        let pending = {
            let mut table = self.table();
            table.state = State::Closed;
            table.listings.clear();
            std::mem::take(&mut table.pending)
        };
        self.nudge.notify_one();
        for (id, call) in pending {
            call.sink.done(id, self.failed(closed_during(&call.tool)));
        }
    }

    fn send_cancelled(&self, id: u64, reason: &str) {
        let line = format!(
            "{{\"jsonrpc\":\"2.0\",\"method\":\"notifications/cancelled\",\"params\":{{\"requestId\":\"{ID_PREFIX}{id}\",\"reason\":\"{reason}\"}}}}\n"
        );
        let _ = self.writer.write_line(line.as_bytes());
    }

    fn answer(&self, id: u64, result: Option<&RawValue>, error: Option<&RawValue>) {
        let call = {
            let mut table = self.table();
            if let Some(listing) = table.listings.remove(&id) {
                // Not a page (take_page would have had it): an error, or nonsense.
                let page = match error {
                    Some(error) => answered_with_error("tools/list", &error_message(error)),
                    None => unexpected_response("tools/list"),
                };
                let _ = listing.send(Err(page));
                return;
            }
            table.pending.remove(&id)
        };
        let Some(call) = call else {
            // Answered after a timeout or an abort: nobody is waiting.
            return;
        };
        let during = during(&call.tool);
        let unexpected = || self.failed(unexpected_response(&during));
        let output = match (result, error) {
            (Some(result), _) => tool_result::decode(result.get()).unwrap_or_else(unexpected),
            (None, Some(error)) => self.failed(answered_with_error(&during, &error_message(error))),
            (None, None) => unexpected(),
        };
        call.sink.done(id, output);
    }

    fn progress(&self, id: u64, progress: Progress) {
        let mut table = self.table();
        let Some(call) = table.pending.get_mut(&id) else {
            return;
        };
        call.clock.restart();
        if call.wants_progress {
            let sink = call.sink.clone();
            drop(table);
            sink.progress(id, progress);
        }
    }

    /// Times out what is due; returns when to look again (`None`: when nudged), or
    /// `Err` once closed.
    fn expire(&self, eliciting: bool) -> Result<Option<Instant>, ()> {
        let now = Instant::now();
        let mut expired = Vec::new();
        let next = {
            let mut table = self.table();
            if let State::Closed = table.state {
                return Err(());
            }
            let mut next: Option<Instant> = None;
            table.pending.retain(|id, call| {
                call.clock.set_paused(eliciting);
                match call.clock.deadline() {
                    Some(deadline) if deadline <= now => {
                        let reason = call.clock.overrun(&during(&call.tool));
                        expired.push((*id, reason, call.sink.clone()));
                        false
                    }
                    Some(deadline) => {
                        next = Some(next.map_or(deadline, |n| n.min(deadline)));
                        true
                    }
                    None => true,
                }
            });
            table.sweep_at = next;
            next
        };
        for (id, reason, sink) in expired {
            self.send_cancelled(id, "request timeout");
            sink.done(id, self.failed(reason));
        }
        Ok(next)
    }

    /// Fails the call or listing a line answered, when its id is in the line's head
    /// (where it usually is): waiting for it would only run into the timeout.
    fn fail_answered(&self, line: &[u8], reason: impl Fn(&str) -> String) {
        let Some(id) = id_in_head(line) else {
            return;
        };
        let (listing, call) = {
            let mut table = self.table();
            (table.listings.remove(&id), table.pending.remove(&id))
        };
        if let Some(listing) = listing {
            let _ = listing.send(Err(reason("tools/list")));
        }
        if let Some(call) = call {
            call.sink.done(id, self.failed(reason(&during(&call.tool))));
        }
    }

    /// Fails `calls` the way the server went: its exit status and stderr when it exited.
    fn fail_gone(&self, status: Option<Exit>, calls: Vec<(u64, String, Arc<dyn CallSink>)>) {
        let Some(me) = self.me.upgrade() else {
            return;
        };
        self.runtime.spawn(async move {
            for (id, tool, sink) in calls {
                let during = during(&tool);
                let reason = match status {
                    Some(status) => me.child.describe_exit(status, &during).await,
                    None => format!("closed the connection during {during}"),
                };
                sink.done(id, me.failed(reason));
            }
        });
    }
}

impl Intercept for LocalCalls {
    fn intercept(&self, line: &[u8]) -> bool {
        if self.take_page(line) {
            return true;
        }
        let Ok(message) = serde_json::from_slice::<Envelope>(line) else {
            return false;
        };
        match message.method {
            None => match message.id.and_then(our_id) {
                Some(id) => self.answer(id, message.result, message.error),
                None => return false,
            },
            Some("notifications/progress") => {
                let Some(params) = message
                    .params
                    .and_then(|p| serde_json::from_str::<ProgressParams>(p.get()).ok())
                else {
                    return false;
                };
                let Some(id) = our_id(params.token) else {
                    return false;
                };
                let progress = Progress {
                    progress: params.progress,
                    total: params.total,
                    message: params.message,
                };
                self.progress(id, progress);
            }
            Some(_) => return false,
        }
        true
    }

    fn oversized(&self, head: &[u8]) {
        self.fail_answered(head, |phase| {
            format!(
                "answered {phase} with a message over the {} MiB limit",
                MAX_MESSAGE_BYTES >> 20
            )
        });
    }

    fn unreadable(&self, line: &[u8]) {
        self.fail_answered(line, malformed_response);
    }

    fn ended(&self) {
        {
            let mut table = self.table();
            let State::Open = table.state else {
                return;
            };
            table.state = State::Ending;
            table.listings.clear();
        }
        let Some(me) = self.me.upgrade() else {
            return;
        };
        self.runtime.spawn(async move {
            let status = me.child.exit_within(Duration::from_millis(500)).await;
            let pending = {
                let mut table = me.table();
                if let State::Closed = table.state {
                    return;
                }
                table.state = State::Gone(status);
                std::mem::take(&mut table.pending)
            };
            let calls = pending
                .into_iter()
                .map(|(id, c)| (id, c.tool, c.sink))
                .collect();
            me.fail_gone(status, calls);
        });
    }
}

impl Drop for LocalCalls {
    fn drop(&mut self) {
        self.close();
    }
}

/// A page of tools and the cursor to the next, or why there is none.
pub type PageResult = Result<(Vec<ListedTool>, Option<String>), String>;

/// Stops waiting for a page (it came, timed out or was abandoned).
struct ForgetListing<'a>(&'a LocalCalls, u64);

impl Drop for ForgetListing<'_> {
    fn drop(&mut self) {
        self.0.table().listings.remove(&self.1);
    }
}

/// Sleeps until the earliest deadline, a nudge, or a change in pending elicitations; ends
/// the calls when the server exits, since its stdout may outlive it (held by a grandchild)
/// and never tell.
async fn sweep(
    calls: Weak<LocalCalls>,
    nudge: Arc<Notify>,
    mut eliciting: tokio::sync::watch::Receiver<Asking>,
    mut exit: tokio::sync::watch::Receiver<Option<Exit>>,
) {
    let mut exited = false;
    loop {
        // Over stdio an elicitation cannot be told apart by call: it pauses them all.
        let paused = eliciting.borrow_and_update().pauses(None);
        let next = match calls.upgrade().map(|calls| calls.expire(paused)) {
            Some(Ok(next)) => next,
            _ => return,
        };
        let sleep = async {
            match next {
                Some(at) => tokio::time::sleep_until(at).await,
                None => std::future::pending().await,
            }
        };
        tokio::select! {
            _ = nudge.notified() => {}
            _ = sleep => {}
            changed = eliciting.changed() => if changed.is_err() { return },
            _ = exit.wait_for(Option::is_some), if !exited => {
                exited = true;
                if let Some(calls) = calls.upgrade() {
                    calls.ended();
                }
            }
        }
    }
}

/// The request as one line, the arguments' JSON passed through as the caller wrote it.
/// `None` when the arguments are not a JSON object.
fn request_line(id: u64, tool: &str, args_json: &str, meta: &str) -> Option<Vec<u8>> {
    let args: &RawValue = serde_json::from_str(args_json).ok()?;
    if !args.get().starts_with('{') {
        return None;
    }
    let args = args.get().as_bytes();
    let mut line = Vec::with_capacity(args.len() + tool.len() + 128);
    let _ = write!(
        line,
        "{{\"jsonrpc\":\"2.0\",\"id\":\"{ID_PREFIX}{id}\",\"method\":\"tools/call\",\"params\":{{\"name\":"
    );
    serde_json::to_writer(&mut line, tool).ok()?;
    line.extend_from_slice(b",\"arguments\":");
    // JSON may hold newlines between tokens (never inside a string); a line may not. They
    // become spaces, so the text is otherwise untouched: big numbers keep every digit.
    if memchr::memchr(b'\n', args).is_some() {
        line.extend(args.iter().map(|&b| if b == b'\n' { b' ' } else { b }));
    } else {
        line.extend_from_slice(args);
    }
    let _ = writeln!(
        line,
        ",\"_meta\":{{\"progressToken\":\"{ID_PREFIX}{id}\"{meta}}}}}}}"
    );
    Some(line)
}

/// Our id in the first bytes of a line (`"id":"tn-17"`), if it is there.
fn id_in_head(line: &[u8]) -> Option<u64> {
    let head = &line[..line.len().min(ID_HEAD)];
    let at = memchr::memmem::find(head, b"\"id\"")?;
    let value = head[at + 4..]
        .trim_ascii_start()
        .strip_prefix(b":")?
        .trim_ascii_start()
        .strip_prefix(b"\"")?;
    let end = value.iter().position(|&b| b == b'"')?;
    call_number(std::str::from_utf8(&value[..end]).ok()?)
}

/// `"tn-17"` is call 17; anything else is not ours.
fn our_id(id: &RawValue) -> Option<u64> {
    call_number(id.get().strip_prefix('"')?.strip_suffix('"')?)
}

/// `tn-17` (the id's text, unquoted) is call 17.
fn call_number(text: &str) -> Option<u64> {
    text.strip_prefix(ID_PREFIX)?.parse().ok()
}

fn error_message(error: &RawValue) -> String {
    #[derive(Deserialize)]
    struct Body {
        message: String,
    }
    serde_json::from_str::<Body>(error.get()).map_or_else(|_| error.get().to_owned(), |b| b.message)
}

/// Any incoming message, with its members kept as raw JSON text.
#[derive(Deserialize)]
struct Envelope<'a> {
    #[serde(borrow, default)]
    id: Option<&'a RawValue>,
    #[serde(borrow, default)]
    method: Option<&'a str>,
    #[serde(borrow, default)]
    params: Option<&'a RawValue>,
    #[serde(borrow, default)]
    result: Option<&'a RawValue>,
    #[serde(borrow, default)]
    error: Option<&'a RawValue>,
}

#[derive(Deserialize)]
struct ProgressParams<'a> {
    #[serde(rename = "progressToken", borrow)]
    token: &'a RawValue,
    progress: f64,
    #[serde(default)]
    total: Option<f64>,
    #[serde(default)]
    message: Option<String>,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn requests_pass_the_arguments_through_on_one_line() {
        let line = request_line(7, "echo \"x\"", r#"{"text":"a\nb"}"#, "").expect("a line");
        let line = String::from_utf8(line).expect("utf-8");
        assert_eq!(
            line,
            "{\"jsonrpc\":\"2.0\",\"id\":\"tn-7\",\"method\":\"tools/call\",\"params\":{\"name\":\"echo \\\"x\\\"\",\"arguments\":{\"text\":\"a\\nb\"},\"_meta\":{\"progressToken\":\"tn-7\"}}}\n"
        );
        let pretty = request_line(8, "t", "{\n  \"a\": 1\n}", "").expect("a line");
        assert_eq!(pretty.iter().filter(|b| **b == b'\n').count(), 1);
    }

    #[test]
    fn pretty_arguments_keep_big_numbers_exactly() {
        let args =
            "{\n  \"n\": 123456789012345678901234567890,\n  \"x\": 1.000000000000000000001\n}";
        let line = request_line(9, "t", args, "").expect("a line");
        let line = String::from_utf8(line).expect("utf-8");
        assert!(
            line.contains(r#""arguments":{   "n": 123456789012345678901234567890,   "x": 1.000000000000000000001 },"#),
            "{line}"
        );
    }

    #[test]
    fn only_objects_are_arguments() {
        assert!(request_line(1, "t", "[1]", "").is_none());
        assert!(request_line(1, "t", "\"x\"", "").is_none());
        assert!(request_line(1, "t", "{", "").is_none());
    }

    #[test]
    fn only_our_string_ids_are_ours() {
        let raw = |s: &str| {
            serde_json::from_str::<&RawValue>(s)
                .map(our_id)
                .expect("json")
        };
        assert_eq!(raw("\"tn-42\""), Some(42));
        assert_eq!(raw("42"), None);
        assert_eq!(raw("\"42\""), None);
        assert_eq!(raw("\"tn-x\""), None);
    }
}
