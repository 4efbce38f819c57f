//! How bytes reach a server: local servers are child processes over stdio (every process
//! we start is tracked by its process group), remote ones streamable HTTP.

pub mod groups;
pub mod http;
pub mod legacy_sse;
pub mod lines;
pub mod reaper;
mod spawn;
mod start_error;
pub mod stdio;
mod tls;

/// The largest JSON-RPC message accepted from a server: room for a 64 MiB result and its
/// envelope, while a hostile server's endless line still fails in bounded memory.
pub const MAX_MESSAGE_BYTES: usize = 128 << 20;
