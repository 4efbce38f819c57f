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

mod calls;
mod catalog;
pub mod clock;
mod fleet;
mod listing;
mod membership;
mod news;
mod offers;
mod search;
mod service;
mod supervisor;
#[cfg(test)]
mod tests;

pub use calls::ToolCall;
pub use catalog::default_dir as default_catalog_dir;
pub use fleet::{Instance, SharedCatalog, SharedShelves};
pub use listing::{Entry, Group, Listing};

use std::path::PathBuf;
use std::sync::{Arc, Mutex, RwLock};
use std::time::Duration;

use tokio::runtime::Handle;
use tokio::sync::watch;
use tokio_util::sync::CancellationToken;

use self::service::{Inner, Members, Service, State};
use crate::code::Code;
use crate::config::McpConfig;
use crate::inventory::in_parallel;
use crate::lock::{lock, write};
use crate::session::Hooks;
use crate::state::Shared;
use crate::tool::listed::ListedTool;

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
    /// Whether every server is lazy, as if its entry said `"lazy": true`.
    pub lazy: bool,
    /// The folder of the persisted catalog; `None`: no files are kept.
    pub catalog: Option<PathBuf>,
    /// The fleet's shared state, when the store has one: registry, catalog (unless
    /// `share_catalog` is off), news and the fleet's health go through it.
    pub shared: Option<Arc<Shared>>,
    pub share_catalog: bool,
}

impl Default for StoreOptions {
    fn default() -> Self {
        StoreOptions {
            wait_local: Duration::from_millis(5_000),
            wait_remote: Duration::from_millis(1_500),
            max_restarts: 5,
            backoff: Duration::from_millis(250),
            backoff_max: Duration::from_millis(10_000),
            lazy: false,
            catalog: None,
            shared: None,
            share_catalog: true,
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Phase {
    /// Not started: a call or a listing will start it.
    Lazy,
    Initializing,
    Connected,
    Reconnecting,
    Failed,
    /// Failed for want of an OAuth sign-in nobody could give.
    NeedsAuth,
    Disabled,
}

impl Phase {
    /// The code of a call that cannot reach a server in this phase.
    pub fn code(self) -> Code {
        match self {
            Phase::NeedsAuth => Code::SignInRequired,
            Phase::Failed | Phase::Disabled => Code::ServerFailed,
            // Not up within the call's time.
            Phase::Lazy | Phase::Initializing | Phase::Connected | Phase::Reconnecting => {
                Code::Timeout
            }
        }
    }

    pub fn as_str(self) -> &'static str {
        match self {
            Phase::Lazy => "lazy",
            Phase::Initializing => "initializing",
            Phase::Connected => "connected",
            Phase::Reconnecting => "reconnecting",
            Phase::Failed => "failed",
            Phase::NeedsAuth => "needs_auth",
            Phase::Disabled => "disabled",
        }
    }
}

/// The store. Dropping it stops every supervisor; `close` also waits for them.
pub struct Store {
    inner: Arc<Inner>,
    /// What this store wrote to or applied from its fleet's registry.
    fleet: Arc<fleet::Fleet>,
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

impl Store {
    /// Supervises every server of `config` in the background; their connections begin at
    /// `start`, or when a call or a listing that waits needs them. Must be called within a
    /// tokio runtime.
    pub fn new(config: McpConfig, hooks: Hooks, options: StoreOptions) -> Store {
        let store = Store {
            fleet: Arc::default(),
            inner: Arc::new(Inner {
                services: RwLock::new(Vec::new()),
                membership: Mutex::default(),
                version: watch::Sender::new(0),
                hooks,
                options,
                waiting: Mutex::default(),
                runtime: Handle::current(),
                indexes: Mutex::default(),
                closed: CancellationToken::new(),
                started: CancellationToken::new(),
            }),
        };
        membership::add_servers(&store.inner, None, config);
        if store.inner.options.shared.is_some() {
            tokio::spawn(fleet::follow(store.inner.clone(), store.fleet.clone()));
        }
        store
    }

    /// Lets every server connect. Idempotent.
    pub fn start(&self) {
        self.inner.started.cancel();
    }

    /// Adds (or replaces, by name) servers of the store (`agent: None`) or of an agent;
    /// with a shared state, for the whole fleet. `entries` are as written, each beside
    /// its parsed form, so that every host expands `${VAR}` from its own environment.
    pub fn add_servers(
        &self,
        agent: Option<&str>,
        config: McpConfig,
        entries: Vec<(String, serde_json::Value)>,
    ) {
        membership::add_servers(&self.inner, agent, config);
        let shared = entries.into_iter().map(|(name, entry)| (name, Some(entry)));
        fleet::share(&self.inner, &self.fleet, agent, shared.collect());
    }

    /// Stops and forgets a server, in the whole fleet with a shared state; its process
    /// tree is ended by its supervisor.
    pub fn remove_server(&self, agent: Option<&str>, name: &str) -> bool {
        let removed = membership::remove_server(&self.inner, agent, name);
        fleet::share(
            &self.inner,
            &self.fleet,
            agent,
            vec![(name.to_owned(), None)],
        );
        removed
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
    pub fn list_tools(&self, agent: Option<&str>) -> Listing {
        self.listing(agent, |state| &state.tools)
    }

    /// The view's tools that only an app's view may see and call (MCP Apps' visibility):
    /// no model-facing list has them.
    pub fn list_app_tools(&self, agent: Option<&str>) -> Listing {
        self.listing(agent, |state| &state.app_tools)
    }

    fn listing(&self, agent: Option<&str>, tools: fn(&State) -> &Arc<Vec<ListedTool>>) -> Listing {
        let groups = self.view(agent).into_iter().map(|service| Group {
            service_name: service.view_name(agent).to_owned(),
            client_id: service.client_id(),
            tools: tools(&service.state.borrow()).clone(),
            max_output_chars: service.max_output_chars,
            deferral: service.deferral.clone(),
        });
        Listing::new(groups.collect())
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

    /// Whether a server of the view is initializing, or lazy with no catalog to show:
    /// a listing that waits then has a server to wait for.
    pub fn any_initializing(&self, agent: Option<&str>) -> bool {
        self.view(agent).iter().any(|s| awaited(&s.state.borrow()))
    }

    /// Waits for the view's initializing servers, each at most its kind's bound, after
    /// starting its lazy servers that have no catalog.
    pub async fn wait_initializing(&self, agent: Option<&str>) {
        self.start();
        let options = &self.inner.options;
        let view = self.view(agent);
        for service in &view {
            let lazy = service.state.borrow().phase == Phase::Lazy;
            if lazy && awaited(&service.state.borrow()) {
                self.inner.want(service);
            }
        }
        let waits = view.into_iter().map(|service| {
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

    /// The live instances of the store's fleet; this one alone without a shared state.
    pub async fn instances(&self) -> Vec<Instance> {
        fleet::instances(&self.inner).await
    }

    /// The shared state, if the store has one.
    pub fn shared(&self) -> Option<&Arc<Shared>> {
        self.inner.options.shared.as_ref()
    }

    /// Ends every call in flight and refuses later ones, at once: the part of closing a
    /// host's thread does itself, so that no call it starts after `close()` goes out.
    pub fn end_calls(&self) {
        self.inner.closed.cancel();
        for service in self.inner.services().iter() {
            if let Some(session) = service.session.borrow().as_ref() {
                session.end_calls();
            }
        }
    }

    /// Stops every supervisor and waits until every server process tree has ended.
    pub async fn close(&self) {
        fleet::leave(&self.inner).await;
        self.inner.closed.cancel();
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

/// Whether a listing that waits waits for this server.
fn awaited(state: &State) -> bool {
    match state.phase {
        Phase::Initializing => true,
        Phase::Lazy => state.tools.is_empty(),
        _ => false,
    }
}

impl Drop for Store {
    fn drop(&mut self) {
        self.inner.closed.cancel();
        for service in self.inner.services().iter() {
            service.stop.cancel();
        }
    }
}
