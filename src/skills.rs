//! Skills (SEP-2640, the `io.modelcontextprotocol/skills` extension): a server's skills
//! listed from their entries, a skill loaded, and its files read when asked for. Every
//! file is checked against the entry the host holds (its size, then its SHA-256 digest;
//! for `SKILL.md`, its frontmatter too) before anything of it is returned, and nothing is
//! read before a load: the listing alone says what a skill is.

mod content;
pub mod frontmatter;

use std::sync::Arc;

use rmcp::model::{Skill, SkillIntegrityError, SkillResources, validate_skills};
use serde::Deserialize;
use serde_json::value::RawValue;
use serde_json::{Map, Value};
use tokio_util::sync::CancellationToken;

use crate::code::Code;
use crate::session::offers::{GET_SKILL, Offered};
use crate::session::{CacheMode, Failure, Params, Session};

/// The spec's limits on one skill, which every host must accept and may hold to.
pub const MAX_RESOURCES: usize = 512;
pub const MAX_TOTAL_BYTES: u64 = 16 * 1024 * 1024;

const SKILL_MD: &str = "SKILL.md";

/// Why a skill could not be listed, loaded or read. Its `Display` follows the server's
/// name: `MCP server "docs" skill "pdf" ...`.
#[derive(Debug)]
pub enum SkillError {
    /// The request failed, as any request may.
    Request(Failure),
    /// An entry breaks the extension's rules, or the skill is over a limit.
    Invalid(String),
    /// A file is not what the held entry says.
    Mismatch {
        skill: String,
        file: String,
        why: String,
    },
    /// A file asked for is not in the held entry's listing.
    Unlisted { skill: String, file: String },
    /// No skill of that name, or no skills at all.
    Unknown(String),
    /// Two or more listed skills carry the name asked for.
    Ambiguous { name: String, uris: Vec<String> },
}

impl SkillError {
    pub fn code(&self) -> Code {
        match self {
            SkillError::Request(Failure::Reason(reason)) => reason.kind().code(),
            SkillError::Request(Failure::Aborted) => Code::Aborted,
            SkillError::Invalid(_) | SkillError::Mismatch { .. } | SkillError::Unlisted { .. } => {
                Code::SkillRejected
            }
            SkillError::Unknown(_) => Code::UnknownSkill,
            SkillError::Ambiguous { .. } => Code::InvalidArgument,
        }
    }
}

impl std::fmt::Display for SkillError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            SkillError::Request(Failure::Reason(reason)) => write!(f, "{reason}"),
            SkillError::Request(Failure::Aborted) => f.write_str("aborted"),
            SkillError::Invalid(why) => write!(f, "lists a skill that cannot be loaded: {why}"),
            SkillError::Mismatch { skill, file, why } => {
                write!(f, "skill {skill}: {file} fails verification: {why}")
            }
            SkillError::Unlisted { skill, file } => {
                write!(f, "skill {skill}: {file} is not in the listing")
            }
            SkillError::Unknown(name) => write!(f, "serves no skill \"{name}\""),
            SkillError::Ambiguous { name, uris } => write!(
                f,
                "lists {} skills named \"{name}\" ({}): name one by its URI",
                uris.len(),
                uris.join(", ")
            ),
        }
    }
}

impl From<Failure> for SkillError {
    fn from(failure: Failure) -> Self {
        SkillError::Request(failure)
    }
}

/// A loaded skill: the entry it was loaded from and its `SKILL.md`, verified.
pub struct Loaded {
    pub entry: Skill,
    pub frontmatter: Map<String, Value>,
    pub body: String,
    pub mime_type: Option<String>,
    /// Whether its files carry digests (`false` for a `"dynamic"` skill).
    pub verified: bool,
}

/// A file of a skill as read and checked.
pub struct File {
    pub uri: String,
    pub bytes: usize,
    pub text: Option<String>,
    pub blob: Option<String>,
    pub mime_type: Option<String>,
}

/// Every skill `session` lists, each entry checked; empty when it declares no skills.
/// The listing is kept as its freshness says (`mode`, see `Session::offered`).
pub async fn list(
    session: &Session,
    mode: CacheMode,
    trace: Option<Arc<str>>,
    cancel: &CancellationToken,
) -> Result<Vec<Skill>, SkillError> {
    let listed = session
        .offered(Offered::Skills, mode, trace, cancel)
        .await?;
    let raw: Vec<Box<RawValue>> = serde_json::from_str(&listed)
        .map_err(|e| SkillError::Invalid(format!("skills/list: {e}")))?;
    let skills = raw
        .iter()
        .map(|entry| parsed(entry.get()))
        .collect::<Result<Vec<_>, _>>()?;
    validate_skills(&skills).map_err(|e| SkillError::Invalid(e.to_string()))?;
    Ok(skills)
}

/// An entry as sent, or why it is not one.
fn parsed(json: &str) -> Result<Skill, SkillError> {
    serde_json::from_str(json).map_err(|e| {
        let uri = serde_json::from_str::<Value>(json).ok();
        let uri = uri
            .as_ref()
            .and_then(|v| v.get("uri"))
            .and_then(Value::as_str);
        SkillError::Invalid(format!("{}: {e}", uri.unwrap_or("an entry")))
    })
}

/// The entry of `skill`: by its `SKILL.md` URI (`skills/get`, so an unlisted skill is
/// found too), or by its name in the listing.
pub async fn entry(
    session: &Session,
    skill: &str,
    trace: Option<Arc<str>>,
    cancel: &CancellationToken,
) -> Result<Skill, SkillError> {
    if !skill.contains("://") {
        let mut named: Vec<Skill> = list(session, CacheMode::Use, trace, cancel).await?;
        named.retain(|entry| entry.frontmatter.name == skill);
        return match named.len() {
            0 => Err(SkillError::Unknown(skill.to_owned())),
            1 => Ok(named.remove(0)),
            _ => Err(SkillError::Ambiguous {
                name: skill.to_owned(),
                uris: named.into_iter().map(|entry| entry.uri).collect(),
            }),
        };
    }
    if !session.offers("skills") {
        return Err(SkillError::Unknown(skill.to_owned()));
    }
    #[derive(Deserialize)]
    struct Got {
        skill: Box<RawValue>,
    }
    let members = format!("\"uri\":{}", Value::from(skill));
    let result = session
        .request(&GET_SKILL, Params { members, trace }, cancel)
        .await?;
    let got: Got = serde_json::from_str(result.get())
        .map_err(|e| SkillError::Invalid(format!("skills/get for {skill}: {e}")))?;
    let entry = parsed(got.skill.get())?;
    if entry.uri != skill {
        let why = format!("skills/get for {skill} answered {}", entry.uri);
        return Err(SkillError::Invalid(why));
    }
    validate_skills(std::slice::from_ref(&entry))
        .map_err(|e| SkillError::Invalid(e.to_string()))?;
    Ok(entry)
}

/// Loads `skill` (see `entry`): its limits checked from the entry before anything is
/// read, then its `SKILL.md` read and verified, frontmatter included.
pub async fn load(
    session: &Session,
    skill: &str,
    trace: Option<Arc<str>>,
    cancel: &CancellationToken,
) -> Result<Loaded, SkillError> {
    let entry = entry(session, skill, trace.clone(), cancel).await?;
    within_limits(&entry)?;
    let file = read(session, &entry, SKILL_MD, 0, trace, cancel).await?;
    let mismatch = |why: String| SkillError::Mismatch {
        skill: quoted(&entry),
        file: SKILL_MD.to_owned(),
        why,
    };
    let Some(text) = file.text else {
        return Err(mismatch("it was sent as a blob, not text".to_owned()));
    };
    let (yaml, body) =
        frontmatter::split(&text).ok_or_else(|| mismatch("it has no frontmatter".to_owned()))?;
    let fields = frontmatter::parse(yaml).map_err(mismatch)?;
    let listed = serde_json::to_value(&entry.frontmatter).unwrap_or_default();
    let listed = listed.as_object().cloned().unwrap_or_default();
    let differences = frontmatter::differences(&fields, &listed);
    if !differences.is_empty() {
        let why = format!(
            "its frontmatter differs from the listing's ({})",
            differences.join("; ")
        );
        return Err(mismatch(why));
    }
    let body = body.to_owned();
    let verified = matches!(entry.resources, SkillResources::Files(_));
    let mime_type = file.mime_type;
    Ok(Loaded {
        entry,
        frontmatter: fields,
        body,
        mime_type,
        verified,
    })
}

/// `"name" (uri)`, how a message names a skill.
fn quoted(entry: &Skill) -> String {
    format!("\"{}\" ({})", entry.frontmatter.name, entry.uri)
}

/// The spec's limits, counted over the entry's listing before any file is read.
fn within_limits(entry: &Skill) -> Result<(), SkillError> {
    let SkillResources::Files(files) = &entry.resources else {
        return Ok(());
    };
    let total: u64 = files
        .iter()
        .map(|file| file.size)
        .fold(0, u64::saturating_add);
    if files.len() > MAX_RESOURCES || total > MAX_TOTAL_BYTES {
        let why = format!(
            "skill {} lists {} files of {total} bytes in all, over the limits of {MAX_RESOURCES} files and {MAX_TOTAL_BYTES} bytes",
            quoted(entry),
            files.len()
        );
        return Err(SkillError::Invalid(why));
    }
    Ok(())
}

/// The URI `reference` names in `entry`'s skill: a URI as it is (without its fragment),
/// or a path relative to the skill's root.
fn resolve(entry: &Skill, reference: &str) -> String {
    let reference = reference.split('#').next().unwrap_or_default();
    if reference.contains("://") {
        return reference.to_owned();
    }
    let root = entry.uri.strip_suffix(SKILL_MD).unwrap_or(&entry.uri);
    format!("{root}{}", reference.trim_start_matches("./"))
}

/// Reads the file `reference` (see `resolve`) of the skill `entry` describes, after
/// `retrieved` bytes of it were read: a file not in the listing is refused before any
/// request, and what is read is checked against its listing (size, then digest); a
/// `"dynamic"` skill's files, which carry none, are held to the skill's total size.
pub async fn read(
    session: &Session,
    entry: &Skill,
    reference: &str,
    retrieved: u64,
    trace: Option<Arc<str>>,
    cancel: &CancellationToken,
) -> Result<File, SkillError> {
    let uri = resolve(entry, reference);
    let root = entry.uri.strip_suffix(SKILL_MD).unwrap_or(&entry.uri);
    let listed = match &entry.resources {
        SkillResources::Files(files) => files.iter().find(|file| file.uri == uri),
        _ => None,
    };
    let unlisted = || SkillError::Unlisted {
        skill: quoted(entry),
        file: reference.to_owned(),
    };
    let dynamic = matches!(entry.resources, SkillResources::Dynamic);
    if listed.is_none() && !(dynamic && uri.starts_with(root) && uri.len() > root.len()) {
        return Err(unlisted());
    }
    // Never from what is kept: a file is checked as it is now.
    let result = session.read(&uri, CacheMode::Bypass, trace, cancel).await?;
    let mismatch = |why: String| SkillError::Mismatch {
        skill: quoted(entry),
        file: uri.clone(),
        why,
    };
    let read = content::of(&result, &uri).map_err(mismatch)?;
    match listed {
        Some(file) => file
            .verify(&read.bytes)
            .map_err(|e| mismatch(integrity(e)))?,
        None if retrieved.saturating_add(read.bytes.len() as u64) > MAX_TOTAL_BYTES => {
            let why = format!("the skill's files pass {MAX_TOTAL_BYTES} bytes with it");
            return Err(mismatch(why));
        }
        None => {}
    }
    Ok(File {
        bytes: read.bytes.len(),
        uri,
        text: read.text,
        blob: read.blob,
        mime_type: read.mime_type,
    })
}

/// A failed check in the words of the listing.
fn integrity(error: SkillIntegrityError) -> String {
    match error {
        SkillIntegrityError::Size {
            expected, actual, ..
        } => {
            format!("its size is {actual} bytes, the listing says {expected}")
        }
        SkillIntegrityError::Digest {
            expected, actual, ..
        } => {
            format!("its digest is {actual}, the listing says {expected}")
        }
        other => other.to_string(),
    }
}
