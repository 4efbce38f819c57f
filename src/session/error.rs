//! Why a session's step failed, as one type. Its `Display` is the words a user reads
//! after "MCP server \"name\" "; what decides anything is the kind, never the words.

use std::fmt;

use rmcp::model::ErrorData;
use rmcp::service::ServiceError;

use super::wording::{answered_with_error, malformed_response, timed_out, unexpected_response};
use crate::code::Code;
use crate::transport::MAX_MESSAGE_BYTES;
use crate::transport::http;

/// Why a step did not complete. `Aborted` is the caller's own cancellation.
#[derive(Debug, Clone, PartialEq)]
pub enum Failure {
    Aborted,
    Reason(Error),
}

impl From<Error> for Failure {
    fn from(error: Error) -> Self {
        Failure::Reason(error)
    }
}

/// A failure of a session's step, in words, with what it means.
#[derive(Debug, Clone, PartialEq)]
pub struct Error {
    kind: Kind,
    text: String,
}

/// What a failure means to the code that meets it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// The server answered, with a JSON-RPC error (its code) or with something else that
    /// cannot be used (no code): this stands even if the server exits next, as a stdio
    /// server does once its input closes.
    Answered { code: Option<i32> },
    /// The exchange broke; a dying child's exit explains it better.
    Broken,
    /// The streamable HTTP opening got no usable answer (a 4xx without a JSON-RPC error,
    /// say), which only a GET of a legacy HTTP+SSE server's event stream tells apart.
    MaybeLegacy,
    /// The server wants a sign-in that nobody here can give (a status's `needs_auth`).
    NeedsSignIn,
    /// Ran out of time.
    TimedOut,
    /// The session was closed (by its host) before or during the request.
    Closed,
    /// The server asked for what toolnexus does not do (a method, a capability).
    Unsupported,
    /// The server asked for input, and nobody here can give it.
    InputRequired,
    /// Anything else: the server exited or could not start, the request could not be
    /// composed or sent.
    Other,
}

impl Kind {
    /// The code a host branches on.
    pub fn code(self) -> Code {
        match self {
            Kind::Answered { code: Some(_) } => Code::ServerError,
            Kind::Answered { code: None } => Code::Protocol,
            Kind::Broken | Kind::MaybeLegacy => Code::Connection,
            Kind::NeedsSignIn => Code::SignInRequired,
            Kind::TimedOut => Code::Timeout,
            Kind::Closed => Code::Closed,
            Kind::Unsupported => Code::Unsupported,
            Kind::InputRequired => Code::InputRequired,
            Kind::Other => Code::ServerFailed,
        }
    }
}

impl From<http::Meaning> for Kind {
    fn from(meaning: http::Meaning) -> Kind {
        match meaning {
            http::Meaning::MaybeLegacy => Kind::MaybeLegacy,
            http::Meaning::NeedsSignIn => Kind::NeedsSignIn,
            http::Meaning::Broken => Kind::Broken,
        }
    }
}

impl Error {
    pub fn new(kind: Kind, text: impl Into<String>) -> Error {
        Error {
            kind,
            text: text.into(),
        }
    }

    /// A failure that is only its words.
    pub fn other(text: impl Into<String>) -> Error {
        Error::new(Kind::Other, text)
    }

    /// What the server answered, which is not what was asked for.
    pub fn answered(text: impl Into<String>) -> Error {
        Error::new(Kind::Answered { code: None }, text)
    }

    pub fn broken(text: impl Into<String>) -> Error {
        Error::new(Kind::Broken, text)
    }

    pub fn timed_out(phase: &str, timeout: std::time::Duration) -> Error {
        Error::new(Kind::TimedOut, timed_out(phase, timeout))
    }

    pub fn kind(&self) -> Kind {
        self.kind
    }

    /// The JSON-RPC error code the server answered with, if it did.
    pub fn code(&self) -> Option<i32> {
        match self.kind {
            Kind::Answered { code } => code,
            _ => None,
        }
    }

    pub fn into_text(self) -> String {
        self.text
    }

    /// The same failure in other words (its secrets hidden, say).
    pub fn map_text(self, f: impl FnOnce(String) -> String) -> Error {
        Error {
            kind: self.kind,
            text: f(self.text),
        }
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.text)
    }
}

impl std::error::Error for Error {}

/// How a request was answered.
pub enum Reply<'a> {
    Result(&'a serde_json::value::RawValue),
    /// A JSON-RPC error: its code (when it has one) and message.
    Error {
        code: Option<i32>,
        message: &'a str,
    },
    /// The exchange broke.
    Broken(Broken<'a>),
    /// The request's own response stream ended before its answer, the connection being
    /// otherwise fine (streamable HTTP). In the 2026-07-28 revision, which cannot resume a
    /// stream, a call is then sent once more; otherwise this is `Broken`.
    Interrupted(Broken<'a>),
}

/// Why an exchange broke, worded for the phase it broke in.
#[derive(Clone, Copy)]
pub enum Broken<'a> {
    /// rmcp's request path failed.
    Service(&'a ServiceError),
    /// An answer with neither a result nor an error, or a result that is not JSON text.
    Unexpected,
    /// An answer that is not valid JSON.
    Malformed,
    /// An answer over the message size limit.
    Oversized,
}

impl Broken<'_> {
    pub fn during(self, phase: &str) -> Error {
        match self {
            Broken::Service(error) => describe(error, phase),
            Broken::Unexpected => Error::broken(unexpected_response(phase)),
            Broken::Malformed => Error::broken(malformed_response(phase)),
            Broken::Oversized => Error::broken(format!(
                "answered {phase} with a message over the {} MiB limit",
                MAX_MESSAGE_BYTES >> 20
            )),
        }
    }
}

/// A protocol error in words, never a bare code.
pub fn describe(error: &ServiceError, phase: &str) -> Error {
    match error {
        ServiceError::McpError(ErrorData { code, message, .. }) => Error::new(
            Kind::Answered { code: Some(code.0) },
            answered_with_error(phase, message),
        ),
        ServiceError::Timeout { timeout } => Error::timed_out(phase, *timeout),
        ServiceError::TransportClosed => {
            Error::broken(format!("closed the connection during {phase}"))
        }
        ServiceError::TransportSend(e) => {
            let (reason, meaning) = http::explain_send_error(&*e.error);
            Error::new(Kind::from(meaning), format!("failed {phase}: {reason}"))
        }
        ServiceError::Cancelled { reason } => Error::broken(format!(
            "cancelled {phase}: {}",
            reason.as_deref().unwrap_or("no reason given")
        )),
        other => Error::broken(format!("failed {phase}: {other}")),
    }
}

#[cfg(test)]
mod tests {
    use rmcp::transport::DynamicTransportError;
    use rmcp::transport::auth::AuthError;

    use super::*;
    use crate::auth::NeedsSignIn;

    fn failed_send(error: AuthError) -> Error {
        let http = NeedsSignIn::or_auth::<reqwest::Error>(error, "docs");
        let any = std::any::TypeId::of::<()>();
        let send = DynamicTransportError::from_parts("http", any, Box::new(http));
        describe(&ServiceError::TransportSend(send), "tools/list")
    }

    #[test]
    fn a_sign_in_nobody_can_give_is_its_own_kind_in_the_same_words() {
        let needs = failed_send(AuthError::AuthorizationRequired);
        assert_eq!(needs.kind(), Kind::NeedsSignIn);
        assert_eq!(
            needs.to_string(),
            "failed tools/list: needs authorization: sign in with `toolnexus auth docs`, or give opts.oauth.onAuthorize"
        );
        let other = failed_send(AuthError::AuthorizationFailed("the person said no".into()));
        assert_eq!(other.kind(), Kind::Broken);
        assert_eq!(other.to_string(), "failed tools/list: the person said no");
    }
}
