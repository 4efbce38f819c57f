//! The stable codes of toolnexus's failures: what a program branches on (a rejection's
//! `error.code`, a composed result's `metadata.code`), where the message is for a person.
//! Each comes from the failure's type or kind, never from its words.

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Code {
    /// The server did not answer in time (`timeout`, `maxTotalTimeout`, a store's wait).
    Timeout,
    /// The caller's signal fired.
    Aborted,
    /// The source, store or session was closed before or during the request.
    Closed,
    /// The server could not be started or reached, or exited, or its store service failed.
    ServerFailed,
    /// No server of that name (in that source or view), or none connected.
    UnknownServer,
    /// No tool of that name.
    UnknownTool,
    /// The server needs a sign-in nobody here can give.
    SignInRequired,
    /// The config (or the state option) cannot be used.
    InvalidConfig,
    /// An argument of the call is not what it must be.
    InvalidArgument,
    /// The server broke the protocol: an unexpected, malformed or oversized answer.
    Protocol,
    /// The server answered with a JSON-RPC error.
    ServerError,
    /// The connection broke, or a request could not be sent.
    Connection,
    /// The server asked for something toolnexus does not do.
    Unsupported,
    /// The server asked for input and nobody (no `waitFor`) can give it.
    InputRequired,
    /// A structured result does not match the tool's output schema.
    OutputInvalid,
    /// Progress came faster than the host took it; the call was given up.
    Overwhelmed,
    /// A skill, or one of its files, is not what the server's listing says, or breaks the
    /// skills extension's rules or limits: it is not used.
    SkillRejected,
    /// No skill of that name on that server.
    UnknownSkill,
    /// Not expected to happen: a bug of toolnexus's.
    Internal,
}

impl Code {
    pub const ALL: [Code; 19] = [
        Code::Timeout,
        Code::Aborted,
        Code::Closed,
        Code::ServerFailed,
        Code::UnknownServer,
        Code::UnknownTool,
        Code::SignInRequired,
        Code::InvalidConfig,
        Code::InvalidArgument,
        Code::Protocol,
        Code::ServerError,
        Code::Connection,
        Code::Unsupported,
        Code::InputRequired,
        Code::OutputInvalid,
        Code::Overwhelmed,
        Code::SkillRejected,
        Code::UnknownSkill,
        Code::Internal,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            Code::Timeout => "TOOLNEXUS_TIMEOUT",
            Code::Aborted => "TOOLNEXUS_ABORTED",
            Code::Closed => "TOOLNEXUS_CLOSED",
            Code::ServerFailed => "TOOLNEXUS_SERVER_FAILED",
            Code::UnknownServer => "TOOLNEXUS_UNKNOWN_SERVER",
            Code::UnknownTool => "TOOLNEXUS_UNKNOWN_TOOL",
            Code::SignInRequired => "TOOLNEXUS_SIGN_IN_REQUIRED",
            Code::InvalidConfig => "TOOLNEXUS_INVALID_CONFIG",
            Code::InvalidArgument => "TOOLNEXUS_INVALID_ARGUMENT",
            Code::Protocol => "TOOLNEXUS_PROTOCOL",
            Code::ServerError => "TOOLNEXUS_SERVER_ERROR",
            Code::Connection => "TOOLNEXUS_CONNECTION",
            Code::Unsupported => "TOOLNEXUS_UNSUPPORTED",
            Code::InputRequired => "TOOLNEXUS_INPUT_REQUIRED",
            Code::OutputInvalid => "TOOLNEXUS_OUTPUT_INVALID",
            Code::Overwhelmed => "TOOLNEXUS_OVERWHELMED",
            Code::SkillRejected => "TOOLNEXUS_SKILL_REJECTED",
            Code::UnknownSkill => "TOOLNEXUS_UNKNOWN_SKILL",
            Code::Internal => "TOOLNEXUS_INTERNAL",
        }
    }
}

/// A failure with its code: what crosses to a host as an `Error` with `code`. Its
/// `Display` is the message.
#[derive(Debug, Clone, PartialEq)]
pub struct Coded {
    pub code: Code,
    pub message: String,
}

impl Coded {
    pub fn new(code: Code, message: impl Into<String>) -> Coded {
        Coded {
            code,
            message: message.into(),
        }
    }
}

impl std::fmt::Display for Coded {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for Coded {}

#[cfg(test)]
mod tests {
    use super::Code;

    #[test]
    fn every_code_is_its_own_and_says_whose() {
        let names: std::collections::HashSet<&str> = Code::ALL.iter().map(|c| c.as_str()).collect();
        assert_eq!(names.len(), Code::ALL.len());
        assert!(names.iter().all(|n| n.starts_with("TOOLNEXUS_")));
    }
}
