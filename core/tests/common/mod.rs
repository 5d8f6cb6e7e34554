//! What the library's turn tests share: a screen that records what it was shown and answers
//! questions with a closure, and a session in a fresh workspace against the fake model.

#![allow(clippy::unwrap_used, dead_code)]

use std::path::PathBuf;
use std::sync::{Arc, Mutex};

use bravebot_core::egress::Egress;
use bravebot_core::files::DiskOnly;
use bravebot_core::kernel::slot::Reference;
use bravebot_core::model::{Api, ModelClient, ModelConfig};
use bravebot_core::screen::{Answer, BoxFuture, Question, Screen, StopReason, Update};
use bravebot_core::session::{Session, SessionConfig, SystemFacts};
use bravebot_core::settings::Settings;
use bravebot_tests::fake_model::FakeModel;

type Answerer = Box<dyn Fn(&Question) -> Answer + Send + Sync>;

pub struct TestScreen {
    interactive: bool,
    updates: Mutex<Vec<Update>>,
    asked: Mutex<Vec<Question>>,
    answer: Answerer,
}

impl TestScreen {
    pub fn new(
        interactive: bool,
        answer: impl Fn(&Question) -> Answer + Send + Sync + 'static,
    ) -> Arc<TestScreen> {
        Arc::new(TestScreen {
            interactive,
            updates: Mutex::default(),
            asked: Mutex::default(),
            answer: Box::new(answer),
        })
    }

    pub fn asked(&self) -> Vec<Question> {
        self.asked.lock().unwrap().clone()
    }

    pub fn updates(&self) -> Vec<Update> {
        self.updates.lock().unwrap().clone()
    }

    /// Every quarantine notice drawn, with its origin in plain words.
    pub fn quarantined(&self) -> Vec<(Reference, String)> {
        self.updates()
            .into_iter()
            .filter_map(|u| match u {
                Update::Quarantined { reference, origin } => Some((reference, origin)),
                _ => None,
            })
            .collect()
    }
}

impl Screen for TestScreen {
    fn update(&self, update: Update) {
        self.updates.lock().unwrap().push(update);
    }

    fn ask(&self, question: Question) -> BoxFuture<'_, Answer> {
        let answer = (self.answer)(&question);
        self.asked.lock().unwrap().push(question);
        Box::pin(async move { answer })
    }

    fn interactive(&self) -> bool {
        self.interactive
    }
}

pub struct Fixture {
    pub dir: tempfile::TempDir,
    pub model: FakeModel,
    pub session: Session,
    pub screen: Arc<TestScreen>,
}

/// A session in a fresh workspace, its audit trail in `.audit/audit.jsonl` there.
pub fn fixture(model: FakeModel, screen: Arc<TestScreen>, settings: Settings) -> Fixture {
    fixture_with_files(model, screen, settings, Arc::new(DiskOnly))
}

/// [`fixture`] in a session told it starts in a git repository, as one whose working directory
/// is in one is: `read_git` is offered only there (TOOL-7). The test makes the repository.
pub fn fixture_in_git(model: FakeModel, screen: Arc<TestScreen>, settings: Settings) -> Fixture {
    made(model, screen, settings, Arc::new(DiskOnly), true)
}

/// [`fixture`] with an editor of the test's own.
pub fn fixture_with_files(
    model: FakeModel,
    screen: Arc<TestScreen>,
    settings: Settings,
    files: Arc<dyn bravebot_core::files::Files>,
) -> Fixture {
    made(model, screen, settings, files, false)
}

fn made(
    model: FakeModel,
    screen: Arc<TestScreen>,
    settings: Settings,
    files: Arc<dyn bravebot_core::files::Files>,
    is_git: bool,
) -> Fixture {
    let dir = tempfile::tempdir().unwrap();
    let cwd = std::fs::canonicalize(dir.path()).unwrap();
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
        id: "test".into(),
        cwd: cwd.clone(),
        settings,
        facts: SystemFacts {
            is_git,
            platform: "linux".into(),
            os_version: "Linux 6.1".into(),
            shell: "/bin/bash".into(),
            date: "2026-11-29".into(),
        },
        audit_log: Some(cwd.join(".audit").join("audit.jsonl")),
    };
    let session = Session::new(config, client, screen.clone(), files);
    Fixture {
        dir,
        model,
        session,
        screen,
    }
}

impl Fixture {
    pub fn path(&self, rel: &str) -> PathBuf {
        std::fs::canonicalize(self.dir.path()).unwrap().join(rel)
    }

    pub fn write(&self, rel: &str, text: &str) {
        let p = self.path(rel);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(p, text).unwrap();
    }

    pub async fn prompt(&self, text: &str, files: &[&str]) -> StopReason {
        self.session
            .prompt(text.into(), files.iter().map(|f| self.path(f)).collect())
            .await
            .unwrap()
    }

    /// The tool message contents of the last planner request, in order.
    pub fn tool_results(&self) -> Vec<String> {
        let requests = self.model.requests();
        let last = requests
            .iter()
            .rfind(|r| r.role == "planner")
            .expect("a planner request");
        last.body["messages"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|m| m["role"] == "tool")
            .map(|m| {
                m["content"]
                    .as_str()
                    .map(str::to_string)
                    .unwrap_or_else(|| m["content"].to_string())
            })
            .collect()
    }

    /// The tool result answering `call_id` in the planner's last request.
    pub fn result(&self, call_id: &str) -> String {
        let requests = self.model.requests();
        let last = requests
            .iter()
            .rfind(|r| r.role == "planner")
            .expect("planner");
        last.body["messages"]
            .as_array()
            .unwrap()
            .iter()
            .find(|m| m["role"] == "tool" && m["tool_call_id"] == call_id)
            .and_then(|m| m["content"].as_str().map(str::to_string))
            .unwrap_or_else(|| panic!("no result for {call_id}"))
    }

    pub fn audit_text(&self) -> String {
        self.session
            .audit_records()
            .iter()
            .map(ToString::to_string)
            .collect::<Vec<_>>()
            .join("\n")
    }
}
