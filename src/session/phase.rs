//! The clock of a session's own phases (initialize, the legacy handshake): each is
//! bounded by the server's timeout, the caller's cancellation and, for a local server,
//! the child's exit, so no phase can hang.

use std::collections::HashSet;
use std::future::Future;
use std::time::Duration;

use tokio::sync::watch;
use tokio_util::sync::CancellationToken;

use super::engine::timer::{Clock, sleep_until};
use super::error::{Error, Failure, Kind};
use crate::transport::stdio::ChildProcess;

/// While a person signs in to the server (its name in the set), its phase's clock
/// stands still.
pub type Pause = (watch::Receiver<HashSet<String>>, String);

/// Runs one phase, failing it when the timeout passes, the caller cancels, or the child
/// exits (at once, not when the timeout runs out).
pub async fn bounded<T>(
    child: Option<&ChildProcess>,
    phase: &str,
    (timeout, pause): (Duration, Option<Pause>),
    cancel: &CancellationToken,
    step: impl Future<Output = Result<T, Error>>,
) -> Result<T, Failure> {
    let exited = async {
        match child {
            Some(child) => child.exited().await,
            None => std::future::pending().await,
        }
    };
    tokio::select! {
        biased;
        _ = cancel.cancelled() => Err(Failure::Aborted),
        result = within(timeout, pause, step) => match result {
            Ok(Ok(value)) => Ok(value),
            Ok(Err(error)) => Err(Failure::Reason(match (error.kind(), child) {
                // A broken connection is how a dying child first shows; prefer its story.
                (Kind::Broken, Some(child)) => {
                    match child.exit_within(Duration::from_millis(500)).await {
                        Some(status) => Error::other(child.describe_exit(status, phase).await),
                        None => error,
                    }
                }
                _ => error,
            })),
            Err(_) => Err(Failure::Reason(Error::timed_out(phase, timeout))),
        },
        status = exited => {
            let child = child.expect("only a child can exit");
            Err(Failure::Reason(Error::other(child.describe_exit(status, phase).await)))
        }
    }
}

/// `step`, or `Err` once `timeout` has run, not counting the time `pause` held it.
async fn within<F: Future>(
    timeout: Duration,
    pause: Option<Pause>,
    step: F,
) -> Result<F::Output, ()> {
    let Some((mut signing_in, name)) = pause else {
        return tokio::time::timeout(timeout, step).await.map_err(|_| ());
    };
    let paused = |names: &HashSet<String>| names.contains(&name);
    let mut clock = Clock::new(timeout, None, paused(&signing_in.borrow_and_update()));
    tokio::pin!(step);
    loop {
        tokio::select! {
            output = &mut step => return Ok(output),
            _ = sleep_until(clock.deadline()) => return Err(()),
            Ok(()) = signing_in.changed() => clock.set_paused(paused(&signing_in.borrow_and_update())),
        }
    }
}
