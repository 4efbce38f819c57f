//! Which processes live, on every Unix: the kernel says whether a pid exists (`kill(pid,
//! 0)`), and its state says whether it is a zombie (exited, not yet reaped), which counts
//! as dead. Linux reads the state from /proc, other systems from `ps`; a `ps` that cannot
//! run fails the test instead of answering "gone".

use std::process::Command;

/// Alive means present and not a zombie.
pub fn alive(pid: i32) -> bool {
    exists(pid) && !state(pid).is_some_and(|s| s == 'Z' || s == 'X')
}

/// The first letter of the process's state, `None` once it is gone.
pub fn state(pid: i32) -> Option<char> {
    if cfg!(target_os = "linux") {
        state_from_proc(pid)
    } else {
        state_from_ps(pid)
    }
}

fn exists(pid: i32) -> bool {
    // SAFETY: signal 0 only checks that the pid exists and may be signalled.
    let rc = unsafe { libc::kill(pid, 0) };
    rc == 0 || std::io::Error::last_os_error().raw_os_error() == Some(libc::EPERM)
}

/// "pid (comm) S ...": comm may hold spaces or parens, so the state follows the last ')'.
#[allow(
    dead_code,
    reason = "not every test binary that includes this module uses it"
)]
pub fn state_from_proc(pid: i32) -> Option<char> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    stat.rsplit(')').next()?.trim_start().chars().next()
}

/// POSIX `ps`, which exits 1 and prints nothing for a pid it does not know.
#[allow(
    dead_code,
    reason = "not every test binary that includes this module uses it"
)]
pub fn state_from_ps(pid: i32) -> Option<char> {
    let out = Command::new("ps")
        .args(["-o", "stat=", "-p", &pid.to_string()])
        .output()
        .expect("cannot tell which processes live: ps does not run");
    let text = String::from_utf8_lossy(&out.stdout);
    match text.trim().chars().next() {
        Some(state) => Some(state),
        None if out.status.code() == Some(1) => None,
        None => panic!("cannot tell which processes live: ps says {:?}", out.status),
    }
}

/// The live children of `parent` (from /proc on Linux, `ps -A` elsewhere).
#[allow(
    dead_code,
    reason = "not every test binary that includes this module uses it"
)]
pub fn children_of(parent: i32) -> Vec<i32> {
    let pairs: Vec<(i32, i32)> = if cfg!(target_os = "linux") {
        std::fs::read_dir("/proc")
            .expect("/proc")
            .filter_map(|entry| entry.ok()?.file_name().to_str()?.parse().ok())
            .filter_map(|pid: i32| {
                let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
                let ppid = stat
                    .rsplit(')')
                    .next()?
                    .split_whitespace()
                    .nth(1)?
                    .parse()
                    .ok()?;
                Some((pid, ppid))
            })
            .collect()
    } else {
        let out = Command::new("ps")
            .args(["-A", "-o", "pid=,ppid="])
            .output()
            .expect("cannot tell which processes live: ps does not run");
        assert!(
            out.status.success(),
            "cannot tell which processes live: ps -A failed"
        );
        String::from_utf8_lossy(&out.stdout)
            .lines()
            .filter_map(|line| {
                let mut fields = line.split_whitespace().map(str::parse);
                Some((fields.next()?.ok()?, fields.next()?.ok()?))
            })
            .collect()
    };
    pairs
        .into_iter()
        .filter(|&(pid, ppid)| ppid == parent && alive(pid))
        .map(|(pid, _)| pid)
        .collect()
}
