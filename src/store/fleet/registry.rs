//! The fleet's registry: servers added, replaced or removed at run time, one document of
//! entries as written (`${VAR}` unexpanded: each host expands them from its own
//! environment), each stamped with when it was written; the latest stamp wins, so a
//! change made while the state was away is merged, not lost, when it returns.

use std::collections::{BTreeMap, HashMap};
use std::sync::Arc;

use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::ATTEMPTS;
use crate::config::McpConfig;
use crate::lock::lock;
use crate::state::Shared;
use crate::store::catalog::now_ms;
use crate::store::membership;
use crate::store::news::news;
use crate::store::service::Inner;

const REGISTRY: &str = "registry";
const REGISTRY_FORMAT: &str = "toolnexus-registry/1";
/// A registry document names at most this many entries; more is not ours.
const MAX_ENTRIES: usize = 10_000;

/// What this instance wrote to or applied from the registry, by view and name.
#[derive(Default)]
pub(crate) struct Fleet {
    applied: std::sync::Mutex<HashMap<(String, String), Stamped>>,
}

/// One registry entry: as written, or `None` when removed; and when.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
struct Stamped {
    entry: Option<Value>,
    /// Milliseconds since the epoch; then the instance, to order equal times.
    at: f64,
    by: String,
}

impl Stamped {
    fn newer_than(&self, other: &Stamped) -> bool {
        (self.at, &self.by) > (other.at, &other.by)
    }
}

/// The registry document: view (`""` for the store's own) → name → entry.
#[derive(Default, Serialize, Deserialize)]
struct Registry {
    format: String,
    views: BTreeMap<String, BTreeMap<String, Stamped>>,
}

fn view_key(agent: Option<&str>) -> String {
    agent.unwrap_or_default().to_owned()
}

fn view_agent(key: &str) -> Option<&str> {
    (!key.is_empty()).then_some(key)
}

/// Records local registry changes (`None`: removed) and writes them to the fleet's
/// registry, then tells the others. Without a shared state, nothing.
pub(crate) fn share(
    inner: &Inner,
    fleet: &Arc<Fleet>,
    agent: Option<&str>,
    entries: Vec<(String, Option<Value>)>,
) {
    let Some(shared) = inner.options.shared.clone() else {
        return;
    };
    if entries.is_empty() {
        return;
    }
    let at = now_ms();
    let view = view_key(agent);
    let mut applied = lock(&fleet.applied);
    for (name, entry) in entries {
        let by = shared.instance().to_owned();
        applied.insert((view.clone(), name), Stamped { entry, at, by });
    }
    drop(applied);
    // The host's thread may call this: the store's runtime runs it.
    let fleet = fleet.clone();
    inner.runtime.spawn(async move {
        if merge_registry(&fleet, &shared).await {
            shared.publish(news(&shared, true, None)).await;
        }
    });
}

/// Reads the registry document: a missing, corrupt or foreign one counts as empty (and is
/// replaced at the next write). `Err`: the state did not answer.
async fn read_registry(shared: &Shared) -> Result<(Option<String>, Registry), ()> {
    let text = shared.get(REGISTRY).await.map_err(|_| ())?;
    let registry = text
        .as_deref()
        .and_then(|text| serde_json::from_str::<Registry>(text).ok())
        .filter(|r| r.format == REGISTRY_FORMAT)
        .filter(|r| r.views.values().map(BTreeMap::len).sum::<usize>() <= MAX_ENTRIES)
        .unwrap_or_default();
    Ok((text, registry))
}

/// Writes every entry this instance holds that is newer than the document's; answers
/// whether the document changed.
pub(crate) async fn merge_registry(fleet: &Fleet, shared: &Shared) -> bool {
    for _ in 0..ATTEMPTS {
        let Ok((text, mut registry)) = read_registry(shared).await else {
            return false;
        };
        let mut changed = false;
        for ((view, name), mine) in lock(&fleet.applied).iter() {
            let entries = registry.views.entry(view.clone()).or_default();
            let newer = entries
                .get(name)
                .is_none_or(|theirs| mine.newer_than(theirs));
            if newer {
                entries.insert(name.clone(), mine.clone());
                changed = true;
            }
        }
        if !changed {
            return false;
        }
        registry.format = REGISTRY_FORMAT.to_owned();
        let Ok(value) = serde_json::to_string(&registry) else {
            return false;
        };
        match shared
            .compare_and_set(REGISTRY, text, Some(value), None)
            .await
        {
            Ok(true) => return true,
            Ok(false) => continue,
            Err(_) => return false,
        }
    }
    false
}

/// Applies the fleet's registry: each entry newer than what this instance holds is added,
/// replaced or removed here. Answers whether any was added (it may have a listing kept).
pub(crate) async fn apply_registry(inner: &Arc<Inner>, fleet: &Fleet, shared: &Shared) -> bool {
    let Ok((_, registry)) = read_registry(shared).await else {
        return false;
    };
    let mut added = false;
    for (view, entries) in registry.views {
        for (name, theirs) in entries {
            let key = (view.clone(), name.clone());
            let newer = {
                let mut applied = lock(&fleet.applied);
                let newer = applied.get(&key).is_none_or(|mine| theirs.newer_than(mine));
                if newer {
                    applied.insert(key, theirs.clone());
                }
                newer
            };
            if !newer {
                continue;
            }
            let agent = view_agent(&view);
            match theirs.entry {
                Some(entry) => {
                    let map = serde_json::Map::from_iter([(name, entry)]);
                    membership::add_servers(inner, agent, McpConfig::from_server_map(map));
                    added = true;
                }
                None => {
                    membership::remove_server(inner, agent, &name);
                }
            }
        }
    }
    added
}
