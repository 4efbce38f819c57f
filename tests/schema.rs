//! `mcp.schema.json`: it is what the config types generate, and it accepts exactly the
//! documents the config reader accepts, on every fixture in `tests/config-fixtures`.
//! `UPDATE_SCHEMA=1 cargo test --test schema` rewrites the file from the types.

use std::path::{Path, PathBuf};

use toolnexus::config::schema::mcp_json_schema;
use toolnexus::config::{ConfigInput, McpConfig, ServerState};

const SCHEMA_FILE: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/mcp.schema.json");

#[test]
fn the_shipped_schema_is_what_the_types_generate() {
    let generated = mcp_json_schema();
    if std::env::var_os("UPDATE_SCHEMA").is_some() {
        std::fs::write(SCHEMA_FILE, &generated).expect("mcp.schema.json written");
    }
    let shipped = std::fs::read_to_string(SCHEMA_FILE).unwrap_or_default();
    assert!(
        shipped == generated,
        "mcp.schema.json differs from the config types; run `UPDATE_SCHEMA=1 cargo test --test schema` and commit it"
    );
}

/// Whether the reader takes the whole document with no entry failed as malformed.
fn reader_accepts(path: &Path) -> Result<(), String> {
    let input = ConfigInput::Path(path.to_string_lossy().into_owned());
    let config = McpConfig::load(&input).map_err(|e| e.to_string())?;
    for server in config.servers {
        if let ServerState::Invalid(reason) = server.state {
            return Err(format!("server \"{}\": {reason}", server.name));
        }
    }
    Ok(())
}

fn fixtures(kind: &str) -> Vec<PathBuf> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/config-fixtures")
        .join(kind);
    let mut files: Vec<_> = std::fs::read_dir(&dir)
        .expect("the fixture folder")
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "json"))
        .collect();
    files.sort();
    assert!(!files.is_empty(), "no fixtures in {}", dir.display());
    files
}

#[test]
fn schema_and_reader_agree_on_every_fixture() {
    let schema: serde_json::Value =
        serde_json::from_str(&mcp_json_schema()).expect("the schema is JSON");
    let validator = jsonschema::validator_for(&schema).expect("a valid JSON Schema");
    for (kind, expected) in [("accepted", true), ("rejected", false)] {
        for path in fixtures(kind) {
            let text = std::fs::read_to_string(&path).expect("a fixture");
            let document: serde_json::Value = serde_json::from_str(&text).expect("JSON");
            let by_schema = validator.is_valid(&document);
            let by_reader = reader_accepts(&path);
            let name = path.file_name().unwrap_or_default().to_string_lossy();
            assert_eq!(
                by_reader.is_ok(),
                expected,
                "{kind}/{name}: the reader says {by_reader:?}"
            );
            assert_eq!(
                by_schema,
                expected,
                "{kind}/{name}: the schema {} it",
                if by_schema { "accepts" } else { "rejects" }
            );
        }
    }
}
