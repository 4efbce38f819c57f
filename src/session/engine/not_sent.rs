//! Why a wire could not send a request.

use std::fmt;

use crate::transport::local::lines::WriteError;

#[derive(Debug)]
pub enum NotSent {
    /// The server's input refused the line (it is not reading it, say).
    Write(WriteError),
    /// rmcp's request types do not take `method` with these params.
    Compose {
        method: String,
        error: serde_json::Error,
    },
}

impl fmt::Display for NotSent {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            NotSent::Write(error) => error.fmt(f),
            NotSent::Compose { method, error } => write!(f, "cannot compose {method}: {error}"),
        }
    }
}

impl std::error::Error for NotSent {}
