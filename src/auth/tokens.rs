//! rmcp's `CredentialStore` over one server's `Record` in a `TokenStore`: what rmcp's
//! manager saves after a code exchange or a refresh lands in the record, beside the
//! registration toolnexus keeps there. In a fleet, a refresh waits for the sign-in's
//! lease (see `shared`), and tokens about to expire are read again first: another
//! instance may have refreshed them already.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{SystemTime, UNIX_EPOCH};

use async_trait::async_trait;
use rmcp::transport::auth::{
    AuthError, CredentialRefreshGuard, CredentialStore, StoredCredentials,
};
use tokio::sync::Mutex;

use super::shared::{Lease, Leases};
use super::token_store::{Record, TokenStore};

/// rmcp refreshes when fewer than `min(30, expires_in / 2)` seconds remain (at least 1):
/// exactly then a fleet takes the lease for it, so that a lease taken is a lease used.
const REFRESH_BUFFER_SECS: u64 = 30;

#[derive(Clone)]
pub struct RecordStore {
    store: Arc<dyn TokenStore>,
    key: String,
    /// The record as last read or written; loaded once, on first use.
    record: Arc<Mutex<Option<Record>>>,
    /// The fleet's refresh leases, when sign-ins are shared.
    leases: Option<Leases>,
    /// A lease taken by `load` for the refresh rmcp is about to make.
    lease: Arc<Mutex<Option<Lease>>>,
    /// Whether rmcp's refresh holds this store's guard now: its own `load` then reads the
    /// record as it stands, never waiting for the lease it holds itself.
    refreshing: Arc<AtomicBool>,
}

/// The guard rmcp holds through a refresh: the fleet's lease, and this store's mark.
struct Refreshing {
    _lease: Lease,
    mark: Arc<AtomicBool>,
}

impl Drop for Refreshing {
    fn drop(&mut self) {
        self.mark.store(false, Ordering::SeqCst);
    }
}

impl RecordStore {
    pub fn new(store: Arc<dyn TokenStore>, key: String, leases: Option<Leases>) -> RecordStore {
        RecordStore {
            store,
            key,
            record: Arc::default(),
            leases,
            lease: Arc::default(),
            refreshing: Arc::default(),
        }
    }

    /// The record as the token store has it now.
    async fn reload(&self) -> Result<Record, AuthError> {
        *self.record.lock().await = None;
        self.record().await
    }

    /// The record, read from the store the first time.
    pub async fn record(&self) -> Result<Record, AuthError> {
        let mut cached = self.record.lock().await;
        if cached.is_none() {
            let loaded = Record::load(self.store.as_ref(), &self.key)
                .await
                .map_err(AuthError::from)?;
            *cached = Some(loaded.unwrap_or_default());
        }
        Ok(cached.clone().unwrap_or_default())
    }

    /// Changes the record and writes it back.
    pub async fn update(&self, change: impl FnOnce(&mut Record)) -> Result<(), AuthError> {
        self.record().await?;
        let mut cached = self.record.lock().await;
        let record = cached.get_or_insert_with(Record::default);
        change(record);
        record
            .save(self.store.as_ref(), &self.key)
            .await
            .map_err(AuthError::from)
    }
}

#[async_trait]
impl CredentialStore for RecordStore {
    async fn load(&self) -> Result<Option<StoredCredentials>, AuthError> {
        let record = self.record().await?;
        let Some(leases) = &self.leases else {
            return Ok(record.credentials);
        };
        if !expiring(record.credentials.as_ref()) {
            return Ok(record.credentials);
        }
        // This instance's own refresh is under way (rmcp reads the record inside it), or
        // about to be, under the lease taken for it.
        if self.refreshing.load(Ordering::SeqCst) {
            return Ok(record.credentials);
        }
        {
            let mut taken = self.lease.lock().await;
            if taken.as_ref().is_some_and(Lease::is_fresh) {
                return Ok(record.credentials);
            }
            // One rmcp never used: let it go.
            *taken = None;
        }
        // Whoever refreshes now finishes first; then the record says what it got.
        let lease = leases.acquire(&self.key).await;
        let record = self.reload().await?;
        let credentials = record.credentials.as_ref();
        if expiring(credentials) && refresh_token(credentials).is_some() {
            *self.lease.lock().await = Some(lease);
        }
        Ok(record.credentials)
    }

    /// The fleet's lease for this sign-in, held through rmcp's refresh and its save.
    async fn acquire_refresh_guard(&self) -> Result<Option<CredentialRefreshGuard>, AuthError> {
        let Some(leases) = &self.leases else {
            return Ok(None);
        };
        let taken = self.lease.lock().await.take().filter(Lease::is_fresh);
        let lease = match taken {
            Some(lease) => lease,
            None => {
                let lease = leases.acquire(&self.key).await;
                self.reload().await?;
                lease
            }
        };
        self.refreshing.store(true, Ordering::SeqCst);
        let guard = Refreshing {
            _lease: lease,
            mark: self.refreshing.clone(),
        };
        Ok(Some(CredentialRefreshGuard::new(guard)))
    }

    async fn save(&self, credentials: StoredCredentials) -> Result<(), AuthError> {
        self.update(|record| record.credentials = Some(credentials))
            .await
    }

    async fn clear(&self) -> Result<(), AuthError> {
        self.update(|record| record.credentials = None).await
    }

    /// A refresh token the server rejected is of no further use: forget the tokens, so
    /// that the next request signs in again rather than retrying it.
    async fn on_refresh_token_rejected(
        &self,
        credentials: &StoredCredentials,
    ) -> Result<(), AuthError> {
        // In a fleet, only while the record still holds the rejected tokens: another
        // instance's newer ones stay.
        if self.leases.is_some() {
            let current = self.reload().await?.credentials;
            if refresh_token(current.as_ref()) != refresh_token(Some(credentials)) {
                return Ok(());
            }
        }
        self.clear().await
    }
}

/// A member of the token response as the authorization server sent it (rmcp's type
/// reads it through a trait of a crate toolnexus does not name).
fn member(credentials: Option<&StoredCredentials>, name: &str) -> Option<serde_json::Value> {
    let token = serde_json::to_value(credentials?.token_response.as_ref()?).ok()?;
    token.get(name).cloned()
}

fn refresh_token(credentials: Option<&StoredCredentials>) -> Option<String> {
    member(credentials, "refresh_token")?
        .as_str()
        .map(str::to_owned)
}

/// Whether rmcp is about to refresh these tokens.
fn expiring(credentials: Option<&StoredCredentials>) -> bool {
    let Some(received) = credentials.and_then(|c| c.token_received_at) else {
        return false;
    };
    let Some(lifetime) = member(credentials, "expires_in").and_then(|v| v.as_u64()) else {
        return false;
    };
    let now = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_secs())
        .unwrap_or_default();
    let remaining = lifetime.saturating_sub(now.saturating_sub(received));
    let buffer = REFRESH_BUFFER_SECS.min(lifetime / 2).max(1);
    remaining < buffer
}

#[cfg(test)]
mod tests {
    use std::sync::atomic::Ordering;

    use rmcp::transport::auth::OAuthTokenResponse;

    use super::*;
    use crate::auth::shared::SharedTokens;
    use crate::state::memory::Memory;

    const KEY: &str = "000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f";
    const SERVER: &str = "https://server.example/mcp";

    /// Credentials received `ago` seconds ago, valid for 3 seconds.
    fn credentials(refresh: &str, ago: u64) -> StoredCredentials {
        let token: OAuthTokenResponse = serde_json::from_value(serde_json::json!({
            "access_token": format!("access-{refresh}"), "token_type": "Bearer",
            "expires_in": 3, "refresh_token": refresh,
        }))
        .expect("a token response");
        let now = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map(|d| d.as_secs());
        let received = now.unwrap_or_default() - ago;
        StoredCredentials::new("client".into(), Some(token), Vec::new(), Some(received))
    }

    /// Two instances' record stores of one sign-in, on one state in memory.
    async fn fleet(first: StoredCredentials) -> (Arc<Memory>, RecordStore, RecordStore) {
        let memory = Arc::new(Memory::default());
        let shared = crate::state::open(memory.clone(), Some("t"), Some(KEY)).expect("a state");
        let tokens = Arc::new(SharedTokens::new(shared.clone()).expect("a key"));
        let store = || {
            RecordStore::new(
                tokens.clone(),
                SERVER.into(),
                Some(Leases::new(shared.clone())),
            )
        };
        let (one, two) = (store(), store());
        one.save(first).await.expect("saved");
        (memory, one, two)
    }

    #[tokio::test]
    async fn a_coordinated_refresh_costs_two_round_trips_more_than_a_local_one() {
        let (memory, one, _) = fleet(credentials("r1", 3)).await;
        let before = memory.ops.load(Ordering::SeqCst);
        // Expiring: the lease (one compare-and-set) and the record read again.
        assert!(one.load().await.expect("loaded").is_some());
        assert_eq!(memory.ops.load(Ordering::SeqCst) - before, 2);
        // rmcp's refresh: its guard and its read of the record ask nothing more.
        let guard = one.acquire_refresh_guard().await.expect("a guard");
        assert!(guard.is_some());
        one.load().await.expect("loaded");
        assert_eq!(memory.ops.load(Ordering::SeqCst) - before, 2);
    }

    #[tokio::test]
    async fn a_refresh_another_instance_saved_is_taken_as_it_is() {
        let (_, one, two) = fleet(credentials("r1", 3)).await;
        two.record().await.expect("read");
        let guard = one.acquire_refresh_guard().await.expect("a guard");
        one.save(credentials("r2", 0)).await.expect("saved");
        drop(guard);
        // The lease is let go on the runtime: `two` waits for it, then reads r2.
        let taken = two.load().await.expect("loaded");
        assert_eq!(refresh_token(taken.as_ref()).as_deref(), Some("r2"));
        assert!(
            two.lease.lock().await.is_none(),
            "no lease kept: nothing to refresh"
        );
    }
}
