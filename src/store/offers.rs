//! The sessions behind a view's services, for what servers offer besides tools
//! (resources, prompts, completions): asked of the live session, never cached.

use std::sync::Arc;

use super::calls::not_connected;
use super::{Phase, Store};
use crate::session::Session;

impl Store {
    /// The session of the service a view names `name`, or why there is none (no such
    /// service; not connected, with its last error).
    pub fn session_of(&self, agent: Option<&str>, name: &str) -> Result<Arc<Session>, String> {
        let Some(service) = self.find(agent, name) else {
            return Err(format!("no MCP server \"{name}\" in this view"));
        };
        let session = service.session.borrow().clone();
        session.ok_or_else(|| not_connected(&service, name).output)
    }

    /// The view's connected services, by the view's names, in view order.
    pub fn sessions(&self, agent: Option<&str>) -> Vec<(String, Arc<Session>)> {
        let services = self.view(agent).into_iter();
        let connected = services.filter(|s| s.state.borrow().phase == Phase::Connected);
        connected
            .filter_map(|s| {
                let session = s.session.borrow().clone()?;
                Some((s.view_name(agent).to_owned(), session))
            })
            .collect()
    }
}
