//! Every Unix but Linux (macOS is the one shipped): tokio's `Command` spawns, no
//! parent-death signal exists, so the watchdog keeps the host-death promise, and the exit
//! is watched with a kqueue on macOS (elsewhere SIGCHLD alone tells of it).

#[cfg(target_os = "macos")]
mod kqueue;
mod spawn;

#[cfg(target_os = "macos")]
pub use kqueue::exit;
pub use spawn::{Leader, spawn};

/// Nothing else ends a dead host's servers here.
pub fn needs_watchdog() -> bool {
    true
}

/// No way to watch for the exit but SIGCHLD, which the caller falls back to.
#[cfg(not(target_os = "macos"))]
pub async fn exit(_pid: u32) -> Option<crate::transport::local::Exit> {
    None
}
