//! Wire format: OpenAI-compatible chat completions.
//!
//! `POST {baseUrl}/chat/completions` with `stream: true`, read as server-sent events ending in
//! `data: [DONE]`; a whole JSON reply is accepted too. The same shape is spoken by Ollama,
//! llama.cpp's server, vLLM and most gateways, so the reader is lenient where they differ (a
//! missing tool call id, arguments sent as an object) and strict where a reply would be wrong (a
//! stream that ends early, a tool call with no name).

use std::collections::BTreeMap;

use serde_json::{Map, Value, json};

use super::types::{
    Message, ModelError, ModelReply, ModelRequest, Part, StreamEvent, ToolCall, Usage,
};
use serde::Deserialize;

use super::wire::{Count, List, Obj, Text, base64, cut, event, json_error_text, present};

/// The request body. `tools` is present only when the request offers tools: a processor's and a
/// check's request carry no `tools` key at all (CONTRACT §2). The client sends [`assemble`]'s
/// bytes, which equal this serialised; this is their reference.
#[cfg(test)]
pub(super) fn request_body(model: &str, request: &ModelRequest) -> Value {
    let mut messages = Vec::new();
    if !request.system.is_empty() {
        messages.push(json!({"role": "system", "content": request.system}));
    }
    // Pictures from tool results wait here until the run of tool messages ends: the API wants
    // every tool result straight after the assistant message that asked for it.
    let mut held_pictures: Vec<Value> = Vec::new();
    for message in &request.messages {
        if !matches!(message, Message::ToolResult { .. }) && !held_pictures.is_empty() {
            messages.push(json!({"role": "user", "content": std::mem::take(&mut held_pictures)}));
        }
        match message {
            Message::User(parts) => {
                messages.push(json!({"role": "user", "content": content(parts)}))
            }
            Message::Assistant { .. } => messages.push(assistant(message)),
            Message::ToolResult { call_id, parts } => {
                let mut text = String::new();
                for part in parts {
                    match part {
                        Part::Text(piece) => {
                            if !text.is_empty() {
                                text.push('\n');
                            }
                            text.push_str(piece);
                        }
                        Part::Image { .. } | Part::EncodedImage { .. } | Part::Pdf { .. } => {
                            held_pictures.push(picture(part))
                        }
                    }
                }
                messages.push(json!({"role": "tool", "tool_call_id": call_id, "content": text}));
            }
        }
    }
    if !held_pictures.is_empty() {
        messages.push(json!({"role": "user", "content": held_pictures}));
    }

    let mut body = Map::new();
    body.insert("model".into(), json!(model));
    body.insert("messages".into(), Value::Array(messages));
    if let Some(tools) = &request.tools {
        let tools: Vec<Value> = tools.iter().map(tool).collect();
        body.insert("tools".into(), Value::Array(tools));
    }
    body.insert("stream".into(), json!(true));
    // Without this an OpenAI-compatible stream reports no usage at all (USAGE-3).
    body.insert("stream_options".into(), json!({"include_usage": true}));
    Value::Object(body)
}

/// One message's share of a request body, serialised once: its own entry, and the pictures a
/// tool result holds back for a user message after the run of tool results.
#[derive(Debug)]
pub(super) struct Encoded {
    entry: String,
    pictures: Vec<String>,
}

impl Encoded {
    pub(super) fn len(&self) -> usize {
        self.entry.len() + self.pictures.iter().map(String::len).sum::<usize>()
    }
}

/// Serialises one message, as [`request_body`] would write it.
pub(super) fn encode(message: &Message) -> Encoded {
    let mut pictures = Vec::new();
    let entry = match message {
        Message::User(parts) => json!({"role": "user", "content": content(parts)}),
        Message::Assistant { .. } => assistant(message),
        Message::ToolResult { call_id, parts } => {
            let mut text = String::new();
            for part in parts {
                match part {
                    Part::Text(piece) => {
                        if !text.is_empty() {
                            text.push('\n');
                        }
                        text.push_str(piece);
                    }
                    Part::Image { .. } | Part::EncodedImage { .. } | Part::Pdf { .. } => {
                        pictures.push(picture(part).to_string())
                    }
                }
            }
            json!({"role": "tool", "tool_call_id": call_id, "content": text})
        }
    };
    Encoded {
        entry: entry.to_string(),
        pictures,
    }
}

/// The tools of a request as the body's `tools` value, serialised.
pub(super) fn encode_tools(tools: &[super::types::ToolSchema]) -> String {
    Value::Array(tools.iter().map(tool).collect()).to_string()
}

/// The request body from messages serialised beforehand, equal to [`request_body`]. Its keys are
/// written in a fixed order, everything that holds for the whole turn (the model, the stream's
/// options, the tools) before the messages, whose first is the system prompt: each round's body
/// begins with every byte of the one before but its closing brackets, the prefix a provider's
/// cache matches (MODEL-9).
pub(super) fn assemble(
    model: &str,
    request: &ModelRequest,
    encoded: &[&Encoded],
    tools: Option<&str>,
) -> Vec<u8> {
    let size: usize = encoded.iter().map(|e| e.len() + 1).sum();
    let mut out = Vec::with_capacity(size + request.system.len() + tools.map_or(0, str::len) + 256);
    out.extend_from_slice(b"{\"model\":");
    out.extend_from_slice(json!(model).to_string().as_bytes());
    out.extend_from_slice(b",\"stream\":true,\"stream_options\":{\"include_usage\":true}");
    if let Some(tools) = tools {
        out.extend_from_slice(b",\"tools\":");
        out.extend_from_slice(tools.as_bytes());
    }
    out.extend_from_slice(b",\"messages\":[");
    let mut first = true;
    let mut push = |out: &mut Vec<u8>, entry: &[u8]| {
        if !first {
            out.push(b',');
        }
        first = false;
        out.extend_from_slice(entry);
    };
    if !request.system.is_empty() {
        push(
            &mut out,
            json!({"role": "system", "content": request.system})
                .to_string()
                .as_bytes(),
        );
    }
    let mut held: Vec<&str> = Vec::new();
    for (message, encoded) in request.messages.iter().zip(encoded) {
        if !matches!(message, Message::ToolResult { .. }) && !held.is_empty() {
            push(&mut out, &held_pictures(&held));
            held.clear();
        }
        push(&mut out, encoded.entry.as_bytes());
        held.extend(encoded.pictures.iter().map(String::as_str));
    }
    if !held.is_empty() {
        push(&mut out, &held_pictures(&held));
    }
    out.extend_from_slice(b"]}");
    out
}

/// `{"content":[pictures],"role":"user"}` from pictures already serialised.
fn held_pictures(pictures: &[&str]) -> Vec<u8> {
    let mut out = b"{\"content\":[".to_vec();
    out.extend_from_slice(pictures.join(",").as_bytes());
    out.extend_from_slice(b"],\"role\":\"user\"}");
    out
}

fn assistant(message: &Message) -> Value {
    let Message::Assistant { text, tool_calls } = message else {
        return Value::Null;
    };
    let mut entry = Map::new();
    entry.insert("role".into(), json!("assistant"));
    entry.insert(
        "content".into(),
        if text.is_empty() && !tool_calls.is_empty() {
            Value::Null
        } else {
            json!(text)
        },
    );
    if !tool_calls.is_empty() {
        let calls: Vec<Value> = tool_calls
            .iter()
            .map(|call| {
                json!({
                    "id": call.id,
                    "type": "function",
                    "function": {"name": call.name, "arguments": call.arguments},
                })
            })
            .collect();
        entry.insert("tool_calls".into(), Value::Array(calls));
    }
    Value::Object(entry)
}

fn tool(tool: &super::types::ToolSchema) -> Value {
    json!({
        "type": "function",
        "function": {
            "name": tool.name,
            "description": tool.description,
            "parameters": tool.parameters,
        },
    })
}

/// A user message's content: plain text when that is all it is, parts otherwise.
fn content(parts: &[Part]) -> Value {
    if let [Part::Text(text)] = parts {
        return json!(text);
    }
    Value::Array(
        parts
            .iter()
            .map(|part| match part {
                Part::Text(text) => json!({"type": "text", "text": text}),
                Part::Image { .. } | Part::EncodedImage { .. } | Part::Pdf { .. } => picture(part),
            })
            .collect(),
    )
}

/// A picture as an `image_url` part with a `data:` URL (CONTRACT §4.10); a PDF as a `file` part
/// whose `file_data` is a `data:` URL, the shape the API takes a PDF in.
fn picture(part: &Part) -> Value {
    match part {
        Part::Image { media_type, data } => json!({
            "type": "image_url",
            "image_url": {"url": format!("data:{media_type};base64,{}", base64(data))},
        }),
        Part::EncodedImage { media_type, base64 } => json!({
            "type": "image_url",
            "image_url": {"url": format!("data:{media_type};base64,{base64}")},
        }),
        Part::Pdf { filename, data } => json!({
            "type": "file",
            "file": {
                "filename": filename,
                "file_data": format!("data:application/pdf;base64,{}", base64(data)),
            },
        }),
        Part::Text(text) => json!({"type": "text", "text": text}),
    }
}

/// A tool call being put together from deltas.
#[derive(Debug, Default)]
struct PartialCall {
    id: String,
    name: String,
    arguments: String,
}

/// The reply being put together from streamed chunks.
#[derive(Debug, Default)]
pub(super) struct StreamAssembly {
    text: String,
    /// By the `index` each delta names, which is the order the model made the calls in.
    calls: BTreeMap<u64, PartialCall>,
    truncated: bool,
    usage: Option<Usage>,
}

/// One streamed chunk, as much of it as the reply is made of.
#[derive(Debug, Default, serde::Deserialize)]
#[serde(default)]
struct Chunk<'a> {
    #[serde(deserialize_with = "present")]
    error: Option<Value>,
    usage: Obj<UsageWire>,
    #[serde(borrow)]
    choices: List<Obj<Choice<'a>>>,
}

#[derive(Debug, Default, serde::Deserialize)]
#[serde(default)]
struct Choice<'a> {
    #[serde(borrow)]
    delta: Obj<Delta<'a>>,
    #[serde(borrow)]
    finish_reason: Text<'a>,
}

#[derive(Debug, Default, serde::Deserialize)]
#[serde(default)]
struct Delta<'a> {
    #[serde(borrow)]
    content: Text<'a>,
    #[serde(borrow)]
    tool_calls: List<Obj<CallDelta<'a>>>,
}

#[derive(Debug, Default, serde::Deserialize)]
#[serde(default)]
struct CallDelta<'a> {
    index: Count,
    #[serde(borrow)]
    id: Text<'a>,
    #[serde(borrow)]
    function: Obj<FunctionDelta<'a>>,
}

#[derive(Debug, Default, serde::Deserialize)]
#[serde(default)]
struct FunctionDelta<'a> {
    #[serde(borrow)]
    name: Text<'a>,
    #[serde(borrow)]
    arguments: Arguments<'a>,
}

/// A call's `arguments`: text in pieces as the API streams it, or (from servers that send them
/// so) a whole value, which is taken as its JSON text.
#[derive(Debug, Default)]
enum Arguments<'a> {
    #[default]
    Absent,
    Piece(std::borrow::Cow<'a, str>),
    Whole(String),
}

impl<'de: 'a, 'a> serde::Deserialize<'de> for Arguments<'a> {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        use serde::de::value::{MapAccessDeserializer, SeqAccessDeserializer};
        use serde::de::{Error, MapAccess, SeqAccess, Visitor};
        struct Seen<'a>(std::marker::PhantomData<&'a ()>);
        impl<'de: 'a, 'a> Visitor<'de> for Seen<'a> {
            type Value = Arguments<'a>;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("any value")
            }
            fn visit_borrowed_str<E: Error>(self, piece: &'de str) -> Result<Arguments<'a>, E> {
                Ok(Arguments::Piece(piece.into()))
            }
            fn visit_str<E: Error>(self, piece: &str) -> Result<Arguments<'a>, E> {
                Ok(Arguments::Piece(piece.to_owned().into()))
            }
            fn visit_string<E: Error>(self, piece: String) -> Result<Arguments<'a>, E> {
                Ok(Arguments::Piece(piece.into()))
            }
            fn visit_unit<E: Error>(self) -> Result<Arguments<'a>, E> {
                Ok(Arguments::Absent)
            }
            fn visit_bool<E: Error>(self, v: bool) -> Result<Arguments<'a>, E> {
                Ok(Arguments::Whole(Value::from(v).to_string()))
            }
            fn visit_i64<E: Error>(self, v: i64) -> Result<Arguments<'a>, E> {
                Ok(Arguments::Whole(Value::from(v).to_string()))
            }
            fn visit_u64<E: Error>(self, v: u64) -> Result<Arguments<'a>, E> {
                Ok(Arguments::Whole(Value::from(v).to_string()))
            }
            fn visit_f64<E: Error>(self, v: f64) -> Result<Arguments<'a>, E> {
                Ok(Arguments::Whole(Value::from(v).to_string()))
            }
            fn visit_seq<A: SeqAccess<'de>>(self, seq: A) -> Result<Arguments<'a>, A::Error> {
                let whole = Value::deserialize(SeqAccessDeserializer::new(seq))?;
                Ok(Arguments::Whole(whole.to_string()))
            }
            fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<Arguments<'a>, A::Error> {
                let whole = Value::deserialize(MapAccessDeserializer::new(map))?;
                Ok(Arguments::Whole(whole.to_string()))
            }
        }
        deserializer.deserialize_any(Seen(std::marker::PhantomData))
    }
}

/// A `usage` object as OpenAI-compatible servers write it.
#[derive(Debug, Default, serde::Deserialize)]
#[serde(default)]
struct UsageWire {
    prompt_tokens: Count,
    completion_tokens: Count,
    prompt_tokens_details: Obj<UsageDetails>,
}

#[derive(Debug, Default, serde::Deserialize)]
#[serde(default)]
struct UsageDetails {
    cached_tokens: Count,
}

impl UsageWire {
    /// `prompt_tokens` counts the whole request, cached tokens included, and
    /// `prompt_tokens_details.cached_tokens` how many of them came from the cache. `None` without
    /// `prompt_tokens`, which reports nothing: a count is never guessed (USAGE-2).
    fn usage(&self) -> Option<Usage> {
        Some(Usage {
            input_tokens: self.prompt_tokens.0?,
            output_tokens: self.completion_tokens.0.unwrap_or(0),
            cached_input_tokens: self
                .prompt_tokens_details
                .0
                .as_ref()
                .and_then(|d| d.cached_tokens.0),
            // An OpenAI-compatible endpoint caches on its own and reports no writes.
            cache_write_input_tokens: None,
        })
    }
}

impl StreamAssembly {
    /// Takes one event's data; `true` at `[DONE]`.
    pub fn feed(
        &mut self,
        data: &str,
        on_event: &mut (dyn FnMut(StreamEvent) + Send),
    ) -> Result<bool, ModelError> {
        let data = data.trim();
        if data == "[DONE]" {
            return Ok(true);
        }
        let chunk: Chunk<'_> = event(data)?;
        if let Some(error) = &chunk.error {
            return Err(reported_error(error));
        }
        // The usage comes in a chunk of its own with no choices, after the last one that has
        // any (`stream_options.include_usage`); some servers put it on the last choice's chunk.
        if let Some(usage) = chunk.usage.0.as_ref().and_then(UsageWire::usage) {
            self.usage = Some(usage);
        }
        // Chunks without choices (usage reports, keep-alives) carry nothing more for the reply.
        let Some(Obj(Some(choice))) = chunk.choices.0.into_iter().next() else {
            return Ok(false);
        };
        if let Some(delta) = choice.delta.0 {
            if let Some(text) = delta.content.as_str()
                && !text.is_empty()
            {
                self.text.push_str(text);
                on_event(StreamEvent::TextDelta(text.to_owned()));
            }
            for (position, call) in delta.tool_calls.0.into_iter().enumerate() {
                let Obj(Some(call)) = call else {
                    // A delta that is no object still takes its index from its position.
                    self.calls.entry(position as u64).or_default();
                    continue;
                };
                let index = call.index.0.unwrap_or(position as u64);
                let partial = self.calls.entry(index).or_default();
                // The id and the name arrive once, in the first delta of a call; servers that
                // repeat them in later deltas repeat them whole.
                if let Some(id) = call.id.as_str()
                    && partial.id.is_empty()
                {
                    partial.id = id.to_owned();
                }
                let Some(function) = call.function.0 else {
                    continue;
                };
                if let Some(name) = function.name.as_str()
                    && partial.name.is_empty()
                {
                    partial.name = name.to_owned();
                }
                match &function.arguments {
                    Arguments::Piece(piece) => partial.arguments.push_str(piece),
                    Arguments::Whole(whole) => partial.arguments.push_str(whole),
                    Arguments::Absent => {}
                }
            }
        }
        if choice.finish_reason.as_str() == Some("length") {
            self.truncated = true;
        }
        Ok(false)
    }

    pub fn finish(self) -> Result<ModelReply, ModelError> {
        let mut tool_calls = Vec::with_capacity(self.calls.len());
        for (position, call) in self.calls.into_values().enumerate() {
            tool_calls.push(finished_call(position, call.id, call.name, call.arguments)?);
        }
        Ok(ModelReply {
            text: self.text,
            tool_calls,
            truncated: self.truncated,
            usage: self.usage,
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
    if let Some(error) = reply.get("error") {
        return Err(reported_error(error));
    }
    let choice = reply
        .get("choices")
        .and_then(Value::as_array)
        .and_then(|choices| choices.first())
        .ok_or_else(|| ModelError::Malformed("the reply has no choices".to_owned()))?;
    let message = choice
        .get("message")
        .ok_or_else(|| ModelError::Malformed("the reply's choice has no message".to_owned()))?;
    let text = match message.get("content") {
        Some(Value::String(text)) => text.clone(),
        // Some servers answer with content parts even when asked for text.
        Some(Value::Array(parts)) => parts
            .iter()
            .filter_map(|part| part.get("text").and_then(Value::as_str))
            .collect(),
        _ => String::new(),
    };
    let mut tool_calls = Vec::new();
    if let Some(calls) = message.get("tool_calls").and_then(Value::as_array) {
        for (position, call) in calls.iter().enumerate() {
            let function = call.get("function");
            let text_of = |value: Option<&Value>| match value {
                Some(Value::String(text)) => text.clone(),
                Some(Value::Null) | None => String::new(),
                Some(other) => other.to_string(),
            };
            tool_calls.push(finished_call(
                position,
                text_of(call.get("id")),
                text_of(function.and_then(|f| f.get("name"))),
                text_of(function.and_then(|f| f.get("arguments"))),
            )?);
        }
    }
    if !text.is_empty() {
        on_event(StreamEvent::TextDelta(text.clone()));
    }
    Ok(ModelReply {
        text,
        tool_calls,
        truncated: choice.get("finish_reason").and_then(Value::as_str) == Some("length"),
        usage: reply.get("usage").and_then(usage_of),
    })
}

/// A `usage` value of a whole reply, read as a streamed one is.
fn usage_of(usage: &Value) -> Option<Usage> {
    Obj::<UsageWire>::deserialize(usage)
        .ok()?
        .0
        .as_ref()
        .and_then(UsageWire::usage)
}

fn finished_call(
    position: usize,
    id: String,
    name: String,
    arguments: String,
) -> Result<ToolCall, ModelError> {
    if name.is_empty() {
        return Err(ModelError::Malformed(
            "a tool call arrived without a name".to_owned(),
        ));
    }
    // Some local servers leave the id out; the turn loop still needs one to echo.
    let id = if id.is_empty() {
        format!("call_{position}")
    } else {
        id
    };
    Ok(ToolCall {
        id,
        name,
        arguments,
    })
}

fn reported_error(error: &Value) -> ModelError {
    let message = json_error_text(error).unwrap_or_else(|| error.to_string());
    ModelError::Malformed(format!(
        "the endpoint reported an error: {}",
        cut(&message, 300)
    ))
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
    fn a_typed_chunk_reads_what_the_reply_needs_and_passes_over_everything_else() {
        let (reply, deltas) = fed(&[
            // Unknown fields, escapes, and fields of types nobody expects are passed over.
            r#"{"id":"x","object":"chunk","system_fingerprint":{"a":[1,2]},"choices":[{"index":0,"logprobs":null,"delta":{"role":"assistant","content":"caf\u00e9 \"one\""}}]}"#,
            r#"{"choices":[{"delta":{"content":7,"tool_calls":[{"index":1,"id":"call_b","function":{"name":"read_file","arguments":{"path":"b.rs"}}}]}}]}"#,
            r#"{"choices":[{"delta":{"tool_calls":[{"index":0,"id":"call_a","type":"function","function":{"name":"grep","arguments":"{\"pat"}}]}}]}"#,
            r#"{"choices":[{"delta":{"tool_calls":[{"index":0,"id":5,"function":{"name":null,"arguments":"tern\":1}"}}]}}]}"#,
            r#"{"choices":"none","usage":{"prompt_tokens":12,"completion_tokens":"3","prompt_tokens_details":{"cached_tokens":8}}}"#,
            r#"[1,2,3]"#,
            r#"{"choices":[{"delta":{},"finish_reason":"length"}]}"#,
            "[DONE]",
        ]);
        let reply = reply.expect("a reply");
        assert_eq!(deltas, vec!["café \"one\"".to_string()]);
        assert_eq!(reply.text, "café \"one\"");
        assert!(reply.truncated);
        let calls: Vec<(&str, &str, &str)> = reply
            .tool_calls
            .iter()
            .map(|c| (c.id.as_str(), c.name.as_str(), c.arguments.as_str()))
            .collect();
        assert_eq!(
            calls,
            vec![
                ("call_a", "grep", "{\"pattern\":1}"),
                ("call_b", "read_file", "{\"path\":\"b.rs\"}"),
            ]
        );
        let usage = reply.usage.expect("usage");
        assert_eq!(
            (
                usage.input_tokens,
                usage.output_tokens,
                usage.cached_input_tokens
            ),
            (12, 0, Some(8))
        );
    }

    // Verifies: MODEL-3, MODEL-21
    #[test]
    fn a_chunk_that_is_not_json_or_reports_an_error_is_a_clear_error() {
        let (reply, _) = fed(&[r#"{"choices":[{"delta":{"content":"a"}}]"#]);
        let err = reply.expect_err("not json").to_string();
        assert!(err.contains("a stream event is not json"), "{err}");
        let (reply, _) = fed(&[r#"{"error":{"message":"overloaded","type":"server"}}"#]);
        let err = reply.expect_err("an error").to_string();
        assert!(
            err.contains("the endpoint reported an error: overloaded"),
            "{err}"
        );
        let (reply, _) = fed(&[r#"{"error":null}"#]);
        assert!(
            reply.is_err(),
            "an error field is an error whatever it holds"
        );
    }
}
