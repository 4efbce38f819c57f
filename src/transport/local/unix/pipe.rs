//! The host's ends of a server's stdin and stdout: non-blocking descriptors, written and
//! read at once by whichever thread has something to do, and registered with tokio only
//! while one of its tasks waits for them.
//!
//! Each OS family's spawn hands them over as [`Ends`], blocking still, and never sees them
//! again: making them non-blocking is done here, once for all.

use std::ffi::c_int;
use std::io::{self, ErrorKind};
use std::os::fd::{AsRawFd, OwnedFd, RawFd};
use std::sync::Arc;

use tokio::io::Interest;
use tokio::io::unix::{AsyncFd, AsyncFdReadyGuard};

/// The server's stderr, drained by a task.
pub type ErrPipe = tokio::net::unix::pipe::Receiver;

/// The host's ends of a just-spawned server's stdin, stdout and stderr, owned by nobody else.
pub struct Ends {
    pub stdin: OwnedFd,
    pub stdout: OwnedFd,
    pub stderr: OwnedFd,
}

impl Ends {
    pub fn set_nonblocking(&self) -> io::Result<()> {
        [&self.stdin, &self.stdout, &self.stderr]
            .into_iter()
            .try_for_each(set_nonblocking)
    }
}

fn set_nonblocking(fd: &OwnedFd) -> io::Result<()> {
    let fd = fd.as_raw_fd();
    // SAFETY: fcntl on a descriptor we own, with flags it returned.
    let ok = unsafe {
        let flags = libc::fcntl(fd, libc::F_GETFL);
        flags >= 0 && libc::fcntl(fd, libc::F_SETFL, flags | libc::O_NONBLOCK) == 0
    };
    if ok {
        Ok(())
    } else {
        Err(io::Error::last_os_error())
    }
}

/// The server's stdin as started: registered with no reactor yet.
pub struct InPipe(pub(super) OwnedFd);

/// The server's stdin, registered to wait until it takes more.
pub struct Writable(AsyncFd<OwnedFd>);

/// Readiness to write, until a write finds the pipe full again ([`WriteReady::clear`]).
pub struct WriteReady<'a>(AsyncFdReadyGuard<'a, OwnedFd>);

impl InPipe {
    /// The write end of a pipe made non-blocking elsewhere: a stand-in for a server's
    /// stdin where no server runs (the fuzz targets).
    pub fn from_fd(fd: OwnedFd) -> Self {
        InPipe(fd)
    }

    /// Must be called within a tokio runtime.
    pub fn register(self) -> io::Result<Writable> {
        // SAFETY: the AsyncFd owns the OwnedFd, so the descriptor stays open and the same
        // for as long as it is registered.
        let registered = unsafe { AsyncFd::register_with_interest(self.0, Interest::WRITABLE)? };
        Ok(Writable(registered))
    }
}

impl Writable {
    /// Writes as much of `bytes` as the pipe takes now; `Ok(0..len)` when it is full.
    pub fn write_now(&self, bytes: &[u8]) -> io::Result<usize> {
        let fd = self.0.as_raw_fd();
        let mut written = 0;
        while written < bytes.len() {
            let rest = &bytes[written..];
            // SAFETY: `fd` is open (we hold the AsyncFd) and `rest` is a live slice.
            let n = unsafe { libc::write(fd, rest.as_ptr().cast(), rest.len()) };
            if n >= 0 {
                written += n as usize;
                continue;
            }
            let error = io::Error::last_os_error();
            match error.kind() {
                ErrorKind::Interrupted => {}
                ErrorKind::WouldBlock => break,
                _ => return Err(error),
            }
        }
        Ok(written)
    }

    /// Waits until the pipe may take more.
    pub async fn writable(&self) -> io::Result<WriteReady<'_>> {
        self.0.writable().await.map(WriteReady)
    }

    /// The bytes written that the server has not read yet; `None` when the pipe cannot
    /// tell.
    pub fn unread(&self) -> Option<usize> {
        let mut unread: libc::c_int = 0;
        // SAFETY: FIONREAD writes one int through the pointer; the descriptor is open.
        let status = unsafe { libc::ioctl(self.0.as_raw_fd(), libc::FIONREAD, &mut unread) };
        (status == 0).then(|| usize::try_from(unread).unwrap_or(0))
    }
}

impl WriteReady<'_> {
    /// The pipe was found full: wait for it again.
    pub fn clear(&mut self) {
        self.0.clear_ready();
    }
}

/// The server's stdout.
pub struct OutPipe(pub(super) Arc<OwnedFd>);

/// The server's stdout registered with tokio, for as long as one of its tasks waits for it.
pub struct Readable {
    // Dropped first: deregistered while the descriptor is still open.
    registered: AsyncFd<RawFd>,
    _fd: Arc<OwnedFd>,
}

/// Readiness to read, until a read finds the pipe empty ([`ReadReady::clear`]).
pub struct ReadReady<'a>(AsyncFdReadyGuard<'a, RawFd>);

impl OutPipe {
    /// The read end of a pipe made non-blocking elsewhere (see [`InPipe::from_fd`]).
    pub fn from_fd(fd: OwnedFd) -> Self {
        OutPipe(Arc::new(fd))
    }

    /// Reads what the pipe holds now into `buffer`: `Ok(0)` at its end, `WouldBlock` when
    /// it holds nothing yet.
    pub fn read_now(&self, buffer: &mut [u8]) -> io::Result<usize> {
        // SAFETY: the descriptor is open for as long as `self` lives, and `buffer` is a
        // live, writable slice of the length given.
        let n = unsafe { libc::read(self.0.as_raw_fd(), buffer.as_mut_ptr().cast(), buffer.len()) };
        if n < 0 {
            return Err(io::Error::last_os_error());
        }
        Ok(n as usize)
    }

    /// Whether the pipe holds something to read (or has ended), without reading it.
    pub fn has_input(&self) -> bool {
        let mut poll = libc::pollfd {
            fd: self.0.as_raw_fd(),
            events: libc::POLLIN,
            revents: 0,
        };
        // SAFETY: one valid pollfd, no waiting.
        unsafe { libc::poll(&mut poll, 1, 0) > 0 }
    }

    /// The descriptor a host event loop can poll (libuv's `uv_poll_init` takes it).
    pub fn host_pollable(&self) -> Option<c_int> {
        Some(self.0.as_raw_fd())
    }

    /// Registers the pipe with tokio (within a runtime), until the result is dropped.
    pub fn register(&self) -> io::Result<Readable> {
        // SAFETY: `Readable` keeps the descriptor open, and drops the registration first.
        let registered =
            unsafe { AsyncFd::register_with_interest(self.0.as_raw_fd(), Interest::READABLE) }?;
        Ok(Readable {
            registered,
            _fd: self.0.clone(),
        })
    }
}

impl Readable {
    /// Waits until the pipe has something to read, or has ended.
    pub async fn readable(&self) -> io::Result<ReadReady<'_>> {
        self.registered.readable().await.map(ReadReady)
    }
}

impl ReadReady<'_> {
    /// The pipe was found empty: wait for it again.
    pub fn clear(&mut self) {
        self.0.clear_ready();
    }
}
