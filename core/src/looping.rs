//! Loops (seed 004's `/loop` and `schedule_next`): the person's line sent again, unchanged, at an
//! interval the person gave or at the pace the planner asks for with `schedule_next`.
//!
//! A loop with an interval ticks every interval until it is stopped; its ticks are not offered
//! `schedule_next`. A self-paced loop ticks once now, and again after the delay its tick asked for;
//! a tick that does not ask ends the loop. A line the person typed may also start a self-paced
//! loop over itself by calling `schedule_next`. Every delay is held between
//! the setting `loop.minSeconds` (60 unless a setting says otherwise)
//! and [`MAX_SECONDS`], and the number the planner is told is the number it gets.

use tokio_util::sync::CancellationToken;

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
