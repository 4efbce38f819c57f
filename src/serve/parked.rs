//! Calls waiting for a 2026 client's answers. The client got an input-required result
//! whose `requestState` names the call here; it sends the call again with that state and
//! its `inputResponses`, and the call goes on where it stood. The state is a random name
//! that only opens calls of the view that parked them, on the replica that holds them
//! (another replica answers that it knows no such state). A call not taken up within
//! `PARKED_FOR` is aborted, and so is every parked call when the gateway stops.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use ring::rand::{SecureRandom, SystemRandom};
use rmcp::model::InputRequiredResult;
use serde_json::Value;
use tokio_util::sync::CancellationToken;

use super::following::Following;
use super::questions::{Question, input_required, key};
use crate::elicitation;
use crate::lock::lock;
use crate::store::Store;

/// How long a parked call waits for the client to answer.
const PARKED_FOR: Duration = Duration::from_secs(600);
/// Calls a view parks at once; a round beyond them is answered `cancel` instead.
const MAX_PARKED: usize = 256;

/// A call and the questions its client was asked, by key.
pub(super) struct Parked {
    pub call: Following,
    questions: Vec<Question>,
}

impl Parked {
    /// Answers each question from the client's `responses` (by key; a missing one is
    /// `cancel`), and gives back the call.
    pub fn answer(self, mut responses: impl FnMut(&str) -> Option<Value>) -> Following {
        for (n, question) in self.questions.into_iter().enumerate() {
            let answer = responses(&key(n)).unwrap_or_else(elicitation::cancel);
            let _ = question.answer.send(answer);
        }
        self.call
    }
}

/// A view's parked calls, by state.
#[derive(Clone, Default)]
pub(super) struct Parking(Arc<Mutex<HashMap<String, Parked>>>);

impl Parking {
    /// Parks `call` until its client answers `questions`: the result that asks them, with
    /// the state that takes the call up again; or both given back when the view holds as
    /// many calls as it may.
    pub fn park(
        &self,
        call: Following,
        questions: Vec<Question>,
        store: &Arc<Store>,
        agent: Option<&str>,
        closing: &CancellationToken,
    ) -> Result<InputRequiredResult, (Following, Vec<Question>)> {
        let state = unguessable().filter(|_| lock(&self.0).len() < MAX_PARKED);
        let Some(state) = state else {
            return Err((call, questions));
        };
        let input_required = input_required(&questions, state.clone());
        lock(&self.0).insert(state.clone(), Parked { call, questions });
        let expiry = (
            self.clone(),
            state.clone(),
            store.clone(),
            agent.map(str::to_owned),
        );
        let closing = closing.clone();
        tokio::spawn(async move {
            let (parking, state, store, agent) = expiry;
            tokio::select! {
                _ = tokio::time::sleep(PARKED_FOR) => {}
                _ = closing.cancelled() => {}
            }
            if let Some(parked) = parking.take(&state) {
                parked.call.abort(&store, agent.as_deref());
            }
        });
        Ok(input_required)
    }

    /// The call parked under `state`, taken out.
    pub fn take(&self, state: &str) -> Option<Parked> {
        lock(&self.0).remove(state)
    }
}

/// A name nobody can guess, for the handles a view gives out (a parked call's state, a
/// task's id): 128 random bits in hex; `None` when the system has no randomness to give.
pub(super) fn unguessable() -> Option<String> {
    let mut bytes = [0u8; 16];
    SystemRandom::new().fill(&mut bytes).ok()?;
    Some(bytes.iter().map(|b| format!("{b:02x}")).collect())
}
