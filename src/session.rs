//! One MCP session with one server: `initialize`, paginated `tools/list`, `tools/call`,
//! close. Every request is bounded by the server's timeout, by the caller's cancellation
//! and, for local servers, by the child's exit, so no step can hang.

pub mod cache;
mod checking_sink;
mod connect;
mod engine;
pub mod error;
mod handler;
mod hooks;
mod listen;
mod observer;
pub mod offers;
mod opening;
mod paging;
mod phase;
mod redacted;
mod request_meta;
pub mod subscribe;
mod task_support;
mod tools_list;
pub mod trace_context;
pub mod wording;

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use rmcp::Peer;
use rmcp::service::{RoleClient, RunningService};
use tokio_util::sync::CancellationToken;

use self::engine::Engine;
pub use self::handler::Logged;
use self::handler::{Client, Shared};
use self::redacted::RedactingSink;
use crate::config::{ServerSpec, TransportSpec};
use crate::lock::lock;
use crate::redact::Redactor;
use crate::tool::listed::{CacheHints, ListedTool};
use crate::transport::local::ChildProcess;

pub use self::cache::{CacheMode, Shelf};
pub use self::engine::call::{CallId, CallSink, CallSpec};
pub use self::engine::params::Params;
pub use self::engine::request::Progress;
pub use self::error::{Error, Failure};
pub use self::hooks::{Hooks, Listings, Logger, Shelves};

/// A `ttlMs` shorter than this re-lists no more often than this.
const MIN_TTL: Duration = Duration::from_secs(1);
/// How long a closing server gets after stdin closes (and again after SIGTERM).
const CLOSE_GRACE: Duration = Duration::from_millis(250);

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
    /// The output schemas its results are checked against.
    output_schemas: crate::tool::output_check::Schemas,
    /// Which of its tools run as tasks.
    task_support: task_support::TaskSupport,
    /// Cancelled when the session closes: ends what it runs beside the calls.
    closing: CancellationToken,
    /// A remote server's host and port, for the spans of its requests.
    address: Option<(String, Option<u16>)>,
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
        let opened = connect::connect(name, spec, hooks, cancel).await?;
        Ok(Session {
            name: name.to_owned(),
            timeout: opened.timeout,
            max_total: spec.max_total_timeout,
            peer: opened.peer,
            shared: opened.shared,
            service: Mutex::new(Some(opened.service)),
            child: opened.child,
            engine: opened.engine,
            ttl: Mutex::default(),
            listening: AtomicBool::new(false),
            output_schemas: Default::default(),
            task_support: Default::default(),
            closing: CancellationToken::new(),
            address: match &spec.transport {
                TransportSpec::Remote(remote) => {
                    reqwest::Url::parse(&remote.url).ok().and_then(|url| {
                        Some((url.host_str()?.to_owned(), url.port_or_known_default()))
                    })
                }
                TransportSpec::Local(_) => None,
            },
        })
    }

    /// The attributes OpenTelemetry's MCP conventions give a span of this server's
    /// requests, as one JSON object's text: its protocol version, and how it is reached.
    pub fn span_attributes(&self) -> String {
        let mut attributes = serde_json::Map::new();
        if let Some(version) = self.protocol_version() {
            attributes.insert("mcp.protocol.version".into(), version.into());
        }
        let transport = if self.address.is_some() {
            "tcp"
        } else {
            "pipe"
        };
        attributes.insert("network.transport".into(), transport.into());
        if let Some((host, port)) = &self.address {
            attributes.insert("server.address".into(), host.as_str().into());
            if let Some(port) = port {
                attributes.insert("server.port".into(), (*port).into());
            }
        }
        serde_json::Value::Object(attributes).to_string()
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
        // A server that offers no tools may refuse to list them: it has none.
        let none = || !self.offers_tools() && !self.is_gone();
        let listed = tools_list::list_all(&self.engine, self.timeout, cancel, none).await;
        let (tools, hints) = listed.map_err(|failure| failure.redacted(self.redactor()))?;
        self.note_ttl(hints);
        self.output_schemas.record(&tools);
        self.task_support.record(&tools);
        Ok(tools)
    }

    /// Keeps the caching hints of the last listing; for re-listing, a `ttlMs` of 0 (not
    /// cacheable) and nonsense are no hint.
    fn note_ttl(&self, hints: CacheHints) {
        let ttl = hints
            .ttl_ms
            .filter(|ms| *ms > 0.0)
            .and_then(crate::duration::from_millis)
            .map(|ttl| ttl.max(MIN_TTL));
        *lock(&self.ttl) = (ttl, hints);
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
    /// What the server logs from now on (`notifications/message`), its secrets redacted.
    pub fn logs(&self) -> tokio::sync::broadcast::Receiver<Arc<Logged>> {
        self.shared.logs.subscribe()
    }

    /// What the server said of how to use it (`instructions`), if anything.
    pub fn instructions(&self) -> Option<String> {
        self.peer.peer_info()?.instructions.clone()
    }

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

    /// How long the last listing may be taken as fresh, when the server said.
    pub fn tools_ttl(&self) -> Option<Duration> {
        lock(&self.ttl).0
    }

    /// The caching hints of the last listing, as the server sent them.
    pub fn cache_hints(&self) -> CacheHints {
        lock(&self.ttl).1
    }

    /// Changes whenever the server says its tool list changed: through
    /// `notifications/tools/list_changed` in the 2025 era, through a `subscriptions/listen`
    /// request (opened by the first call) in the 2026 one.
    pub fn tool_changes(&self) -> tokio::sync::watch::Receiver<u64> {
        self.follow_changes();
        self.shared.tools_changed.subscribe()
    }

    /// Opens, once, a modern session's `subscriptions/listen` for list changes (see
    /// `listen`); a 2025-era server sends them unasked.
    fn follow_changes(&self) {
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
        mut spec: CallSpec,
        sink: Arc<dyn CallSink>,
    ) {
        spec.task = self.runs_as_task(tool, spec.task);
        let schema = self.output_schemas.get(tool);
        let sink =
            checking_sink::checking(sink, schema.as_ref(), &self.name, tool, self.redactor());
        let sink = RedactingSink::wrap(sink, self.redactor());
        self.engine.start(id.get(), tool, args_json, spec, sink);
    }

    /// Whether a call of `tool` may become a task: the server decides for itself (the
    /// 2026-07-28 extension), or the tool's listing allows one.
    pub fn may_run_as_task(&self, tool: &str) -> bool {
        self.runs_as_task(tool, true)
    }

    fn runs_as_task(&self, tool: &str, asked: bool) -> bool {
        match self.peer.peer_info() {
            // The 2026-07-28 extension leaves it to the server: any call may become a task.
            Some(info) if !info.protocol_version.has_initialize() => {
                info.capabilities.supports_tasks()
            }
            _ => self.task_support.runs_as_task(tool, asked),
        }
    }

    /// Aborts call `id` if it is still running: the server is told, and the call ends
    /// with an "aborted" error.
    pub fn abort_call(&self, id: u64) {
        self.engine.abort(id);
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

    /// Calls in flight end now, later ones fail at once: the part of closing a host's
    /// thread does itself, so that no call it starts after `close()` goes out.
    pub fn end_calls(&self) {
        self.closing.cancel();
        // Their updates end with the session.
        lock(&self.shared.updates).clear();
        self.engine.close();
    }

    async fn end_service(&self) {
        let service = lock(&self.service).take();
        if let Some(service) = service {
            let _ = service.cancel().await;
        }
    }
}
