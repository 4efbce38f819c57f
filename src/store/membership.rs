//! A store's membership: services added (or replaced, by name) and removed, in this
//! process only (the fleet's registry is `fleet`'s), each added one with its supervisor.

use std::sync::{Arc, Mutex};

use tokio::sync::{Notify, watch};
use tokio_util::sync::CancellationToken;

use super::service::{Inner, Members, Service, Start, State, unique_global_name};
use super::supervisor;
use crate::config::{McpConfig, ServerState};
use crate::lock::{lock, write};

/// Adds (or replaces, by name) servers of the store (`agent: None`) or of an agent,
/// in this process only.
pub(super) fn add_servers(inner: &Arc<Inner>, agent: Option<&str>, config: McpConfig) {
    let added = !config.servers.is_empty();
    let starts = Start::of_all(config.servers.iter().map(|e| &e.state), &inner.options);
    for (entry, start) in config.servers.into_iter().zip(starts) {
        remove_server(inner, agent, &entry.name);
        let service = register(inner, agent, &entry.name, start);
        if let ServerState::Enabled(spec) = entry.state {
            let task = tokio::spawn(supervisor::run(inner.clone(), service.clone(), spec));
            *lock(&service.supervisor) = Some(task);
        }
    }
    if added {
        inner.membership_changed(Members::Of(agent));
    }
}

fn register(inner: &Inner, agent: Option<&str>, local: &str, start: Start) -> Arc<Service> {
    let mut services = write(&inner.services);
    let service = Arc::new(Service {
        agent: agent.map(str::to_owned),
        local: local.to_owned(),
        global: unique_global_name(&services, agent, local),
        remote: start.remote,
        timeout: start.timeout,
        max_total: start.max_total,
        state: watch::Sender::new(State {
            phase: start.phase,
            last_error: start.last_error,
            cached: !start.tools.0.is_empty() || !start.tools.1.is_empty(),
            tools: start.tools.0,
            app_tools: start.tools.1,
            connected_at: None,
            restarts: 0,
            revision: 0,
        }),
        session: watch::Sender::new(None),
        stop: CancellationToken::new(),
        supervisor: Mutex::new(None),
        slot: start.slot,
        filter: start.filter,
        max_output_chars: start.max_output_chars,
        deferral: start.deferral,
        wanted: CancellationToken::new(),
        relist: Notify::new(),
    });
    services.push(service.clone());
    service
}

/// Stops and forgets a server, in this process only; its process tree is ended by its
/// supervisor.
pub(super) fn remove_server(inner: &Inner, agent: Option<&str>, name: &str) -> bool {
    let (removed, emptied) = {
        let mut services = write(&inner.services);
        let index = services
            .iter()
            .position(|s| s.agent.as_deref() == agent && s.local == name);
        let removed = index.map(|i| services.remove(i));
        let emptied = agent.is_some() && !services.iter().any(|s| s.agent.as_deref() == agent);
        (removed, emptied)
    };
    match removed {
        Some(service) => {
            service.stop.cancel();
            if emptied {
                // A host that gives each passing agent servers of its own would
                // otherwise keep every gone agent's search index.
                lock(&inner.indexes).remove(&agent.map(str::to_owned));
            }
            inner.membership_changed(Members::Of(agent));
            true
        }
        None => false,
    }
}
