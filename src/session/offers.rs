//! What a server offers besides tools: resources, resource templates, prompts and
//! completions. Each is a request on the engine's one request path (its table, its
//! wording), bounded by the server's timeout; answers stay JSON text, as the server sent
//! them, for the host to parse.

use std::collections::HashSet;

use serde::Deserialize;
use serde_json::Value;
use serde_json::value::RawValue;
use tokio_util::sync::CancellationToken;

use super::engine::Reply;
use super::wording::{answered_with_error, unexpected_response};
use super::{Failure, MAX_PAGES, Session};
use crate::listed_tool::take_member;

/// A paginated listing of what a server offers.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Listing {
    Resources,
    ResourceTemplates,
    Prompts,
}

impl Listing {
    fn method(self) -> &'static str {
        match self {
            Listing::Resources => "resources/list",
            Listing::ResourceTemplates => "resources/templates/list",
            Listing::Prompts => "prompts/list",
        }
    }
}

/// One page of any of the listings: the member its kind names, and the next cursor.
#[derive(Deserialize)]
struct Page {
    #[serde(default)]
    resources: Option<Vec<Box<RawValue>>>,
    #[serde(rename = "resourceTemplates", default)]
    resource_templates: Option<Vec<Box<RawValue>>>,
    #[serde(default)]
    prompts: Option<Vec<Box<RawValue>>>,
    #[serde(rename = "nextCursor", default)]
    next_cursor: Option<String>,
}

impl Page {
    fn entries(self, listing: Listing) -> Option<Vec<Box<RawValue>>> {
        match listing {
            Listing::Resources => self.resources,
            Listing::ResourceTemplates => self.resource_templates,
            Listing::Prompts => self.prompts,
        }
    }
}

/// An answer as the JSON text of its result object, as sent but for the 2026-07-28
/// `resultType`, which is the protocol's business: a result is the same in both eras.
fn result_object(method: &str, reply: Reply<'_>) -> Result<Box<RawValue>, String> {
    let result = match reply {
        Reply::Result(result) => result,
        Reply::Error(message) => return Err(answered_with_error(method, &message)),
        Reply::Broken(reason) | Reply::Interrupted(reason) => return Err(reason(method)),
    };
    // Members kept as text: contents may be megabytes.
    let (kind, rest) =
        take_member(result.get(), "resultType").ok_or_else(|| unexpected_response(method))?;
    match kind {
        None => Ok(result.to_owned()),
        Some(kind) if kind.get() == r#""complete""# => {
            RawValue::from_string(rest).map_err(|_| unexpected_response(method))
        }
        // Input required, or a kind this client does not know: not an answer it can use.
        Some(_) => Err(unexpected_response(method)),
    }
}

/// A JSON member `"key":value` for a request's params.
pub fn member(key: &str, value: &Value) -> String {
    format!("{}:{value}", Value::from(key))
}

impl Session {
    /// Whether the server declared the capability a listing or request belongs to.
    fn offers(&self, capability: &str) -> bool {
        self.peer.peer_info().is_some_and(|info| {
            let caps = &info.capabilities;
            match capability {
                "resources" => caps.resources.is_some(),
                "prompts" => caps.prompts.is_some(),
                _ => caps.completions.is_some(),
            }
        })
    }

    /// Every entry of `listing`, following `nextCursor` as `tools/list` does, each as
    /// the JSON text the server sent; empty when the server does not offer it.
    pub async fn list_offered(
        &self,
        listing: Listing,
        cancel: &CancellationToken,
    ) -> Result<Vec<Box<RawValue>>, Failure> {
        let capability = match listing {
            Listing::Prompts => "prompts",
            _ => "resources",
        };
        if !self.offers(capability) {
            return Ok(Vec::new());
        }
        let method = listing.method();
        let mut entries = Vec::new();
        let mut seen = HashSet::new();
        let mut cursor: Option<String> = None;
        for _ in 0..MAX_PAGES {
            let params = cursor
                .iter()
                .map(|c| member("cursor", &Value::from(c.as_str())))
                .collect();
            let page = self.request(method, params, cancel).await?;
            let page: Page = serde_json::from_str(page.get())
                .map_err(|_| Failure::Reason(unexpected_response(method)))?;
            let next = page.next_cursor.clone();
            entries.extend(page.entries(listing).unwrap_or_default());
            match next {
                None => return Ok(entries),
                Some(next) if next.is_empty() => return Ok(entries),
                Some(next) if !seen.insert(next.clone()) => {
                    let repeated = format!("{method} repeated the cursor \"{next}\"");
                    return Err(Failure::Reason(repeated).redacted(self.redactor()));
                }
                Some(next) => cursor = Some(next),
            }
        }
        Err(Failure::Reason(format!(
            "{method} returned more than {MAX_PAGES} pages"
        )))
    }

    /// Sends `method` with `params` (members of its params object) and returns its
    /// result object as JSON text, bounded by the server's timeout; what fails is worded
    /// for the server's name to precede it, with its secrets hidden.
    pub async fn request(
        &self,
        method: &str,
        params: Vec<String>,
        cancel: &CancellationToken,
    ) -> Result<Box<RawValue>, Failure> {
        let owned = method.to_owned();
        let sent = self
            .engine
            .request(method, params, move |reply| result_object(&owned, reply));
        let answer = self.bounded(method, self.timeout, cancel, sent).await;
        answer.map_err(|failure| failure.redacted(self.redactor()))
    }

    /// `resourceCount` and `promptCount`, for doctors such as `toolnexus list`: each
    /// listed in full when the server declares it; none when it does not, or the listing
    /// fails (the server's tools are what decides whether it is up).
    pub async fn offered_counts(&self, cancel: &CancellationToken) -> Vec<(&'static str, usize)> {
        let (resources, prompts) = tokio::join!(
            self.list_offered(Listing::Resources, cancel),
            self.list_offered(Listing::Prompts, cancel)
        );
        let mut counts = Vec::new();
        if let Ok(resources) = resources.as_ref().map(Vec::len)
            && self.offers("resources")
        {
            counts.push(("resourceCount", resources));
        }
        if let Ok(prompts) = prompts.as_ref().map(Vec::len)
            && self.offers("prompts")
        {
            counts.push(("promptCount", prompts));
        }
        counts
    }

    /// `completion/complete`, or `{ completion: { values: [] } }` from a server that
    /// declares no completions.
    pub async fn complete(
        &self,
        params: Vec<String>,
        cancel: &CancellationToken,
    ) -> Result<Box<RawValue>, Failure> {
        if !self.offers("completions") {
            let none = r#"{"completion":{"values":[]}}"#.to_owned();
            return Ok(RawValue::from_string(none).expect("JSON"));
        }
        self.request("completion/complete", params, cancel).await
    }
}
