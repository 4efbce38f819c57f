//! The engine's one timer: it sleeps until the earliest deadline, a nudge, or a change in
//! what a person is doing for the server (answering an elicitation, signing in), and
//! ends the requests when a local server exits, since its stdout may outlive it (held by a grandchild) and never tell.

use std::collections::HashSet;
use std::sync::{Arc, Weak};

use tokio::sync::{Notify, watch};

use tokio::time::Instant;

use super::timer::sleep_until;
use super::{Engine, State};
use crate::session::error::{Error, Kind};
use crate::session::handler::Asking;
use crate::transport::reaper::Exit;

pub async fn run(
    engine: Weak<Engine>,
    nudge: Arc<Notify>,
    mut eliciting: watch::Receiver<Asking>,
    (mut signing_in, server): (watch::Receiver<HashSet<String>>, String),
    mut exit: Option<watch::Receiver<Option<Exit>>>,
) {
    let mut exited = false;
    loop {
        let next = {
            let asking = eliciting.borrow_and_update().clone();
            let signing = signing_in.borrow_and_update().contains(&server);
            match engine
                .upgrade()
                .map(|engine| engine.expire(&asking, signing))
            {
                Some(Ok(next)) => next,
                _ => return,
            }
        };
        let exiting = async {
            match &mut exit {
                Some(exit) => {
                    let _ = exit.wait_for(Option::is_some).await;
                }
                None => std::future::pending().await,
            }
        };
        tokio::select! {
            _ = nudge.notified() => {}
            _ = sleep_until(next) => {}
            changed = eliciting.changed() => if changed.is_err() { return },
            Ok(()) = signing_in.changed() => {}
            _ = exiting, if !exited => {
                exited = true;
                if let Some(engine) = engine.upgrade() {
                    engine.ended();
                }
            }
        }
    }
}

impl Engine {
    /// Times out what is due; returns when to look again (`None`: when nudged), or
    /// `Err` once closed. While a person signs in to the server (a step-up in the middle
    /// of a call, say), every request's clock stands still.
    fn expire(&self, asking: &Asking, signing_in: bool) -> Result<Option<Instant>, ()> {
        let now = Instant::now();
        let mut expired = Vec::new();
        let next = {
            let mut table = self.table();
            if let State::Closed = table.state {
                return Err(());
            }
            let mut next: Option<Instant> = None;
            table.pending.retain(|id, pending| {
                if pending.asking.is_none() {
                    let paused = signing_in || asking.pauses(pending.wire_request.as_ref());
                    pending.clock.set_paused(paused);
                }
                match pending.clock.deadline() {
                    Some(deadline) if deadline <= now => {
                        let reason = pending.clock.overrun(&pending.phase);
                        expired.push((*id, reason, pending.caller.clone()));
                        false
                    }
                    Some(deadline) => {
                        next = Some(next.map_or(deadline, |n| n.min(deadline)));
                        true
                    }
                    None => true,
                }
            });
            table.sweep_at = next;
            next
        };
        for (id, reason, caller) in expired {
            self.wire.cancel(id, "request timeout");
            caller.fail(Error::new(Kind::TimedOut, reason).into());
        }
        Ok(next)
    }
}
