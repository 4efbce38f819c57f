//! The tasks downstream clients' calls become (the 2026-07-28 tasks extension, which
//! rmcp serves in both eras to a client that declares it). A call that may become a task
//! upstream (the server decides, in the 2026-07-28 extension; its tool's listing allows
//! one, in 2025's `execution.taskSupport`) answers at once with a task of the gateway's,
//! while the call runs on (upstream as a task, where the server makes one). `tasks/get` shows it working, asking (the upstream's questions as input
//! requests, answered with `tasks/update`), or ended with its result; `tasks/cancel`
//! aborts the call. A task lives on the replica that made it, for `TTL`, and ends with
//! the gateway.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::{Duration, SystemTime};

use rmcp::ErrorData;
use rmcp::model::{
    ClientCapabilities, CreateTaskResult, DetailedTask, GetTaskResult, InputRequests,
    InputResponses, JsonObject, Task, TaskPayload, TaskStatus,
};
use tokio_util::sync::CancellationToken;

use super::following::{self, Following};
use super::parked::unguessable;
use super::questions::{self, Question};
use crate::elicitation;
use crate::lock::lock;
use crate::store::Store;
use crate::store::clock::iso8601;

/// How long a task is kept from its making, ended or not.
const TTL: Duration = Duration::from_secs(600);
/// The wait between polls the gateway suggests.
const POLL: Duration = Duration::from_millis(250);
/// Tasks a view keeps at once; a call beyond them is answered directly.
const MAX_TASKS: usize = 256;

/// A view's tasks, by id.
#[derive(Clone, Default)]
pub(super) struct Tasks(Arc<Mutex<HashMap<String, Entry>>>);

struct Entry {
    task: Task,
    state: State,
    /// Cancelled by `tasks/cancel`: the call is aborted.
    cancel: CancellationToken,
}

enum State {
    Working,
    /// The questions put to the client (as input requests, and by key) until it answers.
    Asking(InputRequests, Vec<(String, Question)>),
    Ended(TaskPayload),
}

impl Tasks {
    /// Makes `call` a task of the view's, driven from now on; or gives it back when the
    /// view keeps as many tasks as it may.
    pub fn make(
        &self,
        view: &View,
        call: Following,
        capabilities: Option<ClientCapabilities>,
    ) -> Result<CreateTaskResult, Following> {
        let id = unguessable().filter(|_| lock(&self.0).len() < MAX_TASKS);
        let Some(id) = id else {
            return Err(call);
        };
        let now = iso8601(SystemTime::now());
        let mut task = Task::new(id.clone(), TaskStatus::Working, now.clone(), now);
        task.ttl_ms = Some(TTL.as_millis() as u64);
        task.poll_interval_ms = Some(POLL.as_millis() as u64);
        let cancel = CancellationToken::new();
        let entry = Entry {
            task: task.clone(),
            state: State::Working,
            cancel: cancel.clone(),
        };
        lock(&self.0).insert(id.clone(), entry);
        let driver = Driver {
            tasks: self.clone(),
            view: view.clone(),
            id,
            capabilities,
            cancel,
        };
        tokio::spawn(driver.drive(call));
        Ok(CreateTaskResult::new(task))
    }

    /// `tasks/get`.
    pub fn get(&self, id: &str) -> Result<GetTaskResult, ErrorData> {
        let tasks = lock(&self.0);
        let entry = tasks.get(id).ok_or_else(|| unknown(id))?;
        let payload = match &entry.state {
            State::Working => TaskPayload::Working,
            State::Asking(requests, _) => TaskPayload::InputRequired {
                input_requests: requests.clone(),
            },
            State::Ended(payload) => payload.clone(),
        };
        Ok(GetTaskResult::new(DetailedTask::new(
            entry.task.clone(),
            payload,
        )))
    }

    /// `tasks/update`: the client's answers to the questions outstanding; a question it
    /// leaves out is answered `cancel`.
    pub fn update(&self, id: &str, mut answers: InputResponses) -> Result<(), ErrorData> {
        let asked = {
            let mut tasks = lock(&self.0);
            let entry = tasks.get_mut(id).ok_or_else(|| unknown(id))?;
            match std::mem::replace(&mut entry.state, State::Working) {
                State::Asking(_, asked) => {
                    touch(&mut entry.task, TaskStatus::Working);
                    asked
                }
                other => {
                    entry.state = other;
                    return Ok(());
                }
            }
        };
        for (key, question) in asked {
            let answer = answers.remove(&key).unwrap_or_else(elicitation::cancel);
            let _ = question.answer.send(answer);
        }
        Ok(())
    }

    /// `tasks/cancel`: the call is aborted (a task that ended stays as it ended).
    pub fn cancel(&self, id: &str) -> Result<(), ErrorData> {
        let tasks = lock(&self.0);
        let entry = tasks.get(id).ok_or_else(|| unknown(id))?;
        entry.cancel.cancel();
        Ok(())
    }

    fn set(&self, id: &str, status: TaskStatus, state: State) {
        if let Some(entry) = lock(&self.0).get_mut(id) {
            touch(&mut entry.task, status);
            entry.state = state;
        }
    }
}

/// Where a task's calls run, as its driver sees them.
#[derive(Clone)]
pub(super) struct View {
    pub store: Arc<Store>,
    pub agent: Option<String>,
    /// Cancelled when the gateway stops.
    pub closing: CancellationToken,
}

struct Driver {
    tasks: Tasks,
    view: View,
    id: String,
    capabilities: Option<ClientCapabilities>,
    cancel: CancellationToken,
}

impl Driver {
    /// Follows the task's call to its end, or to the task's cancel, the gateway's stop or
    /// the task's time; the task is forgotten `TTL` after it was made.
    async fn drive(self, mut call: Following) {
        let Driver {
            tasks,
            view,
            id,
            capabilities,
            cancel,
        } = self;
        let expiry = tokio::time::sleep(TTL);
        tokio::pin!(expiry);
        let mut asked = 0;
        let ended = loop {
            tokio::select! {
                ended = &mut call.done => break Some(ended),
                // A task's progress has no stream to go to.
                Some(_) = call.progress.recv() => {}
                Some(question) = call.questions.recv() => {
                    if !questions::answerable(capabilities.as_ref(), &question.params) {
                        question.cancel();
                        continue;
                    }
                    let round = following::round(question, &mut call.questions).await;
                    let requests = questions::requests(&round, asked);
                    let keyed: Vec<_> = round
                        .into_iter()
                        .enumerate()
                        .map(|(n, question)| (questions::key(asked + n), question))
                        .collect();
                    asked += keyed.len();
                    tasks.set(&id, TaskStatus::InputRequired, State::Asking(requests, keyed));
                }
                _ = cancel.cancelled() => break None,
                _ = view.closing.cancelled() => break None,
                _ = &mut expiry => break None,
            }
        };
        let (status, payload) = match ended {
            Some(Ok(ended)) => {
                let result = following::result(ended);
                let result = serde_json::to_value(result).ok();
                let result = result
                    .and_then(|r| r.as_object().cloned())
                    .unwrap_or_default();
                (TaskStatus::Completed, TaskPayload::Completed { result })
            }
            Some(Err(_)) => {
                let mut error = JsonObject::new();
                error.insert("code".into(), (-32603).into());
                error.insert("message".into(), "the call ended unanswered".into());
                (TaskStatus::Failed, TaskPayload::Failed { error })
            }
            None => {
                call.abort(&view.store, view.agent.as_deref());
                (TaskStatus::Cancelled, TaskPayload::Cancelled)
            }
        };
        tasks.set(&id, status, State::Ended(payload));
        tokio::select! {
            _ = &mut expiry => {}
            _ = view.closing.cancelled() => {}
        }
        lock(&tasks.0).remove(&id);
    }
}

fn touch(task: &mut Task, status: TaskStatus) {
    task.status = status;
    task.last_updated_at = iso8601(SystemTime::now());
}

fn unknown(id: &str) -> ErrorData {
    ErrorData::invalid_params(format!("no task {id:?} on this gateway"), None)
}
