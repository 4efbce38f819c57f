//! Local servers: a child process per server, speaking newline-delimited JSON-RPC on its
//! stdin and stdout, whose whole process tree ends with it.
//!
//! What differs per operating system sits behind this one boundary: `os` is `unix` (with
//! Linux and the other Unix systems behind one more, the same way) or `windows`, and each
//! gives the same few items, which the rest of this folder (and of the crate) uses without
//! naming an OS:
//! - `start(&Command) -> io::Result<Started>`: the child, in a tree of its own, and the
//!   host's ends of its pipes;
//! - `Lease` (`signal`, `release`) and `watch_exit`: ending the tree, and learning that the
//!   leader exited;
//! - `kill_all()`: every live tree, for the host's exit path;
//! - `InPipe` / `Writable`, `OutPipe` / `Readable`, `ErrPipe`: the pipes, written and read
//!   without blocking from whichever thread has something to do;
//! - `SAFE_VARS`, `signal_of`, `host_symbol`.

use std::ffi::OsString;
use std::path::Path;
use std::process::ExitStatus;

#[cfg(unix)]
mod unix;
#[cfg(unix)]
use unix as os;
#[cfg(windows)]
mod windows;
#[cfg(windows)]
use windows as os;

mod environment;
pub mod lines;
mod process;
mod start_error;
mod stderr;

pub use os::{InPipe, OutPipe, host_symbol, kill_all};
pub use process::{ChildPipes, ChildProcess};
pub use start_error::StartError;

/// What to run: `program` (looked up in the `PATH` of `env` as the OS's users expect), its
/// arguments, its whole environment and its working directory.
pub struct Command<'a> {
    pub program: &'a str,
    pub args: &'a [String],
    pub env: Vec<(OsString, OsString)>,
    pub cwd: Option<&'a Path>,
}

/// A started child. The stderr pipe is not optional: Node marks fds 0-2 close-on-exec, so
/// an inherited stderr would reach the child closed, and draining a pipe gives us its last
/// lines.
pub struct Started {
    pub lease: os::Lease,
    pub leader: os::Leader,
    pub stdin: os::InPipe,
    pub stdout: os::OutPipe,
    pub stderr: os::ErrPipe,
}

/// How the leader ended: `None` when its status could not be learned (something else in
/// the host reaped it).
#[derive(Debug, Clone, Copy)]
pub struct Exit(pub Option<ExitStatus>);

/// What [`os::Lease::signal`] asks of a server's tree.
#[derive(Clone, Copy)]
pub enum Signal {
    /// Exit now, cleaning up (where the OS has a way to ask).
    Terminate,
    Kill,
}
