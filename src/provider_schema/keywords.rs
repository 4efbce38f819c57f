//! Each provider's keyword rules, applied to every subschema of an inlined schema. Sources:
//! OpenAI's Structured Outputs guide ("Supported schemas": the keywords and string formats
//! strict mode reads; `allOf`, `oneOf`, `not` are not among them), Gemini's `Schema`
//! reference (the OpenAPI 3.0 subset a function declaration takes: one `type`, `nullable`,
//! string-only `enum`, a few formats, no `additionalProperties`, non-empty `properties`),
//! and OpenAI's function-calling errors on arrays without `items`. A constraint a provider
//! cannot take is written into the description, so the model still reads it.

use serde_json::{Map, Value, json};

use super::Profile;
use super::combine::merge_all_of;
use super::subschemas::for_each_mut;

/// What Gemini's `Schema` object has fields for.
const GEMINI_KEYS: &[&str] = &[
    "type",
    "format",
    "title",
    "description",
    "nullable",
    "enum",
    "maxItems",
    "minItems",
    "properties",
    "required",
    "minProperties",
    "maxProperties",
    "minLength",
    "maxLength",
    "pattern",
    "example",
    "anyOf",
    "propertyOrdering",
    "default",
    "items",
    "minimum",
    "maximum",
];

/// What OpenAI's strict mode reads ("Supported properties").
const STRICT_KEYS: &[&str] = &[
    "type",
    "properties",
    "required",
    "additionalProperties",
    "items",
    "enum",
    "const",
    "anyOf",
    "description",
    "pattern",
    "format",
    "multipleOf",
    "maximum",
    "exclusiveMaximum",
    "minimum",
    "exclusiveMinimum",
    "minItems",
    "maxItems",
];

const STRICT_FORMATS: &[&str] = &[
    "date-time",
    "time",
    "date",
    "duration",
    "email",
    "hostname",
    "ipv4",
    "ipv6",
    "uuid",
];

/// Dropped keywords worth telling the model about, in the description.
const CONSTRAINTS: &[&str] = &[
    "minLength",
    "maxLength",
    "pattern",
    "format",
    "minimum",
    "maximum",
    "exclusiveMinimum",
    "exclusiveMaximum",
    "multipleOf",
    "minItems",
    "maxItems",
    "uniqueItems",
    "minProperties",
    "maxProperties",
    "default",
];

/// Identifiers that mean nothing once references are inlined.
const IDENTIFIERS: &[&str] = &["$schema", "$id", "$anchor", "$dynamicAnchor", "$comment"];

pub fn apply(mut schema: Value, profile: Profile) -> Value {
    node(&mut schema, profile);
    schema
}

fn node(schema: &mut Value, profile: Profile) {
    let Value::Object(map) = schema else {
        return;
    };
    let narrow = matches!(
        profile,
        Profile::Gemini | Profile::Portable | Profile::OpenAiStrict
    );
    if narrow {
        if let Some(Value::Array(branches)) = map.shift_remove("allOf") {
            merge_all_of(map, branches);
        }
        if let Some(Value::Array(mut branches)) = map.shift_remove("oneOf") {
            if let Some(Value::Array(any)) = map.shift_remove("anyOf") {
                branches.extend(any);
            }
            map.insert("anyOf".into(), Value::Array(branches));
        }
    }
    for_each_mut(map, |child| node(child, profile));
    for key in IDENTIFIERS {
        map.shift_remove(*key);
    }
    keep_known_required(map);
    if profile != Profile::Anthropic && is_type(map, "array") && !map.contains_key("items") {
        map.insert("items".into(), json!({}));
    }
    match profile {
        Profile::Gemini | Profile::Portable => gemini(map),
        Profile::OpenAiStrict => strict(map),
        Profile::OpenAi | Profile::Anthropic => {}
    }
}

fn gemini(map: &mut Map<String, Value>) {
    // A `true` subschema (any value) has no Gemini form but the empty schema.
    for_each_mut(map, |child| {
        if child == &Value::Bool(true) {
            *child = json!({});
        }
    });
    let mut nullable = map.get("nullable") == Some(&Value::Bool(true));
    match map.shift_remove("type") {
        Some(Value::Array(types)) => {
            nullable |= types.iter().any(|t| t == "null");
            let mut kinds: Vec<Value> = types.into_iter().filter(|t| t != "null").collect();
            if kinds.len() == 1 {
                map.insert("type".into(), kinds.remove(0));
            } else if kinds.len() > 1 && !map.contains_key("anyOf") {
                let branches = kinds.into_iter().map(|t| json!({ "type": t })).collect();
                map.insert("anyOf".into(), Value::Array(branches));
            }
        }
        Some(Value::String(kind)) if kind == "null" => nullable = true,
        Some(kind) => {
            map.insert("type".into(), kind);
        }
        None => {}
    }
    if let Some(Value::Array(branches)) = map.get_mut("anyOf") {
        let before = branches.len();
        branches.retain(|b| !is_null_only(b));
        nullable |= branches.len() < before;
        if branches.is_empty() {
            map.shift_remove("anyOf");
        }
    }
    if let Some(value) = map.shift_remove("const") {
        map.insert("enum".into(), Value::Array(vec![value]));
    }
    if let Some(Value::Array(mut values)) = map.shift_remove("enum") {
        let before = values.len();
        values.retain(|v| !v.is_null());
        nullable |= values.len() < before;
        if values.iter().all(Value::is_string) && !values.is_empty() {
            map.entry("type").or_insert_with(|| json!("string"));
            map.insert("enum".into(), Value::Array(values));
        } else if !values.is_empty() {
            let listed: Vec<String> = values.iter().map(Value::to_string).collect();
            note(map, format!("one of: {}", listed.join(", ")));
        }
    }
    let format_ok = match (map.get("type").and_then(Value::as_str), map.get("format")) {
        (_, None) => true,
        (Some("string"), Some(f)) => f == "enum" || f == "date-time",
        (Some("number"), Some(f)) => f == "float" || f == "double",
        (Some("integer"), Some(f)) => f == "int32" || f == "int64",
        _ => false,
    };
    if !format_ok {
        drop_noted(map, "format");
    }
    keep_only(map, GEMINI_KEYS);
    if nullable {
        say_nullable(map);
    }
    // Gemini refuses an object schema whose `properties` is empty.
    if map
        .get("properties")
        .and_then(Value::as_object)
        .is_some_and(Map::is_empty)
    {
        map.shift_remove("properties");
        map.shift_remove("required");
    }
}

/// Whether a subschema allows only null: `{ "type": "null" }`, or what Gemini's rewrite
/// made of it already (subschemas are rewritten first), `{ "nullable": true }` alone.
fn is_null_only(schema: &Value) -> bool {
    let Some(map) = schema.as_object() else {
        return false;
    };
    map.get("type").is_some_and(|t| t == "null")
        || (map.len() == 1 && map.get("nullable") == Some(&Value::Bool(true)))
}

/// Marks a Gemini schema as allowing null where OpenAPI 3.0 reads it: beside its `type`,
/// else on each typed branch of its `anyOf`, else in words (`nullable` beside no `type`
/// is ignored). A schema of null alone stays `{ "nullable": true }`, for its parent's
/// `anyOf` to drop.
fn say_nullable(map: &mut Map<String, Value>) {
    if map.is_empty() || map.contains_key("type") {
        map.insert("nullable".into(), Value::Bool(true));
        return;
    }
    if let Some(Value::Array(branches)) = map.get_mut("anyOf") {
        for branch in branches.iter_mut().filter_map(Value::as_object_mut) {
            if branch.contains_key("type") {
                branch.insert("nullable".into(), Value::Bool(true));
            }
        }
        return;
    }
    note(map, "or null".to_owned());
}

fn strict(map: &mut Map<String, Value>) {
    let format_ok = map
        .get("format")
        .and_then(Value::as_str)
        .is_none_or(|f| STRICT_FORMATS.contains(&f));
    if !format_ok {
        drop_noted(map, "format");
    }
    keep_only(map, STRICT_KEYS);
}

fn is_type(map: &Map<String, Value>, kind: &str) -> bool {
    match map.get("type") {
        Some(Value::String(t)) => t == kind,
        Some(Value::Array(types)) => types.iter().any(|t| t == kind),
        _ => false,
    }
}

/// `required` names only listed properties (Gemini and strict mode refuse others).
fn keep_known_required(map: &mut Map<String, Value>) {
    let Some(Value::Array(required)) = map.get("required") else {
        return;
    };
    let props = map.get("properties").and_then(Value::as_object);
    let kept: Vec<Value> = required
        .iter()
        .filter(|name| {
            name.as_str()
                .is_some_and(|n| props.is_some_and(|p| p.contains_key(n)))
        })
        .cloned()
        .collect();
    map.insert("required".into(), Value::Array(kept));
}

fn keep_only(map: &mut Map<String, Value>, allowed: &[&str]) {
    let refused: Vec<String> = map
        .keys()
        .filter(|k| !allowed.contains(&k.as_str()))
        .cloned()
        .collect();
    for key in refused {
        if CONSTRAINTS.contains(&key.as_str()) {
            drop_noted(map, &key);
        } else {
            map.shift_remove(&key);
        }
    }
}

fn drop_noted(map: &mut Map<String, Value>, key: &str) {
    if let Some(value) = map.shift_remove(key) {
        let shown = match &value {
            Value::String(s) => s.clone(),
            other => other.to_string(),
        };
        note(map, format!("{key}: {shown}"));
    }
}

fn note(map: &mut Map<String, Value>, text: String) {
    let description = match map.get("description").and_then(Value::as_str) {
        Some(d) if !d.is_empty() => format!("{d} ({text})"),
        _ => format!("({text})"),
    };
    map.insert("description".into(), Value::String(description));
}
