//! Linux's own ways: spawning without `fork`, with the parent-death signal set (which keeps
//! the host-death promise without a watchdog), and a pidfd to learn of a leader's exit.

mod leader;
mod pidfd;
mod spawn;

pub use leader::Leader;
pub use pidfd::exit;
pub use spawn::spawn;

/// Only when the parent-death signal is turned off, which is how the watchdog is tested.
pub fn needs_watchdog() -> bool {
    !spawn::parent_death()
}
