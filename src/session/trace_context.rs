//! W3C trace context (SEP-414): the caller's `traceparent`, `tracestate` and `baggage`,
//! carried in a request's `params._meta` so that the server's spans join the caller's
//! trace. The host reads them from its own context; here they are checked and written.

use std::sync::Arc;

use serde_json::{Map, Value};

/// The members a trace context may have, and the longest each may be (W3C: a
/// `tracestate` has at most 32 entries of at most 256 characters; `baggage` at most
/// 8192 bytes).
const MEMBERS: [(&str, usize); 3] = [
    ("traceparent", 55),
    ("tracestate", 8_224),
    ("baggage", 8_192),
];

/// The trace context in `json` (an object of strings) as `_meta` members to write after
/// others (`,"traceparent":"…",…`); `None` when it has no valid `traceparent`. What is not
/// a trace context member, or too long, is left out.
pub fn members(json: &str) -> Option<Arc<str>> {
    members_of(&serde_json::from_str(json).ok()?)
}

/// `members` of a context already read (a request's `_meta`, say).
pub fn members_of(context: &Map<String, Value>) -> Option<Arc<str>> {
    let parent = context.get("traceparent")?.as_str()?;
    if !is_traceparent(parent) {
        return None;
    }
    let mut out = String::new();
    for (name, longest) in MEMBERS {
        if let Some(Value::String(value)) = context.get(name)
            && !value.is_empty()
            && value.len() <= longest
        {
            out.push_str(&format!(",\"{name}\":{}", Value::from(value.as_str())));
        }
    }
    Some(out.into())
}

/// `version-traceid-parentid-flags` in lowercase hex, as W3C writes it: version `ff` and
/// all-zero ids are invalid.
fn is_traceparent(text: &str) -> bool {
    let parts: Vec<&str> = text.split('-').collect();
    let hex = |part: &str, len: usize| {
        part.len() == len && part.bytes().all(|b| matches!(b, b'0'..=b'9' | b'a'..=b'f'))
    };
    let zero = |part: &str| part.bytes().all(|b| b == b'0');
    matches!(parts.as_slice(), [version, trace, parent, flags]
        if hex(version, 2) && *version != "ff" && hex(trace, 32) && !zero(trace)
            && hex(parent, 16) && !zero(parent) && hex(flags, 2))
}

#[cfg(test)]
mod tests {
    use super::*;

    const PARENT: &str = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01";

    #[test]
    fn a_context_is_written_as_meta_members_in_a_fixed_order() {
        let json =
            format!(r#"{{"baggage":"k=v","traceparent":"{PARENT}","tracestate":"a=1","x":"y"}}"#);
        let members = members(&json).expect("a context");
        assert_eq!(
            &*members,
            format!(r#","traceparent":"{PARENT}","tracestate":"a=1","baggage":"k=v""#)
        );
    }

    #[test]
    fn without_a_valid_traceparent_nothing_is_written() {
        assert!(members("{}").is_none());
        assert!(members(r#"{"traceparent":"00-abc"}"#).is_none());
        let zero = "00-00000000000000000000000000000000-00f067aa0ba902b7-01";
        assert!(members(&format!(r#"{{"traceparent":"{zero}"}}"#)).is_none());
        let upper = PARENT.to_uppercase();
        assert!(members(&format!(r#"{{"traceparent":"{upper}"}}"#)).is_none());
        assert!(members("not JSON").is_none());
        let quote = format!(r#"{{"traceparent":"{PARENT}","tracestate":"a=\"1"}}"#);
        assert_eq!(
            members(&quote).as_deref().map(|m| m.contains(r#"a=\"1"#)),
            Some(true)
        );
    }
}
