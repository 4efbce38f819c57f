//! Listing a server's tools: the paging loop over `tools/list` pages, each a request of
//! the engine (with its clock, rounds and abort, like a call).

use std::time::Duration;

use tokio_util::sync::CancellationToken;

use super::engine::Engine;
use super::engine::request::Kind;
use super::error::Failure;
use super::paging::every_page;
use crate::tool::listed::{CacheHints, ListedTool, Page, PageParts};

/// A page of tools, the cursor to the next, and how long it may be taken as fresh.
static TOOLS_LIST: Kind<PageParts> = Kind {
    method: "tools/list",
    decode: |json| {
        serde_json::from_str::<Page>(json)
            .ok()
            .map(Page::into_parts)
    },
    given_up: "the listing",
};

/// Every tool, following `nextCursor`, and the first page's caching hints; each page is timed
/// by `timeout`. A refused first page is no tools when `refusal_means_none` says so.
pub async fn list_all(
    engine: &Engine,
    timeout: Duration,
    cancel: &CancellationToken,
    refusal_means_none: impl Fn() -> bool,
) -> Result<(Vec<ListedTool>, CacheHints), Failure> {
    every_page(TOOLS_LIST.method, |cursor| {
        let first = cursor.is_none();
        let refusal_means_none = &refusal_means_none;
        async move {
            match list_page(engine, cursor.as_deref(), timeout, cancel).await {
                // A server that offers no tools may refuse to list them: it has none.
                Err(Failure::Reason(_)) if first && refusal_means_none() => {
                    Ok((Vec::new(), None, CacheHints::default()))
                }
                page => page,
            }
        }
    })
    .await
}

/// One page, after as many rounds of answering what the server asks as it takes.
async fn list_page(
    engine: &Engine,
    cursor: Option<&str>,
    timeout: Duration,
    cancel: &CancellationToken,
) -> Result<PageParts, Failure> {
    let members = match cursor {
        Some(cursor) => format!("\"cursor\":{}", serde_json::Value::from(cursor)),
        None => String::new(),
    };
    engine.request(&TOOLS_LIST, members, timeout, cancel).await
}
