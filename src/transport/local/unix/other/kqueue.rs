//! macOS: learning that a leader exited from a kqueue watching it (`EVFILT_PROC` with
//! `NOTE_EXIT`), which becomes readable when the process exits, whoever handles SIGCHLD:
//! the counterpart of Linux's pidfd.

use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use std::ptr;

use tokio::io::Interest;
use tokio::io::unix::AsyncFd;

use crate::transport::local::Exit;
use crate::transport::local::unix::peek::peek;

/// The leader's exit, left unreaped; `None` when it cannot be watched (then the caller
/// falls back to SIGCHLD and polling).
pub async fn exit(pid: u32) -> Option<Exit> {
    let Ok(kq) = watch(pid) else {
        // ESRCH: it is gone already (its exit, if it was ours, is there to be peeked).
        return peek(pid);
    };
    // SAFETY: the queue was just made and is owned by nobody else; the AsyncFd then owns
    // it, so it stays open and the same for as long as it is registered.
    let kq = unsafe { AsyncFd::register_with_interest(kq, Interest::READABLE) }.ok()?;
    // Registered before the first peek, so an exit after it is never missed.
    loop {
        if let Some(exit) = peek(pid) {
            return Some(exit);
        }
        let mut ready = kq.readable().await.ok()?;
        drain(kq.get_ref());
        ready.clear_ready();
    }
}

/// A kqueue that turns readable when `pid` exits.
fn watch(pid: u32) -> std::io::Result<OwnedFd> {
    // SAFETY: kqueue takes nothing and returns a new descriptor or -1.
    let kq = unsafe { libc::kqueue() };
    if kq < 0 {
        return Err(std::io::Error::last_os_error());
    }
    // SAFETY: just opened, and owned by nobody else.
    let kq = unsafe { OwnedFd::from_raw_fd(kq) };
    let change = libc::kevent {
        ident: usize::try_from(pid).map_err(std::io::Error::other)?,
        filter: libc::EVFILT_PROC,
        flags: libc::EV_ADD | libc::EV_ONESHOT,
        fflags: libc::NOTE_EXIT,
        data: 0,
        udata: ptr::null_mut(),
    };
    // SAFETY: one change read from a live kevent; no events asked for, so no buffer.
    let rc = unsafe { libc::kevent(kq.as_raw_fd(), &change, 1, ptr::null_mut(), 0, ptr::null()) };
    if rc < 0 {
        return Err(std::io::Error::last_os_error());
    }
    Ok(kq)
}

/// Takes the pending event off the queue, so that it stops being readable.
fn drain(kq: &OwnedFd) {
    // SAFETY: a zeroed kevent is a valid buffer for one event.
    let mut event: libc::kevent = unsafe { std::mem::zeroed() };
    let now = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: reads at most one event into `event`, which is live and writable; a zero
    // timeout only polls.
    unsafe { libc::kevent(kq.as_raw_fd(), ptr::null(), 0, &mut event, 1, &now) };
}
