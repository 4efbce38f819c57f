//! What the view's servers offer besides tools, passed through: resources, templates,
//! reads, prompts, completions and the servers' instructions.
//!
//! Names and URIs: a prompt is named as the view names tools (`tool::names`, so two
//! servers' prompts of one name stay apart). A resource keeps its URI; when two servers
//! list the same URI, the first in the view's order keeps it and each other's is listed
//! as `toolnexus://<server>/<uri>`, which reaches that server. A URI the gateway has not
//! listed (one made from a template) goes to the view's servers in order until one
//! answers it.

use std::collections::HashMap;
use std::sync::Arc;

use rmcp::ErrorData;
use rmcp::model::ErrorCode;
use rmcp::model::{
    CompleteRequestParams, CompleteResult, GetPromptRequestParams, GetPromptResult,
    ListPromptsResult, ListResourceTemplatesResult, ListResourcesResult, ReadResourceResult,
    Reference,
};
use serde::de::DeserializeOwned;
use serde_json::{Map, Value};
use tokio_util::sync::CancellationToken;

use super::completed::Completed;
use super::shared::Shared;
use crate::lock::lock;
use crate::session::offers::{self, CacheMode, GET_PROMPT, Offered};
use crate::session::{Failure, Params, Session};
use crate::tool;

const QUALIFIED: &str = "toolnexus://";

/// The servers' instructions, each under its server's name.
pub(super) fn instructions(shared: &Shared) -> Option<String> {
    let revision = shared.store.revision(shared.agent.as_deref());
    let mut kept = lock(&shared.instructions);
    if let Some((at, instructions)) = kept.as_ref()
        && *at == revision
    {
        return instructions.clone();
    }
    let parts: Vec<String> = sessions(shared)
        .into_iter()
        .filter_map(|(name, session)| Some(format!("## {name}\n\n{}", session.instructions()?)))
        .collect();
    let instructions = (!parts.is_empty()).then(|| parts.join("\n\n"));
    *kept = Some((revision, instructions.clone()));
    instructions
}

fn sessions(shared: &Shared) -> Vec<(String, Arc<Session>)> {
    shared.store.sessions(shared.agent.as_deref())
}

/// Every connected server's entries of `listing`, in view order; a server that fails
/// to list is left out (the others still answer).
async fn gather(
    shared: &Shared,
    listing: Offered,
    cancel: &CancellationToken,
) -> Vec<(String, Vec<Map<String, Value>>)> {
    let mut all = Vec::new();
    for (name, session) in sessions(shared) {
        if let Ok(text) = session.offered(listing, CacheMode::Use, None, cancel).await
            && let Ok(entries) = serde_json::from_str(&text)
        {
            all.push((name, entries));
        }
    }
    all
}

pub(super) async fn list_resources(
    shared: &Shared,
    cancel: &CancellationToken,
) -> Result<ListResourcesResult, ErrorData> {
    let mut routes = HashMap::new();
    let mut resources = Vec::new();
    for (server, entries) in gather(shared, Offered::Resources, cancel).await {
        for mut entry in entries {
            let Some(uri) = entry.get("uri").and_then(Value::as_str).map(str::to_owned) else {
                continue;
            };
            let shown = if routes.contains_key(&uri) {
                qualified(&server, &uri)
            } else {
                uri.clone()
            };
            entry.insert("uri".into(), Value::from(shown.as_str()));
            routes.insert(shown, (server.clone(), uri));
            resources.push(Value::Object(entry));
        }
    }
    *lock(&shared.offers.resources) = routes;
    decode(serde_json::json!({ "resources": resources }))
}

pub(super) async fn list_templates(
    shared: &Shared,
    cancel: &CancellationToken,
) -> Result<ListResourceTemplatesResult, ErrorData> {
    let gathered = gather(shared, Offered::ResourceTemplates, cancel).await;
    let templates: Vec<Value> = gathered
        .into_iter()
        .flat_map(|(_, entries)| entries.into_iter().map(Value::Object))
        .collect();
    decode(serde_json::json!({ "resourceTemplates": templates }))
}

pub(super) async fn read(
    shared: &Shared,
    uri: &str,
    cancel: &CancellationToken,
) -> Result<ReadResourceResult, ErrorData> {
    if let Some((server, uri)) = listed_route(shared, uri) {
        let session = session_of(shared, &server)?;
        let text = session
            .read(&uri, CacheMode::Use, None, cancel)
            .await
            .map_err(|f| failed(&server, f))?;
        return decode_text(&text);
    }
    let mut first_error = None;
    for (server, session) in sessions(shared) {
        if !session.offers("resources") {
            continue;
        }
        match session.read(uri, CacheMode::Use, None, cancel).await {
            Ok(text) => return decode_text(&text),
            Err(failure) => {
                first_error.get_or_insert_with(|| failed(&server, failure));
            }
        }
    }
    Err(first_error.unwrap_or_else(|| {
        ErrorData::resource_not_found(format!("no server of this view has {uri}"), None)
    }))
}

pub(super) async fn list_prompts(
    shared: &Shared,
    cancel: &CancellationToken,
) -> Result<ListPromptsResult, ErrorData> {
    let gathered = gather(shared, Offered::Prompts, cancel).await;
    let pairs: Vec<(&str, String)> = gathered
        .iter()
        .flat_map(|(server, entries)| {
            entries.iter().map(move |entry| {
                let name = entry
                    .get("name")
                    .and_then(Value::as_str)
                    .unwrap_or_default();
                (server.as_str(), name.to_owned())
            })
        })
        .collect();
    let names = tool::names::assign(pairs.iter().map(|(s, n)| (*s, n.as_str())));
    let mut routes = HashMap::new();
    let mut prompts = Vec::new();
    let entries = gathered.iter().flat_map(|(_, entries)| entries);
    for ((entry, (server, name)), shown) in entries.zip(&pairs).zip(names) {
        let mut entry = entry.clone();
        entry.insert("name".into(), Value::from(shown.as_str()));
        routes.insert(shown, ((*server).to_owned(), name.clone()));
        prompts.push(Value::Object(entry));
    }
    *lock(&shared.offers.prompts) = routes;
    decode(serde_json::json!({ "prompts": prompts }))
}

pub(super) async fn get_prompt(
    shared: &Shared,
    request: GetPromptRequestParams,
    cancel: &CancellationToken,
) -> Result<GetPromptResult, ErrorData> {
    // Names are learned by listing: a client may name a prompt this replica (or this
    // gateway, since it started) never listed.
    let route = match prompt_route(shared, &request.name) {
        Ok(route) => route,
        Err(_) => {
            list_prompts(shared, cancel).await?;
            prompt_route(shared, &request.name)?
        }
    };
    let (server, name) = route;
    let mut params = Map::new();
    params.insert("name".into(), Value::from(name));
    if let Some(arguments) = request.arguments {
        params.insert("arguments".into(), Value::Object(arguments));
    }
    let session = session_of(shared, &server)?;
    let params = Params::from(offers::members(&params));
    let answer = session.request(&GET_PROMPT, params, cancel).await;
    decode_text(answer.map_err(|f| failed(&server, f))?.get())
}

pub(super) async fn complete(
    shared: &Shared,
    request: CompleteRequestParams,
    cancel: &CancellationToken,
) -> Result<CompleteResult, ErrorData> {
    let (server, reference) = match &request.r#ref {
        Reference::Prompt(prompt) => {
            let (server, name) = prompt_route(shared, &prompt.name)?;
            (
                server,
                serde_json::json!({ "type": "ref/prompt", "name": name }),
            )
        }
        Reference::Resource(template) => {
            let Some((server, uri)) = listed_route(shared, &template.uri) else {
                // A template the gateway cannot place: no completions.
                return Ok(CompleteResult::default());
            };
            (
                server,
                serde_json::json!({ "type": "ref/resource", "uri": uri }),
            )
        }
        _ => return Ok(CompleteResult::default()),
    };
    let mut params = match serde_json::to_value(&request) {
        Ok(Value::Object(params)) => params,
        _ => return Err(ErrorData::invalid_params("bad completion request", None)),
    };
    params.insert("ref".into(), reference);
    params.remove("_meta");
    let session = session_of(shared, &server)?;
    let answer = session
        .complete(Params::from(offers::members(&params)), cancel)
        .await;
    decode_text(answer.map_err(|f| failed(&server, f))?.get())
}

/// The server of a URI the gateway listed (or qualified), and the URI there.
fn listed_route(shared: &Shared, uri: &str) -> Option<(String, String)> {
    let route = lock(&shared.offers.resources).get(uri).cloned();
    route.or_else(|| unqualified(uri))
}

/// The server a URI belongs to: the one that listed it, else the view's first that
/// offers resources (a URI made from a template).
pub(super) fn resource_route(shared: &Shared, uri: &str) -> Result<(String, String), ErrorData> {
    if let Some(route) = listed_route(shared, uri) {
        return Ok(route);
    }
    let offering = sessions(shared)
        .into_iter()
        .find(|(_, s)| s.offers("resources"));
    let no_server =
        || ErrorData::resource_not_found(format!("no server of this view has {uri}"), None);
    offering
        .map(|(server, _)| (server, uri.to_owned()))
        .ok_or_else(no_server)
}

fn prompt_route(shared: &Shared, name: &str) -> Result<(String, String), ErrorData> {
    let route = lock(&shared.offers.prompts).get(name).cloned();
    route.ok_or_else(|| ErrorData::invalid_params(format!("Unknown prompt: {name}"), None))
}

pub(super) fn session_of(shared: &Shared, server: &str) -> Result<Arc<Session>, ErrorData> {
    let agent = shared.agent.as_deref();
    let session = shared.store.session_of(agent, server);
    session.map_err(|coded| ErrorData::internal_error(coded.to_string(), None))
}

/// An upstream's failure, under its own JSON-RPC code when it answered with one.
pub(super) fn failed(server: &str, failure: Failure) -> ErrorData {
    match failure {
        Failure::Aborted => ErrorData::internal_error("cancelled", None),
        Failure::Reason(error) => {
            let code = error.code().map_or(ErrorCode::INTERNAL_ERROR, ErrorCode);
            ErrorData::new(code, format!("MCP server \"{server}\" {error}"), None)
        }
    }
}

/// `toolnexus://<server>/<uri>`: the server's name with `%` and `/` escaped.
fn qualified(server: &str, uri: &str) -> String {
    let server = server.replace('%', "%25").replace('/', "%2F");
    format!("{QUALIFIED}{server}/{uri}")
}

fn unqualified(uri: &str) -> Option<(String, String)> {
    let (server, uri) = uri.strip_prefix(QUALIFIED)?.split_once('/')?;
    let server = server.replace("%2F", "/").replace("%25", "%");
    Some((server, uri.to_owned()))
}

fn decode<T: DeserializeOwned + Completed>(value: Value) -> Result<T, ErrorData> {
    let decoded: Result<T, _> = serde_json::from_value(value);
    decoded
        .map(Completed::completed)
        .map_err(|e| ErrorData::internal_error(e.to_string(), None))
}

fn decode_text<T: DeserializeOwned + Completed>(text: &str) -> Result<T, ErrorData> {
    let decoded: Result<T, _> = serde_json::from_str(text);
    decoded
        .map(Completed::completed)
        .map_err(|e| ErrorData::internal_error(e.to_string(), None))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_qualified_uri_leads_back_to_its_server_and_uri() {
        let uri = qualified("a/b%c", "file:///x/y");
        assert_eq!(uri, "toolnexus://a%2Fb%25c/file:///x/y");
        let back = unqualified(&uri);
        assert_eq!(back, Some(("a/b%c".to_owned(), "file:///x/y".to_owned())));
        assert_eq!(unqualified("file:///x"), None);
    }
}
