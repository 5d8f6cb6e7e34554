//! `schedule_next`: says when this turn should be asked again (seed 004). Offered only to a turn
//! that will be: a tick of a self-paced loop, or a line the person typed in a session that keeps
//! loops (where the call starts a self-paced loop over that line). `delay_seconds` and `noop` are
//! routing and required; `reason` is content and goes to the person's screen only.

use serde_json::json;

use super::args::tool_args;
use super::{Call, ToolOutput, ToolSpec};
use crate::kernel::policy::PlannerText;
use crate::looping::{Schedule, clamp};

tool_args! {
    /// The arguments of `schedule_next`, as the planner is shown them and as a call is read.
    pub struct Args {
        delay_seconds: required u64 as Routing = json!({"type": "integer", "minimum": 0, "description": "seconds until the next look"});
        noop: required bool as Routing = json!({"type": "boolean", "description": "true when this look found nothing"});
        reason: lenient String as Content = json!({"type": "string", "description": "what you are waiting on; shown to the person"});
    }
}

/// The tool's name, offered only where [`Offers`](crate::session::Offers) says.
pub const NAME: &str = "schedule_next";

pub fn spec() -> ToolSpec {
    ToolSpec {
        name: NAME,
        description: "Say when this turn should be asked again: the person's line is sent again unchanged after \
the delay. The delay is held between the session's minimum (a minute unless set lower) and an hour, and the \
answer says the delay you get. `noop` says whether this look found nothing new. Not calling it in a loop's tick \
ends the loop.",
        args: Args::specs(),
    }
}

pub fn run(call: &Call<'_>) -> ToolOutput {
    let Args {
        delay_seconds: asked,
        noop,
        reason,
    } = match Args::read(call) {
        Ok(args) => args,
        Err(e) => return ToolOutput::error(e),
    };
    let reason = reason.unwrap_or_default();
    let delay = clamp(asked, call.session.settings.loop_min_seconds);
    let quiet = {
        let mut state = call.session.state();
        state.scheduled = Some(Schedule {
            delay_seconds: delay,
            noop,
        });
        state.looping.as_ref().map_or(0, |l| l.quiet_ticks) + u64::from(noop)
    };
    let held = if delay == asked {
        String::new()
    } else {
        format!(" (asked for {asked}; held between the minimum and an hour)")
    };
    let summary = if reason.is_empty() {
        format!("next look in {delay} s; quiet ticks: {quiet}")
    } else {
        format!("next look in {delay} s: {reason}; quiet ticks: {quiet}")
    };
    ToolOutput::ok(
        PlannerText::driver(format!(
            "the next look is in {delay} seconds{held}; the person's line will be sent again unchanged"
        )),
        summary,
    )
}
