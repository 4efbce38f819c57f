//! Learning that a leader exited from a pidfd, which becomes readable when its process
//! exits, whoever handles SIGCHLD.

use std::os::fd::{FromRawFd, OwnedFd};

use tokio::io::Interest;
use tokio::io::unix::AsyncFd;

use crate::transport::local::Exit;
use crate::transport::local::unix::peek::peek;

/// The leader's exit, left unreaped; `None` when no pidfd can be had (a kernel older
/// than 5.3).
pub async fn exit(pid: u32) -> Option<Exit> {
    // SAFETY: pidfd_open takes a pid and flags and returns a new descriptor or -1.
    let fd = unsafe { libc::syscall(libc::SYS_pidfd_open, libc::pid_t::try_from(pid).ok()?, 0) };
    let fd = i32::try_from(fd).ok().filter(|fd| *fd >= 0)?;
    // SAFETY: the descriptor was just opened and is owned by nobody else; the AsyncFd then
    // owns it, so it stays open and the same for as long as it is registered.
    let fd =
        unsafe { AsyncFd::register_with_interest(OwnedFd::from_raw_fd(fd), Interest::READABLE) }
            .ok()?;
    loop {
        if let Some(exit) = peek(pid) {
            return Some(exit);
        }
        fd.readable().await.ok()?.clear_ready();
    }
}
