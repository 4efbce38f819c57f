//! Sees every message from the server in arrival order, before rmcp dispatches it.
//!
//! rmcp handles each notification on a task of its own but hands a response straight to
//! the waiting request, so a progress notification sent just before the answer can lose
//! the race to it, and log messages can overtake each other. Routing progress and logging
//! here, in the transport's receive order, keeps both in the order the server sent them.
#![expect(
    deprecated,
    reason = "logging is deprecated by SEP-2577, but servers still send it"
)]

use std::future::Future;
use std::sync::Arc;

use rmcp::model::{ServerJsonRpcMessage, ServerNotification};
use rmcp::service::RoleClient;
use rmcp::transport::Transport;
use serde_json::Value;

use super::Progress;
use super::handler::Shared;

pub struct Observed<T> {
    inner: T,
    shared: Arc<Shared>,
}

impl<T> Observed<T> {
    pub fn new(inner: T, shared: Arc<Shared>) -> Self {
        Observed { inner, shared }
    }
}

impl<T: Transport<RoleClient>> Transport<RoleClient> for Observed<T> {
    type Error = T::Error;

    fn send(
        &mut self,
        item: rmcp::model::ClientJsonRpcMessage,
    ) -> impl Future<Output = Result<(), T::Error>> + Send + 'static {
        self.inner.send(item)
    }

    async fn receive(&mut self) -> Option<ServerJsonRpcMessage> {
        let Some(message) = self.inner.receive().await else {
            self.shared.transport_ended.send_replace(true);
            return None;
        };
        if let ServerJsonRpcMessage::Notification(n) = &message {
            observe(&self.shared, &n.notification).await;
        }
        Some(message)
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
            if let Some(route) = shared.routes().get(&p.progress_token) {
                let update = Progress {
                    progress: p.progress,
                    total: p.total,
                    message: p.message.clone(),
                };
                let _ = route.send(update);
            }
        }
        ServerNotification::LoggingMessageNotification(n) => {
            if let Some(logger) = &shared.hooks.logger {
                let level = serde_json::to_value(n.params.level).ok();
                let level = level.as_ref().and_then(Value::as_str).unwrap_or("info");
                logger
                    .log(&shared.server, level, n.params.data.clone())
                    .await;
            }
        }
        _ => {}
    }
}
