//! Starting a server in its job: created suspended, assigned to the job, then resumed, so
//! that nothing it starts can run before the job holds it.
//!
//! The process itself is made by the standard library (through tokio): given a `.cmd` or
//! `.bat` file it runs it with `cmd.exe`, quoting each argument for `cmd.exe`'s own parsing
//! and refusing an argument it cannot quote safely (the "BatBadBut" injection).

use std::io;
use std::process::{ExitStatus, Stdio};
use std::sync::Arc;

use tokio::sync::watch;
use windows_sys::Win32::Foundation::{CloseHandle, HANDLE, INVALID_HANDLE_VALUE};
use windows_sys::Win32::System::Diagnostics::ToolHelp::{
    CreateToolhelp32Snapshot, TH32CS_SNAPTHREAD, THREADENTRY32, Thread32First, Thread32Next,
};
use windows_sys::Win32::System::Threading::{
    CREATE_NO_WINDOW, CREATE_SUSPENDED, OpenThread, ResumeThread, THREAD_SUSPEND_RESUME,
};

use super::job::{Job, Lease};
use super::pipe;
use super::program;
use crate::transport::local::{Command, Exit, Started};

/// The started server's first process, waited for by [`watch_exit`].
pub struct Leader(tokio::process::Child);

pub fn start(command: &Command) -> io::Result<Started> {
    let program = program::resolve(command)?;
    let (stdin, child_stdin) = pipe::to_child()?;
    let (stdout, child_stdout) = pipe::from_child()?;
    let (stderr, child_stderr) = pipe::from_child()?;
    let mut process = tokio::process::Command::new(program);
    process
        .args(command.args)
        .env_clear()
        .envs(command.env.iter().map(|(k, v)| (k, v)))
        .stdin(Stdio::from(child_stdin))
        .stdout(Stdio::from(child_stdout))
        .stderr(Stdio::from(child_stderr))
        // No console window pops up for a server started by a windowed host.
        .creation_flags(CREATE_SUSPENDED | CREATE_NO_WINDOW);
    if let Some(dir) = command.cwd {
        process.current_dir(dir);
    }
    let job = Job::new()?;
    let mut child = process.spawn()?;
    let placed = match child.raw_handle() {
        Some(handle) => job.assign(handle as HANDLE).and_then(|()| resume(&child)),
        None => Err(io::Error::other("exited at once")),
    };
    if let Err(e) = placed {
        // Still suspended, or in the job: either way it ends here.
        let _ = child.start_kill();
        return Err(e);
    }
    Ok(Started {
        lease: Lease::new(job),
        leader: Leader(child),
        stdin: pipe::InPipe(stdin),
        stdout: pipe::OutPipe(Arc::new(stdout)),
        stderr,
    })
}

/// Publishes the leader's exit on `exit`. A process handle keeps its id from being reused,
/// so there is nothing to hold back here (unlike a Unix zombie): the lease only closes the
/// job.
pub async fn watch_exit(
    Leader(mut child): Leader,
    _lease: Arc<Lease>,
    exit: watch::Sender<Option<Exit>>,
) {
    let status: Option<ExitStatus> = child.wait().await.ok();
    let _ = exit.send(Some(Exit(status)));
}

/// Resumes the threads of a process created suspended (its one thread, in practice).
fn resume(child: &tokio::process::Child) -> io::Result<()> {
    let pid = child
        .id()
        .ok_or_else(|| io::Error::other("exited at once"))?;
    // SAFETY: a snapshot of the system's threads; closed below.
    let snapshot = unsafe { CreateToolhelp32Snapshot(TH32CS_SNAPTHREAD, 0) };
    if snapshot == INVALID_HANDLE_VALUE {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: a zeroed THREADENTRY32 with its size set is what Thread32First expects.
    let mut entry: THREADENTRY32 = unsafe { std::mem::zeroed() };
    entry.dwSize = size_of::<THREADENTRY32>() as u32;
    let mut resumed = 0;
    // SAFETY: `entry` is live and sized; the snapshot is open.
    let mut more = unsafe { Thread32First(snapshot, &mut entry) } != 0;
    while more {
        if entry.th32OwnerProcessID == pid {
            // SAFETY: a thread handle opened for this call only, closed at once.
            unsafe {
                let thread = OpenThread(THREAD_SUSPEND_RESUME, 0, entry.th32ThreadID);
                if !thread.is_null() {
                    if ResumeThread(thread) != u32::MAX {
                        resumed += 1;
                    }
                    CloseHandle(thread);
                }
            }
        }
        // SAFETY: as for Thread32First.
        more = unsafe { Thread32Next(snapshot, &mut entry) } != 0;
    }
    // SAFETY: the snapshot handle is ours, closed once.
    unsafe { CloseHandle(snapshot) };
    if resumed == 0 {
        return Err(io::Error::other("its first thread could not be resumed"));
    }
    Ok(())
}
