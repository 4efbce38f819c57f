//! Tool search in a store view: one index per view, built from its listing when the view
//! is first searched at a revision, so searching again costs only the query.

use std::sync::Arc;

use crate::lock::lock;
use crate::search::{Doc, Index};

use super::Store;

pub(super) struct ViewIndex {
    /// The view's revision whose listing the index holds, in the listing's order.
    revision: u64,
    index: Index,
}

/// Tools found in a view: positions in its listing at `revision`.
pub struct Found {
    pub revision: u64,
    pub tools: Vec<usize>,
}

impl Store {
    /// The view's tools that match `query` best, best first, at most `limit`.
    pub fn search_tools(&self, agent: Option<&str>, query: &str, limit: usize) -> Found {
        let view = self.view_index(agent);
        Found {
            revision: view.revision,
            tools: view.index.search(query, limit),
        }
    }

    /// The bytes the view's index holds.
    pub fn search_index_bytes(&self, agent: Option<&str>) -> usize {
        self.view_index(agent).index.heap_bytes()
    }

    /// Whether the view has an index (built, and not forgotten since).
    #[cfg(test)]
    pub(super) fn has_index(&self, agent: Option<&str>) -> bool {
        lock(&self.inner.indexes).contains_key(&agent.map(str::to_owned))
    }

    fn view_index(&self, agent: Option<&str>) -> Arc<ViewIndex> {
        let key = agent.map(str::to_owned);
        let indexes = || lock(&self.inner.indexes);
        let mut revision = self.revision(agent);
        if let Some(view) = indexes().get(&key).filter(|v| v.revision == revision) {
            return view.clone();
        }
        // A listing is tagged with a revision only when nothing changed while it was read.
        let mut tries = 0;
        let view = loop {
            let tools = self.list_tools(agent);
            let index = Index::build(tools.iter().map(|entry| Doc::of(entry.name, entry.tool)));
            let now = self.revision(agent);
            tries += 1;
            if now == revision || tries == 3 {
                break Arc::new(ViewIndex { revision, index });
            }
            revision = now;
        };
        indexes().insert(key, view.clone());
        view
    }
}
