//! One namespace of a fleet's state, as a store uses it.

use std::future::Future;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use ring::rand::{SecureRandom, SystemRandom};
use tokio::sync::{mpsc, watch};

use super::backend::{Backend, Feed, StateError};
use super::pending::{Pending, Write};
use super::sealed::Seal;
use crate::lock::lock;

/// The longest any one operation may take: nothing waits on the state for longer.
const BOUND: Duration = Duration::from_millis(2_000);
/// A value larger than this is not read: a fleet's values are listings and records.
pub const MAX_VALUE: usize = 32 << 20;
/// How often, and how far apart, a rejoining instance asks whether the state answers.
const ANSWER_TRIES: usize = 40;
const ANSWER_WAIT: Duration = Duration::from_millis(250);
/// Messages of the news channel waiting for their reader.
const FEED: usize = 256;

/// Whether the state answers.
#[derive(Debug, Clone, PartialEq)]
pub enum Health {
    /// Not yet reached since the store started.
    Connecting,
    Connected,
    /// Not reached, for this reason: the store works on from memory and files.
    Unavailable(String),
}

impl std::fmt::Debug for Shared {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Shared")
            .field("namespace", &self.namespace)
            .field("instance", &self.instance)
            .finish_non_exhaustive()
    }
}

pub struct Shared {
    backend: Arc<dyn Backend>,
    namespace: String,
    prefix: String,
    seal: Option<Seal>,
    /// This process's instance of the fleet: random, new every start.
    instance: String,
    health: watch::Sender<Health>,
    pending: Mutex<Pending>,
    /// Values this instance holds for the fleet (sign-ins): written back, where missing,
    /// when the state is reached again, as a state restarted empty has lost them.
    held: Mutex<std::collections::HashMap<String, String>>,
}

impl Shared {
    pub fn new(backend: Arc<dyn Backend>, namespace: &str, seal: Option<Seal>) -> Shared {
        Shared {
            backend,
            namespace: namespace.to_owned(),
            prefix: format!("toolnexus:{namespace}:"),
            seal,
            instance: random_id(),
            health: watch::Sender::new(Health::Connecting),
            pending: Mutex::default(),
            held: Mutex::default(),
        }
    }

    pub fn namespace(&self) -> &str {
        &self.namespace
    }

    pub fn instance(&self) -> &str {
        &self.instance
    }

    /// The whole key of `name` in this namespace.
    pub fn key(&self, name: &str) -> String {
        format!("{}{name}", self.prefix)
    }

    /// The seal for secrets; `None`: secrets are not to be shared.
    pub fn seal(&self) -> Option<&Seal> {
        self.seal.as_ref()
    }

    pub fn health(&self) -> Health {
        self.health.borrow().clone()
    }

    pub fn health_changes(&self) -> watch::Receiver<Health> {
        self.health.subscribe()
    }

    /// Runs `op` within the bound, and notes what it says of the state's health.
    async fn bounded<T>(
        &self,
        op: impl Future<Output = Result<T, StateError>>,
    ) -> Result<T, StateError> {
        let result = match tokio::time::timeout(BOUND, op).await {
            Ok(result) => result,
            Err(_) => Err(StateError::TimedOut(BOUND)),
        };
        match &result {
            Ok(_) => self.reached(),
            Err(error) => self.lost(error.to_string()),
        }
        result
    }

    fn reached(&self) {
        lock(&self.pending).reached();
        self.health.send_if_modified(|health| {
            let changed = *health != Health::Connected;
            *health = Health::Connected;
            changed
        });
    }

    fn lost(&self, reason: String) {
        self.health.send_if_modified(|health| {
            let changed = *health != Health::Unavailable(reason.clone());
            *health = Health::Unavailable(reason);
            changed
        });
    }

    /// The value of `name`; an oversized one counts as none.
    pub async fn get(&self, name: &str) -> Result<Option<String>, StateError> {
        let value = self.bounded(self.backend.get(&self.key(name))).await?;
        Ok(value.filter(|v| v.len() <= MAX_VALUE))
    }

    /// The values of `names`, in their order, in one round trip where the backend can.
    pub async fn get_many(&self, names: &[String]) -> Result<Vec<Option<String>>, StateError> {
        let keys: Vec<String> = names.iter().map(|name| self.key(name)).collect();
        let values = self.bounded(self.backend.get_many(&keys)).await?;
        let values = values.into_iter();
        Ok(values.map(|v| v.filter(|v| v.len() <= MAX_VALUE)).collect())
    }

    /// Writes `value` under `name`; kept and written later when the state does not answer.
    pub async fn put(&self, name: &str, value: String, ttl: Option<Duration>) {
        self.write(self.key(name), Write::set(value, ttl)).await;
    }

    /// Writes `value` under `name` as [`put`](Self::put) does, and holds it: should the
    /// state lose it, it is written back when the state is reached again.
    pub async fn hold(&self, name: &str, value: String) {
        lock(&self.held).insert(name.to_owned(), value.clone());
        self.put(name, value, None).await;
    }

    /// Deletes `name` and stops holding it.
    pub async fn release(&self, name: &str) {
        lock(&self.held).remove(name);
        self.remove(name).await;
    }

    /// Writes back each value held that the state no longer has; a newer one written by
    /// another instance meanwhile stays.
    async fn write_back(&self) {
        let held: Vec<(String, String)> = lock(&self.held)
            .iter()
            .map(|(k, v)| (k.clone(), v.clone()))
            .collect();
        for (name, value) in held {
            if self
                .compare_and_set(&name, None, Some(value), None)
                .await
                .is_err()
            {
                return;
            }
        }
    }

    /// Deletes `name`; kept and done later when the state does not answer.
    pub async fn remove(&self, name: &str) {
        self.write(self.key(name), Write::Delete).await;
    }

    async fn write(&self, key: String, write: Write) {
        if let Err(failed) = self.send(&key, &write).await {
            lock(&self.pending).keep(key, write);
            self.lost(failed.to_string());
        }
    }

    async fn send(&self, key: &str, write: &Write) -> Result<(), StateError> {
        let op = async {
            match write {
                Write::Set { value, expires } => {
                    let ttl = expires.map(|at| at.saturating_duration_since(Instant::now()));
                    self.backend.set(key, value.clone(), ttl).await
                }
                Write::Delete => self.backend.delete(key).await,
            }
        };
        self.bounded(op).await
    }

    /// Waits (a bounded while) until the state answers a command: after the news link is
    /// back, the connection for commands may still be re-established.
    async fn answers(&self) {
        for _ in 0..ANSWER_TRIES {
            if self.get("news").await.is_ok() {
                return;
            }
            tokio::time::sleep(ANSWER_WAIT).await;
        }
    }

    /// Writes what was kept while the state did not answer; what fails again stays kept.
    pub async fn flush(&self) {
        let writes = lock(&self.pending).take();
        let mut failed = Vec::new();
        for (key, write) in writes {
            if failed.is_empty() && self.send(&key, &write).await.is_ok() {
                continue;
            }
            failed.push((key, write));
        }
        if !failed.is_empty() {
            lock(&self.pending).restore(failed);
        }
    }

    /// Writes kept for later, and how many were dropped for room.
    pub fn pending(&self) -> (usize, usize) {
        let pending = lock(&self.pending);
        (pending.len(), pending.dropped())
    }

    pub async fn compare_and_set(
        &self,
        name: &str,
        expected: Option<String>,
        value: Option<String>,
        ttl: Option<Duration>,
    ) -> Result<bool, StateError> {
        let key = self.key(name);
        self.bounded(self.backend.compare_and_set(&key, expected, value, ttl))
            .await
    }

    /// Tells every instance of the namespace `message`. News is best-effort: an instance
    /// that missed some reads the state again when it rejoins.
    pub async fn publish(&self, message: String) {
        let channel = self.key("news");
        let _ = self.bounded(self.backend.publish(&channel, message)).await;
    }

    /// The namespace's news, until the receiver is dropped. Each `Joined` marks the state
    /// reached and writes what was kept; each `Lost` marks it unavailable.
    pub fn follow(self: &Arc<Self>) -> mpsc::Receiver<Feed> {
        let (raw_tx, mut raw) = mpsc::channel(FEED);
        let (tx, rx) = mpsc::channel(FEED);
        let backend = self.backend.clone();
        let channel = self.key("news");
        tokio::spawn(async move { backend.subscribe(&channel, raw_tx).await });
        let shared = self.clone();
        tokio::spawn(async move {
            while let Some(feed) = raw.recv().await {
                match &feed {
                    Feed::Joined => {
                        shared.answers().await;
                        shared.flush().await;
                        shared.write_back().await;
                    }
                    Feed::Lost(reason) => shared.lost(reason.clone()),
                    Feed::Message(_) => {}
                }
                if tx.send(feed).await.is_err() {
                    return;
                }
            }
        });
        rx
    }
}

/// 16 random hex digits (from the system's generator; a clock would do if it failed).
pub fn random_id() -> String {
    let mut bytes = [0u8; 8];
    if SystemRandom::new().fill(&mut bytes).is_err() {
        let now = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH);
        bytes = now.map(|d| d.as_nanos() as u64).unwrap_or(0).to_le_bytes();
    }
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}
