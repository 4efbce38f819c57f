//! `oauth.grantType` and what each grant needs. Besides a person's sign-in
//! (`authorization_code`) and the client's own (`client_credentials`): `jwt-bearer`, a
//! workload signing in with the identity token its platform gave it (RFC 7523, the
//! `io.modelcontextprotocol/auth/wif` extension), and `enterprise`, a person's ID token
//! exchanged at the company's IdP for an ID-JAG and that for a token (the
//! `io.modelcontextprotocol/enterprise-managed-authorization` extension). Errors name
//! keys, never values.

use std::path::PathBuf;

use serde_json::{Map, Value};

use super::Context;
use super::entry::{expanded, json_kind, text};
use super::entry_error::EntryError;

/// A credential the host holds: the value itself, or where to read it, again for every
/// token request (Kubernetes and CI rotate these files).
#[derive(Debug, Clone, PartialEq)]
pub enum Held {
    Value(String),
    File(PathBuf),
    Env(String),
}

impl Held {
    /// The credential now, or why it cannot be read (naming the file or variable).
    pub fn read(&self) -> Result<String, String> {
        let value = match self {
            Held::Value(value) => value.clone(),
            Held::File(path) => std::fs::read_to_string(path)
                .map_err(|e| format!("cannot read {}: {e}", path.display()))?,
            Held::Env(name) => std::env::var(name).map_err(|_| format!("{name} is not set"))?,
        };
        let value = value.trim();
        match value.is_empty() {
            true => Err("it is empty".to_owned()),
            false => Ok(value.to_owned()),
        }
    }

    /// The value, when the config holds it (a secret to hide).
    pub fn inline(&self) -> Option<&str> {
        match self {
            Held::Value(value) => Some(value),
            _ => None,
        }
    }
}

/// How the client gets its tokens.
#[derive(Debug, Clone, Default, PartialEq)]
pub enum GrantSpec {
    #[default]
    AuthorizationCode,
    ClientCredentials,
    JwtBearer {
        assertion: Held,
    },
    Enterprise(Box<EnterpriseSpec>),
}

/// The company's identity provider, for `"grantType": "enterprise"`.
#[derive(Debug, Clone, PartialEq)]
pub struct EnterpriseSpec {
    pub token_endpoint: String,
    pub client_id: String,
    pub client_secret: Option<String>,
    pub id_token: Held,
    /// Default: the token endpoint's origin.
    pub issuer: Option<String>,
}

/// The grant an `oauth` object names.
pub fn grant(oauth: &Map<String, Value>, context: &Context) -> Result<GrantSpec, EntryError> {
    let grant_type = match oauth.get("grantType") {
        None | Some(Value::Null) => None,
        Some(Value::String(name)) => Some(name.as_str()),
        Some(other) => {
            return Err(EntryError::kind(
                "oauth.grantType",
                "a string",
                json_kind(other),
            ));
        }
    };
    Ok(match grant_type {
        None | Some("authorization_code") => GrantSpec::AuthorizationCode,
        Some("client_credentials") => GrantSpec::ClientCredentials,
        Some("jwt-bearer") => {
            let assertion = held(oauth, "assertion", "oauth.assertion", context)?;
            let assertion = assertion.ok_or(EntryError::Rule(
                "\"oauth.grantType\": \"jwt-bearer\" needs \"oauth.assertion\"",
            ))?;
            GrantSpec::JwtBearer { assertion }
        }
        Some("enterprise") => GrantSpec::Enterprise(Box::new(enterprise(oauth, context)?)),
        Some(other) => {
            let expected =
                "\"authorization_code\", \"client_credentials\", \"jwt-bearer\" or \"enterprise\"";
            return Err(EntryError::kind(
                "oauth.grantType",
                expected,
                format!("\"{other}\""),
            ));
        }
    })
}

fn enterprise(oauth: &Map<String, Value>, context: &Context) -> Result<EnterpriseSpec, EntryError> {
    const NEEDS: &str = "\"oauth.grantType\": \"enterprise\" needs \"oauth.clientId\" and \"oauth.idp\" with \"tokenEndpoint\", \"clientId\" and \"idToken\"";
    if oauth.get("clientId").is_none_or(Value::is_null) {
        return Err(EntryError::Rule(NEEDS));
    }
    let idp = match oauth.get("idp") {
        Some(Value::Object(idp)) => idp,
        None | Some(Value::Null) => return Err(EntryError::Rule(NEEDS)),
        Some(other) => return Err(EntryError::kind("oauth.idp", "an object", json_kind(other))),
    };
    let text = |key: &str| text(idp, &format!("oauth.idp.{key}"), key, context);
    let (Some(token_endpoint), Some(client_id), Some(id_token)) = (
        text("tokenEndpoint")?,
        text("clientId")?,
        held(idp, "idToken", "oauth.idp.idToken", context)?,
    ) else {
        return Err(EntryError::Rule(NEEDS));
    };
    Ok(EnterpriseSpec {
        token_endpoint,
        client_id,
        client_secret: text("clientSecret")?,
        id_token,
        issuer: text("issuer")?,
    })
}

/// `key` of `obj` as a held credential: a string (expanded), `{ "file": path }` (relative
/// to the config's folder) or `{ "env": NAME }`.
fn held(
    obj: &Map<String, Value>,
    key: &str,
    field: &str,
    context: &Context,
) -> Result<Option<Held>, EntryError> {
    const EXPECTED: &str = "a string, { \"file\": path } or { \"env\": name }";
    let held = match obj.get(key) {
        None | Some(Value::Null) => return Ok(None),
        Some(Value::String(value)) => Held::Value(expanded(context, field, value)?),
        Some(Value::Object(from)) => match (from.get("file"), from.get("env")) {
            (Some(Value::String(path)), None) => {
                let path = PathBuf::from(expanded(context, &format!("{field}.file"), path)?);
                Held::File(match context.base_dir {
                    Some(base) if path.is_relative() => base.join(path),
                    _ => path,
                })
            }
            (None, Some(Value::String(name))) => Held::Env(name.clone()),
            _ => return Err(EntryError::kind(field, EXPECTED, "another object")),
        },
        Some(other) => return Err(EntryError::kind(field, EXPECTED, json_kind(other))),
    };
    Ok(Some(held))
}
