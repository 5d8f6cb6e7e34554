//! The editor's open buffers, as everything that reads or lands a file sees them.

use std::path::{Path, PathBuf};

use crate::screen::BoxFuture;

/// One problem the editor's own language servers report for a file, as the editor sent it. The
/// editor names the file (`path`, checked by whoever uses it before it routes anything); every
/// other field was written by a language server that read the file, so it is labelled as the
/// file is (DIAG-3).
#[derive(Clone, Debug, Default)]
pub struct EditorDiagnostic {
    /// The absolute path of the file, from the editor's URI.
    pub path: PathBuf,
    /// Where it starts and ends, 0-based lines and characters as the editor counts them.
    pub start: (u64, u64),
    pub end: (u64, u64),
    /// `error`, `warning`, `information` or `hint`, as the editor's language server said.
    pub severity: String,
    /// The language server or linter that reported it, and its code, where it gave them.
    pub source: String,
    pub code: String,
    pub message: String,
}

/// Which files' diagnostics to ask the editor for.
#[derive(Clone, Copy, Debug)]
pub enum DiagnosticsScope<'a> {
    /// These absolute paths only.
    Files(&'a [PathBuf]),
    /// Every file the editor holds diagnostics for.
    Workspace,
}

/// What an editor that cannot be asked for its diagnostics is said to be (DIAG-8).
pub const NO_DIAGNOSTICS: &str = "this editor does not report its diagnostics to bravebot";

/// The editor's open buffers. A file that is open is read from its buffer, unsaved changes and
/// all; a file that is not open is read from disk.
pub trait Files: Send + Sync {
    /// The text and version of the buffer open for this absolute path, if any: a shared snapshot,
    /// so reading it twice at one version copies nothing.
    fn buffer(&self, path: &Path) -> Option<(std::sync::Arc<str>, i32)>;

    /// The version of the buffer open for this path, if any, without reading its text.
    fn version(&self, path: &Path) -> Option<i32> {
        self.buffer(path).map(|(_, v)| v)
    }

    /// Brings what [`Files::buffer`] holds for `path` up to date, for an editor that is asked for
    /// a file's text rather than told of it (ACP's `fs/read_text_file`). Called before a read
    /// and before a change lands; an editor that keeps its buffers in step needs nothing here.
    fn refresh<'a>(&'a self, _path: &'a Path) -> BoxFuture<'a, ()> {
        Box::pin(async {})
    }

    /// Whether [`Files::refresh`] asks the editor anything, so a read that would not need it
    /// costs nothing more.
    fn refreshes(&self) -> bool {
        false
    }

    /// Changes an open buffer, whose text at `version` is `original`, by whole-line `edits`
    /// through the editor, so undo and dirty state stay the editor's. Refused when the buffer is
    /// no longer at `version`.
    fn apply_edit<'a>(
        &'a self,
        path: &'a Path,
        version: i32,
        original: &'a str,
        edits: &'a [crate::kernel::proposal::LineEdit],
    ) -> BoxFuture<'a, Result<(), String>>;

    /// Whether [`Files::diagnostics`] asks an editor that declared it answers, fixed when the
    /// editor connects: `diagnostics` is offered only where it is (TOOL-7).
    fn answers_diagnostics(&self) -> bool {
        false
    }

    /// The diagnostics the editor's own language servers report now for the files in `scope`,
    /// or why the editor cannot say. An editor that does not declare it answers, and every
    /// client but an editor's, says [`NO_DIAGNOSTICS`].
    fn diagnostics<'a>(
        &'a self,
        _scope: DiagnosticsScope<'a>,
    ) -> BoxFuture<'a, Result<Vec<EditorDiagnostic>, String>> {
        Box::pin(async { Err(NO_DIAGNOSTICS.to_string()) })
    }
}

/// No editor: every file is read from disk (`bravebot exec`).
pub struct DiskOnly;

impl Files for DiskOnly {
    fn buffer(&self, _path: &Path) -> Option<(std::sync::Arc<str>, i32)> {
        None
    }

    fn apply_edit<'a>(
        &'a self,
        _path: &'a Path,
        _version: i32,
        _original: &'a str,
        _edits: &'a [crate::kernel::proposal::LineEdit],
    ) -> BoxFuture<'a, Result<(), String>> {
        Box::pin(async { Err("no editor holds this buffer".to_string()) })
    }
}
