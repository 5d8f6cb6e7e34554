//! The person's screen in an editor: session updates as notifications, questions as
//! `bravebot/session/requestPermission` (or `window/showMessageRequest` for a client that did not
//! declare the bravebot permissions capability, with a bounded preview, and never for a change
//! it cannot show as a diff), answerable also through code actions and the `bravebot.answer`
//! command under an id nobody can guess. The first answer wins; anything but a clear selection
//! refuses.

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use bravebot_core::kernel::labelled::Labelled;
use bravebot_core::kernel::policy;
use bravebot_core::kernel::proposal;
use bravebot_core::kernel::slot::Origin;
use bravebot_core::screen::{Answer, BoxFuture, CheckState, Question, Screen, StopReason, Update};
use serde_json::Value;
use tokio::sync::oneshot;
use tokio::time::Instant;
use tower_lsp_server::Client;
use tower_lsp_server::ls_types::{MessageActionItem, MessageType};

use crate::protocol::{
    self, HunkRange, Outcome, PermissionOption, PermissionReply, RequestPermissionParams,
    SessionUpdate, SubjectHunk, TodoItem, UpdateNotification, UsageMeter, method,
};
use crate::transport::Outbox;

/// A question waiting for its first answer.
pub struct Pending {
    /// When it was put, among the server's questions: code actions list them in this order.
    order: u64,
    pub uri: Option<String>,
    pub title: String,
    pub options: Vec<PermissionOption>,
    /// For `edit` and `write`: the hunks, and the person's verdict on each so far.
    pub hunks: Vec<HunkRange>,
    verdicts: Vec<Option<bool>>,
    /// For `edit` and `write`: the question's two texts, shared, for `bravebot/question/texts`.
    texts: Option<Texts>,
    answer: oneshot::Sender<Answer>,
}

/// An edit's original and proposal, shared with the proposal (no copy of either).
type Texts = (Labelled<Arc<String>>, Labelled<Arc<String>>);

/// A pending question about one document, as code actions need it.
pub struct DocumentQuestion {
    pub question_id: String,
    pub title: String,
    pub options: Vec<PermissionOption>,
    pub hunks: Vec<HunkRange>,
}

/// What became of one hunk's verdict.
#[derive(Debug, PartialEq, Eq)]
pub enum HunkVerdict {
    /// Recorded; other hunks still wait for theirs.
    Recorded,
    /// The last one: the question was answered with the accepted hunks.
    Answered,
    /// No such pending question, or no such hunk.
    NotPending,
}

/// Every question the server is waiting on, across sessions.
#[derive(Default)]
pub struct Questions {
    pending: Mutex<HashMap<String, Pending>>,
    next: AtomicU64,
}

/// A question id nobody can guess: 128 bits from the operating system's random source, in hex.
/// Anything that can send `workspace/executeCommand` with arguments of its choosing (a task, a
/// keybinding, a setting a checkout ships) could otherwise answer `q1` without the person seeing
/// it. `None` when the source fails: the question is then refused rather than given an id that
/// could be guessed.
pub fn new_question_id() -> Option<String> {
    let mut bytes = [0u8; 16];
    getrandom::getrandom(&mut bytes).ok()?;
    Some(bytes.iter().map(|b| format!("{b:02x}")).collect())
}

impl Questions {
    /// Registers a question under a fresh unguessable id; `None` (and the question dropped)
    /// when no id could be made.
    fn register(&self, mut pending: Pending) -> Option<String> {
        let id = new_question_id()?;
        pending.order = self.next.fetch_add(1, Ordering::Relaxed);
        self.lock().insert(id.clone(), pending);
        Some(id)
    }

    /// Delivers an answer. Returns false when the question is not pending any more (answered
    /// already, withdrawn, or never put): later answers are ignored.
    pub fn answer(&self, question_id: &str, answer: Answer) -> bool {
        match self.lock().remove(question_id) {
            Some(p) => p.answer.send(answer).is_ok(),
            None => false,
        }
    }

    /// The whole original and proposal of an edit or write question still waiting, for the
    /// person's screen (WRITE-61); `None` for any other question or one not waiting.
    pub fn texts(&self, question_id: &str) -> Option<(String, String)> {
        let pending = self.lock();
        let (original, proposed) = pending.get(question_id)?.texts.as_ref()?;
        // The screen is one of the places untrusted bytes may go.
        Some((
            policy::to_screen(original).as_str().to_owned(),
            policy::to_screen(proposed).as_str().to_owned(),
        ))
    }

    /// Takes a question off the list; true when it was still waiting for its answer.
    fn withdraw(&self, question_id: &str) -> bool {
        self.lock().remove(question_id).is_some()
    }

    /// Pending questions about a document, for code actions.
    pub fn for_uri(&self, uri: &str) -> Vec<DocumentQuestion> {
        let mut found: Vec<(u64, DocumentQuestion)> = self
            .lock()
            .iter()
            .filter(|(_, p)| p.uri.as_deref() == Some(uri))
            .map(|(id, p)| {
                (
                    p.order,
                    DocumentQuestion {
                        question_id: id.clone(),
                        title: p.title.clone(),
                        options: p.options.clone(),
                        hunks: p.hunks.clone(),
                    },
                )
            })
            .collect();
        found.sort_by_key(|(order, _)| *order);
        found.into_iter().map(|(_, q)| q).collect()
    }

    /// Records the person's verdict on one hunk; once every hunk has one, answers the question
    /// with the accepted ones (the first approving option, with `acceptedHunks`).
    pub fn hunk_verdict(&self, question_id: &str, hunk: usize, accept: bool) -> HunkVerdict {
        let mut pending = self.lock();
        let Some(p) = pending.get_mut(question_id) else {
            return HunkVerdict::NotPending;
        };
        let Some(slot) = p.verdicts.get_mut(hunk) else {
            return HunkVerdict::NotPending;
        };
        *slot = Some(accept);
        if p.verdicts.iter().any(Option::is_none) {
            return HunkVerdict::Recorded;
        }
        let Some(p) = pending.remove(question_id) else {
            return HunkVerdict::NotPending;
        };
        let accepted: Vec<usize> = p
            .verdicts
            .iter()
            .enumerate()
            .filter(|(_, v)| **v == Some(true))
            .map(|(i, _)| i)
            .collect();
        let approve = p
            .options
            .iter()
            .find(|o| o.kind == "allow_once")
            .map(|o| o.option_id.clone());
        let answer = match approve {
            Some(option_id) => Answer::Selected {
                option_id,
                text: None,
                accepted_hunks: Some(accepted),
                edited_text: None,
            },
            None => Answer::Refused,
        };
        let _ = p.answer.send(answer);
        HunkVerdict::Answered
    }

    /// Refuses every pending question (end of input, shutdown).
    pub fn refuse_all(&self) {
        for (_, p) in self.lock().drain() {
            let _ = p.answer.send(Answer::Refused);
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<String, Pending>> {
        self.pending.lock().unwrap_or_else(|p| p.into_inner())
    }
}

/// Removes a question from the registry when the turn stops waiting for it, and tells the
/// editor when nobody had answered it, so the question is taken down there too and an answer
/// after this is refused (ATTN-4).
struct Withdraw<'a> {
    questions: &'a Questions,
    updates: &'a Updates,
    question_id: String,
}

impl Drop for Withdraw<'_> {
    fn drop(&mut self) {
        if self.questions.withdraw(&self.question_id) {
            self.updates.question_closed(&self.question_id);
        }
    }
}

/// Aborts a task when dropped.
struct AbortOnDrop(tokio::task::AbortHandle);

impl Drop for AbortOnDrop {
    fn drop(&mut self) {
        self.0.abort();
    }
}

/// Streamed text is written at most this often: deltas arriving sooner are held and merged.
const TEXT_INTERVAL: Duration = Duration::from_millis(16);
/// Held text reaching this many bytes is written at once, whatever the interval.
const TEXT_BATCH_BYTES: usize = 32 * 1024;

/// The session's updates on their way to the outbox, with streamed text merged.
///
/// The first delta after a quiet [`TEXT_INTERVAL`] is written at once, so text appears as soon
/// as it starts; deltas that follow within the interval are held and written together when it
/// has passed, when they reach [`TEXT_BATCH_BYTES`], or before any other update or question,
/// so nothing is reordered and no text is left behind at the end of a turn. While the outbox is
/// backed up (the client is not reading), held text is merged rather than queued, so memory
/// grows with the text and not with the number of deltas.
pub struct Updates {
    session_id: String,
    outbox: Outbox,
    held: Mutex<Held>,
}

#[derive(Default)]
struct Held {
    text: String,
    /// When text was last written.
    written: Option<Instant>,
    /// A task is waiting to write the held text.
    timer: bool,
}

impl Updates {
    pub fn new(session_id: String, outbox: Outbox) -> Arc<Updates> {
        Arc::new(Updates {
            session_id,
            outbox,
            held: Mutex::new(Held::default()),
        })
    }

    /// Sends `update`, merging streamed text as described on [`Updates`].
    pub fn send(self: &Arc<Self>, update: Update) {
        let mut held = self.lock();
        let Update::AgentText { delta } = update else {
            self.write_held(&mut held);
            self.write(update);
            return;
        };
        held.text.push_str(&delta);
        let due = held.written.is_none_or(|at| at.elapsed() >= TEXT_INTERVAL);
        if (due || held.text.len() >= TEXT_BATCH_BYTES) && !self.outbox.backed_up() {
            self.write_held(&mut held);
        } else if !held.timer {
            held.timer = true;
            let updates = Arc::clone(self);
            tokio::spawn(async move { updates.write_later().await });
        }
    }

    /// Writes whatever text is held (before a question, say).
    pub fn flush(&self) {
        let mut held = self.lock();
        self.write_held(&mut held);
    }

    async fn write_later(&self) {
        loop {
            let wait = {
                let held = self.lock();
                held.written.map_or(Duration::ZERO, |at| {
                    TEXT_INTERVAL.saturating_sub(at.elapsed())
                })
            };
            tokio::time::sleep(wait.max(Duration::from_millis(1))).await;
            let mut held = self.lock();
            if held.text.is_empty() {
                held.timer = false;
                return;
            }
            if !self.outbox.backed_up() {
                self.write_held(&mut held);
                held.timer = false;
                return;
            }
            // The client is behind: keep merging, and look again an interval later.
            held.written = Some(Instant::now());
        }
    }

    fn write_held(&self, held: &mut Held) {
        if held.text.is_empty() {
            return;
        }
        let delta = std::mem::take(&mut held.text);
        held.written = Some(Instant::now());
        self.write(Update::AgentText { delta });
    }

    fn write(&self, update: Update) {
        self.write_wire(wire_update(update));
    }

    /// Says that a question is no longer waiting (ATTN-4), after any text held before it.
    pub fn question_closed(&self, question_id: &str) {
        let mut held = self.lock();
        self.write_held(&mut held);
        self.write_wire(SessionUpdate::QuestionClosed {
            question_id: question_id.to_owned(),
        });
    }

    fn write_wire(&self, update: SessionUpdate) {
        let params = UpdateNotification {
            session_id: self.session_id.clone(),
            update,
        };
        self.outbox
            .notify(protocol::method::SESSION_UPDATE, &params);
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Held> {
        self.held.lock().unwrap_or_else(|p| p.into_inner())
    }
}

pub struct LspScreen {
    pub session_id: String,
    client: Client,
    updates: Arc<Updates>,
    questions: Arc<Questions>,
    permissions: bool,
    /// The client rebuilds an edit's texts from its hunks (WRITE-61).
    hunk_texts: bool,
    interactive: bool,
}

impl LspScreen {
    pub fn new(
        session_id: String,
        client: Client,
        updates: Outbox,
        questions: Arc<Questions>,
        permissions: bool,
        hunk_texts: bool,
        interactive: bool,
    ) -> LspScreen {
        LspScreen {
            updates: Updates::new(session_id.clone(), updates),
            session_id,
            client,
            questions,
            permissions,
            hunk_texts,
            interactive,
        }
    }
}

impl Screen for LspScreen {
    fn update(&self, update: Update) {
        self.updates.send(update);
    }

    fn ask(&self, question: Question) -> BoxFuture<'_, Answer> {
        // Text the person has not seen yet comes before the question it led to.
        self.updates.flush();
        Box::pin(async move {
            let options: Vec<PermissionOption> = question
                .options
                .iter()
                .map(|o| PermissionOption {
                    option_id: o.id.clone(),
                    name: o.name.clone(),
                    kind: o.kind.as_str(),
                })
                .collect();
            let (tx, rx) = oneshot::channel();
            let registered = self.questions.register(Pending {
                order: 0,
                uri: question.subject.uri.clone(),
                title: question.title.clone(),
                options: options.clone(),
                hunks: wire_hunks(&question),
                verdicts: vec![None; question.subject.hunks.len()],
                texts: question
                    .subject
                    .original
                    .clone()
                    .zip(question.subject.proposed.clone()),
                answer: tx,
            });
            let Some(question_id) = registered else {
                tracing::error!(
                    "no random question id could be made, so the question was refused unasked"
                );
                return Answer::Refused;
            };
            let _withdraw = Withdraw {
                questions: &self.questions,
                updates: &self.updates,
                question_id: question_id.clone(),
            };
            let client = self.client.clone();
            let questions = self.questions.clone();
            let asking = if self.permissions {
                // Serialised once, straight into the frame the transport writes: an edit's
                // question carries both texts (or, to a client declaring `hunkTexts`, only the
                // hunks' lines, WRITE-61), and no other copy of them is made (WRITE-60).
                let params = wire_question(
                    &self.session_id,
                    &question_id,
                    &question,
                    options,
                    self.hunk_texts,
                );
                let reply = self
                    .updates
                    .outbox
                    .request(method::SESSION_REQUEST_PERMISSION, &params);
                let qid = question_id.clone();
                tokio::spawn(async move {
                    let reply = match reply {
                        Some(reply) => reply.result().await,
                        None => None,
                    };
                    questions.answer(&qid, read_reply(reply));
                })
            } else {
                let message = match fallback(&question) {
                    Fallback::Ask(message) => message,
                    Fallback::Refuse(why) => {
                        tracing::warn!("{why}");
                        self.client.show_message(MessageType::WARNING, why).await;
                        return Answer::Refused;
                    }
                };
                let actions: Vec<MessageActionItem> = options
                    .iter()
                    .map(|o| MessageActionItem {
                        title: o.name.clone(),
                        properties: HashMap::new(),
                    })
                    .collect();
                let qid = question_id.clone();
                tokio::spawn(async move {
                    let reply = client
                        .show_message_request(MessageType::INFO, message, Some(actions))
                        .await;
                    let answer = match reply {
                        Ok(Some(item)) => options
                            .iter()
                            .find(|o| o.name == item.title)
                            .map_or(Answer::Refused, |o| Answer::select(o.option_id.clone())),
                        _ => Answer::Refused,
                    };
                    questions.answer(&qid, answer);
                })
            };
            // The task waiting for the client's reply ends with the question: answered some
            // other way, withdrawn or cancelled, nobody waits for that reply any more.
            let _asking = AbortOnDrop(asking.abort_handle());
            rx.await.unwrap_or(Answer::Refused)
        })
    }

    fn interactive(&self) -> bool {
        self.interactive
    }
}

/// Reads a client's reply to a question. Anything but a selection refuses.
pub fn read_reply(reply: Option<Value>) -> Answer {
    match reply.map(serde_json::from_value::<PermissionReply>) {
        Some(Ok(PermissionReply {
            outcome:
                Outcome::Selected {
                    option_id,
                    text,
                    accepted_hunks,
                    edited_text,
                },
        })) => Answer::Selected {
            option_id,
            text,
            accepted_hunks,
            edited_text,
        },
        _ => Answer::Refused,
    }
}

fn wire_hunks(q: &Question) -> Vec<HunkRange> {
    q.subject
        .hunks
        .iter()
        .map(|h| HunkRange {
            old_start: h.old_start,
            old_lines: h.old_lines,
            new_start: h.new_start,
            new_lines: h.new_lines,
        })
        .collect()
}

/// The most lines and bytes of a question's content a message box is given.
const FALLBACK_LINES: usize = 20;
const FALLBACK_BYTES: usize = 2_000;
/// The longest diff a message box is asked to approve: beyond it the change is refused.
const FALLBACK_DIFF_LINES: usize = 40;
const FALLBACK_DIFF_BYTES: usize = 4_000;

/// What a client without the permissions capability is sent for a question.
#[derive(Debug, PartialEq, Eq)]
enum Fallback {
    /// A `window/showMessageRequest` with this message.
    Ask(String),
    /// Nothing to answer: the question is refused, and the person told why in a
    /// `window/showMessage`.
    Refuse(String),
}

/// The question as one message box, or a refusal where a message box cannot show what an answer
/// would approve. A change to a file is approved from its diff: a short diff of trusted text is
/// drawn whole, and any other (content nobody vouched for, or too long to read in a box) is
/// refused, since a yes to a diff the person could not review is no review. Content a yes would
/// let through (`vetContent`, `readOutput`, `trustRead`) is drawn whole, control characters
/// pictured, when it fits a box; longer content is kept quarantined without asking (REL-1: a
/// release question shows every byte it releases), decided by its size, never by its bytes.
fn fallback(q: &Question) -> Fallback {
    let mut m = q.title.clone();
    let s = &q.subject;
    if let Some(path) = &s.path {
        m.push_str(&format!("\n{path}"));
    }
    if let Some(origin) = &s.origin {
        m.push_str(&format!("\nFrom: {origin}"));
    }
    if let Some(copy) = &s.copy {
        m.push_str(&format!(
            "\nOpen the copy: {} ({}, {} bytes)",
            copy.path, copy.media_type, copy.bytes
        ));
    }
    if let Some(url) = &s.url {
        m.push_str(&format!("\nURL: {url}"));
    }
    if let Some(host) = &s.host {
        m.push_str(&format!("\nhost: {host}"));
    }
    if let Some(command) = &s.command {
        m.push_str(&format!("\nCommand: {command}"));
    }
    for step in &s.plan {
        m.push_str(&format!("\n{step}"));
    }
    if let Some(notice) = &s.notice {
        m.push_str(&format!("\n{notice}"));
    }
    if let Some(question) = &s.question {
        match &s.header {
            Some(header) => m.push_str(&format!("\n{header}: {question}")),
            None => m.push_str(&format!("\n{question}")),
        }
    }
    if let Some(v) = s.verdict {
        m.push_str(&format!("\nThe check said: {}", v.as_str()));
    }
    if let Some(diff) = &s.diff {
        let what = s.path.as_deref().unwrap_or("the file");
        // The label decides, never the bytes: a diff that holds anything nobody vouched for is
        // not put in a box at all.
        if !diff.label().is_trusted() {
            return Fallback::Refuse(format!(
                "bravebot refused the change to {what} without asking: nobody vouched for the file or for what it would hold, and this editor can show a question only as a message box, where such a change cannot be reviewed. Trust the file for the session, or use an editor that supports bravebot's questions (experimental.bravebot.permissions), which shows it as a diff."
            ));
        }
        let text = policy::to_screen(diff);
        let lines = text.lines().count();
        if lines > FALLBACK_DIFF_LINES || text.len() > FALLBACK_DIFF_BYTES {
            return Fallback::Refuse(format!(
                "bravebot refused the change to {what} without asking: its diff ({lines} lines, {} bytes) is too long to review in a message box, the only way this editor can show it. An editor that supports bravebot's questions (experimental.bravebot.permissions) shows it as a diff.",
                text.len()
            ));
        }
        m.push_str(&format!("\nThe change:\n{}", pictured(text)));
    }
    if let Some(content) = &s.content {
        // The screen is one of the places untrusted bytes may go. A box that cannot hold all of
        // what a yes lets the agent read is not put: the person could not see what they release.
        let text = policy::to_screen(content);
        let (shown, cut) = preview(text);
        if cut.is_some() {
            let what = s
                .origin
                .as_deref()
                .or(s.path.as_deref())
                .unwrap_or("the content");
            return Fallback::Refuse(format!(
                "bravebot kept {what} from the agent without asking: it is {} lines ({} bytes), more than the {FALLBACK_LINES} lines and {FALLBACK_BYTES} bytes a message box shows, and a yes would let the agent read all of it. An editor that supports bravebot's questions (experimental.bravebot.permissions) shows all of it.",
                text.lines().count(),
                text.len()
            ));
        }
        m.push_str(&format!("\nThe content:\n{}", pictured(shown)));
    }
    Fallback::Ask(m)
}

/// The first [`FALLBACK_LINES`] lines of `text`, at most [`FALLBACK_BYTES`] bytes of them, and
/// when that is not all of it, a sentence saying how much was shown and what was left out.
fn preview(text: &str) -> (&str, Option<String>) {
    let mut end = text
        .match_indices('\n')
        .nth(FALLBACK_LINES - 1)
        .map_or(text.len(), |(at, _)| at + 1);
    if end > FALLBACK_BYTES {
        end = FALLBACK_BYTES;
        while !text.is_char_boundary(end) {
            end -= 1;
        }
    }
    if end == text.len() {
        return (text, None);
    }
    let shown = &text[..end];
    let total_lines = text.lines().count();
    let shown_lines = shown.lines().count();
    let cut = format!(
        "[cut: this message shows {shown_lines} of the {total_lines} lines ({} of {} bytes) the question holds; the rest is not shown here, and a yes lets it through as well]",
        shown.len(),
        text.len()
    );
    (shown, Some(cut))
}

/// Text for a message box, one line per line, each under the one mask a command is shown with
/// ([`bravebot_core::cmdline::masked`]): every other control character drawn as a picture and the
/// Unicode ones that reorder or hide text as escapes, so nothing in it can move, hide or restyle
/// what is around it.
fn pictured(text: &str) -> String {
    text.split('\n')
        .map(bravebot_core::cmdline::masked)
        .collect::<Vec<_>>()
        .join("\n")
}

fn wire_question<'a>(
    session_id: &'a str,
    question_id: &'a str,
    q: &'a Question,
    options: Vec<PermissionOption>,
    hunk_texts: bool,
) -> RequestPermissionParams<'a> {
    let s = &q.subject;
    // The screen is one of the places untrusted bytes may go.
    let shown =
        |text: &'a Option<Labelled<String>>| text.as_ref().map(|t| policy::to_screen(t).as_str());
    let whole = |text: &'a Option<Labelled<Arc<String>>>| {
        text.as_ref()
            .map(|t| policy::to_screen(t).as_str())
            .filter(|_| !hunk_texts)
    };
    // A restore's three versions go whole to every client: they are not hunks of an open
    // document's proposal (CKPT-5).
    let restore = q.kind == bravebot_core::screen::QuestionKind::Restore;
    let full = |text: &'a Option<Labelled<Arc<String>>>| {
        text.as_ref().map(|t| policy::to_screen(t).as_str())
    };
    let whole = |text: &'a Option<Labelled<Arc<String>>>| {
        if restore { full(text) } else { whole(text) }
    };
    // A client that holds the original is sent each hunk's proposed lines instead of both texts.
    let texts = match (hunk_texts, s.proposed.as_ref()) {
        (true, Some(proposed)) => {
            proposal::hunk_texts(policy::to_screen(proposed).as_str(), &s.hunks)
                .into_iter()
                .map(Some)
                .collect()
        }
        _ => vec![None; s.hunks.len()],
    };
    RequestPermissionParams {
        session_id,
        question_id,
        kind: q.kind.as_str(),
        title: &q.title,
        why: q.why.as_deref(),
        asker: q.asker.as_ref().map(|a| protocol::Asker {
            number: a.number(),
            kind: a.kind().to_string(),
        }),
        subject: protocol::Subject {
            path: s.path.as_deref(),
            uri: s.uri.as_deref(),
            content: shown(&s.content),
            verdict: s.verdict.map(|v| v.as_str()),
            verdict_text: shown(&s.verdict_text),
            origin: s.origin.as_deref(),
            question: s.question.as_deref(),
            header: s.header.as_deref(),
            multiple: s.multiple,
            diff: shown(&s.diff),
            original: whole(&s.original),
            proposed: whole(&s.proposed),
            agent: full(&s.agent),
            version: s.version.filter(|_| hunk_texts),
            hunks: wire_hunks(q)
                .into_iter()
                .zip(texts)
                .map(|(range, text)| SubjectHunk { range, text })
                .collect(),
            plan: &s.plan,
            command: s.command.as_deref(),
            notice: s.notice.as_deref(),
            url: s.url.as_deref(),
            host: s.host.as_deref(),
            copy: s.copy.as_ref().map(|c| protocol::SubjectCopy {
                path: &c.path,
                media_type: &c.media_type,
                bytes: c.bytes,
            }),
        },
        options,
    }
}

pub fn wire_update(update: Update) -> SessionUpdate {
    match update {
        Update::AgentText { delta } => SessionUpdate::AgentText { delta },
        Update::AutoVetting { on, source } => SessionUpdate::AutoVetting { on, source },
        Update::ToolCall {
            call_id,
            tool,
            why,
            routing,
        } => SessionUpdate::ToolCall {
            call_id,
            tool,
            why,
            routing,
        },
        Update::ToolResult {
            call_id,
            status,
            summary,
        } => SessionUpdate::ToolResult {
            call_id,
            status: status.as_str(),
            summary,
        },
        Update::Quarantined { reference, origin } => SessionUpdate::Quarantined {
            reference: reference.id.to_string(),
            picture: matches!(reference.origin, Origin::McpPicture { .. }),
            origin,
            lines: reference.lines,
            bytes: reference.bytes,
            label: reference.label.to_string(),
        },
        // The screen is one of the places untrusted bytes may go.
        Update::Remark { text } => SessionUpdate::Remark {
            text: policy::to_screen(&text).clone(),
        },
        Update::Notice { text } => SessionUpdate::Notice { text },
        // The screen is one of the places untrusted bytes may go: the check's reasons.
        Update::HeldBack {
            path,
            verdict,
            reasons,
        } => SessionUpdate::HeldBack {
            path,
            verdict: verdict.as_str(),
            verdict_text: reasons.as_ref().map(|r| policy::to_screen(r).clone()),
        },
        Update::Check {
            state: CheckState::Started { lines, file },
            delegate,
        } => SessionUpdate::Check {
            state: "started",
            lines: file.is_none().then_some(lines),
            file,
            completed: None,
            verdict: None,
            delegate,
        },
        Update::Check {
            state: CheckState::Ended { completed, verdict },
            delegate,
        } => SessionUpdate::Check {
            state: "ended",
            lines: None,
            file: None,
            completed: Some(completed),
            verdict: Some(verdict.as_str()),
            delegate,
        },
        // The screen is one of the places untrusted bytes may go.
        Update::RunOutput {
            stream,
            text,
            bytes,
        } => SessionUpdate::RunOutput {
            stream,
            trusted: text.label().is_trusted(),
            label: text.label().to_string(),
            text: policy::to_screen(&text).clone(),
            bytes,
        },
        Update::Plan { todos } => SessionUpdate::Plan {
            todos: todos
                .into_iter()
                .map(|t| TodoItem {
                    content: t.content,
                    status: t.status,
                })
                .collect(),
        },
        Update::TurnEnded { stop_reason } => SessionUpdate::TurnEnded {
            stop_reason: stop_reason.as_str(),
        },
        Update::Checkpoint {
            checkpoint_id,
            files,
        } => SessionUpdate::Checkpoint {
            checkpoint_id,
            files,
        },
        // Counts the endpoint reported, never guessed: a call that reported nothing says so.
        Update::Usage { role, call, meter } => SessionUpdate::Usage {
            role,
            reported: call.is_some(),
            input_tokens: call.map_or(0, |c| c.input),
            output_tokens: call.map_or(0, |c| c.output),
            cached_input_tokens: call.and_then(|c| c.cached_input),
            cache_write_input_tokens: call.and_then(|c| c.cache_write_input),
            context_tokens: call
                .filter(|_| role == "planner")
                .map(|c| c.input + c.output),
            context_limit: meter.context_limit,
            meter: Box::new(UsageMeter::from(&*meter)),
        },
        // The screen is one of the places untrusted bytes may go: the report with its label.
        Update::Delegate {
            number,
            name,
            depth,
            state,
            about,
            stop_reason,
            report,
        } => SessionUpdate::Delegate {
            call_id: format!("delegate-{number}"),
            number,
            delegate_kind: name,
            depth,
            state,
            task: about,
            stop_reason: stop_reason.as_ref().map(StopReason::as_str),
            trusted: report.as_ref().map(|r| r.label().is_trusted()),
            label: report.as_ref().map(|r| r.label().to_string()),
            report: report.as_ref().map(|r| policy::to_screen(r).clone()),
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use bravebot_core::kernel::label::Label;
    use bravebot_core::kernel::labelled::Labelled;
    use bravebot_core::screen::{QuestionKind, Subject};

    /// The `(kind, text)` of every update queued so far.
    fn queued(rx: &mut crate::transport::OutboxReceiver) -> Vec<(String, String)> {
        std::iter::from_fn(|| rx.try_next())
            .map(|m| {
                let update = &m["params"]["update"];
                let kind = update["kind"].as_str().unwrap_or("?").to_owned();
                let text = update["delta"].as_str().unwrap_or("").to_owned();
                (kind, text)
            })
            .collect()
    }

    fn text(delta: &str) -> Update {
        Update::AgentText {
            delta: delta.to_owned(),
        }
    }

    // Verifies: PROTO-27
    #[tokio::test(start_paused = true)]
    async fn streamed_text_is_merged_and_never_overtaken_or_left_behind() {
        let (outbox, mut rx) = crate::transport::outbox();
        let updates = Updates::new("s1".to_owned(), outbox);
        // The first delta is written at once.
        updates.send(text("Hel"));
        assert_eq!(queued(&mut rx), [("agentText".into(), "Hel".into())]);
        // Deltas within the interval are held ...
        updates.send(text("lo, "));
        updates.send(text("world"));
        assert_eq!(queued(&mut rx), []);
        // ... and written, merged, before an update of another kind.
        updates.send(Update::ToolCall {
            call_id: "call_1".into(),
            tool: "read_file".into(),
            why: "asked".into(),
            routing: serde_json::json!({}),
        });
        let after_call = queued(&mut rx);
        assert_eq!(after_call.len(), 2, "{after_call:?}");
        assert_eq!(after_call[0], ("agentText".into(), "lo, world".into()));
        assert_eq!(after_call[1].0, "toolCall");
        // Held text with nothing after it is written once the interval has passed.
        updates.send(text("more"));
        assert_eq!(queued(&mut rx), []);
        tokio::time::sleep(TEXT_INTERVAL * 2).await;
        assert_eq!(queued(&mut rx), [("agentText".into(), "more".into())]);
        // A flush (before a question) writes what is held at once.
        updates.send(text("a"));
        updates.send(text("b"));
        updates.flush();
        let flushed = queued(&mut rx);
        assert_eq!(flushed.concat_text(), "ab", "{flushed:?}");
        // Thousands of deltas in one interval become one notification per batch of bytes.
        tokio::time::sleep(TEXT_INTERVAL * 2).await;
        for _ in 0..20_000 {
            updates.send(text("abcd"));
        }
        updates.send(Update::TurnEnded {
            stop_reason: bravebot_core::screen::StopReason::EndTurn,
        });
        let burst = queued(&mut rx);
        let texts: Vec<_> = burst.iter().filter(|(k, _)| k == "agentText").collect();
        assert!(
            texts.len() <= 20_000 * 4 / TEXT_BATCH_BYTES + 2,
            "{}",
            texts.len()
        );
        assert_eq!(burst.concat_text().len(), 80_000);
        assert_eq!(burst.last().map(|(k, _)| k.as_str()), Some("turnEnded"));
    }

    trait ConcatText {
        fn concat_text(&self) -> String;
    }

    impl ConcatText for Vec<(String, String)> {
        fn concat_text(&self) -> String {
            self.iter().map(|(_, t)| t.as_str()).collect()
        }
    }

    fn question(kind: QuestionKind, subject: Subject) -> Question {
        Question {
            asker: None,
            kind,
            title: "Show the agent the output of cat notes?".into(),
            why: None,
            subject,
            options: Vec::new(),
        }
    }

    // Verifies: PROTO-21, REL-1
    #[test]
    fn a_message_box_shows_a_release_whole_and_pictured_and_is_not_used_for_one_it_cannot_hold() {
        let mut text = String::from("one\u{1b}[2J\tline\r\n\u{202e}txt.exe\n");
        for i in 3..=20 {
            text.push_str(&format!("line {i}\n"));
        }
        let q = question(
            QuestionKind::ReadOutput,
            Subject {
                content: Some(Labelled::new(text.clone(), Label::UNTRUSTED_PRIVATE)),
                origin: Some("the output of cat notes".into()),
                ..Subject::default()
            },
        );
        let Fallback::Ask(message) = fallback(&q) else {
            panic!("a release that fits a box is asked about");
        };
        expect_test::expect![[r#"
            Show the agent the output of cat notes?
            From: the output of cat notes
            The content:
            one␛[2J␉line␍
            \u{202e}txt.exe
            line 3
            line 4
            line 5
            line 6
            line 7
            line 8
            line 9
            line 10
            line 11
            line 12
            line 13
            line 14
            line 15
            line 16
            line 17
            line 18
            line 19
            line 20
        "#]]
        .assert_eq(&message);
        // One line more than a box shows: kept back without asking, and the person told why.
        text.push_str("line 21\n");
        let q = question(
            QuestionKind::ReadOutput,
            Subject {
                content: Some(Labelled::new(text, Label::UNTRUSTED_PRIVATE)),
                origin: Some("the output of cat notes".into()),
                ..Subject::default()
            },
        );
        match fallback(&q) {
            Fallback::Refuse(why) => assert!(
                why.contains(
                    "kept the output of cat notes from the agent without asking: it is 21 lines"
                ) && why.contains("a yes would let the agent read all of it"),
                "{why}"
            ),
            other => panic!("{other:?}"),
        }
        // A long single line is measured by bytes.
        let q = question(
            QuestionKind::VetContent,
            Subject {
                content: Some(Labelled::new("é".repeat(3_000), Label::UNTRUSTED_PUBLIC)),
                ..Subject::default()
            },
        );
        match fallback(&q) {
            Fallback::Refuse(why) => assert!(why.contains("(6000 bytes)"), "{why}"),
            other => panic!("{other:?}"),
        }
    }

    // Verifies: PROTO-21
    #[test]
    fn a_message_box_is_asked_about_a_short_trusted_diff_and_never_an_untrusted_or_long_one() {
        let diff = |text: String, label: Label| {
            question(
                QuestionKind::Write,
                Subject {
                    path: Some("a.txt".into()),
                    diff: Some(Labelled::new(text, label)),
                    ..Subject::default()
                },
            )
        };
        let short = "--- a.txt\n+++ a.txt\n@@ -0,0 +1 @@\n+hello\u{7}\n".to_string();
        match fallback(&diff(short.clone(), Label::TRUSTED_PRIVATE)) {
            Fallback::Ask(m) => assert!(
                m.ends_with("The change:\n--- a.txt\n+++ a.txt\n@@ -0,0 +1 @@\n+hello␇\n"),
                "{m}"
            ),
            other => panic!("{other:?}"),
        }
        match fallback(&diff(short, Label::UNTRUSTED_PRIVATE)) {
            Fallback::Refuse(why) => assert!(
                why.contains("a.txt") && why.contains("nobody vouched for the file"),
                "{why}"
            ),
            other => panic!("{other:?}"),
        }
        let long: String = (0..60).map(|i| format!("+line {i}\n")).collect();
        match fallback(&diff(long, Label::TRUSTED_PUBLIC)) {
            Fallback::Refuse(why) => assert!(
                why.contains("too long") && why.contains("60 lines"),
                "{why}"
            ),
            other => panic!("{other:?}"),
        }
    }

    // Verifies: PROTO-20
    #[test]
    fn question_ids_are_128_random_bits_in_hex_and_never_repeat() {
        let ids: Vec<String> = (0..64).filter_map(|_| new_question_id()).collect();
        assert_eq!(ids.len(), 64);
        for id in &ids {
            assert!(
                id.len() == 32 && id.chars().all(|c| c.is_ascii_hexdigit()),
                "{id}"
            );
        }
        let distinct: std::collections::HashSet<&String> = ids.iter().collect();
        assert_eq!(distinct.len(), ids.len());
    }
}
