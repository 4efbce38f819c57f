//! A host's skill requests (`skills`, `skills/load`, `skills/read` of `ask`) and their
//! answers as JSON text. The entry a loaded skill's files are checked against comes back
//! with each read: the host holds it, as the spec has the host hold it.

use std::sync::Arc;

use rmcp::model::{Skill, SkillResources};
use serde::Deserialize;
use serde_json::{Map, Value, json};
use tokio_util::sync::CancellationToken;

use super::failure::named;
use crate::code::Coded;
use crate::session::{CacheMode, Session};
use crate::skills::{self, SkillError};

/// One of a host's skill requests.
pub(super) enum SkillAsk {
    List(CacheMode),
    Load {
        skill: String,
    },
    Read {
        entry: Box<Skill>,
        path: String,
        retrieved: u64,
    },
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct ReadParams {
    entry: Box<Skill>,
    path: String,
    #[serde(default)]
    retrieved: u64,
}

impl SkillAsk {
    /// The request `kind` names with `params` (the listing kept as `mode` says); `None`
    /// when `kind` is no skill request.
    pub(super) fn new(
        kind: &str,
        params: Map<String, Value>,
        mode: CacheMode,
    ) -> Option<Result<SkillAsk, String>> {
        let ask = match kind {
            "skills" => Ok(SkillAsk::List(mode)),
            "skills/load" => params
                .get("skill")
                .and_then(Value::as_str)
                .map(|skill| SkillAsk::Load {
                    skill: skill.to_owned(),
                })
                .ok_or_else(|| "a skill name or URI is required".to_owned()),
            "skills/read" => serde_json::from_value::<ReadParams>(Value::Object(params))
                .map(|p| SkillAsk::Read {
                    entry: p.entry,
                    path: p.path,
                    retrieved: p.retrieved,
                })
                .map_err(|e| e.to_string()),
            _ => return None,
        };
        Some(ask)
    }

    /// The answer as JSON text; a failure names the server.
    pub(super) async fn run(
        self,
        session: &Session,
        trace: Option<Arc<str>>,
        cancel: &CancellationToken,
    ) -> Result<String, Coded> {
        let coded = |error: SkillError| match error {
            SkillError::Request(failure) => named(session, failure),
            other => Coded::new(
                other.code(),
                format!("MCP server \"{}\" {other}", session.name()),
            ),
        };
        let answer = match self {
            SkillAsk::List(mode) => {
                let listed = skills::list(session, mode, trace, cancel)
                    .await
                    .map_err(coded)?;
                Value::Array(listed.iter().map(listing).collect())
            }
            SkillAsk::Load { skill } => {
                let loaded = skills::load(session, &skill, trace, cancel)
                    .await
                    .map_err(coded)?;
                let mut answer = listing(&loaded.entry);
                answer["frontmatter"] = Value::Object(loaded.frontmatter);
                answer["body"] = Value::from(loaded.body);
                answer["files"] = files(&loaded.entry);
                answer["verified"] = Value::from(loaded.verified);
                answer["mimeType"] = json!(loaded.mime_type);
                answer["entry"] = json!(loaded.entry);
                answer
            }
            SkillAsk::Read {
                entry,
                path,
                retrieved,
            } => {
                let read = skills::read(session, &entry, &path, retrieved, trace, cancel);
                let file = read.await.map_err(coded)?;
                let mut answer = json!({
                    "path": relative(&entry, &file.uri),
                    "uri": file.uri,
                    "size": file.bytes,
                });
                let members = [
                    ("mimeType", file.mime_type),
                    ("text", file.text),
                    ("blob", file.blob),
                ];
                for (key, value) in members {
                    if let Some(value) = value {
                        answer[key] = Value::from(value);
                    }
                }
                answer
            }
        };
        Ok(answer.to_string())
    }
}

/// An entry as a host lists it: its own members and the skill's name.
fn listing(entry: &Skill) -> Value {
    json!({
        "uri": entry.uri,
        "name": entry.frontmatter.name,
        "frontmatter": entry.frontmatter,
        "resources": entry.resources,
    })
}

/// The skill's files other than its `SKILL.md`, each with its path in the skill.
fn files(entry: &Skill) -> Value {
    let SkillResources::Files(files) = &entry.resources else {
        return json!([]);
    };
    let others = files.iter().filter(|file| file.uri != entry.uri);
    others
        .map(|file| json!({ "path": relative(entry, &file.uri), "uri": file.uri, "size": file.size }))
        .collect()
}

/// `uri`'s path from the skill's root (the directory of its `SKILL.md`).
fn relative(entry: &Skill, uri: &str) -> String {
    let root = entry.uri.rsplit_once('/').map_or("", |(root, _)| root);
    uri.strip_prefix(root)
        .and_then(|path| path.strip_prefix('/'))
        .unwrap_or(uri)
        .to_owned()
}
