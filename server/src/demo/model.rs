//! The demonstration's model: a script served on a loopback port inside the process.
//!
//! It answers `POST /v1/chat/completions` in the OpenAI streaming wire format (server-sent events
//! ending in `data: [DONE]`), so the session reaches it through `egress` and `model/` exactly as it
//! would reach a local model. It is a server, not a client: it opens no connection of its own.
//!
//! The planner's script is chosen by how far the conversation has come (the number of tool
//! results in the request), never by what a result says. The check's script reads its request the
//! way a competent check reads quarantined content: it answers `VERDICT: unsafe` when the request
//! holds the sample's injection marker and `VERDICT: safe` otherwise. That reading happens on the
//! model's side of the boundary; its verdict comes back through the same policy layer as any
//! model's.

use std::net::{Ipv4Addr, SocketAddr};
use std::time::Duration;

use serde_json::{Value, json};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};
use tokio::task::JoinHandle;

use super::sample;

/// The name the session sends as `model`: it says what this is.
pub const MODEL_NAME: &str = "scripted-demonstration-not-a-real-model";

/// The largest request read; the demonstration's own requests are a few kilobytes.
const MAX_REQUEST_BYTES: usize = 8 * 1024 * 1024;

/// The pause between streamed words, so a person watching sees the answer arrive as it would
/// from a model.
const WORD_PACE: Duration = Duration::from_millis(15);

/// The running server. Dropping it stops accepting connections.
pub struct DemoModel {
    addr: SocketAddr,
    accept: JoinHandle<()>,
}

impl DemoModel {
    /// Listens on 127.0.0.1 at a port the system picks.
    pub async fn start() -> std::io::Result<DemoModel> {
        let listener = TcpListener::bind((Ipv4Addr::LOCALHOST, 0)).await?;
        let addr = listener.local_addr()?;
        let accept = tokio::spawn(async move {
            loop {
                match listener.accept().await {
                    Ok((stream, _)) => {
                        tokio::spawn(answer(stream));
                    }
                    Err(error) => {
                        tracing::debug!(%error, "the demonstration model missed a connection")
                    }
                }
            }
        });
        Ok(DemoModel { addr, accept })
    }

    /// The base URL a session's model settings take, ending in `/v1`.
    pub fn base_url(&self) -> String {
        format!("http://{}/v1", self.addr)
    }
}

impl Drop for DemoModel {
    fn drop(&mut self) {
        self.accept.abort();
    }
}

/// One scripted reply: text streamed word by word, then tool calls.
struct Scripted {
    text: String,
    calls: Vec<(String, Value)>,
}

impl Scripted {
    fn say(text: &str) -> Scripted {
        Scripted {
            text: text.to_owned(),
            calls: Vec::new(),
        }
    }

    fn call(mut self, tool: &str, arguments: Value) -> Scripted {
        self.calls.push((tool.to_owned(), arguments));
        self
    }
}

/// The planner's script, one entry per round; the last one ends the turn.
fn planner_reply(round: usize) -> Scripted {
    match round {
        0 => Scripted::say("I'll read the code first.").call(
            "read_file",
            json!({"path": sample::CODE_PATH, "why": "to see greet() before adding next to it"}),
        ),
        1 => Scripted::say("Now the README you asked about.").call(
            "read_file",
            json!({"path": sample::README_PATH, "why": "the person asked what it says"}),
        ),
        2 => Scripted::say("Adding farewell() after greet(), in the same style.").call(
            "edit_file",
            json!({
                "path": sample::CODE_PATH,
                "old_text": sample::EDIT_OLD_TEXT,
                "new_text": sample::EDIT_NEW_TEXT,
                "why": "the person asked for a farewell function",
            }),
        ),
        _ => Scripted::say(
            "farewell() is now in src/greet.py, next to greet(). As for the README: it reached me \
             only as a reference. A check found that it gives orders to whoever reads it, so it \
             stays quarantined and I never saw its text; open it yourself if you want to know \
             what it says.",
        ),
    }
}

/// The check's script: the verdict a competent check gives on the sample.
fn check_reply(request: &[u8]) -> Scripted {
    let marker = sample::INJECTION_MARKER.as_bytes();
    if request.windows(marker.len()).any(|w| w == marker) {
        Scripted::say("VERDICT: unsafe\nIt tells the reader to run a command and delete files.")
    } else {
        Scripted::say("VERDICT: safe\nOrdinary project source.")
    }
}

/// A request as read off the wire.
struct Incoming {
    method: String,
    path: String,
    role: String,
    body: Vec<u8>,
}

async fn answer(mut stream: TcpStream) {
    let Some(incoming) = read_request(&mut stream).await else {
        return;
    };
    let route = incoming.path.split('?').next().unwrap_or_default();
    let written = if incoming.method == "POST" && route == "/v1/chat/completions" {
        match incoming.role.as_str() {
            "planner" => {
                let round = serde_json::from_slice::<Value>(&incoming.body)
                    .ok()
                    .and_then(|body| {
                        body.get("messages")
                            .and_then(Value::as_array)
                            .map(|messages| messages.iter().filter(|m| m["role"] == "tool").count())
                    })
                    .unwrap_or(0);
                stream_reply(&mut stream, &planner_reply(round), round).await
            }
            "check" => stream_reply(&mut stream, &check_reply(&incoming.body), 0).await,
            other => {
                let message = format!("the demonstration has no script for the role {other:?}");
                write_json(&mut stream, 400, &json!({"error": {"message": message}})).await
            }
        }
    } else {
        let message = "the demonstration answers POST /v1/chat/completions only";
        write_json(&mut stream, 404, &json!({"error": {"message": message}})).await
    };
    if written.is_ok() {
        let _ = stream.shutdown().await;
    }
}

/// Streams `reply` as chat-completion chunks: an opening, the text a word at a time, each tool
/// call whole, the finish reason, then `[DONE]`.
async fn stream_reply(
    stream: &mut TcpStream,
    reply: &Scripted,
    round: usize,
) -> std::io::Result<()> {
    let head = "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nCache-Control: no-cache\r\nConnection: close\r\n\r\n";
    stream.write_all(head.as_bytes()).await?;
    let chunk = |delta: Value, finish: Option<&str>| {
        json!({
            "id": "chatcmpl-demo",
            "object": "chat.completion.chunk",
            "created": 0,
            "model": MODEL_NAME,
            "choices": [{"index": 0, "delta": delta, "finish_reason": finish}],
        })
    };
    send_event(
        stream,
        &chunk(json!({"role": "assistant", "content": ""}), None),
    )
    .await?;
    for word in reply.text.split_inclusive(' ') {
        send_event(stream, &chunk(json!({"content": word}), None)).await?;
        tokio::time::sleep(WORD_PACE).await;
    }
    for (index, (tool, arguments)) in reply.calls.iter().enumerate() {
        let call = json!({
            "index": index,
            "id": format!("demo_{round}_{index}"),
            "type": "function",
            "function": {"name": tool, "arguments": arguments.to_string()},
        });
        send_event(stream, &chunk(json!({"tool_calls": [call]}), None)).await?;
    }
    let finish = if reply.calls.is_empty() {
        "stop"
    } else {
        "tool_calls"
    };
    send_event(stream, &chunk(json!({}), Some(finish))).await?;
    stream.write_all(b"data: [DONE]\n\n").await?;
    stream.flush().await
}

async fn send_event(stream: &mut TcpStream, data: &Value) -> std::io::Result<()> {
    stream
        .write_all(format!("data: {data}\n\n").as_bytes())
        .await?;
    stream.flush().await
}

async fn write_json(stream: &mut TcpStream, status: u16, body: &Value) -> std::io::Result<()> {
    let reason = if status == 404 {
        "Not Found"
    } else {
        "Bad Request"
    };
    let body = body.to_string();
    let head = format!(
        "HTTP/1.1 {status} {reason}\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n",
        body.len()
    );
    stream.write_all(head.as_bytes()).await?;
    stream.write_all(body.as_bytes()).await?;
    stream.flush().await
}

/// Reads one request: the head up to the blank line, then `Content-Length` bytes of body.
async fn read_request(stream: &mut TcpStream) -> Option<Incoming> {
    let mut buf = Vec::new();
    let mut piece = [0u8; 8192];
    let head_end = loop {
        if let Some(at) = buf.windows(4).position(|w| w == b"\r\n\r\n") {
            break at;
        }
        if buf.len() > MAX_REQUEST_BYTES {
            return None;
        }
        let n = stream.read(&mut piece).await.ok()?;
        if n == 0 {
            return None;
        }
        buf.extend_from_slice(&piece[..n]);
    };
    let head = String::from_utf8_lossy(&buf[..head_end]).into_owned();
    let mut lines = head.split("\r\n");
    let mut request_line = lines.next()?.split(' ');
    let method = request_line.next()?.to_owned();
    let path = request_line.next()?.to_owned();
    let mut length = 0usize;
    let mut role = String::new();
    for (name, value) in lines.filter_map(|line| line.split_once(':')) {
        let value = value.trim();
        if name.trim().eq_ignore_ascii_case("content-length") {
            length = value.parse().ok()?;
        } else if name.trim().eq_ignore_ascii_case("x-bravebot-role") {
            value.clone_into(&mut role);
        }
    }
    if length > MAX_REQUEST_BYTES {
        return None;
    }
    let mut body = buf[head_end + 4..].to_vec();
    while body.len() < length {
        let n = stream.read(&mut piece).await.ok()?;
        if n == 0 {
            return None;
        }
        body.extend_from_slice(&piece[..n]);
    }
    body.truncate(length);
    Some(Incoming {
        method,
        path,
        role,
        body,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    // Verifies: BIN-4
    #[test]
    fn the_check_finds_the_marker_and_passes_everything_else() {
        let with = format!("{{\"content\": \"x {} y\"}}", sample::INJECTION_MARKER);
        assert!(
            check_reply(with.as_bytes())
                .text
                .starts_with("VERDICT: unsafe")
        );
        assert!(
            check_reply(b"def greet(name): ...")
                .text
                .starts_with("VERDICT: safe")
        );
    }

    #[test]
    fn the_planner_script_ends_with_an_answer_and_no_call() {
        assert!(planner_reply(0).calls.len() == 1);
        assert!(planner_reply(3).calls.is_empty());
        assert!(planner_reply(9).calls.is_empty());
    }
}
