//! The fleet's health: each instance's services' states, under a key that expires unless
//! renewed, and an index of the instances that said they were alive.

use std::collections::BTreeMap;
use std::time::{Duration, SystemTime};

use serde::{Deserialize, Serialize};

use super::ATTEMPTS;
use crate::state::Shared;
use crate::store::clock;
use crate::store::service::Inner;

/// The index of the instances that said they were alive.
const INSTANCES: &str = "instances";
/// An instance not heard of for this long is gone.
const ALIVE: Duration = Duration::from_millis(6_000);

/// One instance of a fleet, as `instances()` lists them.
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Instance {
    pub id: String,
    pub host: String,
    pub pid: u32,
    pub servers: BTreeMap<String, String>,
    pub seen_at: String,
}

/// Says this instance is alive, with its services' states; writes what was kept.
pub(crate) async fn heartbeat(inner: &Inner, shared: &Shared) {
    if shared.pending().0 > 0 {
        shared.flush().await;
    }
    let me = Instance {
        id: shared.instance().to_owned(),
        host: host_name(),
        pid: std::process::id(),
        servers: servers(inner),
        seen_at: clock::iso8601(SystemTime::now()),
    };
    let Ok(text) = serde_json::to_string(&me) else {
        return;
    };
    shared
        .put(&format!("instance:{}", me.id), text, Some(ALIVE))
        .await;
    let _ = update_index(shared, |ids| {
        let added = !ids.contains(&me.id);
        if added {
            ids.push(me.id.clone());
        }
        added
    })
    .await;
}

/// Changes the index of instances with `change` (which answers whether it changed it).
async fn update_index(
    shared: &Shared,
    change: impl Fn(&mut Vec<String>) -> bool,
) -> Result<(), ()> {
    for _ in 0..ATTEMPTS {
        let text = shared.get(INSTANCES).await.map_err(|_| ())?;
        let mut ids: Vec<String> = text
            .as_deref()
            .and_then(|t| serde_json::from_str(t).ok())
            .unwrap_or_default();
        if !change(&mut ids) {
            return Ok(());
        }
        let value = serde_json::to_string(&ids).map_err(|_| ())?;
        if shared
            .compare_and_set(INSTANCES, text, Some(value), None)
            .await
            == Ok(true)
        {
            return Ok(());
        }
    }
    Err(())
}

/// This instance's services (store-view names) and their states.
fn servers(inner: &Inner) -> BTreeMap<String, String> {
    let services = inner.services();
    let states = services.iter().map(|s| {
        let phase = s.state.borrow().phase;
        (s.global.clone(), phase.as_str().to_owned())
    });
    states.collect()
}

/// The live instances of the fleet: this one always, the others while their heartbeat
/// lasts. Gone ones are dropped from the index on the way.
pub(crate) async fn instances(inner: &Inner) -> Vec<Instance> {
    let Some(shared) = inner.options.shared.as_ref() else {
        return vec![own(inner, None)];
    };
    let Ok(Some(text)) = shared.get(INSTANCES).await else {
        return vec![own(inner, Some(shared))];
    };
    let ids: Vec<String> = serde_json::from_str(&text).unwrap_or_default();
    let names: Vec<String> = ids.iter().map(|id| format!("instance:{id}")).collect();
    let Ok(values) = shared.get_many(&names).await else {
        return vec![own(inner, Some(shared))];
    };
    let mut live = Vec::new();
    let mut gone = Vec::new();
    for (id, value) in ids.iter().zip(values) {
        let instance = value.and_then(|v| serde_json::from_str::<Instance>(&v).ok());
        match instance {
            Some(instance) if instance.id == *id => live.push(instance),
            _ => gone.push(id.clone()),
        }
    }
    if !live.iter().any(|i| i.id == shared.instance()) {
        live.push(own(inner, Some(shared)));
    }
    if !gone.is_empty() {
        let _ = update_index(shared, |ids| {
            let before = ids.len();
            ids.retain(|id| !gone.contains(id));
            ids.len() != before
        })
        .await;
    }
    live
}

fn own(inner: &Inner, shared: Option<&Shared>) -> Instance {
    Instance {
        id: shared.map_or("local", |s| s.instance()).to_owned(),
        host: host_name(),
        pid: std::process::id(),
        servers: servers(inner),
        seen_at: clock::iso8601(SystemTime::now()),
    }
}

/// Says this instance is gone: its heartbeat key deleted (the index drops it later).
pub(crate) async fn leave(inner: &Inner) {
    if let Some(shared) = &inner.options.shared {
        shared
            .remove(&format!("instance:{}", shared.instance()))
            .await;
    }
}

/// The machine's name, for a person telling instances apart.
fn host_name() -> String {
    let from_env = ["HOSTNAME", "COMPUTERNAME"]
        .iter()
        .find_map(|name| std::env::var(name).ok().filter(|v| !v.is_empty()));
    let from_file = || {
        std::fs::read_to_string("/etc/hostname")
            .ok()
            .map(|s| s.trim().to_owned())
            .filter(|s| !s.is_empty())
    };
    from_env
        .or_else(from_file)
        .unwrap_or_else(|| "unknown".to_owned())
}
