//! When a server's output ends: its requests fail the way it went, once its exit is known.

use std::time::Duration;

use super::{Engine, Pending, State};
use crate::session::error::Error;
use crate::transport::reaper::Exit;

impl Engine {
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
