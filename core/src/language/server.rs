//! One started language server: the `initialize` handshake, the documents it was shown, waiting
//! for it to settle, requests with deadlines, and a polite shutdown that ends in a kill.

use std::collections::HashMap;
use std::hash::{DefaultHasher, Hash, Hasher};
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use super::position::Encoding;
use super::rpc::{Connection, Exit, RpcError};
use super::table::{Language, Launch, Limits};
use crate::process;

/// A server that answered `initialize`.
pub struct Server {
    pub language: Language,
    /// The program as the person was shown it.
    pub program: String,
    conn: Connection,
    encoding: Encoding,
    capabilities: Value,
    documents: tokio::sync::Mutex<HashMap<PathBuf, OpenDocument>>,
    /// Whether the first wait for the index is over (settled, or its bound passed).
    settled: AtomicBool,
    /// The confinement it started under, kept for its private directory (LSP-20).
    confinement: Option<crate::sandbox::run::RunConfinement>,
}

struct OpenDocument {
    version: i32,
    digest: u64,
}

fn digest(text: &str) -> u64 {
    let mut h = DefaultHasher::new();
    text.hash(&mut h);
    h.finish()
}

/// What `initialize` is sent with: what this client can read, and the workspace.
fn initialize_params(workspace: &Path, launch: &Launch) -> Value {
    let uri = crate::paths::file_uri(workspace);
    let name = workspace
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| "workspace".into());
    let kinds: Vec<u32> = (1..=26).collect();
    let mut params = json!({
        "processId": std::process::id(),
        "clientInfo": {"name": "bravebot", "version": env!("CARGO_PKG_VERSION")},
        "rootUri": uri,
        "rootPath": workspace,
        "workspaceFolders": [{"uri": uri, "name": name}],
        "capabilities": {
            "general": {"positionEncodings": ["utf-32", "utf-16"]},
            "window": {"workDoneProgress": true},
            "workspace": {
                "workspaceFolders": true,
                "configuration": true,
                "symbol": {"symbolKind": {"valueSet": kinds}},
            },
            "textDocument": {
                "synchronization": {"dynamicRegistration": false, "didSave": false},
                "definition": {"linkSupport": true},
                "implementation": {"linkSupport": true},
                "references": {},
                "hover": {"contentFormat": ["plaintext", "markdown"]},
                "documentSymbol": {
                    "hierarchicalDocumentSymbolSupport": true,
                    "symbolKind": {"valueSet": kinds},
                },
                "callHierarchy": {},
            },
            "experimental": {"serverStatusNotification": true},
        },
    });
    if !launch.initialization_options.is_null() {
        params["initializationOptions"] = launch.initialization_options.clone();
    }
    params
}

impl Server {
    /// Whether it started confined (LSP-20).
    pub fn confined(&self) -> bool {
        self.confinement.is_some()
    }

    /// Starts the program, runs the handshake and returns the server, or says in our own words
    /// why it did not start. A server that fails is killed.
    pub async fn start(
        launch: &Launch,
        workspace: &Path,
        limits: &Limits,
        confined: bool,
    ) -> Result<Server, String> {
        if let Some(cache) = &launch.cache {
            create_private_dir(cache)
                .map_err(|e| format!("its cache directory could not be made: {e}"))?;
        }
        // Confined (LSP-20): the confinement is built off the runtime's workers, and a server
        // the kernel cannot hold is not started.
        let confinement = if confined {
            let (workspace, cache, program) = (
                workspace.to_path_buf(),
                launch.cache.clone(),
                launch.program.clone(),
            );
            let built = tokio::task::spawn_blocking(move || {
                // The workspace's real path is the one granted, however it was spelled.
                let workspace = std::fs::canonicalize(&workspace).unwrap_or(workspace);
                crate::sandbox::run::prepare_language_server(
                    &workspace,
                    &program,
                    &crate::sandbox::run::Homes::from_env(),
                    cache.as_deref(),
                    std::env::vars_os(),
                )
            })
            .await
            .map_err(|e| format!("its confinement could not be built: {e}"))?;
            Some(built.map_err(|r| format!("it could not be confined: {r}"))?)
        } else {
            None
        };
        let arg0 = launch
            .program
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        let spec = process::Spec {
            program: &launch.program,
            arg0: &arg0,
            args: &launch.args,
            cwd: workspace,
            env: launch.env.clone(),
            withheld: &launch.withheld,
            base: confinement.as_ref().map(|c| c.env.as_slice()),
            stdin: Stdio::piped(),
            stdout: Stdio::piped(),
            stderr: Stdio::piped(),
        };
        let child = match &confinement {
            Some(c) => process::spawn_confined(spec, &c.confined),
            None => process::spawn(spec),
        }
        .map_err(|e| format!("it could not be executed: {}", e.source))?;
        let label = format!("{} server {}", launch.language.id(), launch.shown);
        let conn = Connection::new(label, child)?;
        let answer = conn
            .request(
                "initialize",
                initialize_params(workspace, launch),
                limits.initialize,
                true,
            )
            .await;
        let result = match answer {
            Ok(result) => result,
            Err(e) => {
                let why = match e {
                    RpcError::Exited => {
                        conn.wait_exit(Duration::from_secs(2)).await;
                        let how = conn
                            .exited()
                            .map_or_else(|| "no status yet".to_string(), |Exit(s)| s);
                        format!("it exited before it finished starting ({how})")
                    }
                    RpcError::TimedOut(t) => {
                        format!("it did not answer `initialize` within {} s", t.as_secs())
                    }
                    RpcError::Code(code) => {
                        format!("it refused `initialize` (JSON-RPC error {code})")
                    }
                };
                conn.kill();
                return Err(why);
            }
        };
        conn.notify_now("initialized", json!({}));
        conn.ready();
        let capabilities = result.get("capabilities").cloned().unwrap_or(Value::Null);
        let encoding =
            Encoding::from_capability(capabilities.get("positionEncoding").and_then(Value::as_str));
        Ok(Server {
            language: launch.language,
            program: launch.shown.clone(),
            conn,
            encoding,
            capabilities,
            documents: tokio::sync::Mutex::new(HashMap::new()),
            settled: AtomicBool::new(false),
            confinement,
        })
    }

    pub fn pid(&self) -> u32 {
        self.conn.pid()
    }

    pub fn encoding(&self) -> Encoding {
        self.encoding
    }

    /// Whether the server's output ended after `initialize`: it crashed or was stopped.
    pub fn ended(&self) -> bool {
        self.conn.closed()
    }

    /// How the process ended, waiting a moment for the status when the output already ended.
    pub async fn exit_status(&self) -> String {
        self.conn.wait_exit(Duration::from_secs(1)).await;
        self.conn
            .exited()
            .map_or_else(|| "its output ended".to_string(), |Exit(s)| s)
    }

    /// Whether the server is working on something it announced (indexing).
    pub fn busy(&self) -> bool {
        self.conn
            .activity(|a| !a.active.is_empty() || a.quiescent == Some(false))
    }

    /// Whether the server's capabilities offer a provider (`definitionProvider`, ...).
    pub fn offers(&self, provider: &str) -> bool {
        match self.capabilities.get(provider) {
            None | Some(Value::Null) | Some(Value::Bool(false)) => false,
            Some(_) => true,
        }
    }

    /// Shows the server a file's current text: opened the first time, changed whole when the
    /// text differs from what it was last shown (an editor's unsaved buffer included).
    pub async fn show_document(&self, path: &Path, language_id: &str, text: &str) {
        let uri = crate::paths::file_uri(path);
        let digest = digest(text);
        let mut documents = self.documents.lock().await;
        match documents.get_mut(path) {
            None => {
                self.conn.notify(
                    "textDocument/didOpen",
                    json!({"textDocument": {"uri": uri, "languageId": language_id, "version": 1, "text": text}}),
                );
                documents.insert(path.to_path_buf(), OpenDocument { version: 1, digest });
            }
            Some(open) if open.digest != digest => {
                open.version += 1;
                open.digest = digest;
                self.conn.notify(
                    "textDocument/didChange",
                    json!({"textDocument": {"uri": uri, "version": open.version}, "contentChanges": [{"text": text}]}),
                );
            }
            Some(_) => {}
        }
    }

    /// Waits for the server to settle: until no progress it began is open and, the first time,
    /// until it has been quiet for a moment after the question's document was shown. Returns
    /// the bound when it came first: the answer may be short.
    pub async fn settle(&self, limits: &Limits) -> Option<Duration> {
        let first = !self.settled.load(Ordering::SeqCst);
        let since = Instant::now();
        let bound = if first { limits.settle } else { limits.busy };
        let deadline = since + bound;
        let mut tick = self.conn.activity_tick();
        loop {
            if self.conn.closed() {
                return None;
            }
            let (busy, last) = self.conn.activity(|a| {
                (
                    !a.active.is_empty() || a.quiescent == Some(false),
                    a.last_message,
                )
            });
            let quiet_at = last.max(since) + limits.quiet;
            let now = Instant::now();
            if !busy && (!first || now >= quiet_at) {
                self.settled.store(true, Ordering::SeqCst);
                return None;
            }
            if now >= deadline {
                // The long first wait is paid once: later questions wait the shorter bound.
                self.settled.store(true, Ordering::SeqCst);
                return Some(bound);
            }
            let wake = if busy {
                deadline
            } else {
                quiet_at.min(deadline)
            };
            tokio::select! {
                changed = tick.changed() => if changed.is_err() { return None; },
                () = tokio::time::sleep_until(wake.into()) => {}
            }
        }
    }

    /// One request, held until `initialize` completed and bounded by the request deadline.
    pub async fn request(
        &self,
        method: &str,
        params: Value,
        limits: &Limits,
    ) -> Result<Value, RpcError> {
        self.conn
            .request(method, params, limits.request, false)
            .await
    }

    /// `shutdown`, then `exit`, then a kill of whatever is left in its process group.
    pub async fn shutdown(&self, limits: &Limits) {
        if !self.conn.closed() {
            let _ = self
                .conn
                .request("shutdown", Value::Null, limits.shutdown, true)
                .await;
            self.conn.notify_now("exit", Value::Null);
            self.conn.wait_exit(limits.shutdown).await;
        }
        self.conn.kill();
    }

    /// Kills it now.
    pub fn kill(&self) {
        self.conn.kill();
    }
}

/// Makes a directory (and its parents) readable by the person alone.
fn create_private_dir(path: &Path) -> std::io::Result<()> {
    use std::os::unix::fs::DirBuilderExt;
    std::fs::DirBuilder::new()
        .recursive(true)
        .mode(0o700)
        .create(path)
}
