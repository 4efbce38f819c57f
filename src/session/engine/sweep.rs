//! The engine's one timer: it sleeps until the earliest deadline, a nudge, or a change in
//! what a person is doing for the server (answering an elicitation, signing in), and
//! ends the requests when a local server exits, since its stdout may outlive it (held by a grandchild) and never tell.

use std::collections::HashSet;
use std::sync::{Arc, Weak};

use tokio::sync::{Notify, watch};

use tokio::time::Instant;

use super::timer::sleep_until;
use super::{Engine, Pending, State};
use crate::session::error::{Error, Kind};
use crate::session::handler::Asking;
use crate::transport::local::Exit;

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
    /// Registers `pending` under `id`, the sweeper woken by its deadline or `wake`.
    pub(super) fn hold(&self, id: u64, pending: Pending, wake: Option<Instant>) {
        let mut table = self.table();
        let due = match (pending.clock.deadline(), wake) {
            (Some(deadline), Some(wake)) => Some(deadline.min(wake)),
            (deadline, wake) => deadline.or(wake),
        };
        if let Some(due) = due
            && table.sweep_at.is_none_or(|at| due < at)
        {
            table.sweep_at = Some(due);
            self.nudge.notify_one();
        }
        table.pending.insert(id, pending);
    }

    /// Times out what is due; returns when to look again (`None`: when nudged), or
    /// `Err` once closed. While a person signs in to the server (a step-up in the middle
    /// of a call, say), every request's clock stands still.
    fn expire(&self, asking: &Asking, signing_in: bool) -> Result<Option<Instant>, ()> {
        let now = Instant::now();
        let mut expired = Vec::new();
        let mut due = Vec::new();
        let next = {
            let mut table = self.table();
            if let State::Closed = table.state {
                return Err(());
            }
            let mut next: Option<Instant> = None;
            let polls = table.pending.extract_if(|_, pending| {
                let wake = pending.task.as_ref().and_then(|t| t.waiting_until());
                wake.is_some_and(|at| at <= now)
            });
            due.extend(polls.map(|(_, pending)| pending));
            table.pending.retain(|id, pending| {
                let wake = pending.task.as_ref().and_then(|t| t.waiting_until());
                if let Some(wake) = wake {
                    next = Some(next.map_or(wake, |n| n.min(wake)));
                }
                if pending.asking.is_none() {
                    let paused = signing_in || asking.pauses(pending.wire_request.as_ref());
                    pending.clock.set_paused(paused);
                }
                match pending.clock.deadline() {
                    Some(deadline) if deadline <= now => {
                        let reason = pending.clock.overrun(&pending.phase);
                        let task = pending.task.as_ref().and_then(|t| t.id.clone());
                        expired.push((*id, reason, pending.caller.clone(), task));
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
        for (id, reason, caller, task) in expired {
            match task {
                Some(task) => self.cancel_task(&task),
                None => self.wire.cancel(id, "request timeout"),
            }
            caller.fail(Error::new(Kind::TimedOut, reason).into());
        }
        for pending in due {
            self.poll(pending);
        }
        Ok(next)
    }
}
