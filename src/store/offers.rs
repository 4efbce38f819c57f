//! The sessions behind a view's services, for what servers offer besides tools
//! (resources, prompts, completions): asked of the live session, never cached, so a
//! listing is always the server's current one; and resource subscriptions that follow
//! a service from session to session.

use std::sync::Arc;

use tokio::task::JoinHandle;
use tokio_util::sync::CancellationToken;

use super::calls::not_connected;
use super::service::Service;
use super::{Phase, Store};
use crate::code::{Code, Coded};
use crate::session::Session;
use crate::session::subscribe::{Subscribed, UpdateTo};

impl Store {
    /// The session of the service a view names `name`, or why there is none (no such
    /// service; not connected, with its last error).
    pub fn session_of(&self, agent: Option<&str>, name: &str) -> Result<Arc<Session>, Coded> {
        let Some(service) = self.inner.find(agent, name) else {
            let why = format!("no MCP server \"{name}\" in this view");
            return Err(Coded::new(Code::UnknownServer, why));
        };
        let session = service.session.borrow().clone();
        session.ok_or_else(|| {
            let code = match service.state.borrow().phase {
                Phase::Failed | Phase::NeedsAuth | Phase::Disabled => {
                    service.state.borrow().phase.code()
                }
                // Not connected now, maybe later: no server to ask at this moment.
                _ => Code::UnknownServer,
            };
            Coded::new(code, not_connected(&service, name, code).output)
        })
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
    /// names `name`: on every later session of the service the view names so (a restart,
    /// a replacement by `update_server`, a server removed and added again) it subscribes
    /// `to` to `uri` again, so the subscription outlives the session. Runs until `end` is
    /// cancelled or the store closes, and ends by unsubscribing.
    pub fn follow_resource(
        &self,
        agent: Option<&str>,
        name: &str,
        first: (Arc<Session>, Subscribed),
        uri: String,
        to: UpdateTo,
        end: CancellationToken,
    ) -> JoinHandle<()> {
        let inner = self.inner.clone();
        let (agent, name) = (agent.map(str::to_owned), name.to_owned());
        self.inner.runtime.spawn(async move {
            let mut current = Some(first);
            let mut members = inner.version.subscribe();
            let ended = || end.is_cancelled() || inner.closed.is_cancelled();
            while !ended() {
                // Waited for before a stopped service is looked up again: until the view
                // names a live one, it is a change of the store's membership away.
                let found = inner.find(agent.as_deref(), &name);
                match found.filter(|service| !service.stop.is_cancelled()) {
                    Some(service) => {
                        let follow = Follow {
                            uri: &uri,
                            to: &to,
                            end: &end,
                        };
                        follow.sessions_of(&service, &mut current).await;
                    }
                    None => tokio::select! {
                        _ = end.cancelled() => {}
                        _ = inner.closed.cancelled() => {}
                        changed = members.changed() => if changed.is_err() { break },
                    },
                }
            }
            if let Some((session, subscribed)) = current {
                session.unsubscribe_resource(subscribed).await;
            }
        })
    }
}

/// One resource subscription carried from session to session.
struct Follow<'a> {
    uri: &'a str,
    to: &'a UpdateTo,
    end: &'a CancellationToken,
}

impl Follow<'_> {
    /// Subscribes on each session of `service` as it comes, until `end` or the service
    /// stops; `current` is the subscription in force.
    async fn sessions_of(
        &self,
        service: &Service,
        current: &mut Option<(Arc<Session>, Subscribed)>,
    ) {
        let mut sessions = service.session.subscribe();
        // A session that changed before this service was followed counts too.
        sessions.mark_changed();
        loop {
            tokio::select! {
                _ = self.end.cancelled() => return,
                _ = service.stop.cancelled() => return,
                changed = sessions.changed() => if changed.is_err() { return },
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
                let subscribed = session
                    .subscribe_resource(self.uri, self.to.clone(), self.end)
                    .await;
                *current = subscribed.ok().map(|subscribed| (session, subscribed));
            }
        }
    }
}
