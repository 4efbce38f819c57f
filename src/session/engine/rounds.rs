//! One round of a multi-round-trip request (2026-07-28): what the server asked in an
//! input-required result, put to the host, and the `inputResponses` it gets back.
//! Elicitations go to `waitFor` with the same mapping as the 2025 era's
//! `elicitation/create` requests; sampling and roots, which toolnexus never declares, are
//! refused, and the call ends.

use futures::future::join_all;
use serde_json::{Map, Value};

use crate::elicitation;
use crate::session::handler::Shared;

/// The answers as `inputResponses` JSON text, or why the request (`during`, as the
/// failure names it) cannot go on.
pub async fn fulfil(
    shared: &Shared,
    requests: &Map<String, Value>,
    during: &str,
) -> Result<String, String> {
    let mut asks = Vec::with_capacity(requests.len());
    for (key, request) in requests {
        let method = request.get("method").and_then(Value::as_str).unwrap_or("");
        let params = request.get("params").cloned().unwrap_or(Value::Null);
        if method != "elicitation/create" {
            let method = if method.is_empty() {
                "an unnamed request"
            } else {
                method
            };
            return Err(format!(
                "asked for {method} during {during}, which toolnexus does not support"
            ));
        }
        let Some(elicitor) = shared.hooks.elicitor.clone() else {
            return Err(format!(
                "asked for input during {during}, but no waitFor was given to answer it"
            ));
        };
        asks.push(async move {
            let answer = elicitor.ask(elicitation::to_request(&params)).await;
            (
                key.clone(),
                elicitation::to_result(answer.as_ref(), &params),
            )
        });
    }
    let responses: Map<String, Value> = join_all(asks).await.into_iter().collect();
    Ok(Value::Object(responses).to_string())
}
