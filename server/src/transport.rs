//! The base protocol on stdio: `Content-Length` frames of JSON-RPC 2.0, read and written here
//! rather than by tower-lsp-server's own loop, so that a malformed frame is answered with an error
//! and the server keeps reading (its loop stops at the first bad frame), notifications are handled
//! in the order they arrive, and the end of the input is noticed.
//!
//! Header lines are bytes: a line that is not a header (not UTF-8, no `name: value` shape) is
//! skipped and reported with a parse error, and a header glued to garbage is found again at its
//! `Content-Length:`, so one stray byte costs one error reply and no frame. Each request's handler
//! runs as a task of its own; a finished one is reaped as soon as it ends, so the set of requests
//! in flight holds only those still running (PROTO-22).
//!
//! The language server itself is still tower-lsp-server's `LspService`; this module only feeds it.

use std::collections::HashMap;
use std::future::poll_fn;
use std::panic::AssertUnwindSafe;
use std::sync::Arc;
use std::sync::Mutex;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};

use bravebot_core::pieces::{PIECE, Pieces};

use futures::{FutureExt, SinkExt, StreamExt};
use serde::Serialize;
use serde_json::{Value, json};
use tokio::io::{
    AsyncBufRead, AsyncBufReadExt, AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt, BufReader,
};
use tokio::sync::{mpsc, oneshot, watch};
use tokio::task::JoinSet;
use tower_lsp_server::jsonrpc::{Request, Response};
use tower_lsp_server::{ClientSocket, LanguageServer, LspService};
use tower_service::Service;

/// Largest frame accepted; a bigger one is refused and skipped.
const MAX_FRAME: usize = 64 * 1024 * 1024;

/// Most bytes of one header line kept while looking for its end: a longer line is garbage, and
/// only its tail (where a glued `Content-Length:` would be) is looked at.
const MAX_LINE: usize = 4096;

/// Frames read ahead of the handlers; the reader waits when this many are queued.
const READ_AHEAD: usize = 16;

/// The header that starts a frame, matched without regard to case.
const CONTENT_LENGTH: &[u8] = b"content-length:";

/// One thing read off the input.
#[derive(Debug, PartialEq)]
enum Frame {
    Body(Vec<u8>),
    /// Bytes we could not use; the reason goes back as a parse error.
    Bad(String),
    End,
}

/// One line of the input, without its line break: at most its last [`MAX_LINE`] bytes, and how
/// long it really was. `None` at the end of the input.
async fn read_line<R: AsyncBufRead + Unpin>(input: &mut R) -> Option<(Vec<u8>, usize)> {
    let mut line = Vec::new();
    let mut total = 0;
    loop {
        let buf = match input.fill_buf().await {
            Ok(buf) => buf,
            Err(e) => {
                tracing::warn!("reading the input failed: {e}");
                return None;
            }
        };
        if buf.is_empty() {
            return (total > 0).then_some((line, total));
        }
        let (used, done) = match buf.iter().position(|b| *b == b'\n') {
            Some(at) => (at + 1, true),
            None => (buf.len(), false),
        };
        line.extend_from_slice(&buf[..used]);
        total += used;
        input.consume(used);
        if line.len() > MAX_LINE {
            line.drain(..line.len() - MAX_LINE);
        }
        if done {
            if line.last() == Some(&b'\n') {
                line.pop();
            }
            if line.last() == Some(&b'\r') {
                line.pop();
            }
            return Some((line, total));
        }
    }
}

/// Where the last `Content-Length:` of `line` starts, in any case: garbage glued before a header
/// may hold the words too, the header itself is what ends the line.
fn find_content_length(line: &[u8]) -> Option<usize> {
    line.windows(CONTENT_LENGTH.len())
        .rposition(|w| w.eq_ignore_ascii_case(CONTENT_LENGTH))
}

/// A header line's name and value, when it has the shape of one: a token, a colon, a UTF-8 value.
fn header(line: &[u8]) -> Option<(&str, &str)> {
    let colon = line.iter().position(|b| *b == b':')?;
    let name = std::str::from_utf8(&line[..colon]).ok()?;
    let token = |c: char| c.is_ascii_alphanumeric() || "!#$%&'*+-.^_`|~".contains(c);
    if name.is_empty() || !name.chars().all(token) {
        return None;
    }
    let value = std::str::from_utf8(&line[colon + 1..]).ok()?;
    Some((name, value.trim()))
}

/// Reads the next frame. The first value, when there is one, says what was skipped before it:
/// lines that were not headers, or garbage a header was glued to.
async fn read_frame<R: AsyncBufRead + Unpin>(input: &mut R) -> (Option<String>, Frame) {
    let mut length: Option<Result<usize, String>> = None;
    let mut saw_header = false;
    let mut skipped = 0usize;
    let skipped_words = |n: usize| format!("{n} bytes that are not a frame header were skipped");
    loop {
        let Some((line, total)) = read_line(input).await else {
            return ((skipped > 0).then(|| skipped_words(skipped)), Frame::End);
        };
        if line.is_empty() {
            if saw_header {
                break;
            }
            if skipped > 0 {
                return (None, Frame::Bad(skipped_words(skipped)));
            }
            continue;
        }
        // A frame glued to garbage starts again at its `Content-Length:`.
        let line = match find_content_length(&line) {
            Some(0) | None => &line[..],
            Some(at) => {
                skipped += total - (line.len() - at);
                &line[at..]
            }
        };
        match header(line) {
            Some((name, value)) => {
                saw_header = true;
                if name.eq_ignore_ascii_case("content-length") {
                    length = Some(
                        value
                            .parse()
                            .map_err(|_| "frame has no valid Content-Length header".to_string()),
                    );
                }
            }
            None => skipped += line.len(),
        }
    }
    let skipped = (skipped > 0).then(|| skipped_words(skipped));
    let length = match length {
        Some(Ok(length)) => length,
        Some(Err(reason)) => return (skipped, Frame::Bad(reason)),
        None => {
            return (
                skipped,
                Frame::Bad("frame has no valid Content-Length header".into()),
            );
        }
    };
    if length > MAX_FRAME {
        // Skip it so the next frame can still be read.
        let mut rest = input.take(length as u64);
        let _ = tokio::io::copy(&mut rest, &mut tokio::io::sink()).await;
        return (
            skipped,
            Frame::Bad(format!(
                "frame of {length} bytes is larger than {MAX_FRAME}"
            )),
        );
    }
    let mut body = vec![0; length];
    match input.read_exact(&mut body).await {
        Ok(_) => (skipped, Frame::Body(body)),
        Err(_) => (skipped, Frame::End),
    }
}

/// Reads frames into `frames` until the input ends or nobody listens.
async fn read_frames<R: AsyncRead + Unpin>(input: R, frames: mpsc::Sender<Frame>) {
    let mut input = BufReader::new(input);
    loop {
        let (skipped, frame) = read_frame(&mut input).await;
        if let Some(reason) = skipped
            && frames.send(Frame::Bad(reason)).await.is_err()
        {
            return;
        }
        let end = frame == Frame::End;
        if frames.send(frame).await.is_err() || end {
            return;
        }
    }
}

fn error_reply(id: Value, code: i64, message: &str) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "error": {"code": code, "message": message}})
}

/// One message on its way out: its `Content-Length` header and its body, serialised once, in
/// pieces ([`Pieces`]) so a large message (an edit's question carries both texts) is never held
/// in a buffer that doubles as it grows, nor copied whole again before it is written.
pub struct Outgoing {
    header: String,
    body: Pieces,
}

impl Outgoing {
    /// `message` serialised as one frame.
    fn of<T: Serialize + ?Sized>(message: &T) -> serde_json::Result<Outgoing> {
        let mut body = Pieces::default();
        serde_json::to_writer(&mut body, message)?;
        Ok(Outgoing {
            header: format!("Content-Length: {}\r\n\r\n", body.len()),
            body,
        })
    }

    #[cfg(test)]
    fn body(&self) -> Value {
        serde_json::from_slice(&self.body.to_vec()).unwrap_or_default()
    }
}

/// A JSON-RPC notification, borrowing its parts.
#[derive(Serialize)]
struct Notification<'a, P: Serialize + ?Sized> {
    jsonrpc: &'static str,
    method: &'a str,
    params: &'a P,
}

/// A JSON-RPC request of the server's own, borrowing its parts.
#[derive(Serialize)]
struct OwnRequest<'a, P: Serialize + ?Sized> {
    jsonrpc: &'static str,
    id: &'a str,
    method: &'a str,
    params: &'a P,
}

/// What the writer is handed: a message, or the end marker (everything queued before it has
/// been written).
enum Queued {
    Message(Outgoing),
    End,
}

/// Requests the server sends itself ([`Outbox::request`]) and not through tower-lsp's client,
/// so that their parameters are serialised straight into the frame: each waits here, under its
/// own id, for the client's reply. The ids are strings (`bravebot-1`, ...), so they never meet
/// tower-lsp's numbers.
#[derive(Default)]
struct Asked {
    next: AtomicU64,
    waiting: Mutex<HashMap<String, oneshot::Sender<Value>>>,
}

impl Asked {
    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<String, oneshot::Sender<Value>>> {
        self.waiting.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Hands `reply` to the request with its id, when one of ours waits for it; otherwise gives
    /// it back.
    fn deliver(&self, reply: Value) -> Option<Value> {
        let waiter = match reply.get("id") {
            Some(Value::String(id)) => self.lock().remove(id),
            _ => None,
        };
        match waiter {
            Some(waiter) => {
                let _ = waiter.send(reply);
                None
            }
            None => Some(reply),
        }
    }
}

/// A request sent by [`Outbox::request`]: its reply's `result`, or `None` when the reply was an
/// error or the client can no longer answer. Dropping it stops waiting.
pub struct Reply {
    id: String,
    asked: Arc<Asked>,
    reply: oneshot::Receiver<Value>,
}

impl Reply {
    pub async fn result(mut self) -> Option<Value> {
        let mut reply = (&mut self.reply).await.ok()?;
        reply.get_mut("result").map(Value::take)
    }
}

impl Drop for Reply {
    fn drop(&mut self) {
        self.asked.lock().remove(&self.id);
    }
}

/// Messages waiting to be written, in order. Notifications the server sends go straight in here,
/// so every update of a turn is written before the reply that ends the turn.
#[derive(Clone)]
pub struct Outbox {
    queue: mpsc::UnboundedSender<Queued>,
    waiting: Arc<AtomicUsize>,
    asked: Arc<Asked>,
}

/// Past this many messages waiting to be written the outbox counts as backed up, and streamed
/// text is held and merged instead of queued (`screen::Updates`).
const BACKED_UP: usize = 64;
/// The most bytes of frames gathered into one write.
const WRITE_BATCH: usize = 256 * 1024;

impl Outbox {
    fn send(&self, message: Outgoing) {
        self.waiting.fetch_add(1, Ordering::Relaxed);
        let _ = self.queue.send(Queued::Message(message));
    }

    /// Queues `message`, serialised once.
    fn send_value<T: Serialize + ?Sized>(&self, message: &T) {
        match Outgoing::of(message) {
            Ok(message) => self.send(message),
            Err(e) => tracing::error!("a message was not serialised: {e}"),
        }
    }

    pub fn notify<P: Serialize + ?Sized>(&self, method: &str, params: &P) {
        self.send_value(&Notification {
            jsonrpc: "2.0",
            method,
            params,
        });
    }

    /// Queues a request to the client at once, its `params` serialised straight into the frame,
    /// and answers what waits for the reply; `None` when it could not be serialised.
    pub fn request<P: Serialize + ?Sized>(&self, method: &str, params: &P) -> Option<Reply> {
        let id = format!(
            "bravebot-{}",
            self.asked.next.fetch_add(1, Ordering::Relaxed) + 1
        );
        let message = match Outgoing::of(&OwnRequest {
            jsonrpc: "2.0",
            id: &id,
            method,
            params,
        }) {
            Ok(message) => message,
            Err(e) => {
                tracing::error!("a request was not serialised: {e}");
                return None;
            }
        };
        let (tx, rx) = oneshot::channel();
        self.asked.lock().insert(id.clone(), tx);
        self.send(message);
        Some(Reply {
            id,
            asked: Arc::clone(&self.asked),
            reply: rx,
        })
    }

    /// Whether the writer is behind: the client is not reading as fast as the server writes.
    pub fn backed_up(&self) -> bool {
        self.waiting.load(Ordering::Relaxed) > BACKED_UP
    }
}

pub struct OutboxReceiver(mpsc::UnboundedReceiver<Queued>, Arc<AtomicUsize>);

pub fn outbox() -> (Outbox, OutboxReceiver) {
    let (tx, rx) = mpsc::unbounded_channel();
    let waiting = Arc::new(AtomicUsize::new(0));
    (
        Outbox {
            queue: tx,
            waiting: Arc::clone(&waiting),
            asked: Arc::default(),
        },
        OutboxReceiver(rx, waiting),
    )
}

#[cfg(test)]
impl OutboxReceiver {
    /// The body of the next message queued, if one is.
    pub fn try_next(&mut self) -> Option<Value> {
        match self.0.try_recv().ok()? {
            Queued::Message(message) => Some(message.body()),
            Queued::End => None,
        }
    }
}

/// Writes `message` after what `batch` holds. Small messages gather in `batch` (written once it
/// would pass [`WRITE_BATCH`] and when the queue is empty); a full piece of a large one is
/// written as it is, so no large message is copied whole into the batch.
async fn put<O: AsyncWrite + Unpin>(
    output: &mut O,
    batch: &mut Vec<u8>,
    message: &Outgoing,
) -> std::io::Result<()> {
    batch.extend_from_slice(message.header.as_bytes());
    for piece in message.body.pieces() {
        if batch.len() + piece.len() > WRITE_BATCH {
            output.write_all(batch).await?;
            batch.clear();
        }
        if piece.len() == PIECE && batch.is_empty() {
            output.write_all(piece).await?;
        } else {
            batch.extend_from_slice(piece);
        }
    }
    Ok(())
}

/// Runs the language server over `input`/`output` until `exit` or the end of the input.
/// `on_end` runs when the input ends, before waiting for in-flight requests to finish.
pub async fn serve<S, I, O>(
    input: I,
    output: O,
    outbox: (Outbox, OutboxReceiver),
    service: LspService<S>,
    socket: ClientSocket,
    on_end: impl FnOnce(),
) where
    S: LanguageServer,
    I: AsyncRead + Unpin + Send + 'static,
    O: AsyncWrite + Unpin + Send + 'static,
{
    let (in_flight, _) = watch::channel(0);
    serve_counted(input, output, outbox, service, socket, on_end, &in_flight).await;
}

/// [`serve`], publishing in `in_flight` how many request handlers are running each time the
/// number changes.
pub async fn serve_counted<S, I, O>(
    input: I,
    output: O,
    (out_tx, OutboxReceiver(mut out_rx, waiting)): (Outbox, OutboxReceiver),
    mut service: LspService<S>,
    socket: ClientSocket,
    on_end: impl FnOnce(),
    in_flight_figure: &watch::Sender<usize>,
) where
    S: LanguageServer,
    I: AsyncRead + Unpin + Send + 'static,
    O: AsyncWrite + Unpin + Send + 'static,
{
    let writer = tokio::spawn(async move {
        let mut output = output;
        let mut batch = Vec::new();
        while let Some(queued) = out_rx.recv().await {
            let mut next = Some(queued);
            let mut end = false;
            let mut failed = false;
            // Whatever else is already waiting goes out in the same write.
            while let Some(queued) = next.take() {
                match queued {
                    Queued::End => end = true,
                    Queued::Message(message) => {
                        failed = put(&mut output, &mut batch, &message).await.is_err();
                    }
                }
                if end || failed || batch.len() >= WRITE_BATCH {
                    break;
                }
                next = out_rx.try_recv().ok();
            }
            waiting.store(out_rx.len(), Ordering::Relaxed);
            if failed
                || (!batch.is_empty() && output.write_all(&batch).await.is_err())
                || output.flush().await.is_err()
            {
                break;
            }
            batch.clear();
            if end {
                break;
            }
        }
    });
    let (mut to_client, mut from_client) = socket.split();
    let forward_tx = out_tx.clone();
    let forward = tokio::spawn(async move {
        while let Some(request) = to_client.next().await {
            forward_tx.send_value(&request);
        }
    });
    let (frames_tx, mut frames) = mpsc::channel(READ_AHEAD);
    let reader = tokio::spawn(read_frames(input, frames_tx));
    let mut in_flight = JoinSet::new();
    loop {
        // A handler that finished is reaped at once, whether or not more input comes.
        let frame = tokio::select! {
            biased;
            Some(done) = in_flight.join_next(), if !in_flight.is_empty() => {
                if let Err(e) = done {
                    tracing::error!("a request handler did not finish: {e}");
                }
                in_flight_figure.send_replace(in_flight.len());
                continue;
            }
            frame = frames.recv() => frame.unwrap_or(Frame::End),
        };
        let body = match frame {
            Frame::End => break,
            Frame::Bad(reason) => {
                out_tx.send_value(&error_reply(Value::Null, -32700, &reason));
                continue;
            }
            Frame::Body(body) => body,
        };
        let value: Value = match serde_json::from_slice(&body) {
            Ok(v) => v,
            Err(e) => {
                out_tx.send_value(&error_reply(
                    Value::Null,
                    -32700,
                    &format!("parse error: {e}"),
                ));
                continue;
            }
        };
        if !value.is_object() {
            out_tx.send_value(&error_reply(
                Value::Null,
                -32600,
                "invalid request: a JSON-RPC message is an object (batches are not supported)",
            ));
            continue;
        }
        let id = value.get("id").cloned().unwrap_or(Value::Null);
        if value.get("method").is_none() {
            // A reply to one of the server's own requests goes to what waits for it.
            let Some(value) = out_tx.asked.deliver(value) else {
                continue;
            };
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
                out_tx.send_value(&error_reply(id, -32600, &format!("invalid request: {e}")));
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
            // A handler that panics still answers its request, and takes nothing else down.
            match AssertUnwindSafe(future).catch_unwind().await {
                Ok(Ok(Some(response))) => reply_tx.send_value(&response),
                Ok(_) => {}
                Err(_) => {
                    tracing::error!("a handler failed; its request is answered with an error");
                    if !id.is_null() {
                        reply_tx.send_value(&error_reply(id, -32603, "internal error"));
                    }
                }
            }
        };
        if is_notification {
            // In arrival order: a didChange must not overtake the one before it.
            finish.await;
        } else {
            in_flight.spawn(finish);
            in_flight_figure.send_replace(in_flight.len());
        }
        if is_exit {
            break;
        }
    }
    reader.abort();
    on_end();
    // Requests still running end once their turns see the cancellation; give them a bound.
    let _ = tokio::time::timeout(std::time::Duration::from_secs(5), async {
        while in_flight.join_next().await.is_some() {}
    })
    .await;
    in_flight.abort_all();
    forward.abort();
    // Nobody is left to answer the server's own requests: those waiting see the end.
    out_tx.asked.lock().clear();
    let _ = out_tx.queue.send(Queued::End);
    let _ = tokio::time::timeout(std::time::Duration::from_secs(2), writer).await;
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]

    use super::*;
    use tokio::io::{AsyncWriteExt, DuplexStream};
    use tower_lsp_server::jsonrpc::Result;
    use tower_lsp_server::ls_types::{InitializeParams, InitializeResult};

    async fn frames_of(bytes: &[u8]) -> Vec<(Option<String>, Frame)> {
        let mut input = BufReader::new(bytes);
        let mut out = Vec::new();
        loop {
            let read = read_frame(&mut input).await;
            let end = read.1 == Frame::End;
            out.push(read);
            if end {
                return out;
            }
        }
    }

    fn body(text: &str) -> Frame {
        Frame::Body(text.as_bytes().to_vec())
    }

    // Verifies: PROTO-22
    #[tokio::test]
    async fn a_byte_that_is_not_utf8_before_a_frame_is_skipped_and_the_frame_is_read() {
        let frames =
            frames_of(b"\xffContent-Length: 2\r\n\r\n{}\xfe\xff\r\nContent-Length: 2\r\n\r\n[]")
                .await;
        assert_eq!(frames.len(), 3, "{frames:?}");
        assert!(
            frames[0]
                .0
                .as_deref()
                .is_some_and(|s| s.contains("skipped")),
            "{frames:?}"
        );
        assert_eq!(frames[0].1, body("{}"));
        assert!(frames[1].0.is_some(), "{frames:?}");
        assert_eq!(frames[1].1, body("[]"));
        assert_eq!(frames[2], (None, Frame::End));
    }

    // Verifies: PROTO-22
    #[tokio::test]
    async fn a_frame_glued_to_garbage_resynchronises_at_its_content_length() {
        // Garbage glued after a body, a long garbage line, a header in another case, and a block
        // of garbage with no header at all.
        let mut bytes = b"Content-Length: 2\r\n\r\n{}garbage content-LENGTH: 2\r\n\r\n[]".to_vec();
        bytes.extend(std::iter::repeat_n(b'x', 3 * MAX_LINE));
        bytes.extend_from_slice(b"Content-Length: 4\r\nContent-Type: x\r\n\r\nnull");
        bytes.extend_from_slice(b"\r\nno header here\r\n\r\nContent-Length: 1\r\n\r\n1");
        bytes.extend_from_slice(b"Content-Length: 99 in garbage, Content-Length: 1\r\n\r\n3");
        let frames = frames_of(&bytes).await;
        let got: Vec<&Frame> = frames.iter().map(|(_, f)| f).collect();
        assert_eq!(
            got,
            vec![
                &body("{}"),
                &body("[]"),
                &body("null"),
                &Frame::Bad("14 bytes that are not a frame header were skipped".into()),
                &body("1"),
                &body("3"),
                &Frame::End
            ],
            "{frames:?}"
        );
        assert_eq!(frames[0].0, None);
        assert!(frames[1].0.is_some() && frames[2].0.is_some(), "{frames:?}");
    }

    // Verifies: PROTO-2
    #[tokio::test]
    async fn a_header_block_without_a_usable_length_is_bad_and_the_next_frame_reads() {
        let frames = frames_of(
            b"Content-Length: many\r\n\r\nContent-Type: x\r\n\r\nContent-Length: 1\r\n\r\n2",
        )
        .await;
        let got: Vec<&Frame> = frames.iter().map(|(_, f)| f).collect();
        assert!(
            matches!(got[0], Frame::Bad(_)) && matches!(got[1], Frame::Bad(_)),
            "{got:?}"
        );
        assert_eq!(got[2], &body("2"));
    }

    struct Quiet;

    impl LanguageServer for Quiet {
        async fn initialize(&self, _: InitializeParams) -> Result<InitializeResult> {
            Ok(InitializeResult::default())
        }

        async fn shutdown(&self) -> Result<()> {
            Ok(())
        }
    }

    impl Quiet {
        #[allow(clippy::panic, clippy::unused_async)]
        async fn boom(&self, _: Value) -> Result<Value> {
            panic!("a handler that fails")
        }
    }

    // Verifies: PROTO-22
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn a_handler_that_panics_answers_its_request_and_the_server_keeps_answering() {
        let (mut client_out, server_in) = tokio::io::duplex(64 * 1024);
        let (server_out, client_in) = tokio::io::duplex(64 * 1024);
        let mut client_in = BufReader::new(client_in);
        let (service, socket) = LspService::build(|_| Quiet)
            .custom_method("test/boom", Quiet::boom)
            .finish();
        let server = tokio::spawn(serve(
            server_in,
            server_out,
            outbox(),
            service,
            socket,
            || {},
        ));
        let init = json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {"capabilities": {}}});
        send(&mut client_out, &init).await;
        assert!(receive(&mut client_in).await.get("result").is_some());
        for id in [1, 2] {
            send(
                &mut client_out,
                &json!({"jsonrpc": "2.0", "id": id, "method": "test/boom", "params": {}}),
            )
            .await;
            let reply = receive(&mut client_in).await;
            assert_eq!(reply["id"], json!(id), "{reply}");
            assert_eq!(reply["error"]["code"], json!(-32603), "{reply}");
        }
        send(
            &mut client_out,
            &json!({"jsonrpc": "2.0", "id": 3, "method": "shutdown"}),
        )
        .await;
        assert_eq!(receive(&mut client_in).await["id"], json!(3));
        drop(client_out);
        server.await.unwrap();
    }

    // Verifies: WRITE-60
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn a_request_of_the_servers_own_is_written_whole_in_order_and_its_reply_answers_it() {
        let (mut client_out, server_in) = tokio::io::duplex(64 * 1024);
        let (server_out, client_in) = tokio::io::duplex(64 * 1024);
        let mut client_in = BufReader::new(client_in);
        let (service, socket) = LspService::new(|_| Quiet);
        let (asker, receiver) = outbox();
        let server = tokio::spawn(serve(
            server_in,
            server_out,
            (asker.clone(), receiver),
            service,
            socket,
            || {},
        ));
        // Many pieces and more than one write's batch, with characters JSON escapes.
        let text: String = (0..40_000)
            .map(|n| format!("line {n}: \"quoted\" \\ tab\there\n"))
            .collect();
        assert!(text.len() > 4 * WRITE_BATCH);
        asker.notify("test/before", &json!({"n": 1}));
        let first = asker
            .request("test/ask", &json!({"text": text}))
            .expect("serialised");
        asker.notify("test/after", &json!({"n": 2}));
        let before = receive(&mut client_in).await;
        assert_eq!(before["method"], "test/before", "{before}");
        let asked = receive(&mut client_in).await;
        assert_eq!(asked["method"], "test/ask");
        assert!(
            asked["params"]["text"] == text.as_str(),
            "the text arrives whole"
        );
        assert_eq!(asked["id"], "bravebot-1");
        let after = receive(&mut client_in).await;
        assert_eq!(after["method"], "test/after", "{after}");
        // A reply for another id does not answer it; the one with its id does.
        send(
            &mut client_out,
            &json!({"jsonrpc": "2.0", "id": "bravebot-9", "result": "not this"}),
        )
        .await;
        send(
            &mut client_out,
            &json!({"jsonrpc": "2.0", "id": asked["id"], "result": {"outcome": "yes"}}),
        )
        .await;
        assert_eq!(first.result().await, Some(json!({"outcome": "yes"})));
        // A request still waiting when the input ends is answered with nothing: refused.
        let second = asker.request("test/ask", &json!({})).expect("serialised");
        assert_eq!(receive(&mut client_in).await["id"], "bravebot-2");
        drop(client_out);
        server.await.unwrap();
        assert_eq!(second.result().await, None);
    }

    async fn send(to: &mut DuplexStream, message: &Value) {
        let body = message.to_string();
        let frame = format!("Content-Length: {}\r\n\r\n{body}", body.len());
        to.write_all(frame.as_bytes()).await.unwrap();
    }

    async fn receive(from: &mut BufReader<DuplexStream>) -> Value {
        match read_frame(from).await {
            (None, Frame::Body(body)) => serde_json::from_slice(&body).unwrap(),
            other => panic!("not a frame: {other:?}"),
        }
    }

    // Verifies: PROTO-22
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn a_hundred_thousand_finished_requests_leave_nothing_in_flight() {
        let (mut client_out, server_in) = tokio::io::duplex(64 * 1024);
        let (server_out, client_in) = tokio::io::duplex(64 * 1024);
        let mut client_in = BufReader::new(client_in);
        let (service, socket) = LspService::new(|_| Quiet);
        let (figure, mut watched) = watch::channel(0usize);
        let server = tokio::spawn(async move {
            serve_counted(
                server_in,
                server_out,
                outbox(),
                service,
                socket,
                || {},
                &figure,
            )
            .await;
        });
        let init = json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {"capabilities": {}}});
        send(&mut client_out, &init).await;
        assert!(receive(&mut client_in).await.get("result").is_some());
        let mut most = 0;
        for id in 1..=100_000 {
            let request =
                json!({"jsonrpc": "2.0", "id": id, "method": "no/such/method", "params": {}});
            send(&mut client_out, &request).await;
            let reply = receive(&mut client_in).await;
            assert_eq!(reply["id"], json!(id));
            assert_eq!(reply["error"]["code"], json!(-32601), "{reply}");
            most = most.max(*watched.borrow());
        }
        // Every handler has answered: the set empties without more input.
        tokio::time::timeout(
            std::time::Duration::from_secs(20),
            watched.wait_for(|n| *n == 0),
        )
        .await
        .expect("the in-flight set emptied")
        .expect("the server is still running");
        assert!(most < 100, "the in-flight set held {most} requests at once");
        drop(client_out);
        server.await.unwrap();
    }
}
