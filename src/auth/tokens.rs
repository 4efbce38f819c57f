//! rmcp's `CredentialStore` over one server's `Record` in a `TokenStore`: what rmcp's
//! manager saves after a code exchange or a refresh lands in the record, beside the
//! registration toolnexus keeps there.

use std::sync::Arc;

use async_trait::async_trait;
use rmcp::transport::auth::{AuthError, CredentialStore, StoredCredentials};
use tokio::sync::Mutex;

use super::store::{Record, TokenStore};

#[derive(Clone)]
pub struct RecordStore {
    store: Arc<dyn TokenStore>,
    key: String,
    /// The record as last read or written; loaded once, on first use.
    record: Arc<Mutex<Option<Record>>>,
}

impl RecordStore {
    pub fn new(store: Arc<dyn TokenStore>, key: String) -> RecordStore {
        RecordStore {
            store,
            key,
            record: Arc::default(),
        }
    }

    /// The record, read from the store the first time.
    pub async fn record(&self) -> Result<Record, AuthError> {
        let mut cached = self.record.lock().await;
        if cached.is_none() {
            let loaded = Record::load(self.store.as_ref(), &self.key)
                .await
                .map_err(AuthError::CredentialStoreError)?;
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
            .map_err(AuthError::CredentialStoreError)
    }
}

#[async_trait]
impl CredentialStore for RecordStore {
    async fn load(&self) -> Result<Option<StoredCredentials>, AuthError> {
        Ok(self.record().await?.credentials)
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
        _credentials: &StoredCredentials,
    ) -> Result<(), AuthError> {
        self.clear().await
    }
}
