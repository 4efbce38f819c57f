//! Who waits for a request of the engine, and the requests a task awaits.
//!
//! A `tools/call` has a sink for its caller (see `call`); every other request (a
//! `tools/list` page, and what the session adds: a resource read, a prompt, a task poll)
//! is a [`Kind`], awaited through [`super::Engine::request`]: a method name and a
//! decoder of its result. The engine gives each the same clock, rounds, resend, abort
//! and close.

use serde_json::value::RawValue;
use tokio::sync::oneshot;

use crate::lock::lock;
use crate::session::error::Failure;
use crate::tool;
use crate::tool::result::InputRequired;

/// One `notifications/progress` for a request.
#[derive(Debug, Clone, PartialEq)]
pub struct Progress {
    pub progress: f64,
    pub total: Option<f64>,
    pub message: Option<String>,
}

/// What a result was to the caller that read it.
pub enum Decoded {
    /// The caller has its outcome.
    Done,
    /// The server asks for input first (2026-07-28): another round follows.
    InputRequired(InputRequired),
    /// Not an answer to this request.
    Unexpected,
}

/// The one who waits for a request: it reads the result, hears progress, or learns why
/// there will be none. Called at most once with an outcome (`decode` giving `Done`, or
/// `fail`), on whichever thread learns of it, never under the engine's lock.
pub trait Caller: Send + Sync {
    fn decode(&self, result: &RawValue) -> Decoded;
    fn progress(&self, _progress: Progress) {}
    fn fail(&self, failure: Failure);
    /// What the failure after too many rounds says was given up ("the call").
    fn given_up(&self) -> &'static str;
}

/// A kind of request that a task awaits.
pub struct Kind<T> {
    pub method: &'static str,
    /// The result, or `None` when the result is not one (it is then read as what the
    /// server asks first, or as unexpected).
    pub decode: fn(&str) -> Option<T>,
    /// What the failure after too many rounds says was given up ("the listing").
    pub given_up: &'static str,
}

/// The caller of an awaited request: where its outcome goes.
pub struct Waiter<T: 'static> {
    kind: &'static Kind<T>,
    answer: std::sync::Mutex<Option<oneshot::Sender<Result<T, Failure>>>>,
}

impl<T: Send + 'static> Waiter<T> {
    pub fn new(kind: &'static Kind<T>) -> (Waiter<T>, oneshot::Receiver<Result<T, Failure>>) {
        let (tx, rx) = oneshot::channel();
        let waiter = Waiter {
            kind,
            answer: std::sync::Mutex::new(Some(tx)),
        };
        (waiter, rx)
    }

    fn answer(&self, answer: Result<T, Failure>) {
        if let Some(tx) = lock(&self.answer).take() {
            let _ = tx.send(answer);
        }
    }
}

impl<T: Send + 'static> Caller for Waiter<T> {
    fn decode(&self, result: &RawValue) -> Decoded {
        if let Some(value) = (self.kind.decode)(result.get()) {
            self.answer(Ok(value));
            return Decoded::Done;
        }
        match tool::result::decode_input_required(result.get()) {
            Some(asked) => Decoded::InputRequired(asked),
            None => Decoded::Unexpected,
        }
    }

    fn fail(&self, failure: Failure) {
        self.answer(Err(failure));
    }

    fn given_up(&self) -> &'static str {
        self.kind.given_up
    }
}
