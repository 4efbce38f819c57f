//! Where a session's reports leave it, its server's secrets are hidden (see `redact`).

use std::sync::Arc;

use super::engine::call::{CallSink, Progress};
use super::error::Failure;
use crate::redact::Redactor;
use crate::tool_result::ToolOutput;

impl Failure {
    pub(super) fn redacted(self, redactor: &Redactor) -> Failure {
        match self {
            Failure::Reason(error) => {
                Failure::Reason(error.map_text(|text| redactor.redact_string(text)))
            }
            aborted => aborted,
        }
    }
}

/// A call's sink that redacts its error results; progress goes to the host as it came.
pub(super) struct RedactingSink {
    inner: Arc<dyn CallSink>,
    redactor: Redactor,
}

impl RedactingSink {
    /// `sink` itself when there is nothing to hide, which costs the call nothing.
    pub(super) fn wrap(sink: Arc<dyn CallSink>, redactor: &Redactor) -> Arc<dyn CallSink> {
        if redactor.is_empty() {
            return sink;
        }
        Arc::new(RedactingSink {
            inner: sink,
            redactor: redactor.clone(),
        })
    }
}

impl CallSink for RedactingSink {
    fn progress(&self, call: u64, progress: Progress) {
        self.inner.progress(call, progress);
    }

    fn done(&self, call: u64, output: ToolOutput) {
        self.inner.done(call, self.redactor.redact_output(output));
    }
}
