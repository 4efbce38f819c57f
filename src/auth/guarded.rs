//! The HTTP client of one server's sign-in, which every OAuth request goes through: it
//! refuses what the endpoint policy refuses, connects only where the address policy
//! allows, follows no redirect, and for a DPoP sign-in proves possession of its key on
//! every token request. A refusal it met is kept, so the sign-in fails with it whatever
//! rmcp made of the error.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use rmcp::transport::auth::{
    AuthorizationMetadata, OAuthHttpClient, OAuthHttpClientFuture, OAuthHttpRequest,
};

use super::address_policy::{self, Unsent};
use super::dpop::{self, Dpop};
use super::endpoint_policy::{Endpoint, MAX_METADATA_REQUESTS, Refused, Why, check, refused};
use crate::lock::lock;

/// The HTTP client of one server's sign-in: refuses what `check` refuses, connects only
/// where `address_policy` allows, and follows no redirect (a hop would escape the check).
#[derive(Clone)]
pub struct Guarded {
    server: String,
    /// `oauth.allowPrivateNetwork`.
    allow_private: bool,
    /// The sign-in's DPoP key and nonces: token requests carry a proof once it has a key.
    dpop: Arc<Dpop>,
    /// What sends instead of `address_policy` (a test's, a fuzz target's documents).
    inner: Option<Arc<dyn OAuthHttpClient>>,
    refused: Arc<Mutex<Option<Refused>>>,
    /// Metadata documents asked for through this guard and its clones since
    /// [`Guarded::fresh`] made it.
    asked: Arc<AtomicUsize>,
}

impl Guarded {
    pub fn new(server: &str, allow_private: bool, dpop: Arc<Dpop>) -> Guarded {
        Guarded {
            server: server.to_owned(),
            allow_private,
            dpop,
            inner: None,
            refused: Arc::default(),
            asked: Arc::default(),
        }
    }

    /// The same guard with a budget of [`MAX_METADATA_REQUESTS`] of its own: one per
    /// manager, and so per discovery.
    pub fn fresh(&self) -> Guarded {
        Guarded {
            asked: Arc::default(),
            ..self.clone()
        }
    }

    /// A guard in front of `inner` instead of the network: the fuzz target's canned
    /// documents (the fuzz targets run on Linux), or a test's.
    #[cfg(any(test, target_os = "linux"))]
    pub fn over(server: &str, inner: Arc<dyn OAuthHttpClient>) -> Guarded {
        Guarded {
            inner: Some(inner),
            ..Guarded::new(server, false, Arc::default())
        }
    }

    /// The refusal met since the last call, if any.
    pub fn take_refusal(&self) -> Option<Refused> {
        lock(&self.refused).take()
    }

    /// Sends `request` (for `endpoint`) where the address policy allows, keeping a
    /// refusal; what the sign-in's own token requests go through too. A token request
    /// of a DPoP sign-in carries a proof, is sent once more with the nonce the server
    /// asks for, and must come back with a DPoP token.
    pub async fn send(
        &self,
        endpoint: Endpoint,
        request: http::Request<Vec<u8>>,
        timeout: Option<std::time::Duration>,
    ) -> Result<http::Response<Vec<u8>>, Box<dyn std::error::Error + Send + Sync>> {
        if endpoint != Endpoint::Token || !self.dpop.active() {
            return self.deliver(endpoint, request, timeout).await;
        }
        let url = request.uri().to_string();
        let method = request.method().to_string();
        let mut retried = false;
        loop {
            let mut sending = copy(&request);
            if let Some(proof) = self.dpop.proof(&method, &url, None) {
                let proof = http::HeaderValue::try_from(proof)?;
                sending.headers_mut().insert(dpop::PROOF, proof);
            }
            let response = self.deliver(endpoint, sending, timeout).await?;
            let nonce = response
                .headers()
                .get(dpop::NONCE)
                .and_then(|v| v.to_str().ok());
            let fresh = nonce.is_some_and(|nonce| self.dpop.learn_nonce(false, &url, nonce));
            let body = String::from_utf8_lossy(response.body());
            if !retried && fresh && !response.status().is_success() && dpop::asks_nonce(&body) {
                retried = true;
                continue;
            }
            if response.status().is_success()
                && let Some(kind) = unbound_token(response.body())
            {
                // rmcp keeps only its own words for a failed exchange: the refusal is
                // kept, for the sign-in to fail with.
                let refusal = refused(&self.server, endpoint, &url, Why::Unbound(kind));
                *lock(&self.refused) = Some(refusal.clone());
                return Err(Box::new(refusal));
            }
            return Ok(response);
        }
    }

    /// The metadata authorization server `issuer` publishes (RFC 8414, else OpenID
    /// Connect discovery), asked through this guard: a server rmcp would not ask itself.
    /// None when neither is there, or it names another issuer.
    pub async fn authorization_metadata(&self, issuer: &str) -> Option<AuthorizationMetadata> {
        let url = reqwest::Url::parse(issuer).ok()?;
        let (origin, path) = (
            url.origin().ascii_serialization(),
            url.path().trim_end_matches('/'),
        );
        let documents = [
            format!("{origin}/.well-known/oauth-authorization-server{path}"),
            format!("{origin}/.well-known/openid-configuration{path}"),
        ];
        for document in documents {
            check(&self.server, Endpoint::Metadata, &document).ok()?;
            let request = http::Request::get(&document).body(Vec::new()).ok()?;
            let Ok(response) = self.send(Endpoint::Metadata, request, None).await else {
                continue;
            };
            let metadata: Option<AuthorizationMetadata> =
                serde_json::from_slice(response.body()).ok();
            let same = |named: &str| named.trim_end_matches('/') == issuer.trim_end_matches('/');
            match metadata {
                Some(metadata)
                    if response.status().is_success()
                        && metadata.issuer.as_deref().is_some_and(same) =>
                {
                    return Some(metadata);
                }
                _ => continue,
            }
        }
        None
    }

    /// Sends `request` where the address policy allows, keeping a refusal.
    async fn deliver(
        &self,
        endpoint: Endpoint,
        request: http::Request<Vec<u8>>,
        timeout: Option<std::time::Duration>,
    ) -> Result<http::Response<Vec<u8>>, Box<dyn std::error::Error + Send + Sync>> {
        let url = request.uri().to_string();
        match address_policy::send(request, timeout, self.allow_private).await {
            Ok(response) => Ok(response),
            Err(unsent @ (Unsent::Private { .. } | Unsent::MetadataHost(_))) => {
                let refusal = refused(
                    &self.server,
                    endpoint,
                    &url,
                    Why::Private(unsent.to_string()),
                );
                *lock(&self.refused) = Some(refusal.clone());
                Err(Box::new(refusal))
            }
            Err(failed) => Err(Box::new(failed)),
        }
    }
}

/// A request again, to send once more.
fn copy(request: &http::Request<Vec<u8>>) -> http::Request<Vec<u8>> {
    let mut again = http::Request::new(request.body().clone());
    *again.method_mut() = request.method().clone();
    *again.uri_mut() = request.uri().clone();
    *again.headers_mut() = request.headers().clone();
    again
}

/// The type of a token a DPoP sign-in was issued when it is not `DPoP`: a bearer token
/// would be sent where only a bound one was meant to go.
fn unbound_token(body: &[u8]) -> Option<String> {
    let answer: serde_json::Value = serde_json::from_slice(body).unwrap_or_default();
    let kind = answer
        .get("token_type")
        .and_then(|t| t.as_str())
        .unwrap_or("none");
    // A revocation's answer issues nothing.
    let bound = answer.get("access_token").is_none() || kind.eq_ignore_ascii_case("dpop");
    // The server's words, shown: bounded, and without control characters.
    (!bound).then(|| kind.chars().filter(|c| !c.is_control()).take(40).collect())
}

impl OAuthHttpClient for Guarded {
    fn execute(&self, request: OAuthHttpRequest) -> OAuthHttpClientFuture<'_> {
        let url = request.request.uri().to_string();
        // The endpoints a metadata document names are checked, with their names, before
        // they are used: a GET refused here is of a document, a POST of a token endpoint
        // that tokens stored before the check name.
        let json = request.request.headers().get(http::header::CONTENT_TYPE);
        let json = json
            .and_then(|v| v.to_str().ok())
            .is_some_and(|v| v.contains("json"));
        let endpoint = match (request.request.method().as_str(), json) {
            ("GET", _) => Endpoint::Metadata,
            // Dynamic registration posts JSON; token requests post a form.
            (_, true) => Endpoint::Registration,
            _ => Endpoint::Token,
        };
        let checked = check(&self.server, endpoint, &url).and_then(|()| {
            let asked = match endpoint {
                Endpoint::Metadata => self.asked.fetch_add(1, Ordering::Relaxed),
                _ => 0,
            };
            match asked < MAX_METADATA_REQUESTS {
                true => Ok(()),
                false => Err(refused(&self.server, endpoint, &url, Why::TooMany)),
            }
        });
        Box::pin(async move {
            if let Err(refused) = checked {
                *lock(&self.refused) = Some(refused.clone());
                return Err(Box::new(refused) as _);
            }
            // No redirect is followed, whatever the request asked: a hop would escape
            // the check.
            match &self.inner {
                Some(inner) => inner.execute(request).await,
                None => self.send(endpoint, request.request, request.timeout).await,
            }
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rmcp::transport::auth::AuthorizationManager;

    /// Protected resource metadata naming 100 authorization servers, none of which has
    /// metadata; counts what it is asked.
    struct ManyServers(AtomicUsize);

    impl OAuthHttpClient for ManyServers {
        fn execute(&self, request: OAuthHttpRequest) -> OAuthHttpClientFuture<'_> {
            self.0.fetch_add(1, Ordering::Relaxed);
            let resource = request
                .request
                .uri()
                .path()
                .contains("oauth-protected-resource");
            let servers: Vec<String> = (0..100)
                .map(|i| format!("http://127.0.0.1:9/as{i}"))
                .collect();
            let body = serde_json::json!({ "resource": "http://127.0.0.1:9/mcp", "authorization_servers": servers });
            let response = http::Response::builder()
                .status(if resource { 200 } else { 404 })
                .body(if resource {
                    body.to_string().into_bytes()
                } else {
                    Vec::new()
                })
                .expect("a response");
            Box::pin(std::future::ready(Ok(response)))
        }
    }

    #[tokio::test]
    async fn a_discovery_asks_for_a_bounded_number_of_documents() {
        let server = Arc::new(ManyServers(AtomicUsize::new(0)));
        let guarded = Guarded::over("docs", server.clone());
        for _ in 0..2 {
            let http = Arc::new(guarded.fresh());
            let manager =
                AuthorizationManager::new_with_oauth_http_client("http://127.0.0.1:9/mcp", http)
                    .await
                    .expect("a manager");
            let challenge = r#"Bearer resource_metadata="http://127.0.0.1:9/.well-known/oauth-protected-resource/mcp""#;
            let _ = manager
                .resolve_metadata_from_challenge(Some(challenge))
                .await;
            let refused = guarded.take_refusal().expect("refused");
            assert_eq!(
                refused.to_string(),
                format!(
                    "refused the OAuth metadata document of \"docs\" at http://127.0.0.1:9: its OAuth metadata had the sign-in ask for more than {MAX_METADATA_REQUESTS} documents; nothing more was sent"
                )
            );
        }
        // Each manager (each discovery) has a budget of its own.
        assert_eq!(server.0.load(Ordering::Relaxed), 2 * MAX_METADATA_REQUESTS);
    }
}
