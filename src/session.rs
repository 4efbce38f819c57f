//! One MCP session with one server: `initialize`, paginated `tools/list`, `tools/call`,
//! close. Every phase is bounded by the server's timeout, by the caller's cancellation and,
//! for local servers, by the child's exit, so no step can hang.

mod clock;
mod handler;
mod local_calls;
mod observer;
mod redacted;
mod remote_calls;
mod wording;

use std::collections::HashSet;
use std::future::Future;
use std::pin::Pin;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use rmcp::Peer;
use rmcp::model::{ErrorData, PaginatedRequestParams, ProtocolVersion};
use rmcp::service::{ClientInitializeError, RoleClient, RunningService, ServiceError, ServiceExt};
use rmcp::transport::Transport;
use serde_json::Value;
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

use self::handler::{Client, Shared};
use self::local_calls::LocalCalls;
use self::observer::Observed;
use self::redacted::RedactingSink;
use self::remote_calls::RemoteCalls;
use self::wording::{
    answered_with_error, during, failed, overwhelmed_by_progress, timed_out, unexpected_response,
};
use crate::config::{RemoteSpec, ServerSpec, TransportSpec};
use crate::elicitation::Elicitor;
use crate::listed_tool::ListedTool;
use crate::redact::Redactor;
use crate::tool_result::ToolOutput;
use crate::transport::http;
use crate::transport::lines::{LineTransport, LineWriter};
use crate::transport::stdio::ChildProcess;

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
    /// Who signs in to servers that ask, and where tokens rest.
    pub oauth: crate::auth::OAuthHooks,
}

pub trait Logger: Send + Sync {
    /// Delivers one message: `data` as the server sent it; `text`, the same as one line for
    /// a person to read, with the server's secrets redacted. The server's next message is
    /// read once this resolves, so a host that falls behind slows the server down rather
    /// than buffering without end.
    fn log(
        &self,
        server: &str,
        level: &str,
        data: Value,
        text: String,
    ) -> Pin<Box<dyn Future<Output = ()> + Send + '_>>;
}

/// One `notifications/progress` for a call.
#[derive(Debug, Clone, PartialEq)]
pub struct Progress {
    pub progress: f64,
    pub total: Option<f64>,
    pub message: Option<String>,
}

/// Where a call's progress and outcome go, in the order the server sent them; called on
/// whichever thread learns of them.
pub trait CallSink: Send + Sync {
    fn progress(&self, call: u64, progress: Progress);
    fn done(&self, call: u64, output: ToolOutput);
}

/// How one `tools/call` is run.
#[derive(Clone, Copy)]
pub struct CallSpec {
    /// Restarted by progress, paused while a person answers an elicitation.
    pub timeout: Duration,
    /// The cap on the whole call, which progress does not restart.
    pub max_total: Option<Duration>,
    /// Progress restarts the clock either way; only wanted progress reaches the sink.
    pub wants_progress: bool,
}

/// How one awaited `tools/call` is run.
pub struct CallOptions<'a> {
    /// Restarted by progress, paused while a person answers an elicitation.
    pub timeout: Duration,
    /// The cap on the whole call, which progress does not restart.
    pub max_total: Option<Duration>,
    pub cancel: &'a CancellationToken,
    /// Returns false when it cannot take more now: the call is then given up.
    pub on_progress: Option<&'a (dyn Fn(Progress) -> bool + Send + Sync)>,
}

/// Why a step did not complete. `Aborted` is the caller's own cancellation.
#[derive(Debug, Clone, PartialEq)]
pub enum Failure {
    Aborted,
    Reason(String),
}

/// Call ids, unique in the process, so that one sink can serve many sessions.
static NEXT_CALL: AtomicU64 = AtomicU64::new(1);

fn next_call_id() -> u64 {
    NEXT_CALL.fetch_add(1, Ordering::Relaxed)
}

pub struct Session {
    name: String,
    timeout: Duration,
    max_total: Option<Duration>,
    peer: Peer<RoleClient>,
    service: Mutex<Option<RunningService<RoleClient, Client>>>,
    shared: Arc<Shared>,
    child: Option<Arc<ChildProcess>>,
    calls: Calls,
    /// Cancelled by `close`, so that calls in flight end at once.
    closed: CancellationToken,
}

/// Local servers' calls bypass rmcp (see `local_calls`); remote ones go through it.
enum Calls {
    Local(Arc<LocalCalls>),
    Remote(RemoteCalls),
}

impl Session {
    /// Starts the server and runs `initialize`, bounded by the server timeout and `cancel`.
    /// What the session reports from here on hides the secrets of `spec`.
    pub async fn connect(
        name: &str,
        spec: &ServerSpec,
        hooks: &Hooks,
        cancel: &CancellationToken,
    ) -> Result<Session, Failure> {
        let redactor = Redactor::for_transport(&spec.transport);
        let handler = Client(Shared::new(name, hooks, redactor.clone()));
        let mut session = Self::start(name, spec, handler, cancel)
            .await
            .map_err(|failure| failure.redacted(&redactor))?;
        session.max_total = spec.max_total_timeout;
        Ok(session)
    }

    async fn start(
        name: &str,
        spec: &ServerSpec,
        handler: Client,
        cancel: &CancellationToken,
    ) -> Result<Session, Failure> {
        match &spec.transport {
            TransportSpec::Local(local) => {
                let (child, pipes) = ChildProcess::spawn(local).map_err(Failure::Reason)?;
                let child = Arc::new(child);
                let writer = match LineWriter::new(pipes.stdin) {
                    Ok(writer) => writer,
                    Err(e) => {
                        child.shutdown(Duration::ZERO).await;
                        return Err(Failure::Reason(format!("cannot write to the server: {e}")));
                    }
                };
                let calls = LocalCalls::new(handler.0.clone(), writer.clone(), child.clone());
                let transport = LineTransport::new(pipes.stdout, writer, calls.clone());
                let start = Start {
                    name,
                    timeout: spec.timeout,
                    cancel,
                };
                let local = Some((child, calls));
                start
                    .run(handler, local, transport, initialize_failure)
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
        let explain = |e: &ClientInitializeError| match http::explain_initialize_error(e) {
            Some((reason, legacy)) => {
                maybe_legacy.store(legacy, Ordering::Relaxed);
                StepError::Broken(reason)
            }
            None => initialize_failure(e),
        };
        let (initializes, related) = (
            handler.0.http_initializes.clone(),
            handler.0.related.clone(),
        );
        let oauth = (name, &handler.0.hooks.oauth);
        let transport =
            http::streamable(remote, oauth, initializes, related).map_err(Failure::Reason)?;
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
            .run(handler, None, transport, initialize_failure)
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

    /// Hides this server's secrets in texts composed about it.
    pub fn redactor(&self) -> &Redactor {
        &self.shared.redactor
    }

    /// The server's `maxTotalTimeout`, the default for its calls.
    pub fn max_total(&self) -> Option<Duration> {
        self.max_total
    }

    /// Every tool, following `nextCursor`; each page is bounded by the server timeout.
    pub async fn list_tools(&self, cancel: &CancellationToken) -> Result<Vec<ListedTool>, Failure> {
        let listed = self.list_all_tools(cancel).await;
        listed.map_err(|failure| failure.redacted(self.redactor()))
    }

    async fn list_all_tools(&self, cancel: &CancellationToken) -> Result<Vec<ListedTool>, Failure> {
        let mut tools = Vec::new();
        let mut seen = HashSet::new();
        let mut cursor: Option<String> = None;
        for _ in 0..MAX_PAGES {
            let page = self.list_tools_page(cursor.as_deref());
            let (page, next_cursor) =
                match self.bounded("tools/list", self.timeout, cancel, page).await {
                    // A server that offers no tools may refuse to list them: it has none.
                    Err(Failure::Reason(_))
                        if cursor.is_none() && !self.offers_tools() && !self.is_gone() =>
                    {
                        return Ok(Vec::new());
                    }
                    page => page?,
                };
            tools.extend(page);
            match next_cursor {
                // An empty cursor ends the listing too, as it does for the TS SDK.
                None => return Ok(tools),
                Some(next) if next.is_empty() => return Ok(tools),
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

    /// Whether the server has exited or its connection has closed.
    fn is_gone(&self) -> bool {
        let exited = self
            .child
            .as_ref()
            .is_some_and(|c| c.exit_watch().borrow().is_some());
        exited || self.peer.is_transport_closed()
    }

    /// The protocol version the server answered `initialize` with.
    pub fn protocol_version(&self) -> Option<String> {
        self.peer
            .peer_info()
            .map(|info| info.protocol_version.to_string())
    }

    /// Whether the server's capabilities include tools.
    fn offers_tools(&self) -> bool {
        self.peer
            .peer_info()
            .is_some_and(|info| info.capabilities.tools.is_some())
    }

    async fn list_tools_page(
        &self,
        cursor: Option<&str>,
    ) -> Result<(Vec<ListedTool>, Option<String>), String> {
        match &self.calls {
            Calls::Local(calls) => calls.list_tools_page(cursor).await,
            Calls::Remote(_) => {
                let params = PaginatedRequestParams::default().with_cursor(cursor.map(Into::into));
                let page = self
                    .peer
                    .list_tools(Some(params))
                    .await
                    .map_err(|e| describe(&e, "tools/list"))?;
                let tools = page.tools.iter().map(ListedTool::from_rmcp).collect();
                Ok((tools, page.next_cursor))
            }
        }
    }

    /// Starts `tools/call` (the server's own tool name, the arguments as JSON text);
    /// its progress and outcome go to `sink` under the returned id. Never blocks, and
    /// the outcome always comes: every failure becomes an error result naming the server.
    pub fn start_call(
        &self,
        tool: &str,
        args_json: &str,
        spec: CallSpec,
        sink: Arc<dyn CallSink>,
    ) -> u64 {
        let id = next_call_id();
        let sink = RedactingSink::wrap(sink, self.redactor());
        match &self.calls {
            Calls::Local(calls) => calls.start(id, tool, args_json, spec, sink),
            Calls::Remote(calls) => calls.start(id, tool, args_json, spec, sink),
        }
        id
    }

    /// Aborts call `id` if it is still running: the server is told, and the call ends
    /// with an "aborted" error.
    pub fn abort_call(&self, id: u64) {
        match &self.calls {
            Calls::Local(calls) => calls.abort(id),
            Calls::Remote(calls) => calls.abort(id),
        }
    }

    /// Calls a tool and waits for the outcome.
    pub async fn call_tool(
        &self,
        tool: &str,
        args_json: &str,
        options: CallOptions<'_>,
    ) -> ToolOutput {
        let (sink, mut events) = ChannelSink::pair();
        let spec = CallSpec {
            timeout: options.timeout,
            max_total: options.max_total,
            wants_progress: options.on_progress.is_some(),
        };
        let id = self.start_call(tool, args_json, spec, sink);
        let (mut aborted, mut overwhelmed) = (false, false);
        loop {
            tokio::select! {
                event = events.recv() => match event {
                    Some(Ok(_)) if overwhelmed => return failed(&self.name, overwhelmed_by_progress(tool)),
                    Some(Ok(output)) => return output,
                    Some(Err(progress)) => if let Some(on_progress) = options.on_progress
                        && !on_progress(progress)
                        && !aborted
                    {
                        (aborted, overwhelmed) = (true, true);
                        self.abort_call(id);
                    },
                    None => return failed(&self.name, format!("lost {}", during(tool))),
                },
                _ = options.cancel.cancelled(), if !aborted => {
                    aborted = true;
                    self.abort_call(id);
                }
            }
        }
    }

    /// Resolves when the server is gone, with why: the child exited, or the connection
    /// ended.
    pub async fn ended(&self) -> String {
        let mut ended = self.shared.transport_ended.subscribe();
        let disconnected = async {
            let _ = ended.wait_for(|ended| *ended).await;
        };
        let reason = match &self.child {
            None => {
                disconnected.await;
                "closed the connection".to_owned()
            }
            Some(child) => {
                let status = tokio::select! {
                    status = child.exited() => Some(status),
                    // A closed stdout is how a dying child first shows: prefer its story.
                    _ = disconnected => child.exit_within(Duration::from_millis(500)).await,
                };
                match status {
                    Some(status) => child.describe_exit(status, "the session").await,
                    None => "closed the connection".to_owned(),
                }
            }
        };
        self.redactor().redact_string(reason)
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

    /// Ends the session and kills the server's process tree. Idempotent.
    pub async fn close(&self) {
        self.end_calls();
        // Dropping the transport closes the child's stdin: the polite way to ask it to go.
        self.end_service().await;
        if let Some(child) = &self.child {
            child.shutdown(CLOSE_GRACE).await;
        }
    }

    /// Kills the server at once (used when the caller aborts).
    pub async fn kill(&self) {
        self.end_calls();
        if let Some(child) = &self.child {
            child.shutdown(Duration::ZERO).await;
        }
        self.end_service().await;
    }

    /// Calls in flight end now, later ones fail at once.
    fn end_calls(&self) {
        self.closed.cancel();
        if let Calls::Local(calls) = &self.calls {
            calls.close();
        }
    }

    async fn end_service(&self) {
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
        bounded(self.child.as_deref(), phase, timeout, cancel, step)
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
        local: Option<(Arc<ChildProcess>, Arc<LocalCalls>)>,
        transport: T,
        explain: impl FnOnce(&ClientInitializeError) -> StepError,
    ) -> Result<Session, Failure>
    where
        T: Transport<RoleClient> + 'static,
    {
        let transport = Observed::new(transport, handler.0.clone());
        let initialize = async {
            let service = handler.serve(transport).await.map_err(|e| explain(&e))?;
            let version = service
                .peer()
                .peer_info()
                .map(|i| i.protocol_version.clone());
            match version {
                Some(v) if !ProtocolVersion::KNOWN_VERSIONS.contains(&v) => {
                    Err(StepError::Answered(unsupported_version(&v)))
                }
                _ => Ok(service),
            }
        };
        let (child, local_calls) = local.unzip();
        match bounded(
            child.as_deref(),
            "initialize",
            self.timeout,
            self.cancel,
            initialize,
        )
        .await
        {
            Ok(service) => {
                let peer = service.peer().clone();
                let shared = service.service().0.clone();
                let closed = CancellationToken::new();
                let calls = match local_calls {
                    Some(calls) => Calls::Local(calls),
                    None => Calls::Remote(RemoteCalls::new(
                        peer.clone(),
                        shared.clone(),
                        closed.clone(),
                    )),
                };
                Ok(Session {
                    name: self.name.to_owned(),
                    timeout: self.timeout,
                    max_total: None,
                    peer,
                    shared,
                    service: Mutex::new(Some(service)),
                    child,
                    calls,
                    closed,
                })
            }
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
    step: impl Future<Output = Result<T, impl Into<StepError>>>,
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
            Ok(Err(error)) => Err(Failure::Reason(match (error.into(), child) {
                (StepError::Answered(reason), _) | (StepError::Broken(reason), None) => reason,
                // A broken connection is how a dying child first shows; prefer its story.
                (StepError::Broken(reason), Some(child)) => {
                    match child.exit_within(Duration::from_millis(500)).await {
                        Some(status) => child.describe_exit(status, phase).await,
                        None => reason,
                    }
                }
            })),
            Err(_) => Err(Failure::Reason(timed_out(phase, timeout))),
        },
        status = exited => {
            let child = child.expect("only a child can exit");
            Err(Failure::Reason(child.describe_exit(status, phase).await))
        }
    }
}

/// Why a phase failed: what the server answered, which stands even if it exits next (as a
/// stdio server does once its input closes), or a broken exchange, which a dying child
/// explains better.
enum StepError {
    Answered(String),
    Broken(String),
}

impl From<String> for StepError {
    fn from(reason: String) -> Self {
        StepError::Broken(reason)
    }
}

fn unsupported_version(version: &ProtocolVersion) -> String {
    format!(
        "answered initialize with protocol version \"{version}\", which this client does not support"
    )
}

/// Why `initialize` failed, in words.
fn initialize_failure(error: &ClientInitializeError) -> StepError {
    match error {
        ClientInitializeError::JsonRpcError(e) => {
            StepError::Answered(answered_with_error("initialize", &e.message))
        }
        ClientInitializeError::ExpectedInitResponse(_)
        | ClientInitializeError::ExpectedInitResult(_) => {
            StepError::Answered(unexpected_response("initialize"))
        }
        ClientInitializeError::ConnectionClosed(_) => {
            StepError::Broken("closed the connection during initialize".into())
        }
        other => StepError::Broken(format!("initialize failed: {other}")),
    }
}

/// A protocol error in words, never a bare code.
fn describe(error: &ServiceError, phase: &str) -> String {
    match error {
        ServiceError::McpError(ErrorData { message, .. }) => answered_with_error(phase, message),
        ServiceError::Timeout { timeout } => timed_out(phase, *timeout),
        ServiceError::TransportClosed => format!("closed the connection during {phase}"),
        ServiceError::TransportSend(e) => {
            format!("failed {phase}: {}", http::explain_send_error(&*e.error))
        }
        ServiceError::Cancelled { reason } => format!(
            "cancelled {phase}: {}",
            reason.as_deref().unwrap_or("no reason given")
        ),
        other => format!("failed {phase}: {other}"),
    }
}

/// Hands a call's events to the task awaiting it: `Err` carries progress.
struct ChannelSink(mpsc::UnboundedSender<Result<ToolOutput, Progress>>);

impl ChannelSink {
    fn pair() -> (
        Arc<dyn CallSink>,
        mpsc::UnboundedReceiver<Result<ToolOutput, Progress>>,
    ) {
        let (tx, rx) = mpsc::unbounded_channel();
        (Arc::new(ChannelSink(tx)), rx)
    }
}

impl CallSink for ChannelSink {
    fn progress(&self, _call: u64, progress: Progress) {
        let _ = self.0.send(Err(progress));
    }

    fn done(&self, _call: u64, output: ToolOutput) {
        let _ = self.0.send(Ok(output));
    }
}
