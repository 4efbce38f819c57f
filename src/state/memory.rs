//! A backend in memory that can be made to fail and counts what it is asked: for the
//! tests of what runs on a shared state.

use std::collections::HashMap;
use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::time::Duration;

use tokio::sync::mpsc;

use super::{Backend, Feed, StateError, StateFuture};
use crate::lock::lock;

#[derive(Default)]
pub struct Memory {
    pub values: Mutex<HashMap<String, String>>,
    /// Every operation fails while it is set.
    pub down: AtomicBool,
    /// Operations asked of it: round trips, for a real backend.
    pub ops: AtomicUsize,
}

impl Memory {
    fn check(&self) -> Result<(), StateError> {
        self.ops.fetch_add(1, Ordering::SeqCst);
        match self.down.load(Ordering::SeqCst) {
            true => Err(StateError::Unavailable("down".into())),
            false => Ok(()),
        }
    }
}

impl Backend for Memory {
    fn get(&self, key: &str) -> StateFuture<'_, Option<String>> {
        let key = key.to_owned();
        Box::pin(async move {
            self.check()?;
            Ok(lock(&self.values).get(&key).cloned())
        })
    }
    fn set(&self, key: &str, value: String, _: Option<Duration>) -> StateFuture<'_, ()> {
        let key = key.to_owned();
        Box::pin(async move {
            self.check()?;
            lock(&self.values).insert(key, value);
            Ok(())
        })
    }
    fn delete(&self, key: &str) -> StateFuture<'_, ()> {
        let key = key.to_owned();
        Box::pin(async move {
            self.check()?;
            lock(&self.values).remove(&key);
            Ok(())
        })
    }
    fn compare_and_set(
        &self,
        key: &str,
        expected: Option<String>,
        value: Option<String>,
        _: Option<Duration>,
    ) -> StateFuture<'_, bool> {
        let key = key.to_owned();
        Box::pin(async move {
            self.check()?;
            let mut values = lock(&self.values);
            if values.get(&key) != expected.as_ref() {
                return Ok(false);
            }
            match value {
                Some(value) => values.insert(key, value),
                None => values.remove(&key),
            };
            Ok(true)
        })
    }
    fn publish(&self, _: &str, _: String) -> StateFuture<'_, ()> {
        Box::pin(async move { self.check() })
    }
    fn subscribe(&self, _: &str, _: mpsc::Sender<Feed>) -> StateFuture<'_, ()> {
        Box::pin(std::future::pending())
    }
}
