//! Small HTTP/1.1 servers on 127.0.0.1 for the egress and model tests, answering from a script.

use std::collections::VecDeque;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};

/// What the server does with one connection, in the order connections arrive.
pub(crate) enum Answer {
    /// Reads the request, writes these bytes and closes.
    Raw(Vec<u8>),
    /// Reads the request and closes without a word.
    Close,
    /// Reads the request, writes these bytes and then holds the connection open, silent.
    Stall(Vec<u8>),
    /// Writes these bytes as soon as the connection arrives, without reading, and closes.
    Greet(Vec<u8>),
}

/// One request as the server read it.
#[derive(Clone, Debug)]
pub(crate) struct SeenRequest {
    pub method: String,
    pub path: String,
    pub headers: Vec<(String, String)>,
    pub body: Vec<u8>,
}

impl SeenRequest {
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(k, _)| k.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    }

    pub fn json(&self) -> serde_json::Value {
        serde_json::from_slice(&self.body).unwrap()
    }
}

pub(crate) struct TestServer {
    port: u16,
    connections: Arc<AtomicUsize>,
    requests: Arc<Mutex<Vec<SeenRequest>>>,
    task: tokio::task::JoinHandle<()>,
}

impl TestServer {
    /// Starts a server answering connections from `answers` in turn; once they run out it answers
    /// 500, so a test that expected fewer requests sees an unexpected status.
    pub async fn start(answers: Vec<Answer>) -> TestServer {
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let port = listener.local_addr().unwrap().port();
        let connections = Arc::new(AtomicUsize::new(0));
        let requests = Arc::new(Mutex::new(Vec::new()));
        let answers = Arc::new(Mutex::new(VecDeque::from(answers)));
        let task = tokio::spawn({
            let connections = Arc::clone(&connections);
            let requests = Arc::clone(&requests);
            async move {
                loop {
                    let Ok((stream, _)) = listener.accept().await else {
                        return;
                    };
                    connections.fetch_add(1, Ordering::SeqCst);
                    let answer = answers.lock().unwrap().pop_front();
                    let requests = Arc::clone(&requests);
                    tokio::spawn(serve(stream, answer, requests));
                }
            }
        });
        TestServer {
            port,
            connections,
            requests,
            task,
        }
    }

    pub fn port(&self) -> u16 {
        self.port
    }

    pub fn url(&self, path: &str) -> String {
        format!("http://127.0.0.1:{}{path}", self.port)
    }

    pub fn connections(&self) -> usize {
        self.connections.load(Ordering::SeqCst)
    }

    pub fn requests(&self) -> Vec<SeenRequest> {
        self.requests.lock().unwrap().clone()
    }
}

impl Drop for TestServer {
    fn drop(&mut self) {
        self.task.abort();
    }
}

async fn serve(
    mut stream: TcpStream,
    answer: Option<Answer>,
    requests: Arc<Mutex<Vec<SeenRequest>>>,
) {
    if let Some(Answer::Greet(bytes)) = &answer {
        let _ = stream.write_all(bytes).await;
        let _ = stream.shutdown().await;
        return;
    }
    let Some(request) = read_request(&mut stream).await else {
        return;
    };
    requests.lock().unwrap().push(request);
    match answer {
        Some(Answer::Raw(bytes)) => {
            let _ = stream.write_all(&bytes).await;
            let _ = stream.shutdown().await;
        }
        Some(Answer::Close) | Some(Answer::Greet(_)) => {}
        Some(Answer::Stall(bytes)) => {
            let _ = stream.write_all(&bytes).await;
            let _ = stream.flush().await;
            // Held open until the client gives up and closes its end.
            let mut sink = [0u8; 64];
            while matches!(stream.read(&mut sink).await, Ok(n) if n > 0) {}
        }
        None => {
            let _ = stream
                .write_all(&response(500, &[], b"script exhausted"))
                .await;
        }
    }
}

async fn read_request(stream: &mut TcpStream) -> Option<SeenRequest> {
    let mut buf = Vec::new();
    let mut chunk = [0u8; 4096];
    let head_end = loop {
        if let Some(at) = buf.windows(4).position(|w| w == b"\r\n\r\n") {
            break at;
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
    let length: usize = headers
        .iter()
        .find(|(k, _)| k == "content-length")
        .and_then(|(_, v)| v.parse().ok())
        .unwrap_or(0);
    let mut body = buf[head_end + 4..].to_vec();
    while body.len() < length {
        let n = stream.read(&mut chunk).await.ok()?;
        if n == 0 {
            return None;
        }
        body.extend_from_slice(&chunk[..n]);
    }
    Some(SeenRequest {
        method,
        path,
        headers,
        body,
    })
}

/// A complete response with a length, closing the connection afterwards.
pub(crate) fn response(status: u16, headers: &[(&str, &str)], body: &[u8]) -> Vec<u8> {
    let mut out = format!("HTTP/1.1 {status} Status\r\n");
    for (name, value) in headers {
        out.push_str(&format!("{name}: {value}\r\n"));
    }
    out.push_str(&format!(
        "Content-Length: {}\r\nConnection: close\r\n\r\n",
        body.len()
    ));
    let mut bytes = out.into_bytes();
    bytes.extend_from_slice(body);
    bytes
}
