//! Tool search over a `loadMcp` source: its tools never change, so one index serves
//! every query.

use napi_derive::napi;

use super::McpSourceHandle;
use crate::search::{Doc, Index};

#[napi]
impl McpSourceHandle {
    /// The numbers (in `summary().tools`) of the tools that match `query` best, best
    /// first, at most `limit`.
    #[napi(catch_unwind)]
    pub fn search_tools(&self, query: String, limit: u32) -> Vec<u32> {
        let index = self.index.get_or_init(|| {
            Index::build(self.source.tools.iter().map(|tool| Doc {
                name: &tool.name,
                title: tool.listed.title.as_deref(),
                description: tool.listed.description.as_deref().unwrap_or_default(),
                input_schema: tool.listed.input_schema.get(),
            }))
        });
        let found = index.search(&query, limit as usize).into_iter();
        found.map(|doc| doc as u32).collect()
    }
}
