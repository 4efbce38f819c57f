//! Requests to a remote server, through rmcp's request path, which keeps the HTTP session,
//! the era's headers and the event streams. Each request is a task that waits for its
//! answer and hands it to the engine as JSON text, so that it is decoded, timed and
//! retried in the same place as a local server's. A streamable HTTP transport keeps that
//! text as the server wrote it (`http::Kept`), since rmcp's decoding drops what its model
//! does not name; rmcp's answer only says that it came. Network round trips dwarf what
//! this costs.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, MutexGuard};

use rmcp::Peer;
use rmcp::model::{
    CancelledNotification, CancelledNotificationParam, ClientRequest, CustomRequest,
};
use rmcp::service::{PeerRequestOptions, RoleClient, ServiceError};
use serde_json::Value;
use serde_json::value::to_raw_value;
use tokio::runtime::Handle;
use tokio::sync::oneshot;

use super::{Engine, NotSent, Wire};
use crate::lock::lock;
use crate::session::error::{Broken, Reply};
use crate::session::handler::Shared;
use crate::transport::http;

pub struct PeerWire {
    peer: Peer<RoleClient>,
    shared: Arc<Shared>,
    runtime: Handle,
    /// Each request in flight, and how to tell it to stop (with the reason).
    running: Arc<Mutex<HashMap<u64, oneshot::Sender<&'static str>>>>,
}

impl PeerWire {
    /// Must be called within a tokio runtime.
    pub fn new(peer: Peer<RoleClient>, shared: Arc<Shared>) -> Self {
        PeerWire {
            peer,
            shared,
            runtime: Handle::current(),
            running: Arc::default(),
        }
    }

    fn running(&self) -> MutexGuard<'_, HashMap<u64, oneshot::Sender<&'static str>>> {
        lock(&self.running)
    }
}

/// The request as rmcp sends it; a 2025 task-augmented call as it was written, since
/// rmcp's `tools/call` has no `task` member to keep it in.
fn client_request(method: &str, params: &str) -> Result<ClientRequest, serde_json::Error> {
    let params: Value = serde_json::from_str(params)?;
    if params.get("task").is_some() {
        return Ok(ClientRequest::CustomRequest(CustomRequest::new(
            method,
            Some(params),
        )));
    }
    serde_json::from_value(serde_json::json!({ "method": method, "params": params }))
}

impl Wire for PeerWire {
    fn send(
        &self,
        engine: &Arc<Engine>,
        id: u64,
        method: &str,
        params: String,
    ) -> Result<(), NotSent> {
        let request = client_request(method, &params).map_err(|error| NotSent::Compose {
            method: method.to_owned(),
            error,
        })?;
        let kept = http::engine_reads(&request).then(|| self.shared.kept.clone());
        let (stop, stopped) = oneshot::channel();
        self.running().insert(id, stop);
        let (peer, shared, engine) = (self.peer.clone(), self.shared.clone(), engine.clone());
        let running = self.running.clone();
        self.runtime.spawn(async move {
            let options = PeerRequestOptions::no_options();
            let handle = match peer.send_request_with_option(request, options).await {
                Ok(handle) => handle,
                Err(error) => {
                    lock(&running).remove(&id);
                    return engine.reply(id, Reply::Broken(Broken::Service(&error)));
                }
            };
            let request_id = handle.id.clone();
            if let Some(kept) = &kept {
                kept.awaiting(request_id.clone());
            }
            engine.bind(id, request_id.clone());
            let progress = {
                let engine = Arc::downgrade(&engine);
                shared.route_progress(
                    handle.progress_token.clone(),
                    Box::new(move |update| {
                        if let Some(engine) = engine.upgrade() {
                            engine.progress(id, update);
                        }
                    }),
                )
            };
            let response = tokio::select! {
                response = handle.await_response() => response,
                Ok(reason) = stopped => {
                    drop(progress);
                    if let Some(kept) = &kept {
                        kept.take(&request_id);
                    }
                    let params = CancelledNotificationParam::new(Some(request_id), Some(reason.into()));
                    let _ = peer.send_notification(CancelledNotification::new(params).into()).await;
                    return;
                }
            };
            engine.hold_route(id, Box::new(progress));
            lock(&running).remove(&id);
            let kept = kept.and_then(|kept| kept.take(&request_id));
            match response {
                // The result as the server wrote it, else (not kept: another transport, or
                // an answer the transport did not read) as rmcp decoded it.
                Ok(result) => match kept.or_else(|| to_raw_value(&result).ok()) {
                    Some(raw) => engine.reply(id, Reply::Result(&raw)),
                    None => engine.reply(id, Reply::Broken(Broken::Unexpected)),
                },
                Err(ServiceError::McpError(error)) => {
                    let (code, message) = (Some(error.code.0), &error.message);
                    engine.reply(id, Reply::Error { code, message });
                }
                // rmcp ends a request this way when its response stream ends unanswered.
                Err(error @ ServiceError::TransportClosed) => {
                    engine.reply(id, Reply::Interrupted(Broken::Service(&error)))
                }
                Err(error) => engine.reply(id, Reply::Broken(Broken::Service(&error))),
            }
        });
        Ok(())
    }

    fn cancel(&self, id: u64, reason: &'static str) {
        if let Some(stop) = self.running().remove(&id) {
            let _ = stop.send(reason);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_task_augmented_call_keeps_its_task() {
        let request = client_request("tools/call", r#"{"name":"t","arguments":{},"task":{}}"#);
        let json = serde_json::to_value(request.expect("composed")).expect("JSON");
        assert_eq!(json["params"]["task"], serde_json::json!({}));
        let plain = client_request("tools/call", r#"{"name":"t","arguments":{}}"#);
        assert!(matches!(plain, Ok(ClientRequest::CallToolRequest(_))));
    }
}
