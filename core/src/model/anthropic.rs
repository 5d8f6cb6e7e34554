//! Wire format: Anthropic messages.
//!
//! `POST {baseUrl}/v1/messages` with `stream: true`, read as the typed event stream
//! (`message_start`, `content_block_*`, `message_delta`, `message_stop`); a whole JSON reply is
//! accepted too. Tool calls are `tool_use` blocks whose input streams as pieces of JSON text.

use std::collections::BTreeMap;

use serde_json::{Value, json};

use super::types::{
    Message, ModelError, ModelReply, ModelRequest, Part, StreamEvent, ToolCall, Usage,
};
use serde::Deserialize;

use super::wire::{Count, Obj, Text, base64, cut, event, json_error_text, present};

/// The request body. `tools` is present only when the request offers tools (CONTRACT §2). The
/// client sends [`assemble`]'s bytes, which equal this serialised; this is their reference.
#[cfg(test)]
pub(super) fn request_body(model: &str, request: &ModelRequest) -> Value {
    // The API wants user and assistant turns to alternate, and every tool result of one
    // assistant turn in the single user message after it; so consecutive user-side messages
    // (tool results, then perhaps the person's words) are merged into one.
    let mut messages: Vec<(&'static str, Vec<Value>)> = Vec::new();
    for message in &request.messages {
        let (role, blocks) = blocks_of(message);
        if blocks.is_empty() {
            // An empty turn is refused by the API and says nothing.
            continue;
        }
        match messages.last_mut() {
            Some((last_role, last_blocks)) if *last_role == role => last_blocks.extend(blocks),
            _ => messages.push((role, blocks)),
        }
    }

    let cached = request.tools.is_some();
    if cached {
        for at in history_breakpoints(&messages.iter().map(|(r, _)| *r).collect::<Vec<_>>()) {
            if let Some(Value::Object(block)) = messages[at].1.last_mut() {
                block.insert("cache_control".into(), ephemeral());
            }
        }
    }

    let mut body = serde_json::Map::new();
    body.insert("model".into(), json!(model));
    body.insert("stream".into(), json!(true));
    if let Some(tools) = &request.tools {
        let mut tools: Vec<Value> = tools.iter().map(tool).collect();
        if let Some(Value::Object(last)) = tools.last_mut() {
            last.insert("cache_control".into(), ephemeral());
        }
        body.insert("tools".into(), Value::Array(tools));
    }
    if !request.system.is_empty() {
        let system = if cached {
            json!([{"type": "text", "text": request.system, "cache_control": ephemeral()}])
        } else {
            json!(request.system)
        };
        body.insert("system".into(), system);
    }
    body.insert(
        "messages".into(),
        Value::Array(
            messages
                .into_iter()
                .map(|(role, content)| json!({"role": role, "content": content}))
                .collect(),
        ),
    );
    body.insert("max_tokens".into(), json!(request.max_tokens.max(1)));
    Value::Object(body)
}

/// The cache breakpoint every marked block carries (MODEL-7), with the provider's default
/// lifetime, as a key and value written into a block's serialised object.
const BREAKPOINT: &str = "\"cache_control\":{\"type\":\"ephemeral\"}";

fn ephemeral() -> Value {
    json!({"type": "ephemeral"})
}

/// Most breakpoints the messages API takes in one request.
pub(super) const MAX_BREAKPOINTS: usize = 4;

/// Which of a request's merged messages (by their sides, in order) carry a cache breakpoint on
/// their last block (MODEL-7): the newest, so the next round reads all of this one from the
/// cache; and the user message two before it, where the previous request ended, so a round that
/// added more blocks than the provider looks back over still reads the history before it. With
/// the tools' and the system prompt's, that is four, the provider's limit.
fn history_breakpoints(sides: &[&'static str]) -> Vec<usize> {
    let mut at = Vec::new();
    let Some(newest) = sides.len().checked_sub(1) else {
        return at;
    };
    if let Some(before) = newest.checked_sub(2)
        && sides[before] == sides[newest]
    {
        at.push(before);
    }
    at.push(newest);
    at
}

/// One message's share of a request body, serialised once: the side it speaks for and its
/// content blocks.
#[derive(Debug)]
pub(super) struct Encoded {
    role: &'static str,
    blocks: Vec<String>,
}

impl Encoded {
    pub(super) fn len(&self) -> usize {
        self.blocks.iter().map(|b| b.len() + 1).sum()
    }
}

/// The side and content blocks of one message, as [`request_body`] would write them.
fn blocks_of(message: &Message) -> (&'static str, Vec<Value>) {
    match message {
        Message::User(parts) => ("user", parts.iter().map(block).collect()),
        Message::Assistant { text, tool_calls } => {
            let mut blocks = Vec::new();
            if !text.is_empty() {
                blocks.push(json!({"type": "text", "text": text}));
            }
            for call in tool_calls {
                blocks.push(json!({
                    "type": "tool_use",
                    "id": call.id,
                    "name": call.name,
                    "input": tool_input(&call.arguments),
                }));
            }
            ("assistant", blocks)
        }
        Message::ToolResult { call_id, parts } => (
            "user",
            vec![json!({
                "type": "tool_result",
                "tool_use_id": call_id,
                "content": parts.iter().map(block).collect::<Vec<_>>(),
            })],
        ),
    }
}

/// Serialises one message.
pub(super) fn encode(message: &Message) -> Encoded {
    let (role, blocks) = blocks_of(message);
    Encoded {
        role,
        blocks: blocks.iter().map(Value::to_string).collect(),
    }
}

/// The tools of a request as the body's `tools` value, serialised, the last carrying a cache
/// breakpoint: only a planner's and a delegate's requests offer tools, and theirs are the requests
/// asked again with the same tools (MODEL-7).
pub(super) fn encode_tools(tools: &[super::types::ToolSchema]) -> String {
    let mut tools: Vec<Value> = tools.iter().map(tool).collect();
    if let Some(Value::Object(last)) = tools.last_mut() {
        last.insert("cache_control".into(), ephemeral());
    }
    Value::Array(tools).to_string()
}

fn tool(tool: &super::types::ToolSchema) -> Value {
    json!({
        "name": tool.name,
        "description": tool.description,
        "input_schema": tool.parameters,
    })
}

/// The request body from messages serialised beforehand, equal to [`request_body`]. Its keys are
/// written in a fixed order, the model, the tools and the system prompt before the history and the
/// reply's bound after it, so each round's body begins with the bytes of the one before, but for
/// the breakpoints that move forward (MODEL-8).
pub(super) fn assemble(
    model: &str,
    request: &ModelRequest,
    encoded: &[&Encoded],
    tools: Option<&str>,
) -> Vec<u8> {
    let mut merged: Vec<(&'static str, Vec<&str>)> = Vec::new();
    for encoded in encoded {
        if encoded.blocks.is_empty() {
            continue;
        }
        let blocks = encoded.blocks.iter().map(String::as_str);
        match merged.last_mut() {
            Some((role, last)) if *role == encoded.role => last.extend(blocks),
            _ => merged.push((encoded.role, blocks.collect())),
        }
    }
    let cached = tools.is_some();
    let marked = if cached {
        history_breakpoints(&merged.iter().map(|(r, _)| *r).collect::<Vec<_>>())
    } else {
        Vec::new()
    };
    // The tools' and the system prompt's, with the history's.
    debug_assert!(marked.len() + 2 <= MAX_BREAKPOINTS);
    let size: usize = encoded.iter().map(|e| e.len() + 32).sum();
    let mut out = Vec::with_capacity(size + request.system.len() + tools.map_or(0, str::len) + 256);
    out.extend_from_slice(b"{\"model\":");
    out.extend_from_slice(json!(model).to_string().as_bytes());
    out.extend_from_slice(b",\"stream\":true");
    if let Some(tools) = tools {
        out.extend_from_slice(b",\"tools\":");
        out.extend_from_slice(tools.as_bytes());
    }
    if !request.system.is_empty() {
        out.extend_from_slice(b",\"system\":");
        if cached {
            out.extend_from_slice(b"[{\"type\":\"text\",\"text\":");
            out.extend_from_slice(json!(request.system).to_string().as_bytes());
            out.push(b',');
            out.extend_from_slice(BREAKPOINT.as_bytes());
            out.extend_from_slice(b"}]");
        } else {
            out.extend_from_slice(json!(request.system).to_string().as_bytes());
        }
    }
    out.extend_from_slice(b",\"messages\":[");
    for (i, (role, blocks)) in merged.iter().enumerate() {
        if i > 0 {
            out.push(b',');
        }
        out.extend_from_slice(b"{\"role\":");
        out.extend_from_slice(json!(role).to_string().as_bytes());
        out.extend_from_slice(b",\"content\":[");
        for (j, block) in blocks.iter().enumerate() {
            if j > 0 {
                out.push(b',');
            }
            match block.strip_suffix('}') {
                // A block is a JSON object: the breakpoint goes in as its last key.
                Some(open) if j + 1 == blocks.len() && marked.contains(&i) => {
                    out.extend_from_slice(open.as_bytes());
                    out.push(b',');
                    out.extend_from_slice(BREAKPOINT.as_bytes());
                    out.push(b'}');
                }
                _ => out.extend_from_slice(block.as_bytes()),
            }
        }
        out.extend_from_slice(b"]}");
    }
    out.extend_from_slice(b"],\"max_tokens\":");
    out.extend_from_slice(request.max_tokens.max(1).to_string().as_bytes());
    out.push(b'}');
    out
}

fn block(part: &Part) -> Value {
    match part {
        Part::Text(text) => json!({"type": "text", "text": text}),
        Part::Image { media_type, data } => json!({
            "type": "image",
            "source": {"type": "base64", "media_type": media_type, "data": base64(data)},
        }),
        Part::EncodedImage { media_type, base64 } => json!({
            "type": "image",
            "source": {"type": "base64", "media_type": media_type, "data": base64},
        }),
        // The API takes a PDF as a document, never as an image.
        Part::Pdf { data, .. } => json!({
            "type": "document",
            "source": {"type": "base64", "media_type": "application/pdf", "data": base64(data)},
        }),
    }
}

/// The arguments a model wrote, as the object the API wants back. Arguments that are not an
/// object were already answered as an error; an empty object keeps the history well formed.
fn tool_input(arguments: &str) -> Value {
    match serde_json::from_str::<Value>(arguments) {
        Ok(value @ Value::Object(_)) => value,
        _ => json!({}),
    }
}

#[derive(Debug)]
enum Block {
    Text,
    ToolUse {
        id: String,
        name: String,
        json: String,
        /// The input given whole at the block's start, used when no pieces follow.
        initial: Value,
    },
    /// Thinking and other blocks this client does not use.
    Other,
}

/// The reply being put together from streamed events.
#[derive(Debug, Default)]
pub(super) struct StreamAssembly {
    text: String,
    blocks: BTreeMap<u64, Block>,
    truncated: bool,
    /// The counts `message_start` and `message_delta` reported, the later over the earlier.
    counts: Counts,
}

impl StreamAssembly {
    /// Takes one event's data; `true` at `message_stop`.
    pub fn feed(
        &mut self,
        data: &str,
        on_event: &mut (dyn FnMut(StreamEvent) + Send),
    ) -> Result<bool, ModelError> {
        let event: Event<'_> = event(data)?;
        let index = event.index.0.unwrap_or(0);
        match event.kind.as_str().unwrap_or("") {
            "content_block_start" => {
                let block = match event.content_block.0 {
                    Some(start) => match start.kind.as_str() {
                        Some("text") => {
                            self.push_text(start.text.as_str().unwrap_or(""), on_event);
                            Block::Text
                        }
                        Some("tool_use") => Block::ToolUse {
                            id: start.id.as_str().unwrap_or("").to_owned(),
                            name: start.name.as_str().unwrap_or("").to_owned(),
                            json: String::new(),
                            initial: start.input.unwrap_or(Value::Null),
                        },
                        _ => Block::Other,
                    },
                    None => Block::Other,
                };
                self.blocks.insert(index, block);
            }
            "content_block_delta" => {
                let delta = event.delta.0.unwrap_or_default();
                match delta.kind.as_str() {
                    Some("text_delta") => {
                        self.push_text(delta.text.as_str().unwrap_or(""), on_event);
                    }
                    Some("input_json_delta") => {
                        let piece = delta.partial_json.as_str().unwrap_or("");
                        match self.blocks.get_mut(&index) {
                            Some(Block::ToolUse { json, .. }) => json.push_str(piece),
                            _ => {
                                return Err(ModelError::Malformed(
                                    "tool input arrived for a block that is not a tool call"
                                        .to_owned(),
                                ));
                            }
                        }
                    }
                    _ => {}
                }
            }
            "message_start" => {
                if let Some(usage) = event.message.0.and_then(|m| m.usage.0) {
                    self.counts.merge(&usage);
                }
            }
            "message_delta" => {
                // `output_tokens` here is the reply's whole count so far, not an increment.
                if let Some(usage) = &event.usage.0 {
                    self.counts.merge(usage);
                }
                let stop = event.delta.0.as_ref().and_then(|d| d.stop_reason.as_str());
                if stop == Some("max_tokens") {
                    self.truncated = true;
                }
            }
            "message_stop" => return Ok(true),
            "error" => {
                let error = event.error.as_ref().unwrap_or(&Value::Null);
                let kind = error.get("type").and_then(Value::as_str).unwrap_or("error");
                let message = json_error_text(error).unwrap_or_default();
                return Err(ModelError::Malformed(format!(
                    "the endpoint reported {kind}: {}",
                    cut(&message, 300)
                )));
            }
            // content_block_stop, ping and anything newer carry nothing needed.
            _ => {}
        }
        Ok(false)
    }

    fn push_text(&mut self, text: &str, on_event: &mut (dyn FnMut(StreamEvent) + Send)) {
        if !text.is_empty() {
            self.text.push_str(text);
            on_event(StreamEvent::TextDelta(text.to_owned()));
        }
    }

    pub fn finish(self) -> Result<ModelReply, ModelError> {
        let mut tool_calls = Vec::new();
        for block in self.blocks.into_values() {
            if let Block::ToolUse {
                id,
                name,
                json,
                initial,
            } = block
            {
                let arguments = if json.trim().is_empty() {
                    whole_input(&initial)
                } else {
                    json
                };
                tool_calls.push(finished_call(id, name, arguments)?);
            }
        }
        Ok(ModelReply {
            text: self.text,
            tool_calls,
            truncated: self.truncated,
            usage: self.counts.usage(),
        })
    }
}

/// Reads a whole (non-streaming) reply.
pub(super) fn parse_reply(
    body: &[u8],
    on_event: &mut (dyn FnMut(StreamEvent) + Send),
) -> Result<ModelReply, ModelError> {
    let reply: Value = serde_json::from_slice(body)
        .map_err(|err| ModelError::Malformed(format!("the reply is not json: {err}")))?;
    if reply.get("type").and_then(Value::as_str) == Some("error") {
        let message = json_error_text(&reply).unwrap_or_default();
        return Err(ModelError::Malformed(format!(
            "the endpoint reported an error: {}",
            cut(&message, 300)
        )));
    }
    let blocks = reply
        .get("content")
        .and_then(Value::as_array)
        .ok_or_else(|| ModelError::Malformed("the reply has no content".to_owned()))?;
    let mut text = String::new();
    let mut tool_calls = Vec::new();
    for block in blocks {
        match block.get("type").and_then(Value::as_str) {
            Some("text") => text.push_str(block.get("text").and_then(Value::as_str).unwrap_or("")),
            Some("tool_use") => tool_calls.push(finished_call(
                text_field(block, "id"),
                text_field(block, "name"),
                whole_input(block.get("input").unwrap_or(&Value::Null)),
            )?),
            _ => {}
        }
    }
    if !text.is_empty() {
        on_event(StreamEvent::TextDelta(text.clone()));
    }
    Ok(ModelReply {
        text,
        tool_calls,
        truncated: reply.get("stop_reason").and_then(Value::as_str) == Some("max_tokens"),
        usage: reply.get("usage").and_then(usage_of),
    })
}

/// The counts the messages API reported for one call, as its events name them: each event's
/// count replaces the one before it (`message_delta` repeats the reply's whole count so far).
#[derive(Debug, Default, Clone, Copy)]
struct Counts {
    /// `input_tokens`: the request's tokens that were neither read from nor written to the cache.
    uncached: Option<u64>,
    /// `cache_read_input_tokens`.
    read: Option<u64>,
    /// `cache_creation_input_tokens`.
    written: Option<u64>,
    /// `output_tokens`.
    output: Option<u64>,
}

impl Counts {
    fn merge(&mut self, usage: &CountsWire) {
        self.uncached = usage.input_tokens.0.or(self.uncached);
        self.read = usage.cache_read_input_tokens.0.or(self.read);
        self.written = usage.cache_creation_input_tokens.0.or(self.written);
        self.output = usage.output_tokens.0.or(self.output);
    }

    /// The call's usage, [`Usage::input_tokens`] counting the whole request (the cache's tokens
    /// added back). `None` where nothing named `input_tokens` or `output_tokens`: a count is
    /// never guessed (USAGE-2).
    fn usage(self) -> Option<Usage> {
        if self.uncached.is_none() && self.output.is_none() {
            return None;
        }
        Some(Usage {
            input_tokens: self.uncached.unwrap_or(0)
                + self.read.unwrap_or(0)
                + self.written.unwrap_or(0),
            output_tokens: self.output.unwrap_or(0),
            cached_input_tokens: self.read,
            cache_write_input_tokens: self.written,
        })
    }
}

fn usage_of(usage: &Value) -> Option<Usage> {
    let mut counts = Counts::default();
    if let Ok(Obj(Some(read))) = Obj::<CountsWire>::deserialize(usage) {
        counts.merge(&read);
    }
    counts.usage()
}

/// One streamed event, as much of it as the reply is made of.
#[derive(Debug, Default, Deserialize)]
#[serde(default)]
struct Event<'a> {
    #[serde(rename = "type", borrow)]
    kind: Text<'a>,
    index: Count,
    #[serde(borrow)]
    content_block: Obj<BlockStart<'a>>,
    #[serde(borrow)]
    delta: Obj<DeltaWire<'a>>,
    message: Obj<MessageWire>,
    usage: Obj<CountsWire>,
    #[serde(deserialize_with = "present")]
    error: Option<Value>,
}

/// A `content_block_start`'s block.
#[derive(Debug, Default, Deserialize)]
#[serde(default)]
struct BlockStart<'a> {
    #[serde(rename = "type", borrow)]
    kind: Text<'a>,
    #[serde(borrow)]
    text: Text<'a>,
    #[serde(borrow)]
    id: Text<'a>,
    #[serde(borrow)]
    name: Text<'a>,
    input: Option<Value>,
}

/// A `content_block_delta`'s or a `message_delta`'s delta.
#[derive(Debug, Default, Deserialize)]
#[serde(default)]
struct DeltaWire<'a> {
    #[serde(rename = "type", borrow)]
    kind: Text<'a>,
    #[serde(borrow)]
    text: Text<'a>,
    #[serde(borrow)]
    partial_json: Text<'a>,
    #[serde(borrow)]
    stop_reason: Text<'a>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(default)]
struct MessageWire {
    usage: Obj<CountsWire>,
}

/// A `usage` object as the messages API names its counts.
#[derive(Debug, Default, Deserialize)]
#[serde(default)]
struct CountsWire {
    input_tokens: Count,
    cache_read_input_tokens: Count,
    cache_creation_input_tokens: Count,
    output_tokens: Count,
}
fn text_field(value: &Value, key: &str) -> String {
    value
        .get(key)
        .and_then(Value::as_str)
        .unwrap_or("")
        .to_owned()
}

fn whole_input(input: &Value) -> String {
    match input {
        Value::Null => "{}".to_owned(),
        other => other.to_string(),
    }
}

fn finished_call(id: String, name: String, arguments: String) -> Result<ToolCall, ModelError> {
    if id.is_empty() || name.is_empty() {
        return Err(ModelError::Malformed(
            "a tool call arrived without an id or a name".to_owned(),
        ));
    }
    Ok(ToolCall {
        id,
        name,
        arguments,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fed(events: &[&str]) -> (Result<ModelReply, ModelError>, Vec<String>) {
        let mut assembly = StreamAssembly::default();
        let mut deltas = Vec::new();
        let mut on_event = |e: StreamEvent| {
            let StreamEvent::TextDelta(t) = e;
            deltas.push(t);
        };
        for data in events {
            if let Err(e) = assembly.feed(data, &mut on_event) {
                return (Err(e), deltas);
            }
        }
        (assembly.finish(), deltas)
    }

    // Verifies: MODEL-21
    #[test]
    fn a_typed_event_reads_what_the_reply_needs_and_passes_over_everything_else() {
        let (reply, deltas) = fed(&[
            r#"{"type":"message_start","message":{"id":"m","content":[],"usage":{"input_tokens":10,"cache_read_input_tokens":90,"output_tokens":1,"service_tier":"standard"}}}"#,
            r#"{"type":"ping"}"#,
            r#"{"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}"#,
            r#"{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"caf\u00e9 \"one\"","extra":{"x":1}}}"#,
            r#"{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":42}}"#,
            r#"{"type":"content_block_start","index":1,"content_block":{"type":"tool_use","id":"toolu_1","name":"read_file","input":{}}}"#,
            r#"{"type":"content_block_delta","index":1,"delta":{"type":"input_json_delta","partial_json":"{\"path\":"}}"#,
            r#"{"type":"content_block_delta","index":1,"delta":{"type":"input_json_delta","partial_json":"\"a.rs\"}"}}"#,
            r#"{"type":"content_block_start","index":2,"content_block":{"type":"tool_use","id":"toolu_2","name":"list_files","input":{"path":"."}}}"#,
            r#"{"type":"content_block_start","index":3,"content_block":"odd"}"#,
            r#"{"type":"content_block_stop","index":1}"#,
            r#"{"type":"message_delta","delta":{"stop_reason":"max_tokens"},"usage":{"output_tokens":25}}"#,
            r#""a string""#,
            r#"{"type":"message_stop"}"#,
        ]);
        let reply = reply.expect("a reply");
        assert_eq!(deltas, vec!["café \"one\"".to_string()]);
        assert!(reply.truncated);
        let calls: Vec<(&str, &str, &str)> = reply
            .tool_calls
            .iter()
            .map(|c| (c.id.as_str(), c.name.as_str(), c.arguments.as_str()))
            .collect();
        assert_eq!(
            calls,
            vec![
                ("toolu_1", "read_file", "{\"path\":\"a.rs\"}"),
                ("toolu_2", "list_files", "{\"path\":\".\"}"),
            ]
        );
        let usage = reply.usage.expect("usage");
        assert_eq!(
            (
                usage.input_tokens,
                usage.output_tokens,
                usage.cached_input_tokens
            ),
            (100, 25, Some(90))
        );
    }

    // Verifies: MODEL-3, MODEL-21
    #[test]
    fn an_event_that_is_not_json_or_reports_an_error_is_a_clear_error() {
        let (reply, _) = fed(&[r#"{"type":"message_start""#]);
        let err = reply.expect_err("not json").to_string();
        assert!(err.contains("a stream event is not json"), "{err}");
        let (reply, _) = fed(&[
            r#"{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}"#,
        ]);
        let err = reply.expect_err("an error").to_string();
        assert!(
            err.contains("the endpoint reported overloaded_error: Overloaded"),
            "{err}"
        );
    }
}
