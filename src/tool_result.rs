//! A `tools/call` result as the host sees it: one `output` string and an error flag.

use rmcp::model::{CallToolResult, ContentBlock};

#[derive(Debug, Clone, PartialEq)]
pub struct ToolOutput {
    pub output: String,
    pub is_error: bool,
}

impl ToolOutput {
    pub fn error(reason: impl Into<String>) -> ToolOutput {
        ToolOutput {
            output: reason.into(),
            is_error: true,
        }
    }
}

/// `isError`: the text parts joined by a blank line (or a fixed message when there is no
/// text); else `structuredContent` as JSON; else the text parts joined by newlines.
pub fn convert(result: CallToolResult) -> ToolOutput {
    let texts = || {
        result
            .content
            .iter()
            .filter_map(ContentBlock::as_text)
            .map(|t| t.text.as_str())
    };
    if result.is_error == Some(true) {
        let output = texts().collect::<Vec<_>>().join("\n\n");
        return ToolOutput::error(if output.is_empty() {
            "MCP tool returned an error".to_owned()
        } else {
            output
        });
    }
    let output = match &result.structured_content {
        Some(structured) => structured.to_string(),
        None => texts().collect::<Vec<_>>().join("\n"),
    };
    ToolOutput {
        output,
        is_error: false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::{Value, json};

    fn result(wire: Value) -> CallToolResult {
        serde_json::from_value(wire).expect("a valid CallToolResult")
    }

    fn text(t: &str) -> Value {
        json!({ "type": "text", "text": t })
    }

    #[test]
    fn text_parts_join_with_newline() {
        let out = convert(result(json!({ "content": [text("a"), text("b")] })));
        assert_eq!(
            out,
            ToolOutput {
                output: "a\nb".into(),
                is_error: false
            }
        );
    }

    #[test]
    fn non_text_parts_are_skipped() {
        let image = json!({ "type": "image", "data": "AAAA", "mimeType": "image/png" });
        let out = convert(result(json!({ "content": [text("a"), image, text("b")] })));
        assert_eq!(out.output, "a\nb");
    }

    #[test]
    fn errors_join_with_blank_line() {
        let out = convert(result(
            json!({ "content": [text("bad"), text("worse")], "isError": true }),
        ));
        assert_eq!(
            out,
            ToolOutput {
                output: "bad\n\nworse".into(),
                is_error: true
            }
        );
    }

    #[test]
    fn error_without_text_has_a_fixed_message() {
        let out = convert(result(json!({ "content": [], "isError": true })));
        assert_eq!(out, ToolOutput::error("MCP tool returned an error"));
    }

    #[test]
    fn structured_content_wins_over_text() {
        let out = convert(result(
            json!({ "content": [text("x")], "structuredContent": { "n": 1, "s": "t" } }),
        ));
        assert_eq!(
            out,
            ToolOutput {
                output: r#"{"n":1,"s":"t"}"#.into(),
                is_error: false
            }
        );
    }

    #[test]
    fn error_ignores_structured_content() {
        let out = convert(result(
            json!({ "content": [text("e")], "structuredContent": {}, "isError": true }),
        ));
        assert_eq!(out, ToolOutput::error("e"));
    }
}
