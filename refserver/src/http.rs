//! HTTP mode: MCP streamable HTTP on 127.0.0.1, one keep-alive HTTP/1.1 connection per
//! client socket, both eras on one endpoint.
//!
//! rmcp's `StreamableHttpService` does the protocol: a request carrying 2026-07-28 `_meta`
//! is served statelessly, as that revision asks; a 2025 `initialize` is answered too, and
//! with `legacy_session_mode` off the 2025 requests that follow are served statelessly as
//! well (no `Mcp-Session-Id`, GET answers 405), the way the v2 SDK's `createMcpHandler`
//! serves them by default. Answers are plain JSON, not an SSE stream: these tools send
//! nothing before their result, and JSON is the cheaper reply to parse for every client.

use std::io;
use std::net::{Ipv4Addr, SocketAddr};
use std::sync::Arc;

use hyper::server::conn::http1;
use hyper_util::rt::TokioIo;
use hyper_util::service::TowerToHyperService;
use rmcp::transport::streamable_http_server::session::never::NeverSessionManager;
use rmcp::transport::streamable_http_server::{StreamableHttpServerConfig, StreamableHttpService};
use tokio::io::AsyncWriteExt;
use tokio::net::TcpListener;

use crate::RefServer;

/// Binds `127.0.0.1:port` (0: an ephemeral port), prints the endpoint's URL on stdout, then
/// serves until stdin closes, so a bench that dies takes its server along.
pub async fn serve(server: RefServer, port: u16) -> io::Result<()> {
    let listener = TcpListener::bind(SocketAddr::from((Ipv4Addr::LOCALHOST, port))).await?;
    let address = listener.local_addr()?;
    let mut stdout = tokio::io::stdout();
    stdout
        .write_all(format!("http://{address}/mcp\n").as_bytes())
        .await?;
    stdout.flush().await?;

    let config = StreamableHttpServerConfig::default()
        .with_legacy_session_mode(false)
        .with_json_response(true)
        .with_sse_keep_alive(None);
    let service = StreamableHttpService::new(
        move || Ok(server.clone()),
        Arc::new(NeverSessionManager::default()),
        config,
    );
    let accept = async {
        loop {
            let (stream, _) = listener.accept().await?;
            // Calls are small and answered at once: send each reply without waiting for
            // more to coalesce (Nagle would add up to 40 ms to a request-response loop).
            stream.set_nodelay(true)?;
            let connection = http1::Builder::new().keep_alive(true).serve_connection(
                TokioIo::new(stream),
                TowerToHyperService::new(service.clone()),
            );
            tokio::spawn(async move {
                // A client that drops its connection mid-request is not the server's error.
                let _ = connection.await;
            });
        }
    };
    tokio::select! {
        result = accept => result,
        () = stdin_closed() => Ok(()),
    }
}

/// Resolves when stdin reaches its end (or cannot be read).
async fn stdin_closed() {
    let mut stdin = tokio::io::stdin();
    let mut sink = tokio::io::sink();
    let _ = tokio::io::copy(&mut stdin, &mut sink).await;
}
