//! A local server's stdin, written from whichever thread has a line for it.

use std::io;
use std::sync::{Arc, Mutex, MutexGuard, Weak};

use tokio::sync::Notify;
use tokio_util::sync::CancellationToken;

use super::cork;
use super::reader::{LineReader, ReaderLink, has_host_loop};
use crate::lock::lock;
use crate::transport::local::os::{InPipe, Writable};

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
    pipe: Option<Arc<Writable>>,
    /// Bytes the pipe has not taken yet start at `backlog[sent..]`; the front is dropped
    /// only once all of it is written, so a big request is never shifted piece by piece.
    backlog: Vec<u8>,
    sent: usize,
    /// Whether the backlog holds corked lines, not lines the pipe could not take.
    corked: bool,
}

impl LineWriter {
    /// Must be called within a tokio runtime (the flusher is a task).
    pub fn new(stdin: InPipe) -> io::Result<Arc<LineWriter>> {
        let pipe = stdin.register()?;
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
        lock(&self.state)
    }

    pub(super) fn set_reader(&self, reader: Weak<LineReader>) {
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
        let written = pipe.write_now(line)?;
        if written < line.len() {
            state.backlog.extend_from_slice(&line[written..]);
            self.backlogged.notify_one();
        }
        Ok(())
    }

    /// Writes the lines corked on this thread (see `cork`); what the pipe cannot take yet
    /// is left to the backlog's task.
    pub(super) fn flush_corked(&self) {
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
        match pipe.write_now(&state.backlog[state.sent..]) {
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
        let unread = state.pipe.as_ref()?.unread()?;
        Some(unread == 0 && !state.has_backlog())
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
                    match pipe.write_now(&state.backlog[state.sent..]) {
                        Ok(written) => {
                            state.sent += written;
                            if state.has_backlog() {
                                ready.clear();
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
