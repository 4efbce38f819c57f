//! stdin/stdout driven by the IO reactor, without a blocking thread per read or write.
//!
//! MCP clients start servers with stdin/stdout as pipes (tokio, most Rust and Python
//! clients) or as socket pairs (Node's `child_process`, hence the official TypeScript
//! SDK). Both can be made non-blocking and polled with epoll; a terminal or a regular file
//! falls back to tokio's blocking stdio handles.

use std::io;
use std::os::fd::{AsRawFd, BorrowedFd, OwnedFd, RawFd};
use std::pin::Pin;
use std::task::{Context, Poll, ready};

use tokio::io::unix::AsyncFd;
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};

pub enum Input {
    Polled(AsyncFd<OwnedFd>),
    Blocking(tokio::io::Stdin),
}

pub enum Output {
    Polled(AsyncFd<OwnedFd>),
    Blocking(tokio::io::Stdout),
}

pub fn streams() -> (Input, Output) {
    let input = match pollable(libc::STDIN_FILENO) {
        Some(fd) => Input::Polled(fd),
        None => Input::Blocking(tokio::io::stdin()),
    };
    let output = match pollable(libc::STDOUT_FILENO) {
        Some(fd) => Output::Polled(fd),
        None => Output::Blocking(tokio::io::stdout()),
    };
    (input, output)
}

/// A non-blocking duplicate of `fd` registered with the reactor, if `fd` is a pipe or a
/// socket. Nothing else in this process uses the standard streams, and the server spawns
/// no children, so the shared `O_NONBLOCK` flag surprises no one.
fn pollable(fd: RawFd) -> Option<AsyncFd<OwnedFd>> {
    // SAFETY: fds 0 and 1 stay open for the life of the process.
    let borrowed = unsafe { BorrowedFd::borrow_raw(fd) };
    let owned = borrowed.try_clone_to_owned().ok()?;
    // SAFETY: fstat writes into the zeroed struct we own.
    let mut stat: libc::stat = unsafe { std::mem::zeroed() };
    if unsafe { libc::fstat(owned.as_raw_fd(), &mut stat) } != 0 {
        return None;
    }
    let kind = stat.st_mode & libc::S_IFMT;
    if kind != libc::S_IFIFO && kind != libc::S_IFSOCK {
        return None;
    }
    // SAFETY: fcntl on a descriptor we own.
    let flags = unsafe { libc::fcntl(owned.as_raw_fd(), libc::F_GETFL) };
    if flags < 0
        || unsafe { libc::fcntl(owned.as_raw_fd(), libc::F_SETFL, flags | libc::O_NONBLOCK) } < 0
    {
        return None;
    }
    // SAFETY: `owned` is a valid descriptor that the AsyncFd owns and never replaces.
    unsafe { AsyncFd::register(owned) }.ok()
}

fn last_error(result: isize) -> io::Result<usize> {
    if result < 0 {
        Err(io::Error::last_os_error())
    } else {
        Ok(result as usize)
    }
}

impl AsyncRead for Input {
    fn poll_read(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        match self.get_mut() {
            Input::Blocking(stdin) => Pin::new(stdin).poll_read(cx, buf),
            Input::Polled(fd) => loop {
                let mut guard = ready!(fd.poll_read_ready(cx))?;
                let unfilled = buf.initialize_unfilled();
                let result = guard.try_io(|fd| {
                    // SAFETY: reads into the initialised, writable part of `buf`.
                    let n = unsafe {
                        libc::read(fd.as_raw_fd(), unfilled.as_mut_ptr().cast(), unfilled.len())
                    };
                    last_error(n)
                });
                match result {
                    Ok(Ok(n)) => {
                        buf.advance(n);
                        return Poll::Ready(Ok(()));
                    }
                    Ok(Err(e)) if e.kind() == io::ErrorKind::Interrupted => continue,
                    Ok(Err(e)) => return Poll::Ready(Err(e)),
                    Err(_would_block) => continue,
                }
            },
        }
    }
}

impl AsyncWrite for Output {
    fn poll_write(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        data: &[u8],
    ) -> Poll<io::Result<usize>> {
        match self.get_mut() {
            Output::Blocking(stdout) => Pin::new(stdout).poll_write(cx, data),
            Output::Polled(fd) => loop {
                let mut guard = ready!(fd.poll_write_ready(cx))?;
                let result = guard.try_io(|fd| {
                    // SAFETY: writes from a slice we borrow. MSG_NOSIGNAL is not needed:
                    // SIGPIPE is ignored by the Rust runtime.
                    let n =
                        unsafe { libc::write(fd.as_raw_fd(), data.as_ptr().cast(), data.len()) };
                    last_error(n)
                });
                match result {
                    Ok(Ok(n)) => return Poll::Ready(Ok(n)),
                    Ok(Err(e)) if e.kind() == io::ErrorKind::Interrupted => continue,
                    Ok(Err(e)) => return Poll::Ready(Err(e)),
                    Err(_would_block) => continue,
                }
            },
        }
    }

    fn poll_flush(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        match self.get_mut() {
            Output::Blocking(stdout) => Pin::new(stdout).poll_flush(cx),
            Output::Polled(_) => Poll::Ready(Ok(())),
        }
    }

    fn poll_shutdown(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        match self.get_mut() {
            Output::Blocking(stdout) => Pin::new(stdout).poll_shutdown(cx),
            Output::Polled(_) => Poll::Ready(Ok(())),
        }
    }
}
