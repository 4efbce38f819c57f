//! Counts of native handles JS has not yet collected, closed or not. Tests read them to
//! prove that a dropped source or store is freed: a threadsafe function is a GC root, so
//! any JS callback it holds must not reach back to its own handle.

use std::sync::atomic::{AtomicU32, Ordering};

use napi_derive::napi;

pub struct Tally(AtomicU32);

pub static SOURCES: Tally = Tally(AtomicU32::new(0));
pub static STORES: Tally = Tally(AtomicU32::new(0));

impl Tally {
    /// Counts one more live handle until the returned guard is dropped with it.
    pub fn count(&'static self) -> Counted {
        self.0.fetch_add(1, Ordering::Relaxed);
        Counted(self)
    }

    fn get(&self) -> u32 {
        self.0.load(Ordering::Relaxed)
    }
}

pub struct Counted(&'static Tally);

impl Drop for Counted {
    fn drop(&mut self) {
        self.0.0.fetch_sub(1, Ordering::Relaxed);
    }
}

#[napi(object)]
pub struct LiveHandles {
    pub sources: u32,
    pub stores: u32,
}

/// A diagnostic for tests, not part of the public API.
#[napi(catch_unwind, js_name = "liveHandles")]
pub fn live_handles() -> LiveHandles {
    LiveHandles {
        sources: SOURCES.get(),
        stores: STORES.get(),
    }
}
