//! The stdio line reader's fuzz target.

use std::io::Write;
use std::os::fd::{FromRawFd, OwnedFd};
use std::sync::{Arc, Mutex};

use rmcp::transport::Transport;

use super::chunks;
use crate::transport::local::lines::{Intercept, LineTransport, LineWriter};
use crate::transport::local::{InPipe, OutPipe};

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
        let pieces = chunks(data);
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
        // The server writes on this task, a piece a turn, so the reader meets the same
        // pieces in the same order every run: a feeding thread would make the chunks (and
        // so the coverage libFuzzer steers by) differ from run to run.
        let feed = async move {
            let mut out = std::fs::File::from(server_out);
            for mut piece in pieces {
                while !piece.is_empty() {
                    // The pipe is non-blocking: a full one waits for the reader's turn.
                    if let Ok(n) = out.write(piece) {
                        piece = &piece[n..];
                    }
                    tokio::task::yield_now().await;
                }
            }
        };
        let read = async {
            let mut messages = 0;
            while transport.receive().await.is_some() {
                messages += 1;
            }
            messages
        };
        let ((), messages) = tokio::join!(feed, read);
        let seen = seen.0.lock().expect("lock");
        assert_eq!(seen.0, oversized, "lines over {max_line} bytes");
        assert!(
            messages <= whole,
            "{messages} messages from {whole} lines read whole"
        );
        assert!(seen.1, "told of the end");
    });
}
