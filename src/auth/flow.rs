//! Signing in to one server: discovery from the server's challenge, the choice of client
//! (configured, Client ID Metadata Document, the one registered before with the same
//! authorization server, or a fresh dynamic registration), the person's part, and the
//! code exchange. One sign-in runs at a time per server; requests that were refused
//! while it ran retry with its tokens.

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use rmcp::transport::auth::{
    AuthError, AuthorizationManager, AuthorizationMetadata, AuthorizationRequest,
    AuthorizationSession, OAuthClientConfig, WWWAuthenticateParams,
};
use tokio::sync::Mutex;

use super::OAuthHooks;
use super::dpop::{Dpop, Key};
use super::endpoint_policy::{self, Endpoint};
use super::guarded::Guarded;
use super::loopback::Loopback;
use super::token_store::Record;
use super::tokens::RecordStore;
use crate::config::OAuthSpec;

mod headless;
mod key;

/// The client name a dynamic registration gives.
const CLIENT_NAME: &str = "toolnexus";

/// What a sign-in came to.
pub enum Outcome {
    /// New tokens (this request's sign-in, or another's): send the request again.
    SignedIn,
    /// The server publishes no OAuth metadata: pass its refusal on as it is.
    NoOAuth,
}

/// Why a request was refused.
pub struct Challenge {
    /// The `WWW-Authenticate` value, when the server sent one.
    pub header: Option<String>,
    /// A 403 `insufficient_scope`: sign in again for more scopes.
    pub step_up: bool,
}

pub struct SignIn {
    server: String,
    url: String,
    /// `None` for `"oauth": false`.
    spec: Option<OAuthSpec>,
    hooks: OAuthHooks,
    /// Every OAuth request of this server goes through it.
    http: Guarded,
    /// Its DPoP key and nonces, once its tokens are bound to a key.
    pub dpop: Arc<Dpop>,
    pub store: RecordStore,
    /// Counts completed sign-ins.
    generation: AtomicU64,
    running: Mutex<()>,
}

impl SignIn {
    pub fn new(server: &str, url: &str, spec: Option<OAuthSpec>, hooks: OAuthHooks) -> SignIn {
        let allow_private = spec.as_ref().is_some_and(|spec| spec.allow_private_network);
        let dpop = Arc::new(Dpop::default());
        SignIn {
            http: Guarded::new(server, allow_private, dpop.clone()),
            dpop,
            server: server.to_owned(),
            url: url.to_owned(),
            store: RecordStore::new(hooks.tokens.clone(), url.to_owned(), hooks.leases.clone()),
            spec,
            hooks,
            generation: AtomicU64::new(0),
            running: Mutex::new(()),
        }
    }

    pub fn server(&self) -> &str {
        &self.server
    }

    pub fn enabled(&self) -> bool {
        self.spec.is_some()
    }

    pub fn generation(&self) -> u64 {
        self.generation.load(Ordering::Acquire)
    }

    /// A manager with the stored client and tokens, ready to send and refresh them; or
    /// with nothing, so that requests go out without a token until a server asks.
    pub async fn restore(&self) -> Result<AuthorizationManager, AuthError> {
        if !self.enabled() {
            return self.bare_manager().await;
        }
        let mut manager = self.manager().await?;
        let record = self.store.record().await?;
        if let Some(key) = record.dpop_key.as_deref().and_then(Key::decode) {
            self.dpop.start(key);
        }
        let Some(metadata) = record.metadata.clone() else {
            return Ok(manager);
        };
        manager.set_metadata(metadata);
        if let Some(headless) = self.headless() {
            headless.configure(&mut manager, &self.url)?;
        } else if let Some(config) = client_config(&record) {
            manager.configure_client(config)?;
        }
        Ok(manager)
    }

    async fn bare_manager(&self) -> Result<AuthorizationManager, AuthError> {
        let http = std::sync::Arc::new(self.http.fresh());
        AuthorizationManager::new_with_oauth_http_client(self.url.as_str(), http).await
    }

    async fn manager(&self) -> Result<AuthorizationManager, AuthError> {
        let mut manager = self.bare_manager().await?;
        manager.set_credential_store(self.store.clone());
        Ok(manager)
    }

    /// Signs in after a refusal, unless another request's sign-in completed since `seen`;
    /// then `current` holds the manager with the new tokens.
    pub async fn run(
        &self,
        seen: u64,
        challenge: Challenge,
        current: &Mutex<AuthorizationManager>,
    ) -> Result<Outcome, AuthError> {
        let _one_at_a_time = self.running.lock().await;
        // A refusal met before (a refresh with tokens stored before the check) is over.
        self.http.take_refusal();
        let outcome = self.signing_in(seen, challenge, current).await;
        // Whatever rmcp made of a refused request (an error, or a discovery that went on
        // to find nothing), the sign-in fails with the refusal.
        match self.http.take_refusal() {
            Some(refused) => Err(refused_error(refused)),
            None => outcome,
        }
    }

    async fn signing_in(
        &self,
        seen: u64,
        challenge: Challenge,
        current: &Mutex<AuthorizationManager>,
    ) -> Result<Outcome, AuthError> {
        let spec = self.spec.clone().unwrap_or_default();
        if self.generation() != seen {
            return Ok(Outcome::SignedIn);
        }
        let mut manager = self.manager().await?;
        let resolution = manager
            .resolve_metadata_from_challenge(challenge.header.as_deref())
            .await;
        let metadata = match resolution {
            Ok(resolution) if resolution.source.is_discovered() => resolution.metadata,
            // No protected resource or authorization server metadata: the refusal is
            // about the request's own credentials (its "headers"), not a sign-in.
            Ok(_) => return Ok(Outcome::NoOAuth),
            Err(error) => self.passed_over(error).await?,
        };
        endpoint_policy::check_metadata(&self.server, &metadata).map_err(refused_error)?;
        self.bind_to_key(&spec, &metadata).await?;
        manager.set_metadata(metadata.clone());
        if let Some(headless) = self.headless() {
            self.as_client(headless, manager, metadata, current).await?;
            return Ok(Outcome::SignedIn);
        }
        let Some(authorizer) = self.hooks.authorizer.clone() else {
            // Nobody to sign in: `NeedsSignIn`, once it reaches the client.
            return Err(AuthError::AuthorizationRequired);
        };
        let mut record = self.store.record().await?;
        if record.issuer != metadata.issuer {
            // Another authorization server: nothing of the old one's applies.
            record = Record::default();
        }
        let (loopback, reuse) = listener(&spec, &record).await?;
        let redirect_uri = loopback.redirect_uri();
        self.check(Endpoint::Redirect, &redirect_uri)?;
        let scopes = self.scopes(&spec, &manager, &record, &challenge).await;
        let mut request = AuthorizationRequest::new(&redirect_uri).with_scopes(scopes.clone());
        let supports_cimd = metadata
            .additional_fields
            .get("client_id_metadata_document_supported")
            .and_then(|v| v.as_bool())
            .unwrap_or(false);
        let client = if let Some(id) = &spec.client_id {
            Some((id.clone(), spec.client_secret.clone()))
        } else if let Some(url) = spec.client_metadata_url.as_ref().filter(|_| supports_cimd) {
            self.check(Endpoint::ClientMetadata, url)?;
            self.check_reach(Endpoint::ClientMetadata, url).await?;
            request = request.with_client_metadata_url(url);
            None
        } else if reuse {
            record
                .client_id
                .clone()
                .map(|id| (id, record.client_secret.clone()))
        } else {
            let scope_refs: Vec<&str> = scopes.iter().map(String::as_str).collect();
            let registered = manager
                .register_client(CLIENT_NAME, &redirect_uri, &scope_refs)
                .await?;
            Some((registered.client_id, registered.client_secret))
        };
        if let Some((id, secret)) = &client {
            request = request.with_preregistered_client(id);
            if let Some(secret) = secret {
                request = request.with_client_secret(secret);
            }
        }
        let session = AuthorizationSession::new(manager, request)
            .await
            .map_err(|(_, e)| e)?;
        let (client_id, client_secret) = match client {
            Some(client) => client,
            None => (session.get_credentials().await?.0, None),
        };
        let keep = Record {
            issuer: metadata.issuer.clone(),
            client_id: Some(client_id),
            client_secret,
            redirect_uri: Some(redirect_uri),
            metadata: Some(metadata),
            credentials: record.credentials,
            dpop_key: self.dpop.encoded_key(),
        };
        self.check(Endpoint::Authorization, &session.auth_url)?;
        self.check_reach(Endpoint::Authorization, &session.auth_url)
            .await?;
        self.store.update(|record| *record = keep).await?;
        // The person's time is not the server's: the opening's clock stands still.
        let signing_in = self.hooks.person_signing_in(&self.server);
        let redirect = tokio::select! {
            asked = authorizer.authorize(session.auth_url.clone()) => match asked {
                Ok(Some(url)) => url,
                Ok(None) => loopback.redirect().await?,
                Err(failed) => return Err(AuthError::AuthorizationFailed(failed.to_string())),
            },
            received = loopback.redirect() => received?,
        };
        drop(signing_in);
        session.handle_callback_url(&redirect).await?;
        *current.lock().await = session.auth_manager;
        self.generation.fetch_add(1, Ordering::AcqRel);
        Ok(Outcome::SignedIn)
    }

    /// After `error`: rmcp passes over an authorization server at a private IP address in
    /// silence, whatever the entry allows. One the address policy refuses is named, with
    /// its reason; one it allows is asked here.
    async fn passed_over(&self, error: AuthError) -> Result<AuthorizationMetadata, AuthError> {
        let AuthError::AuthorizationServersUnavailable {
            authorization_servers,
            ..
        } = &error
        else {
            return Err(error);
        };
        for server in authorization_servers {
            self.check_reach(Endpoint::Metadata, server).await?;
        }
        for server in authorization_servers {
            if let Some(metadata) = self.http.authorization_metadata(server).await {
                return Ok(metadata);
            }
        }
        Err(error)
    }

    fn check(&self, endpoint: Endpoint, url: &str) -> Result<(), AuthError> {
        endpoint_policy::check(&self.server, endpoint, url).map_err(refused_error)
    }

    /// For a URL others fetch (the browser, the authorization server): where it resolves.
    async fn check_reach(&self, endpoint: Endpoint, url: &str) -> Result<(), AuthError> {
        let allow_private = self
            .spec
            .as_ref()
            .is_some_and(|spec| spec.allow_private_network);
        let reach = endpoint_policy::check_reach(&self.server, endpoint, url, allow_private);
        reach.await.map_err(refused_error)
    }

    /// A step-up asks for what was granted and what the server now wants; a first
    /// sign-in for the configured scopes, else the challenge's, else those the protected
    /// resource lists, else none (with `offline_access` added when the server has it).
    async fn scopes(
        &self,
        spec: &OAuthSpec,
        manager: &AuthorizationManager,
        record: &Record,
        challenge: &Challenge,
    ) -> Vec<String> {
        if challenge.step_up {
            let mut scopes: Vec<String> = record
                .credentials
                .as_ref()
                .map(|c| c.granted_scopes.clone())
                .unwrap_or_default();
            let wanted = challenge
                .header
                .as_deref()
                .and_then(|header| {
                    reqwest::Url::parse(&self.url)
                        .ok()
                        .map(|base| (header, base))
                })
                .and_then(|(header, base)| WWWAuthenticateParams::parse(header, &base).scope);
            for scope in wanted.iter().flat_map(|s| s.split_whitespace()) {
                if !scopes.iter().any(|s| s == scope) {
                    scopes.push(scope.to_owned());
                }
            }
            if !scopes.is_empty() {
                return scopes;
            }
        }
        if !spec.scopes.is_empty() {
            return spec.scopes.clone();
        }
        manager.select_initial_scopes(&[]).await
    }
}

fn refused_error(refused: endpoint_policy::Refused) -> AuthError {
    AuthError::AuthorizationFailed(refused.to_string())
}

/// The loopback listener, and whether the stored registration can be used again: it
/// can when it was toolnexus's own and its redirect URI's port can be bound again.
async fn listener(spec: &OAuthSpec, record: &Record) -> Result<(Loopback, bool), AuthError> {
    let stored_port = record
        .redirect_uri
        .as_deref()
        .and_then(|uri| reqwest::Url::parse(uri).ok())
        .and_then(|uri| uri.port());
    let port = spec.callback_port.or(stored_port).unwrap_or(0);
    let reusable = record.client_id.is_some() && spec.client_id.is_none();
    match Loopback::bind(port).await {
        Ok(loopback) => {
            let reuse =
                reusable && record.redirect_uri.as_deref() == Some(&loopback.redirect_uri());
            Ok((loopback, reuse))
        }
        Err(_) if spec.callback_port.is_none() && port != 0 => {
            let loopback = Loopback::bind(0).await?;
            Ok((loopback, false))
        }
        Err(reason) => Err(reason.into()),
    }
}

/// The client a record names, as rmcp configures it.
fn client_config(record: &Record) -> Option<OAuthClientConfig> {
    let mut config =
        OAuthClientConfig::new(record.client_id.clone()?, record.redirect_uri.clone()?);
    if let Some(secret) = &record.client_secret {
        config = config.with_client_secret(secret);
    }
    Some(config)
}
