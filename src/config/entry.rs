//! One server entry read and validated into its spec. Each failure is that entry's
//! reason, in words that name keys and variables, never values (they hold secrets).

use std::time::Duration;

use serde_json::{Map, Value};

use super::entry_error::EntryError;
use super::expand::Unset;
use super::*;

/// `Ok(None)` for a disabled entry: disabling wins over any other problem in it.
pub(super) fn validate_entry(
    entry: &Value,
    context: &Context,
) -> Result<Option<ServerSpec>, EntryError> {
    let Value::Object(obj) = entry else {
        return Err(EntryError::NotAnObject(json_kind(entry)));
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
        deferral: Deferral {
            defer: optional_bool(obj, "deferLoading")?.unwrap_or(false),
            always_load: optional_strings(obj, "alwaysLoad")?,
        },
    }))
}

fn protocol(obj: &Map<String, Value>) -> Result<ProtocolChoice, EntryError> {
    match obj.get("protocol") {
        None | Some(Value::Null) => Ok(ProtocolChoice::Auto),
        Some(Value::String(v)) if v == "auto" => Ok(ProtocolChoice::Auto),
        Some(Value::String(v)) if v == "2026-07-28" => Ok(ProtocolChoice::Modern),
        Some(Value::String(v)) if v == "2025-11-25" => Ok(ProtocolChoice::Legacy),
        Some(other) => Err(EntryError::kind(
            "protocol",
            "\"auto\", \"2026-07-28\" or \"2025-11-25\"",
            match other {
                Value::String(_) => other.to_string(),
                other => json_kind(other).to_owned(),
            },
        )),
    }
}

/// A positive whole number of characters under `key`.
fn characters(obj: &Map<String, Value>, key: &str) -> Result<Option<u64>, EntryError> {
    match obj.get(key) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::Number(n)) => match n.as_u64() {
            Some(count) if count > 0 => Ok(Some(count)),
            _ => Err(EntryError::kind(
                key,
                "a positive whole number of characters",
                n.to_string(),
            )),
        },
        Some(other) => Err(EntryError::kind(
            key,
            "a number of characters",
            json_kind(other),
        )),
    }
}

/// A positive number of milliseconds under `key`, clamped as every duration is.
fn millis(obj: &Map<String, Value>, key: &str) -> Result<Option<Duration>, EntryError> {
    match obj.get(key) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::Number(n)) => match n.as_f64().and_then(duration::from_millis) {
            Some(duration) if !duration.is_zero() => Ok(Some(duration)),
            _ => Err(EntryError::kind(
                key,
                "a positive number of milliseconds",
                n.to_string(),
            )),
        },
        Some(other) => Err(EntryError::kind(
            key,
            "a number of milliseconds",
            json_kind(other),
        )),
    }
}

fn transport_spec(
    obj: &Map<String, Value>,
    context: &Context,
) -> Result<TransportSpec, EntryError> {
    // Besides our own `local`/`remote`, accept the type names other MCP hosts write.
    let remote = match obj.get("type") {
        None | Some(Value::Null) => {
            if obj.contains_key("url") {
                true
            } else if obj.contains_key("command") {
                false
            } else {
                return Err(EntryError::Rule(
                    "entry has neither \"command\" (local) nor \"url\" (remote)",
                ));
            }
        }
        Some(Value::String(t)) => match t.as_str() {
            "local" | "stdio" => false,
            "remote" | "http" | "streamable-http" | "streamableHttp" | "sse" => true,
            other => return Err(EntryError::UnknownType(other.to_owned())),
        },
        Some(other) => return Err(EntryError::kind("type", "a string", json_kind(other))),
    };
    if remote {
        let url = match obj.get("url") {
            Some(Value::String(url)) if !url.is_empty() => expanded(context, "url", url)?,
            Some(other) => {
                let got = json_kind(other);
                return Err(EntryError::kind("url", "a non-empty string", got));
            }
            None => return Err(EntryError::Rule("remote entry has no \"url\"")),
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

fn local_spec(obj: &Map<String, Value>, context: &Context) -> Result<LocalSpec, EntryError> {
    let (program, args) = command_line(obj)?;
    // Errors name the value as written: `command[2]`, or `args[1]` in the Claude form.
    let (program_field, first_arg, args_key) = match obj.get("command") {
        Some(Value::String(_)) => ("command", 0, "args"),
        _ => ("command[0]", 1, "command"),
    };
    let program = expanded(context, program_field, &program)?;
    if program.is_empty() {
        return Err(EntryError::Rule(
            "\"command\" names an empty program once expanded",
        ));
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
pub(super) fn expanded(context: &Context, field: &str, value: &str) -> Result<String, EntryError> {
    expand::expand(value, context.var).map_err(|Unset(name)| EntryError::Unset {
        field: field.to_owned(),
        name,
    })
}

/// The string `key` of `obj` (the entry's `field`), expanded; none when absent or null.
pub(super) fn text(
    obj: &Map<String, Value>,
    field: &str,
    key: &str,
    context: &Context,
) -> Result<Option<String>, EntryError> {
    match obj.get(key) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::String(s)) => expanded(context, field, s).map(Some),
        Some(other) => Err(EntryError::kind(field, "a string", json_kind(other))),
    }
}

/// An object of strings (see `string_map`), its values expanded.
fn expanded_map(
    obj: &Map<String, Value>,
    context: &Context,
    key: &str,
) -> Result<Vec<(String, String)>, EntryError> {
    let map = string_map(obj, key)?.into_iter().map(|(name, value)| {
        let value = expanded(context, &format!("{key}.{name}"), &value)?;
        Ok((name, value))
    });
    map.collect()
}

/// `command: [program, ...args]`, or the Claude-desktop form `command: "program"` with an
/// optional `args` array (as the SDK's `StdioClientTransport` takes it). A command string
/// is never split, since that would need a shell.
fn command_line(obj: &Map<String, Value>) -> Result<(String, Vec<String>), EntryError> {
    const SHAPE: &str =
        "\"command\" must be a non-empty array of strings (program, then arguments)";
    let mut parts = match (obj.get("command"), obj.get("args")) {
        (Some(Value::Array(items)), None) => strings(items).ok_or(EntryError::Rule(SHAPE))?,
        // "npx -y server" is a command line meant for a shell: refused rather than run
        // as a program of that name.
        (Some(Value::String(program)), None | Some(Value::Null))
            if program.contains(char::is_whitespace) =>
        {
            return Err(EntryError::Rule(
                "\"command\" is one string with spaces and no \"args\": write it as \
                 [program, ...arguments], or the program alone with its arguments in \"args\" \
                 (no shell splits it)",
            ));
        }
        (Some(Value::String(program)), None | Some(Value::Null)) => vec![program.clone()],
        (Some(Value::String(program)), Some(Value::Array(args))) => {
            let mut parts = vec![program.clone()];
            let shape = EntryError::Rule("\"args\" must be an array of strings");
            parts.extend(strings(args).ok_or(shape)?);
            parts
        }
        (None, _) => return Err(EntryError::Rule("local entry has no \"command\"")),
        (Some(_), _) => return Err(EntryError::Rule(SHAPE)),
    };
    if parts.first().is_none_or(|p| p.is_empty()) {
        return Err(EntryError::Rule(SHAPE));
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

fn tool_filter(obj: &Map<String, Value>) -> Result<ToolFilter, EntryError> {
    let map = match obj.get("tools") {
        None | Some(Value::Null) => return Ok(ToolFilter::All),
        Some(Value::Object(map)) => map,
        Some(other) => {
            let expected = "an object of tool names to booleans";
            return Err(EntryError::kind("tools", expected, json_kind(other)));
        }
    };
    let mut allowed = Vec::new();
    let mut denied = Vec::new();
    for (name, flag) in map {
        match flag {
            Value::Bool(true) => allowed.push(name.clone()),
            Value::Bool(false) => denied.push(name.clone()),
            other => {
                let key = format!("tools.{name}");
                return Err(EntryError::kind(key, "a boolean", json_kind(other)));
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

fn optional_string(obj: &Map<String, Value>, key: &str) -> Result<Option<String>, EntryError> {
    match obj.get(key) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::String(s)) => Ok(Some(s.clone())),
        Some(other) => Err(EntryError::kind(key, "a string", json_kind(other))),
    }
}

/// An array of strings under `key`; none when absent.
fn optional_strings(obj: &Map<String, Value>, key: &str) -> Result<Vec<String>, EntryError> {
    match obj.get(key) {
        None | Some(Value::Null) => Ok(Vec::new()),
        Some(Value::Array(items)) => {
            let got = "an array with something else than strings";
            strings(items).ok_or_else(|| EntryError::kind(key, "an array of strings", got))
        }
        Some(other) => Err(EntryError::kind(
            key,
            "an array of strings",
            json_kind(other),
        )),
    }
}

fn optional_bool(obj: &Map<String, Value>, key: &str) -> Result<Option<bool>, EntryError> {
    match obj.get(key) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::Bool(b)) => Ok(Some(*b)),
        Some(other) => Err(EntryError::kind(key, "a boolean", json_kind(other))),
    }
}

/// An object of strings. Error messages name keys, never values: these hold secrets.
fn string_map(obj: &Map<String, Value>, key: &str) -> Result<Vec<(String, String)>, EntryError> {
    match obj.get(key) {
        None | Some(Value::Null) => Ok(Vec::new()),
        Some(Value::Object(map)) => map
            .iter()
            .map(|(name, value)| match value {
                Value::String(s) => Ok((name.clone(), s.clone())),
                other => Err(EntryError::kind(
                    format!("{key}.{name}"),
                    "a string",
                    json_kind(other),
                )),
            })
            .collect(),
        Some(other) => Err(EntryError::kind(
            key,
            "an object of strings",
            json_kind(other),
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
