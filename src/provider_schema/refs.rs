//! `$ref`s to the schema's own definitions replaced by what they point to: only Anthropic
//! reads references, and inlining gives every provider the same schema. A reference met
//! again inside its own expansion (a recursive type) is expanded `MAX_REPEAT` times; past
//! that, past `MAX_NODES` nodes, or when it points outside the schema, it becomes a schema
//! that accepts any value and says why in its description, and the result is marked `cut`.

use serde_json::{Map, Value};

use super::subschemas::{Holds, holds};

/// How often one reference may be expanded inside itself.
const MAX_REPEAT: usize = 2;
/// Nodes written in all: references expanding each other can grow a schema exponentially.
const MAX_NODES: usize = 20_000;

pub struct Inlined {
    pub schema: Value,
    /// A reference was replaced by the any-value fallback.
    pub cut: bool,
}

pub fn inline(root: &Value) -> Inlined {
    let mut walk = Walk {
        root,
        expanding: Vec::new(),
        nodes: 0,
        cut: false,
    };
    let schema = walk.schema(root);
    Inlined {
        schema,
        cut: walk.cut,
    }
}

struct Walk<'a> {
    root: &'a Value,
    /// The references being expanded, outermost first.
    expanding: Vec<&'a str>,
    nodes: usize,
    cut: bool,
}

impl<'a> Walk<'a> {
    fn schema(&mut self, node: &'a Value) -> Value {
        self.nodes += 1;
        let Value::Object(map) = node else {
            return node.clone();
        };
        if self.nodes > MAX_NODES {
            return self.fallback(map, "too large to expand");
        }
        if let Some(Value::String(reference)) = map.get("$ref") {
            return self.reference(map, reference);
        }
        let mut out = Map::new();
        for (key, value) in map {
            if key != "$defs" && key != "definitions" {
                out.insert(key.clone(), self.child(key, value));
            }
        }
        Value::Object(out)
    }

    /// `map` is `{ "$ref": reference, ...siblings }`; siblings (a description, say) win.
    fn reference(&mut self, map: &'a Map<String, Value>, reference: &'a str) -> Value {
        let Some(target) = resolve(self.root, reference) else {
            return self.fallback(map, "a reference outside this schema");
        };
        if self.expanding.iter().filter(|r| **r == reference).count() >= MAX_REPEAT {
            return self.fallback(map, "a recursive structure, not expanded further");
        }
        self.expanding.push(reference);
        let mut expanded = match self.schema(target) {
            Value::Object(map) => map,
            // `true` or `false` as a schema: an empty object accepts anything too.
            _ => Map::new(),
        };
        self.expanding.pop();
        for (key, value) in map {
            if key != "$ref" && key != "$defs" && key != "definitions" {
                let value = self.child(key, value);
                expanded.insert(key.clone(), value);
            }
        }
        Value::Object(expanded)
    }

    /// The value of keyword `key`, its subschemas walked.
    fn child(&mut self, key: &str, value: &'a Value) -> Value {
        match (holds(key, value), value) {
            (Holds::Named, Value::Object(map)) => Value::Object(
                map.iter()
                    .map(|(k, v)| (k.clone(), self.schema(v)))
                    .collect(),
            ),
            (Holds::List, Value::Array(list)) => {
                Value::Array(list.iter().map(|v| self.schema(v)).collect())
            }
            (Holds::One, _) => self.schema(value),
            _ => value.clone(),
        }
    }

    fn fallback(&mut self, map: &Map<String, Value>, why: &str) -> Value {
        self.cut = true;
        let note = match map.get("description").and_then(Value::as_str) {
            Some(description) => format!("{description} ({why}: any JSON value)"),
            None => format!("Any JSON value ({why})."),
        };
        let mut out = Map::new();
        out.insert("description".into(), Value::String(note));
        Value::Object(out)
    }
}

/// A local reference (`#`, `#/$defs/x`, any JSON pointer into the schema).
fn resolve<'a>(root: &'a Value, reference: &str) -> Option<&'a Value> {
    let pointer = reference.strip_prefix('#')?;
    if pointer.is_empty() {
        return Some(root);
    }
    root.pointer(pointer)
}
