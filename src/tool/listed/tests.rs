use super::*;

fn normalize(schema: &str, closed: bool) -> String {
    let raw: Box<RawValue> = serde_json::from_str(schema).expect("JSON");
    normalize_schema(&raw, closed)
}

fn listed(tool: &str) -> ListedTool {
    let page = format!(r#"{{"tools":[{tool}]}}"#);
    let page: Page = serde_json::from_str(&page).expect("a page");
    page.into_parts().0.pop().expect("a tool")
}

#[test]
fn members_beyond_the_first_three_are_kept_as_sent_in_a_fixed_order() {
    let tool = listed(
        r#"{"name":"t","_meta":{"ui":{"resourceUri":"ui://a"}},"annotations":{"readOnlyHint":true},"title":"T","unknown":1,"execution":{"taskSupport":"optional"},"outputSchema":{"type":"object"},"icons":[{"src":"x"}]}"#,
    );
    let extra = tool.extra.expect("extra members");
    assert_eq!(
        extra.json.get(),
        r#"{"title":"T","annotations":{"readOnlyHint":true},"outputSchema":{"type":"object"},"icons":[{"src":"x"}],"execution":{"taskSupport":"optional"},"_meta":{"ui":{"resourceUri":"ui://a"}}}"#
    );
    assert_eq!(extra.keys().collect::<Vec<_>>(), EXTRA_KEYS);
    assert!(extra.output_schema.is_some());
}

#[test]
fn a_tool_without_them_has_none_and_null_counts_as_absent() {
    assert!(listed(r#"{"name":"t","inputSchema":{}}"#).extra.is_none());
    let tool = listed(r#"{"name":"t","title":null,"annotations":{}}"#);
    let extra = tool.extra.expect("annotations");
    assert_eq!(extra.json.get(), r#"{"annotations":{}}"#);
    assert_eq!(extra.keys().collect::<Vec<_>>(), ["annotations"]);
    assert!(extra.output_schema.is_none());
}

#[test]
fn a_member_is_taken_out_and_the_rest_kept_in_order() {
    let (taken, rest) =
        take_member(r#"{"a":1,"resultType":"complete","b":[2]}"#, "resultType").expect("an object");
    assert_eq!(taken.map(RawValue::get), Some(r#""complete""#));
    assert_eq!(rest, r#"{"a":1,"b":[2]}"#);
    assert!(take_member("[1]", "a").is_none());
}

#[test]
fn adds_what_is_missing_at_the_end() {
    assert_eq!(
        normalize(r#"{"required":["a"]}"#, false),
        r#"{"required":["a"],"type":"object","properties":{}}"#
    );
    assert_eq!(
        normalize("{}", true),
        r#"{"type":"object","properties":{},"additionalProperties":false}"#
    );
}

#[test]
fn replaces_in_place_and_copies_the_rest_verbatim() {
    let schema = r#"{"additionalProperties":true,"type":"x","properties":{"a":{"type":"string","enum":["é","\""]}},"$defs":{"d":[1,2.50]}}"#;
    assert_eq!(
        normalize(schema, true),
        r#"{"additionalProperties":false,"type":"object","properties":{"a":{"type":"string","enum":["é","\""]}},"$defs":{"d":[1,2.50]}}"#
    );
    assert_eq!(
        normalize(r#"{"additionalProperties":true}"#, false),
        r#"{"additionalProperties":true,"type":"object","properties":{}}"#
    );
}

#[test]
fn keys_needing_escapes_stay_json() {
    let out = normalize(r#"{"a\"b\u0041":1}"#, false);
    let value: serde_json::Value = serde_json::from_str(&out).expect("JSON");
    assert_eq!(value["a\"bA"], 1);
}

#[test]
fn a_schema_that_is_not_an_object_counts_as_empty() {
    assert_eq!(
        normalize("[1]", false),
        r#"{"type":"object","properties":{}}"#
    );
}
