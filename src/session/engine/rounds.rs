//! One round of a multi-round-trip request (2026-07-28): what the server asked in an
//! input-required result, put to the host, and the `inputResponses` it gets back.
//! Elicitations go to `waitFor` with the same mapping as the 2025 era's
//! `elicitation/create` requests; sampling and roots, which toolnexus never declares, are
//! refused, and the call ends.

use futures::future::join_all;
use serde_json::{Map, Value};
use tokio_util::sync::CancellationToken;

use super::{Engine, Pending, call};
use crate::elicitation;
use crate::session::error::{Error, Kind};
use crate::session::handler::Shared;
use crate::tool_result::InputRequired;

impl Engine {
    /// Puts what the server asked to the host while the request's clock stands still,
    /// then sends the next round.
    pub(super) fn ask(&self, id: u64, mut pending: Pending, asked: InputRequired) {
        let asking = CancellationToken::new();
        pending.asking = Some(asking.clone());
        pending.clock.set_paused(true);
        let phase = pending.phase.clone();
        self.table().pending.insert(id, pending);
        let Some(me) = self.me.upgrade() else {
            return;
        };
        self.runtime.spawn(async move {
            let answers = tokio::select! {
                answers = fulfil(&me.shared, &asked.requests, &phase) => answers,
                _ = asking.cancelled() => return,
            };
            let Some(mut pending) = me.table().pending.remove(&id) else {
                return;
            };
            let responses = match answers {
                Ok(responses) => responses,
                Err(refusal) => {
                    let error = Error::new(refusal.kind(), refusal.to_string());
                    return pending.caller.fail(error.into());
                }
            };
            pending.asking = None;
            pending.rounds += 1;
            pending.answered = Some((responses, asked));
            let paused = me.shared.eliciting.borrow().pauses(None);
            pending.clock.set_paused(paused);
            me.send(call::next_id(), pending);
        });
    }
}

/// Why a round cannot be answered; `during` names the request, as the failure does.
#[derive(Debug)]
pub enum Refusal<'a> {
    /// A request toolnexus never declared it could answer (sampling, roots, ...).
    Unsupported { method: &'a str, during: &'a str },
    /// An elicitation, with no `waitFor` to put it to.
    NoWaitFor { during: &'a str },
}

impl Refusal<'_> {
    fn kind(&self) -> Kind {
        match self {
            Refusal::Unsupported { .. } => Kind::Unsupported,
            Refusal::NoWaitFor { .. } => Kind::InputRequired,
        }
    }
}

impl std::fmt::Display for Refusal<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Refusal::Unsupported { method, during } => write!(
                f,
                "asked for {method} during {during}, which toolnexus does not support"
            ),
            Refusal::NoWaitFor { during } => write!(
                f,
                "asked for input during {during}, but no waitFor was given to answer it"
            ),
        }
    }
}

/// The answers as `inputResponses` JSON text, or why the request cannot go on.
pub async fn fulfil<'a>(
    shared: &Shared,
    requests: &'a Map<String, Value>,
    during: &'a str,
) -> Result<String, Refusal<'a>> {
    let mut asks = Vec::with_capacity(requests.len());
    for (key, request) in requests {
        let method = request.get("method").and_then(Value::as_str).unwrap_or("");
        let params = request.get("params").cloned().unwrap_or(Value::Null);
        if method != "elicitation/create" {
            let method = if method.is_empty() {
                "an unnamed request"
            } else {
                method
            };
            return Err(Refusal::Unsupported { method, during });
        }
        let Some(elicitor) = shared.hooks.elicitor.clone() else {
            return Err(Refusal::NoWaitFor { during });
        };
        asks.push(async move {
            let answer = elicitor.ask(elicitation::to_request(&params)).await;
            (
                key.clone(),
                elicitation::to_result(answer.as_ref(), &params),
            )
        });
    }
    let responses: Map<String, Value> = join_all(asks).await.into_iter().collect();
    Ok(Value::Object(responses).to_string())
}
