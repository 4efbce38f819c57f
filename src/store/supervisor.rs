//! One server's life in a store: connect, keep the tool list current, and reconnect with
//! exponential backoff when the server goes away, until it is removed or too many
//! attempts in a row have failed.

use std::sync::Arc;
use std::time::{Duration, SystemTime};

use crate::config::ServerSpec;
use crate::inventory::connect_and_list;
use crate::session::{Failure, Session};

use super::{Inner, Phase, Service};

pub(super) async fn run(inner: Arc<Inner>, service: Arc<Service>, spec: ServerSpec) {
    let mut failures = 0;
    loop {
        match connect_and_list(&service.local, &spec, &inner.hooks, &service.stop).await {
            Err(Failure::Aborted) => return,
            Err(Failure::Reason(reason)) => service.update(|s| s.last_error = Some(reason)),
            Ok((session, tools)) => {
                failures = 0;
                let session = Arc::new(session);
                service.update(|s| {
                    s.phase = Phase::Connected;
                    s.tools = Arc::new(tools);
                    s.connected_at = Some(SystemTime::now());
                });
                service.session.send_replace(Some(session.clone()));
                inner.bump();
                let ended = watch(&inner, &service, &session).await;
                service.session.send_replace(None);
                match ended {
                    None => {
                        session.close().await;
                        return;
                    }
                    Some(reason) => {
                        session.kill().await;
                        service.update(|s| s.last_error = Some(reason));
                    }
                }
            }
        }
        failures += 1;
        if failures > inner.options.max_restarts {
            service.update(|s| {
                s.phase = Phase::Failed;
                s.tools = Arc::default();
            });
            inner.bump();
            return;
        }
        service.update(|s| {
            s.phase = Phase::Reconnecting;
            s.restarts += 1;
        });
        inner.bump();
        let delay = backoff(&inner.options.backoff, inner.options.backoff_max, failures);
        tokio::select! {
            _ = tokio::time::sleep(delay) => {}
            _ = service.stop.cancelled() => return,
        }
    }
}

/// Follows a connected session until it ends (`Some(why)`) or the service is stopped
/// (`None`), refreshing the tools whenever the server says they changed.
async fn watch(inner: &Inner, service: &Service, session: &Session) -> Option<String> {
    let mut changed = session.tools_changed();
    loop {
        tokio::select! {
            _ = service.stop.cancelled() => return None,
            reason = session.ended() => return Some(reason),
            Ok(()) = changed.changed() => match session.list_tools(&service.stop).await {
                Ok(tools) => {
                    service.update(|s| s.tools = Arc::new(tools));
                    inner.bump();
                }
                Err(Failure::Aborted) => return None,
                Err(Failure::Reason(reason)) => return Some(reason),
            },
        }
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
