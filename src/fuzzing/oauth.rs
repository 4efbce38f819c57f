//! The OAuth fuzz targets: a challenge and metadata as a sign-in parses them, and
//! discovery over fuzzed documents behind the endpoint policy.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use rmcp::transport::auth::{
    AuthorizationManager, AuthorizationMetadata, OAuthHttpClient, OAuthHttpClientFuture,
    OAuthHttpRedirectPolicy, OAuthHttpRequest, WWWAuthenticateParams,
};

use crate::auth::endpoint_policy::{self, Endpoint};
use crate::auth::guarded::Guarded;

/// A `WWW-Authenticate` value and an authorization server's metadata document (split at
/// the first newline): parsed as a sign-in parses them, and the endpoints checked.
pub fn oauth(data: &[u8]) {
    let text = String::from_utf8_lossy(data);
    let (header, document) = text.split_once('\n').unwrap_or((&text, ""));
    let base = reqwest::Url::parse("http://127.0.0.1:9/mcp").expect("a URL");
    let params = WWWAuthenticateParams::parse(header, &base);
    let _ = params.is_insufficient_scope();
    if let Ok(metadata) = serde_json::from_str::<AuthorizationMetadata>(document)
        && endpoint_policy::check_metadata("fuzz", &metadata).is_ok()
    {
        for url in [&metadata.authorization_endpoint, &metadata.token_endpoint] {
            let url = reqwest::Url::parse(url).expect("an allowed endpoint is a URL");
            assert!(matches!(url.scheme(), "https" | "http"));
        }
    }
}

/// A `WWW-Authenticate` value, a protected resource's metadata and an authorization
/// server's (NUL-separated), served at every URL of their kind, as a sign-in discovers
/// them through [`Guarded`]: whatever the documents name, no request reaches a URL the
/// endpoint policy refuses, none follows a redirect, and discovery ends.
pub fn oauth_discovery(data: &[u8]) {
    let text = String::from_utf8_lossy(data);
    let mut parts = text.splitn(3, '\0');
    let header = parts.next().unwrap_or_default().to_owned();
    let documents = Arc::new(Documents {
        resource: parts.next().unwrap_or_default().as_bytes().to_vec(),
        server: parts.next().unwrap_or_default().as_bytes().to_vec(),
        asked: AtomicUsize::new(0),
    });
    let http = Arc::new(Guarded::over("fuzz", documents.clone()));
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("a runtime");
    runtime.block_on(async {
        let manager =
            AuthorizationManager::new_with_oauth_http_client("http://127.0.0.1:9/mcp", http)
                .await
                .expect("a manager");
        let _ = manager.resolve_metadata_from_challenge(Some(&header)).await;
    });
    assert!(
        documents.asked.load(Ordering::Relaxed) <= 64,
        "discovery ends"
    );
}

/// The documents of [`oauth_discovery`], by the well-known path a URL ends in.
struct Documents {
    resource: Vec<u8>,
    server: Vec<u8>,
    asked: AtomicUsize,
}

impl OAuthHttpClient for Documents {
    fn execute(&self, request: OAuthHttpRequest) -> OAuthHttpClientFuture<'_> {
        let url = request.request.uri().to_string();
        assert!(
            endpoint_policy::check("fuzz", Endpoint::Metadata, &url).is_ok(),
            "{url} reached the network"
        );
        assert!(matches!(
            request.redirect_policy,
            OAuthHttpRedirectPolicy::Stop
        ));
        self.asked.fetch_add(1, Ordering::Relaxed);
        let body = if url.contains("oauth-protected-resource") {
            Some(&self.resource)
        } else if url.contains("oauth-authorization-server") || url.contains("openid-configuration")
        {
            Some(&self.server)
        } else {
            None
        };
        let response = http::Response::builder()
            .status(if body.is_some() { 200 } else { 404 })
            .header("content-type", "application/json")
            .body(body.cloned().unwrap_or_default())
            .expect("a response");
        Box::pin(std::future::ready(Ok(response)))
    }
}
