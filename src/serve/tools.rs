//! A view's tools as the gateway lists and calls them: named as the view names them,
//! every member the server sent kept, or the meta-tools in meta mode.

use rmcp::model::{CallToolRequestParams, CallToolResponse, ListToolsResult};
use rmcp::service::RequestContext;
use rmcp::{ErrorData, RoleServer};

use super::completed::Completed;
use super::names::unknown_tool;
use super::shared::Shared;
use super::{meta, relay};

pub(super) fn list(shared: &Shared) -> Result<ListToolsResult, ErrorData> {
    let json = if shared.options.meta {
        meta::listing().to_owned()
    } else {
        shared.named().wire()
    };
    let listed: Result<ListToolsResult, _> = serde_json::from_str(&json);
    listed
        .map(Completed::completed)
        .map_err(|e| ErrorData::internal_error(e.to_string(), None))
}

pub(super) async fn call(
    shared: &Shared,
    request: CallToolRequestParams,
    context: RequestContext<RoleServer>,
) -> Result<CallToolResponse, ErrorData> {
    if let Some(state) = request.request_state {
        let answers = request.input_responses.unwrap_or_default();
        return relay::resume(shared, &state, answers, context).await;
    }
    if shared.options.meta {
        return meta::call(shared, request, context).await;
    }
    let target = shared.named().target(&request.name);
    let Some(target) = target else {
        return Err(unknown_tool(&request.name));
    };
    relay::call(shared, target, request.arguments, context).await
}
