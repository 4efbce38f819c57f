//! The host's side of reading: a thread with an event loop of its own takes the reading of
//! a pipe over after writing a request to it, and a watchdog hands the pipe back to rmcp's
//! task when that thread falls behind.

use std::cell::RefCell;
use std::rc::Rc;
use std::sync::atomic::Ordering;
use std::sync::{Arc, Weak};
use std::time::Duration;

use tokio::sync::Notify;

use super::{Flow, HOST_THREAD, LineReader, TOKIO};

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

impl LineReader {
    /// Called after a line was written on the current thread: if it has a host loop and
    /// rmcp's task reads, the host takes the reading over.
    pub(in super::super) fn offer_to_host(self: &Arc<Self>) {
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
}

/// While the host reads a pipe, checks each period that it keeps up: a pipe left readable
/// and unread for a whole period goes back to rmcp's task, so a host thread stuck in a
/// long computation does not stall the server (whose progress then meets the bounds of
/// the queues as it would have without the host). Rests when nothing goes on.
pub(super) async fn watch_host(reader: Weak<LineReader>, wake: Arc<Notify>) {
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
            let pending = reader.pipe.has_input();
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
