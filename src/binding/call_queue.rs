//! Call outcomes on their way to JS, in batches. Whatever thread learns of a call's
//! progress or result queues it; the JS thread is woken once when the queue goes from
//! empty to non-empty and takes everything queued by then, so many calls in flight cost
//! one wake-up, and no call needs a promise or a threadsafe function of its own.
//!
//! While the JS thread is busy, progress piles up here: past a budget, the call whose
//! progress does not fit is given up (JS then aborts it), since its progress can no longer
//! be delivered in order. Outcomes always fit: there is one per call.

use std::collections::HashSet;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Mutex, MutexGuard};

use napi::bindgen_prelude::*;
use napi::threadsafe_function::{ThreadsafeFunction, ThreadsafeFunctionCallMode};

use crate::session::{CallSink, Progress};
use crate::tool_result::ToolOutput;

/// The JS callback that takes the queued events. Weak: it keeps Node alive only while
/// calls are in flight (see `started`).
pub type Wake = ThreadsafeFunction<(), Unknown<'static>, (), Status, false, true>;

/// Event kinds in the flat array `take` returns.
const DONE: u32 = 0;
const PROGRESS: u32 = 1;
const GIVEN_UP: u32 = 2;

/// The most queued progress may take (its messages, and a fixed cost per event).
const PROGRESS_BUDGET: usize = 16 << 20;
const PROGRESS_COST: usize = 64;

enum Event {
    Done(ToolOutput),
    Progress(Progress),
    /// The call's progress overflowed the budget; its later events are dropped.
    GivenUp,
}

#[derive(Default)]
struct Queue {
    events: Vec<(u64, Event)>,
    progress_bytes: usize,
    /// Calls given up whose outcome has not come yet.
    given_up: HashSet<u64>,
}

pub struct CallQueue {
    events: Mutex<Queue>,
    wake: Wake,
    /// Calls started and not yet taken as done; touched only on the JS thread.
    in_flight: AtomicUsize,
}

impl CallQueue {
    pub fn new(wake: Wake) -> Self {
        CallQueue {
            events: Mutex::new(Queue::default()),
            wake,
            in_flight: AtomicUsize::new(0),
        }
    }

    fn events(&self) -> MutexGuard<'_, Queue> {
        self.events.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Queues `event`; false when its call has been given up (now or before).
    fn push(&self, call: u64, mut event: Event) -> bool {
        let (first, accepted) = {
            let mut queue = self.events();
            if !queue.given_up.is_empty() && queue.given_up.contains(&call) {
                if let Event::Done(_) = event {
                    queue.given_up.remove(&call);
                }
                return false;
            }
            let mut accepted = true;
            if let Event::Progress(progress) = &event {
                let cost = PROGRESS_COST + progress.message.as_ref().map_or(0, String::len);
                if queue.progress_bytes + cost > PROGRESS_BUDGET {
                    queue.given_up.insert(call);
                    event = Event::GivenUp;
                    accepted = false;
                } else {
                    queue.progress_bytes += cost;
                }
            }
            queue.events.push((call, event));
            (queue.events.len() == 1, accepted)
        };
        if first {
            self.wake.call((), ThreadsafeFunctionCallMode::NonBlocking);
        }
        accepted
    }

    /// Queues a call's progress; false when the call is given up, its progress having
    /// overflowed the budget (the caller then ends it).
    pub fn offer_progress(&self, call: u64, progress: Progress) -> bool {
        self.push(call, Event::Progress(progress))
    }

    /// Counts a call about to start; the first keeps Node's event loop alive.
    pub fn started(&self, env: &Env) -> Result<()> {
        if self.in_flight.fetch_add(1, Ordering::Relaxed) == 0 {
            self.keep_alive(env, true)?;
        }
        Ok(())
    }

    fn keep_alive(&self, env: &Env, alive: bool) -> Result<()> {
        // Node aborts a threadsafe function as its environment goes away; its handle is
        // then freed. Both happen on the JS thread, as this does, so the check holds.
        if self.wake.aborted() {
            return Ok(());
        }
        let (env, wake) = (env.raw(), self.wake.raw());
        // SAFETY: on the JS thread (we have its Env) with a live threadsafe function.
        let status = unsafe {
            if alive {
                napi::sys::napi_ref_threadsafe_function(env, wake)
            } else {
                napi::sys::napi_unref_threadsafe_function(env, wake)
            }
        };
        match status {
            napi::sys::Status::napi_ok => Ok(()),
            status => Err(Error::new(
                Status::from(status),
                "cannot (un)ref the call queue",
            )),
        }
    }

    /// Every event queued so far, flat: `[id, kind, a, b, c, ...]`; for a result kind 0,
    /// `output, isError, content` (JSON text or null); for progress kind 1,
    /// `progress, total, message` (null when absent); kind 2, a call given up, has none.
    pub fn take<'env>(&self, env: &'env Env) -> Result<Array<'env>> {
        let events = {
            let mut queue = self.events();
            queue.progress_bytes = 0;
            std::mem::take(&mut queue.events)
        };
        let mut array = env.create_array(events.len() as u32 * 5)?;
        let mut done = 0;
        for (i, (call, event)) in events.into_iter().enumerate() {
            let at = i as u32 * 5;
            array.set(at, call as f64)?;
            match event {
                Event::Done(output) => {
                    done += 1;
                    array.set(at + 1, DONE)?;
                    array.set(at + 2, output.output)?;
                    array.set(at + 3, output.is_error)?;
                    array.set(at + 4, output.content.map(|c| c.to_string()))?;
                }
                Event::Progress(progress) => {
                    array.set(at + 1, PROGRESS)?;
                    array.set(at + 2, progress.progress)?;
                    array.set(at + 3, progress.total)?;
                    array.set(at + 4, progress.message)?;
                }
                // Settles the call as done; its own outcome is dropped when it comes.
                Event::GivenUp => {
                    done += 1;
                    array.set(at + 1, GIVEN_UP)?;
                }
            }
        }
        if done > 0 && self.in_flight.fetch_sub(done, Ordering::Relaxed) == done {
            self.keep_alive(env, false)?;
        }
        Ok(array)
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
