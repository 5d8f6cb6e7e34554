//! A deterministic, seeded mutation fuzzer for `bravebot lsp`'s input, interleaved with a real
//! session driven by the fake model.
//!
//! [`Fuzzer`] makes hostile messages from a [`SplitMix64`] stream, so one seed always gives the
//! same bytes: framing errors (no or bad `Content-Length`, lengths shorter than the body, bare LF,
//! garbage glued to a header), JSON that is not JSON-RPC, ids of every JSON type, params of the
//! wrong shape for every method the server knows, deep nesting, huge strings, bytes that are not
//! UTF-8 and escaped lone surrogates, forged question and option ids, replies to requests the
//! server never sent, and floods of notifications.
//!
//! Every message is self-contained: no declared length reaches past the bytes the message itself
//! holds, so whatever the server makes of one message, the next one starts where a reader that
//! resynchronises at `Content-Length:` finds it. Nothing the fuzzer sends can change the real
//! session: it never sends `shutdown` or `exit`, never opens a session or a buffer in the
//! workspace, and names the real session only with params the server must refuse.
//!
//! [`FuzzRun`] starts the real binary with a log file, runs batches of hostile messages, asks a
//! probe request after every batch (it must be answered within the client's deadline), and every
//! few batches runs a real turn while the next batch is sent: the planner writes a file, the
//! question is answered (allowed or refused in turn), and the file on disk must be exactly what
//! the answer said. At the end it reads the server's resident size and greps its log for panics.

use std::path::PathBuf;
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use crate::fake_model::{FakeModel, Reply};
use crate::lsp_client::{Answer, LspClient, LspOptions};

/// SplitMix64: a tiny, fast, well-mixed generator; good enough for choosing mutations.
#[derive(Clone, Debug)]
pub struct SplitMix64(u64);

impl SplitMix64 {
    pub fn new(seed: u64) -> SplitMix64 {
        SplitMix64(seed)
    }

    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// A number in `0..n` (`n > 0`).
    pub fn below(&mut self, n: usize) -> usize {
        (self.next_u64() % n as u64) as usize
    }

    /// True with probability `1 / n`.
    pub fn one_in(&mut self, n: usize) -> bool {
        self.below(n) == 0
    }

    pub fn pick<'a, T>(&mut self, items: &'a [T]) -> &'a T {
        &items[self.below(items.len())]
    }

    pub fn bytes(&mut self, n: usize) -> Vec<u8> {
        (0..n).map(|_| self.next_u64() as u8).collect()
    }

    /// A short string of printable ASCII, letters from other scripts, control characters and
    /// characters that reorder text.
    pub fn text(&mut self, max: usize) -> String {
        const PIECES: &[&str] = &[
            "a", "Z", "0", " ", "/", "\\", "\"", ":", "{", "}", "é", "字", "🦀", "\u{202e}",
            "\u{0}", "\t", "\n", "\r", "\u{7f}", "\u{feff}", "$/", "..", "%2F", "file://",
        ];
        let n = self.below(max + 1);
        (0..n).map(|_| *self.pick(PIECES)).collect()
    }
}

/// The kinds of hostile message, for the report.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Family {
    Framing,
    StrayBytes,
    JsonShape,
    IdType,
    WrongParams,
    DeepNesting,
    HugeString,
    InvalidUtf8,
    LoneSurrogate,
    ForgedAnswer,
    ForgedReply,
    NotificationFlood,
}

impl Family {
    pub const ALL: [Family; 12] = [
        Family::Framing,
        Family::StrayBytes,
        Family::JsonShape,
        Family::IdType,
        Family::WrongParams,
        Family::DeepNesting,
        Family::HugeString,
        Family::InvalidUtf8,
        Family::LoneSurrogate,
        Family::ForgedAnswer,
        Family::ForgedReply,
        Family::NotificationFlood,
    ];
}

/// One hostile message (or flood), as the bytes written to the server's stdin.
pub struct Hostile {
    pub family: Family,
    pub bytes: Vec<u8>,
    /// How many messages these bytes hold (a flood holds many).
    pub messages: usize,
}

/// Every method the server answers, with the notifications it reads. `shutdown` and `exit` are
/// left out: they end the server, which is not a fault.
const METHODS: &[&str] = &[
    "initialize",
    "initialized",
    "textDocument/didOpen",
    "textDocument/didChange",
    "textDocument/didClose",
    "textDocument/didSave",
    "textDocument/codeAction",
    "workspace/executeCommand",
    "bravebot/session/new",
    "bravebot/session/prompt",
    "bravebot/session/cancel",
    "bravebot/session/status",
    "bravebot/session/audit",
    "bravebot/session/setMode",
    "bravebot/session/trust",
    "$/cancelRequest",
    "$/setTrace",
    "workspace/didChangeConfiguration",
];

/// Documents outside every workspace, few of them, so buffers the fuzzer opens stay bounded.
const FUZZ_DOCS: usize = 8;

/// Frames a body with a correct `Content-Length`.
pub fn frame(body: &[u8]) -> Vec<u8> {
    let mut bytes = format!("Content-Length: {}\r\n\r\n", body.len()).into_bytes();
    bytes.extend_from_slice(body);
    bytes
}

/// Makes hostile messages for a server whose real session is `session`.
pub struct Fuzzer {
    rng: SplitMix64,
    session: String,
    forged: u64,
}

impl Fuzzer {
    pub fn new(seed: u64, session: &str) -> Fuzzer {
        Fuzzer {
            rng: SplitMix64::new(seed),
            session: session.to_owned(),
            forged: 0,
        }
    }

    /// An id no request of the test client uses (those count up from 1) and no request of the
    /// server uses (those count up from 0 too): of every JSON type, numbers far out of range.
    fn foreign_id(&mut self) -> Value {
        self.forged += 1;
        let n = self.forged;
        match self.rng.below(9) {
            0 => json!(format!("fuzz-{n}")),
            1 => json!(1_000_000_000_000_u64 + n),
            2 => json!(-(n as i64)),
            3 => json!(n as f64 + 0.5),
            4 => json!(u64::MAX - n),
            5 => Value::Null,
            6 => json!({"n": n}),
            7 => json!([n]),
            _ => json!(true),
        }
    }

    /// A session id that is not the real one.
    fn stranger(&mut self) -> Value {
        match self.rng.below(4) {
            0 => json!(format!("{:032x}", self.rng.next_u64())),
            1 => json!(""),
            2 => json!(self.rng.text(12)),
            _ => json!(self.rng.next_u64()),
        }
    }

    fn fuzz_uri(&mut self) -> String {
        match self.rng.below(6) {
            0 => "untitled:Untitled-1".to_owned(),
            1 => "http://example.invalid/a.rs".to_owned(),
            2 => ":::not a uri".to_owned(),
            _ => format!(
                "file:///nonexistent-bravebot-fuzz/doc{}.rs",
                self.rng.below(FUZZ_DOCS)
            ),
        }
    }

    /// A JSON value of any shape, small.
    fn any_value(&mut self, depth: usize) -> Value {
        match self.rng.below(if depth > 2 { 6 } else { 9 }) {
            0 => Value::Null,
            1 => json!(self.rng.one_in(2)),
            2 => json!(self.rng.next_u64() as i64),
            3 => json!(self.rng.next_u64() as f64 / 7.0),
            4 => json!(self.rng.text(16)),
            5 => json!(-1),
            6 => Value::Array(
                (0..self.rng.below(4))
                    .map(|_| self.any_value(depth + 1))
                    .collect(),
            ),
            7 => {
                let mut map = serde_json::Map::new();
                for _ in 0..self.rng.below(4) {
                    let key = self.rng.text(6);
                    map.insert(key, self.any_value(depth + 1));
                }
                Value::Object(map)
            }
            _ => {
                json!({"textDocument": self.any_value(depth + 1), "sessionId": self.any_value(depth + 1)})
            }
        }
    }

    /// Params of the wrong shape for `method`, or right-shaped params the server must refuse.
    fn wrong_params(&mut self, method: &str) -> Value {
        let real = self.session.clone();
        let uri = self.fuzz_uri();
        // Any shape at all, except for `session/new`, where a shape without a usable `cwd`
        // would open a session in the client's root.
        let choice = self.rng.below(4);
        if choice == 0 && method != "bravebot/session/new" {
            return self.any_value(0);
        }
        match method {
            "initialize" => {
                json!({"capabilities": self.any_value(1), "initializationOptions": self.any_value(1)})
            }
            "textDocument/didOpen" => {
                json!({"textDocument": {"uri": uri, "languageId": self.any_value(2), "version": self.any_value(2), "text": self.rng.text(40)}})
            }
            "textDocument/didChange" => json!({
                "textDocument": {"uri": uri, "version": self.rng.next_u64() as i32},
                "contentChanges": [{
                    "range": {"start": {"line": self.rng.next_u64() as u32, "character": self.rng.below(5)},
                              "end": {"line": self.rng.below(3), "character": self.rng.next_u64() as u32}},
                    "text": self.rng.text(10),
                }, {"text": self.any_value(2)}],
            }),
            "textDocument/didClose" | "textDocument/didSave" => {
                json!({"textDocument": {"uri": if self.rng.one_in(2) { json!(uri) } else { self.any_value(2) }}})
            }
            "textDocument/codeAction" => json!({
                "textDocument": {"uri": uri},
                "range": {"start": {"line": self.rng.below(9), "character": 0}, "end": {"line": self.any_value(2), "character": 0}},
                "context": {"diagnostics": [], "triggerKind": self.rng.below(4)},
            }),
            "workspace/executeCommand" => self.forged_answer_params(),
            "bravebot/session/new" => {
                let cwd = match self.rng.below(3) {
                    0 => json!(format!("/nonexistent-bravebot-fuzz/{}", self.rng.text(8))),
                    1 => json!(self.rng.next_u64()),
                    _ => json!([self.rng.text(4)]),
                };
                json!({"cwd": cwd})
            }
            "bravebot/session/prompt" => match self.rng.below(3) {
                // Never a string `text` with the real session: that would be a real prompt.
                0 => json!({"sessionId": real, "text": [self.any_value(2)]}),
                1 => json!({"sessionId": real, "text": 7, "files": self.any_value(2)}),
                _ => json!({"sessionId": self.stranger(), "text": self.rng.text(20)}),
            },
            "bravebot/session/setMode" => match self.rng.below(2) {
                0 => json!({"sessionId": real, "mode": format!("yolo{}", self.rng.text(4))}),
                _ => json!({"sessionId": self.stranger(), "mode": "acceptEdits"}),
            },
            "bravebot/session/trust" => match self.rng.below(2) {
                0 => {
                    json!({"sessionId": real, "path": self.rng.text(10), "scope": format!("everything{}", self.rng.text(3))})
                }
                _ => json!({"sessionId": self.stranger(), "path": "/", "scope": "directory"}),
            },
            // Read-only questions may name the real session: they change nothing.
            "bravebot/session/status" | "bravebot/session/audit" => {
                if self.rng.one_in(3) {
                    json!({"sessionId": real})
                } else {
                    json!({"sessionId": self.stranger()})
                }
            }
            "bravebot/session/cancel" => json!({"sessionId": self.stranger()}),
            "$/cancelRequest" => json!({"id": self.foreign_id()}),
            _ => self.any_value(1),
        }
    }

    fn forged_answer_params(&mut self) -> Value {
        let question = format!("{:016x}{:016x}", self.rng.next_u64(), self.rng.next_u64());
        let argument = match self.rng.below(5) {
            0 => {
                json!({"questionId": question, "optionId": self.rng.pick(&["accept", "allow", "acceptAlways", "reject", "trust"])})
            }
            1 => json!({"questionId": question, "hunk": self.rng.next_u64(), "verdict": "accept"}),
            2 => json!({"questionId": question, "hunk": 0, "verdict": self.rng.text(6)}),
            3 => {
                json!({"questionId": "q1", "optionId": "accept", "acceptedHunks": [0, 1, 2], "editedText": self.rng.text(20)})
            }
            _ => self.any_value(1),
        };
        let command = if self.rng.one_in(6) {
            json!(self.rng.text(10))
        } else {
            json!("bravebot.answer")
        };
        json!({"command": command, "arguments": [argument]})
    }

    fn request(&mut self, method: &str, params: Value) -> Vec<u8> {
        let id = self.foreign_id();
        let id = if id.is_null() {
            json!(format!("fuzz-{}", self.forged))
        } else {
            id
        };
        frame(
            json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params})
                .to_string()
                .as_bytes(),
        )
    }

    fn notification(&mut self, method: &str, params: Value) -> Vec<u8> {
        frame(
            json!({"jsonrpc": "2.0", "method": method, "params": params})
                .to_string()
                .as_bytes(),
        )
    }

    /// A message the server knows how to read, for mutations to start from.
    fn seed_message(&mut self) -> Vec<u8> {
        let method = *self.rng.pick(METHODS);
        let params = self.wrong_params(method);
        let id = self.foreign_id();
        json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params})
            .to_string()
            .into_bytes()
    }

    /// The next hostile message.
    pub fn next_message(&mut self) -> Hostile {
        // A flood holds many messages: it comes up rarely, so the other families are most of them.
        let family = if self.rng.one_in(100) {
            Family::NotificationFlood
        } else {
            *self.rng.pick(&Family::ALL[..Family::ALL.len() - 1])
        };
        let mut messages = 1;
        let bytes = match family {
            Family::Framing => self.framing(),
            Family::StrayBytes => {
                // Garbage with no header in it, glued to whatever comes next.
                let n = 1 + self.rng.below(64);
                let mut bytes = self.rng.bytes(n);
                bytes.retain(|b| !b"Cc:".contains(b));
                if self.rng.one_in(3) {
                    bytes.extend_from_slice(b"\r\n");
                }
                bytes
            }
            Family::JsonShape => {
                let bodies: &[&str] = &[
                    "{",
                    "nul",
                    "[1,2",
                    "42",
                    "\"text\"",
                    "[]",
                    "null",
                    "true",
                    "{}",
                    "[{\"jsonrpc\":\"2.0\",\"id\":\"b\",\"method\":\"x\"}]",
                    "{\"jsonrpc\":\"1.0\",\"id\":\"v\",\"method\":\"bravebot/session/status\"}",
                    "{\"jsonrpc\":\"2.0\",\"id\":\"m\",\"method\":42}",
                    "{\"jsonrpc\":\"2.0\",\"method\":null}",
                    "{\"jsonrpc\":\"2.0\",\"id\":\"p\",\"method\":\"bravebot/session/status\",\"params\":[1,2]}",
                    "{\"id\":\"noversion\",\"method\":\"bravebot/session/status\"}",
                    "{\"jsonrpc\":\"2.0\",\"id\":\"dup\",\"id\":\"dup2\",\"method\":\"x\"}",
                    "{\"jsonrpc\":\"2.0\"}",
                    "\u{feff}{\"jsonrpc\":\"2.0\",\"id\":\"bom\",\"method\":\"x\"}",
                    "{\"jsonrpc\":\"2.0\",\"id\":1e400,\"method\":\"x\"}",
                ];
                let body = *self.rng.pick(bodies);
                if self.rng.one_in(2) {
                    frame(body.as_bytes())
                } else {
                    // A truncated seed message.
                    let seed = self.seed_message();
                    let cut = self.rng.below(seed.len().max(1));
                    frame(&seed[..cut])
                }
            }
            Family::IdType => {
                let method = *self.rng.pick(&[
                    "bravebot/session/status",
                    "no/such/method",
                    "textDocument/codeAction",
                    "initialize",
                ]);
                let params = self.wrong_params(method);
                let id = self.foreign_id();
                frame(
                    json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params})
                        .to_string()
                        .as_bytes(),
                )
            }
            Family::WrongParams => {
                let method = *self.rng.pick(METHODS);
                let params = self.wrong_params(method);
                if self.rng.one_in(3) {
                    self.notification(method, params)
                } else {
                    self.request(method, params)
                }
            }
            Family::DeepNesting => {
                let depth = if self.rng.one_in(2) {
                    100 + self.rng.below(28)
                } else {
                    1000 + self.rng.below(20_000)
                };
                let open = if self.rng.one_in(2) { "[" } else { "{\"a\":" };
                let close = if open == "[" { "]" } else { "}" };
                let body = format!(
                    "{{\"jsonrpc\":\"2.0\",\"id\":\"deep\",\"method\":\"{}\",\"params\":{}1{}}}",
                    self.rng.pick(METHODS),
                    open.repeat(depth),
                    close.repeat(depth)
                );
                frame(body.as_bytes())
            }
            Family::HugeString => {
                // Mostly tens of KiB; one in ten a quarter to one MiB.
                let size = if self.rng.one_in(10) {
                    256 * 1024 + self.rng.below(768 * 1024)
                } else {
                    8 * 1024 + self.rng.below(56 * 1024)
                };
                let big: String = "x".repeat(size);
                let method = *self.rng.pick(&[
                    "textDocument/didOpen",
                    "no/such/method",
                    "bravebot/session/prompt",
                    "workspace/executeCommand",
                ]);
                let params = match method {
                    "textDocument/didOpen" => {
                        let uri = format!(
                            "file:///nonexistent-bravebot-fuzz/doc{}.rs",
                            self.rng.below(FUZZ_DOCS)
                        );
                        json!({"textDocument": {"uri": uri, "languageId": "rust", "version": 1, "text": big}})
                    }
                    "bravebot/session/prompt" => json!({"sessionId": self.stranger(), "text": big}),
                    _ => {
                        json!({"command": "bravebot.answer", "arguments": [{"questionId": big, "optionId": "accept"}]})
                    }
                };
                self.request(method, params)
            }
            Family::InvalidUtf8 => {
                let mut body = self.seed_message();
                let at = self.rng.below(body.len());
                let bad: &[&[u8]] = &[
                    b"\xff",
                    b"\xc3",
                    b"\xed\xa0\x80",
                    b"\xf8\x88\x80\x80\x80",
                    b"\xc0\xaf",
                    b"\x00",
                ];
                let bad = *self.rng.pick(bad);
                body.splice(at..at, bad.iter().copied());
                if self.rng.one_in(4) {
                    // In the header instead.
                    let mut bytes = b"Content-Length".to_vec();
                    bytes.extend_from_slice(bad);
                    bytes.extend_from_slice(format!(": {}\r\n\r\n", body.len()).as_bytes());
                    bytes.extend_from_slice(&body);
                    bytes
                } else {
                    frame(&body)
                }
            }
            Family::LoneSurrogate => {
                let surrogate =
                    *self
                        .rng
                        .pick(&["\\ud800", "\\udfff", "\\ud83e", "\\udc00\\ud800"]);
                let body = match self.rng.below(3) {
                    0 => format!(
                        "{{\"jsonrpc\":\"2.0\",\"id\":\"s\",\"method\":\"bravebot/session/status\",\"params\":{{\"sessionId\":\"{surrogate}\"}}}}"
                    ),
                    1 => format!(
                        "{{\"jsonrpc\":\"2.0\",\"method\":\"textDocument/didOpen\",\"params\":{{\"textDocument\":{{\"uri\":\"file:///nonexistent-bravebot-fuzz/doc0.rs\",\"languageId\":\"rust\",\"version\":1,\"text\":\"a{surrogate}b\"}}}}}}"
                    ),
                    _ => {
                        format!("{{\"jsonrpc\":\"2.0\",\"id\":\"s{surrogate}\",\"method\":\"x\"}}")
                    }
                };
                frame(body.as_bytes())
            }
            Family::ForgedAnswer => {
                let params = self.forged_answer_params();
                if self.rng.one_in(3) {
                    let uri = self.fuzz_uri();
                    self.request(
                        "textDocument/codeAction",
                        json!({"textDocument": {"uri": uri}, "range": {"start": {"line": 0, "character": 0}, "end": {"line": 0, "character": 0}}, "context": {"diagnostics": [], "triggerKind": 1}}),
                    )
                } else {
                    self.request("workspace/executeCommand", params)
                }
            }
            Family::ForgedReply => {
                let id = match self.rng.below(3) {
                    0 => json!(format!("forged-{}", self.rng.next_u64())),
                    1 => json!(1_000_000_000 + self.rng.below(1_000_000)),
                    _ => json!(-1 - self.rng.below(1000) as i64),
                };
                let reply = match self.rng.below(5) {
                    0 => {
                        json!({"jsonrpc": "2.0", "id": id, "result": {"outcome": {"outcome": "selected", "optionId": "accept"}}})
                    }
                    1 => {
                        json!({"jsonrpc": "2.0", "id": id, "error": {"code": -32800, "message": "cancelled"}})
                    }
                    2 => json!({"jsonrpc": "2.0", "id": id, "result": null, "error": {"code": 1}}),
                    3 => json!({"jsonrpc": "2.0", "id": id}),
                    _ => json!({"jsonrpc": "2.0", "id": Value::Null, "result": {"applied": true}}),
                };
                frame(reply.to_string().as_bytes())
            }
            Family::NotificationFlood => {
                let n = 20 + self.rng.below(80);
                messages = n;
                let mut bytes = Vec::new();
                for _ in 0..n {
                    let method = *self.rng.pick(&[
                        "$/fuzz/flood",
                        "$/cancelRequest",
                        "$/setTrace",
                        "textDocument/didSave",
                        "initialized",
                        "workspace/didChangeConfiguration",
                        "bravebot/session/cancel",
                        "textDocument/didChange",
                        "textDocument/didClose",
                        "no/such/notification",
                    ]);
                    let params = self.wrong_params(method);
                    bytes.extend(self.notification(method, params));
                }
                bytes
            }
        };
        Hostile {
            family,
            bytes,
            messages,
        }
    }

    fn framing(&mut self) -> Vec<u8> {
        let body = self.seed_message();
        let len = body.len();
        let header = match self.rng.below(10) {
            0 => String::new(),
            1 => "Content-Type: application/vscode-jsonrpc\r\n\r\n".to_owned(),
            2 => "Content-Length: -5\r\n\r\n".to_owned(),
            3 => "Content-Length: 99999999999999999999999\r\n\r\n".to_owned(),
            4 => "Content-Length: twelve\r\n\r\n".to_owned(),
            5 => format!("Content-Length: {}\r\n\r\n", self.rng.below(len.max(1))),
            6 => format!("content-length:{len}\n\n"),
            7 => format!("Content-Length: {len}\r\nContent-Length: {len}\r\nX-Unknown: y\r\n\r\n"),
            8 => format!("Content-Length: {len}\r\n"),
            _ => format!("Content-Length: {len}\r\n\r\n\r\n"),
        };
        let mut bytes = header.into_bytes();
        bytes.extend_from_slice(&body);
        bytes
    }
}

/// What a run saw.
#[derive(Clone, Debug, Default)]
pub struct FuzzReport {
    pub seed: u64,
    pub messages: usize,
    pub bytes: u64,
    pub batches: usize,
    pub probes: usize,
    pub slowest_probe: Duration,
    pub turns: usize,
    pub by_family: Vec<(Family, usize)>,
    /// Resident size of the server after initialize and a session, and at the end, in KiB.
    pub rss_start_kib: u64,
    pub rss_end_kib: u64,
    /// Lines of the log and of stderr that tell of a panic.
    pub panics: Vec<String>,
    /// What the log said, by kind (its words up to the first digit or quote), most common first.
    pub log_kinds: Vec<(String, usize)>,
    pub exit_code: Option<i32>,
    pub elapsed: Duration,
}

impl std::fmt::Display for FuzzReport {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        writeln!(f, "seed                {:#x}", self.seed)?;
        writeln!(f, "messages            {}", self.messages)?;
        writeln!(f, "bytes written       {}", self.bytes)?;
        writeln!(f, "batches / probes    {} / {}", self.batches, self.probes)?;
        writeln!(f, "slowest probe       {:?}", self.slowest_probe)?;
        writeln!(f, "real turns          {}", self.turns)?;
        writeln!(
            f,
            "crashes             {}",
            u8::from(self.exit_code != Some(0))
        )?;
        writeln!(
            f,
            "hangs               0 (a probe past the deadline fails the run)"
        )?;
        writeln!(f, "unframed stdout     0 bytes (any would fail the run)")?;
        writeln!(f, "panics in the log   {}", self.panics.len())?;
        writeln!(f, "resident at start   {} KiB", self.rss_start_kib)?;
        writeln!(f, "resident at end     {} KiB", self.rss_end_kib)?;
        writeln!(f, "elapsed             {:?}", self.elapsed)?;
        for (family, n) in &self.by_family {
            writeln!(f, "  {family:?}: {n}")?;
        }
        writeln!(f, "log lines by kind")?;
        for (kind, n) in self.log_kinds.iter().take(25) {
            writeln!(f, "  {n:>7} {kind}")?;
        }
        Ok(())
    }
}

/// The resident size of a process, in KiB, from `/proc/<pid>/status`.
pub fn resident_kib(pid: u32) -> u64 {
    std::fs::read_to_string(format!("/proc/{pid}/status"))
        .ok()
        .and_then(|status| {
            status
                .lines()
                .find_map(|l| l.strip_prefix("VmRSS:"))
                .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
        })
        .unwrap_or(0)
}

/// A server under fuzzing, with its fake model, workspace and log.
pub struct FuzzRun {
    // Field order is drop order: the server goes before the model and the workspace.
    pub client: LspClient,
    pub session: String,
    pub model: FakeModel,
    pub workspace: tempfile::TempDir,
    pub log: PathBuf,
    _logs: tempfile::TempDir,
    turns_scripted: usize,
}

/// Path of the file the real session's turn `k` writes.
fn turn_file(k: usize) -> String {
    format!("notes/turn-{k}.txt")
}

impl FuzzRun {
    /// Starts the server (or `binary`, when given) with a log file, a fake model scripted for
    /// `turns` real turns, and one session.
    pub fn start(turns: usize, binary: Option<PathBuf>) -> FuzzRun {
        let mut planner = Vec::new();
        for k in 0..turns {
            planner.push(Reply::tool_call_with_id(
                &format!("call_turn_{k}"),
                "write_file",
                json!({"path": turn_file(k), "contents": format!("written in turn {k}\n"), "why": "the person asked"}),
            ));
            planner.push(Reply::text(format!("turn {k} done")));
        }
        let model = FakeModel::start(planner);
        let workspace = tempfile::tempdir().expect("create a workspace");
        std::fs::create_dir_all(workspace.path().join("notes")).expect("mkdir notes");
        let logs = tempfile::tempdir().expect("create a log directory");
        let log = logs.path().join("bravebot.log");
        let mut options = LspOptions::new(workspace.path())
            .model_url(&model.url())
            .env("BRAVEBOT_LOG_FILE", &log)
            .env("BRAVEBOT_LOG", "warn");
        if let Some(binary) = binary {
            options = options.binary(binary);
        }
        let client = LspClient::start(options);
        client.initialize(json!({}));
        // Turn k is allowed when k is even: the question's path names the turn.
        client.answer_permissions_with(|question| {
            let path = question.params["subject"]["path"]
                .as_str()
                .unwrap_or_default();
            let k: usize = path
                .trim_start_matches("notes/turn-")
                .trim_end_matches(".txt")
                .parse()
                .unwrap_or(1);
            Answer::choose(
                question,
                if k.is_multiple_of(2) {
                    "allow_once"
                } else {
                    "reject_once"
                },
            )
        });
        let session = client.new_session();
        FuzzRun {
            client,
            session,
            model,
            workspace,
            log,
            _logs: logs,
            turns_scripted: turns,
        }
    }

    fn probe(&self) -> Duration {
        let began = Instant::now();
        let status = self
            .client
            .request(
                "bravebot/session/status",
                json!({"sessionId": self.session}),
            )
            .unwrap_or_else(|e| self.client.fail(&format!("the probe was refused: {e}")));
        assert!(
            status["model"]["name"] == "fake-model",
            "the probe's answer is not the session's status: {status}"
        );
        began.elapsed()
    }

    /// Checks what turn `k` left on disk and in the prompt's answer.
    fn check_turn(&self, k: usize, result: &Value) {
        assert_eq!(result["stopReason"], "endTurn", "turn {k}: {result}");
        let on_disk = std::fs::read_to_string(self.workspace.path().join(turn_file(k))).ok();
        let expected = (k.is_multiple_of(2)).then(|| format!("written in turn {k}\n"));
        assert_eq!(
            on_disk, expected,
            "turn {k}: the file is not what the answer said"
        );
        let leftovers: Vec<String> = std::fs::read_dir(self.workspace.path().join("notes"))
            .into_iter()
            .flatten()
            .flatten()
            .map(|e| e.file_name().to_string_lossy().into_owned())
            .filter(|name| name.contains(".tmp"))
            .collect();
        assert!(leftovers.is_empty(), "temporary files left: {leftovers:?}");
    }

    /// Sends `total` hostile messages from `seed` in batches of about `batch`, a probe after
    /// each, a real turn running through every `turn_every`-th batch. `forget` drops what the
    /// client recorded after each batch (for long runs; the record is only needed to fail well).
    pub fn run(
        self,
        seed: u64,
        total: usize,
        batch: usize,
        turn_every: usize,
        forget: bool,
    ) -> FuzzReport {
        let began = Instant::now();
        let mut fuzzer = Fuzzer::new(seed, &self.session);
        let mut report = FuzzReport {
            seed,
            rss_start_kib: resident_kib(self.client.pid()),
            ..FuzzReport::default()
        };
        let mut families = std::collections::BTreeMap::new();
        let mut turn = 0;
        while report.messages < total {
            let running = (report.batches.is_multiple_of(turn_every.max(1)) && turn < self.turns_scripted)
                .then(|| {
                    self.client.send_request(
                        "bravebot/session/prompt",
                        json!({"sessionId": self.session, "text": format!("write the note of turn {turn}")}),
                    )
                });
            let mut in_batch = 0;
            while in_batch < batch && report.messages < total {
                let hostile = fuzzer.next_message();
                *families.entry(hostile.family).or_insert(0) += hostile.messages;
                in_batch += hostile.messages;
                report.messages += hostile.messages;
                report.bytes += hostile.bytes.len() as u64;
                self.client.send_raw(&hostile.bytes);
            }
            if let Some(pending) = running {
                let result = self.client.response(pending).unwrap_or_else(|e| {
                    self.client
                        .fail(&format!("turn {turn}'s prompt was refused: {e}"))
                });
                self.check_turn(turn, &result);
                turn += 1;
                report.turns += 1;
            }
            report.slowest_probe = report.slowest_probe.max(self.probe());
            report.probes += 1;
            report.batches += 1;
            if forget {
                self.client.forget_history();
            }
        }
        self.client.check_stdout();
        report.rss_end_kib = resident_kib(self.client.pid());
        report.by_family = families.into_iter().collect();
        let stderr = self.client.stderr();
        let status = self.client.shutdown();
        report.exit_code = status.code();
        let log = std::fs::read_to_string(&self.log).unwrap_or_default();
        report.panics = log
            .lines()
            .chain(stderr.lines())
            .filter(|l| l.contains("panicked"))
            .map(str::to_owned)
            .collect();
        let mut kinds = std::collections::HashMap::<String, usize>::new();
        for line in log.lines() {
            // `2026-01-01T00:00:00Z  WARN target: message`: the level and the message's first words.
            let words: Vec<&str> = line.split_whitespace().skip(1).collect();
            let kind: String = words
                .join(" ")
                .chars()
                .take_while(|c| !c.is_ascii_digit() && *c != '"' && *c != '`')
                .take(90)
                .collect();
            *kinds.entry(kind).or_default() += 1;
        }
        let mut kinds: Vec<(String, usize)> = kinds.into_iter().collect();
        kinds.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(&b.0)));
        report.log_kinds = kinds;
        report.elapsed = began.elapsed();
        drop(self.model);
        report
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    // Verifies: PROTO-23
    #[test]
    fn the_same_seed_makes_the_same_messages_and_another_seed_others() {
        let make = |seed| {
            let mut f = Fuzzer::new(seed, "s");
            (0..200).map(|_| f.next_message().bytes).collect::<Vec<_>>()
        };
        assert_eq!(make(7), make(7));
        assert_ne!(make(7), make(8));
    }

    // Verifies: PROTO-23
    #[test]
    fn every_family_comes_up_and_no_message_ends_the_server() {
        let mut f = Fuzzer::new(1, "s");
        let mut seen = std::collections::BTreeSet::new();
        for _ in 0..5000 {
            let m = f.next_message();
            seen.insert(m.family);
            let text = String::from_utf8_lossy(&m.bytes);
            assert!(
                !text.contains("\"shutdown\"") && !text.contains("\"exit\""),
                "{text}"
            );
        }
        assert_eq!(seen.len(), Family::ALL.len());
    }
}
