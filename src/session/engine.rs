//! The one request engine of a session, whatever the transport and the era: one table of
//! the requests in flight (`tools/call` and `tools/list` pages) with their clocks, their
//! progress and their caller, one decoder of their answers, and the rounds of a
//! multi-round-trip request. A [`Wire`] carries each request to the server; its answer
//! comes back through [`Engine::reply`] (or, over stdio, straight off the incoming lines:
//! see `stdio`). Timeouts are one sweeper task per session, not a timer per call.

mod peer;
pub mod rounds;
mod stdio;
mod sweep;

use std::collections::HashMap;
use std::sync::{Arc, Mutex, MutexGuard, OnceLock, Weak};
use std::time::Duration;

use serde_json::value::RawValue;
use tokio::runtime::Handle;
use tokio::sync::{Notify, oneshot};
use tokio::time::Instant;
use tokio_util::sync::CancellationToken;

use super::clock::Clock;
use super::handler::{Asking, Shared};
use super::wording::{
    aborted, answered_with_error, bad_arguments, closed_before, closed_during, during, failed,
    unexpected_response,
};
use super::{CallSink, CallSpec, Progress};
use crate::listed_tool::{Page, PageParts};
use crate::tool_result::{self, InputRequired, Outcome, ToolOutput};
use crate::transport::reaper::Exit;
use crate::transport::stdio::ChildProcess;

pub use self::peer::PeerWire;
pub use self::stdio::{Incoming, StdioWire};

/// A server looping on input-required results is given up after this many rounds.
pub const MAX_ROUNDS: u32 = 16;

/// Carries requests to the server.
pub trait Wire: Send + Sync {
    /// Sends request `id` (`params` is its JSON text); its answer comes back through
    /// [`Engine::reply`]. `Err` says why it could not be sent.
    fn send(
        &self,
        engine: &Arc<Engine>,
        id: u64,
        method: &str,
        params: String,
    ) -> Result<(), String>;
    /// Tells the server to stop working on request `id`.
    fn cancel(&self, id: u64, reason: &'static str);
}

/// How a request was answered.
pub enum Reply<'a> {
    Result(&'a RawValue),
    /// A JSON-RPC error, by its message.
    Error(String),
    /// The exchange broke; the reason is composed for the request's phase.
    Broken(&'a dyn Fn(&str) -> String),
    /// The request's own response stream ended before its answer, the connection being
    /// otherwise fine (streamable HTTP). In the 2026-07-28 revision, which cannot resume a
    /// stream, a call is then sent once more; otherwise this is `Broken` with `reason`.
    Interrupted(&'a dyn Fn(&str) -> String),
}

pub struct Engine {
    me: Weak<Engine>,
    shared: Arc<Shared>,
    wire: Box<dyn Wire>,
    /// The local server, whose exit ends the calls.
    child: Option<Arc<ChildProcess>>,
    runtime: Handle,
    table: Mutex<Table>,
    /// Wakes the sweeper: a deadline earlier than it planned for, or the end.
    nudge: Arc<Notify>,
    /// `_meta` members every request carries (`,"k":v,...`), set once the era is known
    /// (see `request_meta`); empty for the 2025 era.
    meta: OnceLock<String>,
}

struct Table {
    pending: HashMap<u64, Pending>,
    /// Requests other than calls being waited for (listing pages, reads, lookups), each
    /// with what to do with its answer.
    listings: HashMap<u64, Waiting>,
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

/// A `tools/call` in flight, under the id of its current round's request.
struct Pending {
    /// The id its caller knows it by: its first request's.
    call: u64,
    tool: Arc<str>,
    /// The arguments' JSON text, for the request of a later round.
    args: Arc<str>,
    clock: Clock,
    wants_progress: bool,
    sink: Arc<dyn CallSink>,
    /// Rounds answered so far.
    rounds: u32,
    /// The answers to the last round and what it asked, sent with each request of the
    /// next one.
    answered: Option<(String, InputRequired)>,
    /// Whether a request of this call was sent again after its response stream broke.
    resent: bool,
    /// The request id of the transport below, when it tells which elicitations are this
    /// call's (streamable HTTP).
    wire_request: Option<rmcp::model::RequestId>,
    /// Set while a person answers what the server asked: nothing is in flight.
    asking: Option<CancellationToken>,
}

impl Engine {
    /// Must be called within a tokio runtime (the sweeper is a task).
    pub fn new(
        shared: Arc<Shared>,
        wire: Box<dyn Wire>,
        child: Option<Arc<ChildProcess>>,
    ) -> Arc<Engine> {
        let engine = Arc::new_cyclic(|me| Engine {
            me: me.clone(),
            shared,
            wire,
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
        let eliciting = engine.shared.eliciting.subscribe();
        let signing_in = engine.shared.hooks.oauth.signing_in();
        let server = engine.shared.server.clone();
        let exit = engine.child.as_ref().map(|child| child.exit_watch());
        tokio::spawn(sweep::run(
            engine.me.clone(),
            engine.nudge.clone(),
            eliciting,
            (signing_in, server),
            exit,
        ));
        engine
    }

    /// Sets the `_meta` members (`,"k":v,...`) of every later request.
    pub fn set_meta(&self, members: String) {
        let _ = self.meta.set(members);
    }

    fn meta(&self) -> &str {
        self.meta.get().map_or("", String::as_str)
    }

    /// Whether the session speaks the 2026-07-28 revision: only its requests carry `_meta`.
    fn modern(&self) -> bool {
        !self.meta().is_empty()
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
        let Some(args) = stdio::one_line_object(args_json) else {
            return sink.done(id, bad_arguments(&self.shared.server, tool));
        };
        {
            let table = self.table();
            match table.state {
                State::Open | State::Ending => {}
                State::Gone(status) => {
                    drop(table);
                    return self.fail_gone(status, vec![(id, tool.into(), sink)]);
                }
                State::Closed => {
                    drop(table);
                    return sink.done(id, self.failed(closed_before(tool)));
                }
            }
        }
        let paused = self.shared.eliciting.borrow().pauses(None);
        let pending = Pending {
            call: id,
            tool: tool.into(),
            args: args.into(),
            clock: Clock::new(spec.timeout, spec.max_total, paused),
            wants_progress: spec.wants_progress,
            sink,
            rounds: 0,
            answered: None,
            resent: false,
            wire_request: None,
            asking: None,
        };
        self.send_call(id, pending);
    }

    /// Registers `pending` under request `id` and sends its request: the first, or a
    /// later round's with the answers to what the server asked.
    fn send_call(&self, id: u64, pending: Pending) {
        let params = call_params(id, &pending, self.meta());
        let tool = pending.tool.clone();
        {
            let mut table = self.table();
            if let Some(deadline) = pending.clock.deadline()
                && table.sweep_at.is_none_or(|at| deadline < at)
            {
                table.sweep_at = Some(deadline);
                self.nudge.notify_one();
            }
            table.pending.insert(id, pending);
        }
        let Some(me) = self.me.upgrade() else {
            return;
        };
        if let Err(refused) = self.wire.send(&me, id, "tools/call", params)
            && let Some(call) = self.table().pending.remove(&id)
        {
            let reason = format!("{refused}; {} was not sent", during(&tool));
            call.sink.done(call.call, self.failed(reason));
        }
    }

    /// One page of `tools/list`, or what the server asks before it gives it; `round`
    /// holds the answers to what it asked last. Unbounded: the caller bounds it.
    pub async fn list_tools_page(
        &self,
        cursor: Option<&str>,
        round: Option<(&str, &InputRequired)>,
    ) -> PageResult {
        let mut params: Vec<String> = Vec::new();
        if let Some(cursor) = cursor {
            params.push(format!("\"cursor\":{}", serde_json::Value::from(cursor)));
        }
        params.extend(round_members(round));
        let (tx, rx) = oneshot::channel();
        let _forget = self.send_request("tools/list", params, Waiting::Page(tx))?;
        rx.await
            .unwrap_or_else(|_| Err("closed the connection during tools/list".to_owned()))
    }

    /// Sends request `method` with `params` (members of its params object) and decodes
    /// its answer with `decode`. Unbounded: the caller bounds it.
    pub async fn request<T: Send + 'static>(
        &self,
        method: &str,
        params: Vec<String>,
        decode: impl for<'a> FnOnce(Reply<'a>) -> Result<T, String> + Send + 'static,
    ) -> Result<T, String> {
        let (tx, rx) = oneshot::channel();
        let answered: Answered = Box::new(move |reply| {
            let _ = tx.send(decode(reply));
        });
        let _forget = self.send_request(method, params, Waiting::Answer(answered))?;
        rx.await
            .unwrap_or_else(|_| Err(format!("closed the connection during {method}")))
    }

    /// Enters a request other than a call in the table and sends it, the era's `_meta`
    /// added; the guard forgets it when the caller stops waiting.
    fn send_request(
        &self,
        method: &str,
        mut params: Vec<String>,
        waiting: Waiting,
    ) -> Result<ForgetListing<'_>, String> {
        let closed = || format!("closed the connection during {method}");
        let id = super::next_call_id();
        {
            let mut table = self.table();
            let State::Open = table.state else {
                return Err(closed());
            };
            table.listings.insert(id, waiting);
        }
        let forget = ForgetListing(self, id);
        if let Some(meta) = self.meta().strip_prefix(',') {
            params.push(format!("\"_meta\":{{{meta}}}"));
        }
        let params = format!("{{{}}}", params.join(","));
        let me = self.me.upgrade().ok_or_else(closed)?;
        self.wire
            .send(&me, id, method, params)
            .map_err(|e| format!("could not send {method}: {e}"))?;
        Ok(forget)
    }

    /// Notes the transport's own id for request `id` (see `Pending::wire_request`).
    pub fn bind(&self, id: u64, request: rmcp::model::RequestId) {
        if let Some(call) = self.table().pending.get_mut(&id) {
            call.wire_request = Some(request);
        }
    }

    /// The caller gave up call `id`: the server is told, the call ends as aborted.
    pub fn abort(&self, id: u64) {
        let found = {
            let mut table = self.table();
            let key = if table.pending.contains_key(&id) {
                Some(id)
            } else {
                table
                    .pending
                    .iter()
                    .find_map(|(key, call)| (call.call == id).then_some(*key))
            };
            key.and_then(|key| table.pending.remove(&key).map(|call| (key, call)))
        };
        let Some((key, call)) = found else {
            return;
        };
        match &call.asking {
            // Nothing is in flight at the server while a person is asked.
            Some(asking) => asking.cancel(),
            None => self.wire.cancel(key, "aborted by the client"),
        }
        call.sink
            .done(call.call, aborted(&self.shared.server, &call.tool));
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
        for call in pending.into_values() {
            if let Some(asking) = &call.asking {
                asking.cancel();
            }
            call.sink
                .done(call.call, self.failed(closed_during(&call.tool)));
        }
    }

    /// Request `id` was answered.
    pub fn reply(&self, id: u64, reply: Reply<'_>) {
        let call = {
            let mut table = self.table();
            match table.listings.remove(&id) {
                Some(Waiting::Page(page_to)) => return drop(page_to.send(page(reply))),
                Some(Waiting::Answer(answered)) => {
                    drop(table);
                    return answered(reply);
                }
                None => {}
            }
            table.pending.remove(&id)
        };
        let Some(mut call) = call else {
            // Answered after a timeout or an abort: nobody is waiting.
            return;
        };
        let during = during(&call.tool);
        let unexpected = || self.failed(unexpected_response(&during));
        let output = match reply {
            Reply::Result(result) => match tool_result::decode_outcome(result.get()) {
                Some(Outcome::Complete(output)) => output,
                Some(Outcome::InputRequired(_)) if call.rounds >= MAX_ROUNDS => {
                    self.failed(format!(
                        "asked for input more than {MAX_ROUNDS} times during {during}; the call was given up"
                    ))
                }
                Some(Outcome::InputRequired(asked)) => {
                    call.asking = Some(CancellationToken::new());
                    return self.ask(id, call, asked);
                }
                None => unexpected(),
            },
            Reply::Error(message) => self.failed(answered_with_error(&during, &message)),
            Reply::Interrupted(_) if !call.resent && self.modern() => {
                call.resent = true;
                return self.send_call(super::next_call_id(), call);
            }
            Reply::Broken(reason) | Reply::Interrupted(reason) => self.failed(reason(&during)),
        };
        call.sink.done(call.call, output);
    }

    /// Puts what the server asked to the host while the call's clock stands still, then
    /// sends the next round.
    fn ask(&self, id: u64, mut call: Pending, asked: InputRequired) {
        call.clock.set_paused(true);
        let Some(asking) = call.asking.clone() else {
            return;
        };
        let tool = call.tool.clone();
        self.table().pending.insert(id, call);
        let Some(me) = self.me.upgrade() else {
            return;
        };
        self.runtime.spawn(async move {
            let during = during(&tool);
            let answers = tokio::select! {
                answers = rounds::fulfil(&me.shared, &asked.requests, &during) => answers,
                _ = asking.cancelled() => return,
            };
            let Some(mut call) = me.table().pending.remove(&id) else {
                return;
            };
            let responses = match answers {
                Ok(responses) => responses,
                Err(refusal) => return call.sink.done(call.call, me.failed(refusal)),
            };
            call.asking = None;
            call.rounds += 1;
            call.answered = Some((responses, asked));
            let paused = me.shared.eliciting.borrow().pauses(None);
            call.clock.set_paused(paused);
            me.send_call(super::next_call_id(), call);
        });
    }

    fn progress(&self, id: u64, progress: Progress) {
        let mut table = self.table();
        let Some(call) = table.pending.get_mut(&id) else {
            return;
        };
        call.clock.restart();
        if call.wants_progress {
            let (sink, caller) = (call.sink.clone(), call.call);
            drop(table);
            sink.progress(caller, progress);
        }
    }

    /// Times out what is due; returns when to look again (`None`: when nudged), or
    /// `Err` once closed. While a person signs in to the server (a step-up in the middle
    /// of a call, say), every call's clock stands still.
    fn expire(&self, asking: &Asking, signing_in: bool) -> Result<Option<Instant>, ()> {
        let now = Instant::now();
        let mut expired = Vec::new();
        let next = {
            let mut table = self.table();
            if let State::Closed = table.state {
                return Err(());
            }
            let mut next: Option<Instant> = None;
            table.pending.retain(|id, call| {
                if call.asking.is_none() {
                    call.clock
                        .set_paused(signing_in || asking.pauses(call.wire_request.as_ref()));
                }
                match call.clock.deadline() {
                    Some(deadline) if deadline <= now => {
                        let reason = call.clock.overrun(&during(&call.tool));
                        expired.push((*id, call.call, reason, call.sink.clone()));
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
        for (id, caller, reason, sink) in expired {
            self.wire.cancel(id, "request timeout");
            sink.done(caller, self.failed(reason));
        }
        Ok(next)
    }

    /// Fails the call or listing `id` for `reason(phase)`.
    fn fail_request(&self, id: u64, reason: impl Fn(&str) -> String) {
        self.reply(id, Reply::Broken(&reason));
    }

    /// The server's output ended: the calls fail the way it went, once its exit is known.
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
            let status = match &me.child {
                Some(child) => child.exit_within(Duration::from_millis(500)).await,
                None => None,
            };
            let pending = {
                let mut table = me.table();
                if let State::Closed = table.state {
                    return;
                }
                table.state = State::Gone(status);
                std::mem::take(&mut table.pending)
            };
            let calls = pending
                .into_values()
                .map(|c| {
                    if let Some(asking) = &c.asking {
                        asking.cancel();
                    }
                    (c.call, c.tool, c.sink)
                })
                .collect();
            me.fail_gone(status, calls);
        });
    }

    /// Fails `calls` the way the server went: its exit status and stderr when it exited.
    fn fail_gone(&self, status: Option<Exit>, calls: Vec<(u64, Arc<str>, Arc<dyn CallSink>)>) {
        let Some(me) = self.me.upgrade() else {
            return;
        };
        self.runtime.spawn(async move {
            for (id, tool, sink) in calls {
                let during = during(&tool);
                let reason = match (status, &me.child) {
                    (Some(status), Some(child)) => child.describe_exit(status, &during).await,
                    _ => format!("closed the connection during {during}"),
                };
                sink.done(id, me.failed(reason));
            }
        });
    }
}

impl Drop for Engine {
    fn drop(&mut self) {
        self.close();
    }
}

/// What to do with the answer to a request other than a call.
type Answered = Box<dyn for<'a> FnOnce(Reply<'a>) + Send>;

/// A request other than a call, waiting for its answer: a page of tools (which the
/// stdio reader may decode in one pass, see `stdio::take_page`), or any other.
pub enum Waiting {
    Page(oneshot::Sender<PageResult>),
    Answer(Answered),
}

/// A page of tools and the cursor to the next, or why there is none.
pub type PageResult = Result<Listed, String>;

/// A `tools/list` answer: a page, or what the server asks first (2026-07-28).
pub enum Listed {
    Page(PageParts),
    InputRequired(InputRequired),
}

/// A listing's answer as a page.
fn page(reply: Reply<'_>) -> PageResult {
    match reply {
        Reply::Result(result) => match serde_json::from_str::<Page>(result.get()) {
            Ok(page) => Ok(Listed::Page(page.into_parts())),
            Err(_) => match tool_result::decode_input_required(result.get()) {
                Some(asked) => Ok(Listed::InputRequired(asked)),
                None => Err(unexpected_response("tools/list")),
            },
        },
        Reply::Error(message) => Err(answered_with_error("tools/list", &message)),
        Reply::Broken(reason) | Reply::Interrupted(reason) => Err(reason("tools/list")),
    }
}

/// Stops waiting for a page (it came, timed out or was abandoned).
struct ForgetListing<'a>(&'a Engine, u64);

impl Drop for ForgetListing<'_> {
    fn drop(&mut self) {
        self.0.table().listings.remove(&self.1);
    }
}

/// A later round's members of a request's params (`"inputResponses":...`): the answers,
/// and the state the server asked to have echoed; none in the first round.
fn round_members(round: Option<(&str, &InputRequired)>) -> Option<String> {
    let (responses, asked) = round?;
    let mut params = format!("\"inputResponses\":{responses}");
    if let Some(state) = &asked.state {
        params.push_str(",\"requestState\":");
        params.push_str(&serde_json::Value::from(state.as_str()).to_string());
    }
    Some(params)
}

/// The params of a `tools/call` request as JSON text: the arguments passed through as the
/// caller wrote them; in a later round, the answers and the state the server asked for.
fn call_params(id: u64, call: &Pending, meta: &str) -> String {
    let round = call.answered.as_ref();
    let name = serde_json::Value::from(&*call.tool);
    let mut params = format!("{{\"name\":{name},\"arguments\":{}", call.args);
    if let Some(members) = round_members(round.map(|(responses, asked)| (&**responses, asked))) {
        params.push(',');
        params.push_str(&members);
    }
    params.push_str(&format!(
        ",\"_meta\":{{\"progressToken\":\"{}{id}\"{meta}}}}}",
        stdio::ID_PREFIX
    ));
    params
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::session::CallSink;

    struct Nobody;

    impl CallSink for Nobody {
        fn progress(&self, _: u64, _: Progress) {}
        fn done(&self, _: u64, _: ToolOutput) {}
    }

    fn pending(tool: &str, args: &str) -> Pending {
        Pending {
            call: 7,
            tool: tool.into(),
            args: args.into(),
            clock: Clock::new(Duration::from_secs(1), None, false),
            wants_progress: false,
            sink: Arc::new(Nobody),
            rounds: 0,
            answered: None,
            resent: false,
            wire_request: None,
            asking: None,
        }
    }

    #[tokio::test]
    async fn a_call_passes_its_arguments_through_with_its_progress_token() {
        let params = call_params(7, &pending("echo \"x\"", r#"{"text":"a\nb"}"#), "");
        assert_eq!(
            params,
            r#"{"name":"echo \"x\"","arguments":{"text":"a\nb"},"_meta":{"progressToken":"tn-7"}}"#
        );
    }

    #[tokio::test]
    async fn a_later_round_carries_the_answers_the_state_and_the_era() {
        let asked = InputRequired {
            requests: serde_json::Map::new(),
            state: Some("s\"1".into()),
        };
        let mut later = pending("t", "{}");
        later.answered = Some((r#"{"k":{"action":"decline"}}"#.to_owned(), asked));
        let meta = r#","io.modelcontextprotocol/protocolVersion":"2026-07-28""#;
        let params = call_params(9, &later, meta);
        let params: serde_json::Value = serde_json::from_str(&params).expect("JSON");
        assert_eq!(params["inputResponses"]["k"]["action"], "decline");
        assert_eq!(params["requestState"], "s\"1");
        assert_eq!(params["_meta"]["progressToken"], "tn-9");
        assert_eq!(
            params["_meta"]["io.modelcontextprotocol/protocolVersion"],
            "2026-07-28"
        );
        let first = call_params(9, &pending("t", "{}"), meta);
        assert!(!first.contains("requestState") && !first.contains("inputResponses"));
    }
}
