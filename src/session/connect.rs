//! Connecting a session: the server started (or reached) and its opening run, bounded
//! like every phase; over HTTP, streamable first and the legacy HTTP+SSE transport when
//! the server's refusal says it may be one.

use std::sync::Arc;
use std::time::{Duration, Instant};

use rmcp::ClientHandler;
use rmcp::Peer;
use rmcp::model::ProtocolVersion;
use rmcp::service::{RoleClient, RunningService};
use rmcp::transport::Transport;
use rmcp::transport::streamable_http_client::StreamableHttpError;
use tokio_util::sync::CancellationToken;

use super::engine::{self, Engine, LineWire, PeerWire};
use super::error::{Error, Failure, Kind};
use super::handler::{Client, Shared};
use super::hooks::Hooks;
use super::observer::Observed;
use super::opening::{self, OpenError, unsupported_version};
use super::phase::{Pause, bounded};
use super::request_meta;
use crate::config::{ProtocolChoice, RemoteSpec, ServerSpec, TransportSpec};
use crate::redact::Redactor;
use crate::transport::http;
use crate::transport::local::ChildProcess;
use crate::transport::local::lines::{LineTransport, LineWriter};

/// A session's parts once its opening succeeded.
pub struct Opened {
    pub timeout: Duration,
    pub peer: Peer<RoleClient>,
    pub shared: Arc<Shared>,
    pub service: RunningService<RoleClient, Client>,
    pub child: Option<Arc<ChildProcess>>,
    pub engine: Arc<Engine>,
}

/// Starts the server and runs `initialize`, bounded by the server timeout and `cancel`.
/// What it reports hides the secrets of `spec`.
pub async fn connect(
    name: &str,
    spec: &ServerSpec,
    hooks: &Hooks,
    cancel: &CancellationToken,
) -> Result<Opened, Failure> {
    let redactor = Redactor::for_transport(&spec.transport);
    let shelf = hooks
        .shelves
        .as_ref()
        .and_then(|shelves| shelves.shelf(spec));
    let handler = Client(Shared::new(name, hooks, redactor.clone(), shelf));
    let opened = start(name, spec, handler, cancel).await;
    opened.map_err(|failure| failure.redacted(&redactor))
}

async fn start(
    name: &str,
    spec: &ServerSpec,
    handler: Client,
    cancel: &CancellationToken,
) -> Result<Opened, Failure> {
    let local = match &spec.transport {
        TransportSpec::Local(local) => local,
        TransportSpec::Remote(remote) => {
            return connect_remote(name, remote, spec, handler, cancel).await;
        }
    };
    let (child, pipes) = ChildProcess::spawn(local).map_err(|e| Error::other(e.to_string()))?;
    let child = Arc::new(child);
    let writer = match LineWriter::new(pipes.stdin) {
        Ok(writer) => writer,
        Err(e) => {
            child.shutdown(Duration::ZERO).await;
            return Err(Error::other(format!("cannot write to the server: {e}")).into());
        }
    };
    let wire = Box::new(LineWire(writer.clone()));
    let engine = Engine::new(handler.0.clone(), wire, Some(child.clone()));
    let incoming = Arc::new(engine::Incoming(Arc::downgrade(&engine)));
    let transport = LineTransport::new(pipes.stdout, writer.clone(), incoming);
    let start = Start {
        timeout: spec.timeout,
        protocol: spec.protocol,
        cancel,
        pause: None,
    };
    let local = Some(Local {
        child,
        engine,
        writer,
    });
    start.run(handler, local, transport, broken_opening).await
}

/// Streamable HTTP first; on a refusal that may be a legacy server's, the legacy HTTP+SSE
/// transport at the same URL, within what is left of the same timeout.
async fn connect_remote(
    name: &str,
    remote: &RemoteSpec,
    spec: &ServerSpec,
    handler: Client,
    cancel: &CancellationToken,
) -> Result<Opened, Failure> {
    let (timeout, protocol) = (spec.timeout, spec.protocol);
    let started = Instant::now();
    let explain = |e: &StreamableHttpError<reqwest::Error>| {
        let (reason, meaning) = http::explain_open_error(e);
        Error::new(meaning.into(), reason)
    };
    let initializes = handler.0.http_initializes.clone();
    let answers = (handler.0.related.clone(), handler.0.kept.clone());
    let oauth = (name, &handler.0.hooks.oauth);
    let transport = http::streamable(remote, oauth, initializes, answers)
        .map_err(|e| Error::other(e.to_string()))?;
    let start = Start {
        timeout,
        protocol,
        cancel,
        pause: Some((handler.0.hooks.oauth.signing_in(), name.to_owned())),
    };
    let streamable = start.run(handler.clone(), None, transport, explain).await;
    let Err(Failure::Reason(refusal)) = streamable else {
        return streamable;
    };
    if refusal.kind() != Kind::MaybeLegacy {
        return Err(refusal.into());
    }
    let left = timeout.saturating_sub(started.elapsed());
    let handshake = async { Ok::<_, Error>(http::legacy(remote).await) };
    let phase = "the legacy SSE handshake";
    let transport = match bounded(None, phase, (left, None), cancel, handshake).await {
        Ok(Ok(transport)) => transport,
        Ok(Err(not_legacy)) => {
            let kind = refusal.kind();
            let reason = http::explain_not_legacy(&not_legacy, refusal.into_text());
            return Err(Error::new(kind, reason).into());
        }
        Err(Failure::Aborted) => return Err(Failure::Aborted),
        Err(Failure::Reason(_)) => return Err(refusal.into()),
    };
    let left = timeout.saturating_sub(started.elapsed());
    // The legacy transport predates the 2026 revision.
    let start = Start {
        timeout: left,
        protocol: ProtocolChoice::Legacy,
        cancel,
        pause: None,
    };
    let mut opened = start.run(handler, None, transport, broken_opening).await?;
    opened.timeout = timeout;
    Ok(opened)
}

/// What a local server's session starts from besides its transport.
struct Local {
    child: Arc<ChildProcess>,
    engine: Arc<Engine>,
    writer: Arc<LineWriter>,
}

/// Resolves once the server has read what was written to it and said nothing for
/// `opening::SILENCE` (see `opening`).
async fn read_and_silent(writer: Arc<LineWriter>) {
    while writer.drained() == Some(false) {
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    tokio::time::sleep(opening::SILENCE).await;
}

/// Starting a session: initialize over a transport, bounded like every phase.
struct Start<'a> {
    timeout: Duration,
    protocol: ProtocolChoice,
    cancel: &'a CancellationToken,
    /// Stands the clock still while a person signs in (remote servers).
    pause: Option<Pause>,
}

impl Start<'_> {
    async fn run<T>(
        self,
        handler: Client,
        local: Option<Local>,
        transport: T,
        explain: impl Fn(&T::Error) -> Error,
    ) -> Result<Opened, Failure>
    where
        T: Transport<RoleClient> + 'static,
    {
        let mut transport = Observed::new(transport, handler.0.clone());
        let protocol = self.protocol;
        // A local server may stay silent on discover; a remote one always answers.
        let silence = local
            .as_ref()
            .map(|local| Box::pin(read_and_silent(local.writer.clone())) as opening::Silence);
        let initialize = async {
            let info = handler.get_info();
            let opened = opening::open(&mut transport, &info, protocol, silence).await;
            let (peer, unanswered) = opened.map_err(|e| match e {
                OpenError::Step(step) => step,
                OpenError::Send(e) => explain(&e),
            })?;
            transport.opened(unanswered);
            let service = rmcp::service::serve_directly(handler, transport, Some(peer));
            let version = service
                .peer()
                .peer_info()
                .map(|i| i.protocol_version.clone());
            match version {
                Some(v) if !ProtocolVersion::KNOWN_VERSIONS.contains(&v) => {
                    Err(Error::answered(unsupported_version(&v)))
                }
                _ => Ok(service),
            }
        };
        let (child, local_engine) = local.map(|l| (l.child, l.engine)).unzip();
        let phase = (self.timeout, self.pause);
        let opened = bounded(
            child.as_deref(),
            "initialize",
            phase,
            self.cancel,
            initialize,
        );
        let service = match opened.await {
            Ok(service) => service,
            Err(failure) => {
                if let Some(child) = child {
                    child.shutdown(Duration::ZERO).await;
                }
                return Err(failure);
            }
        };
        let peer = service.peer().clone();
        let shared = service.service().0.clone();
        let version = peer.peer_info().map(|info| info.protocol_version.clone());
        let meta =
            version.and_then(|v| request_meta::modern_meta(&service.service().get_info(), &v));
        let engine = local_engine.unwrap_or_else(|| {
            let wire = Box::new(PeerWire::new(peer.clone(), shared.clone()));
            Engine::new(shared.clone(), wire, None)
        });
        if let Some(meta) = &meta {
            engine.set_meta(request_meta::as_members(meta));
        }
        Ok(Opened {
            timeout: self.timeout,
            peer,
            shared,
            service,
            child,
            engine,
        })
    }
}

/// A transport that failed to send during the opening, in words.
fn broken_opening(error: &impl std::fmt::Display) -> Error {
    Error::broken(format!("initialize failed: {error}"))
}
