//! Sign-ins shared by a fleet: the token store over the shared state, each record sealed
//! before it leaves the host, and the lease that lets one instance at a time refresh a
//! sign-in. With rotating refresh tokens a refresh token must never be sent twice: the
//! instance that takes the lease reads the record again (another may have refreshed it
//! meanwhile), refreshes only if it still must, and writes the new tokens before it lets
//! the lease go; the others wait for the lease and read what it wrote.

use std::sync::Arc;
use std::time::{Duration, Instant};

use ring::digest::{SHA256, digest};

use super::token_store::{StoreError, StoreFuture, TokenStore};
use crate::state::{Shared, random_id};

/// How long a lease lasts unless let go: an instance killed while refreshing holds up
/// the others this long at most.
pub const LEASE: Duration = Duration::from_millis(10_000);
/// How often a waiting instance asks for the lease again.
const POLL: Duration = Duration::from_millis(25);

/// The fleet's token store: records sealed under the state's key, one key per server.
pub struct SharedTokens {
    shared: Arc<Shared>,
}

impl SharedTokens {
    /// `None` when the state has no key: sign-ins then stay in the host's own store.
    pub fn new(shared: Arc<Shared>) -> Option<SharedTokens> {
        shared.seal()?;
        Some(SharedTokens { shared })
    }
}

/// The state's name for what is kept for `key` (a server URL): a digest, so that the
/// state's key list does not say which servers a fleet signs in to.
fn name(kind: &str, key: &str) -> String {
    let hash = digest(&SHA256, key.as_bytes());
    let hex: String = hash.as_ref().iter().map(|b| format!("{b:02x}")).collect();
    format!("{kind}:{hex}")
}

impl TokenStore for SharedTokens {
    fn get(&self, key: &str) -> StoreFuture<'_, Option<String>> {
        let name = name("oauth", key);
        Box::pin(async move {
            let sealed = self.shared.get(&name).await.map_err(StoreError::Shared)?;
            let seal = self.shared.seal();
            let full = self.shared.key(&name);
            // A value that does not open (another fleet's, corrupt) is as good as none.
            Ok(sealed.and_then(|sealed| seal?.open(&full, &sealed)))
        })
    }

    fn set(&self, key: &str, value: String) -> StoreFuture<'_, ()> {
        let name = name("oauth", key);
        Box::pin(async move {
            let full = self.shared.key(&name);
            let sealed = self
                .shared
                .seal()
                .and_then(|seal| seal.seal(&full, &value))
                .ok_or(StoreError::Unsealed)?;
            self.shared.hold(&name, sealed).await;
            Ok(())
        })
    }

    fn delete(&self, key: &str) -> StoreFuture<'_, ()> {
        let name = name("oauth", key);
        Box::pin(async move {
            self.shared.release(&name).await;
            Ok(())
        })
    }
}

/// The fleet-wide refresh leases of one shared state.
#[derive(Clone)]
pub struct Leases {
    shared: Arc<Shared>,
}

impl Leases {
    pub fn new(shared: Arc<Shared>) -> Leases {
        Leases { shared }
    }

    /// Waits for the lease of the sign-in kept for `key`: a holder lets it go when its
    /// refresh is saved, a holder killed mid-refresh loses it within `LEASE`, so waiting
    /// twice that is ample. A state that does not answer holds up nothing for long: after
    /// `FAILURES` failures in a row the refresh goes on unshared (`Lease::unheld`), as
    /// calls do; one failure under load is no reason to.
    pub async fn acquire(&self, key: &str) -> Lease {
        const FAILURES: usize = 3;
        let name = name("lease", key);
        let token = random_id();
        let deadline = Instant::now() + 2 * LEASE;
        let mut failures = 0;
        while Instant::now() < deadline && failures < FAILURES {
            let taken = self
                .shared
                .compare_and_set(&name, None, Some(token.clone()), Some(LEASE))
                .await;
            match taken {
                Ok(true) => {
                    return Lease {
                        held: Some((self.shared.clone(), name, token)),
                        since: Instant::now(),
                    };
                }
                Ok(false) => failures = 0,
                Err(_) => failures += 1,
            }
            tokio::time::sleep(POLL).await;
        }
        Lease::unheld()
    }
}

/// A refresh lease, let go when dropped (only by its holder: compare-and-delete).
pub struct Lease {
    held: Option<(Arc<Shared>, String, String)>,
    since: Instant,
}

impl Lease {
    fn unheld() -> Lease {
        Lease {
            held: None,
            since: Instant::now(),
        }
    }

    /// Whether it may still be relied on: taken less than half a lease ago.
    pub fn is_fresh(&self) -> bool {
        self.since.elapsed() < LEASE / 2
    }
}

impl Drop for Lease {
    fn drop(&mut self) {
        let Some((shared, name, token)) = self.held.take() else {
            return;
        };
        if let Ok(runtime) = tokio::runtime::Handle::try_current() {
            runtime.spawn(async move {
                let _ = shared.compare_and_set(&name, Some(token), None, None).await;
            });
        }
    }
}
