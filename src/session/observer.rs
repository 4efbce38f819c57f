//! Sees every message from the server in arrival order, before rmcp dispatches it.
//!
//! rmcp handles each notification on a task of its own but hands a response straight to
//! the waiting request, so a progress notification sent just before the answer can lose
//! the race to it, and log messages can overtake each other. Routing progress, logging and
//! (2025-era) resource updates here, in the transport's receive order, keeps them in the
//! order the server sent them: a subscriber keeps the latest update.
//!
//! It also drops responses to ids the client never sent while the handshake runs, as the
//! official SDK does: rmcp would fail `initialize` on them, and ignores them only later.
#![expect(
    deprecated,
    reason = "logging is deprecated by SEP-2577, but servers still send it"
)]

use std::future::Future;
use std::sync::Arc;

use rmcp::model::{
    ClientJsonRpcMessage, ClientRequest, GetMeta, JsonRpcMessage, RequestId, ServerJsonRpcMessage,
    ServerNotification,
};
use rmcp::service::RoleClient;
use rmcp::transport::Transport;
use serde_json::Value;

use super::engine::request::Progress;
use super::handler::{Logged, Shared};
use super::opening::Unanswered;
use super::redacted::redact_strings;
use super::subscribe::route_update;

pub struct Observed<T> {
    inner: T,
    shared: Arc<Shared>,
    /// Until the handshake is answered: the ids of the requests sent so far and which of
    /// them opens the session (`initialize`, or the `server/discover` of the 2026 era).
    handshake: Option<Handshake>,
    /// Requests of our own opening (see `opening`) that were left unanswered.
    unanswered: Unanswered,
}

#[derive(Default)]
struct Handshake {
    sent: Vec<RequestId>,
    initialize: Option<RequestId>,
}

impl<T> Observed<T> {
    pub fn new(inner: T, shared: Arc<Shared>) -> Self {
        Observed {
            inner,
            shared,
            handshake: Some(Handshake::default()),
            unanswered: Vec::new(),
        }
    }

    /// The opening was ours (see `opening`): the handshake is over, and late answers to its
    /// requests are not rmcp's to see.
    pub fn opened(&mut self, unanswered: Unanswered) {
        self.handshake = None;
        self.unanswered = unanswered;
    }

    /// Whether `message` answers a request of the opening left unanswered (once each).
    fn late_opening_answer(&mut self, message: &ServerJsonRpcMessage) -> bool {
        let id = match message {
            JsonRpcMessage::Response(response) => &response.id,
            JsonRpcMessage::Error(error) => match &error.id {
                Some(id) => id,
                None => return false,
            },
            _ => return false,
        };
        let Some(at) = self.unanswered.iter().position(|sent| answers(id, sent)) else {
            return false;
        };
        self.unanswered.swap_remove(at);
        true
    }

    /// Whether `message` may reach rmcp: anything but a response to an id never sent
    /// during the handshake. The answer to `initialize` ends the handshake.
    fn admits(&mut self, message: &ServerJsonRpcMessage) -> bool {
        let Some(handshake) = &self.handshake else {
            return !self.late_opening_answer(message);
        };
        let id = match message {
            JsonRpcMessage::Response(response) => &response.id,
            JsonRpcMessage::Error(error) => match &error.id {
                Some(id) => id,
                None => return true,
            },
            _ => return true,
        };
        if !handshake.sent.iter().any(|sent| answers(id, sent)) {
            return false;
        }
        // A discover refused is followed by `initialize`: only a result ends the handshake.
        let result = matches!(message, JsonRpcMessage::Response(_));
        if result
            && handshake
                .initialize
                .as_ref()
                .is_some_and(|init| answers(id, init))
        {
            self.handshake = None;
        }
        true
    }
}

/// Whether a response `id` answers request `sent`; a string holding the number counts, as
/// rmcp matches it.
fn answers(id: &RequestId, sent: &RequestId) -> bool {
    id == sent
        || matches!((id, sent), (RequestId::String(text), RequestId::Number(n)) if text.parse() == Ok(*n))
}

impl<T: Transport<RoleClient>> Transport<RoleClient> for Observed<T> {
    type Error = T::Error;

    fn send(
        &mut self,
        item: ClientJsonRpcMessage,
    ) -> impl Future<Output = Result<(), T::Error>> + Send + 'static {
        if let (Some(handshake), JsonRpcMessage::Request(request)) = (&mut self.handshake, &item) {
            handshake.sent.push(request.id.clone());
            if let ClientRequest::InitializeRequest(_) | ClientRequest::DiscoverRequest(_) =
                request.request
            {
                handshake.initialize = Some(request.id.clone());
            }
        }
        self.inner.send(item)
    }

    async fn receive(&mut self) -> Option<ServerJsonRpcMessage> {
        loop {
            let Some(message) = self.inner.receive().await else {
                self.shared.transport_ended.send_replace(true);
                return None;
            };
            if !self.admits(&message) {
                continue;
            }
            if let ServerJsonRpcMessage::Notification(n) = &message {
                observe(&self.shared, &n.notification).await;
            }
            return Some(message);
        }
    }

    fn close(&mut self) -> impl Future<Output = Result<(), T::Error>> + Send {
        self.inner.close()
    }
}

/// rmcp drops the transport when its session ends for any reason.
impl<T> Drop for Observed<T> {
    fn drop(&mut self) {
        self.shared.transport_ended.send_replace(true);
    }
}

async fn observe(shared: &Shared, notification: &ServerNotification) {
    match notification {
        ServerNotification::ProgressNotification(n) => {
            let p = &n.params;
            if let Some(route) = shared.progress_route(&p.progress_token) {
                route(Progress {
                    progress: p.progress,
                    total: p.total,
                    message: p.message.clone(),
                });
            }
        }
        ServerNotification::LoggingMessageNotification(n) => {
            let level = serde_json::to_value(n.params.level).ok();
            let level = level.as_ref().and_then(Value::as_str).unwrap_or("info");
            if shared.logs.receiver_count() > 0 {
                let mut data = n.params.data.clone();
                redact_strings(&shared.redactor, &mut data);
                let level = level.to_owned();
                let _ = shared.logs.send(Arc::new(Logged { level, data }));
            }
            if let Some(logger) = &shared.hooks.logger {
                let text = shared.redactor.log_text(&n.params.data);
                logger
                    .log(&shared.server, level, n.params.data.clone(), text)
                    .await;
            }
        }
        ServerNotification::ResourceUpdatedNotification(n) => {
            shared.responses.forget_changed(notification);
            route_update(&shared.updates, &n.params, notification.get_meta());
        }
        other => shared.responses.forget_changed(other),
    }
}
