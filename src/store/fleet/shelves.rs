//! Servers' public answers shared through the fleet's state (SEP-2549's `cacheScope:
//! "public"`): a shelf per entry without its secrets, so that every instance holding that
//! entry finds what another was told, for as long as the server said it stays fresh.
//! What is read back is input: the session checks its shape before it answers with it.

use std::sync::Arc;
use std::time::Duration;

use serde::{Deserialize, Serialize};

use crate::config::ServerSpec;
use crate::session::cache::Shelved;
use crate::session::{Shelf, Shelves};
use crate::state::Shared;
use crate::store::catalog::{Slot, hex_digest, now_ms};

/// The shelves of a fleet's state.
pub struct SharedShelves {
    shared: Arc<Shared>,
    runtime: tokio::runtime::Handle,
}

impl SharedShelves {
    /// Must be made within a tokio runtime, where its writes then run.
    pub fn new(shared: Arc<Shared>) -> SharedShelves {
        let runtime = tokio::runtime::Handle::current();
        SharedShelves { shared, runtime }
    }
}

impl Shelves for SharedShelves {
    fn shelf(&self, spec: &ServerSpec) -> Option<Arc<dyn Shelf>> {
        Some(Arc::new(FleetShelf {
            shared: self.shared.clone(),
            runtime: self.runtime.clone(),
            scope: Slot::new(None, spec).public_digest().to_owned(),
        }))
    }
}

struct FleetShelf {
    shared: Arc<Shared>,
    runtime: tokio::runtime::Handle,
    scope: String,
}

/// An answer as it is kept: until when (ms since the epoch), and its text.
#[derive(Serialize, Deserialize)]
struct Kept {
    until: f64,
    value: String,
}

impl FleetShelf {
    fn name(&self, key: &str) -> String {
        format!("answers:{}:{}", self.scope, hex_digest(&[key.as_bytes()]))
    }
}

impl Shelf for FleetShelf {
    fn get<'a>(&'a self, key: &'a str) -> Shelved<'a> {
        Box::pin(async move {
            let text = self.shared.get(&self.name(key)).await.ok()??;
            let kept: Kept = serde_json::from_str(&text).ok()?;
            let left = kept.until - now_ms();
            (left.is_finite() && left > 0.0)
                .then(|| (kept.value, Duration::from_millis(left as u64)))
        })
    }

    fn put(&self, key: &str, value: Arc<str>, ttl: Duration) {
        let until = now_ms() + ttl.as_millis() as f64;
        let kept = Kept {
            until,
            value: value.to_string(),
        };
        let Ok(text) = serde_json::to_string(&kept) else {
            return;
        };
        let (shared, name) = (self.shared.clone(), self.name(key));
        self.runtime
            .spawn(async move { shared.put(&name, text, Some(ttl)).await });
    }
}
