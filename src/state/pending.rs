//! Writes the shared state could not take, kept until it answers again: the latest per
//! key, at most `MAX` keys (the oldest dropped first), each with the expiry it was given.

use std::time::{Duration, Instant};

/// The most keys kept: a fleet's state is small (a registry, listings, sign-ins).
const MAX: usize = 1024;

#[derive(Debug, Clone, PartialEq)]
pub enum Write {
    Set {
        value: String,
        /// When the value would have expired, had it been written.
        expires: Option<Instant>,
    },
    Delete,
}

impl Write {
    pub fn set(value: String, ttl: Option<Duration>) -> Write {
        Write::Set {
            value,
            expires: ttl.map(|ttl| Instant::now() + ttl),
        }
    }
}

#[derive(Default)]
pub struct Pending {
    /// Oldest first; one entry per key.
    writes: Vec<(String, Write)>,
    dropped: usize,
}

impl Pending {
    pub fn keep(&mut self, key: String, write: Write) {
        self.writes.retain(|(k, _)| *k != key);
        if self.writes.len() == MAX {
            self.writes.remove(0);
            self.dropped += 1;
        }
        self.writes.push((key, write));
    }

    /// Every write kept, oldest first, leaving none; a value whose expiry passed meanwhile
    /// is no longer worth writing.
    pub fn take(&mut self) -> Vec<(String, Write)> {
        let now = Instant::now();
        let writes = std::mem::take(&mut self.writes);
        writes
            .into_iter()
            .filter(|(_, write)| match write {
                Write::Set {
                    expires: Some(at), ..
                } => *at > now,
                _ => true,
            })
            .collect()
    }

    /// Puts back writes that failed again, behind any kept meanwhile (which are newer).
    pub fn restore(&mut self, failed: Vec<(String, Write)>) {
        let newer = std::mem::take(&mut self.writes);
        for (key, write) in failed.into_iter().chain(newer) {
            self.keep(key, write);
        }
    }

    pub fn len(&self) -> usize {
        self.writes.len()
    }

    /// How many writes were dropped for room since the state was last reached.
    pub fn dropped(&self) -> usize {
        self.dropped
    }

    pub fn reached(&mut self) {
        self.dropped = 0;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_latest_write_per_key_is_kept_within_the_bound() {
        let mut pending = Pending::default();
        pending.keep("a".into(), Write::set("1".into(), None));
        pending.keep("a".into(), Write::set("2".into(), None));
        pending.keep("b".into(), Write::Delete);
        assert_eq!(pending.len(), 2);
        for i in 0..MAX {
            pending.keep(format!("k{i}"), Write::Delete);
        }
        assert_eq!(pending.len(), MAX);
        assert_eq!(pending.dropped(), 2);
        let keys: Vec<String> = pending.take().into_iter().map(|(k, _)| k).collect();
        assert_eq!(keys.first().map(String::as_str), Some("k0"));
        assert_eq!(pending.len(), 0);
    }

    #[test]
    fn an_expired_value_is_not_written_late() {
        let mut pending = Pending::default();
        pending.keep("gone".into(), Write::set("v".into(), Some(Duration::ZERO)));
        pending.keep(
            "kept".into(),
            Write::set("v".into(), Some(Duration::from_secs(60))),
        );
        let keys: Vec<String> = pending.take().into_iter().map(|(k, _)| k).collect();
        assert_eq!(keys, ["kept"]);
    }

    #[test]
    fn writes_that_failed_again_stay_behind_newer_ones() {
        let mut pending = Pending::default();
        pending.keep("a".into(), Write::set("old".into(), None));
        let failed = pending.take();
        pending.keep("a".into(), Write::set("new".into(), None));
        pending.restore(failed);
        let taken = pending.take();
        assert_eq!(taken, [("a".to_owned(), Write::set("new".into(), None))]);
    }
}
