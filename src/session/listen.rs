//! Staying current with a 2026-07-28 server: a `subscriptions/listen` request whose stream
//! carries `notifications/tools/list_changed`, which the 2025 era sent unasked.

use std::sync::Arc;

use rmcp::Peer;
use rmcp::model::{ServerNotification, SubscriptionFilter};
use rmcp::service::RoleClient;
use tokio_util::sync::CancellationToken;

use super::handler::Shared;

/// Bumps `shared.tools_changed` for each change the server announces, until the session
/// closes or the server ends the subscription.
pub async fn tool_changes(peer: Peer<RoleClient>, shared: Arc<Shared>, closing: CancellationToken) {
    let filter = SubscriptionFilter::builder().tools_list_changed().build();
    let listening = async {
        let Ok(mut subscription) = peer.listen(filter).await else {
            return;
        };
        // What changed between the first listing and the subscription would go unseen.
        shared.tools_changed.send_modify(|n| *n += 1);
        while let Ok(Some(notification)) = subscription.next().await {
            if let ServerNotification::ToolListChangedNotification(_) = notification {
                shared.tools_changed.send_modify(|n| *n += 1);
            }
        }
    };
    tokio::select! {
        _ = listening => {}
        _ = closing.cancelled() => {}
    }
}
