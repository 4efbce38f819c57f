//! `opts.oauth` across the boundary: `onAuthorize` and a host's `TokenStore`, each as one
//! JS function the JS layer wraps (JSON text in and out, never rejecting).

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;

use napi::bindgen_prelude::*;

use serde_json::json;

use super::js_call::{JsCall, call};
use super::{ConfigSource, load_config};
use crate::auth::shared::SharedTokens;
use crate::auth::token_store::{StoreError, StoreFuture};
use crate::auth::{AuthorizeFailed, Authorizer, FileTokenStore, OAuthHooks, TokenStore};
use crate::config::{ServerState, TransportSpec};
use crate::state::Shared;

/// The hooks for `opts.oauth`: the host's store, else the fleet's (when `shared` has a
/// key), else the file store.
pub fn hooks(
    authorize: Option<JsCall>,
    tokens: Option<JsCall>,
    shared: Option<&Arc<Shared>>,
) -> OAuthHooks {
    let authorizer = authorize.map(|f| Arc::new(JsAuthorizer(Arc::new(f))) as Arc<dyn Authorizer>);
    let own = tokens.map(|f| Arc::new(JsTokenStore(Arc::new(f))) as Arc<dyn TokenStore>);
    let fleet = shared.and_then(|shared| Some((SharedTokens::new(shared.clone())?, shared)));
    match fleet {
        Some((fleet, shared)) => OAuthHooks::shared(authorizer, own, fleet, shared.clone()),
        None => OAuthHooks::new(
            authorizer,
            own.unwrap_or_else(|| Arc::new(FileTokenStore::new())),
        ),
    }
}

struct JsAuthorizer(Arc<JsCall>);

impl Authorizer for JsAuthorizer {
    fn authorize(
        &self,
        url: String,
    ) -> Pin<Box<dyn Future<Output = std::result::Result<Option<String>, AuthorizeFailed>> + Send>>
    {
        let f = self.0.clone();
        Box::pin(async move { call(&f, url).await.map_err(AuthorizeFailed) })
    }
}

struct JsTokenStore(Arc<JsCall>);

impl JsTokenStore {
    fn op(&self, op: &str, key: &str, value: Option<String>) -> StoreFuture<'_, Option<String>> {
        let arg = json!({ "op": op, "key": key, "value": value }).to_string();
        Box::pin(async move { call(&self.0, arg).await.map_err(StoreError::Host) })
    }
}

impl TokenStore for JsTokenStore {
    fn get(&self, key: &str) -> StoreFuture<'_, Option<String>> {
        self.op("get", key, None)
    }

    fn set(&self, key: &str, value: String) -> StoreFuture<'_, ()> {
        let done = self.op("set", key, Some(value));
        Box::pin(async move { done.await.map(drop) })
    }

    fn delete(&self, key: &str) -> StoreFuture<'_, ()> {
        let done = self.op("delete", key, None);
        Box::pin(async move { done.await.map(drop) })
    }
}

/// Forgets the tokens kept for remote server `server` of the config (in the fleet's state
/// when `state` shares sign-ins, else the default store), as `toolnexus auth --logout`
/// does. Resolves false when the config has no such remote server.
#[napi_derive::napi(catch_unwind, js_name = "forgetSignIn")]
pub fn forget_sign_in<'env>(
    env: &'env Env,
    source: ConfigSource,
    server: String,
    state: Option<super::state::NativeState>,
    state_store: Option<JsCall>,
) -> Result<PromiseRaw<'env, bool>> {
    let config = load_config(source)?;
    let shared = within_runtime_if_available(|| super::state::open(state, state_store))?;
    let tokens = hooks(None, None, shared.as_ref()).tokens().clone();
    let url = config
        .servers
        .into_iter()
        .find_map(|entry| match entry.state {
            ServerState::Enabled(spec) if entry.name == server => match spec.transport {
                TransportSpec::Remote(remote) => Some(remote.url),
                TransportSpec::Local(_) => None,
            },
            _ => None,
        });
    env.spawn_future(async move {
        let Some(url) = url else {
            return Ok(false);
        };
        let deleted = tokens.delete(&url).await;
        deleted.map_err(|e| Error::from_reason(e.to_string()))?;
        Ok(true)
    })
}
