//! The Redis (or Valkey) backend: one multiplexed connection that redis-rs's
//! `ConnectionManager` re-establishes, opened lazily so that a store starts whether or not
//! the server answers, and a pub/sub connection per subscription, re-established here.

use std::time::Duration;

use futures::StreamExt;
use redis::aio::{ConnectionManager, ConnectionManagerConfig};
use redis::{AsyncCommands, Client, Script};
use tokio::sync::mpsc;

use super::backend::{Backend, Feed, StateError, StateFuture};

/// How long one connection attempt and one answer may take.
const CONNECT: Duration = Duration::from_millis(1_000);
const ANSWER: Duration = Duration::from_millis(1_000);
/// Waits between attempts to re-establish a subscription: doubled up to the cap.
const RETRY_FIRST: Duration = Duration::from_millis(100);
const RETRY_CAP: Duration = Duration::from_millis(2_000);
/// Tries of a command again after a dropped connection: 25, 50 and 100 ms later.
const RETRIES: usize = 3;

/// Compare-and-set in one step. A key of another type than a string counts as absent, so
/// that a foreign value is replaced, never a reason to fail.
const CAS: &str = r"
local kind = redis.call('TYPE', KEYS[1]).ok
local current = false
if kind == 'string' then current = redis.call('GET', KEYS[1]) end
if ARGV[1] == '0' then
  if current then return 0 end
elseif current ~= ARGV[2] then
  return 0
end
if ARGV[3] == '0' then
  redis.call('DEL', KEYS[1])
elseif ARGV[5] ~= '0' then
  redis.call('SET', KEYS[1], ARGV[4], 'PX', ARGV[5])
else
  redis.call('SET', KEYS[1], ARGV[4])
end
return 1
";

pub struct RedisState {
    client: Client,
    connection: ConnectionManager,
    /// The URL without its user and password, for messages.
    shown: String,
    cas: Script,
}

impl RedisState {
    /// A backend for `url` (`redis://` or `rediss://`). Connects on first use.
    pub fn open(url: &str) -> Result<RedisState, StateError> {
        let shown = shown_url(url);
        let scheme_ok = url.starts_with("redis://") || url.starts_with("rediss://");
        let client = match scheme_ok {
            true => Client::open(url).ok(),
            false => None,
        };
        let Some(client) = client else {
            return Err(StateError::Config(format!(
                "the state URL {shown} is not a redis:// or rediss:// URL"
            )));
        };
        // rediss:// builds its TLS configuration on the process's provider, as HTTP does.
        crate::net::install_crypto_provider();
        let config = ConnectionManagerConfig::new()
            .set_connection_timeout(Some(CONNECT))
            .set_response_timeout(Some(ANSWER))
            .set_number_of_retries(1)
            .set_max_delay(RETRY_CAP);
        let connection = ConnectionManager::new_lazy_with_config(client.clone(), config)
            .map_err(|e| unavailable(&shown, &e))?;
        Ok(RedisState {
            client,
            connection,
            shown,
            cas: Script::new(CAS),
        })
    }

    fn failed(&self, error: &redis::RedisError) -> StateError {
        unavailable(&self.shown, error)
    }

    /// Runs `op` on the connection, again (up to `RETRIES` times, a little later each
    /// time) when the connection had dropped: the first commands after a server restart
    /// meet the old connection, and the manager makes a new one meanwhile.
    async fn run<T, F, Fut>(&self, op: F) -> Result<T, StateError>
    where
        F: Fn(ConnectionManager) -> Fut,
        Fut: std::future::Future<Output = redis::RedisResult<T>>,
    {
        let mut wait = RETRY_FIRST / 4;
        for _ in 0..RETRIES {
            match op(self.connection.clone()).await {
                Err(e) if e.is_unrecoverable_error() || e.is_connection_dropped() => {
                    tokio::time::sleep(wait).await;
                    wait *= 2;
                }
                done => return done.map_err(|e| self.failed(&e)),
            }
        }
        op(self.connection.clone())
            .await
            .map_err(|e| self.failed(&e))
    }

    /// One subscription's life: connect, subscribe, forward, until the link drops.
    async fn follow(&self, channel: &str, feed: &mpsc::Sender<Feed>) -> Result<(), StateError> {
        let connecting = tokio::time::timeout(CONNECT, self.client.get_async_pubsub());
        let mut pubsub = connecting
            .await
            .map_err(|_| StateError::TimedOut(CONNECT))?
            .map_err(|e| self.failed(&e))?;
        pubsub
            .subscribe(channel)
            .await
            .map_err(|e| self.failed(&e))?;
        if feed.send(Feed::Joined).await.is_err() {
            return Ok(());
        }
        let mut messages = pubsub.into_on_message();
        loop {
            tokio::select! {
                message = messages.next() => {
                    let Some(message) = message else {
                        return Err(StateError::Unavailable(format!(
                            "the Redis server at {} closed the connection", self.shown
                        )));
                    };
                    // A payload that is not text is nobody's news of ours.
                    let Ok(text) = message.get_payload::<String>() else { continue };
                    if feed.send(Feed::Message(text)).await.is_err() {
                        return Ok(());
                    }
                }
                _ = feed.closed() => return Ok(()),
            }
        }
    }
}

impl Backend for RedisState {
    fn get(&self, key: &str) -> StateFuture<'_, Option<String>> {
        let keys = [key.to_owned()];
        Box::pin(async move {
            // MGET answers nil for a key of another type, where GET would fail.
            let keys = &keys;
            let values: Vec<Option<String>> =
                self.run(|mut c| async move { c.mget(keys).await }).await?;
            Ok(values.into_iter().next().flatten())
        })
    }

    fn get_many<'a>(&'a self, keys: &'a [String]) -> StateFuture<'a, Vec<Option<String>>> {
        Box::pin(async move {
            if keys.is_empty() {
                return Ok(Vec::new());
            }
            self.run(|mut c| async move { c.mget(keys).await }).await
        })
    }

    fn set(&self, key: &str, value: String, ttl: Option<Duration>) -> StateFuture<'_, ()> {
        let key = key.to_owned();
        Box::pin(async move {
            let (key, value) = (&key, &value);
            self.run(|mut c| async move {
                match ttl {
                    Some(ttl) => c.pset_ex(key, value, millis(ttl)).await,
                    None => c.set(key, value).await,
                }
            })
            .await
        })
    }

    fn delete(&self, key: &str) -> StateFuture<'_, ()> {
        let key = key.to_owned();
        Box::pin(async move {
            let key = &key;
            self.run(|mut c| async move { c.del(key).await }).await
        })
    }

    fn compare_and_set(
        &self,
        key: &str,
        expected: Option<String>,
        value: Option<String>,
        ttl: Option<Duration>,
    ) -> StateFuture<'_, bool> {
        let key = key.to_owned();
        Box::pin(async move {
            let mut invocation = self.cas.key(&key);
            invocation
                .arg(if expected.is_some() { "1" } else { "0" })
                .arg(expected.unwrap_or_default())
                .arg(if value.is_some() { "1" } else { "0" })
                .arg(value.unwrap_or_default())
                .arg(ttl.map_or(0, millis));
            let invocation = &invocation;
            // Run again after a dropped connection, it may find its own write: a `false`
            // then, which every caller takes as "read again and retry".
            let done: i64 = self
                .run(|mut c| async move { invocation.invoke_async(&mut c).await })
                .await?;
            Ok(done == 1)
        })
    }

    fn publish(&self, channel: &str, message: String) -> StateFuture<'_, ()> {
        let channel = channel.to_owned();
        Box::pin(async move {
            let (channel, message) = (&channel, &message);
            let _: i64 = self
                .run(|mut c| async move { c.publish(channel, message).await })
                .await?;
            Ok(())
        })
    }

    fn subscribe(&self, channel: &str, feed: mpsc::Sender<Feed>) -> StateFuture<'_, ()> {
        let channel = channel.to_owned();
        Box::pin(async move {
            let mut wait = RETRY_FIRST;
            while !feed.is_closed() {
                let lost = match self.follow(&channel, &feed).await {
                    Ok(()) => return Ok(()),
                    Err(lost) => lost,
                };
                if feed.send(Feed::Lost(lost.to_string())).await.is_err() {
                    return Ok(());
                }
                tokio::select! {
                    _ = tokio::time::sleep(wait) => {}
                    _ = feed.closed() => return Ok(()),
                }
                wait = (wait * 2).min(RETRY_CAP);
            }
            Ok(())
        })
    }
}

/// At least a millisecond: Redis refuses an expiry of 0.
fn millis(ttl: Duration) -> u64 {
    u64::try_from(ttl.as_millis()).unwrap_or(u64::MAX).max(1)
}

fn unavailable(shown: &str, error: &redis::RedisError) -> StateError {
    // redis-rs's messages name the server's error or the I/O failure, never the URL's
    // credentials (it is given none of the URL to print).
    StateError::Unavailable(format!("the Redis server at {shown} failed: {error}"))
}

/// `url` without user and password: `redis://host:port/db`.
pub fn shown_url(url: &str) -> String {
    let Some((scheme, rest)) = url.split_once("://") else {
        return "(not a URL)".to_owned();
    };
    let authority_end = rest.find('/').unwrap_or(rest.len());
    let (authority, path) = rest.split_at(authority_end);
    let host = authority
        .rsplit_once('@')
        .map_or(authority, |(_, host)| host);
    // A query may carry a password too (`?password=`); it is never shown.
    let path = path.split('?').next().unwrap_or_default();
    format!("{scheme}://{host}{path}")
}
