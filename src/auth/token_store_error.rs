//! Why a token store failed. Its `Display` is the sentence users read: it names files
//! and what was done, never a token.

use std::fmt;
use std::path::{Path, PathBuf};

use crate::state::StateError;

#[derive(Debug, Clone, PartialEq)]
pub enum StoreError {
    /// Neither `XDG_CONFIG_HOME` nor `HOME` gives a folder for token files.
    NoFolder,
    /// A token file could not be read, written or removed.
    File {
        action: FileAction,
        path: PathBuf,
        reason: String,
    },
    /// The write could not be finished (its thread was lost).
    Unfinished(String),
    /// The record could not be turned into text.
    Unserialisable(String),
    /// The host's own token store failed, in the host's words.
    Host(String),
    /// The fleet's shared state could not be read.
    Shared(StateError),
    /// The fleet's state has no key to seal a sign-in with.
    Unsealed,
}

#[derive(Debug, Clone, Copy, PartialEq)]
pub enum FileAction {
    Read,
    Write,
    Remove,
}

impl StoreError {
    pub fn file(action: FileAction, path: &Path, error: &std::io::Error) -> StoreError {
        let (path, reason) = (path.to_owned(), error.to_string());
        StoreError::File {
            action,
            path,
            reason,
        }
    }
}

impl fmt::Display for StoreError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            StoreError::NoFolder => f.write_str(
                "no config directory to keep OAuth tokens in (set XDG_CONFIG_HOME or HOME)",
            ),
            StoreError::File {
                action,
                path,
                reason,
            } => {
                let verb = match action {
                    FileAction::Read => "read",
                    FileAction::Write => "write",
                    FileAction::Remove => "remove",
                };
                write!(f, "cannot {verb} {}: {reason}", path.display())
            }
            StoreError::Unfinished(reason) => write!(f, "cannot write the OAuth tokens: {reason}"),
            StoreError::Unserialisable(reason) => {
                write!(f, "cannot serialise the OAuth record: {reason}")
            }
            StoreError::Host(reason) => write!(f, "the token store failed: {reason}"),
            StoreError::Shared(error) => {
                write!(f, "cannot read the sign-in from the shared state: {error}")
            }
            StoreError::Unsealed => f.write_str("cannot seal the sign-in"),
        }
    }
}

impl std::error::Error for StoreError {}

/// rmcp's credential store speaks in sentences: the message is the one users read.
impl From<StoreError> for rmcp::transport::auth::AuthError {
    fn from(error: StoreError) -> Self {
        rmcp::transport::auth::AuthError::CredentialStoreError(error.to_string())
    }
}
