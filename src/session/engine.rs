//! The one request engine of a session, whatever the transport and the era: one table of
//! the requests in flight (`tools/call`, `tools/list` pages and whatever else a session
//! awaits) with their clocks, their progress and their caller, one decoder of their
//! answers, and the rounds of a multi-round-trip request. A [`Wire`] carries each request
//! to the server; its answer comes back through [`Engine::reply`] (or, over stdio,
//! straight off the incoming lines: see `line_wire`). Timeouts are one sweeper task per
//! session, not a timer per request.

pub mod call;
mod ending;
mod line_wire;
mod not_sent;
pub mod params;
mod peer_wire;
pub mod request;
pub mod rounds;
mod sweep;
mod task;
#[cfg(test)]
mod tests;
pub mod timer;

use std::collections::HashMap;
use std::sync::{Arc, Mutex, MutexGuard, OnceLock, Weak};
use std::time::Duration;

use tokio::runtime::Handle;
use tokio::sync::Notify;
use tokio::time::Instant;
use tokio_util::sync::CancellationToken;

use self::call::{Call, CallSink, CallSpec};
use self::params::Params;
use self::request::{Caller, Decoded, Kind, Progress, Waiter};
use self::task::{Read, Task};
use self::timer::Clock;
use super::error::{Error, Failure, Kind as ErrorKind, Reply};
use super::handler::{Calls, Shared};
use super::wording::{answered_with_error, bad_arguments, closed_before};
use crate::elicitation::Elicitor;
use crate::lock::lock;
use crate::tool::result::InputRequired;
use crate::transport::local::ChildProcess;
use crate::transport::local::Exit;

pub use self::line_wire::{Incoming, LineWire};
pub use self::not_sent::NotSent;
pub use self::peer_wire::PeerWire;

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
    ) -> Result<(), NotSent>;
    /// Tells the server to stop working on request `id`.
    fn cancel(&self, id: u64, reason: &'static str);
}

pub struct Engine {
    me: Weak<Engine>,
    shared: Arc<Shared>,
    wire: Box<dyn Wire>,
    /// The local server, whose exit ends the requests.
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

/// A request in flight, under the id of its current round's request.
struct Pending {
    /// The id its caller knows it by: its first request's.
    origin: u64,
    caller: Arc<dyn Caller>,
    method: &'static str,
    /// What its failures name: `tools/call "x"`, `tools/list`.
    phase: Arc<str>,
    /// Its params' own members as JSON text, for the request of each round.
    members: Arc<str>,
    /// Whether its requests carry a progress token (calls do).
    progress_token: bool,
    /// The caller's trace context, as `_meta` members.
    trace: Option<Arc<str>>,
    clock: Clock,
    /// Rounds answered so far.
    rounds: u32,
    /// The answers to the last round and what it asked, sent with each request of the
    /// next one.
    answered: Option<(String, InputRequired)>,
    /// Whether it was sent again after its response stream broke.
    resent: bool,
    /// The request id of the transport below, when it tells which elicitations are this
    /// request's (streamable HTTP).
    wire_request: Option<rmcp::model::RequestId>,
    /// Set while a person answers what the server asked: nothing is in flight.
    asking: Option<CancellationToken>,
    /// Set for a call that asked to run as a task.
    task: Option<Box<Task>>,
    /// Who answers what the server asks during a call that brought its own elicitor.
    elicitor: Option<Arc<dyn Elicitor>>,
}

impl Pending {
    fn new(origin: u64, caller: Arc<dyn Caller>, method: &'static str, phase: Arc<str>) -> Self {
        Pending {
            origin,
            caller,
            method,
            phase,
            members: "".into(),
            progress_token: false,
            trace: None,
            clock: Clock::new(Duration::MAX, None, false),
            rounds: 0,
            answered: None,
            resent: false,
            wire_request: None,
            asking: None,
            task: None,
            elicitor: None,
        }
    }
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
                state: State::Open,
                sweep_at: None,
            }),
            nudge: Arc::new(Notify::new()),
            meta: OnceLock::new(),
        });
        let calls: Weak<dyn Calls> = engine.me.clone();
        let _ = engine.shared.calls.set(calls);
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
        lock(&self.table)
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
        let Some(args) = line_wire::one_line_object(args_json) else {
            return sink.done(id, bad_arguments(&self.shared.server, tool));
        };
        let caller = Arc::new(Call {
            id,
            server: self.shared.server.as_str().into(),
            tool: tool.into(),
            sink,
            wants_progress: spec.wants_progress,
        });
        let mut pending = Pending::new(id, caller, "tools/call", Call::phase(tool));
        let name = serde_json::Value::from(tool);
        // A 2025 server is asked in the params; a 2026 one decides for itself.
        let task = if spec.task && !self.modern() {
            ",\"task\":{}"
        } else {
            ""
        };
        pending.members = format!("\"name\":{name},\"arguments\":{args}{task}").into();
        pending.progress_token = true;
        pending.trace = spec.trace;
        pending.task = spec.task.then(|| Task::new(id));
        pending.elicitor = spec.elicitor;
        let state = self.table().state;
        match state {
            State::Open | State::Ending => {}
            State::Gone(status) => return self.fail_gone(status, vec![pending]),
            State::Closed => {
                let closed = Error::new(ErrorKind::Closed, closed_before(&pending.phase));
                return pending.caller.fail(closed.into());
            }
        }
        let paused = self.shared.eliciting.borrow().pauses(None);
        pending.clock = Clock::new(spec.timeout, spec.max_total, paused);
        self.send(id, pending);
    }

    /// Sends a request of `kind` with `members` (its params' members as JSON text), timed
    /// by `timeout`; resolves with its result, or why there is none. Dropping the future
    /// gives the request up, as `cancel` does.
    pub async fn request<T: Send + 'static>(
        &self,
        kind: &'static Kind<T>,
        params: impl Into<Params>,
        timeout: Duration,
        cancel: &CancellationToken,
    ) -> Result<T, Failure> {
        let id = call::next_id();
        let (waiter, answer) = Waiter::new(kind);
        let mut pending = Pending::new(id, Arc::new(waiter), kind.method, kind.method.into());
        let Params { members, trace } = params.into();
        (pending.members, pending.trace) = (members.into(), trace);
        {
            let State::Open = self.table().state else {
                let phase = kind.method;
                return Err(Error::broken(format!("closed the connection during {phase}")).into());
            };
        }
        let paused = self.shared.eliciting.borrow().pauses(None);
        pending.clock = Clock::new(timeout, None, paused);
        let _give_up = GiveUp(self, id);
        self.send(id, pending);
        tokio::select! {
            answer = answer => answer.unwrap_or(Err(Failure::Aborted)),
            _ = cancel.cancelled() => Err(Failure::Aborted),
        }
    }

    /// Registers `pending` under request `id` and sends its request: the first, or a
    /// later round's with the answers to what the server asked.
    fn send(&self, id: u64, pending: Pending) {
        let params = params::compose(id, &pending, self.meta());
        let (method, caller, phase) = (
            pending.method,
            pending.caller.clone(),
            pending.phase.clone(),
        );
        self.hold(id, pending, None);
        let Some(me) = self.me.upgrade() else {
            return;
        };
        if let Err(refused) = self.wire.send(&me, id, method, params)
            && self.table().pending.remove(&id).is_some()
        {
            caller.fail(Error::other(format!("{refused}; {phase} was not sent")).into());
        }
    }

    /// Request `id` was answered.
    pub fn reply(&self, id: u64, reply: Reply<'_>) {
        let Some(mut pending) = self.table().pending.remove(&id) else {
            // Answered after a timeout or an abort: nobody is waiting.
            return;
        };
        let phase = pending.phase.clone();
        let error = match reply {
            Reply::Result(result) => {
                let modern = self.modern();
                let inner;
                let result = match pending
                    .task
                    .as_mut()
                    .map(|t| t.read(modern, result, &phase))
                {
                    None | Some(Read::Call) => result,
                    Some(Read::Inner(call_result)) => {
                        inner = call_result;
                        &inner
                    }
                    Some(Read::Fail(error)) => return pending.caller.fail(error.into()),
                    Some(Read::Unexpected(error)) => return self.task_garbled(pending, error),
                    Some(step) => return self.task_step(id, pending, step),
                };
                match pending.caller.decode(result) {
                    Decoded::Done => return,
                    Decoded::InputRequired(_) if pending.rounds >= MAX_ROUNDS => {
                        Error::answered(format!(
                            "asked for input more than {MAX_ROUNDS} times during {phase}; {} was given up",
                            pending.caller.given_up()
                        ))
                    }
                    Decoded::InputRequired(asked) => return self.ask(id, pending, asked),
                    Decoded::Unexpected => {
                        Error::answered(super::wording::unexpected_response(&phase))
                    }
                }
            }
            Reply::Error { code, message } => Error::new(
                ErrorKind::Answered { code },
                answered_with_error(&phase, message),
            ),
            Reply::Interrupted(_) if !pending.resent && self.modern() => {
                pending.resent = true;
                return self.send(call::next_id(), pending);
            }
            Reply::Broken(broken) | Reply::Interrupted(broken) => broken.during(&phase),
        };
        pending.caller.fail(error.into());
    }

    fn progress(&self, id: u64, progress: Progress) {
        let caller = {
            let mut table = self.table();
            // A task's progress comes under the token of the call that made it.
            let key = match table.pending.contains_key(&id) {
                true => Some(id),
                false => table.pending.iter().find_map(|(key, pending)| {
                    let task = pending.task.as_deref()?;
                    (task.token == id).then_some(*key)
                }),
            };
            let Some(pending) = key.and_then(|key| table.pending.get_mut(&key)) else {
                return;
            };
            if pending
                .task
                .as_ref()
                .is_none_or(|t| t.waiting_until().is_none())
            {
                pending.clock.restart();
            }
            pending.caller.clone()
        };
        caller.progress(progress);
    }
}

impl Drop for Engine {
    fn drop(&mut self) {
        self.close();
    }
}

/// Gives an awaited request up when its future is dropped or cancelled (a no-op once
/// it is answered).
struct GiveUp<'a>(&'a Engine, u64);

impl Drop for GiveUp<'_> {
    fn drop(&mut self) {
        self.0.abort(self.1);
    }
}
