//! Telling downstream clients that a view's lists changed. A 2025-11-25 session is sent
//! `notifications/*/list_changed` unasked; a 2026-07-28 client asks with
//! `subscriptions/listen`, whose stream carries them. A change is a new revision of the
//! view: its tools changed, or a server was added or removed (whose resources and
//! prompts come and go with it, so those lists are announced too).

use std::sync::Arc;

use rmcp::RoleServer;
use rmcp::model::SubscriptionFilter;
use rmcp::service::{Peer, SubscriptionContext};
use tokio::sync::{mpsc, watch};
use tokio_util::sync::CancellationToken;

use super::shared::Shared;
use super::subscriptions;

/// The changes a view can see, one at a time.
struct Changes {
    shared: Arc<Shared>,
    store_versions: watch::Receiver<u64>,
    seen: u64,
}

impl Changes {
    fn new(shared: Arc<Shared>) -> Changes {
        let store_versions = shared.store.subscribe();
        let seen = shared.store.revision(shared.agent.as_deref());
        Changes {
            shared,
            store_versions,
            seen,
        }
    }

    /// Waits for the view's next revision; `false` once `stop` is cancelled or the store
    /// is gone.
    async fn next(&mut self, stop: &CancellationToken) -> bool {
        loop {
            tokio::select! {
                changed = self.store_versions.changed() => {
                    if changed.is_err() {
                        return false;
                    }
                }
                _ = stop.cancelled() => return false,
            }
            let now = self.shared.store.revision(self.shared.agent.as_deref());
            if now != self.seen {
                self.seen = now;
                return true;
            }
        }
    }
}

/// Follows a 2025-11-25 session's view until the session ends.
pub(super) fn follow(shared: Arc<Shared>, peer: Peer<RoleServer>, session: CancellationToken) {
    tokio::spawn(async move {
        let mut changes = Changes::new(shared);
        while changes.next(&session).await {
            if peer.notify_tool_list_changed().await.is_err() {
                return;
            }
            let _ = peer.notify_resource_list_changed().await;
            let _ = peer.notify_prompt_list_changed().await;
        }
    });
}

/// What a 2026-07-28 subscription may hear of: the list changes, which the view sends.
pub(super) fn accepted(requested: &SubscriptionFilter) -> SubscriptionFilter {
    let mut accepted = SubscriptionFilter::new();
    accepted.tools_list_changed = requested.tools_list_changed;
    accepted.resources_list_changed = requested.resources_list_changed;
    accepted.prompts_list_changed = requested.prompts_list_changed;
    accepted.resource_subscriptions = requested
        .resource_subscriptions
        .as_ref()
        .map(|uris| uris.iter().take(subscriptions::MAX).cloned().collect());
    accepted
}

/// Runs one 2026-07-28 subscription until the client or the gateway ends it.
pub(super) async fn listen(shared: &Arc<Shared>, context: SubscriptionContext) {
    let mut changes = Changes::new(shared.clone());
    let stop = shared.closing.clone();
    let following = stop.child_token();
    let _following = following.clone().drop_guard();
    let (updated, mut updates) = mpsc::channel(16);
    let uris = context.accepted().resource_subscriptions.clone();
    for uri in uris.unwrap_or_default() {
        // A URI no server can follow is left out; the others still are.
        let _ = subscriptions::follow(shared, &uri, updated.clone(), following.clone()).await;
    }
    loop {
        tokio::select! {
            more = changes.next(&stop) => if !more { return },
            Some(uri) = updates.recv() => {
                if context.sink().notify_resource_updated(uri).await.is_err() {
                    return;
                }
                continue;
            }
            _ = context.cancelled() => return,
        }
        let sink = context.sink();
        let wants = context.accepted();
        if wants.tools_list_changed == Some(true) && sink.notify_tool_list_changed().await.is_err()
        {
            return;
        }
        if wants.resources_list_changed == Some(true) {
            let _ = sink.notify_resource_list_changed().await;
        }
        if wants.prompts_list_changed == Some(true) {
            let _ = sink.notify_prompt_list_changed().await;
        }
    }
}
