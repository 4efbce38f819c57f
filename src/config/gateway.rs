//! The sections `toolnexus serve` reads beside `mcpServers`: `agents` (each agent's view:
//! the servers it names) and `serve` (where to listen, meta mode, the front door). Read
//! here so that a mistake is a config error before anything starts, as an entry's is.

use serde_json::{Map, Value};

use super::ConfigError;
use super::entry::json_kind;

/// Checks `agents` and `serve`, when present, against `servers`.
pub fn check(top: &Map<String, Value>, servers: &Map<String, Value>) -> Result<(), ConfigError> {
    // `null` is absent, as for every optional key.
    if let Some(agents) = top.get("agents").filter(|v| !v.is_null()) {
        check_agents(agents, servers)?;
    }
    if let Some(serve) = top.get("serve").filter(|v| !v.is_null()) {
        check_serve(serve)?;
    }
    Ok(())
}

fn fail(why: String) -> ConfigError {
    ConfigError(format!("MCP config: {why}"))
}

fn check_agents(agents: &Value, servers: &Map<String, Value>) -> Result<(), ConfigError> {
    let Value::Object(agents) = agents else {
        let got = json_kind(agents);
        return Err(fail(format!(
            "\"agents\" must be an object of agents' server lists, got {got}"
        )));
    };
    for (id, names) in agents {
        let Value::Array(names) = names else {
            let got = json_kind(names);
            return Err(fail(format!(
                "\"agents.{id}\" must be an array of server names, got {got}"
            )));
        };
        for name in names {
            match name.as_str() {
                Some(name) if servers.contains_key(name) => {}
                Some(name) => {
                    let why =
                        format!("\"agents.{id}\" names \"{name}\", which is not in \"mcpServers\"");
                    return Err(fail(why));
                }
                None => {
                    let got = json_kind(name);
                    return Err(fail(format!(
                        "\"agents.{id}\" must hold server names, got {got}"
                    )));
                }
            }
        }
    }
    Ok(())
}

fn check_serve(serve: &Value) -> Result<(), ConfigError> {
    let Value::Object(serve) = serve else {
        return Err(fail(format!(
            "\"serve\" must be an object, got {}",
            json_kind(serve)
        )));
    };
    let kind_of = |key: &str, ok: fn(&Value) -> bool, what: &str| match serve.get(key) {
        Some(value) if !value.is_null() && !ok(value) => {
            let got = json_kind(value);
            Err(fail(format!("\"serve.{key}\" must be {what}, got {got}")))
        }
        _ => Ok(()),
    };
    kind_of("http", Value::is_string, "\"host:port\"")?;
    kind_of("meta", Value::is_boolean, "a boolean")?;
    kind_of("allowedOrigins", strings, "an array of strings")?;
    kind_of("auth", Value::is_object, "an object")?;
    if let Some(oauth) = serve.get("auth").and_then(|auth| auth.get("oauth")) {
        check_oauth(oauth)?;
    }
    let tokens = serve.get("auth").and_then(|auth| auth.get("tokens"));
    match tokens {
        None | Some(Value::Null) => Ok(()),
        Some(Value::Object(paths)) => {
            for (path, value) in paths {
                if !(value.is_string() || strings(value)) {
                    let why = format!(
                        "\"serve.auth.tokens.{path}\" must be a token or an array of tokens"
                    );
                    return Err(fail(why));
                }
            }
            Ok(())
        }
        Some(other) => {
            let got = json_kind(other);
            Err(fail(format!(
                "\"serve.auth.tokens\" must be an object of paths to tokens, got {got}"
            )))
        }
    }
}

fn check_oauth(oauth: &Value) -> Result<(), ConfigError> {
    if oauth.is_null() {
        return Ok(());
    }
    let issuer = oauth.get("issuer").and_then(Value::as_str);
    if !oauth.is_object() || issuer.is_none() {
        return Err(fail(
            "\"serve.auth.oauth\" must be an object with an \"issuer\"".into(),
        ));
    }
    for key in ["jwksUri", "resource"] {
        if oauth
            .get(key)
            .is_some_and(|v| !v.is_null() && !v.is_string())
        {
            return Err(fail(format!("\"serve.auth.oauth.{key}\" must be a URL")));
        }
    }
    match oauth.get("scopes") {
        None | Some(Value::Null) => Ok(()),
        Some(Value::Object(paths)) if paths.values().all(|v| v.is_string() || strings(v)) => Ok(()),
        Some(_) => Err(fail(
            "\"serve.auth.oauth.scopes\" must map paths to scopes".into(),
        )),
    }
}

fn strings(value: &Value) -> bool {
    value
        .as_array()
        .is_some_and(|items| items.iter().all(Value::is_string))
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn checked(config: Value) -> Result<(), ConfigError> {
        let Value::Object(mut top) = config else {
            unreachable!("an object")
        };
        let Some(Value::Object(servers)) = top.remove("mcpServers") else {
            unreachable!("servers")
        };
        check(&top, &servers)
    }

    #[test]
    fn an_agent_may_name_only_servers_of_the_config() {
        let servers = json!({ "docs": { "command": ["x"] } });
        let ok = json!({ "mcpServers": servers, "agents": { "a": ["docs"] }, "serve": null });
        assert_eq!(checked(ok), Ok(()));
        let unknown = json!({ "mcpServers": servers, "agents": { "a": ["docs", "nowhere"] } });
        let why = "MCP config: \"agents.a\" names \"nowhere\", which is not in \"mcpServers\"";
        assert_eq!(checked(unknown), Err(ConfigError(why.into())));
    }
}
