//! The leader as a bare pid: the clone that started it left no handle to wait with.

use std::io;
use std::os::unix::process::ExitStatusExt;
use std::process::ExitStatus;

/// The leader, reaped with `waitpid` by [`Leader::reap`] alone.
pub struct Leader(pub(super) u32);

impl Leader {
    pub fn pid(&self) -> u32 {
        self.0
    }

    /// Reaps the leader once it has exited; `None` when something else reaped it first.
    pub async fn reap(self) -> Option<ExitStatus> {
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
}
