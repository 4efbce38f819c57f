//! The POST of a request whose answer the engine reads. rmcp's reqwest client decodes an
//! answer sent as a JSON body into its model types before anything else sees it, and
//! those drop what they do not name (see `kept`); so these requests are sent here, and
//! the response is read as rmcp's client reads it: a challenge, an accepted message, an
//! expired session, an error status (keeping a JSON-RPC error it carries), an event
//! stream, or a JSON body. An awaited answer, the body or an event, is kept before rmcp
//! reads it.

use std::borrow::Cow;
use std::collections::HashMap;
use std::sync::Arc;

use futures::{StreamExt, TryStreamExt};
use reqwest::StatusCode;
use reqwest::header::{
    ACCEPT, CONTENT_TYPE, HeaderName, HeaderValue, RETRY_AFTER, WWW_AUTHENTICATE,
};
use rmcp::model::{ClientJsonRpcMessage, ServerJsonRpcMessage};
use rmcp::transport::common::http_header::{
    EVENT_STREAM_MIME_TYPE, HEADER_LAST_EVENT_ID, HEADER_SESSION_ID, JSON_MIME_TYPE,
};
use rmcp::transport::streamable_http_client::SseError;
use rmcp::transport::streamable_http_client::{
    AuthRequiredError, HttpStatusError, InsufficientScopeError, StreamableHttpError,
    StreamableHttpPostResponse,
};
use sse_stream::{Sse, SseStream};

use super::super::MAX_MESSAGE_BYTES;
use super::super::legacy_sse::TooLarge;
use super::PostResult;
use super::kept::Kept;

/// What rmcp hands its client for one POST.
pub struct Post {
    pub uri: Arc<str>,
    pub message: ClientJsonRpcMessage,
    pub session_id: Option<Arc<str>>,
    pub auth_header: Option<String>,
    pub custom_headers: HashMap<HeaderName, HeaderValue>,
}

impl Post {
    pub fn new(
        uri: Arc<str>,
        message: ClientJsonRpcMessage,
        session_id: Option<Arc<str>>,
        auth_header: Option<String>,
        custom_headers: HashMap<HeaderName, HeaderValue>,
    ) -> Self {
        Self {
            uri,
            message,
            session_id,
            auth_header,
            custom_headers,
        }
    }
}

/// The most of an error page kept for its message.
const MAX_ERROR_PAGE: usize = 64 << 10;

pub async fn send(client: reqwest::Client, post: Post, kept: Kept) -> PostResult {
    let had_session = post.session_id.is_some();
    let response = request(&client, post)?.send().await?;
    answer(response, had_session, kept).await
}

fn request(
    client: &reqwest::Client,
    post: Post,
) -> Result<reqwest::RequestBuilder, StreamableHttpError<reqwest::Error>> {
    let accept = format!("{EVENT_STREAM_MIME_TYPE}, {JSON_MIME_TYPE}");
    let mut request = client.post(post.uri.as_ref()).header(ACCEPT, accept);
    if let Some(token) = post.auth_header {
        request = request.bearer_auth(token);
    }
    for (name, value) in post.custom_headers {
        // rmcp's own client refuses these too: they are the transport's to set.
        if [ACCEPT.as_str(), HEADER_SESSION_ID, HEADER_LAST_EVENT_ID]
            .iter()
            .any(|reserved| name.as_str().eq_ignore_ascii_case(reserved))
        {
            return Err(StreamableHttpError::ReservedHeaderConflict(
                name.to_string(),
            ));
        }
        request = request.header(name, value);
    }
    if let Some(session) = &post.session_id {
        request = request.header(HEADER_SESSION_ID, session.as_ref());
    }
    Ok(request.json(&post.message))
}

/// The response read as rmcp's client reads it; `had_session`: whether the POST carried
/// a session id, whose 404 means the session expired.
async fn answer(response: reqwest::Response, had_session: bool, kept: Kept) -> PostResult {
    let status = response.status();
    let text = |name: &str| {
        let value = response.headers().get(name);
        value.and_then(|v| v.to_str().ok()).map(str::to_owned)
    };
    let challenge = text(WWW_AUTHENTICATE.as_str());
    let retry_after = text(RETRY_AFTER.as_str());
    let session = text(HEADER_SESSION_ID);
    let media = text(CONTENT_TYPE.as_str()).unwrap_or_default();
    let is = |expected: &str| {
        let essence = media.split(';').next().unwrap_or_default();
        essence.trim().eq_ignore_ascii_case(expected)
    };
    let (is_json, is_events) = (is(JSON_MIME_TYPE), is(EVENT_STREAM_MIME_TYPE));
    match (status, challenge) {
        (StatusCode::UNAUTHORIZED, Some(header)) => {
            return Err(StreamableHttpError::AuthRequired(AuthRequiredError::new(
                header,
            )));
        }
        // The scope asked for is read from the header by the sign-in (`auth::client`).
        (StatusCode::FORBIDDEN, Some(header)) => {
            return Err(StreamableHttpError::InsufficientScope(
                InsufficientScopeError::new(header, None),
            ));
        }
        (StatusCode::ACCEPTED | StatusCode::NO_CONTENT, _) => {
            return Ok(StreamableHttpPostResponse::Accepted);
        }
        (StatusCode::NOT_FOUND, _) if had_session => {
            return Err(StreamableHttpError::SessionExpired);
        }
        _ => {}
    }
    if !status.is_success() {
        let refused = matches!(status, StatusCode::UNAUTHORIZED | StatusCode::FORBIDDEN);
        let limit = if is_json && !refused {
            MAX_MESSAGE_BYTES
        } else {
            MAX_ERROR_PAGE
        };
        let (body, whole) = read(response, limit).await.unwrap_or_default();
        if is_json
            && !refused
            && whole
            && let Ok(error @ ServerJsonRpcMessage::Error(_)) = serde_json::from_slice(&body)
        {
            return Ok(StreamableHttpPostResponse::Json(error, session));
        }
        if status == StatusCode::TOO_MANY_REQUESTS || status.is_server_error() {
            return Err(HttpStatusError::new(status.as_u16(), retry_after).into());
        }
        let page = String::from_utf8_lossy(&body[..body.len().min(MAX_ERROR_PAGE)]);
        return Err(StreamableHttpError::UnexpectedServerResponse(Cow::Owned(
            format!("HTTP {status}: {page}"),
        )));
    }
    if is_events {
        return Ok(StreamableHttpPostResponse::Sse(
            events(response, kept),
            session,
        ));
    }
    if !is_json {
        return Err(StreamableHttpError::UnexpectedContentType(Some(media)));
    }
    if response
        .content_length()
        .is_some_and(|n| n > MAX_MESSAGE_BYTES as u64)
    {
        return Err(TOO_LARGE);
    }
    let (body, whole) = read(response, MAX_MESSAGE_BYTES).await?;
    if !whole {
        return Err(TOO_LARGE);
    }
    let text = String::from_utf8_lossy(&body);
    if let Some(stand_in) = kept.keep(&text) {
        return Ok(StreamableHttpPostResponse::Json(stand_in, session));
    }
    match serde_json::from_str(&text) {
        Ok(answer) => Ok(StreamableHttpPostResponse::Json(answer, session)),
        Err(e) => Err(StreamableHttpError::UnexpectedServerResponse(Cow::Owned(
            format!("its answer is not a JSON-RPC message: {e}"),
        ))),
    }
}

const TOO_LARGE: StreamableHttpError<reqwest::Error> = StreamableHttpError::ResponseBodyTooLarge {
    max_size: MAX_MESSAGE_BYTES,
};

/// Up to `limit` bytes of the body, and whether that was all of it.
async fn read(
    mut response: reqwest::Response,
    limit: usize,
) -> Result<(Vec<u8>, bool), reqwest::Error> {
    let mut body = Vec::new();
    while let Some(chunk) = response.chunk().await? {
        let room = limit - body.len();
        if chunk.len() > room {
            body.extend_from_slice(&chunk[..room]);
            return Ok((body, false));
        }
        body.extend_from_slice(&chunk);
    }
    Ok((body, true))
}

/// The response's event stream, an awaited answer on it kept, ended by an error at the
/// first event over [`MAX_MESSAGE_BYTES`].
fn events(response: reqwest::Response, kept: Kept) -> EventStream {
    let bytes =
        response
            .bytes_stream()
            .scan((EventSize::default(), false), |(size, ended), chunk| {
                let item = match chunk {
                    _ if *ended => return futures::future::ready(None),
                    Ok(chunk) if size.grow(&chunk) => Ok(chunk),
                    Ok(_) => Err(BodyError::TooLarge(TooLarge)),
                    Err(e) => Err(BodyError::Read(e)),
                };
                *ended = item.is_err();
                futures::future::ready(Some(item))
            });
    kept.events(SseStream::from_bytes_stream(bytes).err_into())
}

type EventStream = futures::stream::BoxStream<'static, Result<Sse, SseError>>;

#[derive(Debug)]
enum BodyError {
    Read(reqwest::Error),
    TooLarge(TooLarge),
}

impl std::fmt::Display for BodyError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            BodyError::Read(e) => write!(f, "{e}"),
            BodyError::TooLarge(e) => write!(f, "{e}"),
        }
    }
}

impl std::error::Error for BodyError {}

/// The size of the event being received, counted as its bytes arrive: lines end at LF,
/// CR or CRLF, and a blank line ends an event.
#[derive(Default)]
struct EventSize {
    bytes: usize,
    /// Whether the last chunk ended inside a line.
    in_line: bool,
    /// Whether the last byte seen was a CR, whose LF ends no further line.
    after_cr: bool,
}

impl EventSize {
    /// Counts `chunk`; false once the event outgrows the limit.
    fn grow(&mut self, mut chunk: &[u8]) -> bool {
        while let Some(at) = memchr::memchr2(b'\r', b'\n', chunk) {
            let crlf = at == 0 && chunk[0] == b'\n' && self.after_cr;
            if !crlf {
                if at == 0 && !self.in_line {
                    self.bytes = 0;
                }
                self.bytes += at;
                self.in_line = false;
            }
            self.after_cr = chunk[at] == b'\r';
            chunk = &chunk[at + 1..];
        }
        if !chunk.is_empty() {
            self.bytes += chunk.len();
            self.in_line = true;
            self.after_cr = false;
        }
        self.bytes <= MAX_MESSAGE_BYTES
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sizes(chunks: &[&str]) -> Vec<usize> {
        let mut size = EventSize::default();
        chunks
            .iter()
            .map(|chunk| {
                size.grow(chunk.as_bytes());
                size.bytes
            })
            .collect()
    }

    #[test]
    fn an_event_is_counted_until_a_blank_line_however_lines_end() {
        assert_eq!(sizes(&["data: ab\n", "data: c\n\n", "x"]), [8, 0, 1]);
        assert_eq!(sizes(&["data: ab\r", "\ndata: c\r\n\r", "\nx"]), [8, 0, 1]);
        assert_eq!(sizes(&["data: ab\r\r", "x\n"]), [0, 1]);
        // A line split across chunks is one line, not a blank one between two.
        assert_eq!(sizes(&["data: a", "\n", "data: b\n"]), [7, 7, 14]);
    }

    #[test]
    fn an_endless_line_outgrows_the_limit() {
        let mut size = EventSize::default();
        let line = vec![b'a'; 1 << 20];
        let grew = (0..=MAX_MESSAGE_BYTES >> 20).all(|_| size.grow(&line));
        assert!(!grew);
        // CRLF line ends do not reset it: only a blank line does.
        let mut size = EventSize::default();
        let lines = [b"data: ".as_slice(), &line, b"\r\n"].concat();
        assert!(!(0..=MAX_MESSAGE_BYTES >> 20).all(|_| size.grow(&lines)));
        assert!(size.grow(b"\r\n"));
        assert_eq!(size.bytes, 0);
    }
}
