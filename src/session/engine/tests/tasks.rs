//! Calls run as tasks, through the fake wire: the polls at the server's interval, the
//! clock of each poll and of the whole, the cancel, and both eras' shapes.

use crate::code::Code;
use serde_json::{Value, json};

use super::rig::{Rig, error, sleep, text};
use crate::lock::lock;
use crate::tool::result::ToolOutput;

fn created(poll: u64) -> Value {
    json!({ "task": { "taskId": "t1", "status": "working", "pollInterval": poll } })
}

fn status(status: &str, poll: u64) -> Value {
    json!({ "taskId": "t1", "status": status, "pollInterval": poll })
}

/// Answers the last request, which must be `method`.
fn answer_last(rig: &Rig, method: &str, result: Value) {
    let (id, sent, params) = rig.last();
    assert_eq!(sent, method, "{params}");
    rig.answer(id, result);
}

#[tokio::test(start_paused = true)]
async fn a_2025_task_polls_at_its_interval_then_fetches_the_result() {
    let rig = Rig::new();
    let (id, heard) = rig.task(100, None);
    let (_, method, params) = rig.last();
    assert_eq!(
        (method.as_str(), &params["task"]),
        ("tools/call", &json!({}))
    );
    rig.answer(id, created(500));
    sleep(499).await;
    assert_eq!(rig.methods().len(), 1, "no poll before the interval");
    sleep(2).await;
    let (_, method, params) = rig.last();
    assert_eq!(method, "tasks/get");
    assert_eq!(params, json!({ "taskId": "t1" }));
    answer_last(&rig, "tasks/get", status("working", 300));
    sleep(301).await;
    answer_last(&rig, "tasks/get", status("completed", 300));
    answer_last(&rig, "tasks/result", text("done"));
    assert_eq!(heard.outcome(), Some(ToolOutput::text("done".into())));
    assert_eq!(rig.methods().len(), 4);
}

#[tokio::test(start_paused = true)]
async fn the_timeout_bounds_each_poll_not_the_wait_between() {
    let rig = Rig::new();
    let (id, heard) = rig.task(100, None);
    rig.answer(id, created(1000));
    sleep(1001).await;
    assert_eq!(
        heard.outcome(),
        None,
        "waiting for the interval is not a timeout"
    );
    assert_eq!(rig.last().1, "tasks/get");
    sleep(98).await;
    assert_eq!(heard.outcome(), None, "the poll has its own 100 ms");
    sleep(2).await;
    assert_eq!(
        heard.outcome(),
        error(
            Code::Timeout,
            "MCP server \"s\" did not answer tools/call \"t\" (task \"t1\") within 100 ms"
        )
    );
    let (_, method, params) = rig.last();
    assert_eq!(
        (method.as_str(), params),
        ("tasks/cancel", json!({ "taskId": "t1" }))
    );
}

#[tokio::test(start_paused = true)]
async fn max_total_bounds_a_task_that_never_ends() {
    let rig = Rig::new();
    let (id, heard) = rig.task(100, Some(1000));
    rig.answer(id, created(50));
    for _ in 0..30 {
        sleep(51).await;
        if heard.outcome().is_some() {
            break;
        }
        answer_last(&rig, "tasks/get", status("working", 50));
    }
    assert_eq!(
        heard.outcome(),
        error(
            Code::Timeout,
            "MCP server \"s\" did not finish tools/call \"t\" (task \"t1\") within its maxTotalTimeout of 1000 ms"
        )
    );
    assert_eq!(rig.last().1, "tasks/cancel");
}

#[tokio::test(start_paused = true)]
async fn an_abort_cancels_the_task_and_progress_keeps_its_token() {
    let rig = Rig::new();
    let (id, heard) = rig.task(100, None);
    rig.answer(id, created(500));
    rig.progress(id);
    assert_eq!(
        lock(&heard.progress).len(),
        1,
        "the call's token reaches the caller"
    );
    sleep(10).await;
    rig.engine.abort(id);
    assert_eq!(
        heard.outcome(),
        error(
            Code::Aborted,
            "MCP server \"s\": tools/call \"t\" was aborted"
        )
    );
    let (_, method, params) = rig.last();
    assert_eq!(
        (method.as_str(), params),
        ("tasks/cancel", json!({ "taskId": "t1" }))
    );
    sleep(1000).await;
    assert_eq!(rig.last().1, "tasks/cancel", "no poll after the abort");
}

#[tokio::test(start_paused = true)]
async fn garbage_or_a_forgotten_task_is_an_error_naming_the_server() {
    let rig = Rig::new();
    let (id, heard) = rig.task(100, None);
    rig.answer(id, created(10));
    sleep(11).await;
    answer_last(&rig, "tasks/get", json!({ "nonsense": true }));
    assert_eq!(
        heard.outcome(),
        error(
            Code::Protocol,
            "MCP server \"s\" sent an unexpected response to tools/call \"t\" (task \"t1\")"
        )
    );
    let (_, method, params) = rig.last();
    assert_eq!(
        (method.as_str(), params),
        ("tasks/cancel", json!({ "taskId": "t1" })),
        "the task the answer left running is cancelled"
    );

    let rig = Rig::new();
    let (id, heard) = rig.task(100, None);
    rig.answer(id, created(10));
    sleep(11).await;
    let (poll, ..) = rig.last();
    let message = "Task not found";
    let forgot = crate::session::error::Reply::Error {
        code: Some(-32602),
        message,
    };
    rig.engine.reply(poll, forgot);
    assert_eq!(
        heard.outcome(),
        error(
            Code::ServerError,
            "MCP server \"s\" answered tools/call \"t\" (task \"t1\") with an error: Task not found"
        )
    );
}

#[tokio::test(start_paused = true)]
async fn a_plain_answer_to_a_task_call_is_the_result() {
    let rig = Rig::new();
    let (id, heard) = rig.task(100, None);
    rig.answer(id, text("no task"));
    assert_eq!(heard.outcome(), Some(ToolOutput::text("no task".into())));
}

#[tokio::test(start_paused = true)]
async fn a_2026_task_asks_through_tasks_update_and_carries_its_result() {
    let rig = Rig::new();
    rig.engine.set_meta(",\"v\":1".into());
    let (id, heard) = rig.task(100, None);
    let (_, _, params) = rig.last();
    assert_eq!(params["_meta"]["v"], 1);
    assert_eq!(params.get("task"), None, "the server decides");
    let made = json!({ "resultType": "task", "taskId": "t1", "status": "working", "pollIntervalMs": 20, "ttlMs": null });
    rig.answer(id, made);
    sleep(21).await;
    let asks = json!({
        "resultType": "complete", "taskId": "t1", "status": "input_required",
        "inputRequests": { "k": { "method": "elicitation/create", "params": { "message": "?" } } },
    });
    answer_last(&rig, "tasks/get", asks.clone());
    sleep(1).await;
    rig.person.go.notify_one();
    sleep(1).await;
    let (update, method, params) = rig.last();
    assert_eq!(method, "tasks/update");
    assert_eq!(params["taskId"], "t1");
    assert_eq!(params["inputResponses"]["k"]["action"], "accept");
    assert_eq!(params["_meta"]["v"], 1);
    rig.answer(update, json!({ "resultType": "complete" }));
    sleep(21).await;
    // Shown again before the server took the answers: not asked twice.
    answer_last(&rig, "tasks/get", asks);
    sleep(21).await;
    let done = json!({
        "resultType": "complete", "taskId": "t1", "status": "completed",
        "result": { "content": [{ "type": "text", "text": "ok" }] },
    });
    answer_last(&rig, "tasks/get", done);
    assert_eq!(heard.outcome(), Some(ToolOutput::text("ok".into())));
    assert_eq!(*lock(&rig.person.asked), 1);
}

#[tokio::test(start_paused = true)]
async fn a_2026_failed_task_reads_as_its_error() {
    let rig = Rig::new();
    rig.engine.set_meta(",\"v\":1".into());
    let (id, heard) = rig.task(100, None);
    rig.answer(
        id,
        json!({ "resultType": "task", "taskId": "t1", "status": "working" }),
    );
    sleep(1001).await;
    let failed = json!({ "taskId": "t1", "status": "failed", "error": { "code": -32603, "message": "boom" } });
    answer_last(&rig, "tasks/get", failed);
    assert_eq!(
        heard.outcome(),
        error(
            Code::ServerError,
            "MCP server \"s\" answered tools/call \"t\" (task \"t1\") with an error: boom"
        )
    );
}
