//! Finding the program as a Windows user expects: `npx` is `npx.cmd` somewhere on `PATH`,
//! tried with each extension of `PATHEXT` (which `CreateProcess` alone does not do).

use std::ffi::OsStr;
use std::io;
use std::path::{Path, PathBuf};

use super::env_name_key;
use crate::transport::local::Command;

const DEFAULT_PATHEXT: &str = ".COM;.EXE;.BAT;.CMD";

/// The file to run for `command.program`, looked up in the `PATH` and with the `PATHEXT`
/// of the command's own environment.
pub fn resolve(command: &Command) -> io::Result<PathBuf> {
    let var = |name: &str| {
        let key = env_name_key(OsStr::new(name));
        command
            .env
            .iter()
            .find(|(k, _)| env_name_key(k) == key)
            .map(|(_, v)| v.clone())
    };
    let pathext = var("PATHEXT").unwrap_or_else(|| DEFAULT_PATHEXT.into());
    let extensions: Vec<String> = pathext
        .to_string_lossy()
        .split(';')
        .filter(|ext| ext.starts_with('.'))
        .map(str::to_owned)
        .collect();
    let program = Path::new(command.program);
    let named_with_folder = command.program.contains(['/', '\\']) || program.is_absolute();
    let folders: Vec<PathBuf> = if named_with_folder {
        let base = command.cwd.map(Path::to_path_buf).unwrap_or_default();
        vec![base]
    } else {
        var("PATH")
            .map(|path| std::env::split_paths(&path).collect())
            .unwrap_or_default()
    };
    for folder in folders {
        let base = folder.join(program);
        if let Some(found) = candidates(&base, &extensions).find(|file| file.is_file()) {
            return Ok(found);
        }
    }
    Err(io::Error::new(
        io::ErrorKind::NotFound,
        "not found (looked in PATH, with each extension of PATHEXT)",
    ))
}

/// `base` itself when it already ends in one of `extensions`, else `base` with each.
fn candidates<'a>(base: &'a Path, extensions: &'a [String]) -> impl Iterator<Item = PathBuf> + 'a {
    let own = base
        .extension()
        .map(|ext| format!(".{}", ext.to_string_lossy()));
    let known = own.is_some_and(|own| extensions.iter().any(|ext| ext.eq_ignore_ascii_case(&own)));
    let with_extensions = extensions.iter().filter(move |_| !known).map(move |ext| {
        let mut name = base.as_os_str().to_owned();
        name.push(ext);
        PathBuf::from(name)
    });
    known
        .then(|| base.to_path_buf())
        .into_iter()
        .chain(with_extensions)
}
