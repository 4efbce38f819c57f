//! Binding a sign-in's tokens to a DPoP key, when the entry and the authorization server
//! say so (see `auth::dpop`).

use rmcp::transport::auth::{AuthError, AuthorizationMetadata};

use super::SignIn;
use crate::auth::dpop::Key;
use crate::config::{DpopMode, OAuthSpec};

impl SignIn {
    /// Binds the tokens to come to a DPoP key when `spec.dpop` and the authorization
    /// server of `metadata` say so: the key the record keeps, else a new one.
    pub(super) async fn bind_to_key(
        &self,
        spec: &OAuthSpec,
        metadata: &AuthorizationMetadata,
    ) -> Result<(), AuthError> {
        let algorithms = metadata
            .additional_fields
            .get("dpop_signing_alg_values_supported");
        let offered = algorithms
            .and_then(|a| a.as_array())
            .is_some_and(|a| a.iter().any(|alg| alg.as_str() == Some("ES256")));
        match (spec.dpop, offered) {
            (DpopMode::Off, _) | (DpopMode::Auto, false) => return Ok(()),
            (DpopMode::Required, false) => {
                return Err(AuthError::AuthorizationFailed(format!(
                    "\"{}\" requires DPoP (\"oauth.dpop\": true), and its authorization server offers no ES256 DPoP",
                    self.server
                )));
            }
            _ => {}
        }
        if self.dpop.active() {
            return Ok(());
        }
        let record = self.store.record().await?;
        let key = record
            .dpop_key
            .as_deref()
            .and_then(Key::decode)
            .or_else(Key::generate);
        let key = key.ok_or_else(|| AuthError::InternalError("cannot make a DPoP key".into()))?;
        let encoded = key.encoded();
        self.dpop.start(key);
        self.store
            .update(|record| record.dpop_key = Some(encoded))
            .await
    }
}
