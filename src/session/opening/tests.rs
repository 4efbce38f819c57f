//! The opening's decisions, one table row per way a server answers, with no I/O.

use rmcp::model::{CustomResult, EmptyResult, ErrorCode, ErrorData, RequestId, ServerResult};
use serde_json::{Value, json};

use super::classify::{Answer, Exchange, Next, discover_id, initialize_id};
use crate::config::ProtocolChoice::{self, Auto, Legacy, Modern};

/// What happens to the opening.
enum Event {
    Discover(Answer),
    Initialize(Answer),
    /// An answer to a request the opening did not send.
    Stray(Answer),
    /// The server read discover and stayed silent for `SILENCE`.
    Silence,
    /// A held answer waited `SILENCE` for the other one.
    Held,
}
use Event::*;

fn discover(versions: &[&str]) -> Answer {
    let result = json!({ "supportedVersions": versions, "capabilities": {} });
    Ok(ServerResult::CustomResult(CustomResult(result)))
}

fn initialize(version: &str) -> Answer {
    let result = json!({
        "protocolVersion": version,
        "capabilities": {},
        "serverInfo": { "name": "s", "version": "1" },
    });
    Ok(ServerResult::InitializeResult(
        serde_json::from_value(result).expect("an initialize result"),
    ))
}

fn refused(code: ErrorCode, data: Option<Value>) -> Answer {
    Err(ErrorData::new(code, "no", data))
}

fn empty() -> Answer {
    Ok(ServerResult::EmptyResult(EmptyResult {}))
}

/// A step in words: what is sent, what opens with which version and which requests are
/// left unanswered, or how it fails (with the JSON-RPC code kept).
fn show(next: Next, exchange: &Exchange) -> String {
    let left = || {
        let ids = exchange.unanswered().into_iter().map(|id| match id {
            id if id == discover_id() => "discover",
            id if id == initialize_id() => "initialize",
            _ => "?",
        });
        ids.collect::<Vec<_>>().join(" ")
    };
    match next {
        Next::Wait => "wait".into(),
        Next::Discover => "send discover".into(),
        Next::Initialize => "send initialize".into(),
        Next::Initialized(peer) => format!("2025 {} [{}]", peer.protocol_version, left()),
        Next::Open(peer) => format!("2026 {} [{}]", peer.protocol_version, left()),
        Next::Fail(error) => format!("fail {:?}: {error}", error.code()),
    }
}

fn run(protocol: ProtocolChoice, events: Vec<Event>) -> Vec<String> {
    let (mut exchange, first) = Exchange::start(protocol);
    let mut steps = vec![show(first, &exchange)];
    for event in events {
        let next = match event {
            Discover(answer) => exchange.answered(&discover_id(), answer),
            Initialize(answer) => exchange.answered(&initialize_id(), answer),
            Stray(answer) => exchange.answered(&RequestId::Number(7), answer),
            Silence => exchange.silent(),
            Held => exchange.held_long_enough(),
        };
        steps.push(show(next, &exchange));
    }
    steps
}

#[test]
fn each_way_a_server_answers_the_opening_is_classified() {
    let unsupported = ErrorCode::UNSUPPORTED_PROTOCOL_VERSION;
    let offers = || Some(json!({ "supported": ["2026-07-28"] }));
    let not_found = ErrorCode::METHOD_NOT_FOUND;
    let cases: Vec<(&str, ProtocolChoice, Vec<Event>, Vec<&str>)> = vec![
        (
            "a 2026 server answers discover",
            Auto,
            vec![Discover(discover(&["2026-07-28"]))],
            vec!["send discover", "2026 2026-07-28 []"],
        ),
        (
            "a 2025 server refuses discover: initialize follows",
            Auto,
            vec![
                Discover(refused(not_found, None)),
                Initialize(initialize("2025-11-25")),
            ],
            vec!["send discover", "send initialize", "2025 2025-11-25 []"],
        ),
        (
            "a 2025 server silent on discover: initialize follows, discover stays unanswered",
            Auto,
            vec![Silence, Initialize(initialize("2025-06-18"))],
            vec![
                "send discover",
                "send initialize",
                "2025 2025-06-18 [discover]",
            ],
        ),
        (
            "a server that answers both ties the connection to the 2025 session",
            Auto,
            vec![
                Silence,
                Discover(discover(&["2026-07-28"])),
                Initialize(initialize("2025-11-25")),
            ],
            vec![
                "send discover",
                "send initialize",
                "wait",
                "2025 2025-11-25 []",
            ],
        ),
        (
            "discover answered, initialize never: the 2026 session",
            Auto,
            vec![Silence, Discover(discover(&["2026-07-28"])), Held],
            vec![
                "send discover",
                "send initialize",
                "wait",
                "2026 2026-07-28 [initialize]",
            ],
        ),
        (
            "discover answered, initialize refused: the 2026 session",
            Auto,
            vec![
                Silence,
                Discover(discover(&["2026-07-28"])),
                Initialize(refused(not_found, None)),
            ],
            vec![
                "send discover",
                "send initialize",
                "wait",
                "2026 2026-07-28 []",
            ],
        ),
        (
            "initialize refused, discover never answered: the refusal stands",
            Auto,
            vec![Silence, Initialize(refused(not_found, None)), Held],
            vec![
                "send discover",
                "send initialize",
                "wait",
                "fail Some(-32601): answered initialize with an error: no",
            ],
        ),
        (
            "initialize refused, then discover answered: the 2026 session",
            Auto,
            vec![
                Silence,
                Initialize(refused(not_found, None)),
                Discover(discover(&["2026-07-28"])),
            ],
            vec![
                "send discover",
                "send initialize",
                "wait",
                "2026 2026-07-28 []",
            ],
        ),
        (
            "both refused: initialize's refusal is the one told",
            Auto,
            vec![
                Silence,
                Initialize(refused(ErrorCode::INVALID_REQUEST, None)),
                Discover(refused(not_found, None)),
            ],
            vec![
                "send discover",
                "send initialize",
                "wait",
                "fail Some(-32600): answered initialize with an error: no",
            ],
        ),
        (
            "the version refused but 2026-07-28 listed: discover asked once more",
            Auto,
            vec![
                Discover(refused(unsupported, offers())),
                Discover(refused(unsupported, offers())),
                Initialize(initialize("2025-11-25")),
            ],
            vec![
                "send discover",
                "send discover",
                "send initialize",
                "2025 2025-11-25 []",
            ],
        ),
        (
            "a 2026 server's own refusal fails at once, with its code",
            Auto,
            vec![Discover(refused(
                ErrorCode::MISSING_REQUIRED_CLIENT_CAPABILITY,
                None,
            ))],
            vec![
                "send discover",
                "fail Some(-32021): answered server/discover with an error: no",
            ],
        ),
        (
            "an unusable discover answer: initialize follows",
            Auto,
            vec![Discover(empty()), Initialize(initialize("2025-11-25"))],
            vec!["send discover", "send initialize", "2025 2025-11-25 []"],
        ),
        (
            "discover lists only older versions: initialize follows",
            Auto,
            vec![Discover(discover(&["2025-11-25"]))],
            vec!["send discover", "send initialize"],
        ),
        (
            "no silence counts once initialize is sent",
            Auto,
            vec![Discover(refused(not_found, None)), Silence],
            vec!["send discover", "send initialize", "wait"],
        ),
        (
            "an answer to another request changes nothing",
            Auto,
            vec![Stray(empty()), Initialize(initialize("2025-11-25"))],
            vec!["send discover", "wait", "wait"],
        ),
        (
            "pinned to 2026: a refused discover fails",
            Modern,
            vec![Discover(refused(not_found, None))],
            vec![
                "send discover",
                "fail None: does not speak MCP 2026-07-28, which its \"protocol\" pins: it answered server/discover with an error: no",
            ],
        ),
        (
            "pinned to 2026: older versions only fail, and silence sends nothing",
            Modern,
            vec![Silence, Discover(discover(&["2025-11-25"]))],
            vec![
                "send discover",
                "wait",
                "fail None: does not speak MCP 2026-07-28, which its \"protocol\" pins: it supports only protocol versions 2025-11-25",
            ],
        ),
        (
            "pinned to 2025: initialize alone",
            Legacy,
            vec![Silence, Initialize(initialize("2025-03-26"))],
            vec!["send initialize", "wait", "2025 2025-03-26 []"],
        ),
        (
            "initialize answered with a version without initialize",
            Legacy,
            vec![Initialize(initialize("2026-07-28"))],
            vec![
                "send initialize",
                "fail None: answered initialize with protocol version \"2026-07-28\", which this client does not support",
            ],
        ),
        (
            "initialize answered with an unknown version",
            Legacy,
            vec![Initialize(initialize("1999-01-01"))],
            vec![
                "send initialize",
                "fail None: answered initialize with protocol version \"1999-01-01\", which this client does not support",
            ],
        ),
        (
            "initialize answered with something else",
            Legacy,
            vec![Initialize(empty())],
            vec![
                "send initialize",
                "fail None: sent an unexpected response to initialize",
            ],
        ),
    ];
    for (name, protocol, events, expected) in cases {
        assert_eq!(run(protocol, events), expected, "{name}");
    }
}
