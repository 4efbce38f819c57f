//! The engine through its seam: a fake [`Wire`](super::Wire) records what is sent, and
//! the tests feed answers, progress and failures as a server would. Time is tokio's
//! paused clock, so the timeouts are exact.

mod questions;
mod rig;
mod tasks;

use crate::code::Code;
use std::sync::Arc;
use std::time::Duration;

use rmcp::service::ServiceError;
use serde_json::Value;
use tokio_util::sync::CancellationToken;

use self::rig::{Heard, Rig, Sent, asks, error, sleep, text};
use super::MAX_ROUNDS;
use super::request::Kind;
use crate::lock::lock;
use crate::session::error::{Broken, Failure, Reply};
use crate::tool::result::ToolOutput;

/// Asserts that a call of the rig (timeout 100 ms) times out in `ms`, not before.
async fn times_out_in(heard: &Heard, ms: u64) {
    sleep(ms - 1).await;
    assert_eq!(heard.outcome(), None, "timed out early");
    sleep(2).await;
    assert_eq!(
        heard.outcome(),
        error(
            Code::Timeout,
            "MCP server \"s\" did not answer tools/call \"t\" within 100 ms"
        )
    );
}

#[tokio::test(start_paused = true)]
async fn an_unanswered_call_times_out_on_time_and_the_server_is_told() {
    let rig = Rig::new();
    let (id, heard) = rig.call(100, None);
    times_out_in(&heard, 100).await;
    assert_eq!(rig.last_cancel(), Some((id, "request timeout")));
}

#[tokio::test(start_paused = true)]
async fn progress_restarts_the_clock_and_reaches_the_caller() {
    let rig = Rig::new();
    let (id, heard) = rig.call(100, None);
    sleep(80).await;
    rig.progress(id);
    sleep(80).await;
    assert_eq!(heard.outcome(), None, "progress restarted the clock");
    assert_eq!(lock(&heard.progress).len(), 1);
    rig.answer(id, text("ok"));
    assert_eq!(heard.outcome(), Some(ToolOutput::text("ok".into())));
}

#[tokio::test(start_paused = true)]
async fn the_total_limit_holds_whatever_the_progress() {
    let rig = Rig::new();
    let (id, heard) = rig.call(100, Some(150));
    for _ in 0..2 {
        sleep(60).await;
        rig.progress(id);
    }
    assert_eq!(heard.outcome(), None);
    sleep(40).await;
    assert_eq!(
        heard.outcome(),
        error(
            Code::Timeout,
            "MCP server \"s\" did not finish tools/call \"t\" within its maxTotalTimeout of 150 ms"
        )
    );
}

#[tokio::test(start_paused = true)]
async fn the_clock_stands_still_while_a_person_answers_and_the_next_round_carries_the_answers() {
    let rig = Rig::new();
    let (id, heard) = rig.call(100, None);
    sleep(50).await;
    rig.answer(id, asks());
    sleep(1000).await;
    assert_eq!(heard.outcome(), None, "paused while asking");
    assert_eq!(*lock(&rig.person.asked), 1);
    rig.person.go.notify_one();
    sleep(1).await;
    let (next, params) = rig.requests().pop().expect("the next round");
    assert_ne!(next, id);
    assert_eq!(params["inputResponses"]["k"]["action"], "accept");
    assert_eq!(params["requestState"], "s1");
    assert_eq!(params["arguments"]["a"], 1);
    // What was left of the clock runs on: 50 ms.
    times_out_in(&heard, 49).await;
}

#[tokio::test(start_paused = true)]
async fn the_clock_stands_still_while_a_person_signs_in() {
    let rig = Rig::new();
    let (_, heard) = rig.call(100, None);
    let signing_in = rig.hooks.oauth.person_signing_in("s");
    sleep(1000).await;
    assert_eq!(heard.outcome(), None, "paused while signing in");
    drop(signing_in);
    times_out_in(&heard, 100).await;
}

#[tokio::test(start_paused = true)]
async fn a_server_that_keeps_asking_is_given_up_after_the_last_round() {
    let rig = Rig::new();
    let (_, heard) = rig.call(10_000, None);
    for _ in 0..MAX_ROUNDS {
        rig.answer(rig.last_request(), asks());
        rig.person.go.notify_one();
        sleep(1).await;
    }
    assert_eq!(heard.outcome(), None);
    assert_eq!(rig.requests().len(), MAX_ROUNDS as usize + 1);
    rig.answer(rig.last_request(), asks());
    assert_eq!(
        heard.outcome(),
        error(
            Code::Protocol,
            &format!(
                "MCP server \"s\" asked for input more than {MAX_ROUNDS} times during tools/call \"t\"; the call was given up"
            )
        )
    );
}

#[tokio::test(start_paused = true)]
async fn an_interrupted_call_is_sent_once_more_in_the_2026_era_only() {
    let closed = ServiceError::TransportClosed;
    let interrupted = Reply::Interrupted(Broken::Service(&closed));
    let lost = error(
        Code::Connection,
        "MCP server \"s\" closed the connection during tools/call \"t\"",
    );

    let rig = Rig::new();
    let (id, heard) = rig.call(10_000, None);
    rig.engine.reply(id, interrupted);
    assert_eq!(heard.outcome(), lost, "no resend in the 2025 era");

    let rig = Rig::new();
    rig.engine.set_meta(",\"v\":1".into());
    let (id, heard) = rig.call(10_000, None);
    rig.engine
        .reply(id, Reply::Interrupted(Broken::Service(&closed)));
    assert_eq!(heard.outcome(), None);
    let requests = rig.requests();
    assert_eq!(requests.len(), 2, "sent once more");
    assert_eq!(requests[0].1["arguments"], requests[1].1["arguments"]);
    rig.engine
        .reply(requests[1].0, Reply::Interrupted(Broken::Service(&closed)));
    assert_eq!(heard.outcome(), lost, "only once");
    assert_eq!(rig.requests().len(), 2);
}

#[tokio::test(start_paused = true)]
async fn an_abort_while_asking_ends_the_call_and_sends_nothing() {
    let rig = Rig::new();
    let (id, heard) = rig.call(10_000, None);
    rig.answer(id, asks());
    sleep(1).await;
    rig.engine.abort(id);
    assert_eq!(
        heard.outcome(),
        error(
            Code::Aborted,
            "MCP server \"s\": tools/call \"t\" was aborted"
        )
    );
    // The person's answer, when it comes, goes nowhere.
    rig.person.go.notify_one();
    sleep(10).await;
    assert_eq!(rig.requests().len(), 1);
    assert!(!rig.sent().iter().any(|s| matches!(s, Sent::Cancel { .. })));
}

#[tokio::test(start_paused = true)]
async fn an_abort_in_flight_tells_the_server() {
    let rig = Rig::new();
    let (id, heard) = rig.call(10_000, None);
    rig.engine.abort(id);
    assert_eq!(
        heard.outcome(),
        error(
            Code::Aborted,
            "MCP server \"s\": tools/call \"t\" was aborted"
        )
    );
    assert_eq!(rig.last_cancel(), Some((id, "aborted by the client")));
}

#[tokio::test(start_paused = true)]
async fn close_ends_what_is_in_flight_and_refuses_what_comes_later() {
    let rig = Rig::new();
    let (_, heard) = rig.call(10_000, None);
    rig.engine.close();
    assert_eq!(
        heard.outcome(),
        error(
            Code::Closed,
            "MCP server \"s\" was closed during tools/call \"t\""
        )
    );
    let (_, later) = rig.call(10_000, None);
    assert_eq!(
        later.outcome(),
        error(
            Code::Closed,
            "MCP server \"s\" is closed; cannot run tools/call \"t\""
        )
    );
    assert_eq!(rig.requests().len(), 1);
}

#[tokio::test(start_paused = true)]
async fn an_error_answer_keeps_its_words() {
    let rig = Rig::new();
    let (id, heard) = rig.call(10_000, None);
    let reply = Reply::Error {
        code: Some(-32602),
        message: "no such thing",
    };
    rig.engine.reply(id, reply);
    assert_eq!(
        heard.outcome(),
        error(
            Code::ServerError,
            "MCP server \"s\" answered tools/call \"t\" with an error: no such thing"
        )
    );
}

static ECHO: Kind<String> = Kind {
    method: "x/echo",
    decode: |json| {
        let value: Value = serde_json::from_str(json).ok()?;
        value["echo"].as_str().map(str::to_owned)
    },
    given_up: "the request",
};

async fn awaited(rig: &Rig, timeout: u64, cancel: &CancellationToken) -> Result<String, Failure> {
    let members = "\"q\":1".to_owned();
    let timeout = Duration::from_millis(timeout);
    rig.engine.request(&ECHO, members, timeout, cancel).await
}

#[tokio::test(start_paused = true)]
async fn an_awaited_request_has_the_same_clock_rounds_and_abort() {
    let rig = Rig::new();
    let cancel = CancellationToken::new();
    let timed_out = awaited(&rig, 100, &cancel).await;
    let reason = timed_out.expect_err("timed out").to_string_for_test();
    assert_eq!(reason, "did not answer x/echo within 100 ms");

    let rig = Arc::new(Rig::new());
    let answering = {
        let rig = rig.clone();
        async move {
            sleep(10).await;
            rig.answer(rig.last_request(), asks());
            rig.person.go.notify_one();
            sleep(10).await;
            let (id, params) = rig.requests().pop().expect("the next round");
            assert_eq!(params["q"], 1);
            assert_eq!(params["requestState"], "s1");
            rig.answer(id, serde_json::json!({ "echo": "back" }));
        }
    };
    let (answer, ()) = tokio::join!(awaited(&rig, 100, &cancel), answering);
    assert_eq!(answer, Ok("back".to_owned()));

    let aborting = async {
        sleep(10).await;
        cancel.cancel();
    };
    let (aborted, ()) = tokio::join!(awaited(&rig, 10_000, &cancel), aborting);
    assert_eq!(aborted, Err(Failure::Aborted));
    let last = rig.sent().pop();
    assert!(matches!(
        last,
        Some(Sent::Cancel {
            reason: "aborted by the client",
            ..
        })
    ));
}

impl Failure {
    fn to_string_for_test(&self) -> String {
        match self {
            Failure::Aborted => "aborted".into(),
            Failure::Reason(error) => error.to_string(),
        }
    }
}
