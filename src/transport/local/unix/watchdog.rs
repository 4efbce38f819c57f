//! The host-death promise without a parent-death signal (macOS, the BSDs): one small
//! process per host, started with the first server, that outlives the host only to end
//! its servers. The host tells it of every group as it starts and ends ("+ pgid" and
//! "- pgid" lines) over a pipe whose write end only the host holds. However the host dies,
//! a crash or SIGKILL included, the kernel closes that end; the watchdog reads EOF and
//! kills every group still listed. It runs no code of the host's, so it needs nothing of
//! the host at its death.
//!
//! It is a POSIX `sh`, present on every Unix, in a process group of its own and ignoring
//! the signals a terminal or a kill of the host's group sends, so that what kills the host
//! does not take it first. Linux has the parent-death signal instead, unless it is turned
//! off (`linux::spawn`), which is how its tests exercise the watchdog.

use super::family;
use crate::lock::lock;
use std::collections::HashSet;
use std::io::{self, Write};
use std::process::{ChildStdin, Command, Stdio};
use std::sync::Mutex;

/// A group is listed as " pgid " in `live`, so that one id never matches inside another.
const SCRIPT: &str = r#"trap '' HUP INT QUIT TERM PIPE TSTP TTIN TTOU
live=' '
while read -r op pgid; do
  case $op in
    +) live="$live$pgid " ;;
    -) case $live in *" $pgid "*) head=${live%% $pgid *}; live="$head ${live#* $pgid }" ;; esac ;;
  esac
done
for pgid in $live; do kill -s KILL -- "-$pgid" 2>/dev/null; done
"#;

/// The write end of the watchdog's pipe, once started; `None` also after it went away,
/// so that the next group starts a new one.
static PIPE: Mutex<Option<ChildStdin>> = Mutex::new(None);

/// `pgid` has started; `live` holds every live group, it included (all of them are told
/// to a watchdog that starts now).
pub fn started(pgid: u32, live: &HashSet<u32>) {
    if !family::needs_watchdog() {
        return;
    }
    let mut pipe = lock(&PIPE);
    let told = match pipe.as_mut() {
        Some(stdin) => writeln!(stdin, "+ {pgid}"),
        None => start().and_then(|mut stdin| {
            live.iter().try_for_each(|g| writeln!(stdin, "+ {g}"))?;
            *pipe = Some(stdin);
            Ok(())
        }),
    };
    if told.is_err() {
        // Gone or never started: the next group tries a new one, with every live group.
        *pipe = None;
    }
}

/// `pgid` has ended, and its id may be taken by another group once it is reaped.
pub fn ended(pgid: u32) {
    let mut pipe = lock(&PIPE);
    if let Some(stdin) = pipe.as_mut()
        && writeln!(stdin, "- {pgid}").is_err()
    {
        *pipe = None;
    }
}

fn start() -> io::Result<ChildStdin> {
    use std::os::unix::process::CommandExt;
    // std's pipe ends are close-on-exec in the host, so no server inherits the write end
    // (which would keep the watchdog from ever reading EOF). The child is never waited
    // for: it ends after the host.
    let mut child = Command::new("/bin/sh")
        .args(["-c", SCRIPT])
        .env_clear()
        .env("PATH", "/usr/bin:/bin")
        .current_dir("/")
        .stdin(Stdio::piped())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .process_group(0)
        .spawn()?;
    child
        .stdin
        .take()
        .ok_or_else(|| io::Error::other("no pipe to the watchdog"))
}
