//! Where tokens rest: the `TokenStore` trait over opaque strings (the host's, or a file
//! per server under the user's config directory), and the record toolnexus keeps in it
//! for one server.

use std::future::Future;
use std::io::Write;
use std::path::PathBuf;
use std::pin::Pin;
use std::sync::atomic::{AtomicU64, Ordering};

use rmcp::transport::auth::{AuthorizationMetadata, StoredCredentials};
use serde::{Deserialize, Serialize};

pub use super::token_store_error::{FileAction, StoreError};

pub type StoreFuture<'a, T> = Pin<Box<dyn Future<Output = Result<T, StoreError>> + Send + 'a>>;

/// A key-value store of opaque strings. Errors carry no value.
pub trait TokenStore: Send + Sync {
    fn get(&self, key: &str) -> StoreFuture<'_, Option<String>>;
    fn set(&self, key: &str, value: String) -> StoreFuture<'_, ()>;
    fn delete(&self, key: &str) -> StoreFuture<'_, ()>;
}

/// What toolnexus keeps for one server: the client it registered (or was given) with the
/// authorization server of `issuer`, that server's metadata, and the tokens.
#[derive(Clone, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Record {
    pub issuer: Option<String>,
    pub client_id: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub client_secret: Option<String>,
    /// The redirect URI the client was registered with.
    pub redirect_uri: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub metadata: Option<AuthorizationMetadata>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub credentials: Option<StoredCredentials>,
    /// The DPoP key the tokens are bound to (base64 PKCS#8), kept as they are.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub dpop_key: Option<String>,
}

impl Record {
    /// The stored record, or none when absent or unreadable (a record from another
    /// version of toolnexus is as good as none: the person signs in again).
    pub async fn load(store: &dyn TokenStore, key: &str) -> Result<Option<Record>, StoreError> {
        Ok(store
            .get(key)
            .await?
            .and_then(|text| serde_json::from_str(&text).ok()))
    }

    pub async fn save(&self, store: &dyn TokenStore, key: &str) -> Result<(), StoreError> {
        let text =
            serde_json::to_string(self).map_err(|e| StoreError::Unserialisable(e.to_string()))?;
        store.set(key, text).await
    }
}

/// The default store: one file per key in `$XDG_CONFIG_HOME/toolnexus/oauth/` (else
/// `~/.config/toolnexus/oauth/`), readable by the user alone, replaced atomically.
pub struct FileTokenStore {
    dir: Option<PathBuf>,
}

impl FileTokenStore {
    pub fn new() -> FileTokenStore {
        let base = std::env::var_os("XDG_CONFIG_HOME")
            .filter(|v| !v.is_empty())
            .map(PathBuf::from)
            .or_else(|| std::env::var_os("HOME").map(|home| PathBuf::from(home).join(".config")));
        FileTokenStore {
            dir: base.map(|base| base.join("toolnexus").join("oauth")),
        }
    }

    fn path(&self, key: &str) -> Result<PathBuf, StoreError> {
        let dir = self.dir.as_ref().ok_or(StoreError::NoFolder)?;
        Ok(dir.join(file_name(key)))
    }
}

impl Default for FileTokenStore {
    fn default() -> Self {
        FileTokenStore::new()
    }
}

impl TokenStore for FileTokenStore {
    fn get(&self, key: &str) -> StoreFuture<'_, Option<String>> {
        let path = self.path(key);
        Box::pin(async move {
            let path = path?;
            let reading = path.clone();
            let read = tokio::task::spawn_blocking(move || {
                std::io::read_to_string(open_regular(&reading)?)
            });
            match read.await.unwrap_or_else(|e| Err(std::io::Error::other(e))) {
                Ok(text) => Ok(Some(text)),
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
                Err(e) => Err(StoreError::file(FileAction::Read, &path, &e)),
            }
        })
    }

    fn set(&self, key: &str, value: String) -> StoreFuture<'_, ()> {
        let path = self.path(key);
        Box::pin(async move {
            let path = path?;
            tokio::task::spawn_blocking(move || write_private(&path, value.as_bytes()))
                .await
                .map_err(|e| StoreError::Unfinished(e.to_string()))?
        })
    }

    fn delete(&self, key: &str) -> StoreFuture<'_, ()> {
        let path = self.path(key);
        Box::pin(async move {
            let path = path?;
            match tokio::fs::remove_file(&path).await {
                Err(e) if e.kind() != std::io::ErrorKind::NotFound => {
                    Err(StoreError::file(FileAction::Remove, &path, &e))
                }
                _ => Ok(()),
            }
        })
    }
}

/// Opens `path` for reading if it is a regular file. A FIFO someone put in its place is
/// opened without waiting for a writer (a plain open would block until one came) and, like
/// a folder or a device, refused.
pub(crate) fn open_regular(path: &std::path::Path) -> std::io::Result<std::fs::File> {
    let mut options = std::fs::OpenOptions::new();
    options.read(true);
    #[cfg(unix)]
    std::os::unix::fs::OpenOptionsExt::custom_flags(&mut options, libc::O_NONBLOCK);
    let file = options.open(path)?;
    if !file.metadata()?.is_file() {
        return Err(std::io::Error::new(
            std::io::ErrorKind::InvalidInput,
            "not a regular file",
        ));
    }
    Ok(file)
}

/// Writes `bytes` to a fresh file beside `path` (mode 0600, in a 0700 folder), then
/// renames it over `path`: a reader sees the old record or the new one, never half.
pub(crate) fn write_private(path: &std::path::Path, bytes: &[u8]) -> Result<(), StoreError> {
    static NEXT: AtomicU64 = AtomicU64::new(0);
    let no_folder = std::io::Error::new(std::io::ErrorKind::InvalidInput, "no folder");
    let dir = path
        .parent()
        .ok_or_else(|| StoreError::file(FileAction::Write, path, &no_folder))?;
    let shown =
        |e: std::io::Error, what: &std::path::Path| StoreError::file(FileAction::Write, what, &e);
    let mut folder = std::fs::DirBuilder::new();
    folder.recursive(true);
    #[cfg(unix)]
    std::os::unix::fs::DirBuilderExt::mode(&mut folder, 0o700);
    folder.create(dir).map_err(|e| shown(e, dir))?;
    let temp = dir.join(format!(
        ".{}.{}.{}.tmp",
        path.file_name()
            .and_then(|n| n.to_str())
            .unwrap_or("record"),
        std::process::id(),
        NEXT.fetch_add(1, Ordering::Relaxed)
    ));
    let mut options = std::fs::OpenOptions::new();
    options.write(true).create_new(true);
    #[cfg(unix)]
    std::os::unix::fs::OpenOptionsExt::mode(&mut options, 0o600);
    let written = options.open(&temp).and_then(|mut file| {
        file.write_all(bytes)?;
        file.sync_all()
    });
    let renamed = written.and_then(|()| std::fs::rename(&temp, path));
    if let Err(e) = renamed {
        let _ = std::fs::remove_file(&temp);
        return Err(shown(e, path));
    }
    Ok(())
}

/// A file name for `key` (a server URL): safe characters kept, others as `%XX`; a long
/// key keeps its start and a hash of the whole.
fn file_name(key: &str) -> String {
    let mut name = String::new();
    for byte in key.bytes() {
        match byte {
            b'a'..=b'z' | b'A'..=b'Z' | b'0'..=b'9' | b'-' | b'.' | b'_' => name.push(byte as char),
            other => name.push_str(&format!("%{other:02X}")),
        }
    }
    if name.len() > 180 {
        name.truncate(160);
        name.push_str(&format!("~{:016x}", fnv1a(key.as_bytes())));
    }
    name.push_str(".json");
    name
}

/// FNV-1a, 64 bits: stable across builds, unlike the standard library's hasher.
fn fnv1a(bytes: &[u8]) -> u64 {
    bytes.iter().fold(0xcbf2_9ce4_8422_2325, |hash, byte| {
        (hash ^ u64::from(*byte)).wrapping_mul(0x0100_0000_01b3)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn file_names_are_safe_and_bounded() {
        assert_eq!(
            file_name("http://127.0.0.1:80/mcp"),
            "http%3A%2F%2F127.0.0.1%3A80%2Fmcp.json"
        );
        let long = format!("https://x/{}", "a".repeat(400));
        let name = file_name(&long);
        assert!(name.len() < 200 && name.ends_with(".json"));
        assert_ne!(name, file_name(&format!("{long}b")));
    }

    #[tokio::test]
    async fn files_are_private_and_replaced_whole() {
        let dir = std::env::temp_dir().join(format!("toolnexus-store-{}", std::process::id()));
        let store = FileTokenStore {
            dir: Some(dir.join("oauth")),
        };
        assert_eq!(store.get("k").await, Ok(None));
        store.set("k", "one".into()).await.unwrap_or_default();
        store.set("k", "two".into()).await.unwrap_or_default();
        assert_eq!(store.get("k").await, Ok(Some("two".into())));
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            let mode = std::fs::metadata(store.path("k").unwrap_or_default())
                .map(|m| m.permissions().mode() & 0o777);
            assert_eq!(mode.ok(), Some(0o600));
        }
        let files = std::fs::read_dir(dir.join("oauth")).map(|d| d.count()).ok();
        assert_eq!(files, Some(1), "no temporary file is left behind");
        store.delete("k").await.unwrap_or_default();
        assert_eq!(store.get("k").await, Ok(None));
        let _ = std::fs::remove_dir_all(dir);
    }
}
