//! The Job Object a server's tree runs in, and the host's list of live ones.

use std::io;
use std::sync::{Arc, Mutex, MutexGuard};

use windows_sys::Win32::Foundation::{CloseHandle, HANDLE};
use windows_sys::Win32::System::JobObjects::{
    AssignProcessToJobObject, CreateJobObjectW, JOB_OBJECT_LIMIT_KILL_ON_JOB_CLOSE,
    JOBOBJECT_EXTENDED_LIMIT_INFORMATION, JobObjectExtendedLimitInformation,
    SetInformationJobObject, TerminateJobObject,
};

use crate::lock::lock;
use crate::transport::local::Signal;

/// The exit code of a process ended with its job.
const KILLED: u32 = 1;

/// A Job Object whose handle nobody else has (not inheritable, never duplicated): closing
/// it ends every process still in it.
pub struct Job(HANDLE);

// SAFETY: a job handle may be used and closed from any thread.
unsafe impl Send for Job {}
// SAFETY: as above; the calls made through `&Job` are thread-safe kernel calls.
unsafe impl Sync for Job {}

impl Job {
    pub fn new() -> io::Result<Job> {
        // SAFETY: no security attributes (so not inheritable) and no name.
        let handle = unsafe { CreateJobObjectW(std::ptr::null(), std::ptr::null()) };
        if handle.is_null() {
            return Err(io::Error::last_os_error());
        }
        let job = Job(handle);
        // SAFETY: a zeroed limit structure is valid; only the flag set below is used.
        let mut limits: JOBOBJECT_EXTENDED_LIMIT_INFORMATION = unsafe { std::mem::zeroed() };
        limits.BasicLimitInformation.LimitFlags = JOB_OBJECT_LIMIT_KILL_ON_JOB_CLOSE;
        // SAFETY: the structure and its size match the information class.
        let ok = unsafe {
            SetInformationJobObject(
                job.0,
                JobObjectExtendedLimitInformation,
                (&raw const limits).cast(),
                size_of::<JOBOBJECT_EXTENDED_LIMIT_INFORMATION>() as u32,
            )
        };
        if ok == 0 {
            return Err(io::Error::last_os_error());
        }
        Ok(job)
    }

    /// Puts a (still suspended) process in the job; what it starts will be in it too.
    pub fn assign(&self, process: HANDLE) -> io::Result<()> {
        // SAFETY: both handles are open for the duration of the call.
        if unsafe { AssignProcessToJobObject(self.0, process) } == 0 {
            return Err(io::Error::last_os_error());
        }
        Ok(())
    }

    fn terminate(&self) {
        // SAFETY: the handle is open while `self` lives; a job already empty is fine.
        unsafe { TerminateJobObject(self.0, KILLED) };
    }
}

impl Drop for Job {
    fn drop(&mut self) {
        // SAFETY: the handle is ours and closed once; the kernel ends what is left in it.
        unsafe { CloseHandle(self.0) };
    }
}

static LIVE: Mutex<Vec<Arc<Job>>> = Mutex::new(Vec::new());

fn live() -> MutexGuard<'static, Vec<Arc<Job>>> {
    lock(&LIVE)
}

/// Ends every server tree still alive. For the host's exit path: synchronous. (The kernel
/// would do it as the host's handles close; this does it before anything else runs down.)
pub fn kill_all() {
    for job in live().iter() {
        job.terminate();
    }
}

/// The right to end a server's tree, held until the tree is over: releasing it closes the
/// job, which ends whatever is still in it.
pub struct Lease(Mutex<Option<Arc<Job>>>);

impl Lease {
    pub fn new(job: Job) -> Lease {
        let job = Arc::new(job);
        live().push(job.clone());
        Lease(Mutex::new(Some(job)))
    }

    fn job(&self) -> MutexGuard<'_, Option<Arc<Job>>> {
        lock(&self.0)
    }

    /// Windows has no request to exit that a console server could handle: both ask the
    /// kernel to end the tree.
    pub fn signal(&self, _signal: Signal) {
        if let Some(job) = self.job().as_ref() {
            job.terminate();
        }
    }

    /// Closes the job (ending what is still in it). Idempotent.
    pub fn release(&self) {
        if let Some(job) = self.job().take() {
            live().retain(|other| !Arc::ptr_eq(other, &job));
        }
    }
}
