//! Listing a server's tools: the paging loop over `tools/list` pages, each a request of
//! the engine (with its clock, rounds and abort, like a call).

use std::collections::HashSet;
use std::time::Duration;

use tokio_util::sync::CancellationToken;

use super::engine::Engine;
use super::engine::request::Kind;
use super::error::{Error, Failure};
use crate::tool::listed::{CacheHints, ListedTool, Page, PageParts};

/// A `tools/list` that pages more often than this is treated as broken.
const MAX_PAGES: usize = 1000;

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
    let mut tools = Vec::new();
    let mut hints = CacheHints::default();
    let mut seen = HashSet::new();
    let mut cursor: Option<String> = None;
    for _ in 0..MAX_PAGES {
        let (page, next_cursor, page_hints) =
            match list_page(engine, cursor.as_deref(), timeout, cancel).await {
                // A server that offers no tools may refuse to list them: it has none.
                Err(Failure::Reason(_)) if cursor.is_none() && refusal_means_none() => {
                    return Ok((Vec::new(), CacheHints::default()));
                }
                page => page?,
            };
        tools.extend(page);
        if cursor.is_none() {
            hints = page_hints;
        }
        match next_cursor {
            // An empty cursor ends the listing too, as it does for the TS SDK.
            None => return Ok((tools, hints)),
            Some(next) if next.is_empty() => return Ok((tools, hints)),
            Some(next) if !seen.insert(next.clone()) => {
                return Err(
                    Error::answered(format!("tools/list repeated the cursor \"{next}\"")).into(),
                );
            }
            Some(next) => cursor = Some(next),
        }
    }
    Err(Error::answered(format!("tools/list returned more than {MAX_PAGES} pages")).into())
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
