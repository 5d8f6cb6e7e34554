//! `todo_write`: the planner's task list, replaced whole on every call and drawn for the person.

use serde_json::{Value, json};

use super::args::{Arg, ArgValue, tool_args};
use super::{Call, ToolOutput, ToolSpec};
use crate::kernel::policy::PlannerText;
use crate::screen::{Todo, Update};

tool_args! {
    /// The arguments of `todo_write`, as the planner is shown them and as a call is read.
    pub struct Args {
        todos: required TodoList as Content = json!({
            "type": "array",
            "items": {
                "type": "object",
                "properties": {
                    "content": {"type": "string"},
                    "status": {"type": "string", "enum": ["pending", "in_progress", "completed"]}
                },
                "required": ["content", "status"]
            }
        });
    }
}

/// What the planner calls this tool.
pub const NAME: &str = "todo_write";

pub fn spec() -> ToolSpec {
    ToolSpec {
        name: NAME,
        description: "Record the task list for what you are doing. Send the complete list every time; it replaces \
the previous one. Each item has content and a status: pending, in_progress or completed.",
        args: Args::specs(),
    }
}

/// The whole task list: every item needs `content`; a status not recognised reads as outstanding
/// work. Anything but a list, absent included, is an error saying what a list holds.
pub struct TodoList(Vec<Todo>);

impl ArgValue for TodoList {
    fn read(arg: &Arg<'_>) -> Result<Option<Self>, String> {
        let Some(Value::Array(items)) = arg.value else {
            return Err("`todos` must be a list of {content, status}".into());
        };
        let mut todos = Vec::with_capacity(items.len());
        for item in items {
            let Some(content) = item.get("content").and_then(Value::as_str) else {
                return Err("every todo needs `content`".into());
            };
            let status = item
                .get("status")
                .and_then(Value::as_str)
                .filter(|s| matches!(*s, "in_progress" | "completed"))
                .unwrap_or("pending");
            todos.push(Todo {
                content: content.to_string(),
                status: status.to_string(),
            });
        }
        Ok(Some(TodoList(todos)))
    }
}

pub fn run(call: &Call<'_>) -> ToolOutput {
    let TodoList(todos) = match Args::read(call) {
        Ok(args) => args.todos,
        Err(e) => return ToolOutput::error(e),
    };
    let count = |s: &str| todos.iter().filter(|t| t.status == s).count();
    let summary = format!(
        "{} items: {} completed, {} in progress, {} pending",
        todos.len(),
        count("completed"),
        count("in_progress"),
        count("pending")
    );
    call.session.state().todos = todos.clone();
    call.session.screen.update(Update::Plan { todos });
    ToolOutput::ok(
        PlannerText::driver(format!("task list recorded: {summary}")),
        summary,
    )
}
