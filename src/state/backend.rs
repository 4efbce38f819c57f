//! The smallest set of operations a fleet needs of a database.

use std::fmt;
use std::future::Future;
use std::pin::Pin;
use std::time::Duration;

use tokio::sync::mpsc;

pub type StateFuture<'a, T> = Pin<Box<dyn Future<Output = Result<T, StateError>> + Send + 'a>>;

/// A key-value store of strings with expiry, compare-and-set and publish/subscribe.
/// Keys are whole (the namespace's prefix included); errors carry no value.
pub trait Backend: Send + Sync {
    fn get(&self, key: &str) -> StateFuture<'_, Option<String>>;

    /// The values of `keys`, in their order. One round trip where the backend can.
    fn get_many<'a>(&'a self, keys: &'a [String]) -> StateFuture<'a, Vec<Option<String>>> {
        Box::pin(async move {
            let mut values = Vec::with_capacity(keys.len());
            for key in keys {
                values.push(self.get(key).await?);
            }
            Ok(values)
        })
    }

    fn set(&self, key: &str, value: String, ttl: Option<Duration>) -> StateFuture<'_, ()>;

    fn delete(&self, key: &str) -> StateFuture<'_, ()>;

    /// Atomically: when `key`'s value is `expected` (`None`: absent), sets it to `value`
    /// (`None`: deletes it) and answers `true`; otherwise changes nothing, `false`.
    fn compare_and_set(
        &self,
        key: &str,
        expected: Option<String>,
        value: Option<String>,
        ttl: Option<Duration>,
    ) -> StateFuture<'_, bool>;

    fn publish(&self, channel: &str, message: String) -> StateFuture<'_, ()>;

    /// Follows `channel` until `feed` is closed: `Feed::Joined` each time the subscription
    /// is (re)established, each message, `Feed::Lost` when the link drops. The backend
    /// reconnects by itself; the future ends when `feed` closes.
    fn subscribe(&self, channel: &str, feed: mpsc::Sender<Feed>) -> StateFuture<'_, ()>;
}

/// What a subscription reports.
#[derive(Debug, Clone, PartialEq)]
pub enum Feed {
    /// Subscribed: messages published from now on arrive. After a loss, whatever was
    /// published meanwhile is gone, so a follower reads the state again.
    Joined,
    Message(String),
    /// The link dropped, for this reason; the backend is reconnecting.
    Lost(String),
}

/// Why the shared state could not be used. Its `Display` is the sentence users read; it
/// never holds a value or a password.
#[derive(Debug, Clone, PartialEq)]
pub enum StateError {
    /// The state option itself is unusable (a bad URL, key or namespace).
    Config(String),
    /// The state did not answer, or answered with an error.
    Unavailable(String),
    /// The state did not answer within the bound every operation has.
    TimedOut(Duration),
}

impl fmt::Display for StateError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            StateError::Config(reason) | StateError::Unavailable(reason) => f.write_str(reason),
            StateError::TimedOut(after) => write!(
                f,
                "the shared state did not answer within {} ms",
                after.as_millis()
            ),
        }
    }
}

impl std::error::Error for StateError {}
