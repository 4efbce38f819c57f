//! What the store keeps per server, and the shared state every supervisor and view reads:
//! each change is stamped with the store version it makes.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, RwLock};
use std::time::{Duration, SystemTime};

use serde_json::value::RawValue;
use tokio::runtime::Handle;
use tokio::sync::{Notify, watch};
use tokio::task::JoinHandle;
use tokio_util::sync::CancellationToken;

use crate::config::{DEFAULT_TIMEOUT, Deferral, ServerState, ToolFilter, TransportSpec, sanitize};
use crate::lock::{lock, read};
use crate::session::{Hooks, Session};
use crate::tool::listed::{ListedTool, normalize_schema};

use super::catalog::Slot;
use super::search::ViewIndex;
use super::{Phase, STORE_CLIENT, StoreOptions};

#[derive(Debug, Clone)]
pub(super) struct State {
    pub(super) phase: Phase,
    pub(super) last_error: Option<String>,
    /// The tools a model may see, and those only an app's view may (see `visibility`).
    pub(super) tools: Arc<Vec<ListedTool>>,
    pub(super) app_tools: Arc<Vec<ListedTool>>,
    pub(super) connected_at: Option<SystemTime>,
    pub(super) restarts: u32,
    /// Whether `tools` come from the catalog, not yet from the live server.
    pub(super) cached: bool,
    /// The store version of this state's latest change.
    pub(super) revision: u64,
}

/// One configured server and what its supervisor knows of it.
pub(super) struct Service {
    pub(super) agent: Option<String>,
    pub(super) local: String,
    pub(super) global: String,
    pub(super) remote: bool,
    /// The server's own `timeout` and `maxTotalTimeout`, the defaults for its calls.
    pub(super) timeout: Duration,
    pub(super) max_total: Option<Duration>,
    pub(super) state: watch::Sender<State>,
    pub(super) session: watch::Sender<Option<Arc<Session>>>,
    pub(super) stop: CancellationToken,
    pub(super) supervisor: Mutex<Option<JoinHandle<()>>>,
    /// Where its listings are kept on disk, unless the store keeps no catalog.
    pub(super) slot: Option<Arc<Slot>>,
    /// The entry's `tools`: which of the server's tools the store shows. Its catalog keeps
    /// them all, as the catalog is shared by entries that differ only in it.
    pub(super) filter: ToolFilter,
    /// The entry's `maxOutputChars`, `deferLoading` and `alwaysLoad`, for the adapters.
    pub(super) max_output_chars: Option<u64>,
    pub(super) deferral: Deferral,
    /// Cancelled once a call or a listing needs a lazy server: then it starts.
    pub(super) wanted: CancellationToken,
    /// Told when another instance of the fleet saw this server's tools change: the
    /// supervisor lists them again.
    pub(super) relist: Notify,
}

impl Service {
    pub(super) fn view_name(&self, agent: Option<&str>) -> &str {
        if agent.is_some() {
            &self.local
        } else {
            &self.global
        }
    }

    /// The tools of a listing the entry's `tools` lets the store show: those a model may
    /// see, and those only an app's view may.
    pub(super) fn shown(&self, tools: &Arc<Vec<ListedTool>>) -> Shown {
        shown(&self.filter, tools)
    }

    pub(super) fn client_id(&self) -> String {
        match &self.agent {
            Some(agent) => format!("{agent}:{}", self.local),
            None => format!("{STORE_CLIENT}:{}", self.local),
        }
    }
}

/// How a service begins: its first state, and what it knows of its server.
pub(super) struct Start {
    pub(super) phase: Phase,
    pub(super) last_error: Option<String>,
    pub(super) remote: bool,
    pub(super) timeout: Duration,
    pub(super) max_total: Option<Duration>,
    pub(super) slot: Option<Arc<Slot>>,
    pub(super) filter: ToolFilter,
    pub(super) max_output_chars: Option<u64>,
    pub(super) deferral: Deferral,
    /// The catalog's tools of its last listing the entry shows, if any.
    pub(super) tools: Shown,
}

/// A listing as a service shows it: the tools a model may see, and the app's alone.
pub(super) type Shown = (Arc<Vec<ListedTool>>, Arc<Vec<ListedTool>>);

/// The tools of `tools` that `filter` allows, parted by who may see them. A listing with
/// no filter and no app's tool is shared, not copied.
fn shown(filter: &ToolFilter, tools: &Arc<Vec<ListedTool>>) -> Shown {
    let all = matches!(filter, ToolFilter::All);
    if all && !tools.iter().any(ListedTool::app_only) {
        return (tools.clone(), Arc::default());
    }
    let allowed = tools.iter().filter(|tool| all || filter.allows(&tool.name));
    let (app, model): (Vec<_>, Vec<_>) = allowed.cloned().partition(ListedTool::app_only);
    (Arc::new(model), Arc::new(app))
}

impl Start {
    /// `buffer` is where catalog files are read (see `Slot::read`).
    pub(super) fn of(state: &ServerState, options: &StoreOptions, buffer: &mut Vec<u8>) -> Start {
        let mut start = Start {
            phase: Phase::Disabled,
            last_error: None,
            remote: false,
            timeout: DEFAULT_TIMEOUT,
            max_total: None,
            slot: None,
            filter: ToolFilter::All,
            max_output_chars: None,
            deferral: Deferral::default(),
            tools: Shown::default(),
        };
        match state {
            ServerState::Disabled => {}
            ServerState::Invalid(reason) => {
                start.phase = Phase::Failed;
                start.last_error = Some(reason.to_string());
            }
            ServerState::Enabled(spec) => {
                start.phase = match spec.lazy || options.lazy {
                    true => Phase::Lazy,
                    false => Phase::Initializing,
                };
                start.remote = matches!(spec.transport, TransportSpec::Remote(_));
                start.timeout = spec.timeout;
                start.max_total = spec.max_total_timeout;
                let shared = options.shared.is_some() && options.share_catalog;
                let slot = (options.catalog.is_some() || shared)
                    .then(|| Slot::new(options.catalog.as_deref(), spec));
                // Kept as the store keeps listings: each schema normalised already.
                if let Some(tools) = slot.as_ref().and_then(|slot| slot.read(buffer)) {
                    start.tools = shown(&spec.tools, &Arc::new(tools));
                }
                start.filter = spec.tools.clone();
                start.max_output_chars = spec.max_output_chars;
                start.deferral = spec.deferral.clone();
                start.slot = slot.map(Arc::new);
            }
        }
        start
    }

    /// The start of each of `states`, their catalog files read side by side: a store of
    /// many servers lists them all as soon as it is made.
    pub(super) fn of_all<'a>(
        states: impl Iterator<Item = &'a ServerState>,
        options: &StoreOptions,
    ) -> Vec<Start> {
        let states: Vec<&ServerState> = states.collect();
        let threads = std::thread::available_parallelism().map_or(1, |n| n.get());
        let chunk = states.len().div_ceil(threads).max(1);
        if options.catalog.is_none() || states.len() <= chunk {
            let mut buffer = Vec::new();
            return states
                .iter()
                .map(|s| Start::of(s, options, &mut buffer))
                .collect();
        }
        std::thread::scope(|scope| {
            let readers: Vec<_> = states
                .chunks(chunk)
                .map(|part| {
                    scope.spawn(move || {
                        let mut buffer = Vec::new();
                        part.iter()
                            .map(|s| Start::of(s, options, &mut buffer))
                            .collect::<Vec<_>>()
                    })
                })
                .collect();
            readers
                .into_iter()
                .flat_map(|reader| {
                    reader
                        .join()
                        .unwrap_or_else(|panic| std::panic::resume_unwind(panic))
                })
                .collect()
        })
    }
}

pub(super) struct Inner {
    pub(super) services: RwLock<Vec<Arc<Service>>>,
    /// Per agent, the store version at the latest addition or removal of one of its
    /// services. The store view needs none: it sees every change, so its revision is
    /// the version itself.
    pub(super) membership: Mutex<HashMap<String, u64>>,
    pub(super) version: watch::Sender<u64>,
    pub(super) hooks: Hooks,
    pub(super) options: StoreOptions,
    /// Calls waiting for their server to connect, to abort them by id.
    pub(super) waiting: Mutex<HashMap<u64, CancellationToken>>,
    /// Where a waiting call waits: calls start on any thread, the JS thread included.
    pub(super) runtime: Handle,
    /// Each view's search index, built when first searched at a revision.
    pub(super) indexes: Mutex<HashMap<Option<String>, Arc<ViewIndex>>>,
    /// Cancelled when the store closes or is dropped.
    pub(super) closed: CancellationToken,
    /// Cancelled once servers may connect (`Store::start`): spawning them while the host
    /// is still making the store and listing its catalog would only slow both.
    pub(super) started: CancellationToken,
}

impl Inner {
    /// Applies `change` to the state of `service`, stamped with the next version, and only
    /// then tells the store's listeners: a listener always sees the change it is told of.
    pub(super) fn change(&self, service: &Service, change: impl FnOnce(&mut State)) {
        self.version.send_modify(|version| {
            *version += 1;
            service.state.send_modify(|state| {
                change(state);
                state.revision = *version;
            });
        });
    }

    /// Applies `change` with its item to the state of each service, all under one store
    /// version, then tells the listeners once: a fresh instance showing fifty listings
    /// from the catalog is one change, not fifty listings rebuilt.
    pub(super) fn change_each<T>(
        &self,
        items: Vec<(Arc<Service>, T)>,
        change: impl Fn(&mut State, T),
    ) {
        if items.is_empty() {
            return;
        }
        self.version.send_modify(|version| {
            *version += 1;
            for (service, item) in items {
                service.state.send_modify(|state| {
                    change(state, item);
                    state.revision = *version;
                });
            }
        });
    }

    /// Stamps with the next version the membership of `views`: a service was added to or
    /// removed from them. Then tells the store's listeners.
    pub(super) fn membership_changed(&self, views: Members<'_>) {
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

    pub(super) fn membership_revision(&self, agent: &str) -> u64 {
        let membership = lock(&self.membership);
        membership.get(agent).copied().unwrap_or(0)
    }

    pub(super) fn services(&self) -> std::sync::RwLockReadGuard<'_, Vec<Arc<Service>>> {
        read(&self.services)
    }

    /// The service a view (`None`: the store view) names `service_name`.
    pub(super) fn find(&self, agent: Option<&str>, service_name: &str) -> Option<Arc<Service>> {
        let services = self.services();
        let in_view = |s: &&Arc<Service>| agent.is_none() || s.agent.as_deref() == agent;
        let found = services
            .iter()
            .filter(in_view)
            .find(|s| s.view_name(agent) == service_name);
        found.cloned()
    }

    /// Starts a lazy server: a call or a listing needs it now, so connections start too.
    pub(super) fn want(&self, service: &Service) {
        self.started.cancel();
        if service.state.borrow().phase == Phase::Lazy {
            self.change(service, |s| s.phase = Phase::Initializing);
        }
        service.wanted.cancel();
    }

    pub(super) fn waiting(&self) -> std::sync::MutexGuard<'_, HashMap<u64, CancellationToken>> {
        lock(&self.waiting)
    }
}

#[derive(Clone, Copy)]
pub(super) enum Members<'a> {
    /// The views that see the services of one agent (`None`: of the store itself): the
    /// store view, and the agent's own.
    Of(Option<&'a str>),
    /// Every view.
    All,
}

/// Tools as the store keeps them: each schema normalised once, when it is listed, not
/// on every listing.
pub(super) fn normalized(mut tools: Vec<ListedTool>) -> Arc<Vec<ListedTool>> {
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
pub(super) fn unique_global_name(
    services: &[Arc<Service>],
    agent: Option<&str>,
    local: &str,
) -> String {
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
