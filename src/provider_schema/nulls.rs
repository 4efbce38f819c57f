//! Where strict mode made an optional property nullable: the model must then send every
//! property, `null` for those it means to leave out, and those nulls are taken back out
//! before the tool is called.

use std::collections::BTreeMap;

use serde_json::Value;

/// One position in the arguments: whether a null there was forced in, and what lies below.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Nulls {
    forced: bool,
    props: BTreeMap<String, Nulls>,
    items: Option<Box<Nulls>>,
}

impl Nulls {
    pub fn is_empty(&self) -> bool {
        !self.forced && self.props.is_empty() && self.items.is_none()
    }

    pub(super) fn force(&mut self) {
        self.forced = true;
    }

    /// Keeps `below` under property `name` when it records anything. Positions met twice
    /// (the branches of an `anyOf`) are merged.
    pub(super) fn add_prop(&mut self, name: &str, below: Nulls) {
        if !below.is_empty() {
            self.props.entry(name.to_owned()).or_default().merge(below);
        }
    }

    pub(super) fn add_items(&mut self, below: Nulls) {
        if !below.is_empty() {
            self.items.get_or_insert_with(Box::default).merge(below);
        }
    }

    fn merge(&mut self, other: Nulls) {
        self.forced |= other.forced;
        for (name, below) in other.props {
            self.add_prop(&name, below);
        }
        if let Some(items) = other.items {
            self.add_items(*items);
        }
    }

    /// Removes from `args` each `null` strict mode forced in, leaving the rest as sent.
    pub fn strip(&self, args: &mut Value) {
        match args {
            Value::Object(map) => {
                for (name, below) in &self.props {
                    if below.forced && map.get(name) == Some(&Value::Null) {
                        map.shift_remove(name);
                    } else if let Some(value) = map.get_mut(name) {
                        below.strip(value);
                    }
                }
            }
            Value::Array(list) => {
                if let Some(items) = &self.items {
                    list.iter_mut().for_each(|value| items.strip(value));
                }
            }
            _ => {}
        }
    }
}
