//! One view served: the handler rmcp runs for each downstream session (2025-11-25) or
//! request (2026-07-28, stateless), over a store view. It holds no state of its own but
//! what a session starts (following list changes), which ends when rmcp drops it.

use std::sync::{Arc, Mutex};

use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CancelTaskParams, CompleteRequestParams,
    CompleteResult, GetPromptRequestParams, GetPromptResponse, GetTaskParams, GetTaskResult,
    Implementation, InitializeResult, ListPromptsResult, ListResourceTemplatesResult,
    ListResourcesResult, ListToolsResult, PaginatedRequestParams, ReadResourceRequestParams,
    ReadResourceResponse, ResourceUpdatedNotificationParam, ServerCapabilities,
    SubscribeRequestParams, SubscriptionFilter, TASKS_EXTENSION_ID, UnsubscribeRequestParams,
    UpdateTaskParams,
};
use rmcp::service::{NotificationContext, RequestContext, SubscriptionContext};
use rmcp::{ErrorData, RoleServer, ServerHandler};
use tokio::sync::mpsc;
use tokio_util::sync::{CancellationToken, DropGuard};

use super::names::Names;
use super::parked::Parking;
use super::routes::Routes;
use super::shared::{Shared, ViewOptions};
use super::subscriptions::{self, Subscriptions};
use super::tasks::Tasks;
use super::{changes, logs, offers, tools};
use crate::store::Store;

/// A store view as an MCP server. Cheap to clone; each downstream session takes its
/// own (`session`).
#[derive(Clone)]
pub struct View {
    pub(super) shared: Arc<Shared>,
    /// Cancelled when the last clone of this session's handler is dropped.
    _ended: Arc<DropGuard>,
    session: CancellationToken,
    /// This session's resource subscriptions (2025-11-25).
    subscriptions: Arc<Subscriptions>,
    /// The lowest level of log message this session wants (2025-11-25).
    log_level: Arc<logs::Level>,
}

impl View {
    pub fn new(
        store: Arc<Store>,
        agent: Option<String>,
        options: ViewOptions,
        closing: CancellationToken,
    ) -> View {
        let shared = Arc::new(Shared {
            store,
            agent,
            options,
            tools: Names::default(),
            offers: Routes::default(),
            instructions: Mutex::default(),
            closing,
            parking: Parking::default(),
            tasks: Tasks::default(),
        });
        View::of(shared)
    }

    fn of(shared: Arc<Shared>) -> View {
        let session = shared.closing.child_token();
        View {
            shared,
            _ended: Arc::new(session.clone().drop_guard()),
            session,
            subscriptions: Arc::default(),
            log_level: Arc::default(),
        }
    }

    /// A handler for one more downstream session.
    pub fn session(&self) -> View {
        View::of(self.shared.clone())
    }

    pub(super) fn agent(&self) -> Option<&str> {
        self.shared.agent.as_deref()
    }
}

impl ServerHandler for View {
    #[allow(
        deprecated,
        reason = "logging is the 2025-11-25 revision's, still served"
    )]
    fn get_info(&self) -> InitializeResult {
        let mut capabilities = ServerCapabilities::builder()
            .enable_tools()
            .enable_tool_list_changed()
            .enable_resources()
            .enable_resources_list_changed()
            .enable_resources_subscribe()
            .enable_prompts()
            .enable_prompts_list_changed()
            .enable_completions()
            .enable_logging()
            .build();
        // Calls of tools that may run as tasks become the gateway's tasks (see `tasks`).
        capabilities.extensions =
            Some([(TASKS_EXTENSION_ID.to_owned(), Default::default())].into());
        let mut info = InitializeResult::new(capabilities);
        let options = &self.shared.options;
        info.server_info = Implementation::new(&options.name, &options.version);
        info.instructions = offers::instructions(&self.shared);
        info
    }

    async fn list_tools(
        &self,
        _: Option<PaginatedRequestParams>,
        _: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        tools::list(&self.shared)
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        tools::call(&self.shared, request, context).await
    }

    async fn list_resources(
        &self,
        _: Option<PaginatedRequestParams>,
        context: RequestContext<RoleServer>,
    ) -> Result<ListResourcesResult, ErrorData> {
        offers::list_resources(&self.shared, &context.ct).await
    }

    async fn list_resource_templates(
        &self,
        _: Option<PaginatedRequestParams>,
        context: RequestContext<RoleServer>,
    ) -> Result<ListResourceTemplatesResult, ErrorData> {
        offers::list_templates(&self.shared, &context.ct).await
    }

    async fn read_resource(
        &self,
        request: ReadResourceRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<ReadResourceResponse, ErrorData> {
        let read = offers::read(&self.shared, &request.uri, &context.ct).await;
        read.map(ReadResourceResponse::Complete)
    }

    async fn list_prompts(
        &self,
        _: Option<PaginatedRequestParams>,
        context: RequestContext<RoleServer>,
    ) -> Result<ListPromptsResult, ErrorData> {
        offers::list_prompts(&self.shared, &context.ct).await
    }

    async fn get_prompt(
        &self,
        request: GetPromptRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<GetPromptResponse, ErrorData> {
        let got = offers::get_prompt(&self.shared, request, &context.ct).await;
        got.map(GetPromptResponse::Complete)
    }

    async fn complete(
        &self,
        request: CompleteRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CompleteResult, ErrorData> {
        offers::complete(&self.shared, request, &context.ct).await
    }

    #[allow(
        deprecated,
        reason = "the 2025-11-25 revision's subscriptions, still served"
    )]
    async fn subscribe(
        &self,
        request: SubscribeRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<(), ErrorData> {
        if self.subscriptions.full() {
            let why = format!("at most {} subscriptions per session", subscriptions::MAX);
            return Err(ErrorData::invalid_request(why, None));
        }
        let end = self.session.child_token();
        let (updated, mut updates) = mpsc::channel(16);
        subscriptions::follow(&self.shared, &request.uri, updated, end.clone()).await?;
        self.subscriptions.keep(request.uri, end);
        let peer = context.peer;
        tokio::spawn(async move {
            while let Some(uri) = updates.recv().await {
                let update = ResourceUpdatedNotificationParam::new(uri);
                let _ = peer.notify_resource_updated(update).await;
            }
        });
        Ok(())
    }

    #[allow(
        deprecated,
        reason = "the 2025-11-25 revision's subscriptions, still served"
    )]
    async fn unsubscribe(
        &self,
        request: UnsubscribeRequestParams,
        _: RequestContext<RoleServer>,
    ) -> Result<(), ErrorData> {
        self.subscriptions.end(&request.uri);
        Ok(())
    }

    #[allow(
        deprecated,
        reason = "logging is the 2025-11-25 revision's, still served"
    )]
    async fn set_level(
        &self,
        request: rmcp::model::SetLevelRequestParams,
        _: RequestContext<RoleServer>,
    ) -> Result<(), ErrorData> {
        self.log_level.set(request.level);
        Ok(())
    }

    async fn on_initialized(&self, context: NotificationContext<RoleServer>) {
        let (shared, session) = (self.shared.clone(), self.session.clone());
        logs::follow(
            shared.clone(),
            context.peer.clone(),
            self.log_level.clone(),
            session.clone(),
        );
        changes::follow(shared, context.peer, session);
    }

    fn accepted_subscription_filter(
        &self,
        requested: &SubscriptionFilter,
    ) -> Option<SubscriptionFilter> {
        Some(changes::accepted(requested))
    }

    async fn get_task(
        &self,
        request: GetTaskParams,
        _: RequestContext<RoleServer>,
    ) -> Result<GetTaskResult, ErrorData> {
        self.shared.tasks.get(&request.task_id)
    }

    async fn update_task(
        &self,
        request: UpdateTaskParams,
        _: RequestContext<RoleServer>,
    ) -> Result<(), ErrorData> {
        let tasks = &self.shared.tasks;
        tasks.update(&request.task_id, request.input_responses)
    }

    async fn cancel_task(
        &self,
        request: CancelTaskParams,
        _: RequestContext<RoleServer>,
    ) -> Result<(), ErrorData> {
        self.shared.tasks.cancel(&request.task_id)
    }

    async fn listen(&self, context: SubscriptionContext) -> Result<(), ErrorData> {
        changes::listen(&self.shared, context).await;
        Ok(())
    }
}
