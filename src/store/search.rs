//! Tool search in a store view: one index per view, built from its listing when the view
//! is first searched at a revision, so searching again costs only the query.

use std::sync::Arc;

use crate::search::{Doc, Index};

use super::Store;

pub(super) struct ViewIndex {
    revision: u64,
    index: Index,
    /// The listed name of each document.
    names: Vec<String>,
}

impl Store {
    /// The names of the view's tools that match `query` best, best first, at most `limit`.
    pub fn search_tools(&self, agent: Option<&str>, query: &str, limit: usize) -> Vec<String> {
        let view = self.view_index(agent);
        let found = view.index.search(query, limit).into_iter();
        found.map(|doc| view.names[doc].clone()).collect()
    }

    /// The bytes the view's index holds (its words, postings, lengths and names).
    pub fn search_index_bytes(&self, agent: Option<&str>) -> usize {
        let view = self.view_index(agent);
        let names: usize = view
            .names
            .iter()
            .map(|n| n.len() + size_of::<String>())
            .sum();
        view.index.heap_bytes() + names
    }

    fn view_index(&self, agent: Option<&str>) -> Arc<ViewIndex> {
        let revision = self.revision(agent);
        let key = agent.map(str::to_owned);
        let indexes = || self.inner.indexes.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(view) = indexes().get(&key).filter(|v| v.revision == revision) {
            return view.clone();
        }
        let tools = self.list_tools(agent);
        let index = Index::build(tools.iter().map(|tool| Doc {
            name: &tool.name,
            title: tool.title.as_deref(),
            description: &tool.description,
            input_schema: &tool.input_schema,
        }));
        let names = tools.into_iter().map(|tool| tool.name).collect();
        let view = Arc::new(ViewIndex {
            revision,
            index,
            names,
        });
        indexes().insert(key, view.clone());
        view
    }
}
