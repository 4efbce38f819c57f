//! Unix: each server leads a process group of its own, which is what gets signalled, and
//! its pipes are non-blocking descriptors. Linux spawns without `fork` and sets the
//! parent-death signal (`linux`); other Unix use tokio's `Command`, and a watchdog process
//! ends the servers of a host that dies (`watchdog`), with a kqueue reaper on macOS.

use std::ffi::{CStr, OsStr, OsString, c_void};
use std::io;
use std::os::unix::process::ExitStatusExt;
use std::process::ExitStatus;
use std::ptr::NonNull;
use std::sync::Arc;

use super::{Signal, Started};
use crate::transport::local::Command;

mod groups;
#[cfg(target_os = "macos")]
mod kqueue;
mod leader;
#[cfg(target_os = "linux")]
mod linux;
mod peek;
mod pipe;
mod reaper;
mod spawn;
mod watchdog;

pub use groups::kill_all;
pub use leader::Leader;
pub use pipe::{ErrPipe, InPipe, OutPipe, Readable, Writable};
pub use reaper::{Lease, watch_exit};

/// What a server started with `"inheritEnv": false` gets of the host's environment: the
/// TypeScript SDK's `getDefaultEnvironment` set (sudo's), plus the locale.
pub const SAFE_VARS: &[&str] = &[
    "HOME", "LOGNAME", "PATH", "SHELL", "TERM", "USER", "LANG", "LC_ALL",
];

/// Starts `command` as the leader of a new process group, with three pipes.
pub fn start(command: &Command) -> io::Result<Started> {
    let spawned = spawn::start(command)?;
    let lease = Lease::new(spawned.pid);
    let stderr = match ErrPipe::from_owned_fd(spawned.stderr) {
        Ok(stderr) => stderr,
        Err(e) => {
            lease.signal(Signal::Kill);
            lease.release();
            return Err(e);
        }
    };
    Ok(Started {
        lease,
        leader: spawned.leader,
        stdin: InPipe(spawned.stdin),
        stdout: OutPipe(Arc::new(spawned.stdout)),
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
