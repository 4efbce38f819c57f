//! Staying current with a 2026-07-28 server: a `subscriptions/listen` request whose stream
//! carries `notifications/tools/list_changed`, which the 2025 era sent unasked, and the
//! resource and prompt list changes the server declares, which drop what is kept of those
//! lists (see `cache`).

use std::sync::Arc;

use rmcp::Peer;
use rmcp::model::{ServerNotification, SubscriptionFilter};
use rmcp::service::RoleClient;
use tokio_util::sync::CancellationToken;

use super::handler::Shared;

/// Bumps `shared.tools_changed` for each change the server announces, and forgets a kept
/// listing that changed, until the session closes or the server ends the subscription.
pub async fn tool_changes(peer: Peer<RoleClient>, shared: Arc<Shared>, closing: CancellationToken) {
    let mut filter = SubscriptionFilter::builder().tools_list_changed();
    if let Some(info) = peer.peer_info() {
        let caps = &info.capabilities;
        if caps
            .resources
            .as_ref()
            .is_some_and(|r| r.list_changed == Some(true))
        {
            filter = filter.resources_list_changed();
        }
        if caps
            .prompts
            .as_ref()
            .is_some_and(|p| p.list_changed == Some(true))
        {
            filter = filter.prompts_list_changed();
        }
    }
    let filter = filter.build();
    let listening = async {
        let Ok(mut subscription) = peer.listen(filter).await else {
            return;
        };
        // What changed between the first listing and the subscription would go unseen.
        shared.tools_changed.send_modify(|n| *n += 1);
        while let Ok(Some(notification)) = subscription.next().await {
            match notification {
                ServerNotification::ToolListChangedNotification(_) => {
                    shared.tools_changed.send_modify(|n| *n += 1);
                }
                other => shared.responses.forget_changed(&other),
            }
        }
    };
    tokio::select! {
        _ = listening => {}
        _ = closing.cancelled() => {}
    }
}
