//! The engine's test rig: a fake wire, a person who answers when let, and a sink.

use std::future::Future;
use std::pin::Pin;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde_json::Value;
use tokio::sync::Notify;

use crate::code::Code;
use crate::elicitation::{self, Answer, Request};
use crate::lock::lock;
use crate::redact::Redactor;
use crate::session::engine::call::{CallSink, CallSpec};
use crate::session::engine::request::Progress;
use crate::session::engine::{Engine, NotSent, Wire};
use crate::session::error::Reply;
use crate::session::handler::Shared;
use crate::session::hooks::Hooks;
use crate::tool::result::ToolOutput;

/// What the engine sent, in order.
#[derive(Debug, Clone, PartialEq)]
pub enum Sent {
    Request {
        id: u64,
        method: String,
        params: Value,
    },
    Cancel {
        id: u64,
        reason: &'static str,
    },
}

#[derive(Default)]
pub struct FakeWire {
    sent: Arc<Mutex<Vec<Sent>>>,
}

impl Wire for FakeWire {
    fn send(&self, _: &Arc<Engine>, id: u64, method: &str, params: String) -> Result<(), NotSent> {
        let params = serde_json::from_str(&params).expect("params are JSON");
        let method = method.to_owned();
        lock(&self.sent).push(Sent::Request { id, method, params });
        Ok(())
    }

    fn cancel(&self, id: u64, reason: &'static str) {
        lock(&self.sent).push(Sent::Cancel { id, reason });
    }
}

/// A person who answers once let (and counts the questions).
#[derive(Default)]
pub struct Person {
    pub go: Notify,
    pub asked: Mutex<u32>,
}

pub struct Asks(Arc<Person>);

impl elicitation::Person for Asks {
    fn ask(&self, _: Request) -> Pin<Box<dyn Future<Output = Option<Answer>> + Send>> {
        let person = self.0.clone();
        *lock(&person.asked) += 1;
        Box::pin(async move {
            person.go.notified().await;
            Some(Answer {
                id: String::new(),
                ok: true,
                data: None,
                reason: None,
            })
        })
    }
}

/// A call's events as the sink heard them.
#[derive(Default)]
pub struct Heard {
    pub progress: Mutex<Vec<Progress>>,
    pub done: Mutex<Vec<ToolOutput>>,
}

impl CallSink for Heard {
    fn progress(&self, _: u64, progress: Progress) {
        lock(&self.progress).push(progress);
    }

    fn done(&self, _: u64, output: ToolOutput) {
        lock(&self.done).push(output);
    }
}

impl Heard {
    pub fn outcome(&self) -> Option<ToolOutput> {
        let done = lock(&self.done);
        assert!(done.len() <= 1, "one outcome only: {done:?}");
        done.first().cloned()
    }
}

pub struct Rig {
    pub engine: Arc<Engine>,
    sent: Arc<Mutex<Vec<Sent>>>,
    pub person: Arc<Person>,
    pub hooks: Hooks,
}

impl Rig {
    pub fn new() -> Rig {
        let person = Arc::new(Person::default());
        let hooks = Hooks {
            elicitor: Some(Arc::new(Asks(person.clone()))),
            ..Hooks::default()
        };
        let shared = Shared::new("s", &hooks, Redactor::new([]), None);
        let wire = FakeWire::default();
        let sent = wire.sent.clone();
        let engine = Engine::new(shared, Box::new(wire), None);
        Rig {
            engine,
            sent,
            person,
            hooks,
        }
    }

    pub fn call(&self, timeout: u64, max_total: Option<u64>) -> (u64, Arc<Heard>) {
        self.start(timeout, max_total, false, None)
    }

    /// A call that brings its own elicitor.
    pub fn call_asking(&self, elicitor: Arc<dyn elicitation::Elicitor>) -> (u64, Arc<Heard>) {
        self.start(100, None, false, Some(elicitor))
    }

    /// A call run as a task.
    pub fn task(&self, timeout: u64, max_total: Option<u64>) -> (u64, Arc<Heard>) {
        self.start(timeout, max_total, true, None)
    }

    fn start(
        &self,
        timeout: u64,
        max_total: Option<u64>,
        task: bool,
        elicitor: Option<Arc<dyn elicitation::Elicitor>>,
    ) -> (u64, Arc<Heard>) {
        let heard = Arc::new(Heard::default());
        let spec = CallSpec {
            timeout: Duration::from_millis(timeout),
            max_total: max_total.map(Duration::from_millis),
            wants_progress: true,
            task,
            trace: None,
            elicitor,
        };
        let id = crate::session::engine::call::next_id();
        self.engine
            .start(id, "t", r#"{"a":1}"#, spec, heard.clone());
        (id, heard)
    }

    pub fn sent(&self) -> Vec<Sent> {
        lock(&self.sent).clone()
    }

    /// The requests sent, as (id, params).
    pub fn requests(&self) -> Vec<(u64, Value)> {
        let sent = self.sent();
        let requests = sent.into_iter().filter_map(|sent| match sent {
            Sent::Request { id, params, .. } => Some((id, params)),
            Sent::Cancel { .. } => None,
        });
        requests.collect()
    }

    /// The requests sent, as (id, method, params).
    pub fn methods(&self) -> Vec<(u64, String, Value)> {
        let sent = self.sent();
        let requests = sent.into_iter().filter_map(|sent| match sent {
            Sent::Request { id, method, params } => Some((id, method, params)),
            Sent::Cancel { .. } => None,
        });
        requests.collect()
    }

    /// The last request sent: its id, method and params.
    pub fn last(&self) -> (u64, String, Value) {
        self.methods().pop().expect("a request was sent")
    }

    /// The last thing sent, when it is a cancellation: its request and reason.
    pub fn last_cancel(&self) -> Option<(u64, &'static str)> {
        match self.sent().pop()? {
            Sent::Cancel { id, reason } => Some((id, reason)),
            Sent::Request { .. } => None,
        }
    }

    pub fn last_request(&self) -> u64 {
        self.requests().last().expect("a request was sent").0
    }

    pub fn answer(&self, id: u64, result: Value) {
        let result = serde_json::value::to_raw_value(&result).expect("JSON");
        self.engine.reply(id, Reply::Result(&result));
    }

    pub fn progress(&self, id: u64) {
        let progress = Progress {
            progress: 1.0,
            total: None,
            message: None,
        };
        self.engine.progress(id, progress);
    }
}

pub fn text(text: &str) -> Value {
    serde_json::json!({ "content": [{ "type": "text", "text": text }] })
}

pub fn asks() -> Value {
    serde_json::json!({
        "resultType": "input_required",
        "inputRequests": { "k": { "method": "elicitation/create", "params": { "message": "?" } } },
        "requestState": "s1",
    })
}

/// A failure the engine composed, with its code.
pub fn error(code: Code, text: &str) -> Option<ToolOutput> {
    Some(ToolOutput::failure(code, text.to_owned()))
}

pub async fn sleep(ms: u64) {
    tokio::time::sleep(Duration::from_millis(ms)).await;
}
