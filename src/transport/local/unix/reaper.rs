//! Learning that a server's leader exited without reaping it. A process group id is the
//! leader's pid, and the kernel reuses a pid only once its process is reaped and no group
//! bears its number: so while our leader is unreaped (a zombie once it exits), `killpg`
//! on its id can only reach our own server's tree. The leader is reaped when its owner
//! has sent its last signal ([`Lease::release`]), never before.

use tokio::sync::watch;
use tokio_util::sync::CancellationToken;

use super::family::{self, Leader};
use super::groups;
use super::peek::peek;
use crate::transport::local::{Exit, Signal};

/// The right to signal the group of `pid`, held until the leader may be reaped.
pub struct Lease {
    pid: u32,
    released: CancellationToken,
}

impl Lease {
    pub fn new(pid: u32) -> Lease {
        groups::register(pid);
        Lease {
            pid,
            released: CancellationToken::new(),
        }
    }

    /// Signals the group, unless it may no longer be ours.
    pub fn signal(&self, signal: Signal) {
        if !self.released.is_cancelled() {
            groups::signal(self.pid, signal);
        }
    }

    /// No more signals: the leader may be reaped. Idempotent.
    pub fn release(&self) {
        // Unlisted before the reaper may free the id, so no watchdog ever kills a stranger.
        groups::unregister(self.pid);
        self.released.cancel();
    }
}

/// Publishes the leader's exit on `exit` as soon as it happens, and reaps it once `lease`
/// is released.
pub async fn watch_exit(
    leader: Leader,
    lease: std::sync::Arc<Lease>,
    exit: watch::Sender<Option<Exit>>,
) {
    let status = exited_unreaped(lease.pid).await;
    let _ = exit.send(Some(status));
    if status.0.is_none() {
        // Reaped behind our back: its id may already be someone else's.
        lease.release();
        return;
    }
    lease.released.cancelled().await;
    // The leader is a zombie or was just killed: this returns at once or soon.
    leader.reap().await;
}

/// Waits for the leader to exit, leaving it unreaped.
async fn exited_unreaped(pid: u32) -> Exit {
    if let Some(exit) = family::exit(pid).await {
        return exit;
    }
    // SIGCHLD alone is not enough: a host library (libuv, once Node spawns a child) may
    // install its own handler over the runtime's, so the state is also looked at now and
    // then.
    use tokio::signal::unix::{SignalKind, signal};
    let mut children = signal(SignalKind::child()).ok();
    loop {
        if let Some(exit) = peek(pid) {
            return exit;
        }
        let sigchld = async {
            match &mut children {
                Some(children) => children.recv().await,
                None => std::future::pending().await,
            }
        };
        tokio::select! {
            _ = sigchld => {}
            _ = tokio::time::sleep(std::time::Duration::from_millis(100)) => {}
        }
    }
}
