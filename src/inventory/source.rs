//! `loadMcp`'s source: the sessions it keeps, their tools under provider-safe names
//! (filtered by each entry's `tools`), and the search over them.

use std::sync::Arc;

use serde_json::{Map, Value};
use tokio_util::sync::CancellationToken;

use super::{Aborted, Connected, connect_all, in_parallel, record_status};
use crate::config::McpConfig;
use crate::search::{Doc, Index};
use crate::session::{Hooks, Session};
use crate::tool;
use crate::tool::listed::ListedTool;

/// A tool of a loaded source: its provider-safe name plus how to reach it.
pub struct SourceTool {
    pub name: String,
    /// As the server listed it.
    pub listed: ListedTool,
    pub server: usize,
}

/// The result of `loadMcp`: open sessions and their (filtered) tools.
pub struct Source {
    pub sessions: Vec<Arc<Session>>,
    pub tools: Vec<SourceTool>,
    pub status: Map<String, Value>,
    pub failures: Vec<String>,
    /// What fails nothing but deserves a line: allowlist names that match no tool.
    pub warnings: Vec<String>,
    /// The tools' search index, built when first searched: they never change.
    search: std::sync::OnceLock<Index>,
}

pub async fn load_source(
    config: &McpConfig,
    hooks: &Hooks,
    cancel: &CancellationToken,
) -> Result<Source, Aborted> {
    let outcomes = connect_all(config, hooks, cancel).await?;
    let mut source = Source {
        sessions: Vec::new(),
        tools: Vec::new(),
        status: Map::new(),
        failures: Vec::new(),
        warnings: Vec::new(),
        search: std::sync::OnceLock::new(),
    };
    for outcome in outcomes {
        record_status(&mut source.status, &mut source.failures, &outcome);
        let Some(Connected {
            session,
            tools,
            filter,
        }) = outcome.connected
        else {
            continue;
        };
        for unknown in filter
            .names()
            .iter()
            .filter(|n| !tools.iter().any(|t| t.name == n.as_str()))
        {
            source.warnings.push(format!(
                "MCP server \"{}\": \"tools\" names \"{unknown}\", which the server does not have; ignored",
                outcome.name
            ));
        }
        let server = source.sessions.len();
        source.tools.reserve(tools.len());
        for listed in tools.into_iter().filter(|t| filter.allows(&t.name)) {
            source.tools.push(SourceTool {
                name: String::new(),
                listed,
                server,
            });
        }
        source.sessions.push(Arc::new(session));
    }
    source.name_tools();
    Ok(source)
}

impl Source {
    /// The positions in `tools` of those that match `query` best, best first, at most `limit`.
    pub fn search_tools(&self, query: &str, limit: usize) -> Vec<usize> {
        let index = self.search.get_or_init(|| {
            Index::build(
                self.tools
                    .iter()
                    .map(|tool| Doc::of(&tool.name, &tool.listed)),
            )
        });
        index.search(query, limit)
    }

    /// Gives every tool its provider-safe name, unique within the source, and puts the
    /// tools only an app's view may see after the rest: the model's are the first ones.
    fn name_tools(&mut self) {
        let sessions = &self.sessions;
        let pairs = self
            .tools
            .iter()
            .map(|t| (sessions[t.server].name(), t.listed.name.as_str()));
        let names = tool::names::assign(pairs);
        for (tool, name) in self.tools.iter_mut().zip(names) {
            tool.name = name;
        }
        self.tools.sort_by_key(|tool| tool.listed.app_only());
    }

    /// Ends every call in flight and refuses later ones, at once (see `Session::end_calls`).
    pub fn end_calls(&self) {
        for session in &self.sessions {
            session.end_calls();
        }
    }

    /// Closes every session in parallel. Idempotent.
    pub async fn close(&self) {
        in_parallel(
            self.sessions
                .iter()
                .cloned()
                .map(|s| async move { s.close().await }),
        )
        .await;
    }
}
