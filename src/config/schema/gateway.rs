//! The `agents` and `serve` sections of a wrapped config, for `toolnexus serve` (read by
//! `config::gateway`).

use std::collections::BTreeMap;

use schemars::JsonSchema;

/// What a wrapped config may hold beside its servers.
#[derive(JsonSchema)]
pub struct GatewaySections {
    /// Agents' views, for `toolnexus serve`: each agent's id to the names of the servers
    /// (in `mcpServers`) it sees, served at `/agents/<id>/mcp`.
    pub agents: Option<BTreeMap<String, Vec<String>>>,
    /// How `toolnexus serve` serves the servers.
    pub serve: Option<Serve>,
}

/// `toolnexus serve`'s settings; its flags win over these.
#[derive(JsonSchema)]
pub struct Serve {
    /// Where to listen, `host:port`. Default `127.0.0.1:8808`.
    pub http: Option<String>,
    /// Serve the meta-tools (`search_tools`, `describe_tool`, `call_tool`) instead of
    /// every tool. Default `false`.
    pub meta: Option<bool>,
    /// Browser origins (`scheme://host:port`) allowed besides loopback pages.
    #[serde(rename = "allowedOrigins")]
    pub allowed_origins: Option<Vec<String>>,
    /// The front door.
    pub auth: Option<ServeAuth>,
}

/// Who may reach which view: tokens of the gateway's own, or an authorization server's.
#[derive(JsonSchema)]
pub struct ServeAuth {
    /// The bearer tokens that open each path (`/mcp`, `/agents/<id>/mcp`); values may be
    /// `${VAR}`. With tokens set, a path without any is closed.
    pub tokens: Option<BTreeMap<String, Tokens>>,
    /// Take an authorization server's JWT access tokens.
    pub oauth: Option<ServeOAuth>,
}

/// The gateway as an OAuth resource server.
#[derive(JsonSchema)]
pub struct ServeOAuth {
    /// The authorization server's issuer; tokens' `iss`.
    pub issuer: String,
    /// Its JWK set; by default read from its metadata.
    #[serde(rename = "jwksUri")]
    pub jwks_uri: Option<String>,
    /// This resource's identifier, tokens' `aud`; by default the gateway's origin.
    pub resource: Option<String>,
    /// The scopes that open each path (any one of them).
    pub scopes: Option<BTreeMap<String, Tokens>>,
}

/// One token, or several.
#[derive(JsonSchema)]
#[serde(untagged)]
pub enum Tokens {
    One(String),
    Many(Vec<String>),
}
