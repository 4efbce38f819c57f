//! Where a sign-in may send anything: every authorization-server endpoint, the metadata
//! documents, the redirect URI and a `clientMetadataUrl` must be `https:`, or `http:` on
//! a loopback host (127.0.0.0/8, ::1, `localhost`), as the MCP authorization
//! specification asks. One check (`check`), used before each use of such a URL and by
//! `guarded::Guarded`, the HTTP client every OAuth request of a sign-in goes through.

use std::fmt;
use std::net::IpAddr;

use reqwest::Url;
use rmcp::transport::auth::AuthorizationMetadata;

use super::address_policy::{self, Unsent};

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

#[derive(Clone, Debug, PartialEq, Eq)]
pub(super) enum Why {
    /// Not https, nor http on a loopback host.
    Insecure,
    /// Past [`MAX_METADATA_REQUESTS`] in one discovery.
    TooMany,
    /// On a private network, or a cloud metadata service (the words say which).
    Private(String),
    /// A token of this type where a DPoP-bound one was asked for.
    Unbound(String),
}

impl fmt::Display for Refused {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let (endpoint, server, origin) = (self.endpoint, &self.server, &self.origin);
        match &self.why {
            Why::Insecure => write!(
                f,
                "refused {endpoint} of \"{server}\" at {origin}: an OAuth endpoint must be https, or http on a loopback host (127.0.0.1, ::1, localhost); nothing was sent to it"
            ),
            Why::TooMany => write!(
                f,
                "refused {endpoint} of \"{server}\" at {origin}: its OAuth metadata had the sign-in ask for more than {MAX_METADATA_REQUESTS} documents; nothing more was sent"
            ),
            Why::Unbound(kind) => write!(
                f,
                "refused {endpoint} of \"{server}\" at {origin}: it issued a \"{kind}\" token where a DPoP-bound one was asked for"
            ),
            Why::Private(why) => write!(
                f,
                "refused {endpoint} of \"{server}\" at {origin}: {why}; nothing was sent to it (\"oauth.allowPrivateNetwork\": true in the entry allows it)"
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

pub(super) fn refused(server: &str, endpoint: Endpoint, url: &str, why: Why) -> Refused {
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

/// Where `url`, which the browser or the authorization server will reach for `endpoint`,
/// resolves: refused on a private network unless `allow_private`; nothing is sent.
pub async fn check_reach(
    server: &str,
    endpoint: Endpoint,
    url: &str,
    allow_private: bool,
) -> Result<(), Refused> {
    let Ok(parsed) = Url::parse(url) else {
        return Err(refused(server, endpoint, url, Why::Insecure));
    };
    match address_policy::address(&parsed, allow_private).await {
        Err(unsent @ (Unsent::Private { .. } | Unsent::MetadataHost(_))) => Err(refused(
            server,
            endpoint,
            url,
            Why::Private(unsent.to_string()),
        )),
        _ => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

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
