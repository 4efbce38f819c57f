//! Tool search over a `loadMcp` source.

use napi_derive::napi;

use super::McpSourceHandle;

#[napi]
impl McpSourceHandle {
    /// The numbers (in `summary().tools`) of the tools that match `query` best, best
    /// first, at most `limit`.
    #[napi(catch_unwind)]
    pub fn search_tools(&self, query: String, limit: u32) -> Vec<u32> {
        let found = self.source.search_tools(&query, limit as usize).into_iter();
        found.map(|index| index as u32).collect()
    }
}
