//! Starting a server without `fork`: copying the host's page tables cost the host most of a
//! millisecond per spawn (more as the host grows), and the child more again when `exec`
//! threw the copy away. With 32 servers on a 2-core machine that was half the time of
//! connecting them. `posix_spawn`, which does the same inside, has no way to set the
//! parent-death signal.
//!
//! `clone(CLONE_VM | CLONE_VFORK)`: the child runs on a stack of its own in the host's
//! memory, while the thread that started it waits, until it `exec`s or exits.
//!
//! So the child may do nothing but system calls on what was prepared for it: no allocation,
//! no lock (another host thread may hold any of them), no unwinding. Everything it needs,
//! down to every path `PATH` leads to, is built before the clone. Signals stay blocked
//! from before the clone until the child has put every handler back to its default: a
//! host handler run in the child would run on the host's memory.
//!
//! Besides what `posix_spawn` does, the child asks for `SIGKILL` when the thread that
//! started it dies (`PR_SET_PDEATHSIG`): a host killed by a signal, which runs no exit hook,
//! still takes its servers down. The signal follows the death of the spawning *thread*,
//! so spawns must stay on long-lived threads (runtime workers, never `spawn_blocking`,
//! whose idle threads exit).

use std::ffi::{CString, OsStr};
use std::io;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use std::os::unix::ffi::OsStrExt;
use std::ptr;
use std::sync::OnceLock;
use std::sync::atomic::{AtomicI32, Ordering};

use super::Leader;
use crate::transport::local::Command;
use crate::transport::local::unix::pipe::Ends;

/// `TOOLNEXUS_HOST_DEATH=watchdog`: no parent-death signal, and the watchdog instead.
const ENV: &str = "TOOLNEXUS_HOST_DEATH";

/// The child's stack: its few frames of system calls need a fraction of this.
const STACK_BYTES: usize = 64 << 10;
/// Every signal, for `rt_sigprocmask`: glibc's own sets leave out the two it uses inside.
const ALL_SIGNALS: u64 = !0;
const NO_SIGNALS: u64 = 0;

/// What the child reads, prepared by the host: pointers into `CString`s the host keeps
/// alive until the child has `exec`ed.
struct Prepared {
    argv: Vec<*const libc::c_char>,
    envp: Vec<*const libc::c_char>,
    /// The paths to try in turn, as `execvp` would.
    paths: Vec<*const libc::c_char>,
    cwd: Option<*const libc::c_char>,
    /// The child's ends of its stdin, stdout and stderr, all above 2.
    stdio: [libc::c_int; 3],
    /// Set by the child when it could not `exec`: the `errno` of what failed.
    failed: AtomicI32,
    /// Whether to set the parent-death signal (not when the watchdog stands in for it).
    parent_death: bool,
}

/// Whether children ask for `SIGKILL` when their spawning thread dies.
pub fn parent_death() -> bool {
    static PARENT_DEATH: OnceLock<bool> = OnceLock::new();
    *PARENT_DEATH.get_or_init(|| std::env::var_os(ENV).is_none_or(|v| v != "watchdog"))
}

/// Starts `command` as the leader of a new process group, with three pipes. `program` is
/// looked up in the `PATH` of the command's environment when it has no `/`.
pub fn spawn(command: &Command) -> io::Result<(Leader, Ends)> {
    let argv = c_strings(
        std::iter::once(command.program)
            .chain(command.args.iter().map(String::as_str))
            .map(str::as_bytes),
    )?;
    let envp = command
        .env
        .iter()
        .map(|(key, value)| c_string(&[key.as_bytes(), b"=", value.as_bytes()].concat()))
        .collect::<io::Result<Vec<_>>>()?;
    let paths = c_strings(search_path(command).iter().map(|p| p.as_bytes()))?;
    let cwd = command
        .cwd
        .map(|dir| c_string(dir.as_os_str().as_bytes()))
        .transpose()?;
    let (stdin_child, stdin) = pipe()?;
    let (stdout, stdout_child) = pipe()?;
    let (stderr, stderr_child) = pipe()?;
    let prepared = Prepared {
        argv: pointers(&argv),
        envp: pointers(&envp),
        paths: paths.iter().map(|p| p.as_ptr()).collect(),
        cwd: cwd.as_ref().map(|dir| dir.as_ptr()),
        stdio: [
            stdin_child.as_raw_fd(),
            stdout_child.as_raw_fd(),
            stderr_child.as_raw_fd(),
        ],
        failed: AtomicI32::new(0),
        parent_death: parent_death(),
    };
    let mut stack = vec![0u8; STACK_BYTES];
    // SAFETY: the stack grows down from its (16-byte aligned) top, inside `stack`, which
    // outlives the child's use of it: with CLONE_VFORK, clone returns once the child has
    // exec'd or exited. `prepared` lives as long. Signals are blocked around the clone and
    // restored after it, on this thread.
    let pid = unsafe {
        let top = stack.as_mut_ptr().add(STACK_BYTES);
        let top = top.sub(top as usize % 16);
        let mut old: u64 = 0;
        set_signal_mask(&ALL_SIGNALS, &mut old);
        let pid = libc::clone(
            run_child,
            top.cast(),
            libc::CLONE_VM | libc::CLONE_VFORK | libc::SIGCHLD,
            ptr::from_ref(&prepared).cast_mut().cast(),
        );
        let error = io::Error::last_os_error();
        set_signal_mask(&old, ptr::null_mut());
        if pid == -1 {
            return Err(error);
        }
        pid
    };
    drop((stdin_child, stdout_child, stderr_child));
    match prepared.failed.load(Ordering::Acquire) {
        0 => Ok((
            Leader(pid as u32),
            Ends {
                stdin,
                stdout,
                stderr,
            },
        )),
        errno => {
            // It has exited already (that is what let clone return): reap it.
            // SAFETY: waitpid on our own child; a null status pointer is allowed.
            unsafe { libc::waitpid(pid, ptr::null_mut(), 0) };
            Err(io::Error::from_raw_os_error(errno))
        }
    }
}

/// The child: never returns (it `exec`s, or exits with 127 after noting why not).
extern "C" fn run_child(prepared: *mut libc::c_void) -> libc::c_int {
    // SAFETY: the host passed a `Prepared` that it keeps alive and unchanged while this
    // runs, and is suspended meanwhile; nothing here allocates, locks or unwinds.
    unsafe {
        let prepared = &*prepared.cast::<Prepared>();
        let errno = exec(prepared);
        prepared.failed.store(errno, Ordering::Release);
        libc::_exit(127)
    }
}

/// Returns only on failure, with the `errno` of what failed.
///
/// # Safety
///
/// To be called only in the child of `clone(CLONE_VM | CLONE_VFORK)` (`run_child`): it
/// resets signal dispositions, the signal mask, the process group and file descriptors of
/// the calling process, and must neither allocate, lock nor unwind, as the host's memory is
/// shared with it. Every pointer in `prepared` must be valid (NUL-terminated strings,
/// NULL-terminated arrays) for as long as it runs.
unsafe fn exec(prepared: &Prepared) -> libc::c_int {
    let errno = || {
        io::Error::last_os_error()
            .raw_os_error()
            .unwrap_or(libc::EINVAL)
    };
    // SAFETY (the block): system calls on values this function owns or that the host
    // prepared; see `run_child`.
    unsafe {
        // Every handled signal back to its default, and SIGPIPE too, which Node ignores
        // and a child would inherit ignored (libuv and Rust's std reset it as well).
        // Invalid signal numbers (the gaps, SIGKILL, SIGSTOP) just fail.
        for signal in 1..=64 {
            let mut action: libc::sigaction = std::mem::zeroed();
            if libc::sigaction(signal, ptr::null(), &mut action) == 0
                && (signal == libc::SIGPIPE
                    || (action.sa_sigaction != libc::SIG_DFL
                        && action.sa_sigaction != libc::SIG_IGN))
            {
                let default: libc::sigaction = std::mem::zeroed();
                libc::sigaction(signal, &default, ptr::null_mut());
            }
        }
        set_signal_mask(&NO_SIGNALS, ptr::null_mut());
        if libc::setpgid(0, 0) != 0
            || (prepared.parent_death && libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL) != 0)
        {
            return errno();
        }
        for (target, &fd) in prepared.stdio.iter().enumerate() {
            // dup2 leaves the copy open across exec; the originals are close-on-exec.
            if libc::dup2(fd, target as libc::c_int) == -1 {
                return errno();
            }
        }
        if let Some(dir) = prepared.cwd
            && libc::chdir(dir) != 0
        {
            return errno();
        }
        // As execvp: a path that is missing or not a directory moves on to the next one; one
        // that cannot be run for want of permission too, but is what gets reported.
        let mut failure = libc::ENOENT;
        for &path in &prepared.paths {
            libc::execve(path, prepared.argv.as_ptr(), prepared.envp.as_ptr());
            match errno() {
                libc::ENOENT | libc::ENOTDIR => {}
                libc::EACCES => failure = libc::EACCES,
                other => return other,
            }
        }
        failure
    }
}

/// Sets this thread's signal mask (64 bits: every signal there is), keeping the old one.
///
/// # Safety
///
/// `old` must be null or valid for writing 8 bytes. Blocking signals on a thread of the
/// host changes what it can receive until the mask is set back: the caller restores it.
unsafe fn set_signal_mask(mask: &u64, old: *mut u64) {
    // SAFETY: rt_sigprocmask reads `mask` and writes `old` (or nothing, when null), each
    // 8 bytes, the size given.
    unsafe {
        libc::syscall(libc::SYS_rt_sigprocmask, libc::SIG_SETMASK, mask, old, 8);
    }
}

/// Where `execvp` would look for `program`: itself when it has a `/`, else each directory
/// of the child's `PATH` (glibc's default when it has none) joined with it.
fn search_path(command: &Command) -> Vec<std::ffi::OsString> {
    let program = OsStr::new(command.program);
    if command.program.contains('/') {
        return vec![program.to_owned()];
    }
    let path = command
        .env
        .iter()
        .rev()
        .find(|(key, _)| key == "PATH")
        .map_or(OsStr::new("/bin:/usr/bin"), |(_, value)| value.as_os_str());
    path.as_bytes()
        .split(|&b| b == b':')
        .map(|dir| {
            // An empty entry is the working directory.
            let dir = if dir.is_empty() { b"." } else { dir };
            let mut full = OsStr::from_bytes(dir).to_owned();
            full.push("/");
            full.push(program);
            full
        })
        .collect()
}

fn c_string(bytes: &[u8]) -> io::Result<CString> {
    CString::new(bytes).map_err(|_| {
        io::Error::new(
            io::ErrorKind::InvalidInput,
            "the command line, environment or working directory holds a NUL byte",
        )
    })
}

fn c_strings<'a>(items: impl Iterator<Item = &'a [u8]>) -> io::Result<Vec<CString>> {
    items.map(c_string).collect()
}

/// Null-terminated, as `execve` takes its lists.
fn pointers(strings: &[CString]) -> Vec<*const libc::c_char> {
    strings
        .iter()
        .map(|s| s.as_ptr())
        .chain(std::iter::once(ptr::null()))
        .collect()
}

/// A close-on-exec pipe: (read end, write end), both above 2, so that putting one child
/// end in place as its stdin, stdout or stderr never overwrites another.
fn pipe() -> io::Result<(OwnedFd, OwnedFd)> {
    let mut fds = [0; 2];
    // SAFETY: pipe2 writes two descriptors into `fds`, which we then own.
    if unsafe { libc::pipe2(fds.as_mut_ptr(), libc::O_CLOEXEC) } != 0 {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: both were just opened and belong to nobody else.
    let (read, write) = unsafe { (OwnedFd::from_raw_fd(fds[0]), OwnedFd::from_raw_fd(fds[1])) };
    Ok((above_stdio(read)?, above_stdio(write)?))
}

fn above_stdio(fd: OwnedFd) -> io::Result<OwnedFd> {
    if fd.as_raw_fd() > 2 {
        return Ok(fd);
    }
    // SAFETY: F_DUPFD_CLOEXEC makes a new descriptor (the lowest free one from 3) for ours.
    let copy = unsafe { libc::fcntl(fd.as_raw_fd(), libc::F_DUPFD_CLOEXEC, 3) };
    if copy == -1 {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: just made, and ours alone.
    Ok(unsafe { OwnedFd::from_raw_fd(copy) })
}

#[cfg(test)]
mod tests {
    use std::ffi::OsString;
    use std::path::Path;

    use tokio::io::AsyncReadExt;

    use super::spawn;
    use crate::transport::local::Command;

    /// Runs `sh -c script` (found through `PATH`) and returns what it printed.
    async fn output(script: &str, env: &[(&str, &str)], cwd: Option<&Path>) -> String {
        let args = ["-c".to_owned(), script.to_owned()];
        let command = Command {
            program: "sh",
            args: &args,
            env: env
                .iter()
                .map(|(k, v)| (OsString::from(k), OsString::from(v)))
                .collect(),
            cwd,
        };
        let (leader, ends) = spawn(&command).expect("started");
        let mut stdout =
            tokio::net::unix::pipe::Receiver::from_owned_fd(ends.stdout).expect("a pipe");
        let mut text = String::new();
        stdout.read_to_string(&mut text).await.expect("output");
        let status = leader.reap().await.expect("reaped");
        assert!(status.success(), "{status:?}: {text}");
        text
    }

    #[tokio::test]
    async fn the_child_gets_its_environment_directory_group_and_default_signals() {
        let script = "echo \"$FOO\"; pwd; cut -d' ' -f5 /proc/$$/stat; echo $$; grep -E '^Sig(Blk|Ign)' /proc/self/status";
        let text = output(
            script,
            &[("PATH", "/usr/bin:/bin"), ("FOO", "bar")],
            Some(Path::new("/")),
        )
        .await;
        let lines: Vec<&str> = text.lines().map(str::trim).collect();
        assert_eq!(&lines[..2], ["bar", "/"], "{text}");
        assert_eq!(
            lines[2], lines[3],
            "the shell leads a process group of its own: {text}"
        );
        // The test harness ignores SIGPIPE, as Node does; the child must not inherit that.
        let ignored = lines
            .iter()
            .find_map(|l| l.strip_prefix("SigIgn:"))
            .expect("SigIgn");
        let ignored = u64::from_str_radix(ignored.trim(), 16).expect("hex");
        assert_eq!(ignored & (1 << (libc::SIGPIPE - 1)), 0, "{text}");
        assert!(lines.contains(&"SigBlk:\t0000000000000000"), "{text}");
    }

    #[tokio::test]
    async fn path_is_searched_as_execvp_does() {
        let dir = std::env::temp_dir().join(format!("toolnexus-spawn-{}", std::process::id()));
        std::fs::create_dir_all(&dir).expect("a directory");
        // A file named `sh` that cannot be run comes first: the search moves on.
        std::fs::write(dir.join("sh"), "not a program").expect("written");
        let path = format!("/no/such/dir:{}:/usr/bin:/bin", dir.display());
        assert_eq!(output("echo ran", &[("PATH", &path)], None).await, "ran\n");
        let missing = Command {
            program: "no-such-program-x",
            args: &[],
            env: vec![("PATH".into(), path.into())],
            cwd: None,
        };
        let error = spawn(&missing).err().expect("refused");
        assert_eq!(error.kind(), std::io::ErrorKind::NotFound);
        let _ = std::fs::remove_dir_all(&dir);
    }
}
