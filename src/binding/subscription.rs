//! Resource subscriptions as the JS layer holds them: each update's params (JSON text)
//! go to a JS callback, one at a time; while JS has not run the last, later updates
//! replace each other, so a flooding server grows no queue. A subscription keeps the
//! host's event loop alive until it ends (unsubscribed, or its source closed), so a host
//! awaiting an update is not ended for want of anything else to do.

use std::sync::{Arc, Mutex};

use napi::bindgen_prelude::*;
use napi_derive::napi;
use tokio::sync::watch;
use tokio::task::JoinHandle;
use tokio_util::sync::CancellationToken;

use super::McpSourceHandle;
use super::bounded::{Bounded, Listener};
use super::failure::{Outcome, named, settle};
use super::store::NativeStore;
use crate::lock::lock;
use crate::session::subscribe::UpdateTo;

/// One subscription; `unsubscribe()` ends it (again: nothing happens).
#[napi]
pub struct ResourceSubscription {
    end: CancellationToken,
    /// Delivers the updates, then unsubscribes.
    done: Mutex<Option<JoinHandle<()>>>,
}

#[napi]
impl ResourceSubscription {
    /// Ends the subscription; resolves once the server has been told.
    #[napi(catch_unwind)]
    pub fn unsubscribe<'env>(&self, env: &'env Env) -> Result<PromiseRaw<'env, ()>> {
        self.end.cancel();
        let done = lock(&self.done).take();
        env.spawn_future(async move {
            if let Some(done) = done {
                let _ = done.await;
            }
            Ok(())
        })
    }
}

/// A fresh subscriber's channel: its sender for the session, its receiver for `deliver`.
fn channel() -> (UpdateTo, watch::Receiver<Option<Arc<str>>>) {
    let (to, updates) = watch::channel(None);
    (Arc::new(to), updates)
}

/// Passes each latest update to `on_update` until `end` is cancelled or every sender is
/// gone (the session or the store closed), then runs `finish`.
async fn deliver(
    mut updates: watch::Receiver<Option<Arc<str>>>,
    on_update: Listener<String>,
    end: CancellationToken,
    finish: impl Future<Output = ()>,
) {
    let on_update = Bounded::new(on_update, 1);
    loop {
        tokio::select! {
            biased;
            _ = end.cancelled() => break,
            changed = updates.changed() => if changed.is_err() { break },
        }
        let update = updates.borrow_and_update().clone();
        if let Some(update) = update {
            tokio::select! {
                biased;
                _ = end.cancelled() => break,
                _ = on_update.send(update.to_string(), 1) => {}
            }
        }
    }
    finish.await;
}

#[napi]
impl McpSourceHandle {
    /// Subscribes `on_update` (given each update's params as JSON text) to `uri` of
    /// `server`; resolves the subscription, or rejects naming the server.
    #[napi(catch_unwind)]
    pub fn subscribe_resource<'env>(
        &self,
        env: &'env Env,
        server: String,
        uri: String,
        on_update: Listener<String>,
    ) -> Result<PromiseRaw<'env, Outcome<ResourceSubscription>>> {
        let session = self.session(&server);
        settle(env, async move {
            let session = session?;
            let (to, updates) = channel();
            let cancel = CancellationToken::new();
            let subscribed = session.subscribe_resource(&uri, to, &cancel).await;
            let subscribed = subscribed.map_err(|failure| named(&session, failure))?;
            let end = CancellationToken::new();
            let finish = async move { session.unsubscribe_resource(subscribed).await };
            let done = tokio::spawn(deliver(updates, on_update, end.clone(), finish));
            Ok(ResourceSubscription {
                end,
                done: Mutex::new(Some(done)),
            })
        })
    }
}

#[napi]
impl NativeStore {
    /// As `McpSourceHandle.subscribeResource`, of a service as the view names it; the
    /// subscription is made again on each later session of the service.
    #[napi(catch_unwind)]
    pub fn subscribe_resource<'env>(
        &self,
        env: &'env Env,
        agent: Option<String>,
        server: String,
        uri: String,
        on_update: Listener<String>,
    ) -> Result<PromiseRaw<'env, Outcome<ResourceSubscription>>> {
        let session = self.store.session_of(agent.as_deref(), &server);
        let store = self.store.clone();
        settle(env, async move {
            let session = session?;
            let (to, updates) = channel();
            let cancel = CancellationToken::new();
            let subscribed = session.subscribe_resource(&uri, to.clone(), &cancel).await;
            let subscribed = subscribed.map_err(|failure| named(&session, failure))?;
            let end = CancellationToken::new();
            let first = (session, subscribed);
            let view = agent.as_deref();
            let following = store.follow_resource(view, &server, first, uri, to, end.clone());
            let finish = async move {
                let _ = following.await;
            };
            let done = tokio::spawn(deliver(updates, on_update, end.clone(), finish));
            Ok(ResourceSubscription {
                end,
                done: Mutex::new(Some(done)),
            })
        })
    }
}
