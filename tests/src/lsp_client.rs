//! A client that drives `bravebot lsp` over real stdio, the way an editor does, and checks the wire.
//!
//! [`LspClient::start`] spawns the binary with an isolated `HOME` (a fresh temporary directory), a
//! chosen working directory and only the environment a test gives it. A reader thread parses every
//! byte the server writes to stdout as `Content-Length`-framed JSON-RPC 2.0: anything else (a log
//! line, a stray newline, a frame holding no JSON) is recorded as a violation, and the next wait or
//! the client's drop fails the test with the bytes it saw. The same thread answers the server's own
//! requests (`bravebot/session/requestPermission`, `window/showMessageRequest`,
//! `workspace/applyEdit`, ...) by a policy the test sets, so questions are served while a
//! `bravebot/session/prompt` request is still outstanding. Every wait has a deadline, so a hung
//! server fails the test instead of hanging CI.
//!
//! ```no_run
//! use bravebot_tests::lsp_client::{Answer, LspClient, LspOptions};
//! use serde_json::json;
//!
//! let workspace = tempfile::tempdir().unwrap();
//! let client = LspClient::start(LspOptions::new(workspace.path()).model_url("http://127.0.0.1:9/v1"));
//! client.initialize(json!({}));
//! client.answer_permissions_with(|question| Answer::choose(question, "allow_once"));
//! let session = client.new_session();
//! let result = client.request(
//!     "bravebot/session/prompt",
//!     json!({ "sessionId": session, "text": "hello" }),
//! );
//! assert_eq!(result.unwrap()["stopReason"], "endTurn");
//! client.shutdown();
//! ```
//!
//! The same isolation serves the command-line tests: [`bravebot_command`] builds a `Command` with
//! the cleared environment, and [`run_with_timeout`] runs it under a deadline.

use std::collections::HashMap;
use std::ffi::OsString;
use std::io::{BufRead, BufReader, Read, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, Command, ExitStatus, Output, Stdio};
use std::sync::atomic::{AtomicI64, Ordering};
use std::sync::{Arc, Condvar, Mutex, MutexGuard};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use serde_json::{Value, json};

/// How long any single wait may take before the test fails, unless
/// `BRAVEBOT_TEST_TIMEOUT_SECS` says otherwise.
pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(20);

/// The method of the server's question to a client that declared
/// `experimental.bravebot.permissions`.
pub const REQUEST_PERMISSION: &str = "bravebot/session/requestPermission";
pub const DIAGNOSTICS_GET: &str = "bravebot/diagnostics/get";
/// The method of the fallback question to any other client.
pub const SHOW_MESSAGE_REQUEST: &str = "window/showMessageRequest";
/// The method that carries an approved edit to an open buffer.
pub const APPLY_EDIT: &str = "workspace/applyEdit";
/// The method of the agent's streamed updates.
pub const SESSION_UPDATE: &str = "bravebot/session/update";

/// Bytes of a frame or of stray output quoted in a failure message.
const QUOTE_LIMIT: usize = 400;
/// Bytes of the server's stderr quoted in a failure message.
const STDERR_TAIL: usize = 4000;

/// The deadline for every wait: `BRAVEBOT_TEST_TIMEOUT_SECS` or [`DEFAULT_TIMEOUT`].
pub fn default_timeout() -> Duration {
    std::env::var("BRAVEBOT_TEST_TIMEOUT_SECS")
        .ok()
        .and_then(|secs| secs.parse().ok())
        .map(Duration::from_secs)
        .unwrap_or(DEFAULT_TIMEOUT)
}

/// Where the `bravebot` binary of this build is.
///
/// `BRAVEBOT_BIN` wins when set. Otherwise the binary is looked for beside the running executable
/// and in its ancestors, which finds `target/<profile>/bravebot` from a test in
/// `target/<profile>/deps/` or a binary in `target/<profile>/`, whatever `CARGO_TARGET_DIR` is.
/// Building it is not the harness's job: `scripts/test.sh` runs `cargo build --workspace` first.
pub fn bravebot_binary() -> PathBuf {
    if let Some(path) = std::env::var_os("BRAVEBOT_BIN") {
        return PathBuf::from(path);
    }
    let exe = std::env::current_exe().expect("the test executable has a path");
    for dir in exe.ancestors().skip(1) {
        let candidate = dir.join("bravebot");
        if candidate.is_file() {
            return candidate;
        }
        if dir.file_name().is_some_and(|name| name == "target") {
            break;
        }
    }
    let fallback = Path::new(env!("CARGO_MANIFEST_DIR")).join("../target/debug/bravebot");
    assert!(
        fallback.is_file(),
        "no bravebot binary beside {} nor at {}: build it first with `cargo build -p bravebot` \
         (scripts/test.sh does), or point BRAVEBOT_BIN at one",
        exe.display(),
        fallback.display()
    );
    fallback
}

/// A `file://` URI for an absolute path, percent-encoding what a URI path may not hold.
pub fn file_uri(path: &Path) -> String {
    let mut uri = String::from("file://");
    for byte in path.to_string_lossy().bytes() {
        if byte.is_ascii_alphanumeric() || b"/-._~".contains(&byte) {
            uri.push(char::from(byte));
        } else {
            uri.push_str(&format!("%{byte:02X}"));
        }
    }
    uri
}

/// A `Command` for the bravebot binary with an environment holding only what a test chose.
///
/// The environment is cleared so that a developer's own model settings, API keys or proxies never
/// leak into a test; `PATH`, `TMPDIR`, `BRAVEBOT_LOG` and `RUST_BACKTRACE` are kept. `HOME` and the
/// XDG directories point into `home`.
pub fn bravebot_command(binary: &Path, home: &Path, cwd: &Path) -> Command {
    let mut command = Command::new(binary);
    command.env_clear().current_dir(cwd);
    for key in [
        "PATH",
        "TMPDIR",
        "BRAVEBOT_LOG",
        "RUST_BACKTRACE",
        "LLVM_PROFILE_FILE",
    ] {
        if let Some(value) = std::env::var_os(key) {
            command.env(key, value);
        }
    }
    command
        .env("HOME", home)
        .env("XDG_CONFIG_HOME", home.join(".config"))
        .env("XDG_DATA_HOME", home.join(".local/share"))
        .env("XDG_STATE_HOME", home.join(".local/state"))
        .env("XDG_CACHE_HOME", home.join(".cache"));
    command
}

/// Runs a command to its end with closed stdin, failing the test if it takes longer than `timeout`.
pub fn run_with_timeout(mut command: Command, timeout: Duration) -> Output {
    let mut child = command
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn the command");
    let (sender, receiver) = std::sync::mpsc::channel();
    let stdout = child.stdout.take().expect("stdout is piped");
    let stderr = child.stderr.take().expect("stderr is piped");
    for (stream, mut pipe) in [
        (0, Box::new(stdout) as Box<dyn Read + Send>),
        (1, Box::new(stderr)),
    ] {
        let sender = sender.clone();
        std::thread::spawn(move || {
            let mut bytes = Vec::new();
            let _ = pipe.read_to_end(&mut bytes);
            let _ = sender.send((stream, bytes));
        });
    }
    drop(sender);
    let deadline = Instant::now() + timeout;
    let mut streams = [Vec::new(), Vec::new()];
    for _ in 0..2 {
        let left = deadline.saturating_duration_since(Instant::now());
        match receiver.recv_timeout(left) {
            Ok((stream, bytes)) => streams[stream] = bytes,
            Err(_) => {
                let _ = child.kill();
                let _ = child.wait();
                panic!("{command:?} did not finish within {timeout:?}");
            }
        }
    }
    let status = wait_for_exit(&mut child, deadline)
        .unwrap_or_else(|| panic!("{command:?} closed its output but did not exit"));
    let [stdout, stderr] = streams;
    Output {
        status,
        stdout,
        stderr,
    }
}

/// Waits for a child whose output pipes are closed, so the exit is at most moments away.
fn wait_for_exit(child: &mut Child, deadline: Instant) -> Option<ExitStatus> {
    loop {
        if let Some(status) = child.try_wait().expect("query the child's status") {
            return Some(status);
        }
        if Instant::now() >= deadline {
            let _ = child.kill();
            let _ = child.wait();
            return None;
        }
        // Nothing signals a child's exit to std, and the pipes already closed: poll briefly.
        std::thread::sleep(Duration::from_millis(5));
    }
}

/// How to start the server.
#[derive(Clone, Debug)]
pub struct LspOptions {
    cwd: PathBuf,
    env: Vec<(OsString, OsString)>,
    home_files: Vec<(PathBuf, String)>,
    home_dir: Option<PathBuf>,
    binary: Option<PathBuf>,
    permissions_capability: bool,
    hunk_texts_capability: bool,
    diagnostics_capability: bool,
    timeout: Duration,
}

impl LspOptions {
    /// Options for a server working in `cwd`, with no model configured.
    pub fn new(cwd: impl Into<PathBuf>) -> Self {
        Self {
            cwd: cwd.into(),
            env: Vec::new(),
            home_files: Vec::new(),
            home_dir: None,
            binary: None,
            permissions_capability: true,
            hunk_texts_capability: false,
            diagnostics_capability: false,
            timeout: default_timeout(),
        }
    }

    /// The directory the server works in.
    pub fn cwd(&self) -> &Path {
        &self.cwd
    }

    /// Sets one environment variable for the server.
    pub fn env(mut self, key: impl Into<OsString>, value: impl Into<OsString>) -> Self {
        self.env.push((key.into(), value.into()));
        self
    }

    /// Points the server at an OpenAI-compatible endpoint through the environment
    /// (`BRAVEBOT_MODEL_URL`, `BRAVEBOT_MODEL`, `BRAVEBOT_MODEL_API`).
    pub fn model_url(self, base_url: &str) -> Self {
        self.env("BRAVEBOT_MODEL_URL", base_url)
            .env("BRAVEBOT_MODEL", "fake-model")
            .env("BRAVEBOT_MODEL_API", "openai")
    }

    /// Writes a file under the isolated `HOME` before the server starts, e.g.
    /// `.bravebot/settings.json`.
    pub fn home_file(mut self, relative: impl Into<PathBuf>, contents: impl Into<String>) -> Self {
        self.home_files.push((relative.into(), contents.into()));
        self
    }

    /// Runs with this directory as `HOME` instead of a fresh temporary one, so a second server can
    /// find what a first one left under `~/.bravebot`. The test owns the directory.
    pub fn home_dir(mut self, path: impl Into<PathBuf>) -> Self {
        self.home_dir = Some(path.into());
        self
    }

    /// Runs this binary instead of the one [`bravebot_binary`] finds.
    pub fn binary(mut self, path: impl Into<PathBuf>) -> Self {
        self.binary = Some(path.into());
        self
    }

    /// Leaves `experimental.bravebot.permissions` out of the client capabilities, so the server
    /// must fall back to `window/showMessageRequest`.
    pub fn without_permissions_capability(mut self) -> Self {
        self.permissions_capability = false;
        self
    }

    /// Declares `experimental.bravebot.hunkTexts`: edit and write questions then carry each
    /// hunk's text and the buffer's version instead of both whole texts (WRITE-61).
    pub fn hunk_texts_capability(mut self) -> Self {
        self.hunk_texts_capability = true;
        self
    }

    /// Declares `experimental.bravebot.diagnostics`: the server may then ask the client for its
    /// diagnostics with `bravebot/diagnostics/get` (DIAG-5).
    pub fn diagnostics_capability(mut self) -> Self {
        self.diagnostics_capability = true;
        self
    }

    /// The deadline of every wait.
    pub fn timeout(mut self, timeout: Duration) -> Self {
        self.timeout = timeout;
        self
    }
}

/// What the client does with one of the server's requests.
#[derive(Clone, Debug, PartialEq)]
pub enum Answer {
    /// Reply with this result.
    Result(Value),
    /// Reply with a JSON-RPC error.
    Error { code: i64, message: String },
    /// Do not reply now; the test replies later with [`LspClient::reply`], or never.
    Hold,
}

impl Answer {
    /// `{ outcome: { outcome: "selected", optionId } }`.
    pub fn select(option_id: &str) -> Self {
        Self::Result(json!({ "outcome": { "outcome": "selected", "optionId": option_id } }))
    }

    /// `{ outcome: { outcome: "cancelled" } }`.
    pub fn cancelled() -> Self {
        Self::Result(json!({ "outcome": { "outcome": "cancelled" } }))
    }

    /// A JSON-RPC error reply.
    pub fn error(code: i64, message: &str) -> Self {
        Self::Error {
            code,
            message: message.to_owned(),
        }
    }

    /// Selects the first option of `kind` (`allow_once`, `reject_once`, ...) that the question
    /// offers; for a `window/showMessageRequest`, the action whose title suggests it. Fails the
    /// test when the question offers no such option.
    pub fn choose(question: &ServerRequest, kind: &str) -> Self {
        if question.method == SHOW_MESSAGE_REQUEST {
            return match question.action_like(kind) {
                Some(action) => Self::Result(action),
                None => panic!("no action like {kind} in {}", question.params),
            };
        }
        match question.option_of_kind(kind) {
            Some(option_id) => Self::select(&option_id),
            None => panic!("no option of kind {kind} in {}", question.params),
        }
    }

    /// What the client answers when the test set no policy: it refuses, picking the first
    /// `reject_once` option (or dismissing a `window/showMessageRequest`), and approves every
    /// `workspace/applyEdit`.
    pub fn default_for(request: &ServerRequest) -> Self {
        match request.method.as_str() {
            REQUEST_PERMISSION => match request.option_of_kind("reject_once") {
                Some(option_id) => Self::select(&option_id),
                None => Self::cancelled(),
            },
            APPLY_EDIT => Self::Result(json!({ "applied": true })),
            "workspace/configuration" => {
                let items = request.params["items"].as_array().map_or(0, Vec::len);
                Self::Result(Value::Array(vec![Value::Null; items]))
            }
            _ => Self::Result(Value::Null),
        }
    }
}

impl From<Value> for Answer {
    fn from(result: Value) -> Self {
        Self::Result(result)
    }
}

/// A request the server sent to the client.
#[derive(Clone, Debug)]
pub struct ServerRequest {
    pub id: Value,
    pub method: String,
    pub params: Value,
}

impl ServerRequest {
    /// The `optionId` of the first offered option of `kind`, for a `requestPermission`.
    pub fn option_of_kind(&self, kind: &str) -> Option<String> {
        self.params["options"]
            .as_array()?
            .iter()
            .find(|option| option["kind"] == kind)
            .and_then(|option| option["optionId"].as_str())
            .map(str::to_owned)
    }

    /// The question's `kind` (`trustRead`, `write`, ...), for a `requestPermission`.
    pub fn question_kind(&self) -> Option<&str> {
        self.params["kind"].as_str()
    }

    /// The question's `questionId`, for a `requestPermission`.
    pub fn question_id(&self) -> Option<&str> {
        self.params["questionId"].as_str()
    }

    /// For a `window/showMessageRequest`, the action whose title reads like an option of `kind`:
    /// "allow"/"yes"/"trust" for an approving kind, "reject"/"no"/"deny" for a refusing one.
    fn action_like(&self, kind: &str) -> Option<Value> {
        let words: &[&str] = if kind.starts_with("allow") {
            &["allow", "yes", "trust", "accept", "approve"]
        } else {
            &["reject", "no", "deny", "refuse", "decline"]
        };
        self.params["actions"]
            .as_array()?
            .iter()
            .find(|action| {
                let title = action["title"].as_str().unwrap_or_default().to_lowercase();
                words.iter().any(|word| title.starts_with(word))
            })
            .cloned()
    }
}

type Policy = Box<dyn FnMut(&ServerRequest) -> Answer + Send>;

/// Everything the reader thread learned, under one lock.
#[derive(Default)]
struct Traffic {
    /// Responses to our requests, by id.
    responses: HashMap<i64, Value>,
    /// Responses whose id is `null` (or not one of ours), in arrival order.
    orphan_responses: Vec<Value>,
    orphans_taken: usize,
    /// Every notification, whole, in arrival order.
    notifications: Vec<Value>,
    /// How many notifications of each method `next_notification` has handed out.
    notifications_taken: HashMap<String, usize>,
    /// Every request from the server, in arrival order, with the reply sent (if any).
    server_requests: Vec<(ServerRequest, Option<Answer>)>,
    server_requests_taken: HashMap<String, usize>,
    /// The first sign that stdout carried something other than framed JSON-RPC.
    violation: Option<String>,
    /// stdout reached its end.
    eof: bool,
    /// A test's answer policy panicked on the reader thread.
    policy_failure: Option<String>,
}

struct Shared {
    traffic: Mutex<Traffic>,
    changed: Condvar,
    writer: Mutex<Option<ChildStdin>>,
    permission_policy: Mutex<Option<Policy>>,
    apply_edit_policy: Mutex<Option<Policy>>,
    /// How the client answers `bravebot/diagnostics/get`.
    diagnostics_policy: Mutex<Option<Policy>>,
    stderr: Mutex<Vec<u8>>,
    /// Open documents as an editor holds them, by URI (version, text), where the client mirrors
    /// its buffers: an applied edit changes the text and is told back with `didChange` before
    /// the reply, as an editor does.
    mirror: Mutex<Option<HashMap<String, (i64, String)>>>,
}

impl Shared {
    fn traffic(&self) -> MutexGuard<'_, Traffic> {
        self.traffic
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    fn stderr_tail(&self) -> String {
        let stderr = self
            .stderr
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner());
        let start = stderr.len().saturating_sub(STDERR_TAIL);
        String::from_utf8_lossy(&stderr[start..]).into_owned()
    }

    /// Writes one framed message; `false` when stdin is closed or the server is gone.
    fn write(&self, message: &Value) -> bool {
        let body = serde_json::to_vec(message).expect("a JSON value serializes");
        let mut frame = format!("Content-Length: {}\r\n\r\n", body.len()).into_bytes();
        frame.extend_from_slice(&body);
        self.write_bytes(&frame)
    }

    fn write_bytes(&self, bytes: &[u8]) -> bool {
        let mut writer = self
            .writer
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner());
        match writer.as_mut() {
            Some(stdin) => stdin.write_all(bytes).and_then(|()| stdin.flush()).is_ok(),
            None => false,
        }
    }

    fn reply(&self, id: &Value, answer: &Answer) {
        let message = match answer {
            Answer::Result(result) => json!({ "jsonrpc": "2.0", "id": id, "result": result }),
            Answer::Error { code, message } => json!({
                "jsonrpc": "2.0", "id": id, "error": { "code": code, "message": message }
            }),
            Answer::Hold => return,
        };
        // A server that already exited cannot be answered; the test notices elsewhere.
        self.write(&message);
    }
}

/// A running `bravebot lsp` and the client side of its conversation.
pub struct LspClient {
    shared: Arc<Shared>,
    child: Child,
    reader: Option<JoinHandle<()>>,
    stderr_reader: Option<JoinHandle<()>>,
    next_id: AtomicI64,
    options: LspOptions,
    /// The temporary `HOME`, unless the options named one.
    _home_temp: Option<tempfile::TempDir>,
    home: PathBuf,
    exit_status: Option<ExitStatus>,
}

/// A request sent and not yet answered; see [`LspClient::send_request`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[must_use = "a pending request is only useful if its response is awaited"]
pub struct Pending(pub i64);

impl LspClient {
    /// Spawns `bravebot lsp` with an isolated `HOME`. Fails the test if it cannot start.
    pub fn start(options: LspOptions) -> Self {
        let (home_temp, home) = match &options.home_dir {
            Some(dir) => (None, dir.clone()),
            None => {
                let temp = tempfile::tempdir().expect("create a temporary HOME");
                let path = temp.path().to_path_buf();
                (Some(temp), path)
            }
        };
        for (relative, contents) in &options.home_files {
            let path = home.join(relative);
            if let Some(parent) = path.parent() {
                std::fs::create_dir_all(parent).expect("create a directory under HOME");
            }
            std::fs::write(&path, contents).expect("write a file under HOME");
        }
        let binary = options.binary.clone().unwrap_or_else(bravebot_binary);
        let mut command = bravebot_command(&binary, &home, &options.cwd);
        command
            .arg("lsp")
            .envs(options.env.iter().map(|(k, v)| (k, v)));
        let mut child = command
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap_or_else(|error| panic!("spawn {} lsp: {error}", binary.display()));
        let stdin = child.stdin.take().expect("stdin is piped");
        let stdout = child.stdout.take().expect("stdout is piped");
        let mut stderr = child.stderr.take().expect("stderr is piped");
        let shared = Arc::new(Shared {
            traffic: Mutex::new(Traffic::default()),
            changed: Condvar::new(),
            writer: Mutex::new(Some(stdin)),
            permission_policy: Mutex::new(None),
            apply_edit_policy: Mutex::new(None),
            diagnostics_policy: Mutex::new(None),
            stderr: Mutex::new(Vec::new()),
            mirror: Mutex::new(None),
        });
        let reader = {
            let shared = Arc::clone(&shared);
            std::thread::spawn(move || read_stdout(&shared, stdout))
        };
        let stderr_reader = {
            let shared = Arc::clone(&shared);
            let echo = std::env::var_os("BRAVEBOT_TEST_ECHO_STDERR").is_some();
            std::thread::spawn(move || {
                let mut chunk = [0u8; 4096];
                while let Ok(read) = stderr.read(&mut chunk) {
                    if read == 0 {
                        break;
                    }
                    if echo {
                        eprint!("{}", String::from_utf8_lossy(&chunk[..read]));
                    }
                    let mut buffer = shared.stderr.lock().unwrap_or_else(|p| p.into_inner());
                    buffer.extend_from_slice(&chunk[..read]);
                }
            })
        };
        Self {
            shared,
            child,
            reader: Some(reader),
            stderr_reader: Some(stderr_reader),
            next_id: AtomicI64::new(1),
            options,
            _home_temp: home_temp,
            home,
            exit_status: None,
        }
    }

    /// The server's process id.
    pub fn pid(&self) -> u32 {
        self.child.id()
    }

    /// The isolated `HOME` the server runs with.
    pub fn home(&self) -> &Path {
        &self.home
    }

    /// The server's working directory.
    pub fn cwd(&self) -> &Path {
        &self.options.cwd
    }

    /// What the server wrote to stderr so far.
    pub fn stderr(&self) -> String {
        let stderr = self.shared.stderr.lock().unwrap_or_else(|p| p.into_inner());
        String::from_utf8_lossy(&stderr).into_owned()
    }

    /// Sends `initialize` (with `experimental.bravebot.permissions: true` unless the options say
    /// otherwise, and `init_options` as `initializationOptions` unless it is `null`), then
    /// `initialized`, and returns the result.
    #[track_caller]
    pub fn initialize(&self, init_options: Value) -> Value {
        let cwd = &self.options.cwd;
        let mut params = json!({
            "processId": std::process::id(),
            "clientInfo": { "name": "bravebot-tests", "version": env!("CARGO_PKG_VERSION") },
            "rootUri": file_uri(cwd),
            "workspaceFolders": [{ "uri": file_uri(cwd), "name": "workspace" }],
            "capabilities": {
                "workspace": { "applyEdit": true, "workspaceEdit": { "documentChanges": true } },
                "window": { "showMessage": { "messageActionItem": { "additionalPropertiesSupport": false } } },
                "textDocument": { "synchronization": { "didSave": true } },
                "experimental": {
                    "bravebot": { "permissions": self.options.permissions_capability }
                },
            },
        });
        if self.options.diagnostics_capability {
            params["capabilities"]["experimental"]["bravebot"]["diagnostics"] = json!(true);
        }
        if self.options.hunk_texts_capability {
            params["capabilities"]["experimental"]["bravebot"]["hunkTexts"] = json!(true);
        }
        if !init_options.is_null() {
            params["initializationOptions"] = init_options;
        }
        let result = self
            .request("initialize", params)
            .unwrap_or_else(|error| self.fail(&format!("initialize was refused: {error}")));
        self.notify("initialized", json!({}));
        result
    }

    /// Sends a request and waits for its response: `Ok(result)` or `Err(error object)`.
    #[track_caller]
    pub fn request(&self, method: &str, params: Value) -> Result<Value, Value> {
        let pending = self.send_request(method, params);
        self.response(pending)
    }

    /// Sends a request without waiting; [`LspClient::response`] waits for it later.
    #[track_caller]
    pub fn send_request(&self, method: &str, params: Value) -> Pending {
        let id = self.next_id.fetch_add(1, Ordering::Relaxed);
        let message = json!({ "jsonrpc": "2.0", "id": id, "method": method, "params": params });
        if !self.shared.write(&message) {
            self.fail(&format!(
                "could not send {method}: the server's stdin is closed"
            ));
        }
        Pending(id)
    }

    /// Waits for the response to a request sent with [`LspClient::send_request`].
    #[track_caller]
    pub fn response(&self, pending: Pending) -> Result<Value, Value> {
        let response = self.wait_for(&format!("the response to request {}", pending.0), |t| {
            t.responses.remove(&pending.0)
        });
        match response.get("error") {
            Some(error) => Err(error.clone()),
            None => Ok(response.get("result").cloned().unwrap_or(Value::Null)),
        }
    }

    /// Keeps the documents this client opens as an editor would: an edit the server applies
    /// through `workspace/applyEdit` changes the text and is told back with `didChange` before
    /// the reply. Call before opening any.
    pub fn mirror_buffers(&self) {
        *self.shared.mirror.lock().unwrap_or_else(|p| p.into_inner()) = Some(HashMap::new());
    }

    /// The text of an open document as this client holds it, where it mirrors its buffers.
    pub fn buffer_text(&self, uri: &str) -> Option<String> {
        self.shared
            .mirror
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .as_ref()?
            .get(uri)
            .map(|(_, t)| t.clone())
    }

    /// Replaces an open document's text, as a person typing, and tells the server.
    pub fn type_into(&self, uri: &str, text: &str) {
        let version = {
            let mut mirror = self.shared.mirror.lock().unwrap_or_else(|p| p.into_inner());
            let entry = mirror
                .as_mut()
                .and_then(|m| m.get_mut(uri))
                .expect("a mirrored open document");
            entry.0 += 1;
            entry.1 = text.to_string();
            entry.0
        };
        self.notify(
            "textDocument/didChange",
            json!({"textDocument": {"uri": uri, "version": version}, "contentChanges": [{"text": text}]}),
        );
    }

    /// Sends a notification.
    #[track_caller]
    pub fn notify(&self, method: &str, params: Value) {
        if method == "textDocument/didOpen"
            && let Some(mirror) = self
                .shared
                .mirror
                .lock()
                .unwrap_or_else(|p| p.into_inner())
                .as_mut()
        {
            let doc = &params["textDocument"];
            mirror.insert(
                doc["uri"].as_str().unwrap_or_default().to_string(),
                (
                    doc["version"].as_i64().unwrap_or(0),
                    doc["text"].as_str().unwrap_or_default().to_string(),
                ),
            );
        }
        let message = json!({ "jsonrpc": "2.0", "method": method, "params": params });
        if !self.shared.write(&message) {
            self.fail(&format!(
                "could not send {method}: the server's stdin is closed"
            ));
        }
    }

    /// Writes bytes to the server's stdin as they are, for malformed-frame tests.
    #[track_caller]
    pub fn send_raw(&self, bytes: &[u8]) {
        if !self.shared.write_bytes(bytes) {
            self.fail("could not write raw bytes: the server's stdin is closed");
        }
    }

    /// Waits for the next response that answers none of our requests (id `null`, as a parse
    /// error's reply has) and returns it whole.
    #[track_caller]
    pub fn next_orphan_response(&self) -> Value {
        self.wait_for("a response with id null", |t| {
            let next = t.orphan_responses.get(t.orphans_taken).cloned();
            if next.is_some() {
                t.orphans_taken += 1;
            }
            next
        })
    }

    /// Waits for the next notification of `method` not yet returned by this call, and returns
    /// its params.
    #[track_caller]
    pub fn next_notification(&self, method: &str) -> Value {
        self.wait_for(&format!("a {method} notification"), |t| {
            let taken = t.notifications_taken.get(method).copied().unwrap_or(0);
            let next = t
                .notifications
                .iter()
                .filter(|n| n["method"] == method)
                .nth(taken)
                .map(|n| n["params"].clone());
            if next.is_some() {
                t.notifications_taken.insert(method.to_owned(), taken + 1);
            }
            next
        })
    }

    /// The params of every notification of `method` received so far.
    pub fn notifications(&self, method: &str) -> Vec<Value> {
        self.check_stdout();
        let traffic = self.shared.traffic();
        traffic
            .notifications
            .iter()
            .filter(|n| n["method"] == method)
            .map(|n| n["params"].clone())
            .collect()
    }

    /// The `update` of every `bravebot/session/update` for `session` received so far, in order.
    pub fn updates(&self, session: &str) -> Vec<Value> {
        self.notifications(SESSION_UPDATE)
            .into_iter()
            .filter(|params| params["sessionId"] == session)
            .map(|params| params["update"].clone())
            .collect()
    }

    /// Forgets every notification, response and server request recorded so far, for long runs
    /// that would otherwise hold all of them. Only call it when nothing recorded is still awaited.
    pub fn forget_history(&self) {
        let mut traffic = self.shared.traffic();
        traffic.responses.clear();
        traffic.orphan_responses.clear();
        traffic.orphans_taken = 0;
        traffic.notifications.clear();
        traffic.notifications_taken.clear();
        traffic.server_requests.clear();
        traffic.server_requests_taken.clear();
    }

    /// Sets how the client answers `bravebot/session/requestPermission` and
    /// `window/showMessageRequest`. Without a policy it refuses (see [`Answer::default_for`]).
    /// The policy runs on the reader thread: it must not wait on this client.
    pub fn answer_permissions_with(
        &self,
        policy: impl FnMut(&ServerRequest) -> Answer + Send + 'static,
    ) {
        *self
            .shared
            .permission_policy
            .lock()
            .unwrap_or_else(|p| p.into_inner()) = Some(Box::new(policy));
    }

    /// Sets how the client answers `workspace/applyEdit`. Without a policy it applies every edit.
    pub fn answer_apply_edit_with(
        &self,
        policy: impl FnMut(&ServerRequest) -> Answer + Send + 'static,
    ) {
        *self
            .shared
            .apply_edit_policy
            .lock()
            .unwrap_or_else(|p| p.into_inner()) = Some(Box::new(policy));
    }

    /// Sets how the client answers `bravebot/diagnostics/get`. Without a policy it answers
    /// `null`, which the server cannot read as diagnostics.
    pub fn answer_diagnostics_with(
        &self,
        policy: impl FnMut(&ServerRequest) -> Answer + Send + 'static,
    ) {
        *self
            .shared
            .diagnostics_policy
            .lock()
            .unwrap_or_else(|p| p.into_inner()) = Some(Box::new(policy));
    }

    /// The questions (`requestPermission` requests) the server has put so far, in order.
    pub fn questions(&self) -> Vec<ServerRequest> {
        self.server_requests(REQUEST_PERMISSION)
            .into_iter()
            .map(|(q, _)| q)
            .collect()
    }

    /// The kinds of the questions put so far, in order.
    pub fn question_kinds(&self) -> Vec<String> {
        self.questions()
            .iter()
            .filter_map(|q| q.question_kind().map(str::to_string))
            .collect()
    }

    /// Every request of `method` the server sent so far, with the answer given (`None` when
    /// none was given yet).
    pub fn server_requests(&self, method: &str) -> Vec<(ServerRequest, Option<Answer>)> {
        self.check_stdout();
        let traffic = self.shared.traffic();
        traffic
            .server_requests
            .iter()
            .filter(|(request, _)| request.method == method)
            .cloned()
            .collect()
    }

    /// Waits for the next request of `method` from the server not yet returned by this call.
    #[track_caller]
    pub fn next_server_request(&self, method: &str) -> ServerRequest {
        self.wait_for(&format!("a {method} request from the server"), |t| {
            let taken = t.server_requests_taken.get(method).copied().unwrap_or(0);
            let next = t
                .server_requests
                .iter()
                .filter(|(request, _)| request.method == method)
                .nth(taken)
                .map(|(request, _)| request.clone());
            if next.is_some() {
                t.server_requests_taken.insert(method.to_owned(), taken + 1);
            }
            next
        })
    }

    /// Answers a request the policy held (see [`Answer::Hold`]). Fails the test if the request
    /// was answered already: a second reply would be a bug of the test, not of the server.
    #[track_caller]
    pub fn reply(&self, request: &ServerRequest, answer: Answer) {
        {
            let mut traffic = self.shared.traffic();
            let entry = traffic
                .server_requests
                .iter_mut()
                .find(|(sent, _)| sent.id == request.id && sent.method == request.method);
            match entry {
                Some((_, given @ None)) => *given = Some(answer.clone()),
                Some((_, Some(given))) => {
                    let given = given.clone();
                    drop(traffic);
                    self.fail(&format!(
                        "request {} ({}) was already answered with {given:?}",
                        request.id, request.method
                    ));
                }
                None => {
                    drop(traffic);
                    self.fail(&format!("the server sent no request {}", request.id));
                }
            }
        }
        self.shared.reply(&request.id, &answer);
    }

    /// `bravebot/session/new` in the server's working directory; returns the session id.
    #[track_caller]
    pub fn new_session(&self) -> String {
        let result = self
            .request("bravebot/session/new", json!({ "cwd": self.options.cwd }))
            .unwrap_or_else(|error| self.fail(&format!("session/new was refused: {error}")));
        match result["sessionId"].as_str() {
            Some(id) => id.to_owned(),
            None => self.fail(&format!(
                "session/new returned no sessionId string: {result}"
            )),
        }
    }

    /// Closes the server's stdin: the end of input.
    pub fn close_stdin(&self) {
        self.shared
            .writer
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .take();
    }

    /// Waits for the server to exit by itself (after [`LspClient::close_stdin`] or `exit`), reads
    /// the rest of its stdout, checks it, and returns its exit status.
    #[track_caller]
    pub fn wait_for_exit(&mut self) -> ExitStatus {
        if let Some(status) = self.exit_status {
            return status;
        }
        self.wait_for("the server to close stdout", |t| t.eof.then_some(()));
        let deadline = Instant::now() + self.options.timeout;
        let Some(status) = wait_for_exit(&mut self.child, deadline) else {
            self.fail("the server closed stdout but did not exit");
        };
        self.exit_status = Some(status);
        self.join_readers();
        self.check_stdout();
        status
    }

    /// `shutdown`, then `exit`, then waits for the process; returns its exit status.
    #[track_caller]
    pub fn shutdown(mut self) -> ExitStatus {
        if let Err(error) = self.request("shutdown", Value::Null) {
            self.fail(&format!("shutdown was refused: {error}"));
        }
        self.notify("exit", Value::Null);
        self.close_stdin();
        self.wait_for_exit()
    }

    /// Fails the test now if stdout carried anything but framed JSON-RPC.
    #[track_caller]
    pub fn check_stdout(&self) {
        let violation = self.shared.traffic().violation.clone();
        if let Some(violation) = violation {
            self.fail(&format!(
                "stdout carried something other than framed JSON-RPC: {violation}"
            ));
        }
    }

    /// Fails the test with `what`, the server's stderr and a summary of the traffic.
    #[track_caller]
    pub fn fail(&self, what: &str) -> ! {
        let summary = {
            let traffic = self.shared.traffic();
            let methods: Vec<&str> = traffic
                .notifications
                .iter()
                .rev()
                .take(12)
                .filter_map(|n| n["method"].as_str())
                .collect();
            format!(
                "{} notifications (latest first: {methods:?}), {} server requests, eof: {}",
                traffic.notifications.len(),
                traffic.server_requests.len(),
                traffic.eof
            )
        };
        panic!(
            "{what}\n--- traffic: {summary}\n--- server stderr (tail):\n{}",
            self.shared.stderr_tail()
        );
    }

    /// Waits until `take` finds something, failing on a protocol violation, on the end of
    /// stdout, or at the deadline.
    #[track_caller]
    fn wait_for<T>(&self, what: &str, mut take: impl FnMut(&mut Traffic) -> Option<T>) -> T {
        let deadline = Instant::now() + self.options.timeout;
        let mut traffic = self.shared.traffic();
        loop {
            if let Some(violation) = traffic.violation.clone() {
                drop(traffic);
                self.fail(&format!(
                    "while waiting for {what}, stdout carried something other than framed \
                     JSON-RPC: {violation}"
                ));
            }
            if let Some(failure) = traffic.policy_failure.clone() {
                drop(traffic);
                self.fail(&format!("while waiting for {what}, {failure}"));
            }
            if let Some(found) = take(&mut traffic) {
                return found;
            }
            if traffic.eof {
                drop(traffic);
                self.fail(&format!(
                    "the server closed stdout while the test waited for {what}"
                ));
            }
            let left = deadline.saturating_duration_since(Instant::now());
            if left.is_zero() {
                drop(traffic);
                self.fail(&format!(
                    "timed out after {:?} waiting for {what}",
                    self.options.timeout
                ));
            }
            traffic = self
                .shared
                .changed
                .wait_timeout(traffic, left)
                .unwrap_or_else(|p| p.into_inner())
                .0;
        }
    }

    fn join_readers(&mut self) {
        for handle in [self.reader.take(), self.stderr_reader.take()]
            .into_iter()
            .flatten()
        {
            let _ = handle.join();
        }
    }
}

impl Drop for LspClient {
    fn drop(&mut self) {
        self.close_stdin();
        if self.exit_status.is_none() {
            let _ = self.child.kill();
            let _ = self.child.wait();
        }
        self.join_readers();
        if !std::thread::panicking() {
            self.check_stdout();
        }
    }
}

/// The reader thread: parses stdout frame by frame until its end.
fn read_stdout(shared: &Shared, stdout: impl Read) {
    let mut reader = BufReader::new(stdout);
    loop {
        match read_frame(&mut reader) {
            Ok(Some(message)) => dispatch(shared, message),
            Ok(None) => break,
            Err(violation) => {
                shared.traffic().violation.get_or_insert(violation);
                shared.changed.notify_all();
                // Nothing after a broken frame can be trusted to be framed: drain the rest so the
                // server never blocks on a full pipe.
                let _ = std::io::copy(&mut reader, &mut std::io::sink());
                break;
            }
        }
    }
    shared.traffic().eof = true;
    shared.changed.notify_all();
}

fn quote(bytes: &[u8]) -> String {
    let shown = &bytes[..bytes.len().min(QUOTE_LIMIT)];
    format!("{:?}", String::from_utf8_lossy(shown))
}

/// Reads one frame: `Ok(None)` at a clean end of stdout, `Err` with what was seen otherwise.
fn read_frame(reader: &mut impl BufRead) -> Result<Option<Value>, String> {
    let mut content_length = None;
    let mut first = true;
    loop {
        let mut line = Vec::new();
        let read = reader
            .by_ref()
            .take(1024)
            .read_until(b'\n', &mut line)
            .map_err(|error| format!("reading stdout failed: {error}"))?;
        if read == 0 {
            return if first {
                Ok(None)
            } else {
                Err("stdout ended inside a frame header".to_owned())
            };
        }
        first = false;
        let Some(header) = line.strip_suffix(b"\r\n") else {
            return Err(format!("a header line not ended by CRLF: {}", quote(&line)));
        };
        if header.is_empty() {
            break;
        }
        let header = std::str::from_utf8(header)
            .map_err(|_| format!("a header line that is not UTF-8: {}", quote(&line)))?;
        let Some((name, value)) = header.split_once(": ") else {
            return Err(format!("not a header line: {}", quote(&line)));
        };
        if name.eq_ignore_ascii_case("Content-Length") {
            let length = value
                .parse::<usize>()
                .map_err(|_| format!("a bad Content-Length: {}", quote(&line)))?;
            content_length = Some(length);
        } else if !name.eq_ignore_ascii_case("Content-Type") {
            return Err(format!("an unknown header: {}", quote(&line)));
        }
    }
    let length = content_length.ok_or("a frame with no Content-Length header")?;
    let mut body = vec![0u8; length];
    reader
        .read_exact(&mut body)
        .map_err(|_| format!("stdout ended inside a {length}-byte frame body"))?;
    let message: Value = serde_json::from_slice(&body)
        .map_err(|error| format!("a frame body that is not JSON ({error}): {}", quote(&body)))?;
    if message.get("jsonrpc") != Some(&json!("2.0")) || !message.is_object() {
        return Err(format!(
            "a frame that is not a JSON-RPC 2.0 message: {}",
            quote(&body)
        ));
    }
    Ok(Some(message))
}

/// Records one message from the server and answers it if it is a request.
fn dispatch(shared: &Shared, message: Value) {
    let method = message
        .get("method")
        .and_then(Value::as_str)
        .map(str::to_owned);
    let id = message.get("id").cloned();
    match (method, id) {
        (Some(method), Some(id)) => {
            let request = ServerRequest {
                id,
                method,
                params: message.get("params").cloned().unwrap_or(Value::Null),
            };
            let answer = answer_server_request(shared, &request);
            if request.method == APPLY_EDIT && answer == Answer::default_for(&request) {
                mirror_edit(shared, &request);
            }
            shared.reply(&request.id, &answer);
            let given = (answer != Answer::Hold).then_some(answer);
            shared.traffic().server_requests.push((request, given));
        }
        (Some(_), None) => shared.traffic().notifications.push(message),
        (None, id) => {
            let mut traffic = shared.traffic();
            match id.as_ref().and_then(Value::as_i64) {
                Some(id) => {
                    traffic.responses.insert(id, message);
                }
                None => traffic.orphan_responses.push(message),
            }
        }
    }
    shared.changed.notify_all();
}

/// Applies an edit the client accepts to its mirrored document and tells the server the new text
/// (`didChange`), before the reply, as an editor does. Positions are taken as characters (the
/// tests' texts are ASCII).
fn mirror_edit(shared: &Shared, request: &ServerRequest) {
    let Some(change) = request.params["edit"]["documentChanges"].get(0) else {
        return;
    };
    let uri = change["textDocument"]["uri"]
        .as_str()
        .unwrap_or_default()
        .to_string();
    let told = {
        let mut mirror = shared.mirror.lock().unwrap_or_else(|p| p.into_inner());
        let Some((version, text)) = mirror.as_mut().and_then(|m| m.get_mut(&uri)) else {
            return;
        };
        let offset = |text: &str, pos: &Value| -> usize {
            let line = pos["line"].as_u64().unwrap_or(0) as usize;
            let ch = pos["character"].as_u64().unwrap_or(0) as usize;
            let start: usize = text.split_inclusive('\n').take(line).map(str::len).sum();
            (start + ch).min(text.len())
        };
        let mut spans: Vec<(usize, usize, String)> = change["edits"]
            .as_array()
            .cloned()
            .unwrap_or_default()
            .iter()
            .map(|e| {
                (
                    offset(text, &e["range"]["start"]),
                    offset(text, &e["range"]["end"]),
                    e["newText"].as_str().unwrap_or_default().to_string(),
                )
            })
            .collect();
        spans.sort_by_key(|s| std::cmp::Reverse(s.0));
        for (start, end, new) in spans {
            text.replace_range(start..end, &new);
        }
        *version += 1;
        json!({"jsonrpc": "2.0", "method": "textDocument/didChange", "params": {
            "textDocument": {"uri": uri, "version": *version},
            "contentChanges": [{"text": text.clone()}],
        }})
    };
    shared.write(&told);
}

fn answer_server_request(shared: &Shared, request: &ServerRequest) -> Answer {
    let policy = match request.method.as_str() {
        REQUEST_PERMISSION | SHOW_MESSAGE_REQUEST => &shared.permission_policy,
        APPLY_EDIT => &shared.apply_edit_policy,
        DIAGNOSTICS_GET => &shared.diagnostics_policy,
        _ => return Answer::default_for(request),
    };
    let mut policy = policy.lock().unwrap_or_else(|p| p.into_inner());
    let Some(policy) = policy.as_mut() else {
        return Answer::default_for(request);
    };
    // A policy that fails (say, a question without the option the test expected) must fail the
    // test, not kill the reader thread and leave the test waiting for its deadline.
    match std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| policy(request))) {
        Ok(answer) => answer,
        Err(panic) => {
            let reason = panic
                .downcast_ref::<String>()
                .cloned()
                .or_else(|| panic.downcast_ref::<&str>().map(|s| (*s).to_owned()))
                .unwrap_or_default();
            shared.traffic().policy_failure.get_or_insert(format!(
                "the answer policy failed on {} {}: {reason}",
                request.method, request.params
            ));
            Answer::Hold
        }
    }
}

/// The proposal an editor holding `original` rebuilds from a question's hunk texts (WRITE-61):
/// its lines, each hunk's old lines replaced by the hunk's text.
pub fn rebuilt_from_hunks(original: &str, hunks: &Value) -> Option<String> {
    let lines: Vec<&str> = original.split_inclusive('\n').collect();
    let (mut text, mut at) = (String::with_capacity(original.len()), 0);
    for h in hunks.as_array()? {
        let start = usize::try_from(h["oldStart"].as_u64()?).ok()?;
        let count = usize::try_from(h["oldLines"].as_u64()?).ok()?;
        text.extend(lines.get(at..start)?.iter().copied());
        text.push_str(h["text"].as_str()?);
        at = start + count;
    }
    text.extend(lines.get(at..)?.iter().copied());
    Some(text)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn frames(bytes: &[u8]) -> Vec<Result<Option<Value>, String>> {
        let mut reader = BufReader::new(bytes);
        let mut out = Vec::new();
        loop {
            let frame = read_frame(&mut reader);
            let stop = !matches!(frame, Ok(Some(_)));
            out.push(frame);
            if stop {
                return out;
            }
        }
    }

    #[test]
    fn reader_accepts_back_to_back_frames_and_a_content_type() {
        let bytes = b"Content-Length: 17\r\n\r\n{\"jsonrpc\":\"2.0\"}\
            Content-Length: 17\r\nContent-Type: application/vscode-jsonrpc; charset=utf-8\r\n\r\n\
            {\"jsonrpc\":\"2.0\"}";
        let frames = frames(bytes);
        assert_eq!(frames.len(), 3, "{frames:?}");
        assert!(
            frames[..2].iter().all(|f| matches!(f, Ok(Some(_)))),
            "{frames:?}"
        );
        assert_eq!(frames[2], Ok(None));
    }

    #[test]
    fn reader_rejects_a_stray_log_line_between_frames() {
        let bytes = b"Content-Length: 17\r\n\r\n{\"jsonrpc\":\"2.0\"}WARN something\n";
        let frames = frames(bytes);
        let error = frames[1].clone().expect_err("a stray line is a violation");
        assert!(error.contains("WARN something"), "{error}");
    }

    #[test]
    fn reader_rejects_a_body_that_is_not_json_rpc() {
        let not_json_rpc = frames(b"Content-Length: 7\r\n\r\n{\"a\":1}");
        assert!(not_json_rpc[0].is_err(), "{not_json_rpc:?}");
        let not_json = frames(b"Content-Length: 3\r\n\r\nabc");
        assert!(not_json[0].is_err(), "{not_json:?}");
    }

    #[test]
    fn reader_rejects_a_truncated_frame() {
        let frames = frames(b"Content-Length: 99\r\n\r\n{\"jsonrpc\":\"2.0\"}");
        assert!(frames[0].is_err(), "{frames:?}");
    }

    #[test]
    fn file_uri_escapes_what_a_uri_path_may_not_hold() {
        assert_eq!(
            file_uri(Path::new("/tmp/a b/é")),
            "file:///tmp/a%20b/%C3%A9"
        );
    }
}
