//! `todo_write`: the planner's task list, replaced whole on every call and drawn for the person.

use serde_json::{Value, json};

use super::{ArgRole, ArgSpec, Call, ToolOutput, ToolSpec};
use crate::kernel::policy::PlannerText;
use crate::screen::{Todo, Update};

/// What the planner calls this tool.
pub const NAME: &str = "todo_write";

pub fn spec() -> ToolSpec {
    ToolSpec {
        name: NAME,
        description: "Record the task list for what you are doing. Send the complete list every time; it replaces \
the previous one. Each item has content and a status: pending, in_progress or completed.",
        args: vec![ArgSpec {
            name: "todos",
            role: ArgRole::Content,
            required: true,
            schema: json!({
                "type": "array",
                "items": {
                    "type": "object",
                    "properties": {
                        "content": {"type": "string"},
                        "status": {"type": "string", "enum": ["pending", "in_progress", "completed"]}
                    },
                    "required": ["content", "status"]
                }
            }),
        }],
    }
}

pub fn run(call: &Call<'_>) -> ToolOutput {
    let Some(Value::Array(items)) = call.args.get("todos") else {
        return ToolOutput::error("`todos` must be a list of {content, status}");
    };
    let mut todos = Vec::with_capacity(items.len());
    for item in items {
        let Some(content) = item.get("content").and_then(Value::as_str) else {
            return ToolOutput::error("every todo needs `content`");
        };
        // An unrecognised status reads as outstanding work.
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
