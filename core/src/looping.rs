//! Loops (seed 004's `/loop` and `schedule_next`): the person's line sent again, unchanged, at an
//! interval the person gave or at the pace the planner asks for with `schedule_next`.
//!
//! A loop with an interval ticks every interval until it is stopped; its ticks are not offered
//! `schedule_next`. A self-paced loop ticks once now, and again after the delay its tick asked for;
//! a tick that does not ask ends the loop. A line the person typed may also start a self-paced
//! loop over itself by calling `schedule_next`. Every delay is held between
//! [`Settings::loop_min_seconds`](crate::settings::Settings) (60 unless a setting says otherwise)
//! and [`MAX_SECONDS`], and the number the planner is told is the number it gets.

use std::time::Duration;

use tokio_util::sync::CancellationToken;

use crate::screen::StopReason;
use crate::session::Session;
use crate::turn::Start;

/// The longest a loop waits between two ticks.
pub const MAX_SECONDS: u64 = 3600;

/// What `schedule_next` asked for in one turn.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Schedule {
    pub delay_seconds: u64,
    /// The tick found nothing: counted as a quiet tick.
    pub noop: bool,
}

/// The loop a session is running.
#[derive(Clone, Debug)]
pub struct LoopState {
    /// Tells one loop from the next.
    pub id: u64,
    pub prompt: String,
    /// `None` for a self-paced loop.
    pub interval_seconds: Option<u64>,
    pub ticks: u64,
    /// Ticks in a row that `schedule_next` called quiet.
    pub quiet_ticks: u64,
    pub stop: CancellationToken,
}

/// Why a loop was not started.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum LoopRefusal {
    #[error("this session is running a loop already; stop it first")]
    Running,
    #[error("this session keeps no loops")]
    NotKept,
    #[error("the loop's prompt is empty")]
    Empty,
}

/// A delay held between `min` and [`MAX_SECONDS`].
pub fn clamp(seconds: u64, min: u64) -> u64 {
    seconds.clamp(min.min(MAX_SECONDS), MAX_SECONDS)
}

impl Session {
    /// Claims the session for a loop over `prompt`. The caller then drives it with
    /// [`Session::run_loop`] (the server does, on a task of its own).
    pub fn begin_loop(
        &self,
        prompt: String,
        interval_seconds: Option<u64>,
    ) -> Result<LoopState, LoopRefusal> {
        if !self.keeps_watches() {
            return Err(LoopRefusal::NotKept);
        }
        if prompt.trim().is_empty() {
            return Err(LoopRefusal::Empty);
        }
        let min = self.settings.loop_min_seconds;
        let mut state = self.state();
        if state.looping.is_some() {
            return Err(LoopRefusal::Running);
        }
        static NEXT: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(1);
        let l = LoopState {
            id: NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed),
            prompt,
            interval_seconds: interval_seconds.map(|s| clamp(s, min)),
            ticks: 0,
            quiet_ticks: 0,
            stop: CancellationToken::new(),
        };
        state.looping = Some(l.clone());
        // The person typed the loop's line: a session driven only by a loop is titled by it, so
        // it is recorded and can be resumed like one driven by prompts (LOOP-2).
        if state.title.is_none() {
            state.title = Some(crate::record::title_of(&l.prompt));
        }
        Ok(l)
    }

    /// Runs the loop `begin_loop` claimed: a tick after `first_delay` (now when `None`), then
    /// another after each interval or each delay a tick scheduled, until it is stopped, a
    /// self-paced tick asks for no next one, a tick ends in an error, or the session ends (LOOP-2,
    /// LOOP-3).
    pub async fn run_loop(&self, l: LoopState, first_delay: Option<u64>) {
        let mut delay = first_delay;
        loop {
            if let Some(seconds) = delay {
                tokio::select! {
                    () = tokio::time::sleep(Duration::from_secs(seconds)) => {}
                    () = l.stop.cancelled() => break,
                }
            }
            if l.stop.is_cancelled() || self.ended() {
                break;
            }
            self.state().scheduled = None;
            let start = Start::Tick {
                prompt: l.prompt.clone(),
                self_paced: l.interval_seconds.is_none(),
            };
            let Some(stop) = self.when_free(start).await else {
                break;
            };
            let scheduled = {
                let mut state = self.state();
                let scheduled = state.scheduled.take();
                if let Some(current) = state.looping.as_mut() {
                    current.ticks += 1;
                    if let Some(s) = &scheduled {
                        current.quiet_ticks = if s.noop { current.quiet_ticks + 1 } else { 0 };
                    }
                }
                scheduled
            };
            if matches!(stop, StopReason::Error(_)) || l.stop.is_cancelled() {
                break;
            }
            delay = match (l.interval_seconds, scheduled) {
                (Some(interval), _) => Some(interval),
                (None, Some(s)) => Some(s.delay_seconds),
                (None, None) => break,
            };
        }
        let mut state = self.state();
        if state
            .looping
            .as_ref()
            .is_some_and(|current| current.id == l.id)
        {
            state.looping = None;
        }
    }

    /// Stops the session's loop, if it runs one; a tick already running goes on to its end.
    pub fn stop_loop(&self) -> bool {
        match self.state().looping.take() {
            Some(l) => {
                l.stop.cancel();
                true
            }
            None => false,
        }
    }

    /// What a person's turn asked with `schedule_next`, taken once: the loop it starts (LOOP-4).
    pub fn take_started_loop(&self) -> Option<(LoopState, u64)> {
        let (prompt, schedule) = {
            let mut state = self.state();
            if state.looping.is_some() {
                return None;
            }
            let schedule = state.scheduled.take()?;
            let prompt = state.conversation.prompts().pop()?;
            (prompt, schedule)
        };
        let l = self.begin_loop(prompt, None).ok()?;
        Some((l, schedule.delay_seconds))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    // Verifies: LOOP-5
    #[test]
    fn a_delay_is_held_between_the_minimum_and_an_hour() {
        assert_eq!(clamp(5, 60), 60);
        assert_eq!(clamp(600, 60), 600);
        assert_eq!(clamp(99_999, 60), MAX_SECONDS);
        assert_eq!(clamp(0, 1), 1);
        assert_eq!(clamp(10, 99_999), MAX_SECONDS);
    }
}
