//! One server entry read and validated into its spec. Each failure is that entry's
//! reason, in words that name keys and variables, never values (they hold secrets).

use std::time::Duration;

use serde_json::{Map, Value};

use super::expand::Unset;
use super::*;

/// `Ok(None)` for a disabled entry: disabling wins over any other problem in it.
pub(super) fn validate_entry(
    entry: &Value,
    context: &Context,
) -> Result<Option<ServerSpec>, String> {
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
        max_output_chars: characters(obj, "maxOutputChars")?,
        tools: tool_filter(obj)?,
        protocol: protocol(obj)?,
        lazy: optional_bool(obj, "lazy")?.unwrap_or(false),
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

/// A positive whole number of characters under `key`.
fn characters(obj: &Map<String, Value>, key: &str) -> Result<Option<u64>, String> {
    match obj.get(key) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::Number(n)) => match n.as_u64() {
            Some(count) if count > 0 => Ok(Some(count)),
            _ => Err(format!(
                "\"{key}\" must be a positive whole number of characters, got {n}"
            )),
        },
        Some(other) => Err(format!(
            "\"{key}\" must be a number of characters, got {}",
            json_kind(other)
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
pub(super) fn expanded(context: &Context, field: &str, value: &str) -> Result<String, String> {
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

pub(super) fn json_kind(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}
