//! A call through the view, followed: what it says (progress, its one result, passed on
//! as the server sent it) and what it asks (see `questions`) come to a `Following`,
//! whoever follows it (a downstream request, a task). Results toolnexus composes (a
//! server not connected, a timeout) come as error results, as `loadMcp`'s tools return
//! them.

use std::sync::{Arc, Mutex};

use rmcp::model::{CallToolResult, ContentBlock};
use serde_json::value::RawValue;
use tokio::sync::{mpsc, oneshot};

use super::names::Target;
use super::questions::{self, Question};
use crate::elicitation::Elicitor;
use crate::lock::lock;
use crate::session::{CallId, CallSink, Progress};
use crate::store::{Store, ToolCall};
use crate::tool::result::ToolOutput;

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
pub(super) fn start(
    store: &Store,
    agent: Option<&str>,
    target: Target,
    args_json: &str,
    wants: Wants,
) -> Following {
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
    let id = store.start_call(agent, call, relay);
    Following {
        target,
        id,
        progress,
        done,
        questions,
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
