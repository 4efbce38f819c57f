//! Store mode: a long-lived registry of servers. Each server has a supervisor task that
//! connects, keeps its tool list current (`notifications/tools/list_changed`) and
//! reconnects with exponential backoff when the server goes away. Listing answers from
//! memory. Every change bumps the store's version and stamps what changed with it: the
//! service's state, or the membership of the views a service joined or left. A view's
//! revision is the newest stamp it can see, so a host caches each view by its revision and
//! is told of a change only where it shows.
//!
//! Servers belong to the store itself or to an agent. An agent sees only its own, under
//! their local names; the store view sees all, agents' services under a global name.

mod clock;
mod supervisor;

use std::collections::HashMap;
use std::sync::{Arc, Mutex, RwLock};
use std::time::{Duration, Instant, SystemTime};

use serde::Serialize;
use serde_json::value::RawValue;
use tokio::runtime::Handle;
use tokio::sync::watch;
use tokio::task::JoinHandle;
use tokio_util::sync::CancellationToken;

use crate::config::{DEFAULT_TIMEOUT, McpConfig, ServerState, TransportSpec, sanitize};
use crate::inventory::in_parallel;
use crate::listed_tool::{ListedTool, normalize_schema};
use crate::lock::{lock, read, write};
use crate::session::{CallId, CallSink, CallSpec, Hooks, Session};
use crate::tool_names;
use crate::tool_result::ToolOutput;

/// The `clientId` prefix of services that belong to the store itself (MCPStore's name).
const STORE_CLIENT: &str = "global_agent_store";

#[derive(Debug, Clone)]
pub struct StoreOptions {
    /// The longest `listToolsAsync` waits for an initializing local server.
    pub wait_local: Duration,
    /// The longest it waits for an initializing remote server.
    pub wait_remote: Duration,
    /// Reconnection attempts after a failure before a server is `failed`.
    pub max_restarts: u32,
    /// The first reconnection delay; it doubles per attempt, up to `backoff_max`.
    pub backoff: Duration,
    pub backoff_max: Duration,
}

impl Default for StoreOptions {
    fn default() -> Self {
        StoreOptions {
            wait_local: Duration::from_millis(5_000),
            wait_remote: Duration::from_millis(1_500),
            max_restarts: 5,
            backoff: Duration::from_millis(250),
            backoff_max: Duration::from_millis(10_000),
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Phase {
    Initializing,
    Connected,
    Reconnecting,
    Failed,
    /// Failed for want of an OAuth sign-in nobody could give.
    NeedsAuth,
    Disabled,
}

impl Phase {
    pub fn as_str(self) -> &'static str {
        match self {
            Phase::Initializing => "initializing",
            Phase::Connected => "connected",
            Phase::Reconnecting => "reconnecting",
            Phase::Failed => "failed",
            Phase::NeedsAuth => "needs_auth",
            Phase::Disabled => "disabled",
        }
    }
}

#[derive(Debug, Clone)]
struct State {
    phase: Phase,
    last_error: Option<String>,
    tools: Arc<Vec<ListedTool>>,
    connected_at: Option<SystemTime>,
    restarts: u32,
    /// The store version of this state's latest change.
    revision: u64,
}

/// One configured server and what its supervisor knows of it.
struct Service {
    agent: Option<String>,
    local: String,
    global: String,
    remote: bool,
    /// The server's own `timeout` and `maxTotalTimeout`, the defaults for its calls.
    timeout: Duration,
    max_total: Option<Duration>,
    state: watch::Sender<State>,
    session: watch::Sender<Option<Arc<Session>>>,
    stop: CancellationToken,
    supervisor: Mutex<Option<JoinHandle<()>>>,
}

impl Service {
    fn view_name(&self, agent: Option<&str>) -> &str {
        if agent.is_some() {
            &self.local
        } else {
            &self.global
        }
    }

    fn client_id(&self) -> String {
        match &self.agent {
            Some(agent) => format!("{agent}:{}", self.local),
            None => format!("{STORE_CLIENT}:{}", self.local),
        }
    }
}

struct Inner {
    services: RwLock<Vec<Arc<Service>>>,
    /// Per agent, the store version at the latest addition or removal of one of its
    /// services. The store view needs none: it sees every change, so its revision is
    /// the version itself.
    membership: Mutex<HashMap<String, u64>>,
    version: watch::Sender<u64>,
    hooks: Hooks,
    options: StoreOptions,
    /// Calls waiting for their server to connect, to abort them by id.
    waiting: Mutex<HashMap<u64, CancellationToken>>,
    /// Where a waiting call waits: calls start on any thread, the JS thread included.
    runtime: Handle,
}

impl Inner {
    /// Applies `change` to the state of `service`, stamped with the next version, and only
    /// then tells the store's listeners: a listener always sees the change it is told of.
    fn change(&self, service: &Service, change: impl FnOnce(&mut State)) {
        self.version.send_modify(|version| {
            *version += 1;
            service.state.send_modify(|state| {
                change(state);
                state.revision = *version;
            });
        });
    }

    /// Stamps with the next version the membership of `views`: a service was added to or
    /// removed from them. Then tells the store's listeners.
    fn membership_changed(&self, views: Members<'_>) {
        self.version.send_modify(|version| {
            *version += 1;
            let mut membership = lock(&self.membership);
            match views {
                Members::Of(None) => {}
                Members::Of(Some(agent)) => {
                    membership.insert(agent.to_owned(), *version);
                }
                Members::All => membership.values_mut().for_each(|v| *v = *version),
            }
        });
    }

    fn membership_revision(&self, agent: &str) -> u64 {
        let membership = lock(&self.membership);
        membership.get(agent).copied().unwrap_or(0)
    }

    fn services(&self) -> std::sync::RwLockReadGuard<'_, Vec<Arc<Service>>> {
        read(&self.services)
    }

    fn waiting(&self) -> std::sync::MutexGuard<'_, HashMap<u64, CancellationToken>> {
        lock(&self.waiting)
    }
}

#[derive(Clone, Copy)]
enum Members<'a> {
    /// The views that see the services of one agent (`None`: of the store itself): the
    /// store view, and the agent's own.
    Of(Option<&'a str>),
    /// Every view.
    All,
}

/// The store. Dropping it stops every supervisor; `close` also waits for them.
pub struct Store {
    inner: Arc<Inner>,
}

/// A tool as a store view lists it.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct StoreToolInfo {
    pub name: String,
    pub description: String,
    /// The normalised schema as JSON text, sent as a string: a host parses it only when
    /// it is read, however deep it nests.
    pub input_schema: String,
    pub service_name: String,
    pub client_id: String,
    /// The name the server knows the tool by.
    pub tool: String,
}

#[derive(Debug, Clone)]
pub struct ServiceStatus {
    pub state: Phase,
    pub last_error: Option<String>,
    pub tool_count: usize,
    pub connected_at: Option<String>,
    pub restarts: u32,
    pub client_id: String,
    /// What the server answered `initialize` with, while it is connected.
    pub protocol_version: Option<String>,
}

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
}

impl Store {
    /// Starts supervising every server of `config` in the background. Must be called
    /// within a tokio runtime.
    pub fn new(config: McpConfig, hooks: Hooks, options: StoreOptions) -> Store {
        let store = Store {
            inner: Arc::new(Inner {
                services: RwLock::new(Vec::new()),
                membership: Mutex::default(),
                version: watch::Sender::new(0),
                hooks,
                options,
                waiting: Mutex::default(),
                runtime: Handle::current(),
            }),
        };
        store.add_servers(None, config);
        store
    }

    /// Adds (or replaces, by name) servers of the store (`agent: None`) or of an agent.
    pub fn add_servers(&self, agent: Option<&str>, config: McpConfig) {
        let added = !config.servers.is_empty();
        for entry in config.servers {
            self.remove_server(agent, &entry.name);
            let service = self.register(agent, &entry.name, &entry.state);
            if let ServerState::Enabled(spec) = entry.state {
                let task = tokio::spawn(supervisor::run(self.inner.clone(), service.clone(), spec));
                *lock(&service.supervisor) = Some(task);
            }
        }
        if added {
            self.inner.membership_changed(Members::Of(agent));
        }
    }

    fn register(&self, agent: Option<&str>, local: &str, state: &ServerState) -> Arc<Service> {
        let (phase, last_error, remote, timeout) = match state {
            ServerState::Disabled => (Phase::Disabled, None, false, DEFAULT_TIMEOUT),
            ServerState::Invalid(reason) => {
                (Phase::Failed, Some(reason.clone()), false, DEFAULT_TIMEOUT)
            }
            ServerState::Enabled(spec) => {
                let remote = matches!(spec.transport, TransportSpec::Remote(_));
                (Phase::Initializing, None, remote, spec.timeout)
            }
        };
        let max_total = match state {
            ServerState::Enabled(spec) => spec.max_total_timeout,
            _ => None,
        };
        let mut services = write(&self.inner.services);
        let service = Arc::new(Service {
            agent: agent.map(str::to_owned),
            local: local.to_owned(),
            global: unique_global_name(&services, agent, local),
            remote,
            timeout,
            max_total,
            state: watch::Sender::new(State {
                phase,
                last_error,
                tools: Arc::default(),
                connected_at: None,
                restarts: 0,
                revision: 0,
            }),
            session: watch::Sender::new(None),
            stop: CancellationToken::new(),
            supervisor: Mutex::new(None),
        });
        services.push(service.clone());
        service
    }

    /// Stops and forgets a server; its process tree is ended by its supervisor.
    pub fn remove_server(&self, agent: Option<&str>, name: &str) -> bool {
        let removed = {
            let mut services = write(&self.inner.services);
            let index = services
                .iter()
                .position(|s| s.agent.as_deref() == agent && s.local == name);
            index.map(|i| services.remove(i))
        };
        match removed {
            Some(service) => {
                service.stop.cancel();
                self.inner.membership_changed(Members::Of(agent));
                true
            }
            None => false,
        }
    }

    /// Changes with every change to any server's state or tools.
    pub fn version(&self) -> u64 {
        *self.inner.version.borrow()
    }

    /// The store version of the latest change a view can see: its membership or the state
    /// of one of its services. It changes exactly when the view's tools or status may have.
    pub fn revision(&self, agent: Option<&str>) -> u64 {
        let Some(agent) = agent else {
            return self.version();
        };
        let services = self.inner.services();
        let own = services
            .iter()
            .filter(|s| s.agent.as_deref() == Some(agent));
        let newest = own.map(|s| s.state.borrow().revision).max();
        let membership = self.inner.membership_revision(agent);
        newest.map_or(membership, |newest| newest.max(membership))
    }

    pub fn subscribe(&self) -> watch::Receiver<u64> {
        self.inner.version.subscribe()
    }

    fn view(&self, agent: Option<&str>) -> Vec<Arc<Service>> {
        let services = self.inner.services();
        services
            .iter()
            .filter(|s| agent.is_none() || s.agent.as_deref() == agent)
            .cloned()
            .collect()
    }

    /// The tools of a view (`None`: the store view), from memory.
    pub fn list_tools(&self, agent: Option<&str>) -> Vec<StoreToolInfo> {
        let mut tools = Vec::new();
        for service in self.view(agent) {
            let service_name = service.view_name(agent);
            let state = service.state.borrow();
            for tool in state.tools.iter() {
                tools.push(StoreToolInfo {
                    name: String::new(),
                    description: tool.description.clone().unwrap_or_default(),
                    input_schema: tool.input_schema.get().to_owned(),
                    service_name: service_name.to_owned(),
                    client_id: service.client_id(),
                    tool: tool.name.to_string(),
                });
            }
        }
        let names = tool_names::assign(
            tools
                .iter()
                .map(|t| (t.service_name.as_str(), t.tool.as_str())),
        );
        for (tool, name) in tools.iter_mut().zip(names) {
            tool.name = name;
        }
        tools
    }

    pub fn status(&self, agent: Option<&str>) -> Vec<(String, ServiceStatus)> {
        self.view(agent)
            .iter()
            .map(|service| {
                let state = service.state.borrow();
                let status = ServiceStatus {
                    state: state.phase,
                    last_error: state.last_error.clone(),
                    tool_count: state.tools.len(),
                    connected_at: state.connected_at.map(clock::iso8601),
                    restarts: state.restarts,
                    client_id: service.client_id(),
                    protocol_version: service
                        .session
                        .borrow()
                        .as_ref()
                        .and_then(|s| s.protocol_version()),
                };
                (service.view_name(agent).to_owned(), status)
            })
            .collect()
    }

    pub fn any_initializing(&self, agent: Option<&str>) -> bool {
        self.view(agent)
            .iter()
            .any(|s| s.state.borrow().phase == Phase::Initializing)
    }

    /// Waits for the view's initializing servers, each at most its kind's bound.
    pub async fn wait_initializing(&self, agent: Option<&str>) {
        let options = &self.inner.options;
        let waits = self.view(agent).into_iter().map(|service| {
            let bound = if service.remote {
                options.wait_remote
            } else {
                options.wait_local
            };
            let mut state = service.state.subscribe();
            async move {
                let settled = state.wait_for(|s| s.phase != Phase::Initializing);
                let _ = tokio::time::timeout(bound, settled).await;
            }
        });
        in_parallel(waits).await;
    }

    fn find(&self, agent: Option<&str>, service_name: &str) -> Option<Arc<Service>> {
        let services = self.inner.services();
        let in_view = |s: &&Arc<Service>| agent.is_none() || s.agent.as_deref() == agent;
        let found = services
            .iter()
            .filter(in_view)
            .find(|s| s.view_name(agent) == service_name);
        found.cloned()
    }

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
        let Some(service) = self.find(agent, call.service) else {
            let output =
                ToolOutput::error(format!("no MCP server \"{}\" in this view", call.service));
            sink.done(id.get(), output);
            return id;
        };
        let spec = CallSpec {
            timeout: call.timeout.unwrap_or(service.timeout),
            max_total: call.max_total.or(service.max_total),
            wants_progress: call.wants_progress,
        };
        if matches!(
            service.state.borrow().phase,
            Phase::Failed | Phase::NeedsAuth | Phase::Disabled
        ) {
            sink.done(id.get(), not_connected(&service, call.service));
            return id;
        }
        let session = service.session.borrow().clone();
        if let Some(session) = session {
            session.start_call_as(id, call.tool, call.args_json, spec, sink);
            return id;
        }
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
            .find(agent, service_name)
            .and_then(|service| service.session.borrow().clone());
        if let Some(session) = session {
            session.abort_call(id);
        }
    }

    /// Stops every supervisor and waits until every server process tree has ended.
    pub async fn close(&self) {
        let services: Vec<_> = write(&self.inner.services).drain(..).collect();
        for service in &services {
            service.stop.cancel();
        }
        for service in services {
            let task = lock(&service.supervisor).take();
            if let Some(task) = task {
                let _ = task.await;
            }
        }
        self.inner.membership_changed(Members::All);
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
        let session = tokio::select! {
            session = session.wait_for(Option::is_some) => session.ok().and_then(|s| s.clone()),
            _ = tokio::time::sleep(spec.timeout) => None,
            _ = cancel.cancelled() => None,
        };
        let waited = waiting.elapsed();
        let spec = CallSpec {
            timeout: spec.timeout.saturating_sub(waited),
            max_total: spec.max_total.map(|total| total.saturating_sub(waited)),
            ..spec
        };
        let session =
            session.filter(|_| !spec.timeout.is_zero() && spec.max_total != Some(Duration::ZERO));
        let Some(session) = session else {
            self.inner.waiting().remove(&id.get());
            return sink.done(id.get(), not_connected(&self.service, &self.name));
        };
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

/// Why a call cannot reach a service's server: its phase and last error.
fn not_connected(service: &Service, name: &str) -> ToolOutput {
    let state = service.state.borrow();
    let why = state.last_error.as_deref().unwrap_or("not connected yet");
    let phase = state.phase.as_str();
    ToolOutput::error(format!("MCP server \"{name}\" is {phase}: {why}"))
}

impl Drop for Store {
    fn drop(&mut self) {
        for service in self.inner.services().iter() {
            service.stop.cancel();
        }
    }
}

/// Tools as the store keeps them: each schema normalised once, when it is listed, not
/// on every listing.
fn normalized(mut tools: Vec<ListedTool>) -> Arc<Vec<ListedTool>> {
    for tool in &mut tools {
        let schema = normalize_schema(&tool.input_schema, false);
        // Always JSON: normalising writes an object of the members it read.
        if let Ok(schema) = RawValue::from_string(schema) {
            tool.input_schema = schema;
        }
    }
    Arc::new(tools)
}

/// A store-level service keeps its name; an agent's is `<local>by<agent>`, sanitized.
/// Either gets `_2`, `_3`, ... when the name is taken.
fn unique_global_name(services: &[Arc<Service>], agent: Option<&str>, local: &str) -> String {
    let base = match agent {
        None => local.to_owned(),
        Some(agent) => sanitize(&format!("{local}by{agent}")),
    };
    let taken = |name: &str| services.iter().any(|s| s.global == name);
    if !taken(&base) {
        return base;
    }
    (2..)
        .map(|n| format!("{base}_{n}"))
        .find(|name| !taken(name))
        .expect("an unbounded range")
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Disabled servers: registered, never started.
    fn disabled(names: &[&str]) -> McpConfig {
        let entry = serde_json::json!({ "command": ["x"], "disabled": true });
        let map = names.iter().map(|name| (name.to_string(), entry.clone()));
        McpConfig::from_server_map(map.collect())
    }

    #[tokio::test]
    async fn a_view_revision_moves_only_with_changes_the_view_can_see() {
        let store = Store::new(disabled(&["s"]), Hooks::default(), StoreOptions::default());
        let (whole, a) = (store.revision(None), store.revision(Some("a")));
        assert_eq!(a, 0, "an agent with no services has never changed");

        store.add_servers(Some("b"), disabled(&["x"]));
        assert_eq!(store.revision(Some("a")), a, "agent b's addition");
        assert!(
            store.revision(None) > whole,
            "the store view sees every addition"
        );

        store.add_servers(Some("a"), disabled(&["y"]));
        let a = store.revision(Some("a"));
        assert_eq!(a, store.version());
        assert!(store.remove_server(Some("b"), "x"));
        assert_eq!(store.revision(Some("a")), a, "agent b's removal");

        let y = store.find(Some("a"), "y").expect("agent a's service");
        store.inner.change(&y, |s| s.restarts += 1);
        let a = store.revision(Some("a"));
        assert_eq!(
            a,
            store.version(),
            "a state change is stamped with the version it makes"
        );

        assert!(store.remove_server(Some("a"), "y"));
        assert!(
            store.revision(Some("a")) > a,
            "emptied by a removal, the view still moved"
        );
        store.add_servers(Some("a"), disabled(&["z"]));
        let a = store.revision(Some("a"));
        store.close().await;
        assert!(store.revision(Some("a")) > a, "closing empties every view");
        assert_eq!(store.revision(None), store.version());
    }
}
