//! Answers kept as the server wrote them. rmcp decodes every message of an event stream
//! into its model types, which drop what they do not name: a tool's `execution`, a 2025
//! task's `pollInterval`, hints it does not know. So an answer on the response stream of
//! a request the engine reads is wrapped before rmcp sees it, in a shape that only its
//! catch-all `CustomResult` takes, and the engine's wire unwraps it. An answer that
//! arrives as a JSON body is decoded inside rmcp before anything here sees it, and
//! reaches the engine as rmcp re-encodes it.

use rmcp::model::{ClientRequest, CustomResult, ServerResult};
use serde::Deserialize;
use serde_json::value::RawValue;

/// The one member of a wrapped result: the result's JSON text, as a string.
const MEMBER: &str = "toolnexus/whole";

/// Whether the answer to `request` goes to the engine. rmcp reads the answers of the
/// opening (also when it re-opens an expired session) and of `subscriptions/listen`
/// itself; every other request is the engine's.
pub fn read_by_engine(request: &ClientRequest) -> bool {
    !matches!(
        request,
        ClientRequest::InitializeRequest(_)
            | ClientRequest::DiscoverRequest(_)
            | ClientRequest::SubscriptionsListenRequest(_)
    )
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
    fn only_answers_with_a_result_are_wrapped() {
        let notification =
            r#"{"jsonrpc":"2.0","method":"notifications/progress","params":{"result":1}}"#;
        assert_eq!(wrap(notification), None);
        let error = r#"{"jsonrpc":"2.0","id":1,"error":{"code":-1,"message":"\"result\""}}"#;
        assert_eq!(wrap(error), None);
        assert_eq!(wrap("not json \"result\""), None);
    }
}
