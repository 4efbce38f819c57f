//! Windows: each server runs in a Job Object of its own whose only handle the host holds,
//! created with `JOB_OBJECT_LIMIT_KILL_ON_JOB_CLOSE`: when the host exits for any reason,
//! a crash included, the kernel closes the handle and ends the whole tree. The child starts
//! suspended and is resumed only once it is in the job, so no grandchild escapes it. Its
//! pipes are overlapped named pipes served by tokio (libuv polls only sockets here, so the
//! host loop never reads them).

use std::ffi::{CStr, OsStr, OsString, c_void};
use std::process::ExitStatus;
use std::ptr::NonNull;

use windows_sys::Win32::System::LibraryLoader::{GetModuleHandleW, GetProcAddress};

mod job;
mod pipe;
mod program;
mod spawn;

pub use job::{Lease, kill_all};
pub use pipe::{ErrPipe, InPipe, OutPipe, Readable, Writable};
pub use spawn::{Leader, start, watch_exit};

/// What a server started with `"inheritEnv": false` gets of the host's environment: the
/// TypeScript SDK's `getDefaultEnvironment` set for Windows.
pub const SAFE_VARS: &[&str] = &[
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

/// Environment variable names are compared without regard to case.
pub fn env_name_key(name: &OsStr) -> OsString {
    name.to_string_lossy().to_uppercase().into()
}

/// No signals here: a process ends with an exit code.
pub fn signal_of(_status: &ExitStatus) -> Option<i32> {
    None
}

/// A function the host executable exports (libuv's, in `node.exe`).
pub fn host_symbol(name: &CStr) -> Option<NonNull<c_void>> {
    // SAFETY: a null name asks for the executable's own module, which stays loaded; the
    // symbol name is NUL-terminated.
    let found = unsafe { GetProcAddress(GetModuleHandleW(std::ptr::null()), name.as_ptr().cast()) };
    NonNull::new(found? as *mut c_void)
}
