//! The words of a model request and its reply, as both wire formats and every caller use them.

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
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Part {
    Text(String),
    /// A picture, sent as an `image_url` part with a `data:` URL (CONTRACT §4.10).
    Image {
        media_type: String,
        data: Vec<u8>,
    },
    /// A picture whose bytes arrived base64-encoded, sent on as it came: what an MCP server
    /// answered (decoding it would read bytes nobody vouched for; only a processor's request holds
    /// one) or a picture in the person's prompt.
    EncodedImage {
        media_type: String,
        base64: String,
    },
    /// A PDF, sent as a document where the wire format has one: an OpenAI-compatible `file`
    /// part with a `data:` URL, an Anthropic `document` block with a base64 source. An image
    /// part carrying a PDF is refused by both APIs.
    Pdf {
        filename: String,
        data: Vec<u8>,
    },
}

/// What a model takes besides text (`model.inputs`, CONTRACT §5): pictures, PDFs, both or
/// neither.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Inputs {
    pub images: bool,
    pub pdfs: bool,
}

impl Inputs {
    /// The list `model.inputs` holds: `image` and `pdf`, any other word refused.
    pub fn parse(words: &[String]) -> Option<Inputs> {
        let mut inputs = Inputs::default();
        for word in words {
            match word.as_str() {
                "image" => inputs.images = true,
                "pdf" => inputs.pdfs = true,
                _ => return None,
            }
        }
        Some(inputs)
    }

    /// The words of [`Inputs::parse`], for `status` and `doctor`.
    pub fn words(self) -> Vec<&'static str> {
        let mut words = Vec::new();
        if self.images {
            words.push("image");
        }
        if self.pdfs {
            words.push("pdf");
        }
        words
    }
}

/// A tool call the model made, with its arguments as the JSON text the model wrote.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ToolCall {
    pub id: String,
    pub name: String,
    pub arguments: String,
}

/// One message of a conversation, in the order the model sees them.
#[derive(Clone, Debug, PartialEq, Eq)]
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
#[derive(Clone, Debug, PartialEq)]
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
    /// The tokens the endpoint said the call took; `None` where it said nothing (USAGE-2).
    pub usage: Option<Usage>,
}

/// What an endpoint reported one call cost, in both wire formats' terms made one (USAGE-1).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Usage {
    /// Every token of the request, those read from the endpoint's cache included.
    pub input_tokens: u64,
    /// The reply's tokens.
    pub output_tokens: u64,
    /// How many of `input_tokens` the endpoint read from its cache, where it said.
    pub cached_input_tokens: Option<u64>,
    /// How many of `input_tokens` the endpoint wrote to its cache, where it said (Anthropic's
    /// `cache_creation_input_tokens`, USAGE-8).
    pub cache_write_input_tokens: Option<u64>,
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
    /// The endpoint answered `2xx` with a web page (`text/html`): a captive portal, a proxy's
    /// login page, or a base URL that names a web site rather than the model's API. Told by the
    /// response's content type alone, never by reading the page.
    #[error(
        "the model endpoint at {url} answered with a web page ({content_type}), not a model reply: check that the base URL names the model's API rather than a web site, and that no login page of a network or proxy is in the way"
    )]
    WebPage { url: String, content_type: String },
    #[error("model call was cancelled")]
    Cancelled,
    /// The call ran past the time its caller gives it as a whole (a check's
    /// `vetting.timeoutSeconds`, CHECK-31), whatever each phase of the request took.
    #[error("model call took longer than its limit of {seconds} s")]
    TimedOut { seconds: u64 },
}

impl ModelError {
    /// What went wrong, as one fixed sentence per kind that carries nothing the endpoint said. A
    /// processor's or a check's request is made of content nobody vouched for, and an endpoint's
    /// own words about such a request (a refusal quoting it, an error event in the stream) are a
    /// function of that content: this is what a planner may be told instead. The detail goes to
    /// the log.
    pub fn kind(&self) -> &'static str {
        use crate::egress::EgressError;
        match self {
            ModelError::Unreachable { source, .. } => match source {
                EgressError::Connect { .. } => "the model endpoint could not be reached",
                EgressError::Timeout { .. } => "the model endpoint did not answer in time",
                EgressError::Incomplete { .. } => "the model endpoint's reply was cut off",
                EgressError::Tls { .. } => "the TLS connection to the model endpoint failed",
                EgressError::Redirect { .. } => {
                    "the model endpoint redirected the request and the redirect was not followed"
                }
                EgressError::Scheme { .. }
                | EgressError::InvalidUrl { .. }
                | EgressError::InvalidHeader { .. }
                | EgressError::Setup(_) => {
                    "the request could not be sent to the model endpoint as the settings name it"
                }
            },
            ModelError::Status { status, .. } if (400..500).contains(status) => {
                "the model endpoint refused the request"
            }
            ModelError::Status { .. } => "the model endpoint failed while answering",
            ModelError::Malformed(_) => "the model endpoint's reply could not be read",
            ModelError::WebPage { .. } => {
                "the model endpoint answered with a web page, not a model reply"
            }
            ModelError::Cancelled => "the model call was cancelled",
            ModelError::TimedOut { .. } => {
                "the model did not finish answering within its time limit"
            }
        }
    }

    /// Whether the endpoint refused the request as longer than the model's context: a 400 or
    /// 413 whose message says so in one of the ways the usual servers do (OpenAI's
    /// `context_length_exceeded`, vLLM's and OpenAI's "maximum context length", llama.cpp's
    /// "context size", Anthropic's "prompt is too long"). Asking again with the same request
    /// cannot help, so it is reported as such rather than retried (SESS-13).
    pub fn context_too_long(&self) -> bool {
        match self {
            ModelError::Status {
                status: 400 | 413,
                message,
            } => {
                let m = message.to_lowercase();
                m.contains("context_length_exceeded")
                    || m.contains("context length")
                    || m.contains("context size")
                    || m.contains("context window")
                    || m.contains("prompt is too long")
                    || m.contains("too many tokens")
            }
            _ => false,
        }
    }

    pub fn retryable(&self) -> bool {
        match self {
            ModelError::Unreachable { source, .. } => source.retryable(),
            ModelError::Status { status, .. } => matches!(status, 429 | 503),
            ModelError::Malformed(_)
            | ModelError::WebPage { .. }
            | ModelError::Cancelled
            | ModelError::TimedOut { .. } => false,
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
