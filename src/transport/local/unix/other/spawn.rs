//! Starting a server with tokio's `Command`, which forks (or uses `posix_spawn`, where it
//! can), as the leader of a process group of its own.

use std::io;
use std::process::{ExitStatus, Stdio};

use crate::transport::local::Command;
use crate::transport::local::unix::pipe::Ends;

/// The leader, as tokio's child: [`Leader::reap`] waits for it.
pub struct Leader {
    pid: u32,
    child: tokio::process::Child,
}

impl Leader {
    pub fn pid(&self) -> u32 {
        self.pid
    }

    /// Reaps the leader once it has exited; `None` when something else reaped it first.
    pub async fn reap(mut self) -> Option<ExitStatus> {
        self.child.wait().await.ok()
    }
}

/// Starts `command` as the leader of a new process group, with three pipes.
pub fn spawn(command: &Command) -> io::Result<(Leader, Ends)> {
    let mut child = tokio::process::Command::new(command.program);
    child
        .args(command.args)
        .env_clear()
        .envs(command.env.iter().map(|(k, v)| (k, v)))
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .process_group(0);
    if let Some(dir) = command.cwd {
        child.current_dir(dir);
    }
    let mut child = child.spawn()?;
    let pid = child
        .id()
        .ok_or_else(|| io::Error::other("exited at once"))?;
    let (Some(stdin), Some(stdout), Some(stderr)) =
        (child.stdin.take(), child.stdout.take(), child.stderr.take())
    else {
        unreachable!("all three pipes were requested");
    };
    let ends = Ends {
        stdin: stdin.into_owned_fd()?,
        stdout: stdout.into_owned_fd()?,
        stderr: stderr.into_owned_fd()?,
    };
    Ok((Leader { pid, child }, ends))
}
