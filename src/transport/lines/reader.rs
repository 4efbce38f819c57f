//! A local server's stdout, read by whichever thread waits for it. A tokio task reads it by
//! default; a thread with an event loop of its own (Node's, see [`HostLoop`]) that writes a
//! request takes the reading over, so the answer wakes that thread alone rather than a
//! worker that must then wake it. Reads are serialised by one lock, so lines are handled in
//! the order the server wrote them whoever reads.

use std::cell::RefCell;
use std::collections::VecDeque;
use std::io::{self, ErrorKind};
use std::os::fd::{AsRawFd, OwnedFd, RawFd};
use std::rc::Rc;
use std::sync::atomic::{AtomicBool, AtomicU8, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, Weak};
use std::time::Duration;

use rmcp::model::ServerJsonRpcMessage;
use tokio::sync::Notify;

use super::{Intercept, LineWriter};
use crate::transport::MAX_MESSAGE_BYTES;

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
/// How often the watchdog looks at a pipe the host reads; a host thread that has left
/// it readable and unread for a whole period is busy, and rmcp's task takes it back.
const WATCH_PERIOD: Duration = Duration::from_millis(10);
/// Periods without a request and with nothing to read before the watchdog rests.
const IDLE_PERIODS: u32 = 10;
/// A host turn that handles more lines or bytes than these is a busy one (see
/// [`Flow::Busy`]): a caller waiting for one answer reads one line and its progress.
const HOST_LINES: usize = 4;
const HOST_BYTES: usize = 256 << 10;
/// How long the pipe stays with rmcp's task after a busy turn.
const HOST_PAUSE_MS: u64 = 100;

/// Milliseconds since the first call, a clock cheap to keep in an atomic.
fn millis_since_start() -> u64 {
    static START: std::sync::OnceLock<std::time::Instant> = std::sync::OnceLock::new();
    let elapsed = START.get_or_init(std::time::Instant::now).elapsed();
    u64::try_from(elapsed.as_millis()).unwrap_or(u64::MAX)
}

/// An event loop on the current thread that can wait for a pipe to become readable.
pub trait HostLoop {
    /// Calls [`LineReader::read_ready`] on this thread whenever `reader`'s pipe is
    /// readable, until it returns anything but [`Flow::Waiting`]; false if it cannot.
    fn watch(&self, reader: Arc<LineReader>) -> bool;
}

thread_local! {
    static HOST: RefCell<Option<Rc<dyn HostLoop>>> = const { RefCell::new(None) };
}

/// Makes `host` the event loop of the current thread (`None`: it has none any more).
pub fn set_host_loop(host: Option<Rc<dyn HostLoop>>) {
    HOST.with(|h| *h.borrow_mut() = host);
}

pub fn has_host_loop() -> bool {
    HOST.with(|h| h.borrow().is_some())
}

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
    fd: OwnedFd,
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
    /// Dropping the rest of a line that exceeded [`MAX_MESSAGE_BYTES`].
    discarding: bool,
    eof: bool,
}

impl LineReader {
    pub(super) fn new(
        fd: OwnedFd,
        intercept: Arc<dyn Intercept>,
        writer: Arc<LineWriter>,
    ) -> Arc<LineReader> {
        let reader = Arc::new(LineReader {
            fd,
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
        tokio::spawn(watch_host(Arc::downgrade(&reader), reader.watchdog.clone()));
        reader
    }

    pub fn fd(&self) -> RawFd {
        self.fd.as_raw_fd()
    }

    fn state(&self) -> MutexGuard<'_, ReadState> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    fn queue(&self) -> MutexGuard<'_, ForRmcp> {
        self.for_rmcp.lock().unwrap_or_else(|e| e.into_inner())
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
                    let taken = super::take(&self.writer, &*self.intercept, &line);
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

    /// Called after a line was written on the current thread: if it has a host loop and
    /// rmcp's task reads, the host takes the reading over.
    pub(super) fn offer_to_host(self: &Arc<Self>) {
        if millis_since_start() < self.host_after.load(Ordering::Relaxed) {
            return;
        }
        if self.host_reads() {
            self.host_writes.fetch_add(1, Ordering::Relaxed);
            if !self.watching.swap(true, Ordering::AcqRel) {
                self.watchdog.notify_one();
            }
            return;
        }
        if self.is_over() {
            return;
        }
        let Some(host) = HOST.with(|h| h.borrow().clone()) else {
            return;
        };
        if self
            .owner
            .compare_exchange(TOKIO, HOST_THREAD, Ordering::AcqRel, Ordering::Acquire)
            .is_err()
        {
            return;
        }
        if host.watch(self.clone()) {
            // rmcp's task stops waiting for the pipe; the watchdog starts looking.
            self.changed.notify_one();
            self.watching.store(true, Ordering::Release);
            self.watchdog.notify_one();
        } else {
            self.owner.store(TOKIO, Ordering::Release);
        }
    }

    /// The host has stopped watching: rmcp's task reads again.
    pub fn release(&self) {
        self.owner.store(TOKIO, Ordering::Release);
        self.changed.notify_one();
    }

    /// [`read_ready`](Self::read_ready) for the host; [`Flow::Released`] once rmcp's task
    /// has taken the reading back.
    pub fn read_on_host(&self) -> Flow {
        if !self.host_reads() {
            return Flow::Released;
        }
        self.host_turns.fetch_add(1, Ordering::Relaxed);
        match self.read_turn() {
            (Flow::Waiting | Flow::More, handled)
                if handled.lines > HOST_LINES || handled.bytes > HOST_BYTES =>
            {
                self.host_after
                    .store(millis_since_start() + HOST_PAUSE_MS, Ordering::Relaxed);
                Flow::Busy
            }
            (flow, _) => flow,
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
            // SAFETY: the descriptor is open for as long as `self` lives, and `buffer` is
            // a live, writable slice of the length given.
            let n = unsafe {
                libc::read(
                    self.fd.as_raw_fd(),
                    state.buffer.as_mut_ptr().cast(),
                    state.buffer.len(),
                )
            };
            if n > 0 {
                let chunk = std::mem::take(&mut state.buffer);
                handled.lines += self.feed(state, &chunk[..n as usize]);
                handled.bytes += n as usize;
                state.buffer = chunk;
                continue;
            }
            if n < 0 {
                match io::Error::last_os_error().kind() {
                    ErrorKind::WouldBlock => return Flow::Waiting,
                    ErrorKind::Interrupted => continue,
                    _ => {}
                }
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
            if !state.discarding && state.line.len() + take > MAX_MESSAGE_BYTES {
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
            let line = super::trim(&state.line);
            let mut for_rmcp = self.queue();
            if !for_rmcp.queue.is_empty() || for_rmcp.handling {
                for_rmcp.queue.push_back(Queued::Line(line.to_vec()));
                drop(for_rmcp);
                self.changed.notify_one();
            } else {
                drop(for_rmcp);
                if let Some(message) = super::take(&self.writer, &*self.intercept, line) {
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

/// Whether the pipe holds something to read (or has ended), without reading it.
fn readable(fd: RawFd) -> bool {
    let mut poll = libc::pollfd {
        fd,
        events: libc::POLLIN,
        revents: 0,
    };
    // SAFETY: one valid pollfd, no waiting.
    unsafe { libc::poll(&mut poll, 1, 0) > 0 }
}

/// While the host reads a pipe, checks each period that it keeps up: a pipe left readable
/// and unread for a whole period goes back to rmcp's task, so a host thread stuck in a
/// long computation does not stall the server (whose progress then meets the bounds of
/// the queues as it would have without the host). Rests when nothing goes on.
async fn watch_host(reader: Weak<LineReader>, wake: Arc<Notify>) {
    loop {
        wake.notified().await;
        let (mut turns, mut writes, mut idle) = (u64::MAX, u64::MAX, 0);
        loop {
            tokio::time::sleep(WATCH_PERIOD).await;
            let Some(reader) = reader.upgrade() else {
                return;
            };
            if reader.is_over() {
                return;
            }
            if !reader.host_reads() {
                reader.watching.store(false, Ordering::Release);
                break;
            }
            let now = (
                reader.host_turns.load(Ordering::Relaxed),
                reader.host_writes.load(Ordering::Relaxed),
            );
            let pending = readable(reader.fd());
            if pending && now.0 == turns {
                reader.release();
                reader.watching.store(false, Ordering::Release);
                break;
            }
            idle = if pending || now.1 != writes {
                0
            } else {
                idle + 1
            };
            if idle >= IDLE_PERIODS {
                reader.watching.store(false, Ordering::Release);
                break;
            }
            (turns, writes) = now;
        }
    }
}

/// The reader of a writer's server, for [`LineWriter::write_line`] to hand to the host.
pub(super) type ReaderLink = std::sync::OnceLock<Weak<LineReader>>;
