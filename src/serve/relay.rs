//! One downstream `tools/call` made through the view: the upstream's progress goes back
//! as the downstream's, a downstream cancel aborts the upstream call, and the result
//! goes back as the server sent it. What the upstream asks meanwhile goes to the
//! downstream client (see `questions`); a call that may run as a task upstream becomes a
//! gateway task for a client that takes them (see `tasks`).

use std::collections::BTreeMap;

use futures::StreamExt;
use futures::stream::FuturesUnordered;
use rmcp::model::{CallToolResponse, JsonObject, ProgressNotificationParam};
use rmcp::service::RequestContext;
use rmcp::{ErrorData, RoleServer};
use serde_json::Value;
use tokio::sync::oneshot;

use super::completed::Completed;
use super::following::{self, Ended, Following, Wants, result, round};
use super::names::Target;
use super::offers;
use super::questions::{self, Question};
use super::shared::Shared;
use crate::session::{Progress, trace_context};

/// How a stretch of following a call ends.
enum Step {
    Ended(Result<Ended, oneshot::error::RecvError>),
    /// Questions for a 2026 client, which must answer them in a request of its own.
    Asked(Vec<Question>),
    Cancelled,
}

pub(super) async fn call(
    shared: &Shared,
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
    let agent = shared.agent.as_deref();
    let call = following::start(&shared.store, agent, target, &args_json, wants);
    if !as_task {
        return follow(shared, call, context).await;
    }
    match shared.tasks.make(&shared.task_view(), call, capabilities) {
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
                let room = asking.len() < questions::AT_ONCE;
                if !room || !questions::answerable(capabilities.as_ref(), &question.params) {
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
