//! What a fleet of stores shares: one small trait over a key-value store with expiry,
//! an atomic compare-and-set and publish/subscribe (`Backend`), Redis behind it
//! (`redis`), or the host's own (the binding's JS `StateStore`). `Shared` is one
//! namespace of it as the store and the sign-ins use it: keys under
//! `toolnexus:<namespace>:`, every operation bounded in time, its health as a status,
//! writes that failed kept (bounded) and written when the state answers again, and
//! secrets sealed before they leave the host (`sealed`).
//!
//! A value read back is input like a server's bytes: it may be corrupt, foreign or
//! oversized, and whoever reads it checks it. Nothing here is on a call's path.

mod backend;
#[cfg(test)]
pub(crate) mod memory;
mod pending;
pub mod redis;
pub mod sealed;
mod shared;
#[cfg(test)]
mod tests;

pub use backend::{Backend, Feed, StateError, StateFuture};
pub use sealed::Seal;
pub use shared::{Health, Shared, random_id};

/// Opens the shared state at `url` (Redis or Valkey) under `namespace`, sealing secrets
/// with `key` (64 hex digits) when one is given. Connects in the background: a state that
/// does not answer yet is no error here.
pub fn open_redis(
    url: &str,
    namespace: Option<&str>,
    key: Option<&str>,
) -> Result<std::sync::Arc<Shared>, StateError> {
    let backend = redis::RedisState::open(url)?;
    open(std::sync::Arc::new(backend), namespace, key)
}

/// Opens a namespace of the state behind `backend`, as [`open_redis`] does.
pub fn open(
    backend: std::sync::Arc<dyn Backend>,
    namespace: Option<&str>,
    key: Option<&str>,
) -> Result<std::sync::Arc<Shared>, StateError> {
    let namespace = namespace.unwrap_or(DEFAULT_NAMESPACE);
    check_namespace(namespace)?;
    let seal = key.map(Seal::from_hex).transpose()?;
    Ok(std::sync::Arc::new(Shared::new(backend, namespace, seal)))
}

/// The namespace when none is given.
pub const DEFAULT_NAMESPACE: &str = "default";

/// Checks a namespace: 1 to 64 characters of `[A-Za-z0-9_.-]`, so that no namespace's
/// keys can reach into another's.
pub fn check_namespace(namespace: &str) -> Result<(), StateError> {
    let fine = (1..=64).contains(&namespace.len())
        && namespace
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'_' | b'.' | b'-'));
    match fine {
        true => Ok(()),
        false => Err(StateError::Config(format!(
            "the state's namespace must be 1 to 64 characters of letters, digits, '_', '.' and '-', got {namespace:?}"
        ))),
    }
}
