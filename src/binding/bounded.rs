//! A JS callback fed from other threads with a bounded queue. A threadsafe function's own
//! queue grows without limit while the JS thread is busy; here each queued call holds its
//! share of a budget until JS has run it, so a sender waits for room (backpressure).

use std::sync::Arc;

use napi::Status;
use napi::bindgen_prelude::{JsValuesTupleIntoVec, Unknown};
use napi::threadsafe_function::{ThreadsafeFunction, ThreadsafeFunctionCallMode};
use tokio::sync::{OwnedSemaphorePermit, Semaphore};

/// A threadsafe function taking `T`, whose return value is ignored. A weak one (the
/// default) does not keep Node's event loop alive.
pub type Callback<T, const WEAK: bool = true> =
    ThreadsafeFunction<T, Unknown<'static>, T, Status, false, WEAK>;

/// A callback that keeps Node's event loop alive while it is held, as a listening socket
/// does: the host is waiting for what it will be told.
pub type Listener<T> = Callback<T, false>;

pub struct Bounded<T: 'static + JsValuesTupleIntoVec, const WEAK: bool = true> {
    callback: Callback<T, WEAK>,
    room: Arc<Semaphore>,
    budget: u32,
}

impl<T: 'static + JsValuesTupleIntoVec, const WEAK: bool> Bounded<T, WEAK> {
    /// Calls queued at once may cost at most `budget` in all.
    pub fn new(callback: Callback<T, WEAK>, budget: u32) -> Self {
        Bounded {
            callback,
            room: Arc::new(Semaphore::new(budget as usize)),
            budget,
        }
    }

    /// Waits until `value`, costing `cost`, fits in the budget, then queues it. A value
    /// that costs more than the whole budget waits for all of it.
    pub async fn send(&self, value: T, cost: u32) {
        let cost = cost.clamp(1, self.budget);
        if let Ok(permit) = self.room.clone().acquire_many_owned(cost).await {
            self.queue(value, permit);
        }
    }

    fn queue(&self, value: T, permit: OwnedSemaphorePermit) {
        // The permit is returned once JS has run the callback, or with the call if it
        // could not be queued (Node is shutting down).
        self.callback.call_with_return_value(
            value,
            ThreadsafeFunctionCallMode::NonBlocking,
            move |_, _| {
                drop(permit);
                Ok(())
            },
        );
    }
}

/// The cost of `bytes` of text, in KiB: what a budget in KiB counts.
pub fn kib(bytes: usize) -> u32 {
    u32::try_from(1 + bytes / 1024).unwrap_or(u32::MAX)
}
