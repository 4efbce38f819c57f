//! What the server's answers during the opening mean, with no I/O: the 2026-07-28
//! session (discover answered), the 2025 one (initialize answered), a fall back to
//! `initialize`, or a failure. The loop in `opening` reads and sends; this decides.

use rmcp::model::{
    CustomResult, DiscoverResult, ErrorCode, ErrorData, ProtocolVersion, RequestId, ServerPeerInfo,
    ServerResult,
};
use serde_json::Value;

use super::super::error::{Error, Kind};
use super::super::wording::{answered_with_error, unexpected_response};
use crate::config::ProtocolChoice;

/// The id of `server/discover`: a string, which rmcp's numbered requests never are.
const DISCOVER_ID: &str = "toolnexus-discover";
/// The id of `initialize`: 0, as rmcp numbers it (some servers answer it blindly).
const INITIALIZE_ID: i64 = 0;

pub fn discover_id() -> RequestId {
    RequestId::String(DISCOVER_ID.into())
}

pub fn initialize_id() -> RequestId {
    RequestId::Number(INITIALIZE_ID)
}

/// A server's answer to one request: its result, or its JSON-RPC error.
pub type Answer = Result<ServerResult, ErrorData>;

/// What the opening does next.
#[derive(Debug)]
pub enum Next {
    /// Read on.
    Wait,
    /// Send `server/discover` (again, once: its version refused but listed as supported).
    Discover,
    /// Send `initialize`: the server is older, or silent on discover.
    Initialize,
    /// `initialize` was answered: send `notifications/initialized`, then open.
    Initialized(Box<ServerPeerInfo>),
    /// Open the session with the peer.
    Open(Box<ServerPeerInfo>),
    Fail(Error),
}

/// Where the opening stands.
pub struct Exchange {
    protocol: ProtocolChoice,
    discover_pending: bool,
    initialize_sent: bool,
    /// Why discover was refused, when it was.
    discover_refused: Option<String>,
    initialize_answered: bool,
    /// Why initialize was refused, when it was and discover may still answer.
    initialize_refused: Option<Error>,
    discover_retried: bool,
    /// Discover's answer, held while an `initialize` already sent is answered: a server
    /// that accepts both has tied the connection to the 2025 session it opened.
    modern: Option<ServerPeerInfo>,
}

impl Exchange {
    /// The opening for `protocol`, with the request it starts with.
    pub fn start(protocol: ProtocolChoice) -> (Exchange, Next) {
        let mut exchange = Exchange {
            protocol,
            discover_pending: false,
            initialize_sent: false,
            discover_refused: None,
            initialize_answered: false,
            initialize_refused: None,
            discover_retried: false,
            modern: None,
        };
        let first = match protocol {
            ProtocolChoice::Legacy => exchange.initialize(),
            ProtocolChoice::Auto | ProtocolChoice::Modern => exchange.discover(),
        };
        (exchange, first)
    }

    fn discover(&mut self) -> Next {
        self.discover_pending = true;
        Next::Discover
    }

    fn initialize(&mut self) -> Next {
        self.initialize_sent = true;
        Next::Initialize
    }

    /// Whether a silence on discover is to be met with `initialize` (see `SILENCE`).
    pub fn waits_for_silence(&self) -> bool {
        self.protocol == ProtocolChoice::Auto && !self.initialize_sent
    }

    /// The server has been silent on discover for long enough.
    pub fn silent(&mut self) -> Next {
        match self.waits_for_silence() {
            true => self.initialize(),
            false => Next::Wait,
        }
    }

    /// Whether an answer is held until the other one comes or a silence ends it.
    pub fn holding(&self) -> bool {
        self.modern.is_some() || self.initialize_refused.is_some()
    }

    /// The other answer did not come: discover's stands (initialize not answered), or
    /// initialize's refusal does (a 2025-era server, silent on discover).
    pub fn held_long_enough(&mut self) -> Next {
        if let Some(peer) = self.modern.take() {
            return Next::Open(Box::new(peer));
        }
        match self.initialize_refused.take() {
            Some(refused) => Next::Fail(refused),
            None => Next::Wait,
        }
    }

    /// The opening's requests left unanswered, whose late answers nobody reads.
    pub fn unanswered(&self) -> Vec<RequestId> {
        let mut ids = Vec::new();
        if self.discover_pending {
            ids.push(discover_id());
        }
        if self.initialize_sent && !self.initialize_answered {
            ids.push(initialize_id());
        }
        ids
    }

    /// The answer to request `id`; one to no request of the opening's is passed over.
    pub fn answered(&mut self, id: &RequestId, answer: Answer) -> Next {
        if *id == discover_id() && self.discover_pending {
            self.discover_pending = false;
            self.on_discover(answer)
        } else if *id == initialize_id() && self.initialize_sent {
            self.initialize_answered = true;
            self.on_initialize(answer)
        } else {
            Next::Wait
        }
    }

    fn on_discover(&mut self, answer: Answer) -> Next {
        match answer.map(discover_result) {
            Ok(Some(result)) => {
                let modern = ProtocolVersion::V_2026_07_28;
                if result.supported_versions.contains(&modern) {
                    let peer = ServerPeerInfo::from_discover_result(modern, result);
                    if self.initialize_sent && self.initialize_refused.is_none() {
                        self.modern = Some(peer);
                        return Next::Wait;
                    }
                    return Next::Open(Box::new(peer));
                }
                let versions = result.supported_versions.iter().map(|v| v.to_string());
                self.discover_refused = Some(format!(
                    "supports only protocol versions {}",
                    versions.collect::<Vec<_>>().join(", ")
                ));
            }
            Ok(None) => self.discover_refused = Some(unexpected_response("server/discover")),
            Err(error) if offers_modern(&error) && !self.discover_retried => {
                self.discover_retried = true;
                return self.discover();
            }
            Err(error) => {
                let modern_refusal = matches!(
                    error.code,
                    ErrorCode::MISSING_REQUIRED_CLIENT_CAPABILITY | ErrorCode::HEADER_MISMATCH
                );
                let reason = answered_with_error("server/discover", &error.message);
                if modern_refusal {
                    let code = Some(error.code.0);
                    return Next::Fail(Error::new(Kind::Answered { code }, reason));
                }
                self.discover_refused = Some(reason);
            }
        }
        if self.protocol == ProtocolChoice::Modern {
            let refused = self.discover_refused.take().unwrap_or_default();
            let reason =
                format!("does not speak MCP 2026-07-28, which its \"protocol\" pins: it {refused}");
            return Next::Fail(Error::answered(reason));
        }
        if let Some(refused) = self.initialize_refused.take() {
            return Next::Fail(refused);
        }
        match self.initialize_sent {
            true => Next::Wait,
            false => self.initialize(),
        }
    }

    fn on_initialize(&mut self, answer: Answer) -> Next {
        match answer {
            Ok(ServerResult::InitializeResult(result)) => {
                if !ProtocolVersion::KNOWN_VERSIONS.contains(&result.protocol_version)
                    || !result.protocol_version.has_initialize()
                {
                    return Next::Fail(Error::answered(unsupported_version(
                        &result.protocol_version,
                    )));
                }
                Next::Initialized(Box::new(result.into()))
            }
            Ok(_) => Next::Fail(Error::answered(unexpected_response("initialize"))),
            Err(_) if self.modern.is_some() => {
                Next::Open(Box::new(self.modern.take().expect("held")))
            }
            Err(error) => {
                let code = Some(error.code.0);
                let reason = answered_with_error("initialize", &error.message);
                let reason = Error::new(Kind::Answered { code }, reason);
                if !self.discover_pending {
                    return Next::Fail(reason);
                }
                // A modern server may refuse initialize and still answer discover.
                self.initialize_refused = Some(reason);
                Next::Wait
            }
        }
    }
}

/// Whether `error` refuses the protocol version while listing 2026-07-28 as supported.
fn offers_modern(error: &ErrorData) -> bool {
    let supported = error.data.as_ref().and_then(|data| data.get("supported"));
    error.code == ErrorCode::UNSUPPORTED_PROTOCOL_VERSION
        && supported
            .and_then(|s| s.as_array())
            .is_some_and(|versions| versions.iter().any(|v| v == "2026-07-28"))
}

/// An `initialize` answered with a version this client cannot speak, in words.
pub fn unsupported_version(version: &ProtocolVersion) -> String {
    format!(
        "answered initialize with protocol version \"{version}\", which this client does not support"
    )
}

/// A discover answer as rmcp reads it, or as the revision allows it: an absent
/// `resultType` means complete, and a server that leaves out the caching hints gives none
/// (`ttlMs` 0, `cacheScope` private). rmcp takes such an answer for a result of no known
/// kind.
fn discover_result(answer: ServerResult) -> Option<DiscoverResult> {
    match answer {
        ServerResult::DiscoverResult(result) => Some(result),
        ServerResult::CustomResult(CustomResult(Value::Object(mut fields))) => {
            fields.entry("resultType").or_insert("complete".into());
            fields.entry("ttlMs").or_insert(0.into());
            fields.entry("cacheScope").or_insert("private".into());
            serde_json::from_value(Value::Object(fields)).ok()
        }
        _ => None,
    }
}
