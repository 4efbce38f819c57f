//! The mcp.json format: reading it, unwrapping it and validating each server entry.
//!
//! Validation happens once, here. A bad entry becomes that server's failure reason
//! (`ServerState::Invalid`); only a config that is not a JSON object at all, or a file
//! that cannot be read or parsed, fails the whole call.

use std::path::{Path, PathBuf};
use std::time::Duration;

use serde_json::{Map, Value};

pub(crate) mod env_file;
pub(crate) mod expand;
mod oauth;
pub mod schema;

pub use self::oauth::OAuthSpec;

use self::expand::Unset;
use crate::duration;

/// Wrapper keys, tried in this order; the first one present holds the servers.
const WRAPPERS: [&str; 3] = ["mcpServers", "servers", "mcp"];
/// Sibling sections of an unwrapped config that are never servers (`$schema` points
/// editors at `mcp.schema.json`).
const RESERVED: [&str; 5] = ["builtins", "agents", "a2a", "mcpServer", "$schema"];
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
                Value::Object(map) => Ok(map),
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
    /// The entry is malformed; the reason says how.
    Invalid(String),
    Enabled(ServerSpec),
}

#[derive(Debug, Clone)]
pub struct ServerSpec {
    pub transport: TransportSpec,
    /// Bounds each phase: spawn or dial, `initialize`, each `tools/list` page, each call.
    pub timeout: Duration,
    /// `maxTotalTimeout`: caps a call in all, however often progress restarts its clock.
    pub max_total_timeout: Option<Duration>,
    pub tools: ToolFilter,
    /// `protocol`: which revision of MCP to speak.
    pub protocol: ProtocolChoice,
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
    /// or only the few variables `transport::stdio` names safe.
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

/// The `tools` map of an entry, used by `loadMcp` only.
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
        let map = read_server_map(input)?;
        let base_dir = match input {
            ConfigInput::Path(path) => Some(Path::new(path).parent().unwrap_or(Path::new(""))),
            ConfigInput::Json(_) => None,
        };
        let context = Context {
            base_dir,
            var: &process_var,
        };
        Ok(Self::from_server_map_in(map, &context))
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

/// `Ok(None)` for a disabled entry: disabling wins over any other problem in it.
fn validate_entry(entry: &Value, context: &Context) -> Result<Option<ServerSpec>, String> {
    let Value::Object(obj) = entry else {
        return Err(format!(
            "server entry must be an object, got {}",
            json_kind(entry)
        ));
    };
    let enabled = optional_bool(obj, "enabled")?.unwrap_or(true);
    let disabled = optional_bool(obj, "disabled")?.unwrap_or(false);
    if !enabled || disabled {
        return Ok(None);
    }
    let timeout = millis(obj, "timeout")?.unwrap_or(DEFAULT_TIMEOUT);
    Ok(Some(ServerSpec {
        transport: transport_spec(obj, context)?,
        timeout,
        // None by default, as in the official SDK.
        max_total_timeout: millis(obj, "maxTotalTimeout")?,
        tools: tool_filter(obj)?,
        protocol: protocol(obj)?,
    }))
}

fn protocol(obj: &Map<String, Value>) -> Result<ProtocolChoice, String> {
    match obj.get("protocol") {
        None | Some(Value::Null) => Ok(ProtocolChoice::Auto),
        Some(Value::String(v)) if v == "auto" => Ok(ProtocolChoice::Auto),
        Some(Value::String(v)) if v == "2026-07-28" => Ok(ProtocolChoice::Modern),
        Some(Value::String(v)) if v == "2025-11-25" => Ok(ProtocolChoice::Legacy),
        Some(other) => Err(format!(
            "\"protocol\" must be \"auto\", \"2026-07-28\" or \"2025-11-25\", got {}",
            match other {
                Value::String(_) => other.to_string(),
                other => json_kind(other).to_owned(),
            }
        )),
    }
}

/// A positive number of milliseconds under `key`, clamped as every duration is.
fn millis(obj: &Map<String, Value>, key: &str) -> Result<Option<Duration>, String> {
    match obj.get(key) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::Number(n)) => match n.as_f64().and_then(duration::from_millis) {
            Some(duration) if !duration.is_zero() => Ok(Some(duration)),
            _ => Err(format!(
                "\"{key}\" must be a positive number of milliseconds, got {n}"
            )),
        },
        Some(other) => Err(format!(
            "\"{key}\" must be a number of milliseconds, got {}",
            json_kind(other)
        )),
    }
}

fn transport_spec(obj: &Map<String, Value>, context: &Context) -> Result<TransportSpec, String> {
    // Besides our own `local`/`remote`, accept the type names other MCP hosts write.
    let remote = match obj.get("type") {
        None | Some(Value::Null) => {
            if obj.contains_key("url") {
                true
            } else if obj.contains_key("command") {
                false
            } else {
                return Err("entry has neither \"command\" (local) nor \"url\" (remote)".into());
            }
        }
        Some(Value::String(t)) => match t.as_str() {
            "local" | "stdio" => false,
            "remote" | "http" | "streamable-http" | "streamableHttp" | "sse" => true,
            other => {
                return Err(format!(
                    "unknown \"type\" \"{other}\": expected \"local\" or \"remote\""
                ));
            }
        },
        Some(other) => {
            return Err(format!(
                "\"type\" must be a string, got {}",
                json_kind(other)
            ));
        }
    };
    if remote {
        let url = match obj.get("url") {
            Some(Value::String(url)) if !url.is_empty() => expanded(context, "url", url)?,
            Some(other) => {
                return Err(format!(
                    "\"url\" must be a non-empty string, got {}",
                    json_kind(other)
                ));
            }
            None => return Err("remote entry has no \"url\"".into()),
        };
        Ok(TransportSpec::Remote(RemoteSpec {
            url,
            headers: expanded_map(obj, context, "headers")?,
            oauth: oauth::oauth_spec(obj, context)?.map(Box::new),
        }))
    } else {
        local_spec(obj, context).map(TransportSpec::Local)
    }
}

fn local_spec(obj: &Map<String, Value>, context: &Context) -> Result<LocalSpec, String> {
    let (program, args) = command_line(obj)?;
    // Errors name the value as written: `command[2]`, or `args[1]` in the Claude form.
    let (program_field, first_arg, args_key) = match obj.get("command") {
        Some(Value::String(_)) => ("command", 0, "args"),
        _ => ("command[0]", 1, "command"),
    };
    let program = expanded(context, program_field, &program)?;
    if program.is_empty() {
        return Err("\"command\" names an empty program once expanded".into());
    }
    let args = args
        .iter()
        .enumerate()
        .map(|(i, arg)| expanded(context, &format!("{args_key}[{}]", i + first_arg), arg))
        .collect::<Result<_, _>>()?;
    let mut env = match optional_string(obj, "envFile")? {
        Some(path) => {
            let path = PathBuf::from(expanded(context, "envFile", &path)?);
            let path = match context.base_dir {
                Some(dir) if path.is_relative() => dir.join(path),
                _ => path,
            };
            env_file::read(&path)?
        }
        None => Vec::new(),
    };
    env.extend(expanded_map(obj, context, "env")?);
    env.extend(expanded_map(obj, context, "environment")?);
    let cwd = optional_string(obj, "cwd")?
        .map(|dir| expanded(context, "cwd", &dir).map(PathBuf::from))
        .transpose()?;
    Ok(LocalSpec {
        program,
        args,
        env,
        cwd,
        inherit_env: optional_bool(obj, "inheritEnv")?.unwrap_or(true),
    })
}

/// `value` (found at `field`) with its variables expanded. The error names the variable
/// and the field, never a value.
fn expanded(context: &Context, field: &str, value: &str) -> Result<String, String> {
    expand::expand(value, context.var).map_err(|Unset(name)| {
        format!(
            "\"{field}\" uses ${{{name}}}, which is not set and has no default: set {name} in the environment, or write ${{{name}:-default}}"
        )
    })
}

/// An object of strings (see `string_map`), its values expanded.
fn expanded_map(
    obj: &Map<String, Value>,
    context: &Context,
    key: &str,
) -> Result<Vec<(String, String)>, String> {
    let map = string_map(obj, key)?.into_iter().map(|(name, value)| {
        let value = expanded(context, &format!("{key}.{name}"), &value)?;
        Ok((name, value))
    });
    map.collect()
}

/// `command: [program, ...args]`, or the Claude-desktop form `command: "program"` with an
/// optional `args` array (as the SDK's `StdioClientTransport` takes it). A command string
/// is never split, since that would need a shell.
fn command_line(obj: &Map<String, Value>) -> Result<(String, Vec<String>), String> {
    const SHAPE: &str =
        "\"command\" must be a non-empty array of strings (program, then arguments)";
    let mut parts = match (obj.get("command"), obj.get("args")) {
        (Some(Value::Array(items)), None) => strings(items).ok_or(SHAPE)?,
        // "npx -y server" is a command line meant for a shell: refused rather than run
        // as a program of that name.
        (Some(Value::String(program)), None | Some(Value::Null))
            if program.contains(char::is_whitespace) =>
        {
            return Err(
                "\"command\" is one string with spaces and no \"args\": write it as \
                 [program, ...arguments], or the program alone with its arguments in \"args\" \
                 (no shell splits it)"
                    .into(),
            );
        }
        (Some(Value::String(program)), None | Some(Value::Null)) => vec![program.clone()],
        (Some(Value::String(program)), Some(Value::Array(args))) => {
            let mut parts = vec![program.clone()];
            parts.extend(strings(args).ok_or("\"args\" must be an array of strings")?);
            parts
        }
        (None, _) => return Err("local entry has no \"command\"".into()),
        (Some(_), _) => return Err(SHAPE.into()),
    };
    if parts.first().is_none_or(|p| p.is_empty()) {
        return Err(SHAPE.into());
    }
    let program = parts.remove(0);
    Ok((program, parts))
}

fn strings(items: &[Value]) -> Option<Vec<String>> {
    items
        .iter()
        .map(|v| v.as_str().map(str::to_owned))
        .collect()
}

fn tool_filter(obj: &Map<String, Value>) -> Result<ToolFilter, String> {
    let map = match obj.get("tools") {
        None | Some(Value::Null) => return Ok(ToolFilter::All),
        Some(Value::Object(map)) => map,
        Some(other) => {
            return Err(format!(
                "\"tools\" must be an object of tool names to booleans, got {}",
                json_kind(other)
            ));
        }
    };
    let mut allowed = Vec::new();
    let mut denied = Vec::new();
    for (name, flag) in map {
        match flag {
            Value::Bool(true) => allowed.push(name.clone()),
            Value::Bool(false) => denied.push(name.clone()),
            other => {
                return Err(format!(
                    "\"tools.{name}\" must be a boolean, got {}",
                    json_kind(other)
                ));
            }
        }
    }
    Ok(if !allowed.is_empty() {
        ToolFilter::Only(allowed)
    } else if !denied.is_empty() {
        ToolFilter::Except(denied)
    } else {
        ToolFilter::All
    })
}

fn optional_string(obj: &Map<String, Value>, key: &str) -> Result<Option<String>, String> {
    match obj.get(key) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::String(s)) => Ok(Some(s.clone())),
        Some(other) => Err(format!(
            "\"{key}\" must be a string, got {}",
            json_kind(other)
        )),
    }
}

fn optional_bool(obj: &Map<String, Value>, key: &str) -> Result<Option<bool>, String> {
    match obj.get(key) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::Bool(b)) => Ok(Some(*b)),
        Some(other) => Err(format!(
            "\"{key}\" must be a boolean, got {}",
            json_kind(other)
        )),
    }
}

/// An object of strings. Error messages name keys, never values: these hold secrets.
fn string_map(obj: &Map<String, Value>, key: &str) -> Result<Vec<(String, String)>, String> {
    match obj.get(key) {
        None | Some(Value::Null) => Ok(Vec::new()),
        Some(Value::Object(map)) => map
            .iter()
            .map(|(name, value)| match value {
                Value::String(s) => Ok((name.clone(), s.clone())),
                other => Err(format!(
                    "\"{key}.{name}\" must be a string, got {}",
                    json_kind(other)
                )),
            })
            .collect(),
        Some(other) => Err(format!(
            "\"{key}\" must be an object of strings, got {}",
            json_kind(other)
        )),
    }
}

fn json_kind(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

/// Expands `${NAME}` and `${NAME:-default}` from the environment, an unset variable without
/// default as empty: `expandEnvHeaders`, which never fails.
pub fn expand_env(value: &str) -> String {
    expand::expand_or_empty(value, &process_var)
}

/// Every char outside `[a-zA-Z0-9_-]` becomes `_`.
pub fn sanitize(name: &str) -> String {
    name.chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '_' || c == '-' {
                c
            } else {
                '_'
            }
        })
        .collect()
}

#[cfg(test)]
mod tests;
