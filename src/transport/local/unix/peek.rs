//! A child's exit seen without reaping it: the one question the reaper and each OS's exit
//! watch (pidfd, kqueue) all ask, so it sits below all three.

use std::process::ExitStatus;

use crate::transport::local::Exit;

/// The leader's exit, if it has exited, without reaping it.
pub(super) fn peek(pid: u32) -> Option<Exit> {
    use std::os::unix::process::ExitStatusExt;
    let id = libc::id_t::try_from(pid).ok()?;
    loop {
        // SAFETY: a zeroed siginfo_t is a valid out-parameter for waitid.
        let mut info: libc::siginfo_t = unsafe { std::mem::zeroed() };
        let flags = libc::WEXITED | libc::WNOHANG | libc::WNOWAIT;
        // SAFETY: `info` is a live, writable siginfo_t.
        let rc = unsafe { libc::waitid(libc::P_PID, id, &mut info, flags) };
        if rc == -1 {
            if std::io::Error::last_os_error().kind() == std::io::ErrorKind::Interrupted {
                continue;
            }
            // ECHILD: not our child any more.
            return Some(Exit(None));
        }
        // SAFETY: waitid filled `info` for a child-state change (or left si_pid 0).
        let (from, code, status) = unsafe { (info.si_pid(), info.si_code, info.si_status()) };
        if from == 0 {
            return None;
        }
        // The wait status `waitpid` would have given, from its parts.
        let raw = match code {
            libc::CLD_EXITED => (status & 0xff) << 8,
            libc::CLD_DUMPED => status | 0x80,
            _ => status,
        };
        return Some(Exit(Some(ExitStatus::from_raw(raw))));
    }
}
