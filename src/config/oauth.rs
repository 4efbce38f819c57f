//! The `oauth` key of a remote entry: `false` (never sign in), or the client to sign in
//! with. Strings expand `${VAR}` like the rest of the entry; errors name keys, never
//! values (`clientSecret` is a secret).

use serde_json::{Map, Value};

use super::Context;
use super::entry::{expanded, json_kind};
use super::entry_error::EntryError;

/// How a remote server is signed in to, when it asks.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct OAuthSpec {
    /// A client registered beforehand; none: a Client ID Metadata Document, else dynamic
    /// registration.
    pub client_id: Option<String>,
    pub client_secret: Option<String>,
    /// Asked for instead of what the server suggests.
    pub scopes: Vec<String>,
    /// The loopback listener's port (none: one the system picks).
    pub callback_port: Option<u16>,
    /// The HTTPS URL of this client's metadata document.
    pub client_metadata_url: Option<String>,
    /// `"grantType": "client_credentials"`: the client signs in as itself, with its
    /// secret, and no person is asked (the OAuth client-credentials extension).
    pub client_credentials: bool,
    /// For `client_credentials`: a PEM PKCS#8 private key (P-256 or RSA) that signs a
    /// `private_key_jwt` assertion, instead of `client_secret`.
    pub private_key: Option<String>,
}

/// `None` for `"oauth": false`.
pub fn oauth_spec(
    obj: &Map<String, Value>,
    context: &Context,
) -> Result<Option<OAuthSpec>, EntryError> {
    let oauth = match obj.get("oauth") {
        None | Some(Value::Null) | Some(Value::Bool(true)) => {
            return Ok(Some(OAuthSpec::default()));
        }
        Some(Value::Bool(false)) => return Ok(None),
        Some(Value::Object(oauth)) => oauth,
        Some(other) => {
            let got = json_kind(other);
            return Err(EntryError::kind("oauth", "false or an object", got));
        }
    };
    let text = |key: &str| match oauth.get(key) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::String(s)) => expanded(context, &format!("oauth.{key}"), s).map(Some),
        Some(other) => Err(EntryError::kind(
            format!("oauth.{key}"),
            "a string",
            json_kind(other),
        )),
    };
    let scopes = match oauth.get("scopes") {
        None | Some(Value::Null) => Vec::new(),
        Some(Value::Array(items)) => items
            .iter()
            .map(|item| item.as_str().map(str::to_owned))
            .collect::<Option<Vec<_>>>()
            .ok_or(EntryError::Rule(
                "\"oauth.scopes\" must be an array of strings",
            ))?,
        Some(other) => {
            let got = json_kind(other);
            return Err(EntryError::kind("oauth.scopes", "an array of strings", got));
        }
    };
    let callback_port = match oauth.get("callbackPort") {
        None | Some(Value::Null) => None,
        Some(Value::Number(n)) => Some(
            n.as_u64()
                .and_then(|n| u16::try_from(n).ok())
                .filter(|n| *n > 0)
                .ok_or(EntryError::Rule(
                    "\"oauth.callbackPort\" must be a port number (1 to 65535)",
                ))?,
        ),
        Some(other) => {
            let got = json_kind(other);
            return Err(EntryError::kind("oauth.callbackPort", "a port number", got));
        }
    };
    let client_credentials = match text("grantType")?.as_deref() {
        None | Some("authorization_code") => false,
        Some("client_credentials") => true,
        Some(other) => {
            let expected = "\"authorization_code\" or \"client_credentials\"";
            return Err(EntryError::kind(
                "oauth.grantType",
                expected,
                format!("\"{other}\""),
            ));
        }
    };
    let spec = OAuthSpec {
        client_id: text("clientId")?,
        client_secret: text("clientSecret")?,
        scopes,
        callback_port,
        client_metadata_url: text("clientMetadataUrl")?,
        client_credentials,
        private_key: text("privateKey")?,
    };
    if spec.client_secret.is_some() && spec.client_id.is_none() {
        return Err(EntryError::Rule(
            "\"oauth.clientSecret\" needs \"oauth.clientId\"",
        ));
    }
    if client_credentials
        && (spec.client_id.is_none() || spec.client_secret.is_none() == spec.private_key.is_none())
    {
        return Err(EntryError::Rule(
            "\"oauth.grantType\": \"client_credentials\" needs \"oauth.clientId\" and either \"oauth.clientSecret\" or \"oauth.privateKey\"",
        ));
    }
    Ok(Some(spec))
}
