//! A listing of tools as the JS layer reads it, the same for `loadMcp`, `listMcpTools`
//! and a store view: written straight from the tools as listed, in a form that parses into
//! few objects (a large store lists thousands of tools at its start), each schema's text
//! made only when it is read.

use std::borrow::Cow;
use std::sync::{Arc, Mutex};

use napi::bindgen_prelude::{Env, Error, Result, ToNapiValue};
use napi::{JsValue, sys};
use napi_derive::napi;

use crate::config::{McpConfig, ServerState};
use crate::inventory::Source;
use crate::lock::lock;
use crate::store::Listing;
use crate::tool::listed::{ListedTool, normalize_schema};

/// What an entry point lists, group by group.
pub trait Listed: Send + Sync + 'static {
    fn groups(&self) -> Vec<Group<'_>>;
    /// Tool number `index`.
    fn tool(&self, index: usize) -> Option<&ListedTool>;
    /// `tool`'s input schema as JSON text, as the entry point shows it.
    fn input_schema<'a>(&self, tool: &'a ListedTool) -> Cow<'a, str>;
}

/// Tools of one server in a row, as the entry point names the server.
pub struct Group<'a> {
    pub server: &'a str,
    /// A store's client id of the service; none outside a store.
    pub client_id: Option<&'a str>,
    /// The entry's `maxOutputChars`, for the adapters.
    pub max_output_chars: Option<u64>,
    pub tools: Vec<Row<'a>>,
}

/// One tool: what the entry point calls it, as listed, and whether the entry's
/// `deferLoading` leaves it to the provider's tool search.
pub struct Row<'a> {
    pub name: &'a str,
    pub tool: &'a ListedTool,
    pub deferred: bool,
}

/// A listing as it stood when listed, shared, not copied: a schema's text is made for JS
/// only when the schema is read.
#[napi]
pub struct NativeListing {
    listed: Arc<dyn Listed>,
    /// Its JSON, when written ahead on a worker thread, where the buffers it takes are
    /// freed too (on the JS thread's allocator a large listing's stayed in its RSS).
    written: Mutex<Option<String>>,
}

impl<T: Listed> From<T> for NativeListing {
    fn from(listed: T) -> Self {
        NativeListing {
            listed: Arc::new(listed),
            written: Mutex::default(),
        }
    }
}

impl NativeListing {
    /// `listed`, its JSON written now: for a listing made off the JS thread.
    pub fn written(listed: impl Listed) -> Self {
        let written = Some(write(&listed));
        NativeListing {
            listed: Arc::new(listed),
            written: Mutex::new(written),
        }
    }
}

#[napi]
impl NativeListing {
    /// `{ groups, tools, extras, deferred, app }`, flat arrays: `groups` is `[[server,
    /// clientId, count, maxOutputChars], ...]` (`null`: none), each group's tools being the
    /// next `count` of `tools`; `tools` is `[name, description, tool, ...]`, three per tool
    /// (`tool`: the name its server knows it by, `null` when the name is the server's name,
    /// `_` and that, as in a store nearly always: fewer strings to make); `extras` is
    /// `[number, extraKeys, ...]` for each tool with members beyond the first three, in
    /// order (their JSON text: `extra`); `deferred` the numbers of the tools the entry's
    /// `deferLoading` defers, `app` of those only an app's view may see.
    #[napi(catch_unwind, ts_return_type = "string")]
    pub fn json(&self) -> Text {
        let written = lock(&self.written).take();
        Text(written.unwrap_or_else(|| write(&*self.listed)))
    }

    /// Tool number `index`'s input schema as JSON text.
    #[napi(catch_unwind, ts_return_type = "string")]
    pub fn input_schema(&self, index: u32) -> Result<Text> {
        let schema = self.listed.input_schema(self.tool(index)?);
        Ok(Text(schema.into_owned()))
    }

    /// Tool number `index`'s members beyond the first three, as one JSON object's text;
    /// null when it has none. Read when a host first reads one: most never are.
    #[napi(catch_unwind, ts_return_type = "string | null")]
    pub fn extra(&self, index: u32) -> Result<Option<Text>> {
        let extra = self.tool(index)?.extra_json();
        Ok(extra.map(|json| Text(json.to_owned())))
    }

    /// The length of all the schemas' JSON texts together, as JS counts it.
    #[napi(catch_unwind)]
    pub fn schema_chars(&self) -> f64 {
        let tools = (0..).map_while(|i| self.listed.tool(i));
        let schemas = tools.map(|tool| self.listed.input_schema(tool));
        schemas.map(|schema| utf16_len(&schema)).sum::<usize>() as f64
    }
}

impl NativeListing {
    fn tool(&self, index: u32) -> Result<&ListedTool> {
        let tool = self.listed.tool(index as usize);
        tool.ok_or_else(|| Error::from_reason(format!("no tool number {index}")))
    }
}

/// A store view's tools: their schemas are normalised when the service lists them.
impl Listed for Listing {
    fn groups(&self) -> Vec<Group<'_>> {
        let mut rows = self.iter();
        let groups = self.groups().iter().map(|group| Group {
            server: &group.service_name,
            client_id: Some(&group.client_id),
            max_output_chars: group.max_output_chars,
            tools: rows
                .by_ref()
                .take(group.tools.len())
                .map(|entry| Row {
                    name: entry.name,
                    tool: entry.tool,
                    deferred: entry.deferred(),
                })
                .collect(),
        });
        groups.collect()
    }

    fn tool(&self, index: usize) -> Option<&ListedTool> {
        Some(self.get(index)?.tool)
    }

    fn input_schema<'a>(&self, tool: &'a ListedTool) -> Cow<'a, str> {
        Cow::Borrowed(tool.input_schema.get())
    }
}

/// `loadMcp`'s tools, with what their entries say of them; each schema closed
/// (`additionalProperties: false`) and normalised when read: most of a large inventory's
/// never are.
pub struct SourceListing {
    source: Arc<Source>,
    /// Per server, its entry's `maxOutputChars`.
    limits: Vec<Option<u64>>,
    /// Per tool, whether its entry defers it.
    deferred: Vec<bool>,
}

impl SourceListing {
    pub fn new(source: Arc<Source>, config: &McpConfig) -> SourceListing {
        let spec_of = |server: &str| {
            config.servers.iter().find_map(|entry| match &entry.state {
                ServerState::Enabled(spec) if entry.name == server => Some(spec),
                _ => None,
            })
        };
        let specs: Vec<_> = source.sessions.iter().map(|s| spec_of(s.name())).collect();
        let limits = specs
            .iter()
            .map(|spec| spec.and_then(|s| s.max_output_chars));
        let deferred = source.tools.iter().map(|tool| {
            specs[tool.server].is_some_and(|spec| spec.deferral.defers(&tool.listed.name))
        });
        SourceListing {
            limits: limits.collect(),
            deferred: deferred.collect(),
            source,
        }
    }
}

impl Listed for SourceListing {
    /// A group per run of one server's tools: those only an app's view may see come last.
    fn groups(&self) -> Vec<Group<'_>> {
        let mut groups: Vec<(usize, Group<'_>)> = Vec::new();
        for (tool, &deferred) in self.source.tools.iter().zip(&self.deferred) {
            let row = Row {
                name: &tool.name,
                tool: &tool.listed,
                deferred,
            };
            match groups.last_mut() {
                Some((server, group)) if *server == tool.server => group.tools.push(row),
                _ => groups.push((
                    tool.server,
                    Group {
                        server: self.source.sessions[tool.server].name(),
                        client_id: None,
                        max_output_chars: self.limits[tool.server],
                        tools: vec![row],
                    },
                )),
            }
        }
        groups.into_iter().map(|(_, group)| group).collect()
    }

    fn tool(&self, index: usize) -> Option<&ListedTool> {
        Some(&self.source.tools.get(index)?.listed)
    }

    fn input_schema<'a>(&self, tool: &'a ListedTool) -> Cow<'a, str> {
        Cow::Owned(normalize_schema(&tool.input_schema, true))
    }
}

/// `listMcpTools`' tools, each server's as it listed them (servers without tools too).
pub struct InventoryListing {
    servers: Vec<(String, Vec<ListedTool>)>,
    /// Where each server's tools begin among all of them.
    starts: Vec<usize>,
}

impl InventoryListing {
    pub fn new(servers: Vec<(String, Vec<ListedTool>)>) -> InventoryListing {
        let starts = servers.iter().scan(0, |next, (_, tools)| {
            let start = *next;
            *next += tools.len();
            Some(start)
        });
        InventoryListing {
            starts: starts.collect(),
            servers,
        }
    }
}

impl Listed for InventoryListing {
    fn groups(&self) -> Vec<Group<'_>> {
        let groups = self.servers.iter().map(|(server, tools)| Group {
            server,
            client_id: None,
            max_output_chars: None,
            tools: tools
                .iter()
                .map(|tool| Row {
                    name: &tool.name,
                    tool,
                    deferred: false,
                })
                .collect(),
        });
        groups.collect()
    }

    fn tool(&self, index: usize) -> Option<&ListedTool> {
        // The last server whose tools begin at or before `index`.
        let server = self
            .starts
            .partition_point(|&start| start <= index)
            .checked_sub(1)?;
        self.servers[server].1.get(index - self.starts[server])
    }

    fn input_schema<'a>(&self, tool: &'a ListedTool) -> Cow<'a, str> {
        Cow::Owned(normalize_schema(&tool.input_schema, false))
    }
}

/// The listing as `NativeListing::json` says.
fn write(listed: &dyn Listed) -> String {
    let groups = listed.groups();
    let count = groups.iter().map(|group| group.tools.len()).sum::<usize>();
    let mut json = Vec::with_capacity(count * 128);
    json.extend_from_slice(b"{\"groups\":[");
    for (i, group) in groups.iter().enumerate() {
        if i > 0 {
            json.push(b',');
        }
        json.push(b'[');
        push_string(&mut json, group.server);
        json.push(b',');
        match group.client_id {
            Some(id) => push_string(&mut json, id),
            None => json.extend_from_slice(b"null"),
        }
        let limit = group.max_output_chars.map(|n| n.to_string());
        let limit = limit.as_deref().unwrap_or("null");
        json.extend_from_slice(format!(",{},{limit}]", group.tools.len()).as_bytes());
    }
    let rows = || {
        groups
            .iter()
            .flat_map(|g| g.tools.iter().map(move |r| (g, r)))
    };
    json.extend_from_slice(b"],\"tools\":[");
    for (i, (group, row)) in rows().enumerate() {
        if i > 0 {
            json.push(b',');
        }
        push_string(&mut json, row.name);
        json.push(b',');
        push_string(
            &mut json,
            row.tool.description.as_deref().unwrap_or_default(),
        );
        json.push(b',');
        match is_service_and_tool(row.name, group.server, &row.tool.name) {
            true => json.extend_from_slice(b"null"),
            false => push_string(&mut json, &row.tool.name),
        }
    }
    json.extend_from_slice(b"],\"extras\":[");
    let extras = rows().enumerate();
    let extras = extras.filter_map(|(i, (_, row))| Some((i, row.tool.extra.as_ref()?)));
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
        json.push(b']');
    }
    json.extend_from_slice(b"],\"deferred\":");
    push_numbers(&mut json, rows().map(|(_, row)| row.deferred));
    json.extend_from_slice(b",\"app\":");
    push_numbers(&mut json, rows().map(|(_, row)| row.tool.app_only()));
    json.push(b'}');
    // Made of `&str`s and JSON punctuation only.
    String::from_utf8(json).unwrap_or_default()
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

/// Appends the numbers of the `true`s of `flags` as a JSON array.
fn push_numbers(out: &mut Vec<u8>, flags: impl Iterator<Item = bool>) {
    out.push(b'[');
    let numbers = flags.enumerate().filter(|(_, flag)| *flag);
    for (n, (i, _)) in numbers.enumerate() {
        if n > 0 {
            out.push(b',');
        }
        out.extend_from_slice(i.to_string().as_bytes());
    }
    out.push(b']');
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
