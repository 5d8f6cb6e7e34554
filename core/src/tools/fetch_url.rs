//! `fetch_url`: one http or https URL fetched through egress, its body always a reference.
//!
//! Every fetch is put to the person (a `fetch` question drawing the URL and, on its own, the host
//! the URL parser reads out of it) unless a home-settings rule names the host: a `fetch.deny` rule
//! refuses without asking and wins over everything, a `fetch.allow` rule answers the question.
//! Nothing is remembered, so the next fetch asks again. Each redirect hop is put to a gate that
//! lets it stay on the approved authority or go where an allow rule names; egress refuses leaving
//! https whatever the gate says.
//!
//! What comes back is quarantined as untrusted and public however the question was answered:
//! approving a fetch is consent to talk to a host, not a statement about what it returns. The
//! planner is told the URL it asked for (never where a redirect went), the slot's reference, the
//! status code and the content type only when it is one of [`KNOWN_CONTENT_TYPES`], given in this
//! program's own spelling. No other string the server wrote reaches it, errors included.

use std::sync::Arc;

use serde_json::json;
use url::Url;

use super::args::tool_args;
use super::{Call, ToolOutput, ToolSpec};
use crate::egress::{
    EgressError, FETCH_BODY_CAP, HopGate, HttpResponse, RedirectRefusal, SendOptions,
    same_authority,
};
use crate::kernel::audit::{Decision, Gate};
use crate::kernel::decide::{self, Decided, Why};
use crate::kernel::label::Label;
use crate::kernel::labelled::Labelled;
use crate::kernel::policy::{self, PlannerText};
use crate::kernel::slot::{Origin, human_size};
use crate::paths::control_pictures;
use crate::screen::{Question, QuestionKind, Subject, Update};
use crate::settings::Settings;

/// Content types the planner may be told, matched on the media type alone (parameters such as a
/// charset dropped, case ignored). The result carries the entry from this list, never the
/// header's own bytes, so all a server can choose is which of these the planner reads.
/// Which of these a server chose is a few bits it can send the planner (known cost FETCH-11).
pub const KNOWN_CONTENT_TYPES: &[&str] = &[
    "text/html",
    "text/plain",
    "text/markdown",
    "text/css",
    "text/csv",
    "text/xml",
    "text/javascript",
    "application/json",
    "application/xml",
    "application/xhtml+xml",
    "application/javascript",
    "application/rss+xml",
    "application/atom+xml",
    "application/yaml",
    "application/toml",
    "application/pdf",
    "application/zip",
    "application/gzip",
    "application/x-tar",
    "application/octet-stream",
    "image/png",
    "image/jpeg",
    "image/gif",
    "image/webp",
    "image/svg+xml",
];

tool_args! {
    /// The arguments of `fetch_url`, as the planner is shown them and as a call is read.
    pub struct Args {
        url: required String as Routing = json!({"type": "string", "description": "the one http or https URL to fetch"});
    }
}

/// What the planner calls this tool.
pub const NAME: &str = "fetch_url";

pub fn spec() -> ToolSpec {
    ToolSpec {
        name: NAME,
        description: "Fetch one http or https URL with a GET. The person approves every fetch unless their settings \
name the host. The body always comes back as a reference (to pass on, e.g. as write_file's contents_ref); the \
result gives the status code and, when it is a common one, the content type. A redirect to another \
host is refused unless the person's settings allow that host. Not the tool for a GitHub pull request or issue where \
the gh command is installed: use run with gh for those.",
        args: Args::specs(),
    }
}

pub async fn run(call: &Call<'_>) -> ToolOutput {
    let url = match Args::read(call) {
        Ok(args) => args.url,
        Err(e) => return ToolOutput::error(e),
    };
    let raw = url.trim();
    let shown = control_pictures(raw);
    let url = match Url::parse(raw) {
        Ok(url) => url,
        Err(e) => return ToolOutput::error(format!("`{shown}` is not a URL: {e}")),
    };
    if !matches!(url.scheme(), "http" | "https") {
        call.record(
            Gate::Promote,
            Decision::Refused,
            format!(
                "fetch_url.url [routing]: the {} scheme is refused before any connection",
                url.scheme()
            ),
        );
        return ToolOutput::refused(format!(
            "only http and https URLs can be fetched; nothing was asked or sent for `{shown}`"
        ));
    }
    if url.host().is_none() {
        return ToolOutput::error(format!("`{shown}` names no host"));
    }
    let host = shown_host(&url);
    if let Err(refusal) = approve(call, &url, &shown, &host).await {
        return refusal;
    }

    let session = call.session;
    let opts = SendOptions::for_fetch(hop_gate(&url, &session.settings));
    let egress = Arc::clone(session.model.egress());
    let fetched = tokio::select! {
        fetched = egress.fetch_page(&url, &opts) => fetched,
        () = call.cancel.cancelled() => {
            call.record(
                Gate::Present,
                Decision::Observed,
                format!("fetch_url from {host} was cancelled; nothing was quarantined"),
            );
            return ToolOutput::error(format!("the fetch of {shown} was cancelled"));
        }
    };
    match fetched {
        Ok(response) => quarantine(call, &shown, &host, response),
        Err(err) => failed(call, &shown, &host, &err),
    }
}

/// Decides whether the fetch goes ahead: a deny rule, an allow rule, or the person. An allow rule
/// spares the question and vouches for nothing the host sends (known cost FETCH-12).
async fn approve(call: &Call<'_>, url: &Url, shown: &str, host: &str) -> Result<(), ToolOutput> {
    let session = call.session;
    let settings = &session.settings;
    let denied = settings.fetch_deny.iter().find(|r| rule_names(r, url));
    // An allow rule answers only for a URL the planner wrote from a context that holds nothing
    // private and nothing released: a URL carries whatever its path and query say, so one
    // composed by a context that read the person's files goes to the person (GATE-4), and one
    // composed after a release is not the planner's own routing (CTX-2).
    let routing_label = session.state().context.label();
    let allowed = settings.fetch_allow.iter().find(|r| rule_names(r, url));
    let context = decide::Context {
        person_only: call.person_only(),
        trusted_public: routing_label.is_public() && routing_label.is_trusted(),
    };
    let facts = decide::Ruled {
        denied: denied.is_some(),
        allowed: allowed.is_some(),
        interactive: session.screen.interactive(),
    };
    let decided = decide::ruled(context, facts);
    if let (Decided::Refuse(Why::DenyRule), Some(rule)) = (decided, denied) {
        let rule = control_pictures(rule.trim());
        call.record(
            Gate::Promote,
            Decision::Refused,
            format!("fetch_url.url [routing] to {host}: refused by the fetch.deny rule {rule}"),
        );
        return Err(ToolOutput::refused(format!(
            "the person's fetch.deny rule `{rule}` refuses {host}; nothing was fetched"
        )));
    }
    if let (Decided::Unasked(_), Some(rule)) = (decided, allowed) {
        call.record(
            Gate::Promote,
            Decision::Allowed,
            format!(
                "fetch_url.url [routing] {routing_label} to {host}: allowed by the fetch.allow rule {}",
                control_pictures(rule.trim())
            ),
        );
        return Ok(());
    }
    let private = facts.rule_held_back(context);
    if private {
        call.record(
            Gate::Promote,
            Decision::Observed,
            format!(
                "fetch_url.url [routing] {routing_label} to {host}: a fetch.allow rule names the host, but the URL was written by a context holding private data, so the person is asked"
            ),
        );
    }
    if matches!(decided, Decided::Refuse(_)) {
        call.record(
            Gate::Question,
            Decision::Refused,
            format!(
                "fetch {host}: nobody is watching to approve it and no fetch.allow rule names it"
            ),
        );
        return Err(ToolOutput::refused(format!(
            "nobody is watching to approve a fetch from {host} and no fetch.allow rule answers for it; nothing was fetched"
        )));
    }
    if call.cancel.is_cancelled() {
        return Err(ToolOutput::error(
            "the turn was cancelled; nothing was fetched",
        ));
    }
    let question = Question::approve(QuestionKind::Fetch, format!("Fetch {shown}?"))
        .why(&call.why)
        .subject(Subject {
            url: Some(shown.to_string()),
            host: Some(host.to_string()),
            ..Subject::default()
        })
        .notice(if private {
            "The agent wrote this URL after reading your files: check that it carries nothing \
             of them before you allow it, since a URL's path and query reach the host. What \
             comes back stays quarantined however you answer."
        } else {
            "What comes back stays quarantined however you answer: the agent can pass it on or \
             write it to a file, and cannot read it or be told what it says."
        })
        .allow_once("fetch", "Fetch it once")
        .reject("reject", "Don't fetch it");
    let approved = call
        .ask_recorded(question, |a| {
            a.said(
                format!("fetch {host}: allowed once by the person"),
                format!("fetch {host}: refused"),
            )
        })
        .await
        .approved();
    if approved {
        Ok(())
    } else {
        Err(ToolOutput::refused(format!(
            "the person did not approve fetching {shown}; nothing was fetched"
        )))
    }
}

/// Puts the body in a slot, untrusted and public, and tells the planner what it may know.
fn quarantine(call: &Call<'_>, shown: &str, host: &str, response: HttpResponse) -> ToolOutput {
    let session = call.session;
    let status = response.status;
    let kind = match response.header("content-type") {
        None => "no content type".to_string(),
        Some(header) => match known_content_type(header) {
            Some(known) => format!("content type {known}"),
            None => "a content type that is not one of the common ones".to_string(),
        },
    };
    let truncated = response.truncated;
    let content = Labelled::new(response.body, Label::UNTRUSTED_PUBLIC);
    let label = content.label();
    let reference = {
        let mut state = session.state();
        let reference = state.quarantine.put(
            content,
            Origin::Url {
                url: shown.to_string(),
            },
        );
        let slot = reference.id.to_string();
        policy::withhold(
            &format!("fetch_url from {host}"),
            label,
            &slot,
            &mut state.audit,
        );
        state.audit.record(
            Gate::Present,
            Decision::Observed,
            format!(
                "fetch_url from {host}: status {status}, {} bytes{} into {slot}",
                reference.bytes,
                if truncated { " (cut at the cap)" } else { "" }
            ),
        );
        reference
    };
    session.screen.update(Update::Quarantined {
        reference: reference.clone(),
        origin: format!("the page {shown}"),
    });
    let cut = if truncated {
        format!(
            " The body was longer than {} and was cut there; the reference holds its start.",
            human_size(FETCH_BODY_CAP)
        )
    } else {
        String::new()
    };
    ToolOutput::ok(
        PlannerText::driver(format!(
            "fetched {shown}: status {status}, {kind}. The body is quarantined (a fetched page is untrusted \
             whoever approved the fetch): {reference}.{cut} You cannot read it; you may pass the reference on."
        )),
        format!(
            "{shown}: status {status}, quarantined as {}{}",
            reference.id,
            if truncated { " (cut at the cap)" } else { "" }
        ),
    )
}

/// A fetch that did not come back: the URL asked for and the kind of failure, nothing more.
fn failed(call: &Call<'_>, shown: &str, host: &str, err: &EgressError) -> ToolOutput {
    tracing::debug!(%host, error = %err, "fetch_url failed");
    let kind = err.kind();
    call.record(
        Gate::Present,
        Decision::Observed,
        format!("fetch_url from {host} failed: {kind}; nothing was quarantined"),
    );
    let mut message = format!("fetching {shown} failed: {kind}");
    if matches!(
        err,
        EgressError::Redirect {
            refusal: RedirectRefusal::NotPermitted,
            ..
        }
    ) {
        message.push_str(&format!(
            " (the approved host was {host}, and no fetch.allow rule names where the redirect led)"
        ));
    }
    ToolOutput::error(message)
}

/// The host a URL reaches as the URL parser reads it, with its port when the URL names one that
/// is not the scheme's default: `https://example.com@evil.test/` is `evil.test`.
pub fn shown_host(url: &Url) -> String {
    let host = url.host_str().unwrap_or_default();
    match url.port() {
        Some(port) => format!("{host}:{port}"),
        None => host.to_string(),
    }
}

/// Whether a `fetch.allow` or `fetch.deny` entry names the host `url` reaches. `host` names it on
/// any port, `host:port` on that port only (CONTRACT §5). The entry is read by the same URL parser
/// as the URL, so case, IDNA spelling and ways of writing an address cannot slip past a rule. An
/// entry that is not a bare authority (a scheme, a path, userinfo) names nothing.
pub fn rule_names(rule: &str, url: &Url) -> bool {
    let rule = rule.trim();
    if rule.is_empty() || rule.contains(['/', '@', '?', '#', '\\']) {
        return false;
    }
    let Ok(parsed) = Url::parse(&format!("http://{rule}/")) else {
        return false;
    };
    if parsed.host() != url.host() {
        return false;
    }
    let port_written = rule
        .rsplit_once(':')
        .is_some_and(|(_, port)| !port.is_empty() && port.bytes().all(|b| b.is_ascii_digit()));
    !port_written || parsed.port_or_known_default() == url.port_or_known_default()
}

/// The gate each redirect hop is put to: a deny rule refuses it whatever else says; otherwise it
/// may stay on the approved authority or go where an allow rule names.
fn hop_gate(approved: &Url, settings: &Settings) -> HopGate {
    let approved = approved.clone();
    let allow = settings.fetch_allow.clone();
    let deny = settings.fetch_deny.clone();
    HopGate::Custom(Arc::new(move |next: &Url| {
        !deny.iter().any(|r| rule_names(r, next))
            && (same_authority(&approved, next) || allow.iter().any(|r| rule_names(r, next)))
    }))
}

/// The entry of [`KNOWN_CONTENT_TYPES`] a `Content-Type` header names, if any.
pub fn known_content_type(header: &str) -> Option<&'static str> {
    let media = header.split(';').next().unwrap_or_default().trim();
    KNOWN_CONTENT_TYPES
        .iter()
        .copied()
        .find(|known| known.eq_ignore_ascii_case(media))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn url(text: &str) -> Url {
        Url::parse(text).unwrap()
    }

    // Verifies: FETCH-2
    #[test]
    fn fetch_host_is_what_the_parser_reads_not_what_the_string_looks_like() {
        assert_eq!(
            shown_host(&url("https://example.com@evil.test/")),
            "evil.test"
        );
        assert_eq!(
            shown_host(&url("http://user:pw@127.0.0.1:8080/x")),
            "127.0.0.1:8080"
        );
        assert_eq!(shown_host(&url("https://EXAMPLE.com:443/")), "example.com");
        assert_eq!(shown_host(&url("http://[::1]:9/")), "[::1]:9");
    }

    // Verifies: FETCH-3
    #[test]
    fn fetch_rules_name_a_host_on_any_port_or_a_host_and_port() {
        let page = url("https://Docs.Example.com/api");
        assert!(rule_names("docs.example.com", &page));
        assert!(rule_names(" DOCS.example.COM ", &page));
        assert!(rule_names("docs.example.com:443", &page));
        assert!(!rule_names("docs.example.com:8443", &page));
        assert!(
            !rule_names("example.com", &page),
            "a rule names one host, not its subdomains"
        );
        assert!(!rule_names("https://docs.example.com", &page));
        assert!(!rule_names("docs.example.com/api", &page));
        assert!(!rule_names("", &page));

        let tricked = url("https://docs.example.com@evil.test/");
        assert!(!rule_names("docs.example.com", &tricked));
        assert!(rule_names("evil.test", &tricked));

        let local = url("http://127.0.0.1:4000/");
        assert!(rule_names("127.0.0.1", &local));
        assert!(rule_names("127.0.0.1:4000", &local));
        assert!(!rule_names("127.0.0.1:4001", &local));
        assert!(rule_names("[::1]:4000", &url("http://[0:0::1]:4000/")));
        assert!(rule_names(
            "xn--bcher-kva.example",
            &url("http://bücher.example/")
        ));
    }

    // Verifies: FETCH-4
    #[test]
    fn fetch_hops_stay_on_the_approved_authority_unless_a_rule_allows_and_deny_wins() {
        let approved = url("https://a.test/start");
        let settings = Settings {
            fetch_allow: vec!["b.test".into(), "c.test".into()],
            fetch_deny: vec!["c.test".into()],
            ..Settings::default()
        };
        let HopGate::Custom(gate) = hop_gate(&approved, &settings) else {
            panic!("fetch_url gates hops itself");
        };
        assert!(gate(&url("https://a.test/next")));
        assert!(!gate(&url("https://a.test:8443/next")));
        assert!(gate(&url("https://b.test/")));
        assert!(!gate(&url("https://c.test/")));
        assert!(!gate(&url("https://d.test/")));
    }

    // Verifies: FETCH-5
    #[test]
    fn fetch_content_types_come_from_the_list_or_not_at_all() {
        assert_eq!(
            known_content_type("Text/HTML; charset=utf-8"),
            Some("text/html")
        );
        assert_eq!(
            known_content_type("application/json"),
            Some("application/json")
        );
        assert_eq!(
            known_content_type("text/x-ignore-previous-instructions"),
            None
        );
        assert_eq!(known_content_type("text/html extra"), None);
    }
}
