//! The Redis backend and a namespace on it, against a real `redis-server` this test starts
//! on a free loopback port (`scripts/ensure-redis.sh` installs one; never skipped).
#![cfg(unix)]

use std::net::TcpListener;
use std::process::{Child, Command, Stdio};
use std::sync::Arc;
use std::time::{Duration, Instant};

use tokio::sync::mpsc;
use toolnexus::state::redis::RedisState;
use toolnexus::state::{Backend, Feed, Health, StateError, open_redis};

struct Server {
    child: Child,
    port: u16,
    dir: std::path::PathBuf,
}

/// `redis-server` from PATH, else where ensure-redis.sh puts PyPI's.
fn binary() -> String {
    let on_path = Command::new("redis-server").arg("--version").output();
    if on_path.is_ok_and(|o| o.status.success()) {
        return "redis-server".into();
    }
    let home = std::env::var("HOME").unwrap_or_default();
    format!("{home}/.cache/toolnexus-redis/bin/redis-server")
}

fn free_port() -> u16 {
    let listener = TcpListener::bind("127.0.0.1:0").expect("a free port");
    listener.local_addr().expect("an address").port()
}

impl Server {
    fn start_on(port: u16) -> Server {
        let dir =
            std::env::temp_dir().join(format!("toolnexus-redis-{}-{port}", std::process::id()));
        std::fs::create_dir_all(&dir).expect("a folder");
        let child = Command::new(binary())
            .args([
                "--bind",
                "127.0.0.1",
                "--port",
                &port.to_string(),
                "--save",
                "",
                "--appendonly",
                "no",
            ])
            .arg("--dir")
            .arg(&dir)
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("redis-server starts (scripts/ensure-redis.sh installs it)");
        let deadline = Instant::now() + Duration::from_secs(5);
        while std::net::TcpStream::connect(("127.0.0.1", port)).is_err() {
            assert!(Instant::now() < deadline, "redis-server listens on {port}");
            std::thread::sleep(Duration::from_millis(20));
        }
        Server { child, port, dir }
    }

    fn url(&self) -> String {
        format!("redis://127.0.0.1:{}", self.port)
    }

    fn stop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        self.stop();
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

async fn until(what: &str, mut done: impl FnMut() -> bool) {
    let deadline = Instant::now() + Duration::from_secs(10);
    while !done() {
        assert!(Instant::now() < deadline, "timed out waiting for {what}");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn compare_and_set_is_atomic_and_a_foreign_value_counts_as_absent() {
    let server = Server::start_on(free_port());
    let state = RedisState::open(&server.url()).expect("a URL");
    let ok = |r: Result<bool, StateError>| r.expect("answered");
    assert!(ok(state
        .compare_and_set("k", None, Some("1".into()), None)
        .await));
    assert!(!ok(state
        .compare_and_set("k", None, Some("2".into()), None)
        .await));
    assert!(!ok(state
        .compare_and_set("k", Some("0".into()), Some("2".into()), None)
        .await));
    assert!(ok(state
        .compare_and_set("k", Some("1".into()), Some("2".into()), None)
        .await));
    assert_eq!(state.get("k").await, Ok(Some("2".into())));
    assert!(ok(state
        .compare_and_set("k", Some("2".into()), None, None)
        .await));
    assert_eq!(state.get("k").await, Ok(None));
    // A hash where a string is kept: read as none, replaced by the next write.
    let mut redis = Command::new("redis-cli");
    let made = redis
        .args(["-p", &server.port.to_string(), "HSET", "h", "f", "v"])
        .output();
    if made.is_ok_and(|o| o.status.success()) {
        assert_eq!(state.get("h").await, Ok(None));
        assert!(ok(state
            .compare_and_set("h", None, Some("s".into()), None)
            .await));
        assert_eq!(state.get("h").await, Ok(Some("s".into())));
    }
    // Expiry.
    state
        .set("short", "v".into(), Some(Duration::from_millis(50)))
        .await
        .expect("set");
    tokio::time::sleep(Duration::from_millis(120)).await;
    assert_eq!(state.get("short").await, Ok(None));
    let keys = ["short".to_owned(), "k".to_owned(), "h".to_owned()];
    let many = state.get_many(&keys).await.expect("answered");
    assert_eq!(many.len(), 3);
}

#[tokio::test(flavor = "multi_thread")]
async fn a_subscription_rejoins_after_the_server_restarts() {
    let port = free_port();
    let mut server = Server::start_on(port);
    let state = Arc::new(RedisState::open(&server.url()).expect("a URL"));
    let (tx, mut rx) = mpsc::channel(16);
    let follower = state.clone();
    tokio::spawn(async move { follower.subscribe("news", tx).await });
    assert_eq!(rx.recv().await, Some(Feed::Joined));
    state
        .publish("news", "one".into())
        .await
        .expect("published");
    assert_eq!(rx.recv().await, Some(Feed::Message("one".into())));
    server.stop();
    assert!(matches!(rx.recv().await, Some(Feed::Lost(_))));
    let _again = Server::start_on(port);
    loop {
        match tokio::time::timeout(Duration::from_secs(10), rx.recv()).await {
            Ok(Some(Feed::Joined)) => break,
            Ok(Some(Feed::Lost(_))) => continue,
            other => panic!("expected to rejoin, got {other:?}"),
        }
    }
    // The pooled connection reconnects too.
    let deadline = Instant::now() + Duration::from_secs(10);
    while state.publish("news", "two".into()).await.is_err() {
        assert!(Instant::now() < deadline, "publish works again");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    assert_eq!(rx.recv().await, Some(Feed::Message("two".into())));
}

#[tokio::test(flavor = "multi_thread")]
async fn a_state_that_is_not_there_is_unavailable_and_gets_what_was_kept_later() {
    let port = free_port();
    let url = format!("redis://127.0.0.1:{port}/0");
    let shared = open_redis(&url, Some("t"), None).expect("opened");
    shared.put("kept", "v".into(), None).await;
    match shared.health() {
        Health::Unavailable(reason) => {
            assert!(reason.contains(&format!("127.0.0.1:{port}")), "{reason}")
        }
        other => panic!("unavailable, got {other:?}"),
    }
    assert_eq!(shared.pending().0, 1);
    let _server = Server::start_on(port);
    let mut feed = shared.follow();
    until("the state is reached", || {
        shared.health() == Health::Connected
    })
    .await;
    assert_eq!(feed.recv().await, Some(Feed::Joined));
    until("the kept write is written", || shared.pending().0 == 0).await;
    assert_eq!(shared.get("kept").await, Ok(Some("v".into())));
}

#[test]
fn passwords_in_the_url_are_never_shown() {
    let error = RedisState::open("http://user:hunter2@host/").err();
    let text = error.map(|e| e.to_string()).unwrap_or_default();
    assert!(
        text.contains("redis://") && !text.contains("hunter2"),
        "{text}"
    );
    let shown =
        toolnexus::state::redis::shown_url("rediss://me:hunter2@db.example:6380/2?password=x");
    assert_eq!(shown, "rediss://db.example:6380/2");
}
