//! The shape of an mcp.json as types, from which `schemars` writes the JSON Schema that
//! ships as `mcp.schema.json` (editors use it for completion and validation).
//!
//! These types describe the document; `validate_entry` reads it. The schema accepts what
//! the reader accepts and no more: every optional key may be `null` (read as absent),
//! a disabled entry is accepted whatever else it holds (disabling wins), a key the
//! reader ignores is allowed, and a wrapper key hides the ones after it. The
//! `schema` test holds both to this on the config fixtures, and fails when
//! `mcp.schema.json` drifts from these types. What no schema can see stays the reader's:
//! a `${VAR}` whose variable is unset, an `envFile` that cannot be read.

use std::collections::BTreeMap;

use schemars::generate::SchemaSettings;
use schemars::transform::RecursiveTransform;
use schemars::{JsonSchema, Schema, SchemaGenerator, json_schema};
use serde_json::Value;

mod gateway;
mod oauth;
use self::gateway::GatewaySections;
use self::oauth::OAuth;

/// The schema as `mcp.schema.json` holds it: pretty JSON and a final newline.
pub fn mcp_json_schema() -> String {
    // `#[serde(default)]` is how a field with a hand-written schema stays optional; the
    // `"default": null` it also writes would tell editors a wrong default.
    let drop_null_defaults = RecursiveTransform(|schema: &mut Schema| {
        if schema.get("default").is_some_and(Value::is_null) {
            schema.remove("default");
        }
    });
    let generator = SchemaSettings::default()
        .with_transform(drop_null_defaults)
        .into_generator();
    let schema = generator.into_root_schema_for::<McpJson>();
    let mut text = serde_json::to_string_pretty(&schema).unwrap_or_default();
    text.push('\n');
    text
}

/// An MCP client config (toolnexus, Claude desktop, Claude Code, Cursor, VS Code, opencode):
/// servers by name, either bare or under `mcpServers`, `servers` or `mcp` (the first of
/// those present is used).
#[derive(JsonSchema)]
#[schemars(title = "mcp.json")]
#[serde(untagged)]
#[allow(
    clippy::large_enum_variant,
    reason = "never built: it only describes the document"
)]
pub enum McpJson {
    McpServers(UnderMcpServers),
    Servers(UnderServers),
    Mcp(UnderMcp),
    Bare(Bare),
}

#[derive(JsonSchema)]
pub struct UnderMcpServers {
    #[serde(rename = "mcpServers")]
    pub mcp_servers: Servers,
    #[serde(flatten)]
    pub gateway: GatewaySections,
}

#[derive(JsonSchema)]
pub struct UnderServers {
    #[serde(rename = "mcpServers")]
    #[serde(default)]
    #[schemars(schema_with = "absent")]
    pub mcp_servers: (),
    pub servers: Servers,
    #[serde(flatten)]
    pub gateway: GatewaySections,
}

#[derive(JsonSchema)]
pub struct UnderMcp {
    #[serde(rename = "mcpServers")]
    #[serde(default)]
    #[schemars(schema_with = "absent")]
    pub mcp_servers: (),
    #[serde(default)]
    #[schemars(schema_with = "absent")]
    pub servers: (),
    pub mcp: Servers,
    #[serde(flatten)]
    pub gateway: GatewaySections,
}

/// Servers at the top level, beside the sections other tools keep there.
#[derive(JsonSchema)]
pub struct Bare {
    /// The schema this file follows, for editors: `./node_modules/toolnexus/mcp.schema.json`.
    #[serde(rename = "$schema")]
    pub schema: Option<Value>,
    #[serde(rename = "mcpServers")]
    #[serde(default)]
    #[schemars(schema_with = "absent")]
    pub mcp_servers: (),
    #[serde(default)]
    #[schemars(schema_with = "absent")]
    pub servers: (),
    #[serde(default)]
    #[schemars(schema_with = "absent")]
    pub mcp: (),
    /// Not a server: another tool's section, ignored.
    pub builtins: Option<Value>,
    /// Not a server: another tool's section, ignored.
    pub agents: Option<Value>,
    /// Not a server: another tool's section, ignored.
    pub a2a: Option<Value>,
    /// Not a server: another tool's section, ignored.
    #[serde(rename = "mcpServer")]
    pub mcp_server: Option<Value>,
    /// Not a server: `toolnexus serve` reads it in a wrapped config only.
    pub serve: Option<Value>,
    #[serde(flatten)]
    pub servers_by_name: Servers,
}

/// Server name to entry.
pub type Servers = BTreeMap<String, ServerEntry>;

/// One server: a local process over stdio, a remote one over HTTP, or a disabled entry.
#[derive(JsonSchema)]
#[serde(untagged)]
pub enum ServerEntry {
    Local(LocalEntry),
    LocalClaudeForm(LocalClaudeEntry),
    Remote(RemoteEntry),
    Disabled(DisabledEntry),
}

/// Keys every entry may have.
#[derive(JsonSchema)]
pub struct Common {
    /// `false` skips the server: nothing is started. Default `true`.
    pub enabled: Option<bool>,
    /// `true` skips the server, like `"enabled": false`. Default `false`.
    pub disabled: Option<bool>,
    /// Milliseconds for each phase (start, initialize, each tools/list page) and each call.
    /// Default 30000.
    #[serde(default)]
    #[schemars(schema_with = "positive_number")]
    pub timeout: Option<f64>,
    /// Milliseconds a call may take in all, however often progress restarts its `timeout`.
    /// Default: none.
    #[serde(default, rename = "maxTotalTimeout")]
    #[schemars(schema_with = "positive_number")]
    pub max_total_timeout: Option<f64>,
    /// Characters of one result the adapters (`toolnexus/ai`, `/openai`, `/anthropic`) hand
    /// a model; more is cut, with a marker saying how much. Default 100000.
    #[serde(default, rename = "maxOutputChars")]
    #[schemars(schema_with = "positive_integer")]
    pub max_output_chars: Option<u64>,
    /// Which tools `loadMcp` exposes, by the server's names: any `true` keeps only those,
    /// only `false` hides those.
    pub tools: Option<BTreeMap<String, bool>>,
    /// Which revision of MCP to speak: `"auto"` (the default) tries 2026-07-28 and falls
    /// back to 2025-11-25 when the server is older; a version pins that one.
    pub protocol: Option<Protocol>,
    /// In a store, start the server only when a call or a listing needs it; meanwhile
    /// its tools come from the catalog of its last listing. Default `false`.
    pub lazy: Option<bool>,
    /// The adapters mark the server's tools `defer_loading`, for the provider's own tool
    /// search to load on demand, unless their `defer` option says otherwise. Default `false`.
    #[serde(rename = "deferLoading")]
    pub defer_loading: Option<bool>,
    /// Tools of a `deferLoading` server, by the server's names, that are never deferred.
    #[serde(rename = "alwaysLoad")]
    pub always_load: Option<Vec<String>>,
}

#[derive(JsonSchema)]
pub enum Protocol {
    #[serde(rename = "auto")]
    Auto,
    #[serde(rename = "2026-07-28")]
    Modern,
    #[serde(rename = "2025-11-25")]
    Legacy,
}

/// Keys of a local entry besides its command.
#[derive(JsonSchema)]
#[schemars(extend("anyOf" = [
    { "required": ["type"], "properties": { "type": { "enum": ["local", "stdio"] } } },
    { "properties": { "url": false } }
]))]
pub struct LocalCommon {
    /// A local server. Without `type`, an entry with `url` is remote and one with
    /// `command` is local.
    #[serde(rename = "type")]
    pub kind: Option<LocalType>,
    /// Variables set for the server; `${VAR}` and `${VAR:-default}` expand.
    pub env: Option<BTreeMap<String, String>>,
    /// Alias of `env`; wins over it.
    pub environment: Option<BTreeMap<String, String>>,
    /// A dotenv file of `KEY=VALUE` lines, relative to this config file; `env` wins over it.
    #[serde(rename = "envFile")]
    pub env_file: Option<String>,
    /// `false`: the server gets only PATH, HOME, USER, LOGNAME, SHELL, TERM, LANG and
    /// LC_ALL of the host's environment, plus its own `env`. Default `true`: all of it.
    #[serde(rename = "inheritEnv")]
    pub inherit_env: Option<bool>,
    /// The server's working directory; `${VAR}` expands.
    pub cwd: Option<String>,
    #[serde(flatten)]
    pub common: Common,
}

#[derive(JsonSchema)]
pub enum LocalType {
    #[serde(rename = "local")]
    Local,
    #[serde(rename = "stdio")]
    Stdio,
}

/// A local server: `command` is the program, then its arguments (no shell involved).
#[derive(JsonSchema)]
pub struct LocalEntry {
    /// The program, then its arguments; `${VAR}` and `${VAR:-default}` expand.
    #[schemars(schema_with = "command_array")]
    pub command: Vec<String>,
    #[serde(default)]
    #[schemars(schema_with = "absent")]
    pub args: (),
    #[serde(flatten)]
    pub local: LocalCommon,
}

/// A local server in the Claude-desktop form: `command` is the program, `args` its arguments.
/// Without `args`, a `command` with spaces is refused: it reads as a shell command line.
#[derive(JsonSchema)]
#[schemars(extend(
    "if" = { "properties": { "args": { "type": "null" } } },
    "then" = { "properties": { "command": { "pattern": "^\\S+$" } } }
))]
pub struct LocalClaudeEntry {
    /// The program; `${VAR}` and `${VAR:-default}` expand.
    #[schemars(length(min = 1))]
    pub command: String,
    /// Its arguments; `${VAR}` and `${VAR:-default}` expand.
    pub args: Option<Vec<String>>,
    #[serde(flatten)]
    pub local: LocalCommon,
}

/// A remote server over streamable HTTP (or legacy HTTP+SSE).
#[derive(JsonSchema)]
pub struct RemoteEntry {
    /// A remote server; `http`, `streamable-http`, `streamableHttp` and `sse` are read as
    /// `remote` too.
    #[serde(rename = "type")]
    pub kind: Option<RemoteType>,
    /// `${VAR}` and `${VAR:-default}` expand.
    #[schemars(length(min = 1))]
    pub url: String,
    /// Sent with every request; `${VAR}` and `${VAR:-default}` expand. Never printed.
    pub headers: Option<BTreeMap<String, String>>,
    /// Signing in when the server asks (MCP authorization): `false` never does; an object
    /// names the client. Default: sign in with a registered client when asked.
    pub oauth: Option<OAuth>,
    #[serde(flatten)]
    pub common: Common,
}

#[derive(JsonSchema)]
pub enum RemoteType {
    #[serde(rename = "remote")]
    Remote,
    #[serde(rename = "http")]
    Http,
    #[serde(rename = "streamable-http")]
    StreamableHttp,
    #[serde(rename = "streamableHttp")]
    StreamableHttpCamel,
    #[serde(rename = "sse")]
    Sse,
}

/// A skipped entry: nothing else in it is read.
#[derive(JsonSchema)]
#[schemars(extend("anyOf" = [
    { "required": ["enabled"], "properties": { "enabled": { "const": false } } },
    { "required": ["disabled"], "properties": { "disabled": { "const": true } } }
]))]
pub struct DisabledEntry {
    pub enabled: Option<bool>,
    pub disabled: Option<bool>,
}

/// A key that must not be there.
fn absent(_: &mut SchemaGenerator) -> Schema {
    false.into()
}

pub(super) fn boolean(_: &mut SchemaGenerator) -> Schema {
    json_schema!({ "type": "boolean" })
}

fn positive_number(_: &mut SchemaGenerator) -> Schema {
    json_schema!({ "type": ["number", "null"], "exclusiveMinimum": 0 })
}

fn positive_integer(_: &mut SchemaGenerator) -> Schema {
    json_schema!({ "type": ["integer", "null"], "minimum": 1 })
}

fn command_array(_: &mut SchemaGenerator) -> Schema {
    json_schema!({
        "type": "array",
        "minItems": 1,
        "prefixItems": [{ "type": "string", "minLength": 1 }],
        "items": { "type": "string" }
    })
}
