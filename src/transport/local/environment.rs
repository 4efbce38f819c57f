//! The environment a server starts with.

use std::collections::BTreeMap;
use std::ffi::OsString;

use super::os;
use crate::config::LocalSpec;

/// The server's whole environment: the host's (or only its safe part), then its own
/// variables, a later one winning over an earlier one of the same name (as the OS compares
/// names: on Windows `Path` and `PATH` are one variable).
pub fn environment(spec: &LocalSpec) -> Vec<(OsString, OsString)> {
    let host: Box<dyn Iterator<Item = (OsString, OsString)>> = if spec.inherit_env {
        Box::new(std::env::vars_os())
    } else {
        Box::new(safe_environment().map(|(k, v)| (k.into(), v)))
    };
    let own = spec.env.iter().map(|(k, v)| (k.into(), v.into()));
    let mut env = BTreeMap::new();
    for (key, value) in host.chain(own) {
        env.insert(os::env_name_key(&key), (key, value));
    }
    env.into_values().collect()
}

/// Whether an environment variable's name is `PATH`, as the OS compares names.
pub fn is_path(name: &std::ffi::OsStr) -> bool {
    os::env_name_key(name) == os::env_name_key("PATH".as_ref())
}

/// What a server started with `"inheritEnv": false` gets of the host's environment (see
/// `os::SAFE_VARS`). A value starting with `()` is a shell function, which the TypeScript
/// SDK leaves out too.
fn safe_environment() -> impl Iterator<Item = (&'static str, OsString)> {
    os::SAFE_VARS.iter().filter_map(|&name| {
        let value = std::env::var_os(name)?;
        (!value.as_encoded_bytes().starts_with(b"()")).then_some((name, value))
    })
}
