//! Auto-vetting's switch for one session, and the person's recorded choice in `~/.bravebot/vetting`.
//!
//! Three switches decide whether the mode is on when a session opens (seed 000, VET-5): `exec
//! --vet`, the recorded word, then the home settings key; `settings` resolves them. This module
//! holds the answer while the session runs, because the person may change it then: the standing
//! key on a clean vetting prompt and the editors' command write the record and turn the mode on or
//! off in the sessions they reach (VET-20, VET-24). The switch is shared with every delegate the
//! session starts, like the trust map, so turning it off reaches them at once.

use std::sync::Mutex;

use crate::record::{RecordError, StateDir};

/// Where the recorded choice lives, as the person is told it.
pub const RECORD_SHOWN: &str = "~/.bravebot/vetting";

/// Whether auto-vetting is on, and which switch said so.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct AutoVettingState {
    pub on: bool,
    /// `--vet`, `~/.bravebot/vetting`, `~/.bravebot/settings.json` or `default`.
    pub source: &'static str,
}

/// One session's auto-vetting switch, read at the moment a verdict would answer (so a change made
/// while a check runs is the one obeyed).
#[derive(Debug)]
pub struct AutoVetting(Mutex<AutoVettingState>);

impl AutoVetting {
    pub fn new(on: bool, source: &'static str) -> AutoVetting {
        AutoVetting(Mutex::new(AutoVettingState { on, source }))
    }

    pub fn get(&self) -> AutoVettingState {
        *self.0.lock().unwrap_or_else(|p| p.into_inner())
    }

    pub fn is_on(&self) -> bool {
        self.get().on
    }

    /// Sets the switch; whether it was on or off changed.
    pub fn set(&self, on: bool, source: &'static str) -> bool {
        let mut state = self.0.lock().unwrap_or_else(|p| p.into_inner());
        let changed = state.on != on;
        *state = AutoVettingState { on, source };
        changed
    }
}

/// The words a front draws where the mode is on: at the top of a session that opened with it on,
/// and where it was turned on or off mid-session (VET-23). A session asking as usual says nothing.
pub fn banner(state: AutoVettingState) -> String {
    if state.on {
        format!(
            "Auto-vetting is on (from {}): where a check finds nothing, content nobody vouched for reaches the agent without asking you.",
            state.source
        )
    } else {
        format!(
            "Auto-vetting is off (from {}): you are asked again before content nobody vouched for reaches the agent.",
            state.source
        )
    }
}

/// The one word the record holds.
pub fn record_word(on: bool) -> &'static str {
    if on { "on" } else { "off" }
}

/// Writes the person's choice to `~/.bravebot/vetting`: one word and a newline, in a private file
/// (`0600`, its directory `0700`) put in place whole by a rename, so a reader finds the old word
/// or the new one. Turning the mode off writes `off` rather than removing the file, so the
/// settings key cannot turn it back on (seed 000).
pub fn write_record(state: &StateDir, on: bool) -> Result<(), RecordError> {
    crate::record::create_private_dir(state.root())?;
    crate::record::write_atomically(
        &state.vetting_path(),
        format!("{}\n", record_word(on)).as_bytes(),
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::PermissionsExt;

    // Verifies: VET-21
    #[test]
    fn the_record_is_one_word_in_a_private_file_and_off_is_written_not_removed() {
        let home = tempfile::tempdir().expect("home");
        let state = StateDir::in_home(home.path());
        write_record(&state, true).expect("written");
        let path = state.vetting_path();
        assert_eq!(std::fs::read_to_string(&path).expect("read"), "on\n");
        let mode = |p: &std::path::Path| std::fs::metadata(p).expect("meta").permissions().mode();
        assert_eq!(mode(&path) & 0o777, 0o600);
        assert_eq!(mode(state.root()) & 0o777, 0o700);
        write_record(&state, false).expect("written");
        assert_eq!(std::fs::read_to_string(&path).expect("read"), "off\n");
        // Only the record is left: the temporary file it was written through is gone.
        let names: Vec<_> = std::fs::read_dir(state.root())
            .expect("dir")
            .map(|e| e.expect("entry").file_name())
            .collect();
        assert_eq!(names, vec![std::ffi::OsString::from("vetting")]);
    }

    // Verifies: VET-24
    #[test]
    fn the_switch_says_when_it_changed_and_keeps_its_source() {
        let switch = AutoVetting::new(true, "~/.bravebot/settings.json");
        assert!(!switch.set(true, RECORD_SHOWN), "on to on is no change");
        assert_eq!(switch.get().source, RECORD_SHOWN);
        assert!(switch.set(false, RECORD_SHOWN));
        assert!(!switch.is_on());
    }
}
