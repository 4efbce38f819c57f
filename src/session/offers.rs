//! What a server offers besides tools: resources, resource templates, prompts and
//! completions. Each is a request on the engine's one request path (its table, its
//! wording), bounded by the server's timeout; answers stay JSON text, as the server sent
//! them, for the host to parse.

use std::collections::HashSet;
use std::sync::Arc;

use serde::Deserialize;
use serde_json::Value;
use serde_json::value::RawValue;
use tokio_util::sync::CancellationToken;

pub use super::engine::request::Kind;
use super::error::{Error, Failure};
use super::{Params, Session};
use crate::listed_tool::take_member;

/// A listing that pages more often than this is treated as broken, as `tools/list` is.
const MAX_PAGES: usize = 1000;

/// A paginated listing of what a server offers.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Listing {
    Resources,
    ResourceTemplates,
    Prompts,
}

/// A page of a listing: its entries as sent, and the cursor to the next.
pub struct Page {
    entries: Vec<Box<RawValue>>,
    next_cursor: Option<String>,
}

/// One page of any of the listings, each kind reading the member it names.
#[derive(Deserialize)]
struct PageView {
    #[serde(default)]
    resources: Option<Vec<Box<RawValue>>>,
    #[serde(rename = "resourceTemplates", default)]
    resource_templates: Option<Vec<Box<RawValue>>>,
    #[serde(default)]
    prompts: Option<Vec<Box<RawValue>>>,
    #[serde(rename = "nextCursor", default)]
    next_cursor: Option<String>,
}

fn page(json: &str, entries: fn(&mut PageView) -> Option<Vec<Box<RawValue>>>) -> Option<Page> {
    let mut view: PageView = serde_json::from_str(json).ok()?;
    Some(Page {
        entries: entries(&mut view)?,
        next_cursor: view.next_cursor,
    })
}

static RESOURCES: Kind<Page> = Kind {
    method: "resources/list",
    decode: |json| page(json, |view| view.resources.take()),
    given_up: "the listing",
};

static RESOURCE_TEMPLATES: Kind<Page> = Kind {
    method: "resources/templates/list",
    decode: |json| page(json, |view| view.resource_templates.take()),
    given_up: "the listing",
};

static PROMPTS: Kind<Page> = Kind {
    method: "prompts/list",
    decode: |json| page(json, |view| view.prompts.take()),
    given_up: "the listing",
};

/// The requests whose result a host gets as its JSON text.
pub static READ: Kind<Box<RawValue>> = Kind {
    method: "resources/read",
    decode: result_object,
    given_up: "the read",
};

pub static GET_PROMPT: Kind<Box<RawValue>> = Kind {
    method: "prompts/get",
    decode: result_object,
    given_up: "the prompt",
};

pub static COMPLETE: Kind<Box<RawValue>> = Kind {
    method: "completion/complete",
    decode: result_object,
    given_up: "the completion",
};

impl Listing {
    fn kind(self) -> &'static Kind<Page> {
        match self {
            Listing::Resources => &RESOURCES,
            Listing::ResourceTemplates => &RESOURCE_TEMPLATES,
            Listing::Prompts => &PROMPTS,
        }
    }
}

/// A result object's JSON text, as sent but for the 2026-07-28 `resultType`, which is
/// the protocol's business: a result reads the same in both eras. `None` (what the server
/// asks first, or unexpected) for any other `resultType`.
fn result_object(json: &str) -> Option<Box<RawValue>> {
    // Members kept as text: contents may be megabytes.
    let (kind, rest) = take_member(json, "resultType")?;
    match kind {
        None => RawValue::from_string(json.to_owned()).ok(),
        Some(kind) if kind.get() == r#""complete""# => RawValue::from_string(rest).ok(),
        Some(_) => None,
    }
}

/// The members of a request's params object, as JSON text (`"k":v,...`).
pub fn members(params: &serde_json::Map<String, Value>) -> String {
    let members = params
        .iter()
        .map(|(key, value)| format!("{}:{value}", Value::from(key.as_str())));
    members.collect::<Vec<_>>().join(",")
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
        trace: Option<Arc<str>>,
        cancel: &CancellationToken,
    ) -> Result<Vec<Box<RawValue>>, Failure> {
        let capability = match listing {
            Listing::Prompts => "prompts",
            _ => "resources",
        };
        if !self.offers(capability) {
            return Ok(Vec::new());
        }
        let kind = listing.kind();
        let mut entries = Vec::new();
        let mut seen = HashSet::new();
        let mut cursor: Option<String> = None;
        for _ in 0..MAX_PAGES {
            let params = cursor.as_ref().map_or_else(String::new, |c| {
                format!("\"cursor\":{}", Value::from(c.as_str()))
            });
            let (members, trace) = (params, trace.clone());
            let page = self
                .request(kind, Params { members, trace }, cancel)
                .await?;
            entries.extend(page.entries);
            let method = kind.method;
            match page.next_cursor {
                None => return Ok(entries),
                Some(next) if next.is_empty() => return Ok(entries),
                Some(next) if !seen.insert(next.clone()) => {
                    let repeated = format!("{method} repeated the cursor \"{next}\"");
                    return Err(Failure::from(Error::answered(repeated)).redacted(self.redactor()));
                }
                Some(next) => cursor = Some(next),
            }
        }
        let method = kind.method;
        Err(Error::answered(format!("{method} returned more than {MAX_PAGES} pages")).into())
    }

    /// Sends a request of `kind` with `params` (members of its params object), bounded
    /// by the server's timeout; what fails is worded for the server's name to precede
    /// it, with its secrets hidden.
    pub async fn request<T: Send + 'static>(
        &self,
        kind: &'static Kind<T>,
        params: impl Into<Params>,
        cancel: &CancellationToken,
    ) -> Result<T, Failure> {
        let answer = self
            .engine
            .request(kind, params, self.timeout, cancel)
            .await;
        answer.map_err(|failure| failure.redacted(self.redactor()))
    }

    /// `resourceCount` and `promptCount`, for doctors such as `toolnexus list`: each
    /// listed in full when the server declares it; none when it does not, or the listing
    /// fails (the server's tools are what decides whether it is up).
    pub async fn offered_counts(&self, cancel: &CancellationToken) -> Vec<(&'static str, usize)> {
        let (resources, prompts) = tokio::join!(
            self.list_offered(Listing::Resources, None, cancel),
            self.list_offered(Listing::Prompts, None, cancel)
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
        params: Params,
        cancel: &CancellationToken,
    ) -> Result<Box<RawValue>, Failure> {
        if !self.offers("completions") {
            let none = r#"{"completion":{"values":[]}}"#.to_owned();
            return Ok(RawValue::from_string(none).expect("JSON"));
        }
        self.request(&COMPLETE, params, cancel).await
    }
}
