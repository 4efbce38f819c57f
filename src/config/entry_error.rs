//! Why a server entry cannot be used. Its `Display` is the reason users read: it names
//! keys, variables and files, never a secret value.

use std::fmt;

#[derive(Debug, Clone, PartialEq)]
pub enum EntryError {
    /// The entry is not an object; what it is instead.
    NotAnObject(&'static str),
    /// `key` holds what it may not: `"<key>" must be <expected>, got <got>`.
    Kind {
        key: String,
        expected: &'static str,
        got: String,
    },
    /// `field` uses the variable `name`, which is unset and has no default.
    Unset { field: String, name: String },
    /// `"type"` names no transport.
    UnknownType(String),
    /// The `envFile` at `path` cannot be read, for `reason`.
    EnvFile { path: String, reason: String },
    /// Any other rule of the format the entry breaks, in its words.
    Rule(&'static str),
}

impl EntryError {
    /// `"<key>" must be <expected>, got <got>`.
    pub fn kind(key: impl Into<String>, expected: &'static str, got: impl Into<String>) -> Self {
        let (key, got) = (key.into(), got.into());
        EntryError::Kind { key, expected, got }
    }
}

impl fmt::Display for EntryError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            EntryError::NotAnObject(got) => write!(f, "server entry must be an object, got {got}"),
            EntryError::Kind { key, expected, got } => {
                write!(f, "\"{key}\" must be {expected}, got {got}")
            }
            EntryError::Unset { field, name } => write!(
                f,
                "\"{field}\" uses ${{{name}}}, which is not set and has no default: set {name} in the environment, or write ${{{name}:-default}}"
            ),
            EntryError::UnknownType(name) => {
                write!(
                    f,
                    "unknown \"type\" \"{name}\": expected \"local\" or \"remote\""
                )
            }
            EntryError::EnvFile { path, reason } => {
                write!(f, "cannot read \"envFile\" \"{path}\": {reason}")
            }
            EntryError::Rule(rule) => f.write_str(rule),
        }
    }
}

impl std::error::Error for EntryError {}
