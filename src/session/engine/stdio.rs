//! Requests to a local server, below rmcp: written to its stdin by the thread that makes
//! them, with ids rmcp never uses; their answers (and progress) are taken off the incoming
//! lines before rmcp sees them and decoded straight from the bytes. `tools/list` pages, the
//! biggest answers a session gets, are decoded in one pass into tools whose schemas stay
//! JSON text.

use std::sync::{Arc, Weak};

use serde::Deserialize;
use serde_json::value::RawValue;

use super::{Engine, Listed, Progress, Reply, Waiting, Wire};
use crate::listed_tool::Page;
use crate::session::wording::malformed_response;
use crate::transport::MAX_MESSAGE_BYTES;
use crate::transport::lines::{Intercept, LineWriter, WriteError};

/// Our request ids and progress tokens: strings, where rmcp's ids are numbers.
pub const ID_PREFIX: &str = "tn-";
/// How far into a line an answer's id is looked for when the line cannot be decoded.
const ID_HEAD: usize = 256;

pub struct StdioWire(pub Arc<LineWriter>);

impl Wire for StdioWire {
    fn send(&self, _: &Arc<Engine>, id: u64, method: &str, params: String) -> Result<(), String> {
        let line = format!(
            "{{\"jsonrpc\":\"2.0\",\"id\":\"{ID_PREFIX}{id}\",\"method\":\"{method}\",\"params\":{params}}}\n"
        );
        match self.0.write_line(line.as_bytes()) {
            // The server is gone: the end of its output fails the request.
            Ok(()) | Err(WriteError::Closed) => Ok(()),
            Err(refused) => Err(refused.to_string()),
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
        if take_page(&engine, line) {
            return true;
        }
        let Ok(message) = serde_json::from_slice::<Envelope>(line) else {
            return false;
        };
        match message.method {
            None => match message.id.and_then(our_id) {
                Some(id) => {
                    let reply = match (message.result, message.error) {
                        (Some(result), _) => Reply::Result(result),
                        (None, Some(error)) => Reply::Error(error_message(error)),
                        (None, None) => {
                            Reply::Broken(&crate::session::wording::unexpected_response)
                        }
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
        self.fail_answered(head, |phase| {
            format!(
                "answered {phase} with a message over the {} MiB limit",
                MAX_MESSAGE_BYTES >> 20
            )
        });
    }

    fn unreadable(&self, line: &[u8]) {
        self.fail_answered(line, malformed_response);
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
    fn fail_answered(&self, line: &[u8], reason: impl Fn(&str) -> String) {
        if let (Some(engine), Some(id)) = (self.0.upgrade(), id_in_head(line)) {
            engine.fail_request(id, reason);
        }
    }
}

/// While a listing is waiting, a line is first read as its page, in one pass. Returns
/// false when the line is not one, or answers anything but a waiting listing (a call's
/// result may hold `tools` too).
fn take_page(engine: &Engine, line: &[u8]) -> bool {
    #[derive(Deserialize)]
    struct PageAnswer<'a> {
        #[serde(borrow)]
        id: &'a RawValue,
        #[serde(borrow)]
        result: Page<'a>,
    }
    if engine.table().listings.is_empty() {
        return false;
    }
    let Ok(answer) = serde_json::from_slice::<PageAnswer>(line) else {
        return false;
    };
    let Some(id) = our_id(answer.id) else {
        return false;
    };
    let mut table = engine.table();
    if !matches!(table.listings.get(&id), Some(Waiting::Page(_))) {
        return false;
    }
    if let Some(Waiting::Page(listing)) = table.listings.remove(&id) {
        let _ = listing.send(Ok(Listed::Page(answer.result.into_parts())));
    }
    true
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

fn error_message(error: &RawValue) -> String {
    #[derive(Deserialize)]
    struct Body {
        message: String,
    }
    serde_json::from_str::<Body>(error.get()).map_or_else(|_| error.get().to_owned(), |b| b.message)
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
