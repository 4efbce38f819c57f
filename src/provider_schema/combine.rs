//! Combinators folded into one object schema: every provider wants a tool's root to be a
//! plain `type: "object"` (Anthropic refuses `anyOf`/`oneOf`/`allOf` there, OpenAI wants an
//! object), and neither Gemini nor OpenAI's strict mode reads `allOf`.

use serde_json::{Map, Value};

/// The root as an object schema: `allOf` branches merged with their `required` united;
/// `anyOf`/`oneOf` branches merged with only what every branch requires kept required.
pub fn object_root(schema: Value) -> Value {
    let mut map = match schema {
        Value::Object(map) => map,
        _ => Map::new(),
    };
    if let Some(Value::Array(branches)) = map.shift_remove("allOf") {
        merge_into(&mut map, branches, true);
    }
    for key in ["anyOf", "oneOf"] {
        if let Some(Value::Array(branches)) = map.shift_remove(key) {
            merge_into(&mut map, branches, false);
        }
    }
    map.insert("type".into(), Value::String("object".into()));
    map.entry("properties")
        .or_insert_with(|| Value::Object(Map::new()));
    Value::Object(map)
}

/// Merges `allOf` branches into `map`: properties united (the first definition wins),
/// `required` united, other keywords taken from the first branch that has them.
pub fn merge_all_of(map: &mut Map<String, Value>, branches: Vec<Value>) {
    merge_into(map, branches, true);
}

fn merge_into(map: &mut Map<String, Value>, branches: Vec<Value>, all: bool) {
    let mut required = names(map.get("required"));
    let mut each_requires: Option<Vec<String>> = None;
    for branch in branches {
        let Value::Object(branch) = branch else {
            continue;
        };
        let own = names(branch.get("required"));
        each_requires = Some(match each_requires {
            None => own.clone(),
            Some(kept) => kept.into_iter().filter(|n| own.contains(n)).collect(),
        });
        if all {
            extend_unique(&mut required, own);
        }
        for (key, value) in branch {
            match (key.as_str(), value) {
                ("required", _) => {}
                ("properties", Value::Object(props)) => {
                    let target = map
                        .entry("properties")
                        .or_insert_with(|| Value::Object(Map::new()));
                    if let Value::Object(target) = target {
                        for (name, schema) in props {
                            target.entry(name).or_insert(schema);
                        }
                    }
                }
                (_, value) => {
                    map.entry(key).or_insert(value);
                }
            }
        }
    }
    if !all {
        extend_unique(&mut required, each_requires.unwrap_or_default());
    }
    if !required.is_empty() {
        let list = required.into_iter().map(Value::String).collect();
        map.insert("required".into(), Value::Array(list));
    }
}

fn names(list: Option<&Value>) -> Vec<String> {
    match list {
        Some(Value::Array(items)) => items
            .iter()
            .filter_map(Value::as_str)
            .map(str::to_owned)
            .collect(),
        _ => Vec::new(),
    }
}

fn extend_unique(list: &mut Vec<String>, more: Vec<String>) {
    for name in more {
        if !list.contains(&name) {
            list.push(name);
        }
    }
}
