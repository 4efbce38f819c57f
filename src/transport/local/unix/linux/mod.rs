//! Linux's own ways: spawning without `fork` (with the parent-death signal set), and a
//! pidfd to learn of a leader's exit.

pub mod pidfd;
pub mod spawn;
