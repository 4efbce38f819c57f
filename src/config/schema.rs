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
}

#[derive(JsonSchema)]
pub struct UnderServers {
    #[serde(rename = "mcpServers")]
    #[serde(default)]
    #[schemars(schema_with = "absent")]
    pub mcp_servers: (),
    pub servers: Servers,
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

fn boolean(_: &mut SchemaGenerator) -> Schema {
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

/// `oauth.dpop`: `"auto"`, `true` or `false`.
fn dpop_mode(_: &mut SchemaGenerator) -> Schema {
    json_schema!({ "oneOf": [{ "const": "auto" }, { "type": "boolean" }] })
}
