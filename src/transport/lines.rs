//! Newline-delimited JSON-RPC over a child's stdin and stdout, as rmcp's transport, with
//! a side door: every incoming line is first offered to an [`Intercept`] (the session's
//! tool calls), which takes its own messages before rmcp decodes anything, and anyone
//! holding the [`LineWriter`] can write a line at once, from any thread.

use std::future::Future;
use std::io::{self, ErrorKind};
use std::os::fd::{AsRawFd, OwnedFd, RawFd};
use std::sync::{Arc, Mutex, MutexGuard, Weak};

use rmcp::model::{ClientJsonRpcMessage, ErrorData, RequestId, ServerJsonRpcMessage};
use rmcp::service::RoleClient;
use rmcp::transport::Transport;
use tokio::io::Interest;
use tokio::io::unix::AsyncFd;
use tokio::sync::Notify;
use tokio_util::sync::CancellationToken;

use self::reader::ReaderLink;

mod cork;
mod reader;

pub use self::cork::{cork, set_can_cork, uncork};
pub use self::reader::{Flow, HostLoop, LineReader, has_host_loop, set_host_loop};

/// Sees each incoming line before rmcp does.
pub trait Intercept: Send + Sync {
    /// Handles `line` and returns true, or returns false to leave it to rmcp.
    fn intercept(&self, line: &[u8]) -> bool;
    /// A line too long to read was dropped; `head` is its start (where its id usually is).
    fn oversized(&self, head: &[u8]);
    /// A line that neither the intercept nor rmcp could read was dropped.
    fn unreadable(&self, line: &[u8]);
    /// The server's stdout has ended; called once.
    fn ended(&self);
}

/// The most that may wait for a server that does not read its input; a line that would
/// take the backlog past it is refused (the first line of a backlog is always taken).
pub const MAX_BACKLOG: usize = 64 << 20;
/// Corked lines go out once they reach this many bytes, before the host's turn ends.
const CORKED_BYTES: usize = 2 << 10;

/// Why a line was not written.
#[derive(Debug)]
pub enum WriteError {
    /// The server's input is closed.
    Closed,
    /// The server is not reading: this many bytes already wait for it.
    NotReading(usize),
    Io(io::Error),
}

impl std::fmt::Display for WriteError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            WriteError::Closed => f.write_str("its input is closed"),
            WriteError::NotReading(waiting) => write!(
                f,
                "is not reading its input ({} MiB are waiting for it)",
                waiting >> 20
            ),
            WriteError::Io(e) => write!(f, "cannot be written to: {e}"),
        }
    }
}

impl std::error::Error for WriteError {}

impl From<io::Error> for WriteError {
    fn from(error: io::Error) -> Self {
        WriteError::Io(error)
    }
}

/// The child's stdin. A line is written straight to the non-blocking pipe by the thread
/// that has it; what the pipe cannot take yet waits in a backlog that a task flushes, and
/// later lines queue behind it, so lines never interleave or overtake each other.
pub struct LineWriter {
    me: Weak<LineWriter>,
    state: Mutex<WriterState>,
    backlogged: Notify,
    closed: CancellationToken,
    /// The server's stdout, which a host thread that writes a request may take over.
    reader: ReaderLink,
}

struct WriterState {
    /// `None` once closed: the server has seen end of input.
    pipe: Option<Arc<AsyncFd<OwnedFd>>>,
    /// Bytes the pipe has not taken yet start at `backlog[sent..]`; the front is dropped
    /// only once all of it is written, so a big request is never shifted piece by piece.
    backlog: Vec<u8>,
    sent: usize,
    /// Whether the backlog holds corked lines, not lines the pipe could not take.
    corked: bool,
}

impl LineWriter {
    /// Must be called within a tokio runtime (the flusher is a task).
    /// `stdin` must be non-blocking (see `stdio::ChildPipes`): writes must never block.
    pub fn new(fd: OwnedFd) -> io::Result<Arc<LineWriter>> {
        // SAFETY: the AsyncFd owns the OwnedFd, so the descriptor stays open and the same
        // for as long as it is registered.
        let pipe = unsafe { AsyncFd::register_with_interest(fd, Interest::WRITABLE)? };
        let writer = Arc::new_cyclic(|me| LineWriter {
            me: me.clone(),
            state: Mutex::new(WriterState {
                pipe: Some(Arc::new(pipe)),
                backlog: Vec::new(),
                sent: 0,
                corked: false,
            }),
            backlogged: Notify::new(),
            closed: CancellationToken::new(),
            reader: ReaderLink::new(),
        });
        tokio::spawn(writer.clone().flush_backlog());
        Ok(writer)
    }

    fn state(&self) -> MutexGuard<'_, WriterState> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    fn set_reader(&self, reader: Weak<LineReader>) {
        let _ = self.reader.set(reader);
    }

    /// Writes one message; `line` must end with a newline. Never blocks. On a thread with
    /// a host loop, that thread then waits for the server's answer itself.
    pub fn write_line(&self, line: &[u8]) -> Result<(), WriteError> {
        self.write(line)?;
        if has_host_loop()
            && let Some(reader) = self.reader.get().and_then(Weak::upgrade)
        {
            reader.offer_to_host();
        }
        Ok(())
    }

    fn write(&self, line: &[u8]) -> Result<(), WriteError> {
        let mut state = self.state();
        let Some(pipe) = &state.pipe else {
            return Err(WriteError::Closed);
        };
        if state.has_backlog() {
            let waiting = state.backlog.len() - state.sent;
            if waiting + line.len() > MAX_BACKLOG {
                return Err(WriteError::NotReading(waiting));
            }
            state.backlog.extend_from_slice(line);
            // A few corked lines go out at once: the server starts on them while the
            // host goes on.
            if state.corked && waiting + line.len() >= CORKED_BYTES {
                self.write_backlog(state);
            }
            return Ok(());
        }
        if cork::corked()
            && let Some(me) = self.me.upgrade()
        {
            // Waits in the backlog, so that lines of other threads queue behind it.
            state.backlog.extend_from_slice(line);
            state.corked = true;
            drop(state);
            cork::hold(me);
            return Ok(());
        }
        let written = write_some(pipe, line)?;
        if written < line.len() {
            state.backlog.extend_from_slice(&line[written..]);
            self.backlogged.notify_one();
        }
        Ok(())
    }

    /// Writes the lines corked on this thread (see `cork`); what the pipe cannot take yet
    /// is left to the backlog's task.
    fn flush_corked(&self) {
        self.write_backlog(self.state());
    }

    /// Writes what the backlog holds as far as the pipe takes it now; the backlog's task
    /// writes the rest.
    fn write_backlog(&self, mut state: MutexGuard<'_, WriterState>) {
        state.corked = false;
        let Some(pipe) = state.pipe.clone() else {
            return;
        };
        if !state.has_backlog() {
            return;
        }
        match write_some(&pipe, &state.backlog[state.sent..]) {
            Ok(written) => {
                state.sent += written;
                if state.has_backlog() {
                    self.backlogged.notify_one();
                } else {
                    (state.backlog, state.sent) = (Vec::new(), 0);
                }
            }
            Err(_) => {
                drop(state);
                // The server is gone: its end of output fails what waits for it.
                self.close();
            }
        }
    }

    /// Whether the server has read everything written to it so far, backlog included (a
    /// server still starting up has not). `None` once closed or when the pipe cannot tell.
    pub fn drained(&self) -> Option<bool> {
        let state = self.state();
        let pipe = state.pipe.as_ref()?;
        let mut unread: libc::c_int = 0;
        // SAFETY: FIONREAD writes one int through the pointer; the descriptor is open for
        // as long as `state` holds it.
        let status = unsafe { libc::ioctl(pipe.as_raw_fd(), libc::FIONREAD, &mut unread) };
        (status == 0).then_some(unread == 0 && !state.has_backlog())
    }

    /// Closes the pipe (the server sees end of input); later writes fail. Idempotent.
    pub fn close(&self) {
        let mut state = self.state();
        state.pipe = None;
        (state.backlog, state.sent) = (Vec::new(), 0);
        drop(state);
        self.closed.cancel();
    }

    async fn flush_backlog(self: Arc<Self>) {
        loop {
            tokio::select! {
                _ = self.closed.cancelled() => return,
                _ = self.backlogged.notified() => {}
            }
            let Some(pipe) = self.state().pipe.clone() else {
                return;
            };
            while self.state().has_backlog() {
                let mut ready = tokio::select! {
                    _ = self.closed.cancelled() => return,
                    ready = pipe.writable() => match ready {
                        Ok(ready) => ready,
                        Err(_) => return self.close(),
                    },
                };
                let failed = {
                    let mut guard = self.state();
                    let state = &mut *guard;
                    match write_some(&pipe, &state.backlog[state.sent..]) {
                        Ok(written) => {
                            state.sent += written;
                            if state.has_backlog() {
                                ready.clear_ready();
                            } else {
                                (state.backlog, state.sent) = (Vec::new(), 0);
                            }
                            false
                        }
                        Err(_) => true,
                    }
                };
                if failed {
                    // The server is gone: its end of output fails what waits for it.
                    return self.close();
                }
            }
        }
    }
}

impl WriterState {
    fn has_backlog(&self) -> bool {
        self.sent < self.backlog.len()
    }
}

/// Writes as much of `bytes` as the pipe takes now; `Ok(0..len)` when it is full.
fn write_some(pipe: &AsyncFd<OwnedFd>, bytes: &[u8]) -> io::Result<usize> {
    let fd = pipe.as_raw_fd();
    let mut written = 0;
    while written < bytes.len() {
        let rest = &bytes[written..];
        // SAFETY: `fd` is open (the caller holds the AsyncFd) and `rest` is a live slice.
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

/// rmcp's transport over the pipes of a local server.
pub struct LineTransport {
    reader: Arc<LineReader>,
    /// The pipe as registered with tokio, while rmcp's task is the one waiting for it.
    registered: Option<AsyncFd<RawFd>>,
    writer: Arc<LineWriter>,
}

impl LineTransport {
    /// `stdout` must be non-blocking (see `stdio::ChildPipes`).
    pub fn new(stdout: OwnedFd, writer: Arc<LineWriter>, intercept: Arc<dyn Intercept>) -> Self {
        LineTransport {
            reader: LineReader::new(stdout, intercept, writer.clone()),
            registered: None,
            writer,
        }
    }

    /// Waits until the pipe is readable and reads it, unless a host thread takes the
    /// reading over meanwhile; returns when there may be something new.
    async fn read_when_ready(&mut self) {
        let changed = self.reader.changed.notified();
        tokio::pin!(changed);
        changed.as_mut().enable();
        if self.reader.host_reads() {
            // Not registered while the host waits, or every answer would wake us too.
            self.registered = None;
            return changed.await;
        }
        let registered = match self.registered.take() {
            Some(registered) => registered,
            // SAFETY: the reader owns the descriptor and outlives the registration, which
            // is dropped first (see `Drop`).
            None => match unsafe {
                AsyncFd::register_with_interest(self.reader.fd(), Interest::READABLE)
            } {
                Ok(registered) => registered,
                Err(_) => return self.reader.end(),
            },
        };
        let registered = &*self.registered.insert(registered);
        tokio::select! {
            ready = registered.readable() => match ready {
                Ok(mut ready) => {
                    if self.reader.read_ready() == Flow::Waiting {
                        ready.clear_ready();
                    }
                }
                Err(_) => self.reader.end(),
            },
            _ = changed => {}
        }
    }
}

/// What rmcp answers to a well-formed message it cannot read; a request is answered under
/// its own id when that can be read, since the server waits for that id.
fn refuse(writer: &LineWriter, message: &[u8]) {
    #[derive(serde::Deserialize)]
    struct Request {
        id: Option<RequestId>,
        method: Option<serde::de::IgnoredAny>,
    }
    let request = serde_json::from_slice::<Request>(message).ok();
    let id = request.and_then(|r| r.method.and(r.id));
    let error =
        ClientJsonRpcMessage::error(ErrorData::invalid_request("Invalid request", None), id);
    if let Ok(mut line) = serde_json::to_vec(&error) {
        line.push(b'\n');
        let _ = writer.write_line(&line);
    }
}

/// One line for rmcp, or `None` when the intercept took it or it cannot be read (then
/// answered, when it deserves an answer).
fn take(
    writer: &LineWriter,
    intercept: &dyn Intercept,
    line: &[u8],
) -> Option<ServerJsonRpcMessage> {
    let refuse_it = match decode(intercept, line) {
        Ok(message) => return message,
        Err(refuse_it) => refuse_it,
    };
    if std::str::from_utf8(line).is_err() {
        // Read it as the official SDKs do, bad bytes as U+FFFD, so that an answer still
        // reaches the call waiting for it.
        return take(writer, intercept, String::from_utf8_lossy(line).as_bytes());
    }
    if refuse_it {
        refuse(writer, line);
    } else {
        intercept.unreadable(line);
    }
    None
}

/// One line: taken by the intercept (`None`), for rmcp, or unreadable (`Err(true)` when it
/// deserves an answer).
fn decode(intercept: &dyn Intercept, message: &[u8]) -> Result<Option<ServerJsonRpcMessage>, bool> {
    if message.is_empty() || intercept.intercept(message) {
        return Ok(None);
    }
    match serde_json::from_slice::<ServerJsonRpcMessage>(message) {
        Ok(message) => Ok(Some(message)),
        // Not JSON: nothing to answer (as the official SDKs do). A notification rmcp does
        // not know is not ours to refuse either.
        Err(e) => Err(e.is_data() && !is_notification(message)),
    }
}

impl Transport<RoleClient> for LineTransport {
    type Error = io::Error;

    fn send(
        &mut self,
        item: ClientJsonRpcMessage,
    ) -> impl Future<Output = Result<(), io::Error>> + Send + 'static {
        let sent = serde_json::to_vec(&item)
            .map_err(io::Error::from)
            .and_then(|mut line| {
                line.push(b'\n');
                self.writer.write_line(&line).map_err(io::Error::other)
            });
        std::future::ready(sent)
    }

    async fn receive(&mut self) -> Option<ServerJsonRpcMessage> {
        loop {
            if let Some(message) = self.reader.next_for_rmcp() {
                return Some(message);
            }
            if self.reader.is_over() {
                self.registered = None;
                return None;
            }
            self.read_when_ready().await;
        }
    }

    fn close(&mut self) -> impl Future<Output = Result<(), io::Error>> + Send {
        self.writer.close();
        std::future::ready(Ok(()))
    }
}

impl Drop for LineTransport {
    fn drop(&mut self) {
        self.registered = None;
        self.writer.close();
        self.reader.close();
    }
}

/// The message without its line ending and a leading byte-order mark.
fn trim(line: &[u8]) -> &[u8] {
    let line = line.strip_suffix(b"\n").unwrap_or(line);
    let line = line.strip_suffix(b"\r").unwrap_or(line);
    line.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(line)
}

fn is_notification(message: &[u8]) -> bool {
    #[derive(serde::Deserialize)]
    struct Shape {
        id: Option<serde::de::IgnoredAny>,
        method: Option<serde::de::IgnoredAny>,
    }
    serde_json::from_slice::<Shape>(message).is_ok_and(|s| s.id.is_none() && s.method.is_some())
}
