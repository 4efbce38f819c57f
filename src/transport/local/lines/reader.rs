//! A local server's stdout, read by whichever thread waits for it. A tokio task reads it by
//! default; a thread with an event loop of its own (Node's, see [`HostLoop`]) that writes a
//! request takes the reading over, so the answer wakes that thread alone rather than a
//! worker that must then wake it. Reads are serialised by one lock, so lines are handled in
//! the order the server wrote them whoever reads.

use std::collections::VecDeque;
use std::ffi::c_int;
use std::io::ErrorKind;
use std::sync::atomic::{AtomicBool, AtomicU8, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, Weak};

use rmcp::model::ServerJsonRpcMessage;
use tokio::sync::Notify;

use super::{Intercept, LineWriter};
use crate::lock::lock;
#[cfg(doc)]
use crate::transport::MAX_MESSAGE_BYTES;
use crate::transport::local::os::{OutPipe, Readable};

mod host;

pub use self::host::{HostLoop, has_host_loop, set_host_loop};

/// Large results arrive in as few reads as the pipe allows.
const READ_BUFFER: usize = 64 << 10;
/// Reads in one go before others get their turn (a server that never pauses must not
/// hold the host's thread).
const READS_PER_TURN: usize = 16;
/// How much of an oversized line is kept for [`Intercept::oversized`].
const OVERSIZED_HEAD: usize = 256;
/// Messages for rmcp read by the host and not yet taken; past it the host stops reading
/// and leaves it to rmcp's task, which reads only as fast as it takes them.
const FOR_RMCP: usize = 64;

/// What a read left behind.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Flow {
    /// Everything available was handled; wait for more.
    Waiting,
    /// More may be there: read again soon.
    More,
    /// rmcp has messages enough waiting: stop reading until it takes them.
    Backlogged,
    /// The pipe has ended, or the transport is gone.
    Ended,
    /// rmcp's task reads it now (the host was too busy to).
    Released,
    /// The host read more in one turn than a single caller waits for: many calls in
    /// flight, or a large answer, whose decoding is better left to rmcp's task, in
    /// parallel with the host's own work. The host should let it go for a while.
    Busy,
}

const TOKIO: u8 = 0;
const HOST_THREAD: u8 = 1;

pub struct LineReader {
    pipe: OutPipe,
    /// The longest line read whole ([`MAX_MESSAGE_BYTES`], less in the fuzz target).
    max_line: usize,
    state: Mutex<ReadState>,
    intercept: Arc<dyn Intercept>,
    writer: Arc<LineWriter>,
    for_rmcp: Mutex<ForRmcp>,
    /// Who waits for the pipe: rmcp's task or a host thread.
    owner: AtomicU8,
    /// Set once the intercept has been told of the end.
    ended: AtomicBool,
    /// The transport is gone: nobody reads any more.
    closed: AtomicBool,
    /// Wakes rmcp's task: a message for it, a change of owner, the end.
    pub(super) changed: Notify,
    /// Counts the host's turns and its requests, for the watchdog.
    host_turns: AtomicU64,
    host_writes: AtomicU64,
    /// Whether the watchdog is looking; it rests while the host has nothing going on.
    watching: AtomicBool,
    watchdog: Arc<Notify>,
    /// After a busy turn, the host is not offered the pipe again before this time.
    host_after: AtomicU64,
}

/// What rmcp has still to see, in the order the server wrote it.
#[derive(Default)]
struct ForRmcp {
    queue: VecDeque<Queued>,
    /// Whether rmcp is still handling the last message it took (it asks for the next one
    /// only when done: a log line's delivery, say).
    handling: bool,
}

enum Queued {
    Message(Box<ServerJsonRpcMessage>),
    /// A line read while messages before it wait for rmcp: taken (by the intercept, or
    /// for rmcp) only in its turn, so that an answer never overtakes the log lines and
    /// notifications the server sent before it.
    Line(Vec<u8>),
}

/// What one turn of reading handled.
#[derive(Default)]
struct Handled {
    lines: usize,
    bytes: usize,
}

struct ReadState {
    buffer: Box<[u8]>,
    /// The line being read.
    line: Vec<u8>,
    /// Dropping the rest of a line that exceeded the limit.
    discarding: bool,
    eof: bool,
}

impl LineReader {
    pub(super) fn new(
        pipe: OutPipe,
        intercept: Arc<dyn Intercept>,
        writer: Arc<LineWriter>,
        max_line: usize,
    ) -> Arc<LineReader> {
        let reader = Arc::new(LineReader {
            pipe,
            max_line,
            state: Mutex::new(ReadState {
                buffer: vec![0; READ_BUFFER].into_boxed_slice(),
                line: Vec::new(),
                discarding: false,
                eof: false,
            }),
            intercept,
            writer: writer.clone(),
            for_rmcp: Mutex::new(ForRmcp::default()),
            owner: AtomicU8::new(TOKIO),
            ended: AtomicBool::new(false),
            closed: AtomicBool::new(false),
            changed: Notify::new(),
            host_turns: AtomicU64::new(0),
            host_writes: AtomicU64::new(0),
            watching: AtomicBool::new(false),
            watchdog: Arc::new(Notify::new()),
            host_after: AtomicU64::new(0),
        });
        writer.set_reader(Arc::downgrade(&reader));
        tokio::spawn(host::watch_host(
            Arc::downgrade(&reader),
            reader.watchdog.clone(),
        ));
        reader
    }

    /// What a host event loop can poll to learn that the pipe is readable, where it can.
    pub fn host_pollable(&self) -> Option<c_int> {
        self.pipe.host_pollable()
    }

    /// The pipe registered with tokio, for rmcp's task to wait for it.
    pub(super) fn register(&self) -> std::io::Result<Readable> {
        self.pipe.register()
    }

    fn state(&self) -> MutexGuard<'_, ReadState> {
        lock(&self.state)
    }

    fn queue(&self) -> MutexGuard<'_, ForRmcp> {
        lock(&self.for_rmcp)
    }

    /// Whether a host thread is the one waiting for the pipe.
    pub fn host_reads(&self) -> bool {
        self.owner.load(Ordering::Acquire) == HOST_THREAD
    }

    /// The transport is gone: a host should stop watching.
    pub fn is_closed(&self) -> bool {
        self.closed.load(Ordering::Acquire)
    }

    pub(super) fn is_over(&self) -> bool {
        self.ended.load(Ordering::Acquire) || self.closed.load(Ordering::Acquire)
    }

    pub(super) fn next_for_rmcp(&self) -> Option<ServerJsonRpcMessage> {
        loop {
            let mut for_rmcp = self.queue();
            let Some(next) = for_rmcp.queue.pop_front() else {
                for_rmcp.handling = false;
                return None;
            };
            let message = match next {
                Queued::Message(message) => Some(*message),
                Queued::Line(line) => {
                    drop(for_rmcp);
                    let taken = super::decode::take(&self.writer, &*self.intercept, &line);
                    for_rmcp = self.queue();
                    taken
                }
            };
            if message.is_some() {
                for_rmcp.handling = true;
                return message;
            }
        }
    }

    /// Reads and handles what the pipe holds now, without blocking; on whichever thread
    /// waits for it.
    pub fn read_ready(&self) -> Flow {
        self.read_turn().0
    }

    /// One turn of reading: what it left, and how much it handled.
    fn read_turn(&self) -> (Flow, Handled) {
        let mut handled = Handled::default();
        let flow = self.read_counted(&mut handled);
        (flow, handled)
    }

    fn read_counted(&self, handled: &mut Handled) -> Flow {
        if self.closed.load(Ordering::Acquire) {
            return Flow::Ended;
        }
        let mut state = self.state();
        let state = &mut *state;
        if state.eof {
            return Flow::Ended;
        }
        for _ in 0..READS_PER_TURN {
            if self.queue().queue.len() >= FOR_RMCP {
                return Flow::Backlogged;
            }
            match self.pipe.read_now(&mut state.buffer) {
                Ok(0) => {}
                Ok(n) => {
                    let chunk = std::mem::take(&mut state.buffer);
                    handled.lines += self.feed(state, &chunk[..n]);
                    handled.bytes += n;
                    state.buffer = chunk;
                    continue;
                }
                Err(e) if e.kind() == ErrorKind::WouldBlock => return Flow::Waiting,
                Err(e) if e.kind() == ErrorKind::Interrupted => continue,
                Err(_) => {}
            }
            state.eof = true;
            self.end();
            return Flow::Ended;
        }
        Flow::More
    }

    /// Splits `chunk` into lines, without letting a line grow past the limit; returns how
    /// many it handled.
    fn feed(&self, state: &mut ReadState, mut chunk: &[u8]) -> usize {
        let mut lines = 0;
        while !chunk.is_empty() {
            let newline = memchr::memchr(b'\n', chunk);
            let take = newline.map_or(chunk.len(), |at| at + 1);
            if !state.discarding && state.line.len() + take > self.max_line {
                // The line so far holds at least one whole read, far more than its head.
                let mut head = std::mem::take(&mut state.line);
                head.truncate(OVERSIZED_HEAD);
                state.discarding = newline.is_none();
                chunk = &chunk[take..];
                self.intercept.oversized(&head);
                continue;
            }
            if !state.discarding {
                state.line.extend_from_slice(&chunk[..take]);
            }
            chunk = &chunk[take..];
            if newline.is_none() {
                break;
            }
            if std::mem::take(&mut state.discarding) {
                continue;
            }
            lines += 1;
            let line = super::decode::trim(&state.line);
            let mut for_rmcp = self.queue();
            if !for_rmcp.queue.is_empty() || for_rmcp.handling {
                for_rmcp.queue.push_back(Queued::Line(line.to_vec()));
                drop(for_rmcp);
                self.changed.notify_one();
            } else {
                drop(for_rmcp);
                if let Some(message) = super::decode::take(&self.writer, &*self.intercept, line) {
                    let message = Box::new(message);
                    self.queue().queue.push_back(Queued::Message(message));
                    self.changed.notify_one();
                }
            }
            state.line.clear();
        }
        lines
    }

    /// Tells the intercept the output has ended, once.
    pub(super) fn end(&self) {
        if !self.ended.swap(true, Ordering::AcqRel) {
            self.intercept.ended();
        }
        self.changed.notify_one();
    }

    /// The transport is gone: whoever watches stops at its next turn.
    pub(super) fn close(&self) {
        self.closed.store(true, Ordering::Release);
        self.end();
    }
}

/// The reader of a writer's server, for [`LineWriter::write_line`] to hand to the host.
pub(super) type ReaderLink = std::sync::OnceLock<Weak<LineReader>>;
