use serde_json::{Value, json};

use super::*;

fn made(schema: Value, profile: &str) -> ProviderSchema {
    convert(&schema, profile.parse().expect("a profile"))
}

#[test]
fn unknown_profiles_are_named() {
    let error = "claude".parse::<Profile>().expect_err("unknown");
    assert_eq!(
        error.to_string(),
        "unknown schema profile \"claude\": expected one of openai-strict, openai, anthropic, gemini, portable"
    );
}

#[test]
fn references_are_inlined_and_definitions_dropped() {
    let schema = json!({
        "type": "object",
        "$defs": { "point": { "type": "object", "properties": { "x": { "type": "number" } } } },
        "properties": { "at": { "$ref": "#/$defs/point", "description": "where" } }
    });
    let out = made(schema, "anthropic").schema;
    assert_eq!(
        out,
        json!({ "type": "object", "properties": { "at": {
            "type": "object", "properties": { "x": { "type": "number" } }, "description": "where"
        } } })
    );
}

#[test]
fn recursion_is_cut_with_a_description_and_strict_falls_back() {
    let schema = json!({
        "type": "object",
        "properties": { "tree": { "$ref": "#/$defs/node" } },
        "$defs": { "node": { "type": "object", "properties": {
            "children": { "type": "array", "items": { "$ref": "#/$defs/node" } }
        } } }
    });
    let out = made(schema.clone(), "gemini").schema;
    let third = &out["properties"]["tree"]["properties"]["children"]["items"]["properties"]["children"]
        ["items"];
    assert_eq!(
        third,
        &json!({ "description": "Any JSON value (a recursive structure, not expanded further)." })
    );
    let strict = made(schema, "openai-strict");
    assert!(!strict.strict);
    assert_eq!(strict.schema["properties"]["tree"]["type"], "object");
}

#[test]
fn strict_mode_closes_objects_and_makes_optionals_nullable() {
    let schema = json!({
        "type": "object",
        "properties": {
            "q": { "type": "string" },
            "limit": { "type": "integer", "minimum": 1 },
            "mode": { "enum": ["a", "b"], "type": "string" },
            "opts": { "type": "object", "properties": { "deep": { "type": "boolean" } } }
        },
        "required": ["q"]
    });
    let out = made(schema, "openai-strict");
    assert!(out.strict);
    assert_eq!(
        out.schema,
        json!({
            "type": "object",
            "properties": {
                "q": { "type": "string" },
                "limit": { "type": ["integer", "null"], "minimum": 1 },
                "mode": { "enum": ["a", "b", null], "type": ["string", "null"] },
                "opts": {
                    "type": ["object", "null"],
                    "properties": { "deep": { "type": ["boolean", "null"] } },
                    "required": ["deep"],
                    "additionalProperties": false
                }
            },
            "required": ["q", "limit", "mode", "opts"],
            "additionalProperties": false
        })
    );
}

#[test]
fn forced_nulls_are_stripped_and_nothing_else() {
    let schema = json!({
        "type": "object",
        "properties": {
            "a": { "type": "string" },
            "b": { "type": ["string", "null"] },
            "list": { "type": "array", "items": { "type": "object", "properties": {
                "x": { "type": "number" }, "y": { "type": "number" }
            }, "required": ["y"] } }
        },
        "required": ["list"]
    });
    let out = made(schema, "openai-strict");
    let mut args =
        json!({ "a": null, "b": null, "list": [{ "x": null, "y": 1 }, { "x": 2, "y": 3 }] });
    out.nulls.strip(&mut args);
    assert_eq!(
        args.to_string(),
        r#"{"b":null,"list":[{"y":1},{"x":2,"y":3}]}"#
    );
}

#[test]
fn gemini_rewrites_what_it_refuses() {
    let schema = json!({
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "type": "object",
        "additionalProperties": false,
        "properties": {
            "name": { "type": ["string", "null"], "format": "uri" },
            "n": { "enum": [1, "two", true] },
            "k": { "const": "fixed" },
            "v": { "oneOf": [{ "type": "string" }, { "type": "integer", "format": "int64" }] },
            "empty": { "type": "object", "properties": {} },
            "list": { "type": "array" }
        },
        "required": ["name", "ghost"]
    });
    let out = made(schema, "gemini").schema;
    assert_eq!(
        out,
        json!({
            "type": "object",
            "properties": {
                "name": { "type": "string", "description": "(format: uri)", "nullable": true },
                "n": { "description": "(one of: 1, \"two\", true)" },
                "k": { "enum": ["fixed"], "type": "string" },
                "v": { "anyOf": [{ "type": "string" }, { "type": "integer", "format": "int64" }] },
                "empty": { "type": "object" },
                "list": { "type": "array", "items": {} }
            },
            "required": ["name"]
        })
    );
}

#[test]
fn roots_become_plain_objects() {
    let schema = json!({ "anyOf": [
        { "type": "object", "properties": { "a": { "type": "string" } }, "required": ["a"] },
        { "type": "object", "properties": { "b": { "type": "string" } }, "required": ["b", "a"] }
    ] });
    let out = made(schema, "anthropic").schema;
    assert_eq!(out["type"], "object");
    assert_eq!(out["required"], json!(["a"]));
    assert_eq!(out["properties"].as_object().map(|p| p.len()), Some(2));
    assert_eq!(
        made(json!(true), "openai").schema,
        json!({ "type": "object", "properties": {} })
    );
}

#[test]
fn free_form_maps_are_not_strict() {
    let schema = json!({ "type": "object", "properties": {
        "tags": { "type": "object", "additionalProperties": { "type": "string" } }
    } });
    let out = made(schema, "openai-strict");
    assert!(!out.strict);
    assert!(out.nulls.is_empty());
}

#[test]
fn a_nested_object_of_no_declared_properties_is_a_free_form_map() {
    // Closed, `arguments` could only be `{}`: a model could never pass any.
    let open = json!({ "type": "object", "properties": {
        "name": { "type": "string" },
        "arguments": { "type": "object", "description": "The tool's arguments" }
    }, "required": ["name"] });
    assert!(!made(open, "openai-strict").strict);
    let closed = json!({ "type": "object", "properties": {
        "none": { "type": "object", "additionalProperties": false },
        "some": { "type": "object", "properties": { "a": { "type": "string" } } }
    } });
    assert!(made(closed, "openai-strict").strict);
    assert!(
        made(json!({ "type": "object" }), "openai-strict").strict,
        "no parameters"
    );
}

#[test]
fn too_deep_is_not_strict() {
    let mut schema = json!({ "type": "string" });
    for _ in 0..12 {
        schema = json!({ "type": "object", "properties": { "x": schema }, "required": ["x"] });
    }
    assert!(!made(schema, "openai-strict").strict);
}

#[test]
fn closed_objects_stay_closed() {
    let schema = json!({
        "type": "object",
        "properties": { "q": { "type": "string" } },
        "additionalProperties": false,
        "$schema": "http://json-schema.org/draft-07/schema#"
    });
    for profile in ["openai", "anthropic"] {
        let out = made(schema.clone(), profile).schema;
        assert_eq!(out["additionalProperties"], json!(false), "{profile}");
        assert_eq!(out.get("$schema"), None, "{profile}");
    }
    assert!(made(schema, "openai-strict").strict);
}

#[test]
fn gemini_says_null_where_a_type_stands() {
    // OpenAPI 3.0, whose subset Gemini reads, ignores `nullable` beside no `type`.
    let schema = json!({
        "type": "object",
        "properties": {
            "several": { "type": ["string", "integer", "null"] },
            "mixed": { "enum": [1, "two", null] },
            "branches": { "anyOf": [{ "type": "string" }, { "type": "null" }, { "type": "integer" }] }
        }
    });
    let out = made(schema, "gemini").schema;
    assert_eq!(
        out["properties"],
        json!({
            "several": { "anyOf": [
                { "type": "string", "nullable": true },
                { "type": "integer", "nullable": true }
            ] },
            "mixed": { "description": "(one of: 1, \"two\") (or null)" },
            "branches": { "anyOf": [
                { "type": "string", "nullable": true },
                { "type": "integer", "nullable": true }
            ] }
        })
    );
}
