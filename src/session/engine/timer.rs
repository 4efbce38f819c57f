//! A request's timeout clock, and the one wait for an optional deadline.

use std::time::Duration;

use tokio::time::Instant;

use crate::duration::deadline_after;
use crate::session::wording::{timed_out, timed_out_in_total};

/// A call's timeout: restarted by progress, paused while a person is being asked; and
/// its cap in all (`maxTotalTimeout`), which progress does not restart.
pub struct Clock {
    timeout: Duration,
    deadline: Instant,
    max_total: Option<Duration>,
    total_deadline: Option<Instant>,
    /// Time left (and left in all) when paused.
    paused: Option<(Duration, Option<Duration>)>,
}

impl Clock {
    pub fn new(timeout: Duration, max_total: Option<Duration>, paused: bool) -> Clock {
        let now = Instant::now();
        let mut clock = Clock {
            timeout,
            deadline: deadline_after(now, timeout),
            max_total,
            total_deadline: max_total.map(|total| deadline_after(now, total)),
            paused: None,
        };
        clock.set_paused(paused);
        clock
    }

    pub fn restart(&mut self) {
        match &mut self.paused {
            Some((left, _)) => *left = self.timeout,
            None => self.deadline = deadline_after(Instant::now(), self.timeout),
        }
    }

    /// Restarts it to run out `delay` after the timeout would (a task's poll, `delay`
    /// from now).
    pub fn restart_after(&mut self, delay: Duration) {
        let left = self.timeout.saturating_add(delay);
        match &mut self.paused {
            Some((paused_left, _)) => *paused_left = left,
            None => self.deadline = deadline_after(Instant::now(), left),
        }
    }

    pub fn set_paused(&mut self, pause: bool) {
        let now = Instant::now();
        match (pause, self.paused) {
            (true, None) => {
                let left = |at: Instant| at.saturating_duration_since(now);
                self.paused = Some((left(self.deadline), self.total_deadline.map(left)));
            }
            (false, Some((left, total_left))) => {
                self.deadline = deadline_after(now, left);
                self.total_deadline = total_left.map(|total_left| deadline_after(now, total_left));
                self.paused = None;
            }
            _ => {}
        }
    }

    /// When it runs out; `None` while paused.
    pub fn deadline(&self) -> Option<Instant> {
        let deadline = match self.total_deadline {
            Some(total) => self.deadline.min(total),
            None => self.deadline,
        };
        self.paused.is_none().then_some(deadline)
    }

    /// Why `phase` failed once the clock ran out: which limit it overran.
    pub fn overrun(&self, phase: &str) -> String {
        match (self.max_total, self.total_deadline) {
            (Some(total), Some(at)) if at <= self.deadline => timed_out_in_total(phase, total),
            _ => timed_out(phase, self.timeout),
        }
    }
}

/// Sleeps until `deadline`; forever when there is none (a paused clock, say).
pub async fn sleep_until(deadline: Option<Instant>) {
    match deadline {
        Some(deadline) => tokio::time::sleep_until(deadline).await,
        None => std::future::pending().await,
    }
}
