//! The engine's one timer: it sleeps until the earliest deadline, a nudge, or a change in
//! the elicitations a person is answering, and ends the calls when a local server exits,
//! since its stdout may outlive it (held by a grandchild) and never tell.

use std::sync::{Arc, Weak};

use tokio::sync::{Notify, watch};

use super::Engine;
use crate::session::handler::Asking;
use crate::transport::reaper::Exit;

pub async fn run(
    engine: Weak<Engine>,
    nudge: Arc<Notify>,
    mut eliciting: watch::Receiver<Asking>,
    mut exit: Option<watch::Receiver<Option<Exit>>>,
) {
    let mut exited = false;
    loop {
        let next = {
            let asking = eliciting.borrow_and_update().clone();
            match engine.upgrade().map(|engine| engine.expire(&asking)) {
                Some(Ok(next)) => next,
                _ => return,
            }
        };
        let sleep = async {
            match next {
                Some(at) => tokio::time::sleep_until(at).await,
                None => std::future::pending().await,
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
            _ = sleep => {}
            changed = eliciting.changed() => if changed.is_err() { return },
            _ = exiting, if !exited => {
                exited = true;
                if let Some(engine) = engine.upgrade() {
                    engine.ended();
                }
            }
        }
    }
}
