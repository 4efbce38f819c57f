use super::*;
use serde_json::json;

mod expansion;

fn config(value: Value) -> McpConfig {
    McpConfig::load(&ConfigInput::Json(value.to_string())).expect("a valid config")
}

fn names(config: &McpConfig) -> Vec<&str> {
    config.servers.iter().map(|s| s.name.as_str()).collect()
}

fn spec(value: Value) -> ServerSpec {
    match &config(json!({ "s": value })).servers[0].state {
        ServerState::Enabled(spec) => spec.clone(),
        other => panic!("expected an enabled server, got {other:?}"),
    }
}

fn invalid(value: Value) -> String {
    match &config(json!({ "s": value })).servers[0].state {
        ServerState::Invalid(error) => error.to_string(),
        other => panic!("expected an invalid server, got {other:?}"),
    }
}

fn local(value: Value) -> LocalSpec {
    match spec(value).transport {
        TransportSpec::Local(local) => local,
        other => panic!("expected a local server, got {other:?}"),
    }
}

#[test]
fn wrappers_are_tried_in_order() {
    let both = json!({ "servers": { "b": { "command": ["x"] } }, "mcpServers": { "a": { "command": ["x"] } } });
    assert_eq!(names(&config(both)), ["a"]);
    let mcp = json!({ "mcp": { "c": { "command": ["x"] } }, "other": { "command": ["y"] } });
    assert_eq!(names(&config(mcp)), ["c"]);
}

#[test]
fn unwrapped_map_keeps_order_and_drops_reserved_sections() {
    let map = json!({
        "z": { "command": ["x"] }, "builtins": {}, "agents": {}, "a": { "url": "http://h" },
        "a2a": {}, "mcpServer": {}
    });
    assert_eq!(names(&config(map)), ["z", "a"]);
}

#[test]
fn whole_config_errors_name_the_problem() {
    let err = McpConfig::load(&ConfigInput::Json("[1]".into())).expect_err("an error");
    assert!(
        err.0.contains("must be a JSON object") && err.0.contains("an array"),
        "{err}"
    );
    let err =
        McpConfig::load(&ConfigInput::Json(r#"{"mcpServers": 3}"#.into())).expect_err("an error");
    assert!(err.0.contains("\"mcpServers\" must be an object"), "{err}");
    let err =
        McpConfig::load(&ConfigInput::Path("/no/such/mcp.json".into())).expect_err("an error");
    assert!(
        err.0
            .contains("cannot read MCP config \"/no/such/mcp.json\""),
        "{err}"
    );
}

#[test]
fn a_file_that_is_not_json_is_named() {
    let path = std::env::temp_dir().join(format!("toolnexus-bad-{}.json", std::process::id()));
    std::fs::write(&path, "{ nope").expect("write temp file");
    let err =
        McpConfig::load(&ConfigInput::Path(path.display().to_string())).expect_err("an error");
    std::fs::remove_file(&path).ok();
    assert!(
        err.0.contains(&path.display().to_string()) && err.0.contains("not valid JSON"),
        "{err}"
    );
}

#[test]
fn type_is_inferred_from_url_or_command() {
    assert!(matches!(
        spec(json!({ "url": "http://h/mcp" })).transport,
        TransportSpec::Remote(_)
    ));
    assert!(matches!(
        spec(json!({ "command": ["x"] })).transport,
        TransportSpec::Local(_)
    ));
    assert!(invalid(json!({ "timeout": 5 })).contains("neither \"command\""));
}

#[test]
fn disabled_entries_are_disabled_whatever_else_they_hold() {
    for entry in [
        json!({ "enabled": false, "command": ["x"] }),
        json!({ "disabled": true }),
        json!({ "disabled": true, "command": 7 }),
    ] {
        assert!(matches!(
            config(json!({ "s": entry })).servers[0].state,
            ServerState::Disabled
        ));
    }
    assert!(matches!(
        config(json!({ "s": { "enabled": true, "disabled": false, "command": ["x"] } })).servers[0]
            .state,
        ServerState::Enabled(_)
    ));
}

#[test]
fn local_entry_fields() {
    let spec = local(json!({
        "command": ["node", "server.mjs", "--flag"],
        "env": { "A": "1", "B": "env" },
        "environment": { "B": "environment" },
        "cwd": "/tmp"
    }));
    assert_eq!(spec.program, "node");
    assert_eq!(spec.args, ["server.mjs", "--flag"]);
    assert_eq!(
        spec.env,
        [
            ("A".into(), "1".into()),
            ("B".into(), "env".into()),
            ("B".into(), "environment".into())
        ]
    );
    assert_eq!(spec.cwd, Some(PathBuf::from("/tmp")));
}

#[test]
fn claude_desktop_command_with_args_is_accepted() {
    let spec = local(json!({ "command": "node", "args": ["s.mjs"] }));
    assert_eq!(
        (spec.program.as_str(), spec.args.as_slice()),
        ("node", &["s.mjs".to_owned()][..])
    );
}

#[test]
fn claude_desktop_command_without_args_is_the_program_alone() {
    let spec = local(json!({ "command": "/opt/my server/bin" , "args": [] }));
    assert_eq!(spec.program, "/opt/my server/bin");
    let spec = local(json!({ "command": "my-server" }));
    assert_eq!((spec.program.as_str(), spec.args.len()), ("my-server", 0));
}

#[test]
fn malformed_commands_fail_the_server() {
    for command in [
        json!("node server.mjs"),
        json!([]),
        json!([""]),
        json!(["node", 3]),
        json!(null),
    ] {
        let reason = invalid(json!({ "type": "local", "command": command }));
        assert!(reason.contains("command"), "{reason}");
    }
}

#[test]
fn wrong_types_fail_the_server() {
    assert!(invalid(json!({ "command": ["x"], "timeout": "x" })).contains("\"timeout\""));
    assert!(invalid(json!({ "command": ["x"], "timeout": -1 })).contains("positive"));
    assert!(invalid(json!({ "command": ["x"], "enabled": "yes" })).contains("\"enabled\""));
    assert!(invalid(json!({ "command": ["x"], "tools": { "a": 1 } })).contains("\"tools.a\""));
    assert!(invalid(json!({ "command": ["x"], "type": "ftp" })).contains("unknown \"type\""));
    assert!(invalid(json!({ "url": 5 })).contains("\"url\""));
    assert!(invalid(json!("just a string")).contains("must be an object"));
}

#[test]
fn error_messages_never_show_secret_values() {
    let reason = invalid(
        json!({ "url": "http://h", "headers": { "Authorization": "Bearer s3cret", "X": 5 } }),
    );
    assert!(
        reason.contains("\"headers.X\"") && !reason.contains("s3cret"),
        "{reason}"
    );
    let reason = invalid(json!({ "command": ["x"], "env": { "TOKEN": "s3cret", "N": 1 } }));
    assert!(
        reason.contains("\"env.N\"") && !reason.contains("s3cret"),
        "{reason}"
    );
}

#[test]
fn timeout_defaults_and_overrides() {
    assert_eq!(spec(json!({ "command": ["x"] })).timeout, DEFAULT_TIMEOUT);
    assert_eq!(
        spec(json!({ "command": ["x"], "timeout": 250 })).timeout,
        Duration::from_millis(250)
    );
}

#[test]
fn tool_filter_semantics() {
    let filter = |tools: Value| spec(json!({ "command": ["x"], "tools": tools })).tools;
    assert_eq!(filter(json!({})), ToolFilter::All);
    let only = filter(json!({ "a": true, "b": false }));
    assert!(only.allows("a") && !only.allows("b") && !only.allows("c"));
    let except = filter(json!({ "b": false }));
    assert!(except.allows("a") && !except.allows("b"));
    assert_eq!(only.names(), ["a"]);
}

#[test]
fn expand_env_replaces_names() {
    // SAFETY: this is the only test that touches this variable.
    unsafe { std::env::set_var("TOOLNEXUS_TEST_TOKEN", "abc") };
    assert_eq!(expand_env("Bearer ${TOOLNEXUS_TEST_TOKEN}!"), "Bearer abc!");
    assert_eq!(expand_env("${TOOLNEXUS_UNSET_VAR}x"), "x");
    assert_eq!(expand_env("no ${closing"), "no ${closing");
}

#[test]
fn sanitize_replaces_every_other_char() {
    assert_eq!(sanitize("my.srv"), "my_srv");
    assert_eq!(sanitize("do it/now-ok_1"), "do_it_now-ok_1");
    assert_eq!(sanitize("é"), "_");
}

#[test]
fn max_total_timeout_is_none_by_default_and_validated_like_timeout() {
    assert_eq!(spec(json!({ "command": ["x"] })).max_total_timeout, None);
    assert_eq!(
        spec(json!({ "command": ["x"], "maxTotalTimeout": 1500 })).max_total_timeout,
        Some(Duration::from_millis(1500))
    );
    let wrong = invalid(json!({ "command": ["x"], "maxTotalTimeout": "x" }));
    assert!(
        wrong.contains("\"maxTotalTimeout\" must be a number"),
        "{wrong}"
    );
    let negative = invalid(json!({ "command": ["x"], "maxTotalTimeout": -1 }));
    assert!(negative.contains("positive"), "{negative}");
}

#[test]
fn protocol_picks_an_era_and_names_a_bad_one() {
    let era = |protocol: Value| spec(json!({ "command": ["x"], "protocol": protocol })).protocol;
    assert_eq!(
        spec(json!({ "command": ["x"] })).protocol,
        ProtocolChoice::Auto
    );
    assert_eq!(era(json!("auto")), ProtocolChoice::Auto);
    assert_eq!(era(json!("2026-07-28")), ProtocolChoice::Modern);
    assert_eq!(era(json!("2025-11-25")), ProtocolChoice::Legacy);
    let expected = "\"protocol\" must be \"auto\", \"2026-07-28\" or \"2025-11-25\", got";
    let bad = invalid(json!({ "command": ["x"], "protocol": "2024-11-05" }));
    assert_eq!(bad, format!("{expected} \"2024-11-05\""));
    let bad = invalid(json!({ "url": "http://h/mcp", "protocol": 7 }));
    assert_eq!(bad, format!("{expected} a number"));
}

#[test]
fn max_output_chars_is_a_positive_whole_number() {
    assert_eq!(spec(json!({ "command": ["x"] })).max_output_chars, None);
    assert_eq!(
        spec(json!({ "command": ["x"], "maxOutputChars": 5000 })).max_output_chars,
        Some(5000)
    );
    assert_eq!(
        invalid(json!({ "command": ["x"], "maxOutputChars": 0 })),
        "\"maxOutputChars\" must be a positive whole number of characters, got 0"
    );
    assert_eq!(
        invalid(json!({ "command": ["x"], "maxOutputChars": "big" })),
        "\"maxOutputChars\" must be a number of characters, got a string"
    );
}

#[test]
fn an_entry_fails_with_a_typed_error_whose_display_is_the_reason() {
    let error = |value: Value| match &config(json!({ "s": value })).servers[0].state {
        ServerState::Invalid(error) => error.clone(),
        other => panic!("expected an invalid server, got {other:?}"),
    };
    let wrong = error(json!({ "command": ["x"], "timeout": "soon" }));
    assert_eq!(
        wrong,
        EntryError::kind("timeout", "a number of milliseconds", "a string")
    );
    assert_eq!(
        wrong.to_string(),
        "\"timeout\" must be a number of milliseconds, got a string"
    );
    let unset = error(json!({ "url": "https://x/${TOOLNEXUS_SURELY_UNSET_VAR}" }));
    assert_eq!(
        unset,
        EntryError::Unset {
            field: "url".into(),
            name: "TOOLNEXUS_SURELY_UNSET_VAR".into()
        }
    );
    assert_eq!(error(json!(5)), EntryError::NotAnObject("a number"));
    assert_eq!(
        error(json!({ "type": "pipe", "command": ["x"] })),
        EntryError::UnknownType("pipe".into())
    );
}

#[test]
fn defer_loading_defers_every_tool_but_those_always_loaded() {
    let deferral =
        spec(json!({ "command": ["x"], "deferLoading": true, "alwaysLoad": ["search"] })).deferral;
    assert!(deferral.defers("fetch"));
    assert!(!deferral.defers("search"));
    assert!(!spec(json!({ "command": ["x"] })).deferral.defers("fetch"));
    assert_eq!(
        invalid(json!({ "command": ["x"], "alwaysLoad": "search" })),
        "\"alwaysLoad\" must be an array of strings, got a string"
    );
}
