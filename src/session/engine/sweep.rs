//! The engine's one timer: it sleeps until the earliest deadline, a nudge, or a change in
//! what a person is doing for the server (answering an elicitation, signing in), and
//! ends the requests when a local server exits, since its stdout may outlive it (held by a grandchild) and never tell.

use std::collections::HashSet;
use std::sync::{Arc, Weak};

use tokio::sync::{Notify, watch};

use super::Engine;
use super::timer::sleep_until;
use crate::session::handler::Asking;
use crate::transport::reaper::Exit;

pub async fn run(
    engine: Weak<Engine>,
    nudge: Arc<Notify>,
    mut eliciting: watch::Receiver<Asking>,
    (mut signing_in, server): (watch::Receiver<HashSet<String>>, String),
    mut exit: Option<watch::Receiver<Option<Exit>>>,
) {
    let mut exited = false;
    loop {
        let next = {
            let asking = eliciting.borrow_and_update().clone();
            let signing = signing_in.borrow_and_update().contains(&server);
            match engine
                .upgrade()
                .map(|engine| engine.expire(&asking, signing))
            {
                Some(Ok(next)) => next,
                _ => return,
            }
        };
        let exiting = async {
            match &mut exit {
                Some(exit) => {
                    let _ = exit.wait_for(Option::is_some).await;
                }
                None => std::future::pending().await,
            }
        };
        tokio::select! {
            _ = nudge.notified() => {}
            _ = sleep_until(next) => {}
            changed = eliciting.changed() => if changed.is_err() { return },
            Ok(()) = signing_in.changed() => {}
            _ = exiting, if !exited => {
                exited = true;
                if let Some(engine) = engine.upgrade() {
                    engine.ended();
                }
            }
        }
    }
}
