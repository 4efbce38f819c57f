//! What every request of the 2026-07-28 revision carries in `_meta`: the protocol version,
//! who we are and what we can do (the revision has no handshake to say it once), and the
//! log level, without which its servers stay silent where 2025-era ones log everything.
#![expect(
    deprecated,
    reason = "logging is deprecated by SEP-2577, but servers still send it"
)]

use rmcp::model::{ClientConfig, LoggingLevel, ProtocolVersion, RequestMetaObject};

/// The `_meta` members for requests of `version`; `None` for a revision with `initialize`.
pub fn modern_meta(client: &ClientConfig, version: &ProtocolVersion) -> Option<RequestMetaObject> {
    if version.has_initialize() {
        return None;
    }
    let mut meta = RequestMetaObject::with_client_context(
        version.clone(),
        client.client_info.clone(),
        client.capabilities.clone(),
    );
    meta.set_log_level(LoggingLevel::Debug);
    Some(meta)
}

/// The same members as JSON text to write after other `_meta` members: `,"k":v,...`.
pub fn as_members(meta: &RequestMetaObject) -> String {
    let text = serde_json::to_string(&meta.0).unwrap_or_else(|_| "{}".to_owned());
    match text.strip_prefix('{').and_then(|t| t.strip_suffix('}')) {
        Some(members) if !members.is_empty() => format!(",{members}"),
        _ => String::new(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rmcp::model::{ClientCapabilities, Implementation};

    #[test]
    fn modern_requests_carry_version_client_and_log_level() {
        let client =
            ClientConfig::new(ClientCapabilities::default(), Implementation::new("t", "1"));
        assert!(modern_meta(&client, &ProtocolVersion::V_2025_11_25).is_none());
        let meta = modern_meta(&client, &ProtocolVersion::V_2026_07_28).expect("modern");
        let members = as_members(&meta);
        let object: serde_json::Value =
            serde_json::from_str(&format!("{{\"progressToken\":1{members}}}")).expect("JSON");
        assert_eq!(
            object["io.modelcontextprotocol/protocolVersion"],
            "2026-07-28"
        );
        assert_eq!(object["io.modelcontextprotocol/clientInfo"]["name"], "t");
        assert_eq!(
            object["io.modelcontextprotocol/clientCapabilities"],
            serde_json::json!({})
        );
        assert_eq!(object["io.modelcontextprotocol/logLevel"], "debug");
    }
}
