//! Which keywords of a schema hold subschemas, and how: the one list both the inlining and
//! the keyword rules walk by.

use serde_json::{Map, Value};

pub enum Holds {
    /// Name to schema: `properties`.
    Named,
    /// A list of schemas: `anyOf`, tuple `items`.
    List,
    /// One schema: `items`, `additionalProperties`.
    One,
    /// A value, not a schema: `enum`, `const`, `default`, `required`...
    Nothing,
}

pub fn holds(key: &str, value: &Value) -> Holds {
    match (key, value) {
        ("properties" | "patternProperties" | "dependentSchemas", Value::Object(_)) => Holds::Named,
        ("anyOf" | "oneOf" | "allOf" | "prefixItems" | "items", Value::Array(_)) => Holds::List,
        (
            "items"
            | "additionalProperties"
            | "not"
            | "contains"
            | "if"
            | "then"
            | "else"
            | "propertyNames"
            | "additionalItems"
            | "unevaluatedProperties"
            | "unevaluatedItems",
            _,
        ) => Holds::One,
        _ => Holds::Nothing,
    }
}

/// Calls `f` on every direct subschema of `map`.
pub fn for_each_mut(map: &mut Map<String, Value>, mut f: impl FnMut(&mut Value)) {
    for (key, value) in map.iter_mut() {
        match holds(key, value) {
            Holds::Named => value
                .as_object_mut()
                .into_iter()
                .flat_map(|m| m.values_mut())
                .for_each(&mut f),
            Holds::List => value
                .as_array_mut()
                .into_iter()
                .flat_map(|l| l.iter_mut())
                .for_each(&mut f),
            Holds::One => f(value),
            Holds::Nothing => {}
        }
    }
}
