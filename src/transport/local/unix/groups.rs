//! Process groups of the servers we spawned, so that the whole tree of a server can be
//! signalled, and so that every live group can be killed when the host process exits.
//!
//! [`register`] (at spawn) and [`unregister`] (just before the leader is reaped, after
//! which the id may name another group) bracket the life of every group: what else must
//! know the live groups (a watchdog that outlives the host) hooks in there.

use std::collections::HashSet;
use std::sync::{Mutex, MutexGuard};

use super::watchdog;
use crate::lock::lock;
use crate::transport::local::Signal;

static LIVE: Mutex<Option<HashSet<u32>>> = Mutex::new(None);

fn live() -> MutexGuard<'static, Option<HashSet<u32>>> {
    lock(&LIVE)
}

pub fn register(pgid: u32) {
    let mut live = live();
    let live = live.get_or_insert_with(HashSet::new);
    live.insert(pgid);
    watchdog::started(pgid, live);
}

pub fn unregister(pgid: u32) {
    let mut live = live();
    if let Some(set) = live.as_mut() {
        set.remove(&pgid);
    }
    watchdog::ended(pgid);
}

/// Signals every process in the group led by `pgid`. A group that is already gone is fine.
pub fn signal(pgid: u32, signal: Signal) {
    let sig = match signal {
        Signal::Terminate => libc::SIGTERM,
        Signal::Kill => libc::SIGKILL,
    };
    if let Ok(pgid) = libc::pid_t::try_from(pgid) {
        // SAFETY: killpg has no memory-safety preconditions.
        unsafe { libc::killpg(pgid, sig) };
    }
}

/// Kills every server process tree still alive. For the host's exit path: synchronous.
pub fn kill_all() {
    let groups: Vec<u32> = live()
        .as_ref()
        .map(|s| s.iter().copied().collect())
        .unwrap_or_default();
    for pgid in groups {
        signal(pgid, Signal::Kill);
    }
}
