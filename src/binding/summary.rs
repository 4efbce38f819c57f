//! What `loadMcp`'s handle tells JS of its source at once: the tools without their
//! schemas, the status map, and the failures and warnings to print.

use napi::Result;
use serde_json::{Map, Value};

use super::to_json;
use crate::config::{self, McpConfig};
use crate::inventory::Source;

/// What `summary()` returns, borrowed from the source: serialising it copies no schema.
#[derive(serde::Serialize)]
struct Summary<'a> {
    tools: Vec<ToolView<'a>>,
    status: &'a Map<String, Value>,
    failures: &'a [String],
    warnings: &'a [String],
}

#[derive(serde::Serialize)]
#[serde(rename_all = "camelCase")]
struct ToolView<'a> {
    name: &'a str,
    description: &'a str,
    server: &'a str,
    /// The name the server lists it under.
    tool: &'a str,
    /// The server's `maxOutputChars`, when it has one.
    #[serde(skip_serializing_if = "Option::is_none")]
    max_output_chars: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    extra: Option<Vec<&'static str>>,
    /// Only an app's view may see it (they come last).
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    app: bool,
    /// Left to the provider's tool search by default (`deferLoading`).
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    defer: bool,
}

/// Built on a worker thread, inside the load's future, so the Node thread only copies a
/// string.
pub(super) fn summary_json(source: &Source, config: &McpConfig) -> Result<String> {
    let spec_of = |server: &str| {
        config.servers.iter().find_map(|entry| match &entry.state {
            config::ServerState::Enabled(spec) if entry.name == server => Some(spec),
            _ => None,
        })
    };
    let specs: Vec<Option<&config::ServerSpec>> =
        source.sessions.iter().map(|s| spec_of(s.name())).collect();
    let tools = source.tools.iter().map(|t| ToolView {
        name: &t.name,
        description: t.listed.description.as_deref().unwrap_or_default(),
        server: source.sessions[t.server].name(),
        tool: &t.listed.name,
        max_output_chars: specs[t.server].and_then(|spec| spec.max_output_chars),
        extra: t.listed.extra_keys(),
        app: t.listed.app_only(),
        defer: specs[t.server].is_some_and(|spec| spec.deferral.defers(&t.listed.name)),
    });
    to_json(&Summary {
        tools: tools.collect(),
        status: &source.status,
        failures: &source.failures,
        warnings: &source.warnings,
    })
}
