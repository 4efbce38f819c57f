//! The params of a request as JSON text: its own members passed through as the caller
//! wrote them; in a later round, the answers and the state the server asked for; and
//! `_meta`, with the progress token of a request that takes progress, the era's members
//! and the caller's trace context.

use std::sync::Arc;

use super::Pending;
use super::line_wire::ID_PREFIX;

/// A request's own params members (JSON text without braces), and the caller's trace
/// context to carry in its `_meta` (see `trace_context`).
pub struct Params {
    pub members: String,
    pub trace: Option<Arc<str>>,
}

impl From<String> for Params {
    fn from(members: String) -> Params {
        Params {
            members,
            trace: None,
        }
    }
}

pub(super) fn compose(id: u64, pending: &Pending, meta: &str) -> String {
    let mut params = String::from("{");
    params.push_str(&pending.members);
    if let Some((responses, asked)) = &pending.answered {
        member(&mut params, &format!("\"inputResponses\":{responses}"));
        if let Some(state) = &asked.state {
            let state = serde_json::Value::from(state.as_str());
            params.push_str(&format!(",\"requestState\":{state}"));
        }
    }
    let meta = format!("{meta}{}", pending.trace.as_deref().unwrap_or_default());
    if pending.progress_token {
        member(
            &mut params,
            &format!("\"_meta\":{{\"progressToken\":\"{ID_PREFIX}{id}\"{meta}}}"),
        );
    } else if let Some(meta) = meta.strip_prefix(',') {
        member(&mut params, &format!("\"_meta\":{{{meta}}}"));
    }
    params.push('}');
    params
}

/// The params of a request about a task: its id (`members`) and the era's `_meta`.
pub(super) fn about_task(members: &str, meta: &str) -> String {
    match meta.strip_prefix(',') {
        Some(meta) => format!("{{{members},\"_meta\":{{{meta}}}}}"),
        None => format!("{{{members}}}"),
    }
}

/// Appends `text` to an object being written, after a comma unless it is the first.
fn member(params: &mut String, text: &str) {
    if !params.ends_with('{') {
        params.push(',');
    }
    params.push_str(text);
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use super::*;
    use crate::session::engine::request::{Caller, Decoded};
    use crate::session::error::Failure;
    use crate::tool::result::InputRequired;

    struct Nobody;

    impl Caller for Nobody {
        fn decode(&self, _: &serde_json::value::RawValue) -> Decoded {
            Decoded::Unexpected
        }
        fn fail(&self, _: Failure) {}
        fn given_up(&self) -> &'static str {
            "the call"
        }
    }

    fn pending(tool: &str, args: &str) -> Pending {
        let mut pending = Pending::new(7, Arc::new(Nobody), "tools/call", "t".into());
        let name = serde_json::Value::from(tool);
        pending.members = format!("\"name\":{name},\"arguments\":{args}").into();
        pending.progress_token = true;
        pending
    }

    #[tokio::test]
    async fn a_call_passes_its_arguments_through_with_its_progress_token() {
        let params = compose(7, &pending("echo \"x\"", r#"{"text":"a\nb"}"#), "");
        assert_eq!(
            params,
            r#"{"name":"echo \"x\"","arguments":{"text":"a\nb"},"_meta":{"progressToken":"tn-7"}}"#
        );
    }

    #[tokio::test]
    async fn a_later_round_carries_the_answers_the_state_and_the_era() {
        let asked = InputRequired {
            requests: serde_json::Map::new(),
            state: Some("s\"1".into()),
        };
        let mut later = pending("t", "{}");
        later.answered = Some((r#"{"k":{"action":"decline"}}"#.to_owned(), asked));
        let meta = r#","io.modelcontextprotocol/protocolVersion":"2026-07-28""#;
        let params = compose(9, &later, meta);
        let params: serde_json::Value = serde_json::from_str(&params).expect("JSON");
        assert_eq!(params["inputResponses"]["k"]["action"], "decline");
        assert_eq!(params["requestState"], "s\"1");
        assert_eq!(params["_meta"]["progressToken"], "tn-9");
        assert_eq!(
            params["_meta"]["io.modelcontextprotocol/protocolVersion"],
            "2026-07-28"
        );
        let first = compose(9, &pending("t", "{}"), meta);
        assert!(!first.contains("requestState") && !first.contains("inputResponses"));
    }

    #[tokio::test]
    async fn a_request_without_progress_carries_only_its_members_and_the_era() {
        let mut page = pending("t", "{}");
        page.members = "\"cursor\":\"c\"".into();
        page.progress_token = false;
        assert_eq!(compose(3, &page, ""), r#"{"cursor":"c"}"#);
        page.members = "".into();
        assert_eq!(compose(3, &page, ",\"v\":1"), r#"{"_meta":{"v":1}}"#);
        assert_eq!(compose(3, &page, ""), "{}");
    }
}
