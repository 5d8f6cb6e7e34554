//! A web page fetched for `fetch_url`: what is sent, and the limits it is held to.
//!
//! The request is a GET with no body and no credential. Userinfo in the URL is dropped before
//! anything is sent, since the HTTP client would otherwise turn it into an `Authorization` header:
//! `https://example.com@evil.test/` reaches `evil.test` and tells it nothing. The User-Agent is
//! the fixed one every request from this process carries. Which hops a redirect may take is the
//! caller's [`HopGate`]; leaving https and other schemes stay refused whatever it says.

use std::time::Duration;

use url::Url;

use super::{Egress, EgressError, HopGate, HttpRequest, HttpResponse, SendOptions};

/// The most body bytes a fetch keeps; past it the body is cut and the result says so.
pub const FETCH_BODY_CAP: usize = 10 * 1024 * 1024;

/// The most redirects a fetch follows.
pub const FETCH_MAX_REDIRECTS: usize = 5;

impl SendOptions {
    /// Options for a page fetched on the planner's behalf: every phase bounded, since nobody is
    /// waiting on a web page the way they wait on a local model, and the body capped.
    pub fn for_fetch(hop_gate: HopGate) -> SendOptions {
        SendOptions {
            connect: Duration::from_secs(10),
            first_byte: Some(Duration::from_secs(30)),
            idle: Some(Duration::from_secs(30)),
            body_cap: FETCH_BODY_CAP,
            max_redirects: FETCH_MAX_REDIRECTS,
            hop_gate,
            ..SendOptions::default()
        }
    }
}

/// `url` with its userinfo and fragment removed: what a fetch puts on the wire.
pub fn without_credentials(url: &Url) -> Url {
    let mut bare = url.clone();
    // Both fail only for URLs that cannot carry userinfo at all, which then has none to drop.
    let _ = bare.set_username("");
    let _ = bare.set_password(None);
    bare.set_fragment(None);
    bare
}

impl Egress {
    /// GETs `url` as `fetch_url` does: no body, no credential, the fixed User-Agent, each redirect
    /// hop put to `opts.hop_gate`. The body is read whole up to `opts.body_cap`.
    pub async fn fetch_page(
        &self,
        url: &Url,
        opts: &SendOptions,
    ) -> Result<HttpResponse, EgressError> {
        let request = HttpRequest::get(without_credentials(url).as_str()).header("Accept", "*/*");
        self.send(request, opts).await
    }
}

impl EgressError {
    /// The kind of failure in this program's own words, holding nothing a library, a server or a
    /// redirect wrote: a caller may put it where a server's string must not go. (A TLS library's
    /// message, for one, can quote the names a server's certificate claims.)
    pub fn kind(&self) -> String {
        match self {
            EgressError::Scheme { .. } => "only http and https URLs reach the network".to_owned(),
            EgressError::InvalidUrl { .. } => "the URL could not be used".to_owned(),
            EgressError::InvalidHeader { .. } => "a request header could not be sent".to_owned(),
            EgressError::Connect { .. } => "the host could not be reached".to_owned(),
            EgressError::Timeout { phase, .. } => format!("timed out {phase}"),
            EgressError::Redirect { refusal, .. } => format!("stopped at a redirect: {refusal}"),
            EgressError::Incomplete { received, .. } => {
                format!("the response stopped after {received} bytes")
            }
            EgressError::Tls { .. } => {
                "the TLS connection failed (for instance a certificate no trusted authority signed)"
                    .to_owned()
            }
            EgressError::Setup(_) => "the HTTP client could not be set up".to_owned(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    // Verifies: FETCH-7
    #[test]
    fn without_credentials_drops_userinfo_and_fragment_and_keeps_the_rest() {
        let url = Url::parse("https://example.com:pw@evil.test:8443/a/b?q=1#frag").unwrap();
        assert_eq!(
            without_credentials(&url).as_str(),
            "https://evil.test:8443/a/b?q=1"
        );
    }

    // Verifies: FETCH-5
    #[test]
    fn error_kinds_carry_no_detail() {
        let err = EgressError::Tls {
            origin: "https://a.test:443".into(),
            detail: "certificate is only valid for planted.example".into(),
        };
        assert!(!err.kind().contains("planted"));
        let err = EgressError::Connect {
            origin: "http://a.test:80".into(),
            detail: "server said planted".into(),
        };
        assert!(!err.kind().contains("planted"));
    }
}
