//! A call's timeout clock.

use std::time::Duration;

use tokio::time::{Instant, sleep_until};

use crate::duration::deadline_after;

/// A call's timeout: restarted by progress, paused while a person is being asked.
pub struct Clock {
    timeout: Duration,
    deadline: Instant,
    /// Time left when paused.
    paused: Option<Duration>,
}

impl Clock {
    pub fn new(timeout: Duration, paused: bool) -> Clock {
        let mut clock = Clock {
            timeout,
            deadline: deadline_after(Instant::now(), timeout),
            paused: None,
        };
        clock.set_paused(paused);
        clock
    }

    pub fn restart(&mut self) {
        match &mut self.paused {
            Some(left) => *left = self.timeout,
            None => self.deadline = deadline_after(Instant::now(), self.timeout),
        }
    }

    pub fn set_paused(&mut self, pause: bool) {
        let now = Instant::now();
        match (pause, self.paused) {
            (true, None) => self.paused = Some(self.deadline.saturating_duration_since(now)),
            (false, Some(left)) => {
                self.deadline = deadline_after(now, left);
                self.paused = None;
            }
            _ => {}
        }
    }

    pub fn timeout(&self) -> Duration {
        self.timeout
    }

    /// When it runs out; `None` while paused.
    pub fn deadline(&self) -> Option<Instant> {
        self.paused.is_none().then_some(self.deadline)
    }

    pub async fn expiry(&self) {
        match self.paused {
            Some(_) => std::future::pending().await,
            None => sleep_until(self.deadline).await,
        }
    }
}
