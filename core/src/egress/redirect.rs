//! The decision whether a redirect hop may be followed, as a pure function of the two URLs.
//!
//! Redirects are followed by hand so that every hop is put to a gate before it is fetched: a host
//! that was allowed cannot hand the request, its headers and its body, to one that was not.

use std::fmt;
use std::sync::Arc;

use url::Url;

/// Which hops a request may follow, besides the rules no gate can relax.
#[derive(Clone, Default)]
pub enum HopGate {
    /// Only URLs with the same authority (host and port) as the original request.
    #[default]
    SameAuthority,
    /// A caller's own decision, e.g. the approval rules of `fetch_url`.
    Custom(Arc<dyn Fn(&Url) -> bool + Send + Sync>),
}

impl fmt::Debug for HopGate {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            HopGate::SameAuthority => f.write_str("SameAuthority"),
            HopGate::Custom(_) => f.write_str("Custom"),
        }
    }
}

impl HopGate {
    pub(crate) fn permits(&self, original: &Url, next: &Url) -> bool {
        match self {
            HopGate::SameAuthority => same_authority(original, next),
            HopGate::Custom(gate) => gate(next),
        }
    }
}

/// Why a redirect was not followed. It never carries the `Location` value: that string is the
/// server's, and it must not reach a result.
#[derive(Clone, Copy, Debug, PartialEq, Eq, thiserror::Error)]
pub enum RedirectRefusal {
    #[error("a redirect to a scheme other than http or https was refused")]
    Scheme,
    #[error("a redirect from https to plain http was refused")]
    LeavesHttps,
    #[error("a redirect to another host was refused")]
    NotPermitted,
    #[error("the redirect location could not be read")]
    Unreadable,
    #[error("more than {0} redirects")]
    TooMany(usize),
}

/// Whether a hop from `from` to `to` may be followed.
///
/// Leaving https is refused whatever the gate says: every hop re-sends the whole request, so a
/// chain that dropped TLS would put in the clear what the previous hop carried under it. A chain
/// that starts on http may pick TLS up; once it has, it cannot put it down again.
pub fn hop_allowed(
    from: &Url,
    to: &Url,
    gate: &dyn Fn(&Url) -> bool,
) -> Result<(), RedirectRefusal> {
    if !matches!(to.scheme(), "http" | "https") {
        return Err(RedirectRefusal::Scheme);
    }
    if from.scheme() == "https" && to.scheme() == "http" {
        return Err(RedirectRefusal::LeavesHttps);
    }
    if !gate(to) {
        return Err(RedirectRefusal::NotPermitted);
    }
    Ok(())
}

/// Same host and the same port, counting a scheme's default port as explicit. CONTRACT §4.9
/// defines a host as the URL's authority.
pub fn same_authority(a: &Url, b: &Url) -> bool {
    a.host() == b.host() && a.port_or_known_default() == b.port_or_known_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn url(text: &str) -> Url {
        Url::parse(text).unwrap()
    }

    fn anywhere(_: &Url) -> bool {
        true
    }

    // Verifies: EGRESS-3
    #[test]
    fn hop_from_https_to_http_is_refused_even_when_the_gate_allows_everything() {
        let refusal = hop_allowed(
            &url("https://example.com/a"),
            &url("http://example.com/b"),
            &anywhere,
        );
        assert_eq!(refusal, Err(RedirectRefusal::LeavesHttps));
    }

    // Verifies: EGRESS-3
    #[test]
    fn hop_from_http_to_https_is_allowed_and_https_to_https_too() {
        assert_eq!(
            hop_allowed(&url("http://a.test/"), &url("https://a.test/"), &anywhere),
            Ok(())
        );
        assert_eq!(
            hop_allowed(&url("https://a.test/"), &url("https://b.test/"), &anywhere),
            Ok(())
        );
    }

    // Verifies: EGRESS-2
    #[test]
    fn hop_to_a_non_http_scheme_is_refused() {
        for to in ["file:///etc/passwd", "ftp://a.test/x", "gopher://a.test/"] {
            assert_eq!(
                hop_allowed(&url("http://a.test/"), &url(to), &anywhere),
                Err(RedirectRefusal::Scheme),
                "{to}"
            );
        }
    }

    #[test]
    fn hop_the_gate_denies_is_refused() {
        let original = url("https://a.test/");
        let gate = HopGate::SameAuthority;
        let check = |to: &Url| gate.permits(&original, to);
        assert_eq!(
            hop_allowed(&original, &url("https://a.test/next"), &check),
            Ok(())
        );
        assert_eq!(
            hop_allowed(&original, &url("https://b.test/"), &check),
            Err(RedirectRefusal::NotPermitted)
        );
        assert_eq!(
            hop_allowed(&original, &url("https://a.test:8443/"), &check),
            Err(RedirectRefusal::NotPermitted)
        );
    }

    #[test]
    fn same_authority_counts_default_ports() {
        assert!(same_authority(
            &url("https://a.test/"),
            &url("https://a.test:443/x")
        ));
        assert!(!same_authority(
            &url("http://a.test/"),
            &url("https://a.test/")
        ));
        assert!(!same_authority(
            &url("http://127.0.0.1:80/"),
            &url("http://localhost:80/")
        ));
    }
}
