//! `read_file`: a page of a text file the planner may read, or a reference to one it may not.
//!
//! A trusted file comes back as numbered lines with a change token. A file nobody vouched for is
//! read whole, unshaped, and shown to an isolated check first (CONTRACT §4.3): a clean verdict
//! trusts that one path for the session and the read proceeds; anything else quarantines the bytes
//! and, where somebody is watching, puts a `trustRead` question. Pictures and PDFs are always
//! quarantined, whatever the trust map says: they have no text for a rule to be about.
//!
//! Every read goes through [`workspace_file::read`], once: the bytes a check saw, a question
//! drew or a reference holds are the bytes a page is made from, and a file that is a link out of
//! the places the person opened, or not a regular file, is refused before it is opened.

use std::path::Path;

use serde_json::json;

use super::args::tool_args;
use super::content_trust::{self, Candidate, Hold};
use super::release::{Grant, Release, Screening};
use super::{Call, ToolOutput, ToolSpec, confine};
use crate::kernel::audit::{Decision, Gate};
use crate::kernel::label::Label;
use crate::kernel::labelled::Labelled;
use crate::kernel::policy::{self, PlannerText};
use crate::kernel::slot::Origin;
use crate::kernel::trust::{Gesture, Moment, Scope};
use crate::paths::{display_path, file_uri};
use crate::screen::{QuestionKind, Subject, Update};
use crate::workspace_file::{self, Contents, READ_LIMIT, Refusal};

/// Most lines one read returns, so a single read cannot fill the conversation.
pub const MAX_LINES: usize = 2000;
/// Longer lines are shortened in a page and marked.
pub const MAX_LINE_CHARS: usize = 2000;
/// Most bytes of lines one page holds (about 10,000 tokens), so that a page of long lines fits the
/// smallest context the planner is assumed to have (32,768 tokens, with room for the rest of the
/// conversation) and a read never ends the turn as too long for the model (READ-12).
pub const MAX_PAGE_BYTES: usize = 40 * 1024;

tool_args! {
    /// The arguments of `read_file`, as the planner is shown them and as a call is read.
    pub struct Args {
        path: optional String as Routing = json!({"type": "string", "description": "workspace-relative path"});
        path_ref: optional String as Routing = json!({"type": "string", "description": "a reference to a file whose name you were not shown, e.g. ref:2"});
        offset: optional u64 as Routing = json!({"type": "integer", "minimum": 1, "description": "1-based line to start at"});
        limit: optional u64 as Routing = json!({"type": "integer", "minimum": 1, "description": "most lines to return (at most 2000)"});
    }
}

/// What the planner calls this tool.
pub const NAME: &str = "read_file";

pub fn spec() -> ToolSpec {
    ToolSpec {
        name: NAME,
        description: "Read a text file from the workspace: numbered lines and a change token, a page at a time \
(continue with offset). A file nobody vouched for, a picture and a PDF come back as a reference.",
        args: Args::specs(),
    }
}

pub async fn run(call: &Call<'_>) -> ToolOutput {
    let Args {
        path,
        path_ref,
        offset,
        limit,
    } = match Args::read(call) {
        Ok(args) => args,
        Err(e) => return ToolOutput::error(e),
    };
    let page = Page {
        offset: usize::try_from(offset.unwrap_or(1).max(1)).unwrap_or(usize::MAX),
        limit: usize::try_from(limit.unwrap_or(MAX_LINES as u64))
            .unwrap_or(MAX_LINES)
            .clamp(1, MAX_LINES),
    };
    match (path, path_ref) {
        (Some(_), Some(_)) => ToolOutput::error("give either `path` or `path_ref`, not both"),
        (None, None) => ToolOutput::error("read_file needs `path` or `path_ref`"),
        (None, Some(r)) => read_by_reference(call, &r).await,
        (Some(p), None) => read_by_path(call, &p, page).await,
    }
}

#[derive(Clone, Copy)]
struct Page {
    offset: usize,
    limit: usize,
}

async fn read_by_path(call: &Call<'_>, raw: &str, page: Page) -> ToolOutput {
    let session = call.session;
    let Ok(path) = confine(session, raw) else {
        call.record(
            Gate::Promote,
            Decision::Refused,
            format!("read_file.path {raw} is outside the places the person opened"),
        );
        return ToolOutput::refused(format!(
            "{raw} is outside the workspace and the directories the person added; ask the person to add it"
        ));
    };
    let shown = display_path(&session.cwd, &path);
    call.record(
        Gate::Promote,
        Decision::Allowed,
        format!("read_file.path {shown} proposed by the model, confined and non-destructive"),
    );
    // Read once: whatever follows (a check, a question, a page) is about exactly these bytes. The
    // trust map's moment is taken first, so a yes to a question about them is a gesture made
    // before any mark written after this read, and the store refuses it over one (TRUST-10).
    let shown_at = session.trust.lock().now();
    let file = match workspace_file::read(session, &path, READ_LIMIT).await {
        Ok(file) => file,
        Err(refusal) => return unread(call, &shown, &refusal),
    };
    if let Some(media_type) = picture_media_type(&path) {
        return quarantine_picture(call, &shown, media_type, file.bytes);
    }
    read_judged(call, &path, &shown, page, file, shown_at).await
}

/// What the planner is told when a file was not read, worded from its metadata alone. Recorded,
/// since a refusal is a decision.
pub(super) fn unread(call: &Call<'_>, shown: &str, refusal: &Refusal) -> ToolOutput {
    call.record(
        Gate::FileRead,
        Decision::Refused,
        format!("{} {shown}: {}", call.tool, refusal.reason()),
    );
    // A change opens the file it replaces to draw the diff: what it says is that it cannot land.
    let said = match call.tool {
        super::write_file::NAME | super::edit_file::NAME => {
            format!("{shown} cannot be changed: {}", refusal.reason())
        }
        _ => format!("{shown} was not read: {}", refusal.reason()),
    };
    match refusal {
        Refusal::Missing => ToolOutput::error(format!("no such file: {shown}")),
        Refusal::Directory if call.tool == NAME => {
            ToolOutput::error(format!("{shown} is a directory; use list_files"))
        }
        Refusal::Unreadable(_) => ToolOutput::error(said),
        _ => ToolOutput::refused(said),
    }
}

/// A read of bytes already in hand: the content-trust helper decides whether the planner may
/// read them (a rule, a verdict remembered for these bytes, or a check now); what it does not
/// clear is quarantined, after a `trustRead` question where one may be put.
async fn read_judged(
    call: &Call<'_>,
    path: &Path,
    shown: &str,
    page: Page,
    file: Contents,
    shown_at: Moment,
) -> ToolOutput {
    let session = call.session;
    // The check and the question see a labelled copy; a page, if one is presented, is made from
    // the bytes they saw and from nothing read afterwards.
    let content = Labelled::new(file.bytes.clone(), Label::UNTRUSTED_PRIVATE);
    let candidate = Candidate {
        path,
        real: &file.real,
        shown,
        bytes: &content,
        file: file.file,
    };
    let Some(judged) = content_trust::judge(call, &[candidate], 1).await.pop() else {
        return ToolOutput::error("internal: the content-trust helper judged nothing");
    };
    let hold = match judged.hold {
        None => return read_trusted(call, shown, page, file),
        Some(hold) => hold,
    };
    // What no person can change by a yes: a mark the agent's own write left, or bytes that are
    // not text (a yes would show nothing).
    if matches!(hold, Hold::Marked | Hold::Binary) {
        return quarantine_labelled(call, shown, content, hold.reason());
    }
    let origin = format!("the file {shown} in the person's workspace");
    let already_offered = session.state().approvals.was_offered(path);
    if !session.screen.interactive() {
        return quarantine_labelled(
            call,
            shown,
            content,
            &format!("{}, and nobody is watching to be asked", hold.reason()),
        );
    }
    if already_offered || call.cancel.is_cancelled() {
        return quarantine_labelled(call, shown, content, hold.reason());
    }
    // A context that met released content asks nothing that would grant it trust (CTX-2).
    if call.person_only() {
        return quarantine_labelled(
            call,
            shown,
            content,
            &format!(
                "{}, and this conversation has met released content, so the person is not asked to trust it",
                hold.reason()
            ),
        );
    }
    // The offer comes after a check of the whole file (REL-1): a file no check read (larger than
    // a check reads) is not offered, and the person may still vouch for it by their own gesture.
    // Only the person's own switch, `vetting.reads: false`, asks without one (CONTRACT §4.3).
    let Some(screening) = Screening::judged(judged, session.settings.vetting_reads) else {
        return quarantine_labelled(call, shown, content, hold.reason());
    };
    session.state().approvals.offered(path.to_path_buf());
    let question = Release {
        kind: QuestionKind::TrustRead,
        title: format!("Let the agent read {shown}?"),
        why: Some(call.why.clone()).filter(|w| !w.is_empty()),
        origin,
        content: &content,
        screening,
        grants: vec![("trust", Grant::TrustFile)],
        subject: Subject {
            path: Some(shown.to_string()),
            uri: Some(file_uri(path)),
            ..Subject::default()
        },
    }
    .prepare()
    .question;
    let answer = call.ask(question.clone()).await;
    let gesture = answer
        .approval(&question)
        .map(|yes| Gesture::new(path.to_path_buf(), Scope::File, shown_at, yes));
    // The person's yes is written to the session's one trust map, unless a mark made since the
    // read overtook it: then the bytes they were shown are no longer what the path holds.
    let vouched = gesture.map(|g| session.trust.lock().vouch(g));
    let approved = matches!(vouched, Some(Ok(())));
    {
        let mut state = session.state();
        state.audit.record(
            Gate::Question,
            if approved {
                Decision::Allowed
            } else {
                Decision::Refused
            },
            format!(
                "trustRead {shown}: {}",
                if approved {
                    "the person trusted it"
                } else {
                    "refused"
                }
            ),
        );
        if let Some(Err(overtaken)) = &vouched {
            state.audit.record(
                Gate::Trust,
                Decision::Refused,
                format!("{shown} not trusted: {overtaken}"),
            );
        }
        if approved {
            state.audit.record(
                Gate::Trust,
                Decision::Allowed,
                format!("{shown} trusted by the person (origin person)"),
            );
        }
    }
    if approved {
        read_trusted(call, shown, page, file)
    } else {
        quarantine_labelled(call, shown, content, hold.reason())
    }
}

/// Presents a page of a file whose path the trust map says is trusted, from the bytes already
/// read.
fn read_trusted(call: &Call<'_>, shown: &str, page: Page, file: Contents) -> ToolOutput {
    let session = call.session;
    let Contents { bytes, token, .. } = file;
    // The first label of these bytes as a page: trusted, because the trust map now answers for
    // the path they were read from. Bytes read before that answer are the only ones presented.
    call.record(
        Gate::FileRead,
        Decision::Allowed,
        format!(
            "file_read.path {shown} [routing] {}",
            session.state().context.label()
        ),
    );
    let Ok(opened) = policy::open(Labelled::new(bytes, Label::TRUSTED_PRIVATE)) else {
        return ToolOutput::error("internal: a trusted read did not open");
    };
    call.record(
        Gate::FileRead,
        Decision::Observed,
        format!("file_read produced {}", opened.label()),
    );
    let size = opened.value.len();
    let text = match decode_text(opened) {
        Ok(text) => text,
        Err(()) => {
            return ToolOutput::ok(
                PlannerText::driver(format!(
                    "{shown} is binary ({size} bytes); read_file shows text only"
                )),
                format!("{shown}: binary"),
            );
        }
    };
    let total = text.value.lines().count();
    if total == 0 {
        return ToolOutput::ok(
            PlannerText::driver(format!("{shown} is empty (change token {token})")),
            format!("{shown}: empty"),
        );
    }
    if page.offset > total {
        return ToolOutput::error(format!(
            "offset {} is past the end of {shown}, which has {total} lines",
            page.offset
        ));
    }
    let last = page_end(&text.value, page.offset, page.limit, total);
    let body = text.map(|t| render_page(&t, shown, page.offset, last, total, &token));
    let mut state = session.state();
    let state = &mut *state;
    let planner = policy::present(
        body,
        &format!("read_file {shown}"),
        &mut state.context,
        &mut state.audit,
    );
    ToolOutput::ok(
        planner,
        format!("{shown}: lines {}-{last} of {total}", page.offset),
    )
}

/// The last line of the page that starts at line `first` (from 1): at most `limit` lines and
/// [`MAX_PAGE_BYTES`] of them as a page shows them (shortened, numbered), and never fewer than one.
/// The text is a trusted file's, already bound for the planner.
fn page_end(text: &str, first: usize, limit: usize, total: usize) -> usize {
    let most = (first - 1).saturating_add(limit).min(total);
    let mut bytes = 0;
    let mut last = first - 1;
    for line in text.lines().skip(first - 1).take(most + 1 - first) {
        bytes += page_line(line).len() + "123456\t\n".len();
        if bytes > MAX_PAGE_BYTES && last >= first {
            break;
        }
        last += 1;
    }
    last
}

/// One line as a page shows it: shortened and marked past [`MAX_LINE_CHARS`] characters.
fn page_line(line: &str) -> std::borrow::Cow<'_, str> {
    match line.char_indices().nth(MAX_LINE_CHARS) {
        Some((cut, _)) => format!("{}… [line shortened]", &line[..cut]).into(),
        None => line.into(),
    }
}

fn render_page(
    text: &str,
    shown: &str,
    first: usize,
    last: usize,
    total: usize,
    token: &str,
) -> String {
    let mut out = format!("{shown}: lines {first}-{last} of {total}, change token {token}\n");
    for (n, line) in text
        .lines()
        .enumerate()
        .skip(first - 1)
        .take(last + 1 - first)
    {
        out.push_str(&format!("{:>6}\t{}\n", n + 1, page_line(line)));
    }
    if last < total {
        out.push_str(&format!(
            "[showing lines {first}-{last} of {total}; continue with offset {}]\n",
            last + 1
        ));
    }
    out
}

/// The one function deciding what counts as text: UTF-8 with no NUL byte.
fn decode_text(bytes: policy::Opened<Vec<u8>>) -> Result<policy::Opened<String>, ()> {
    if bytes.value.contains(&0) {
        return Err(());
    }
    match String::from_utf8(bytes.value.clone()) {
        Ok(_) => Ok(bytes.map(|b| String::from_utf8(b).unwrap_or_default())),
        Err(_) => Err(()),
    }
}

fn quarantine_labelled(
    call: &Call<'_>,
    shown: &str,
    content: Labelled<Vec<u8>>,
    why: &str,
) -> ToolOutput {
    let reference = call.quarantine(
        content,
        Origin::File {
            path: shown.to_string(),
        },
        &format!("read_file {shown}"),
        format!("the file {shown}"),
    );
    ToolOutput::ok(
        PlannerText::driver(format!(
            "{shown} is quarantined ({why}). You get a reference instead of its text: {reference}. \
             You cannot read it; you may pass the reference on."
        )),
        format!("{shown}: quarantined as {}", reference.id),
    )
}

fn quarantine_picture(
    call: &Call<'_>,
    shown: &str,
    media_type: &str,
    bytes: Vec<u8>,
) -> ToolOutput {
    let reference = call.quarantine(
        Labelled::new(bytes, Label::UNTRUSTED_PRIVATE),
        Origin::Picture {
            path: shown.to_string(),
            media_type: media_type.to_string(),
        },
        &format!("read_file {shown} (a picture)"),
        format!("the picture {shown}"),
    );
    ToolOutput::ok(
        PlannerText::driver(format!(
            "{shown} is a picture ({media_type}); pictures are always quarantined. Reference: {reference}."
        )),
        format!("{shown}: picture, quarantined as {}", reference.id),
    )
}

/// A read through a reference to a listing entry whose name the planner was not shown. The
/// bytes are quarantined whatever they are: the path itself came from content nobody vouched for.
async fn read_by_reference(call: &Call<'_>, raw: &str) -> ToolOutput {
    let session = call.session;
    let id = match call.reference("path_ref", raw) {
        Ok(id) => id,
        Err(refusal) => return refusal,
    };
    let found = {
        let mut state = session.state();
        let state = &mut *state;
        match state.quarantine.get(id) {
            None => Err(format!("{id} names nothing")),
            Some(slot) => match (slot.target(), &slot.reference.origin) {
                (
                    Some(target),
                    Origin::ListingEntry {
                        is_directory: false,
                        ..
                    },
                ) => {
                    let path = policy::path_for_read(target, &id.to_string(), &mut state.audit)
                        .to_path_buf();
                    let directory = match &slot.reference.origin {
                        Origin::ListingEntry { directory, .. } => directory.clone(),
                        _ => String::new(),
                    };
                    let origin = Origin::WithheldFile {
                        entry: id,
                        directory,
                    };
                    Ok((path, origin, slot.reference.label))
                }
                (Some(_), _) => Err(format!(
                    "{id} stands for a directory; there is nothing in it to read"
                )),
                (None, _) => Err(format!(
                    "{id} is content, not a file; pass it on instead of reading it"
                )),
            },
        }
    };
    let (path, origin, label) = match found {
        Ok(f) => f,
        Err(e) => return ToolOutput::error(e),
    };
    // Confined where the reference is resolved: a withheld entry that is a link out of the
    // workspace, or anything but a regular file, is refused before a byte of it is read.
    let bytes = match workspace_file::read(session, &path, READ_LIMIT).await {
        Ok(file) => file.bytes,
        Err(refusal) => return unread(call, &format!("the file behind {id}"), &refusal),
    };
    let content = Labelled::new(bytes, Label::UNTRUSTED_PRIVATE.join(label));
    let label = content.label();
    let reference = {
        let mut state = session.state();
        let reference = state.quarantine.put(content, origin);
        policy::withhold(
            &format!("read_file {id}"),
            label,
            &reference.id.to_string(),
            &mut state.audit,
        );
        reference
    };
    session.screen.update(Update::Quarantined {
        reference: reference.clone(),
        origin: format!("the file behind {id}"),
    });
    ToolOutput::ok(
        PlannerText::driver(format!("the file behind {id} is quarantined: {reference}")),
        format!("{id}: quarantined as {}", reference.id),
    )
}

/// The media type a picture or PDF extension names. Decided by the extension alone, never by
/// the bytes, so a file cannot become a picture by looking like one.
fn picture_media_type(path: &Path) -> Option<&'static str> {
    let ext = path.extension()?.to_str()?.to_ascii_lowercase();
    match ext.as_str() {
        "png" => Some("image/png"),
        "jpg" | "jpeg" => Some("image/jpeg"),
        "gif" => Some("image/gif"),
        "webp" => Some("image/webp"),
        "pdf" => Some("application/pdf"),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use expect_test::expect;

    // Verifies: READ-1
    #[test]
    fn read_file_page_numbers_lines_and_says_where_to_continue() {
        let text = "one\ntwo\nthree\n";
        expect![[r#"
            a.txt: lines 2-2 of 3, change token t
                 2	two
            [showing lines 2-2 of 3; continue with offset 3]
        "#]]
        .assert_eq(&render_page(text, "a.txt", 2, 2, 3, "t"));
    }

    // Verifies: READ-12
    #[test]
    fn a_page_of_long_lines_stops_at_the_byte_budget_and_says_where_to_continue() {
        let line = "x".repeat(999);
        let text = format!("{line}\n").repeat(MAX_LINES);
        let last = page_end(&text, 1, MAX_LINES, MAX_LINES);
        assert_eq!(
            last,
            MAX_PAGE_BYTES / 1007,
            "lines of 999 bytes and 8 of framing"
        );
        let page = render_page(&text, "a.txt", 1, last, MAX_LINES, "t");
        assert!(page.len() <= MAX_PAGE_BYTES + 200, "{}", page.len());
        assert!(page.ends_with(&format!(
            "[showing lines 1-{last} of {MAX_LINES}; continue with offset {}]\n",
            last + 1
        )));
        // Short lines are bounded by the line count alone; one line longer than the budget is
        // still shown (shortened), never an empty page.
        assert_eq!(page_end("a\nb\nc\n", 2, MAX_LINES, 3), 3);
        let wide = format!("{}\n", "y".repeat(MAX_PAGE_BYTES * 2));
        assert_eq!(page_end(&wide, 1, MAX_LINES, 1), 1);
    }

    // Verifies: READ-6
    #[test]
    fn read_file_pictures_are_known_by_extension_only() {
        assert_eq!(picture_media_type(Path::new("a/b.PNG")), Some("image/png"));
        assert_eq!(
            picture_media_type(Path::new("doc.pdf")),
            Some("application/pdf")
        );
        assert_eq!(picture_media_type(Path::new("png.txt")), None);
    }
}
