//! What a failed HTTP exchange means, in words a user reads and as a kind the session
//! decides by: rmcp's own texts name Rust types and statuses, which tell a user nothing.

use rmcp::transport::streamable_http_client::StreamableHttpError;

use crate::auth::{self, NeedsSignIn};
use crate::transport::legacy_sse::NotLegacy;

/// Why a server that answered neither as streamable HTTP nor as legacy HTTP+SSE failed:
/// a GET refused as unauthorized or forbidden says what the POST's refusal meant;
/// otherwise `streamable`, the first failure, is the one that explains.
pub fn explain_not_legacy(not_legacy: &NotLegacy, streamable: String) -> String {
    match not_legacy {
        NotLegacy::Answered(status) if *status == reqwest::StatusCode::UNAUTHORIZED => {
            UNAUTHORIZED.into()
        }
        NotLegacy::Answered(status) if *status == reqwest::StatusCode::FORBIDDEN => {
            FORBIDDEN.into()
        }
        _ => streamable,
    }
}

/// What a failed HTTP exchange means to the session that meets it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Meaning {
    /// The first POST got no usable answer (a 4xx without a JSON-RPC error, say): the
    /// server may be a legacy HTTP+SSE one, which only a GET of its event stream tells
    /// apart, as the spec describes. rmcp says which status it was only in words.
    MaybeLegacy,
    /// The server wants a sign-in that nobody here can give.
    NeedsSignIn,
    Broken,
}

/// Why opening a remote session failed over HTTP, in words, and what it means.
pub fn explain_open_error(error: &StreamableHttpError<reqwest::Error>) -> (String, Meaning) {
    if let Some(needs) = NeedsSignIn::in_http(error) {
        return (needs.to_string(), Meaning::NeedsSignIn);
    }
    let reason = match error {
        StreamableHttpError::Auth(error) => auth::explain(error),
        StreamableHttpError::AuthRequired(_) => UNAUTHORIZED.into(),
        StreamableHttpError::InsufficientScope(_) => FORBIDDEN.into(),
        StreamableHttpError::UnexpectedServerResponse(text) => {
            return (
                format!("initialize failed: {}", brief(text)),
                Meaning::MaybeLegacy,
            );
        }
        StreamableHttpError::UnexpectedContentType(kind) => {
            let kind = kind
                .as_deref()
                .map_or("none".into(), |k| format!("\"{}\"", brief(k)));
            let reason = format!("answered initialize with content type {kind}");
            return (reason, Meaning::MaybeLegacy);
        }
        StreamableHttpError::HttpStatus(status) => format!("answered initialize with {status}"),
        StreamableHttpError::Client(e) => format!("could not be reached: {}", error_chain(e)),
        other => format!("initialize failed: {other}"),
    };
    (reason, Meaning::Broken)
}

/// Why a message could not be sent, in words, and what it means: rmcp's own text for a
/// failed send starts with the transport's Rust type, which tells a user nothing.
pub fn explain_send_error(
    error: &(dyn std::error::Error + Send + Sync + 'static),
) -> (String, Meaning) {
    let Some(http) = error.downcast_ref::<StreamableHttpError<reqwest::Error>>() else {
        return (error.to_string(), Meaning::Broken);
    };
    if let Some(needs) = NeedsSignIn::in_http(http) {
        return (needs.to_string(), Meaning::NeedsSignIn);
    }
    let reason = match http {
        StreamableHttpError::Client(e) => format!("could not be reached: {}", error_chain(e)),
        StreamableHttpError::Auth(error) => auth::explain(error),
        http => http.to_string(),
    };
    (reason, Meaning::Broken)
}

/// The first line of a server's words, at most 200 characters: an error page may be long.
fn brief(text: &str) -> &str {
    let line = text.lines().next().unwrap_or_default();
    match line.char_indices().nth(200) {
        Some((end, _)) => &line[..end],
        None => line,
    }
}

const UNAUTHORIZED: &str = "is unauthorized (HTTP 401): check the credentials in its \"headers\"";
const FORBIDDEN: &str = "is forbidden (HTTP 403): check the credentials in its \"headers\"";

/// An error with its causes, which say what actually went wrong ("Connection refused"),
/// and for a certificate that was not trusted, what to do.
fn error_chain(error: &reqwest::Error) -> String {
    let mut text = error.to_string();
    let mut source = std::error::Error::source(error);
    while let Some(cause) = source {
        text.push_str(": ");
        text.push_str(&cause.to_string());
        source = cause.source();
    }
    text.push_str(crate::net::tls::certificate_advice(error));
    text
}

#[cfg(test)]
mod tests {
    use rmcp::transport::auth::AuthError;

    use super::*;

    #[test]
    fn what_an_opening_refusal_means() {
        let needs = NeedsSignIn::or_auth(AuthError::AuthorizationRequired, "docs");
        let (reason, meaning) = explain_open_error(&needs);
        assert_eq!(meaning, Meaning::NeedsSignIn);
        assert_eq!(
            reason,
            "needs authorization: sign in with `toolnexus auth docs`, or give opts.oauth.onAuthorize"
        );
        let legacy = StreamableHttpError::UnexpectedServerResponse("404 page\nmore".into());
        let (reason, meaning) = explain_open_error(&legacy);
        assert_eq!(
            (reason.as_str(), meaning),
            ("initialize failed: 404 page", Meaning::MaybeLegacy)
        );
        // An I/O error of another kind is no sign-in.
        let io = StreamableHttpError::Io(std::io::Error::other("reset"));
        assert_eq!(explain_open_error(&io).1, Meaning::Broken);
    }
}
