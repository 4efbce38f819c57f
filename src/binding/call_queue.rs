//! What JS learns of a source's servers after `loadMcp` starts, in batches and in the order
//! it happened: calls' progress and outcomes, and the servers' log messages. Whatever
//! thread learns of an event queues it; the JS thread is woken once when the queue goes
//! from empty to non-empty, and the wake-up hands it everything queued by then. One queue
//! for all of it keeps a log message the server sent before an answer ahead of it (two
//! threadsafe functions would race), and many calls in flight cost one wake-up.
//!
//! While the JS thread is busy, events pile up here. Progress past a budget gives up the
//! call whose progress does not fit (JS then aborts it), since its progress can no longer
//! be delivered in order; a log message past its budget waits for room, which slows the
//! server down. Outcomes always fit: there is one per call.

use std::collections::HashSet;
use std::future::Future;
use std::pin::Pin;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, OnceLock};

use napi::bindgen_prelude::*;
use napi::sys;
use napi::threadsafe_function::{ThreadsafeFunction, ThreadsafeFunctionCallMode};
use serde_json::Value;
use tokio::sync::{OwnedSemaphorePermit, Semaphore};

use super::bounded::kib;
use crate::lock::lock;
use crate::session::{CallSink, Logger, Progress};
use crate::tool::result::ToolOutput;
use crate::transport::local::lines::cork;

/// The JS function that takes each batch, as `loadMcp` and the store are given it.
pub type WakeFn<'env> = Function<'env, (), Unknown<'static>>;

/// Weak: it keeps Node alive only while calls are in flight (see `started`).
type Wake = ThreadsafeFunction<(), Unknown<'static>, Batch, Status, false, true>;

/// Event kinds in the flat array a batch is.
const DONE: u32 = 0;
const PROGRESS: u32 = 1;
const GIVEN_UP: u32 = 2;
const LOG: u32 = 3;
/// An outcome whose output is its `structuredContent`'s JSON text.
const DONE_STRUCTURED: u32 = 4;
/// A failure toolnexus composed: `output` and its code.
const FAILED: u32 = 5;

/// The most queued progress may take (its messages, and a fixed cost per event).
const PROGRESS_BUDGET: usize = 16 << 20;
const PROGRESS_COST: usize = 64;
/// What queued log messages may take, in KiB.
const LOG_BUDGET_KIB: u32 = 4 << 10;

enum Event {
    Done(ToolOutput),
    Progress(Progress),
    /// The call's progress overflowed the budget; its later events are dropped.
    GivenUp,
    Log(Box<LogEvent>),
}

/// A server's `notifications/message`: `data` is JSON text as the server sent it, for the
/// host's `onLog`; `text` is what the default printer prints, the server's secrets hidden.
struct LogEvent {
    server: String,
    level: String,
    data: String,
    text: String,
    /// Its share of the log budget, returned as JS takes it.
    _room: OwnedSemaphorePermit,
}

#[derive(Default)]
struct Queue {
    /// Each with its call's id (none for a log message).
    events: Vec<(u64, Event)>,
    progress_bytes: usize,
    /// Calls given up whose outcome has not come yet.
    given_up: HashSet<u64>,
}

/// What the wake-up, on the JS thread, takes from.
struct Shared {
    events: Mutex<Queue>,
    /// Calls started and not yet taken as done; touched only on the JS thread.
    in_flight: AtomicUsize,
    /// The threadsafe function, once made: taking the last call lets Node exit.
    wake: OnceLock<RawWake>,
}

struct RawWake(sys::napi_threadsafe_function);

// SAFETY: a threadsafe function's handle may be used from any thread; ref and unref, the
// only uses here, happen on the JS thread.
unsafe impl Send for RawWake {}
unsafe impl Sync for RawWake {}

pub struct CallQueue {
    shared: Arc<Shared>,
    wake: Wake,
    log_room: Arc<Semaphore>,
}

impl CallQueue {
    /// A queue whose batches go to `wake(batch)` on the JS thread.
    pub fn new(wake: WakeFn<'_>) -> Result<Arc<Self>> {
        let shared = Arc::new(Shared {
            events: Mutex::default(),
            in_flight: AtomicUsize::new(0),
            wake: OnceLock::new(),
        });
        let taker = shared.clone();
        let wake: Wake = wake
            .build_threadsafe_function::<()>()
            .callee_handled::<false>()
            .weak::<true>()
            .build_callback(move |ctx| {
                // The calls this batch's continuations start go out together, at the end of
                // the loop's turn.
                cork();
                Ok(taker.take(&ctx.env))
            })?;
        let _ = shared.wake.set(RawWake(wake.raw()));
        Ok(Arc::new(CallQueue {
            shared,
            wake,
            log_room: Arc::new(Semaphore::new(LOG_BUDGET_KIB as usize)),
        }))
    }

    /// Queues `event` of `call` (0 for none), unless the call has been given up; progress
    /// past the budget gives it up.
    fn push(&self, call: u64, mut event: Event) {
        let first = {
            let mut queue = self.shared.queue();
            if !queue.given_up.is_empty() && queue.given_up.contains(&call) {
                if let Event::Done(_) = event {
                    queue.given_up.remove(&call);
                }
                return;
            }
            if let Event::Progress(progress) = &event {
                let cost = PROGRESS_COST + progress.message.as_ref().map_or(0, String::len);
                if queue.progress_bytes + cost > PROGRESS_BUDGET {
                    queue.given_up.insert(call);
                    event = Event::GivenUp;
                } else {
                    queue.progress_bytes += cost;
                }
            }
            queue.events.push((call, event));
            queue.events.len() == 1
        };
        if first {
            self.wake.call((), ThreadsafeFunctionCallMode::NonBlocking);
        }
    }

    /// Counts a call about to start; the first keeps Node's event loop alive.
    pub fn started(&self, env: &Env) -> Result<()> {
        // Node aborts a threadsafe function as its environment goes away; its handle is
        // then freed. Both happen on the JS thread, as this does, so the check holds.
        if self.shared.in_flight.fetch_add(1, Ordering::Relaxed) == 0 && !self.wake.aborted() {
            self.shared.keep_alive(env, true)?;
        }
        Ok(())
    }
}

impl Shared {
    fn queue(&self) -> MutexGuard<'_, Queue> {
        lock(&self.events)
    }

    /// Everything queued so far; on the JS thread, as its threadsafe function runs.
    fn take(&self, env: &Env) -> Batch {
        let events = {
            let mut queue = self.queue();
            queue.progress_bytes = 0;
            std::mem::take(&mut queue.events)
        };
        let done = events
            .iter()
            .filter(|(_, event)| matches!(event, Event::Done(_) | Event::GivenUp))
            .count();
        if done > 0 && self.in_flight.fetch_sub(done, Ordering::Relaxed) == done {
            // Failing, Node would only stay alive until the source is freed.
            let _ = self.keep_alive(env, false);
        }
        Batch(events)
    }

    fn keep_alive(&self, env: &Env, alive: bool) -> Result<()> {
        let Some(RawWake(wake)) = self.wake.get() else {
            return Ok(());
        };
        let env = env.raw();
        // SAFETY: on the JS thread (we have its Env) with a live threadsafe function.
        let status = unsafe {
            if alive {
                sys::napi_ref_threadsafe_function(env, *wake)
            } else {
                sys::napi_unref_threadsafe_function(env, *wake)
            }
        };
        match status {
            sys::Status::napi_ok => Ok(()),
            status => Err(Error::new(
                Status::from(status),
                "cannot (un)ref the call queue",
            )),
        }
    }
}

/// One wake-up's events as JS takes them, flat: `[id, kind, a, b, c, ...]`. For an
/// outcome, kind 0, `output, isError, content` (JSON text or null), or kind 4 when `output`
/// is the result's `structuredContent` as JSON text; for progress, kind 1,
/// `progress, total, message` (null when absent); kind 2, a call given up, has none; a log
/// message, kind 3, has the server's name in place of the id, then `level, data, text`; a
/// failure toolnexus composed, kind 5, `output, code`.
struct Batch(Vec<(u64, Event)>);

impl ToNapiValue for Batch {
    unsafe fn to_napi_value(raw_env: sys::napi_env, batch: Self) -> Result<sys::napi_value> {
        let env = Env::from_raw(raw_env);
        let mut array = env.create_array(batch.0.len() as u32 * 5)?;
        for (i, (call, event)) in batch.0.into_iter().enumerate() {
            let at = i as u32 * 5;
            match event {
                Event::Done(ToolOutput {
                    output,
                    code: Some(code),
                    ..
                }) => {
                    array.set(at, call as f64)?;
                    array.set(at + 1, FAILED)?;
                    array.set(at + 2, output)?;
                    array.set(at + 3, code.as_str())?;
                }
                Event::Done(output) => {
                    array.set(at, call as f64)?;
                    let kind = if output.structured.is_some() {
                        DONE_STRUCTURED
                    } else {
                        DONE
                    };
                    array.set(at + 1, kind)?;
                    array.set(at + 2, output.output)?;
                    array.set(at + 3, output.is_error)?;
                    array.set(at + 4, output.content.map(|c| c.to_string()))?;
                }
                Event::Progress(progress) => {
                    array.set(at, call as f64)?;
                    array.set(at + 1, PROGRESS)?;
                    array.set(at + 2, progress.progress)?;
                    array.set(at + 3, progress.total)?;
                    array.set(at + 4, progress.message)?;
                }
                // Settles the call as done; its own outcome is dropped when it comes.
                Event::GivenUp => {
                    array.set(at, call as f64)?;
                    array.set(at + 1, GIVEN_UP)?;
                }
                Event::Log(log) => {
                    let LogEvent {
                        server,
                        level,
                        data,
                        text,
                        ..
                    } = *log;
                    array.set(at, server)?;
                    array.set(at + 1, LOG)?;
                    array.set(at + 2, level)?;
                    array.set(at + 3, data)?;
                    array.set(at + 4, text)?;
                }
            }
        }
        // SAFETY: the array was made in this env, on its thread.
        unsafe { Array::to_napi_value(raw_env, array) }
    }
}

impl CallSink for CallQueue {
    fn progress(&self, call: u64, progress: Progress) {
        self.push(call, Event::Progress(progress));
    }

    fn done(&self, call: u64, output: ToolOutput) {
        self.push(call, Event::Done(output));
    }
}

impl Logger for CallQueue {
    fn log(
        &self,
        server: &str,
        level: &str,
        data: Value,
        text: String,
    ) -> Pin<Box<dyn Future<Output = ()> + Send + '_>> {
        let data = data.to_string();
        let cost = kib(data.len() + text.len()).min(LOG_BUDGET_KIB);
        let (server, level) = (server.to_owned(), level.to_owned());
        Box::pin(async move {
            // Closed only as the queue goes: nothing is left to take the message then.
            let Ok(room) = self.log_room.clone().acquire_many_owned(cost).await else {
                return;
            };
            if self.wake.aborted() {
                return; // Node is tearing the environment down
            }
            let log = LogEvent {
                server,
                level,
                data,
                text,
                _room: room,
            };
            self.push(0, Event::Log(Box::new(log)));
        })
    }
}
