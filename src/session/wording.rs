//! How a request's failures read: the same for local and remote servers.

use crate::code::Code;
use crate::tool::result::ToolOutput;

pub fn during(tool: &str) -> String {
    format!("tools/call \"{tool}\"")
}

/// A failure as the call's result: an error naming the server, with its code.
pub fn failed(server: &str, code: Code, reason: impl std::fmt::Display) -> ToolOutput {
    ToolOutput::failure(code, format!("MCP server \"{server}\" {reason}"))
}

pub fn aborted(server: &str, tool: &str) -> ToolOutput {
    ToolOutput::failure(
        Code::Aborted,
        format!("MCP server \"{server}\": {} was aborted", during(tool)),
    )
}

/// A call whose progress came faster than the host took it, given up.
pub fn progress_given_up(server: &str, tool: &str) -> String {
    format!(
        "MCP server \"{server}\" sent progress for {} faster than the host could take it; the call was given up",
        during(tool)
    )
}

pub fn bad_arguments(server: &str, tool: &str) -> ToolOutput {
    ToolOutput::failure(
        Code::InvalidArgument,
        format!("MCP server \"{server}\": arguments for \"{tool}\" must be a JSON object"),
    )
}

pub fn closed_before(phase: &str) -> String {
    format!("is closed; cannot run {phase}")
}

pub fn closed_during(phase: &str) -> String {
    format!("was closed during {phase}")
}

pub fn timed_out(phase: &str, timeout: std::time::Duration) -> String {
    format!("did not answer {phase} within {} ms", timeout.as_millis())
}

pub fn timed_out_in_total(phase: &str, max_total: std::time::Duration) -> String {
    format!(
        "did not finish {phase} within its maxTotalTimeout of {} ms",
        max_total.as_millis()
    )
}

pub fn answered_with_error(phase: &str, message: &str) -> String {
    format!("answered {phase} with an error: {message}")
}

pub fn unexpected_response(phase: &str) -> String {
    format!("sent an unexpected response to {phase}")
}

pub fn malformed_response(phase: &str) -> String {
    format!("sent a response to {phase} that is not valid JSON")
}
