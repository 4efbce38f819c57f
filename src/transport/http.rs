//! Remote servers: streamable HTTP through rmcp's reqwest client with rustls, and the
//! legacy HTTP+SSE transport as a fallback.

use std::collections::HashMap;
use std::future::Future;
use std::sync::{Arc, Mutex};

use futures::StreamExt;
use futures::TryFutureExt;
use futures::future::Either;
use futures::stream::BoxStream;
use rmcp::model::{ClientJsonRpcMessage, ClientRequest, RequestId, ServerJsonRpcMessage};
use rmcp::transport::streamable_http_client::{
    SseError, StreamableHttpClient, StreamableHttpPostResponse, StreamableHttpResponseLimits,
};
use sse_stream::Sse;
use tokio::sync::watch;

use reqwest::header::{HeaderMap, HeaderName, HeaderValue};
use rmcp::transport::streamable_http_client::{
    StreamableHttpClientTransport, StreamableHttpClientTransportConfig, StreamableHttpError,
};

mod explain;
mod kept;
mod post;

use self::post::Post;

use super::MAX_MESSAGE_BYTES;
use super::legacy_sse::{self, LegacySseTransport, NotLegacy};
use crate::auth::{OAuthClient, OAuthHooks};
use crate::config::RemoteSpec;

pub use self::explain::{Meaning, explain_not_legacy, explain_open_error, explain_send_error};
pub use self::kept::{Kept, engine_reads};
use crate::lock::lock;
use crate::net::client_builder;

/// Why a remote server's HTTP client could not be set up. Errors name a header, never
/// its value.
#[derive(Debug)]
pub enum SetupError {
    HeaderName(String),
    HeaderValue(String),
    Client(reqwest::Error),
}

impl std::fmt::Display for SetupError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            SetupError::HeaderName(name) => {
                write!(f, "\"{name}\" is not a valid HTTP header name")
            }
            SetupError::HeaderValue(name) => write!(
                f,
                "the value of header \"{name}\" is not a valid HTTP header value"
            ),
            SetupError::Client(e) => write!(f, "cannot build an HTTP client: {e}"),
        }
    }
}

impl std::error::Error for SetupError {}

impl From<SetupError> for NotLegacy {
    fn from(error: SetupError) -> Self {
        NotLegacy::Other(error.to_string())
    }
}

/// The configured headers (expanded when the config was read).
fn headers(spec: &RemoteSpec) -> Result<HeaderMap, SetupError> {
    let mut headers = HeaderMap::new();
    for (name, value) in &spec.headers {
        let header = HeaderName::try_from(name.as_str())
            .map_err(|_| SetupError::HeaderName(name.clone()))?;
        let value = HeaderValue::try_from(value.as_str())
            .map_err(|_| SetupError::HeaderValue(name.clone()))?;
        headers.insert(header, value);
    }
    Ok(headers)
}

/// A streamable HTTP transport for `spec`; the headers go with every request.
pub fn streamable(
    spec: &RemoteSpec,
    (server, oauth): (&str, &OAuthHooks),
    initializes: Arc<watch::Sender<u64>>,
    (related, kept): (Related, Kept),
) -> Result<StreamableHttpClientTransport<OAuthClient<CountingClient>>, SetupError> {
    let headers = headers(spec)?
        .into_iter()
        .filter_map(|(k, v)| Some((k?, v)))
        .collect();
    let config = StreamableHttpClientTransportConfig::with_uri(spec.url.as_str())
        .custom_headers(headers)
        .max_json_response_size(MAX_MESSAGE_BYTES)
        .max_sse_event_size(MAX_MESSAGE_BYTES);
    let inner = client_builder().build().map_err(SetupError::Client)?;
    let client = CountingClient {
        inner,
        initializes,
        related,
        kept,
    };
    let sign_in = spec.oauth.as_deref().cloned();
    let client = OAuthClient::new(client, server, &spec.url, sign_in, oauth.clone());
    Ok(StreamableHttpClientTransport::with_client(client, config))
}

/// A legacy HTTP+SSE transport for `spec`, once its event stream has named its endpoint.
pub async fn legacy(spec: &RemoteSpec) -> Result<LegacySseTransport, NotLegacy> {
    let client = client_builder().build().map_err(SetupError::Client)?;
    legacy_sse::connect(client, &spec.url, headers(spec)?).await
}

/// rmcp's reqwest client, counting the `initialize` requests it sends: after the first,
/// each one is a session that rmcp re-established inside its transport (an expired
/// session answered 404), which the store reports as a restart.
/// Sends the requests the engine reads itself (`post`), keeping their awaited answers
/// (`kept`), also on a stream that resumes one. Notes, for each elicitation on the
/// response stream of a POST, the request it carried: the call a person answers for.
#[derive(Clone)]
pub struct CountingClient {
    inner: reqwest::Client,
    initializes: Arc<watch::Sender<u64>>,
    related: Related,
    kept: Kept,
}

/// The request each elicitation came for, by the elicitation's id.
pub type Related = Arc<Mutex<HashMap<RequestId, RequestId>>>;

/// Notes the elicitations that arrive on the response stream of request `sent`.
fn relating(related: Related, sent: Option<RequestId>, response: PostResult) -> PostResult {
    match (sent, response) {
        (Some(sent), Ok(StreamableHttpPostResponse::Sse(stream, session))) => {
            let stream = stream.map(move |event| {
                if let Ok(Sse {
                    data: Some(data), ..
                }) = &event
                    && let Some(elicitation) = elicitation_id(data)
                {
                    lock(&related).insert(elicitation, sent.clone());
                }
                event
            });
            Ok(StreamableHttpPostResponse::Sse(stream.boxed(), session))
        }
        (_, response) => response,
    }
}

/// The id of an `elicitation/create` request, if `data` is one.
pub(crate) fn elicitation_id(data: &str) -> Option<RequestId> {
    #[derive(serde::Deserialize)]
    struct Head {
        id: RequestId,
        method: String,
    }
    if !data.contains("elicitation/create") {
        return None;
    }
    let head: Head = serde_json::from_str(data).ok()?;
    (head.method == "elicitation/create").then_some(head.id)
}

impl CountingClient {
    /// Sends `post`: a request whose answer the engine reads through `post`, anything
    /// else through rmcp's client (`rmcp`). Counts an `initialize`.
    fn posting<'a, F>(
        &'a self,
        post: Post,
        rmcp: impl FnOnce(&'a reqwest::Client, Post) -> F,
    ) -> impl Future<Output = PostResult> + Send + 'a
    where
        F: Future<Output = PostResult> + Send + 'a,
    {
        let request = match &post.message {
            ClientJsonRpcMessage::Request(request) => Some(request),
            _ => None,
        };
        if request.is_some_and(|r| matches!(r.request, ClientRequest::InitializeRequest(_))) {
            self.initializes.send_modify(|n| *n += 1);
        }
        let sent = request.map(|r| r.id.clone());
        let post = if request.is_some_and(|r| kept::engine_reads(&r.request)) {
            Either::Left(post::send(self.inner.clone(), post, self.kept.clone()))
        } else {
            Either::Right(rmcp(&self.inner, post))
        };
        answering(self.related.clone(), sent, post)
    }
}

/// A JSON-RPC error without an id, in answer to the POST of request `sent`, is that
/// request's answer: some servers answer so when they cannot use the request at all (an
/// unknown session, say, with HTTP 400). Left without an id, nothing would match it and
/// the request would wait out its timeout.
async fn answering(
    related: Related,
    sent: Option<RequestId>,
    post: impl Future<Output = PostResult>,
) -> PostResult {
    let response = post.await;
    let response = relating(related, sent.clone(), response);
    match (sent, response) {
        (
            Some(id),
            Ok(StreamableHttpPostResponse::Json(ServerJsonRpcMessage::Error(mut error), session)),
        ) if error.id.is_none() => {
            error.id = Some(id);
            Ok(StreamableHttpPostResponse::Json(
                ServerJsonRpcMessage::Error(error),
                session,
            ))
        }
        (_, response) => response,
    }
}

type PostResult = Result<StreamableHttpPostResponse, StreamableHttpError<reqwest::Error>>;
type EventStream =
    Result<BoxStream<'static, Result<Sse, SseError>>, StreamableHttpError<reqwest::Error>>;
type Headers = HashMap<HeaderName, HeaderValue>;

/// rmcp's transport sends every POST through `post_message_with_response_limits`; the
/// trait's other ways to post lead to `post_message`.
impl StreamableHttpClient for CountingClient {
    type Error = reqwest::Error;

    fn post_message(
        &self,
        uri: Arc<str>,
        message: ClientJsonRpcMessage,
        session_id: Option<Arc<str>>,
        auth_header: Option<String>,
        custom_headers: Headers,
    ) -> impl Future<Output = PostResult> + Send + '_ {
        let post = Post::new(uri, message, session_id, auth_header, custom_headers);
        self.posting(post, |inner, p| {
            inner.post_message(
                p.uri,
                p.message,
                p.session_id,
                p.auth_header,
                p.custom_headers,
            )
        })
    }

    fn post_message_with_response_limits(
        &self,
        uri: Arc<str>,
        message: ClientJsonRpcMessage,
        session_id: Option<Arc<str>>,
        auth_header: Option<String>,
        custom_headers: Headers,
        limits: StreamableHttpResponseLimits,
    ) -> impl Future<Output = PostResult> + Send + '_ {
        let post = Post::new(uri, message, session_id, auth_header, custom_headers);
        self.posting(post, move |inner, p| {
            inner.post_message_with_response_limits(
                p.uri,
                p.message,
                p.session_id,
                p.auth_header,
                p.custom_headers,
                limits,
            )
        })
    }

    fn delete_session(
        &self,
        uri: Arc<str>,
        session_id: Arc<str>,
        auth_header: Option<String>,
        custom_headers: Headers,
    ) -> impl Future<Output = Result<(), StreamableHttpError<reqwest::Error>>> + Send + '_ {
        self.inner
            .delete_session(uri, session_id, auth_header, custom_headers)
    }

    fn get_stream(
        &self,
        uri: Arc<str>,
        session_id: Option<Arc<str>>,
        last_event_id: Option<String>,
        auth_header: Option<String>,
        custom_headers: Headers,
    ) -> impl Future<Output = EventStream> + Send + '_ {
        let events =
            self.inner
                .get_stream(uri, session_id, last_event_id, auth_header, custom_headers);
        events.map_ok(|events| self.kept.clone().events(events))
    }

    fn get_stream_with_max_sse_event_size(
        &self,
        uri: Arc<str>,
        session_id: Option<Arc<str>>,
        last_event_id: Option<String>,
        auth_header: Option<String>,
        custom_headers: Headers,
        max_sse_event_size: usize,
    ) -> impl Future<Output = EventStream> + Send + '_ {
        let events = self.inner.get_stream_with_max_sse_event_size(
            uri,
            session_id,
            last_event_id,
            auth_header,
            custom_headers,
            max_sse_event_size,
        );
        events.map_ok(|events| self.kept.clone().events(events))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spec(name: &str, value: &str) -> RemoteSpec {
        RemoteSpec {
            url: "http://127.0.0.1:1/mcp".into(),
            headers: vec![(name.into(), value.into())],
            oauth: None,
        }
    }

    #[test]
    fn a_bad_header_is_named_never_shown() {
        let name = headers(&spec("bad name", "v")).err().map(|e| e.to_string());
        assert_eq!(
            name.as_deref(),
            Some("\"bad name\" is not a valid HTTP header name")
        );
        let value = headers(&spec("x-key", "secret\n"))
            .err()
            .map(|e| e.to_string());
        assert_eq!(
            value.as_deref(),
            Some("the value of header \"x-key\" is not a valid HTTP header value")
        );
    }
}
