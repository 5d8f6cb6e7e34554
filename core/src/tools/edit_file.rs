//! `edit_file`: replace one passage of a file the planner may read, with the person's approval.
//!
//! Locating the passage is a decision, so the file must be trusted: a file nobody vouched for is
//! shown to the check first (as a read would be), and one marked untrusted is refused. `old_text`
//! is matched byte for byte in the open buffer's text where the editor has the file open, and must
//! occur exactly once unless `replace_all` says otherwise: the tool refuses rather than guesses.

use serde_json::json;

use super::args::tool_args;
use super::content_trust::{self, Candidate, Hold};
use super::land::{self, Target};
use super::{Call, ToolOutput, ToolSpec, change_token, confine};
use crate::kernel::audit::{Decision, Gate};
use crate::kernel::label::Label;
use crate::kernel::labelled::Labelled;
use crate::kernel::policy;
use crate::paths::display_path;
use crate::screen::QuestionKind;
use crate::workspace_file;

tool_args! {
    /// The arguments of `edit_file`, as the planner is shown them and as a call is read.
    pub struct Args {
        path: optional String as Routing = json!({"type": "string", "description": "workspace-relative path"});
        path_ref: optional String as Routing = json!({"type": "string", "description": "a reference to a file whose name you were not shown"});
        old_text: required String as Content = json!({"type": "string", "description": "the exact text to replace"});
        new_text: required String as Content = json!({"type": "string", "description": "what replaces it"});
        replace_all: switch bool as Routing = json!({"type": "boolean", "description": "replace every occurrence (default false)"});
    }
}

/// What the planner calls this tool.
pub const NAME: &str = "edit_file";

pub fn spec() -> ToolSpec {
    ToolSpec {
        name: NAME,
        description: "Replace a passage of a workspace file. `old_text` must match the file's current text byte for \
byte (read it first), and occur exactly once unless `replace_all` is true. The person sees the diff and may accept \
all of it, some hunks, or their own version; the result says exactly what landed.",
        args: Args::specs(),
    }
}

pub async fn run(call: &Call<'_>) -> ToolOutput {
    let Args {
        path,
        path_ref,
        old_text,
        new_text,
        replace_all,
    } = match Args::read(call) {
        Ok(args) => args,
        Err(e) => return ToolOutput::error(e),
    };
    let (path, path_ref, old_text, new_text) = (
        path.as_deref(),
        path_ref.as_deref(),
        old_text.as_str(),
        new_text.as_str(),
    );
    let raw = match (path, path_ref) {
        (Some(_), Some(_)) => {
            return ToolOutput::error("give either `path` or `path_ref`, not both");
        }
        (None, None) => return ToolOutput::error("edit_file needs `path` or `path_ref`"),
        (None, Some(r)) => {
            // The file behind a withheld name holds content nobody vouched for (its path came from
            // such content), and finding a passage in it would be a decision taken on it.
            return ToolOutput::refused(format!(
                "{} names a file whose content nobody vouched for, so no passage can be located in it; \
                 replace it whole with write_file and contents_ref instead",
                crate::paths::control_pictures(r)
            ));
        }
        (Some(p), None) => p,
    };
    if old_text.is_empty() {
        return ToolOutput::error(
            "`old_text` is empty; to create or replace a whole file use write_file",
        );
    }
    let Ok(path) = confine(call.session, raw) else {
        call.record(
            Gate::Promote,
            Decision::Refused,
            format!("edit_file.path {raw} is outside the places the person opened"),
        );
        return ToolOutput::refused(format!(
            "{raw} is outside the workspace and the directories the person added"
        ));
    };
    let path = crate::workspace_file::real_path(&path);
    let shown = display_path(&call.session.cwd, &path);
    // One read: the bytes a check is shown are the bytes `old_text` is found in and the original
    // the diff is drawn from. The open buffer's text where the editor has the file open, else the
    // disk's, which must pass the confined reader either way.
    call.session.files.refresh(&path).await;
    let buffer = call.session.files.buffer(&path);
    // An open buffer over the bound is refused by its length alone, before anything copies it
    // (its text is shared with the editor's mirror, so measuring it costs nothing).
    if let Some(refusal) = buffer
        .as_ref()
        .and_then(|(text, _)| workspace_file::over_bound(text, workspace_file::READ_LIMIT))
    {
        return super::read_file::unread(call, &shown, &refusal);
    }
    // Where the editor has the file open, its copy on disk is only checked (what is edited is the
    // buffer, and a change lands only in the buffer): reading it too would copy the file once
    // more for nothing.
    let (disk, checked_real) = if buffer.is_some() {
        match workspace_file::check_disk(call.session, &path, workspace_file::READ_LIMIT).await {
            Ok(real) => (None, Some(real)),
            Err(workspace_file::Refusal::Missing) => (None, None),
            Err(refusal) => return super::read_file::unread(call, &shown, &refusal),
        }
    } else {
        match land::read_disk(call, &path, &shown).await {
            Ok(disk) => (disk, None),
            Err(refusal) => return refusal,
        }
    };
    let current = match (&buffer, &disk) {
        (Some((text, _)), _) => text.as_bytes().to_vec(),
        (None, Some(file)) => file.bytes.clone(),
        (None, None) => {
            return ToolOutput::error(format!(
                "no such file: {shown}; use write_file to create it"
            ));
        }
    };
    let real = disk
        .as_ref()
        .map(|d| d.real.clone())
        .or(checked_real)
        .unwrap_or_else(|| path.clone());
    // Locating a passage is a decision on the file's text, so the file must be one the planner
    // may read: through the same helper a read uses, over exactly these bytes.
    let content = Labelled::new(current.clone(), Label::UNTRUSTED_PRIVATE);
    let candidate = Candidate {
        path: &path,
        real: &real,
        shown: &shown,
        bytes: &content,
        file: disk.as_ref().and_then(|d| d.file),
    };
    let judged = content_trust::judge(call, &[candidate], 1).await.pop();
    match judged.and_then(|j| j.hold) {
        None => {}
        Some(Hold::Marked) => {
            return ToolOutput::refused(format!(
                "{shown} holds content nobody vouched for, so no passage can be located in it; \
                 replace it whole with write_file instead, or ask the person to trust it"
            ));
        }
        Some(hold) => {
            return ToolOutput::refused(format!(
                "{shown} cannot be edited: {}; ask the person to trust it, or replace it whole with write_file",
                hold.reason()
            ));
        }
    }
    let target = Target::with(call, path.clone(), shown.clone(), buffer, disk);
    // The first label of these bytes as an edit's original: trusted, because the trust map now
    // answers for their path; they are the bytes the check (if one ran) was shown.
    let Ok(opened) = policy::open(Labelled::new(current, Label::TRUSTED_PRIVATE)) else {
        return ToolOutput::error("internal: a trusted file did not open");
    };
    let Ok(text) = String::from_utf8(opened.value) else {
        return ToolOutput::error(format!("{shown} is not text; edit_file edits text only"));
    };
    // One vector search finds every occurrence; `str::matches` would step the text a byte at a
    // time, as `replacen` would again.
    // Only `replace_all` needs every place; otherwise two tell once from several, and a refusal
    // counts the rest without keeping them.
    let finder = memchr::memmem::Finder::new(old_text.as_bytes());
    let places = finder.find_iter(text.as_bytes());
    let found: Vec<usize> = if replace_all {
        places.collect()
    } else {
        places.take(2).collect()
    };
    let count = if replace_all || found.len() < 2 {
        found.len()
    } else {
        finder.find_iter(text.as_bytes()).count()
    };
    let token = change_token(&path, target.buffer.as_ref().map(|(_, v)| *v));
    let new = match (count, replace_all) {
        (0, _) => {
            return ToolOutput::error(format!(
                "`old_text` does not occur in {shown} (change token {token}); read the file again and copy the passage exactly"
            ));
        }
        (1, _) => replaced(&text, &found, old_text.len(), new_text),
        (n, false) => {
            return ToolOutput::error(format!(
                "`old_text` occurs {n} times in {shown}; include more surrounding text so it occurs once, or set replace_all"
            ));
        }
        (_, true) => replaced(&text, &found, old_text.len(), new_text),
    };
    // The planner wrote `new_text` in a context the routing gate found clean: trusted by
    // provenance, as private as that context.
    let label = call
        .session
        .state()
        .context
        .label()
        .join(Label::TRUSTED_PRIVATE);
    let original = Labelled::new(text, Label::TRUSTED_PRIVATE);
    land::propose(
        call,
        QuestionKind::Edit,
        target,
        original,
        Labelled::new(new, label),
    )
    .await
}

/// `text` with the `len` bytes at each of `at` (ascending, apart) replaced by `with`.
fn replaced(text: &str, at: &[usize], len: usize, with: &str) -> String {
    let grown = text.len() - at.len() * len + at.len() * with.len();
    let mut out = String::with_capacity(grown);
    let mut from = 0;
    for &start in at {
        out.push_str(&text[from..start]);
        out.push_str(with);
        from = start + len;
    }
    out.push_str(&text[from..]);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    // Verifies: EDIT-1
    #[test]
    fn replacing_at_the_found_places_gives_what_str_replace_gives() {
        let cases = [
            ("one two one two", "one", "1"),
            ("aaaa", "aa", "b"),
            ("ééé", "é", "e"),
            ("x\ny\nx\n", "x\n", ""),
            ("start middle end", "end", "finish, at length"),
        ];
        for (text, old, new) in cases {
            let found: Vec<usize> = memchr::memmem::find_iter(text.as_bytes(), old).collect();
            assert_eq!(found.len(), text.matches(old).count(), "{text:?}");
            assert_eq!(
                replaced(text, &found, old.len(), new),
                text.replace(old, new)
            );
            assert_eq!(
                replaced(text, &found[..1], old.len(), new),
                text.replacen(old, new, 1)
            );
        }
    }
}
