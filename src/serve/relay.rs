//! One downstream `tools/call` made through the view: the upstream's progress goes back
//! as the downstream's, a downstream cancel aborts the upstream call, and the result
//! goes back as the server sent it. Results toolnexus composes (a server not connected,
//! a timeout) go back as error results, as `loadMcp`'s tools return them.

use std::sync::{Arc, Mutex};

use rmcp::model::{
    CallToolResponse, CallToolResult, ContentBlock, JsonObject, ProgressNotificationParam,
};
use rmcp::service::RequestContext;
use rmcp::{ErrorData, RoleServer};
use serde_json::value::RawValue;
use tokio::sync::{mpsc, oneshot};

use super::completed::Completed;
use super::names::Target;
use super::shared::Shared;
use crate::lock::lock;
use crate::session::{CallSink, Progress, trace_context};
use crate::store::ToolCall;
use crate::tool_result::ToolOutput;

/// Progress notifications waiting to be sent; more are dropped (the next one says more).
const PROGRESS_QUEUE: usize = 32;

enum Ended {
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

pub(super) async fn call(
    shared: &Shared,
    target: Target,
    arguments: Option<JsonObject>,
    context: RequestContext<RoleServer>,
) -> Result<CallToolResponse, ErrorData> {
    let token = context.meta.get_progress_token();
    let (progress_tx, mut progress_rx) = mpsc::channel(PROGRESS_QUEUE);
    let (done_tx, mut done_rx) = oneshot::channel();
    let relay = Arc::new(Relay {
        progress: progress_tx,
        done: Mutex::new(Some(done_tx)),
    });
    let args_json = serde_json::to_string(&arguments.unwrap_or_default())
        .map_err(|e| ErrorData::invalid_params(e.to_string(), None))?;
    let trace = trace_context::members_of(&context.meta.0);
    let agent = shared.agent.as_deref();
    let call = ToolCall {
        service: &target.service,
        tool: &target.tool,
        args_json: &args_json,
        timeout: None,
        max_total: None,
        wants_progress: token.is_some(),
        task: false,
        trace,
    };
    let id = shared.store.start_call(agent, call, relay);
    let tell = async |progress: Progress| {
        if let Some(token) = &token {
            let mut note = ProgressNotificationParam::new(token.clone(), progress.progress);
            note.total = progress.total;
            note.message = progress.message;
            let _ = context.peer.notify_progress(note).await;
        }
    };
    let ended = loop {
        tokio::select! {
            ended = &mut done_rx => {
                // What came before the result goes before it.
                while let Ok(progress) = progress_rx.try_recv() {
                    tell(progress).await;
                }
                break ended;
            }
            Some(progress) = progress_rx.recv() => tell(progress).await,
            _ = context.ct.cancelled() => {
                shared.store.abort_call(agent, &target.service, id.get());
                return Err(ErrorData::internal_error("cancelled", None));
            }
        }
    };
    let Ok(ended) = ended else {
        return Err(ErrorData::internal_error("the call ended unanswered", None));
    };
    Ok(CallToolResponse::Complete(result(ended).completed()))
}

fn result(ended: Ended) -> CallToolResult {
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
