//! Unix: each server leads a process group of its own, which is what gets signalled, and
//! its pipes are non-blocking descriptors.
//!
//! What differs between Linux and the other Unix systems sits behind one boundary, as Unix
//! and Windows do one level up: `family` is `linux` or `other`, and each gives the same
//! few items:
//! - `spawn(&Command) -> io::Result<(Leader, Ends)>`: the leader of a new process group,
//!   and the host's ends of its pipes;
//! - `Leader` (`pid`, `reap`): reaped by `reap` alone, so that until then its pid (and
//!   group id) stays ours;
//! - `exit(pid)`: the leader's exit, left unreaped, or `None` when it cannot be watched
//!   (then SIGCHLD and polling tell of it);
//! - `needs_watchdog()`: whether the watchdog keeps the host-death promise.
//!
//! The rest is shared: the groups, the pipes, the reaper and its lease, peeking at an exit,
//! and the watchdog.

use std::ffi::{CStr, OsStr, OsString, c_void};
use std::io;
use std::os::unix::process::ExitStatusExt;
use std::process::ExitStatus;
use std::ptr::NonNull;
use std::sync::Arc;

use super::{Signal, Started};
use crate::transport::local::Command;

#[cfg(target_os = "linux")]
mod linux;
#[cfg(target_os = "linux")]
use linux as family;
#[cfg(not(target_os = "linux"))]
mod other;
#[cfg(not(target_os = "linux"))]
use other as family;

mod groups;
mod peek;
mod pipe;
mod reaper;
mod watchdog;

pub use family::Leader;
pub use groups::kill_all;
pub use pipe::{ErrPipe, InPipe, OutPipe, Readable, Writable};
pub use reaper::{Lease, watch_exit};

/// What a server started with `"inheritEnv": false` gets of the host's environment: the
/// TypeScript SDK's `getDefaultEnvironment` set (sudo's), plus the locale.
pub const SAFE_VARS: &[&str] = &[
    "HOME", "LOGNAME", "PATH", "SHELL", "TERM", "USER", "LANG", "LC_ALL",
];

/// Starts `command` as the leader of a new process group, with three pipes.
pub fn start(command: &Command) -> io::Result<Started> {
    let (leader, ends) = family::spawn(command)?;
    ends.set_nonblocking()?;
    let lease = Lease::new(leader.pid());
    let stderr = match ErrPipe::from_owned_fd(ends.stderr) {
        Ok(stderr) => stderr,
        Err(e) => {
            lease.signal(Signal::Kill);
            lease.release();
            return Err(e);
        }
    };
    Ok(Started {
        lease,
        leader,
        stdin: InPipe(ends.stdin),
        stdout: OutPipe(Arc::new(ends.stdout)),
        stderr,
    })
}

/// Environment variable names are compared as they are.
pub fn env_name_key(name: &OsStr) -> OsString {
    name.to_owned()
}

/// The signal that ended a process, if one did.
pub fn signal_of(status: &ExitStatus) -> Option<i32> {
    status.signal()
}

/// A function the host process exports (libuv's, in Node), found with `dlsym`.
pub fn host_symbol(name: &CStr) -> Option<NonNull<c_void>> {
    // SAFETY: dlsym with a NUL-terminated name; a null result is handled.
    NonNull::new(unsafe { libc::dlsym(libc::RTLD_DEFAULT, name.as_ptr()) })
}
