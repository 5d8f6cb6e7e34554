//! Small HTTP/1.1 servers on 127.0.0.1 for the egress and model tests, answering from a script.

use std::collections::VecDeque;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};
use tokio_rustls::TlsAcceptor;

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
    /// Reads the request and resets the connection (a TCP RST) without a word. Plain TCP only.
    Reset,
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
    tls: bool,
    connections: Arc<AtomicUsize>,
    requests: Arc<Mutex<Vec<SeenRequest>>>,
    task: tokio::task::JoinHandle<()>,
}

impl TestServer {
    /// Starts a server answering connections from `answers` in turn; once they run out it answers
    /// 500, so a test that expected fewer requests sees an unexpected status.
    pub async fn start(answers: Vec<Answer>) -> TestServer {
        TestServer::launch(answers, None).await
    }

    /// The same over TLS: each connection is accepted with `acceptor` before it is answered.
    /// A handshake the client gives up on still uses up that connection's answer.
    pub async fn start_tls(answers: Vec<Answer>, acceptor: TlsAcceptor) -> TestServer {
        TestServer::launch(answers, Some(acceptor)).await
    }

    async fn launch(answers: Vec<Answer>, acceptor: Option<TlsAcceptor>) -> TestServer {
        let tls = acceptor.is_some();
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
                    let acceptor = acceptor.clone();
                    tokio::spawn(async move {
                        match (acceptor, answer) {
                            (_, Some(Answer::Reset)) => reset(stream, requests).await,
                            (None, answer) => serve(stream, answer, requests).await,
                            (Some(acceptor), answer) => {
                                if let Ok(stream) = acceptor.accept(stream).await {
                                    serve(stream, answer, requests).await;
                                }
                            }
                        }
                    });
                }
            }
        });
        TestServer {
            port,
            tls,
            connections,
            requests,
            task,
        }
    }

    pub fn port(&self) -> u16 {
        self.port
    }

    pub fn url(&self, path: &str) -> String {
        let scheme = if self.tls { "https" } else { "http" };
        format!("{scheme}://127.0.0.1:{}{path}", self.port)
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

async fn reset(mut stream: TcpStream, requests: Arc<Mutex<Vec<SeenRequest>>>) {
    if let Some(request) = read_request(&mut stream).await {
        requests.lock().unwrap().push(request);
    }
    // A zero linger makes the close an abortive one: the client reads a reset, not an end.
    let _ = stream.set_zero_linger();
    drop(stream);
}

async fn serve<S: AsyncRead + AsyncWrite + Unpin>(
    mut stream: S,
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
        Some(Answer::Close) | Some(Answer::Greet(_)) | Some(Answer::Reset) => {}
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

async fn read_request<S: AsyncRead + Unpin>(stream: &mut S) -> Option<SeenRequest> {
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

/// A certificate authority made for one test, and server certificates it signs.
pub(crate) struct TestAuthority {
    pem: String,
    params: rcgen::CertificateParams,
    key: rcgen::KeyPair,
}

impl TestAuthority {
    pub fn new(name: &str) -> TestAuthority {
        use rcgen::{BasicConstraints, CertificateParams, DnType, IsCa, KeyPair, KeyUsagePurpose};
        let key = KeyPair::generate().unwrap();
        let mut params = CertificateParams::new(Vec::<String>::new()).unwrap();
        params.distinguished_name.push(DnType::CommonName, name);
        params.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
        params.key_usages = vec![KeyUsagePurpose::KeyCertSign, KeyUsagePurpose::CrlSign];
        let pem = params.self_signed(&key).unwrap().pem();
        TestAuthority { pem, params, key }
    }

    /// The authority's certificate as PEM, what `SSL_CERT_FILE` names.
    pub fn pem(&self) -> &str {
        &self.pem
    }

    /// Writes the authority's certificate into `dir` and returns the file's path.
    pub fn write_bundle(&self, dir: &std::path::Path) -> String {
        let path = dir.join("test-authority.pem");
        std::fs::write(&path, self.pem()).unwrap();
        path.to_string_lossy().into_owned()
    }

    /// A TLS acceptor presenting a certificate for `127.0.0.1` and `localhost` this authority
    /// signed.
    pub fn acceptor(&self) -> TlsAcceptor {
        use rustls::pki_types::{PrivateKeyDer, PrivatePkcs8KeyDer};
        let key = rcgen::KeyPair::generate().unwrap();
        let params =
            rcgen::CertificateParams::new(vec!["127.0.0.1".to_owned(), "localhost".to_owned()])
                .unwrap();
        let issuer = rcgen::Issuer::from_params(&self.params, &self.key);
        let cert = params.signed_by(&key, &issuer).unwrap();
        let provider = Arc::new(rustls::crypto::ring::default_provider());
        let config = rustls::ServerConfig::builder_with_provider(provider)
            .with_safe_default_protocol_versions()
            .unwrap()
            .with_no_client_auth()
            .with_single_cert(
                vec![cert.der().clone()],
                PrivateKeyDer::Pkcs8(PrivatePkcs8KeyDer::from(key.serialize_der())),
            )
            .unwrap();
        TlsAcceptor::from(Arc::new(config))
    }
}
