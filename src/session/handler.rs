//! The rmcp client handler: what a server can ask of us or tell us during a session.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, OnceLock, Weak};

use rmcp::ClientHandler;
use rmcp::model::{
    ClientCapabilities, ClientConfig, ElicitRequestParams, ElicitResult, ElicitationCapability,
    ElicitationCreateRequestMethod, ErrorData, FormElicitationCapability, Implementation,
    ProgressToken, ProtocolVersion, RequestId, TASKS_EXTENSION_ID, UrlElicitationCapability,
};
use rmcp::service::{NotificationContext, RequestContext, RoleClient};
use serde_json::Value;
use tokio::sync::{broadcast, watch};

use super::cache::{Responses, Shelf};
use super::engine::request::Progress;
use super::hooks::Hooks;
use super::subscribe::UpdateTo;
use crate::elicitation::Elicitor;
use crate::lock::lock;
use crate::redact::Redactor;
use crate::transport::http::Kept;

/// State shared between the handler (fed by the server) and the session's calls.
pub struct Shared {
    pub server: String,
    pub hooks: Hooks,
    /// The server's secrets, hidden in what is composed from what it says.
    pub redactor: Redactor,
    /// Where each remote request in flight wants its progress notifications (rmcp chooses
    /// their tokens).
    pub progress: Mutex<HashMap<ProgressToken, Arc<ProgressTo>>>,
    /// The elicitations waiting for a person; the clocks of the calls they belong to pause.
    pub eliciting: watch::Sender<Asking>,
    /// The request each elicitation came for, when the transport tells (a streamable
    /// HTTP server sends it on the response stream of that request's POST).
    pub related: Arc<Mutex<HashMap<RequestId, RequestId>>>,
    /// The answers the engine awaits from a remote server: a streamable HTTP transport
    /// keeps them as written.
    pub kept: Kept,
    /// What the server logs (`notifications/message`), its secrets redacted, for whoever
    /// listens (a gateway); a listener that falls behind misses messages.
    pub logs: broadcast::Sender<Arc<Logged>>,
    /// Bumped by each `notifications/tools/list_changed`.
    pub tools_changed: watch::Sender<u64>,
    /// The 2025-era resource subscribers: URI, route, where its updates go.
    pub updates: Mutex<Vec<(String, u64, UpdateTo)>>,
    /// Set once the transport has ended (its stream closed, or rmcp let go of it).
    pub transport_ended: watch::Sender<bool>,
    /// Counts `initialize` requests over streamable HTTP: those after the first are
    /// sessions rmcp re-established inside its transport.
    pub http_initializes: Arc<watch::Sender<u64>>,
    /// The answers kept while their server says they are fresh.
    pub responses: Arc<Responses>,
    /// Where public answers are shared beyond this session, if the host has a place.
    pub shelf: Option<Arc<dyn Shelf>>,
    /// The session's requests in flight, once its engine runs.
    pub calls: OnceLock<Weak<dyn Calls>>,
}

/// The requests in flight, as the handler asks after them.
pub trait Calls: Send + Sync {
    /// Who answers the questions of the call with the transport's request id `wire`
    /// (`None`: the transport does not tell), if that call brought its own elicitor.
    fn elicitor_of(&self, wire: Option<&RequestId>) -> Option<Arc<dyn Elicitor>>;
}

/// The log messages a listener may fall behind by before it misses some.
const LOGS_BEHIND: usize = 64;

/// One message a server logged.
#[derive(Debug)]
pub struct Logged {
    pub level: String,
    pub data: Value,
}

impl Shared {
    pub fn new(
        server: &str,
        hooks: &Hooks,
        redactor: Redactor,
        shelf: Option<Arc<dyn Shelf>>,
    ) -> Arc<Shared> {
        Arc::new(Shared {
            server: server.to_owned(),
            hooks: hooks.clone(),
            redactor,
            progress: Mutex::new(HashMap::new()),
            eliciting: watch::Sender::new(Asking::default()),
            related: Arc::default(),
            kept: Kept::default(),
            logs: broadcast::Sender::new(LOGS_BEHIND),
            tools_changed: watch::Sender::new(0),
            updates: Mutex::default(),
            transport_ended: watch::Sender::new(false),
            http_initializes: Arc::new(watch::Sender::new(0)),
            responses: Arc::default(),
            shelf,
            calls: OnceLock::new(),
        })
    }

    /// The elicitor the call with request id `wire` brought, if it brought one.
    fn own_elicitor(&self, wire: Option<&RequestId>) -> Option<Arc<dyn Elicitor>> {
        let calls = self.calls.get().and_then(Weak::upgrade)?;
        calls.elicitor_of(wire)
    }

    /// Routes progress for `token` to `to` until the guard drops.
    pub fn route_progress(
        self: &Arc<Self>,
        token: ProgressToken,
        to: Box<ProgressTo>,
    ) -> ProgressRoute {
        self.routes().insert(token.clone(), Arc::from(to));
        ProgressRoute {
            shared: self.clone(),
            token,
        }
    }

    /// Where progress for `token` goes, if anywhere.
    pub fn progress_route(&self, token: &ProgressToken) -> Option<Arc<ProgressTo>> {
        self.routes().get(token).cloned()
    }

    fn routes(&self) -> std::sync::MutexGuard<'_, HashMap<ProgressToken, Arc<ProgressTo>>> {
        lock(&self.progress)
    }
}

/// Takes one request's progress.
pub type ProgressTo = dyn Fn(Progress) + Send + Sync;

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

/// Elicitations waiting for a person: those known to belong to a call, by its request
/// id, and the others, which pause every call since any may be theirs.
#[derive(Debug, Default, Clone)]
pub struct Asking {
    anyone: usize,
    calls: HashMap<RequestId, usize>,
}

impl Asking {
    /// Whether the clock of the call with `request` id (`None`: unknown) stands still.
    pub fn pauses(&self, request: Option<&RequestId>) -> bool {
        self.anyone > 0 || request.is_some_and(|r| self.calls.contains_key(r))
    }

    fn count(&mut self, call: Option<&RequestId>, up: bool) {
        let count = match call {
            Some(call) => self.calls.entry(call.clone()).or_default(),
            None => &mut self.anyone,
        };
        if up {
            *count += 1;
        } else {
            *count -= 1;
        }
        if let Some(call) = call
            && self.calls.get(call) == Some(&0)
        {
            self.calls.remove(call);
        }
    }
}

/// Counts an elicitation as pending while alive.
struct Eliciting<'a> {
    asking: &'a watch::Sender<Asking>,
    call: Option<RequestId>,
}

impl<'a> Eliciting<'a> {
    fn start(asking: &'a watch::Sender<Asking>, call: Option<RequestId>) -> Self {
        asking.send_modify(|a| a.count(call.as_ref(), true));
        Eliciting { asking, call }
    }
}

impl Drop for Eliciting<'_> {
    fn drop(&mut self) {
        self.asking
            .send_modify(|a| a.count(self.call.as_ref(), false));
    }
}

#[derive(Clone)]
pub struct Client(pub Arc<Shared>);

impl ClientHandler for Client {
    fn get_info(&self) -> ClientConfig {
        // Any call may be answered with a task (2026-07-28: the server decides).
        let mut capabilities = ClientCapabilities::default();
        let tasks = (TASKS_EXTENSION_ID.to_owned(), Default::default());
        capabilities.extensions = Some([tasks].into());
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
        context: RequestContext<RoleClient>,
    ) -> Result<ElicitResult, ErrorData> {
        // Declared only with the host's elicitor, which answers what no call does.
        let Some(host) = self.0.hooks.elicitor.clone() else {
            return Err(ErrorData::method_not_found::<ElicitationCreateRequestMethod>());
        };
        let params = serde_json::to_value(&request).unwrap_or(Value::Null);
        let call = lock(&self.0.related).remove(&context.id);
        let elicitor = self.0.own_elicitor(call.as_ref()).unwrap_or(host);
        let result = {
            let _pending = Eliciting::start(&self.0.eliciting, call);
            elicitor.elicit(params).await
        };
        serde_json::from_value(result).map_err(|e| ErrorData::internal_error(e.to_string(), None))
    }

    async fn on_tool_list_changed(&self, _context: NotificationContext<RoleClient>) {
        self.0.tools_changed.send_modify(|n| *n += 1);
    }
}
