//! Tests of the way out against servers started on 127.0.0.1 inside each test.

use std::io::ErrorKind;
use std::sync::Arc;
use std::time::{Duration, Instant};

use super::test_server::{Answer, TestAuthority, TestServer, response};
use super::*;

fn egress() -> Egress {
    Egress::from_env(&|_| None).unwrap()
}

/// Options that keep a failing test from hanging and a retrying one from dawdling.
fn quick() -> SendOptions {
    SendOptions {
        connect: Duration::from_secs(5),
        first_byte: Some(Duration::from_secs(5)),
        idle: Some(Duration::from_secs(5)),
        backoff_base: Duration::from_millis(5),
        backoff_cap: Duration::from_millis(50),
        ..SendOptions::default()
    }
}

fn ok(body: &[u8]) -> Answer {
    Answer::Raw(response(200, &[], body))
}

fn redirect(status: u16, location: &str) -> Answer {
    Answer::Raw(response(status, &[("Location", location)], b""))
}

// Verifies: EGRESS-2, FETCH-7
#[tokio::test]
async fn egress_refuses_non_http_schemes() {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    listener.set_nonblocking(true).unwrap();
    let port = listener.local_addr().unwrap().port();
    let egress = egress();
    for url in [
        "file:///etc/passwd".to_owned(),
        format!("ftp://127.0.0.1:{port}/x"),
        format!("gopher://127.0.0.1:{port}/"),
        format!("ws://127.0.0.1:{port}/"),
    ] {
        let err = egress
            .send(HttpRequest::get(url.clone()), &quick())
            .await
            .unwrap_err();
        assert!(matches!(err, EgressError::Scheme { .. }), "{url}: {err}");
        assert!(!err.retryable());
    }
    // A connection the client made would be waiting in the backlog by now.
    let pending = listener.accept();
    assert!(
        matches!(&pending, Err(e) if e.kind() == ErrorKind::WouldBlock),
        "a connection was attempted: {pending:?}"
    );
}

// Verifies: EGRESS-4, FETCH-6
#[tokio::test]
async fn egress_cuts_a_body_at_the_cap_and_says_so() {
    let server = TestServer::start(vec![ok(&[b'x'; 100])]).await;
    let opts = SendOptions {
        body_cap: 10,
        ..quick()
    };
    let reply = egress()
        .send(HttpRequest::get(server.url("/")), &opts)
        .await
        .unwrap();
    assert_eq!(reply.status, 200);
    assert!(reply.truncated);
    assert_eq!(reply.body, vec![b'x'; 10]);
}

// Verifies: EGRESS-4
#[tokio::test]
async fn egress_body_exactly_at_the_cap_is_not_truncated() {
    let server = TestServer::start(vec![ok(&[b'y'; 10])]).await;
    let opts = SendOptions {
        body_cap: 10,
        ..quick()
    };
    let reply = egress()
        .send(HttpRequest::get(server.url("/")), &opts)
        .await
        .unwrap();
    assert!(!reply.truncated);
    assert_eq!(reply.body.len(), 10);
}

// Verifies: EGRESS-4
#[tokio::test]
async fn egress_reports_a_body_that_stops_partway_as_incomplete() {
    let mut cut = response(200, &[], &[b'z'; 100]);
    cut.truncate(cut.len() - 60);
    let server = TestServer::start(vec![Answer::Raw(cut)]).await;
    let err = egress()
        .send(HttpRequest::get(server.url("/")), &quick())
        .await
        .unwrap_err();
    let EgressError::Incomplete { received, .. } = err else {
        panic!("expected an incomplete body, got {err}");
    };
    assert_eq!(received, 40);
}

// Verifies: EGRESS-5, FETCH-10
#[tokio::test]
async fn egress_idle_timeout_fires_when_the_body_stalls() {
    let mut head = response(200, &[], &[b'a'; 100]);
    head.truncate(head.len() - 90);
    let server = TestServer::start(vec![Answer::Stall(head)]).await;
    let opts = SendOptions {
        idle: Some(Duration::from_millis(200)),
        ..quick()
    };
    let err = egress()
        .send(HttpRequest::get(server.url("/")), &opts)
        .await
        .unwrap_err();
    assert!(
        matches!(
            err,
            EgressError::Timeout {
                phase: Phase::Idle,
                ..
            }
        ),
        "{err}"
    );
}

// Verifies: EGRESS-5, FETCH-10
#[tokio::test]
async fn egress_first_byte_timeout_fires_when_no_response_starts() {
    let server = TestServer::start(vec![Answer::Stall(Vec::new())]).await;
    let opts = SendOptions {
        connect: Duration::from_millis(100),
        first_byte: Some(Duration::from_millis(200)),
        ..quick()
    };
    let err = egress()
        .send(HttpRequest::get(server.url("/")), &opts)
        .await
        .unwrap_err();
    assert!(
        matches!(
            err,
            EgressError::Timeout {
                phase: Phase::FirstByte,
                ..
            }
        ),
        "{err}"
    );
    // A request that may have been acted on is not sent twice.
    assert_eq!(server.connections(), 1);
}

// Verifies: EGRESS-6
#[tokio::test]
async fn egress_retries_a_connection_closed_without_an_answer() {
    let server = TestServer::start(vec![Answer::Close, ok(b"second time")]).await;
    let reply = egress()
        .send(HttpRequest::post(server.url("/"), b"{}".to_vec()), &quick())
        .await
        .unwrap();
    assert_eq!(reply.status, 200);
    assert_eq!(reply.body, b"second time");
    assert_eq!(server.connections(), 2);
}

// Verifies: EGRESS-6
#[tokio::test]
async fn egress_gives_up_on_a_refused_connection_after_the_attempts() {
    let port = {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        listener.local_addr().unwrap().port()
    };
    let err = egress()
        .send(
            HttpRequest::get(format!("http://127.0.0.1:{port}/path?key=hunter2")),
            &quick(),
        )
        .await
        .unwrap_err();
    assert!(matches!(err, EgressError::Connect { .. }), "{err}");
    assert!(err.retryable());
    let shown = err.to_string();
    assert!(
        shown.contains(&format!("http://127.0.0.1:{port}")),
        "{shown}"
    );
    assert!(
        !shown.contains("hunter2") && !shown.contains("/path"),
        "{shown}"
    );
}

// Verifies: EGRESS-6
#[tokio::test]
async fn egress_does_not_retry_a_500() {
    let server = TestServer::start(vec![
        Answer::Raw(response(500, &[], b"broken")),
        ok(b"never asked"),
    ])
    .await;
    let reply = egress()
        .send(HttpRequest::get(server.url("/")), &quick())
        .await
        .unwrap();
    assert_eq!(reply.status, 500);
    assert_eq!(server.connections(), 1);
}

// Verifies: EGRESS-6
#[tokio::test]
async fn egress_does_not_retry_a_400() {
    let server = TestServer::start(vec![
        Answer::Raw(response(400, &[], b"bad")),
        ok(b"never asked"),
    ])
    .await;
    let reply = egress()
        .send(HttpRequest::get(server.url("/")), &quick())
        .await
        .unwrap();
    assert_eq!(reply.status, 400);
    assert_eq!(server.connections(), 1);
}

// Verifies: EGRESS-6
#[tokio::test]
async fn egress_retries_a_429_then_succeeds() {
    let server = TestServer::start(vec![
        Answer::Raw(response(429, &[], b"slow down")),
        ok(b"fine"),
    ])
    .await;
    let reply = egress()
        .send(
            HttpRequest::post(server.url("/"), b"payload".to_vec()),
            &quick(),
        )
        .await
        .unwrap();
    assert_eq!(reply.status, 200);
    assert_eq!(server.connections(), 2);
    // The retry carries the same body.
    assert_eq!(server.requests()[1].body, b"payload");
}

// Verifies: EGRESS-6
#[tokio::test]
async fn egress_returns_the_last_503_when_attempts_run_out() {
    let busy = || Answer::Raw(response(503, &[], b"busy"));
    let server = TestServer::start(vec![busy(), busy(), busy(), ok(b"too late")]).await;
    let reply = egress()
        .send(HttpRequest::get(server.url("/")), &quick())
        .await
        .unwrap();
    assert_eq!(reply.status, 503);
    assert_eq!(reply.body, b"busy");
    assert_eq!(server.connections(), 3);
}

// Verifies: EGRESS-6
#[tokio::test]
async fn egress_honours_retry_after_only_up_to_the_cap() {
    let server = TestServer::start(vec![
        Answer::Raw(response(429, &[("Retry-After", "3600")], b"")),
        ok(b"fine"),
    ])
    .await;
    let started = Instant::now();
    let reply = egress()
        .send(HttpRequest::get(server.url("/")), &quick())
        .await
        .unwrap();
    assert_eq!(reply.status, 200);
    assert!(started.elapsed() < Duration::from_secs(5));
    let opts = SendOptions {
        backoff_base: Duration::from_millis(100),
        backoff_cap: Duration::from_secs(10),
        ..quick()
    };
    assert_eq!(
        backoff(&opts, 1, Some(Duration::from_secs(2))),
        Duration::from_secs(2)
    );
    assert_eq!(backoff(&opts, 3, None), Duration::from_millis(400));
    assert_eq!(backoff(&opts, 30, None), Duration::from_secs(10));
}

// Verifies: EGRESS-3
#[tokio::test]
async fn egress_follows_a_same_authority_redirect() {
    let server = TestServer::start(vec![redirect(302, "/next"), ok(b"arrived")]).await;
    let reply = egress()
        .send(HttpRequest::get(server.url("/start")), &quick())
        .await
        .unwrap();
    assert_eq!(reply.body, b"arrived");
    let paths: Vec<String> = server.requests().into_iter().map(|r| r.path).collect();
    assert_eq!(paths, ["/start", "/next"]);
}

// Verifies: EGRESS-3
#[tokio::test]
async fn egress_refuses_a_cross_host_redirect_without_naming_the_location() {
    let elsewhere = TestServer::start(vec![ok(b"should not be reached")]).await;
    let location = format!(
        "http://localhost:{}/planted-by-the-server",
        elsewhere.port()
    );
    let server = TestServer::start(vec![redirect(302, &location)]).await;
    let err = egress()
        .send(HttpRequest::get(server.url("/start")), &quick())
        .await
        .unwrap_err();
    assert!(
        matches!(
            err,
            EgressError::Redirect {
                refusal: RedirectRefusal::NotPermitted,
                ..
            }
        ),
        "{err}"
    );
    let shown = format!("{err} {err:?}");
    assert!(
        shown.contains(&format!("127.0.0.1:{}", server.port())),
        "{shown}"
    );
    assert!(!shown.contains("planted-by-the-server"), "{shown}");
    assert!(!shown.contains("localhost"), "{shown}");
    assert_eq!(elsewhere.connections(), 0);
}

// Verifies: EGRESS-3, FETCH-4
#[tokio::test]
async fn egress_refuses_a_redirect_to_another_port() {
    let elsewhere = TestServer::start(vec![ok(b"should not be reached")]).await;
    let server = TestServer::start(vec![redirect(307, &elsewhere.url("/"))]).await;
    let err = egress()
        .send(HttpRequest::get(server.url("/")), &quick())
        .await
        .unwrap_err();
    assert!(matches!(err, EgressError::Redirect { .. }), "{err}");
    assert_eq!(elsewhere.connections(), 0);
}

// Verifies: EGRESS-3
#[tokio::test]
async fn egress_drops_credentials_on_a_hop_the_gate_allows_to_another_host() {
    let elsewhere = TestServer::start(vec![ok(b"landed")]).await;
    let server = TestServer::start(vec![redirect(302, &elsewhere.url("/"))]).await;
    let opts = SendOptions {
        hop_gate: HopGate::Custom(Arc::new(|_| true)),
        ..quick()
    };
    let request = HttpRequest::get(server.url("/"))
        .header("Authorization", Secret::new("Bearer sk-secret".to_owned()))
        .header("X-Plain", "kept");
    let reply = egress().send(request, &opts).await.unwrap();
    assert_eq!(reply.body, b"landed");
    assert_eq!(
        server.requests()[0].header("authorization"),
        Some("Bearer sk-secret")
    );
    let landed = &elsewhere.requests()[0];
    assert_eq!(landed.header("authorization"), None);
    assert_eq!(landed.header("x-plain"), Some("kept"));
}

// Verifies: EGRESS-3
#[tokio::test]
async fn egress_turns_post_into_get_on_303_and_keeps_it_on_307() {
    let server = TestServer::start(vec![
        redirect(303, "/after-303"),
        ok(b"one"),
        redirect(307, "/after-307"),
        ok(b"two"),
    ])
    .await;
    let egress = egress();
    for _ in 0..2 {
        let request = HttpRequest::post(server.url("/form"), b"body".to_vec())
            .header("Content-Type", "text/plain");
        egress.send(request, &quick()).await.unwrap();
    }
    let seen = server.requests();
    assert_eq!(
        (seen[1].method.as_str(), seen[1].path.as_str()),
        ("GET", "/after-303")
    );
    assert!(seen[1].body.is_empty());
    assert_eq!(seen[1].header("content-type"), None);
    assert_eq!(
        (seen[3].method.as_str(), seen[3].path.as_str()),
        ("POST", "/after-307")
    );
    assert_eq!(seen[3].body, b"body");
}

// Verifies: EGRESS-3
#[tokio::test]
async fn egress_stops_after_too_many_redirects() {
    let answers = (0..4).map(|i| redirect(302, &format!("/hop{i}"))).collect();
    let server = TestServer::start(answers).await;
    let opts = SendOptions {
        max_redirects: 3,
        ..quick()
    };
    let err = egress()
        .send(HttpRequest::get(server.url("/")), &opts)
        .await
        .unwrap_err();
    assert!(
        matches!(
            err,
            EgressError::Redirect {
                refusal: RedirectRefusal::TooMany(3),
                ..
            }
        ),
        "{err}"
    );
    assert_eq!(server.connections(), 4);
}

#[tokio::test]
async fn egress_refuses_a_header_it_cannot_send_before_connecting() {
    let server = TestServer::start(vec![ok(b"")]).await;
    let request = HttpRequest::get(server.url("/")).header("X-Bad", "line\nbreak");
    let err = egress().send(request, &quick()).await.unwrap_err();
    assert!(
        matches!(err, EgressError::InvalidHeader { ref name } if name == "X-Bad"),
        "{err}"
    );
    assert_eq!(server.connections(), 0);
}

// Verifies: EGRESS-6
#[tokio::test]
async fn egress_reports_a_tls_failure_and_does_not_retry_it() {
    let server = TestServer::start(vec![
        Answer::Greet(response(200, &[], b"not tls")),
        Answer::Greet(response(200, &[], b"not tls")),
    ])
    .await;
    let url = format!("https://127.0.0.1:{}/", server.port());
    let err = egress()
        .send(HttpRequest::get(url), &quick())
        .await
        .unwrap_err();
    assert!(matches!(err, EgressError::Tls { .. }), "{err}");
    assert!(!err.retryable());
    assert_eq!(server.connections(), 1);
}

#[tokio::test]
async fn egress_streams_chunks_in_order() {
    let server = TestServer::start(vec![ok(b"streamed body")]).await;
    let mut reply = egress()
        .send_streaming(HttpRequest::get(server.url("/")), &quick())
        .await
        .unwrap();
    assert_eq!(reply.status(), 200);
    let mut body = Vec::new();
    while let Some(chunk) = reply.next_chunk().await.unwrap() {
        body.extend_from_slice(&chunk);
    }
    assert_eq!(body, b"streamed body");
    assert!(!reply.truncated());
}

// Verifies: EGRESS-7
#[test]
fn describe_says_nothing_is_trusted_for_an_empty_certificate_file() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("empty.pem");
    std::fs::write(&file, b"").unwrap();
    let path = file.to_string_lossy().into_owned();
    let egress = Egress::from_env(&|name| (name == "SSL_CERT_FILE").then(|| path.clone())).unwrap();
    let report = egress.describe();
    assert!(matches!(
        report.certificates,
        CertificateSource::NothingTrusted(_)
    ));
    let shown = report.to_string();
    assert!(
        shown.contains(&format!(
            "certificates: nothing trusted: {path} yielded no certificates"
        )),
        "{shown}"
    );
}

// Verifies: EGRESS-8
#[test]
fn describe_names_the_proxy_but_never_its_credential() {
    let egress = Egress::from_env(&|name| match name {
        "HTTPS_PROXY" => Some("http://alice:s3cr3t-pw@proxy.corp.test:3128".to_owned()),
        "NO_PROXY" => Some("localhost, .internal.test".to_owned()),
        _ => None,
    })
    .unwrap();
    let report = egress.describe();
    let shown = format!("{report}\n{report:?}\n{egress:?}");
    assert!(!shown.contains("s3cr3t-pw"), "{shown}");
    assert!(!shown.contains("alice"), "{shown}");
    let proxy = report.proxy.as_ref().unwrap();
    assert_eq!(
        (proxy.scheme.as_str(), proxy.host.as_str(), proxy.port),
        ("http", "proxy.corp.test", 3128)
    );
    assert!(proxy.has_credential);
    assert!(
        report
            .to_string()
            .contains("proxy: http proxy.corp.test:3128 (from HTTPS_PROXY), with a credential"),
        "{report}"
    );
    assert_eq!(report.no_proxy, ["localhost", ".internal.test"]);
}

// Verifies: EGRESS-8
#[test]
fn describe_names_an_unusable_proxy_as_not_used() {
    let egress = Egress::from_env(&|name| {
        (name == "all_proxy").then(|| "socks5://bob:pw123@socks.test:1080".to_owned())
    })
    .unwrap();
    let report = egress.describe();
    assert!(report.proxy.is_none());
    let shown = report.to_string();
    assert!(shown.contains("proxy: none"), "{shown}");
    assert!(
        shown.contains("proxy not used: all_proxy was set"),
        "{shown}"
    );
    assert!(!shown.contains("pw123"), "{shown}");
}

// Verifies: EGRESS-5
#[test]
fn model_options_wait_indefinitely_only_for_loopback_without_a_proxy() {
    let direct = egress();
    for url in [
        "http://127.0.0.1:11434/v1",
        "http://localhost:8080/v1",
        "http://[::1]:8080/v1",
    ] {
        let opts = SendOptions::for_model(url, &direct);
        assert_eq!((opts.first_byte, opts.idle), (None, None), "{url}");
    }
    let remote = SendOptions::for_model("https://api.example.test/v1", &direct);
    assert!(remote.first_byte.is_some() && remote.idle.is_some());

    let proxied = Egress::from_env(&|name| {
        (name == "HTTP_PROXY").then(|| "http://proxy.test:3128".to_owned())
    })
    .unwrap();
    let through_proxy = SendOptions::for_model("http://127.0.0.1:11434/v1", &proxied);
    assert!(through_proxy.first_byte.is_some() && through_proxy.idle.is_some());

    let bypassing = Egress::from_env(&|name| match name {
        "HTTP_PROXY" => Some("http://proxy.test:3128".to_owned()),
        "NO_PROXY" => Some("127.0.0.1".to_owned()),
        _ => None,
    })
    .unwrap();
    let bypassed = SendOptions::for_model("http://127.0.0.1:11434/v1", &bypassing);
    assert_eq!((bypassed.first_byte, bypassed.idle), (None, None));
}

// Verifies: EGRESS-8
#[tokio::test]
async fn egress_sends_through_the_proxy_unless_no_proxy_names_the_host() {
    // The "proxy" here is a plain server: a forward proxy receives the absolute URL.
    let proxy = TestServer::start(vec![ok(b"via proxy")]).await;
    let proxy_url = proxy.url("");
    let egress = Egress::from_env(&|name| match name {
        "HTTP_PROXY" => Some(proxy_url.clone()),
        "NO_PROXY" => Some("localhost".to_owned()),
        _ => None,
    })
    .unwrap();
    let reply = egress
        .send(HttpRequest::get("http://origin.test/page"), &quick())
        .await
        .unwrap();
    assert_eq!(reply.body, b"via proxy");
    assert_eq!(proxy.requests()[0].path, "http://origin.test/page");

    let direct = TestServer::start(vec![ok(b"direct")]).await;
    let reply = egress
        .send(
            HttpRequest::get(format!("http://localhost:{}/", direct.port())),
            &quick(),
        )
        .await
        .unwrap();
    assert_eq!(reply.body, b"direct");
    assert_eq!(proxy.connections(), 1);
}

/// An egress that trusts exactly the authority in `bundle`, as `SSL_CERT_FILE` names it.
fn egress_trusting(bundle: &str) -> Egress {
    let bundle = bundle.to_owned();
    Egress::from_env(&|name| (name == "SSL_CERT_FILE").then(|| bundle.clone())).unwrap()
}

// Verifies: FETCH-9
#[tokio::test]
async fn egress_reaches_https_through_the_authority_ssl_cert_file_names() {
    let authority = TestAuthority::new("bravebot test authority");
    let server = TestServer::start_tls(vec![ok(b"over tls")], authority.acceptor()).await;
    let dir = tempfile::tempdir().unwrap();
    let egress = egress_trusting(&authority.write_bundle(dir.path()));
    let reply = egress
        .send(HttpRequest::get(server.url("/secure")), &quick())
        .await
        .unwrap();
    assert_eq!(reply.status, 200);
    assert_eq!(reply.body, b"over tls");
    assert_eq!(server.requests()[0].path, "/secure");
}

// Verifies: FETCH-9
#[tokio::test]
async fn egress_refuses_https_from_an_authority_it_was_not_given() {
    let authority = TestAuthority::new("bravebot test authority");
    let server = TestServer::start_tls(
        vec![ok(b"not for you"), ok(b"not for you either")],
        authority.acceptor(),
    )
    .await;
    // The built-in authorities do not know a test's own.
    let err = egress()
        .send(HttpRequest::get(server.url("/")), &quick())
        .await
        .unwrap_err();
    assert!(matches!(err, EgressError::Tls { .. }), "{err}");
    // Nor does a bundle holding a different authority: what SSL_CERT_FILE names replaces the
    // built-in set, it does not add to whatever else might have signed.
    let other = TestAuthority::new("somebody else");
    let dir = tempfile::tempdir().unwrap();
    let err = egress_trusting(&other.write_bundle(dir.path()))
        .send(HttpRequest::get(server.url("/")), &quick())
        .await
        .unwrap_err();
    assert!(matches!(err, EgressError::Tls { .. }), "{err}");
    assert!(!err.retryable());
    // One handshake each: a certificate nobody trusts is not asked for again.
    assert_eq!(server.connections(), 2);
    assert!(
        server.requests().is_empty(),
        "no request was sent in the clear"
    );
}

// Verifies: FETCH-4
#[tokio::test]
async fn egress_refuses_a_redirect_from_https_to_http_even_when_the_gate_allows_it() {
    let authority = TestAuthority::new("bravebot test authority");
    let plain = TestServer::start(vec![ok(b"in the clear")]).await;
    let server = TestServer::start_tls(
        vec![redirect(302, &plain.url("/dropped-tls"))],
        authority.acceptor(),
    )
    .await;
    let dir = tempfile::tempdir().unwrap();
    let opts = SendOptions {
        hop_gate: HopGate::Custom(Arc::new(|_| true)),
        ..quick()
    };
    let request = HttpRequest::get(server.url("/start"))
        .header("Authorization", Secret::new("Bearer sk-secret".to_owned()));
    let err = egress_trusting(&authority.write_bundle(dir.path()))
        .send(request, &opts)
        .await
        .unwrap_err();
    assert!(
        matches!(
            err,
            EgressError::Redirect {
                refusal: RedirectRefusal::LeavesHttps,
                ..
            }
        ),
        "{err}"
    );
    assert!(!format!("{err} {err:?}").contains("dropped-tls"));
    assert_eq!(plain.connections(), 0);
}

// Verifies: FETCH-4
#[tokio::test]
async fn egress_follows_a_redirect_to_another_port_when_the_gate_allows_it() {
    let elsewhere = TestServer::start(vec![ok(b"the other port")]).await;
    let server = TestServer::start(vec![redirect(302, &elsewhere.url("/there"))]).await;
    let allowed_port = elsewhere.port();
    let opts = SendOptions {
        hop_gate: HopGate::Custom(Arc::new(move |to: &Url| to.port() == Some(allowed_port))),
        ..quick()
    };
    let reply = egress()
        .send(HttpRequest::get(server.url("/")), &opts)
        .await
        .unwrap();
    assert_eq!(reply.body, b"the other port");
    assert_eq!(elsewhere.requests()[0].path, "/there");
}

// Verifies: FETCH-10
#[tokio::test]
async fn egress_retries_a_connection_reset_before_the_answer() {
    let server = TestServer::start(vec![Answer::Reset, ok(b"after the reset")]).await;
    let reply = egress()
        .send(HttpRequest::get(server.url("/")), &quick())
        .await
        .unwrap();
    assert_eq!(reply.status, 200);
    assert_eq!(reply.body, b"after the reset");
    assert_eq!(server.connections(), 2);
}

// Verifies: FETCH-10
#[tokio::test]
async fn egress_does_not_retry_a_403() {
    let server = TestServer::start(vec![
        Answer::Raw(response(403, &[], b"forbidden")),
        ok(b"never asked"),
    ])
    .await;
    let reply = egress()
        .send(HttpRequest::get(server.url("/")), &quick())
        .await
        .unwrap();
    assert_eq!(reply.status, 403);
    assert_eq!(reply.body, b"forbidden");
    assert_eq!(server.connections(), 1);
}

// Verifies: FETCH-10
#[tokio::test]
async fn egress_a_slow_start_within_its_limit_is_not_cut_by_the_idle_limit() {
    // The first byte takes longer than the idle limit allows between chunks: the two are timed
    // apart, so this is a slow answer rather than a dead one.
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let port = listener.local_addr().unwrap().port();
    tokio::spawn(async move {
        use tokio::io::{AsyncReadExt, AsyncWriteExt};
        let (mut stream, _) = listener.accept().await.unwrap();
        let mut buf = [0u8; 1024];
        let _ = stream.read(&mut buf).await;
        tokio::time::sleep(Duration::from_millis(600)).await;
        let _ = stream
            .write_all(&response(200, &[], b"late but whole"))
            .await;
        let _ = stream.shutdown().await;
    });
    let opts = SendOptions {
        first_byte: Some(Duration::from_secs(5)),
        idle: Some(Duration::from_millis(200)),
        max_attempts: 1,
        ..quick()
    };
    let reply = egress()
        .send(HttpRequest::get(format!("http://127.0.0.1:{port}/")), &opts)
        .await
        .unwrap();
    assert_eq!(reply.body, b"late but whole");
}

/// A server that keeps every connection alive and answers each request on it with `ok`,
/// counting the connections it was given.
async fn keep_alive_server() -> (u16, Arc<std::sync::atomic::AtomicUsize>) {
    use std::sync::atomic::{AtomicUsize, Ordering};
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let port = listener.local_addr().unwrap().port();
    let connections = Arc::new(AtomicUsize::new(0));
    let counted = Arc::clone(&connections);
    tokio::spawn(async move {
        while let Ok((mut stream, _)) = listener.accept().await {
            counted.fetch_add(1, Ordering::SeqCst);
            tokio::spawn(async move {
                let mut seen = Vec::new();
                let mut buf = [0u8; 4096];
                while let Ok(n) = stream.read(&mut buf).await {
                    if n == 0 {
                        break;
                    }
                    seen.extend_from_slice(&buf[..n]);
                    while let Some(end) = seen.windows(4).position(|w| w == b"\r\n\r\n") {
                        seen.drain(..end + 4);
                        let answer = b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok";
                        if stream.write_all(answer).await.is_err() {
                            return;
                        }
                    }
                }
            });
        }
    });
    (port, connections)
}

// Verifies: EGRESS-9
#[tokio::test]
async fn plain_http_requests_each_get_a_fresh_connection() {
    let (port, connections) = keep_alive_server().await;
    let egress = egress();
    for _ in 0..3 {
        let reply = egress
            .send(
                HttpRequest::get(format!("http://127.0.0.1:{port}/")),
                &quick(),
            )
            .await
            .unwrap();
        assert_eq!(reply.body, b"ok");
    }
    assert_eq!(
        connections.load(std::sync::atomic::Ordering::SeqCst),
        3,
        "a kept-alive plain http connection was reused"
    );
}

// Verifies: EGRESS-10
#[tokio::test]
async fn certificates_are_read_at_the_first_request_that_needs_them() {
    let dir = tempfile::tempdir().unwrap();
    let bundle = dir.path().join("bundle.pem");
    let named = bundle.to_string_lossy().into_owned();
    let egress =
        Egress::from_env(&|name| (name == "SSL_CERT_FILE").then(|| named.clone())).unwrap();
    // A plain http request needs no certificate, so the bundle is still not read after it.
    let server = TestServer::start(vec![ok(b"plain")]).await;
    let reply = egress
        .send(HttpRequest::get(server.url("/")), &quick())
        .await
        .unwrap();
    assert_eq!(reply.body, b"plain");
    // Written only now, and found: nothing read it before.
    std::fs::write(&bundle, TestAuthority::new("later").pem()).unwrap();
    let CertificateSource::Environment(origins) = egress.describe().certificates else {
        panic!("the bundle was read too early: {}", egress.describe());
    };
    assert_eq!(origins[0].count, 1);
}
