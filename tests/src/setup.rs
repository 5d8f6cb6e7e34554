//! What most end-to-end tests start from: a workspace of the test's own, the real binary serving
//! it over stdio with the fake model behind it, and one session.

use std::path::{Path, PathBuf};

use serde_json::{Value, json};
use tempfile::TempDir;

use crate::fake_model::FakeModel;
use crate::lsp_client::{LspClient, LspOptions, Pending};

/// A running server in a fresh workspace, with one session.
pub struct Setup {
    // Field order is drop order: the server goes before the model and the workspace.
    pub client: LspClient,
    pub session: String,
    pub model: FakeModel,
    pub workspace: TempDir,
}

/// Writes `files` under `root`, making the directories they need. A path ending in `*` is made
/// executable (the `*` is not part of its name).
pub fn write_files(root: &Path, files: &[(&str, &str)]) {
    for (path, text) in files {
        let (path, executable) = match path.strip_suffix('*') {
            Some(p) => (p, true),
            None => (*path, false),
        };
        let p = root.join(path);
        std::fs::create_dir_all(p.parent().expect("a file has a parent")).expect("mkdir");
        std::fs::write(&p, text).expect("write a workspace file");
        if executable {
            let mut perms = std::fs::metadata(&p).expect("stat").permissions();
            std::os::unix::fs::PermissionsExt::set_mode(&mut perms, 0o755);
            std::fs::set_permissions(&p, perms).expect("chmod");
        }
    }
}

impl Setup {
    /// A workspace holding `files`, served with the default options and no initialization
    /// options.
    pub fn start(files: &[(&str, &str)], model: FakeModel) -> Setup {
        Setup::start_with(files, model, |options, _| options, json!({}))
    }

    /// A workspace holding `files`; `tune` may add to the server's options (it is handed the
    /// workspace's resolved path) and `init` is what `initialize` sends as its options.
    pub fn start_with(
        files: &[(&str, &str)],
        model: FakeModel,
        tune: impl FnOnce(LspOptions, &Path) -> LspOptions,
        init: Value,
    ) -> Setup {
        let workspace = tempfile::tempdir().expect("create a workspace");
        write_files(workspace.path(), files);
        Setup::in_workspace(workspace, model, tune, init)
    }

    /// The server over a workspace the test made itself.
    pub fn in_workspace(
        workspace: TempDir,
        model: FakeModel,
        tune: impl FnOnce(LspOptions, &Path) -> LspOptions,
        init: Value,
    ) -> Setup {
        let root = std::fs::canonicalize(workspace.path()).expect("resolve the workspace");
        let options = tune(LspOptions::new(&root).model_url(&model.url()), &root);
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

    /// The workspace's path with its links resolved, as the server sees it.
    pub fn root(&self) -> PathBuf {
        std::fs::canonicalize(self.workspace.path()).expect("resolve the workspace")
    }

    /// Where `rel` is in the workspace.
    pub fn path(&self, rel: &str) -> PathBuf {
        self.root().join(rel)
    }

    /// What `rel` holds on disk, or nothing when it is not there.
    pub fn disk(&self, rel: &str) -> String {
        std::fs::read_to_string(self.path(rel)).unwrap_or_default()
    }

    /// Sends the prompt "go" with `files` named and waits for the turn to end.
    pub fn prompt(&self, files: &[&str]) -> Value {
        self.prompt_text("go", files)
    }

    /// Sends `text` with `files` named and waits for the turn to end; a refused prompt fails the
    /// test.
    pub fn prompt_text(&self, text: &str, files: &[&str]) -> Value {
        self.client
            .request(
                "bravebot/session/prompt",
                json!({"sessionId": self.session, "text": text, "files": files}),
            )
            .unwrap_or_else(|e| self.client.fail(&format!("the prompt was refused: {e}")))
    }

    /// Sends the prompt "go" with `files` named without waiting for the turn.
    pub fn send_prompt(&self, files: &[&str]) -> Pending {
        self.send_prompt_text("go", files)
    }

    /// Sends `text` with `files` named without waiting for the turn.
    pub fn send_prompt_text(&self, text: &str, files: &[&str]) -> Pending {
        self.client.send_request(
            "bravebot/session/prompt",
            json!({"sessionId": self.session, "text": text, "files": files}),
        )
    }

    /// Switches the session to the permission mode `mode`; a refusal fails the test.
    pub fn set_mode(&self, mode: &str) {
        if let Err(e) = self.client.request(
            "bravebot/session/setMode",
            json!({"sessionId": self.session, "mode": mode}),
        ) {
            self.client
                .fail(&format!("setMode {mode} was refused: {e}"));
        }
    }

    /// What `session/status` reports for the session.
    pub fn status(&self) -> Value {
        self.client
            .request(
                "bravebot/session/status",
                json!({"sessionId": self.session}),
            )
            .unwrap_or_else(|e| self.client.fail(&format!("status was refused: {e}")))
    }

    /// The session's audit trail as `session/audit` gives it.
    pub fn audit(&self) -> Value {
        self.client
            .request("bravebot/session/audit", json!({"sessionId": self.session}))
            .unwrap_or_else(|e| self.client.fail(&format!("audit was refused: {e}")))
    }

    /// The detail of each record of the session's audit trail, in order.
    pub fn audit_details(&self) -> Vec<String> {
        self.audit()["records"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(|r| r["detail"].as_str().map(str::to_string))
            .collect()
    }

    /// The `toolResult` update of `call_id`.
    pub fn tool_update(&self, call_id: &str) -> Value {
        self.client
            .updates(&self.session)
            .into_iter()
            .find(|u| u["kind"] == "toolResult" && u["callId"] == call_id)
            .unwrap_or_else(|| self.client.fail(&format!("no toolResult for {call_id}")))
    }
}
