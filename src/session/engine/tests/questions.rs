//! Who answers what a server asks during a call: the call's own elicitor when it brought
//! one (a gateway's downstream client), else the host's.

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;

use rmcp::model::RequestId;
use serde_json::{Value, json};

use super::rig::{Rig, asks, sleep};
use crate::elicitation::Elicitor;
use crate::lock::lock;
use crate::session::handler::Calls;

/// Answers every question `accept` with `{ "own": true }`.
struct Own;

impl Elicitor for Own {
    fn elicit(&self, _: Value) -> Pin<Box<dyn Future<Output = Value> + Send>> {
        Box::pin(std::future::ready(
            json!({ "action": "accept", "content": { "own": true } }),
        ))
    }
}

#[tokio::test(start_paused = true)]
async fn a_round_goes_to_the_calls_own_elicitor_not_the_hosts() {
    let rig = Rig::new();
    let (id, _) = rig.call_asking(Arc::new(Own));
    rig.answer(id, asks());
    sleep(1).await;
    let (_, params) = rig.requests().pop().expect("the next round");
    assert_eq!(params["inputResponses"]["k"]["content"]["own"], true);
    assert_eq!(*lock(&rig.person.asked), 0, "the host was not asked");
}

#[tokio::test(start_paused = true)]
async fn a_question_the_transport_relates_to_no_call_is_the_one_calls_in_flight() {
    let rig = Rig::new();
    let (first, _) = rig.call_asking(Arc::new(Own));
    assert!(rig.engine.elicitor_of(None).is_some(), "the one call's");
    let (second, _) = rig.call(100, None);
    assert!(
        rig.engine.elicitor_of(None).is_none(),
        "two calls: nobody's"
    );
    // Related by the transport, a question is its call's, however many are in flight.
    rig.engine.bind(first, RequestId::Number(7));
    rig.engine.bind(second, RequestId::Number(8));
    assert!(
        rig.engine
            .elicitor_of(Some(&RequestId::Number(7)))
            .is_some()
    );
    assert!(
        rig.engine
            .elicitor_of(Some(&RequestId::Number(8)))
            .is_none(),
        "brought none"
    );
}
