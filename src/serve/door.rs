//! The gateway's front door: which browsers' pages may reach it (`Origin`, the
//! specification's DNS-rebinding rule) and what opens which path: nothing, bearer tokens
//! of its own, or an authorization server's access tokens (`oauth`). Its own tokens are
//! compared by their SHA-256 digests, every one of a path's, so the time taken says
//! nothing of how much of a guess was right.

use std::collections::HashMap;
use std::fmt;
use std::sync::Arc;

use http::HeaderMap;
use ring::digest::{SHA256, digest};

use super::oauth::{Denied, OAuthOptions, ResourceServer};

/// Who may come in.
pub struct Door {
    access: Access,
    /// Origins allowed besides loopback pages' (`scheme://host:port`, as browsers send).
    origins: Vec<String>,
}

enum Access {
    Open,
    /// The digests of the tokens that open each path.
    Tokens(HashMap<String, Vec<[u8; 32]>>),
    OAuth(Arc<ResourceServer>),
}

/// Why a request was turned away.
#[derive(Debug, PartialEq)]
pub enum DoorError {
    /// 403: a page of an origin not allowed.
    Origin(String),
    /// 401: no token, or not one that opens this path.
    Token { presented: bool },
    /// 401 or, for a token without the scope, 403.
    OAuth(Denied),
}

impl fmt::Display for DoorError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            DoorError::Origin(origin) => write!(f, "Origin {origin} is not allowed"),
            DoorError::Token { presented: true } => {
                f.write_str("the bearer token is not valid here")
            }
            DoorError::Token { presented: false } => f.write_str("a bearer token is required"),
            DoorError::OAuth(Denied::NoToken) => f.write_str("an access token is required"),
            DoorError::OAuth(Denied::Invalid(why)) => f.write_str(why),
            DoorError::OAuth(Denied::Scope) => {
                f.write_str("the access token has no scope that opens this path")
            }
        }
    }
}

impl Door {
    /// `tokens`: each path's tokens (values already expanded); `origins`: pages allowed
    /// besides loopback ones.
    pub fn new(tokens: Option<HashMap<String, Vec<String>>>, origins: Vec<String>) -> Door {
        let access = match tokens {
            None => Access::Open,
            Some(tokens) => {
                let digests = tokens.into_iter().map(|(path, tokens)| {
                    (path, tokens.iter().map(|t| sha256(t.as_bytes())).collect())
                });
                Access::Tokens(digests.collect())
            }
        };
        Door { access, origins }
    }

    /// A door that takes an authorization server's access tokens.
    pub fn oauth(options: OAuthOptions, origins: Vec<String>) -> Door {
        let access = Access::OAuth(Arc::new(ResourceServer::new(options)));
        Door { access, origins }
    }

    /// Tells the door where the gateway listens (`http://host:port`).
    pub fn bound(&self, origin: &str) {
        if let Access::OAuth(server) = &self.access {
            server.bound(origin);
        }
    }

    /// The protected-resource metadata served at `/.well-known/oauth-protected-resource`
    /// (and that followed by a view's path), when the door takes access tokens.
    pub fn metadata(&self) -> Option<String> {
        match &self.access {
            Access::OAuth(server) => Some(server.metadata()),
            _ => None,
        }
    }

    /// The `WWW-Authenticate` challenge of a refusal on `path`, if it has one.
    pub fn challenge(&self, path: &str, refused: &DoorError) -> Option<String> {
        match (refused, &self.access) {
            (DoorError::OAuth(denied), Access::OAuth(server)) => {
                Some(server.challenge(path, denied))
            }
            (DoorError::Token { presented: true }, _) => {
                Some("Bearer realm=\"toolnexus\", error=\"invalid_token\"".to_owned())
            }
            (DoorError::Token { presented: false }, _) => {
                Some("Bearer realm=\"toolnexus\"".to_owned())
            }
            _ => None,
        }
    }

    /// Whether a request for `path` with `headers` may come in.
    pub async fn admit(&self, path: &str, headers: &HeaderMap) -> Result<(), DoorError> {
        if let Some(origin) = headers.get(http::header::ORIGIN) {
            let origin = origin.to_str().unwrap_or("(not text)");
            if !loopback_origin(origin) && !self.origins.iter().any(|o| o == origin) {
                return Err(DoorError::Origin(origin.to_owned()));
            }
        }
        let presented = headers
            .get(http::header::AUTHORIZATION)
            .and_then(|value| value.to_str().ok())
            .and_then(bearer);
        let tokens = match &self.access {
            Access::Open => return Ok(()),
            Access::OAuth(server) => {
                return server
                    .admit(path, presented)
                    .await
                    .map_err(DoorError::OAuth);
            }
            Access::Tokens(tokens) => tokens,
        };
        let Some(presented) = presented else {
            return Err(DoorError::Token { presented: false });
        };
        let presented = sha256(presented.as_bytes());
        let allowed = tokens.get(path).map_or(&[][..], Vec::as_slice);
        // Every token is compared, and each comparison reads every byte.
        let matched = allowed
            .iter()
            .fold(false, |matched, token| matched | same(token, &presented));
        if matched {
            Ok(())
        } else {
            Err(DoorError::Token { presented: true })
        }
    }
}

fn bearer(value: &str) -> Option<&str> {
    let (scheme, token) = value.trim().split_once(' ')?;
    scheme.eq_ignore_ascii_case("bearer").then(|| token.trim())
}

fn sha256(bytes: &[u8]) -> [u8; 32] {
    let mut out = [0; 32];
    out.copy_from_slice(digest(&SHA256, bytes).as_ref());
    out
}

fn same(a: &[u8; 32], b: &[u8; 32]) -> bool {
    a.iter().zip(b).fold(0u8, |diff, (x, y)| diff | (x ^ y)) == 0
}

/// A page served from this machine: `http(s)://localhost`, `127.0.0.1` or `[::1]`, any port.
fn loopback_origin(origin: &str) -> bool {
    let Some(rest) = origin
        .strip_prefix("http://")
        .or_else(|| origin.strip_prefix("https://"))
    else {
        return false;
    };
    let host = match rest.strip_prefix("[::1]") {
        Some(port) => return port.is_empty() || is_port(port),
        None => rest.rsplit_once(':').map_or(rest, |(host, port)| {
            if is_port(&format!(":{port}")) {
                host
            } else {
                rest
            }
        }),
    };
    host == "localhost" || host == "127.0.0.1"
}

fn is_port(text: &str) -> bool {
    text.strip_prefix(':')
        .is_some_and(|digits| !digits.is_empty() && digits.bytes().all(|b| b.is_ascii_digit()))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn headers(pairs: &[(&'static str, &str)]) -> HeaderMap {
        let mut map = HeaderMap::new();
        for (name, value) in pairs {
            map.insert(*name, value.parse().expect("header"));
        }
        map
    }

    #[tokio::test]
    async fn pages_of_other_origins_are_refused_unless_allowed() {
        let door = Door::new(None, vec!["https://app.example".into()]);
        for ok in [
            "http://localhost:5173",
            "http://127.0.0.1",
            "https://[::1]:8443",
            "https://app.example",
        ] {
            assert_eq!(
                door.admit("/mcp", &headers(&[("origin", ok)])).await,
                Ok(()),
                "{ok}"
            );
        }
        for bad in [
            "http://evil.example",
            "http://localhost.evil.example",
            "null",
            "http://127.0.0.1.nip.io:80",
        ] {
            let refused = door.admit("/mcp", &headers(&[("origin", bad)])).await;
            assert_eq!(refused, Err(DoorError::Origin(bad.into())), "{bad}");
        }
        assert_eq!(door.admit("/mcp", &HeaderMap::new()).await, Ok(()));
    }

    #[tokio::test]
    async fn a_token_opens_only_its_paths() {
        let tokens = HashMap::from([
            ("/mcp".to_owned(), vec!["main".to_owned()]),
            (
                "/agents/a/mcp".to_owned(),
                vec!["a1".to_owned(), "a2".to_owned()],
            ),
        ]);
        let door = Door::new(Some(tokens), Vec::new());
        let with = |t: &str| headers(&[("authorization", &format!("Bearer {t}"))]);
        assert_eq!(door.admit("/mcp", &with("main")).await, Ok(()));
        assert_eq!(door.admit("/agents/a/mcp", &with("a2")).await, Ok(()));
        assert_eq!(
            door.admit("/agents/a/mcp", &with("main")).await,
            Err(DoorError::Token { presented: true })
        );
        assert_eq!(
            door.admit("/agents/b/mcp", &with("a1")).await,
            Err(DoorError::Token { presented: true })
        );
        assert_eq!(
            door.admit("/mcp", &HeaderMap::new()).await,
            Err(DoorError::Token { presented: false })
        );
        assert_eq!(
            door.admit("/mcp", &headers(&[("authorization", "Basic bWFpbg==")]))
                .await,
            Err(DoorError::Token { presented: false })
        );
    }
}
