//! `run`: a command line compiled into a plan, approved in the editor, run exactly as planned.
//!
//! The line is compiled by [`crate::cmdline::compile`]; a refused construct runs nothing and the
//! planner is told which span and why. What runs without a question: a plan the person allowed for
//! the session, a line the person's home-settings `run.allow` rules cover (bound to resolved
//! programs outside the places the person opened; `run/rules.rs`), and a line built only from the
//! read-only table (`run/readonly.rs`: an allow-list of options per program) over regular files the
//! person vouched for. A `run.deny` rule refuses without asking, whatever else matches (the
//! strictest wins). A line that writes a file or reads one through `<` is asked about every time.
//! What a run prints is quarantined unless every step was vouched for or remembered by the person,
//! and what a run approved once wrote through its arguments is marked untrusted (`run/outputs.rs`).

use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use serde_json::json;
use tokio_util::sync::CancellationToken;

use super::args::tool_args;
use super::content_trust;
use super::land::is_protected;
use super::{Call, ToolOutput, ToolSpec, confine};
use crate::cmdline::{Plan, SystemEnvironment, compile, masked};
use crate::jobs::Job;
use crate::kernel::audit::{Decision, Gate};
use crate::kernel::decide::{self, Decided, Why};
use crate::kernel::label::Label;
use crate::kernel::labelled::Labelled;
use crate::kernel::policy::{self, Fingerprint, PlannerText, Verdict};
use crate::kernel::slot::{Origin, Reference, human_size};
use crate::kernel::trust::Scope;
use crate::paths::{control_pictures, display_path};
use crate::process;
use crate::runner::{self, RunIo, RunReport};
use crate::screen::{Question, QuestionKind, Subject, ToolStatus, Update};
use crate::settings::Mode;

/// Seconds a foreground run waits when the planner names no deadline, and the most it may name.
pub const DEFAULT_DEADLINE: u64 = 300;
pub const MAX_DEADLINE: u64 = 3600;
/// Most bytes of each stream kept for a slot (head and tail); the result shows `run.maxOutput`.
const KEEP: usize = 16 * 1024 * 1024;

mod confined;
mod outputs;
mod readonly;
mod rules;

tool_args! {
    /// The arguments of `run`, as the planner is shown them and as a call is read.
    pub struct Args {
        command: required String as Routing = json!({"type": "string", "description": "one command line"});
        directory: optional String as Routing = json!({"type": "string", "description": "workspace-relative directory to run in; . by default"});
        deadline_seconds: optional u64 as Routing = json!({"type": "integer", "minimum": 1, "description": "how long to wait; 300 by default, at most 3600"});
        background: switch bool as Routing = json!({"type": "boolean", "description": "start it and return a job name instead of waiting"});
        stdin_ref: optional String as Routing = json!({"type": "string", "description": "a reference fed to the first program's standard input"});
        #[allow(dead_code)]
        read: switch bool as Routing = json!({"type": "boolean", "description": "ask for the output in this result; honoured only where questions are bypassed, which an editor session never does"});
    }
}

/// What the planner calls this tool.
pub const NAME: &str = "run";
/// The option of a run question that lets lines run confined unasked for the session.
const CONFINED_OPTION: &str = "confined";

pub fn spec() -> ToolSpec {
    ToolSpec {
        name: NAME,
        description: "Run one command line. It is compiled by bravebot's own grammar, never handed to a shell: \
quoting, globs, ~, braces, NAME=value, |, &&, ||, ;, groups and redirects work; $(...), backticks, $VAR, &, \
here-documents, eval/source/exec and control-flow words are refused. The person approves the compiled plan unless a \
rule already covers it. What it prints comes back as references unless every step was vouched for; use read_output \
to ask to see it.",
        args: Args::specs(),
    }
}

/// How a plan came to run, which decides what its output is labelled.
enum Endorsed {
    /// Asked and allowed once: the output is quarantined.
    Once,
    /// Remembered for the session, named by a `run.allow` rule, or read-only over vouched-for
    /// files: the output is trusted.
    Vouched(&'static str),
    /// Read-only programs over files a check passed as the disk held them, with the fingerprint
    /// of the bytes each check judged: the output is trusted only where the disk still holds
    /// exactly those bytes once the run has ended (RUNTOOL-15).
    Checked(Vec<(PathBuf, Fingerprint)>),
    /// Run confined by the kernel without a question (RUN-17): the output is quarantined.
    Confined(Arc<crate::sandbox::run::RunConfinement>),
}

pub async fn run(call: &Call<'_>) -> ToolOutput {
    let session = call.session;
    let Args {
        command: line,
        directory,
        deadline_seconds: deadline,
        background,
        stdin_ref,
        read: _,
    } = match Args::read(call) {
        Ok(args) => args,
        Err(e) => return ToolOutput::error(e),
    };
    let (line, directory, stdin_ref) = (
        line.as_str(),
        directory.as_deref().unwrap_or("."),
        stdin_ref.as_deref(),
    );
    let Ok(dir) = confine(session, directory) else {
        call.record(
            Gate::Promote,
            Decision::Refused,
            format!("run.directory {directory} is outside the places the person opened"),
        );
        return ToolOutput::refused(format!(
            "{directory} is outside the workspace and the directories the person added"
        ));
    };
    let dir = crate::workspace_file::real_path(&dir);
    if !dir.is_dir() {
        return ToolOutput::error(format!(
            "{} is not a directory",
            display_path(&session.cwd, &dir)
        ));
    }
    let plan = match compile(line, &SystemEnvironment::new(dir.clone())) {
        Ok(plan) => plan,
        Err(refusal) => {
            call.record(
                Gate::Promote,
                Decision::Refused,
                format!(
                    "run: the line was refused at bytes {:?} ({})",
                    refusal.span, refusal.construct
                ),
            );
            let span = line
                .get(refusal.span.clone())
                .map(masked)
                .unwrap_or_default();
            return ToolOutput::refused(format!(
                "nothing ran: `{span}` (bytes {}..{}) is {}: {}",
                refusal.span.start, refusal.span.end, refusal.construct, refusal.message
            ));
        }
    };
    // Every file the line writes is a write destination: confined, and asked about.
    for target in plan.writes() {
        if confine(session, &target.to_string_lossy()).is_err() {
            call.record(
                Gate::Promote,
                Decision::Refused,
                format!(
                    "run writes {} outside the places the person opened",
                    target.display()
                ),
            );
            return ToolOutput::refused(format!(
                "nothing ran: the line writes {}, outside the workspace and the directories the person added",
                target.display()
            ));
        }
    }
    let stdin = match stdin_ref {
        None => None,
        Some(raw) => match slot_content(call, raw) {
            Ok(content) => Some(content),
            Err(e) => return e,
        },
    };
    let fed = stdin.is_some();
    let endorsed = match endorse(call, line, &plan, fed, background).await {
        Ok(e) => e,
        Err(refusal) => return refusal,
    };
    // The output's label is fixed before anything runs: trusted only where every step was vouched
    // for and nothing untrusted is fed in.
    let stdin_label = stdin
        .as_ref()
        .map_or(Label::TRUSTED_PUBLIC, Labelled::label);
    let confinement = match &endorsed {
        Endorsed::Confined(c) => Some(c.clone()),
        _ => None,
    };
    let (label, how, checked) = match endorsed {
        Endorsed::Confined(_) => (Label::UNTRUSTED_PRIVATE, confined::TOUCHES, None),
        Endorsed::Vouched(how) => (Label::TRUSTED_PRIVATE.join(stdin_label), how, None),
        // A job's files cannot be compared once it has ended where nobody waits on it.
        Endorsed::Checked(_) if background => (
            Label::UNTRUSTED_PRIVATE,
            "read-only, its files checked, but run in the background, where they are not compared after it",
            None,
        ),
        Endorsed::Checked(files) => (
            Label::TRUSTED_PRIVATE.join(stdin_label),
            "read-only, its files checked",
            Some(files),
        ),
        Endorsed::Once => (
            Label::UNTRUSTED_PRIVATE,
            "approved once by the person",
            None,
        ),
    };
    let shown_line = masked(line);
    let (stdout, stderr) = (process::shared(KEEP), process::shared(KEEP));
    let io = RunIo {
        stdout: stdout.clone(),
        stderr: stderr.clone(),
        stdin: stdin.map(|s| policy::to_file_write(&s).to_vec()),
        withheld: call.session.withheld.clone(),
        confinement: confinement.clone(),
    };
    let deadline = Duration::from_secs(deadline.unwrap_or(DEFAULT_DEADLINE).clamp(1, MAX_DEADLINE));
    // The turn's checkpoint keeps what every file the line names holds before it runs (CKPT-7).
    let named = keep_named(call, &plan).await;
    let started = std::time::SystemTime::now();
    if background {
        return start_job(call, &shown_line, plan, io, label, stdout, stderr);
    }
    // What the run's arguments name is looked at before it starts, so a change it makes is seen.
    let before = (!label.is_trusted())
        .then(|| outputs::Before::take(outputs::candidates(&plan, &opened_places(call))));
    let since = confined::now();
    let report = runner::execute(&plan, io, call.cancel.clone(), deadline).await;
    note_unforeseen(call, &named, started).await;
    mark_writes(call, &plan, label, before.as_ref());
    if confinement.is_some() {
        mark_confined_writes(call, since).await;
    }
    // The check judged the disk's bytes before the run; if the disk holds other bytes now, the
    // program may have read bytes no check saw, so what it printed is quarantined.
    let (label, how) = match &checked {
        Some(files) if !still_on_disk(call, files).await => {
            call.record(
                Gate::Promote,
                Decision::Refused,
                "run: a file its check passed changed on disk before the run ended; its output is quarantined",
            );
            (
                Label::UNTRUSTED_PRIVATE,
                "read-only, but a file its check passed changed on disk before the run ended",
            )
        }
        _ => (label, how),
    };
    let out = kept(&stdout);
    let err = kept(&stderr);
    // A line approved once that could have been allowed for the session may still be, from the
    // question that shows what it printed (RUNTOOL-12).
    let rememberable =
        (plan.writes().is_empty() && plan.reads().is_empty() && !fed).then(|| plan.identity());
    let mut text = account(
        call,
        &shown_line,
        how,
        &report,
        label,
        (out, err),
        rememberable.as_deref(),
    );
    // A planner that ran git and got sealed output learns once that the same question may have
    // an answer it can read (GIT-9). The program is the resolved one, not the planner's word.
    let ran_git = plan.commands().iter().any(|c| c.name() == "git");
    if ran_git && !label.is_trusted() {
        text = PlannerText::driver(format!(
            "{}read_git answers log, show, diff, tags and search from a trusted repository's .git without starting git, and status where the whole working tree is trusted, and its answer is not sealed.\n",
            text.as_str()
        ));
    }
    // Every run's card says whether it was confined and what it could touch (RUN-18).
    let touched = if confinement.is_some() {
        confined::TOUCHES
    } else {
        confined::UNCONFINED
    };
    let mut output = ToolOutput::ok(
        text,
        format!("ran {shown_line}: {}; {touched}", report.summary()),
    );
    if report.failed() {
        output.status = ToolStatus::Failed;
    }
    output
}

/// Keeps, in the turn's checkpoint, what every file the plan's words or redirects name holds
/// before it runs, and returns those paths.
async fn keep_named(call: &Call<'_>, plan: &Plan) -> Vec<std::path::PathBuf> {
    let session = call.session;
    if !session.checkpoints.is_open() {
        return Vec::new();
    }
    let mut named = outputs::candidates(plan, &opened_places(call));
    named.extend(
        plan.writes()
            .iter()
            .map(|w| crate::workspace_file::real_path(w)),
    );
    named.sort();
    named.dedup();
    named.retain(|p| !p.is_dir());
    for path in &named {
        crate::checkpoint::before_change(session, &session.checkpoints, path).await;
    }
    named
}

/// Records, in the turn's checkpoint, the workspace files a run changed that its line did not
/// name: changed since `started`, found by a bounded walk of modification times (CKPT-7). What
/// they held before is not known, and a restore says so.
async fn note_unforeseen(
    call: &Call<'_>,
    named: &[std::path::PathBuf],
    started: std::time::SystemTime,
) {
    let session = call.session;
    if !session.checkpoints.is_open() {
        return;
    }
    let root = session.cwd.clone();
    let changed =
        tokio::task::spawn_blocking(move || crate::checkpoint::changed_since(&root, started))
            .await
            .unwrap_or_default();
    for path in changed {
        if !named.contains(&path) && !session.checkpoints.has(&path) {
            crate::checkpoint::unforeseen_change(&session.checkpoints, &path);
        }
    }
}

fn kept(c: &process::SharedCapture) -> Vec<u8> {
    c.lock().unwrap_or_else(|p| p.into_inner()).kept()
}

/// The bytes of a slot named by `stdin_ref`, refused for a tainted context or a name for nothing.
fn slot_content(call: &Call<'_>, raw: &str) -> Result<Labelled<Vec<u8>>, ToolOutput> {
    let id = call.reference("stdin_ref", raw)?;
    let state = call.session.state();
    state
        .quarantine
        .get(id)
        .map(|s| s.content().clone())
        .ok_or_else(|| ToolOutput::error(format!("{id} names nothing")))
}

/// Decides whether the plan runs: a deny rule, then the ways a plan runs unasked, then the person.
async fn endorse(
    call: &Call<'_>,
    line: &str,
    plan: &Plan,
    fed: bool,
    background: bool,
) -> Result<Endorsed, ToolOutput> {
    let session = call.session;
    let settings = &session.settings;
    let identity = plan.identity();
    if let Some(rule) = rules::denied(
        &settings.run_deny,
        line,
        plan,
        &crate::workspace_file::real_path(&session.cwd),
    ) {
        call.record(
            Gate::Promote,
            Decision::Refused,
            format!(
                "run: a run.deny rule ({}) refuses it",
                control_pictures(rule)
            ),
        );
        return Err(ToolOutput::refused(format!(
            "nothing ran: the person's run.deny rule `{}` refuses this line",
            control_pictures(rule)
        )));
    }
    let touches_files = !plan.writes().is_empty() || !plan.reads().is_empty();
    let mode = session.state().mode;
    // A context that met released content has no routing of its own: only the person answers
    // for its lines, one at a time (CTX-2).
    let person_only = call.person_only();
    let may_stand = !touches_files && !fed && !person_only;
    let places = opened_places(call);
    // The person's rules and the read-only table are read only for a line they may answer for.
    let (allow_rule, read_only) = if may_stand {
        (
            allowed_by_rule(call, plan, &places),
            read_only_over_vouched(call, plan, &places, &|_| false),
        )
    } else {
        (false, false)
    };
    let context = decide::Context {
        person_only,
        trusted_public: {
            let label = session.state().context.label();
            label.is_trusted() && label.is_public()
        },
    };
    // Whether the kernel could hold the line (RUN-17): looked at only for a line whose routing
    // is its own, the only kind that may run confined unasked or offer to.
    let mut cannot_confine = if !may_stand {
        Some(String::new())
    } else if background {
        // What it writes is marked once it has ended (RUN-19), and nobody waits for a job's end.
        Some(
            "it runs in the background, where what it writes cannot be looked at once it ends"
                .to_string(),
        )
    } else {
        confined::assess(
            &crate::workspace_file::real_path(&session.cwd),
            plan,
            &super::land::protected_names(),
        )
        .err()
    };
    let mut facts = decide::Run {
        identity: &identity,
        touches_files,
        fed,
        allow_rule,
        read_only,
        checked: None,
        plan_mode: mode == Mode::Plan,
        interactive: session.screen.interactive(),
        confined_setting: settings.run_confined,
        confinable: cannot_confine.is_none(),
    };
    // Files the line reads that a check did not clear, with the verdict: drawn on the question.
    let mut held = Vec::new();
    // Files a check passed as the disk held them, with the fingerprints of what it judged.
    let mut passed = Vec::new();
    let decided = loop {
        let decided = decide::run(&session.state().approvals, context, facts);
        if decided == Decided::Unasked(Why::Confined) {
            match confined::prepare(
                crate::workspace_file::real_path(&session.cwd),
                plan,
                super::land::protected_names(),
            )
            .await
            {
                Ok(confinement) => {
                    call.record(
                        Gate::Promote,
                        Decision::Allowed,
                        "run: confined by the kernel (run.confined)",
                    );
                    return Ok(Endorsed::Confined(confinement));
                }
                // The kernel could not hold it after all: decided again, as a line it cannot.
                Err(why) => {
                    cannot_confine = Some(why);
                    facts.confinable = false;
                    continue;
                }
            }
        }
        if decided != Decided::CheckFirst {
            break decided;
        }
        // Read-only programs over files nobody has vouched for yet: the files go through the
        // same helper a read uses, and if it passes every one the line runs as if they were
        // vouched for.
        passed = check_operands(call, plan, &places, &mut held).await;
        facts.checked = Some(
            !passed.is_empty()
                && read_only_over_vouched(call, plan, &places, &|p| {
                    passed.iter().any(|(q, _)| q == p)
                }),
        );
    };
    let remember = match decided {
        Decided::Unasked(why) => return Ok(unasked(call, why, passed)),
        Decided::Refuse(Why::PlanMode) => {
            call.record(
                Gate::Promote,
                Decision::Refused,
                "run: plan mode runs only read-only lines",
            );
            return Err(ToolOutput::refused(
                "the session is in plan mode, so only read-only lines over vouched-for files run; nothing ran",
            ));
        }
        // Nobody is watching (`CheckFirst` was answered above).
        Decided::Refuse(_) | Decided::CheckFirst => {
            call.record(
                Gate::Question,
                Decision::Refused,
                "run: nobody is watching to approve it",
            );
            return Err(ToolOutput::refused(
                "nobody is watching this run to approve the line, so nothing ran",
            ));
        }
        Decided::Ask { standing } => standing,
    };
    let mut plan_lines = plan.describe();
    for w in plan.writes() {
        if is_protected(w) {
            plan_lines.push(format!(
                "writes {}, which configures your tools",
                display_path(&session.cwd, w)
            ));
        }
    }
    // A check's verdict on a file the line reads is the person's to see before the line runs
    // (REL-3): the verdict word, and which file.
    let mut notice = String::from(
        "Programs are not confined: they run with your access to your files, the network and your credentials.",
    );
    let confined_on = settings.run_confined || session.state().approvals.confined_allowed();
    match &cannot_confine {
        Some(why) if confined_on && !why.is_empty() => {
            notice.push_str(&format!(" It cannot run confined: {why}."));
        }
        _ => {}
    }
    for (file, verdict) in &held {
        let file = control_pictures(file);
        notice.push_str(&match verdict {
            Verdict::Unsafe => format!(" A check judged {file}, which this line reads, UNSAFE."),
            _ => format!(" The check of {file}, which this line reads, did not complete."),
        });
    }
    let mut question = Question::approve(QuestionKind::Run, format!("Run {}?", masked(line)))
        .why(&call.why)
        .subject(Subject {
            path: Some(display_path(&session.cwd, plan.directory())),
            plan: plan_lines,
            command: Some(masked(line)),
            ..Subject::default()
        })
        .checked(
            held.iter().map(|(_, v)| *v).find(|v| *v == Verdict::Unsafe),
            None,
        )
        .notice(notice)
        .allow_once("once", "Run it once");
    if remember {
        question = super::release::standing_plan_option(question, "session");
    }
    // A line the kernel could hold may run confined, this one and every such line after it,
    // without a question for the rest of the session (RUN-17).
    let offer_confined = remember && cannot_confine.is_none() && !confined_on;
    if offer_confined {
        question = question.allow_always(
            CONFINED_OPTION,
            "Run lines confined, without asking, for this session (only the workspace, no network)",
        );
    }
    let question = question.reject("reject", "Don't run it");
    let asked = call
        .ask_recorded(question, |a| {
            a.said("run: the person approved the plan", "run: refused")
        })
        .await;
    if offer_confined && asked.id() == Some(CONFINED_OPTION) {
        session.state().approvals.person_allowed_confined();
        return match confined::prepare(
            crate::workspace_file::real_path(&session.cwd),
            plan,
            super::land::protected_names(),
        )
        .await
        {
            Ok(confinement) => Ok(Endorsed::Confined(confinement)),
            Err(why) => Err(ToolOutput::refused(format!(
                "the line could not be confined ({why}); nothing ran"
            ))),
        };
    }
    if asked.allowed_always() {
        session
            .state()
            .approvals
            .person_allowed_plan(identity, masked(line));
        Ok(Endorsed::Vouched("remembered"))
    } else if asked.approved() {
        Ok(Endorsed::Once)
    } else {
        Err(ToolOutput::refused(
            "the person did not approve the line; nothing ran",
        ))
    }
}

/// Records why a line runs without a question, and how its output is endorsed: a plan the person
/// remembered, the person's `run.allow` rules, or the read-only table over vouched-for files, or
/// over files a check passed (`passed`). [`decide::run`] decides which.
fn unasked(call: &Call<'_>, why: Why, passed: Vec<(PathBuf, Fingerprint)>) -> Endorsed {
    let (said, endorsed) = match why {
        Why::PlanAllowed => (
            "run: a plan the person allowed for the session",
            Endorsed::Vouched("remembered"),
        ),
        Why::AllowRule => (
            "run: the person's run.allow rules name it",
            Endorsed::Vouched("run.allow"),
        ),
        Why::ReadOnly => (
            "run: read-only programs over files the person vouched for",
            Endorsed::Vouched("read-only"),
        ),
        _ => (
            "run: read-only programs over files the person vouched for or a check passed",
            Endorsed::Checked(passed),
        ),
    };
    call.record(Gate::Promote, Decision::Allowed, said);
    endorsed
}

/// Whether the person's `run.allow` rules name the plan. Line rules are compiled where plans
/// are: in the workspace root with its links resolved.
fn allowed_by_rule(call: &Call<'_>, plan: &Plan, places: &readonly::Places) -> bool {
    let session = call.session;
    let root = crate::workspace_file::real_path(&session.cwd);
    let home = std::env::var_os("HOME").map(std::path::PathBuf::from);
    let allow: Vec<rules::AllowRule> = session
        .settings
        .run_allow
        .iter()
        .filter_map(|r| rules::AllowRule::read(r, &root, home.as_deref()))
        .collect();
    rules::allowed(&allow, plan, places)
}

/// Whether the disk still holds, for every file, exactly the bytes its check judged.
async fn still_on_disk(call: &Call<'_>, files: &[(PathBuf, Fingerprint)]) -> bool {
    for (real, judged) in files {
        let now = match crate::workspace_file::read_disk(
            call.session,
            real,
            crate::workspace_file::READ_LIMIT,
        )
        .await
        {
            Ok(contents) => Labelled::new(contents.bytes, Label::UNTRUSTED_PRIVATE),
            Err(_) => return false,
        };
        if policy::fingerprint(&now) != *judged {
            return false;
        }
    }
    true
}

/// Most files one read-only line may have checked before it runs; past it the line is asked.
const RUN_CHECK_CAP: usize = 16;

/// For a line every step of which is a read-only table program as written, reads each file
/// operand no rule covers from the disk (what the program will open, never an editor's buffer)
/// and judges it through the content-trust helper; returns the real paths it passed, each with
/// the fingerprint of the bytes judged.
async fn check_operands(
    call: &Call<'_>,
    plan: &Plan,
    places: &readonly::Places,
    held: &mut Vec<(String, Verdict)>,
) -> Vec<(PathBuf, Fingerprint)> {
    let files: Vec<std::path::PathBuf> = {
        let trust = call.session.trust.snapshot();
        let mut files = Vec::new();
        for command in plan.commands() {
            if !rules::system_program(command, places)
                || !command.redirects().is_empty()
                || !command.environment().is_empty()
            {
                return Vec::new();
            }
            let Ok(operands) = readonly::parse(command.name(), command.arguments()) else {
                return Vec::new();
            };
            for o in &operands {
                if let Some(real) = o.checkable(plan.directory(), places, &trust) {
                    files.push(real);
                }
            }
        }
        files.sort();
        files.dedup();
        files
    };
    if files.is_empty() || files.len() > RUN_CHECK_CAP {
        return Vec::new();
    }
    let mut read = Vec::new();
    for real in &files {
        match crate::workspace_file::read_disk(
            call.session,
            real,
            crate::workspace_file::READ_LIMIT,
        )
        .await
        {
            Ok(contents) => read.push((
                real.clone(),
                display_path(&call.session.cwd, real),
                Labelled::new(contents.bytes, Label::UNTRUSTED_PRIVATE),
                contents.file,
            )),
            Err(_) => return Vec::new(),
        }
    }
    let candidates: Vec<content_trust::Candidate<'_>> = read
        .iter()
        .map(|(real, shown, bytes, file)| content_trust::Candidate {
            path: real,
            real,
            shown,
            bytes,
            file: *file,
        })
        .collect();
    let judged = content_trust::judge(call, &candidates, RUN_CHECK_CAP).await;
    for ((_, shown, _, _), j) in read.iter().zip(&judged) {
        if let (false, Some(verdict)) = (j.readable(), j.verdict) {
            held.push((shown.clone(), verdict));
        }
    }
    read.iter()
        .zip(judged)
        .filter(|(_, j)| j.readable())
        .map(|((real, _, bytes, _), _)| (real.clone(), policy::fingerprint(bytes)))
        .collect()
}

/// The workspace and the directories the person added.
fn opened_places(call: &Call<'_>) -> readonly::Places {
    let session = call.session;
    let state = session.state();
    readonly::Places::new(std::iter::once(&session.cwd).chain(state.added_dirs.iter()))
}

/// Whether every command is the system's own copy of a read-only table program, with only the
/// options the table lists, no assignments and no redirects, opening only files (and, for `ls` and
/// `stat`, directories) the person vouched for in the places they opened.
fn read_only_over_vouched(
    call: &Call<'_>,
    plan: &Plan,
    places: &readonly::Places,
    checked: &dyn Fn(&std::path::Path) -> bool,
) -> bool {
    let trust = call.session.trust.snapshot();
    plan.commands().iter().all(|command| {
        if !rules::system_program(command, places)
            || !command.redirects().is_empty()
            || !command.environment().is_empty()
        {
            return false;
        }
        match readonly::parse(command.name(), command.arguments()) {
            Ok(operands) => operands
                .iter()
                .all(|o| o.vouched_or_checked(plan.directory(), places, &trust, checked)),
            Err(_) => false,
        }
    })
}

/// Files a run approved once wrote hold whatever its programs printed, so they are marked
/// untrusted: every redirect target, and every file its arguments name that the run created or
/// changed (a directory it created is marked as a whole).
/// Marks untrusted everything a confined run may have written (RUN-19): it ran without the
/// person, and what it wrote may hold anything it read, so no vouch given before it covers those
/// bytes. Where the look is cut, the whole workspace is marked.
async fn mark_confined_writes(call: &Call<'_>, since: (i64, i64)) {
    let session = call.session;
    let root = crate::workspace_file::real_path(&session.cwd);
    let looked = root.clone();
    let changed = tokio::task::spawn_blocking(move || confined::changed_since(&looked, since))
        .await
        .unwrap_or(confined::Changed {
            files: Vec::new(),
            cut: true,
        });
    let (files, directories) = confined::marks(&root, &changed.files);
    {
        let mut trust = session.trust.lock();
        for path in &files {
            let file = crate::workspace_file::identity(path);
            trust.mark_written_untrusted(path.clone(), file);
        }
        for dir in &directories {
            trust.mark(dir.clone(), Scope::Directory, None);
        }
        if changed.cut {
            trust.mark(root.clone(), Scope::Directory, None);
        }
    }
    let said = if changed.cut {
        "run: a confined run's changes could not all be looked at; the workspace is marked untrusted".to_string()
    } else if directories.is_empty() {
        format!(
            "run: {} file(s) a confined run changed marked untrusted",
            files.len()
        )
    } else {
        format!(
            "run: {} file(s) a confined run changed marked untrusted, and the directories {} whole",
            files.len(),
            directories
                .iter()
                .map(|d| display_path(&session.cwd, d))
                .collect::<Vec<_>>()
                .join(", ")
        )
    };
    call.record(Gate::Trust, Decision::Refused, said);
}

fn mark_writes(call: &Call<'_>, plan: &Plan, label: Label, before: Option<&outputs::Before>) {
    if label.is_trusted() {
        return;
    }
    let written = before.map(outputs::Before::written).unwrap_or_default();
    // Into the session's one trust map, from whatever seat this run was approved in (TRUST-10).
    let mut trust = call.session.trust.lock();
    for w in plan.writes() {
        let real = crate::workspace_file::real_path(w);
        let file = crate::workspace_file::identity(&real);
        trust.mark_written_untrusted(real, file);
    }
    for w in written {
        match w {
            outputs::Written::File(path) => {
                let file = crate::workspace_file::identity(&path);
                trust.mark_written_untrusted(path, file);
            }
            outputs::Written::Directory(path) => trust.mark(path, Scope::Directory, None),
        }
    }
}

/// The most bytes of one stream a run's card on the person's screen is sent.
const SCREEN_MAX: usize = 64 * 1024;

/// Shows what a stream printed on the person's screen (one of the places untrusted bytes may
/// go), bounded to [`SCREEN_MAX`] with its middle left out. Nothing of it reaches the planner.
fn show_output(call: &Call<'_>, stream: &'static str, bytes: &[u8], label: Label) {
    let shown = if bytes.len() > SCREEN_MAX {
        let mut c = process::Captured::new(SCREEN_MAX);
        c.push(bytes);
        c.kept()
    } else {
        bytes.to_vec()
    };
    call.session.screen.update(Update::RunOutput {
        stream,
        text: Labelled::new(String::from_utf8_lossy(&shown).into_owned(), label),
        bytes: bytes.len(),
    });
}

/// Puts one stream's bytes in a slot and describes it for the planner.
fn quarantine_stream(
    call: &Call<'_>,
    line: &str,
    stream: &'static str,
    bytes: Vec<u8>,
    label: Label,
) -> Reference {
    let mut state = call.session.state();
    let reference = state.quarantine.put(
        Labelled::new(bytes, label),
        Origin::Output {
            line: line.to_string(),
            stream,
        },
    );
    if !label.is_trusted() {
        policy::withhold(
            &format!("run {stream}"),
            label,
            &reference.id.to_string(),
            &mut state.audit,
        );
    }
    reference
}

/// What the planner is told about a finished run: exit codes, and each stream as text (trusted)
/// or as a reference (quarantined).
fn account(
    call: &Call<'_>,
    line: &str,
    how: &str,
    report: &RunReport,
    label: Label,
    (out, err): (Vec<u8>, Vec<u8>),
    rememberable: Option<&str>,
) -> PlannerText {
    let mut text = format!("ran `{line}` ({how}): {}\n", report.summary());
    let shown_cap = usize::try_from(call.session.settings.run_max_output)
        .unwrap_or(usize::MAX)
        .max(64);
    for (stream, bytes) in [("stdout", out), ("stderr", err)] {
        let size = bytes.len();
        if size == 0 {
            text.push_str(&format!("{stream}: empty\n"));
            continue;
        }
        show_output(call, stream, &bytes, label);
        let reference = quarantine_stream(call, line, stream, bytes.clone(), label);
        if let (false, Some(identity)) = (label.is_trusted(), rememberable) {
            call.session.state().approvals.run_approved_once(
                reference.id,
                identity.to_string(),
                line.to_string(),
            );
        }
        if !label.is_trusted() {
            call.session.screen.update(Update::Quarantined {
                reference: reference.clone(),
                origin: format!("the {} of {line}", super::output_words(stream)),
            });
            text.push_str(&format!("{stream}: quarantined, {reference}\n"));
            continue;
        }
        let mut state = call.session.state();
        let state = &mut *state;
        let shown = if size > shown_cap {
            let mut c = process::Captured::new(shown_cap);
            c.push(&bytes);
            c.kept()
        } else {
            bytes
        };
        let Ok(opened) = policy::open(Labelled::new(
            String::from_utf8_lossy(&shown).into_owned(),
            label,
        )) else {
            continue;
        };
        let body = policy::present(
            opened,
            &format!("run {stream}"),
            &mut state.context,
            &mut state.audit,
        );
        text.push_str(&format!(
            "{stream} ({}):\n{}\n",
            human_size(size),
            body.as_str()
        ));
        if size > shown_cap {
            text.push_str(&format!(
                "[the middle was left out; read_output {} with an offset reads it]\n",
                reference.id
            ));
        }
    }
    if !label.is_trusted() {
        text.push_str("Nobody vouched for every step, so what it printed is quarantined; read_output asks the person to show it to you.\n");
    }
    PlannerText::driver(text)
}

fn start_job(
    call: &Call<'_>,
    line: &str,
    plan: Plan,
    io: RunIo,
    label: Label,
    stdout: process::SharedCapture,
    stderr: process::SharedCapture,
) -> ToolOutput {
    let session = call.session;
    let stop = CancellationToken::new();
    let report: Arc<Mutex<Option<RunReport>>> = Arc::default();
    let changed = Arc::new(tokio::sync::Notify::new());
    let name = {
        let mut state = session.state();
        let name = format!("job-{}", state.jobs.len() + 1);
        state.jobs.push(Job {
            name: name.clone(),
            line: line.to_string(),
            label,
            stdout,
            stderr,
            seen: (0, 0),
            started: Instant::now(),
            stop: stop.clone(),
            report: report.clone(),
            changed: changed.clone(),
            reported: false,
        });
        name
    };
    // A job ends after this call has returned, so nothing can compare its files afterwards:
    // every file its arguments could name is marked before it starts (a directory that exists
    // keeps its rule; COST-8).
    if !label.is_trusted() {
        let candidates = outputs::candidates(&plan, &opened_places(call));
        let mut trust = session.trust.lock();
        for w in plan.writes() {
            let real = crate::workspace_file::real_path(w);
            let file = crate::workspace_file::identity(&real);
            trust.mark_written_untrusted(real, file);
        }
        for path in candidates.into_iter().filter(|p| !p.is_dir()) {
            let file = crate::workspace_file::identity(&path);
            trust.mark_written_untrusted(path, file);
        }
    }
    tokio::spawn(async move {
        // A job is bounded like any run: by the longest deadline, and by its stop token.
        let done = runner::execute(&plan, io, stop, Duration::from_secs(MAX_DEADLINE)).await;
        *report.lock().unwrap_or_else(|p| p.into_inner()) = Some(done);
        changed.notify_waiters();
    });
    call.record(
        Gate::Promote,
        Decision::Observed,
        format!("run: {name} started in the background, output {label}"),
    );
    ToolOutput::ok(
        PlannerText::driver(format!(
            "started `{line}` in the background as {name}; job_output {name} reports what is new, and the turn is told when it ends"
        )),
        format!("{name} started"),
    )
}
