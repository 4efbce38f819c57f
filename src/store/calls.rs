//! Calls through a store view: sent at once to a connected server, or waiting (within the
//! call's own timeout) for one that is starting, reconnecting or lazy (which the call
//! starts). A call made while the view showed the catalog's tools is checked against the
//! live listing once the server is up: the catalog is never trusted for a call.

use std::sync::Arc;
use std::time::{Duration, Instant};

use tokio_util::sync::CancellationToken;

use crate::code::Code;
use crate::elicitation::Elicitor;
use crate::session::{CallId, CallSink, CallSpec, wording};
use crate::tool::listed::ListedTool;
use crate::tool::result::ToolOutput;

use super::service::{Inner, Service};
use super::{Phase, Store};

/// A call a view is asked to make.
pub struct ToolCall<'a> {
    /// The service as the view names it.
    pub service: &'a str,
    /// The tool as the server names it.
    pub tool: &'a str,
    pub args_json: &'a str,
    /// The call's own timeouts; `None` takes the service's.
    pub timeout: Option<Duration>,
    pub max_total: Option<Duration>,
    pub wants_progress: bool,
    /// Asks for a task (`ToolContext.task`).
    pub task: bool,
    /// The caller's trace context, as `_meta` members.
    pub trace: Option<Arc<str>>,
    /// Who answers what the server asks during the call (a gateway's downstream client);
    /// `None`: the store's elicitor.
    pub elicitor: Option<Arc<dyn Elicitor>>,
}

impl Store {
    /// Starts a call of a tool of a service named as the view names it; its progress and
    /// outcome go to `sink` under the returned id. A connected service's call is sent at
    /// once, by the calling thread, as `loadMcp`'s are; a reconnecting one's waits for the
    /// server on a task, within the call's timeout. Never blocks.
    pub fn start_call(
        &self,
        agent: Option<&str>,
        call: ToolCall<'_>,
        sink: Arc<dyn CallSink>,
    ) -> CallId {
        let id = CallId::reserve();
        if self.inner.closed.is_cancelled() {
            let during = wording::during(call.tool);
            let why = format!(
                "MCP server \"{}\" {}",
                call.service,
                wording::closed_before(&during)
            );
            sink.done(id.get(), ToolOutput::failure(Code::Closed, why));
            return id;
        }
        let Some(service) = self.inner.find(agent, call.service) else {
            let why = format!("no MCP server \"{}\" in this view", call.service);
            let output = ToolOutput::failure(Code::UnknownServer, why);
            sink.done(id.get(), output);
            return id;
        };
        let spec = CallSpec {
            timeout: call.timeout.unwrap_or(service.timeout),
            max_total: call.max_total.or(service.max_total),
            wants_progress: call.wants_progress,
            task: call.task,
            trace: call.trace,
            elicitor: call.elicitor,
        };
        if matches!(
            service.state.borrow().phase,
            Phase::Failed | Phase::NeedsAuth | Phase::Disabled
        ) {
            let code = service.state.borrow().phase.code();
            sink.done(id.get(), not_connected(&service, call.service, code));
            return id;
        }
        let session = service.session.borrow().clone();
        if let Some(session) = session {
            session.start_call_as(id, call.tool, call.args_json, spec, sink);
            return id;
        }
        self.inner.want(&service);
        let cancel = CancellationToken::new();
        self.inner.waiting().insert(id.get(), cancel.clone());
        let waiting = Waiting {
            inner: self.inner.clone(),
            service,
            name: call.service.to_owned(),
            tool: call.tool.to_owned(),
            args_json: call.args_json.to_owned(),
        };
        self.inner
            .runtime
            .spawn(waiting.start(id, spec, sink, cancel));
        id
    }

    /// Aborts call `id` of a service as the view names it, if it is still running: the
    /// server is told, and the call ends as aborted.
    pub fn abort_call(&self, agent: Option<&str>, service_name: &str, id: u64) {
        if let Some(waiting) = self.inner.waiting().get(&id) {
            return waiting.cancel();
        }
        let session = self
            .inner
            .find(agent, service_name)
            .and_then(|service| service.session.borrow().clone());
        if let Some(session) = session {
            session.abort_call(id);
        }
    }
}

/// A call waiting for its service's server to (re)connect.
struct Waiting {
    inner: Arc<Inner>,
    service: Arc<Service>,
    /// The service as the caller's view names it.
    name: String,
    tool: String,
    args_json: String,
}

impl Waiting {
    /// Starts the call once the server is connected. The wait is spent from the call's own
    /// timeouts; running out of them, or being aborted, ends it as not connected.
    async fn start(
        self,
        id: CallId,
        spec: CallSpec,
        sink: Arc<dyn CallSink>,
        cancel: CancellationToken,
    ) {
        let waiting = Instant::now();
        let mut session = self.service.session.subscribe();
        let mut state = self.service.state.subscribe();
        // The session, or why there is none: the code the call then fails with.
        let session = tokio::select! {
            session = session.wait_for(Option::is_some) => {
                session.ok().and_then(|s| s.clone()).ok_or(Code::Closed)
            }
            // It will not come up: the call fails with the reason, now.
            state = state.wait_for(|s| matches!(s.phase, Phase::Failed | Phase::NeedsAuth)) => {
                Err(state.map_or(Code::Closed, |s| s.phase.code()))
            }
            _ = tokio::time::sleep(spec.timeout) => Err(Code::Timeout),
            _ = cancel.cancelled() => Err(Code::Aborted),
        };
        let waited = waiting.elapsed();
        let spec = CallSpec {
            timeout: spec.timeout.saturating_sub(waited),
            max_total: spec.max_total.map(|total| total.saturating_sub(waited)),
            ..spec
        };
        let out_of_time = spec.timeout.is_zero() || spec.max_total == Some(Duration::ZERO);
        let session = session.and_then(|s| {
            if out_of_time {
                Err(Code::Timeout)
            } else {
                Ok(s)
            }
        });
        let session = match session {
            Ok(session) => session,
            Err(code) => {
                self.inner.waiting().remove(&id.get());
                return sink.done(id.get(), not_connected(&self.service, &self.name, code));
            }
        };
        // The live listing replaces the catalog's just after the session is up.
        let _ = state.wait_for(|s| !s.cached).await;
        if let Some(gone) = self.not_listed() {
            self.inner.waiting().remove(&id.get());
            return sink.done(id.get(), gone);
        }
        session.start_call_as(id, &self.tool, &self.args_json, spec, sink);
        // An abort that came while the call was being started is passed on now.
        let aborted = {
            self.inner.waiting().remove(&id.get());
            cancel.is_cancelled()
        };
        if aborted {
            session.abort_call(id.get());
        }
    }
}

impl Waiting {
    /// Why the live server will not be asked: its listing has no such tool (the call was
    /// made on an earlier listing, perhaps the catalog's).
    fn not_listed(&self) -> Option<ToolOutput> {
        let state = self.service.state.borrow();
        let named = |tools: &[ListedTool]| tools.iter().any(|t| t.name == self.tool);
        let listed = state.cached || named(&state.tools) || named(&state.app_tools);
        let (name, tool) = (&self.name, &self.tool);
        let why = format!("MCP server \"{name}\" no longer lists tool \"{tool}\"");
        (!listed).then(|| ToolOutput::failure(Code::UnknownTool, why))
    }
}

/// Why a call cannot reach a service's server: its phase and last error, with `code`.
pub(super) fn not_connected(service: &Service, name: &str, code: Code) -> ToolOutput {
    let state = service.state.borrow();
    let why = state.last_error.as_deref().unwrap_or("not connected yet");
    let phase = state.phase.as_str();
    ToolOutput::failure(code, format!("MCP server \"{name}\" is {phase}: {why}"))
}
