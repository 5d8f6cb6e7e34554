//! `load_skill`: reads one of the skills the planner was listed at the start of the turn.
//!
//! The name selects from that fixed set by exact comparison and never becomes a path, so a name
//! holding `../`, an absolute path, or a near miss matches nothing and is refused, with the names
//! that would have worked. The skill's file is read again through the rules it was listed by
//! (trusted, a regular file inside the workspace or under `~/.bravebot`, bounded) and its body
//! presented as trusted configuration.

use serde_json::json;

use super::args::tool_args;
use super::{Call, ToolOutput, ToolSpec};
use crate::kernel::audit::{Decision, Gate};
use crate::kernel::label::Label;
use crate::kernel::labelled::Labelled;
use crate::kernel::policy::{self, PlannerText};

tool_args! {
    /// The arguments of `load_skill`, as the planner is shown them and as a call is read.
    pub struct Args {
        name: required String as Routing = json!({"type": "string", "description": "the skill's name exactly as listed, e.g. commit-style"});
    }
}

/// What the planner calls this tool.
pub const NAME: &str = "load_skill";

pub fn spec() -> ToolSpec {
    ToolSpec {
        name: NAME,
        description: "Read one of the skills you were listed at the start of this turn: standing instructions for one \
kind of task. `name` is the skill's name exactly as listed.",
        args: Args::specs(),
    }
}

pub async fn run(call: &Call<'_>) -> ToolOutput {
    let session = call.session;
    let name = match Args::read(call) {
        Ok(args) => args.name,
        Err(e) => return ToolOutput::error(e),
    };
    let listed = session.state().skills.clone();
    let Some(skill) = listed.iter().find(|s| s.name == name) else {
        call.record(
            Gate::Routing,
            Decision::Refused,
            "load_skill.name matches no listed skill".to_string(),
        );
        let names: Vec<&str> = listed.iter().map(|s| s.name.as_str()).collect();
        return ToolOutput::refused(format!(
            "no skill is listed as `{}`; a name is matched exactly, never as a path or a guess. The skills are: {}",
            crate::paths::control_pictures(&name),
            if names.is_empty() {
                "none".to_string()
            } else {
                names.join(", ")
            }
        ));
    };
    let Some(body) = crate::skills::body(session, skill).await else {
        call.record(
            Gate::FileRead,
            Decision::Refused,
            format!(
                "load_skill {}: its file no longer passes the rules it was listed by",
                skill.name
            ),
        );
        return ToolOutput::refused(format!(
            "the skill `{}` can no longer be read as trusted configuration (it changed, moved or stopped being trusted since the turn began)",
            skill.name
        ));
    };
    let shown = {
        let mut state = session.state();
        let state = &mut *state;
        match policy::open(Labelled::new(body, Label::TRUSTED_PRIVATE)) {
            Ok(opened) => policy::present(
                opened,
                &format!("the skill {}", skill.name),
                &mut state.context,
                &mut state.audit,
            ),
            Err(_) => return ToolOutput::error("internal: the skill did not open"),
        }
    };
    ToolOutput::ok(
        PlannerText::driver(format!(
            "The skill {}, as its SKILL.md says after its front matter:\n{}",
            skill.name,
            shown.as_str()
        )),
        format!("loaded the skill {}", skill.name),
    )
}
