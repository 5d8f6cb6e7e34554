//! The usual shapes of a credential in text a planner is about to be shown: private keys, cloud
//! access keys and service tokens. `read_git` holds back each file whose lines hold one until the
//! person agrees; a read of a trusted file could ask the same way.
//!
//! Only trusted text is scanned: deciding on the shape of bytes nobody vouched for would be a
//! branch on them, and such bytes never reach a planner anyway.

use std::sync::LazyLock;

use regex::Regex;

/// Each shape, with the words the person and the planner are told.
const SHAPES: &[(&str, &str)] = &[
    (
        "a private key",
        r"-----BEGIN ([A-Z0-9]+ )*PRIVATE KEY( BLOCK)?-----",
    ),
    ("an AWS access key", r"\b(AKIA|ASIA)[0-9A-Z]{16}\b"),
    (
        "a GitHub token",
        r"\b(gh[pousr]_[A-Za-z0-9]{36,}|github_pat_[A-Za-z0-9_]{40,})",
    ),
    ("a GitLab token", r"\bglpat-[A-Za-z0-9_-]{20,}"),
    ("a Slack token", r"\bxox[abprs]-[A-Za-z0-9-]{10,}"),
    ("a Google API key", r"\bAIza[0-9A-Za-z_-]{35}"),
    ("a Stripe secret key", r"\b[sr]k_live_[0-9A-Za-z]{16,}"),
    (
        "an OpenAI or Anthropic key",
        r"\bsk-(ant-)?[A-Za-z0-9_-]{32,}",
    ),
];

static COMPILED: LazyLock<Vec<(&'static str, Regex)>> = LazyLock::new(|| {
    SHAPES
        .iter()
        .filter_map(|(what, pattern)| Regex::new(pattern).ok().map(|r| (*what, r)))
        .collect()
});

/// What kind of credential the text appears to hold, the first shape found, if any.
pub fn scan(text: &str) -> Option<&'static str> {
    COMPILED
        .iter()
        .find(|(_, r)| r.is_match(text))
        .map(|(what, _)| *what)
}

#[cfg(test)]
mod tests {
    use super::*;

    // Verifies: GIT-5
    #[test]
    fn the_usual_shapes_are_found_and_ordinary_text_is_not() {
        assert_eq!(
            scan("-----BEGIN OPENSSH PRIVATE KEY-----\nb3Bl\n"),
            Some("a private key")
        );
        assert_eq!(
            scan("key = AKIAIOSFODNN7EXAMPLE"),
            Some("an AWS access key")
        );
        assert_eq!(
            scan("token: ghp_0123456789abcdefghijABCDEFGHIJ012345"),
            Some("a GitHub token")
        );
        assert_eq!(scan("xoxb-1234567890-abcdef"), Some("a Slack token"));
        assert_eq!(scan("fn main() { println!(\"AKIA\"); }"), None);
        assert_eq!(scan("-----BEGIN PUBLIC KEY-----"), None);
    }
}
