//! Answers kept as the server wrote them. rmcp decodes every message of an event stream
//! into its model types, which drop what they do not name: a tool's `execution`, a 2025
//! task's `pollInterval`, hints it does not know. So an answer on the response stream of
//! a request the engine reads is wrapped before rmcp sees it, in a shape that only its
//! catch-all `CustomResult` takes, and the engine's wire unwraps it. An answer sent as
//! a JSON body is wrapped the same way, which is why `post` sends those requests.

use rmcp::model::{ClientRequest, CustomResult, GetMeta, ProtocolVersion, ServerResult};
use serde::Deserialize;
use serde_json::value::RawValue;

/// The one member of a wrapped result: the result's JSON text, as a string.
const MEMBER: &str = "toolnexus/whole";

/// Whether the answer to `request` goes to the engine. rmcp reads the answers of the
/// opening (also when it re-opens an expired session) and of `subscriptions/listen`
/// itself, and a 2026-07-28 tool listing: it keeps each tool's schema to mirror the
/// `x-mcp-header` arguments of later calls into `Mcp-Param-*` headers, and drops the
/// tools whose annotations break that revision's rules. (A 2026 tool has no `execution`
/// to lose.) Every other request is the engine's.
pub fn read_by_engine(request: &ClientRequest) -> bool {
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

/// `data`, an event's JSON text, with its result wrapped, if it is an answer with one.
pub fn wrap(data: &str) -> Option<String> {
    #[derive(Deserialize)]
    struct Answer<'a> {
        #[serde(borrow)]
        id: &'a RawValue,
        #[serde(borrow)]
        result: &'a RawValue,
    }
    // Most events are notifications: skip parsing those.
    if !data.contains("\"result\"") {
        return None;
    }
    let answer: Answer = serde_json::from_str(data).ok()?;
    let text = serde_json::to_string(answer.result.get()).ok()?;
    Some(format!(
        r#"{{"jsonrpc":"2.0","id":{},"result":{{"{MEMBER}":{text}}}}}"#,
        answer.id.get()
    ))
}

/// The result's JSON text as the server wrote it, if `result` was wrapped.
pub fn unwrap(result: &ServerResult) -> Option<&str> {
    match result {
        ServerResult::CustomResult(CustomResult(value)) => value.get(MEMBER)?.as_str(),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use rmcp::model::ServerJsonRpcMessage;

    use super::*;

    /// rmcp takes a wrapped answer as a `CustomResult` whatever the result held: were a
    /// model type of a later rmcp to take it, this fails.
    #[test]
    fn a_wrapped_answer_comes_through_rmcp_whole() {
        let results = [
            r#"{"tools":[{"name":"t","inputSchema":{},"execution":{"taskSupport":"required"}}]}"#,
            r#"{"task":{"taskId":"a","status":"working","pollInterval":50}}"#,
            r#"{"content":[],"isError":false}"#,
            r#"{}"#,
        ];
        for result in results {
            let data = format!(r#"{{"jsonrpc":"2.0","id":7,"result":{result}}}"#);
            let wrapped = wrap(&data).expect("an answer");
            let message: ServerJsonRpcMessage = serde_json::from_str(&wrapped).expect("decoded");
            let ServerJsonRpcMessage::Response(response) = message else {
                panic!("not a response: {wrapped}");
            };
            assert_eq!(serde_json::to_value(&response.id).ok(), Some(7.into()));
            assert_eq!(unwrap(&response.result), Some(result));
        }
    }

    #[test]
    fn a_2026_tool_listing_is_left_to_rmcp() {
        let request = |method: &str, era: &str| {
            let meta = serde_json::json!({ "io.modelcontextprotocol/protocolVersion": era });
            let params = serde_json::json!({ "name": "t", "_meta": meta });
            let request = serde_json::json!({ "method": method, "params": params });
            serde_json::from_value::<ClientRequest>(request).expect("a request")
        };
        assert!(!read_by_engine(&request("tools/list", "2026-07-28")));
        assert!(read_by_engine(&request("tools/list", "2025-11-25")));
        assert!(read_by_engine(&request("tools/call", "2026-07-28")));
    }

    #[test]
    fn only_answers_with_a_result_are_wrapped() {
        let notification =
            r#"{"jsonrpc":"2.0","method":"notifications/progress","params":{"result":1}}"#;
        assert_eq!(wrap(notification), None);
        let error = r#"{"jsonrpc":"2.0","id":1,"error":{"code":-1,"message":"\"result\""}}"#;
        assert_eq!(wrap(error), None);
        assert_eq!(wrap("not json \"result\""), None);
    }
}
