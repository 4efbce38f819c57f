//! One server's life in a store: connect, keep the tool list current, and reconnect with
//! exponential backoff when the server goes away, until it is removed or too many
//! attempts in a row have failed.

use std::sync::Arc;
use std::time::{Duration, Instant, SystemTime};

use crate::config::ServerSpec;
use crate::inventory::connect_and_list;
use crate::session::error::Kind;
use crate::session::{Failure, Session};
use crate::tool::listed::ListedTool;

use super::service::{Inner, Service, normalized};
use super::{Phase, news};

pub(super) async fn run(inner: Arc<Inner>, service: Arc<Service>, spec: ServerSpec) {
    // A lazy server starts when a call or a listing wants it.
    let lazy = service.state.borrow().phase == Phase::Lazy;
    let begin = async {
        inner.started.cancelled().await;
        if lazy {
            service.wanted.cancelled().await;
        }
    };
    tokio::select! {
        biased;
        _ = service.stop.cancelled() => return,
        _ = begin => {}
    }
    let options = &inner.options;
    let mut connected_once = false;
    let mut failures = 0;
    // Whether the last attempt failed for want of a sign-in nobody can give.
    let mut needs_sign_in;
    loop {
        let connected = connect_and_list(&service.local, &spec, &inner.hooks, &service.stop).await;
        match connected.map_err(|(failure, _)| failure) {
            Err(Failure::Aborted) => return,
            // A server that never came up is as failed as in loadMcp: retrying a bad
            // command or a wrong URL only hides the mistake.
            Err(Failure::Reason(reason)) if !connected_once => {
                let needs_sign_in = reason.kind() == Kind::NeedsSignIn;
                return fail(&inner, &service, reason.into_text(), needs_sign_in);
            }
            Err(Failure::Reason(reason)) => {
                needs_sign_in = reason.kind() == Kind::NeedsSignIn;
                inner.change(&service, |s| s.last_error = Some(reason.into_text()))
            }
            Ok((session, tools)) => {
                connected_once = true;
                needs_sign_in = false;
                let session = Arc::new(session);
                let since = Instant::now();
                service.session.send_replace(Some(session.clone()));
                let tools = normalized(tools);
                keep(&inner, &service, &session, &tools);
                let (tools, app_tools) = service.shown(&tools);
                inner.change(&service, |s| {
                    s.phase = Phase::Connected;
                    s.tools = tools;
                    s.app_tools = app_tools;
                    s.cached = false;
                    s.connected_at = Some(SystemTime::now());
                });
                let ended = watch(&inner, &service, &session).await;
                service.session.send_replace(None);
                let Some(reason) = ended else {
                    session.close().await;
                    return;
                };
                session.kill().await;
                inner.change(&service, |s| s.last_error = Some(reason));
                // Only a connection that held for a while earns a fresh set of attempts;
                // otherwise a server that crashes on every start would restart forever.
                if since.elapsed() > options.backoff_max {
                    failures = 0;
                }
            }
        }
        failures += 1;
        if failures > options.max_restarts {
            let reason = service
                .state
                .borrow()
                .last_error
                .clone()
                .unwrap_or_default();
            return fail(
                &inner,
                &service,
                format!("gave up after {} restarts: {reason}", options.max_restarts),
                needs_sign_in,
            );
        }
        inner.change(&service, |s| {
            s.phase = Phase::Reconnecting;
            s.restarts += 1;
        });
        tokio::select! {
            _ = tokio::time::sleep(backoff(&options.backoff, options.backoff_max, failures)) => {}
            _ = service.stop.cancelled() => return,
        }
    }
}

fn fail(inner: &Inner, service: &Service, reason: String, needs_sign_in: bool) {
    let phase = match needs_sign_in {
        true => Phase::NeedsAuth,
        false => Phase::Failed,
    };
    inner.change(service, |s| {
        s.phase = phase;
        s.last_error = Some(reason);
        s.tools = Arc::default();
        s.app_tools = Arc::default();
        s.cached = false;
    });
}

/// Writes a live listing to the catalog, off the runtime's threads; one that differs
/// from the listing kept before goes to the fleet's too.
fn keep(inner: &Inner, service: &Service, session: &Session, tools: &Arc<Vec<ListedTool>>) {
    let Some(slot) = service.slot.clone() else {
        return;
    };
    let (tools, hints) = (tools.clone(), session.cache_hints());
    let written = tokio::task::spawn_blocking(move || slot.write(&tools, hints));
    let shared = inner
        .options
        .shared
        .clone()
        .filter(|_| inner.options.share_catalog);
    tokio::spawn(async move {
        if let (Ok(Some(document)), Some(shared)) = (written.await, shared) {
            news::share_listing(&shared, document).await;
        }
    });
}

/// Takes a new live listing: kept, then shown.
fn relisted(inner: &Inner, service: &Service, session: &Session, tools: Vec<ListedTool>) {
    let tools = normalized(tools);
    keep(inner, service, session, &tools);
    let (tools, app_tools) = service.shown(&tools);
    inner.change(service, |s| {
        s.tools = tools;
        s.app_tools = app_tools;
    });
}

/// Follows a connected session until it ends (`Some(why)`) or the service is stopped
/// (`None`), refreshing the tools whenever the server says they changed.
async fn watch(inner: &Inner, service: &Service, session: &Session) -> Option<String> {
    let mut changed = session.tool_changes();
    let mut reinitialized = session.reinitialized();
    loop {
        let stale = async {
            match session.tools_ttl() {
                Some(ttl) => tokio::time::sleep(ttl).await,
                None => std::future::pending().await,
            }
        };
        tokio::select! {
            _ = service.stop.cancelled() => return None,
            reason = session.ended() => return Some(reason),
            // rmcp already re-established the session; count it as the restart it is.
            Ok(()) = reinitialized.changed() => {
                inner.change(service, |s| {
                    s.restarts += 1;
                    s.last_error = Some("the HTTP session expired; re-established".into());
                    s.connected_at = Some(SystemTime::now());
                });
            }
            // The listing's `ttlMs` ran out, or the server said the tools changed.
            _ = stale => match session.list_tools(&service.stop).await {
                Ok(tools) => relisted(inner, service, session, tools),
                Err(Failure::Aborted) => return None,
                Err(Failure::Reason(reason)) => return Some(reason.into_text()),
            },
            // The server said the tools changed, or another instance of the fleet saw them
            // change.
            _ = relisted_elsewhere(&mut changed, service) => match session.list_tools(&service.stop).await {
                Ok(tools) => relisted(inner, service, session, tools),
                Err(Failure::Aborted) => return None,
                Err(Failure::Reason(reason)) => return Some(reason.into_text()),
            },
        }
    }
}

/// Resolves when the session's server says its tools changed, or the fleet does.
async fn relisted_elsewhere(changed: &mut tokio::sync::watch::Receiver<u64>, service: &Service) {
    tokio::select! {
        Ok(()) = changed.changed() => {}
        _ = service.relist.notified() => {}
    }
}

/// `base`, doubled per failure in a row, capped at `max`.
fn backoff(base: &Duration, max: Duration, failures: u32) -> Duration {
    base.saturating_mul(1 << failures.saturating_sub(1).min(16))
        .min(max)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn backoff_doubles_up_to_the_cap() {
        let base = Duration::from_millis(250);
        let max = Duration::from_secs(2);
        let delays: Vec<_> = (1..=6)
            .map(|n| backoff(&base, max, n).as_millis())
            .collect();
        assert_eq!(delays, [250, 500, 1000, 2000, 2000, 2000]);
    }
}
