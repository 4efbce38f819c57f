use super::*;

/// Disabled servers: registered, never started.
fn disabled(names: &[&str]) -> McpConfig {
    let entry = serde_json::json!({ "command": ["x"], "disabled": true });
    let map = names.iter().map(|name| (name.to_string(), entry.clone()));
    McpConfig::from_server_map(map.collect())
}

#[tokio::test]
async fn a_view_revision_moves_only_with_changes_the_view_can_see() {
    let store = Store::new(disabled(&["s"]), Hooks::default(), StoreOptions::default());
    let (whole, a) = (store.revision(None), store.revision(Some("a")));
    assert_eq!(a, 0, "an agent with no services has never changed");

    store.add_servers(Some("b"), disabled(&["x"]), Vec::new());
    assert_eq!(store.revision(Some("a")), a, "agent b's addition");
    assert!(
        store.revision(None) > whole,
        "the store view sees every addition"
    );

    store.add_servers(Some("a"), disabled(&["y"]), Vec::new());
    let a = store.revision(Some("a"));
    assert_eq!(a, store.version());
    assert!(store.remove_server(Some("b"), "x"));
    assert_eq!(store.revision(Some("a")), a, "agent b's removal");

    let y = store.inner.find(Some("a"), "y").expect("agent a's service");
    store.inner.change(&y, |s| s.restarts += 1);
    let a = store.revision(Some("a"));
    assert_eq!(
        a,
        store.version(),
        "a state change is stamped with the version it makes"
    );

    assert!(store.remove_server(Some("a"), "y"));
    assert!(
        store.revision(Some("a")) > a,
        "emptied by a removal, the view still moved"
    );
    store.add_servers(Some("a"), disabled(&["z"]), Vec::new());
    let a = store.revision(Some("a"));
    store.close().await;
    assert!(store.revision(Some("a")) > a, "closing empties every view");
    assert_eq!(store.revision(None), store.version());
}

#[tokio::test]
async fn an_agent_emptied_of_servers_keeps_no_search_index() {
    let store = Store::new(disabled(&["s"]), Hooks::default(), StoreOptions::default());
    store.add_servers(Some("a"), disabled(&["x", "y"]), Vec::new());
    store.search_tools(Some("a"), "x", 5);
    store.search_tools(None, "x", 5);
    assert!(store.remove_server(Some("a"), "x"));
    assert!(store.has_index(Some("a")), "agent a still has y");
    assert!(store.remove_server(Some("a"), "y"));
    assert!(!store.has_index(Some("a")), "gone with a's last server");
    assert!(store.has_index(None), "the store view's stays");
    store.close().await;
}
