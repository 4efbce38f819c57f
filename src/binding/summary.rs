//! What `loadMcp`'s handle tells JS of its source at once besides its tools: the status
//! map, and the failures and warnings to print.

use napi::Result;
use serde_json::{Map, Value};

use super::to_json;
use crate::inventory::Source;

/// What `summary()` returns, borrowed from the source.
#[derive(serde::Serialize)]
struct Summary<'a> {
    status: &'a Map<String, Value>,
    failures: &'a [String],
    warnings: &'a [String],
}

/// Built on a worker thread, inside the load's future, so the Node thread only copies a
/// string.
pub(super) fn summary_json(source: &Source) -> Result<String> {
    to_json(&Summary {
        status: &source.status,
        failures: &source.failures,
        warnings: &source.warnings,
    })
}
