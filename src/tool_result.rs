//! A `tools/call` result as the host sees it: one `output` string and an error flag, plus
//! the raw content when it holds more than text.

use rmcp::model::{CallToolResult, ContentBlock};
use serde_json::Value;

#[derive(Debug, Clone, PartialEq)]
pub struct ToolOutput {
    pub output: String,
    pub is_error: bool,
    /// The whole `content` array as the server sent it, when it holds anything but text
    /// (an image a caller may want to forward to a model, say).
    pub content: Option<Value>,
}

impl ToolOutput {
    pub fn text(output: String) -> ToolOutput {
        ToolOutput {
            output,
            is_error: false,
            content: None,
        }
    }

    pub fn error(reason: impl Into<String>) -> ToolOutput {
        ToolOutput {
            output: reason.into(),
            is_error: true,
            content: None,
        }
    }
}

/// `isError`: the text parts joined by a blank line (or a fixed message when there is no
/// text); else `structuredContent` as JSON; else the text parts joined by newlines.
pub fn convert(result: CallToolResult) -> ToolOutput {
    let rich = result.content.iter().any(|block| block.as_text().is_none());
    let content = rich.then(|| serde_json::to_value(&result.content).unwrap_or_default());
    let is_error = result.is_error == Some(true);
    if !is_error && let Some(structured) = &result.structured_content {
        return ToolOutput {
            output: structured.to_string(),
            is_error,
            content,
        };
    }
    let texts = result.content.into_iter().filter_map(|block| match block {
        ContentBlock::Text(text) => Some(text.text),
        _ => None,
    });
    let output = join(texts, if is_error { "\n\n" } else { "\n" });
    let output = if is_error && output.is_empty() {
        "MCP tool returned an error".to_owned()
    } else {
        output
    };
    ToolOutput {
        output,
        is_error,
        content,
    }
}

/// Joins owned strings; a single one is moved, not copied (results can be megabytes).
fn join(mut parts: impl Iterator<Item = String>, separator: &str) -> String {
    let mut output = parts.next().unwrap_or_default();
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

    fn result(wire: Value) -> CallToolResult {
        serde_json::from_value(wire).expect("a valid CallToolResult")
    }

    fn text(t: &str) -> Value {
        json!({ "type": "text", "text": t })
    }

    #[test]
    fn text_parts_join_with_newline() {
        let out = convert(result(json!({ "content": [text("a"), text("b")] })));
        assert_eq!(out, ToolOutput::text("a\nb".into()));
    }

    #[test]
    fn non_text_parts_are_kept_as_sent_but_not_in_output() {
        let image = json!({ "type": "image", "data": "AAAA", "mimeType": "image/png" });
        let content = json!([text("a"), image, text("b")]);
        let out = convert(result(json!({ "content": content })));
        assert_eq!(out.output, "a\nb");
        assert_eq!(out.content, Some(content));
    }

    #[test]
    fn text_only_results_carry_no_content() {
        assert_eq!(
            convert(result(json!({ "content": [text("a")] }))).content,
            None
        );
    }

    #[test]
    fn errors_join_with_blank_line() {
        let out = convert(result(
            json!({ "content": [text("bad"), text("worse")], "isError": true }),
        ));
        assert_eq!(out, ToolOutput::error("bad\n\nworse"));
    }

    #[test]
    fn error_without_text_has_a_fixed_message() {
        let out = convert(result(json!({ "content": [], "isError": true })));
        assert_eq!(out, ToolOutput::error("MCP tool returned an error"));
    }

    #[test]
    fn structured_content_wins_over_text() {
        let wire = json!({ "content": [text("x")], "structuredContent": { "n": 1, "s": "t" } });
        assert_eq!(
            convert(result(wire)),
            ToolOutput::text(r#"{"n":1,"s":"t"}"#.into())
        );
    }

    #[test]
    fn error_ignores_structured_content() {
        let wire = json!({ "content": [text("e")], "structuredContent": {}, "isError": true });
        assert_eq!(convert(result(wire)), ToolOutput::error("e"));
    }
}
