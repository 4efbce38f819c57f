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

mod classify;
#[cfg(test)]
mod tests;

use std::future::Future;
use std::pin::Pin;
use std::time::Duration;

use rmcp::model::{
    ClientConfig, ClientJsonRpcMessage, ClientNotification, ClientRequest, DiscoverRequest,
    DiscoverRequestParams, EmptyResult, InitializeRequest, InitializedNotification, JsonRpcMessage,
    ProtocolVersion, RequestId, RequestMetaObject, ServerPeerInfo, ServerRequest,
};
use rmcp::service::RoleClient;
use rmcp::transport::Transport;

use self::classify::{Exchange, Next, discover_id, initialize_id};
use super::error::Error;
use crate::config::ProtocolChoice;

pub use self::classify::unsupported_version;

/// How long a server that has read `server/discover` may leave it unanswered before
/// `initialize` follows; also how long a held answer waits for the other one.
pub const SILENCE: Duration = Duration::from_secs(1);

/// The opening's requests left unanswered when it ended, whose late answers nobody reads.
pub type Unanswered = Vec<RequestId>;

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

/// Resolves once the server has been silent on discover for long enough that
/// `initialize` should follow.
pub type Silence<'a> = Pin<Box<dyn Future<Output = ()> + Send + 'a>>;

/// Runs the opening; `silence` says when discover has gone unanswered for too long
/// (`None`: wait for its answer). Unbounded: the caller bounds it with the server's
/// timeout. What the answers mean is `classify`'s; this only reads and sends.
pub async fn open<T: Transport<RoleClient>>(
    transport: &mut T,
    client: &ClientConfig,
    protocol: ProtocolChoice,
    silence: Option<Silence<'_>>,
) -> Result<(ServerPeerInfo, Unanswered), OpenError<T::Error>> {
    let (mut exchange, mut next) = Exchange::start(protocol);
    let waits = silence.is_some();
    let mut silence = silence.unwrap_or_else(|| Box::pin(std::future::pending()));
    loop {
        match next {
            Next::Wait => {}
            Next::Discover => send_discover(transport, client).await?,
            Next::Initialize => send_initialize(transport, client).await?,
            Next::Initialized(peer) => {
                let initialized =
                    ClientNotification::InitializedNotification(InitializedNotification::default());
                send(transport, ClientJsonRpcMessage::notification(initialized)).await?;
                return Ok((*peer, exchange.unanswered()));
            }
            Next::Open(peer) => return Ok((*peer, exchange.unanswered())),
            Next::Fail(error) => return Err(error.into()),
        }
        let message = tokio::select! {
            message = transport.receive() => message,
            _ = &mut silence, if waits && exchange.waits_for_silence() => {
                next = exchange.silent();
                continue;
            }
            _ = tokio::time::sleep(SILENCE), if exchange.holding() => {
                next = exchange.held_long_enough();
                continue;
            }
        };
        let Some(message) = message else {
            return Err(Error::broken("closed the connection during initialize").into());
        };
        next = match message {
            JsonRpcMessage::Response(response) => {
                exchange.answered(&response.id, Ok(response.result))
            }
            JsonRpcMessage::Error(error) => match error.id {
                Some(id) => exchange.answered(&id, Err(error.error)),
                None => Next::Wait,
            },
            JsonRpcMessage::Request(request) => {
                answer_early_request(transport, request.id, &request.request).await;
                Next::Wait
            }
            JsonRpcMessage::Notification(_) => Next::Wait,
        };
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
) -> Result<(), OpenError<T::Error>> {
    let request = ClientRequest::InitializeRequest(InitializeRequest::new(client.clone()));
    send(
        transport,
        ClientJsonRpcMessage::request(request, initialize_id()),
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
