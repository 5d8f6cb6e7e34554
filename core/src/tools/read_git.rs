//! `read_git`: a repository's history answered from the files under its `.git` by
//! [`crate::git`], with no git process, nobody asked, and the same lines git would print.
//!
//! It opens only a repository whose `.git` a trust rule covers with nothing beneath it marked
//! untrusted; anywhere else it declines and points at `run`. Everything it prints comes from that
//! `.git`, so the answer is trusted, unless it shows a file the person's rules mark untrusted (or
//! a search read one): then the whole answer is quarantined, as a read of that file would be.
//! Each file whose lines hold what looks like a credential is held back until the person agrees.

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use serde_json::json;

use super::args::tool_args;
use super::{Call, ToolOutput, ToolSpec, confine};
use crate::git::{self, Budget, Deadline, diff::Section, log::Cut};
use crate::kernel::audit::{Decision, Gate};
use crate::kernel::label::{Integrity, Label};
use crate::kernel::labelled::Labelled;
use crate::kernel::policy::{self, PlannerText};
use crate::kernel::slot::Origin;
use crate::paths::{control_pictures, display_path};
use crate::screen::{Question, QuestionKind, Subject};

/// Commits, tags or lines listed when `count` is not given, and the most that may be asked for.
const DEFAULT_COUNT: u64 = 20;
const MAX_COUNT: u64 = 200;
/// How long one answer may take before it stops and says so.
const DEADLINE: Duration = Duration::from_secs(10);

const QUERIES: &[&str] = &["log", "show", "diff", "status", "tags", "search"];

/// The stack of the thread an answer is made on. This reader's own walks are loops, but gix's
/// walk of the working tree (for `status`) descends once a directory; a path the system opens is
/// at most 4,096 bytes, so at most 2,048 directories deep, and this holds that many of its frames
/// with room to spare. It is address space reserved, touched only as deep as a walk goes.
const READER_STACK: usize = 64 << 20;

/// The sentence every decline ends with.
const USE_RUN: &str = "use run with git instead, which asks the person unless a rule covers it";

tool_args! {
    /// The arguments of `read_git`, as the planner is shown them and as a call is read.
    pub struct Arguments {
        query: required String as Routing = json!({"type": "string", "enum": QUERIES, "description": "which question: log, show, diff, status, tags or search"});
        repository: optional String as Routing = json!({"type": "string", "description": "workspace-relative directory holding .git; defaults to ."});
        revision: optional String as Routing = json!({"type": "string", "description": "git revision syntax: a branch, tag, HEAD, an id or prefix, ~N, ^N, ^{commit}; A..B for log and diff; <revision>:<path> for show"});
        path: optional String as Routing = json!({"type": "string", "description": "relative to the repository root: limits log, show, diff and status to changes under it and search to files under it"});
        pattern: optional String as Routing = json!({"type": "string", "description": "search only: the regular expression to look for in each line"});
        count: optional u64 as Routing = json!({"type": "integer", "minimum": 1, "maximum": MAX_COUNT, "description": "commits, tags or lines to list: 20 unless given, at most 200"});
        skip: optional u64 as Routing = json!({"type": "integer", "minimum": 0, "description": "log, tags and search: how many to pass over, as a cut answer names"});
        messages: optional bool as Routing = json!({"type": "boolean", "description": "log only: print each commit's whole message beneath its line"});
        since: optional String as Routing = json!({"type": "string", "description": "log only: first day (UTC, YYYY-MM-DD) a listed commit was authored on"});
        until: optional String as Routing = json!({"type": "string", "description": "log only: last day (UTC, YYYY-MM-DD) a listed commit was authored on"});
    }
}

/// What the planner calls this tool.
pub const NAME: &str = "read_git";

pub fn spec() -> ToolSpec {
    ToolSpec {
        name: NAME,
        description: "Answer a question about a git repository's history without starting git or asking the person, printed \
as git prints it: log (id, day, author, subject), show (a commit with its diff, a tag, or <revision>:<path>), diff \
(A..B or A B), status (as --short --no-renames), tags (newest first; with a revision, those it reaches) and search \
(git grep -n at a revision). Only a repository whose .git the person trusts is opened, and status only where the \
whole working tree is trusted; anywhere else, and for blame, --follow or a diff against the working tree, use run.",
        args: Arguments::specs(),
    }
}

/// The arguments of one call, checked.
struct Args {
    query: String,
    repository: String,
    revision: Option<String>,
    path: Option<String>,
    pattern: Option<String>,
    count: usize,
    skip: usize,
    messages: bool,
    since: Option<i64>,
    until: Option<i64>,
}

fn args(call: &Call<'_>) -> Result<Args, String> {
    let Arguments {
        query,
        repository,
        revision,
        path,
        pattern,
        count,
        skip,
        messages,
        since,
        until,
    } = Arguments::read(call)?;
    if !QUERIES.contains(&query.as_str()) {
        return Err(format!(
            "read_git answers {}; `{}` is not one of them: {USE_RUN}",
            QUERIES.join(", "),
            control_pictures(&query)
        ));
    }
    let count = count.unwrap_or(DEFAULT_COUNT);
    if count == 0 || count > MAX_COUNT {
        return Err(format!("count is from 1 to {MAX_COUNT}"));
    }
    let day = |name: &str, given: Option<String>, end: bool| -> Result<Option<i64>, String> {
        given
            .map(|d| {
                day_start(&d)
                    .map(|s| if end { s + 86_399 } else { s })
                    .ok_or_else(|| {
                        format!("`{name}` is a day written YYYY-MM-DD, such as 2024-03-15")
                    })
            })
            .transpose()
    };
    let a = Args {
        query,
        repository: repository.unwrap_or_else(|| ".".to_string()),
        revision,
        path,
        pattern,
        count: usize::try_from(count).unwrap_or(20),
        skip: usize::try_from(skip.unwrap_or(0)).unwrap_or(usize::MAX),
        messages: messages.unwrap_or(false),
        since: day("since", since, false)?,
        until: day("until", until, true)?,
    };
    let q = a.query.as_str();
    if a.pattern.is_some() != (q == "search") {
        return Err(if q == "search" {
            "search needs a `pattern`".into()
        } else {
            "`pattern` is for search alone".into()
        });
    }
    if q != "log" && (a.messages || a.since.is_some() || a.until.is_some()) {
        return Err("`messages`, `since` and `until` are for log alone".into());
    }
    if q == "tags" && a.path.is_some() {
        return Err("tags takes no `path`".into());
    }
    if q == "status" && a.revision.is_some() {
        return Err("status compares HEAD, the index and the working tree and takes no `revision`; diff compares two commits".into());
    }
    if let Some(r) = &a.revision {
        // `:/text` and `^{/text}` search every commit's message inside gix's revision parser,
        // outside this reader's walks and their bounds (GIT-15), so they are declined too.
        let message_search = r.starts_with(":/") || r.contains("^{/");
        if r.contains("...")
            || r.contains("^@")
            || r.contains("^!")
            || r.contains("^-")
            || message_search
        {
            return Err(format!(
                "read_git does not read the revision form in `{}`: {USE_RUN}",
                control_pictures(r)
            ));
        }
        let range = r.contains("..");
        let pair = r.split_whitespace().count() == 2;
        match q {
            "diff" if !range && !pair => {
                return Err("diff compares two commits: give A..B or A B; show prints one commit with its diff".into());
            }
            "log" | "show" | "tags" | "search" if pair => {
                return Err("only diff takes two revisions".into());
            }
            "show" | "tags" | "search" if range => {
                return Err("a range A..B is for log and diff".into());
            }
            _ => {}
        }
        if r.contains(':') && q != "show" {
            return Err("<revision>:<path> is for show; other queries take `path`".into());
        }
    } else if q == "diff" {
        return Err("diff needs a `revision`: A..B or A B; a diff against the working tree goes through run".into());
    }
    Ok(a)
}

/// The first second of a calendar day in UTC, for a day written `YYYY-MM-DD` that exists.
fn day_start(text: &str) -> Option<i64> {
    let b = text.as_bytes();
    if b.len() != 10 || b[4] != b'-' || b[7] != b'-' {
        return None;
    }
    let num = |s: &str| s.parse::<i64>().ok();
    let (y, m, d) = (num(&text[..4])?, num(&text[5..7])?, num(&text[8..])?);
    let leap = (y % 4 == 0 && y % 100 != 0) || y % 400 == 0;
    let days_in = [
        31,
        if leap { 29 } else { 28 },
        31,
        30,
        31,
        30,
        31,
        31,
        30,
        31,
        30,
        31,
    ];
    if !(1..=12).contains(&m) || d < 1 || d > days_in[usize::try_from(m - 1).ok()?] {
        return None;
    }
    // Days from the civil date (Howard Hinnant's algorithm).
    let y = if m <= 2 { y - 1 } else { y };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let mp = (m + 9) % 12;
    let doy = (153 * mp + 2) / 5 + d - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    Some((era * 146_097 + doe - 719_468) * 86_400)
}

/// A path relative to the repository root that names one place one way.
fn plain_path(path: &str) -> Result<Vec<u8>, String> {
    let trimmed = path.trim_end_matches('/');
    let plain = !trimmed.is_empty()
        && !trimmed.starts_with('/')
        && trimmed
            .split('/')
            .all(|part| !part.is_empty() && part != "." && part != "..");
    if trimmed == "." {
        return Ok(Vec::new());
    }
    if !plain {
        return Err(format!(
            "`{}` is not a plain path inside the repository: write it relative to the repository root, without . or ..",
            control_pictures(path)
        ));
    }
    Ok(trimmed.as_bytes().to_vec())
}

/// Whether the trust map vouches for the whole of this `.git`: a trusted rule covers it and no
/// rule at or beneath it marks anything untrusted.
pub fn git_dir_trusted(trust: &crate::kernel::trust::TrustMap, git_dir: &Path) -> bool {
    trust.integrity_of(git_dir) == Some(Integrity::Trusted) && !trust.untrusted_within(git_dir)
}

/// What a query printed, before labels and credentials are applied.
struct Answer {
    sections: Vec<Section>,
    /// Files a search read, matched or not.
    read: Vec<Vec<u8>>,
    /// Said after the answer: where it was cut, what continues it.
    notes: Vec<String>,
    /// Whether the answer stopped at its line bound before the presenting did.
    lines_cut: bool,
}

pub async fn run(call: &Call<'_>) -> ToolOutput {
    let a = match args(call) {
        Ok(a) => a,
        Err(e) => return ToolOutput::error(e),
    };
    let session = call.session;
    let Ok(root) = confine(session, &a.repository) else {
        return ToolOutput::refused(format!(
            "{} is outside the workspace and the directories the person added",
            control_pictures(&a.repository)
        ));
    };
    let shown = control_pictures(&display_path(&session.cwd, &root));
    let git_dir = root.join(".git");
    // The rules alone decide, before any file under .git is read.
    let (git_trusted, tree_trusted, git_denied, tree_denied, trust) = {
        let trust = session.trust.snapshot();
        (
            git_dir_trusted(&trust, &git_dir),
            git_dir_trusted(&trust, &root),
            trust.denied_within(&git_dir).is_some(),
            trust.denied_within(&root).is_some(),
            trust,
        )
    };
    if git_denied {
        call.record(
            Gate::Trust,
            Decision::Refused,
            format!("read_git {shown}: a deny rule covers its .git or something in it"),
        );
        return ToolOutput::refused(format!(
            "read_git does not open {shown}: the person's deny rule covers its .git or something in it, so its history stays closed"
        ));
    }
    if !git_trusted {
        call.record(
            Gate::Trust,
            Decision::Refused,
            format!("read_git {shown}: its .git is not trusted in full"),
        );
        return ToolOutput::refused(format!(
            "read_git opens only a repository whose .git the person trusts in full, and nobody vouched for {shown}/.git (or a rule marks something in it untrusted); {USE_RUN}"
        ));
    }
    if a.query == "status" && tree_denied {
        call.record(
            Gate::Trust,
            Decision::Refused,
            format!("read_git.status {shown}: a deny rule covers something in its working tree"),
        );
        return ToolOutput::refused(format!(
            "read_git answers no status in {shown}: status reads every file of the working tree, and the person's deny rule covers something in it; {USE_RUN}"
        ));
    }
    if a.query == "status" && !tree_trusted {
        call.record(
            Gate::Trust,
            Decision::Refused,
            format!("read_git.status {shown}: its working tree is not trusted in full"),
        );
        return ToolOutput::refused(format!(
            "read_git answers status only where the person trusts the whole working tree, and {shown} is not trusted in full (or a rule marks something in it untrusted); {USE_RUN}"
        ));
    }
    let path = match a.path.as_deref().map(plain_path).transpose() {
        Ok(p) => p.unwrap_or_default(),
        Err(e) => return ToolOutput::error(e),
    };
    // A denied path named outright, as `path` or as `<revision>:<path>`, is refused (GIT-14).
    let named_path = a
        .revision
        .as_deref()
        .and_then(|r| r.split_once(':'))
        .map(|(_, p)| spelled_plainly(p));
    for named in std::iter::once(path.clone()).chain(named_path) {
        let place = workspace_path(&root, &named);
        if let Some(rule) = trust.denied(&place) {
            let ruled = control_pictures(&display_path(&session.cwd, &rule.path));
            call.record(
                Gate::FileRead,
                Decision::Refused,
                format!("read_git in {shown}: a deny rule on {ruled} covers the path named"),
            );
            return ToolOutput::refused(format!(
                "read_git does not read {}: the person's deny rule on {ruled} covers it, its history included",
                control_pictures(&display_path(&session.cwd, &place))
            ));
        }
    }
    let pattern = match a.pattern.as_deref().map(git::grep::Regex::new).transpose() {
        Ok(p) => p,
        Err(e) => return ToolOutput::error(format!("`pattern` is not a regular expression: {e}")),
    };
    call.record(
        Gate::Promote,
        Decision::Allowed,
        format!("read_git.{} in {shown}: a read of a trusted .git", a.query),
    );
    let worker_root = root.clone();
    // Off the runtime's workers, on a thread of its own whose stack holds gix's walk of the
    // working tree for `status` (GIT-15).
    let (sender, receiver) = tokio::sync::oneshot::channel();
    let started = std::thread::Builder::new()
        .name("read_git".into())
        .stack_size(READER_STACK)
        .spawn(move || {
            let denied = |p: &[u8]| trust.denied(&workspace_path(&worker_root, p)).is_some();
            let _ = sender.send(answer(&worker_root, &a, &path, pattern, &denied));
        });
    let answered = match started {
        Ok(_) => receiver
            .await
            .unwrap_or_else(|_| Err("the reader stopped unexpectedly".into())),
        Err(e) => Err(format!("the reader could not start: {e}")),
    };
    let answer = match answered {
        Ok(answer) => answer,
        Err(e) => return ToolOutput::error(e),
    };
    present(call, &root, &shown, answer).await
}

/// Runs the query on the blocking pool.
fn answer(
    root: &Path,
    a: &Args,
    path: &[u8],
    pattern: Option<git::grep::Regex>,
    denied: &dyn Fn(&[u8]) -> bool,
) -> Result<Answer, String> {
    let repo = git::open(root).map_err(|d| {
        format!(
            "read_git declined this repository: {}; {USE_RUN}",
            d.reason()
        )
    })?;
    let deadline = Deadline(Some(Instant::now() + DEADLINE));
    // One deadline and one count of tree entries for every walk this answer makes.
    let mut budget = Budget::new(deadline);
    let mut notes = Vec::new();
    let cut_note = |cut: Option<Cut>, next: Option<usize>, what: &str| match cut {
        Some(Cut::Count) => Some(format!(
            "[cut at {} {what}: ask again with skip {} for the next page]",
            a.count,
            next.unwrap_or(0)
        )),
        Some(Cut::Lines) => Some(format!(
            "[cut at {} lines with whole {what} kept: ask again with skip {}]",
            git::MAX_LINES,
            next.unwrap_or(0)
        )),
        Some(cut) => walk_note(cut),
        None => None,
    };
    let e = |e: git::Error| e.to_string();
    let mut read = Vec::new();
    let mut left_out: Vec<Vec<u8>> = Vec::new();
    let mut sections = match a.query.as_str() {
        "log" => {
            let page = git::log::log(
                &repo,
                &git::log::LogQuery {
                    revision: a.revision.clone(),
                    path: (!path.is_empty()).then(|| path.to_vec()),
                    count: a.count,
                    skip: a.skip,
                    messages: a.messages,
                    since: a.since,
                    until: a.until,
                    deadline,
                },
            )
            .map_err(e)?;
            notes.extend(cut_note(page.cut, page.next_skip, "commits"));
            if page.lines.is_empty() {
                notes.push("[no commits match]".into());
            }
            vec![Section {
                paths: Vec::new(),
                lines: page.lines,
            }]
        }
        "show" => {
            let revision = a.revision.as_deref().unwrap_or("HEAD");
            let shown =
                git::diff::show_skipping(&repo, revision, path, denied, &mut budget).map_err(e)?;
            left_out.extend(shown.left_out);
            if let Some((parent, merge)) = shown.merge {
                notes.push(format!(
                    "[a merge is shown without a diff: diff {}..{} shows what it brought in]",
                    repo.short(parent),
                    repo.short(merge)
                ));
            }
            shown.sections
        }
        "diff" => {
            let revision = a.revision.as_deref().unwrap_or_default();
            let sections = git::diff::diff(&repo, revision, path, &mut budget).map_err(e)?;
            if sections.is_empty() && budget.cuts.is_empty() {
                notes.push("[the two commits do not differ there]".into());
            }
            sections
        }
        "status" => {
            let found = git::status::status(&repo, path, &mut budget).map_err(|err| match err {
                git::status::StatusError::Declined(d) => {
                    format!("read_git declined this status: {d}; {USE_RUN}")
                }
                git::status::StatusError::Read(e) => e.to_string(),
            })?;
            if !found.not_compared.is_empty() {
                let listed: Vec<String> = found
                    .not_compared
                    .iter()
                    .map(|(p, why)| {
                        format!(
                            "{} ({})",
                            git::quote_path(p),
                            match why {
                                git::status::NotCompared::Submodule => "a submodule",
                                git::status::NotCompared::Converted =>
                                    "an attribute or core.autocrlf would convert it",
                            }
                        )
                    })
                    .collect();
                notes.push(format!(
                    "[not compared with the working tree, so not listed: {}; run git status to see them]",
                    listed.join(", ")
                ));
            }
            if found.lines.is_empty() && found.not_compared.is_empty() {
                notes.push("[nothing to list: the working tree matches the index and HEAD]".into());
            }
            vec![Section {
                paths: Vec::new(),
                lines: found.lines,
            }]
        }
        "tags" => {
            let page = git::tags::tags(&repo, a.revision.as_deref(), a.count, a.skip, &mut budget)
                .map_err(e)?;
            notes.extend(cut_note(page.cut, page.next_skip, "tags"));
            if page.names.is_empty() && budget.cuts.is_empty() {
                notes.push("[no tags]".into());
            }
            vec![Section {
                paths: Vec::new(),
                lines: page.names,
            }]
        }
        _ => {
            let Some(pattern) = pattern else {
                return Err("search needs a `pattern`".into());
            };
            let found = git::grep::grep_skipping(
                &repo,
                &git::grep::GrepQuery {
                    revision: a.revision.as_deref().unwrap_or("HEAD"),
                    pattern: &pattern,
                    path,
                    count: a.count,
                    skip: a.skip,
                },
                denied,
                &mut budget,
            )
            .map_err(e)?;
            left_out.extend(found.denied);
            notes.extend(cut_note(found.cut, found.next_skip, "lines"));
            if found.too_large > 0 {
                notes.push(format!(
                    "[{} files past 1 MiB were not searched]",
                    found.too_large
                ));
            }
            if found.files.is_empty() && found.cut.is_none() && budget.cuts.is_empty() {
                notes.push("[no lines match]".into());
            }
            read = found.read;
            found
                .files
                .into_iter()
                .map(|f| Section {
                    paths: vec![f.path],
                    lines: f.lines,
                })
                .collect()
        }
    };
    // What the walks cut or passed over is said like every other cut (GIT-15).
    let lines_cut = budget.cuts.contains(&Cut::Lines);
    notes.extend(
        budget
            .cuts
            .iter()
            .filter(|c| **c != Cut::Lines)
            .filter_map(|c| walk_note(*c)),
    );
    if budget.repeated > 0 {
        let named: Vec<String> = budget
            .repeats
            .iter()
            .map(|(path, first)| {
                format!(
                    "{} holds the same tree as {}",
                    git::quote_path(path),
                    git::quote_path(first)
                )
            })
            .collect();
        let more = budget.repeated - budget.repeats.len();
        notes.push(format!(
            "[not walked again, each holding a tree already walked under another path: {}{}]",
            named.join("; "),
            if more > 0 {
                format!("; and {more} more")
            } else {
                String::new()
            }
        ));
    }
    // A file a deny rule covers is left out of a diff whole, and the answer says so (GIT-14).
    sections.retain(|section| match section.paths.iter().find(|p| denied(p)) {
        Some(p) => {
            left_out.push(p.clone());
            false
        }
        None => true,
    });
    if !left_out.is_empty() {
        left_out.dedup();
        let names: Vec<String> = left_out.iter().map(|p| git::quote_path(p)).collect();
        notes.push(format!(
            "[left out, by the person's deny rules: {}]",
            names.join(", ")
        ));
    }
    Ok(Answer {
        sections,
        read,
        notes,
        lines_cut,
    })
}

/// What an answer says where a walk stopped or left something out for a reason other than its
/// count (which names the next page).
fn walk_note(cut: Cut) -> Option<String> {
    match cut {
        Cut::Count => None,
        Cut::Lines => Some(format!(
            "[cut at {} lines: narrow it with path or a shorter range]",
            git::MAX_LINES
        )),
        Cut::Deadline => Some(format!(
            "[cut: the answer ran out of its {} seconds; narrow it with path or revision]",
            DEADLINE.as_secs()
        )),
        Cut::Depth => Some(format!(
            "[cut: trees nested deeper than {} levels were not entered]",
            git::MAX_TREE_DEPTH
        )),
        Cut::Entries => Some(format!(
            "[cut: the answer read {} tree entries and stopped; narrow it with path]",
            git::MAX_TREE_ENTRIES
        )),
    }
}

/// The path of `<revision>:<path>` as a plain repository-relative path, for asking the deny
/// rules about it: empty and `.` components dropped.
fn spelled_plainly(path: &str) -> Vec<u8> {
    path.split('/')
        .filter(|part| !part.is_empty() && *part != ".")
        .collect::<Vec<_>>()
        .join("/")
        .into_bytes()
}

fn workspace_path(root: &Path, path: &[u8]) -> PathBuf {
    use std::os::unix::ffi::OsStrExt;
    root.join(std::ffi::OsStr::from_bytes(path))
}

/// Applies the labels, holds back credentials, bounds the answer and gives it to the planner.
async fn present(call: &Call<'_>, root: &Path, shown: &str, answer: Answer) -> ToolOutput {
    let session = call.session;
    let cwd = &session.cwd;
    // A file the person's rules mark untrusted, shown or read, makes the answer as untrusted.
    let distrusted = {
        let trust = session.trust.lock();
        answer
            .sections
            .iter()
            .flat_map(|s| s.paths.iter())
            .chain(answer.read.iter())
            .map(|p| workspace_path(root, p))
            .find(|p| trust.integrity_of(p) == Some(Integrity::Untrusted))
    };
    let mut lines: Vec<String> = Vec::new();
    let mut held: Vec<String> = Vec::new();
    let mut cut = false;
    for section in &answer.sections {
        let text: String = section.lines.iter().map(|l| format!("{l}\n")).collect();
        let found = if distrusted.is_none() {
            crate::credentials::scan(&text)
        } else {
            None
        };
        if let Some(kind) = found {
            let file = section
                .paths
                .first()
                .map(|p| display_path(cwd, &workspace_path(root, p)))
                .unwrap_or_else(|| format!("{shown}/.git"));
            if !agrees(call, &file, kind, &text).await {
                held.push(format!(
                    "[held back: the lines of {} hold what looks like {kind}, and the person did not agree to show them]",
                    control_pictures(&file)
                ));
                continue;
            }
        }
        for line in &section.lines {
            if lines.len() == git::MAX_LINES {
                cut = true;
                break;
            }
            lines.push(shorten(line));
        }
    }
    let mut body: String = lines.iter().map(|l| format!("{l}\n")).collect();
    for note in held.iter().chain(answer.notes.iter()) {
        body.push_str(note);
        body.push('\n');
    }
    if cut || answer.lines_cut {
        body.push_str(&format!(
            "[cut at {} lines: narrow it with path or a shorter range]\n",
            git::MAX_LINES
        ));
    }
    if let Some(file) = distrusted {
        let file = display_path(cwd, &file);
        let content = Labelled::new(body.into_bytes(), Label::UNTRUSTED_PRIVATE);
        let (n_lines, _) = policy::measure(&content);
        let reference = call.quarantine(
            content,
            Origin::Git {
                repository: shown.to_string(),
            },
            &format!("read_git in {shown}"),
            format!("a history answer from {shown}"),
        );
        return ToolOutput::ok(
            PlannerText::driver(format!(
                "The answer ({n_lines} lines) shows {}, which the person's rules mark untrusted, so it is in {reference}, which you cannot read.\n",
                control_pictures(&file)
            )),
            format!("read_git in {shown}: quarantined as {}", reference.id),
        );
    }
    // Everything here came out of a .git the trust map vouches for in full, and no file it shows
    // is marked untrusted: its first label is trusted.
    let mut state = session.state();
    let state = &mut *state;
    let Ok(opened) = policy::open(Labelled::new(body, Label::TRUSTED_PRIVATE)) else {
        return ToolOutput::error("internal: a trusted history answer did not open");
    };
    let text = policy::present(
        opened,
        &format!("read_git in {shown}"),
        &mut state.context,
        &mut state.audit,
    );
    ToolOutput::ok(text, format!("read_git in {shown}: {} lines", lines.len()))
}

fn shorten(line: &str) -> String {
    match line.char_indices().nth(git::MAX_LINE_CHARS) {
        Some((at, _)) => format!("{}… [line shortened]", &line[..at]),
        None => line.to_string(),
    }
}

/// Puts the lines of one file that hold a credential to the person; only a yes shows them.
async fn agrees(call: &Call<'_>, file: &str, kind: &str, text: &str) -> bool {
    let session = call.session;
    if !session.screen.interactive() || call.cancel.is_cancelled() || call.person_only() {
        return false;
    }
    let preview = Labelled::new(text.as_bytes().to_vec(), Label::TRUSTED_PRIVATE);
    let question = Question::approve(
        QuestionKind::TrustRead,
        format!("Show the agent {kind} from the history of {file}?"),
    )
    .why(&call.why)
    .subject(Subject {
        path: Some(file.to_string()),
        // Every line a yes shows the agent (REL-1): they were cut to one file's lines already.
        content: Some(policy::release_part(&preview, super::release::SHOWN_MAX).text),
        origin: Some(format!("read_git's answer about {file}")),
        ..Subject::default()
    })
    .notice(format!(
        "These lines look like they hold {kind}. A yes shows them to the agent for this answer only."
    ))
    .allow_once(
        "show",
        format!(
            "Show them this once: the agent will read these {} lines",
            text.lines().count()
        ),
    )
    .reject("hold", "Hold them back");
    call.ask_recorded(question, |a| {
        a.said(
            format!("read_git: {kind} in {file} shown on a yes"),
            format!("read_git: {kind} in {file} held back"),
        )
    })
    .await
    .approved()
}

#[cfg(test)]
mod tests {
    use super::*;

    // Verifies: GIT-6
    #[test]
    fn only_a_real_calendar_day_is_read_as_one() {
        assert_eq!(day_start("1970-01-01"), Some(0));
        assert_eq!(day_start("2020-09-13"), Some(1_599_955_200));
        assert_eq!(day_start("2024-02-29"), Some(1_709_164_800));
        for bad in [
            "2023-02-29",
            "2023-13-01",
            "2023-1-01",
            "yesterday",
            "2023-04-31",
        ] {
            assert_eq!(day_start(bad), None, "{bad}");
        }
    }

    // Verifies: GIT-3
    #[test]
    fn a_path_must_name_one_place_inside_the_repository() {
        assert_eq!(plain_path("src/").unwrap(), b"src".to_vec());
        assert_eq!(plain_path(".").unwrap(), Vec::<u8>::new());
        for bad in ["../x", "/etc", "a//b", "a/./b", "a/../b"] {
            assert!(plain_path(bad).is_err(), "{bad}");
        }
    }

    // Verifies: GIT-2
    #[test]
    fn a_git_directory_is_trusted_only_in_full() {
        use crate::kernel::trust::{RuleOrigin, Scope, TrustMap, TrustRule};
        let git = Path::new("/w/.git");
        let mut map = TrustMap::default();
        assert!(!git_dir_trusted(&map, git), "nobody said anything");
        map.restore(TrustRule {
            path: PathBuf::from("/w"),
            scope: Scope::Directory,
            origin: RuleOrigin::Person,
        });
        assert!(git_dir_trusted(&map, git));
        map.mark_written_untrusted(PathBuf::from("/w/.git/config"), None);
        assert!(
            !git_dir_trusted(&map, git),
            "one file under it is distrusted"
        );
    }
}
