//! Entry points for the fuzz targets (`fuzz/`) and their corpus replay
//! (`tests/fuzz_corpora.rs`): each takes bytes as an untrusted server or a user would write
//! them, runs the parser toolnexus reads them with, and asserts what must hold whatever
//! they are. Not an API: hidden, and free to change with the parsers it points at.

use std::io::{Cursor, Write};
use std::os::fd::{FromRawFd, OwnedFd};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use futures::StreamExt;
use rmcp::transport::Transport;
use rmcp::transport::auth::{
    AuthorizationManager, AuthorizationMetadata, OAuthHttpClient, OAuthHttpClientFuture,
    OAuthHttpRedirectPolicy, OAuthHttpRequest, WWWAuthenticateParams,
};
use serde_json::Value;

use crate::auth::endpoint_policy::{self, Endpoint, Guarded};
use crate::config::{self, ConfigInput, Context, McpConfig};
use crate::transport::legacy_sse::EventParser;
use crate::transport::local::lines::{Intercept, LineTransport, LineWriter};
use crate::transport::local::{InPipe, OutPipe};

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

/// Records what the stdio reader reports besides messages.
#[derive(Default)]
struct Seen(Mutex<(usize, bool)>);

impl Intercept for Seen {
    fn intercept(&self, _line: &[u8]) -> bool {
        false
    }
    fn oversized(&self, _head: &[u8]) {
        self.0.lock().expect("lock").0 += 1;
    }
    fn unreadable(&self, _line: &[u8]) {}
    fn ended(&self) {
        let mut seen = self.0.lock().expect("lock");
        assert!(!seen.1, "told of the end once");
        seen.1 = true;
    }
}

fn pipe() -> (OwnedFd, OwnedFd) {
    let mut fds = [0; 2];
    // SAFETY: `fds` has room for the two descriptors pipe2 writes.
    let made = unsafe { libc::pipe2(fds.as_mut_ptr(), libc::O_CLOEXEC | libc::O_NONBLOCK) };
    assert_eq!(made, 0, "a pipe");
    // SAFETY: both descriptors are new and owned by nobody else.
    unsafe { (OwnedFd::from_raw_fd(fds[0]), OwnedFd::from_raw_fd(fds[1])) }
}

/// A server's stdout, in arbitrary chunks, through the line reader to rmcp, with a line
/// limit of 16 to 2,056 bytes (from the first byte): it ends, reports each line over the
/// limit once (the last, unended one too), and yields at most one message per other line.
pub fn stdio_lines(data: &[u8]) {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("a runtime");
    runtime.block_on(async {
        let (stdout, server_out) = pipe();
        let (_server_in, stdin) = pipe();
        let writer = LineWriter::new(InPipe::from_fd(stdin)).expect("a writer");
        let seen = Arc::new(Seen::default());
        let max_line = 16 + 8 * usize::from(data.first().copied().unwrap_or_default());
        let mut transport =
            LineTransport::with_max_line(OutPipe::from_fd(stdout), writer, seen.clone(), max_line);
        let pieces: Vec<Vec<u8>> = chunks(data).into_iter().map(<[u8]>::to_vec).collect();
        // Lines as the server wrote them, each with its newline (which counts towards the
        // limit); an unended last line is reported too when it outgrows the limit.
        let written: Vec<&[u8]> = data
            .get(1..)
            .unwrap_or_default()
            .split_inclusive(|&b| b == b'\n')
            .collect();
        let oversized = written.iter().filter(|l| l.len() > max_line).count();
        let whole = written
            .iter()
            .filter(|l| l.len() <= max_line && l.ends_with(b"\n"))
            .count();
        let feeder = tokio::task::spawn_blocking(move || {
            let mut out = std::fs::File::from(server_out);
            for piece in pieces {
                // The pipe is non-blocking: wait for room as a server's write would.
                let mut piece = &piece[..];
                while !piece.is_empty() {
                    match out.write(piece) {
                        Ok(n) => piece = &piece[n..],
                        Err(_) => std::thread::sleep(std::time::Duration::from_micros(50)),
                    }
                }
            }
        });
        let mut messages = 0;
        while transport.receive().await.is_some() {
            messages += 1;
        }
        feeder.await.expect("the feeder");
        let seen = seen.0.lock().expect("lock");
        assert_eq!(seen.0, oversized, "lines over {max_line} bytes");
        assert!(
            messages <= whole,
            "{messages} messages from {whole} lines read whole"
        );
        assert!(seen.1, "told of the end");
    });
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
    let _ = crate::tool_result::decode_outcome(text);
    let _ = crate::tool_result::decode_input_required(text);
    if let Ok(value) = serde_json::from_str::<Value>(text) {
        let printed = crate::js_json::stringify(&value);
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

/// A `WWW-Authenticate` value and an authorization server's metadata document (split at
/// the first newline): parsed as a sign-in parses them, and the endpoints checked.
pub fn oauth(data: &[u8]) {
    let text = String::from_utf8_lossy(data);
    let (header, document) = text.split_once('\n').unwrap_or((&text, ""));
    let base = reqwest::Url::parse("http://127.0.0.1:9/mcp").expect("a URL");
    let params = WWWAuthenticateParams::parse(header, &base);
    let _ = params.is_insufficient_scope();
    if let Ok(metadata) = serde_json::from_str::<AuthorizationMetadata>(document)
        && endpoint_policy::check_metadata("fuzz", &metadata).is_ok()
    {
        for url in [&metadata.authorization_endpoint, &metadata.token_endpoint] {
            let url = reqwest::Url::parse(url).expect("an allowed endpoint is a URL");
            assert!(matches!(url.scheme(), "https" | "http"));
        }
    }
}

/// A `WWW-Authenticate` value, a protected resource's metadata and an authorization
/// server's (NUL-separated), served at every URL of their kind, as a sign-in discovers
/// them through [`Guarded`]: whatever the documents name, no request reaches a URL the
/// endpoint policy refuses, none follows a redirect, and discovery ends.
pub fn oauth_discovery(data: &[u8]) {
    let text = String::from_utf8_lossy(data);
    let mut parts = text.splitn(3, '\0');
    let header = parts.next().unwrap_or_default().to_owned();
    let documents = Arc::new(Documents {
        resource: parts.next().unwrap_or_default().as_bytes().to_vec(),
        server: parts.next().unwrap_or_default().as_bytes().to_vec(),
        asked: AtomicUsize::new(0),
    });
    let http = Arc::new(Guarded::over("fuzz", documents.clone()));
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("a runtime");
    runtime.block_on(async {
        let manager =
            AuthorizationManager::new_with_oauth_http_client("http://127.0.0.1:9/mcp", http)
                .await
                .expect("a manager");
        let _ = manager.resolve_metadata_from_challenge(Some(&header)).await;
    });
    assert!(
        documents.asked.load(Ordering::Relaxed) <= 64,
        "discovery ends"
    );
}

/// The documents of [`oauth_discovery`], by the well-known path a URL ends in.
struct Documents {
    resource: Vec<u8>,
    server: Vec<u8>,
    asked: AtomicUsize,
}

impl OAuthHttpClient for Documents {
    fn execute(&self, request: OAuthHttpRequest) -> OAuthHttpClientFuture<'_> {
        let url = request.request.uri().to_string();
        assert!(
            endpoint_policy::check("fuzz", Endpoint::Metadata, &url).is_ok(),
            "{url} reached the network"
        );
        assert!(matches!(
            request.redirect_policy,
            OAuthHttpRedirectPolicy::Stop
        ));
        self.asked.fetch_add(1, Ordering::Relaxed);
        let body = if url.contains("oauth-protected-resource") {
            Some(&self.resource)
        } else if url.contains("oauth-authorization-server") || url.contains("openid-configuration")
        {
            Some(&self.server)
        } else {
            None
        };
        let response = http::Response::builder()
            .status(if body.is_some() { 200 } else { 404 })
            .header("content-type", "application/json")
            .body(body.cloned().unwrap_or_default())
            .expect("a response");
        Box::pin(std::future::ready(Ok(response)))
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
    let names = crate::tool_names::assign(distinct.iter().copied());
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
        crate::tool_names::assign(distinct.iter().copied()),
        names,
        "stable"
    );
}
