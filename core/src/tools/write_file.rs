//! `write_file`: create or replace a whole file, with the person's approval.
//!
//! What is written is `contents` (text the planner wrote) or `contents_ref` (a quarantined slot
//! the planner cannot read, carried into the file unread); where is `path`, or `path_ref` for a
//! file whose name the planner was not shown. Data nobody vouched for marks its destination
//! untrusted for the session, and the file keeps the trailing-newline convention it had.

use serde_json::json;

use super::args::tool_args;
use super::land::{self, Target};
use super::spawn_processor::Destination;
use super::{Call, ToolOutput, ToolSpec, confine};
use crate::kernel::audit::{Decision, Gate};
use crate::kernel::label::Label;
use crate::kernel::labelled::Labelled;
use crate::kernel::policy;
use crate::kernel::slot::{Origin, SlotId};
use crate::paths::display_path;
use crate::screen::QuestionKind;

tool_args! {
    /// The arguments of `write_file`, as the planner is shown them and as a call is read.
    pub struct Args {
        path: optional String as Routing = json!({"type": "string", "description": "workspace-relative path"});
        path_ref: optional String as Routing = json!({"type": "string", "description": "a reference to a file whose name you were not shown"});
        contents: optional String as Content = json!({"type": "string", "description": "the whole new contents"});
        contents_ref: optional String as Routing = json!({"type": "string", "description": "a reference whose content becomes the file, e.g. ref:3"});
    }
}

/// What the planner calls this tool.
pub const NAME: &str = "write_file";

pub fn spec() -> ToolSpec {
    ToolSpec {
        name: NAME,
        description: "Create a file or replace one whole. Give `contents` (your text) or `contents_ref` (a reference \
such as ref:3, written without you reading it), and `path` or `path_ref`. The person sees the diff and decides; the \
result says exactly what landed.",
        args: Args::specs(),
    }
}

/// Resolves a reference the planner named, refusing when its context may name none.
fn named_reference(call: &Call<'_>, raw: &str, arg: &str) -> Result<SlotId, ToolOutput> {
    call.reference(arg, raw)
}

pub async fn run(call: &Call<'_>) -> ToolOutput {
    let Args {
        path,
        path_ref,
        contents,
        contents_ref,
    } = match Args::read(call) {
        Ok(args) => args,
        Err(e) => return ToolOutput::error(e),
    };
    let (path, path_ref, contents, contents_ref) = (
        path.as_deref(),
        path_ref.as_deref(),
        contents.as_deref(),
        contents_ref.as_deref(),
    );
    let session = call.session;
    // The withheld listing entry a `path_ref` names, if one does: a processor's document about
    // that file may be written back through it.
    let mut entry_id = None;
    let (path, shown) = match (path, path_ref) {
        (Some(_), Some(_)) => {
            return ToolOutput::error("give either `path` or `path_ref`, not both");
        }
        (None, None) => return ToolOutput::error("write_file needs `path` or `path_ref`"),
        (Some(raw), None) => {
            let Ok(path) = confine(session, raw) else {
                call.record(
                    Gate::Promote,
                    Decision::Refused,
                    format!("write_file.path {raw} is outside the places the person opened"),
                );
                return ToolOutput::refused(format!(
                    "{raw} is outside the workspace and the directories the person added"
                ));
            };
            let path = crate::workspace_file::real_path(&path);
            let shown = display_path(&session.cwd, &path);
            (path, shown)
        }
        (None, Some(raw)) => {
            let id = match named_reference(call, raw, "path_ref") {
                Ok(id) => id,
                Err(e) => return e,
            };
            entry_id = Some(id);
            let entry = {
                let mut state = session.state();
                let state = &mut *state;
                let found = state
                    .quarantine
                    .get(id)
                    .map(|slot| (slot.target().cloned(), slot.reference.origin.clone()));
                match found {
                    Some((
                        Some(target),
                        Origin::ListingEntry {
                            is_directory: false,
                            ..
                        },
                    )) => policy::path_for_read(&target, &id.to_string(), &mut state.audit)
                        .to_path_buf(),
                    Some((Some(_), _)) => {
                        return ToolOutput::error(format!(
                            "{id} stands for a directory, not a file"
                        ));
                    }
                    Some((None, _)) => {
                        return ToolOutput::error(format!(
                            "{id} is content, not a file; pass it as contents_ref"
                        ));
                    }
                    None => return ToolOutput::error(format!("{id} names nothing")),
                }
            };
            // Confined where the reference is resolved: the entry must be a regular file within
            // reach once its links are followed, and the write goes to where it really is, so a
            // link in an untrusted directory is neither followed out nor replaced.
            let shown = format!("the file behind {id}");
            match crate::workspace_file::locate(session, &entry).await {
                Ok(real) => (real, shown),
                Err(refusal) => return super::read_file::unread(call, &shown, &refusal),
            }
        }
    };
    let content: Labelled<Vec<u8>> = match (contents, contents_ref) {
        (Some(_), Some(_)) => {
            return ToolOutput::error("give either `contents` or `contents_ref`, not both");
        }
        (None, None) => return ToolOutput::error("write_file needs `contents` or `contents_ref`"),
        (Some(text), None) => {
            // Written by the planner in a context the routing gate found clean.
            let label = session.state().context.label().join(Label::TRUSTED_PRIVATE);
            Labelled::new(text.as_bytes().to_vec(), label)
        }
        (None, Some(raw)) => {
            let id = match named_reference(call, raw, "contents_ref") {
                Ok(id) => id,
                Err(e) => return e,
            };
            let found = session
                .state()
                .quarantine
                .get(id)
                .map(|slot| (slot.content().clone(), slot.reference.origin.clone()));
            let Some((content, origin)) = found else {
                return ToolOutput::error(format!("{id} names nothing"));
            };
            // A processor's document goes only to the file its call was about.
            match super::spawn_processor::destination(&session.cwd, &origin) {
                Destination::Any => {}
                Destination::File(allowed)
                    if crate::workspace_file::real_path(&allowed) == path => {}
                Destination::Entry(entry) if entry_id == Some(entry) => {}
                Destination::Entry(entry) => {
                    call.record(
                        Gate::Promote,
                        Decision::Refused,
                        format!(
                            "write_file: {id} is a processor's document for the file behind {entry}"
                        ),
                    );
                    return ToolOutput::refused(format!(
                        "{id} is a processor's document for the file behind {entry}, and may be written only there (path_ref {entry})"
                    ));
                }
                Destination::File(allowed) => {
                    call.record(
                        Gate::Promote,
                        Decision::Refused,
                        format!("write_file: {id} is a processor's document for another file"),
                    );
                    return ToolOutput::refused(format!(
                        "{id} is a processor's document for {}, and may be written only there",
                        display_path(&session.cwd, &allowed)
                    ));
                }
                Destination::Nowhere => {
                    call.record(
                        Gate::Promote,
                        Decision::Refused,
                        format!("write_file: {id} is about no file"),
                    );
                    return ToolOutput::refused(format!(
                        "{id} is a processor's document about no file, so it can be written nowhere"
                    ));
                }
            }
            content
        }
    };
    let by_reference = path_ref.is_some();
    let mut target = match Target::read(call, path.clone(), shown).await {
        Ok(t) => t,
        Err(e) => return e,
    };
    target.by_reference = by_reference;
    let content = policy::keep_trailing_newline(target.disk.as_ref(), content);
    let original = target.original();
    let proposed = policy::text_for_display(&content);
    land::propose(call, QuestionKind::Write, target, original, proposed).await
}
