//! What the view's servers log (`notifications/message`), passed to a 2025-11-25 session
//! under each server's name as `logger`, at or above the level it set with
//! `logging/setLevel` (everything until it does). The 2026-07-28 revision removed logging
//! (SEP-2577), so its clients get none. A session that falls behind misses messages.
#![allow(
    deprecated,
    reason = "logging is the 2025-11-25 revision's, still served"
)]

use std::sync::Arc;
use std::sync::atomic::{AtomicU8, Ordering};

use rmcp::RoleServer;
use rmcp::model::{LoggingLevel, LoggingMessageNotificationParam};
use rmcp::service::Peer;
use tokio::sync::broadcast::error::RecvError;
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

use super::shared::Shared;
use crate::session::Logged;

/// The lowest level a session wants; `Debug` (every message) until it says.
#[derive(Default)]
pub(super) struct Level(AtomicU8);

impl Level {
    pub(super) fn set(&self, level: LoggingLevel) {
        self.0.store(level as u8, Ordering::Relaxed);
    }

    fn allows(&self, level: LoggingLevel) -> bool {
        level as u8 >= self.0.load(Ordering::Relaxed)
    }
}

/// Passes the view's servers' messages to `peer` until the session ends, following the
/// view's servers as they come and go.
pub(super) fn follow(
    shared: Arc<Shared>,
    peer: Peer<RoleServer>,
    level: Arc<Level>,
    session: CancellationToken,
) {
    tokio::spawn(async move {
        let agent = shared.agent.as_deref();
        let mut versions = shared.store.subscribe();
        loop {
            let revision = shared.store.revision(agent);
            let servers = session.child_token();
            let (logged, mut messages) = mpsc::channel(64);
            for (name, server) in shared.store.sessions(agent) {
                let logs = server.logs();
                tokio::spawn(forward(name, logs, logged.clone(), servers.clone()));
            }
            let _servers = servers.drop_guard();
            loop {
                tokio::select! {
                    Some((name, message)) = messages.recv() => {
                        if !send(&peer, &level, name, &message).await {
                            return;
                        }
                    }
                    changed = versions.changed() => {
                        if changed.is_err() {
                            return;
                        }
                        if shared.store.revision(agent) != revision {
                            break;
                        }
                    }
                    _ = session.cancelled() => return,
                }
            }
        }
    });
}

/// One server's messages into the session's queue, until `end`.
async fn forward(
    name: String,
    mut logs: tokio::sync::broadcast::Receiver<Arc<Logged>>,
    to: mpsc::Sender<(String, Arc<Logged>)>,
    end: CancellationToken,
) {
    loop {
        let message = tokio::select! {
            message = logs.recv() => message,
            _ = end.cancelled() => return,
        };
        match message {
            Ok(message) => {
                let _ = to.try_send((name.clone(), message));
            }
            Err(RecvError::Lagged(_)) => {}
            Err(RecvError::Closed) => return,
        }
    }
}

/// Sends one message if the session wants its level; `false` once the session is gone.
async fn send(peer: &Peer<RoleServer>, level: &Level, name: String, message: &Logged) -> bool {
    let parsed = serde_json::from_value(serde_json::Value::from(message.level.as_str()));
    let message_level = parsed.unwrap_or(LoggingLevel::Info);
    if !level.allows(message_level) {
        return true;
    }
    let mut note = LoggingMessageNotificationParam::new(message_level, message.data.clone());
    note.logger = Some(name);
    peer.notify_logging_message(note).await.is_ok()
}
