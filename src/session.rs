//! One MCP session with one server: `initialize`, paginated `tools/list`, `tools/call`,
//! close. Every phase is bounded by the server's timeout, by the caller's cancellation and,
//! for local servers, by the child's exit, so no step can hang.

mod clock;
mod engine;
mod handler;
mod listen;
mod observer;
mod opening;
mod redacted;
mod request_meta;
mod wording;

use std::collections::HashSet;
use std::future::Future;
use std::pin::Pin;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use rmcp::model::{ErrorData, ProtocolVersion};
use rmcp::service::{RoleClient, RunningService, ServiceError};
use rmcp::transport::Transport;
use rmcp::transport::streamable_http_client::StreamableHttpError;
use rmcp::{ClientHandler, Peer};
use serde_json::Value;
use tokio::sync::{mpsc, watch};
use tokio_util::sync::CancellationToken;

use self::clock::Clock;
use self::engine::{Engine, PeerWire, StdioWire};
use self::handler::{Client, Shared};
use self::observer::Observed;
use self::opening::OpenError;
use self::redacted::RedactingSink;
use self::wording::{answered_with_error, during, failed, overwhelmed_by_progress, timed_out};
use crate::config::{ProtocolChoice, RemoteSpec, ServerSpec, TransportSpec};
use crate::elicitation::Elicitor;
use crate::listed_tool::{CacheHints, ListedTool, PageParts};
use crate::redact::Redactor;
use crate::tool_result::ToolOutput;
use crate::transport::http;
use crate::transport::lines::{LineTransport, LineWriter};
use crate::transport::stdio::ChildProcess;

/// A `tools/list` that pages more often than this is treated as broken.
const MAX_PAGES: usize = 1000;
/// A `ttlMs` shorter than this re-lists no more often than this.
const MIN_TTL: Duration = Duration::from_secs(1);
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

/// A call's id, reserved before the call starts: a store hands it to JS while the call
/// still waits for its server to connect.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CallId(u64);

impl CallId {
    /// An id no other call in the process has.
    pub fn reserve() -> CallId {
        CallId(next_call_id())
    }

    pub fn get(self) -> u64 {
        self.0
    }
}

pub struct Session {
    name: String,
    timeout: Duration,
    max_total: Option<Duration>,
    peer: Peer<RoleClient>,
    service: Mutex<Option<RunningService<RoleClient, Client>>>,
    shared: Arc<Shared>,
    child: Option<Arc<ChildProcess>>,
    engine: Arc<Engine>,
    /// The re-listing interval and caching hints of the last listing (see `note_ttl`).
    ttl: Mutex<(Option<Duration>, CacheHints)>,
    /// Whether the `subscriptions/listen` of a modern session is open.
    listening: AtomicBool,
    /// Cancelled when the session closes: ends what it runs beside the calls.
    closing: CancellationToken,
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
                let wire = Box::new(StdioWire(writer.clone()));
                let writer_for_opening = writer.clone();
                let engine = Engine::new(handler.0.clone(), wire, Some(child.clone()));
                let incoming = Arc::new(engine::Incoming(Arc::downgrade(&engine)));
                let transport = LineTransport::new(pipes.stdout, writer, incoming);
                let start = Start {
                    name,
                    timeout: spec.timeout,
                    protocol: spec.protocol,
                    cancel,
                    pause: None,
                };
                let local = Some(Local {
                    child,
                    engine,
                    writer: writer_for_opening,
                });
                start.run(handler, local, transport, broken_opening).await
            }
            TransportSpec::Remote(remote) => {
                Self::connect_remote(name, remote, spec, handler, cancel).await
            }
        }
    }

    /// Streamable HTTP first; on a 4xx to the initialize POST, the legacy HTTP+SSE
    /// transport at the same URL, within what is left of the same timeout.
    async fn connect_remote(
        name: &str,
        remote: &RemoteSpec,
        spec: &ServerSpec,
        handler: Client,
        cancel: &CancellationToken,
    ) -> Result<Session, Failure> {
        let (timeout, protocol) = (spec.timeout, spec.protocol);
        let started = Instant::now();
        let maybe_legacy = AtomicBool::new(false);
        let explain = |e: &StreamableHttpError<reqwest::Error>| {
            let (reason, legacy) = http::explain_open_error(e);
            maybe_legacy.store(legacy, Ordering::Relaxed);
            StepError::Broken(reason)
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
            protocol,
            cancel,
            pause: Some((handler.0.hooks.oauth.signing_in(), name.to_owned())),
        };
        let streamable = start.run(handler.clone(), None, transport, explain).await;
        let Err(Failure::Reason(reason)) = &streamable else {
            return streamable;
        };
        if !maybe_legacy.load(Ordering::Relaxed) {
            return streamable;
        }
        let left = timeout.saturating_sub(started.elapsed());
        let not_legacy = std::sync::Mutex::new(None);
        let handshake = async {
            http::legacy(remote).await.map_err(|e| {
                let reason = e.to_string();
                *not_legacy.lock().unwrap_or_else(|e| e.into_inner()) = Some(e);
                reason
            })
        };
        let transport = match bounded(
            None,
            "the legacy SSE handshake",
            (left, None),
            cancel,
            handshake,
        )
        .await
        {
            Ok(transport) => transport,
            Err(Failure::Aborted) => return Err(Failure::Aborted),
            Err(Failure::Reason(_)) => {
                let not_legacy = not_legacy.into_inner().unwrap_or_else(|e| e.into_inner());
                let reason = match not_legacy {
                    Some(not_legacy) => http::explain_not_legacy(&not_legacy, reason.clone()),
                    None => reason.clone(),
                };
                return Err(Failure::Reason(reason));
            }
        };
        let left = timeout.saturating_sub(started.elapsed());
        // The legacy transport predates the 2026 revision.
        let start = Start {
            name,
            timeout: left,
            protocol: ProtocolChoice::Legacy,
            cancel,
            pause: None,
        };
        let mut session = start.run(handler, None, transport, broken_opening).await?;
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
            let (page, next_cursor, hints) =
                match self.list_tools_page(cursor.as_deref(), cancel).await {
                    // A server that offers no tools may refuse to list them: it has none.
                    Err(Failure::Reason(_))
                        if cursor.is_none() && !self.offers_tools() && !self.is_gone() =>
                    {
                        return Ok(Vec::new());
                    }
                    page => page?,
                };
            tools.extend(page);
            if cursor.is_none() {
                self.note_ttl(hints);
            }
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

    /// One page, after as many rounds of answering what the server asks as it takes (up
    /// to `MAX_ROUNDS`). Each request has the whole timeout: the clock stands still while
    /// a person answers.
    async fn list_tools_page(
        &self,
        cursor: Option<&str>,
        cancel: &CancellationToken,
    ) -> Result<PageParts, Failure> {
        let mut asked = None;
        for _ in 0..=engine::MAX_ROUNDS {
            let round = asked
                .as_ref()
                .map(|(responses, asked): &(String, _)| (responses.as_str(), asked));
            let page = self.engine.list_tools_page(cursor, round);
            let next = match self
                .bounded("tools/list", self.timeout, cancel, page)
                .await?
            {
                engine::Listed::Page(page) => return Ok(page),
                engine::Listed::InputRequired(next) => next,
            };
            let answers = engine::rounds::fulfil(&self.shared, &next.requests, "tools/list");
            let responses = tokio::select! {
                _ = cancel.cancelled() => return Err(Failure::Aborted),
                answers = answers => answers.map_err(Failure::Reason)?,
            };
            asked = Some((responses, next));
        }
        Err(Failure::Reason(format!(
            "asked for input more than {} times during tools/list; the listing was given up",
            engine::MAX_ROUNDS
        )))
    }

    /// Keeps the caching hints of the last listing; for re-listing, a `ttlMs` of 0 (not
    /// cacheable) and nonsense are no hint.
    fn note_ttl(&self, hints: CacheHints) {
        let ttl = hints
            .ttl_ms
            .filter(|ms| *ms > 0.0)
            .and_then(crate::duration::from_millis)
            .map(|ttl| ttl.max(MIN_TTL));
        *self.ttl.lock().unwrap_or_else(|e| e.into_inner()) = (ttl, hints);
    }

    /// How long the last listing may be taken as fresh, when the server said.
    pub fn tools_ttl(&self) -> Option<Duration> {
        self.ttl.lock().unwrap_or_else(|e| e.into_inner()).0
    }

    /// The caching hints of the last listing, as the server sent them.
    pub fn cache_hints(&self) -> CacheHints {
        self.ttl.lock().unwrap_or_else(|e| e.into_inner()).1
    }

    /// Changes whenever the server says its tool list changed: through
    /// `notifications/tools/list_changed` in the 2025 era, through a `subscriptions/listen`
    /// request (opened by the first call) in the 2026 one.
    pub fn tool_changes(&self) -> tokio::sync::watch::Receiver<u64> {
        let modern = self
            .peer
            .peer_info()
            .is_some_and(|info| !info.protocol_version.has_initialize());
        if modern && !self.listening.swap(true, Ordering::Relaxed) {
            tokio::spawn(listen::tool_changes(
                self.peer.clone(),
                self.shared.clone(),
                self.closing.clone(),
            ));
        }
        self.shared.tools_changed.subscribe()
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
        let id = CallId::reserve();
        self.start_call_as(id, tool, args_json, spec, sink);
        id.get()
    }

    /// `start_call` under an id reserved beforehand.
    pub fn start_call_as(
        &self,
        id: CallId,
        tool: &str,
        args_json: &str,
        spec: CallSpec,
        sink: Arc<dyn CallSink>,
    ) {
        let sink = RedactingSink::wrap(sink, self.redactor());
        self.engine.start(id.get(), tool, args_json, spec, sink);
    }

    /// Aborts call `id` if it is still running: the server is told, and the call ends
    /// with an "aborted" error.
    pub fn abort_call(&self, id: u64) {
        self.engine.abort(id);
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
        self.closing.cancel();
        self.engine.close();
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
        bounded(self.child.as_deref(), phase, (timeout, None), cancel, step)
    }
}

/// What a local server's session starts from besides its transport.
struct Local {
    child: Arc<ChildProcess>,
    engine: Arc<Engine>,
    writer: Arc<LineWriter>,
}

/// Resolves once the server has read what was written to it and said nothing for
/// `opening::SILENCE` (see `opening`).
async fn read_and_silent(writer: Arc<LineWriter>) {
    while writer.drained() == Some(false) {
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    tokio::time::sleep(opening::SILENCE).await;
}

/// Starting a session: initialize over a transport, bounded like every phase.
struct Start<'a> {
    name: &'a str,
    timeout: Duration,
    protocol: ProtocolChoice,
    cancel: &'a CancellationToken,
    /// Stands the clock still while a person signs in (remote servers).
    pause: Option<Pause>,
}

impl Start<'_> {
    async fn run<T>(
        self,
        handler: Client,
        local: Option<Local>,
        transport: T,
        explain: impl Fn(&T::Error) -> StepError,
    ) -> Result<Session, Failure>
    where
        T: Transport<RoleClient> + 'static,
    {
        let mut transport = Observed::new(transport, handler.0.clone());
        let protocol = self.protocol;
        // A local server may stay silent on discover; a remote one always answers.
        let silence = local
            .as_ref()
            .map(|local| Box::pin(read_and_silent(local.writer.clone())) as opening::Silence);
        let initialize = async {
            let info = handler.get_info();
            let opened = opening::open(&mut transport, &info, protocol, silence).await;
            let (peer, unanswered) = opened.map_err(|e| match e {
                OpenError::Step(step) => step,
                OpenError::Send(e) => explain(&e),
            })?;
            transport.opened(unanswered);
            let service = rmcp::service::serve_directly(handler, transport, Some(peer));
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
        let (child, local_engine) = local.map(|l| (l.child, l.engine)).unzip();
        match bounded(
            child.as_deref(),
            "initialize",
            (self.timeout, self.pause),
            self.cancel,
            initialize,
        )
        .await
        {
            Ok(service) => {
                let peer = service.peer().clone();
                let shared = service.service().0.clone();
                let version = peer.peer_info().map(|info| info.protocol_version.clone());
                let meta = version
                    .and_then(|v| request_meta::modern_meta(&service.service().get_info(), &v));
                let engine = local_engine.unwrap_or_else(|| {
                    Engine::new(
                        shared.clone(),
                        Box::new(PeerWire::new(peer.clone(), shared.clone())),
                        None,
                    )
                });
                if let Some(meta) = &meta {
                    engine.set_meta(request_meta::as_members(meta));
                }
                Ok(Session {
                    name: self.name.to_owned(),
                    timeout: self.timeout,
                    max_total: None,
                    peer,
                    shared,
                    service: Mutex::new(Some(service)),
                    child,
                    engine,
                    ttl: Mutex::default(),
                    listening: AtomicBool::new(false),
                    closing: CancellationToken::new(),
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
    (timeout, pause): (Duration, Option<Pause>),
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
        result = within(timeout, pause, step) => match result {
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

/// While a person signs in to the server (its name in the set), its phase's clock
/// stands still.
type Pause = (watch::Receiver<HashSet<String>>, String);

/// `step`, or `Err` once `timeout` has run, not counting the time `pause` held it.
async fn within<F: Future>(
    timeout: Duration,
    pause: Option<Pause>,
    step: F,
) -> Result<F::Output, ()> {
    let Some((mut signing_in, name)) = pause else {
        return tokio::time::timeout(timeout, step).await.map_err(|_| ());
    };
    let paused = |names: &HashSet<String>| names.contains(&name);
    let mut clock = Clock::new(timeout, None, paused(&signing_in.borrow_and_update()));
    tokio::pin!(step);
    loop {
        let expiry = async {
            match clock.deadline() {
                Some(deadline) => tokio::time::sleep_until(deadline).await,
                None => std::future::pending().await,
            }
        };
        tokio::select! {
            output = &mut step => return Ok(output),
            _ = expiry => return Err(()),
            Ok(()) = signing_in.changed() => clock.set_paused(paused(&signing_in.borrow_and_update())),
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

/// A transport that failed to send during the opening, in words.
fn broken_opening(error: &impl std::fmt::Display) -> StepError {
    StepError::Broken(format!("initialize failed: {error}"))
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
