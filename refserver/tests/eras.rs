//! The reference server answers both eras, over stdio and over HTTP: the 2025 handshake,
//! and the 2026-07-28 revision (`server/discover`, requests without `initialize` whose
//! `_meta` carries the version, results carrying `resultType`).

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::process::{Child, ChildStdin, ChildStdout, Command, Stdio};

use serde_json::{Value, json};

const BIN: &str = env!("CARGO_BIN_EXE_toolnexus-refserver");

fn meta() -> Value {
    json!({
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientInfo": { "name": "test", "version": "0" },
        "io.modelcontextprotocol/clientCapabilities": {}
    })
}

fn request(id: u64, method: &str, mut params: Value, modern: bool) -> Value {
    if modern {
        params["_meta"] = meta();
    }
    json!({ "jsonrpc": "2.0", "id": id, "method": method, "params": params })
}

fn echo(id: u64, modern: bool) -> Value {
    let params = json!({ "name": "echo", "arguments": { "text": "hi" } });
    request(id, "tools/call", params, modern)
}

fn initialize() -> Value {
    let params = json!({
        "protocolVersion": "2025-11-25",
        "capabilities": {},
        "clientInfo": { "name": "test", "version": "0" }
    });
    request(1, "initialize", params, false)
}

struct Server {
    child: Child,
    stdin: Option<ChildStdin>,
    stdout: BufReader<ChildStdout>,
}

impl Server {
    fn spawn(args: &[&str]) -> Self {
        let mut child = Command::new(BIN)
            .args(args)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .spawn()
            .expect("spawn the reference server");
        let stdin = child.stdin.take();
        let stdout = BufReader::new(child.stdout.take().expect("stdout"));
        Self {
            child,
            stdin,
            stdout,
        }
    }

    fn send(&mut self, message: &Value) {
        let stdin = self.stdin.as_mut().expect("stdin is open");
        writeln!(stdin, "{message}").expect("write a request");
    }

    fn answer(&mut self, message: &Value) -> Value {
        self.send(message);
        let mut line = String::new();
        self.stdout.read_line(&mut line).expect("read an answer");
        serde_json::from_str(&line).expect("an answer is JSON")
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn assert_modern_echo(answer: &Value) {
    assert_eq!(answer["result"]["resultType"], "complete", "{answer}");
    assert_eq!(answer["result"]["content"][0]["text"], "hi", "{answer}");
}

#[test]
fn stdio_answers_discover_and_modern_requests_without_initialize() {
    let mut server = Server::spawn(&[]);
    let discover = server.answer(&request(1, "server/discover", json!({}), true));
    let result = &discover["result"];
    assert_eq!(result["resultType"], "complete", "{discover}");
    let versions = result["supportedVersions"]
        .as_array()
        .expect("supportedVersions");
    assert!(versions.contains(&json!("2026-07-28")), "{discover}");
    assert!(versions.contains(&json!("2025-11-25")), "{discover}");
    assert!(result["capabilities"]["tools"].is_object(), "{discover}");
    let info = &result["_meta"]["io.modelcontextprotocol/serverInfo"];
    assert_eq!(info["name"], "toolnexus-refserver", "{discover}");

    let list = server.answer(&request(2, "tools/list", json!({}), true));
    assert_eq!(list["result"]["resultType"], "complete", "{list}");
    assert_eq!(list["result"]["tools"][0]["name"], "echo", "{list}");
    assert_modern_echo(&server.answer(&echo(3, true)));
}

#[test]
fn stdio_still_answers_the_2025_handshake() {
    let mut server = Server::spawn(&[]);
    let init = server.answer(&initialize());
    assert_eq!(init["result"]["protocolVersion"], "2025-11-25", "{init}");
    server.send(&json!({ "jsonrpc": "2.0", "method": "notifications/initialized" }));
    let answer = server.answer(&echo(2, false));
    assert_eq!(answer["result"]["content"][0]["text"], "hi", "{answer}");
}

/// One HTTP/1.1 POST on `stream`, kept alive; the answer's JSON body.
fn post(
    stream: &mut TcpStream,
    reader: &mut BufReader<TcpStream>,
    message: &Value,
    version: &str,
) -> Value {
    let body = message.to_string();
    // SEP-2243: a 2026 request names its method, and a call its tool, in headers too.
    let mut named = String::new();
    if message["params"]["_meta"].is_object() {
        named = format!(
            "Mcp-Method: {}\r\n",
            message["method"].as_str().unwrap_or_default()
        );
        if let Some(name) = message["params"]["name"].as_str() {
            named.push_str(&format!("Mcp-Name: {name}\r\n"));
        }
    }
    write!(
        stream,
        "POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n\
         Accept: application/json, text/event-stream\r\nMCP-Protocol-Version: {version}\r\n\
         {named}Content-Length: {}\r\n\r\n{body}",
        body.len()
    )
    .expect("write a request");
    let mut status = String::new();
    reader.read_line(&mut status).expect("read the status line");
    assert!(status.starts_with("HTTP/1.1 200"), "{status}");
    let mut length = 0;
    loop {
        let mut header = String::new();
        reader.read_line(&mut header).expect("read a header");
        let header = header.trim_end();
        if header.is_empty() {
            break;
        }
        let lower = header.to_ascii_lowercase();
        assert!(!lower.starts_with("connection: close"), "{header}");
        if let Some(value) = lower.strip_prefix("content-length:") {
            length = value.trim().parse().expect("a content length");
        }
    }
    let mut body = vec![0; length];
    reader.read_exact(&mut body).expect("read the body");
    serde_json::from_slice(&body).expect("the body is JSON")
}

#[test]
fn http_serves_both_eras_on_one_kept_alive_connection() {
    let mut server = Server::spawn(&["--http"]);
    let mut url = String::new();
    server
        .stdout
        .read_line(&mut url)
        .expect("the server prints its URL");
    let address = url
        .trim()
        .strip_prefix("http://")
        .and_then(|rest| rest.strip_suffix("/mcp"))
        .expect("an http://127.0.0.1:PORT/mcp URL");
    let mut stream = TcpStream::connect(address).expect("connect");
    let mut reader = BufReader::new(stream.try_clone().expect("clone the stream"));

    let discover = post(
        &mut stream,
        &mut reader,
        &request(1, "server/discover", json!({}), true),
        "2026-07-28",
    );
    assert_eq!(discover["result"]["resultType"], "complete", "{discover}");
    assert_modern_echo(&post(
        &mut stream,
        &mut reader,
        &echo(2, true),
        "2026-07-28",
    ));

    let init = post(&mut stream, &mut reader, &initialize(), "2025-11-25");
    assert_eq!(init["result"]["protocolVersion"], "2025-11-25", "{init}");
    let answer = post(&mut stream, &mut reader, &echo(3, false), "2025-11-25");
    assert_eq!(answer["result"]["content"][0]["text"], "hi", "{answer}");

    // Closing stdin ends the server.
    drop(server.stdin.take());
    let status = server.child.wait().expect("the server exits");
    assert!(status.success(), "{status}");
}
