//! `fetch_url`: being written; not offered to the planner until it is complete.

use super::{Call, ToolOutput, ToolSpec};

pub fn spec() -> ToolSpec {
    ToolSpec { name: "fetch_url", description: "", args: Vec::new() }
}

pub async fn run(_call: &Call<'_>) -> ToolOutput {
    ToolOutput::error("fetch_url is not built yet")
}
