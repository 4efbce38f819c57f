//! Where a session's reports leave it, its server's secrets are hidden (see `redact`).

use std::borrow::Cow;
use std::sync::Arc;

use serde_json::Value;
use serde_json::value::RawValue;

use super::engine::call::CallSink;
use super::engine::request::Progress;
use super::error::Failure;
use crate::redact::Redactor;
use crate::tool::result::ToolOutput;

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

    fn as_sent(&self) -> bool {
        self.inner.as_sent()
    }

    /// A result passed on as sent loses the server's secrets wherever its strings hold
    /// them: it leaves for another client, which must never see them.
    fn done_as_sent(&self, call: u64, result: &RawValue) {
        let Ok(mut value) = serde_json::from_str::<Value>(result.get()) else {
            return self.inner.done_as_sent(call, result);
        };
        if !redact_strings(&self.redactor, &mut value) {
            return self.inner.done_as_sent(call, result);
        }
        match serde_json::value::to_raw_value(&value) {
            Ok(redacted) => self.inner.done_as_sent(call, &redacted),
            Err(_) => self.inner.done_as_sent(call, result),
        }
    }
}

/// Redacts every string in `value`, keys too (compared unescaped); whether any changed.
pub(super) fn redact_strings(redactor: &Redactor, value: &mut Value) -> bool {
    match value {
        Value::String(text) => match redactor.redact(text) {
            Cow::Borrowed(_) => false,
            Cow::Owned(redacted) => {
                *text = redacted;
                true
            }
        },
        Value::Array(items) => items.iter_mut().fold(false, |changed, item| {
            redact_strings(redactor, item) | changed
        }),
        Value::Object(members) => {
            let keys = members
                .keys()
                .any(|key| matches!(redactor.redact(key), Cow::Owned(_)));
            if keys {
                let taken = std::mem::take(members);
                let renamed = taken
                    .into_iter()
                    .map(|(key, item)| (redactor.redact_string(key), item));
                *members = renamed.collect();
            }
            let values = members.values_mut().fold(false, |changed, item| {
                redact_strings(redactor, item) | changed
            });
            keys | values
        }
        _ => false,
    }
}
