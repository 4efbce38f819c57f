//! The gateway's front door: which browsers' pages may reach it (`Origin`, the
//! specification's DNS-rebinding rule) and which bearer tokens open which path. Tokens
//! are compared by their SHA-256 digests, every one of a path's, so the time taken says
//! nothing of how much of a guess was right.

use std::collections::HashMap;
use std::fmt;

use http::HeaderMap;
use ring::digest::{SHA256, digest};

/// Who may come in.
#[derive(Default)]
pub struct Door {
    /// The digests of the tokens that open each path; `None` asks none.
    tokens: Option<HashMap<String, Vec<[u8; 32]>>>,
    /// Origins allowed besides loopback pages' (`scheme://host:port`, as browsers send).
    origins: Vec<String>,
}

/// Why a request was turned away.
#[derive(Debug, PartialEq)]
pub enum DoorError {
    /// 403: a page of an origin not allowed.
    Origin(String),
    /// 401: no token, or not one that opens this path.
    Token { presented: bool },
}

impl fmt::Display for DoorError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            DoorError::Origin(origin) => write!(f, "Origin {origin} is not allowed"),
            DoorError::Token { presented: true } => {
                f.write_str("the bearer token is not valid here")
            }
            DoorError::Token { presented: false } => f.write_str("a bearer token is required"),
        }
    }
}

impl Door {
    /// `tokens`: each path's tokens (values already expanded); `origins`: pages allowed
    /// besides loopback ones.
    pub fn new(tokens: Option<HashMap<String, Vec<String>>>, origins: Vec<String>) -> Door {
        let tokens = tokens.map(|tokens| {
            let digests = tokens.into_iter().map(|(path, tokens)| {
                (path, tokens.iter().map(|t| sha256(t.as_bytes())).collect())
            });
            digests.collect()
        });
        Door { tokens, origins }
    }

    /// Whether a request for `path` with `headers` may come in.
    pub fn check(&self, path: &str, headers: &HeaderMap) -> Result<(), DoorError> {
        if let Some(origin) = headers.get(http::header::ORIGIN) {
            let origin = origin.to_str().unwrap_or("(not text)");
            if !loopback_origin(origin) && !self.origins.iter().any(|o| o == origin) {
                return Err(DoorError::Origin(origin.to_owned()));
            }
        }
        let Some(tokens) = &self.tokens else {
            return Ok(());
        };
        let presented = headers
            .get(http::header::AUTHORIZATION)
            .and_then(|value| value.to_str().ok())
            .and_then(bearer);
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

    /// Whether requests need a token.
    pub fn asks_tokens(&self) -> bool {
        self.tokens.is_some()
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

    #[test]
    fn pages_of_other_origins_are_refused_unless_allowed() {
        let door = Door::new(None, vec!["https://app.example".into()]);
        for ok in [
            "http://localhost:5173",
            "http://127.0.0.1",
            "https://[::1]:8443",
            "https://app.example",
        ] {
            assert_eq!(
                door.check("/mcp", &headers(&[("origin", ok)])),
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
            let refused = door.check("/mcp", &headers(&[("origin", bad)]));
            assert_eq!(refused, Err(DoorError::Origin(bad.into())), "{bad}");
        }
        assert_eq!(door.check("/mcp", &HeaderMap::new()), Ok(()));
    }

    #[test]
    fn a_token_opens_only_its_paths() {
        let tokens = HashMap::from([
            ("/mcp".to_owned(), vec!["main".to_owned()]),
            (
                "/agents/a/mcp".to_owned(),
                vec!["a1".to_owned(), "a2".to_owned()],
            ),
        ]);
        let door = Door::new(Some(tokens), Vec::new());
        let with = |t: &str| headers(&[("authorization", &format!("Bearer {t}"))]);
        assert_eq!(door.check("/mcp", &with("main")), Ok(()));
        assert_eq!(door.check("/agents/a/mcp", &with("a2")), Ok(()));
        assert_eq!(
            door.check("/agents/a/mcp", &with("main")),
            Err(DoorError::Token { presented: true })
        );
        assert_eq!(
            door.check("/agents/b/mcp", &with("a1")),
            Err(DoorError::Token { presented: true })
        );
        assert_eq!(
            door.check("/mcp", &HeaderMap::new()),
            Err(DoorError::Token { presented: false })
        );
        assert_eq!(
            door.check("/mcp", &headers(&[("authorization", "Basic bWFpbg==")])),
            Err(DoorError::Token { presented: false })
        );
    }
}
