//! The persisted catalog: each server's last live listing, kept on disk so that a store
//! lists every tool at once while its servers connect. A file per entry, named by a digest
//! of the entry without its secrets (a `private` listing, or one whose scope is unsaid
//! from an entry that has secrets, by a digest that includes them, so that it is never
//! shared across users); written atomically with mode 0600; a listing with a positive
//! `ttlMs` is shown only until it runs out. What it holds is only ever shown: calls wait
//! for the live server. A file that is corrupt, foreign or stale is ignored, and replaced
//! at the next live listing.

use std::borrow::Cow;
use std::ffi::OsString;
use std::io::Read;
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use ring::digest::{SHA256, digest};
use serde::{Deserialize, Serialize};
use serde_json::value::RawValue;

use crate::auth::token_store::{open_regular, write_private};
use crate::config::{ProtocolChoice, ServerSpec, TransportSpec};
use crate::lock::lock;
use crate::tool::listed::{CacheHints, ListedTool, ToolView};

/// What every catalog file says it is: a file without it is none of ours.
const FORMAT: &str = "toolnexus-catalog/1";
/// A catalog file larger than this is not read.
const MAX_FILE: u64 = 64 << 20;

/// The folder of catalog files: `$XDG_CACHE_HOME/toolnexus/catalog`, else the platform's
/// cache folder's `toolnexus/catalog`. `None` when there is none to be found.
pub fn default_dir() -> Option<PathBuf> {
    dir_for(std::env::consts::OS, &|name| std::env::var_os(name))
}

/// [`default_dir`] on operating system `os` (as `std::env::consts::OS` names it), with the
/// environment `var`.
fn dir_for(os: &str, var: &dyn Fn(&str) -> Option<OsString>) -> Option<PathBuf> {
    let var = |name: &str| var(name).filter(|v| !v.is_empty()).map(PathBuf::from);
    let base = var("XDG_CACHE_HOME")
        .filter(|p| p.is_absolute())
        .or_else(|| match os {
            "windows" => var("LOCALAPPDATA"),
            "macos" => var("HOME").map(|home| home.join("Library").join("Caches")),
            _ => var("HOME").map(|home| home.join(".cache")),
        })?;
    Some(base.join("toolnexus").join("catalog"))
}

/// Where one server's listing rests: a file in the catalog's folder, if there is one, and
/// a key of the shared state, if the store has one; both named by the same digest.
pub struct Slot {
    dir: Option<PathBuf>,
    /// The digest of listings anyone with this entry may share.
    public: String,
    /// The digest of listings only the holder of this entry's secrets may see.
    private: String,
    /// Whether the entry has secrets: then a listing of unsaid scope is private.
    has_secrets: bool,
    /// The listing as last written, not to write the same again.
    last: Mutex<Last>,
    /// The document last written, to write again into a shared state that lost it.
    document: Mutex<Option<Document>>,
}

/// The listing a slot last kept, known by the digest of its tools' JSON. Hashed only when
/// a write asks: a store's start reads every listing, and hashing them was a tenth of it.
#[derive(Default)]
enum Last {
    /// None written yet: the first write takes it from the file it would replace.
    #[default]
    Unread,
    /// A document of the shared state, adopted as this slot's own.
    Adopted(String),
    Digest(String),
}

/// A listing as it is kept: the catalog file's text, and the digest it is named by.
#[derive(Clone)]
pub struct Document {
    pub digest: String,
    pub text: String,
    /// How long it stays fresh, when the server said.
    pub ttl: Option<Duration>,
}

/// A catalog file; `T` is its tools: their JSON text, or, read at a store's start, the
/// tools themselves, decoded in the same pass as the rest.
#[derive(Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
struct File<'a, T> {
    format: Cow<'a, str>,
    /// The digest the file is named by: a file copied under another name is foreign.
    key: Cow<'a, str>,
    /// Milliseconds since the epoch after which the listing is stale, if it ever is.
    expires_at: Option<f64>,
    tools: T,
}

impl<T> File<'_, T> {
    /// Whether it is a catalog document kept under `digest`.
    fn is_named(&self, digest: &str) -> bool {
        self.format == FORMAT && self.key == digest
    }

    /// Whether it is a catalog file, named by its own key.
    fn is_ours(&self, path: &Path) -> bool {
        let named = path.file_stem().and_then(|s| s.to_str());
        named.is_some_and(|digest| self.is_named(digest))
    }

    fn is_stale(&self) -> bool {
        self.expires_at
            .is_some_and(|at| at.is_nan() || at <= now_ms())
    }
}

impl Slot {
    pub fn new(dir: Option<&Path>, spec: &ServerSpec) -> Slot {
        let (key, secrets) = entry_key(spec);
        let public = hex_digest(&[key.as_bytes()]);
        let mut parts = vec![key.as_bytes(), b"\0secrets"];
        parts.extend(
            secrets
                .iter()
                .flat_map(|s| [b"\0".as_slice(), s.as_bytes()]),
        );
        let private = hex_digest(&parts);
        Slot {
            dir: dir.map(Path::to_owned),
            public,
            private,
            has_secrets: !secrets.is_empty(),
            last: Mutex::default(),
            document: Mutex::default(),
        }
    }

    /// The digest of what anyone with this entry may share.
    pub fn public_digest(&self) -> &str {
        &self.public
    }

    /// The digests its listings may be kept under: the private one first.
    pub fn digests(&self) -> [&str; 2] {
        [&self.private, &self.public]
    }

    fn path(&self, digest: &str) -> Option<PathBuf> {
        Some(self.dir.as_ref()?.join(format!("{digest}.json")))
    }

    /// The listing on disk, if one is there, ours, whole and fresh: the private one first.
    /// The file is read into `buffer`, which a store's start reuses from file to file:
    /// memory a process touches for the first time costs microseconds a page, and a fresh
    /// buffer per file was a third of reading the catalog.
    pub fn read(&self, buffer: &mut Vec<u8>) -> Option<Vec<ListedTool>> {
        self.digests()
            .into_iter()
            .filter_map(|digest| self.path(digest))
            .find_map(|path| read_tools(&path, buffer))
    }

    /// Keeps a live listing, unless it is the one already kept, and answers the document
    /// it kept (`None`: the same as before). A positive `ttlMs` gives it an expiry; 0 is
    /// no hint, as for the store's re-listing (the kept listing is only ever shown until
    /// the live one comes). A failure to write the file costs only the file.
    pub fn write(&self, tools: &[ListedTool], hints: CacheHints) -> Option<Document> {
        let private = hints.private.unwrap_or(self.has_secrets);
        let (digest, other) = match private {
            true => (&self.private, &self.public),
            false => (&self.public, &self.private),
        };
        let mut last = lock(&self.last);
        // Kept as a `tools/list` page's array, read back through the same decoder.
        let json = wire_array(tools);
        let lifetime = hints.ttl_ms.filter(|ms| ms.is_finite() && *ms > 0.0);
        // A listing with a lifetime is written again to move its expiry.
        let tools_digest = hex_digest(&[json.as_bytes()]);
        let path = self.path(digest);
        let last_digest = match std::mem::take(&mut *last) {
            Last::Unread => path.as_deref().and_then(written_digest),
            Last::Adopted(text) => tools_digest_of(text.as_bytes(), |_| true),
            Last::Digest(digest) => Some(digest),
        };
        if lifetime.is_none() && last_digest.as_deref() == Some(tools_digest.as_str()) {
            *last = Last::Digest(tools_digest);
            return None;
        }
        let expires_at = lifetime.map(|ms| now_ms() + ms);
        let raw = RawValue::from_string(json).ok()?;
        let file = File {
            format: FORMAT.into(),
            key: digest.into(),
            expires_at,
            tools: &raw,
        };
        let text = serde_json::to_string(&file).ok()?;
        if let Some(path) = &path
            && write_private(path, text.as_bytes()).is_ok()
        {
            let _ = self.path(other).map(std::fs::remove_file);
        }
        *last = Last::Digest(tools_digest);
        let document = Document {
            digest: digest.clone(),
            text,
            ttl: lifetime.map(|ms| Duration::from_millis(ms as u64)),
        };
        *lock(&self.document) = Some(document.clone());
        Some(document)
    }

    /// The document last written, if any.
    pub fn last_document(&self) -> Option<Document> {
        lock(&self.document).clone()
    }

    /// Takes a listing kept elsewhere (the shared state's `text` under `digest`) as this
    /// slot's own: its tools, when it is whole, ours and fresh, and from then on the
    /// listing a live one is compared with.
    pub fn adopt(&self, digest: &str, text: String) -> Option<Vec<ListedTool>> {
        let file: File<Vec<ToolView>> = serde_json::from_str(&text).ok()?;
        if !file.is_named(digest) || file.is_stale() {
            return None;
        }
        let tools = file.tools.into_iter().map(ListedTool::from).collect();
        *lock(&self.last) = Last::Adopted(text);
        Some(tools)
    }
}

/// The listing in `path`, when the file is a whole, fresh catalog file named by its own key.
fn read_tools(path: &Path, buffer: &mut Vec<u8>) -> Option<Vec<ListedTool>> {
    read_bounded(path, buffer)?;
    let file: File<Vec<ToolView>> = serde_json::from_slice(buffer).ok()?;
    if !file.is_ours(path) || file.is_stale() {
        return None;
    }
    Some(file.tools.into_iter().map(ListedTool::from).collect())
}

/// The digest of the tools' JSON in `path`, when it is one of ours.
fn written_digest(path: &Path) -> Option<String> {
    let mut bytes = Vec::new();
    read_bounded(path, &mut bytes)?;
    tools_digest_of(&bytes, |file| file.is_ours(path))
}

/// The digest of the tools' JSON as written in a catalog document, when `ours` takes it.
fn tools_digest_of(document: &[u8], ours: impl FnOnce(&File<&RawValue>) -> bool) -> Option<String> {
    let file: File<&RawValue> = serde_json::from_slice(document).ok()?;
    ours(&file).then(|| hex_digest(&[file.tools.get().as_bytes()]))
}

/// Reads the file at `path` into `buffer` (replacing what it held), unless it is larger
/// than `MAX_FILE` or no regular file: a store's start must not wait on a FIFO.
fn read_bounded(path: &Path, buffer: &mut Vec<u8>) -> Option<()> {
    let file = open_regular(path).ok()?;
    let size = file.metadata().ok()?.len();
    if size > MAX_FILE {
        return None;
    }
    buffer.clear();
    buffer.reserve(usize::try_from(size).ok()?);
    // Bounded again: the file may grow while it is read.
    file.take(MAX_FILE + 1).read_to_end(buffer).ok()?;
    (buffer.len() as u64 <= MAX_FILE).then_some(())
}

/// The entry as the key of its listing: what decides which server runs and what it is
/// told, without secret values (only the names of its variables and headers); and,
/// apart, those values.
fn entry_key(spec: &ServerSpec) -> (String, Vec<&str>) {
    let protocol = match spec.protocol {
        ProtocolChoice::Auto => "auto",
        ProtocolChoice::Modern => "2026-07-28",
        ProtocolChoice::Legacy => "2025-11-25",
    };
    let (key, secrets) = match &spec.transport {
        TransportSpec::Local(local) => {
            let command: Vec<&str> = std::iter::once(local.program.as_str())
                .chain(local.args.iter().map(String::as_str))
                .collect();
            let names: Vec<&str> = local.env.iter().map(|(name, _)| name.as_str()).collect();
            let key = serde_json::json!({
                "command": command,
                "cwd": local.cwd,
                "env": names,
                "inheritEnv": local.inherit_env,
                "protocol": protocol,
            });
            (key, local.env.iter().map(|(_, v)| v.as_str()).collect())
        }
        TransportSpec::Remote(remote) => {
            let names: Vec<&str> = remote
                .headers
                .iter()
                .map(|(name, _)| name.as_str())
                .collect();
            let client = remote.oauth.as_ref().and_then(|o| o.client_id.as_deref());
            let key = serde_json::json!({
                "url": remote.url,
                "headers": names,
                "oauthClient": client,
                "protocol": protocol,
            });
            let secrets = remote.headers.iter().map(|(_, v)| v.as_str());
            let oauth = remote.oauth.iter().flat_map(|o| o.secrets());
            (key, secrets.chain(oauth).collect())
        }
    };
    (key.to_string(), secrets)
}

/// The lowercase hex SHA-256 of `parts` joined.
pub(crate) fn hex_digest(parts: &[&[u8]]) -> String {
    let bytes: Vec<u8> = parts.concat();
    let hash = digest(&SHA256, &bytes);
    hash.as_ref().iter().map(|b| format!("{b:02x}")).collect()
}

/// Milliseconds since the Unix epoch, as the catalog and the fleet write times.
pub(crate) fn now_ms() -> f64 {
    let since = SystemTime::now().duration_since(UNIX_EPOCH);
    since.unwrap_or(Duration::ZERO).as_millis() as f64
}

fn wire_array(tools: &[ListedTool]) -> String {
    let mut out = String::from("[");
    for (i, tool) in tools.iter().enumerate() {
        if i > 0 {
            out.push(',');
        }
        tool.write_wire(&mut out);
    }
    out.push(']');
    out
}

#[cfg(test)]
#[path = "catalog_tests.rs"]
mod tests;
