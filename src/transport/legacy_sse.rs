//! The legacy HTTP+SSE transport (protocol 2024-11-05), for servers that predate streamable
//! HTTP: a GET opens an event stream whose first `endpoint` event names the URL to POST
//! messages to; the server's messages arrive as `message` events on that stream.
//! rmcp no longer ships a client for it, so this is the smallest correct one.

use std::future::Future;

use reqwest::header::{ACCEPT, CONTENT_TYPE, HeaderMap};
use reqwest::{Client, Url};
use rmcp::model::{ClientJsonRpcMessage, ServerJsonRpcMessage};
use rmcp::service::RoleClient;
use rmcp::transport::Transport;
use tokio::sync::{mpsc, oneshot};
use tokio::task::JoinHandle;

use super::MAX_MESSAGE_BYTES;

pub struct LegacySseTransport {
    client: Client,
    endpoint: Url,
    headers: HeaderMap,
    incoming: mpsc::Receiver<ServerJsonRpcMessage>,
    reader: Reader,
}

/// The task reading the event stream; it ends (and the stream is let go) with its owner,
/// a connect that fails or is given up included.
struct Reader(JoinHandle<()>);

impl Drop for Reader {
    fn drop(&mut self) {
        self.0.abort();
    }
}

#[derive(Debug)]
pub struct SendError(String);

impl std::fmt::Display for SendError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for SendError {}

/// Why a server is not a legacy HTTP+SSE one.
#[derive(Debug)]
pub enum NotLegacy {
    /// The GET of the event stream was answered with this status, or without a stream.
    Answered(reqwest::StatusCode),
    Other(String),
}

impl std::fmt::Display for NotLegacy {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            NotLegacy::Answered(status) => write!(
                f,
                "GET of the event stream answered HTTP {status}, not an event stream"
            ),
            NotLegacy::Other(reason) => f.write_str(reason),
        }
    }
}

impl From<String> for NotLegacy {
    fn from(reason: String) -> Self {
        NotLegacy::Other(reason)
    }
}

/// Opens the event stream and waits for the `endpoint` event (the caller bounds the wait).
pub async fn connect(
    client: Client,
    url: &str,
    headers: HeaderMap,
) -> Result<LegacySseTransport, NotLegacy> {
    let url = Url::parse(url).map_err(|e| format!("invalid URL: {e}"))?;
    let response = client
        .get(url.clone())
        .headers(headers.clone())
        .header(ACCEPT, "text/event-stream")
        .send()
        .await
        .map_err(|e| format!("GET of the event stream failed: {}", e.without_url()))?;
    let status = response.status();
    let is_event_stream = response
        .headers()
        .get(CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|ct| ct.starts_with("text/event-stream"));
    if !status.is_success() || !is_event_stream {
        return Err(NotLegacy::Answered(status));
    }
    let (endpoint_tx, endpoint_rx) = oneshot::channel();
    let (incoming_tx, incoming) = mpsc::channel(64);
    let reader = Reader(tokio::spawn(read_events(
        response,
        endpoint_tx,
        incoming_tx,
    )));
    let endpoint = endpoint_rx
        .await
        .unwrap_or_else(|_| Err("the event stream ended before naming its endpoint".to_owned()))?;
    let endpoint = url
        .join(&endpoint)
        .map_err(|e| format!("the endpoint event named an invalid URL: {e}"))?;
    // Messages (and any credentials in the headers) must not be sent to another origin.
    if endpoint.origin() != url.origin() {
        return Err(NotLegacy::Other(
            "the endpoint event named a URL on another origin".into(),
        ));
    }
    Ok(LegacySseTransport {
        client,
        endpoint,
        headers,
        incoming,
        reader,
    })
}

/// Parses the event stream: the first `endpoint` event, then JSON-RPC `message` events.
/// An event over the size limit ends the stream, and with it the session.
async fn read_events(
    mut response: reqwest::Response,
    endpoint: oneshot::Sender<Result<String, String>>,
    incoming: mpsc::Sender<ServerJsonRpcMessage>,
) {
    let mut endpoint = Some(endpoint);
    let mut parser = EventParser::default();
    while let Ok(Some(chunk)) = response.chunk().await {
        let events = match parser.feed(&chunk) {
            Ok(events) => events,
            Err(TooLarge) => {
                if let Some(tx) = endpoint.take() {
                    let _ = tx.send(Err(TooLarge.to_string()));
                }
                return;
            }
        };
        for (event, data) in events {
            match event.as_str() {
                "endpoint" => {
                    if let Some(tx) = endpoint.take() {
                        let _ = tx.send(Ok(data));
                    }
                }
                "message" | "" => {
                    // A malformed message is skipped, as a stream parser must keep going.
                    if let Ok(message) = serde_json::from_str(&data)
                        && incoming.send(message).await.is_err()
                    {
                        return;
                    }
                }
                _ => {}
            }
        }
    }
}

/// A minimal `text/event-stream` parser: yields (event name, data) per dispatched event.
/// Each byte is scanned once, and an event may not outgrow [`MAX_MESSAGE_BYTES`].
#[derive(Default)]
pub(crate) struct EventParser {
    /// Bytes after the last complete line.
    partial: Vec<u8>,
    event: String,
    data: Vec<String>,
    /// The size of `data`, joined.
    data_bytes: usize,
}

#[derive(Debug, PartialEq)]
pub(crate) struct TooLarge;

impl std::fmt::Display for TooLarge {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "sent an event over the {} MiB limit on its event stream",
            MAX_MESSAGE_BYTES >> 20
        )
    }
}

impl EventParser {
    pub(crate) fn feed(&mut self, chunk: &[u8]) -> Result<Vec<(String, String)>, TooLarge> {
        let mut events = Vec::new();
        let mut rest = chunk;
        while let Some(end) = memchr::memchr(b'\n', rest) {
            let line = if self.partial.is_empty() {
                String::from_utf8_lossy(&rest[..end])
            } else {
                self.partial.extend_from_slice(&rest[..end]);
                String::from_utf8_lossy(&self.partial)
            };
            let line = line.into_owned();
            self.partial.clear();
            rest = &rest[end + 1..];
            self.line(line.trim_end_matches('\r'), &mut events);
        }
        self.partial.extend_from_slice(rest);
        if self.partial.len() + self.data_bytes > MAX_MESSAGE_BYTES {
            return Err(TooLarge);
        }
        Ok(events)
    }

    fn line(&mut self, line: &str, events: &mut Vec<(String, String)>) {
        if line.is_empty() {
            if !self.data.is_empty() {
                events.push((std::mem::take(&mut self.event), self.data.join("\n")));
                self.data.clear();
                self.data_bytes = 0;
            }
            self.event.clear();
            return;
        }
        let (field, value) = line.split_once(':').unwrap_or((line, ""));
        let value = value.strip_prefix(' ').unwrap_or(value);
        match field {
            "event" => self.event = value.to_owned(),
            "data" => {
                self.data_bytes += value.len() + 1;
                self.data.push(value.to_owned());
            }
            _ => {}
        }
    }
}

impl Transport<RoleClient> for LegacySseTransport {
    type Error = SendError;

    fn send(
        &mut self,
        item: ClientJsonRpcMessage,
    ) -> impl Future<Output = Result<(), SendError>> + Send + 'static {
        let request = self
            .client
            .post(self.endpoint.clone())
            .headers(self.headers.clone())
            .header(CONTENT_TYPE, "application/json");
        async move {
            let body = serde_json::to_vec(&item).map_err(|e| SendError(e.to_string()))?;
            let response = request
                .body(body)
                .send()
                .await
                .map_err(|e| SendError(format!("POST failed: {}", e.without_url())))?;
            if response.status().is_success() {
                Ok(())
            } else {
                Err(SendError(format!(
                    "POST answered HTTP {}",
                    response.status()
                )))
            }
        }
    }

    fn receive(&mut self) -> impl Future<Output = Option<ServerJsonRpcMessage>> + Send {
        self.incoming.recv()
    }

    async fn close(&mut self) -> Result<(), SendError> {
        self.reader.0.abort();
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use std::time::{Duration, Instant};

    use super::{EventParser, MAX_MESSAGE_BYTES};

    #[test]
    fn events_split_across_chunks_and_lines() {
        let mut parser = EventParser::default();
        assert!(
            parser
                .feed(b"event: endpoint\r\ndata: /messages?s")
                .expect("small")
                .is_empty()
        );
        let events = parser
            .feed(b"=1\n\n: comment\ndata: {\"a\":\ndata: 1}\n\n")
            .expect("small");
        assert_eq!(
            events,
            [
                ("endpoint".into(), "/messages?s=1".into()),
                (String::new(), "{\"a\":\n1}".into())
            ]
        );
    }

    #[test]
    fn an_event_without_data_is_not_dispatched() {
        let mut parser = EventParser::default();
        assert!(parser.feed(b"event: ping\n\n").expect("small").is_empty());
        assert_eq!(
            parser.feed(b"data: x\n\n").expect("small"),
            [(String::new(), "x".to_owned())]
        );
    }

    #[test]
    fn a_long_line_in_small_chunks_is_scanned_once() {
        let mut parser = EventParser::default();
        let started = Instant::now();
        assert_eq!(parser.feed(b"data: ").map(|e| e.len()), Ok(0));
        let chunk = [b'x'; 1024];
        for _ in 0..(16 << 10) {
            assert_eq!(parser.feed(&chunk).map(|e| e.len()), Ok(0));
        }
        let events = parser.feed(b"\n\n").expect("under the limit");
        assert_eq!(events[0].1.len(), 16 << 20);
        assert!(
            started.elapsed() < Duration::from_secs(2),
            "took {:?}",
            started.elapsed()
        );
    }

    #[test]
    fn an_event_over_the_limit_is_refused() {
        let mut parser = EventParser::default();
        let mut line = b"data: ".to_vec();
        line.resize(line.len() + (1 << 20), b'x');
        line.push(b'\n');
        let mut fed = 0;
        while parser.feed(&line).is_ok() {
            fed += line.len();
            assert!(fed < 2 * MAX_MESSAGE_BYTES, "never refused");
        }
        assert!(fed <= MAX_MESSAGE_BYTES, "{fed}");
    }
}
