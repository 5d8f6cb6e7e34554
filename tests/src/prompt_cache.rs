//! A provider's prefix cache as the fake model simulates it, so tests and benchmarks read honest
//! `cached_tokens` counts instead of scripted ones.
//!
//! A request is rendered as a provider reads it: its tools, then (Anthropic) its system prompt,
//! then its messages, each piece as compact JSON with any `cache_control` key taken out (a
//! breakpoint marks the prompt, it is not part of it), pieces joined by a newline. Tokens are
//! estimated as bytes / 4 (rounded up for a request's whole input, down for a cached prefix, so a
//! cached count never exceeds the input).
//!
//! - OpenAI-compatible: the cached tokens are those of the longest byte prefix this request shares
//!   with any earlier request of the same role, as an automatic prefix cache serves it (no minimum
//!   length, no 128-token steps).
//! - Anthropic: only what a breakpoint wrote can be read. Each request writes the prefix ending at
//!   each of its `cache_control` breakpoints; a later request of the same role reads the longest
//!   such prefix it shares byte for byte, provided it carries a breakpoint at or past that point
//!   (a request with no breakpoint reads nothing). What it writes beyond that, up to its last
//!   breakpoint, is `cache_creation_input_tokens`. Anthropic's limit of 20 blocks looked back
//!   from a breakpoint and its minimum cacheable length are not simulated.

use std::collections::HashMap;

use serde_json::Value;

use crate::fake_model::Usage;

/// The wire format a request came in, which decides how its prompt is rendered and cached.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Format {
    OpenAi,
    Anthropic,
}

/// A request's prompt as the cache sees it.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Rendered {
    pub text: String,
    /// The byte offset in `text` at which each `cache_control` breakpoint ends, in order.
    pub breakpoints: Vec<usize>,
}

/// The estimate of tokens in `bytes` bytes of a request: bytes / 4, rounded up.
pub fn tokens(bytes: usize) -> u64 {
    bytes.div_ceil(4) as u64
}

/// The whole tokens in a cached prefix of `bytes` bytes: bytes / 4, rounded down.
pub fn cached_tokens(bytes: usize) -> u64 {
    (bytes / 4) as u64
}

/// Renders `body` as the provider of `format` reads it.
pub fn render(body: &Value, format: Format) -> Rendered {
    let mut rendered = Rendered::default();
    for tool in body["tools"].as_array().into_iter().flatten() {
        push_piece(&mut rendered, tool);
    }
    if format == Format::Anthropic {
        match &body["system"] {
            Value::Array(blocks) => blocks.iter().for_each(|b| push_piece(&mut rendered, b)),
            Value::Null => {}
            other => push_piece(&mut rendered, other),
        }
    }
    for message in body["messages"].as_array().into_iter().flatten() {
        match (&message["content"], format) {
            (Value::Array(blocks), Format::Anthropic) => {
                // A message's blocks are pieces of their own: a breakpoint may sit on any one.
                let mut head = message.clone();
                if let Some(map) = head.as_object_mut() {
                    map.remove("content");
                }
                push_piece(&mut rendered, &head);
                blocks.iter().for_each(|b| push_piece(&mut rendered, b));
            }
            _ => push_piece(&mut rendered, message),
        }
    }
    rendered
}

/// Appends `piece` without its `cache_control`, and a breakpoint where it ends when it had one.
fn push_piece(rendered: &mut Rendered, piece: &Value) {
    let mut piece = piece.clone();
    let marked = piece
        .as_object_mut()
        .and_then(|map| map.remove("cache_control"))
        .is_some();
    if !rendered.text.is_empty() {
        rendered.text.push('\n');
    }
    rendered.text.push_str(&piece.to_string());
    if marked {
        rendered.breakpoints.push(rendered.text.len());
    }
}

/// How many bytes `a` and `b` share from their start.
pub fn common_prefix(a: &[u8], b: &[u8]) -> usize {
    a.iter().zip(b).take_while(|(x, y)| x == y).count()
}

/// The prompts each role sent so far.
#[derive(Default)]
pub struct PromptCache {
    earlier: HashMap<String, Vec<Rendered>>,
}

impl PromptCache {
    /// The usage a provider would report for `rendered`, a request of `role` in `format`
    /// answered with `output` tokens, and the request then remembered for later ones.
    pub fn usage(&mut self, role: &str, format: Format, rendered: Rendered, output: u64) -> Usage {
        let earlier = self.earlier.entry(role.to_owned()).or_default();
        let text = rendered.text.as_bytes();
        let (cached_bytes, written_bytes) = match format {
            Format::OpenAi => {
                let shared = earlier
                    .iter()
                    .map(|e| common_prefix(e.text.as_bytes(), text))
                    .max()
                    .unwrap_or(0);
                (shared, 0)
            }
            Format::Anthropic => {
                let last = rendered.breakpoints.last().copied().unwrap_or(0);
                let read = earlier
                    .iter()
                    .flat_map(|e| {
                        let shared = common_prefix(e.text.as_bytes(), text);
                        e.breakpoints.iter().copied().filter(move |b| *b <= shared)
                    })
                    .filter(|b| *b <= last)
                    .max()
                    .unwrap_or(0);
                (read, last.saturating_sub(read))
            }
        };
        let input = tokens(text.len());
        let cached = cached_tokens(cached_bytes).min(input);
        let written = tokens(written_bytes).min(input - cached);
        earlier.push(rendered);
        Usage {
            input,
            output,
            cached: Some(cached),
            written,
        }
    }
}
