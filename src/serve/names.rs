//! The names a view gives its tools, at one revision of the view: where each leads (its
//! service and its name on its server), and the `tools/list` the gateway answers. Both
//! model-visible and app-only tools are listed (the downstream host applies MCP Apps'
//! visibility rule, seeing `_meta.ui` as sent).

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use rmcp::ErrorData;

use crate::lock::lock;
use crate::store::{Listing, Store};

/// The view's listings at one revision, and where each name leads.
pub(super) struct Named {
    revision: u64,
    listings: [Listing; 2],
    /// A name → which listing, and the tool's place in it.
    places: HashMap<String, (usize, usize)>,
}

/// The tool a name leads to: its service as the view names it, and its name on its server.
pub(super) struct Target {
    pub service: String,
    pub tool: String,
}

impl Named {
    pub(super) fn target(&self, name: &str) -> Option<Target> {
        let &(listing, index) = self.places.get(name)?;
        let entry = self.listings[listing].get(index)?;
        Some(Target {
            service: entry.service_name.to_owned(),
            tool: entry.tool.name.clone(),
        })
    }
}

impl Named {
    /// The `tools/list` result of a view's tools, as JSON text.
    pub(super) fn wire(&self) -> String {
        let mut out = String::from("{\"tools\":[");
        let mut first = true;
        for (l, listing) in self.listings.iter().enumerate() {
            for (i, entry) in listing.iter().enumerate() {
                // A name is listed once, as the tool it leads to.
                if self.places.get(entry.name) != Some(&(l, i)) {
                    continue;
                }
                if !first {
                    out.push(',');
                }
                first = false;
                entry.tool.write_wire_as(entry.name, &mut out);
            }
        }
        out.push_str("]}");
        out
    }

    /// The tool a name leads to, when a model may call it (meta mode).
    pub(super) fn model_target(&self, name: &str) -> Option<Target> {
        matches!(self.places.get(name), Some((0, _))).then(|| self.target(name))?
    }

    /// The name and description of model-visible tool `index`.
    pub(super) fn model_entry(&self, index: usize) -> Option<(&str, &str)> {
        let entry = self.listings[0].get(index)?;
        Some((
            entry.name,
            entry.tool.description.as_deref().unwrap_or_default(),
        ))
    }

    /// A model-visible tool's name, description and input schema, as JSON text.
    pub(super) fn describe(&self, name: &str) -> Option<String> {
        let &(0, index) = self.places.get(name)? else {
            return None;
        };
        let entry = self.listings[0].get(index)?;
        let description = entry.tool.description.as_deref().unwrap_or_default();
        Some(format!(
            "{{\"name\":{},\"description\":{},\"inputSchema\":{}}}",
            serde_json::Value::from(entry.name),
            serde_json::Value::from(description),
            entry.tool.input_schema.get()
        ))
    }
}

/// The last `Named` made, reused while the view's revision stays.
#[derive(Default)]
pub(super) struct Names(Mutex<Option<Arc<Named>>>);

impl Names {
    /// The view's names now: the last ones made while its revision stays.
    pub(super) fn current(&self, store: &Store, agent: Option<&str>) -> Arc<Named> {
        let revision = store.revision(agent);
        if let Some(named) = lock(&self.0).as_ref().filter(|n| n.revision == revision) {
            return named.clone();
        }
        let listings = [store.list_tools(agent), store.list_app_tools(agent)];
        let mut places = HashMap::new();
        for (l, listing) in listings.iter().enumerate() {
            for (i, entry) in listing.iter().enumerate() {
                places.entry(entry.name.to_owned()).or_insert((l, i));
            }
        }
        let named = Arc::new(Named {
            revision,
            listings,
            places,
        });
        *lock(&self.0) = Some(named.clone());
        named
    }
}

pub(super) fn unknown_tool(name: &str) -> ErrorData {
    ErrorData::invalid_params(format!("Unknown tool: {name}"), None)
}
