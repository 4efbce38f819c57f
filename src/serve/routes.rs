//! Where the gateway's last listings of resources and prompts lead: from each URI and
//! name it listed to the server and the URI or name there.

use std::collections::HashMap;
use std::sync::Mutex;

/// Where the last listings' names and URIs lead: the server, and the name or URI there.
#[derive(Default)]
pub(super) struct Routes {
    pub resources: Mutex<HashMap<String, (String, String)>>,
    pub prompts: Mutex<HashMap<String, (String, String)>>,
}
