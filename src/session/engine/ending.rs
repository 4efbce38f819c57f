//! How requests end other than by their answer: the caller aborts one, the session
//! closes, or the server's output ends (they fail the way it went, once its exit is known).

use std::time::Duration;

use super::{Engine, Pending, State};
use crate::session::error::{Error, Failure, Kind};
use crate::session::wording::closed_during;
use crate::transport::local::Exit;

impl Engine {
    /// The caller gave up request `id` (its first id): the server is told, the request
    /// ends as aborted.
    pub fn abort(&self, id: u64) {
        let found = {
            let mut table = self.table();
            let key = if table.pending.contains_key(&id) {
                Some(id)
            } else {
                table
                    .pending
                    .iter()
                    .find_map(|(key, pending)| (pending.origin == id).then_some(*key))
            };
            key.and_then(|key| table.pending.remove(&key).map(|pending| (key, pending)))
        };
        let Some((key, pending)) = found else {
            return;
        };
        if let Some(asking) = &pending.asking {
            // Nothing is in flight at the server while a person is asked.
            asking.cancel();
        }
        // A task is stopped as a task (the extension forbids `notifications/cancelled`).
        match pending.task.as_ref().and_then(|task| task.id.as_deref()) {
            Some(task) => self.cancel_task(task),
            None if pending.asking.is_none() => self.wire.cancel(key, "aborted by the client"),
            None => {}
        }
        pending.caller.fail(Failure::Aborted);
    }

    /// Ends every request in flight; later ones fail at once. Idempotent.
    pub fn close(&self) {
        let pending = {
            let mut table = self.table();
            table.state = State::Closed;
            std::mem::take(&mut table.pending)
        };
        self.nudge.notify_one();
        for pending in pending.into_values() {
            if let Some(asking) = &pending.asking {
                asking.cancel();
            }
            let closed = Error::new(Kind::Closed, closed_during(&pending.phase));
            pending.caller.fail(closed.into());
        }
    }

    /// The server's output ended: the requests fail the way it went, once its exit is
    /// known.
    pub(super) fn ended(&self) {
        {
            let mut table = self.table();
            let State::Open = table.state else {
                return;
            };
            table.state = State::Ending;
        }
        let Some(me) = self.me.upgrade() else {
            return;
        };
        self.runtime.spawn(async move {
            let status = match &me.child {
                Some(child) => child.exit_within(Duration::from_millis(500)).await,
                None => None,
            };
            let pending = {
                let mut table = me.table();
                if let State::Closed = table.state {
                    return;
                }
                table.state = State::Gone(status);
                std::mem::take(&mut table.pending)
            };
            let pending = pending
                .into_values()
                .inspect(|pending| {
                    if let Some(asking) = &pending.asking {
                        asking.cancel();
                    }
                })
                .collect();
            me.fail_gone(status, pending);
        });
    }

    /// Fails `pending` the way the server went: its exit status and stderr when it exited.
    pub(super) fn fail_gone(&self, status: Option<Exit>, pending: Vec<Pending>) {
        let Some(me) = self.me.upgrade() else {
            return;
        };
        self.runtime.spawn(async move {
            for pending in pending {
                let phase = &pending.phase;
                let reason = match (status, &me.child) {
                    (Some(status), Some(child)) => child.describe_exit(status, phase).await,
                    _ => format!("closed the connection during {phase}"),
                };
                pending.caller.fail(Error::other(reason).into());
            }
        });
    }
}
