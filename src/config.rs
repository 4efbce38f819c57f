//! The mcp.json format: reading it, unwrapping it and validating each server entry.
//!
//! Validation happens once, here. A bad entry becomes that server's failure reason
//! (`ServerState::Invalid`); only a config that is not a JSON object at all, or a file
//! that cannot be read or parsed, fails the whole call.

use std::path::{Path, PathBuf};
use std::time::Duration;

use serde_json::{Map, Value};

mod entry;
mod entry_error;
pub(crate) mod env_file;
pub(crate) mod expand;
mod gateway;
mod grant;
mod oauth;
pub mod schema;

pub use self::entry_error::EntryError;
pub use self::oauth::{DpopMode, EnterpriseSpec, GrantSpec, Held, OAuthSpec};

use self::entry::{json_kind, validate_entry};
use crate::duration;

/// Wrapper keys, tried in this order; the first one present holds the servers.
const WRAPPERS: [&str; 3] = ["mcpServers", "servers", "mcp"];
/// Sibling sections of an unwrapped config that are never servers (`$schema` points
/// editors at `mcp.schema.json`).
const RESERVED: [&str; 6] = ["builtins", "agents", "a2a", "mcpServer", "serve", "$schema"];
pub const DEFAULT_TIMEOUT: Duration = Duration::from_millis(30_000);

/// Where a config comes from.
pub enum ConfigInput {
    /// A path to a JSON file, relative to the current directory.
    Path(String),
    /// JSON text of an already parsed object (the JS layer serialises it).
    Json(String),
}

/// A whole-call config error (unreadable file, not JSON, not an object).
#[derive(Debug, Clone, PartialEq)]
pub struct ConfigError(pub String);

impl std::fmt::Display for ConfigError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for ConfigError {}

/// Reads the input and returns the server map: unwrapped, reserved keys dropped, entries as
/// written. This is what `parseMcpConfig` returns.
pub fn read_server_map(input: &ConfigInput) -> Result<Map<String, Value>, ConfigError> {
    let (value, origin) = match input {
        ConfigInput::Path(path) => (read_json_file(Path::new(path))?, format!(" in \"{path}\"")),
        ConfigInput::Json(text) => (
            serde_json::from_str(text)
                .map_err(|e| ConfigError(format!("MCP config is not valid JSON: {e}")))?,
            String::new(),
        ),
    };
    let Value::Object(mut top) = value else {
        return Err(ConfigError(format!(
            "MCP config{origin} must be a JSON object of servers, got {}",
            json_kind(&value)
        )));
    };
    for key in WRAPPERS {
        if let Some(inner) = top.remove(key) {
            return match inner {
                Value::Object(map) => {
                    gateway::check(&top, &map)?;
                    Ok(map)
                }
                other => Err(ConfigError(format!(
                    "MCP config{origin}: \"{key}\" must be an object of servers, got {}",
                    json_kind(&other)
                ))),
            };
        }
    }
    top.retain(|key, _| !RESERVED.contains(&key.as_str()));
    Ok(top)
}

fn read_json_file(path: &Path) -> Result<Value, ConfigError> {
    let shown = path.display();
    let text = std::fs::read_to_string(path)
        .map_err(|e| ConfigError(format!("cannot read MCP config \"{shown}\": {e}")))?;
    serde_json::from_str(&text)
        .map_err(|e| ConfigError(format!("MCP config \"{shown}\" is not valid JSON: {e}")))
}

/// A validated config: every server in config order.
#[derive(Debug, Clone)]
pub struct McpConfig {
    pub servers: Vec<ServerEntry>,
}

#[derive(Debug, Clone)]
pub struct ServerEntry {
    pub name: String,
    pub state: ServerState,
}

#[derive(Debug, Clone)]
pub enum ServerState {
    Disabled,
    /// The entry is malformed; the error says how.
    Invalid(EntryError),
    Enabled(ServerSpec),
}

#[derive(Debug, Clone)]
pub struct ServerSpec {
    pub transport: TransportSpec,
    /// Bounds each phase: spawn or dial, `initialize`, each `tools/list` page, each call.
    pub timeout: Duration,
    /// `maxTotalTimeout`: caps a call in all, however often progress restarts its clock.
    pub max_total_timeout: Option<Duration>,
    /// `maxOutputChars`: what the adapters hand a model of one result, in characters.
    pub max_output_chars: Option<u64>,
    pub tools: ToolFilter,
    /// `protocol`: which revision of MCP to speak.
    pub protocol: ProtocolChoice,
    /// `lazy`: a store starts the server only when a call or a listing needs it.
    pub lazy: bool,
    /// `deferLoading` and `alwaysLoad`: which tools the adapters leave to the provider's
    /// own tool search by default.
    pub deferral: Deferral,
}

/// An entry's `deferLoading` (its tools are loaded by the provider's tool search, on
/// demand) with the exceptions `alwaysLoad` names, by the server's names.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Deferral {
    pub defer: bool,
    pub always_load: Vec<String>,
}

impl Deferral {
    /// Whether the server's tool `tool` is deferred.
    pub fn defers(&self, tool: &str) -> bool {
        self.defer && !self.always_load.iter().any(|name| name == tool)
    }
}

/// The `protocol` key of an entry.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum ProtocolChoice {
    /// The 2026-07-28 revision, falling back to 2025-11-25 when the server shows it is older.
    #[default]
    Auto,
    /// 2026-07-28 only: `server/discover` and per-request metadata.
    Modern,
    /// 2025-11-25 only: the `initialize` handshake.
    Legacy,
}

#[derive(Debug, Clone)]
pub enum TransportSpec {
    Local(LocalSpec),
    Remote(RemoteSpec),
}

#[derive(Debug, Clone)]
pub struct LocalSpec {
    pub program: String,
    pub args: Vec<String>,
    /// The entry's own variables, expanded: `envFile`'s, then `env`, then `environment`; a
    /// name set twice takes the later value. Set over the parent's environment, or over
    /// its safe part only.
    pub env: Vec<(String, String)>,
    pub cwd: Option<PathBuf>,
    /// `inheritEnv`: whether the server gets the host's whole environment (the default)
    /// or only the few variables `transport::local` names safe.
    pub inherit_env: bool,
}

#[derive(Debug, Clone)]
pub struct RemoteSpec {
    pub url: String,
    /// Expanded when the config was read.
    pub headers: Vec<(String, String)>,
    /// How to sign in when the server asks; `None` for `"oauth": false`. Boxed: most
    /// entries are local, and the spec is many strings.
    pub oauth: Option<Box<OAuthSpec>>,
}

/// The `tools` map of an entry: which of its server's tools `loadMcp` and a store show.
#[derive(Debug, Clone, PartialEq)]
pub enum ToolFilter {
    All,
    Only(Vec<String>),
    Except(Vec<String>),
}

impl ToolFilter {
    pub fn allows(&self, tool: &str) -> bool {
        match self {
            ToolFilter::All => true,
            ToolFilter::Only(names) => names.iter().any(|n| n == tool),
            ToolFilter::Except(names) => !names.iter().any(|n| n == tool),
        }
    }

    /// The names the map mentions, to warn about those that match no tool.
    pub fn names(&self) -> &[String] {
        match self {
            ToolFilter::All => &[],
            ToolFilter::Only(names) | ToolFilter::Except(names) => names,
        }
    }
}

/// What an entry's values are read against: the environment `${VAR}` expands from, and
/// the folder a relative `envFile` is found in (the config file's; none for an object).
pub struct Context<'a> {
    pub base_dir: Option<&'a Path>,
    pub var: &'a dyn Fn(&str) -> Option<String>,
}

/// The process environment (a variable that is not Unicode counts as unset).
pub fn process_var(name: &str) -> Option<String> {
    std::env::var(name).ok()
}

impl McpConfig {
    pub fn load(input: &ConfigInput) -> Result<McpConfig, ConfigError> {
        Ok(Self::load_with_entries(input)?.0)
    }

    /// The config, and beside it its entries as written (what a fleet's registry keeps).
    pub fn load_with_entries(
        input: &ConfigInput,
    ) -> Result<(McpConfig, Vec<(String, Value)>), ConfigError> {
        let map = read_server_map(input)?;
        let entries = map.iter().map(|(k, v)| (k.clone(), v.clone())).collect();
        let base_dir = match input {
            ConfigInput::Path(path) => Some(Path::new(path).parent().unwrap_or(Path::new(""))),
            ConfigInput::Json(_) => None,
        };
        let context = Context {
            base_dir,
            var: &process_var,
        };
        Ok((Self::from_server_map_in(map, &context), entries))
    }

    /// Entries given as objects: `${VAR}` from the process environment, a relative
    /// `envFile` from the current directory.
    pub fn from_server_map(map: Map<String, Value>) -> McpConfig {
        let context = Context {
            base_dir: None,
            var: &process_var,
        };
        Self::from_server_map_in(map, &context)
    }

    pub fn from_server_map_in(map: Map<String, Value>, context: &Context) -> McpConfig {
        let servers = map
            .into_iter()
            .map(|(name, entry)| ServerEntry {
                state: match validate_entry(&entry, context) {
                    Ok(Some(spec)) => ServerState::Enabled(spec),
                    Ok(None) => ServerState::Disabled,
                    Err(reason) => ServerState::Invalid(reason),
                },
                name,
            })
            .collect();
        McpConfig { servers }
    }
}

/// Expands `${NAME}` and `${NAME:-default}` from the environment, an unset variable without
/// default as empty: `expandEnvHeaders`, which never fails.
pub fn expand_env(value: &str) -> String {
    expand::expand_or_empty(value, &process_var)
}

/// Every char outside `[a-zA-Z0-9_-]` becomes `_`.
pub fn sanitize(name: &str) -> String {
    let mut out = String::with_capacity(name.len());
    push_sanitized(&mut out, name);
    out
}

/// Appends `sanitize(name)` to `out`.
pub fn push_sanitized(out: &mut String, name: &str) {
    let allowed = |c: char| c.is_ascii_alphanumeric() || c == '_' || c == '-';
    // Nearly every name is allowed as it is: copied whole, not char by char.
    if name.chars().all(allowed) {
        out.push_str(name);
        return;
    }
    out.extend(name.chars().map(|c| if allowed(c) { c } else { '_' }));
}

#[cfg(test)]
mod tests;
