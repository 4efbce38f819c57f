//! A store in a fleet: what it shares with the other instances on its state's namespace.
//!
//! - The registry: servers added, replaced or removed at run time, one document of
//!   entries as written (`${VAR}` unexpanded: each host expands them from its own
//!   environment), each stamped with when it was written; the latest stamp wins, so a
//!   change made while the state was away is merged, not lost, when it returns.
//! - The catalog: each live listing under its slot's digest; a new instance shows it
//!   while its servers start.
//! - News: a registry change or a listing that differs is published; the others apply
//!   the registry, or list their own live server again (their catalog copy otherwise).
//! - Health: each instance's services' states, under a key that expires unless renewed.
//!
//! No call waits on any of it: it feeds what the store holds in memory.

use std::collections::{BTreeMap, HashMap};
use std::sync::Arc;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::catalog::Slot;
use super::service::{Inner, Service, normalized};
use super::{Phase, clock};
use crate::config::{McpConfig, ServerSpec};
use crate::listed_tool::{CacheHints, ListedTool};
use crate::lock::lock;
use crate::session::Listings;
use crate::state::{Feed, Shared};

const REGISTRY: &str = "registry";
const REGISTRY_FORMAT: &str = "toolnexus-registry/1";
/// The index of the instances that said they were alive.
const INSTANCES: &str = "instances";
const HEARTBEAT: Duration = Duration::from_millis(2_000);
/// An instance not heard of for this long is gone.
const ALIVE: Duration = Duration::from_millis(6_000);
/// Attempts at a compare-and-set of a shared document before giving up for now (the
/// next news or rejoin tries again).
const ATTEMPTS: usize = 16;
/// A registry document names at most this many entries; more is not ours.
const MAX_ENTRIES: usize = 10_000;

/// What this instance wrote to or applied from the registry, by view and name.
#[derive(Default)]
pub(super) struct Fleet {
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

/// What one instance tells the others.
#[derive(Serialize, Deserialize)]
struct News {
    from: String,
    /// The registry changed.
    #[serde(default)]
    registry: bool,
    /// The listing kept under this digest changed.
    #[serde(default)]
    tools: Option<String>,
}

/// One instance of a fleet, as `instances()` lists them.
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Instance {
    pub id: String,
    pub host: String,
    pub pid: u32,
    pub servers: BTreeMap<String, String>,
    pub seen_at: String,
}

fn view_key(agent: Option<&str>) -> String {
    agent.unwrap_or_default().to_owned()
}

fn view_agent(key: &str) -> Option<&str> {
    (!key.is_empty()).then_some(key)
}

fn now_ms() -> f64 {
    let since = SystemTime::now().duration_since(UNIX_EPOCH);
    since.unwrap_or(Duration::ZERO).as_millis() as f64
}

/// Records local registry changes (`None`: removed) and writes them to the fleet's
/// registry, then tells the others. Without a shared state, nothing.
pub(super) fn share(
    inner: &Arc<Inner>,
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
    let mut applied = lock(&inner.fleet.applied);
    for (name, entry) in entries {
        let by = shared.instance().to_owned();
        applied.insert((view.clone(), name), Stamped { entry, at, by });
    }
    drop(applied);
    // The host's thread may call this: the store's runtime runs it.
    let inner = inner.clone();
    inner.runtime.clone().spawn(async move {
        if merge_registry(&inner, &shared).await {
            shared.publish(news(&shared, true, None)).await;
        }
    });
}

fn news(shared: &Shared, registry: bool, tools: Option<String>) -> String {
    let news = News {
        from: shared.instance().to_owned(),
        registry,
        tools,
    };
    serde_json::to_string(&news).unwrap_or_default()
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
async fn merge_registry(inner: &Inner, shared: &Shared) -> bool {
    for _ in 0..ATTEMPTS {
        let Ok((text, mut registry)) = read_registry(shared).await else {
            return false;
        };
        let mut changed = false;
        for ((view, name), mine) in lock(&inner.fleet.applied).iter() {
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
async fn apply_registry(inner: &Arc<Inner>, shared: &Shared) -> bool {
    let Ok((_, registry)) = read_registry(shared).await else {
        return false;
    };
    let mut added = false;
    for (view, entries) in registry.views {
        for (name, theirs) in entries {
            let key = (view.clone(), name.clone());
            let newer = {
                let mut applied = lock(&inner.fleet.applied);
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
                    inner.add_servers(agent, McpConfig::from_server_map(map));
                    added = true;
                }
                None => {
                    inner.remove_server(agent, &name);
                }
            }
        }
    }
    added
}

/// A fleet's shared catalog, for what is not a store (`loadMcp` on a state): each first
/// listing kept as a store keeps it, and news of it only when it differs from the one
/// kept before.
pub struct SharedCatalog {
    shared: Arc<Shared>,
    runtime: tokio::runtime::Handle,
}

impl SharedCatalog {
    /// Must be made within a tokio runtime, where its writes then run.
    pub fn new(shared: Arc<Shared>) -> SharedCatalog {
        SharedCatalog {
            shared,
            runtime: tokio::runtime::Handle::current(),
        }
    }
}

impl Listings for SharedCatalog {
    fn listed(&self, spec: &ServerSpec, hints: CacheHints, tools: &[ListedTool]) {
        let (slot, shared) = (Slot::new(None, spec), self.shared.clone());
        let tools = normalized(tools.to_vec());
        self.runtime.spawn(async move {
            let names: Vec<String> = slot.digests().map(|d| format!("catalog:{d}")).to_vec();
            if let Ok(kept) = shared.get_many(&names).await {
                let pairs = slot.digests().into_iter().zip(kept);
                for (digest, text) in pairs {
                    let _ = text.map(|text| slot.adopt(digest, &text));
                }
            }
            if let Some(document) = slot.write(&tools, hints) {
                share_listing(&shared, document).await;
            }
        });
    }
}

/// Keeps a listing that differs from the one kept before in the shared catalog, and tells
/// the others.
pub(super) async fn share_listing(shared: &Shared, document: super::catalog::Document) {
    let name = format!("catalog:{}", document.digest);
    shared.put(&name, document.text, document.ttl).await;
    shared
        .publish(news(shared, false, Some(document.digest)))
        .await;
}

/// Follows the fleet's news until the store closes, and says every `HEARTBEAT` that this
/// instance is alive.
pub(super) async fn follow(inner: Arc<Inner>) {
    let Some(shared) = inner.options.shared.clone() else {
        return;
    };
    // As servers do, the fleet starts a turn after the store is made: the host has set up
    // its listeners by then, and hears of the catalog's listings as a change.
    tokio::select! {
        _ = inner.closed.cancelled() => return,
        _ = inner.started.cancelled() => {}
    }
    // What a starting instance shows at once, before the news link is even up.
    fill_catalog(&inner, &shared).await;
    let mut feed = shared.follow();
    let mut beat = tokio::time::interval(HEARTBEAT);
    beat.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    loop {
        tokio::select! {
            _ = inner.closed.cancelled() => return,
            feed = feed.recv() => match feed {
                Some(Feed::Joined) => rejoin(&inner, &shared).await,
                Some(Feed::Message(text)) => heard(&inner, &shared, &text).await,
                Some(Feed::Lost(_)) => {}
                None => return,
            },
            _ = beat.tick() => heartbeat(&inner, &shared).await,
        }
    }
}

/// The state is reached (at start, or again after a loss, maybe emptied meanwhile): write
/// back what this instance holds that the state lacks, then take what it has.
async fn rejoin(inner: &Arc<Inner>, shared: &Shared) {
    // First what a starting instance shows at once: every listing its servers have none of.
    fill_catalog(inner, shared).await;
    if merge_registry(inner, shared).await {
        shared.publish(news(shared, true, None)).await;
    }
    if apply_registry(inner, shared).await {
        fill_catalog(inner, shared).await;
    }
    let documents: Vec<_> = inner
        .services()
        .iter()
        .filter_map(|service| service.slot.as_ref()?.last_document())
        .collect();
    for document in documents {
        {
            let name = format!("catalog:{}", document.digest);
            let _ = shared
                .compare_and_set(&name, None, Some(document.text), document.ttl)
                .await;
        }
    }
    heartbeat(inner, shared).await;
}

/// Shows the shared catalog's listing of each service not yet listed live.
async fn fill_catalog(inner: &Inner, shared: &Shared) {
    let waiting: Vec<Arc<Service>> = inner
        .services()
        .iter()
        .filter(|s| s.slot.is_some() && awaits_listing(s))
        .cloned()
        .collect();
    let names: Vec<String> = waiting
        .iter()
        .flat_map(|s| s.slot.iter().flat_map(|slot| slot.digests()))
        .map(|digest| format!("catalog:{digest}"))
        .collect();
    let Ok(values) = shared.get_many(&names).await else {
        return;
    };
    // Decoded off the runtime's threads, in a part per core, as a store reads its files.
    let parts = std::thread::available_parallelism().map_or(1, |n| n.get());
    let per_part = waiting.len().div_ceil(parts).max(1);
    let mut values = values.into_iter();
    let decoding: Vec<_> = waiting
        .chunks(per_part)
        .map(|services| {
            let services = services.to_vec();
            let documents: Vec<Option<String>> = values.by_ref().take(2 * services.len()).collect();
            tokio::task::spawn_blocking(move || {
                let pairs = services.into_iter().zip(documents.chunks(2));
                pairs
                    .filter_map(|(service, pair)| {
                        let tools = adopted(&service, pair)?;
                        Some((service, tools))
                    })
                    .collect::<Vec<_>>()
            })
        })
        .collect();
    let mut found = Vec::new();
    for part in decoding {
        found.extend(part.await.unwrap_or_default());
    }
    show(inner, found);
}

/// The tools of the first of a service's documents (private, then public) that is whole,
/// fresh and its own.
fn adopted(service: &Service, documents: &[Option<String>]) -> Option<Vec<ListedTool>> {
    let slot = service.slot.as_ref()?;
    let mut digests = slot.digests().into_iter().zip(documents);
    digests.find_map(|(digest, text)| slot.adopt(digest, text.as_deref()?))
}

/// Shows each listing of the catalog for its service, if that still waits for its own.
fn show(inner: &Inner, listings: Vec<(Arc<Service>, Vec<ListedTool>)>) {
    let waiting = listings.into_iter().filter(|(s, _)| awaits_listing(s));
    inner.change_each(waiting.collect(), |state, tools| {
        state.tools = Arc::new(tools);
        state.cached = true;
    });
}

/// Whether the service waits for its server's first listing (lazy or initializing): a
/// catalog's copy is shown meanwhile. A failed one shows none.
fn awaits_listing(service: &Service) -> bool {
    let state = service.state.borrow();
    matches!(state.phase, Phase::Lazy | Phase::Initializing)
}

/// Acts on one message of the news channel; anything not ours is ignored.
async fn heard(inner: &Arc<Inner>, shared: &Shared, text: &str) {
    let Ok(news) = serde_json::from_str::<News>(text) else {
        return;
    };
    if news.from == shared.instance() {
        return;
    }
    if news.registry && apply_registry(inner, shared).await {
        fill_catalog(inner, shared).await;
    }
    let Some(digest) = news.tools else { return };
    let services: Vec<Arc<Service>> = inner
        .services()
        .iter()
        .filter(|s| {
            s.slot
                .as_ref()
                .is_some_and(|slot| slot.digests().contains(&digest.as_str()))
        })
        .cloned()
        .collect();
    for service in services {
        if service.session.borrow().is_some() {
            // Its own server is the truth for this instance: list it again.
            service.relist.notify_one();
            continue;
        }
        let names: Vec<String> = service
            .slot
            .iter()
            .flat_map(|slot| slot.digests())
            .map(|digest| format!("catalog:{digest}"))
            .collect();
        if let Ok(values) = shared.get_many(&names).await
            && let Some(tools) = adopted(&service, &values)
        {
            show(inner, vec![(service.clone(), tools)]);
        }
    }
}

/// Says this instance is alive, with its services' states; writes what was kept.
async fn heartbeat(inner: &Inner, shared: &Shared) {
    if shared.pending().0 > 0 {
        shared.flush().await;
    }
    let me = Instance {
        id: shared.instance().to_owned(),
        host: host_name(),
        pid: std::process::id(),
        servers: servers(inner),
        seen_at: clock::iso8601(SystemTime::now()),
    };
    let Ok(text) = serde_json::to_string(&me) else {
        return;
    };
    shared
        .put(&format!("instance:{}", me.id), text, Some(ALIVE))
        .await;
    let _ = update_index(shared, |ids| {
        let added = !ids.contains(&me.id);
        if added {
            ids.push(me.id.clone());
        }
        added
    })
    .await;
}

/// Changes the index of instances with `change` (which answers whether it changed it).
async fn update_index(
    shared: &Shared,
    change: impl Fn(&mut Vec<String>) -> bool,
) -> Result<(), ()> {
    for _ in 0..ATTEMPTS {
        let text = shared.get(INSTANCES).await.map_err(|_| ())?;
        let mut ids: Vec<String> = text
            .as_deref()
            .and_then(|t| serde_json::from_str(t).ok())
            .unwrap_or_default();
        if !change(&mut ids) {
            return Ok(());
        }
        let value = serde_json::to_string(&ids).map_err(|_| ())?;
        if shared
            .compare_and_set(INSTANCES, text, Some(value), None)
            .await
            == Ok(true)
        {
            return Ok(());
        }
    }
    Err(())
}

/// This instance's services (store-view names) and their states.
fn servers(inner: &Inner) -> BTreeMap<String, String> {
    let services = inner.services();
    let states = services.iter().map(|s| {
        let phase = s.state.borrow().phase;
        (s.global.clone(), phase.as_str().to_owned())
    });
    states.collect()
}

/// The live instances of the fleet: this one always, the others while their heartbeat
/// lasts. Gone ones are dropped from the index on the way.
pub(super) async fn instances(inner: &Inner) -> Vec<Instance> {
    let Some(shared) = inner.options.shared.as_ref() else {
        return vec![own(inner, None)];
    };
    let Ok(Some(text)) = shared.get(INSTANCES).await else {
        return vec![own(inner, Some(shared))];
    };
    let ids: Vec<String> = serde_json::from_str(&text).unwrap_or_default();
    let names: Vec<String> = ids.iter().map(|id| format!("instance:{id}")).collect();
    let Ok(values) = shared.get_many(&names).await else {
        return vec![own(inner, Some(shared))];
    };
    let mut live = Vec::new();
    let mut gone = Vec::new();
    for (id, value) in ids.iter().zip(values) {
        let instance = value.and_then(|v| serde_json::from_str::<Instance>(&v).ok());
        match instance {
            Some(instance) if instance.id == *id => live.push(instance),
            _ => gone.push(id.clone()),
        }
    }
    if !live.iter().any(|i| i.id == shared.instance()) {
        live.push(own(inner, Some(shared)));
    }
    if !gone.is_empty() {
        let _ = update_index(shared, |ids| {
            let before = ids.len();
            ids.retain(|id| !gone.contains(id));
            ids.len() != before
        })
        .await;
    }
    live
}

fn own(inner: &Inner, shared: Option<&Shared>) -> Instance {
    Instance {
        id: shared.map_or("local", |s| s.instance()).to_owned(),
        host: host_name(),
        pid: std::process::id(),
        servers: servers(inner),
        seen_at: clock::iso8601(SystemTime::now()),
    }
}

/// Says this instance is gone: its heartbeat key deleted (the index drops it later).
pub(super) async fn leave(inner: &Inner) {
    if let Some(shared) = &inner.options.shared {
        shared
            .remove(&format!("instance:{}", shared.instance()))
            .await;
    }
}

/// The machine's name, for a person telling instances apart.
fn host_name() -> String {
    let from_env = ["HOSTNAME", "COMPUTERNAME"]
        .iter()
        .find_map(|name| std::env::var(name).ok().filter(|v| !v.is_empty()));
    let from_file = || {
        std::fs::read_to_string("/etc/hostname")
            .ok()
            .map(|s| s.trim().to_owned())
            .filter(|s| !s.is_empty())
    };
    from_env
        .or_else(from_file)
        .unwrap_or_else(|| "unknown".to_owned())
}
