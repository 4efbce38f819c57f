//! A host's own `StateStore` as the fleet's backend: each operation one call of the JS
//! bridge (`js/state.js`: JSON in, `{ value }` or `{ error }` out, never rejecting). A
//! subscription is pulled: `subscribe` starts it on the JS side, then `next` resolves the
//! messages that came meanwhile (or none after a while, so that a closed feed is noticed),
//! and `unsubscribe` ends it.

use std::sync::Arc;
use std::time::Duration;

use serde_json::{Value, json};
use tokio::sync::mpsc;

use super::js_call::{JsCall, call};
use crate::state::{Backend, Feed, StateError, StateFuture};

/// How long to wait before subscribing again after a failure.
const RETRY: Duration = Duration::from_millis(500);

pub struct JsBackend(pub Arc<JsCall>);

impl JsBackend {
    async fn op(&self, request: Value) -> Result<Option<String>, StateError> {
        call(&self.0, request.to_string())
            .await
            .map_err(|reason| StateError::Unavailable(format!("the state store failed: {reason}")))
    }

    async fn follow(&self, channel: &str, feed: &mpsc::Sender<Feed>) -> Result<(), StateError> {
        self.op(json!({ "op": "subscribe", "channel": channel }))
            .await?;
        let _ = feed.send(Feed::Joined).await;
        loop {
            if feed.is_closed() {
                let _ = self
                    .op(json!({ "op": "unsubscribe", "channel": channel }))
                    .await;
                return Ok(());
            }
            let batch = self.op(json!({ "op": "next", "channel": channel })).await?;
            let messages: Vec<String> = batch
                .and_then(|text| serde_json::from_str(&text).ok())
                .unwrap_or_default();
            for message in messages {
                if feed.send(Feed::Message(message)).await.is_err() {
                    break;
                }
            }
        }
    }
}

fn ttl_ms(ttl: Option<Duration>) -> Option<u64> {
    ttl.map(|ttl| u64::try_from(ttl.as_millis()).unwrap_or(u64::MAX).max(1))
}

impl Backend for JsBackend {
    fn get(&self, key: &str) -> StateFuture<'_, Option<String>> {
        let request = json!({ "op": "get", "key": key });
        Box::pin(self.op(request))
    }

    fn set(&self, key: &str, value: String, ttl: Option<Duration>) -> StateFuture<'_, ()> {
        let request = json!({ "op": "set", "key": key, "value": value, "ttlMs": ttl_ms(ttl) });
        Box::pin(async move { self.op(request).await.map(drop) })
    }

    fn delete(&self, key: &str) -> StateFuture<'_, ()> {
        let request = json!({ "op": "delete", "key": key });
        Box::pin(async move { self.op(request).await.map(drop) })
    }

    fn compare_and_set(
        &self,
        key: &str,
        expected: Option<String>,
        value: Option<String>,
        ttl: Option<Duration>,
    ) -> StateFuture<'_, bool> {
        let request = json!({
            "op": "compareAndSet", "key": key, "expected": expected, "value": value,
            "ttlMs": ttl_ms(ttl),
        });
        Box::pin(async move { Ok(self.op(request).await?.as_deref() == Some("true")) })
    }

    fn publish(&self, channel: &str, message: String) -> StateFuture<'_, ()> {
        let request = json!({ "op": "publish", "channel": channel, "message": message });
        Box::pin(async move { self.op(request).await.map(drop) })
    }

    fn subscribe(&self, channel: &str, feed: mpsc::Sender<Feed>) -> StateFuture<'_, ()> {
        let channel = channel.to_owned();
        Box::pin(async move {
            while !feed.is_closed() {
                let Err(lost) = self.follow(&channel, &feed).await else {
                    return Ok(());
                };
                if feed.send(Feed::Lost(lost.to_string())).await.is_err() {
                    return Ok(());
                }
                tokio::time::sleep(RETRY).await;
            }
            Ok(())
        })
    }
}
