//! The words a session speaks with the person: what a turn shows ([`Update`]), what it asks
//! ([`Question`], with its [`Subject`] and options) and how the person answers ([`Answer`]), through
//! the person's side of a session ([`Screen`]). They stand below everything that speaks them: the
//! session, the turn, every tool and the server.

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;

use serde_json::Value;

use crate::kernel::labelled::Labelled;
use crate::kernel::policy::Verdict;
use crate::kernel::slot::Reference;
use crate::kernel::trust::Approved;

pub type BoxFuture<'a, T> = Pin<Box<dyn Future<Output = T> + Send + 'a>>;

/// Why a turn ended (CONTRACT §3 `stopReason`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum StopReason {
    EndTurn,
    Cancelled,
    MaxRounds,
    Error(String),
}

impl StopReason {
    pub fn as_str(&self) -> &'static str {
        match self {
            StopReason::EndTurn => "endTurn",
            StopReason::Cancelled => "cancelled",
            StopReason::MaxRounds => "maxRounds",
            StopReason::Error(_) => "error",
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ToolStatus {
    Ok,
    Error,
    Refused,
    /// The tool did its work and what it ran reported a failure (a run whose program exited
    /// non-zero, was killed, or never started).
    Failed,
}

impl ToolStatus {
    pub fn as_str(self) -> &'static str {
        match self {
            ToolStatus::Ok => "ok",
            ToolStatus::Error => "error",
            ToolStatus::Refused => "refused",
            ToolStatus::Failed => "failed",
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CheckState {
    /// A check began, over this many lines, or over a file (`picture` or `pdf`, with no lines).
    Started {
        lines: usize,
        file: Option<&'static str>,
    },
    /// It ended; `completed` is false when it failed. The verdict word is the gate's reading of
    /// the reply (never the check's sentence): for the person's screen only, no model reads it.
    Ended {
        completed: bool,
        verdict: crate::kernel::policy::Verdict,
    },
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Todo {
    pub content: String,
    pub status: String,
}

/// What one model call cost, as its endpoint reported it (USAGE-1).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct CallTokens {
    pub input: u64,
    pub output: u64,
    pub cached_input: Option<u64>,
    /// Of `input`, written to the endpoint's cache, where it said (USAGE-8).
    pub cache_write_input: Option<u64>,
}

/// The calls of one kind summed: how many, how many of them the endpoint reported nothing for,
/// the tokens of those it did, and their cost where every one of them had a price.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Tally {
    pub calls: u64,
    pub unreported: u64,
    pub input: u64,
    pub output: u64,
    pub cached_input: u64,
    /// Of `input`, written to the endpoint's cache (USAGE-8).
    pub cache_write_input: u64,
    /// Reported calls made with a model the person gave a price for.
    pub priced: u64,
    /// Their cost, in millionths of a dollar times a million tokens: exact until shown.
    pub cost_micros_per_million: u128,
}

impl Tally {
    /// The money these calls cost in US dollars, where every call that reported usage had a
    /// price (USAGE-6); `None` where any had none, or none reported.
    pub fn cost_usd(&self) -> Option<f64> {
        let reported = self.calls - self.unreported;
        (reported > 0 && self.priced == reported)
            .then(|| self.cost_micros_per_million as f64 / 1e12)
    }
}

/// What the session's model calls cost so far, split as the person weighs them (USAGE-4): the
/// planner's (and its delegates') work, and protection's (the checks and the processors).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct UsageTotals {
    pub planner: Tally,
    pub protection: Tally,
}

/// The meter as it stands: the planner's context in use against its limit, the turn's totals and
/// the session's (USAGE-5).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Meter {
    /// The tokens the planner's last call held (its request and its reply), where the endpoint
    /// reported them; `None` before any, or when the last call reported nothing.
    pub context_tokens: Option<u64>,
    /// The context the driver holds a planner request to, once known.
    pub context_limit: Option<u64>,
    /// How many times this session the planner's conversation was compacted to fit its budget:
    /// each time, the requests after it no longer begin with the ones before (MODEL-11).
    pub compactions: u64,
    pub turn: UsageTotals,
    pub session: UsageTotals,
}

/// What the person is shown while a turn runs.
#[derive(Clone, Debug)]
pub enum Update {
    AgentText {
        delta: String,
    },
    ToolCall {
        call_id: String,
        tool: String,
        why: String,
        routing: Value,
    },
    ToolResult {
        call_id: String,
        status: ToolStatus,
        summary: String,
    },
    Quarantined {
        reference: Reference,
        origin: String,
    },
    /// A processor's remark: for the person only, reaching no model and no file. Untrusted.
    Remark {
        text: Labelled<String>,
    },
    /// The server's own words to the person about the session (a question that timed out,
    /// checkpoints dropped): written by the driver alone, so drawn as the server's, never in the
    /// frame that marks words nobody vouched for (PROTO-38). Reaches no model and no file.
    Notice {
        text: String,
    },
    /// A file held back from the planner because a check judged its bytes unsafe, for the
    /// person's screen only (JUDGE-8): the file as shown, the verdict, and the check's own
    /// reasons, untrusted. Sent whether or not a question about the file follows.
    HeldBack {
        path: String,
        verdict: Verdict,
        reasons: Option<Labelled<String>>,
    },
    Check {
        state: CheckState,
        /// The delegate whose check it is, `None` for the turn's: set by the delegate's screen
        /// (the innermost one of a nested delegate's), so an editor draws it in that delegate's
        /// place (DELEG-71).
        delegate: Option<u32>,
    },
    /// What a finished run printed on one stream, for the person's screen only: it is sent during
    /// the tool call announced last, reaches no model and no file, and is untrusted unless every
    /// step of the run was vouched for. `text` is bounded (its middle left out past a cap, with a
    /// marker); `bytes` is the size of what the run kept of the stream.
    RunOutput {
        stream: &'static str,
        text: Labelled<String>,
        bytes: usize,
    },
    Plan {
        todos: Vec<Todo>,
    },
    TurnEnded {
        stop_reason: StopReason,
    },
    /// A checkpoint was made: the workspace before a turn (sent just before its `TurnEnded`) or
    /// before a restore, with the workspace-relative paths that turn or restore changed.
    Checkpoint {
        checkpoint_id: String,
        files: Vec<String>,
    },
    /// One model call ended (USAGE-4): who made it (`X-Bravebot-Role`'s word), what its endpoint
    /// reported (`None`: nothing), and the meter after it. Counts only, for the person's screen:
    /// no planner reads them.
    Usage {
        role: &'static str,
        call: Option<CallTokens>,
        /// Boxed: the meter is the largest thing an update carries, and every update is moved.
        meter: Box<Meter>,
    },
    /// Auto-vetting turned on or off while the session runs (the standing key, an editor's
    /// command), with the switch that decided it: drawn in the chat where it happened, as the
    /// banner a session that opened with the mode on draws at its top (VET-23).
    AutoVetting {
        on: bool,
        source: &'static str,
    },
    /// Where a delegate stands, for the person's screen only (DELEG-60): sent when it starts
    /// (`running`), when a question of its own waits on the person (`waiting`) and is answered
    /// (`running` again), and when it ends (`done`, `failed` or `cancelled`, with how it stopped
    /// and its report, labelled by the delegate's own context).
    Delegate {
        number: u32,
        name: String,
        depth: u32,
        state: &'static str,
        /// The first line of what it was started on.
        about: String,
        stop_reason: Option<StopReason>,
        report: Option<Labelled<String>>,
    },
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum QuestionKind {
    TrustRead,
    AskUser,
    Edit,
    Write,
    Run,
    ReadOutput,
    Fetch,
    LspStart,
    VetContent,
    Delegate,
    McpStart,
    McpTools,
    McpCall,
    /// A restore would replace what the person changed after the agent did.
    Restore,
}

impl QuestionKind {
    pub fn as_str(self) -> &'static str {
        match self {
            QuestionKind::TrustRead => "trustRead",
            QuestionKind::AskUser => "askUser",
            QuestionKind::Edit => "edit",
            QuestionKind::Write => "write",
            QuestionKind::Run => "run",
            QuestionKind::ReadOutput => "readOutput",
            QuestionKind::Fetch => "fetch",
            QuestionKind::LspStart => "lspStart",
            QuestionKind::VetContent => "vetContent",
            QuestionKind::Delegate => "delegate",
            QuestionKind::McpStart => "mcpStart",
            QuestionKind::McpTools => "mcpTools",
            QuestionKind::McpCall => "mcpCall",
            QuestionKind::Restore => "restore",
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum OptionKind {
    AllowOnce,
    AllowAlways,
    RejectOnce,
    RejectAlways,
}

impl OptionKind {
    pub fn as_str(self) -> &'static str {
        match self {
            OptionKind::AllowOnce => "allow_once",
            OptionKind::AllowAlways => "allow_always",
            OptionKind::RejectOnce => "reject_once",
            OptionKind::RejectAlways => "reject_always",
        }
    }

    pub fn approves(self) -> bool {
        matches!(self, OptionKind::AllowOnce | OptionKind::AllowAlways)
    }
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct QuestionOption {
    pub id: String,
    pub name: String,
    pub kind: OptionKind,
}

/// What a person needs to decide. Labelled fields are drawn inside the margin a client puts
/// round anything nobody vouched for.
#[derive(Clone, Debug, Default)]
pub struct Subject {
    /// Workspace-relative.
    pub path: Option<String>,
    /// Absolute `file://` URI.
    pub uri: Option<String>,
    pub content: Option<Labelled<String>>,
    /// The check's word, when one ran.
    pub verdict: Option<Verdict>,
    /// The check's own sentence: untrusted like the content it describes.
    pub verdict_text: Option<Labelled<String>>,
    /// Where the content came from, in plain words.
    pub origin: Option<String>,
    /// For `askUser`: the question itself, trusted (the planner wrote it in a clean context).
    pub question: Option<String>,
    pub header: Option<String>,
    pub multiple: bool,
    /// For `edit` and `write`: the unified diff, the whole original and the whole proposal, and
    /// the hunks (0-based line ranges of the original) the person may accept one by one.
    pub diff: Option<Labelled<String>>,
    /// Shared with the proposal: the question holds no copy of either text.
    pub original: Option<Labelled<Arc<String>>>,
    pub proposed: Option<Labelled<Arc<String>>>,
    /// What the agent's turn left in the file (a `restore` question's third version).
    pub agent: Option<Labelled<Arc<String>>>,
    /// The version of the open buffer the original was read from, when it was one: an editor
    /// holding that version holds the original itself (WRITE-61).
    pub version: Option<i32>,
    pub hunks: Vec<crate::kernel::proposal::Hunk>,
    /// For `run`: the compiled plan, one line a step, argument boundaries visible; and the line
    /// the planner wrote, as context.
    pub plan: Vec<String>,
    pub command: Option<String>,
    /// Something the person must know to decide, in plain words (programs are not confined).
    pub notice: Option<String>,
    /// For `fetch`: the URL as asked for, and on its own the host as the URL parser reads it.
    pub url: Option<String>,
    pub host: Option<String>,
    /// For a picture or a PDF: the private copy of exactly the bytes read, for the person to open
    /// in their own viewer (PIC-4).
    pub copy: Option<FileCopy>,
}

/// A private copy of a file the person opens in their own viewer: its absolute path (readable
/// only by their account, removed when the question closes), its media type and size.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FileCopy {
    pub path: String,
    pub media_type: String,
    pub bytes: u64,
}

#[derive(Clone, Debug)]
pub struct Question {
    pub kind: QuestionKind,
    pub title: String,
    pub why: Option<String>,
    /// The delegate that puts the question, `None` for the turn's own. Only a delegate's screen
    /// sets it, from its seat (`Asker` cannot be made elsewhere): the planner writes
    /// `why`, so a name inside `why` proves nothing (DELEG-70).
    pub asker: Option<Asker>,
    pub subject: Subject,
    pub options: Vec<QuestionOption>,
}

impl OptionKind {
    /// Whether an answer with it lasts past this question (`allow_always`, `reject_always`).
    pub fn lasts(self) -> bool {
        matches!(self, OptionKind::AllowAlways | OptionKind::RejectAlways)
    }
}

/// The one question builder (REL-7): every question a tool or the session puts is made here, so
/// its options, notice, check verdict and cut notice are added one way, and the caller only names
/// them: `Question::approve(kind, title).why(..).subject(..).allow_once(id, words).reject(id,
/// words)`. The asker is left for a delegate's screen to set (DELEG-70). What became of the
/// question is written to the audit trail by `tools::questions`.
impl Question {
    /// A question of `kind` titled `title`, with no subject and no options yet.
    pub fn approve(kind: QuestionKind, title: impl Into<String>) -> Question {
        Question {
            kind,
            title: title.into(),
            why: None,
            asker: None,
            subject: Subject::default(),
            options: Vec::new(),
        }
    }

    /// The planner's one line of why, when it wrote one (an empty one is none).
    pub fn why(mut self, why: &str) -> Question {
        self.why = Some(why.to_string()).filter(|w| !w.is_empty());
        self
    }

    /// `why` as the caller already holds it.
    pub fn why_given(mut self, why: Option<String>) -> Question {
        self.why = why;
        self
    }

    /// What the person decides about. Set it before [`Question::notice`] and
    /// [`Question::checked`], which write into it.
    pub fn subject(mut self, subject: Subject) -> Question {
        self.subject = subject;
        self
    }

    /// Something the person must know to decide, in plain words.
    pub fn notice(mut self, notice: impl Into<String>) -> Question {
        self.subject.notice = Some(notice.into());
        self
    }

    /// The notice, then what a preview leaves out (`cut`), either of which may be absent: a
    /// question that shows part of what a yes covers says so after its own notice (REL-2).
    pub fn notice_and_cut(mut self, notice: Option<String>, cut: Option<String>) -> Question {
        self.subject.notice = match (notice, cut) {
            (Some(n), Some(c)) => Some(format!("{n} {c}")),
            (n, c) => n.or(c),
        };
        self
    }

    /// The check's verdict on what the question shows, and its own sentence (untrusted).
    pub fn checked(
        mut self,
        verdict: Option<Verdict>,
        reasons: Option<Labelled<String>>,
    ) -> Question {
        self.subject.verdict = verdict;
        self.subject.verdict_text = reasons;
        self
    }

    fn option(
        mut self,
        id: impl Into<String>,
        name: impl Into<String>,
        kind: OptionKind,
    ) -> Question {
        self.options.push(QuestionOption {
            id: id.into(),
            name: name.into(),
            kind,
        });
        self
    }

    /// An option that approves this once.
    pub fn allow_once(self, id: impl Into<String>, name: impl Into<String>) -> Question {
        self.option(id, name, OptionKind::AllowOnce)
    }

    /// An option that approves this and what is like it for the rest of the session.
    pub fn allow_always(self, id: impl Into<String>, name: impl Into<String>) -> Question {
        self.option(id, name, OptionKind::AllowAlways)
    }

    /// An option that approves, lasting the session when `lasts`.
    pub fn allow(self, id: impl Into<String>, name: impl Into<String>, lasts: bool) -> Question {
        if lasts {
            self.allow_always(id, name)
        } else {
            self.allow_once(id, name)
        }
    }

    /// An option that refuses this once.
    pub fn reject(self, id: impl Into<String>, name: impl Into<String>) -> Question {
        self.option(id, name, OptionKind::RejectOnce)
    }

    /// An option that refuses this for the rest of the session.
    pub fn reject_always(self, id: impl Into<String>, name: impl Into<String>) -> Question {
        self.option(id, name, OptionKind::RejectAlways)
    }

    /// The first option answering like `approves` for this once only: what a scripted screen
    /// picks, by the options' kinds, never by what the question shows.
    pub fn first_once(&self, approves: bool) -> Option<&QuestionOption> {
        self.options
            .iter()
            .find(|o| o.kind.approves() == approves && !o.kind.lasts())
    }
}

/// A person's answer. Anything that is not a selection of an offered approving option refuses.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Answer {
    Selected {
        option_id: String,
        /// An `askUser` answer in the person's own words.
        text: Option<String>,
        /// For `edit`/`write`: the hunks the person accepted, when not all of them.
        accepted_hunks: Option<Vec<usize>>,
        /// For `edit`/`write`: the person's own version of the proposal, which lands instead.
        edited_text: Option<String>,
    },
    /// Cancelled, unreadable, an error reply, nobody there: all the same, a refusal.
    Refused,
    /// Nobody answered within `questions.timeoutSeconds` (this many seconds): a refusal, which
    /// the audit trail and the person's screen name as a timeout (ATTN-1).
    TimedOut { seconds: u64 },
}

impl Answer {
    /// A plain selection of one option.
    pub fn select(option_id: impl Into<String>) -> Answer {
        Answer::Selected {
            option_id: option_id.into(),
            text: None,
            accepted_hunks: None,
            edited_text: None,
        }
    }

    /// The option an answer selected, if the question offered it.
    pub fn chosen<'q>(&self, question: &'q Question) -> Option<&'q QuestionOption> {
        self.chosen_among(&question.options)
    }

    /// [`Answer::chosen`], among the options a question offered.
    pub fn chosen_among<'q>(&self, offered: &'q [QuestionOption]) -> Option<&'q QuestionOption> {
        match self {
            Answer::Selected { option_id, .. } => offered.iter().find(|o| &o.id == option_id),
            Answer::Refused | Answer::TimedOut { .. } => None,
        }
    }

    /// Whether this answer approves: a selected, offered, approving option.
    pub fn approves(&self, question: &Question) -> bool {
        self.chosen(question).is_some_and(|o| o.kind.approves())
    }

    /// The person's yes to `question`, as the proof a vouch needs ([`crate::kernel::trust::Gesture`]);
    /// `None` for anything else.
    pub fn approval(&self, question: &Question) -> Option<Approved> {
        self.approves(question).then(Approved::by_the_person)
    }
}

/// The person's side of a session.
pub trait Screen: Send + Sync {
    fn update(&self, update: Update);
    /// Puts a question and waits for the answer. Implementations answer [`Answer::Refused`] for
    /// anything but a clear selection.
    fn ask(&self, question: Question) -> BoxFuture<'_, Answer>;
    /// Whether anybody is watching. When nobody is, questions are refused without being put.
    fn interactive(&self) -> bool;
    /// The session was given its title, the first line of the person's first prompt (SESS-1),
    /// once, as that prompt's turn starts. A front that shows a session's title says so (ACP's
    /// `session_info_update`); the others list it from the record and have nothing to do here.
    /// A screen that wraps another passes it on.
    fn titled(&self, _title: &str) {}
}

/// Which delegate puts a question (DELEG-70). Its fields are private and [`Asker::new`] is the
/// crate's own, made only by a delegate's screen from its seat (a tidy test in `delegate.rs`
/// holds every other module to that), so nothing a planner writes can name an asker.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Asker {
    number: u32,
    kind: String,
}

impl Asker {
    /// Made by a delegate's screen alone, from its seat.
    pub(crate) fn new(number: u32, kind: String) -> Asker {
        Asker { number, kind }
    }

    /// Its number in the turn.
    pub fn number(&self) -> u32 {
        self.number
    }

    /// Its kind, or the definition it was started from.
    pub fn kind(&self) -> &str {
        &self.kind
    }

    /// `delegate N (kind)`, as the audit trail and the screen name it.
    pub fn label(&self) -> String {
        format!("delegate {} ({})", self.number, self.kind)
    }
}

/// The session's screen, putting one question at a time: a delegate's question waits while
/// another's, or the turn's, is open (DELEG-9). Every question of a session and of its delegates
/// passes here once, so this is where `questions.timeoutSeconds` is kept (ATTN-1): the clock
/// starts when the question is put to the person, not while it waits its turn behind another,
/// and a question nobody answered in time is taken back from the screen (dropping the screen's
/// wait withdraws it, so an answer after that is refused) and refused, the person told why.
pub struct OneAtATime {
    inner: Arc<dyn Screen>,
    one: tokio::sync::Mutex<()>,
    timeout: Option<std::time::Duration>,
}

impl OneAtATime {
    pub fn new(inner: Arc<dyn Screen>) -> OneAtATime {
        OneAtATime {
            inner,
            one: tokio::sync::Mutex::new(()),
            timeout: None,
        }
    }

    /// Refuses a question nobody answered within `seconds` (`questions.timeoutSeconds`).
    pub fn with_timeout(mut self, seconds: Option<u64>) -> OneAtATime {
        self.timeout = seconds.map(std::time::Duration::from_secs);
        self
    }
}

impl Screen for OneAtATime {
    fn update(&self, update: Update) {
        self.inner.update(update);
    }

    fn ask(&self, question: Question) -> BoxFuture<'_, Answer> {
        Box::pin(async move {
            let _one = self.one.lock().await;
            let Some(limit) = self.timeout else {
                return self.inner.ask(question).await;
            };
            let title = question.title.clone();
            match tokio::time::timeout(limit, self.inner.ask(question)).await {
                Ok(answer) => answer,
                Err(_) => {
                    let seconds = limit.as_secs();
                    self.inner.update(Update::Notice {
                        text: timed_out_notice(&title, seconds),
                    });
                    Answer::TimedOut { seconds }
                }
            }
        })
    }

    fn interactive(&self) -> bool {
        self.inner.interactive()
    }

    fn titled(&self, title: &str) {
        self.inner.titled(title);
    }
}

/// What the chat says of a question nobody answered in time (ATTN-2).
pub fn timed_out_notice(title: &str, seconds: u64) -> String {
    let title: String = title.split_whitespace().collect::<Vec<_>>().join(" ");
    format!(
        "Nobody answered \u{201c}{title}\u{201d} within {seconds} s (questions.timeoutSeconds), so it was refused; an answer now is refused too. The turn goes on."
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Mutex;
    use std::time::Duration;

    /// A person who answers a question titled `after N` after N seconds and never answers any
    /// other, and the updates their screen was sent.
    #[derive(Default)]
    struct Slow {
        remarks: Mutex<Vec<String>>,
    }

    impl Screen for Slow {
        fn update(&self, update: Update) {
            if let Update::Notice { text } = update {
                self.remarks.lock().expect("remarks").push(text);
            }
        }

        fn ask(&self, question: Question) -> BoxFuture<'_, Answer> {
            Box::pin(async move {
                match question.title.strip_prefix("after ") {
                    Some(n) => {
                        let seconds = n.parse().expect("a number of seconds");
                        tokio::time::sleep(Duration::from_secs(seconds)).await;
                        Answer::select("yes")
                    }
                    None => std::future::pending().await,
                }
            })
        }

        fn interactive(&self) -> bool {
            true
        }
    }

    fn question(title: &str) -> Question {
        Question::approve(QuestionKind::Run, title.to_owned())
    }

    // Verifies: ATTN-1, ATTN-2
    #[tokio::test(start_paused = true)]
    async fn a_question_is_timed_from_when_it_is_put_and_refused_when_nobody_answers() {
        let person = Arc::new(Slow::default());
        let screen = OneAtATime::new(person.clone()).with_timeout(Some(5));
        let start = tokio::time::Instant::now();
        // Answered in 4 s, within the 5: unaffected. The second waits behind it for those 4 s
        // and is timed from then, so it is refused at 9 s, not at 5.
        let (first, second) = tokio::join!(screen.ask(question("after 4")), async {
            let answer = screen.ask(question("Run\n  nobody?")).await;
            (answer, start.elapsed())
        });
        assert_eq!(first, Answer::select("yes"));
        assert_eq!(second.0, Answer::TimedOut { seconds: 5 });
        assert_eq!(second.1, Duration::from_secs(9));
        assert_eq!(
            *person.remarks.lock().expect("remarks"),
            [
                "Nobody answered \u{201c}Run nobody?\u{201d} within 5 s (questions.timeoutSeconds), so it was refused; an answer now is refused too. The turn goes on."
            ]
        );
        // A timeout is a refusal: it chooses no option.
        assert!(second.0.chosen(&question("x")).is_none());
        // Unset, a question waits as long as it takes.
        let screen = OneAtATime::new(person.clone());
        let waited =
            tokio::time::timeout(Duration::from_secs(3600), screen.ask(question("never"))).await;
        assert!(waited.is_err(), "still waiting after an hour");
    }
}
