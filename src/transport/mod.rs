//! How bytes reach a server: local servers are child processes over stdio (see [`local`],
//! where the line between operating systems is drawn), remote ones streamable HTTP.

pub mod http;
pub mod legacy_sse;
pub mod local;

/// The largest JSON-RPC message accepted from a server: room for a 64 MiB result and its
/// envelope, while a hostile server's endless line still fails in bounded memory.
pub const MAX_MESSAGE_BYTES: usize = 128 << 20;
