//! A skill file's bytes from a `resources/read` result: what its digest covers is the
//! text's UTF-8 bytes, or a blob's bytes once base64 is taken off.

use base64::Engine;
use base64::engine::general_purpose::STANDARD;
use serde::Deserialize;

/// One of the result's `contents`, as sent.
#[derive(Deserialize)]
struct Contents {
    #[serde(default)]
    uri: Option<String>,
    #[serde(rename = "mimeType", default)]
    mime_type: Option<String>,
    #[serde(default)]
    text: Option<String>,
    #[serde(default)]
    blob: Option<String>,
}

#[derive(Deserialize)]
struct ReadResult {
    #[serde(default)]
    contents: Vec<Contents>,
}

/// A file as read: its bytes, its text or blob as sent, its media type.
#[derive(Debug)]
pub struct Read {
    pub bytes: Vec<u8>,
    pub text: Option<String>,
    pub blob: Option<String>,
    pub mime_type: Option<String>,
}

/// The contents for `uri` in a `resources/read` result (the only ones, when a server
/// leaves out their `uri`), or why there are none.
pub fn of(result: &str, uri: &str) -> Result<Read, String> {
    let result: ReadResult =
        serde_json::from_str(result).map_err(|e| format!("its read answer is malformed: {e}"))?;
    let only = result.contents.len() == 1;
    let contents = result
        .contents
        .into_iter()
        .find(|c| c.uri.as_deref() == Some(uri) || (only && c.uri.is_none()))
        .ok_or_else(|| "the read answered no contents for it".to_owned())?;
    let bytes = match (&contents.text, &contents.blob) {
        (Some(text), _) => text.as_bytes().to_vec(),
        (None, Some(blob)) => STANDARD
            .decode(blob)
            .map_err(|e| format!("its blob is not base64: {e}"))?,
        (None, None) => return Err("the read answered neither text nor a blob".to_owned()),
    };
    let blob = if contents.text.is_none() {
        contents.blob
    } else {
        None
    };
    Ok(Read {
        bytes,
        text: contents.text,
        blob,
        mime_type: contents.mime_type,
    })
}

#[cfg(test)]
mod tests {
    use super::of;

    #[test]
    fn text_and_blob_give_their_bytes() {
        let text = of(
            r#"{"contents":[{"uri":"s://a/SKILL.md","text":"hé"}]}"#,
            "s://a/SKILL.md",
        );
        assert_eq!(text.expect("as written").bytes, "hé".as_bytes());
        let blob = of(
            r#"{"contents":[{"uri":"s://a/x","blob":"AAE="}]}"#,
            "s://a/x",
        )
        .expect("as written");
        assert_eq!(
            (blob.bytes, blob.blob.as_deref()),
            (vec![0, 1], Some("AAE="))
        );
    }

    #[test]
    fn another_uri_or_nothing_is_refused() {
        assert!(of(r#"{"contents":[{"uri":"s://b","text":"x"}]}"#, "s://a").is_err());
        assert!(of(r#"{"contents":[]}"#, "s://a").is_err());
        assert!(of(r#"{"contents":[{"uri":"s://a","blob":"%%"}]}"#, "s://a").is_err());
        assert!(of(r#"{"contents":[{"text":"x"}]}"#, "s://a").is_ok());
    }
}
