//! The `diagnostics` tool against an editor of the test's own: each diagnostic takes the label of
//! the file it is about (DIAG-3).

#![allow(clippy::unwrap_used)]

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use bravebot_core::files::{DiagnosticsScope, EditorDiagnostic, Files};
use bravebot_core::kernel::policy;
use bravebot_core::kernel::proposal::LineEdit;
use bravebot_core::kernel::slot::SlotId;
use bravebot_core::screen::{Answer, BoxFuture, StopReason};
use bravebot_core::settings::Settings;
use bravebot_tests::fake_model::{FakeModel, Reply};
use serde_json::json;

mod common;

use common::{TestScreen, fixture_with_files};

const PLANTED: &str = "PLANTED-in-a-diagnostic-4410";

/// An editor whose language servers report `held` (filled in once the workspace exists).
#[derive(Default)]
struct Reporting {
    held: Mutex<Vec<EditorDiagnostic>>,
}

impl Files for Reporting {
    fn buffer(&self, _path: &Path) -> Option<(Arc<str>, i32)> {
        None
    }

    fn apply_edit<'a>(
        &'a self,
        _path: &'a Path,
        _version: i32,
        _original: &'a str,
        _edits: &'a [LineEdit],
    ) -> BoxFuture<'a, Result<(), String>> {
        Box::pin(async { Err("not in this test".to_string()) })
    }

    fn answers_diagnostics(&self) -> bool {
        true
    }

    fn diagnostics<'a>(
        &'a self,
        scope: DiagnosticsScope<'a>,
    ) -> BoxFuture<'a, Result<Vec<EditorDiagnostic>, String>> {
        let held = self.held.lock().unwrap().clone();
        let wanted: Option<Vec<PathBuf>> = match scope {
            DiagnosticsScope::Files(paths) => Some(paths.to_vec()),
            DiagnosticsScope::Workspace => None,
        };
        Box::pin(async move {
            Ok(held
                .into_iter()
                .filter(|d| wanted.as_ref().is_none_or(|w| w.contains(&d.path)))
                .collect())
        })
    }
}

fn reported(path: PathBuf, message: &str) -> EditorDiagnostic {
    EditorDiagnostic {
        path,
        start: (0, 0),
        end: (0, 3),
        severity: "warning".into(),
        source: "lint".into(),
        code: String::new(),
        message: message.into(),
    }
}

// Verifies: DIAG-3
#[tokio::test]
async fn diagnostics_of_a_vouched_file_are_readable_and_of_any_other_a_reference() {
    let model = FakeModel::start(vec![
        Reply::tool_call_with_id(
            "d",
            "diagnostics",
            json!({"why": "what does the editor report"}),
        ),
        Reply::text("done"),
    ]);
    let editor = Arc::new(Reporting::default());
    let f = fixture_with_files(
        model,
        TestScreen::new(true, |_| Answer::Refused),
        Settings::default(),
        editor.clone(),
    );
    f.write("mine.rs", "fn main() {}\n");
    f.write("theirs.rs", "fn x() {}\n");
    *editor.held.lock().unwrap() = vec![
        reported(f.path("mine.rs"), "unused variable `a`"),
        reported(f.path("theirs.rs"), &format!("unused variable `{PLANTED}`")),
    ];
    assert_eq!(f.prompt("look", &["mine.rs"]).await, StopReason::EndTurn);

    let result = f.result("d");
    assert!(
        result.contains("mine.rs: 1 diagnostic\n  1:1 warning [lint] unused variable `a`"),
        "{result}"
    );
    assert!(
        !result.contains(PLANTED) && !result.contains("theirs.rs"),
        "{result}"
    );
    f.model.assert_no_planner_request_contains(PLANTED);

    // The other file's diagnostic is in the slot the reference names, untrusted, with its path.
    let id = result
        .split("ref:")
        .nth(1)
        .and_then(|rest| rest.split(|c: char| !c.is_ascii_digit()).next())
        .and_then(|n| SlotId::parse(&format!("ref:{n}")))
        .expect("a reference");
    let state = f.session.state();
    let slot = state.quarantine.get(id).expect("the slot");
    assert!(!slot.content().label().is_trusted());
    let held: &Vec<u8> = policy::to_screen(slot.content());
    let held = String::from_utf8_lossy(held).into_owned();
    assert_eq!(
        held,
        format!("theirs.rs:1:1 warning [lint] unused variable `{PLANTED}`\n")
    );
}
