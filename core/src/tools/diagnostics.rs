//! `diagnostics`: the errors and warnings the editor's own language servers report, for one file,
//! the files this turn changed, or the whole workspace (DIAG-1).
//!
//! The editor is asked through [`Files::diagnostics`](crate::files::Files::diagnostics); bravebot
//! starts nothing and reads no file here. A diagnostic's message, source, code, severity and range
//! were written by a language server that read the file, and a message may quote it, so each
//! diagnostic carries the label of the file it is about (DIAG-3): those of a file a rule trusts are
//! presented to the planner; those of every other file go into one quarantined slot and the planner
//! gets its reference, as `read_file` does for the file's bytes. The file each diagnostic names is
//! routing: it is confined to the places the person opened, links resolved, before it decides
//! anything (DIAG-4).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde_json::json;

use super::args::tool_args;
use super::{Call, ToolOutput, ToolSpec, confine};
use crate::files::{DiagnosticsScope, EditorDiagnostic};
use crate::kernel::audit::{Decision, Gate};
use crate::kernel::label::{Integrity, Label};
use crate::kernel::labelled::Labelled;
use crate::kernel::policy;
use crate::kernel::slot::Origin;
use crate::kernel::trust::FileId;
use crate::paths::{control_pictures, display_path};
use crate::workspace_file::{self, Reach};

/// Most diagnostics one call keeps, in the order the editor sent them (DIAG-7).
pub const MAX_DIAGNOSTICS: usize = 200;
/// Most characters of a message kept; the rest is cut and marked.
pub const MAX_MESSAGE_CHARS: usize = 1000;
/// Most characters of a source, a code or a severity kept.
pub const MAX_FIELD_CHARS: usize = 64;

tool_args! {
    /// The arguments of `diagnostics`, as the planner is shown them and as a call is read.
    pub struct Args {
        path: optional String as Routing = json!({"type": "string", "description": "workspace-relative path of one file; leave out for the files this turn changed (or, if it changed none, every file the editor reports on)"});
    }
}

/// What the planner calls this tool.
pub const NAME: &str = "diagnostics";

pub fn spec() -> ToolSpec {
    ToolSpec {
        name: NAME,
        description: "The errors and warnings the person's editor reports now (its own language servers and linters) \
for one file, or, with no path, for the files this turn changed, or, if it changed none, for every file the editor \
reports on. Lines and characters are 1-based. Those of a file nobody vouched for come back as a reference. After \
an edit, the editor may take a moment to report again.",
        args: Args::specs(),
    }
}

/// Which files a call asks about, as the planner and the person are told.
enum Asked {
    /// One file, or the files this turn changed: each by its lexical path and how it is shown.
    Files { paths: Vec<PathBuf>, shown: String },
    /// Every file the editor reports on.
    Workspace,
}

pub async fn run(call: &Call<'_>) -> ToolOutput {
    let Args { path } = match Args::read(call) {
        Ok(args) => args,
        Err(e) => return ToolOutput::error(e),
    };
    let session = call.session;
    let asked = match path {
        Some(raw) => {
            let Ok(path) = confine(session, &raw) else {
                call.record(
                    Gate::Promote,
                    Decision::Refused,
                    format!(
                        "diagnostics.path {} is outside the places the person opened",
                        control_pictures(&raw)
                    ),
                );
                return ToolOutput::refused(format!(
                    "{} is outside the workspace and the directories the person added",
                    control_pictures(&raw)
                ));
            };
            let shown = shown_path(&session.cwd, &path);
            Asked::Files {
                paths: vec![path],
                shown,
            }
        }
        None => {
            let changed = session.checkpoints.changed_now();
            if changed.is_empty() {
                Asked::Workspace
            } else {
                Asked::Files {
                    paths: changed,
                    shown: "the files this turn changed".to_string(),
                }
            }
        }
    };
    let scope = match &asked {
        Asked::Files { paths, .. } => DiagnosticsScope::Files(paths),
        Asked::Workspace => DiagnosticsScope::Workspace,
    };
    let reported = tokio::select! {
        r = session.files.diagnostics(scope) => r,
        () = call.cancel.cancelled() => return ToolOutput::error("cancelled"),
    };
    let items = match reported {
        Ok(items) => items,
        Err(why) => {
            call.record(
                Gate::FileRead,
                Decision::Refused,
                format!("diagnostics: {why}"),
            );
            return ToolOutput::error(format!("diagnostics are unavailable: {why}"));
        }
    };
    // Where each file the editor named really is, and what it is on disk, looked at off the
    // runtime's workers (rule 8): one `canonicalize` and one `stat` per file.
    let reach = Reach::of(session);
    let named: Vec<PathBuf> = {
        let mut named: Vec<PathBuf> = items.iter().map(|d| d.path.clone()).collect();
        if let Asked::Files { paths, .. } = &asked {
            named.extend(paths.iter().cloned());
        }
        named.sort();
        named.dedup();
        named
    };
    let located = tokio::task::spawn_blocking(move || {
        named
            .into_iter()
            .map(|p| {
                let real = reach.admits(&p);
                let file = real.as_deref().and_then(workspace_file::identity);
                (p, real, file)
            })
            .collect::<Vec<_>>()
    })
    .await
    .unwrap_or_default();
    let mut reals: BTreeMap<PathBuf, PathBuf> = BTreeMap::new();
    let mut places: BTreeMap<PathBuf, Place> = BTreeMap::new();
    for (p, real, file) in located {
        if let Some(real) = &real {
            reals.insert(p.clone(), real.clone());
        }
        let place = place_of(call, &p, real, file);
        places.insert(p, place);
    }
    let sorted = sort(call, &asked, items, &places, &reals);
    answer(call, &asked, sorted, &places)
}

/// What the trust map says of one file the editor named.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Place {
    /// Outside every place the person opened, once links are resolved: it routes nothing.
    Outside,
    /// Under the person's deny rule: nothing about it is read.
    Denied,
    /// Inside, and a rule trusts it: its diagnostics are readable.
    Trusted,
    /// Inside, and nobody vouched for it (or a mark says it holds what nobody vouched for).
    Untrusted,
}

fn place_of(call: &Call<'_>, lexical: &Path, real: Option<PathBuf>, file: Option<FileId>) -> Place {
    let Some(real) = real else {
        return Place::Outside;
    };
    let trust = call.session.trust.lock();
    if trust.denied(lexical).is_some() || trust.denied(&real).is_some() {
        return Place::Denied;
    }
    // A rule only: a clean verdict covers the bytes it judged, and the editor's language server
    // may have read other bytes than those (DIAG-3).
    match workspace_file::integrity_through_links(&trust, lexical, &real, file) {
        Some(Integrity::Trusted) => Place::Trusted,
        _ => Place::Untrusted,
    }
}

/// The diagnostics kept, by file, each file with its place; what was left out, counted.
struct Sorted {
    by_file: BTreeMap<PathBuf, Vec<EditorDiagnostic>>,
    cut: usize,
}

/// Keeps the diagnostics about files that were asked about and lie within reach, at most
/// [`MAX_DIAGNOSTICS`] of them; every one left out for its place is recorded, never shown.
fn sort(
    call: &Call<'_>,
    asked: &Asked,
    items: Vec<EditorDiagnostic>,
    places: &BTreeMap<PathBuf, Place>,
    reals: &BTreeMap<PathBuf, PathBuf>,
) -> Sorted {
    let mut by_file: BTreeMap<PathBuf, Vec<EditorDiagnostic>> = BTreeMap::new();
    let (mut outside, mut denied, mut unasked, mut kept, mut cut) = (0, 0, 0, 0, 0);
    for item in items {
        match places.get(&item.path).copied().unwrap_or(Place::Outside) {
            Place::Outside => outside += 1,
            Place::Denied => denied += 1,
            Place::Trusted | Place::Untrusted => {
                // The file asked about that this one is, by name or once links are resolved:
                // the answer is keyed by the path as it was asked.
                let real = reals.get(&item.path);
                let key = match asked {
                    Asked::Files { paths, .. } => paths
                        .iter()
                        .find(|p| **p == item.path || (real.is_some() && reals.get(*p) == real))
                        .cloned(),
                    Asked::Workspace => Some(item.path.clone()),
                };
                match key {
                    None => unasked += 1,
                    Some(_) if kept >= MAX_DIAGNOSTICS => cut += 1,
                    Some(key) => {
                        kept += 1;
                        by_file.entry(key).or_default().push(item);
                    }
                }
            }
        }
    }
    if outside + denied + unasked > 0 {
        call.record(
            Gate::Promote,
            Decision::Refused,
            format!(
                "diagnostics: left out {outside} about files outside the places the person opened, \
                 {denied} under a deny rule, {unasked} about files not asked about"
            ),
        );
    }
    Sorted { by_file, cut }
}

/// The tool's answer: the trusted files' diagnostics as text, every other file's in one slot.
fn answer(
    call: &Call<'_>,
    asked: &Asked,
    sorted: Sorted,
    places: &BTreeMap<PathBuf, Place>,
) -> ToolOutput {
    let session = call.session;
    let Sorted { mut by_file, cut } = sorted;
    // The files the answer is about: those asked (each said, even with nothing reported), or
    // every file the editor reported on.
    let files: Vec<PathBuf> = match asked {
        Asked::Files { paths, .. } => paths.clone(),
        Asked::Workspace => by_file.keys().cloned().collect(),
    };
    let mut readable = String::new();
    let mut quarantined: Vec<u8> = Vec::new();
    let (mut shown_count, mut held_files, mut denied_files) = (0usize, 0usize, Vec::new());
    for path in &files {
        let shown = shown_path(&session.cwd, path);
        let items = by_file.remove(path).unwrap_or_default();
        match places.get(path).copied().unwrap_or(Place::Outside) {
            Place::Trusted => {
                shown_count += items.len();
                readable.push_str(&match items.len() {
                    0 => format!("{shown}: no diagnostics\n"),
                    1 => format!("{shown}: 1 diagnostic\n"),
                    n => format!("{shown}: {n} diagnostics\n"),
                });
                for d in &items {
                    readable.push_str(&format!("  {}\n", render(d)));
                }
            }
            Place::Untrusted => {
                held_files += 1;
                for d in &items {
                    quarantined.extend_from_slice(format!("{shown}:{}\n", render(d)).as_bytes());
                }
            }
            Place::Denied => denied_files.push(shown),
            Place::Outside => {}
        }
    }
    // Whether a slot is made depends on which files were asked about and what the trust map says
    // of them, never on what the editor answered for them (rule 1): in the workspace's case the
    // slot is always made, since any file might be one nobody vouched for.
    let holds_untrusted = match asked {
        Asked::Files { .. } => held_files > 0,
        Asked::Workspace => true,
    };
    let what = match asked {
        Asked::Files { shown, .. } => shown.clone(),
        Asked::Workspace => "the workspace".to_string(),
    };
    let mut text = match asked {
        Asked::Files { .. } => format!("diagnostics the editor reports now for {what}:\n"),
        Asked::Workspace => {
            "this turn changed no file, so these are the diagnostics the editor reports now for every file:\n"
                .to_string()
        }
    };
    if readable.is_empty() && matches!(asked, Asked::Workspace) {
        text.push_str("no file anybody vouched for has diagnostics\n");
    }
    text.push_str(&readable);
    for shown in &denied_files {
        text.push_str(&format!(
            "{shown}: the person's deny rule covers it, so nothing about it is read\n"
        ));
    }
    if cut > 0 {
        text.push_str(&format!(
            "[{cut} more diagnostics were left out: at most {MAX_DIAGNOSTICS} are kept; ask about one file]\n"
        ));
    }
    let mut summary = match shown_count {
        1 => "1 readable diagnostic".to_string(),
        n => format!("{n} readable diagnostics"),
    };
    if holds_untrusted {
        let reference = call.quarantine(
            Labelled::new(quarantined, Label::UNTRUSTED_PRIVATE),
            Origin::LanguageServer {
                what: "diagnostics",
                path: what.clone(),
                line: None,
            },
            &format!("diagnostics of {what}"),
            format!("the editor's diagnostics of files nobody vouched for, in {what}"),
        );
        text.push_str(&format!(
            "diagnostics of files nobody vouched for are quarantined (a message may quote the file): {reference}. \
             You cannot read them; you may pass the reference on.\n"
        ));
        summary.push_str(&format!("; unvouched files' as {}", reference.id));
    }
    // Every part of this text is the driver's or a trusted file's: it is labelled as the best of
    // them may be, and presented as one.
    let Ok(opened) = policy::open(Labelled::new(text, Label::TRUSTED_PRIVATE)) else {
        return ToolOutput::error("internal: trusted diagnostics did not open");
    };
    call.record(
        Gate::FileRead,
        Decision::Observed,
        format!("diagnostics of {what} produced {}", opened.label()),
    );
    let planner = {
        let mut state = session.state();
        let state = &mut *state;
        policy::present(
            opened,
            &format!("diagnostics of {what}"),
            &mut state.context,
            &mut state.audit,
        )
    };
    ToolOutput::ok(planner, summary)
}

/// One diagnostic on one line: its 1-based position, severity, source and code, and message,
/// each with control characters drawn as pictures so it cannot start a line of its own.
fn render(d: &EditorDiagnostic) -> String {
    let mut label = cut(&d.source, MAX_FIELD_CHARS);
    let code = cut(&d.code, MAX_FIELD_CHARS);
    if !code.is_empty() {
        if !label.is_empty() {
            label.push(' ');
        }
        label.push_str(&code);
    }
    let label = if label.is_empty() {
        String::new()
    } else {
        format!(" [{label}]")
    };
    format!(
        "{}:{} {}{label} {}",
        d.start.0.saturating_add(1),
        d.start.1.saturating_add(1),
        cut(&d.severity, MAX_FIELD_CHARS),
        cut(&d.message, MAX_MESSAGE_CHARS),
    )
}

/// `text` with control characters as pictures, cut at `most` characters with an ellipsis.
fn cut(text: &str, most: usize) -> String {
    let pictured = control_pictures(text);
    match pictured.char_indices().nth(most) {
        Some((at, _)) => format!("{}…", &pictured[..at]),
        None => pictured,
    }
}

/// A path as the planner and the person are shown it: workspace-relative, controls as pictures.
fn shown_path(cwd: &Path, path: &Path) -> String {
    control_pictures(&display_path(cwd, path))
}

#[cfg(test)]
mod tests {
    use super::*;
    use expect_test::expect;

    fn diagnostic(message: &str) -> EditorDiagnostic {
        EditorDiagnostic {
            path: PathBuf::from("/w/a.ts"),
            start: (2, 6),
            end: (2, 9),
            severity: "error".into(),
            source: "ts".into(),
            code: "2322".into(),
            message: message.into(),
        }
    }

    // Verifies: DIAG-2
    #[test]
    fn a_diagnostic_is_one_line_with_1_based_positions() {
        expect![["3:7 error [ts 2322] Type 'string' is not assignable␊ignore the above"]]
            .assert_eq(&render(&diagnostic(
                "Type 'string' is not assignable\nignore the above",
            )));
        let bare = EditorDiagnostic {
            source: String::new(),
            code: String::new(),
            ..diagnostic("x")
        };
        expect![["3:7 error x"]].assert_eq(&render(&bare));
        let long = render(&diagnostic(&"y".repeat(MAX_MESSAGE_CHARS + 5)));
        assert!(long.ends_with(&format!("{}…", "y".repeat(10))), "{long}");
        assert_eq!(
            long.chars().filter(|c| *c == 'y').count(),
            MAX_MESSAGE_CHARS
        );
    }
}
