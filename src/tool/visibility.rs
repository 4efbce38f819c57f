//! MCP Apps' visibility rule: a tool whose `_meta.ui.visibility` lists its audiences
//! without `"model"` is for the app's view alone, and a library that hands tools to a
//! model keeps it from the model. No list, or an empty one, means both audiences.

use serde_json::Value;
use serde_json::value::RawValue;

/// Whether a tool's `_meta` keeps it from the model. A `_meta` or `ui` of another shape
/// keeps nothing from it: the rule is the exception, and visible is the default.
pub fn app_only(meta: &RawValue) -> bool {
    let Ok(meta) = serde_json::from_str::<Value>(meta.get()) else {
        return false;
    };
    match meta.pointer("/ui/visibility") {
        Some(Value::Array(audiences)) => {
            !audiences.is_empty() && !audiences.iter().any(|a| a == "model")
        }
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::app_only;
    use serde_json::value::RawValue;

    fn of(meta: &str) -> bool {
        app_only(&RawValue::from_string(meta.to_owned()).expect("JSON"))
    }

    #[test]
    fn only_a_list_without_the_model_keeps_a_tool_from_it() {
        assert!(of(r#"{"ui":{"visibility":["app"]}}"#));
        assert!(of(
            r#"{"ui":{"resourceUri":"ui://x","visibility":["app","other"]}}"#
        ));
        assert!(!of(r#"{"ui":{"visibility":["model","app"]}}"#));
        assert!(!of(r#"{"ui":{"visibility":["model"]}}"#));
        assert!(!of(r#"{"ui":{"visibility":[]}}"#));
        assert!(!of(r#"{"ui":{"resourceUri":"ui://x"}}"#));
        assert!(!of(r#"{"ui":{"visibility":"app"}}"#));
        assert!(!of(r#"{"ui":"app"}"#));
        assert!(!of(r#"[1]"#));
    }
}
