//! A view served in meta mode: the three meta-tools (`search_tools`, `describe_tool`,
//! `call_tool`) instead of its tools, as `metaTools()` gives a model, defined once in
//! `js/meta-tools.json` for both. Only model-visible tools are found and called.

use std::sync::LazyLock;

use rmcp::model::{CallToolRequestParams, CallToolResponse, CallToolResult, ContentBlock};
use rmcp::service::RequestContext;
use rmcp::{ErrorData, RoleServer};
use serde::Deserialize;
use serde_json::Value;

use super::names::unknown_tool;
use super::relay;
use super::shared::Shared;

const DEFINITIONS: &str = include_str!("../../js/meta-tools.json");

#[derive(Deserialize)]
struct Definitions {
    #[serde(rename = "defaultLimit")]
    default_limit: usize,
    tools: Value,
}

/// The definitions read once: `search_tools`' default and largest limits, and the
/// `tools/list` result of meta mode as JSON text.
struct Parsed {
    default_limit: usize,
    max_limit: u64,
    listing: String,
}

static PARSED: LazyLock<Parsed> = LazyLock::new(|| {
    // Compiled in, and read by a test: a mistake there never reaches a user.
    let parsed: Definitions = serde_json::from_str(DEFINITIONS).expect("meta-tools.json");
    let limit = &parsed.tools[0]["inputSchema"]["properties"]["limit"];
    Parsed {
        default_limit: parsed.default_limit,
        max_limit: limit["maximum"].as_u64().unwrap_or(1),
        listing: serde_json::json!({ "tools": parsed.tools }).to_string(),
    }
});

/// The `tools/list` result of meta mode, as JSON text.
pub(super) fn listing() -> &'static str {
    &PARSED.listing
}

pub(super) async fn call(
    shared: &Shared,
    request: CallToolRequestParams,
    context: RequestContext<RoleServer>,
) -> Result<CallToolResponse, ErrorData> {
    let args = request.arguments.unwrap_or_default();
    let text = |key: &str| args.get(key).and_then(Value::as_str).unwrap_or_default();
    let answer = match request.name.as_ref() {
        "search_tools" => search(shared, text("query"), args.get("limit")),
        "describe_tool" => describe(shared, text("name")),
        "call_tool" => {
            let Some(target) = shared.named().model_target(text("name")) else {
                return Ok(CallToolResponse::Complete(no_tool(text("name"))));
            };
            let arguments = match args.get("arguments") {
                Some(Value::Object(arguments)) => Some(arguments.clone()),
                _ => None,
            };
            return relay::call(shared, target, arguments, context).await;
        }
        other => return Err(unknown_tool(other)),
    };
    Ok(CallToolResponse::Complete(answer))
}

fn search(shared: &Shared, query: &str, limit: Option<&Value>) -> CallToolResult {
    let limit = limit
        .and_then(Value::as_u64)
        .map_or(PARSED.default_limit, |n| {
            n.clamp(1, PARSED.max_limit) as usize
        });
    let found = shared
        .store
        .search_tools(shared.agent.as_deref(), query, limit);
    let named = shared.named();
    let tools: Vec<Value> = found
        .tools
        .iter()
        .filter_map(|&i| named.model_entry(i))
        .map(|(name, description)| {
            serde_json::json!({ "name": name, "description": one_line(description) })
        })
        .collect();
    if tools.is_empty() {
        return text_result(format!("no tool matches {}", Value::from(query)));
    }
    text_result(Value::from(tools).to_string())
}

fn describe(shared: &Shared, name: &str) -> CallToolResult {
    match shared.named().describe(name) {
        Some(described) => text_result(described),
        None => no_tool(name),
    }
}

fn no_tool(name: &str) -> CallToolResult {
    let why = format!(
        "no tool named {}; search_tools finds the names",
        Value::from(name)
    );
    CallToolResult::error(vec![ContentBlock::text(why)])
}

fn text_result(text: String) -> CallToolResult {
    CallToolResult::success(vec![ContentBlock::text(text)])
}

/// The first line of a description, at most 160 characters, as the JS meta-tools cut it.
fn one_line(text: &str) -> String {
    let line = text.split('\n').next().unwrap_or_default().trim();
    let chars: Vec<char> = line.chars().collect();
    if chars.len() > 160 {
        let mut cut: String = chars[..159].iter().collect();
        cut.push('…');
        cut
    } else {
        line.to_owned()
    }
}
