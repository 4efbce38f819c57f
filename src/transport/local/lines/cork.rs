//! Lines a host thread writes while it works through a batch of answers wait for the end of
//! its event loop's turn, then go out in one write per server: with many calls in flight,
//! the continuations of one batch start the next calls, and each would otherwise be a
//! write of its own (and a wake-up of the server). Only a host whose loop calls
//! [`uncork`] at the end of every turn may [`cork`]; any other thread writes at once.

use std::cell::{Cell, RefCell};
use std::sync::Arc;

use super::LineWriter;

thread_local! {
    /// Whether this thread's loop calls `uncork` at the end of each turn.
    static CAN_CORK: Cell<bool> = const { Cell::new(false) };
    static CORKED: Cell<bool> = const { Cell::new(false) };
    /// The writers holding corked lines.
    static HELD: RefCell<Vec<Arc<LineWriter>>> = const { RefCell::new(Vec::new()) };
}

/// Says whether this thread's loop calls [`uncork`] at the end of each turn; when it
/// stops doing so, what is held goes out now.
pub fn set_can_cork(can: bool) {
    CAN_CORK.with(|c| c.set(can));
    if !can {
        uncork();
    }
}

/// Until the next [`uncork`], lines this thread writes wait; nothing changes on a thread
/// whose loop does not uncork.
pub fn cork() {
    if CAN_CORK.with(Cell::get) {
        CORKED.with(|c| c.set(true));
    }
}

/// Writes what waits, one write per server; later lines go out at once.
pub fn uncork() {
    CORKED.with(|c| c.set(false));
    for writer in HELD.with(|held| std::mem::take(&mut *held.borrow_mut())) {
        writer.flush_corked();
    }
}

pub(super) fn corked() -> bool {
    CORKED.with(Cell::get)
}

/// `writer` has a corked line to write at [`uncork`].
pub(super) fn hold(writer: Arc<LineWriter>) {
    HELD.with(|held| held.borrow_mut().push(writer));
}
