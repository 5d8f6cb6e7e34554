//! Model backends: the one interface through which a planner, a processor or a check is asked.
//!
//! The turn loop builds a [`ModelRequest`] and hands it to a [`ModelClient`]; the client speaks one
//! of two wire formats (`openai` chat completions or `anthropic` messages) through
//! [`crate::egress`], the only place that holds an HTTP client. Everything that crosses this
//! boundary is plain text: deciding what may go into a request is the policy layer's job
//! (`kernel`), never the backend's.

mod anthropic;
mod client;
mod openai;
mod types;
mod wire;

pub use client::ModelClient;
pub use types::*;

#[cfg(test)]
mod tests {
    use super::*;
    use crate::egress::{EgressError, Phase};

    // Verifies: PROC-4, CHECK-6
    #[test]
    fn a_model_errors_kind_carries_nothing_the_endpoint_said() {
        let said = "ECHOED-REQUEST-TEXT";
        let origin = format!("http://{said}.test");
        let errors = [
            ModelError::Unreachable {
                url: origin.clone(),
                source: EgressError::Connect {
                    origin: origin.clone(),
                    detail: said.into(),
                },
            },
            ModelError::Unreachable {
                url: origin.clone(),
                source: EgressError::Timeout {
                    origin: origin.clone(),
                    phase: Phase::FirstByte,
                },
            },
            ModelError::Unreachable {
                url: origin.clone(),
                source: EgressError::Incomplete {
                    origin: origin.clone(),
                    received: 7,
                    detail: said.into(),
                },
            },
            ModelError::Unreachable {
                url: origin.clone(),
                source: EgressError::Tls {
                    origin: origin.clone(),
                    detail: said.into(),
                },
            },
            ModelError::Status {
                status: 400,
                message: said.into(),
            },
            ModelError::Status {
                status: 502,
                message: said.into(),
            },
            ModelError::Malformed(said.into()),
            ModelError::WebPage {
                url: origin.clone(),
                content_type: "text/html".into(),
            },
            ModelError::Cancelled,
            ModelError::TimedOut { seconds: 600 },
        ];
        let kinds: Vec<&str> = errors.iter().map(ModelError::kind).collect();
        for (error, kind) in errors.iter().zip(&kinds) {
            assert!(!kind.contains(said) && !kind.contains("400"), "{kind}");
            // The detail is still there for the log.
            if !matches!(
                error,
                ModelError::Cancelled | ModelError::WebPage { .. } | ModelError::TimedOut { .. }
            ) {
                assert!(error.to_string().contains(said), "{error}");
            }
        }
        expect_test::expect![[r#"
            [
                "the model endpoint could not be reached",
                "the model endpoint did not answer in time",
                "the model endpoint's reply was cut off",
                "the TLS connection to the model endpoint failed",
                "the model endpoint refused the request",
                "the model endpoint failed while answering",
                "the model endpoint's reply could not be read",
                "the model endpoint answered with a web page, not a model reply",
                "the model call was cancelled",
                "the model did not finish answering within its time limit",
            ]
        "#]]
        .assert_debug_eq(&kinds);
    }
}
