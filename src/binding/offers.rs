//! What servers offer besides tools, as the JS layer asks for it: resources, prompts,
//! skills and completions, asked of a live session.

use std::sync::Arc;

use napi::bindgen_prelude::*;
use napi_derive::napi;
use serde_json::value::RawValue;
use serde_json::{Map, Value};
use tokio_util::sync::CancellationToken;

use super::McpSourceHandle;
use super::failure::{Outcome, named, settle};
use super::skills::SkillAsk;
use super::store::NativeStore;
use crate::code::{Code, Coded};
use crate::session::offers::{self, Kind, Offered};
use crate::session::{CacheMode, Params, Session, trace_context};

/// What a host asks of one server: a listing, a read, or one of the requests it may
/// send; with the caller's trace context, if it has one, and how kept answers may serve.
enum Ask {
    List(Offered, CacheMode, Option<Arc<str>>),
    Read(String, CacheMode, Option<Arc<str>>),
    Request(&'static Kind<Box<RawValue>>, Params),
    Skill(SkillAsk, Option<Arc<str>>),
}

impl Ask {
    /// `kind` is `"resources"`, `"resourceTemplates"`, `"prompts"`, one of the methods
    /// `resources/read`, `prompts/get`, `completion/complete`, or a skill request (see
    /// `SkillAsk`), whose params `params_json` (a JSON object) gives; its `cacheMode`
    /// (`"use"`, `"refresh"`, `"bypass"`) is toolnexus's, not sent. `trace_json` is the
    /// caller's trace context (see `trace_context`).
    fn new(kind: &str, params_json: Option<String>, trace_json: Option<String>) -> Result<Ask> {
        let trace = trace_json.as_deref().and_then(trace_context::members);
        let invalid = |why: String| Error::new(Status::InvalidArg, format!("{kind}: {why}"));
        let mut params: Map<String, Value> =
            serde_json::from_str(params_json.as_deref().unwrap_or("{}"))
                .map_err(|e| invalid(e.to_string()))?;
        let mode = match params.remove("cacheMode") {
            None | Some(Value::Null) => CacheMode::default(),
            Some(Value::String(mode)) => CacheMode::parse(&mode).ok_or_else(|| {
                invalid(format!(
                    "cacheMode \"{mode}\" is not use, refresh or bypass"
                ))
            })?,
            Some(other) => return Err(invalid(format!("cacheMode {other} is not a string"))),
        };
        let listing = match kind {
            "resources" => Some(Offered::Resources),
            "resourceTemplates" => Some(Offered::ResourceTemplates),
            "prompts" => Some(Offered::Prompts),
            _ => None,
        };
        if let Some(listing) = listing {
            return Ok(Ask::List(listing, mode, trace));
        }
        if let Some(skill) = SkillAsk::new(kind, params.clone(), mode) {
            return skill.map(|ask| Ask::Skill(ask, trace)).map_err(invalid);
        }
        if kind == "resources/read" {
            let uri = params.get("uri").and_then(Value::as_str);
            let uri = uri.ok_or_else(|| invalid("a uri is required".to_owned()))?;
            return Ok(Ask::Read(uri.to_owned(), mode, trace));
        }
        let request = match kind {
            "prompts/get" => &offers::GET_PROMPT,
            "completion/complete" => &offers::COMPLETE,
            _ => return Err(Error::from_reason(format!("no request \"{kind}\""))),
        };
        let members = offers::members(&params);
        Ok(Ask::Request(request, Params { members, trace }))
    }

    /// The answer as JSON text: a listing's entries as an array, a request's result
    /// object. A failure names the server.
    async fn run(self, session: Arc<Session>) -> std::result::Result<String, Coded> {
        let cancel = CancellationToken::new();
        let answer = match self {
            Ask::List(listing, mode, trace) => {
                let listed = session.offered(listing, mode, trace, &cancel).await;
                listed.map(|text| text.to_string())
            }
            Ask::Read(uri, mode, trace) => {
                let read = session.read(&uri, mode, trace, &cancel).await;
                read.map(|text| text.to_string())
            }
            Ask::Request(kind, params) if std::ptr::eq(kind, &offers::COMPLETE) => {
                let answer = session.complete(params, &cancel).await;
                answer.map(|result| result.get().to_owned())
            }
            Ask::Request(kind, params) => {
                let answer = session.request(kind, params, &cancel).await;
                answer.map(|result| result.get().to_owned())
            }
            Ask::Skill(ask, trace) => return ask.run(&session, trace, &cancel).await,
        };
        answer.map_err(|failure| named(&session, failure))
    }
}

#[napi]
impl McpSourceHandle {
    /// The names of the connected servers, in config order.
    #[napi(catch_unwind)]
    pub fn server_names(&self) -> Vec<String> {
        self.source
            .sessions
            .iter()
            .map(|s| s.name().to_owned())
            .collect()
    }

    /// The span attributes of `server`'s requests (see `Session::span_attributes`); null
    /// when no such server is connected.
    #[napi(catch_unwind)]
    pub fn span_attributes(&self, server: String) -> Option<String> {
        self.session(&server)
            .ok()
            .map(|session| session.span_attributes())
    }

    /// Asks `server` for `kind` (see `Ask::new`); resolves the answer's JSON text.
    #[napi(catch_unwind)]
    pub fn ask<'env>(
        &self,
        env: &'env Env,
        server: String,
        kind: String,
        params_json: Option<String>,
        trace_json: Option<String>,
    ) -> Result<PromiseRaw<'env, Outcome<String>>> {
        let ask = Ask::new(&kind, params_json, trace_json)?;
        let session = self.session(&server);
        settle(env, async move { ask.run(session?).await })
    }

    /// The connected server named `server`, or why there is none.
    pub(super) fn session(&self, server: &str) -> std::result::Result<Arc<Session>, Coded> {
        let session = self.source.sessions.iter().find(|s| s.name() == server);
        session.cloned().ok_or_else(|| {
            let why = format!("no connected MCP server \"{server}\" in this source");
            Coded::new(Code::UnknownServer, why)
        })
    }
}

#[napi]
impl NativeStore {
    /// The view's connected services, by the view's names.
    #[napi(catch_unwind)]
    pub fn server_names(&self, agent: Option<String>) -> Vec<String> {
        let sessions = self.store.sessions(agent.as_deref()).into_iter();
        sessions.map(|(name, _)| name).collect()
    }

    /// As `McpSourceHandle.spanAttributes`, of a service as the view names it.
    #[napi(catch_unwind)]
    pub fn span_attributes(&self, agent: Option<String>, server: String) -> Option<String> {
        let session = self.store.session_of(agent.as_deref(), &server).ok();
        session.map(|session| session.span_attributes())
    }

    /// As `McpSourceHandle.ask`, of a service as the view names it.
    #[napi(catch_unwind)]
    pub fn ask<'env>(
        &self,
        env: &'env Env,
        agent: Option<String>,
        server: String,
        kind: String,
        params_json: Option<String>,
        trace_json: Option<String>,
    ) -> Result<PromiseRaw<'env, Outcome<String>>> {
        let ask = Ask::new(&kind, params_json, trace_json)?;
        let session = self.store.session_of(agent.as_deref(), &server);
        settle(env, async move { ask.run(session?).await })
    }
}
