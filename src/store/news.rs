//! What one instance of a fleet tells the others, on its state's news channel: the
//! registry changed, or the listing kept under a digest did.

use serde::{Deserialize, Serialize};

use super::catalog::Document;
use crate::state::{Shared, random_id};

#[derive(Serialize, Deserialize)]
pub(super) struct News {
    pub(super) from: String,
    /// The registry changed.
    #[serde(default)]
    pub(super) registry: bool,
    /// The listing kept under this digest changed.
    #[serde(default)]
    pub(super) tools: Option<String>,
}

/// The news from this instance, as the channel carries it.
pub(super) fn news(shared: &Shared, registry: bool, tools: Option<String>) -> String {
    let news = News {
        from: shared.instance().to_owned(),
        registry,
        tools,
    };
    serde_json::to_string(&news).unwrap_or_default()
}

/// The shared catalog's epoch: a fresh value with each listing kept, so that a starting
/// instance, which reads the catalog while its news link comes up, knows whether a change
/// came before the link did.
pub(super) const EPOCH: &str = "catalog-epoch";

/// Keeps a listing that differs from the one kept before in the shared catalog, and tells
/// the others.
pub(super) async fn share_listing(shared: &Shared, document: Document) {
    let name = format!("catalog:{}", document.digest);
    shared.put(&name, document.text, document.ttl).await;
    shared.put(EPOCH, random_id(), None).await;
    shared
        .publish(news(shared, false, Some(document.digest)))
        .await;
}
