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

pub struct LegacySseTransport {
    client: Client,
    endpoint: Url,
    headers: HeaderMap,
    incoming: mpsc::Receiver<ServerJsonRpcMessage>,
    reader: JoinHandle<()>,
}

#[derive(Debug)]
pub struct SendError(String);

impl std::fmt::Display for SendError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for SendError {}

/// Opens the event stream and waits for the `endpoint` event (the caller bounds the wait).
pub async fn connect(
    client: Client,
    url: &str,
    headers: HeaderMap,
) -> Result<LegacySseTransport, String> {
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
        return Err(format!(
            "GET of the event stream answered HTTP {status}, not an event stream"
        ));
    }
    let (endpoint_tx, endpoint_rx) = oneshot::channel();
    let (incoming_tx, incoming) = mpsc::channel(64);
    let reader = tokio::spawn(read_events(response, endpoint_tx, incoming_tx));
    let endpoint = endpoint_rx
        .await
        .map_err(|_| "the event stream ended before naming its endpoint".to_owned())?;
    let endpoint = url
        .join(&endpoint)
        .map_err(|e| format!("the endpoint event named an invalid URL: {e}"))?;
    // Messages (and any credentials in the headers) must not be sent to another origin.
    if endpoint.origin() != url.origin() {
        reader.abort();
        return Err("the endpoint event named a URL on another origin".into());
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
async fn read_events(
    mut response: reqwest::Response,
    endpoint: oneshot::Sender<String>,
    incoming: mpsc::Sender<ServerJsonRpcMessage>,
) {
    let mut endpoint = Some(endpoint);
    let mut parser = EventParser::default();
    while let Ok(Some(chunk)) = response.chunk().await {
        for (event, data) in parser.feed(&chunk) {
            match event.as_str() {
                "endpoint" => {
                    if let Some(tx) = endpoint.take() {
                        let _ = tx.send(data);
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
#[derive(Default)]
struct EventParser {
    buffer: Vec<u8>,
    event: String,
    data: Vec<String>,
}

impl EventParser {
    fn feed(&mut self, chunk: &[u8]) -> Vec<(String, String)> {
        self.buffer.extend_from_slice(chunk);
        let mut events = Vec::new();
        while let Some(end) = self.buffer.iter().position(|&b| b == b'\n') {
            let line: Vec<u8> = self.buffer.drain(..=end).collect();
            let line = String::from_utf8_lossy(&line);
            let line = line.trim_end_matches(['\n', '\r']);
            if line.is_empty() {
                if !self.data.is_empty() {
                    events.push((std::mem::take(&mut self.event), self.data.join("\n")));
                    self.data.clear();
                }
                self.event.clear();
                continue;
            }
            let (field, value) = line.split_once(':').unwrap_or((line, ""));
            let value = value.strip_prefix(' ').unwrap_or(value);
            match field {
                "event" => self.event = value.to_owned(),
                "data" => self.data.push(value.to_owned()),
                _ => {}
            }
        }
        events
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
        self.reader.abort();
        Ok(())
    }
}

impl Drop for LegacySseTransport {
    fn drop(&mut self) {
        self.reader.abort();
    }
}

#[cfg(test)]
mod tests {
    use super::EventParser;

    #[test]
    fn events_split_across_chunks_and_lines() {
        let mut parser = EventParser::default();
        assert!(
            parser
                .feed(b"event: endpoint\r\ndata: /messages?s")
                .is_empty()
        );
        let events = parser.feed(b"=1\n\n: comment\ndata: {\"a\":\ndata: 1}\n\n");
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
        assert!(parser.feed(b"event: ping\n\n").is_empty());
        assert_eq!(
            parser.feed(b"data: x\n\n"),
            [(String::new(), "x".to_owned())]
        );
    }
}
