//! The model client: one call to a planner, processor or check endpoint.
//!
//! [`ModelClient`] turns a [`ModelRequest`] into one HTTP request through [`Egress`], reads the
//! reply (server-sent events or a whole JSON body) and hands back a [`ModelReply`]. The two wire
//! formats live in `openai` and `anthropic`; what they share (the event-stream reader, the error
//! text of a refusal, base64) lives here.

use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use crate::egress::{
    Egress, EgressError, HttpRequest, HttpResponse, SendOptions, StreamingResponse,
};
use crate::secret::Secret;

use super::types::{
    Api, Message, ModelConfig, ModelError, ModelReply, ModelRequest, Role, StreamEvent, ToolSchema,
};
use super::wire::{cut, json_error_text};
use super::{anthropic, openai};

/// The header every request carries so that a gateway, and the tests, can tell the callers apart
/// (CONTRACT §2).
const ROLE_HEADER: &str = "X-Bravebot-Role";

/// How much of a refusal's body is read to find its message.
const ERROR_BODY_CAP: usize = 64 * 1024;

/// The most characters of a server's error message carried in a [`ModelError::Status`].
const ERROR_MESSAGE_CHARS: usize = 300;

/// Talks to one configured model endpoint.
#[derive(Debug)]
pub struct ModelClient {
    config: ModelConfig,
    egress: Arc<Egress>,
    /// The planner's conversation as last serialised, so that each round serialises only the
    /// messages added since the one before. Only the planner's: its messages hold nothing
    /// untrusted (seed 003), so comparing them with the last ones branches on no untrusted byte.
    encoded: Mutex<Vec<Conversation>>,
}

/// One role's messages as last sent, each with its serialised form, and the tools likewise.
#[derive(Debug)]
struct Conversation {
    role: Role,
    messages: Vec<(Message, Arc<Encoded>)>,
    tools: Option<(Vec<ToolSchema>, Arc<str>)>,
}

/// A message serialised in the client's wire format.
#[derive(Debug)]
enum Encoded {
    OpenAi(openai::Encoded),
    Anthropic(anthropic::Encoded),
}

impl ModelClient {
    pub fn new(config: ModelConfig, egress: Arc<Egress>) -> ModelClient {
        ModelClient {
            config,
            egress,
            encoded: Mutex::new(Vec::new()),
        }
    }

    /// Lets go of the planner's conversation as last serialised (COST-31): called when a turn
    /// ends, so a session between turns holds its history once, not a second time with its
    /// serialised form and the tools' schemas. The next turn's first round serialises it again.
    pub fn forget_serialised(&self) {
        self.encoded
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clear();
    }

    /// Messages held serialised for the planner, for the tests.
    #[cfg(test)]
    fn serialised_messages(&self) -> usize {
        let cache = self.encoded.lock().unwrap_or_else(PoisonError::into_inner);
        cache.iter().map(|c| c.messages.len()).sum()
    }

    /// The request's body. A planner's messages that are the same as those of the last planner
    /// request, position by position, are not serialised again: a turn's history only grows, so
    /// each round serialises its new messages and copies the rest. Equality is checked on the
    /// messages themselves, never assumed.
    fn body(&self, request: &ModelRequest) -> Vec<u8> {
        let encode = |message: &Message| {
            Arc::new(match self.config.api {
                Api::OpenAi => Encoded::OpenAi(openai::encode(message)),
                Api::Anthropic => Encoded::Anthropic(anthropic::encode(message)),
            })
        };
        let encode_tools = |tools: &[ToolSchema]| -> Arc<str> {
            match self.config.api {
                Api::OpenAi => openai::encode_tools(tools),
                Api::Anthropic => anthropic::encode_tools(tools),
            }
            .into()
        };
        let (encoded, tools): (Vec<Arc<Encoded>>, Option<Arc<str>>) =
            if request.role == Role::Planner {
                let mut cache = self.encoded.lock().unwrap_or_else(PoisonError::into_inner);
                let at = match cache.iter().position(|c| c.role == request.role) {
                    Some(at) => at,
                    None => {
                        cache.push(Conversation {
                            role: request.role,
                            messages: Vec::new(),
                            tools: None,
                        });
                        cache.len() - 1
                    }
                };
                let conversation = &mut cache[at];
                let same = conversation
                    .messages
                    .iter()
                    .zip(&request.messages)
                    .take_while(|((kept, _), message)| kept == *message)
                    .count();
                conversation.messages.truncate(same);
                for message in &request.messages[same..] {
                    conversation
                        .messages
                        .push((message.clone(), encode(message)));
                }
                let tools = request
                    .tools
                    .as_deref()
                    .map(|tools| match &conversation.tools {
                        Some((kept, text)) if kept.as_slice() == tools => Arc::clone(text),
                        _ => {
                            let text = encode_tools(tools);
                            conversation.tools = Some((tools.to_vec(), Arc::clone(&text)));
                            text
                        }
                    });
                let encoded = conversation
                    .messages
                    .iter()
                    .map(|(_, e)| Arc::clone(e))
                    .collect();
                (encoded, tools)
            } else {
                (
                    request.messages.iter().map(encode).collect(),
                    request.tools.as_deref().map(encode_tools),
                )
            };
        let name = &self.config.name;
        match self.config.api {
            Api::OpenAi => {
                let parts: Vec<&openai::Encoded> = encoded
                    .iter()
                    .filter_map(|e| match e.as_ref() {
                        Encoded::OpenAi(e) => Some(e),
                        Encoded::Anthropic(_) => None,
                    })
                    .collect();
                openai::assemble(name, request, &parts, tools.as_deref())
            }
            Api::Anthropic => {
                let parts: Vec<&anthropic::Encoded> = encoded
                    .iter()
                    .filter_map(|e| match e.as_ref() {
                        Encoded::Anthropic(e) => Some(e),
                        Encoded::OpenAi(_) => None,
                    })
                    .collect();
                anthropic::assemble(name, request, &parts, tools.as_deref())
            }
        }
    }

    pub fn config(&self) -> &ModelConfig {
        &self.config
    }

    /// The way out this client sends through, shared with `fetch_url` so a fetch is held to the
    /// same certificates and proxy as the model.
    pub fn egress(&self) -> &Arc<Egress> {
        &self.egress
    }

    /// Makes one call, calling `on_event` for each piece of text as it streams in.
    pub async fn complete(
        &self,
        request: &ModelRequest,
        on_event: &mut (dyn FnMut(StreamEvent) + Send),
    ) -> Result<ModelReply, ModelError> {
        let url = match self.config.api {
            Api::OpenAi => format!("{}/chat/completions", self.base_url()),
            Api::Anthropic => format!("{}/v1/messages", self.base_url()),
        };
        let body = self.body(request);
        let http = self
            .authorized(HttpRequest::post(url.clone(), body))
            .header(ROLE_HEADER, request.role.as_str())
            .header("Content-Type", "application/json")
            .header("Accept", "text/event-stream, application/json");
        let opts = SendOptions::for_model(&url, &self.egress);
        let mut response = self
            .egress
            .send_streaming(http, &opts)
            .await
            .map_err(|err| unreachable(&url, err))?;
        if !(200..300).contains(&response.status()) {
            return Err(refusal(&mut response).await);
        }
        if let Some(content_type) = web_page(response.header("content-type")) {
            return Err(ModelError::WebPage {
                url: shown_url(&url),
                content_type,
            });
        }

        if is_json(&response) {
            let body = read_whole(&mut response, &url).await?;
            return match self.config.api {
                Api::OpenAi => openai::parse_reply(&body, on_event),
                Api::Anthropic => anthropic::parse_reply(&body, on_event),
            };
        }

        let mut stream = match self.config.api {
            Api::OpenAi => Assembly::OpenAi(openai::StreamAssembly::default()),
            Api::Anthropic => Assembly::Anthropic(anthropic::StreamAssembly::default()),
        };
        let mut decoder = SseDecoder::default();
        let mut finished = false;
        while !finished {
            let Some(chunk) = response
                .next_chunk()
                .await
                .map_err(|err| unreachable(&url, err))?
            else {
                break;
            };
            for event in decoder.push(&chunk)? {
                if stream.feed(&event, on_event)? {
                    // Whatever follows the end marker is not part of the reply.
                    finished = true;
                    break;
                }
            }
        }
        if !finished {
            for event in decoder.finish()? {
                if stream.feed(&event, on_event)? {
                    finished = true;
                    break;
                }
            }
        }
        if response.truncated() {
            return Err(ModelError::Malformed(format!(
                "the reply was longer than {} bytes and was cut",
                response.received()
            )));
        }
        if !finished {
            return Err(ModelError::Malformed(stream.unfinished().to_owned()));
        }
        stream.finish()
    }

    /// The context length the endpoint's model listing gives for the model in use, where it gives
    /// one: `context_length` (OpenRouter, LM Studio), `max_model_len` (vLLM), `context_window`
    /// or `max_context_length`, or llama.cpp's `meta.n_ctx_train`. `None` where the listing
    /// cannot be had or says nothing.
    pub async fn listed_context_tokens(&self) -> Option<u64> {
        let entry = self.listed_entry().await?;
        [
            "context_length",
            "max_model_len",
            "context_window",
            "max_context_length",
        ]
        .iter()
        .find_map(|k| entry.get(*k).and_then(serde_json::Value::as_u64))
        .or_else(|| {
            entry
                .pointer("/meta/n_ctx_train")
                .and_then(serde_json::Value::as_u64)
        })
        .filter(|n| *n > 0)
    }

    /// What the endpoint's model listing says the model in use takes besides text, where it says
    /// anything: `architecture.input_modalities` (OpenRouter; `image`, and `file` for PDFs), or
    /// `input_modalities` or `modalities.input` on the entry itself (the same words), or a
    /// `capabilities` list naming `vision` (pictures). `None` where the listing cannot be had,
    /// lacks the model, or names none of these.
    pub async fn listed_inputs(&self) -> Option<super::types::Inputs> {
        let entry = self.listed_entry().await?;
        inputs_of_entry(&entry)
    }

    /// The model listing's entry for the model in use.
    async fn listed_entry(&self) -> Option<serde_json::Value> {
        let (_, _, listing) = self.model_listing(Duration::from_secs(10)).await;
        let listing = listing.ok()?;
        if !(200..300).contains(&listing.status) {
            return None;
        }
        let value = serde_json::from_slice::<serde_json::Value>(&listing.body).ok()?;
        value
            .get("data")
            .and_then(|d| d.as_array())?
            .iter()
            .find(|m| m.get("id").and_then(|i| i.as_str()) == Some(self.config.name.as_str()))
            .cloned()
    }

    /// A cheap question for `bravebot doctor`: does the endpoint answer, and with what.
    pub async fn probe(&self) -> Result<String, ModelError> {
        let (url, opts, listing) = self.model_listing(Duration::from_secs(15)).await;
        let listing = listing.map_err(|err| unreachable(&url, err))?;
        let page = web_page(listing.header("content-type"));
        if let (true, Some(content_type)) = ((200..300).contains(&listing.status), page) {
            return Err(ModelError::WebPage {
                url: shown_url(&url),
                content_type,
            });
        }
        if (200..300).contains(&listing.status) {
            let listed = serde_json::from_slice::<serde_json::Value>(&listing.body)
                .ok()
                .and_then(|v| v.get("data").and_then(|d| d.as_array()).map(Vec::len));
            return Ok(match listed {
                Some(1) => "answers (1 model listed)".to_owned(),
                Some(n) => format!("answers ({n} models listed)"),
                None => format!("answers (status {})", listing.status),
            });
        }
        // Not every Anthropic-compatible gateway lists models; the smallest real request is the
        // next cheapest question, and one token is all it may cost.
        if self.config.api == Api::Anthropic && matches!(listing.status, 404 | 405) {
            return self.probe_with_a_message(&opts).await;
        }
        Err(ModelError::Status {
            status: listing.status,
            message: error_message(&listing.body),
        })
    }

    /// `GET` the endpoint's model listing, waiting at most `wait` for its first byte and between
    /// bytes: the URL asked, the options it was sent with, and the answer.
    async fn model_listing(
        &self,
        wait: Duration,
    ) -> (String, SendOptions, Result<HttpResponse, EgressError>) {
        let opts = SendOptions {
            first_byte: Some(wait),
            idle: Some(wait),
            body_cap: 1024 * 1024,
            ..SendOptions::default()
        };
        let url = match self.config.api {
            Api::OpenAi => format!("{}/models", self.base_url()),
            Api::Anthropic => format!("{}/v1/models", self.base_url()),
        };
        let listing = self
            .egress
            .send(self.authorized(HttpRequest::get(url.clone())), &opts)
            .await;
        (url, opts, listing)
    }

    async fn probe_with_a_message(&self, opts: &SendOptions) -> Result<String, ModelError> {
        let url = format!("{}/v1/messages", self.base_url());
        let body = serde_json::json!({
            "model": self.config.name,
            "max_tokens": 1,
            "messages": [{"role": "user", "content": "ping"}],
        });
        let body = serde_json::to_vec(&body).map_err(|err| {
            ModelError::Malformed(format!("the request could not be encoded: {err}"))
        })?;
        let reply = self
            .egress
            .send(
                // No role header: this asks nothing on behalf of a planner, processor or check,
                // and a gateway counting by role should not count it.
                self.authorized(HttpRequest::post(url.clone(), body))
                    .header("Content-Type", "application/json"),
                opts,
            )
            .await
            .map_err(|err| unreachable(&url, err))?;
        if (200..300).contains(&reply.status) {
            Ok(format!("answers (model {} replied)", self.config.name))
        } else {
            Err(ModelError::Status {
                status: reply.status,
                message: error_message(&reply.body),
            })
        }
    }

    fn base_url(&self) -> &str {
        self.config.base_url.trim_end_matches('/')
    }

    /// Adds the credential headers the configured API expects.
    fn authorized(&self, request: HttpRequest) -> HttpRequest {
        let key = self.config.api_key.as_ref().filter(|key| !key.is_empty());
        match self.config.api {
            Api::OpenAi => match key {
                Some(key) => request.header("Authorization", bearer(key)),
                None => request,
            },
            Api::Anthropic => {
                let request = request.header("anthropic-version", "2023-06-01");
                match key {
                    Some(key) => request.header("x-api-key", key.clone()),
                    None => request,
                }
            }
        }
    }
}

/// What one model listing entry says the model takes besides text (see
/// [`ModelClient::listed_inputs`]).
fn inputs_of_entry(entry: &serde_json::Value) -> Option<super::types::Inputs> {
    let words = |at: Option<&serde_json::Value>| -> Option<Vec<String>> {
        at?.as_array().map(|items| {
            items
                .iter()
                .filter_map(|i| i.as_str().map(str::to_ascii_lowercase))
                .collect()
        })
    };
    if let Some(modalities) = words(entry.pointer("/architecture/input_modalities"))
        .or_else(|| words(entry.get("input_modalities")))
        .or_else(|| words(entry.pointer("/modalities/input")))
    {
        let has = |w: &str| modalities.iter().any(|m| m == w);
        return Some(super::types::Inputs {
            images: has("image"),
            pdfs: has("file") || has("pdf"),
        });
    }
    let capabilities = words(entry.get("capabilities"))?;
    Some(super::types::Inputs {
        images: capabilities.iter().any(|c| c == "vision"),
        pdfs: false,
    })
}

/// `Bearer <key>`, built in one allocation so that no copy of the key is left behind in a
/// buffer that grew and was freed.
fn bearer(key: &Secret) -> Secret {
    let mut value = String::with_capacity("Bearer ".len() + key.expose().len());
    value.push_str("Bearer ");
    value.push_str(key.expose());
    Secret::new(value)
}

fn unreachable(url: &str, source: EgressError) -> ModelError {
    ModelError::Unreachable {
        url: shown_url(url),
        source,
    }
}

/// The endpoint as an error may show it: without a query (gateways put keys there) or userinfo.
fn shown_url(url: &str) -> String {
    match url::Url::parse(url) {
        Ok(mut parsed) => {
            parsed.set_query(None);
            parsed.set_fragment(None);
            let _ = parsed.set_username("");
            let _ = parsed.set_password(None);
            parsed.to_string()
        }
        Err(_) => "the configured model url".to_owned(),
    }
}

fn is_json(response: &StreamingResponse) -> bool {
    response.header("content-type").is_some_and(|value| {
        value
            .trim()
            .to_ascii_lowercase()
            .starts_with("application/json")
    })
}

/// The media type of a reply that is a web page (`text/html`, `application/xhtml+xml`); `None`
/// for anything else, a missing header included, since some model
/// servers stream without naming the type. Only the header decides: the page is never read.
fn web_page(content_type: Option<&str>) -> Option<String> {
    let media = content_type?.split(';').next()?.trim().to_ascii_lowercase();
    matches!(media.as_str(), "text/html" | "application/xhtml+xml").then_some(media)
}

async fn read_whole(response: &mut StreamingResponse, url: &str) -> Result<Vec<u8>, ModelError> {
    let mut body = Vec::new();
    while let Some(chunk) = response
        .next_chunk()
        .await
        .map_err(|err| unreachable(url, err))?
    {
        body.extend_from_slice(&chunk);
    }
    if response.truncated() {
        return Err(ModelError::Malformed(format!(
            "the reply was longer than {} bytes and was cut",
            body.len()
        )));
    }
    Ok(body)
}

/// A non-2xx answer as an error, with what the server said about it.
async fn refusal(response: &mut StreamingResponse) -> ModelError {
    let mut body = Vec::new();
    // The message is a courtesy: a body that breaks off still leaves the status to report.
    while let Ok(Some(chunk)) = response.next_chunk().await {
        body.extend_from_slice(&chunk);
        if body.len() >= ERROR_BODY_CAP {
            break;
        }
    }
    let mut message = error_message(&body);
    // OpenAI names this refusal in `error.code` rather than in its message.
    let code = serde_json::from_slice::<serde_json::Value>(&body)
        .ok()
        .and_then(|v| {
            v.pointer("/error/code")
                .and_then(|c| c.as_str())
                .map(str::to_owned)
        });
    if code.as_deref() == Some("context_length_exceeded") {
        message.push_str(" (context_length_exceeded)");
    }
    ModelError::Status {
        status: response.status(),
        message,
    }
}

/// The message in an error body: `error.message` (both APIs), `error` or `message` as text, or
/// the body itself; trimmed to [`ERROR_MESSAGE_CHARS`].
pub(super) fn error_message(body: &[u8]) -> String {
    let text = match serde_json::from_slice::<serde_json::Value>(body) {
        Ok(value) => {
            json_error_text(&value).unwrap_or_else(|| String::from_utf8_lossy(body).into_owned())
        }
        Err(_) => String::from_utf8_lossy(body).into_owned(),
    };
    let text = text.split_whitespace().collect::<Vec<_>>().join(" ");
    if text.is_empty() {
        return "no message".to_owned();
    }
    cut(&text, ERROR_MESSAGE_CHARS)
}

/// The reply being put together from a stream, in either format.
enum Assembly {
    OpenAi(openai::StreamAssembly),
    Anthropic(anthropic::StreamAssembly),
}

impl Assembly {
    /// Takes one event; `true` once the stream's end marker has arrived.
    fn feed(
        &mut self,
        event: &SseEvent,
        on_event: &mut (dyn FnMut(StreamEvent) + Send),
    ) -> Result<bool, ModelError> {
        match self {
            Assembly::OpenAi(stream) => stream.feed(&event.data, on_event),
            Assembly::Anthropic(stream) => stream.feed(&event.data, on_event),
        }
    }

    fn unfinished(&self) -> &'static str {
        match self {
            Assembly::OpenAi(_) => "the stream ended before data: [DONE]",
            Assembly::Anthropic(_) => "the stream ended before message_stop",
        }
    }

    fn finish(self) -> Result<ModelReply, ModelError> {
        match self {
            Assembly::OpenAi(stream) => stream.finish(),
            Assembly::Anthropic(stream) => stream.finish(),
        }
    }
}

/// One server-sent event.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(super) struct SseEvent {
    pub event: Option<String>,
    pub data: String,
}

/// Reads server-sent events out of chunks split anywhere, even inside a character.
#[derive(Debug, Default)]
pub(super) struct SseDecoder {
    pending: Vec<u8>,
    event: Option<String>,
    data: Option<String>,
}

impl SseDecoder {
    pub fn push(&mut self, bytes: &[u8]) -> Result<Vec<SseEvent>, ModelError> {
        self.pending.extend_from_slice(bytes);
        let mut events = Vec::new();
        let mut start = 0;
        while let Some(offset) = self.pending[start..].iter().position(|b| *b == b'\n') {
            let end = start + offset;
            let line = std::str::from_utf8(&self.pending[start..end])
                .map_err(|_| ModelError::Malformed("the event stream is not utf-8".to_owned()))?;
            let line = line.strip_suffix('\r').unwrap_or(line).to_owned();
            self.line(&line, &mut events);
            start = end + 1;
        }
        self.pending.drain(..start);
        Ok(events)
    }

    /// Ends the stream, giving out an event the server did not close with a blank line.
    pub fn finish(&mut self) -> Result<Vec<SseEvent>, ModelError> {
        let mut events = Vec::new();
        if !self.pending.is_empty() {
            let rest = std::mem::take(&mut self.pending);
            let line = String::from_utf8(rest)
                .map_err(|_| ModelError::Malformed("the event stream is not utf-8".to_owned()))?;
            self.line(line.trim_end_matches('\r'), &mut events);
        }
        self.line("", &mut events);
        Ok(events)
    }

    fn line(&mut self, line: &str, events: &mut Vec<SseEvent>) {
        if line.is_empty() {
            match self.data.take() {
                Some(data) => events.push(SseEvent {
                    event: self.event.take(),
                    data,
                }),
                None => self.event = None,
            }
            return;
        }
        if line.starts_with(':') {
            return;
        }
        let (field, value) = match line.split_once(':') {
            Some((field, value)) => (field, value.strip_prefix(' ').unwrap_or(value)),
            None => (line, ""),
        };
        match field {
            "data" => match &mut self.data {
                Some(data) => {
                    data.push('\n');
                    data.push_str(value);
                }
                None => self.data = Some(value.to_owned()),
            },
            "event" => self.event = Some(value.to_owned()),
            _ => {}
        }
    }
}

#[cfg(test)]
mod tests {
    use serde_json::{Value, json};

    use super::*;
    use crate::egress::test_server::{Answer, TestServer, response};
    use crate::model::{Message, Part, Role, ToolCall, ToolSchema, Usage};

    fn client(api: Api, base_url: String, key: Option<&str>) -> ModelClient {
        let egress = Arc::new(Egress::from_env(&|_| None).unwrap());
        ModelClient::new(
            ModelConfig {
                api,
                base_url,
                name: "test-model".to_owned(),
                api_key: key.map(|k| Secret::new(k.to_owned())),
            },
            egress,
        )
    }

    fn request(role: Role, tools: Option<Vec<ToolSchema>>) -> ModelRequest {
        ModelRequest {
            role,
            system: "be brief".to_owned(),
            messages: vec![Message::User(vec![Part::Text("hello".to_owned())])],
            tools,
            max_tokens: 256,
        }
    }

    // Verifies: MODEL-5
    #[test]
    fn cached_bodies_equal_a_fresh_serialisation_as_the_history_grows_and_changes() {
        let picture = Part::Image {
            media_type: "image/png".to_owned(),
            data: vec![1, 2, 3, 250],
        };
        let history = vec![
            Message::User(vec![Part::Text("read \"a\"\n\u{1}".to_owned())]),
            Message::Assistant {
                text: String::new(),
                tool_calls: vec![ToolCall {
                    id: "call_1".to_owned(),
                    name: "read_file".to_owned(),
                    arguments: r#"{"path":"a"}"#.to_owned(),
                }],
            },
            Message::ToolResult {
                call_id: "call_1".to_owned(),
                parts: vec![Part::Text("one".to_owned()), picture.clone()],
            },
            Message::ToolResult {
                call_id: "call_2".to_owned(),
                parts: vec![picture, Part::Text("two".to_owned())],
            },
            Message::Assistant {
                text: "done".to_owned(),
                tool_calls: Vec::new(),
            },
            Message::User(vec![Part::Text("again".to_owned())]),
            Message::User(vec![
                Part::Text("a released PDF".to_owned()),
                Part::Pdf {
                    filename: "r.pdf".to_owned(),
                    data: b"%PDF".to_vec(),
                },
            ]),
        ];
        for api in [Api::OpenAi, Api::Anthropic] {
            let client = client(api, "http://127.0.0.1:1".to_owned(), None);
            // Compared as JSON values: key order is serde_json's to choose (it keeps insertion
            // order when a dependency turns `preserve_order` on), the content is not.
            let reference = |request: &ModelRequest| {
                match api {
                    Api::OpenAi => {
                        serde_json::to_value(openai::request_body("test-model", request))
                    }
                    Api::Anthropic => {
                        serde_json::to_value(anthropic::request_body("test-model", request))
                    }
                }
                .unwrap()
            };
            let body = |request: &ModelRequest| {
                serde_json::from_slice::<serde_json::Value>(&client.body(request))
                    .expect("the body is JSON")
            };
            let mut request = request(Role::Planner, Some(vec![read_file_tool()]));
            request.messages.clear();
            // The history grows a message a round, as in a turn ...
            for message in &history {
                request.messages.push(message.clone());
                assert_eq!(
                    body(&request),
                    reference(&request),
                    "{api:?} after {} messages",
                    request.messages.len()
                );
            }
            // ... and a message changed under the cache, other tools, or another role are
            // serialised afresh.
            request.messages[2] = Message::User(vec![Part::Text("changed".to_owned())]);
            assert_eq!(body(&request), reference(&request), "{api:?} changed");
            request.tools = None;
            assert_eq!(body(&request), reference(&request), "{api:?} no tools");
            request.role = Role::Check;
            request.system.clear();
            assert_eq!(body(&request), reference(&request), "{api:?} check");
        }
    }

    // Verifies: PIC-5
    #[test]
    fn a_pdf_is_a_file_part_in_openai_and_a_document_block_in_anthropic() {
        let pdf = Part::Pdf {
            filename: "r.pdf".to_owned(),
            data: b"%PDF".to_vec(),
        };
        let png = Part::Image {
            media_type: "image/png".to_owned(),
            data: b"png".to_vec(),
        };
        let mut request = request(Role::Check, None);
        request.messages = vec![Message::User(vec![Part::Text("look".to_owned()), png, pdf])];
        let body = |api| {
            let client = client(api, "http://127.0.0.1:1".to_owned(), None);
            serde_json::from_slice::<serde_json::Value>(&client.body(&request)).unwrap()
        };
        assert_eq!(
            body(Api::OpenAi)["messages"][1]["content"],
            json!([
                {"type": "text", "text": "look"},
                {"type": "image_url", "image_url": {"url": "data:image/png;base64,cG5n"}},
                {"type": "file", "file": {"filename": "r.pdf", "file_data": "data:application/pdf;base64,JVBERg=="}},
            ])
        );
        assert_eq!(
            body(Api::Anthropic)["messages"][0]["content"],
            json!([
                {"type": "text", "text": "look"},
                {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": "cG5n"}},
                {"type": "document", "source": {"type": "base64", "media_type": "application/pdf", "data": "JVBERg=="}},
            ])
        );
    }

    // Verifies: COST-31
    #[test]
    fn a_turn_that_ends_lets_go_of_the_serialised_conversation_and_the_next_is_the_same() {
        for api in [Api::OpenAi, Api::Anthropic] {
            let client = client(api, "http://127.0.0.1:1".to_owned(), None);
            let mut request = request(Role::Planner, Some(vec![read_file_tool()]));
            request.messages = vec![
                Message::User(vec![Part::Text("first".to_owned())]),
                Message::Assistant {
                    text: "noted".to_owned(),
                    tool_calls: Vec::new(),
                },
            ];
            let before = client.body(&request);
            assert_eq!(client.serialised_messages(), 2, "{api:?}");
            client.forget_serialised();
            assert_eq!(client.serialised_messages(), 0, "{api:?}");
            assert_eq!(client.body(&request), before, "{api:?} serialised again");
        }
    }

    /// A turn's history as it grows, one planner request a round: the person's prompt, then
    /// each round's reply calling a tool (twice in the second round) and the results after it.
    fn rounds_of_history() -> Vec<Vec<Message>> {
        let mut history = vec![Message::User(vec![Part::Text("fix it".to_owned())])];
        let mut requests = vec![history.clone()];
        for round in 1..=4 {
            let calls: Vec<ToolCall> = (0..if round == 2 { 2 } else { 1 })
                .map(|n| ToolCall {
                    id: format!("call_{round}_{n}"),
                    name: "read_file".to_owned(),
                    arguments: format!(r#"{{"path":"f{round}.rs"}}"#),
                })
                .collect();
            history.push(Message::Assistant {
                text: format!("round {round}"),
                tool_calls: calls.clone(),
            });
            for call in calls {
                history.push(Message::ToolResult {
                    call_id: call.id,
                    parts: vec![Part::Text(format!("contents of round {round}"))],
                });
            }
            requests.push(history.clone());
        }
        requests
    }

    /// `value` with every `cache_control` key taken out.
    fn without_breakpoints(value: &Value) -> Value {
        match value {
            Value::Object(map) => Value::Object(
                map.iter()
                    .filter(|(k, _)| k.as_str() != "cache_control")
                    .map(|(k, v)| (k.clone(), without_breakpoints(v)))
                    .collect(),
            ),
            Value::Array(items) => Value::Array(items.iter().map(without_breakpoints).collect()),
            other => other.clone(),
        }
    }

    /// Where `body` carries a breakpoint: `tools/N`, `system`, `messages/N` (on the message's
    /// last block; one on any other block is named `messages/N/block M`).
    fn breakpoints(body: &Value) -> Vec<String> {
        let mut found = Vec::new();
        let marked = |v: &Value| v.get("cache_control") == Some(&json!({"type": "ephemeral"}));
        for (i, tool) in body["tools"].as_array().into_iter().flatten().enumerate() {
            if marked(tool) {
                found.push(format!("tools/{i}"));
            }
        }
        if body["system"].as_array().into_iter().flatten().any(marked) {
            found.push("system".to_owned());
        }
        for (i, message) in body["messages"]
            .as_array()
            .into_iter()
            .flatten()
            .enumerate()
        {
            let blocks = message["content"].as_array().cloned().unwrap_or_default();
            for (j, block) in blocks.iter().enumerate() {
                if marked(block) {
                    found.push(if j + 1 == blocks.len() {
                        format!("messages/{i}")
                    } else {
                        format!("messages/{i}/block {j}")
                    });
                }
            }
        }
        // Counted over the whole body too, so a breakpoint anywhere else is seen.
        let all = body.to_string().matches("\"cache_control\"").count();
        assert_eq!(
            all,
            found.len(),
            "a breakpoint off the expected places: {body}"
        );
        found
    }

    // Verifies: MODEL-7
    #[test]
    fn anthropic_planner_requests_mark_tools_system_and_history_within_four_breakpoints() {
        let client = client(Api::Anthropic, "http://127.0.0.1:1".to_owned(), None);
        let tools = vec![
            ToolSchema {
                name: "search".to_owned(),
                ..read_file_tool()
            },
            read_file_tool(),
        ];
        let mut request = request(Role::Planner, Some(tools));
        let mut seen = Vec::new();
        for history in rounds_of_history() {
            request.messages = history;
            let body: Value = serde_json::from_slice(&client.body(&request)).unwrap();
            assert_eq!(
                body,
                serde_json::to_value(anthropic::request_body("test-model", &request)).unwrap()
            );
            seen.push(breakpoints(&body));
        }
        // The last tool, the system prompt, the newest message, and the message the previous
        // request ended with (two before it, past the planner's reply): never more than four.
        assert_eq!(seen[0], ["tools/1", "system", "messages/0"]);
        for (round, found) in seen.iter().enumerate().skip(1) {
            let newest = 2 * round;
            assert_eq!(
                found,
                &[
                    "tools/1".to_owned(),
                    "system".to_owned(),
                    format!("messages/{}", newest - 2),
                    format!("messages/{newest}"),
                ],
                "round {round}"
            );
            assert!(found.len() <= anthropic::MAX_BREAKPOINTS);
        }
        // A delegate's request offers tools and is marked the same way; a check's and a
        // processor's offer none and carry no breakpoint.
        request.role = Role::Delegate;
        let body: Value = serde_json::from_slice(&client.body(&request)).unwrap();
        assert_eq!(breakpoints(&body).len(), 4);
        for role in [Role::Check, Role::Processor] {
            let body: Value =
                serde_json::from_slice(&client.body(&self::request(role, None))).unwrap();
            assert_eq!(breakpoints(&body), Vec::<String>::new(), "{role:?}");
            assert_eq!(body["system"], json!("be brief"));
        }
    }

    // Verifies: MODEL-8, MODEL-9
    #[test]
    fn each_round_s_body_begins_with_the_bytes_of_the_round_before() {
        for api in [Api::OpenAi, Api::Anthropic] {
            let client = client(api, "http://127.0.0.1:1".to_owned(), None);
            let mut request = request(Role::Planner, Some(vec![read_file_tool()]));
            let mut before: Option<(Vec<u8>, Value)> = None;
            for history in rounds_of_history() {
                request.messages = history;
                let bytes = client.body(&request);
                let body: Value = serde_json::from_slice(&bytes).unwrap();
                // Tools, then the system prompt, then the history.
                let text = String::from_utf8(bytes.clone()).unwrap();
                let (tools, system, messages) = (
                    text.find("\"tools\"").unwrap(),
                    text.find("be brief").unwrap(),
                    text.find("fix it").unwrap(),
                );
                assert!(tools < system && system < messages, "{api:?}: {text}");
                if let Some((old_bytes, old)) = &before {
                    match api {
                        // The whole earlier body but its closing brackets, byte for byte.
                        Api::OpenAi => {
                            let open = old_bytes.strip_suffix(b"]}").unwrap();
                            assert!(bytes.starts_with(open), "{api:?}: {text}");
                        }
                        // Byte for byte up to the first breakpoint that moved, and every
                        // earlier message unchanged but for the breakpoints.
                        Api::Anthropic => {
                            let first = String::from_utf8(old_bytes.clone()).unwrap();
                            let stable = first.find("fix it").unwrap();
                            assert_eq!(text[..stable], first[..stable], "{api:?}");
                            let (old, new) = (without_breakpoints(old), without_breakpoints(&body));
                            let old = old["messages"].as_array().unwrap();
                            assert_eq!(old[..], new["messages"].as_array().unwrap()[..old.len()]);
                        }
                    }
                    assert_eq!(body["tools"], old["tools"], "{api:?}: the same tools");
                }
                before = Some((bytes, body));
            }
        }
    }

    fn read_file_tool() -> ToolSchema {
        ToolSchema {
            name: "read_file".to_owned(),
            description: "read a file".to_owned(),
            parameters: json!({"type": "object", "properties": {"path": {"type": "string"}}}),
        }
    }

    /// A streamed reply: each item becomes one `data:` event.
    fn sse(events: &[Value], done: bool) -> Answer {
        let mut body = String::new();
        for event in events {
            body.push_str(&format!("data: {event}\n\n"));
        }
        if done {
            body.push_str("data: [DONE]\n\n");
        }
        Answer::Raw(response(
            200,
            &[("Content-Type", "text/event-stream")],
            body.as_bytes(),
        ))
    }

    /// A typed Anthropic event stream.
    fn anthropic_sse(events: &[Value]) -> Answer {
        let mut body = String::new();
        for event in events {
            let kind = event["type"].as_str().unwrap();
            body.push_str(&format!("event: {kind}\ndata: {event}\n\n"));
        }
        Answer::Raw(response(
            200,
            &[("Content-Type", "text/event-stream")],
            body.as_bytes(),
        ))
    }

    fn openai_text_stream(text: &str) -> Answer {
        sse(
            &[
                json!({"choices": [{"index": 0, "delta": {"role": "assistant", "content": text}}]}),
                json!({"choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]}),
            ],
            true,
        )
    }

    async fn complete(
        client: &ModelClient,
        request: &ModelRequest,
    ) -> (Result<ModelReply, ModelError>, Vec<String>) {
        let mut deltas = Vec::new();
        let mut on_event = |event: StreamEvent| match event {
            StreamEvent::TextDelta(text) => deltas.push(text),
        };
        let result = client.complete(request, &mut on_event).await;
        (result, deltas)
    }

    // Verifies: MODEL-2
    #[tokio::test]
    async fn openai_processor_request_carries_its_role_and_no_tools_key() {
        let server = TestServer::start(vec![openai_text_stream("done")]).await;
        let client = client(Api::OpenAi, server.url("/v1/"), Some("sk-test"));
        let (reply, _) = complete(&client, &request(Role::Processor, None)).await;
        assert_eq!(reply.unwrap().text, "done");
        let seen = &server.requests()[0];
        assert_eq!(
            (seen.method.as_str(), seen.path.as_str()),
            ("POST", "/v1/chat/completions")
        );
        assert_eq!(seen.header("x-bravebot-role"), Some("processor"));
        assert_eq!(seen.header("authorization"), Some("Bearer sk-test"));
        let body = seen.json();
        assert!(body.get("tools").is_none(), "{body}");
        assert_eq!(body["stream"], json!(true));
        assert_eq!(body["model"], json!("test-model"));
        assert_eq!(
            body["messages"][0],
            json!({"role": "system", "content": "be brief"})
        );
        assert_eq!(
            body["messages"][1],
            json!({"role": "user", "content": "hello"})
        );
    }

    // Verifies: MODEL-2
    #[tokio::test]
    async fn openai_planner_request_offers_tools_and_echoes_tool_call_ids() {
        let server = TestServer::start(vec![openai_text_stream("ok")]).await;
        let client = client(Api::OpenAi, server.url("/v1"), None);
        let mut planner = request(Role::Planner, Some(vec![read_file_tool()]));
        planner.messages.push(Message::Assistant {
            text: String::new(),
            tool_calls: vec![ToolCall {
                id: "call_abc".to_owned(),
                name: "read_file".to_owned(),
                arguments: r#"{"path":"a.md"}"#.to_owned(),
            }],
        });
        planner.messages.push(Message::ToolResult {
            call_id: "call_abc".to_owned(),
            parts: vec![
                Part::Text("ref:1 a.md, 3 lines".to_owned()),
                Part::Image {
                    media_type: "image/png".to_owned(),
                    data: b"png".to_vec(),
                },
            ],
        });
        let (reply, _) = complete(&client, &planner).await;
        reply.unwrap();
        let seen = &server.requests()[0];
        assert_eq!(seen.header("x-bravebot-role"), Some("planner"));
        assert_eq!(seen.header("authorization"), None);
        let body = seen.json();
        assert_eq!(
            body["tools"],
            json!([{"type": "function", "function": {
                "name": "read_file",
                "description": "read a file",
                "parameters": {"type": "object", "properties": {"path": {"type": "string"}}},
            }}])
        );
        let messages = body["messages"].as_array().unwrap();
        assert_eq!(
            messages[2],
            json!({"role": "assistant", "content": null, "tool_calls": [{
                "id": "call_abc", "type": "function",
                "function": {"name": "read_file", "arguments": "{\"path\":\"a.md\"}"},
            }]})
        );
        assert_eq!(
            messages[3],
            json!({"role": "tool", "tool_call_id": "call_abc", "content": "ref:1 a.md, 3 lines"})
        );
        assert_eq!(
            messages[4],
            json!({"role": "user", "content": [{"type": "image_url",
                "image_url": {"url": "data:image/png;base64,cG5n"}}]})
        );
    }

    // Verifies: MODEL-1
    #[tokio::test]
    async fn openai_stream_assembles_text_and_a_tool_call_split_over_chunks() {
        let server = TestServer::start(vec![sse(
            &[
                json!({"choices": [{"index": 0, "delta": {"role": "assistant", "content": "Let me "}}]}),
                json!({"choices": [{"index": 0, "delta": {"content": "look."}}]}),
                json!({"choices": [{"index": 0, "delta": {"tool_calls": [{"index": 0, "id": "call_7",
                    "type": "function", "function": {"name": "read_file", "arguments": ""}}]}}]}),
                json!({"choices": [{"index": 0, "delta": {"tool_calls": [{"index": 0,
                    "function": {"arguments": "{\"pa"}}]}}]}),
                json!({"choices": [{"index": 0, "delta": {"tool_calls": [{"index": 0,
                    "function": {"arguments": "th\": \"a.md\"}"}}]}}]}),
                json!({"choices": [{"index": 0, "delta": {}, "finish_reason": "tool_calls"}]}),
            ],
            true,
        )])
        .await;
        let client = client(Api::OpenAi, server.url("/v1"), None);
        let (reply, deltas) = complete(&client, &request(Role::Planner, Some(vec![]))).await;
        let reply = reply.unwrap();
        assert_eq!(deltas, ["Let me ", "look."]);
        assert_eq!(reply.text, "Let me look.");
        assert_eq!(
            reply.tool_calls,
            [ToolCall {
                id: "call_7".to_owned(),
                name: "read_file".to_owned(),
                arguments: r#"{"path": "a.md"}"#.to_owned(),
            }]
        );
        assert!(!reply.truncated);
    }

    #[test]
    fn sse_decoder_reads_the_same_events_however_the_bytes_are_split() {
        let stream = "event: one\ndata: {\"a\":\"é\"}\r\n\r\n: comment\ndata: x\ndata: y\n\ndata: [DONE]\n\n";
        let whole = {
            let mut decoder = SseDecoder::default();
            let mut events = decoder.push(stream.as_bytes()).unwrap();
            events.extend(decoder.finish().unwrap());
            events
        };
        assert_eq!(whole.len(), 3);
        assert_eq!(whole[0].event.as_deref(), Some("one"));
        assert_eq!(whole[0].data, "{\"a\":\"é\"}");
        assert_eq!(whole[1].data, "x\ny");
        assert_eq!(whole[2].data, "[DONE]");
        for split in 1..stream.len() {
            let mut decoder = SseDecoder::default();
            let (a, b) = stream.as_bytes().split_at(split);
            let mut events = decoder.push(a).unwrap();
            events.extend(decoder.push(b).unwrap());
            events.extend(decoder.finish().unwrap());
            assert_eq!(events, whole, "split at {split}");
        }
    }

    // Verifies: MODEL-1
    #[tokio::test]
    async fn openai_accepts_a_non_streaming_reply() {
        let body = json!({"choices": [{"index": 0, "finish_reason": "length", "message": {
            "role": "assistant", "content": "partial",
            "tool_calls": [{"id": "c1", "type": "function",
                "function": {"name": "list_files", "arguments": "{}"}}],
        }}]});
        let server = TestServer::start(vec![Answer::Raw(response(
            200,
            &[("Content-Type", "application/json")],
            body.to_string().as_bytes(),
        ))])
        .await;
        let client = client(Api::OpenAi, server.url("/v1"), None);
        let (reply, deltas) = complete(&client, &request(Role::Planner, Some(vec![]))).await;
        let reply = reply.unwrap();
        assert_eq!(reply.text, "partial");
        assert_eq!(deltas, ["partial"]);
        assert_eq!(reply.tool_calls[0].name, "list_files");
        assert!(reply.truncated);
    }

    // Verifies: MODEL-3
    #[tokio::test]
    async fn openai_stream_cut_by_the_token_limit_is_marked_truncated() {
        let server = TestServer::start(vec![sse(
            &[json!({"choices": [{"index": 0, "delta": {"content": "half"}, "finish_reason": "length"}]})],
            true,
        )])
        .await;
        let client = client(Api::OpenAi, server.url("/v1"), None);
        let (reply, _) = complete(&client, &request(Role::Check, None)).await;
        assert!(reply.unwrap().truncated);
    }

    // Verifies: MODEL-3
    #[tokio::test]
    async fn openai_stream_ending_without_done_is_malformed() {
        let server = TestServer::start(vec![sse(
            &[json!({"choices": [{"index": 0, "delta": {"content": "and then"}}]})],
            false,
        )])
        .await;
        let client = client(Api::OpenAi, server.url("/v1"), None);
        let (reply, _) = complete(&client, &request(Role::Planner, None)).await;
        let err = reply.unwrap_err();
        assert!(matches!(err, ModelError::Malformed(_)), "{err}");
        assert!(err.to_string().contains("[DONE]"), "{err}");
    }

    // Verifies: MODEL-6
    #[tokio::test]
    async fn a_200_web_page_is_named_as_a_web_page_by_its_content_type_not_a_broken_stream() {
        // A page whose words mimic a stream: only the content type may decide.
        let page = b"<html><body>data: [DONE]\n\nSign in to the network</body></html>";
        let html = |content_type: &str| {
            Answer::Raw(response(200, &[("Content-Type", content_type)], page))
        };
        for api in [Api::OpenAi, Api::Anthropic] {
            let server = TestServer::start(vec![
                html("text/html; charset=utf-8"),
                html("application/xhtml+xml"),
            ])
            .await;
            let client = client(api, server.url("/v1?key=secret"), None);
            for expected in ["text/html", "application/xhtml+xml"] {
                let (reply, deltas) = complete(&client, &request(Role::Planner, None)).await;
                let err = reply.unwrap_err();
                assert!(
                    matches!(&err, ModelError::WebPage { content_type, .. } if content_type == expected),
                    "{api:?}: {err:?}"
                );
                let said = err.to_string();
                assert!(
                    said.contains("web page") && said.contains("base URL"),
                    "{said}"
                );
                assert!(
                    !said.contains("[DONE]") && !said.contains("Sign in"),
                    "{said}"
                );
                assert!(!said.contains("secret"), "{said}");
                assert!(deltas.is_empty(), "{deltas:?}");
                assert!(!err.retryable());
            }
        }
    }

    // Verifies: MODEL-6
    #[tokio::test]
    async fn a_stream_without_a_content_type_is_still_read_as_a_stream() {
        let server = TestServer::start(vec![Answer::Raw(response(
            200,
            &[],
            b"data: {\"choices\": [{\"index\": 0, \"delta\": {\"content\": \"hi\"}, \"finish_reason\": \"stop\"}]}\n\ndata: [DONE]\n\n",
        ))])
        .await;
        let client = client(Api::OpenAi, server.url("/v1"), None);
        let (reply, _) = complete(&client, &request(Role::Planner, None)).await;
        assert_eq!(reply.unwrap().text, "hi");
    }

    // Verifies: MODEL-3
    #[tokio::test]
    async fn openai_stream_with_bad_json_or_an_error_object_is_malformed() {
        let bad = Answer::Raw(response(
            200,
            &[("Content-Type", "text/event-stream")],
            b"data: {not json\n\ndata: [DONE]\n\n",
        ));
        let error = sse(&[json!({"error": {"message": "model overloaded"}})], true);
        let server = TestServer::start(vec![bad, error]).await;
        let client = client(Api::OpenAi, server.url("/v1"), None);
        let (first, _) = complete(&client, &request(Role::Planner, None)).await;
        assert!(matches!(first, Err(ModelError::Malformed(ref m)) if m.contains("not json")));
        let (second, _) = complete(&client, &request(Role::Planner, None)).await;
        assert!(
            matches!(second, Err(ModelError::Malformed(ref m)) if m.contains("model overloaded")),
            "{second:?}"
        );
    }

    // Verifies: MODEL-3
    #[tokio::test]
    async fn openai_500_is_a_status_error_with_the_message_trimmed() {
        let long = "x".repeat(1000);
        let body = json!({"error": {"message": format!("boom {long}")}}).to_string();
        let server = TestServer::start(vec![Answer::Raw(response(
            500,
            &[("Content-Type", "application/json")],
            body.as_bytes(),
        ))])
        .await;
        let client = client(Api::OpenAi, server.url("/v1"), None);
        let (reply, _) = complete(&client, &request(Role::Planner, None)).await;
        let Err(ModelError::Status { status, message }) = reply else {
            panic!("expected a status error, got {reply:?}");
        };
        assert_eq!(status, 500);
        assert!(message.starts_with("boom xxx"), "{message}");
        assert_eq!(
            message.chars().count(),
            301,
            "300 characters and an ellipsis"
        );
        assert_eq!(server.connections(), 1, "a 500 is not retried");
    }

    #[tokio::test]
    async fn unreachable_endpoint_is_a_retryable_error() {
        let port = std::net::TcpListener::bind("127.0.0.1:0")
            .unwrap()
            .local_addr()
            .unwrap()
            .port();
        let client = client(Api::OpenAi, format!("http://127.0.0.1:{port}/v1"), None);
        let (reply, _) = complete(&client, &request(Role::Planner, None)).await;
        let err = reply.unwrap_err();
        assert!(matches!(err, ModelError::Unreachable { .. }), "{err}");
        assert!(err.retryable());
    }

    #[tokio::test]
    async fn openai_probe_counts_the_models_listed() {
        let listing = json!({"object": "list", "data": [{"id": "a"}, {"id": "b"}]});
        let server = TestServer::start(vec![Answer::Raw(response(
            200,
            &[("Content-Type", "application/json")],
            listing.to_string().as_bytes(),
        ))])
        .await;
        let client = client(Api::OpenAi, server.url("/v1"), Some("sk-probe"));
        assert_eq!(client.probe().await.unwrap(), "answers (2 models listed)");
        let seen = &server.requests()[0];
        assert_eq!(
            (seen.method.as_str(), seen.path.as_str()),
            ("GET", "/v1/models")
        );
        assert_eq!(seen.header("authorization"), Some("Bearer sk-probe"));
    }

    // Verifies: MODEL-6
    #[tokio::test]
    async fn the_probe_names_a_web_page_listing_as_a_web_page() {
        let server = TestServer::start(vec![Answer::Raw(response(
            200,
            &[("Content-Type", "text/html")],
            b"<html><body>Welcome</body></html>",
        ))])
        .await;
        let client = client(Api::OpenAi, server.url("/"), None);
        let err = client.probe().await.unwrap_err();
        assert!(matches!(err, ModelError::WebPage { .. }), "{err:?}");
        assert!(err.to_string().contains("base URL"), "{err}");
    }

    // Verifies: SESS-12
    #[tokio::test]
    async fn the_model_listing_gives_the_context_of_the_model_in_use_where_it_says() {
        let listing = json!({"object": "list", "data": [
            {"id": "other", "context_length": 4096},
            {"id": "test-model", "max_model_len": 65536},
        ]});
        let server = TestServer::start(vec![
            Answer::Raw(response(
                200,
                &[("Content-Type", "application/json")],
                listing.to_string().as_bytes(),
            )),
            Answer::Raw(response(
                200,
                &[("Content-Type", "application/json")],
                json!({"data": [{"id": "test-model"}]})
                    .to_string()
                    .as_bytes(),
            )),
        ])
        .await;
        let client = client(Api::OpenAi, server.url("/v1"), None);
        assert_eq!(client.listed_context_tokens().await, Some(65536));
        assert_eq!(
            client.listed_context_tokens().await,
            None,
            "a listing that says nothing gives nothing"
        );
    }

    // Verifies: PIC-2
    #[test]
    fn the_model_listing_says_what_the_model_takes_besides_text_where_it_says() {
        let inputs = |entry: serde_json::Value| inputs_of_entry(&entry);
        let both = Some(super::super::types::Inputs {
            images: true,
            pdfs: true,
        });
        let pictures = Some(super::super::types::Inputs {
            images: true,
            pdfs: false,
        });
        let text = Some(super::super::types::Inputs::default());
        assert_eq!(
            inputs(json!({"architecture": {"input_modalities": ["text", "image", "file"]}})),
            both
        );
        assert_eq!(
            inputs(json!({"input_modalities": ["TEXT", "Image"]})),
            pictures
        );
        assert_eq!(
            inputs(json!({"modalities": {"input": ["text", "pdf"]}})),
            Some(super::super::types::Inputs {
                images: false,
                pdfs: true
            })
        );
        assert_eq!(
            inputs(json!({"capabilities": ["completion", "vision"]})),
            pictures
        );
        assert_eq!(
            inputs(json!({"architecture": {"input_modalities": ["text"]}})),
            text
        );
        assert_eq!(inputs(json!({"capabilities": ["completion"]})), text);
        assert_eq!(
            inputs(json!({"id": "m", "context_length": 4096})),
            None,
            "says nothing"
        );
    }

    // Verifies: SESS-13
    #[test]
    fn a_context_too_long_refusal_is_told_apart_from_other_refusals() {
        let status = |status, message: &str| ModelError::Status {
            status,
            message: message.to_owned(),
        };
        assert!(
            status(400, "This model's maximum context length is 8192 tokens").context_too_long()
        );
        assert!(
            status(400, "prompt is too long: 250000 tokens > 200000 maximum").context_too_long()
        );
        assert!(status(400, "bad request (context_length_exceeded)").context_too_long());
        assert!(!status(400, "invalid tool schema").context_too_long());
        assert!(!status(500, "context length").context_too_long());
        assert!(!status(400, "context length").retryable());
    }

    // Verifies: MODEL-1
    #[tokio::test]
    async fn anthropic_request_shape_merges_tool_results_and_sends_its_headers() {
        let server = TestServer::start(vec![
            anthropic_sse(&[
                json!({"type": "message_start", "message": {"id": "m1"}}),
                json!({"type": "message_stop"}),
            ]),
            anthropic_sse(&[json!({"type": "message_stop"})]),
        ])
        .await;
        let client = client(Api::Anthropic, server.url(""), Some("sk-ant"));
        let mut planner = request(Role::Planner, Some(vec![read_file_tool()]));
        planner.messages.push(Message::Assistant {
            text: "reading".to_owned(),
            tool_calls: vec![
                ToolCall {
                    id: "toolu_1".to_owned(),
                    name: "read_file".to_owned(),
                    arguments: r#"{"path":"a"}"#.to_owned(),
                },
                ToolCall {
                    id: "toolu_2".to_owned(),
                    name: "read_file".to_owned(),
                    arguments: r#"{"path":"b"}"#.to_owned(),
                },
            ],
        });
        for id in ["toolu_1", "toolu_2"] {
            planner.messages.push(Message::ToolResult {
                call_id: id.to_owned(),
                parts: vec![Part::Text(format!("result of {id}"))],
            });
        }
        complete(&client, &planner).await.0.unwrap();
        complete(&client, &request(Role::Check, None))
            .await
            .0
            .unwrap();

        let seen = server.requests();
        assert_eq!(
            (seen[0].method.as_str(), seen[0].path.as_str()),
            ("POST", "/v1/messages")
        );
        assert_eq!(seen[0].header("x-api-key"), Some("sk-ant"));
        assert_eq!(seen[0].header("anthropic-version"), Some("2023-06-01"));
        assert_eq!(seen[0].header("x-bravebot-role"), Some("planner"));
        let body = seen[0].json();
        assert_eq!(body["system"][0]["text"], json!("be brief"));
        assert_eq!(body["max_tokens"], json!(256));
        assert_eq!(body["stream"], json!(true));
        assert_eq!(body["tools"][0]["input_schema"]["type"], json!("object"));
        let messages = body["messages"].as_array().unwrap();
        assert_eq!(messages.len(), 3, "{body}");
        assert_eq!(messages[1]["content"][1]["input"], json!({"path": "a"}));
        assert_eq!(
            messages[2],
            json!({"role": "user", "content": [
                {"type": "tool_result", "tool_use_id": "toolu_1",
                    "content": [{"type": "text", "text": "result of toolu_1"}]},
                {"type": "tool_result", "tool_use_id": "toolu_2",
                    "content": [{"type": "text", "text": "result of toolu_2"}],
                    "cache_control": {"type": "ephemeral"}},
            ]})
        );

        assert_eq!(seen[1].header("x-bravebot-role"), Some("check"));
        assert!(seen[1].json().get("tools").is_none());
    }

    // Verifies: MODEL-1
    #[tokio::test]
    async fn anthropic_stream_assembles_text_and_tool_input_pieces() {
        let server = TestServer::start(vec![anthropic_sse(&[
            json!({"type": "message_start", "message": {"id": "m1"}}),
            json!({"type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": ""}}),
            json!({"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": "Hi "}}),
            json!({"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": "there"}}),
            json!({"type": "content_block_stop", "index": 0}),
            json!({"type": "content_block_start", "index": 1, "content_block":
                {"type": "tool_use", "id": "toolu_9", "name": "search", "input": {}}}),
            json!({"type": "content_block_delta", "index": 1, "delta": {"type": "input_json_delta", "partial_json": "{\"query\":"}}),
            json!({"type": "content_block_delta", "index": 1, "delta": {"type": "input_json_delta", "partial_json": " \"fn main\"}"}}),
            json!({"type": "content_block_stop", "index": 1}),
            json!({"type": "ping"}),
            json!({"type": "message_delta", "delta": {"stop_reason": "max_tokens"}}),
            json!({"type": "message_stop"}),
        ])])
        .await;
        let client = client(Api::Anthropic, server.url(""), None);
        let (reply, deltas) = complete(&client, &request(Role::Planner, Some(vec![]))).await;
        let reply = reply.unwrap();
        assert_eq!(deltas, ["Hi ", "there"]);
        assert_eq!(reply.text, "Hi there");
        assert_eq!(
            reply.tool_calls,
            [ToolCall {
                id: "toolu_9".to_owned(),
                name: "search".to_owned(),
                arguments: r#"{"query": "fn main"}"#.to_owned(),
            }]
        );
        assert!(reply.truncated);
    }

    // Verifies: MODEL-3
    #[tokio::test]
    async fn anthropic_error_event_and_missing_message_stop_are_errors() {
        let server = TestServer::start(vec![
            anthropic_sse(&[
                json!({"type": "message_start", "message": {}}),
                json!({"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}}),
            ]),
            anthropic_sse(&[
                json!({"type": "message_start", "message": {}}),
                json!({"type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": "cut"}}),
            ]),
        ])
        .await;
        let client = client(Api::Anthropic, server.url(""), None);
        let (first, _) = complete(&client, &request(Role::Planner, None)).await;
        assert!(
            matches!(first, Err(ModelError::Malformed(ref m)) if m.contains("overloaded_error: Overloaded")),
            "{first:?}"
        );
        let (second, _) = complete(&client, &request(Role::Planner, None)).await;
        assert!(
            matches!(second, Err(ModelError::Malformed(ref m)) if m.contains("message_stop")),
            "{second:?}"
        );
    }

    // Verifies: MODEL-1
    #[tokio::test]
    async fn anthropic_accepts_a_non_streaming_reply() {
        let body = json!({"type": "message", "stop_reason": "tool_use", "content": [
            {"type": "text", "text": "checking"},
            {"type": "tool_use", "id": "toolu_3", "name": "list_files", "input": {"path": "."}},
        ]});
        let server = TestServer::start(vec![Answer::Raw(response(
            200,
            &[("Content-Type", "application/json; charset=utf-8")],
            body.to_string().as_bytes(),
        ))])
        .await;
        let client = client(Api::Anthropic, server.url(""), None);
        let (reply, _) = complete(&client, &request(Role::Planner, Some(vec![]))).await;
        let reply = reply.unwrap();
        assert_eq!(reply.text, "checking");
        assert_eq!(reply.tool_calls[0].arguments, r#"{"path":"."}"#);
        assert!(!reply.truncated);
    }

    // Verifies: USAGE-1, USAGE-3, USAGE-8
    #[tokio::test]
    async fn openai_usage_is_asked_for_and_read_from_the_stream_and_a_whole_reply() {
        let whole = json!({"choices": [{"index": 0, "finish_reason": "stop", "message": {
            "role": "assistant", "content": "ok"}}],
            "usage": {"prompt_tokens": 40, "completion_tokens": 2, "total_tokens": 42}});
        let server = TestServer::start(vec![
            sse(
                &[
                    json!({"choices": [{"index": 0, "delta": {"content": "hi"}}], "usage": null}),
                    json!({"choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}], "usage": null}),
                    // The usage chunk of `include_usage`: no choices, after the last that has any.
                    json!({"choices": [], "usage": {"prompt_tokens": 1200, "completion_tokens": 34,
                        "total_tokens": 1234, "prompt_tokens_details": {"cached_tokens": 1024}}}),
                ],
                true,
            ),
            Answer::Raw(response(
                200,
                &[("Content-Type", "application/json")],
                whole.to_string().as_bytes(),
            )),
        ])
        .await;
        let client = client(Api::OpenAi, server.url("/v1"), None);
        let (reply, _) = complete(&client, &request(Role::Planner, Some(vec![]))).await;
        let reply = reply.unwrap();
        assert_eq!(reply.text, "hi");
        assert_eq!(
            reply.usage,
            Some(Usage {
                input_tokens: 1200,
                output_tokens: 34,
                cached_input_tokens: Some(1024),
                cache_write_input_tokens: None,
            })
        );
        assert_eq!(
            server.requests()[0].json()["stream_options"],
            json!({"include_usage": true})
        );
        let (reply, _) = complete(&client, &request(Role::Check, None)).await;
        assert_eq!(
            reply.unwrap().usage,
            Some(Usage {
                input_tokens: 40,
                output_tokens: 2,
                cached_input_tokens: None,
                cache_write_input_tokens: None,
            })
        );
    }

    // Verifies: USAGE-2
    #[tokio::test]
    async fn a_reply_that_reports_no_usage_has_none_in_either_format() {
        let server = TestServer::start(vec![
            openai_text_stream("no counts"),
            sse(
                &[
                    json!({"choices": [{"index": 0, "delta": {"content": "x"}, "finish_reason": "stop"}]}),
                    json!({"choices": [], "usage": null}),
                ],
                true,
            ),
            anthropic_sse(&[
                json!({"type": "message_start", "message": {"id": "m1"}}),
                json!({"type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": "x"}}),
                json!({"type": "message_delta", "delta": {"stop_reason": "end_turn"}}),
                json!({"type": "message_stop"}),
            ]),
        ])
        .await;
        let openai = client(Api::OpenAi, server.url("/v1"), None);
        for _ in 0..2 {
            let (reply, _) = complete(&openai, &request(Role::Planner, None)).await;
            assert_eq!(reply.unwrap().usage, None);
        }
        let anthropic = client(Api::Anthropic, server.url(""), None);
        let (reply, _) = complete(&anthropic, &request(Role::Planner, None)).await;
        assert_eq!(reply.unwrap().usage, None);
    }

    // Verifies: USAGE-1, USAGE-8
    #[tokio::test]
    async fn anthropic_usage_adds_the_cache_to_the_input_and_takes_the_last_output_count() {
        let whole = json!({"type": "message", "stop_reason": "end_turn",
            "content": [{"type": "text", "text": "ok"}],
            "usage": {"input_tokens": 10, "output_tokens": 3}});
        let server = TestServer::start(vec![
            anthropic_sse(&[
                json!({"type": "message_start", "message": {"id": "m1", "usage": {
                    "input_tokens": 25, "cache_creation_input_tokens": 100,
                    "cache_read_input_tokens": 2000, "output_tokens": 1}}}),
                json!({"type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": "hi"}}),
                json!({"type": "message_delta", "delta": {"stop_reason": "end_turn"},
                    "usage": {"output_tokens": 57}}),
                json!({"type": "message_stop"}),
            ]),
            Answer::Raw(response(
                200,
                &[("Content-Type", "application/json")],
                whole.to_string().as_bytes(),
            )),
        ])
        .await;
        let client = client(Api::Anthropic, server.url(""), None);
        let (reply, _) = complete(&client, &request(Role::Planner, None)).await;
        assert_eq!(
            reply.unwrap().usage,
            Some(Usage {
                input_tokens: 2125,
                output_tokens: 57,
                cached_input_tokens: Some(2000),
                cache_write_input_tokens: Some(100),
            })
        );
        let (reply, _) = complete(&client, &request(Role::Processor, None)).await;
        assert_eq!(
            reply.unwrap().usage,
            Some(Usage {
                input_tokens: 10,
                output_tokens: 3,
                cached_input_tokens: None,
                cache_write_input_tokens: None,
            })
        );
    }

    #[test]
    fn shown_url_drops_credentials_and_query() {
        assert_eq!(
            shown_url("https://user:pw@gw.test/v1/chat/completions?api-key=abc#x"),
            "https://gw.test/v1/chat/completions"
        );
    }

    #[test]
    fn error_message_reads_both_apis_and_plain_text() {
        assert_eq!(
            error_message(br#"{"error":{"message":"bad key"}}"#),
            "bad key"
        );
        assert_eq!(
            error_message(br#"{"type":"error","error":{"type":"x","message":"nope"}}"#),
            "nope"
        );
        assert_eq!(error_message(b"  gateway\n timeout "), "gateway timeout");
        assert_eq!(error_message(b""), "no message");
    }
}
