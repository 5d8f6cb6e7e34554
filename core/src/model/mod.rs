//! Model backends: the one interface through which a planner, a processor or a check is asked.
//!
//! The turn loop builds a [`ModelRequest`] and hands it to a [`ModelClient`]; the client speaks one
//! of two wire formats (`openai` chat completions or `anthropic` messages) through
//! [`crate::egress`], the only place that holds an HTTP client. Everything that crosses this
//! boundary is plain text: deciding what may go into a request is the policy layer's job
//! (`kernel`), never the backend's.

use std::fmt;

/// Which wire format a backend speaks (CONTRACT §2).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Api {
    OpenAi,
    Anthropic,
}

impl Api {
    pub fn parse(word: &str) -> Option<Api> {
        match word {
            "openai" => Some(Api::OpenAi),
            "anthropic" => Some(Api::Anthropic),
            _ => None,
        }
    }

    pub fn as_str(self) -> &'static str {
        match self {
            Api::OpenAi => "openai",
            Api::Anthropic => "anthropic",
        }
    }
}

/// Who is asking, sent as the `X-Bravebot-Role` header on every request.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Role {
    Planner,
    Delegate,
    Processor,
    Check,
}

impl Role {
    pub fn as_str(self) -> &'static str {
        match self {
            Role::Planner => "planner",
            Role::Delegate => "delegate",
            Role::Processor => "processor",
            Role::Check => "check",
        }
    }
}

/// One part of a user or tool message.
#[derive(Clone, Debug)]
pub enum Part {
    Text(String),
    /// A picture, sent as an `image_url` part with a `data:` URL (CONTRACT §4.10).
    Image {
        media_type: String,
        data: Vec<u8>,
    },
}

/// A tool call the model made, with its arguments as the JSON text the model wrote.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ToolCall {
    pub id: String,
    pub name: String,
    pub arguments: String,
}

/// One message of a conversation, in the order the model sees them.
#[derive(Clone, Debug)]
pub enum Message {
    User(Vec<Part>),
    Assistant {
        text: String,
        tool_calls: Vec<ToolCall>,
    },
    ToolResult {
        call_id: String,
        parts: Vec<Part>,
    },
}

/// A function tool offered to the planner.
#[derive(Clone, Debug)]
pub struct ToolSchema {
    pub name: String,
    pub description: String,
    /// JSON schema of the arguments object.
    pub parameters: serde_json::Value,
}

/// Everything a backend needs to make one call.
#[derive(Clone, Debug)]
pub struct ModelRequest {
    pub role: Role,
    pub system: String,
    pub messages: Vec<Message>,
    /// `None` sends no `tools` field at all (processors and checks, CONTRACT §2).
    pub tools: Option<Vec<ToolSchema>>,
    /// Upper bound on the reply's tokens, where the API needs one (anthropic does).
    pub max_tokens: u32,
}

/// What streams out of a backend while a reply is being written.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum StreamEvent {
    TextDelta(String),
}

/// A finished reply.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ModelReply {
    pub text: String,
    pub tool_calls: Vec<ToolCall>,
    /// The reply was cut by the model's token limit rather than finished.
    pub truncated: bool,
}

/// Why a model call failed. `retryable` says whether asking again could help.
#[derive(Debug, thiserror::Error)]
pub enum ModelError {
    #[error("model endpoint could not be reached at {url}: {source}")]
    Unreachable {
        url: String,
        source: crate::egress::EgressError,
    },
    #[error("model endpoint answered {status}: {message}")]
    Status { status: u16, message: String },
    #[error("model reply could not be read: {0}")]
    Malformed(String),
    #[error("model call was cancelled")]
    Cancelled,
}

impl ModelError {
    pub fn retryable(&self) -> bool {
        match self {
            ModelError::Unreachable { source, .. } => source.retryable(),
            ModelError::Status { status, .. } => matches!(status, 429 | 503),
            ModelError::Malformed(_) | ModelError::Cancelled => false,
        }
    }
}

/// Where a backend sends its requests and how it authenticates.
#[derive(Clone)]
pub struct ModelConfig {
    pub api: Api,
    pub base_url: String,
    pub name: String,
    /// The credential, if any. Never printed; zeroized on drop.
    pub api_key: Option<crate::secret::Secret>,
}

impl fmt::Debug for ModelConfig {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ModelConfig")
            .field("api", &self.api)
            .field("base_url", &self.base_url)
            .field("name", &self.name)
            .field("api_key", &self.api_key.as_ref().map(|_| "<set>"))
            .finish()
    }
}

mod anthropic;
mod client;
mod openai;

pub use client::ModelClient;
