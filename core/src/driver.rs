//! What starts a turn, above the turn: a prompt the person sent, a watch that fired, a loop's
//! tick. Each claims the session, runs [`turn::run`] and, for a prompt, keeps its record; the
//! session itself is the data of one conversation and starts nothing.

use std::path::PathBuf;
use std::time::Duration;

use tokio_util::sync::CancellationToken;

use crate::kernel::audit::{Decision, Gate};
use crate::kernel::trust::Scope;
use crate::looping::{LoopRefusal, LoopState, clamp};
use crate::screen::{StopReason, Update};
use crate::session::{Busy, Session};
use crate::turn::{self, Start};

impl Session {
    /// A watch's event for `path`: when the file's change token moved since the last look, a turn
    /// starts with a fixed sentence of the driver's naming the path, once the turn running now (if
    /// any) has ended. `None` when the event changed nothing or the session ended (WATCH-4).
    pub async fn watch_fired(&self, path: PathBuf) -> Option<StopReason> {
        let looked = path.clone();
        let now = tokio::task::spawn_blocking(move || crate::watch::token_of(&looked))
            .await
            .ok()?;
        let shown = self.state().watches.changed(&path, now)?;
        let sentence = crate::kernel::policy::PlannerText::driver(format!(
            "[bravebot: {shown}, a file this session watches, changed. This notice is the driver's, not the person's; read the file again if you need what it says now.]"
        ));
        self.when_free(turn::Start::Watch(sentence)).await
    }

    /// Starts a turn once the session is free, waiting for a running turn to end. `None` when the
    /// session ended first.
    pub(crate) async fn when_free(&self, start: turn::Start) -> Option<StopReason> {
        loop {
            if self.ended() {
                return None;
            }
            let mut done = self.turn_ended_watch();
            match self.start_turn(start.clone(), Vec::new()).await {
                Ok(stop) => return Some(stop),
                Err(Busy) => {
                    if done.changed().await.is_err() {
                        return None;
                    }
                }
            }
        }
    }

    /// Runs one turn to its end. `files` are paths the person named: each is trusted for the
    /// session before the turn starts.
    pub async fn prompt(&self, text: String, files: Vec<PathBuf>) -> Result<StopReason, Busy> {
        self.start_turn(
            turn::Start::Prompt(text, Vec::new(), turn::Pointed::default()),
            files,
        )
        .await
    }

    /// [`Session::prompt`] with pictures the person put in the prompt, which the planner is sent
    /// as pictures after the prompt's text.
    pub async fn prompt_with_pictures(
        &self,
        text: String,
        files: Vec<PathBuf>,
        pictures: Vec<turn::PromptPicture>,
    ) -> Result<StopReason, Busy> {
        self.start_turn(
            turn::Start::Prompt(text, pictures, turn::Pointed::default()),
            files,
        )
        .await
    }

    /// [`Session::prompt`] with the files the person pointed at (`mentions`): the planner is told
    /// their names and reads them like any other file; none is trusted by it (PROTO-30).
    pub async fn prompt_mentioning(
        &self,
        text: String,
        files: Vec<PathBuf>,
        mentions: Vec<PathBuf>,
    ) -> Result<StopReason, Busy> {
        self.prompt_pointing(
            text,
            files,
            turn::Pointed {
                mentions,
                ranges: Vec::new(),
            },
        )
        .await
    }

    /// [`Session::prompt`] with what the person pointed at: files (`mentions`, PROTO-30) and
    /// ranges of lines their words are about (a review comment, REVIEW-3). The planner is told
    /// each by place and reads the bytes like any other file's; nothing is trusted by it. Paths
    /// are taken relative to the session's directory.
    pub async fn prompt_pointing(
        &self,
        text: String,
        files: Vec<PathBuf>,
        pointed: turn::Pointed,
    ) -> Result<StopReason, Busy> {
        let pointed = turn::Pointed {
            mentions: pointed
                .mentions
                .iter()
                .map(|p| crate::paths::absolute(&self.cwd, p))
                .collect(),
            ranges: pointed
                .ranges
                .into_iter()
                .map(|r| turn::PromptRange {
                    path: crate::paths::absolute(&self.cwd, &r.path),
                    ..r
                })
                .collect(),
        };
        self.start_turn(turn::Start::Prompt(text, Vec::new(), pointed), files)
            .await
    }

    pub(crate) async fn start_turn(
        &self,
        start: turn::Start,
        files: Vec<PathBuf>,
    ) -> Result<StopReason, Busy> {
        // Whether the turn ends or its caller stops waiting (a client's `$/cancelRequest` drops
        // this future), the turn is cancelled and the session can take the next prompt.
        let (_ended, token) = self.claim_turn()?;
        for file in files {
            // Naming a file a check judged unsafe does not vouch for it: the person is shown the
            // verdict instead, and trusts it through `session/trust`'s acknowledgement (PROTO-29).
            if let Some(held) = self.unsafe_now(&file).await {
                self.state().audit.record(
                    Gate::Trust,
                    Decision::Refused,
                    format!(
                        "{} named in a prompt but not trusted: a check judged its bytes {}; the verdict went to the person",
                        held.shown,
                        held.verdict.as_str()
                    ),
                );
                self.screen.update(Update::HeldBack {
                    path: held.shown,
                    verdict: held.verdict,
                    reasons: held.reasons,
                });
                continue;
            }
            self.trust_path(&file, Scope::File);
        }
        if let turn::Start::Prompt(text, ..) = &start {
            self.remember_prompt(text);
        }
        // The workspace before this turn, as far as the turn goes on to change it (CKPT-1).
        let title = match &start {
            turn::Start::Prompt(text, ..) => text.clone(),
            turn::Start::Tick { prompt, .. } => prompt.clone(),
            turn::Start::Watch(_) => "a watched file changed".to_string(),
        };
        self.checkpoints
            .begin(&title, crate::checkpoint::Kind::Turn, crate::record::now());
        let stop = turn::run(self, start, token).await;
        crate::checkpoint::settle(self, &self.checkpoints).await;
        let made = self.checkpoints.end();
        crate::checkpoint::keep_index(&self.checkpoints).await;
        self.model.forget_serialised();
        self.flush_audit();
        self.save_record();
        if self.keeps_records() {
            // The turn's end is told once its record (and the prompt before it) is on disk, so
            // whoever reads the record then finds this turn in it (SESS-14). The wait is on a
            // blocking thread, never a runtime worker.
            let _ = tokio::task::spawn_blocking(crate::record::finish_writes).await;
        }
        // Told where the turn changed something; a turn that changed nothing is listed only.
        if let Some(made) = made.filter(|m| !m.changes.is_empty()) {
            self.screen.update(Update::Checkpoint {
                files: made
                    .changes
                    .iter()
                    .map(|c| crate::paths::display_path(&self.cwd, &c.path))
                    .collect(),
                checkpoint_id: made.id,
            });
        }
        self.tell_dropped_checkpoints();
        self.screen.update(Update::TurnEnded {
            stop_reason: stop.clone(),
        });
        Ok(stop)
    }
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
