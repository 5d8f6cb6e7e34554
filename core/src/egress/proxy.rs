//! Which proxy a request takes, decided once from the environment and asked per URL.
//!
//! One [`ProxyRoute`] answers both the HTTP client (through `reqwest::Proxy::custom`) and the
//! questions the rest of egress asks ("does a proxy apply to this model URL?"), so the route a
//! request takes and the route `doctor` reports cannot disagree.

use std::net::IpAddr;

use url::{Host, Url};

use crate::secret::Secret;

/// The variables read, in the order they are tried. The first usable one is the proxy for every
/// request: a single route is what `doctor` can state in one line and what a person setting
/// `ALL_PROXY` expects, rather than a per-scheme split nobody asked for.
const PROXY_VARIABLES: [&str; 3] = ["ALL_PROXY", "HTTPS_PROXY", "HTTP_PROXY"];

/// The proxy in force, as `doctor` reports it: never the credential, only whether there is one.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ProxyFact {
    /// The variable it came from, as spelled in the environment.
    pub variable: String,
    pub scheme: String,
    pub host: String,
    pub port: u16,
    pub has_credential: bool,
}

/// A proxy named in the environment that is not the route, and why.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct UnusableProxy {
    pub variable: String,
    pub reason: String,
}

/// The proxy chosen, holding the URL with its credential for the client to connect through.
pub(crate) struct ChosenProxy {
    url: Secret,
    pub(crate) fact: ProxyFact,
}

impl ChosenProxy {
    pub(crate) fn url(&self) -> &str {
        self.url.expose()
    }
}

/// The proxy decision for this process.
pub(crate) struct ProxyRoute {
    pub(crate) proxy: Option<ChosenProxy>,
    pub(crate) unusable: Vec<UnusableProxy>,
    pub(crate) bypass: NoProxy,
}

impl ProxyRoute {
    pub(crate) fn from_env(env: &dyn Fn(&str) -> Option<String>) -> ProxyRoute {
        let mut proxy = None;
        let mut unusable = Vec::new();
        for name in PROXY_VARIABLES {
            let Some((variable, value)) = read_either_case(env, name) else {
                continue;
            };
            if proxy.is_some() {
                // A later variable is simply not consulted once one is in force; it is not a
                // mistake worth reporting.
                continue;
            }
            match parse_proxy(&value) {
                Ok((url, fact_parts)) => {
                    proxy = Some(ChosenProxy {
                        url: Secret::new(url),
                        fact: ProxyFact {
                            variable,
                            scheme: fact_parts.scheme,
                            host: fact_parts.host,
                            port: fact_parts.port,
                            has_credential: fact_parts.has_credential,
                        },
                    });
                }
                Err(reason) => unusable.push(UnusableProxy { variable, reason }),
            }
        }
        let bypass = read_either_case(env, "NO_PROXY")
            .map(|(_, value)| NoProxy::parse(&value))
            .unwrap_or_default();
        ProxyRoute {
            proxy,
            unusable,
            bypass,
        }
    }

    /// The proxy a request to `url` goes through, if any.
    pub(crate) fn proxy_for(&self, url: &Url) -> Option<&ChosenProxy> {
        let proxy = self.proxy.as_ref()?;
        if self.bypass.matches(url) {
            return None;
        }
        Some(proxy)
    }
}

/// Reads `NAME`, then `name`; the upper-case spelling wins when both are set. A variable set to
/// nothing counts as unset, which is how shells clear one.
fn read_either_case(env: &dyn Fn(&str) -> Option<String>, name: &str) -> Option<(String, String)> {
    let lower = name.to_ascii_lowercase();
    [name.to_owned(), lower].into_iter().find_map(|variable| {
        let value = env(&variable)?;
        let value = value.trim().to_owned();
        (!value.is_empty()).then_some((variable, value))
    })
}

struct ProxyParts {
    scheme: String,
    host: String,
    port: u16,
    has_credential: bool,
}

/// Parses a proxy value into the URL the client connects through. The reason for refusing one
/// names the scheme only: the value may hold a password.
fn parse_proxy(value: &str) -> Result<(String, ProxyParts), String> {
    // A bare `host:port` means an http proxy, as it does for curl.
    let with_scheme = if value.contains("://") {
        value.to_owned()
    } else {
        format!("http://{value}")
    };
    let url = Url::parse(&with_scheme).map_err(|_| "it is not a url".to_owned())?;
    let scheme = url.scheme().to_owned();
    if scheme != "http" && scheme != "https" {
        return Err(format!(
            "it names a {scheme} proxy, and this build connects through http and https proxies only"
        ));
    }
    let host = match url.host() {
        Some(Host::Domain(domain)) => domain.to_owned(),
        Some(Host::Ipv4(ip)) => ip.to_string(),
        Some(Host::Ipv6(ip)) => format!("[{ip}]"),
        None => return Err("it names no host".to_owned()),
    };
    let port = url.port_or_known_default().unwrap_or(80);
    let has_credential = !url.username().is_empty() || url.password().is_some();
    Ok((
        with_scheme,
        ProxyParts {
            scheme,
            host,
            port,
            has_credential,
        },
    ))
}

/// The hosts that bypass the proxy, from `NO_PROXY`.
///
/// The rules are the ones curl and most HTTP clients share: entries are separated by commas; `*`
/// matches everything; an IP address or a CIDR network matches addresses; anything else is a
/// domain that matches itself and every name under it, with or without a leading dot.
#[derive(Clone, Debug, Default)]
pub(crate) struct NoProxy {
    entries: Vec<String>,
    rules: Vec<BypassRule>,
}

#[derive(Clone, Debug)]
enum BypassRule {
    Everything,
    Address(IpAddr),
    Network { base: IpAddr, prefix: u8 },
    Domain(String),
}

impl NoProxy {
    pub(crate) fn parse(list: &str) -> NoProxy {
        let mut entries = Vec::new();
        let mut rules = Vec::new();
        for entry in list.split(',').map(str::trim).filter(|e| !e.is_empty()) {
            entries.push(entry.to_owned());
            rules.push(BypassRule::parse(entry));
        }
        NoProxy { entries, rules }
    }

    pub(crate) fn entries(&self) -> &[String] {
        &self.entries
    }

    pub(crate) fn matches(&self, url: &Url) -> bool {
        let Some(host) = url.host() else {
            return false;
        };
        self.rules.iter().any(|rule| rule.matches(&host))
    }
}

impl BypassRule {
    fn parse(entry: &str) -> BypassRule {
        if entry == "*" {
            return BypassRule::Everything;
        }
        let bare = entry.trim_start_matches('[').trim_end_matches(']');
        if let Ok(ip) = bare.parse::<IpAddr>() {
            return BypassRule::Address(ip);
        }
        if let Some((base, prefix)) = entry.split_once('/')
            && let (Ok(base), Ok(prefix)) = (base.parse::<IpAddr>(), prefix.parse::<u8>())
            && prefix <= if base.is_ipv4() { 32 } else { 128 }
        {
            return BypassRule::Network { base, prefix };
        }
        let domain = entry
            .trim_start_matches("*.")
            .trim_start_matches('.')
            .to_ascii_lowercase();
        BypassRule::Domain(domain)
    }

    fn matches(&self, host: &Host<&str>) -> bool {
        let ip = match host {
            Host::Ipv4(ip) => Some(IpAddr::V4(*ip)),
            Host::Ipv6(ip) => Some(IpAddr::V6(*ip)),
            Host::Domain(_) => None,
        };
        match (self, host, ip) {
            (BypassRule::Everything, _, _) => true,
            (BypassRule::Address(want), _, Some(ip)) => *want == ip,
            (BypassRule::Network { base, prefix }, _, Some(ip)) => in_network(ip, *base, *prefix),
            (BypassRule::Domain(domain), Host::Domain(name), _) => {
                let name = name.to_ascii_lowercase();
                name == *domain
                    || name
                        .strip_suffix(domain.as_str())
                        .is_some_and(|rest| rest.ends_with('.'))
            }
            _ => false,
        }
    }
}

fn in_network(ip: IpAddr, base: IpAddr, prefix: u8) -> bool {
    match (ip, base) {
        (IpAddr::V4(ip), IpAddr::V4(base)) => {
            let mask = u32::MAX.checked_shl(32 - u32::from(prefix)).unwrap_or(0);
            u32::from(ip) & mask == u32::from(base) & mask
        }
        (IpAddr::V6(ip), IpAddr::V6(base)) => {
            let mask = u128::MAX.checked_shl(128 - u32::from(prefix)).unwrap_or(0);
            u128::from(ip) & mask == u128::from(base) & mask
        }
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn env_of(pairs: &'static [(&'static str, &'static str)]) -> impl Fn(&str) -> Option<String> {
        move |name| {
            pairs
                .iter()
                .find(|(k, _)| *k == name)
                .map(|(_, v)| (*v).to_owned())
        }
    }

    fn url(text: &str) -> Url {
        Url::parse(text).unwrap()
    }

    // Verifies: EGRESS-8
    #[test]
    fn proxy_variables_are_read_all_then_https_then_http() {
        let route = ProxyRoute::from_env(&env_of(&[
            ("http_proxy", "http://plain.example:3128"),
            ("HTTPS_PROXY", "http://secure.example:8080"),
        ]));
        let fact = &route.proxy.as_ref().unwrap().fact;
        assert_eq!(fact.variable, "HTTPS_PROXY");
        assert_eq!(fact.host, "secure.example");
        assert_eq!(fact.port, 8080);

        let route = ProxyRoute::from_env(&env_of(&[
            ("all_proxy", "proxy.example:1234"),
            ("HTTPS_PROXY", "http://secure.example:8080"),
        ]));
        let fact = &route.proxy.as_ref().unwrap().fact;
        assert_eq!(
            (fact.variable.as_str(), fact.scheme.as_str()),
            ("all_proxy", "http")
        );
        assert_eq!(fact.port, 1234);
    }

    // Verifies: EGRESS-8
    #[test]
    fn upper_case_proxy_variable_wins_over_lower_case() {
        let route = ProxyRoute::from_env(&env_of(&[
            ("https_proxy", "http://lower.example:1"),
            ("HTTPS_PROXY", "http://upper.example:2"),
        ]));
        assert_eq!(route.proxy.as_ref().unwrap().fact.host, "upper.example");
    }

    // Verifies: EGRESS-8
    #[test]
    fn socks_proxy_is_not_used_and_the_next_usable_one_is() {
        let route = ProxyRoute::from_env(&env_of(&[
            ("ALL_PROXY", "socks5://user:hunter2@socks.example:1080"),
            ("HTTP_PROXY", "http://plain.example:3128"),
        ]));
        assert_eq!(route.proxy.as_ref().unwrap().fact.host, "plain.example");
        assert_eq!(route.unusable.len(), 1);
        assert_eq!(route.unusable[0].variable, "ALL_PROXY");
        assert!(route.unusable[0].reason.contains("socks5"));
        assert!(!route.unusable[0].reason.contains("hunter2"));
    }

    // Verifies: EGRESS-8
    #[test]
    fn no_proxy_matches_domains_subdomains_addresses_and_networks() {
        let bypass = NoProxy::parse(" example.com, .corp.test,10.0.0.0/8, ::1 ,*.wild.test");
        assert!(bypass.matches(&url("http://example.com/")));
        assert!(bypass.matches(&url("https://www.EXAMPLE.com:444/")));
        assert!(!bypass.matches(&url("https://notexample.com/")));
        assert!(bypass.matches(&url("https://a.b.corp.test/")));
        assert!(bypass.matches(&url("https://corp.test/")));
        assert!(bypass.matches(&url("http://10.2.3.4/")));
        assert!(!bypass.matches(&url("http://11.2.3.4/")));
        assert!(bypass.matches(&url("http://[::1]:8080/")));
        assert!(bypass.matches(&url("http://x.wild.test/")));
        assert!(!bypass.matches(&url("http://127.0.0.1/")));
        assert!(NoProxy::parse("*").matches(&url("http://anything.test/")));
    }

    #[test]
    fn proxy_applies_unless_no_proxy_names_the_host() {
        let route = ProxyRoute::from_env(&env_of(&[
            ("HTTPS_PROXY", "http://proxy.example:3128"),
            ("no_proxy", "localhost,127.0.0.1"),
        ]));
        assert!(route.proxy_for(&url("http://localhost:11434/v1")).is_none());
        assert!(route.proxy_for(&url("http://127.0.0.1:11434/v1")).is_none());
        assert!(route.proxy_for(&url("https://api.example/v1")).is_some());
        assert_eq!(route.bypass.entries(), ["localhost", "127.0.0.1"]);
    }
}
