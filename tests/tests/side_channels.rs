//! End-to-end tests of the side channels a security review found, over real stdio against the
//! fake model: credentials in a child's environment, an endpoint's words about quarantined bytes,
//! facts about an unvouched file's text, and questions answered where nobody looked.

use bravebot_tests::fake_model::{FakeModel, Reply};
use bravebot_tests::lsp_client::{Answer, LspClient, LspOptions};
use serde_json::{Value, json};
use tempfile::TempDir;

struct Setup {
    // Field order is drop order: the server goes before the model and the workspace.
    client: LspClient,
    session: String,
    model: FakeModel,
    workspace: TempDir,
}

impl Setup {
    fn start(
        files: &[(&str, &str)],
        model: FakeModel,
        configure: impl FnOnce(LspOptions) -> LspOptions,
        init: Value,
    ) -> Setup {
        let workspace = tempfile::tempdir().expect("workspace");
        for (path, text) in files {
            let p = workspace.path().join(path);
            std::fs::create_dir_all(p.parent().expect("parent")).expect("mkdir");
            std::fs::write(p, text).expect("write");
        }
        let options = configure(LspOptions::new(workspace.path()).model_url(&model.url()));
        let client = LspClient::start(options);
        client.initialize(init);
        let session = client.new_session();
        Setup {
            client,
            session,
            model,
            workspace,
        }
    }

    fn prompt(&self, files: &[&str]) -> Value {
        self.client
            .request(
                "bravebot/session/prompt",
                json!({"sessionId": self.session, "text": "go", "files": files}),
            )
            .unwrap_or_else(|e| self.client.fail(&format!("prompt refused: {e}")))
    }
}

fn call(id: &str, tool: &str, args: Value) -> Reply {
    Reply::tool_call_with_id(id, tool, args)
}

// Verifies: CRED-2
#[test]
fn no_run_child_is_handed_a_credential_variable_whatever_its_name() {
    let model = FakeModel::start(vec![
        call(
            "call_env",
            "run",
            json!({"command": "env > env.txt", "why": "see the environment"}),
        ),
        Reply::text("done"),
    ]);
    let secrets = [
        ("BRAVEBOT_API_KEY", "SECRET-bravebot-1"),
        ("OPENAI_API_KEY", "SECRET-openai-2"),
        ("ANTHROPIC_API_KEY", "SECRET-anthropic-3"),
        // Named by the home settings, then overridden by the client: still a credential.
        ("HOME_MODEL_KEY", "SECRET-home-4"),
        // Named by the client's initializationOptions.
        ("CLIENT_MODEL_KEY", "SECRET-client-5"),
    ];
    let s = Setup::start(
        &[],
        model,
        |mut options| {
            for (name, value) in secrets {
                options = options.env(name, value);
            }
            options.env("KEPT_VARIABLE", "kept-6").home_file(
                ".bravebot/settings.json",
                r#"{"model": {"apiKeyEnv": "HOME_MODEL_KEY"}}"#,
            )
        },
        json!({"model": {"apiKeyEnv": "CLIENT_MODEL_KEY"}}),
    );
    s.client
        .answer_permissions_with(|q| Answer::choose(q, "allow_once"));
    s.prompt(&[]);
    let seen = std::fs::read_to_string(s.workspace.path().join("env.txt")).unwrap_or_default();
    assert!(
        seen.contains("KEPT_VARIABLE=kept-6"),
        "the run happened and inherited the rest: {seen}"
    );
    for (name, value) in secrets {
        assert!(
            !seen.contains(value) && !seen.contains(&format!("{name}=")),
            "{name} reached the program: {seen}"
        );
    }
    assert!(s.model.exhausted().is_empty(), "{:?}", s.model.exhausted());
}
