use super::*;
use crate::config::{McpConfig, ServerState};

fn spec(entry: serde_json::Value) -> ServerSpec {
    let config = McpConfig::from_server_map(serde_json::Map::from_iter([("s".into(), entry)]));
    match config.servers.into_iter().next().map(|e| e.state) {
        Some(ServerState::Enabled(spec)) => spec,
        _ => panic!("an enabled entry"),
    }
}

fn tools(names: &[&str]) -> Vec<ListedTool> {
    let schema = |s: &str| RawValue::from_string(s.to_owned()).expect("JSON");
    let tool = |name: &&str| ListedTool {
        name: name.to_string(),
        title: None,
        extra: None,
        description: Some(format!("does {name}")),
        input_schema: schema(r#"{"type":"object","properties":{"q":{"type":"string"}}}"#),
    };
    names.iter().map(tool).collect()
}

fn names(tools: &[ListedTool]) -> Vec<&str> {
    tools.iter().map(|t| t.name.as_str()).collect()
}

fn temp_dir(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("toolnexus-catalog-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    dir
}

const SECRET: &str = "hunter2-very-secret-token";

#[test]
fn a_listing_survives_and_keeps_no_secret() {
    let dir = temp_dir("survives");
    let entry = serde_json::json!({ "url": "https://example.com/mcp", "headers": { "Authorization": format!("Bearer {SECRET}") } });
    let hints = CacheHints {
        ttl_ms: None,
        private: Some(false),
    };
    Slot::new(Some(&dir), &spec(entry.clone())).write(&tools(&["a", "b"]), hints);
    let read = Slot::new(Some(&dir), &spec(entry.clone()))
        .read(&mut Vec::new())
        .expect("the listing");
    assert_eq!(names(&read), ["a", "b"]);
    let other = serde_json::json!({ "url": "https://example.com/mcp", "headers": { "Authorization": "Bearer someone-else-entirely" } });
    let shared = Slot::new(Some(&dir), &spec(other))
        .read(&mut Vec::new())
        .expect("a public listing is shared");
    assert_eq!(names(&shared), ["a", "b"]);
    for file in std::fs::read_dir(&dir).expect("the folder") {
        let path = file.expect("an entry").path();
        let text = std::fs::read_to_string(&path).expect("a text file");
        assert!(!text.contains("hunter2"), "{text}");
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            let mode = std::fs::metadata(&path)
                .expect("metadata")
                .permissions()
                .mode();
            assert_eq!(mode & 0o777, 0o600);
        }
    }
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn a_private_listing_is_never_shared_across_secrets() {
    let dir = temp_dir("private");
    let entry = |token: &str| serde_json::json!({ "url": "https://example.com/mcp", "headers": { "Authorization": format!("Bearer {token}") } });
    // Unsaid scope and an entry with secrets: private.
    let hints = CacheHints {
        ttl_ms: None,
        private: None,
    };
    Slot::new(Some(&dir), &spec(entry(SECRET))).write(&tools(&["mine"]), hints);
    assert!(
        Slot::new(Some(&dir), &spec(entry("another-users-token")))
            .read(&mut Vec::new())
            .is_none()
    );
    let mine = Slot::new(Some(&dir), &spec(entry(SECRET)))
        .read(&mut Vec::new())
        .expect("the owner's");
    assert_eq!(names(&mine), ["mine"]);
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn an_expired_listing_is_not_shown() {
    let dir = temp_dir("ttl");
    let entry = serde_json::json!({ "command": ["server"] });
    let slot = Slot::new(Some(&dir), &spec(entry.clone()));
    slot.write(&tools(&["a"]), CacheHints::default());
    assert!(slot.read(&mut Vec::new()).is_some());
    slot.write(
        &tools(&["b"]),
        CacheHints {
            ttl_ms: Some(0.0),
            private: None,
        },
    );
    let kept = slot.read(&mut Vec::new()).expect("ttlMs 0 is no hint");
    assert_eq!(names(&kept), ["b"]);
    slot.write(
        &tools(&["a"]),
        CacheHints {
            ttl_ms: Some(1.0),
            private: None,
        },
    );
    std::thread::sleep(Duration::from_millis(20));
    assert!(slot.read(&mut Vec::new()).is_none(), "expired");
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn corrupt_and_foreign_files_are_ignored_then_replaced() {
    let dir = temp_dir("hostile");
    let slot = Slot::new(
        Some(&dir),
        &spec(serde_json::json!({ "command": ["server"] })),
    );
    let path = slot.path(&slot.public).expect("a folder");
    std::fs::create_dir_all(&dir).expect("the folder");
    let deep = "[".repeat(100_000);
    let key = path
        .file_stem()
        .and_then(|s| s.to_str())
        .expect("a name")
        .to_owned();
    let foreign = serde_json::json!({ "format": FORMAT, "key": "0".repeat(64), "expiresAt": null, "tools": [] });
    let bad_tools = serde_json::json!({ "format": FORMAT, "key": key, "expiresAt": null, "tools": [{ "name": 5 }] });
    for hostile in [
        deep,
        "{".into(),
        "\u{0}\u{1b}[2J".into(),
        foreign.to_string(),
        bad_tools.to_string(),
    ] {
        std::fs::write(&path, hostile).expect("written");
        assert!(slot.read(&mut Vec::new()).is_none());
    }
    slot.write(&tools(&["a"]), CacheHints::default());
    assert_eq!(names(&slot.read(&mut Vec::new()).expect("replaced")), ["a"]);
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn the_cache_folder_follows_xdg_else_the_platform() {
    let env = |pairs: &'static [(&'static str, &'static str)]| {
        move |name: &str| {
            pairs
                .iter()
                .find(|(k, _)| *k == name)
                .map(|(_, v)| OsString::from(v))
        }
    };
    let home = env(&[
        ("HOME", "/home/ada"),
        ("LOCALAPPDATA", r"C:\Users\ada\AppData\Local"),
    ]);
    let catalog = |base: &str| Some(PathBuf::from(base).join("toolnexus").join("catalog"));
    assert_eq!(dir_for("linux", &home), catalog("/home/ada/.cache"));
    assert_eq!(dir_for("macos", &home), catalog("/home/ada/Library/Caches"));
    assert_eq!(
        dir_for("windows", &home),
        catalog(r"C:\Users\ada\AppData\Local")
    );
    let xdg = env(&[("XDG_CACHE_HOME", "/var/cache/ada"), ("HOME", "/home/ada")]);
    for os in ["linux", "macos", "freebsd"] {
        assert_eq!(dir_for(os, &xdg), catalog("/var/cache/ada"), "{os}");
    }
    // A relative or empty XDG_CACHE_HOME is ignored, as the specification says.
    let relative = env(&[("XDG_CACHE_HOME", "cache"), ("HOME", "/home/ada")]);
    assert_eq!(dir_for("linux", &relative), catalog("/home/ada/.cache"));
    let empty = env(&[("XDG_CACHE_HOME", ""), ("HOME", "")]);
    assert_eq!(dir_for("linux", &empty), None);
    assert_eq!(dir_for("windows", &env(&[])), None);
}

#[cfg(unix)]
#[test]
fn a_fifo_or_a_folder_in_place_of_a_file_is_not_waited_for() {
    let dir = temp_dir("fifo");
    let slot = Slot::new(
        Some(&dir),
        &spec(serde_json::json!({ "command": ["server"] })),
    );
    std::fs::create_dir_all(&dir).expect("the folder");
    let fifo = std::ffi::CString::new(
        slot.path(&slot.public)
            .expect("a folder")
            .as_os_str()
            .as_encoded_bytes(),
    )
    .expect("a path");
    // SAFETY: a NUL-terminated path.
    assert_eq!(unsafe { libc::mkfifo(fifo.as_ptr(), 0o600) }, 0, "a FIFO");
    std::fs::create_dir(&slot.private).expect("a folder");
    let (done, read) = std::sync::mpsc::channel();
    let reader = Slot::new(
        Some(&dir),
        &spec(serde_json::json!({ "command": ["server"] })),
    );
    // On a thread: a read that waited for a writer would hang the test, not fail it.
    std::thread::spawn(move || done.send(reader.read(&mut Vec::new()).is_none()));
    assert_eq!(read.recv_timeout(Duration::from_secs(10)), Ok(true));
    let _ = std::fs::remove_dir_all(&slot.private);
    slot.write(&tools(&["a"]), CacheHints::default());
    assert_eq!(names(&slot.read(&mut Vec::new()).expect("replaced")), ["a"]);
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn a_tools_members_survive_the_catalog() {
    let dir = temp_dir("members");
    let entry = serde_json::json!({ "command": ["node", "server.mjs"] });
    let page = r#"{"tools":[{"name":"t","title":"The T","description":"d","inputSchema":{"type":"object"},"annotations":{"readOnlyHint":true},"_meta":{"ui":{"resourceUri":"ui://t"}}}]}"#;
    let listed = serde_json::from_str::<crate::tool::listed::Page>(page)
        .expect("a page")
        .into_parts()
        .0;
    Slot::new(Some(&dir), &spec(entry.clone())).write(&listed, CacheHints::default());
    let read = Slot::new(Some(&dir), &spec(entry))
        .read(&mut Vec::new())
        .expect("the listing");
    assert_eq!(read[0].title.as_deref(), Some("The T"));
    assert_eq!(read[0].extra_json(), listed[0].extra_json());
    assert_eq!(read[0].input_schema.get(), listed[0].input_schema.get());
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn a_listing_already_kept_is_not_written_again() {
    let dir = temp_dir("unchanged");
    let entry = serde_json::json!({ "command": ["server"] });
    Slot::new(Some(&dir), &spec(entry.clone())).write(&tools(&["a"]), CacheHints::default());
    let written = |slot: &Slot| {
        std::fs::metadata(slot.path(&slot.public).expect("a folder"))
            .and_then(|m| m.modified())
            .expect("the file")
    };
    // A store started later reads the file, then lists the same tools live.
    let slot = Slot::new(Some(&dir), &spec(entry));
    assert_eq!(
        names(&slot.read(&mut Vec::new()).expect("the listing")),
        ["a"]
    );
    let before = written(&slot);
    std::thread::sleep(Duration::from_millis(20));
    slot.write(&tools(&["a"]), CacheHints::default());
    assert_eq!(written(&slot), before, "the same listing was written again");
    slot.write(&tools(&["a", "b"]), CacheHints::default());
    assert_ne!(written(&slot), before, "a changed listing was not written");
    assert_eq!(
        names(&slot.read(&mut Vec::new()).expect("the listing")),
        ["a", "b"]
    );
    let _ = std::fs::remove_dir_all(&dir);
}
