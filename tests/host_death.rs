//! A host killed by a signal takes its servers down through the watchdog (what macOS and
//! the BSDs rely on), here with Linux's parent-death signal off. The host is this test
//! binary run again as a child, in a process group of its own, starting two servers that
//! each leave a grandchild; the test SIGKILLs the host's whole group and counts survivors.
#![cfg(unix)]

use std::path::Path;
use std::process::{Child, Command};
use std::time::Duration;

use serde_json::json;
use tokio_util::sync::CancellationToken;
use toolnexus::config::{ConfigInput, McpConfig};
use toolnexus::inventory;

mod liveness;
use liveness::{alive, children_of};

/// Set in the child run: where its servers write their pids.
const HOST_PIDS: &str = "TOOLNEXUS_TEST_HOST_PIDS";

/// The host: starts two servers that never answer, then waits to be killed.
#[tokio::test]
#[ignore = "run by the other tests of this file, as the host they kill"]
async fn host() {
    let pids = std::env::var(HOST_PIDS).expect("run as a host");
    let tree = format!("echo $$ >> {pids}; sleep 300 & echo $! >> {pids}; wait");
    let entry = json!({ "command": ["sh", "-c", tree] });
    let servers = json!({ "a": entry, "b": entry }).to_string();
    let config = McpConfig::load(&ConfigInput::Json(servers)).expect("valid config");
    let _ = inventory::load_source(&config, &Default::default(), &CancellationToken::new()).await;
}

struct Host {
    child: Child,
    servers: Vec<i32>,
}

/// Starts the host with `mode` and waits for its two servers and their grandchildren.
fn start_host(name: &str, mode: Option<&str>) -> Host {
    let pids = std::env::temp_dir().join(format!("toolnexus-{name}-{}.pids", std::process::id()));
    let _ = std::fs::remove_file(&pids);
    let mut command = Command::new(std::env::current_exe().expect("this test binary"));
    command
        .args(["--exact", "host", "--ignored", "--nocapture"])
        .env(HOST_PIDS, &pids);
    if let Some(mode) = mode {
        command.env("TOOLNEXUS_HOST_DEATH", mode);
    }
    std::os::unix::process::CommandExt::process_group(&mut command, 0);
    let child = command.spawn().expect("the host starts");
    let servers = read_pids(&pids, 4);
    let _ = std::fs::remove_file(&pids);
    Host { child, servers }
}

fn read_pids(path: &Path, count: usize) -> Vec<i32> {
    for _ in 0..500 {
        let pids: Vec<i32> = std::fs::read_to_string(path)
            .unwrap_or_default()
            .lines()
            .filter_map(|l| l.trim().parse().ok())
            .collect();
        if pids.len() == count {
            return pids;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    panic!(
        "the host's servers never wrote their pids to {}",
        path.display()
    );
}

/// SIGKILLs every process in the host's group (the host and whatever shares its group).
fn kill_group(host: &mut Host) {
    let pgid = i32::try_from(host.child.id()).expect("a pid");
    // SAFETY: killpg has no memory-safety preconditions.
    unsafe { libc::killpg(pgid, libc::SIGKILL) };
    host.child.wait().expect("the host is reaped");
}

fn survivors(pids: &[i32], within: Duration) -> Vec<i32> {
    let deadline = std::time::Instant::now() + within;
    loop {
        let left: Vec<i32> = pids.iter().copied().filter(|&p| alive(p)).collect();
        if left.is_empty() || std::time::Instant::now() > deadline {
            return left;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

fn kill_all(pids: &[i32]) {
    for &pid in pids {
        // SAFETY: kill has no memory-safety preconditions.
        unsafe { libc::kill(pid, libc::SIGKILL) };
    }
}

/// The host's children that are not its servers: the watchdog.
fn watchdogs(host: &Host) -> Vec<i32> {
    let host_pid = i32::try_from(host.child.id()).expect("a pid");
    children_of(host_pid)
        .into_iter()
        .filter(|pid| !host.servers.contains(pid))
        .collect()
}

#[test]
fn a_host_killed_with_its_group_takes_every_server_tree_down_through_the_watchdog() {
    let mut host = start_host("watchdog", Some("watchdog"));
    assert_eq!(watchdogs(&host).len(), 1, "one watchdog per host");
    kill_group(&mut host);
    let left = survivors(&host.servers, Duration::from_secs(5));
    kill_all(&left);
    assert_eq!(left, Vec::<i32>::new(), "of {:?}", host.servers);
}

#[test]
fn without_its_watchdog_nothing_else_ends_the_servers_when_the_parent_death_signal_is_off() {
    // The control: it shows the watchdog is what ended them above.
    let mut host = start_host("no-watchdog", Some("watchdog"));
    let watchdog = watchdogs(&host);
    kill_all(&watchdog);
    assert_eq!(
        survivors(&watchdog, Duration::from_secs(5)),
        Vec::<i32>::new()
    );
    kill_group(&mut host);
    std::thread::sleep(Duration::from_millis(500));
    let left = survivors(&host.servers, Duration::ZERO);
    kill_all(&host.servers);
    assert_eq!(left.len(), 4, "of {:?}", host.servers);
}
