//! The sentences of the calls the JS layer ends itself (aborted before they started, or
//! given up for progress it could not take), worded where every other failure is.

use napi_derive::napi;

use crate::session::wording;

#[napi(catch_unwind, js_name = "abortedCall")]
pub fn aborted_call(server: String, tool: String) -> String {
    wording::aborted(&server, &tool).output
}

#[napi(catch_unwind, js_name = "progressGivenUp")]
pub fn progress_given_up(server: String, tool: String) -> String {
    wording::progress_given_up(&server, &tool)
}
