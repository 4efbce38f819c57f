//! `opts.state` across the boundary: a Redis URL with its namespace and key, opened in
//! the core; and what a store says of it (`sharedState()`).

use std::sync::Arc;

use napi::bindgen_prelude::within_runtime_if_available;
use napi::bindgen_prelude::*;
use napi_derive::napi;

use super::js_call::JsCall;
use super::state_store::JsBackend;
use crate::session::Shelves;
use crate::state::{Health, Shared, StateError, open_redis};
use crate::store::SharedShelves;

/// The state option as the JS layer resolved it (`key` already taken from
/// `TOOLNEXUS_STATE_KEY` when not given): a Redis URL, or none when the host's own
/// `StateStore` is bridged beside it.
#[napi(object)]
pub struct NativeState {
    pub url: Option<String>,
    pub namespace: Option<String>,
    pub key: Option<String>,
}

/// Where servers' public answers are shared: the fleet's state, when there is one.
pub fn shelves(shared: Option<&Arc<Shared>>) -> Option<Arc<dyn Shelves>> {
    let shared = shared?.clone();
    let shelves = within_runtime_if_available(|| SharedShelves::new(shared));
    Some(Arc::new(shelves) as Arc<dyn Shelves>)
}

/// Opens the shared state of `state`, on the host's `store` when it bridges one; its
/// errors are the config errors users read.
pub fn open(state: Option<NativeState>, store: Option<JsCall>) -> Result<Option<Arc<Shared>>> {
    let Some(state) = state else { return Ok(None) };
    let key = state.key.as_deref().filter(|k| !k.is_empty());
    let namespace = state.namespace.as_deref();
    let opened = match (store, &state.url) {
        (Some(store), _) => {
            crate::state::open(Arc::new(JsBackend(Arc::new(store))), namespace, key)
        }
        (None, Some(url)) => open_redis(url, namespace, key),
        (None, None) => Err(StateError::Config(
            "the state names no URL and no store".into(),
        )),
    };
    opened
        .map(Some)
        .map_err(|e| Error::new(Status::InvalidArg, e.to_string()))
}

/// What `sharedState()` answers.
#[napi(object)]
pub struct SharedStateStatus {
    pub status: String,
    pub reason: Option<String>,
    pub namespace: Option<String>,
    pub sign_ins: Option<bool>,
}

impl SharedStateStatus {
    pub fn of(shared: Option<&Arc<Shared>>) -> SharedStateStatus {
        let Some(shared) = shared else {
            return SharedStateStatus {
                status: "local".into(),
                reason: None,
                namespace: None,
                sign_ins: None,
            };
        };
        let (status, reason) = match shared.health() {
            Health::Connected => ("connected", None),
            Health::Connecting => (
                "unavailable",
                Some("not reached yet: the store is connecting to it".to_owned()),
            ),
            Health::Unavailable(reason) => ("unavailable", Some(reason)),
        };
        SharedStateStatus {
            status: status.into(),
            reason,
            namespace: Some(shared.namespace().to_owned()),
            sign_ins: Some(shared.seal().is_some()),
        }
    }
}
