//! Where a sign-in may send anything: every authorization-server endpoint, the metadata
//! documents, the redirect URI and a `clientMetadataUrl` must be `https:`, or `http:` on
//! a loopback host (127.0.0.0/8, ::1, `localhost`), as the MCP authorization
//! specification asks. One check (`check`), used before each use of such a URL and by
//! `Guarded`, the HTTP client every OAuth request of a sign-in goes through; a refusal
//! it met is kept, so the sign-in fails with it whatever rmcp made of the error.

use std::fmt;
use std::net::IpAddr;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use reqwest::Url;
use rmcp::transport::auth::{
    AuthError, AuthorizationMetadata, OAuthHttpClient, OAuthHttpClientFuture,
    OAuthHttpRedirectPolicy, OAuthHttpRequest, default_oauth_http_client,
};
use tokio::sync::OnceCell;

use crate::lock::lock;

/// What a refused URL was for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Endpoint {
    Metadata,
    Authorization,
    Token,
    Registration,
    Revocation,
    Redirect,
    ClientMetadata,
}

impl fmt::Display for Endpoint {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Endpoint::Metadata => "the OAuth metadata document",
            Endpoint::Authorization => "the authorization endpoint",
            Endpoint::Token => "the token endpoint",
            Endpoint::Registration => "the registration endpoint",
            Endpoint::Revocation => "the revocation endpoint",
            Endpoint::Redirect => "the redirect URI",
            Endpoint::ClientMetadata => "the \"clientMetadataUrl\"",
        })
    }
}

/// Metadata documents one discovery may ask for. A discovery asks for a handful; a
/// protected resource's metadata naming thousands of authorization servers would have
/// the client ask each of them (anywhere on the web) for its metadata.
pub const MAX_METADATA_REQUESTS: usize = 32;

/// A URL the policy refuses; nothing was sent to it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Refused {
    server: String,
    endpoint: Endpoint,
    /// The URL's origin (scheme, host, port): never its path or query, which may carry
    /// what the sign-in would have sent.
    origin: String,
    why: Why,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Why {
    /// Not https, nor http on a loopback host.
    Insecure,
    /// Past [`MAX_METADATA_REQUESTS`] in one discovery.
    TooMany,
}

impl fmt::Display for Refused {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let (endpoint, server, origin) = (self.endpoint, &self.server, &self.origin);
        match self.why {
            Why::Insecure => write!(
                f,
                "refused {endpoint} of \"{server}\" at {origin}: an OAuth endpoint must be https, or http on a loopback host (127.0.0.1, ::1, localhost); nothing was sent to it"
            ),
            Why::TooMany => write!(
                f,
                "refused {endpoint} of \"{server}\" at {origin}: its OAuth metadata had the sign-in ask for more than {MAX_METADATA_REQUESTS} documents; nothing more was sent"
            ),
        }
    }
}

impl std::error::Error for Refused {}

/// Whether `url` may be used as `endpoint` for server `server`.
pub fn check(server: &str, endpoint: Endpoint, url: &str) -> Result<(), Refused> {
    let parsed = Url::parse(url).ok();
    if parsed.as_ref().is_some_and(allowed) {
        return Ok(());
    }
    Err(refused(server, endpoint, url, Why::Insecure))
}

fn refused(server: &str, endpoint: Endpoint, url: &str, why: Why) -> Refused {
    let origin = match Url::parse(url) {
        Ok(url) if url.has_host() => url.origin().ascii_serialization(),
        Ok(url) => format!("{}:", url.scheme()),
        Err(_) => "a text that is not a URL".to_owned(),
    };
    Refused {
        server: server.to_owned(),
        endpoint,
        origin,
        why,
    }
}

/// Every endpoint an authorization server's metadata names.
pub fn check_metadata(server: &str, metadata: &AuthorizationMetadata) -> Result<(), Refused> {
    check(
        server,
        Endpoint::Authorization,
        &metadata.authorization_endpoint,
    )?;
    check(server, Endpoint::Token, &metadata.token_endpoint)?;
    if let Some(url) = &metadata.registration_endpoint {
        check(server, Endpoint::Registration, url)?;
    }
    let revocation = metadata.additional_fields.get("revocation_endpoint");
    if let Some(url) = revocation {
        check(
            server,
            Endpoint::Revocation,
            url.as_str().unwrap_or_default(),
        )?;
    }
    Ok(())
}

fn allowed(url: &Url) -> bool {
    let host = url.host_str().unwrap_or_default();
    match url.scheme() {
        "https" => !host.is_empty(),
        "http" => match host
            .trim_start_matches('[')
            .trim_end_matches(']')
            .parse::<IpAddr>()
        {
            Ok(ip) => ip.is_loopback(),
            Err(_) => host.trim_end_matches('.').eq_ignore_ascii_case("localhost"),
        },
        _ => false,
    }
}

/// The HTTP client of one server's sign-in: refuses what `check` refuses, and follows
/// no redirect (a hop would escape the check).
#[derive(Clone)]
pub struct Guarded {
    server: String,
    /// rmcp's client, built on the first request.
    inner: Arc<OnceCell<Arc<dyn OAuthHttpClient>>>,
    refused: Arc<Mutex<Option<Refused>>>,
    /// Metadata documents asked for through this guard and its clones since
    /// [`Guarded::fresh`] made it.
    asked: Arc<AtomicUsize>,
}

impl Guarded {
    pub fn new(server: &str) -> Guarded {
        Guarded {
            server: server.to_owned(),
            inner: Arc::default(),
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

    /// A guard in front of `inner` instead of rmcp's client: the fuzz target's canned
    /// documents (the fuzz targets run on Linux), or a test's.
    #[cfg(any(test, target_os = "linux"))]
    pub fn over(server: &str, inner: Arc<dyn OAuthHttpClient>) -> Guarded {
        let guarded = Guarded::new(server);
        // A new cell: setting it cannot fail.
        let _ = guarded.inner.set(inner);
        guarded
    }

    /// The refusal met since the last call, if any.
    pub fn take_refusal(&self) -> Option<Refused> {
        lock(&self.refused).take()
    }
}

impl OAuthHttpClient for Guarded {
    fn execute(&self, mut request: OAuthHttpRequest) -> OAuthHttpClientFuture<'_> {
        let url = request.request.uri().to_string();
        // The endpoints a metadata document names are checked, with their names, before
        // they are used: a GET refused here is of a document, a POST of a token endpoint
        // that tokens stored before the check name.
        let endpoint = match request.request.method().as_str() {
            "GET" => Endpoint::Metadata,
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
        request.redirect_policy = OAuthHttpRedirectPolicy::Stop;
        Box::pin(async move {
            if let Err(refused) = checked {
                *lock(&self.refused) = Some(refused.clone());
                return Err(Box::new(refused) as _);
            }
            let inner = self
                .inner
                .get_or_try_init(|| async {
                    let client = default_oauth_http_client()?;
                    Ok::<_, AuthError>(Arc::new(client) as Arc<dyn OAuthHttpClient>)
                })
                .await?;
            inner.execute(request).await
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

    fn allows(url: &str) -> bool {
        check("docs", Endpoint::Token, url).is_ok()
    }

    #[test]
    fn https_anywhere_and_http_only_on_loopback() {
        for url in [
            "https://auth.example.com/token",
            "https://10.0.0.1:8443/t",
            "http://127.0.0.1:9/token",
            "http://127.200.3.4/token",
            "http://[::1]:80/token",
            "http://localhost:3000/token",
            "http://LOCALHOST./token",
        ] {
            assert!(allows(url), "{url}");
        }
        for url in [
            "http://auth.attacker.example/authorize",
            "http://10.0.0.1/token",
            "http://128.0.0.1/token",
            "http://[::2]/token",
            "http://localhost.attacker.example/token",
            "http://evil.localhost/token",
            "ftp://127.0.0.1/token",
            "javascript:alert(1)",
            "data:text/plain,x",
            "file:///etc/passwd",
            "not a url",
            "",
        ] {
            assert!(!allows(url), "{url}");
        }
    }

    #[test]
    fn the_reason_names_the_server_the_endpoint_and_only_the_origin() {
        let refused = check(
            "docs",
            Endpoint::Authorization,
            "http://auth.attacker.example:8080/authorize?state=secret-state",
        )
        .expect_err("refused");
        assert_eq!(
            refused.to_string(),
            "refused the authorization endpoint of \"docs\" at http://auth.attacker.example:8080: an OAuth endpoint must be https, or http on a loopback host (127.0.0.1, ::1, localhost); nothing was sent to it"
        );
        let odd = check("s", Endpoint::Redirect, "urn:x:y").expect_err("refused");
        assert!(
            odd.to_string()
                .contains("the redirect URI of \"s\" at urn:")
        );
    }

    #[test]
    fn every_endpoint_of_the_metadata_is_checked() {
        let mut safe = AuthorizationMetadata::default();
        safe.authorization_endpoint = "https://as.example/authorize".into();
        safe.token_endpoint = "https://as.example/token".into();
        safe.registration_endpoint = Some("https://as.example/register".into());
        assert_eq!(check_metadata("docs", &safe), Ok(()));
        let bad = "http://as.attacker.example/x".to_owned();
        type Set = fn(&mut AuthorizationMetadata, String);
        let cases: [(Endpoint, Set); 4] = [
            (Endpoint::Authorization, |m, u| m.authorization_endpoint = u),
            (Endpoint::Token, |m, u| m.token_endpoint = u),
            (Endpoint::Registration, |m, u| {
                m.registration_endpoint = Some(u)
            }),
            (Endpoint::Revocation, |m, u| {
                m.additional_fields
                    .insert("revocation_endpoint".into(), u.into());
            }),
        ];
        for (endpoint, set) in cases {
            let mut metadata = safe.clone();
            set(&mut metadata, bad.clone());
            let refused = check_metadata("docs", &metadata).expect_err("refused");
            assert_eq!(refused.endpoint, endpoint);
        }
    }
}
