//! The `oauth` key of a remote entry: `false` (never sign in), or the client to sign in
//! with. Strings expand `${VAR}` like the rest of the entry; errors name keys, never
//! values (`clientSecret` is a secret).

use serde_json::{Map, Value};

use super::Context;
use super::entry::{json_kind, text};
use super::entry_error::EntryError;
pub use super::grant::{EnterpriseSpec, GrantSpec, Held};

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
    /// How tokens are got: a person's sign-in, or a grant that asks no person (see
    /// `grant`).
    pub grant: GrantSpec,
    /// For `client_credentials`: a PEM PKCS#8 private key (P-256 or RSA) that signs a
    /// `private_key_jwt` assertion, instead of `client_secret`.
    pub private_key: Option<String>,
    /// `allowPrivateNetwork`: OAuth endpoints on a private network may be reached.
    pub allow_private_network: bool,
    /// `dpop`: whether tokens are bound to a key this client holds (RFC 9449).
    pub dpop: DpopMode,
}

/// `oauth.dpop`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum DpopMode {
    /// `"auto"`: when the authorization server offers ES256 DPoP.
    #[default]
    Auto,
    /// `true`: always; an authorization server that does not offer it fails the sign-in.
    Required,
    /// `false`: never.
    Off,
}

impl OAuthSpec {
    /// The secrets the config holds for it: never printed, never in a catalog's name.
    pub fn secrets(&self) -> impl Iterator<Item = &str> {
        let (inline, idp) = match &self.grant {
            GrantSpec::JwtBearer { assertion } => (assertion.inline(), None),
            GrantSpec::Enterprise(idp) => (idp.id_token.inline(), idp.client_secret.as_deref()),
            _ => (None, None),
        };
        let own = [self.client_secret.as_deref(), self.private_key.as_deref()];
        own.into_iter().chain([inline, idp]).flatten()
    }
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
    let text = |key: &str| text(oauth, &format!("oauth.{key}"), key, context);
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
    let grant = super::grant::grant(oauth, context)?;
    let allow_private_network = match oauth.get("allowPrivateNetwork") {
        None | Some(Value::Null) => false,
        Some(Value::Bool(allow)) => *allow,
        Some(other) => {
            let got = json_kind(other);
            return Err(EntryError::kind(
                "oauth.allowPrivateNetwork",
                "a boolean",
                got,
            ));
        }
    };
    let dpop = match oauth.get("dpop") {
        None | Some(Value::Null) => DpopMode::Auto,
        Some(Value::String(mode)) if mode == "auto" => DpopMode::Auto,
        Some(Value::Bool(true)) => DpopMode::Required,
        Some(Value::Bool(false)) => DpopMode::Off,
        Some(other) => {
            let got = json_kind(other);
            return Err(EntryError::kind(
                "oauth.dpop",
                "\"auto\", true or false",
                got,
            ));
        }
    };
    let spec = OAuthSpec {
        client_id: text("clientId")?,
        client_secret: text("clientSecret")?,
        scopes,
        callback_port,
        client_metadata_url: text("clientMetadataUrl")?,
        grant,
        private_key: text("privateKey")?,
        allow_private_network,
        dpop,
    };
    if spec.client_secret.is_some() && spec.client_id.is_none() {
        return Err(EntryError::Rule(
            "\"oauth.clientSecret\" needs \"oauth.clientId\"",
        ));
    }
    if spec.grant == GrantSpec::ClientCredentials
        && (spec.client_id.is_none() || spec.client_secret.is_none() == spec.private_key.is_none())
    {
        return Err(EntryError::Rule(
            "\"oauth.grantType\": \"client_credentials\" needs \"oauth.clientId\" and either \"oauth.clientSecret\" or \"oauth.privateKey\"",
        ));
    }
    Ok(Some(spec))
}
