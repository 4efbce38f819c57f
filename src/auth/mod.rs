//! OAuth for remote servers, as the MCP authorization specification (2025-11-25 and
//! 2026-07-28) asks of a client. rmcp's `auth` feature does the protocol work: discovery
//! (RFC 9728, RFC 8414 and OpenID, with the `resource` and `issuer` checks), dynamic
//! registration (RFC 7591), PKCE S256 with the RFC 8707 `resource`, the RFC 9207 `iss`
//! check, the token endpoint's auth method, refresh before expiry and once on a 401.
//! toolnexus adds what a host needs around it: which client to use (`flow`), a person to
//! ask or a loopback listener (`loopback`), tokens at rest (`token_store`, `tokens`), and a
//! `StreamableHttpClient` that signs in when a server asks and retries (`client`).

mod address_policy;
mod assertion;
mod bound;
mod client;
mod dpop;
pub(crate) mod endpoint_policy;
mod enterprise;
mod flow;
mod grant;
pub(crate) mod guarded;
mod loopback;
pub mod shared;
pub mod token_store;
pub mod token_store_error;
mod tokens;

use std::collections::HashSet;
use std::fmt;
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;

pub use client::OAuthClient;
pub use token_store::{FileTokenStore, TokenStore};

use rmcp::transport::auth::AuthError;
use rmcp::transport::streamable_http_client::StreamableHttpError;
use tokio::sync::watch;

/// The host's part of signing in.
pub trait Authorizer: Send + Sync {
    /// Shows the authorization `url` to a person. Resolves with the URL the browser was
    /// redirected to, or `None` when toolnexus's loopback listener is to receive it.
    fn authorize(
        &self,
        url: String,
    ) -> Pin<Box<dyn Future<Output = Result<Option<String>, AuthorizeFailed>> + Send>>;
}

/// The host's part of signing in failed, for the host's reason.
#[derive(Debug, Clone, PartialEq)]
pub struct AuthorizeFailed(pub String);

impl std::fmt::Display for AuthorizeFailed {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "onAuthorize failed: {}", self.0)
    }
}

impl std::error::Error for AuthorizeFailed {}

/// What a call's host gives OAuth: someone to sign in (none: a server that needs it
/// fails at once, saying so) and where tokens rest.
#[derive(Clone)]
pub struct OAuthHooks {
    authorizer: Option<Arc<dyn Authorizer>>,
    tokens: Arc<dyn TokenStore>,
    /// A fleet's refresh leases, when its sign-ins are shared.
    leases: Option<shared::Leases>,
    /// The servers whose person is signing in now, by name: their clocks stand still.
    signing_in: Arc<watch::Sender<HashSet<String>>>,
}

impl OAuthHooks {
    pub fn new(authorizer: Option<Arc<dyn Authorizer>>, tokens: Arc<dyn TokenStore>) -> Self {
        OAuthHooks {
            authorizer,
            tokens,
            leases: None,
            signing_in: Arc::new(watch::Sender::new(HashSet::new())),
        }
    }

    /// Sign-ins kept in a fleet's shared state (sealed), refreshed under its leases. A
    /// host's own token store (`own`) keeps them instead, still under the fleet's leases.
    pub fn shared(
        authorizer: Option<Arc<dyn Authorizer>>,
        own: Option<Arc<dyn TokenStore>>,
        tokens: shared::SharedTokens,
        state: Arc<crate::state::Shared>,
    ) -> Self {
        let tokens = own.unwrap_or_else(|| Arc::new(tokens));
        OAuthHooks {
            leases: Some(shared::Leases::new(state)),
            ..OAuthHooks::new(authorizer, tokens)
        }
    }

    /// Where tokens rest.
    pub fn tokens(&self) -> &Arc<dyn TokenStore> {
        &self.tokens
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

/// A server asked for a sign-in that nobody here can give (no `onAuthorize`, no
/// loopback person): the failure a status shows as `needs_auth`.
#[derive(Debug)]
pub struct NeedsSignIn {
    server: String,
}

impl NeedsSignIn {
    fn new(server: &str) -> NeedsSignIn {
        NeedsSignIn {
            server: server.to_owned(),
        }
    }

    /// The request's failure, as rmcp's transport carries it: the only error of its own
    /// kind a client can return is an I/O error, which keeps this type to be asked for.
    fn into_http<E: std::error::Error + Send + Sync + 'static>(self) -> StreamableHttpError<E> {
        StreamableHttpError::Io(std::io::Error::other(self))
    }

    /// A sign-in's failure as the request that needed it fails: `AuthorizationRequired`,
    /// which the flow returns when nobody can sign in, as this (rmcp's `AuthClient` meets
    /// its own by sending the request without a token, so none reaches here from there).
    pub(crate) fn or_auth<E: std::error::Error + Send + Sync + 'static>(
        error: AuthError,
        server: &str,
    ) -> StreamableHttpError<E> {
        match error {
            AuthError::AuthorizationRequired => NeedsSignIn::new(server).into_http(),
            other => other.into(),
        }
    }

    /// The sign-in `error` waits for, if it is one.
    pub fn in_http<E: std::error::Error + Send + Sync + 'static>(
        error: &StreamableHttpError<E>,
    ) -> Option<&NeedsSignIn> {
        match error {
            StreamableHttpError::Io(io) => io.get_ref()?.downcast_ref(),
            _ => None,
        }
    }
}

impl fmt::Display for NeedsSignIn {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "needs authorization: sign in with `toolnexus auth {}`, or give opts.oauth.onAuthorize",
            self.server
        )
    }
}

impl std::error::Error for NeedsSignIn {}
