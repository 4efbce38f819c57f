//! The gateway's most common request answered on the connection's own task: a stateless
//! 2026-07-28 `tools/call` that wants no progress, sends no answers of an earlier round,
//! and comes from a client that can answer no question and takes no task. rmcp would
//! start a service for it, decode it into its types and hop through two tasks and a
//! channel; here it is read once, the call goes straight to the store, and the result is
//! written as rmcp writes it. Whatever this path does not answer exactly as rmcp would
//! (another method or era, a header or `_meta` it checks and finds wanting, an unknown
//! tool, a body without a length) goes to rmcp as it came.

use std::convert::Infallible;

use http::header::{ACCEPT, CONTENT_LENGTH, CONTENT_TYPE, HOST};
use http::{HeaderMap, Request, Response, StatusCode};
use http_body_util::combinators::BoxBody;
use http_body_util::{BodyExt, Either, Full};
use hyper::body::{Bytes, Incoming};
use rmcp::model::{RequestId, TASKS_EXTENSION_ID};
use serde::Deserialize;
use serde_json::value::RawValue;
use serde_json::{Map, Value};

use super::completed::Completed;
use super::following::{self, Following, Wants};
use super::shared::Shared;
use crate::session::trace_context;

const MODERN: &str = "2026-07-28";
/// rmcp's limit on a request body.
const MAX_BODY: u64 = 4 << 20;

pub(super) type Body = BoxBody<Bytes, Infallible>;

/// The request, answered; or handed back for rmcp with its body, unread or read.
pub(super) enum Quick {
    Answered(Response<Body>),
    Declined(Request<Either<Incoming, Full<Bytes>>>),
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Envelope<'a> {
    jsonrpc: &'a str,
    #[serde(borrow)]
    id: &'a RawValue,
    method: &'a str,
    #[serde(borrow)]
    params: Params<'a>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Params<'a> {
    name: String,
    #[serde(default, borrow)]
    arguments: Option<&'a RawValue>,
    #[serde(rename = "_meta")]
    meta: Map<String, Value>,
}

/// Answers `request` if it is the common call, for the view of `shared`; `loopback`:
/// the gateway checks `Host` (rmcp's DNS-rebinding rule).
pub(super) async fn answer(shared: &Shared, request: Request<Incoming>, loopback: bool) -> Quick {
    if !takes(request.headers(), loopback) || shared.options.meta {
        return Quick::Declined(request.map(Either::Left));
    }
    let (parts, body) = request.into_parts();
    let bytes = match body.collect().await {
        Ok(collected) => collected.to_bytes(),
        Err(_) => Bytes::new(),
    };
    match call(shared, &parts.headers, &bytes).await {
        Some(response) => Quick::Answered(response),
        None => Quick::Declined(Request::from_parts(parts, Either::Right(Full::new(bytes)))),
    }
}

/// Whether the headers are those of a stateless 2026 `tools/call` this path may take:
/// each named once, with the values rmcp wants, and a body of a stated length.
fn takes(headers: &HeaderMap, loopback: bool) -> bool {
    let one = |name: &str| {
        let mut values = headers.get_all(name).iter();
        let first = values.next().and_then(|v| v.to_str().ok());
        first.filter(|_| values.next().is_none())
    };
    let length = one(CONTENT_LENGTH.as_str()).and_then(|n| n.parse::<u64>().ok());
    let json = |value: &str| value.split(';').next().map(str::trim) == Some("application/json");
    let accept = one(ACCEPT.as_str()).is_some_and(|accept| {
        let types: Vec<&str> = accept.split(',').map(str::trim).collect();
        !accept.contains(';')
            && types.contains(&"application/json")
            && types.contains(&"text/event-stream")
    });
    one("mcp-protocol-version") == Some(MODERN)
        && one("mcp-method") == Some("tools/call")
        && one("mcp-name").is_some()
        && headers.get("mcp-session-id").is_none()
        && one(CONTENT_TYPE.as_str()).is_some_and(json)
        && accept
        && length.is_some_and(|n| n <= MAX_BODY)
        && (!loopback || one(HOST.as_str()).is_some_and(loopback_host))
}

fn loopback_host(host: &str) -> bool {
    let name = match host.strip_prefix('[') {
        Some(v6) => v6.split(']').next().unwrap_or_default(),
        None => host.rsplit_once(':').map_or(host, |(name, _)| name),
    };
    matches!(name, "localhost" | "127.0.0.1" | "::1")
}

/// Runs the call of `body`, if it is one this path answers.
async fn call(shared: &Shared, headers: &HeaderMap, body: &[u8]) -> Option<Response<Body>> {
    let envelope: Envelope = serde_json::from_slice(body).ok()?;
    let params = &envelope.params;
    // An id rmcp takes (a string or an integer) goes back as the client wrote it.
    let id_ok = serde_json::from_str::<RequestId>(envelope.id.get()).is_ok();
    let meta = &params.meta;
    let text = |key: &str| meta.get(key).and_then(Value::as_str);
    let capabilities = meta
        .get("io.modelcontextprotocol/clientCapabilities")?
        .as_object()?;
    let extensions = capabilities.get("extensions").and_then(Value::as_object);
    let takes_tasks = extensions.is_some_and(|e| e.contains_key(TASKS_EXTENSION_ID));
    let plain_client = !capabilities.contains_key("elicitation") && !takes_tasks;
    let taken = envelope.jsonrpc == "2.0"
        && envelope.method == "tools/call"
        && id_ok
        && headers.get("mcp-name")?.to_str().ok()? == params.name
        && text("io.modelcontextprotocol/protocolVersion") == Some(MODERN)
        && meta
            .get("io.modelcontextprotocol/clientInfo")
            .is_some_and(Value::is_object)
        && !meta.contains_key("progressToken")
        && plain_client;
    if !taken {
        return None;
    }
    let target = shared.named().target(&params.name)?;
    let wants = Wants {
        progress: false,
        questions: false,
        task: false,
        trace: trace_context::members_of(meta),
    };
    let arguments = params.arguments.map_or("{}", RawValue::get);
    let agent = shared.agent.as_deref();
    let call = following::start(&shared.store, agent, target, arguments, wants);
    // A client that hangs up drops this future: the call is aborted, as rmcp's request
    // would be cancelled.
    let mut call = Unanswered {
        shared,
        call,
        answered: false,
    };
    let ended = (&mut call.call.done).await;
    call.answered = true;
    let body = match ended {
        Ok(ended) => {
            let result = following::result(ended).completed();
            let result = serde_json::to_string(&result).ok()?;
            format!(
                "{{\"jsonrpc\":\"2.0\",\"id\":{},\"result\":{result}}}",
                envelope.id.get()
            )
        }
        Err(_) => format!(
            "{{\"jsonrpc\":\"2.0\",\"id\":{},\"error\":{{\"code\":-32603,\"message\":\"the call ended unanswered\"}}}}",
            envelope.id.get()
        ),
    };
    let mut response = Response::new(Full::new(Bytes::from(body)).boxed());
    *response.status_mut() = StatusCode::OK;
    let json = http::HeaderValue::from_static("application/json");
    response.headers_mut().insert(CONTENT_TYPE, json);
    Some(response)
}

/// A call whose answer is awaited: dropped unanswered, it is aborted.
struct Unanswered<'a> {
    shared: &'a Shared,
    call: Following,
    answered: bool,
}

impl Drop for Unanswered<'_> {
    fn drop(&mut self) {
        if self.answered {
            return;
        }
        let agent = self.shared.agent.as_deref();
        self.call.abort(&self.shared.store, agent);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn headers(pairs: &[(&'static str, &'static str)]) -> HeaderMap {
        let mut headers = HeaderMap::new();
        for (name, value) in pairs {
            headers.append(*name, http::HeaderValue::from_static(value));
        }
        headers
    }

    const CALL: &[(&str, &str)] = &[
        ("mcp-protocol-version", MODERN),
        ("mcp-method", "tools/call"),
        ("mcp-name", "echo"),
        ("content-type", "application/json"),
        ("accept", "application/json, text/event-stream"),
        ("content-length", "120"),
        ("host", "127.0.0.1:8808"),
    ];

    #[test]
    fn takes_only_a_plain_stateless_call_with_every_header_once() {
        assert!(takes(&headers(CALL), true));
        let with = |extra: (&'static str, &'static str)| {
            let mut pairs = CALL.to_vec();
            pairs.push(extra);
            takes(&headers(&pairs), true)
        };
        let without = |name: &str| {
            let pairs: Vec<_> = CALL.iter().copied().filter(|(n, _)| *n != name).collect();
            takes(&headers(&pairs), true)
        };
        assert!(!with(("mcp-session-id", "s")), "a 2025 session's");
        assert!(!with(("mcp-method", "tools/call")), "a header twice");
        assert!(!without("content-length"), "a body of no stated length");
        assert!(!without("mcp-name"));
        let changed = |name: &str, value: &'static str| {
            let pairs: Vec<_> = CALL
                .iter()
                .map(|&(n, v)| (n, if n == name { value } else { v }))
                .collect();
            takes(&headers(&pairs), true)
        };
        assert!(!changed("mcp-protocol-version", "2025-11-25"));
        assert!(!changed("mcp-method", "tools/list"));
        assert!(!changed("accept", "application/json"), "rmcp wants both");
        assert!(!changed(
            "accept",
            "application/json, text/event-stream;q=0"
        ));
        assert!(!changed("content-length", "4194305"), "over rmcp's limit");
        assert!(
            !changed("host", "evil.example"),
            "rmcp's DNS-rebinding rule"
        );
        assert!(
            takes(&headers(&CALL[..6]), false),
            "no Host check when bound to be reached by other names"
        );
    }

    #[test]
    fn loopback_hosts_with_and_without_ports() {
        for host in [
            "localhost",
            "localhost:80",
            "127.0.0.1:1",
            "[::1]:8808",
            "[::1]",
        ] {
            assert!(loopback_host(host), "{host}");
        }
        for host in [
            "example.com",
            "127.0.0.2",
            "[::2]:1",
            "localhost.example:80",
        ] {
            assert!(!loopback_host(host), "{host}");
        }
    }
}
