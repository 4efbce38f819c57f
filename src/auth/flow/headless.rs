//! Signing in with no person: the client-credentials grant (with a secret, or a
//! `private_key_jwt` assertion), the jwt-bearer grant with a workload's identity token,
//! and enterprise-managed authorization (an ID token exchanged for an ID-JAG, redeemed
//! with the jwt-bearer grant).

use std::sync::atomic::Ordering;

use rmcp::transport::auth::{
    AuthError, AuthorizationManager, AuthorizationMetadata, ClientCredentialsConfig,
    OAuthClientConfig,
};
use tokio::sync::Mutex;

use super::SignIn;
use crate::auth::enterprise;
use crate::auth::grant::{self, Grant};
use crate::auth::token_store::Record;
use crate::config::{EnterpriseSpec, GrantSpec, Held};

impl SignIn {
    /// The grant that asks no person, if the config names one.
    pub(super) fn headless(&self) -> Option<Headless> {
        let spec = self.spec.as_ref()?;
        let scopes = spec.scopes.clone();
        Some(match &spec.grant {
            GrantSpec::AuthorizationCode => return None,
            GrantSpec::ClientCredentials => {
                let client_id = spec.client_id.clone()?;
                match (&spec.client_secret, &spec.private_key) {
                    (_, Some(pem)) => Headless::Key {
                        client_id,
                        pem: pem.clone(),
                        scopes,
                    },
                    (secret, None) => Headless::Secret(ClientCredentialsConfig::ClientSecret {
                        client_id,
                        client_secret: secret.clone()?,
                        scopes,
                        resource: Some(self.url.clone()),
                    }),
                }
            }
            GrantSpec::JwtBearer { assertion } => Headless::Bearer {
                client_id: spec.client_id.clone(),
                assertion: assertion.clone(),
                scopes,
            },
            GrantSpec::Enterprise(idp) => Headless::Enterprise {
                client_id: spec.client_id.clone()?,
                client_secret: spec.client_secret.clone(),
                idp: idp.clone(),
                scopes,
            },
        })
    }

    /// Signs in with no person, as `headless` says, to the authorization server
    /// `manager` has the metadata of.
    pub(super) async fn as_client(
        &self,
        headless: Headless,
        mut manager: AuthorizationManager,
        metadata: AuthorizationMetadata,
        current: &Mutex<AuthorizationManager>,
    ) -> Result<(), AuthError> {
        self.store
            .update(|record| {
                *record = Record {
                    issuer: metadata.issuer.clone(),
                    metadata: Some(metadata.clone()),
                    dpop_key: self.dpop.encoded_key(),
                    ..Record::default()
                }
            })
            .await?;
        headless.configure(&mut manager, &self.url)?;
        let resource = self.url.as_str();
        let request = |grant, scopes| grant::Request {
            grant,
            scopes,
            resource,
        };
        match &headless {
            Headless::Secret(config) => {
                manager.validate_client_credentials_metadata(config)?;
                manager.exchange_client_credentials(config).await?;
            }
            Headless::Key {
                client_id,
                pem,
                scopes,
            } => {
                let grant = Grant::Keyed { client_id, pem };
                grant::exchange(&self.http, &metadata, request(grant, scopes), &self.store).await?
            }
            Headless::Bearer {
                client_id,
                assertion,
                scopes,
            } => {
                let assertion = read(assertion, "oauth.assertion")?;
                let (client_id, client_secret) = (client_id.as_deref(), None);
                let grant = Grant::Bearer {
                    client_id,
                    client_secret,
                    assertion,
                };
                grant::exchange(&self.http, &metadata, request(grant, scopes), &self.store).await?
            }
            Headless::Enterprise {
                client_id,
                client_secret,
                idp,
                scopes,
            } => {
                let jag =
                    enterprise::id_jag(&self.http, &metadata, idp, client_id, resource, scopes);
                let assertion = jag.await?;
                let client_secret = client_secret.as_deref();
                let grant = Grant::Bearer {
                    client_id: Some(client_id),
                    client_secret,
                    assertion,
                };
                grant::exchange(&self.http, &metadata, request(grant, scopes), &self.store).await?
            }
        }
        *current.lock().await = manager;
        self.generation.fetch_add(1, Ordering::AcqRel);
        Ok(())
    }
}

/// A client that signs in with no person.
pub(super) enum Headless {
    /// The client-credentials grant with its secret: rmcp makes the token request.
    Secret(ClientCredentialsConfig),
    /// The client-credentials grant with a `private_key_jwt` assertion: `grant` makes it.
    Key {
        client_id: String,
        pem: String,
        scopes: Vec<String>,
    },
    /// The jwt-bearer grant with the workload's token, read again for each request.
    Bearer {
        client_id: Option<String>,
        assertion: Held,
        scopes: Vec<String>,
    },
    /// A person's ID token exchanged at the IdP for an ID-JAG, then the jwt-bearer grant.
    Enterprise {
        client_id: String,
        client_secret: Option<String>,
        idp: Box<EnterpriseSpec>,
        scopes: Vec<String>,
    },
}

impl Headless {
    /// Configures `manager` for this client. One whose token requests `grant` makes is
    /// configured as a public client, never used to ask for tokens: only so that rmcp,
    /// finding its token expired and no refresh token, sends the request without one,
    /// and the 401 signs in again (reading a rotated assertion afresh).
    pub(super) fn configure(
        &self,
        manager: &mut AuthorizationManager,
        url: &str,
    ) -> Result<(), AuthError> {
        let client_id = match self {
            Headless::Secret(config) => return manager.configure_client_credentials(config),
            Headless::Key { client_id, .. } | Headless::Enterprise { client_id, .. } => client_id,
            Headless::Bearer { client_id, .. } => client_id.as_deref().unwrap_or_default(),
        };
        manager.configure_client(OAuthClientConfig::new(client_id, url))
    }
}

/// A held credential now, or why not, naming its key.
fn read(held: &Held, key: &str) -> Result<String, AuthError> {
    held.read()
        .map_err(|why| AuthError::TokenExchangeFailed(format!("\"{key}\" cannot be used: {why}")))
}
