//! The person's screen in an editor: session updates as notifications, questions as
//! `bravebot/session/requestPermission` (or `window/showMessageRequest` for a client that did not
//! declare the bravebot permissions capability), answerable also through code actions and the
//! `bravebot.answer` command. The first answer wins; anything but a clear selection refuses.

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use bravebot_core::kernel::policy;
use bravebot_core::session::{Answer, BoxFuture, CheckState, Question, Screen, Update};
use serde_json::Value;
use tokio::sync::oneshot;
use tower_lsp_server::Client;
use tower_lsp_server::ls_types::{MessageActionItem, MessageType};

use crate::protocol::{
    self, HunkRange, Outcome, PermissionOption, PermissionReply, RequestPermission,
    RequestPermissionParams, SessionUpdate, TodoItem, UpdateNotification,
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
    answer: oneshot::Sender<Answer>,
}

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
    /// Registers a question under a fresh unguessable id, or gives it back when no id could be
    /// made.
    fn register(&self, mut pending: Pending) -> Result<String, Pending> {
        let Some(id) = new_question_id() else {
            return Err(pending);
        };
        pending.order = self.next.fetch_add(1, Ordering::Relaxed);
        self.lock().insert(id.clone(), pending);
        Ok(id)
    }

    /// Delivers an answer. Returns false when the question is not pending any more (answered
    /// already, withdrawn, or never put): later answers are ignored.
    pub fn answer(&self, question_id: &str, answer: Answer) -> bool {
        match self.lock().remove(question_id) {
            Some(p) => p.answer.send(answer).is_ok(),
            None => false,
        }
    }

    fn withdraw(&self, question_id: &str) {
        self.lock().remove(question_id);
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

/// Removes a question from the registry when the turn stops waiting for it.
struct Withdraw<'a>(&'a Questions, String);

impl Drop for Withdraw<'_> {
    fn drop(&mut self) {
        self.0.withdraw(&self.1);
    }
}

pub struct LspScreen {
    pub session_id: String,
    client: Client,
    updates: Outbox,
    questions: Arc<Questions>,
    permissions: bool,
    interactive: bool,
}

impl LspScreen {
    pub fn new(
        session_id: String,
        client: Client,
        updates: Outbox,
        questions: Arc<Questions>,
        permissions: bool,
        interactive: bool,
    ) -> LspScreen {
        LspScreen {
            session_id,
            client,
            updates,
            questions,
            permissions,
            interactive,
        }
    }
}

impl Screen for LspScreen {
    fn update(&self, update: Update) {
        let params = UpdateNotification {
            session_id: self.session_id.clone(),
            update: wire_update(update),
        };
        match serde_json::to_value(params) {
            Ok(v) => self.updates.notify(protocol::method::SESSION_UPDATE, v),
            Err(e) => tracing::error!("update not serialised: {e}"),
        }
    }

    fn ask(&self, question: Question) -> BoxFuture<'_, Answer> {
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
                answer: tx,
            });
            let Ok(question_id) = registered else {
                tracing::error!(
                    "no random question id could be made, so the question was refused unasked"
                );
                return Answer::Refused;
            };
            let _withdraw = Withdraw(&self.questions, question_id.clone());
            let client = self.client.clone();
            let questions = self.questions.clone();
            if self.permissions {
                let params = wire_question(&self.session_id, &question_id, &question, options);
                let qid = question_id.clone();
                tokio::spawn(async move {
                    let reply = match serde_json::to_value(params) {
                        Ok(p) => client.send_request::<RequestPermission>(p).await,
                        Err(_) => Err(tower_lsp_server::jsonrpc::Error::internal_error()),
                    };
                    questions.answer(&qid, read_reply(reply.ok()));
                });
            } else {
                let message = fallback_message(&question);
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
                });
            }
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

fn fallback_message(q: &Question) -> String {
    let mut m = q.title.clone();
    if let Some(path) = &q.subject.path {
        m.push_str(&format!("\n{path}"));
    }
    for step in &q.subject.plan {
        m.push_str(&format!("\n{step}"));
    }
    if let Some(host) = &q.subject.host {
        m.push_str(&format!("\nhost: {host}"));
    }
    if let Some(notice) = &q.subject.notice {
        m.push_str(&format!("\n{notice}"));
    }
    if let Some(question) = &q.subject.question {
        m.push_str(&format!("\n{question}"));
    }
    if let Some(v) = q.subject.verdict {
        m.push_str(&format!("\nThe check said: {}", v.as_str()));
    }
    m
}

fn wire_question(
    session_id: &str,
    question_id: &str,
    q: &Question,
    options: Vec<PermissionOption>,
) -> RequestPermissionParams {
    let s = &q.subject;
    RequestPermissionParams {
        session_id: session_id.to_string(),
        question_id: question_id.to_string(),
        kind: q.kind.as_str(),
        title: q.title.clone(),
        why: q.why.clone(),
        subject: protocol::Subject {
            path: s.path.clone(),
            uri: s.uri.clone(),
            // The screen is one of the places untrusted bytes may go.
            content: s.content.as_ref().map(|c| policy::to_screen(c).clone()),
            verdict: s.verdict.map(|v| v.as_str()),
            verdict_text: s
                .verdict_text
                .as_ref()
                .map(|t| policy::to_screen(t).clone()),
            origin: s.origin.clone(),
            question: s.question.clone(),
            header: s.header.clone(),
            multiple: s.multiple,
            diff: s.diff.as_ref().map(|d| policy::to_screen(d).clone()),
            original: s.original.as_ref().map(|d| policy::to_screen(d).clone()),
            proposed: s.proposed.as_ref().map(|d| policy::to_screen(d).clone()),
            hunks: wire_hunks(q),
            plan: s.plan.clone(),
            command: s.command.clone(),
            notice: s.notice.clone(),
            url: s.url.clone(),
            host: s.host.clone(),
        },
        options,
    }
}

pub fn wire_update(update: Update) -> SessionUpdate {
    match update {
        Update::AgentText { delta } => SessionUpdate::AgentText { delta },
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
            origin,
            lines: reference.lines,
            bytes: reference.bytes,
            label: reference.label.to_string(),
        },
        // The screen is one of the places untrusted bytes may go.
        Update::Remark { text } => SessionUpdate::Remark {
            text: policy::to_screen(&text).clone(),
        },
        Update::Check {
            state: CheckState::Started { lines },
        } => SessionUpdate::Check {
            state: "started",
            lines: Some(lines),
            completed: None,
        },
        Update::Check {
            state: CheckState::Ended { completed },
        } => SessionUpdate::Check {
            state: "ended",
            lines: None,
            completed: Some(completed),
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
    }
}

#[cfg(test)]
mod tests {
    use super::*;

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
