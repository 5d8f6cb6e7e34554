//! A benchmark of the `lsp` tool (not a test): a warm `goToDefinition` through the tool against
//! the same request sent straight to the same kind of server.
//!
//! Run it with the servers of `scripts/test.sh` on `PATH`:
//!
//! ```sh
//! PATH="$PWD/tests/lsp-servers/node_modules/.bin:$PWD/target/.test-deps/bin:$PATH" \
//!   cargo run --release -p bravebot-tests --bin bench_lsp [python|typescript|c]
//! ```
//!
//! It copies the fixture project of the language (`tests/fixtures/lsp/<language>`) to a temporary
//! directory and starts two servers on it. One is driven by a minimal JSON-RPC client in this
//! program (initialize, open the file, wait until a definition names the declaration). The other
//! belongs to a bravebot session and is reached through `tools::dispatch("lsp", ...)`, exactly as
//! a planner's call is: argument checks, the routing gate, confinement, the document sync, the
//! settle check, the request, position conversion, labelling and rendering. After both are warm,
//! the two are timed alternately, 200 times each, and the medians and the overhead are printed.
#![allow(clippy::print_stdout, clippy::unwrap_used, clippy::expect_used)] // A report on stdout.

use std::io::{BufRead, BufReader, Read, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, ChildStdout, Command, Stdio};
use std::sync::Arc;
use std::time::{Duration, Instant};

use bravebot_core::egress::Egress;
use bravebot_core::files::DiskOnly;
use bravebot_core::model::{Api, ModelClient, ModelConfig};
use bravebot_core::screen::{Answer, BoxFuture, Question, Screen, Update};
use bravebot_core::session::{Session, SessionConfig, SystemFacts};
use bravebot_core::settings::Settings;
use bravebot_core::tools::dispatch;
use serde_json::{Value, json};
use tokio_util::sync::CancellationToken;

const RUNS: usize = 200;

/// A language's fixture, the file and 1-based position asked about, and the place expected.
struct Case {
    fixture: &'static str,
    command: &'static [&'static str],
    language_id: &'static str,
    file: &'static str,
    line: u32,
    character: u32,
    expected: &'static str,
}

const CASES: &[Case] = &[
    Case {
        fixture: "python",
        command: &["pyright-langserver", "--stdio"],
        language_id: "python",
        file: "app.py",
        line: 5,
        character: 11,
        expected: "util.py:4:5",
    },
    Case {
        fixture: "typescript",
        command: &["typescript-language-server", "--stdio"],
        language_id: "typescript",
        file: "src/main.ts",
        line: 3,
        character: 13,
        expected: "src/util.ts:1:17",
    },
    Case {
        fixture: "c",
        command: &["clangd", "--background-index=false"],
        language_id: "c",
        file: "main.c",
        line: 6,
        character: 12,
        expected: "main.c:3:12",
    },
];

/// The person, approving every language server.
struct Approving;

impl Screen for Approving {
    fn update(&self, _: Update) {}

    fn ask(&self, question: Question) -> BoxFuture<'_, Answer> {
        let first = question.options[0].id.clone();
        Box::pin(async move { Answer::select(first) })
    }

    fn interactive(&self) -> bool {
        true
    }
}

/// A minimal client for the straight requests.
struct Direct {
    child: Child,
    input: ChildStdin,
    output: BufReader<ChildStdout>,
    next: i64,
}

impl Direct {
    fn start(command: &[&str], root: &Path) -> Direct {
        let mut child = Command::new(command[0])
            .args(&command[1..])
            .current_dir(root)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .unwrap_or_else(|e| panic!("start {}: {e} (is it on PATH?)", command[0]));
        let input = child.stdin.take().unwrap();
        let output = BufReader::new(child.stdout.take().unwrap());
        let mut d = Direct {
            child,
            input,
            output,
            next: 1,
        };
        let uri = url_of(root);
        d.request(
            "initialize",
            json!({"processId": std::process::id(), "rootUri": uri, "workspaceFolders": [{"uri": uri, "name": "w"}],
                   "capabilities": {"window": {"workDoneProgress": true}}}),
        );
        d.send(&json!({"jsonrpc": "2.0", "method": "initialized", "params": {}}));
        d
    }

    fn send(&mut self, message: &Value) {
        let body = message.to_string();
        write!(self.input, "Content-Length: {}\r\n\r\n{body}", body.len()).unwrap();
        self.input.flush().unwrap();
    }

    fn read(&mut self) -> Value {
        let mut length = 0;
        loop {
            let mut line = String::new();
            assert!(
                self.output.read_line(&mut line).unwrap() > 0,
                "the server ended"
            );
            let line = line.trim_end();
            if line.is_empty() && length > 0 {
                break;
            }
            if let Some(v) = line.strip_prefix("Content-Length:") {
                length = v.trim().parse().unwrap();
            }
        }
        let mut body = vec![0; length];
        self.output.read_exact(&mut body).unwrap();
        serde_json::from_slice(&body).unwrap()
    }

    /// Sends a request and reads until its answer, answering the server's own requests.
    fn request(&mut self, method: &str, params: Value) -> Value {
        let id = self.next;
        self.next += 1;
        self.send(&json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}));
        loop {
            let message = self.read();
            match (message.get("method"), message.get("id")) {
                (None, Some(got)) if got == &json!(id) => {
                    return message.get("result").cloned().unwrap_or(Value::Null);
                }
                (Some(m), Some(their)) => {
                    let items = message
                        .pointer("/params/items")
                        .and_then(Value::as_array)
                        .map_or(0, Vec::len);
                    let result = if m == "workspace/configuration" {
                        Value::Array(vec![Value::Null; items])
                    } else {
                        Value::Null
                    };
                    let reply = json!({"jsonrpc": "2.0", "id": their, "result": result});
                    self.send(&reply);
                }
                _ => {}
            }
        }
    }
}

impl Drop for Direct {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn url_of(path: &Path) -> String {
    bravebot_core::paths::file_uri(path)
}

fn copy_tree(from: &Path, to: &Path) {
    for entry in std::fs::read_dir(from).unwrap() {
        let entry = entry.unwrap();
        let target = to.join(entry.file_name());
        if entry.file_type().unwrap().is_dir() {
            std::fs::create_dir_all(&target).unwrap();
            copy_tree(&entry.path(), &target);
        } else {
            std::fs::copy(entry.path(), &target).unwrap();
        }
    }
}

fn median(mut v: Vec<Duration>) -> Duration {
    v.sort();
    v[v.len() / 2]
}

fn main() {
    let which = std::env::args().nth(1).unwrap_or_else(|| "python".into());
    let case = CASES
        .iter()
        .find(|c| c.fixture == which)
        .unwrap_or_else(|| panic!("no case {which}: python, typescript or c"));
    let workspace = tempfile::tempdir().unwrap();
    let root = std::fs::canonicalize(workspace.path()).unwrap();
    let fixtures: PathBuf = Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/lsp");
    copy_tree(&fixtures.join(case.fixture), &root);
    let file = root.join(case.file);
    let text = std::fs::read_to_string(&file).unwrap();

    // Straight to the server: open the file, then ask until the answer is the declaration.
    let mut direct = Direct::start(case.command, &root);
    let uri = url_of(&file);
    direct.send(&json!({"jsonrpc": "2.0", "method": "textDocument/didOpen",
        "params": {"textDocument": {"uri": uri, "languageId": case.language_id, "version": 1, "text": text}}}));
    let params = json!({"textDocument": {"uri": uri},
        "position": {"line": case.line - 1, "character": case.character - 1}});
    let expected_file = case.expected.split(':').next().unwrap();
    let warm_deadline = Instant::now() + Duration::from_secs(60);
    loop {
        let answer = direct.request("textDocument/definition", params.clone());
        if answer.to_string().contains(expected_file) {
            break;
        }
        assert!(
            Instant::now() < warm_deadline,
            "the direct server never warmed: {answer}"
        );
        std::thread::sleep(Duration::from_millis(100));
    }

    // Through the tool, in a session of its own.
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    let session = runtime.block_on(async {
        let egress = Arc::new(Egress::from_env(&|_| None).unwrap());
        let model = ModelClient::new(
            ModelConfig {
                api: Api::OpenAi,
                base_url: "http://127.0.0.1:9/v1".into(),
                name: "none".into(),
                api_key: None,
            },
            egress,
        );
        Session::new(
            SessionConfig {
                id: "bench".into(),
                cwd: root.clone(),
                settings: Settings::default(),
                facts: SystemFacts {
                    is_git: false,
                    platform: "linux".into(),
                    os_version: "Linux".into(),
                    shell: "/bin/sh".into(),
                    date: "today".into(),
                },
                audit_log: None,
            },
            model,
            Arc::new(Approving),
            Arc::new(DiskOnly),
        )
    });
    let arguments = json!({"operation": "goToDefinition", "path": case.file, "line": case.line,
        "character": case.character, "why": "bench"})
    .to_string();
    let cancel = CancellationToken::new();
    let through_tool = || {
        runtime.block_on(async {
            let (out, _, _) = dispatch(&session, "lsp", &arguments, &cancel).await;
            out.text.as_str().to_string()
        })
    };
    let started = Instant::now();
    let first = through_tool();
    let cold = started.elapsed();
    assert!(first.contains(case.expected), "{first}");

    let mut tool = Vec::with_capacity(RUNS);
    let mut straight = Vec::with_capacity(RUNS);
    for _ in 0..RUNS {
        let t = Instant::now();
        let answer = direct.request("textDocument/definition", params.clone());
        straight.push(t.elapsed());
        assert!(answer.to_string().contains(expected_file));
        let t = Instant::now();
        let answer = through_tool();
        tool.push(t.elapsed());
        assert!(answer.contains(case.expected), "{answer}");
    }
    let (tool, straight) = (median(tool), median(straight));
    println!("server: {}", case.command.join(" "));
    println!("first lsp call (start, initialize, settle, answer): {cold:.2?}");
    println!("warm goToDefinition, median of {RUNS}:");
    println!("  straight to the server: {straight:.2?}");
    println!("  through the lsp tool:   {tool:.2?}");
    println!(
        "  overhead:               {:.2?}",
        tool.saturating_sub(straight)
    );
    session.stop_language_servers();
    runtime.shutdown_timeout(Duration::from_secs(3));
}
