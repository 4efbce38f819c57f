//! The rmcp client handler: what a server can ask of us or tell us during a session.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use rmcp::ClientHandler;
use rmcp::model::{
    ClientCapabilities, ClientConfig, ElicitRequestParams, ElicitResult, ElicitationCapability,
    ElicitationCreateRequestMethod, ErrorData, FormElicitationCapability, Implementation,
    ProgressToken, ProtocolVersion, UrlElicitationCapability,
};
use rmcp::service::{NotificationContext, RequestContext, RoleClient};
use serde_json::Value;
use tokio::sync::{mpsc, watch};

use super::{Hooks, Progress};
use crate::elicitation;
use crate::redact::Redactor;

/// State shared between the handler (fed by the server) and the session's calls.
pub struct Shared {
    pub server: String,
    pub hooks: Hooks,
    /// The server's secrets, hidden in what is composed from what it says.
    pub redactor: Redactor,
    /// Where each in-flight call wants its progress notifications.
    pub progress: Mutex<HashMap<ProgressToken, mpsc::UnboundedSender<Progress>>>,
    /// How many elicitations are waiting for a person; call clocks pause while it is not 0.
    pub eliciting: watch::Sender<usize>,
    /// Bumped by each `notifications/tools/list_changed`.
    pub tools_changed: watch::Sender<u64>,
    /// Counts `initialize` requests over streamable HTTP: those after the first are
    /// sessions rmcp re-established inside its transport.
    pub http_initializes: Arc<watch::Sender<u64>>,
}

impl Shared {
    pub fn new(server: &str, hooks: &Hooks, redactor: Redactor) -> Arc<Shared> {
        Arc::new(Shared {
            server: server.to_owned(),
            hooks: hooks.clone(),
            redactor,
            progress: Mutex::new(HashMap::new()),
            eliciting: watch::Sender::new(0),
            tools_changed: watch::Sender::new(0),
            http_initializes: Arc::new(watch::Sender::new(0)),
        })
    }

    /// Routes progress for `token` to the returned receiver until the guard drops.
    pub fn track_progress(
        self: &Arc<Self>,
        token: ProgressToken,
    ) -> (ProgressRoute, mpsc::UnboundedReceiver<Progress>) {
        let (tx, rx) = mpsc::unbounded_channel();
        self.routes().insert(token.clone(), tx);
        (
            ProgressRoute {
                shared: self.clone(),
                token,
            },
            rx,
        )
    }

    pub fn routes(
        &self,
    ) -> std::sync::MutexGuard<'_, HashMap<ProgressToken, mpsc::UnboundedSender<Progress>>> {
        self.progress.lock().unwrap_or_else(|e| e.into_inner())
    }
}

/// Ends a call's progress route: later notifications for its token are dropped.
pub struct ProgressRoute {
    shared: Arc<Shared>,
    token: ProgressToken,
}

impl Drop for ProgressRoute {
    fn drop(&mut self) {
        self.shared.routes().remove(&self.token);
    }
}

/// Counts an elicitation as pending while alive.
struct Eliciting<'a>(&'a watch::Sender<usize>);

impl<'a> Eliciting<'a> {
    fn start(count: &'a watch::Sender<usize>) -> Self {
        count.send_modify(|n| *n += 1);
        Eliciting(count)
    }
}

impl Drop for Eliciting<'_> {
    fn drop(&mut self) {
        self.0.send_modify(|n| *n -= 1);
    }
}

#[derive(Clone)]
pub struct Client(pub Arc<Shared>);

impl ClientHandler for Client {
    fn get_info(&self) -> ClientConfig {
        let mut capabilities = ClientCapabilities::default();
        if self.0.hooks.elicitor.is_some() {
            let mut elicitation = ElicitationCapability::new();
            elicitation.form = Some(FormElicitationCapability::default());
            elicitation.url = Some(UrlElicitationCapability::default());
            capabilities.elicitation = Some(elicitation);
        }
        let client = Implementation::new("toolnexus", env!("CARGO_PKG_VERSION"));
        ClientConfig::new(capabilities, client)
            .with_protocol_version(ProtocolVersion::LATEST_WITH_INITIALIZE)
    }

    async fn create_elicitation(
        &self,
        request: ElicitRequestParams,
        _context: RequestContext<RoleClient>,
    ) -> Result<ElicitResult, ErrorData> {
        let Some(elicitor) = &self.0.hooks.elicitor else {
            return Err(ErrorData::method_not_found::<ElicitationCreateRequestMethod>());
        };
        let params = serde_json::to_value(&request).unwrap_or(Value::Null);
        let answer = {
            let _pending = Eliciting::start(&self.0.eliciting);
            elicitor.ask(elicitation::to_request(&params)).await
        };
        serde_json::from_value(elicitation::to_result(answer.as_ref(), &params))
            .map_err(|e| ErrorData::internal_error(e.to_string(), None))
    }

    async fn on_tool_list_changed(&self, _context: NotificationContext<RoleClient>) {
        self.0.tools_changed.send_modify(|n| *n += 1);
    }
}
