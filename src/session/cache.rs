//! Answers kept for as long as their server said they stay fresh (SEP-2549: `ttlMs` and
//! `cacheScope` on listings and reads). A session's own answers are kept in memory, so a
//! `private` one never leaves the credentials it was asked with; a `public` one is also
//! offered to the host's shelf (a fleet's shared state), where other instances find it.
//! An answer without a positive `ttlMs` is never kept.

use std::collections::{HashMap, VecDeque};
use std::future::Future;
use std::pin::Pin;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use rmcp::model::ServerNotification;
use serde::Deserialize;

use crate::lock::lock;

/// The longest a server may have an answer kept, as the official client bounds it.
pub const MAX_TTL: Duration = Duration::from_secs(24 * 60 * 60);

/// How many reads are kept per session: their URIs are the server's to multiply.
const MAX_READS: usize = 512;

/// How a host wants one request answered.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum CacheMode {
    /// A fresh kept answer if there is one (the default).
    #[default]
    Use,
    /// Always ask, and keep the answer.
    Refresh,
    /// Always ask, and keep nothing.
    Bypass,
}

impl CacheMode {
    /// `"use"`, `"refresh"` or `"bypass"`.
    pub fn parse(text: &str) -> Option<CacheMode> {
        match text {
            "use" => Some(CacheMode::Use),
            "refresh" => Some(CacheMode::Refresh),
            "bypass" => Some(CacheMode::Bypass),
            _ => None,
        }
    }
}

/// What a result says of its own freshness.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Freshness {
    pub ttl: Option<Duration>,
    /// `cacheScope: "public"`; anything else, or nothing, is private.
    pub public: bool,
}

impl Freshness {
    /// Read from a result's `ttlMs` and `cacheScope`, ignoring its other members.
    pub fn of(result: &str) -> Freshness {
        #[derive(Deserialize)]
        struct Hints {
            #[serde(rename = "ttlMs", default)]
            ttl_ms: Option<f64>,
            #[serde(rename = "cacheScope", default)]
            cache_scope: Option<String>,
        }
        let hints: Option<Hints> = serde_json::from_str(result).ok();
        hints.map_or_else(Freshness::default, |h| {
            Freshness::from_hints(h.ttl_ms, h.cache_scope.as_deref())
        })
    }

    pub fn from_hints(ttl_ms: Option<f64>, scope: Option<&str>) -> Freshness {
        // Bounded before it becomes a Duration, which a huge float would not fit.
        let max_ms = MAX_TTL.as_millis() as f64;
        let ttl = ttl_ms
            .filter(|ms| ms.is_finite() && *ms > 0.0)
            .map(|ms| Duration::from_secs_f64(ms.min(max_ms) / 1000.0));
        Freshness {
            ttl,
            public: scope == Some("public"),
        }
    }
}

/// A shelf's answer, when it has one: its text, and how long it stays fresh.
pub type Shelved<'a> = Pin<Box<dyn Future<Output = Option<(String, Duration)>> + Send + 'a>>;

/// Where public answers are shared beyond this session, by a key the host scopes to the
/// server (its entry without secrets).
pub trait Shelf: Send + Sync {
    /// A kept answer and how long it stays fresh, if one is.
    fn get<'a>(&'a self, key: &'a str) -> Shelved<'a>;
    /// Keeps `value` for `ttl`; what fails is the shelf's own business.
    fn put(&self, key: &str, value: Arc<str>, ttl: Duration);
}

struct Kept {
    value: Arc<str>,
    until: Instant,
}

/// A session's kept answers, by method and what they were asked of.
#[derive(Default)]
pub struct Responses {
    kept: Mutex<Store>,
}

#[derive(Default)]
struct Store {
    entries: HashMap<(&'static str, String), Kept>,
    /// The reads' keys in the order they were kept, the oldest let go first.
    reads: VecDeque<String>,
}

impl Responses {
    /// The fresh answer to `method` of `key`, if one is kept.
    pub fn get(&self, method: &'static str, key: &str) -> Option<Arc<str>> {
        let store = lock(&self.kept);
        let kept = store.entries.get(&(method, key.to_owned()))?;
        (kept.until > Instant::now()).then(|| kept.value.clone())
    }

    /// Keeps `value` as the answer to `method` of `key` for `ttl`.
    pub fn put(&self, method: &'static str, key: &str, value: Arc<str>, ttl: Duration) {
        let mut store = lock(&self.kept);
        let until = Instant::now() + ttl;
        let fresh = store
            .entries
            .insert((method, key.to_owned()), Kept { value, until })
            .is_none();
        if fresh && method == "resources/read" {
            store.reads.push_back(key.to_owned());
            if store.reads.len() > MAX_READS
                && let Some(oldest) = store.reads.pop_front()
            {
                store.entries.remove(&("resources/read", oldest));
            }
        }
    }

    /// Forgets what `notification` says changed: a listing, or a read resource.
    pub fn forget_changed(&self, notification: &ServerNotification) {
        match notification {
            ServerNotification::ResourceListChangedNotification(_) => {
                self.forget("resources/list", "");
                self.forget("resources/templates/list", "");
            }
            ServerNotification::PromptListChangedNotification(_) => self.forget("prompts/list", ""),
            ServerNotification::ResourceUpdatedNotification(updated) => {
                self.forget("resources/read", &updated.params.uri);
            }
            _ => {}
        }
    }

    /// Forgets the answer to `method` of `key`.
    pub fn forget(&self, method: &'static str, key: &str) {
        let mut store = lock(&self.kept);
        if store.entries.remove(&(method, key.to_owned())).is_some() && method == "resources/read" {
            store.reads.retain(|read| read != key);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hints_are_read_and_bounded() {
        let fresh = Freshness::of(r#"{"contents":[],"ttlMs":1500,"cacheScope":"public"}"#);
        assert_eq!(
            fresh,
            Freshness {
                ttl: Some(Duration::from_millis(1500)),
                public: true
            }
        );
        assert_eq!(Freshness::of(r#"{"ttlMs":0}"#).ttl, None);
        assert_eq!(
            Freshness::of(r#"{"ttlMs":-5,"cacheScope":"private"}"#),
            Freshness::default()
        );
        assert_eq!(Freshness::of(r#"{"ttlMs":1e300}"#).ttl, Some(MAX_TTL));
        assert!(!Freshness::of(r#"{"ttlMs":10}"#).public);
    }

    #[test]
    fn kept_until_stale_and_reads_bounded() {
        let responses = Responses::default();
        responses.put("prompts/list", "", Arc::from("[]"), Duration::from_secs(60));
        assert_eq!(responses.get("prompts/list", "").as_deref(), Some("[]"));
        responses.put("resources/list", "", Arc::from("[]"), Duration::ZERO);
        assert!(responses.get("resources/list", "").is_none());
        for i in 0..=MAX_READS {
            responses.put(
                "resources/read",
                &i.to_string(),
                Arc::from("{}"),
                Duration::from_secs(60),
            );
        }
        assert!(responses.get("resources/read", "0").is_none());
        assert!(
            responses
                .get("resources/read", &MAX_READS.to_string())
                .is_some()
        );
        responses.forget("prompts/list", "");
        assert!(responses.get("prompts/list", "").is_none());
    }
}
