//! Requests to a server whose tokens are DPoP-bound: rmcp's client hands over its token
//! as a bearer one; here it goes as `Authorization: DPoP <token>` with a fresh proof of
//! possession (`DPoP: ...`, with the token's hash). A server that answers 401
//! `use_dpop_nonce` names its nonce in a `DPoP-Nonce` header, which rmcp's client does
//! not keep: a `ping` with the same credentials fetches it, and the request is sent once
//! more with it.

use std::collections::HashMap;
use std::future::Future;
use std::sync::Arc;

use futures::stream::BoxStream;
use reqwest::header::{HeaderName, HeaderValue};
use rmcp::model::ClientJsonRpcMessage;
use rmcp::transport::streamable_http_client::{
    SseError, StreamableHttpClient, StreamableHttpError, StreamableHttpPostResponse,
    StreamableHttpResponseLimits,
};
use sse_stream::Sse;

use super::dpop::{self, Dpop};

type Headers = HashMap<HeaderName, HeaderValue>;
type EventStream = BoxStream<'static, Result<Sse, SseError>>;

#[derive(Clone)]
pub struct Bound<C> {
    pub inner: C,
    pub dpop: Arc<Dpop>,
}

/// The credentials of one request: the bearer token rmcp would send, or none, and the
/// headers that carry it DPoP-bound instead.
struct Presented {
    auth_header: Option<String>,
    headers: Headers,
}

impl<C> Bound<C> {
    fn present(
        &self,
        method: &str,
        uri: &str,
        token: Option<String>,
        headers: &Headers,
    ) -> Presented {
        let mut headers = headers.clone();
        let (Some(token), true) = (token.clone(), self.dpop.active()) else {
            return Presented {
                auth_header: token,
                headers,
            };
        };
        let proof = self.dpop.proof(method, uri, Some(&token));
        let values = (
            HeaderValue::try_from(format!("DPoP {token}")),
            proof.map(HeaderValue::try_from),
        );
        if let (Ok(authorization), Some(Ok(proof))) = values {
            headers.insert(reqwest::header::AUTHORIZATION, authorization);
            headers.insert(HeaderName::from_static(dpop::PROOF), proof);
            return Presented {
                auth_header: None,
                headers,
            };
        }
        Presented {
            auth_header: Some(token),
            headers,
        }
    }

    /// After a refusal asking for a nonce: fetches it with a `ping` bearing the same
    /// token; whether a new one was learned (worth sending the request again).
    async fn fetch_nonce<E>(
        &self,
        uri: &str,
        token: Option<&str>,
        refused: &StreamableHttpError<E>,
    ) -> bool
    where
        E: std::error::Error + Send + Sync + 'static,
    {
        let asks = matches!(refused, StreamableHttpError::AuthRequired(e) if dpop::asks_nonce(&e.www_authenticate_header));
        let (Some(token), true) = (token, asks && self.dpop.active()) else {
            return false;
        };
        let Some(proof) = self.dpop.proof("POST", uri, Some(token)) else {
            return false;
        };
        let Ok(client) = crate::net::client_builder().build() else {
            return false;
        };
        let ping = r#"{"jsonrpc":"2.0","id":"dpop-nonce","method":"ping"}"#;
        let sent = client
            .post(uri)
            .header(reqwest::header::AUTHORIZATION, format!("DPoP {token}"))
            .header(dpop::PROOF, proof)
            .header(reqwest::header::CONTENT_TYPE, "application/json")
            .header(
                reqwest::header::ACCEPT,
                "application/json, text/event-stream",
            )
            .body(ping)
            .send()
            .await;
        let nonce = sent.ok().and_then(|response| {
            let nonce = response.headers().get(dpop::NONCE)?;
            nonce.to_str().ok().map(str::to_owned)
        });
        nonce.is_some_and(|nonce| self.dpop.learn_nonce(true, uri, &nonce))
    }
}

impl<C> Bound<C>
where
    C: StreamableHttpClient + Clone + Send + Sync + 'static,
{
    /// Runs `send` with the request's credentials presented, once more with a nonce the
    /// server asks for.
    async fn sending<T, F, Fut>(
        &self,
        (method, uri): (&str, &str),
        token: Option<String>,
        headers: &Headers,
        send: F,
    ) -> Result<T, StreamableHttpError<C::Error>>
    where
        F: Fn(Option<String>, Headers) -> Fut,
        Fut: Future<Output = Result<T, StreamableHttpError<C::Error>>>,
    {
        let mut retried = false;
        loop {
            let presented = self.present(method, uri, token.clone(), headers);
            match send(presented.auth_header, presented.headers).await {
                Err(refused)
                    if !retried && self.fetch_nonce(uri, token.as_deref(), &refused).await =>
                {
                    retried = true;
                }
                answer => return answer,
            }
        }
    }
}

impl<C> StreamableHttpClient for Bound<C>
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
    ) -> Result<StreamableHttpPostResponse, StreamableHttpError<C::Error>> {
        self.sending(
            ("POST", &uri),
            auth_header,
            &custom_headers,
            |auth, headers| {
                let (message, session) = (message.clone(), session_id.clone());
                self.inner
                    .post_message(uri.clone(), message, session, auth, headers)
            },
        )
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
    ) -> Result<StreamableHttpPostResponse, StreamableHttpError<C::Error>> {
        self.sending(
            ("POST", &uri),
            auth_header,
            &custom_headers,
            |auth, headers| {
                let (message, session) = (message.clone(), session_id.clone());
                let inner = &self.inner;
                inner.post_message_with_max_sse_event_size(
                    uri.clone(),
                    message,
                    session,
                    auth,
                    headers,
                    max_sse_event_size,
                )
            },
        )
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
    ) -> Result<StreamableHttpPostResponse, StreamableHttpError<C::Error>> {
        self.sending(
            ("POST", &uri),
            auth_header,
            &custom_headers,
            |auth, headers| {
                let (message, session) = (message.clone(), session_id.clone());
                let inner = &self.inner;
                inner.post_message_with_response_limits(
                    uri.clone(),
                    message,
                    session,
                    auth,
                    headers,
                    limits,
                )
            },
        )
        .await
    }

    async fn delete_session(
        &self,
        uri: Arc<str>,
        session_id: Arc<str>,
        auth_header: Option<String>,
        custom_headers: Headers,
    ) -> Result<(), StreamableHttpError<C::Error>> {
        self.sending(
            ("DELETE", &uri),
            auth_header,
            &custom_headers,
            |auth, headers| {
                self.inner
                    .delete_session(uri.clone(), session_id.clone(), auth, headers)
            },
        )
        .await
    }

    async fn get_stream(
        &self,
        uri: Arc<str>,
        session_id: Option<Arc<str>>,
        last_event_id: Option<String>,
        auth_header: Option<String>,
        custom_headers: Headers,
    ) -> Result<EventStream, StreamableHttpError<C::Error>> {
        self.sending(
            ("GET", &uri),
            auth_header,
            &custom_headers,
            |auth, headers| {
                let (session, last) = (session_id.clone(), last_event_id.clone());
                self.inner
                    .get_stream(uri.clone(), session, last, auth, headers)
            },
        )
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
    ) -> Result<EventStream, StreamableHttpError<C::Error>> {
        self.sending(
            ("GET", &uri),
            auth_header,
            &custom_headers,
            |auth, headers| {
                let (session, last) = (session_id.clone(), last_event_id.clone());
                let inner = &self.inner;
                inner.get_stream_with_max_sse_event_size(
                    uri.clone(),
                    session,
                    last,
                    auth,
                    headers,
                    max_sse_event_size,
                )
            },
        )
        .await
    }
}
