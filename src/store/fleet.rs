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

mod health;
mod listings;
mod registry;
mod shelves;

use std::sync::Arc;
use std::time::Duration;

pub use self::health::Instance;
use self::health::heartbeat;
pub(crate) use self::health::{instances, leave};
pub use self::listings::SharedCatalog;
use self::listings::{adopted, fill_catalog, read_catalog, show};
pub(crate) use self::registry::{Fleet, share};
use self::registry::{apply_registry, merge_registry};
pub use self::shelves::SharedShelves;
use super::news::{EPOCH, News, news};
use super::service::{Inner, Service};
use crate::state::{Feed, Shared};

const HEARTBEAT: Duration = Duration::from_millis(2_000);
/// Attempts at a compare-and-set of a shared document before giving up for now (the
/// next news or rejoin tries again).
const ATTEMPTS: usize = 16;

/// Follows the fleet's news until the store closes, and says every `HEARTBEAT` that this
/// instance is alive.
pub(super) async fn follow(inner: Arc<Inner>, fleet: Arc<Fleet>) {
    let Some(shared) = inner.options.shared.clone() else {
        return;
    };
    let mut feed = shared.follow();
    // What a starting instance shows at once is read while the host's turn runs and the
    // news link comes up. As servers do, the fleet acts a turn after the store is made:
    // the host has set up its listeners by then, and hears of the catalog's listings as
    // a change.
    let early = async {
        let (catalog, first) = tokio::join!(read_catalog(&inner, &shared), feed.recv());
        inner.started.cancelled().await;
        (catalog, first)
    };
    let (catalog, first) = tokio::select! {
        _ = inner.closed.cancelled() => return,
        early = early => early,
    };
    show(&inner, catalog.found);
    match first {
        Some(Feed::Joined) => {
            // A listing kept before the link was up was told of to no one here.
            if shared.get(EPOCH).await.ok().flatten() != catalog.epoch {
                fill_catalog(&inner, &shared).await;
            }
            settle(&inner, &fleet, &shared).await;
        }
        Some(_) => {}
        None => return,
    }
    let mut beat = tokio::time::interval(HEARTBEAT);
    beat.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    loop {
        tokio::select! {
            _ = inner.closed.cancelled() => return,
            feed = feed.recv() => match feed {
                Some(Feed::Joined) => rejoin(&inner, &fleet, &shared).await,
                Some(Feed::Message(text)) => heard(&inner, &fleet, &shared, &text).await,
                Some(Feed::Lost(_)) => {}
                None => return,
            },
            _ = beat.tick() => heartbeat(&inner, &shared).await,
        }
    }
}

/// The state is reached (at start, or again after a loss, maybe emptied meanwhile): write
/// back what this instance holds that the state lacks, then take what it has.
async fn rejoin(inner: &Arc<Inner>, fleet: &Fleet, shared: &Arc<Shared>) {
    // First what a starting instance shows at once: every listing its servers have none of.
    fill_catalog(inner, shared).await;
    settle(inner, fleet, shared).await;
}

/// The rest of a rejoin, after the catalog's listings: the registry merged both ways,
/// the listings this instance wrote written back where the state lost them, a heartbeat.
async fn settle(inner: &Arc<Inner>, fleet: &Fleet, shared: &Arc<Shared>) {
    if merge_registry(fleet, shared).await {
        shared.publish(news(shared, true, None)).await;
    }
    if apply_registry(inner, fleet, shared).await {
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

/// Acts on one message of the news channel; anything not ours is ignored.
async fn heard(inner: &Arc<Inner>, fleet: &Fleet, shared: &Arc<Shared>, text: &str) {
    let Ok(news) = serde_json::from_str::<News>(text) else {
        return;
    };
    if news.from == shared.instance() {
        return;
    }
    if news.registry && apply_registry(inner, fleet, shared).await {
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
            && let Ok(pair) = <[Option<String>; 2]>::try_from(values)
            && let Some(tools) = adopted(&service, pair)
        {
            show(inner, vec![(service.clone(), tools)]);
        }
    }
}
