//! `search`: the lines of workspace files that match a regular expression.
//!
//! The pattern is compiled before anything is read ([`Pattern`]), the files are chosen by a walk
//! that is sorted, breadth first, capped and blind to `.gitignore` ([`search_tree`](crate::search::search_tree)), and the
//! lines are shown file by file: a file a rule vouches for, or whose searched bytes the
//! content-trust helper passes, has its lines shown; the lines of every other file go into one
//! quarantine slot, and the planner gets its reference with how many lines and files it holds and
//! why each file was held back. The counts are computed from the bytes searched; that disclosure is
//! written down as a known cost in `specs/search.md`.
//!
//! The engine is public so that a benchmark can run it without a session:
//!
//! ```no_run
//! use std::path::Path;
//! use bravebot_core::files::DiskOnly;
//! use bravebot_core::search::{Limits, Pattern, Request, search_tree};
//!
//! let pattern = Pattern::compile(&["fn main"], true).expect("a pattern the engine reads");
//! let root = Path::new("/src/project");
//! let request = Request {
//!     root,
//!     workspace: root,
//!     pattern: &pattern,
//!     include: None,
//!     offset: 0,
//!     limits: Limits { max_matches: 200, max_files: 20_000, deadline: None, max_file_bytes: 8 << 20 },
//!     resume: None,
//! };
//! let outcome = search_tree(&request, &DiskOnly, &|| false);
//! assert!(outcome.stop.is_none() || !outcome.matches.is_empty());
//! ```

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use crate::search::{
    Include, Keep, Limits, Match, Outcome, PageKey, Pattern, Request, Stop, search_tree_keeping,
};

use super::args::{self, Arg, ArgValue, tool_args};
use super::content_trust::{self, Candidate, Hold};
use super::{Call, ToolOutput, ToolSpec, confine};
use crate::files::Files;
use crate::kernel::audit::{Decision, Gate};
use crate::kernel::label::{Integrity, Label};
use crate::kernel::labelled::Labelled;
use crate::kernel::policy::{self, PlannerText};
use crate::kernel::slot::{Origin, human_size};
use crate::kernel::trust::FileId;
use crate::paths::{control_pictures, display_path};

/// Matches one call returns; past it the result says which offset continues.
pub const MAX_MATCHES: usize = 200;
/// Files larger than this are not read, and the result counts them.
pub const MAX_FILE_BYTES: u64 = 8 << 20;
/// Unvouched files named in a quarantined result's summary before the rest are counted.
const NAMED_UNVOUCHED: usize = 5;

tool_args! {
    /// The arguments of `search`, as the planner is shown them and as a call is read.
    pub struct Arguments {
        pattern: required Patterns as Routing = json!({
            "anyOf": [
                {"type": "string"},
                {"type": "array", "items": {"type": "string"}, "minItems": 1}
            ],
            "description": "a regular expression, or a list of them (a line matching any of them matches)"
        });
        directory: optional String as Routing = json!({"type": "string", "description": "workspace-relative directory (or one file) to search; defaults to ."});
        include: optional String as Routing = json!({"type": "string", "description": "optional glob choosing which files are read, e.g. **/*.{rs,toml}; one with a slash is read from the directory or the workspace root"});
        offset: optional u64 as Routing = json!({"type": "integer", "minimum": 0, "description": "how many matches to pass over: the value a capped result names"});
        case_sensitive: optional TrueOrFalse as Routing = json!({"type": "boolean", "description": "defaults to true; (?i) in the pattern asks for the same"});
    }
}

/// One regular expression or a list of them; anything else, absent included, is an error.
pub struct Patterns(Vec<String>);

impl ArgValue for Patterns {
    fn read(arg: &Arg<'_>) -> Result<Option<Self>, String> {
        match arg.value {
            Some(Value::String(s)) => Ok(Some(Patterns(vec![s.clone()]))),
            Some(list @ Value::Array(_)) => args::strings(list)
                .map(|p| Some(Patterns(p)))
                .map_err(|_| arg.must_be("a string or a list of strings")),
            _ => Err(arg.must_be("a string or a list of strings")),
        }
    }
}

/// `true` or `false`, given as themselves or as their words in a string.
pub struct TrueOrFalse(bool);

impl ArgValue for TrueOrFalse {
    fn read(arg: &Arg<'_>) -> Result<Option<Self>, String> {
        match arg.given() {
            None => Ok(None),
            Some(Value::Bool(b)) => Ok(Some(TrueOrFalse(*b))),
            Some(Value::String(s)) if s.trim() == "true" => Ok(Some(TrueOrFalse(true))),
            Some(Value::String(s)) if s.trim() == "false" => Ok(Some(TrueOrFalse(false))),
            Some(_) => Err(arg.must_be("true or false")),
        }
    }
}

/// What the planner calls this tool.
pub const NAME: &str = "search";

pub fn spec() -> ToolSpec {
    ToolSpec {
        name: NAME,
        description: "Find lines matching a regular expression in workspace files, each as path:line:text; a match lies \
within one line. Supported: literals, ., *, +, ?, |, (...), (?:...), [...], \\d \\w \\s and their negations, ^, \
$, \\b, \\B, (?i), (?-i), (?i:...); not backreferences, lookaround, named groups, other flags or counted \
repetition ({ and } are ordinary characters). At most 200 matches per call; a capped result names the offset to \
continue from with the same arguments. Version control, build output, caches and vendored dependencies are not \
searched. Lines of a file nobody vouched for are shown once a check passes it; the rest are held back in one \
reference, and the result says which files and why.",
        args: Arguments::specs(),
    }
}

/// The arguments of one call, checked.
struct Args {
    patterns: Vec<String>,
    directory: String,
    include: Option<String>,
    offset: usize,
    case_sensitive: bool,
}

fn args(call: &Call<'_>) -> Result<Args, String> {
    let Arguments {
        pattern: Patterns(patterns),
        directory,
        include,
        offset,
        case_sensitive,
    } = Arguments::read(call)?;
    Ok(Args {
        patterns,
        directory: directory.unwrap_or_else(|| ".".to_string()),
        include,
        offset: usize::try_from(offset.unwrap_or(0)).unwrap_or(usize::MAX),
        case_sensitive: case_sensitive.is_none_or(|TrueOrFalse(on)| on),
    })
}

pub async fn run(call: &Call<'_>) -> ToolOutput {
    let args = match args(call) {
        Ok(a) => a,
        Err(e) => return ToolOutput::error(e),
    };
    let session = call.session;
    let Ok(root) = confine(session, &args.directory) else {
        call.record(
            Gate::Promote,
            Decision::Refused,
            format!(
                "search.directory {} is outside the places the person opened",
                control_pictures(&args.directory)
            ),
        );
        return ToolOutput::refused(format!(
            "{} is outside the workspace and the directories the person added",
            control_pictures(&args.directory)
        ));
    };
    let shown = control_pictures(&display_path(&session.cwd, &root));
    // The pattern and the glob are compiled before anything is opened, so a refusal says what is
    // wrong with them and is never mistaken for a search that found nothing.
    let pattern = match Pattern::compile(&args.patterns, args.case_sensitive) {
        Ok(p) => p,
        Err(e) => return ToolOutput::error(e.to_string()),
    };
    let include = match args.include.as_deref().map(Include::compile).transpose() {
        Ok(i) => i,
        Err(e) => return ToolOutput::error(e),
    };
    if std::fs::symlink_metadata(&root).is_err() {
        return ToolOutput::error(format!("no such file or directory: {shown}"));
    }
    let denied = session.trust.lock().denied(&root).is_some();
    if denied {
        call.record(
            Gate::FileRead,
            Decision::Refused,
            format!("search under {shown}: a deny rule covers it"),
        );
        return ToolOutput::refused(format!(
            "{shown} was not searched: the person's deny rule covers it, so nothing there is read"
        ));
    }
    call.record(
        Gate::Promote,
        Decision::Allowed,
        format!("search.directory {shown} proposed by the model, confined and non-destructive"),
    );
    let settings = &session.settings;
    let page = PageKey {
        root: root.clone(),
        patterns: args.patterns.clone(),
        case_sensitive: args.case_sensitive,
        include: args.include.clone(),
        max_files: settings.search_max_files,
    };
    let resume = session.search_pages.find(&page, args.offset);
    let started = Instant::now();
    let limits = Limits {
        max_matches: MAX_MATCHES,
        max_files: settings.search_max_files,
        deadline: started.checked_add(Duration::from_secs(settings.search_max_seconds)),
        max_file_bytes: MAX_FILE_BYTES,
    };
    // Names under a path marked untrusted are withheld, so nothing there is checked either: what
    // no rule vouches for stays in the reference.
    let (trust, withheld) = {
        let trust = session.trust.snapshot();
        let withheld = trust.untrusted_within(&root);
        (trust, withheld)
    };
    let outcome = {
        let files: Arc<dyn Files> = session.files.clone();
        let cancel = call.cancel.clone();
        let workspace = session.cwd.clone();
        let root = root.clone();
        let offset = args.offset;
        let include = include.clone();
        let check_bytes = settings.check_max_bytes;
        let keep_checks = settings.vetting_reads && !withheld;
        // The walk is blocking filesystem work and may take seconds: off the async threads.
        let job = tokio::task::spawn_blocking(move || {
            let request = Request {
                root: &root,
                workspace: &workspace,
                pattern: &pattern,
                include: include.as_ref(),
                offset,
                limits,
                resume: resume.as_ref(),
            };
            let wanted = |p: &Path| keep_checks && trust.integrity_of(p).is_none();
            let denied = |p: &Path| trust.denied(p).is_some();
            let keep = Keep {
                files: CHECK_CAP,
                max_bytes: check_bytes,
                wanted: &wanted,
                denied: &denied,
            };
            search_tree_keeping(&request, files.as_ref(), &|| cancel.is_cancelled(), &keep)
        });
        match job.await {
            Ok(outcome) => outcome,
            Err(e) => return ToolOutput::error(format!("the search stopped unexpectedly: {e}")),
        }
    };
    if let Some(next) = &outcome.resume {
        session.search_pages.keep(page, next.clone());
    }
    let query = Query {
        patterns: &args.patterns,
        shown: &shown,
        include: args.include.as_deref(),
        include_advice: include.as_ref().map(Include::advice).unwrap_or_default(),
        offset: args.offset,
        case_sensitive: args.case_sensitive,
        max_files: settings.search_max_files,
        max_seconds: settings.search_max_seconds,
        cwd: &session.cwd,
    };
    let sorted = sort_matches(call, &outcome, withheld).await;
    call.record(
        Gate::FileRead,
        Decision::Observed,
        format!(
            "search under {shown} read {} files; lines shown from {} files, held back from {}",
            outcome.files_read.len(),
            sorted.shown_files,
            sorted.held_files.len()
        ),
    );
    respond(call, &query, &outcome, sorted, withheld)
}

/// Most files one search has checked; past it the rest of the matching files are held back and
/// the result says so, so the planner can narrow the search.
pub const CHECK_CAP: usize = 16;

/// The matches split by whether the planner may read the file they come from.
struct Sorted {
    shown: Vec<Match>,
    held: Vec<Match>,
    shown_files: usize,
    /// Each file held back, in walk order, with why.
    held_files: Vec<(PathBuf, Hold)>,
}

/// Decides, file by file, which matching lines the planner may read: a file a rule vouches for,
/// or one whose searched bytes the content-trust helper passes (at most [`CHECK_CAP`] new checks,
/// the shallowest files first, since the walk is breadth first). A file that passed is shown
/// through the lines cut from the bytes the check judged. Files read that matched nothing need no
/// check: only their absence reaches the planner (known cost SEARCH-16).
async fn sort_matches(call: &Call<'_>, outcome: &Outcome, withheld: bool) -> Sorted {
    let session = call.session;
    let mut files: Vec<&Path> = Vec::new();
    for m in &outcome.matches {
        if files.last() != Some(&m.path.as_path()) {
            files.push(&m.path);
        }
    }
    let kept: Vec<(&PathBuf, Labelled<Vec<u8>>)> = outcome
        .kept
        .iter()
        .map(|(p, b)| (p, Labelled::new(b.clone(), Label::UNTRUSTED_PRIVATE)))
        .collect();
    let shown_names: Vec<String> = kept
        .iter()
        .map(|(p, _)| control_pictures(&display_path(&session.cwd, p)))
        .collect();
    // Each matched file's identity on disk, so a mark on the same file under another name holds
    // it back too (TRUST-11). One stat a file, off the runtime's workers.
    let identities: Vec<(PathBuf, Option<FileId>)> = {
        let paths: Vec<PathBuf> = files.iter().map(|p| p.to_path_buf()).collect();
        tokio::task::spawn_blocking(move || {
            paths
                .into_iter()
                .map(|p| {
                    let id = crate::workspace_file::identity(&p);
                    (p, id)
                })
                .collect()
        })
        .await
        .unwrap_or_default()
    };
    let identity_of = |p: &Path| -> Option<FileId> {
        identities
            .iter()
            .find(|(q, _)| q.as_path() == p)
            .and_then(|(_, id)| *id)
    };
    let candidates: Vec<Candidate<'_>> = kept
        .iter()
        .zip(&shown_names)
        .map(|((p, bytes), shown)| Candidate {
            path: p,
            real: p,
            shown,
            bytes,
            file: identity_of(p),
        })
        .collect();
    let judged = content_trust::judge(call, &candidates, CHECK_CAP).await;
    let passed: Vec<&Path> = kept
        .iter()
        .zip(&judged)
        .filter(|(_, j)| j.readable())
        .map(|((p, _), _)| p.as_path())
        .collect();
    let verdict_of = |p: &Path| -> Result<(), Hold> {
        let rule = session.trust.lock().integrity_of_file(p, identity_of(p));
        match rule {
            Some(Integrity::Trusted) => return Ok(()),
            Some(Integrity::Untrusted) => return Err(Hold::Marked),
            None => {}
        }
        if withheld {
            return Err(Hold::Marked);
        }
        if passed.contains(&p) {
            return Ok(());
        }
        match kept
            .iter()
            .zip(&judged)
            .find(|((k, _), _)| k.as_path() == p)
        {
            Some((_, j)) => Err(j.hold.unwrap_or(Hold::Inconclusive)),
            None if !session.settings.vetting_reads => Err(Hold::ChecksOff),
            None => Err(Hold::OverCap),
        }
    };
    let decided: Vec<(&Path, Result<(), Hold>)> =
        files.iter().map(|p| (*p, verdict_of(p))).collect();
    let mut sorted = Sorted {
        shown: Vec::new(),
        held: Vec::new(),
        shown_files: 0,
        held_files: Vec::new(),
    };
    for (path, decision) in &decided {
        match decision {
            Ok(()) => sorted.shown_files += 1,
            Err(hold) => sorted.held_files.push((path.to_path_buf(), *hold)),
        }
    }
    for m in &outcome.matches {
        let shown = decided
            .iter()
            .find(|(p, _)| *p == m.path.as_path())
            .is_some_and(|(_, d)| d.is_ok());
        if shown {
            sorted.shown.push(m.clone());
        } else {
            sorted.held.push(m.clone());
        }
    }
    sorted
}

/// What was asked, as the driver will describe it.
struct Query<'a> {
    patterns: &'a [String],
    shown: &'a str,
    include: Option<&'a str>,
    include_advice: &'a [String],
    offset: usize,
    case_sensitive: bool,
    max_files: u64,
    max_seconds: u64,
    cwd: &'a Path,
}

impl Query<'_> {
    fn describe(&self) -> String {
        let patterns: Vec<String> = self
            .patterns
            .iter()
            .map(|p| format!("`{}`", control_pictures(p)))
            .collect();
        let mut out = format!("search {} in {}", patterns.join(" or "), self.shown);
        if let Some(glob) = self.include {
            out.push_str(&format!(" (include `{}`)", control_pictures(glob)));
        }
        if !self.case_sensitive {
            out.push_str(", ignoring case");
        }
        if self.offset > 0 {
            out.push_str(&format!(", from offset {}", self.offset));
        }
        out
    }
}

/// The whole result, as the planner reads it when every file was trusted, and as the slot holds
/// it when not.
fn render(query: &Query<'_>, outcome: &Outcome, matches: &[Match], withheld: bool) -> String {
    let mut out = format!(
        "{}: {} matching lines in {} files; {} files read\n",
        query.describe(),
        matches.len(),
        distinct_files(matches),
        outcome.files_read.len()
    );
    for m in matches {
        out.push_str(&format!(
            "{}:{}:{}\n",
            control_pictures(&display_path(query.cwd, &m.path)),
            m.line,
            m.text
        ));
    }
    for note in notes(query, outcome, withheld) {
        out.push_str(&note);
        out.push('\n');
    }
    if outcome.binary > 0 {
        out.push_str(&format!(
            "[{} binary files were read and not searched]\n",
            outcome.binary
        ));
    }
    out
}

fn distinct_files(matches: &[Match]) -> usize {
    let mut n = 0;
    let mut last: Option<&Path> = None;
    for m in matches {
        if last != Some(m.path.as_path()) {
            n += 1;
            last = Some(&m.path);
        }
    }
    n
}

/// The facts about a search that the driver kept while walking and counting: the kind of nothing,
/// a page past the end, what was not read, and whether and why it stopped early. These reach the
/// planner whether or not it may read the matches, since a notice inside a withheld body tells it
/// nothing.
fn notes(query: &Query<'_>, outcome: &Outcome, withheld: bool) -> Vec<String> {
    let mut out = Vec::new();
    let stopped_short = matches!(
        outcome.stop,
        Some(Stop::FileCap | Stop::Time | Stop::Cancelled)
    );
    if outcome.files_selected == 0 {
        match query.include {
            Some(glob) => out.push(format!(
                "[the include `{}` selected no files among the {} files walked: nothing was searched, so this says nothing about the pattern]",
                control_pictures(glob),
                outcome.files_met
            )),
            None if !stopped_short => {
                out.push(format!("[there are no files to search in {}]", query.shown));
            }
            None => {}
        }
    } else if outcome.counted == 0 {
        out.push(format!(
            "[no matching lines in the {} files read]",
            outcome.files_read.len()
        ));
    } else if query.offset > 0 && outcome.matches.is_empty() && outcome.counted <= query.offset {
        out.push(if stopped_short {
            format!(
                "[offset {} is past the {} matches found before the search stopped]",
                query.offset, outcome.counted
            )
        } else {
            format!(
                "[offset {} is past the last match: there were {} matches]",
                query.offset, outcome.counted
            )
        });
    }
    for advice in query.include_advice {
        out.push(format!("[include: {advice}]"));
    }
    if outcome.too_large > 0 {
        out.push(format!(
            "[{} files larger than {} were not read]",
            outcome.too_large,
            human_size(usize::try_from(MAX_FILE_BYTES).unwrap_or(usize::MAX))
        ));
    }
    if outcome.unreadable > 0 {
        out.push(format!(
            "[{} files or directories could not be read]",
            outcome.unreadable
        ));
    }
    if !outcome.denied.is_empty() {
        // Each is the very path a deny rule names (the walk stops at the first one it meets),
        // which the person wrote: naming it tells the planner nothing the person did not say.
        let names: Vec<String> = outcome
            .denied
            .iter()
            .map(|p| control_pictures(&display_path(query.cwd, p)))
            .collect();
        out.push(format!(
            "[left out unread, by the person's deny rule: {}]",
            names.join(", ")
        ));
    }
    if !withheld && !outcome.skipped.is_empty() {
        out.push(format!(
            "[not walked, by name: {}]",
            outcome.skipped.join(", ")
        ));
    }
    if outcome.resumed {
        out.push(format!(
            "[continued where the page before stopped: the files before match {} were not read again]",
            query.offset
        ));
    }
    if outcome.links > 0 {
        out.push(format!(
            "[{} symbolic links were not followed]",
            outcome.links
        ));
    }
    match outcome.stop {
        None => {}
        Some(Stop::MatchCap { next_offset }) => out.push(format!(
            "[partial: stopped at the match cap of {MAX_MATCHES}; ask again with offset {next_offset} to continue from the first match left behind]"
        )),
        Some(Stop::FileCap) => out.push(format!(
            "[partial: stopped after walking {} files (search.maxFiles), before every file was opened; the rest of the tree was not searched. This is not a page to continue: point at a subdirectory or narrow the include]",
            query.max_files
        )),
        Some(Stop::Time) => out.push(format!(
            "[partial: ran out of time (search.maxSeconds is {}) after reading {} files; the rest of the tree was not searched. This is not a page to continue: point at a subdirectory or narrow the include]",
            query.max_seconds,
            outcome.files_read.len()
        )),
        Some(Stop::Cancelled) => out.push("[partial: the turn was cancelled before the search finished]".to_string()),
    }
    out
}

/// What the planner is told: the lines it may read, as text, and the rest in one reference with
/// how many lines and files it holds and why each file was held back.
fn respond(
    call: &Call<'_>,
    query: &Query<'_>,
    outcome: &Outcome,
    sorted: Sorted,
    withheld: bool,
) -> ToolOutput {
    let session = call.session;
    let body = render(query, outcome, &sorted.shown, withheld);
    let held_note = (!sorted.held.is_empty()).then(|| {
        let mut lines = String::new();
        for m in &sorted.held {
            lines.push_str(&format!(
                "{}:{}:{}\n",
                control_pictures(&display_path(query.cwd, &m.path)),
                m.line,
                m.text
            ));
        }
        let reference = call.quarantine(
            Labelled::new(lines.into_bytes(), Label::UNTRUSTED_PRIVATE),
            Origin::Search {
                directory: query.shown.to_string(),
            },
            &format!("search in {} (lines held back)", query.shown),
            format!("a search in {}", query.shown),
        );
        let why = if withheld {
            format!(
                "their names are withheld too: {} holds a path marked untrusted, so only files a rule vouches for are shown there",
                query.shown
            )
        } else {
            let mut named: Vec<String> = sorted
                .held_files
                .iter()
                .take(NAMED_UNVOUCHED)
                .map(|(p, hold)| {
                    format!(
                        "{} ({})",
                        control_pictures(&display_path(query.cwd, p)),
                        hold.reason()
                    )
                })
                .collect();
            if sorted.held_files.len() > NAMED_UNVOUCHED {
                named.push(format!(
                    "and {} more",
                    sorted.held_files.len() - NAMED_UNVOUCHED
                ));
            }
            named.join("; ")
        };
        let over_cap = sorted
            .held_files
            .iter()
            .any(|(_, h)| *h == Hold::OverCap);
        let narrow = if over_cap {
            format!(
                " Past {CHECK_CAP} new checks a search checks no more files: narrow the directory or the include to see the rest."
            )
        } else {
            String::new()
        };
        (
            reference.id.to_string(),
            format!(
                "[held back: {} matching lines from {} files, counted from text nobody vouched for, are in {reference}, which you cannot read: {why}.{narrow}]\n",
                sorted.held.len(),
                sorted.held_files.len(),
            ),
        )
    });
    let mut state = session.state();
    let state = &mut *state;
    // What is shown comes from files a rule vouches for or whose searched bytes a check passed.
    let Ok(opened) = policy::open(Labelled::new(body, Label::TRUSTED_PRIVATE)) else {
        return ToolOutput::error("internal: a trusted search result did not open");
    };
    let text = policy::present(
        opened,
        &format!("search in {}", query.shown),
        &mut state.context,
        &mut state.audit,
    );
    let (id, text) = match held_note {
        Some((id, note)) => (
            Some(id),
            PlannerText::driver(format!("{}{note}", text.as_str())),
        ),
        None => (None, text),
    };
    ToolOutput::ok(text, summary(query, outcome, &sorted.shown, id.as_deref()))
}

fn summary(
    query: &Query<'_>,
    outcome: &Outcome,
    shown: &[Match],
    quarantined_as: Option<&str>,
) -> String {
    let mut out = format!(
        "{}: {} matches in {} files",
        query.describe(),
        shown.len(),
        distinct_files(shown)
    );
    if outcome.stop.is_some() {
        out.push_str(" (partial)");
    }
    if let Some(id) = quarantined_as {
        out.push_str(&format!(", more held back as {id}"));
    }
    out
}
