//! Starting a server's process as the leader of a process group of its own, with its stdin,
//! stdout and stderr as pipes whose host ends are non-blocking and owned by nobody else.
//!
//! On Linux the child is started without `fork`: copying the host's page tables cost the
//! host most of a millisecond per spawn (more as the host grows), and the child more again
//! when `exec` threw the copy away. With 32 servers on a 2-core machine that was half the
//! time of connecting them. The child shares the host's memory until it `exec`s
//! (`CLONE_VM | CLONE_VFORK`, what `posix_spawn` does inside), which `posix_spawn` itself
//! cannot be used for: it has no way to set the parent-death signal (see `linux::spawn`).
//!
//! `program` is looked up in the `PATH` of the command's environment when it has no `/`.

use std::io;
use std::os::fd::OwnedFd;
use std::process::ExitStatus;

use crate::transport::local::Command;

/// The started leader and the host's ends of its pipes.
pub struct Spawned {
    pub pid: u32,
    pub leader: Leader,
    pub stdin: OwnedFd,
    pub stdout: OwnedFd,
    pub stderr: OwnedFd,
}

/// Reaps the leader. Only [`Leader::reap`] does, so that until then its pid (and group id)
/// stays ours.
pub struct Leader(pub(super) Inner);

#[cfg(target_os = "linux")]
type Inner = u32;
#[cfg(not(target_os = "linux"))]
type Inner = tokio::process::Child;

pub fn start(command: &Command) -> io::Result<Spawned> {
    #[cfg(target_os = "linux")]
    let started = super::linux::spawn::start(command)?;
    #[cfg(not(target_os = "linux"))]
    let started = with_tokio(command)?;
    for fd in [&started.stdin, &started.stdout, &started.stderr] {
        set_nonblocking(fd)?;
    }
    Ok(started)
}

impl Leader {
    /// Reaps the leader once it has exited; `None` when something else reaped it first.
    #[cfg(target_os = "linux")]
    pub async fn reap(self) -> Option<ExitStatus> {
        use std::os::unix::process::ExitStatusExt;
        let pid = libc::pid_t::try_from(self.0).ok()?;
        loop {
            let mut status = 0;
            // SAFETY: waitpid on our own child, with a live out-parameter.
            match unsafe { libc::waitpid(pid, &mut status, libc::WNOHANG) } {
                0 => {}
                -1 if io::Error::last_os_error().kind() == io::ErrorKind::Interrupted => continue,
                -1 => return None,
                _ => return Some(ExitStatus::from_raw(status)),
            }
            // Called once the exit is known, so this is rare: a leader killed just now.
            tokio::time::sleep(std::time::Duration::from_millis(10)).await;
        }
    }

    #[cfg(not(target_os = "linux"))]
    pub async fn reap(mut self) -> Option<ExitStatus> {
        self.0.wait().await.ok()
    }
}

/// Elsewhere: tokio's `Command`, which forks (or uses `posix_spawn`, where it can).
#[cfg(not(target_os = "linux"))]
fn with_tokio(command: &Command) -> io::Result<Spawned> {
    use std::process::Stdio;
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
    Ok(Spawned {
        pid,
        stdin: stdin.into_owned_fd()?,
        stdout: stdout.into_owned_fd()?,
        stderr: stderr.into_owned_fd()?,
        leader: Leader(child),
    })
}

fn set_nonblocking(fd: &OwnedFd) -> io::Result<()> {
    use std::os::fd::AsRawFd;
    let fd = fd.as_raw_fd();
    // SAFETY: fcntl on a descriptor we own, with flags it returned.
    let ok = unsafe {
        let flags = libc::fcntl(fd, libc::F_GETFL);
        flags >= 0 && libc::fcntl(fd, libc::F_SETFL, flags | libc::O_NONBLOCK) == 0
    };
    if ok {
        Ok(())
    } else {
        Err(io::Error::last_os_error())
    }
}
