//! `ask_user`: up to four questions put to the person, one at a time.
//!
//! Asking stops once the planner's context has met something untrusted, because the question
//! itself could then have been shaped by content nobody vouched for. Where nobody is watching,
//! every question is declined rather than answered on the person's behalf. Answers are
//! remembered for the session, question by question.

use serde_json::{Value, json};

use super::args::{Arg, ArgValue, tool_args};
use super::questions::Said;
use super::{Call, ToolOutput, ToolSpec};
use crate::kernel::audit::{Decision, Gate};
use crate::kernel::context::Capability;
use crate::kernel::label::Label;
use crate::kernel::labelled::Labelled;
use crate::kernel::policy::{self, PlannerText};
use crate::screen::{Answer, Question, QuestionKind, Subject};

pub const MAX_QUESTIONS: usize = 4;

tool_args! {
    /// The arguments of `ask_user`, as the planner is shown them and as a call is read.
    pub struct Args {
        questions: required Questions as Routing = json!({
            "type": "array",
            "maxItems": MAX_QUESTIONS,
            "items": {
                "type": "object",
                "properties": {
                    "header": {"type": "string", "description": "a short label"},
                    "question": {"type": "string"},
                    "options": {"type": "array", "items": {"type": "string"}},
                    "multiple": {"type": "boolean"}
                },
                "required": ["question"]
            }
        });
    }
}

/// What the planner calls this tool.
pub const NAME: &str = "ask_user";

pub fn spec() -> ToolSpec {
    ToolSpec {
        name: NAME,
        description: "Ask the person up to four questions, one at a time, for what you cannot find out yourself: which \
of two approaches, whether something is in scope, which file they meant. Never for a fact about the machine. \
A skipped question is an answer to work with, not a reason to ask again.",
        args: Args::specs(),
    }
}

/// The questions as the planner sent them, each read whole; anything but a list, absent
/// included, is an error.
pub struct Questions(Vec<Asked>);

impl ArgValue for Questions {
    fn read(arg: &Arg<'_>) -> Result<Option<Self>, String> {
        parse(arg.value).map(|asked| Some(Questions(asked)))
    }
}

struct Asked {
    header: String,
    question: String,
    options: Vec<String>,
    multiple: bool,
}

fn parse(value: Option<&Value>) -> Result<Vec<Asked>, String> {
    let Some(Value::Array(items)) = value else {
        return Err("`questions` must be a list".into());
    };
    items
        .iter()
        .map(|q| {
            let question = q
                .get("question")
                .and_then(Value::as_str)
                .ok_or("every question needs `question`")?;
            let options = match q.get("options") {
                None | Some(Value::Null) => Vec::new(),
                Some(Value::Array(opts)) => opts
                    .iter()
                    .map(|o| {
                        o.as_str()
                            .or_else(|| o.get("label").and_then(Value::as_str))
                            .map(str::to_string)
                    })
                    .collect::<Option<Vec<_>>>()
                    .ok_or("options must be strings")?,
                Some(_) => return Err("`options` must be a list".to_string()),
            };
            Ok(Asked {
                header: q
                    .get("header")
                    .and_then(Value::as_str)
                    .unwrap_or_default()
                    .to_string(),
                question: question.to_string(),
                options,
                multiple: q.get("multiple").and_then(Value::as_bool).unwrap_or(false),
            })
        })
        .collect()
}

pub async fn run(call: &Call<'_>) -> ToolOutput {
    let session = call.session;
    let Questions(asked) = match Args::read(call) {
        Ok(args) => args.questions,
        Err(e) => return ToolOutput::error(e),
    };
    if asked.is_empty() {
        return ToolOutput::error("ask_user needs at least one question");
    }
    if asked.len() > MAX_QUESTIONS {
        return ToolOutput::refused(format!(
            "{} questions: at most {MAX_QUESTIONS} may be asked at once, and none were",
            asked.len()
        ));
    }
    // Bound first: the state lock must be released before the refusal is recorded.
    let permitted = session.state().context.permits(Capability::AskQuestion);
    if let Err(cap) = permitted {
        call.record(
            Gate::Context,
            Decision::Refused,
            format!("ask_user: a tainted context may not {}", cap.as_str()),
        );
        return ToolOutput::refused(
            "this conversation has met content nobody vouched for, so it may not ask the person anything",
        );
    }
    if !session.screen.interactive() {
        call.record(
            Gate::Question,
            Decision::Refused,
            "ask_user: nobody is watching; declined",
        );
        return ToolOutput::refused(
            "nobody is watching this run, so every question was declined; decide without asking",
        );
    }
    let mut lines = Vec::new();
    for (n, q) in asked.iter().enumerate() {
        let remembered = session
            .state()
            .approvals
            .answer(&q.question)
            .map(str::to_string);
        let answer = match remembered {
            Some(a) => a,
            None => {
                let a = put(call, q).await;
                session
                    .state()
                    .approvals
                    .person_answered(q.question.clone(), a.clone());
                a
            }
        };
        lines.push(format!("{}. {}\n   answer: {answer}", n + 1, q.question));
        if call.cancel.is_cancelled() {
            break;
        }
    }
    let text = lines.join("\n");
    let mut state = session.state();
    let state = &mut *state;
    // The person's own words: trusted by provenance, and private.
    let Ok(opened) = policy::open(Labelled::new(text, Label::TRUSTED_PRIVATE)) else {
        return ToolOutput::error("internal: an answer did not open");
    };
    let planner: PlannerText = policy::present(
        opened,
        "ask_user answers",
        &mut state.context,
        &mut state.audit,
    );
    ToolOutput::ok(planner, format!("{} answered", asked.len()))
}

/// Puts one question and turns the answer into the words the planner gets.
async fn put(call: &Call<'_>, q: &Asked) -> String {
    let mut question = Question::approve(
        QuestionKind::AskUser,
        if q.header.is_empty() {
            "The agent asks".to_string()
        } else {
            q.header.clone()
        },
    )
    .why(&call.why)
    .subject(Subject {
        question: Some(q.question.clone()),
        header: Some(q.header.clone()).filter(|h| !h.is_empty()),
        multiple: q.multiple,
        ..Subject::default()
    });
    for (i, o) in q.options.iter().enumerate() {
        question = question.allow_once(format!("option-{i}"), o.clone());
    }
    let question = question
        .allow_once("own", "Answer in my own words")
        .reject("skip", "Skip");
    let mut words = String::new();
    call.ask_recorded(question, |a| {
        words = match (&a.answer, &a.chosen) {
            (Answer::Selected { text: Some(t), .. }, Some(o))
                if o.kind.approves() && !t.trim().is_empty() =>
            {
                t.trim().to_string()
            }
            (_, Some(o)) if o.id.starts_with("option-") => o.name.clone(),
            _ => "(skipped)".to_string(),
        };
        if words == "(skipped)" {
            Said::Refused("askUser: skipped".into())
        } else {
            Said::Allowed("askUser: answered".into())
        }
    })
    .await;
    words
}
