//! Requests to a local server, below rmcp: written to its stdin by the thread that makes
//! them, with ids rmcp never uses; their answers (and progress) are taken off the incoming
//! lines before rmcp sees them and decoded straight from the bytes.

use std::sync::{Arc, Weak};

use serde::Deserialize;
use serde_json::value::RawValue;

use super::request::Progress;
use super::{Engine, NotSent, Wire};
use crate::session::error::{Broken, Reply};
use crate::transport::local::lines::{Intercept, LineWriter, WriteError};

/// Our request ids and progress tokens: strings, where rmcp's ids are numbers.
pub const ID_PREFIX: &str = "tn-";
/// How far into a line an answer's id is looked for when the line cannot be decoded.
const ID_HEAD: usize = 256;

pub struct LineWire(pub Arc<LineWriter>);

impl Wire for LineWire {
    fn send(&self, _: &Arc<Engine>, id: u64, method: &str, params: String) -> Result<(), NotSent> {
        let line = format!(
            "{{\"jsonrpc\":\"2.0\",\"id\":\"{ID_PREFIX}{id}\",\"method\":\"{method}\",\"params\":{params}}}\n"
        );
        match self.0.write_line(line.as_bytes()) {
            // The server is gone: the end of its output fails the request.
            Ok(()) | Err(WriteError::Closed) => Ok(()),
            Err(refused) => Err(NotSent::Write(refused)),
        }
    }

    fn cancel(&self, id: u64, reason: &'static str) {
        let line = format!(
            "{{\"jsonrpc\":\"2.0\",\"method\":\"notifications/cancelled\",\"params\":{{\"requestId\":\"{ID_PREFIX}{id}\",\"reason\":\"{reason}\"}}}}\n"
        );
        let _ = self.0.write_line(line.as_bytes());
    }
}

/// The engine, as the reader of a local server's lines sees it.
pub struct Incoming(pub Weak<Engine>);

impl Intercept for Incoming {
    fn intercept(&self, line: &[u8]) -> bool {
        let Some(engine) = self.0.upgrade() else {
            return false;
        };
        let Ok(message) = serde_json::from_slice::<Envelope>(line) else {
            return false;
        };
        match message.method {
            None => match message.id.and_then(our_id) {
                Some(id) => {
                    let error = message.error.filter(|_| message.result.is_none());
                    let error = error.map(error_body);
                    let reply = match (message.result, &error) {
                        (Some(result), _) => Reply::Result(result),
                        (None, Some((code, text))) => Reply::Error {
                            code: *code,
                            message: text,
                        },
                        (None, None) => Reply::Broken(Broken::Unexpected),
                    };
                    engine.reply(id, reply);
                }
                None => return false,
            },
            Some("notifications/progress") => {
                let Some(params) = message
                    .params
                    .and_then(|p| serde_json::from_str::<ProgressParams>(p.get()).ok())
                else {
                    return false;
                };
                let Some(id) = our_id(params.token) else {
                    return false;
                };
                let progress = Progress {
                    progress: params.progress,
                    total: params.total,
                    message: params.message,
                };
                engine.progress(id, progress);
            }
            Some(_) => return false,
        }
        true
    }

    fn oversized(&self, head: &[u8]) {
        self.fail_answered(head, Broken::Oversized);
    }

    fn unreadable(&self, line: &[u8]) {
        self.fail_answered(line, Broken::Malformed);
    }

    fn ended(&self) {
        if let Some(engine) = self.0.upgrade() {
            engine.ended();
        }
    }
}

impl Incoming {
    /// Fails the request a line answered, when its id is in the line's head (where it
    /// usually is): waiting for it would only run into the timeout.
    fn fail_answered(&self, line: &[u8], broken: Broken<'_>) {
        if let (Some(engine), Some(id)) = (self.0.upgrade(), id_in_head(line)) {
            engine.reply(id, Reply::Broken(broken));
        }
    }
}

/// The arguments' JSON text as one line, passed through as the caller wrote it; `None`
/// when they are not a JSON object.
pub fn one_line_object(args_json: &str) -> Option<String> {
    let args: &RawValue = serde_json::from_str(args_json).ok()?;
    let args = args.get();
    if !args.starts_with('{') {
        return None;
    }
    // JSON may hold newlines between tokens (never inside a string); a line may not. They
    // become spaces, so the text is otherwise untouched: big numbers keep every digit.
    Some(args.replace('\n', " "))
}

/// Our id in the first bytes of a line (`"id":"tn-17"`), if it is there.
fn id_in_head(line: &[u8]) -> Option<u64> {
    let head = &line[..line.len().min(ID_HEAD)];
    let at = memchr::memmem::find(head, b"\"id\"")?;
    let value = head[at + 4..]
        .trim_ascii_start()
        .strip_prefix(b":")?
        .trim_ascii_start()
        .strip_prefix(b"\"")?;
    let end = value.iter().position(|&b| b == b'"')?;
    call_number(std::str::from_utf8(&value[..end]).ok()?)
}

/// `"tn-17"` is request 17; anything else is not ours.
fn our_id(id: &RawValue) -> Option<u64> {
    call_number(id.get().strip_prefix('"')?.strip_suffix('"')?)
}

/// `tn-17` (the id's text, unquoted) is request 17.
fn call_number(text: &str) -> Option<u64> {
    text.strip_prefix(ID_PREFIX)?.parse().ok()
}

/// A JSON-RPC error's code and message; its text when it is not one.
fn error_body(error: &RawValue) -> (Option<i32>, String) {
    #[derive(Deserialize)]
    struct Body {
        #[serde(default)]
        code: Option<i32>,
        message: String,
    }
    match serde_json::from_str::<Body>(error.get()) {
        Ok(body) => (body.code, body.message),
        Err(_) => (None, error.get().to_owned()),
    }
}

/// Any incoming message, with its members kept as raw JSON text.
#[derive(Deserialize)]
struct Envelope<'a> {
    #[serde(borrow, default)]
    id: Option<&'a RawValue>,
    #[serde(borrow, default)]
    method: Option<&'a str>,
    #[serde(borrow, default)]
    params: Option<&'a RawValue>,
    #[serde(borrow, default)]
    result: Option<&'a RawValue>,
    #[serde(borrow, default)]
    error: Option<&'a RawValue>,
}

#[derive(Deserialize)]
struct ProgressParams<'a> {
    #[serde(rename = "progressToken", borrow)]
    token: &'a RawValue,
    progress: f64,
    #[serde(default)]
    total: Option<f64>,
    #[serde(default)]
    message: Option<String>,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn arguments_pass_through_on_one_line() {
        assert_eq!(
            one_line_object(r#"{"text":"a\nb"}"#).as_deref(),
            Some(r#"{"text":"a\nb"}"#)
        );
        let pretty = one_line_object("{\n  \"a\": 1\n}").expect("an object");
        assert!(!pretty.contains('\n'));
    }

    #[test]
    fn pretty_arguments_keep_big_numbers_exactly() {
        let args =
            "{\n  \"n\": 123456789012345678901234567890,\n  \"x\": 1.000000000000000000001\n}";
        assert_eq!(
            one_line_object(args).as_deref(),
            Some(r#"{   "n": 123456789012345678901234567890,   "x": 1.000000000000000000001 }"#)
        );
    }

    #[test]
    fn only_objects_are_arguments() {
        assert!(one_line_object("[1]").is_none());
        assert!(one_line_object("\"x\"").is_none());
        assert!(one_line_object("{").is_none());
    }

    #[test]
    fn only_our_string_ids_are_ours() {
        let raw = |s: &str| {
            serde_json::from_str::<&RawValue>(s)
                .map(our_id)
                .expect("json")
        };
        assert_eq!(raw("\"tn-42\""), Some(42));
        assert_eq!(raw("42"), None);
        assert_eq!(raw("\"42\""), None);
        assert_eq!(raw("\"tn-x\""), None);
    }
}
