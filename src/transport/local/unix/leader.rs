//! A started server: the leader of its process group, and the host's ends of its pipes.
//! Only reaping ends our claim on the pid, so it is the one thing a `Leader` does.

use std::os::fd::OwnedFd;
use std::process::ExitStatus;

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

impl Leader {
    /// Reaps the leader once it has exited; `None` when something else reaped it first.
    #[cfg(target_os = "linux")]
    pub async fn reap(self) -> Option<ExitStatus> {
        use std::io;
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
