//! A host's callback as the binding calls it (`opts.oauth`'s, a host's `StateStore`): one
//! JS function of a string that resolves JSON text, `{ value }` or `{ error }`, never
//! rejecting (see js/answer.js).

use napi::bindgen_prelude::*;
use napi::threadsafe_function::ThreadsafeFunction;
use serde_json::Value;

/// A JS function of one string that resolves a JSON answer: `{ value }` or `{ error }`.
pub type JsCall = ThreadsafeFunction<String, Promise<String>, String, Status, false, true>;

/// Calls `f` with `arg`; the answer's `value` (a string or null), or its `error`.
pub async fn call(f: &JsCall, arg: String) -> std::result::Result<Option<String>, String> {
    let gone = || "the host's callback could not be called".to_owned();
    let answer = f.call_async_catch(arg).await.map_err(|_| gone())?;
    let answer = answer.await.map_err(|_| gone())?;
    let answer: Value = serde_json::from_str(&answer).map_err(|_| gone())?;
    if let Some(error) = answer.get("error").and_then(Value::as_str) {
        return Err(error.to_owned());
    }
    Ok(answer
        .get("value")
        .and_then(Value::as_str)
        .map(str::to_owned))
}
