//! The napi side of the gateway: `serveMcp` starts a store view's gateway over HTTP or
//! stdio and hands JS its URL and its `close`.

use std::collections::HashMap;
use std::sync::Arc;

use napi::bindgen_prelude::*;
use napi_derive::napi;
use tokio::sync::Mutex;
use tokio_util::sync::CancellationToken;

use super::failure::{Outcome, settle};
use super::store::NativeStore;
use crate::code::{Code, Coded};
use crate::serve::{self, Door, Listening, OAuthOptions, View, ViewOptions};

#[napi(object)]
pub struct NativeServeOptions {
    /// `host:port` to listen on; port 0 picks one. Without it and without `stdio`,
    /// `127.0.0.1:0`.
    pub http: Option<String>,
    /// Serve on this process's stdin and stdout instead.
    pub stdio: Option<bool>,
    pub meta: Option<bool>,
    pub name: String,
    pub version: String,
    /// Each path's bearer tokens, their values expanded.
    pub tokens: Option<HashMap<String, Vec<String>>>,
    /// Pages allowed besides loopback ones.
    pub allowed_origins: Option<Vec<String>>,
    /// Take an authorization server's access tokens instead (never with `tokens`).
    pub oauth: Option<NativeServeOAuth>,
}

#[napi(object)]
pub struct NativeServeOAuth {
    pub issuer: String,
    pub jwks_uri: Option<String>,
    pub resource: Option<String>,
    /// The scopes that open each path.
    pub scopes: Option<HashMap<String, Vec<String>>>,
}

/// A running gateway.
#[napi]
pub struct NativeGateway {
    url: Option<String>,
    stop: CancellationToken,
    listening: Arc<Mutex<Option<Listening>>>,
    /// Cancelled once the gateway has stopped (closed, or its stdio client left).
    ended: CancellationToken,
}

#[napi]
impl NativeStore {
    /// Serves the view of `agent` (`None`: the store view).
    #[napi(catch_unwind)]
    pub fn serve<'env>(
        &self,
        env: &'env Env,
        agent: Option<String>,
        options: NativeServeOptions,
    ) -> Result<PromiseRaw<'env, Outcome<NativeGateway>>> {
        let store = self.store.clone();
        settle(env, async move {
            let stop = CancellationToken::new();
            let view_options = ViewOptions {
                meta: options.meta.unwrap_or(false),
                name: options.name,
                version: options.version,
            };
            let view = View::new(store, agent, view_options, stop.clone());
            let ended = CancellationToken::new();
            if options.stdio == Some(true) {
                let done = ended.clone();
                tokio::spawn(async move {
                    let _ = serve::serve_stdio(view).await;
                    done.cancel();
                });
                return Ok(NativeGateway {
                    url: None,
                    stop,
                    listening: Arc::new(Mutex::new(None)),
                    ended,
                });
            }
            let origins = options.allowed_origins.unwrap_or_default();
            let door = match options.oauth {
                Some(oauth) => Door::oauth(
                    OAuthOptions {
                        issuer: oauth.issuer,
                        jwks_uri: oauth.jwks_uri,
                        resource: oauth.resource,
                        scopes: oauth.scopes.unwrap_or_default(),
                    },
                    origins,
                ),
                None => Door::new(options.tokens, origins),
            };
            let address = options.http.unwrap_or_else(|| "127.0.0.1:0".to_owned());
            let listening = serve::serve_http(view, &address, door).await.map_err(|e| {
                let why = format!("serveMcp: cannot listen on {address}: {e}");
                Coded::new(Code::InvalidArgument, why)
            })?;
            Ok(NativeGateway {
                url: Some(listening.url.clone()),
                stop,
                listening: Arc::new(Mutex::new(Some(listening))),
                ended,
            })
        })
    }
}

#[napi]
impl NativeGateway {
    /// `http://host:port/mcp`; none over stdio.
    #[napi(getter, catch_unwind)]
    pub fn url(&self) -> Option<String> {
        self.url.clone()
    }

    /// Stops serving: no new connections, every session and stream ended.
    #[napi(catch_unwind)]
    pub fn close<'env>(&self, env: &'env Env) -> Result<PromiseRaw<'env, ()>> {
        self.stop.cancel();
        let listening = self.listening.clone();
        let ended = self.ended.clone();
        env.spawn_future(async move {
            if let Some(listening) = listening.lock().await.take() {
                listening.close().await;
            }
            ended.cancel();
            Ok(())
        })
    }

    /// Resolves once the gateway has stopped: closed, or its stdio client gone.
    #[napi(catch_unwind)]
    pub fn ended<'env>(&self, env: &'env Env) -> Result<PromiseRaw<'env, ()>> {
        let ended = self.ended.clone();
        env.spawn_future(async move {
            ended.cancelled().await;
            Ok(())
        })
    }
}
