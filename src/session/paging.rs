//! Following `nextCursor` through a paginated listing: the one loop of `tools/list` and of
//! the listings of what a server offers besides tools.

use std::collections::HashSet;
use std::future::Future;

use super::error::{Error, Failure};

/// A listing that pages more often than this is treated as broken.
const MAX_PAGES: usize = 1000;

/// A page: its entries, the cursor to the next, and what it says of keeping the listing.
pub type Paged<T, H> = (Vec<T>, Option<String>, H);

/// Every entry of `method`'s listing, `page(cursor)` asking for each page (`None`: the
/// first), with the first page's hints. An empty cursor ends the listing, as it does for
/// the TS SDK; a repeated one, or more than `MAX_PAGES` pages, fails it.
pub async fn every_page<T, H: Copy, F, Fut>(
    method: &str,
    mut page: F,
) -> Result<(Vec<T>, H), Failure>
where
    F: FnMut(Option<String>) -> Fut,
    Fut: Future<Output = Result<Paged<T, H>, Failure>>,
{
    let mut entries = Vec::new();
    let mut first = None;
    let mut seen = HashSet::new();
    let mut cursor = None;
    for _ in 0..MAX_PAGES {
        let (page, next, hints) = page(cursor.take()).await?;
        entries.extend(page);
        let hints = *first.get_or_insert(hints);
        match next {
            None => return Ok((entries, hints)),
            Some(next) if next.is_empty() => return Ok((entries, hints)),
            Some(next) if !seen.insert(next.clone()) => {
                let repeated = format!("{method} repeated the cursor \"{next}\"");
                return Err(Error::answered(repeated).into());
            }
            Some(next) => cursor = Some(next),
        }
    }
    Err(Error::answered(format!("{method} returned more than {MAX_PAGES} pages")).into())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A listing whose page `n` holds `n` and names `next(n)` as the next cursor.
    async fn listing(next: fn(u32) -> Option<String>) -> Result<(Vec<u32>, u32), String> {
        let paged = every_page("x/list", |cursor| async move {
            let n = cursor.map_or(0, |c| c.trim_start_matches('c').parse().unwrap_or(99));
            Ok((vec![n], next(n), n + 100))
        });
        paged.await.map_err(|failure| match failure {
            Failure::Reason(error) => error.to_string(),
            Failure::Aborted => "aborted".into(),
        })
    }

    #[tokio::test]
    async fn pages_follow_their_cursors_and_keep_the_first_pages_hints() {
        let three = listing(|n| (n < 2).then(|| format!("c{}", n + 1))).await;
        assert_eq!(three, Ok((vec![0, 1, 2], 100)));
        let empty_ends = listing(|n| Some(if n < 1 { "c1".into() } else { String::new() })).await;
        assert_eq!(empty_ends, Ok((vec![0, 1], 100)));
    }

    #[tokio::test]
    async fn a_repeated_cursor_or_an_endless_listing_fails_it() {
        let repeated = listing(|_| Some("c1".into())).await;
        assert!(repeated.is_err_and(|e| e.contains("x/list repeated the cursor \"c1\"")));
        let endless = listing(|n| Some(format!("c{}", n + 1))).await;
        assert!(endless.is_err_and(|e| e.contains("x/list returned more than 1000 pages")));
    }
}
