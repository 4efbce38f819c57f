//! Resource subscriptions. In the 2025 era, `resources/subscribe` and the
//! `notifications/resources/updated` it brings, unasked, through the handler; in the
//! 2026-07-28 era, a `subscriptions/listen` request whose filter names the resource, its
//! updates on that request's stream. Each subscriber keeps only the latest update unread,
//! so a server flooding updates queues nothing: an update says "read it again".

use std::num::NonZeroUsize;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use rmcp::Peer;
use rmcp::model::{
    GetMeta, NotificationMetaObject, ResourceUpdatedNotificationParam, ServerNotification,
    SubscriptionFilter,
};
use rmcp::service::{RoleClient, Subscription, SubscriptionEnd};
use serde_json::Value;
use tokio::sync::watch;
use tokio_util::sync::CancellationToken;

use super::Session;
use super::cache::Responses;
use super::engine::request::Kind;
use super::error::{Error, Failure};
use super::phase::bounded;

/// Where one subscriber's updates go: each the notification's params as JSON text, the
/// latest replacing any unread one.
pub type UpdateTo = Arc<watch::Sender<Option<Arc<str>>>>;

/// The notifications a `subscriptions/listen` holds for us before it is given up as lagging.
const BUFFER: NonZeroUsize = NonZeroUsize::new(1024).expect("not zero");

/// The 2026-07-28 stream's own `_meta` key: the protocol's business, not the update's.
const SUBSCRIPTION_ID: &str = "io.modelcontextprotocol/subscriptionId";

static SUBSCRIBE: Kind<()> = Kind {
    method: "resources/subscribe",
    decode: |_| Some(()),
    given_up: "the subscription",
};

static UNSUBSCRIBE: Kind<()> = Kind {
    method: "resources/unsubscribe",
    decode: |_| Some(()),
    given_up: "the unsubscription",
};

/// One subscriber of one resource, until `Session::unsubscribe_resource`.
pub enum Subscribed {
    /// A route among the 2025-era subscribers (see `Shared::updates`).
    Routed { uri: String, route: u64 },
    /// A `subscriptions/listen` (2026-07-28), ended by cancelling this.
    Listening(CancellationToken),
}

/// The params of `notifications/resources/updated` as the host gets them: as sent, with
/// the `_meta` rmcp keeps beside them put back, but for the 2026-07-28 stream's own key.
fn update_text(
    params: &ResourceUpdatedNotificationParam,
    meta: &NotificationMetaObject,
) -> Option<Arc<str>> {
    let mut params = serde_json::to_value(params).ok()?;
    let object = params.as_object_mut()?;
    let Value::Object(mut all) = serde_json::to_value(meta).ok()? else {
        return None;
    };
    if let Some(Value::Object(own)) = object.remove("_meta") {
        all.extend(own);
    }
    all.remove(SUBSCRIPTION_ID);
    if !all.is_empty() {
        object.insert("_meta".to_owned(), Value::Object(all));
    }
    Some(params.to_string().into())
}

/// Passes `params` to every subscriber of its URI (2025 era).
pub fn route_update(
    updates: &std::sync::Mutex<Vec<(String, u64, UpdateTo)>>,
    params: &ResourceUpdatedNotificationParam,
    meta: &NotificationMetaObject,
) {
    let Some(text) = update_text(params, meta) else {
        return;
    };
    let routes = crate::lock::lock(updates);
    for (_, _, to) in routes.iter().filter(|(uri, ..)| *uri == params.uri) {
        to.send_replace(Some(text.clone()));
    }
}

impl Session {
    /// Subscribes `to` to the updates of `uri`. A server whose capabilities lack
    /// `resources.subscribe` is refused here, before anything is sent.
    pub async fn subscribe_resource(
        &self,
        uri: &str,
        to: UpdateTo,
        cancel: &CancellationToken,
    ) -> Result<Subscribed, Failure> {
        let info = self.peer.peer_info();
        let caps = info
            .as_ref()
            .and_then(|i| i.capabilities.resources.as_ref());
        if caps.and_then(|r| r.subscribe) != Some(true) {
            let refusal =
                "offers no resource subscriptions (its capabilities lack resources.subscribe)";
            return Err(Error::new(super::error::Kind::Unsupported, refusal).into());
        }
        if info.is_some_and(|info| !info.protocol_version.has_initialize()) {
            return self.listen_to(uri, to, cancel).await;
        }
        static ROUTES: AtomicU64 = AtomicU64::new(0);
        let route = ROUTES.fetch_add(1, Ordering::Relaxed);
        crate::lock::lock(&self.shared.updates).push((uri.to_owned(), route, to));
        let params = format!("\"uri\":{}", Value::from(uri));
        if let Err(failure) = self.request(&SUBSCRIBE, params, cancel).await {
            self.unroute(uri, route);
            return Err(failure);
        }
        let uri = uri.to_owned();
        Ok(Subscribed::Routed { uri, route })
    }

    /// Removes a 2025-era route; whether it was the last of its URI.
    fn unroute(&self, uri: &str, route: u64) -> bool {
        let mut routes = crate::lock::lock(&self.shared.updates);
        routes.retain(|(_, r, _)| *r != route);
        !routes.iter().any(|(u, ..)| u == uri)
    }

    /// Ends a subscription; the server hears of it unless the session is closing (then
    /// the session's end ends it) or another subscriber of the URI remains.
    pub async fn unsubscribe_resource(&self, subscribed: Subscribed) {
        match subscribed {
            Subscribed::Listening(end) => end.cancel(),
            Subscribed::Routed { uri, route } => {
                if self.unroute(&uri, route) && !self.closing.is_cancelled() {
                    let params = format!("\"uri\":{}", Value::from(uri.as_str()));
                    let _ = self.request(&UNSUBSCRIBE, params, &self.closing).await;
                }
            }
        }
    }

    /// A `subscriptions/listen` for `uri`, acknowledged within the server's timeout; its
    /// updates go to `to` until it is ended, the server ends it, or the session closes.
    async fn listen_to(
        &self,
        uri: &str,
        to: UpdateTo,
        cancel: &CancellationToken,
    ) -> Result<Subscribed, Failure> {
        let phase = (self.timeout, None);
        let child = self.child.as_deref();
        let listening = listen(&self.peer, uri);
        let listened = bounded(child, "subscriptions/listen", phase, cancel, listening).await;
        let subscription = listened.map_err(|f| f.redacted(self.redactor()))?;
        let (end, closing) = (CancellationToken::new(), self.closing.clone());
        let (ended, peer, uri) = (end.clone(), self.peer.clone(), uri.to_owned());
        let responses = self.shared.responses.clone();
        tokio::spawn(async move {
            // Dropping the subscription tells the server it is over.
            tokio::select! {
                _ = forward(peer, &responses, uri, subscription, to) => {}
                _ = closing.cancelled() => {}
                _ = ended.cancelled() => {}
            }
        });
        Ok(Subscribed::Listening(end))
    }
}

/// Opens a `subscriptions/listen` for `uri`, refused unless the server accepts the URI.
async fn listen(peer: &Peer<RoleClient>, uri: &str) -> Result<Subscription, Error> {
    let filter = SubscriptionFilter::builder()
        .resource_subscription(uri)
        .build();
    let listened = peer.listen_with_capacity(filter, BUFFER).await;
    let mut subscription =
        listened.map_err(|e| Error::other(format!("subscriptions/listen failed: {e}")))?;
    let acknowledged = &subscription.acknowledged().resource_subscriptions;
    if !acknowledged
        .as_ref()
        .is_some_and(|uris| uris.iter().any(|u| u == uri))
    {
        let _ = subscription.cancel().await;
        return Err(Error::answered(format!(
            "did not accept a subscription to {uri}"
        )));
    }
    Ok(subscription)
}

/// Passes the updates of `subscription` to `to` until it ends, forgetting a kept read of
/// the resource first. rmcp ends one whose buffer a flood filled: then `to` hears that
/// the resource changed (what it missed said no more) and the subscription is opened again.
async fn forward(
    peer: Peer<RoleClient>,
    responses: &Responses,
    uri: String,
    mut subscription: Subscription,
    to: UpdateTo,
) {
    loop {
        while let Ok(Some(notification)) = subscription.next().await {
            let meta = notification.get_meta();
            if let ServerNotification::ResourceUpdatedNotification(updated) = &notification {
                responses.forget_changed(&notification);
                if let Some(text) = update_text(&updated.params, meta) {
                    to.send_replace(Some(text));
                }
            }
        }
        if !matches!(subscription.end(), Some(SubscriptionEnd::Lagged { .. })) {
            return;
        }
        responses.forget("resources/read", &uri);
        let changed = ResourceUpdatedNotificationParam::new(uri.as_str());
        to.send_replace(update_text(&changed, &NotificationMetaObject::default()));
        match listen(&peer, &uri).await {
            Ok(again) => subscription = again,
            Err(_) => return,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn meta(json: Value) -> NotificationMetaObject {
        serde_json::from_value(json).expect("a meta object")
    }

    #[test]
    fn an_update_reads_as_sent_without_the_streams_own_key() {
        let params = ResourceUpdatedNotificationParam::new("note://a");
        let none = update_text(&params, &NotificationMetaObject::default());
        assert_eq!(none.as_deref(), Some(r#"{"uri":"note://a"}"#));
        let stream = meta(serde_json::json!({ SUBSCRIPTION_ID: "s1", "seq": 3 }));
        let text = update_text(&params, &stream).expect("JSON");
        assert_eq!(&*text, r#"{"uri":"note://a","_meta":{"seq":3}}"#);
        let only_stream = meta(serde_json::json!({ SUBSCRIPTION_ID: "s1" }));
        let text = update_text(&params, &only_stream).expect("JSON");
        assert_eq!(&*text, r#"{"uri":"note://a"}"#);
    }
}
