//! `spawn_processor`: being written; not offered to the planner until it is complete.

use super::{Call, ToolOutput, ToolSpec};

pub fn spec() -> ToolSpec {
    ToolSpec { name: "spawn_processor", description: "", args: Vec::new() }
}

pub async fn run(_call: &Call<'_>) -> ToolOutput {
    ToolOutput::error("spawn_processor is not built yet")
}
