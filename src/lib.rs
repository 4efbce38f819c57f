//! toolnexus: an MCP client core. It reads an mcp.json, connects to every server in it in
//! parallel and exposes their tools. `binding` (feature `node`) is the thin napi layer over
//! it; everything else knows nothing of Node.

pub mod auth;
pub mod code;
pub mod config;
pub mod duration;
pub mod elicitation;
// The fuzz targets run on Linux; their stdio target makes Linux pipes (pipe2).
#[cfg(target_os = "linux")]
#[doc(hidden)]
pub mod fuzzing;
pub mod inventory;
mod lock;
pub mod net;
pub mod provider_schema;
pub mod redact;
pub mod search;
pub mod serve;
pub mod session;
pub mod skills;
pub mod state;
pub mod store;
pub mod tool;
pub mod transport;

#[cfg(feature = "node")]
mod binding;
