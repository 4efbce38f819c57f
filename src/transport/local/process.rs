//! A local server's process: started in a tree of its own, watched until it exits, ended
//! with its whole tree.
//!
//! We own the child instead of letting rmcp spawn it, so that failures can report the exit
//! status and the last lines of stderr, and so that closing kills the whole process tree
//! (a server's own children included), not just the leader.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use tokio::sync::watch;

use super::environment::{environment, is_path};
use super::os::{self, Lease};
use super::start_error::{self, StartError};
use super::stderr::{StderrTail, drain_stderr};
use super::{Command, Exit, Signal};
use crate::config::LocalSpec;
use crate::lock::lock;

/// A running server process. Dropping it kills its process tree.
pub struct ChildProcess {
    lease: Arc<Lease>,
    exit: watch::Receiver<Option<Exit>>,
    stderr: Arc<Mutex<StderrTail>>,
    stderr_done: watch::Receiver<bool>,
}

pub struct ChildPipes {
    /// Read by whichever thread waits for the server's output (see `lines::LineReader`).
    pub stdout: os::OutPipe,
    pub stdin: os::InPipe,
}

impl ChildProcess {
    /// Spawns `program args...` directly (never through a shell).
    pub fn spawn(spec: &LocalSpec) -> Result<(ChildProcess, ChildPipes), StartError> {
        let command = Command {
            program: &spec.program,
            args: &spec.args,
            env: environment(spec),
            cwd: spec.cwd.as_deref(),
        };
        let started = os::start(&command).map_err(|e| {
            let own_path = spec.env.iter().any(|(name, _)| is_path(name.as_ref()));
            StartError(start_error::explain(
                &spec.program,
                &command.env,
                own_path,
                &e,
            ))
        })?;
        let lease = Arc::new(started.lease);
        let (exit_tx, exit) = watch::channel(None);
        tokio::spawn(os::watch_exit(started.leader, lease.clone(), exit_tx));
        let tail = Arc::new(Mutex::new(StderrTail {
            unsplittable: spec.env.iter().map(|(_, value)| value.clone()).collect(),
            ..StderrTail::default()
        }));
        let (done_tx, stderr_done) = watch::channel(false);
        tokio::spawn(drain_stderr(started.stderr, tail.clone(), done_tx));

        Ok((
            ChildProcess {
                lease,
                exit,
                stderr: tail,
                stderr_done,
            },
            ChildPipes {
                stdout: started.stdout,
                stdin: started.stdin,
            },
        ))
    }

    /// Tells of the leader's exit without holding the child (whose drop kills its group).
    pub fn exit_watch(&self) -> watch::Receiver<Option<Exit>> {
        self.exit.clone()
    }

    /// Resolves when the leader has exited.
    pub async fn exited(&self) -> Exit {
        let mut exit = self.exit.clone();
        let status = exit.wait_for(Option::is_some).await.ok().and_then(|s| *s);
        match status {
            Some(status) => status,
            // The reaper task is gone only if the runtime is shutting down.
            None => std::future::pending().await,
        }
    }

    /// The exit status if the leader exits within `grace`.
    pub async fn exit_within(&self, grace: Duration) -> Option<Exit> {
        tokio::time::timeout(grace, self.exited()).await.ok()
    }

    /// "exited (code 1) during <phase>; stderr: <last lines>", once stderr is drained
    /// (briefly bounded, since a grandchild may hold the pipe open).
    pub async fn describe_exit(&self, status: Exit, phase: &str) -> String {
        let mut done = self.stderr_done.clone();
        let _ = tokio::time::timeout(Duration::from_millis(200), done.wait_for(|d| *d)).await;
        let mut text = format!("exited ({}) during {phase}", describe_status(status));
        let tail = self.stderr_tail();
        if !tail.is_empty() {
            text.push_str("; stderr: ");
            text.push_str(&tail);
        }
        text
    }

    /// The last lines the server wrote to stderr, joined by " | ".
    pub fn stderr_tail(&self) -> String {
        let tail = lock(&self.stderr);
        tail.lines.iter().cloned().collect::<Vec<_>>().join(" | ")
    }

    /// Ends the process tree: the leader gets `grace` to exit after stdin has been closed,
    /// then a request to terminate (SIGTERM, where there is one) and a little more time,
    /// then the whole tree is killed (which also takes down grandchildren a well-behaved
    /// leader left behind).
    pub async fn shutdown(&self, grace: Duration) {
        if !grace.is_zero() && self.exit_within(grace).await.is_none() {
            self.lease.signal(Signal::Terminate);
            let _ = self.exit_within(grace).await;
        }
        self.lease.signal(Signal::Kill);
        self.exited().await;
        self.lease.release();
    }
}

impl Drop for ChildProcess {
    fn drop(&mut self) {
        self.lease.signal(Signal::Kill);
        self.lease.release();
    }
}

fn describe_status(Exit(status): Exit) -> String {
    let Some(status) = status else {
        return "status unknown".into();
    };
    if let Some(signal) = os::signal_of(&status) {
        return format!("signal {signal}");
    }
    match status.code() {
        Some(code) => format!("code {code}"),
        None => "unknown status".into(),
    }
}
