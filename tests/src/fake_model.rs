//! A fake OpenAI-compatible model server that answers each role from its own script.
//!
//! The server listens on 127.0.0.1 at a port the OS picks, on a thread of its own with its own
//! tokio runtime, so synchronous tests (driving the binary over stdio) and async ones can both use
//! it; it stops when the [`FakeModel`] is dropped. Requests are told apart by the
//! `X-Bravebot-Role` header (CONTRACT §2): a check's request is answered from the check script,
//! never from the planner's.
//!
//! It speaks the Anthropic messages format too (`POST /v1/messages`, answered with a whole JSON
//! message of `text` and `tool_use` blocks; point the client at the URL without `/v1`), and its
//! model listing says what each model takes besides text (`fake-model`: pictures and PDFs;
//! `fake-model-small`: text only). [`RecordedRequest::file_parts`] reads the image, file and
//! document parts a request carried in either format.
//!
//! ```no_run
//! use bravebot_tests::fake_model::{FakeModel, Reply};
//! use serde_json::json;
//!
//! let model = FakeModel::start_with(|script| {
//!     script
//!         .planner(vec![
//!             Reply::tool_call("read_file", json!({"path": "notes.md", "why": "asked"})),
//!             Reply::text("done"),
//!         ])
//!         .check(vec![Reply::text("VERDICT: safe")])
//! });
//! // ... point bravebot at model.url() and run a turn ...
//! model.assert_no_planner_request_contains("text only the file holds");
//! ```

use std::collections::{HashMap, VecDeque};
use std::net::SocketAddr;
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::oneshot;

use crate::prompt_cache::{self, Format, PromptCache, Rendered};

/// The roles of CONTRACT §2, each with a script of its own.
const ROLES: [&str; 4] = ["planner", "delegate", "processor", "check"];

/// What a planner gets once its script has run out: a plain answer that ends the turn, so a test
/// that scripted too few replies fails on its assertions rather than hanging.
pub const EXHAUSTED_TEXT: &str = "(script exhausted)";

/// Requests larger than this are refused; no test sends one.
const MAX_REQUEST_BYTES: usize = 64 * 1024 * 1024;

/// How many pieces streamed text and tool-call arguments are cut into.
const PIECES: usize = 3;

/// One scripted answer.
#[derive(Clone, Debug)]
pub struct Reply {
    kind: ReplyKind,
    text: String,
    streaming: bool,
    truncated: bool,
    cut: bool,
    /// The call whose result names the references this reply's arguments ask for.
    refs_of: Option<String>,
    /// The counts the reply reports, in the wire format the request came in; `None` reports none.
    usage: Option<Usage>,
}

/// What a reply says the call cost: `input` counts every token of the request, `cached` of them
/// read from the cache, `written` of them written to it (Anthropic's breakpoints only). Written as
/// each wire format writes it: OpenAI's `prompt_tokens` (with
/// `prompt_tokens_details.cached_tokens`), Anthropic's `input_tokens` without the cache and
/// `cache_read_input_tokens` and `cache_creation_input_tokens` beside it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Usage {
    pub input: u64,
    pub output: u64,
    pub cached: Option<u64>,
    pub written: u64,
}

impl Usage {
    /// The `usage` object of an OpenAI-compatible reply.
    fn openai(self) -> Value {
        let mut usage = json!({
            "prompt_tokens": self.input,
            "completion_tokens": self.output,
            "total_tokens": self.input + self.output,
        });
        if let Some(cached) = self.cached {
            usage["prompt_tokens_details"] = json!({"cached_tokens": cached});
        }
        usage
    }

    /// The `usage` object of an Anthropic `message_start` (or a whole reply, with `output`).
    fn anthropic(self, output: u64) -> Value {
        let cached = self.cached.unwrap_or(0);
        json!({
            "input_tokens": self.input.saturating_sub(cached).saturating_sub(self.written),
            "cache_read_input_tokens": cached,
            "cache_creation_input_tokens": self.written,
            "output_tokens": output,
        })
    }
}

#[derive(Clone, Debug)]
struct Call {
    /// `None` takes the next `call_N`.
    id: Option<String>,
    name: String,
    arguments: Value,
}

#[derive(Clone, Debug)]
enum ReplyKind {
    Answer { calls: Vec<Call> },
    Error { status: u16, message: String },
    Broken,
    Stall,
    WebPage,
}

impl Reply {
    pub fn text(text: impl Into<String>) -> Reply {
        Reply {
            kind: ReplyKind::Answer { calls: Vec::new() },
            text: text.into(),
            streaming: true,
            truncated: false,
            cut: false,
            refs_of: None,
            usage: None,
        }
    }

    /// One tool call; its id is `call_N`, numbered across the whole server from 1.
    pub fn tool_call(name: impl Into<String>, arguments: Value) -> Reply {
        Reply::tool_calls(vec![(name, arguments)])
    }

    /// One tool call with the id a test chose, to find its result by later.
    pub fn tool_call_with_id(id: &str, name: impl Into<String>, arguments: Value) -> Reply {
        Reply {
            kind: ReplyKind::Answer {
                calls: vec![Call {
                    id: Some(id.to_owned()),
                    name: name.into(),
                    arguments,
                }],
            },
            text: String::new(),
            streaming: true,
            truncated: false,
            cut: false,
            refs_of: None,
            usage: None,
        }
    }

    pub fn tool_calls<N: Into<String>>(calls: Vec<(N, Value)>) -> Reply {
        Reply {
            kind: ReplyKind::Answer {
                calls: calls
                    .into_iter()
                    .map(|(name, arguments)| Call {
                        id: None,
                        name: name.into(),
                        arguments,
                    })
                    .collect(),
            },
            text: String::new(),
            streaming: true,
            truncated: false,
            cut: false,
            refs_of: None,
            usage: None,
        }
    }

    /// An HTTP error with `{"error": {"message": ...}}` as its body.
    pub fn error(status: u16, message: impl Into<String>) -> Reply {
        Reply {
            kind: ReplyKind::Error {
                status,
                message: message.into(),
            },
            text: String::new(),
            streaming: false,
            truncated: false,
            cut: false,
            refs_of: None,
            usage: None,
        }
    }

    /// A reply that stops partway: a stream without `[DONE]`, or (with [`Reply::non_streaming`])
    /// a body shorter than its `Content-Length`.
    pub fn broken() -> Reply {
        Reply {
            kind: ReplyKind::Broken,
            text: "this reply breaks off".to_owned(),
            streaming: true,
            truncated: false,
            cut: false,
            refs_of: None,
            usage: None,
        }
    }

    /// A `200` whose body is a web page (`text/html`), as a captive portal, a proxy's login page
    /// or a base URL naming a web site answers. The page's words mention `[DONE]`, so a client
    /// that read them to decide would be caught out.
    pub fn web_page() -> Reply {
        Reply {
            kind: ReplyKind::WebPage,
            text: String::new(),
            streaming: false,
            truncated: false,
            cut: false,
            refs_of: None,
            usage: None,
        }
    }

    /// A stream that starts (the opening and the first piece of `text`) and then sends nothing
    /// more, holding the connection open until the client hangs up: a model that hangs.
    pub fn stall(text: impl Into<String>) -> Reply {
        Reply {
            kind: ReplyKind::Stall,
            text: text.into(),
            streaming: true,
            truncated: false,
            cut: false,
            refs_of: None,
            usage: None,
        }
    }

    /// Answers with one JSON body instead of a stream.
    pub fn non_streaming(mut self) -> Reply {
        self.streaming = false;
        self
    }

    /// Text said alongside the tool calls.
    pub fn with_text(mut self, text: impl Into<String>) -> Reply {
        self.text = text.into();
        self
    }

    /// Streams the reply up to the middle of its last piece (a tool call's arguments half sent)
    /// and hangs up: no finish, no `[DONE]`, as an endpoint that dies mid-reply does.
    pub fn cut_off(mut self) -> Reply {
        self.cut = true;
        self
    }

    /// Reports these counts: in a stream, OpenAI's last chunk only where the request asked with
    /// `stream_options.include_usage`, Anthropic's `message_start` and `message_delta` always.
    pub fn with_usage(mut self, input: u64, output: u64, cached: Option<u64>) -> Reply {
        self.usage = Some(Usage {
            input,
            output,
            cached,
            written: 0,
        });
        self
    }

    /// The estimate of the reply's tokens: its text's and its calls' bytes / 4, at least one.
    fn output_tokens(&self) -> u64 {
        let calls: usize = match &self.kind {
            ReplyKind::Answer { calls } => calls
                .iter()
                .map(|c| c.name.len() + c.arguments.to_string().len())
                .sum(),
            _ => 0,
        };
        prompt_cache::tokens(self.text.len() + calls).max(1)
    }

    /// Ends with `finish_reason: "length"`, as a reply cut by the token limit does.
    pub fn truncated(mut self) -> Reply {
        self.truncated = true;
        self
    }

    /// Reads references off the result of `call_id`, as a model does before it names one: each
    /// argument reading `ref:?stdout` or `ref:?stderr` becomes the reference that result handed
    /// back for that stream (`stdout: quarantined, ref:4`), or `ref:none` when it handed back
    /// none (the stream was empty or readable). A script cannot know the numbers in advance: they
    /// count every quarantined result of the session so far.
    pub fn naming_refs_of(mut self, call_id: &str) -> Reply {
        self.refs_of = Some(call_id.to_owned());
        self
    }

    /// This reply with its `ref:?` arguments named from the newest tool message answering
    /// [`Reply::naming_refs_of`]'s call in `request`.
    fn with_refs_named(mut self, request: &Value) -> Reply {
        let Some(call_id) = self.refs_of.take() else {
            return self;
        };
        let result = request["messages"]
            .as_array()
            .into_iter()
            .flatten()
            .rev()
            .find(|m| m["role"] == "tool" && m["tool_call_id"] == call_id.as_str())
            .map(message_text)
            .unwrap_or_default();
        if let ReplyKind::Answer { calls } = &mut self.kind {
            for call in calls {
                name_refs(&mut call.arguments, &result);
            }
        }
        self
    }
}

/// Replaces each string `ref:?STREAM` in `value` with the reference `result` gives `STREAM`.
fn name_refs(value: &mut Value, result: &str) {
    match value {
        Value::String(text) => {
            if let Some(stream) = text.strip_prefix("ref:?") {
                let named = result
                    .lines()
                    .filter_map(|line| line.trim().strip_prefix(stream))
                    .find_map(|rest| {
                        let at = rest.find("ref:")?;
                        let token: String = rest[at..]
                            .chars()
                            .take_while(|c| *c == ':' || c.is_ascii_alphanumeric())
                            .collect();
                        Some(token)
                    });
                *text = named.unwrap_or_else(|| "ref:none".to_owned());
            }
        }
        Value::Array(items) => items.iter_mut().for_each(|v| name_refs(v, result)),
        Value::Object(map) => map.values_mut().for_each(|v| name_refs(v, result)),
        _ => {}
    }
}

/// The replies for each role, built with [`FakeModel::start_with`].
#[derive(Clone, Debug, Default)]
pub struct Script {
    queues: HashMap<&'static str, VecDeque<Reply>>,
    keyed: Vec<(&'static str, String, VecDeque<Reply>)>,
    competent_check: Option<String>,
    simulate_usage: bool,
}

impl Script {
    pub fn planner(self, replies: Vec<Reply>) -> Script {
        self.role("planner", replies)
    }

    pub fn delegate(self, replies: Vec<Reply>) -> Script {
        self.role("delegate", replies)
    }

    /// Replies for the delegate whose request holds `needle` (its task, say), before the
    /// delegate's own script: delegates run side by side, so which asks first is not fixed.
    pub fn delegate_when(mut self, needle: impl Into<String>, replies: Vec<Reply>) -> Script {
        self.keyed
            .push(("delegate", needle.into(), replies.into_iter().collect()));
        self
    }

    pub fn processor(self, replies: Vec<Reply>) -> Script {
        self.role("processor", replies)
    }

    pub fn check(self, replies: Vec<Reply>) -> Script {
        self.role("check", replies)
    }

    /// Once the check's script has run out, answers every check as a competent screen would on a
    /// tree with one planted injection: `VERDICT: unsafe` when the request holds `needle`,
    /// `VERDICT: safe` otherwise. For tests and benchmarks that read many files.
    pub fn competent_check(mut self, needle: impl Into<String>) -> Script {
        self.competent_check = Some(needle.into());
        self
    }

    /// Every answer scripted without usage reports what a provider with a prefix cache would:
    /// the request's tokens, those a cache held from an earlier request of the same role, and
    /// (Anthropic) those its breakpoints wrote, by the rule [`crate::prompt_cache`] states; the
    /// output's tokens are its text's and calls' bytes / 4. Without it such a reply reports none.
    pub fn simulate_usage(mut self) -> Script {
        self.simulate_usage = true;
        self
    }

    fn role(mut self, role: &'static str, replies: Vec<Reply>) -> Script {
        self.queues.entry(role).or_default().extend(replies);
        self
    }
}

/// A request as the server received it.
#[derive(Clone, Debug)]
pub struct RecordedRequest {
    /// The `X-Bravebot-Role` header; empty when the request carried none.
    pub role: String,
    pub method: String,
    pub path: String,
    /// Names in lower case.
    pub headers: Vec<(String, String)>,
    /// The body parsed as JSON, or `Null` when it is not JSON.
    pub body: Value,
    pub raw_body: String,
    /// The role's script had run out and the fallback answer was given.
    pub exhausted: bool,
    /// From the request being read to the reply being written: the time a benchmark charges to
    /// the model rather than to bravebot.
    pub duration: Duration,
    /// The counts the reply reported (scripted or simulated), where it reported any.
    pub usage: Option<Usage>,
}

impl RecordedRequest {
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(k, _)| k.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    }

    /// How many `cache_control` breakpoints the request carries, on its tools, its system prompt
    /// and its messages' blocks (an OpenAI-compatible request carries none).
    pub fn cache_breakpoints(&self) -> usize {
        self.rendered().breakpoints.len()
    }

    /// The request's prompt as a provider's prefix cache reads it ([`crate::prompt_cache`]).
    pub fn rendered(&self) -> Rendered {
        prompt_cache::render(&self.body, self.format())
    }

    /// The wire format the request came in, told by its path.
    pub fn format(&self) -> Format {
        if self.path.split('?').next() == Some("/v1/messages") {
            Format::Anthropic
        } else {
            Format::OpenAi
        }
    }

    /// Whether the body has a `tools` key at all (a processor's and a check's must not).
    pub fn has_tools_key(&self) -> bool {
        self.body.get("tools").is_some()
    }

    /// The names of the tools the request offered, in its order.
    pub fn tool_names(&self) -> Vec<String> {
        self.body["tools"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(|t| t["function"]["name"].as_str().map(str::to_string))
            .collect()
    }

    /// Every part of the request that carries a file rather than text, in order, in either wire
    /// format: OpenAI-compatible `image_url` and `file` parts, Anthropic `image` and `document`
    /// blocks (inside a `tool_result` too).
    pub fn file_parts(&self) -> Vec<Value> {
        let mut found = Vec::new();
        let mut stack: Vec<&Value> = self.body["messages"]
            .as_array()
            .into_iter()
            .flatten()
            .rev()
            .collect();
        while let Some(value) = stack.pop() {
            match value {
                Value::Array(items) => stack.extend(items.iter().rev()),
                Value::Object(map) => {
                    let kind = map.get("type").and_then(Value::as_str).unwrap_or("");
                    if matches!(kind, "image_url" | "file" | "image" | "document") {
                        found.push(value.clone());
                    } else if let Some(content) = map.get("content") {
                        stack.push(content);
                    }
                }
                _ => {}
            }
        }
        found
    }

    /// The content of every message of the request, joined by newlines: a string content as it
    /// is, any other as its JSON.
    pub fn all_text(&self) -> String {
        self.body["messages"]
            .as_array()
            .into_iter()
            .flatten()
            .map(|m| match &m["content"] {
                Value::String(s) => s.clone(),
                other => other.to_string(),
            })
            .collect::<Vec<_>>()
            .join("\n")
    }
}

#[derive(Default)]
struct State {
    queues: HashMap<&'static str, VecDeque<Reply>>,
    keyed: Vec<(&'static str, String, VecDeque<Reply>)>,
    competent_check: Option<String>,
    simulate_usage: bool,
    cache: PromptCache,
    requests: Vec<RecordedRequest>,
    calls_made: u64,
}

/// The running server. Dropping it stops the server and waits for its thread.
pub struct FakeModel {
    addr: SocketAddr,
    state: Arc<Mutex<State>>,
    shutdown: Option<oneshot::Sender<()>>,
    thread: Option<JoinHandle<()>>,
}

impl FakeModel {
    /// A server whose planner answers from `planner`; every other role's script is empty.
    pub fn start(planner: Vec<Reply>) -> FakeModel {
        FakeModel::start_with(|script| script.planner(planner))
    }

    /// A server answering each role from the script `build` returns.
    ///
    /// Panics when the server cannot start: a test cannot go on without it.
    pub fn start_with(build: impl FnOnce(Script) -> Script) -> FakeModel {
        let script = build(Script::default());
        let state = Arc::new(Mutex::new(State {
            queues: script.queues,
            keyed: script.keyed,
            competent_check: script.competent_check,
            simulate_usage: script.simulate_usage,
            ..State::default()
        }));
        let listener = std::net::TcpListener::bind("127.0.0.1:0")
            .expect("the fake model could not bind a port on 127.0.0.1");
        let addr = listener
            .local_addr()
            .expect("the fake model's port is unknown");
        listener
            .set_nonblocking(true)
            .expect("the fake model's socket cannot be made non-blocking");
        let (shutdown, stop) = oneshot::channel();
        let thread_state = Arc::clone(&state);
        let thread = std::thread::Builder::new()
            .name("fake-model".to_owned())
            .spawn(move || serve(listener, thread_state, stop))
            .expect("the fake model's thread could not start");
        FakeModel {
            addr,
            state,
            shutdown: Some(shutdown),
            thread: Some(thread),
        }
    }

    /// The base URL to configure, ending in `/v1`.
    pub fn url(&self) -> String {
        format!("http://{}/v1", self.addr)
    }

    /// The base URL for `model.api: anthropic`, whose client adds `/v1/messages` itself.
    pub fn anthropic_url(&self) -> String {
        format!("http://{}", self.addr)
    }

    /// Every request received so far, in order of arrival.
    pub fn requests(&self) -> Vec<RecordedRequest> {
        lock(&self.state).requests.clone()
    }

    /// The requests that carried `role` in their role header.
    pub fn requests_for(&self, role: &str) -> Vec<RecordedRequest> {
        lock(&self.state)
            .requests
            .iter()
            .filter(|r| r.role == role)
            .cloned()
            .collect()
    }

    /// The text of the tool result answering `call_id`, as the planner was last sent it (a
    /// planner request carries every earlier round, so the newest one holding it is searched).
    /// Panics with the planner's last messages when no request holds it.
    pub fn tool_result(&self, call_id: &str) -> String {
        let requests = self.requests_for("planner");
        let found = requests.iter().rev().find_map(|request| {
            request.body["messages"]
                .as_array()?
                .iter()
                .find(|m| m["role"] == "tool" && m["tool_call_id"] == call_id)
                .map(message_text)
        });
        found.unwrap_or_else(|| {
            let last = requests.last().map(|r| r.body["messages"].clone());
            panic!(
                "no planner request holds a tool message with tool_call_id {call_id:?}; the last \
                 one's messages: {}",
                serde_json::to_string_pretty(&last).unwrap_or_default()
            )
        })
    }

    /// The role of each request that found its script empty.
    pub fn exhausted(&self) -> Vec<String> {
        lock(&self.state)
            .requests
            .iter()
            .filter(|r| r.exhausted)
            .map(|r| r.role.clone())
            .collect()
    }

    /// Panics, naming each offending request, if `needle` appears in the body of any request
    /// except a check's or a processor's (those may carry quarantined content by design).
    ///
    /// The body is searched both as sent and with JSON escapes decoded, so a needle with quotes
    /// or line breaks is found either way.
    pub fn assert_no_planner_request_contains(&self, needle: &str) {
        let requests = self.requests();
        let offenders: Vec<String> = requests
            .iter()
            .enumerate()
            .filter(|(_, r)| !matches!(r.role.as_str(), "check" | "processor"))
            .filter(|(_, r)| r.raw_body.contains(needle) || json_contains(&r.body, needle))
            .map(|(i, r)| {
                format!(
                    "request #{i} (role {}, {} {})",
                    if r.role.is_empty() { "none" } else { &r.role },
                    r.method,
                    r.path
                )
            })
            .collect();
        assert!(
            offenders.is_empty(),
            "{needle:?} reached a request it must not: {}",
            offenders.join(", ")
        );
    }
}

impl Drop for FakeModel {
    fn drop(&mut self) {
        if let Some(shutdown) = self.shutdown.take() {
            let _ = shutdown.send(());
        }
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}

fn lock(state: &Mutex<State>) -> MutexGuard<'_, State> {
    // A test that panicked while holding the lock has already failed; what it recorded is still
    // worth reading.
    state.lock().unwrap_or_else(PoisonError::into_inner)
}

fn json_contains(value: &Value, needle: &str) -> bool {
    match value {
        Value::String(text) => text.contains(needle),
        Value::Array(items) => items.iter().any(|v| json_contains(v, needle)),
        Value::Object(map) => map
            .iter()
            .any(|(k, v)| k.contains(needle) || json_contains(v, needle)),
        _ => false,
    }
}

fn serve(listener: std::net::TcpListener, state: Arc<Mutex<State>>, stop: oneshot::Receiver<()>) {
    let Ok(runtime) = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
    else {
        return;
    };
    runtime.block_on(async move {
        let Ok(listener) = TcpListener::from_std(listener) else {
            return;
        };
        let accept = async {
            loop {
                let Ok((stream, _)) = listener.accept().await else {
                    continue;
                };
                tokio::spawn(answer(stream, Arc::clone(&state)));
            }
        };
        tokio::select! {
            _ = stop => {}
            () = accept => {}
        }
    });
    // Dropping the runtime here cancels every connection still open.
}

/// A request as read off the wire.
struct Incoming {
    method: String,
    path: String,
    headers: Vec<(String, String)>,
    body: Vec<u8>,
}

async fn answer(mut stream: TcpStream, state: Arc<Mutex<State>>) {
    let Some(incoming) = read_request(&mut stream).await else {
        return;
    };
    let began = Instant::now();
    let raw_body = String::from_utf8_lossy(&incoming.body).into_owned();
    let body: Value = serde_json::from_slice(&incoming.body).unwrap_or(Value::Null);
    let role = incoming
        .headers
        .iter()
        .find(|(k, _)| k == "x-bravebot-role")
        .map(|(_, v)| v.trim().to_owned())
        .unwrap_or_default();

    let route = incoming.path.split('?').next().unwrap_or("");
    let (reply, call_base, recorded) = {
        let mut state = lock(&state);
        let chosen = match (incoming.method.as_str(), route) {
            ("POST", "/v1/chat/completions" | "/v1/messages") => {
                Some(next_reply(&mut state, &role, &raw_body))
            }
            _ => None,
        };
        let (mut reply, exhausted) = match chosen {
            Some((reply, exhausted)) => (Some(reply), exhausted),
            None => (None, false),
        };
        if let Some(reply) = reply.as_mut()
            && state.simulate_usage
            && reply.usage.is_none()
            && matches!(reply.kind, ReplyKind::Answer { .. })
        {
            let format = if route == "/v1/messages" {
                Format::Anthropic
            } else {
                Format::OpenAi
            };
            let rendered = prompt_cache::render(&body, format);
            let output = reply.output_tokens();
            reply.usage = Some(state.cache.usage(&role, format, rendered, output));
        }
        let usage = reply.as_ref().and_then(|r| r.usage);
        let call_base = state.calls_made;
        if let Some(Reply {
            kind: ReplyKind::Answer { calls },
            ..
        }) = &reply
        {
            state.calls_made += calls.iter().filter(|c| c.id.is_none()).count() as u64;
        }
        state.requests.push(RecordedRequest {
            role: role.clone(),
            method: incoming.method.clone(),
            path: incoming.path.clone(),
            headers: incoming.headers.clone(),
            body: body.clone(),
            raw_body,
            exhausted,
            duration: Duration::ZERO,
            usage,
        });
        (reply, call_base, state.requests.len() - 1)
    };

    let model = body
        .get("model")
        .and_then(Value::as_str)
        .unwrap_or("fake-model")
        .to_owned();
    let wants_stream = body.get("stream").and_then(Value::as_bool) == Some(true);
    let wants_usage = body.pointer("/stream_options/include_usage") == Some(&Value::Bool(true));
    let written = match (incoming.method.as_str(), route, reply) {
        ("GET", "/v1/models", _) => {
            // What each model takes besides text, as OpenRouter lists it: `fake-model` takes
            // pictures and PDFs (`file`), `fake-model-small` text only.
            let listing = json!({"object": "list", "data": [
                {"id": "fake-model", "object": "model", "owned_by": "bravebot-tests",
                 "architecture": {"input_modalities": ["text", "image", "file"]}},
                {"id": "fake-model-small", "object": "model", "owned_by": "bravebot-tests",
                 "architecture": {"input_modalities": ["text"]}},
            ]});
            write_json(&mut stream, 200, &listing).await
        }
        (_, "/v1/messages", Some(reply)) => {
            let reply = reply.with_refs_named(&body);
            write_anthropic_reply(&mut stream, &reply, &model, call_base, wants_stream).await
        }
        (_, _, Some(reply)) => {
            let reply = reply.with_refs_named(&body);
            let asked = Asked {
                stream: wants_stream,
                usage: wants_usage,
            };
            write_reply(&mut stream, &reply, &model, call_base, asked).await
        }
        _ => {
            let error =
                json!({"error": {"message": format!("no route for {} {route}", incoming.method)}});
            write_json(&mut stream, 404, &error).await
        }
    };
    // Recorded before the connection closes, so a client that has seen the whole reply reads
    // the duration of it.
    lock(&state).requests[recorded].duration = began.elapsed();
    if written.is_ok() {
        let _ = stream.shutdown().await;
    }
}

/// The next reply for `role`, and whether the script had run out.
fn next_reply(state: &mut State, role: &str, body: &str) -> (Reply, bool) {
    let Some(role) = ROLES.iter().find(|known| **known == role) else {
        let shown = if role.is_empty() { "none" } else { role };
        return (
            Reply::error(400, format!("missing or unknown X-Bravebot-Role: {shown}")),
            false,
        );
    };
    let keyed = state.keyed.iter_mut().find(|(r, needle, queue)| {
        r == role && !queue.is_empty() && body.contains(needle.as_str())
    });
    if let Some((_, _, queue)) = keyed
        && let Some(reply) = queue.pop_front()
    {
        return (reply, false);
    }
    if let Some(reply) = state.queues.get_mut(role).and_then(VecDeque::pop_front) {
        return (reply, false);
    }
    if let (true, Some(needle)) = (*role == "check", &state.competent_check) {
        let verdict = if body.contains(needle.as_str()) {
            "VERDICT: unsafe\nit tells the reader what to do"
        } else {
            "VERDICT: safe\nordinary project source"
        };
        return (Reply::text(verdict), false);
    }
    let fallback = if *role == "planner" {
        Reply::text(EXHAUSTED_TEXT)
    } else {
        Reply::error(500, format!("script exhausted for role {role}"))
    };
    (fallback, true)
}

/// What an OpenAI-compatible request asked for: a stream, and usage at its end.
#[derive(Clone, Copy)]
struct Asked {
    stream: bool,
    usage: bool,
}

async fn write_reply(
    stream: &mut TcpStream,
    reply: &Reply,
    model: &str,
    call_base: u64,
    asked: Asked,
) -> std::io::Result<()> {
    let wants_stream = asked.stream;
    let calls: Vec<Value> = match &reply.kind {
        ReplyKind::Error { status, message } => {
            let error =
                json!({"error": {"message": message, "type": "fake_error", "code": status}});
            return write_json(stream, *status, &error).await;
        }
        ReplyKind::Answer { calls } => {
            let mut numbered = call_base;
            calls
                .iter()
                .map(|call| {
                    let id = match &call.id {
                        Some(id) => id.clone(),
                        None => {
                            numbered += 1;
                            format!("call_{numbered}")
                        }
                    };
                    json!({
                        "id": id,
                        "type": "function",
                        "function": {"name": call.name, "arguments": call.arguments.to_string()},
                    })
                })
                .collect()
        }
        ReplyKind::WebPage => {
            let page = "<!doctype html><html><head><title>Sign in</title></head><body>\
                <p>Sign in to use this network.</p><pre>data: [DONE]</pre></body></html>\n";
            return write_response(stream, 200, "text/html; charset=utf-8", page.as_bytes()).await;
        }
        ReplyKind::Broken | ReplyKind::Stall => Vec::new(),
    };
    let broken = matches!(reply.kind, ReplyKind::Broken);
    let finish = if reply.truncated {
        "length"
    } else if calls.is_empty() {
        "stop"
    } else {
        "tool_calls"
    };

    if !(reply.streaming && wants_stream) {
        let content = if reply.text.is_empty() && !calls.is_empty() {
            Value::Null
        } else {
            json!(reply.text)
        };
        let mut message = json!({"role": "assistant", "content": content});
        if !calls.is_empty() {
            message["tool_calls"] = Value::Array(calls);
        }
        let mut whole = json!({
            "id": "chatcmpl-fake", "object": "chat.completion", "created": 0, "model": model,
            "choices": [{"index": 0, "message": message, "finish_reason": finish}],
        });
        if let Some(usage) = reply.usage {
            whole["usage"] = usage.openai();
        }
        let body = whole.to_string();
        if broken {
            // Promise the whole body, send half, and hang up.
            let head = format!(
                "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n",
                body.len()
            );
            stream.write_all(head.as_bytes()).await?;
            stream.write_all(&body.as_bytes()[..body.len() / 2]).await?;
            return stream.flush().await;
        }
        return write_response(stream, 200, "application/json", body.as_bytes()).await;
    }

    let head = "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nCache-Control: no-cache\r\nConnection: close\r\n\r\n";
    stream.write_all(head.as_bytes()).await?;
    let chunk = |delta: Value, finish: Option<&str>| {
        json!({
            "id": "chatcmpl-fake", "object": "chat.completion.chunk", "created": 0, "model": model,
            "choices": [{"index": 0, "delta": delta, "finish_reason": finish}],
        })
    };
    let mut events = vec![chunk(json!({"role": "assistant", "content": ""}), None)];
    for piece in pieces(&reply.text) {
        events.push(chunk(json!({"content": piece}), None));
    }
    if matches!(reply.kind, ReplyKind::Stall) {
        // The opening and the first piece of text, then silence until the client goes away.
        events.truncate(2);
        for event in &events {
            send_event(stream, &event.to_string()).await?;
        }
        stream.flush().await?;
        let mut sink = [0u8; 256];
        while stream.read(&mut sink).await? > 0 {}
        return Ok(());
    }
    if broken {
        // The opening and the first piece of text, then nothing: no finish, no [DONE].
        events.truncate(2);
        for event in &events {
            send_event(stream, &event.to_string()).await?;
        }
        return stream.flush().await;
    }
    for (index, call) in calls.iter().enumerate() {
        // The id and name come first with empty arguments, then the arguments in pieces, as
        // OpenAI streams them.
        events.push(chunk(
            json!({"tool_calls": [{"index": index, "id": call["id"], "type": "function",
                "function": {"name": call["function"]["name"], "arguments": ""}}]}),
            None,
        ));
        let arguments = call["function"]["arguments"].as_str().unwrap_or("{}");
        for piece in pieces(arguments) {
            events.push(chunk(
                json!({"tool_calls": [{"index": index, "function": {"arguments": piece}}]}),
                None,
            ));
        }
    }
    if reply.cut {
        // Everything but the last piece, then the connection closes.
        events.pop();
        for event in &events {
            send_event(stream, &event.to_string()).await?;
        }
        return stream.flush().await;
    }
    events.push(chunk(json!({}), Some(finish)));
    // As OpenAI does: a last chunk with no choices, only where the request asked for it.
    if let (Some(usage), true) = (reply.usage, asked.usage) {
        events.push(json!({
            "id": "chatcmpl-fake", "object": "chat.completion.chunk", "created": 0, "model": model,
            "choices": [], "usage": usage.openai(),
        }));
    }
    for event in &events {
        send_event(stream, &event.to_string()).await?;
    }
    send_event(stream, "[DONE]").await?;
    stream.flush().await
}

/// A reply in Anthropic's messages format: text and `tool_use` blocks, and the usage of
/// `message_start` (the request's counts, one reply token) and `message_delta` (the reply's whole
/// count), or a whole JSON message. An error, a web page, a break and a stall are as in the
/// OpenAI format, in this one's words.
async fn write_anthropic_reply(
    stream: &mut TcpStream,
    reply: &Reply,
    model: &str,
    call_base: u64,
    wants_stream: bool,
) -> std::io::Result<()> {
    let calls = match &reply.kind {
        ReplyKind::Error { status, message } => {
            let error =
                json!({"type": "error", "error": {"type": "fake_error", "message": message}});
            return write_json(stream, *status, &error).await;
        }
        ReplyKind::WebPage => {
            let page = "<!doctype html><html><body><p>Sign in.</p></body></html>\n";
            return write_response(stream, 200, "text/html; charset=utf-8", page.as_bytes()).await;
        }
        ReplyKind::Answer { calls } => calls.clone(),
        ReplyKind::Broken | ReplyKind::Stall => Vec::new(),
    };
    let mut numbered = call_base;
    let mut blocks = Vec::new();
    if !reply.text.is_empty() {
        blocks.push(json!({"type": "text", "text": reply.text}));
    }
    for call in &calls {
        let id = call.id.clone().unwrap_or_else(|| {
            numbered += 1;
            format!("call_{numbered}")
        });
        blocks.push(
            json!({"type": "tool_use", "id": id, "name": call.name, "input": call.arguments}),
        );
    }
    let stop = if reply.truncated {
        "max_tokens"
    } else if calls.is_empty() {
        "end_turn"
    } else {
        "tool_use"
    };
    if !(reply.streaming && wants_stream) {
        let mut whole = json!({
            "id": "msg_fake", "type": "message", "role": "assistant", "model": model,
            "content": blocks, "stop_reason": stop,
        });
        if let Some(usage) = reply.usage {
            whole["usage"] = usage.anthropic(usage.output);
        }
        return write_json(stream, 200, &whole).await;
    }
    let head = "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nCache-Control: no-cache\r\nConnection: close\r\n\r\n";
    stream.write_all(head.as_bytes()).await?;
    let mut message = json!({"id": "msg_fake", "type": "message", "role": "assistant",
        "model": model, "content": []});
    if let Some(usage) = reply.usage {
        message["usage"] = usage.anthropic(1);
    }
    let mut events = vec![json!({"type": "message_start", "message": message})];
    for (index, block) in blocks.iter().enumerate() {
        if block["type"] == "text" {
            events.push(json!({"type": "content_block_start", "index": index,
                "content_block": {"type": "text", "text": ""}}));
            for piece in pieces(&reply.text) {
                events.push(json!({"type": "content_block_delta", "index": index,
                    "delta": {"type": "text_delta", "text": piece}}));
            }
        } else {
            events.push(json!({"type": "content_block_start", "index": index,
                "content_block": {"type": "tool_use", "id": block["id"], "name": block["name"], "input": {}}}));
            for piece in pieces(&block["input"].to_string()) {
                events.push(json!({"type": "content_block_delta", "index": index,
                    "delta": {"type": "input_json_delta", "partial_json": piece}}));
            }
        }
        events.push(json!({"type": "content_block_stop", "index": index}));
    }
    if matches!(reply.kind, ReplyKind::Broken | ReplyKind::Stall) {
        // The opening, then nothing: no message_stop.
        events.truncate(1);
        for event in &events {
            send_event(stream, &event.to_string()).await?;
        }
        return stream.flush().await;
    }
    let mut delta = json!({"type": "message_delta", "delta": {"stop_reason": stop}});
    if let Some(usage) = reply.usage {
        delta["usage"] = json!({"output_tokens": usage.output});
    }
    events.push(delta);
    events.push(json!({"type": "message_stop"}));
    for event in &events {
        send_event(stream, &event.to_string()).await?;
    }
    stream.flush().await
}

/// Writes one event in two writes, cut inside the line, so that a reader assuming one event per
/// read is caught out.
async fn send_event(stream: &mut TcpStream, data: &str) -> std::io::Result<()> {
    let event = format!("data: {data}\n\n");
    let middle = (1..event.len())
        .find(|&i| i >= event.len() / 2 && event.is_char_boundary(i))
        .unwrap_or(event.len());
    stream.write_all(&event.as_bytes()[..middle]).await?;
    stream.flush().await?;
    stream.write_all(&event.as_bytes()[middle..]).await?;
    stream.flush().await
}

/// `text` cut into [`PIECES`] pieces of about equal length, on character boundaries.
fn pieces(text: &str) -> Vec<String> {
    let chars: Vec<char> = text.chars().collect();
    if chars.is_empty() {
        return Vec::new();
    }
    let size = chars.len().div_ceil(PIECES);
    chars.chunks(size).map(|c| c.iter().collect()).collect()
}

async fn write_json(stream: &mut TcpStream, status: u16, value: &Value) -> std::io::Result<()> {
    write_response(
        stream,
        status,
        "application/json",
        value.to_string().as_bytes(),
    )
    .await
}

async fn write_response(
    stream: &mut TcpStream,
    status: u16,
    content_type: &str,
    body: &[u8],
) -> std::io::Result<()> {
    let reason = match status {
        200 => "OK",
        400 => "Bad Request",
        404 => "Not Found",
        429 => "Too Many Requests",
        500 => "Internal Server Error",
        503 => "Service Unavailable",
        _ => "Status",
    };
    let head = format!(
        "HTTP/1.1 {status} {reason}\r\nContent-Type: {content_type}\r\nContent-Length: {}\r\nConnection: close\r\n\r\n",
        body.len()
    );
    stream.write_all(head.as_bytes()).await?;
    stream.write_all(body).await?;
    stream.flush().await
}

async fn read_request(stream: &mut TcpStream) -> Option<Incoming> {
    let mut buf = Vec::new();
    let mut chunk = [0u8; 8192];
    let head_end = loop {
        if let Some(at) = buf.windows(4).position(|w| w == b"\r\n\r\n") {
            break at;
        }
        if buf.len() > MAX_REQUEST_BYTES {
            return None;
        }
        let n = stream.read(&mut chunk).await.ok()?;
        if n == 0 {
            return None;
        }
        buf.extend_from_slice(&chunk[..n]);
    };
    let head = String::from_utf8_lossy(&buf[..head_end]).into_owned();
    let mut lines = head.split("\r\n");
    let mut first = lines.next()?.split(' ');
    let method = first.next()?.to_owned();
    let path = first.next()?.to_owned();
    let headers: Vec<(String, String)> = lines
        .filter_map(|line| line.split_once(':'))
        .map(|(k, v)| (k.trim().to_ascii_lowercase(), v.trim().to_owned()))
        .collect();
    let find = |name: &str| {
        headers
            .iter()
            .find(|(k, _)| k == name)
            .map(|(_, v)| v.clone())
    };
    let mut rest = buf[head_end + 4..].to_vec();
    let chunked = find("transfer-encoding").is_some_and(|v| v.eq_ignore_ascii_case("chunked"));
    let body = if chunked {
        read_chunked(stream, rest).await?
    } else {
        let length: usize = find("content-length")
            .and_then(|v| v.parse().ok())
            .unwrap_or(0);
        if length > MAX_REQUEST_BYTES {
            return None;
        }
        while rest.len() < length {
            let n = stream.read(&mut chunk).await.ok()?;
            if n == 0 {
                return None;
            }
            rest.extend_from_slice(&chunk[..n]);
        }
        rest.truncate(length);
        rest
    };
    Some(Incoming {
        method,
        path,
        headers,
        body,
    })
}

/// Decodes a chunked request body, `buf` holding what was read past the head already.
async fn read_chunked(stream: &mut TcpStream, mut buf: Vec<u8>) -> Option<Vec<u8>> {
    let mut body = Vec::new();
    let mut chunk = [0u8; 8192];
    loop {
        let line_end = loop {
            if let Some(at) = buf.windows(2).position(|w| w == b"\r\n") {
                break at;
            }
            let n = stream.read(&mut chunk).await.ok()?;
            if n == 0 {
                return None;
            }
            buf.extend_from_slice(&chunk[..n]);
        };
        let size_text = String::from_utf8_lossy(&buf[..line_end]).into_owned();
        let size_text = size_text.split(';').next().unwrap_or("").trim().to_owned();
        let size = usize::from_str_radix(&size_text, 16).ok()?;
        buf.drain(..line_end + 2);
        if size == 0 {
            return Some(body);
        }
        if body.len() + size > MAX_REQUEST_BYTES {
            return None;
        }
        while buf.len() < size + 2 {
            let n = stream.read(&mut chunk).await.ok()?;
            if n == 0 {
                return None;
            }
            buf.extend_from_slice(&chunk[..n]);
        }
        body.extend_from_slice(&buf[..size]);
        buf.drain(..size + 2);
    }
}

/// The planner's first two rounds of a turn that meets released content: it runs
/// `sh -c 'echo injected'` (call `run`), then asks to read that output with `read_output`
/// (call `read`), which the person allows.
pub fn released_run() -> Vec<Reply> {
    vec![
        Reply::tool_call_with_id(
            "run",
            "run",
            json!({"command": "sh -c 'echo injected'", "why": "build"}),
        ),
        Reply::tool_call_with_id(
            "read",
            "read_output",
            json!({"ref": "ref:0", "why": "see the log"}),
        ),
    ]
}

/// The text of a chat message: its string content, or its text parts joined.
pub fn message_text(message: &Value) -> String {
    match &message["content"] {
        Value::String(text) => text.clone(),
        Value::Array(parts) => parts
            .iter()
            .filter_map(|part| part["text"].as_str())
            .collect::<Vec<_>>()
            .join(""),
        other => other.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use std::io::{Read, Write};
    use std::net::TcpStream;

    use super::*;

    struct Answered {
        status: u16,
        head: String,
        body: String,
    }

    /// A blocking HTTP/1.1 exchange, so these tests need no client library.
    fn exchange(
        model: &FakeModel,
        method: &str,
        path: &str,
        role: Option<&str>,
        body: &Value,
    ) -> Answered {
        let mut stream = TcpStream::connect(model.addr).unwrap();
        let body = if method == "GET" {
            String::new()
        } else {
            body.to_string()
        };
        let mut request = format!(
            "{method} {path} HTTP/1.1\r\nHost: {}\r\nContent-Length: {}\r\n",
            model.addr,
            body.len()
        );
        if let Some(role) = role {
            request.push_str(&format!("X-Bravebot-Role: {role}\r\n"));
        }
        request.push_str("\r\n");
        request.push_str(&body);
        stream.write_all(request.as_bytes()).unwrap();
        let mut raw = Vec::new();
        stream.read_to_end(&mut raw).unwrap();
        let raw = String::from_utf8(raw).unwrap();
        let (head, body) = raw.split_once("\r\n\r\n").unwrap();
        let status = head.split(' ').nth(1).unwrap().parse().unwrap();
        Answered {
            status,
            head: head.to_owned(),
            body: body.to_owned(),
        }
    }

    fn chat(model: &FakeModel, role: &str, body: &Value) -> Answered {
        exchange(model, "POST", "/v1/chat/completions", Some(role), body)
    }

    fn streaming_request(text: &str) -> Value {
        json!({"model": "m", "stream": true, "messages": [{"role": "user", "content": text}]})
    }

    /// The `data:` payloads of a stream, in order.
    fn events(body: &str) -> Vec<String> {
        body.lines()
            .filter_map(|line| line.strip_prefix("data: "))
            .map(str::to_owned)
            .collect()
    }

    /// The text and tool calls a stream adds up to, reassembled the way a client must.
    fn assemble(body: &str) -> (String, Vec<(String, String, String)>, bool) {
        let mut text = String::new();
        let mut calls: Vec<(String, String, String)> = Vec::new();
        let events = events(body);
        let done = events.last().map(String::as_str) == Some("[DONE]");
        for event in events.iter().filter(|e| *e != "[DONE]") {
            let value: Value = serde_json::from_str(event).unwrap();
            let delta = &value["choices"][0]["delta"];
            if let Some(piece) = delta["content"].as_str() {
                text.push_str(piece);
            }
            for call in delta["tool_calls"].as_array().into_iter().flatten() {
                let index = call["index"].as_u64().unwrap() as usize;
                if calls.len() <= index {
                    calls.push(Default::default());
                }
                if let Some(id) = call["id"].as_str() {
                    calls[index].0 = id.to_owned();
                }
                if let Some(name) = call["function"]["name"].as_str() {
                    calls[index].1 = name.to_owned();
                }
                if let Some(piece) = call["function"]["arguments"].as_str() {
                    calls[index].2.push_str(piece);
                }
            }
        }
        (text, calls, done)
    }

    #[test]
    fn fake_model_answers_each_role_from_its_own_queue() {
        let model = FakeModel::start_with(|s| {
            s.planner(vec![Reply::text("planner says")])
                .check(vec![Reply::text("VERDICT: safe")])
        });
        let check = chat(&model, "check", &streaming_request("is this safe"));
        let planner = chat(&model, "planner", &streaming_request("plan"));
        assert_eq!(assemble(&check.body).0, "VERDICT: safe");
        assert_eq!(assemble(&planner.body).0, "planner says");
        let roles: Vec<_> = model.requests().into_iter().map(|r| r.role).collect();
        assert_eq!(roles, ["check", "planner"]);
        assert_eq!(
            model.requests_for("check")[0].body["messages"][0]["content"],
            "is this safe"
        );
        assert!(model.exhausted().is_empty());
    }

    #[test]
    fn fake_model_streams_text_and_tool_arguments_in_several_chunks() {
        let args = json!({"path": "src/main.rs", "why": "to see the entry point"});
        let model = FakeModel::start(vec![
            Reply::tool_call("read_file", args.clone()).with_text("Reading it now."),
            Reply::tool_calls(vec![
                ("list_files", json!({})),
                ("search", json!({"query": "x"})),
            ]),
        ]);
        let first = chat(&model, "planner", &streaming_request("go"));
        assert!(first.head.contains("text/event-stream"), "{}", first.head);
        let argument_pieces = events(&first.body)
            .iter()
            .filter(|e| e.contains("\"arguments\"") && !e.contains("\"name\""))
            .count();
        assert!(
            argument_pieces >= 2,
            "arguments were not split: {}",
            first.body
        );
        let (text, calls, done) = assemble(&first.body);
        assert!(done);
        assert_eq!(text, "Reading it now.");
        assert_eq!(calls.len(), 1);
        assert_eq!(
            (calls[0].0.as_str(), calls[0].1.as_str()),
            ("call_1", "read_file")
        );
        assert_eq!(serde_json::from_str::<Value>(&calls[0].2).unwrap(), args);

        let (_, calls, _) = assemble(&chat(&model, "planner", &streaming_request("more")).body);
        let ids: Vec<_> = calls.iter().map(|c| c.0.as_str()).collect();
        assert_eq!(ids, ["call_2", "call_3"]);
    }

    #[test]
    fn fake_model_keeps_a_chosen_call_id_and_records_how_long_it_took() {
        let model = FakeModel::start(vec![
            Reply::tool_call_with_id("call_read_1", "read_file", json!({"path": "a"})),
            Reply::tool_call("list_files", json!({})),
        ]);
        let (_, chosen, _) = assemble(&chat(&model, "planner", &streaming_request("a")).body);
        let (_, numbered, _) = assemble(&chat(&model, "planner", &streaming_request("b")).body);
        assert_eq!(chosen[0].0, "call_read_1");
        assert_eq!(
            numbered[0].0, "call_1",
            "a chosen id does not use up a number"
        );
        assert!(model.requests().iter().all(|r| r.duration > Duration::ZERO));
    }

    #[test]
    fn fake_model_answers_an_empty_queue_with_a_note_for_the_planner_and_500_for_others() {
        let model = FakeModel::start(vec![]);
        let planner = chat(&model, "planner", &streaming_request("hi"));
        assert_eq!(assemble(&planner.body).0, EXHAUSTED_TEXT);
        let check = chat(&model, "check", &streaming_request("hi"));
        assert_eq!(check.status, 500);
        assert_eq!(model.exhausted(), ["planner", "check"]);
    }

    #[test]
    fn fake_model_refuses_a_chat_request_without_a_role() {
        let model = FakeModel::start(vec![Reply::text("unused")]);
        let answered = exchange(
            &model,
            "POST",
            "/v1/chat/completions",
            None,
            &streaming_request("hi"),
        );
        assert_eq!(answered.status, 400);
        assert!(answered.body.contains("X-Bravebot-Role"));
    }

    #[test]
    fn fake_model_reports_usage_in_the_openai_format_only_where_asked() {
        let model = FakeModel::start(vec![
            Reply::text("a").with_usage(120, 7, Some(100)),
            Reply::text("b").with_usage(120, 7, None),
            Reply::text("c").with_usage(50, 2, None).non_streaming(),
            Reply::text("d"),
        ]);
        let mut asking = streaming_request("hi");
        asking["stream_options"] = json!({"include_usage": true});
        let usage_of = |body: &str| -> Vec<Value> {
            events(body)
                .iter()
                .filter(|e| *e != "[DONE]")
                .map(|e| serde_json::from_str::<Value>(e).unwrap())
                .filter(|e| e["choices"] == json!([]))
                .map(|e| e["usage"].clone())
                .collect()
        };
        let reported = usage_of(&chat(&model, "planner", &asking).body);
        assert_eq!(
            reported,
            [
                json!({"prompt_tokens": 120, "completion_tokens": 7, "total_tokens": 127,
                "prompt_tokens_details": {"cached_tokens": 100}})
            ]
        );
        // Not asked for, not sent.
        assert!(usage_of(&chat(&model, "planner", &streaming_request("hi")).body).is_empty());
        let whole: Value = serde_json::from_str(&chat(&model, "planner", &asking).body).unwrap();
        assert_eq!(whole["usage"]["prompt_tokens"], 50);
        // A reply scripted without usage reports none.
        assert!(usage_of(&chat(&model, "planner", &asking).body).is_empty());
    }

    #[test]
    fn fake_model_speaks_the_anthropic_format_with_usage_and_a_tool_call() {
        let model = FakeModel::start(vec![
            Reply::tool_call("read_file", json!({"path": "a"}))
                .with_text("look")
                .with_usage(2100, 40, Some(2000)),
            Reply::text("plain"),
        ]);
        let request = json!({"model": "m", "max_tokens": 10, "stream": true,
            "messages": [{"role": "user", "content": "hi"}]});
        let answered = exchange(&model, "POST", "/v1/messages", Some("planner"), &request);
        let events: Vec<Value> = events(&answered.body)
            .iter()
            .map(|e| serde_json::from_str(e).unwrap())
            .collect();
        assert_eq!(
            events[0]["message"]["usage"],
            json!({"input_tokens": 100, "cache_read_input_tokens": 2000,
                "cache_creation_input_tokens": 0, "output_tokens": 1})
        );
        let delta = events
            .iter()
            .find(|e| e["type"] == "message_delta")
            .unwrap();
        assert_eq!(delta["usage"], json!({"output_tokens": 40}));
        assert_eq!(delta["delta"]["stop_reason"], "tool_use");
        let input: String = events
            .iter()
            .filter_map(|e| e["delta"]["partial_json"].as_str())
            .collect();
        assert_eq!(input, r#"{"path":"a"}"#);
        assert_eq!(events.last().unwrap()["type"], "message_stop");
        let answered = exchange(&model, "POST", "/v1/messages", Some("planner"), &request);
        assert!(!answered.body.contains("usage"), "{}", answered.body);
    }

    /// The usage of the last stream answered: the OpenAI usage chunk, or Anthropic's
    /// `message_start` usage.
    fn reported_usage(body: &str) -> Value {
        events(body)
            .iter()
            .filter_map(|e| serde_json::from_str::<Value>(e).ok())
            .find_map(|e| {
                e.get("usage")
                    .or_else(|| e.pointer("/message/usage"))
                    .cloned()
            })
            .unwrap_or(Value::Null)
    }

    // Verifies: USAGE-13
    #[test]
    fn fake_model_simulates_an_openai_prefix_cache_per_role() {
        let model = FakeModel::start_with(|s| {
            s.planner(vec![Reply::text("a"), Reply::text("b"), Reply::text("c")])
                .check(vec![Reply::text("VERDICT: safe")])
                .simulate_usage()
        });
        let tools = json!([{"type": "function", "function": {"name": "read_file"}}]);
        let request = |messages: Value| {
            json!({"model": "m", "stream": true, "stream_options": {"include_usage": true},
                "tools": tools, "messages": messages})
        };
        let first = request(json!([{"role": "system", "content": "be brief"},
            {"role": "user", "content": "hello there"}]));
        let grown = request(json!([{"role": "system", "content": "be brief"},
            {"role": "user", "content": "hello there"},
            {"role": "assistant", "content": "a"}, {"role": "user", "content": "more"}]));
        let changed = request(json!([{"role": "system", "content": "be terse"},
            {"role": "user", "content": "hello there"}]));
        let shown = |v: &Value| prompt_cache::render(v, Format::OpenAi).text;
        let usage = reported_usage(&chat(&model, "planner", &first).body);
        // A first request finds nothing cached.
        assert_eq!(
            usage["prompt_tokens"],
            prompt_cache::tokens(shown(&first).len())
        );
        assert_eq!(usage["prompt_tokens_details"]["cached_tokens"], 0);
        assert_eq!(usage["completion_tokens"], 1);
        // A request that extends it reads the whole first prompt from the cache, as bytes / 4.
        let usage = reported_usage(&chat(&model, "planner", &grown).body);
        let shared =
            prompt_cache::common_prefix(shown(&first).as_bytes(), shown(&grown).as_bytes());
        assert_eq!(shared, shown(&first).len());
        assert_eq!(
            usage["prompt_tokens"],
            prompt_cache::tokens(shown(&grown).len())
        );
        assert_eq!(
            usage["prompt_tokens_details"]["cached_tokens"],
            prompt_cache::cached_tokens(shared)
        );
        // One changed byte in the system prompt ends the shared prefix there: the tools and the
        // message's opening stay cached, nothing after.
        let usage = reported_usage(&chat(&model, "planner", &changed).body);
        let upto = shown(&first).find("brief").unwrap();
        assert_eq!(
            usage["prompt_tokens_details"]["cached_tokens"],
            prompt_cache::cached_tokens(upto)
        );
        // Another role's request shares nothing with the planner's cache.
        let usage = reported_usage(&chat(&model, "check", &first).body);
        assert_eq!(usage["prompt_tokens_details"]["cached_tokens"], 0);
        let recorded = model.requests();
        assert_eq!(
            recorded[1].usage.unwrap().cached,
            Some(prompt_cache::cached_tokens(shared))
        );
        assert_eq!(recorded[1].cache_breakpoints(), 0);
    }

    // Verifies: USAGE-13
    #[test]
    fn fake_model_simulates_an_anthropic_cache_only_up_to_breakpoints() {
        let model = FakeModel::start_with(|s| {
            s.planner(vec![
                Reply::text("a"),
                Reply::text("b"),
                Reply::text("c"),
                Reply::text("scripted").with_usage(10, 1, Some(5)),
            ])
            .simulate_usage()
        });
        let mark = json!({"type": "ephemeral"});
        let tool = json!({"name": "read_file", "input_schema": {"type": "object"},
            "cache_control": mark});
        let request = |texts: &[&str], last_marked: bool| {
            let count = texts.len();
            let messages: Vec<Value> = texts
                .iter()
                .enumerate()
                .map(|(i, t)| {
                    let mut block = json!({"type": "text", "text": t});
                    if last_marked && i + 1 == count {
                        block["cache_control"] = mark.clone();
                    }
                    let role = if i % 2 == 0 { "user" } else { "assistant" };
                    json!({"role": role, "content": [block]})
                })
                .collect();
            json!({"model": "m", "max_tokens": 10, "stream": true, "tools": [tool],
                "system": [{"type": "text", "text": "be brief", "cache_control": mark}],
                "messages": messages})
        };
        let send = |body: &Value| {
            let answered = exchange(&model, "POST", "/v1/messages", Some("planner"), body);
            reported_usage(&answered.body)
        };
        let shown = |v: &Value| prompt_cache::render(v, Format::Anthropic);
        // The first request writes everything up to its last breakpoint, and reads nothing.
        let first = request(&["hello there"], true);
        let first_shown = shown(&first);
        assert_eq!(first_shown.breakpoints.len(), 3);
        let usage = send(&first);
        assert_eq!(usage["cache_read_input_tokens"], 0);
        let whole = prompt_cache::tokens(first_shown.text.len());
        assert_eq!(usage["cache_creation_input_tokens"], whole);
        assert_eq!(usage["input_tokens"], 0);
        // A request that extends it reads up to the first request's last breakpoint, and writes
        // from there to its own.
        let grown = request(&["hello there", "a", "more"], true);
        let grown_shown = shown(&grown);
        let usage = send(&grown);
        let read = prompt_cache::cached_tokens(first_shown.breakpoints[2]);
        assert_eq!(usage["cache_read_input_tokens"], read);
        let input = prompt_cache::tokens(grown_shown.text.len());
        let written = prompt_cache::tokens(grown_shown.breakpoints[2] - first_shown.breakpoints[2]);
        assert_eq!(usage["cache_creation_input_tokens"], written);
        assert_eq!(usage["input_tokens"], input - read - written);
        // The same extension with no breakpoint on its messages reads only up to the system
        // prompt's breakpoint, however much more it shares: the cache holds what breakpoints
        // wrote, and a request reads no further than its own last breakpoint.
        let unmarked = request(&["hello there", "a", "more", "b", "again"], false);
        let usage = send(&unmarked);
        assert_eq!(
            usage["cache_read_input_tokens"],
            prompt_cache::cached_tokens(first_shown.breakpoints[1])
        );
        assert_eq!(usage["cache_creation_input_tokens"], 0);
        // A scripted count is reported as scripted.
        let usage = send(&grown);
        assert_eq!(usage["cache_read_input_tokens"], 5);
        let recorded = model.requests();
        assert_eq!(
            recorded
                .iter()
                .map(|r| r.cache_breakpoints())
                .collect::<Vec<_>>(),
            vec![3, 3, 2, 3]
        );
    }

    #[test]
    fn fake_model_non_streaming_reply_is_one_json_body() {
        let model = FakeModel::start(vec![Reply::text("whole").non_streaming().truncated()]);
        let answered = chat(&model, "planner", &streaming_request("hi"));
        assert!(
            answered.head.contains("application/json"),
            "{}",
            answered.head
        );
        let value: Value = serde_json::from_str(&answered.body).unwrap();
        assert_eq!(value["choices"][0]["message"]["content"], "whole");
        assert_eq!(value["choices"][0]["finish_reason"], "length");
    }

    #[test]
    fn fake_model_broken_reply_stops_without_done() {
        let model = FakeModel::start(vec![Reply::broken()]);
        let answered = chat(&model, "planner", &streaming_request("hi"));
        let (text, _, done) = assemble(&answered.body);
        assert!(!done);
        assert!(
            !text.is_empty() && text != "this reply breaks off",
            "{text}"
        );
    }

    #[test]
    fn fake_model_cut_off_reply_stops_inside_a_tool_calls_arguments() {
        let arguments = json!({"path": "notes.md", "contents": "whole"});
        let model = FakeModel::start(vec![
            Reply::tool_call_with_id("c1", "write_file", arguments.clone()).cut_off(),
        ]);
        let answered = chat(&model, "planner", &streaming_request("hi"));
        let (_, calls, done) = assemble(&answered.body);
        assert!(!done, "{}", answered.body);
        assert_eq!(calls.len(), 1, "{}", answered.body);
        assert_eq!(
            (calls[0].0.as_str(), calls[0].1.as_str()),
            ("c1", "write_file")
        );
        let whole = arguments.to_string();
        assert!(
            !calls[0].2.is_empty()
                && calls[0].2.len() < whole.len()
                && whole.starts_with(&calls[0].2),
            "{calls:?}"
        );
        assert!(
            !answered.body.contains("finish_reason\":\"tool_calls"),
            "{}",
            answered.body
        );
    }

    #[test]
    fn fake_model_names_the_references_an_earlier_result_handed_back() {
        let model = FakeModel::start(vec![
            Reply::tool_call_with_id("read", "read_output", json!({"ref": "ref:?stderr"}))
                .naming_refs_of("run"),
            Reply::tool_call_with_id("again", "read_output", json!({"ref": "ref:?stdout"}))
                .naming_refs_of("run"),
        ]);
        let request = json!({"model": "m", "stream": true, "messages": [
            {"role": "user", "content": "go"},
            {"role": "tool", "tool_call_id": "run", "content": "exit 1\nstdout: empty\nstderr: quarantined, ref:7 (2 KiB)\n"},
        ]});
        let (_, calls, _) = assemble(&chat(&model, "planner", &request).body);
        assert_eq!(
            serde_json::from_str::<Value>(&calls[0].2).unwrap(),
            json!({"ref": "ref:7"})
        );
        let (_, calls, _) = assemble(&chat(&model, "planner", &request).body);
        assert_eq!(
            serde_json::from_str::<Value>(&calls[0].2).unwrap(),
            json!({"ref": "ref:none"})
        );
    }

    #[test]
    fn fake_model_error_reply_carries_status_and_message() {
        let model = FakeModel::start(vec![Reply::error(429, "slow down")]);
        let answered = chat(&model, "planner", &streaming_request("hi"));
        assert_eq!(answered.status, 429);
        let value: Value = serde_json::from_str(&answered.body).unwrap();
        assert_eq!(value["error"]["message"], "slow down");
    }

    #[test]
    fn fake_model_lists_models() {
        let model = FakeModel::start(vec![]);
        let answered = exchange(&model, "GET", "/v1/models", None, &Value::Null);
        assert_eq!(answered.status, 200);
        let value: Value = serde_json::from_str(&answered.body).unwrap();
        assert_eq!(value["data"].as_array().unwrap().len(), 2);
        assert!(model.url().ends_with("/v1"));
    }

    #[test]
    fn assert_no_planner_request_contains_ignores_checks_and_processors_only() {
        let model = FakeModel::start_with(|s| {
            s.planner(vec![Reply::text("a")])
                .check(vec![Reply::text("b")])
                .processor(vec![Reply::text("c")])
        });
        chat(
            &model,
            "check",
            &streaming_request("SECRET \"quoted\"\nline"),
        );
        chat(
            &model,
            "processor",
            &streaming_request("SECRET \"quoted\"\nline"),
        );
        chat(&model, "planner", &streaming_request("harmless"));
        model.assert_no_planner_request_contains("\"quoted\"\nline");

        chat(
            &model,
            "delegate",
            &streaming_request("leaked \"quoted\"\nline"),
        );
        let caught = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            model.assert_no_planner_request_contains("\"quoted\"\nline");
        }));
        let message = caught.unwrap_err();
        let message = message.downcast_ref::<String>().unwrap();
        assert!(message.contains("request #3 (role delegate"), "{message}");
    }

    #[test]
    fn fake_model_serves_a_request_while_another_connection_is_still_sending() {
        let model = FakeModel::start(vec![Reply::text("quick")]);
        let mut slow = TcpStream::connect(model.addr).unwrap();
        slow.write_all(b"POST /v1/chat/completions HTTP/1.1\r\nContent-Le")
            .unwrap();
        let answered = chat(&model, "planner", &streaming_request("hi"));
        assert_eq!(assemble(&answered.body).0, "quick");
        drop(slow);
    }

    #[test]
    fn fake_model_stops_listening_when_dropped() {
        let model = FakeModel::start(vec![]);
        let addr = model.addr;
        drop(model);
        assert!(TcpStream::connect(addr).is_err());
    }
}
