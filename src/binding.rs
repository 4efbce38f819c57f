//! The napi layer: converts values and bridges promises, cancellation and callbacks.
//! No MCP logic lives here. Bulky values (inventories, schemas) cross as JSON text, which
//! is markedly faster than building JS objects field by field from Rust.

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::time::Duration;

mod bounded;
mod call_queue;
mod failure;
mod host_loop;
mod js_call;
mod listing;
mod live;
mod oauth;
mod provider_schema;
mod search;
mod serve;
mod skills;
mod state;
mod state_store;
mod subscription;
mod summary;
mod wording;

use napi::bindgen_prelude::within_runtime_if_available;
use napi::bindgen_prelude::*;
use napi::threadsafe_function::ThreadsafeFunction;
use napi_derive::napi;
use serde_json::{Map, Value};
use tokio_util::sync::CancellationToken;

mod offers;
mod store;

use self::call_queue::{CallQueue, WakeFn};
use self::listing::{InventoryListing, NativeListing, SourceListing};
use crate::config::{self, ConfigInput, McpConfig};
use crate::duration;
use crate::elicitation::{self, Answer, Elicitor, Person, Request};
use crate::inventory::{self, Source, SourceTool};
use crate::lock::lock;
use crate::session::{CallSpec, Hooks, Listings, Logger, trace_context};
use crate::store::SharedCatalog;
use crate::transport::local;

/// A config as the JS layer hands it over: a file path, or an object serialised to JSON.
#[napi(object)]
pub struct ConfigSource {
    pub path: Option<String>,
    pub json: Option<String>,
}

impl From<ConfigSource> for ConfigInput {
    fn from(source: ConfigSource) -> Self {
        match source.path {
            Some(path) => ConfigInput::Path(path),
            None => ConfigInput::Json(source.json.unwrap_or_else(|| "null".into())),
        }
    }
}

pub(crate) fn load_config(source: ConfigSource) -> Result<McpConfig> {
    McpConfig::load(&source.into()).map_err(|e| Error::new(Status::InvalidArg, e.0))
}

pub(crate) fn to_json(value: &impl serde::Serialize) -> Result<String> {
    serde_json::to_string(value).map_err(|e| Error::from_reason(e.to_string()))
}

fn aborted() -> Error {
    Error::new(Status::Cancelled, "aborted")
}

/// A cancellation token the JS layer fires from an `AbortSignal`'s `abort` event.
#[napi]
pub struct Canceller {
    pub(crate) token: CancellationToken,
}

#[napi]
impl Canceller {
    #[napi(catch_unwind, constructor)]
    #[allow(clippy::new_without_default, reason = "a JS constructor")]
    pub fn new() -> Self {
        Canceller {
            token: CancellationToken::new(),
        }
    }

    #[napi(catch_unwind)]
    pub fn cancel(&self) {
        self.token.cancel();
    }
}

#[napi(catch_unwind, js_name = "parseMcpConfig")]
pub fn parse_mcp_config(source: ConfigSource) -> Result<String> {
    let map =
        config::read_server_map(&source.into()).map_err(|e| Error::new(Status::InvalidArg, e.0))?;
    to_json(&map)
}

#[napi(catch_unwind, js_name = "listMcpTools")]
pub fn list_mcp_tools<'env>(
    env: &'env Env,
    source: ConfigSource,
    canceller: &Canceller,
    on_authorize: Option<js_call::JsCall>,
    token_store: Option<js_call::JsCall>,
    state: Option<state::NativeState>,
    state_store: Option<js_call::JsCall>,
) -> Result<PromiseRaw<'env, McpInventoryHandle>> {
    let config = load_config(source)?;
    let cancel = canceller.token.clone();
    let shared = within_runtime_if_available(|| state::open(state, state_store))?;
    let hooks = Hooks {
        oauth: oauth::hooks(on_authorize, token_store, shared.as_ref()),
        ..Hooks::default()
    };
    env.spawn_future(async move {
        let inventory = inventory::list_inventory_with(&config, &hooks, &cancel)
            .await
            .map_err(|_| aborted())?;
        McpInventoryHandle::new(inventory)
    })
}

/// What `listMcpTools` found; every server is closed by now.
#[napi]
pub struct McpInventoryHandle {
    summary: std::sync::Mutex<String>,
    listing: std::sync::Mutex<Option<NativeListing>>,
}

impl McpInventoryHandle {
    fn new(inventory: inventory::Inventory) -> Result<Self> {
        #[derive(serde::Serialize)]
        struct Summary<'a> {
            status: &'a Map<String, Value>,
            servers: &'a Map<String, Value>,
            failures: &'a [String],
        }
        let summary = to_json(&Summary {
            status: &inventory.status,
            servers: &inventory.servers,
            failures: &inventory.failures,
        })?;
        Ok(McpInventoryHandle {
            summary: summary.into(),
            listing: Some(NativeListing::written(InventoryListing::new(
                inventory.tools,
            )))
            .into(),
        })
    }
}

#[napi]
impl McpInventoryHandle {
    /// `{ status, servers, failures }`.
    #[napi(catch_unwind)]
    pub fn summary(&self) -> String {
        std::mem::take(&mut *lock(&self.summary))
    }

    /// Each server's tools, a group each (see `NativeListing`); once.
    #[napi(catch_unwind)]
    pub fn listing(&self) -> Result<NativeListing> {
        take_listing(&self.listing)
    }
}

/// A handle's listing, which JS takes once.
fn take_listing(listing: &std::sync::Mutex<Option<NativeListing>>) -> Result<NativeListing> {
    let taken = lock(listing).take();
    taken.ok_or_else(|| Error::from_reason("the listing was taken"))
}

/// `waitFor` as the JS layer wraps it: request JSON in, answer JSON out; never rejects.
type WaitFor = ThreadsafeFunction<String, Promise<String>, String, Status, false, true>;

struct JsElicitor(Arc<WaitFor>);

impl Person for JsElicitor {
    fn ask(&self, request: Request) -> Pin<Box<dyn Future<Output = Option<Answer>> + Send>> {
        let wait_for = self.0.clone();
        Box::pin(async move {
            let request = serde_json::to_string(&request).ok()?;
            let answer = wait_for.call_async_catch(request).await.ok()?.await.ok()?;
            serde_json::from_str(&answer).ok()
        })
    }
}

#[napi(catch_unwind, js_name = "loadMcp")]
#[allow(
    clippy::too_many_arguments,
    reason = "each is one argument of the JS call; napi has no cheaper way to pass callbacks"
)]
pub fn load_mcp<'env>(
    env: &'env Env,
    source: ConfigSource,
    canceller: &Canceller,
    wait_for: Option<WaitFor>,
    wake: WakeFn<'env>,
    on_authorize: Option<js_call::JsCall>,
    token_store: Option<js_call::JsCall>,
    state: Option<state::NativeState>,
    state_store: Option<js_call::JsCall>,
) -> Result<PromiseRaw<'env, McpSourceHandle>> {
    let config = load_config(source)?;
    let shared = within_runtime_if_available(|| state::open(state, state_store))?;
    host_loop::install(env);
    let cancel = canceller.token.clone();
    let calls = CallQueue::new(wake)?;
    let hooks = Hooks {
        elicitor: wait_for.map(|f| Arc::new(JsElicitor(Arc::new(f))) as Arc<dyn Elicitor>),
        logger: Some(calls.clone() as Arc<dyn Logger>),
        oauth: oauth::hooks(on_authorize, token_store, shared.as_ref()),
        listings: shared.clone().map(|shared| {
            let catalog = within_runtime_if_available(|| SharedCatalog::new(shared));
            Arc::new(catalog) as Arc<dyn Listings>
        }),
        shelves: state::shelves(shared.as_ref()),
    };
    env.spawn_future(async move {
        let source = inventory::load_source(&config, &hooks, &cancel)
            .await
            .map_err(|_| aborted())?;
        let summary = summary::summary_json(&source)?;
        let source = Arc::new(source);
        let listing = NativeListing::written(SourceListing::new(source.clone(), &config));
        Ok(McpSourceHandle {
            listing: Some(listing).into(),
            source,
            summary: summary.into(),
            calls,
            _live: live::SOURCES.count(),
        })
    })
}

/// The open sessions of one `loadMcp` call.
#[napi]
pub struct McpSourceHandle {
    source: Arc<Source>,
    listing: std::sync::Mutex<Option<NativeListing>>,
    summary: std::sync::Mutex<String>,
    calls: Arc<CallQueue>,
    _live: live::Counted,
}

/// A call's own timeout, when it gives a usable one.
fn call_timeout(ms: Option<f64>) -> Option<Duration> {
    ms.and_then(duration::from_millis)
        .filter(|timeout| !timeout.is_zero())
}

#[napi]
impl McpSourceHandle {
    /// `{ status, failures, warnings }`, serialised once when the load finished.
    #[napi(catch_unwind)]
    pub fn summary(&self) -> String {
        std::mem::take(&mut *lock(&self.summary))
    }

    /// The source's tools (see `NativeListing`), in the order `callTool` numbers them; once.
    #[napi(catch_unwind)]
    pub fn listing(&self) -> Result<NativeListing> {
        take_listing(&self.listing)
    }

    /// Starts tool number `index` of `listing()` and returns the call's id; its
    /// progress and outcome come through the call queue. Never throws for a failed call.
    #[napi(catch_unwind)]
    #[allow(clippy::too_many_arguments, reason = "one JS call, flat arguments")]
    pub fn call_tool(
        &self,
        env: &Env,
        index: u32,
        args_json: String,
        timeout_ms: Option<f64>,
        wants_progress: bool,
        max_total_ms: Option<f64>,
        task: bool,
        trace_json: Option<String>,
    ) -> Result<f64> {
        let tool = self.tool(index)?;
        let session = &self.source.sessions[tool.server];
        let spec = CallSpec {
            timeout: call_timeout(timeout_ms).unwrap_or(session.timeout()),
            max_total: call_timeout(max_total_ms).or(session.max_total()),
            wants_progress,
            task,
            trace: trace_json.as_deref().and_then(trace_context::members),
            elicitor: None,
        };
        self.calls.started(env)?;
        let id = session.start_call(&tool.listed.name, &args_json, spec, self.calls.clone());
        Ok(id as f64)
    }

    fn tool(&self, index: u32) -> Result<&SourceTool> {
        self.source
            .tools
            .get(index as usize)
            .ok_or_else(|| Error::from_reason(format!("no tool number {index}")))
    }

    /// Aborts call `id` of tool number `index`, if it is still running.
    #[napi(catch_unwind)]
    pub fn abort_call(&self, index: u32, id: f64) {
        if let Some(tool) = self.source.tools.get(index as usize) {
            self.source.sessions[tool.server].abort_call(id as u64);
        }
    }

    /// Closes every session and kills every server process tree. Idempotent.
    #[napi(catch_unwind)]
    pub fn close<'env>(&self, env: &'env Env) -> Result<PromiseRaw<'env, ()>> {
        // Here, not in the future: a call the host starts right after close() must fail.
        self.source.end_calls();
        let source = self.source.clone();
        env.spawn_future(async move {
            source.close().await;
            Ok(())
        })
    }
}

/// Kills every server process still alive; the JS layer calls it on process exit.
#[napi(catch_unwind, js_name = "killAllServers")]
pub fn kill_all_servers() {
    local::kill_all();
}

#[napi(catch_unwind)]
pub fn sanitize(name: String) -> String {
    config::sanitize(&name)
}

#[napi(catch_unwind, js_name = "expandEnv")]
pub fn expand_env(value: String) -> String {
    config::expand_env(&value)
}

#[napi(catch_unwind, js_name = "elicitationToRequest")]
pub fn elicitation_to_request(params_json: String) -> Result<String> {
    let params: Value =
        serde_json::from_str(&params_json).map_err(|e| Error::from_reason(e.to_string()))?;
    to_json(&elicitation::to_request(&params))
}

#[napi(catch_unwind, js_name = "answerToElicitResult")]
pub fn answer_to_elicit_result(answer_json: String) -> Result<String> {
    let answer: Option<Answer> = serde_json::from_str(&answer_json).ok();
    to_json(&elicitation::to_result(answer.as_ref(), &Value::Null))
}
