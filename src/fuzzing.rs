//! Entry points for the fuzz targets (`fuzz/`) and their corpus replay
//! (`tests/fuzz_corpora.rs`): each takes bytes as an untrusted server or a user would write
//! them, runs the parser toolnexus reads them with, and asserts what must hold whatever
//! they are. Not an API: hidden, and free to change with the parsers it points at.

use std::io::Cursor;

use futures::StreamExt;
use serde_json::Value;

use crate::config::{self, ConfigInput, Context, McpConfig};
use crate::transport::legacy_sse::EventParser;

mod oauth;
mod stdio;

pub use self::oauth::{oauth, oauth_discovery};
pub use self::stdio::stdio_lines;

/// The kinds of input, one per fuzz target (the corpus folders' names).
pub const TARGETS: [&str; 8] = [
    "config",
    "stdio_lines",
    "sse",
    "jsonrpc",
    "oauth",
    "oauth_discovery",
    "tool_names",
    "env_file",
];

/// Runs target `name` on `data`.
pub fn run(name: &str, data: &[u8]) {
    match name {
        "config" => config_text(data),
        "stdio_lines" => stdio_lines(data),
        "sse" => sse(data),
        "jsonrpc" => jsonrpc(data),
        "oauth" => oauth(data),
        "oauth_discovery" => oauth_discovery(data),
        "tool_names" => tool_names(data),
        "env_file" => env_file(data),
        other => panic!("no fuzz target {other}"),
    }
}

/// Chunk lengths from the input's first byte: the same bytes arrive split many ways.
fn chunks(data: &[u8]) -> Vec<&[u8]> {
    let Some((&seed, mut rest)) = data.split_first() else {
        return Vec::new();
    };
    let mut out = Vec::new();
    let mut i = 1usize;
    while !rest.is_empty() {
        let len = (1 + (seed as usize * i * 31) % 97).min(rest.len());
        let (head, tail) = rest.split_at(len);
        out.push(head);
        rest = tail;
        i += 1;
    }
    out
}

/// Variables for `${VAR}`: names starting with `U` are unset, the others say their name.
fn var(name: &str) -> Option<String> {
    (!name.starts_with('U')).then(|| format!("<{name}>"))
}

/// An `mcp.json` text: read, then every entry validated with `${VAR}` expansion.
pub fn config_text(data: &[u8]) {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let Ok(map) = config::read_server_map(&ConfigInput::Json(text.to_owned())) else {
        return;
    };
    let names: Vec<String> = map.keys().cloned().collect();
    let context = Context {
        base_dir: None,
        var: &var,
    };
    let loaded = McpConfig::from_server_map_in(map, &context);
    let loaded: Vec<&str> = loaded.servers.iter().map(|s| s.name.as_str()).collect();
    assert_eq!(loaded, names, "every server is kept, in order");
    let expanded = config::expand::expand(text, &var);
    if !text.contains("${") {
        assert_eq!(expanded.as_deref(), Ok(text), "nothing to expand");
    }
}

/// An `envFile`'s text, and `${VAR}` over it.
pub fn env_file(data: &[u8]) {
    let text = String::from_utf8_lossy(data);
    let vars = config::env_file::parse(&text);
    for (i, (key, _)) in vars.iter().enumerate() {
        assert!(!key.is_empty(), "a key");
        assert!(vars[..i].iter().all(|(k, _)| k != key), "a key once");
    }
    let _ = config::expand::expand(&text, &var);
}

/// An event stream: the legacy transport's parser and the streamable one's (rmcp's,
/// `sse-stream`), fed the same chunks, with what toolnexus reads of each event's data.
pub fn sse(data: &[u8]) {
    let pieces = chunks(data);
    let mut legacy = EventParser::default();
    let mut legacy_events = Vec::new();
    for piece in &pieces {
        match legacy.feed(piece) {
            Ok(events) => legacy_events.extend(events),
            Err(_) => return,
        }
    }
    for (_, data) in &legacy_events {
        let _ = crate::transport::http::elicitation_id(data);
    }
    let owned: Vec<Result<Cursor<Vec<u8>>, std::io::Error>> =
        pieces.iter().map(|p| Ok(Cursor::new(p.to_vec()))).collect();
    let runtime = tokio::runtime::Builder::new_current_thread()
        .build()
        .expect("a runtime");
    runtime.block_on(async {
        let mut stream = sse_stream::SseStream::from_bytes_stream(futures::stream::iter(owned));
        while let Some(event) = stream.next().await {
            let Ok(event) = event else { break };
            if let Some(data) = event.data {
                let _ = crate::transport::http::elicitation_id(&data);
            }
        }
    });
}

/// A JSON-RPC line or a result: rmcp's message decoder, the result decoders, and
/// `JSON.stringify` of any JSON value, which must read back as the same value.
pub fn jsonrpc(data: &[u8]) {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let _ = serde_json::from_str::<rmcp::model::ServerJsonRpcMessage>(text);
    let _ = crate::tool::result::decode_outcome(text);
    let _ = crate::tool::result::decode_input_required(text);
    if let Ok(value) = serde_json::from_str::<Value>(text) {
        let printed = crate::tool::js_json::stringify(&value);
        let again: Value = serde_json::from_str(&printed).expect("stringify prints JSON");
        assert!(same_json(&value, &again), "{text} printed as {printed}");
    }
}

/// Equal as JavaScript reads them: numbers as f64, object keys in any order.
fn same_json(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Number(x), Value::Number(y)) => x.as_f64() == y.as_f64(),
        (Value::Array(x), Value::Array(y)) => {
            x.len() == y.len() && x.iter().zip(y).all(|(x, y)| same_json(x, y))
        }
        (Value::Object(x), Value::Object(y)) => {
            x.len() == y.len()
                && x.iter()
                    .all(|(k, v)| y.get(k).is_some_and(|w| same_json(v, w)))
        }
        _ => a == b,
    }
}

/// Server and tool names (NUL-separated pairs): every assigned name has at most 64
/// characters of `[A-Za-z0-9_-]`, no two are the same, and they do not change when the
/// pairs are assigned again.
pub fn tool_names(data: &[u8]) {
    let text = String::from_utf8_lossy(data);
    let parts: Vec<&str> = text.split('\0').collect();
    let pairs: Vec<(&str, &str)> = parts
        .chunks(2)
        .map(|p| (p[0], *p.get(1).unwrap_or(&"")))
        .collect();
    let mut distinct: Vec<(&str, &str)> = Vec::new();
    for pair in &pairs {
        if !distinct.contains(pair) {
            distinct.push(*pair);
        }
    }
    let names = crate::tool::names::assign(distinct.iter().copied());
    for name in &names {
        assert!(name.len() <= 64, "{name} is too long");
        let allowed = |c: char| c.is_ascii_alphanumeric() || c == '_' || c == '-';
        assert!(name.chars().all(allowed), "{name} has another character");
    }
    let mut sorted = names.clone();
    sorted.sort();
    sorted.dedup();
    assert_eq!(sorted.len(), names.len(), "names are unique: {names:?}");
    assert_eq!(
        crate::tool::names::assign(distinct.iter().copied()),
        names,
        "stable"
    );
}
