//! JSON-RPC over a language server's stdio, the way helix's transport does it: one task writes,
//! one reads, one copies standard error into the log, and one watches the process.
//!
//! - Requests made before `initialize` has been answered wait in the writer until
//!   [`Connection::ready`] releases them, in the order they were made.
//! - Every request has a deadline; a request past it is withdrawn with `$/cancelRequest`.
//! - The end of the server's output fails every request still waiting, and every later one.
//! - The server's own requests are answered here: progress tokens are accepted, configuration is
//!   answered with nothing, and `workspace/applyEdit` is always refused, since nothing a server
//!   says may change a file.
//! - The child is killed if its handle is dropped, and its whole process group is killed when the
//!   connection is (a TypeScript server starts `tsserver` processes of its own).

use std::collections::{HashMap, HashSet};
use std::sync::atomic::{AtomicI64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt, AsyncRead, AsyncReadExt, AsyncWriteExt, BufReader};
use tokio::process::Child;
use tokio::sync::{mpsc, oneshot, watch};

/// Largest message read from a server; a bigger one ends the connection.
const MAX_MESSAGE: usize = 64 * 1024 * 1024;
/// Longest line of a server's standard error copied into the log.
const MAX_LOG_LINE: usize = 2000;

/// Why a request got no result. None of these carries a server's own words.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum RpcError {
    /// The server's output ended (it exited or closed it) before it answered.
    Exited,
    /// No answer within the deadline; the request was withdrawn.
    TimedOut(Duration),
    /// The server answered with a JSON-RPC error of this code. Its message is not kept.
    Code(i64),
}

/// What the server did since it started, as far as settling goes.
#[derive(Debug)]
pub struct Activity {
    /// Work-done progress tokens begun and not yet ended.
    pub active: HashSet<String>,
    /// Whether any progress ever began.
    pub began_any: bool,
    /// When the server last sent anything.
    pub last_message: Instant,
    /// rust-analyzer's `experimental/serverStatus`, when it sends one: whether it is quiescent.
    pub quiescent: Option<bool>,
}

/// How the process ended, in our words.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Exit(pub String);

enum Outgoing {
    /// Written at once: `initialize`, `initialized`, answers to the server's requests.
    Now(Value),
    /// Held until [`Outgoing::Ready`].
    Queued(Value),
    /// `initialize` completed: write what was held, and from now on everything at once.
    Ready,
}

type Waiters = HashMap<i64, oneshot::Sender<Result<Value, RpcError>>>;

struct Pending {
    waiters: Waiters,
    /// Set when the output ended: no request will ever be answered.
    closed: bool,
}

/// One running server, spoken to over its stdio.
pub struct Connection {
    label: String,
    pid: u32,
    outgoing: mpsc::UnboundedSender<Outgoing>,
    pending: Arc<Mutex<Pending>>,
    next_id: AtomicI64,
    activity: Arc<Mutex<Activity>>,
    /// Bumped on every message from the server, so a waiter can await the next one.
    activity_tick: watch::Receiver<u64>,
    exit: watch::Receiver<Option<Exit>>,
    kill: Mutex<Option<oneshot::Sender<()>>>,
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}

impl Connection {
    /// Takes over a child started with piped stdio. `label` names the server in the log.
    pub fn new(label: String, mut child: Child) -> Result<Connection, String> {
        let pid = child
            .id()
            .ok_or("the process ended before it could be watched")?;
        let (Some(stdin), Some(stdout), Some(stderr)) =
            (child.stdin.take(), child.stdout.take(), child.stderr.take())
        else {
            return Err("the process was started without pipes".into());
        };
        let (out_tx, out_rx) = mpsc::unbounded_channel();
        let pending = Arc::new(Mutex::new(Pending {
            waiters: HashMap::new(),
            closed: false,
        }));
        let activity = Arc::new(Mutex::new(Activity {
            active: HashSet::new(),
            began_any: false,
            last_message: Instant::now(),
            quiescent: None,
        }));
        let (tick_tx, tick_rx) = watch::channel(0u64);
        let (exit_tx, exit_rx) = watch::channel(None);
        let (kill_tx, kill_rx) = oneshot::channel();
        tokio::spawn(write_loop(stdin, out_rx, label.clone()));
        tokio::spawn(read_loop(
            stdout,
            out_tx.clone(),
            pending.clone(),
            activity.clone(),
            tick_tx,
            label.clone(),
        ));
        tokio::spawn(log_stderr(stderr, label.clone()));
        tokio::spawn(watch_process(child, kill_rx, exit_tx, label.clone()));
        Ok(Connection {
            label,
            pid,
            outgoing: out_tx,
            pending,
            next_id: AtomicI64::new(1),
            activity,
            activity_tick: tick_rx,
            exit: exit_rx,
            kill: Mutex::new(Some(kill_tx)),
        })
    }

    pub fn pid(&self) -> u32 {
        self.pid
    }

    /// How the process ended, if it has.
    pub fn exited(&self) -> Option<Exit> {
        self.exit.borrow().clone()
    }

    /// Whether the server's output ended: nothing more will be answered.
    pub fn closed(&self) -> bool {
        lock(&self.pending).closed
    }

    /// Waits until the process has ended, at most `within`. Returns whether it did.
    pub async fn wait_exit(&self, within: Duration) -> bool {
        let mut exit = self.exit.clone();
        tokio::time::timeout(within, exit.wait_for(Option::is_some))
            .await
            .is_ok_and(|r| r.is_ok())
    }

    /// A request, written at once (`initialize`, `shutdown`) or after `initialize` completed.
    pub async fn request(
        &self,
        method: &str,
        params: Value,
        timeout: Duration,
        urgent: bool,
    ) -> Result<Value, RpcError> {
        let id = self.next_id.fetch_add(1, Ordering::Relaxed);
        let (tx, rx) = oneshot::channel();
        {
            let mut pending = lock(&self.pending);
            if pending.closed {
                return Err(RpcError::Exited);
            }
            pending.waiters.insert(id, tx);
        }
        let message = json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params});
        let sent = self.outgoing.send(if urgent {
            Outgoing::Now(message)
        } else {
            Outgoing::Queued(message)
        });
        if sent.is_err() {
            lock(&self.pending).waiters.remove(&id);
            return Err(RpcError::Exited);
        }
        match tokio::time::timeout(timeout, rx).await {
            Ok(Ok(answer)) => answer,
            Ok(Err(_)) => Err(RpcError::Exited),
            Err(_) => {
                lock(&self.pending).waiters.remove(&id);
                self.notify("$/cancelRequest", json!({"id": id}));
                Err(RpcError::TimedOut(timeout))
            }
        }
    }

    /// A notification, held like a request until `initialize` completed.
    pub fn notify(&self, method: &str, params: Value) {
        let _ = self.outgoing.send(Outgoing::Queued(
            json!({"jsonrpc": "2.0", "method": method, "params": params}),
        ));
    }

    /// A notification written at once (`initialized`, `exit`).
    pub fn notify_now(&self, method: &str, params: Value) {
        let _ = self.outgoing.send(Outgoing::Now(
            json!({"jsonrpc": "2.0", "method": method, "params": params}),
        ));
    }

    /// `initialize` completed: what waited is written, in order.
    pub fn ready(&self) {
        let _ = self.outgoing.send(Outgoing::Ready);
    }

    /// Reads the activity record under its lock.
    pub fn activity<T>(&self, f: impl FnOnce(&Activity) -> T) -> T {
        f(&lock(&self.activity))
    }

    /// A receiver that changes whenever the server sends anything.
    pub fn activity_tick(&self) -> watch::Receiver<u64> {
        self.activity_tick.clone()
    }

    /// Kills the server and everything in its process group, now.
    pub fn kill(&self) {
        if let Some(kill) = lock(&self.kill).take() {
            let _ = kill.send(());
        }
        crate::process::stop_group(self.pid);
        tracing::debug!("{}: killed", self.label);
    }
}

impl Drop for Connection {
    fn drop(&mut self) {
        // Whatever else happened, a dropped connection leaves no process behind: the leader and
        // every process it started in its group. Once the leader has been reaped its number may
        // be reused, so the group is signalled only while it is still ours; `kill` (which a
        // polite shutdown ends with, right after the exit) covers what it left.
        if self.exited().is_none() {
            crate::process::stop_group(self.pid);
        }
        if let Some(kill) = lock(&self.kill).take() {
            let _ = kill.send(());
        }
    }
}

async fn write_loop(
    mut stdin: tokio::process::ChildStdin,
    mut messages: mpsc::UnboundedReceiver<Outgoing>,
    label: String,
) {
    let mut held: Vec<Value> = Vec::new();
    let mut ready = false;
    while let Some(next) = messages.recv().await {
        let batch = match next {
            Outgoing::Now(m) => vec![m],
            Outgoing::Queued(m) if ready => vec![m],
            Outgoing::Queued(m) => {
                held.push(m);
                continue;
            }
            Outgoing::Ready => {
                ready = true;
                std::mem::take(&mut held)
            }
        };
        for message in batch {
            let body = message.to_string();
            let frame = format!("Content-Length: {}\r\n\r\n{body}", body.len());
            if stdin.write_all(frame.as_bytes()).await.is_err() || stdin.flush().await.is_err() {
                tracing::debug!("{label}: its input closed; nothing more is written");
                return;
            }
        }
    }
}

/// Reads one framed message; `None` at the end of the output or on a frame we cannot read.
async fn read_message<R: AsyncRead + Unpin>(input: &mut BufReader<R>) -> Option<Value> {
    loop {
        let mut length: Option<usize> = None;
        loop {
            let mut line = String::new();
            if input.read_line(&mut line).await.ok()? == 0 {
                return None;
            }
            let line = line.trim_end_matches(['\r', '\n']);
            if line.is_empty() {
                if length.is_some() {
                    break;
                }
                continue;
            }
            if let Some((name, value)) = line.split_once(':')
                && name.trim().eq_ignore_ascii_case("content-length")
            {
                length = value.trim().parse().ok();
            }
        }
        let length = length.filter(|l| *l <= MAX_MESSAGE)?;
        let mut body = vec![0; length];
        input.read_exact(&mut body).await.ok()?;
        match serde_json::from_slice(&body) {
            Ok(v) => return Some(v),
            // A frame that is not JSON is skipped; the next may be.
            Err(_) => continue,
        }
    }
}

async fn read_loop(
    stdout: tokio::process::ChildStdout,
    outgoing: mpsc::UnboundedSender<Outgoing>,
    pending: Arc<Mutex<Pending>>,
    activity: Arc<Mutex<Activity>>,
    tick: watch::Sender<u64>,
    label: String,
) {
    let mut input = BufReader::new(stdout);
    while let Some(message) = read_message(&mut input).await {
        let method = message.get("method").and_then(Value::as_str);
        {
            let mut a = lock(&activity);
            a.last_message = Instant::now();
            if method == Some("$/progress") {
                let token = message
                    .pointer("/params/token")
                    .map(Value::to_string)
                    .unwrap_or_default();
                match message
                    .pointer("/params/value/kind")
                    .and_then(Value::as_str)
                {
                    Some("begin") => {
                        a.began_any = true;
                        a.active.insert(token);
                    }
                    Some("end") => {
                        a.active.remove(&token);
                    }
                    _ => {}
                }
            } else if method == Some("experimental/serverStatus") {
                a.quiescent = message
                    .pointer("/params/quiescent")
                    .and_then(Value::as_bool);
            }
        }
        tick.send_modify(|t| *t = t.wrapping_add(1));
        match (method, message.get("id")) {
            (None, Some(id)) => {
                let Some(id) = id.as_i64() else { continue };
                let waiter = lock(&pending).waiters.remove(&id);
                if let Some(waiter) = waiter {
                    let answer = match message.get("error") {
                        Some(e) => Err(RpcError::Code(
                            e.get("code").and_then(Value::as_i64).unwrap_or(0),
                        )),
                        None => Ok(message.get("result").cloned().unwrap_or(Value::Null)),
                    };
                    let _ = waiter.send(answer);
                }
            }
            (Some(method), Some(id)) => {
                let reply = answer_server_request(method, &message);
                let mut frame = json!({"jsonrpc": "2.0", "id": id});
                match reply {
                    Ok(result) => frame["result"] = result,
                    Err(code) => {
                        frame["error"] =
                            json!({"code": code, "message": "not supported by bravebot"});
                    }
                }
                let _ = outgoing.send(Outgoing::Now(frame));
            }
            _ => {}
        }
    }
    // The end of the output fails everything waiting, and everything asked from now on.
    let waiters = {
        let mut p = lock(&pending);
        p.closed = true;
        std::mem::take(&mut p.waiters)
    };
    tracing::debug!(
        "{label}: its output ended; {} requests failed",
        waiters.len()
    );
    for (_, waiter) in waiters {
        let _ = waiter.send(Err(RpcError::Exited));
    }
    tick.send_modify(|t| *t = t.wrapping_add(1));
}

/// Our answer to a request the server makes of us.
fn answer_server_request(method: &str, message: &Value) -> Result<Value, i64> {
    match method {
        "window/workDoneProgress/create"
        | "client/registerCapability"
        | "client/unregisterCapability"
        | "window/showMessageRequest"
        | "workspace/codeLens/refresh"
        | "workspace/semanticTokens/refresh"
        | "workspace/inlayHint/refresh"
        | "workspace/diagnostic/refresh" => Ok(Value::Null),
        "workspace/configuration" => {
            let items = message
                .pointer("/params/items")
                .and_then(Value::as_array)
                .map_or(0, Vec::len);
            Ok(Value::Array(vec![Value::Null; items]))
        }
        "workspace/workspaceFolders" => Ok(Value::Null),
        // Nothing a server says changes a file: the lsp tool's operations are all reads.
        "workspace/applyEdit" => Ok(
            json!({"applied": false, "failureReason": "bravebot applies no edit a language server proposes"}),
        ),
        _ => Err(-32601),
    }
}

async fn log_stderr(stderr: tokio::process::ChildStderr, label: String) {
    let mut lines = BufReader::new(stderr);
    let mut line = Vec::new();
    loop {
        line.clear();
        match lines.read_until(b'\n', &mut line).await {
            Ok(0) | Err(_) => break,
            Ok(_) => {
                let text = String::from_utf8_lossy(&line);
                let text: String = text.trim_end().chars().take(MAX_LOG_LINE).collect();
                tracing::debug!(target: "bravebot::language", "{label} stderr: {text}");
            }
        }
    }
}

async fn watch_process(
    mut child: Child,
    kill: oneshot::Receiver<()>,
    exit: watch::Sender<Option<Exit>>,
    label: String,
) {
    let status = tokio::select! {
        status = child.wait() => status,
        _ = kill => {
            let _ = child.start_kill();
            child.wait().await
        }
    };
    let said = match status {
        Ok(s) => match (s.code(), std::os::unix::process::ExitStatusExt::signal(&s)) {
            (Some(code), _) => format!("exit code {code}"),
            (None, Some(signal)) => format!("signal {signal}"),
            (None, None) => "an unknown status".to_string(),
        },
        Err(e) => format!("a status that could not be read ({e})"),
    };
    tracing::debug!("{label}: ended with {said}");
    let _ = exit.send(Some(Exit(said)));
}
