//! Opening a session: `server/discover` for the 2026-07-28 revision, `initialize` for
//! 2025-11-25, or discover first and `initialize` on the same pipe or URL when the server
//! shows it is older: it refuses discover, answers it with something else, or (over stdio)
//! reads it and says nothing for [`SILENCE`]. rmcp then runs the session from the outcome.
//!
//! Over stdio a server that ignores requests it does not know is common among 2025-era
//! servers, and waiting out rmcp's fixed 10 s for it would slow every such connect. The
//! clock starts only once the server has read the request: one still starting up must
//! not get an `initialize` too, since a v2 SDK server that accepts both ties the
//! connection to the 2025 session, and the 2025 era is then what it speaks. Over HTTP every request is answered, so there is no silence to wait
//! out, and rmcp's transport switches to the 2025 session rules when `initialize` follows.

use std::future::Future;
use std::pin::Pin;
use std::time::Duration;

use rmcp::model::{
    ClientConfig, ClientJsonRpcMessage, ClientNotification, ClientRequest, CustomResult,
    DiscoverRequest, DiscoverRequestParams, DiscoverResult, EmptyResult, ErrorCode, ErrorData,
    InitializeRequest, InitializedNotification, JsonRpcMessage, ProtocolVersion, RequestId,
    RequestMetaObject, ServerPeerInfo, ServerRequest, ServerResult,
};
use rmcp::service::RoleClient;
use rmcp::transport::Transport;
use serde_json::Value;

use super::error::{Error, Kind};
use super::wording::{answered_with_error, unexpected_response};
use crate::config::ProtocolChoice;

/// How long a server that has read `server/discover` may leave it unanswered before
/// `initialize` follows; also how long a held answer waits for the other one.
pub const SILENCE: Duration = Duration::from_secs(1);

/// The id of `server/discover`: a string, which rmcp's numbered requests never are.
const DISCOVER_ID: &str = "toolnexus-discover";
/// The id of `initialize`: 0, as rmcp numbers it (some servers answer it blindly).
const INITIALIZE_ID: i64 = 0;

/// The opening's requests left unanswered when it ended, whose late answers nobody reads.
pub type Unanswered = Vec<RequestId>;

/// Where the opening stands.
#[derive(Default)]
struct Exchange {
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
    fn unanswered(&self) -> Unanswered {
        let mut ids = Vec::new();
        if self.discover_pending {
            ids.push(discover_id());
        }
        if self.initialize_sent && !self.initialize_answered {
            ids.push(RequestId::Number(INITIALIZE_ID));
        }
        ids
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

fn discover_id() -> RequestId {
    RequestId::String(DISCOVER_ID.into())
}

/// Why the opening failed: the server's answers, or the transport's own error.
pub enum OpenError<E> {
    Step(Error),
    Send(E),
}

impl<E> From<Error> for OpenError<E> {
    fn from(step: Error) -> Self {
        OpenError::Step(step)
    }
}

/// An `initialize` answered with a version this client cannot speak, in words.
pub fn unsupported_version(version: &ProtocolVersion) -> String {
    format!(
        "answered initialize with protocol version \"{version}\", which this client does not support"
    )
}

/// Resolves once the server has been silent on discover for long enough that
/// `initialize` should follow.
pub type Silence<'a> = Pin<Box<dyn Future<Output = ()> + Send + 'a>>;

/// Runs the opening; `silence` says when discover has gone unanswered for too long
/// (`None`: wait for its answer). Unbounded: the caller bounds it with the server's
/// timeout.
pub async fn open<T: Transport<RoleClient>>(
    transport: &mut T,
    client: &ClientConfig,
    protocol: ProtocolChoice,
    silence: Option<Silence<'_>>,
) -> Result<(ServerPeerInfo, Unanswered), OpenError<T::Error>> {
    let mut state = Exchange::default();
    match protocol {
        ProtocolChoice::Legacy => send_initialize(transport, client, &mut state).await?,
        ProtocolChoice::Auto | ProtocolChoice::Modern => {
            send_discover(transport, client).await?;
            state.discover_pending = true;
        }
    }
    let waits = protocol == ProtocolChoice::Auto && silence.is_some();
    let mut silence = silence.unwrap_or_else(|| Box::pin(std::future::pending()));
    loop {
        let message = tokio::select! {
            message = transport.receive() => message,
            _ = &mut silence, if waits && !state.initialize_sent => {
                send_initialize(transport, client, &mut state).await?;
                continue;
            }
            // Discover answered, initialize not: the modern session it is.
            _ = tokio::time::sleep(SILENCE), if state.modern.is_some() => {
                let peer = state.modern.take().expect("held");
                return Ok((peer, state.unanswered()));
            }
            // Refused initialize, and still silent on discover: a 2025-era server's refusal.
            _ = tokio::time::sleep(SILENCE), if state.initialize_refused.is_some() => {
                let refused = state.initialize_refused.take().expect("refused");
                return Err(refused.into());
            }
        };
        let Some(message) = message else {
            return Err(Error::broken("closed the connection during initialize").into());
        };
        let (id, answer) = match message {
            JsonRpcMessage::Response(response) => (response.id, Ok(response.result)),
            JsonRpcMessage::Error(error) => match error.id {
                Some(id) => (id, Err(error.error)),
                None => continue,
            },
            JsonRpcMessage::Request(request) => {
                answer_early_request(transport, request.id, &request.request).await;
                continue;
            }
            JsonRpcMessage::Notification(_) => continue,
        };
        if id == discover_id() && state.discover_pending {
            state.discover_pending = false;
            match answer.map(discover_result) {
                Ok(Some(result)) => {
                    let modern = ProtocolVersion::V_2026_07_28;
                    if result.supported_versions.contains(&modern) {
                        let peer = ServerPeerInfo::from_discover_result(modern, result);
                        if state.initialize_sent && state.initialize_refused.is_none() {
                            state.modern = Some(peer);
                            continue;
                        }
                        return Ok((peer, state.unanswered()));
                    }
                    let versions = result.supported_versions.iter().map(|v| v.to_string());
                    state.discover_refused = Some(format!(
                        "supports only protocol versions {}",
                        versions.collect::<Vec<_>>().join(", ")
                    ));
                }
                Ok(None) => state.discover_refused = Some(unexpected_response("server/discover")),
                // The version is refused but listed as supported: asked again, once.
                Err(error) if offers_modern(&error) && !state.discover_retried => {
                    state.discover_retried = true;
                    state.discover_pending = true;
                    send_discover(transport, client).await?;
                    continue;
                }
                Err(error) => {
                    let modern_refusal = matches!(
                        error.code,
                        ErrorCode::MISSING_REQUIRED_CLIENT_CAPABILITY | ErrorCode::HEADER_MISMATCH
                    );
                    let reason = answered_with_error("server/discover", &error.message);
                    if modern_refusal {
                        let code = Some(error.code.0);
                        return Err(Error::new(Kind::Answered { code }, reason).into());
                    }
                    state.discover_refused = Some(reason);
                }
            }
            if protocol == ProtocolChoice::Modern {
                let refused = state.discover_refused.unwrap_or_default();
                let reason = format!(
                    "does not speak MCP 2026-07-28, which its \"protocol\" pins: it {refused}"
                );
                return Err(Error::answered(reason).into());
            }
            if let Some(refused) = state.initialize_refused.take() {
                return Err(refused.into());
            }
            if !state.initialize_sent {
                send_initialize(transport, client, &mut state).await?;
            }
        } else if id == RequestId::Number(INITIALIZE_ID) && state.initialize_sent {
            state.initialize_answered = true;
            match answer {
                Ok(ServerResult::InitializeResult(result)) => {
                    if !ProtocolVersion::KNOWN_VERSIONS.contains(&result.protocol_version)
                        || !result.protocol_version.has_initialize()
                    {
                        let reason = unsupported_version(&result.protocol_version);
                        return Err(Error::answered(reason).into());
                    }
                    let initialized = ClientNotification::InitializedNotification(
                        InitializedNotification::default(),
                    );
                    send(transport, ClientJsonRpcMessage::notification(initialized)).await?;
                    return Ok((result.into(), state.unanswered()));
                }
                Ok(_) => {
                    return Err(Error::answered(unexpected_response("initialize")).into());
                }
                Err(_) if state.modern.is_some() => {
                    let peer = state.modern.take().expect("held");
                    return Ok((peer, state.unanswered()));
                }
                Err(error) => {
                    let reason = answered_with_error("initialize", &error.message);
                    let reason = Error::new(
                        Kind::Answered {
                            code: Some(error.code.0),
                        },
                        reason,
                    );
                    if !state.discover_pending {
                        return Err(reason.into());
                    }
                    // A modern server may refuse initialize and still answer discover.
                    state.initialize_refused = Some(reason);
                }
            }
        }
    }
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

async fn send_discover<T: Transport<RoleClient>>(
    transport: &mut T,
    client: &ClientConfig,
) -> Result<(), OpenError<T::Error>> {
    let meta = RequestMetaObject::with_client_context(
        ProtocolVersion::V_2026_07_28,
        client.client_info.clone(),
        client.capabilities.clone(),
    );
    let mut discover = DiscoverRequest::new(DiscoverRequestParams {});
    discover.extensions.insert(meta);
    let request = ClientRequest::DiscoverRequest(discover);
    send(
        transport,
        ClientJsonRpcMessage::request(request, discover_id()),
    )
    .await
}

async fn send_initialize<T: Transport<RoleClient>>(
    transport: &mut T,
    client: &ClientConfig,
    state: &mut Exchange,
) -> Result<(), OpenError<T::Error>> {
    state.initialize_sent = true;
    let request = ClientRequest::InitializeRequest(InitializeRequest::new(client.clone()));
    send(
        transport,
        ClientJsonRpcMessage::request(request, RequestId::Number(INITIALIZE_ID)),
    )
    .await
}

async fn send<T: Transport<RoleClient>>(
    transport: &mut T,
    message: ClientJsonRpcMessage,
) -> Result<(), OpenError<T::Error>> {
    transport.send(message).await.map_err(OpenError::Send)
}

/// A server may ping before the session opens; it may ask nothing else yet.
async fn answer_early_request<T: Transport<RoleClient>>(
    transport: &mut T,
    id: RequestId,
    request: &ServerRequest,
) {
    if let ServerRequest::PingRequest(_) = request {
        let pong = rmcp::model::ClientResult::EmptyResult(EmptyResult {});
        let _ = transport
            .send(ClientJsonRpcMessage::response(pong, id))
            .await;
    }
}
