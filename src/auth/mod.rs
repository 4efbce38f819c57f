//! OAuth for remote servers, as the MCP authorization specification (2025-11-25 and
//! 2026-07-28) asks of a client. rmcp's `auth` feature does the protocol work: discovery
//! (RFC 9728, RFC 8414 and OpenID, with the `resource` and `issuer` checks), dynamic
//! registration (RFC 7591), PKCE S256 with the RFC 8707 `resource`, the RFC 9207 `iss`
//! check, the token endpoint's auth method, refresh before expiry and once on a 401.
//! toolnexus adds what a host needs around it: which client to use (`flow`), a person to
//! ask or a loopback listener (`loopback`), tokens at rest (`store`, `tokens`), and a
//! `StreamableHttpClient` that signs in when a server asks and retries (`client`).

mod assertion;
mod client;
pub(crate) mod endpoint_policy;
mod flow;
mod keyed;
mod loopback;
pub mod store;
mod tokens;

use std::collections::HashSet;
use std::future::Future;
use std::pin::Pin;
use std::sync::{Arc, Mutex};

pub use client::OAuthClient;
pub use store::{FileTokenStore, TokenStore};

use crate::lock::lock;
use rmcp::transport::auth::AuthError;
use tokio::sync::watch;

/// The host's part of signing in.
pub trait Authorizer: Send + Sync {
    /// Shows the authorization `url` to a person. Resolves with the URL the browser was
    /// redirected to, or `None` when toolnexus's loopback listener is to receive it.
    fn authorize(
        &self,
        url: String,
    ) -> Pin<Box<dyn Future<Output = Result<Option<String>, String>> + Send>>;
}

/// What a call's host gives OAuth: someone to sign in (none: a server that needs it
/// fails at once, saying so) and where tokens rest.
#[derive(Clone)]
pub struct OAuthHooks {
    authorizer: Option<Arc<dyn Authorizer>>,
    tokens: Arc<dyn TokenStore>,
    /// The servers that asked for a sign-in nobody could give, by name.
    waiting: Arc<Mutex<HashSet<String>>>,
    /// The servers whose person is signing in now, by name: their clocks stand still.
    signing_in: Arc<watch::Sender<HashSet<String>>>,
}

impl OAuthHooks {
    pub fn new(authorizer: Option<Arc<dyn Authorizer>>, tokens: Arc<dyn TokenStore>) -> Self {
        OAuthHooks {
            authorizer,
            tokens,
            waiting: Arc::default(),
            signing_in: Arc::new(watch::Sender::new(HashSet::new())),
        }
    }

    /// Changes whenever a person starts or ends signing in to some server.
    pub fn signing_in(&self) -> watch::Receiver<HashSet<String>> {
        self.signing_in.subscribe()
    }

    /// Counts server `name` as signing in while the guard lives.
    pub(crate) fn person_signing_in(&self, name: &str) -> SigningIn {
        self.signing_in.send_modify(|names| {
            names.insert(name.to_owned());
        });
        SigningIn {
            names: self.signing_in.clone(),
            name: name.to_owned(),
        }
    }

    /// Whether server `name` last failed for want of a sign-in (its status: `needs_auth`).
    pub fn needs_sign_in(&self, name: &str) -> bool {
        lock(&self.waiting).contains(name)
    }

    fn set_needs_sign_in(&self, name: &str, needs: bool) {
        let mut waiting = lock(&self.waiting);
        if needs {
            waiting.insert(name.to_owned());
        } else {
            waiting.remove(name);
        }
    }
}

impl Default for OAuthHooks {
    fn default() -> Self {
        OAuthHooks::new(None, Arc::new(FileTokenStore::new()))
    }
}

/// A person signing in to one server (see `OAuthHooks::signing_in`).
pub(crate) struct SigningIn {
    names: Arc<watch::Sender<HashSet<String>>>,
    name: String,
}

impl Drop for SigningIn {
    fn drop(&mut self) {
        self.names.send_modify(|names| {
            names.remove(&self.name);
        });
    }
}

/// What a failed sign-in says, for a person.
pub fn explain(error: &AuthError) -> String {
    match error {
        // Our own sentences (see `flow`) and rmcp's callback checks.
        AuthError::AuthorizationFailed(text) => text.clone(),
        other => format!("could not sign in: {other}"),
    }
}
