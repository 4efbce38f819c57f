//! Failures with their codes, as they cross to JS: a promise's rejection carries only
//! napi's own status, so what may fail with a code resolves either its value or a
//! `NativeFailure`, which the JS layer throws as an `Error` with that `code`.

use std::future::Future;

use napi::bindgen_prelude::*;
use napi_derive::napi;

use crate::code::{Code, Coded};
use crate::session::{Failure, Session};

#[napi(object)]
pub struct NativeFailure {
    pub code: String,
    pub message: String,
}

impl From<Coded> for NativeFailure {
    fn from(coded: Coded) -> Self {
        NativeFailure {
            code: coded.code.as_str().to_owned(),
            message: coded.message,
        }
    }
}

/// A value, or why there is none.
pub type Outcome<T> = Either<T, NativeFailure>;

/// A failure of `session`'s request as a host reads it: naming the server, with its code.
pub fn named(session: &Session, failure: Failure) -> Coded {
    match failure {
        Failure::Reason(reason) => Coded::new(
            reason.kind().code(),
            format!("MCP server \"{}\" {reason}", session.name()),
        ),
        Failure::Aborted => Coded::new(Code::Aborted, "aborted"),
    }
}

/// Resolves `work`'s value, or its failure as a `NativeFailure`.
pub fn settle<'env, T, F>(env: &'env Env, work: F) -> Result<PromiseRaw<'env, Outcome<T>>>
where
    T: ToNapiValue + Send + 'static,
    F: Future<Output = std::result::Result<T, Coded>> + Send + 'static,
{
    env.spawn_future(async move {
        Ok(match work.await {
            Ok(value) => Either::A(value),
            Err(coded) => Either::B(NativeFailure::from(coded)),
        })
    })
}
