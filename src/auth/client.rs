//! A `StreamableHttpClient` that signs in when a server asks: rmcp's `AuthClient` sends
//! the bearer token and refreshes it (before expiry, and once on a 401); when the server
//! still refuses (a 401, or a 403 `insufficient_scope`), this runs a sign-in and retries,
//! a bounded number of times, so that a server that keeps refusing fails rather than
//! looping.

use std::collections::HashMap;
use std::future::Future;
use std::sync::Arc;

use futures::stream::BoxStream;
use reqwest::header::{HeaderName, HeaderValue};
use rmcp::model::ClientJsonRpcMessage;
use rmcp::transport::auth::{AuthClient, AuthError};
use rmcp::transport::streamable_http_client::{
    SseError, StreamableHttpClient, StreamableHttpError, StreamableHttpPostResponse,
    StreamableHttpResponseLimits,
};
use sse_stream::Sse;
use tokio::sync::OnceCell;

use super::bound::Bound;
use super::flow::{Challenge, Outcome, SignIn};
use super::{NeedsSignIn, OAuthHooks};
use crate::config::OAuthSpec;

/// Sign-ins one request may cause: a first one and a step-up or two.
const MAX_SIGN_INS: usize = 3;

pub struct OAuthClient<C> {
    inner: C,
    sign_in: Arc<SignIn>,
    /// rmcp's client around `inner` (DPoP-bound when the sign-in is), with the stored
    /// tokens; built on first use.
    authed: Arc<OnceCell<AuthClient<Bound<C>>>>,
}

impl<C: Clone> Clone for OAuthClient<C> {
    fn clone(&self) -> Self {
        OAuthClient {
            inner: self.inner.clone(),
            sign_in: self.sign_in.clone(),
            authed: self.authed.clone(),
        }
    }
}

type Headers = HashMap<HeaderName, HeaderValue>;
type Result<T, E> = std::result::Result<T, StreamableHttpError<E>>;

impl<C> OAuthClient<C>
where
    C: StreamableHttpClient + Clone + Send + Sync + 'static,
{
    /// `spec` is `None` for `"oauth": false`: refusals then pass through as they are.
    pub fn new(
        inner: C,
        server: &str,
        url: &str,
        spec: Option<OAuthSpec>,
        hooks: OAuthHooks,
    ) -> Self {
        OAuthClient {
            inner,
            sign_in: Arc::new(SignIn::new(server, url, spec, hooks)),
            authed: Arc::default(),
        }
    }

    async fn authed(&self) -> std::result::Result<&AuthClient<Bound<C>>, AuthError> {
        self.authed
            .get_or_try_init(|| async {
                let manager = self.sign_in.restore().await?;
                let inner = self.inner.clone();
                let bound = Bound {
                    inner,
                    dpop: self.sign_in.dpop.clone(),
                };
                Ok(AuthClient::new(bound, manager))
            })
            .await
    }

    /// Runs `call` through rmcp's client; signs in and runs it again when refused.
    async fn signing_in<'a, T, F, Fut>(&'a self, call: F) -> Result<T, C::Error>
    where
        F: Fn(&'a AuthClient<Bound<C>>) -> Fut,
        Fut: Future<Output = Result<T, C::Error>>,
    {
        let authed = self.authed().await?;
        if !self.sign_in.enabled() {
            return call(authed).await;
        }
        let mut sign_ins = 0;
        loop {
            let seen = self.sign_in.generation();
            let refused = call(authed).await;
            let challenge = match &refused {
                Err(StreamableHttpError::AuthRequired(refusal)) => Challenge {
                    header: Some(refusal.www_authenticate_header.clone()),
                    step_up: false,
                },
                Err(StreamableHttpError::InsufficientScope(refusal)) => Challenge {
                    header: Some(refusal.www_authenticate_header.clone()),
                    step_up: true,
                },
                // A refresh that failed for another reason than a rejected token (the
                // rejected ones are sent out without a token and answered 401).
                Err(StreamableHttpError::Auth(AuthError::TokenRefreshFailed(_))) => Challenge {
                    header: None,
                    step_up: false,
                },
                _ => return refused,
            };
            if sign_ins == MAX_SIGN_INS {
                return Err(AuthError::AuthorizationFailed(format!(
                    "still refused access after {MAX_SIGN_INS} sign-ins"
                ))
                .into());
            }
            sign_ins += 1;
            let outcome = self
                .sign_in
                .run(seen, challenge, &authed.auth_manager)
                .await
                .map_err(|e| NeedsSignIn::or_auth(e, self.sign_in.server()))?;
            if let Outcome::NoOAuth = outcome {
                return refused;
            }
        }
    }
}

type EventStream = BoxStream<'static, std::result::Result<Sse, SseError>>;

impl<C> StreamableHttpClient for OAuthClient<C>
where
    C: StreamableHttpClient + Clone + Send + Sync + 'static,
{
    type Error = C::Error;

    async fn post_message(
        &self,
        uri: Arc<str>,
        message: ClientJsonRpcMessage,
        session_id: Option<Arc<str>>,
        auth_header: Option<String>,
        custom_headers: Headers,
    ) -> Result<StreamableHttpPostResponse, C::Error> {
        self.signing_in(|client| {
            client.post_message(
                uri.clone(),
                message.clone(),
                session_id.clone(),
                auth_header.clone(),
                custom_headers.clone(),
            )
        })
        .await
    }

    async fn post_message_with_max_sse_event_size(
        &self,
        uri: Arc<str>,
        message: ClientJsonRpcMessage,
        session_id: Option<Arc<str>>,
        auth_header: Option<String>,
        custom_headers: Headers,
        max_sse_event_size: usize,
    ) -> Result<StreamableHttpPostResponse, C::Error> {
        self.signing_in(|client| {
            client.post_message_with_max_sse_event_size(
                uri.clone(),
                message.clone(),
                session_id.clone(),
                auth_header.clone(),
                custom_headers.clone(),
                max_sse_event_size,
            )
        })
        .await
    }

    async fn post_message_with_response_limits(
        &self,
        uri: Arc<str>,
        message: ClientJsonRpcMessage,
        session_id: Option<Arc<str>>,
        auth_header: Option<String>,
        custom_headers: Headers,
        limits: StreamableHttpResponseLimits,
    ) -> Result<StreamableHttpPostResponse, C::Error> {
        self.signing_in(|client| {
            client.post_message_with_response_limits(
                uri.clone(),
                message.clone(),
                session_id.clone(),
                auth_header.clone(),
                custom_headers.clone(),
                limits,
            )
        })
        .await
    }

    async fn delete_session(
        &self,
        uri: Arc<str>,
        session_id: Arc<str>,
        auth_header: Option<String>,
        custom_headers: Headers,
    ) -> Result<(), C::Error> {
        // Ending a session never asks a person to sign in.
        let client = self.authed().await?;
        client
            .delete_session(uri, session_id, auth_header, custom_headers)
            .await
    }

    async fn get_stream(
        &self,
        uri: Arc<str>,
        session_id: Option<Arc<str>>,
        last_event_id: Option<String>,
        auth_header: Option<String>,
        custom_headers: Headers,
    ) -> Result<EventStream, C::Error> {
        self.signing_in(|client| {
            client.get_stream(
                uri.clone(),
                session_id.clone(),
                last_event_id.clone(),
                auth_header.clone(),
                custom_headers.clone(),
            )
        })
        .await
    }

    async fn get_stream_with_max_sse_event_size(
        &self,
        uri: Arc<str>,
        session_id: Option<Arc<str>>,
        last_event_id: Option<String>,
        auth_header: Option<String>,
        custom_headers: Headers,
        max_sse_event_size: usize,
    ) -> Result<EventStream, C::Error> {
        self.signing_in(|client| {
            client.get_stream_with_max_sse_event_size(
                uri.clone(),
                session_id.clone(),
                last_event_id.clone(),
                auth_header.clone(),
                custom_headers.clone(),
                max_sse_event_size,
            )
        })
        .await
    }
}
