//! Answers kept as the server wrote them. rmcp decodes every answer into its model types,
//! which drop what they do not name: a tool's `execution`, a 2025 task's `pollInterval`,
//! hints it does not know. So the answer to a request the engine awaits is taken off the
//! response to its POST (`post`), or off the stream that resumes it, before rmcp reads it:
//! its result is kept here as written, for the engine's wire to decode once, and rmcp is
//! handed the same answer with an empty result, which ends its pending request.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use futures::StreamExt;
use futures::stream::{BoxStream, Stream};
use rmcp::model::{
    ClientRequest, GetMeta, ProtocolVersion, RequestId, ServerJsonRpcMessage, ServerResult,
};
use serde::Deserialize;
use serde_json::value::RawValue;
use sse_stream::Sse;

use crate::lock::lock;

/// Whether the answer to `request` goes to the engine. rmcp reads the answers of the
/// opening (also when it re-opens an expired session) and of `subscriptions/listen`
/// itself, and a 2026-07-28 tool listing: it keeps each tool's schema to mirror the
/// `x-mcp-header` arguments of later calls into `Mcp-Param-*` headers, and drops the
/// tools whose annotations break that revision's rules. (A 2026 tool has no `execution`
/// to lose.) Every other request is the engine's.
pub fn engine_reads(request: &ClientRequest) -> bool {
    match request {
        ClientRequest::InitializeRequest(_)
        | ClientRequest::DiscoverRequest(_)
        | ClientRequest::SubscriptionsListenRequest(_) => false,
        ClientRequest::ListToolsRequest(_) => request
            .get_meta()
            .protocol_version()
            .is_none_or(|era| era < ProtocolVersion::STANDARD_HEADERS),
        _ => true,
    }
}

/// The requests whose answers the engine awaits (those it reads), by rmcp's request id,
/// each with its result once the transport has kept it. An entry lives from the request's
/// sending to its end (answered or cancelled), so an answer that comes later passes to
/// rmcp.
#[derive(Clone, Default)]
pub struct Kept(Arc<Mutex<HashMap<RequestId, Option<Box<RawValue>>>>>);

impl Kept {
    /// Awaits the answer to request `id`.
    pub fn awaiting(&self, id: RequestId) {
        lock(&self.0).insert(id, None);
    }

    /// Stops awaiting request `id`; its result, if the transport kept it.
    pub fn take(&self, id: &RequestId) -> Option<Box<RawValue>> {
        lock(&self.0).remove(id).flatten()
    }

    /// Keeps the result of `data`, a message's JSON text, if it answers an awaited request
    /// not answered yet; then, what rmcp is handed instead.
    pub fn keep(&self, data: &str) -> Option<ServerJsonRpcMessage> {
        #[derive(Deserialize)]
        struct Answer<'a> {
            id: RequestId,
            #[serde(borrow)]
            result: &'a RawValue,
        }
        // Most messages are notifications: skip parsing those.
        if !data.contains("\"result\"") {
            return None;
        }
        let answer: Answer = serde_json::from_str(data).ok()?;
        let mut awaited = lock(&self.0);
        let slot = awaited.get_mut(&answer.id).filter(|slot| slot.is_none())?;
        *slot = Some(answer.result.to_owned());
        Some(ServerJsonRpcMessage::response(
            ServerResult::empty(()),
            answer.id,
        ))
    }

    /// `events` with each awaited answer on them kept (see `keep`).
    pub fn events<E: Send + 'static>(
        self,
        events: impl Stream<Item = Result<Sse, E>> + Send + 'static,
    ) -> BoxStream<'static, Result<Sse, E>> {
        let keep = move |mut event: Sse| {
            if let Some(stand_in) = event.data.as_deref().and_then(|data| self.keep(data)) {
                event.data = serde_json::to_string(&stand_in).ok();
            }
            event
        };
        events.map(move |event| event.map(&keep)).boxed()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const RESULTS: [&str; 4] = [
        r#"{"tools":[{"name":"t","inputSchema":{},"execution":{"taskSupport":"required"}}]}"#,
        r#"{"task":{"taskId":"a","status":"working","pollInterval":50}}"#,
        r#"{"content":[{"type":"text","text":"\"quoted\" \u00e9"}],"isError":false}"#,
        r#"{}"#,
    ];

    #[test]
    fn an_awaited_answer_is_kept_as_written_and_rmcp_gets_an_empty_one() {
        let kept = Kept::default();
        for (n, result) in RESULTS.iter().enumerate() {
            let id = RequestId::Number(n as i64);
            kept.awaiting(id.clone());
            let data = format!(r#"{{"jsonrpc":"2.0","id":{n},"result":{result}}}"#);
            let stand_in = kept.keep(&data).expect("kept");
            // rmcp reads it as the answer to its request.
            let text = serde_json::to_string(&stand_in).expect("JSON");
            assert_eq!(
                text,
                format!(r#"{{"jsonrpc":"2.0","id":{n},"result":{{}}}}"#)
            );
            let decoded: ServerJsonRpcMessage = serde_json::from_str(&text).expect("decoded");
            assert!(matches!(decoded, ServerJsonRpcMessage::Response(r) if r.id == id));
            assert_eq!(
                kept.take(&id).map(|raw| raw.get().to_owned()).as_deref(),
                Some(*result)
            );
            assert!(kept.take(&id).is_none());
        }
    }

    #[test]
    fn other_messages_pass_to_rmcp() {
        let kept = Kept::default();
        kept.awaiting(RequestId::Number(1));
        // An answer to a request not awaited (stopped, say), and a second answer to one.
        assert!(
            kept.keep(r#"{"jsonrpc":"2.0","id":2,"result":{}}"#)
                .is_none()
        );
        assert!(
            kept.keep(r#"{"jsonrpc":"2.0","id":"1","result":{}}"#)
                .is_none()
        );
        assert!(
            kept.keep(r#"{"jsonrpc":"2.0","id":1,"result":{"a":1}}"#)
                .is_some()
        );
        assert!(
            kept.keep(r#"{"jsonrpc":"2.0","id":1,"result":{"a":2}}"#)
                .is_none()
        );
        assert_eq!(
            kept.take(&RequestId::Number(1))
                .map(|r| r.get().to_owned())
                .as_deref(),
            Some(r#"{"a":1}"#)
        );
        kept.awaiting(RequestId::Number(3));
        let notification =
            r#"{"jsonrpc":"2.0","method":"notifications/progress","params":{"result":1}}"#;
        let error = r#"{"jsonrpc":"2.0","id":3,"error":{"code":-1,"message":"\"result\""}}"#;
        let request = r#"{"jsonrpc":"2.0","id":3,"method":"ping","params":{"result":{}}}"#;
        for data in [notification, error, request, "not json \"result\""] {
            assert!(kept.keep(data).is_none(), "{data}");
        }
        assert!(kept.take(&RequestId::Number(3)).is_none());
    }

    #[tokio::test]
    async fn an_awaited_answer_is_kept_off_an_event_stream() {
        let kept = Kept::default();
        kept.awaiting(RequestId::Number(4));
        let progress = r#"{"jsonrpc":"2.0","method":"notifications/progress","params":{}}"#;
        let answer = r#"{"jsonrpc":"2.0","id":4,"result":{"task":{"pollInterval":5}}}"#;
        let events = [progress, answer].map(|data| Ok::<_, ()>(Sse::default().data(data)));
        let events: Vec<_> = kept
            .clone()
            .events(futures::stream::iter(events))
            .collect()
            .await;
        let data: Vec<_> = events.iter().map(|e| e.clone().ok()?.data).collect();
        let stand_in = r#"{"jsonrpc":"2.0","id":4,"result":{}}"#;
        assert_eq!(data, [Some(progress.into()), Some(stand_in.into())]);
        let result = kept.take(&RequestId::Number(4)).map(|r| r.get().to_owned());
        assert_eq!(result.as_deref(), Some(r#"{"task":{"pollInterval":5}}"#));
    }

    #[test]
    fn a_2026_tool_listing_is_left_to_rmcp() {
        let request = |method: &str, era: &str| {
            let meta = serde_json::json!({ "io.modelcontextprotocol/protocolVersion": era });
            let params = serde_json::json!({ "name": "t", "_meta": meta });
            let request = serde_json::json!({ "method": method, "params": params });
            serde_json::from_value::<ClientRequest>(request).expect("a request")
        };
        assert!(!engine_reads(&request("tools/list", "2026-07-28")));
        assert!(engine_reads(&request("tools/list", "2025-11-25")));
        assert!(engine_reads(&request("tools/call", "2026-07-28")));
    }
}
