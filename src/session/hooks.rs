//! What the host offers a session's servers beyond plain calls.

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;

use serde_json::Value;

use crate::elicitation::Elicitor;

/// What the host offers servers beyond plain calls.
#[derive(Clone, Default)]
pub struct Hooks {
    /// When set, the `elicitation` capability is advertised and requests go here.
    pub elicitor: Option<Arc<dyn Elicitor>>,
    /// Receives the servers' `notifications/message`.
    pub logger: Option<Arc<dyn Logger>>,
    /// Who signs in to servers that ask, and where tokens rest.
    pub oauth: crate::auth::OAuthHooks,
    /// Told of each server's first listing (a fleet's shared catalog keeps it).
    pub listings: Option<Arc<dyn Listings>>,
    /// Where servers' public answers are shared (a fleet's state), each server's apart.
    pub shelves: Option<Arc<dyn Shelves>>,
}

/// Where a host shares servers' public answers.
pub trait Shelves: Send + Sync {
    /// The shelf of the server of `spec`: one per entry without its secrets.
    fn shelf(&self, spec: &crate::config::ServerSpec) -> Option<Arc<dyn super::cache::Shelf>>;
}

/// Where a host keeps the listings its servers gave.
pub trait Listings: Send + Sync {
    /// `tools`, as the server of `spec` listed them, with its cache hints.
    fn listed(
        &self,
        spec: &crate::config::ServerSpec,
        hints: crate::tool::listed::CacheHints,
        tools: &[crate::tool::listed::ListedTool],
    );
}

pub trait Logger: Send + Sync {
    /// Delivers one message: `data` as the server sent it; `text`, the same as one line for
    /// a person to read, with the server's secrets redacted. The server's next message is
    /// read once this resolves, so a host that falls behind slows the server down rather
    /// than buffering without end.
    fn log(
        &self,
        server: &str,
        level: &str,
        data: Value,
        text: String,
    ) -> Pin<Box<dyn Future<Output = ()> + Send + '_>>;
}
