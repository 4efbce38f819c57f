//! One round of a multi-round-trip request (2026-07-28): what the server asked in an
//! input-required result, put to the host, and the `inputResponses` it gets back.
//! Elicitations go to `waitFor` with the same mapping as the 2025 era's
//! `elicitation/create` requests; sampling and roots, which toolnexus never declares, are
//! refused, and the call ends. A call may bring its own elicitor (a gateway's
//! downstream client), which then answers its questions in either era.

use std::sync::Arc;

use futures::future::join_all;
use rmcp::model::RequestId;
use serde_json::{Map, Value};
use tokio_util::sync::CancellationToken;

use super::{Engine, Pending, call};
use crate::elicitation::Elicitor;
use crate::session::error::{Error, Kind};
use crate::session::handler::Calls;
use crate::tool::result::InputRequired;

impl Engine {
    /// Puts what the server asked to the host while the request's clock stands still,
    /// then sends the next round.
    pub(super) fn ask(&self, id: u64, mut pending: Pending, asked: InputRequired) {
        let asking = CancellationToken::new();
        pending.asking = Some(asking.clone());
        pending.clock.set_paused(true);
        let phase = pending.phase.clone();
        let elicitor = pending.elicitor.clone();
        self.table().pending.insert(id, pending);
        let Some(me) = self.me.upgrade() else {
            return;
        };
        self.runtime.spawn(async move {
            let elicitor = elicitor.or_else(|| me.shared.hooks.elicitor.clone());
            let answers = tokio::select! {
                answers = fulfil(elicitor, &asked.requests, &phase) => answers,
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

impl Engine {
    /// Notes the transport's own id for request `id` (see `Pending::wire_request`): the
    /// questions the transport relates to it are its call's.
    pub fn bind(&self, id: u64, request: RequestId) {
        if let Some(pending) = self.table().pending.get_mut(&id) {
            pending.wire_request = Some(request);
        }
    }
}

impl Calls for Engine {
    fn elicitor_of(&self, wire: Option<&RequestId>) -> Option<Arc<dyn Elicitor>> {
        let table = self.table();
        // A call run as a task goes on as the task's requests.
        let is_call = |p: &&Pending| p.method == "tools/call" || p.task.is_some();
        let mut calls = table.pending.values().filter(is_call);
        let call = match wire {
            Some(wire) => calls.find(|p| p.wire_request.as_ref() == Some(wire)),
            // Unrelated by the transport (stdio): a question can only be the call's when
            // it is the one call in flight; otherwise it goes to the host.
            None => calls.next().filter(|_| calls.next().is_none()),
        };
        call.and_then(|p| p.elicitor.clone())
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
    elicitor: Option<Arc<dyn Elicitor>>,
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
        let Some(elicitor) = elicitor.clone() else {
            return Err(Refusal::NoWaitFor { during });
        };
        asks.push(async move { (key.clone(), elicitor.elicit(params).await) });
    }
    let responses: Map<String, Value> = join_all(asks).await.into_iter().collect();
    Ok(Value::Object(responses).to_string())
}
