//! What a server offers besides tools: resources, resource templates, prompts, skills
//! and completions. Each is a request on the engine's one request path (its table, its
//! wording), bounded by the server's timeout; answers stay JSON text, as the server sent
//! them, for the host to parse. Listings and reads are kept while their server says they
//! are fresh (see `cache`).

use std::future::Future;
use std::sync::Arc;

use serde::Deserialize;
use serde_json::Value;
use serde_json::value::RawValue;
use tokio_util::sync::CancellationToken;

pub use super::cache::{CacheMode, Freshness};
pub use super::engine::request::Kind;
use super::error::Failure;
use super::paging::every_page;
use super::{Params, Session};
use crate::tool::listed::take_member;

/// A paginated listing of what a server offers.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Offered {
    Resources,
    ResourceTemplates,
    Prompts,
    /// The entries of `skills/list` (the `io.modelcontextprotocol/skills` extension).
    Skills,
}

/// A page of a listing: its entries as sent, the cursor to the next, its freshness.
pub struct Page {
    entries: Vec<Box<RawValue>>,
    next_cursor: Option<String>,
    fresh: Freshness,
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
    #[serde(default)]
    skills: Option<Vec<Box<RawValue>>>,
    #[serde(rename = "nextCursor", default)]
    next_cursor: Option<String>,
    #[serde(rename = "ttlMs", default)]
    ttl_ms: Option<f64>,
    #[serde(rename = "cacheScope", default)]
    cache_scope: Option<String>,
}

fn page(json: &str, entries: fn(&mut PageView) -> Option<Vec<Box<RawValue>>>) -> Option<Page> {
    let mut view: PageView = serde_json::from_str(json).ok()?;
    Some(Page {
        entries: entries(&mut view)?,
        fresh: Freshness::from_hints(view.ttl_ms, view.cache_scope.as_deref()),
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

static SKILLS: Kind<Page> = Kind {
    method: "skills/list",
    decode: |json| page(json, |view| view.skills.take()),
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

pub static GET_SKILL: Kind<Box<RawValue>> = Kind {
    method: "skills/get",
    decode: result_object,
    given_up: "the skill",
};

pub static COMPLETE: Kind<Box<RawValue>> = Kind {
    method: "completion/complete",
    decode: result_object,
    given_up: "the completion",
};

impl Offered {
    fn kind(self) -> &'static Kind<Page> {
        match self {
            Offered::Resources => &RESOURCES,
            Offered::ResourceTemplates => &RESOURCE_TEMPLATES,
            Offered::Prompts => &PROMPTS,
            Offered::Skills => &SKILLS,
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

/// Whether `value`, read from a shelf (input, as a server's bytes are), has the shape of
/// an answer to `method`: a listing's array, a read's object.
fn answers(method: &str, value: &str) -> bool {
    let opens = if method == READ.method { '{' } else { '[' };
    value.trim_start().starts_with(opens) && serde_json::from_str::<&RawValue>(value).is_ok()
}

impl Session {
    /// Whether the server declared the capability a listing or request belongs to.
    pub fn offers(&self, capability: &str) -> bool {
        self.peer.peer_info().is_some_and(|info| {
            let caps = &info.capabilities;
            match capability {
                "resources" => caps.resources.is_some(),
                "prompts" => caps.prompts.is_some(),
                "skills" => caps.supports_skills(),
                _ => caps.completions.is_some(),
            }
        })
    }

    /// Every entry of `listing` as one JSON array's text (empty when the server does not
    /// offer it), kept while the server says it is fresh; `mode` says whether a kept one
    /// may answer and whether this one is kept.
    pub async fn offered(
        &self,
        listing: Offered,
        mode: CacheMode,
        trace: Option<Arc<str>>,
        cancel: &CancellationToken,
    ) -> Result<Arc<str>, Failure> {
        let ask = async {
            let (entries, fresh) = self.list_offered(listing, trace, cancel).await?;
            let entries: Vec<&str> = entries.iter().map(|entry| entry.get()).collect();
            Ok((Arc::from(format!("[{}]", entries.join(","))), fresh))
        };
        self.cached(listing.kind().method, "", mode, ask).await
    }

    /// `resources/read` of `uri`: the result object's text, kept as a listing is.
    pub async fn read(
        &self,
        uri: &str,
        mode: CacheMode,
        trace: Option<Arc<str>>,
        cancel: &CancellationToken,
    ) -> Result<Arc<str>, Failure> {
        let ask = async {
            let members = format!("\"uri\":{}", Value::from(uri));
            let result = self
                .request(&READ, Params { members, trace }, cancel)
                .await?;
            let fresh = Freshness::of(result.get());
            Ok((Arc::from(result.get()), fresh))
        };
        self.cached(READ.method, uri, mode, ask).await
    }

    /// The answer to `method` of `key`: a fresh kept one when `mode` allows (this
    /// session's, else the shelf's), else `ask`'s, kept as its freshness says.
    async fn cached(
        &self,
        method: &'static str,
        key: &str,
        mode: CacheMode,
        ask: impl Future<Output = Result<(Arc<str>, Freshness), Failure>>,
    ) -> Result<Arc<str>, Failure> {
        let responses = &self.shared.responses;
        let shelf = self.shared.shelf.as_ref();
        let shelved = || format!("{method} {key}");
        if mode == CacheMode::Use {
            if let Some(kept) = responses.get(method, key) {
                return Ok(kept);
            }
            if let Some(shelf) = shelf
                && let Some((value, ttl)) = shelf.get(&shelved()).await
                && answers(method, &value)
            {
                let value: Arc<str> = Arc::from(value);
                responses.put(method, key, value.clone(), ttl);
                return Ok(value);
            }
        }
        let (value, fresh) = ask.await?;
        if mode != CacheMode::Bypass
            && let Some(ttl) = fresh.ttl
        {
            // What is kept must hear of its changes.
            self.follow_changes();
            responses.put(method, key, value.clone(), ttl);
            if let Some(shelf) = shelf.filter(|_| fresh.public) {
                shelf.put(&shelved(), value.clone(), ttl);
            }
        }
        Ok(value)
    }

    /// Every entry of `listing`, following `nextCursor` as `tools/list` does, each as
    /// the JSON text the server sent, with the first page's freshness; empty when the
    /// server does not offer it.
    async fn list_offered(
        &self,
        listing: Offered,
        trace: Option<Arc<str>>,
        cancel: &CancellationToken,
    ) -> Result<(Vec<Box<RawValue>>, Freshness), Failure> {
        let capability = match listing {
            Offered::Prompts => "prompts",
            Offered::Skills => "skills",
            _ => "resources",
        };
        if !self.offers(capability) {
            return Ok((Vec::new(), Freshness::default()));
        }
        let kind = listing.kind();
        let listed = every_page(kind.method, |cursor| {
            let members = cursor.map_or_else(String::new, |c| {
                format!("\"cursor\":{}", Value::from(c.as_str()))
            });
            let trace = trace.clone();
            async move {
                let page = self
                    .request(kind, Params { members, trace }, cancel)
                    .await?;
                Ok((page.entries, page.next_cursor, page.fresh))
            }
        });
        listed
            .await
            .map_err(|failure| failure.redacted(self.redactor()))
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
            self.list_offered(Offered::Resources, None, cancel),
            self.list_offered(Offered::Prompts, None, cancel)
        );
        let mut counts = Vec::new();
        if let Ok(resources) = resources.as_ref().map(|(entries, _)| entries.len())
            && self.offers("resources")
        {
            counts.push(("resourceCount", resources));
        }
        if let Ok(prompts) = prompts.as_ref().map(|(entries, _)| entries.len())
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
