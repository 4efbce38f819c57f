//! A tool as a server lists it, its input schema kept as the JSON text it came in: an
//! inventory of thousands of tools is never built into trees, and normalising a schema
//! rewrites only its top level.

use std::borrow::Cow;
use std::fmt::Write;
use std::sync::Arc;

use serde::Deserialize;
use serde::de::{MapAccess, Visitor};
use serde_json::value::RawValue;

use crate::tool::output_schema::OutputSchema;

#[derive(Debug, Clone)]
pub struct ListedTool {
    pub name: String,
    pub title: Option<String>,
    pub description: Option<String>,
    pub input_schema: Box<RawValue>,
    /// The other members of the specification's `Tool` the server sent, kept as JSON text
    /// until a host reads them; `None` for a tool that has none (most of an inventory).
    pub extra: Option<Extra>,
}

/// The members of a tool beyond its name, description and input schema, in the order of
/// `EXTRA_KEYS`: one JSON object, and which keys it has.
#[derive(Debug, Clone)]
pub struct Extra {
    pub json: Box<RawValue>,
    /// Bit `i` set when `EXTRA_KEYS[i]` is present.
    pub keys: u8,
    /// Its `outputSchema`, which every structured result of the tool is checked against.
    pub output_schema: Option<Arc<OutputSchema>>,
    /// Whether its `_meta` keeps it from the model (see `visibility`).
    pub app_only: bool,
}

/// The optional members of a listed tool that reach hosts as sent.
pub const EXTRA_KEYS: [&str; 6] = [
    "title",
    "annotations",
    "outputSchema",
    "icons",
    "execution",
    "_meta",
];

impl Extra {
    /// The names of the members present, in `EXTRA_KEYS` order.
    pub fn keys(&self) -> impl Iterator<Item = &'static str> + '_ {
        EXTRA_KEYS
            .iter()
            .enumerate()
            .filter(|(i, _)| self.keys & (1 << i) != 0)
            .map(|(_, key)| *key)
    }
}

impl ListedTool {
    /// Whether only an app's view may see and call it, never a model.
    pub fn app_only(&self) -> bool {
        self.extra.as_ref().is_some_and(|extra| extra.app_only)
    }

    /// The names of its members beyond the first three, when it has any.
    pub fn extra_keys(&self) -> Option<Vec<&'static str>> {
        Some(self.extra.as_ref()?.keys().collect())
    }

    /// Appends the tool as a `tools/list` page lists it: what `ToolView` reads back.
    pub fn write_wire(&self, out: &mut String) {
        self.write_wire_as(&self.name, out);
    }

    /// Appends the tool as `write_wire` does, named `name` (a gateway's view names it).
    pub fn write_wire_as(&self, name: &str, out: &mut String) {
        out.push('{');
        member(out, "name", &serde_json::Value::from(name).to_string());
        if let Some(description) = &self.description {
            let text = serde_json::Value::from(description.as_str()).to_string();
            member(out, "description", &text);
        }
        member(out, "inputSchema", self.input_schema.get());
        if let Some(extra) = &self.extra {
            // `extra` is one object: its members go in as they are.
            let members = extra.json.get().trim();
            let inner = &members[1..members.len() - 1];
            if !inner.trim().is_empty() {
                out.push(',');
                out.push_str(inner);
            }
        }
        out.push('}');
    }

    /// Those members as one JSON object's text, when it has any.
    pub fn extra_json(&self) -> Option<&str> {
        Some(self.extra.as_ref()?.json.get())
    }
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
    /// Who may keep the list (2026-07-28): `"public"` or `"private"`.
    #[serde(rename = "cacheScope", default)]
    pub cache_scope: Option<Cow<'a, str>>,
}

/// What a listing says about keeping it (SEP-2549).
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct CacheHints {
    /// How long the list may be taken as fresh, in milliseconds; `None` when unsaid.
    pub ttl_ms: Option<f64>,
    /// `Some(true)` for `"private"`: only this user's client may keep it.
    pub private: Option<bool>,
}

/// A page decoded: its tools, the cursor to the next page, and its caching hints.
pub type PageParts = (Vec<ListedTool>, Option<String>, CacheHints);

impl Page<'_> {
    pub fn into_parts(self) -> PageParts {
        let tools = self.tools.into_iter().map(ListedTool::from).collect();
        let private = match self.cache_scope.as_deref() {
            Some("private") => Some(true),
            Some("public") => Some(false),
            _ => None,
        };
        let hints = CacheHints {
            ttl_ms: self.ttl_ms,
            private,
        };
        (tools, self.next_cursor, hints)
    }
}

#[derive(Deserialize)]
pub struct ToolView<'a> {
    name: String,
    #[serde(default)]
    description: Option<String>,
    #[serde(rename = "inputSchema", borrow, default)]
    input_schema: Option<&'a RawValue>,
    #[serde(borrow, default)]
    title: Option<&'a RawValue>,
    #[serde(borrow, default)]
    annotations: Option<&'a RawValue>,
    #[serde(rename = "outputSchema", borrow, default)]
    output_schema: Option<&'a RawValue>,
    #[serde(borrow, default)]
    icons: Option<&'a RawValue>,
    #[serde(borrow, default)]
    execution: Option<&'a RawValue>,
    #[serde(rename = "_meta", borrow, default)]
    meta: Option<&'a RawValue>,
}

impl ToolView<'_> {
    /// The members beyond the first three as one object, or `None` when there are none.
    fn extra(&self) -> Option<Extra> {
        let values = [
            self.title,
            self.annotations,
            self.output_schema,
            self.icons,
            self.execution,
            self.meta,
        ];
        let mut out = String::new();
        let mut keys = 0u8;
        for (i, (key, value)) in EXTRA_KEYS.iter().zip(values).enumerate() {
            if let Some(value) = value {
                if keys == 0 {
                    out.push('{');
                }
                member(&mut out, key, value.get());
                keys |= 1 << i;
            }
        }
        if keys == 0 {
            return None;
        }
        out.push('}');
        let json = RawValue::from_string(out).ok()?;
        let output_schema = self.output_schema.map(OutputSchema::new);
        let app_only = self.meta.is_some_and(super::visibility::app_only);
        Some(Extra {
            json,
            keys,
            output_schema,
            app_only,
        })
    }
}

impl From<ToolView<'_>> for ListedTool {
    fn from(view: ToolView<'_>) -> Self {
        let extra = view.extra();
        ListedTool {
            extra,
            name: view.name,
            // The search index reads the title as text; `extra` keeps it as sent.
            title: view
                .title
                .and_then(|title| serde_json::from_str(title.get()).ok()),
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

/// An object's JSON text without its member `key`, and that member's value; `None` when
/// `json` is not an object. Every other member is copied as it is, in its place.
pub fn take_member<'a>(json: &'a str, key: &str) -> Option<(Option<&'a RawValue>, String)> {
    let members = serde_json::from_str::<Members>(json).ok()?;
    let mut out = String::with_capacity(json.len());
    out.push('{');
    let mut taken = None;
    for (name, value) in members.0 {
        if name == key {
            taken = Some(value);
        } else {
            member(&mut out, &name, value.get());
        }
    }
    out.push('}');
    Some((taken, out))
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
mod tests;
