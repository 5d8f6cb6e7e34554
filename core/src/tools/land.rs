//! Proposing a change to a file and landing it: the part `write_file` and `edit_file` share.
//!
//! A proposal is put to the person as an `edit` or `write` question carrying the diff, the whole
//! original and proposal, and its hunks, unless the session's mode or a standing approval already
//! answers it. What lands is the accepted hunks, or the person's own version. An open buffer is
//! changed through the editor (`workspace/applyEdit`), re-based first when the person typed
//! elsewhere meanwhile and refused when they typed into the change; a file that is not open is
//! written atomically with its permissions and trailing-newline convention kept, on the blocking
//! pool (the look at the disk before it and a re-read to re-base onto too), so a full or slow
//! filesystem holds one of its threads and never a worker of the runtime.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

use super::content_trust::{self, Candidate};
use super::{Call, ToolOutput, change_token};
use crate::kernel::audit::{Decision, Gate};
use crate::kernel::context::Routing;
use crate::kernel::decide::{self, Decided, Why};
use crate::kernel::label::Label;
use crate::kernel::labelled::Labelled;
use crate::kernel::policy::{self, PlannerText};
use crate::kernel::proposal::{self, Proposal, RebaseRefusal};
use crate::paths::file_uri;
use crate::screen::{Answer, Question, QuestionKind, Subject};
use crate::settings::Mode;
use crate::workspace_file::{self, Contents, Refusal, metadata_token};

/// Directories whose files configure tools that run code or steer the agent: a write under one
/// always asks, in every mode. Each is there because some program reads it on its own, without
/// anybody naming it: an editor on opening the folder, git on the next command, cargo or npm on
/// the next build, direnv on `cd`.
const PROTECTED_DIRS: &[&str] = &[
    ".git",
    ".bravebot",
    ".vscode",
    ".idea",
    ".github",
    ".gitlab",
    ".circleci",
    ".husky",
    ".devcontainer",
    ".zed",
    ".helix",
    ".nvim",
    ".cargo",
    ".config",
    ".direnv",
    ".yarn",
    ".mvn",
    ".gradle",
    ".bundle",
];
/// File names that configure an editor, a shell, a build tool, CI, git or the agent to run
/// something: a write to one always asks.
const PROTECTED_FILES: &[&str] = &[
    "AGENTS.md",
    ".gitlab-ci.yml",
    ".gitattributes",
    ".gitmodules",
    ".gitconfig",
    ".editorconfig",
    ".envrc",
    ".nvim.lua",
    ".nvimrc",
    ".exrc",
    ".vimrc",
    ".lazy.lua",
    ".dir-locals.el",
    ".dir-locals-2.el",
    ".pre-commit-config.yaml",
    ".pre-commit-hooks.yaml",
    "rust-toolchain",
    "rust-toolchain.toml",
    "compile_commands.json",
    ".clangd",
    ".clang-tidy",
    ".npmrc",
    ".yarnrc",
    ".yarnrc.yml",
    ".pnpmfile.cjs",
    ".pypirc",
    "pip.conf",
    ".tool-versions",
    ".mise.toml",
    "mise.toml",
    ".node-version",
    ".nvmrc",
    ".python-version",
    ".ruby-version",
    "pyrightconfig.json",
    "Makefile.local",
];

/// Whether a write to `path` must always be put to the person. Names are compared without regard
/// to case, since on a case-insensitive filesystem `.VSCode/Settings.json` is the same file as
/// `.vscode/settings.json` (asking more on a case-sensitive one costs a question, not safety).
/// Every name [`is_protected`] holds back, directories and files alike: what a confined run may
/// not write wherever it is in the workspace (RUN-17).
pub fn protected_names() -> Vec<&'static str> {
    PROTECTED_DIRS
        .iter()
        .chain(PROTECTED_FILES)
        .copied()
        .collect()
}

pub fn is_protected(path: &Path) -> bool {
    let named = |name: &std::ffi::OsStr, list: &[&str]| {
        let name = name.to_string_lossy();
        list.iter().any(|p| name.eq_ignore_ascii_case(p))
    };
    let parent_dirs = path.parent().into_iter().flat_map(Path::components);
    parent_dirs
        .into_iter()
        .any(|c| named(c.as_os_str(), PROTECTED_DIRS))
        || path
            .file_name()
            .is_some_and(|n| named(n, PROTECTED_FILES) || named(n, PROTECTED_DIRS))
}

/// Where a change goes and what is there now.
pub struct Target {
    /// The path as the planner named it, resolved; where the file is written.
    pub path: PathBuf,
    /// Where its links lead: what a verdict on its bytes is remembered under.
    pub real: PathBuf,
    /// How the path is shown: workspace-relative, or a description when the name is withheld.
    pub shown: String,
    /// The open buffer's text and version when the question was put.
    pub buffer: Option<(std::sync::Arc<str>, i32)>,
    /// The file's bytes on disk when the question was put, if it existed.
    pub disk: Option<Labelled<Vec<u8>>>,
    /// The change token of the file on disk when the question was put: whether it was written
    /// meanwhile is told from this, never by comparing contents.
    pub disk_token: String,
    /// The label of what a change replaces (the buffer's text, else the disk's).
    pub label: Label,
    /// The path came from a withheld listing entry: the planner never saw the name, so the person
    /// must, and no standing answer may land it (WRITE-8).
    pub by_reference: bool,
}

/// The label a file's current bytes are read with: trusted only where the planner may read exactly
/// those bytes, by a rule or a verdict the content-trust helper already gave (nothing is sent).
fn label_of(call: &Call<'_>, path: &Path, real: &Path, bytes: &[u8]) -> Label {
    // Where the trust map answers by its rules, the bytes are not needed, nor a copy of them.
    let by_rule = content_trust::readable_by_rule(call, path, real);
    let readable = by_rule.unwrap_or_else(|| readable_copy(call, path, real, bytes));
    if readable {
        Label::TRUSTED_PRIVATE
    } else {
        Label::UNTRUSTED_PRIVATE
    }
}

/// Whether a labelled copy of `bytes` is readable now (a remembered verdict on them).
fn readable_copy(call: &Call<'_>, path: &Path, real: &Path, bytes: &[u8]) -> bool {
    let candidate = Labelled::new(bytes.to_vec(), Label::UNTRUSTED_PRIVATE);
    content_trust::readable_now(
        call,
        &Candidate {
            path,
            real,
            shown: "",
            bytes: &candidate,
            file: crate::workspace_file::identity(real),
        },
    )
}

impl Target {
    /// Reads what is at `path` now: the open buffer, and the disk through the confined reader.
    pub async fn read(call: &Call<'_>, path: PathBuf, shown: String) -> Result<Target, ToolOutput> {
        let disk = read_disk(call, &path, &shown).await?;
        call.session.files.refresh(&path).await;
        let buffer = call.session.files.buffer(&path);
        // A buffer over the bound is refused as its file on disk would be, before it is copied
        // to be labelled and diffed.
        if let Some(refusal) = buffer
            .as_ref()
            .and_then(|(text, _)| workspace_file::over_bound(text, workspace_file::READ_LIMIT))
        {
            return Err(super::read_file::unread(call, &shown, &refusal));
        }
        Ok(Target::with(call, path, shown, buffer, disk))
    }

    /// A target from what was already read: the buffer, and the disk (`None`: no file yet).
    pub fn with(
        call: &Call<'_>,
        path: PathBuf,
        shown: String,
        buffer: Option<(std::sync::Arc<str>, i32)>,
        disk: Option<Contents>,
    ) -> Target {
        let real = disk
            .as_ref()
            .map_or_else(|| path.clone(), |c| c.real.clone());
        let disk_token = disk
            .as_ref()
            .map_or_else(|| metadata_token(None), |c| c.token.clone());
        let disk = disk.map(|c| {
            let label = label_of(call, &path, &real, &c.bytes);
            Labelled::new(c.bytes, label)
        });
        // What a change replaces: the open buffer's text where there is one, else the disk's.
        let label = match (&buffer, &disk) {
            (Some((text, _)), _) => label_of(call, &path, &real, text.as_bytes()),
            (None, Some(bytes)) => bytes.label(),
            // Nothing is there: no bytes for anybody to have vouched for, unless the agent's own
            // write of untrusted data marked the path (then it stays marked).
            (None, None) => match workspace_file::integrity_through_links(
                &call.session.trust.lock(),
                &path,
                &real,
                None,
            ) {
                Some(crate::kernel::label::Integrity::Untrusted) => Label::UNTRUSTED_PRIVATE,
                _ => Label::TRUSTED_PRIVATE,
            },
        };
        Target {
            path,
            real,
            shown,
            buffer,
            disk,
            disk_token,
            label,
            by_reference: false,
        }
    }

    /// The current text: the buffer's, else the disk's (lossily, for display and diffing), else
    /// empty for a file that does not exist yet.
    pub fn original(&self) -> Labelled<String> {
        match (&self.buffer, &self.disk) {
            (Some((text, _)), _) => Labelled::new(text.to_string(), self.label),
            (None, Some(bytes)) => policy::text_for_display(bytes),
            (None, None) => Labelled::new(String::new(), self.label),
        }
    }
}

/// The file on disk at `path` now, through the confined reader: a link out of reach, anything but
/// a regular file, or a file over the bound is refused; nothing there is `None`.
pub async fn read_disk(
    call: &Call<'_>,
    path: &Path,
    shown: &str,
) -> Result<Option<Contents>, ToolOutput> {
    match workspace_file::read_disk(call.session, path, workspace_file::READ_LIMIT).await {
        Ok(contents) => Ok(Some(contents)),
        Err(Refusal::Missing) => Ok(None),
        Err(refusal) => Err(super::read_file::unread(call, shown, &refusal)),
    }
}

/// Puts a proposal to the person (or to the standing rules) and lands what they accept.
pub async fn propose(
    call: &Call<'_>,
    kind: QuestionKind,
    target: Target,
    original: Labelled<String>,
    proposed: Labelled<String>,
) -> ToolOutput {
    let session = call.session;
    let tool = call.tool;
    let shown = target.shown.clone();
    let mode = session.state().mode;
    if mode == Mode::Plan {
        call.record(
            Gate::Promote,
            Decision::Refused,
            format!("{tool}.path {shown}: plan mode writes nothing"),
        );
        return ToolOutput::refused(format!(
            "the session is in plan mode, so nothing is written; describe the change to {shown} instead"
        ));
    }
    let data_label = proposed.label();
    let proposal = Proposal::new(original, proposed);
    // Whether the file already holds exactly the proposal is a fact about its bytes: told to the
    // planner only where both sides are trusted. Otherwise the question comes first, whatever the
    // diff holds, so a write cannot be used to test a guess about a file (WRITE-9).
    if proposal.label().is_trusted() && proposal.is_empty() {
        return ToolOutput::ok(
            PlannerText::driver(format!(
                "{shown} already holds exactly that; nothing to write"
            )),
            format!("{shown}: no change"),
        );
    }
    let protected = is_protected(&target.path);
    // The routing label the decision is taken on: the planner's context, as it stands now.
    let routing_label = session.state().context.label();
    let decided = {
        let state = session.state();
        decide::edit(
            &state.approvals,
            decide::Context {
                person_only: state.context.routing() == Routing::PersonOnly,
                trusted_public: routing_label.is_trusted() && routing_label.is_public(),
            },
            decide::Edit {
                path: &target.path,
                protected,
                by_reference: target.by_reference,
                data_trusted: data_label.is_trusted(),
                accept_edits: mode == Mode::AcceptEdits,
                interactive: session.screen.interactive(),
            },
        )
    };
    let all: Vec<usize> = (0..proposal.hunks.len()).collect();
    let (accepted, edited) = match decided {
        Decided::Unasked(rule) => {
            let why = match rule {
                Why::AcceptEditsMode => "acceptEdits mode lands writes of trusted data",
                _ => "the person allowed edits to this file for the session",
            };
            call.record(
                Gate::Promote,
                Decision::Allowed,
                format!("{tool}.path {shown} [routing] {routing_label}, data {data_label}: {why}"),
            );
            (all.clone(), None)
        }
        Decided::Ask { standing } => match ask(call, kind, &target, &proposal, standing).await {
            Ok(answer) => answer,
            Err(refusal) => return refusal,
        },
        // Nobody is watching (an edit is never checked first).
        Decided::Refuse(_) | Decided::CheckFirst => {
            call.record(
                Gate::Question,
                Decision::Refused,
                format!("{tool} {shown}: nobody is watching to approve it"),
            );
            return ToolOutput::refused(format!(
                "nobody is watching this run to approve a change to {shown}, so it was not written"
            ));
        }
    };
    land(call, &target, &proposal, &accepted, edited, data_label).await
}

/// Puts the question; answers which hunks were accepted and any text the person edited.
async fn ask(
    call: &Call<'_>,
    kind: QuestionKind,
    target: &Target,
    proposal: &Proposal,
    offer_standing: bool,
) -> Result<(Vec<usize>, Option<String>), ToolOutput> {
    let session = call.session;
    let shown = &target.shown;
    let verb = if kind == QuestionKind::Edit {
        "Edit"
    } else {
        "Write"
    };
    let mut question = Question::approve(kind, format!("{verb} {shown}?"))
        .why(&call.why)
        .subject(Subject {
            path: Some(shown.clone()),
            uri: Some(file_uri(&target.path)),
            diff: Some(proposal.unified_diff(shown)),
            original: Some(proposal.original().clone()),
            proposed: Some(proposal.proposed().clone()),
            version: target.buffer.as_ref().map(|(_, version)| *version),
            hunks: proposal.hunks.clone(),
            ..Subject::default()
        })
        .allow_once("accept", format!("Accept {}", verb.to_lowercase()));
    // A standing approval is offered only for data somebody vouched for, never for a file that
    // configures tools or whose name the planner was not shown, and never to a context whose
    // routing is not its own: those are asked about every time.
    if offer_standing {
        question = question.allow_always(
            "acceptAlways",
            format!("Accept, and allow edits to {shown} for the rest of this session"),
        );
    }
    let question = question.reject("reject", format!("Reject {}", verb.to_lowercase()));
    let asked = call
        .ask_recorded(question, |a| {
            a.said(
                format!("{} {shown}: approved by the person", kind.as_str()),
                format!("{} {shown}: refused", kind.as_str()),
            )
        })
        .await;
    if !asked.approved() {
        return Err(ToolOutput::refused(format!(
            "the person refused the change to {shown}; nothing was written"
        )));
    }
    if asked.allowed_always() {
        session
            .state()
            .approvals
            .person_allowed_edits(target.path.clone());
        call.record(
            Gate::Promote,
            Decision::Allowed,
            format!("{shown}: edits allowed for the session by the person"),
        );
    }
    let (accepted, edited) = match asked.answer {
        Answer::Selected {
            accepted_hunks,
            edited_text,
            ..
        } => (accepted_hunks, edited_text),
        Answer::Refused | Answer::TimedOut { .. } => (None, None),
    };
    let chose_hunks = accepted.is_some();
    let mut accepted = accepted.unwrap_or_else(|| (0..proposal.hunks.len()).collect());
    accepted.retain(|h| *h < proposal.hunks.len());
    accepted.sort_unstable();
    accepted.dedup();
    // Refused only when the person's own answer picked no hunk: an accepted proposal that the
    // diff found empty still lands, so the reply cannot tell a planner whether it guessed the
    // file (WRITE-9).
    if chose_hunks && accepted.is_empty() && edited.is_none() {
        return Err(ToolOutput::refused(format!(
            "the person accepted none of the hunks for {shown}; nothing was written"
        )));
    }
    Ok((accepted, edited))
}

/// Lands the accepted part of a proposal, or the person's own version of it.
async fn land(
    call: &Call<'_>,
    target: &Target,
    proposal: &Proposal,
    accepted: &[usize],
    edited: Option<String>,
    data_label: Label,
) -> ToolOutput {
    let session = call.session;
    let shown = &target.shown;
    let person_edited = edited.is_some();
    // The person's own version keeps the proposal's label: editing it vouches for nothing.
    // Made only where it is written whole: an open buffer takes the proposal's own edits.
    let landing = || match &edited {
        Some(text) => Labelled::new(text.clone(), proposal.label()),
        None => proposal.with_hunks(accepted),
    };
    // What the person typed while the question was open is seen before the change lands.
    session.files.refresh(&target.path).await;
    // The turn's checkpoint keeps what the path holds before its first change, with its label
    // then (CKPT-1); this seat's and every other's changes go into the same checkpoint.
    crate::checkpoint::before_change(session, &session.checkpoints, &target.path).await;
    // Untrusted data is marked before it lands, in the session's one trust map (TRUST-10): no
    // reader, in this seat or another, finds the new bytes under an older vouch.
    if !data_label.is_trusted() {
        session
            .trust
            .lock()
            .mark_written_untrusted(target.path.clone(), None);
    }
    let outcome = match (&target.buffer, session.files.version(&target.path)) {
        // Still at the version the question was put on: the edits come from the proposal's own
        // diff (or one diff of the person's version), made on the text read then.
        (Some((asked_text, asked_at)), Some(version)) if version == *asked_at => {
            let edits = if person_edited {
                let landing = landing();
                Labelled::new(
                    proposal::line_edits(asked_text, policy::to_buffer_write(&landing)),
                    landing.label(),
                )
            } else {
                proposal.line_edits(accepted)
            };
            let applied = session
                .files
                .apply_edit(
                    &target.path,
                    version,
                    asked_text,
                    policy::to_buffer_edits(&edits),
                )
                .await;
            // Made on the text the question was put on: the buffer now holds the landing.
            applied.map(|()| ("the editor's buffer", Some(landing_bytes(&landing()))))
        }
        (_, Some(_)) => {
            // The buffer moved (or was opened) since the question: land on what is there now,
            // if the person's typing left every accepted hunk alone.
            match session.files.buffer(&target.path) {
                None => Err(
                    "the buffer was closed while the change was pending; nothing was written"
                        .to_string(),
                ),
                Some(_) if person_edited => Err("the buffer changed after the person edited the proposal, so their version was not applied over it".to_string()),
                Some((text, version)) => match proposal.rebase(&text, accepted) {
                    Ok(rebased) => {
                        let edits = Labelled::new(
                            proposal::line_edits(&text, policy::to_buffer_write(&rebased)),
                            rebased.label(),
                        );
                        session
                            .files
                            .apply_edit(&target.path, version, &text, policy::to_buffer_edits(&edits))
                            .await
                            .map(|()| ("the editor's buffer, re-based onto the text it holds now", None))
                    }
                    Err(RebaseRefusal::Overlap) => Err(
                        "the person typed into lines this change touches while it was pending; nothing was overwritten"
                            .to_string(),
                    ),
                    Err(RebaseRefusal::Untrusted) => Err(
                        "the buffer is not at the version the question was put on (it changed, or the editor gives no versions and was read again), and content nobody vouched for is never re-based; nothing was overwritten"
                            .to_string(),
                    ),
                },
            }
        }
        (Some(_), None) => Err(
            "the buffer was closed while the change was pending; nothing was written".to_string(),
        ),
        (None, None) => {
            match write_to_disk(target, proposal, &landing(), accepted, person_edited).await {
                Ok(place) => Ok(place),
                Err(NotLanded::Refused(reason)) => Err(reason),
                Err(NotLanded::Failed(reason)) => {
                    call.record(
                        Gate::FileRead,
                        Decision::Refused,
                        format!("{} {shown}: not landed, the write failed", call.tool),
                    );
                    // Approved, tried and failed: the file is as it was (WRITE-10).
                    let said = format!("{shown} was not changed: {reason}");
                    return ToolOutput {
                        status: crate::screen::ToolStatus::Failed,
                        text: PlannerText::driver(format!("failed: {said}")),
                        summary: said,
                        attachments: Vec::new(),
                    };
                }
            }
        }
    };
    let (place, landed) = match outcome {
        Ok(landed) => landed,
        Err(reason) => {
            call.record(
                Gate::FileRead,
                Decision::Refused,
                format!("{} {shown}: not landed", call.tool),
            );
            return ToolOutput::refused(format!("{shown} was not changed: {reason}"));
        }
    };
    if !data_label.is_trusted() {
        // Again, now that the file is there: its identity on disk marks every name it has.
        let file = workspace_file::identity(&target.path);
        session
            .trust
            .lock()
            .mark_written_untrusted(target.path.clone(), file);
        call.record(
            Gate::Trust,
            Decision::Observed,
            format!("{shown} now holds {data_label} data (origin agentWrite)"),
        );
    }
    call.record(
        Gate::Promote,
        Decision::Allowed,
        format!("{} {shown}: landed in {place}", call.tool),
    );
    keep_clean_across_the_edit(call, target, data_label, landed);
    let version = session.files.version(&target.path);
    let token = change_token(&target.path, version);
    let total = proposal.hunks.len();
    let mut text = format!("{shown}: the change landed in {place}.");
    if person_edited {
        text.push_str(" The person edited the proposal before accepting it: what landed is their version, not yours; read the file again before relying on its contents.");
    } else if !proposal.label().is_trusted() {
        // The hunks were cut from text nobody vouched for: how many there were, and which the
        // person took, are facts about that text (WRITE-9).
        text.push_str(" The person saw the diff and accepted what landed; it holds content nobody vouched for, so the hunks are not counted for you.");
    } else if accepted.len() < total {
        // Counted from 1, as the person sees them on screen ("hunk 1 of 3"), so what the
        // planner says back to the person names the same hunks; `acceptedHunks` stays 0-based.
        let refused: Vec<String> = (0..total)
            .filter(|h| !accepted.contains(h))
            .map(|h| (h + 1).to_string())
            .collect();
        let landed: Vec<String> = accepted.iter().map(|h| (h + 1).to_string()).collect();
        text.push_str(&format!(
            " {} of {total} hunks landed (hunks {}, counted from 1); the person refused hunks {}.",
            accepted.len(),
            landed.join(", "),
            refused.join(", ")
        ));
    } else {
        text.push_str(&format!(" All {total} hunks landed."));
    }
    if data_label.is_trusted() {
        text.push_str(&format!(" New change token {token}."));
    }
    ToolOutput::ok(PlannerText::driver(text), format!("{shown}: changed"))
}

/// Keeps a clean verdict across the session's own approved edit (CHECK-13): bytes a check passed,
/// with hunks of trusted text a person approved (or their acceptEdits mode landed) applied on
/// exactly those bytes, are no less clean. Their label is the join of the two, trusted, so the
/// landed bytes are remembered with the verdict the original's had and the next read sends no
/// check. Only where the original was readable (a rule or a verdict) and the change was made on
/// the text the question was put on: a change re-based onto text read afterwards, or one carrying
/// content nobody vouched for, keeps nothing, and those bytes are judged when next read. Kept in
/// the session's memory only: no judge said it, so it is never written to the verdicts kept
/// across sessions.
fn keep_clean_across_the_edit(
    call: &Call<'_>,
    target: &Target,
    data_label: Label,
    landed: Option<Labelled<Vec<u8>>>,
) {
    let had_bytes = target.buffer.is_some() || target.disk.is_some();
    let Some(bytes) = landed else { return };
    if !(had_bytes && data_label.is_trusted() && target.label.is_trusted()) {
        return;
    }
    let session = call.session;
    session
        .verdicts
        .lock()
        .unwrap_or_else(|p| p.into_inner())
        .keep(
            target.real.clone(),
            policy::fingerprint(&bytes),
            policy::Verdict::Safe,
        );
    call.record(
        Gate::Trust,
        Decision::Allowed,
        format!(
            "{}: the landed bytes keep the clean verdict of the bytes they were edited from (approved hunks of trusted text; label {data_label})",
            target.shown
        ),
    );
}

/// Why a change to a file on disk did not land.
enum NotLanded {
    /// It was not tried: the file changed under the question.
    Refused(String),
    /// It was tried and the filesystem refused (full, read-only, over a limit); nothing changed.
    Failed(String),
}

impl From<String> for NotLanded {
    fn from(reason: String) -> NotLanded {
        NotLanded::Refused(reason)
    }
}

impl From<&str> for NotLanded {
    fn from(reason: &str) -> NotLanded {
        NotLanded::Refused(reason.to_string())
    }
}

/// Runs filesystem work on the blocking pool, so a slow or full filesystem holds one of its
/// threads and never a worker of the runtime. `None` when the work did not finish.
async fn off_the_workers<T: Send + 'static>(
    work: impl FnOnce() -> T + Send + 'static,
) -> Option<T> {
    tokio::task::spawn_blocking(work).await.ok()
}

/// Writes a file that is not open in the editor: against what is on disk now, atomically.
async fn write_to_disk(
    target: &Target,
    proposal: &Proposal,
    landing: &Labelled<String>,
    accepted: &[usize],
    person_edited: bool,
) -> Result<(&'static str, Option<Labelled<Vec<u8>>>), NotLanded> {
    let path = target.path.clone();
    let (exists_now, token_now) =
        off_the_workers(move || (path.exists(), change_token(&path, None)))
            .await
            .ok_or_else(|| NotLanded::Failed("the file on disk could not be looked at".into()))?;
    let unchanged = exists_now == target.disk.is_some() && token_now == target.disk_token;
    let bytes: Labelled<Vec<u8>> = if unchanged {
        landing_bytes(landing)
    } else if person_edited {
        return Err("the file changed on disk after the person edited the proposal".into());
    } else if !proposal.label().is_trusted() {
        return Err("the file changed on disk while the change was pending, and content nobody vouched for is never re-based".into());
    } else {
        // Trusted on both sides (the proposal's label includes the original's), so the new
        // text may be read to re-base onto.
        let path = target.path.clone();
        let now = off_the_workers(move || {
            workspace_file::read_regular(&path, workspace_file::READ_LIMIT)
        })
        .await
        .and_then(Result::ok)
        .and_then(|file| String::from_utf8(file.bytes).ok())
        .ok_or_else(|| "the file on disk changed and can no longer be read as text".to_string())?;
        match proposal.rebase(&now, accepted) {
            Ok(rebased) => landing_bytes(&rebased),
            Err(_) => return Err("the file changed on disk while the change was pending, in lines this change touches".into()),
        }
    };
    let (path, data) = (target.path.clone(), policy::to_file_write(&bytes).to_vec());
    off_the_workers(move || write_atomically(&path, &data))
        .await
        .unwrap_or_else(|| Err(std::io::Error::other("the write did not finish")))
        .map_err(|e| {
            NotLanded::Failed(format!(
                "writing failed ({e}); the file is as it was and no temporary file is left"
            ))
        })?;
    // Only a change made on the bytes the question was put on lands bytes anyone judged.
    Ok(("the file on disk", unchanged.then_some(bytes)))
}

fn landing_bytes(text: &Labelled<String>) -> Labelled<Vec<u8>> {
    Labelled::new(
        policy::to_buffer_write(text).as_bytes().to_vec(),
        text.label(),
    )
}

/// Writes `bytes` to a temporary file beside `path` and renames it into place, keeping the old
/// file's permissions, so a reader never sees half a file.
pub fn write_atomically(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    static NEXT: AtomicU64 = AtomicU64::new(0);
    let dir = path
        .parent()
        .ok_or_else(|| std::io::Error::other("no parent directory"))?;
    std::fs::create_dir_all(dir)?;
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let tmp = dir.join(format!(
        ".{name}.bravebot-{}-{}.tmp",
        std::process::id(),
        NEXT.fetch_add(1, Ordering::Relaxed)
    ));
    let permissions = std::fs::metadata(path).ok().map(|m| m.permissions());
    let result = (|| {
        let mut file = std::fs::File::create(&tmp)?;
        file.write_all(bytes)?;
        file.sync_all()?;
        if let Some(p) = permissions {
            std::fs::set_permissions(&tmp, p)?;
        }
        std::fs::rename(&tmp, path)
    })();
    if result.is_err() {
        let _ = std::fs::remove_file(&tmp);
    }
    result
}

#[cfg(test)]
mod tests {
    use super::*;

    // Verifies: WRITE-5
    #[test]
    fn protected_paths_are_known_by_name_in_any_case() {
        for p in [
            "/w/.git/config",
            "/w/.vscode/settings.json",
            "/w/.VSCode/Settings.json",
            "/w/AGENTS.md",
            "/w/docs/agents.md",
            "/w/sub/.github/workflows/ci.yml",
            "/w/.gitattributes",
            "/w/.cargo/config.toml",
            "/w/.cargo",
            "/w/rust-toolchain.toml",
            "/w/build/compile_commands.json",
            "/w/.yarnrc.yml",
            "/w/.npmrc",
            "/w/.envrc",
            "/w/.dir-locals.el",
            "/w/.lazy.lua",
            "/w/.nvim.lua",
            "/w/.EXRC",
            "/w/.config/nvim/init.lua",
        ] {
            assert!(is_protected(Path::new(p)), "{p}");
        }
        for p in [
            "/w/src/main.rs",
            "/w/docs/guide.md",
            "/w/.gitignore",
            "/w/cargo/config.toml",
            "/w/.env.example",
        ] {
            assert!(!is_protected(Path::new(p)), "{p}");
        }
    }

    // Verifies: WRITE-6
    #[test]
    fn atomic_write_keeps_permissions() {
        use std::os::unix::fs::PermissionsExt;
        let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
        let p = dir.path().join("run.sh");
        std::fs::write(&p, "old").unwrap_or_else(|e| panic!("{e}"));
        std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o751))
            .unwrap_or_else(|e| panic!("{e}"));
        write_atomically(&p, b"new").unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(std::fs::read_to_string(&p).unwrap_or_default(), "new");
        let mode = std::fs::metadata(&p)
            .map(|m| m.permissions().mode() & 0o777)
            .unwrap_or(0);
        assert_eq!(mode, 0o751);
        let leftovers: Vec<_> = std::fs::read_dir(dir.path())
            .into_iter()
            .flatten()
            .flatten()
            .collect();
        assert_eq!(leftovers.len(), 1, "no temporary file left behind");
    }
}
