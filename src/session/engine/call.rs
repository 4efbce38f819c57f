//! `tools/call` as the engine runs it: how a call is asked for, and its caller, a sink
//! that hears its progress and its one outcome (every failure as an error result naming
//! the server).

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use serde_json::value::RawValue;

use super::request::{Caller, Decoded, Progress};
use crate::elicitation::Elicitor;
use crate::session::error::Failure;
use crate::session::wording::{aborted, during, failed};
use crate::tool;
use crate::tool::result::{Outcome, ToolOutput};

/// Where a call's progress and outcome go, in the order the server sent them; called on
/// whichever thread learns of them.
pub trait CallSink: Send + Sync {
    fn progress(&self, call: u64, progress: Progress);
    fn done(&self, call: u64, output: ToolOutput);
    /// Whether a complete result reaches `done_as_sent` as the server sent it (a
    /// gateway passes it on) instead of `done`, decoded.
    fn as_sent(&self) -> bool {
        false
    }
    fn done_as_sent(&self, call: u64, result: &RawValue) {
        let _ = (call, result);
    }
}

/// How one `tools/call` is run.
#[derive(Clone)]
pub struct CallSpec {
    /// Restarted by progress, paused while a person answers an elicitation.
    pub timeout: Duration,
    /// The cap on the whole call, which progress does not restart.
    pub max_total: Option<Duration>,
    /// Progress restarts the clock either way; only wanted progress reaches the sink.
    pub wants_progress: bool,
    /// Whether to run it as a task: the caller's wish (`ToolContext.task`) until the
    /// session weighs it against the tool's `execution.taskSupport`.
    pub task: bool,
    /// The caller's trace context as `_meta` members (see `trace_context`).
    pub trace: Option<Arc<str>>,
    /// Who answers what the server asks during the call, instead of the host's elicitor
    /// (a gateway's downstream client).
    pub elicitor: Option<Arc<dyn Elicitor>>,
}

/// Request ids, unique in the process, so that one sink can serve many sessions.
static NEXT_ID: AtomicU64 = AtomicU64::new(1);

pub fn next_id() -> u64 {
    NEXT_ID.fetch_add(1, Ordering::Relaxed)
}

/// A call's id, reserved before the call starts: a store hands it to JS while the call
/// still waits for its server to connect.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CallId(u64);

impl CallId {
    /// An id no other call in the process has.
    pub fn reserve() -> CallId {
        CallId(next_id())
    }

    pub fn get(self) -> u64 {
        self.0
    }
}

/// The caller of a `tools/call`: its sink, under the id the caller knows it by.
pub struct Call {
    pub id: u64,
    pub server: Arc<str>,
    pub tool: Arc<str>,
    pub sink: Arc<dyn CallSink>,
    pub wants_progress: bool,
}

impl Call {
    /// The phase a call's failures name.
    pub fn phase(tool: &str) -> Arc<str> {
        during(tool).into()
    }
}

impl Caller for Call {
    fn decode(&self, result: &RawValue) -> Decoded {
        match tool::result::decode_outcome(result.get()) {
            Some(Outcome::Complete(output)) => {
                if self.sink.as_sent() {
                    self.sink.done_as_sent(self.id, result);
                } else {
                    self.sink.done(self.id, output);
                }
                Decoded::Done
            }
            Some(Outcome::InputRequired(asked)) => Decoded::InputRequired(asked),
            None => Decoded::Unexpected,
        }
    }

    fn progress(&self, progress: Progress) {
        if self.wants_progress {
            self.sink.progress(self.id, progress);
        }
    }

    fn fail(&self, failure: Failure) {
        let output = match failure {
            Failure::Aborted => aborted(&self.server, &self.tool),
            Failure::Reason(error) => failed(&self.server, error.kind().code(), error),
        };
        self.sink.done(self.id, output);
    }

    fn given_up(&self) -> &'static str {
        "the call"
    }
}
