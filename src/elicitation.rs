//! Elicitation: a server asking the user something in the middle of a tool call.
//!
//! The wire form (`elicitation/create` params, `ElicitResult`) maps onto the host-facing
//! `Request` / `Answer` pair that `waitFor` works with.

use std::future::Future;
use std::pin::Pin;
use std::sync::atomic::{AtomicU64, Ordering};

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value, json};

/// What the host is asked (the `Request` of the public API).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Request {
    pub id: String,
    pub kind: String,
    pub prompt: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub url: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub data: Option<Map<String, Value>>,
}

/// The host's answer (the `Answer` of the public API).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Answer {
    #[serde(default)]
    pub id: String,
    pub ok: bool,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub data: Option<Map<String, Value>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
}

/// Whoever answers a server's question: takes the `elicitation/create` params and
/// resolves the `ElicitResult` the server receives.
pub trait Elicitor: Send + Sync {
    fn elicit(&self, params: Value) -> Pin<Box<dyn Future<Output = Value> + Send>>;
}

/// A person asked through the host (`waitFor`): resolves their answer, or `None` when
/// asking failed (which answers `cancel`).
pub trait Person: Send + Sync {
    fn ask(&self, request: Request) -> Pin<Box<dyn Future<Output = Option<Answer>> + Send>>;
}

impl<P: Person> Elicitor for P {
    fn elicit(&self, params: Value) -> Pin<Box<dyn Future<Output = Value> + Send>> {
        let answer = self.ask(to_request(&params));
        Box::pin(async move { to_result(answer.await.as_ref(), &params) })
    }
}

/// Answers every question `cancel`: the elicitor of a store whose calls bring their own
/// (a gateway's downstream clients), for the calls that do not.
pub struct Cancels;

impl Elicitor for Cancels {
    fn elicit(&self, _: Value) -> Pin<Box<dyn Future<Output = Value> + Send>> {
        Box::pin(std::future::ready(cancel()))
    }
}

/// The `ElicitResult` of a question nobody answered.
pub fn cancel() -> Value {
    json!({ "action": "cancel" })
}

static NEXT_ID: AtomicU64 = AtomicU64::new(1);

/// Maps `elicitation/create` params (form or URL mode) to a `Request` with a fresh id.
pub fn to_request(params: &Value) -> Request {
    let text = |key: &str| params.get(key).and_then(Value::as_str).map(str::to_owned);
    let id = format!("elicitation-{}", NEXT_ID.fetch_add(1, Ordering::Relaxed));
    let prompt = text("message").unwrap_or_default();
    let url_mode = params.get("mode").and_then(Value::as_str) == Some("url");
    if url_mode {
        Request {
            id,
            kind: "authorization".into(),
            prompt,
            url: text("url"),
            data: None,
        }
    } else {
        let schema = params
            .get("requestedSchema")
            .cloned()
            .unwrap_or_else(|| json!({}));
        let mut data = Map::new();
        data.insert("schema".into(), schema);
        Request {
            id,
            kind: "input".into(),
            prompt,
            url: None,
            data: Some(data),
        }
    }
}

/// Maps an `Answer` to the `ElicitResult` the server receives. On accept, fields the answer
/// leaves out are filled from the `default`s of the requested schema (SEP-1034).
pub fn to_result(answer: Option<&Answer>, params: &Value) -> Value {
    match answer {
        Some(a) if a.ok => {
            let mut content = a.data.clone().unwrap_or_default();
            let properties = params
                .pointer("/requestedSchema/properties")
                .and_then(Value::as_object);
            for (name, property) in properties.into_iter().flatten() {
                if let Some(default) = property.get("default") {
                    content
                        .entry(name.clone())
                        .or_insert_with(|| default.clone());
                }
            }
            json!({ "action": "accept", "content": content })
        }
        Some(a) if a.reason.as_deref() == Some("declined") => json!({ "action": "decline" }),
        _ => cancel(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn form_mode_becomes_input_with_schema() {
        let schema = json!({ "type": "object", "properties": { "name": { "type": "string" } } });
        let req =
            to_request(&json!({ "mode": "form", "message": "Who?", "requestedSchema": schema }));
        assert_eq!(req.kind, "input");
        assert_eq!(req.prompt, "Who?");
        assert_eq!(
            req.data.as_ref().and_then(|d| d.get("schema")),
            Some(&schema)
        );
        assert_eq!(req.url, None);
    }

    #[test]
    fn mode_absent_is_form() {
        let req = to_request(&json!({ "message": "m", "requestedSchema": {} }));
        assert_eq!(req.kind, "input");
    }

    #[test]
    fn url_mode_becomes_authorization() {
        let req = to_request(
            &json!({ "mode": "url", "message": "Log in", "url": "https://x/y", "elicitationId": "e" }),
        );
        assert_eq!(req.kind, "authorization");
        assert_eq!(req.url.as_deref(), Some("https://x/y"));
        assert_eq!(req.data, None);
    }

    #[test]
    fn ids_are_unique() {
        let a = to_request(&json!({}));
        let b = to_request(&json!({}));
        assert_ne!(a.id, b.id);
    }

    fn answer(ok: bool, data: Option<Value>, reason: Option<&str>) -> Answer {
        Answer {
            id: "a".into(),
            ok,
            data: data.and_then(|d| d.as_object().cloned()),
            reason: reason.map(str::to_owned),
        }
    }

    #[test]
    fn answers_map_to_actions() {
        let none = json!({});
        let accept = to_result(Some(&answer(true, Some(json!({ "v": 1 })), None)), &none);
        assert_eq!(accept, json!({ "action": "accept", "content": { "v": 1 } }));
        let empty = to_result(Some(&answer(true, None, None)), &none);
        assert_eq!(empty, json!({ "action": "accept", "content": {} }));
        let declined = to_result(Some(&answer(false, None, Some("declined"))), &none);
        assert_eq!(declined, json!({ "action": "decline" }));
        let expired = to_result(Some(&answer(false, None, Some("expired"))), &none);
        assert_eq!(expired, json!({ "action": "cancel" }));
        assert_eq!(
            to_result(Some(&answer(false, None, None)), &none),
            json!({ "action": "cancel" })
        );
        assert_eq!(to_result(None, &none), json!({ "action": "cancel" }));
    }

    #[test]
    fn accept_fills_schema_defaults_the_answer_leaves_out() {
        let params = json!({ "requestedSchema": { "type": "object", "properties": {
            "name": { "type": "string", "default": "anon" },
            "size": { "type": "number", "default": 3 },
            "note": { "type": "string" }
        } } });
        let result = to_result(
            Some(&answer(true, Some(json!({ "name": "Ada" })), None)),
            &params,
        );
        assert_eq!(
            result,
            json!({ "action": "accept", "content": { "name": "Ada", "size": 3 } })
        );
        let declined = to_result(Some(&answer(false, None, Some("declined"))), &params);
        assert_eq!(declined, json!({ "action": "decline" }));
    }
}
