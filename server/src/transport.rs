//! The base protocol on stdio: `Content-Length` frames of JSON-RPC 2.0, read and written here
//! rather than by tower-lsp-server's own loop, so that a malformed frame is answered with an error
//! and the server keeps reading (its loop stops at the first bad frame), notifications are handled
//! in the order they arrive, and the end of the input is noticed.
//!
//! The language server itself is still tower-lsp-server's `LspService`; this module only feeds it.

use std::future::poll_fn;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use futures::{SinkExt, StreamExt};
use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt, AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt, BufReader};
use tokio::sync::mpsc;
use tokio::task::JoinSet;
use tower_lsp_server::jsonrpc::{Request, Response};
use tower_lsp_server::{ClientSocket, LanguageServer, LspService};
use tower_service::Service;

/// Largest frame accepted; a bigger one is refused and skipped.
const MAX_FRAME: usize = 64 * 1024 * 1024;

/// One thing read off the input.
enum Frame {
    Body(Vec<u8>),
    /// A header block we could not use; the reason goes back as a parse error.
    Bad(String),
    End,
}

async fn read_frame<R: AsyncRead + Unpin>(input: &mut BufReader<R>) -> Frame {
    let mut length: Option<usize> = None;
    let mut saw_header = false;
    loop {
        let mut line = String::new();
        match input.read_line(&mut line).await {
            Ok(0) | Err(_) => return Frame::End,
            Ok(_) => {}
        }
        let line = line.trim_end_matches(['\r', '\n']);
        if line.is_empty() {
            if !saw_header {
                continue;
            }
            break;
        }
        saw_header = true;
        if let Some((name, value)) = line.split_once(':')
            && name.trim().eq_ignore_ascii_case("content-length")
        {
            length = value.trim().parse().ok();
        }
    }
    let Some(length) = length else {
        return Frame::Bad("frame has no valid Content-Length header".into());
    };
    if length > MAX_FRAME {
        // Skip it so the next frame can still be read.
        let mut rest = input.take(length as u64);
        let _ = tokio::io::copy(&mut rest, &mut tokio::io::sink()).await;
        return Frame::Bad(format!(
            "frame of {length} bytes is larger than {MAX_FRAME}"
        ));
    }
    let mut body = vec![0; length];
    match input.read_exact(&mut body).await {
        Ok(_) => Frame::Body(body),
        Err(_) => Frame::End,
    }
}

fn error_reply(id: Value, code: i64, message: &str) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "error": {"code": code, "message": message}})
}

/// Messages waiting to be written, in order. Notifications the server sends go straight in here,
/// so every update of a turn is written before the reply that ends the turn.
#[derive(Clone)]
pub struct Outbox(mpsc::UnboundedSender<Value>, Arc<AtomicUsize>);

/// Past this many messages waiting to be written the outbox counts as backed up, and streamed
/// text is held and merged instead of queued (`screen::Updates`).
const BACKED_UP: usize = 64;
/// The most bytes of frames gathered into one write.
const WRITE_BATCH: usize = 256 * 1024;

impl Outbox {
    pub fn notify(&self, method: &str, params: Value) {
        self.1.fetch_add(1, Ordering::Relaxed);
        let _ = self
            .0
            .send(json!({"jsonrpc": "2.0", "method": method, "params": params}));
    }

    /// Whether the writer is behind: the client is not reading as fast as the server writes.
    pub fn backed_up(&self) -> bool {
        self.1.load(Ordering::Relaxed) > BACKED_UP
    }
}

pub struct OutboxReceiver(mpsc::UnboundedReceiver<Value>, Arc<AtomicUsize>);

pub fn outbox() -> (Outbox, OutboxReceiver) {
    let (tx, rx) = mpsc::unbounded_channel();
    let waiting = Arc::new(AtomicUsize::new(0));
    (
        Outbox(tx, Arc::clone(&waiting)),
        OutboxReceiver(rx, waiting),
    )
}

#[cfg(test)]
impl OutboxReceiver {
    /// The next message queued, if one is.
    pub fn try_next(&mut self) -> Option<Value> {
        self.0.try_recv().ok()
    }
}

/// Appends one `Content-Length` frame of `message` to `frames`.
fn frame_into(frames: &mut Vec<u8>, message: &Value) {
    let body = message.to_string();
    frames.extend_from_slice(format!("Content-Length: {}\r\n\r\n", body.len()).as_bytes());
    frames.extend_from_slice(body.as_bytes());
}

/// Runs the language server over `input`/`output` until `exit` or the end of the input.
/// `on_end` runs when the input ends, before waiting for in-flight requests to finish.
pub async fn serve<S, I, O>(
    input: I,
    output: O,
    (Outbox(out_tx, _), OutboxReceiver(mut out_rx, waiting)): (Outbox, OutboxReceiver),
    mut service: LspService<S>,
    socket: ClientSocket,
    on_end: impl FnOnce(),
) where
    S: LanguageServer,
    I: AsyncRead + Unpin,
    O: AsyncWrite + Unpin + Send + 'static,
{
    let writer = tokio::spawn(async move {
        let mut output = output;
        let mut frames = Vec::new();
        while let Some(message) = out_rx.recv().await {
            // `Null` is the end marker: everything queued before it has been written.
            let mut end = message.is_null();
            if !end {
                frame_into(&mut frames, &message);
            }
            // Whatever else is already waiting goes out in the same write.
            while !end && frames.len() < WRITE_BATCH {
                match out_rx.try_recv() {
                    Ok(message) if message.is_null() => end = true,
                    Ok(message) => frame_into(&mut frames, &message),
                    Err(_) => break,
                }
            }
            waiting.store(out_rx.len(), Ordering::Relaxed);
            if !frames.is_empty()
                && (output.write_all(&frames).await.is_err() || output.flush().await.is_err())
            {
                break;
            }
            frames.clear();
            if end {
                break;
            }
        }
    });
    let (mut to_client, mut from_client) = socket.split();
    let forward_tx = out_tx.clone();
    let forward = tokio::spawn(async move {
        while let Some(request) = to_client.next().await {
            match serde_json::to_value(&request) {
                Ok(v) => {
                    let _ = forward_tx.send(v);
                }
                Err(e) => tracing::error!("server request not serialised: {e}"),
            }
        }
    });
    let mut in_flight = JoinSet::new();
    let mut input = BufReader::new(input);
    loop {
        let body = match read_frame(&mut input).await {
            Frame::End => break,
            Frame::Bad(reason) => {
                let _ = out_tx.send(error_reply(Value::Null, -32700, &reason));
                continue;
            }
            Frame::Body(body) => body,
        };
        let value: Value = match serde_json::from_slice(&body) {
            Ok(v) => v,
            Err(e) => {
                let _ = out_tx.send(error_reply(
                    Value::Null,
                    -32700,
                    &format!("parse error: {e}"),
                ));
                continue;
            }
        };
        let id = value.get("id").cloned().unwrap_or(Value::Null);
        if value.get("method").is_none() {
            match serde_json::from_value::<Response>(value) {
                Ok(response) => {
                    let _ = from_client.send(response).await;
                }
                Err(e) => tracing::warn!("unreadable response from the client ignored: {e}"),
            }
            continue;
        }
        let request: Request = match serde_json::from_value(value) {
            Ok(r) => r,
            Err(e) => {
                let _ = out_tx.send(error_reply(id, -32600, &format!("invalid request: {e}")));
                continue;
            }
        };
        let is_exit = request.method() == "exit";
        let is_notification = request.id().is_none();
        if poll_fn(|cx| service.poll_ready(cx)).await.is_err() {
            break;
        }
        let future = service.call(request);
        let reply_tx = out_tx.clone();
        let finish = async move {
            if let Ok(Some(response)) = future.await
                && let Ok(v) = serde_json::to_value(&response)
            {
                let _ = reply_tx.send(v);
            }
        };
        if is_notification {
            // In arrival order: a didChange must not overtake the one before it.
            finish.await;
        } else {
            in_flight.spawn(finish);
        }
        if is_exit {
            break;
        }
    }
    on_end();
    // Requests still running end once their turns see the cancellation; give them a bound.
    let _ = tokio::time::timeout(std::time::Duration::from_secs(5), async {
        while in_flight.join_next().await.is_some() {}
    })
    .await;
    forward.abort();
    let _ = out_tx.send(Value::Null);
    let _ = tokio::time::timeout(std::time::Duration::from_secs(2), writer).await;
}
