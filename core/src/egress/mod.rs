//! The one way out of the process.
//!
//! Every outbound HTTP request bravebot makes for a conversation goes through [`Egress::send`] or
//! [`Egress::send_streaming`]. The HTTP client is private to this module, so no other code can
//! open a second path out (EGRESS-1). What the module enforces, whoever calls it:
//!
//! - only `http` and `https` reach the network; any other scheme is refused before a connection;
//! - redirects are followed by hand, each hop put to a [`HopGate`], and a hop that leaves https
//!   for plain http is refused whatever the gate says ([`hop_allowed`]);
//! - connecting, waiting for the response to start and waiting between body chunks are timed
//!   apart ([`SendOptions`]), so a slow answer is not mistaken for a dead connection;
//! - a body is capped and a capped body says so; a body that stops partway is an error;
//! - only "not now" is retried: a request that never got an answer, and 429 or 503.
//!
//! Certificates (`SSL_CERT_FILE`, `SSL_CERT_DIR`) and the proxy (`ALL_PROXY`, `HTTPS_PROXY`,
//! `HTTP_PROXY`, `NO_PROXY`) are read from the environment once and set on the client explicitly,
//! so what is in force is decided here rather than by a library default; the certificates are
//! read at the first request that makes a TLS connection, not at start-up. [`Egress::describe`]
//! states both for `bravebot doctor`, never with a credential.
//!
//! [`Egress::fetch_page`] is the request `fetch_url` makes: a GET with no body and no credential,
//! its redirect hops put to the tool's own gate.

mod fetch;
mod proxy;
mod redirect;
#[cfg(test)]
pub(crate) mod test_server;
mod trust;

use std::fmt;
use std::sync::{Arc, Mutex, OnceLock, PoisonError};
use std::time::Duration;

use bytes::Bytes;
use reqwest::header::{HeaderMap, HeaderName};
use url::{Host, Url};

use crate::secret::Secret;

pub use fetch::{FETCH_BODY_CAP, FETCH_MAX_REDIRECTS, without_credentials};
pub use proxy::{ProxyFact, UnusableProxy};
pub use redirect::{HopGate, RedirectRefusal, hop_allowed, same_authority};
pub use trust::{CertificateOrigin, CertificateSource};

use proxy::ProxyRoute;
use trust::Trust;

const USER_AGENT: &str = concat!("bravebot/", env!("CARGO_PKG_VERSION"));

/// The HTTP method. Only the two bravebot sends exist, so nothing else can be asked for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Method {
    Get,
    Post,
}

impl Method {
    fn wire(self) -> reqwest::Method {
        match self {
            Method::Get => reqwest::Method::GET,
            Method::Post => reqwest::Method::POST,
        }
    }
}

/// A request header's value: plain text, or a credential that is zeroed when dropped, hidden
/// from `Debug`, marked sensitive on the wire and dropped on a hop to another authority.
#[derive(Clone, Debug)]
pub enum HeaderValue {
    Plain(String),
    Secret(Secret),
}

impl From<&str> for HeaderValue {
    fn from(value: &str) -> HeaderValue {
        HeaderValue::Plain(value.to_owned())
    }
}

impl From<String> for HeaderValue {
    fn from(value: String) -> HeaderValue {
        HeaderValue::Plain(value)
    }
}

impl From<Secret> for HeaderValue {
    fn from(value: Secret) -> HeaderValue {
        HeaderValue::Secret(value)
    }
}

/// One outbound request.
#[derive(Clone)]
pub struct HttpRequest {
    pub method: Method,
    pub url: String,
    pub headers: Vec<(String, HeaderValue)>,
    pub body: Option<Vec<u8>>,
}

impl HttpRequest {
    pub fn get(url: impl Into<String>) -> HttpRequest {
        HttpRequest {
            method: Method::Get,
            url: url.into(),
            headers: Vec::new(),
            body: None,
        }
    }

    pub fn post(url: impl Into<String>, body: Vec<u8>) -> HttpRequest {
        HttpRequest {
            method: Method::Post,
            url: url.into(),
            headers: Vec::new(),
            body: Some(body),
        }
    }

    pub fn header(mut self, name: impl Into<String>, value: impl Into<HeaderValue>) -> HttpRequest {
        self.headers.push((name.into(), value.into()));
        self
    }
}

impl fmt::Debug for HttpRequest {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        // The body is conversation content; its size is all a log needs.
        f.debug_struct("HttpRequest")
            .field("method", &self.method)
            .field("url", &self.url)
            .field("headers", &self.headers)
            .field("body_bytes", &self.body.as_ref().map(Vec::len))
            .finish()
    }
}

/// How long each phase of a request may take, and what else bounds it.
#[derive(Clone, Debug)]
pub struct SendOptions {
    /// Establishing the connection, TLS included.
    pub connect: Duration,
    /// From the request being sent to the response headers. `None` waits as long as it takes.
    pub first_byte: Option<Duration>,
    /// Between one body chunk and the next. `None` waits as long as it takes.
    pub idle: Option<Duration>,
    /// The most body bytes kept; past it the body is cut and marked truncated.
    pub body_cap: usize,
    pub max_redirects: usize,
    /// Attempts per hop, the first included.
    pub max_attempts: u32,
    /// The first retry waits this long; each later one twice the one before, up to `backoff_cap`.
    pub backoff_base: Duration,
    /// The longest wait between attempts, also the most of a `Retry-After` that is honoured.
    pub backoff_cap: Duration,
    pub hop_gate: HopGate,
}

impl Default for SendOptions {
    fn default() -> SendOptions {
        SendOptions {
            connect: Duration::from_secs(10),
            first_byte: Some(Duration::from_secs(30)),
            idle: Some(Duration::from_secs(30)),
            body_cap: 10 * 1024 * 1024,
            max_redirects: 5,
            max_attempts: 3,
            backoff_base: Duration::from_millis(500),
            backoff_cap: Duration::from_secs(30),
            hop_gate: HopGate::SameAuthority,
        }
    }
}

impl SendOptions {
    /// Options for a call to a model at `url`.
    ///
    /// A model on this machine reached without a proxy is waited on for as long as it takes: a
    /// local model can go quiet for minutes while it writes a tool call, and the person can stop
    /// it. Anywhere else the phases stay bounded, if generously.
    pub fn for_model(url: &str, egress: &Egress) -> SendOptions {
        let mut options = SendOptions {
            first_byte: Some(Duration::from_secs(300)),
            idle: Some(Duration::from_secs(300)),
            body_cap: 64 * 1024 * 1024,
            ..SendOptions::default()
        };
        if let Ok(parsed) = Url::parse(url)
            && is_loopback(&parsed)
            && egress.route.proxy_for(&parsed).is_none()
        {
            options.first_byte = None;
            options.idle = None;
        }
        options
    }
}

fn is_loopback(url: &Url) -> bool {
    match url.host() {
        Some(Host::Domain(name)) => {
            let name = name.to_ascii_lowercase();
            name == "localhost" || name.ends_with(".localhost")
        }
        Some(Host::Ipv4(ip)) => ip.is_loopback(),
        Some(Host::Ipv6(ip)) => {
            ip.is_loopback() || ip.to_ipv4_mapped().is_some_and(|v4| v4.is_loopback())
        }
        None => false,
    }
}

/// The phase of a request a timeout fired in.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Phase {
    Connect,
    FirstByte,
    Idle,
}

impl fmt::Display for Phase {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Phase::Connect => "connecting",
            Phase::FirstByte => "waiting for the response to start",
            Phase::Idle => "waiting for the rest of the body",
        })
    }
}

/// Why a request failed. A status code is not a failure: the response is returned with it.
///
/// Errors name the origin (scheme, host and port) of the request as the caller wrote it, never a
/// path, query or credential, and never anything a server sent.
#[derive(Debug, thiserror::Error)]
pub enum EgressError {
    #[error("refused a url with the {scheme} scheme: only http and https reach the network")]
    Scheme { scheme: String },
    #[error("invalid url: {reason}")]
    InvalidUrl { reason: String },
    #[error("invalid request header {name}")]
    InvalidHeader { name: String },
    #[error("could not reach {origin}: {detail}")]
    Connect { origin: String, detail: String },
    #[error("{origin} timed out {phase}")]
    Timeout { origin: String, phase: Phase },
    #[error("request to {origin} stopped at a redirect: {refusal}")]
    Redirect {
        origin: String,
        refusal: RedirectRefusal,
    },
    #[error("the response from {origin} stopped after {received} bytes: {detail}")]
    Incomplete {
        origin: String,
        received: usize,
        detail: String,
    },
    #[error("tls with {origin} failed: {detail}")]
    Tls { origin: String, detail: String },
    #[error("the http client could not be set up: {0}")]
    Setup(String),
}

impl EgressError {
    /// Whether asking again later could help.
    pub fn retryable(&self) -> bool {
        matches!(
            self,
            EgressError::Connect { .. }
                | EgressError::Timeout { .. }
                | EgressError::Incomplete { .. }
        )
    }

    /// The request never got an answer, so sending it again cannot repeat anything the server
    /// acted on as far as we know. Only these are retried inside [`Egress`].
    fn unanswered(&self) -> bool {
        matches!(
            self,
            EgressError::Connect { .. }
                | EgressError::Timeout {
                    phase: Phase::Connect,
                    ..
                }
        )
    }
}

/// A complete response.
#[derive(Clone, Debug)]
pub struct HttpResponse {
    pub status: u16,
    /// Names in lower case, in the order received.
    pub headers: Vec<(String, String)>,
    pub body: Vec<u8>,
    /// The body was longer than the cap and was cut there.
    pub truncated: bool,
}

impl HttpResponse {
    pub fn header(&self, name: &str) -> Option<&str> {
        find_header(&self.headers, name)
    }
}

fn find_header<'a>(headers: &'a [(String, String)], name: &str) -> Option<&'a str> {
    headers
        .iter()
        .find(|(k, _)| k.eq_ignore_ascii_case(name))
        .map(|(_, v)| v.as_str())
}

/// A response whose body is read a chunk at a time, under the idle timeout and the cap.
pub struct StreamingResponse {
    status: u16,
    headers: Vec<(String, String)>,
    body: Option<reqwest::Response>,
    idle: Option<Duration>,
    cap: usize,
    received: usize,
    truncated: bool,
    origin: String,
}

impl fmt::Debug for StreamingResponse {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("StreamingResponse")
            .field("status", &self.status)
            .field("received", &self.received)
            .field("truncated", &self.truncated)
            .finish()
    }
}

impl StreamingResponse {
    pub fn status(&self) -> u16 {
        self.status
    }

    pub fn headers(&self) -> &[(String, String)] {
        &self.headers
    }

    pub fn header(&self, name: &str) -> Option<&str> {
        find_header(&self.headers, name)
    }

    /// Body bytes handed out so far.
    pub fn received(&self) -> usize {
        self.received
    }

    /// The body reached the cap and the rest was not read.
    pub fn truncated(&self) -> bool {
        self.truncated
    }

    /// The next piece of the body, `None` at its end or at the cap.
    pub async fn next_chunk(&mut self) -> Result<Option<Bytes>, EgressError> {
        loop {
            let Some(body) = self.body.as_mut() else {
                return Ok(None);
            };
            let read = match self.idle {
                Some(limit) => match tokio::time::timeout(limit, body.chunk()).await {
                    Ok(read) => read,
                    Err(_) => {
                        self.body = None;
                        if self.received == self.cap {
                            // At the cap we were only looking for whether more follows; a
                            // silence there cannot tell, so the body is reported as cut.
                            self.truncated = true;
                            return Ok(None);
                        }
                        return Err(EgressError::Timeout {
                            origin: self.origin.clone(),
                            phase: Phase::Idle,
                        });
                    }
                },
                None => body.chunk().await,
            };
            match read {
                Ok(Some(chunk)) if chunk.is_empty() => continue,
                Ok(Some(mut chunk)) => {
                    let room = self.cap - self.received;
                    if room == 0 {
                        self.truncated = true;
                        self.body = None;
                        return Ok(None);
                    }
                    if chunk.len() > room {
                        chunk.truncate(room);
                        self.truncated = true;
                        self.body = None;
                    }
                    self.received += chunk.len();
                    return Ok(Some(chunk));
                }
                Ok(None) => {
                    self.body = None;
                    return Ok(None);
                }
                Err(err) => {
                    self.body = None;
                    if self.received == self.cap {
                        self.truncated = true;
                        return Ok(None);
                    }
                    return Err(EgressError::Incomplete {
                        origin: self.origin.clone(),
                        received: self.received,
                        detail: error_chain(&err.without_url()),
                    });
                }
            }
        }
    }
}

/// What is in force, as plain facts for `bravebot doctor`. Holds no credential.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct EgressReport {
    pub certificates: CertificateSource,
    pub proxy: Option<ProxyFact>,
    /// Proxies named in the environment that are not the route.
    pub unusable_proxies: Vec<UnusableProxy>,
    /// The `NO_PROXY` entries.
    pub no_proxy: Vec<String>,
}

impl EgressReport {
    /// One fact a line.
    pub fn lines(&self) -> Vec<String> {
        let mut lines = vec![format!("certificates: {}", self.certificates)];
        match &self.proxy {
            Some(proxy) => lines.push(format!(
                "proxy: {} {}:{} (from {}), {}",
                proxy.scheme,
                proxy.host,
                proxy.port,
                proxy.variable,
                if proxy.has_credential {
                    "with a credential"
                } else {
                    "no credential"
                }
            )),
            None => lines.push("proxy: none, connecting directly".to_owned()),
        }
        for unusable in &self.unusable_proxies {
            lines.push(format!(
                "proxy not used: {} was set, but {}",
                unusable.variable, unusable.reason
            ));
        }
        if !self.no_proxy.is_empty() {
            lines.push(format!("no proxy for: {}", self.no_proxy.join(", ")));
        }
        lines
    }
}

impl fmt::Display for EgressReport {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.lines().join("\n"))
    }
}

/// The process's way out. Build one with [`Egress::from_env`] and share it.
pub struct Egress {
    /// `SSL_CERT_FILE` and `SSL_CERT_DIR` as the environment named them.
    certificate_env: [Option<String>; 2],
    /// The certificates they name, read when the first request needs them (an https request, a
    /// request through an https proxy, or `describe`) rather than before `initialize` is answered.
    roots: OnceLock<Roots>,
    route: Arc<ProxyRoute>,
    /// What is in force, but for the certificates (those are in `roots`).
    report: EgressReport,
    /// One client per connect timeout asked for (reqwest sets that per client) and per
    /// [`Reuse`]. A handful of values are ever used, and each client keeps its own pool.
    clients: Mutex<Vec<(Duration, Reuse, reqwest::Client)>>,
}

/// The certificate authorities in force, once read.
struct Roots {
    source: CertificateSource,
    /// Empty when the built-in authorities are in force, and when nothing is trusted.
    certificates: Result<Vec<reqwest::Certificate>, String>,
}

impl fmt::Debug for Egress {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Egress")
            .field("report", &self.report)
            .finish_non_exhaustive()
    }
}

impl Egress {
    /// Reads the proxy through `env` (in the binary, `std::env::var`), and which certificates
    /// are named; the certificates themselves are read at the first request that needs them.
    pub fn from_env(env: &dyn Fn(&str) -> Option<String>) -> Result<Egress, EgressError> {
        // reqwest is built without a default crypto provider so that the choice is made here.
        // Installing fails only when one is already installed, which is as good.
        let _ = rustls::crypto::ring::default_provider().install_default();

        let route = ProxyRoute::from_env(env);
        let report = EgressReport {
            certificates: CertificateSource::BuiltIn,
            proxy: route.proxy.as_ref().map(|p| p.fact.clone()),
            unusable_proxies: route.unusable.clone(),
            no_proxy: route.bypass.entries().to_vec(),
        };
        let egress = Egress {
            certificate_env: [env("SSL_CERT_FILE"), env("SSL_CERT_DIR")],
            roots: OnceLock::new(),
            route: Arc::new(route),
            report,
            clients: Mutex::new(Vec::new()),
        };
        // Building a client that needs no certificates now turns a configuration the client
        // library rejects into an error at startup rather than at the first request.
        egress.client_for(SendOptions::default().connect, Reuse::Fresh)?;
        Ok(egress)
    }

    /// The certificates in force, read on the first call.
    fn roots(&self) -> &Roots {
        self.roots.get_or_init(|| {
            let [file, dir] = &self.certificate_env;
            let trust = Trust::from_env(&|name| match name {
                "SSL_CERT_FILE" => file.clone(),
                "SSL_CERT_DIR" => dir.clone(),
                _ => None,
            });
            let certificates = trust
                .certificates
                .iter()
                .map(|der| {
                    reqwest::Certificate::from_der(der.as_ref()).map_err(|err| error_chain(&err))
                })
                .collect();
            Roots {
                source: trust.source,
                certificates,
            }
        })
    }

    /// Whether a request to `url` makes a TLS connection: to the server, or to its proxy.
    fn needs_certificates(&self, url: &Url) -> bool {
        url.scheme() == "https"
            || self
                .route
                .proxy_for(url)
                .is_some_and(|proxy| proxy.url().starts_with("https:"))
    }

    /// What is in force. Reads the certificates if no request has needed them yet.
    pub fn describe(&self) -> EgressReport {
        EgressReport {
            certificates: self.roots().source.clone(),
            ..self.report.clone()
        }
    }

    /// Sends `req` and reads the whole body, up to `opts.body_cap`.
    pub async fn send(
        &self,
        req: HttpRequest,
        opts: &SendOptions,
    ) -> Result<HttpResponse, EgressError> {
        let mut response = self.send_streaming(req, opts).await?;
        let mut body = Vec::new();
        while let Some(chunk) = response.next_chunk().await? {
            body.extend_from_slice(&chunk);
        }
        Ok(HttpResponse {
            status: response.status,
            truncated: response.truncated,
            headers: response.headers,
            body,
        })
    }

    /// Sends `req` and returns once the final response's headers are in; the body is read with
    /// [`StreamingResponse::next_chunk`].
    pub async fn send_streaming(
        &self,
        req: HttpRequest,
        opts: &SendOptions,
    ) -> Result<StreamingResponse, EgressError> {
        let original = parse_request_url(&req.url)?;
        let origin = origin_of(&original);
        let (mut headers, secret_names) = header_map(&req.headers)?;

        let mut method = req.method;
        let mut body = req.body.map(Bytes::from);
        let mut current = original.clone();
        let mut hops = 0;
        loop {
            let hop = Hop {
                method,
                url: &current,
                headers: &headers,
                body: body.as_ref(),
            };
            let client = self.client_for(opts.connect, self.reuse_for(&current))?;
            let response = self.answer(&client, &hop, opts, &origin).await?;
            let status = response.status().as_u16();
            let location = response.headers().get(reqwest::header::LOCATION).cloned();
            let (true, Some(location)) = (is_redirect(status), location) else {
                return Ok(StreamingResponse {
                    status,
                    headers: response_headers(response.headers()),
                    body: Some(response),
                    idle: opts.idle,
                    cap: opts.body_cap,
                    received: 0,
                    truncated: false,
                    origin,
                });
            };
            drop(response);
            let refused = |refusal| EgressError::Redirect {
                origin: origin.clone(),
                refusal,
            };
            if hops >= opts.max_redirects {
                return Err(refused(RedirectRefusal::TooMany(opts.max_redirects)));
            }
            let next = location
                .to_str()
                .ok()
                .and_then(|text| current.join(text).ok())
                .ok_or_else(|| refused(RedirectRefusal::Unreadable))?;
            let gate = |to: &Url| opts.hop_gate.permits(&original, to);
            hop_allowed(&current, &next, &gate).map_err(refused)?;
            tracing::debug!(%origin, hop = hops + 1, status, "following a redirect");

            if !same_authority(&current, &next) {
                // A credential was meant for the authority it was written for.
                for name in &secret_names {
                    headers.remove(name);
                }
            }
            if matches!(status, 301..=303) && method == Method::Post {
                // What browsers do, and what servers sending these codes expect: the form was
                // taken, fetch the result. 307 and 308 exist to keep method and body.
                method = Method::Get;
                body = None;
                headers.remove(reqwest::header::CONTENT_TYPE);
                headers.remove(reqwest::header::CONTENT_LENGTH);
            }
            current = next;
            hops += 1;
        }
    }

    /// One hop, retried while it gets no answer or a "not now".
    async fn answer(
        &self,
        client: &reqwest::Client,
        hop: &Hop<'_>,
        opts: &SendOptions,
        origin: &str,
    ) -> Result<reqwest::Response, EgressError> {
        let mut attempt: u32 = 1;
        loop {
            let last = attempt >= opts.max_attempts;
            match self.attempt(client, hop, opts, origin).await {
                Ok(response) => {
                    let status = response.status().as_u16();
                    if last || !matches!(status, 429 | 503) {
                        return Ok(response);
                    }
                    let asked = retry_after(response.headers());
                    drop(response);
                    let wait = backoff(opts, attempt, asked);
                    tracing::debug!(%origin, attempt, status, ?wait, "retrying after a not-now");
                    tokio::time::sleep(wait).await;
                }
                Err(err) if !last && err.unanswered() => {
                    let wait = backoff(opts, attempt, None);
                    tracing::debug!(%origin, attempt, error = %err, ?wait, "retrying");
                    tokio::time::sleep(wait).await;
                }
                Err(err) => return Err(err),
            }
            attempt += 1;
        }
    }

    async fn attempt(
        &self,
        client: &reqwest::Client,
        hop: &Hop<'_>,
        opts: &SendOptions,
        origin: &str,
    ) -> Result<reqwest::Response, EgressError> {
        let mut builder = client
            .request(hop.method.wire(), hop.url.clone())
            .headers(hop.headers.clone());
        if let Some(body) = hop.body {
            builder = builder.body(body.clone());
        }
        let request = builder.build().map_err(|err| EgressError::InvalidUrl {
            reason: error_chain(&err.without_url()),
        })?;
        let pending = client.execute(request);
        let result = match opts.first_byte {
            // The first-byte limit starts when the request does, so the connect budget is added
            // to it: a connection that took most of its allowance does not eat the server's.
            Some(limit) => match tokio::time::timeout(opts.connect + limit, pending).await {
                Ok(result) => result,
                Err(_) => {
                    return Err(EgressError::Timeout {
                        origin: origin.to_owned(),
                        phase: Phase::FirstByte,
                    });
                }
            },
            None => pending.await,
        };
        result.map_err(|err| classify(err, origin))
    }

    fn client_for(&self, connect: Duration, reuse: Reuse) -> Result<reqwest::Client, EgressError> {
        let mut clients = self.clients.lock().unwrap_or_else(PoisonError::into_inner);
        if let Some((_, _, client)) = clients
            .iter()
            .find(|(timeout, kept, _)| *timeout == connect && *kept == reuse)
        {
            return Ok(client.clone());
        }
        let client = self.build_client(connect, reuse)?;
        clients.push((connect, reuse, client.clone()));
        Ok(client)
    }

    fn reuse_for(&self, url: &Url) -> Reuse {
        match (url.scheme() == "https", self.needs_certificates(url)) {
            (true, _) => Reuse::Kept,
            (false, true) => Reuse::FreshThroughTls,
            (false, false) => Reuse::Fresh,
        }
    }

    fn build_client(
        &self,
        connect: Duration,
        reuse: Reuse,
    ) -> Result<reqwest::Client, EgressError> {
        let mut builder = reqwest::Client::builder();
        if reuse != Reuse::Kept {
            builder = builder.pool_max_idle_per_host(0);
        }
        // A client that makes no TLS connection is given no certificates, so that reading them
        // waits for a request that does.
        let (built_in, roots): (bool, &[reqwest::Certificate]) = if reuse == Reuse::Fresh {
            (false, &[])
        } else {
            let roots = self.roots();
            let certificates = roots
                .certificates
                .as_ref()
                .map_err(|err| EgressError::Setup(err.clone()))?;
            (roots.source == CertificateSource::BuiltIn, certificates)
        };
        let mut builder = builder
            // No proxy from reqwest's own reading of the environment: ours is the one in force.
            .no_proxy()
            .redirect(reqwest::redirect::Policy::none())
            .connect_timeout(connect)
            .user_agent(USER_AGENT)
            .tls_built_in_root_certs(built_in);
        for cert in roots {
            builder = builder.add_root_certificate(cert.clone());
        }
        if self.route.proxy.is_some() {
            let route = Arc::clone(&self.route);
            builder = builder.proxy(reqwest::Proxy::custom(move |url| {
                route.proxy_for(url).map(|proxy| proxy.url().to_owned())
            }));
        }
        builder
            .build()
            .map_err(|err| EgressError::Setup(error_chain(&err)))
    }
}

/// Whether a connection is kept for the next request to the same origin.
///
/// Plain http gets a fresh connection each time. A server that writes a response's headers and
/// its body in two writes without `TCP_NODELAY` (Python's `http.server`, cpp-httplib as used by
/// llama.cpp's server) holds the body until the headers are acknowledged, and on a kept-alive
/// connection this side's kernel delays that acknowledgement by 40 ms, hoping to ride on the
/// next request; a new connection acknowledges at once. Measured against such a server, a round
/// went from 46 ms to 0.5 ms, and a new connection on loopback costs about 0.1 ms (the
/// `bench_stall` binary). https keeps its connections: a handshake costs more than the stall
/// risks, and the servers it reaches set `TCP_NODELAY`. reqwest offers no hook to the socket
/// that would let `TCP_QUICKACK` be set before each read instead.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Reuse {
    /// https: kept alive.
    Kept,
    /// Plain http through an https proxy: fresh, and with certificates for the proxy.
    FreshThroughTls,
    /// Plain http: fresh, and with no certificates at all.
    Fresh,
}

/// What one hop sends.
struct Hop<'a> {
    method: Method,
    url: &'a Url,
    headers: &'a HeaderMap,
    body: Option<&'a Bytes>,
}

fn parse_request_url(text: &str) -> Result<Url, EgressError> {
    let url = Url::parse(text).map_err(|err| EgressError::InvalidUrl {
        reason: err.to_string(),
    })?;
    if !matches!(url.scheme(), "http" | "https") {
        return Err(EgressError::Scheme {
            scheme: url.scheme().to_owned(),
        });
    }
    if url.host().is_none() {
        return Err(EgressError::InvalidUrl {
            reason: "no host".to_owned(),
        });
    }
    Ok(url)
}

/// `scheme://host:port`, what errors name: no path, query or credential.
fn origin_of(url: &Url) -> String {
    let host = url.host_str().unwrap_or("");
    match url.port_or_known_default() {
        Some(port) => format!("{}://{host}:{port}", url.scheme()),
        None => format!("{}://{host}", url.scheme()),
    }
}

fn is_redirect(status: u16) -> bool {
    matches!(status, 301 | 302 | 303 | 307 | 308)
}

fn header_map(
    headers: &[(String, HeaderValue)],
) -> Result<(HeaderMap, Vec<HeaderName>), EgressError> {
    let mut map = HeaderMap::new();
    let mut secret_names = Vec::new();
    for (name, value) in headers {
        let invalid = || EgressError::InvalidHeader { name: name.clone() };
        let header_name = HeaderName::from_bytes(name.as_bytes()).map_err(|_| invalid())?;
        let wire = match value {
            HeaderValue::Plain(text) => {
                reqwest::header::HeaderValue::from_str(text).map_err(|_| invalid())?
            }
            HeaderValue::Secret(secret) => {
                let mut wire = reqwest::header::HeaderValue::from_str(secret.expose())
                    .map_err(|_| invalid())?;
                wire.set_sensitive(true);
                secret_names.push(header_name.clone());
                wire
            }
        };
        map.append(header_name, wire);
    }
    Ok((map, secret_names))
}

fn response_headers(map: &HeaderMap) -> Vec<(String, String)> {
    map.iter()
        .map(|(name, value)| {
            (
                name.as_str().to_owned(),
                String::from_utf8_lossy(value.as_bytes()).into_owned(),
            )
        })
        .collect()
}

/// A numeric `Retry-After`, in seconds. The date form is rare from the endpoints we talk to and
/// is treated as absent.
fn retry_after(headers: &HeaderMap) -> Option<Duration> {
    let text = headers.get(reqwest::header::RETRY_AFTER)?.to_str().ok()?;
    text.trim().parse::<u64>().ok().map(Duration::from_secs)
}

fn backoff(opts: &SendOptions, attempt: u32, asked: Option<Duration>) -> Duration {
    let doubling = 1u32 << attempt.saturating_sub(1).min(16);
    let mut wait = opts.backoff_base.saturating_mul(doubling);
    if let Some(asked) = asked {
        wait = wait.max(asked);
    }
    wait.min(opts.backoff_cap)
}

/// Maps a failure before the response headers to what it means for the caller.
fn classify(err: reqwest::Error, origin: &str) -> EgressError {
    // reqwest puts the URL in its message; that URL may be a redirect target a server chose.
    let err = err.without_url();
    let origin = origin.to_owned();
    if let Some(detail) = tls_failure(&err) {
        return EgressError::Tls { origin, detail };
    }
    if err.is_connect() && err.is_timeout() {
        return EgressError::Timeout {
            origin,
            phase: Phase::Connect,
        };
    }
    // Anything else before the headers (refused, reset, closed without a word) means the
    // request got no answer.
    EgressError::Connect {
        origin,
        detail: error_chain(&err),
    }
}

/// The TLS error in a chain, if the failure was one. rustls errors arrive wrapped in one or more
/// `io::Error`s, whose `source` skips the error they wrap, so those are opened as well.
fn tls_failure(err: &(dyn std::error::Error + 'static)) -> Option<String> {
    let mut pending = vec![err];
    while let Some(err) = pending.pop() {
        if let Some(tls) = err.downcast_ref::<rustls::Error>() {
            return Some(tls.to_string());
        }
        if let Some(inner) = err
            .downcast_ref::<std::io::Error>()
            .and_then(|io| io.get_ref())
        {
            pending.push(inner);
        }
        if let Some(source) = err.source() {
            pending.push(source);
        }
    }
    None
}

/// An error and its causes on one line, each said once.
fn error_chain(err: &(dyn std::error::Error + 'static)) -> String {
    let mut parts: Vec<String> = Vec::new();
    let mut current = Some(err);
    while let Some(err) = current {
        let text = err.to_string();
        if !parts.iter().any(|seen| seen.contains(&text)) {
            parts.push(text);
        }
        current = err.source();
    }
    parts.join(": ")
}

#[cfg(test)]
mod tests;
