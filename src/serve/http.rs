//! The gateway over streamable HTTP: a listener whose connections hyper runs (HTTP/1.1),
//! each request through the front door, then to rmcp's streamable HTTP service of the
//! view its path names: `/mcp` the served view, `/agents/<id>/mcp` an agent's view of
//! the store (when the store view is served). A 2025-11-25 session lives in this
//! process: another replica answers 404 for its id, so the client opens a new one.

use std::collections::HashMap;
use std::convert::Infallible;
use std::io;
use std::net::SocketAddr;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use http::{Request, Response, StatusCode, header};
use http_body_util::combinators::BoxBody;
use http_body_util::{BodyExt, Full};
use hyper::body::Bytes;
use hyper::body::Incoming;
use hyper::service::service_fn;
use hyper_util::rt::{TokioIo, TokioTimer};
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use rmcp::transport::streamable_http_server::{StreamableHttpServerConfig, StreamableHttpService};
use tokio::net::TcpListener;
use tokio::task::JoinSet;
use tokio_util::sync::CancellationToken;

use super::door::{Door, DoorError};
use super::oauth::Denied;
use super::quick_call::{self, Quick};
use super::shared::Shared;
use super::view::View;
use crate::lock::lock;

/// How long a connection may wait for a request's headers, idle between requests
/// included (hyper's rule): long enough that a keep-alive client rarely sends into a
/// closing connection, short enough that a slow client holds no task for long.
const HEADER_TIMEOUT: Duration = Duration::from_secs(60);

type Service = StreamableHttpService<View, LocalSessionManager>;

/// A gateway listening; `close` stops it.
pub struct Listening {
    /// `http://host:port/mcp`.
    pub url: String,
    stop: CancellationToken,
    accepting: tokio::task::JoinHandle<()>,
}

impl Listening {
    /// Stops accepting, ends every session and connection.
    pub async fn close(self) {
        self.stop.cancel();
        let _ = self.accepting.await;
    }
}

/// A view, and rmcp's service of it.
#[derive(Clone)]
struct Served {
    view: Arc<Shared>,
    service: Service,
}

struct Gateway {
    main: Served,
    /// The store view's, when it is the one served (agents' views are reached through it).
    store_view: Option<View>,
    agents: Mutex<HashMap<String, Served>>,
    door: Door,
    config: StreamableHttpServerConfig,
}

/// Serves `view` at `address` (`host:port`; port 0 picks one).
pub async fn serve_http(view: View, address: &str, door: Door) -> io::Result<Listening> {
    let listener = TcpListener::bind(address).await?;
    let local = listener.local_addr()?;
    let stop = view.shared.closing.clone();
    let mut config = StreamableHttpServerConfig::default()
        .with_cancellation_token(stop.child_token())
        .with_json_response(true);
    if !local.ip().is_loopback() {
        // Bound to be reached by other names: the Host check guards loopback only.
        config = config.disable_allowed_hosts();
    }
    door.bound(&format!("http://{}", host_port(local)));
    let store_view = view.agent().is_none().then(|| view.clone());
    let gateway = Arc::new(Gateway {
        main: served(&view, &config),
        store_view,
        agents: Mutex::new(HashMap::new()),
        door,
        config,
    });
    let accepting = tokio::spawn(accept(listener, gateway, stop.clone()));
    Ok(Listening {
        url: format!("http://{}/mcp", host_port(local)),
        stop,
        accepting,
    })
}

fn host_port(address: SocketAddr) -> String {
    match address {
        SocketAddr::V6(v6) => format!("[{}]:{}", v6.ip(), v6.port()),
        SocketAddr::V4(v4) => v4.to_string(),
    }
}

fn served(view: &View, config: &StreamableHttpServerConfig) -> Served {
    let shared = view.shared.clone();
    let view = view.clone();
    let service = StreamableHttpService::new(
        move || Ok(view.session()),
        Arc::new(LocalSessionManager::default()),
        config.clone(),
    );
    Served {
        view: shared,
        service,
    }
}

async fn accept(listener: TcpListener, gateway: Arc<Gateway>, stop: CancellationToken) {
    let mut connections = JoinSet::new();
    loop {
        let stream = tokio::select! {
            accepted = listener.accept() => match accepted {
                Ok((stream, _)) => stream,
                // Out of descriptors, say: the next accept may succeed.
                Err(_) => { tokio::time::sleep(Duration::from_millis(10)).await; continue; }
            },
            _ = stop.cancelled() => break,
            Some(_) = connections.join_next(), if !connections.is_empty() => continue,
        };
        let _ = stream.set_nodelay(true);
        let gateway = gateway.clone();
        connections.spawn(async move {
            let serve = service_fn(move |request| {
                let gateway = gateway.clone();
                async move { Ok::<_, Infallible>(gateway.handle(request).await) }
            });
            let _ = hyper::server::conn::http1::Builder::new()
                .timer(TokioTimer::new())
                .header_read_timeout(HEADER_TIMEOUT)
                .serve_connection(TokioIo::new(stream), serve)
                .await;
        });
    }
    connections.shutdown().await;
}

impl Gateway {
    async fn handle(&self, request: Request<Incoming>) -> Response<BoxBody<Bytes, Infallible>> {
        let path = request.uri().path().to_owned();
        if let Some(metadata) = self.metadata(&path) {
            return metadata;
        }
        let Some(served) = self.route(&path) else {
            return plain(StatusCode::NOT_FOUND, "no MCP endpoint here");
        };
        if let Err(refused) = self.door.admit(&path, request.headers()).await {
            return self.turned_away(&path, &refused);
        }
        let checks_host = !self.config.allowed_hosts.is_empty();
        match quick_call::answer(&served.view, request, checks_host).await {
            Quick::Answered(response) => response,
            Quick::Declined(request) => served.service.handle(request).await,
        }
    }

    fn turned_away(&self, path: &str, refused: &DoorError) -> Response<BoxBody<Bytes, Infallible>> {
        let status = match refused {
            DoorError::Origin(_) | DoorError::OAuth(Denied::Scope) => StatusCode::FORBIDDEN,
            _ => StatusCode::UNAUTHORIZED,
        };
        let mut response = plain(status, &refused.to_string());
        let challenge = self.door.challenge(path, refused);
        if let Some(value) = challenge.and_then(|c| header::HeaderValue::try_from(c).ok()) {
            response
                .headers_mut()
                .insert(header::WWW_AUTHENTICATE, value);
        }
        response
    }

    /// The protected-resource metadata, at its well-known path or that followed by a
    /// view's path (RFC 9728), when the door takes access tokens.
    fn metadata(&self, path: &str) -> Option<Response<BoxBody<Bytes, Infallible>>> {
        let rest = path.strip_prefix("/.well-known/oauth-protected-resource")?;
        if !(rest.is_empty() || rest == "/mcp" || rest.starts_with("/agents/")) {
            return None;
        }
        let mut response = plain(StatusCode::OK, &self.door.metadata()?);
        response.headers_mut().insert(
            header::CONTENT_TYPE,
            header::HeaderValue::from_static("application/json"),
        );
        Some(response)
    }

    /// The view `path` names, and its service.
    fn route(&self, path: &str) -> Option<Served> {
        if path == "/mcp" {
            return Some(self.main.clone());
        }
        let id = path.strip_prefix("/agents/")?.strip_suffix("/mcp")?;
        let store_view = self.store_view.as_ref()?;
        if id.is_empty() || id.contains('/') {
            return None;
        }
        let shared = &store_view.shared;
        // Only agents the store has: a path is not a way to grow the map.
        if shared.store.status(Some(id)).is_empty() {
            return None;
        }
        let mut agents = lock(&self.agents);
        let made = agents.entry(id.to_owned()).or_insert_with(|| {
            let view = View::new(
                shared.store.clone(),
                Some(id.to_owned()),
                shared.options.clone(),
                shared.closing.clone(),
            );
            served(&view, &self.config)
        });
        Some(made.clone())
    }
}

fn plain(status: StatusCode, text: &str) -> Response<BoxBody<Bytes, Infallible>> {
    let mut response = Response::new(Full::new(Bytes::from(text.to_owned())).boxed());
    *response.status_mut() = status;
    response.headers_mut().insert(
        header::CONTENT_TYPE,
        header::HeaderValue::from_static("text/plain; charset=utf-8"),
    );
    response
}
