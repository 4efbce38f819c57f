//! A call's structured result checked against its tool's `outputSchema`, as the official
//! client checks them: a result that does not match, or a successful one without
//! structured content, becomes an error result naming the server, the tool and why. The
//! session's call path does it on its sink (`session::checking_sink`).

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use super::listed::ListedTool;
use super::output_schema::OutputSchema;
use super::result::ToolOutput;
use crate::code::Code;
use crate::lock::lock;

/// A session's tools that declare an output schema, by the server's names, from its
/// latest listing. Empty for most servers, which costs their calls one lock.
#[derive(Default)]
pub struct Schemas(Mutex<HashMap<String, Arc<OutputSchema>>>);

impl Schemas {
    /// Takes the schemas of a complete listing, in place of the previous one's.
    pub fn record(&self, tools: &[ListedTool]) {
        let schemas = tools.iter().filter_map(|tool| {
            let schema = tool.extra.as_ref()?.output_schema.clone()?;
            Some((tool.name.clone(), schema))
        });
        *lock(&self.0) = schemas.collect();
    }

    pub fn get(&self, tool: &str) -> Option<Arc<OutputSchema>> {
        let schemas = lock(&self.0);
        if schemas.is_empty() {
            return None;
        }
        schemas.get(tool).cloned()
    }
}

/// What a result of `tool` of `server` becomes once checked against `schema`.
pub fn check(schema: &OutputSchema, server: &str, tool: &str, output: ToolOutput) -> ToolOutput {
    if output.is_error {
        return output;
    }
    let why = match &output.structured {
        None => "has an output schema but returned no structured content".to_owned(),
        Some(value) => match schema.violation(value) {
            Ok(None) => return output,
            Ok(Some(violation)) => format!(
                "returned structured content that does not match its output schema: {violation}"
            ),
            Err(broken) => format!("has an output schema that is not valid: {broken}"),
        },
    };
    ToolOutput::failure(
        Code::OutputInvalid,
        format!("MCP server \"{server}\" tool \"{tool}\" {why}"),
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::Value;
    use serde_json::json;
    use serde_json::value::RawValue;

    fn schema(value: Value) -> Arc<OutputSchema> {
        OutputSchema::new(&RawValue::from_string(value.to_string()).expect("JSON"))
    }

    fn structured(value: Value) -> ToolOutput {
        ToolOutput {
            output: value.to_string(),
            is_error: false,
            content: None,
            structured: Some(value),
            code: None,
        }
    }

    #[test]
    fn a_matching_result_passes_as_it_came() {
        let s = schema(json!({ "type": "object", "properties": { "n": { "type": "number" } } }));
        let out = structured(json!({ "n": 1 }));
        assert_eq!(check(&s, "srv", "t", out.clone()), out);
    }

    #[test]
    fn a_mismatch_names_server_tool_and_first_violation() {
        let s = schema(json!({ "type": "object", "properties": { "n": { "type": "number" } } }));
        let out = check(&s, "srv", "t", structured(json!({ "n": "secret-ish" })));
        assert!(out.is_error);
        assert_eq!(out.code, Some(crate::code::Code::OutputInvalid));
        assert_eq!(
            out.output,
            "MCP server \"srv\" tool \"t\" returned structured content that does not match its output schema: at /n: value is not of type \"number\""
        );
        assert_eq!(out.structured, None);
    }

    #[test]
    fn no_structured_content_is_an_error_but_error_results_pass() {
        let s = schema(json!({ "type": "object" }));
        let out = check(&s, "srv", "t", ToolOutput::text("plain".into()));
        assert_eq!(
            out.output,
            "MCP server \"srv\" tool \"t\" has an output schema but returned no structured content"
        );
        let failed = ToolOutput::error("boom");
        assert_eq!(check(&s, "srv", "t", failed.clone()), failed);
    }

    #[test]
    fn a_schema_that_does_not_compile_is_the_reason() {
        let s = schema(json!({ "type": 12 }));
        let out = check(&s, "srv", "t", structured(json!({})));
        assert!(out.is_error);
        assert!(
            out.output.starts_with(
                "MCP server \"srv\" tool \"t\" has an output schema that is not valid: "
            ),
            "{}",
            out.output
        );
    }
}
