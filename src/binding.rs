//! The napi layer: converts values and bridges promises, cancellation and callbacks.
//! No MCP logic lives here. Bulky values (inventories, schemas) cross as JSON text, which
//! is markedly faster than building JS objects field by field from Rust.

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::time::Duration;

use napi::bindgen_prelude::*;
use napi::threadsafe_function::{ThreadsafeFunction, ThreadsafeFunctionCallMode};
use napi_derive::napi;
use serde_json::{Map, Value};
use tokio_util::sync::CancellationToken;

mod store;

use crate::config::{self, ConfigInput, McpConfig};
use crate::elicitation::{self, Answer, Elicitor, Request};
use crate::inventory::{self, Source};
use crate::session::{CallOptions, Hooks, Logger, Progress};
use crate::tool_result::ToolOutput;
use crate::transport::groups;

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
    #[napi(constructor)]
    #[allow(clippy::new_without_default, reason = "a JS constructor")]
    pub fn new() -> Self {
        Canceller {
            token: CancellationToken::new(),
        }
    }

    #[napi]
    pub fn cancel(&self) {
        self.token.cancel();
    }
}

#[napi(js_name = "parseMcpConfig")]
pub fn parse_mcp_config(source: ConfigSource) -> Result<String> {
    let map =
        config::read_server_map(&source.into()).map_err(|e| Error::new(Status::InvalidArg, e.0))?;
    to_json(&map)
}

/// Resolves `{ tools, status, failures }` as JSON.
#[napi(js_name = "listMcpTools")]
pub fn list_mcp_tools<'env>(
    env: &'env Env,
    source: ConfigSource,
    canceller: &Canceller,
) -> Result<PromiseRaw<'env, String>> {
    let config = load_config(source)?;
    let cancel = canceller.token.clone();
    env.spawn_future(async move {
        let inventory = inventory::list_inventory(&config, &cancel)
            .await
            .map_err(|_| aborted())?;
        to_json(&inventory)
    })
}

/// `waitFor` as the JS layer wraps it: request JSON in, answer JSON out; never rejects.
type WaitFor = ThreadsafeFunction<String, Promise<String>, String, Status, false, true>;

struct JsElicitor(Arc<WaitFor>);

impl Elicitor for JsElicitor {
    fn ask(&self, request: Request) -> Pin<Box<dyn Future<Output = Option<Answer>> + Send>> {
        let wait_for = self.0.clone();
        Box::pin(async move {
            let request = serde_json::to_string(&request).ok()?;
            let answer = wait_for.call_async_catch(request).await.ok()?.await.ok()?;
            serde_json::from_str(&answer).ok()
        })
    }
}

/// A server's `notifications/message`; `data` is JSON text.
#[napi(object)]
pub struct LogEvent {
    pub server: String,
    pub level: String,
    pub data: String,
}

type OnLog = ThreadsafeFunction<LogEvent, Unknown<'static>, LogEvent, Status, false, true>;

struct JsLogger(OnLog);

impl Logger for JsLogger {
    fn log(&self, server: &str, level: &str, data: Value) {
        let event = LogEvent {
            server: server.to_owned(),
            level: level.to_owned(),
            data: data.to_string(),
        };
        self.0.call(event, ThreadsafeFunctionCallMode::NonBlocking);
    }
}

#[napi(js_name = "loadMcp")]
pub fn load_mcp<'env>(
    env: &'env Env,
    source: ConfigSource,
    canceller: &Canceller,
    wait_for: Option<WaitFor>,
    on_log: Option<OnLog>,
) -> Result<PromiseRaw<'env, McpSourceHandle>> {
    let config = load_config(source)?;
    let cancel = canceller.token.clone();
    let hooks = Hooks {
        elicitor: wait_for.map(|f| Arc::new(JsElicitor(Arc::new(f))) as Arc<dyn Elicitor>),
        logger: on_log.map(|f| Arc::new(JsLogger(f)) as Arc<dyn Logger>),
    };
    env.spawn_future(async move {
        let source = inventory::load_source(&config, &hooks, &cancel)
            .await
            .map_err(|_| aborted())?;
        let summary = summary_json(&source)?;
        Ok(McpSourceHandle {
            source: Arc::new(source),
            summary,
        })
    })
}

/// The open sessions of one `loadMcp` call.
#[napi]
pub struct McpSourceHandle {
    source: Arc<Source>,
    summary: String,
}

/// What `summary()` returns, borrowed from the source: serialising it copies no schema.
#[derive(serde::Serialize)]
struct Summary<'a> {
    tools: Vec<ToolView<'a>>,
    status: &'a Map<String, Value>,
    failures: &'a [String],
    warnings: &'a [String],
}

#[derive(serde::Serialize)]
#[serde(rename_all = "camelCase")]
struct ToolView<'a> {
    name: &'a str,
    description: &'a str,
    input_schema: &'a Map<String, Value>,
    server: &'a str,
}

/// Built on a worker thread, inside the load's future, so the Node thread only copies a
/// string.
fn summary_json(source: &Source) -> Result<String> {
    let tools = source.tools.iter().map(|t| ToolView {
        name: &t.info.name,
        description: &t.info.description,
        input_schema: &t.info.input_schema,
        server: source.sessions[t.server].name(),
    });
    to_json(&Summary {
        tools: tools.collect(),
        status: &source.status,
        failures: &source.failures,
        warnings: &source.warnings,
    })
}

#[napi(object)]
pub struct CallResult {
    pub output: String,
    pub is_error: bool,
    /// The raw `content` array as JSON text, when it holds more than text.
    pub content: Option<String>,
}

impl From<ToolOutput> for CallResult {
    fn from(output: ToolOutput) -> Self {
        CallResult {
            output: output.output,
            is_error: output.is_error,
            content: output.content.map(|c| c.to_string()),
        }
    }
}

/// A tool call as the JS layer hands it over.
pub(crate) struct CallRequest {
    args_json: String,
    timeout: Option<Duration>,
    cancel: CancellationToken,
    on_progress: Option<Box<dyn Fn(Progress) + Send + Sync>>,
}

impl CallRequest {
    pub(crate) fn new(
        args_json: String,
        timeout_ms: Option<f64>,
        canceller: Option<&Canceller>,
        on_progress: Option<OnProgress>,
    ) -> Self {
        let timeout = timeout_ms
            .filter(|ms| *ms > 0.0 && ms.is_finite())
            .map(|ms| Duration::from_secs_f64(ms / 1000.0));
        let on_progress = on_progress.map(|f| {
            Box::new(move |p: Progress| {
                let event = ProgressEvent {
                    progress: p.progress,
                    total: p.total,
                    message: p.message,
                };
                f.call(event, ThreadsafeFunctionCallMode::NonBlocking);
            }) as Box<dyn Fn(Progress) + Send + Sync>
        });
        let cancel = canceller.map(|c| c.token.clone()).unwrap_or_default();
        CallRequest {
            args_json,
            timeout,
            cancel,
            on_progress,
        }
    }

    /// The arguments, or the error result to answer when they are not a JSON object.
    pub(crate) fn arguments(
        &self,
        tool: &str,
    ) -> std::result::Result<Map<String, Value>, ToolOutput> {
        serde_json::from_str(&self.args_json).map_err(|_| {
            ToolOutput::error(format!("arguments for \"{tool}\" must be a JSON object"))
        })
    }

    pub(crate) fn options(&self, default_timeout: Duration) -> CallOptions<'_> {
        CallOptions {
            timeout: self.timeout.unwrap_or(default_timeout),
            cancel: &self.cancel,
            on_progress: self.on_progress.as_deref(),
        }
    }
}

#[napi(object)]
pub struct ProgressEvent {
    pub progress: f64,
    pub total: Option<f64>,
    pub message: Option<String>,
}

pub(crate) type OnProgress =
    ThreadsafeFunction<ProgressEvent, Unknown<'static>, ProgressEvent, Status, false, true>;

#[napi]
impl McpSourceHandle {
    /// `{ tools: [{ name, description, inputSchema, server }], status, failures, warnings }`,
    /// serialised once when the load finished.
    #[napi]
    pub fn summary(&self) -> String {
        self.summary.clone()
    }

    /// Calls tool number `index` of `summary().tools`. Resolves an error result on any
    /// failure; never rejects.
    #[napi]
    pub fn call_tool<'env>(
        &self,
        env: &'env Env,
        index: u32,
        args_json: String,
        timeout_ms: Option<f64>,
        canceller: Option<&Canceller>,
        on_progress: Option<OnProgress>,
    ) -> Result<PromiseRaw<'env, CallResult>> {
        let source = self.source.clone();
        let request = CallRequest::new(args_json, timeout_ms, canceller, on_progress);
        env.spawn_future(async move {
            let tool = source
                .tools
                .get(index as usize)
                .ok_or_else(|| Error::from_reason(format!("no tool number {index}")))?;
            let session = &source.sessions[tool.server];
            let output = match request.arguments(&tool.info.name) {
                Ok(args) => {
                    let options = request.options(session.timeout());
                    session.call_tool(&tool.original, args, options).await
                }
                Err(error) => error,
            };
            Ok(output.into())
        })
    }

    /// Closes every session and kills every server process tree. Idempotent.
    #[napi]
    pub fn close<'env>(&self, env: &'env Env) -> Result<PromiseRaw<'env, ()>> {
        let source = self.source.clone();
        env.spawn_future(async move {
            source.close().await;
            Ok(())
        })
    }
}

/// Kills every server process still alive; the JS layer calls it on process exit.
#[napi(js_name = "killAllServers")]
pub fn kill_all_servers() {
    groups::kill_all();
}

#[napi]
pub fn sanitize(name: String) -> String {
    config::sanitize(&name)
}

#[napi(js_name = "expandEnv")]
pub fn expand_env(value: String) -> String {
    config::expand_env(&value)
}

#[napi(js_name = "elicitationToRequest")]
pub fn elicitation_to_request(params_json: String) -> Result<String> {
    let params: Value =
        serde_json::from_str(&params_json).map_err(|e| Error::from_reason(e.to_string()))?;
    to_json(&elicitation::to_request(&params))
}

#[napi(js_name = "answerToElicitResult")]
pub fn answer_to_elicit_result(answer_json: String) -> Result<String> {
    let answer: Option<Answer> = serde_json::from_str(&answer_json).ok();
    to_json(&elicitation::to_result(answer.as_ref(), &Value::Null))
}
