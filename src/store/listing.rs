//! A view's tools as the store holds them: each service's listing shared, not copied (a
//! store of thousands of tools lists them all at its start), and the names the view gives
//! them.

use std::sync::Arc;

use crate::config::Deferral;
use crate::tool;
use crate::tool::listed::ListedTool;

/// The tools of a view, service by service, in the view's order.
pub struct Listing {
    groups: Vec<Group>,
    /// One per tool, in order: unique within the view.
    names: Vec<String>,
    /// Where each group's tools begin among all of them.
    starts: Vec<usize>,
}

/// One service's tools, as the view names the service.
pub struct Group {
    pub service_name: String,
    pub client_id: String,
    pub tools: Arc<Vec<ListedTool>>,
    /// The entry's `maxOutputChars`, for the adapters.
    pub max_output_chars: Option<u64>,
    /// The entry's `deferLoading` and `alwaysLoad`, for the adapters.
    pub deferral: Deferral,
}

/// One tool of a listing.
pub struct Entry<'a> {
    /// What the view calls it.
    pub name: &'a str,
    pub service_name: &'a str,
    pub client_id: &'a str,
    /// As its server lists it (its `name` the one the server knows it by).
    pub tool: &'a ListedTool,
    deferral: &'a Deferral,
}

impl Entry<'_> {
    /// Whether the entry's `deferLoading` leaves it to the provider's tool search.
    pub fn deferred(&self) -> bool {
        self.deferral.defers(&self.tool.name)
    }
}

impl Listing {
    pub(super) fn new(groups: Vec<Group>) -> Listing {
        let names = tool::names::assign(groups.iter().flat_map(|group| {
            let service = group.service_name.as_str();
            group
                .tools
                .iter()
                .map(move |tool| (service, tool.name.as_str()))
        }));
        let starts = groups
            .iter()
            .scan(0, |next, group| {
                let start = *next;
                *next += group.tools.len();
                Some(start)
            })
            .collect();
        Listing {
            groups,
            names,
            starts,
        }
    }

    /// Tool number `index`.
    pub fn get(&self, index: usize) -> Option<Entry<'_>> {
        let name = self.names.get(index)?;
        // The last group beginning at or before `index` (empty groups begin where the next does).
        let g = self.starts.partition_point(|&start| start <= index) - 1;
        let group = &self.groups[g];
        Some(Entry {
            name,
            service_name: &group.service_name,
            client_id: &group.client_id,
            tool: group.tools.get(index - self.starts[g])?,
            deferral: &group.deferral,
        })
    }

    pub fn groups(&self) -> &[Group] {
        &self.groups
    }

    pub fn len(&self) -> usize {
        self.names.len()
    }

    pub fn is_empty(&self) -> bool {
        self.names.is_empty()
    }

    pub fn iter(&self) -> impl Iterator<Item = Entry<'_>> {
        let tools = self
            .groups
            .iter()
            .flat_map(|group| group.tools.iter().map(move |tool| (group, tool)));
        tools.zip(&self.names).map(|((group, tool), name)| Entry {
            name,
            service_name: &group.service_name,
            client_id: &group.client_id,
            tool,
            deferral: &group.deferral,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn group(service: &str, tools: &[&str]) -> Group {
        let tool = |name: &&str| ListedTool {
            name: name.to_string(),
            title: None,
            description: None,
            input_schema: serde_json::value::RawValue::from_string("{}".into()).expect("JSON"),
            extra: None,
        };
        Group {
            service_name: service.into(),
            client_id: format!("c:{service}"),
            tools: Arc::new(tools.iter().map(tool).collect()),
            max_output_chars: None,
            deferral: Deferral::default(),
        }
    }

    #[test]
    fn a_tool_is_found_by_its_number_past_empty_groups() {
        let listing = Listing::new(vec![
            group("a", &["x", "y"]),
            group("empty", &[]),
            group("b", &["z"]),
            group("none", &[]),
        ]);
        let all: Vec<(String, String)> = listing
            .iter()
            .map(|e| (e.name.to_owned(), e.client_id.to_owned()))
            .collect();
        let by_number: Vec<(String, String)> = (0..listing.len())
            .map(|i| listing.get(i).expect("a tool"))
            .map(|e| (e.name.to_owned(), e.client_id.to_owned()))
            .collect();
        assert_eq!(all, by_number);
        assert_eq!(by_number[2], ("b_z".to_owned(), "c:b".to_owned()));
        assert!(listing.get(3).is_none());
        assert!(Listing::new(Vec::new()).get(0).is_none());
    }
}
