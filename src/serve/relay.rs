//! One downstream `tools/call` made through the view: the upstream's progress goes back
//! as the downstream's, a downstream cancel aborts the upstream call, and the result
//! goes back as the server sent it. Results toolnexus composes (a server not connected,
//! a timeout) go back as error results, as `loadMcp`'s tools return them. What the
//! upstream asks meanwhile goes to the downstream client (see `questions`).

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};

use futures::StreamExt;
use futures::stream::FuturesUnordered;

use rmcp::model::{
    CallToolResponse, CallToolResult, ContentBlock, JsonObject, ProgressNotificationParam,
};
use rmcp::service::RequestContext;
use rmcp::{ErrorData, RoleServer};
use serde_json::Value;
use serde_json::value::RawValue;
use tokio::sync::{mpsc, oneshot};

use super::completed::Completed;
use super::names::Target;
use super::offers;
use super::questions::{self, Question};
use super::shared::Shared;
use crate::elicitation::Elicitor;
use crate::lock::lock;
use crate::session::{CallId, CallSink, Progress, trace_context};
use crate::store::{Store, ToolCall};
use crate::tool_result::ToolOutput;

/// Progress notifications waiting to be sent; more are dropped (the next one says more).
const PROGRESS_QUEUE: usize = 32;

pub(super) enum Ended {
    AsSent(Box<RawValue>),
    Composed(ToolOutput),
}

struct Relay {
    progress: mpsc::Sender<Progress>,
    done: Mutex<Option<oneshot::Sender<Ended>>>,
}

impl Relay {
    fn end(&self, ended: Ended) {
        if let Some(done) = lock(&self.done).take() {
            let _ = done.send(ended);
        }
    }
}

impl CallSink for Relay {
    fn progress(&self, _: u64, progress: Progress) {
        let _ = self.progress.try_send(progress);
    }

    fn done(&self, _: u64, output: ToolOutput) {
        self.end(Ended::Composed(output));
    }

    fn as_sent(&self) -> bool {
        true
    }

    fn done_as_sent(&self, _: u64, result: &RawValue) {
        self.end(Ended::AsSent(result.to_owned()));
    }
}

/// A call in flight through the view: what it has yet to say, and what it asks.
pub(super) struct Following {
    target: Target,
    id: CallId,
    pub progress: mpsc::Receiver<Progress>,
    pub done: oneshot::Receiver<Ended>,
    pub questions: mpsc::Receiver<Question>,
}

impl Following {
    pub(super) fn abort(&self, store: &Store, agent: Option<&str>) {
        store.abort_call(agent, &self.target.service, self.id.get());
    }
}

/// How a stretch of following a call ends.
enum Step {
    Ended(Result<Ended, oneshot::error::RecvError>),
    /// Questions for a 2026 client, which must answer them in a request of its own.
    Asked(Vec<Question>),
    Cancelled,
}

/// What a call through the view wants besides its result.
pub(super) struct Wants {
    pub progress: bool,
    /// Whether its client can be asked what the server asks.
    pub questions: bool,
    pub task: bool,
    /// The caller's trace context, as `_meta` members.
    pub trace: Option<Arc<str>>,
}

/// Starts a call of `target` with `args_json` through the view; what it says and asks
/// comes to the returned `Following`.
pub(super) fn start(shared: &Shared, target: Target, args_json: &str, wants: Wants) -> Following {
    let (progress_tx, progress) = mpsc::channel(PROGRESS_QUEUE);
    let (done_tx, done) = oneshot::channel();
    let (asker, questions) = questions::channel();
    let relay = Arc::new(Relay {
        progress: progress_tx,
        done: Mutex::new(Some(done_tx)),
    });
    let call = ToolCall {
        service: &target.service,
        tool: &target.tool,
        args_json,
        timeout: None,
        max_total: None,
        wants_progress: wants.progress,
        task: wants.task,
        trace: wants.trace,
        elicitor: wants
            .questions
            .then(|| Arc::new(asker) as Arc<dyn Elicitor>),
    };
    let id = shared
        .store
        .start_call(shared.agent.as_deref(), call, relay);
    Following {
        target,
        id,
        progress,
        done,
        questions,
    }
}

pub(super) async fn call(
    shared: &Arc<Shared>,
    target: Target,
    arguments: Option<JsonObject>,
    context: RequestContext<RoleServer>,
) -> Result<CallToolResponse, ErrorData> {
    let args_json = serde_json::to_string(&arguments.unwrap_or_default())
        .map_err(|e| ErrorData::invalid_params(e.to_string(), None))?;
    let capabilities = context.client_capabilities();
    // A task for a client that takes them, where the upstream's call may become one.
    let as_task = capabilities.as_ref().is_some_and(|c| c.supports_tasks())
        && offers::session_of(shared, &target.service)
            .is_ok_and(|session| session.may_run_as_task(&target.tool));
    let wants = Wants {
        progress: context.meta.get_progress_token().is_some(),
        questions: capabilities
            .as_ref()
            .is_some_and(|c| c.elicitation.is_some()),
        task: as_task,
        trace: trace_context::members_of(&context.meta.0),
    };
    let call = start(shared, target, &args_json, wants);
    if !as_task {
        return follow(shared, call, context).await;
    }
    match shared.tasks.make(shared, call, capabilities) {
        Ok(task) => Ok(CallToolResponse::Task(task)),
        Err(call) => follow(shared, call, context).await,
    }
}

/// A 2026 client's answers to the questions of a parked call: the call goes on.
pub(super) async fn resume(
    shared: &Shared,
    state: &str,
    mut answers: BTreeMap<String, Value>,
    context: RequestContext<RoleServer>,
) -> Result<CallToolResponse, ErrorData> {
    let Some(parked) = shared.parking.take(state) else {
        let why = "no call waits under this requestState (it ended, or another gateway holds it); call the tool again";
        return Err(ErrorData::invalid_params(why, None));
    };
    let call = parked.answer(|key| answers.remove(key));
    follow(shared, call, context).await
}

/// Follows `call` for one downstream request: its progress and result, its questions, and
/// the request's cancel, which aborts it.
async fn follow(
    shared: &Shared,
    mut call: Following,
    context: RequestContext<RoleServer>,
) -> Result<CallToolResponse, ErrorData> {
    let token = context.meta.get_progress_token();
    let capabilities = context.client_capabilities();
    // A 2026 request carries its protocol version; a 2025 session's requests do not.
    let stateless = context.meta.protocol_version().is_some();
    let tell = async |progress: Progress| {
        if let Some(token) = &token {
            let mut note = ProgressNotificationParam::new(token.clone(), progress.progress);
            note.total = progress.total;
            note.message = progress.message;
            let _ = context.peer.notify_progress(note).await;
        }
    };
    let mut asking = FuturesUnordered::new();
    let step = loop {
        tokio::select! {
            ended = &mut call.done => {
                // What came before the result goes before it.
                while let Ok(progress) = call.progress.try_recv() {
                    tell(progress).await;
                }
                break Step::Ended(ended);
            }
            Some(progress) = call.progress.recv() => tell(progress).await,
            Some(question) = call.questions.recv() => {
                if !questions::answerable(capabilities.as_ref(), &question.params) {
                    question.cancel();
                } else if stateless {
                    break Step::Asked(round(question, &mut call.questions).await);
                } else {
                    asking.push(questions::ask_session(context.peer.clone(), question));
                }
            }
            Some(()) = asking.next() => {}
            _ = context.ct.cancelled() => break Step::Cancelled,
        }
    };
    match step {
        Step::Ended(Ok(ended)) => Ok(CallToolResponse::Complete(result(ended).completed())),
        Step::Ended(Err(_)) => Err(ErrorData::internal_error("the call ended unanswered", None)),
        Step::Cancelled => {
            call.abort(&shared.store, shared.agent.as_deref());
            Err(ErrorData::internal_error("cancelled", None))
        }
        Step::Asked(asked) => {
            let parked = shared.parking.park(
                call,
                asked,
                &shared.store,
                shared.agent.as_deref(),
                &shared.closing,
            );
            match parked {
                Ok(input_required) => Ok(CallToolResponse::InputRequired(input_required)),
                Err((call, asked)) => {
                    asked.into_iter().for_each(Question::cancel);
                    Box::pin(follow(shared, call, context)).await
                }
            }
        }
    }
}

/// The questions of one round: `first`, and those asked with it (a 2026 upstream asks a
/// round's at once; a turn lets them all arrive).
pub(super) async fn round(first: Question, more: &mut mpsc::Receiver<Question>) -> Vec<Question> {
    tokio::task::yield_now().await;
    let mut questions = vec![first];
    while let Ok(question) = more.try_recv() {
        questions.push(question);
    }
    questions
}

pub(super) fn result(ended: Ended) -> CallToolResult {
    match ended {
        Ended::AsSent(json) => serde_json::from_str(json.get()).unwrap_or_else(|e| {
            CallToolResult::error(vec![ContentBlock::text(format!(
                "the server's result is not a CallToolResult: {e}"
            ))])
        }),
        Ended::Composed(output) if output.is_error => {
            CallToolResult::error(vec![ContentBlock::text(output.output)])
        }
        Ended::Composed(output) => CallToolResult::success(vec![ContentBlock::text(output.output)]),
    }
}
