//! The planner's conversation: every message it was sent or wrote, as it held them, and nothing
//! else.
//!
//! A [`Conversation`] is built only from [`PlannerText`] (the person's prompts, the driver's own
//! sentences, tool results that passed the present gate or describe a reference) and from the
//! planner's own replies. There is no way to put a slot's bytes into one, so a session record,
//! which is written from a `Conversation` and from nothing else, cannot hold anything quarantined
//! (SESS-2).
//!
//! It is also what keeps a planner request within the model's context (SESS-12): when the
//! conversation nears its budget, the oldest part is compacted into a summary the driver writes
//! itself, holding the person's prompts and the planner's replies written while its context was
//! clean, each cut to a bound, and saying what was dropped. No model is asked to summarise.

use serde_json::{Value, json};

use crate::kernel::policy::PlannerText;
use crate::model::{Message, Part, ToolCall};

/// What one message of the conversation is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Said {
    /// The person's prompt: trusted and public by provenance.
    Prompt,
    /// A sentence of the driver's own (a background job ended, the conversation was resumed).
    Driver,
    /// The planner's own reply.
    Reply,
    /// A tool result: text that passed the present gate, or a reference the driver described.
    ToolResult,
    /// A picture let through, with the driver's words saying where it came from.
    Picture,
}

impl Said {
    fn as_str(self) -> &'static str {
        match self {
            Said::Prompt => "prompt",
            Said::Driver => "driver",
            Said::Reply => "reply",
            Said::ToolResult => "tool",
            Said::Picture => "picture",
        }
    }

    fn parse(word: &str) -> Option<Said> {
        match word {
            "prompt" => Some(Said::Prompt),
            "driver" => Some(Said::Driver),
            "reply" => Some(Said::Reply),
            "tool" => Some(Said::ToolResult),
            "picture" => Some(Said::Picture),
            _ => None,
        }
    }
}

#[derive(Clone, Debug)]
struct Entry {
    message: Message,
    said: Said,
    /// The planner's context had met untrusted content when this was written: a reply written
    /// then is a function of those bytes, so a summary does not keep it, and neither does a
    /// session record.
    tainted: bool,
    /// A tool result or a picture carrying bytes released to the planner on an endorsement:
    /// readable by the planner, still untrusted, so a session record does not keep them.
    released: bool,
    /// Read back from a session record: a tainted reply's text there is the driver's note for
    /// the planner, not what the planner wrote.
    restored: bool,
}

/// The compacted start of a conversation: what was kept, and counts of what was dropped.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
struct Summary {
    /// `(true, text)` for a prompt of the person's, `(false, text)` for a reply of the planner's.
    kept: Vec<(bool, String)>,
    tool_messages: u64,
    tainted_replies: u64,
    driver_notes: u64,
    /// Kept lines let go later, when the summary itself outgrew its share.
    summary_lines: u64,
    /// Texts cut to the bound.
    cut: u64,
}

/// What a session record holds in place of released bytes.
const RELEASED_NOT_KEPT: &str = "[bravebot: content released to you here on an endorsement was not kept in the session record: it was still untrusted]";
/// What a session record holds in place of a reply written after the context met untrusted
/// content.
const TAINTED_NOT_KEPT: &str = "[bravebot: a reply you wrote after the conversation met untrusted content was not kept in the session record]";

/// What the person is shown, in a resumed transcript, where the agent's replies were not kept.
const REPLY_NOT_KEPT_SHOWN: &str = "(the agent's replies here are not in the session record: they were written after the conversation met content nobody vouched for)";

/// Characters of one of the person's prompts a summary keeps.
const PROMPT_KEPT: usize = 1200;
/// Characters of one of the planner's replies a summary keeps.
const REPLY_KEPT: usize = 400;
/// What one message costs beyond its text, in tokens: the role and the framing.
const MESSAGE_OVERHEAD: usize = 4;

/// The cheap estimate every budget here is counted in: one token per four bytes, rounded up.
pub fn estimate_tokens(text: &str) -> usize {
    text.len().div_ceil(4)
}

/// What [`Conversation::fit`] did.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Fit {
    /// The conversation was within its share of the budget already.
    Fits,
    /// Its start was compacted into the summary; this many messages went.
    Compacted { messages: usize },
}

/// Even compacted as far as it can be, the conversation does not fit.
#[derive(Debug, thiserror::Error)]
#[error(
    "the conversation does not fit the model's context of {budget} tokens even compacted: its newest messages alone take about {needed}"
)]
pub struct TooLong {
    pub budget: usize,
    pub needed: usize,
}

/// A record's conversation that could not be read back.
#[derive(Debug, thiserror::Error)]
#[error("the conversation is not readable: {0}")]
pub struct Unreadable(pub String);

#[derive(Clone, Debug, Default)]
pub struct Conversation {
    summary: Option<Summary>,
    entries: Vec<Entry>,
}

impl Conversation {
    fn push(&mut self, message: Message, said: Said, tainted: bool) {
        self.entries.push(Entry {
            message,
            said,
            tainted,
            released: false,
            restored: false,
        });
    }

    /// Marks the newest message as carrying bytes released on an endorsement.
    pub fn mark_released(&mut self) {
        if let Some(e) = self.entries.last_mut() {
            e.released = true;
        }
    }

    /// The person's prompt, as the present gate let it through.
    pub fn push_prompt(&mut self, text: PlannerText) {
        self.push(
            Message::User(vec![Part::Text(text.into_string())]),
            Said::Prompt,
            false,
        );
    }

    /// A sentence of the driver's own.
    pub fn push_driver(&mut self, text: PlannerText) {
        self.push(
            Message::User(vec![Part::Text(text.into_string())]),
            Said::Driver,
            false,
        );
    }

    /// A picture let through by a release, after the round's results, or one the person put in
    /// a prompt, after its text.
    pub fn push_picture(&mut self, said: PlannerText, picture: Part) {
        self.push(
            Message::User(vec![Part::Text(said.into_string()), picture]),
            Said::Picture,
            false,
        );
    }

    /// The planner's own reply. `tainted` says whether its context had met untrusted content.
    pub fn push_reply(&mut self, text: String, tool_calls: Vec<ToolCall>, tainted: bool) {
        self.push(
            Message::Assistant { text, tool_calls },
            Said::Reply,
            tainted,
        );
    }

    /// One tool call's result.
    pub fn push_tool_result(&mut self, call_id: &str, text: PlannerText) {
        self.push(
            Message::ToolResult {
                call_id: call_id.to_string(),
                parts: vec![Part::Text(text.into_string())],
            },
            Said::ToolResult,
            false,
        );
    }

    pub fn is_empty(&self) -> bool {
        self.entries.is_empty() && self.summary.is_none()
    }

    /// The messages of a planner request: the summary first, when there is one.
    pub fn messages(&self) -> Vec<Message> {
        let mut out = Vec::with_capacity(self.entries.len() + 1);
        if let Some(summary) = &self.summary {
            out.push(Message::User(vec![Part::Text(
                summary_text(summary).into_string(),
            )]));
        }
        out.extend(self.entries.iter().map(|e| e.message.clone()));
        out
    }

    /// The person's prompts, oldest first, those in the summary included (cut as kept there).
    pub fn prompts(&self) -> Vec<String> {
        let kept = self
            .summary
            .iter()
            .flat_map(|s| s.kept.iter())
            .filter(|(person, _)| *person)
            .map(|(_, t)| t.clone());
        kept.chain(
            self.entries
                .iter()
                .filter(|e| e.said == Said::Prompt)
                .map(|e| message_text(&e.message)),
        )
        .collect()
    }

    /// What a person is shown again when the conversation is taken up: `(true, text)` for a
    /// prompt of theirs, `(false, text)` for a reply of the planner's with text in it, in order,
    /// the summary's kept lines first. Where a record kept in place of replies only a note for
    /// the planner, the person is told so in their own words, once for the run (SESS-15).
    pub fn transcript(&self) -> Vec<(bool, String)> {
        let kept = self.summary.iter().flat_map(|s| s.kept.iter().cloned());
        let mut previous_not_kept = false;
        kept.chain(self.entries.iter().filter_map(|e| {
            // Told by the entry's flags alone: a reply the record did not keep is said once for
            // a run of them, in the person's words, never as the note the planner reads.
            let not_kept = e.said == Said::Reply && e.tainted && e.restored;
            let shown = match (e.said, &e.message) {
                _ if not_kept && previous_not_kept => None,
                _ if not_kept => Some((false, REPLY_NOT_KEPT_SHOWN.to_string())),
                (Said::Prompt, m) => Some((true, message_text(m))),
                (Said::Reply, Message::Assistant { text, .. }) if !text.trim().is_empty() => {
                    Some((false, text.clone()))
                }
                _ => None,
            };
            if e.said != Said::ToolResult {
                previous_not_kept = not_kept;
            }
            shown
        }))
        .collect()
    }

    /// The estimated tokens of [`Conversation::messages`].
    pub fn tokens(&self) -> usize {
        let summary = self.summary.as_ref().map_or(0, |s| {
            estimate_tokens(summary_text(s).as_str()) + MESSAGE_OVERHEAD
        });
        summary + self.entries.iter().map(entry_tokens).sum::<usize>()
    }

    /// Keeps the conversation within `budget` tokens. Past three quarters of it, the oldest
    /// messages are compacted into the summary until the conversation takes at most half, cutting
    /// only before a prompt, a reply or a driver's note, so a tool call is never parted from its
    /// result. The newest round is never compacted; where it alone does not fit, that is an error.
    pub fn fit(&mut self, budget: usize) -> Result<Fit, TooLong> {
        if self.tokens() <= budget.saturating_mul(3) / 4 {
            return Ok(Fit::Fits);
        }
        let target = budget / 2;
        // The summary is held to a quarter of the budget.
        let summary_share = budget / 4;
        let boundaries: Vec<usize> = (1..self.entries.len())
            .filter(|&i| self.entries[i].said != Said::ToolResult)
            .collect();
        let Some(&last) = boundaries.last() else {
            return Err(TooLong {
                budget,
                needed: self.tokens(),
            });
        };
        let mut suffix: Vec<usize> = vec![0; self.entries.len() + 1];
        for i in (0..self.entries.len()).rev() {
            suffix[i] = suffix[i + 1] + entry_tokens(&self.entries[i]);
        }
        let mut chosen = last;
        for &cut in &boundaries {
            let mut trial = self.summary.clone().unwrap_or_default();
            absorb(&mut trial, &self.entries[..cut]);
            bound(&mut trial, summary_share);
            let cost = estimate_tokens(summary_text(&trial).as_str()) + MESSAGE_OVERHEAD;
            if cost + suffix[cut] <= target {
                chosen = cut;
                break;
            }
        }
        let mut summary = self.summary.take().unwrap_or_default();
        absorb(&mut summary, &self.entries[..chosen]);
        bound(&mut summary, summary_share);
        self.summary = Some(summary);
        self.entries.drain(..chosen);
        let needed = self.tokens();
        if needed > budget {
            return Err(TooLong { budget, needed });
        }
        Ok(Fit::Compacted { messages: chosen })
    }

    /// The conversation as a session record holds it: nothing untrusted is written (SESS-2). A
    /// picture is not kept, and its driver's words are kept only where nothing was released with
    /// it; a tool result carrying released bytes is replaced by a sentence of the driver's; a
    /// reply written after the context met untrusted content keeps its tool calls' ids and names
    /// (so every result still has its call) and loses its text and arguments.
    pub fn to_record(&self) -> Value {
        let entries: Vec<Value> = self
            .entries
            .iter()
            .map(|e| {
                let mut v = match (&e.message, e.released, e.tainted) {
                    (Message::User(_), true, _) => json!({"text": RELEASED_NOT_KEPT}),
                    (Message::User(parts), false, _) => json!({"text": parts_text(parts)}),
                    (Message::Assistant { tool_calls, .. }, _, true) => json!({
                        "text": TAINTED_NOT_KEPT,
                        "toolCalls": tool_calls
                            .iter()
                            .map(|c| json!({"id": c.id, "name": c.name, "arguments": "{}"}))
                            .collect::<Vec<_>>(),
                    }),
                    (Message::Assistant { text, tool_calls }, _, false) => json!({
                        "text": text,
                        "toolCalls": tool_calls
                            .iter()
                            .map(|c| json!({"id": c.id, "name": c.name, "arguments": c.arguments}))
                            .collect::<Vec<_>>(),
                    }),
                    (Message::ToolResult { call_id, .. }, true, _) => {
                        json!({"callId": call_id, "text": RELEASED_NOT_KEPT})
                    }
                    (Message::ToolResult { call_id, parts }, false, _) => {
                        json!({"callId": call_id, "text": parts_text(parts)})
                    }
                };
                v["said"] = json!(e.said.as_str());
                if e.tainted {
                    v["tainted"] = json!(true);
                }
                v
            })
            .collect();
        let summary = self.summary.as_ref().map(|s| {
            json!({
                "kept": s.kept.iter().map(|(person, text)| json!({"person": person, "text": text})).collect::<Vec<_>>(),
                "toolMessages": s.tool_messages,
                "taintedReplies": s.tainted_replies,
                "driverNotes": s.driver_notes,
                "summaryLines": s.summary_lines,
                "cut": s.cut,
            })
        });
        json!({"summary": summary, "messages": entries})
    }

    /// Reads back what [`Conversation::to_record`] wrote.
    pub fn from_record(value: &Value) -> Result<Conversation, Unreadable> {
        let bad = |what: &str| Unreadable(what.to_string());
        let text = |v: &Value| {
            v.get("text")
                .and_then(Value::as_str)
                .map(str::to_string)
                .ok_or_else(|| bad("a message has no text"))
        };
        let mut conversation = Conversation::default();
        if let Some(s) = value.get("summary").filter(|s| !s.is_null()) {
            let count = |key: &str| s.get(key).and_then(Value::as_u64).unwrap_or(0);
            let kept = s
                .get("kept")
                .and_then(Value::as_array)
                .ok_or_else(|| bad("the summary has no kept lines"))?
                .iter()
                .map(|k| {
                    Ok((
                        k.get("person").and_then(Value::as_bool).unwrap_or(false),
                        text(k)?,
                    ))
                })
                .collect::<Result<Vec<_>, Unreadable>>()?;
            conversation.summary = Some(Summary {
                kept,
                tool_messages: count("toolMessages"),
                tainted_replies: count("taintedReplies"),
                driver_notes: count("driverNotes"),
                summary_lines: count("summaryLines"),
                cut: count("cut"),
            });
        }
        let messages = value
            .get("messages")
            .and_then(Value::as_array)
            .ok_or_else(|| bad("there is no list of messages"))?;
        for m in messages {
            let said = m
                .get("said")
                .and_then(Value::as_str)
                .and_then(Said::parse)
                .ok_or_else(|| bad("a message says neither who wrote it nor what it is"))?;
            // The flag is written only when set; one that is there and not `false` reads as set.
            let tainted = m.get("tainted").is_some_and(|t| t.as_bool() != Some(false));
            let message = match said {
                Said::Prompt | Said::Driver => Message::User(vec![Part::Text(text(m)?)]),
                Said::Picture => Message::User(vec![Part::Text(format!(
                    "{}\n[bravebot: the picture itself was not kept in the session record]",
                    text(m)?
                ))]),
                Said::Reply => {
                    let calls = m
                        .get("toolCalls")
                        .and_then(Value::as_array)
                        .map(Vec::as_slice)
                        .unwrap_or_default()
                        .iter()
                        .map(|c| {
                            let field = |k: &str| {
                                c.get(k)
                                    .and_then(Value::as_str)
                                    .map(str::to_string)
                                    .ok_or_else(|| bad("a tool call lacks a field"))
                            };
                            Ok(ToolCall {
                                id: field("id")?,
                                name: field("name")?,
                                arguments: field("arguments")?,
                            })
                        })
                        .collect::<Result<Vec<_>, Unreadable>>()?;
                    Message::Assistant {
                        text: text(m)?,
                        tool_calls: calls,
                    }
                }
                Said::ToolResult => Message::ToolResult {
                    call_id: m
                        .get("callId")
                        .and_then(Value::as_str)
                        .ok_or_else(|| bad("a tool result names no call"))?
                        .to_string(),
                    parts: vec![Part::Text(text(m)?)],
                },
            };
            conversation.push(message, said, tainted);
            if let Some(e) = conversation.entries.last_mut() {
                e.restored = true;
            }
        }
        Ok(conversation)
    }
}

fn entry_tokens(e: &Entry) -> usize {
    let body = match &e.message {
        Message::User(parts) | Message::ToolResult { parts, .. } => parts
            .iter()
            .map(|p| match p {
                Part::Text(t) => estimate_tokens(t),
                // A picture's data goes as base64, a third larger than its bytes.
                Part::Image { data, .. } => (data.len() * 4 / 3).div_ceil(4),
                Part::EncodedImage { base64, .. } => base64.len().div_ceil(4),
                Part::Pdf { data, .. } => (data.len() * 4 / 3).div_ceil(4),
            })
            .sum(),
        Message::Assistant { text, tool_calls } => {
            estimate_tokens(text)
                + tool_calls
                    .iter()
                    .map(|c| estimate_tokens(&c.name) + estimate_tokens(&c.arguments) + 8)
                    .sum::<usize>()
        }
    };
    body + MESSAGE_OVERHEAD
}

fn parts_text(parts: &[Part]) -> String {
    parts
        .iter()
        .filter_map(|p| match p {
            Part::Text(t) => Some(t.as_str()),
            Part::Image { .. } | Part::EncodedImage { .. } | Part::Pdf { .. } => None,
        })
        .collect::<Vec<_>>()
        .join("\n")
}

fn message_text(message: &Message) -> String {
    match message {
        Message::User(parts) | Message::ToolResult { parts, .. } => parts_text(parts),
        Message::Assistant { text, .. } => text.clone(),
    }
}

/// At most `max` characters of `text`, and whether it was cut.
fn cut(text: &str, max: usize) -> (String, bool) {
    match text.char_indices().nth(max) {
        Some((at, _)) => (text[..at].to_string(), true),
        None => (text.to_string(), false),
    }
}

/// Moves `entries` into the summary: prompts and clean replies kept (cut), the rest counted.
fn absorb(summary: &mut Summary, entries: &[Entry]) {
    for e in entries {
        match (e.said, e.tainted) {
            (Said::Prompt, _) => {
                let (text, was_cut) = cut(&message_text(&e.message), PROMPT_KEPT);
                summary.cut += u64::from(was_cut);
                summary.kept.push((true, text));
            }
            (Said::Reply, false) => {
                if let Message::Assistant { tool_calls, .. } = &e.message {
                    summary.tool_messages += tool_calls.len() as u64;
                }
                let whole = message_text(&e.message);
                if !whole.trim().is_empty() {
                    let (text, was_cut) = cut(&whole, REPLY_KEPT);
                    summary.cut += u64::from(was_cut);
                    summary.kept.push((false, text));
                }
            }
            (Said::Reply, true) => summary.tainted_replies += 1,
            (Said::ToolResult, _) => summary.tool_messages += 1,
            (Said::Driver | Said::Picture, _) => summary.driver_notes += 1,
        }
    }
}

/// Holds the summary to `share` tokens: the person's first prompt always stays; past it, the
/// oldest lines go first.
fn bound(summary: &mut Summary, share: usize) {
    while estimate_tokens(summary_text(summary).as_str()) > share && summary.kept.len() > 1 {
        let first_prompt = summary.kept.iter().position(|(person, _)| *person);
        let victim = if first_prompt == Some(0) { 1 } else { 0 };
        summary.kept.remove(victim);
        summary.summary_lines += 1;
    }
}

fn summary_text(s: &Summary) -> PlannerText {
    let mut text = format!(
        "[bravebot: the start of this conversation was compacted by the driver to fit the model's context. \
Kept below are the person's prompts and your own replies written before the conversation met anything untrusted, \
each cut to a bound. Dropped: {} tool calls and results, {} of your replies written after untrusted content, {} \
notes of the driver's, {} older summary lines; {} texts were cut short.]",
        s.tool_messages, s.tainted_replies, s.driver_notes, s.summary_lines, s.cut
    );
    for (person, line) in &s.kept {
        text.push_str(if *person {
            "\nThe person said: "
        } else {
            "\nYou said: "
        });
        text.push_str(line);
    }
    PlannerText::driver(text)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn round(c: &mut Conversation, n: usize) {
        c.push_prompt(PlannerText::driver(format!(
            "prompt {n}: {}",
            "p".repeat(200)
        )));
        c.push_reply(
            String::new(),
            vec![ToolCall {
                id: format!("call_{n}"),
                name: "read_file".into(),
                arguments: "{\"path\":\"a\"}".into(),
            }],
            false,
        );
        c.push_tool_result(&format!("call_{n}"), PlannerText::driver("x".repeat(2000)));
        c.push_reply(format!("answer {n}"), Vec::new(), n % 2 == 1);
    }

    // Verifies: SESS-12
    #[test]
    fn compaction_keeps_the_first_prompt_and_stays_under_budget() {
        let mut c = Conversation::default();
        let budget = 3000;
        for n in 0..300 {
            round(&mut c, n);
            c.fit(budget).expect("fits");
            assert!(c.tokens() <= budget, "round {n}: {}", c.tokens());
        }
        let first = &c.messages()[0];
        let text = message_text(first);
        assert!(text.contains("prompt 0:"), "{text}");
        assert!(text.contains("Dropped:"), "{text}");
        assert!(
            !text.contains("answer 1\n") && !text.ends_with("answer 1"),
            "a reply written after untrusted content is not kept"
        );
        // A tool result is never parted from its call.
        let messages = c.messages();
        for (i, m) in messages.iter().enumerate() {
            if let Message::ToolResult { call_id, .. } = m {
                assert!(messages[..i].iter().any(|p| matches!(p, Message::Assistant { tool_calls, .. } if tool_calls.iter().any(|t| &t.id == call_id))));
            }
        }
    }

    // Verifies: SESS-12
    #[test]
    fn a_newest_round_larger_than_the_budget_is_an_error() {
        let mut c = Conversation::default();
        c.push_prompt(PlannerText::driver("hi"));
        c.push_tool_result("c", PlannerText::driver("y".repeat(40_000)));
        assert!(c.fit(1000).is_err());
    }

    // Verifies: SESS-2
    #[test]
    fn a_conversation_reads_back_as_it_was_written() {
        let mut c = Conversation::default();
        for n in 0..40 {
            round(&mut c, n);
            c.fit(3000).expect("fits");
        }
        let back = Conversation::from_record(&c.to_record()).expect("readable");
        assert_eq!(back.to_record(), c.to_record());
        assert_eq!(back.prompts(), c.prompts());
        assert!(Conversation::from_record(&json!({"messages": [{"text": "x"}]})).is_err());
    }

    // Verifies: SESS-15
    #[test]
    fn a_resumed_transcript_says_in_the_persons_words_where_replies_were_not_kept() {
        let mut c = Conversation::default();
        c.push_prompt(PlannerText::driver("look at the page"));
        c.push_reply("First, plainly.".into(), Vec::new(), false);
        for n in 0..3 {
            c.push_reply(
                format!("It says SECRET-{n}"),
                vec![ToolCall {
                    id: format!("w{n}"),
                    name: "write_file".into(),
                    arguments: "{}".into(),
                }],
                true,
            );
            c.push_tool_result(&format!("w{n}"), PlannerText::driver("wrote it"));
        }
        // Live, the person's transcript holds what the agent said.
        assert!(c.transcript().iter().any(|(_, t)| t == "It says SECRET-0"));
        let back = Conversation::from_record(&c.to_record()).expect("readable");
        let shown = back.transcript();
        assert_eq!(
            shown,
            [
                (true, "look at the page".to_string()),
                (false, "First, plainly.".to_string()),
                (false, REPLY_NOT_KEPT_SHOWN.to_string()),
            ]
        );
        // The planner still reads its own note.
        assert!(
            back.messages()
                .iter()
                .any(|m| message_text(m) == TAINTED_NOT_KEPT)
        );
    }

    // Verifies: SESS-2
    #[test]
    fn a_record_keeps_no_released_bytes_and_no_reply_written_after_them() {
        let mut c = Conversation::default();
        c.push_prompt(PlannerText::driver("look at the page"));
        c.push_reply(
            String::new(),
            vec![ToolCall {
                id: "v".into(),
                name: "vet_content".into(),
                arguments: "{}".into(),
            }],
            false,
        );
        c.push_tool_result("v", PlannerText::driver("RELEASED-BYTES-1"));
        c.mark_released();
        c.push_reply(
            "It says RELEASED-BYTES-1".into(),
            vec![ToolCall {
                id: "w".into(),
                name: "write_file".into(),
                arguments: "{\"contents\":\"RELEASED-BYTES-1\"}".into(),
            }],
            true,
        );
        c.push_tool_result("w", PlannerText::driver("wrote it"));
        let record = c.to_record().to_string();
        assert!(!record.contains("RELEASED-BYTES-1"), "{record}");
        assert!(record.contains("look at the page"));
        assert!(
            c.messages()
                .iter()
                .any(|m| message_text(m).contains("RELEASED-BYTES-1")),
            "the planner still holds them this session"
        );
    }
}
