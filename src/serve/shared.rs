//! What every session of a served view shares: the store, the view's agent, how it is
//! served, its names and routes, and the gateway's closing.

use std::sync::{Arc, Mutex};

use tokio_util::sync::CancellationToken;

use super::names::{Named, Names};
use super::parked::Parking;
use super::routes::Routes;
use super::tasks::{self, Tasks};
use crate::store::Store;

/// How a view is served.
#[derive(Debug, Clone)]
pub struct ViewOptions {
    /// Serve the view's meta-tools (search, describe, call) instead of its tools.
    pub meta: bool,
    /// The gateway's name and version, as downstream clients see them.
    pub name: String,
    pub version: String,
}

/// What every session of a view shares.
pub struct Shared {
    pub store: Arc<Store>,
    pub agent: Option<String>,
    pub options: ViewOptions,
    pub tools: Names,
    pub offers: Routes,
    /// The servers' instructions as last composed, at the view's revision then (rmcp asks
    /// for the server's info often; they change only with the view).
    pub instructions: Mutex<Option<(u64, Option<String>)>>,
    /// Cancelled when the gateway stops.
    pub closing: CancellationToken,
    /// Calls waiting for a 2026 client's answers.
    pub parking: Parking,
    /// The tasks downstream clients' calls became.
    pub tasks: Tasks,
}

impl Shared {
    /// Where the view's tasks run their calls.
    pub fn task_view(&self) -> tasks::View {
        tasks::View {
            store: self.store.clone(),
            agent: self.agent.clone(),
            closing: self.closing.clone(),
        }
    }

    /// The view's names now.
    pub fn named(&self) -> Arc<Named> {
        self.tools.current(&self.store, self.agent.as_deref())
    }
}
