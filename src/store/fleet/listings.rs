//! The fleet's catalog: each live listing under its slot's digest, and what a starting
//! instance shows from it while its servers start.

use std::sync::Arc;

use crate::config::ServerSpec;
use crate::session::Listings;
use crate::state::Shared;
use crate::store::Phase;
use crate::store::catalog::Slot;
use crate::store::news::{EPOCH, share_listing};
use crate::store::service::{Inner, Service, normalized};
use crate::tool::listed::{CacheHints, ListedTool};

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
                    let _ = text.map(|text| slot.adopt(digest, text));
                }
            }
            if let Some(document) = slot.write(&tools, hints) {
                share_listing(&shared, document).await;
            }
        });
    }
}

/// Shows the shared catalog's listing of each service not yet listed live.
pub(crate) async fn fill_catalog(inner: &Inner, shared: &Arc<Shared>) {
    show(inner, read_catalog(inner, shared).await.found);
}

/// What the shared catalog holds for the services not yet listed live.
pub(crate) struct Catalog {
    /// Its epoch when read (`None`: never written, or not read).
    pub epoch: Option<String>,
    /// Each service it has a listing of, with the listing.
    pub found: Found,
}

/// Reads the shared catalog's listing of each service not yet listed live, where it has
/// one, and its epoch.
pub(crate) async fn read_catalog(inner: &Inner, shared: &Arc<Shared>) -> Catalog {
    let waiting: Vec<Arc<Service>> = inner
        .services()
        .iter()
        .filter(|s| s.slot.is_some() && awaits_listing(s))
        .cloned()
        .collect();
    // The epoch first: a listing kept after it was read changes it.
    let epoch = shared.get(EPOCH).await.ok().flatten();
    // In parts, all asked for at once and each decoded off the runtime's threads as it
    // comes, so that decoding one overlaps receiving the next.
    let parts = std::thread::available_parallelism()
        .map_or(1, |n| n.get())
        .max(PARTS);
    let per_part = waiting.len().div_ceil(parts).max(1);
    let reading: Vec<_> = waiting
        .chunks(per_part)
        .map(|services| tokio::spawn(read_part(shared.clone(), services.to_vec())))
        .collect();
    let mut found = Vec::new();
    for part in reading {
        found.extend(part.await.unwrap_or_default());
    }
    Catalog { epoch, found }
}

/// Parts the catalog is read in, at the least.
const PARTS: usize = 4;

/// The shared catalog's listings of `services`, decoded off the runtime's threads.
async fn read_part(shared: Arc<Shared>, services: Vec<Arc<Service>>) -> Found {
    let digests = services
        .iter()
        .flat_map(|s| s.slot.iter().flat_map(|slot| slot.digests()));
    let names: Vec<String> = digests.map(|digest| format!("catalog:{digest}")).collect();
    let Ok(documents) = shared.get_many(&names).await else {
        return Vec::new();
    };
    let decoding = tokio::task::spawn_blocking(move || {
        let mut documents = documents.into_iter();
        let pairs = services.into_iter().map(|service| {
            let pair = [documents.next().flatten(), documents.next().flatten()];
            (service, pair)
        });
        let found =
            pairs.filter_map(|(service, pair)| Some((service.clone(), adopted(&service, pair)?)));
        found.collect()
    });
    decoding.await.unwrap_or_default()
}

/// Services, each with the listing the catalog has of it.
pub(crate) type Found = Vec<(Arc<Service>, Vec<ListedTool>)>;

/// The tools of the first of a service's documents (private, then public) that is whole,
/// fresh and its own.
pub(crate) fn adopted(
    service: &Service,
    documents: [Option<String>; 2],
) -> Option<Vec<ListedTool>> {
    let slot = service.slot.as_ref()?;
    let mut digests = slot.digests().into_iter().zip(documents);
    digests.find_map(|(digest, text)| slot.adopt(digest, text?))
}

/// Shows each listing of the catalog for its service, if that still waits for its own.
pub(crate) fn show(inner: &Inner, listings: Found) {
    let waiting = listings.into_iter().filter(|(s, _)| awaits_listing(s));
    let shown = waiting.map(|(service, tools)| {
        let tools = service.shown(&Arc::new(tools));
        (service, tools)
    });
    inner.change_each(shown.collect(), |state, (tools, app_tools)| {
        state.tools = tools;
        state.app_tools = app_tools;
        state.cached = true;
    });
}

/// Whether the service waits for its server's first listing (lazy or initializing): a
/// catalog's copy is shown meanwhile. A failed one shows none.
fn awaits_listing(service: &Service) -> bool {
    let state = service.state.borrow();
    matches!(state.phase, Phase::Lazy | Phase::Initializing)
}
