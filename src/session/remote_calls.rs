//! The tool calls of a remote server, through rmcp's own request path: each call is a
//! task that sends the request, follows its progress, keeps its clock and reports to the
//! call's sink. Network round trips dwarf what this costs.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, MutexGuard};

use rmcp::Peer;
use rmcp::model::{
    CallToolRequest, CallToolRequestParams, CancelledNotification, CancelledNotificationParam,
    ClientRequest, RequestId, ServerResult,
};
use rmcp::service::{PeerRequestOptions, RoleClient};
use serde_json::{Map, Value};
use tokio::runtime::Handle;
use tokio_util::sync::CancellationToken;

use super::clock::Clock;
use super::handler::{Asking, Shared};
use super::wording::{
    aborted, bad_arguments, closed_before, closed_during, during, failed, unexpected_response,
};
use super::{CallSink, CallSpec, Failure, describe};
use crate::tool_result::{self, ToolOutput};

pub struct RemoteCalls {
    peer: Peer<RoleClient>,
    shared: Arc<Shared>,
    /// Cancelled when the session closes.
    closed: CancellationToken,
    runtime: Handle,
    /// Each running call's own cancellation.
    running: Arc<Mutex<HashMap<u64, CancellationToken>>>,
}

impl RemoteCalls {
    /// Must be called within a tokio runtime.
    pub fn new(peer: Peer<RoleClient>, shared: Arc<Shared>, closed: CancellationToken) -> Self {
        RemoteCalls {
            peer,
            shared,
            closed,
            runtime: Handle::current(),
            running: Arc::default(),
        }
    }

    fn running(&self) -> MutexGuard<'_, HashMap<u64, CancellationToken>> {
        self.running.lock().unwrap_or_else(|e| e.into_inner())
    }

    pub fn start(
        &self,
        id: u64,
        tool: &str,
        args_json: &str,
        spec: CallSpec,
        sink: Arc<dyn CallSink>,
    ) {
        let Ok(arguments) = serde_json::from_str::<Map<String, Value>>(args_json) else {
            return sink.done(id, bad_arguments(&self.shared.server, tool));
        };
        let cancel = CancellationToken::new();
        self.running().insert(id, cancel.clone());
        let call = RemoteCall {
            peer: self.peer.clone(),
            shared: self.shared.clone(),
            closed: self.closed.clone(),
            tool: tool.to_owned(),
        };
        let running = self.running.clone();
        self.runtime.spawn(async move {
            let on_progress = |progress| {
                if spec.wants_progress {
                    sink.progress(id, progress);
                }
            };
            let output = match call.run(arguments, spec, &cancel, &on_progress).await {
                Ok(output) => output,
                Err(Failure::Aborted) => aborted(&call.shared.server, &call.tool),
                Err(Failure::Reason(reason)) => failed(&call.shared.server, reason),
            };
            running
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .remove(&id);
            sink.done(id, output);
        });
    }

    pub fn abort(&self, id: u64) {
        if let Some(cancel) = self.running().get(&id) {
            cancel.cancel();
        }
    }
}

struct RemoteCall {
    peer: Peer<RoleClient>,
    shared: Arc<Shared>,
    closed: CancellationToken,
    tool: String,
}

impl RemoteCall {
    async fn run(
        &self,
        arguments: Map<String, Value>,
        spec: CallSpec,
        cancel: &CancellationToken,
        on_progress: &(dyn Fn(super::Progress) + Send + Sync),
    ) -> Result<ToolOutput, Failure> {
        let during = during(&self.tool);
        if self.closed.is_cancelled() {
            return Err(Failure::Reason(closed_before(&self.tool)));
        }
        let mut params = CallToolRequestParams::new(self.tool.clone());
        params.arguments = Some(arguments);
        let request = ClientRequest::CallToolRequest(CallToolRequest::new(params));
        // No rmcp timeout: the clock below also pauses while a person answers an elicitation.
        let handle = self
            .peer
            .send_request_with_option(request, PeerRequestOptions::no_options())
            .await
            .map_err(|e| Failure::Reason(describe(&e, &during)))?;
        let id = handle.id.clone();
        let (_route, mut progress) = self.shared.track_progress(handle.progress_token.clone());
        let mut eliciting = self.shared.eliciting.subscribe();
        let paused = |asking: &Asking| asking.pauses(Some(&id));
        let mut clock = Clock::new(
            spec.timeout,
            spec.max_total,
            paused(&eliciting.borrow_and_update()),
        );
        let response = handle.await_response();
        tokio::pin!(response);
        let response = loop {
            tokio::select! {
                biased;
                _ = cancel.cancelled() => {
                    self.send_cancelled(id, "aborted by the client").await;
                    return Err(Failure::Aborted);
                }
                _ = self.closed.cancelled() => {
                    return Err(Failure::Reason(closed_during(&self.tool)));
                }
                response = &mut response => break response,
                Some(update) = progress.recv() => {
                    clock.restart();
                    on_progress(update);
                }
                Ok(()) = eliciting.changed() => clock.set_paused(paused(&eliciting.borrow_and_update())),
                _ = clock.expiry() => {
                    let reason = clock.overrun(&during);
                    self.send_cancelled(id, "request timeout").await;
                    return Err(Failure::Reason(reason));
                }
            }
        };
        // Progress sent before the answer was routed before it arrived: deliver it first.
        while let Ok(update) = progress.try_recv() {
            on_progress(update);
        }
        let unexpected = || Failure::Reason(unexpected_response(&during));
        match response {
            Ok(ServerResult::CallToolResult(result)) => {
                tool_result::convert(&result).ok_or_else(unexpected)
            }
            Ok(ServerResult::EmptyResult(_)) => Ok(ToolOutput::text(String::new())),
            Ok(_) => Err(unexpected()),
            Err(error) => Err(Failure::Reason(describe(&error, &during))),
        }
    }

    /// Tells the server to stop working on a request whose answer nobody will read.
    async fn send_cancelled(&self, id: RequestId, reason: &str) {
        let params = CancelledNotificationParam::new(Some(id), Some(reason.to_owned()));
        let _ = self
            .peer
            .send_notification(CancelledNotification::new(params).into())
            .await;
    }
}
