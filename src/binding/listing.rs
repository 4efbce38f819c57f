//! A store view's listing as the JS layer reads it: written straight from the store's
//! tools, in a form that parses into few objects, since a large store lists thousands of
//! tools at its start, and each schema's text only when it is read.

use napi::bindgen_prelude::{Env, Error, Result, ToNapiValue};
use napi::{JsValue, sys};
use napi_derive::napi;

use crate::store::Listing;

/// A view's listing as it stood when listed: the store's tools shared, not copied, so a
/// schema's text is made for JS only when the schema is read.
#[napi]
pub struct NativeListing {
    listing: Listing,
}

impl From<Listing> for NativeListing {
    fn from(listing: Listing) -> Self {
        NativeListing { listing }
    }
}

#[napi]
impl NativeListing {
    /// `{ groups, tools, extras, deferred }`, flat arrays: `groups` is `[[serviceName,
    /// clientId, count, maxOutputChars], ...]` (`null`: none configured), each service's
    /// tools being the next `count` of `tools`; `tools` is
    /// `[name, description, tool, ...]`, three per tool (`tool`: the name its server knows
    /// it by, `null` when the name is the service's name, `_` and that, as nearly always:
    /// fewer strings to make); `extras` is `[number, extraKeys, extra, ...]` for each tool
    /// with members beyond the first three, in order (`extra`: their JSON text);
    /// `deferred` the numbers of the tools the entry's `deferLoading` defers.
    #[napi(catch_unwind, ts_return_type = "string")]
    pub fn json(&self) -> Text {
        let listing = &self.listing;
        let mut json = Vec::with_capacity(listing.len() * 128);
        json.extend_from_slice(b"{\"groups\":[");
        for (i, group) in listing.groups().iter().enumerate() {
            if i > 0 {
                json.push(b',');
            }
            json.push(b'[');
            push_string(&mut json, &group.service_name);
            json.push(b',');
            push_string(&mut json, &group.client_id);
            let limit = group.max_output_chars.map(|n| n.to_string());
            let limit = limit.as_deref().unwrap_or("null");
            json.extend_from_slice(format!(",{},{limit}]", group.tools.len()).as_bytes());
        }
        json.extend_from_slice(b"],\"tools\":[");
        for (i, entry) in listing.iter().enumerate() {
            if i > 0 {
                json.push(b',');
            }
            push_string(&mut json, entry.name);
            json.push(b',');
            push_string(
                &mut json,
                entry.tool.description.as_deref().unwrap_or_default(),
            );
            json.push(b',');
            match is_service_and_tool(entry.name, entry.service_name, &entry.tool.name) {
                true => json.extend_from_slice(b"null"),
                false => push_string(&mut json, &entry.tool.name),
            }
        }
        json.extend_from_slice(b"],\"extras\":[");
        let extras = listing.iter().enumerate();
        let extras = extras.filter_map(|(i, entry)| Some((i, entry.tool.extra.as_ref()?)));
        for (n, (i, extra)) in extras.enumerate() {
            if n > 0 {
                json.push(b',');
            }
            json.extend_from_slice(format!("{i},[").as_bytes());
            for (k, key) in extra.keys().enumerate() {
                if k > 0 {
                    json.push(b',');
                }
                push_string(&mut json, key);
            }
            json.extend_from_slice(b"],");
            push_string(&mut json, extra.json.get());
        }
        json.extend_from_slice(b"],\"deferred\":[");
        let deferred = listing
            .iter()
            .enumerate()
            .filter(|(_, entry)| entry.deferred());
        for (n, (i, _)) in deferred.enumerate() {
            if n > 0 {
                json.push(b',');
            }
            json.extend_from_slice(i.to_string().as_bytes());
        }
        json.extend_from_slice(b"]}");
        // Made of `&str`s and JSON punctuation only.
        Text(String::from_utf8(json).unwrap_or_default())
    }

    /// Tool number `index`'s normalised input schema as JSON text.
    #[napi(catch_unwind, ts_return_type = "string")]
    pub fn input_schema(&self, index: u32) -> Result<Text> {
        let entry = self.listing.get(index as usize);
        let entry = entry.ok_or_else(|| Error::from_reason(format!("no tool number {index}")))?;
        Ok(Text(entry.tool.input_schema.get().to_owned()))
    }

    /// The length of all the schemas' JSON texts together, as JS counts it.
    #[napi(catch_unwind)]
    pub fn schema_chars(&self) -> f64 {
        let schemas = self.listing.iter().map(|e| e.tool.input_schema.get());
        schemas.map(utf16_len).sum::<usize>() as f64
    }
}

/// A string for JS, made as Latin-1 when it is ASCII, as a listing nearly always is: V8
/// copies that as it is, where UTF-8 it decodes character by character (a tenth of a
/// large store's start).
pub struct Text(String);

impl ToNapiValue for Text {
    unsafe fn to_napi_value(raw_env: sys::napi_env, text: Self) -> Result<sys::napi_value> {
        if !text.0.is_ascii() {
            // SAFETY: called by napi-rs with its env, on the JS thread.
            return unsafe { String::to_napi_value(raw_env, text.0) };
        }
        // ASCII is Latin-1 byte for byte.
        Ok(Env::from_raw(raw_env).create_string_latin1(text.0)?.raw())
    }
}

/// Whether `name` is `service`, `_`, `tool`.
fn is_service_and_tool(name: &str, service: &str, tool: &str) -> bool {
    name.len() == service.len() + 1 + tool.len()
        && name.starts_with(service)
        && name[service.len()..].starts_with('_')
        && name.ends_with(tool)
}

/// Appends `text` as a JSON string.
fn push_string(out: &mut Vec<u8>, text: &str) {
    // Writing into a Vec cannot fail, and a `str` always serializes.
    let _ = serde_json::to_writer(&mut *out, text);
}

/// `text.len()` in UTF-16 code units, as JS counts a string.
fn utf16_len(text: &str) -> usize {
    match text.is_ascii() {
        true => text.len(),
        false => text.encode_utf16().count(),
    }
}
