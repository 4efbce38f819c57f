//! `--tasks`: the tasks extension (`io.modelcontextprotocol/tasks`, SEP-2663) on three
//! more tools, each made a task when the call declares the extension (else answered
//! plainly, as the extension asks): `job` (done after `ms` milliseconds, "job done"),
//! `confirm` (asks through `tasks/update` whether to go on, then says the answer) and
//! `endless` (never done). Tasks poll every 20 ms; `--task-log FILE` appends
//! `cancelled ID` for each `tasks/cancel`.

use std::collections::HashMap;
use std::io::Write;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use rmcp::ErrorData;
use rmcp::model::{
    CallToolResponse, CallToolResult, CancelTaskParams, ContentBlock, CreateTaskResult,
    GetTaskParams, GetTaskResult, Task, TaskStatus, Tool, UpdateTaskParams,
};
use serde_json::{Map, Value, json};

const POLL_MS: u64 = 20;

/// Where a task is: its status, and its result once done.
struct State {
    status: TaskStatus,
    result: Option<CallToolResult>,
}

#[derive(Clone)]
pub struct Tasks {
    offered: bool,
    tasks: Arc<Mutex<HashMap<String, State>>>,
    log: Option<Arc<str>>,
}

fn lock(
    tasks: &Mutex<HashMap<String, State>>,
) -> std::sync::MutexGuard<'_, HashMap<String, State>> {
    tasks.lock().unwrap_or_else(|e| e.into_inner())
}

fn text(text: &str) -> CallToolResult {
    CallToolResult::success(vec![ContentBlock::text(text.to_owned())])
}

pub fn tools() -> Vec<Tool> {
    let object = |value: Value| match value {
        Value::Object(map) => Arc::new(map),
        _ => Arc::new(Map::new()),
    };
    let ms = json!({ "type": "object", "properties": { "ms": { "type": "integer" } } });
    let none = json!({ "type": "object" });
    vec![
        Tool::new("job", "Done after ms milliseconds, as a task", object(ms)),
        Tool::new(
            "confirm",
            "Asks whether to go on, as a task",
            object(none.clone()),
        ),
        Tool::new("endless", "Never done, as a task", object(none)),
    ]
}

impl Tasks {
    pub fn new(offered: bool, log: Option<String>) -> Tasks {
        Tasks {
            offered,
            tasks: Arc::default(),
            log: log.map(Into::into),
        }
    }

    pub fn offered(&self) -> bool {
        self.offered
    }

    /// A call of one of the task tools, `None` for another tool (or without `--tasks`).
    pub fn call(
        &self,
        name: &str,
        args: &Map<String, Value>,
        declared: bool,
    ) -> Option<CallToolResponse> {
        if !self.offered {
            return None;
        }
        let ms = args.get("ms").and_then(Value::as_u64).unwrap_or(0);
        let (status, done) = match name {
            "job" => (TaskStatus::Working, Some(Duration::from_millis(ms))),
            "confirm" => (TaskStatus::InputRequired, None),
            "endless" => (TaskStatus::Working, None),
            _ => return None,
        };
        if !declared {
            return Some(text("no task").into());
        }
        let id = format!("task-{}", lock(&self.tasks).len() + 1);
        lock(&self.tasks).insert(
            id.clone(),
            State {
                status,
                result: None,
            },
        );
        if let Some(after) = done {
            let tasks = self.tasks.clone();
            let id = id.clone();
            tokio::spawn(async move {
                tokio::time::sleep(after).await;
                if let Some(state) = lock(&tasks).get_mut(&id)
                    && state.status == TaskStatus::Working
                {
                    state.status = TaskStatus::Completed;
                    state.result = Some(text("job done"));
                }
            });
        }
        let task = Task::new(
            id,
            TaskStatus::Working,
            "2026-07-28T00:00:00Z",
            "2026-07-28T00:00:00Z",
        )
        .with_poll_interval_ms(POLL_MS);
        Some(CallToolResponse::Task(CreateTaskResult::new(task)))
    }

    pub fn get(&self, request: GetTaskParams) -> Result<GetTaskResult, ErrorData> {
        let tasks = lock(&self.tasks);
        let Some(state) = tasks.get(&request.task_id) else {
            return Err(ErrorData::invalid_params("Task not found", None));
        };
        let mut task = json!({
            "resultType": "complete",
            "taskId": request.task_id,
            "status": state.status,
            "createdAt": "2026-07-28T00:00:00Z",
            "lastUpdatedAt": "2026-07-28T00:00:00Z",
            "ttlMs": null,
            "pollIntervalMs": POLL_MS,
        });
        match state.status {
            TaskStatus::InputRequired => {
                task["inputRequests"] = json!({ "go": { "method": "elicitation/create", "params": {
                    "mode": "form", "message": "Go on?",
                    "requestedSchema": { "type": "object", "properties": { "go": { "type": "boolean" } } },
                } } });
            }
            TaskStatus::Completed => task["result"] = json!(state.result),
            _ => {}
        }
        serde_json::from_value(task).map_err(|e| ErrorData::internal_error(e.to_string(), None))
    }

    pub fn update(&self, request: UpdateTaskParams) -> Result<(), ErrorData> {
        let mut tasks = lock(&self.tasks);
        let Some(state) = tasks.get_mut(&request.task_id) else {
            return Err(ErrorData::invalid_params("Task not found", None));
        };
        if let Some(answer) = request.input_responses.get("go") {
            state.status = TaskStatus::Completed;
            state.result = Some(text(&format!("answered {answer}")));
        }
        Ok(())
    }

    pub fn cancel(&self, request: CancelTaskParams) -> Result<(), ErrorData> {
        if let Some(state) = lock(&self.tasks).get_mut(&request.task_id) {
            state.status = TaskStatus::Cancelled;
        }
        if let Some(log) = &self.log
            && let Ok(mut file) = std::fs::OpenOptions::new()
                .create(true)
                .append(true)
                .open(&**log)
        {
            let _ = writeln!(file, "cancelled {}", request.task_id);
        }
        Ok(())
    }
}
