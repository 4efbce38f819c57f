//! Node's event loop as the [`HostLoop`] of its thread: a local server's stdout is watched
//! with a libuv poll handle, so a call's answer wakes the Node thread alone, which reads,
//! decodes and queues it itself. The handles are unref'd (they never keep Node alive) and
//! closed when the reader ends or the environment goes away. A check handle ends every turn
//! of the loop by writing the lines corked during it (see `lines::cork`). libuv's functions
//! are looked up in the host process; where they are missing, the tokio reader does the
//! work and nothing is corked. Where libuv cannot poll a pipe (Windows: it polls sockets
//! only), the tokio reader reads and the check handle still uncorks.

use std::cell::RefCell;
use std::ffi::{c_int, c_void};
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::ptr;
use std::rc::Rc;
use std::sync::{Arc, OnceLock};

use napi::Env;

use crate::transport::local::host_symbol;
use crate::transport::local::lines::{
    Flow, HostLoop, LineReader, has_host_loop, set_can_cork, set_host_loop, uncork,
};

type PollCb = unsafe extern "C" fn(*mut c_void, c_int, c_int);
type CloseCb = unsafe extern "C" fn(*mut c_void);
type PollInit = unsafe extern "C" fn(*mut c_void, *mut c_void, c_int) -> c_int;
type PollStart = unsafe extern "C" fn(*mut c_void, c_int, PollCb) -> c_int;
type PollStop = unsafe extern "C" fn(*mut c_void) -> c_int;
type Close = unsafe extern "C" fn(*mut c_void, CloseCb);
type Unref = unsafe extern "C" fn(*mut c_void);
type CheckCb = unsafe extern "C" fn(*mut c_void);
type CheckInit = unsafe extern "C" fn(*mut c_void, *mut c_void) -> c_int;
type CheckStart = unsafe extern "C" fn(*mut c_void, CheckCb) -> c_int;
type CheckStop = unsafe extern "C" fn(*mut c_void) -> c_int;

/// The libuv functions used, as the host process exports them.
struct Uv {
    poll_init: PollInit,
    poll_start: PollStart,
    poll_stop: PollStop,
    close: Close,
    unref: Unref,
    check_init: CheckInit,
    check_start: CheckStart,
    check_stop: CheckStop,
}

fn uv() -> Option<&'static Uv> {
    static UV: OnceLock<Option<Uv>> = OnceLock::new();
    UV.get_or_init(|| {
        let find = |name| host_symbol(name).map(|found| found.as_ptr());
        // SAFETY: each symbol is the libuv function of that name, whose C signature the
        // field's type spells out (uv.h, libuv 1.x).
        unsafe {
            Some(Uv {
                poll_init: std::mem::transmute::<*mut c_void, PollInit>(find(c"uv_poll_init")?),
                poll_start: std::mem::transmute::<*mut c_void, PollStart>(find(c"uv_poll_start")?),
                poll_stop: std::mem::transmute::<*mut c_void, PollStop>(find(c"uv_poll_stop")?),
                close: std::mem::transmute::<*mut c_void, Close>(find(c"uv_close")?),
                unref: std::mem::transmute::<*mut c_void, Unref>(find(c"uv_unref")?),
                check_init: std::mem::transmute::<*mut c_void, CheckInit>(find(c"uv_check_init")?),
                check_start: std::mem::transmute::<*mut c_void, CheckStart>(find(
                    c"uv_check_start",
                )?),
                check_stop: std::mem::transmute::<*mut c_void, CheckStop>(find(c"uv_check_stop")?),
            })
        }
    })
    .as_ref()
}

const UV_READABLE: c_int = 1;

/// One watched pipe. `handle` comes first, so the handle's address is the watch's; a
/// `uv_poll_t` is 160 bytes on 64-bit Linux, and its first field is its `data` pointer.
#[repr(C)]
struct Watch {
    handle: [u64; 32],
    reader: Arc<LineReader>,
}

struct NodeLoop {
    uv_loop: *mut c_void,
    uv: &'static Uv,
}

/// A `uv_check_t` (120 bytes on 64-bit Linux), with room to spare.
type CheckHandle = [u64; 32];

thread_local! {
    /// The watches open on this thread.
    static WATCHES: RefCell<Vec<*mut Watch>> = const { RefCell::new(Vec::new()) };
    /// The check handle that uncorks at the end of every turn, while it runs.
    static CHECK: RefCell<Option<*mut CheckHandle>> = const { RefCell::new(None) };
}

/// Makes Node's loop this thread's host loop, once; without libuv nothing changes.
pub fn install(env: &Env) {
    if has_host_loop() {
        return;
    }
    let Some(uv) = uv() else {
        return;
    };
    let mut uv_loop = ptr::null_mut();
    // SAFETY: on the JS thread, with its env; the loop lives as long as the env.
    let status = unsafe { napi::sys::napi_get_uv_event_loop(env.raw(), &mut uv_loop) };
    if status != napi::sys::Status::napi_ok || uv_loop.is_null() {
        return;
    }
    // SAFETY: the hook runs on this thread as the env is torn down.
    let status = unsafe {
        napi::sys::napi_add_env_cleanup_hook(env.raw(), Some(on_teardown), ptr::null_mut())
    };
    if status != napi::sys::Status::napi_ok {
        return;
    }
    start_uncorking(uv, uv_loop.cast());
    let host = NodeLoop {
        uv_loop: uv_loop.cast(),
        uv,
    };
    set_host_loop(Some(Rc::new(host)));
}

/// Starts the unref'd check handle that ends each turn of the loop with `uncork`; only
/// then may this thread cork.
fn start_uncorking(uv: &Uv, uv_loop: *mut c_void) {
    let check = Box::into_raw(Box::new([0u64; 32]));
    let handle = check.cast::<c_void>();
    // SAFETY: zeroed memory big enough for a uv_check_t that stays put until its close
    // callback frees it; this is the loop's own thread.
    let started = unsafe {
        if (uv.check_init)(uv_loop, handle) != 0 {
            drop(Box::from_raw(check));
            return;
        }
        let started = (uv.check_start)(handle, on_check) == 0;
        (uv.unref)(handle);
        started
    };
    if !started {
        // SAFETY: an initialised handle of this loop, closed once.
        unsafe { (uv.close)(handle, on_check_closed) };
        return;
    }
    CHECK.with(|c| *c.borrow_mut() = Some(check));
    set_can_cork(true);
}

unsafe extern "C" fn on_check(_: *mut c_void) {
    // A panic must not cross into libuv.
    let _ = catch_unwind(uncork);
}

unsafe extern "C" fn on_check_closed(handle: *mut c_void) {
    // SAFETY: the handle was leaked as a CheckHandle and is freed once, here.
    drop(unsafe { Box::from_raw(handle.cast::<CheckHandle>()) });
}

/// Stops uncorking (what is corked goes out now) and closes the check handle.
fn stop_uncorking() {
    set_can_cork(false);
    let (Some(uv), Some(check)) = (uv(), CHECK.with(|c| c.borrow_mut().take())) else {
        return;
    };
    let handle = check.cast::<c_void>();
    // SAFETY: the live check handle started on this thread's loop, closed once.
    unsafe {
        (uv.check_stop)(handle);
        (uv.close)(handle, on_check_closed);
    }
}

impl HostLoop for NodeLoop {
    fn watch(&self, reader: Arc<LineReader>) -> bool {
        // A watch left from before rmcp's task took the pipe back goes: libuv takes one
        // watch per descriptor.
        close_where(false, |watch| {
            watch.reader.is_closed() || Arc::ptr_eq(&watch.reader, &reader)
        });
        let Some(fd) = reader.host_pollable() else {
            return false;
        };
        let watch = Box::into_raw(Box::new(Watch {
            handle: [0; 32],
            reader,
        }));
        let handle = watch.cast::<c_void>();
        // SAFETY: `handle` is zeroed memory big enough for a uv_poll_t that stays put until
        // its close callback frees it; this is the loop's own thread.
        let started = unsafe {
            if (self.uv.poll_init)(self.uv_loop, handle, fd) != 0 {
                drop(Box::from_raw(watch));
                return false;
            }
            *handle.cast::<*mut Watch>() = watch;
            let started = (self.uv.poll_start)(handle, UV_READABLE, on_readable) == 0;
            (self.uv.unref)(handle);
            started
        };
        if !started {
            // SAFETY: an initialised handle of this loop, closed once.
            unsafe { (self.uv.close)(handle, on_closed) };
            return false;
        }
        WATCHES.with(|w| w.borrow_mut().push(watch));
        true
    }
}

unsafe extern "C" fn on_readable(handle: *mut c_void, status: c_int, _events: c_int) {
    // SAFETY: `data` was set to the watch, which lives until the handle is closed.
    let watch = unsafe { &*(*handle.cast::<*mut Watch>()) };
    let flow = if status < 0 {
        Flow::Ended
    } else {
        // A panic must not cross into libuv: it ends the watch, and rmcp's task reads on.
        catch_unwind(AssertUnwindSafe(|| watch.reader.read_on_host())).unwrap_or(Flow::Ended)
    };
    if let Flow::Backlogged | Flow::Busy | Flow::Ended | Flow::Released = flow {
        let reader = watch.reader.clone();
        close_where(true, |w| Arc::ptr_eq(&w.reader, &reader));
    }
}

unsafe extern "C" fn on_closed(handle: *mut c_void) {
    // SAFETY: the watch was leaked for this handle and is freed once, here.
    drop(unsafe { Box::from_raw(*handle.cast::<*mut Watch>()) });
}

/// Stops and closes the watches `which` picks; with `release`, their readers go back to
/// rmcp's task.
fn close_where(release: bool, which: impl Fn(&Watch) -> bool) {
    let Some(uv) = uv() else {
        return;
    };
    let closing = WATCHES.with(|w| {
        let mut watches = w.borrow_mut();
        // SAFETY: every listed watch is alive: it leaves the list before it is closed.
        let (closing, open) = watches
            .drain(..)
            .partition(|&watch| which(unsafe { &*watch }));
        *watches = open;
        closing
    });
    for watch in closing as Vec<*mut Watch> {
        // SAFETY: a live watch whose handle was started on this thread's loop.
        unsafe {
            if release && (*watch).reader.host_reads() {
                (*watch).reader.release();
            }
            let handle = watch.cast::<c_void>();
            (uv.poll_stop)(handle);
            (uv.close)(handle, on_closed);
        }
    }
}

unsafe extern "C" fn on_teardown(_: *mut c_void) {
    let _ = catch_unwind(|| {
        stop_uncorking();
        close_where(true, |_| true);
        set_host_loop(None);
    });
}
