//! A tool as a server lists it, its input schema kept as the JSON text it came in: an
//! inventory of thousands of tools is never built into trees, and normalising a schema
//! rewrites only its top level.

use std::borrow::Cow;
use std::fmt::Write;

use serde::Deserialize;
use serde::de::{MapAccess, Visitor};
use serde_json::value::RawValue;

#[derive(Debug)]
pub struct ListedTool {
    pub name: String,
    pub description: Option<String>,
    pub input_schema: Box<RawValue>,
}

/// One page of a `tools/list` answer.
#[derive(Deserialize)]
pub struct Page<'a> {
    #[serde(borrow)]
    pub tools: Vec<ToolView<'a>>,
    #[serde(rename = "nextCursor", default)]
    pub next_cursor: Option<String>,
    /// How long the list may be taken as fresh, in milliseconds (2026-07-28).
    #[serde(rename = "ttlMs", default)]
    pub ttl_ms: Option<f64>,
}

/// A page decoded: its tools, the cursor to the next page, and its `ttlMs`.
pub type PageParts = (Vec<ListedTool>, Option<String>, Option<f64>);

impl Page<'_> {
    pub fn into_parts(self) -> PageParts {
        let tools = self.tools.into_iter().map(ListedTool::from).collect();
        (tools, self.next_cursor, self.ttl_ms)
    }
}

#[derive(Deserialize)]
pub struct ToolView<'a> {
    name: String,
    #[serde(default)]
    description: Option<String>,
    #[serde(rename = "inputSchema", borrow, default)]
    input_schema: Option<&'a RawValue>,
}

impl From<ToolView<'_>> for ListedTool {
    fn from(view: ToolView<'_>) -> Self {
        ListedTool {
            name: view.name,
            description: view.description,
            input_schema: view
                .input_schema
                .map_or_else(empty_object, RawValue::to_owned),
        }
    }
}

fn empty_object() -> Box<RawValue> {
    RawValue::from_string("{}".to_owned()).expect("{} is JSON")
}

/// The schema with `"type": "object"`, `properties` (`{}` when absent) and, when `closed`,
/// `"additionalProperties": false`; every other member is copied as it is, in its place.
/// A schema that is not an object counts as `{}`.
pub fn normalize_schema(schema: &RawValue, closed: bool) -> String {
    let members = serde_json::from_str::<Members>(schema.get()).unwrap_or_default();
    let mut out = String::with_capacity(schema.get().len() + 64);
    out.push('{');
    let (mut has_type, mut has_properties, mut has_additional) = (false, false, false);
    for (key, value) in &members.0 {
        let value = match key.as_ref() {
            "type" => {
                has_type = true;
                "\"object\""
            }
            "properties" => {
                has_properties = true;
                value.get()
            }
            "additionalProperties" if closed => {
                has_additional = true;
                "false"
            }
            _ => value.get(),
        };
        member(&mut out, key, value);
    }
    if !has_type {
        member(&mut out, "type", "\"object\"");
    }
    if !has_properties {
        member(&mut out, "properties", "{}");
    }
    if closed && !has_additional {
        member(&mut out, "additionalProperties", "false");
    }
    out.push('}');
    out
}

/// Appends `"key":value` to an object being written, after a comma unless it is the first.
fn member(out: &mut String, key: &str, value: &str) {
    if !out.ends_with('{') {
        out.push(',');
    }
    let _ = write!(out, "{}:{value}", serde_json::Value::from(key));
}

/// An object's members in order, each value as JSON text.
#[derive(Default)]
struct Members<'a>(Vec<(Cow<'a, str>, &'a RawValue)>);

#[derive(Deserialize)]
struct Key<'a>(#[serde(borrow)] Cow<'a, str>);

impl<'de> Deserialize<'de> for Members<'de> {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct MembersVisitor;
        impl<'de> Visitor<'de> for MembersVisitor {
            type Value = Members<'de>;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("a JSON object")
            }
            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Members<'de>, A::Error> {
                let mut members = Vec::new();
                while let Some((Key(key), value)) = map.next_entry::<Key, &RawValue>()? {
                    members.push((key, value));
                }
                Ok(Members(members))
            }
        }
        deserializer.deserialize_map(MembersVisitor)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn normalize(schema: &str, closed: bool) -> String {
        let raw: Box<RawValue> = serde_json::from_str(schema).expect("JSON");
        normalize_schema(&raw, closed)
    }

    #[test]
    fn adds_what_is_missing_at_the_end() {
        assert_eq!(
            normalize(r#"{"required":["a"]}"#, false),
            r#"{"required":["a"],"type":"object","properties":{}}"#
        );
        assert_eq!(
            normalize("{}", true),
            r#"{"type":"object","properties":{},"additionalProperties":false}"#
        );
    }

    #[test]
    fn replaces_in_place_and_copies_the_rest_verbatim() {
        let schema = r#"{"additionalProperties":true,"type":"x","properties":{"a":{"type":"string","enum":["é","\""]}},"$defs":{"d":[1,2.50]}}"#;
        assert_eq!(
            normalize(schema, true),
            r#"{"additionalProperties":false,"type":"object","properties":{"a":{"type":"string","enum":["é","\""]}},"$defs":{"d":[1,2.50]}}"#
        );
        assert_eq!(
            normalize(r#"{"additionalProperties":true}"#, false),
            r#"{"additionalProperties":true,"type":"object","properties":{}}"#
        );
    }

    #[test]
    fn keys_needing_escapes_stay_json() {
        let out = normalize(r#"{"a\"b\u0041":1}"#, false);
        let value: serde_json::Value = serde_json::from_str(&out).expect("JSON");
        assert_eq!(value["a\"bA"], 1);
    }

    #[test]
    fn a_schema_that_is_not_an_object_counts_as_empty() {
        assert_eq!(
            normalize("[1]", false),
            r#"{"type":"object","properties":{}}"#
        );
    }
}
