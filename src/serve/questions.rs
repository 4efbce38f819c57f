//! What an upstream asks during a call (an elicitation, 2025's request or a 2026 round)
//! put to the downstream client that made the call, in the client's era: a 2025 client
//! is sent `elicitation/create` on the call's stream; a 2026 client is answered with an
//! input-required result and sends its answers with the call again (see `parked`). A
//! question the client cannot answer (it declared no elicitation, or not that mode) is
//! answered `cancel`, as the spec has a client that declines.

use std::future::Future;
use std::pin::Pin;

use rmcp::RoleServer;
use rmcp::model::{
    ClientCapabilities, ElicitRequestParams, InputRequest, InputRequests, InputRequiredResult,
};
use rmcp::service::Peer;
use serde_json::{Value, json};
use tokio::sync::{mpsc, oneshot};

use crate::elicitation::{self, Elicitor};

/// Questions of one call waiting for the relay to put them, and put to a client at once;
/// more are answered `cancel`, so a server that keeps asking grows no queue.
pub(super) const AT_ONCE: usize = 8;

/// One question: the `elicitation/create` params, and where its `ElicitResult` goes.
pub(super) struct Question {
    pub params: Value,
    pub answer: oneshot::Sender<Value>,
}

impl Question {
    pub fn cancel(self) {
        let _ = self.answer.send(elicitation::cancel());
    }
}

/// The call's elicitor: hands each question to the relay following the call.
pub(super) struct Asker(mpsc::Sender<Question>);

/// An asker, and where its questions arrive.
pub(super) fn channel() -> (Asker, mpsc::Receiver<Question>) {
    let (questions, arrive) = mpsc::channel(AT_ONCE);
    (Asker(questions), arrive)
}

impl Elicitor for Asker {
    fn elicit(&self, params: Value) -> Pin<Box<dyn Future<Output = Value> + Send>> {
        let (answer, answered) = oneshot::channel();
        let sent = self.0.try_send(Question { params, answer });
        Box::pin(async move {
            match sent {
                Ok(()) => answered.await.unwrap_or_else(|_| elicitation::cancel()),
                Err(_) => elicitation::cancel(),
            }
        })
    }
}

/// Whether a client with `capabilities` can answer the question of `params`: URL mode
/// needs `elicitation.url`; form mode, `elicitation.form` or an `elicitation` naming no
/// mode (which means form).
pub(super) fn answerable(capabilities: Option<&ClientCapabilities>, params: &Value) -> bool {
    let Some(elicitation) = capabilities.and_then(|c| c.elicitation.as_ref()) else {
        return false;
    };
    match params.get("mode").and_then(Value::as_str) {
        Some("url") => elicitation.url.is_some(),
        _ => elicitation.form.is_some() || elicitation.url.is_none(),
    }
}

/// Puts `question` to a 2025 client, on the stream of the request being handled (the
/// future must run on that request's task), and passes its answer on.
pub(super) async fn ask_session(peer: Peer<RoleServer>, question: Question) {
    let Ok(params) = serde_json::from_value::<ElicitRequestParams>(question.params.clone()) else {
        return question.cancel();
    };
    let answer = match peer.create_elicitation(params).await {
        Ok(result) => serde_json::to_value(result).unwrap_or_else(|_| elicitation::cancel()),
        Err(_) => elicitation::cancel(),
    };
    let _ = question.answer.send(answer);
}

/// The input-required result that puts `questions` to a 2026 client, keyed as `key`
/// numbers them, to be sent again with `state`.
pub(super) fn input_required(questions: &[Question], state: String) -> InputRequiredResult {
    InputRequiredResult::new(Some(requests(questions, 0)), Some(state))
}

/// `questions` as input requests, keyed from the `first`th on.
pub(super) fn requests(questions: &[Question], first: usize) -> InputRequests {
    questions
        .iter()
        .enumerate()
        .filter_map(|(n, question)| {
            let request = json!({ "method": "elicitation/create", "params": question.params });
            let request = serde_json::from_value::<InputRequest>(request).ok()?;
            Some((key(first + n), request))
        })
        .collect()
}

/// The key of the `n`th question put to a client (in a round, or over a task's life).
pub(super) fn key(n: usize) -> String {
    format!("q{n}")
}
