//! One MCP session with one server: `initialize`, paginated `tools/list`, `tools/call`,
//! close. Every phase is bounded by the server's timeout, by the caller's cancellation and,
//! for local servers, by the child's exit, so no step can hang.

mod handler;
mod observer;

use std::collections::HashSet;
use std::future::Future;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use rmcp::Peer;
use rmcp::model::{
    CallToolRequest, CallToolRequestParams, CancelledNotification, CancelledNotificationParam,
    ClientRequest, ErrorData, PaginatedRequestParams, RequestId, ServerResult, Tool,
};
use rmcp::service::{
    ClientInitializeError, PeerRequestOptions, RoleClient, RunningService, ServiceError, ServiceExt,
};
use rmcp::transport::Transport;
use rmcp::transport::async_rw::AsyncRwTransport;
use serde_json::{Map, Value};
use tokio::time::sleep_until;
use tokio_util::sync::CancellationToken;

use self::handler::{Client, Shared};
use self::observer::Observed;
use crate::config::{RemoteSpec, ServerSpec, TransportSpec};
use crate::elicitation::Elicitor;
use crate::tool_result::{self, ToolOutput};
use crate::transport::stdio::ChildProcess;
use crate::transport::{MAX_MESSAGE_BYTES, http};

/// A `tools/list` that pages more often than this is treated as broken.
const MAX_PAGES: usize = 1000;
/// How long a closing server gets after stdin closes (and again after SIGTERM).
const CLOSE_GRACE: Duration = Duration::from_millis(250);

/// What the host offers servers beyond plain calls.
#[derive(Clone, Default)]
pub struct Hooks {
    /// When set, the `elicitation` capability is advertised and requests go here.
    pub elicitor: Option<Arc<dyn Elicitor>>,
    /// Receives the servers' `notifications/message`.
    pub logger: Option<Arc<dyn Logger>>,
}

pub trait Logger: Send + Sync {
    fn log(&self, server: &str, level: &str, data: Value);
}

/// One `notifications/progress` for a call.
#[derive(Debug, Clone, PartialEq)]
pub struct Progress {
    pub progress: f64,
    pub total: Option<f64>,
    pub message: Option<String>,
}

/// How one `tools/call` is run.
pub struct CallOptions<'a> {
    /// Restarted by progress, paused while a person answers an elicitation.
    pub timeout: Duration,
    pub cancel: &'a CancellationToken,
    pub on_progress: Option<&'a (dyn Fn(Progress) + Send + Sync)>,
}

/// Why a step did not complete. `Aborted` is the caller's own cancellation.
#[derive(Debug, Clone, PartialEq)]
pub enum Failure {
    Aborted,
    Reason(String),
}

pub struct Session {
    name: String,
    timeout: Duration,
    peer: Peer<RoleClient>,
    service: Mutex<Option<RunningService<RoleClient, Client>>>,
    shared: Arc<Shared>,
    child: Option<ChildProcess>,
    /// Cancelled by `close`, so that calls in flight end at once.
    closed: CancellationToken,
}

impl Session {
    /// Starts the server and runs `initialize`, bounded by the server timeout and `cancel`.
    pub async fn connect(
        name: &str,
        spec: &ServerSpec,
        hooks: &Hooks,
        cancel: &CancellationToken,
    ) -> Result<Session, Failure> {
        let handler = Client(Shared::new(name, hooks));
        match &spec.transport {
            TransportSpec::Local(local) => {
                let (child, pipes) = ChildProcess::spawn(local).map_err(Failure::Reason)?;
                let transport = AsyncRwTransport::new_client(pipes.stdout, pipes.stdin)
                    .with_max_line_length(MAX_MESSAGE_BYTES);
                let start = Start {
                    name,
                    timeout: spec.timeout,
                    cancel,
                };
                start
                    .run(handler, Some(child), transport, |e| e.to_string())
                    .await
            }
            TransportSpec::Remote(remote) => {
                Self::connect_remote(name, remote, spec.timeout, handler, cancel).await
            }
        }
    }

    /// Streamable HTTP first; on a 4xx to the initialize POST, the legacy HTTP+SSE
    /// transport at the same URL, within what is left of the same timeout.
    async fn connect_remote(
        name: &str,
        remote: &RemoteSpec,
        timeout: Duration,
        handler: Client,
        cancel: &CancellationToken,
    ) -> Result<Session, Failure> {
        let started = Instant::now();
        let maybe_legacy = AtomicBool::new(false);
        let explain = |e: &ClientInitializeError| {
            let (reason, legacy) = http::explain_initialize_error(e);
            maybe_legacy.store(legacy, Ordering::Relaxed);
            reason
        };
        let initializes = handler.0.http_initializes.clone();
        let transport = http::streamable(remote, initializes).map_err(Failure::Reason)?;
        let start = Start {
            name,
            timeout,
            cancel,
        };
        let streamable = start.run(handler.clone(), None, transport, explain).await;
        let Err(Failure::Reason(reason)) = &streamable else {
            return streamable;
        };
        if !maybe_legacy.load(Ordering::Relaxed) {
            return streamable;
        }
        let left = timeout.saturating_sub(started.elapsed());
        let handshake = async { http::legacy(remote).await };
        let transport =
            match bounded(None, "the legacy SSE handshake", left, cancel, handshake).await {
                Ok(transport) => transport,
                Err(Failure::Aborted) => return Err(Failure::Aborted),
                // Not a legacy server either: the streamable failure is the one that explains.
                Err(Failure::Reason(_)) => return Err(Failure::Reason(reason.clone())),
            };
        let left = timeout.saturating_sub(started.elapsed());
        let start = Start {
            name,
            timeout: left,
            cancel,
        };
        let mut session = start
            .run(handler, None, transport, ToString::to_string)
            .await?;
        session.timeout = timeout;
        Ok(session)
    }

    pub fn name(&self) -> &str {
        &self.name
    }

    pub fn timeout(&self) -> Duration {
        self.timeout
    }

    /// Every tool, following `nextCursor`; each page is bounded by the server timeout.
    pub async fn list_tools(&self, cancel: &CancellationToken) -> Result<Vec<Tool>, Failure> {
        let mut tools = Vec::new();
        let mut seen = HashSet::new();
        let mut cursor: Option<String> = None;
        for _ in 0..MAX_PAGES {
            let params = PaginatedRequestParams::default().with_cursor(cursor.clone());
            let page = self
                .bounded("tools/list", self.timeout, cancel, async {
                    self.peer
                        .list_tools(Some(params))
                        .await
                        .map_err(|e| describe(&e, "tools/list"))
                })
                .await?;
            tools.extend(page.tools);
            match page.next_cursor {
                None => return Ok(tools),
                Some(next) if !seen.insert(next.clone()) => {
                    return Err(Failure::Reason(format!(
                        "tools/list repeated the cursor \"{next}\""
                    )));
                }
                Some(next) => cursor = Some(next),
            }
        }
        Err(Failure::Reason(format!(
            "tools/list returned more than {MAX_PAGES} pages"
        )))
    }

    /// Calls a tool. Never fails: every failure becomes an error result naming the server.
    pub async fn call_tool(
        &self,
        tool: &str,
        arguments: Map<String, Value>,
        options: CallOptions<'_>,
    ) -> ToolOutput {
        match self.call(tool, arguments, options).await {
            Ok(result) => result,
            Err(Failure::Aborted) => ToolOutput::error(format!(
                "MCP server \"{}\": tools/call \"{tool}\" was aborted",
                self.name
            )),
            Err(Failure::Reason(reason)) => {
                ToolOutput::error(format!("MCP server \"{}\" {reason}", self.name))
            }
        }
    }

    async fn call(
        &self,
        tool: &str,
        arguments: Map<String, Value>,
        options: CallOptions<'_>,
    ) -> Result<ToolOutput, Failure> {
        let during = format!("tools/call \"{tool}\"");
        if self.closed.is_cancelled() {
            return Err(Failure::Reason(format!("is closed; cannot run {during}")));
        }
        let mut params = CallToolRequestParams::new(tool.to_owned());
        params.arguments = Some(arguments);
        let request = ClientRequest::CallToolRequest(CallToolRequest::new(params));
        // No rmcp timeout: the clock below also pauses while a person answers an elicitation.
        let handle = self
            .peer
            .send_request_with_option(request, PeerRequestOptions::no_options())
            .await
            .map_err(|e| Failure::Reason(describe(&e, &during)))?;
        let id = handle.id.clone();
        let (_route, mut progress) = self.shared.track_progress(handle.progress_token.clone());
        let mut eliciting = self.shared.eliciting.subscribe();
        let mut clock = Clock::new(options.timeout, *eliciting.borrow_and_update() > 0);
        let response = handle.await_response();
        tokio::pin!(response);
        let response = loop {
            tokio::select! {
                biased;
                _ = options.cancel.cancelled() => {
                    self.send_cancelled(id, "aborted by the client").await;
                    return Err(Failure::Aborted);
                }
                _ = self.closed.cancelled() => {
                    return Err(Failure::Reason(format!("was closed during {during}")));
                }
                response = &mut response => break response,
                Some(update) = progress.recv() => {
                    clock.restart();
                    if let Some(on_progress) = &options.on_progress {
                        on_progress(update);
                    }
                }
                Ok(()) = eliciting.changed() => clock.set_paused(*eliciting.borrow_and_update() > 0),
                _ = clock.expiry() => {
                    self.send_cancelled(id, "request timeout").await;
                    let ms = options.timeout.as_millis();
                    return Err(Failure::Reason(format!("did not answer {during} within {ms} ms")));
                }
            }
        };
        // Progress sent before the answer was routed before it arrived: deliver it first.
        if let Some(on_progress) = &options.on_progress {
            while let Ok(update) = progress.try_recv() {
                on_progress(update);
            }
        }
        match response {
            Ok(ServerResult::CallToolResult(result)) => Ok(tool_result::convert(result)),
            Ok(ServerResult::EmptyResult(_)) => Ok(ToolOutput::text(String::new())),
            Ok(_) => Err(Failure::Reason(format!(
                "sent an unexpected response to {during}"
            ))),
            Err(error) => Err(Failure::Reason(self.explain(&error, &during).await)),
        }
    }

    /// Resolves when the server is gone, with why: the child exited, or the connection
    /// ended (rmcp gives no future for that, so it is polled).
    pub async fn ended(&self) -> String {
        let exited = async {
            match &self.child {
                Some(child) => {
                    child
                        .describe_exit(child.exited().await, "the session")
                        .await
                }
                None => std::future::pending().await,
            }
        };
        let disconnected = async {
            while !self.peer.is_transport_closed() {
                tokio::time::sleep(Duration::from_millis(250)).await;
            }
            "closed the connection".to_owned()
        };
        tokio::select! {
            reason = exited => reason,
            reason = disconnected => reason,
        }
    }

    /// Changes whenever rmcp re-establishes an expired HTTP session in place.
    pub fn reinitialized(&self) -> tokio::sync::watch::Receiver<u64> {
        let mut initializes = self.shared.http_initializes.subscribe();
        initializes.borrow_and_update();
        initializes
    }

    /// Changes whenever the server says its tool list changed.
    pub fn tools_changed(&self) -> tokio::sync::watch::Receiver<u64> {
        self.shared.tools_changed.subscribe()
    }

    /// Tells the server to stop working on a request whose answer nobody will read.
    async fn send_cancelled(&self, id: RequestId, reason: &str) {
        let params = CancelledNotificationParam::new(Some(id), Some(reason.to_owned()));
        let _ = self
            .peer
            .send_notification(CancelledNotification::new(params).into())
            .await;
    }

    /// Ends the session and kills the server's process tree. Idempotent.
    pub async fn close(&self) {
        self.closed.cancel();
        let service = self
            .service
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .take();
        if let Some(service) = service {
            // Dropping the transport closes the child's stdin: the polite way to ask it to go.
            let _ = service.cancel().await;
        }
        if let Some(child) = &self.child {
            child.shutdown(CLOSE_GRACE).await;
        }
    }

    /// Kills the server at once (used when the caller aborts).
    pub async fn kill(&self) {
        self.closed.cancel();
        if let Some(child) = &self.child {
            child.shutdown(Duration::ZERO).await;
        }
        let service = self
            .service
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .take();
        if let Some(service) = service {
            let _ = service.cancel().await;
        }
    }

    fn bounded<'a, T: 'a>(
        &'a self,
        phase: &'a str,
        timeout: Duration,
        cancel: &'a CancellationToken,
        step: impl Future<Output = Result<T, String>> + 'a,
    ) -> impl Future<Output = Result<T, Failure>> + 'a {
        bounded(self.child.as_ref(), phase, timeout, cancel, step)
    }

    /// A transport failure usually means the child died: say how, when it did.
    async fn explain(&self, error: &ServiceError, phase: &str) -> String {
        if let ServiceError::TransportClosed | ServiceError::TransportSend(_) = error
            && let Some(child) = &self.child
            && let Some(status) = child.exit_within(Duration::from_millis(500)).await
        {
            return child.describe_exit(status, phase).await;
        }
        describe(error, phase)
    }
}

/// Starting a session: initialize over a transport, bounded like every phase.
struct Start<'a> {
    name: &'a str,
    timeout: Duration,
    cancel: &'a CancellationToken,
}

impl Start<'_> {
    async fn run<T>(
        self,
        handler: Client,
        child: Option<ChildProcess>,
        transport: T,
        explain: impl FnOnce(&ClientInitializeError) -> String,
    ) -> Result<Session, Failure>
    where
        T: Transport<RoleClient> + 'static,
    {
        let transport = Observed::new(transport, handler.0.clone());
        let initialize = async { handler.serve(transport).await.map_err(|e| explain(&e)) };
        match bounded(
            child.as_ref(),
            "initialize",
            self.timeout,
            self.cancel,
            initialize,
        )
        .await
        {
            Ok(service) => Ok(Session {
                name: self.name.to_owned(),
                timeout: self.timeout,
                peer: service.peer().clone(),
                shared: service.service().0.clone(),
                service: Mutex::new(Some(service)),
                child,
                closed: CancellationToken::new(),
            }),
            Err(failure) => {
                if let Some(child) = child {
                    child.shutdown(Duration::ZERO).await;
                }
                Err(failure)
            }
        }
    }
}

/// Runs one phase, failing it when the timeout passes, the caller cancels, or the child
/// exits (at once, not when the timeout runs out).
async fn bounded<T>(
    child: Option<&ChildProcess>,
    phase: &str,
    timeout: Duration,
    cancel: &CancellationToken,
    step: impl Future<Output = Result<T, String>>,
) -> Result<T, Failure> {
    let exited = async {
        match child {
            Some(child) => child.exited().await,
            None => std::future::pending().await,
        }
    };
    tokio::select! {
        biased;
        _ = cancel.cancelled() => Err(Failure::Aborted),
        result = tokio::time::timeout(timeout, step) => match result {
            Ok(Ok(value)) => Ok(value),
            Ok(Err(error)) => Err(Failure::Reason(match child {
                // A closed connection is how a dying child first shows; prefer its story.
                Some(child) => match child.exit_within(Duration::from_millis(500)).await {
                    Some(status) => child.describe_exit(status, phase).await,
                    None => error,
                },
                None => error,
            })),
            Err(_) => Err(Failure::Reason(format!(
                "did not answer {phase} within {} ms",
                timeout.as_millis()
            ))),
        },
        status = exited => {
            let child = child.expect("only a child can exit");
            Err(Failure::Reason(child.describe_exit(status, phase).await))
        }
    }
}

/// A protocol error in words, never a bare code.
fn describe(error: &ServiceError, phase: &str) -> String {
    match error {
        ServiceError::McpError(ErrorData { message, .. }) => {
            format!("answered {phase} with an error: {message}")
        }
        ServiceError::Timeout { timeout } => {
            format!("did not answer {phase} within {} ms", timeout.as_millis())
        }
        ServiceError::TransportClosed => format!("closed the connection during {phase}"),
        ServiceError::TransportSend(e) => format!("could not be sent {phase}: {e}"),
        ServiceError::Cancelled { reason } => format!(
            "cancelled {phase}: {}",
            reason.as_deref().unwrap_or("no reason given")
        ),
        other => format!("failed {phase}: {other}"),
    }
}

/// A call's timeout: restarted by progress, paused while a person is being asked.
struct Clock {
    timeout: Duration,
    deadline: tokio::time::Instant,
    /// Time left when paused.
    paused: Option<Duration>,
}

impl Clock {
    fn new(timeout: Duration, paused: bool) -> Clock {
        let mut clock = Clock {
            timeout,
            deadline: tokio::time::Instant::now() + timeout,
            paused: None,
        };
        clock.set_paused(paused);
        clock
    }

    fn restart(&mut self) {
        match &mut self.paused {
            Some(left) => *left = self.timeout,
            None => self.deadline = tokio::time::Instant::now() + self.timeout,
        }
    }

    fn set_paused(&mut self, pause: bool) {
        let now = tokio::time::Instant::now();
        match (pause, self.paused) {
            (true, None) => self.paused = Some(self.deadline.saturating_duration_since(now)),
            (false, Some(left)) => {
                self.deadline = now + left;
                self.paused = None;
            }
            _ => {}
        }
    }

    async fn expiry(&self) {
        match self.paused {
            Some(_) => std::future::pending().await,
            None => sleep_until(self.deadline).await,
        }
    }
}
