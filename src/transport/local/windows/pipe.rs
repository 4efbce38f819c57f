//! A server's stdio as overlapped named pipes: the host's end is served by tokio (I/O
//! completion ports), the child's end is a plain synchronous handle, as programs expect of
//! their stdio. Each pipe has one instance, made by us (`first_pipe_instance`), and takes
//! no remote client.

use std::ffi::c_int;
use std::fs::File;
use std::io::{self, ErrorKind};
use std::os::windows::fs::OpenOptionsExt;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use futures::FutureExt;
use tokio::net::windows::named_pipe::{NamedPipeServer, ServerOptions};
use windows_sys::Win32::Foundation::{GENERIC_READ, GENERIC_WRITE};
use windows_sys::Win32::Storage::FileSystem::{
    FILE_READ_ATTRIBUTES, FILE_WRITE_ATTRIBUTES, SECURITY_IDENTIFICATION,
};

/// The server's stderr, drained by a task.
pub type ErrPipe = NamedPipeServer;

/// The server's stdin as started (already served by tokio).
pub struct InPipe(pub(super) NamedPipeServer);

/// The server's stdin, written without blocking.
pub struct Writable(NamedPipeServer);

/// Readiness to write; tokio clears it itself when a write finds the pipe busy.
pub struct WriteReady;

/// The server's stdout.
pub struct OutPipe(pub(super) Arc<NamedPipeServer>);

/// The server's stdout, for a tokio task to wait for.
pub struct Readable(Arc<NamedPipeServer>);

/// Readiness to read; tokio clears it itself when a read finds the pipe empty.
pub struct ReadReady;

impl InPipe {
    pub fn register(self) -> io::Result<Writable> {
        Ok(Writable(self.0))
    }
}

impl Writable {
    /// Hands as much of `bytes` as the pipe takes now to an overlapped write; `Ok(0)` while
    /// the last one is still under way.
    pub fn write_now(&self, bytes: &[u8]) -> io::Result<usize> {
        match self.0.try_write(bytes) {
            Err(e) if e.kind() == ErrorKind::WouldBlock => Ok(0),
            written => written,
        }
    }

    pub async fn writable(&self) -> io::Result<WriteReady> {
        self.0.writable().await.map(|()| WriteReady)
    }

    /// A named pipe does not tell how much of what was written its reader has read.
    pub fn unread(&self) -> Option<usize> {
        None
    }
}

impl WriteReady {
    pub fn clear(&mut self) {}
}

impl OutPipe {
    /// What the pipe holds now: `Ok(0)` at its end, `WouldBlock` when nothing is there yet.
    pub fn read_now(&self, buffer: &mut [u8]) -> io::Result<usize> {
        self.0.try_read(buffer)
    }

    /// Asked only while a host loop reads the pipe, which never happens here.
    pub fn has_input(&self) -> bool {
        false
    }

    /// libuv polls only sockets on Windows: the host loop leaves the pipe to tokio.
    pub fn host_pollable(&self) -> Option<c_int> {
        None
    }

    pub fn register(&self) -> io::Result<Readable> {
        Ok(Readable(self.0.clone()))
    }
}

impl Readable {
    pub async fn readable(&self) -> io::Result<ReadReady> {
        self.0.readable().await.map(|()| ReadReady)
    }
}

impl ReadReady {
    pub fn clear(&mut self) {}
}

/// A pipe the server reads (its stdin): our end, and the server's.
pub fn to_child() -> io::Result<(NamedPipeServer, File)> {
    // The child may set its end's mode (libuv does), which needs the attributes right.
    pair(false, GENERIC_READ | FILE_WRITE_ATTRIBUTES)
}

/// A pipe the server writes (its stdout or stderr): our end, and the server's.
pub fn from_child() -> io::Result<(NamedPipeServer, File)> {
    pair(true, GENERIC_WRITE | FILE_READ_ATTRIBUTES)
}

fn pair(inbound: bool, child_access: u32) -> io::Result<(NamedPipeServer, File)> {
    static NEXT: AtomicU64 = AtomicU64::new(0);
    let name = format!(
        r"\\.\pipe\toolnexus-{}-{}",
        std::process::id(),
        NEXT.fetch_add(1, Ordering::Relaxed)
    );
    let ours = ServerOptions::new()
        .first_pipe_instance(true)
        .reject_remote_clients(true)
        .max_instances(1)
        .access_inbound(inbound)
        .access_outbound(!inbound)
        .create(&name)?;
    let theirs = std::fs::OpenOptions::new()
        .access_mode(child_access)
        // The server on the other end (us) may not act as the child's user.
        .security_qos_flags(SECURITY_IDENTIFICATION)
        .open(&name)?;
    // The client is already there, so connecting completes at once.
    match ours.connect().now_or_never() {
        Some(Ok(())) => Ok((ours, theirs)),
        Some(Err(e)) => Err(e),
        None => Err(io::Error::other("the pipe did not connect")),
    }
}
