//! A `tools/call` result as the host sees it: one `output` string and an error flag, plus
//! the raw content when it holds more than text.

use std::borrow::Cow;

use serde::Deserialize;
use serde_json::{Map, Value};

use super::js_json;
use crate::code::Code;

#[derive(Debug, Clone, PartialEq)]
pub struct ToolOutput {
    pub output: String,
    pub is_error: bool,
    /// The whole `content` array as the server sent it, when it holds anything but text
    /// (an image a caller may want to forward to a model, say).
    pub content: Option<Value>,
    /// The result's `structuredContent`, when a successful result has one; `output` is
    /// then its JSON text.
    pub structured: Option<Value>,
    /// What toolnexus says of an error it composed itself (none for a server's own).
    pub code: Option<Code>,
}

impl ToolOutput {
    pub fn text(output: String) -> ToolOutput {
        ToolOutput {
            output,
            is_error: false,
            content: None,
            structured: None,
            code: None,
        }
    }

    /// An error result as a server returned it.
    pub fn error(reason: impl Into<String>) -> ToolOutput {
        ToolOutput {
            output: reason.into(),
            is_error: true,
            content: None,
            structured: None,
            code: None,
        }
    }

    /// An error result toolnexus composed, with its code.
    pub fn failure(code: Code, reason: impl Into<String>) -> ToolOutput {
        ToolOutput {
            code: Some(code),
            ..ToolOutput::error(reason)
        }
    }
}

/// A `tools/call` result, decoded without building a tree of its content: text parts
/// borrow from the message when they hold no escapes.
#[derive(Deserialize)]
struct ResultView<'a> {
    #[serde(borrow, default)]
    content: Vec<PartView<'a>>,
    #[serde(rename = "isError", default)]
    is_error: Option<bool>,
    #[serde(rename = "structuredContent", default)]
    structured: Option<Value>,
    /// Absent before the 2026-07-28 revision, where it means `"complete"`.
    #[serde(rename = "resultType", borrow, default)]
    result_type: Option<Cow<'a, str>>,
}

/// What a `tools/call` answer says: the call's result, or that the server needs input
/// first (a multi-round-trip request of the 2026-07-28 revision).
#[derive(Debug, PartialEq)]
pub enum Outcome {
    Complete(ToolOutput),
    InputRequired(InputRequired),
}

/// An `InputRequiredResult`: what the server asks, by its keys, and the state to echo.
#[derive(Debug, PartialEq, Deserialize)]
pub struct InputRequired {
    #[serde(rename = "inputRequests", default)]
    pub requests: Map<String, Value>,
    #[serde(rename = "requestState", default)]
    pub state: Option<String>,
}

#[derive(Deserialize)]
struct PartView<'a> {
    #[serde(rename = "type", borrow)]
    kind: Cow<'a, str>,
    #[serde(borrow, default)]
    text: Option<Cow<'a, str>>,
}

/// The whole `content` array, decoded again only when it holds more than text.
#[derive(Deserialize)]
struct RichContent {
    #[serde(default)]
    content: Value,
}

/// Reads a `tools/call` answer's JSON text; `None` when it is neither a `CallToolResult`
/// nor an `InputRequiredResult` (an unknown `resultType` included, as the revision asks).
pub fn decode_outcome(json: &str) -> Option<Outcome> {
    let view: ResultView = serde_json::from_str(json).ok()?;
    match view.result_type.as_deref() {
        None | Some("complete") => complete(json, view).map(Outcome::Complete),
        Some("input_required") => serde_json::from_str(json).ok().map(Outcome::InputRequired),
        Some(_) => None,
    }
}

/// Reads an answer that is an `InputRequiredResult`, and nothing else.
pub fn decode_input_required(json: &str) -> Option<InputRequired> {
    match decode_outcome(json)? {
        Outcome::InputRequired(asked) => Some(asked),
        Outcome::Complete(_) => None,
    }
}

/// `isError`: the text parts joined by a blank line (or a fixed message when there is no
/// text); else `structuredContent` as `JSON.stringify` prints it; else the text parts joined by newlines.
fn complete(json: &str, view: ResultView) -> Option<ToolOutput> {
    let rich = view.content.iter().any(|part| part.kind != "text");
    let content = if rich {
        Some(serde_json::from_str::<RichContent>(json).ok()?.content)
    } else {
        None
    };
    let is_error = view.is_error == Some(true);
    if !is_error && let Some(structured) = view.structured {
        return Some(ToolOutput {
            output: js_json::stringify(&structured),
            is_error,
            content,
            structured: Some(structured),
            code: None,
        });
    }
    let texts = view
        .content
        .into_iter()
        .filter(|part| part.kind == "text")
        .filter_map(|part| part.text);
    let output = join(texts, if is_error { "\n\n" } else { "\n" });
    let output = if is_error && output.is_empty() {
        "MCP tool returned an error".to_owned()
    } else {
        output
    };
    Some(ToolOutput {
        output,
        is_error,
        content,
        structured: None,
        code: None,
    })
}

/// Joins the parts; a single one is taken as it is (results can be megabytes).
fn join<'a>(mut parts: impl Iterator<Item = Cow<'a, str>>, separator: &str) -> String {
    let mut output = parts.next().map(Cow::into_owned).unwrap_or_default();
    for part in parts {
        output.push_str(separator);
        output.push_str(&part);
    }
    output
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn convert(wire: Value) -> ToolOutput {
        match decode_outcome(&wire.to_string()) {
            Some(Outcome::Complete(output)) => output,
            other => panic!("expected a complete result, got {other:?}"),
        }
    }

    #[test]
    fn result_types_are_read() {
        let complete = json!({ "resultType": "complete", "content": [text("a")] });
        assert_eq!(convert(complete).output, "a");
        let asked = json!({
            "resultType": "input_required",
            "inputRequests": { "k": { "method": "elicitation/create", "params": {} } },
            "requestState": "opaque"
        });
        let Some(Outcome::InputRequired(asked)) = decode_outcome(&asked.to_string()) else {
            panic!("expected input required");
        };
        assert_eq!(asked.state.as_deref(), Some("opaque"));
        assert_eq!(asked.requests["k"]["method"], "elicitation/create");
        let unknown = json!({ "resultType": "task", "content": [] });
        assert_eq!(decode_outcome(&unknown.to_string()), None);
    }

    fn text(t: &str) -> Value {
        json!({ "type": "text", "text": t })
    }

    #[test]
    fn text_parts_join_with_newline() {
        let out = convert(json!({ "content": [text("a"), text("b")] }));
        assert_eq!(out, ToolOutput::text("a\nb".into()));
    }

    #[test]
    fn non_text_parts_are_kept_as_sent_but_not_in_output() {
        let image = json!({ "type": "image", "data": "AAAA", "mimeType": "image/png" });
        let content = json!([text("a"), image, text("b")]);
        let out = convert(json!({ "content": content }));
        assert_eq!(out.output, "a\nb");
        assert_eq!(out.content, Some(content));
    }

    #[test]
    fn text_only_results_carry_no_content() {
        assert_eq!(convert(json!({ "content": [text("a")] })).content, None);
    }

    #[test]
    fn errors_join_with_blank_line() {
        let out = convert(json!({ "content": [text("bad"), text("worse")], "isError": true }));
        assert_eq!(out, ToolOutput::error("bad\n\nworse"));
    }

    #[test]
    fn error_without_text_has_a_fixed_message() {
        let out = convert(json!({ "content": [], "isError": true }));
        assert_eq!(out, ToolOutput::error("MCP tool returned an error"));
    }

    #[test]
    fn structured_content_wins_over_text() {
        let wire = json!({ "content": [text("x")], "structuredContent": { "n": 1, "s": "t" } });
        let out = convert(wire);
        assert_eq!(out.output, r#"{"n":1,"s":"t"}"#);
        assert_eq!(out.structured, Some(json!({ "n": 1, "s": "t" })));
    }

    #[test]
    fn structured_content_prints_as_json_stringify() {
        let wire = r#"{"content":[],"structuredContent":{"total":6.0,"big":1e21,"7":[1.50]}}"#;
        let output = convert(serde_json::from_str(wire).expect("JSON")).output;
        assert_eq!(output, r#"{"7":[1.5],"total":6,"big":1e+21}"#);
    }

    #[test]
    fn error_ignores_structured_content() {
        let wire = json!({ "content": [text("e")], "structuredContent": {}, "isError": true });
        assert_eq!(convert(wire), ToolOutput::error("e"));
    }

    #[test]
    fn escaped_text_is_unescaped() {
        let out = convert(json!({ "content": [text("a\"b\n\u{e9}")] }));
        assert_eq!(out.output, "a\"b\n\u{e9}");
    }

    #[test]
    fn what_is_not_a_call_result_is_refused() {
        assert_eq!(decode_outcome("[1]"), None);
        assert_eq!(decode_outcome(r#"{"content":"text"}"#), None);
        assert_eq!(
            decode_outcome("{}"),
            Some(Outcome::Complete(ToolOutput::text(String::new())))
        );
    }
}
