//! `Shared` over a backend in memory that can be made to fail: health, kept writes,
//! bounds. The Redis backend itself is tested against a real server (tests/state_redis.rs).

use std::sync::Arc;
use std::sync::atomic::Ordering;

use super::memory::Memory;
use super::*;
use crate::lock::lock;

#[tokio::test]
async fn writes_the_state_refused_are_written_when_it_answers_again() {
    let memory = Arc::new(Memory::default());
    let shared = Shared::new(memory.clone(), "ns", None);
    assert_eq!(shared.health(), Health::Connecting);
    memory.down.store(true, Ordering::SeqCst);
    shared.put("a", "1".into(), None).await;
    shared.put("a", "2".into(), None).await;
    shared.remove("b").await;
    assert!(matches!(shared.health(), Health::Unavailable(reason) if reason == "down"));
    assert_eq!(shared.pending(), (2, 0));
    memory.down.store(false, Ordering::SeqCst);
    lock(&memory.values).insert("toolnexus:ns:b".into(), "old".into());
    shared.flush().await;
    assert_eq!(shared.health(), Health::Connected);
    assert_eq!(shared.pending(), (0, 0));
    let values = lock(&memory.values).clone();
    assert_eq!(values.get("toolnexus:ns:a").map(String::as_str), Some("2"));
    assert!(!values.contains_key("toolnexus:ns:b"));
}

#[tokio::test]
async fn keys_live_under_the_namespace() {
    let memory = Arc::new(Memory::default());
    let one = Shared::new(memory.clone(), "one", None);
    let two = Shared::new(memory.clone(), "two", None);
    one.put("k", "1".into(), None).await;
    assert_eq!(two.get("k").await, Ok(None));
    assert_eq!(one.get("k").await, Ok(Some("1".into())));
    assert_ne!(one.instance(), two.instance());
}

#[tokio::test]
async fn an_oversized_value_counts_as_none() {
    let memory = Arc::new(Memory::default());
    let shared = Shared::new(memory.clone(), "ns", None);
    let big = "x".repeat(super::shared::MAX_VALUE + 1);
    lock(&memory.values).insert("toolnexus:ns:big".into(), big);
    assert_eq!(shared.get("big").await, Ok(None));
    let names = ["big".to_owned(), "none".to_owned()];
    assert_eq!(shared.get_many(&names).await, Ok(vec![None, None]));
}

#[test]
fn namespaces_are_checked() {
    assert!(check_namespace("team-a.prod_1").is_ok());
    for bad in ["", "a:b", "a b", &"x".repeat(65), "ü"] {
        let error = check_namespace(bad).err().map(|e| e.to_string());
        assert!(error.is_some_and(|e| e.contains("namespace")), "{bad:?}");
    }
}
