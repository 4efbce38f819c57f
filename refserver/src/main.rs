//! `toolnexus-refserver`: a small, fast MCP server on stdio or streamable HTTP, for
//! benchmarks and tests. It speaks both eras: the 2025 `initialize` handshake, and the
//! 2026-07-28 revision (`server/discover`, requests carrying their version in `_meta`,
//! results carrying `resultType`), which rmcp's server side answers on either transport.
//!
//! Tools: `echo` (returns `text`), `text` (returns `bytes` bytes of text), `sleep` (waits
//! `ms` milliseconds), `fail` (an error result), then synthetic tools with realistic
//! schemas up to the configured total, listed over pages of the configured size.
//!
//! ```text
//! toolnexus-refserver [--tools N] [--page-size N] [--http [--port N]] [--tasks]
//!   --tools N      tools listed in total, the four above included (default 4)
//!   --tasks        the tasks extension, on three more tools (see `tasks`);
//!                  --task-log FILE records the cancelled ones
//!   --page-size N  tools per tools/list page (default 100)
//!   --http         serve streamable HTTP on 127.0.0.1 instead of stdio; prints the
//!                  endpoint's URL on stdout, serves until stdin closes
//!   --port N       the HTTP port (default 0: an ephemeral one)
//! env: TOOLNEXUS_REFSERVER_TOOLS, TOOLNEXUS_REFSERVER_PAGE_SIZE (flags win)
//! ```
//!
//! It runs on a single-threaded runtime (a server per process, many processes at once in
//! the benchmarks) and drives stdin/stdout without blocking whether the client made them
//! pipes (tokio, Rust clients) or socket pairs (Node's `child_process`).

mod catalog;
mod http;
mod stdio;
mod tasks;

use std::process::ExitCode;
use std::sync::Arc;
use std::time::Duration;

use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, CancelTaskParams, ContentBlock,
    GetTaskParams, GetTaskResult, Implementation, ListToolsResult, PaginatedRequestParams,
    ServerCapabilities, ServerConfig, Tool, UpdateTaskParams,
};
use rmcp::service::RequestContext;
use rmcp::transport::async_rw::AsyncRwTransport;
use rmcp::{ErrorData, RoleServer, ServerHandler, ServiceExt};
use serde_json::{Map, Value};

/// The largest `text` result served, so that a typo cannot exhaust memory.
const MAX_TEXT_BYTES: u64 = 1 << 30;
/// The longest `sleep`, one hour.
const MAX_SLEEP_MS: u64 = 3_600_000;

struct Options {
    tools: usize,
    page_size: usize,
    /// `Some(port)`: serve HTTP on that port of 127.0.0.1.
    http: Option<u16>,
    tasks: bool,
    task_log: Option<String>,
}

fn usage() -> &'static str {
    "usage: toolnexus-refserver [--tools N] [--page-size N] [--http [--port N]] [--tasks [--task-log FILE]]\n\
     env: TOOLNEXUS_REFSERVER_TOOLS, TOOLNEXUS_REFSERVER_PAGE_SIZE\n"
}

fn parse_count(what: &str, text: &str) -> Result<usize, String> {
    text.trim()
        .parse::<usize>()
        .map_err(|_| format!("{what} must be a non-negative integer, got \"{text}\""))
}

fn options() -> Result<Options, String> {
    let mut options = Options {
        tools: catalog::CORE_TOOLS,
        page_size: 100,
        http: None,
        tasks: false,
        task_log: None,
    };
    let mut port = None;
    if let Ok(v) = std::env::var("TOOLNEXUS_REFSERVER_TOOLS") {
        options.tools = parse_count("TOOLNEXUS_REFSERVER_TOOLS", &v)?;
    }
    if let Ok(v) = std::env::var("TOOLNEXUS_REFSERVER_PAGE_SIZE") {
        options.page_size = parse_count("TOOLNEXUS_REFSERVER_PAGE_SIZE", &v)?;
    }
    let mut args = std::env::args().skip(1);
    while let Some(arg) = args.next() {
        let (flag, inline) = match arg.split_once('=') {
            Some((flag, value)) => (flag.to_owned(), Some(value.to_owned())),
            None => (arg.clone(), None),
        };
        let mut value = || {
            inline
                .clone()
                .or_else(|| args.next())
                .ok_or_else(|| format!("{flag} needs a value"))
        };
        match flag.as_str() {
            "--tools" => options.tools = parse_count("--tools", &value()?)?,
            "--page-size" => options.page_size = parse_count("--page-size", &value()?)?,
            "--http" => options.http = Some(0),
            "--tasks" => options.tasks = true,
            "--task-log" => options.task_log = Some(value()?),
            "--port" => {
                let text = value()?;
                let parsed = text.trim().parse::<u16>();
                port =
                    Some(parsed.map_err(|_| format!("--port must be 0 to 65535, got \"{text}\""))?);
            }
            "-h" | "--help" => {
                eprint!("{}", usage());
                std::process::exit(0);
            }
            _ => return Err(format!("unknown argument \"{arg}\"")),
        }
    }
    match (port, options.http) {
        (Some(port), Some(_)) => options.http = Some(port),
        (Some(_), None) => return Err("--port needs --http".into()),
        (None, _) => {}
    }
    if options.page_size == 0 {
        return Err("the page size must be at least 1".into());
    }
    Ok(options)
}

#[derive(Clone)]
struct RefServer {
    tools: Arc<[Tool]>,
    page_size: usize,
    /// Offered with `--tasks`.
    tasks: tasks::Tasks,
}

impl RefServer {
    fn page(&self, cursor: Option<&str>) -> Result<ListToolsResult, ErrorData> {
        let start = match cursor {
            None => 0,
            Some(c) => c
                .parse::<usize>()
                .ok()
                .filter(|&start| start < self.tools.len())
                .ok_or_else(|| {
                    ErrorData::invalid_params(format!("unknown cursor \"{c}\""), None)
                })?,
        };
        let end = (start + self.page_size).min(self.tools.len());
        let mut page = ListToolsResult::with_all_items(self.tools[start..end].to_vec());
        if end < self.tools.len() {
            page.next_cursor = Some(end.to_string());
        }
        Ok(page)
    }
}

fn text_result(text: String) -> CallToolResult {
    CallToolResult::success(vec![ContentBlock::text(text)])
}

fn count_arg(args: &Map<String, Value>, name: &str, max: u64) -> Result<u64, ErrorData> {
    match args.get(name).and_then(Value::as_u64) {
        Some(n) if n <= max => Ok(n),
        _ => Err(ErrorData::invalid_params(
            format!("\"{name}\" must be an integer from 0 to {max}"),
            None,
        )),
    }
}

impl ServerHandler for RefServer {
    fn get_info(&self) -> ServerConfig {
        let capabilities = match self.tasks.offered() {
            true => ServerCapabilities::builder()
                .enable_tools()
                .enable_tasks()
                .build(),
            false => ServerCapabilities::builder().enable_tools().build(),
        };
        ServerConfig::new(capabilities).with_server_info(Implementation::new(
            "toolnexus-refserver",
            env!("CARGO_PKG_VERSION"),
        ))
    }

    async fn list_tools(
        &self,
        request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        self.page(request.as_ref().and_then(|r| r.cursor.as_deref()))
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        let args = request.arguments.unwrap_or_default();
        let declared = context
            .client_capabilities()
            .is_some_and(|caps| caps.supports_tasks());
        if let Some(response) = self.tasks.call(&request.name, &args, declared) {
            return Ok(response);
        }
        let result = match request.name.as_ref() {
            "echo" => text_result(match args.get("text") {
                Some(Value::String(text)) => text.clone(),
                _ => Value::Object(args).to_string(),
            }),
            "text" => {
                let bytes = count_arg(&args, "bytes", MAX_TEXT_BYTES)?;
                text_result(catalog::filler_text(bytes as usize))
            }
            "sleep" => {
                let ms = count_arg(&args, "ms", MAX_SLEEP_MS)?;
                tokio::time::sleep(Duration::from_millis(ms)).await;
                text_result(format!("slept {ms} ms"))
            }
            "fail" => {
                let message = match args.get("message") {
                    Some(Value::String(m)) => m.clone(),
                    _ => "the fail tool failed, as asked".to_owned(),
                };
                CallToolResult::error(vec![ContentBlock::text(message)])
            }
            name if catalog::is_synthetic(&self.tools, name) => {
                text_result(format!("{name} ok: {}", Value::Object(args)))
            }
            name => {
                return Err(ErrorData::invalid_params(
                    format!("unknown tool \"{name}\""),
                    None,
                ));
            }
        };
        Ok(result.into())
    }

    async fn get_task(
        &self,
        request: GetTaskParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<GetTaskResult, ErrorData> {
        self.tasks.get(request)
    }

    async fn update_task(
        &self,
        request: UpdateTaskParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<(), ErrorData> {
        self.tasks.update(request)
    }

    async fn cancel_task(
        &self,
        request: CancelTaskParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<(), ErrorData> {
        self.tasks.cancel(request)
    }
}

fn main() -> ExitCode {
    let options = match options() {
        Ok(options) => options,
        Err(message) => {
            eprintln!("toolnexus-refserver: {message}\n{}", usage());
            return ExitCode::from(2);
        }
    };
    let runtime = match tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
    {
        Ok(runtime) => runtime,
        Err(e) => {
            eprintln!("toolnexus-refserver: cannot start the runtime: {e}");
            return ExitCode::FAILURE;
        }
    };
    runtime.block_on(async {
        let mut tools = catalog::tools(options.tools);
        if options.tasks {
            tools.extend(tasks::tools());
        }
        let server = RefServer {
            tools: tools.into(),
            page_size: options.page_size,
            tasks: tasks::Tasks::new(options.tasks, options.task_log),
        };
        if let Some(port) = options.http {
            return match http::serve(server, port).await {
                Ok(()) => ExitCode::SUCCESS,
                Err(e) => {
                    eprintln!("toolnexus-refserver: HTTP: {e}");
                    ExitCode::FAILURE
                }
            };
        }
        let (input, output) = stdio::streams();
        let transport = AsyncRwTransport::new_server(input, output);
        match server.serve(transport).await {
            // Runs until the client closes stdin.
            Ok(service) => {
                let _ = service.waiting().await;
                ExitCode::SUCCESS
            }
            Err(e) => {
                eprintln!("toolnexus-refserver: initialize failed: {e}");
                ExitCode::FAILURE
            }
        }
    })
}
