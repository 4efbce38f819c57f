//! The store as a JS class: `new NativeStore(config, options)` starts it in the background.

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use napi::bindgen_prelude::*;
use napi_derive::napi;
use serde_json::{Map, Value};

use super::bounded::{Bounded, Callback};
use super::call_queue::{CallQueue, WakeFn};
use super::js_call::JsCall;
use super::listing::NativeListing;
use super::oauth::hooks as oauth_hooks;
use super::state::{self, NativeState, SharedStateStatus};
use super::{ConfigSource, call_timeout, host_loop, load_config, to_json};
use crate::config::McpConfig;
use crate::duration;
use crate::elicitation::{self, Elicitor};
use crate::session::{Hooks, trace_context};
use crate::state::Shared;
use crate::store::{ServiceStatus, Store, StoreOptions, ToolCall, default_catalog_dir};

/// Store options in milliseconds; every field is optional.
#[napi(object)]
#[derive(Default)]
pub struct NativeStoreOptions {
    pub wait_local_ms: Option<f64>,
    pub wait_remote_ms: Option<f64>,
    pub max_restarts: Option<u32>,
    pub backoff_ms: Option<f64>,
    pub backoff_max_ms: Option<f64>,
    /// Every server lazy, as if its entry said `"lazy": true`.
    pub lazy: Option<bool>,
    /// `false`: keep no catalog on disk.
    pub catalog: Option<bool>,
    /// The catalog's folder, instead of the platform's cache folder.
    pub catalog_dir: Option<String>,
    /// The fleet's shared state.
    pub state: Option<NativeState>,
    /// Declare elicitation: the servers' questions go to the call's own elicitor (a
    /// gateway's downstream client), and those of calls without one answer `cancel`.
    pub elicitation: Option<bool>,
}

impl StoreOptions {
    /// The options of `js`, on the shared state `shared` (opened from `js.state`).
    fn of(js: NativeStoreOptions, shared: Option<Arc<Shared>>) -> Self {
        let ms = |value: Option<f64>, default: Duration| {
            value.and_then(duration::from_millis).unwrap_or(default)
        };
        let defaults = StoreOptions::default();
        StoreOptions {
            wait_local: ms(js.wait_local_ms, defaults.wait_local),
            wait_remote: ms(js.wait_remote_ms, defaults.wait_remote),
            max_restarts: js.max_restarts.unwrap_or(defaults.max_restarts),
            backoff: ms(js.backoff_ms, defaults.backoff),
            backoff_max: ms(js.backoff_max_ms, defaults.backoff_max),
            lazy: js.lazy.unwrap_or(false),
            share_catalog: js.catalog != Some(false),
            shared,
            catalog: match js.catalog {
                Some(false) => None,
                _ => js
                    .catalog_dir
                    .map(PathBuf::from)
                    .or_else(default_catalog_dir),
            },
        }
    }
}

/// One service's status, as `status()` lists them in the view's order.
#[napi(object)]
pub struct ServiceStatusEntry {
    /// The service's name in the view.
    pub name: String,
    pub state: String,
    pub last_error: Option<String>,
    pub tool_count: u32,
    pub connected_at: Option<String>,
    pub restarts: u32,
    pub client_id: String,
    pub protocol_version: Option<String>,
}

impl ServiceStatusEntry {
    fn new(name: String, status: ServiceStatus) -> Self {
        ServiceStatusEntry {
            name,
            state: status.state.as_str().to_owned(),
            last_error: status.last_error,
            tool_count: u32::try_from(status.tool_count).unwrap_or(u32::MAX),
            connected_at: status.connected_at,
            restarts: status.restarts,
            client_id: status.client_id,
            protocol_version: status.protocol_version,
        }
    }
}

type OnChange = Callback<f64>;

#[napi]
pub struct NativeStore {
    pub(super) store: Arc<Store>,
    /// Where calls' progress and outcomes go: the same batched queue as `loadMcp`'s.
    calls: Arc<CallQueue>,
    _live: super::live::Counted,
}

#[napi]
impl NativeStore {
    #[napi(catch_unwind, constructor)]
    pub fn new(
        env: &Env,
        source: Option<ConfigSource>,
        options: Option<NativeStoreOptions>,
        wake: WakeFn<'_>,
        on_authorize: Option<JsCall>,
        token_store: Option<JsCall>,
        state_store: Option<JsCall>,
    ) -> Result<Self> {
        let config = match source {
            Some(source) => load_config(source)?,
            None => McpConfig {
                servers: Vec::new(),
            },
        };
        let mut options = options.unwrap_or_default();
        let elicitor = (options.elicitation == Some(true))
            .then(|| Arc::new(elicitation::Cancels) as Arc<dyn Elicitor>);
        let shared =
            within_runtime_if_available(|| state::open(options.state.take(), state_store))?;
        let options = StoreOptions::of(options, shared.clone());
        // Supervisors are tokio tasks; the constructor runs on the Node thread.
        let hooks = Hooks {
            oauth: oauth_hooks(on_authorize, token_store, shared.as_ref()),
            shelves: super::state::shelves(shared.as_ref()),
            elicitor,
            ..Hooks::default()
        };
        let store = within_runtime_if_available(|| Store::new(config, hooks, options));
        host_loop::install(env);
        Ok(NativeStore {
            store: Arc::new(store),
            calls: CallQueue::new(wake)?,
            _live: super::live::STORES.count(),
        })
    }

    /// Lets the servers connect: the host calls it a turn after making the store.
    #[napi(catch_unwind)]
    pub fn start(&self) {
        self.store.start();
    }

    /// Changes with every change to any server's state or tools.
    #[napi(catch_unwind)]
    pub fn version(&self) -> f64 {
        self.store.version() as f64
    }

    /// The store version of the latest change the view can see (`agent` null: the store
    /// view); its listing and status stand while it does.
    #[napi(catch_unwind)]
    pub fn revision(&self, agent: Option<String>) -> f64 {
        self.store.revision(agent.as_deref()) as f64
    }

    /// The view's tools as they stand now: see `NativeListing`.
    #[napi(catch_unwind)]
    pub fn list_tools(&self, agent: Option<String>) -> NativeListing {
        NativeListing::from(self.store.list_tools(agent.as_deref()))
    }

    /// The view's tools only an app's view may see: see `NativeListing`.
    #[napi(catch_unwind)]
    pub fn list_app_tools(&self, agent: Option<String>) -> NativeListing {
        NativeListing::from(self.store.list_app_tools(agent.as_deref()))
    }

    /// The view's tools that match `query` best, best first, at most `limit`: the view's
    /// revision first, then their positions in its listing at that revision.
    #[napi(catch_unwind)]
    pub fn search_tools(&self, agent: Option<String>, query: String, limit: u32) -> Vec<f64> {
        let found = self
            .store
            .search_tools(agent.as_deref(), &query, limit as usize);
        let tools = found.tools.into_iter().map(|i| i as f64);
        std::iter::once(found.revision as f64)
            .chain(tools)
            .collect()
    }

    /// The bytes the view's search index holds (for the bench).
    #[napi(catch_unwind)]
    pub fn search_index_bytes(&self, agent: Option<String>) -> f64 {
        self.store.search_index_bytes(agent.as_deref()) as f64
    }

    /// Every service of the view, in its order.
    #[napi(catch_unwind)]
    pub fn status(&self, agent: Option<String>) -> Vec<ServiceStatusEntry> {
        let status = self.store.status(agent.as_deref()).into_iter();
        status
            .map(|(name, status)| ServiceStatusEntry::new(name, status))
            .collect()
    }

    #[napi(catch_unwind)]
    pub fn any_initializing(&self, agent: Option<String>) -> bool {
        self.store.any_initializing(agent.as_deref())
    }

    #[napi(catch_unwind)]
    pub fn wait_initializing<'env>(
        &self,
        env: &'env Env,
        agent: Option<String>,
    ) -> Result<PromiseRaw<'env, ()>> {
        let store = self.store.clone();
        env.spawn_future(async move {
            store.wait_initializing(agent.as_deref()).await;
            Ok(())
        })
    }

    /// Adds (or replaces, by name) servers of the store (`agent` null) or of an agent.
    #[napi(catch_unwind)]
    pub fn add_servers(&self, agent: Option<String>, source: ConfigSource) -> Result<()> {
        let (config, entries) = McpConfig::load_with_entries(&source.into())
            .map_err(|e| Error::new(Status::InvalidArg, e.0))?;
        within_runtime_if_available(|| self.store.add_servers(agent.as_deref(), config, entries));
        Ok(())
    }

    #[napi(catch_unwind)]
    pub fn remove_server(&self, agent: Option<String>, name: String) -> bool {
        self.store.remove_server(agent.as_deref(), &name)
    }

    /// Replaces one server's entry (given as JSON) and reconnects it.
    #[napi(catch_unwind)]
    pub fn update_server(
        &self,
        agent: Option<String>,
        name: String,
        entry_json: String,
    ) -> Result<()> {
        let entry: Value =
            serde_json::from_str(&entry_json).map_err(|e| Error::from_reason(e.to_string()))?;
        let entries = vec![(name.clone(), entry.clone())];
        let config = McpConfig::from_server_map(Map::from_iter([(name, entry)]));
        within_runtime_if_available(|| self.store.add_servers(agent.as_deref(), config, entries));
        Ok(())
    }

    /// Starts `tool` (the server's own name) of a service as the view names it and returns
    /// the call's id; its progress and outcome come through the call queue. Never throws for
    /// a failed call.
    #[napi(catch_unwind)]
    #[allow(clippy::too_many_arguments, reason = "one JS call, flat arguments")]
    pub fn call_tool(
        &self,
        env: &Env,
        agent: Option<String>,
        service_name: String,
        tool: String,
        args_json: String,
        timeout_ms: Option<f64>,
        wants_progress: bool,
        max_total_ms: Option<f64>,
        task: bool,
        trace_json: Option<String>,
    ) -> Result<f64> {
        let call = ToolCall {
            service: &service_name,
            tool: &tool,
            args_json: &args_json,
            timeout: call_timeout(timeout_ms),
            max_total: call_timeout(max_total_ms),
            wants_progress,
            task,
            trace: trace_json.as_deref().and_then(trace_context::members),
            elicitor: None,
        };
        self.calls.started(env)?;
        let id = self
            .store
            .start_call(agent.as_deref(), call, self.calls.clone());
        Ok(id.get() as f64)
    }

    /// Aborts call `id` of a service as the view names it, if it is still running.
    #[napi(catch_unwind)]
    pub fn abort_call(&self, agent: Option<String>, service_name: String, id: f64) {
        self.store
            .abort_call(agent.as_deref(), &service_name, id as u64);
    }

    /// Calls `listener(version)` after every change, until the store is freed. Changes
    /// made while JS has not yet run the last call come as one call, with the latest version.
    #[napi(catch_unwind)]
    pub fn on_change(&self, listener: OnChange) {
        let mut changes = self.store.subscribe();
        let listener = Bounded::new(listener, 1);
        within_runtime_if_available(|| {
            tokio::spawn(async move {
                while changes.changed().await.is_ok() {
                    let version = *changes.borrow_and_update() as f64;
                    listener.send(version, 1).await;
                }
            })
        });
    }

    /// Whether the shared state answers (see `SharedStateStatus`).
    #[napi(catch_unwind)]
    pub fn shared_state(&self) -> SharedStateStatus {
        SharedStateStatus::of(self.store.shared())
    }

    /// The live instances of the fleet, as JSON text.
    #[napi(catch_unwind)]
    pub fn instances<'env>(&self, env: &'env Env) -> Result<PromiseRaw<'env, String>> {
        let store = self.store.clone();
        env.spawn_future(async move { to_json(&store.instances().await) })
    }

    /// Stops every server and waits until every process tree has ended.
    #[napi(catch_unwind)]
    pub fn close<'env>(&self, env: &'env Env) -> Result<PromiseRaw<'env, ()>> {
        // Here, not in the future: a call the host starts right after close() must fail.
        self.store.end_calls();
        let store = self.store.clone();
        env.spawn_future(async move {
            store.close().await;
            Ok(())
        })
    }
}
