//! The tools the server lists: four working tools, then synthetic ones whose schemas look
//! like those of real servers (nested objects, arrays, enums, formats, defaults, required
//! fields), so that listing them costs what listing a real inventory costs.

use std::sync::Arc;

use rmcp::model::{JsonObject, Tool};
use serde_json::{Value, json};

/// `echo`, `text`, `sleep`, `fail`.
pub const CORE_TOOLS: usize = 4;

fn object(value: Value) -> Arc<JsonObject> {
    match value {
        Value::Object(map) => Arc::new(map),
        _ => unreachable!("schemas are written as objects"),
    }
}

fn core_tools() -> [Tool; CORE_TOOLS] {
    [
        Tool::new(
            "echo",
            "Returns the `text` argument unchanged (or the arguments as JSON when there is no `text`).",
            object(json!({
                "type": "object",
                "properties": { "text": { "type": "string", "description": "Text to send back." } },
                "required": ["text"]
            })),
        ),
        Tool::new(
            "text",
            "Returns a text result of exactly `bytes` bytes of printable ASCII.",
            object(json!({
                "type": "object",
                "properties": {
                    "bytes": { "type": "integer", "minimum": 0, "description": "Length of the result in bytes." }
                },
                "required": ["bytes"]
            })),
        ),
        Tool::new(
            "sleep",
            "Waits `ms` milliseconds, then answers.",
            object(json!({
                "type": "object",
                "properties": {
                    "ms": { "type": "integer", "minimum": 0, "description": "How long to wait, in milliseconds." }
                },
                "required": ["ms"]
            })),
        ),
        Tool::new(
            "fail",
            "Answers an error result (isError: true) carrying `message`.",
            object(json!({
                "type": "object",
                "properties": { "message": { "type": "string", "description": "The error text." } }
            })),
        ),
    ]
}

/// A family of synthetic tools: a name stem, a description and a schema.
struct Template {
    stem: &'static str,
    description: &'static str,
    schema: fn() -> Value,
}

const TEMPLATES: [Template; 8] = [
    Template {
        stem: "search_documents",
        description: "Full-text search over the document store. Returns the best matching documents with their titles, snippets and scores, most relevant first.",
        schema: || {
            json!({
                "type": "object",
                "properties": {
                    "query": { "type": "string", "minLength": 1, "description": "Words or a quoted phrase to search for." },
                    "limit": { "type": "integer", "minimum": 1, "maximum": 100, "default": 10, "description": "Maximum number of results." },
                    "sort": { "type": "string", "enum": ["relevance", "newest", "oldest"], "default": "relevance" },
                    "filters": {
                        "type": "object",
                        "description": "Restricts the search.",
                        "properties": {
                            "author": { "type": "string" },
                            "tags": { "type": "array", "items": { "type": "string" }, "uniqueItems": true },
                            "after": { "type": "string", "format": "date-time" },
                            "before": { "type": "string", "format": "date-time" }
                        },
                        "additionalProperties": false
                    }
                },
                "required": ["query"]
            })
        },
    },
    Template {
        stem: "create_issue",
        description: "Opens a new issue in a repository, with optional labels and assignees. Returns the issue number and its URL.",
        schema: || {
            json!({
                "type": "object",
                "properties": {
                    "repository": { "type": "string", "pattern": "^[A-Za-z0-9_.-]+/[A-Za-z0-9_.-]+$", "description": "owner/name" },
                    "title": { "type": "string", "maxLength": 256 },
                    "body": { "type": "string", "description": "Markdown description of the issue." },
                    "labels": { "type": "array", "items": { "type": "string" }, "uniqueItems": true },
                    "assignees": { "type": "array", "items": { "type": "string" }, "maxItems": 10 },
                    "priority": { "type": "string", "enum": ["low", "medium", "high", "urgent"], "default": "medium" }
                },
                "required": ["repository", "title"]
            })
        },
    },
    Template {
        stem: "send_message",
        description: "Posts a message to a chat channel or thread, optionally with attachments.",
        schema: || {
            json!({
                "type": "object",
                "properties": {
                    "channel": { "type": "string", "description": "Channel name or id." },
                    "text": { "type": "string", "minLength": 1, "maxLength": 40000 },
                    "threadId": { "type": "string", "description": "Reply in this thread instead of the channel." },
                    "attachments": {
                        "type": "array",
                        "items": {
                            "type": "object",
                            "properties": {
                                "name": { "type": "string" },
                                "url": { "type": "string", "format": "uri" },
                                "sizeBytes": { "type": "integer", "minimum": 0 }
                            },
                            "required": ["name", "url"]
                        }
                    },
                    "silent": { "type": "boolean", "default": false }
                },
                "required": ["channel", "text"]
            })
        },
    },
    Template {
        stem: "query_metrics",
        description: "Reads a time series from the metrics backend, aggregated over fixed steps and optionally grouped by labels.",
        schema: || {
            json!({
                "type": "object",
                "properties": {
                    "metric": { "type": "string", "description": "Metric name, e.g. http_requests_total." },
                    "start": { "type": "string", "format": "date-time" },
                    "end": { "type": "string", "format": "date-time" },
                    "stepSeconds": { "type": "integer", "minimum": 1, "default": 60 },
                    "aggregation": { "type": "string", "enum": ["avg", "sum", "min", "max", "p50", "p95", "p99"] },
                    "groupBy": { "type": "array", "items": { "type": "string" } },
                    "labels": { "type": "object", "additionalProperties": { "type": "string" } }
                },
                "required": ["metric", "start", "end"]
            })
        },
    },
    Template {
        stem: "read_file",
        description: "Reads part or all of a file from the workspace. Binary files come back base64-encoded.",
        schema: || {
            json!({
                "type": "object",
                "properties": {
                    "path": { "type": "string", "description": "Path relative to the workspace root." },
                    "encoding": { "type": "string", "enum": ["utf-8", "latin1", "base64"], "default": "utf-8" },
                    "offset": { "type": "integer", "minimum": 0, "default": 0 },
                    "length": { "type": "integer", "minimum": 1, "description": "Bytes to read; the rest of the file when absent." }
                },
                "required": ["path"]
            })
        },
    },
    Template {
        stem: "update_record",
        description: "Updates fields of one record in a table, or inserts it when `upsert` is set and it does not exist.",
        schema: || {
            json!({
                "type": "object",
                "properties": {
                    "table": { "type": "string" },
                    "id": { "oneOf": [{ "type": "string" }, { "type": "integer" }] },
                    "fields": {
                        "type": "object",
                        "minProperties": 1,
                        "additionalProperties": { "type": ["string", "number", "boolean", "null"] }
                    },
                    "upsert": { "type": "boolean", "default": false },
                    "expectedVersion": { "type": "integer", "description": "Optimistic concurrency check." }
                },
                "required": ["table", "id", "fields"]
            })
        },
    },
    Template {
        stem: "run_query",
        description: "Runs a parameterised SQL query against the analytics database and returns the rows as JSON.",
        schema: || {
            json!({
                "type": "object",
                "properties": {
                    "sql": { "type": "string", "description": "One statement; use $1, $2, ... for parameters." },
                    "params": { "type": "array", "items": {} },
                    "timeoutMs": { "type": "integer", "minimum": 1, "maximum": 300000, "default": 30000 },
                    "readOnly": { "type": "boolean", "default": true },
                    "maxRows": { "type": "integer", "minimum": 1, "default": 1000 }
                },
                "required": ["sql"]
            })
        },
    },
    Template {
        stem: "schedule_event",
        description: "Creates a calendar event and invites the attendees, optionally recurring.",
        schema: || {
            json!({
                "type": "object",
                "properties": {
                    "title": { "type": "string" },
                    "start": { "type": "string", "format": "date-time" },
                    "durationMinutes": { "type": "integer", "minimum": 5, "maximum": 1440, "default": 30 },
                    "attendees": {
                        "type": "array",
                        "items": {
                            "type": "object",
                            "properties": {
                                "email": { "type": "string", "format": "email" },
                                "optional": { "type": "boolean", "default": false }
                            },
                            "required": ["email"]
                        }
                    },
                    "recurrence": {
                        "type": "object",
                        "properties": {
                            "frequency": { "type": "string", "enum": ["daily", "weekly", "monthly"] },
                            "count": { "type": "integer", "minimum": 1 }
                        },
                        "required": ["frequency"]
                    }
                },
                "required": ["title", "start"]
            })
        },
    },
];

/// The listed tools: the core ones, then synthetic ones named `<stem>_<index>`, up to
/// `total` (never fewer than the core tools).
pub fn tools(total: usize) -> Vec<Tool> {
    let schemas: Vec<Arc<JsonObject>> = TEMPLATES.iter().map(|t| object((t.schema)())).collect();
    let mut tools = core_tools().to_vec();
    tools.extend((CORE_TOOLS..total).map(|index| {
        let kind = index % TEMPLATES.len();
        let template = &TEMPLATES[kind];
        Tool::new(
            synthetic_name(template.stem, index),
            template.description,
            // Shared: what goes on the wire is the same, and startup stays quick.
            schemas[kind].clone(),
        )
    }));
    tools
}

fn synthetic_name(stem: &str, index: usize) -> String {
    format!("{stem}_{index:05}")
}

/// Whether `name` is one of the synthetic tools of `tools`.
pub fn is_synthetic(tools: &[Tool], name: &str) -> bool {
    name.rsplit_once('_')
        .and_then(|(_, index)| index.parse::<usize>().ok())
        .filter(|&index| index >= CORE_TOOLS)
        .and_then(|index| tools.get(index))
        .is_some_and(|tool| tool.name == name)
}

/// Exactly `len` bytes of printable ASCII that need no escaping in JSON.
pub fn filler_text(len: usize) -> String {
    const LINE: &[u8] = b"The quick brown fox jumps over the lazy dog. 0123456789 ABCDEFGHIJ ";
    let mut bytes = Vec::with_capacity(len);
    while bytes.len() < len {
        let take = LINE.len().min(len - bytes.len());
        bytes.extend_from_slice(&LINE[..take]);
    }
    String::from_utf8(bytes).unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn totals_include_the_core_tools() {
        assert_eq!(tools(0).len(), CORE_TOOLS);
        assert_eq!(tools(5000).len(), 5000);
        assert_eq!(tools(5000)[4].name, "read_file_00004");
        assert_eq!(tools(5000)[8].name, "search_documents_00008");
    }

    #[test]
    fn synthetic_names_are_recognised() {
        let all = tools(20);
        assert!(is_synthetic(&all, "create_issue_00009"));
        assert!(!is_synthetic(&all, "create_issue_00010"));
        assert!(!is_synthetic(&all, "echo"));
        assert!(!is_synthetic(&all, "search_documents_00099"));
    }

    #[test]
    fn filler_text_has_the_exact_length() {
        for len in [0, 1, 67, 68, 8 << 20] {
            let text = filler_text(len);
            assert_eq!(text.len(), len);
            assert!(
                text.bytes()
                    .all(|b| (0x20..0x7f).contains(&b) && b != b'"' && b != b'\\')
            );
        }
    }
}
