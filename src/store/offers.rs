//! The sessions behind a view's services, for what servers offer besides tools
//! (resources, prompts, completions): asked of the live session, never cached, so a
//! listing is always the server's current one; and resource subscriptions that follow
//! a service from session to session.

use std::sync::Arc;

use tokio::task::JoinHandle;
use tokio_util::sync::CancellationToken;

use super::calls::not_connected;
use super::{Phase, Store};
use crate::session::Session;
use crate::session::subscribe::{Subscribed, UpdateTo};

impl Store {
    /// The session of the service a view names `name`, or why there is none (no such
    /// service; not connected, with its last error).
    pub fn session_of(&self, agent: Option<&str>, name: &str) -> Result<Arc<Session>, String> {
        let Some(service) = self.find(agent, name) else {
            return Err(format!("no MCP server \"{name}\" in this view"));
        };
        let session = service.session.borrow().clone();
        session.ok_or_else(|| not_connected(&service, name).output)
    }

    /// The view's connected services, by the view's names, in view order.
    pub fn sessions(&self, agent: Option<&str>) -> Vec<(String, Arc<Session>)> {
        let services = self.view(agent).into_iter();
        let connected = services.filter(|s| s.state.borrow().phase == Phase::Connected);
        connected
            .filter_map(|s| {
                let session = s.session.borrow().clone()?;
                Some((s.view_name(agent).to_owned(), session))
            })
            .collect()
    }
}

impl Store {
    /// Keeps a subscription `first` made on the current session of the service a view
    /// names `name`: on every later session of the service (a restart) it subscribes `to`
    /// to `uri` again, so the subscription outlives the session. Runs until `end` is
    /// cancelled, the service is removed or the store closes, and ends by unsubscribing.
    pub fn follow_resource(
        &self,
        agent: Option<&str>,
        name: &str,
        first: (Arc<Session>, Subscribed),
        uri: String,
        to: UpdateTo,
        end: CancellationToken,
    ) -> JoinHandle<()> {
        let service = self.find(agent, name);
        self.inner.runtime.spawn(async move {
            let mut current = Some(first);
            if let Some(service) = service {
                let mut sessions = service.session.subscribe();
                // A session that changed before the subscription began counts too.
                sessions.mark_changed();
                loop {
                    tokio::select! {
                        _ = end.cancelled() => break,
                        _ = service.stop.cancelled() => break,
                        changed = sessions.changed() => if changed.is_err() { break },
                    }
                    let next = sessions.borrow_and_update().clone();
                    let same = |(session, _): &(Arc<Session>, Subscribed)| {
                        next.as_ref().is_some_and(|next| Arc::ptr_eq(session, next))
                    };
                    if current.as_ref().is_some_and(same) {
                        continue;
                    }
                    if let Some((old, subscribed)) = current.take() {
                        old.unsubscribe_resource(subscribed).await;
                    }
                    // A new session that refuses is skipped: the next one may not.
                    if let Some(session) = next {
                        let subscribed = session.subscribe_resource(&uri, to.clone(), &end).await;
                        current = subscribed.ok().map(|subscribed| (session, subscribed));
                    }
                }
            }
            if let Some((session, subscribed)) = current {
                session.unsubscribe_resource(subscribed).await;
            }
        })
    }
}
