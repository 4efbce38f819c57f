//! `${VAR}` expansion in entries, `envFile` and `inheritEnv`, against a fixed environment.

use super::super::*;
use serde_json::json;

fn var(name: &str) -> Option<String> {
    match name {
        "HOME" => Some("/home/ada".into()),
        "TOKEN" => Some("s3cret".into()),
        _ => None,
    }
}

fn state_in(entry: Value, base_dir: Option<&Path>) -> ServerState {
    let Value::Object(map) = json!({ "s": entry }) else {
        unreachable!()
    };
    let context = Context {
        base_dir,
        var: &var,
    };
    McpConfig::from_server_map_in(map, &context).servers[0]
        .state
        .clone()
}

fn transport(entry: Value) -> TransportSpec {
    match state_in(entry, None) {
        ServerState::Enabled(spec) => spec.transport,
        other => panic!("expected an enabled server, got {other:?}"),
    }
}

fn local(entry: Value) -> LocalSpec {
    match transport(entry) {
        TransportSpec::Local(local) => local,
        other => panic!("expected a local server, got {other:?}"),
    }
}

fn invalid(entry: Value) -> String {
    match state_in(entry, None) {
        ServerState::Invalid(error) => error.to_string(),
        other => panic!("expected an invalid server, got {other:?}"),
    }
}

#[test]
fn command_args_env_and_cwd_expand() {
    let spec = local(json!({
        "command": "${HOME}/bin/server",
        "args": ["--root=${HOME}", "--mode=${MODE:-dev}"],
        "env": { "API_TOKEN": "${TOKEN}" },
        "environment": { "DIR": "${HOME}/data" },
        "cwd": "${HOME}/work"
    }));
    assert_eq!(spec.program, "/home/ada/bin/server");
    assert_eq!(spec.args, ["--root=/home/ada", "--mode=dev"]);
    assert_eq!(
        spec.env,
        [
            ("API_TOKEN".into(), "s3cret".into()),
            ("DIR".into(), "/home/ada/data".into())
        ]
    );
    assert_eq!(spec.cwd, Some(PathBuf::from("/home/ada/work")));
    assert!(
        spec.inherit_env,
        "the host's environment is inherited by default"
    );
    let array = local(json!({ "command": ["${HOME}/s", "${HOME}"] }));
    assert_eq!(
        (array.program, array.args),
        ("/home/ada/s".into(), vec!["/home/ada".into()])
    );
}

#[test]
fn url_and_headers_expand() {
    let TransportSpec::Remote(remote) = transport(json!({
        "url": "https://${HOST:-example.com}/mcp",
        "headers": { "Authorization": "Bearer ${TOKEN}" }
    })) else {
        panic!("expected a remote server")
    };
    assert_eq!(remote.url, "https://example.com/mcp");
    assert_eq!(
        remote.headers,
        [("Authorization".into(), "Bearer s3cret".into())]
    );
}

#[test]
fn an_unset_variable_without_default_fails_the_server_naming_it_and_where() {
    for (entry, field) in [
        (json!({ "command": ["x", "${NOPE}"] }), "\"command[1]\""),
        (
            json!({ "command": "x", "args": ["a", "${NOPE}"] }),
            "\"args[1]\"",
        ),
        (json!({ "command": ["${NOPE}"] }), "\"command[0]\""),
        (
            json!({ "command": ["x"], "env": { "K": "${TOKEN}${NOPE}" } }),
            "\"env.K\"",
        ),
        (json!({ "command": ["x"], "cwd": "${NOPE}" }), "\"cwd\""),
        (json!({ "url": "${NOPE}" }), "\"url\""),
        (
            json!({ "url": "http://h", "headers": { "X": "${TOKEN}-${NOPE}" } }),
            "\"headers.X\"",
        ),
    ] {
        let reason = invalid(entry);
        assert!(
            reason.contains("${NOPE}") && reason.contains(field),
            "{reason}"
        );
        assert!(!reason.contains("s3cret"), "a value leaked: {reason}");
    }
    assert!(invalid(json!({ "command": ["${EMPTY:-}"] })).contains("empty program"));
}

#[test]
fn env_file_is_read_relative_to_the_config_and_env_wins() {
    let dir = std::env::temp_dir().join(format!("toolnexus-envfile-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("a temp dir");
    std::fs::write(
        dir.join("server.env"),
        "# keys\nexport FROM_FILE=\"file value\"\nSHARED=file\n",
    )
    .expect("written");
    let entry = json!({ "command": ["x"], "envFile": "server.env", "env": { "SHARED": "entry" } });
    let ServerState::Enabled(spec) = state_in(entry.clone(), Some(&dir)) else {
        panic!("expected an enabled server")
    };
    let TransportSpec::Local(spec) = spec.transport else {
        panic!("expected a local server")
    };
    // The entry's own `env` comes later, so it is the value the server gets.
    assert_eq!(
        spec.env,
        [
            ("FROM_FILE".into(), "file value".into()),
            ("SHARED".into(), "file".into()),
            ("SHARED".into(), "entry".into())
        ]
    );
    // From an object there is no config folder: relative to the current directory.
    let ServerState::Invalid(reason) = state_in(entry, None) else {
        panic!("a missing env file fails the server")
    };
    assert!(reason.to_string().contains("\"server.env\""), "{reason}");
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn inherit_env_false_and_bad_types() {
    assert!(!local(json!({ "command": ["x"], "inheritEnv": false })).inherit_env);
    assert!(invalid(json!({ "command": ["x"], "inheritEnv": "no" })).contains("\"inheritEnv\""));
    assert!(invalid(json!({ "command": ["x"], "envFile": 1 })).contains("\"envFile\""));
}

#[test]
fn the_schema_line_is_not_a_server() {
    let config = McpConfig::load(&ConfigInput::Json(
        json!({ "$schema": "./mcp.schema.json", "a": { "command": ["x"] } }).to_string(),
    ))
    .expect("a config");
    let names: Vec<_> = config.servers.iter().map(|s| s.name.as_str()).collect();
    assert_eq!(names, ["a"]);
}
