//! A session's title reaches the person's screen once, as its first prompt's turn starts: the
//! hook the ACP front turns into `session_info_update`.

#![allow(clippy::unwrap_used)]

use std::sync::{Arc, Mutex};

use bravebot_core::egress::Egress;
use bravebot_core::files::DiskOnly;
use bravebot_core::model::{Api, ModelClient, ModelConfig};
use bravebot_core::record::StateDir;
use bravebot_core::screen::{Answer, BoxFuture, Question, Screen, StopReason, Update};
use bravebot_core::session::{Session, SessionConfig, SystemFacts};
use bravebot_core::settings::Settings;
use bravebot_tests::fake_model::{FakeModel, Reply};

/// A screen that keeps the titles it was told, and whether the turn had begun streaming when
/// each came (the planner's text is an update; a title must come before it).
#[derive(Default)]
struct Titles {
    told: Mutex<Vec<(String, usize)>>,
    updates: Mutex<usize>,
}

impl Screen for Titles {
    fn update(&self, update: Update) {
        if matches!(update, Update::AgentText { .. }) {
            *self.updates.lock().unwrap() += 1;
        }
    }

    fn ask(&self, _question: Question) -> BoxFuture<'_, Answer> {
        Box::pin(async { Answer::Refused })
    }

    fn interactive(&self) -> bool {
        false
    }

    fn titled(&self, title: &str) {
        let streamed = *self.updates.lock().unwrap();
        self.told
            .lock()
            .unwrap()
            .push((title.to_string(), streamed));
    }
}

fn session(model: &FakeModel, cwd: &std::path::Path, id: &str, screen: Arc<Titles>) -> Session {
    let egress = Arc::new(Egress::from_env(&|_| None).unwrap());
    let client = ModelClient::new(
        ModelConfig {
            api: Api::OpenAi,
            base_url: model.url(),
            name: "fake".into(),
            api_key: None,
        },
        egress,
    );
    let config = SessionConfig {
        id: id.into(),
        cwd: cwd.to_path_buf(),
        settings: Settings::default(),
        facts: SystemFacts {
            is_git: false,
            platform: "linux".into(),
            os_version: "Linux 6.1".into(),
            shell: "/bin/bash".into(),
            date: "2026-12-05".into(),
        },
        audit_log: None,
    };
    Session::new(config, client, screen, Arc::new(DiskOnly))
}

// Verifies: ACP-48
/// The first prompt titles the session as the LSP front lists it (its first non-blank line) and
/// the screen is told before the planner's answer streams; a later prompt does not title it
/// again, and a session taken up from its record is not told a title it already had.
#[tokio::test]
async fn the_first_prompt_titles_the_session_once_before_the_answer_streams() {
    let model = FakeModel::start_with(|s| {
        s.planner(vec![
            Reply::text("First answer."),
            Reply::text("Second answer."),
            Reply::text("Third answer."),
        ])
    });
    let dir = tempfile::tempdir().unwrap();
    let cwd = std::fs::canonicalize(dir.path()).unwrap();
    let home = tempfile::tempdir().unwrap();
    let state = StateDir::in_home(home.path());
    let screen = Arc::new(Titles::default());
    let first = session(&model, &cwd, "titled-1", screen.clone()).keeping_records(state.clone());
    let stop = first
        .prompt(
            "\n  fix the parser  \nit drops the last line".into(),
            vec![],
        )
        .await
        .unwrap();
    assert_eq!(stop, StopReason::EndTurn);
    first
        .prompt("and now the lexer".into(), vec![])
        .await
        .unwrap();
    assert_eq!(
        *screen.told.lock().unwrap(),
        vec![("fix the parser".to_string(), 0)]
    );
    assert_eq!(first.state().title.as_deref(), Some("fix the parser"));

    bravebot_core::record::finish_writes();
    let restored = state.load("titled-1").unwrap();
    let again = Arc::new(Titles::default());
    let resumed = session(&model, &cwd, "titled-1", again.clone()).keeping_records(state);
    resumed.restore(restored);
    resumed.prompt("one more".into(), vec![]).await.unwrap();
    assert!(again.told.lock().unwrap().is_empty());
    assert_eq!(resumed.state().title.as_deref(), Some("fix the parser"));
}
