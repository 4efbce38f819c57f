//! Resource subscriptions through the gateway: a downstream's subscription (a 2025
//! `resources/subscribe`, or a URI of a 2026 `subscriptions/listen`) follows the
//! resource's server from session to session (the store's `follow_resource`), and each
//! update goes back under the URI the downstream used.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use rmcp::ErrorData;
use tokio::sync::{mpsc, watch};
use tokio_util::sync::{CancellationToken, DropGuard};

use super::offers::{failed, resource_route, session_of};
use super::shared::Shared;
use crate::lock::lock;

/// The most subscriptions one downstream session or listen request holds.
pub(super) const MAX: usize = 256;

/// A 2025 session's subscriptions, by the URI it used; each ends when dropped.
#[derive(Default)]
pub(super) struct Subscriptions(Mutex<HashMap<String, DropGuard>>);

impl Subscriptions {
    pub(super) fn full(&self) -> bool {
        lock(&self.0).len() >= MAX
    }

    pub(super) fn keep(&self, uri: String, end: CancellationToken) {
        lock(&self.0).insert(uri, end.drop_guard());
    }

    pub(super) fn end(&self, uri: &str) {
        lock(&self.0).remove(uri);
    }
}

/// Follows `uri` until `end`, sending `uri` to `updated` at each of its updates.
pub(super) async fn follow(
    shared: &Shared,
    uri: &str,
    updated: mpsc::Sender<String>,
    end: CancellationToken,
) -> Result<(), ErrorData> {
    let (server, upstream) = resource_route(shared, uri)?;
    let session = session_of(shared, &server)?;
    let (to, mut updates) = watch::channel(None);
    let to = Arc::new(to);
    let first = session
        .subscribe_resource(&upstream, to.clone(), &end)
        .await
        .map_err(|failure| failed(&server, failure))?;
    let agent = shared.agent.as_deref();
    let pair = (session, first);
    shared
        .store
        .follow_resource(agent, &server, pair, upstream, to, end.clone());
    let uri = uri.to_owned();
    tokio::spawn(async move {
        loop {
            tokio::select! {
                changed = updates.changed() => if changed.is_err() { return },
                _ = end.cancelled() => return,
            }
            // A full queue drops this one: the downstream reads the resource anew anyway.
            let _ = updated.try_send(uri.clone());
        }
    });
    Ok(())
}
