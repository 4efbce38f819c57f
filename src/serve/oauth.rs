//! The gateway as an OAuth resource server: it names its authorization server in its
//! protected-resource metadata (RFC 9728), takes JWT access tokens signed with that
//! server's keys (its JWK set, fetched once and again when a token names a key not yet
//! seen, at most every [`REFETCH`]), for this resource (`aud`), and lets each token reach
//! the views its scopes open.

mod jwt;

use std::collections::HashMap;
use std::sync::OnceLock;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use serde::Deserialize;
use serde_json::json;

use self::jwt::{Expect, Jwk, Refused};

/// The shortest time between two fetches of the key set.
const REFETCH: Duration = Duration::from_secs(10);
/// A key set or metadata document larger than this is refused.
const MAX_DOCUMENT: usize = 1 << 20;
const FETCH_TIMEOUT: Duration = Duration::from_secs(10);

/// How the resource server is set up.
pub struct OAuthOptions {
    /// The authorization server's issuer identifier; tokens' `iss`.
    pub issuer: String,
    /// Where its keys are; else read from its metadata (RFC 8414, then OpenID discovery).
    pub jwks_uri: Option<String>,
    /// This resource's identifier, tokens' `aud`; else the gateway's origin.
    pub resource: Option<String>,
    /// The scopes that open each path (any one of them); a path not listed is open to
    /// every valid token.
    pub scopes: HashMap<String, Vec<String>>,
}

pub struct ResourceServer {
    options: OAuthOptions,
    resource: OnceLock<String>,
    /// Where the gateway listens, which serves the metadata.
    origin: OnceLock<String>,
    keys: tokio::sync::Mutex<Keys>,
    http: reqwest::Client,
}

#[derive(Default)]
struct Keys {
    set: Vec<Jwk>,
    fetched: Option<Instant>,
}

/// Why a token does not open a path.
#[derive(Debug, PartialEq)]
pub enum Denied {
    NoToken,
    Invalid(String),
    /// Valid, but without a scope the path asks.
    Scope,
}

#[derive(Deserialize)]
struct KeySet {
    keys: Vec<Jwk>,
}

#[derive(Deserialize)]
struct ServerMetadata {
    jwks_uri: Option<String>,
}

impl ResourceServer {
    pub fn new(options: OAuthOptions) -> ResourceServer {
        let resource = OnceLock::new();
        if let Some(configured) = &options.resource {
            let _ = resource.set(configured.clone());
        }
        let http = crate::net::client_builder()
            .timeout(FETCH_TIMEOUT)
            .build()
            .unwrap_or_default();
        ResourceServer {
            options,
            resource,
            origin: OnceLock::new(),
            keys: tokio::sync::Mutex::new(Keys::default()),
            http,
        }
    }

    /// Takes the gateway's origin, also as the resource unless one was configured.
    pub fn bound(&self, origin: &str) {
        let _ = self.origin.set(origin.to_owned());
        let _ = self.resource.set(origin.to_owned());
    }

    fn resource(&self) -> &str {
        self.resource.get().map_or("", String::as_str)
    }

    /// The protected-resource metadata (RFC 9728) as JSON text.
    pub fn metadata(&self) -> String {
        let mut scopes: Vec<&String> = self.options.scopes.values().flatten().collect();
        scopes.sort();
        scopes.dedup();
        json!({
            "resource": self.resource(),
            "authorization_servers": [self.options.issuer],
            "scopes_supported": scopes,
            "bearer_methods_supported": ["header"],
        })
        .to_string()
    }

    /// The `WWW-Authenticate` challenge of a refusal on `path`, naming the metadata.
    pub fn challenge(&self, path: &str, denied: &Denied) -> String {
        let mut challenge = format!(
            "Bearer resource_metadata=\"{}/.well-known/oauth-protected-resource{path}\"",
            self.origin.get().map_or("", String::as_str)
        );
        if let Some(scopes) = self.options.scopes.get(path) {
            challenge.push_str(&format!(", scope=\"{}\"", scopes.join(" ")));
        }
        match denied {
            Denied::NoToken => {}
            Denied::Invalid(_) => challenge.push_str(", error=\"invalid_token\""),
            Denied::Scope => challenge.push_str(", error=\"insufficient_scope\""),
        }
        challenge
    }

    /// Whether `token` opens `path`.
    pub async fn admit(&self, path: &str, token: Option<&str>) -> Result<(), Denied> {
        let token = token.ok_or(Denied::NoToken)?;
        let now = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .unwrap_or_default();
        let expect = Expect {
            issuer: &self.options.issuer,
            audience: self.resource(),
            now: now.as_secs(),
        };
        let mut keys = self.keys.lock().await;
        if keys.fetched.is_none() {
            self.refetch(&mut keys).await?;
        }
        let scopes = match jwt::verify(token, &keys.set, &expect) {
            Err(Refused::UnknownKey) if keys.fetched.is_some_and(|at| at.elapsed() >= REFETCH) => {
                self.refetch(&mut keys).await?;
                jwt::verify(token, &keys.set, &expect)
            }
            verified => verified,
        };
        drop(keys);
        let scopes = scopes.map_err(|refused| Denied::Invalid(refused.to_string()))?;
        match self.options.scopes.get(path) {
            Some(wanted) if !wanted.iter().any(|scope| scopes.contains(scope)) => {
                Err(Denied::Scope)
            }
            _ => Ok(()),
        }
    }

    async fn refetch(&self, keys: &mut Keys) -> Result<(), Denied> {
        keys.fetched = Some(Instant::now());
        let unavailable =
            |why: String| Denied::Invalid(format!("the authorization server's keys: {why}"));
        let uri = match &self.options.jwks_uri {
            Some(uri) => uri.clone(),
            None => self.discover_jwks_uri().await.map_err(unavailable)?,
        };
        let set: KeySet = self.fetch(&uri).await.map_err(unavailable)?;
        keys.set = set.keys;
        Ok(())
    }

    /// The issuer's `jwks_uri`, from its RFC 8414 metadata or else its OpenID configuration.
    async fn discover_jwks_uri(&self) -> Result<String, String> {
        let issuer = self.options.issuer.trim_end_matches('/');
        let (origin, path) = match issuer
            .find("://")
            .and_then(|at| issuer[at + 3..].find('/').map(|p| at + 3 + p))
        {
            Some(split) => issuer.split_at(split),
            None => (issuer, ""),
        };
        let candidates = [
            format!("{origin}/.well-known/oauth-authorization-server{path}"),
            format!("{issuer}/.well-known/openid-configuration"),
        ];
        let mut last = String::new();
        for candidate in candidates {
            match self.fetch::<ServerMetadata>(&candidate).await {
                Ok(ServerMetadata {
                    jwks_uri: Some(uri),
                }) => return Ok(uri),
                Ok(_) => last = format!("{candidate} names no jwks_uri"),
                Err(why) => last = why,
            }
        }
        Err(last)
    }

    async fn fetch<T: for<'de> Deserialize<'de>>(&self, uri: &str) -> Result<T, String> {
        let mut response = self
            .http
            .get(uri)
            .send()
            .await
            .map_err(|e| format!("{uri}: {e}"))?;
        if !response.status().is_success() {
            return Err(format!("{uri} answered {}", response.status()));
        }
        let mut body = Vec::new();
        while let Some(chunk) = response.chunk().await.map_err(|e| format!("{uri}: {e}"))? {
            if body.len() + chunk.len() > MAX_DOCUMENT {
                return Err(format!("{uri} sent more than {MAX_DOCUMENT} bytes"));
            }
            body.extend_from_slice(&chunk);
        }
        serde_json::from_slice(&body).map_err(|e| format!("{uri}: {e}"))
    }
}
