//! Every server of a config, connected and listed in parallel: the one path behind both
//! `loadMcp` (keep the sessions, expose filtered, namespaced tools) and `listMcpTools`
//! (close everything, report the unfiltered tools).

use std::time::{Duration, Instant};

use serde::Serialize;
use serde_json::{Map, Value};
use tokio_util::sync::CancellationToken;

use crate::config::{McpConfig, ServerState, ToolFilter};

mod source;
pub use self::source::{Source, SourceTool, load_source};
use crate::session::error::Kind;
use crate::session::{Failure, Hooks, Session};
use crate::tool::listed::ListedTool;

#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Status {
    Connected,
    Disabled,
    Failed,
}

/// The caller cancelled: everything spawned for the call has been killed.
#[derive(Debug, Clone, PartialEq)]
pub struct Aborted;

/// One configured server after connecting, in config order.
pub struct ServerOutcome {
    pub name: String,
    pub status: Status,
    /// Why it failed.
    pub reason: Option<String>,
    /// From the start to connected and listed, or to failing; none when nothing started.
    pub took: Option<Duration>,
    pub connected: Option<Connected>,
    /// The version it spoke, once its opening succeeded (even if the listing then failed).
    pub protocol_version: Option<String>,
    /// It failed for want of an OAuth sign-in nobody could give.
    pub needs_sign_in: bool,
}

pub struct Connected {
    pub session: Session,
    pub tools: Vec<ListedTool>,
    pub filter: ToolFilter,
}

/// Connects to every enabled server in parallel; one failure never affects another.
pub async fn connect_all(
    config: &McpConfig,
    hooks: &Hooks,
    cancel: &CancellationToken,
) -> Result<Vec<ServerOutcome>, Aborted> {
    if cancel.is_cancelled() {
        return Err(Aborted);
    }
    let tasks: Vec<_> = config
        .servers
        .iter()
        .map(|entry| {
            let (name, state) = (entry.name.clone(), entry.state.clone());
            let (hooks, cancel) = (hooks.clone(), cancel.clone());
            tokio::spawn(async move {
                let started = Instant::now();
                let enabled = matches!(state, ServerState::Enabled(_));
                let mut needs_sign_in = false;
                let (status, reason, connected, protocol_version) = match state {
                    ServerState::Disabled => (Status::Disabled, None, None, None),
                    ServerState::Invalid(error) => {
                        (Status::Failed, Some(error.to_string()), None, None)
                    }
                    ServerState::Enabled(spec) => {
                        match connect_and_list(&name, &spec, &hooks, &cancel).await {
                            Ok((session, tools)) => {
                                if let Some(listings) = &hooks.listings {
                                    listings.listed(&spec, session.cache_hints(), &tools);
                                }
                                let version = session.protocol_version();
                                let connected = Connected {
                                    session,
                                    tools,
                                    filter: spec.tools,
                                };
                                (Status::Connected, None, Some(connected), version)
                            }
                            Err((Failure::Aborted, version)) => {
                                (Status::Failed, None, None, version)
                            }
                            Err((Failure::Reason(reason), version)) => {
                                needs_sign_in = reason.kind() == Kind::NeedsSignIn;
                                (Status::Failed, Some(reason.into_text()), None, version)
                            }
                        }
                    }
                };
                let took = enabled.then(|| started.elapsed());
                ServerOutcome {
                    name,
                    status,
                    reason,
                    took,
                    connected,
                    protocol_version,
                    needs_sign_in,
                }
            })
        })
        .collect();
    let mut outcomes = Vec::with_capacity(tasks.len());
    for (task, entry) in tasks.into_iter().zip(&config.servers) {
        // A panicking task is a bug; report it as that server's failure rather than crash.
        outcomes.push(task.await.unwrap_or_else(|e| ServerOutcome {
            name: entry.name.clone(),
            status: Status::Failed,
            reason: Some(format!("internal error: {e}")),
            took: None,
            connected: None,
            protocol_version: None,
            needs_sign_in: false,
        }));
    }
    if cancel.is_cancelled() {
        kill_all(outcomes).await;
        return Err(Aborted);
    }
    Ok(outcomes)
}

/// A session and its tools; or why not, with the version the server spoke when the
/// failure came after the opening.
pub(crate) async fn connect_and_list(
    name: &str,
    spec: &crate::config::ServerSpec,
    hooks: &Hooks,
    cancel: &CancellationToken,
) -> Result<(Session, Vec<ListedTool>), (Failure, Option<String>)> {
    let session = Session::connect(name, spec, hooks, cancel)
        .await
        .map_err(|failure| (failure, None))?;
    match session.list_tools(cancel).await {
        Ok(tools) => Ok((session, tools)),
        Err(failure) => {
            let version = session.protocol_version();
            session.kill().await;
            Err((failure, version))
        }
    }
}

async fn kill_all(outcomes: Vec<ServerOutcome>) {
    let sessions = outcomes
        .into_iter()
        .filter_map(|o| o.connected)
        .map(|c| c.session);
    in_parallel(sessions.map(|s| async move { s.kill().await })).await;
}

/// Runs every future on its own task and waits for all of them: closing or killing many
/// servers takes as long as the slowest, not the sum.
pub(crate) async fn in_parallel<F>(futures: impl IntoIterator<Item = F>)
where
    F: std::future::Future<Output = ()> + Send + 'static,
{
    let tasks: Vec<_> = futures.into_iter().map(tokio::spawn).collect();
    for task in tasks {
        let _ = task.await;
    }
}

/// The result of `listMcpTools`.
pub struct Inventory {
    /// Connected servers only, config order; tools unfiltered, as listed.
    pub tools: Vec<(String, Vec<ListedTool>)>,
    pub status: Map<String, Value>,
    /// What a doctor shows of each server, config order.
    pub servers: Map<String, Value>,
    /// One line per failed server, for diagnostics.
    pub failures: Vec<String>,
}

/// One server as `listMcpTools` reports it in `servers`.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct ServerReport<'a> {
    status: Status,
    /// What the server answered `initialize` with.
    #[serde(skip_serializing_if = "Option::is_none")]
    protocol_version: Option<String>,
    /// Milliseconds from the start to listed, or to failing.
    #[serde(skip_serializing_if = "Option::is_none")]
    connect_ms: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    tool_count: Option<usize>,
    #[serde(skip_serializing_if = "Option::is_none")]
    error: Option<&'a str>,
    /// Failed for want of an OAuth sign-in (`toolnexus auth <name>` gives one).
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    needs_auth: bool,
}

impl ServerOutcome {
    fn report(&self) -> Value {
        let report = ServerReport {
            status: self.status,
            protocol_version: self.protocol_version.clone(),
            connect_ms: self.took.map(|t| (t.as_secs_f64() * 1000.0).round()),
            tool_count: self.connected.as_ref().map(|c| c.tools.len()),
            error: self.reason.as_deref(),
            needs_auth: self.needs_sign_in,
        };
        serde_json::to_value(report).unwrap_or_default()
    }
}

pub async fn list_inventory(
    config: &McpConfig,
    cancel: &CancellationToken,
) -> Result<Inventory, Aborted> {
    list_inventory_with(config, &Hooks::default(), cancel).await
}

/// `list_inventory` with the host's hooks (only `oauth` matters to a listing).
pub async fn list_inventory_with(
    config: &McpConfig,
    hooks: &Hooks,
    cancel: &CancellationToken,
) -> Result<Inventory, Aborted> {
    let outcomes = connect_all(config, hooks, cancel).await?;
    let mut inventory = Inventory {
        tools: Vec::new(),
        status: Map::new(),
        servers: Map::new(),
        failures: Vec::new(),
    };
    let mut sessions = Vec::new();
    for outcome in outcomes {
        record_status(&mut inventory.status, &mut inventory.failures, &outcome);
        inventory
            .servers
            .insert(outcome.name.clone(), outcome.report());
        if let Some(connected) = outcome.connected {
            inventory.tools.push((outcome.name, connected.tools));
            sessions.push(connected.session);
        }
    }
    let counts = sessions.iter().map(|s| s.offered_counts(cancel));
    let counts = futures::future::join_all(counts).await;
    for ((name, _), counts) in inventory.tools.iter().zip(counts) {
        if let Some(Value::Object(report)) = inventory.servers.get_mut(name) {
            report.extend(
                counts
                    .into_iter()
                    .map(|(key, n)| (key.to_owned(), Value::from(n))),
            );
        }
    }
    in_parallel(sessions.into_iter().map(|s| async move { s.close().await })).await;
    Ok(inventory)
}

fn record_status(
    status: &mut Map<String, Value>,
    failures: &mut Vec<String>,
    outcome: &ServerOutcome,
) {
    status.insert(
        outcome.name.clone(),
        serde_json::to_value(outcome.status).unwrap_or_default(),
    );
    if let Some(reason) = &outcome.reason {
        let spoke = match &outcome.protocol_version {
            Some(version) => format!(" (it speaks MCP {version})"),
            None => String::new(),
        };
        failures.push(format!(
            "MCP server \"{}\" failed: {reason}{spoke}",
            outcome.name
        ));
    }
}
