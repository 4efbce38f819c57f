//! What every session of a served view shares: the store, the view's agent, how it is
//! served, its names and routes, and the gateway's closing.

use std::sync::{Arc, Mutex};

use ring::rand::{SecureRandom, SystemRandom};
use tokio_util::sync::CancellationToken;

use super::names::{Named, Names};
use super::parked::Parking;
use super::routes::Routes;
use super::tasks::Tasks;
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
    /// The view's names now.
    pub fn named(&self) -> Arc<Named> {
        self.tools.current(&self.store, self.agent.as_deref())
    }
}

/// A name nobody can guess, for the handles a view gives out (parked calls, tasks): 128
/// random bits in hex; `None` when the system has no randomness to give.
pub(super) fn unguessable() -> Option<String> {
    let mut bytes = [0u8; 16];
    SystemRandom::new().fill(&mut bytes).ok()?;
    Some(bytes.iter().map(|b| format!("{b:02x}")).collect())
}
