//! The `oauth` key of a remote entry, as mcp.schema.json describes it.

use schemars::{JsonSchema, Schema, SchemaGenerator, json_schema};
use serde_json::Value;

use super::boolean;

#[derive(JsonSchema)]
#[serde(untagged)]
pub enum OAuth {
    #[schemars(schema_with = "boolean")]
    Enabled(bool),
    Client(OAuthClient),
}

/// The client to sign in with; strings expand `${VAR}` and `${VAR:-default}`.
#[derive(JsonSchema)]
#[schemars(extend(
    "dependentRequired" = { "clientSecret": ["clientId"] },
    "if" = { "required": ["grantType"], "properties": { "grantType": { "const": "client_credentials" } } },
    "then" = {
        "required": ["clientId"],
        "oneOf": [{ "required": ["clientSecret"] }, { "required": ["privateKey"] }]
    },
    "dependentSchemas" = {
        "grantType": {
            "allOf": [
                {
                    "if": { "properties": { "grantType": { "const": "jwt-bearer" } } },
                    "then": { "required": ["assertion"] }
                },
                {
                    "if": { "properties": { "grantType": { "const": "enterprise" } } },
                    "then": { "required": ["clientId", "idp"] }
                }
            ]
        }
    }
))]
pub struct OAuthClient {
    /// A client registered with the authorization server beforehand. Default: a Client
    /// ID Metadata Document when `clientMetadataUrl` is set and the server supports it,
    /// else dynamic registration.
    #[serde(rename = "clientId")]
    pub client_id: Option<String>,
    /// The secret of `clientId`, for a confidential client. Never printed.
    #[serde(rename = "clientSecret")]
    pub client_secret: Option<String>,
    /// Scopes to ask for instead of those the server suggests.
    pub scopes: Option<Vec<String>>,
    /// The port of the loopback listener that receives the browser's redirect. Default:
    /// one the system picks.
    #[serde(rename = "callbackPort")]
    #[schemars(range(min = 1, max = 65535))]
    pub callback_port: Option<u16>,
    /// The HTTPS URL of this client's metadata document, used as its client id.
    #[serde(rename = "clientMetadataUrl")]
    pub client_metadata_url: Option<String>,
    /// `"client_credentials"`: the client signs in as itself with `clientId` and
    /// `clientSecret`, asking no person (for headless agents); `"jwt-bearer"`: with the
    /// workload identity token `assertion`; `"enterprise"`: with a person's ID token from
    /// `idp`, exchanged for an ID-JAG. Default `"authorization_code"`: a person signs in
    /// in a browser.
    #[serde(rename = "grantType")]
    pub grant_type: Option<GrantType>,
    /// With `"grantType": "client_credentials"`, instead of `clientSecret`: a PEM PKCS#8
    /// private key (P-256 or RSA) that signs a `private_key_jwt` assertion. Never printed.
    #[serde(rename = "privateKey")]
    pub private_key: Option<String>,
    /// OAuth endpoints (metadata, registration, authorization, token) whose host resolves
    /// to a private, link-local, shared or cloud-metadata address may be reached. Default
    /// `false`: they are refused before anything is sent. Loopback is always allowed.
    #[serde(rename = "allowPrivateNetwork")]
    pub allow_private_network: Option<bool>,
    /// Whether tokens are bound to a key this client holds (DPoP, RFC 9449): `"auto"`
    /// (the default) when the authorization server offers ES256 DPoP, `true` always (a
    /// server that does not offer it fails the sign-in), `false` never.
    #[serde(default)]
    #[schemars(schema_with = "dpop_mode")]
    pub dpop: Option<Box<Value>>,
    /// With `"grantType": "jwt-bearer"`: the workload's identity token (a JWT its platform
    /// issued), sent as the RFC 7523 assertion; a file or a variable is read again for
    /// every token request. Never printed.
    pub assertion: Option<Box<HeldCredential>>,
    /// With `"grantType": "enterprise"`: the company's identity provider, where the
    /// person's ID token is exchanged for an ID-JAG.
    pub idp: Option<Box<Idp>>,
}

/// A credential: the value itself, or where it is read from for each token request.
#[derive(JsonSchema)]
#[serde(untagged)]
pub enum HeldCredential {
    Value(String),
    /// A file (relative to the config's folder), read again each time: Kubernetes and
    /// CI rotate such tokens.
    File {
        file: String,
    },
    /// An environment variable.
    Env {
        env: String,
    },
}

/// The identity provider of enterprise-managed authorization.
#[derive(JsonSchema)]
pub struct Idp {
    /// Its token endpoint, where the ID token is exchanged (RFC 8693).
    #[serde(rename = "tokenEndpoint")]
    pub token_endpoint: String,
    /// This client's id at the IdP.
    #[serde(rename = "clientId")]
    pub client_id: String,
    /// Its secret there, for a confidential client (HTTP Basic). Never printed.
    #[serde(rename = "clientSecret")]
    pub client_secret: Option<String>,
    /// The person's ID token from the IdP. Never printed.
    #[serde(rename = "idToken")]
    pub id_token: HeldCredential,
    /// The IdP's issuer. Default: the token endpoint's origin.
    pub issuer: Option<String>,
}

#[derive(JsonSchema)]
pub enum GrantType {
    #[serde(rename = "authorization_code")]
    AuthorizationCode,
    #[serde(rename = "client_credentials")]
    ClientCredentials,
    #[serde(rename = "jwt-bearer")]
    JwtBearer,
    #[serde(rename = "enterprise")]
    Enterprise,
}

/// `oauth.dpop`: `"auto"`, `true` or `false`.
fn dpop_mode(_: &mut SchemaGenerator) -> Schema {
    json_schema!({ "oneOf": [{ "const": "auto" }, { "type": "boolean" }] })
}
