//! Local servers: a child process per server, in its own process group, speaking
//! newline-delimited JSON-RPC on stdin/stdout.
//!
//! We own the child instead of letting rmcp spawn it, so that failures can report the exit
//! status and the last lines of stderr, and so that closing kills the whole process tree
//! (a server's own children included), not just the leader.

use std::collections::{BTreeMap, VecDeque};
use std::ffi::OsString;
use std::os::fd::OwnedFd;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use tokio::io::{AsyncBufReadExt, BufReader};
use tokio::net::unix::pipe;
use tokio::sync::watch;

use super::groups;
use super::reaper::{self, Exit, Lease};
use super::spawn;
use crate::config::LocalSpec;

/// Lines of stderr kept for error messages, and the longest line kept.
const STDERR_LINES: usize = 8;
const STDERR_LINE_CHARS: usize = 500;

/// A running server process. Dropping it kills its process group.
pub struct ChildProcess {
    lease: Arc<Lease>,
    exit: watch::Receiver<Option<Exit>>,
    stderr: Arc<Mutex<StderrTail>>,
    stderr_done: watch::Receiver<bool>,
}

pub struct ChildPipes {
    /// Non-blocking, and registered with no reactor: whichever thread waits for the
    /// server's output watches it (see `lines::LineReader`).
    pub stdout: OwnedFd,
    /// Non-blocking, and registered with no reactor.
    pub stdin: OwnedFd,
}

impl ChildProcess {
    /// Spawns `program args...` directly (never through a shell).
    pub fn spawn(spec: &LocalSpec) -> Result<(ChildProcess, ChildPipes), String> {
        let command = spawn::Command {
            program: &spec.program,
            args: &spec.args,
            env: environment(spec),
            cwd: spec.cwd.as_deref(),
        };
        let started = spawn::start(&command).map_err(|e| {
            let own_path = spec.env.iter().any(|(name, _)| name == "PATH");
            super::start_error::explain(&spec.program, &command.env, own_path, &e)
        })?;
        let lease = Arc::new(Lease::new(started.pid));
        let stderr = match pipe::Receiver::from_owned_fd(started.stderr) {
            Ok(stderr) => stderr,
            Err(e) => {
                lease.signal(groups::Signal::Kill);
                lease.release();
                return Err(format!("cannot read from \"{}\": {e}", spec.program));
            }
        };
        let (exit_tx, exit) = watch::channel(None);
        tokio::spawn(reaper::watch_exit(started.leader, lease.clone(), exit_tx));
        let tail = Arc::new(Mutex::new(StderrTail {
            unsplittable: spec.env.iter().map(|(_, value)| value.clone()).collect(),
            ..StderrTail::default()
        }));
        let (done_tx, stderr_done) = watch::channel(false);
        tokio::spawn(drain_stderr(stderr, tail.clone(), done_tx));

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
        let tail = self.stderr.lock().unwrap_or_else(|e| e.into_inner());
        tail.lines.iter().cloned().collect::<Vec<_>>().join(" | ")
    }

    /// Ends the process tree: the leader gets `grace` to exit after stdin has been closed,
    /// then SIGTERM and a little more time, then the whole group gets SIGKILL (which also
    /// takes down grandchildren a well-behaved leader left behind).
    pub async fn shutdown(&self, grace: Duration) {
        if !grace.is_zero() && self.exit_within(grace).await.is_none() {
            self.lease.signal(groups::Signal::Terminate);
            let _ = self.exit_within(grace).await;
        }
        self.lease.signal(groups::Signal::Kill);
        self.exited().await;
        self.lease.release();
    }
}

impl Drop for ChildProcess {
    fn drop(&mut self) {
        self.lease.signal(groups::Signal::Kill);
        self.lease.release();
    }
}

/// The server's whole environment: the host's (or only its safe part), then its own
/// variables, a later one winning over an earlier one of the same name.
fn environment(spec: &LocalSpec) -> Vec<(OsString, OsString)> {
    let mut env: BTreeMap<OsString, OsString> = if spec.inherit_env {
        std::env::vars_os().collect()
    } else {
        safe_environment().map(|(k, v)| (k.into(), v)).collect()
    };
    env.extend(spec.env.iter().map(|(k, v)| (k.into(), v.into())));
    env.into_iter().collect()
}

/// What a server started with `"inheritEnv": false` gets of the host's environment: the
/// TypeScript SDK's `getDefaultEnvironment` set (sudo's, on Unix), plus the locale. A value
/// starting with `()` is a shell function, which the SDK leaves out too.
#[cfg(not(windows))]
const SAFE_VARS: &[&str] = &[
    "HOME", "LOGNAME", "PATH", "SHELL", "TERM", "USER", "LANG", "LC_ALL",
];
#[cfg(windows)]
const SAFE_VARS: &[&str] = &[
    "APPDATA",
    "HOMEDRIVE",
    "HOMEPATH",
    "LOCALAPPDATA",
    "PATH",
    "PROCESSOR_ARCHITECTURE",
    "SYSTEMDRIVE",
    "SYSTEMROOT",
    "TEMP",
    "USERNAME",
    "USERPROFILE",
    "PROGRAMFILES",
];

fn safe_environment() -> impl Iterator<Item = (&'static str, std::ffi::OsString)> {
    SAFE_VARS.iter().filter_map(|&name| {
        let value = std::env::var_os(name)?;
        (!value.as_encoded_bytes().starts_with(b"()")).then_some((name, value))
    })
}

fn describe_status(Exit(status): Exit) -> String {
    let Some(status) = status else {
        return "status unknown".into();
    };
    #[cfg(unix)]
    {
        use std::os::unix::process::ExitStatusExt;
        if let Some(signal) = status.signal() {
            return format!("signal {signal}");
        }
    }
    match status.code() {
        Some(code) => format!("code {code}"),
        None => "unknown status".into(),
    }
}

#[derive(Default)]
struct StderrTail {
    lines: VecDeque<String>,
    /// The values of the server's own variables: a kept line never ends inside one, so
    /// what hides them in messages later sees each one whole.
    unsplittable: Vec<String>,
}

impl StderrTail {
    fn push(&mut self, line: &str) {
        let line = line.trim_end();
        // Stack frames crowd out the line that says what went wrong.
        if line.is_empty() || line.trim_start().starts_with("at ") {
            return;
        }
        if self.lines.len() == STDERR_LINES {
            self.lines.pop_front();
        }
        let kept = cut(line, STDERR_LINE_CHARS, &self.unsplittable);
        self.lines.push_back(kept.to_owned());
    }
}

/// The first `chars` characters of `line`, or fewer, so as not to end inside any of `whole`.
fn cut<'a>(line: &'a str, chars: usize, whole: &[String]) -> &'a str {
    let mut end = line
        .char_indices()
        .nth(chars)
        .map_or(line.len(), |(i, _)| i);
    loop {
        let straddling = whole.iter().filter(|v| !v.is_empty()).flat_map(|value| {
            line.match_indices(value.as_str())
                .map(|(start, found)| (start, start + found.len()))
        });
        let Some(start) = straddling
            .filter(|&(start, stop)| start < end && stop > end)
            .map(|(start, _)| start)
            .min()
        else {
            return &line[..end];
        };
        end = start;
    }
}

/// Keeps reading so the server never blocks on a full pipe; keeps only the last lines, and
/// of each only its start, so that a line without end costs no memory.
async fn drain_stderr(
    stderr: pipe::Receiver,
    tail: Arc<Mutex<StderrTail>>,
    done: watch::Sender<bool>,
) {
    const KEPT_BYTES: usize = STDERR_LINE_CHARS * 4;
    let keep = |line: &[u8]| {
        let line = String::from_utf8_lossy(line);
        tail.lock().unwrap_or_else(|e| e.into_inner()).push(&line);
    };
    let mut reader = BufReader::new(stderr);
    let mut line = Vec::new();
    loop {
        let chunk = match reader.fill_buf().await {
            Ok([]) | Err(_) => break,
            Ok(chunk) => chunk,
        };
        let end = memchr::memchr(b'\n', chunk);
        let taken = end.map_or(chunk.len(), |i| i + 1);
        let room = KEPT_BYTES.saturating_sub(line.len());
        line.extend_from_slice(&chunk[..taken.min(room)]);
        reader.consume(taken);
        if end.is_some() {
            keep(&line);
            line.clear();
        }
    }
    if !line.is_empty() {
        keep(&line);
    }
    let _ = done.send(true);
}

#[cfg(test)]
mod tests {
    use super::cut;

    #[test]
    fn a_long_line_is_cut_at_its_character_limit() {
        assert_eq!(cut("aé…bcd", 3, &[]), "aé…");
        assert_eq!(cut("short", 500, &[]), "short");
    }

    #[test]
    fn a_line_is_never_cut_inside_a_value_it_must_keep_whole() {
        let secret = "s3cr3t-value".to_owned();
        let line = format!("{}{secret} and more", "x".repeat(495));
        assert_eq!(
            cut(&line, 500, std::slice::from_ref(&secret)),
            "x".repeat(495)
        );
        // Cutting before one value can land inside another: the line ends before both.
        let other = "xxxs3c".to_owned();
        assert_eq!(cut(&line, 500, &[secret, other]), "x".repeat(492));
        let whole = format!("{}abcdefgh{}", "x".repeat(480), "y".repeat(40));
        assert_eq!(cut(&whole, 500, &["abcdefgh".into()]), &whole[..500]);
    }
}
