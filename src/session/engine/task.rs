//! A `tools/call` run as a task: the server answers it with a task handle, and the same
//! pending request goes on as the polls of that task (`tasks/get`, then in the 2025 era
//! `tasks/result`; in the 2026-07-28 extension `tasks/get` carries the result, and
//! `tasks/update` the answers to what it asks). Each poll is a request of the engine's
//! table with the call's caller and clock, timed per poll; between polls the sweeper
//! holds the request until the server's `pollInterval` is up.

use std::any::Any;
use std::collections::HashSet;
use std::sync::Arc;
use std::time::Duration;

use serde::Deserialize;
use serde_json::value::RawValue;
use serde_json::{Map, Value};
use tokio::time::Instant;

use super::{Engine, Pending, call};
use crate::session::error::{Error, Kind as ErrorKind};
use crate::session::wording::{answered_with_error, unexpected_response};
use crate::tool::result::InputRequired;

/// The wait between polls when the server suggests none.
const DEFAULT_POLL: Duration = Duration::from_secs(1);
/// Bounds on a suggested wait: a server cannot make toolnexus spin, or sleep for ever.
const MIN_POLL: Duration = Duration::from_millis(10);
const MAX_POLL: Duration = Duration::from_secs(300);

/// A call that asked to run as a task, and where that task is.
pub(super) struct Task {
    /// The id of the `tools/call` that made it: its progress token stays the task's.
    pub token: u64,
    /// The server's id for it, once made.
    pub id: Option<Arc<str>>,
    poll: Duration,
    pub stage: Stage,
    /// The keys of the requests answered already (2026: `tasks/get` may show them again
    /// until the server has taken the answers).
    answered: HashSet<String>,
    /// The transport's progress route for `token`, where the transport has one per
    /// request (see `Engine::hold_route`); dropped with the task.
    pub route: Option<Box<dyn Any + Send>>,
}

#[derive(Debug, Clone, Copy, PartialEq)]
pub(super) enum Stage {
    /// The `tools/call` is in flight; its answer may be the task, or the result itself.
    Asked,
    /// Held until it is time for the next `tasks/get`.
    Waiting(Instant),
    /// A `tasks/get` is in flight.
    Polling,
    /// A `tasks/result` is in flight (2025): it waits for the end, and carries what the
    /// server asks meanwhile as `elicitation/create` requests.
    Fetching,
    /// A `tasks/update` with the answers is in flight (2026).
    Updating,
}

/// What an answer was to a task.
pub(super) enum Read {
    /// The call's own result: read it as a plain call's.
    Call,
    /// The call's result, carried in a `tasks/get` (2026).
    Inner(Box<RawValue>),
    /// The task goes on.
    Wait,
    Fetch,
    Update(InputRequired),
    /// The task ended so, or cannot go on.
    Fail(Error),
    /// The server's answer made no sense: the task may still run there.
    Unexpected(Error),
}

/// `Task` as the answers of both eras carry it (`pollInterval` in 2025,
/// `pollIntervalMs` in the extension).
#[derive(Deserialize)]
struct TaskView {
    #[serde(rename = "taskId")]
    task_id: String,
    status: String,
    #[serde(rename = "statusMessage", default)]
    status_message: Option<String>,
    #[serde(rename = "pollInterval", alias = "pollIntervalMs", default)]
    poll: Option<f64>,
    #[serde(rename = "inputRequests", default)]
    input_requests: Option<Map<String, Value>>,
    #[serde(default)]
    result: Option<Box<RawValue>>,
    #[serde(default)]
    error: Option<Value>,
}

/// A 2025 `CreateTaskResult`: the task under `task`.
#[derive(Deserialize)]
struct Created {
    task: TaskView,
}

/// A 2026 result's discriminator.
#[derive(Deserialize)]
struct ResultType {
    #[serde(rename = "resultType", default)]
    result_type: Option<String>,
}

impl Task {
    pub fn new(token: u64) -> Box<Task> {
        Box::new(Task {
            token,
            id: None,
            poll: DEFAULT_POLL,
            stage: Stage::Asked,
            answered: HashSet::new(),
            route: None,
        })
    }

    pub fn waiting_until(&self) -> Option<Instant> {
        match self.stage {
            Stage::Waiting(at) => Some(at),
            _ => None,
        }
    }

    /// Reads `result`, the answer to the task's request in flight, in the era of
    /// `modern`; `phase` is what failures name.
    pub fn read(&mut self, modern: bool, result: &RawValue, phase: &str) -> Read {
        let unexpected = || Read::Unexpected(Error::answered(unexpected_response(phase)));
        match self.stage {
            Stage::Asked if modern => {
                let kind = serde_json::from_str::<ResultType>(result.get()).ok();
                if kind.and_then(|k| k.result_type).as_deref() != Some("task") {
                    return Read::Call;
                }
                match serde_json::from_str::<TaskView>(result.get()) {
                    Ok(task) => self.made(task, true, phase),
                    Err(_) => unexpected(),
                }
            }
            Stage::Asked => match serde_json::from_str::<Created>(result.get()) {
                Ok(created) => self.made(created.task, false, phase),
                Err(_) => Read::Call,
            },
            Stage::Polling => match serde_json::from_str::<TaskView>(result.get()) {
                Ok(task) if Some(task.task_id.as_str()) == self.id.as_deref() => {
                    self.status(task, modern, phase)
                }
                _ => unexpected(),
            },
            Stage::Fetching => Read::Call,
            Stage::Updating => Read::Wait,
            Stage::Waiting(_) => unexpected(),
        }
    }

    /// The server made the task: it goes on from the status it was made with.
    fn made(&mut self, task: TaskView, modern: bool, phase: &str) -> Read {
        if task.task_id.is_empty() {
            return Read::Unexpected(Error::answered(unexpected_response(phase)));
        }
        self.id = Some(task.task_id.as_str().into());
        if modern {
            // The extension's create result carries neither requests nor the result.
            self.note_poll(task.poll);
            return Read::Wait;
        }
        self.status(task, false, phase)
    }

    fn status(&mut self, task: TaskView, modern: bool, phase: &str) -> Read {
        self.note_poll(task.poll);
        let said = || task.status_message.as_deref().map(|m| format!(": {m}"));
        match (task.status.as_str(), modern) {
            ("working", _) => Read::Wait,
            ("completed" | "failed" | "input_required", false) => Read::Fetch,
            ("input_required", true) => {
                let mut requests = task.input_requests.unwrap_or_default();
                requests.retain(|key, _| !self.answered.contains(key));
                if requests.is_empty() {
                    return Read::Wait;
                }
                self.answered.extend(requests.keys().cloned());
                Read::Update(InputRequired {
                    requests,
                    state: None,
                })
            }
            ("completed", true) => match task.result {
                Some(result) => Read::Inner(result),
                None => Read::Unexpected(Error::answered(unexpected_response(phase))),
            },
            ("failed", true) => Read::Fail(failed(task.error.as_ref(), phase)),
            ("cancelled", _) => Read::Fail(Error::answered(format!(
                "cancelled the task of {phase}{}",
                said().unwrap_or_default()
            ))),
            _ => Read::Unexpected(Error::answered(unexpected_response(phase))),
        }
    }

    fn note_poll(&mut self, poll: Option<f64>) {
        if let Some(ms) = poll.and_then(crate::duration::from_millis) {
            self.poll = ms.clamp(MIN_POLL, MAX_POLL);
        }
    }
}

/// A failed task's JSON-RPC error, as a call answered with it reads.
fn failed(error: Option<&Value>, phase: &str) -> Error {
    let code = error
        .and_then(|e| e.get("code"))
        .and_then(Value::as_i64)
        .and_then(|c| i32::try_from(c).ok());
    let message = error
        .and_then(|e| e.get("message"))
        .and_then(Value::as_str)
        .unwrap_or("the task failed");
    Error::new(
        ErrorKind::Answered { code },
        answered_with_error(phase, message),
    )
}

/// The members of a request about task `id`.
fn about(id: &str) -> Arc<str> {
    format!("\"taskId\":{}", Value::from(id)).into()
}

impl Engine {
    /// Takes the task of `pending` (under request `id`) to its next step.
    pub(super) fn task_step(&self, id: u64, mut pending: Pending, read: Read) {
        let Some(task) = pending.task.as_deref_mut() else {
            return;
        };
        let Some(task_id) = task.id.clone() else {
            return;
        };
        if task.stage == Stage::Asked {
            let named = format!("{} (task {})", pending.phase, Value::from(&*task_id));
            pending.phase = named.into();
        }
        pending.answered = None;
        pending.progress_token = false;
        pending.members = about(&task_id);
        match read {
            Read::Wait => {
                let at = Instant::now() + task.poll;
                task.stage = Stage::Waiting(at);
                pending.clock.restart_after(task.poll);
                self.hold(id, pending, Some(at));
            }
            Read::Fetch => {
                task.stage = Stage::Fetching;
                pending.method = "tasks/result";
                pending.clock.restart();
                self.send(call::next_id(), pending);
            }
            Read::Update(asked) => {
                task.stage = Stage::Updating;
                pending.method = "tasks/update";
                self.ask(id, pending, asked);
            }
            Read::Call | Read::Inner(_) | Read::Fail(_) | Read::Unexpected(_) => {}
        }
    }

    /// Sends the next `tasks/get` of a task whose wait is up.
    pub(super) fn poll(&self, mut pending: Pending) {
        if let Some(task) = pending.task.as_deref_mut() {
            task.stage = Stage::Polling;
        }
        pending.method = "tasks/get";
        pending.clock.restart();
        self.send(call::next_id(), pending);
    }

    /// Keeps `route`, the transport's progress route for the `tools/call` request `id`,
    /// for as long as the task that call may make: the task's progress comes under the
    /// call's token after the call is answered. Dropped at once for anything else.
    pub fn hold_route(&self, id: u64, route: Box<dyn Any + Send>) {
        let mut table = self.table();
        let task = table.pending.get_mut(&id).and_then(|p| p.task.as_mut());
        if let Some(task) = task.filter(|task| task.token == id) {
            task.route = Some(route);
        }
    }

    /// Fails the call of `pending`, whose task's answer made no sense; the server, which
    /// may still run the task, is told that nobody waits for it.
    pub(super) fn task_garbled(&self, pending: Pending, error: Error) {
        if let Some(task) = pending.task.as_ref().and_then(|t| t.id.clone()) {
            self.cancel_task(&task);
        }
        pending.caller.fail(error.into());
    }

    /// Tells the server to stop task `id`; its answer is nobody's.
    pub(super) fn cancel_task(&self, id: &str) {
        let Some(me) = self.me.upgrade() else {
            return;
        };
        let params = super::params::about_task(&about(id), self.meta());
        let _ = self.wire.send(&me, call::next_id(), "tasks/cancel", params);
    }
}
