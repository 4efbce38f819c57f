//! What a server that could not be started says: the system's reason, and for a program
//! looked up in `PATH` that is in none of its folders, the `PATH` searched and what to do.
//! A `PATH` the entry's own `env` sets is an env value, which is never shown.

use std::ffi::OsString;
use std::io;

use super::environment::is_path;

/// Why a server could not be started (see [`explain`]), worded at once: the words need
/// the server's environment, which must not be kept (it holds secrets).
#[derive(Debug)]
pub struct StartError(pub(super) String);

impl std::fmt::Display for StartError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for StartError {}

/// The reason `program`, started with environment `env`, failed with `error`;
/// `own_path`: the entry's `env` sets `PATH`.
pub fn explain(
    program: &str,
    env: &[(OsString, OsString)],
    own_path: bool,
    error: &io::Error,
) -> String {
    let reason = format!("cannot start \"{program}\": {error}");
    if error.kind() != io::ErrorKind::NotFound || program.contains(std::path::is_separator) {
        return reason;
    }
    let path = env
        .iter()
        .find(|(name, _)| is_path(name))
        .map(|(_, value)| value.to_string_lossy().into_owned());
    match path {
        Some(_) if own_path => format!(
            "{reason}; it is in no folder of the PATH the entry's \"env\" sets: give \"command\" its full path, or add its folder to that PATH"
        ),
        Some(path) => format!(
            "{reason}; it is in no folder of the PATH searched ({path}): give \"command\" its full path, or add its folder to PATH"
        ),
        None => format!(
            "{reason}; the server's environment has no PATH: give \"command\" its full path, or set PATH in \"env\""
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_program_not_on_path_names_the_path_searched() {
        let env = vec![("PATH".into(), "/opt/a:/usr/bin".into())];
        let missing = io::Error::from(io::ErrorKind::NotFound);
        let reason = explain("mcp-server", &env, false, &missing);
        assert!(
            reason.starts_with("cannot start \"mcp-server\": "),
            "{reason}"
        );
        assert!(
            reason.ends_with("; it is in no folder of the PATH searched (/opt/a:/usr/bin): give \"command\" its full path, or add its folder to PATH"),
            "{reason}"
        );
        assert!(explain("mcp-server", &[], false, &missing).contains("has no PATH"));
        let own = explain("mcp-server", &env, true, &missing);
        assert!(own.contains("the PATH the entry's \"env\" sets") && !own.contains("/opt/a"));
        // A path is not looked up, and other failures have nothing to add.
        let path = explain("./server.sh", &env, false, &missing);
        assert!(!path.contains("PATH"), "{path}");
        let denied = io::Error::from(io::ErrorKind::PermissionDenied);
        assert!(!explain("mcp-server", &env, false, &denied).contains("PATH"));
    }
}
