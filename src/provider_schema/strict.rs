//! OpenAI's strict mode, over a schema its keyword rules already narrowed: every object
//! closed (`additionalProperties: false`) with every property required, optional ones made
//! nullable, within the documented limits (10 levels of nesting, 5000 properties, 1000
//! enum values, 120000 characters of names and values, 15000 characters for an enum over
//! 250 values). `None` when the schema cannot be said that way: an untyped value, a
//! free-form map (a nested object with no properties declared is one), an array without
//! an item schema, a limit passed.

use serde_json::{Map, Value, json};

use super::Nulls;

const MAX_DEPTH: usize = 10;
const MAX_PROPERTIES: usize = 5000;
const MAX_ENUM_VALUES: usize = 1000;
const MAX_CHARS: usize = 120_000;
const LARGE_ENUM: usize = 250;
const MAX_LARGE_ENUM_CHARS: usize = 15_000;

pub fn strict(schema: Value) -> Option<(Value, Nulls)> {
    let mut budget = Budget::default();
    let mut nulls = Nulls::default();
    let schema = node(schema, 1, &mut budget, &mut nulls)?;
    budget.within().then_some((schema, nulls))
}

#[derive(Default)]
struct Budget {
    properties: usize,
    enum_values: usize,
    chars: usize,
}

impl Budget {
    fn within(&self) -> bool {
        self.properties <= MAX_PROPERTIES
            && self.enum_values <= MAX_ENUM_VALUES
            && self.chars <= MAX_CHARS
    }
}

fn node(schema: Value, depth: usize, budget: &mut Budget, nulls: &mut Nulls) -> Option<Value> {
    let Value::Object(mut map) = schema else {
        return None;
    };
    if depth > MAX_DEPTH {
        return None;
    }
    count_values(&map, budget)?;
    if let Some(Value::Array(branches)) = map.shift_remove("anyOf") {
        let branches = branches
            .into_iter()
            .map(|b| node(b, depth, budget, nulls))
            .collect::<Option<Vec<_>>>()?;
        map.insert("anyOf".into(), Value::Array(branches));
    }
    let typed = ["type", "anyOf", "enum", "const"]
        .iter()
        .any(|k| map.contains_key(*k));
    if !typed {
        return None;
    }
    if has_type(&map, "object") || map.contains_key("properties") {
        object(&mut map, depth, budget, nulls)?;
    }
    if has_type(&map, "array") {
        let items = map.shift_remove("items")?;
        let mut below = Nulls::default();
        let items = node(items, depth + 1, budget, &mut below)?;
        nulls.add_items(below);
        map.insert("items".into(), items);
    }
    Some(Value::Object(map))
}

fn object(
    map: &mut Map<String, Value>,
    depth: usize,
    budget: &mut Budget,
    nulls: &mut Nulls,
) -> Option<()> {
    // A map of any keys (`additionalProperties` true or a schema) cannot be closed. Nor can
    // a property that is an object of no declared properties, open as JSON Schema has it
    // (`{"type": "object"}`): closed, it could only ever be `{}`. The root may be: a
    // tool of no parameters.
    let extra = map.get("additionalProperties");
    let closed = extra == Some(&Value::Bool(false));
    if !closed && (extra.is_some() || depth > 1 && !map.contains_key("properties")) {
        return None;
    }
    // Taken in place, so that `properties` keeps its position among the keywords.
    let props = match map.get_mut("properties").map(Value::take) {
        Some(Value::Object(props)) => props,
        _ => Map::new(),
    };
    let required: Vec<String> = match map.get("required") {
        Some(Value::Array(list)) => list
            .iter()
            .filter_map(|v| v.as_str().map(str::to_owned))
            .collect(),
        _ => Vec::new(),
    };
    budget.properties += props.len();
    let mut out = Map::new();
    for (name, schema) in props {
        budget.chars += name.chars().count();
        let mut below = Nulls::default();
        let mut schema = node(schema, depth + 1, budget, &mut below)?;
        if !required.contains(&name) && !accepts_null(&schema) {
            schema = nullable(schema);
            below.force();
        }
        nulls.add_prop(&name, below);
        out.insert(name, schema);
    }
    let names = out.keys().cloned().map(Value::String).collect();
    map.insert("properties".into(), Value::Object(out));
    map.insert("required".into(), Value::Array(names));
    map.insert("additionalProperties".into(), Value::Bool(false));
    Some(())
}

/// Counts `enum` and `const` values against the limits; `None` for an enum too long.
fn count_values(map: &Map<String, Value>, budget: &mut Budget) -> Option<()> {
    if let Some(Value::Array(values)) = map.get("enum") {
        let chars: usize = values.iter().map(value_chars).sum();
        if values.len() > LARGE_ENUM && chars > MAX_LARGE_ENUM_CHARS {
            return None;
        }
        budget.enum_values += values.len();
        budget.chars += chars;
    }
    if let Some(value) = map.get("const") {
        budget.chars += value_chars(value);
    }
    Some(())
}

fn value_chars(value: &Value) -> usize {
    match value {
        Value::String(s) => s.chars().count(),
        other => other.to_string().len(),
    }
}

fn has_type(map: &Map<String, Value>, kind: &str) -> bool {
    match map.get("type") {
        Some(Value::String(t)) => t == kind,
        Some(Value::Array(types)) => types.iter().any(|t| t == kind),
        _ => false,
    }
}

fn accepts_null(schema: &Value) -> bool {
    let Value::Object(map) = schema else {
        return true;
    };
    if has_type(map, "null") || map.get("const") == Some(&Value::Null) {
        return true;
    }
    if let Some(Value::Array(values)) = map.get("enum") {
        return values.contains(&Value::Null);
    }
    match map.get("anyOf") {
        Some(Value::Array(branches)) => branches.iter().any(accepts_null),
        _ => false,
    }
}

/// `schema` or null: `null` added to its `type` (and `enum`), else a branch of an `anyOf`.
fn nullable(schema: Value) -> Value {
    let Value::Object(mut map) = schema else {
        return schema;
    };
    let simple = !map.contains_key("const") && !map.contains_key("anyOf");
    match map.get_mut("type") {
        Some(Value::String(kind)) if simple => {
            let kind = std::mem::take(kind);
            map.insert("type".into(), json!([kind, "null"]));
        }
        Some(Value::Array(types)) if simple => types.push(json!("null")),
        _ => {
            if let Some(Value::Array(branches)) = map.get_mut("anyOf") {
                branches.push(json!({ "type": "null" }));
                return Value::Object(map);
            }
            return json!({ "anyOf": [Value::Object(map), { "type": "null" }] });
        }
    }
    if let Some(Value::Array(values)) = map.get_mut("enum") {
        values.push(Value::Null);
    }
    Value::Object(map)
}
