//! A tool's `outputSchema`, and its structured results checked against it as the official
//! client checks them: a result that does not match, or a successful one without
//! structured content, becomes an error result naming the server, the tool and why.
//! The validator is compiled once per tool, when its first result comes.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, OnceLock};

use jsonschema::Validator;
use serde_json::Value;
use serde_json::value::RawValue;

use crate::listed_tool::ListedTool;
use crate::lock::lock;
use crate::redact::Redactor;
use crate::session::{CallSink, Progress};
use crate::tool_result::ToolOutput;

/// Violations longer than this are cut: the message is for a person, not a dump.
const MAX_VIOLATION: usize = 300;

/// A tool's output schema as listed, compiled when first needed.
pub struct OutputSchema {
    schema: Box<RawValue>,
    validator: OnceLock<Result<Validator, String>>,
}

impl std::fmt::Debug for OutputSchema {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_tuple("OutputSchema").field(&self.schema).finish()
    }
}

impl OutputSchema {
    pub fn new(schema: &RawValue) -> Arc<OutputSchema> {
        Arc::new(OutputSchema {
            schema: schema.to_owned(),
            validator: OnceLock::new(),
        })
    }

    /// The first way `value` breaks the schema, if it does; `Err` when the schema itself
    /// does not compile.
    pub fn violation(&self, value: &Value) -> Result<Option<String>, String> {
        let validator = self.validator.get_or_init(|| {
            let schema: Value =
                serde_json::from_str(self.schema.get()).map_err(|e| e.to_string())?;
            jsonschema::validator_for(&schema).map_err(|e| cut(e.masked().to_string()))
        });
        let Some(error) = validator
            .as_ref()
            .map_err(Clone::clone)?
            .validate(value)
            .err()
        else {
            return Ok(None);
        };
        let at = error.instance_path().as_str();
        let at = if at.is_empty() { "/" } else { at };
        // Masked: the value itself may be large, and it is the server's data.
        Ok(Some(cut(format!("at {at}: {}", error.masked()))))
    }
}

fn cut(mut text: String) -> String {
    if text.len() > MAX_VIOLATION {
        let mut end = MAX_VIOLATION;
        while !text.is_char_boundary(end) {
            end -= 1;
        }
        text.truncate(end);
        text.push('…');
    }
    text
}

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
    ToolOutput::error(format!("MCP server \"{server}\" tool \"{tool}\" {why}"))
}

/// A call's sink that checks its result first.
struct CheckingSink {
    inner: Arc<dyn CallSink>,
    schema: Arc<OutputSchema>,
    server: String,
    tool: String,
    redactor: Redactor,
}

/// `sink`, checking results against `schema` when the tool has one (else `sink` itself,
/// which costs the call nothing). A failed check's message is redacted like any other
/// error toolnexus composes.
pub fn checking(
    sink: Arc<dyn CallSink>,
    schema: Option<&Arc<OutputSchema>>,
    server: &str,
    tool: &str,
    redactor: &Redactor,
) -> Arc<dyn CallSink> {
    let Some(schema) = schema else { return sink };
    Arc::new(CheckingSink {
        inner: sink,
        schema: schema.clone(),
        server: server.to_owned(),
        tool: tool.to_owned(),
        redactor: redactor.clone(),
    })
}

impl CallSink for CheckingSink {
    fn progress(&self, call: u64, progress: Progress) {
        self.inner.progress(call, progress);
    }

    fn done(&self, call: u64, output: ToolOutput) {
        let checked = check(&self.schema, &self.server, &self.tool, output);
        self.inner.done(call, self.redactor.redact_output(checked));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn schema(value: Value) -> Arc<OutputSchema> {
        OutputSchema::new(&RawValue::from_string(value.to_string()).expect("JSON"))
    }

    fn structured(value: Value) -> ToolOutput {
        ToolOutput {
            output: value.to_string(),
            is_error: false,
            content: None,
            structured: Some(value),
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

    #[test]
    fn long_violations_are_cut_on_a_char_boundary() {
        let long = "é".repeat(400);
        let cut = cut(long);
        assert!(cut.len() <= MAX_VIOLATION + '…'.len_utf8());
        assert!(cut.ends_with('…'));
    }
}
