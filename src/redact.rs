//! Secrets out of what toolnexus says. A server may echo its request headers or its
//! environment into an error, its stderr or a log message; every text toolnexus composes
//! from such material (failure reasons, error results, diagnostics) goes through the
//! server's `Redactor` first, whatever the text's source.
//!
//! The secrets of a server are the values of its entry's `headers` (as expanded and sent)
//! and of its own `env` / `environment` (not the environment it inherits from the host).
//! A header value of the form `<scheme> <credentials>` ("Bearer abc...") also makes its
//! credentials a secret, since a server may echo the token alone. Values shorter than
//! [`MIN_SECRET_CHARS`] are left alone: redacting "1" or "true" would shred every text.

use std::borrow::Cow;
use std::sync::Arc;

use serde_json::{Map, Value};

use crate::config::TransportSpec;
use crate::tool::result::ToolOutput;

/// The shortest value treated as a secret, in characters.
pub const MIN_SECRET_CHARS: usize = 8;
/// What a secret is replaced with.
pub const REDACTED: &str = "[redacted]";

/// The secrets of one server. Cheap to clone; the default redacts nothing.
#[derive(Debug, Clone, Default)]
pub struct Redactor {
    /// Distinct values.
    secrets: Arc<[String]>,
}

impl Redactor {
    /// The secrets of a server entry, taken at connect time.
    pub fn for_transport(transport: &TransportSpec) -> Redactor {
        match transport {
            TransportSpec::Local(local) => Redactor::new(local.env.iter().map(|(_, v)| v.clone())),
            TransportSpec::Remote(remote) => Redactor::new(
                remote
                    .headers
                    .iter()
                    // Expanded already, when the config was read.
                    .flat_map(|(_, value)| with_credentials(value.clone()))
                    .chain(
                        remote
                            .oauth
                            .iter()
                            .flat_map(|o| o.secrets().map(str::to_owned)),
                    ),
            ),
        }
    }

    pub fn new(values: impl IntoIterator<Item = String>) -> Redactor {
        let mut secrets: Vec<String> = values
            .into_iter()
            .filter(|v| v.chars().count() >= MIN_SECRET_CHARS)
            .collect();
        secrets.sort_unstable();
        secrets.dedup();
        Redactor {
            secrets: secrets.into(),
        }
    }

    pub fn is_empty(&self) -> bool {
        self.secrets.is_empty()
    }

    /// `text` with every secret replaced by [`REDACTED`]; borrowed when it holds none.
    /// Secrets that overlap in the text are replaced as one stretch, so none leaves a
    /// piece of itself beside another's mark.
    pub fn redact<'a>(&self, text: &'a str) -> Cow<'a, str> {
        let mut found: Vec<(usize, usize)> = self
            .secrets
            .iter()
            .flat_map(|s| {
                text.match_indices(s.as_str())
                    .map(|(i, m)| (i, i + m.len()))
            })
            .collect();
        if found.is_empty() {
            return Cow::Borrowed(text);
        }
        found.sort_unstable();
        let mut out = String::with_capacity(text.len());
        let mut at = 0;
        let mut stretches = found.into_iter().peekable();
        while let Some((start, mut end)) = stretches.next() {
            while let Some((_, next_end)) = stretches.next_if(|&(next, _)| next < end) {
                end = end.max(next_end);
            }
            out.push_str(&text[at..start]);
            out.push_str(REDACTED);
            at = end;
        }
        out.push_str(&text[at..]);
        Cow::Owned(out)
    }

    pub fn redact_string(&self, text: String) -> String {
        match self.redact(&text) {
            Cow::Borrowed(_) => text,
            Cow::Owned(redacted) => redacted,
        }
    }

    /// Every string of a JSON value, keys included: a secret is redacted before it is
    /// escaped, which would hide it from a search of the JSON text.
    pub fn redact_json(&self, value: Value) -> Value {
        if self.is_empty() {
            return value;
        }
        match value {
            Value::String(s) => Value::String(self.redact_string(s)),
            Value::Array(items) => items.into_iter().map(|v| self.redact_json(v)).collect(),
            Value::Object(map) => Value::Object(
                map.into_iter()
                    .map(|(k, v)| (self.redact_string(k), self.redact_json(v)))
                    .collect::<Map<_, _>>(),
            ),
            other => other,
        }
    }

    /// An error result is toolnexus's report of a failure and is redacted, its raw content
    /// too; a successful result is the server's data and passes as it came.
    pub fn redact_output(&self, output: ToolOutput) -> ToolOutput {
        if !output.is_error || self.is_empty() {
            return output;
        }
        ToolOutput {
            output: self.redact_string(output.output),
            is_error: true,
            content: output.content.map(|c| self.redact_json(c)),
            structured: None,
            code: output.code,
        }
    }

    /// A log message's data as one line of text for a person: a string as itself,
    /// anything else as JSON, secrets redacted.
    pub fn log_text(&self, data: &Value) -> String {
        // Printed as the JS printer always printed it: a string as it is, else JSON.stringify.
        let text = |value: &Value| match value {
            Value::String(s) => s.clone(),
            other => crate::tool::js_json::stringify(other),
        };
        if self.is_empty() {
            return text(data);
        }
        text(&self.redact_json(data.clone()))
    }
}

/// A header value, and its credentials when it reads `<scheme> <credentials>`.
fn with_credentials(value: String) -> Vec<String> {
    let credentials = value
        .split_once(' ')
        .filter(|(scheme, _)| !scheme.is_empty() && scheme.chars().all(|c| c.is_ascii_alphabetic()))
        .map(|(_, credentials)| credentials.trim().to_owned());
    std::iter::once(value).chain(credentials).collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::{LocalSpec, RemoteSpec};
    use serde_json::json;

    fn redactor(secrets: &[&str]) -> Redactor {
        Redactor::new(secrets.iter().map(|s| s.to_string()))
    }

    #[test]
    fn every_occurrence_is_replaced_and_the_rest_survives() {
        let r = redactor(&["s3cr3t-value"]);
        assert_eq!(
            r.redact("key s3cr3t-value, again s3cr3t-values."),
            "key [redacted], again [redacted]s."
        );
    }

    #[test]
    fn text_without_secrets_is_borrowed() {
        let r = redactor(&["s3cr3t-value"]);
        assert!(matches!(r.redact("nothing here"), Cow::Borrowed(_)));
        assert!(matches!(Redactor::default().redact("x"), Cow::Borrowed(_)));
    }

    #[test]
    fn short_values_are_not_secrets() {
        let r = redactor(&["1", "true", "debug", "1234567"]);
        assert!(r.is_empty());
        assert_eq!(r.redact("1 true debug 1234567"), "1 true debug 1234567");
        assert!(!redactor(&["12345678"]).is_empty());
    }

    #[test]
    fn overlapping_secrets_leave_no_piece() {
        // One inside another, and two that overlap: each is one stretch.
        let r = redactor(&["abcdefgh", "xxabcdefghyy", "ghyyzzzzzz"]);
        assert_eq!(r.redact("<xxabcdefghyy>"), "<[redacted]>");
        assert_eq!(r.redact("<abcdefghyyzzzzzz>"), "<[redacted]>");
        assert_eq!(
            r.redact("abcdefgh ghyyzzzzzz abcdefgh"),
            "[redacted] [redacted] [redacted]"
        );
    }

    #[test]
    fn many_matches_and_multibyte_text() {
        let r = redactor(&["sécret-é-42", "absent-secret"]);
        let text = "é sécret-é-42 ".repeat(10_000);
        assert_eq!(r.redact(&text), "é [redacted] ".repeat(10_000));
    }

    #[test]
    fn json_strings_and_keys_are_redacted_before_escaping() {
        let r = redactor(&["quote\"d-secret"]);
        let data =
            json!({ "echo": "got quote\"d-secret", "quote\"d-secret": [1, "quote\"d-secret"] });
        assert_eq!(
            r.redact_json(data),
            json!({ "echo": "got [redacted]", "[redacted]": [1, "[redacted]"] })
        );
        assert_eq!(r.log_text(&json!("a quote\"d-secret")), "a [redacted]");
        assert_eq!(
            r.log_text(&json!({ "k": "quote\"d-secret" })),
            r#"{"k":"[redacted]"}"#
        );
    }

    #[test]
    fn only_error_results_are_redacted() {
        let r = redactor(&["s3cr3t-value"]);
        let ok = ToolOutput::text("s3cr3t-value".into());
        assert_eq!(r.redact_output(ok.clone()), ok);
        let mut error = ToolOutput::error("bad s3cr3t-value");
        error.content = Some(json!([{ "type": "text", "text": "s3cr3t-value" }]));
        let redacted = r.redact_output(error);
        assert_eq!(redacted.output, "bad [redacted]");
        assert_eq!(
            redacted.content,
            Some(json!([{ "type": "text", "text": "[redacted]" }]))
        );
    }

    #[test]
    fn a_local_entry_hides_its_env_values() {
        let local = TransportSpec::Local(LocalSpec {
            program: "node".into(),
            args: vec!["not-a-secret-arg".into()],
            env: vec![
                ("API_KEY".into(), "env-secret-1".into()),
                ("DEBUG".into(), "1".into()),
            ],
            cwd: None,
            inherit_env: true,
        });
        let r = Redactor::for_transport(&local);
        assert_eq!(
            r.redact("env-secret-1 not-a-secret-arg DEBUG=1"),
            "[redacted] not-a-secret-arg DEBUG=1"
        );
    }

    #[test]
    fn a_remote_entry_hides_header_values_and_their_credentials() {
        let remote = TransportSpec::Remote(RemoteSpec {
            url: "http://127.0.0.1:1/mcp".into(),
            headers: vec![
                ("Authorization".into(), "Bearer token-in-header-9".into()),
                ("X-Api-Key".into(), "plain-api-key".into()),
            ],
            oauth: Some(Box::new(crate::config::OAuthSpec {
                client_id: Some("public-client-id".into()),
                client_secret: Some("oauth-client-secret-7".into()),
                ..Default::default()
            })),
        });
        let r = Redactor::for_transport(&remote);
        assert_eq!(
            r.redact("Bearer token-in-header-9 | token-in-header-9 | plain-api-key | Bearer"),
            "[redacted] | [redacted] | [redacted] | Bearer"
        );
        assert_eq!(
            r.redact("oauth-client-secret-7 of public-client-id"),
            "[redacted] of public-client-id"
        );
    }
}
