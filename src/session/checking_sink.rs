//! A call's sink that checks its result against the tool's output schema first
//! (`tool::output_check`), for a session whose tool declares one.

use std::sync::Arc;

use serde_json::value::RawValue;

use super::engine::call::CallSink;
use super::engine::request::Progress;
use crate::redact::Redactor;
use crate::tool::output_check::check;
use crate::tool::output_schema::OutputSchema;
use crate::tool::result::ToolOutput;

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

    // A result passed on as sent is the receiver's to check, as an official client does.
    fn as_sent(&self) -> bool {
        self.inner.as_sent()
    }

    fn done_as_sent(&self, call: u64, result: &RawValue) {
        self.inner.done_as_sent(call, result);
    }
}
