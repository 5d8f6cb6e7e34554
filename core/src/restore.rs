//! Restoring the workspace to a checkpoint (`bravebot/checkpoint/restore`), and what the person is
//! shown of a checkpoint (`bravebot/checkpoint/list`, `bravebot/checkpoint/diff`).
//!
//! A restore brings back every path a turn changed from that checkpoint on, as it stood then: an
//! open buffer through the editor (so the editor's undo still works), a file on disk written
//! whole with its permissions, a file the turn created removed. It touches no other path. It is
//! itself a checkpoint: what it replaced is kept first, so restoring that checkpoint undoes it.
//! Where the person changed a path after the agent's last change, they are asked first and shown
//! the three versions; anything but a yes keeps their text. A path whose earlier content was not
//! kept is named with the reason and left as it is. Labels travel with content: a restore never
//! raises a file's trust, and bytes that were untrusted are marked untrusted again.

use std::path::Path;
use std::sync::Arc;

use crate::checkpoint::{Image, Kind, Planned, image_now};
use crate::kernel::audit::{Decision, Gate};
use crate::kernel::label::{Integrity, Label};
use crate::kernel::labelled::Labelled;
use crate::kernel::policy;
use crate::paths::display_path;
use crate::screen::{Question, QuestionKind, Subject, Update};
use crate::session::Session;
use crate::tools::questions::ask_recorded;

/// What a restore did.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Restored {
    /// Workspace-relative paths brought back.
    pub restored: Vec<String>,
    /// Those of `restored` that did not exist at the checkpoint, so went back by being removed.
    pub removed: Vec<String>,
    /// Paths left as they are, each with why.
    pub skipped: Vec<(String, String)>,
    /// The checkpoint the restore made of what it replaced: restoring it undoes the restore.
    pub undo: String,
}

/// Why a restore did not start.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum RestoreError {
    #[error("a turn is running in this session; restore once it has ended")]
    Busy,
    #[error("this session has no checkpoint {0}")]
    Unknown(String),
}

/// One file of a checkpoint as it was then and is now, for the person's diff.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Compared {
    /// Its text at the checkpoint; `None` where nothing was there, or it was not text or kept.
    pub then: Option<String>,
    /// Its text now (the editor's buffer where one is open); `None` likewise.
    pub now: Option<String>,
    /// A unified diff from then to now.
    pub diff: String,
}

impl Session {
    /// Restores the workspace to checkpoint `id` (CKPT-4). Refused while a turn runs.
    pub async fn restore_checkpoint(&self, id: &str) -> Result<Restored, RestoreError> {
        let (_claim, cancel) = self.claim_turn().map_err(|_| RestoreError::Busy)?;
        let plan = self
            .checkpoints
            .plan(id)
            .ok_or_else(|| RestoreError::Unknown(id.to_string()))?;
        // Named by the checkpoint it went back to, so a restore of a restore reads plainly.
        let undo = self.checkpoints.begin(
            &format!("restore to {id}"),
            Kind::Restore,
            crate::record::now(),
        );
        let mut restored = Vec::new();
        let mut removed = Vec::new();
        let mut skipped = Vec::new();
        for planned in plan {
            let shown = display_path(&self.cwd, &planned.path);
            match self.restore_one(&planned, &shown, &cancel).await {
                Ok(true) => {
                    if planned.then == Image::Absent {
                        removed.push(shown.clone());
                    }
                    restored.push(shown)
                }
                Ok(false) => {}
                Err(reason) => skipped.push((shown, reason)),
            }
        }
        let made = self.checkpoints.end();
        crate::checkpoint::keep_index(&self.checkpoints).await;
        self.state().audit.record(
            Gate::Restore,
            Decision::Allowed,
            format!(
                "restored checkpoint {id} as checkpoint {undo}: {} restored [{}], {} left [{}]",
                restored.len(),
                restored.join(", "),
                skipped.len(),
                skipped
                    .iter()
                    .map(|(p, _)| p.as_str())
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
        );
        if let Some(made) = made.filter(|m| !m.changes.is_empty()) {
            self.screen.update(Update::Checkpoint {
                checkpoint_id: made.id,
                files: made
                    .changes
                    .iter()
                    .map(|c| display_path(&self.cwd, &c.path))
                    .collect(),
            });
        }
        self.tell_dropped_checkpoints();
        self.flush_audit();
        Ok(Restored {
            restored,
            removed,
            skipped,
            undo,
        })
    }

    /// Brings one path back. `Ok(false)` where it already holds what it held then.
    async fn restore_one(
        &self,
        planned: &Planned,
        shown: &str,
        cancel: &tokio_util::sync::CancellationToken,
    ) -> Result<bool, String> {
        let path = &planned.path;
        if let Image::NotKept { why } = planned.then {
            return Err(why.reason().to_string());
        }
        // Written only where it still resolves inside the places the person opened: a directory
        // replaced by a link since the turn sends nothing out (CKPT-4).
        let reach = crate::workspace_file::Reach::of(self);
        let lexical = path.clone();
        let inside = tokio::task::spawn_blocking(move || reach.admits(&lexical).is_some())
            .await
            .unwrap_or(false);
        if !inside {
            return Err(
                "it now resolves outside the places you opened, so nothing was written there"
                    .into(),
            );
        }
        let now = image_now(self, &self.checkpoints, path).await;
        if same_content(&now, &planned.then) {
            return Ok(false);
        }
        if let Image::NotKept { why } = now {
            return Err(why.reason().to_string());
        }
        // The person's work since the agent's last change is theirs to give up (CKPT-5).
        if !same_content(&now, &planned.left) {
            let question = self.person_changed_question(planned, &now, shown).await;
            let asked = ask_recorded(self, cancel, question, |a| {
                a.said(
                    format!("restore {shown}: the person chose to replace their changes"),
                    format!("restore {shown}: the person kept their changes"),
                )
            })
            .await;
            if !asked.approved() {
                return Err("you changed it after the agent did, and kept your changes".into());
            }
        }
        // What is replaced is kept first, in the restore's own checkpoint, so the restore can be
        // undone; its label goes with it.
        let untrusted_now = self.trust.lock().integrity_of(path) == Some(Integrity::Untrusted);
        self.checkpoints.before(path, now, untrusted_now);
        let label = if planned.then_untrusted {
            Label::UNTRUSTED_PRIVATE
        } else {
            Label::TRUSTED_PRIVATE
        };
        // Labels only degrade: bytes that were untrusted are marked again before they land, and
        // nothing is ever unmarked (CKPT-6).
        if planned.then_untrusted {
            let file = crate::workspace_file::identity(path);
            self.trust
                .lock()
                .mark_written_untrusted(path.to_path_buf(), file);
        }
        self.put_back(path, &planned.then, label).await?;
        // What the restore left is what it wrote (an editor's buffer may not have told its new
        // text back yet).
        self.checkpoints.after(path, planned.then.clone());
        Ok(true)
    }

    /// Writes `then` at `path`: an open buffer through the editor, else the disk.
    async fn put_back(&self, path: &Path, then: &Image, label: Label) -> Result<(), String> {
        let content = match then {
            Image::Absent => None,
            Image::Kept { .. } => Some(
                self.kept_text(then)
                    .await
                    .ok_or("what it held then is no longer kept")?,
            ),
            Image::NotKept { why } => return Err(why.reason().to_string()),
        };
        let mode = match then {
            Image::Kept { mode, .. } => *mode,
            _ => None,
        };
        self.files.refresh(path).await;
        if let (Some(bytes), Some((text, version))) = (&content, self.files.buffer(path)) {
            let Ok(restored) = String::from_utf8(bytes.clone()) else {
                return Err("it is open in the editor and what it held then is not text".into());
            };
            let edits = Labelled::new(crate::kernel::proposal::line_edits(&text, &restored), label);
            return self
                .files
                .apply_edit(path, version, &text, policy::to_buffer_edits(&edits))
                .await
                .map_err(|e| format!("the editor did not take the change: {e}"));
        }
        let path = path.to_path_buf();
        let written = tokio::task::spawn_blocking(move || match content {
            None => match std::fs::remove_file(&path) {
                Err(e) if e.kind() != std::io::ErrorKind::NotFound => Err(e),
                _ => Ok(()),
            },
            Some(bytes) => write_whole(&path, &bytes, mode),
        })
        .await
        .map_err(|e| e.to_string())?;
        written.map_err(|e| format!("it could not be written: {e}"))
    }

    /// The question for a path the person changed after the agent's last change: the version the
    /// restore writes, the one the agent left and the one there now.
    async fn person_changed_question(
        &self,
        planned: &Planned,
        now: &Image,
        shown: &str,
    ) -> Question {
        let text = async |image: &Image| {
            self.kept_text(image)
                .await
                .map(|b| String::from_utf8_lossy(&b).into_owned())
        };
        let then = text(&planned.then).await;
        let left = text(&planned.left).await;
        let current = text(now).await;
        let diff = unified(
            current.as_deref().unwrap_or(""),
            then.as_deref().unwrap_or(""),
            shown,
        );
        // The three versions may hold bytes nobody vouched for: the screen is one of the places
        // they may go, labelled so the editor frames them.
        let label = Label::UNTRUSTED_PRIVATE;
        let wrap = |t: Option<String>| t.map(|t| Labelled::new(Arc::new(t), label));
        let subject = Subject {
            path: Some(shown.to_string()),
            diff: Some(Labelled::new(diff, label)),
            original: wrap(current),
            proposed: wrap(then),
            agent: wrap(left),
            ..Subject::default()
        };
        let what = if planned.then == Image::Absent {
            "remove it, as it was not there then"
        } else {
            "put back what it held then"
        };
        Question::approve(QuestionKind::Restore, format!("Restore {shown}?"))
            .subject(subject)
            .notice(format!(
                "You changed {shown} after the agent's turn. Restoring will {what}, replacing your changes; the restore can itself be undone."
            ))
            .allow_once("restore", "Restore it, replacing your changes")
            .reject("keep", "Keep your changes")
    }

    /// One file of checkpoint `id` then and now, for the person's diff.
    pub async fn compare(&self, id: &str, path: &Path) -> Result<Compared, RestoreError> {
        let plan = self
            .checkpoints
            .plan(id)
            .ok_or_else(|| RestoreError::Unknown(id.to_string()))?;
        let path = crate::paths::absolute(&self.cwd, path);
        let then = match plan.iter().find(|p| p.path == path) {
            Some(p) => self.kept_text(&p.then).await,
            None => None,
        }
        .map(|b| String::from_utf8_lossy(&b).into_owned());
        let now = image_now(self, &self.checkpoints, &path).await;
        let now = self
            .kept_text(&now)
            .await
            .map(|b| String::from_utf8_lossy(&b).into_owned());
        let shown = display_path(&self.cwd, &path);
        let diff = unified(
            then.as_deref().unwrap_or(""),
            now.as_deref().unwrap_or(""),
            &shown,
        );
        Ok(Compared { then, now, diff })
    }

    /// The bytes an image names, read off the runtime's workers.
    async fn kept_text(&self, image: &Image) -> Option<Vec<u8>> {
        let checkpoints = Arc::clone(&self.checkpoints);
        let image = image.clone();
        tokio::task::spawn_blocking(move || checkpoints.content(&image))
            .await
            .ok()
            .flatten()
    }

    /// Tells the person of checkpoints dropped to keep the session's store bounded.
    pub(crate) fn tell_dropped_checkpoints(&self) {
        let dropped = self.checkpoints.take_dropped();
        if !dropped.is_empty() {
            self.screen.update(Update::Notice {
                text: format!(
                    "The oldest checkpoints ({}) were dropped to keep this session's checkpoints within {} MiB.",
                    dropped.join(", "),
                    crate::checkpoint::MAX_SESSION_BYTES >> 20
                ),
            });
        }
    }
}

/// Whether two images hold the same content (permissions aside). Compares the contents' hashes:
/// whether the person changed a file since the agent did is read off its bytes (COST-42).
fn same_content(a: &Image, b: &Image) -> bool {
    match (a, b) {
        (Image::Absent, Image::Absent) => true,
        (Image::Kept { hash: x, .. }, Image::Kept { hash: y, .. }) => x == y,
        _ => false,
    }
}

fn unified(from: &str, to: &str, shown: &str) -> String {
    similar::TextDiff::from_lines(from, to)
        .unified_diff()
        .header(&format!("a/{shown}"), &format!("b/{shown}"))
        .to_string()
}

/// Writes a file whole: beside it first, then renamed over it, with the permissions it had then.
fn write_whole(path: &Path, bytes: &[u8], mode: Option<u32>) -> std::io::Result<()> {
    use std::io::Write;
    use std::os::unix::fs::PermissionsExt;
    let dir = path.parent().ok_or(std::io::ErrorKind::InvalidInput)?;
    std::fs::create_dir_all(dir)?;
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let tmp = dir.join(format!(".{name}.bravebot-restore"));
    let mut file = std::fs::File::create(&tmp)?;
    file.write_all(bytes)?;
    if let Some(mode) = mode {
        file.set_permissions(std::fs::Permissions::from_mode(mode))?;
    }
    file.sync_all()?;
    drop(file);
    std::fs::rename(&tmp, path).inspect_err(|_| {
        let _ = std::fs::remove_file(&tmp);
    })
}
