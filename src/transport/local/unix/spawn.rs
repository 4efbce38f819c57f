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

use super::leader::Spawned;
use crate::transport::local::Command;

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
        leader: super::leader::Leader(child),
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
