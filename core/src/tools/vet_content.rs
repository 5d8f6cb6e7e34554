//! `vet_content`: being written; not offered to the planner until it is complete.

use super::{Call, ToolOutput, ToolSpec};

pub fn spec() -> ToolSpec {
    ToolSpec { name: "vet_content", description: "", args: Vec::new() }
}

pub async fn run(_call: &Call<'_>) -> ToolOutput {
    ToolOutput::error("vet_content is not built yet")
}
