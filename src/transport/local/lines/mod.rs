//! Newline-delimited JSON-RPC over a child's stdin and stdout, as rmcp's transport, with
//! a side door: every incoming line is first offered to an [`Intercept`] (the session's
//! tool calls), which takes its own messages before rmcp decodes anything, and anyone
//! holding the [`LineWriter`] can write a line at once, from any thread.

use std::future::Future;
use std::io;
use std::sync::Arc;

use rmcp::model::{ClientJsonRpcMessage, ServerJsonRpcMessage};
use rmcp::service::RoleClient;
use rmcp::transport::Transport;

use super::os::{OutPipe, Readable};
use crate::transport::MAX_MESSAGE_BYTES;

mod cork;
mod decode;
mod reader;
mod writer;

pub use self::cork::{cork, set_can_cork, uncork};
pub use self::reader::{Flow, HostLoop, LineReader, has_host_loop, set_host_loop};
pub use self::writer::{LineWriter, MAX_BACKLOG, WriteError};

/// Sees each incoming line before rmcp does.
pub trait Intercept: Send + Sync {
    /// Handles `line` and returns true, or returns false to leave it to rmcp.
    fn intercept(&self, line: &[u8]) -> bool;
    /// A line too long to read was dropped; `head` is its start (where its id usually is).
    fn oversized(&self, head: &[u8]);
    /// A line that neither the intercept nor rmcp could read was dropped.
    fn unreadable(&self, line: &[u8]);
    /// The server's stdout has ended; called once.
    fn ended(&self);
}

/// rmcp's transport over the pipes of a local server.
pub struct LineTransport {
    reader: Arc<LineReader>,
    /// The pipe as registered with tokio, while rmcp's task is the one waiting for it.
    registered: Option<Readable>,
    writer: Arc<LineWriter>,
}

impl LineTransport {
    pub fn new(stdout: OutPipe, writer: Arc<LineWriter>, intercept: Arc<dyn Intercept>) -> Self {
        Self::with_max_line(stdout, writer, intercept, MAX_MESSAGE_BYTES)
    }

    /// As [`LineTransport::new`], dropping lines over `max_line` bytes (the fuzz target's
    /// small limit reaches that path without 128 MiB inputs).
    pub fn with_max_line(
        stdout: OutPipe,
        writer: Arc<LineWriter>,
        intercept: Arc<dyn Intercept>,
        max_line: usize,
    ) -> Self {
        LineTransport {
            reader: LineReader::new(stdout, intercept, writer.clone(), max_line),
            registered: None,
            writer,
        }
    }

    /// Waits until the pipe is readable and reads it, unless a host thread takes the
    /// reading over meanwhile; returns when there may be something new.
    async fn read_when_ready(&mut self) {
        let changed = self.reader.changed.notified();
        tokio::pin!(changed);
        changed.as_mut().enable();
        if self.reader.host_reads() {
            // Not registered while the host waits, or every answer would wake us too.
            self.registered = None;
            return changed.await;
        }
        let registered = match self.registered.take() {
            Some(registered) => registered,
            None => match self.reader.register() {
                Ok(registered) => registered,
                Err(_) => return self.reader.end(),
            },
        };
        let registered = &*self.registered.insert(registered);
        // In a fixed order, so the same bytes take the same path (the fuzz target steers by
        // it): news first, as the caller looks for a message before waiting again anyway.
        tokio::select! {
            biased;
            _ = changed => {}
            ready = registered.readable() => match ready {
                Ok(mut ready) => {
                    if self.reader.read_ready() == Flow::Waiting {
                        ready.clear();
                    }
                }
                Err(_) => self.reader.end(),
            },
        }
    }
}

impl Transport<RoleClient> for LineTransport {
    type Error = io::Error;

    fn send(
        &mut self,
        item: ClientJsonRpcMessage,
    ) -> impl Future<Output = Result<(), io::Error>> + Send + 'static {
        let sent = serde_json::to_vec(&item)
            .map_err(io::Error::from)
            .and_then(|mut line| {
                line.push(b'\n');
                self.writer.write_line(&line).map_err(io::Error::other)
            });
        std::future::ready(sent)
    }

    async fn receive(&mut self) -> Option<ServerJsonRpcMessage> {
        loop {
            if let Some(message) = self.reader.next_for_rmcp() {
                return Some(message);
            }
            if self.reader.is_over() {
                self.registered = None;
                return None;
            }
            self.read_when_ready().await;
        }
    }

    fn close(&mut self) -> impl Future<Output = Result<(), io::Error>> + Send {
        self.writer.close();
        std::future::ready(Ok(()))
    }
}

impl Drop for LineTransport {
    fn drop(&mut self) {
        self.registered = None;
        self.writer.close();
        self.reader.close();
    }
}
